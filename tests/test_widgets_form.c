/*
 * test_widgets_form: the text area, the list editor and the form, drawn into
 * an off-screen terminal (newterm on /dev/null, C.UTF-8) and read back cell
 * by cell. Text area: multi-line editing, the goal column, joins and kills,
 * vertical and horizontal scroll, CJK and tabs, the gutter, the placeholder
 * and the value round trip. List editor: add / move / remove through a fake
 * owner whose rows are text fields, the limit, the empty hint, the disabled
 * note, row focus bits, a removal the owner confirms later. Form: labels
 * aligned and cut, the message line (icon, role attribute, colour pair,
 * wrap), focus moves skipping hidden and disabled entries, hiding the
 * focused entry, scroll in a 10-line rectangle, a resize from 120x40 to
 * 80x24, the help line, drawing only what is dirty, and a text area and a
 * tall list inside a form.
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
#include "widgets/form.h"
#include "widgets/listedit.h"
#include "widgets/textarea.h"
#include "widgets/textfield.h"

/* Where single widgets are drawn in the test window: not at 0,0, so offsets count. */
#define ROW 1
#define COL 2

#define EDITED (WIDGET_CHANGED | WIDGET_HANDLED | WIDGET_REDRAW)
#define MOVED (WIDGET_HANDLED | WIDGET_REDRAW)

#define ERROR_PAIR 1
#define WARNING_PAIR 2
#define OK_PAIR 3

static struct offscreen term;
static WINDOW *win;
static int cursor_y, cursor_x; /* where the last draw left the cursor */
static struct widget_palette colour;

/* One off-screen terminal for every test, 40 x 120, with three colour pairs. */
static int setup_terminal(void **state)
{
    if (offscreen_open(&term) != 0)
        return -1;
    if (!has_colors() || start_color() != OK)
        return -1;
    init_pair(ERROR_PAIR, COLOR_RED, COLOR_BLACK);
    init_pair(WARNING_PAIR, COLOR_YELLOW, COLOR_BLACK);
    init_pair(OK_PAIR, COLOR_GREEN, COLOR_BLACK);
    colour = *widget_palette_mono();
    colour.error = COLOR_PAIR(ERROR_PAIR) | A_BOLD;
    colour.warning = COLOR_PAIR(WARNING_PAIR);
    colour.ok = COLOR_PAIR(OK_PAIR);
    win = newwin(40, 120, 0, 0);
    return win ? 0 : -1;
}

static int teardown_terminal(void **state)
{
    offscreen_close(&term, win);
    return 0;
}

/* Every test starts on a blank 40 x 120 window in plain attributes. */
static int clear_window(void **state)
{
    wresize(win, 40, 120);
    wattrset(win, A_NORMAL);
    werase(win);
    return 0;
}

static int ctrl(int c)
{
    return c & 0x1f;
}

static unsigned send(struct widget *wd, int code, bool is_function, bool alt)
{
    struct widget_key k = {.code = code, .is_function = is_function, .alt = alt};
    return wd->ops->key(wd, &k);
}

static unsigned key(struct widget *wd, int code)
{
    return send(wd, code, false, false);
}

static unsigned fkey(struct widget *wd, int code)
{
    return send(wd, code, true, false);
}

static unsigned alt(struct widget *wd, int code)
{
    return send(wd, code, false, true);
}

static unsigned altf(struct widget *wd, int code)
{
    return send(wd, code, true, true);
}

static unsigned fsend(struct form *f, int code, bool is_function)
{
    struct widget_key k = {.code = code, .is_function = is_function};
    return form_key(f, &k);
}

/* Types s into wd code point by code point; each must edit. */
static void type(struct widget *wd, const char *s)
{
    size_t n = strlen(s);
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        i += utf8_decode(s + i, n - i, &cp);
        assert_int_equal(key(wd, (int)cp), EDITED);
    }
}

/* Types s into the form's focused widget. */
static void ftype(struct form *f, const char *s)
{
    size_t n = strlen(s);
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        i += utf8_decode(s + i, n - i, &cp);
        assert_int_equal(fsend(f, (int)cp, false) & WIDGET_CHANGED, WIDGET_CHANGED);
    }
}

/* Clears the window and draws wd at (ROW, COL), w cells wide. */
static void draw(struct widget *wd, int w, bool focused)
{
    werase(win);
    wmove(win, 0, 0);
    wd->ops->draw(wd, win, ROW, COL, w, focused);
    getyx(win, cursor_y, cursor_x);
}

/* Draws the form at (y, x), h by w, and notes the cursor. */
static void fdraw(struct form *f, int y, int x, int h, int w, const struct widget_palette *pal)
{
    form_draw(f, win, y, x, h, w, pal);
    getyx(win, cursor_y, cursor_x);
}

/* The cell at (y, x): characters (NUL-terminated), attributes and colour pair. */
static void cell(int y, int x, wchar_t wch[CCHARW_MAX + 1], attr_t *attrs, short *pair)
{
    cchar_t cc;
    attr_t a;
    short p;
    memset(wch, 0, (CCHARW_MAX + 1) * sizeof *wch);
    assert_int_equal(mvwin_wch(win, y, x, &cc), OK);
    assert_int_equal(getcchar(&cc, wch, attrs ? attrs : &a, pair ? pair : &p, NULL), OK);
}

static attr_t attr_at(int y, int x)
{
    wchar_t wch[CCHARW_MAX + 1];
    attr_t a;
    cell(y, x, wch, &a, NULL);
    return a;
}

static short pair_at(int y, int x)
{
    wchar_t wch[CCHARW_MAX + 1];
    short p;
    cell(y, x, wch, NULL, &p);
    return p;
}

static wchar_t char_at(int y, int x)
{
    wchar_t wch[CCHARW_MAX + 1];
    cell(y, x, wch, NULL, NULL);
    return wch[0];
}

/*
 * The w cells from (y, x) as UTF-8. A two-cell character is read once; the
 * cell after it must be its continuation.
 */
static char *text_at(int y, int x, int w)
{
    struct strbuf sb = STRBUF_INIT;
    for (int c = 0; c < w; c++) {
        wchar_t wch[CCHARW_MAX + 1];
        char enc[4];
        cell(y, x + c, wch, NULL, NULL);
        for (size_t i = 0; wch[i]; i++)
            strbuf_add(&sb, enc, utf8_encode((uint32_t)wch[i], enc));
        if (utf8_cpwidth((uint32_t)wch[0]) == 2) {
            wchar_t next[CCHARW_MAX + 1];
            assert_true(c + 1 < w);
            cell(y, x + c + 1, next, NULL, NULL);
            assert_int_equal(next[0], wch[0]);
            c++;
        }
    }
    return strbuf_detach(&sb, NULL);
}

/* The cells from (y, x) read as want, over as many cells as want takes. */
static void assert_text(int y, int x, const char *want)
{
    char *got = text_at(y, x, (int)utf8_width(want, strlen(want)));
    assert_string_equal(got, want);
    free(got);
}

/* Row y of a single widget drawn at (ROW, COL), w cells. */
static void assert_row(int y, int w, const char *want)
{
    char *got = text_at(ROW + y, COL, w);
    assert_string_equal(got, want);
    free(got);
}

static void assert_cursor_at(int y, int x)
{
    assert_int_equal(cursor_y, y);
    assert_int_equal(cursor_x, x);
}

static void assert_ta_cursor(struct textarea *ta, size_t line, int col)
{
    size_t l;
    int c;
    textarea_cursor(ta, &l, &c);
    assert_int_equal(l, line);
    assert_int_equal(c, col);
}

/* ---- text area ---- */

