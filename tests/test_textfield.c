/*
 * test_textfield: the text field widget, drawn into an off-screen terminal
 * (newterm on /dev/null) and read back cell by cell: ASCII and CJK typing,
 * characters with combining marks as one unit, horizontal scroll with its
 * '<' '>' markers and no wide character split at an edge, the emacs keys,
 * max_chars, refused control characters, the dirty flag, result bits,
 * placeholder, mask, disabled (A_DIM) and the focused cursor.
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

#include "util/strbuf.h"
#include "util/utf8.h"
#include "widgets/textfield.h"

/* Where the field is drawn in the test window: not at 0,0, so offsets count. */
#define ROW 1
#define COL 2

#define EDITED (WIDGET_CHANGED | WIDGET_HANDLED | WIDGET_REDRAW)
#define MOVED (WIDGET_HANDLED | WIDGET_REDRAW)

static struct offscreen term;
static WINDOW *win;
static int cursor_y, cursor_x; /* where the last draw left the cursor */

/* One off-screen terminal for every test: UTF-8 locale first, for wide characters. */
static int setup_terminal(void **state)
{
    if (offscreen_open(&term) != 0)
        return -1;
    win = newwin(5, 40, 0, 0);
    return win ? 0 : -1;
}

static int teardown_terminal(void **state)
{
    offscreen_close(&term, win);
    return 0;
}

/* The control character typed with c (ctrl('A') == 1). */
static int ctrl(int c)
{
    return c & 0x1f;
}

static unsigned send(struct textfield *tf, int code, bool is_function, bool alt)
{
    struct widget *wd = textfield_widget(tf);
    struct widget_key k = {.code = code, .is_function = is_function, .alt = alt};
    return wd->ops->key(wd, &k);
}

static unsigned key(struct textfield *tf, int code)
{
    return send(tf, code, false, false);
}

static unsigned fkey(struct textfield *tf, int code)
{
    return send(tf, code, true, false);
}

static unsigned alt(struct textfield *tf, int code)
{
    return send(tf, code, false, true);
}

/* Types s code point by code point; each must edit the field. */
static void type(struct textfield *tf, const char *s)
{
    size_t n = strlen(s);
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        i += utf8_decode(s + i, n - i, &cp);
        assert_int_equal(key(tf, (int)cp), EDITED);
    }
}

/* Clears the window and draws the field w cells wide at (ROW, COL). */
static void draw(struct textfield *tf, int w, bool focused)
{
    struct widget *wd = textfield_widget(tf);
    werase(win);
    wmove(win, 0, 0);
    wd->ops->draw(wd, win, ROW, COL, w, focused);
    getyx(win, cursor_y, cursor_x); /* reading cells back moves it */
}

/* Reads cell c of the field: its characters (NUL-terminated) and attributes. */
static void cell(int c, wchar_t wch[CCHARW_MAX + 1], attr_t *attrs)
{
    cchar_t cc;
    short pair;
    attr_t a;
    memset(wch, 0, (CCHARW_MAX + 1) * sizeof *wch);
    assert_int_equal(mvwin_wch(win, ROW, COL + c, &cc), OK);
    assert_int_equal(getcchar(&cc, wch, attrs ? attrs : &a, &pair, NULL), OK);
}

/*
 * The w cells of the field as UTF-8. A two-cell character is read once; the
 * cell after it must be its continuation (curses gives the same character).
 */
static char *row(int w)
{
    struct strbuf sb = STRBUF_INIT;
    for (int c = 0; c < w; c++) {
        wchar_t wch[CCHARW_MAX + 1];
        char enc[4];
        cell(c, wch, NULL);
        for (size_t i = 0; wch[i]; i++)
            strbuf_add(&sb, enc, utf8_encode((uint32_t)wch[i], enc));
        if (utf8_cpwidth((uint32_t)wch[0]) == 2) {
            wchar_t next[CCHARW_MAX + 1];
            assert_true(c + 1 < w);
            cell(c + 1, next, NULL);
            assert_int_equal(next[0], wch[0]);
            c++;
        }
    }
    return strbuf_detach(&sb, NULL);
}

