/*
 * backend: the wrappers every caller goes through, and what is the same for
 * every driver — following every page of a list, splitting batches, and
 * reviving an unreachable local engine once. See backend.h; the drivers
 * (api/acp.c, api/slurm.c) use it and it knows none of them: the table in
 * api/drivers.c opens the one a context names.
 */
#include "api/backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/context.h"
#include "api/http.h"
#include "api/http_multi.h"
#include "api/jobspec_json.h"
#include "util/hmap.h"
#include "util/loop.h"
#include "util/strbuf.h"
#include "util/utf8.h"
#include "util/xalloc.h"

#define MAX_PAGES 10000 /* a list longer than 5 million jobs is a server looping */

void job_list_free(struct job_list *l)
{
    for (size_t i = 0; i < l->count; i++)
        jobspec_free(&l->jobs[i]);
    free(l->jobs);
    free(l->next_page_token);
    memset(l, 0, sizeof *l);
}

void batch_result_free(struct batch_result *r)
{
    for (size_t i = 0; i < r->count; i++) {
        free(r->items[i].name);
        free(r->items[i].result);
    }
    free(r->items);
    memset(r, 0, sizeof *r);
}

enum batch_outcome batch_outcome_from(const char *result)
{
    if (result == NULL)
        return BATCH_UNKNOWN;
    if (strcmp(result, "NOT_FOUND") == 0)
        return BATCH_NOT_FOUND;
    if (strcmp(result, "SKIPPED") == 0)
        return BATCH_SKIPPED;
    return BATCH_DONE;
}

static void target_copy(struct backend_target *dst, const struct backend_target *src)
{
    dst->subscription = xstrdup(src->subscription);
    dst->resource_group = xstrdup(src->resource_group);
    dst->zone = xstrdup(src->zone);
    dst->workspace = xstrdup(src->workspace);
}

struct backend *backend_new(const struct backend_ops *ops, void *driver,
                            const struct backend_target *target, const char *endpoint)
{
    struct backend *b = xcalloc(1, sizeof *b);
    b->ops = ops;
    b->driver = driver;
    target_copy(&b->target, target);
    b->endpoint = xstrdup(endpoint ? endpoint : "");
    return b;
}

void backend_free(struct backend *b)
{
    if (b == NULL)
        return;
    if (b->ops->free)
        b->ops->free(b);
    free(b->target.subscription);
    free(b->target.resource_group);
    free(b->target.zone);
    free(b->target.workspace);
    free(b->endpoint);
    free(b->engine_socket);
    free(b->revive_error);
    free(b);
}

void backend_set_workspace(struct backend *b, const char *workspace)
{
    free(b->target.workspace);
    b->target.workspace = xstrdup(workspace);
}

int backend_job_workspace(const struct backend *b, struct jobspec *job, struct strbuf *err)
{
    const char *chosen = b->target.workspace;
    if (job->workspace_name == NULL || *job->workspace_name == '\0') {
        free(job->workspace_name);
        job->workspace_name = xstrdup(chosen);
        return 0;
    }
    if (strcmp(job->workspace_name, chosen) == 0)
        return 0;
    strbuf_adds(err, "the job names workspace_name '");
    utf8_sanitize(err, job->workspace_name, strlen(job->workspace_name), 0);
    strbuf_adds(err, "', but the workspace chosen is '");
    utf8_sanitize(err, chosen, strlen(chosen), 0);
    strbuf_adds(err, "' (the context's, or --workspace); pass --workspace '");
    utf8_sanitize(err, job->workspace_name, strlen(job->workspace_name), 0);
    strbuf_adds(err, "' to send it there, or change the file");
    return -1;
}

enum backend_status backend_unsupported(const struct backend *b, const char *what,
                                        struct api_error *err)
{
    api_error_set(err, 501, "Unsupported", "", "%s: not supported by this backend (%s at %s)", what,
                  b->ops->name, b->endpoint);
    return BACKEND_REJECTED;
}

/*
 * After a call: true when it should be made again — the server was
 * unreachable and the revive hook has not run yet (it runs at most once per
 * backend). Even when reviving fails, one more try is made: another client
 * may have started the engine meanwhile. If that try fails too, the error
 * says why reviving did not help.
 */
