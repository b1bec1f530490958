/*
 * test_acp_logs: worker logs on real ACP, read from SenseCore's Monitor
 * service (api/acp_logs.c through the acp driver), against a recording
 * transport for each of the two hosts: ACP (the job, its creation time and
 * state) and the Monitor service (pages of hits).
 *
 * The reply shapes are built from SenseCore ACP's REST contract (its logs
 * section) and are UNVERIFIED: that section took them from third-party clients, not
 * from SenseCore's official pages, and no live server was asked here.
 */
// clang-format off
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
// clang-format on

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/acp.h"
#include "api/acp_logs.h"
#include "api/backend.h"
#include "api/http.h"
#include "api/http_multi.h"
#include "util/loop.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

/* ---- a transport that records each call and answers from a script ------ */

#define FAKE_MAX 64

struct fake {
    char *method[FAKE_MAX], *path[FAKE_MAX], *body[FAKE_MAX];
    size_t calls;
    int status[FAKE_MAX];
    const char *reply[FAKE_MAX];
    size_t nreplies;
};

static void fake_answer(struct fake *f, int status, const char *body)
{
    f->status[f->nreplies] = status;
    f->reply[f->nreplies++] = body;
}

static void fake_transport(void *ctx, const char *method, const char *path, const char *body,
                           size_t len, http_data_fn on_data, void *data_ctx,
                           struct http_result *out)
{
    (void)on_data;
    (void)data_ctx;
    struct fake *f = ctx;
    assert_true(f->calls < FAKE_MAX);
    size_t i = f->calls++;
    f->method[i] = xstrdup(method);
    f->path[i] = xstrdup(path);
    f->body[i] = body ? xstrndup(body, len) : NULL;
    size_t r = i < f->nreplies ? i : f->nreplies - 1; /* the last reply repeats */
    if (f->status[r] == 0) {                          /* status 0: nothing answers */
        out->transport = TRANSPORT_UNREACHABLE;
        snprintf(out->message, sizeof out->message, "Connection refused");
        return;
    }
    out->transport = TRANSPORT_NONE;
    out->status = f->status[r];
    strbuf_adds(&out->body, f->reply[r]);
}

static void fake_free(struct fake *f)
{
    for (size_t i = 0; i < f->calls; i++) {
        free(f->method[i]);
        free(f->path[i]);
        free(f->body[i]);
    }
}

static struct http_client *fake_client(struct fake *f, const char *endpoint)
{
    struct strbuf err = STRBUF_INIT;
    struct http_client *c = http_client_new(endpoint, &err);
    assert_non_null(c);
    strbuf_free(&err);
    http_client_set_transport(c, fake_transport, f);
    return c;
}

/* Real ACP (acp driver, not trainjobd) on job, reading logs from mon at station. */
static struct backend *open_acp(struct fake *job, struct fake *mon, const char *station)
{
    struct backend_target t = {(char *)"sub-1", (char *)"default", (char *)"cn-sh-01z",
                               (char *)"ws-1"};
    struct backend *b = acp_backend_new(fake_client(job, "https://aec2.example.test"), &t, false);
    acp_set_monitor(b, fake_client(mon, "https://monitor.example.test"), station, 0);
    return b;
}

#define JOB_RUNNING                                                                                \
    "{\"name\":\"j1\",\"state\":\"RUNNING\",\"create_time\":\"2026-12-01T10:00:00Z\"}"
#define JOB_SUCCEEDED                                                                              \
    "{\"name\":\"j1\",\"state\":\"SUCCEEDED\",\"create_time\":\"2026-12-01T10:00:00Z\"}"

/* A hit as the reference gives it: body, log_time, attributes, resource. */
#define HIT(pod, time, body)                                                                       \
    "{\"body\":\"" body "\",\"log_time\":\"2026-12-01T" time "Z\",\"attributes\":{"                \
    "\"k8s.pod.name\":\"" pod "\",\"k8s.container.name\":\"container-worker-0\"},"                 \
    "\"resource\":{\"resource_id\":\"/subscriptions/sub-1/resourceGroups/default/zones/"           \
    "cn-sh-01z/workspaces/ws-1\"}}"

