/*
 * test_logs_pane: the job screen's log pane without a server — bytes fed
 * the way a log call's on_data hands them (cut anywhere), drawn into an
 * off-screen terminal and read back: lines appear only when whole, two
 * workers interleave with their name in front, a worker not followed is
 * not shown, a stream's end shows in the status and flushes its last
 * line, a worker running again is followed again from an empty ring, and
 * the search prompt finds a line.
 */
// clang-format off
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
// clang-format on

#include "tests/offscreen.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "tui/logs_pane.h"
#include "util/logring.h"
#include "util/strbuf.h"
#include "util/utf8.h"
#include "util/xalloc.h"
#include "widgets/logview.h"

#define WIN_H 8
#define WIN_W 60

static struct offscreen term;
static WINDOW *win;

static int setup_terminal(void **state)
{
    if (offscreen_open(&term) != 0)
        return -1;
    win = newwin(WIN_H, WIN_W, 0, 0);
    return win ? 0 : -1;
}

static int teardown_terminal(void **state)
{
    offscreen_close(&term, win);
    return 0;
}

/* Row y of the window, as UTF-8. */
static char *row(int y)
{
    char *text = offscreen_text(win, y, 0, WIN_W);
    assert_non_null(text);
    return text;
}

static void assert_row(int y, const char *want)
{
    char *got = row(y);
    assert_string_equal(got, want);
    free(got);
}

static void assert_row_has(int y, const char *want)
{
    char *got = row(y);
    if (!strstr(got, want))
        fail_msg("row %d \"%s\" lacks \"%s\"", y, got, want);
    free(got);
}

static void draw(struct logs_pane *p)
{
    werase(win);
    logs_pane_draw(p, win, 0, 0, WIN_H, WIN_W);
    assert_false(logs_pane_dirty(p));
}

/* Feeds s as its stream would: one piece. */
static void feed(struct logs_pane *p, const char *worker, const char *s)
{
    assert_int_equal(logs_pane_feed(p, worker, s, strlen(s)), 0);
}

static char *status_of(struct logs_pane *p)
{
    struct strbuf sb = STRBUF_INIT;
    logs_pane_status(p, &sb);
    return strbuf_detach(&sb, NULL);
}

static int news;
static void count_news(void *arg)
{
    news++;
}

/* Pieces cut mid-line show nothing until the newline; then whole lines, oldest first. */
static void test_pieces(void **state)
{
    struct logs_pane *p = logs_pane_new(NULL);
    logs_pane_set_notify(p, count_news, NULL);
    logs_pane_follow_worker(p, "worker-0");
    assert_string_equal(logs_pane_worker(p), "worker-0");
    assert_false(logs_pane_all(p));
    news = 0;
    feed(p, "worker-0", "epoch 1 lo");
    assert_int_equal(logring_count(logs_pane_ring(p)), 0);
    feed(p, "worker-0", "ss 0.52\nepoch 2");
    feed(p, "worker-0", " loss 0.41\n\x1b[31mepoch 3 loss 0.30\x1b[0m\n");
    assert_true(news > 0);
    draw(p);
    assert_row(0, "epoch 1 loss 0.52");
    assert_row(1, "epoch 2 loss 0.41");
    assert_row(2, "epoch 3 loss 0.30"); /* colours stripped */
    assert_row(3, "");
    assert_row_has(WIN_H - 1, "FOLLOW");
    char *st = status_of(p);
    assert_string_equal(st, "worker-0 · following");
    free(st);

    /* Another worker's bytes are not this pane's. */
    feed(p, "worker-1", "not shown\n");
    assert_int_equal(logring_count(logs_pane_ring(p)), 3);
    logs_pane_free(p);
}