static void test_textarea_typing_lines(void **state)
{
    struct textarea *ta = textarea_new(NULL, 4, 0);
    struct widget *wd = textarea_widget(ta);

    assert_string_equal(textarea_value(ta), "");
    assert_int_equal(textarea_line_count(ta), 1);
    type(wd, "ab");
    assert_int_equal(key(wd, '\r'), EDITED);
    type(wd, "基c");
    assert_string_equal(textarea_value(ta), "ab\n基c");
    assert_int_equal(textarea_line_count(ta), 2);
    assert_ta_cursor(ta, 1, 3);
    draw(wd, 10, true);
    assert_row(0, 10, "ab        ");
    assert_row(1, 10, "基c       ");
    assert_row(2, 10, "          ");
    assert_row(3, 10, "          ");
    assert_cursor_at(ROW + 1, COL + 3);
    assert_int_equal(wd->ops->height(wd, 10), 4);
    assert_int_equal(wd->ops->height(wd, 80), 4);

    /* Enter in the middle splits the line; KEY_ENTER and '\n' too. */
    assert_int_equal(fkey(wd, KEY_LEFT), MOVED);
    assert_int_equal(fkey(wd, KEY_ENTER), EDITED);
    assert_string_equal(textarea_value(ta), "ab\n基\nc");
    assert_ta_cursor(ta, 2, 0);
    assert_int_equal(key(wd, '\n'), EDITED);
    assert_string_equal(textarea_value(ta), "ab\n基\n\nc");
    draw(wd, 10, true);
    assert_row(3, 10, "c         ");
    assert_cursor_at(ROW + 3, COL);
    textarea_free(ta);
}

static void test_textarea_goal_column(void **state)
{
    struct textarea *ta = textarea_new("hello world\nab\nsecond line", 6, 0);
    struct widget *wd = textarea_widget(ta);

    assert_ta_cursor(ta, 0, 0); /* set puts the cursor at the top */
    assert_int_equal(fkey(wd, KEY_END), MOVED);
    assert_int_equal(fkey(wd, KEY_DOWN), MOVED);
    assert_ta_cursor(ta, 1, 2); /* "ab" is shorter: its end */
    assert_int_equal(fkey(wd, KEY_DOWN), MOVED);
    assert_ta_cursor(ta, 2, 11);                          /* the column comes back */
    assert_int_equal(fkey(wd, KEY_DOWN), WIDGET_IGNORED); /* last line: the form's */
    assert_int_equal(key(wd, ctrl('P')), MOVED);
    assert_int_equal(fkey(wd, KEY_UP), MOVED);
    assert_ta_cursor(ta, 0, 11);
    assert_int_equal(fkey(wd, KEY_UP), WIDGET_IGNORED);
    assert_int_equal(key(wd, ctrl('P')), WIDGET_IGNORED);

    /* A sideways move sets a new goal. */
    assert_int_equal(key(wd, ctrl('A')), MOVED);
    for (int i = 0; i < 3; i++)
        assert_int_equal(fkey(wd, KEY_RIGHT), MOVED);
    assert_int_equal(key(wd, ctrl('N')), MOVED);
    assert_ta_cursor(ta, 1, 2);
    assert_int_equal(key(wd, ctrl('N')), MOVED);
    assert_ta_cursor(ta, 2, 3);

    /* Left and right cross line ends. */
    assert_int_equal(fkey(wd, KEY_HOME), MOVED);
    assert_int_equal(fkey(wd, KEY_LEFT), MOVED);
    assert_ta_cursor(ta, 1, 2);
    assert_int_equal(key(wd, ctrl('F')), MOVED);
    assert_ta_cursor(ta, 2, 0);
    assert_int_equal(key(wd, ctrl('E')), MOVED);
    assert_int_equal(fkey(wd, KEY_RIGHT), WIDGET_HANDLED); /* the very end */
    assert_int_equal(alt(wd, '<'), MOVED);
    assert_ta_cursor(ta, 0, 0);
    assert_int_equal(fkey(wd, KEY_LEFT), WIDGET_HANDLED);
    assert_int_equal(alt(wd, '>'), MOVED);
    assert_ta_cursor(ta, 2, 11);
    assert_int_equal(alt(wd, 'b'), MOVED);
    assert_ta_cursor(ta, 2, 7);
    assert_int_equal(alt(wd, 'b'), MOVED);
    assert_ta_cursor(ta, 2, 0);
    assert_int_equal(alt(wd, 'f'), MOVED);
    assert_ta_cursor(ta, 2, 6);
    textarea_free(ta);
}

static void test_textarea_joins_and_kills(void **state)
{
    struct textarea *ta = textarea_new("ab\ncd", 4, 0);
    struct widget *wd = textarea_widget(ta);

    assert_int_equal(fkey(wd, KEY_BACKSPACE), WIDGET_HANDLED); /* nothing before */
    assert_int_equal(fkey(wd, KEY_DOWN), MOVED);
    assert_int_equal(fkey(wd, KEY_BACKSPACE), EDITED);
    assert_string_equal(textarea_value(ta), "abcd");
    assert_ta_cursor(ta, 0, 2);
    assert_int_equal(key(wd, '\r'), EDITED);
    assert_int_equal(key(wd, 127), EDITED); /* DEL joins the same way */
    assert_string_equal(textarea_value(ta), "abcd");
    assert_int_equal(key(wd, '\r'), EDITED);
    assert_int_equal(fkey(wd, KEY_LEFT), MOVED);
    assert_int_equal(fkey(wd, KEY_DC), EDITED);
    assert_string_equal(textarea_value(ta), "abcd");
    assert_int_equal(key(wd, ctrl('K')), EDITED);
    assert_string_equal(textarea_value(ta), "ab");
    assert_int_equal(key(wd, ctrl('K')), WIDGET_HANDLED);
    assert_int_equal(key(wd, ctrl('D')), WIDGET_HANDLED);

    /* Ctrl-K at a line end kills the break; Ctrl-Y gives it back. */
    textarea_set(ta, "one\ntwo");
    assert_int_equal(key(wd, ctrl('E')), MOVED);
    assert_int_equal(key(wd, ctrl('K')), EDITED);
    assert_string_equal(textarea_value(ta), "onetwo");
    assert_int_equal(textarea_line_count(ta), 1);
    assert_int_equal(key(wd, ctrl('Y')), EDITED);
    assert_string_equal(textarea_value(ta), "one\ntwo");
    assert_ta_cursor(ta, 1, 0);

    /* Ctrl-U kills to the line start, Ctrl-W a word; Ctrl-Y yanks either. */
    assert_int_equal(fkey(wd, KEY_RIGHT), MOVED);
    assert_int_equal(fkey(wd, KEY_RIGHT), MOVED);
    assert_int_equal(key(wd, ctrl('U')), EDITED);
    assert_string_equal(textarea_value(ta), "one\no");
    assert_int_equal(key(wd, ctrl('Y')), EDITED);
    assert_string_equal(textarea_value(ta), "one\ntwo");
    textarea_set(ta, "python train.py --lr 3");
    assert_int_equal(alt(wd, '>'), MOVED);
    assert_int_equal(key(wd, ctrl('W')), EDITED);
    assert_int_equal(key(wd, ctrl('W')), EDITED);
    assert_string_equal(textarea_value(ta), "python train.py ");
    textarea_free(ta);
}

