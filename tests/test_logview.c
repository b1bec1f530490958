/*
 * test_logview: the live log view widget over a logring, drawn into an
 * off-screen terminal (newterm on /dev/null under C.UTF-8) and read back
 * cell by cell: following the end, pausing with the "new lines" count while
 * lines keep arriving, the top line dropped from the ring, scroll keys,
 * wrap of CJK lines by cells, tabs, sideways scroll, search with its
 * highlight and n/N, the first error line, worker prefixes and the filter,
 * the dirty flag logview_notify sets, and the result bits.
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
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "util/logring.h"
#include "util/strbuf.h"
#include "util/utf8.h"
#include "widgets/logview.h"

/* Where the view is drawn in the test window: not at 0,0, so offsets count. */
#define ROW 1
#define COL 2

#define MOVED (WIDGET_HANDLED | WIDGET_REDRAW)

static struct offscreen term;
static WINDOW *win;

/* One off-screen terminal for every test: UTF-8 locale first, for wide characters. */
static int setup_terminal(void **state)
{
    if (offscreen_open(&term) != 0)
        return -1;
    win = newwin(14, 60, 0, 0);
    return win ? 0 : -1;
}

static int teardown_terminal(void **state)
{
    offscreen_close(&term, win);
    return 0;
}

static unsigned send(struct logview *v, int code, bool is_function)
{
    struct widget *wd = logview_widget(v);
    struct widget_key k = {.code = code, .is_function = is_function};
    return wd->ops->key(wd, &k);
}

static unsigned key(struct logview *v, int code)
{
    return send(v, code, false);
}

static unsigned fkey(struct logview *v, int code)
{
    return send(v, code, true);
}

/* Clears the window and draws the view w cells wide at (ROW, COL). */
static void draw(struct logview *v, int w)
{
    struct widget *wd = logview_widget(v);
    werase(win);
    wd->ops->draw(wd, win, ROW, COL, w, false);
    assert_false(wd->dirty);
}

/* Reads cell (r, c) of the view: its characters (NUL-terminated) and attributes. */
static void cell(int r, int c, wchar_t wch[CCHARW_MAX + 1], attr_t *attrs)
{
    cchar_t cc;
    short pair;
    attr_t a;
    memset(wch, 0, (CCHARW_MAX + 1) * sizeof *wch);
    assert_int_equal(mvwin_wch(win, ROW + r, COL + c, &cc), OK);
    assert_int_equal(getcchar(&cc, wch, attrs ? attrs : &a, &pair, NULL), OK);
}

/*
 * Row r of the view, w cells, as UTF-8 without trailing blanks. A two-cell
 * character is read once; the cell after it must be its continuation.
 */
static char *row(int r, int w)
{
    struct strbuf sb = STRBUF_INIT;
    for (int c = 0; c < w; c++) {
        wchar_t wch[CCHARW_MAX + 1];
        char enc[4];
        cell(r, c, wch, NULL);
        for (size_t i = 0; wch[i]; i++)
            strbuf_add(&sb, enc, utf8_encode((uint32_t)wch[i], enc));
        if (utf8_cpwidth((uint32_t)wch[0]) == 2) {
            wchar_t next[CCHARW_MAX + 1];
            assert_true(c + 1 < w);
            cell(r, c + 1, next, NULL);
            assert_int_equal(next[0], wch[0]);
            c++;
        }
    }
    while (sb.len > 0 && sb.buf[sb.len - 1] == ' ')
        strbuf_truncate(&sb, sb.len - 1);
    return strbuf_detach(&sb, NULL);
}

static void assert_row(int r, int w, const char *want)
{
    char *got = row(r, w);
    assert_string_equal(got, want);
    free(got);
}

/* The status row (the view's last) contains want. */
static void assert_status_has(int rows, int w, const char *want, bool has)
{
    char *got = row(rows - 1, w);
    if (has && !strstr(got, want))
        fail_msg("status \"%s\" lacks \"%s\"", got, want);
    if (!has && strstr(got, want))
        fail_msg("status \"%s\" has \"%s\"", got, want);
    free(got);
}

