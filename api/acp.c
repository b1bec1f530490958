/*
 * acp: the ACP driver; see acp.h for the paths.
 *
 * Each operation builds its path (every name escaped as a path segment,
 * every query value escaped), makes one call through api/http, and turns
 * the reply into api types: a 2xx JSON body decoded leniently, anything
 * else into a struct api_error (api_error_from_body), a transport failure
 * into BACKEND_UNREACHABLE / BACKEND_TRANSPORT with "cannot reach …".
 * Streams (logs, watch) hand data on as it arrives; watch splits it into
 * lines and each line into a struct watch_message.
 *
 * This file makes the calls (blocking, streams, through the loop) and holds
 * the ops table; the paths and each operation's builder and decoder are in
 * acp_request.c, real ACP's worker logs in acp_logs.c (api/acp_priv.h).
 */
#include "api/acp.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/acp_catalog.h"
#include "api/acp_logs.h"
#include "api/acp_priv.h"
#include "api/backend.h"
#include "api/catalog_json.h"
#include "api/context.h"
#include "api/drivers.h"
#include "api/exec.h"
#include "api/finding.h"
#include "api/http.h"
#include "api/http_multi.h"
#include "api/jobspec_json.h"
#include "api/jobsum.h"
#include "api/jsonbound.h"
#include "api/scalarpage.h"
#include "util/loop.h"
#include "util/strbuf.h"
#include "util/timefmt.h"
#include "util/xalloc.h"

#define MAX_WORKER_PAGES 100

/* A 2xx reply into out: a page of summaries straight from its bytes, the rest from its tree. */
static enum backend_status decode_reply(const struct backend_request *rq,
                                        const struct acp_request *ar, const struct http_result *r,
                                        const json_t *json, struct backend_reply *out)
{
    if (ar->rows)
        return jobsum_page(r->body.buf, r->body.len, &out->list, &out->err) == 0 ? BACKEND_OK
                                                                                 : BACKEND_REJECTED;
    if (ar->scalars)
        return scalar_page_from_text(r->body.buf ? r->body.buf : "", r->body.len, &out->scalars,
                                     &out->err) == 0
                   ? BACKEND_OK
                   : BACKEND_REJECTED;
    return acp_decode(rq, json, out);
}

/* ---- blocking calls ------------------------------------------------------- */

/* One request and its reply, waiting for it (not for streams). */
static enum backend_status run(struct backend *b, const struct backend_request *rq,
                               struct backend_reply *out)
{
    backend_reply_init(out, rq->op);
    struct acp_request ar;
    out->status = acp_build(b, rq, &ar, &out->err);
    if (out->status == BACKEND_OK) {
        char *text = ar.body ? json_dumps(ar.body, JSON_COMPACT) : NULL;
        struct http_result r;
        http_result_init(&r);
        http_call(driver(b)->client, ar.method, strbuf_str(&ar.path), text, text ? strlen(text) : 0,
                  &r);
        free(text);
        json_t *json;
        out->status = acp_reply_status(b, &ar, &r, &json, &out->err);
        if (out->status == BACKEND_OK)
            out->status = decode_reply(rq, &ar, &r, json, out);
        json_decref(json);
        http_result_free(&r);
    }
    acp_request_free(&ar);
    return out->status;
}

/* run, then the one member a caller wants moved out (or the error copied). */
#define RUN_INTO(b, rq, member, out, err)                                                          \
    do {                                                                                           \
        struct backend_reply reply_;                                                               \
        enum backend_status st_ = run((b), (rq), &reply_);                                         \
        if (st_ == BACKEND_OK) {                                                                   \
            *(out) = reply_.member;                                                                \
            memset(&reply_.member, 0, sizeof reply_.member);                                       \
        } else {                                                                                   \
            *(err) = reply_.err;                                                                   \
        }                                                                                          \
        backend_reply_free(&reply_);                                                               \
        return st_;                                                                                \
    } while (0)

/* GET path on the endpoint, the 2xx body as JSON in *out (the caller's). */
static enum backend_status get_json(struct backend *b, const char *path, json_t **out,
                                    struct api_error *err)
{
    struct acp_request ar = {.method = "GET", .path = STRBUF_INIT};
    struct http_result r;
    http_result_init(&r);
    http_call(driver(b)->client, "GET", path, NULL, 0, &r);
    enum backend_status st = acp_reply_status(b, &ar, &r, out, err);
    http_result_free(&r);
    return st;
}