static bool again_once(struct backend *b, bool *revived, enum backend_status st,
                       struct api_error *err)
{
    if (st != BACKEND_UNREACHABLE || b->revive == NULL)
        return false;
    if (*revived) {
        if (b->revive_error) {
            size_t n = strlen(err->message);
            snprintf(err->message + n, sizeof err->message - n, " (starting it: %s)",
                     b->revive_error);
        }
        return false;
    }
    *revived = true;
    struct strbuf why = STRBUF_INIT;
    free(b->revive_error);
    b->revive_error = NULL;
    if (b->revive(b->revive_ctx, &why) != 0)
        b->revive_error = strbuf_detach(&why, NULL);
    strbuf_free(&why);
    return true;
}

/* The blocking calls revive at most once per backend (a command is one call or a few). */
static bool again(struct backend *b, enum backend_status st, struct api_error *err)
{
    return again_once(b, &b->revived, st, err);
}

#define NEED(op, what)                                                                             \
    do {                                                                                           \
        if (b->ops->op == NULL)                                                                    \
            return backend_unsupported(b, what, err);                                              \
    } while (0)

enum backend_status backend_catalog(struct backend *b, struct catalog *out, struct api_error *err)
{
    NEED(catalog, "the catalog");
    enum backend_status st;
    do
        st = b->ops->catalog(b, out, err);
    while (again(b, st, err));
    return st;
}

enum backend_status backend_create(struct backend *b, const struct jobspec *job,
                                   struct jobspec *out, struct api_error *err)
{
    NEED(create, "creating jobs");
    enum backend_status st;
    do
        st = b->ops->create(b, job, out, err);
    while (again(b, st, err));
    return st;
}

enum backend_status backend_get(struct backend *b, const char *name, struct jobspec *out,
                                struct api_error *err)
{
    NEED(get, "getting a job");
    enum backend_status st;
    do
        st = b->ops->get(b, name, out, err);
    while (again(b, st, err));
    return st;
}

enum backend_status backend_list(struct backend *b, const struct list_query *q,
                                 struct job_list *out, struct api_error *err)
{
    NEED(list, "listing jobs");
    enum backend_status st;
    do
        st = b->ops->list(b, q, out, err);
    while (again(b, st, err));
    return st;
}

static bool same_uid(const void *item, const void *key)
{
    return strcmp(item, key) == 0;
}

/*
 * Pages until next_page_token is empty, handing each job to fn once: records
 * that shifted between pages are kept once, by uid, through a hash index of
 * the uids seen (issue 14: comparing each uid with every job collected was
 * 78 % of 22.7 s at 50k jobs). A page's jobs are freed once handed on, so a
 * caller that keeps only what it prints holds one page at a time.
 */
enum backend_status backend_list_each(struct backend *b, const char *filter, bool basic,
                                      backend_job_fn fn, void *ctx, long *total,
                                      struct api_error *err)
{
    char *token = NULL;
    enum backend_status st = BACKEND_OK;
    struct hmap uids = HMAP_INIT; /* copies of the uids handed on */
    int stop = 0;
    for (int page = 0; page < MAX_PAGES && !stop; page++) {
        struct list_query q = {BACKEND_MAX_PAGE_SIZE, token, filter, NULL, basic};
        struct job_list one;
        memset(&one, 0, sizeof one);
        st = backend_list(b, &q, &one, err);
        free(token);
        token = NULL;
        if (st != BACKEND_OK)
            break;
        if (total)
            *total = one.total_size;
        for (size_t i = 0; i < one.count; i++) {
            struct jobspec *j = &one.jobs[i];
            const char *uid = j->uid;
            if (!stop && uid) {
                uint64_t h = hmap_hash(uid, strlen(uid));
                if (hmap_get(&uids, h, same_uid, uid) == NULL) {
                    hmap_put(&uids, h, xstrdup(uid));
                    stop = fn(ctx, j);
                }
            } else if (!stop) {
                stop = fn(ctx, j); /* no uid: nothing to know it again by */
            }
            jobspec_free(j);
        }
        free(one.jobs);
        token = one.next_page_token;
        if (token == NULL || *token == '\0' || one.count == 0)
            break;
    }
    free(token);
    for (size_t i = 0; i < uids.cap; i++)
        free(uids.slots[i].item);
    hmap_free(&uids);
    return st;
}

