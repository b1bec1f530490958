/*
 * metrics_pane: TensorBoard curves on the job screen; see metrics_pane.h.
 *
 * Owns the metricset the pages feed, the tag list (sorted, each with its
 * sanitized name and whether it is selected), the runs, the filter prompt,
 * the call in flight and the poll timer, and one chart per charted tag
 * (kept between frames, so a frame after new points only redoes the series
 * that grew). A chart's points are arrays of the pane's, rebuilt from the
 * metricset when the series saw new points: the chart holds them by pointer.
 */
#include "tui/metrics_pane.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api/backend.h"
#include "api/metricset.h"
#include "api/scalarpage.h"
#include "tui/prompt.h"
#include "tui/term.h"
#include "util/loop.h"
#include "util/strbuf.h"
#include "util/utf8.h"
#include "util/xalloc.h"
#include "widgets/chart.h"

#define MAX_CHARTS 8       /* charts shown at once */
#define MIN_CHART_ROWS 8   /* a header and a chart of 7 rows */
#define NAME_SHOWN_MAX 256 /* bytes of a name kept to show */

struct tag {
    char *name;  /* as the job wrote it */
    char *shown; /* sanitized, cut */
    bool selected;
};

/* A run's series in a chart, and the points the chart holds by pointer. */
struct charted_series {
    const struct metric_series *s;
    uint64_t seen; /* metric_series_seen when pts were built */
    struct chart_point *pts;
    size_t n, cap;
};

struct slot {
    struct chart *chart;
    char *tag; /* NULL: unused */
    struct charted_series series[CHART_MAX_SERIES];
    size_t nseries;
    size_t runs_seen; /* p->nruns when series were last added */
    size_t hidden;    /* runs with this tag beyond CHART_MAX_SERIES */
};

struct metrics_pane {
    struct metricset *ms;
    size_t known_series; /* series of ms already in tags / runs */
    struct tag *tags;
    size_t ntags, tags_cap;
    char **runs;
    size_t nruns, runs_cap;
    size_t *vis; /* indexes of the tags the filter keeps */
    size_t nvis, cursor, top;
    char *filter;
    struct prompt *prompt;
    struct slot slots[MAX_CHARTS];
    double smoothing, zoom;
    bool log_y;
    int list_rows; /* of the last draw, for paging */
    /* what the backend said */
    char *log_path;
    char *message; /* why nothing shows, or the last error */
    bool stopped;  /* no log path / no scalars op / job gone: no more calls */
    uint64_t pages, bad;
    /* following */
    struct backend *b;
    struct http_multi *m;
    struct loop *lp;
    char *job;
    struct backend_call *call;
    uint64_t timer;
    int64_t delay; /* of the armed timer, -1: none */
    char *since;
    int64_t interval;
    bool live, visible, more, want_once;
    /* drawing */
    const struct term *t;
    bool dirty;
    metrics_pane_notify_fn notify;
    void *notify_arg;
};

/* Smoothing weights the slider steps through (TensorBoard's default 0.6 among them). */
static const double smooth_steps[] = {0,   0.1, 0.2, 0.3,  0.4,  0.5,  0.6,
                                      0.7, 0.8, 0.9, 0.95, 0.99, 0.999};
#define SMOOTH_STEPS (sizeof smooth_steps / sizeof smooth_steps[0])

static void tell(struct metrics_pane *p)
{
    p->dirty = true;
    if (p->notify)
        p->notify(p->notify_arg);
}

struct metrics_pane *metrics_pane_new(void)
{
    struct metrics_pane *p = xcalloc(1, sizeof *p);
    p->ms = metricset_new(0, 0);
    p->filter = xstrdup("");
    p->smoothing = 0.6;
    p->delay = -1;
    p->interval = METRICS_POLL_MIN_MS;
    p->want_once = true; /* the first page, whatever the job's state */
    p->dirty = true;
    return p;
}

static void slot_reset(struct slot *sl)
{
    for (size_t i = 0; i < sl->nseries; i++)
        free(sl->series[i].pts);
    memset(sl->series, 0, sizeof sl->series);
    sl->nseries = sl->runs_seen = sl->hidden = 0;
    free(sl->tag);
    sl->tag = NULL;
    if (sl->chart)
        chart_clear(sl->chart);
}

