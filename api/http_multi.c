/*
 * http_multi: requests on util/loop; see http_multi.h. On a Unix-socket
 * endpoint each request is an api/uhttp exchange whose socket the loop
 * watches; over TCP, curl's multi-socket interface (libcurl loaded, and the
 * multi made, by the first TCP request: api/curl_dl). Requests sit on a
 * doubly linked list so the multi can drop them all; each easy handle points
 * back at its request (CURLINFO_PRIVATE). A 429 or 503 is sent again after
 * the wait http_retry_wait_ms says (api/http.c: the rule of the blocking
 * call too), from a loop timer: the loop runs on meanwhile.
 */
#include "api/http_multi.h"

#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "api/curl_dl.h"
#include "api/uhttp.h"
#include "util/loop.h"
#include "util/xalloc.h"

struct http_request {
    struct http_multi *m;
    struct http_request *prev, *next;
    struct http_transfer t; /* the real request over TCP (t.easy NULL: not started) */
    struct uhttp *u;        /* or over the Unix socket */
    int u_fd;               /* u's socket while the loop watches it, else -1 */
    uint64_t deadline;      /* the timeout of a Unix-socket call */
    struct http_result res;
    http_data_fn on_data;
    void *data_ctx;
    http_done_fn done;
    void *done_ctx;
    uint64_t timer; /* answered from a timer (fake transport, failed set-up), or a retry's wait */
    long waited_ms; /* waited before retries so far */
    char *method;   /* kept to send it again (429/503) and for the fake transport */
    char *path;
    char *body;
    size_t len;
    const struct http_client *client;
    bool in_data;   /* inside on_data: cancel must wait for curl to return */
    bool queued;    /* started inside curl: added to the multi once curl returns */
    bool cancelled; /* no done callback; stop at the next chance */
    bool finishing; /* inside done */
};

struct http_multi {
    struct loop *loop;
    CURLM *multi;   /* made by the first TCP request */
    uint64_t timer; /* curl's timeout, 0: none */
    struct http_request *head;
    size_t active;
    int in_curl;   /* inside multi_socket_action: curl refuses new handles (recursive call) */
    size_t queued; /* requests waiting for curl to return, marked queued */
};

static void unlink_request(struct http_request *r)
{
    struct http_multi *m = r->m;
    if (r->prev)
        r->prev->next = r->next;
    else
        m->head = r->next;
    if (r->next)
        r->next->prev = r->prev;
    r->prev = r->next = NULL;
    m->active--;
}

/* libcurl's functions; only called once a TCP request has loaded it. */
#define CF (curl_dl(NULL, 0))

/* Stops watching a Unix-socket request's socket (before uhttp closes it). */
static void unwatch(struct http_request *r)
{
    if (r->u_fd >= 0) {
        loop_remove_fd(r->m->loop, r->u_fd);
        r->u_fd = -1;
    }
}

static void free_request(struct http_request *r)
{
    if (r->timer)
        loop_cancel(r->m->loop, r->timer);
    if (r->deadline)
        loop_cancel(r->m->loop, r->deadline);
    unwatch(r);
    uhttp_free(r->u);
    if (r->queued) {
        r->m->queued--;
        r->queued = false;
    } else if (r->t.easy) {
        CF->multi_remove_handle(r->m->multi, r->t.easy);
    }
    if (r->t.easy) {
        http_transfer_cleanup(&r->t);
    }
    http_result_free(&r->res);
    free(r->method);
    free(r->path);
    free(r->body);
    free(r);
}

static void launch(void *ctx);

/*
 * Drops what carried r's last try (curl has already let go of its easy
 * handle) and sends it again after ms, from a loop timer.
 */
static void retry_later(struct http_request *r, long ms)
{
    if (r->deadline)
        loop_cancel(r->m->loop, r->deadline);
    r->deadline = 0;
    unwatch(r);
    uhttp_free(r->u);
    r->u = NULL;
    if (r->t.easy)
        http_transfer_cleanup(&r->t);
    http_result_clear(&r->res);
    r->waited_ms += ms;
    r->timer = loop_add_timer(r->m->loop, ms, launch, r);
}

/*
 * The request ended (res filled): sent again when the server asked to
 * wait (429/503, http_retry_wait_ms); else its owner is told unless it
 * cancelled, and it is freed.
 */
static void finish(struct http_request *r)
{
    r->res.tries++;
    long wait = r->cancelled ? -1 : http_retry_wait_ms(&r->res, r->waited_ms);
    if (wait >= 0) {
        retry_later(r, wait);
        return;
    }
    unlink_request(r);
    if (!r->cancelled && r->done) {
        r->finishing = true;
        r->done(r->done_ctx, &r->res);
    }
    free_request(r);
}

static CURLM *curl_multi(struct http_multi *m);
static void answer_now(void *ctx);

