/*
 * metrics_pane_model: the model — tags, runs, filter, cursor, selection, points and status — of the
 * Metrics pane (see metrics_pane.h; the structs are metrics_pane_priv.h). Moved out of
 * metrics_pane.c.
 */
#include "tui/metrics_pane.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api/backend.h"
#include "api/metricset.h"
#include "api/scalarpage.h"
#include "tui/metrics_pane_priv.h"
#include "tui/prompt.h"
#include "tui/term.h"
#include "util/loop.h"
#include "util/strbuf.h"
#include "util/utf8.h"
#include "util/xalloc.h"
#include "widgets/chart.h"

/* ---- the model ---------------------------------------------------------------- */

/* Outside text made safe to show and to match: sanitized, at most NAME_SHOWN_MAX bytes read. */
static char *shown_name(const char *s)
{
    size_t n = strlen(s);
    struct strbuf sb = STRBUF_INIT;
    utf8_sanitize(&sb, s, n > NAME_SHOWN_MAX ? NAME_SHOWN_MAX : n, 0);
    return strbuf_detach(&sb, NULL);
}

const char *mp_cursor_tag(const struct metrics_pane *p)
{
    return p->cursor < p->nvis ? p->tags[p->vis[p->cursor]].name : NULL;
}

/*
 * The visible tags again (the filter or the tags changed); the cursor stays on its tag.
 * A filter with a pattern character is a pattern as `metrics --tag` takes it, else
 * text the tag contains (any case).
 */
void mp_refilter(struct metrics_pane *p, const char *keep)
{
    char *was = keep ? xstrdup(keep) : NULL;
    p->vis = xreallocarray(p->vis, p->ntags ? p->ntags : 1, sizeof *p->vis);
    p->nvis = 0;
    bool pattern = strpbrk(p->filter, "*?[") != NULL;
    for (size_t i = 0; i < p->ntags; i++)
        if (!*p->filter || (pattern ? scalarpage_tag_match(p->filter, p->tags[i].shown)
                                    : strcasestr(p->tags[i].shown, p->filter) != NULL))
            p->vis[p->nvis++] = i;
    p->cursor = 0;
    for (size_t i = 0; was && i < p->nvis; i++)
        if (strcmp(p->tags[p->vis[i]].name, was) == 0)
            p->cursor = i;
    free(was);
    p->dirty = true;
}

