/*
 * test_uhttp: api/uhttp, the libcurl-free client of the local engine, over
 * a socketpair whose other end plays the server: the request it writes;
 * replies framed by Content-Length, by chunks (cut at every byte), or by
 * the close; a long reply read in few, growing pieces; a stream handed to on_data and stopped by
 * it; an error reply collected; and hostile replies (a chunk size that overflows, headers that
 * never end, a body cut short, two different lengths, a bad status line) ending as TRANSPORT_OTHER
 * without reading past their bounds. And the process that talked to a Unix socket has not loaded
 * libcurl, nor libcrypto until it signed a request.
 */
// clang-format off
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
// clang-format on

#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "api/crypto_dl.h"
#include "api/curl_dl.h"
#include "api/http.h"
#include "api/uhttp.h"
#include "util/strbuf.h"

struct sink {
    struct strbuf got;
    size_t stop_after; /* on_data answers non-zero once this much arrived (0: never) */
    int calls;
};

static int on_data(void *ctx, const char *data, size_t len)
{
    struct sink *s = ctx;
    s->calls++;
    strbuf_add(&s->got, data, len);
    return s->stop_after && s->got.len >= s->stop_after;
}

/* Drives u to its end, the server side feeding reply `step` bytes at a time. */
static void exchange(struct uhttp *u, int server, const char *reply, size_t step, bool close_after,
                     struct strbuf *request)
{
    size_t off = 0, n = strlen(reply);
    bool closed = false;
    for (int turns = 0; turns < 100000 && !uhttp_step(u); turns++) {
        char buf[4096];
        ssize_t r;
        while ((r = recv(server, buf, sizeof buf, MSG_DONTWAIT)) > 0)
            strbuf_add(request, buf, (size_t)r);
        if (off < n) {
            size_t k = n - off < step ? n - off : step;
            assert_int_equal(send(server, reply + off, k, MSG_NOSIGNAL), (ssize_t)k);
            off += k;
        } else if (close_after && !closed) {
            shutdown(server, SHUT_WR);
            closed = true;
        } else if (!closed) {
            break; /* nothing more will come: the test looks at where u stands */
        }
    }
}

static struct uhttp *start(int *server, const char *method, const char *body, http_data_fn fn,
                           struct sink *s, struct http_result *out)
{
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    *server = sv[1];
    return uhttp_start_fd(sv[0], method, "/a?b=c", "Accept: */*\r\n", body, body ? strlen(body) : 0,
                          fn, s, out);
}

static void a_request_goes_out_whole_and_a_length_reply_comes_back(void **state)
{
    (void)state;
    struct http_result out;
    http_result_init(&out);
    struct strbuf req = STRBUF_INIT;
    int server;
    struct uhttp *u = start(&server, "POST", "{\"x\":1}", NULL, NULL, &out);
    exchange(u, server, "HTTP/1.1 201 Created\r\nContent-Length: 5\r\ncontent-type: x\r\n\r\nhello",
             3, false, &req);
    assert_true(uhttp_finished(u));
    assert_int_equal(out.transport, TRANSPORT_NONE);
    assert_int_equal(out.status, 201);
    assert_string_equal(strbuf_str(&out.body), "hello");
    assert_string_equal(strbuf_str(&req), "POST /a?b=c HTTP/1.1\r\nHost: localhost\r\n"
                                          "Connection: close\r\nAccept: */*\r\n"
                                          "Content-Length: 7\r\n\r\n{\"x\":1}");
    uhttp_free(u);
    close(server);
    http_result_free(&out);
    strbuf_free(&req);
}

static const char chunked[] = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                              "5\r\nhello\r\n7;ext=1\r\n, world\r\n0\r\nX-Trailer: 1\r\n\r\n";

static void a_chunked_stream_arrives_whole_however_it_is_cut(void **state)
{
    (void)state;
    for (size_t step = 1; step <= sizeof chunked; step += step < 8 ? 1 : 17) {
        struct http_result out;
        http_result_init(&out);
        struct strbuf req = STRBUF_INIT;
        struct sink s = {STRBUF_INIT, 0, 0};
        int server;
        struct uhttp *u = start(&server, "GET", NULL, on_data, &s, &out);
        exchange(u, server, chunked, step, false, &req);
        assert_true(uhttp_finished(u));
        assert_int_equal(out.transport, TRANSPORT_NONE);
        assert_int_equal(out.status, 200);
        assert_string_equal(strbuf_str(&s.got), "hello, world");
        assert_int_equal(out.body.len, 0);
        assert_null(strstr(strbuf_str(&req), "Content-Length")); /* a GET has none */
        uhttp_free(u);
        close(server);
        http_result_free(&out);
        strbuf_free(&req);
        strbuf_free(&s.got);
    }
}

