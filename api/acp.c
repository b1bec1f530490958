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
 */
#include "api/acp.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/acp_catalog.h"
#include "api/backend.h"
#include "api/catalog_json.h"
#include "api/finding.h"
#include "api/http.h"
#include "api/http_multi.h"
#include "api/jobspec_json.h"
#include "api/jobsum.h"
#include "api/scalarpage.h"
#include "util/loop.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#define ACP_PREFIX "/compute/acp/data/v2"
#define V1_PREFIX "/trainjob/v1"
#define MAX_WORKER_PAGES 100

struct acp {
    struct http_client *client;
    bool trainjobd;
};

static struct acp *driver(struct backend *b)
{
    return b->driver;
}

/* ---- paths -------------------------------------------------------------- */

/* …/workspaces/{ws}/trainingJobs of the ACP API. */
static void collection(const struct backend *b, struct strbuf *p)
{
    const struct backend_target *t = &b->target;
    strbuf_adds(p, ACP_PREFIX "/subscriptions/");
    http_escape(p, t->subscription);
    strbuf_adds(p, "/resourceGroups/");
    http_escape(p, t->resource_group);
    strbuf_adds(p, "/zones/");
    http_escape(p, t->zone);
    strbuf_adds(p, "/workspaces/");
    http_escape(p, t->workspace);
    strbuf_adds(p, "/trainingJobs");
}

/* …/trainingJobs/{name} of the ACP API. */
static void job_path(const struct backend *b, const char *name, struct strbuf *p)
{
    collection(b, p);
    strbuf_addc(p, '/');
    http_escape(p, name);
}

/* /trainjob/v1/workspaces/{ws}/trainingJobs/{name}: trainjobd's extras. */
static void v1_job_path(const struct backend *b, const char *name, struct strbuf *p)
{
    strbuf_adds(p, V1_PREFIX "/workspaces/");
    http_escape(p, b->target.workspace);
    strbuf_adds(p, "/trainingJobs/");
    http_escape(p, name);
}

/* Appends "?key=value" or "&key=value" (value escaped); nothing for a NULL or empty value. */
static void query(struct strbuf *p, const char *key, const char *value)
{
    if (value == NULL || *value == '\0')
        return;
    strbuf_addc(p, strchr(strbuf_str(p), '?') ? '&' : '?');
    strbuf_adds(p, key);
    strbuf_addc(p, '=');
    http_escape(p, value);
}

/* ---- requests: one builder and one decoder per operation ---------------- */

/*
 * Every operation is a request (method, path, body) and a decoder of its
 * reply, shared by the blocking calls and the ones sent through the loop,
 * so both ask and read exactly the same.
 */
struct acp_request {
    const char *method;
    struct strbuf path;
    json_t *body; /* NULL: none */
    bool stream;
    bool rows; /* a page of trainjobd's summaries: read by api/jobsum, not as a tree */
};

static void acp_request_free(struct acp_request *r)
{
    strbuf_free(&r->path);
    json_decref(r->body);
}

/* {training_job_names:[…]} with the ACP path fields ACP's batch calls carry. */
static json_t *batch_body(const struct backend *b, const char *const *names, size_t n)
{
    json_t *list = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(list, json_string(names[i]));
    const struct backend_target *t = &b->target;
    return json_pack("{s:s, s:s, s:s, s:s, s:o}", "subscription_name", t->subscription,
                     "resource_group_name", t->resource_group, "zone", t->zone, "workspace_name",
                     t->workspace, "training_job_names", list);
}

/* PATCH body and update_mask: only display_name and scheduling.priority can change. */
static void update_request(const struct backend *b, const struct backend_request *rq,
                           struct acp_request *out)
{
    const struct job_update *u = &rq->update;
    out->method = "PATCH";
    out->body = json_object();
    struct strbuf mask = STRBUF_INIT;
    if (u->display_name) {
        json_object_set_new(out->body, "display_name", json_string(u->display_name));
        strbuf_adds(&mask, "display_name");
    }
    if (u->priority != PRIORITY_UNSPECIFIED) {
        json_object_set_new(
            out->body, "scheduling",
            json_pack("{s:s}", "priority", enum_name(&priority_names, (int)u->priority)));
        strbuf_addf(&mask, "%sscheduling.priority", mask.len ? "," : "");
    }
    job_path(b, rq->name, &out->path);
    query(&out->path, "update_mask", strbuf_str(&mask));
    strbuf_free(&mask);
}

