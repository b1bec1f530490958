/*
 * slurm: the Slurm driver — the ops table, opening and freeing a backend,
 * and the TUI's calls through the loop; see slurm.h. Opened by backend_open
 * (api/backend.c); `trainjob render --target slurm` calls slurm_render
 * (api/slurm_submit.c). Its parts share api/slurm_priv.h:
 * slurm_rest.c (the token, slurmrestd requests; the version from
 * /openapi/v3 through api/slurm_shapes), slurm_jobdir.c (the job
 * directories on the shared filesystem: workers, events, logs),
 * slurm_jobs.c (Slurm's states to trainjob's, get and list),
 * slurm_catalog.c (partitions and nodes) and slurm_submit.c (submit,
 * start, stop, delete, render).
 *
 * Polling is kind to slurmctld: a list, and every get, is one GET /jobs
 * (filtered here to the workspace's job directories); the catalog is GET
 * /partitions and GET /nodes; the version is asked once per backend.
 */
#include "api/slurm.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "api/context.h"
#include "api/http.h"
#include "api/http_multi.h"
#include "api/slurm_priv.h"
#include "util/loop.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

/* ---- calls through the loop ------------------------------------------------- */

/*
 * The TUI's calls: slurmrestd answers a call in tens of milliseconds, so a
 * call is made at once and its reply handed back from the loop (never from
 * inside send). A log is followed on the loop's timer (the file read every
 * FOLLOW_POLL_MS); there is no watch stream (the TUI polls the list, one
 * GET /jobs per refresh).
 */
static int collect_data(void *ctx, const char *data, size_t len)
{
    return backend_call_data(ctx, data, len);
}

static void call_end(void *ctx)
{
    struct backend_call *c = ctx;
    c->timer = 0;
    backend_call_done(c);
}

/* A followed log's next step, from the loop: its data to the caller, then again or the end. */
static void follow_tick(void *ctx)
{
    struct backend_call *c = ctx;
    c->timer = 0;
    enum backend_status st;
    if (slurm_log_step(c->driver_data, collect_data, c, &st, &c->reply.err) || c->cancelled) {
        c->reply.status = st;
        backend_call_done(c);
        return;
    }
    c->timer = loop_add_timer(http_multi_loop(c->m), FOLLOW_POLL_MS, follow_tick, c);
}

static void slurm_send(struct backend *b, struct http_multi *m, struct backend_call *c)
{
    const struct backend_request *rq = &c->rq;
    struct backend_reply *r = &c->reply;
    struct api_error *err = &r->err;
    switch (rq->op) {
    case BACKEND_OP_GET:
        r->status = slurm_get(b, rq->name, &r->job, err);
        break;
    case BACKEND_OP_LIST:
        r->status = slurm_list(b, &rq->query, &r->list, err);
        break;
    case BACKEND_OP_WORKERS:
        r->status = slurm_workers(b, rq->name, &r->workers, err);
        break;
    case BACKEND_OP_EVENTS:
        r->status = slurm_events(b, rq->name, &r->events, err);
        break;
    case BACKEND_OP_STOP:
        r->status = slurm_stop(b, rq->names, rq->count, &r->batch, err);
        break;
    case BACKEND_OP_START:
        r->status = slurm_start(b, rq->name, &r->job, err);
        break;
    case BACKEND_OP_DELETE:
        r->status = slurm_delete(b, rq->names, rq->count, &r->batch, err);
        break;
    case BACKEND_OP_CATALOG:
        r->status = slurm_catalog(b, &r->catalog, err);
        break;
    case BACKEND_OP_CREATE:
        r->status = slurm_create(b, rq->job, &r->job, err);
        break;
    case BACKEND_OP_LOGS: {
        /* Followed on the loop's timer: the file is read every FOLLOW_POLL_MS. */
        struct slurm_log_follow *f =
            slurm_log_follow_new(b, rq->name, rq->worker, rq->tail, rq->follow, err);
        if (f == NULL) {
            r->status = BACKEND_REJECTED;
            break;
        }
        c->driver_data = f;
        c->driver_free = slurm_log_follow_free;
        c->timer = loop_add_timer(http_multi_loop(m), 0, follow_tick, c);
        return;
    }
    case BACKEND_OP_WATCH:
        r->status = backend_unsupported(b, "watching jobs", err);
        break;
    case BACKEND_OP_CREATE_WORKSPACE: /* accounts are the cluster admin's (sacctmgr) */
        r->status = backend_unsupported(b, "creating a workspace", err);
        break;
    default:
        r->status = backend_unsupported(b, "this request", err);
        break;
    }
    c->timer = loop_add_timer(http_multi_loop(m), 0, call_end, c);
}

static void slurm_free(struct backend *b)
{
    struct slurm *s = driver(b);
    http_client_free(s->client);
    free(s->context);
    free(s->user);
    free(s->token_file);
    free(s->token_command);
    if (s->token) {
        memset(s->token, 0, strlen(s->token));
        free(s->token);
    }
    free(s->jobs_dir);
    free(s->launcher);
    json_decref(s->qos);
    free(s);
}

static const struct backend_ops slurm_ops = {
    .name = "slurm",
    .catalog = slurm_catalog,
    .create = slurm_create,
    .get = slurm_get,
    .list = slurm_list,
    .workers = slurm_workers,
    .events = slurm_events,
    .logs = slurm_logs,
    .stop = slurm_stop,
    .start = slurm_start,
    .remove = slurm_delete,
    .send = slurm_send,
    .free = slurm_free,
};

struct backend *slurm_backend_new(struct http_client *client, const struct context *c,
                                  struct strbuf *err)
{
    if (c->user == NULL || (c->token_file == NULL && c->token_command == NULL) ||
        c->jobs_dir == NULL) {
        strbuf_addf(err,
                    "context '%s': driver slurm needs user, token_file or token_command, "
                    "and jobs_dir",
                    c->name);
        http_client_free(client);
        return NULL;
    }
    struct slurm *s = xcalloc(1, sizeof *s);
    s->client = client;
    s->context = xstrdup(c->name);
    s->user = xstrdup(c->user);
    s->token_file = c->token_file ? xstrdup(c->token_file) : NULL;
    s->token_command = c->token_command ? xstrdup(c->token_command) : NULL;
    s->jobs_dir = xstrdup(c->jobs_dir);
    for (size_t n = strlen(s->jobs_dir); n > 1 && s->jobs_dir[n - 1] == '/'; n--)
        s->jobs_dir[n - 1] = '\0'; /* Slurm reports the directory as given: one spelling */
    s->launcher = c->launcher ? xstrdup(c->launcher) : NULL;
    s->qos = c->qos ? json_deep_copy(c->qos) : NULL;
    struct backend_target t = {c->subscription, c->resource_group, c->zone, c->workspace};
    return backend_new(&slurm_ops, s, &t, http_client_endpoint(client));
}