/* One pool's specs, every page (up to 20); why they could not be read goes to why. */
static void acp_pool_specs(struct backend *b, struct catalog_pool *pool, struct strbuf *why)
{
    char *token = NULL;
    for (int page = 0; page < 20; page++) {
        struct strbuf path = STRBUF_INIT;
        acp_specs_path(&b->target, pool->zones[0], pool->name, token, &path);
        free(token);
        token = NULL;
        json_t *reply;
        struct api_error e;
        struct strbuf bad = STRBUF_INIT;
        if (get_json(b, strbuf_str(&path), &reply, &e) != BACKEND_OK)
            strbuf_addf(why, "%sthe specs of pool %s: %s", why->len ? "; " : "", pool->name,
                        e.message);
        else if (acp_catalog_add_specs(reply, pool, &bad) != 0)
            strbuf_addf(why, "%sthe specs of pool %s: %s", why->len ? "; " : "", pool->name,
                        strbuf_str(&bad));
        else if (json_string_value(json_object_get(reply, "next_page_token")) &&
                 *json_string_value(json_object_get(reply, "next_page_token")))
            token = xstrdup(json_string_value(json_object_get(reply, "next_page_token")));
        json_decref(reply);
        strbuf_free(&bad);
        strbuf_free(&path);
        if (token == NULL)
            break;
    }
    free(token);
}

/*
 * ACP's catalog, from what its public pages define (api/acp_catalog.c): the
 * workspace's pool bindings and each pool's specs, and the API's limits.
 * A list that cannot be read, or that no page defines, is marked unknown and
 * said in missing; the call succeeds with what there is.
 */
static enum backend_status acp_public_catalog(struct backend *b, struct catalog *out)
{
    acp_catalog_limits(out);
    out->unknown = CATALOG_UNKNOWN_WORKSPACES | CATALOG_UNKNOWN_ZONES | CATALOG_UNKNOWN_VOLUMES |
                   CATALOG_UNKNOWN_IMAGES;
    struct strbuf why = STRBUF_INIT, path = STRBUF_INIT, bad = STRBUF_INIT;
    acp_bindings_path(&b->target, &path);
    json_t *reply;
    struct api_error e;
    if (get_json(b, strbuf_str(&path), &reply, &e) != BACKEND_OK) {
        strbuf_addf(&why, "the workspace's pools: %s", e.message);
        out->unknown |= CATALOG_UNKNOWN_POOLS | CATALOG_UNKNOWN_SPECS;
    } else if (acp_catalog_add_bindings(reply, out, &bad) != 0) {
        strbuf_addf(&why, "the workspace's pools: %s", strbuf_str(&bad));
        out->unknown |= CATALOG_UNKNOWN_POOLS | CATALOG_UNKNOWN_SPECS;
    }
    json_decref(reply);
    size_t read_before = why.len;
    for (size_t i = 0; i < out->pool_count; i++)
        if (out->pools[i].zone_count)
            acp_pool_specs(b, &out->pools[i], &why);
    if (why.len > read_before)
        out->unknown |= CATALOG_UNKNOWN_SPECS;
    /* the workspace chosen, its pools those bound to it; the caller's role there is unknown */
    out->workspaces = xcalloc(1, sizeof *out->workspaces);
    out->workspace_count = 1;
    out->workspaces[0].name = xstrdup(b->target.workspace);
    out->workspaces[0].role = MEMBER;
    out->workspaces[0].pools = xcalloc(out->pool_count + 1, sizeof(char *));
    for (size_t i = 0; i < out->pool_count; i++)
        out->workspaces[0].pools[out->workspaces[0].pool_count++] = xstrdup(out->pools[i].name);
    strbuf_free(&path);
    strbuf_free(&bad);
    struct strbuf missing = STRBUF_INIT;
    strbuf_adds(&missing, "ACP lists no zones, VPCs, volumes or images: type them");
    if (why.len)
        strbuf_addf(&missing, "; could not read %s", strbuf_str(&why));
    out->missing = strbuf_detach(&missing, NULL);
    strbuf_free(&why);
    return BACKEND_OK;
}

static enum backend_status acp_catalog(struct backend *b, struct catalog *out,
                                       struct api_error *err)
{
    memset(out, 0, sizeof *out);
    if (!driver(b)->trainjobd)
        return acp_public_catalog(b, out);
    struct backend_request rq = {.op = BACKEND_OP_CATALOG};
    RUN_INTO(b, &rq, catalog, out, err);
}

/* POST …/trainingJobs?training_job_name=NAME with the job as the body. */
static enum backend_status acp_create(struct backend *b, const struct jobspec *job,
                                      struct jobspec *out, struct api_error *err)
{
    jobspec_init(out);
    struct backend_request rq = {.op = BACKEND_OP_CREATE, .job = job};
    RUN_INTO(b, &rq, job, out, err);
}

static enum backend_status acp_get(struct backend *b, const char *name, struct jobspec *out,
                                   struct api_error *err)
{
    struct backend_request rq = {.op = BACKEND_OP_GET, .name = name};
    RUN_INTO(b, &rq, job, out, err);
}