static void test_textarea_vertical_scroll(void **state)
{
    struct textarea *ta = textarea_new("l1\nl2\nl3\nl4\nl5\nl6\nl7\nl8\nl9\nl10", 3, 0);
    struct widget *wd = textarea_widget(ta);

    assert_int_equal(textarea_line_count(ta), 10);
    draw(wd, 6, true);
    assert_row(0, 6, "l1    ");
    assert_row(2, 6, "l3    ");
    assert_int_equal(textarea_top(ta), 0);

    assert_int_equal(alt(wd, '>'), MOVED);
    draw(wd, 6, true);
    assert_int_equal(textarea_top(ta), 7);
    assert_row(0, 6, "l8    ");
    assert_row(2, 6, "l10   ");
    assert_cursor_at(ROW + 2, COL + 3);

    for (int i = 0; i < 3; i++)
        assert_int_equal(fkey(wd, KEY_UP), MOVED);
    draw(wd, 6, true);
    assert_int_equal(textarea_top(ta), 6);
    assert_row(0, 6, "l7    ");
    assert_cursor_at(ROW, COL + 2);

    /* Pages move by the visible height, and stop at the ends. */
    assert_int_equal(fkey(wd, KEY_PPAGE), MOVED);
    assert_ta_cursor(ta, 3, 2);
    assert_int_equal(fkey(wd, KEY_PPAGE), MOVED);
    assert_ta_cursor(ta, 0, 2);
    assert_int_equal(fkey(wd, KEY_PPAGE), WIDGET_IGNORED);
    draw(wd, 6, true);
    assert_int_equal(textarea_top(ta), 0);
    assert_int_equal(fkey(wd, KEY_NPAGE), MOVED);
    assert_int_equal(fkey(wd, KEY_NPAGE), MOVED);
    assert_int_equal(fkey(wd, KEY_NPAGE), MOVED);
    assert_ta_cursor(ta, 9, 3); /* the goal column, from the first move up */
    assert_int_equal(fkey(wd, KEY_NPAGE), WIDGET_IGNORED);

    /* Fewer lines than the area: no blank lines kept below the text. */
    draw(wd, 6, true);
    textarea_set(ta, "a\nb");
    draw(wd, 6, true);
    assert_int_equal(textarea_top(ta), 0);
    assert_row(0, 6, "a     ");
    assert_row(1, 6, "b     ");
    assert_row(2, 6, "      ");
    textarea_free(ta);
}

static void test_textarea_horizontal_scroll(void **state)
{
    struct textarea *ta = textarea_new("0123456789abcdef\nshort\nlong line here!", 3, 0);
    struct widget *wd = textarea_widget(ta);

    draw(wd, 8, true);
    assert_row(0, 8, "0123456>");
    assert_row(1, 8, "short   ");
    assert_row(2, 8, "long li>");
    assert_int_equal(key(wd, ctrl('E')), MOVED);
    draw(wd, 8, true);
    assert_row(0, 8, "<abcdef ");
    assert_row(2, 8, "long li>"); /* other lines show their start */
    assert_cursor_at(ROW, COL + 7);

    /* Another line: the scroll is that line's own. */
    assert_int_equal(fkey(wd, KEY_DOWN), MOVED);
    draw(wd, 8, true);
    assert_row(0, 8, "0123456>");
    assert_row(1, 8, "short   ");
    assert_cursor_at(ROW + 1, COL + 5);
    assert_int_equal(fkey(wd, KEY_DOWN), MOVED);
    assert_ta_cursor(ta, 2, 15);
    draw(wd, 8, true);
    assert_row(2, 8, "< here! "); /* 'e' hides under the '<' */
    assert_cursor_at(ROW + 2, COL + 7);
    textarea_free(ta);
}

static void test_textarea_cjk_and_tabs(void **state)
{
    struct textarea *ta = textarea_new("基线测试数据\nabcde", 3, 0);
    struct widget *wd = textarea_widget(ta);

    draw(wd, 7, true);
    assert_row(0, 7, "基线测>"); /* 试 would cross the marker: not drawn */
    assert_row(1, 7, "abcde  ");

    /* The goal column in cells: column 3 is inside 线, so the cursor stops before it. */
    assert_int_equal(fkey(wd, KEY_DOWN), MOVED);
    for (int i = 0; i < 3; i++)
        assert_int_equal(fkey(wd, KEY_RIGHT), MOVED);
    assert_int_equal(fkey(wd, KEY_UP), MOVED);
    assert_ta_cursor(ta, 0, 2);
    assert_int_equal(fkey(wd, KEY_DOWN), MOVED);
    assert_ta_cursor(ta, 1, 3);
    assert_int_equal(fkey(wd, KEY_UP), MOVED);
    assert_int_equal(key(wd, ctrl('E')), MOVED);
    assert_ta_cursor(ta, 0, 12);
    draw(wd, 7, true);
    assert_row(0, 7, "< 数据 "); /* 试 would cross the '<': its cell stays blank */
    assert_cursor_at(ROW, COL + 6);

    /* Combining marks stay with their base; a tab takes cells to the next stop. */
    textarea_set(ta, "e\xcc\x81x\na\tb");
    assert_int_equal(fkey(wd, KEY_RIGHT), MOVED);
    assert_ta_cursor(ta, 0, 1);
    draw(wd, 12, true);
    assert_row(0, 12, "e\xcc\x81x          ");
    assert_row(1, 12, "a       b   ");
    assert_int_equal(fkey(wd, KEY_DOWN), MOVED);
    assert_int_equal(key(wd, ctrl('E')), MOVED);
    assert_ta_cursor(ta, 1, 9);
    assert_int_equal(fkey(wd, KEY_LEFT), MOVED);
    assert_int_equal(fkey(wd, KEY_LEFT), MOVED);
    assert_ta_cursor(ta, 1, 1);
    textarea_free(ta);
}

static void test_textarea_round_trip(void **state)
{
    const char *script = "#!/bin/sh\necho 基线 \xe2\x9c\x93\n\n\tcd /data && exit 0\n";
    struct textarea *ta = textarea_new(script, 6, 0);

    assert_string_equal(textarea_value(ta), script);
    assert_int_equal(textarea_line_count(ta), 5);
    textarea_set(ta, "a\r\nb\r\n");
    assert_string_equal(textarea_value(ta), "a\nb\n");
    assert_int_equal(textarea_line_count(ta), 3);
    textarea_set(ta, NULL);
    assert_string_equal(textarea_value(ta), "");
    assert_int_equal(textarea_line_count(ta), 1);
    assert_ptr_equal(textarea_from_widget(textarea_widget(ta)), ta);
    assert_null(textarea_from_widget(NULL));
    assert_string_equal(textarea_widget(ta)->ops->kind, "textarea");
    textarea_free(ta);
    textarea_free(NULL);

    /* max_chars counts line breaks; Tab and Shift-Tab belong to the form. */
    ta = textarea_new("abcdefgh", 2, 5);
    struct widget *wd = textarea_widget(ta);
    assert_string_equal(textarea_value(ta), "abcde");
    textarea_set(ta, "abc");
    assert_int_equal(key(wd, ctrl('E')), MOVED);
    assert_int_equal(key(wd, '\r'), EDITED);
    assert_int_equal(key(wd, 'd'), EDITED);
    assert_int_equal(key(wd, 'e'), WIDGET_HANDLED);
    assert_int_equal(key(wd, '\r'), WIDGET_HANDLED);
    assert_string_equal(textarea_value(ta), "abc\nd");
    assert_int_equal(key(wd, '\t'), WIDGET_IGNORED);
    assert_int_equal(fkey(wd, KEY_BTAB), WIDGET_IGNORED);
    assert_int_equal(key(wd, 0x1b), WIDGET_IGNORED);
    assert_int_equal(alt(wd, 'x'), WIDGET_IGNORED);
    assert_int_equal(altf(wd, KEY_UP), WIDGET_IGNORED);
    wd->ops->destroy(wd);
}

static void test_textarea_gutter_placeholder_disabled(void **state)
{
    struct textarea *ta = textarea_new(NULL, 3, 0);
    struct widget *wd = textarea_widget(ta);

    textarea_set_placeholder(ta, "python train.py\n--epochs 3");
    draw(wd, 10, true);
    assert_row(0, 10, "python tr>");
    assert_row(1, 10, "--epochs 3");
    assert_row(2, 10, "          ");
    assert_true(attr_at(ROW, COL) & A_DIM);
    assert_true(attr_at(ROW + 1, COL + 9) & A_DIM);
    assert_cursor_at(ROW, COL);

    textarea_set(ta, "abc\nd");
    textarea_set_line_numbers(ta, true);
    assert_true(wd->dirty);
    draw(wd, 10, true);
    assert_false(wd->dirty);
    assert_row(0, 10, " 1 abc    ");
    assert_row(1, 10, " 2 d      ");
    assert_row(2, 10, "          ");
    assert_true(attr_at(ROW, COL + 1) & A_DIM);
    assert_false(attr_at(ROW, COL + 3) & A_DIM);
    assert_cursor_at(ROW, COL + 3);

    /* Disabled: dim, every key ignored; the window's attributes come back. */
    wd->disabled = true;
    assert_int_equal(key(wd, 'x'), WIDGET_IGNORED);
    assert_int_equal(key(wd, '\r'), WIDGET_IGNORED);
    assert_int_equal(fkey(wd, KEY_DOWN), WIDGET_IGNORED);
    assert_false(wd->dirty);
    draw(wd, 10, false);
    assert_true(attr_at(ROW, COL + 3) & A_DIM);
    attr_t a;
    short p;
    wattr_get(win, &a, &p, NULL);
    assert_int_equal(a, A_NORMAL);
    textarea_free(ta);
}

