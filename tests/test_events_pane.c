/*
 * test_events_pane: a job's events as the job screen shows them, from
 * job_event structs built here, drawn into an off-screen terminal and read
 * back: oldest first and newest last, escape sequences in a server's
 * message removed, at most EVENTS_PANE_MAX kept (the newest), faults in
 * the warning role and failures in the error role with a mark, long
 * sentences wrapped under the message column, and a scrolled view that
 * stays put while events arrive.
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
#include <time.h>
#include <wchar.h>

#include "tui/events_pane.h"
#include "util/strbuf.h"
#include "util/utf8.h"
#include "util/xalloc.h"

#define WIN_H 8
#define WIN_W 80

static struct offscreen term;
static WINDOW *win;

static int setup_terminal(void **state)
{
    setenv("TZ", "UTC", 1); /* the clock column, the same on every machine */
    tzset();
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

static attr_t attr_at(int y, int x)
{
    return offscreen_attr(win, y, x);
}

static void assert_row_has(int y, const char *want)
{
    char *got = row(y);
    if (!strstr(got, want))
        fail_msg("row %d \"%s\" lacks \"%s\"", y, got, want);
    free(got);
}

/* Where needle starts in row y (ASCII before it), or -1. */
static int col_of(int y, const char *needle)
{
    char *r = row(y);
    const char *at = strstr(r, needle);
    int c = at ? (int)(at - r) : -1;
    free(r);
    return c;
}

struct events {
    struct job_event *ev;
    size_t n;
};

/* Appends an event with id, kind and message at 12:00:00 + id seconds on 2 January 2026. */
static void add(struct events *e, int64_t id, enum job_event_kind kind, const char *message)
{
    e->ev = xreallocarray(e->ev, e->n + 1, sizeof *e->ev);
    struct job_event *x = &e->ev[e->n++];
    memset(x, 0, sizeof *x);
    x->id = id;
    x->kind = kind;
    x->time = xasprintf("2026-01-02T12:%02d:%02dZ", (int)(id / 60 % 60), (int)(id % 60));
    x->message = message ? xstrdup(message) : NULL;
}

static void events_free(struct events *e)
{
    struct job_event_list l = {e->ev, e->n};
    job_event_list_free(&l);
    e->ev = NULL;
    e->n = 0;
}

static void draw(struct events_pane *p)
{
    werase(win);
    events_pane_draw(p, win, 0, 0, WIN_H, WIN_W);
    assert_false(events_pane_dirty(p));
}

/* Oldest first, newest last; the time, the kind and the message on each line. */
static void test_order(void **state)
{
    struct events e = {0};
    add(&e, 1, EVENT_CREATED, "job created");
    add(&e, 2, EVENT_STATE, NULL); /* no message: made from the state */
    e.ev[1].state = JOB_STATE_QUEUEING;
    add(&e, 3, EVENT_SCHEDULED, "placed on node-1");
    struct events_pane *p = events_pane_new();
    events_pane_set_events(p, e.ev, e.n);
    assert_int_equal(events_pane_count(p), 3);
    draw(p);
    assert_row_has(0, "01-02 12:00:01");
    assert_row_has(0, "created");
    assert_row_has(0, "job created");
    assert_row_has(1, "state");
    assert_row_has(1, "→ QUEUEING");
    assert_row_has(2, "scheduled");
    assert_row_has(2, "placed on node-1");

    /* A new event goes last. */
    add(&e, 4, EVENT_STARTED, "job started");
    events_pane_set_events(p, e.ev, e.n);
    assert_true(events_pane_dirty(p));
    draw(p);
    assert_row_has(3, "job started");
    events_pane_free(p);
    events_free(&e);
}

/* Escape sequences and controls in a server's message never reach the screen. */
static void test_sanitized(void **state)
{
    struct events e = {0};
    add(&e, 1, EVENT_FAULT,
        "worker-0 \x1b[2J\x1b]0;pwned\x07"
        "exited\r 137\x1b[31m now");
    struct events_pane *p = events_pane_new();
    events_pane_set_events(p, e.ev, e.n);
    const char *text = events_pane_text(p, 0);
    assert_null(strchr(text, '\x1b'));
    assert_null(strchr(text, '\a'));
    assert_null(strchr(text, '\r'));
    assert_null(strstr(text, "pwned"));
    assert_non_null(strstr(text, "worker-0 exited 137 now"));
    draw(p);
    assert_row_has(0, "worker-0 exited 137 now");
    char *r = row(0);
    assert_null(strstr(r, "[2J"));
    free(r);
    events_pane_free(p);
    events_free(&e);
}

/* More than EVENTS_PANE_MAX: the newest are kept, in order. */
static void test_bounded(void **state)
{
    struct events e = {0};
    for (int i = 1; i <= EVENTS_PANE_MAX + 500; i++) {
        char msg[32];
        snprintf(msg, sizeof msg, "event number %d", i);
        add(&e, i, EVENT_WORKER, msg);
    }
    struct events_pane *p = events_pane_new();
    events_pane_set_events(p, e.ev, e.n);
    assert_int_equal(events_pane_count(p), EVENTS_PANE_MAX);
    assert_non_null(strstr(events_pane_text(p, 0), "event number 501"));
    char want[32];
    snprintf(want, sizeof want, "event number %d", EVENTS_PANE_MAX + 500);
    assert_non_null(strstr(events_pane_text(p, EVENTS_PANE_MAX - 1), want));
    draw(p);
    assert_row_has(WIN_H - 1, want); /* following: the newest on the last row */
    events_pane_free(p);
    events_free(&e);
}

