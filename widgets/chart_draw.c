/*
 * chart_draw: drawing the line chart widget (chart.h) — the dot grid its
 * series are plotted on, the y range and x window, the axes, the legend and
 * the cursor's readout. Called through the widget's draw op (chart.c's
 * chart_ops); reads the column cache chart.c keeps.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/strbuf.h"
#include "util/utf8.h"
#include "util/xalloc.h"
#include "widgets/chart_priv.h"

static const char markers[CHART_MAX_SERIES] = {'*', '+', 'x', 'o', '#', '@', '%', '&'};

/* ---- Drawing ---- */

/* Dots a cell holds across and down. */
static void cell_dots(enum chart_glyphs g, int *cw, int *ch)
{
    *cw = g == CHART_ASCII ? 1 : 2;
    *ch = g == CHART_BRAILLE ? 4 : 2;
}

/* The bit of dot (dx, dy) in a cell. */
static uint8_t dot_bit(enum chart_glyphs g, int dx, int dy)
{
    static const uint8_t braille[4][2] = {{0x01, 0x08}, {0x02, 0x10}, {0x04, 0x20}, {0x40, 0x80}};
    if (g == CHART_BRAILLE)
        return braille[dy][dx];
    if (g == CHART_BLOCK)
        return (uint8_t)(1u << (dy * 2 + dx));
    return (uint8_t)(1u << dy);
}

/* The character for a cell's dots. */
static wchar_t dot_glyph(enum chart_glyphs g, uint8_t bits)
{
    static const wchar_t quad[16] = {' ',    0x2598, 0x259D, 0x2580, 0x2596, 0x258C,
                                     0x259E, 0x259B, 0x2597, 0x259A, 0x2590, 0x259C,
                                     0x2584, 0x2599, 0x259F, 0x2588};
    static const wchar_t ascii[4] = {' ', '\'', '.', ':'};
    if (g == CHART_BRAILLE)
        return (wchar_t)(0x2800 + bits);
    if (g == CHART_BLOCK)
        return quad[bits & 15];
    return ascii[bits & 3];
}

/* The drawing of one frame: geometry and the value → pixel mapping. */
struct frame {
    int pw, ph;    /* plot size in cells */
    int cw, ch;    /* dots a cell */
    int pxw, pxh;  /* plot size in dots */
    double lo, hi; /* y range (log10 of it on a log axis) */
    bool log_y;
};

static int y_pixel(const struct frame *f, double v)
{
    double t = f->log_y ? log10(v) : v;
    double p = (f->hi - t) / (f->hi - f->lo) * (f->pxh - 1);
    if (!(p >= 0))
        return 0;
    if (p > f->pxh - 1)
        return f->pxh - 1;
    return (int)lround(p);
}

static void set_dot(struct chart *c, const struct frame *f, int px, int py, int owner, int layer)
{
    if (px < 0 || py < 0 || px >= f->pxw || py >= f->pxh)
        return;
    struct cell *cl = &c->grid[(size_t)(py / f->ch) * (size_t)f->pw + (size_t)(px / f->cw)];
    uint8_t bit = dot_bit(c->glyphs, px % f->cw, py % f->ch);
    if (cl->owner < 0 || layer > cl->layer) {
        cl->bits = bit;
        cl->owner = (int8_t)owner;
        cl->layer = (uint8_t)layer;
    } else if (layer == cl->layer) {
        cl->bits |= bit;
        cl->owner = (int8_t)owner;
    }
}

/* A line of dots (Bresenham). */
static void line(struct chart *c, const struct frame *f, int x0, int y0, int x1, int y1, int owner,
                 int layer)
{
    int dx = abs(x1 - x0), sx = x0 < x1 ? 1 : -1;
    int dy = -abs(y1 - y0), sy = y0 < y1 ? 1 : -1;
    int err = dx + dy;
    for (;;) {
        set_dot(c, f, x0, y0, owner, layer);
        if (x0 == x1 && y0 == y1)
            break;
        int e2 = 2 * err;
        if (e2 >= dy)
            err += dy, x0 += sx;
        if (e2 <= dx)
            err += dx, y0 += sy;
    }
}

/* Draws one series' columns into the grid: spans for min..max, joins between columns. */
static void plot_columns(struct chart *c, const struct frame *f, const struct chart_column *cols,
                         int owner, int layer)
{
    int prev_x = -1, prev_y = 0;
    for (int x = 0; x < f->pxw; x++) {
        const struct chart_column *col = &cols[x];
        if (!(col->flags & CHART_COL_DATA))
            continue;
        int top = y_pixel(f, col->max), bottom = y_pixel(f, col->min);
        if (prev_x >= 0 && !(col->flags & CHART_COL_GAP))
            line(c, f, prev_x, prev_y, x, y_pixel(f, col->first), owner, layer);
        for (int y = top; y <= bottom; y++)
            set_dot(c, f, x, y, owner, layer);
        prev_x = x;
        prev_y = y_pixel(f, col->last);
    }
}

