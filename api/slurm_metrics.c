/*
 * slurm_metrics: a Slurm job's TensorBoard scalars, read on this node from
 * the job's tensorboard.log_path on the shared filesystem, page by page as
 * trainjobd's scalars endpoint serves them (api/scalarpage.h), with the
 * same follower `metrics --logdir` uses (api/tfevents).
 *
 * The log path is the worker's: the job's mount that holds it names a
 * volume of the context (volumes: name → the directory every node sees),
 * so the directory here is that volume's, then the mount's subdir, then
 * the rest of the path; a job in the node's own environment may name a
 * volume's directory directly. Below the volume nothing is followed
 * (util/beneath: no symlink, no ".."), the log directory must be the
 * user's (or root's) and writable by nobody else, and the follower never
 * follows a symlink inside it: a path someone else planted is not read.
 * Called through the ops table (api/slurm.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/scalarpage.h"
#include "api/slurm_priv.h"
#include "api/tfevents.h"
#include "util/beneath.h"
#include "util/pathpart.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

/* Points one page holds at most; more are counted as dropped (the page says how many). */
#define PAGE_MAX_POINTS 500000

/*
 * The directory job's log_path is on this node: the volume's directory in
 * *root, and the path below it in below ("/subdir/rest"). -1 with err
 * when the path is on no volume of the context.
 */
static int resolve_log_dir(struct slurm *s, const struct jobspec *job, const char *log_path,
                           const char **root, struct strbuf *below, struct api_error *err)
{
    struct strbuf rest = STRBUF_INIT;
    for (size_t i = 0; i < job->mount_count; i++) {
        const struct mount *m = &job->mount[i];
        const char *path = m->id ? json_string_value(json_object_get(s->volumes, m->id)) : NULL;
        if (path == NULL || m->mount_path == NULL || m->mount_path[0] != '/' ||
            !path_within(log_path, m->mount_path, &rest))
            continue;
        *root = path;
        strbuf_reset(below);
        strbuf_addf(below, "%s/%s", m->subdir ? m->subdir : "", strbuf_str(&rest));
        strbuf_free(&rest);
        return 0;
    }
    /* In the node's own environment the workers see the volumes where the context says. */
    const char *k;
    json_t *v;
    json_object_foreach(s->volumes, k, v)
    {
        const char *path = json_string_value(v);
        if (path && path[0] == '/' && path_within(log_path, path, &rest)) {
            *root = path;
            strbuf_reset(below);
            strbuf_adds(below, strbuf_str(&rest));
            strbuf_free(&rest);
            return 0;
        }
    }
    strbuf_reset(&rest);
    json_object_foreach(s->volumes, k, v)
        strbuf_addf(&rest, "%s%s (%s)", rest.len ? ", " : "", k, json_string_value(v));
    api_error_set(err, 400, "LogPathRefused", "tensorboard.log_path",
                  "job '%s': tensorboard.log_path %s is on no volume of the context '%s' (%s): "
                  "trainjob reads logs only there; use --logdir DIR where this node sees them",
                  job->name, log_path, s->context,
                  rest.len ? strbuf_str(&rest) : "it names no volumes");
    strbuf_free(&rest);
    return -1;
}

/* The page under construction. */
struct page_fill {
    struct scalar_page *page;
};

static void on_scalar(void *ctx, const struct tfevents_scalar *sc)
{
    struct page_fill *pf = ctx;
    if (pf->page->count >= PAGE_MAX_POINTS) {
        pf->page->dropped++;
        return;
    }
    scalar_page_add(pf->page, sc->run, sc->tag, sc->step, sc->wall_time, sc->value);
}

/*
 * Opens the log directory below root (O_PATH); -1 with err, *missing when
 * it is only not written yet.
 */
