/*
 * test_widgets_basic: the number field, toggle, select, key bar and confirm
 * dialog, drawn into an off-screen 80×24 terminal (newterm on /dev/null,
 * C.UTF-8) and read back cell by cell: what is on screen, with which
 * attributes, and the result bits each key returns.
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
#include <limits.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "util/strbuf.h"
#include "util/utf8.h"
#include "widgets/dialog.h"
#include "widgets/keybar.h"
#include "widgets/numberfield.h"
#include "widgets/select.h"
#include "widgets/toggle.h"

/* Where single-line widgets are drawn in the test window: not at 0,0. */
#define ROW 1
#define COL 2

#define EDITED (WIDGET_CHANGED | WIDGET_HANDLED | WIDGET_REDRAW)
#define MOVED (WIDGET_HANDLED | WIDGET_REDRAW)
#define OPENED (WIDGET_ACTIVATE | WIDGET_HANDLED | WIDGET_REDRAW)
#define ANSWERED (WIDGET_ACTIVATE | WIDGET_HANDLED)

enum { ESC = 27, CTRL_U = 21, BACKSPACE = 127 };

static struct offscreen term;
static WINDOW *win;
static int cursor_y, cursor_x; /* where the last draw left the cursor */

/* One off-screen 80×24 terminal for every test, UTF-8 for wide characters. */
static int setup_terminal(void **state)
{
    if (offscreen_open(&term) != 0)
        return -1;
    if (LINES != 24 || COLS != 80)
        return -1;
    win = newwin(5, 40, 0, 0);
    return win ? 0 : -1;
}

static int teardown_terminal(void **state)
{
    offscreen_close(&term, win);
    return 0;
}

static unsigned send(struct widget *wd, int code, bool is_function)
{
    struct widget_key k = {.code = code, .is_function = is_function};
    return wd->ops->key(wd, &k);
}

static unsigned key(struct widget *wd, int code)
{
    return send(wd, code, false);
}

static unsigned fkey(struct widget *wd, int code)
{
    return send(wd, code, true);
}

/* Types s code point by code point; each key must give the result want. */
static void type(struct widget *wd, const char *s, unsigned want)
{
    size_t n = strlen(s);
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        i += utf8_decode(s + i, n - i, &cp);
        assert_int_equal(key(wd, (int)cp), want);
    }
}

/* Clears the test window and draws wd w cells wide at (ROW, COL). */
static void draw(struct widget *wd, int w, bool focused)
{
    werase(win);
    wmove(win, 0, 0);
    wd->ops->draw(wd, win, ROW, COL, w, focused);
    getyx(win, cursor_y, cursor_x); /* reading cells back moves it */
}

/* Reads the cell at (y, x) of w: its characters (NUL-terminated) and attributes. */
static void cell_at(WINDOW *w, int y, int x, wchar_t wch[CCHARW_MAX + 1], attr_t *attrs)
{
    cchar_t cc;
    short pair;
    attr_t a;
    memset(wch, 0, (CCHARW_MAX + 1) * sizeof *wch);
    assert_int_equal(mvwin_wch(w, y, x, &cc), OK);
    assert_int_equal(getcchar(&cc, wch, attrs ? attrs : &a, &pair, NULL), OK);
}

static attr_t attrs_at(WINDOW *w, int y, int x)
{
    wchar_t wch[CCHARW_MAX + 1];
    attr_t a;
    cell_at(w, y, x, wch, &a);
    return a;
}

/*
 * n cells of w from (y, x) as UTF-8. A two-cell character is read once; the
 * cell after it must be its continuation (curses gives the same character),
 * so a wide character split at the end fails the test.
 */
static char *cells(WINDOW *w, int y, int x, int n)
{
    struct strbuf sb = STRBUF_INIT;
    for (int c = 0; c < n; c++) {
        wchar_t wch[CCHARW_MAX + 1];
        char enc[4];
        cell_at(w, y, x + c, wch, NULL);
        for (size_t i = 0; wch[i]; i++)
            strbuf_add(&sb, enc, utf8_encode((uint32_t)wch[i], enc));
        if (utf8_cpwidth((uint32_t)wch[0]) == 2) {
            wchar_t next[CCHARW_MAX + 1];
            assert_true(c + 1 < n);
            cell_at(w, y, x + c + 1, next, NULL);
            assert_int_equal(next[0], wch[0]);
            c++;
        }
    }
    return strbuf_detach(&sb, NULL);
}

static void assert_cells(WINDOW *w, int y, int x, int n, const char *want)
{
    char *got = cells(w, y, x, n);
    assert_string_equal(got, want);
    free(got);
}

/* The field's w cells in the test window. */
static void assert_row(int w, const char *want)
{
    assert_cells(win, ROW, COL, w, want);
}

static bool contains(WINDOW *w, int y, int x, int n, const char *needle)
{
    char *got = cells(w, y, x, n);
    bool found = strstr(got, needle) != NULL;
    free(got);
    return found;
}

/* ---- numberfield ---- */

