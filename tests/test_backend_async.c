/*
 * test_backend_async: backend calls that do not block (api/backend.h's
 * backend_send over api/http_multi.h) — replies decoded as the blocking
 * calls decode them, delivered from the loop and never from inside the
 * send, a watch stream over a real Unix socket split into messages, a cancel
 * from inside a stream's own callback, a server that does not answer
 * leaving the loop free for everything else, and an unreachable socket.
 */
// clang-format off
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
// clang-format on

#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "api/acp.h"
#include "api/backend.h"
#include "api/http.h"
#include "api/http_multi.h"
#include "util/loop.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

/* ---- a canned transport --------------------------------------------------- */

static const char *canned_body;
static int canned_status;
static int canned_calls;
static char canned_path[512], canned_sent[4096]; /* what the last request asked, and its body */

static void canned(void *ctx, const char *method, const char *path, const char *body, size_t len,
                   http_data_fn on_data, void *data_ctx, struct http_result *out)
{
    (void)ctx, (void)method;
    canned_calls++;
    snprintf(canned_path, sizeof canned_path, "%s", path);
    snprintf(canned_sent, sizeof canned_sent, "%.*s", (int)len, body ? body : "");
    out->transport = TRANSPORT_NONE;
    out->status = canned_status;
    if (on_data && canned_status < 300)
        on_data(data_ctx, canned_body, strlen(canned_body));
    else
        strbuf_adds(&out->body, canned_body);
}

static struct backend *open_backend(const char *endpoint, bool fake, bool trainjobd)
{
    struct strbuf err = STRBUF_INIT;
    struct http_client *c = http_client_new(endpoint, &err);
    assert_non_null(c);
    strbuf_free(&err);
    if (fake)
        http_client_set_transport(c, canned, NULL);
    struct backend_target t = {(char *)"local", (char *)"default", (char *)"local-1z",
                               (char *)"default"};
    return acp_backend_new(c, &t, trainjobd);
}

/* What the callbacks saw. */
struct seen {
    int replies;
    enum backend_status status;
    struct api_error err;
    char job[64];
    int messages, jobs, synced;
    bool cancel_on_synced;
    struct backend_call *call;
    struct strbuf data;
};

static void on_reply(void *ctx, struct backend_reply *r)
{
    struct seen *s = ctx;
    s->replies++;
    s->status = r->status;
    s->err = r->err;
    snprintf(s->job, sizeof s->job, "%s", r->job.name ? r->job.name : "");
}

static int on_message(void *ctx, const struct watch_message *m)
{
    struct seen *s = ctx;
    s->messages++;
    if (m->kind == WATCH_JOB)
        s->jobs++;
    if (m->kind == WATCH_SYNCED) {
        s->synced++;
        if (s->cancel_on_synced)
            backend_call_cancel(s->call);
    }
    return 0;
}

/* Runs the loop until cond holds or ms pass. */
#define RUN_UNTIL(lp, cond, ms)                                                                    \
    do {                                                                                           \
        int64_t end_ = loop_now_ms() + (ms);                                                       \
        while (!(cond) && loop_now_ms() < end_)                                                    \
            loop_run_once((lp), 50);                                                               \
    } while (0)

