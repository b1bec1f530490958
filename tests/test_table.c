/*
 * test_table: the table widget over rows a fixture owns, drawn into an
 * off-screen terminal (newterm on /dev/null) and read back cell by cell:
 * header and rows, column widths and CJK truncation, sorting by text and
 * by numbers (durations too) both ways, the cursor and marks following
 * their row key across sorts and refreshes, the filter (substrings,
 * `col=value` terms, unknown columns), the keys and their result bits,
 * redrawing only the lines that changed, colour pairs from the palette and
 * cell_attr, and 100,000 rows scrolled with End, PgUp and PgDn.
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
#include "widgets/table.h"

#define WIN_H 8 /* the header and 7 rows */
#define WIN_W 80
#define NCOLS 7
#define MOVED (WIDGET_HANDLED | WIDGET_REDRAW)

static struct offscreen term;
static WINDOW *win;
static int cursor_y, cursor_x; /* where the last draw left the cursor */

/* One off-screen terminal for every test: UTF-8 locale first, for wide characters. */
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

/* ---- a small jobs fixture ---------------------------------------------- */

enum { NAME, DISPLAY, STATE, PRIO, AGE, RESTARTS, REASON };

static const struct table_column job_columns[NCOLS] = {
    {"NAME", 4, 16, false},  {"DISPLAY NAME", 4, 12, false},
    {"STATE", 5, 12, false}, {"PRIO", 4, 4, true},
    {"AGE", 3, 6, true},     {"RESTARTS", 3, 8, true},
    {"REASON", 6, 0, false},
};

struct row {
    uint64_t id;
    const char *cell[NCOLS];
};

struct fixture {
    struct row rows[16];
    size_t n;
    size_t cell_calls;
};

static const struct row five_jobs[] = {
    {1, {"job-a", "训练一号", "RUNNING", "5", "3h", "0", ""}},
    {2, {"job-b", "baseline", "FAILED", "1", "45s", "10", ""}},
    {3, {"job-c", "eval", "PENDING", "3", "2d", "2", "quota exceeded"}},
    {4, {"job-d", "sweep-长名字测试", "SUCCEEDED", "10", "5m", "1", ""}},
    {5, {"job-e", "Failover", "FAILED", "2", "1d3h", "3", ""}},
};

static size_t fx_count(void *ctx)
{
    return ((struct fixture *)ctx)->n;
}

static const char *fx_cell(void *ctx, size_t row, size_t col, char *scratch, size_t n)
{
    struct fixture *fx = ctx;
    fx->cell_calls++;
    return fx->rows[row].cell[col];
}

/* FAILED bold, RUNNING underlined (in the fixture's "theme"), else the palette's normal. */
static attr_t fx_attr(void *ctx, size_t row, size_t col)
{
    const struct fixture *fx = ctx;
    if (col != STATE)
        return 0;
    if (strstr(fx->rows[row].cell[STATE], "FAILED"))
        return A_BOLD;
    return strcmp(fx->rows[row].cell[STATE], "RUNNING") == 0 ? A_UNDERLINE : 0;
}

static uint64_t fx_key(void *ctx, size_t row)
{
    return ((struct fixture *)ctx)->rows[row].id;
}

static const struct table_source fx_source = {
    .count = fx_count, .cell = fx_cell, .cell_attr = fx_attr, .row_key = fx_key};

static void fx_fill(struct fixture *fx)
{
    memset(fx, 0, sizeof *fx);
    memcpy(fx->rows, five_jobs, sizeof five_jobs);
    fx->n = sizeof five_jobs / sizeof five_jobs[0];
}

static void fx_remove(struct fixture *fx, uint64_t id)
{
    for (size_t i = 0; i < fx->n; i++)
        if (fx->rows[i].id == id) {
            memmove(&fx->rows[i], &fx->rows[i + 1], (fx->n - i - 1) * sizeof fx->rows[0]);
            fx->n--;
            return;
        }
}

static struct table *new_jobs_table(struct fixture *fx)
{
    fx_fill(fx);
    return table_new(&fx_source, fx, job_columns, NCOLS);
}

/* ---- helpers ----------------------------------------------------------- */

static unsigned send(struct table *t, int code, bool is_function)
{
    struct widget *wd = table_widget(t);
    struct widget_key k = {.code = code, .is_function = is_function};
    return wd->ops->key(wd, &k);
}

static unsigned key(struct table *t, int code)
{
    return send(t, code, false);
}

static unsigned fkey(struct table *t, int code)
{
    return send(t, code, true);
}

static void draw(struct table *t, bool focused)
{
    struct widget *wd = table_widget(t);
    wmove(win, 0, 0);
    wd->ops->draw(wd, win, 0, 0, WIN_W, focused);
    getyx(win, cursor_y, cursor_x); /* reading cells back moves it */
}

/* Reads cell (y, x): its characters (NUL-terminated) and attributes. */
static void read_cell(int y, int x, wchar_t wch[CCHARW_MAX + 1], attr_t *attrs)
{
    cchar_t cc;
    short pair;
    attr_t a;
    memset(wch, 0, (CCHARW_MAX + 1) * sizeof *wch);
    assert_int_equal(mvwin_wch(win, y, x, &cc), OK);
    assert_int_equal(getcchar(&cc, wch, attrs ? attrs : &a, &pair, NULL), OK);
}

static attr_t attr_at(int y, int x)
{
    wchar_t wch[CCHARW_MAX + 1];
    attr_t a;
    read_cell(y, x, wch, &a);
    return a;
}