struct collect {
    struct job_list *out;
    size_t cap;
};

/* backend_job_fn of backend_list_all: the job moved into the list (grown by doubling). */
static int collect_job(void *ctx, struct jobspec *job)
{
    struct collect *c = ctx;
    struct job_list *l = c->out;
    if (l->count == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 512;
        l->jobs = xreallocarray(l->jobs, c->cap, sizeof *l->jobs);
    }
    l->jobs[l->count++] = *job;
    jobspec_init(job); /* moved: what is freed after is empty */
    return 0;
}

enum backend_status backend_list_all(struct backend *b, const char *filter, bool basic,
                                     struct job_list *out, struct api_error *err)
{
    memset(out, 0, sizeof *out);
    struct collect c = {out, 0};
    enum backend_status st =
        backend_list_each(b, filter, basic, collect_job, &c, &out->total_size, err);
    if (st != BACKEND_OK)
        job_list_free(out);
    return st;
}

enum backend_status backend_update(struct backend *b, const char *name, const struct job_update *u,
                                   struct jobspec *out, struct api_error *err)
{
    NEED(update, "updating a job");
    enum backend_status st;
    do
        st = b->ops->update(b, name, u, out, err);
    while (again(b, st, err));
    return st;
}

enum backend_status backend_workers(struct backend *b, const char *name, struct worker_list *out,
                                    struct api_error *err)
{
    NEED(workers, "listing workers");
    enum backend_status st;
    do
        st = b->ops->workers(b, name, out, err);
    while (again(b, st, err));
    return st;
}

enum backend_status backend_events(struct backend *b, const char *name, struct job_event_list *out,
                                   struct api_error *err)
{
    NEED(events, "job events");
    enum backend_status st;
    do
        st = b->ops->events(b, name, out, err);
    while (again(b, st, err));
    return st;
}

enum backend_status backend_logs(struct backend *b, const char *name, const char *worker, long tail,
                                 bool follow, backend_data_fn fn, void *ctx, struct api_error *err)
{
    NEED(logs, "worker logs");
    enum backend_status st;
    do
        st = b->ops->logs(b, name, worker, tail, follow, fn, ctx, err);
    while (again(b, st, err));
    return st;
}

enum backend_status backend_logs_framed(struct backend *b, const char *name, const char *worker,
                                        long tail, const char *from, backend_data_fn fn, void *ctx,
                                        struct api_error *err)
{
    NEED(logs_framed, "resumable worker logs");
    enum backend_status st;
    do
        st = b->ops->logs_framed(b, name, worker, tail, from, fn, ctx, err);
    while (again(b, st, err));
    return st;
}

enum backend_status backend_no_scalars(const struct backend *b, struct api_error *err)
{
    api_error_set(err, 501, "Unsupported", "",
                  "TensorBoard scalars: not offered by this backend (%s at %s): use --logdir DIR "
                  "on a directory where the job's event files are mounted",
                  b->ops->name, b->endpoint);
    return BACKEND_REJECTED;
}

enum backend_status backend_scalars(struct backend *b, const char *name, const char *since,
                                    size_t limit, struct scalar_page *out, struct api_error *err)
{
    scalar_page_init(out);
    if (b->ops->scalars == NULL)
        return backend_no_scalars(b, err);
    enum backend_status st;
    do
        st = b->ops->scalars(b, name, since, limit, out, err);
    while (again(b, st, err));
    return st;
}

enum backend_status backend_scalars_follow(struct backend *b, const char *name, const char *since,
                                           backend_data_fn fn, void *ctx, struct api_error *err)
{
    if (b->ops->scalars_follow == NULL)
        return backend_no_scalars(b, err);
    enum backend_status st;
    do
        st = b->ops->scalars_follow(b, name, since, fn, ctx, err);
    while (again(b, st, err));
    return st;
}