static void unschedule(struct metrics_pane *p)
{
    if (p->timer && p->lp)
        loop_cancel(p->lp, p->timer);
    p->timer = 0;
    p->delay = -1;
}

/* Forgets every point (a cursor the backend refused: read again from the start). */
static void clear_data(struct metrics_pane *p)
{
    for (size_t i = 0; i < MAX_CHARTS; i++)
        slot_reset(&p->slots[i]);
    metricset_free(p->ms);
    p->ms = metricset_new(0, 0);
    p->known_series = 0;
    for (size_t i = 0; i < p->ntags; i++) {
        free(p->tags[i].name);
        free(p->tags[i].shown);
    }
    free(p->tags);
    p->tags = NULL;
    p->ntags = p->tags_cap = 0;
    for (size_t i = 0; i < p->nruns; i++)
        free(p->runs[i]);
    free(p->runs);
    p->runs = NULL;
    p->nruns = p->runs_cap = 0;
    free(p->vis);
    p->vis = NULL;
    p->nvis = p->cursor = p->top = 0;
    free(p->since);
    p->since = NULL;
}

void metrics_pane_free(struct metrics_pane *p)
{
    if (!p)
        return;
    if (p->call)
        backend_call_cancel(p->call);
    unschedule(p);
    clear_data(p);
    for (size_t i = 0; i < MAX_CHARTS; i++)
        chart_free(p->slots[i].chart);
    metricset_free(p->ms);
    prompt_free(p->prompt);
    free(p->filter);
    free(p->log_path);
    free(p->message);
    free(p->job);
    free(p);
}

void metrics_pane_set_style(struct metrics_pane *p, const struct term *t)
{
    if (p->t != t)
        p->dirty = true;
    p->t = t;
}

void metrics_pane_set_notify(struct metrics_pane *p, metrics_pane_notify_fn fn, void *arg)
{
    p->notify = fn;
    p->notify_arg = arg;
}

/* ---- following --------------------------------------------------------------- */

static void poll_now(struct metrics_pane *p);

static void on_timer(void *ctx)
{
    struct metrics_pane *p = ctx;
    p->timer = 0;
    p->delay = -1;
    poll_now(p);
}

/*
 * Arms the timer for what comes next: at once for a page cut short or one
 * wanted (first, last, asked for), the interval while the job runs, nothing
 * otherwise. A timer already armed for the interval is left alone, so a
 * burst of store changes does not push the next page away.
 */
static void plan(struct metrics_pane *p)
{
    int64_t want = -1;
    if (!p->stopped && p->visible && !p->call) {
        if (p->more || p->want_once)
            want = 0;
        else if (p->live)
            want = p->interval;
    }
    if (want < 0) {
        unschedule(p);
        return;
    }
    if (p->delay >= 0 && (want != 0 || p->delay == 0))
        return;
    unschedule(p);
    p->delay = want;
    if (p->lp)
        p->timer = loop_add_timer(p->lp, want, on_timer, p);
}

static void on_reply(void *ctx, struct backend_reply *r)
{
    struct metrics_pane *p = ctx;
    p->call = NULL;
    if (r->status == BACKEND_OK)
        metrics_pane_feed(p, &r->scalars);
    else
        metrics_pane_fail(p, &r->err);
}

static void poll_now(struct metrics_pane *p)
{
    unschedule(p);
    if (p->call || p->stopped || !p->b || !p->job)
        return;
    struct backend_request rq = {.op = BACKEND_OP_SCALARS, .name = p->job, .since = p->since};
    p->call = backend_send(p->b, p->m, &rq, on_reply, NULL, NULL, p);
}

void metrics_pane_set_backend(struct metrics_pane *p, struct backend *b, struct http_multi *m,
                              struct loop *lp, const char *job)
{
    if (p->call)
        backend_call_cancel(p->call);
    p->call = NULL;
    unschedule(p);
    p->b = b;
    p->m = m;
    p->lp = lp;
    free(p->job);
    p->job = job ? xstrdup(job) : NULL;
    plan(p);
}

