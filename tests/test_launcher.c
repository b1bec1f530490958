/*
 * Tests for engine/launcher: requests are given back on the loop's thread
 * in the order they were submitted, whatever order they finish in, and
 * several launch at once (a launch waits for a sandbox to be set up: one at
 * a time left the machine idle between them). Each request here is refused
 * (nothing is spawned) and waits TRAINJOBD_TEST_LAUNCH_DELAY_MS first, so
 * the launches take a known time without any CPU.
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
#include <time.h>

#include "engine/launcher.h"
#include "util/loop.h"
#include "util/xalloc.h"

#define REQUESTS 8
#define DELAY_MS 250

struct got {
    size_t n;
    size_t order[REQUESTS];
};

static void on_done(void *ctx, struct launch_req *r)
{
    struct got *g = ctx;
    assert_true(g->n < REQUESTS);
    assert_int_equal(r->rc, -1); /* refused: nothing ran */
    g->order[g->n++] = r->index;
    launch_req_free(r);
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void launches_overlap_and_come_back_in_order(void **state)
{
    (void)state;
    char delay[16];
    snprintf(delay, sizeof delay, "%d", DELAY_MS);
    setenv("TRAINJOBD_TEST_LAUNCH_DELAY_MS", delay, 1);
    struct loop *lp = loop_new();
    struct got g = {0};
    struct launcher *l = launcher_new(lp, on_done, &g);
    double t0 = now_ms();
    for (size_t i = 0; i < REQUESTS; i++) {
        struct launch_req *r = launch_req_new();
        r->index = i;
        r->refused = xasprintf("test request %zu", i);
        launcher_submit(l, r);
    }
    while (g.n < REQUESTS && now_ms() - t0 < 30000)
        loop_run_once(lp, 100);
    double took = now_ms() - t0;
    assert_int_equal(g.n, REQUESTS);
    for (size_t i = 0; i < REQUESTS; i++)
        assert_int_equal(g.order[i], i);
    /* One at a time takes REQUESTS * DELAY_MS (2 s); two or more at once at most half. */
    printf("# %d launches of %d ms each came back in %.0f ms\n", REQUESTS, DELAY_MS, took);
    assert_true(took < REQUESTS * DELAY_MS * 0.75);
    launcher_free(l);
    loop_free(lp);
    unsetenv("TRAINJOBD_TEST_LAUNCH_DELAY_MS");
}

/* Requests not given back when the launcher is freed are freed with it (LeakSanitizer checks). */
static void free_with_requests_in_flight(void **state)
{
    (void)state;
    setenv("TRAINJOBD_TEST_LAUNCH_DELAY_MS", "50", 1);
    struct loop *lp = loop_new();
    struct got g = {0};
    struct launcher *l = launcher_new(lp, on_done, &g);
    for (size_t i = 0; i < REQUESTS; i++) {
        struct launch_req *r = launch_req_new();
        r->index = i;
        r->refused = xasprintf("test request %zu", i);
        launcher_submit(l, r);
    }
    launcher_free(l);
    loop_free(lp);
    assert_int_equal(g.n, 0); /* nothing is given back once freed */
    unsetenv("TRAINJOBD_TEST_LAUNCH_DELAY_MS");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(launches_overlap_and_come_back_in_order),
        cmocka_unit_test(free_with_requests_in_flight),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