static void assert_row(int w, const char *want)
{
    char *got = row(w);
    assert_string_equal(got, want);
    free(got);
}

static void assert_cursor_at(int col)
{
    assert_int_equal(cursor_y, ROW);
    assert_int_equal(cursor_x, COL + col);
}

static void test_ascii_typing(void **state)
{
    struct textfield *tf = textfield_new(NULL, 0);
    assert_string_equal(textfield_value(tf), "");
    type(tf, "abc");
    assert_string_equal(textfield_value(tf), "abc");
    assert_int_equal(textfield_cursor_col(tf), 3);
    draw(tf, 10, true);
    assert_row(10, "abc       ");
    assert_cursor_at(3);
    assert_int_equal(fkey(tf, KEY_LEFT), MOVED);
    type(tf, "X");
    assert_string_equal(textfield_value(tf), "abXc");
    draw(tf, 10, true);
    assert_row(10, "abXc      ");
    assert_cursor_at(3);
    textfield_free(tf);
}

static void test_initial_and_set(void **state)
{
    struct textfield *tf = textfield_new("init", 0);
    assert_string_equal(textfield_value(tf), "init");
    assert_int_equal(textfield_cursor_col(tf), 4);
    textfield_set(tf, "基线");
    assert_string_equal(textfield_value(tf), "基线");
    assert_int_equal(textfield_cursor_col(tf), 4);
    textfield_set(tf, NULL);
    assert_string_equal(textfield_value(tf), "");
    assert_int_equal(textfield_cursor_col(tf), 0);
    textfield_free(tf);

    /* Longer text is cut at max_chars code points, initial or set. */
    tf = textfield_new("abcdef", 3);
    assert_string_equal(textfield_value(tf), "abc");
    textfield_set(tf, "基线v2");
    assert_string_equal(textfield_value(tf), "基线v");
    textfield_free(tf);
}

static void test_cjk_input(void **state)
{
    static const char want[] = "\xe5\x9f\xba\xe7\xba\xbf"
                               "v2";
    struct textfield *tf = textfield_new("", 0);
    wchar_t wch[CCHARW_MAX + 1];

    type(tf, "基线v2");
    assert_int_equal(strlen(textfield_value(tf)), sizeof want - 1);
    assert_memory_equal(textfield_value(tf), want, sizeof want - 1);
    /* 基 and 线 take two cells each, v and 2 one: the cursor stands in cell 6. */
    assert_int_equal(textfield_cursor_col(tf), 6);
    draw(tf, 10, true);
    assert_cursor_at(6);

    cell(0, wch, NULL);
    assert_int_equal(wch[0], 0x57FA);
    cell(1, wch, NULL); /* continuation of 基 */
    assert_int_equal(wch[0], 0x57FA);
    cell(2, wch, NULL);
    assert_int_equal(wch[0], 0x7EBF);
    cell(3, wch, NULL);
    assert_int_equal(wch[0], 0x7EBF);
    cell(4, wch, NULL);
    assert_int_equal(wch[0], 'v');
    cell(5, wch, NULL);
    assert_int_equal(wch[0], '2');
    cell(6, wch, NULL);
    assert_int_equal(wch[0], ' ');
    assert_row(10, "基线v2    ");

    /* The cursor moves by whole characters. */
    assert_int_equal(fkey(tf, KEY_LEFT), MOVED);
    assert_int_equal(fkey(tf, KEY_LEFT), MOVED);
    assert_int_equal(textfield_cursor_col(tf), 4);
    assert_int_equal(fkey(tf, KEY_LEFT), MOVED);
    assert_int_equal(textfield_cursor_col(tf), 2);
    assert_int_equal(key(tf, ctrl('B')), MOVED);
    assert_int_equal(textfield_cursor_col(tf), 0);
    assert_int_equal(key(tf, ctrl('F')), MOVED);
    assert_int_equal(textfield_cursor_col(tf), 2);
    type(tf, "a");
    assert_string_equal(textfield_value(tf), "基a线v2");
    draw(tf, 10, true);
    assert_row(10, "基a线v2   ");
    assert_cursor_at(3);
    textfield_free(tf);
}