/* States in which workers may be writing event files. */
static bool state_live(enum job_state st)
{
    switch (st) {
    case JOB_STATE_CREATING:
    case JOB_STATE_STARTING:
    case JOB_STATE_RUNNING:
    case JOB_STATE_RESTARTING:
    case JOB_STATE_RECOVERING:
    case JOB_STATE_SUSPENDING:
        return true;
    default:
        return false;
    }
}

void metrics_pane_set_job_state(struct metrics_pane *p, enum job_state st)
{
    bool live = state_live(st);
    if (live != p->live) {
        p->want_once = true; /* started: look now; ended: its last points */
        p->interval = METRICS_POLL_MIN_MS;
        p->live = live;
        p->dirty = true;
    }
    plan(p);
}

void metrics_pane_set_visible(struct metrics_pane *p, bool visible)
{
    if (visible && !p->visible)
        p->want_once = true; /* shown again: what was written meanwhile */
    p->visible = visible;
    plan(p);
}

/* ---- the model ---------------------------------------------------------------- */

/* Outside text made safe to show and to match: sanitized, at most NAME_SHOWN_MAX bytes read. */
static char *shown_name(const char *s)
{
    size_t n = strlen(s);
    struct strbuf sb = STRBUF_INIT;
    utf8_sanitize(&sb, s, n > NAME_SHOWN_MAX ? NAME_SHOWN_MAX : n, 0);
    return strbuf_detach(&sb, NULL);
}

static const char *cursor_tag(const struct metrics_pane *p)
{
    return p->cursor < p->nvis ? p->tags[p->vis[p->cursor]].name : NULL;
}

/* The visible tags again (the filter or the tags changed); the cursor stays on its tag. */
static void refilter(struct metrics_pane *p, const char *keep)
{
    char *was = keep ? xstrdup(keep) : NULL;
    p->vis = xreallocarray(p->vis, p->ntags ? p->ntags : 1, sizeof *p->vis);
    p->nvis = 0;
    for (size_t i = 0; i < p->ntags; i++)
        if (!*p->filter || strcasestr(p->tags[i].shown, p->filter))
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
static void learn_series(struct metrics_pane *p)
{
    size_t count = metricset_count(p->ms);
    if (count == p->known_series)
        return;
    bool new_tags = false, new_runs = false, found;
    char *keep = cursor_tag(p) ? xstrdup(cursor_tag(p)) : NULL; /* before the tags move */
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
        refilter(p, keep);
    free(keep);
    if (new_runs)
        for (size_t i = 0; i < MAX_CHARTS; i++)
            p->slots[i].runs_seen = 0; /* a chart may have a series to add */
}

void metrics_pane_feed(struct metrics_pane *p, const struct scalar_page *page)
{
    unschedule(p); /* a page ends the wait for it */
    p->pages++;
    p->bad += page->bad_crc + page->bad_protobuf;
    if (page->cursor) {
        free(p->since);
        p->since = xstrdup(page->cursor);
    }
    if (page->log_path && (!p->log_path || strcmp(p->log_path, page->log_path) != 0)) {
        free(p->log_path);
        p->log_path = xstrdup(page->log_path);
    }
    for (size_t i = 0; i < page->count; i++) {
        const struct scalar_point *pt = &page->points[i];
        if (!pt->tag)
            continue;
        metricset_add(p->ms, pt->run && *pt->run ? pt->run : ".", pt->tag, pt->step, pt->wall_time,
                      pt->value);
    }
    learn_series(p);
    if (!p->stopped) {
        free(p->message);
        p->message = NULL;
    }
    p->more = page->more;
    if (page->count > 0)
        p->interval = METRICS_POLL_MIN_MS;
    else if ((p->interval *= 2) > METRICS_POLL_MAX_MS)
        p->interval = METRICS_POLL_MAX_MS;
    p->want_once = false;
    tell(p);
    plan(p);
}

void metrics_pane_fail(struct metrics_pane *p, const struct api_error *err)
{
    unschedule(p);
    free(p->message);
    p->more = false;
    p->want_once = false;
    if (err->status == 404 && strcmp(err->reason, "NoTensorBoard") == 0) {
        p->message = xstrdup(METRICS_NO_LOG_PATH);
        p->stopped = true;
    } else if (err->status == 501) {
        p->message = xstrdup("this backend does not serve TensorBoard scalars: `trainjob metrics "
                             "--logdir DIR` reads a directory where the job's event files are "
                             "mounted");
        p->stopped = true;
    } else if (err->status == 400 && strcmp(err->field, "since") == 0) {
        clear_data(p); /* the cursor is no longer good: read from the start */
        p->message = xasprintf("reading the scalars again: %s", err->message);
        p->want_once = true;
    } else {
        p->message = xasprintf("scalars: %s", err->message);
        p->stopped = err->status == 404; /* the job is gone */
        if ((p->interval *= 2) > METRICS_POLL_MAX_MS)
            p->interval = METRICS_POLL_MAX_MS;
    }
    tell(p);
    plan(p);
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
    refilter(p, NULL);
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
            tags[0] = cursor_tag(p);
        n = 1;
    }
    return n;
}