#define LOGS_PATH                                                                                  \
    "/monitor/ts/data/v1/subscriptions/sub-1/resourceGroups/default/zones/cn-sh-01z/"              \
    "telemetryStations/ts-user-1/logStream/products/product.lepton-acp-new/logs"

static int collect(void *ctx, const char *data, size_t len)
{
    strbuf_add(ctx, data, len);
    return 0;
}

/* The value of key in the JSON body of call i (a string, or an integer's digits). */
static char *body_field(const struct fake *f, size_t i, const char *key)
{
    json_t *j = json_loads(f->body[i], 0, NULL);
    assert_non_null(j);
    json_t *v = json_object_get(j, key);
    char *s = json_is_string(v)    ? xstrdup(json_string_value(v))
              : json_is_integer(v) ? xasprintf("%lld", (long long)json_integer_value(v))
                                   : NULL;
    json_decref(j);
    return s;
}

static void assert_field(const struct fake *f, size_t i, const char *key, const char *want)
{
    char *got = body_field(f, i, key);
    assert_non_null(got);
    assert_string_equal(got, want);
    free(got);
}

/* ---- the request -------------------------------------------------------- */

static void station_paths_are_checked(void **state)
{
    (void)state;
    struct backend_target t = {(char *)"sub-1", (char *)"default", (char *)"cn-sh-01z",
                               (char *)"ws-1"};
    struct strbuf p = STRBUF_INIT, err = STRBUF_INIT;
    assert_int_equal(acp_logs_path(&t, "ts-user-1", &p, &err), 0);
    assert_string_equal(strbuf_str(&p), LOGS_PATH);
    strbuf_reset(&p);
    /* the path the console's log page uses: its own subscription, group and zone */
    assert_int_equal(acp_logs_path(&t,
                                   "/subscriptions/s2/resourceGroups/g2/zones/cn-sh-01e/"
                                   "telemetryStations/ts-user-9",
                                   &p, &err),
                     0);
    assert_string_equal(strbuf_str(&p), "/monitor/ts/data/v1/subscriptions/s2/resourceGroups/g2/"
                                        "zones/cn-sh-01e/telemetryStations/ts-user-9/logStream/"
                                        "products/product.lepton-acp-new/logs");
    static const char *const bad[] = {
        "",
        "..",
        "ts?x=1",
        "a/b",
        "/subscriptions/s/resourceGroups/g/zones/z/telemetryStations/..",
        "/subscriptions/s/resourceGroups/g/zones/z",
        "/subscriptions/s/resourceGroups/g/zones/z/telemetryStations/n/extra",
        "/subscriptions/s/resourceGroups/g/zones/z/workspaces/n",
        "ts\x1b[2J",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        strbuf_reset(&p);
        strbuf_reset(&err);
        assert_int_equal(acp_logs_path(&t, bad[i], &p, &err), -1);
        assert_true(err.len > 0);
        assert_null(strchr(strbuf_str(&err), '\x1b'));
    }
    strbuf_free(&p);
    strbuf_free(&err);
}

static void body_names_the_window_the_worker_and_the_page(void **state)
{
    (void)state;
    struct backend_target t = {(char *)"sub-1", (char *)"default", (char *)"cn-sh-01z",
                               (char *)"ws-1"};
    struct acp_logs_query q = {&t, "j1-worker-0", 1796119140, 1796119300, 1000, 500};
    json_t *b = acp_logs_body(&q);
    char *text = json_dumps(b, JSON_COMPACT | JSON_SORT_KEYS);
    assert_string_equal(
        text,
        "{\"custom_filter\":[{\"key\":\"Attributes.k8s.pod.name\",\"value\":\"j1-worker-0\"}],"
        "\"end\":\"1796119300\",\"offset\":\"1000\",\"page_size\":500,\"resource_id\":["
        "\"/subscriptions/sub-1/resourceGroups/default/zones/cn-sh-01z/workspaces/ws-1\"],"
        "\"start\":\"1796119140\"}");
    free(text);
    json_decref(b);
}

