/*
 * http_multi: requests that do not block — libcurl's multi interface
 * driven by the process's one poll loop (util/loop.h), the way curl's
 * ephiperfifo example drives it: curl tells which sockets to watch
 * (CURLMOPT_SOCKETFUNCTION) and when to wake it (CURLMOPT_TIMERFUNCTION);
 * the loop calls back when a socket is ready or the timer is due, and
 * finished transfers are handed to their done callbacks. Between events
 * nothing runs, so an idle watch stream costs no system calls.
 *
 * Requests are built by the same code as the blocking calls
 * (http_transfer_prepare), so an async request is byte for byte the
 * blocking one. A client whose network was replaced by a transport
 * function (tests) is answered through it, from a zero-delay timer, so the
 * done callback never runs inside http_multi_start.
 */
#ifndef API_HTTP_MULTI_H
#define API_HTTP_MULTI_H

#include <stddef.h>

#include "api/http.h"

struct loop;
struct http_multi;
struct http_request;

/*
 * Called once when a request ends — answered, failed, or cut short by its
 * on_data. r is the request's result (transport and status as in
 * http_call; the body of a non-stream reply, or an error reply of a
 * stream); it is valid during the call, and the callee may take r->body
 * (leaving an empty strbuf). The request is freed after the call returns.
 */
typedef void (*http_done_fn)(void *ctx, struct http_result *r);

struct http_multi *http_multi_new(struct loop *lp);
/* Drops every request in flight (no done callbacks) and the multi handle. */
void http_multi_free(struct http_multi *m);

/*
 * Starts a request on client c (which must outlive it); arguments as
 * http_transfer_prepare. on_data NULL: the reply is collected for done.
 * Never NULL: a request that cannot start ends through done with the reason.
 */
struct http_request *http_multi_start(struct http_multi *m, const struct http_client *c,
                                      const char *method, const char *path_and_query,
                                      const char *body, size_t len, http_data_fn on_data,
                                      void *data_ctx, http_done_fn done, void *done_ctx);
/* Ends a request now; its done callback is not called. Not from inside that callback. */
void http_request_cancel(struct http_request *r);

/* The loop m runs on (for callers that must answer from it). */
struct loop *http_multi_loop(const struct http_multi *m);
/* Requests in flight. */
size_t http_multi_active(const struct http_multi *m);

#endif
