/*
 * timefmt: wall-clock times as the API writes them (RFC 3339, UTC,
 * milliseconds) and back, and short ages for tables ("3m", "2h", "5d").
 */
#ifndef UTIL_TIMEFMT_H
#define UTIL_TIMEFMT_H

#include <stddef.h>
#include <stdint.h>

#define TIMEFMT_RFC3339_LEN 80 /* room for any int fields, as snprintf checks */

/* Milliseconds since the epoch, now. */
int64_t time_now_ms(void);
/* "2026-11-29T15:04:05.123Z" */
void time_rfc3339(int64_t unix_ms, char buf[TIMEFMT_RFC3339_LEN]);
/* Parses RFC 3339 (Z or ±hh:mm offsets); returns -1 when s is not one. */
int64_t time_parse_rfc3339(const char *s);
/*
 * A time as trainjob prints it, whatever the backend wrote (trainjobd's
 * milliseconds, Slurm's seconds, an offset): RFC 3339 in UTC to the second,
 * "2026-11-29T15:04:05Z", one width in every column. Text that is not RFC
 * 3339 is copied as it is (cut to the buffer).
 */
void time_shown(const char *rfc3339, char buf[TIMEFMT_RFC3339_LEN]);
/* A short age: "12s", "3m", "2h", "5d", "1y". */
void time_age(int64_t ms, char *buf, size_t size);

#endif