/* Appends "line N" lines numbered from..to to source. */
static void add_lines(struct logring *r, uint32_t source, int from, int to)
{
    char buf[32];
    for (int i = from; i <= to; i++) {
        int n = snprintf(buf, sizeof buf, "line %d\n", i);
        logring_append(r, source, buf, (size_t)n);
    }
}

static void put(struct logring *r, uint32_t source, const char *s)
{
    logring_append(r, source, s, strlen(s));
}

static void test_follow_shows_last_lines(void **state)
{
    struct logring *r = logring_new(NULL);
    struct logview *v = logview_new(r, 5); /* 4 text rows and the status row */
    struct widget *wd = logview_widget(v);

    assert_true(wd->dirty);
    draw(v, 30);
    assert_row(0, 30, "");
    assert_status_has(5, 30, "FOLLOW", true);

    /* Fewer lines than rows: from the top. */
    add_lines(r, 0, 1, 2);
    logview_notify(v);
    assert_true(wd->dirty);
    draw(v, 30);
    assert_row(0, 30, "line 1");
    assert_row(1, 30, "line 2");
    assert_row(2, 30, "");

    add_lines(r, 0, 3, 10);
    logview_notify(v);
    draw(v, 30);
    assert_row(0, 30, "line 7");
    assert_row(3, 30, "line 10");
    assert_int_equal(logview_top_seq(v), 7);
    assert_true(logview_following(v));

    /* A notify with nothing new leaves the view clean. */
    logview_notify(v);
    assert_false(wd->dirty);
    /*
     * Attack (issue 10 #20): the follow view froze on an unfinished line for
     * 17 minutes. It shows it as it stands, on the last row, and completes
     * it when the rest arrives.
     */
    put(r, 0, "half a li");
    logview_notify(v);
    assert_true(wd->dirty);
    draw(v, 30);
    assert_row(0, 30, "line 8");
    assert_row(2, 30, "line 10");
    assert_row(3, 30, "half a li");
    logview_notify(v); /* nothing more: nothing to redraw */
    assert_false(wd->dirty);
    put(r, 0, "ne\n");
    logview_notify(v);
    assert_true(wd->dirty);
    draw(v, 30);
    assert_row(2, 30, "line 10");
    assert_row(3, 30, "half a line");
    logview_free(v);
    logring_free(r);
}

/* The unfinished line: a progress bar shows its latest state; paused, it is not shown. */
static void test_partial_line(void **state)
{
    struct logring *r = logring_new(NULL);
    struct logview *v = logview_new(r, 4);
    struct widget *wd = logview_widget(v);
    add_lines(r, 0, 1, 5);
    put(r, 0, "epoch 1  10%\repoch 1  55%\x1b[31m");
    logview_notify(v);
    draw(v, 30);
    assert_row(1, 30, "line 5");
    assert_row(2, 30, "epoch 1  55%");
    /* A UTF-8 character cut between two reads waits for its other bytes. */
    put(r, 0, "\r\xe4\xbd");
    logview_notify(v);
    assert_true(wd->dirty);
    draw(v, 30);
    assert_row(2, 30, "line 5"); /* nothing complete to show yet: the partial is empty */
    put(r, 0, "\xa0 done");
    logview_notify(v);
    draw(v, 30);
    assert_row(2, 30, "\xe4\xbd\xa0 done");
    /* Longer than the view: its end is what is shown. */
    put(r, 0, " 0123456789012345678901234567890123456789END");
    logview_notify(v);
    draw(v, 20);
    char *last = row(2, 20);
    assert_non_null(strstr(last, "END"));
    free(last);
    /* Paused, only whole lines are shown. */
    logview_set_follow(v, false);
    draw(v, 30);
    assert_row(2, 30, "line 5");
    logview_free(v);
    logring_free(r);
}

