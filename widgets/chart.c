/*
 * chart: the line chart widget (see chart.h) — its series, the per-pixel
 * column cache each frame draws from, keys and the widget ops. The dot grid,
 * axes, legend and cursor are drawn in chart_draw.c (both share
 * chart_priv.h); the maths (ticks, labels, smoothing, column reduction) is
 * in chart_math.c. Called by the TUI's panes; draws only when asked.
 */
#include "widgets/chart.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/strbuf.h"
#include "util/utf8.h"
#include "util/xalloc.h"
#include "widgets/chart_priv.h"

static const struct widget_ops chart_ops;

/* ---- Series and settings ---- */

struct chart *chart_new(int rows)
{
    struct chart *c = xcalloc(1, sizeof *c);
    c->base.ops = &chart_ops;
    c->base.dirty = true;
    c->rows = rows < 1 ? 1 : rows;
    c->pal = widget_palette_mono();
    c->color = true;
    c->cursor = -1;
    c->label_w = 4;
    return c;
}

static void series_free(struct series *s)
{
    free(s->name);
    free(s->ck);
    free(s->red.raw);
    free(s->red.smo);
    memset(s, 0, sizeof *s);
}

void chart_clear(struct chart *c)
{
    for (size_t i = 0; i < c->ns; i++)
        series_free(&c->s[i]);
    c->ns = 0;
    c->key_valid = false;
    c->base.dirty = true;
}

void chart_free(struct chart *c)
{
    if (!c)
        return;
    chart_clear(c);
    free(c->grid);
    free(c->top_mark);
    free(c->bottom_mark);
    free(c->top_owner);
    free(c->bottom_owner);
    free(c);
}

struct widget *chart_widget(struct chart *c)
{
    return &c->base;
}

struct chart *chart_from_widget(struct widget *wd)
{
    return wd && wd->ops == &chart_ops ? (struct chart *)wd : NULL;
}

void chart_set_rows(struct chart *c, int rows)
{
    c->rows = rows < 1 ? 1 : rows;
    c->base.dirty = true;
}

void chart_set_palette(struct chart *c, const struct widget_palette *pal)
{
    c->pal = pal ? pal : widget_palette_mono();
    c->base.dirty = true;
}

void chart_set_glyphs(struct chart *c, enum chart_glyphs g)
{
    if (c->glyphs != g)
        c->key_valid = false; /* dots per cell change the pixel columns */
    c->glyphs = g;
    c->base.dirty = true;
}

void chart_set_color(struct chart *c, bool color)
{
    c->color = color;
    c->base.dirty = true;
}

void chart_set_x_kind(struct chart *c, enum chart_x_kind kind)
{
    c->x_kind = kind;
    c->key_valid = false;
    c->base.dirty = true;
}

int chart_add_series(struct chart *c, const char *name, attr_t attr)
{
    if (c->ns >= CHART_MAX_SERIES)
        return -1;
    struct series *s = &c->s[c->ns];
    struct strbuf sb = STRBUF_INIT;
    utf8_sanitize(&sb, name ? name : "", name ? strlen(name) : 0, 0);
    s->name = strbuf_detach(&sb, NULL);
    s->name_cells = widget_text_cells(s->name, strlen(s->name));
    s->attr = attr;
    s->sorted = true;
    s->stale = true;
    c->base.dirty = true;
    return (int)c->ns++;
}

size_t chart_series_count(const struct chart *c)
{
    return c->ns;
}

/* Keeps x's range and order up to date over the points not seen yet. */
static void track(struct series *s)
{
    for (size_t i = s->tracked; i < s->n; i++) {
        double x = s->pts[i].x;
        if (!isfinite(x)) {
            s->sorted = false; /* a binary search could not step over it */
            continue;
        }
        if (!s->has_x) {
            s->xmin = s->xmax = x;
            s->has_x = true;
            continue;
        }
        if (x < s->xmax)
            s->sorted = false;
        if (x < s->xmin)
            s->xmin = x;
        if (x > s->xmax)
            s->xmax = x;
    }
    s->tracked = s->n;
}