/*
 * Cells [x, x + w) of line y as UTF-8. A two-cell character is read once;
 * the cell after it must be its continuation.
 */
static char *text_at(int y, int x, int w)
{
    struct strbuf sb = STRBUF_INIT;
    for (int c = x; c < x + w; c++) {
        wchar_t wch[CCHARW_MAX + 1];
        char enc[4];
        read_cell(y, c, wch, NULL);
        for (size_t i = 0; wch[i]; i++)
            strbuf_add(&sb, enc, utf8_encode((uint32_t)wch[i], enc));
        if (utf8_cpwidth((uint32_t)wch[0]) == 2) {
            wchar_t next[CCHARW_MAX + 1];
            assert_true(c + 1 < x + w);
            read_cell(y, c + 1, next, NULL);
            assert_int_equal(next[0], wch[0]);
            c++;
        }
    }
    return strbuf_detach(&sb, NULL);
}

#define assert_text(y, x, w, want)                                                                 \
    do {                                                                                           \
        char *got_ = text_at((y), (x), (w));                                                       \
        assert_string_equal(got_, (want));                                                         \
        free(got_);                                                                                \
    } while (0)

/* Line y without its trailing blanks. */
static char *line(int y)
{
    char *s = text_at(y, 0, WIN_W);
    size_t n = strlen(s);
    while (n > 0 && s[n - 1] == ' ')
        s[--n] = '\0';
    return s;
}

#define assert_line(y, want)                                                                       \
    do {                                                                                           \
        char *got_ = line(y);                                                                      \
        assert_string_equal(got_, (want));                                                         \
        free(got_);                                                                                \
    } while (0)

/* The keys of the view in order, "3,1,2". */
static char *view_ids(const struct table *t, const struct fixture *fx)
{
    struct strbuf sb = STRBUF_INIT;
    for (size_t i = 0; i < table_view_count(t); i++)
        strbuf_addf(&sb, "%s%llu", i ? "," : "",
                    (unsigned long long)fx->rows[table_view_row(t, i)].id);
    return strbuf_detach(&sb, NULL);
}

#define assert_view(t, fx, want)                                                                   \
    do {                                                                                           \
        char *got_ = view_ids((t), (fx));                                                          \
        assert_string_equal(got_, (want));                                                         \
        free(got_);                                                                                \
    } while (0)

static uint64_t cursor_key(const struct table *t)
{
    uint64_t k = 0;
    assert_true(table_cursor_row(t, NULL, &k));
    return k;
}

/* ---- tests ------------------------------------------------------------- */

static void test_header_and_rows(void **state)
{
    struct fixture fx;
    struct table *t = new_jobs_table(&fx);

    assert_int_equal(table_view_count(t), 5);
    assert_view(t, &fx, "1,2,3,4,5");
    table_set_empty_text(t, "no jobs");
    werase(win);
    draw(t, true);
    /*
     * Widths: NAME 5, DISPLAY NAME 12 (its max), STATE 9, PRIO 4, AGE 4,
     * RESTARTS 8, and REASON (flexible) the 30 cells left of 80.
     */
    assert_line(0, "  NAME  DISPLAY NAME STATE     PRIO  AGE RESTARTS REASON");
    assert_line(1, "  job-a 训练一号     RUNNING      5   3h        0");
    assert_line(2, "  job-b baseline     FAILED       1  45s       10");
    assert_line(3, "  job-c eval         PENDING      3   2d        2 quota exceeded");
    assert_line(4, "  job-d sweep-长名…  SUCCEEDED   10   5m        1");
    assert_line(5, "  job-e Failover     FAILED       2 1d3h        3");
    assert_line(6, "");
    assert_line(7, "");

    /* Roles: header in title, the cursor row selected across the width, states in their attr. */
    assert_true(attr_at(0, 2) & A_BOLD);
    for (int x = 0; x < WIN_W; x++)
        assert_true(attr_at(1, x) & A_REVERSE);
    assert_true(attr_at(1, 21) & A_UNDERLINE); /* RUNNING keeps its non-colour bits */
    assert_false(attr_at(2, 2) & A_REVERSE);
    assert_true(attr_at(2, 21) & A_BOLD);
    assert_false(attr_at(3, 21) & (A_BOLD | A_UNDERLINE));
    /* The curses cursor waits at the start of the cursor row. */
    assert_int_equal(cursor_y, 1);
    assert_int_equal(cursor_x, 0);

    /* An empty view shows the empty text dim. */
    table_set_filter(t, "nothing-matches-this");
    draw(t, false);
    assert_line(0, "  NAME DISPLAY NAME STATE PRIO AGE RESTARTS REASON");
    assert_line(1, "  no jobs");
    assert_true(attr_at(1, 2) & A_DIM);
    assert_line(2, "");
    table_free(t);
}

static const struct table_column cjk_columns[] = {
    {"名称", 2, 6, false},
    {"N", 1, 5, false},
    {"W", 1, 4, true},
};

static const char *cjk_cells[][3] = {
    {"训练任务一号", "训练任务", "长名字"},
    {"一号", "ab", "x"},
};

static size_t cjk_count(void *ctx)
{
    return 2;
}

static const char *cjk_cell(void *ctx, size_t row, size_t col, char *scratch, size_t n)
{
    return cjk_cells[row][col];
}

static uint64_t cjk_key(void *ctx, size_t row)
{
    return row;
}

static const struct table_source cjk_source = {
    .count = cjk_count, .cell = cjk_cell, .row_key = cjk_key};