/*
 * Walks the cursor from the end to the start of text, drawing at each step
 * in w cells: the cursor stays inside the field, off the markers, and on the
 * first cell of the character it stands on.
 */
static void walk_cursor(struct textfield *tf, int w, const uint32_t *text, size_t len)
{
    fkey(tf, KEY_END);
    for (size_t i = len + 1; i-- > 0;) {
        wchar_t wch[CCHARW_MAX + 1];
        draw(tf, w, true);
        int col = textfield_cursor_col(tf);
        assert_cursor_at(col);
        assert_in_range(col, 0, w - 1);
        cell(0, wch, NULL);
        if (wch[0] == '<')
            assert_true(col >= 1);
        cell(w - 1, wch, NULL);
        if (wch[0] == '>')
            assert_true(col <= w - 2);
        cell(col, wch, NULL);
        assert_int_equal(wch[0], i < len ? text[i] : ' ');
        if (i < len && utf8_cpwidth(text[i]) == 2) {
            assert_true(col + 1 < w);
            cell(col + 1, wch, NULL);
            assert_int_equal(wch[0], text[i]);
        }
        fkey(tf, KEY_LEFT);
    }
}

static void test_scroll_long_text(void **state)
{
    struct textfield *tf = textfield_new("", 0);
    char text[61];
    uint32_t cps[60];

    for (int i = 0; i < 60; i++) {
        text[i] = (char)('a' + i % 26);
        cps[i] = (uint32_t)text[i];
    }
    text[60] = '\0';
    type(tf, text);
    assert_string_equal(textfield_value(tf), text);

    /* The end: '<', the last 18 characters, the cursor's cell after them. */
    draw(tf, 20, true);
    assert_int_equal(textfield_cursor_col(tf), 19);
    assert_cursor_at(19);
    {
        char want[21];
        want[0] = '<';
        memcpy(want + 1, text + 42, 18);
        want[19] = ' ';
        want[20] = '\0';
        assert_row(20, want);
    }

    /* The start: the first 19 characters and '>'. */
    assert_int_equal(fkey(tf, KEY_HOME), MOVED);
    draw(tf, 20, true);
    assert_int_equal(textfield_cursor_col(tf), 0);
    assert_cursor_at(0);
    {
        char want[21];
        memcpy(want, text, 19);
        want[19] = '>';
        want[20] = '\0';
        assert_row(20, want);
    }

    walk_cursor(tf, 20, cps, 60);

    /* Deleting from the end brings hidden text back into view. */
    assert_int_equal(key(tf, ctrl('E')), MOVED);
    draw(tf, 20, true);
    for (int i = 0; i < 50; i++)
        assert_int_equal(fkey(tf, KEY_BACKSPACE), EDITED);
    draw(tf, 20, true);
    assert_row(20, "abcdefghij          ");
    assert_cursor_at(10);
    textfield_free(tf);
}

static void test_scroll_cjk_edge(void **state)
{
    static const uint32_t cps[] = {'a', 0x57FA, 0x57FA, 0x57FA, 0x57FA, 0x57FA, 0x57FA};
    struct textfield *tf = textfield_new("a基基基基基基", 0); /* 13 cells */

    /* At the end, text cell 6 is the second half of a 基: blank, not split. */
    draw(tf, 9, true);
    assert_int_equal(textfield_cursor_col(tf), 8);
    assert_row(9, "< 基基基 ");
    assert_cursor_at(8);

    /* At the start, the 基 crossing the right edge is left out before the '>'. */
    assert_int_equal(key(tf, ctrl('A')), MOVED);
    draw(tf, 9, true);
    assert_row(9, "a基基基 >");
    assert_cursor_at(0);

    /* The cursor on a 基 at the right edge scrolls it fully into view. */
    for (int i = 0; i < 4; i++)
        assert_int_equal(fkey(tf, KEY_RIGHT), MOVED);
    draw(tf, 9, true);
    assert_row(9, "< 基基基>");
    assert_int_equal(textfield_cursor_col(tf), 6);
    assert_cursor_at(6);

    walk_cursor(tf, 9, cps, 7);
    walk_cursor(tf, 4, cps, 7);
    walk_cursor(tf, 5, cps, 7);
    textfield_free(tf);
}

