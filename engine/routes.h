/*
 * routes: the REST surface of trainjobd — ACP's training-job paths and the
 * /trainjob/v1 extras (catalog, workspaces, start, markNode, logs, events) —
 * mapped onto engine_* calls. Knows URLs and query parameters, not sockets: the
 * HTTP layer (engine/http) builds a request, routes fills a response.
 */
#ifndef ENGINE_ROUTES_H
#define ENGINE_ROUTES_H

#include <jansson.h>
#include <stddef.h>

#include "util/strbuf.h"

struct api_error;
struct config_limits;
struct engine;
struct exec_plan;
struct share;
struct stream;

/* Called for each query argument, decoded (value NULL for a bare key); non-zero stops. */
typedef int (*http_arg_fn)(void *arg, const char *key, size_t key_len, const char *value,
                           size_t value_len);

struct http_request {
    const char *method;
    const char *path;   /* decoded, without the query */
    const char *target; /* as received: raw path and query (NULL when unknown) */
    const char *(*query)(void *ctx, const char *key);
    int (*each_query)(void *ctx, http_arg_fn fn, void *arg); /* NULL when none */
    void *query_ctx;
    const char *body;
    size_t body_len;
    const char *user; /* who is calling (peer uid or AK/SK) */
    /* What the caller holds of the engine (engine/shares); NULL: not counted. */
    struct share *share;
    const struct config_limits *limits; /* the per-user limits; NULL: none (tests) */
};

struct http_response {
    int status;
    json_t *json;          /* a JSON body, or NULL */
    struct strbuf text;    /* a text body (logs), sent before the stream */
    struct stream *stream; /* keeps the response open: watch, log follow */
    const char *content_type;
    /* …/workers/{w}/exec allowed: switch the connection to the exec helper (engine/exec.h) */
    struct exec_plan *exec;
};

/* ACP's collection path prefix, before {sub}. */
#define ROUTES_ACP_PREFIX "/compute/acp/data/v2/subscriptions/"
#define ROUTES_V1_PREFIX "/trainjob/v1/"

/*
 * Checks what a request brings before any handler sees it: every decoded
 * path segment and query key and value is UTF-8 without control characters
 * (NUL included) and of bounded length. Returns 0, or 400/414 with err
 * naming the segment or parameter. routes_handle calls it first.
 */
int routes_check(const struct http_request *req, struct api_error *err);
void routes_handle(struct engine *eng, const struct http_request *req, struct http_response *resp);

#endif