static enum backend_status acp_list(struct backend *b, const struct list_query *q,
                                    struct job_list *out, struct api_error *err)
{
    memset(out, 0, sizeof *out);
    struct backend_request rq = {.op = BACKEND_OP_LIST};
    if (q)
        rq.query = *q;
    RUN_INTO(b, &rq, list, out, err);
}

static enum backend_status acp_update(struct backend *b, const char *name,
                                      const struct job_update *u, struct jobspec *out,
                                      struct api_error *err)
{
    jobspec_init(out);
    struct backend_request rq = {.op = BACKEND_OP_UPDATE, .name = name, .update = *u};
    RUN_INTO(b, &rq, job, out, err);
}

/* Every page of the workers. */
static enum backend_status acp_workers(struct backend *b, const char *name, struct worker_list *out,
                                       struct api_error *err)
{
    memset(out, 0, sizeof *out);
    char *token = NULL;
    enum backend_status st = BACKEND_OK;
    for (int page = 0; page < MAX_WORKER_PAGES; page++) {
        struct backend_request rq = {.op = BACKEND_OP_WORKERS, .name = name};
        rq.query.page_token = token;
        struct backend_reply reply;
        st = run(b, &rq, &reply);
        free(token);
        token = NULL;
        if (st != BACKEND_OK) {
            *err = reply.err;
            backend_reply_free(&reply);
            break;
        }
        size_t n = out->count + reply.workers.count;
        out->workers = xreallocarray(out->workers, n ? n : 1, sizeof *out->workers);
        memcpy(out->workers + out->count, reply.workers.workers,
               reply.workers.count * sizeof *out->workers);
        out->count = n;
        free(reply.workers.workers);
        memset(&reply.workers, 0, sizeof reply.workers);
        token = reply.next_page_token;
        reply.next_page_token = NULL;
        backend_reply_free(&reply);
        if (token == NULL)
            break;
    }
    free(token);
    if (st != BACKEND_OK)
        worker_list_free(out);
    return st;
}

static enum backend_status acp_events(struct backend *b, const char *name,
                                      struct job_event_list *out, struct api_error *err)
{
    memset(out, 0, sizeof *out);
    struct backend_request rq = {.op = BACKEND_OP_EVENTS, .name = name};
    RUN_INTO(b, &rq, events, out, err);
}

/* The batch call itself: trainjobd says per name what it did; ACP says nothing per name. */
static enum backend_status batch_call(struct backend *b, enum backend_op op,
                                      const char *const *names, size_t n, struct batch_result *out,
                                      struct api_error *err)
{
    memset(out, 0, sizeof *out);
    struct backend_request rq = {.op = op, .names = names, .count = n};
    RUN_INTO(b, &rq, batch, out, err);
}

/*
 * Stop or delete. ACP's batch calls answer 200 whether or not a name is a
 * job (their reply has no per-name result), so on ACP each name is looked
 * up first: one it does not have is NOT_FOUND and left out of the call;
 * the others are sent, and read as the reply says (BATCH_UNKNOWN when it
 * says nothing: "requested").
 */
static enum backend_status acp_batch(struct backend *b, enum backend_op op,
                                     const char *const *names, size_t n, struct batch_result *out,
                                     struct api_error *err)
{
    if (driver(b)->trainjobd)
        return batch_call(b, op, names, n, out, err);
    memset(out, 0, sizeof *out);
    const char **found = xcalloc(n ? n : 1, sizeof *found);
    size_t nf = 0;
    enum backend_status st = BACKEND_OK;
    for (size_t i = 0; i < n && st == BACKEND_OK; i++) {
        struct jobspec job;
        struct api_error e;
        st = acp_get(b, names[i], &job, &e);
        if (st == BACKEND_OK) {
            found[nf++] = names[i];
            jobspec_free(&job);
        } else if (e.status == 404) {
            st = BACKEND_OK;
        } else {
            *err = e;
        }
    }
    struct batch_result sent = {0};
    if (st == BACKEND_OK && nf > 0)
        st = batch_call(b, op, found, nf, &sent, err);
    if (st == BACKEND_OK) {
        out->items = xcalloc(n ? n : 1, sizeof *out->items);
        out->count = n;
        for (size_t i = 0; i < n; i++) {
            struct batch_item *it = &out->items[i];
            it->name = xstrdup(names[i]);
            it->outcome = BATCH_NOT_FOUND;
            for (size_t k = 0; k < sent.count; k++)
                if (sent.items[k].name && strcmp(sent.items[k].name, names[i]) == 0) {
                    it->outcome = sent.items[k].outcome;
                    it->result = sent.items[k].result;
                    sent.items[k].result = NULL;
                    break;
                }
            if (it->outcome == BATCH_NOT_FOUND && it->result == NULL)
                it->result = xstrdup("NOT_FOUND");
        }
    }
    batch_result_free(&sent);
    free(found);
    return st;
}