/* Two workers at once: interleaved in arrival order, each line with its worker's name. */
static void test_two_sources_interleave(void **state)
{
    struct logs_pane *p = logs_pane_new(NULL);
    const char *names[] = {"worker-0", "worker-1"};
    logs_pane_follow_all(p, names, 2);
    assert_true(logs_pane_all(p));
    assert_int_equal(logs_pane_streams(p), 2);
    feed(p, "worker-0", "step 1\nst");
    feed(p, "worker-1", "step 1\n");
    feed(p, "worker-0", "ep 2\n");
    feed(p, "worker-1", "Traceback (most recent call last):\n");
    draw(p);
    assert_row(0, "worker-0 │ step 1");
    assert_row(1, "worker-1 │ step 1");
    assert_row(2, "worker-0 │ step 2");
    assert_row(3, "worker-1 │ Traceback (most recent call last):");
    char *st = status_of(p);
    assert_string_equal(st, "all workers (2) · following");
    free(st);

    /* A worker the store reports later is followed too. */
    struct worker_info w[3] = {{.name = "worker-0"}, {.name = "worker-1"}, {.name = "worker-2"}};
    struct worker_list wl = {w, 3};
    logs_pane_workers_changed(p, &wl);
    assert_int_equal(logs_pane_streams(p), 3);
    feed(p, "worker-2", "hello\n");
    draw(p);
    assert_row(4, "worker-2 │ hello");

    /* Back to one worker: only its lines, from a fresh ring, no prefix. */
    logs_pane_follow_worker(p, "worker-1");
    feed(p, "worker-1", "alone\n");
    feed(p, "worker-0", "elsewhere\n");
    draw(p);
    assert_row(0, "alone");
    assert_row(1, "");
    logs_pane_free(p);
}

/* A stream's end: its unfinished line shown, the status says why; f follows again. */
static void test_end_and_resume(void **state)
{
    struct logs_pane *p = logs_pane_new(NULL);
    logs_pane_follow_worker(p, "worker-0");
    struct worker_info w = {.name = "worker-0", .phase = WORKER_RUNNING, .restarts = 0};
    struct worker_list wl = {&w, 1};
    logs_pane_workers_changed(p, &wl);
    feed(p, "worker-0", "training\nlast words");
    logs_pane_end(p, "worker-0", "the engine went \x1b[2Jaway");
    assert_int_equal(logs_pane_ended(p), 1);
    draw(p);
    assert_row(0, "training");
    assert_row(1, "last words");
    char *st = status_of(p);
    assert_non_null(strstr(st, "ended: the engine went away"));
    assert_null(strchr(st, '\x1b'));
    free(st);

    /* The same worker, same phase and restarts: nothing to resume. */
    logs_pane_workers_changed(p, &wl);
    assert_int_equal(logs_pane_ended(p), 1);
    /* It restarted: followed again, from an empty ring (no line twice). */
    w.restarts = 1;
    logs_pane_workers_changed(p, &wl);
    assert_int_equal(logs_pane_ended(p), 0);
    assert_int_equal(logring_count(logs_pane_ring(p)), 0);
    feed(p, "worker-0", "training\n");
    draw(p);
    assert_row(0, "training");
    assert_row(1, "");

    /* Ended again, then the follow key asks again. */
    logs_pane_end(p, "worker-0", NULL);
    st = status_of(p);
    assert_non_null(strstr(st, "ended"));
    free(st);
    struct widget_key f = {.code = 'f'};
    assert_true(logs_pane_key(p, &f, "follow") & WIDGET_HANDLED);
    assert_int_equal(logs_pane_ended(p), 0);
    logs_pane_free(p);
}

/* Keys: the search prompt takes every key, Enter searches; follow pauses; e finds the error. */
static void test_keys(void **state)
{
    struct logs_pane *p = logs_pane_new(NULL);
    logs_pane_follow_worker(p, "worker-0");
    for (int i = 0; i < 40; i++) {
        char line[32];
        snprintf(line, sizeof line, i == 7 ? "line %d RuntimeError: boom\n" : "line %d ok\n", i);
        feed(p, "worker-0", line);
    }
    draw(p);
    assert_row_has(WIN_H - 2, "line 39 ok");

    struct widget_key e = {.code = 'e'};
    assert_true(logs_pane_key(p, &e, "first-error") & WIDGET_REDRAW);
    draw(p);
    assert_row_has(0, "line 7 RuntimeError");
    assert_row_has(WIN_H - 1, "PAUSED");

    struct widget_key slash = {.code = '/'};
    logs_pane_key(p, &slash, "search");
    assert_true(logs_pane_prompting(p));
    const char *typed = "line 2";
    for (const char *c = typed; *c; c++) {
        struct widget_key k = {.code = *c};
        /* 'n' would be "search-next" to the keymap: the prompt still types it. */
        logs_pane_key(p, &k, *c == 'n' ? "search-next" : NULL);
    }
    struct widget_key enter = {.code = '\r'};
    logs_pane_key(p, &enter, NULL);
    assert_false(logs_pane_prompting(p));
    draw(p);
    assert_row_has(0, "line 20 ok"); /* forward from the top line shown (line 7) */
    assert_row_has(WIN_H - 1, "/line 2");
    struct widget_key n = {.code = 'n'};
    logs_pane_key(p, &n, "search-next");
    draw(p);
    assert_row_has(0, "line 21 ok");

    struct widget_key esc = {.code = 27};
    logs_pane_key(p, &slash, "search");
    logs_pane_key(p, &esc, NULL);
    assert_false(logs_pane_prompting(p));

    struct widget_key f = {.code = 'f'};
    logs_pane_key(p, &f, "follow");
    assert_true(logview_following(logs_pane_view(p)));
    draw(p);
    assert_row_has(WIN_H - 2, "line 39 ok");
    struct widget_key w = {.code = 'w'};
    logs_pane_key(p, &w, "wrap");
    assert_true(logview_wrapping(logs_pane_view(p)));
    logs_pane_free(p);
}

