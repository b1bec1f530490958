/*
 * http: libmicrohttpd glue; see http.h. One MHD daemon per listener, both
 * in external-polling epoll mode with suspend/resume, so the engine's poll
 * loop is the only place anything waits.
 *
 * A request is admitted on its headers (admit: who is calling, the declared
 * length) before any body is read; on TCP the signature (api/hmac) must
 * cover the request line and the body's digest and is accepted once
 * (engine/replay). Each listener has an idle timeout and a connection cap
 * sized from the descriptor limit, so neither can starve the other.
 *
 * A shared engine is shared per user (engine/shares): a connection counts
 * against its user once a request on it is signed (TCP) or its peer is known
 * (Unix); until then a TCP connection is anonymous, and anonymous ones get a
 * small share of the slots whatever address they come from (all of loopback
 * is one source) — when it is full the oldest waiting one is closed. Every
 * request must bring its header and body within a deadline counted from the
 * connection's start (or the previous request's end), not an idle timeout
 * that each byte restarts: a client trickling bytes is closed in seconds.
 * The replay table is shared per access key; streams per user (the routes).
 */
#include "engine/http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <poll.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "api/apierror.h"
#include "api/exec_wire.h"
#include "api/hmac.h"
#include "engine/config.h"
#include "engine/engine.h"
#include "engine/exec.h"
#include "engine/flags.h"
#include "engine/replay.h"
#include "engine/routes.h"
#include "engine/shares.h"
#include "engine/state.h"
#include "engine/stream.h"
#include "util/loop.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#define MAX_BODY (1u << 20)
/*
 * How far ahead of the engine's clock an X-Date may be. A replay entry
 * lives as long as its date can still be accepted (date + the 5-minute
 * skew), so a date far ahead would hold a share of the table for twice as
 * long; clients sign with the current time.
 */
#define FUTURE_SKEW_SECONDS 60
#define LOG_PER_SECOND 10

struct streaming;
struct conn;

struct listener {
    struct http_server *srv;
    struct MHD_Daemon *daemon;
    int epoll_fd;
    bool tcp; /* requests must be signed */
    uint64_t timer;
    bool resumed;              /* a parked connection was resumed since the last MHD_run began */
    struct streaming *streams; /* every streamed response in progress, to end them at stop */
    int64_t log_second;        /* log_mhd's rate limit */
    unsigned log_count, log_dropped;
    struct conn *conns, *conns_tail; /* every open connection, oldest first */
    unsigned anonymous;              /* TCP connections no signed request has claimed */
    unsigned idle_seconds;           /* MHD's idle timeout on this listener */
    uint64_t deadline_timer;
};

/*
 * One open connection (MHD's socket context), from accept to close: who it
 * counts against, and when its request (header and body) must be in.
 */
struct conn {
    struct listener *l;
    int fd;
    int64_t since_ms;    /* the connection's start, or its previous request's end */
    bool waiting;        /* a request is due or arriving: the deadline applies */
    bool reused;         /* a request was answered on it before (keep-alive) */
    bool anonymous;      /* TCP, not yet claimed by a signed request */
    bool shut;           /* closed by the engine: MHD will see it gone */
    struct share *share; /* counted in SHARE_CONNECTIONS of this user */
    char *peer;          /* Unix socket: the user behind it, once looked up */
    uid_t peer_uid;
    struct conn *prev, *next;
};

/* A running exec helper holding its user's share until it ends (its pidfd in the loop). */
struct exec_watch {
    struct http_server *srv;
    int pidfd;
    struct share *share;
    struct exec_watch *next;
};

struct http_server {
    struct engine *eng;
    struct loop *loop;
    struct listener unix_l, tcp_l;
    char *socket_path;
    char tcp_address[INET_ADDRSTRLEN + 8]; /* "127.0.0.1:PORT" as bound, or "" */
    struct replay *seen;                   /* signatures accepted on TCP, to refuse replays */
    struct shares *shares;                 /* what each user holds (engine/shares) */
    struct config_limits lim;              /* the per-user limits, as the engine started */
    uid_t own_uid;                         /* the engine's user: not counted on the Unix socket */
    struct exec_watch *execs;              /* helpers holding a share (engine/exec.h) */
};

/*
 * Per-request state, from the request line (MHD's URI callback) to completion.
 * Who is calling is settled on the headers, before any body is read.
 */
struct request {
    char *target;        /* the request target as received: raw path and query */
    char *user;          /* who is calling, once the headers said so */
    struct share *share; /* the caller's share (NULL: the engine's own user) */
    bool close;          /* refused on its headers: end the connection after the answer */
    bool started;        /* the access handler has seen the headers */
    struct strbuf body;
    bool too_large;
    struct exec_upgrade *exec; /* a 101 queued whose connection MHD has not handed over yet */
};

/* Per-streamed-response state. */
struct streaming {
    struct MHD_Connection *conn;
    struct listener *l;
    struct strbuf prefix; /* sent before the stream: the log's tail */
    size_t prefix_sent;
    struct stream *stream;
    int fd;       /* the connection's socket, watched for a hang-up while parked */
    bool watched; /* fd is registered with the loop */
    bool gone;    /* the client hung up while parked: end the response with an error */
    bool suspended;
    bool closing; /* the server stops: end the response */
    struct streaming *prev, *next;
};