static enum backend_status acp_stop(struct backend *b, const char *const *names, size_t n,
                                    struct batch_result *out, struct api_error *err)
{
    return acp_batch(b, BACKEND_OP_STOP, names, n, out, err);
}

static enum backend_status acp_delete(struct backend *b, const char *const *names, size_t n,
                                      struct batch_result *out, struct api_error *err)
{
    return acp_batch(b, BACKEND_OP_DELETE, names, n, out, err);
}

static enum backend_status acp_scalars(struct backend *b, const char *name, const char *since,
                                       size_t limit, struct scalar_page *out, struct api_error *err)
{
    struct backend_request rq = {
        .op = BACKEND_OP_SCALARS, .name = name, .since = since, .limit = limit};
    RUN_INTO(b, &rq, scalars, out, err);
}

static enum backend_status acp_start(struct backend *b, const char *name, struct jobspec *out,
                                     struct api_error *err)
{
    jobspec_init(out);
    struct backend_request rq = {.op = BACKEND_OP_START, .name = name};
    RUN_INTO(b, &rq, job, out, err);
}

static enum backend_status acp_mark_node(struct backend *b, const char *name, const char *node,
                                         bool unmark, struct jobspec *out, struct api_error *err)
{
    jobspec_init(out);
    struct backend_request rq = {
        .op = unmark ? BACKEND_OP_UNMARK_NODE : BACKEND_OP_MARK_NODE, .name = name, .node = node};
    RUN_INTO(b, &rq, job, out, err);
}

/* trainjobd's own route: GET /trainjob/v1/engine, or POST …/engine:VERB. */
static enum backend_status acp_engine(struct backend *b, const char *verb, json_t **out,
                                      struct api_error *err)
{
    struct acp_request ar = {.method = verb ? "POST" : "GET", .path = STRBUF_INIT};
    strbuf_adds(&ar.path, "/trainjob/v1/engine");
    if (verb)
        strbuf_addf(&ar.path, ":%s", verb);
    struct http_result r;
    http_result_init(&r);
    http_call(driver(b)->client, ar.method, strbuf_str(&ar.path), verb ? "{}" : NULL,
              verb ? 2 : 0, &r);
    enum backend_status st = acp_reply_status(b, &ar, &r, out, err);
    http_result_free(&r);
    strbuf_free(&ar.path);
    return st;
}

/* ---- streams -------------------------------------------------------------- */

/* A watch stream's partial line and where its messages go. */
struct watch_state {
    struct strbuf line; /* a message not yet ended by '\n' */
    backend_watch_fn fn;
    void *ctx;
    bool basic; /* summaries asked for (view=BASIC): JOB lines go through api/jobsum */
};

/* Decodes one NDJSON line; returns fn's answer (0 for lines skipped as unknown). */
static int watch_line(struct watch_state *ws, const char *text, size_t len)
{
    if (ws->basic) { /* a summary's JOB line (the whole first sync) without a tree */
        struct watch_message m;
        memset(&m, 0, sizeof m);
        struct api_error ignored;
        int got = jobsum_watch_line(text, len, &m.job, &ignored);
        m.kind = WATCH_JOB;
        int rc = got == 1 ? ws->fn(ws->ctx, &m) : 0;
        jobspec_free(&m.job);
        if (got != 0)
            return rc; /* decoded, or not JSON of a message: skipped as jansson's failures are */
    }
    struct strbuf why = STRBUF_INIT;
    json_t *j = jsonbound_loadb(text, len, 0, &why); /* a message too large is skipped */
    strbuf_free(&why);
    const char *type = json_string_value(json_object_get(j, "type"));
    if (type == NULL) {
        json_decref(j);
        return 0;
    }
    struct watch_message m;
    memset(&m, 0, sizeof m);
    jobspec_init(&m.job);
    struct findings fs = FINDINGS_INIT;
    bool known = true;
    if (strcmp(type, "JOB") == 0) {
        m.kind = WATCH_JOB;
        json_t *job = json_object_get(j, "job");
        if (json_is_object(job))
            jobspec_from_json(job, JOBSPEC_LENIENT, &m.job, &fs);
        json_t *workers = json_object_get(j, "workers");
        m.has_workers = json_is_array(workers);
        acp_add_workers(workers, &m.workers);
    } else if (strcmp(type, "EVENT") == 0) {
        m.kind = WATCH_EVENT;
        json_t *ev = json_object_get(j, "event");
        if (json_is_object(ev))
            job_event_from_json(ev, &m.event, &fs);
    } else if (strcmp(type, "DELETED") == 0) {
        m.kind = WATCH_DELETED;
        json_t *job = json_object_get(j, "job");
        const char *name = json_string_value(json_object_get(job, "name"));
        const char *uid = json_string_value(json_object_get(job, "uid"));
        m.job.name = name ? xstrdup(name) : NULL;
        m.job.uid = uid ? xstrdup(uid) : NULL;
    } else if (strcmp(type, "SYNCED") == 0) {
        m.kind = WATCH_SYNCED;
    } else {
        known = false; /* a message kind from a newer server */
    }
    findings_free(&fs);
    json_decref(j);
    int rc = known ? ws->fn(ws->ctx, &m) : 0;
    jobspec_free(&m.job);
    worker_list_free(&m.workers);
    job_event_free(&m.event);
    return rc;
}