static void test_paused_keeps_position(void **state)
{
    struct logring *r = logring_new(NULL);
    struct logview *v = logview_new(r, 5);
    struct widget *wd = logview_widget(v);

    add_lines(r, 0, 1, 10);
    draw(v, 40);
    assert_int_equal(key(v, ' '), MOVED);
    assert_false(logview_following(v));
    draw(v, 40);
    assert_row(0, 40, "line 7");
    assert_status_has(5, 40, "PAUSED", true);
    assert_status_has(5, 40, "new line", false);

    /* Lines arrive: the text stays, the count shows. */
    add_lines(r, 0, 11, 15);
    logview_notify(v);
    assert_true(wd->dirty);
    assert_int_equal(logview_new_lines(v), 5);
    draw(v, 40);
    assert_row(0, 40, "line 7");
    assert_row(3, 40, "line 10");
    assert_status_has(5, 40, "PAUSED  5 new lines", true);
    /* The count is in the warning role (underline in the mono palette). */
    attr_t a;
    wchar_t wch[CCHARW_MAX + 1];
    cell(4, 8, wch, &a);
    assert_int_equal(wch[0], '5');
    assert_true(a & A_UNDERLINE);
    logview_notify(v);
    assert_false(wd->dirty);
    add_lines(r, 0, 16, 16);
    logview_notify(v);
    draw(v, 40);
    assert_status_has(5, 40, "6 new lines", true);

    /* Moving keeps counting; Down reaches the lines that came. */
    assert_int_equal(fkey(v, KEY_UP), MOVED);
    draw(v, 40);
    assert_row(0, 40, "line 6");
    assert_int_equal(fkey(v, KEY_NPAGE), MOVED);
    draw(v, 40);
    assert_row(0, 40, "line 10");
    assert_int_equal(fkey(v, KEY_NPAGE), MOVED);
    draw(v, 40);
    assert_row(0, 40, "line 13"); /* the end: line 16 on the last text row */
    assert_row(3, 40, "line 16");
    assert_int_equal(fkey(v, KEY_DOWN), WIDGET_HANDLED);
    assert_false(logview_following(v));

    /* f follows again: the count goes, new lines show. */
    assert_int_equal(key(v, 'f'), MOVED);
    add_lines(r, 0, 17, 17);
    logview_notify(v);
    draw(v, 40);
    assert_row(3, 40, "line 17");
    assert_int_equal(logview_new_lines(v), 0);
    assert_status_has(5, 40, "FOLLOW", true);
    assert_status_has(5, 40, "new line", false);

    /* Up while following pauses one row above the end; p and F toggle too. */
    assert_int_equal(fkey(v, KEY_UP), MOVED);
    assert_false(logview_following(v));
    draw(v, 40);
    assert_row(0, 40, "line 13");
    assert_int_equal(key(v, 'F'), MOVED);
    assert_true(logview_following(v));
    assert_int_equal(key(v, 'p'), MOVED);
    assert_false(logview_following(v));
    logview_free(v);
    logring_free(r);
}

static void test_paused_top_dropped(void **state)
{
    struct logring_config cfg = {.max_lines = 16};
    struct logring *r = logring_new(&cfg);
    struct logview *v = logview_new(r, 4);
    struct widget *wd = logview_widget(v);

    add_lines(r, 0, 1, 10);
    draw(v, 20);
    assert_int_equal(key(v, 'g'), MOVED);
    draw(v, 20);
    assert_row(0, 20, "line 1");
    assert_int_equal(logview_top_seq(v), 1);

    add_lines(r, 0, 11, 20); /* lines 1..4 are dropped */
    logview_notify(v);
    assert_true(wd->dirty);
    draw(v, 20);
    assert_row(0, 20, "line 5");
    assert_int_equal(logview_top_seq(v), 5);
    logview_free(v);
    logring_free(r);
}