/* ---- reading ------------------------------------------------------------ */

static void every_page_is_read_in_order(void **state)
{
    (void)state;
    struct fake job = {0}, mon = {0};
    fake_answer(&job, 200, JOB_RUNNING);
    /* a server that gives two hits a page, whatever page_size says */
    fake_answer(
        &mon, 200,
        "{\"hits\":[" HIT("w0", "10:00:01", "one") "," HIT("w0", "10:00:02", "two") "],"
                                                                                    "\"total\":5}");
    fake_answer(&mon, 200,
                "{\"hits\":[" HIT("w0", "10:00:03", "three") "," HIT("w0", "10:00:04",
                                                                     "four") "],"
                                                                             "\"total\":\"5\"}");
    fake_answer(&mon, 200, "{\"hits\":[" HIT("w0", "10:00:05", "five") "],\"total\":5}");
    struct backend *b = open_acp(&job, &mon, "ts-user-1");
    struct strbuf got = STRBUF_INIT;
    struct api_error err;
    assert_int_equal(backend_logs(b, "j1", "w0", -1, false, collect, &got, &err), BACKEND_OK);
    assert_string_equal(strbuf_str(&got), "one\ntwo\nthree\nfour\nfive\n");
    assert_int_equal(mon.calls, 3);
    for (size_t i = 0; i < 3; i++) {
        assert_string_equal(mon.method[i], "POST");
        assert_string_equal(mon.path[i], LOGS_PATH);
    }
    assert_field(&mon, 0, "offset", "0");
    assert_field(&mon, 1, "offset", "2");
    assert_field(&mon, 2, "offset", "4");
    /* from a minute before the job was created */
    assert_field(&mon, 0, "start", "1796119140");
    assert_int_equal(job.calls, 1);
    assert_string_equal(job.path[0], "/compute/acp/data/v2/subscriptions/sub-1/resourceGroups/"
                                     "default/zones/cn-sh-01z/workspaces/ws-1/trainingJobs/j1");
    strbuf_free(&got);
    backend_free(b);
    fake_free(&job);
    fake_free(&mon);
}

/* Five lines, the oldest first: the first page tells the total, the second holds the last two. */
static void tail_script(struct fake *job, struct fake *mon)
{
    fake_answer(job, 200, JOB_RUNNING);
    fake_answer(
        mon, 200,
        "{\"hits\":[" HIT("w0", "10:00:01", "one") "," HIT("w0", "10:00:02", "two") "],"
                                                                                    "\"total\":5}");
    fake_answer(mon, 200,
                "{\"hits\":[" HIT("w0", "10:00:04", "four\\u001b[2J") "," HIT(
                    "w0", "10:00:05", "five") "],\"total\":5}");
}

/* A follow: the job asked for its creation time, then before each poll whether it ended. */
static void follow_script(struct fake *job, struct fake *mon)
{
    fake_answer(job, 200, JOB_RUNNING);
    fake_answer(job, 200, JOB_RUNNING);
    fake_answer(job, 200, JOB_SUCCEEDED);
    fake_answer(
        mon, 200,
        "{\"hits\":[" HIT("w0", "10:00:00", "a") "," HIT("w0", "10:00:01", "b") "],"
                                                                                "\"total\":2}");
    /* the poll from the cursor (10:00:01) sees b again, with two new lines */
    fake_answer(mon, 200,
                "{\"hits\":[" HIT("w0", "10:00:01", "b") "," HIT("w0", "10:00:01", "c") "," HIT(
                    "w0", "10:00:02", "d") "],\"total\":3}");
    /* then nothing new: once the job has ended, one such poll ends the follow */
    fake_answer(mon, 200, "{\"hits\":[" HIT("w0", "10:00:02", "d") "],\"total\":1}");
}

