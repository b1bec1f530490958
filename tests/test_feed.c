/*
 * test_feed: the live screens' data source — a watch stream fills the store
 * and goes LIVE at SYNCED; a backend without watch is polled instead, and
 * a poll that brings nothing new does not wake the screens; a failing
 * server is retried with backoff, the feed saying why, and recovers; a
 * refusal (4xx) is said and not retried.
 */
// clang-format off
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
// clang-format on

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/acp.h"
#include "api/backend.h"
#include "api/http.h"
#include "api/http_multi.h"
#include "tui/feed.h"
#include "tui/jobstore.h"
#include "util/loop.h"
#include "util/strbuf.h"

/* What the fake server answers: by path, watch or list. */
struct server {
    int watch_status; /* 200: stream watch_body; else that status */
    const char *watch_body;
    int list_status;
    enum transport_error list_transport;
    const char *list_body;
    int watches, lists;
};

static void transport(void *ctx, const char *method, const char *path, const char *body, size_t len,
                      http_data_fn on_data, void *data_ctx, struct http_result *out)
{
    struct server *s = ctx;
    (void)method, (void)body, (void)len;
    out->transport = TRANSPORT_NONE;
    if (strstr(path, "watch=true")) {
        s->watches++;
        out->status = s->watch_status;
        if (s->watch_status == 200 && on_data)
            on_data(data_ctx, s->watch_body, strlen(s->watch_body));
        else
            strbuf_adds(&out->body, "{\"code\":501,\"message\":\"no watch\"}");
        return;
    }
    s->lists++;
    out->transport = s->list_transport;
    if (s->list_transport != TRANSPORT_NONE) {
        snprintf(out->message, sizeof out->message, "Connection refused");
        return;
    }
    out->status = s->list_status;
    strbuf_adds(&out->body, s->list_body);
}

static int changes;
static void on_change(void *ctx)
{
    (void)ctx;
    changes++;
}

struct rig {
    struct loop *lp;
    struct http_multi *m;
    struct backend *b;
    struct jobstore *store;
    struct feed *f;
};

static void rig_open(struct rig *r, struct server *s, bool trainjobd)
{
    r->lp = loop_new();
    r->m = http_multi_new(r->lp);
    struct strbuf err = STRBUF_INIT;
    struct http_client *c = http_client_new("http+unix:///tmp/none.sock", &err);
    strbuf_free(&err);
    http_client_set_transport(c, transport, s);
    struct backend_target t = {(char *)"local", (char *)"default", (char *)"local-1z",
                               (char *)"default"};
    r->b = acp_backend_new(c, &t, trainjobd);
    r->store = jobstore_new();
    r->f = feed_new(r->b, r->m, r->store, 100, on_change, NULL);
}

static void rig_close(struct rig *r)
{
    feed_free(r->f);
    jobstore_free(r->store);
    backend_free(r->b);
    http_multi_free(r->m);
    loop_free(r->lp);
}

static void run_ms(struct loop *lp, int ms)
{
    int64_t end = loop_now_ms() + ms;
    while (loop_now_ms() < end)
        loop_run_once(lp, 10);
}

static void a_watch_fills_the_store_and_goes_live(void **state)
{
    (void)state;
    struct server s = {.watch_status = 200,
                       .watch_body = "{\"type\":\"JOB\",\"job\":{\"name\":\"pt-a\",\"state\":"
                                     "\"RUNNING\"}}\n{\"type\":\"SYNCED\"}\n"};
    struct rig r;
    rig_open(&r, &s, true);
    changes = 0;
    feed_start(r.f);
    assert_int_equal(feed_state(r.f), FEED_CONNECTING);
    loop_run_once(r.lp, 50);
    assert_int_equal(jobstore_count(r.store), 1);
    assert_non_null(jobstore_find(r.store, "pt-a"));
    assert_true(changes > 0);
    /* The fake stream ends at once: the feed is then LOST and plans a retry. */
    assert_int_equal(feed_state(r.f), FEED_LOST);
    assert_non_null(strstr(feed_error(r.f), "ended the watch stream"));
    assert_true(feed_fresh_at(r.f) > 0);
    assert_true(feed_next_try(r.f) > loop_now_ms());
    assert_false(feed_polling(r.f));
    rig_close(&r);
}

static void without_watch_it_polls_and_only_changes_wake(void **state)
{
    (void)state;
    struct server s = {.watch_status = 501,
                       .list_status = 200,
                       .list_body =
                           "{\"training_jobs\":[{\"name\":\"pt-a\",\"state\":\"QUEUEING\"},"
                           "{\"name\":\"pt-b\",\"state\":\"RUNNING\"}]}"};
    struct rig r;
    rig_open(&r, &s, false); /* real ACP: no watch (501 before any request) */
    changes = 0;
    feed_start(r.f);
    run_ms(r.lp, 50);
    assert_true(feed_polling(r.f));
    assert_int_equal(feed_state(r.f), FEED_POLLING);
    assert_int_equal(jobstore_count(r.store), 2);
    assert_int_equal(s.watches, 0);
    int after_first = changes;
    int lists = s.lists;
    run_ms(r.lp, 350); /* every 100 ms: three more polls, nothing new */
    assert_true(s.lists >= lists + 2);
    assert_int_equal(changes, after_first);
    /* A change on the server reaches the store at the next poll. */
    s.list_body = "{\"training_jobs\":[{\"name\":\"pt-b\",\"state\":\"FAILED\"}]}";
    /* (the polls may have slowed to 200 ms by now: idle_polls_slow_down…) */
    int64_t end = loop_now_ms() + 1000;
    while (loop_now_ms() < end && changes == after_first)
        loop_run_once(r.lp, 10);
    assert_true(changes > after_first);
    assert_int_equal(jobstore_count(r.store), 1);
    assert_int_equal(jobstore_find(r.store, "pt-b")->state, JOB_STATE_FAILED);
    rig_close(&r);
}

