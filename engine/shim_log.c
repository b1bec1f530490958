/*
 * shim_log: trainjob-shim's files — the worker's log, capped and rotated
 * (FILE.1), and the status file written once, atomically, retrying while
 * the disk is full. Called by shim.c's supervise loop and main.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "engine/shim_priv.h"
#include "util/fileio.h"
#include "util/logindex.h"
#include "util/strbuf.h"

/* FILE.idx: the index of the log at path (size = its length). */
static void index_open(struct shim_log *lg, bool truncate)
{
    if (lg->idx_fd >= 0)
        close(lg->idx_fd);
    char path[4096];
    int n = snprintf(path, sizeof path, "%s.idx", lg->path);
    lg->idx_fd = -1;
    lg->idx_size = 0;
    lg->idx_last_ms = -1;
    if (n <= 0 || (size_t)n >= sizeof path)
        return;
    lg->idx_fd = open(
        path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW | (truncate ? O_TRUNC : 0),
        0644);
    struct stat st;
    if (lg->idx_fd >= 0 && fstat(lg->idx_fd, &st) == 0)
        lg->idx_size = (size_t)st.st_size;
}

/*
 * Records that the bytes from the log's current size on were copied now,
 * when the millisecond moved and the budget allows: LOGINDEX_BUDGET bytes
 * and then one record per 256 log bytes (an index at most 1/16 of its log),
 * so a chatty log's times get coarser rather than stopping early; a whole
 * default-cap (16 MiB) generation fits under LOGINDEX_MAX_BYTES.
 */
static void index_note(struct shim_log *lg)
{
    struct timespec ts;
    size_t next = lg->idx_size + LOGINDEX_RECORD;
    if (lg->idx_fd < 0 || next > LOGINDEX_MAX_BYTES || next > LOGINDEX_BUDGET + lg->size / 16 ||
        clock_gettime(CLOCK_REALTIME, &ts) != 0)
        return;
    long long ms = (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    if (ms == lg->idx_last_ms)
        return;
    unsigned char rec[LOGINDEX_RECORD];
    logindex_encode(&(struct logindex_rec){lg->size, (uint64_t)ms}, rec);
    shim_write_all(lg->idx_fd, (const char *)rec, sizeof rec);
    lg->idx_size += sizeof rec;
    lg->idx_last_ms = ms;
}

/* Opens (appends to) the log and its time index; returns false when the log cannot be. */
bool shim_log_open(struct shim_log *lg, bool truncate)
{
    int flags = O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | (truncate ? O_TRUNC : 0);
    lg->fd = open(lg->path, flags, 0644);
    lg->size = 0;
    struct stat st;
    if (lg->fd >= 0 && fstat(lg->fd, &st) == 0 && st.st_size > 0)
        lg->size = (size_t)st.st_size;
    /* A new (empty) log starts a new index: an old one must not describe new bytes. */
    index_open(lg, truncate || lg->size == 0);
    return lg->fd >= 0;
}

/* The log is full: it becomes log.1 and a new one starts (truncated, if the rename failed). */
static void log_rotate(struct shim_log *lg)
{
    if (lg->fd >= 0)
        close(lg->fd);
    (void)rename(lg->path, lg->rotated);
    char from[4096], to[4096];
    int a = snprintf(from, sizeof from, "%s.idx", lg->path);
    int b = snprintf(to, sizeof to, "%s.idx", lg->rotated);
    if (a > 0 && (size_t)a < sizeof from && b > 0 && (size_t)b < sizeof to)
        (void)rename(from, to);
    shim_log_open(lg, true);
}

/* Writes all of p, retrying short writes; gives up (drops the bytes) on an error. */
void shim_write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        p += w;
        n -= (size_t)w;
    }
}

/* Appends output to the log, rotating whenever it reaches the cap (lines may be split). */
void shim_log_write(struct shim_log *lg, const char *p, size_t n)
{
    while (n > 0) {
        size_t room = n;
        if (lg->cap > 0) {
            room = lg->size >= lg->cap ? 0 : lg->cap - lg->size;
            if (room == 0) {
                log_rotate(lg);
                continue;
            }
        }
        size_t k = n < room ? n : room;
        index_note(lg); /* before the bytes: a reader never sees bytes without their time */
        if (lg->fd >= 0)
            shim_write_all(lg->fd, p, k);
        lg->size += k;
        p += k;
        n -= k;
    }
}

/* Could this write failure pass (a full disk, a quota, a flaky device)? */
static bool transient(int err)
{
    return err == ENOSPC || err == EDQUOT || err == EIO || err == ENOMEM || err == EAGAIN ||
           err == EMFILE || err == ENFILE || err == EINTR;
}

/*
 * Writes the status file, retrying with a growing pause (0.1 s doubling to
 * 5 s): for as long as the disk is full (or another failure that passes),
 * about a minute for any other. A full disk must not turn the worker's end
 * into "shim gone without a word" (137). Until it lands, the shim lives on
 * and the exit status stays in memory; the first failure goes to the log.
 * Returns false when it gave up.
 */
bool shim_write_status(const char *path, const char *line, size_t len, struct shim_log *lg)
{
    long pause_ms = 100;
    bool told = false;
    for (int attempt = 0;; attempt++) {
        struct strbuf err = STRBUF_INIT;
        int rc = file_write_atomic(path, line, len, 0644, &err);
        int why = errno;
        if (rc == 0 || why == ENOENT) {
            strbuf_free(&err); /* written, or its directory is gone with the job */
            return rc == 0;
        }
        if (!transient(why) && attempt >= 15) {
            strbuf_free(&err);
            return false;
        }
        if (!told && lg->fd >= 0) {
            char msg[1200];
            int m = snprintf(msg, sizeof(msg), "trainjob-shim: %s (retrying until it can)\n",
                             strbuf_str(&err));
            if (m > 0)
                shim_write_all(lg->fd, msg, (size_t)m < sizeof(msg) ? (size_t)m : sizeof(msg) - 1);
            told = true;
        }
        strbuf_free(&err);
        struct timespec ts = {pause_ms / 1000, (pause_ms % 1000) * 1000000L};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
        }
        if (pause_ms < 5000)
            pause_ms *= 2;
    }
}