static void pump(struct listener *l);
static void arm_deadlines(struct listener *l);

static void on_timer(void *ctx)
{
    struct listener *l = ctx;
    l->timer = 0;
    pump(l);
}

/*
 * Runs MHD and re-arms the loop timer for MHD's own timeouts. A resumed
 * connection needs two runs (one takes it back, the next writes to it) and
 * MHD's timeout does not say so; nor may a resume made during this run (a
 * POST whose job is broadcast to parked watchers) be lost when the timer is
 * re-armed. So after a run that saw or followed a resume, MHD runs again on
 * the next loop turn: without it, a watcher's update waited for some other
 * socket event (with a client that closes its connection at once, forever).
 */
static void pump(struct listener *l)
{
    bool followed_resume = l->resumed;
    l->resumed = false;
    MHD_run(l->daemon);
    MHD_UNSIGNED_LONG_LONG ms;
    if (l->timer) {
        loop_cancel(l->srv->loop, l->timer);
        l->timer = 0;
    }
    if (followed_resume || l->resumed)
        l->timer = loop_add_timer(l->srv->loop, 0, on_timer, l);
    else if (MHD_get_timeout(l->daemon, &ms) == MHD_YES)
        l->timer = loop_add_timer(l->srv->loop, (int64_t)ms, on_timer, l);
}

static void on_ready(void *ctx, int fd, short revents)
{
    (void)fd;
    (void)revents;
    pump(ctx);
}

static const char *query_get(void *ctx, const char *key)
{
    return MHD_lookup_connection_value(ctx, MHD_GET_ARGUMENT_KIND, key);
}

struct each_arg {
    http_arg_fn fn;
    void *arg;
    int rc;
};

static enum MHD_Result on_arg(void *cls, enum MHD_ValueKind kind, const char *key, size_t key_size,
                              const char *value, size_t value_size)
{
    (void)kind;
    struct each_arg *ea = cls;
    ea->rc = ea->fn(ea->arg, key, key_size, value, value_size);
    return ea->rc ? MHD_NO : MHD_YES;
}

/* Every query argument with its decoded length (a %00 inside stays visible). */
static int each_query(void *ctx, http_arg_fn fn, void *arg)
{
    struct each_arg ea = {fn, arg, 0};
    MHD_get_connection_values_n(ctx, MHD_GET_ARGUMENT_KIND, on_arg, &ea);
    return ea.rc;
}

static struct conn *conn_of(struct MHD_Connection *conn);

/*
 * The user behind a Unix-socket connection, by its uid (to *uid). The
 * kernel fixed the peer's credentials at connect: the name is looked up
 * (a read of the password database) for the connection's first request
 * only, not for each request a keep-alive client sends on it.
 */