static void test_cjk_widths_and_cut(void **state)
{
    struct table *t = table_new(&cjk_source, NULL, cjk_columns, 3);

    werase(win);
    draw(t, false);
    /* 名称 is 4 cells; cut text ends in "…" at the cell edge, never half a wide character. */
    assert_text(0, 0, 20, "  名称   N        W ");
    assert_text(1, 0, 20, "  训练…  训练…  长… ");
    assert_text(2, 0, 20, "  一号   ab       x ");

    table_set_utf8(t, false);
    table_set_sort(t, 0, false);
    draw(t, false);
    assert_text(0, 0, 20, "  名称^  N        W ");
    assert_text(1, 0, 20, "  一号   ab       x ");
    assert_text(2, 0, 20, "  训练~  训练~  长~ ");
    table_set_sort(t, 0, true);
    draw(t, false);
    assert_text(0, 0, 20, "  名称v  N        W ");
    table_set_utf8(t, true);
    draw(t, false);
    assert_text(0, 0, 20, "  名称▼  N        W ");

    /* Too narrow: columns shrink from the right to their minimum, then the first. */
    werase(win);
    table_widget(t)->ops->draw(table_widget(t), win, 0, 0, 10, false);
    assert_text(0, 0, 11, "  名…▼ N W ");
    assert_text(1, 0, 11, "  训…  … … ");
    assert_text(2, 0, 11, "  一号 … x ");
    /* Narrower than the minimums: the columns past the edge are cut. */
    werase(win);
    table_widget(t)->ops->draw(table_widget(t), win, 0, 0, 7, false);
    assert_text(0, 0, 8, "  …▼ N  ");
    assert_text(1, 0, 8, "  …  …  ");
    table_free(t);
}

/* What gives way when the room is short follows the owner's keep order, not the position. */
static void test_keep_order_when_narrow(void **state)
{
    struct fixture fx;
    fx_fill(&fx);
    struct table *t = table_new(&fx_source, &fx, job_columns, NCOLS);
    /* The names first (the right-most first), then AGE; STATE, PRIO, RESTARTS and REASON last. */
    static const int keep[NCOLS] = {0, 0, 3, 3, 1, 3, 2};
    table_set_keep(t, keep);
    werase(win);
    table_widget(t)->ops->draw(table_widget(t), win, 0, 0, 50, false);
    char *head = text_at(0, 0, 50);
    assert_non_null(strstr(head, "STATE"));    /* whole, though right of the names */
    assert_non_null(strstr(head, "RESTARTS")); /* whole: by position it would go first */
    assert_null(strstr(head, "DISPLAY NAME")); /* gave way first */
    free(head);
    char *row = text_at(4, 0, 50); /* job-d: SUCCEEDED, the widest state */
    assert_non_null(strstr(row, "SUCCEEDED"));
    free(row);
    char *reason = text_at(3, 0, 50); /* job-c: its reason gets the room left, at least 6 */
    assert_non_null(strstr(reason, "quota"));
    free(reason);
    table_free(t);
}

/*
 * Columns marked to give way whole are left out, never cut to a stub; a
 * column kept distinct shrinks no further than tells its cells apart
 * (issue 22: "ddp-d…" twice while "NOR…" stayed).
 */
static void test_drop_whole_keep_distinct(void **state)
{
    struct fixture fx;
    fx_fill(&fx);
    struct table *t = table_new(&fx_source, &fx, job_columns, NCOLS);
    /* NAME last, then STATE; DISPLAY NAME and RESTARTS first, whole; REASON before PRIO, AGE. */
    static const int keep[NCOLS] = {6, 1, 5, 3, 3, 1, 2};
    static const bool drop[NCOLS] = {false, true, false, true, true, true, false};
    table_set_keep(t, keep);
    table_set_drop(t, drop);
    table_set_distinct(t, 0, true);
    werase(win);
    table_widget(t)->ops->draw(table_widget(t), win, 0, 0, 44, false);
    char *head = text_at(0, 0, 44);
    assert_null(strstr(head, "\xe2\x80\xa6")); /* no title cut to a stub */
    assert_null(strstr(head, "DISPLAY"));       /* given way whole */
    assert_null(strstr(head, "RESTARTS"));
    assert_non_null(strstr(head, "PRIO"));      /* kept: there is room once those went */
    free(head);
    char *reason = text_at(3, 0, 44); /* job-c: its reason whole */
    assert_non_null(strstr(reason, "quota exceeded"));
    free(reason);
    /* Narrower: every droppable column goes before NAME shrinks, and NAME keeps job-a apart. */
    werase(win);
    table_widget(t)->ops->draw(table_widget(t), win, 0, 0, 18, false);
    head = text_at(0, 0, 18);
    assert_null(strstr(head, "PRIO"));
    assert_null(strstr(head, "AGE"));
    free(head);
    for (int y = 1; y <= 5; y++) {
        char *row = text_at(y, 0, 18);
        char want[8];
        snprintf(want, sizeof want, "job-%c", 'a' + y - 1);
        assert_non_null(strstr(row, want)); /* each name told apart, never "job…" */
        free(row);
    }
    table_free(t);
}

