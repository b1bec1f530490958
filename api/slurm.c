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
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/context.h"
#include "api/drivers.h"
#include "api/exec.h"
#include "api/finding.h"
#include "api/http.h"
#include "api/http_multi.h"
#include "api/jobspec_json.h"
#include "api/slurm_priv.h"
#include "util/loop.h"
#include "util/strbuf.h"
#include "util/timefmt.h"
#include "util/xalloc.h"

/* ---- calls through the loop ------------------------------------------------- */

/*
 * The TUI's calls never block the loop. Each operation is the blocking code
 * the CLI runs, run with a replay record (see struct slurm_replay): every
 * REST request it needs is made through http_multi, one at a time, and the
 * operation is run again from the start when a reply arrives, until it asks
 * for nothing new; its reply is then handed back. token_command runs as a
 * child watched by the loop (slurm_token_start). A refused token is fetched
 * again once, then the request is made again. A followed log stays on the
 * loop's timer (the file read every FOLLOW_POLL_MS, a bounded read per tick).
 * There is no watch stream (the TUI polls the list, one GET /jobs per refresh).
 */
struct slurm_call {
    struct backend_call *c;
    struct backend *b;
    struct slurm_replay rp;
    struct slurm_token_run *token;
    struct slurm_log_follow *follow;
    struct backend_call *state_call; /* a followed log asking its job's state */
    struct jobspec job;              /* CREATE: the job decoded from the request */
    bool has_job;
    bool refreshed;                    /* the token was fetched again for a refusal */
    struct slurm_jobs_read *jobs_read; /* the GET /jobs in flight, read as it arrives */
};

static void slurm_call_free(void *p)
{
    struct slurm_call *sc = p;
    if (sc == NULL)
        return;
    if (sc->token)
        slurm_token_cancel(sc->token);
    if (sc->state_call)
        backend_call_cancel(sc->state_call);
    if (sc->follow)
        slurm_log_follow_free(sc->follow);
    if (sc->has_job)
        jobspec_free(&sc->job);
    slurm_jobs_read_free(sc->jobs_read);
    slurm_replay_gone(sc->b, &sc->rp);
    slurm_replay_free(&sc->rp);
    free(sc);
}

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

/* A followed log's job state, asked through the loop. */
static void state_reply(void *ctx, struct backend_reply *r)
{
    struct slurm_call *sc = ctx;
    sc->state_call = NULL;
    if (r->status == BACKEND_OK)
        slurm_log_job_state(sc->follow, r->job.state);
}

/* A followed log's next step, from the loop: its data to the caller, then again or the end. */
static void follow_tick(void *ctx)
{
    struct backend_call *c = ctx;
    struct slurm_call *sc = c->driver_data;
    c->timer = 0;
    enum backend_status st;
    if (slurm_log_step(sc->follow, collect_data, c, &st, &c->reply.err) || c->cancelled) {
        c->reply.status = st;
        backend_call_done(c);
        return;
    }
    const char *name;
    if (slurm_log_wants_state(sc->follow, &name) && sc->state_call == NULL) {
        struct backend_request rq = {.op = BACKEND_OP_GET, .name = name};
        sc->state_call = backend_send(c->b, c->m, &rq, state_reply, NULL, NULL, sc);
    }
    c->timer = loop_add_timer(http_multi_loop(c->m), FOLLOW_POLL_MS, follow_tick, c);
}

/* One run of the operation with the replies so far; false when it needs another. */
static bool run_op(struct slurm_call *sc)
{
    struct backend_call *c = sc->c;
    struct backend *b = c->b;
    const struct backend_request *rq = &c->rq;
    struct backend_reply *r = &c->reply;
    struct api_error *err = &r->err;
    backend_reply_free(r);
    memset(err, 0, sizeof *err);
    driver(b)->replay = &sc->rp;
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
    case BACKEND_OP_SCALARS: /* files of the shared filesystem, read within the page's limit */
        r->status = slurm_scalars(b, rq->name, rq->since, rq->limit, &r->scalars, err);
        break;
    case BACKEND_OP_UPDATE:
        r->status = slurm_update(b, rq->name, &rq->update, &r->job, err);
        break;
    case BACKEND_OP_DELETE:
        r->status = slurm_delete(b, rq->names, rq->count, &r->batch, err);
        break;
    case BACKEND_OP_CATALOG:
        r->status = slurm_catalog(b, &r->catalog, err);
        break;
    case BACKEND_OP_CREATE:
        r->status = slurm_create(b, &sc->job, &r->job, err);
        break;
    default:
        r->status = backend_unsupported(b, "this request", err);
        break;
    }
    driver(b)->replay = NULL;
    return !sc->rp.pending && !sc->rp.need_token;
}

