/*
 * test_http_multi: api/http_multi's requests on the loop, over TCP (libcurl's
 * multi) and over a Unix socket (api/uhttp), against a real server in a
 * child process. Any callback may start a request: a stream's on_data (which
 * runs inside curl, where curl refuses new handles) and a done callback each
 * start one, and it completes. A client whose on_data calls are timed
 * (a reply read as it arrives, not a stream) times them out. A server that
 * answers 503 with Retry-After is asked again from a loop timer, the loop
 * running on meanwhile.
 */
// clang-format off
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
// clang-format on

#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "api/http.h"
#include "api/http_multi.h"
#include "util/loop.h"
#include "util/strbuf.h"

#define RUN_UNTIL(lp, cond, ms)                                                                    \
    do {                                                                                           \
        int64_t end_ = loop_now_ms() + (ms);                                                       \
        while (!(cond) && loop_now_ms() < end_)                                                    \
            loop_run_once((lp), 50);                                                               \
    } while (0)

/* ---- a server: /stream answers in two chunks 300 ms apart, anything else "ok" ---- */

/* The server of a test that failed half-way (its serve_end skipped). */
static pid_t running_server;

struct server {
    pid_t pid;
    char endpoint[160];
    char path[108]; /* the Unix socket's, or "" */
};

/* One connection (the server's nth), in its own child: the request, then the answer. */
static void answer(int c, int nth)
{
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
    if (strstr(buf, " /busy ") && nth < 2) { /* 503 to the first two, then "ok" */
        static const char busy[] =
            "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Length: 4\r\n\r\nbusy";
        if (write(c, busy, sizeof busy - 1) < 0)
            _exit(1);
    } else if (strstr(buf, " /always-busy ")) {
        static const char busy[] =
            "HTTP/1.1 429 Too Many Requests\r\nRetry-After: 1\r\nContent-Length: 4\r\n\r\nbusy";
        if (write(c, busy, sizeof busy - 1) < 0)
            _exit(1);
    } else if (strstr(buf, " /hang ")) { /* a first piece, then nothing for 3 s */
        static const char head[] =
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nfirst\n\r\n";
        if (write(c, head, sizeof head - 1) < 0)
            _exit(1);
        poll(NULL, 0, 3000);
    } else if (strstr(buf, " /stream ")) {
        static const char head[] = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
        static const char one[] = "6\r\nfirst\n\r\n", two[] = "7\r\nsecond\n\r\n0\r\n\r\n";
        if (write(c, head, sizeof head - 1) < 0 || write(c, one, sizeof one - 1) < 0)
            _exit(1);
        poll(NULL, 0, 300);
        if (write(c, two, sizeof two - 1) < 0)
            _exit(1);
    } else {
        static const char ok[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
        if (write(c, ok, sizeof ok - 1) < 0)
            _exit(1);
    }
    poll(NULL, 0, 100);
    _exit(0);
}

/* A child accepting connections on fd, each answered by a grandchild. */
static void serve_on(struct server *sv, int fd)
{
    assert_int_equal(listen(fd, 8), 0);
    sv->pid = fork();
    assert_true(sv->pid >= 0);
    if (sv->pid > 0) {
        running_server = sv->pid;
        close(fd);
        return;
    }
    signal(SIGCHLD, SIG_IGN); /* the answering children reap themselves */
    alarm(30);                /* a test that failed before serve_end leaves nothing behind */
    for (int nth = 0;; nth++) {
        int c = accept(fd, NULL, NULL);
        if (c < 0) {
            nth--;
            continue;
        }
        if (fork() == 0)
            answer(c, nth);
        close(c);
    }
}

static void serve_tcp(struct server *sv)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    socklen_t n = sizeof a;
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &n), 0);
    snprintf(sv->endpoint, sizeof sv->endpoint, "http://127.0.0.1:%d", (int)ntohs(a.sin_port));
    sv->path[0] = '\0';
    serve_on(sv, fd);
}

static void serve_unix(struct server *sv)
{
    snprintf(sv->path, sizeof sv->path, "/tmp/tj-multi-%d.sock", (int)getpid());
    unlink(sv->path);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", sv->path);
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    snprintf(sv->endpoint, sizeof sv->endpoint, "http+unix://%s", sv->path);
    serve_on(sv, fd);
}

