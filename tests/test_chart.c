/*
 * test_chart: the chart widget (widgets/chart) — its maths without curses
 * (ticks for awkward ranges, labels, TensorBoard's smoothing against
 * hand-computed values, a spike surviving the min/max reduction of a
 * million points) and its drawing into an off-screen terminal read back
 * cell by cell: braille and ASCII dots, log scale with zeros and negatives,
 * NaN/Inf markers and gaps, markers without colour, a legend of CJK names
 * at 80 columns, the cursor's readout, zoom, and appended points giving the
 * same picture as all points set at once.
 */
// clang-format off
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
// clang-format on

#include "tests/offscreen.h"

#include <curses.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/utf8.h"
#include "util/xalloc.h"
#include "widgets/chart.h"

#define WIN_H 20
#define WIN_W 80

static struct offscreen term;
static WINDOW *win;

static int setup_terminal(void **state)
{
    if (offscreen_open(&term) != 0)
        return -1;
    win = newwin(WIN_H, WIN_W, 0, 0);
    return win ? 0 : -1;
}

static int teardown_terminal(void **state)
{
    offscreen_close(&term, win);
    return 0;
}

/* ---- maths ---- */

static void assert_ticks(const struct chart_ticks *t, double lo, double hi, double step, int n)
{
    assert_true(fabs(t->lo - lo) <= fabs(step) * 1e-9 + 1e-300);
    assert_true(fabs(t->hi - hi) <= fabs(step) * 1e-9 + 1e-300);
    assert_true(fabs(t->step - step) <= step * 1e-9);
    assert_int_equal(t->n, n);
    for (int i = 1; i < t->n; i++)
        assert_true(fabs(t->v[i] - t->v[i - 1] - step) <= step * 1e-6);
}

static char *label(double v, const struct chart_ticks *t)
{
    static char buf[32];
    chart_format_value(v, t->step, fmax(fabs(t->lo), fabs(t->hi)), buf, sizeof buf);
    return buf;
}

static void test_ticks_awkward_ranges(void **state)
{
    struct chart_ticks t;
    /* A tiny range: steps of 2e-8, labels in exponent form. */
    chart_nice_ticks(0, 1e-7, 6, &t);
    assert_ticks(&t, 0, 1e-7, 2e-8, 6);
    assert_string_equal(label(t.v[0], &t), "0");
    assert_string_equal(label(t.v[1], &t), "2e-8");
    assert_string_equal(label(t.v[5], &t), "1e-7");
    /* Across zero: whole steps of 2 covering -3..7, zero exactly zero. */
    chart_nice_ticks(-3, 7, 8, &t);
    assert_ticks(&t, -4, 8, 2, 7);
    assert_true(t.v[2] == 0);
    assert_string_equal(label(-4, &t), "-4");
    /* No more ticks than asked: the step grows to 5. */
    chart_nice_ticks(-3, 7, 6, &t);
    assert_ticks(&t, -5, 10, 5, 4);
    /* 1e9 constant: widened by 5 %, one suffix for the whole axis. */
    chart_nice_ticks(1e9, 1e9, 6, &t);
    assert_true(t.lo <= 0.95e9 && t.hi >= 1.05e9 && t.n <= 6);
    assert_true(t.step == 2e7 || t.step == 5e7);
    assert_string_equal(label(1e9, &t), t.step == 2e7 ? "1.00G" : "1.00G");
    assert_string_equal(label(0.96e9, &t), "0.96G");
    /* A constant series at 0: [-1, 1]. */
    chart_nice_ticks(0, 0, 5, &t);
    assert_ticks(&t, -1, 1, 0.5, 5);
    assert_string_equal(label(0.5, &t), "0.5");
    assert_string_equal(label(-1, &t), "-1.0");
    /* A constant small loss: labels with enough decimals to differ. */
    chart_nice_ticks(0.0123, 0.0123, 6, &t);
    assert_true(t.n >= 3);
    char first[32];
    snprintf(first, sizeof first, "%s", label(t.v[0], &t));
    assert_string_not_equal(first, label(t.v[1], &t));
    /* Garbage in: still ticks. */
    chart_nice_ticks(NAN, INFINITY, 6, &t);
    assert_ticks(&t, 0, 1, 0.2, 6);
    chart_nice_ticks(-1e308, 1e308, 6, &t);
    assert_true(t.n >= 2);
    /* Log: powers of ten, every second decade when they are too many. */
    chart_log_ticks(0.003, 250, 10, &t);
    assert_int_equal(t.n, 7);
    assert_true(fabs(t.v[0] - 1e-3) < 1e-12 && fabs(t.v[6] - 1e3) < 1e-6);
    chart_log_ticks(1e-9, 1e9, 6, &t);
    assert_true(t.n <= 6 && t.v[0] <= 1e-9 * 1.0001 && t.hi >= 1e9);
    chart_log_ticks(5, 5, 6, &t); /* a constant positive series: one decade */
    assert_true(t.lo <= 5 && t.hi >= 5 && t.n == 2);
}