/* The Monitor service refuses a pod token that has expired. */
static void expired_script(struct fake *job, struct fake *mon)
{
    fake_answer(job, 200, JOB_RUNNING);
    fake_answer(mon, 403,
                "{\"code\":7,\"message\":\"token is expired\","
                "\"details\":[{\"reason\":\"ExpiredPodToken\"}]}");
}

/* The error says whose logs, from where, the server's words and what to do. */
static void assert_expired(const struct api_error *err)
{
    assert_int_equal(err->status, 403);
    assert_string_equal(err->reason, "ExpiredPodToken");
    assert_non_null(strstr(err->message, "the logs of worker w0"));
    assert_non_null(strstr(err->message, "Monitor service at https://monitor.example.test"));
    assert_non_null(strstr(err->message, "token is expired"));
    assert_non_null(strstr(err->message, "ask for the logs again"));
}

static void tail_reads_only_the_end(void **state)
{
    (void)state;
    /* oldest first: the first page tells the total, then the last two are asked for */
    struct fake job = {0}, mon = {0};
    tail_script(&job, &mon);
    struct backend *b = open_acp(&job, &mon, "ts-user-1");
    struct strbuf got = STRBUF_INIT;
    struct api_error err;
    assert_int_equal(backend_logs(b, "j1", "w0", 2, false, collect, &got, &err), BACKEND_OK);
    assert_string_equal(strbuf_str(&got), "four\nfive\n");
    assert_int_equal(mon.calls, 2);
    assert_field(&mon, 1, "offset", "3");
    backend_free(b);
    fake_free(&job);
    fake_free(&mon);

    /* newest first: the first page holds the tail; shown oldest first */
    struct fake job2 = {0}, mon2 = {0};
    fake_answer(&job2, 200, JOB_RUNNING);
    fake_answer(&mon2, 200,
                "{\"hits\":[" HIT("w0", "10:00:05", "five") "," HIT(
                    "w0", "10:00:04", "four") "," HIT("w0", "10:00:03", "three") "],\"total\":5}");
    b = open_acp(&job2, &mon2, "ts-user-1");
    strbuf_reset(&got);
    assert_int_equal(backend_logs(b, "j1", "w0", 2, false, collect, &got, &err), BACKEND_OK);
    assert_string_equal(strbuf_str(&got), "four\nfive\n");
    assert_int_equal(mon2.calls, 1);
    strbuf_free(&got);
    backend_free(b);
    fake_free(&job2);
    fake_free(&mon2);
}

static void other_workers_lines_are_left_out(void **state)
{
    (void)state;
    struct fake job = {0}, mon = {0};
    fake_answer(&job, 200, JOB_RUNNING);
    /* a server that ignored the filter: another pod's line, and one that names none */
    fake_answer(&mon, 200,
                "{\"hits\":[" HIT("j1-worker-0", "10:00:01", "mine") "," HIT(
                    "j1-worker-1", "10:00:02",
                    "theirs") ","
                              "{\"body\":\"whose\",\"log_time\":\"2026-12-01T10:00:03Z\"}," HIT(
                                  "j1-worker-0", "10:00:04", "mine too") "],\"total\":4}");
    struct backend *b = open_acp(&job, &mon, "ts-user-1");
    struct strbuf got = STRBUF_INIT;
    struct api_error err;
    assert_int_equal(backend_logs(b, "j1", "j1-worker-0", -1, false, collect, &got, &err),
                     BACKEND_OK);
    assert_string_equal(strbuf_str(&got), "mine\nmine too\n");
    json_t *body = json_loads(mon.body[0], 0, NULL);
    json_t *filter = json_array_get(json_object_get(body, "custom_filter"), 0);
    assert_string_equal(json_string_value(json_object_get(filter, "key")),
                        "Attributes.k8s.pod.name");
    assert_string_equal(json_string_value(json_object_get(filter, "value")), "j1-worker-0");
    json_decref(body);
    strbuf_free(&got);
    backend_free(b);
    fake_free(&job);
    fake_free(&mon);
}