/* The series' kept points as chart points (x = step) into *pts; their count. */
static size_t build_points(const struct metric_series *s, struct chart_point **pts, size_t *cap)
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
    size_t have = 0, n = build_points(s, &pts, &have);
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

/* ---- drawing ------------------------------------------------------------------- */

/* Text at (y, x) in w cells, sanitized, cut; returns the cells written. */
static int put_clean(WINDOW *win, int y, int x, int w, const char *s, attr_t a, bool utf8)
{
    if (w <= 0)
        return 0;
    struct strbuf sb = STRBUF_INIT;
    utf8_sanitize(&sb, s ? s : "", s ? strlen(s) : 0, 0);
    widget_set_role(win, a);
    int cells = (int)utf8_width(strbuf_str(&sb), sb.len);
    widget_put_clipped(win, y, x, w, strbuf_str(&sb), sb.len, utf8);
    strbuf_free(&sb);
    return cells < w ? cells : w;
}

/* The attribute of the i-th series: roles that differ in most themes. */
static attr_t series_attr(const struct term *t, size_t i)
{
    static const enum theme_role roles[CHART_MAX_SERIES] = {
        THEME_ROLE_STATE_RUNNING,   THEME_ROLE_STATE_QUEUEING,  THEME_ROLE_STATE_STARTING,
        THEME_ROLE_STATE_FAILED,    THEME_ROLE_LOG_MATCH,       THEME_ROLE_SIMULATED,
        THEME_ROLE_STATE_SUSPENDED, THEME_ROLE_STATE_SUCCEEDED,
    };
    return t ? t->role[roles[i % CHART_MAX_SERIES]] : A_NORMAL;
}

/* The slot charts tag, its series the runs that have it, their points current. */
static void slot_update(struct metrics_pane *p, struct slot *sl, const char *tag, int rows)
{
    const struct term *t = p->t;
    if (!sl->chart)
        sl->chart = chart_new(rows);
    if (!sl->tag || strcmp(sl->tag, tag) != 0) {
        slot_reset(sl);
        sl->tag = xstrdup(tag);
    }
    struct chart *c = sl->chart;
    chart_set_rows(c, rows);
    chart_set_palette(c, t ? &t->palette : NULL);
    chart_set_glyphs(c, t && !t->utf8 ? CHART_ASCII : CHART_BRAILLE);
    chart_set_color(c, t && t->depth != THEME_DEPTH_MONO);
    chart_set_smoothing(c, p->smoothing);
    chart_set_log_y(c, p->log_y);
    chart_set_zoom_last(c, p->zoom);
    if (sl->runs_seen != p->nruns) {
        /* Series in run order; a run that appears later goes after (a chart only adds). */
        sl->hidden = 0;
        for (size_t r = 0; r < p->nruns; r++) {
            const struct metric_series *s = metricset_find(p->ms, p->runs[r], tag);
            bool have = false;
            for (size_t i = 0; s && i < sl->nseries; i++)
                have |= sl->series[i].s == s;
            if (!s || have)
                continue;
            if (sl->nseries == CHART_MAX_SERIES) {
                sl->hidden++;
                continue;
            }
            int idx = chart_add_series(c, p->runs[r], series_attr(t, sl->nseries));
            if (idx < 0) {
                sl->hidden++;
                continue;
            }
            sl->series[sl->nseries++] = (struct charted_series){.s = s, .seen = UINT64_MAX};
        }
        sl->runs_seen = p->nruns;
    }
    for (size_t i = 0; i < sl->nseries; i++) {
        struct charted_series *cs = &sl->series[i];
        uint64_t seen = metric_series_seen(cs->s);
        if (seen == cs->seen)
            continue;
        cs->n = build_points(cs->s, &cs->pts, &cs->cap);
        cs->seen = seen;
        chart_set_points(c, i, cs->pts, cs->n);
    }
}