/*
 * A long reply is read in pieces that grow while it fills them: 2 MB arriving 100,000 bytes at
 * a time takes one read each once the piece has grown past that, not two of 64 KiB (each read
 * of a server's reply wakes the server to write the next part).
 */
static void a_long_reply_is_read_in_few_pieces(void **state)
{
    (void)state;
    enum { BODY = 2000000, STEP = 100000 };
    struct strbuf reply = STRBUF_INIT;
    strbuf_addf(&reply, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n", BODY);
    for (int i = 0; i < BODY; i++)
        strbuf_addc(&reply, (char)('a' + i % 26));
    struct http_result out;
    http_result_init(&out);
    struct strbuf req = STRBUF_INIT;
    struct sink s = {STRBUF_INIT, 0, 0};
    int server;
    struct uhttp *u = start(&server, "GET", NULL, on_data, &s, &out);
    exchange(u, server, strbuf_str(&reply), STEP, false, &req);
    assert_true(uhttp_finished(u));
    assert_int_equal(out.transport, TRANSPORT_NONE);
    assert_int_equal(s.got.len, BODY);
    assert_memory_equal(s.got.buf, reply.buf + reply.len - BODY, BODY);
    /* 20 steps and the first piece's growth; reads of 64 KiB took 40. */
    assert_in_range(s.calls, 1, BODY / STEP + 3);
    uhttp_free(u);
    close(server);
    http_result_free(&out);
    strbuf_free(&req);
    strbuf_free(&s.got);
    strbuf_free(&reply);
}

static void on_data_stops_a_stream_and_an_error_reply_is_collected(void **state)
{
    (void)state;
    struct http_result out;
    http_result_init(&out);
    struct strbuf req = STRBUF_INIT;
    struct sink s = {STRBUF_INIT, 3, 0};
    int server;
    struct uhttp *u = start(&server, "GET", NULL, on_data, &s, &out);
    exchange(u, server,
             "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n2\r\ncd\r\n", 64,
             false, &req);
    assert_true(uhttp_finished(u));
    assert_int_equal(out.transport, TRANSPORT_NONE);
    assert_string_equal(strbuf_str(&s.got), "abcd");
    uhttp_free(u);
    close(server);

    /* Not 2xx: the body is the error, into out->body, not to on_data. */
    struct sink s2 = {STRBUF_INIT, 0, 0};
    u = start(&server, "GET", NULL, on_data, &s2, &out);
    exchange(u, server, "HTTP/1.0 404 Not Found\r\n\r\n{\"code\":404}", 5, true, &req);
    assert_true(uhttp_finished(u));
    assert_int_equal(out.transport, TRANSPORT_NONE);
    assert_int_equal(out.status, 404);
    assert_string_equal(strbuf_str(&out.body), "{\"code\":404}");
    assert_int_equal(s2.calls, 0);
    uhttp_free(u);
    close(server);
    http_result_free(&out);
    strbuf_free(&req);
    strbuf_free(&s.got);
    strbuf_free(&s2.got);
}

/* A reply that must end the exchange as TRANSPORT_OTHER with a message containing why. */
static void refused(const char *reply, bool close_after, const char *why)
{
    struct http_result out;
    http_result_init(&out);
    struct strbuf req = STRBUF_INIT;
    int server;
    struct uhttp *u = start(&server, "GET", NULL, NULL, NULL, &out);
    exchange(u, server, reply, 4096, close_after, &req);
    assert_true(uhttp_finished(u));
    assert_int_equal(out.transport, TRANSPORT_OTHER);
    if (strstr(out.message, why) == NULL)
        fail_msg("reply %.40s: message '%s', want '%s'", reply, out.message, why);
    assert_true(out.body.len <= UHTTP_MAX_REPLY);
    uhttp_free(u);
    close(server);
    http_result_free(&out);
    strbuf_free(&req);
}

static void hostile_replies_end_as_transport_errors(void **state)
{
    (void)state;
    refused("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
            "1ffffffffffffffffff\r\n",
            false, "bad chunk size");
    refused("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", false, "bad chunk size");
    refused("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabX\r\n", false,
            "not ended by CRLF");
    refused("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello", false,
            "bad Content-Length");
    refused("HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", false, "bad Content-Length");
    refused("HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999999\r\n\r\n", false,
            "bad Content-Length");
    refused("HTTP/1.1 200 OK\r\nContent-Length: 1000000000\r\n\r\n", false, "larger than");
    refused("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", false, "transfer coding");
    refused("SSH-2.0-OpenSSH\r\n\r\n", false, "not an HTTP/1.x reply");
    refused("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhalf", true, "cut short");
    refused("", true, "without a reply");
    /* Headers that never end are cut at UHTTP_MAX_HEAD. */
    size_t n = UHTTP_MAX_HEAD + 4096;
    char *big = malloc(n + 1);
    memcpy(big, "HTTP/1.1 200 OK\r\nX: ", 20);
    memset(big + 20, 'a', n - 20);
    big[n] = '\0';
    refused(big, false, "reply headers over");
    free(big);
}

static void an_absent_socket_is_unreachable_and_curl_and_crypto_stay_unloaded(void **state)
{
    (void)state;
    struct http_result out;
    http_result_init(&out);
    struct uhttp *u =
        uhttp_start("/nonexistent/trainjob-test.sock", "GET", "/", "", NULL, 0, NULL, NULL, &out);
    assert_true(uhttp_finished(u));
    assert_int_equal(out.transport, TRANSPORT_UNREACHABLE);
    uhttp_free(u);

    /* A real listener: a blocking http_call over the Unix socket end to end. */
    char dir[] = "/tmp/test-uhttp-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[128];
    snprintf(path, sizeof path, "%s/s.sock", dir);
    int ls = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    memcpy(a.sun_path, path, strlen(path) + 1);
    assert_int_equal(bind(ls, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(ls, 4), 0);
    pid_t pid = fork();
    if (pid == 0) {
        /* Two requests: the first unsigned, the second signed (else a 401). */
        for (int i = 0; i < 2; i++) {
            int c = accept(ls, NULL, NULL);
            char buf[4096];
            ssize_t got = read(c, buf, sizeof buf - 1); /* a GET fits in one read here */
            buf[got > 0 ? got : 0] = '\0';
            bool ok =
                i == 0 ||
                (strstr(buf, "\r\nAuthorization: hmac accesskey=\"AK\"") &&
                 strstr(buf,
                        "\r\nDigest: SHA-256=47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\r\n"));
            const char *reply = ok ? "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}"
                                   : "HTTP/1.1 401 No\r\nContent-Length: 2\r\n\r\n{}";
            ssize_t w = write(c, reply, strlen(reply));
            (void)w;
            close(c);
        }
        _exit(0);
    }
    char endpoint[160];
    snprintf(endpoint, sizeof endpoint, "http+unix://%s", path);
    struct strbuf err = STRBUF_INIT;
    struct http_client *c = http_client_new(endpoint, &err);
    assert_non_null(c);
    assert_int_equal(http_call(c, "GET", "/trainjob/v1/catalog", NULL, 0, &out), 0);
    assert_int_equal(out.status, 200);
    assert_string_equal(strbuf_str(&out.body), "{}");
    assert_false(curl_dl_loaded());
    assert_false(crypto_dl_loaded()); /* nothing signed: no libcrypto either */
    /* With keys the request is signed: libcrypto loaded now, libcurl still not. */
    http_client_set_keys(c, "AK", "SK");
    http_result_clear(&out);
    assert_int_equal(http_call(c, "GET", "/trainjob/v1/catalog", NULL, 0, &out), 0);
    assert_int_equal(out.status, 200);
    assert_true(crypto_dl_loaded());
    assert_false(curl_dl_loaded());
    http_client_free(c);
    waitpid(pid, NULL, 0);
    close(ls);
    unlink(path);
    rmdir(dir);
    strbuf_free(&err);
    http_result_free(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_request_goes_out_whole_and_a_length_reply_comes_back),
        cmocka_unit_test(a_chunked_stream_arrives_whole_however_it_is_cut),
        cmocka_unit_test(a_long_reply_is_read_in_few_pieces),
        cmocka_unit_test(on_data_stops_a_stream_and_an_error_reply_is_collected),
        cmocka_unit_test(hostile_replies_end_as_transport_errors),
        cmocka_unit_test(an_absent_socket_is_unreachable_and_curl_and_crypto_stay_unloaded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
