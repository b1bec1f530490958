/*
 * http: the client's HTTP transport, one request at a time — api/uhttp on a
 * Unix socket, libcurl (loaded on first use, api/curl_dl) over TCP.
 *
 * A client talks to one endpoint: "http+unix:///path/to/engine.sock" (a Unix
 * socket; URLs are then http://localhost + path) or "https://host[:port]" /
 * "http://127.0.0.1:port". With an AK/SK pair set, every request is signed
 * the SenseCore way (X-Date + Authorization, api/hmac.h).
 *
 * Building a request is separate from running it: http_transfer_prepare
 * returns a configured easy handle and everything it points to, so the
 * blocking calls here and a curl-multi loop (the TUI) share one request
 * builder, and tests can inspect a request without a server. A failure to
 * reach the server is told apart from every other one (TRANSPORT_UNREACHABLE),
 * so the caller can start a local engine and retry.
 */
#ifndef API_HTTP_H
#define API_HTTP_H

#include <curl/curl.h>
#include <stdbool.h>
#include <stddef.h>

#include "util/strbuf.h"

enum transport_error {
    TRANSPORT_NONE,        /* the server answered (with any HTTP status) */
    TRANSPORT_UNREACHABLE, /* nothing listens there: no such socket, refused, unknown host */
    TRANSPORT_TIMEOUT,
    TRANSPORT_OTHER, /* TLS, protocol, a reply cut short, … */
};

struct http_result {
    enum transport_error transport;
    int status;         /* HTTP status when transport is TRANSPORT_NONE */
    struct strbuf body; /* the reply (for streams: only an error reply) */
    char message[256];  /* why, when transport is not TRANSPORT_NONE */
    size_t max_body;    /* the byte cap of the reply (set from the client's; 0: 64 MiB) */
    bool has_retry_after;
    int retry_after; /* seconds the reply's Retry-After asked to wait (delta-seconds form) */
    int tries;       /* how many times it was sent (429/503 are tried again) */
};

void http_result_init(struct http_result *r);
/* Empties r for another try of the same request: all but tries (and max_body). */
void http_result_clear(struct http_result *r);
void http_result_free(struct http_result *r);

/* A parsed endpoint. */
struct http_endpoint {
    char *unix_path; /* the socket, or NULL for TCP */
    char *base_url;  /* "http://localhost", "https://host:port": no trailing '/' */
};

/* Parses text; returns 0, or -1 with why in err. */
int http_endpoint_parse(const char *text, struct http_endpoint *ep, struct strbuf *err);
void http_endpoint_free(struct http_endpoint *ep);
/* True when the endpoint is this machine: a Unix socket or a loopback host. */
bool http_endpoint_is_local(const struct http_endpoint *ep);

/*
 * Called with each piece of a streamed reply as it arrives; a non-zero
 * return ends the transfer (http_stream then returns normally).
 */
typedef int (*http_data_fn)(void *ctx, const char *data, size_t len);

/*
 * Replaces the network for a client: every call goes to fn instead, which
 * fills out (and feeds on_data, for streams, when it is non-NULL). Used by
 * tests to run drivers against canned replies.
 */
typedef void (*http_transport_fn)(void *ctx, const char *method, const char *path, const char *body,
                                  size_t len, http_data_fn on_data, void *data_ctx,
                                  struct http_result *out);

struct http_client;

/* http_retry_after_header: in api/uhttp.h, which both transports use. */

/* A client for endpoint; NULL with why in err when the endpoint is malformed. */
struct http_client *http_client_new(const char *endpoint, struct strbuf *err);
void http_client_free(struct http_client *c);
/* Signs every request with ak/sk (copied); NULLs turn signing off. */
void http_client_set_keys(struct http_client *c, const char *ak, const char *sk);
/*
 * Headers sent with every request, as complete "Name: value\r\n" lines
 * (Slurm's X-SLURM-USER-NAME and X-SLURM-USER-TOKEN), kept as a secret;
 * NULL or "" removes them. -1 (nothing changed) when a line is malformed:
 * a value holding CR or LF could smuggle headers of its own.
 */
int http_client_set_headers(struct http_client *c, const char *lines);
/* Whole-request limit for non-streaming calls (default 60 s; 0: none). */
void http_client_set_timeout(struct http_client *c, long ms);
/*
 * The most bytes a reply may have (0: 64 MiB, a transport cap). A driver
 * that decodes its replies within a memory bound (api/jsonbound) may take
 * larger ones: the Slurm driver's GET /jobs is cluster-wide.
 */