/* Removes each of the n keys from obj (when it is a mapping). */
static void drop_keys(json_t *obj, const char *const *keys, size_t n)
{
    for (size_t i = 0; i < n; i++)
        json_object_del(obj, keys[i]);
}

/*
 * A job as ACP's create takes it: without what the server sets (read-only in
 * its schema: where the job lives, identity, ownership, state, times,
 * root_mapping, a spec's description/limits/requests, a pool's display name,
 * lme.current_retries, and what GETs carry beyond the schema — metadata, a
 * mount's access_mode/display_name), and without trainjob's own words
 * (scheduling.preemptible, trainjobd's state_message and counts). Fields
 * trainjob does not know are sent as they came.
 */
static void acp_create_body(json_t *job)
{
    static const char *const top[] = {
        "subscription_name",
        "resource_group_name",
        "zone",
        "workspace_name",
        "uid",
        "id",
        "ownership",
        "state",
        "state_message",
        "restart_count",
        "ready_workers",
        "faulty_workers",
        "root_mapping",
        "create_time",
        "start_time",
        "suspend_time",
        "update_time",
        "complete_time",
        "delete_time",
        "metadata",
    };
    static const char *const spec[] = {"description", "limits", "requests"};
    static const char *const mount[] = {"access_mode", "display_name"};
    static const char *const pool[] = {"display_name"};
    static const char *const scheduling[] = {"preemptible"};
    static const char *const lme[] = {"current_retries"};
    drop_keys(job, top, sizeof top / sizeof top[0]);
    drop_keys(json_object_get(job, "resource_pool"), pool, 1);
    drop_keys(json_object_get(job, "scheduling"), scheduling, 1);
    drop_keys(json_object_get(job, "lme"), lme, 1);
    size_t i, k;
    json_t *v, *r;
    json_array_foreach(json_object_get(job, "mount"), i, v)
        drop_keys(v, mount, sizeof mount / sizeof mount[0]);
    json_array_foreach(json_object_get(job, "roles"), i, r)
        json_array_foreach(json_object_get(r, "resource_spec"), k, v)
            drop_keys(v, spec, sizeof spec / sizeof spec[0]);
}

/* An operation only trainjobd has, asked of ACP: says so, and how to say it is trainjobd. */
static enum backend_status acp_lacks(const struct backend *b, const char *what,
                                     struct api_error *err)
{
    backend_unsupported(b, what, err);
    size_t n = strlen(err->message);
    snprintf(err->message + n, sizeof err->message - n,
             "; if %s is trainjobd, say `driver: trainjobd` in its context", b->endpoint);
    return BACKEND_REJECTED;
}