static void test_number_typing(void **state)
{
    struct numberfield *nf = numberfield_new(-1, 99, 3);
    struct widget *wd = numberfield_widget(nf);
    bool ok;

    numberfield_set_suffix(nf, "workers");
    assert_true(wd->dirty);
    draw(wd, 12, true);
    assert_false(wd->dirty);
    assert_row(12, "3 workers   ");
    assert_int_equal(cursor_x, COL + 1);
    assert_false(attrs_at(win, ROW, COL) & A_DIM);
    for (int c = 2; c < 9; c++)
        assert_true(attrs_at(win, ROW, COL + c) & A_DIM);

    /* Cleared, then a negative number typed sign first. */
    assert_int_equal(key(wd, CTRL_U), EDITED);
    assert_true(wd->dirty);
    assert_string_equal(numberfield_text(nf), "");
    numberfield_value(nf, &ok);
    assert_false(ok);
    assert_int_equal(key(wd, CTRL_U), WIDGET_HANDLED); /* nothing to clear */
    assert_int_equal(key(wd, '-'), EDITED);
    assert_string_equal(numberfield_text(nf), "-");
    numberfield_value(nf, &ok);
    assert_false(ok);
    assert_int_equal(key(wd, '1'), EDITED);
    assert_int_equal(numberfield_value(nf, &ok), -1);
    assert_true(ok);

    /* Out of range is kept as typed, so the owner can say so. */
    key(wd, CTRL_U);
    type(wd, "150", EDITED);
    assert_string_equal(numberfield_text(nf), "150");
    assert_int_equal(numberfield_value(nf, &ok), 150);
    assert_false(ok);
    draw(wd, 12, false);
    assert_row(12, "150 workers ");
    assert_int_equal(key(wd, BACKSPACE), EDITED);
    assert_int_equal(fkey(wd, KEY_BACKSPACE), EDITED);
    assert_int_equal(key(wd, 8), EDITED); /* Ctrl-H */
    assert_int_equal(key(wd, BACKSPACE), WIDGET_HANDLED);
    assert_string_equal(numberfield_text(nf), "");

    /* A lone zero gives way to the digit typed after it. */
    numberfield_set(nf, 0);
    type(wd, "7", EDITED);
    assert_string_equal(numberfield_text(nf), "7");
    assert_int_equal(numberfield_value(nf, NULL), 7);

    /* Not a number key: the owner's. Enter moves on. */
    assert_int_equal(key(wd, 'a'), WIDGET_IGNORED);
    assert_int_equal(key(wd, ' '), WIDGET_IGNORED);
    assert_int_equal(key(wd, '\t'), WIDGET_IGNORED);
    assert_int_equal(key(wd, '\r'), WIDGET_FOCUS_NEXT | WIDGET_HANDLED);
    assert_int_equal(fkey(wd, KEY_ENTER), WIDGET_FOCUS_NEXT | WIDGET_HANDLED);
    assert_string_equal(numberfield_text(nf), "7");

    /* At most NUMBERFIELD_MAX_TEXT characters; too big for a long is not ok. */
    key(wd, CTRL_U);
    for (int i = 0; i < NUMBERFIELD_MAX_TEXT; i++)
        assert_int_equal(key(wd, '9'), EDITED);
    assert_int_equal(key(wd, '9'), WIDGET_HANDLED);
    assert_int_equal(strlen(numberfield_text(nf)), NUMBERFIELD_MAX_TEXT);
    assert_int_equal(numberfield_value(nf, &ok), 0);
    assert_false(ok);

    /* Narrow: the end of the number shows, the suffix goes first. */
    numberfield_set(nf, 42);
    draw(wd, 3, false);
    assert_row(3, "42 ");
    draw(wd, 1, true);
    assert_row(1, "2");
    numberfield_free(nf);
}

static void test_number_step_and_clamp(void **state)
{
    struct numberfield *nf = numberfield_new(1, 64, 8);
    struct widget *wd = numberfield_widget(nf);
    bool ok;

    assert_int_equal(fkey(wd, KEY_UP), EDITED);
    assert_string_equal(numberfield_text(nf), "9");
    assert_int_equal(key(wd, '+'), EDITED);
    assert_int_equal(numberfield_value(nf, NULL), 10);
    assert_int_equal(fkey(wd, KEY_DOWN), EDITED);
    assert_int_equal(key(wd, '-'), EDITED); /* min >= 0: '-' steps down */
    assert_int_equal(numberfield_value(nf, NULL), 8);
    assert_int_equal(fkey(wd, KEY_PPAGE), EDITED);
    assert_int_equal(numberfield_value(nf, NULL), 18);
    for (int i = 0; i < 5; i++)
        fkey(wd, KEY_PPAGE);
    assert_int_equal(numberfield_value(nf, &ok), 64);
    assert_true(ok);
    assert_int_equal(fkey(wd, KEY_UP), WIDGET_HANDLED); /* clamped: no change */
    assert_int_equal(fkey(wd, KEY_NPAGE), EDITED);
    assert_int_equal(numberfield_value(nf, NULL), 54);
    for (int i = 0; i < 10; i++)
        fkey(wd, KEY_NPAGE);
    assert_int_equal(numberfield_value(nf, NULL), 1);
    assert_int_equal(fkey(wd, KEY_DOWN), WIDGET_HANDLED);

    /* Out of range or empty text steps from what it spells (else 0), clamped. */
    key(wd, CTRL_U);
    type(wd, "150", EDITED);
    assert_int_equal(fkey(wd, KEY_DOWN), EDITED);
    assert_string_equal(numberfield_text(nf), "64");
    key(wd, CTRL_U);
    assert_int_equal(fkey(wd, KEY_DOWN), EDITED);
    assert_string_equal(numberfield_text(nf), "1");
    key(wd, CTRL_U);
    assert_int_equal(fkey(wd, KEY_UP), EDITED);
    assert_string_equal(numberfield_text(nf), "1");

    /* Setting clamps; a new range keeps the text and re-judges it. */
    numberfield_set(nf, 1000);
    assert_string_equal(numberfield_text(nf), "64");
    numberfield_set_range(nf, 100, 10); /* swapped */
    long lo, hi;
    numberfield_range(nf, &lo, &hi);
    assert_int_equal(lo, 10);
    assert_int_equal(hi, 100);
    numberfield_set_range(nf, 1, 32);
    assert_string_equal(numberfield_text(nf), "64");
    numberfield_value(nf, &ok);
    assert_false(ok);
    numberfield_free(nf);

    /* With min < 0, '-' on a number steps; −1 is the floor. */
    nf = numberfield_new(-1, 99, 5);
    wd = numberfield_widget(nf);
    assert_int_equal(key(wd, '-'), EDITED);
    assert_string_equal(numberfield_text(nf), "4");
    numberfield_set(nf, 0);
    assert_int_equal(key(wd, '-'), EDITED);
    assert_string_equal(numberfield_text(nf), "-1");
    assert_int_equal(fkey(wd, KEY_DOWN), WIDGET_HANDLED);
    type(wd, "0", EDITED); /* "-1" + "0" = "-10": kept, out of range */
    assert_int_equal(numberfield_value(nf, &ok), -10);
    assert_false(ok);
    numberfield_free(nf);

    /* The ends of long: steps saturate instead of overflowing. */
    nf = numberfield_new(LONG_MIN, LONG_MAX, LONG_MAX - 3);
    wd = numberfield_widget(nf);
    assert_int_equal(fkey(wd, KEY_PPAGE), EDITED);
    assert_int_equal(numberfield_value(nf, &ok), LONG_MAX);
    assert_true(ok);
    numberfield_set(nf, LONG_MIN);
    assert_int_equal(fkey(wd, KEY_NPAGE), WIDGET_HANDLED);
    assert_int_equal(numberfield_value(nf, &ok), LONG_MIN);
    assert_true(ok);
    numberfield_free(nf);
}