static void an_expired_token_is_said_clearly(void **state)
{
    (void)state;
    struct fake job = {0}, mon = {0};
    expired_script(&job, &mon);
    struct backend *b = open_acp(&job, &mon, "ts-user-1");
    struct strbuf got = STRBUF_INIT;
    struct api_error err;
    assert_int_equal(backend_logs(b, "j1", "w0", -1, false, collect, &got, &err), BACKEND_REJECTED);
    assert_expired(&err);
    assert_int_equal(got.len, 0);
    strbuf_free(&got);
    backend_free(b);
    fake_free(&job);
    fake_free(&mon);
}

static void hostile_bodies_are_made_safe(void **state)
{
    (void)state;
    struct fake job = {0}, mon = {0};
    fake_answer(&job, 200, JOB_RUNNING);
    /* OSC 52 (writes the clipboard), a screen clear, a bell, CR, a colour, C1 CSI */
    fake_answer(
        &mon, 200,
        "{\"hits\":[" HIT("w0", "10:00:01", "\\u001b]52;c;ZXZpbA==\\u0007evil\\u001b[2J\\r\\n") "," HIT(
            "w0", "10:00:02",
            "ok\\u001b[31mred\\u009b1;1Hx\\ttab") "," HIT("w0", "10:00:03",
                                                          "two\\nlines") "],\"total\":3}");
    struct backend *b = open_acp(&job, &mon, "ts-user-1");
    struct strbuf got = STRBUF_INIT;
    struct api_error err;
    assert_int_equal(backend_logs(b, "j1", "w0", -1, false, collect, &got, &err), BACKEND_OK);
    const char *s = strbuf_str(&got);
    for (size_t i = 0; i < got.len; i++)
        assert_true((unsigned char)s[i] >= 0x20 || s[i] == '\n' || s[i] == '\t');
    assert_null(strstr(s, "\xc2\x9b")); /* C1 CSI, UTF-8 encoded */
    assert_string_equal(s, "evil\nokredx\ttab\ntwo\nlines\n");
    strbuf_free(&got);
    backend_free(b);
    fake_free(&job);
    fake_free(&mon);
}

static void follow_polls_from_a_cursor_and_shows_each_line_once(void **state)
{
    (void)state;
    struct fake job = {0}, mon = {0};
    follow_script(&job, &mon);
    struct backend *b = open_acp(&job, &mon, "ts-user-1");
    struct strbuf got = STRBUF_INIT;
    struct api_error err;
    assert_int_equal(backend_logs(b, "j1", "w0", -1, true, collect, &got, &err), BACKEND_OK);
    assert_string_equal(strbuf_str(&got), "a\nb\nc\nd\n");
    assert_int_equal(mon.calls, 4);
    assert_field(&mon, 1, "start", "1796119201"); /* the cursor: b's second */
    assert_field(&mon, 2, "start", "1796119202"); /* then d's */
    strbuf_free(&got);
    backend_free(b);
    fake_free(&job);
    fake_free(&mon);
}

