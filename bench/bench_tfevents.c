/*
 * bench_tfevents: the cost of reading TensorBoard event files (api/tfevents,
 * api/metricset), as issue 13 asks:
 *   - a 100 MB event file (~2.4 M simple_value scalars, 4 tags) read from
 *     cold (its pages dropped from the page cache with posix_fadvise before
 *     each run), in MB/s, next to `cat FILE >/dev/null` of the same file
 *     dropped the same way (the physical floor), and both again warm;
 *   - one poll that picks up 1,000 records appended to that 100 MB file;
 *   - the VmRSS of a separate process (this program re-run as a follower)
 *     that follows 10 runs x 20 tags into a metricset while the steps grow.
 *     1 M steps would be 200 M records (~9 GB); the box has neither the disk
 *     nor the time, so it is scaled to STEPS_RSS steps, written in rounds of
 *     fresh files (the read ones deleted), and the RSS is printed after each
 *     tenth of the way: it is flat once the buckets are full, which is what
 *     makes the 1 M-step figure the same;
 *   - two records around a 100 GiB hole of a sparse file, read in 8 MiB polls.
 * Medians of RUNS runs. The scratch files live in a temporary directory
 * under $TMPDIR (or /tmp) and are removed at the end.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "api/metricset.h"
#include "api/tfevents.h"
#include "bench/bench.h"
#include "engine/scalarfollow.h"
#include "engine/stream.h"
#include "util/loop.h"
#include "util/strbuf.h"

#define FILE_MB 100
#define RUNS 5
#define INCR_RUNS 21
#define INCR_RECORDS 1000
#define RSS_RUNS 10
#define RSS_TAGS 20
#define STEPS_RSS 100000
#define STEPS_ROUND 10000
#define PUSH_RUNS 51 /* appends timed through the push stream */
#define PUSH_IDLE_MS 2000

static const char *tags4[] = {"train/loss", "train/lr", "eval/accuracy", "grad_norm"};

static void row(const char *what, const char *value, const char *target)
{
    printf("| %-52s | %18s | %-24s |\n", what, value, target);
}

static void rowf(const char *what, const char *target, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void rowf(const char *what, const char *target, const char *fmt, ...)
{
    char buf[64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    row(what, buf, target);
}

static void die(const char *what)
{
    fprintf(stderr, "bench_tfevents: %s: %s\n", what, strerror(errno));
    exit(1);
}

static void write_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n > 0) {
        ssize_t k = write(fd, c, n);
        if (k <= 0)
            die("write");
        c += k;
        n -= (size_t)k;
    }
}

/* Appends records for steps [from, to) of tags to fd, 1 MB at a time. */
static uint64_t write_steps(int fd, int64_t from, int64_t to, const char **tags, int ntags)
{
    struct strbuf sb = STRBUF_INIT;
    uint64_t records = 0;
    for (int64_t s = from; s < to; s++) {
        for (int t = 0; t < ntags; t++, records++)
            tfevents_write_simple(&sb, s, 1.7e9 + (double)s * 0.1, tags[t],
                                  (float)(1.0 / (1.0 + (double)s) + t));
        if (sb.len >= (1u << 20)) {
            write_all(fd, sb.buf, sb.len);
            strbuf_reset(&sb);
        }
    }
    write_all(fd, sb.buf, sb.len);
    strbuf_free(&sb);
    return records;
}

static void drop_cache(const char *path)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        die(path);
    fdatasync(fd);
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    close(fd);
}

/* Seconds `cat path >/dev/null` takes; *cpu gets the CPU seconds it used (user + system). */
static double time_cat(const char *path, double *cpu)
{
    double t0 = bench_now_ns();
    pid_t pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        dup2(null, 1);
        execlp("cat", "cat", path, (char *)NULL);
        _exit(127);
    }
    int st;
    struct rusage ru;
    wait4(pid, &st, 0, &ru);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        return -1;
    *cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
    return (bench_now_ns() - t0) / 1e9;
}

static void count(void *ctx, const struct tfevents_scalar *s)
{
    (void)s;
    (*(uint64_t *)ctx)++;
}

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Seconds a fresh follower takes to read everything below dir (*cpu: CPU seconds). */
static double time_read(const char *dir, uint64_t *scalars, double *cpu)
{
    struct strbuf err = STRBUF_INIT;
    double t0 = bench_now_ns(), c0 = cpu_now();
    struct tfevents_dir *d = tfevents_open(dir, &err);
    if (d == NULL) {
        fprintf(stderr, "bench_tfevents: %s\n", strbuf_str(&err));
        exit(1);
    }
    *scalars = 0;
    if (tfevents_poll(d, NULL, count, scalars, NULL, &err) != 0)
        exit(1);
    double dt = (bench_now_ns() - t0) / 1e9;
    *cpu = cpu_now() - c0;
    tfevents_close(d);
    strbuf_free(&err);
    return dt;
}