/* Hands finished transfers to their owners. */
static void collect_done(struct http_multi *m)
{
    CURLMsg *msg;
    int left;
    while ((msg = CF->multi_info_read(m->multi, &left)) != NULL) {
        if (msg->msg != CURLMSG_DONE)
            continue;
        CURL *easy = msg->easy_handle;
        CURLcode rc = msg->data.result;
        struct http_request *r = NULL;
        CF->easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&r);
        CF->multi_remove_handle(m->multi, easy);
        http_transfer_finish(&r->t, rc);
        finish(r);
    }
}

/* Hands r's easy handle to curl; a refusal ends r through done on the next turn. */
static void add_to_curl(struct http_request *r)
{
    CURLMcode rc = CF->multi_add_handle(curl_multi(r->m), r->t.easy);
    if (rc == CURLM_OK)
        return;
    http_transfer_cleanup(&r->t);
    r->res.transport = TRANSPORT_OTHER;
    snprintf(r->res.message, sizeof r->res.message, "cannot start a transfer (curl multi error %d)",
             (int)rc);
    r->timer = loop_add_timer(r->m->loop, 0, answer_now, r);
}

/* Adds the requests started while curl was running, now that it has returned. */
static void add_queued(struct http_multi *m)
{
    while (m->queued) {
        struct http_request *r = m->head;
        while (r && !r->queued)
            r = r->next;
        if (r == NULL)
            break;
        r->queued = false;
        m->queued--;
        add_to_curl(r);
    }
}

/*
 * One step of curl's work on socket fd (or its timeout), then the finished
 * transfers to their owners. A request started from inside curl's callbacks
 * (a stream's on_data opening a screen that asks for something) cannot be
 * added while curl runs (CURLM_RECURSIVE_API_CALL): it waits on the list,
 * marked queued, and is added here once curl has returned. A request
 * started from a done callback is added at once (collect_done runs
 * outside curl).
 */
static void curl_step(struct http_multi *m, curl_socket_t fd, int flags)
{
    int running;
    m->in_curl++;
    CF->multi_socket_action(m->multi, fd, flags, &running);
    m->in_curl--;
    add_queued(m);
    collect_done(m);
}

static void on_socket(void *ctx, int fd, short revents)
{
    struct http_multi *m = ctx;
    int flags = 0;
    if (revents & (POLLIN | POLLHUP))
        flags |= CURL_CSELECT_IN;
    if (revents & POLLOUT)
        flags |= CURL_CSELECT_OUT;
    if (revents & (POLLERR | POLLNVAL))
        flags |= CURL_CSELECT_ERR;
    curl_step(m, fd, flags);
}

static void on_timeout(void *ctx)
{
    struct http_multi *m = ctx;
    m->timer = 0;
    curl_step(m, CURL_SOCKET_TIMEOUT, 0);
}

/* CURLMOPT_SOCKETFUNCTION: watch s for what curl waits for. */
static int socket_cb(CURL *easy, curl_socket_t s, int what, void *userp, void *socketp)
{
    struct http_multi *m = userp;
    (void)easy;
    if (what == CURL_POLL_REMOVE) {
        loop_remove_fd(m->loop, s);
        return 0;
    }
    short events =
        (short)(((what & CURL_POLL_IN) ? POLLIN : 0) | ((what & CURL_POLL_OUT) ? POLLOUT : 0));
    if (socketp == NULL) {
        loop_add_fd(m->loop, s, events, on_socket, m);
        CF->multi_assign(m->multi, s, m);
    } else {
        loop_set_events(m->loop, s, events);
    }
    return 0;
}

/* CURLMOPT_TIMERFUNCTION: one loop timer for curl's next timeout (-1: none). */
static int timer_cb(CURLM *multi, long timeout_ms, void *userp)
{
    struct http_multi *m = userp;
    (void)multi;
    if (m->timer)
        loop_cancel(m->loop, m->timer);
    m->timer = timeout_ms >= 0 ? loop_add_timer(m->loop, timeout_ms, on_timeout, m) : 0;
    return 0;
}

struct http_multi *http_multi_new(struct loop *lp)
{
    struct http_multi *m = xcalloc(1, sizeof *m);
    m->loop = lp;
    return m;
}

/* The curl multi, made on the first TCP request (libcurl is loaded by then). */
static CURLM *curl_multi(struct http_multi *m)
{
    if (m->multi == NULL) {
        m->multi = CF->multi_init();
        if (m->multi == NULL)
            xalloc_die();
        CF->multi_setopt(m->multi, CURLMOPT_SOCKETFUNCTION, socket_cb);
        CF->multi_setopt(m->multi, CURLMOPT_SOCKETDATA, m);
        CF->multi_setopt(m->multi, CURLMOPT_TIMERFUNCTION, timer_cb);
        CF->multi_setopt(m->multi, CURLMOPT_TIMERDATA, m);
    }
    return m->multi;
}