/* What rq asks of the server; an operation this server lacks fills err instead. */
static enum backend_status build(struct backend *b, const struct backend_request *rq,
                                 struct acp_request *out, struct api_error *err)
{
    memset(out, 0, sizeof *out);
    out->method = "GET";
    bool trainjobd = driver(b)->trainjobd;
    char n[24] = "";
    switch (rq->op) {
    case BACKEND_OP_GET:
        job_path(b, rq->name, &out->path);
        break;
    case BACKEND_OP_LIST:
        collection(b, &out->path);
        if (rq->query.page_size > 0)
            snprintf(n, sizeof n, "%d", rq->query.page_size);
        query(&out->path, "page_size", n);
        query(&out->path, "page_token", rq->query.page_token);
        query(&out->path, "filter", rq->query.filter);
        query(&out->path, "name", rq->query.name);
        /* trainjobd sends rows only when asked; ACP has no such view and gets no such word */
        query(&out->path, "view", trainjobd && rq->query.basic ? "BASIC" : NULL);
        out->rows = trainjobd && rq->query.basic;
        break;
    case BACKEND_OP_UPDATE:
        update_request(b, rq, out);
        break;
    case BACKEND_OP_WORKERS:
        /* ACP's default page is 10 workers: ask for its maximum. */
        job_path(b, rq->name, &out->path);
        strbuf_adds(&out->path, "/workers?page_size=500");
        query(&out->path, "page_token", rq->query.page_token);
        break;
    case BACKEND_OP_EVENTS:
        if (!trainjobd)
            return acp_lacks(b, "job events", err);
        v1_job_path(b, rq->name, &out->path);
        strbuf_adds(&out->path, "/events");
        break;
    case BACKEND_OP_STOP:
    case BACKEND_OP_DELETE:
        out->method = "POST";
        collection(b, &out->path);
        strbuf_adds(&out->path, rq->op == BACKEND_OP_STOP ? ":batchStop" : ":batchDelete");
        out->body = batch_body(b, rq->names, rq->count);
        break;
    case BACKEND_OP_START:
        /* ACP has no REST start. */
        if (!trainjobd)
            return acp_lacks(b, "starting a stopped job", err);
        out->method = "POST";
        v1_job_path(b, rq->name, &out->path);
        strbuf_adds(&out->path, ":start");
        break;
    case BACKEND_OP_CREATE:
        out->method = "POST";
        collection(b, &out->path);
        if (rq->job_json) {
            out->body = json_loads(rq->job_json, 0, NULL);
            json_t *name = json_object_get(out->body, "name");
            query(&out->path, "training_job_name", json_string_value(name));
        } else if (rq->job) {
            out->body = jobspec_to_json(rq->job);
            query(&out->path, "training_job_name", rq->job->name);
        }
        if (!trainjobd && json_is_object(out->body))
            acp_create_body(out->body);
        break;
    case BACKEND_OP_CATALOG:
        if (!trainjobd)
            return acp_lacks(b, "the catalog", err);
        strbuf_adds(&out->path, V1_PREFIX "/catalog");
        break;
    case BACKEND_OP_MARK_NODE:
        if (!trainjobd)
            return acp_lacks(b, "marking a node for a job", err);
        out->method = "POST";
        v1_job_path(b, rq->name, &out->path);
        strbuf_adds(&out->path, ":markNode");
        out->body = json_pack("{s:s}", "node", rq->node ? rq->node : "");
        break;
    case BACKEND_OP_WATCH:
        if (!trainjobd)
            return acp_lacks(b, "watching jobs", err);
        collection(b, &out->path);
        query(&out->path, "watch", "true");
        query(&out->path, "view", rq->query.basic ? "BASIC" : NULL);
        out->stream = true;
        break;
    case BACKEND_OP_LOGS:
        if (!trainjobd)
            return acp_lacks(b, "worker logs", err);
        v1_job_path(b, rq->name, &out->path);
        strbuf_adds(&out->path, "/workers/");
        http_escape(&out->path, rq->worker);
        strbuf_adds(&out->path, "/logs");
        if (rq->tail >= 0)
            snprintf(n, sizeof n, "%ld", rq->tail);
        query(&out->path, "tail", n);
        query(&out->path, "follow", rq->follow ? "true" : NULL);
        query(&out->path, "framed", rq->framed ? "true" : NULL);
        query(&out->path, "from", rq->from);
        out->stream = true;
        break;
    case BACKEND_OP_SCALARS:
        if (!trainjobd)
            return backend_no_scalars(b, err);
        v1_job_path(b, rq->name, &out->path);
        strbuf_adds(&out->path, "/scalars");
        query(&out->path, "since", rq->since);
        if (rq->limit > 0)
            snprintf(n, sizeof n, "%zu", rq->limit);
        query(&out->path, "limit", n);
        break;
    }
    return BACKEND_OK;
}