static char *peer_user(struct MHD_Connection *conn, uid_t *uid)
{
    struct conn *c = conn_of(conn);
    if (c && c->peer) {
        *uid = c->peer_uid;
        return xstrdup(c->peer);
    }
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (info == NULL)
        return NULL;
    struct ucred cred;
    socklen_t len = sizeof cred;
    if (getsockopt(info->connect_fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
        return NULL;
    *uid = cred.uid;
    struct passwd *pw = getpwuid(cred.uid);
    char *name = pw && pw->pw_name ? xstrdup(pw->pw_name) : xasprintf("uid%ld", (long)cred.uid);
    if (c) {
        c->peer = xstrdup(name);
        c->peer_uid = cred.uid;
    }
    return name;
}

static const char *header_of(void *ctx, const char *name)
{
    return MHD_lookup_connection_value(ctx, MHD_HEADER_KIND, name);
}

/*
 * The user a signed TCP request comes from, or NULL with why in err. Runs on
 * the headers alone: the signature must cover x-date, the request line and
 * the body's digest (checked against the body once it is read), and a
 * signature is accepted once.
 */
static char *signed_user(struct http_server *srv, struct MHD_Connection *conn, const char *method,
                         const char *target, const char *version, struct api_error *err)
{
    const char *auth = header_of(conn, "Authorization");
    struct hmac_auth a;
    if (auth == NULL) {
        api_error_set(err, 401, "Unauthenticated", "", "missing Authorization header");
        return NULL;
    }
    if (!hmac_parse(auth, &a)) {
        api_error_set(err, 401, "Unauthenticated", "",
                      "Authorization must be: hmac accesskey=\"…\", algorithm=\"hmac-sha256\", "
                      "headers=\"%s\", signature=\"…\"",
                      HMAC_SIGNED_HEADERS);
        return NULL;
    }
    const char *secret = NULL;
    const char *user = engine_key_user(srv->eng, a.access_key, &secret);
    if (user == NULL) {
        api_error_set(err, 401, "Unauthenticated", "", "unknown access key");
        return NULL;
    }
    char *line = xasprintf("%s %s %s", method, target, version);
    time_t now = time(NULL), date = 0;
    const char *why =
        hmac_verify(&a, secret, line, header_of, conn, "x-date request-line digest", now, &date);
    free(line);
    if (why) {
        api_error_set(err, 401, "Unauthenticated", "", "%s", why);
        return NULL;
    }
    if (date > now + FUTURE_SKEW_SECONDS) {
        api_error_set(err, 401, "Unauthenticated", "",
                      "X-Date is %lld s ahead of the engine's clock, more than the %d s allowed: "
                      "sign with the current time",
                      (long long)(date - now), FUTURE_SKEW_SECONDS);
        return NULL;
    }
    /* Recorded only now, the signature having passed: only the key's owner fills its share. */
    switch (replay_check(srv->seen, a.access_key, a.signature, date + HMAC_MAX_SKEW_SECONDS, now)) {
    case REPLAY_NEW:
        return xstrdup(user);
    case REPLAY_SEEN:
        api_error_set(err, 401, "Unauthenticated", "",
                      "this signature was used before: sign every request afresh");
        return NULL;
    case REPLAY_FULL:
        break;
    }
    time_t frees = replay_key_frees_at(srv->seen, a.access_key);
    api_error_set(err, 429, "TooManyRequests", "",
                  "replay table for key %s full: %zu signed requests in the last %d s "
                  "(limits.replay_per_key); wait %lld s or slow down",
                  a.access_key, replay_per_key(srv->seen),
                  HMAC_MAX_SKEW_SECONDS + FUTURE_SKEW_SECONDS,
                  (long long)(frees > now ? frees - now + 1 : 1));
    return NULL;
}

/* The connection's own record (MHD's socket context), or NULL. */
static struct conn *conn_of(struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info ? info->socket_context : NULL;
}

/* A response is queued: the request deadline no longer applies (a stream may last). */
static void answered(struct MHD_Connection *conn)
{
    struct conn *c = conn_of(conn);
    if (c)
        c->waiting = false;
}

/* Sends body (consumed); a NULL body (JSON that could not be built) becomes a plain 500. */
static enum MHD_Result send_json_as(struct MHD_Connection *conn, int status, json_t *body,
                                    bool close_after)
{
    char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    json_decref(body);
    if (text == NULL) {
        status = 500;
        text = xstrdup("{\"code\":500,\"message\":\"the reply could not be built\","
                       "\"details\":[{\"reason\":\"Internal\"}]}");
    }
    size_t len = strlen(text);
    text = xrealloc(text, len + 2);
    text[len++] = '\n';
    struct MHD_Response *r = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
    MHD_add_response_header(r, "Content-Type", "application/json");
    if (close_after)
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
    answered(conn);
    enum MHD_Result rc = MHD_queue_response(conn, (unsigned)status, r);
    MHD_destroy_response(r);
    return rc;
}

static enum MHD_Result send_json(struct MHD_Connection *conn, int status, json_t *body)
{
    return send_json_as(conn, status, body, false);
}

/* What the upgrade handler of an exec needs; freed by it, or with the request if never called. */
struct exec_upgrade {
    struct http_server *srv;
    struct exec_plan *plan;
    struct request *rq;
};

static void exec_upgrade_free(struct exec_upgrade *x)
{
    if (x == NULL)
        return;
    if (x->rq)
        x->rq->exec = NULL;
    engine_exec_plan_free(x->plan);
    free(x);
}

static void unwatch_exec(struct http_server *srv, struct exec_watch *w)
{
    for (struct exec_watch **pp = &srv->execs; *pp; pp = &(*pp)->next)
        if (*pp == w) {
            *pp = w->next;
            break;
        }
    loop_remove_fd(srv->loop, w->pidfd);
    close(w->pidfd);
    free(w);
}

/* A helper ended: its user's share comes back. */
static void on_exec_end(void *ctx, int fd, short revents)
{
    (void)fd;
    (void)revents;
    struct exec_watch *w = ctx;
    share_give(w->share, SHARE_STREAMS, 1);
    unwatch_exec(w->srv, w);
}

/* Keeps the plan's share with the helper pid until it ends (given back now if it cannot be). */
static void watch_exec(struct http_server *srv, struct exec_plan *p, pid_t pid)
{
    if (p->share == NULL)
        return;
    int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (pidfd < 0)
        return; /* no pidfd (kernel before 5.3): not counted (engine_exec_plan_free gives it back)
                 */
    struct exec_watch *w = xcalloc(1, sizeof *w);
    w->srv = srv;
    w->pidfd = pidfd;
    w->share = p->share;
    p->share = NULL;
    w->next = srv->execs;
    srv->execs = w;
    loop_add_fd(srv->loop, pidfd, POLLIN, on_exec_end, w);
}

/*
 * The switched connection of an exec (101 sent): a duplicate goes to the
 * helper (engine/exec.h), MHD closes its own at once. The client sends
 * nothing before it reads the 101, so nothing of its request is in extra_in.
 */
static void on_exec_upgrade(void *cls, struct MHD_Connection *conn, void *con_cls,
                            const char *extra_in, size_t extra_in_size, MHD_socket sock,
                            struct MHD_UpgradeResponseHandle *urh)
{
    (void)conn;
    (void)con_cls;
    (void)extra_in;
    struct exec_upgrade *x = cls;
    struct exec_plan *p = x->plan;
    int fd = extra_in_size ? -1 : fcntl(sock, F_DUPFD_CLOEXEC, 4);
    struct strbuf why = STRBUF_INIT;
    pid_t pid = 0;
    if (fd < 0)
        engine_log("exec: %s/%s: the client sent its request too early", p->job, p->worker);
    else if (engine_exec_spawn(p, fd, &pid, &why) != 0)
        engine_log("exec: %s/%s: %s", p->job, p->worker, strbuf_str(&why));
    else
        watch_exec(x->srv, p, pid);
    if (fd >= 0)
        close(fd);
    strbuf_free(&why);
    exec_upgrade_free(x);
    MHD_upgrade_action(urh, MHD_UPGRADE_ACTION_CLOSE);
}

/* Answers an exec the routes allowed: 101 on the Unix socket when the client asked for it. */
static enum MHD_Result send_exec(struct listener *l, struct MHD_Connection *conn,
                                 struct request *rq, struct exec_plan *p)
{
    struct api_error err;
    const char *up = header_of(conn, MHD_HTTP_HEADER_UPGRADE);
    if (l->tcp) {
        engine_exec_plan_free(p);
        api_error_set(&err, 501, "Unsupported", "",
                      "exec passes the client's terminal as a descriptor: only on the engine's "
                      "Unix socket, not over TCP");
        return send_json(conn, 501, api_error_to_json(&err));
    }
    if (up == NULL || strcmp(up, EXEC_WIRE_UPGRADE) != 0) {
        engine_exec_plan_free(p);
        api_error_set(&err, 426, "UpgradeRequired", "",
                      "exec switches the connection: send Connection: Upgrade and Upgrade: %s",
                      EXEC_WIRE_UPGRADE);
        return send_json(conn, 426, api_error_to_json(&err));
    }
    struct exec_upgrade *x = xcalloc(1, sizeof *x);
    x->srv = l->srv;
    x->plan = p;
    x->rq = rq;
    struct MHD_Response *r = MHD_create_response_for_upgrade(on_exec_upgrade, x);
    if (r == NULL) {
        exec_upgrade_free(x);
        api_error_set(&err, 500, "Internal", "", "cannot switch the connection");
        return send_json(conn, 500, api_error_to_json(&err));
    }
    rq->exec = x;
    MHD_add_response_header(r, MHD_HTTP_HEADER_UPGRADE, EXEC_WIRE_UPGRADE);
    answered(conn);
    enum MHD_Result rc = MHD_queue_response(conn, MHD_HTTP_SWITCHING_PROTOCOLS, r);
    MHD_destroy_response(r);
    return rc;
}

/* Runs MHD on the next loop turn (after the current callback returns). */
static void pump_soon(struct listener *l)
{
    if (l->timer)
        loop_cancel(l->srv->loop, l->timer);
    l->timer = loop_add_timer(l->srv->loop, 0, on_timer, l);
}

/* Stops watching a parked stream's socket; before MHD has it back (and may close it). */
static void unwatch_peer(struct streaming *st)
{
    if (st->watched) {
        loop_remove_fd(st->l->srv->loop, st->fd);
        st->watched = false;
    }
}

static void wake(void *ctx)
{
    struct streaming *st = ctx;
    if (st->suspended) {
        unwatch_peer(st);
        st->suspended = false;
        MHD_resume_connection(st->conn);
        /* In external polling mode a resumed connection moves on at the next MHD_run. */
        st->l->resumed = true;
        pump_soon(st->l);
    }
}

/*
 * A parked connection is out of MHD's epoll set, so MHD cannot see its
 * client leave: the loop watches the socket for a hang-up instead (POLLRDHUP,
 * not POLLIN, so bytes a client sends meanwhile cannot spin the loop), and
 * the connection is resumed only to be closed. Without this a watcher that
 * quits while nothing changes keeps its socket and buffers until the next
 * job event.
 */
static void on_peer(void *ctx, int fd, short revents)
{
    struct streaming *st = ctx;
    (void)fd;
    if (!(revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)))
        return;
    st->gone = true;
    wake(st);
}

static ssize_t read_stream(void *cls, uint64_t pos, char *buf, size_t max)
{
    struct streaming *st = cls;
    (void)pos;
    if (st->gone)
        return MHD_CONTENT_READER_END_WITH_ERROR;
    if (st->closing)
        return MHD_CONTENT_READER_END_OF_STREAM;
    if (st->prefix_sent < st->prefix.len) {
        size_t n = st->prefix.len - st->prefix_sent;
        if (n > max)
            n = max;
        memcpy(buf, st->prefix.buf + st->prefix_sent, n);
        st->prefix_sent += n;
        return (ssize_t)n;
    }
    if (st->stream == NULL)
        return MHD_CONTENT_READER_END_OF_STREAM;
    size_t n = stream_read(st->stream, buf, max);
    if (n > 0)
        return (ssize_t)n;
    if (stream_closed(st->stream))
        return MHD_CONTENT_READER_END_OF_STREAM;
    /* Nothing yet: park until the engine writes (microhttpd.h's pattern). */
    stream_park(st->stream);
    st->suspended = true;
    MHD_suspend_connection(st->conn);
    if (st->fd >= 0) {
        loop_add_fd(st->l->srv->loop, st->fd, POLLRDHUP, on_peer, st);
        st->watched = true;
    }
    return 0;
}

static void free_stream(void *cls)
{
    struct streaming *st = cls;
    if (st->prev)
        st->prev->next = st->next;
    else
        st->l->streams = st->next;
    if (st->next)
        st->next->prev = st->prev;
    unwatch_peer(st);
    if (st->stream) {
        stream_abandon(st->stream);
        stream_unref(st->stream);
        engine_prune_watchers(st->l->srv->eng);
    }
    strbuf_free(&st->prefix);
    free(st);
}

static enum MHD_Result send_stream(struct listener *l, struct MHD_Connection *conn,
                                   struct http_response *resp)
{
    struct streaming *st = xcalloc(1, sizeof *st);
    st->conn = conn;
    st->l = l;
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    st->fd = info ? info->connect_fd : -1;
    st->next = l->streams;
    if (l->streams)
        l->streams->prev = st;
    l->streams = st;
    st->prefix = resp->text;
    resp->text = (struct strbuf)STRBUF_INIT;
    st->stream = resp->stream;
    resp->stream = NULL;
    if (st->stream)
        stream_set_waker(st->stream, wake, st);
    struct MHD_Response *r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 64 * 1024,
                                                               read_stream, st, free_stream);
    MHD_add_response_header(r, "Content-Type",
                            resp->content_type ? resp->content_type : "text/plain");
    MHD_add_response_header(r, "Cache-Control", "no-cache");
    answered(conn);
    enum MHD_Result rc = MHD_queue_response(conn, (unsigned)resp->status, r);
    MHD_destroy_response(r);
    return rc;
}