int acp_watch_decode(const char *line, size_t len, backend_watch_fn fn, void *ctx)
{
    struct watch_state ws = {STRBUF_INIT, fn, ctx, false};
    return watch_line(&ws, line, len);
}

/* http_data_fn for watch: splits the stream into lines. */
static int watch_data(void *ctx, const char *data, size_t len)
{
    struct watch_state *ws = ctx;
    strbuf_add(&ws->line, data, len);
    size_t start = 0;
    int rc = 0;
    for (size_t i = 0; i < ws->line.len && rc == 0; i++) {
        if (ws->line.buf[i] != '\n')
            continue;
        if (i > start)
            rc = watch_line(ws, ws->line.buf + start, i - start);
        start = i + 1;
    }
    size_t rest = ws->line.len - start;
    memmove(ws->line.buf, ws->line.buf + start, rest);
    strbuf_truncate(&ws->line, rest);
    return rc;
}

/* A last line the server ended the stream without its '\n'. */
static void watch_flush(struct watch_state *ws)
{
    if (ws->line.len > 0)
        watch_line(ws, ws->line.buf, ws->line.len);
    strbuf_reset(&ws->line);
}

/* A stream, blocking: the 2xx body to fn as it arrives; an error reply becomes err. */
static enum backend_status stream(struct backend *b, const struct backend_request *rq,
                                  http_data_fn fn, void *ctx, struct api_error *err)
{
    struct acp_request ar;
    enum backend_status st = acp_build(b, rq, &ar, err);
    if (st == BACKEND_OK) {
        struct http_result r;
        http_result_init(&r);
        http_stream(driver(b)->client, strbuf_str(&ar.path), fn, ctx, &r);
        json_t *none;
        st = acp_reply_status(b, &ar, &r, &none, err);
        http_result_free(&r);
    }
    acp_request_free(&ar);
    return st;
}

/* Will a job in state s (or gone: 404) log nothing more? */
static bool job_over(enum job_state s, int get_status)
{
    if (get_status != 0)
        return get_status == 404; /* gone: nothing more will be logged */
    return s == JOB_STATE_SUCCEEDED || s == JOB_STATE_FAILED || s == JOB_STATE_SUSPENDED ||
           s == JOB_STATE_DELETED;
}

/* Has job (a struct job_of_logs) ended? Asked of ACP while a log is followed. */
struct job_of_logs {
    struct backend *b;
    const char *name;
};

static bool job_ended(void *ctx)
{
    struct job_of_logs *j = ctx;
    struct jobspec job;
    struct api_error e;
    if (acp_get(j->b, j->name, &job, &e) != BACKEND_OK)
        return job_over(JOB_STATE_UNSPECIFIED, e.status ? e.status : -1);
    enum job_state s = job.state;
    jobspec_free(&job);
    return job_over(s, 0);
}

/*
 * Real ACP's worker logs: from the Monitor service (api/acp_logs.c), since a
 * minute before the job was created (a week back when ACP does not say when).
 */
static enum backend_status acp_monitor_logs(struct backend *b, const char *name, const char *worker,
                                            long tail, bool follow, backend_data_fn fn, void *ctx,
                                            struct api_error *err)
{
    struct acp *a = driver(b);
    if (a->monitor.client == NULL)
        return acp_lacks(b, "worker logs", err);
    struct jobspec job;
    enum backend_status st = acp_get(b, name, &job, err);
    if (st != BACKEND_OK)
        return st;
    int64_t since = acp_logs_since(job.create_time);
    jobspec_free(&job);
    struct job_of_logs j = {b, name};
    return acp_logs_read(&a->monitor, http_client_endpoint(a->monitor.client), &b->target, worker,
                         tail, follow, since, job_ended, &j, fn, ctx, err);
}

static enum backend_status acp_logs(struct backend *b, const char *name, const char *worker,
                                    long tail, bool follow, backend_data_fn fn, void *ctx,
                                    struct api_error *err)
{
    if (!driver(b)->trainjobd)
        return acp_monitor_logs(b, name, worker, tail, follow, fn, ctx, err);
    struct backend_request rq = {
        .op = BACKEND_OP_LOGS, .name = name, .worker = worker, .tail = tail, .follow = follow};
    return stream(b, &rq, fn, ctx, err);
}