static void replies_come_from_the_loop_decoded(void **state)
{
    (void)state;
    struct loop *lp = loop_new();
    struct http_multi *m = http_multi_new(lp);
    struct backend *b = open_backend("http+unix:///tmp/none.sock", true, true);
    canned_status = 200;
    canned_body = "{\"name\":\"pt-abc\",\"display_name\":\"x\",\"state\":\"RUNNING\"}";
    canned_calls = 0;
    struct seen s = {0};
    struct backend_request rq = {.op = BACKEND_OP_GET, .name = "pt-abc"};
    backend_send(b, m, &rq, on_reply, NULL, NULL, &s);
    assert_int_equal(s.replies, 0); /* never inside the send */
    RUN_UNTIL(lp, s.replies > 0, 2000);
    assert_int_equal(s.replies, 1);
    assert_int_equal(s.status, BACKEND_OK);
    assert_string_equal(s.job, "pt-abc");

    /* A rejection keeps the server's field. */
    canned_status = 409;
    canned_body = "{\"code\":409,\"message\":\"name taken\",\"details\":[{\"reason\":\"NameTaken\","
                  "\"field\":\"name\"}]}";
    s.replies = 0;
    backend_send(b, m, &rq, on_reply, NULL, NULL, &s);
    RUN_UNTIL(lp, s.replies > 0, 2000);
    assert_int_equal(s.status, BACKEND_REJECTED);
    assert_int_equal(s.err.status, 409);
    assert_non_null(strstr(s.err.message, "name taken"));

    /* What this server lacks ends through the callback too, from the loop. */
    struct backend *acp = open_backend("https://acp.example.com", true, false);
    struct backend_request ev = {.op = BACKEND_OP_EVENTS, .name = "pt-abc"};
    s.replies = 0;
    canned_calls = 0;
    backend_send(acp, m, &ev, on_reply, NULL, NULL, &s);
    assert_int_equal(s.replies, 0);
    RUN_UNTIL(lp, s.replies > 0, 2000);
    assert_int_equal(s.status, BACKEND_REJECTED);
    assert_int_equal(s.err.status, 501);
    assert_int_equal(canned_calls, 0);

    /* A cancelled call never calls back. */
    s.replies = 0;
    struct backend_call *c = backend_send(b, m, &rq, on_reply, NULL, NULL, &s);
    backend_call_cancel(c);
    for (int i = 0; i < 5; i++)
        loop_run_once(lp, 10);
    assert_int_equal(s.replies, 0);
    assert_int_equal(http_multi_active(m), 0);

    /* A create: the job goes as JSON (kept by the send: the caller's job may go at once). */
    struct jobspec *job = calloc(1, sizeof *job);
    jobspec_init(job);
    job->name = strdup("pt-new");
    job->display_name = strdup("新的");
    struct backend_request create = {.op = BACKEND_OP_CREATE, .job = job};
    canned_status = 200;
    canned_body = "{\"name\":\"pt-new\",\"state\":\"QUEUEING\"}";
    s.replies = 0;
    backend_send(b, m, &create, on_reply, NULL, NULL, &s);
    jobspec_free(job);
    free(job);
    RUN_UNTIL(lp, s.replies > 0, 2000);
    assert_int_equal(s.status, BACKEND_OK);
    assert_string_equal(s.job, "pt-new");
    assert_non_null(strstr(canned_path, "/trainingJobs?training_job_name=pt-new"));
    assert_non_null(strstr(canned_sent, "\"display_name\":\"新的\""));

    backend_free(acp);
    backend_free(b);
    http_multi_free(m);
    loop_free(lp);
}

/* What a scalars reply brought. */
struct seen_scalars {
    int replies;
    enum backend_status status;
    struct api_error err;
    size_t count;
    bool nan_last;
    char cursor[64];
};

static void on_scalars(void *ctx, struct backend_reply *r)
{
    struct seen_scalars *s = ctx;
    s->replies++;
    s->status = r->status;
    s->err = r->err;
    s->count = r->scalars.count;
    s->nan_last = r->scalars.count && isnan(r->scalars.points[r->scalars.count - 1].value);
    snprintf(s->cursor, sizeof s->cursor, "%s", r->scalars.cursor ? r->scalars.cursor : "");
}

/* The Metrics pane's request: a page of scalars from the loop, its cursor escaped in the URL. */
static void a_scalars_page_through_the_loop(void **state)
{
    (void)state;
    struct loop *lp = loop_new();
    struct http_multi *m = http_multi_new(lp);
    struct backend *b = open_backend("http+unix:///tmp/none.sock", true, true);
    canned_status = 200;
    canned_body = "{\"log_path\":\"/mnt/afs/tb\",\"cursor\":\"rank0/f:52\",\"more\":false,"
                  "\"scalars\":[{\"run\":\"rank0\",\"tag\":\"loss\",\"step\":1,"
                  "\"wall_time\":1.5,\"value\":0.5},{\"run\":\"rank0\",\"tag\":\"loss\","
                  "\"step\":2,\"wall_time\":2,\"value\":\"NaN\"}]}";
    struct seen_scalars s = {0};
    char since[] = "rank0/f:26,a b&c";
    struct backend_request rq = {
        .op = BACKEND_OP_SCALARS, .name = "pt-abc", .since = since, .limit = 4096};
    backend_send(b, m, &rq, on_scalars, NULL, NULL, &s);
    memset(since, 'x', sizeof since - 1); /* the send keeps its own copy */
    assert_int_equal(s.replies, 0);
    RUN_UNTIL(lp, s.replies > 0, 2000);
    assert_int_equal(s.status, BACKEND_OK);
    assert_int_equal(s.count, 2);
    assert_true(s.nan_last);
    assert_string_equal(s.cursor, "rank0/f:52");
    assert_string_equal(canned_path, "/trainjob/v1/workspaces/default/trainingJobs/pt-abc/scalars"
                                     "?since=rank0%2Ff%3A26%2Ca%20b%26c&limit=4096");

    /* A reply that is no page is the server's fault, said so. */
    canned_body = "{\"scalars\":[{\"tag\":\"loss\",\"step\":1,\"value\":\"nan\"}]}";
    s.replies = 0;
    backend_send(b, m, &rq, on_scalars, NULL, NULL, &s);
    RUN_UNTIL(lp, s.replies > 0, 2000);
    assert_int_equal(s.status, BACKEND_REJECTED);
    assert_string_equal(s.err.field, "scalars[0].value");

    /* ACP has no such endpoint: the message points at --logdir, blocking or not. */
    struct backend *acp = open_backend("https://acp.example.com", true, false);
    canned_calls = 0;
    s.replies = 0;
    backend_send(acp, m, &rq, on_scalars, NULL, NULL, &s);
    RUN_UNTIL(lp, s.replies > 0, 2000);
    assert_int_equal(s.status, BACKEND_REJECTED);
    assert_int_equal(s.err.status, 501);
    assert_non_null(strstr(s.err.message, "--logdir DIR"));
    struct scalar_page page;
    struct api_error err = {0};
    assert_int_equal(backend_scalars(acp, "pt-abc", NULL, 0, &page, &err), BACKEND_REJECTED);
    assert_non_null(strstr(err.message, "--logdir DIR"));
    assert_int_equal(canned_calls, 0);
    scalar_page_free(&page);

    backend_free(acp);
    backend_free(b);
    http_multi_free(m);
    loop_free(lp);
}

