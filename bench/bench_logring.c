/*
 * bench_logring: the cost and the memory of live logs. Streams 1,000,000
 * lines of about 100 bytes from 4 workers (4 KiB chunks cut mid-line, as a
 * log stream delivers them) into an 8 MiB logring and prints one table:
 * append throughput (plain and coloured lines, the latter through the
 * sanitizer), the process's VmRSS before and after 1,000,000 and
 * 2,000,000 lines (bounded: it stops growing once the ring is full), a
 * search and an error-line scan over the full ring, and one draw of a
 * 200×50 log view into an off-screen terminal.
 */
#include <curses.h>
#include <locale.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/logring.h"
#include "util/strbuf.h"
#include "widgets/logview.h"

#define SOURCES 4
#define LINES 1000000
#define POOL 1000 /* distinct lines per worker, cycled */
#define CHUNK_LINES 40
#define RUNS 5
#define SCANS 21

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *t, int n)
{
    qsort(t, (size_t)n, sizeof t[0], cmp_double);
    return t[n / 2];
}

/* VmRSS of this process in KiB, from /proc/self/status (0 if unreadable). */
static long rss_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = 0;
    if (!f)
        return 0;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "VmRSS:", 6) == 0) {
            kb = strtol(line + 6, NULL, 10);
            break;
        }
    }
    fclose(f);
    return kb;
}

/* Each worker's lines, back to back, ready to be cut into chunks. */
struct pool {
    struct strbuf text[SOURCES];
    size_t *ends[SOURCES]; /* end offset of each line */
};

/* Fills the pool with POOL lines per worker, coloured (ANSI escapes) or plain. */
static void pool_fill(struct pool *p, bool colour)
{
    for (int s = 0; s < SOURCES; s++) {
        strbuf_reset(&p->text[s]);
        if (!p->ends[s])
            p->ends[s] = calloc(POOL, sizeof *p->ends[s]);
        for (int i = 0; i < POOL; i++) {
            if (colour)
                strbuf_addf(&p->text[s],
                            "\x1b[32m2024-05-01 12:00:%02d INFO\x1b[0m [rank %d] step %06d "
                            "loss=%.4f lr=3.0e-4 tok/s=%d\n",
                            i % 60, s, i, 2.0 / (i + 1), 120000 + i);
            else
                strbuf_addf(&p->text[s],
                            "2024-05-01 12:00:%02d INFO [rank %d] step %06d loss=%.4f "
                            "lr=3.0e-4 tokens/s=%d grad_norm=0.98\n",
                            i % 60, s, i, 2.0 / (i + 1), 120000 + i);
            p->ends[s][i] = p->text[s].len;
        }
    }
}

static void pool_free(struct pool *p)
{
    for (int s = 0; s < SOURCES; s++) {
        strbuf_free(&p->text[s]);
        free(p->ends[s]);
    }
}

/*
 * Appends n lines round-robin from the workers, CHUNK_LINES at a time,
 * each chunk in two pieces cut mid-line. Returns the bytes appended.
 */
static size_t stream(struct logring *r, const struct pool *p, long n)
{
    size_t bytes = 0;
    int at[SOURCES] = {0};
    for (long done = 0; done < n;) {
        for (int s = 0; s < SOURCES && done < n; s++) {
            int first = at[s], last = first + CHUNK_LINES;
            if (last > POOL)
                last = POOL;
            size_t from = first ? p->ends[s][first - 1] : 0, to = p->ends[s][last - 1];
            size_t cut = from + (to - from) / 3;
            logring_append(r, (uint32_t)s, p->text[s].buf + from, cut - from);
            logring_append(r, (uint32_t)s, p->text[s].buf + cut, to - cut);
            bytes += to - from;
            done += last - first;
            at[s] = last == POOL ? 0 : last;
        }
    }
    return bytes;
}

/* Median lines/s and MB/s over RUNS streams of LINES lines into r. */
static void throughput(struct logring *r, const struct pool *p, double *lines_s, double *mb_s)
{
    double ls[RUNS], mbs[RUNS];
    for (int i = 0; i < RUNS; i++) {
        double t0 = now_s();
        size_t bytes = stream(r, p, LINES);
        double dt = now_s() - t0;
        ls[i] = LINES / dt;
        mbs[i] = (double)bytes / dt / 1e6;
    }
    *lines_s = median(ls, RUNS);
    *mb_s = median(mbs, RUNS);
}

static void row(const char *what, const char *value, const char *target)
{
    printf("| %-50s | %16s | %-26s |\n", what, value, target);
}

