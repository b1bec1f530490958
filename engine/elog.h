/*
 * elog: trainjobd's log lines (stderr, or trainjobd.log when detached),
 * time-stamped. Its own module so the parts the engine core uses (job
 * files, scalars) can log without using the core.
 */
#ifndef ENGINE_ELOG_H
#define ENGINE_ELOG_H

/* A line for the engine's log, time-stamped. */
void engine_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