/* Fields too narrow for markers still keep the cursor in view, and w <= 0 draws nothing. */
static void test_narrow_field(void **state)
{
    struct textfield *tf = textfield_new("abcdef", 0);
    draw(tf, 3, true);
    assert_row(3, "ef ");
    assert_cursor_at(2);
    fkey(tf, KEY_HOME);
    draw(tf, 3, true);
    assert_row(3, "abc");
    assert_cursor_at(0);

    textfield_set(tf, "基");
    draw(tf, 1, true);
    assert_row(1, " ");
    assert_cursor_at(0);
    fkey(tf, KEY_HOME);
    draw(tf, 1, true);
    assert_cursor_at(0);
    textfield_widget(tf)->dirty = true;
    draw(tf, 0, false);
    assert_false(textfield_widget(tf)->dirty);
    textfield_free(tf);
}

static void test_emacs_keys(void **state)
{
    struct textfield *tf = textfield_new("hello brave new world", 0);

    assert_int_equal(textfield_cursor_col(tf), 21);
    assert_int_equal(key(tf, ctrl('A')), MOVED);
    assert_int_equal(textfield_cursor_col(tf), 0);
    assert_int_equal(key(tf, ctrl('A')), WIDGET_HANDLED); /* already there */
    assert_int_equal(key(tf, ctrl('E')), MOVED);
    assert_int_equal(textfield_cursor_col(tf), 21);
    assert_int_equal(key(tf, ctrl('F')), WIDGET_HANDLED);

    /* Alt-B / Alt-F: word left and right (lower or upper case). */
    assert_int_equal(alt(tf, 'b'), MOVED);
    assert_int_equal(textfield_cursor_col(tf), 16);
    assert_int_equal(alt(tf, 'B'), MOVED);
    assert_int_equal(textfield_cursor_col(tf), 12);
    assert_int_equal(alt(tf, 'f'), MOVED);
    assert_int_equal(textfield_cursor_col(tf), 15);
    assert_int_equal(alt(tf, 'F'), MOVED);
    assert_int_equal(textfield_cursor_col(tf), 21);
    assert_int_equal(alt(tf, 'f'), WIDGET_HANDLED);
    assert_int_equal(key(tf, ctrl('B')), MOVED);
    assert_int_equal(textfield_cursor_col(tf), 20);
    assert_int_equal(key(tf, ctrl('F')), MOVED);

    /* Ctrl-W kills the word before the cursor; Ctrl-Y yanks it back. */
    assert_int_equal(key(tf, ctrl('W')), EDITED);
    assert_string_equal(textfield_value(tf), "hello brave new ");
    assert_int_equal(textfield_cursor_col(tf), 16);
    assert_int_equal(key(tf, ctrl('Y')), EDITED);
    assert_string_equal(textfield_value(tf), "hello brave new world");
    assert_int_equal(textfield_cursor_col(tf), 21);

    /* Ctrl-K kills to the end. */
    alt(tf, 'b');
    alt(tf, 'b');
    assert_int_equal(textfield_cursor_col(tf), 12);
    assert_int_equal(key(tf, ctrl('K')), EDITED);
    assert_string_equal(textfield_value(tf), "hello brave ");
    assert_int_equal(textfield_cursor_col(tf), 12);
    assert_int_equal(key(tf, ctrl('K')), WIDGET_HANDLED); /* nothing to kill */

    /* Ctrl-U kills to the start. */
    key(tf, ctrl('A'));
    assert_int_equal(alt(tf, 'f'), MOVED);
    assert_int_equal(textfield_cursor_col(tf), 5);
    assert_int_equal(key(tf, ctrl('U')), EDITED);
    assert_string_equal(textfield_value(tf), " brave ");
    assert_int_equal(textfield_cursor_col(tf), 0);
    assert_int_equal(key(tf, ctrl('U')), WIDGET_HANDLED); /* the kill stays "hello" */
    key(tf, ctrl('E'));
    assert_int_equal(key(tf, ctrl('Y')), EDITED);
    assert_string_equal(textfield_value(tf), " brave hello");

    /* Ctrl-W takes trailing spaces with the word, and stops only at spaces. */
    textfield_set(tf, "run --data=/mnt/a  ");
    assert_int_equal(key(tf, ctrl('W')), EDITED);
    assert_string_equal(textfield_value(tf), "run ");
    assert_int_equal(key(tf, ctrl('W')), EDITED);
    assert_string_equal(textfield_value(tf), "");
    assert_int_equal(key(tf, ctrl('W')), WIDGET_HANDLED);
    /* Alt-B stops at punctuation. */
    textfield_set(tf, "/mnt/data");
    assert_int_equal(alt(tf, 'b'), MOVED);
    assert_int_equal(textfield_cursor_col(tf), 5);
    textfield_free(tf);
}

