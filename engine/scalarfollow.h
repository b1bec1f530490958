/*
 * scalarfollow: one client following a job's TensorBoard scalars
 * (GET …/trainingJobs/{name}/scalars?follow=true).
 *
 * The reply is NDJSON: one line per page, each the JSON of a page of the
 * non-follow reply (api/scalarpage.h), and a last line {"end": REASON,
 * "message": …} before the stream closes. REASON is "ended" (the job ended
 * and everything it wrote has been sent), "watch_limit" (the log directory
 * has more directories than one follower watches: poll with since= instead)
 * or "error" (the directory became unreadable).
 *
 * The follower holds the log directory (an O_PATH descriptor util/beneath
 * gave), a tfevents reader on it, and its own inotify instance watching the
 * directory and every directory below it (new runs, new event files,
 * appends). inotify only wakes it: what is read is what api/tfevents finds
 * walking from the held descriptor with O_NOFOLLOW on every component, so a
 * run directory swapped for a symlink is never read through (and is never
 * watched: the watch walk opens directories the same way).
 *
 * Pages are read in the stream's refill, when the client has drained its
 * queue: an inotify event only marks the follower dirty, and the next page
 * takes everything written since the last one (up to SCALARFOLLOW_PAGE
 * bytes of event files). A slow client thus gets pages coalesced; the
 * engine holds at most one page per client. The first page is sent at once
 * even when empty (the client learns the cursor and that the stream is up);
 * later ones only when something was read.
 *
 * engine/scalars.c opens it; engine_end_followers (queries.c) tells it the
 * job ended; the stream's end (the client gone, engine/http.c) frees it,
 * its inotify instance and watches with it.
 */
#ifndef ENGINE_SCALARFOLLOW_H
#define ENGINE_SCALARFOLLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct engine;
struct loop;
struct strbuf;
struct stream;

#define SCALARFOLLOW_PAGE (256u << 10)   /* bytes of event files read per page at most */
#define SCALARFOLLOW_MAX_JSON (2u << 20) /* JSON of one page's points (then dropped) */
#define SCALARFOLLOW_MAX_WATCHES 256     /* directories one follower watches */
#define SCALARFOLLOW_MAX_CLIENTS 64      /* followers at once, engine-wide */

struct scalarfollow_start {
    const char *uid;      /* the job's: engine_end_followers matches on it */
    const char *log_path; /* as the job names it (the pages say it) */
    const char *root;     /* the volume's host directory */
    const char *below;    /* the path below root (mount subdir + the rest) */
    const char *since;    /* a cursor to resume from (NULL / "": the start) */
    bool ended;           /* the job has ended already */
    uint64_t page_bytes;  /* bytes of event files per page (0: SCALARFOLLOW_PAGE) */
    size_t max_watches;   /* 0: SCALARFOLLOW_MAX_WATCHES */
    unsigned chart;       /* > 0: pages of the points a chart of so many buckets keeps */
};

/* Why scalarfollow_open gave no stream. */
enum scalarfollow_refusal {
    SCALARFOLLOW_BAD_CURSOR, /* since is not a cursor (the client's 400) */
    SCALARFOLLOW_REFUSED,    /* the directory: a symlink, not a directory (403) */
    SCALARFOLLOW_NO_INOTIFY, /* no inotify instance to be had (the user's limit: 503) */
};

/*
 * Opens a follower as a stream; NULL with *why and err saying why. A
 * directory that does not exist yet is looked for again whenever an entry
 * is made on the way down to it (the volume's directory and below).
 */
struct stream *scalarfollow_open(struct loop *lp, const struct scalarfollow_start *how,
                                 enum scalarfollow_refusal *why, struct strbuf *err);
/* Is s a scalar follower of the job with this uid (still running)? */
bool scalarfollow_of(struct stream *s, const char *uid);
/* The job ended: the follower sends what is left, then its last line. */
void scalarfollow_job_ended(struct stream *s);
/* Directories watched now (tests). */
size_t scalarfollow_watch_count(struct stream *s);
/* Reads inotify events now instead of from the loop (tests); true when some were read. */
bool scalarfollow_drain_events(struct stream *s);

#endif