/* A transport failure as an api_error; returns the status to give back. */
static enum backend_status transport_error(const struct backend *b, const struct http_result *r,
                                           struct api_error *err)
{
    switch (r->transport) {
    case TRANSPORT_UNREACHABLE:
        api_error_set(err, 0, "Unreachable", "", "cannot reach %s: %s", b->endpoint, r->message);
        return BACKEND_UNREACHABLE;
    case TRANSPORT_TIMEOUT:
        api_error_set(err, 0, "Timeout", "", "%s did not answer in time: %s", b->endpoint,
                      r->message);
        return BACKEND_TRANSPORT;
    default:
        api_error_set(err, 0, "Transport", "", "talking to %s: %s", b->endpoint, r->message);
        return BACKEND_TRANSPORT;
    }
}

/*
 * How a request ended: a transport failure or a non-2xx reply fills err;
 * a 2xx reply of a non-stream gives its body as JSON in *json.
 */
static enum backend_status reply_status(const struct backend *b, const struct acp_request *rq,
                                        const struct http_result *r, json_t **json,
                                        struct api_error *err)
{
    *json = NULL;
    if (r->transport != TRANSPORT_NONE)
        return transport_error(b, r, err);
    if (r->status < 200 || r->status >= 300) {
        api_error_from_body(err, r->status, r->body.buf, r->body.len);
        return BACKEND_REJECTED;
    }
    if (rq->stream || rq->rows)
        return BACKEND_OK; /* the body is read as it comes, or by decode_reply */
    json_error_t jerr;
    *json = json_loadb(r->body.buf ? r->body.buf : "", r->body.len, 0, &jerr);
    if (*json == NULL) {
        api_error_set(err, r->status, "BadReply", "", "%s %s: the reply is not JSON: %s",
                      rq->method, b->endpoint, jerr.text);
        return BACKEND_REJECTED;
    }
    return BACKEND_OK;
}

/* A job from a reply (lenient: fields the server adds, or values we do not know, are skipped). */
static enum backend_status decode_job(const json_t *j, struct jobspec *out, struct api_error *err)
{
    jobspec_init(out);
    if (!json_is_object(j)) {
        api_error_set(err, 502, "BadReply", "", "expected a TrainingJob object in the reply");
        return BACKEND_REJECTED;
    }
    struct findings fs = FINDINGS_INIT;
    jobspec_from_json(j, JOBSPEC_LENIENT, out, &fs);
    findings_free(&fs);
    return BACKEND_OK;
}

static enum backend_status decode_list(const json_t *reply, struct job_list *out,
                                       struct api_error *err)
{
    json_t *jobs = json_object_get(reply, "training_jobs");
    if (jobs != NULL && !json_is_array(jobs)) {
        api_error_set(err, 502, "BadReply", "training_jobs",
                      "expected training_jobs to be a list in the reply");
        return BACKEND_REJECTED;
    }
    size_t n = json_array_size(jobs);
    out->jobs = xcalloc(n ? n : 1, sizeof *out->jobs);
    for (size_t i = 0; i < n; i++) {
        const json_t *j = json_array_get(jobs, i);
        if (!json_is_object(j))
            continue; /* not a job: skipped, as any field we do not know */
        struct api_error ignored;
        decode_job(j, &out->jobs[out->count++], &ignored);
    }
    const char *next = json_string_value(json_object_get(reply, "next_page_token"));
    out->next_page_token = next && *next ? xstrdup(next) : NULL;
    json_t *total = json_object_get(reply, "total_size");
    out->total_size = json_is_integer(total) ? (long)json_integer_value(total) : (long)out->count;
    return BACKEND_OK;
}

/* Appends the workers of one reply page to out. */
static void add_workers(const json_t *arr, struct worker_list *out)
{
    size_t n = json_array_size(arr);
    if (n == 0)
        return;
    out->workers = xreallocarray(out->workers, out->count + n, sizeof *out->workers);
    for (size_t i = 0; i < n; i++) {
        const json_t *w = json_array_get(arr, i);
        if (!json_is_object(w))
            continue;
        struct worker_info *wi = &out->workers[out->count++];
        memset(wi, 0, sizeof *wi);
        struct findings fs = FINDINGS_INIT;
        worker_info_from_json(w, wi, &fs);
        findings_free(&fs);
    }
}

