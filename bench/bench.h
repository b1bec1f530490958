/*
 * bench: what every benchmark measures with — a monotonic clock, quantiles
 * of samples, the user-space instruction counter (perf_event; absent where
 * the kernel forbids it, and then said as n/a), and a field of a process's
 * /proc files. Header-only: each benchmark is one file and links the library.
 */
#ifndef BENCH_BENCH_H
#define BENCH_BENCH_H

#include <errno.h>
#include <ftw.h>
#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "util/strbuf.h"

static inline int bench_remove_entry(const char *path, const struct stat *st, int flag,
                                     struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    if (remove(path) != 0)
        fprintf(stderr, "bench: removing %s: %s\n", path, strerror(errno));
    return 0;
}

/* Removes dir and all below it, symlinks not followed (a benchmark's scratch tree). */
static inline void bench_remove_tree(const char *dir)
{
    nftw(dir, bench_remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Nanoseconds on the monotonic clock. */
static inline double bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static inline int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The q-quantile (nearest rank) of n samples; sorts them. */
static inline double bench_quantile(double *v, size_t n, double q)
{
    qsort(v, n, sizeof *v, bench_cmp_double);
    size_t rank = (size_t)(q * (double)n + 0.999999);
    if (rank < 1)
        rank = 1;
    return v[rank > n ? n - 1 : rank - 1];
}

/* A counter of this thread's user-space instructions, or -1 when not allowed. */
static inline int bench_counter_open(void)
{
    struct perf_event_attr pe;
    memset(&pe, 0, sizeof pe);
    pe.type = PERF_TYPE_HARDWARE;
    pe.size = sizeof pe;
    pe.config = PERF_COUNT_HW_INSTRUCTIONS;
    pe.disabled = 1;
    pe.exclude_kernel = 1;
    pe.exclude_hv = 1;
    return (int)syscall(SYS_perf_event_open, &pe, 0, -1, -1, 0);
}

static inline void bench_counter_start(int fd)
{
    if (fd < 0)
        return;
    ioctl(fd, PERF_EVENT_IOC_RESET, 0);
    ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
}

/* Instructions since bench_counter_start (-1 without a counter). */
static inline double bench_counter_stop(int fd)
{
    long long count = 0;
    if (fd < 0)
        return -1;
    ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
    if (read(fd, &count, sizeof count) != (ssize_t)sizeof count)
        return -1;
    return (double)count;
}

/* The number after key ("VmRSS:", "Pss:") in /proc/PID/FILE ("status", "smaps_rollup"), or -1. */
static inline long bench_proc_field(pid_t pid, const char *file, const char *key)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, file);
    FILE *f = fopen(path, "r");
    long v = -1;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, key, strlen(key)) == 0)
            v = atol(line + strlen(key));
    if (f)
        fclose(f);
    return v;
}

/*
 * htop's RSS in kB on a rows x cols pty, once it has drawn its first frame
 * and refreshed once (the memory reference of `make bench`); -1 when htop is
 * not installed or does not draw. HOME and the XDG_* directories point into
 * home, so htop reads and writes no settings of the user's.
 */
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/wait.h>

/*
 * Reads the pty fd (so the program on it never blocks writing) for up to ms,
 * keeping the last of it in seen, until want shows there (true). want NULL:
 * only drains, for the whole time (seen may then be NULL). False at the
 * end of the time, or when the pty is closed.
 */
static inline bool bench_pty_wait(int fd, int ms, const char *want, struct strbuf *seen)
{
    double end = bench_now_ns() + (double)ms * 1e6;
    char chunk[16384];
    while (bench_now_ns() < end) {
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, 50) <= 0)
            continue;
        ssize_t n = read(fd, chunk, sizeof chunk);
        if (n <= 0)
            return false;
        if (want == NULL)
            continue;
        strbuf_add(seen, chunk, (size_t)n);
        if (strstr(strbuf_str(seen), want))
            return true;
        if (seen->len > 65536) { /* keep the tail: want may straddle two reads */
            memmove(seen->buf, seen->buf + seen->len - 256, 256);
            strbuf_truncate(seen, 256);
        }
    }
    return false;
}

static inline long bench_htop_rss_kb(int rows, int cols, const char *home)
{
    struct winsize ws = {(unsigned short)rows, (unsigned short)cols, 0, 0};
    int master;
    pid_t pid = forkpty(&master, NULL, NULL, &ws);
    if (pid == 0) {
        setenv("HOME", home, 1);
        setenv("XDG_CONFIG_HOME", home, 1);
        setenv("XDG_STATE_HOME", home, 1);
        setenv("XDG_DATA_HOME", home, 1);
        setenv("XDG_CACHE_HOME", home, 1);
        setenv("TERM", "xterm-256color", 1);
        setenv("LC_ALL", "C.UTF-8", 1);
        execlp("htop", "htop", (char *)NULL);
        _exit(127);
    }
    if (pid < 0)
        return -1;
    char buf[8192], tail[16] = "";
    bool drawn = false;
    double end = bench_now_ns() + 5e9;
    while (!drawn && bench_now_ns() < end) {
        struct pollfd p = {master, POLLIN, 0};
        if (poll(&p, 1, 100) <= 0)
            continue;
        ssize_t n = read(master, buf, sizeof buf - 1);
        if (n <= 0)
            break;
        buf[n] = '\0';
        /* "Quit" on the function-key bar, maybe cut between two reads. */
        char joined[32];
        snprintf(joined, sizeof joined, "%s%.8s", tail, buf);
        drawn = strstr(buf, "Quit") || strstr(joined, "Quit");
        size_t keep = n >= 8 ? 8 : (size_t)n;
        memcpy(tail, buf + n - (ssize_t)keep, keep);
        tail[keep] = '\0';
    }
    long kb = -1;
    if (drawn) {
        usleep(1500000); /* one refresh of its process list (every 1.5 s) */
        struct pollfd p = {master, POLLIN, 0};
        while (poll(&p, 1, 0) > 0 && read(master, buf, sizeof buf) > 0)
            ;
        kb = bench_proc_field(pid, "status", "VmRSS:");
    }
    kill(pid, SIGTERM);
    waitpid(pid, NULL, 0);
    close(master);
    return kb;
}

/*
 * An off-screen terminal whose output is counted: curses writes to a memfd
 * (ncurses writes to the descriptor, not through stdio), so the bytes of a
 * frame are the file's growth. bench_term_bytes() is the total so far.
 */
#include <curses.h>
#include <sys/mman.h>

struct bench_term {
    FILE *out, *in;
    SCREEN *screen;
};

/* A lines x cols terminal (newterm on a file would otherwise be 80x24 and show a part). */
static inline SCREEN *bench_term_open(struct bench_term *t, int lines, int cols)
{
    int fd = memfd_create("bench-term", MFD_CLOEXEC);
    t->out = fd >= 0 ? fdopen(fd, "w") : NULL;
    t->in = fopen("/dev/null", "r");
    t->screen = t->out && t->in ? newterm("xterm-256color", t->out, t->in) : NULL;
    if (t->screen && resizeterm(lines, cols) != OK)
        t->screen = NULL;
    return t->screen;
}

static inline double bench_term_bytes(const struct bench_term *t)
{
    fflush(t->out);
    return (double)lseek(fileno(t->out), 0, SEEK_END);
}

/* Makes the next doupdate repaint the whole screen, as after a resize or ^L. */
static inline void bench_term_force_repaint(void)
{
    clearok(curscr, TRUE);
}

static inline void bench_term_close(struct bench_term *t)
{
    endwin();
    delscreen(t->screen);
    fclose(t->out);
    fclose(t->in);
}

#endif
