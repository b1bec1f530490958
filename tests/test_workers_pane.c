/*
 * test_workers_pane: the job screen's workers table over worker_info rows
 * built here, drawn into an off-screen terminal and read back: the exit
 * cell says what a code means (137, 139, the server's own reason), codes
 * other than 0 are in the error role, server text is sanitized, and 1,000
 * workers draw a screenful, scroll to the end and redraw nothing when
 * nothing changed.
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

#include "tui/workers_pane.h"
#include "util/strbuf.h"
#include "util/utf8.h"
#include "util/xalloc.h"
#include "widgets/table.h"

#define WIN_H 12
#define WIN_W 100

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

static attr_t attr_at(int y, int x)
{
    return offscreen_attr(win, y, x);
}

/* The window row showing needle (ASCII rows only), or -1; *col gets its column. */
static int find_row(const char *needle, int *col)
{
    for (int y = 0; y < WIN_H; y++) {
        char *r = row(y);
        const char *at = strstr(r, needle);
        if (at && col)
            *col = (int)(at - r);
        free(r);
        if (at)
            return y;
    }
    return -1;
}

static void worker(struct worker_info *w, const char *name, enum worker_phase phase, int exit_code)
{
    memset(w, 0, sizeof *w);
    w->name = xstrdup(name);
    w->role = xstrdup("worker");
    w->node_name = xstrdup("node-1");
    w->phase = phase;
    if (exit_code >= 0) {
        w->has_exit_code = true;
        w->exit_code = exit_code;
    }
    w->devices = xstrdup("0,1");
    w->create_time = xstrdup("2026-01-01T00:00:00Z");
}

static void draw(struct workers_pane *p)
{
    werase(win);
    workers_pane_invalidate(p);
    workers_pane_draw(p, win, 0, 0, WIN_H, WIN_W, true);
}

/* The exit cell names the signal, or the server's reason when it sent one. */
static void test_exit_meanings(void **state)
{
    struct worker_list wl = {xcalloc(5, sizeof(struct worker_info)), 5};
    worker(&wl.workers[0], "master-0", WORKER_FAILED, 137);
    worker(&wl.workers[1], "worker-0", WORKER_FAILED, 139);
    worker(&wl.workers[2], "worker-1", WORKER_FAILED, 1);
    worker(&wl.workers[3], "worker-2", WORKER_SUCCEEDED, 0);
    worker(&wl.workers[4], "worker-3", WORKER_FAILED, 137);
    wl.workers[4].exit_reason = xstrdup("OOMKilled");

    struct workers_pane *p = workers_pane_new();
    workers_pane_set_workers(p, &wl, 0);
    draw(p);
    char *header = row(0);
    assert_non_null(strstr(header, "NAME"));
    assert_non_null(strstr(header, "LAST STATE"));
    free(header);
    assert_true(find_row("137 killed (SIGKILL/OOM)", NULL) >= 0);
    assert_true(find_row("139 segfault (SIGSEGV)", NULL) >= 0);
    assert_true(find_row("1 general error", NULL) >= 0);
    assert_true(find_row("137 OOMKilled", NULL) >= 0);

    char buf[128];
    workers_pane_exit_text(&wl.workers[3], buf, sizeof buf);
    assert_string_equal(buf, "0");
    struct worker_info running = {.name = "worker-9"};
    workers_pane_exit_text(&running, buf, sizeof buf);
    assert_string_equal(buf, "-");
    workers_pane_free(p);
    worker_list_free(&wl);
}

/*
 * A worker running again after a failure keeps its last state beside its
 * phase: the exit, the action and rule that decided, and how long ago
 * (issue 22: the pane showed "Running 0 -" and the exit 1 was gone).
 */
static void test_last_state(void **state)
{
    struct worker_list wl = {xcalloc(2, sizeof(struct worker_info)), 2};
    worker(&wl.workers[0], "master-0", WORKER_RUNNING, -1);
    struct worker_last_state *ls = &wl.workers[0].last_state;
    ls->present = ls->has_exit_code = true;
    ls->exit_code = 1;
    ls->action = xstrdup("RESTART_JOB");
    ls->finish_time = xstrdup("2026-01-01T00:00:20Z");
    worker(&wl.workers[1], "worker-0", WORKER_RUNNING, -1);
    ls = &wl.workers[1].last_state;
    ls->present = ls->has_exit_code = ls->has_rule = true;
    ls->exit_code = 201;
    ls->rule = 1;
    ls->action = xstrdup("RESTART_POD");
    ls->finish_time = xstrdup("2026-01-01T00:00:00Z");

    struct workers_pane *p = workers_pane_new();
    int64_t now = INT64_C(1767225600000) + 60000; /* 2026-01-01T00:01:00Z */
    workers_pane_set_workers(p, &wl, now);
    draw(p);
    int col = 0;
    assert_true(find_row("exit 1 (RESTART_JOB, default rule)", &col) >= 0);
    /* the cell's age is bare: "ago" is the title's (at 80 columns it was cut to "a…") */
    assert_true(find_row("exit 201 (RESTART_POD, rule 1) 1m ", NULL) >= 0);
    assert_true(find_row("exit 201 (RESTART_POD, rule 1) 1m ago", NULL) < 0);
    char buf[128];
    workers_pane_last_text(&wl.workers[0], now, buf, sizeof buf);
    assert_string_equal(buf, "exit 1 (RESTART_JOB, default rule) 40s ago");
    int y = find_row("master-0", NULL);
    assert_int_equal(attr_at(y, col) & widget_palette_mono()->warning,
                     widget_palette_mono()->warning);
    workers_pane_free(p);
    worker_list_free(&wl);
}