/* ---- a real server on a Unix socket ---------------------------------------- */

struct server {
    pid_t pid;
    char path[108];
};

/*
 * A child serving one connection: reads the request, then writes head
 * and each piece of body with pause_ms between them (pause_ms < 0: never
 * answers), then closes.
 */
static void serve(struct server *sv, const char *head, const char *const *pieces, int pause_ms)
{
    snprintf(sv->path, sizeof sv->path, "/tmp/tj-async-%d.sock", (int)getpid());
    unlink(sv->path);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", sv->path);
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(fd, 4), 0);
    sv->pid = fork();
    assert_true(sv->pid >= 0);
    if (sv->pid > 0) {
        close(fd);
        return;
    }
    int c = accept(fd, NULL, NULL);
    char buf[4096];
    size_t got = 0;
    while (got < sizeof buf - 1) {
        ssize_t n = read(c, buf + got, sizeof buf - 1 - got);
        if (n <= 0)
            break;
        got += (size_t)n;
        buf[got] = '\0';
        if (strstr(buf, "\r\n\r\n"))
            break;
    }
    if (pause_ms < 0) {
        pause();
        _exit(0);
    }
    if (write(c, head, strlen(head)) < 0)
        _exit(1);
    for (size_t i = 0; pieces[i]; i++) {
        poll(NULL, 0, pause_ms);
        char chunk[4200];
        int n = snprintf(chunk, sizeof chunk, "%zx\r\n%s\r\n", strlen(pieces[i]), pieces[i]);
        if (write(c, chunk, (size_t)n) < 0)
            _exit(0);
    }
    if (write(c, "0\r\n\r\n", 5) < 0)
        _exit(0);
    poll(NULL, 0, 200);
    _exit(0);
}

static void serve_end(struct server *sv)
{
    kill(sv->pid, SIGTERM);
    waitpid(sv->pid, NULL, 0);
    unlink(sv->path);
}

static const char chunked_head[] =
    "HTTP/1.1 200 OK\r\nContent-Type: application/x-ndjson\r\nTransfer-Encoding: chunked\r\n\r\n";

static void a_watch_stream_arrives_message_by_message(void **state)
{
    (void)state;
    /* One message split across pieces, and a pause between messages. */
    const char *pieces[] = {
        "{\"type\":\"JOB\",\"job\":{\"name\":\"pt-a\"},\"workers\":[{\"name\":\"worker-0\"}]}\n"
        "{\"type\":\"JOB\",\"job\":{\"na",
        "me\":\"pt-b\"}}\n", "{\"type\":\"SYNCED\"}\n",
        "{\"type\":\"EVENT\",\"event\":{\"id\":1,\"kind\":\"STATE\",\"job\":\"pt-a\"}}\n", NULL};
    struct server sv;
    serve(&sv, chunked_head, pieces, 30);
    char ep[160];
    snprintf(ep, sizeof ep, "http+unix://%s", sv.path);
    struct loop *lp = loop_new();
    struct http_multi *m = http_multi_new(lp);
    struct backend *b = open_backend(ep, false, true);
    struct seen s = {0};
    struct backend_request rq = {.op = BACKEND_OP_WATCH};
    backend_send(b, m, &rq, on_reply, on_message, NULL, &s);
    RUN_UNTIL(lp, s.replies > 0, 5000);
    assert_int_equal(s.replies, 1); /* the server ended the stream */
    assert_int_equal(s.status, BACKEND_OK);
    assert_int_equal(s.jobs, 2);
    assert_int_equal(s.synced, 1);
    assert_int_equal(s.messages, 4);
    assert_int_equal(http_multi_active(m), 0);
    serve_end(&sv);

    /* Cancelled from inside its own callback: no more messages, no end callback. */
    serve(&sv, chunked_head, pieces, 30);
    memset(&s, 0, sizeof s);
    s.cancel_on_synced = true;
    s.call = backend_send(b, m, &rq, on_reply, on_message, NULL, &s);
    RUN_UNTIL(lp, http_multi_active(m) == 0, 5000);
    assert_int_equal(s.synced, 1);
    assert_int_equal(s.messages, 3);
    assert_int_equal(s.replies, 0);
    serve_end(&sv);

    backend_free(b);
    http_multi_free(m);
    loop_free(lp);
}