static void draw_tags(struct metrics_pane *p, WINDOW *win, int y, int x, int h, int w, bool focused)
{
    const struct term *t = p->t;
    const struct widget_palette *pal = t ? &t->palette : widget_palette_mono();
    bool utf8 = t && t->utf8;
    for (int r = 0; r < h; r++) {
        widget_set_role(win, pal->normal);
        widget_blank(win, y + r, x, w);
    }
    char head[300];
    if (*p->filter)
        snprintf(head, sizeof head, "/%s %zu/%zu", p->filter, p->nvis, p->ntags);
    else
        snprintf(head, sizeof head, "Tags %zu", p->ntags);
    put_clean(win, y, x, w, head, pal->label, utf8);
    int rows = h - 1;
    p->list_rows = rows > 0 ? rows : 1;
    if (rows <= 0)
        return;
    if (p->cursor < p->top)
        p->top = p->cursor;
    if (p->cursor >= p->top + (size_t)rows)
        p->top = p->cursor - (size_t)rows + 1;
    for (int r = 0; r < rows && p->top + (size_t)r < p->nvis; r++) {
        size_t i = p->top + (size_t)r;
        const struct tag *tg = &p->tags[p->vis[i]];
        bool at = i == p->cursor;
        attr_t a = at ? (focused ? pal->selected : pal->label) : pal->normal;
        widget_set_role(win, a);
        widget_blank(win, y + 1 + r, x, w);
        const char *mark = tg->selected ? (utf8 ? "● " : "* ") : "  ";
        int cx = x + put_clean(win, y + 1 + r, x, w, mark, a, utf8);
        widget_set_role(win, a);
        widget_put_clipped(win, y + 1 + r, cx, x + w - cx, tg->shown, strlen(tg->shown), utf8);
    }
}

/* What the charts' area says when it has no chart: the message, or what it waits for. */
static void draw_note(struct metrics_pane *p, WINDOW *win, int y, int x, int h, int w)
{
    const struct term *t = p->t;
    const struct widget_palette *pal = t ? &t->palette : widget_palette_mono();
    struct strbuf sb = STRBUF_INIT;
    attr_t a = pal->dim;
    if (p->message) {
        utf8_sanitize(&sb, p->message, strlen(p->message), 0);
        a = p->stopped ? pal->warning : pal->error;
    } else if (p->pages == 0) {
        strbuf_adds(&sb, "asking the backend for the job's TensorBoard scalars…");
    } else {
        strbuf_adds(&sb, "no scalars yet in ");
        utf8_sanitize(&sb, p->log_path ? p->log_path : "the job's log path",
                      strlen(p->log_path ? p->log_path : "the job's log path"), 0);
        strbuf_adds(&sb, p->live ? " (following)" : " (the job is not running)");
    }
    widget_set_role(win, a);
    widget_put_wrapped(win, y, x, w, strbuf_str(&sb), h, t && t->utf8);
    strbuf_free(&sb);
}