static void test_labels(void **state)
{
    char b[32];
    chart_format_value(1500, 500, 0, b, sizeof b);
    assert_string_equal(b, "1.5k");
    chart_format_value(2.5e6, 0, 0, b, sizeof b); /* a readout: 4 significant digits */
    assert_string_equal(b, "2.5M");
    chart_format_value(0.123456, 0, 0, b, sizeof b);
    assert_string_equal(b, "0.1235");
    chart_format_value(1.2345e-5, 0, 0, b, sizeof b);
    assert_string_equal(b, "1.234e-5");
    chart_format_value(5e-324, 0, 0, b, sizeof b); /* a denormal: no "inf" from scaling */
    assert_string_equal(b, "4.941e-324");
    chart_format_value(9.99996e-5, 0, 0, b, sizeof b); /* rounding carries into the exponent */
    assert_string_equal(b, "1e-4");
    chart_format_value(-1e300, 0, 0, b, sizeof b);
    assert_string_equal(b, "-1e300");
    chart_format_value(NAN, 0, 0, b, sizeof b);
    assert_string_equal(b, "nan");
    chart_format_value(-INFINITY, 0, 0, b, sizeof b);
    assert_string_equal(b, "-inf");
    chart_format_x(CHART_X_STEP, 1500, 500, b, sizeof b);
    assert_string_equal(b, "1.5k");
    chart_format_x(CHART_X_STEP, 2000, 500, b, sizeof b);
    assert_string_equal(b, "2k");
    chart_format_x(CHART_X_STEP, 1000000, 200000, b, sizeof b);
    assert_string_equal(b, "1M");
    chart_format_x(CHART_X_STEP, 12345, 0, b, sizeof b); /* the cursor's step, exact */
    assert_string_equal(b, "12345");
    chart_format_x(CHART_X_RELATIVE, 45, 15, b, sizeof b);
    assert_string_equal(b, "45s");
    chart_format_x(CHART_X_RELATIVE, 5400, 1800, b, sizeof b);
    assert_string_equal(b, "1h30m");
    chart_format_x(CHART_X_RELATIVE, 7200, 3600, b, sizeof b);
    assert_string_equal(b, "2h");
    chart_format_x(CHART_X_RELATIVE, 172800, 86400, b, sizeof b);
    assert_string_equal(b, "2d");
    setenv("TZ", "UTC", 1);
    tzset();
    chart_format_x(CHART_X_WALL, 1764597900, 300, b, sizeof b); /* 2025-12-01 14:05 UTC */
    assert_string_equal(b, "14:05");
    chart_format_x(CHART_X_WALL, 1764597900, 172800, b, sizeof b);
    assert_string_equal(b, "12-01");
    struct chart_ticks t;
    chart_time_ticks(0, 5400, 5, &t); /* 90 minutes: 30-minute ticks */
    assert_ticks(&t, 0, 5400, 1800, 4);
    chart_time_ticks(0, 100, 6, &t);
    assert_ticks(&t, 0, 100, 20, 6);
}

/* TensorBoard's numbers, by hand: w = 0.5 over 1, 2, 3 (and a NaN skipped). */
static void test_smoothing_matches_tensorboard(void **state)
{
    double y[] = {1, NAN, 2, 3, INFINITY, 4};
    double out[6];
    chart_smooth(y, 6, 0.5, out);
    /* k=1: last=0.5, /(1-0.5)=1; k=2: last=1.25, /0.75; k=3: last=2.125, /0.875; k=4: 3.0625/0.9375
     */
    assert_true(fabs(out[0] - 1) < 1e-12);
    assert_true(isnan(out[1]));
    assert_true(fabs(out[2] - 1.25 / 0.75) < 1e-12);
    assert_true(fabs(out[3] - 2.125 / 0.875) < 1e-12);
    assert_true(isinf(out[4]) && out[4] > 0);
    assert_true(fabs(out[5] - 3.0625 / 0.9375) < 1e-12);
    /* w = 0: the raw series; w = 0.999 (the top of the slider) and above clamp. */
    chart_smooth(y, 6, 0, out);
    assert_true(out[0] == 1 && out[2] == 2 && out[5] == 4);
    double a[3] = {10, 0, 0}, b[3];
    chart_smooth(a, 3, 5.0, b);
    assert_true(fabs(b[0] - 10) < 1e-9);
    assert_true(fabs(b[1] - (0.999 * 0.001 * 10) / (1 - 0.999 * 0.999)) < 1e-9);
    /* The first value is itself whatever the weight (the debiasing). */
    chart_smooth(a, 1, 0.9, b);
    assert_true(fabs(b[0] - 10) < 1e-12);
}

