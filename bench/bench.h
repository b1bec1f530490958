/*
 * bench: what every benchmark measures with — a monotonic clock, quantiles
 * of samples, the user-space instruction counter (perf_event; absent where
 * the kernel forbids it, and then said as n/a), and a field of a process's
 * /proc files. Header-only: each benchmark is one file and links the library.
 */
#ifndef BENCH_BENCH_H
#define BENCH_BENCH_H

#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

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

#endif
