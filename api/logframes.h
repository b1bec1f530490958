/*
 * logframes: the client side of a framed log stream (trainjobd's
 * engine/logfollow.h): P <inode> <offset>, D <length> + bytes, S <bytes>,
 * E. With times, T <ms> (the time the next data was written) and C
 * (caught up) too. It hands the log bytes on, says where the next one is (the cursor a
 * reconnect resumes from) and whether the log is complete. cmd_jobs.c's
 * `logs -f` feeds it what arrives.
 */
#ifndef API_LOGFRAMES_H
#define API_LOGFRAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/strbuf.h"

/* Log bytes, or (skipped != 0 or unknown) a gap; returns non-zero to stop. */
typedef int (*logframes_data_fn)(void *ctx, const char *data, size_t len);
typedef int (*logframes_skip_fn)(void *ctx, uint64_t bytes); /* 0: an amount not known */

struct logframes {
    logframes_data_fn data;
    logframes_skip_fn skip;
    void *ctx;
    struct strbuf head; /* a frame header being read */
    uint64_t data_left; /* bytes of the current D frame still to come */
    bool have_position; /* a P frame was seen */
    uintmax_t inode;    /* the position of the next log byte */
    uintmax_t offset;
    bool ended;     /* E: the log is complete */
    bool have_time; /* a T frame was seen: time_ms is the time of the data that follows */
    uint64_t time_ms;
    bool caught_up;    /* C, and no data since: all the log had then was sent */
    bool broken;       /* a frame it could not read: the stream is not trainjobd's */
    uint64_t received; /* bytes fed, frames and all */
};

void logframes_init(struct logframes *lf, logframes_data_fn data, logframes_skip_fn skip,
                    void *ctx);
void logframes_free(struct logframes *lf);
/* Feeds what arrived; returns non-zero when a callback asked to stop or a frame is broken. */
int logframes_feed(struct logframes *lf, const char *p, size_t n);
/* "<inode>:<offset>" of the next byte into buf (size ≥ 48); false before any P frame. */
bool logframes_cursor(const struct logframes *lf, char *buf, size_t size);
/* A new connection: a frame cut short by the old one is dropped. */
void logframes_reset_stream(struct logframes *lf);

#endif
