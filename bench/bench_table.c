/*
 * bench_table: the table widget (widgets/table) over synthetic jobs, the
 * way the jobs view uses it — rebuilding the view (refresh: keys, filter,
 * sort with each row's sort key read once) for 10,000 and 100,000 rows,
 * and drawing frames of a 100x40 view over 10,000 rows into an off-screen
 * terminal whose output is counted (bench_term: newterm on a memfd): a full
 * frame (the table redraws every line and curses repaints the whole screen,
 * as after ^L or a resize), and the frame after the cursor moved one row. A
 * frame is the table's draw plus wnoutrefresh and doupdate, so curses' own
 * work counts too, and the bytes it wrote to the terminal are printed.
 *
 * Prints one table: median and p99 (nearest rank) over 31 runs, and user
 * CPU instructions per run where perf_event_open allows counting them
 * (n/a otherwise). Asserts nothing.
 */
#include <curses.h>
#include <linux/perf_event.h>
#include <locale.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench.h"
#include "util/xalloc.h"
#include "widgets/table.h"

#define RUNS 31
#define VIEW_W 100
#define VIEW_H 40
#define NCOLS 8

static const char *const states[] = {"RUNNING", "PENDING", "FAILED", "SUCCEEDED", "STOPPED"};
static const char *const reasons[] = {"", "quota exceeded", "waiting for 8 GPUs",
                                      "preempted by a higher priority job"};
static const char *const names_cjk[] = {"基线训练", "评估任务", "sweep", "ddp-run", "微调"};

/* The jobs, as the jobs view would hold them. */
struct job {
    uint64_t id;
    char name[24];
    char display[40];
    int state;
    int priority;
    long age_s;
    int restarts;
    int reason;
};

struct jobs {
    struct job *v;
    size_t n;
};

static size_t jobs_count(void *ctx)
{
    return ((struct jobs *)ctx)->n;
}

/* "3d4h", "12m" the way kubectl prints an age. */
static void format_age(char *out, size_t n, long s)
{
    if (s < 60)
        snprintf(out, n, "%lds", s);
    else if (s < 3600)
        snprintf(out, n, "%ldm", s / 60);
    else if (s < 86400)
        snprintf(out, n, "%ldh%ldm", s / 3600, s % 3600 / 60);
    else
        snprintf(out, n, "%ldd%ldh", s / 86400, s % 86400 / 3600);
}

static const char *jobs_cell(void *ctx, size_t row, size_t col, char *scratch, size_t n)
{
    const struct job *j = &((struct jobs *)ctx)->v[row];
    switch (col) {
    case 0:
        return j->name;
    case 1:
        return j->display;
    case 2:
        return states[j->state];
    case 3:
        snprintf(scratch, n, "%d", j->priority);
        return scratch;
    case 4:
        format_age(scratch, n, j->age_s);
        return scratch;
    case 5:
        snprintf(scratch, n, "%d", j->restarts);
        return scratch;
    case 6:
        snprintf(scratch, n, "%d", 1 << (j->id % 4));
        return scratch;
    default:
        return reasons[j->reason];
    }
}

static attr_t jobs_attr(void *ctx, size_t row, size_t col)
{
    const struct job *j = &((struct jobs *)ctx)->v[row];
    if (col != 2)
        return 0;
    return j->state == 2 ? A_BOLD : j->state == 0 ? A_UNDERLINE : 0;
}

static uint64_t jobs_key(void *ctx, size_t row)
{
    return ((struct jobs *)ctx)->v[row].id;
}

static const struct table_source jobs_source = {
    .count = jobs_count, .cell = jobs_cell, .cell_attr = jobs_attr, .row_key = jobs_key};

static const struct table_column columns[NCOLS] = {
    {"NAME", 8, 24, false},  {"DISPLAY NAME", 8, 20, false},
    {"STATE", 7, 10, false}, {"PRIO", 4, 4, true},
    {"AGE", 3, 7, true},     {"RESTARTS", 3, 8, true},
    {"WORKERS", 3, 7, true}, {"REASON", 6, 0, false},
};

/* n jobs with names, states, ages and the rest drawn from a fixed seed. */
static void make_jobs(struct jobs *jobs, size_t n)
{
    uint64_t x = 0x9E3779B97F4A7C15ull;
    jobs->v = xcalloc(n, sizeof *jobs->v);
    jobs->n = n;
    for (size_t i = 0; i < n; i++) {
        struct job *j = &jobs->v[i];
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        j->id = 1000000 + i;
        snprintf(j->name, sizeof j->name, "tj-%08llx", (unsigned long long)(x & 0xffffffff));
        snprintf(j->display, sizeof j->display, "%s-%zu", names_cjk[x % 5], i % 977);
        j->state = (int)(x >> 32) % 5;
        j->priority = (int)(x >> 40) % 10;
        j->age_s = (long)((x >> 20) % (90 * 86400));
        j->restarts = (int)(x >> 50) % 20;
        j->reason = j->state == 1 ? 1 + (int)(x >> 12) % 3 : 0;
    }
}

struct result {
    const char *what;
    double us[RUNS];
    double instr[RUNS];
    double lines; /* lines the table wrote per frame, -1 when not a frame */
    double bytes; /* bytes curses wrote to the terminal per frame (median) */
    const char *target;
};