static void test_sort_text_column(void **state)
{
    struct fixture fx;
    struct table *t = new_jobs_table(&fx);
    bool desc = true;

    assert_int_equal(table_sort_column(t, &desc), TABLE_UNSORTED);
    assert_false(desc);
    table_set_sort(t, NAME, true);
    assert_view(t, &fx, "5,4,3,2,1");
    assert_int_equal(table_sort_column(t, &desc), NAME);
    assert_true(desc);
    table_set_sort(t, NAME, false);
    assert_view(t, &fx, "1,2,3,4,5");

    /* ASCII case-folded: Failover between eval and sweep; UTF-8 after ASCII. */
    table_set_sort(t, DISPLAY, false);
    assert_view(t, &fx, "2,3,5,4,1");
    table_set_sort(t, DISPLAY, true);
    assert_view(t, &fx, "1,4,5,3,2");

    /* Ties keep the owner's order, in both directions. */
    table_set_sort(t, STATE, false);
    assert_view(t, &fx, "2,5,3,1,4");
    table_set_sort(t, STATE, true);
    assert_view(t, &fx, "4,1,3,2,5");

    /* The header marks the sort column. */
    werase(win);
    table_invalidate(t);
    draw(t, false);
    assert_line(0, "  NAME  DISPLAY NAME STATE▼    PRIO  AGE RESTARTS REASON");

    /* Back to the owner's order, and its reverse. */
    table_set_sort(t, TABLE_UNSORTED, false);
    assert_view(t, &fx, "1,2,3,4,5");
    table_set_sort(t, TABLE_UNSORTED, true);
    assert_view(t, &fx, "5,4,3,2,1");
    table_free(t);
}

static void test_sort_numeric_column(void **state)
{
    struct fixture fx;
    struct table *t = new_jobs_table(&fx);

    /* 0 1 2 3 10, not the text order 0 1 10 2 3. */
    table_set_sort(t, RESTARTS, false);
    assert_view(t, &fx, "1,4,3,5,2");
    table_set_sort(t, RESTARTS, true);
    assert_view(t, &fx, "2,5,3,4,1");
    table_set_sort(t, PRIO, false);
    assert_view(t, &fx, "2,5,3,1,4");

    /* Durations: 45s < 5m < 3h < 1d3h < 2d. */
    table_set_sort(t, AGE, false);
    assert_view(t, &fx, "2,4,1,5,3");
    table_set_sort(t, AGE, true);
    assert_view(t, &fx, "3,5,1,4,2");

    /* Numbers (decimals, percentages) first, then text; "-" and "3x" are text. */
    static const char *mixed[] = {"3", "-", "10", "abc", "2.5", "-1", "3x", "50%", "1h"};
    for (size_t i = 0; i < 9; i++) {
        fx.rows[i] = (struct row){100 + i, {"n", "d", "S", mixed[i], "1s", "0", ""}};
    }
    fx.n = 9;
    table_refresh(t);
    assert_view(t, &fx, "100,101,102,103,104,105,106,107,108"); /* AGE: all equal */
    table_set_sort(t, PRIO, false);
    assert_view(t, &fx, "105,104,100,102,107,108,101,106,103");
    table_set_sort(t, PRIO, true);
    assert_view(t, &fx, "103,106,101,108,107,102,100,104,105");
    table_free(t);
}

static int by_id_desc(void *ctx, size_t a, size_t b, size_t col)
{
    const struct fixture *fx = ctx;
    return fx->rows[a].id < fx->rows[b].id ? 1 : fx->rows[a].id > fx->rows[b].id ? -1 : 0;
}

static void test_owner_compare(void **state)
{
    struct fixture fx;
    struct table_source src = fx_source;
    src.compare = by_id_desc;
    fx_fill(&fx);
    struct table *t = table_new(&src, &fx, job_columns, NCOLS);

    table_set_sort(t, NAME, false);
    assert_view(t, &fx, "5,4,3,2,1");
    table_set_sort(t, NAME, true);
    assert_view(t, &fx, "1,2,3,4,5");
    table_free(t);
}

static void test_cursor_follows_row_key(void **state)
{
    struct fixture fx;
    struct table *t = new_jobs_table(&fx);

    draw(t, false);
    assert_int_equal(cursor_key(t), 1);
    assert_true(table_set_cursor_key(t, 3));
    assert_false(table_set_cursor_key(t, 99));
    assert_int_equal(table_cursor_pos(t), 2);

    /* Re-sorting keeps the cursor on job 3. */
    table_set_sort(t, AGE, true);
    assert_view(t, &fx, "3,5,1,4,2");
    assert_int_equal(table_cursor_pos(t), 0);
    assert_int_equal(cursor_key(t), 3);
    assert_int_equal(key(t, 's'), MOVED);
    assert_int_equal(table_cursor_pos(t), 4);
    assert_int_equal(cursor_key(t), 3);

    /* The owner's data changes: a new job before it, another gone. */
    memmove(&fx.rows[1], &fx.rows[0], fx.n * sizeof fx.rows[0]);
    fx.rows[0] = (struct row){6, {"job-f", "new", "PENDING", "1", "1s", "0", ""}};
    fx.n++;
    fx_remove(&fx, 1);
    table_refresh(t);
    assert_view(t, &fx, "6,2,4,5,3");
    assert_int_equal(cursor_key(t), 3);
    size_t row;
    assert_true(table_cursor_row(t, &row, NULL));
    assert_int_equal(fx.rows[row].id, 3);

    /* Its row gone, the cursor stays at the same position (clamped). */
    assert_true(table_set_cursor_key(t, 4));
    fx_remove(&fx, 4);
    table_refresh(t);
    assert_view(t, &fx, "6,2,5,3");
    assert_int_equal(table_cursor_pos(t), 2);
    assert_int_equal(cursor_key(t), 5);
    assert_true(table_set_cursor_key(t, 3));
    fx_remove(&fx, 3);
    table_refresh(t);
    assert_int_equal(table_cursor_pos(t), 2);
    assert_int_equal(cursor_key(t), 5);

    /* Everything gone, then back: the cursor starts on the first row. */
    fx.n = 0;
    table_refresh(t);
    assert_false(table_cursor_row(t, NULL, NULL));
    assert_int_equal(table_cursor_pos(t), 0);
    fx_fill(&fx);
    table_refresh(t);
    assert_int_equal(table_cursor_pos(t), 0);
    assert_int_equal(cursor_key(t), 2); /* AGE ascending: 45s first */
    table_free(t);
}

