/*
 * logfollow: a worker log served to one client as it drains (see
 * logfollow.h). engine/queries.c opens one per GET …/logs?follow=true;
 * engine.c pokes it from inotify (the log grew or rotated), and
 * engine_end_followers when the worker ends.
 *
 * Reading happens in the stream's refill, called when less than
 * STREAM_REFILL_BELOW bytes wait for the client: at most CHUNK bytes a
 * call, with pread on the file descriptor the follower holds, so a rotation
 * (a rename) never takes the rest of the current file away.
 */
#include "engine/logfollow.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/stream.h"
#include "util/logindex.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#define CHUNK (128u << 10)

struct log_follow {
    char *path;    /* FILE */
    char *rotated; /* FILE.1 */
    int fd;        /* the generation being read */
    dev_t dev;
    ino_t ino;
    off_t offset;
    unsigned rotations; /* rotations seen since the generation held became FILE (or FILE.1: 1) */
    size_t cap;
    bool framed;
    bool ended; /* the worker has ended: the log is complete at EOF */
    bool done;
    bool need_position; /* framed: a P line before the next data */
    char last;          /* the last data byte sent ('\n' at first) */
    bool times;         /* framed: T frames from the index, C when caught up */
    int idx_fd;         /* the index of the generation held (-1: none) */
    struct logindex ix;
    bool time_sent;      /* a T frame went since the last P */
    uint64_t sent_ms;    /* and said this */
    bool told_caught_up; /* a C frame went since the last data */
};

static void follow_free(void *ctx)
{
    struct log_follow *f = ctx;
    if (f->idx_fd >= 0)
        close(f->idx_fd);
    logindex_free(&f->ix);
    if (f->fd >= 0)
        close(f->fd);
    free(f->path);
    free(f->rotated);
    free(f);
}

/* Holds the file at path (FILE or FILE.1) from offset; false when it cannot be opened. */
static bool hold(struct log_follow *f, const char *path, off_t offset, unsigned rotations)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        if (fd >= 0)
            close(fd);
        return false;
    }
    if (f->fd >= 0)
        close(f->fd);
    f->fd = fd;
    f->dev = st.st_dev;
    f->ino = st.st_ino;
    f->offset = offset < 0 ? 0 : offset > st.st_size ? st.st_size : offset;
    f->rotations = rotations;
    f->need_position = true;
    if (f->times) {
        /* The generation's own index; its records are checked as they are read. */
        if (f->idx_fd >= 0)
            close(f->idx_fd);
        logindex_free(&f->ix);
        char *idx = xasprintf("%s.idx", path);
        f->idx_fd = open(idx, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
        free(idx);
        logindex_refresh(&f->ix, f->idx_fd);
    }
    return true;
}

/* Is the file at path the generation held? */
static bool is_held(const struct log_follow *f, const char *path)
{
    struct stat st;
    return f->fd >= 0 && stat(path, &st) == 0 && st.st_ino == f->ino && st.st_dev == f->dev;
}

/* "12 MiB", "300 KiB", "17 bytes". */
static void format_size(uint64_t bytes, char *out, size_t size)
{
    if (bytes >= (1u << 20))
        snprintf(out, size, "%" PRIu64 " MiB", (bytes + (1u << 19)) >> 20);
    else if (bytes >= 1024)
        snprintf(out, size, "%" PRIu64 " KiB", (bytes + 512) >> 10);
    else
        snprintf(out, size, "%" PRIu64 " byte%s", bytes, bytes == 1 ? "" : "s");
}

/* Bytes that went by unread (0: an amount not known), said in the stream. */
static void say_skipped(struct log_follow *f, struct stream *s, uint64_t bytes)
{
    struct strbuf line = STRBUF_INIT;
    if (f->framed) {
        strbuf_addf(&line, "S %" PRIu64 "\n", bytes);
    } else {
        char amount[32];
        format_size(bytes, amount, sizeof amount);
        strbuf_addf(&line, "%s… %s skipped (the log rotated faster than it was read) …\n",
                    f->last == '\n' ? "" : "\n", bytes ? amount : "some output");
        f->last = '\n';
    }
    stream_write(s, line.buf, line.len);
    strbuf_free(&line);
}