static void test_number_disabled(void **state)
{
    struct numberfield *nf = numberfield_new(0, 9, 5);
    struct widget *wd = numberfield_widget(nf);

    wd->disabled = true;
    assert_int_equal(key(wd, '1'), WIDGET_IGNORED);
    assert_int_equal(fkey(wd, KEY_UP), WIDGET_IGNORED);
    assert_int_equal(key(wd, CTRL_U), WIDGET_IGNORED);
    assert_string_equal(numberfield_text(nf), "5");
    draw(wd, 4, false);
    assert_row(4, "5   ");
    for (int c = 0; c < 4; c++)
        assert_true(attrs_at(win, ROW, COL + c) & A_DIM);
    numberfield_free(nf);
}

/* ---- toggle ---- */

static void test_toggle(void **state)
{
    struct toggle *tg = toggle_new("enabled", false);
    struct widget *wd = toggle_widget(tg);

    draw(wd, 14, true);
    assert_row(14, "[ ] enabled   ");
    assert_int_equal(cursor_x, COL + 1);
    assert_false(wd->dirty);

    assert_int_equal(key(wd, ' '), EDITED);
    assert_true(toggle_on(tg));
    assert_true(wd->dirty);
    draw(wd, 14, false);
    assert_row(14, "[x] enabled   ");
    assert_int_equal(key(wd, '\r'), EDITED);
    assert_false(toggle_on(tg));
    assert_int_equal(fkey(wd, KEY_ENTER), EDITED);
    assert_true(toggle_on(tg));
    assert_int_equal(key(wd, 'x'), WIDGET_IGNORED);
    assert_int_equal(key(wd, '\t'), WIDGET_IGNORED);
    assert_int_equal(fkey(wd, KEY_DOWN), WIDGET_IGNORED);

    /* A label cut at a wide character leaves the cell blank. */
    toggle_set_label(tg, "启用");
    draw(wd, 5, false);
    assert_row(5, "[x]  ");
    draw(wd, 8, false);
    assert_row(8, "[x] 启用");

    /* Setting to the same value is not a change. */
    draw(wd, 8, false);
    toggle_set(tg, true);
    assert_false(wd->dirty);
    toggle_set(tg, false);
    assert_true(wd->dirty);

    /* Disabled: no key flips it, and it draws dim. */
    wd->disabled = true;
    assert_int_equal(key(wd, ' '), WIDGET_IGNORED);
    assert_int_equal(key(wd, '\r'), WIDGET_IGNORED);
    assert_false(toggle_on(tg));
    draw(wd, 8, false);
    assert_row(8, "[ ] 启用");
    for (int c = 0; c < 8; c++)
        assert_true(attrs_at(win, ROW, COL + c) & A_DIM);
    toggle_free(tg);
}

/* ---- select ---- */

static const struct select_option specs[] = {
    {"N1.small", "1× A100 · 8 vCPU", false, NULL},
    {"N8.h800", "8× H800 · 120 vCPU", false, NULL},
    {"N8.h800.big", "8× H800 · 192 vCPU", true, "quota exceeded"},
    {"N2.h800", "2× H800 · 30 vCPU", false, NULL},
    {"cpu.large", "64 vCPU", false, NULL},
};
#define NSPECS (sizeof specs / sizeof *specs)

static const struct select_option priorities[] = {
    {"NORMAL", NULL, false, NULL},
    {"HIGH", NULL, true, "owners only"},
    {"HIGHEST", NULL, true, "owners only"},
};

/* Row r of the popup's list (0 is the first option row), all its inner cells. */
static char *popup_row(struct select *s, int r)
{
    WINDOW *p = select_popup_window(s);
    assert_non_null(p);
    return cells(p, 2 + r, 1, getmaxx(p) - 2);
}

/* Whether popup list row r starts (after its blank) with label. */
static bool row_is(struct select *s, int r, const char *label)
{
    char *got = popup_row(s, r);
    bool yes = strncmp(got + 1, label, strlen(label)) == 0 &&
               (got[1 + strlen(label)] == ' ' || got[1 + strlen(label)] == '\0');
    free(got);
    return yes;
}

static bool row_blank(struct select *s, int r)
{
    char *got = popup_row(s, r);
    bool blank = strspn(got, " ") == strlen(got);
    free(got);
    return blank;
}

static attr_t row_attrs(struct select *s, int r)
{
    return attrs_at(select_popup_window(s), 2 + r, 2);
}

static void test_select_closed_view(void **state)
{
    struct select *s = select_new(specs, NSPECS, 0);
    struct widget *wd = select_widget(s);

    assert_true(wd->dirty);
    draw(wd, 30, true);
    assert_false(wd->dirty);
    assert_row(30, "N1.small  1× A100 · 8 vCPU   ▾");
    assert_int_equal(cursor_x, COL);
    assert_false(attrs_at(win, ROW, COL) & A_DIM);
    assert_true(attrs_at(win, ROW, COL + 10) & A_DIM); /* the detail */
    assert_false(attrs_at(win, ROW, COL + 29) & A_DIM);

    /* Narrow: the label first, the detail cut by whole characters. */
    draw(wd, 14, false);
    assert_row(14, "N1.small  1× ▾");
    select_set_utf8(s, false);
    draw(wd, 14, false);
    assert_row(14, "N1.small  1× v");

    /* Nothing chosen: the arrow alone. Disabled: dim and deaf. */
    select_set_selected(s, SELECT_NONE);
    draw(wd, 10, false);
    assert_row(10, "         v");
    wd->disabled = true;
    assert_int_equal(key(wd, '\r'), WIDGET_IGNORED);
    assert_false(select_is_open(s));
    draw(wd, 10, false);
    assert_true(attrs_at(win, ROW, COL + 9) & A_DIM);

    /* Closed, only Enter and Space are the select's. */
    wd->disabled = false;
    assert_int_equal(fkey(wd, KEY_DOWN), WIDGET_IGNORED);
    assert_int_equal(key(wd, 'h'), WIDGET_IGNORED);
    assert_int_equal(key(wd, ESC), WIDGET_IGNORED);
    assert_int_equal(key(wd, ' '), OPENED);
    assert_true(select_is_open(s));
    select_free(s);
}