static void test_motion_and_delete_keys(void **state)
{
    struct textfield *tf = textfield_new("abcd", 0);

    assert_int_equal(fkey(tf, KEY_HOME), MOVED);
    assert_int_equal(fkey(tf, KEY_LEFT), WIDGET_HANDLED);
    assert_int_equal(fkey(tf, KEY_BACKSPACE), WIDGET_HANDLED); /* nothing before */
    assert_int_equal(fkey(tf, KEY_DC), EDITED);
    assert_string_equal(textfield_value(tf), "bcd");
    assert_int_equal(key(tf, ctrl('D')), EDITED);
    assert_string_equal(textfield_value(tf), "cd");
    assert_int_equal(fkey(tf, KEY_RIGHT), MOVED);
    assert_int_equal(textfield_cursor_col(tf), 1);
    assert_int_equal(fkey(tf, KEY_END), MOVED);
    assert_int_equal(fkey(tf, KEY_RIGHT), WIDGET_HANDLED);
    assert_int_equal(fkey(tf, KEY_DC), WIDGET_HANDLED); /* nothing after */
    assert_int_equal(key(tf, ctrl('D')), WIDGET_HANDLED);

    /* Three spellings of Backspace. */
    textfield_set(tf, "wxyz");
    assert_int_equal(fkey(tf, KEY_BACKSPACE), EDITED);
    assert_int_equal(key(tf, 127), EDITED);
    assert_int_equal(key(tf, 8), EDITED);
    assert_string_equal(textfield_value(tf), "w");
    textfield_free(tf);
}

static void test_units_cjk_and_combining(void **state)
{
    struct textfield *tf = textfield_new("", 0);
    wchar_t wch[CCHARW_MAX + 1];

    type(tf, "a基");
    assert_int_equal(fkey(tf, KEY_BACKSPACE), EDITED);
    assert_string_equal(textfield_value(tf), "a");

    /* e + U+0301 typed as two code points is one character of one cell. */
    textfield_set(tf, "");
    type(tf, "e\xcc\x81");
    assert_string_equal(textfield_value(tf), "e\xcc\x81");
    assert_int_equal(textfield_cursor_col(tf), 1);
    draw(tf, 5, true);
    cell(0, wch, NULL);
    assert_int_equal(wch[0], 'e');
    assert_int_equal(wch[1], 0x301);
    assert_int_equal(wch[2], 0);
    assert_cursor_at(1);
    assert_int_equal(fkey(tf, KEY_BACKSPACE), EDITED);
    assert_string_equal(textfield_value(tf), "");

    /* Moves and Delete take the mark with its base. */
    textfield_set(tf, "xe\xcc\x81y");
    assert_int_equal(fkey(tf, KEY_LEFT), MOVED);
    assert_int_equal(textfield_cursor_col(tf), 2);
    assert_int_equal(key(tf, ctrl('B')), MOVED);
    assert_int_equal(textfield_cursor_col(tf), 1);
    assert_int_equal(fkey(tf, KEY_DC), EDITED);
    assert_string_equal(textfield_value(tf), "xy");
    textfield_set(tf, "xe\xcc\x81\xcc\xa3y");
    fkey(tf, KEY_HOME);
    key(tf, ctrl('F'));
    assert_int_equal(key(tf, ctrl('F')), MOVED);
    assert_int_equal(textfield_cursor_col(tf), 2);
    assert_int_equal(key(tf, 127), EDITED);
    assert_string_equal(textfield_value(tf), "xy");

    /* Words hold accented letters and CJK. */
    textfield_set(tf, "café 基线");
    draw(tf, 20, false); /* wide enough not to scroll */
    assert_int_equal(alt(tf, 'b'), MOVED);
    assert_int_equal(textfield_cursor_col(tf), 5);
    assert_int_equal(key(tf, ctrl('W')), EDITED);
    assert_string_equal(textfield_value(tf), "基线");
    textfield_free(tf);
}