/* A million points at 1.0 with one spike: the spike reaches its column. */
static void test_spike_survives_downsampling(void **state)
{
    size_t n = 1000000;
    struct chart_point *p = xcalloc(n, sizeof *p);
    for (size_t i = 0; i < n; i++)
        p[i] = (struct chart_point){(double)i, 1.0};
    p[654321].y = 100;
    p[123456].y = -50;
    struct chart_column cols[240];
    size_t hidden = chart_downsample(p, n, 0, (double)(n - 1), 240, false, cols);
    assert_int_equal(hidden, 0);
    double top = -INFINITY, bottom = INFINITY;
    size_t spike_col = 654321 * 240 / (n - 1);
    for (int c = 0; c < 240; c++) {
        assert_true(cols[c].flags & CHART_COL_DATA);
        top = fmax(top, cols[c].max);
        bottom = fmin(bottom, cols[c].min);
    }
    assert_true(top == 100 && bottom == -50);
    assert_true(cols[spike_col].max == 100);
    /* Log scale: the negative one is not drawable, and said so. */
    hidden = chart_downsample(p, n, 0, (double)(n - 1), 240, true, cols);
    assert_int_equal(hidden, 1);
    assert_true(cols[123456 * 240 / (n - 1)].flags & CHART_COL_BELOW);
    free(p);
}

/* ---- drawing ---- */

static void draw(struct chart *c)
{
    werase(win);
    struct widget *wd = chart_widget(c);
    wd->ops->draw(wd, win, 0, 0, WIN_W, true);
}

/* How many cells of rows [y0, y1) hold a code point in [lo, hi]. */
static int count_cells(int y0, int y1, uint32_t lo, uint32_t hi)
{
    int n = 0;
    for (int y = y0; y < y1; y++)
        for (int x = 0; x < WIN_W; x++) {
            cchar_t cc;
            wchar_t wch[CCHARW_MAX + 1] = {0};
            attr_t a;
            short pair;
            if (mvwin_wch(win, y, x, &cc) == OK && getcchar(&cc, wch, &a, &pair, NULL) == OK &&
                (uint32_t)wch[0] >= lo && (uint32_t)wch[0] <= hi)
                n++;
        }
    return n;
}

static char *row_text(int y)
{
    char *s = offscreen_text(win, y, 0, WIN_W);
    assert_non_null(s);
    return s;
}

static struct chart_point *sine(size_t n, double scale)
{
    struct chart_point *p = xcalloc(n, sizeof *p);
    for (size_t i = 0; i < n; i++)
        p[i] = (struct chart_point){(double)i, scale * (1.5 + sin((double)i / 20))};
    return p;
}

static void test_braille_and_ascii(void **state)
{
    struct chart_point *p = sine(500, 1);
    struct chart *c = chart_new(WIN_H);
    chart_add_series(c, "loss", A_NORMAL);
    chart_set_points(c, 0, p, 500);
    draw(c);
    /* Braille dots in the plot, box-drawing axes, labels. */
    assert_true(count_cells(1, WIN_H - 2, 0x2801, 0x28FF) > 60);
    assert_true(count_cells(1, WIN_H - 1, 0x2502, 0x2524) > 10);
    char *x_labels = row_text(WIN_H - 1);
    assert_non_null(strstr(x_labels, "0"));
    assert_non_null(strstr(x_labels, "500"));
    free(x_labels);
    /* ASCII: no code point above 0x7E anywhere. */
    chart_set_glyphs(c, CHART_ASCII);
    draw(c);
    assert_int_equal(count_cells(0, WIN_H, 0x7F, 0x10FFFF), 0);
    assert_true(count_cells(1, WIN_H - 2, ':', ':') + count_cells(1, WIN_H - 2, '.', '.') > 30);
    /* Blocks: quadrants only. */
    chart_set_glyphs(c, CHART_BLOCK);
    draw(c);
    assert_int_equal(count_cells(1, WIN_H - 2, 0x2800, 0x28FF), 0);
    assert_true(count_cells(1, WIN_H - 2, 0x2580, 0x259F) > 60);
    chart_free(c);
    free(p);
}