static void test_select_open_and_filter(void **state)
{
    struct select *s = select_new(specs, NSPECS, 0);
    struct widget *wd = select_widget(s);

    draw(wd, 30, false);
    assert_int_equal(key(wd, '\r'), OPENED);
    assert_true(select_is_open(s));
    assert_null(select_popup_window(s)); /* made at the first popup draw */
    select_draw_popup(s);
    WINDOW *p = select_popup_window(s);
    assert_non_null(p);
    assert_false(wd->dirty);

    /* Below the closed view, from its left edge, every option shown. */
    assert_int_equal(getbegy(p), ROW + 1);
    assert_int_equal(getbegx(p), COL);
    assert_int_equal(getmaxy(p), (int)NSPECS + 3);
    assert_true(contains(p, 1, 1, getmaxx(p) - 2, "Filter: type to filter"));
    assert_true(row_is(s, 0, "N1.small"));
    assert_true(row_is(s, 4, "cpu.large"));
    assert_true(row_attrs(s, 0) & A_REVERSE); /* the cursor, on the choice */
    assert_false(row_attrs(s, 1) & A_REVERSE);
    assert_int_equal(select_cursor(s), 0);

    /* The detail sits at the right edge, dim. */
    char *row = popup_row(s, 1);
    size_t len = strlen(row);
    const char *detail = "8× H800 · 120 vCPU ";
    assert_true(len > strlen(detail));
    assert_string_equal(row + len - strlen(detail), detail);
    free(row);
    assert_true(attrs_at(p, 3, getmaxx(p) - 3) & A_DIM);

    /* "h8" keeps the options that contain it (label or detail), any case. */
    type(wd, "h8", MOVED);
    assert_string_equal(select_filter(s), "h8");
    select_draw_popup(s);
    p = select_popup_window(s);
    assert_true(contains(p, 1, 1, getmaxx(p) - 2, "Filter: h8"));
    assert_true(row_is(s, 0, "N8.h800"));
    assert_true(row_is(s, 1, "N8.h800.big"));
    assert_true(row_is(s, 2, "N2.h800"));
    assert_true(row_blank(s, 3));
    assert_true(row_blank(s, 4));
    assert_int_equal(select_cursor(s), 1); /* the first enabled match */
    assert_true(row_attrs(s, 0) & A_REVERSE);

    assert_int_equal(key(wd, BACKSPACE), MOVED);
    assert_int_equal(key(wd, BACKSPACE), MOVED);
    assert_int_equal(key(wd, BACKSPACE), WIDGET_HANDLED);
    type(wd, "H800 · 1", MOVED);
    select_draw_popup(s);
    assert_true(row_is(s, 0, "N8.h800"));
    assert_true(row_is(s, 1, "N8.h800.big"));
    assert_true(row_blank(s, 2));

    /* No match: a note, and Enter has nothing to pick. */
    assert_int_equal(key(wd, CTRL_U), MOVED);
    type(wd, "zzz", MOVED);
    select_draw_popup(s);
    assert_true(contains(select_popup_window(s), 2, 1, 20, "no match"));
    assert_int_equal(select_cursor(s), SELECT_NONE);
    assert_int_equal(key(wd, '\r'), WIDGET_HANDLED);
    assert_true(select_is_open(s));
    assert_int_equal(fkey(wd, KEY_DOWN), WIDGET_HANDLED);

    /* Keys the popup does not use go to the owner. */
    assert_int_equal(key(wd, '\t'), WIDGET_IGNORED);
    assert_int_equal(fkey(wd, KEY_F(2)), WIDGET_IGNORED);
    select_free(s); /* open: the popup window goes too */
}

static void test_select_move_skips_disabled(void **state)
{
    struct select *s = select_new(specs, NSPECS, 0);
    struct widget *wd = select_widget(s);

    draw(wd, 30, false);
    key(wd, '\r');
    select_draw_popup(s);
    assert_int_equal(fkey(wd, KEY_DOWN), MOVED);
    assert_int_equal(select_cursor(s), 1);
    assert_int_equal(fkey(wd, KEY_DOWN), MOVED);
    assert_int_equal(select_cursor(s), 3); /* over the disabled N8.h800.big */
    select_draw_popup(s);
    assert_true(row_attrs(s, 3) & A_REVERSE);
    assert_false(row_attrs(s, 2) & A_REVERSE);
    assert_int_equal(fkey(wd, KEY_UP), MOVED);
    assert_int_equal(select_cursor(s), 1);
    assert_int_equal(fkey(wd, KEY_END), MOVED);
    assert_int_equal(select_cursor(s), 4);
    assert_int_equal(fkey(wd, KEY_DOWN), WIDGET_HANDLED);
    assert_int_equal(fkey(wd, KEY_END), WIDGET_HANDLED);
    assert_int_equal(fkey(wd, KEY_HOME), MOVED);
    assert_int_equal(select_cursor(s), 0);
    assert_int_equal(fkey(wd, KEY_UP), WIDGET_HANDLED);
    assert_int_equal(fkey(wd, KEY_NPAGE), MOVED);
    assert_int_equal(select_cursor(s), 4);
    assert_int_equal(fkey(wd, KEY_PPAGE), MOVED);
    assert_int_equal(select_cursor(s), 0);

    /* Within a filter: the matches only; nothing enabled past the last. */
    type(wd, "h8", MOVED);
    assert_int_equal(select_cursor(s), 1);
    assert_int_equal(fkey(wd, KEY_DOWN), MOVED);
    assert_int_equal(select_cursor(s), 3);
    assert_int_equal(fkey(wd, KEY_DOWN), WIDGET_HANDLED);
    assert_int_equal(fkey(wd, KEY_HOME), MOVED);
    assert_int_equal(select_cursor(s), 1);

    /* Only a disabled match: no cursor, nothing to pick. */
    key(wd, CTRL_U);
    type(wd, "BIG", MOVED);
    assert_int_equal(select_cursor(s), SELECT_NONE);
    assert_int_equal(fkey(wd, KEY_DOWN), WIDGET_HANDLED);
    assert_int_equal(key(wd, '\r'), WIDGET_HANDLED);
    assert_int_equal(select_selected(s), 0);
    select_free(s);
}