/* Marks the cell columns of undrawable values ('?' NaN, '^' +Inf on top; 'v' below). */
static void plot_marks(struct chart *c, const struct frame *f, const struct chart_column *cols,
                       int owner)
{
    for (int x = 0; x < f->pxw; x++) {
        unsigned fl = cols[x].flags;
        int cx = x / f->cw;
        if (fl & (CHART_COL_NAN | CHART_COL_POS_INF)) {
            if (c->top_mark[cx] != '?') {
                c->top_mark[cx] = fl & CHART_COL_NAN ? '?' : '^';
                c->top_owner[cx] = (int8_t)owner;
            }
        }
        if (fl & CHART_COL_BELOW) {
            c->bottom_mark[cx] = 'v';
            c->bottom_owner[cx] = (int8_t)owner;
        }
    }
}

/* Writes ch at (y, x) in a alone (curses would or the window's attributes in; they are cleared). */
static void put_wch(WINDOW *win, int y, int x, wchar_t ch, attr_t a)
{
    cchar_t cc;
    wchar_t w[2] = {ch, 0};
    wattr_set(win, A_NORMAL, 0, NULL);
    if (setcchar(&cc, w, a & ~A_COLOR, (short)PAIR_NUMBER(a), NULL) == OK)
        mvwadd_wch(win, y, x, &cc);
}

/* Writes s (ASCII) at (y, x), at most max cells; returns the cells written. */
static int put_ascii(WINDOW *win, int y, int x, const char *s, int max)
{
    int n = (int)strlen(s);
    if (n > max)
        n = max;
    if (n > 0)
        mvwaddnstr(win, y, x, s, n);
    return n < 0 ? 0 : n;
}

/* The y range over what is drawn (raw, and smoothed when on); false when nothing is. */
static bool y_range(const struct chart *c, size_t ncols, double *lo, double *hi)
{
    bool any = false;
    for (size_t i = 0; i < c->ns; i++) {
        for (int layer = 0; layer < 2; layer++) {
            const struct chart_column *cols = layer ? c->s[i].red.smo : c->s[i].red.raw;
            if (layer && !(c->weight > 0))
                continue;
            for (size_t x = 0; x < ncols; x++) {
                if (!(cols[x].flags & CHART_COL_DATA))
                    continue;
                if (!any || cols[x].min < *lo)
                    *lo = cols[x].min;
                if (!any || cols[x].max > *hi)
                    *hi = cols[x].max;
                any = true;
            }
        }
    }
    return any;
}

/* The x window: everything (ends on ticks) or the zoomed last part; false with no points. */
static bool x_window(const struct chart *c, int max_ticks, struct chart_ticks *t, double *x0,
                     double *x1)
{
    bool any = false;
    double lo = 0, hi = 0;
    for (size_t i = 0; i < c->ns; i++) {
        const struct series *s = &c->s[i];
        if (!s->has_x)
            continue;
        if (!any || s->xmin < lo)
            lo = s->xmin;
        if (!any || s->xmax > hi)
            hi = s->xmax;
        any = true;
    }
    if (!any)
        lo = 0, hi = 1;
    bool zoom = c->zoom_last > 0 && hi - c->zoom_last > lo;
    if (zoom)
        lo = hi - c->zoom_last;
    if (c->x_kind == CHART_X_STEP)
        chart_nice_ticks(lo, hi, max_ticks, t);
    else
        chart_time_ticks(lo, hi, max_ticks, t);
    if (zoom) {
        /* Exactly the last part; only the ticks inside it. */
        int k = 0;
        for (int i = 0; i < t->n; i++)
            if (t->v[i] >= lo - 1e-9 * fabs(lo) && t->v[i] <= hi + 1e-9 * fabs(hi))
                t->v[k++] = t->v[i];
        t->n = k;
        t->lo = lo;
        t->hi = hi;
    }
    *x0 = t->lo;
    *x1 = t->hi;
    return any;
}