/* A fault restarting the job: warning, "!"; one failing it: error, "✗"; both by role. */
static void test_fault_roles(void **state)
{
    struct events e = {0};
    add(&e, 1, EVENT_FAULT,
        "worker-0 exited 201: rule 1 (201 → RESTART_POD) matched; restarting worker-0 (restarts "
        "1/2)");
    add(&e, 2, EVENT_FAULT,
        "worker-0 exited 137 (killed (SIGKILL/OOM)): no rules, default "
        "RESTART_JOB, but the restart limit is reached (2/2); job failed");
    add(&e, 3, EVENT_STARTED, "job started");
    struct widget_palette pal = *widget_palette_mono();
    pal.warning = A_UNDERLINE;
    pal.error = A_ITALIC;
    pal.normal = A_NORMAL;
    struct events_pane *p = events_pane_new();
    events_pane_set_style(p, &pal, true);
    events_pane_set_wrap(p, false);
    events_pane_set_events(p, e.ev, e.n);
    assert_int_equal(events_pane_severity_of(p, 0), EVENTS_PANE_WARNING);
    assert_int_equal(events_pane_severity_of(p, 1), EVENTS_PANE_ERROR);
    assert_int_equal(events_pane_severity_of(p, 2), EVENTS_PANE_INFO);
    draw(p);
    assert_row_has(0, "! fault");
    assert_row_has(1, "✗ fault");
    int c0 = col_of(0, "worker-0 exited 201");
    assert_true(c0 > 0);
    assert_true(attr_at(0, c0) & A_UNDERLINE);
    assert_false(attr_at(0, c0) & A_ITALIC);
    assert_true(attr_at(1, c0) & A_ITALIC);
    assert_false(attr_at(2, c0) & (A_ITALIC | A_UNDERLINE));
    /* Cut, not wrapped: the long line ends in "…" at the edge. */
    char *r = row(1);
    assert_non_null(strstr(r, "…"));
    free(r);
    events_pane_free(p);
    events_free(&e);
}

/* Wrapped: the rest of a long sentence continues under the message column. */
static void test_wrap(void **state)
{
    struct events e = {0};
    add(&e, 1, EVENT_FAULT,
        "worker-0 exited 201: rule 1 (201 → RESTART_POD) matched; restarting worker-0 (restarts "
        "1/2)");
    struct events_pane *p = events_pane_new();
    events_pane_set_events(p, e.ev, e.n);
    assert_true(events_pane_wrapping(p));
    draw(p);
    int c = col_of(0, "worker-0");
    assert_row_has(0, "worker-0 exited 201");
    assert_row_has(1, "(restarts 1/2)");
    char *r = row(1);
    for (int i = 0; i < c; i++)
        assert_int_equal(r[i], ' '); /* under the message, not under the time */
    free(r);
    events_pane_free(p);
    events_free(&e);
}

/* Scrolled up, the view keeps its top while events arrive; End follows again. */
static void test_scroll_stays(void **state)
{
    struct events e = {0};
    for (int i = 1; i <= 20; i++) {
        char msg[32];
        snprintf(msg, sizeof msg, "event %d", i);
        add(&e, i, EVENT_WORKER, msg);
    }
    struct events_pane *p = events_pane_new();
    events_pane_set_events(p, e.ev, e.n);
    draw(p);
    assert_row_has(0, "event 13");
    assert_row_has(WIN_H - 1, "event 20");

    struct widget_key up = {.code = KEY_UP, .is_function = true};
    assert_int_equal(events_pane_key(p, &up), WIDGET_HANDLED | WIDGET_REDRAW);
    assert_false(events_pane_following(p));
    draw(p);
    assert_row_has(0, "event 12");

    add(&e, 21, EVENT_WORKER, "event 21");
    events_pane_set_events(p, e.ev, e.n);
    draw(p);
    assert_row_has(0, "event 12");

    struct widget_key g = {.code = 'g'};
    events_pane_key(p, &g);
    draw(p);
    assert_int_equal(col_of(0, "event 1"), col_of(1, "event 2")); /* event 1 on top */
    assert_true(col_of(0, "event 1") > 0);
    struct widget_key home = {.code = KEY_HOME, .is_function = true};
    assert_int_equal(events_pane_key(p, &home), WIDGET_HANDLED); /* already there */

    struct widget_key end = {.code = 'G'};
    events_pane_key(p, &end);
    assert_true(events_pane_following(p));
    draw(p);
    assert_row_has(WIN_H - 1, "event 21");
    struct widget_key x = {.code = 'x'};
    assert_int_equal(events_pane_key(p, &x), WIDGET_IGNORED);
    events_pane_free(p);
    events_free(&e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_order),   cmocka_unit_test(test_sanitized),
        cmocka_unit_test(test_bounded), cmocka_unit_test(test_fault_roles),
        cmocka_unit_test(test_wrap),    cmocka_unit_test(test_scroll_stays),
    };
    return cmocka_run_group_tests(tests, setup_terminal, teardown_terminal);
}