/* With smoothing, the raw series is drawn dim behind the smoothed one, in the series' colour. */
static void test_raw_faint_behind_smoothed(void **state)
{
    struct chart_point p[400];
    for (int i = 0; i < 400; i++)
        p[i] = (struct chart_point){i, (i % 2 ? 3.0 : 1.0) + (double)i / 400};
    struct chart *c = chart_new(WIN_H);
    chart_add_series(c, "noisy", A_UNDERLINE);
    chart_set_points(c, 0, p, 400);
    int dim = 0, bright = 0;
    for (int pass = 0; pass < 2; pass++) {
        chart_set_smoothing(c, pass ? 0.95 : 0);
        draw(c);
        dim = bright = 0;
        for (int y = 1; y < WIN_H - 2; y++)
            for (int x = 0; x < WIN_W; x++) {
                cchar_t cc;
                wchar_t wch[CCHARW_MAX + 1] = {0};
                attr_t a;
                short pair;
                mvwin_wch(win, y, x, &cc);
                getcchar(&cc, wch, &a, &pair, NULL);
                if (wch[0] <= 0x2800 || wch[0] > 0x28FF)
                    continue;
                assert_true(a & A_UNDERLINE); /* the series' own attribute */
                if (a & A_DIM)
                    dim++;
                else
                    bright++;
            }
        if (pass == 0)
            assert_int_equal(dim, 0); /* no smoothing: the raw line alone, not dim */
    }
    /* The smoothed line runs between 1 and 3 while the raw zigzag fills the band dim. */
    assert_true(dim > 40);
    assert_true(bright > 20 && bright < dim);
    chart_free(c);
}

/* Each plot column the sine passes has a dot in it: no holes between columns. */
static void test_line_is_joined(void **state)
{
    struct chart_point p[2] = {{0, 0}, {100, 100}};
    struct chart *c = chart_new(WIN_H);
    chart_add_series(c, "diag", A_NORMAL);
    chart_set_points(c, 0, p, 2);
    draw(c);
    int label_end = -1;
    for (int x = 0; x < WIN_W && label_end < 0; x++) {
        cchar_t cc;
        wchar_t wch[CCHARW_MAX + 1] = {0};
        attr_t a;
        short pair;
        mvwin_wch(win, 2, x, &cc);
        getcchar(&cc, wch, &a, &pair, NULL);
        if (wch[0] == 0x2502 || wch[0] == 0x2524)
            label_end = x;
    }
    assert_true(label_end > 0);
    for (int x = label_end + 1; x < WIN_W; x++) {
        bool dot = false;
        for (int y = 1; y < WIN_H - 2; y++) {
            cchar_t cc;
            wchar_t wch[CCHARW_MAX + 1] = {0};
            attr_t a;
            short pair;
            mvwin_wch(win, y, x, &cc);
            getcchar(&cc, wch, &a, &pair, NULL);
            dot |= wch[0] > 0x2800 && wch[0] <= 0x28FF;
        }
        assert_true(dot);
    }
    chart_free(c);
}

/* Zero and negative values on a log scale: no crash, a 'v' where they are, the rest drawn. */
static void test_log_scale_nonpositive(void **state)
{
    struct chart_point p[200];
    for (int i = 0; i < 200; i++)
        p[i] = (struct chart_point){i, pow(10, (double)i / 50)};
    p[100].y = 0;
    p[150].y = -3;
    struct chart *c = chart_new(WIN_H);
    chart_add_series(c, "lr", A_NORMAL);
    chart_set_points(c, 0, p, 200);
    chart_set_log_y(c, true);
    draw(c);
    assert_int_equal(chart_hidden_points(c, 0), 2);
    char *bottom = row_text(WIN_H - 3);
    int marks = 0;
    for (char *s = bottom; *s; s++)
        marks += *s == 'v';
    assert_int_equal(marks, 2);
    free(bottom);
    /* Decade labels on the y axis. */
    bool decade = false;
    for (int y = 1; y < WIN_H - 2; y++) {
        char *r = row_text(y);
        decade |= strncmp(r, " 1k", 3) == 0 || strstr(r, "100") == r || strstr(r, " 10") == r;
        free(r);
    }
    assert_true(decade);
    /* Everything non-positive: axes and markers, still no crash. */
    struct chart_point q[3] = {{0, 0}, {1, -1}, {2, 0}};
    chart_set_points(c, 0, q, 3);
    draw(c);
    assert_int_equal(chart_hidden_points(c, 0), 3);
    chart_free(c);
}

