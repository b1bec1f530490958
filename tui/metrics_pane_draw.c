/*
 * metrics_pane_draw: the drawing of the Metrics pane (see metrics_pane.h;
 * the structs are metrics_pane_priv.h). Moved out of metrics_pane.c.
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
        mp_slot_reset(sl);
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
        cs->n = mp_build_points(cs->s, &cs->pts, &cs->cap);
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
            mp_slot_reset(&p->slots[i]); /* not shown: its points go */
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