/* Text that only textfield_set can bring: a lone mark, a control character. */
static void test_odd_text_from_set(void **state)
{
    struct textfield *tf = textfield_new("\xcc\x81x", 0);
    wchar_t wch[CCHARW_MAX + 1];

    draw(tf, 5, true);
    cell(0, wch, NULL);
    assert_int_equal(wch[0], 0x25CC); /* the lone mark on a dotted circle */
    assert_int_equal(wch[1], 0x301);
    cell(1, wch, NULL);
    assert_int_equal(wch[0], 'x');
    assert_cursor_at(2);

    /* Typing before a lone mark makes it that character's mark. */
    fkey(tf, KEY_HOME);
    assert_int_equal(key(tf, 'e'), EDITED);
    assert_string_equal(textfield_value(tf), "e\xcc\x81x");
    assert_int_equal(textfield_cursor_col(tf), 1);

    textfield_set(tf, "a\x07"
                      "b");
    assert_string_equal(textfield_value(tf), "a\x07"
                                             "b");
    draw(tf, 5, false);
    assert_row(5, "a\xef\xbf\xbd"
                  "b  ");
    textfield_free(tf);
}

static void test_max_chars(void **state)
{
    struct textfield *tf = textfield_new("", 3);
    struct widget *wd = textfield_widget(tf);

    type(tf, "a基");
    assert_int_equal(key(tf, 'b'), EDITED);
    draw(tf, 10, false);
    assert_int_equal(key(tf, 'c'), WIDGET_HANDLED);
    assert_int_equal(key(tf, 0x301), WIDGET_HANDLED);
    assert_string_equal(textfield_value(tf), "a基b");
    assert_false(wd->dirty);
    textfield_free(tf);

    /* A yank takes what fits, in whole characters. */
    tf = textfield_new("", 4);
    type(tf, "xe\xcc\x81");
    assert_int_equal(key(tf, ctrl('U')), EDITED);
    type(tf, "ab");
    assert_int_equal(key(tf, ctrl('Y')), EDITED); /* room for x and e, but not e's mark */
    assert_string_equal(textfield_value(tf), "abx");
    textfield_free(tf);

    tf = textfield_new("", 2);
    type(tf, "e\xcc\x81");
    assert_int_equal(key(tf, ctrl('U')), EDITED);
    type(tf, "a");
    assert_int_equal(key(tf, ctrl('Y')), WIDGET_HANDLED); /* room for e alone: nothing */
    assert_string_equal(textfield_value(tf), "a");
    textfield_free(tf);
}

static void test_control_characters_refused(void **state)
{
    static const int refused[] = {0,    7,      9,      0x0c,   0x1b,     0x1f, 0x80,
                                  0x9b, 0x202e, 0x2066, 0xd800, 0x110000, -1};
    struct textfield *tf = textfield_new("ok", 0);
    struct widget *wd = textfield_widget(tf);

    draw(tf, 10, false);
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        assert_int_equal(key(tf, refused[i]), WIDGET_IGNORED);
        assert_string_equal(textfield_value(tf), "ok");
        assert_false(wd->dirty);
    }
    textfield_free(tf);
}