/* Where name goes in the sorted tags: its index, or where to insert it (*found false). */
static size_t tag_slot(const struct metrics_pane *p, const char *name, bool *found)
{
    size_t lo = 0, hi = p->ntags;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(p->tags[mid].name, name);
        if (c == 0) {
            *found = true;
            return mid;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = false;
    return lo;
}

/* The same for the sorted runs. */
static size_t run_slot(const struct metrics_pane *p, const char *name, bool *found)
{
    size_t lo = 0, hi = p->nruns;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(p->runs[mid], name);
        if (c == 0) {
            *found = true;
            return mid;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = false;
    return lo;
}

/* Tags and runs of the series the set made since the last look, inserted in name order. */
void mp_learn_series(struct metrics_pane *p)
{
    size_t count = metricset_count(p->ms);
    if (count == p->known_series)
        return;
    bool new_tags = false, new_runs = false, found;
    char *keep = mp_cursor_tag(p) ? xstrdup(mp_cursor_tag(p)) : NULL; /* before the tags move */
    for (size_t i = p->known_series; i < count; i++) {
        const struct metric_series *s = metricset_at(p->ms, i);
        const char *tag = metric_series_tag(s), *run = metric_series_run(s);
        size_t at = tag_slot(p, tag, &found);
        if (!found) {
            if (p->ntags == p->tags_cap) {
                p->tags_cap = p->tags_cap ? 2 * p->tags_cap : 16;
                p->tags = xreallocarray(p->tags, p->tags_cap, sizeof *p->tags);
            }
            memmove(&p->tags[at + 1], &p->tags[at], (p->ntags - at) * sizeof *p->tags);
            p->tags[at] = (struct tag){xstrdup(tag), shown_name(tag), false};
            p->ntags++;
            new_tags = true;
        }
        at = run_slot(p, run, &found);
        if (!found) {
            if (p->nruns == p->runs_cap) {
                p->runs_cap = p->runs_cap ? 2 * p->runs_cap : 8;
                p->runs = xreallocarray(p->runs, p->runs_cap, sizeof *p->runs);
            }
            memmove(&p->runs[at + 1], &p->runs[at], (p->nruns - at) * sizeof *p->runs);
            p->runs[at] = xstrdup(run);
            p->nruns++;
            new_runs = true;
        }
    }
    p->known_series = count;
    if (new_tags)
        mp_refilter(p, keep);
    free(keep);
    if (new_runs)
        for (size_t i = 0; i < MAX_CHARTS; i++)
            p->slots[i].runs_seen = 0; /* a chart may have a series to add */
}

size_t metrics_pane_tag_count(const struct metrics_pane *p)
{
    return p->nvis;
}

const char *metrics_pane_tag(const struct metrics_pane *p, size_t i)
{
    return i < p->nvis ? p->tags[p->vis[i]].name : NULL;
}

size_t metrics_pane_all_tags(const struct metrics_pane *p)
{
    return p->ntags;
}

size_t metrics_pane_run_count(const struct metrics_pane *p)
{
    return p->nruns;
}

const char *metrics_pane_run(const struct metrics_pane *p, size_t i)
{
    return i < p->nruns ? p->runs[i] : NULL;
}

void metrics_pane_set_filter(struct metrics_pane *p, const char *text)
{
    struct strbuf sb = STRBUF_INIT;
    utf8_sanitize(&sb, text ? text : "", text ? strlen(text) : 0, 0);
    free(p->filter);
    p->filter = strbuf_detach(&sb, NULL);
    mp_refilter(p, NULL);
    p->top = 0;
}

const char *metrics_pane_filter(const struct metrics_pane *p)
{
    return p->filter;
}

size_t metrics_pane_cursor(const struct metrics_pane *p)
{
    return p->cursor;
}

void metrics_pane_move(struct metrics_pane *p, long delta)
{
    if (p->nvis == 0)
        return;
    long c = (long)p->cursor + delta, last = (long)p->nvis - 1;
    p->cursor = (size_t)(c < 0 ? 0 : c > last ? last : c);
    p->dirty = true;
}

void metrics_pane_toggle(struct metrics_pane *p)
{
    if (p->cursor < p->nvis) {
        struct tag *t = &p->tags[p->vis[p->cursor]];
        t->selected = !t->selected;
        p->dirty = true;
    }
}

bool metrics_pane_selected(const struct metrics_pane *p, const char *tag)
{
    bool found = false;
    size_t at = tag ? tag_slot(p, tag, &found) : 0;
    return found && p->tags[at].selected;
}

size_t metrics_pane_charted(const struct metrics_pane *p, const char **tags, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < p->nvis; i++) {
        const struct tag *t = &p->tags[p->vis[i]];
        if (t->selected) {
            if (n < cap)
                tags[n] = t->name;
            n++;
        }
    }
    if (n == 0 && p->cursor < p->nvis) {
        if (cap)
            tags[0] = mp_cursor_tag(p);
        n = 1;
    }
    return n;
}

/* The series' kept points as chart points (x = step) into *pts; their count. */
size_t mp_build_points(const struct metric_series *s, struct chart_point **pts, size_t *cap)
{
    size_t n = metric_series_points(s, NULL, 0);
    struct metric_point *mp = xcalloc(n ? n : 1, sizeof *mp);
    n = metric_series_points(s, mp, n);
    if (n > *cap) {
        *pts = xreallocarray(*pts, n, sizeof **pts);
        *cap = n;
    }
    for (size_t i = 0; i < n; i++)
        (*pts)[i] = (struct chart_point){(double)mp[i].step, mp[i].value};
    free(mp);
    return n;
}

size_t metrics_pane_points(const struct metrics_pane *p, const char *run, const char *tag,
                           struct chart_point *out, size_t cap)
{
    const struct metric_series *s = metricset_find(p->ms, run, tag);
    if (!s)
        return 0;
    struct chart_point *pts = NULL;
    size_t have = 0, n = mp_build_points(s, &pts, &have);
    if (out && cap)
        memcpy(out, pts, (n < cap ? n : cap) * sizeof *out);
    free(pts);
    return n;
}

const char *metrics_pane_message(const struct metrics_pane *p)
{
    return p->message;
}

int64_t metrics_pane_poll_delay(const struct metrics_pane *p)
{
    return p->delay;
}

bool metrics_pane_loading(const struct metrics_pane *p)
{
    return p->call != NULL || p->push != NULL || p->delay == 0;
}

uint64_t metrics_pane_pages(const struct metrics_pane *p)
{
    return p->pages;
}

uint64_t metrics_pane_bad_records(const struct metrics_pane *p)
{
    return p->bad;
}

double metrics_pane_smoothing(const struct metrics_pane *p)
{
    return p->smoothing;
}

bool metrics_pane_log_y(const struct metrics_pane *p)
{
    return p->log_y;
}

double metrics_pane_zoom(const struct metrics_pane *p)
{
    return p->zoom;
}

/* A step count as people say it: 500, 2k, 1.5M. */
static void format_steps(double v, char *buf, size_t n)
{
    static const char *const si[] = {"", "k", "M", "G", "T"};
    size_t i = 0;
    while (v >= 1000 && i + 1 < sizeof si / sizeof si[0]) {
        v /= 1000;
        i++;
    }
    snprintf(buf, n, "%g%s", v, si[i]);
}

void metrics_pane_status(const struct metrics_pane *p, struct strbuf *out)
{
    strbuf_addf(out, "%zu tag%s", p->ntags, p->ntags == 1 ? "" : "s");
    if (p->nvis != p->ntags)
        strbuf_addf(out, " (%zu shown)", p->nvis);
    strbuf_addf(out, " · %zu run%s · smoothing %.3g", p->nruns, p->nruns == 1 ? "" : "s",
                p->smoothing);
    if (p->log_y)
        strbuf_adds(out, " · log y");
    if (p->zoom > 0) {
        char z[32];
        format_steps(p->zoom, z, sizeof z);
        strbuf_addf(out, " · last %s steps", z);
    }
    if (p->bad)
        strbuf_addf(out, " · %llu damaged records skipped", (unsigned long long)p->bad);
    if (p->stopped)
        return;
    strbuf_adds(out, p->live ? " · following" : " · job not running");
}