static void remove_tree(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return;
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        struct dirent *e;
        while (d && (e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            char child[4096];
            snprintf(child, sizeof child, "%s/%s", path, e->d_name);
            remove_tree(child);
        }
        if (d)
            closedir(d);
        rmdir(path);
    } else {
        unlink(path);
    }
}

/* ---- the follower process for the RSS figure ---- */

struct feed {
    struct metricset *ms;
};

static void to_metricset(void *ctx, const struct tfevents_scalar *s)
{
    metricset_add(ctx, s->run, s->tag, s->step, s->wall_time, s->value);
}

/*
 * Follows dir: for each line on stdin, polls until caught up and answers
 * "<VmRSS kB> <scalars so far> <metricset bytes>" on stdout.
 */
static int follower(const char *dir)
{
    struct strbuf err = STRBUF_INIT;
    struct tfevents_dir *d = tfevents_open(dir, &err);
    if (d == NULL)
        return 1;
    struct metricset *ms = metricset_new(0, 0);
    char line[64];
    while (fgets(line, sizeof line, stdin)) {
        struct tfevents_poll_result r;
        do {
            if (tfevents_poll(d, NULL, to_metricset, ms, &r, &err) != 0)
                return 1;
        } while (r.bytes > 0);
        printf("%ld %" PRIu64 " %zu\n", bench_proc_field(getpid(), "status", "VmRSS:"),
               tfevents_stats(d)->scalars, metricset_memory(ms));
        fflush(stdout);
    }
    metricset_free(ms);
    tfevents_close(d);
    return 0;
}

/* Reads what the stream has now into a scratch buffer; the bytes read. */
static size_t take(struct stream *s)
{
    static char buf[65536];
    size_t n, all = 0;
    while ((n = stream_read(s, buf, sizeof buf)) > 0)
        all += n;
    return all;
}

struct push_figures {
    double median_us, p99_us; /* append -> the page read out of the stream */
    int idle_wakeups;         /* loop turns in PUSH_IDLE_MS with nothing written */
    double idle_cpu_ms;
};

/*
 * The push stream of engine/scalarfollow in this process, as trainjobd runs
 * it: its inotify instance on the loop, a page read when the client drains.
 * Each run appends one record, waits in the loop for the wake-up, and reads
 * the page out of the stream (what the HTTP side hands the client).
 */
static void push_stream(const char *root, struct push_figures *fig)
{
    char dir[4200], file[4300];
    snprintf(dir, sizeof dir, "%s/push", root);
    mkdir(dir, 0755);
    snprintf(dir, sizeof dir, "%s/push/tb", root);
    mkdir(dir, 0755);
    snprintf(file, sizeof file, "%s/events.out.tfevents.1.push", dir);
    int fd = open(file, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd < 0)
        die(file);
    char base[4200];
    snprintf(base, sizeof base, "%s/push", root);
    struct loop *lp = loop_new();
    struct scalarfollow_start how = {"bench", "/mnt/tb", base, "tb", NULL, false, 0, 0, 0};
    struct strbuf err = STRBUF_INIT;
    enum scalarfollow_refusal why;
    struct stream *s = scalarfollow_open(lp, &how, &why, &err);
    if (s == NULL) {
        fprintf(stderr, "bench_tfevents: push: %s\n", strbuf_str(&err));
        exit(1);
    }
    take(s); /* the first page */
    double lat[PUSH_RUNS];
    for (int i = 0; i < PUSH_RUNS; i++) {
        double t0 = bench_now_ns();
        write_steps(fd, i, i + 1, tags4, 1);
        size_t got = 0;
        for (int turn = 0; turn < 100 && got == 0; turn++) {
            loop_run_once(lp, 1000);
            got = take(s);
        }
        lat[i] = (bench_now_ns() - t0) / 1e3;
        if (got == 0) {
            fprintf(stderr, "bench_tfevents: push: no page after an append\n");
            exit(1);
        }
    }
    fig->median_us = bench_quantile(lat, PUSH_RUNS, 0.5);
    fig->p99_us = bench_quantile(lat, PUSH_RUNS, 0.99);
    /* idle: nothing written; every loop turn that returns is a wake-up */
    double c0 = cpu_now(), t0 = bench_now_ns();
    fig->idle_wakeups = 0;
    while ((bench_now_ns() - t0) / 1e6 < PUSH_IDLE_MS) {
        int left = PUSH_IDLE_MS - (int)((bench_now_ns() - t0) / 1e6);
        loop_run_once(lp, left > 0 ? left : 1);
        if ((bench_now_ns() - t0) / 1e6 < PUSH_IDLE_MS - 1)
            fig->idle_wakeups++;
        take(s);
    }
    fig->idle_cpu_ms = (cpu_now() - c0) * 1e3;
    stream_abandon(s);
    stream_unref(s);
    loop_free(lp);
    close(fd);
    strbuf_free(&err);
}