static void test_select_pick_and_escape(void **state)
{
    struct select *s = select_new(specs, NSPECS, 0);
    struct widget *wd = select_widget(s);

    draw(wd, 30, false);
    key(wd, '\r');
    select_draw_popup(s);
    fkey(wd, KEY_DOWN);
    assert_int_equal(key(wd, '\r'), EDITED);
    assert_false(select_is_open(s));
    assert_null(select_popup_window(s));
    assert_int_equal(select_selected(s), 1);
    assert_string_equal(select_selected_label(s), "N8.h800");
    assert_true(wd->dirty);
    draw(wd, 30, false);
    assert_row(30, "N8.h800  8× H800 · 120 vCPU  ▾");

    /* Esc closes and keeps the old choice, whatever the cursor did. */
    key(wd, ' ');
    select_draw_popup(s);
    assert_int_equal(select_cursor(s), 1);
    fkey(wd, KEY_END);
    type(wd, "cpu", MOVED);
    assert_int_equal(key(wd, ESC), WIDGET_CANCEL | WIDGET_HANDLED | WIDGET_REDRAW);
    assert_false(select_is_open(s));
    assert_null(select_popup_window(s));
    assert_int_equal(select_selected(s), 1);
    assert_string_equal(select_filter(s), "");

    /* Picking the choice again closes without a change. */
    fkey(wd, KEY_ENTER);
    assert_int_equal(fkey(wd, KEY_ENTER), MOVED);
    assert_false(select_is_open(s));
    assert_int_equal(select_selected(s), 1);

    /* Type-ahead then Enter picks the first match. */
    key(wd, '\r');
    type(wd, "cpu.", MOVED);
    assert_int_equal(key(wd, '\n'), EDITED);
    assert_string_equal(select_selected_label(s), "cpu.large");

    /* The owner may close it, e.g. before moving the focus. */
    key(wd, '\r');
    select_draw_popup(s);
    select_close(s);
    assert_false(select_is_open(s));
    assert_null(select_popup_window(s));
    assert_int_equal(select_selected(s), 4);
    select_free(s);
}

static void test_select_disabled_reason(void **state)
{
    struct select *s = select_new(priorities, 3, 0);
    struct widget *wd = select_widget(s);

    draw(wd, 20, false);
    key(wd, '\r');
    select_draw_popup(s);
    WINDOW *p = select_popup_window(s);
    int w = getmaxx(p);

    /* A disabled option shows, dim, with its reason at the right. */
    assert_true(row_is(s, 1, "HIGH"));
    char *row = popup_row(s, 1);
    assert_string_equal(row + strlen(row) - strlen("owners only "), "owners only ");
    free(row);
    assert_true(row_attrs(s, 1) & A_DIM);
    assert_true(attrs_at(p, 3, w - 3) & A_DIM);
    assert_false(row_attrs(s, 0) & A_DIM);
    assert_int_equal(fkey(wd, KEY_DOWN), WIDGET_HANDLED); /* nothing enabled below */
    assert_int_equal(fkey(wd, KEY_END), WIDGET_HANDLED);
    assert_int_equal(select_cursor(s), 0);
    key(wd, ESC);

    /* A disabled choice (e.g. from a draft) shows its reason when closed... */
    select_set_selected(s, 1);
    draw(wd, 20, false);
    assert_row(20, "HIGH  owners only  ▾");
    assert_true(attrs_at(win, ROW, COL + 6) & A_DIM);

    /* ...and opens with the cursor on it, reason shown; it cannot be re-picked. */
    key(wd, '\r');
    select_draw_popup(s);
    assert_int_equal(select_cursor(s), 1);
    assert_true(row_attrs(s, 1) & A_REVERSE);
    assert_true(contains(select_popup_window(s), 3, 1, w - 2, "owners only"));
    assert_int_equal(key(wd, '\r'), WIDGET_HANDLED);
    assert_true(select_is_open(s));
    assert_int_equal(fkey(wd, KEY_DOWN), WIDGET_HANDLED);
    assert_int_equal(fkey(wd, KEY_UP), MOVED);
    assert_int_equal(select_cursor(s), 0);
    assert_int_equal(key(wd, '\r'), EDITED);
    assert_string_equal(select_selected_label(s), "NORMAL");
    select_free(s);
}

/* Whether the cell at (y, x) of w holds the line-drawing character acs. */
static bool border_has(WINDOW *w, int y, int x, chtype acs)
{
    chtype mask = A_CHARTEXT | A_ALTCHARSET;
    return (mvwinch(w, y, x) & mask) == (acs & mask);
}

static void test_select_popup_placement(void **state)
{
    struct select *s = select_new(specs, NSPECS, 0);
    struct widget *wd = select_widget(s);
    WINDOW *low = newwin(1, 40, 20, 10);
    WINDOW *p;

    /* Near the bottom: above, its last row just over the closed view. */
    wd->ops->draw(wd, low, 0, 0, 30, false);
    key(wd, '\r');
    select_draw_popup(s);
    p = select_popup_window(s);
    assert_int_equal(getbegy(p) + getmaxy(p), 20);
    assert_int_equal(getbegx(p), 10);
    /* Its widest row: borders, blanks, "N8.h800.big", a gap, "quota exceeded". */
    assert_int_equal(getmaxx(p), 4 + 11 + 2 + 14);
    assert_true(row_is(s, 0, "N1.small"));

    /* The closed view moved to the right edge: the popup stays on screen. */
    delwin(low);
    low = newwin(1, 20, 3, 60);
    wd->ops->draw(wd, low, 0, 0, 20, false);
    select_draw_popup(s);
    p = select_popup_window(s);
    assert_int_equal(getbegy(p), 4);
    assert_int_equal(getbegx(p) + getmaxx(p), COLS);
    assert_true(getmaxx(p) > 20); /* as wide as its widest row */
    key(wd, ESC);

    /* Drawn into a pad (as a form does), the owner says where it is. */
    WINDOW *pad = newpad(10, 40);
    key(wd, '\r');
    wd->ops->draw(wd, pad, 5, 0, 30, false);
    select_set_anchor(s, 7, 4, 30);
    select_draw_popup(s);
    p = select_popup_window(s);
    assert_int_equal(getbegy(p), 8);
    assert_int_equal(getbegx(p), 4);
    wd->ops->draw(wd, pad, 0, 0, 30, false); /* a pad does not move it */
    select_draw_popup(s);
    assert_int_equal(getbegy(select_popup_window(s)), 8);
    delwin(pad);
    key(wd, ESC);
    select_free(s);

    /* Fits neither way: the larger side, fewer rows, scroll arrows. */
    struct select_option many[20];
    char labels[20][16];
    for (int i = 0; i < 20; i++) {
        snprintf(labels[i], sizeof labels[i], "opt%02d", i);
        many[i] = (struct select_option){labels[i], NULL, false, NULL};
    }
    s = select_new(many, 20, 0);
    wd = select_widget(s);
    select_set_max_rows(s, 20);
    delwin(low);
    low = newwin(1, 20, 10, 0);
    wd->ops->draw(wd, low, 0, 0, 20, false);
    key(wd, '\r');
    select_draw_popup(s);
    p = select_popup_window(s);
    assert_int_equal(getbegy(p), 11); /* 13 rows below beat 10 above */
    assert_int_equal(getmaxy(p), 13);
    assert_true(row_is(s, 0, "opt00"));
    assert_true(row_is(s, 9, "opt09"));
    int w = getmaxx(p);
    assert_true(border_has(p, 12, w - 3, ACS_DARROW));
    assert_true(border_has(p, 0, w - 3, ACS_HLINE)); /* nothing hidden above */

    /* Scrolled to the end: the cursor row is the last one shown. */
    assert_int_equal(fkey(wd, KEY_END), MOVED);
    select_draw_popup(s);
    assert_true(row_is(s, 9, "opt19"));
    assert_true(row_attrs(s, 9) & A_REVERSE);
    assert_true(row_is(s, 0, "opt10"));
    assert_true(border_has(p, 0, w - 3, ACS_UARROW));
    assert_true(border_has(p, 12, w - 3, ACS_HLINE));
    assert_int_equal(fkey(wd, KEY_PPAGE), MOVED);
    assert_int_equal(select_cursor(s), 10);
    select_draw_popup(s);
    assert_true(row_is(s, 0, "opt10"));

    /* max_rows bounds it where there is room. */
    key(wd, ESC);
    select_set_max_rows(s, 4);
    key(wd, '\r');
    select_draw_popup(s);
    assert_int_equal(getmaxy(select_popup_window(s)), 4 + 3);
    delwin(low);
    select_free(s);
}

