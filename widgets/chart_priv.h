/*
 * chart_priv: what the chart widget's parts share — struct chart, its
 * series, the column cache's key and the dot grid's cell. Included only by
 * widgets/chart*.c: chart.c (series, settings, the column cache, keys, the
 * widget ops) and chart_draw.c (the dot grid, axes, legend and cursor).
 */
#ifndef WIDGETS_CHART_PRIV_H
#define WIDGETS_CHART_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "widgets/chart.h"

/* The smoothing state is saved every CK_EVERY points, so a window can start anywhere. */
#define CK_EVERY 1024
#define LEGEND_SEP 2
#define MIN_NAME 3

struct series {
    char *name; /* sanitized */
    int name_cells;
    attr_t attr;
    const struct chart_point *pts;
    size_t n;
    /* What the owner's points are, kept up to date as they come (O(new)). */
    size_t tracked;
    bool has_x, sorted;
    double xmin, xmax;
    /* The smoothing state before point i*CK_EVERY, for the cache's weight. */
    struct chart_ema *ck;
    size_t nck, ck_cap, ck_done;
    struct chart_ema ck_state;
    /* The pixel columns (red.raw, red.smo) for the cache's key; valid for pts[0..done). */
    struct chart_reduce red;
    size_t done;
    bool stale; /* set_points: rebuild even when the key is the same */
};

/* What the columns were built for; any change rebuilds them. */
struct cache_key {
    size_t ncols;
    double x0, x1, weight;
    bool log_y;
};

/* A cell of the dot grid: its dots and whose they are. */
struct cell {
    uint8_t bits;
    int8_t owner;  /* series, -1: none */
    uint8_t layer; /* 0 raw (dim), 1 the drawn line */
};

struct chart {
    struct widget base;
    int rows;
    const struct widget_palette *pal;
    enum chart_glyphs glyphs;
    bool color;
    enum chart_x_kind x_kind;
    struct series s[CHART_MAX_SERIES];
    size_t ns;
    double weight;
    bool log_y;
    double zoom_last;
    int cursor;
    int label_w; /* the y labels' width at the last draw */
    int plot_w;  /* the plot's width in cells at the last draw */

    struct cache_key key;
    bool key_valid;
    double ck_weight; /* the weight the checkpoints were made with */
    bool ck_valid;

    struct cell *grid;
    size_t grid_cap;
    char *top_mark, *bottom_mark; /* per plot cell column: marker, 0 none */
    int8_t *top_owner, *bottom_owner;
    size_t marks_cap;

    /* The cursor's readout at the last draw. */
    bool cur_has_x;
    double cur_x;
    bool cur_has_y[CHART_MAX_SERIES];
    double cur_y[CHART_MAX_SERIES];
    bool cur_has_smo[CHART_MAX_SERIES];
    double cur_smo[CHART_MAX_SERIES];
    int cur_col; /* the plot column of cur_x: where the cursor line is drawn */
};

/* chart.c: brings every series' columns up to key k */
void chart_update_cache(struct chart *c, const struct cache_key *k);
/* chart.c: the cursor's readout for a plot of pw columns showing x in [x0, x1] */
void chart_read_cursor(struct chart *c, double x0, double x1, int pw);
/* chart_draw.c: the widget's draw op */
void chart_draw(struct widget *wd, WINDOW *win, int y, int x, int w, bool focused);

#endif
