/*
 * test_table_text: outside text in a table the way the jobs view shows it
 * (each cell through utf8_sanitize, then the table widget), drawn into an
 * off-screen terminal and read back: a name holding a zero-width space or a
 * bidi override is shown escaped ("ad\u200bmin"), not as a look-alike of
 * another name, and names with combining marks that our old width table
 * measured differently from ncurses (Devanagari, Hebrew points, Tibetan)
 * leave the next column where every other row has it.
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
#include <stdlib.h>
#include <string.h>

#include "util/strbuf.h"
#include "util/utf8.h"
#include "widgets/table.h"

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

/* Rows of (name, state) as a backend sent them: raw, unsanitized. */
struct rows {
    const char *const (*cell)[2];
    size_t n;
    struct strbuf clean; /* the last cell, sanitized as jobs_view does */
};

static size_t rows_count(void *ctx)
{
    return ((struct rows *)ctx)->n;
}

static const char *rows_cell(void *ctx, size_t row, size_t col, char *scratch, size_t n)
{
    struct rows *r = ctx;
    const char *s = r->cell[row][col];
    strbuf_reset(&r->clean);
    utf8_sanitize(&r->clean, s, strlen(s), 0);
    return strbuf_str(&r->clean);
}

static uint64_t rows_key(void *ctx, size_t row)
{
    return row + 1;
}

static const struct table_source source = {
    .count = rows_count, .cell = rows_cell, .row_key = rows_key};

static const struct table_column columns[2] = {{"NAME", 4, 0, false}, {"STATE", 5, 10, false}};

/* The screen column where text starts on row y, or -1. */
static int find_on_row(int y, const char *text)
{
    for (int x = 0; x < WIN_W; x++) {
        char *s = offscreen_text(win, y, x, (int)strlen(text));
        bool hit = s && strncmp(s, text, strlen(text)) == 0;
        free(s);
        if (hit)
            return x;
    }
    return -1;
}

static void draw_rows(const char *const (*cells)[2], size_t n)
{
    struct rows r = {cells, n, STRBUF_INIT};
    struct table *t = table_new(&source, &r, columns, 2);
    table_refresh(t);
    werase(win);
    struct widget *wd = table_widget(t);
    wd->ops->draw(wd, win, 0, 0, WIN_W, false);
    table_free(t);
    strbuf_free(&r.clean);
}

/* "ad<ZWSP>min" and a bidi-reversed name read as what they are. */
static void test_invisible_characters_escaped(void **state)
{
    static const char *const cells[][2] = {
        {"admin", "RUNNING"},
        {"ad\xE2\x80\x8Bmin", "FAILED"},
        {"job\xE2\x80\xAEtxt.exe", "PENDING"},
        {"\xEF\xBB\xBF"
         "bom",
         "STOPPED"},
    };
    draw_rows(cells, 4);
    char *row1 = offscreen_text(win, 1, 0, WIN_W);
    char *row2 = offscreen_text(win, 2, 0, WIN_W);
    char *row3 = offscreen_text(win, 3, 0, WIN_W);
    char *row4 = offscreen_text(win, 4, 0, WIN_W);
    assert_non_null(strstr(row1, "admin"));
    assert_non_null(strstr(row2, "ad\\u200bmin"));
    assert_null(strstr(row2, "admin"));
    assert_non_null(strstr(row3, "job\\u202etxt.exe"));
    assert_non_null(strstr(row4, "\\ufeffbom"));
    /* No invisible code point reached the screen. */
    for (int y = 0; y < WIN_H; y++)
        for (int x = 0; x < WIN_W; x++) {
            cchar_t cc;
            wchar_t wch[CCHARW_MAX + 1] = {0};
            attr_t a;
            short pair;
            assert_int_equal(mvwin_wch(win, y, x, &cc), OK);
            assert_int_equal(getcchar(&cc, wch, &a, &pair, NULL), OK);
            for (size_t i = 0; wch[i]; i++)
                assert_false(utf8_is_invisible_format((uint32_t)wch[i]));
        }
    /* The STATE column starts at the same place on every row. */
    int x1 = find_on_row(1, "RUNNING");
    assert_true(x1 > 0);
    assert_int_equal(find_on_row(2, "FAILED"), x1);
    assert_int_equal(find_on_row(3, "PENDING"), x1);
    assert_int_equal(find_on_row(4, "STOPPED"), x1);
    free(row1);
    free(row2);
    free(row3);
    free(row4);
}

/*
 * Marks the old table measured as one cell (wcwidth: none): the next
 * column must not be pushed right on their rows.
 */
static void test_combining_marks_align(void **state)
{
    static const char *const cells[][2] = {
        {"plain-name", "RUNNING"},
        {"\xE0\xA4\xA8\xE0\xA4\xAE\xE0\xA4\xB8\xE0\xA5\x8D\xE0\xA4\xA4\xE0\xA5\x87",
         "FAILED"}, /* नमस्ते: virama and vowel sign are marks */
        {"\xD7\xA9\xD7\x81\xD7\x9C\xD7\x95\xD7\xB9\xD7\x9D", "PENDING"}, /* שׁלוֹם, points */
        {"\xE0\xBD\x96\xE0\xBD\xBC\xE0\xBD\x91", "STOPPED"},             /* བོད, Tibetan */
    };
    draw_rows(cells, 4);
    int x1 = find_on_row(1, "RUNNING");
    assert_true(x1 > 0);
    assert_int_equal(find_on_row(2, "FAILED"), x1);
    assert_int_equal(find_on_row(3, "PENDING"), x1);
    assert_int_equal(find_on_row(4, "STOPPED"), x1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_invisible_characters_escaped),
        cmocka_unit_test(test_combining_marks_align),
    };
    return cmocka_run_group_tests(tests, setup_terminal, teardown_terminal);
}