static void test_scroll_keys(void **state)
{
    struct logring *r = logring_new(NULL);
    struct logview *v = logview_new(r, 6); /* 5 text rows */

    add_lines(r, 0, 1, 30);
    draw(v, 20);
    assert_row(0, 20, "line 26");
    /* Nothing below the end while following. */
    assert_int_equal(fkey(v, KEY_DOWN), WIDGET_HANDLED);
    assert_int_equal(fkey(v, KEY_NPAGE), WIDGET_HANDLED);
    assert_int_equal(key(v, 'G'), WIDGET_HANDLED);

    assert_int_equal(fkey(v, KEY_HOME), MOVED);
    draw(v, 20);
    assert_row(0, 20, "line 1");
    assert_int_equal(key(v, 'g'), WIDGET_HANDLED);
    assert_int_equal(fkey(v, KEY_UP), WIDGET_HANDLED);
    assert_int_equal(key(v, 'k'), WIDGET_HANDLED);
    assert_int_equal(key(v, 'j'), MOVED);
    draw(v, 20);
    assert_row(0, 20, "line 2");
    assert_int_equal(key(v, 6), MOVED); /* Ctrl-F: a page of 5 */
    draw(v, 20);
    assert_row(0, 20, "line 7");
    assert_int_equal(key(v, 2), MOVED); /* Ctrl-B */
    draw(v, 20);
    assert_row(0, 20, "line 2");
    assert_int_equal(fkey(v, KEY_PPAGE), MOVED);
    draw(v, 20);
    assert_row(0, 20, "line 1");
    assert_int_equal(fkey(v, KEY_END), MOVED);
    assert_true(logview_following(v));
    draw(v, 20);
    assert_row(4, 20, "line 30");
    logview_free(v);
    logring_free(r);
}

static void test_wrap_cjk(void **state)
{
    struct logring *r = logring_new(NULL);
    struct logview *v = logview_new(r, 5);

    put(r, 0, "ab基线cd基e\n");
    put(r, 0, "next\n");
    /* Cut: 线 would cross the right edge, so its cells stay blank. */
    draw(v, 5);
    assert_row(0, 5, "ab基");
    assert_row(1, 5, "next");

    assert_int_equal(key(v, 'w'), MOVED);
    assert_true(logview_wrapping(v));
    draw(v, 5);
    /* 5 cells: 线 does not fit after "ab基" and moves whole to the next row. */
    assert_row(0, 5, "ab基");
    assert_row(1, 5, "线cd");
    assert_row(2, 5, "基e");
    assert_row(3, 5, "next");
    assert_status_has(5, 5, "wrap", false); /* no room for the flag */

    /* 7 cells: rows filled to the edge. */
    draw(v, 7);
    assert_row(0, 7, "ab基线c");
    assert_row(1, 7, "d基e");
    assert_row(2, 7, "next");
    assert_row(3, 7, "");

    /* Scrolling moves by rows of a wrapped line; the end is the last row. */
    put(r, 0, "基基基基基基基基\n"); /* 16 cells: 3 rows at 7 cells (6 + 6 + 4) */
    logview_notify(v);
    draw(v, 7);
    assert_row(0, 7, "next");
    assert_row(1, 7, "基基基");
    assert_row(3, 7, "基基");
    assert_int_equal(fkey(v, KEY_UP), MOVED);
    draw(v, 7);
    assert_row(0, 7, "d基e");
    assert_int_equal(fkey(v, KEY_UP), MOVED);
    draw(v, 7);
    assert_row(0, 7, "ab基线c");
    assert_row(1, 7, "d基e");
    assert_int_equal(fkey(v, KEY_UP), WIDGET_HANDLED);
    assert_int_equal(fkey(v, KEY_DOWN), MOVED);
    draw(v, 7);
    assert_row(0, 7, "d基e");

    /* A one-cell-wide view still advances past a two-cell character. */
    logview_set_rows(v, 12);
    logview_set_follow(v, true);
    draw(v, 1); /* 11 text rows: "next" from its 'e', then 基 alone on rows it cannot fill */
    assert_row(0, 1, "e");
    assert_row(3, 1, "");
    assert_row(10, 1, "");
    logview_free(v);
    logring_free(r);
}

