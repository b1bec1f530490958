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

struct engine;
struct stream;

struct http_request {
    const char *method;
    const char *path; /* decoded, without the query */
    const char *(*query)(void *ctx, const char *key);
    void *query_ctx;
    const char *body;
    size_t body_len;
    const char *user; /* who is calling (peer uid or AK/SK) */
};

struct http_response {
    int status;
    json_t *json;          /* a JSON body, or NULL */
    struct strbuf text;    /* a text body (logs), sent before the stream */
    struct stream *stream; /* keeps the response open: watch, log follow */
    const char *content_type;
};

/* ACP's collection path prefix, before {sub}. */
#define ROUTES_ACP_PREFIX "/compute/acp/data/v2/subscriptions/"
#define ROUTES_V1_PREFIX "/trainjob/v1/"

void routes_handle(struct engine *eng, const struct http_request *req, struct http_response *resp);

#endif
