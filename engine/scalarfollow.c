/*
 * scalarfollow: a job's TensorBoard scalars streamed to one client as they
 * are written (see scalarfollow.h). engine/scalars.c opens one per
 * GET …/scalars?follow=true; this file owns its inotify instance, its
 * watches, its tfevents reader and the stream's refill.
 */
#include "engine/scalarfollow.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/scalarpage.h"
#include "api/tfevents.h"
#include "engine/elog.h"
#include "engine/scalars.h"
#include "engine/stream.h"
#include "util/loop.h"
#include "util/pathpart.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#define WATCH_MASK                                                                                 \
    (IN_MODIFY | IN_CLOSE_WRITE | IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE |            \
     IN_MOVE_SELF | IN_DELETE_SELF | IN_ONLYDIR | IN_EXCL_UNLINK)

struct scalar_follow {
    struct loop *lp;
    struct stream *s; /* the stream whose refill this is (it frees us) */
    char *uid, *log_path, *root, *below, *since;
    int dir_fd; /* O_PATH descriptor of the log directory; -1 while it is missing */
    struct tfevents_dir *dir;
    struct tfevents_stats seen; /* damage already reported */
    int ino_fd;
    int *wds; /* the distinct watches (inotify gives one wd per directory) */
    size_t nwds, capwds, max_watches;
    uint64_t page_bytes;
    unsigned chart; /* scalars_page's */
    int anc[TFEVENTS_MAX_DEPTH + 2]; /* watches on the way down while the directory is missing */
    size_t nanc;
    bool dirty;   /* something may have been written since the last page */
    bool rescan;  /* a directory may have appeared: watch the tree again */
    bool recheck; /* a watched directory went: is the held one still the log directory? */
    bool more;    /* the last page stopped at its limit */
    bool first_sent, ended, done, limit_hit;
    char *error; /* the directory became unreadable: the last line says why */
};

static void follow_free(void *ctx)
{
    struct scalar_follow *f = ctx;
    if (f->ino_fd >= 0) {
        loop_remove_fd(f->lp, f->ino_fd);
        close(f->ino_fd); /* every watch goes with it */
    }
    if (f->dir_fd >= 0)
        close(f->dir_fd);
    tfevents_close(f->dir);
    free(f->wds);
    free(f->uid);
    free(f->log_path);
    free(f->root);
    free(f->below);
    free(f->since);
    free(f->error);
    free(f);
}

/* ---- watches ---- */

static bool have_wd(const struct scalar_follow *f, int wd)
{
    for (size_t i = 0; i < f->nwds; i++)
        if (f->wds[i] == wd)
            return true;
    return false;
}

static void forget_wd(struct scalar_follow *f, int wd)
{
    for (size_t i = 0; i < f->nwds; i++)
        if (f->wds[i] == wd) {
            f->wds[i] = f->wds[--f->nwds];
            return;
        }
}

/*
 * Watches the directory open on fd. inotify takes a path: the descriptor's
 * /proc/self/fd link names the very directory opened (no lookup by name, so
 * nothing swapped in since can be watched instead). False at the cap.
 */
static bool watch_fd(struct scalar_follow *f, int fd)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    int wd = inotify_add_watch(f->ino_fd, path, WATCH_MASK);
    if (wd < 0)
        return errno != ENOSPC; /* the user's watch limit: as the cap */
    if (have_wd(f, wd))
        return true;
    if (f->nwds >= f->max_watches) {
        inotify_rm_watch(f->ino_fd, wd);
        return false;
    }
    if (f->nwds == f->capwds) {
        f->capwds = f->capwds ? f->capwds * 2 : 16;
        f->wds = xreallocarray(f->wds, f->capwds, sizeof *f->wds);
    }
    f->wds[f->nwds++] = wd;
    return true;
}