/* ---- list editor, with a fake owner whose rows are text fields ---- */

struct owner {
    struct textfield *row[32];
    size_t n;
    int height;      /* lines per row: 1, or 2 ("rule N" above the field) */
    bool ask;        /* removal only records the request (a confirmation) */
    size_t asked;    /* the row removal was asked for */
    int serial;      /* names new rows r1, r2, … */
    int focus_calls; /* focus_row calls */
    size_t entered;  /* the last row focus_row entered */
    bool from_below;
};

static size_t owner_count(void *ctx)
{
    return ((struct owner *)ctx)->n;
}

static int owner_height(void *ctx, size_t row, int w)
{
    return ((struct owner *)ctx)->height;
}

/* "rule N" and the field, on one line or two. */
static void owner_draw(void *ctx, size_t row, WINDOW *w_, int y, int x, int w, bool focused)
{
    struct owner *o = ctx;
    struct strbuf sb = STRBUF_INIT;
    struct widget *wd = textfield_widget(o->row[row]);
    strbuf_addf(&sb, "rule %zu", row + 1);
    mvwaddstr(w_, y, x, strbuf_str(&sb));
    strbuf_free(&sb);
    if (o->height == 1)
        wd->ops->draw(wd, w_, y, x + 8, w - 8, focused);
    else
        wd->ops->draw(wd, w_, y + 1, x + 2, w - 2, focused);
}

static unsigned owner_key(void *ctx, size_t row, const struct widget_key *k)
{
    struct widget *wd = textfield_widget(((struct owner *)ctx)->row[row]);
    return wd->ops->key(wd, k);
}

static void owner_add(void *ctx, size_t at)
{
    struct owner *o = ctx;
    struct strbuf sb = STRBUF_INIT;
    strbuf_addf(&sb, "r%d", ++o->serial);
    memmove(o->row + at + 1, o->row + at, (o->n - at) * sizeof o->row[0]);
    o->row[at] = textfield_new(strbuf_str(&sb), 0);
    o->n++;
    strbuf_free(&sb);
}

static void owner_remove_now(struct owner *o, size_t row)
{
    textfield_free(o->row[row]);
    memmove(o->row + row, o->row + row + 1, (o->n - row - 1) * sizeof o->row[0]);
    o->n--;
}

static void owner_remove(void *ctx, size_t row)
{
    struct owner *o = ctx;
    if (o->ask)
        o->asked = row;
    else
        owner_remove_now(o, row);
}

static void owner_move(void *ctx, size_t from, size_t to)
{
    struct owner *o = ctx;
    struct textfield *t = o->row[from];
    if (from < to)
        memmove(o->row + from, o->row + from + 1, (to - from) * sizeof o->row[0]);
    else
        memmove(o->row + to + 1, o->row + to, (from - to) * sizeof o->row[0]);
    o->row[to] = t;
}

static void owner_focus(void *ctx, size_t row, bool from_below)
{
    struct owner *o = ctx;
    o->focus_calls++;
    o->entered = row;
    o->from_below = from_below;
}

static const struct listedit_ops owner_ops = {
    .count = owner_count,
    .row_height = owner_height,
    .draw_row = owner_draw,
    .row_key = owner_key,
    .add_row = owner_add,
    .remove_row = owner_remove,
    .move_row = owner_move,
    .focus_row = owner_focus,
};

static void owner_free(struct owner *o)
{
    while (o->n > 0)
        owner_remove_now(o, o->n - 1);
}

/* The owner's rows' values, joined by spaces. */
static void assert_rows(const struct owner *o, const char *want)
{
    struct strbuf sb = STRBUF_INIT;
    for (size_t i = 0; i < o->n; i++) {
        if (i > 0)
            strbuf_addc(&sb, ' ');
        strbuf_adds(&sb, textfield_value(o->row[i]));
    }
    assert_string_equal(strbuf_str(&sb), want);
    strbuf_free(&sb);
}

static void test_listedit_add_move_remove(void **state)
{
    struct owner o = {.height = 1};
    struct listedit *le = listedit_new(&owner_ops, &o, 0);
    struct widget *wd = listedit_widget(le);

    assert_int_equal(wd->ops->height(wd, 30), 1); /* the hint */
    assert_int_equal(alt(wd, 'n'), EDITED);
    assert_rows(&o, "r1");
    assert_int_equal(alt(wd, 'N'), EDITED);
    assert_rows(&o, "r1 r2");
    assert_int_equal(listedit_focused(le), 1);
    assert_int_equal(fkey(wd, KEY_UP), MOVED);
    assert_int_equal(listedit_focused(le), 0);
    assert_true(o.from_below);
    assert_int_equal(alt(wd, 'n'), EDITED); /* after the focused row */
    assert_rows(&o, "r1 r3 r2");
    assert_int_equal(listedit_focused(le), 1);
    assert_int_equal(fkey(wd, KEY_IC), EDITED);
    assert_rows(&o, "r1 r3 r4 r2");
    assert_int_equal(listedit_focused(le), 2);
    assert_int_equal(wd->ops->height(wd, 30), 4);

    /* Moves: the focus goes with the row. */
    assert_int_equal(altf(wd, KEY_UP), EDITED);
    assert_rows(&o, "r1 r4 r3 r2");
    assert_int_equal(listedit_focused(le), 1);
    assert_int_equal(altf(wd, KEY_DOWN), EDITED);
    assert_int_equal(altf(wd, KEY_DOWN), EDITED);
    assert_rows(&o, "r1 r3 r2 r4");
    assert_int_equal(listedit_focused(le), 3);
    assert_int_equal(altf(wd, KEY_DOWN), WIDGET_HANDLED);
    listedit_set_focus(le, 0);
    assert_int_equal(altf(wd, KEY_UP), WIDGET_HANDLED);

    /* Removal: Alt-D and Alt-Delete; the focus stays in place or on the new last row. */
    listedit_set_focus(le, 99);
    assert_int_equal(listedit_focused(le), 3);
    assert_int_equal(alt(wd, 'd'), EDITED);
    assert_rows(&o, "r1 r3 r2");
    assert_int_equal(listedit_focused(le), 2);
    assert_int_equal(altf(wd, KEY_DC), EDITED);
    assert_rows(&o, "r1 r3");
    assert_int_equal(listedit_focused(le), 1);

    /* Keys go to the focused row first. */
    type(wd, "x");
    assert_rows(&o, "r1 r3x");
    assert_true(wd->dirty);
    draw(wd, 20, true);
    assert_false(wd->dirty);
    assert_row(0, 20, "rule 1  r1          ");
    assert_row(1, 20, "rule 2  r3x         ");
    assert_cursor_at(ROW + 1, COL + 8 + 3);

    /* Between rows; past either end the form's. */
    assert_int_equal(fkey(wd, KEY_DOWN), WIDGET_IGNORED);
    assert_int_equal(key(wd, '\t'), WIDGET_IGNORED);
    assert_int_equal(fkey(wd, KEY_BTAB), MOVED);
    assert_int_equal(o.entered, 0);
    assert_true(o.from_below);
    assert_int_equal(fkey(wd, KEY_UP), WIDGET_IGNORED);
    assert_int_equal(fkey(wd, KEY_BTAB), WIDGET_IGNORED);
    assert_int_equal(key(wd, '\t'), MOVED);
    assert_int_equal(o.entered, 1);
    assert_false(o.from_below);
    assert_int_equal(alt(wd, 'z'), WIDGET_IGNORED);
    assert_int_equal(fkey(wd, KEY_F(2)), WIDGET_IGNORED);

    assert_ptr_equal(listedit_from_widget(wd), le);
    assert_null(listedit_from_widget(textfield_widget(o.row[0])));
    wd->ops->destroy(wd);
    owner_free(&o);
}