/* The text of ring line seq with its worker, "worker-1:b1". */
static void assert_line(struct logs_pane *p, uint64_t seq, const char *worker, const char *text)
{
    struct logring_line l;
    assert_true(logring_get(logs_pane_ring(p), seq, &l));
    char got[128];
    snprintf(got, sizeof got, "%u:%s", l.source, l.text);
    char want[128];
    snprintf(want, sizeof want, "%s:%s", strcmp(worker, "worker-0") == 0 ? "0" : "1", text);
    assert_string_equal(got, want);
}

/*
 * Defect 6: a finished job's two workers, whose streams arrive one after
 * the other (worker-0's whole log first), come out in the order they wrote
 * by the times in their frames; a stream that has not said anything yet
 * holds the other's lines back; untimed streams keep arrival order.
 */
static void test_interleave_by_time(void **state)
{
    struct logs_pane *p = logs_pane_new(NULL);
    logs_pane_set_frames(p, true);
    const char *names[] = {"worker-0", "worker-1"};
    logs_pane_follow_all(p, names, 2);
    feed(p, "worker-0",
         "P 7 0\nT 1700000000000\nD 3\na1\nT 1700000000200\nD 3\na2\n"
         "T 1700000000400\nD 3\na3\nE\n");
    assert_int_equal(logring_count(logs_pane_ring(p)), 0); /* worker-1 may still be older */
    logs_pane_end(p, "worker-0", NULL);
    assert_int_equal(logring_count(logs_pane_ring(p)), 0);
    feed(p, "worker-1", "P 8 0\nT 1700000000100\nD 3\nb1\nT 1700000000300\nD 6\nb2\nb3");
    /* b3 is unfinished (no newline yet): a3 (400) waits for it; b3's time is 300. */
    uint64_t first = logring_first_seq(logs_pane_ring(p));
    assert_int_equal(logring_count(logs_pane_ring(p)), 4);
    assert_line(p, first, "worker-0", "a1");
    assert_line(p, first + 1, "worker-1", "b1");
    assert_line(p, first + 2, "worker-0", "a2");
    assert_line(p, first + 3, "worker-1", "b2");
    feed(p, "worker-1", "\nE\n");
    logs_pane_end(p, "worker-1", NULL);
    assert_int_equal(logring_count(logs_pane_ring(p)), 6);
    assert_line(p, first + 4, "worker-1", "b3");
    assert_line(p, first + 5, "worker-0", "a3");
    /* Live: a caught-up stream (C) does not hold the other back. */
    logs_pane_follow_all(p, names, 2);
    first = logring_last_seq(logs_pane_ring(p)) + 1;
    feed(p, "worker-1", "P 8 0\nC\n");
    feed(p, "worker-0", "P 7 0\nT 1700000000000\nD 3\nc1\n");
    assert_int_equal(logring_count(logs_pane_ring(p)), 1);
    assert_line(p, first, "worker-0", "c1");
    /* A broken stream says so and stops; the other goes on. */
    feed(p, "worker-1", "X what\n");
    assert_line(p, first + 1, "worker-1", "(the log stream could not be read: it stops here)");
    logs_pane_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pieces),
        cmocka_unit_test(test_two_sources_interleave),
        cmocka_unit_test(test_interleave_by_time),
        cmocka_unit_test(test_end_and_resume),
        cmocka_unit_test(test_keys),
    };
    return cmocka_run_group_tests(tests, setup_terminal, teardown_terminal);
}