void http_multi_free(struct http_multi *m)
{
    if (m == NULL)
        return;
    while (m->head) {
        struct http_request *r = m->head;
        unlink_request(r);
        free_request(r);
    }
    if (m->timer)
        loop_cancel(m->loop, m->timer);
    if (m->multi)
        CF->multi_cleanup(m->multi);
    free(m);
}

/* Wraps the owner's on_data so a cancel from inside it stops the transfer safely. */
static int request_data(void *ctx, const char *data, size_t len)
{
    struct http_request *r = ctx;
    if (r->cancelled)
        return 1;
    r->in_data = true;
    int rc = r->on_data(r->data_ctx, data, len);
    r->in_data = false;
    return rc != 0 || r->cancelled;
}

/* The Unix socket of r is ready: one step; the request ends here when it is done. */
static void on_unix(void *ctx, int fd, short revents)
{
    struct http_request *r = ctx;
    (void)fd;
    (void)revents;
    int was = r->u_fd;
    bool done = uhttp_step(r->u);
    if (done) {
        /* uhttp closed the socket: forget it before anything can reuse its number. */
        loop_remove_fd(r->m->loop, was);
        r->u_fd = -1;
        finish(r);
        return;
    }
    loop_set_events(r->m->loop, r->u_fd, uhttp_events(r->u));
}

/* A Unix-socket call's whole-request limit passed. */
static void on_deadline(void *ctx)
{
    struct http_request *r = ctx;
    r->deadline = 0;
    unwatch(r);
    uhttp_time_out(r->u);
    finish(r);
}

/* A request answered without curl: the fake transport, or a set-up failure. */
static void answer_now(void *ctx)
{
    struct http_request *r = ctx;
    r->timer = 0;
    if (http_client_faked(r->client)) {
        strbuf_reset(&r->res.body);
        r->res.transport = TRANSPORT_NONE;
        http_transport_run(r->client, r->method, r->path, r->body, r->len,
                           r->on_data ? request_data : NULL, r, &r->res);
    }
    finish(r);
}

struct http_request *http_multi_start(struct http_multi *m, const struct http_client *c,
                                      const char *method, const char *path_and_query,
                                      const char *body, size_t len, http_data_fn on_data,
                                      void *data_ctx, http_done_fn done, void *done_ctx)
{
    struct http_request *r = xcalloc(1, sizeof *r);
    r->m = m;
    r->client = c;
    r->on_data = on_data;
    r->data_ctx = data_ctx;
    r->done = done;
    r->done_ctx = done_ctx;
    http_result_init(&r->res);
    r->next = m->head;
    if (m->head)
        m->head->prev = r;
    m->head = r;
    m->active++;

    r->u_fd = -1;
    r->method = xstrdup(method);
    r->path = xstrdup(path_and_query);
    r->body = body ? memcpy(xmalloc(len ? len : 1), body, len) : NULL;
    r->len = len;
    launch(r);
    return r;
}

/* Sends r (again, after a retry's wait: a loop timer's callback). */
static void launch(void *ctx)
{
    struct http_request *r = ctx;
    struct http_multi *m = r->m;
    const struct http_client *c = r->client;
    http_data_fn on_data = r->on_data ? request_data : NULL;
    r->timer = 0;
    if (http_client_faked(c)) {
        r->timer = loop_add_timer(m->loop, 0, answer_now, r);
        return;
    }
    if (http_client_parsed(c)->unix_path) {
        r->u = http_unix_start(c, r->method, r->path, r->body, r->len, on_data, r, &r->res);
        if (uhttp_finished(r->u)) { /* refused at once: answered on the next turn */
            r->timer = loop_add_timer(m->loop, 0, answer_now, r);
            return;
        }
        r->u_fd = uhttp_fd(r->u);
        loop_add_fd(m->loop, r->u_fd, uhttp_events(r->u), on_unix, r);
        long timeout = http_call_timeout(c, r->on_data != NULL);
        if (timeout > 0)
            r->deadline = loop_add_timer(m->loop, timeout, on_deadline, r);
        return;
    }
    if (http_transfer_prepare(&r->t, c, r->method, r->path, r->body, r->len, on_data, r, &r->res) !=
        0) {
        http_transfer_cleanup(&r->t);
        r->timer = loop_add_timer(m->loop, 0, answer_now, r);
        return;
    }
    CF->easy_setopt(r->t.easy, CURLOPT_PRIVATE, (char *)r);
    if (m->in_curl) {
        r->queued = true; /* curl is running: added once it returns (curl_step) */
        m->queued++;
    } else {
        add_to_curl(r);
    }
}

void http_request_cancel(struct http_request *r)
{
    if (r == NULL || r->finishing || r->cancelled)
        return;
    r->cancelled = true;
    if (r->in_data)
        return; /* request_data stops the transfer; it ends through collect_done */
    unlink_request(r);
    free_request(r);
}

size_t http_multi_active(const struct http_multi *m)
{
    return m->active;
}

struct loop *http_multi_loop(const struct http_multi *m)
{
    return m->loop;
}