static void a_follow_rides_out_a_network_blip(void **state)
{
    (void)state;
    struct fake job = {0}, mon = {0};
    fake_answer(&job, 200, JOB_RUNNING);
    fake_answer(&job, 200, JOB_RUNNING);
    fake_answer(&job, 200, JOB_RUNNING);
    fake_answer(&job, 200, JOB_SUCCEEDED);
    fake_answer(&mon, 200, "{\"hits\":[" HIT("w0", "10:00:00", "a") "],\"total\":1}");
    fake_answer(&mon, 0, NULL); /* two polls that reach nothing */
    fake_answer(&mon, 0, NULL);
    fake_answer(
        &mon, 200,
        "{\"hits\":[" HIT("w0", "10:00:00", "a") "," HIT("w0", "10:00:03", "b") "],"
                                                                                "\"total\":2}");
    fake_answer(&mon, 200, "{\"hits\":[" HIT("w0", "10:00:03", "b") "],\"total\":1}");
    struct backend *b = open_acp(&job, &mon, "ts-user-1");
    struct strbuf got = STRBUF_INIT;
    struct api_error err;
    assert_int_equal(backend_logs(b, "j1", "w0", -1, true, collect, &got, &err), BACKEND_OK);
    assert_string_equal(strbuf_str(&got), "a\nb\n");
    strbuf_free(&got);
    backend_free(b);
    fake_free(&job);
    fake_free(&mon);

    /* a service that stays away ends the follow after ACP_LOGS_RETRIES polls, saying so */
    struct fake job2 = {0}, mon2 = {0};
    fake_answer(&job2, 200, JOB_RUNNING);
    fake_answer(&mon2, 200, "{\"hits\":[" HIT("w0", "10:00:00", "a") "],\"total\":1}");
    fake_answer(&mon2, 0, NULL);
    b = open_acp(&job2, &mon2, "ts-user-1");
    got = (struct strbuf)STRBUF_INIT;
    assert_int_equal(backend_logs(b, "j1", "w0", -1, true, collect, &got, &err),
                     BACKEND_UNREACHABLE);
    assert_string_equal(strbuf_str(&got), "a\n");
    assert_int_equal(mon2.calls, 1 + ACP_LOGS_RETRIES + 1);
    assert_non_null(strstr(err.message, "cannot reach the Monitor service"));
    strbuf_free(&got);
    backend_free(b);
    fake_free(&job2);
    fake_free(&mon2);
}

static void no_station_says_how_to_set_one(void **state)
{
    (void)state;
    struct fake job = {0}, mon = {0};
    fake_answer(&job, 200, JOB_RUNNING);
    fake_answer(&mon, 200, "{\"hits\":[],\"total\":0}");
    struct backend *b = open_acp(&job, &mon, NULL);
    struct strbuf got = STRBUF_INIT;
    struct api_error err;
    assert_int_equal(backend_logs(b, "j1", "w0", -1, false, collect, &got, &err), BACKEND_REJECTED);
    assert_non_null(strstr(err.message, "telemetry_station"));
    assert_non_null(strstr(err.message, "Monitor service"));
    assert_int_equal(mon.calls, 0);
    strbuf_free(&got);
    backend_free(b);
    fake_free(&job);
    fake_free(&mon);
}

static void a_reply_of_another_shape_is_an_error(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "[]",
        "{\"total\":1}",
        "{\"hits\":{},\"total\":1}",
        "{\"hits\":[],\"total\":\"-1\"}",
        "{\"hits\":[],\"total\":\"12x\"}",
        "not json",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct fake job = {0}, mon = {0};
        fake_answer(&job, 200, JOB_RUNNING);
        fake_answer(&mon, 200, bad[i]);
        struct backend *b = open_acp(&job, &mon, "ts-user-1");
        struct strbuf got = STRBUF_INIT;
        struct api_error err;
        assert_int_equal(backend_logs(b, "j1", "w0", -1, false, collect, &got, &err),
                         BACKEND_REJECTED);
        assert_non_null(strstr(err.message, "the logs of worker w0"));
        strbuf_free(&got);
        backend_free(b);
        fake_free(&job);
        fake_free(&mon);
    }
}

/* ---- through the loop (backend_send: the TUI's log pane) ------------------ */

/* A LOGS call for worker w0 of j1 through a loop, on fakes scripted by the test. */
struct arun {
    struct fake job, mon;
    struct backend *b;
    struct loop *lp;
    struct http_multi *m;
    struct backend_call *c;
    struct strbuf got;
    bool done, cancel_in_data; /* cancel_in_data: on_data cancels the call */
    enum backend_status st;
    struct api_error err;
};

