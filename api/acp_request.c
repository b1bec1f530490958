/*
 * acp_request: the acp driver's requests — the paths of the ACP API and of
 * trainjobd's extras, one builder (acp_build) and one decoder (acp_decode)
 * per operation, and how a reply ended (acp_reply_status). acp.c makes the
 * calls with them, blocking or through the loop, so both ask and read
 * exactly the same.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/acp.h"
#include "api/acp_catalog.h"
#include "api/acp_priv.h"
#include "api/apierror.h"
#include "api/catalog_json.h"
#include "api/finding.h"
#include "api/jobspec_json.h"
#include "api/jsonbound.h"
#include "api/scalarpage.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#define ACP_PREFIX "/compute/acp/data/v2"
#define V1_PREFIX "/trainjob/v1"

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

/* /trainjob/v1/…/trainingJobs/{name}/workers/{worker}/{leaf}: a worker's logs, its exec. */
void acp_worker_path(const struct backend *b, const char *name, const char *worker,
                     const char *leaf, struct strbuf *p)
{
    v1_job_path(b, name, p);
    strbuf_adds(p, "/workers/");
    http_escape(p, worker);
    strbuf_addc(p, '/');
    strbuf_adds(p, leaf);
}

/* Appends "?key=value" or "&key=value" (value escaped); nothing for a NULL or empty value. */
void acp_query(struct strbuf *p, const char *key, const char *value)
{
    if (value == NULL || *value == '\0')
        return;
    strbuf_addc(p, strchr(strbuf_str(p), '?') ? '&' : '?');
    strbuf_adds(p, key);
    strbuf_addc(p, '=');
    http_escape(p, value);
}

/* ---- requests: one builder and one decoder per operation ---------------- */

void acp_request_free(struct acp_request *r)
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
    acp_query(&out->path, "update_mask", strbuf_str(&mask));
    strbuf_free(&mask);
}

/* Removes each of the n keys from obj (when it is a mapping). */
static void drop_keys(json_t *obj, const char *const *keys, size_t n)
{
    for (size_t i = 0; i < n; i++)
        json_object_del(obj, keys[i]);
}

#define DROP(obj, keys) drop_keys((obj), (keys), sizeof(keys) / sizeof(keys)[0])

/*
 * A job as a create takes it: without what the server sets (read-only in
 * ACP's schema: where the job lives, identity, ownership, state, times,
 * root_mapping, a spec's description/limits/requests, a pool's display name,
 * lme.current_retries; what GETs carry beyond the schema — a mount's
 * access_mode/display_name; trainjobd's state_message and counts), and
 * without per-spec replicas beside total_replicas (a GET reports both; a
 * create with both is refused). ACP is also spared workspace_name (the
 * path says it), metadata and trainjob's own scheduling.preemptible.
 * Fields trainjob does not know, and enum values it does not, are sent as
 * they came.
 */
static void strip_create_body(json_t *job, bool trainjobd)
{
    static const char *const top[] = {
        "subscription_name",
        "resource_group_name",
        "zone",
        "uid",
        "id",
        "ownership",
        "state",
        "state_message",
        "restart_count",
        "ready_workers",
        "faulty_workers",
        "nodes",
        "root_mapping",
        "create_time",
        "start_time",
        "suspend_time",
        "update_time",
        "complete_time",
        "delete_time",
    };
    static const char *const acp_top[] = {"workspace_name", "metadata"};
    static const char *const spec[] = {"description", "limits", "requests"};
    static const char *const mount[] = {"access_mode", "display_name"};
    static const char *const pool[] = {"display_name"};
    static const char *const scheduling[] = {"preemptible"};
    static const char *const lme[] = {"current_retries"};
    static const char *const replicas[] = {"replicas"};
    DROP(job, top);
    if (!trainjobd) {
        DROP(job, acp_top);
        DROP(json_object_get(job, "scheduling"), scheduling);
    }
    DROP(json_object_get(job, "resource_pool"), pool);
    DROP(json_object_get(job, "lme"), lme);
    size_t i, k;
    json_t *v, *r;
    json_array_foreach(json_object_get(job, "mount"), i, v) DROP(v, mount);
    json_array_foreach(json_object_get(job, "roles"), i, r)
    {
        bool total = json_object_get(r, "total_replicas") != NULL;
        json_array_foreach(json_object_get(r, "resource_spec"), k, v)
        {
            DROP(v, spec);
            if (total)
                DROP(v, replicas);
        }
    }
}

