/*
 * jobfmt: how the monitoring screens write a job's facts — a state as its
 * theme role and icon ("✗ FAILED" reads without colour), an age, restarts
 * as "used/limit". Shared by every pane so a state looks the same
 * everywhere.
 */
#ifndef TUI_JOBFMT_H
#define TUI_JOBFMT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/jobspec.h"
#include "themes/theme.h"

/* The theme role a job state is drawn in. */
enum theme_role jobfmt_state_role(enum job_state s);
/*
 * "✗ FAILED" (utf8) or "x FAILED" into buf; a state this build does not
 * know (other, the server's word: PREEMPTED) as "? PREEMPTED", cleaned as
 * jobfmt_other does.
 */
void jobfmt_state(enum job_state s, const char *other, bool utf8, char *buf, size_t size);

#define JOBFMT_OTHER_WIDTH 24 /* cells of a server's word for a value this build does not know */
/*
 * A server's word for an enum value this build does not know into buf:
 * sanitized (no control or escape sequence reaches the terminal) and cut
 * to JOBFMT_OTHER_WIDTH cells, "…" ("~" in ASCII) saying it was.
 */
void jobfmt_other(const char *other, bool utf8, char *buf, size_t size);
/* "3m" since unix ms (< 0: "-"). */
void jobfmt_age(int64_t since_ms, int64_t now_ms, char *buf, size_t size);
/*
 * DURATION: how long the job has run — from its last start to its end, or
 * to now while it runs (ended_ms -1); -1 when it never started or ended at a
 * time not told (ended_ms < -1).
 */
int64_t jobfmt_duration_ms(int64_t started_ms, int64_t ended_ms, int64_t now_ms);
/* The same as text ("3m", "2h"), "-" when it never started. */
void jobfmt_duration(int64_t started_ms, int64_t ended_ms, int64_t now_ms, char *buf, size_t size);
/* "1/2", "0/∞" ("0/inf" in ASCII), "-/2" when used is unknown (< 0). */
void jobfmt_restarts(int32_t used, int32_t limit, bool utf8, char *buf, size_t size);

#endif