/* Watches the directory open on fd (taken) and every one below it; false at the cap. */
static bool watch_tree(struct scalar_follow *f, int fd, int depth)
{
    if (!watch_fd(f, fd)) {
        close(fd);
        return false;
    }
    DIR *d = fdopendir(fd);
    if (d == NULL) {
        close(fd);
        return true;
    }
    bool ok = true;
    struct dirent *e;
    while (ok && (e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN)
            continue;
        if (depth + 1 > TFEVENTS_MAX_DEPTH)
            continue; /* the reader does not go there either */
        /* O_NOFOLLOW: a symlink named like a run is neither watched nor read */
        int sub = openat(dirfd(d), e->d_name,
                         O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (sub >= 0)
            ok = watch_tree(f, sub, depth + 1);
    }
    closedir(d);
    return ok;
}

/* (Re)watches the whole tree from the held directory. */
static void rewatch(struct scalar_follow *f)
{
    f->rescan = false;
    int fd = openat(f->dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0 && !watch_tree(f, fd, 0))
        f->limit_hit = true;
}

static void on_events(void *ctx, int fd, short revents);

/* Opens the log directory when it is there; false while it is missing (err: refused). */
static bool hold_dir(struct scalar_follow *f, bool *refused, struct strbuf *err)
{
    int missing;
    struct strbuf why = STRBUF_INIT;
    int fd = scalars_open_dir(f->root, f->below, "", &missing, &why);
    *refused = fd < 0 && !missing;
    if (*refused)
        strbuf_addf(err, "%s", strbuf_str(&why));
    strbuf_free(&why);
    if (fd < 0)
        return false;
    struct strbuf e2 = STRBUF_INIT;
    f->dir = tfevents_open_fd(fd, f->log_path, &e2);
    strbuf_free(&e2);
    if (f->dir == NULL) {
        close(fd);
        return false;
    }
    if (f->since && *f->since) {
        struct strbuf e3 = STRBUF_INIT;
        tfevents_set_cursor(f->dir, f->since, &e3); /* checked when opened */
        strbuf_free(&e3);
    }
    f->dir_fd = fd;
    f->rescan = f->dirty = true;
    return true;
}

/* Stops watching the way down to the log directory. */
static void unwatch_ancestors(struct scalar_follow *f)
{
    for (size_t i = 0; i < f->nanc; i++)
        inotify_rm_watch(f->ino_fd, f->anc[i]);
    f->nanc = 0;
}

/*
 * While the log directory is missing: watches the volume's directory and
 * each directory already there on the way down to it, for an entry created
 * or renamed in (then it is looked for again). Opened one component at a
 * time with O_NOFOLLOW, as util/beneath does: a symlink on the way is not
 * watched (and the directory is refused once reached through it).
 */
static void watch_ancestors(struct scalar_follow *f)
{
    int fd = open(f->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    const char *rest = f->below;
    while (fd >= 0 && f->nanc < sizeof f->anc / sizeof f->anc[0]) {
        char path[64];
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        int wd = inotify_add_watch(f->ino_fd, path, IN_CREATE | IN_MOVED_TO | IN_ONLYDIR);
        if (wd >= 0)
            f->anc[f->nanc++] = wd;
        size_t len;
        const char *part = path_next_part(&rest, &len);
        if (part == NULL || len > NAME_MAX || (len == 2 && memcmp(part, "..", 2) == 0))
            break;
        char name[NAME_MAX + 1];
        memcpy(name, part, len);
        name[len] = '\0';
        int sub = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        close(fd);
        fd = sub;
    }
    if (fd >= 0)
        close(fd);
}

/*
 * Looks for the log directory (at open, and on each event while it is
 * missing): held when there, f->error when refused, else the way down to
 * it watched — and looked for once more, as it may have come meanwhile.
 */
static void look_again(struct scalar_follow *f)
{
    bool refused;
    struct strbuf why = STRBUF_INIT;
    unwatch_ancestors(f);
    if (!hold_dir(f, &refused, &why) && !refused) {
        watch_ancestors(f);
        if (hold_dir(f, &refused, &why))
            unwatch_ancestors(f);
    }
    if (refused && f->error == NULL)
        f->error = xstrdup(strbuf_str(&why));
    strbuf_free(&why);
}

/*
 * Whether the held directory is still the one at the log path: not deleted
 * (a directory removed has no links), not moved away, not replaced.
 */
static bool held_is_current(struct scalar_follow *f)
{
    struct stat held, now;
    if (fstat(f->dir_fd, &held) != 0 || held.st_nlink == 0)
        return false;
    int missing;
    struct strbuf why = STRBUF_INIT;
    int fd = scalars_open_dir(f->root, f->below, "", &missing, &why);
    strbuf_free(&why);
    if (fd < 0)
        return false;
    bool same = fstat(fd, &now) == 0 && now.st_dev == held.st_dev && now.st_ino == held.st_ino;
    close(fd);
    return same;
}

/*
 * Lets go of a log directory that was deleted or moved (a script clearing
 * its logs on a restart): its watches go, the client's cursor is kept, and
 * the path is looked for again, as when it was missing at the start.
 */
static void let_go(struct scalar_follow *f)
{
    struct strbuf cursor = STRBUF_INIT;
    tfevents_cursor(f->dir, &cursor);
    free(f->since);
    f->since = strbuf_detach(&cursor, NULL);
    for (size_t i = 0; i < f->nwds; i++)
        inotify_rm_watch(f->ino_fd, f->wds[i]);
    f->nwds = 0;
    tfevents_close(f->dir);
    f->dir = NULL;
    close(f->dir_fd);
    f->dir_fd = -1;
    f->rescan = false;
    f->dirty = true; /* looked for at once: it may be there again already */
}

/* ---- pages ---- */

static void last_line(struct scalar_follow *f, struct stream *s, const char *reason,
                      const char *message)
{
    struct strbuf line = STRBUF_INIT;
    strbuf_adds(&line, "{\"end\":");
    scalarpage_json_string(&line, reason, strlen(reason));
    strbuf_adds(&line, ",\"message\":");
    scalarpage_json_string(&line, message, strlen(message));
    strbuf_adds(&line, "}\n");
    stream_write(s, line.buf, line.len);
    strbuf_free(&line);
    f->done = true;
    stream_close(s);
}

/* An empty page at the client's cursor (the directory is not there yet). */
static void empty_page(struct scalar_follow *f, struct stream *s)
{
    struct scalar_page p;
    scalar_page_init(&p);
    p.log_path = f->log_path;
    p.cursor = f->since;
    struct strbuf line = STRBUF_INIT;
    scalar_page_to_json(&p, &line);
    strbuf_addc(&line, '\n');
    stream_write(s, line.buf, line.len);
    strbuf_free(&line);
}

static void refill(void *ctx, struct stream *s)
{
    struct scalar_follow *f = ctx;
    if (f->done)
        return;
    if (f->dir && f->recheck) {
        f->recheck = false;
        if (!held_is_current(f))
            let_go(f);
    }
    if (f->dir == NULL && f->dirty) { /* something was made on the way down */
        f->dirty = false;
        look_again(f);
    }
    if (f->error) {
        last_line(f, s, "error", f->error);
        return;
    }
    if (f->dir == NULL) { /* not written yet */
        if (!f->first_sent)
            empty_page(f, s);
        f->first_sent = true;
        if (f->ended)
            last_line(f, s, "ended", "the job has ended; it wrote no TensorBoard logs");
        return;
    }
    if (f->rescan)
        rewatch(f);
    if (f->dirty || f->more || !f->first_sent) {
        f->dirty = false;
        struct strbuf line = STRBUF_INIT, why = STRBUF_INIT;
        struct scalars_page_info info;
        if (scalars_page(f->dir, f->log_path, f->page_bytes, f->chart, SCALARFOLLOW_MAX_JSON, &f->seen, &line,
                         &info, &why) != 0) {
            last_line(f, s, "error", strbuf_str(&why));
            strbuf_free(&line);
            strbuf_free(&why);
            return;
        }
        f->more = info.more;
        if (!f->first_sent || info.bytes > 0 || info.damaged > 0) {
            strbuf_addc(&line, '\n');
            stream_write(s, line.buf, line.len);
        }
        f->first_sent = true;
        strbuf_free(&line);
        strbuf_free(&why);
        if (f->more)
            return;
    }
    if (f->limit_hit) {
        char msg[160];
        snprintf(msg, sizeof msg,
                 "the log directory has more than %zu directories to watch: poll with since=",
                 f->max_watches);
        engine_log("scalars of %s: %s", f->log_path, msg);
        last_line(f, s, "watch_limit", msg);
    } else if (f->ended && !f->dirty) {
        last_line(f, s, "ended", "the job has ended and everything it wrote has been sent");
    }
}

/* ---- inotify ---- */

bool scalarfollow_drain_events(struct stream *s)
{
    struct scalar_follow *f = stream_refill_ctx(s);
    if (f == NULL || f->ino_fd < 0)
        return false;
    char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
    bool any = false;
    for (;;) {
        ssize_t n = read(f->ino_fd, buf, sizeof buf);
        if (n <= 0)
            break;
        any = true;
        for (char *p = buf; p < buf + n;) {
            struct inotify_event *ev = (struct inotify_event *)p;
            if (ev->mask & IN_Q_OVERFLOW)
                f->rescan = true;
            if (ev->mask & IN_IGNORED) {
                forget_wd(f, ev->wd); /* removed, or the directory is gone */
            } else if (ev->mask & (IN_MOVE_SELF | IN_DELETE_SELF)) {
                /* a directory moved (maybe out of the tree): watched again if still below */
                inotify_rm_watch(f->ino_fd, ev->wd);
                forget_wd(f, ev->wd);
                f->rescan = f->recheck = true;
            } else if ((ev->mask & IN_ISDIR) && (ev->mask & (IN_CREATE | IN_MOVED_TO))) {
                f->rescan = true;
            }
            p += sizeof *ev + ev->len;
        }
    }
    if (any)
        f->dirty = true;
    return any;
}

static void on_events(void *ctx, int fd, short revents)
{
    struct stream *s = ctx;
    (void)fd;
    (void)revents;
    if (scalarfollow_drain_events(s))
        stream_wake(s);
}

/* ---- the public API ---- */

struct stream *scalarfollow_open(struct loop *lp, const struct scalarfollow_start *how,
                                 enum scalarfollow_refusal *why, struct strbuf *err)
{
    *why = SCALARFOLLOW_REFUSED;
    struct scalar_follow *f = xcalloc(1, sizeof *f);
    f->lp = lp;
    f->dir_fd = f->ino_fd = -1;
    f->uid = xstrdup(how->uid ? how->uid : "");
    f->log_path = xstrdup(how->log_path);
    f->root = xstrdup(how->root);
    f->below = xstrdup(how->below ? how->below : "");
    f->since = xstrdup(how->since ? how->since : "");
    f->ended = how->ended;
    f->page_bytes = how->page_bytes ? how->page_bytes : SCALARFOLLOW_PAGE;
    f->max_watches = how->max_watches ? how->max_watches : SCALARFOLLOW_MAX_WATCHES;
    f->chart = how->chart;
    if (*f->since) { /* checked now: a bad cursor is the client's 400, not a stream */
        struct tfevents_dir *probe = tfevents_open("/", err);
        int bad = probe ? tfevents_set_cursor(probe, f->since, err) : -1;
        tfevents_close(probe);
        if (bad) {
            *why = SCALARFOLLOW_BAD_CURSOR;
            follow_free(f);
            return NULL;
        }
    }
    f->ino_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (f->ino_fd < 0) {
        *why = SCALARFOLLOW_NO_INOTIFY;
        strbuf_addf(err, "inotify: %s", strerror(errno));
        follow_free(f);
        return NULL;
    }
    look_again(f);
    if (f->error) {
        strbuf_adds(err, f->error);
        follow_free(f);
        return NULL;
    }
    struct stream *s = stream_new();
    f->s = s;
    stream_set_refill(s, refill, f, follow_free);
    loop_add_fd(lp, f->ino_fd, POLLIN, on_events, s);
    return s;
}

bool scalarfollow_of(struct stream *s, const char *uid)
{
    if (stream_abandoned(s) || stream_closed(s))
        return false;
    struct scalar_follow *f = stream_refill_ctx(s);
    return f != NULL && strcmp(f->uid, uid) == 0;
}

void scalarfollow_job_ended(struct stream *s)
{
    struct scalar_follow *f = stream_refill_ctx(s);
    if (f == NULL)
        return;
    f->ended = true;
    f->dirty = true; /* a last look: what was written before the end */
    stream_wake(s);
}

size_t scalarfollow_watch_count(struct stream *s)
{
    struct scalar_follow *f = stream_refill_ctx(s);
    return f ? f->nwds : 0;
}
