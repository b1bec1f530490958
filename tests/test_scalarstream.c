/*
 * test_scalarstream: the push stream of a job's scalars, both ends —
 * engine/scalarfollow (pages read when the client drains, so writes made
 * while it did not read come coalesced in one page; the queue holds at most
 * about one page whatever is written; new run directories watched; the cap
 * on watched directories said in a last line; a run swapped for a symlink
 * never read through; the job's end as a last line) and api/scalarpage's
 * scalar_stream (lines cut anywhere, the last line, a line too long, data
 * after the end, a line that is no page).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h> /* after the four headers it needs */

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/apierror.h"
#include "api/scalarpage.h"
#include "api/tfevents.h"
#include "engine/scalarfollow.h"
#include "engine/stream.h"
#include "util/loop.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

static char root[256];

static int setup(void **state)
{
    (void)state;
    snprintf(root, sizeof root, "/tmp/test_scalarstream.XXXXXX");
    if (mkdtemp(root) == NULL)
        return -1;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char *cmd = xasprintf("rm -rf '%s'", root);
    int rc = system(cmd);
    free(cmd);
    return rc == 0 ? 0 : -1;
}

static char *at(const char *rel)
{
    return xasprintf("%s/%s", root, rel);
}

static void mkdir_rel(const char *rel)
{
    char *p = at(rel);
    assert_int_equal(mkdir(p, 0755), 0);
    free(p);
}

/* Appends n scalars tag=first…first+n-1 to the event file rel. */
static void append(const char *rel, const char *tag, int first, int n)
{
    struct strbuf sb = STRBUF_INIT;
    for (int i = 0; i < n; i++)
        tfevents_write_simple(&sb, first + i, 1700000000 + first + i, tag, (float)(first + i));
    char *p = at(rel);
    int fd = open(p, O_WRONLY | O_CREAT | O_APPEND, 0644);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, sb.buf, sb.len), (ssize_t)sb.len);
    close(fd);
    free(p);
    strbuf_free(&sb);
}

/* Everything the stream gives now, as the HTTP side would read it (max bytes a read). */
static void drain(struct stream *s, struct strbuf *out, size_t max, size_t *most_pending)
{
    char buf[65536];
    if (max > sizeof buf)
        max = sizeof buf;
    size_t n;
    while ((n = stream_read(s, buf, max)) > 0) {
        strbuf_add(out, buf, n);
        if (most_pending && stream_pending(s) > *most_pending)
            *most_pending = stream_pending(s);
    }
}

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle))
        n++;
    return n;
}

static struct stream *open_follow(struct loop *lp, size_t max_watches, uint64_t page_bytes)
{
    struct scalarfollow_start how = {"uid1", "/mnt/afs/tb", root,       "tb",
                                     NULL,   false,         page_bytes, max_watches, 0};
    struct strbuf err = STRBUF_INIT;
    enum scalarfollow_refusal why;
    struct stream *s = scalarfollow_open(lp, &how, &why, &err);
    assert_non_null(s);
    strbuf_free(&err);
    return s;
}

/* Five writes while the client was not reading: one page with all five. */
static void test_coalesced(void **state)
{
    (void)state;
    mkdir_rel("tb");
    mkdir_rel("tb/a");
    append("tb/a/events.out.tfevents.1", "loss", 1, 3);
    struct loop *lp = loop_new();
    struct stream *s = open_follow(lp, 0, 0);
    struct strbuf out = STRBUF_INIT;
    drain(s, &out, 65536, NULL);
    assert_int_equal(count(out.buf, "\n"), 1); /* the first page, at once */
    assert_int_equal(count(out.buf, "\"tag\":\"loss\""), 3);
    assert_int_equal(scalarfollow_watch_count(s), 2); /* tb and tb/a */
    strbuf_reset(&out);
    drain(s, &out, 65536, NULL);
    assert_int_equal(out.len, 0); /* nothing written: nothing read, nothing sent */
    for (int i = 0; i < 5; i++)
        append("tb/a/events.out.tfevents.1", "loss", 4 + i, 1);
    assert_true(scalarfollow_drain_events(s));
    drain(s, &out, 65536, NULL);
    assert_int_equal(count(out.buf, "\n"), 1);
    assert_int_equal(count(out.buf, "\"tag\":\"loss\""), 5);
    assert_non_null(strstr(out.buf, "\"step\":8,"));
    stream_abandon(s);
    stream_unref(s);
    loop_free(lp);
    strbuf_free(&out);
}

