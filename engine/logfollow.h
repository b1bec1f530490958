/*
 * logfollow: one client following one worker log (GET …/logs?follow=true).
 *
 * The follower holds the log file open and reads it as the client drains
 * its stream (a stream refill), so a fast log is never cut at the stream's
 * cap and memory stays bounded. When the shim rotates the log (FILE becomes
 * FILE.1, a new FILE starts), the follower finishes the file it holds, reads
 * FILE.1 if that is a generation it has not seen, then FILE; generations
 * that went by unread are reported in the stream as "… N MiB skipped …".
 *
 * In framed mode (the CLI's `logs -f`) the stream says where each byte comes
 * from, so a client can reconnect after an engine restart and continue
 * exactly where it was:
 *
 *   P <inode> <offset>\n   the position in the log of the next data byte
 *   D <length>\n<bytes>    log data
 *   S <bytes>\n            that many bytes went by unread
 *   E\n                    the log is complete (the worker has ended)
 *
 * With times (the job screen), two more frames, from the shim's time index
 * (util/logindex.h; a log without a usable one has none):
 *
 *   T <ms>\n               the next data was written at this wall-clock time
 *                         (ms since the epoch); D frames are cut where it changes
 *   C\n                    caught up: all there is now was sent
 *
 * A stream that ends without E was interrupted. Owned by its stream (freed
 * with it); engine/queries.c keeps the stream in eng->followers, engine.c
 * (inotify) tells the follower about rotations and engine_end_followers
 * about the worker's end.
 */
#ifndef ENGINE_LOGFOLLOW_H
#define ENGINE_LOGFOLLOW_H

#include <stdbool.h>
#include <stddef.h>

struct stream;
struct strbuf;

struct logfollow_start {
    const char *path; /* the worker's log, FILE */
    long tail;        /* the last lines of FILE first (< 0: the whole log, FILE.1 then FILE) */
    bool framed;
    const char *from; /* framed: "<inode>:<offset>" to continue from, or NULL */
    size_t cap;       /* the shim's rotation size: an unread generation is this long */
    bool follow;      /* false: what is there now, then the end */
    bool times;       /* framed: T frames from the shim's time index (FILE.idx) */
};

/* A stream that serves the log as described; NULL with why in err (a log not there). */
struct stream *logfollow_open(const struct logfollow_start *how, struct strbuf *err);
/* Does this follower's log have the file name base (FILE or FILE.1)? */
bool logfollow_matches(struct stream *s, const char *base);
/* Is this the log of a job whose uid + "." is prefix? */
bool logfollow_matches_job(struct stream *s, const char *prefix);
/* The log was rotated (FILE.1 appeared): counts a generation. */
void logfollow_rotated(struct stream *s);
/* The worker wrote more, or ended (ended: true): the reader is woken. */
void logfollow_poke(struct stream *s, bool ended);

#endif