static void arun_done(void *ctx, struct backend_reply *r)
{
    struct arun *a = ctx;
    a->done = true;
    a->st = r->status;
    a->err = r->err;
}

static int arun_data(void *ctx, const char *data, size_t len)
{
    struct arun *a = ctx;
    strbuf_add(&a->got, data, len);
    if (a->cancel_in_data)
        backend_call_cancel(a->c);
    return 0;
}

/* Sends the call (station, polling every poll_ms); nothing reaches the fakes inside send. */
static void arun_send(struct arun *a, const char *station, long poll_ms, long tail, bool follow)
{
    a->b = open_acp(&a->job, &a->mon, station);
    acp_set_monitor(a->b, fake_client(&a->mon, "https://monitor.example.test"), station, poll_ms);
    a->lp = loop_new();
    a->m = http_multi_new(a->lp);
    struct backend_request rq = {
        .op = BACKEND_OP_LOGS, .name = "j1", .worker = "w0", .tail = tail, .follow = follow};
    a->c = backend_send(a->b, a->m, &rq, arun_done, NULL, arun_data, a);
    assert_int_equal(a->job.calls + a->mon.calls, 0);
}

/* Runs the loop until the call ends, or ms have passed (a bound: each wait ends on an event). */
static void arun_wait(struct arun *a, int64_t ms)
{
    int64_t end = loop_now_ms() + ms;
    while (!a->done && loop_now_ms() < end)
        loop_run_once(a->lp, 20);
}

static void arun_free(struct arun *a)
{
    strbuf_free(&a->got);
    http_multi_free(a->m);
    loop_free(a->lp);
    backend_free(a->b);
    fake_free(&a->job);
    fake_free(&a->mon);
}

static void async_tail_reads_only_the_end(void **state)
{
    (void)state;
    struct arun a = {0};
    tail_script(&a.job, &a.mon);
    arun_send(&a, "ts-user-1", 0, 2, false);
    arun_wait(&a, 5000);
    assert_true(a.done);
    assert_int_equal(a.st, BACKEND_OK);
    assert_string_equal(strbuf_str(&a.got), "four\nfive\n"); /* sanitized as the blocking path */
    assert_int_equal(a.job.calls, 1);
    assert_int_equal(a.mon.calls, 2);
    assert_string_equal(a.mon.path[0], LOGS_PATH);
    assert_field(&a.mon, 0, "start", "1796119140");
    assert_field(&a.mon, 1, "offset", "3");
    arun_free(&a);
}

static void async_follow_polls_from_a_cursor(void **state)
{
    (void)state;
    struct arun a = {0};
    follow_script(&a.job, &a.mon);
    arun_send(&a, "ts-user-1", 10, -1, true);
    arun_wait(&a, 5000);
    assert_true(a.done);
    assert_int_equal(a.st, BACKEND_OK);
    /* each line once; the follow ends when the job has ended and a poll brought nothing */
    assert_string_equal(strbuf_str(&a.got), "a\nb\nc\nd\n");
    assert_int_equal(a.mon.calls, 4);
    assert_int_equal(a.job.calls, 4); /* its creation, then once before each poll */
    assert_field(&a.mon, 1, "start", "1796119201");
    assert_field(&a.mon, 2, "start", "1796119202");
    arun_free(&a);
}