static void test_select_set_options(void **state)
{
    struct select *s = select_new(specs, NSPECS, 1);
    struct widget *wd = select_widget(s);
    const struct select_option reordered[] = {
        {"cpu.large", "64 vCPU", false, NULL},
        {"N2.h800", "2× H800", false, NULL},
        {"N8.h800", "8× H800", true, "in use"},
    };

    /* The choice follows its label, to where it now is. */
    draw(wd, 30, false);
    select_set_options(s, reordered, 3);
    assert_true(wd->dirty);
    assert_int_equal(select_count(s), 3);
    assert_int_equal(select_selected(s), 2);
    draw(wd, 30, false);
    assert_row(30, "N8.h800  in use              ▾");

    /* Gone: no choice. */
    select_set_options(s, specs, 1);
    assert_int_equal(select_selected(s), SELECT_NONE);
    assert_null(select_selected_label(s));
    draw(wd, 12, false);
    assert_row(12, "           ▾");

    /* While open: the filter and, by label, the cursor stay. */
    select_set_options(s, specs, NSPECS);
    select_set_selected(s, 0);
    key(wd, '\r');
    type(wd, "h8", MOVED);
    fkey(wd, KEY_DOWN);
    assert_int_equal(select_cursor(s), 3); /* N2.h800 */
    select_set_options(s, reordered, 3);
    assert_true(select_is_open(s));
    assert_string_equal(select_filter(s), "h8");
    assert_int_equal(select_cursor(s), 1); /* N2.h800, moved */
    select_draw_popup(s);
    assert_true(row_is(s, 0, "N2.h800"));
    assert_true(row_is(s, 1, "N8.h800"));
    assert_int_equal(key(wd, '\r'), EDITED);
    assert_string_equal(select_selected_label(s), "N2.h800");

    /* Emptied: nothing to choose. */
    select_set_options(s, NULL, 0);
    assert_int_equal(select_selected(s), SELECT_NONE);
    key(wd, '\r');
    select_draw_popup(s);
    assert_true(contains(select_popup_window(s), 2, 1, 20, "nothing to choose"));
    assert_int_equal(key(wd, '\r'), WIDGET_HANDLED);
    select_free(s);
}

/* ---- keybar ---- */

static const struct keybar_item wizard_keys[] = {
    {"F1", "Help"},
    {"F2", "Save"},
    {"^S", "Submit"},
    {"Esc", "Quit"},
};

static void test_keybar(void **state)
{
    struct keybar *kb = keybar_new(wizard_keys, 4);
    struct widget *wd = keybar_widget(kb);
    WINDOW *bar = newwin(1, 80, 23, 0);

    wd->ops->draw(wd, bar, 0, 0, 80, false);
    assert_false(wd->dirty);
    assert_cells(bar, 0, 0, 40, "F1 Help  F2 Save  ^S Submit  Esc Quit   ");
    assert_true(attrs_at(bar, 0, 0) & A_REVERSE); /* keys in the key role */
    assert_true(attrs_at(bar, 0, 1) & A_REVERSE);
    assert_false(attrs_at(bar, 0, 2) & A_REVERSE);
    assert_false(attrs_at(bar, 0, 3) & A_REVERSE); /* labels in normal */
    assert_true(attrs_at(bar, 0, 29) & A_REVERSE); /* "Esc" */
    assert_true(attrs_at(bar, 0, 31) & A_REVERSE);
    assert_false(attrs_at(bar, 0, 32) & A_REVERSE);

    /* 30 cells: "Esc Quit" would end at 37, so it goes whole. */
    assert_int_equal(keybar_fit(kb, 30), 3);
    werase(bar);
    wd->ops->draw(wd, bar, 0, 0, 30, false);
    assert_cells(bar, 0, 0, 30, "F1 Help  F2 Save  ^S Submit   ");
    assert_false(attrs_at(bar, 0, 29) & A_REVERSE);
    /* Never half a label: 26 cells hold two pairs. */
    assert_int_equal(keybar_fit(kb, 26), 2);
    assert_int_equal(keybar_fit(kb, 27), 3);
    assert_int_equal(keybar_fit(kb, 6), 0);
    werase(bar);
    wd->ops->draw(wd, bar, 0, 0, 26, false);
    assert_cells(bar, 0, 0, 26, "F1 Help  F2 Save          ");

    /* New pairs (copied), CJK labels, a key alone; a palette of our own. */
    struct widget_palette pal = *widget_palette_mono();
    pal.key = A_BOLD;
    char key_buf[] = "F5";
    struct keybar_item mode[] = {{key_buf, "提交"}, {"?", NULL}, {"F10", "退出"}};
    keybar_set_items(kb, mode, 3);
    key_buf[0] = 'X'; /* the bar keeps its own copy */
    keybar_set_palette(kb, &pal);
    assert_true(wd->dirty);
    werase(bar);
    wd->ops->draw(wd, bar, 0, 0, 30, false);
    assert_cells(bar, 0, 0, 30, "F5 提交  ?  F10 退出          ");
    assert_true(attrs_at(bar, 0, 0) & A_BOLD);
    assert_false(attrs_at(bar, 0, 0) & A_REVERSE);
    assert_int_equal(keybar_fit(kb, 10), 2);
    assert_int_equal(keybar_fit(kb, 11), 2);
    werase(bar);
    wd->ops->draw(wd, bar, 0, 0, 12, false);
    assert_cells(bar, 0, 0, 12, "F5 提交  ?  ");

    assert_int_equal(key(wd, 'q'), WIDGET_IGNORED);
    assert_int_equal(fkey(wd, KEY_F(1)), WIDGET_IGNORED);
    delwin(bar);
    keybar_free(kb);
}

