/*
 * chart: a line chart of several series of (x, y) points — training
 * curves, but the widget knows nothing of jobs or TensorBoard: it takes
 * points, names and the attributes of colour roles, and draws into a window.
 *
 * Data: the chart copies no points. A series is an array of the OWNER's
 * (chart_set_points), which must stay valid and unchanged until the next
 * chart_set_points or chart_append_points for that series; the owner may
 * move it (realloc) between calls. chart_append_points says that the first
 * points are unchanged and only new ones follow, so the chart processes
 * only those. Points with a non-finite x are ignored.
 *
 * Frame cost: before drawing, each series is reduced to min/max per pixel
 * column (raw and smoothed, with the first and last value of the column so
 * the line joins its neighbours, and flags for NaN / Inf / non-positive
 * values): a spike in a million points still reaches its pixel. The columns
 * are kept between frames and rebuilt only when the x window, the width,
 * the log scale or the smoothing change; appended points are added to them
 * (O(new points)). In the full view the x axis ends on a tick (1-2-5 steps),
 * so appending rarely moves it. A frame then costs O(cells), whatever the
 * number of points; a rebuild costs O(points in the window) when x only
 * grows (found by binary search), O(points) otherwise.
 *
 * Layout (rows given by chart_set_rows, width by the draw call):
 *   row 0          the legend: each series' swatch (its marker without
 *                  colour) and name, names cut by display width with "…"
 *                  so the line fits the width; with the cursor on, the x
 *                  at the cursor first and each series' y after its name
 *                  (then " ~" and the smoothed y, with smoothing on);
 *                  series that still do not fit are counted as "+N"
 *   rows 1..R-3    the plot: y tick labels, an axis, then the curves
 *   row R-2        the x axis with tick marks; row R-1 the x tick labels
 * Dots: braille (2x4 dots a cell), quadrant blocks (2x2) or ASCII (1x2:
 * ' . :), chosen by the owner (chart_set_glyphs): braille needs a font
 * that has it, the other two serve terminals without, ASCII non-UTF-8
 * locales. Where curves cross, a cell takes the colour of the last series
 * drawn; the raw series (with smoothing) are drawn first, dim, so the
 * smoothed ones cover them.
 *
 * Colour: each series has the attribute of a colour role, chosen by the
 * owner. Without colour (chart_set_color(c, false): NO_COLOR, a mono
 * theme) and with more than one series, each series draws its own ASCII
 * marker (* + x o # @ % &) in every cell it passes, shown in the legend too.
 *
 * Values that cannot be drawn are shown, not dropped: the line breaks
 * around them (as TensorBoard's does) and their pixel column gets a marker
 * in the series' colour: '^' on the top row for +Inf, 'v' on the bottom
 * row for -Inf and, on a log scale, for zero and negative values, '?' on
 * the top row for NaN. The smoother skips them (TensorBoard's rule: the
 * smoothed value there is the raw value, and the average carries on).
 *
 * Smoothing is TensorBoard's debiased exponential moving average with
 * weight w in [0, 0.999]: last = last*w + (1-w)*v, shown as last/(1-w^k)
 * after k finite values. Zoom shows the last N of x (steps) only.
 *
 * Keys (result bits as widget.h): Left/h, Right/l move the cursor a
 * column (the first press shows it at the right end), Home/End the ends;
 * it reads the point nearest its column (chart_cursor_x),
 * Esc hides it (IGNORED when already hidden). Everything else is IGNORED:
 * the owner binds smoothing, log scale and zoom to its own keys.
 * The chart never draws by itself: setters set `dirty`.
 */
#ifndef WIDGETS_CHART_H
#define WIDGETS_CHART_H

#include <stdbool.h>
#include <stddef.h>

#include "widgets/widget.h"

#define CHART_MAX_SERIES 8
#define CHART_MAX_TICKS 16
#define CHART_MAX_SMOOTHING 0.999

struct chart_point {
    double x, y;
};