/* Keeps the raw request target (path and query as sent) for the signed request line. */
static void *on_uri(void *cls, const char *uri, struct MHD_Connection *conn)
{
    (void)cls;
    (void)conn;
    struct request *rq = xcalloc(1, sizeof *rq);
    rq->target = xstrdup(uri ? uri : "");
    return rq;
}

/*
 * The first call, on the headers alone: who is calling, and whether the
 * declared body may come. Returns 0, or an HTTP status (err filled) to answer
 * at once, before a byte of body is read.
 */
/*
 * The connection now counts against its user (once: a keep-alive connection
 * stays with the user of its first request). 0, or 429 at the user's limit.
 */
static int claim_conn(struct listener *l, struct MHD_Connection *conn, struct request *rq,
                      struct api_error *err)
{
    struct conn *c = conn_of(conn);
    if (c == NULL)
        return 0;
    if (c->anonymous) {
        c->anonymous = false;
        l->anonymous--;
    }
    if (c->share || rq->share == NULL)
        return 0;
    size_t limit = (size_t)l->srv->lim.connections_per_member;
    if (!share_take(rq->share, SHARE_CONNECTIONS, 1, limit))
        return api_error_set(err, 429, "TooManyConnections", "",
                             "%s has %zu connections open, the most one user may "
                             "(limits.connections_per_member): close some or reuse them",
                             rq->user, share_used(rq->share, SHARE_CONNECTIONS));
    c->share = rq->share;
    return 0;
}