static int stop_leftover_server(void **state)
{
    (void)state;
    if (running_server > 0) {
        kill(running_server, SIGTERM);
        waitpid(running_server, NULL, 0);
    }
    running_server = 0;
    return 0;
}

static void serve_end(struct server *sv)
{
    running_server = 0;
    kill(sv->pid, SIGTERM);
    waitpid(sv->pid, NULL, 0);
    if (sv->path[0])
        unlink(sv->path);
}

/* ---- what the callbacks saw ------------------------------------------------ */

struct chain {
    struct http_multi *m;
    const struct http_client *c;
    bool from_data; /* the stream's on_data starts the second request */
    bool started;
    int stream_done, second_done;
    int second_status;
    char second_body[64], second_message[256];
    bool second_before_stream_end;
};

static void on_second(void *ctx, struct http_result *r)
{
    struct chain *ch = ctx;
    ch->second_done++;
    ch->second_status = r->status;
    ch->second_before_stream_end = ch->stream_done == 0;
    snprintf(ch->second_body, sizeof ch->second_body, "%s", strbuf_str(&r->body));
    snprintf(ch->second_message, sizeof ch->second_message, "%s", r->message);
}

static void start_second(struct chain *ch)
{
    if (ch->started)
        return;
    ch->started = true;
    http_multi_start(ch->m, ch->c, "GET", "/second", NULL, 0, NULL, NULL, on_second, ch);
}

static int on_stream_data(void *ctx, const char *data, size_t len)
{
    struct chain *ch = ctx;
    (void)data, (void)len;
    if (ch->from_data)
        start_second(ch); /* inside curl's write callback over TCP */
    return 0;
}

static void on_stream_done(void *ctx, struct http_result *r)
{
    struct chain *ch = ctx;
    (void)r;
    ch->stream_done++;
    if (!ch->from_data)
        start_second(ch); /* inside a done callback */
}

static void run_chain(const char *kind, bool tcp, bool from_data)
{
    struct server sv;
    if (tcp)
        serve_tcp(&sv);
    else
        serve_unix(&sv);
    struct strbuf err = STRBUF_INIT;
    struct http_client *c = http_client_new(sv.endpoint, &err);
    assert_non_null(c);
    strbuf_free(&err);
    struct loop *lp = loop_new();
    struct http_multi *m = http_multi_new(lp);
    struct chain ch = {.m = m, .c = c, .from_data = from_data};
    http_multi_start(m, c, "GET", "/stream", NULL, 0, on_stream_data, &ch, on_stream_done, &ch);
    RUN_UNTIL(lp, ch.second_done > 0 && ch.stream_done > 0, 5000);
    if (ch.second_status != 200 || strcmp(ch.second_body, "ok") != 0)
        print_error("%s: the second request ended %d '%s': %s\n", kind, ch.second_status,
                    ch.second_body, ch.second_message);
    assert_int_equal(ch.stream_done, 1);
    assert_int_equal(ch.second_done, 1);
    assert_int_equal(ch.second_status, 200);
    assert_string_equal(ch.second_body, "ok");
    if (from_data) /* it ran beside the stream, not after it */
        assert_true(ch.second_before_stream_end);
    assert_int_equal(http_multi_active(m), 0);
    http_multi_free(m);
    loop_free(lp);
    http_client_free(c);
    serve_end(&sv);
}

static void a_stream_callback_starts_a_request_over_tcp(void **state)
{
    (void)state;
    run_chain("tcp, from on_data", true, true);
}

static void a_done_callback_starts_a_request_over_tcp(void **state)
{
    (void)state;
    run_chain("tcp, from done", true, false);
}

static void a_stream_callback_starts_a_request_over_a_unix_socket(void **state)
{
    (void)state;
    run_chain("unix, from on_data", false, true);
}

static void a_done_callback_starts_a_request_over_a_unix_socket(void **state)
{
    (void)state;
    run_chain("unix, from done", false, false);
}

/* A request started inside curl and cancelled before curl returns is never added. */
static int cancel_data_calls;
static struct http_request *to_cancel;
static int on_data_start_and_cancel(void *ctx, const char *data, size_t len)
{
    struct chain *ch = ctx;
    (void)data, (void)len;
    if (cancel_data_calls++ == 0) {
        to_cancel =
            http_multi_start(ch->m, ch->c, "GET", "/second", NULL, 0, NULL, NULL, on_second, ch);
        http_request_cancel(to_cancel);
    }
    return 0;
}