static void send_data(struct log_follow *f, struct stream *s, const char *buf, size_t n)
{
    if (f->framed) {
        char head[80];
        int len = 0;
        if (f->need_position)
            len = snprintf(head, sizeof head, "P %ju %jd\n", (uintmax_t)f->ino,
                           (intmax_t)(f->offset - (off_t)n));
        uint64_t ms, next;
        off_t at = f->offset - (off_t)n;
        if (f->times && logindex_time_at(&f->ix, (uint64_t)at, &ms, &next) &&
            (f->need_position || !f->time_sent || ms != f->sent_ms)) {
            len += snprintf(head + len, sizeof head - (size_t)len, "T %" PRIu64 "\n", ms);
            f->time_sent = true;
            f->sent_ms = ms;
        }
        len += snprintf(head + len, sizeof head - (size_t)len, "D %zu\n", n);
        stream_write(s, head, (size_t)len);
    }
    f->need_position = false;
    f->told_caught_up = false;
    stream_write(s, buf, n);
    f->last = buf[n - 1];
}

/* Reads the next chunk of the generation held; the byte count (0 at its end). */
static size_t read_chunk(struct log_follow *f, struct stream *s)
{
    static char buf[CHUNK];
    size_t want = sizeof buf;
    if (f->times) {
        /* One time per D frame: stop where the next index record starts. */
        uint64_t ms, next;
        logindex_refresh(&f->ix, f->idx_fd);
        (void)logindex_time_at(&f->ix, (uint64_t)f->offset, &ms, &next);
        if (next > (uint64_t)f->offset && next - (uint64_t)f->offset < want)
            want = (size_t)(next - (uint64_t)f->offset);
    }
    ssize_t n;
    do
        n = pread(f->fd, buf, want, f->offset);
    while (n < 0 && errno == EINTR);
    if (n <= 0)
        return 0;
    f->offset += n;
    send_data(f, s, buf, (size_t)n);
    return (size_t)n;
}

/*
 * At the end of the generation held, with FILE now another file: move to
 * FILE.1 when it is a generation not read yet (counting those lost on the
 * way), else to FILE.
 */
static void next_generation(struct log_follow *f, struct stream *s)
{
    struct stat r;
    if (!is_held(f, f->rotated) && stat(f->rotated, &r) == 0) {
        /* FILE.1 is not ours: at least two rotations since ours; each lost one is cap bytes. */
        unsigned gens = f->rotations < 2 ? 2 : f->rotations;
        if (gens > 2)
            say_skipped(f, s, (uint64_t)(gens - 2) * f->cap);
        if (hold(f, f->rotated, 0, 1))
            return;
    }
    if (!hold(f, f->path, 0, 0))
        f->rotations = 0; /* FILE is between a rename and its creation: the next poke */
}

static void refill(void *ctx, struct stream *s)
{
    struct log_follow *f = ctx;
    if (f->done)
        return;
    if (f->fd >= 0 && read_chunk(f, s) > 0)
        return;
    /* At the end of what is held. */
    struct stat st;
    bool other =
        stat(f->path, &st) == 0 && (f->fd < 0 || st.st_ino != f->ino || st.st_dev != f->dev);
    if (other) {
        /* Rotated: what the shim wrote last to ours is there now. */
        if (f->fd >= 0 && read_chunk(f, s) > 0)
            return;
        next_generation(f, s);
        if (f->fd >= 0 && read_chunk(f, s) > 0)
            return;
    }
    if (f->ended && !other) {
        f->done = true;
        if (f->framed)
            stream_write(s, "E\n", 2);
        stream_close(s);
    } else if (f->times && !f->told_caught_up) {
        f->told_caught_up = true;
        stream_write(s, "C\n", 2);
    }
}

/* The offset where the last `tail` lines of the file on fd start (size: its length). */
static off_t tail_start(int fd, off_t size, long tail)
{
    char buf[8192];
    if (tail == 0)
        return size;
    off_t pos = size;
    long lines = 0;
    bool first = true;
    while (pos > 0) {
        size_t n = pos < (off_t)sizeof buf ? (size_t)pos : sizeof buf;
        if (pread(fd, buf, n, pos - (off_t)n) != (ssize_t)n)
            return 0;
        for (size_t i = n; i > 0; i--) {
            if (buf[i - 1] != '\n')
                continue;
            if (first && pos - (off_t)n + (off_t)i == size) {
                first = false; /* the newline ending the last line */
                continue;
            }
            if (++lines == tail)
                return pos - (off_t)n + (off_t)i;
        }
        first = false;
        pos -= (off_t)n;
    }
    return 0;
}

