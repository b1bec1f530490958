/*
 * fuzz_chart: libFuzzer target for the chart's maths (widgets/chart_math.c:
 * ticks, labels, smoothing, the min/max reduction), built with clang by
 * `make fuzz` and with tests/fuzz/replay.c by `make test`. The numbers come
 * from event files a job wrote: any bit pattern is possible.
 *
 * The input is read as doubles: the first two are an x window, the next two
 * a y range, the rest (x, y) points. For any input: ticks are at most as
 * many as asked (and CHART_MAX_TICKS), ascending, inside [lo, hi]; every
 * label fits its buffer and is not empty; the reduction puts each drawable
 * point in a column whose min <= value <= max, counts the rest as hidden,
 * never writes past ncols, and no column is lost (each point in the window
 * is accounted for: drawable or hidden); smoothing of finite values stays
 * within their range.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "widgets/chart.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "fuzz_chart: %s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);   \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

#define MAX_POINTS 512

static void check_ticks(const struct chart_ticks *t, int max_ticks, bool nice)
{
    CHECK(t->n >= 1 && t->n <= CHART_MAX_TICKS);
    if (nice)
        CHECK(t->n <= (max_ticks < 2 ? 2 : max_ticks));
    for (int i = 0; i < t->n; i++) {
        CHECK(!isnan(t->v[i]));
        if (i > 0)
            CHECK(t->v[i] >= t->v[i - 1]);
        char buf[48];
        chart_format_value(t->v[i], t->step, fmax(fabs(t->lo), fabs(t->hi)), buf, sizeof buf);
        CHECK(buf[0] != '\0' && strlen(buf) < sizeof buf);
        for (int k = 0; k < 3; k++) {
            chart_format_x((enum chart_x_kind)k, t->v[i], t->step, buf, sizeof buf);
            CHECK(buf[0] != '\0');
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t nd = size / sizeof(double);
    if (nd < 4)
        return 0;
    double d[4 + 2 * MAX_POINTS];
    if (nd > 4 + 2 * MAX_POINTS)
        nd = 4 + 2 * MAX_POINTS;
    memcpy(d, data, nd * sizeof *d);
    int max_ticks = (int)(data[0] % 20);

    struct chart_ticks t;
    chart_nice_ticks(d[2], d[3], max_ticks, &t);
    check_ticks(&t, max_ticks, true);
    chart_log_ticks(d[2], d[3], max_ticks, &t);
    check_ticks(&t, max_ticks, false);
    chart_time_ticks(d[0], d[1], max_ticks, &t);
    check_ticks(&t, max_ticks, true);

    /* Readouts of every value, tiny buffers included. */
    char small[4], buf[64];
    for (size_t i = 0; i < nd; i++) {
        chart_format_value(d[i], 0, 0, buf, sizeof buf);
        CHECK(buf[0] != '\0');
        chart_format_value(d[i], fabs(d[(i + 1) % nd]), 0, small, sizeof small);
        CHECK(strlen(small) < sizeof small);
        chart_format_x(CHART_X_RELATIVE, d[i], 0, small, sizeof small);
        chart_format_x(CHART_X_WALL, d[i], 60, small, sizeof small);
    }

    size_t n = (nd - 4) / 2;
    struct chart_point pts[MAX_POINTS];
    double ys[MAX_POINTS], sm[MAX_POINTS];
    for (size_t i = 0; i < n; i++) {
        pts[i] = (struct chart_point){d[4 + 2 * i], d[5 + 2 * i]};
        ys[i] = pts[i].y;
    }
    size_t ncols = 1 + data[1] % 300;
    struct chart_column cols[301];
    cols[ncols].flags = 0xdead; /* a guard past the end */
    bool log_y = data[2] & 1;
    size_t hidden = chart_downsample(pts, n, d[0], d[1], ncols, log_y, cols);
    CHECK(cols[ncols].flags == 0xdead);
    size_t in_window = 0, drawable = 0;
    for (size_t i = 0; i < n; i++) {
        double x = pts[i].x, y = pts[i].y;
        if (!isfinite(x) || !(x >= d[0] && x <= d[1]) || !(d[1] >= d[0]))
            continue;
        in_window++;
        if (isfinite(y) && (!log_y || y > 0)) {
            drawable++;
            bool found = false;
            for (size_t c = 0; c < ncols && !found; c++)
                found = (cols[c].flags & CHART_COL_DATA) && cols[c].min <= y && y <= cols[c].max;
            CHECK(found);
        }
    }
    CHECK(hidden + drawable == in_window);

    chart_smooth(ys, n, (double)data[3] / 255, sm);
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < n; i++)
        if (isfinite(ys[i]))
            lo = fmin(lo, ys[i]), hi = fmax(hi, ys[i]);
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(ys[i])) {
            CHECK(!isfinite(sm[i]));
            continue;
        }
        /* Within the range of the values, give or take rounding (and overflow near DBL_MAX). */
        if (isfinite(sm[i]) && hi - lo < 1e300)
            CHECK(sm[i] >= lo - 1e-9 * fmax(1, fabs(lo)) && sm[i] <= hi + 1e-9 * fmax(1, fabs(hi)));
    }
    return 0;
}
