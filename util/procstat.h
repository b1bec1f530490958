/*
 * procstat: what /proc/<pid>/stat says of a process — enough to tell a
 * process we started from a stranger that later got the same number.
 *
 * Process numbers are reused (pid_max is often 32768), so a number saved
 * in a file is only a hint: engine/runner checks a saved worker group's
 * leader against the start time its shim recorded before it signals the
 * group, and the shim records that start time with this.
 */
#ifndef UTIL_PROCSTAT_H
#define UTIL_PROCSTAT_H

#include <stdint.h>
#include <sys/types.h>

struct procstat {
    char state;                          /* field 3: R, S, D, Z, X, … */
    pid_t ppid;                          /* field 4 */
    pid_t pgrp;                          /* field 5 */
    uint64_t utime_ticks, stime_ticks;   /* fields 14-15: CPU in user and kernel mode */
    uint64_t cutime_ticks, cstime_ticks; /* fields 16-17: of its waited-for children */
    uint64_t start_ticks;                /* field 22: clock ticks after boot */
};

/* Reads /proc/<pid>/stat into *out. Returns 0, or -1 when there is no such process. */
int procstat_read(pid_t pid, struct procstat *out);
/*
 * The CPU (user + kernel) pid has used, in ms, read from its CPU clock to the
 * µs (clock ticks of 10 ms only when that clock cannot be read), and that of
 * its waited-for children, in ticks (children_ms may be NULL). Returns 0, or
 * -1 with no such process.
 */
int procstat_cpu_ms(pid_t pid, double *self_ms, double *children_ms);

#endif