static void on_tick(void *ctx)
{
    (*(int *)ctx)++;
}

static void a_silent_server_leaves_the_loop_free(void **state)
{
    (void)state;
    const char *none[] = {NULL};
    struct server sv;
    serve(&sv, "", none, -1);
    char ep[160];
    snprintf(ep, sizeof ep, "http+unix://%s", sv.path);
    struct loop *lp = loop_new();
    struct http_multi *m = http_multi_new(lp);
    struct backend *b = open_backend(ep, false, true);
    struct seen s = {0};
    struct backend_request rq = {.op = BACKEND_OP_GET, .name = "pt-a"};
    struct backend_call *c = backend_send(b, m, &rq, on_reply, NULL, NULL, &s);
    int ticks = 0;
    for (int i = 0; i < 5; i++)
        loop_add_timer(lp, 20 * (i + 1), on_tick, &ticks);
    RUN_UNTIL(lp, ticks == 5, 3000);
    assert_int_equal(ticks, 5); /* timers fire while the request waits */
    assert_int_equal(s.replies, 0);
    assert_int_equal(http_multi_active(m), 1);
    backend_call_cancel(c);
    assert_int_equal(http_multi_active(m), 0);
    serve_end(&sv);
    backend_free(b);
    http_multi_free(m);
    loop_free(lp);
}

static void a_missing_socket_is_unreachable_through_the_callback(void **state)
{
    (void)state;
    struct loop *lp = loop_new();
    struct http_multi *m = http_multi_new(lp);
    struct backend *b = open_backend("http+unix:///nonexistent/trainjob.sock", false, true);
    struct seen s = {0};
    struct backend_request rq = {.op = BACKEND_OP_WATCH};
    backend_send(b, m, &rq, on_reply, on_message, NULL, &s);
    RUN_UNTIL(lp, s.replies > 0, 3000);
    assert_int_equal(s.replies, 1);
    assert_int_equal(s.status, BACKEND_UNREACHABLE);
    assert_non_null(strstr(s.err.message, "cannot reach"));
    backend_free(b);
    http_multi_free(m);
    loop_free(lp);
}

static int revives;
static int count_revive(void *ctx, struct strbuf *err)
{
    (void)ctx;
    revives++;
    strbuf_adds(err, "trainjobd exited 1");
    return -1;
}

/* A screen open for days retries with new calls: each may start the local engine again. */
static void each_call_may_revive_the_local_engine(void **state)
{
    (void)state;
    struct loop *lp = loop_new();
    struct http_multi *m = http_multi_new(lp);
    struct backend *b = open_backend("http+unix:///nonexistent/trainjob.sock", false, true);
    b->revive = count_revive;
    revives = 0;
    for (int i = 1; i <= 2; i++) {
        struct seen s = {0};
        struct backend_request rq = {.op = BACKEND_OP_WATCH};
        backend_send(b, m, &rq, on_reply, on_message, NULL, &s);
        RUN_UNTIL(lp, s.replies > 0, 3000);
        assert_int_equal(s.status, BACKEND_UNREACHABLE);
        assert_int_equal(revives, i); /* once for this call, not never again */
        assert_non_null(strstr(s.err.message, "starting it: trainjobd exited 1"));
    }
    backend_free(b);
    http_multi_free(m);
    loop_free(lp);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(replies_come_from_the_loop_decoded),
        cmocka_unit_test(a_scalars_page_through_the_loop),
        cmocka_unit_test(a_watch_stream_arrives_message_by_message),
        cmocka_unit_test(a_silent_server_leaves_the_loop_free),
        cmocka_unit_test(a_missing_socket_is_unreachable_through_the_callback),
        cmocka_unit_test(each_call_may_revive_the_local_engine),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