/* Runs a batch operation BACKEND_MAX_BATCH names at a time, results appended in order. */
static enum backend_status
batched(struct backend *b,
        enum backend_status (*op)(struct backend *, const char *const *, size_t,
                                  struct batch_result *, struct api_error *),
        const char *const *names, size_t n, struct batch_result *out, struct api_error *err)
{
    memset(out, 0, sizeof *out);
    for (size_t done = 0; done < n;) {
        size_t chunk = n - done > BACKEND_MAX_BATCH ? BACKEND_MAX_BATCH : n - done;
        struct batch_result part;
        memset(&part, 0, sizeof part);
        enum backend_status st;
        do
            st = op(b, names + done, chunk, &part, err);
        while (again(b, st, err));
        if (st != BACKEND_OK) {
            batch_result_free(out);
            return st;
        }
        out->items = xreallocarray(out->items, out->count + part.count, sizeof *out->items);
        memcpy(out->items + out->count, part.items, part.count * sizeof *part.items);
        out->count += part.count;
        free(part.items);
        done += chunk;
    }
    return BACKEND_OK;
}

enum backend_status backend_stop(struct backend *b, const char *const *names, size_t n,
                                 struct batch_result *out, struct api_error *err)
{
    NEED(stop, "stopping jobs");
    return batched(b, b->ops->stop, names, n, out, err);
}

enum backend_status backend_start(struct backend *b, const char *name, struct jobspec *out,
                                  struct api_error *err)
{
    NEED(start, "starting a stopped job");
    enum backend_status st;
    do
        st = b->ops->start(b, name, out, err);
    while (again(b, st, err));
    return st;
}

enum backend_status backend_exec(struct backend *b, const char *name,
                                 const struct exec_request *rq, int *exit_code,
                                 struct api_error *err)
{
    NEED(exec, "running a command in a worker");
    return b->ops->exec(b, name, rq, exit_code, err);
}

enum backend_status backend_engine(struct backend *b, const char *verb, json_t **out,
                                   struct api_error *err)
{
    *out = NULL;
    NEED(engine, "asking the engine itself");
    return b->ops->engine(b, verb, out, err);
}

enum backend_status backend_mark_node(struct backend *b, const char *name, const char *node,
                                      bool unmark, struct jobspec *out, struct api_error *err)
{
    NEED(mark_node, unmark ? "unmarking a node for a job" : "marking a node for a job");
    enum backend_status st;
    do
        st = b->ops->mark_node(b, name, node, unmark, out, err);
    while (again(b, st, err));
    return st;
}

enum backend_status backend_delete(struct backend *b, const char *const *names, size_t n,
                                   struct batch_result *out, struct api_error *err)
{
    NEED(remove, "deleting jobs");
    return batched(b, b->ops->remove, names, n, out, err);
}

enum backend_status backend_watch(struct backend *b, backend_watch_fn fn, void *ctx,
                                  struct api_error *err)
{
    NEED(watch, "watching jobs");
    enum backend_status st;
    do
        st = b->ops->watch(b, fn, ctx, err);
    while (again(b, st, err));
    return st;
}

/* ---- calls that do not block -------------------------------------------- */

void backend_reply_init(struct backend_reply *r, enum backend_op op)
{
    memset(r, 0, sizeof *r);
    r->op = op;
    jobspec_init(&r->job);
}

void backend_reply_free(struct backend_reply *r)
{
    jobspec_free(&r->job);
    job_list_free(&r->list);
    worker_list_free(&r->workers);
    free(r->next_page_token);
    job_event_list_free(&r->events);
    batch_result_free(&r->batch);
    catalog_free(&r->catalog);
    scalar_page_free(&r->scalars);
    free(r->warning);
    backend_reply_init(r, r->op);
}

static char *dup_or_null(const char *s)
{
    return s ? xstrdup(s) : NULL;
}

/* The request with every string its own (freed by request_free). */
static void request_copy(struct backend_request *dst, const struct backend_request *src)
{
    *dst = *src;
    dst->name = dup_or_null(src->name);
    dst->worker = dup_or_null(src->worker);
    dst->node = dup_or_null(src->node);
    dst->since = dup_or_null(src->since);
    dst->from = dup_or_null(src->from);
    /* The job as JSON text: the caller's jobspec need not outlive the send (nor a resend). */
    dst->job = NULL;
    if (src->job) {
        json_t *j = jobspec_to_json(src->job);
        dst->job_json = json_dumps(j, JSON_COMPACT);
        json_decref(j);
        if (dst->job_json == NULL)
            xalloc_die();
    } else {
        dst->job_json = dup_or_null(src->job_json);
    }
    dst->query.page_token = dup_or_null(src->query.page_token);
    dst->query.filter = dup_or_null(src->query.filter);
    dst->query.name = dup_or_null(src->query.name);
    dst->update.display_name = dup_or_null(src->update.display_name);
    char **names = xcalloc(src->count ? src->count : 1, sizeof *names);
    for (size_t i = 0; i < src->count; i++)
        names[i] = xstrdup(src->names[i]);
    dst->names = (const char *const *)names;
}

