/*
 * procstat: parses /proc/<pid>/stat (proc(5)). The command name, field 2,
 * may hold spaces and parentheses of the process's own choosing, so the
 * numeric fields are found after the *last* ')'.
 */
#include "util/procstat.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Reads the decimal field at *p and moves *p past it and its space. */
static int field(char **p, unsigned long long *v)
{
    char *end;
    errno = 0;
    *v = strtoull(*p, &end, 10);
    if (errno || end == *p || (*end != ' ' && *end != '\n' && *end != '\0'))
        return -1;
    *p = *end == ' ' ? end + 1 : end;
    return 0;
}

/* Moves *p past n space-separated fields. */
static int skip(char **p, int n)
{
    for (int i = 0; i < n; i++) {
        char *sp = strchr(*p, ' ');
        if (!sp)
            return -1;
        *p = sp + 1;
    }
    return 0;
}

int procstat_read(pid_t pid, struct procstat *out)
{
    char path[64], buf[1024];
    if (pid <= 0)
        return -1;
    snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    char *p = strrchr(buf, ')');
    if (!p || p[1] != ' ' || !p[2])
        return -1;
    p += 2;
    unsigned long long ppid, pgrp, ut, st, cut, cst, ticks;
    out->state = *p;
    if (skip(&p, 1) != 0 || field(&p, &ppid) != 0 || field(&p, &pgrp) != 0 ||
        skip(&p, 14 - 6) != 0 || field(&p, &ut) != 0 || field(&p, &st) != 0 ||
        field(&p, &cut) != 0 || field(&p, &cst) != 0 || skip(&p, 22 - 18) != 0 ||
        field(&p, &ticks) != 0)
        return -1;
    out->ppid = (pid_t)ppid;
    out->pgrp = (pid_t)pgrp;
    out->utime_ticks = ut;
    out->stime_ticks = st;
    out->cutime_ticks = cut;
    out->cstime_ticks = cst;
    out->start_ticks = ticks;
    return 0;
}

int procstat_cpu_ms(pid_t pid, double *self_ms, double *children_ms)
{
    struct procstat ps;
    if (procstat_read(pid, &ps) != 0)
        return -1;
    double ms_per_tick = 1000.0 / (double)sysconf(_SC_CLK_TCK);
    /* The process's own CPU clock counts every thread's time (the ended
     * threads' too) in ns; the fields of stat round it to clock ticks. */
    clockid_t clock;
    struct timespec ts;
    if (clock_getcpuclockid(pid, &clock) == 0 && clock_gettime(clock, &ts) == 0)
        *self_ms = (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
    else
        *self_ms = (double)(ps.utime_ticks + ps.stime_ticks) * ms_per_tick;
    if (children_ms)
        *children_ms = (double)(ps.cutime_ticks + ps.cstime_ticks) * ms_per_tick;
    return 0;
}
