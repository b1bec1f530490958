/*
 * bench_chart: the chart widget (widgets/chart) at 120x40 with 4 series
 * of 1,000 and of 1,000,000 points each (noisy training curves, smoothing
 * 0.6 so raw and smoothed lines are both drawn), into an off-screen
 * terminal whose output is counted (bench_term: newterm on a memfd):
 *   - a full frame: the chart draws every cell and curses repaints the
 *     whole screen (as after ^L or a resize) — the columns are cached, so
 *     this must not depend on the number of points;
 *   - a frame after 100 new points per series were appended (a live run);
 *   - a frame after the smoothing weight changed (every column rebuilt
 *     from the points: O(points), shown for honesty).
 * A frame is the chart's draw plus wnoutrefresh and doupdate, so curses'
 * own work counts, and the bytes it wrote to the terminal are printed.
 * Median and p99 (nearest rank) over 31 runs, the median of this thread's
 * CPU time (the wall clock suffers on a shared machine), user instructions
 * where perf_event_open allows. Asserts nothing.
 */
#include <curses.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/bench.h"
#include "util/xalloc.h"
#include "widgets/chart.h"

#define RUNS 31
#define VIEW_W 120
#define VIEW_H 40
#define NSERIES 4
#define APPEND 100

struct result {
    const char *what;
    double us[RUNS];
    double cpu[RUNS]; /* this thread's CPU time: the machine may be shared */
    double instr[RUNS];
    double bytes[RUNS];
    const char *target;
};

static void print_row(struct result *r)
{
    char instr[32] = "n/a";
    double med = bench_quantile(r->us, RUNS, 0.5), p99 = bench_quantile(r->us, RUNS, 0.99);
    if (r->instr[0] >= 0)
        snprintf(instr, sizeof instr, "%.0f", bench_quantile(r->instr, RUNS, 0.5));
    printf("| %-52s | %9.1f | %9.1f | %9.1f | %12s | %7.0f | %-8s |\n", r->what, med, p99,
           bench_quantile(r->cpu, RUNS, 0.5), instr, bench_quantile(r->bytes, RUNS, 0.5),
           r->target);
}

/* n points of a noisy decaying loss for series s (room for RUNS appends after them). */
static struct chart_point *curve(size_t n, int s)
{
    struct chart_point *p = xcalloc(n + RUNS * APPEND, sizeof *p);
    uint64_t x = 0x9E3779B97F4A7C15ull * (uint64_t)(s + 1);
    size_t total = n + RUNS * APPEND;
    for (size_t i = 0; i < total; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        double noise = (double)(x % 10000) / 10000 - 0.5;
        double t = (double)i / (double)total;
        p[i] = (struct chart_point){(double)i, (2.0 + s) * exp(-4 * t) + 0.2 * noise + 0.1 * s};
    }
    return p;
}

static double cpu_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static void frame(struct chart *c, WINDOW *win)
{
    struct widget *wd = chart_widget(c);
    wd->ops->draw(wd, win, 0, 0, VIEW_W, false);
    wnoutrefresh(win);
    doupdate();
}

/* Times one frame into r's run i; full: the window cleared and every cell repainted. */
static void timed(struct result *r, int i, struct chart *c, WINDOW *win, struct bench_term *term,
                  int counter, bool full)
{
    if (full) {
        werase(win);
        bench_term_force_repaint();
    }
    double b0 = bench_term_bytes(term);
    double t0 = bench_now_ns() / 1e3, c0 = cpu_us();
    bench_counter_start(counter);
    frame(c, win);
    r->instr[i] = bench_counter_stop(counter);
    r->cpu[i] = cpu_us() - c0;
    r->us[i] = bench_now_ns() / 1e3 - t0;
    r->bytes[i] = bench_term_bytes(term) - b0;
}

static void bench_points(struct result *res, size_t n, WINDOW *win, struct bench_term *term,
                         int counter)
{
    struct chart_point *pts[NSERIES];
    static const char *const names[NSERIES] = {"train/loss rank0", "train/loss rank1", "eval/loss",
                                               "学习率 lr"};
    static const attr_t attrs[NSERIES] = {A_BOLD, A_NORMAL, A_UNDERLINE, A_DIM};
    struct chart *c = chart_new(VIEW_H);
    for (int s = 0; s < NSERIES; s++) {
        pts[s] = curve(n, s);
        chart_add_series(c, names[s], attrs[s]);
        chart_set_points(c, (size_t)s, pts[s], n);
    }
    chart_set_smoothing(c, 0.6);
    chart_set_cursor(c, 60);
    frame(c, win); /* the first frame builds the columns */

    for (int i = 0; i < RUNS; i++)
        timed(&res[0], i, c, win, term, counter, true);
    size_t have = n;
    for (int i = 0; i < RUNS; i++) {
        have += APPEND;
        for (int s = 0; s < NSERIES; s++)
            chart_append_points(c, (size_t)s, pts[s], have);
        timed(&res[1], i, c, win, term, counter, false);
    }
    for (int i = 0; i < RUNS; i++) {
        chart_set_smoothing(c, i % 2 ? 0.6 : 0.7);
        timed(&res[2], i, c, win, term, counter, false);
    }
    chart_free(c);
    for (int s = 0; s < NSERIES; s++)
        free(pts[s]);
}

int main(void)
{
    if (!setlocale(LC_ALL, "C.UTF-8")) {
        fprintf(stderr, "bench_chart: no C.UTF-8 locale\n");
        return 1;
    }
    struct bench_term term;
    if (!bench_term_open(&term, VIEW_H, VIEW_W)) {
        fprintf(stderr, "bench_chart: no off-screen terminal\n");
        return 1;
    }
    WINDOW *win = newwin(VIEW_H, VIEW_W, 0, 0);
    int counter = bench_counter_open();
    static struct result res[6] = {
        {.what = "full frame 120x40, 4 x 1,000 points", .target = "< 2 ms"},
        {.what = "frame after 100 points appended, 4 x 1,000", .target = "< 2 ms"},
        {.what = "frame after smoothing changed, 4 x 1,000", .target = "-"},
        {.what = "full frame 120x40, 4 x 1,000,000 points", .target = "< 2 ms"},
        {.what = "frame after 100 points appended, 4 x 1,000,000", .target = "< 2 ms"},
        {.what = "frame after smoothing changed, 4 x 1,000,000", .target = "-"},
    };
    bench_points(&res[0], 1000, win, &term, counter);
    bench_points(&res[3], 1000000, win, &term, counter);
    delwin(win);
    bench_term_close(&term);

    printf("chart widget (widgets/chart): %d runs; a frame is draw + wnoutrefresh + doupdate "
           "into a counted off-screen terminal; bytes = what curses wrote to it\n",
           RUNS);
    printf("| %-52s | %9s | %9s | %9s | %12s | %7s | %-8s |\n", "measurement", "median µs",
           "p99 µs", "cpu µs", "instructions", "bytes", "target");
    printf("|------------------------------------------------------|-----------|-----------|"
           "-----------|--------------|---------|----------|\n");
    for (size_t i = 0; i < sizeof res / sizeof res[0]; i++)
        print_row(&res[i]);
    if (counter >= 0)
        close(counter);
    return 0;
}