static void test_listedit_limit_and_row_bits(void **state)
{
    struct owner o = {.height = 2};
    struct listedit *le = listedit_new(&owner_ops, &o, 2);
    struct widget *wd = listedit_widget(le);

    assert_false(listedit_at_limit(le));
    assert_int_equal(alt(wd, 'n'), EDITED);
    assert_int_equal(alt(wd, 'n'), EDITED);
    assert_true(listedit_at_limit(le));
    assert_int_equal(alt(wd, 'n'), WIDGET_HANDLED | WIDGET_REDRAW); /* refused, visibly */
    assert_true(listedit_refused(le));
    assert_int_equal(fkey(wd, KEY_IC), WIDGET_HANDLED | WIDGET_REDRAW);
    assert_int_equal(o.n, 2);
    /* What was meant for the refused row (text, Tab, Enter) lands in no row; Esc ends it. */
    assert_int_equal(key(wd, 'x'), WIDGET_HANDLED);
    assert_int_equal(key(wd, '\t'), WIDGET_HANDLED);
    assert_int_equal(key(wd, '\r'), WIDGET_HANDLED);
    assert_true(listedit_refused(le));
    assert_int_equal(key(wd, 27), WIDGET_HANDLED | WIDGET_REDRAW);
    assert_false(listedit_refused(le));
    assert_int_equal(wd->ops->height(wd, 30), 4);

    /* Tall rows: the cursor is where the focused row's field put it. */
    draw(wd, 20, true);
    assert_row(0, 20, "rule 1              ");
    assert_row(1, 20, "  r1                ");
    assert_row(2, 20, "rule 2              ");
    assert_row(3, 20, "  r2                ");
    assert_cursor_at(ROW + 3, COL + 2 + 2);

    /* Enter in a row's field: the next row, and from the last row up to the form. */
    listedit_set_focus(le, 0);
    assert_int_equal(key(wd, '\r'), MOVED);
    assert_int_equal(listedit_focused(le), 1);
    assert_int_equal(key(wd, '\r'), WIDGET_FOCUS_NEXT | WIDGET_HANDLED);
    assert_int_equal(listedit_focused(le), 1);

    /* A removal the owner asks about first: nothing yet, then the owner says so. */
    o.ask = true;
    assert_int_equal(alt(wd, 'd'), WIDGET_HANDLED | WIDGET_REDRAW);
    assert_int_equal(o.n, 2);
    assert_int_equal(o.asked, 1);
    owner_remove_now(&o, o.asked);
    listedit_changed(le);
    assert_true(wd->dirty);
    assert_int_equal(listedit_focused(le), 0);
    assert_false(listedit_at_limit(le));
    listedit_free(le);
    owner_free(&o);
}

static void test_listedit_empty_and_disabled(void **state)
{
    struct owner o = {.height = 1};
    struct listedit *le = listedit_new(&owner_ops, &o, 20);
    struct widget *wd = listedit_widget(le);

    draw(wd, 30, true);
    assert_row(0, 30, "empty \xe2\x80\x94 Alt-N adds a row      ");
    assert_true(attr_at(ROW, COL) & A_DIM);
    assert_cursor_at(ROW, COL);
    listedit_set_empty_hint(le, "no variables \xe2\x80\x94 Alt-N adds one\x1b[31m");
    draw(wd, 30, false);
    assert_row(0, 30, "no variables \xe2\x80\x94 Alt-N adds one ");
    assert_int_equal(alt(wd, 'd'), WIDGET_HANDLED);
    assert_int_equal(fkey(wd, KEY_UP), WIDGET_IGNORED);
    assert_int_equal(fkey(wd, KEY_DOWN), WIDGET_IGNORED);
    assert_int_equal(key(wd, '\t'), WIDGET_IGNORED);
    assert_int_equal(key(wd, 'x'), WIDGET_IGNORED);
    assert_int_equal(listedit_focused(le), 0);

    /* Disabled: the note above the rows, all dim, rows unfocused, keys ignored. */
    owner_add(&o, 0);
    owner_add(&o, 1);
    listedit_set_note(le, "no effect while max restarts is 0");
    assert_int_equal(wd->ops->height(wd, 40), 2); /* the note shows only while disabled */
    wd->disabled = true;
    assert_int_equal(wd->ops->height(wd, 40), 3);
    assert_int_equal(alt(wd, 'n'), WIDGET_IGNORED);
    assert_int_equal(key(wd, 'x'), WIDGET_IGNORED);
    assert_int_equal(o.n, 2);
    draw(wd, 40, true);
    assert_row(0, 40, "no effect while max restarts is 0       ");
    assert_row(1, 40, "rule 1  r1                              ");
    assert_row(2, 40, "rule 2  r2                              ");
    for (int y = 0; y < 3; y++)
        assert_true(attr_at(ROW + y, COL) & A_DIM);
    assert_true(attr_at(ROW + 1, COL + 8) & A_DIM);
    attr_t a;
    short p;
    wattr_get(win, &a, &p, NULL);
    assert_int_equal(a, A_NORMAL);
    listedit_free(le);
    listedit_free(NULL);
    owner_free(&o);
}

/* ---- form ---- */

/* A form of n text fields labelled "field 1" … with help "help N". */
static struct form *numbered_form(int n)
{
    struct form *f = form_new();
    for (int i = 1; i <= n; i++) {
        struct strbuf label = STRBUF_INIT, help = STRBUF_INIT;
        strbuf_addf(&label, "field %d", i);
        strbuf_addf(&help, "help %d", i);
        form_add(f, strbuf_str(&label), textfield_widget(textfield_new(NULL, 0)),
                 strbuf_str(&help));
        strbuf_free(&label);
        strbuf_free(&help);
    }
    return f;
}

static const char *field_value(struct form *f, size_t entry)
{
    return textfield_value(textfield_from_widget(form_widget_at(f, entry)));
}

static void test_form_labels_aligned(void **state)
{
    const struct widget_palette *mono = widget_palette_mono();
    struct form *f = form_new();

    assert_int_equal(form_focused(f), FORM_NO_ENTRY);
    assert_int_equal(form_add(f, "name", textfield_widget(textfield_new("a", 0)), "lowercase"), 0);
    form_add(f, "display name", textfield_widget(textfield_new("基线", 0)), NULL);
    form_add(f, "工作空间", textfield_widget(textfield_new(NULL, 0)), NULL);
    assert_int_equal(form_count(f), 3);
    assert_int_equal(form_focused(f), 0);

    fdraw(f, 1, 2, 10, 40, mono);
    /* Label column: 12 cells ("display name") and a gap of 2. */
    assert_text(1, 2, "name          a ");
    assert_text(2, 2, "display name  基线 ");
    assert_text(3, 2, "工作空间      ");
    assert_cursor_at(1, 2 + 14 + 1);
    assert_true(attr_at(1, 2) & A_BOLD); /* the focused label */
    assert_false(attr_at(2, 2) & A_BOLD);
    assert_true(attr_at(1, 16) & A_UNDERLINE); /* the focused field, in the focus role */
    assert_false(attr_at(2, 16) & A_UNDERLINE);
    assert_text(10, 2, "lowercase "); /* the help line */
    assert_true(attr_at(10, 2) & A_DIM);
    int y, x, w;
    assert_true(form_entry_pos(f, 2, &y, &x, &w));
    assert_int_equal(y, 3);
    assert_int_equal(x, 16);
    assert_int_equal(w, 26);

    /* A hidden label no longer sets the column. */
    form_set_hidden(f, 1, true);
    fdraw(f, 1, 2, 10, 40, mono);
    assert_text(1, 2, "name      a");
    assert_text(2, 2, "工作空间  ");
    assert_false(form_entry_pos(f, 1, NULL, NULL, NULL));

    /* Long labels are cut with "…" at 24 cells (a third of a narrow form). */
    form_set_label(f, 0, "a very long label that goes on and on");
    werase(win);
    fdraw(f, 0, 0, 10, 80, mono);
    assert_text(0, 0, "a very long label that \xe2\x80\xa6  a");
    werase(win);
    fdraw(f, 0, 0, 10, 30, mono);
    assert_text(0, 0, "a very lo\xe2\x80\xa6  a");
    form_set_utf8(f, false);
    fdraw(f, 0, 0, 10, 30, mono);
    assert_text(0, 0, "a very lo~  a");
    form_free(f);
    form_free(NULL);
}

