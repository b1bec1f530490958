/*
 * table: a table over rows the OWNER keeps (jobs, workers), read through
 * callbacks — a header row, a cursor row, marks for bulk actions, sorting by
 * any column and a filter, drawn so that a frame only writes the screen rows
 * whose content changed.
 *
 * Data: the table copies nothing of the rows. It keeps a view — an array of
 * the owner's row indexes that pass the filter, in sort order — rebuilt by
 * table_refresh (and by a new filter or sort). The owner calls table_refresh
 * whenever its rows change, before the table is drawn or sent a key: until
 * then the view holds the old indexes. The cursor and the marks hold row
 * keys (row_key, a stable id), so they stay on the same job across
 * re-sorting and refreshes. When the cursor's row is gone (deleted or
 * filtered out) the cursor stays at the same position, clamped; the rows
 * under it keep their place on the screen as far as the view allows. Marks
 * whose row left the owner's data are dropped at the next rebuild; marks on
 * rows the filter hides are kept, and listed by table_marked. The table
 * shows at most UINT32_MAX rows.
 *
 * Layout: a mark gutter (one cell, '*' in the palette's `key` role on a
 * marked row, then a space), then the columns one space apart. A column is
 * as wide as its title (plus the sort arrow), its widest cell among the
 * rows on the screen or the width set by table_set_widest, in display
 * cells (CJK two), within [min_width,
 * max_width]; flexible columns (max_width 0) share the room left. Too
 * narrow for all: columns shrink to their minimum in the order of their keep
 * (lowest first; within a keep flexible ones first, then from the right),
 * then the columns past the right edge are cut.
 * Text wider than its column is cut with "…" ('~' after
 * table_set_utf8(t, false)) at the cell edge; a wide character is never
 * split (a blank takes its place). The header is drawn in `title`, the sort
 * column's title followed by ▲ (ascending) or ▼ (descending), ^ / v in
 * ASCII. Rows are drawn in `normal`, or a cell in its cell_attr when that
 * is not 0; the cursor row in `selected` over the whole width (with the
 * non-colour bits of a cell's cell_attr, e.g. A_BOLD, kept). A disabled
 * table draws dim. An empty view shows the empty text (if any) dim on the
 * first row. Cell text is drawn as given: it must be sanitized
 * (utf8_sanitize) by the owner.
 *
 * Sorting: by one column at a time, or by none (the owner's order). With
 * no compare callback, cells compare by their text: when both parse as
 * numbers they compare as numbers — a decimal ("12", "-0.5", "97%") or a
 * duration made of whole-number groups with the units s m h d w y ("45s",
 * "3h5m", "2d") in seconds — numbers before text, text by ASCII
 * case-folded bytes. Each row's sort key is read and parsed once per
 * rebuild, not per compare. Descending reverses the order of rows that
 * differ; ties keep the owner's order either way.
 *
 * Filter (table_set_filter): terms separated by spaces, all of which must
 * match (AND). A term `col=value` matches rows whose cell in the column
 * titled col equals value, ASCII case-insensitively — or equals it after
 * a leading icon (a word with no ASCII letter or digit and a space:
 * "✗ FAILED" passes state=failed). The title ignores case, spaces, '_'
 * and '-' ("display_name=x" names "DISPLAY NAME"). A term naming no column
 * matches NOTHING: an empty view says the term is wrong, where ignoring it
 * would silently widen a bulk action. Any other term (no '=', or nothing
 * before it) matches rows where any cell contains it, ASCII
 * case-insensitively. No quoting: a value cannot hold a space.
 *
 * Keys (result bits, as in widget.h):
 *   Up Down PgUp PgDn Home End, g (first) G (last)
 *                        move the cursor               HANDLED|REDRAW
 *                        (HANDLED alone when it cannot move); PgUp/PgDn
 *                        move it and the view by the rows of the last draw
 *   Space                toggle the cursor row's mark  CHANGED|HANDLED|REDRAW
 *   < >                  sort by the column left / right of the sort column
 *                        (from unsorted: > the first column, < the last),
 *                        direction kept                HANDLED|REDRAW
 *   s, F6                reverse the sort (unsorted: the owner's order
 *                        reversed, no arrow shown)     HANDLED|REDRAW
 *   Enter                open the cursor row          ACTIVATE|HANDLED
 * On an empty view, Space and Enter answer HANDLED alone. Everything else,
 * Alt combinations and every key while disabled: IGNORED.
 *
 * Drawing and dirty: state changes (keys, refresh, filter, sort, marks)
 * set widget.dirty; the owner's loop calls ops->draw when it is set.
 * ops->draw(win, y, x, w) fills h lines (table_set_height; by default to
 * the bottom of win): the header, then the rows. It reads the cells of the
 * rows on the screen (only those), computes for each screen line a hash of
 * what it would draw (texts, attributes, cursor, mark, column layout,
 * palette), and writes only the lines whose hash differs from the one drawn
 * there last time. Everything is written again after table_invalidate, or
 * when the window or rectangle differs from the last draw. The owner MUST
 * call table_invalidate when something else wrote over the table's cells
 * (werase, clear, a popup drawn into the same window): the table cannot see
 * that. table_drawn_lines says how many lines the last draw wrote.
 * When focused, the curses cursor is left at the start of the cursor row.
 */