void metrics_pane_draw(struct metrics_pane *p, WINDOW *win, int y, int x, int h, int w,
                       bool focused)
{
    const struct term *t = p->t;
    const struct widget_palette *pal = t ? &t->palette : widget_palette_mono();
    bool utf8 = t && t->utf8;
    p->dirty = false;
    if (h <= 0 || w <= 0)
        return;
    int tw = w >= 60 ? w / 5 : 0; /* the tag list, when there is room beside the charts */
    if (tw > 28)
        tw = 28;
    if (tw)
        draw_tags(p, win, y, x, h, tw, focused);
    int cx = x + (tw ? tw + 1 : 0), cw = w - (cx - x);
    for (int r = 0; tw && r < h; r++) {
        widget_set_role(win, pal->border);
        mvwaddstr(win, y + r, x + tw, utf8 ? "│" : "|");
    }
    for (int r = 0; r < h; r++) {
        widget_set_role(win, pal->normal);
        widget_blank(win, y + r, cx, cw);
    }
    const char *tags[MAX_CHARTS];
    size_t n = metrics_pane_charted(p, tags, MAX_CHARTS);
    if (n > MAX_CHARTS)
        n = MAX_CHARTS;
    if (p->message || n == 0) {
        draw_note(p, win, y, cx + 1, h, cw - 1);
        if (!p->message || n == 0)
            return;
        y++, h--; /* an error above the charts it did not stop */
    }
    size_t fit = (size_t)(h / MIN_CHART_ROWS);
    if (fit == 0)
        fit = 1;
    if (n > fit)
        n = fit;
    int each = h / (int)n, extra = h - each * (int)n;
    int cy = y;
    for (size_t i = 0; i < n; i++) {
        int rows = each + (i == 0 ? extra : 0);
        struct slot *sl = &p->slots[i];
        slot_update(p, sl, tags[i], rows - 1 > 1 ? rows - 1 : 1);
        int hx = cx + 1;
        hx += put_clean(win, cy, hx, cx + cw - hx, tags[i], pal->title, utf8);
        if (sl->hidden) {
            char more[64];
            snprintf(more, sizeof more, "  +%zu runs not shown", sl->hidden);
            put_clean(win, cy, hx, cx + cw - hx, more, pal->dim, utf8);
        }
        if (rows > 1) {
            struct widget *wd = chart_widget(sl->chart);
            wd->ops->draw(wd, win, cy + 1, cx, cw, focused);
        }
        cy += rows;
    }
    for (size_t i = n; i < MAX_CHARTS; i++)
        if (p->slots[i].tag)
            slot_reset(&p->slots[i]); /* not shown: its points go */
    widget_set_role(win, pal->normal);
}

void metrics_pane_draw_prompt(struct metrics_pane *p, const struct term *t)
{
    if (p->prompt)
        prompt_draw(p->prompt, t);
}

bool metrics_pane_prompting(const struct metrics_pane *p)
{
    return p->prompt != NULL;
}

bool metrics_pane_dirty(const struct metrics_pane *p)
{
    if (p->dirty)
        return true;
    for (size_t i = 0; i < MAX_CHARTS; i++)
        if (p->slots[i].chart && p->slots[i].tag && chart_widget(p->slots[i].chart)->dirty)
            return true;
    return false;
}

/* ---- keys ---------------------------------------------------------------------------- */

static bool is(const char *action, const char *name)
{
    return action && strcmp(action, name) == 0;
}

/* The next 1-2-5 value above v (up) or below it. */
static double step125(double v, bool up)
{
    double mag = pow(10, floor(log10(v)));
    static const double m[] = {1, 2, 5, 10, 20};
    if (up) {
        for (size_t i = 0; i < 5; i++)
            if (m[i] * mag > v * 1.000001)
                return m[i] * mag;
        return 10 * mag;
    }
    for (size_t i = 4; i-- > 0;)
        if (m[i] * mag < v * 0.999999)
            return m[i] * mag;
    return mag / 2;
}

/* The steps the charted series span (last step - first step), 0 when none. */
static double charted_span(const struct metrics_pane *p)
{
    const char *tags[MAX_CHARTS];
    size_t n = metrics_pane_charted(p, tags, MAX_CHARTS);
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < n && i < MAX_CHARTS; i++)
        for (size_t r = 0; r < p->nruns; r++) {
            const struct metric_series *s = metricset_find(p->ms, p->runs[r], tags[i]);
            size_t nb = s ? metric_series_bucket_count(s) : 0;
            if (nb == 0)
                continue;
            struct metric_bucket b;
            metric_series_bucket(s, 0, &b);
            lo = fmin(lo, (double)b.first.step);
            metric_series_bucket(s, nb - 1, &b);
            hi = fmax(hi, (double)b.last.step);
        }
    return hi > lo ? hi - lo : 0;
}

static void zoom(struct metrics_pane *p, bool in)
{
    double span = charted_span(p);
    if (in) {
        double from = p->zoom > 0 ? p->zoom : span;
        if (from <= 2)
            return;
        p->zoom = step125(from, false);
    } else if (p->zoom > 0) {
        p->zoom = step125(p->zoom, true);
        if (p->zoom >= span)
            p->zoom = 0;
    }
}