/* Allocates the grid and marker rows for the frame, cleared. */
static void clear_grid(struct chart *c, const struct frame *f)
{
    size_t cells = (size_t)f->pw * (size_t)f->ph;
    if (cells > c->grid_cap) {
        c->grid_cap = cells;
        free(c->grid);
        c->grid = xreallocarray(NULL, cells, sizeof *c->grid);
    }
    for (size_t i = 0; i < cells; i++)
        c->grid[i] = (struct cell){0, -1, 0};
    if ((size_t)f->pw > c->marks_cap) {
        c->marks_cap = (size_t)f->pw;
        c->top_mark = xreallocarray(c->top_mark, c->marks_cap, 1);
        c->bottom_mark = xreallocarray(c->bottom_mark, c->marks_cap, 1);
        c->top_owner = xreallocarray(c->top_owner, c->marks_cap, 1);
        c->bottom_owner = xreallocarray(c->bottom_owner, c->marks_cap, 1);
    }
    memset(c->top_mark, 0, (size_t)f->pw);
    memset(c->bottom_mark, 0, (size_t)f->pw);
    memset(c->top_owner, -1, (size_t)f->pw);
    memset(c->bottom_owner, -1, (size_t)f->pw);
}

/* Whether series are told apart by markers rather than colour. */
static bool use_markers(const struct chart *c)
{
    return !c->color && c->ns > 1;
}

/* The legend on row y: swatches, names cut to fit w cells, the cursor's readout. */
static void draw_legend(struct chart *c, WINDOW *win, int y, int x, int w)
{
    bool utf8 = c->glyphs != CHART_ASCII, marks = use_markers(c);
    char prefix[48] = "", values[CHART_MAX_SERIES][32];
    int fixed[CHART_MAX_SERIES];
    if (c->cursor >= 0 && c->cur_has_x) {
        char xs[40];
        chart_format_x(c->x_kind, c->cur_x, 0, xs, sizeof xs);
        snprintf(prefix, sizeof prefix, "%s%s  ", c->x_kind == CHART_X_STEP ? "step " : "", xs);
    }
    int need_fixed = (int)strlen(prefix), max_name = 0;
    for (size_t i = 0; i < c->ns; i++) {
        values[i][0] = '\0';
        if (c->cursor >= 0) {
            values[i][0] = ' ';
            if (c->cur_has_y[i])
                chart_format_value(c->cur_y[i], 0, 0, values[i] + 1, sizeof values[i] - 1);
            else
                snprintf(values[i] + 1, sizeof values[i] - 1, "-");
            if (c->cur_has_smo[i]) {
                size_t at = strlen(values[i]);
                values[i][at] = ' ';
                values[i][at + 1] = '~';
                at++;
                chart_format_value(c->cur_smo[i], 0, 0, values[i] + at + 1,
                                   sizeof values[i] - at - 1);
            }
        }
        fixed[i] = 2 + (int)strlen(values[i]) + (i > 0 ? LEGEND_SEP : 0);
        need_fixed += fixed[i];
        if (c->s[i].name_cells > max_name)
            max_name = c->s[i].name_cells;
    }
    /* The widest name cut that lets every entry fit; else fewer entries and "+N". */
    size_t shown = c->ns;
    int cut = -1;
    for (;;) {
        int more = shown < c->ns ? LEGEND_SEP + 1 + snprintf(NULL, 0, "%zu", c->ns - shown) : 0;
        int room = w - need_fixed - more;
        for (int m = max_name; m >= 0 && cut < 0; m--) {
            int names = 0;
            for (size_t i = 0; i < shown; i++)
                names += c->s[i].name_cells < m ? c->s[i].name_cells : m;
            if (names <= room && (m >= MIN_NAME || m == max_name))
                cut = m;
        }
        if (cut >= 0 || shown == 0)
            break;
        shown--;
        need_fixed -= fixed[shown];
    }
    widget_blank(win, y, x, w);
    widget_set_role(win, c->pal->label);
    int at = x, end = x + w;
    at += put_ascii(win, y, at, prefix, end - at);
    for (size_t i = 0; i < shown && at < end; i++) {
        struct series *s = &c->s[i];
        if (i > 0)
            at += put_ascii(win, y, at, "  ", end - at);
        if (at >= end)
            break;
        put_wch(win, y, at, marks ? (wchar_t)markers[i] : utf8 ? 0x2500 : '-', s->attr);
        at += 2;
        widget_set_role(win, c->pal->label);
        int room = end - at < cut ? end - at : cut;
        if (room > 0 && s->name_cells > room) {
            size_t k = widget_fit_bytes(s->name, strlen(s->name), room - 1, NULL);
            int cells = widget_text_cells(s->name, k);
            widget_put_bytes(win, y, at, s->name, k);
            at += cells;
            put_wch(win, y, at++, utf8 ? 0x2026 : '~', c->pal->label);
        } else if (room > 0) {
            widget_put_bytes(win, y, at, s->name, strlen(s->name));
            at += s->name_cells;
        }
        widget_set_role(win, c->pal->normal);
        at += put_ascii(win, y, at, values[i], end - at);
    }
    if (shown < c->ns && at < end) {
        char more[24];
        snprintf(more, sizeof more, "  +%zu", c->ns - shown);
        widget_set_role(win, c->pal->dim);
        put_ascii(win, y, at, more, end - at);
    }
    widget_set_role(win, c->pal->normal);
}