json_t *acp_create_body(const struct jobspec *job, bool trainjobd)
{
    json_t *body = jobspec_to_json(job);
    strip_create_body(body, trainjobd);
    return body;
}

/* An operation only trainjobd has, asked of ACP: says so, and how to say it is trainjobd. */
enum backend_status acp_lacks(const struct backend *b, const char *what, struct api_error *err)
{
    backend_unsupported(b, what, err);
    size_t n = strlen(err->message);
    snprintf(err->message + n, sizeof err->message - n,
             "; if %s is trainjobd, say `driver: trainjobd` in its context", b->endpoint);
    return BACKEND_REJECTED;
}

/* What rq asks of the server; an operation this server lacks fills err instead. */
enum backend_status acp_build(struct backend *b, const struct backend_request *rq,
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
        acp_query(&out->path, "page_size", n);
        acp_query(&out->path, "page_token", rq->query.page_token);
        acp_query(&out->path, "filter", rq->query.filter);
        acp_query(&out->path, "name", rq->query.name);
        /* trainjobd sends rows only when asked; ACP has no such view and gets no such word */
        acp_query(&out->path, "view", trainjobd && rq->query.basic ? "BASIC" : NULL);
        out->rows = trainjobd && rq->query.basic;
        break;
    case BACKEND_OP_UPDATE:
        update_request(b, rq, out);
        break;
    case BACKEND_OP_WORKERS:
        /* ACP's default page is 10 workers: ask for its maximum. */
        job_path(b, rq->name, &out->path);
        strbuf_adds(&out->path, "/workers?page_size=500");
        acp_query(&out->path, "page_token", rq->query.page_token);
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
            acp_query(&out->path, "training_job_name", json_string_value(name));
            if (json_is_object(out->body))
                strip_create_body(out->body, trainjobd);
        } else if (rq->job) {
            out->body = acp_create_body(rq->job, trainjobd);
            acp_query(&out->path, "training_job_name", rq->job->name);
        }
        break;
    case BACKEND_OP_CATALOG:
        if (!trainjobd)
            return acp_lacks(b, "the catalog", err);
        strbuf_adds(&out->path, V1_PREFIX "/catalog");
        break;
    case BACKEND_OP_CREATE_WORKSPACE:
        if (!trainjobd)
            return acp_lacks(b, "creating a workspace", err);
        out->method = "POST";
        strbuf_adds(&out->path, V1_PREFIX "/workspaces");
        out->body = json_pack("{s:s}", "name", rq->name ? rq->name : "");
        break;
    case BACKEND_OP_MARK_NODE:
    case BACKEND_OP_UNMARK_NODE:
        if (!trainjobd)
            return acp_lacks(b,
                             rq->op == BACKEND_OP_MARK_NODE ? "marking a node for a job"
                                                            : "unmarking a node for a job",
                             err);
        out->method = "POST";
        v1_job_path(b, rq->name, &out->path);
        strbuf_adds(&out->path, rq->op == BACKEND_OP_MARK_NODE ? ":markNode" : ":unmarkNode");
        out->body = json_pack("{s:s}", "node", rq->node ? rq->node : "");
        break;
    case BACKEND_OP_WATCH:
        if (!trainjobd)
            return acp_lacks(b, "watching jobs", err);
        collection(b, &out->path);
        acp_query(&out->path, "watch", "true");
        acp_query(&out->path, "view", rq->query.basic ? "BASIC" : NULL);
        out->stream = true;
        break;
    case BACKEND_OP_LOGS:
        if (!trainjobd) {
            /*
             * real ACP keeps worker logs in its Monitor service, read by
             * acp_logs.c (acp.c calls it, blocking or on the loop): what is
             * built here is trainjobd's stream, and its frames ACP has not.
             */
            return backend_unsupported(b, "resumable worker logs (frames)", err);
        }
        acp_worker_path(b, rq->name, rq->worker, "logs", &out->path);
        if (rq->tail >= 0)
            snprintf(n, sizeof n, "%ld", rq->tail);
        acp_query(&out->path, "tail", n);
        acp_query(&out->path, "follow", rq->follow ? "true" : NULL);
        acp_query(&out->path, "framed", rq->framed ? "true" : NULL);
        acp_query(&out->path, "from", rq->from);
        acp_query(&out->path, "times", rq->framed && rq->times ? "true" : NULL);
        out->stream = true;
        break;
    case BACKEND_OP_SCALARS:
        if (!trainjobd)
            return backend_no_scalars(b, err);
        v1_job_path(b, rq->name, &out->path);
        strbuf_adds(&out->path, "/scalars");
        acp_query(&out->path, "since", rq->since);
        if (rq->limit > 0)
            snprintf(n, sizeof n, "%zu", rq->limit);
        acp_query(&out->path, "limit", n);
        acp_query(&out->path, "follow", rq->follow ? "true" : NULL);
        n[0] = '\0';
        if (rq->chart > 0)
            snprintf(n, sizeof n, "%u", rq->chart);
        acp_query(&out->path, "chart", n);
        out->stream = rq->follow;
        out->scalars = !rq->follow;
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
 * What a refusal's message alone does not say: a 401's status and which
 * key to fix and how; a 429/503's status and how often it was asked.
 */