enum chart_glyphs {
    CHART_BRAILLE, /* U+2800 braille: 2x4 dots a cell */
    CHART_BLOCK,   /* quadrant blocks ▘▝▖▗…: 2x2 */
    CHART_ASCII,   /* ' . : — 1x2, any terminal */
};

/* What x is, for its labels (the values are the owner's). */
enum chart_x_kind {
    CHART_X_STEP,     /* a step count: 1.5k, 2M */
    CHART_X_WALL,     /* seconds since the epoch: 14:05, 12-01 */
    CHART_X_RELATIVE, /* seconds since a start: 45s, 12m, 1h30m, 2d */
};

struct chart;

/* An empty chart `rows` rows high (at least 1). Free with chart_free or ops->destroy. */
struct chart *chart_new(int rows);
void chart_free(struct chart *c);
/* The chart as a widget (the first member), and back (NULL if not one). */
struct widget *chart_widget(struct chart *c);
struct chart *chart_from_widget(struct widget *wd);

/* The rows the chart takes (a pane resize); sets dirty. */
void chart_set_rows(struct chart *c, int rows);
/* Axes and labels in its roles (NULL: widget_palette_mono()); held by pointer. */
void chart_set_palette(struct chart *c, const struct widget_palette *pal);
void chart_set_glyphs(struct chart *c, enum chart_glyphs g);
/* Whether series are told apart by colour (false: by markers). */
void chart_set_color(struct chart *c, bool color);
void chart_set_x_kind(struct chart *c, enum chart_x_kind kind);

/*
 * Adds a series named name (sanitized, copied) drawn in attr (a colour
 * role's attribute, pair or'ed in); returns its index, or -1 when there
 * are CHART_MAX_SERIES already. It has no points until chart_set_points.
 */
int chart_add_series(struct chart *c, const char *name, attr_t attr);
/* Removes every series. */
void chart_clear(struct chart *c);
size_t chart_series_count(const struct chart *c);
/* Series i's points are pts[0..n) (the owner's, see the top). */
void chart_set_points(struct chart *c, size_t i, const struct chart_point *pts, size_t n);
/* As chart_set_points, telling the chart that the points it had are unchanged and first. */
void chart_append_points(struct chart *c, size_t i, const struct chart_point *pts, size_t n);

/* Smoothing weight, clamped to [0, 0.999]; 0 draws the raw series alone. */
void chart_set_smoothing(struct chart *c, double weight);
double chart_smoothing(const struct chart *c);
void chart_set_log_y(struct chart *c, bool log_y);
bool chart_log_y(const struct chart *c);
/* Shows x in (max - last, max] only; 0 shows everything. */
void chart_set_zoom_last(struct chart *c, double last);

/* The cursor's plot column (0 = leftmost), or -1 to hide it; clamped at the next draw. */
void chart_set_cursor(struct chart *c, int col);
int chart_cursor(const struct chart *c);
/*
 * At the last draw: the x the cursor reads, snapped to the nearest x of a
 * point in the window (a step, not a fraction between two), and series i's
 * value there: the y of its point nearest that x, as it was given (not
 * smoothed), when x is within the series' first and last x; chart_cursor_
 * smoothed gives the smoothed value at that point (smoothing on only). The
 * plot draws the cursor as a line in the column of that x. False when the
 * cursor is hidden or has nothing to read.
 */
bool chart_cursor_x(const struct chart *c, double *x);
bool chart_cursor_y(const struct chart *c, size_t i, double *y);
bool chart_cursor_smoothed(const struct chart *c, size_t i, double *y);
/* Points of series i in the window that could not be drawn (NaN, Inf, <= 0 on log). */
size_t chart_hidden_points(const struct chart *c, size_t i);

/* ---- The maths, pure (no curses): exposed for tests and other views ---- */

struct chart_ticks {
    double lo, hi; /* the axis range, extended to whole steps */
    double step;   /* 0 on a log axis */
    int n;
    double v[CHART_MAX_TICKS];
};