/* NaN and ±Inf: markers on the edges, a break in the line, the smoother goes on. */
static void test_nan_inf(void **state)
{
    struct chart_point p[100];
    for (int i = 0; i < 100; i++)
        p[i] = (struct chart_point){i, 1 + (double)i / 100};
    p[30].y = NAN;
    p[60].y = INFINITY;
    p[80].y = -INFINITY;
    struct chart *c = chart_new(WIN_H);
    chart_add_series(c, "loss", A_NORMAL);
    chart_set_points(c, 0, p, 100);
    chart_set_smoothing(c, 0.6);
    draw(c);
    assert_int_equal(chart_hidden_points(c, 0), 3);
    char *top = row_text(1), *bottom = row_text(WIN_H - 3);
    assert_non_null(strchr(top, '?'));
    assert_non_null(strchr(top, '^'));
    assert_non_null(strchr(bottom, 'v'));
    /* The y range is the finite values' (labels stay readable, no "inf"). */
    for (int y = 1; y < WIN_H - 2; y++) {
        char *r = row_text(y);
        assert_null(strstr(r, "inf"));
        assert_null(strstr(r, "nan"));
        free(r);
    }
    free(top);
    free(bottom);
    chart_free(c);
}

/* Without colour, two series are told apart by their markers, in the plot and the legend. */
static void test_markers_without_colour(void **state)
{
    struct chart_point *a = sine(300, 1), *b = sine(300, 3);
    struct chart *c = chart_new(WIN_H);
    chart_add_series(c, "rank0", A_NORMAL);
    chart_add_series(c, "rank1", A_NORMAL);
    chart_set_points(c, 0, a, 300);
    chart_set_points(c, 1, b, 300);
    chart_set_color(c, false);
    draw(c);
    assert_true(count_cells(1, WIN_H - 2, '*', '*') > 20);
    assert_true(count_cells(1, WIN_H - 2, '+', '+') > 20);
    assert_int_equal(count_cells(1, WIN_H - 2, 0x2801, 0x28FF), 0);
    char *legend = row_text(0);
    assert_non_null(strstr(legend, "* rank0"));
    assert_non_null(strstr(legend, "+ rank1"));
    free(legend);
    /* With colour the same chart draws braille. */
    chart_set_color(c, true);
    draw(c);
    assert_true(count_cells(1, WIN_H - 2, 0x2801, 0x28FF) > 20);
    chart_free(c);
    free(a);
    free(b);
}

/* Four long CJK names at 80 columns: cut by display cells with "…", never a half character. */
static void test_legend_cjk_at_80(void **state)
{
    static const char *names[] = {"训练损失/第零号进程/非常长的名字",
                                  "训练损失/第一号进程/非常长的名字", "验证准确率/全部进程的平均值",
                                  "学习率调度器的当前学习率"};
    struct chart_point *p = sine(100, 1);
    struct chart *c = chart_new(WIN_H);
    for (int i = 0; i < 4; i++) {
        chart_add_series(c, names[i], A_NORMAL);
        chart_set_points(c, (size_t)i, p, 100);
    }
    draw(c);
    char *legend = row_text(0);
    assert_true(utf8_width(legend, strlen(legend)) <= WIN_W);
    assert_non_null(strstr(legend, "\xE2\x80\xA6")); /* … */
    assert_non_null(strstr(legend, "训练"));
    assert_non_null(strstr(legend, "学习"));     /* all four are there */
    assert_null(strstr(legend, "\xEF\xBF\xBD")); /* no replacement character */
    /* offscreen_text reads a wide character once: its second cell must be its own. */
    for (int x = 0; x < WIN_W; x++) {
        cchar_t cc;
        wchar_t wch[CCHARW_MAX + 1] = {0};
        attr_t a;
        short pair;
        assert_int_equal(mvwin_wch(win, 0, x, &cc), OK);
        getcchar(&cc, wch, &a, &pair, NULL);
        if (utf8_cpwidth((uint32_t)wch[0]) == 2)
            x++;
    }
    free(legend);
    /* With the cursor's values too it still fits. */
    chart_set_cursor(c, 30);
    draw(c);
    legend = row_text(0);
    assert_true(utf8_width(legend, strlen(legend)) <= WIN_W);
    free(legend);
    chart_free(c);
    free(p);
}