/* Parses "<inode>:<offset>". */
static bool parse_from(const char *from, uintmax_t *ino, intmax_t *off)
{
    char *end;
    errno = 0;
    *ino = strtoumax(from, &end, 10);
    if (errno || end == from || *end != ':')
        return false;
    const char *o = end + 1;
    *off = strtoimax(o, &end, 10);
    return errno == 0 && end != o && *end == '\0' && *off >= 0;
}

struct stream *logfollow_open(const struct logfollow_start *how, struct strbuf *err)
{
    struct log_follow *f = xcalloc(1, sizeof *f);
    f->fd = -1;
    f->idx_fd = -1;
    f->times = how->framed && how->times;
    logindex_init(&f->ix);
    f->path = xstrdup(how->path);
    f->rotated = xasprintf("%s.1", how->path);
    f->cap = how->cap;
    f->framed = how->framed;
    f->ended = !how->follow;
    f->last = '\n';
    uintmax_t ino;
    intmax_t off;
    struct stat st;
    bool resumed = false;
    if (how->from && parse_from(how->from, &ino, &off)) {
        /* Continue where the client was: FILE, FILE.1, or else it rotated away meanwhile. */
        if (stat(f->path, &st) == 0 && st.st_ino == ino)
            resumed = hold(f, f->path, (off_t)off, 0);
        else if (stat(f->rotated, &st) == 0 && st.st_ino == ino)
            resumed = hold(f, f->rotated, (off_t)off, 1);
        if (!resumed && (hold(f, f->rotated, 0, 1) || hold(f, f->path, 0, 0)))
            f->need_position = true;
        struct stream *s = stream_new();
        if (!resumed && f->fd >= 0)
            say_skipped(f, s, 0);
        stream_set_refill(s, refill, f, follow_free);
        return s;
    }
    /* The whole log: the rotated generation first, when there is one. */
    if (how->tail < 0 && hold(f, f->rotated, 0, 1)) {
        struct stream *s = stream_new();
        stream_set_refill(s, refill, f, follow_free);
        return s;
    }
    if (!hold(f, f->path, 0, 0) && errno != ENOENT) {
        strbuf_addf(err, "%s: %s", how->path, strerror(errno));
        follow_free(f);
        return NULL;
    }
    /* No log yet (the worker is starting): it is followed from its first byte. */
    if (f->fd >= 0 && how->tail >= 0 && fstat(f->fd, &st) == 0)
        f->offset = tail_start(f->fd, st.st_size, how->tail);
    struct stream *s = stream_new();
    stream_set_refill(s, refill, f, follow_free);
    return s;
}

bool logfollow_matches(struct stream *s, const char *base)
{
    struct log_follow *f = stream_refill_ctx(s);
    if (f == NULL)
        return false;
    const char *slash = strrchr(f->path, '/');
    const char *mine = slash ? slash + 1 : f->path;
    size_t n = strlen(mine);
    return strncmp(base, mine, n) == 0 && (base[n] == '\0' || strcmp(base + n, ".1") == 0);
}

bool logfollow_matches_job(struct stream *s, const char *prefix)
{
    struct log_follow *f = stream_refill_ctx(s);
    if (f == NULL)
        return false;
    const char *slash = strrchr(f->path, '/');
    const char *mine = slash ? slash + 1 : f->path;
    return strncmp(mine, prefix, strlen(prefix)) == 0;
}

void logfollow_rotated(struct stream *s)
{
    struct log_follow *f = stream_refill_ctx(s);
    if (f != NULL)
        f->rotations++;
}

void logfollow_poke(struct stream *s, bool ended)
{
    struct log_follow *f = stream_refill_ctx(s);
    if (f == NULL)
        return;
    if (ended)
        f->ended = true;
    stream_wake(s);
}
