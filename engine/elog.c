/*
 * elog: see elog.h. One fprintf per piece: stderr is unbuffered, and a
 * line is short.
 */
#include "engine/elog.h"

#include <stdarg.h>
#include <stdio.h>

#include "util/timefmt.h"

void engine_log(const char *fmt, ...)
{
    char stamp[TIMEFMT_RFC3339_LEN];
    time_rfc3339(time_now_ms(), stamp);
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s trainjobd: ", stamp);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}