static void rowf(const char *what, const char *target, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A row whose value is printf-formatted. */
static void rowf(const char *what, const char *target, const char *fmt, ...)
{
    char buf[64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    row(what, buf, target);
}

/* Median time of one draw of a 200x50 following view over r, in µs. */
static double draw_us(const struct logring *r)
{
    FILE *out = fopen("/dev/null", "w"), *in = fopen("/dev/null", "r");
    double t[SCANS], res = -1;
    if (!out || !in || !setlocale(LC_ALL, "C.UTF-8"))
        goto done;
    SCREEN *scr = newterm("xterm-256color", out, in);
    if (!scr)
        goto done;
    WINDOW *win = newwin(50, 200, 0, 0);
    struct logview *v = logview_new(r, 50);
    struct widget *wd = logview_widget(v);
    for (int i = 0; i < SCANS; i++) {
        double t0 = now_s();
        wd->ops->draw(wd, win, 0, 0, 200, false);
        t[i] = (now_s() - t0) * 1e6;
    }
    res = median(t, SCANS);
    logview_free(v);
    delwin(win);
    endwin();
    delscreen(scr);
done:
    if (out)
        fclose(out);
    if (in)
        fclose(in);
    return res;
}

int main(void)
{
    struct pool pool = {0};

    pool_fill(&pool, false);
    long rss0 = rss_kb();
    struct logring *r = logring_new(NULL); /* 8 MiB, the default */
    struct logring_config lim;
    logring_limits(r, &lim);

    double t0 = now_s();
    stream(r, &pool, LINES);
    double first_run = now_s() - t0;
    long rss1 = rss_kb();
    stream(r, &pool, LINES);
    long rss2 = rss_kb();

    double plain_ls, plain_mb;
    throughput(r, &pool, &plain_ls, &plain_mb);
    long rss3 = rss_kb();

    /* Search over the full ring: a needle that is nowhere (a whole scan), the error scan. */
    double ts[SCANS], te[SCANS];
    for (int i = 0; i < SCANS; i++) {
        double s0 = now_s();
        if (logring_find(r, logring_last_seq(r), "needle-not-there", false) != 0)
            return 1;
        ts[i] = (now_s() - s0) * 1e3;
        s0 = now_s();
        if (logring_first_match(r, NULL, NULL) != 0)
            return 1;
        te[i] = (now_s() - s0) * 1e3;
    }
    double search_ms = median(ts, SCANS), error_ms = median(te, SCANS);
    double view_us = draw_us(r);

    pool_fill(&pool, true);
    struct logring *rc = logring_new(NULL);
    double colour_ls, colour_mb;
    throughput(rc, &pool, &colour_ls, &colour_mb);

    printf("live logs: %d lines of ~100 bytes from %d workers, %d-line chunks cut mid-line, "
           "into a %zu MiB / %zu-line logring; median of %d runs\n",
           LINES, SOURCES, CHUNK_LINES, lim.max_bytes >> 20, lim.max_lines, RUNS);
    printf("| %-50s | %16s | %-26s |\n", "measurement", "value", "target");
    printf("|%s|%s|%s|\n", "----------------------------------------------------",
           "------------------", "----------------------------");
    rowf("append plain lines", ">> 10,000 lines/s", "%.2f M lines/s", plain_ls / 1e6);
    rowf("append plain lines (bytes)", "", "%.0f MB/s", plain_mb);
    rowf("append coloured lines (through the sanitizer)", ">> 10,000 lines/s", "%.2f M lines/s",
         colour_ls / 1e6);
    rowf("first 1,000,000 lines (arena pages first touched)", "", "%.0f ms", first_run * 1e3);
    rowf("VmRSS before the ring", "", "%.1f MiB", (double)rss0 / 1024.0);
    rowf("VmRSS after 1,000,000 lines", "before + ring", "%.1f MiB", (double)rss1 / 1024.0);
    rowf("VmRSS after 2,000,000 lines", "= after 1,000,000", "%.1f MiB", (double)rss2 / 1024.0);
    rowf("VmRSS after 7,000,000 lines", "= after 1,000,000", "%.1f MiB", (double)rss3 / 1024.0);
    rowf("ring memory (logring_memory)", "8 MiB text + 2 MiB index", "%.2f MiB",
         (double)logring_memory(r) / 1048576.0);
    rowf("lines held at the end", "8 MiB / ~100 B", "%zu", logring_count(r));
    rowf("lines dropped", "the rest", "%llu", (unsigned long long)logring_dropped(r));
    rowf("search a full ring, no match (whole scan)", "< 50 ms (a keypress)", "%.2f ms", search_ms);
    rowf("first error line, none there (whole scan)", "< 50 ms (a keypress)", "%.2f ms", error_ms);
    if (view_us >= 0)
        rowf("draw a 200x50 following log view", "< 1 ms (30 draws/s)", "%.0f µs", view_us);
    double cpu = 10000.0 / plain_ls + (view_us >= 0 ? 30 * view_us / 1e6 : 0);
    rowf("CPU for 10,000 lines/s + 30 draws/s", "a few %", "%.2f %% of a core", cpu * 100);

    logring_free(rc);
    logring_free(r);
    pool_free(&pool);
    if (rss3 - rss1 > 1024) {
        fprintf(stderr, "bench_logring: VmRSS grew by %ld KiB after the ring was full\n",
                rss3 - rss1);
        return 1; /* not bounded */
    }
    return 0;
}