static void decode_events(const json_t *reply, struct job_event_list *out)
{
    json_t *arr = json_object_get(reply, "events");
    size_t n = json_array_size(arr);
    out->events = xcalloc(n ? n : 1, sizeof *out->events);
    for (size_t i = 0; i < n; i++) {
        const json_t *e = json_array_get(arr, i);
        if (!json_is_object(e))
            continue;
        struct findings fs = FINDINGS_INIT;
        job_event_from_json(e, &out->events[out->count++], &fs);
        findings_free(&fs);
    }
}

/* trainjobd's {results:[{name, result}]}, matched by name so any order (or gaps) reads right. */
static void decode_batch(const json_t *reply, const char *const *names, size_t n,
                         struct batch_result *out)
{
    json_t *results = json_object_get(reply, "results");
    out->items = xcalloc(n ? n : 1, sizeof *out->items);
    out->count = n;
    for (size_t i = 0; i < n; i++) {
        out->items[i].name = xstrdup(names[i]);
        out->items[i].outcome = BATCH_UNKNOWN;
        size_t k;
        json_t *item;
        json_array_foreach(results, k, item)
        {
            const char *rn = json_string_value(json_object_get(item, "name"));
            const char *res = json_string_value(json_object_get(item, "result"));
            if (rn && res && strcmp(rn, names[i]) == 0) {
                out->items[i].result = xstrdup(res);
                out->items[i].outcome = batch_outcome_from(res);
                break;
            }
        }
    }
}

/* A 2xx reply into out by the operation asked. */
static enum backend_status decode(const struct backend_request *rq, const json_t *reply,
                                  struct backend_reply *out)
{
    const char *next;
    switch (rq->op) {
    case BACKEND_OP_GET:
    case BACKEND_OP_UPDATE:
    case BACKEND_OP_START:
    case BACKEND_OP_MARK_NODE:
    case BACKEND_OP_CREATE:
        return decode_job(reply, &out->job, &out->err);
    case BACKEND_OP_LIST:
        return decode_list(reply, &out->list, &out->err);
    case BACKEND_OP_WORKERS:
        add_workers(json_object_get(reply, "workers"), &out->workers);
        next = json_string_value(json_object_get(reply, "next_page_token"));
        out->next_page_token = next && *next && out->workers.count ? xstrdup(next) : NULL;
        return BACKEND_OK;
    case BACKEND_OP_EVENTS:
        decode_events(reply, &out->events);
        return BACKEND_OK;
    case BACKEND_OP_STOP:
    case BACKEND_OP_DELETE:
        decode_batch(reply, rq->names, rq->count, &out->batch);
        return BACKEND_OK;
    case BACKEND_OP_CATALOG:
        if (!json_is_object(reply)) {
            api_error_set(&out->err, 502, "BadReply", "", "expected the catalog as a mapping");
            return BACKEND_REJECTED;
        } else {
            struct findings fs = FINDINGS_INIT;
            catalog_from_json(reply, &out->catalog, &fs);
            findings_free(&fs);
        }
        return BACKEND_OK;
    case BACKEND_OP_SCALARS:
        return scalar_page_from_json(reply, &out->scalars, &out->err) == 0 ? BACKEND_OK
                                                                           : BACKEND_REJECTED;
    case BACKEND_OP_WATCH:
    case BACKEND_OP_LOGS:
        break;
    }
    return BACKEND_OK;
}

/* A 2xx reply into out: a page of summaries straight from its bytes, the rest from its tree. */
static enum backend_status decode_reply(const struct backend_request *rq,
                                        const struct acp_request *ar, const struct http_result *r,
                                        const json_t *json, struct backend_reply *out)
{
    if (ar->rows)
        return jobsum_page(r->body.buf, r->body.len, &out->list, &out->err) == 0 ? BACKEND_OK
                                                                                 : BACKEND_REJECTED;
    return decode(rq, json, out);
}

/* ---- blocking calls ------------------------------------------------------- */