/* ---- dialog ---- */

/* The text of dialog row y between the borders and the padding. */
static char *dialog_text(struct dialog *d, int y)
{
    WINDOW *dw = dialog_window(d);
    return cells(dw, y, 2, getmaxx(dw) - 4);
}

/* s without the spaces at its end. */
static void rtrim(char *s)
{
    size_t n = strlen(s);
    while (n > 0 && s[n - 1] == ' ')
        s[--n] = '\0';
}

static void test_dialog_small(void **state)
{
    struct dialog *d = dialog_new("Quit", "Discard the draft?", false);
    struct widget *wd = dialog_widget(d);

    assert_null(dialog_window(d));
    assert_true(wd->dirty);
    dialog_draw(d);
    assert_false(wd->dirty);
    WINDOW *dw = dialog_window(d);
    assert_non_null(dw);
    /* The minimum width, centred. */
    assert_int_equal(getmaxx(dw), DIALOG_MIN_COLS);
    assert_int_equal(getmaxy(dw), 1 + 4);
    assert_int_equal(getbegx(dw), (COLS - DIALOG_MIN_COLS) / 2);
    assert_int_equal(getbegy(dw), (LINES - 5) / 2);
    assert_true(contains(dw, 0, 1, DIALOG_MIN_COLS - 2, " Quit "));
    assert_true(attrs_at(dw, 0, 3) & A_BOLD); /* the title role */
    char *t = dialog_text(d, 1);
    rtrim(t);
    assert_string_equal(t, "Discard the draft?");
    free(t);

    /* The buttons, centred; No has the focus (the default asked for). */
    char *b = cells(dw, 3, 0, DIALOG_MIN_COLS);
    const char *yes = strstr(b, "[ Yes ] [ No ]");
    assert_non_null(yes);
    int bx = (int)(yes - b);
    assert_int_equal(bx, (DIALOG_MIN_COLS - 14) / 2);
    free(b);
    assert_false(attrs_at(dw, 3, bx) & A_REVERSE);
    assert_true(attrs_at(dw, 3, bx + 8) & A_REVERSE);

    /* Keys move the focus; the draw follows. */
    assert_int_equal(fkey(wd, KEY_RIGHT), WIDGET_HANDLED);
    assert_int_equal(fkey(wd, KEY_LEFT), MOVED);
    assert_true(wd->dirty);
    wd->ops->draw(wd, win, 0, 0, 0, false); /* the place is ignored */
    assert_ptr_equal(dialog_window(d), dw);
    assert_true(attrs_at(dw, 3, bx) & A_REVERSE);
    assert_false(attrs_at(dw, 3, bx + 8) & A_REVERSE);
    assert_int_equal(key(wd, '\t'), MOVED);
    assert_int_equal(fkey(wd, KEY_BTAB), MOVED);
    assert_int_equal(wd->ops->height(wd, 80), 5);
    dialog_free(d);
}

static void test_dialog_answers(void **state)
{
    struct dialog *d = dialog_new("Submit", "Submit the job?", true);
    struct widget *wd = dialog_widget(d);

    assert_false(dialog_answer(d));            /* no answer yet */
    assert_int_equal(key(wd, '\r'), ANSWERED); /* Yes has the focus */
    assert_true(dialog_answer(d));
    assert_int_equal(key(wd, 'n'), ANSWERED);
    assert_false(dialog_answer(d));
    assert_int_equal(key(wd, 'Y'), ANSWERED);
    assert_true(dialog_answer(d));
    assert_int_equal(key(wd, ESC), ANSWERED | WIDGET_CANCEL);
    assert_false(dialog_answer(d));
    assert_int_equal(key(wd, 'y'), ANSWERED);
    assert_int_equal(fkey(wd, KEY_RIGHT), MOVED);
    assert_int_equal(fkey(wd, KEY_ENTER), ANSWERED);
    assert_false(dialog_answer(d));
    assert_int_equal(key(wd, 'N'), ANSWERED);
    assert_false(dialog_answer(d));

    assert_int_equal(key(wd, 'q'), WIDGET_IGNORED);
    assert_int_equal(fkey(wd, KEY_F(1)), WIDGET_IGNORED);
    wd->disabled = true;
    assert_int_equal(key(wd, 'y'), WIDGET_IGNORED);
    assert_false(dialog_answer(d));
    dialog_free(d);
}

/* n copies of the UTF-8 character c after prefix. */
static char *repeat(const char *prefix, const char *c, int n)
{
    struct strbuf sb = STRBUF_INIT;
    strbuf_adds(&sb, prefix);
    for (int i = 0; i < n; i++)
        strbuf_adds(&sb, c);
    return strbuf_detach(&sb, NULL);
}