/*
 * Ticks for [lo, hi] at a 1-2-5 step giving at most max_ticks (2 to
 * CHART_MAX_TICKS) ticks, the range extended to whole steps. An empty or
 * constant range is widened around its value (by 5 %, or to [-1, 1] at 0);
 * non-finite bounds give [0, 1].
 */
void chart_nice_ticks(double lo, double hi, int max_ticks, struct chart_ticks *t);
/* Ticks at powers of ten (every k-th decade to keep to max_ticks) for [lo, hi], lo > 0. */
void chart_log_ticks(double lo, double hi, int max_ticks, struct chart_ticks *t);
/*
 * Ticks for seconds (a wall or relative time axis): steps of 1 2 5 10 15 20 30 s,
 * 1 2 5 10 15 20 30 min, 1 2 3 6 12 h, 1 2 7 d, then 1-2-5 days.
 */
void chart_time_ticks(double lo, double hi, int max_ticks, struct chart_ticks *t);

/*
 * A value as an axis label, at the precision its tick step needs, with an
 * SI suffix (k M G T P) chosen by magnitude, the magnitude of the largest
 * label (so one axis reads 0.98G 1.00G, not 980M 1G): small numbers
 * below 1e-3 in exponent form ("2e-8"). step 0 formats to 4 significant
 * digits (a readout). "nan", "inf", "-inf" for the others.
 */
void chart_format_value(double v, double step, double magnitude, char *buf, size_t n);
/* An x label of the kind, at the precision step needs (step 0: a readout). */
void chart_format_x(enum chart_x_kind kind, double v, double step, char *buf, size_t n);

/*
 * TensorBoard's smoothing of y[0..n) into out[0..n) (may be y): debiased
 * EMA with weight w (clamped to [0, 0.999]); non-finite values are copied
 * and skipped by the average.
 */
void chart_smooth(const double *y, size_t n, double w, double *out);

/* One pixel column of a series: what the draw needs of the points in it. */
struct chart_column {
    double min, max;    /* drawable values only */
    double first, last; /* in the order of the points */
    double last_x;
    unsigned flags; /* CHART_COL_* */
};

enum {
    CHART_COL_DATA = 1 << 0,    /* min..last hold a drawable value */
    CHART_COL_GAP = 1 << 1,     /* an undrawable value came before first: do not join */
    CHART_COL_NAN = 1 << 2,     /* a NaN fell here */
    CHART_COL_POS_INF = 1 << 3, /* +Inf */
    CHART_COL_BELOW = 1 << 4,   /* -Inf, or <= 0 on a log scale */
};

/* TensorBoard's smoothing state, carried from one point to the next. */
struct chart_ema {
    double last, wk; /* wk = w^k after k finite values */
};
#define CHART_EMA_INIT                                                                             \
    {                                                                                              \
        0, 1                                                                                       \
    }

/*
 * A reduction of points to pixel columns in progress: the window, the
 * columns (raw, and smoothed when smo is not NULL) and what carries from
 * one point to the next, so points can be added in several calls.
 */
struct chart_reduce {
    double x0, x1;
    size_t ncols;
    bool log_y;
    double weight; /* smoothing, [0, 0.999] */
    struct chart_column *raw, *smo;
    bool raw_gap, smo_gap; /* an undrawable value came last */
    struct chart_ema ema;
    size_t hidden; /* raw points in the window that were not drawable */
};

/*
 * Adds pts[from..n) to r's columns: the smoothing steps over every point
 * with a finite x, the columns take those in [x0, x1]. O(n - from).
 */
void chart_reduce_points(struct chart_reduce *r, const struct chart_point *pts, size_t from,
                         size_t n);

/*
 * Reduces pts[0..n) with x in [x0, x1] to ncols pixel columns (cols
 * zeroed first): min/max per column, so no spike is lost. On a log scale
 * values <= 0 are not drawable. Returns the points that were not drawable.
 */
size_t chart_downsample(const struct chart_point *pts, size_t n, double x0, double x1, size_t ncols,
                        bool log_y, struct chart_column *cols);

#endif