static void test_filter(void **state)
{
    struct fixture fx;
    struct table *t = new_jobs_table(&fx);

    assert_string_equal(table_filter(t), "");
    /* A substring of any cell, ASCII case-insensitive. */
    table_set_filter(t, "FAIL");
    assert_string_equal(table_filter(t), "FAIL");
    assert_view(t, &fx, "2,5");
    table_set_filter(t, "exceed");
    assert_view(t, &fx, "3");
    table_set_filter(t, "长名");
    assert_view(t, &fx, "4");

    /* col=value: exact, case-insensitive, the column named by its title. */
    table_set_filter(t, "state=FAILED");
    assert_view(t, &fx, "2,5");
    table_set_filter(t, "State=failed");
    assert_view(t, &fx, "2,5");
    table_set_filter(t, "state=fail");
    assert_view(t, &fx, "");
    table_set_filter(t, "display_name=EVAL");
    assert_view(t, &fx, "3");
    table_set_filter(t, "displayname=eval");
    assert_view(t, &fx, "3");
    table_set_filter(t, "reason=");
    assert_view(t, &fx, "1,2,4,5");

    /* Terms AND together. */
    table_set_filter(t, "  state=failed   job-b ");
    assert_view(t, &fx, "2");
    table_set_filter(t, "job state=running");
    assert_view(t, &fx, "1");

    /* A column no title names matches nothing, even with other terms. */
    table_set_filter(t, "nosuch=1");
    assert_view(t, &fx, "");
    table_set_filter(t, "job nosuch=1");
    assert_view(t, &fx, "");
    /* Nothing before '=': a plain substring. */
    table_set_filter(t, "=x");
    assert_view(t, &fx, "");

    /* A leading icon in the cell does not stop state=FAILED. */
    fx.rows[4].cell[STATE] = "✗ FAILED";
    table_set_filter(t, "state=failed");
    assert_view(t, &fx, "2,5");
    fx.rows[4].cell[STATE] = "x FAILED";
    table_refresh(t);
    assert_view(t, &fx, "2");

    /* The filter applies to refreshed data; clearing it shows every row. */
    fx.rows[0].cell[STATE] = "FAILED";
    table_refresh(t);
    assert_view(t, &fx, "1,2");
    table_set_filter(t, NULL);
    assert_view(t, &fx, "1,2,3,4,5");

    /* Sorted and filtered together; the cursor stays on its row when it passes. */
    table_set_sort(t, NAME, true);
    assert_true(table_set_cursor_key(t, 2));
    table_set_filter(t, "state=failed");
    assert_view(t, &fx, "2,1");
    assert_int_equal(cursor_key(t), 2);
    table_free(t);
}

static void test_marks(void **state)
{
    struct fixture fx;
    struct table *t = new_jobs_table(&fx);
    uint64_t *keys;

    assert_int_equal(table_marked(t, &keys), 0);
    assert_null(keys);
    assert_int_equal(key(t, ' '), WIDGET_CHANGED | MOVED);
    assert_true(table_is_marked(t, 1));
    assert_int_equal(fkey(t, KEY_DOWN), MOVED);
    assert_int_equal(fkey(t, KEY_DOWN), MOVED);
    assert_int_equal(key(t, ' '), WIDGET_CHANGED | MOVED);
    assert_int_equal(key(t, ' '), WIDGET_CHANGED | MOVED);
    assert_false(table_is_marked(t, 3));
    assert_int_equal(key(t, ' '), WIDGET_CHANGED | MOVED);
    assert_int_equal(table_mark_count(t), 2);
    assert_int_equal(table_marked(t, &keys), 2);
    assert_int_equal(keys[0], 1);
    assert_int_equal(keys[1], 3);
    free(keys);

    /* Drawn: '*' in the gutter in `key`, or `selected` on the cursor row. */
    werase(win);
    table_invalidate(t);
    draw(t, false);
    assert_text(1, 0, 7, "* job-a");
    assert_text(2, 0, 7, "  job-b");
    assert_text(3, 0, 7, "* job-c");
    assert_true(attr_at(1, 0) & A_REVERSE);
    assert_false(attr_at(1, 2) & A_REVERSE);
    assert_true(attr_at(3, 2) & A_REVERSE);

    /* Marks follow their rows through a sort. */
    table_set_sort(t, NAME, true);
    draw(t, false);
    assert_text(3, 0, 7, "* job-c");
    assert_text(5, 0, 7, "* job-a");
    assert_text(1, 0, 7, "  job-e");

    /* Hidden by the filter, still marked and listed. */
    table_set_filter(t, "job-a");
    assert_int_equal(table_marked(t, &keys), 2);
    free(keys);
    assert_int_equal(key(t, ' '), WIDGET_CHANGED | MOVED);
    assert_false(table_is_marked(t, 1));
    assert_true(table_is_marked(t, 3));

    /* A row gone from the owner's data loses its mark. */
    table_set_marked(t, 4, true);
    table_set_marked(t, 99, true); /* no such row */
    assert_int_equal(table_mark_count(t), 3);
    fx_remove(&fx, 3);
    table_refresh(t);
    assert_int_equal(table_marked(t, &keys), 1);
    assert_int_equal(keys[0], 4);
    free(keys);
    table_clear_marks(t);
    assert_int_equal(table_mark_count(t), 0);
    assert_false(table_is_marked(t, 4));
    table_free(t);
}

