/*
 * table_priv: struct table and what the parts of the table widget share —
 * table.c (the view, sorting, keys, the interface), table_filter.c (parsing
 * the filter, matching rows) and table_draw.c (the frame: reading the cells
 * on the screen, the layout, hashed line-by-line drawing). Included only by
 * widgets/table*.c; everyone else sees struct table as opaque (table.h).
 */
#ifndef WIDGETS_TABLE_PRIV_H
#define WIDGETS_TABLE_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <wchar.h>

#include "util/strbuf.h"
#include "widgets/markset.h"
#include "widgets/table.h"

struct sortrec;

enum {
    GUTTER = 2,       /* the mark cell and a space */
    DEFAULT_PAGE = 1, /* PgUp/PgDn before the first draw */
    CELL_WIDTH_MAX = 4096,
};

#define TERM_ANY ((size_t)-1)  /* a term that may match any cell */
#define TERM_NONE ((size_t)-2) /* a term naming no column: matches nothing */
#define NO_ROW ((size_t)-1)

#define MARK_GLYPH '*'
#define ELLIPSIS 0x2026u
#define ARROW_UP 0x25B2u
#define ARROW_DOWN 0x25BCu

struct column {
    char *title;
    char *name; /* the title folded, without ' ', '_', '-': what filter terms name */
    char *also; /* table_column.also folded the same way, or NULL */
    int title_w;
    int min_w, max_w; /* max_w 0: flexible */
    bool right;
    int keep; /* table_set_keep: gives way before columns of higher keep */
    int widest; /* table_set_widest: the natural width is at least this */
    bool drop;      /* table_set_drop: gives way whole, never cut to a stub */
    bool distinct;  /* table_set_distinct: shrinks no narrower than keeps its cells apart */
    int distinct_w; /* that width, for the rows on the screen now */
};

/* One filter term: text folded to ASCII lower case. */
struct term {
    char *text;
    size_t len;
    size_t col; /* a column, TERM_ANY or TERM_NONE */
};

/* A cell of a row on the screen, read for the current frame. */
struct fcell {
    size_t off, len; /* text in the frame buffer */
    int width;
    attr_t attr;
};

/* A row on the screen. */
struct frow {
    bool marked;
    bool cursor;
};

struct table {
    struct widget base; /* first: a table is a widget */
    const struct table_source *src;
    void *ctx;
    struct column *cols;
    size_t ncols;
    bool keeps; /* table_set_keep was given an order: a flexible column claims no room before it is
                   given */
    bool drops; /* table_set_drop marked a column: a flexible one claims its natural width */
    const struct widget_palette *pal;
    bool utf8;
    char *empty_text;
    int height; /* 0: to the bottom of the window */

    size_t *view;
    size_t nview, view_cap;
    size_t cursor, top;
    uint64_t cursor_key;
    bool has_cursor_key;
    size_t sort_col;
    bool desc;
    struct strbuf filter;
    struct term *terms;
    size_t nterms;
    struct markset marks;

    struct sortrec *recs; /* sort scratch, kept between sorts */
    size_t recs_cap;
    struct strbuf arena;

    /* The frame: cells of the rows on the screen and the layout. */
    struct fcell *cells;
    size_t cells_cap;
    struct frow *rows;
    size_t rows_cap;
    struct strbuf text;
    int *nat, *col_x, *col_w;
    int *shown_w; /* the natural widths by the screen's cells alone (no widest) */
    wchar_t *wbuf;
    size_t wbuf_cap;

    uint64_t *drawn; /* hash per screen line, 0: unknown */
    int drawn_cap;
    WINDOW *last_win;
    int last_y, last_x, last_w, last_h;
    int page;
    int drawn_lines;
    char scratch[TABLE_CELL_MAX];
};

static inline char fold(char c)
{
    return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* The filter (table_filter.c). */
char *column_name(const char *s, size_t n);
void free_terms(struct table *t);
void parse_filter(struct table *t);
bool row_passes(struct table *t, size_t row);

/* The view (table.c). */
const char *cell_text(struct table *t, size_t row, size_t col);
void clamp_scroll(struct table *t);
uint64_t row_key(const struct table *t, size_t row);

/* The frame (table_draw.c): ops->draw. */
void table_draw(struct widget *wd, WINDOW *win, int y, int x, int w, bool focused);

#endif