static void test_tabs_and_sideways(void **state)
{
    struct logring *r = logring_new(NULL);
    struct logview *v = logview_new(r, 3);

    put(r, 0, "a\tb\t\tc\n");
    put(r, 0, "0123456789abcdefghijklmnopqrstuvwxyz\n");
    draw(v, 30);
    assert_row(0, 30, "a       b               c");
    assert_row(1, 30, "0123456789abcdefghijklmnopqrst");

    /* Right scrolls 8 cells, at most to the widest line's end. */
    assert_int_equal(fkey(v, KEY_RIGHT), MOVED);
    draw(v, 30);
    assert_row(1, 30, "6789abcdefghijklmnopqrstuvwxyz"); /* 36 - 30 = 6 < 8 */
    assert_int_equal(fkey(v, KEY_RIGHT), WIDGET_HANDLED);
    assert_int_equal(fkey(v, KEY_LEFT), MOVED);
    assert_int_equal(fkey(v, KEY_LEFT), WIDGET_HANDLED);
    draw(v, 30);
    assert_row(1, 30, "0123456789abcdefghijklmnopqrst");

    key(v, 'w');
    assert_int_equal(fkey(v, KEY_RIGHT), WIDGET_HANDLED);
    logview_free(v);
    logring_free(r);
}

/* The cells of row r from c0, n long, all lit (selected role) or none. */
static void assert_lit(int r, int c0, int n, bool lit)
{
    for (int c = c0; c < c0 + n; c++) {
        wchar_t wch[CCHARW_MAX + 1];
        attr_t a;
        cell(r, c, wch, &a);
        if (lit != ((a & A_REVERSE) != 0))
            fail_msg("row %d cell %d: expected %s", r, c, lit ? "lit" : "plain");
    }
}

static void test_search_highlight(void **state)
{
    struct logring *r = logring_new(NULL);
    struct logview *v = logview_new(r, 4); /* 3 text rows */

    put(r, 0, "epoch 1 Loss 2.0 loss\n"); /* 1 */
    add_lines(r, 0, 2, 9);                /* 2..9 */
    put(r, 0, "epoch 2 loss 1.5\n");      /* 10 */
    add_lines(r, 0, 11, 20);              /* 11..20 */
    draw(v, 30);

    /* From the top line shown (18) forward: past the end, wrapped to 1. */
    assert_int_equal(logview_search(v, "LOSS", true), LOGVIEW_SEARCH_WRAPPED);
    assert_false(logview_following(v));
    draw(v, 30);
    assert_row(0, 30, "epoch 1 Loss 2.0 loss");
    assert_int_equal(logview_top_seq(v), 1);
    assert_lit(0, 0, 8, false);
    assert_lit(0, 8, 4, true);
    assert_lit(0, 12, 5, false);
    assert_lit(0, 17, 4, true);
    assert_status_has(4, 30, "/LOSS (wrapped)", true);

    assert_int_equal(key(v, 'n'), MOVED);
    draw(v, 30);
    assert_row(0, 30, "epoch 2 loss 1.5");
    assert_lit(0, 8, 4, true);
    assert_row(1, 30, "line 11");
    assert_lit(1, 0, 7, false);
    assert_status_has(4, 30, "(wrapped)", false);
    assert_int_equal(key(v, 'N'), MOVED);
    draw(v, 30);
    assert_int_equal(logview_top_seq(v), 1);

    /* Backward from 1 wraps to 10. */
    assert_int_equal(logview_search_next(v, false), LOGVIEW_SEARCH_WRAPPED);
    draw(v, 30);
    assert_int_equal(logview_top_seq(v), 10);

    /* Not found: the view stays, the status says so in the error role. */
    assert_int_equal(logview_search(v, "nan", true), LOGVIEW_SEARCH_NOT_FOUND);
    draw(v, 30);
    assert_int_equal(logview_top_seq(v), 10);
    assert_status_has(4, 30, "/nan: not found", true);
    assert_int_equal(key(v, 'n'), MOVED); /* tried again: still not found */

    /* A match near the end goes as high as the end allows. */
    assert_int_equal(logview_search(v, "line 19", true), LOGVIEW_SEARCH_FOUND);
    draw(v, 30);
    assert_row(0, 30, "line 18");
    assert_lit(1, 0, 7, true);

    /* Clearing the search: no highlight, n does nothing. */
    assert_int_equal(logview_search(v, "", true), LOGVIEW_SEARCH_NONE);
    assert_int_equal(key(v, 'n'), WIDGET_HANDLED);
    draw(v, 30);
    assert_lit(1, 0, 7, false);
    assert_status_has(4, 30, "/", false);

    /* Highlight across a wrapped row boundary. */
    put(r, 0, "xxxxxxxxxx needle\n"); /* 21 */
    logview_set_follow(v, true);
    logview_set_wrap(v, true);
    draw(v, 14);
    assert_int_equal(logview_search(v, "needle", false), LOGVIEW_SEARCH_WRAPPED);
    draw(v, 14);
    assert_row(0, 14, "line 20");
    assert_row(1, 14, "xxxxxxxxxx nee");
    assert_row(2, 14, "dle");
    assert_lit(1, 11, 3, true);
    assert_lit(2, 0, 3, true);
    assert_lit(2, 3, 3, false);
    logview_free(v);
    logring_free(r);
}