static void test_keys(void **state)
{
    struct fixture fx;
    struct table *t = new_jobs_table(&fx);
    struct widget *wd = table_widget(t);
    bool desc;

    draw(t, false);
    assert_int_equal(fkey(t, KEY_UP), WIDGET_HANDLED);
    assert_int_equal(fkey(t, KEY_HOME), WIDGET_HANDLED);
    assert_int_equal(key(t, 'G'), MOVED);
    assert_int_equal(table_cursor_pos(t), 4);
    assert_int_equal(fkey(t, KEY_DOWN), WIDGET_HANDLED);
    assert_int_equal(fkey(t, KEY_END), WIDGET_HANDLED);
    assert_int_equal(key(t, 'g'), MOVED);
    assert_int_equal(table_cursor_pos(t), 0);
    assert_int_equal(fkey(t, KEY_NPAGE), MOVED); /* 7 rows a page, 5 rows: the last */
    assert_int_equal(table_cursor_pos(t), 4);
    assert_int_equal(fkey(t, KEY_PPAGE), MOVED);
    assert_int_equal(table_cursor_pos(t), 0);

    /* Sorting keys: > and < move the sort column; s and F6 reverse it. */
    assert_int_equal(key(t, '>'), MOVED);
    assert_int_equal(table_sort_column(t, &desc), NAME);
    assert_false(desc);
    assert_int_equal(key(t, '<'), WIDGET_HANDLED);
    assert_int_equal(key(t, '>'), MOVED);
    assert_int_equal(table_sort_column(t, NULL), DISPLAY);
    assert_int_equal(key(t, 's'), MOVED);
    assert_int_equal(table_sort_column(t, &desc), DISPLAY);
    assert_true(desc);
    assert_int_equal(key(t, '>'), MOVED);
    assert_int_equal(table_sort_column(t, &desc), STATE);
    assert_true(desc);
    assert_int_equal(fkey(t, KEY_F(6)), MOVED);
    assert_int_equal(table_sort_column(t, &desc), STATE);
    assert_false(desc);
    table_set_sort(t, REASON, false);
    assert_int_equal(key(t, '>'), WIDGET_HANDLED);
    table_set_sort(t, TABLE_UNSORTED, false);
    assert_int_equal(key(t, '<'), MOVED);
    assert_int_equal(table_sort_column(t, NULL), REASON);
    table_set_sort(t, 42, false); /* no such column: the owner's order */
    assert_int_equal(table_sort_column(t, NULL), TABLE_UNSORTED);

    /* Enter opens the cursor row; the owner's keys pass through. */
    assert_int_equal(key(t, '\r'), WIDGET_ACTIVATE | WIDGET_HANDLED);
    assert_int_equal(fkey(t, KEY_ENTER), WIDGET_ACTIVATE | WIDGET_HANDLED);
    assert_int_equal(key(t, 'q'), WIDGET_IGNORED);
    assert_int_equal(key(t, '/'), WIDGET_IGNORED);
    assert_int_equal(key(t, '\t'), WIDGET_IGNORED);
    assert_int_equal(fkey(t, KEY_F(5)), WIDGET_IGNORED);
    assert_int_equal(fkey(t, KEY_LEFT), WIDGET_IGNORED);
    struct widget_key alt_g = {.code = 'g', .alt = true};
    assert_int_equal(wd->ops->key(wd, &alt_g), WIDGET_IGNORED);

    /* Disabled: every key ignored. */
    wd->disabled = true;
    assert_int_equal(fkey(t, KEY_DOWN), WIDGET_IGNORED);
    assert_int_equal(key(t, ' '), WIDGET_IGNORED);
    wd->disabled = false;

    /* An empty view: moves, Space and Enter are consumed and do nothing. */
    table_set_filter(t, "nosuch=1");
    assert_int_equal(fkey(t, KEY_DOWN), WIDGET_HANDLED);
    assert_int_equal(key(t, 'G'), WIDGET_HANDLED);
    assert_int_equal(key(t, ' '), WIDGET_HANDLED);
    assert_int_equal(key(t, '\r'), WIDGET_HANDLED);
    assert_int_equal(table_mark_count(t), 0);
    table_free(t);
}