static enum backend_status acp_logs_framed(struct backend *b, const char *name, const char *worker,
                                           long tail, const char *from, backend_data_fn fn,
                                           void *ctx, struct api_error *err)
{
    struct backend_request rq = {.op = BACKEND_OP_LOGS,
                                 .name = name,
                                 .worker = worker,
                                 .tail = tail,
                                 .follow = true,
                                 .framed = true,
                                 .from = from};
    return stream(b, &rq, fn, ctx, err);
}

static enum backend_status acp_scalars_follow(struct backend *b, const char *name,
                                              const char *since, backend_data_fn fn, void *ctx,
                                              struct api_error *err)
{
    struct backend_request rq = {
        .op = BACKEND_OP_SCALARS, .name = name, .since = since, .follow = true};
    return stream(b, &rq, fn, ctx, err);
}

static enum backend_status acp_watch(struct backend *b, backend_watch_fn fn, void *ctx,
                                     struct api_error *err)
{
    struct backend_request rq = {.op = BACKEND_OP_WATCH};
    struct watch_state ws = {STRBUF_INIT, fn, ctx, false};
    enum backend_status st = stream(b, &rq, watch_data, &ws, err);
    if (st == BACKEND_OK)
        watch_flush(&ws);
    strbuf_free(&ws.line);
    return st;
}

/* ---- calls through the loop ------------------------------------------------ */

/* What a call in flight keeps: its request (for the decoder) and a watch's partial line. */
struct acp_call {
    struct acp_request ar;
    struct watch_state ws;
};

static void acp_call_free(void *p)
{
    struct acp_call *ac = p;
    acp_request_free(&ac->ar);
    strbuf_free(&ac->ws.line);
    free(ac);
}

static int call_watch_message(void *ctx, const struct watch_message *m)
{
    return backend_call_message(ctx, m);
}

static int call_logs_data(void *ctx, const char *data, size_t len)
{
    return backend_call_data(ctx, data, len);
}

/* http_done_fn: the reply decoded into the call, which then ends. */
static void call_done(void *ctx, struct http_result *r)
{
    struct backend_call *c = ctx;
    struct acp_call *ac = c->driver_data;
    json_t *json;
    c->reply.status = acp_reply_status(c->b, &ac->ar, r, &json, &c->reply.err);
    if (c->reply.status == BACKEND_OK && !ac->ar.stream)
        c->reply.status = decode_reply(&c->rq, &ac->ar, r, json, &c->reply);
    json_decref(json);
    if (c->rq.op == BACKEND_OP_WATCH && c->reply.status == BACKEND_OK && !c->cancelled)
        watch_flush(&ac->ws);
    backend_call_done(c);
}

/* A request that cannot be made ends from the loop. */
static void call_refused(void *ctx)
{
    struct backend_call *c = ctx;
    c->timer = 0;
    backend_call_done(c);
}

/*
 * Real ACP's worker logs through the loop: the steps of acp_monitor_logs
 * without blocking — GET the job (its create_time), then the Monitor
 * service's pages (api/acp_logs.h's steps); with follow a loop timer asks
 * again every poll_ms, each poll after a GET that tells whether the job has
 * ended. The transfer in flight is c->http and the wait c->timer, so
 * cancelling the call (backend.c) ends either.
 */
struct monitor_call {
    struct acp_request ar; /* the job's GET */
    struct acp_logs *logs; /* NULL until the job's create_time is known */
};

static void monitor_call_free(void *p)
{
    struct monitor_call *mc = p;
    acp_request_free(&mc->ar);
    acp_logs_free(mc->logs);
    free(mc);
}

static void monitor_job_done(void *ctx, struct http_result *r);
static void monitor_page_done(void *ctx, struct http_result *r);

/* GET the job: for its create_time, and before each poll for whether it has ended. */
static void monitor_ask_job(struct backend_call *c)
{
    struct monitor_call *mc = c->driver_data;
    c->http = http_multi_start(c->m, driver(c->b)->client, mc->ar.method, strbuf_str(&mc->ar.path),
                               NULL, 0, NULL, NULL, monitor_job_done, c);
}

/* POST the next page of the log. */
static void monitor_ask_page(struct backend_call *c)
{
    struct monitor_call *mc = c->driver_data;
    char *body = acp_logs_request_body(mc->logs);
    c->http = http_multi_start(c->m, driver(c->b)->monitor.client, "POST",
                               acp_logs_request_path(mc->logs), body, strlen(body), NULL, NULL,
                               monitor_page_done, c);
    free(body);
}

static void monitor_poll(void *ctx)
{
    struct backend_call *c = ctx;
    c->timer = 0;
    monitor_ask_job(c);
}