static void step(struct slurm_call *sc);

static void token_done(void *ctx, int rc, const char *why)
{
    struct slurm_call *sc = ctx;
    sc->token = NULL;
    if (rc != 0) {
        free(sc->rp.token_error);
        sc->rp.token_error = xstrdup(why);
        if (sc->rp.pending) {
            /* A refusal fetched the token again and that failed: the request fails with it. */
            struct api_error e;
            memset(&e, 0, sizeof e);
            enum backend_status st = slurm_auth_failed(sc->c->b, why, &e);
            slurm_replay_store(&sc->rp, st, NULL, NULL, &e);
        }
    }
    sc->rp.need_token = false;
    step(sc);
}

static void http_done(void *ctx, struct http_result *r)
{
    struct slurm_call *sc = ctx;
    struct backend *b = sc->c->b;
    sc->c->http = NULL;
    json_t *reply = NULL;
    struct slurm_joblist *jobs = NULL;
    bool refused = false;
    struct api_error e;
    memset(&e, 0, sizeof e);
    enum backend_status st = slurm_rest_decode(b, sc->rp.method, sc->rp.path, r, sc->jobs_read,
                                               &reply, &jobs, &refused, &e);
    slurm_jobs_read_free(sc->jobs_read);
    sc->jobs_read = NULL;
    if (refused && driver(b)->token_command && !sc->refreshed) {
        /* "run the token command again once", then the same request again */
        sc->refreshed = true;
        sc->token = slurm_token_start(b, http_multi_loop(sc->c->m), token_done, sc);
        return;
    }
    if (refused)
        st = slurm_auth_failed(b, sc->rp.token_error, &e);
    if (strcmp(sc->rp.method, "GET") != 0)
        sc->rp.changed = true;
    slurm_replay_store(&sc->rp, st, reply, jobs, &e);
    step(sc);
}

static void delayed_start(void *ctx);

/* Makes the pending request of the operation; a GET /jobs is read as it arrives. */
static void start_request(struct slurm_call *sc)
{
    struct backend_call *c = sc->c;
    const char *body = sc->rp.body;
    sc->rp.sent_ms = time_now_ms();
    slurm_jobs_read_free(sc->jobs_read);
    sc->jobs_read = slurm_jobs_read_new(c->b, sc->rp.method, sc->rp.path);
    c->http = http_multi_start(c->m, driver(c->b)->client, sc->rp.method, sc->rp.path, body,
                               body ? strlen(body) : 0, sc->jobs_read ? slurm_jobs_read_data : NULL,
                               sc->jobs_read, http_done, sc);
}

/* Runs the operation; makes the request it waits for, or hands its reply back. */
static void step(struct slurm_call *sc)
{
    struct backend_call *c = sc->c;
    if (run_op(sc)) {
        if (c->rq.op == BACKEND_OP_LIST) /* the list feeds top's status line */
            c->reply.warning = slurm_take_warning(c->b);
        if (sc->rp.changed) /* the next GET /jobs asks slurmctld (not a rerun of this call) */
            driver(c->b)->jobs_at = 0;
        backend_call_done(c);
        return;
    }
    if (sc->rp.need_token) {
        sc->token = slurm_token_start(c->b, http_multi_loop(c->m), token_done, sc);
        return;
    }
    if (sc->rp.delay_ms > 0) {
        c->timer = loop_add_timer(http_multi_loop(c->m), sc->rp.delay_ms, delayed_start, sc);
        return;
    }
    start_request(sc);
}

static void delayed_start(void *ctx)
{
    struct slurm_call *sc = ctx;
    sc->c->timer = 0;
    sc->rp.delay_ms = 0;
    if (sc->rp.wait_only) { /* a wait, not a request: the operation runs again */
        sc->rp.wait_only = false;
        sc->rp.pending = false;
        step(sc);
        return;
    }
    start_request(sc);
}

/* The first step, from the loop (never a reply inside send). */
static void first_step(void *ctx)
{
    struct backend_call *c = ctx;
    c->timer = 0;
    step(c->driver_data);
}