void chart_set_points(struct chart *c, size_t i, const struct chart_point *pts, size_t n)
{
    if (i >= c->ns)
        return;
    struct series *s = &c->s[i];
    s->pts = pts;
    s->n = pts ? n : 0;
    s->tracked = 0;
    s->has_x = false;
    s->sorted = true;
    s->nck = s->ck_done = 0;
    s->ck_state = (struct chart_ema)CHART_EMA_INIT;
    s->stale = true;
    track(s);
    c->base.dirty = true;
}

void chart_append_points(struct chart *c, size_t i, const struct chart_point *pts, size_t n)
{
    if (i >= c->ns)
        return;
    struct series *s = &c->s[i];
    if (!pts || n < s->n) { /* not an append: start again */
        chart_set_points(c, i, pts, n);
        return;
    }
    s->pts = pts;
    s->n = n;
    track(s);
    c->base.dirty = true;
}

void chart_set_smoothing(struct chart *c, double weight)
{
    weight = !(weight > 0) ? 0 : weight > CHART_MAX_SMOOTHING ? CHART_MAX_SMOOTHING : weight;
    if (weight != c->weight)
        c->base.dirty = true;
    c->weight = weight;
}

double chart_smoothing(const struct chart *c)
{
    return c->weight;
}

void chart_set_log_y(struct chart *c, bool log_y)
{
    if (log_y != c->log_y)
        c->base.dirty = true;
    c->log_y = log_y;
}

bool chart_log_y(const struct chart *c)
{
    return c->log_y;
}

void chart_set_zoom_last(struct chart *c, double last)
{
    c->zoom_last = last > 0 && isfinite(last) ? last : 0;
    c->base.dirty = true;
}

void chart_set_cursor(struct chart *c, int col)
{
    c->cursor = col < 0 ? -1 : col;
    c->base.dirty = true;
}

int chart_cursor(const struct chart *c)
{
    return c->cursor;
}

bool chart_cursor_x(const struct chart *c, double *x)
{
    if (c->cursor < 0 || !c->cur_has_x)
        return false;
    *x = c->cur_x;
    return true;
}

bool chart_cursor_y(const struct chart *c, size_t i, double *y)
{
    if (c->cursor < 0 || i >= c->ns || !c->cur_has_y[i])
        return false;
    *y = c->cur_y[i];
    return true;
}

bool chart_cursor_smoothed(const struct chart *c, size_t i, double *y)
{
    if (c->cursor < 0 || i >= c->ns || !c->cur_has_smo[i])
        return false;
    *y = c->cur_smo[i];
    return true;
}

size_t chart_hidden_points(const struct chart *c, size_t i)
{
    return i < c->ns ? c->s[i].red.hidden : 0;
}

/* ---- The column cache ---- */

/* Steps the smoothing state e over pts[from..to) with weight w. */
static void ema_over(struct chart_ema *e, const struct chart_point *pts, size_t from, size_t to,
                     double w)
{
    for (size_t i = from; i < to; i++) {
        double x = pts[i].x, y = pts[i].y;
        if (!isfinite(x) || !isfinite(y))
            continue;
        e->last = e->last * w + (1 - w) * y;
        e->wk *= w;
    }
}

/*
 * Adds smoothing checkpoints (weight w) up to point upto: ck[j] is the
 * state before point j*CK_EVERY; ck_state the state before point ck_done.
 */
static void checkpoints(struct series *s, double w, size_t upto)
{
    for (;;) {
        size_t at = s->nck * CK_EVERY;
        if (at > upto || at > s->n)
            break;
        ema_over(&s->ck_state, s->pts, s->ck_done, at, w);
        s->ck_done = at;
        if (s->nck == s->ck_cap) {
            s->ck_cap = s->ck_cap ? 2 * s->ck_cap : 16;
            s->ck = xreallocarray(s->ck, s->ck_cap, sizeof *s->ck);
        }
        s->ck[s->nck++] = s->ck_state;
    }
}