static void request_free(struct backend_request *rq)
{
    free((char *)rq->name);
    free((char *)rq->worker);
    free((char *)rq->node);
    free((char *)rq->since);
    free((char *)rq->from);
    free(rq->job_json);
    free((char *)rq->query.page_token);
    free((char *)rq->query.filter);
    free((char *)rq->query.name);
    free((char *)rq->update.display_name);
    for (size_t i = 0; i < rq->count; i++)
        free((char *)rq->names[i]);
    free((char **)rq->names);
}

static void call_free(struct backend_call *c)
{
    if (c->timer)
        loop_cancel(http_multi_loop(c->m), c->timer);
    if (c->http)
        http_request_cancel(c->http);
    if (c->driver_free)
        c->driver_free(c->driver_data);
    request_free(&c->rq);
    backend_reply_free(&c->reply);
    free(c);
}

/* A call the backend cannot make ends from the loop, like every other. */
static void end_unsupported(void *ctx)
{
    struct backend_call *c = ctx;
    c->timer = 0;
    backend_call_done(c);
}

static void call_start(struct backend_call *c)
{
    backend_reply_free(&c->reply);
    if (c->b->ops->send == NULL) {
        c->reply.status = backend_unsupported(c->b, "calls that do not block", &c->reply.err);
        c->timer = loop_add_timer(http_multi_loop(c->m), 0, end_unsupported, c);
        return;
    }
    c->b->ops->send(c->b, c->m, c);
}

struct backend_call *backend_send(struct backend *b, struct http_multi *m,
                                  const struct backend_request *rq, backend_reply_fn fn,
                                  backend_watch_fn on_message, backend_data_fn on_data, void *ctx)
{
    struct backend_call *c = xcalloc(1, sizeof *c);
    c->b = b;
    c->m = m;
    request_copy(&c->rq, rq);
    backend_reply_init(&c->reply, rq->op);
    c->fn = fn;
    c->on_message = on_message;
    c->on_data = on_data;
    c->ctx = ctx;
    call_start(c);
    return c;
}

void backend_call_done(struct backend_call *c)
{
    c->http = NULL; /* ended: the driver's transfer is gone */
    if (c->cancelled) {
        call_free(c);
        return;
    }
    /*
     * The local engine gone: start it and make the same call again, once
     * per call — a screen open for days retries with new calls, and each
     * may find the engine gone again.
     */
    if (again_once(c->b, &c->revived, c->reply.status, &c->reply.err)) {
        if (c->driver_free)
            c->driver_free(c->driver_data);
        c->driver_data = NULL;
        c->driver_free = NULL;
        call_start(c);
        return;
    }
    c->in_callback = true;
    if (c->fn)
        c->fn(c->ctx, &c->reply);
    call_free(c);
}

void backend_call_cancel(struct backend_call *c)
{
    if (c == NULL || c->cancelled)
        return;
    c->cancelled = true;
    /* Inside a callback the transfer is ended by the driver (the callbacks answer "stop"). */
    if (!c->in_callback)
        call_free(c);
}

int backend_call_message(struct backend_call *c, const struct watch_message *m)
{
    if (c->cancelled)
        return 1;
    c->in_callback = true;
    int rc = c->on_message ? c->on_message(c->ctx, m) : 0;
    c->in_callback = false;
    return rc != 0 || c->cancelled;
}

int backend_call_data(struct backend_call *c, const char *data, size_t len)
{
    if (c->cancelled)
        return 1;
    c->in_callback = true;
    int rc = c->on_data ? c->on_data(c->ctx, data, len) : 0;
    c->in_callback = false;
    return rc != 0 || c->cancelled;
}