/* Exit codes other than 0 are in the error role; 0 is not. */
static void test_exit_in_error_role(void **state)
{
    struct worker_list wl = {xcalloc(2, sizeof(struct worker_info)), 2};
    worker(&wl.workers[0], "worker-0", WORKER_FAILED, 137);
    worker(&wl.workers[1], "worker-1", WORKER_SUCCEEDED, 0);
    struct widget_palette pal = *widget_palette_mono();
    pal.error = A_UNDERLINE; /* a role nothing else in the mono palette uses */
    pal.selected = A_NORMAL; /* the cursor row must not hide the cell's own role */

    struct workers_pane *p = workers_pane_new();
    workers_pane_set_style(p, &pal, true);
    workers_pane_set_workers(p, &wl, 0);
    draw(p);
    int col = -1;
    int y = find_row("137 killed", &col);
    assert_true(y > 0);
    assert_true(attr_at(y, col) & A_UNDERLINE);
    int name_col = -1;
    assert_int_equal(find_row("worker-0", &name_col), y);
    assert_false(attr_at(y, name_col) & A_UNDERLINE);

    /* Row of worker-1: its exit cell "0" is in the same column, not underlined. */
    int y1 = find_row("worker-1", NULL);
    assert_true(y1 > 0);
    assert_false(attr_at(y1, col) & A_UNDERLINE);
    workers_pane_free(p);
    worker_list_free(&wl);
}

/* Names and reasons from the server lose their escape sequences. */
static void test_sanitized(void **state)
{
    struct worker_list wl = {xcalloc(1, sizeof(struct worker_info)), 1};
    worker(&wl.workers[0], "worker-\x1b[31mred", WORKER_FAILED, 2);
    wl.workers[0].exit_reason = xstrdup("bad\x1b]0;title\x07 thing");
    struct workers_pane *p = workers_pane_new();
    workers_pane_set_workers(p, &wl, 0);
    draw(p);
    assert_true(find_row("worker-red", NULL) > 0);
    assert_true(find_row("2 bad thing", NULL) > 0);
    for (int y = 0; y < WIN_H; y++) {
        char *r = row(y);
        for (const char *c = r; *c; c++)
            assert_true((unsigned char)*c >= 0x20);
        free(r);
    }
    workers_pane_free(p);
    worker_list_free(&wl);
}

/* 1,000 workers: a screenful drawn, End reaches the last, an unchanged frame writes nothing. */
static void test_thousand_workers(void **state)
{
    enum { N = 1000 };
    struct worker_list wl = {xcalloc(N, sizeof(struct worker_info)), N};
    for (int i = 0; i < N; i++) {
        char name[32];
        snprintf(name, sizeof name, "worker-%d", i);
        worker(&wl.workers[i], name, WORKER_RUNNING, -1);
    }
    struct workers_pane *p = workers_pane_new();
    workers_pane_set_workers(p, &wl, 0);
    draw(p);
    assert_true(find_row("worker-0 ", NULL) == 1);
    assert_true(find_row("worker-10 ", NULL) == WIN_H - 1);
    assert_int_equal(table_drawn_lines(workers_pane_table(p)), WIN_H);

    workers_pane_draw(p, win, 0, 0, WIN_H, WIN_W, true);
    assert_int_equal(table_drawn_lines(workers_pane_table(p)), 0);

    struct widget_key end = {.code = KEY_END, .is_function = true};
    assert_true(workers_pane_key(p, &end) & WIDGET_REDRAW);
    workers_pane_draw(p, win, 0, 0, WIN_H, WIN_W, true);
    assert_string_equal(workers_pane_selected(p)->name, "worker-999");
    assert_int_equal(find_row("worker-999", NULL), WIN_H - 1);

    struct widget_key pgup = {.code = KEY_PPAGE, .is_function = true};
    assert_true(workers_pane_key(p, &pgup) & WIDGET_REDRAW);
    workers_pane_draw(p, win, 0, 0, WIN_H, WIN_W, true);
    assert_string_equal(workers_pane_selected(p)->name, "worker-988");

    /* The cursor stays on its worker when the list is set again. */
    workers_pane_set_workers(p, &wl, 1000);
    assert_string_equal(workers_pane_selected(p)->name, "worker-988");
    assert_true(workers_pane_select(p, "worker-5"));
    assert_string_equal(workers_pane_selected(p)->name, "worker-5");
    assert_false(workers_pane_select(p, "worker-1000"));
    workers_pane_free(p);
    worker_list_free(&wl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exit_meanings),
        cmocka_unit_test(test_exit_in_error_role),
        cmocka_unit_test(test_last_state),
        cmocka_unit_test(test_sanitized),
        cmocka_unit_test(test_thousand_workers),
    };
    return cmocka_run_group_tests(tests, setup_terminal, teardown_terminal);
}