/* The first point with x >= x0 in sorted points. */
static size_t lower_bound(const struct chart_point *p, size_t n, double x0)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (p[mid].x < x0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/*
 * Rebuilds s's columns for k from the window's first point (binary search
 * when x only grows), the smoothing state there from the checkpoint before
 * it: O(points in the window + CK_EVERY).
 */
static void rebuild(struct series *s, const struct cache_key *k)
{
    struct chart_reduce *r = &s->red;
    r->raw = xreallocarray(r->raw, k->ncols, sizeof *r->raw);
    r->smo = xreallocarray(r->smo, k->ncols, sizeof *r->smo);
    memset(r->raw, 0, k->ncols * sizeof *r->raw);
    memset(r->smo, 0, k->ncols * sizeof *r->smo);
    r->x0 = k->x0;
    r->x1 = k->x1;
    r->ncols = k->ncols;
    r->log_y = k->log_y;
    r->weight = k->weight;
    r->raw_gap = r->smo_gap = false;
    r->hidden = 0;
    r->ema = (struct chart_ema)CHART_EMA_INIT;
    s->stale = false;
    size_t start = s->sorted ? lower_bound(s->pts, s->n, k->x0) : 0, from = 0;
    if (start > 0 && k->weight > 0) {
        checkpoints(s, k->weight, start);
        size_t ci = start / CK_EVERY; /* < nck: checkpoints() reached start */
        r->ema = s->ck[ci];
        from = ci * CK_EVERY;
    }
    ema_over(&r->ema, s->pts, from, start, k->weight);
    struct chart_column *smo = r->smo;
    if (!(k->weight > 0))
        r->smo = NULL; /* nothing smoothed to keep */
    chart_reduce_points(r, s->pts, start, s->n);
    r->smo = smo;
    s->done = s->n;
}

/* The index of s's point with a finite x nearest x (in [lo, hi]), or SIZE_MAX when none. */
static size_t nearest_point(const struct series *s, double x, double lo, double hi)
{
    size_t best = SIZE_MAX;
    double best_d = INFINITY;
    size_t from = 0, to = s->n;
    if (s->sorted) { /* the two points around x */
        size_t at = lower_bound(s->pts, s->n, x);
        from = at > 0 ? at - 1 : 0;
        to = at + 1 < s->n ? at + 1 : s->n;
    }
    for (size_t j = from; j < to; j++) {
        double px = s->pts[j].x;
        if (!isfinite(px) || px < lo || px > hi)
            continue;
        double d = fabs(px - x);
        if (d < best_d) {
            best_d = d;
            best = j;
        }
    }
    return best;
}

/* The smoothed value at point j, as the smoothed line has it (non-finite: the raw value). */
static double smoothed_at(struct series *s, size_t j, double w)
{
    double y = s->pts[j].y;
    if (!isfinite(y))
        return y;
    struct chart_ema e = CHART_EMA_INIT;
    size_t from = 0;
    if (s->sorted) { /* from the checkpoint before j */
        checkpoints(s, w, j);
        size_t ci = j / CK_EVERY;
        if (ci < s->nck) {
            e = s->ck[ci];
            from = ci * CK_EVERY;
        }
    }
    ema_over(&e, s->pts, from, j + 1, w);
    return e.wk < 1 ? e.last / (1 - e.wk) : y;
}

/*
 * The cursor's readout: the x of the point nearest the middle of its column
 * (of every series, in the window), and each series' point nearest that x
 * while x is within the series' range: a step the job wrote and its values,
 * never a fraction of a step with nothing to show.
 */
void chart_read_cursor(struct chart *c, double x0, double x1, int pw)
{
    c->cur_has_x = false;
    memset(c->cur_has_y, 0, sizeof c->cur_has_y);
    memset(c->cur_has_smo, 0, sizeof c->cur_has_smo);
    if (c->cursor < 0 || pw <= 0)
        return;
    if (c->cursor >= pw)
        c->cursor = pw - 1;
    double span = x1 - x0, mid = x0 + (c->cursor + 0.5) * span / pw;
    c->cur_x = mid;
    c->cur_col = c->cursor;
    c->cur_has_x = true;
    double best_d = INFINITY;
    bool found = false;
    for (size_t i = 0; i < c->ns; i++) {
        size_t j = nearest_point(&c->s[i], mid, x0, x1);
        if (j != SIZE_MAX && fabs(c->s[i].pts[j].x - mid) < best_d) {
            best_d = fabs(c->s[i].pts[j].x - mid);
            c->cur_x = c->s[i].pts[j].x;
            found = true;
        }
    }
    if (!found)
        return;
    if (span > 0) {
        double col = floor((c->cur_x - x0) / span * pw);
        c->cur_col = col < 0 ? 0 : col >= pw ? pw - 1 : (int)col;
    }
    for (size_t i = 0; i < c->ns; i++) {
        struct series *s = &c->s[i];
        if (!s->has_x || c->cur_x < s->xmin || c->cur_x > s->xmax)
            continue;
        size_t j = nearest_point(s, c->cur_x, x0, x1);
        if (j == SIZE_MAX)
            continue;
        c->cur_y[i] = s->pts[j].y;
        c->cur_has_y[i] = true;
        if (c->weight > 0) {
            c->cur_smo[i] = smoothed_at(s, j, c->weight);
            c->cur_has_smo[i] = true;
        }
    }
}

/* Brings every series' columns up to key k: appended points added, the rest rebuilt. */
void chart_update_cache(struct chart *c, const struct cache_key *k)
{
    bool same = c->key_valid && k->ncols == c->key.ncols && k->x0 == c->key.x0 &&
                k->x1 == c->key.x1 && k->weight == c->key.weight && k->log_y == c->key.log_y;
    if (!c->ck_valid || c->ck_weight != k->weight) {
        for (size_t i = 0; i < c->ns; i++) {
            c->s[i].nck = c->s[i].ck_done = 0;
            c->s[i].ck_state = (struct chart_ema)CHART_EMA_INIT;
        }
        c->ck_weight = k->weight;
        c->ck_valid = true;
    }
    for (size_t i = 0; i < c->ns; i++) {
        struct series *s = &c->s[i];
        if (!same || s->stale || s->done > s->n) {
            rebuild(s, k);
        } else if (s->done < s->n) {
            struct chart_column *smo = s->red.smo;
            if (!(k->weight > 0))
                s->red.smo = NULL;
            chart_reduce_points(&s->red, s->pts, s->done, s->n);
            s->red.smo = smo;
            s->done = s->n;
        }
    }
    c->key = *k;
    c->key_valid = true;
}

static unsigned chart_key(struct widget *wd, const struct widget_key *k)
{
    struct chart *c = (struct chart *)wd;
    int last = c->plot_w > 0 ? c->plot_w - 1 : 0, cur = c->cursor;
    int code = k->code;
    if (k->alt)
        return WIDGET_IGNORED;
    if (k->is_function) {
        if (code == KEY_LEFT)
            cur = cur < 0 ? last : cur > 0 ? cur - 1 : 0;
        else if (code == KEY_RIGHT)
            cur = cur < 0 ? last : cur < last ? cur + 1 : last;
        else if (code == KEY_HOME)
            cur = 0;
        else if (code == KEY_END)
            cur = last;
        else
            return WIDGET_IGNORED;
    } else if (code == 'h') {
        cur = cur < 0 ? last : cur > 0 ? cur - 1 : 0;
    } else if (code == 'l') {
        cur = cur < 0 ? last : cur < last ? cur + 1 : last;
    } else if (code == 27) {
        if (cur < 0)
            return WIDGET_IGNORED;
        cur = -1;
    } else {
        return WIDGET_IGNORED;
    }
    if (cur == c->cursor)
        return WIDGET_HANDLED;
    chart_set_cursor(c, cur);
    return WIDGET_HANDLED | WIDGET_REDRAW;
}

static int chart_height(const struct widget *wd, int w)
{
    (void)w;
    return ((const struct chart *)wd)->rows;
}

static void chart_destroy(struct widget *wd)
{
    chart_free((struct chart *)wd);
}

static const struct widget_ops chart_ops = {
    .kind = "chart",
    .draw = chart_draw,
    .key = chart_key,
    .height = chart_height,
    .destroy = chart_destroy,
};