static void a_request_cancelled_inside_curl_never_runs(void **state)
{
    (void)state;
    struct server sv;
    serve_tcp(&sv);
    struct strbuf err = STRBUF_INIT;
    struct http_client *c = http_client_new(sv.endpoint, &err);
    assert_non_null(c);
    strbuf_free(&err);
    struct loop *lp = loop_new();
    struct http_multi *m = http_multi_new(lp);
    struct chain ch = {.m = m, .c = c};
    cancel_data_calls = 0;
    http_multi_start(m, c, "GET", "/stream", NULL, 0, on_data_start_and_cancel, &ch, on_stream_done,
                     &ch);
    ch.from_data = true;
    ch.started = true; /* the done callback starts nothing */
    RUN_UNTIL(lp, ch.stream_done > 0, 5000);
    assert_int_equal(ch.stream_done, 1);
    assert_int_equal(ch.second_done, 0);
    assert_int_equal(http_multi_active(m), 0);
    http_multi_free(m);
    loop_free(lp);
    http_client_free(c);
    serve_end(&sv);
}

/* ---- a reply read as it arrives, under the client's timeout ------------------- */

struct timed {
    struct strbuf got;
    int done;
    enum transport_error transport;
};

static int timed_data(void *ctx, const char *data, size_t len)
{
    struct timed *t = ctx;
    strbuf_add(&t->got, data, len);
    return 0;
}

static void timed_done(void *ctx, struct http_result *r)
{
    struct timed *t = ctx;
    t->done++;
    t->transport = r->transport;
}

static void timed_reads_time_out(bool tcp)
{
    struct server sv;
    if (tcp)
        serve_tcp(&sv);
    else
        serve_unix(&sv);
    struct strbuf err = STRBUF_INIT;
    struct http_client *c = http_client_new(sv.endpoint, &err);
    assert_non_null(c);
    strbuf_free(&err);
    http_client_set_timeout(c, 300);
    assert_int_equal(http_call_timeout(c, true), 0); /* a stream, until said otherwise */
    http_client_set_data_timed(c, true);
    assert_int_equal(http_call_timeout(c, true), 300);

    /* On the loop. */
    struct loop *lp = loop_new();
    struct http_multi *m = http_multi_new(lp);
    struct timed t = {STRBUF_INIT, 0, TRANSPORT_NONE};
    int64_t start = loop_now_ms();
    http_multi_start(m, c, "GET", "/hang", NULL, 0, timed_data, &t, timed_done, &t);
    RUN_UNTIL(lp, t.done > 0, 5000);
    assert_int_equal(t.done, 1);
    assert_int_equal(t.transport, TRANSPORT_TIMEOUT);
    assert_true(loop_now_ms() - start < 2500); /* not the server's 3 s */
    assert_string_equal(strbuf_str(&t.got), "first\n");
    http_multi_free(m);
    loop_free(lp);

    /* Blocking. */
    struct http_result r;
    http_result_init(&r);
    strbuf_reset(&t.got);
    start = loop_now_ms();
    assert_int_equal(http_stream(c, "/hang", timed_data, &t, &r), -1);
    assert_int_equal(r.transport, TRANSPORT_TIMEOUT);
    assert_true(loop_now_ms() - start < 2500);
    assert_string_equal(strbuf_str(&t.got), "first\n");
    http_result_free(&r);
    strbuf_free(&t.got);
    http_client_free(c);
    serve_end(&sv);
}

static void a_timed_read_times_out_over_tcp(void **state)
{
    (void)state;
    timed_reads_time_out(true);
}

static void a_timed_read_times_out_over_a_unix_socket(void **state)
{
    (void)state;
    timed_reads_time_out(false);
}

/* ---- 429/503: asked again after Retry-After, from the loop ------------------- */

struct busy {
    struct loop *lp;
    int done, status, tries;
    char body[16];
    int ticks;       /* a 100 ms timer's turns: what a screen would draw meanwhile */
    uint64_t ticker; /* its next turn */
};

static void busy_done(void *ctx, struct http_result *r)
{
    struct busy *b = ctx;
    b->done++;
    b->status = r->status;
    b->tries = r->tries;
    snprintf(b->body, sizeof b->body, "%s", strbuf_str(&r->body));
}