static void test_redraws_only_changed_lines(void **state)
{
    struct fixture fx;
    struct table *t = new_jobs_table(&fx);
    struct widget *wd = table_widget(t);

    werase(win);
    assert_true(wd->dirty);
    draw(t, false);
    assert_false(wd->dirty);
    assert_int_equal(table_drawn_lines(t), WIN_H);
    draw(t, false);
    assert_int_equal(table_drawn_lines(t), 0);

    /* A cursor move rewrites the two rows it touches. */
    assert_int_equal(fkey(t, KEY_DOWN), MOVED);
    assert_true(wd->dirty);
    draw(t, false);
    assert_int_equal(table_drawn_lines(t), 2);
    assert_false(attr_at(1, 2) & A_REVERSE);
    assert_true(attr_at(2, 2) & A_REVERSE);

    /* A changed cell rewrites its line; an unchanged refresh nothing. */
    fx.rows[3].cell[AGE] = "6m";
    table_refresh(t);
    draw(t, false);
    assert_int_equal(table_drawn_lines(t), 1);
    assert_line(4, "  job-d sweep-长名…  SUCCEEDED   10   6m        1");
    table_refresh(t);
    draw(t, false);
    assert_int_equal(table_drawn_lines(t), 0);
    /* A new attribute counts as a change. */
    fx.rows[2].cell[STATE] = "FAILED";
    table_refresh(t);
    draw(t, false);
    assert_int_equal(table_drawn_lines(t), 1);
    assert_true(attr_at(3, 21) & A_BOLD);

    /* Marks and the sort arrow rewrite what they change. */
    assert_int_equal(key(t, ' '), WIDGET_CHANGED | MOVED);
    draw(t, false);
    assert_int_equal(table_drawn_lines(t), 1);

    /* A wider cell changes the layout: every line. */
    fx.rows[0].cell[NAME] = "job-a-longer";
    table_refresh(t);
    draw(t, false);
    assert_int_equal(table_drawn_lines(t), WIN_H);

    /* Invalidated (the owner cleared the window), or a new rectangle: every line. */
    werase(win);
    table_invalidate(t);
    draw(t, false);
    assert_int_equal(table_drawn_lines(t), WIN_H);
    assert_line(1, "  job-a-longer 训练一号     RUNNING      5   3h        0");
    wd->ops->draw(wd, win, 0, 0, WIN_W - 1, false);
    assert_int_equal(table_drawn_lines(t), WIN_H);
    draw(t, false);
    assert_int_equal(table_drawn_lines(t), WIN_H);
    /* A theme change in the palette: every line. */
    struct widget_palette pal = *widget_palette_mono();
    table_set_palette(t, &pal);
    draw(t, false);
    assert_int_equal(table_drawn_lines(t), 0);
    pal.selected = A_BOLD;
    draw(t, false);
    assert_int_equal(table_drawn_lines(t), WIN_H);
    table_free(t);
}

/* ---- 100,000 rows ------------------------------------------------------ */

#define BIG 100000

struct big {
    size_t n;
    size_t cell_calls;
};

static size_t big_count(void *ctx)
{
    return ((struct big *)ctx)->n;
}

static const char *big_cell(void *ctx, size_t row, size_t col, char *scratch, size_t n)
{
    ((struct big *)ctx)->cell_calls++;
    if (col == 0)
        snprintf(scratch, n, "job-%06zu", row);
    else
        snprintf(scratch, n, "%zu", (row * 7919) % 1000);
    return scratch;
}

static uint64_t big_key(void *ctx, size_t row)
{
    return 1000000 + row;
}

static const struct table_source big_source = {
    .count = big_count, .cell = big_cell, .row_key = big_key};

static const struct table_column big_columns[] = {
    {"NAME", 4, 0, false},
    {"N", 3, 6, true},
};

static void test_100k_rows_scroll(void **state)
{
    struct big b = {BIG, 0};
    struct table *t = table_new(&big_source, &b, big_columns, 2);
    const int body = WIN_H - 1;

    assert_int_equal(table_view_count(t), BIG);
    werase(win);
    draw(t, false);
    assert_text(1, 0, 13, "  job-000000 ");

    /* A frame reads the rows on the screen only. */
    b.cell_calls = 0;
    draw(t, false);
    assert_int_equal(b.cell_calls, body * 2);

    assert_int_equal(fkey(t, KEY_END), MOVED);
    assert_int_equal(table_cursor_pos(t), BIG - 1);
    assert_int_equal(table_top(t), BIG - body);
    assert_int_equal(cursor_key(t), 1000000 + BIG - 1);
    draw(t, true);
    assert_text(1, 0, 13, "  job-099993 ");
    assert_text(WIN_H - 1, 0, 13, "  job-099999 ");
    assert_true(attr_at(WIN_H - 1, 2) & A_REVERSE);
    assert_int_equal(cursor_y, WIN_H - 1);
    assert_int_equal(cursor_x, 0);

    assert_int_equal(fkey(t, KEY_PPAGE), MOVED);
    assert_int_equal(table_cursor_pos(t), BIG - 1 - body);
    assert_int_equal(table_top(t), BIG - 2 * body);
    draw(t, false);
    assert_text(WIN_H - 1, 0, 13, "  job-099992 ");
    assert_true(attr_at(WIN_H - 1, 2) & A_REVERSE);
    assert_int_equal(fkey(t, KEY_PPAGE), MOVED);
    assert_int_equal(fkey(t, KEY_UP), MOVED);
    assert_int_equal(table_cursor_pos(t), BIG - 2 - 2 * body);
    draw(t, false);
    assert_text(WIN_H - 2, 0, 13, "  job-099984 ");
    assert_true(attr_at(WIN_H - 2, 2) & A_REVERSE);

    assert_int_equal(fkey(t, KEY_NPAGE), MOVED);
    assert_int_equal(fkey(t, KEY_NPAGE), MOVED);
    assert_int_equal(table_cursor_pos(t), BIG - 2);
    assert_int_equal(table_top(t), BIG - body);
    assert_int_equal(fkey(t, KEY_NPAGE), MOVED);
    assert_int_equal(table_cursor_pos(t), BIG - 1);
    assert_int_equal(fkey(t, KEY_NPAGE), WIDGET_HANDLED);
    draw(t, false);
    assert_text(WIN_H - 1, 0, 13, "  job-099999 ");

    /* Sorted by the numeric column, descending, the cursor on its row. */
    table_set_sort(t, 1, true);
    assert_int_equal(cursor_key(t), 1000000 + BIG - 1);
    char scratch[32];
    size_t prev = 1000;
    for (size_t i = 0; i < BIG; i++) {
        size_t v = (size_t)atoi(big_cell(&b, table_view_row(t, i), 1, scratch, sizeof scratch));
        assert_true(v <= prev);
        prev = v;
    }
    /* 100 rows per value; ties in the owner's order. */
    assert_int_equal(table_view_row(t, 0), 321);
    assert_int_equal(table_view_row(t, 1), 1321);

    assert_int_equal(fkey(t, KEY_HOME), MOVED);
    assert_int_equal(table_top(t), 0);
    draw(t, false);
    assert_text(0, 76, 4, "  N▼");
    assert_text(1, 0, 12, "  job-000321");
    assert_text(1, 76, 4, " 999");
    table_set_filter(t, "n=999");
    assert_int_equal(table_view_count(t), 100);
    table_free(t);
}

