/*
 * Tests for engine/launcher: requests are given back on the loop's thread
 * in the order they were submitted, whatever order they finish in, and
 * several launch at once (a launch waits for a sandbox to be set up: one at
 * a time left the machine idle between them). Each request here is refused
 * (nothing is spawned) and waits TRAINJOBD_TEST_LAUNCH_DELAY_MS first, so
 * the launches take a known time without any CPU. Files asked to be removed
 * go on the launcher's threads.
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
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

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

static bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* n files in dir named f0, f1, ...: their paths (owned). */
static char **make_files(const char *dir, size_t n)
{
    char **paths = xcalloc(n, sizeof *paths);
    for (size_t i = 0; i < n; i++) {
        paths[i] = xasprintf("%s/f%zu", dir, i);
        FILE *f = fopen(paths[i], "w");
        assert_non_null(f);
        fclose(f);
    }
    return paths;
}

/*
 * The status files of ended workers are removed on the launcher's threads,
 * not the loop's: they go without the loop turning, one already gone is no
 * error, and those still asked for when the launcher is freed go then.
 */
static void files_removed_off_the_loop(void **state)
{
    (void)state;
    char dir[] = "/tmp/test_launcher.XXXXXX";
    assert_non_null(mkdtemp(dir));
    struct loop *lp = loop_new();
    struct got g = {0};
    struct launcher *l = launcher_new(lp, on_done, &g);
    char **paths = make_files(dir, 4);
    for (size_t i = 0; i < 4; i++)
        launcher_unlink(l, xstrdup(paths[i]));
    launcher_unlink(l, xasprintf("%s/never-made", dir));
    double t0 = now_ms();
    while ((exists(paths[0]) || exists(paths[3])) && now_ms() - t0 < 5000) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL); /* the loop does not turn: a thread removes them */
    }
    for (size_t i = 0; i < 4; i++) {
        assert_false(exists(paths[i]));
        free(paths[i]);
    }
    free(paths);
    paths = make_files(dir, 3);
    for (size_t i = 0; i < 3; i++)
        launcher_unlink(l, xstrdup(paths[i]));
    launcher_free(l);
    for (size_t i = 0; i < 3; i++) {
        assert_false(exists(paths[i]));
        free(paths[i]);
    }
    free(paths);
    loop_free(lp);
    assert_int_equal(g.n, 0);
    assert_int_equal(rmdir(dir), 0); /* nothing else was left in it */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(launches_overlap_and_come_back_in_order),
        cmocka_unit_test(free_with_requests_in_flight),
        cmocka_unit_test(files_removed_off_the_loop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
