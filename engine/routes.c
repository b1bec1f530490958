/*
 * routes: URL parsing and dispatch; see routes.h.
 *
 *   ACP  /compute/acp/data/v2/subscriptions/{sub}/resourceGroups/{rg}/zones/{zone}
 *        /workspaces/{ws}/trainingJobs[...]
 *   ours /trainjob/v1/catalog, /trainjob/v1/workspaces, /trainjob/v1/engine[:stop],
 *        /trainjob/v1/workspaces/{ws}/trainingJobs/{name}:start | :markNode | :unmarkNode | /events
 *        | /workers/{worker}/logs | /workers/{worker}/exec | /scalars?since=CURSOR&limit=BYTES[&follow=true]
 * (engine/scalars.h)
 */
#include "engine/routes.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/apierror.h"
#include "engine/config.h"
#include "engine/engine.h"
#include "engine/exec.h"
#include "engine/scalars.h"
#include "engine/shares.h"
#include "engine/stream.h"
#include "util/utf8.h"

#define MAX_PATH 2047
#define MAX_SEGMENTS 24
#define MAX_SEGMENT 255
#define MAX_ARG_KEY 64
#define MAX_ARG_VALUE 4096
#define MAX_CURSOR (24u << 10) /* since=: a file and offset per event file, in one URL */

/* Splits path into at most max segments (in buf); returns the count. */
static int split(const char *path, char *buf, size_t bufsz, char **seg, int max)
{
    snprintf(buf, bufsz, "%s", path);
    int n = 0;
    char *save = NULL;
    for (char *t = strtok_r(buf, "/", &save); t && n < max; t = strtok_r(NULL, "/", &save))
        seg[n++] = t;
    return n;
}

static const char *q(const struct http_request *req, const char *key)
{
    return req->query ? req->query(req->query_ctx, key) : NULL;
}

static void fail(struct http_response *resp, const struct api_error *err)
{
    resp->status = err->status;
    resp->json = api_error_to_json(err);
}

static void not_found(struct http_response *resp, const struct http_request *req)
{
    struct api_error err;
    api_error_set(&err, 404, "NoSuchRoute", "", "no route for %s %s", req->method, req->path);
    fail(resp, &err);
}

static void bad_method(struct http_response *resp, const struct http_request *req)
{
    struct api_error err;
    api_error_set(&err, 405, "MethodNotAllowed", "", "%s is not allowed on %s", req->method,
                  req->path);
    fail(resp, &err);
}

static bool is(const struct http_request *req, const char *method)
{
    return strcmp(req->method, method) == 0;
}

/* Finishes a handler call: status and reply or error into resp. */
static void answer(struct http_response *resp, int status, json_t *reply,
                   const struct api_error *err)
{
    if (status == 200) {
        resp->status = 200;
        resp->json = reply;
    } else {
        fail(resp, err);
    }
}

/*
 * A stream the caller is about to open (watch, log follow, scalar follow)
 * counts against their share: 0, or 429 naming the limit and how to free it.
 * The caller gives it back (close_share) when no stream came of it.
 */
static int open_share(const struct http_request *req, enum share_kind kind, struct api_error *err)
{
    if (req->limits == NULL || req->share == NULL)
        return 0;
    bool scalars = kind == SHARE_SCALAR_FOLLOWS;
    size_t limit = (size_t)(scalars ? req->limits->scalar_follows_per_member
                                    : req->limits->streams_per_member);
    if (share_take(req->share, kind, 1, limit))
        return 0;
    return api_error_set(err, 429, "TooManyStreams", scalars ? "follow" : "watch",
                         "%s has %zu %s open, the most one user may (limits.%s): close "
                         "other %s first",
                         req->user, share_used(req->share, kind),
                         scalars ? "scalar follows" : "watch streams and log follows",
                         scalars ? "scalar_follows_per_member" : "streams_per_member",
                         scalars ? "scalar follows" : "watches or follows");
}

/* The stream opened (it holds the count from now on), or none did (the count goes back). */
static void close_share(const struct http_request *req, enum share_kind kind, struct stream *s)
{
    if (req->limits == NULL || req->share == NULL)
        return;
    if (s)
        stream_set_share(s, req->share, kind, (size_t)req->limits->stream_mib_per_member << 20);
    else
        share_give(req->share, kind, 1);
}

static long number(const char *s, long fallback)
{
    if (s == NULL || *s == '\0')
        return fallback;
    char *end;
    long v = strtol(s, &end, 10);
    return *end ? fallback : v;
}