static short pair_at(int y, int x)
{
    cchar_t cc;
    wchar_t wch[CCHARW_MAX + 1];
    attr_t a;
    short pair;
    assert_int_equal(mvwin_wch(win, y, x, &cc), OK);
    assert_int_equal(getcchar(&cc, wch, &a, &pair, NULL), OK);
    return pair;
}

static attr_t colour_attr(void *ctx, size_t row, size_t col)
{
    return col == STATE ? COLOR_PAIR(3) | A_BOLD : 0;
}

static void test_colour_pairs(void **state)
{
    struct fixture fx;
    struct table_source src = fx_source;
    struct widget_palette pal = *widget_palette_mono();

    assert_int_equal(start_color(), OK);
    init_pair(1, COLOR_WHITE, COLOR_BLUE);
    init_pair(2, COLOR_YELLOW, COLOR_BLACK);
    init_pair(3, COLOR_RED, COLOR_BLACK);
    pal.selected = COLOR_PAIR(1);
    pal.title = COLOR_PAIR(2) | A_BOLD;
    src.cell_attr = colour_attr;
    fx_fill(&fx);
    struct table *t = table_new(&src, &fx, job_columns, NCOLS);
    table_set_palette(t, &pal);
    werase(win);
    draw(t, false);
    /* Pairs from the palette and from cell_attr reach the cells. */
    assert_int_equal(pair_at(0, 2), 2);
    assert_true(attr_at(0, 2) & A_BOLD);
    assert_int_equal(pair_at(2, 21), 3);
    assert_int_equal(pair_at(2, 2), 0);
    /* The cursor row takes the selected pair, keeping the cell's bold. */
    assert_int_equal(pair_at(1, 2), 1);
    assert_int_equal(pair_at(1, 21), 1);
    assert_true(attr_at(1, 21) & A_BOLD);
    /* The window's own attributes come back as they were. */
    attr_t a;
    short pair;
    wattr_get(win, &a, &pair, NULL);
    assert_int_equal(a, A_NORMAL);
    assert_int_equal(pair, 0);
    table_free(t);
}

static void test_widget_interface(void **state)
{
    static const struct widget_ops other = {.kind = "other"};
    struct widget not_a_table = {.ops = &other};
    struct fixture fx;
    struct table *t = new_jobs_table(&fx);
    struct widget *wd = table_widget(t);

    assert_ptr_equal(table_from_widget(wd), t);
    assert_null(table_from_widget(&not_a_table));
    assert_null(table_from_widget(NULL));
    assert_string_equal(wd->ops->kind, "table");
    assert_int_equal(wd->ops->height(wd, 80), 6);
    table_set_height(t, 4);
    assert_int_equal(wd->ops->height(wd, 80), 4);

    /* A set height draws that many lines (widths from those rows), and pages by it. */
    werase(win);
    draw(t, false);
    assert_line(3, "  job-c eval         PENDING    3  2d        2 quota exceeded");
    assert_line(4, "");
    assert_int_equal(fkey(t, KEY_NPAGE), MOVED);
    assert_int_equal(table_cursor_pos(t), 3);
    assert_int_equal(table_top(t), 2);

    /* Disabled draws dim. */
    wd->disabled = true;
    draw(t, false);
    assert_true(attr_at(1, 2) & A_DIM);
    wd->ops->destroy(wd);
    table_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_header_and_rows),
        cmocka_unit_test(test_cjk_widths_and_cut),
        cmocka_unit_test(test_keep_order_when_narrow),
        cmocka_unit_test(test_drop_whole_keep_distinct),
        cmocka_unit_test(test_sort_text_column),
        cmocka_unit_test(test_sort_numeric_column),
        cmocka_unit_test(test_owner_compare),
        cmocka_unit_test(test_cursor_follows_row_key),
        cmocka_unit_test(test_filter),
        cmocka_unit_test(test_marks),
        cmocka_unit_test(test_keys),
        cmocka_unit_test(test_redraws_only_changed_lines),
        cmocka_unit_test(test_100k_rows_scroll),
        cmocka_unit_test(test_colour_pairs),
        cmocka_unit_test(test_widget_interface),
    };
    return cmocka_run_group_tests(tests, setup_terminal, teardown_terminal);
}