/* 3,000 scalars written at once, read 100 bytes at a time: the queue stays about a page. */
static void test_bounded_queue(void **state)
{
    (void)state;
    mkdir_rel("tb");
    struct loop *lp = loop_new();
    struct stream *s = open_follow(lp, 0, 4096);
    struct strbuf out = STRBUF_INIT;
    drain(s, &out, 65536, NULL);
    assert_int_equal(count(out.buf, "\n"), 1); /* an empty first page */
    strbuf_reset(&out);
    append("tb/events.out.tfevents.1", "acc", 1, 3000);
    assert_true(scalarfollow_drain_events(s));
    size_t most = 0;
    drain(s, &out, 100, &most);
    assert_int_equal(count(out.buf, "\"tag\":\"acc\""), 3000); /* each once */
    assert_true(count(out.buf, "\n") > 10);                    /* in pages of 4 KiB of files */
    assert_true(most < STREAM_REFILL_BELOW + (64u << 10));     /* never the whole backlog */
    assert_true(stream_footprint(s) < 2 * STREAM_REFILL_BELOW + (64u << 10));
    stream_abandon(s);
    stream_unref(s);
    loop_free(lp);
    strbuf_free(&out);
}

/* A run made later is watched; past the cap a last line says to poll. */
static void test_new_runs_and_cap(void **state)
{
    (void)state;
    mkdir_rel("tb");
    struct loop *lp = loop_new();
    struct stream *s = open_follow(lp, 3, 0);
    struct strbuf out = STRBUF_INIT;
    drain(s, &out, 65536, NULL);
    assert_int_equal(scalarfollow_watch_count(s), 1);
    mkdir_rel("tb/r1");
    assert_true(scalarfollow_drain_events(s));
    drain(s, &out, 65536, NULL);
    assert_int_equal(scalarfollow_watch_count(s), 2);
    append("tb/r1/events.out.tfevents.1", "late", 1, 1);
    assert_true(scalarfollow_drain_events(s));
    strbuf_reset(&out);
    drain(s, &out, 65536, NULL);
    assert_non_null(strstr(out.buf, "\"run\":\"r1\",\"tag\":\"late\""));
    mkdir_rel("tb/r2");
    mkdir_rel("tb/r3");
    assert_true(scalarfollow_drain_events(s));
    strbuf_reset(&out);
    drain(s, &out, 65536, NULL);
    assert_non_null(strstr(out.buf, "{\"end\":\"watch_limit\""));
    assert_true(stream_closed(s));
    assert_true(scalarfollow_watch_count(s) <= 3);
    stream_abandon(s);
    stream_unref(s);
    loop_free(lp);
    strbuf_free(&out);
}

/* A run swapped for a symlink to elsewhere while followed: nothing from there. */
static void test_symlink_swap(void **state)
{
    (void)state;
    mkdir_rel("tb");
    mkdir_rel("tb/run");
    mkdir_rel("outside");
    append("tb/run/events.out.tfevents.1", "own", 1, 1);
    append("outside/events.out.tfevents.1", "stolen", 1, 1);
    struct loop *lp = loop_new();
    struct stream *s = open_follow(lp, 0, 0);
    struct strbuf out = STRBUF_INIT;
    drain(s, &out, 65536, NULL);
    assert_non_null(strstr(out.buf, "\"own\""));
    char *run = at("tb/run"), *moved = at("moved"), *outside = at("outside");
    assert_int_equal(rename(run, moved), 0);
    assert_int_equal(symlink(outside, run), 0);
    append("outside/events.out.tfevents.1", "stolen", 2, 1);
    scalarfollow_drain_events(s);
    drain(s, &out, 65536, NULL);
    append("outside/events.out.tfevents.1", "stolen", 3, 1);
    scalarfollow_drain_events(s);
    drain(s, &out, 65536, NULL);
    assert_null(strstr(out.buf, "stolen"));
    scalarfollow_job_ended(s);
    drain(s, &out, 65536, NULL);
    assert_null(strstr(out.buf, "stolen"));
    assert_non_null(strstr(out.buf, "{\"end\":\"ended\""));
    assert_true(stream_closed(s));
    free(run);
    free(moved);
    free(outside);
    stream_abandon(s);
    stream_unref(s);
    loop_free(lp);
    strbuf_free(&out);
}

