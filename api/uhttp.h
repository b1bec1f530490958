/*
 * uhttp: one HTTP/1.1 exchange over a Unix socket, without libcurl — how
 * trainjob talks to its local engine (http+unix:// endpoints).
 *
 * Non-blocking and driven from outside: the owner polls uhttp_fd for
 * uhttp_events and calls uhttp_step when it is ready (api/http waits in
 * poll; api/http_multi registers the fd with util/loop). The request is
 * written whole, then the reply is read: a status line, headers (at most
 * UHTTP_MAX_HEAD bytes), and a body delimited by Content-Length, by chunked
 * transfer coding, or by the server closing. A 2xx reply's body goes to
 * on_data as it arrives (when on_data is set); any other body is collected
 * into out->body, at most out->max_body (else UHTTP_MAX_REPLY) bytes. The reply is the server's,
 * so it is checked like any input: sizes are bounded and parsed strictly,
 * and a malformed reply ends the exchange as TRANSPORT_OTHER saying why.
 */
#ifndef API_UHTTP_H
#define API_UHTTP_H

#include <stdbool.h>
#include <stddef.h>

#include "api/http.h"

#define UHTTP_MAX_HEAD (64u << 10)
#define UHTTP_MAX_REPLY (64u << 20)

struct uhttp;

/*
 * Connects to the socket at path and queues the request: method target
 * HTTP/1.1, then headers (complete "Name: value\r\n" lines; Host,
 * Content-Length and Connection are added here), then body. A socket that
 * cannot be reached makes the exchange finished at once (out says why).
 */
struct uhttp *uhttp_start(const char *path, const char *method, const char *target,
                          const char *headers, const char *body, size_t len, http_data_fn on_data,
                          void *ctx, struct http_result *out);
/* The same over an already connected socket (which it then owns); for tests. */
struct uhttp *uhttp_start_fd(int fd, const char *method, const char *target, const char *headers,
                             const char *body, size_t len, http_data_fn on_data, void *ctx,
                             struct http_result *out);
/* The socket to poll (-1 once finished) and for what: POLLOUT or POLLIN. */
int uhttp_fd(const struct uhttp *u);
short uhttp_events(const struct uhttp *u);
/* Does what the socket allows without blocking; true when finished (out is filled). */
bool uhttp_step(struct uhttp *u);
bool uhttp_finished(const struct uhttp *u);
/* Ends the exchange now as a timeout (out says so). */
void uhttp_time_out(struct uhttp *u);
/* Ends the exchange now with transport t and why (the request could not be made). */
void uhttp_fail(struct uhttp *u, enum transport_error t, const char *why);
void uhttp_free(struct uhttp *u);

/*
 * A reply header line (n bytes, "Name: value") read for Retry-After into
 * out: uhttp's parser and http.c's curl header callback both use it.
 */
void http_retry_after_header(const char *line, size_t n, struct http_result *out);

#endif