static void test_form_message_line(void **state)
{
    struct form *f = numbered_form(3);
    wchar_t wch[CCHARW_MAX + 1];
    attr_t a;
    short pair;
    const char *text;

    assert_int_equal(form_message(f, 1, &text), FORM_MESSAGE_NONE);
    assert_null(text);
    form_set_message(f, 1, FORM_MESSAGE_ERROR, "must be 1..63 characters");
    assert_int_equal(form_message(f, 1, &text), FORM_MESSAGE_ERROR);
    assert_string_equal(text, "must be 1..63 characters");
    fdraw(f, 0, 0, 12, 60, &colour);
    /* "field 1" is 7 cells: widgets start at 9. */
    assert_text(0, 0, "field 1  ");
    assert_text(1, 0, "field 2  ");
    assert_text(2, 0, "         \xe2\x9c\x97 must be 1..63 characters ");
    assert_text(3, 0, "field 3  ");
    cell(2, 9, wch, &a, &pair);
    assert_int_equal(wch[0], 0x2717);
    assert_true(a & A_BOLD);
    assert_int_equal(pair, ERROR_PAIR);
    assert_int_equal(pair_at(2, 11), ERROR_PAIR);
    assert_true(attr_at(2, 11) & A_BOLD);
    assert_false(attr_at(2, 0) & A_BOLD); /* the label column stays plain */
    assert_int_equal(pair_at(2, 0), 0);
    assert_int_equal(pair_at(2, 40), 0); /* only the text is coloured */

    /* Warning and ok, each under its own field; lines below move down. */
    form_set_message(f, 2, FORM_MESSAGE_WARNING, "rule 3: 201 is shadowed by rule 1");
    form_set_message(f, 0, FORM_MESSAGE_OK, "available");
    assert_true(form_needs_draw(f));
    fdraw(f, 0, 0, 12, 60, &colour);
    assert_text(1, 9, "\xe2\x9c\x93 available");
    assert_int_equal(pair_at(1, 9), OK_PAIR);
    assert_text(2, 0, "field 2  ");
    assert_text(3, 9, "\xe2\x9c\x97 must");
    assert_text(4, 0, "field 3  ");
    assert_text(5, 9, "! rule 3: 201 is shadowed by rule 1");
    assert_int_equal(char_at(5, 9), '!');
    assert_int_equal(pair_at(5, 9), WARNING_PAIR);

    /* In the mono palette the roles are attributes; in ASCII the icons too. */
    form_set_utf8(f, false);
    fdraw(f, 0, 0, 12, 60, widget_palette_mono());
    assert_text(1, 9, "+ available");
    assert_text(3, 9, "x must");
    assert_true(attr_at(3, 9) & A_BOLD);
    assert_true(attr_at(5, 9) & A_UNDERLINE);
    form_set_utf8(f, true);

    /* Clearing a message closes its line. */
    form_set_message(f, 0, FORM_MESSAGE_NONE, "ignored");
    form_set_message(f, 1, FORM_MESSAGE_ERROR, NULL);
    werase(win);
    fdraw(f, 0, 0, 12, 60, &colour);
    assert_text(0, 0, "field 1  ");
    assert_text(1, 0, "field 2  ");
    assert_text(2, 0, "field 3  ");
    assert_text(3, 9, "! rule 3");

    /* A long message wraps at spaces to its whole length, nothing cut (issue 22: the path to use). */
    form_set_message(f, 0, FORM_MESSAGE_ERROR,
                     "roles[0].total_replicas: must be 1..8 on this pool, which has "
                     "8 nodes of 8 devices; ask the owner of the workspace for a larger "
                     "pool or lower the replicas");
    werase(win);
    fdraw(f, 0, 0, 12, 40, &colour);
    /* Widgets at 9, 31 cells; text after the icon: 29. */
    assert_text(1, 9, "\xe2\x9c\x97 roles[0].total_replicas: must");
    assert_text(2, 11, "be 1..8 on this pool, which  ");
    assert_text(3, 11, "has 8 nodes of 8 devices; ask");
    assert_text(4, 11, "the owner of the workspace   ");
    assert_text(5, 11, "for a larger pool or lower   ");
    assert_text(6, 11, "the replicas");
    assert_text(7, 0, "field 2");
    form_free(f);
}

static void test_form_focus_moves(void **state)
{
    struct form *f = numbered_form(5);

    form_set_hidden(f, 1, true);
    form_set_disabled(f, 3, true, NULL);
    assert_true(form_hidden(f, 1));
    assert_true(form_widget_at(f, 3)->disabled);
    assert_int_equal(form_focused(f), 0);
    assert_string_equal(form_help(f), "help 1");

    assert_int_equal(fsend(f, '\t', false), MOVED);
    assert_int_equal(form_focused(f), 2);
    assert_int_equal(fsend(f, KEY_DOWN, true), MOVED);
    assert_int_equal(form_focused(f), 4);
    assert_int_equal(fsend(f, '\t', false), WIDGET_FOCUS_NEXT | WIDGET_HANDLED);
    assert_int_equal(fsend(f, KEY_DOWN, true), WIDGET_IGNORED);
    assert_int_equal(form_focused(f), 4);
    assert_int_equal(fsend(f, KEY_BTAB, true), MOVED);
    assert_int_equal(form_focused(f), 2);
    assert_int_equal(fsend(f, KEY_UP, true), MOVED);
    assert_int_equal(form_focused(f), 0);
    assert_int_equal(fsend(f, KEY_UP, true), WIDGET_IGNORED);
    assert_int_equal(fsend(f, KEY_BTAB, true), WIDGET_FOCUS_PREV | WIDGET_HANDLED);
    assert_int_equal(form_focused(f), 0);

    /* Enter in a text field: its FOCUS_NEXT moves the form, then bubbles from the last. */
    assert_int_equal(fsend(f, '\r', false), MOVED);
    assert_int_equal(form_focused(f), 2);
    ftype(f, "z");
    assert_string_equal(field_value(f, 2), "z");
    assert_int_equal(fsend(f, '\r', false), MOVED);
    assert_int_equal(fsend(f, '\r', false), WIDGET_FOCUS_NEXT | WIDGET_HANDLED);
    assert_int_equal(form_focused(f), 4);

    /* form_focus refuses hidden and disabled entries. */
    assert_false(form_focus(f, 1));
    assert_false(form_focus(f, 3));
    assert_false(form_focus(f, 99));
    assert_int_equal(form_focused(f), 4);
    assert_true(form_focus(f, 2));
    assert_int_equal(form_focused(f), 2);
    assert_int_equal(fsend(f, KEY_F(5), true), WIDGET_IGNORED);

    /* Keys the widget handles are not the form's: Left in a field. */
    assert_int_equal(fsend(f, KEY_LEFT, true), MOVED);
    assert_int_equal(form_focused(f), 2);
    form_free(f);
}