/*
 * A log directory not there yet (two levels of it): an empty first page,
 * then, once the job makes the directories and writes, its points — woken
 * by inotify on the way down, no timer; the end still comes.
 */
static void test_missing_dir(void **state)
{
    (void)state;
    struct loop *lp = loop_new();
    struct scalarfollow_start how = {"uid1", "/mnt/afs/a/tb", root, "a/tb", NULL, false, 0, 0, 0};
    struct strbuf err = STRBUF_INIT, out = STRBUF_INIT;
    enum scalarfollow_refusal why;
    struct stream *s = scalarfollow_open(lp, &how, &why, &err);
    assert_non_null(s);
    drain(s, &out, 65536, NULL);
    assert_non_null(strstr(out.buf, "\"scalars\":[]"));
    assert_false(scalarfollow_drain_events(s)); /* nothing made: no wake-up */
    mkdir_rel("a");
    assert_true(scalarfollow_drain_events(s));
    strbuf_reset(&out);
    drain(s, &out, 65536, NULL);
    assert_int_equal(out.len, 0);
    mkdir_rel("a/tb");
    mkdir_rel("a/tb/r");
    append("a/tb/r/events.out.tfevents.1", "first", 1, 2);
    assert_true(scalarfollow_drain_events(s));
    drain(s, &out, 65536, NULL);
    assert_int_equal(count(out.buf, "\"tag\":\"first\""), 2);
    append("a/tb/r/events.out.tfevents.1", "first", 3, 1);
    assert_true(scalarfollow_drain_events(s));
    drain(s, &out, 65536, NULL);
    assert_int_equal(count(out.buf, "\"tag\":\"first\""), 3);
    scalarfollow_job_ended(s);
    drain(s, &out, 65536, NULL);
    assert_non_null(strstr(out.buf, "{\"end\":\"ended\""));
    stream_abandon(s);
    stream_unref(s);
    loop_free(lp);
    strbuf_free(&out);
    strbuf_free(&err);
}

/*
 * A training script that clears its log directory on a restart (rm -rf,
 * then makes it again): the follower lets go of the deleted directory,
 * waits for the path again and streams the new runs, without sending
 * again what the client already has.
 */
static void test_recreated_dir(void **state)
{
    (void)state;
    mkdir_rel("tb");
    mkdir_rel("tb/a");
    append("tb/a/events.out.tfevents.1", "before", 1, 2);
    struct loop *lp = loop_new();
    struct stream *s = open_follow(lp, 0, 0);
    struct strbuf out = STRBUF_INIT;
    drain(s, &out, 65536, NULL);
    assert_int_equal(count(out.buf, "\"tag\":\"before\""), 2);
    char *cmd = xasprintf("rm -rf '%s/tb'", root);
    assert_int_equal(system(cmd), 0);
    free(cmd);
    assert_true(scalarfollow_drain_events(s));
    strbuf_reset(&out);
    drain(s, &out, 65536, NULL);
    assert_null(strstr(out.buf, "{\"end\"")); /* gone is not the end: the job may make it again */
    mkdir_rel("tb");
    assert_true(scalarfollow_drain_events(s)); /* the path is watched again */
    drain(s, &out, 65536, NULL);
    mkdir_rel("tb/b");
    append("tb/b/events.out.tfevents.2", "after", 1, 3);
    scalarfollow_drain_events(s);
    drain(s, &out, 65536, NULL);
    assert_int_equal(count(out.buf, "\"tag\":\"after\""), 3);
    assert_int_equal(count(out.buf, "\"tag\":\"before\""), 0);
    append("tb/b/events.out.tfevents.2", "after", 4, 1);
    assert_true(scalarfollow_drain_events(s));
    drain(s, &out, 65536, NULL);
    assert_int_equal(count(out.buf, "\"tag\":\"after\""), 4);
    stream_abandon(s);
    stream_unref(s);
    loop_free(lp);
    strbuf_free(&out);
}