/* The plot cells, the y axis and its labels. */
static void draw_plot(struct chart *c, WINDOW *win, int y, int x, const struct frame *f,
                      const struct chart_ticks *yt, int label_w)
{
    bool utf8 = c->glyphs != CHART_ASCII, marks = use_markers(c);
    /* Which plot row each y tick lands on. */
    int tick_row[CHART_MAX_TICKS];
    for (int i = 0; i < yt->n; i++) {
        double v = yt->v[i];
        tick_row[i] = f->log_y && !(v > 0) ? -1 : y_pixel(f, v) / f->ch;
    }
    for (int r = 0; r < f->ph; r++) {
        widget_set_role(win, c->pal->dim);
        widget_blank(win, y + r, x, label_w);
        bool tick = false;
        for (int i = 0; i < yt->n; i++) {
            if (tick_row[i] != r)
                continue;
            char lab[32];
            if (f->log_y)
                chart_format_value(yt->v[i], 0, 0, lab, sizeof lab);
            else
                chart_format_value(yt->v[i], yt->step, fmax(fabs(yt->lo), fabs(yt->hi)), lab,
                                   sizeof lab);
            int len = (int)strlen(lab);
            if (len > label_w)
                len = label_w;
            mvwaddnstr(win, y + r, x + label_w - len, lab, len);
            tick = true;
        }
        put_wch(win, y + r, x + label_w, utf8 ? (tick ? 0x2524 : 0x2502) : (tick ? '+' : '|'),
                c->pal->border);
        for (int cx = 0; cx < f->pw; cx++) {
            const struct cell *cl = &c->grid[(size_t)r * (size_t)f->pw + (size_t)cx];
            wchar_t ch = ' ';
            attr_t a = c->pal->normal;
            char mark = r == 0 ? c->top_mark[cx] : 0;
            int owner = r == 0 ? c->top_owner[cx] : -1;
            if (!mark && r == f->ph - 1) {
                mark = c->bottom_mark[cx];
                owner = c->bottom_owner[cx];
            }
            if (mark) {
                ch = (wchar_t)mark;
                a = c->s[owner].attr | A_BOLD;
            } else if (cl->owner >= 0) {
                ch = marks ? (cl->layer ? (wchar_t)markers[cl->owner] : '.')
                           : dot_glyph(c->glyphs, cl->bits);
                a = c->s[cl->owner].attr | (cl->layer ? 0 : A_DIM);
            }
            if (c->cursor >= 0 && cx == c->cur_col) {
                if (ch == ' ') { /* the cursor line, seen without colour or attributes too */
                    ch = utf8 ? 0x2502 : ':';
                    a = c->pal->dim;
                }
                a |= A_REVERSE;
            }
            put_wch(win, y + r, x + label_w + 1 + cx, ch, a);
        }
    }
}

/* The x axis line with tick marks on row y, the labels on row y + 1. */
static void draw_x_axis(struct chart *c, WINDOW *win, int y, int x, int label_w, int pw,
                        const struct chart_ticks *xt, double x0, double x1, bool labels)
{
    bool utf8 = c->glyphs != CHART_ASCII;
    int ax = x + label_w, tick_col[CHART_MAX_TICKS];
    for (int i = 0; i < xt->n; i++) {
        double p = x1 > x0 ? (xt->v[i] - x0) / (x1 - x0) * pw : 0;
        tick_col[i] = !(p >= 0) ? 0 : p >= pw ? pw - 1 : (int)p;
    }
    widget_set_role(win, c->pal->dim);
    widget_blank(win, y, x, label_w);
    put_wch(win, y, ax, utf8 ? 0x2514 : '+', c->pal->border);
    for (int cx = 0; cx < pw; cx++) {
        bool tick = false;
        for (int i = 0; i < xt->n; i++)
            tick |= tick_col[i] == cx;
        wchar_t ch = utf8 ? (tick ? 0x252C : 0x2500) : (tick ? '+' : '-');
        put_wch(win, y, ax + 1 + cx, ch,
                c->pal->border | (c->cursor >= 0 && cx == c->cur_col ? A_REVERSE : 0));
    }
    if (!labels)
        return;
    widget_set_role(win, c->pal->dim);
    widget_blank(win, y + 1, x, label_w + 1 + pw);
    int free_from = x;
    for (int i = 0; i < xt->n; i++) {
        char lab[40];
        chart_format_x(c->x_kind, xt->v[i], xt->step, lab, sizeof lab);
        int len = (int)strlen(lab);
        int at = ax + 1 + tick_col[i] - len / 2;
        if (at + len > ax + 1 + pw)
            at = ax + 1 + pw - len;
        if (at < free_from)
            continue; /* it would cover the label before */
        put_ascii(win, y + 1, at, lab, ax + 1 + pw - at);
        free_from = at + len + 1;
    }
    widget_set_role(win, c->pal->normal);
}