static int admit(struct listener *l, struct MHD_Connection *conn, struct request *rq,
                 const char *method, const char *version, struct api_error *err)
{
    uid_t uid = (uid_t)-1;
    rq->user = l->tcp ? signed_user(l->srv, conn, method, rq->target, version, err)
                      : peer_user(conn, &uid);
    if (rq->user == NULL) {
        rq->close = true;
        return err->status
                   ? err->status
                   : api_error_set(err, 401, "Unauthenticated", "", "cannot tell who is calling");
    }
    rq->share = l->tcp || uid != l->srv->own_uid ? shares_of(l->srv->shares, rq->user) : NULL;
    int st = claim_conn(l, conn, rq, err);
    if (st) {
        rq->close = true;
        return st;
    }
    const char *cl = header_of(conn, "Content-Length");
    if (cl && strtoull(cl, NULL, 10) > MAX_BODY)
        return api_error_set(err, 413, "TooLarge", "", "request body over %u bytes", MAX_BODY);
    return 0;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_size, void **con_cls)
{
    struct listener *l = cls;
    struct request *rq = *con_cls;
    struct api_error err = {0};
    if (rq == NULL) /* no URI callback ran (cannot happen with ours): a target we cannot sign */
        *con_cls = rq = on_uri(NULL, "", conn);
    if (!rq->started) {
        rq->started = true;
        int st = admit(l, conn, rq, method, version, &err);
        /* Answering now, with the body unread, makes MHD close the connection after. */
        return st ? send_json_as(conn, st, api_error_to_json(&err), rq->close) : MHD_YES;
    }
    if (*upload_size > 0) {
        if (rq->body.len + *upload_size > MAX_BODY)
            rq->too_large = true;
        else
            strbuf_add(&rq->body, upload_data, *upload_size);
        *upload_size = 0;
        return MHD_YES;
    }
    if (rq->too_large) {
        api_error_set(&err, 413, "TooLarge", "", "request body over %u bytes", MAX_BODY);
        return send_json(conn, 413, api_error_to_json(&err));
    }
    if (l->tcp && !hmac_digest_matches(header_of(conn, "Digest"), rq->body.buf, rq->body.len)) {
        api_error_set(&err, 401, "Unauthenticated", "",
                      "the Digest header does not match the body (SHA-256=base64(sha256(body)))");
        return send_json(conn, 401, api_error_to_json(&err));
    }
    struct http_request req = {
        method,       url,      rq->target, query_get,   each_query, conn, strbuf_str(&rq->body),
        rq->body.len, rq->user, rq->share,  &l->srv->lim};
    struct http_response resp = {0};
    resp.text = (struct strbuf)STRBUF_INIT;
    routes_handle(l->srv->eng, &req, &resp);
    enum MHD_Result rc;
    if (resp.exec)
        rc = send_exec(l, conn, rq, resp.exec);
    else if (resp.stream || resp.text.len)
        rc = send_stream(l, conn, &resp);
    else
        rc =
            send_json(conn, resp.status ? resp.status : 500, resp.json ? resp.json : json_object());
    strbuf_free(&resp.text);
    if (resp.stream)
        stream_unref(resp.stream);
    return rc;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)toe;
    struct conn *c = conn_of(conn);
    if (c) { /* the next request on this connection is due from now */
        c->since_ms = loop_now_ms();
        c->waiting = true;
        c->reused = true;
        arm_deadlines(c->l);
    }
    struct request *rq = *con_cls;
    if (rq) {
        if (rq->exec) { /* the connection ended before MHD handed it over */
            rq->exec->rq = NULL;
            exec_upgrade_free(rq->exec);
        }
        strbuf_free(&rq->body);
        free(rq->target);
        free(rq->user);
        free(rq);
        *con_cls = NULL;
    }
}

