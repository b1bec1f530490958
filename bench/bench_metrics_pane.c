/*
 * bench_metrics_pane: the job screen's Metrics pane (tui/metrics_pane) at
 * 120x40 with one charted tag of 4 series (runs rank0..rank3), each fed
 * 1,000,000 points in pages as the scalars call brings them (the pane
 * keeps a bounded number: metricset), into an off-screen terminal whose
 * output is counted (bench_term: newterm on a memfd):
 *   - a full frame: every cell written and repainted (as after ^L);
 *   - a live frame: a page of 100 new points per series arrived, so each
 *     series' points are rebuilt from the metricset and the chart redoes
 *     its columns — what the pane draws once a second while a job trains;
 *   - a frame after the smoothing changed (a key).
 * A frame is the pane's draw plus wnoutrefresh and doupdate. Median and
 * p99 over 31 runs, the median CPU time of this thread, and the bytes
 * curses wrote. Target (issue 13): a frame < 2 ms. Asserts nothing.
 */
#include <curses.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/scalarpage.h"
#include "bench/bench.h"
#include "tui/metrics_pane.h"
#include "tui/term.h"

#define RUNS 31
#define VIEW_W 120
#define VIEW_H 40
#define NSERIES 4
#define POINTS 1000000
#define PAGE 10000
#define APPEND 100

struct result {
    const char *what;
    double us[RUNS], cpu[RUNS], bytes[RUNS];
};

static double cpu_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* A noisy decaying loss for run s at step i. */
static double loss(int s, long i, uint64_t *x)
{
    *x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
    double noise = (double)(*x % 10000) / 10000 - 0.5;
    return (2.0 + s) * exp(-4.0 * (double)i / POINTS) + 0.2 * noise + 0.1 * s;
}

/* Steps [from, to) of every run as one page. */
static void feed(struct metrics_pane *p, long from, long to, uint64_t *x)
{
    static const char *const runs[NSERIES] = {"rank0", "rank1", "rank2", "rank3"};
    struct scalar_page pg;
    scalar_page_init(&pg);
    for (long i = from; i < to; i++)
        for (int s = 0; s < NSERIES; s++)
            scalar_page_add(&pg, runs[s], "train/loss", i, 1.7e9 + (double)i, loss(s, i, x));
    metrics_pane_feed(p, &pg);
    scalar_page_free(&pg);
}

static void timed(struct result *r, int i, struct metrics_pane *p, WINDOW *win,
                  struct bench_term *term, bool full)
{
    if (full) {
        werase(win);
        bench_term_force_repaint();
    }
    double b0 = bench_term_bytes(term), t0 = bench_now_ns() / 1e3, c0 = cpu_us();
    metrics_pane_draw(p, win, 0, 0, VIEW_H, VIEW_W, true);
    wnoutrefresh(win);
    doupdate();
    r->cpu[i] = cpu_us() - c0;
    r->us[i] = bench_now_ns() / 1e3 - t0;
    r->bytes[i] = bench_term_bytes(term) - b0;
}

int main(void)
{
    if (!setlocale(LC_ALL, "C.UTF-8")) {
        fprintf(stderr, "bench_metrics_pane: no C.UTF-8 locale\n");
        return 1;
    }
    struct bench_term bt;
    if (!bench_term_open(&bt, VIEW_H, VIEW_W)) {
        fprintf(stderr, "bench_metrics_pane: no off-screen terminal\n");
        return 1;
    }
    WINDOW *win = newwin(VIEW_H, VIEW_W, 0, 0);
    /* A colour terminal's styles: series in colour, braille dots. */
    struct term t = {.depth = THEME_DEPTH_256, .utf8 = true, .palette = *widget_palette_mono()};
    for (int i = 0; i < THEME_ROLE_COUNT; i++)
        t.role[i] = (attr_t)(i % 3 == 0 ? A_BOLD : A_NORMAL);

    struct metrics_pane *p = metrics_pane_new();
    metrics_pane_set_style(p, &t);
    uint64_t x = 0x9E3779B97F4A7C15ull;
    double f0 = bench_now_ns();
    for (long i = 0; i < POINTS; i += PAGE)
        feed(p, i, i + PAGE, &x);
    double feed_ms = (bench_now_ns() - f0) / 1e6;
    metrics_pane_move(p, 0);
    metrics_pane_draw(p, win, 0, 0, VIEW_H, VIEW_W, true); /* builds the columns */

    static struct result res[3] = {
        {.what = "full frame 120x40, 4 series x 1,000,000 points"},
        {.what = "live frame: 100 new points per series arrived"},
        {.what = "frame after the smoothing changed"},
    };
    for (int i = 0; i < RUNS; i++)
        timed(&res[0], i, p, win, &bt, true);
    long step = POINTS;
    for (int i = 0; i < RUNS; i++) {
        feed(p, step, step + APPEND, &x);
        step += APPEND;
        timed(&res[1], i, p, win, &bt, false);
    }
    struct widget_key none = {0};
    for (int i = 0; i < RUNS; i++) {
        metrics_pane_key(p, &none, i % 2 ? "smooth-more" : "smooth-less");
        timed(&res[2], i, p, win, &bt, false);
    }
    metrics_pane_free(p);
    delwin(win);
    bench_term_close(&bt);

    printf("Metrics pane (tui/metrics_pane): %d runs; 4 x 1,000,000 points fed in pages of %d "
           "steps in %.0f ms; a frame is draw + wnoutrefresh + doupdate into a counted "
           "off-screen terminal\n",
           RUNS, PAGE, feed_ms);
    printf("| %-50s | %9s | %9s | %9s | %7s | %-8s |\n", "measurement", "median µs", "p99 µs",
           "cpu µs", "bytes", "target");
    printf("|----------------------------------------------------|-----------|-----------|"
           "-----------|---------|----------|\n");
    for (size_t i = 0; i < sizeof res / sizeof res[0]; i++)
        printf("| %-50s | %9.1f | %9.1f | %9.1f | %7.0f | %-8s |\n", res[i].what,
               bench_quantile(res[i].us, RUNS, 0.5), bench_quantile(res[i].us, RUNS, 0.99),
               bench_quantile(res[i].cpu, RUNS, 0.5), bench_quantile(res[i].bytes, RUNS, 0.5),
               i < 2 ? "< 2 ms" : "-");
    return 0;
}