void chart_draw(struct widget *wd, WINDOW *win, int y, int x, int w, bool focused)
{
    struct chart *c = (struct chart *)wd;
    (void)focused;
    c->base.dirty = false;
    int rows = c->rows;
    widget_set_role(win, c->pal->normal);
    if (rows < 4 || w < 16) {
        for (int r = 0; r < rows; r++)
            widget_blank(win, y + r, x, w);
        widget_set_role(win, c->pal->dim);
        put_ascii(win, y, x, "(too small)", w);
        widget_set_role(win, c->pal->normal);
        return;
    }
    struct frame f = {.log_y = c->log_y};
    cell_dots(c->glyphs, &f.cw, &f.ch);
    bool labels = rows >= 5;
    f.ph = rows - 1 - 1 - (labels ? 1 : 0);
    f.pxh = f.ph * f.ch;
    int y_ticks = f.ph / 3 + 1;

    /* The label width depends on the y range, the columns on the width: two passes at most. */
    struct chart_ticks xt, yt;
    double x0 = 0, x1 = 1;
    bool any = false;
    int label_w = c->label_w;
    for (int pass = 0; pass < 2; pass++) {
        f.pw = w - label_w - 1;
        if (f.pw < 4)
            f.pw = 4, label_w = w - 5;
        f.pxw = f.pw * f.cw;
        x_window(c, f.pw / 10 + 1, &xt, &x0, &x1);
        struct cache_key k = {
            .ncols = (size_t)f.pxw, .x0 = x0, .x1 = x1, .weight = c->weight, .log_y = c->log_y};
        chart_update_cache(c, &k);
        double lo = 0, hi = 1;
        any = y_range(c, (size_t)f.pxw, &lo, &hi);
        if (!any)
            lo = c->log_y ? 1 : 0, hi = c->log_y ? 10 : 1;
        if (c->log_y)
            chart_log_ticks(lo, hi, y_ticks, &yt);
        else
            chart_nice_ticks(lo, hi, y_ticks, &yt);
        int want = 1;
        for (int i = 0; i < yt.n; i++) {
            char lab[32];
            if (c->log_y)
                chart_format_value(yt.v[i], 0, 0, lab, sizeof lab);
            else
                chart_format_value(yt.v[i], yt.step, fmax(fabs(yt.lo), fabs(yt.hi)), lab,
                                   sizeof lab);
            if ((int)strlen(lab) > want)
                want = (int)strlen(lab);
        }
        if (want > w / 3)
            want = w / 3;
        if (want == label_w)
            break;
        label_w = c->label_w = want;
    }
    c->plot_w = f.pw;
    f.lo = c->log_y ? log10(yt.lo) : yt.lo;
    f.hi = c->log_y ? log10(yt.hi) : yt.hi;

    clear_grid(c, &f);
    for (int layer = c->weight > 0 ? 0 : 1; layer < 2; layer++)
        for (size_t i = 0; i < c->ns; i++)
            plot_columns(c, &f, layer == 1 && c->weight > 0 ? c->s[i].red.smo : c->s[i].red.raw,
                         (int)i, layer);
    for (size_t i = 0; i < c->ns; i++)
        plot_marks(c, &f, c->s[i].red.raw, (int)i);
    chart_read_cursor(c, x0, x1, f.pw);

    /* Every cell of the w x rows area is written below: no blanking first. */
    draw_legend(c, win, y, x, w);
    draw_plot(c, win, y + 1, x, &f, &yt, label_w);
    draw_x_axis(c, win, y + 1 + f.ph, x, label_w, f.pw, &xt, x0, x1, labels);
    if (!any) {
        widget_set_role(win, c->pal->dim);
        put_ascii(win, y + 1 + f.ph / 2, x + label_w + 1 + f.pw / 2 - 4, "(no data)", f.pw);
        widget_set_role(win, c->pal->normal);
    }
}
