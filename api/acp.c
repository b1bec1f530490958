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

#include "api/backend.h"
#include "api/catalog_json.h"
#include "api/finding.h"
#include "api/http.h"
#include "api/jobspec_json.h"
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

/* ---- calls -------------------------------------------------------------- */

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
 * One request with an optional JSON body; on a 2xx reply *reply (when not
 * NULL) gets the parsed body. Every other outcome fills err.
 */
static enum backend_status call(struct backend *b, const char *method, const struct strbuf *path,
                                const json_t *body, json_t **reply, struct api_error *err)
{
    char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    struct http_result r;
    http_result_init(&r);
    int rc =
        http_call(driver(b)->client, method, strbuf_str(path), text, text ? strlen(text) : 0, &r);
    free(text);
    enum backend_status st = BACKEND_OK;
    if (rc != 0) {
        st = transport_error(b, &r, err);
    } else if (r.status < 200 || r.status >= 300) {
        api_error_from_body(err, r.status, r.body.buf, r.body.len);
        st = BACKEND_REJECTED;
    } else if (reply) {
        json_error_t jerr;
        *reply = json_loadb(r.body.buf ? r.body.buf : "", r.body.len, 0, &jerr);
        if (*reply == NULL) {
            api_error_set(err, r.status, "BadReply", "", "%s %s: the reply is not JSON: %s", method,
                          b->endpoint, jerr.text);
            st = BACKEND_REJECTED;
        }
    }
    http_result_free(&r);
    return st;
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

/* A call whose reply is one job. */
static enum backend_status job_call(struct backend *b, const char *method,
                                    const struct strbuf *path, const json_t *body,
                                    struct jobspec *out, struct api_error *err)
{
    json_t *reply = NULL;
    enum backend_status st = call(b, method, path, body, &reply, err);
    if (st == BACKEND_OK)
        st = decode_job(reply, out, err);
    json_decref(reply);
    return st;
}

/* ---- operations --------------------------------------------------------- */

/* GET /trainjob/v1/catalog (trainjobd only). */
static enum backend_status acp_catalog(struct backend *b, struct catalog *out,
                                       struct api_error *err)
{
    memset(out, 0, sizeof *out);
    if (!driver(b)->trainjobd)
        return backend_unsupported(b, "the catalog", err);
    struct strbuf p = STRBUF_INIT;
    strbuf_adds(&p, V1_PREFIX "/catalog");
    json_t *reply = NULL;
    enum backend_status st = call(b, "GET", &p, NULL, &reply, err);
    strbuf_free(&p);
    if (st == BACKEND_OK) {
        struct findings fs = FINDINGS_INIT;
        if (!json_is_object(reply)) {
            api_error_set(err, 502, "BadReply", "", "expected the catalog as a mapping");
            st = BACKEND_REJECTED;
        } else {
            catalog_from_json(reply, out, &fs);
        }
        findings_free(&fs);
    }
    json_decref(reply);
    return st;
}

/* POST …/trainingJobs?training_job_name=NAME with the job as the body. */
static enum backend_status acp_create(struct backend *b, const struct jobspec *job,
                                      struct jobspec *out, struct api_error *err)
{
    struct strbuf p = STRBUF_INIT;
    collection(b, &p);
    query(&p, "training_job_name", job->name);
    json_t *body = jobspec_to_json(job);
    enum backend_status st = job_call(b, "POST", &p, body, out, err);
    json_decref(body);
    strbuf_free(&p);
    return st;
}

/* GET …/trainingJobs/{name}. */
static enum backend_status acp_get(struct backend *b, const char *name, struct jobspec *out,
                                   struct api_error *err)
{
    struct strbuf p = STRBUF_INIT;
    job_path(b, name, &p);
    enum backend_status st = job_call(b, "GET", &p, NULL, out, err);
    strbuf_free(&p);
    return st;
}

/* GET …/trainingJobs?page_size&page_token&filter&name: one page, decoded leniently. */
static enum backend_status acp_list(struct backend *b, const struct list_query *q,
                                    struct job_list *out, struct api_error *err)
{
    memset(out, 0, sizeof *out);
    struct strbuf p = STRBUF_INIT;
    collection(b, &p);
    if (q) {
        char size[16] = "";
        if (q->page_size > 0)
            snprintf(size, sizeof size, "%d", q->page_size);
        query(&p, "page_size", size);
        query(&p, "page_token", q->page_token);
        query(&p, "filter", q->filter);
        query(&p, "name", q->name);
    }
    json_t *reply = NULL;
    enum backend_status st = call(b, "GET", &p, NULL, &reply, err);
    strbuf_free(&p);
    if (st != BACKEND_OK)
        return st;
    json_t *jobs = json_object_get(reply, "training_jobs");
    if (jobs != NULL && !json_is_array(jobs)) {
        json_decref(reply);
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
    json_decref(reply);
    return BACKEND_OK;
}

/* PATCH …/{name}?update_mask=…: only display_name and scheduling.priority can change. */
static enum backend_status acp_update(struct backend *b, const char *name,
                                      const struct job_update *u, struct jobspec *out,
                                      struct api_error *err)
{
    json_t *body = json_object();
    struct strbuf mask = STRBUF_INIT;
    if (u->display_name) {
        json_object_set_new(body, "display_name", json_string(u->display_name));
        strbuf_adds(&mask, "display_name");
    }
    if (u->priority != PRIORITY_UNSPECIFIED) {
        json_object_set_new(
            body, "scheduling",
            json_pack("{s:s}", "priority", enum_name(&priority_names, (int)u->priority)));
        strbuf_addf(&mask, "%sscheduling.priority", mask.len ? "," : "");
    }
    struct strbuf p = STRBUF_INIT;
    job_path(b, name, &p);
    query(&p, "update_mask", strbuf_str(&mask));
    enum backend_status st = job_call(b, "PATCH", &p, body, out, err);
    json_decref(body);
    strbuf_free(&p);
    strbuf_free(&mask);
    return st;
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

/* GET …/{name}/workers, every page. */
static enum backend_status acp_workers(struct backend *b, const char *name, struct worker_list *out,
                                       struct api_error *err)
{
    memset(out, 0, sizeof *out);
    char *token = NULL;
    enum backend_status st = BACKEND_OK;
    /* ACP's default page is 10 workers; ask for its maximum and follow any further pages. */
    for (int page = 0; page < MAX_WORKER_PAGES; page++) {
        struct strbuf p = STRBUF_INIT;
        job_path(b, name, &p);
        strbuf_adds(&p, "/workers?page_size=500");
        query(&p, "page_token", token);
        free(token);
        token = NULL;
        json_t *reply = NULL;
        st = call(b, "GET", &p, NULL, &reply, err);
        strbuf_free(&p);
        if (st != BACKEND_OK)
            break;
        json_t *arr = json_object_get(reply, "workers");
        add_workers(arr, out);
        const char *next = json_string_value(json_object_get(reply, "next_page_token"));
        token = next && *next && json_array_size(arr) ? xstrdup(next) : NULL;
        json_decref(reply);
        if (token == NULL)
            break;
    }
    free(token);
    if (st != BACKEND_OK)
        worker_list_free(out);
    return st;
}

/* GET /trainjob/v1/…/{name}/events (trainjobd only). */
static enum backend_status acp_events(struct backend *b, const char *name,
                                      struct job_event_list *out, struct api_error *err)
{
    memset(out, 0, sizeof *out);
    if (!driver(b)->trainjobd)
        return backend_unsupported(b, "job events", err);
    struct strbuf p = STRBUF_INIT;
    v1_job_path(b, name, &p);
    strbuf_adds(&p, "/events");
    json_t *reply = NULL;
    enum backend_status st = call(b, "GET", &p, NULL, &reply, err);
    strbuf_free(&p);
    if (st != BACKEND_OK)
        return st;
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
    json_decref(reply);
    return BACKEND_OK;
}

/* A stream whose 2xx body goes to fn; an error reply becomes err. */
static enum backend_status stream(struct backend *b, const struct strbuf *path, http_data_fn fn,
                                  void *ctx, struct api_error *err)
{
    struct http_result r;
    http_result_init(&r);
    enum backend_status st = BACKEND_OK;
    if (http_stream(driver(b)->client, strbuf_str(path), fn, ctx, &r) != 0) {
        st = transport_error(b, &r, err);
    } else if (r.status < 200 || r.status >= 300) {
        api_error_from_body(err, r.status, r.body.buf, r.body.len);
        st = BACKEND_REJECTED;
    }
    http_result_free(&r);
    return st;
}

/* GET /trainjob/v1/…/{name}/workers/{w}/logs, streamed (trainjobd only). */
static enum backend_status acp_logs(struct backend *b, const char *name, const char *worker,
                                    long tail, bool follow, backend_data_fn fn, void *ctx,
                                    struct api_error *err)
{
    if (!driver(b)->trainjobd)
        return backend_unsupported(b, "worker logs", err);
    struct strbuf p = STRBUF_INIT;
    v1_job_path(b, name, &p);
    strbuf_adds(&p, "/workers/");
    http_escape(&p, worker);
    strbuf_adds(&p, "/logs");
    char n[24] = "";
    if (tail >= 0)
        snprintf(n, sizeof n, "%ld", tail);
    query(&p, "tail", n);
    query(&p, "follow", follow ? "true" : NULL);
    enum backend_status st = stream(b, &p, fn, ctx, err);
    strbuf_free(&p);
    return st;
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

/* POST …/trainingJobs:VERB and the per-name results (trainjobd's {results:[{name, result}]}). */
static enum backend_status batch(struct backend *b, const char *verb, const char *const *names,
                                 size_t n, struct batch_result *out, struct api_error *err)
{
    memset(out, 0, sizeof *out);
    struct strbuf p = STRBUF_INIT;
    collection(b, &p);
    strbuf_addf(&p, ":%s", verb);
    json_t *body = batch_body(b, names, n);
    json_t *reply = NULL;
    enum backend_status st = call(b, "POST", &p, body, &reply, err);
    json_decref(body);
    strbuf_free(&p);
    if (st != BACKEND_OK)
        return st;
    json_t *results = json_object_get(reply, "results");
    out->items = xcalloc(n ? n : 1, sizeof *out->items);
    out->count = n;
    for (size_t i = 0; i < n; i++) {
        out->items[i].name = xstrdup(names[i]);
        out->items[i].outcome = BATCH_UNKNOWN;
        /* Matched by name, so a reply in another order (or with gaps) still reads right. */
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
    json_decref(reply);
    return BACKEND_OK;
}

static enum backend_status acp_stop(struct backend *b, const char *const *names, size_t n,
                                    struct batch_result *out, struct api_error *err)
{
    return batch(b, "batchStop", names, n, out, err);
}

static enum backend_status acp_delete(struct backend *b, const char *const *names, size_t n,
                                      struct batch_result *out, struct api_error *err)
{
    return batch(b, "batchDelete", names, n, out, err);
}

/* POST /trainjob/v1/…/{name}:start (trainjobd only: ACP has no REST start). */
static enum backend_status acp_start(struct backend *b, const char *name, struct jobspec *out,
                                     struct api_error *err)
{
    if (!driver(b)->trainjobd)
        return backend_unsupported(b, "starting a stopped job", err);
    struct strbuf p = STRBUF_INIT;
    v1_job_path(b, name, &p);
    strbuf_adds(&p, ":start");
    enum backend_status st = job_call(b, "POST", &p, NULL, out, err);
    strbuf_free(&p);
    return st;
}

/* ---- watch -------------------------------------------------------------- */

struct watch_state {
    struct strbuf line; /* a message not yet ended by '\n' */
    backend_watch_fn fn;
    void *ctx;
};

/* Decodes one NDJSON line; returns fn's answer (0 for lines skipped as unknown). */
static int watch_line(struct watch_state *ws, const char *text, size_t len)
{
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
        add_workers(json_object_get(j, "workers"), &m.workers);
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

/* GET …/trainingJobs?watch=true: NDJSON until the server ends it or fn says stop. */
static enum backend_status acp_watch(struct backend *b, backend_watch_fn fn, void *ctx,
                                     struct api_error *err)
{
    if (!driver(b)->trainjobd)
        return backend_unsupported(b, "watching jobs", err);
    struct strbuf p = STRBUF_INIT;
    collection(b, &p);
    query(&p, "watch", "true");
    struct watch_state ws = {STRBUF_INIT, fn, ctx};
    enum backend_status st = stream(b, &p, watch_data, &ws, err);
    if (st == BACKEND_OK && ws.line.len > 0) /* a last line without its '\n' */
        watch_line(&ws, ws.line.buf, ws.line.len);
    strbuf_free(&ws.line);
    strbuf_free(&p);
    return st;
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
    .stop = acp_stop,
    .start = acp_start,
    .remove = acp_delete,
    .watch = acp_watch,
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