/* .../trainingJobs[/{name}[/workers]] and the :batchStop/:batchDelete verbs. */
static void jobs_route(struct engine *eng, const struct http_request *req,
                       struct http_response *resp, const char *ws, char **rest, int n)
{
    struct api_error err = {0};
    json_t *reply = NULL;
    int st;
    const char *coll = rest[0]; /* "trainingJobs" or "trainingJobs:batchStop" … */
    if (n == 1 && strcmp(coll, "trainingJobs") == 0) {
        int view = engine_job_view(q(req, "view")); /* list and watch: BASIC or FULL */
        if (is(req, "POST")) {
            st = engine_job_create(eng, req->user, ws, q(req, "training_job_name"), req->body,
                                   req->body_len, &reply, &err);
        } else if (is(req, "GET") && view < 0) {
            api_error_set(&err, 400, "InvalidArgument", "view", "view: BASIC or FULL, not '%.40s'",
                          q(req, "view"));
            return fail(resp, &err);
        } else if (is(req, "GET") && q(req, "watch") && strcmp(q(req, "watch"), "true") == 0) {
            struct stream *s = NULL;
            if (open_share(req, SHARE_STREAMS, &err) != 0)
                return fail(resp, &err);
            st = engine_watch_view(eng, req->user, ws, (enum job_view)view, &s, &err);
            close_share(req, SHARE_STREAMS, st == 200 ? s : NULL);
            if (st == 200) {
                resp->status = 200;
                resp->stream = s;
                resp->content_type = "application/x-ndjson";
                return;
            }
        } else if (is(req, "GET")) {
            const char *size = q(req, "page_size");
            struct job_query jq = {(int)number(size, 0), q(req, "page_token"), q(req, "filter"),
                                   q(req, "name"), (enum job_view)view};
            if (size && *size && (number(size, -1) < 0))
                jq.page_size = -1;
            /* Written as text straight into the body: 50,000 jobs build no tree. */
            st = engine_job_list_text(eng, req->user, ws, &jq, &resp->text, &err);
            if (st == 200) {
                resp->status = 200;
                resp->content_type = "application/json";
                return;
            }
            strbuf_reset(&resp->text);
        } else {
            return bad_method(resp, req);
        }
        return answer(resp, st, reply, &err);
    }
    if (n == 1 && strcmp(coll, "trainingJobs:batchStop") == 0) {
        if (!is(req, "POST"))
            return bad_method(resp, req);
        st = engine_jobs_stop(eng, req->user, ws, req->body, req->body_len, &reply, &err);
        return answer(resp, st, reply, &err);
    }
    if (n == 1 && strcmp(coll, "trainingJobs:batchDelete") == 0) {
        if (!is(req, "POST"))
            return bad_method(resp, req);
        st = engine_jobs_delete(eng, req->user, ws, req->body, req->body_len, &reply, &err);
        return answer(resp, st, reply, &err);
    }
    if (strcmp(coll, "trainingJobs") != 0 || n < 2)
        return not_found(resp, req);
    char name[MAX_SEGMENT + 1]; /* routes_check bounds every segment: no cut inside a character */
    snprintf(name, sizeof name, "%s", rest[1]);
    char *verb = strchr(name, ':');
    if (verb)
        *verb++ = '\0';
    if (n == 2 && verb && strcmp(verb, "start") == 0) {
        if (!is(req, "POST"))
            return bad_method(resp, req);
        st = engine_job_start(eng, req->user, ws, name, &reply, &err);
    } else if (n == 2 && verb && strcmp(verb, "markNode") == 0) {
        /* {"node": N}: the job's next placement avoids N; its live workers stay. */
        if (!is(req, "POST"))
            return bad_method(resp, req);
        st = engine_job_mark_node(eng, req->user, ws, name, req->body, req->body_len, &reply, &err);
    } else if (n == 2 && verb && strcmp(verb, "unmarkNode") == 0) {
        /* {"node": N}: lifts the mark; the job may be placed on N again. */
        if (!is(req, "POST"))
            return bad_method(resp, req);
        st = engine_job_unmark_node(eng, req->user, ws, name, req->body, req->body_len, &reply,
                                    &err);
    } else if (n == 2 && verb) {
        return not_found(resp, req);
    } else if (n == 2 && is(req, "GET")) {
        st = engine_job_get(eng, req->user, ws, name, &reply, &err);
    } else if (n == 2 && is(req, "PATCH")) {
        st = engine_job_update(eng, req->user, ws, name, q(req, "update_mask"), req->body,
                               req->body_len, &reply, &err);
    } else if (n == 2 && is(req, "DELETE")) {
        json_t *body = json_pack("{s:[s]}", "training_job_names", name);
        char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
        json_decref(body);
        if (text == NULL) {
            api_error_set(&err, 400, "InvalidPath", "name", "the job name is not UTF-8 text");
            return fail(resp, &err);
        }
        st = engine_jobs_delete(eng, req->user, ws, text, strlen(text), &reply, &err);
        free(text);
    } else if (n == 3 && strcmp(rest[2], "workers") == 0 && is(req, "GET")) {
        st = engine_job_workers(eng, req->user, ws, name, &reply, &err);
    } else if (n == 3 && strcmp(rest[2], "events") == 0 && is(req, "GET")) {
        st = engine_job_events(eng, req->user, ws, name, &reply, &err);
    } else if (n == 3 && strcmp(rest[2], "scalars") == 0 && is(req, "GET")) {
        const char *follow = q(req, "follow");
        struct scalars_query sq = {q(req, "since"), q(req, "limit"),
                                   follow && strcmp(follow, "true") == 0, q(req, "chart")};
        struct stream *s = NULL;
        if (sq.follow && open_share(req, SHARE_SCALAR_FOLLOWS, &err) != 0)
            return fail(resp, &err);
        st = engine_job_scalars(eng, req->user, ws, name, &sq, &resp->text, &s, &err);
        if (sq.follow)
            close_share(req, SHARE_SCALAR_FOLLOWS, st == 200 ? s : NULL);
        if (st == 200) {
            resp->status = 200;
            resp->stream = s;
            resp->content_type = s ? "application/x-ndjson" : "application/json";
            return;
        }
        strbuf_reset(&resp->text);
    } else if (n == 5 && strcmp(rest[2], "workers") == 0 && strcmp(rest[4], "exec") == 0) {
        /* A command in the worker: http.c switches the connection once this says yes. */
        if (!is(req, "POST"))
            return bad_method(resp, req);
        /* A command runs until it ends: counted with the user's streams while it does. */
        if (open_share(req, SHARE_STREAMS, &err) != 0)
            return fail(resp, &err);
        st = engine_worker_exec(eng, req->user, ws, name, rest[3], &resp->exec, &err);
        if (st == 0) {
            resp->exec->share = req->limits ? req->share : NULL;
            resp->status = 101;
            return;
        }
        close_share(req, SHARE_STREAMS, NULL);
    } else if (n == 5 && strcmp(rest[2], "workers") == 0 && strcmp(rest[4], "logs") == 0 &&
               is(req, "GET")) {
        const char *follow = q(req, "follow");
        bool want_follow = follow && strcmp(follow, "true") == 0;
        struct stream *s = NULL;
        const char *framed = q(req, "framed");
        struct worker_log_query lq = {
            rest[3],        number(q(req, "tail"), -1),
            want_follow,    framed && strcmp(framed, "true") == 0,
            q(req, "from"), q(req, "times") && strcmp(q(req, "times"), "true") == 0};
        if (want_follow && open_share(req, SHARE_STREAMS, &err) != 0)
            return fail(resp, &err);
        st = engine_worker_log(eng, req->user, ws, name, &lq, &resp->text, &s, &err);
        if (want_follow)
            close_share(req, SHARE_STREAMS, st == 200 ? s : NULL);
        if (st == 200) {
            resp->status = 200;
            resp->stream = s;
            resp->content_type = "text/plain; charset=utf-8";
            return;
        }
    } else {
        return n >= 3 ? not_found(resp, req) : bad_method(resp, req);
    }
    answer(resp, st, reply, &err);
}