static void test_dialog_wraps_cjk(void **state)
{
    /* "a" and 50 ideographs: 101 cells, more than the 72 the box can give. */
    char *msg = repeat("a", "训", 50);
    struct dialog *d = dialog_new("删除任务", msg, false);
    dialog_draw(d);
    WINDOW *dw = dialog_window(d);
    assert_int_equal(getmaxx(dw), COLS - 4);
    assert_int_equal(getbegx(dw), 2);
    assert_int_equal(getmaxy(dw), 2 + 4);

    /* 1 + 35 × 2 = 71 cells; the 36th ideograph would cross the edge. */
    char *want1 = repeat("a", "训", 35), *want2 = repeat("", "训", 15);
    char *l1 = dialog_text(d, 1), *l2 = dialog_text(d, 2);
    rtrim(l1);
    rtrim(l2);
    assert_string_equal(l1, want1);
    assert_string_equal(l2, want2);
    wchar_t wch[CCHARW_MAX + 1];
    cell_at(dw, 1, 2 + 71, wch, NULL); /* the last text cell: blank, not half a character */
    assert_int_equal(wch[0], L' ');
    assert_true(contains(dw, 0, 1, 20, " 删除任务 "));
    free(want1);
    free(want2);
    free(l1);
    free(l2);
    dialog_free(d);
    free(msg);

    /* "，" may not start a line: the ideograph before it goes down too. */
    char *head = repeat("b", "训", 35);
    struct strbuf sb = STRBUF_INIT;
    strbuf_adds(&sb, head);
    strbuf_adds(&sb, "，然后继续。");
    msg = strbuf_detach(&sb, NULL);
    d = dialog_new("", msg, true);
    dialog_draw(d);
    l1 = dialog_text(d, 1);
    l2 = dialog_text(d, 2);
    rtrim(l1);
    rtrim(l2);
    want1 = repeat("b", "训", 34);
    assert_string_equal(l1, want1);
    assert_string_equal(l2, "训，然后继续。");
    free(want1);
    free(l1);
    free(l2);
    free(head);
    dialog_free(d);
    free(msg);

    /* Latin text breaks at spaces, which do not start a line; '\n' breaks too. */
    msg = repeat("", "word ", 20); /* 100 cells */
    sb = (struct strbuf)STRBUF_INIT;
    strbuf_adds(&sb, msg);
    strbuf_adds(&sb, "\nlast");
    free(msg);
    msg = strbuf_detach(&sb, NULL);
    d = dialog_new("Words", msg, true);
    dialog_draw(d);
    dw = dialog_window(d);
    assert_int_equal(getmaxy(dw), 3 + 4);
    l1 = dialog_text(d, 1);
    l2 = dialog_text(d, 2);
    char *l3 = dialog_text(d, 3);
    rtrim(l1);
    rtrim(l2);
    rtrim(l3);
    want1 = repeat("word", " word", 14); /* 74 > 72: 14 words, 69 cells */
    assert_int_equal(strlen(want1), 74);
    want1[69] = '\0';
    assert_string_equal(l1, want1);
    assert_string_equal(l2, "word word word word word word");
    assert_string_equal(l3, "last");
    free(want1);
    free(l1);
    free(l2);
    free(l3);
    dialog_free(d);
    free(msg);

    /* A space right at the edge is the break. */
    msg = repeat("", "x", 74);
    msg[72] = ' ';
    d = dialog_new("", msg, true);
    dialog_draw(d);
    l1 = dialog_text(d, 1);
    l2 = dialog_text(d, 2);
    rtrim(l2);
    msg[72] = '\0';
    assert_string_equal(l1, msg);
    assert_string_equal(l2, "x");
    free(l1);
    free(l2);
    dialog_free(d);
    free(msg);

    /* Taller than the screen: cut to the lines that fit. */
    msg = repeat("", "很", 36 * 40);
    d = dialog_new("Long", msg, false);
    dialog_draw(d);
    dw = dialog_window(d);
    assert_int_equal(getmaxy(dw), LINES - 2);
    assert_int_equal(getbegy(dw), 1);
    char *b = cells(dw, LINES - 4, 0, getmaxx(dw));
    assert_non_null(strstr(b, "[ Yes ] [ No ]"));
    free(b);
    dialog_free(d);
    free(msg);
}

static void test_widget_interfaces(void **state)
{
    static const struct widget_ops other = {.kind = "other"};
    struct widget not_ours = {.ops = &other};
    struct numberfield *nf = numberfield_new(0, 1, 0);
    struct toggle *tg = toggle_new(NULL, false);
    struct select *s = select_new(NULL, 0, SELECT_NONE);
    struct keybar *kb = keybar_new(NULL, 0);
    struct dialog *d = dialog_new(NULL, NULL, false);
    struct widget *all[] = {numberfield_widget(nf), toggle_widget(tg), select_widget(s),
                            keybar_widget(kb), dialog_widget(d)};
    const char *kinds[] = {"numberfield", "toggle", "select", "keybar", "dialog"};

    assert_ptr_equal(numberfield_from_widget(all[0]), nf);
    assert_ptr_equal(toggle_from_widget(all[1]), tg);
    assert_ptr_equal(select_from_widget(all[2]), s);
    assert_ptr_equal(keybar_from_widget(all[3]), kb);
    assert_ptr_equal(dialog_from_widget(all[4]), d);
    assert_null(numberfield_from_widget(&not_ours));
    assert_null(toggle_from_widget(all[0]));
    assert_null(select_from_widget(NULL));
    assert_null(keybar_from_widget(all[2]));
    assert_null(dialog_from_widget(all[3]));
    for (size_t i = 0; i < 5; i++) {
        assert_string_equal(all[i]->ops->kind, kinds[i]);
        if (i < 4)
            assert_int_equal(all[i]->ops->height(all[i], 20), 1);
    }
    /* An empty dialog and an empty bar still draw. */
    dialog_draw(d);
    assert_int_equal(getmaxx(dialog_window(d)), DIALOG_MIN_COLS);
    draw(all[3], 10, false);
    assert_row(10, "          ");
    for (size_t i = 0; i < 5; i++)
        all[i]->ops->destroy(all[i]);
    numberfield_free(NULL);
    toggle_free(NULL);
    select_free(NULL);
    keybar_free(NULL);
    dialog_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_number_typing),
        cmocka_unit_test(test_number_step_and_clamp),
        cmocka_unit_test(test_number_disabled),
        cmocka_unit_test(test_toggle),
        cmocka_unit_test(test_select_closed_view),
        cmocka_unit_test(test_select_open_and_filter),
        cmocka_unit_test(test_select_move_skips_disabled),
        cmocka_unit_test(test_select_pick_and_escape),
        cmocka_unit_test(test_select_disabled_reason),
        cmocka_unit_test(test_select_popup_placement),
        cmocka_unit_test(test_select_set_options),
        cmocka_unit_test(test_keybar),
        cmocka_unit_test(test_dialog_small),
        cmocka_unit_test(test_dialog_answers),
        cmocka_unit_test(test_dialog_wraps_cjk),
        cmocka_unit_test(test_widget_interfaces),
    };
    return cmocka_run_group_tests(tests, setup_terminal, teardown_terminal);
}