#ifndef WIDGETS_TABLE_H
#define WIDGETS_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "widgets/widget.h"

/* Bytes of the scratch buffer the table lends to cell(). */
#define TABLE_CELL_MAX 512
/* table_set_sort's column for the owner's order. */
#define TABLE_UNSORTED ((size_t)-1)

/* A column: its title, and its width in cells. */
struct table_column {
    const char *title;
    int min_width; /* at least 1 */
    int max_width; /* 0: flexible (shares the room left); else >= min_width */
    bool right_align;
};

/*
 * The owner's rows. count, cell and row_key are required. Rows are indexed
 * 0..count-1 in the owner's order; the indexes may change at each refresh,
 * keys may not.
 */
struct table_source {
    size_t (*count)(void *ctx);
    /*
     * The text of a cell, sanitized UTF-8: a string of the owner's, or
     * written into scratch (n bytes, TABLE_CELL_MAX). NULL reads as "". It
     * is used before the next call to cell.
     */
    const char *(*cell)(void *ctx, size_t row, size_t col, char *scratch, size_t n);
    /* The attributes of a cell (a state colour); 0 or NULL: `normal`. */
    attr_t (*cell_attr)(void *ctx, size_t row, size_t col);
    /* A stable id of the row (a job's), unique among the rows. */
    uint64_t (*row_key)(void *ctx, size_t row);
    /*
     * Optional: rows a and b by column col, <0, 0 or >0 (NULL: by cell
     * text, see above). Called O(n log n) times per sort: keep it cheap.
     */
    int (*compare)(void *ctx, size_t a, size_t b, size_t col);
};

struct table;

/*
 * A table over the owner's rows (src is kept, not copied) with ncols
 * columns (copied, titles too), unsorted, unfiltered, its view built.
 * Free with table_free or widget->ops->destroy; neither touches the rows.
 */
struct table *table_new(const struct table_source *src, void *ctx, const struct table_column *cols,
                        size_t ncols);
void table_free(struct table *t);

/* The table as a widget (the first member), and back (NULL if not one). */
struct widget *table_widget(struct table *t);
struct table *table_from_widget(struct widget *wd);

/* The owner's rows changed: rebuild the view (filter, sort), cursor on its key. */
void table_refresh(struct table *t);

/* Sets the filter (NULL or "": every row) and rebuilds the view. */
void table_set_filter(struct table *t, const char *filter);
/* The filter as set ("" when none). */
const char *table_filter(const struct table *t);