/*
 * MHD's messages, at most LOG_PER_SECOND a second per listener: a flood of
 * connections must not flood the log too. What was left out is counted.
 */
static void log_mhd(void *cls, const char *fmt, va_list ap)
{
    struct listener *l = cls;
    int64_t second = loop_now_ms() / 1000;
    if (second != l->log_second) {
        if (l->log_dropped)
            engine_log("http: %u more messages like these in a second, not shown", l->log_dropped);
        l->log_second = second;
        l->log_count = l->log_dropped = 0;
    }
    if (++l->log_count > LOG_PER_SECOND) {
        l->log_dropped++;
        return;
    }
    char buf[512];
    vsnprintf(buf, sizeof buf, fmt, ap);
    buf[strcspn(buf, "\n")] = '\0';
    engine_log("http: %s", buf);
}

/* Closes a connection under MHD: shutdown makes its socket read as ended, and MHD closes it. */
static void shut_conn(struct conn *c)
{
    if (!c->shut && c->fd >= 0) {
        shutdown(c->fd, SHUT_RDWR);
        c->shut = true;
    }
}

/* How long the request now due on c may take to arrive, in ms. */
static int64_t deadline_ms(const struct conn *c)
{
    int64_t ms = (int64_t)c->l->srv->lim.request_seconds * 1000;
    /* Between keep-alive requests a client may first be idle, as long as MHD allows. */
    return c->reused ? ms + (int64_t)c->l->idle_seconds * 1000 : ms;
}

static void trim_anonymous(struct listener *l, int64_t now);

/* Once a second while requests are due: closes each whose header or body is late. */
static void on_deadline(void *ctx)
{
    struct listener *l = ctx;
    l->deadline_timer = 0;
    int64_t now = loop_now_ms();
    unsigned closed = 0;
    bool due = false;
    for (struct conn *c = l->conns; c; c = c->next) {
        if (c->waiting && !c->shut && now - c->since_ms > deadline_ms(c)) {
            shut_conn(c);
            closed++;
        }
        due = due || (c->waiting && !c->shut);
    }
    if (closed)
        engine_log("http: closed %u connection%s whose request took over %d s to arrive", closed,
                   closed == 1 ? "" : "s", l->srv->lim.request_seconds);
    trim_anonymous(l, now);
    if (due) /* only while a request is due: idle watch streams do not wake the engine */
        arm_deadlines(l);
}

static void arm_deadlines(struct listener *l)
{
    if (l->deadline_timer == 0)
        l->deadline_timer = loop_add_timer(l->srv->loop, 1000, on_deadline, l);
}

/*
 * A TCP connection no signed request has claimed yet is anonymous; all of
 * them together get anonymous_connections slots, whatever address they come
 * from, so they can never fill the listener. Past that, the oldest anonymous
 * connection still waiting for its request after ANONYMOUS_GRACE_MS is
 * closed: a fair client sends its request at once, so what is left waiting
 * is the flood. When every one is younger than that (a flood that dials
 * again as fast as it is closed), the oldest is closed all the same, never
 * the newcomer: a member's new connection then lives until a whole pool of
 * newer ones has come after it, which is longer than its request takes.
 */