#define SPARSE_GIB 100
#define SPARSE_MAX_POLLS 256

struct sparse_figures {
    int found, polls;
    double ms;
};

/* Two records around a SPARSE_GIB hole, read the way the CLI pages a log directory. */
static void sparse_hole(const char *root, struct sparse_figures *out)
{
    char dir[4200], file[4300];
    snprintf(dir, sizeof dir, "%s/sparse", root);
    mkdir(dir, 0755);
    snprintf(file, sizeof file, "%s/events.out.tfevents.1.bench", dir);
    struct strbuf a = STRBUF_INIT, b = STRBUF_INIT, err = STRBUF_INIT;
    tfevents_write_simple(&a, 1, 1, "loss", 1.0f);
    tfevents_write_simple(&b, 2, 2, "loss", 2.0f);
    int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    off_t hole = (off_t)SPARSE_GIB << 30;
    if (fd < 0 || write(fd, a.buf, a.len) != (ssize_t)a.len ||
        pwrite(fd, b.buf, b.len, hole) != (ssize_t)b.len)
        die(file);
    close(fd);
    struct tfevents_dir *d = tfevents_open(dir, &err);
    struct tfevents_limit lim = {8u << 20, 0};
    struct tfevents_poll_result r;
    uint64_t n = 0;
    out->polls = 0;
    double t0 = bench_now_ns();
    do {
        r.more = false;
        if (d == NULL || tfevents_poll(d, &lim, count, &n, &r, &err) != 0)
            break;
    } while (r.more && ++out->polls < SPARSE_MAX_POLLS);
    out->ms = (bench_now_ns() - t0) / 1e6;
    out->found = (int)n;
    tfevents_close(d);
    strbuf_free(&a);
    strbuf_free(&b);
    strbuf_free(&err);
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--follow") == 0)
        return follower(argv[2]);

    const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char root[4096];
    snprintf(root, sizeof root, "%s/bench_tfevents.XXXXXX", tmp);
    if (mkdtemp(root) == NULL)
        die("mkdtemp");

    /* ---- 100 MB, cold and warm ---- */
    char big_dir[4200], big[4300];
    snprintf(big_dir, sizeof big_dir, "%s/big", root);
    mkdir(big_dir, 0755);
    snprintf(big, sizeof big, "%s/events.out.tfevents.1700000000.bench", big_dir);
    int fd = open(big, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        die(big);
    uint64_t records = 0;
    int64_t step = 0;
    struct stat st;
    while (fstat(fd, &st) == 0 && st.st_size < (off_t)FILE_MB * 1000 * 1000) {
        records += write_steps(fd, step, step + 10000, tags4, 4);
        step += 10000;
    }
    close(fd);
    double mb = (double)st.st_size / 1e6;

    double cat_cold[RUNS], read_cold[RUNS], cat_warm[RUNS], read_warm[RUNS];
    double cat_cpu[2 * RUNS], read_cpu[2 * RUNS], cpu = 0;
    uint64_t scalars = 0;
    for (int i = 0; i < RUNS; i++) {
        drop_cache(big);
        cat_cold[i] = mb / time_cat(big, &cpu);
        cat_cpu[2 * i] = mb / cpu;
        drop_cache(big);
        read_cold[i] = mb / time_read(big_dir, &scalars, &cpu);
        read_cpu[2 * i] = mb / cpu;
        if (scalars != records) {
            fprintf(stderr, "bench_tfevents: read %" PRIu64 " of %" PRIu64 " scalars\n", scalars,
                    records);
            return 1;
        }
        cat_warm[i] = mb / time_cat(big, &cpu);
        cat_cpu[2 * i + 1] = mb / cpu;
        read_warm[i] = mb / time_read(big_dir, &scalars, &cpu);
        read_cpu[2 * i + 1] = mb / cpu;
    }
    double cc = bench_quantile(cat_cold, RUNS, 0.5), rc = bench_quantile(read_cold, RUNS, 0.5);
    double cw = bench_quantile(cat_warm, RUNS, 0.5), rw = bench_quantile(read_warm, RUNS, 0.5);
    double ccpu = bench_quantile(cat_cpu, 2 * RUNS, 0.5);
    double rcpu = bench_quantile(read_cpu, 2 * RUNS, 0.5);

    /* ---- 1,000 records appended to the 100 MB file ---- */
    struct strbuf err = STRBUF_INIT;
    struct tfevents_dir *d = tfevents_open(big_dir, &err);
    uint64_t n = 0;
    tfevents_poll(d, NULL, count, &n, NULL, &err);
    double incr[INCR_RUNS];
    for (int i = 0; i < INCR_RUNS; i++) {
        fd = open(big, O_WRONLY | O_APPEND);
        write_steps(fd, step, step + INCR_RECORDS / 4, tags4, 4);
        step += INCR_RECORDS / 4;
        close(fd);
        n = 0;
        double t0 = bench_now_ns();
        tfevents_poll(d, NULL, count, &n, NULL, &err);
        incr[i] = (bench_now_ns() - t0) / 1e6;
        if (n != INCR_RECORDS) {
            fprintf(stderr, "bench_tfevents: the poll found %" PRIu64 " new scalars\n", n);
            return 1;
        }
    }
    double incr_ms = bench_quantile(incr, INCR_RUNS, 0.5);
    double incr_p99 = bench_quantile(incr, INCR_RUNS, 0.99);
    n = 0;
    double t0 = bench_now_ns();
    tfevents_poll(d, NULL, count, &n, NULL, &err);
    double idle_us = (bench_now_ns() - t0) / 1e3;
    tfevents_close(d);
    remove_tree(big_dir);

    /* ---- RSS of a follower of 10 runs x 20 tags ---- */
    char logs[4200];
    snprintf(logs, sizeof logs, "%s/logs", root);
    mkdir(logs, 0755);
    const char *tags20[RSS_TAGS];
    char tagbuf[RSS_TAGS][32];
    for (int t = 0; t < RSS_TAGS; t++) {
        snprintf(tagbuf[t], sizeof tagbuf[t], "metric/%02d", t);
        tags20[t] = tagbuf[t];
    }
    int to_child[2], from_child[2];
    if (pipe(to_child) || pipe(from_child))
        die("pipe");
    pid_t pid = fork();
    if (pid == 0) {
        dup2(to_child[0], 0);
        dup2(from_child[1], 1);
        close(to_child[1]);
        close(from_child[0]);
        execl("/proc/self/exe", argv[0], "--follow", logs, (char *)NULL);
        _exit(127);
    }
    close(to_child[0]);
    close(from_child[1]);
    FILE *ask = fdopen(to_child[1], "w"), *answer = fdopen(from_child[0], "r");
    long rss[STEPS_RSS / STEPS_ROUND + 1];
    size_t msmem[STEPS_RSS / STEPS_ROUND + 1];
    uint64_t seen = 0;
    int rounds = 0;
    double follow_s = 0;
    for (int64_t s = 0; s < STEPS_RSS; s += STEPS_ROUND, rounds++) {
        char path[4400];
        for (int r = 0; r < RSS_RUNS; r++) {
            snprintf(path, sizeof path, "%s/rank%d", logs, r);
            mkdir(path, 0755);
            snprintf(path, sizeof path, "%s/rank%d/events.out.tfevents.%010" PRId64 ".bench", logs,
                     r, s);
            fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
            write_steps(fd, s, s + STEPS_ROUND, tags20, RSS_TAGS);
            close(fd);
        }
        double f0 = bench_now_ns();
        fprintf(ask, "poll\n");
        fflush(ask);
        if (fscanf(answer, "%ld %" SCNu64 " %zu", &rss[rounds], &seen, &msmem[rounds]) != 3) {
            fprintf(stderr, "bench_tfevents: the follower did not answer\n");
            return 1;
        }
        follow_s += (bench_now_ns() - f0) / 1e9;
        for (int r = 0; r < RSS_RUNS; r++) { /* read: make room for the next round */
            snprintf(path, sizeof path, "%s/rank%d/events.out.tfevents.%010" PRId64 ".bench", logs,
                     r, s);
            unlink(path);
        }
    }
    fclose(ask);
    fclose(answer);
    waitpid(pid, NULL, 0);
    struct push_figures push;
    push_stream(root, &push);
    struct sparse_figures sparse;
    sparse_hole(root, &sparse);
    remove_tree(root);

    printf(
        "tfevents: a %.0f MB event file of %" PRIu64 " simple_value scalars (%d tags); "
        "median of %d runs; cold = pages dropped with posix_fadvise before each run;\n"
        "MB/s of wall-clock time depend on how busy the machine is; MB/s per CPU second do not\n",
        mb, records, 4, RUNS);
    printf("| %-52s | %18s | %-24s |\n", "measurement", "value", "target");
    printf("|%s|%s|%s|\n", "------------------------------------------------------",
           "--------------------", "--------------------------");
    rowf("cat FILE >/dev/null, cold", "the floor", "%.0f MB/s", cc);
    rowf("read all scalars, cold", ">= 25 % of cat", "%.0f MB/s (%.0f %%)", rc, 100 * rc / cc);
    rowf("cat FILE >/dev/null, warm", "", "%.0f MB/s", cw);
    rowf("read all scalars, warm", ">= 25 % of cat", "%.0f MB/s (%.0f %%)", rw, 100 * rw / cw);
    rowf("cat, per second of its CPU (user + system)", "", "%.0f MB/s", ccpu);
    rowf("read all scalars, per second of CPU", ">= 25 % of cat", "%.0f MB/s (%.0f %%)", rcpu,
         100 * rcpu / ccpu);
    rowf("read all scalars, warm (scalars/s)", "", "%.1f M/s",
         rw * 1e6 / (mb * 1e6 / records) / 1e6);
    rowf("poll: 1,000 records appended to the 100 MB file", "< 5 ms", "%.3f ms", incr_ms);
    rowf("  the same, p99 of 21", "", "%.3f ms", incr_p99);
    rowf("poll with nothing new", "", "%.0f µs", idle_us);
    printf("\nfollower RSS: %d runs x %d tags, %d steps each (%" PRIu64 " records; scaled from "
           "1 M steps, see the file's comment), VmRSS of the following process\n",
           RSS_RUNS, RSS_TAGS, STEPS_RSS, seen);
    printf("| %-52s | %18s | %-24s |\n", "measurement", "value", "target");
    printf("|%s|%s|%s|\n", "------------------------------------------------------",
           "--------------------", "--------------------------");
    for (int i = 0; i < rounds; i++) {
        char what[80];
        snprintf(what, sizeof what, "VmRSS after %d steps (metricset %.1f MiB)",
                 (i + 1) * STEPS_ROUND, (double)msmem[i] / 1048576.0);
        rowf(what, i == rounds - 1 ? "< 30 MB, flat" : "", "%.1f MiB", (double)rss[i] / 1024.0);
    }
    rowf("follow throughput (read + metricset)", "", "%.1f M records/s",
         (double)seen / follow_s / 1e6);
    printf("\npush stream (GET …/scalars?follow=true, engine/scalarfollow) in one process: "
           "%d appends of one record, each read out of the stream after the loop's wake-up\n",
           PUSH_RUNS);
    printf("| %-52s | %18s | %-24s |\n", "measurement", "value", "target");
    printf("|%s|%s|%s|\n", "------------------------------------------------------",
           "--------------------", "--------------------------");
    rowf("append -> page out of the stream, median", "", "%.0f µs", push.median_us);
    rowf("  the same, p99", "", "%.0f µs", push.p99_us);
    rowf("follow, nothing written for 2 s: loop wake-ups", "0", "%d", push.idle_wakeups);
    rowf("follow, nothing written for 2 s: CPU", "~0", "%.2f ms", push.idle_cpu_ms);
    printf("\nsparse event file: one record, a %d GiB hole (truncate -s), one record; read in "
           "polls of 8 MiB as `trainjob metrics --logdir` does, at most %d polls\n",
           SPARSE_GIB, SPARSE_MAX_POLLS);
    printf("| %-52s | %18s | %-24s |\n", "measurement", "value", "target");
    printf("|%s|%s|%s|\n", "------------------------------------------------------",
           "--------------------", "--------------------------");
    rowf("both records read", "yes", "%s", sparse.found == 2 ? "yes" : "no");
    rowf("polls", "", "%d", sparse.polls);
    rowf("time", "< 50 ms", "%.2f ms", sparse.ms);
    strbuf_free(&err);
    return 0;
}