/* A planted symlink at the log path is refused at once; a bad cursor is the client's. */
static void test_refused(void **state)
{
    (void)state;
    mkdir_rel("outside");
    char *tb = at("tb"), *outside = at("outside");
    assert_int_equal(symlink(outside, tb), 0);
    struct loop *lp = loop_new();
    struct scalarfollow_start how = {"u", "/mnt/afs/tb", root, "tb", NULL, false, 0, 0, 0};
    struct strbuf err = STRBUF_INIT;
    enum scalarfollow_refusal why;
    assert_null(scalarfollow_open(lp, &how, &why, &err));
    assert_int_equal(why, SCALARFOLLOW_REFUSED);
    unlink(tb);
    mkdir_rel("tb");
    how.since = "not a cursor at all";
    strbuf_reset(&err);
    assert_null(scalarfollow_open(lp, &how, &why, &err));
    assert_int_equal(why, SCALARFOLLOW_BAD_CURSOR);
    strbuf_free(&err);
    free(tb);
    free(outside);
    loop_free(lp);
}

/* ---- the client's decoder ---- */

struct got {
    size_t pages, points;
};

static int on_page(void *ctx, struct scalar_page *p)
{
    struct got *g = ctx;
    g->pages++;
    g->points += p->count;
    return 0;
}

static void test_decoder(void **state)
{
    (void)state;
    const char *text = "{\"cursor\":\"a:1\",\"scalars\":[{\"run\":\".\",\"tag\":\"t\",\"step\":1,"
                       "\"value\":1}]}\n\n{\"cursor\":\"a:2\",\"scalars\":[]}\n"
                       "{\"end\":\"ended\",\"message\":\"done\"}\n";
    /* cut at every byte: the same pages */
    for (size_t cut = 1; cut < strlen(text); cut++) {
        struct scalar_stream ss;
        scalar_stream_init(&ss, 0);
        struct got g = {0, 0};
        struct api_error err;
        memset(&err, 0, sizeof err);
        assert_int_equal(scalar_stream_feed(&ss, text, cut, on_page, &g, &err), 0);
        assert_int_equal(scalar_stream_feed(&ss, text + cut, strlen(text) - cut, on_page, &g, &err),
                         0);
        assert_int_equal(g.pages, 2);
        assert_int_equal(g.points, 1);
        assert_string_equal(ss.end, "ended");
        assert_string_equal(ss.message, "done");
        /* nothing after the end */
        assert_int_equal(scalar_stream_feed(&ss, "{}\n", 3, on_page, &g, &err), -1);
        scalar_stream_free(&ss);
    }
}

static void test_decoder_refuses(void **state)
{
    (void)state;
    struct scalar_stream ss;
    struct got g = {0, 0};
    struct api_error err;
    memset(&err, 0, sizeof err);
    scalar_stream_init(&ss, 64);
    char line[100];
    memset(line, 'x', sizeof line);
    assert_int_equal(scalar_stream_feed(&ss, line, sizeof line, on_page, &g, &err), -1);
    assert_non_null(strstr(err.message, "over 64 bytes"));
    scalar_stream_free(&ss);
    scalar_stream_init(&ss, 0);
    assert_int_equal(scalar_stream_feed(&ss, "[1,2]\n", 6, on_page, &g, &err), -1);
    scalar_stream_free(&ss);
    scalar_stream_init(&ss, 0);
    assert_int_equal(
        scalar_stream_feed(&ss, "{\"scalars\":[{\"tag\":\"t\"}]}\n", 27, on_page, &g, &err), -1);
    assert_int_equal(g.pages, 0);
    scalar_stream_free(&ss);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_coalesced, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bounded_queue, setup, teardown),
        cmocka_unit_test_setup_teardown(test_new_runs_and_cap, setup, teardown),
        cmocka_unit_test_setup_teardown(test_symlink_swap, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_dir, setup, teardown),
        cmocka_unit_test_setup_teardown(test_recreated_dir, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refused, setup, teardown),
        cmocka_unit_test(test_decoder),
        cmocka_unit_test(test_decoder_refuses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
