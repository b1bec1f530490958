/*
 * acp_priv: what the acp driver's parts share — the driver's state, the
 * request every operation is (method, path, body) and the functions that
 * build one and read its reply. Included only by api/acp*.c: acp.c (the
 * calls: blocking, streams, through the loop; the ops table) and
 * acp_request.c (paths, one builder and one decoder per operation).
 */
#ifndef API_ACP_PRIV_H
#define API_ACP_PRIV_H

#include <jansson.h>
#include <stdbool.h>

#include "api/acp_logs.h"
#include "api/backend.h"
#include "api/http.h"
#include "util/strbuf.h"

struct acp {
    struct http_client *client;
    bool trainjobd;
    struct acp_monitor monitor; /* ACP's worker logs (api/acp_logs.h); no client: not set */
};

static inline struct acp *driver(struct backend *b)
{
    return b->driver;
}

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
    bool scalars; /* a page of scalars: read by api/scalarpage from the text, not as a tree */
};

void acp_request_free(struct acp_request *r);
/* /trainjob/v1/…/trainingJobs/{name}/workers/{worker}/{leaf} (trainjobd's). */
void acp_worker_path(const struct backend *b, const char *name, const char *worker,
                     const char *leaf, struct strbuf *p);
/* Appends "?key=value" or "&key=value" (value escaped); nothing for a NULL or empty value. */
void acp_query(struct strbuf *p, const char *key, const char *value);
/* An operation only trainjobd has, asked of ACP: says so, and how to say it is trainjobd. */
enum backend_status acp_lacks(const struct backend *b, const char *what, struct api_error *err);
/* What rq asks of the server; an operation this server lacks fills err instead. */
enum backend_status acp_build(struct backend *b, const struct backend_request *rq,
                              struct acp_request *out, struct api_error *err);
/*
 * How a request ended: a transport failure or a non-2xx reply fills err;
 * a 2xx reply of a non-stream gives its body as JSON in *json.
 */
enum backend_status acp_reply_status(const struct backend *b, const struct acp_request *rq,
                                     const struct http_result *r, json_t **json,
                                     struct api_error *err);
/* The reply of rq (a 2xx JSON body) into out. */
enum backend_status acp_decode(const struct backend_request *rq, const json_t *reply,
                               struct backend_reply *out);
/* Appends the workers of a JSON array to out. */
void acp_add_workers(const json_t *arr, struct worker_list *out);

#endif