static void test_dirty_flag(void **state)
{
    struct textfield *tf = textfield_new("", 0);
    struct widget *wd = textfield_widget(tf);

    assert_true(wd->dirty); /* never drawn */
    draw(tf, 10, false);
    assert_false(wd->dirty);
    key(tf, 'a');
    assert_true(wd->dirty);
    draw(tf, 10, false);
    assert_false(wd->dirty);
    fkey(tf, KEY_RIGHT); /* at the end already: nothing to draw */
    assert_false(wd->dirty);
    fkey(tf, KEY_LEFT);
    assert_true(wd->dirty);
    draw(tf, 10, false);
    key(tf, '\r');
    key(tf, '\t');
    assert_false(wd->dirty);
    textfield_set(tf, "x");
    assert_true(wd->dirty);
    draw(tf, 10, false);
    textfield_set_placeholder(tf, "hint");
    assert_true(wd->dirty);
    draw(tf, 10, false);
    textfield_set_mask(tf, '*');
    assert_true(wd->dirty);
    textfield_free(tf);
}

static void test_result_bits(void **state)
{
    struct textfield *tf = textfield_new("ab", 0);

    assert_int_equal(key(tf, 'z'), EDITED);
    assert_int_equal(key(tf, 0x57FA), EDITED);
    assert_int_equal(fkey(tf, KEY_LEFT), MOVED);
    assert_int_equal(key(tf, '\r'), WIDGET_FOCUS_NEXT | WIDGET_HANDLED);
    assert_int_equal(key(tf, '\n'), WIDGET_FOCUS_NEXT | WIDGET_HANDLED);
    assert_int_equal(fkey(tf, KEY_ENTER), WIDGET_FOCUS_NEXT | WIDGET_HANDLED);
    assert_int_equal(key(tf, '\t'), WIDGET_IGNORED);
    assert_int_equal(fkey(tf, KEY_BTAB), WIDGET_IGNORED);
    assert_int_equal(fkey(tf, KEY_UP), WIDGET_IGNORED);
    assert_int_equal(fkey(tf, KEY_DOWN), WIDGET_IGNORED);
    assert_int_equal(fkey(tf, KEY_F(1)), WIDGET_IGNORED);
    assert_int_equal(key(tf, ctrl('G')), WIDGET_IGNORED);
    assert_int_equal(key(tf, ctrl('S')), WIDGET_IGNORED);
    assert_int_equal(alt(tf, 'x'), WIDGET_IGNORED);
    assert_int_equal(send(tf, KEY_LEFT, true, true), WIDGET_IGNORED);
    assert_string_equal(textfield_value(tf), "abz基");
    textfield_free(tf);
}

static void test_disabled_is_dim(void **state)
{
    struct textfield *tf = textfield_new("abc", 0);
    struct widget *wd = textfield_widget(tf);
    attr_t attrs;
    short pair;
    wchar_t wch[CCHARW_MAX + 1];

    wd->disabled = true;
    assert_int_equal(key(tf, 'x'), WIDGET_IGNORED);
    assert_int_equal(key(tf, ctrl('A')), WIDGET_IGNORED);
    assert_int_equal(fkey(tf, KEY_LEFT), WIDGET_IGNORED);
    assert_int_equal(key(tf, '\r'), WIDGET_IGNORED);
    assert_string_equal(textfield_value(tf), "abc");
    draw(tf, 10, false);
    assert_row(10, "abc       ");
    for (int c = 0; c < 10; c++) {
        cell(c, wch, &attrs);
        assert_true(attrs & A_DIM);
    }
    /* The window's own attributes come back as they were. */
    wattr_get(win, &attrs, &pair, NULL);
    assert_int_equal(attrs, A_NORMAL);

    /* Enabled, it draws in the window's attributes, the owner's choice. */
    wd->disabled = false;
    werase(win);
    wattr_set(win, A_UNDERLINE, 0, NULL);
    wd->ops->draw(wd, win, ROW, COL, 10, false);
    wattr_get(win, &attrs, &pair, NULL);
    assert_int_equal(attrs, A_UNDERLINE);
    wattr_set(win, A_NORMAL, 0, NULL);
    for (int c = 0; c < 10; c++) {
        cell(c, wch, &attrs);
        assert_false(attrs & A_DIM);
        assert_true(attrs & A_UNDERLINE);
    }
    textfield_free(tf);
}