/* Why text is not fit for a handler (NULL when it is): UTF-8, no controls, at most max bytes. */
static const char *unfit(const char *s, size_t n, size_t max)
{
    if (n > max)
        return "too long";
    if (!utf8_valid(s, n))
        return "not valid UTF-8";
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t k = utf8_decode(s + i, n - i, &cp);
        if (cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0))
            return "has a control character";
        i += k;
    }
    return NULL;
}

struct arg_check {
    struct api_error *err;
};

static int check_arg(void *ctx, const char *key, size_t key_len, const char *value,
                     size_t value_len)
{
    struct api_error *err = ((struct arg_check *)ctx)->err;
    const char *why = unfit(key, key_len, MAX_ARG_KEY);
    if (why)
        return api_error_set(err, 400, "InvalidArgument", "", "a query parameter name: %s", why);
    bool cursor = key_len == 5 && memcmp(key, "since", 5) == 0;
    if (value && (why = unfit(value, value_len, cursor ? MAX_CURSOR : MAX_ARG_VALUE)))
        return api_error_set(err, 400, "InvalidArgument", key, "query parameter %s: %s", key, why);
    return 0;
}

int routes_check(const struct http_request *req, struct api_error *err)
{
    size_t len = strlen(req->path);
    if (len > MAX_PATH)
        return api_error_set(err, 414, "PathTooLong", "", "the path is over %d bytes", MAX_PATH);
    /* A %00 would cut the decoded path short without a trace: refuse it in the raw one. */
    if (req->target) {
        size_t raw = strcspn(req->target, "?");
        for (size_t i = 0; i + 2 < raw; i++)
            if (req->target[i] == '%' && req->target[i + 1] == '0' && req->target[i + 2] == '0')
                return api_error_set(err, 400, "InvalidPath", "", "the path has a NUL (%%00)");
    }
    int n = 0;
    const char *prev = NULL;
    size_t prev_len = 0;
    for (const char *p = req->path; *p;) {
        if (*p == '/') {
            p++;
            continue;
        }
        size_t k = strcspn(p, "/");
        if (++n > MAX_SEGMENTS)
            return api_error_set(err, 400, "InvalidPath", "", "the path has over %d segments",
                                 MAX_SEGMENTS);
        const char *why = unfit(p, k, MAX_SEGMENT);
        if (why) {
            if (prev && unfit(prev, prev_len, MAX_SEGMENT) == NULL)
                return api_error_set(err, 400, "InvalidPath", "",
                                     "path segment %d (after '%.*s'): %s", n, (int)prev_len, prev,
                                     why);
            return api_error_set(err, 400, "InvalidPath", "", "path segment %d: %s", n, why);
        }
        prev = p;
        prev_len = k;
        p += k;
    }
    struct arg_check ac = {err};
    if (req->each_query && req->each_query(req->query_ctx, check_arg, &ac))
        return err->status;
    return 0;
}