/* The cursor reads out x and every series' y; keys move it. */
static void test_cursor_readout(void **state)
{
    struct chart_point a[1000], b[1000];
    for (int i = 0; i < 1000; i++) {
        a[i] = (struct chart_point){i, (double)i};
        b[i] = (struct chart_point){i, 2.0 * i};
    }
    struct chart *c = chart_new(WIN_H);
    chart_add_series(c, "one", A_NORMAL);
    chart_add_series(c, "two", A_NORMAL);
    chart_set_points(c, 0, a, 1000);
    chart_set_points(c, 1, b, 1000);
    double x, y0, y1;
    draw(c);
    assert_false(chart_cursor_x(c, &x));
    struct widget *wd = chart_widget(c);
    struct widget_key left = {.code = KEY_LEFT, .is_function = true};
    assert_int_equal(wd->ops->key(wd, &left), WIDGET_HANDLED | WIDGET_REDRAW);
    int last = chart_cursor(c);
    assert_true(last > 50); /* the first press shows it at the right end */
    assert_int_equal(wd->ops->key(wd, &left), WIDGET_HANDLED | WIDGET_REDRAW);
    assert_int_equal(chart_cursor(c), last - 1);
    chart_set_cursor(c, 20);
    draw(c);
    assert_true(chart_cursor_x(c, &x));
    assert_true(chart_cursor_y(c, 0, &y0));
    assert_true(chart_cursor_y(c, 1, &y1));
    /* y is the last point of the cursor's column: within a column of x, and b = 2a. */
    double col_w = 1000.0 / (last + 1);
    assert_true(fabs(y0 - x) <= col_w);
    assert_true(fabs(y1 - 2 * y0) < 1e-9);
    char *legend = row_text(0), want[32];
    assert_non_null(strstr(legend, "step "));
    snprintf(want, sizeof want, "one %g", y0);
    assert_non_null(strstr(legend, want));
    free(legend);
    /* The cursor column is drawn reversed. */
    bool reversed = false;
    for (int xx = 0; xx < WIN_W; xx++)
        reversed |= (offscreen_attr(win, 5, xx) & A_REVERSE) != 0;
    assert_true(reversed);
    struct widget_key esc = {.code = 27};
    assert_int_equal(wd->ops->key(wd, &esc), WIDGET_HANDLED | WIDGET_REDRAW);
    assert_int_equal(wd->ops->key(wd, &esc), WIDGET_IGNORED);
    chart_free(c);
}

/*
 * Issue 22: two runs of 30 steps on 80 columns read "step 7.933 - rank0 - -
 * rank1 -". The cursor snaps to a step a run wrote and reads each run's
 * value there; a run that stopped earlier reads "-" past its last step;
 * the cursor's column is drawn as a line in every plot row.
 */