static void explain_status(const struct backend *b, const struct http_result *r,
                           struct api_error *err)
{
    char status[24];
    snprintf(status, sizeof status, "HTTP %d", r->status);
    bool said = strstr(err->message, status) != NULL;
    if (r->status == 401) {
        const char *ak = http_client_access_key(driver((struct backend *)b)->client);
        if (ak)
            api_error_append(
                err,
                " (%s: %s did not accept access key %s: check the context's access_key "
                "and its secret (secret_key_file, else $TRAINJOB_SECRET_KEY))",
                status, b->endpoint, ak);
        else
            api_error_append(err,
                             " (%s: requests to %s are not signed: set access_key and "
                             "secret_key_file in the context (or $TRAINJOB_SECRET_KEY))",
                             status, b->endpoint);
    } else if (r->status == 429 || r->status == 503) {
        api_error_append(err, " (%s%s, after %d tr%s)", said ? "" : status,
                         said ? "still refused" : "", r->tries ? r->tries : 1,
                         r->tries > 1 ? "ies" : "y");
    }
}

/*
 * How a request ended: a transport failure or a non-2xx reply fills err;
 * a 2xx reply of a non-stream gives its body as JSON in *json.
 */
enum backend_status acp_reply_status(const struct backend *b, const struct acp_request *rq,
                                     const struct http_result *r, json_t **json,
                                     struct api_error *err)
{
    *json = NULL;
    if (r->transport != TRANSPORT_NONE)
        return transport_error(b, r, err);
    if (r->status < 200 || r->status >= 300) {
        api_error_from_body(err, r->status, r->body.buf, r->body.len);
        explain_status(b, r, err);
        return BACKEND_REJECTED;
    }
    if (rq->stream || rq->rows || rq->scalars)
        return BACKEND_OK; /* the body is read as it comes, or by decode_reply in acp.c */
    struct strbuf why = STRBUF_INIT;
    *json = jsonbound_loadb(r->body.buf ? r->body.buf : "", r->body.len, 0, &why);
    if (*json == NULL) {
        /* Not JSON, or more than decoding it may take (api/jsonbound): refused either way. */
        api_error_set(err, r->status, "BadReply", "", "%s %s: %s", rq->method, b->endpoint,
                      strbuf_str(&why));
        strbuf_free(&why);
        return BACKEND_REJECTED;
    }
    strbuf_free(&why);
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
void acp_add_workers(const json_t *arr, struct worker_list *out)
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
enum backend_status acp_decode(const struct backend_request *rq, const json_t *reply,
                               struct backend_reply *out)
{
    const char *next;
    switch (rq->op) {
    case BACKEND_OP_GET:
    case BACKEND_OP_UPDATE:
    case BACKEND_OP_START:
    case BACKEND_OP_MARK_NODE:
    case BACKEND_OP_UNMARK_NODE:
    case BACKEND_OP_CREATE:
        return decode_job(reply, &out->job, &out->err);
    case BACKEND_OP_LIST:
        return decode_list(reply, &out->list, &out->err);
    case BACKEND_OP_WORKERS:
        acp_add_workers(json_object_get(reply, "workers"), &out->workers);
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
    case BACKEND_OP_CREATE_WORKSPACE:
    case BACKEND_OP_WATCH:
    case BACKEND_OP_LOGS:
        break;
    }
    return BACKEND_OK;
}