void routes_handle(struct engine *eng, const struct http_request *req, struct http_response *resp)
{
    struct api_error err = {0};
    if (routes_check(req, &err) != 0)
        return fail(resp, &err);
    char buf[MAX_PATH + 1];
    char *seg[MAX_SEGMENTS];
    int n = split(req->path, buf, sizeof buf, seg, MAX_SEGMENTS);
    json_t *reply = NULL;

    /* compute acp data v2 subscriptions {sub} resourceGroups {rg} zones {zone} workspaces {ws} … */
    if (n >= 12 && strcmp(seg[0], "compute") == 0 && strcmp(seg[1], "acp") == 0 &&
        strcmp(seg[2], "data") == 0 && strcmp(seg[3], "v2") == 0 &&
        strcmp(seg[4], "subscriptions") == 0 && strcmp(seg[6], "resourceGroups") == 0 &&
        strcmp(seg[8], "zones") == 0 && strcmp(seg[10], "workspaces") == 0) {
        if (strcmp(seg[5], engine_subscription(eng)) != 0 ||
            strcmp(seg[7], engine_resource_group(eng)) != 0 ||
            strcmp(seg[9], engine_zone(eng)) != 0) {
            api_error_set(&err, 404, "NotFound", "",
                          "this engine serves subscription %s, resource group %s, zone %s",
                          engine_subscription(eng), engine_resource_group(eng), engine_zone(eng));
            return fail(resp, &err);
        }
        if (n < 13)
            return not_found(resp, req);
        return jobs_route(eng, req, resp, seg[11], seg + 12, n - 12);
    }
    if (n >= 3 && strcmp(seg[0], "trainjob") == 0 && strcmp(seg[1], "v1") == 0) {
        if (n == 3 && strcmp(seg[2], "catalog") == 0) {
            if (!is(req, "GET"))
                return bad_method(resp, req);
            int st = engine_catalog(eng, req->user, &reply, &err);
            return answer(resp, st, reply, &err);
        }
        if (n == 3 && strcmp(seg[2], "engine") == 0) {
            if (!is(req, "GET"))
                return bad_method(resp, req);
            int st = engine_about(eng, &reply, &err);
            return answer(resp, st, reply, &err);
        }
        if (n == 3 && strcmp(seg[2], "engine:stop") == 0) {
            if (!is(req, "POST"))
                return bad_method(resp, req);
            int st = engine_stop_request(eng, req->user, &reply, &err);
            return answer(resp, st, reply, &err);
        }
        if (n == 3 && strcmp(seg[2], "workspaces") == 0) {
            if (!is(req, "POST"))
                return bad_method(resp, req);
            json_t *body = json_loadb(req->body, req->body_len, 0, NULL);
            int st = engine_create_workspace(eng, req->user, body, &reply, &err);
            json_decref(body);
            return answer(resp, st, reply, &err);
        }
        if (n >= 5 && strcmp(seg[2], "workspaces") == 0)
            return jobs_route(eng, req, resp, seg[3], seg + 4, n - 4);
    }
    not_found(resp, req);
}