static void async_cancel_stops_polling(void **state)
{
    (void)state;
    struct arun a = {0};
    fake_answer(&a.job, 200, JOB_RUNNING);
    fake_answer(&a.mon, 200, "{\"hits\":[" HIT("w0", "10:00:00", "a") "],\"total\":1}");
    arun_send(&a, "ts-user-1", 20, -1, true);
    int64_t end = loop_now_ms() + 5000;
    while (a.mon.calls < 3 && loop_now_ms() < end) /* the first read, then polls */
        loop_run_once(a.lp, 20);
    assert_true(a.mon.calls >= 3);
    assert_string_equal(strbuf_str(&a.got), "a\n");
    backend_call_cancel(a.c);
    size_t mon_calls = a.mon.calls, job_calls = a.job.calls;
    /* ten poll intervals: nothing more is asked, on_done is not called */
    end = loop_now_ms() + 200;
    while (loop_now_ms() < end)
        loop_run_once(a.lp, 20);
    assert_int_equal(a.mon.calls, mon_calls);
    assert_int_equal(a.job.calls, job_calls);
    assert_false(a.done);
    assert_int_equal(http_multi_active(a.m), 0);
    arun_free(&a);
}

static void async_cancel_from_on_data_stops_the_read(void **state)
{
    (void)state;
    struct arun a = {0};
    a.cancel_in_data = true;
    fake_answer(&a.job, 200, JOB_RUNNING);
    fake_answer(
        &a.mon, 200,
        "{\"hits\":[" HIT("w0", "10:00:00", "a") "," HIT("w0", "10:00:01", "b") "],"
                                                                                "\"total\":2}");
    arun_send(&a, "ts-user-1", 0, -1, true);
    int64_t end = loop_now_ms() + 300;
    while (loop_now_ms() < end)
        loop_run_once(a.lp, 20);
    /* the pane closed on the first line: no second line, no poll, no on_done */
    assert_string_equal(strbuf_str(&a.got), "a\n");
    assert_int_equal(a.mon.calls, 1);
    assert_int_equal(a.job.calls, 1);
    assert_false(a.done);
    assert_int_equal(http_multi_active(a.m), 0);
    arun_free(&a);
}

static void async_expired_token_reaches_on_done(void **state)
{
    (void)state;
    struct arun a = {0};
    expired_script(&a.job, &a.mon);
    arun_send(&a, "ts-user-1", 0, -1, true);
    arun_wait(&a, 5000);
    assert_true(a.done);
    assert_int_equal(a.st, BACKEND_REJECTED);
    assert_expired(&a.err);
    assert_int_equal(a.got.len, 0);
    assert_int_equal(a.mon.calls, 1); /* a refusal is not retried */
    arun_free(&a);
}

static void async_without_a_station_says_how_to_set_one(void **state)
{
    (void)state;
    struct arun a = {0};
    fake_answer(&a.job, 200, JOB_RUNNING);
    arun_send(&a, NULL, 0, -1, false);
    arun_wait(&a, 5000);
    assert_true(a.done);
    assert_int_equal(a.st, BACKEND_REJECTED);
    assert_string_equal(a.err.reason, "NoTelemetryStation");
    assert_int_equal(a.mon.calls, 0);
    arun_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(station_paths_are_checked),
        cmocka_unit_test(body_names_the_window_the_worker_and_the_page),
        cmocka_unit_test(every_page_is_read_in_order),
        cmocka_unit_test(tail_reads_only_the_end),
        cmocka_unit_test(other_workers_lines_are_left_out),
        cmocka_unit_test(an_expired_token_is_said_clearly),
        cmocka_unit_test(hostile_bodies_are_made_safe),
        cmocka_unit_test(follow_polls_from_a_cursor_and_shows_each_line_once),
        cmocka_unit_test(a_follow_rides_out_a_network_blip),
        cmocka_unit_test(no_station_says_how_to_set_one),
        cmocka_unit_test(a_reply_of_another_shape_is_an_error),
        cmocka_unit_test(async_tail_reads_only_the_end),
        cmocka_unit_test(async_follow_polls_from_a_cursor),
        cmocka_unit_test(async_cancel_stops_polling),
        cmocka_unit_test(async_cancel_from_on_data_stops_the_read),
        cmocka_unit_test(async_expired_token_reaches_on_done),
        cmocka_unit_test(async_without_a_station_says_how_to_set_one),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