static void slurm_send(struct backend *b, struct http_multi *m, struct backend_call *c)
{
    const struct backend_request *rq = &c->rq;
    struct backend_reply *r = &c->reply;
    struct slurm_call *sc = xcalloc(1, sizeof *sc);
    sc->c = c;
    sc->b = b;
    sc->rp.started = time_now_ms();
    c->driver_data = sc;
    c->driver_free = slurm_call_free;
    switch (rq->op) {
    case BACKEND_OP_LOGS:
        /* Followed on the loop's timer: the file is read every FOLLOW_POLL_MS. */
        sc->follow = slurm_log_follow_new(b, rq->name, rq->worker, rq->tail, rq->follow, &r->err);
        if (sc->follow == NULL) {
            r->status = BACKEND_REJECTED;
            break;
        }
        slurm_log_on_loop(sc->follow);
        c->timer = loop_add_timer(http_multi_loop(m), 0, follow_tick, c);
        return;
    case BACKEND_OP_WATCH:
        r->status = backend_unsupported(b, "watching jobs", &r->err);
        break;
    case BACKEND_OP_SCALARS:
        if (rq->follow) { /* no push stream: the caller polls pages (a 501 says so) */
            r->status = backend_no_scalars(b, &r->err);
            break;
        }
        c->timer = loop_add_timer(http_multi_loop(m), 0, first_step, c);
        return;
    case BACKEND_OP_CREATE_WORKSPACE: /* accounts are the cluster admin's (sacctmgr) */
        r->status = backend_unsupported(b, "creating a workspace", &r->err);
        break;
    case BACKEND_OP_CREATE: {
        json_t *j = rq->job_json ? json_loads(rq->job_json, 0, NULL) : NULL;
        struct findings fs;
        memset(&fs, 0, sizeof fs);
        jobspec_init(&sc->job);
        sc->has_job = true;
        int bad = j == NULL || jobspec_from_json(j, JOBSPEC_LENIENT, &sc->job, &fs) != 0;
        json_decref(j);
        findings_free(&fs);
        if (bad) {
            api_error_set(&r->err, 400, "InvalidJob", "", "the job to create could not be read");
            r->status = BACKEND_REJECTED;
            break;
        }
        c->timer = loop_add_timer(http_multi_loop(m), 0, first_step, c);
        return;
    }
    default:
        c->timer = loop_add_timer(http_multi_loop(m), 0, first_step, c);
        return;
    }
    c->timer = loop_add_timer(http_multi_loop(m), 0, call_end, c);
}

/*
 * A command in a worker of a running Slurm job: an overlapping step on the
 * worker's node (srun --overlap --jobid ID -w NODE [--pty] CMD), run here
 * with our terminal as the user's own srun: Slurm checks it is their job.
 * A one-worker job runs in its batch step; --overlap shares its allocation.
 */
static enum backend_status slurm_exec(struct backend *b, const char *name,
                                      const struct exec_request *rq, int *exit_code,
                                      struct api_error *err)
{
    struct worker_list wl = {0};
    enum backend_status st = slurm_workers(b, name, &wl, err);
    if (st != BACKEND_OK)
        return st;
    const char *worker = NULL;
    if (exec_pick_worker(&wl, name, rq->worker, &worker, err) != 0) {
        worker_list_free(&wl);
        return BACKEND_REJECTED;
    }
    char *node = NULL;
    for (size_t i = 0; i < wl.count && !node; i++)
        if (strcmp(wl.workers[i].name, worker) == 0 && wl.workers[i].node_name)
            node = xstrdup(wl.workers[i].node_name);
    char *worker_name = xstrdup(worker);
    worker_list_free(&wl);
    worker = worker_name;
    struct slurm_found f;
    if ((st = slurm_fetch_jobs(b, &f, err)) != BACKEND_OK) {
        free(node);
        free(worker_name);
        return st;
    }
    const struct slurm_job *sj = slurm_found_job(b, &f, name);
    if (sj == NULL || node == NULL) {
        api_error_set(err, 409, "WorkerNotRunning", "worker",
                      "worker %s of job '%s' has no Slurm job or node to run in", worker, name);
        slurm_found_free(&f);
        free(node);
        free(worker_name);
        return BACKEND_REJECTED;
    }
    char id[24];
    snprintf(id, sizeof id, "%lld", (long long)sj->id);
    slurm_found_free(&f);
    /* The worker's shell: bash where the node has it, else sh. */
    static const char *const shell[] = {
        "/bin/sh", "-c", "command -v bash >/dev/null 2>&1 && exec bash || exec /bin/sh"};
    size_t n = 0, cmdc = rq->argc ? rq->argc : 3;
    const char **argv = xcalloc(cmdc + 10, sizeof *argv);
    argv[n++] = "srun";
    argv[n++] = "--overlap";
    argv[n++] = "--jobid";
    argv[n++] = id;
    argv[n++] = "-w";
    argv[n++] = node;
    argv[n++] = "--quiet";
    if (rq->tty)
        argv[n++] = "--pty";
    else if (!rq->stdin_open)
        argv[n++] = "--input=none";
    for (size_t i = 0; i < cmdc; i++)
        argv[n++] = rq->argc ? rq->argv[i] : shell[i];
    argv[n] = NULL;
    st = exec_run_here(argv, exit_code, err) == 0 ? BACKEND_OK : BACKEND_REJECTED;
    free(argv);
    free(node);
    free(worker_name);
    return st;
}