static void test_first_error_key(void **state)
{
    struct logring *r = logring_new(NULL);
    struct logview *v = logview_new(r, 4);

    add_lines(r, 0, 1, 5);
    assert_int_equal(key(v, 'e'), WIDGET_HANDLED); /* no error line yet */
    assert_true(logview_following(v));
    put(r, 1, "Traceback (most recent call last):\n"); /* 6 */
    add_lines(r, 0, 7, 20);
    put(r, 0, "RuntimeError: NCCL timeout\n");
    draw(v, 40);
    assert_int_equal(key(v, 'e'), MOVED);
    assert_false(logview_following(v));
    draw(v, 40);
    assert_row(0, 40, "Traceback (most recent call last):");
    assert_int_equal(logview_top_seq(v), 6);
    assert_int_equal(logview_marked(v), 6); /* marked until the next move */
    assert_int_equal(key(v, 'j'), MOVED);
    assert_int_equal(logview_marked(v), 0);
    assert_int_equal(key(v, 'e'), MOVED);
    assert_int_equal(logview_marked(v), 6);
    logview_set_follow(v, true); /* following moves on too */
    assert_int_equal(logview_marked(v), 0);
    assert_int_equal(key(v, 'e'), MOVED);

    /* Showing only worker 0, its first error is the later one. */
    logview_show_source(v, 0);
    assert_int_equal(logview_marked(v), 0); /* another source: no stale mark */
    assert_true(logview_first_error(v));
    draw(v, 40);
    assert_row(0, 40, "line 19");
    assert_row(2, 40, "RuntimeError: NCCL timeout");
    logview_free(v);
    logring_free(r);
}

/* Names worker i "worker-i". */
static void worker_name(uint32_t source, struct strbuf *out, void *arg)
{
    int *calls = arg;
    (*calls)++;
    strbuf_addf(out, "worker-%u", source);
}

