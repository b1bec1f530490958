/*
 * exec: the engine's part of `trainjob exec`; see exec.h. Who may is
 * decided here, on the peer's credentials (http.c) and the job's creator;
 * what runs is the helper's business (engine/shim_exec.c), which takes
 * everything of the worker from /proc, never from the request.
 */
#include "engine/exec.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/apierror.h"
#include "api/jobspec.h"
#include "api/jobstatus.h"
#include "engine/engine.h"
#include "engine/runner.h"
#include "engine/shares.h"
#include "engine/state.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

extern char **environ;

/* The names of job's workers, for a message ("master-0, worker-0"). */
static void worker_names(const struct ejob *job, struct strbuf *out)
{
    for (size_t i = 0; i < job->worker_count; i++)
        strbuf_addf(out, "%s%s", i ? ", " : "", job->workers[i].name);
}

int engine_worker_exec(struct engine *eng, const char *user, const char *ws, const char *name,
                       const char *worker, struct exec_plan **out, struct api_error *err)
{
    struct ejob *job;
    int rc = find_job(eng, user, ws, name, &job, err);
    if (rc)
        return rc;
    if (!job->creator || !user || strcmp(job->creator, user) != 0)
        return api_error_set(err, 403, "PermissionDenied", "name",
                             "user '%s' may not exec in job '%s', created by %s: a command runs "
                             "as the job's own user, so only its creator may start one",
                             user ? user : "?", name, job->creator ? job->creator : "another user");
    struct eworker *w = NULL;
    for (size_t i = 0; i < job->worker_count && !w; i++)
        if (strcmp(job->workers[i].name, worker) == 0)
            w = &job->workers[i];
    if (w == NULL) {
        struct strbuf names = STRBUF_INIT;
        worker_names(job, &names);
        rc = api_error_set(err, 404, "NotFound", "worker", "job '%s' has no worker '%s'%s%s%s",
                           name, worker, job->worker_count ? " (it has " : "",
                           job->worker_count ? strbuf_str(&names)
                                             : " (it has not been scheduled yet)",
                           job->worker_count ? ")" : "");
        strbuf_free(&names);
        return rc;
    }
    if (w->phase != WORKER_RUNNING || !w->live || w->proc.worker_pgid <= 0)
        return api_error_set(err, 409, "WorkerNotRunning", "worker",
                             "worker %s is not running (%s)", worker,
                             w->phase == WORKER_PENDING || w->phase == WORKER_PHASE_UNSPECIFIED
                                 ? "starting"
                                 : enum_name(&worker_phase_names, (int)w->phase));
    struct exec_plan *p = xcalloc(1, sizeof *p);
    p->shim_path = xstrdup(eng->opt.shim_path);
    p->job = xstrdup(name);
    p->worker = xstrdup(worker);
    p->user = xstrdup(user);
    p->leader = w->proc.worker_pgid;
    p->leader_ticks = w->proc.worker_start_ticks;
    *out = p;
    return 0;
}

int engine_exec_spawn(const struct exec_plan *p, int sock, pid_t *out, struct strbuf *err)
{
    char leader[24], ticks[24];
    snprintf(leader, sizeof leader, "%ld", (long)p->leader);
    snprintf(ticks, sizeof ticks, "%llu", (unsigned long long)p->leader_ticks);
    char *argv[] = {p->shim_path, "--exec", "--leader", leader, "--ticks", ticks, p->worker, NULL};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDWR, 0);
    posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_RDWR, 0);
    posix_spawn_file_actions_adddup2(&fa, sock, 3);
    pid_t pid;
    int rc = posix_spawn(&pid, p->shim_path, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        strbuf_addf(err, "cannot start %s: %s", p->shim_path, strerror(rc));
        return -1;
    }
    engine_log("exec: %s runs a command in %s/%s (helper %ld)", p->user, p->job, p->worker,
               (long)pid);
    *out = pid;
    return 0;
}

void engine_exec_plan_free(struct exec_plan *p)
{
    if (p == NULL)
        return;
    share_give(p->share, SHARE_STREAMS, 1);
    free(p->shim_path);
    free(p->job);
    free(p->worker);
    free(p->user);
    free(p);
}