static void busy_tick(void *ctx)
{
    struct busy *b = ctx;
    b->ticks++;
    b->ticker = loop_add_timer(b->lp, 100, busy_tick, b);
}

/* path asked on the loop; the ticker runs while it waits. */
static void ask_busy(bool tcp, const char *path, struct busy *b, bool cancel_midway)
{
    struct server sv;
    if (tcp)
        serve_tcp(&sv);
    else
        serve_unix(&sv);
    struct strbuf err = STRBUF_INIT;
    struct http_client *c = http_client_new(sv.endpoint, &err);
    assert_non_null(c);
    strbuf_free(&err);
    struct loop *lp = loop_new();
    struct http_multi *m = http_multi_new(lp);
    memset(b, 0, sizeof *b);
    b->lp = lp;
    b->ticker = loop_add_timer(lp, 100, busy_tick, b);
    int64_t start = loop_now_ms();
    struct http_request *r = http_multi_start(m, c, "GET", path, NULL, 0, NULL, NULL, busy_done, b);
    if (cancel_midway) {
        RUN_UNTIL(lp, b->ticks >= 5, 5000); /* the first 503 is in: it waits its second */
        assert_int_equal(http_multi_active(m), 1);
        http_request_cancel(r);
        RUN_UNTIL(lp, b->ticks >= 25, 5000); /* past when it would have been asked again */
    } else {
        RUN_UNTIL(lp, b->done > 0, 10000);
        assert_true(loop_now_ms() - start >= 1900); /* two waits of Retry-After: 1 */
    }
    assert_int_equal(http_multi_active(m), 0);
    loop_cancel(lp, b->ticker);
    http_multi_free(m);
    loop_free(lp);
    http_client_free(c);
    serve_end(&sv);
}

static void a_busy_server_is_asked_again(bool tcp)
{
    struct busy b;
    ask_busy(tcp, "/busy", &b, false);
    assert_int_equal(b.done, 1);
    assert_int_equal(b.status, 200);
    assert_string_equal(b.body, "ok");
    assert_int_equal(b.tries, 3);
    assert_true(b.ticks >= 10); /* the loop ran on while it waited: no sleep */
}

static void a_503_with_retry_after_is_asked_again_over_tcp(void **state)
{
    (void)state;
    a_busy_server_is_asked_again(true);
}

static void a_503_with_retry_after_is_asked_again_over_a_unix_socket(void **state)
{
    (void)state;
    a_busy_server_is_asked_again(false);
}

static void a_429_is_the_answer_after_three_tries(void **state)
{
    (void)state;
    struct busy b;
    ask_busy(true, "/always-busy", &b, false);
    assert_int_equal(b.done, 1);
    assert_int_equal(b.status, 429);
    assert_string_equal(b.body, "busy");
    assert_int_equal(b.tries, 3);
}

static void a_request_cancelled_while_it_waits_ends_there(void **state)
{
    (void)state;
    struct busy b;
    ask_busy(false, "/always-busy", &b, true);
    assert_int_equal(b.done, 0);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(a_stream_callback_starts_a_request_over_tcp,
                                  stop_leftover_server),
        cmocka_unit_test_teardown(a_done_callback_starts_a_request_over_tcp, stop_leftover_server),
        cmocka_unit_test_teardown(a_stream_callback_starts_a_request_over_a_unix_socket,
                                  stop_leftover_server),
        cmocka_unit_test_teardown(a_done_callback_starts_a_request_over_a_unix_socket,
                                  stop_leftover_server),
        cmocka_unit_test_teardown(a_request_cancelled_inside_curl_never_runs, stop_leftover_server),
        cmocka_unit_test_teardown(a_timed_read_times_out_over_tcp, stop_leftover_server),
        cmocka_unit_test_teardown(a_timed_read_times_out_over_a_unix_socket, stop_leftover_server),
        cmocka_unit_test_teardown(a_503_with_retry_after_is_asked_again_over_tcp,
                                  stop_leftover_server),
        cmocka_unit_test_teardown(a_503_with_retry_after_is_asked_again_over_a_unix_socket,
                                  stop_leftover_server),
        cmocka_unit_test_teardown(a_429_is_the_answer_after_three_tries, stop_leftover_server),
        cmocka_unit_test_teardown(a_request_cancelled_while_it_waits_ends_there,
                                  stop_leftover_server),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