static void test_form_hide_focused(void **state)
{
    const struct widget_palette *mono = widget_palette_mono();
    struct form *f = numbered_form(4);

    assert_true(form_focus(f, 2));
    form_set_hidden(f, 2, true);
    assert_int_equal(form_focused(f), 3); /* the next visible one */
    form_set_hidden(f, 3, true);
    assert_int_equal(form_focused(f), 1); /* none after it: the one before */
    form_set_hidden(f, 2, false);
    assert_int_equal(form_focused(f), 1); /* showing an entry takes no focus */
    fdraw(f, 0, 0, 8, 40, mono);
    assert_text(0, 0, "field 1  ");
    assert_text(1, 0, "field 2  ");
    assert_text(2, 0, "field 3  ");
    assert_text(3, 0, "         "); /* 4 is hidden */
    assert_cursor_at(1, 9);

    /* Disabling the focused entry moves the focus; the note shows under it, dim. */
    form_set_disabled(f, 1, true, "no effect while max restarts is 0");
    assert_int_equal(form_focused(f), 2);
    fdraw(f, 0, 0, 8, 40, mono);
    assert_text(1, 0, "field 2  ");
    assert_text(2, 9, "no effect while max restarts is"); /* wrapped at 31 cells */
    assert_text(3, 9, "0 ");
    assert_true(attr_at(2, 9) & A_DIM);
    assert_true(attr_at(3, 9) & A_DIM);
    assert_true(attr_at(1, 0) & A_DIM); /* its label too */
    assert_text(4, 0, "field 3  ");
    assert_cursor_at(4, 9);
    form_set_disabled(f, 1, false, NULL);
    fdraw(f, 0, 0, 8, 40, mono);
    assert_text(2, 0, "field 3  ");

    /* The widget's own flag, set behind the form's back, counts as well. */
    form_widget_at(f, 2)->disabled = true;
    assert_int_equal(form_focused(f), 1);
    assert_true(form_needs_draw(f));
    assert_int_equal(fsend(f, '\t', false), WIDGET_FOCUS_NEXT | WIDGET_HANDLED);
    form_widget_at(f, 2)->disabled = false;

    /* Nothing to focus: Tab and Shift-Tab go up, other keys are ignored. */
    for (size_t i = 0; i < 4; i++)
        form_set_hidden(f, i, true);
    assert_int_equal(form_focused(f), FORM_NO_ENTRY);
    assert_null(form_help(f));
    assert_int_equal(fsend(f, '\t', false), WIDGET_FOCUS_NEXT | WIDGET_HANDLED);
    assert_int_equal(fsend(f, KEY_BTAB, true), WIDGET_FOCUS_PREV | WIDGET_HANDLED);
    assert_int_equal(fsend(f, 'x', false), WIDGET_IGNORED);
    fdraw(f, 0, 0, 8, 40, mono);
    assert_text(0, 0, "          ");
    form_set_hidden(f, 3, false);
    assert_int_equal(form_focused(f), 3);
    form_free(f);
}

/* The focused entry's widget is on screen and holds the cursor. */
static void assert_focus_visible(struct form *f, int body)
{
    int y, x;
    assert_true(form_entry_pos(f, form_focused(f), &y, &x, NULL));
    assert_in_range(y, 0, body - 1);
    assert_int_equal(cursor_y, y);
}

static void test_form_scroll(void **state)
{
    const struct widget_palette *mono = widget_palette_mono();
    struct form *f = numbered_form(15);

    /* 10 lines: 9 of fields and the help line. */
    fdraw(f, 0, 0, 10, 60, mono);
    assert_int_equal(form_scroll(f), 0);
    assert_text(0, 0, "field 1 ");
    assert_text(8, 0, "field 9 ");
    assert_text(9, 0, "help 1 ");
    assert_int_equal(char_at(9, 58), ' ');
    assert_int_equal(char_at(9, 59), 0x2193); /* more below */
    for (int i = 1; i < 15; i++) {
        assert_int_equal(fsend(f, '\t', false), MOVED);
        fdraw(f, 0, 0, 10, 60, mono);
        assert_focus_visible(f, 9);
    }
    assert_int_equal(form_scroll(f), 6);
    assert_text(0, 0, "field 7 ");
    assert_text(8, 0, "field 15");
    assert_text(9, 0, "help 15");
    assert_int_equal(char_at(9, 58), 0x2191); /* more above only */
    assert_int_equal(char_at(9, 59), ' ');

    /* The focused field's message stays in view with it. */
    form_set_message(f, 14, FORM_MESSAGE_ERROR, "required");
    fdraw(f, 0, 0, 10, 60, mono);
    assert_int_equal(form_scroll(f), 7);
    assert_text(7, 0, "field 15");
    assert_text(8, 10, "\xe2\x9c\x97 required");

    /* Going back up scrolls as little as it must. */
    for (int i = 0; i < 7; i++)
        assert_int_equal(fsend(f, KEY_UP, true), MOVED);
    fdraw(f, 0, 0, 10, 60, mono);
    assert_int_equal(form_scroll(f), 7); /* field 8 is still in view */
    assert_text(0, 0, "field 8 ");
    assert_int_equal(fsend(f, KEY_UP, true), MOVED);
    fdraw(f, 0, 0, 10, 60, mono);
    assert_int_equal(form_scroll(f), 6);
    assert_text(0, 0, "field 7 ");
    assert_focus_visible(f, 9);
    assert_true(form_focus(f, 0));
    fdraw(f, 0, 0, 10, 60, mono);
    assert_int_equal(form_scroll(f), 0);
    assert_focus_visible(f, 9);

    /* Without the help line the whole rectangle holds fields. */
    form_set_help_line(f, false);
    fdraw(f, 0, 0, 10, 60, mono);
    assert_text(9, 0, "field 10");
    assert_string_equal(form_help(f), "help 1");
    form_free(f);
}

static void test_form_resize(void **state)
{
    const struct widget_palette *mono = widget_palette_mono();
    struct form *f = numbered_form(30);

    fdraw(f, 0, 0, 40, 120, mono);
    for (int i = 0; i < 25; i++)
        fsend(f, '\t', false);
    assert_int_equal(form_focused(f), 25);
    ftype(f, "hello 基线");
    fdraw(f, 0, 0, 40, 120, mono);
    assert_int_equal(form_scroll(f), 0);
    assert_text(25, 0, "field 26  hello 基线 ");
    assert_cursor_at(25, 10 + 10);

    /* The terminal shrinks: same focus, same text, still in view, cursor on it. */
    wresize(win, 24, 80);
    fdraw(f, 0, 0, 24, 80, mono);
    assert_int_equal(form_focused(f), 25);
    assert_string_equal(field_value(f, 25), "hello 基线");
    assert_int_equal(form_scroll(f), 3);
    assert_focus_visible(f, 23);
    assert_text(22, 0, "field 26  hello 基线 ");
    assert_cursor_at(22, 20);
    assert_text(23, 0, "help 26");

    /* Typing goes on where it was. */
    ftype(f, "!");
    fdraw(f, 0, 0, 24, 80, mono);
    assert_text(22, 0, "field 26  hello 基线! ");

    /* Tiny, then back to large: the scroll comes back to the top when all fits. */
    fdraw(f, 0, 0, 4, 80, mono);
    assert_focus_visible(f, 3);
    wresize(win, 40, 120);
    fdraw(f, 0, 0, 40, 120, mono);
    assert_int_equal(form_scroll(f), 0);
    assert_text(25, 0, "field 26  hello 基线! ");
    assert_cursor_at(25, 21);
    form_free(f);
}

/* A widget that counts its draws. */
struct counter {
    struct widget base;
    int draws;
};

static void counter_draw(struct widget *wd, WINDOW *w_, int y, int x, int w, bool focused)
{
    wd->dirty = false;
    ((struct counter *)wd)->draws++;
    mvwaddstr(w_, y, x, "counted");
}