#define ANONYMOUS_GRACE_MS 100

static void trim_anonymous(struct listener *l, int64_t now)
{
    unsigned cap = (unsigned)l->srv->lim.anonymous_connections;
    for (struct conn *o = l->conns; o && l->anonymous > cap; o = o->next)
        if (o->anonymous && o->waiting && !o->shut && now - o->since_ms >= ANONYMOUS_GRACE_MS) {
            shut_conn(o);
            o->anonymous = false; /* no longer counted: it is on its way out */
            l->anonymous--;
        }
    /* A burst: the oldest first (the list is in the order connections came). */
    for (struct conn *o = l->conns; o && l->anonymous > cap; o = o->next)
        if (o->anonymous && o->waiting && !o->shut) {
            shut_conn(o);
            o->anonymous = false;
            l->anonymous--;
        }
}

/* MHD's connection start and end: the record the deadline and the shares use. */
static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
    struct listener *l = cls;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        struct conn *c = xcalloc(1, sizeof *c);
        const union MHD_ConnectionInfo *info =
            MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        c->l = l;
        c->fd = info ? info->connect_fd : -1;
        c->since_ms = loop_now_ms();
        c->waiting = true;
        c->prev = l->conns_tail;
        if (l->conns_tail)
            l->conns_tail->next = c;
        else
            l->conns = c;
        l->conns_tail = c;
        *socket_context = c;
        if (l->tcp) {
            c->anonymous = true;
            l->anonymous++;
            trim_anonymous(l, c->since_ms);
        }
        arm_deadlines(l);
        return;
    }
    struct conn *c = *socket_context;
    if (c == NULL)
        return;
    if (c->prev)
        c->prev->next = c->next;
    else
        l->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    else
        l->conns_tail = c->prev;
    if (c->anonymous)
        l->anonymous--;
    share_give(c->share, SHARE_CONNECTIONS, 1);
    free(c->peer);
    free(c);
    *socket_context = NULL;
}

/*
 * Descriptor budget. The soft RLIMIT_NOFILE is raised to the hard one (at
 * most MAX_FDS); FD_HEADROOM stays for the engine itself (store, logs,
 * inotify, shims' pipes, the listeners); of the rest the owner's Unix socket
 * gets a quarter and TCP half, so neither listener can starve the other or
 * the engine, and accept() never meets EMFILE.
 */
#define MAX_FDS 65536
#define FD_HEADROOM 256
#define MAX_CONNECTIONS 1024 /* per listener */
#define LISTEN_BACKLOG 1024
#define TCP_IDLE_SECONDS 30 /* a connection that sends nothing for this long is closed */
#define UNIX_IDLE_SECONDS 120

static unsigned fd_budget(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return 1024;
    rlim_t want = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > MAX_FDS ? MAX_FDS : rl.rlim_max;
    if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < want) {
        rl.rlim_cur = want;
        if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
            getrlimit(RLIMIT_NOFILE, &rl);
    }
    rlim_t have = rl.rlim_cur == RLIM_INFINITY ? MAX_FDS : rl.rlim_cur;
    return have > 2 * FD_HEADROOM ? (unsigned)(have - FD_HEADROOM) : FD_HEADROOM;
}

static unsigned at_most(unsigned a, unsigned b)
{
    return a < b ? a : b;
}

static int start_listener(struct http_server *srv, struct listener *l, int listen_fd,
                          struct strbuf *err)
{
    l->srv = srv;
    unsigned budget = fd_budget();
    unsigned limit = at_most(MAX_CONNECTIONS, l->tcp ? budget / 2 : budget / 4);
    /* Per address: anonymous connections are capped as one source, signed ones per user. */
    unsigned idle = l->tcp ? TCP_IDLE_SECONDS : UNIX_IDLE_SECONDS;
    l->idle_seconds = idle;
    unsigned flags = MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;
    if (!l->tcp)
        flags |= MHD_ALLOW_UPGRADE; /* exec (engine/exec.h) */
    struct MHD_OptionItem opts[] = {
        {MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)log_mhd, l},
        {MHD_OPTION_URI_LOG_CALLBACK, (intptr_t)on_uri, l},
        {MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)on_completed, l},
        {MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)on_connection, l},
        {MHD_OPTION_CONNECTION_TIMEOUT, idle, NULL},
        {MHD_OPTION_CONNECTION_LIMIT, limit, NULL},
        {MHD_OPTION_LISTEN_BACKLOG_SIZE, LISTEN_BACKLOG, NULL},
        {MHD_OPTION_LISTEN_SOCKET, listen_fd, NULL},
        {MHD_OPTION_END, 0, NULL},
    };
    l->daemon = MHD_start_daemon(flags, 0, NULL, NULL, on_request, l, MHD_OPTION_ARRAY, opts,
                                 MHD_OPTION_END);
    if (l->daemon == NULL) {
        strbuf_addf(err, "could not start the HTTP server%s", l->tcp ? " on TCP" : "");
        return -1;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(l->daemon, MHD_DAEMON_INFO_EPOLL_FD);
    l->epoll_fd = info->epoll_fd;
    loop_add_fd(srv->loop, l->epoll_fd, POLLIN, on_ready, l);
    pump(l);
    return 0;
}