static void monitor_job_done(void *ctx, struct http_result *r)
{
    struct backend_call *c = ctx;
    struct monitor_call *mc = c->driver_data;
    c->http = NULL;
    json_t *json;
    struct api_error e;
    memset(&e, 0, sizeof e);
    enum backend_status st = acp_reply_status(c->b, &mc->ar, r, &json, &e);
    struct backend_reply job;
    backend_reply_init(&job, BACKEND_OP_GET);
    struct backend_request get = {.op = BACKEND_OP_GET, .name = c->rq.name};
    if (st == BACKEND_OK)
        st = acp_decode(&get, json, &job);
    json_decref(json);
    if (mc->logs) { /* a poll: asked whether the job has ended (an error: not known, go on) */
        acp_logs_poll(mc->logs, st == BACKEND_OK
                                    ? job_over(job.job.state, 0)
                                    : job_over(JOB_STATE_UNSPECIFIED, e.status ? e.status : -1));
        backend_reply_free(&job);
        monitor_ask_page(c);
        return;
    }
    struct acp *a = driver(c->b);
    if (st == BACKEND_OK)
        st = acp_logs_begin(&mc->logs, &a->monitor, http_client_endpoint(a->monitor.client),
                            &c->b->target, c->rq.worker, c->rq.tail, c->rq.follow,
                            acp_logs_since(job.job.create_time), call_logs_data, c, &e);
    backend_reply_free(&job);
    if (st != BACKEND_OK) {
        c->reply.status = st;
        c->reply.err = e;
        backend_call_done(c);
        return;
    }
    monitor_ask_page(c);
}

static void monitor_page_done(void *ctx, struct http_result *r)
{
    struct backend_call *c = ctx;
    struct monitor_call *mc = c->driver_data;
    c->http = NULL;
    enum backend_status st;
    switch (acp_logs_reply(mc->logs, r, &st, &c->reply.err)) {
    case ACP_LOGS_ASK:
        monitor_ask_page(c);
        return;
    case ACP_LOGS_POLL:
        c->timer =
            loop_add_timer(http_multi_loop(c->m), acp_logs_poll_ms(mc->logs), monitor_poll, c);
        return;
    case ACP_LOGS_END:
        break;
    }
    c->reply.status = st;
    backend_call_done(c);
}

/* Starts reading real ACP's worker logs for c (see struct monitor_call). */
static void monitor_send(struct backend *b, struct backend_call *c)
{
    struct monitor_call *mc = xcalloc(1, sizeof *mc);
    c->driver_data = mc;
    c->driver_free = monitor_call_free;
    struct backend_request get = {.op = BACKEND_OP_GET, .name = c->rq.name};
    if (driver(b)->monitor.client == NULL)
        c->reply.status = acp_lacks(b, "worker logs", &c->reply.err);
    else
        c->reply.status = acp_build(b, &get, &mc->ar, &c->reply.err);
    if (c->reply.status != BACKEND_OK) {
        c->timer = loop_add_timer(http_multi_loop(c->m), 0, call_refused, c);
        return;
    }
    monitor_ask_job(c);
}

static void acp_send(struct backend *b, struct http_multi *m, struct backend_call *c)
{
    if (c->rq.op == BACKEND_OP_LOGS && !c->rq.framed && !driver(b)->trainjobd) {
        monitor_send(b, c);
        return;
    }
    struct acp_call *ac = xcalloc(1, sizeof *ac);
    c->driver_data = ac;
    c->driver_free = acp_call_free;
    c->reply.status = acp_build(b, &c->rq, &ac->ar, &c->reply.err);
    if (c->reply.status != BACKEND_OK) {
        c->timer = loop_add_timer(http_multi_loop(m), 0, call_refused, c);
        return;
    }
    http_data_fn on_data = NULL;
    void *data_ctx = NULL;
    if (c->rq.op == BACKEND_OP_WATCH) {
        ac->ws.fn = call_watch_message;
        ac->ws.basic = c->rq.query.basic;
        ac->ws.ctx = c;
        on_data = watch_data;
        data_ctx = &ac->ws;
    } else if (c->rq.op == BACKEND_OP_LOGS || (c->rq.op == BACKEND_OP_SCALARS && c->rq.follow)) {
        on_data = call_logs_data;
        data_ctx = c;
    }
    char *text = ac->ar.body ? json_dumps(ac->ar.body, JSON_COMPACT) : NULL;
    c->http = http_multi_start(m, driver(b)->client, ac->ar.method, strbuf_str(&ac->ar.path), text,
                               text ? strlen(text) : 0, on_data, data_ctx, call_done, c);
    free(text);
}

/*
 * trainjobd: through its Unix socket (api/exec.h). Real ACP: its OpenAPI
 * has no exec; its own CLI opens a terminal in a worker, so the error
 * names that command.
 */