static void test_cursor_snaps_to_points(void **state)
{
    struct chart_point a[30], b[20];
    for (int i = 0; i < 30; i++)
        a[i] = (struct chart_point){i + 1, 1000.0 / (i + 2)};
    for (int i = 0; i < 20; i++)
        b[i] = (struct chart_point){i + 1, 1000.0 / (i + 4)};
    struct chart *c = chart_new(WIN_H);
    chart_add_series(c, "rank0", A_NORMAL);
    chart_add_series(c, "rank1", A_NORMAL);
    chart_set_points(c, 0, a, 30);
    chart_set_points(c, 1, b, 20);
    draw(c);
    struct widget *wd = chart_widget(c);
    struct widget_key left = {.code = KEY_LEFT, .is_function = true};
    wd->ops->key(wd, &left);
    int last = chart_cursor(c);
    int seen_past_b = 0, steps_seen = 0;
    double prev = -1;
    for (int col = last; col >= 0; col--) {
        chart_set_cursor(c, col);
        draw(c);
        double x, y0, y1;
        assert_true(chart_cursor_x(c, &x));
        assert_true(x == floor(x) && x >= 1 && x <= 30); /* a step, not a fraction */
        assert_true(chart_cursor_y(c, 0, &y0));
        assert_true(y0 == a[(int)x - 1].y);
        if (x <= 20) {
            assert_true(chart_cursor_y(c, 1, &y1));
            assert_true(y1 == b[(int)x - 1].y);
        } else {
            assert_false(chart_cursor_y(c, 1, &y1));
            seen_past_b++;
        }
        steps_seen += x != prev;
        prev = x;
        char *legend = row_text(0), want[64], val[32];
        snprintf(want, sizeof want, "step %d ", (int)x);
        assert_non_null(strstr(legend, want));
        chart_format_value(y0, 0, 0, val, sizeof val);
        snprintf(want, sizeof want, "rank0 %s", val);
        assert_non_null(strstr(legend, want));
        if (x > 20)
            assert_non_null(strstr(legend, "rank1 -"));
        free(legend);
        /* the cursor line: the reversed column is drawn in every plot row */
        int cx = -1;
        for (int xx = 0; xx < WIN_W && cx < 0; xx++)
            if (offscreen_attr(win, 1, xx) & A_REVERSE)
                cx = xx;
        assert_true(cx >= 0);
        for (int r = 1; r < WIN_H - 2; r++) {
            char *cell = offscreen_text(win, r, cx, 1);
            assert_true(cell[0] != ' ' && cell[0] != '\0');
            assert_true(offscreen_attr(win, r, cx) & A_REVERSE);
            free(cell);
        }
    }
    assert_true(seen_past_b > 0);
    assert_int_equal(steps_seen, 30); /* every step is reached by some column */
    /* smoothing on: the value as written, then the smoothed one after '~' */
    chart_set_smoothing(c, 0.6);
    chart_set_cursor(c, last);
    draw(c);
    double x, y, sy;
    assert_true(chart_cursor_x(c, &x));
    assert_true(x == 30);
    assert_true(chart_cursor_y(c, 0, &y));
    assert_true(y == a[29].y);
    assert_true(chart_cursor_smoothed(c, 0, &sy));
    double ys[30];
    for (int i = 0; i < 30; i++)
        ys[i] = a[i].y;
    chart_smooth(ys, 30, 0.6, ys);
    assert_true(fabs(sy - ys[29]) < 1e-9);
    char *legend = row_text(0);
    assert_non_null(strstr(legend, "~"));
    free(legend);
    chart_free(c);
}

/* Zoom to the last N steps: x labels from the window only, the cursor reads inside it. */
static void test_zoom_last(void **state)
{
    size_t n = 100000;
    struct chart_point *p = xcalloc(n, sizeof *p);
    for (size_t i = 0; i < n; i++)
        p[i] = (struct chart_point){(double)i, (double)i};
    struct chart *c = chart_new(WIN_H);
    chart_add_series(c, "s", A_NORMAL);
    chart_set_points(c, 0, p, n);
    chart_set_smoothing(c, 0.9);
    chart_set_zoom_last(c, 1000);
    chart_set_cursor(c, 0);
    draw(c);
    double x;
    assert_true(chart_cursor_x(c, &x));
    assert_true(x >= n - 1001 && x < n - 900);
    double y;
    assert_true(chart_cursor_y(c, 0, &y));
    assert_true(y == p[(size_t)x].y); /* the value written at the cursor's step */
    /* The smoothed value at the window's start carries the history before it (the checkpoints). */
    assert_true(chart_cursor_smoothed(c, 0, &y));
    double *ys = xcalloc(n, sizeof *ys);
    for (size_t i = 0; i < n; i++)
        ys[i] = p[i].y;
    chart_smooth(ys, n, 0.9, ys);
    assert_true(fabs(ys[(size_t)x] - y) < 1e-6);
    free(ys);
    chart_free(c);
    free(p);
}

/* Points appended in bursts give the picture of all of them set at once. */
static void test_append_equals_set(void **state)
{
    size_t n = 20000;
    struct chart_point *p = sine(n, 1);
    for (size_t i = 0; i < n; i += 997)
        p[i].y = i % 2 ? NAN : 5;
    struct chart *inc = chart_new(WIN_H), *all = chart_new(WIN_H);
    chart_add_series(inc, "s", A_NORMAL);
    chart_add_series(all, "s", A_NORMAL);
    chart_set_smoothing(inc, 0.7);
    chart_set_smoothing(all, 0.7);
    chart_set_points(inc, 0, p, 100);
    draw(inc);
    for (size_t k = 100; k < n; k += 1234) {
        chart_append_points(inc, 0, p, k);
        draw(inc);
    }
    chart_append_points(inc, 0, p, n);
    draw(inc);
    char *rows_inc[WIN_H];
    for (int y = 0; y < WIN_H; y++)
        rows_inc[y] = row_text(y);
    chart_set_points(all, 0, p, n);
    draw(all);
    for (int y = 0; y < WIN_H; y++) {
        char *r = row_text(y);
        assert_string_equal(rows_inc[y], r);
        free(r);
        free(rows_inc[y]);
    }
    chart_free(inc);
    chart_free(all);
    free(p);
}