static void test_worker_prefixes(void **state)
{
    struct logring *r = logring_new(NULL);
    struct logview *v = logview_new(r, 5);
    struct widget *wd = logview_widget(v);
    int calls = 0;

    logview_set_names(v, worker_name, &calls);
    put(r, 0, "hello\n");
    put(r, 1, "world\n");
    draw(v, 40);
    assert_row(0, 40, "worker-0 │ hello");
    assert_row(1, 40, "worker-1 │ world");
    assert_true(calls > 0);

    /* A wider name widens the column for every row. */
    put(r, 10, "ten\n");
    logview_notify(v);
    draw(v, 40);
    assert_row(0, 40, "worker-0  │ hello");
    assert_row(2, 40, "worker-10 │ ten");

    /* Wrapped rows keep the column, with a blank name. */
    put(r, 1, "a long line that wraps around\n");
    logview_notify(v);
    logview_set_wrap(v, true);
    draw(v, 30); /* 18 cells of text */
    assert_row(0, 30, "worker-1  │ world");
    assert_row(1, 30, "worker-10 │ ten");
    assert_row(2, 30, "worker-1  │ a long line that w");
    assert_row(3, 30, "          │ raps around");

    /* Without UTF-8 the bar is ASCII. */
    logview_set_utf8(v, false);
    draw(v, 30);
    assert_row(1, 30, "worker-10 | ten");

    /* One worker: its lines only, no prefix. */
    logview_show_source(v, 1);
    draw(v, 30);
    assert_row(0, 30, "world");
    assert_row(1, 30, "a long line that wraps around");
    assert_row(2, 30, "");
    /* Lines of other workers change nothing on screen. */
    put(r, 0, "other\n");
    logview_notify(v);
    assert_false(wd->dirty);
    key(v, ' ');
    draw(v, 30);
    put(r, 0, "other\n");
    logview_notify(v);
    assert_int_equal(logview_new_lines(v), 0);
    put(r, 1, "mine\n");
    logview_notify(v);
    assert_int_equal(logview_new_lines(v), 1);
    assert_true(wd->dirty);

    /* A third of the width at most for names. */
    logview_show_all(v);
    logview_set_wrap(v, false);
    logview_set_follow(v, true);
    draw(v, 15);
    assert_row(3, 15, "worke | mine");
    logview_free(v);
    logring_free(r);
}

static void test_keys_ignored_and_interface(void **state)
{
    static const struct widget_ops other = {.kind = "other"};
    struct widget not_a_view = {.ops = &other};
    struct logring *r = logring_new(NULL);
    struct logview *v = logview_new(r, 3);
    struct widget *wd = logview_widget(v);
    struct widget_key alt_f = {.code = 'f', .alt = true};

    draw(v, 20);
    assert_int_equal(key(v, '/'), WIDGET_IGNORED);
    assert_int_equal(key(v, 'q'), WIDGET_IGNORED);
    assert_int_equal(key(v, '\t'), WIDGET_IGNORED);
    assert_int_equal(fkey(v, KEY_F(1)), WIDGET_IGNORED);
    assert_int_equal(wd->ops->key(wd, &alt_f), WIDGET_IGNORED);
    wd->disabled = true;
    assert_int_equal(key(v, 'f'), WIDGET_IGNORED);
    wd->disabled = false;
    assert_false(wd->dirty);

    assert_ptr_equal(logview_from_widget(wd), v);
    assert_null(logview_from_widget(&not_a_view));
    assert_null(logview_from_widget(NULL));
    assert_string_equal(wd->ops->kind, "logview");
    assert_int_equal(wd->ops->height(wd, 80), 3);
    logview_set_rows(v, 0);
    assert_int_equal(wd->ops->height(wd, 80), 1);
    /* One row: no status line, the newest line. */
    add_lines(r, 0, 1, 3);
    draw(v, 20);
    assert_row(0, 20, "line 3");
    logview_set_palette(v, NULL);
    assert_true(wd->dirty);
    wd->ops->destroy(wd);
    logview_free(NULL);
    logring_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_follow_shows_last_lines),
        cmocka_unit_test(test_partial_line),
        cmocka_unit_test(test_paused_keeps_position),
        cmocka_unit_test(test_paused_top_dropped),
        cmocka_unit_test(test_scroll_keys),
        cmocka_unit_test(test_wrap_cjk),
        cmocka_unit_test(test_tabs_and_sideways),
        cmocka_unit_test(test_search_highlight),
        cmocka_unit_test(test_first_error_key),
        cmocka_unit_test(test_worker_prefixes),
        cmocka_unit_test(test_keys_ignored_and_interface),
    };
    return cmocka_run_group_tests(tests, setup_terminal, teardown_terminal);
}