static int open_log_dir(struct slurm *s, const char *name, const char *log_path, const char *root,
                        const char *below, bool *missing, struct api_error *err)
{
    *missing = false;
    /* The volume's directory is the context's, as the user configured it: opened as named. */
    int root_fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (root_fd < 0) {
        *missing = errno == ENOENT;
        api_error_set(err, 500, "LogPathUnreadable", "tensorboard.log_path",
                      "job '%s': the volume's directory %s: %s", name, root, strerror(errno));
        return -1;
    }
    struct strbuf why = STRBUF_INIT;
    int fd = beneath_open_dir(root_fd, below, false, &why);
    int cause = errno;
    close(root_fd);
    if (fd < 0) {
        const char *text = strbuf_str(&why);
        *missing = cause == ENOENT;
        api_error_set(err, 403, "LogPathRefused", "tensorboard.log_path",
                      "job '%s': tensorboard.log_path %s (%s%s) refused: %s; logs are read only "
                      "below the volume, through no symlink",
                      name, log_path, root, below, text);
        strbuf_free(&why);
        return -1;
    }
    strbuf_free(&why);
    struct stat st;
    memset(&st, 0, sizeof st);
    if (fstat(fd, &st) != 0 || !slurm_owner_ok(st.st_uid, s->owner_uid) || (st.st_mode & 022)) {
        api_error_set(err, 403, "LogPathRefused", "tensorboard.log_path",
                      "job '%s': the log directory %s%s is not %s's alone (owner uid %u, mode "
                      "%04o): not read",
                      name, root, below, s->user, (unsigned)st.st_uid,
                      (unsigned)(st.st_mode & 07777));
        close(fd);
        return -1;
    }
    return fd;
}

enum backend_status slurm_scalars(struct backend *b, const char *name, const char *since,
                                  size_t limit, struct scalar_page *out, struct api_error *err)
{
    struct slurm *s = driver(b);
    scalar_page_init(out);
    char *dir = slurm_backend_job_dir(b, name, err);
    if (dir == NULL)
        return BACKEND_REJECTED;
    struct jobspec job;
    jobspec_init(&job);
    enum backend_status st = BACKEND_REJECTED;
    const char *log_path = NULL;
    const char *root = NULL;
    struct strbuf below = STRBUF_INIT;
    int fd = -1;
    bool missing = false;
    if (!slurm_stored_job(dir, s->owner_uid, &job)) {
        api_error_set(err, 404, "NotFound", "name",
                      "no job '%s' in workspace %s (no readable job.json in %s)", name,
                      b->target.workspace, dir);
    } else if ((log_path = job.tensorboard.log_path) == NULL || *log_path == '\0') {
        api_error_set(err, 404, "NoTensorBoard", "tensorboard.log_path",
                      "job '%s' sets no tensorboard.log_path", name);
    } else if (resolve_log_dir(s, &job, log_path, &root, &below, err) == 0) {
        fd = open_log_dir(s, name, log_path, root, strbuf_str(&below), &missing, err);
        st = fd >= 0 || missing ? BACKEND_OK : BACKEND_REJECTED;
    }
    if (st == BACKEND_OK) {
        memset(err, 0, sizeof *err);
        out->log_path = xstrdup(log_path);
    }
    if (st == BACKEND_OK && fd < 0) {
        out->cursor = xstrdup(since ? since : ""); /* not written yet: the cursor stays */
    } else if (st == BACKEND_OK) {
        struct strbuf why = STRBUF_INIT;
        struct tfevents_dir *d = tfevents_open_fd(fd, log_path, &why);
        if (d == NULL) {
            api_error_set(err, 500, "LogPathUnreadable", "tensorboard.log_path", "%s",
                          strbuf_str(&why));
            st = BACKEND_REJECTED;
        } else if (since && *since && tfevents_set_cursor(d, since, &why) != 0) {
            api_error_set(err, 400, "InvalidArgument", "since", "since: %s", strbuf_str(&why));
            st = BACKEND_REJECTED;
        } else {
            uint64_t lim = limit ? limit : SCALARPAGE_DEFAULT_LIMIT;
            struct tfevents_limit tl = {lim > SCALARPAGE_MAX_LIMIT ? SCALARPAGE_MAX_LIMIT : lim, 0};
            struct tfevents_poll_result res = {0};
            struct page_fill pf = {out};
            if (tfevents_poll(d, &tl, on_scalar, &pf, &res, &why) != 0) {
                api_error_set(err, 500, "LogPathUnreadable", "tensorboard.log_path", "%s",
                              strbuf_str(&why));
                st = BACKEND_REJECTED;
            } else {
                const struct tfevents_stats *ts = tfevents_stats(d);
                struct strbuf cur = STRBUF_INIT;
                tfevents_cursor(d, &cur);
                out->cursor = strbuf_detach(&cur, NULL);
                out->more = res.more;
                /* this follower read this page only: its totals are the page's */
                out->bad_crc = ts->bad_crc + ts->resyncs + ts->oversized;
                out->bad_protobuf = ts->bad_proto + ts->bad_values;
            }
        }
        tfevents_close(d);
        strbuf_free(&why);
        close(fd);
    }
    if (st != BACKEND_OK) {
        scalar_page_free(out);
        scalar_page_init(out);
    }
    strbuf_free(&below);
    jobspec_free(&job);
    free(dir);
    return st;
}