static void test_placeholder(void **state)
{
    struct textfield *tf = textfield_new("", 0);
    wchar_t wch[CCHARW_MAX + 1];
    attr_t attrs;

    textfield_set_placeholder(tf, "名称 name");
    draw(tf, 12, true);
    assert_row(12, "名称 name   ");
    assert_cursor_at(0);
    for (int c = 0; c < 12; c++) {
        cell(c, wch, &attrs);
        assert_true(attrs & A_DIM);
    }
    draw(tf, 3, false); /* 称 does not fit: blank */
    assert_row(3, "名 ");

    type(tf, "x");
    draw(tf, 12, true);
    assert_row(12, "x           ");
    cell(0, wch, &attrs);
    assert_false(attrs & A_DIM);
    assert_cursor_at(1);
    textfield_free(tf);
}

static void test_mask(void **state)
{
    struct textfield *tf = textfield_new("s3cr3t", 0);

    textfield_set_mask(tf, '*');
    draw(tf, 10, true);
    assert_row(10, "******    ");
    assert_cursor_at(6);
    assert_string_equal(textfield_value(tf), "s3cr3t");

    /* One mask per character, whatever its width; word moves go to the ends. */
    textfield_set(tf, "基线 e\xcc\x81");
    assert_int_equal(textfield_cursor_col(tf), 4);
    draw(tf, 10, true);
    assert_row(10, "****      ");
    assert_int_equal(alt(tf, 'b'), MOVED);
    assert_int_equal(textfield_cursor_col(tf), 0);
    assert_int_equal(alt(tf, 'f'), MOVED);
    assert_int_equal(textfield_cursor_col(tf), 4);

    /* A mask that is not printable falls back to '*'; 0 shows the text. */
    textfield_set_mask(tf, 0x07);
    draw(tf, 10, false);
    assert_row(10, "****      ");
    textfield_set_mask(tf, 0);
    draw(tf, 10, false);
    assert_row(10, "基线 e\xcc\x81    ");
    textfield_free(tf);
}

static void test_widget_interface(void **state)
{
    static const struct widget_ops other = {.kind = "other"};
    struct widget not_a_field = {.ops = &other};
    struct textfield *tf = textfield_new("x", 0);
    struct widget *wd = textfield_widget(tf);

    assert_ptr_equal(textfield_from_widget(wd), tf);
    assert_null(textfield_from_widget(&not_a_field));
    assert_null(textfield_from_widget(NULL));
    assert_string_equal(wd->ops->kind, "textfield");
    assert_int_equal(wd->ops->height(wd, 20), 1);
    wd->ops->destroy(wd);
    textfield_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ascii_typing),
        cmocka_unit_test(test_initial_and_set),
        cmocka_unit_test(test_cjk_input),
        cmocka_unit_test(test_scroll_long_text),
        cmocka_unit_test(test_scroll_cjk_edge),
        cmocka_unit_test(test_narrow_field),
        cmocka_unit_test(test_emacs_keys),
        cmocka_unit_test(test_motion_and_delete_keys),
        cmocka_unit_test(test_units_cjk_and_combining),
        cmocka_unit_test(test_odd_text_from_set),
        cmocka_unit_test(test_max_chars),
        cmocka_unit_test(test_control_characters_refused),
        cmocka_unit_test(test_dirty_flag),
        cmocka_unit_test(test_result_bits),
        cmocka_unit_test(test_disabled_is_dim),
        cmocka_unit_test(test_placeholder),
        cmocka_unit_test(test_mask),
        cmocka_unit_test(test_widget_interface),
    };
    return cmocka_run_group_tests(tests, setup_terminal, teardown_terminal);
}