static void print_row(struct result *r)
{
    char instr[32] = "n/a", lines[16] = "", bytes[16] = "";
    double med = bench_quantile(r->us, RUNS, 0.5), p99 = bench_quantile(r->us, RUNS, 0.99);
    if (r->instr[0] >= 0)
        snprintf(instr, sizeof instr, "%.0f", bench_quantile(r->instr, RUNS, 0.5));
    if (r->lines >= 0)
        snprintf(lines, sizeof lines, "%.0f", r->lines);
    if (r->lines >= 0)
        snprintf(bytes, sizeof bytes, "%.0f", r->bytes);
    printf("| %-46s | %9.1f | %9.1f | %12s | %5s | %7s | %-10s |\n", r->what, med, p99, instr,
           lines, bytes, r->target);
}

/* refresh + sort of n jobs by a text column (NAME) or a numeric one (AGE). */
static void bench_refresh(struct result *r, size_t n, size_t sort_col, int counter)
{
    struct jobs jobs;
    make_jobs(&jobs, n);
    struct table *t = table_new(&jobs_source, &jobs, columns, NCOLS);
    table_set_sort(t, sort_col, false);
    for (int i = 0; i < RUNS; i++) {
        /* A refresh re-reads every row in the owner's order and sorts them. */
        double t0 = (bench_now_ns() / 1e3);
        bench_counter_start(counter);
        table_refresh(t);
        r->instr[i] = bench_counter_stop(counter);
        r->us[i] = (bench_now_ns() / 1e3) - t0;
    }
    r->lines = -1;
    table_free(t);
    free(jobs.v);
}

/* One frame: the table's draw, then curses to the (null) terminal. */
static void frame(struct table *t, WINDOW *win)
{
    struct widget *wd = table_widget(t);
    wd->ops->draw(wd, win, 0, 0, VIEW_W, true);
    wnoutrefresh(win);
    doupdate();
}

int main(void)
{
    if (!setlocale(LC_ALL, "C.UTF-8")) {
        fprintf(stderr, "bench_table: no C.UTF-8 locale\n");
        return 1;
    }
    struct bench_term term;
    if (!bench_term_open(&term, VIEW_H, VIEW_W)) {
        fprintf(stderr, "bench_table: no off-screen terminal\n");
        return 1;
    }
    WINDOW *win = newwin(VIEW_H, VIEW_W, 0, 0);
    int counter = bench_counter_open();
    static struct result res[5] = {
        {.what = "refresh + sort by NAME, 10,000 rows", .target = "-"},
        {.what = "refresh + sort by NAME, 100,000 rows", .target = "-"},
        {.what = "refresh + sort by AGE (numeric), 100,000 rows", .target = "-"},
        {.what = "full frame 100x40 over 10,000 rows", .target = "< 2 ms"},
        {.what = "frame after the cursor moved one row", .target = "< 2 ms"},
    };

    bench_refresh(&res[0], 10000, 0, counter);
    bench_refresh(&res[1], 100000, 0, counter);
    bench_refresh(&res[2], 100000, 4, counter);

    struct jobs jobs;
    make_jobs(&jobs, 10000);
    struct table *t = table_new(&jobs_source, &jobs, columns, NCOLS);
    table_set_sort(t, 4, false);
    frame(t, win); /* warm up */
    int lines_full = 0, lines_move = 0;
    double bytes_full[RUNS], bytes_move[RUNS];
    for (int i = 0; i < RUNS; i++) {
        /* A full frame: the owner cleared the window and curses repaints it all. */
        werase(win);
        table_invalidate(t);
        bench_term_force_repaint();
        double b0 = bench_term_bytes(&term);
        double t0 = (bench_now_ns() / 1e3);
        bench_counter_start(counter);
        frame(t, win);
        res[3].instr[i] = bench_counter_stop(counter);
        res[3].us[i] = (bench_now_ns() / 1e3) - t0;
        bytes_full[i] = bench_term_bytes(&term) - b0;
        lines_full = table_drawn_lines(t);

        /* Down (or Up, to stay on the page), then the frame. */
        struct widget_key k = {.code = i % 2 ? KEY_UP : KEY_DOWN, .is_function = true};
        table_widget(t)->ops->key(table_widget(t), &k);
        b0 = bench_term_bytes(&term);
        t0 = (bench_now_ns() / 1e3);
        bench_counter_start(counter);
        frame(t, win);
        res[4].instr[i] = bench_counter_stop(counter);
        res[4].us[i] = (bench_now_ns() / 1e3) - t0;
        bytes_move[i] = bench_term_bytes(&term) - b0;
        lines_move = table_drawn_lines(t);
    }
    res[3].lines = lines_full;
    res[4].lines = lines_move;
    res[3].bytes = bench_quantile(bytes_full, RUNS, 0.5);
    res[4].bytes = bench_quantile(bytes_move, RUNS, 0.5);
    table_free(t);
    free(jobs.v);
    delwin(win);
    bench_term_close(&term);

    printf("table widget (widgets/table): %d runs; a frame is draw + wnoutrefresh + doupdate "
           "into a counted off-screen terminal; bytes = what curses wrote to it\n",
           RUNS);
    printf("| %-46s | %9s | %9s | %12s | %5s | %7s | %-10s |\n", "measurement", "median µs",
           "p99 µs", "instructions", "lines", "bytes", "target");
    printf("|------------------------------------------------|-----------|-----------|"
           "--------------|-------|---------|------------|\n");
    for (size_t i = 0; i < sizeof res / sizeof res[0]; i++)
        print_row(&res[i]);
    if (counter >= 0)
        close(counter);
    return 0;
}