static unsigned counter_key(struct widget *wd, const struct widget_key *k)
{
    return WIDGET_IGNORED;
}

static int counter_height(const struct widget *wd, int w)
{
    return 1;
}

static void counter_destroy(struct widget *wd)
{
    free(wd);
}

static const struct widget_ops counter_ops = {
    .kind = "counter",
    .draw = counter_draw,
    .key = counter_key,
    .height = counter_height,
    .destroy = counter_destroy,
};

static void test_form_draws_only_dirty(void **state)
{
    const struct widget_palette *mono = widget_palette_mono();
    struct form *f = form_new();
    struct counter *c = calloc(1, sizeof *c);

    c->base.ops = &counter_ops;
    c->base.dirty = true;
    form_add(f, "name", textfield_widget(textfield_new(NULL, 0)), NULL);
    form_add(f, "count", &c->base, NULL);
    assert_true(form_needs_draw(f));
    fdraw(f, 0, 0, 6, 40, mono);
    assert_int_equal(c->draws, 1);
    assert_false(form_needs_draw(f));
    assert_text(1, 0, "count  counted");

    ftype(f, "ab");
    assert_true(form_needs_draw(f));
    fdraw(f, 0, 0, 6, 40, mono);
    assert_int_equal(c->draws, 1); /* only the field was drawn again */
    assert_text(0, 0, "name   ab ");
    assert_false(form_needs_draw(f));

    /* The owner scribbles over the window: the next draw puts the form back. */
    mvwaddstr(win, 0, 0, "XXXX");
    fdraw(f, 0, 0, 6, 40, mono);
    assert_text(0, 0, "name   ab ");
    assert_int_equal(c->draws, 1);

    c->base.dirty = true;
    assert_true(form_needs_draw(f));
    fdraw(f, 0, 0, 6, 40, mono);
    assert_int_equal(c->draws, 2);
    form_set_message(f, 0, FORM_MESSAGE_ERROR, "taken");
    fdraw(f, 0, 0, 6, 40, mono); /* the layout moved: everything */
    assert_int_equal(c->draws, 3);
    assert_text(2, 0, "count  counted");
    form_set_message(f, 0, FORM_MESSAGE_ERROR, "taken");
    assert_false(form_needs_draw(f)); /* the same message again */
    form_set_message(f, 0, FORM_MESSAGE_ERROR, "tak\x1b[31men");
    assert_false(form_needs_draw(f)); /* the same once sanitized */
    const char *text;
    assert_int_equal(form_message(f, 0, &text), FORM_MESSAGE_ERROR);
    assert_string_equal(text, "taken");
    fdraw(f, 0, 0, 6, 50, mono); /* a new width: everything */
    assert_int_equal(c->draws, 4);
    form_set_utf8(f, true); /* no change: nothing to draw */
    form_set_help_line(f, true);
    assert_false(form_needs_draw(f));
    form_invalidate(f);
    assert_true(form_needs_draw(f));
    fdraw(f, 0, 0, 6, 50, mono);
    assert_int_equal(c->draws, 5);
    form_free(f);
}

static void test_form_textarea_and_list(void **state)
{
    const struct widget_palette *mono = widget_palette_mono();
    struct form *f = form_new();
    struct owner o = {.height = 1};
    struct textarea *ta = textarea_new("python train.py\n--epochs 3", 3, 0);
    struct listedit *le = listedit_new(&owner_ops, &o, 20);

    form_add(f, "image", textfield_widget(textfield_new("pytorch:2.3", 0)), "image help");
    size_t script = form_add(f, "startup script", textarea_widget(ta), "script help");
    form_set_wide(f, script, true);
    size_t rules = form_add(f, "rules", listedit_widget(le), "Alt-N adds a rule");
    form_add(f, "after", textfield_widget(textfield_new(NULL, 0)), NULL);

    fdraw(f, 0, 0, 12, 60, mono);
    /* "startup script" is wide: its own line, the area across the full width. */
    assert_text(0, 0, "image  pytorch:2.3");
    assert_text(1, 0, "startup script ");
    assert_text(2, 0, "python train.py ");
    assert_text(3, 0, "--epochs 3 ");
    assert_text(5, 0, "rules  empty");

    /* Down leaves a field, moves inside the area, and leaves it from its last line. */
    assert_int_equal(fsend(f, KEY_DOWN, true), MOVED);
    assert_int_equal(form_focused(f), script);
    assert_int_equal(fsend(f, KEY_UP, true), MOVED); /* Up from its first line leaves */
    assert_int_equal(form_focused(f), 0);
    assert_int_equal(fsend(f, KEY_DOWN, true), MOVED);
    assert_int_equal(fsend(f, KEY_DOWN, true), MOVED);
    assert_int_equal(form_focused(f), script);
    ftype(f, "x");
    assert_string_equal(textarea_value(ta), "python train.py\nx--epochs 3");
    assert_int_equal(fsend(f, '\r', false), EDITED); /* Enter is the area's */
    assert_int_equal(form_focused(f), script);
    fdraw(f, 0, 0, 12, 60, mono);
    assert_cursor_at(4, 0);
    assert_int_equal(fsend(f, KEY_DOWN, true), MOVED);
    assert_int_equal(form_focused(f), rules);

    /* Alt-N in the list grows the form; Tab in the area moves on. */
    for (int i = 0; i < 15; i++) {
        struct widget_key k = {.code = 'n', .alt = true};
        assert_int_equal(form_key(f, &k), EDITED);
    }
    assert_int_equal(o.n, 15);
    assert_int_equal(listedit_focused(le), 14);
    fdraw(f, 0, 0, 12, 60, mono);
    /* The focused row (the last) is in view, the cursor on it. */
    assert_in_range(cursor_y, 0, 10);
    assert_text(cursor_y, 0, "       rule 15 r15");
    listedit_set_focus(le, 0);
    fdraw(f, 0, 0, 12, 60, mono);
    assert_in_range(cursor_y, 0, 10);
    assert_text(cursor_y, 0, "rules  rule 1  r1");
    assert_int_equal(fsend(f, KEY_UP, true), MOVED);
    assert_int_equal(form_focused(f), script);
    assert_int_equal(fsend(f, '\t', false), MOVED);
    assert_int_equal(fsend(f, '\t', false), MOVED); /* row 1 of the list */
    assert_int_equal(listedit_focused(le), 1);
    form_free(f);
    owner_free(&o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_textarea_typing_lines, clear_window),
        cmocka_unit_test_setup(test_textarea_goal_column, clear_window),
        cmocka_unit_test_setup(test_textarea_joins_and_kills, clear_window),
        cmocka_unit_test_setup(test_textarea_vertical_scroll, clear_window),
        cmocka_unit_test_setup(test_textarea_horizontal_scroll, clear_window),
        cmocka_unit_test_setup(test_textarea_cjk_and_tabs, clear_window),
        cmocka_unit_test_setup(test_textarea_round_trip, clear_window),
        cmocka_unit_test_setup(test_textarea_gutter_placeholder_disabled, clear_window),
        cmocka_unit_test_setup(test_listedit_add_move_remove, clear_window),
        cmocka_unit_test_setup(test_listedit_limit_and_row_bits, clear_window),
        cmocka_unit_test_setup(test_listedit_empty_and_disabled, clear_window),
        cmocka_unit_test_setup(test_form_labels_aligned, clear_window),
        cmocka_unit_test_setup(test_form_message_line, clear_window),
        cmocka_unit_test_setup(test_form_focus_moves, clear_window),
        cmocka_unit_test_setup(test_form_hide_focused, clear_window),
        cmocka_unit_test_setup(test_form_scroll, clear_window),
        cmocka_unit_test_setup(test_form_resize, clear_window),
        cmocka_unit_test_setup(test_form_draws_only_dirty, clear_window),
        cmocka_unit_test_setup(test_form_textarea_and_list, clear_window),
    };
    return cmocka_run_group_tests(tests, setup_terminal, teardown_terminal);
}