/*
 * Polls that change nothing slow down (kind to the server): after three in
 * a row the wait doubles, up to 4 times the refresh; the first change
 * brings the refresh back, and so does feed_start (the user's `r`).
 */
static void idle_polls_slow_down_and_a_change_resets_them(void **state)
{
    (void)state;
    struct server s = {.watch_status = 501,
                       .list_status = 200,
                       .list_body =
                           "{\"training_jobs\":[{\"name\":\"pt-a\",\"state\":\"RUNNING\"}]}"};
    struct rig r;
    rig_open(&r, &s, false); /* refresh 100 ms */
    feed_start(r.f);
    run_ms(r.lp, 50);
    assert_int_equal(feed_poll_interval_ms(r.f), 100);
    /* 100 ms x3 unchanged, then 200, then 400: at most about 8 polls in 2 s instead of 20. */
    int lists = s.lists;
    int64_t end = loop_now_ms() + 3000;
    while (loop_now_ms() < end && feed_poll_interval_ms(r.f) < 400)
        loop_run_once(r.lp, 10);
    assert_int_equal(feed_poll_interval_ms(r.f), 400);
    assert_true(s.lists - lists <= 6);
    run_ms(r.lp, 900);
    assert_int_equal(feed_poll_interval_ms(r.f), 400); /* no further than 4x */
    /* A change: back to the refresh at once. */
    s.list_body = "{\"training_jobs\":[{\"name\":\"pt-a\",\"state\":\"FAILED\"}]}";
    end = loop_now_ms() + 2000;
    while (loop_now_ms() < end && jobstore_find(r.store, "pt-a")->state != JOB_STATE_FAILED)
        loop_run_once(r.lp, 10);
    assert_int_equal(jobstore_find(r.store, "pt-a")->state, JOB_STATE_FAILED);
    assert_int_equal(feed_poll_interval_ms(r.f), 100);
    rig_close(&r);
}

static void a_failing_server_backs_off_and_recovers(void **state)
{
    (void)state;
    struct server s = {.watch_status = 501,
                       .list_transport = TRANSPORT_UNREACHABLE,
                       .list_body = "{\"training_jobs\":[{\"name\":\"pt-a\"}]}",
                       .list_status = 200};
    struct rig r;
    rig_open(&r, &s, false);
    feed_start(r.f);
    run_ms(r.lp, 50);
    assert_int_equal(feed_state(r.f), FEED_LOST);
    assert_non_null(strstr(feed_error(r.f), "cannot reach"));
    int64_t wait1 = feed_next_try(r.f) - loop_now_ms();
    assert_true(wait1 > 500 && wait1 <= 1000); /* the first retry after 1 s */
    run_ms(r.lp, 1100);
    assert_int_equal(feed_state(r.f), FEED_LOST);
    int64_t wait2 = feed_next_try(r.f) - loop_now_ms();
    assert_true(wait2 > 1500 && wait2 <= 2000); /* then 2 s */
    s.list_transport = TRANSPORT_NONE;          /* the server is back */
    run_ms(r.lp, 2100);
    assert_int_equal(feed_state(r.f), FEED_POLLING);
    assert_string_equal(feed_error(r.f), "");
    assert_int_equal(jobstore_count(r.store), 1);
    rig_close(&r);
}

/* A refusal (a workspace that does not exist) is an error to show, not a connection to retry. */
static void a_refusal_is_not_retried(void **state)
{
    (void)state;
    struct server s = {.watch_status = 501,
                       .list_status = 404,
                       .list_body =
                           "{\"code\":404,\"message\":\"workspace 'nosuch' does not exist\"}"};
    struct rig r;
    rig_open(&r, &s, false);
    feed_start(r.f);
    run_ms(r.lp, 50);
    assert_int_equal(feed_state(r.f), FEED_REFUSED);
    assert_non_null(strstr(feed_error(r.f), "does not exist"));
    assert_int_equal(feed_next_try(r.f), 0); /* no retry planned */
    int lists = s.lists;
    run_ms(r.lp, 1300); /* past the first backoff: nothing is asked again */
    assert_int_equal(s.lists, lists);
    assert_int_equal(feed_state(r.f), FEED_REFUSED);
    /* Asked again by hand (r), once it is fixed on the server: it recovers. */
    s.list_status = 200;
    s.list_body = "{\"training_jobs\":[{\"name\":\"pt-a\"}]}";
    feed_start(r.f);
    run_ms(r.lp, 50);
    assert_int_equal(feed_state(r.f), FEED_POLLING);
    assert_string_equal(feed_error(r.f), "");
    rig_close(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_watch_fills_the_store_and_goes_live),
        cmocka_unit_test(without_watch_it_polls_and_only_changes_wake),
        cmocka_unit_test(idle_polls_slow_down_and_a_change_resets_them),
        cmocka_unit_test(a_failing_server_backs_off_and_recovers),
        cmocka_unit_test(a_refusal_is_not_retried),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