/* One request and its reply, waiting for it (not for streams). */
static enum backend_status run(struct backend *b, const struct backend_request *rq,
                               struct backend_reply *out)
{
    backend_reply_init(out, rq->op);
    struct acp_request ar;
    out->status = build(b, rq, &ar, &out->err);
    if (out->status == BACKEND_OK) {
        char *text = ar.body ? json_dumps(ar.body, JSON_COMPACT) : NULL;
        struct http_result r;
        http_result_init(&r);
        http_call(driver(b)->client, ar.method, strbuf_str(&ar.path), text, text ? strlen(text) : 0,
                  &r);
        free(text);
        json_t *json;
        out->status = reply_status(b, &ar, &r, &json, &out->err);
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
    enum backend_status st = reply_status(b, &ar, &r, out, err);
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

static enum backend_status acp_stop(struct backend *b, const char *const *names, size_t n,
                                    struct batch_result *out, struct api_error *err)
{
    memset(out, 0, sizeof *out);
    struct backend_request rq = {.op = BACKEND_OP_STOP, .names = names, .count = n};
    RUN_INTO(b, &rq, batch, out, err);
}

static enum backend_status acp_delete(struct backend *b, const char *const *names, size_t n,
                                      struct batch_result *out, struct api_error *err)
{
    memset(out, 0, sizeof *out);
    struct backend_request rq = {.op = BACKEND_OP_DELETE, .names = names, .count = n};
    RUN_INTO(b, &rq, batch, out, err);
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
    json_t *j = json_loadb(text, len, 0, NULL);
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
        add_workers(workers, &m.workers);
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
    enum backend_status st = build(b, rq, &ar, err);
    if (st == BACKEND_OK) {
        struct http_result r;
        http_result_init(&r);
        http_stream(driver(b)->client, strbuf_str(&ar.path), fn, ctx, &r);
        json_t *none;
        st = reply_status(b, &ar, &r, &none, err);
        http_result_free(&r);
    }
    acp_request_free(&ar);
    return st;
}

static enum backend_status acp_logs(struct backend *b, const char *name, const char *worker,
                                    long tail, bool follow, backend_data_fn fn, void *ctx,
                                    struct api_error *err)
{
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
    c->reply.status = reply_status(c->b, &ac->ar, r, &json, &c->reply.err);
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

static void acp_send(struct backend *b, struct http_multi *m, struct backend_call *c)
{
    struct acp_call *ac = xcalloc(1, sizeof *ac);
    c->driver_data = ac;
    c->driver_free = acp_call_free;
    c->reply.status = build(b, &c->rq, &ac->ar, &c->reply.err);
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
    } else if (c->rq.op == BACKEND_OP_LOGS) {
        on_data = call_logs_data;
        data_ctx = c;
    }
    char *text = ac->ar.body ? json_dumps(ac->ar.body, JSON_COMPACT) : NULL;
    c->http = http_multi_start(m, driver(b)->client, ac->ar.method, strbuf_str(&ac->ar.path), text,
                               text ? strlen(text) : 0, on_data, data_ctx, call_done, c);
    free(text);
}

static void acp_free(struct backend *b)
{
    struct acp *a = driver(b);
    http_client_free(a->client);
    free(a);
}

static const struct backend_ops acp_ops = {
    .name = "acp",
    .catalog = acp_catalog,
    .create = acp_create,
    .get = acp_get,
    .list = acp_list,
    .update = acp_update,
    .workers = acp_workers,
    .events = acp_events,
    .logs = acp_logs,
    .logs_framed = acp_logs_framed,
    .stop = acp_stop,
    .start = acp_start,
    .remove = acp_delete,
    .watch = acp_watch,
    .scalars = acp_scalars,
    .send = acp_send,
    .free = acp_free,
};

struct backend *acp_backend_new(struct http_client *client, const struct backend_target *target,
                                bool trainjobd)
{
    struct acp *a = xcalloc(1, sizeof *a);
    a->client = client;
    a->trainjobd = trainjobd;
    return backend_new(&acp_ops, a, target, http_client_endpoint(client));
}