static void slurm_free(struct backend *b)
{
    struct slurm *s = driver(b);
    http_client_free(s->client);
    free(s->context);
    free(s->shape_release);
    free(s->user);
    free(s->token_file);
    free(s->token_command);
    if (s->token) {
        memset(s->token, 0, strlen(s->token));
        free(s->token);
    }
    free(s->jobs_dir);
    free(s->launcher);
    free(s->warning);
    slurm_joblist_unref(s->jobs_cache);
    json_decref(s->qos);
    json_decref(s->volumes);
    free(s);
}

void slurm_backend_set_delete_wait(struct backend *b, int ms)
{
    driver(b)->delete_wait_ms = ms;
}

static const struct backend_ops slurm_ops = {
    .name = "slurm",
    .catalog = slurm_catalog,
    .create = slurm_create,
    .get = slurm_get,
    .list = slurm_list,
    .update = slurm_update,
    .scalars = slurm_scalars,
    .workers = slurm_workers,
    .exec = slurm_exec,
    .events = slurm_events,
    .logs = slurm_logs,
    .stop = slurm_stop,
    .start = slurm_start,
    .remove = slurm_delete,
    .send = slurm_send,
    .free = slurm_free,
};

/*
 * slurmrestd's Unix socket must be in a directory nobody else may write:
 * in /tmp (or any directory every user or a group may write) another user
 * could listen at that path while slurmrestd is away, and be sent the
 * user's token. -1 with err naming the directory.
 */
static int check_socket_dir(const struct context *c, struct strbuf *err)
{
    struct http_endpoint ep;
    struct strbuf why = STRBUF_INIT;
    int rc = 0;
    if (c->endpoint && http_endpoint_parse(c->endpoint, &ep, &why) == 0) {
        char *dir = ep.unix_path ? xstrdup(ep.unix_path) : NULL;
        char *slash = dir ? strrchr(dir, '/') : NULL;
        if (slash)
            slash[slash == dir] = '\0'; /* "/x.sock": the root */
        struct stat st;
        if (dir && stat(dir, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 022)) {
            strbuf_addf(err,
                        "context '%s': endpoint: the socket directory %s is writable by %s "
                        "(mode %04o): another user could listen there in slurmrestd's place "
                        "and be sent your token; use a socket in a directory only slurmrestd's "
                        "user may write (as /run/slurmrestd)",
                        c->name, dir, (st.st_mode & 002) ? "every user" : "its group",
                        (unsigned)(st.st_mode & 07777));
            rc = -1;
        }
        free(dir);
        http_endpoint_free(&ep);
    }
    strbuf_free(&why);
    return rc;
}

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
    if (check_socket_dir(c, err) != 0) {
        http_client_free(client);
        return NULL;
    }
    struct slurm *s = xcalloc(1, sizeof *s);
    s->client = client;
    s->context = xstrdup(c->name);
    s->user = xstrdup(c->user);
    struct passwd *pw = getpwnam(c->user);
    s->owner_uid = pw ? pw->pw_uid : geteuid();
    /* Every reply is decoded within a memory bound, so bytes may go past http's 64 MiB. */
    http_client_set_max_reply(client, SLURM_REPLY_MAX);
    http_client_set_data_timed(client, true); /* GET /jobs read as it arrives, still timed */
    s->token_file = c->token_file ? xstrdup(c->token_file) : NULL;
    s->token_command = c->token_command ? xstrdup(c->token_command) : NULL;
    s->jobs_dir = xstrdup(c->jobs_dir);
    for (size_t n = strlen(s->jobs_dir); n > 1 && s->jobs_dir[n - 1] == '/'; n--)
        s->jobs_dir[n - 1] = '\0'; /* Slurm reports the directory as given: one spelling */
    s->launcher = c->launcher ? xstrdup(c->launcher) : NULL;
    s->qos = c->qos ? json_deep_copy(c->qos) : NULL;
    s->volumes = c->volumes ? json_deep_copy(c->volumes) : NULL;
    s->delete_wait_ms = SLURM_DELETE_WAIT_MS;
    struct backend_target t = {c->subscription, c->resource_group, c->zone, c->workspace};
    return backend_new(&slurm_ops, s, &t, http_client_endpoint(client));
}

/* The driver table's entry (api/drivers.c). */
static struct backend *slurm_open(struct http_client *client, const struct resolved_context *rc,
                                  struct strbuf *err)
{
    return slurm_backend_new(client, &rc->ctx, err);
}

const struct backend_driver slurm_driver = {slurm_open, false};