static int unix_socket(const char *path, struct strbuf *err)
{
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    if (strlen(path) >= sizeof a.sun_path) {
        strbuf_addf(err, "%s: socket path too long", path);
        return -1;
    }
    memcpy(a.sun_path, path, strlen(path) + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        strbuf_addf(err, "socket: %s", strerror(errno));
        return -1;
    }
    /* A stale socket from a crashed engine is replaced; a live one is not. */
    if (connect(fd, (struct sockaddr *)&a, sizeof a) == 0) {
        strbuf_addf(err, "%s: another trainjobd is already listening there", path);
        close(fd);
        return -1;
    }
    unlink(path);
    mode_t old = umask(0177);
    int rc = bind(fd, (struct sockaddr *)&a, sizeof a);
    umask(old);
    if (rc != 0 || chmod(path, 0600) != 0 || listen(fd, LISTEN_BACKLOG) != 0) {
        strbuf_addf(err, "%s: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

/*
 * The loopback TCP socket of --listen, bound here rather than by MHD so that
 * a failure says why ("Address already in use"); SO_REUSEADDR lets a
 * restarted engine take its port back from connections still in TIME_WAIT.
 * The address as bound (port 0 becomes the one the kernel chose) goes to out.
 */
static int tcp_socket(const char *text, char *out, size_t size, struct strbuf *err)
{
    struct sockaddr_in a;
    if (flags_parse_listen("--listen", text, &a, err) != 0)
        return -1;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int on = 1;
    socklen_t len = sizeof a;
    char host[INET_ADDRSTRLEN];
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on) != 0 ||
        bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, LISTEN_BACKLOG) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) != 0 ||
        inet_ntop(AF_INET, &a.sin_addr, host, sizeof host) == NULL) {
        strbuf_addf(err, "--listen %s: %s", text, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    snprintf(out, size, "%s:%u", host, (unsigned)ntohs(a.sin_port));
    return fd;
}

struct http_server *http_server_start(struct engine *eng, struct loop *lp, const char *socket_path,
                                      const char *listen_addr, struct strbuf *err)
{
    struct http_server *srv = xcalloc(1, sizeof *srv);
    srv->eng = eng;
    srv->loop = lp;
    srv->unix_l.epoll_fd = srv->tcp_l.epoll_fd = -1;
    srv->shares = shares_new();
    config_effective_limits(&eng->cfg, &srv->lim);
    srv->own_uid = geteuid();
    int fd = unix_socket(socket_path, err);
    if (fd < 0) {
        shares_free(srv->shares);
        free(srv);
        return NULL;
    }
    srv->socket_path = xstrdup(socket_path);
    if (start_listener(srv, &srv->unix_l, fd, err) != 0) {
        close(fd);
        http_server_stop(srv);
        return NULL;
    }
    if (listen_addr) {
        srv->tcp_l.tcp = true;
        /* Every TCP request's signature is checked with libcrypto: loaded now, or no listener. */
        const char *why = hmac_load();
        if (why) {
            strbuf_addf(err, "--listen %s: %s", listen_addr, why);
            http_server_stop(srv);
            return NULL;
        }
        fd = tcp_socket(listen_addr, srv->tcp_address, sizeof srv->tcp_address, err);
        if (fd < 0) {
            http_server_stop(srv);
            return NULL;
        }
        srv->seen = replay_new((size_t)srv->lim.replay_per_key);
        if (start_listener(srv, &srv->tcp_l, fd, err) != 0) {
            close(fd);
            http_server_stop(srv);
            return NULL;
        }
    }
    return srv;
}

const char *http_server_tcp_address(const struct http_server *srv)
{
    return srv->tcp_address[0] ? srv->tcp_address : NULL;
}

static void stop_listener(struct http_server *srv, struct listener *l)
{
    if (l->timer)
        loop_cancel(srv->loop, l->timer);
    if (l->deadline_timer)
        loop_cancel(srv->loop, l->deadline_timer);
    l->deadline_timer = 0;
    if (l->epoll_fd >= 0)
        loop_remove_fd(srv->loop, l->epoll_fd);
    if (l->daemon == NULL)
        return;
    /* MHD may not stop with parked connections (a fatal error): wake each, end its response. */
    bool resumed = false;
    for (struct streaming *st = l->streams; st; st = st->next) {
        st->closing = true;
        if (st->suspended) {
            unwatch_peer(st);
            st->suspended = false;
            MHD_resume_connection(st->conn);
            resumed = true;
        }
    }
    if (resumed)
        MHD_run(l->daemon);
    MHD_stop_daemon(l->daemon);
}

void http_server_stop(struct http_server *srv)
{
    if (srv == NULL)
        return;
    stop_listener(srv, &srv->unix_l);
    stop_listener(srv, &srv->tcp_l);
    while (srv->execs)
        unwatch_exec(srv, srv->execs);
    if (srv->socket_path)
        unlink(srv->socket_path);
    free(srv->socket_path);
    replay_free(srv->seen);
    shares_free(srv->shares);
    free(srv);
}