static void smooth(struct metrics_pane *p, bool more)
{
    size_t at = 0;
    for (size_t i = 0; i < SMOOTH_STEPS; i++)
        if (smooth_steps[i] <= p->smoothing + 1e-9)
            at = i;
    if (more && at + 1 < SMOOTH_STEPS)
        at++;
    else if (!more && at > 0)
        at--;
    p->smoothing = smooth_steps[at];
}

/* Left/Right/Home/End move the first chart's cursor; the other charts take its column. */
static unsigned cursor_key(struct metrics_pane *p, const struct widget_key *k)
{
    struct slot *first = &p->slots[0];
    if (!first->chart || !first->tag)
        return WIDGET_IGNORED;
    struct widget *wd = chart_widget(first->chart);
    unsigned r = wd->ops->key(wd, k);
    if (r == WIDGET_IGNORED)
        return r;
    int col = chart_cursor(first->chart);
    for (size_t i = 1; i < MAX_CHARTS; i++)
        if (p->slots[i].chart && p->slots[i].tag)
            chart_set_cursor(p->slots[i].chart, col);
    p->dirty = true;
    return r | WIDGET_REDRAW;
}

static unsigned prompt_key_in(struct metrics_pane *p, const struct widget_key *k)
{
    enum prompt_state st = prompt_key(p->prompt, k);
    if (st == PROMPT_DONE)
        metrics_pane_set_filter(p, prompt_value(p->prompt));
    if (st != PROMPT_OPEN) {
        prompt_free(p->prompt);
        p->prompt = NULL;
    }
    p->dirty = true;
    return WIDGET_HANDLED | WIDGET_REDRAW;
}

unsigned metrics_pane_key(struct metrics_pane *p, const struct widget_key *k, const char *action)
{
    const unsigned moved = WIDGET_HANDLED | WIDGET_REDRAW;
    if (p->prompt)
        return prompt_key_in(p, k);
    if (is(action, "search") || is(action, "filter")) {
        p->prompt =
            prompt_new("Filter the tags", "Text the tags must contain (empty: all):", p->filter);
        return moved;
    }
    if (is(action, "smooth-more") || is(action, "smooth-less")) {
        smooth(p, is(action, "smooth-more"));
        return moved;
    }
    if (is(action, "log-y")) {
        p->log_y = !p->log_y;
        return moved;
    }
    if (is(action, "zoom-in") || is(action, "zoom-out")) {
        zoom(p, is(action, "zoom-in"));
        return moved;
    }
    if (is(action, "refresh")) {
        p->want_once = true;
        p->interval = METRICS_POLL_MIN_MS;
        plan(p);
        return moved;
    }
    if (is(action, "back")) /* Esc: hides the cursor first */
        return k->is_function || k->code != 27 ? WIDGET_IGNORED : cursor_key(p, k);
    if (is(action, "open") || (!k->is_function && !k->alt && k->code == ' ')) {
        metrics_pane_toggle(p);
        return moved;
    }
    long page = p->list_rows > 1 ? p->list_rows - 1 : 1;
    if (is(action, "top") || is(action, "bottom")) {
        metrics_pane_move(p, is(action, "top") ? -(long)p->nvis : (long)p->nvis);
        return moved;
    }
    if (k->is_function) {
        switch (k->code) {
        case KEY_UP:
            metrics_pane_move(p, -1);
            return moved;
        case KEY_DOWN:
            metrics_pane_move(p, 1);
            return moved;
        case KEY_PPAGE:
            metrics_pane_move(p, -page);
            return moved;
        case KEY_NPAGE:
            metrics_pane_move(p, page);
            return moved;
        default:
            return cursor_key(p, k);
        }
    }
    if (k->alt || action)
        return WIDGET_IGNORED;
    switch (k->code) {
    case 'k':
        metrics_pane_move(p, -1);
        return moved;
    case 'j':
        metrics_pane_move(p, 1);
        return moved;
    case 'g':
        metrics_pane_move(p, -(long)p->nvis);
        return moved;
    case 'G':
        metrics_pane_move(p, (long)p->nvis);
        return moved;
    default:
        return cursor_key(p, k);
    }
}
