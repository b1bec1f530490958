/*
 * metrics_pane_keys: the keys of the Metrics pane (see metrics_pane.h;
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

/* Smoothing weights the slider steps through (TensorBoard's default 0.6 among them). */
static const double smooth_steps[] = {0,   0.1, 0.2, 0.3,  0.4,  0.5,  0.6,
                                      0.7, 0.8, 0.9, 0.95, 0.99, 0.999};
#define SMOOTH_STEPS (sizeof smooth_steps / sizeof smooth_steps[0])

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
        p->prompt = prompt_new(
            "Filter the tags",
            "Text in the tag, or a pattern as --tag takes (loss*; empty: all):", p->filter);
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
        mp_plan(p);
        return moved;
    }
    if (is(action, "back")) /* Esc: hides the cursor first */
        return k->is_function || k->code != 27 ? WIDGET_IGNORED : cursor_key(p, k);
    if (is(action, "cursor-left") || is(action, "cursor-right")) {
        struct widget_key arrow = {.code = is(action, "cursor-left") ? KEY_LEFT : KEY_RIGHT,
                                   .is_function = true};
        return cursor_key(p, &arrow);
    }
    if (is(action, "open") || is(action, "chart") ||
        (!action && !k->is_function && !k->alt && k->code == ' ')) {
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