void http_client_set_max_reply(struct http_client *c, size_t bytes);
/*
 * Calls whose reply goes to an on_data are streams (no whole-request limit,
 * any type accepted) unless timed is set: then they are JSON replies read
 * as they arrive, under the limit of every call (the Slurm driver's GET
 * /jobs, too large to hold whole).
 */
void http_client_set_data_timed(struct http_client *c, bool timed);
/* The whole-request limit of a call, in ms (0: none); on_data: its reply goes to one. */
long http_call_timeout(const struct http_client *c, bool on_data);
void http_client_set_transport(struct http_client *c, http_transport_fn fn, void *ctx);
/*
 * When a transport replaced the network, runs one request through it into
 * out (reset by the caller) and returns true; false leaves out untouched.
 */
bool http_client_faked(const struct http_client *c); /* a transport replaced the network */
bool http_transport_run(const struct http_client *c, const char *method, const char *path,
                        const char *body, size_t len, http_data_fn on_data, void *ctx,
                        struct http_result *out);
/* The endpoint as given, for messages ("cannot reach …"). */
/* The access key requests are signed with, or NULL when they are not signed. */
const char *http_client_access_key(const struct http_client *c);
const char *http_client_endpoint(const struct http_client *c);
const struct http_endpoint *http_client_parsed(const struct http_client *c);

struct uhttp;
/*
 * Starts one request on a Unix-socket endpoint (c's socket) with the same
 * headers and signature a TCP request gets; the caller drives and frees it
 * (api/uhttp.h).
 */
struct uhttp *http_unix_start(const struct http_client *c, const char *method,
                              const char *path_and_query, const char *body, size_t len,
                              http_data_fn on_data, void *data_ctx, struct http_result *out);

/* One request in flight over TCP: the easy handle and everything it owns. */
struct http_transfer {
    CURL *easy;
    char *url;
    struct curl_slist *headers;
    const struct http_client *client;
    struct http_result *out;
    http_data_fn on_data; /* NULL: collect the body into out->body */
    void *data_ctx;
    bool stopped; /* on_data asked to stop */
    char errbuf[CURL_ERROR_SIZE];
};

/*
 * Configures t for method and path_and_query (already escaped, starting with
 * '/'); body (len bytes) is copied. With on_data, a 2xx reply goes to it as
 * it arrives and anything else into out->body. Returns 0, or -1 when curl
 * could not be set up (out says why).
 */
int http_transfer_prepare(struct http_transfer *t, const struct http_client *c, const char *method,
                          const char *path_and_query, const char *body, size_t len,
                          http_data_fn on_data, void *data_ctx, struct http_result *out);
/* Fills t->out from how the transfer ended (a curl_easy_perform or multi result). */
void http_transfer_finish(struct http_transfer *t, CURLcode rc);
void http_transfer_cleanup(struct http_transfer *t);

/*
 * Makes one request and waits for the whole reply. Returns 0 when the
 * server answered (out->status says how), -1 on a transport failure.
 * A 429 or 503 (the server took nothing) is asked again after its
 * Retry-After seconds (1 s without one): at most 3 tries and 30 s of
 * waiting in all; then the last reply is the answer (out->tries says how
 * many were made). Ctrl-C ends the wait as it ends the program.
 */
int http_call(struct http_client *c, const char *method, const char *path_and_query,
              const char *body, size_t len, struct http_result *out);
/*
 * A GET whose reply is handed to on_data as it arrives, until the server
 * ends it or on_data returns non-zero. Returns as http_call.
 */
int http_stream(struct http_client *c, const char *path_and_query, http_data_fn on_data, void *ctx,
                struct http_result *out);

/*
 * How long to wait before sending a request again after its reply out
 * (out->tries made so far, waited_ms already waited): a 429 or 503 is
 * asked again after its Retry-After seconds (1 s without one), at most 3
 * tries and 30 s of waiting in all; -1: not again, out is the answer.
 * The rule of http_call and of api/http_multi's requests alike.
 */
long http_retry_wait_ms(const struct http_result *out, long waited_ms);

/* Appends s to out escaped for a path segment or query value. */
void http_escape(struct strbuf *out, const char *s);

#endif