static enum backend_status acp_exec(struct backend *b, const char *name,
                                    const struct exec_request *rq, int *exit_code,
                                    struct api_error *err)
{
    if (!driver(b)->trainjobd) {
        api_error_set(err, 501, "Unsupported", "",
                      "exec: SenseCore ACP's OpenAPI has no way to run a command in a worker; "
                      "its own CLI opens a terminal in one: sco acp jobs exec %s --worker-name %s",
                      name, rq->worker ? rq->worker : "WORKER");
        return BACKEND_REJECTED;
    }
    const struct http_endpoint *ep = http_client_parsed(driver(b)->client);
    if (ep->unix_path == NULL) {
        api_error_set(err, 501, "Unsupported", "",
                      "exec: the engine at %s is reached over TCP, and a terminal passes only "
                      "over its Unix socket (an http+unix:// endpoint)",
                      b->endpoint);
        return BACKEND_REJECTED;
    }
    char *worker = NULL;
    enum backend_status st = exec_choose_worker(b, name, rq->worker, &worker, err);
    if (st != BACKEND_OK)
        return st;
    struct strbuf path = STRBUF_INIT;
    acp_worker_path(b, name, worker, "exec", &path);
    st = exec_upgrade(ep->unix_path, strbuf_str(&path), rq, exit_code, err);
    strbuf_free(&path);
    free(worker);
    return st;
}

static void acp_free(struct backend *b)
{
    struct acp *a = driver(b);
    http_client_free(a->client);
    if (a->monitor.client)
        http_client_free(a->monitor.client);
    free(a->monitor.station);
    free(a);
}

/* The operations trainjobd and real ACP share (one driver; acp.c asks which it talks to). */
#define ACP_OPS                                                                                    \
    .name = "acp", .catalog = acp_catalog, .create = acp_create, .get = acp_get, .list = acp_list, \
    .update = acp_update, .workers = acp_workers, .events = acp_events, .logs = acp_logs,          \
    .stop = acp_stop, .start = acp_start, .remove = acp_delete, .mark_node = acp_mark_node,        \
    .watch = acp_watch,                                                                            \
    .scalars = acp_scalars, .scalars_follow = acp_scalars_follow, .send = acp_send,                \
    .exec = acp_exec, .free = acp_free

/* trainjobd: every operation, its logs also resumable in frames (engine/logfollow.h). */
static const struct backend_ops trainjobd_ops = {ACP_OPS, .logs_framed = acp_logs_framed,
                                                 .engine = acp_engine};

/*
 * Real ACP: its worker logs come from the Monitor service unframed, so a
 * caller that would take frames (the log pane, `logs -f`) sees they are not
 * offered and asks for plain logs.
 */
static const struct backend_ops acp_ops = {ACP_OPS};

struct backend *acp_backend_new(struct http_client *client, const struct backend_target *target,
                                bool trainjobd)
{
    struct acp *a = xcalloc(1, sizeof *a);
    a->client = client;
    a->trainjobd = trainjobd;
    return backend_new(trainjobd ? &trainjobd_ops : &acp_ops, a, target,
                       http_client_endpoint(client));
}

void acp_set_monitor(struct backend *b, struct http_client *monitor, const char *station,
                     long poll_ms)
{
    struct acp *a = driver(b);
    if (a->monitor.client)
        http_client_free(a->monitor.client);
    free(a->monitor.station);
    a->monitor.client = monitor;
    a->monitor.station = station ? xstrdup(station) : NULL;
    a->monitor.poll_ms = poll_ms;
}

/* The driver table's entry (api/drivers.c): SenseCore ACP, and trainjobd, which speaks it. */
static struct backend *acp_open(struct http_client *client, const struct resolved_context *rc,
                                struct strbuf *err)
{
    const struct context *c = &rc->ctx;
    if (c->access_key && rc->secret_key)
        http_client_set_keys(client, c->access_key, rc->secret_key);
    struct backend_target t = {c->subscription, c->resource_group, c->zone, c->workspace};
    /* The context says which server this is; a loopback host may be a tunnel to SenseCore. */
    bool trainjobd = c->driver == CONTEXT_DRIVER_TRAINJOBD;
    struct backend *b = acp_backend_new(client, &t, trainjobd);
    if (c->driver == CONTEXT_DRIVER_ACP) {
        /* ACP keeps worker logs in its Monitor service: same keys, its own host */
        const char *mon = c->monitor_endpoint ? c->monitor_endpoint : ACP_MONITOR_DEFAULT;
        struct strbuf why = STRBUF_INIT;
        struct http_client *mc = http_client_new(mon, &why);
        if (mc == NULL) {
            strbuf_addf(err, "context '%s': monitor_endpoint: %s", c->name, strbuf_str(&why));
            strbuf_free(&why);
            backend_free(b);
            return NULL;
        }
        strbuf_free(&why);
        if (c->access_key && rc->secret_key)
            http_client_set_keys(mc, c->access_key, rc->secret_key);
        acp_set_monitor(b, mc, c->telemetry_station, ACP_LOGS_POLL_MS);
    }
    return b;
}

const struct backend_driver acp_driver = {acp_open, true};
