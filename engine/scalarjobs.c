/*
 * scalarjobs: the core's side of GET …/trainingJobs/{name}/scalars — the
 * job looked up with the logs' access rule, its log path mapped onto its
 * volume, then one page read (engine/scalars.h) or a follower opened
 * (engine/scalarfollow.h) and kept among the engine's scalar followers.
 */
#include "engine/engine.h"

#include <stdlib.h>
#include <unistd.h>

#include "api/apierror.h"
#include "api/jobspec.h"
#include "api/scalarpage.h"
#include "engine/scalarfollow.h"
#include "engine/scalars.h"
#include "engine/state.h"
#include "engine/stream.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

/* The 403 of a log directory the engine will not read. */
static int refused(struct api_error *err, struct engine *eng, struct ejob *job, const char *vol,
                   const char *why)
{
    return api_error_set(err, 403, "LogPathRefused", "tensorboard.log_path",
                         "job '%s': tensorboard.log_path %s (volume %s, %s) refused: the "
                         "engine reads logs only below the volume, through no symlink",
                         job->name, ejob_spec(eng, job)->tensorboard.log_path, vol, why);
}

/* ?follow=true: a scalarfollow stream on the job's log directory, kept in eng->scalar_followers. */
static int follow(struct engine *eng, struct ejob *job, const char *vol_id, const char *root,
                  const char *subdir, const char *rest, const char *since, unsigned chart,
                  struct stream **follow_stream, struct api_error *err)
{
    engine_prune_scalar_followers(eng);
    if (eng->scalar_follower_count >= SCALARFOLLOW_MAX_CLIENTS)
        return api_error_set(err, 503, "TooManyFollowers", "follow",
                             "%d clients follow scalars already: poll with since= instead",
                             SCALARFOLLOW_MAX_CLIENTS);
    char *below = xasprintf("%s/%s", subdir ? subdir : "", rest ? rest : "");
    struct scalarfollow_start how = {job->uid, ejob_spec(eng, job)->tensorboard.log_path,
                                     root,     below,
                                     since,    job_state_terminal(job->state),
                                     chart ? SCALARPAGE_MAX_LIMIT : 0, /* pages stay small */
                                     0,        chart};
    struct strbuf why = STRBUF_INIT;
    enum scalarfollow_refusal refusal;
    struct stream *s = scalarfollow_open(eng->loop, &how, &refusal, &why);
    free(below);
    int rc = 200;
    if (s == NULL && refusal == SCALARFOLLOW_BAD_CURSOR)
        rc = api_error_set(err, 400, "InvalidArgument", "since", "since: %s", strbuf_str(&why));
    else if (s == NULL && refusal == SCALARFOLLOW_NO_INOTIFY)
        rc = api_error_set(err, 503, "TooManyFollowers", "follow", "%s: poll with since= instead",
                           strbuf_str(&why));
    else if (s == NULL)
        rc = refused(err, eng, job, vol_id, strbuf_str(&why));
    strbuf_free(&why);
    if (s == NULL)
        return rc;
    eng->scalar_followers = xreallocarray(eng->scalar_followers, eng->scalar_follower_count + 1,
                                          sizeof *eng->scalar_followers);
    eng->scalar_followers[eng->scalar_follower_count++] = stream_ref(s);
    *follow_stream = s;
    return 200;
}

void engine_prune_scalar_followers(struct engine *eng)
{
    for (size_t i = 0; i < eng->scalar_follower_count;) {
        struct stream *s = eng->scalar_followers[i];
        if (stream_abandoned(s) || stream_closed(s)) {
            stream_unref(s);
            eng->scalar_followers[i] = eng->scalar_followers[--eng->scalar_follower_count];
            continue;
        }
        i++;
    }
}

int engine_job_scalars(struct engine *eng, const char *user, const char *ws, const char *name,
                       const struct scalars_query *sq, struct strbuf *out,
                       struct stream **follow_stream, struct api_error *err)
{
    struct ejob *job;
    int rc = engine_find_readable(eng, user, ws, name, &job, err);
    if (rc)
        return rc;
    long limit = scalars_page_limit(sq->limit);
    if (limit < 0)
        return api_error_set(err, 400, "InvalidArgument", "limit",
                             "limit: a number of bytes above 0, not '%.40s'", sq->limit);
    long chart = scalars_chart_buckets(sq->chart);
    if (chart < 0)
        return api_error_set(err, 400, "InvalidArgument", "chart",
                             "chart: a number of buckets from 2 to %u, not '%.40s'",
                             SCALARPAGE_MAX_CHART, sq->chart);
    const struct jobspec *spec = ejob_spec(eng, job);
    const char *log_path = spec->tensorboard.log_path;
    if (!spec->tensorboard.present || log_path == NULL || *log_path == '\0')
        return api_error_set(err, 404, "NoTensorBoard", "tensorboard.log_path",
                             "job '%s' has no TensorBoard log path (tensorboard.log_path)", name);
    struct strbuf rest = STRBUF_INIT, why = STRBUF_INIT;
    const struct mount *m = scalars_mount_of(spec, log_path, &rest);
    const struct config_volume *vol = m ? config_volume(&eng->cfg, m->id) : NULL;
    if (m == NULL) {
        rc = api_error_set(err, 409, "LogPathNotOnVolume", "tensorboard.log_path",
                           "job '%s': tensorboard.log_path %s is on none of its volumes", name,
                           log_path);
    } else if (vol == NULL || vol->path == NULL) {
        rc = api_error_set(err, 409, "VolumeMissing", "mount",
                           "job '%s': volume '%s' (holding %s) is not in this engine's config",
                           name, m->id, log_path);
    } else if (sq->follow) {
        rc = follow(eng, job, m->id, vol->path, m->subdir, strbuf_str(&rest), sq->since,
                    (unsigned)chart, follow_stream, err);
    } else {
        int missing;
        int fd = scalars_open_dir(vol->path, m->subdir, strbuf_str(&rest), &missing, &why);
        if (fd >= 0) {
            rc = scalars_read_page(fd, log_path, sq->since, limit, chart, out, err);
            close(fd);
        } else if (missing) {
            scalars_empty_page(log_path, sq->since, out); /* not written yet */
            rc = 200;
        } else {
            /* A symlink or a file where the job said its logs are: never followed. */
            rc = refused(err, eng, job, m->id, strbuf_str(&why));
        }
    }
    strbuf_free(&rest);
    strbuf_free(&why);
    return rc;
}