/* Sorts by col (TABLE_UNSORTED: the owner's order), reversed when descending. */
void table_set_sort(struct table *t, size_t col, bool descending);
/* The sort column (TABLE_UNSORTED when none) and, if asked, its direction. */
size_t table_sort_column(const struct table *t, bool *descending);

/* Rows in the view (after the filter). */
size_t table_view_count(const struct table *t);
/* The owner's row at view position pos (< table_view_count). */
size_t table_view_row(const struct table *t, size_t pos);
/* The cursor's view position (0 when the view is empty). */
size_t table_cursor_pos(const struct table *t);
/* The owner's row and key under the cursor; false when the view is empty. */
bool table_cursor_row(const struct table *t, size_t *row, uint64_t *key);
/* Moves the cursor to the row with key; false (cursor unmoved) when not in the view. */
bool table_set_cursor_key(struct table *t, uint64_t key);
/* The view position of the first row on the screen. */
size_t table_top(const struct table *t);

/* Whether the row with key is marked. */
bool table_is_marked(const struct table *t, uint64_t key);
/* Marks or unmarks the row with key; sets dirty. */
void table_set_marked(struct table *t, uint64_t key, bool marked);
void table_clear_marks(struct table *t);
size_t table_mark_count(const struct table *t);
/*
 * The marked keys, ascending, in a new array (*keys; NULL when none) the
 * caller frees; returns how many. Rows the filter hides are included.
 */
size_t table_marked(const struct table *t, uint64_t **keys);

/* Lines drawn, header included (0: to the bottom of the window). */
void table_set_height(struct table *t, int lines);
/* The roles to draw with (NULL: widget_palette_mono()); held by pointer. */
void table_set_palette(struct table *t, const struct widget_palette *pal);
/*
 * What gives way first when the room is short: column c shrinks to its
 * minimum before columns of higher keep[c] (within a keep: flexible first,
 * then from the right). NULL or all equal: flexible first, then from the
 * right. keep has one entry per column; copied. With an order given, a
 * flexible column counts only its minimum while the others are sized: its
 * text takes the room left, never theirs.
 */
void table_set_keep(struct table *t, const int *keep);
/*
 * Columns that give way whole (drop[c] true): when their keep's turn comes
 * (table_set_keep) they are left out rather than cut to a stub of two or
 * three cells. With any column so marked, a flexible column claims its
 * natural width at its own keep: the columns that give way before it are
 * dropped to show its text whole, the ones after it are not. drop has one
 * entry per column; copied; NULL: none.
 */
void table_set_drop(struct table *t, const bool *drop);
/*
 * Column col, when it must shrink, keeps at least the width that tells its
 * cells on the screen apart (names sharing a long prefix stay told apart).
 */
void table_set_distinct(struct table *t, size_t col, bool on);
/*
 * Lets filter terms name column col by another title too (NULL: none): for a
 * column standing in for one left out, as NAME does for a DISPLAY NAME that
 * says nothing NAME does not. Copied; the filter is parsed again.
 */
void table_set_also(struct table *t, size_t col, const char *title);
/*
 * Sizes column col as though a cell width cells wide were always on the
 * screen (0: only by what is there): for a column of an enum's values, the
 * longest of its names, so a row taking a longer value than any shown
 * (the first SUSPENDED) does not widen the column and move every line to
 * its right. Still within [min_width, max_width]; when the room is short,
 * that room is given up first, down to what the screen's cells need.
 */
void table_set_widest(struct table *t, size_t col, int width);
/* false: ASCII sort arrows (^ v) and cut marker (~). */
void table_set_utf8(struct table *t, bool utf8);
/* The dim line an empty view shows (NULL: none). */
void table_set_empty_text(struct table *t, const char *utf8);
/* Makes the next draw write every line (something wrote over the table). */
void table_invalidate(struct table *t);
/* Lines the last draw wrote (header included): for tests and benchmarks. */
int table_drawn_lines(const struct table *t);

#endif