/* No points, one point, a tiny window: drawn without a crash. */
static void test_degenerate(void **state)
{
    struct chart *c = chart_new(WIN_H);
    draw(c);
    chart_add_series(c, "empty", A_NORMAL);
    draw(c);
    char *mid = row_text(1 + (WIN_H - 3) / 2);
    assert_non_null(strstr(mid, "(no data)"));
    free(mid);
    struct chart_point one = {5, 7};
    chart_set_points(c, 0, &one, 1);
    draw(c);
    assert_true(count_cells(1, WIN_H - 2, 0x2801, 0x28FF) >= 1);
    chart_set_rows(c, 3);
    draw(c);
    chart_set_rows(c, 5);
    werase(win);
    chart_widget(c)->ops->draw(chart_widget(c), win, 0, 0, 16, false);
    assert_null(chart_from_widget(NULL));
    assert_ptr_equal(chart_from_widget(chart_widget(c)), c);
    chart_free(c);
}

/* Points made of arbitrary bit patterns (NaN x, ±1e308, denormals, unsorted), every mode: no crash.
 */
static void test_garbage_points(void **state)
{
    uint64_t seed = 0x2545F4914F6CDD1Dull;
    struct chart_point p[300];
    struct chart *c = chart_new(WIN_H);
    chart_add_series(c, "a", A_NORMAL);
    chart_add_series(c, "b\x1b[31m", A_NORMAL);
    for (int round = 0; round < 200; round++) {
        for (size_t i = 0; i < 300; i++) {
            double v[2];
            for (int k = 0; k < 2; k++) {
                seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
                uint64_t bits = seed;
                static const double special[] = {0,   -0.0,     1e308,     -1e308, 5e-324,
                                                 NAN, INFINITY, -INFINITY, 1,      -1};
                if (seed % 3 == 0)
                    v[k] = special[(seed >> 8) % 10];
                else if (seed % 3 == 1)
                    memcpy(&v[k], &bits, sizeof v[k]);
                else
                    v[k] = (double)(int64_t)(seed >> 40) / 1000;
            }
            p[i] = (struct chart_point){round % 2 ? (double)i : v[0], v[1]};
        }
        size_t n = (size_t)(seed % 300);
        chart_set_points(c, 0, p, n);
        chart_set_points(c, 1, p + 300 - n, n);
        chart_set_glyphs(c, (enum chart_glyphs)(round % 3));
        chart_set_log_y(c, round % 4 == 1);
        chart_set_color(c, round % 5 != 0);
        chart_set_smoothing(c, (double)(round % 7) / 6);
        chart_set_zoom_last(c, round % 6 == 2 ? 50 : 0);
        chart_set_cursor(c, round % 8 == 3 ? 1000 : round % 8 == 5 ? 0 : -1);
        chart_set_x_kind(c, (enum chart_x_kind)(round % 3));
        draw(c);
        char *legend = row_text(0);
        assert_true(utf8_width(legend, strlen(legend)) <= WIN_W);
        assert_null(strchr(legend, 0x1b));
        free(legend);
    }
    chart_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ticks_awkward_ranges),
        cmocka_unit_test(test_labels),
        cmocka_unit_test(test_smoothing_matches_tensorboard),
        cmocka_unit_test(test_spike_survives_downsampling),
        cmocka_unit_test(test_braille_and_ascii),
        cmocka_unit_test(test_raw_faint_behind_smoothed),
        cmocka_unit_test(test_line_is_joined),
        cmocka_unit_test(test_log_scale_nonpositive),
        cmocka_unit_test(test_nan_inf),
        cmocka_unit_test(test_markers_without_colour),
        cmocka_unit_test(test_legend_cjk_at_80),
        cmocka_unit_test(test_cursor_readout),
        cmocka_unit_test(test_cursor_snaps_to_points),
        cmocka_unit_test(test_zoom_last),
        cmocka_unit_test(test_append_equals_set),
        cmocka_unit_test(test_degenerate),
        cmocka_unit_test(test_garbage_points),
    };
    return cmocka_run_group_tests(tests, setup_terminal, teardown_terminal);
}
