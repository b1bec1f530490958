/*
 * table: the table widget over the owner's rows (see table.h).
 *
 * The table owns: the columns (copied), the view (owner row indexes that
 * pass the filter, in sort order), the cursor as a view position plus the
 * key of its row, the scroll (`top`), the marks (a set of row keys,
 * widgets/markset.c), the parsed filter, and what the last draw wrote (one
 * hash per screen line). It never holds the owner's text beyond one rebuild or one
 * frame.
 *
 * Rebuild (table_refresh, a new filter): one pass over the owner's rows —
 * row key (cursor, marks), filter — then the sort. Sort: with the default
 * compare, each view row's sort cell is read once, case-folded into an
 * arena and parsed as a number; 16-byte records (an ordered number or the
 * text's 8-byte prefix, the row, the text's offset) are merge-sorted with
 * the compare inlined (widgets/sortrec.c), so a compare touches the arena only when two
 * prefixes are equal. O(n) cell calls and O(n log n) cheap compares.
 *
 * Frame (ops->draw): the cells of the rows on the screen are read into a
 * frame buffer, the column widths computed from them, then each screen line
 * is hashed (layout, texts, attributes, cursor, mark) and written only when
 * its hash differs from the one written there last. Hashes are never 0; 0
 * means "unknown", which table_invalidate and a new rectangle set.
 *
 * Parts: this file (the view, sorting, keys, the interface), table_filter.c
 * (the filter), table_draw.c (the frame); struct table is in table_priv.h.
 */
#include "widgets/table.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "util/strbuf.h"
#include "util/utf8.h"
#include "util/xalloc.h"
#include "widgets/markset.h"
#include "widgets/sortrec.h"
#include "widgets/table_priv.h"

static const struct widget_ops table_ops;

/* The owner's text of a cell, "" for NULL; valid until the next call. */
const char *cell_text(struct table *t, size_t row, size_t col)
{
    const char *s = t->src->cell(t->ctx, row, col, t->scratch, sizeof t->scratch);
    return s ? s : "";
}

/* ---- sorting ----------------------------------------------------------- */

/* Reads the sort column of every view row once into t->recs (default compare). */
static void cache_sort_keys(struct table *t)
{
    strbuf_reset(&t->arena);
    for (size_t i = 0; i < t->nview; i++) {
        struct sortrec *r = &t->recs[i];
        const char *s = cell_text(t, t->view[i], t->sort_col);
        size_t n = strlen(s);
        double num;
        r->text = 0;
        if (sortrec_parse_number(s, n, &num)) {
            r->key = sortrec_number_key(num);
            continue;
        }
        if (t->arena.len + n + 2 >= UINT32_MAX)
            n = 0; /* 4 GiB of sort text: the rest sort as empty */
        r->key = 0;
        r->text = (uint32_t)t->arena.len + 1;
        strbuf_grow(&t->arena, n + 1);
        char *dst = t->arena.buf + t->arena.len;
        for (size_t k = 0; k < n; k++) {
            dst[k] = fold(s[k]);
            if (k < 8)
                r->key |= (uint64_t)(unsigned char)dst[k] << (56 - 8 * k);
        }
        dst[n] = '\0';
        t->arena.len += n + 1;
        t->arena.buf[t->arena.len] = '\0';
    }
}

/* Sorts the view; returns the new position of the owner's row keep (or NO_ROW). */
static size_t sort_view(struct table *t, size_t keep)
{
    if (t->nview == 0)
        return NO_ROW;
    if (t->nview > t->recs_cap) {
        t->recs_cap = t->nview;
        free(t->recs);
        t->recs = xreallocarray(NULL, 2 * t->recs_cap, sizeof *t->recs);
    }
    struct sortrec_ctx c = {.desc = t->desc};
    if (t->sort_col == TABLE_UNSORTED || t->src->compare) {
        /* Unsorted: the row is the key. By the owner: every key equal. */
        bool by_owner = t->sort_col != TABLE_UNSORTED;
        if (by_owner) {
            c.owner_cmp = t->src->compare;
            c.owner_ctx = t->ctx;
            c.col = t->sort_col;
        }
        for (size_t i = 0; i < t->nview; i++)
            t->recs[i] = (struct sortrec){by_owner ? 0 : t->view[i], (uint32_t)t->view[i], 0};
    } else {
        for (size_t i = 0; i < t->nview; i++)
            t->recs[i].row = (uint32_t)t->view[i];
        cache_sort_keys(t);
        c.arena = strbuf_str(&t->arena);
    }
    sortrec_sort(&c, t->recs, t->recs + t->recs_cap, t->nview);
    size_t pos = NO_ROW;
    for (size_t i = 0; i < t->nview; i++) {
        t->view[i] = t->recs[i].row;
        if (t->recs[i].row == keep)
            pos = i;
    }
    return pos;
}

/* ---- the view ---------------------------------------------------------- */

/* Rows shown per page: those of the last draw. */
static size_t page_rows(const struct table *t)
{
    return t->page > 0 ? (size_t)t->page : DEFAULT_PAGE;
}

/* Keeps the cursor in the view and on the page, with no blank tail when rows fill it. */
void clamp_scroll(struct table *t)
{
    size_t page = page_rows(t);
    if (t->nview == 0) {
        t->cursor = t->top = 0;
        return;
    }
    if (t->cursor >= t->nview)
        t->cursor = t->nview - 1;
    if (t->top > t->cursor)
        t->top = t->cursor;
    if (t->cursor >= t->top + page)
        t->top = t->cursor - page + 1;
    if (t->nview <= page)
        t->top = 0;
    else if (t->top > t->nview - page)
        t->top = t->nview - page;
}

/* The owner's key of row (its index when the owner gave no row_key). */
uint64_t row_key(const struct table *t, size_t row)
{
    return t->src->row_key ? t->src->row_key(t->ctx, row) : (uint64_t)row;
}

/* Puts the cursor at view position pos and remembers its row's key. */
static void set_cursor(struct table *t, size_t pos)
{
    t->cursor = pos;
    clamp_scroll(t);
    t->has_cursor_key = t->nview > 0;
    if (t->has_cursor_key)
        t->cursor_key = row_key(t, t->view[t->cursor]);
}

/*
 * After the view changed: the cursor on the position of its row (pos, or
 * NO_ROW when the row is gone: the same position, clamped), at the same
 * line of the screen as before where the view allows.
 */
static void place_cursor(struct table *t, size_t pos)
{
    size_t offset = t->cursor >= t->top ? t->cursor - t->top : 0;
    if (pos == NO_ROW)
        pos = t->cursor;
    if (t->nview > 0 && pos >= t->nview)
        pos = t->nview - 1;
    t->top = pos >= offset ? pos - offset : 0;
    set_cursor(t, pos);
    t->base.dirty = true;
}

/* Re-reads the owner's rows: keys (cursor, marks), filter, then the sort. */
static void rebuild(struct table *t)
{
    size_t n = t->src->count(t->ctx), keep = NO_ROW;
    struct markset alive = {0};

    if (n > UINT32_MAX)
        n = UINT32_MAX; /* sort records hold 32-bit rows */

    if (n > t->view_cap) {
        free(t->view);
        t->view = xreallocarray(NULL, n, sizeof *t->view);
        t->view_cap = n;
    }
    t->nview = 0;
    for (size_t row = 0; row < n; row++) {
        uint64_t key = row_key(t, row);
        if (t->marks.n > 0 && markset_has(&t->marks, key))
            markset_add(&alive, key);
        if (t->nterms > 0 && !row_passes(t, row))
            continue;
        if (t->has_cursor_key && key == t->cursor_key)
            keep = row;
        t->view[t->nview++] = row;
    }
    markset_free(&t->marks);
    t->marks = alive;
    place_cursor(t, sort_view(t, keep));
}

/* ---- keys -------------------------------------------------------------- */

/* Moves the cursor to pos and the scroll to top (both clamped). */
static unsigned move_to(struct table *t, size_t pos, size_t top)
{
    size_t old_cursor = t->cursor, old_top = t->top;
    if (t->nview == 0)
        return WIDGET_HANDLED;
    t->top = top;
    set_cursor(t, pos >= t->nview ? t->nview - 1 : pos);
    if (t->cursor == old_cursor && t->top == old_top)
        return WIDGET_HANDLED;
    t->base.dirty = true;
    return WIDGET_HANDLED | WIDGET_REDRAW;
}

/* Up Down PgUp PgDn Home End: IGNORED for any other key. */
static unsigned key_move(struct table *t, int code)
{
    size_t page = page_rows(t), c = t->cursor, top = t->top;
    size_t last = t->nview > 0 ? t->nview - 1 : 0;
    switch (code) {
    case KEY_UP:
        return move_to(t, c > 0 ? c - 1 : 0, top);
    case KEY_DOWN:
        return move_to(t, c + 1, top);
    case KEY_PPAGE:
        return move_to(t, c > page ? c - page : 0, top > page ? top - page : 0);
    case KEY_NPAGE:
        return move_to(t, c + page, top + page);
    case KEY_HOME:
        return move_to(t, 0, 0);
    case KEY_END:
        return move_to(t, last, last);
    default:
        return WIDGET_IGNORED;
    }
}

/* Sorts by col in direction desc, the cursor staying on its row. */
static unsigned resort(struct table *t, size_t col, bool desc)
{
    if (col == t->sort_col && desc == t->desc)
        return WIDGET_HANDLED;
    t->sort_col = col;
    t->desc = desc;
    place_cursor(t, sort_view(t, t->nview > 0 ? t->view[t->cursor] : NO_ROW));
    return WIDGET_HANDLED | WIDGET_REDRAW;
}

/* Space: toggles the cursor row's mark. */
static unsigned toggle_mark(struct table *t)
{
    if (t->nview == 0)
        return WIDGET_HANDLED;
    uint64_t key = row_key(t, t->view[t->cursor]);
    table_set_marked(t, key, !table_is_marked(t, key));
    return WIDGET_CHANGED | WIDGET_HANDLED | WIDGET_REDRAW;
}

/* ops->key: moves, marks, sorting, Enter. */
static unsigned table_key(struct widget *wd, const struct widget_key *k)
{
    struct table *t = (struct table *)wd;
    size_t col = t->sort_col;

    if (wd->disabled || k->alt)
        return WIDGET_IGNORED;
    if (k->is_function) {
        if (k->code == KEY_F(6))
            return resort(t, col, !t->desc);
        if (k->code == KEY_ENTER)
            return t->nview > 0 ? WIDGET_ACTIVATE | WIDGET_HANDLED : WIDGET_HANDLED;
        return key_move(t, k->code);
    }
    switch (k->code) {
    case 'g':
        return key_move(t, KEY_HOME);
    case 'G':
        return key_move(t, KEY_END);
    case ' ':
        return toggle_mark(t);
    case 's':
        return resort(t, col, !t->desc);
    case '>':
        if (col == TABLE_UNSORTED)
            return resort(t, 0, t->desc);
        return col + 1 < t->ncols ? resort(t, col + 1, t->desc) : WIDGET_HANDLED;
    case '<':
        if (col == TABLE_UNSORTED)
            return resort(t, t->ncols - 1, t->desc);
        return col > 0 ? resort(t, col - 1, t->desc) : WIDGET_HANDLED;
    case '\r':
    case '\n':
        return t->nview > 0 ? WIDGET_ACTIVATE | WIDGET_HANDLED : WIDGET_HANDLED;
    default:
        return WIDGET_IGNORED;
    }
}

/* ops->height: the set height, else the header and every row. */
static int table_height(const struct widget *wd, int w)
{
    const struct table *t = (const struct table *)wd;
    if (t->height > 0)
        return t->height;
    return t->nview < (size_t)INT_MAX ? (int)t->nview + 1 : INT_MAX;
}

/* ops->destroy: frees the table and everything it owns (not the owner's rows). */
static void table_destroy(struct widget *wd)
{
    struct table *t = (struct table *)wd;
    for (size_t c = 0; c < t->ncols; c++) {
        free(t->cols[c].title);
        free(t->cols[c].name);
        free(t->cols[c].also);
    }
    free(t->cols);
    free(t->empty_text);
    free(t->view);
    strbuf_free(&t->filter);
    free_terms(t);
    markset_free(&t->marks);
    free(t->recs);
    strbuf_free(&t->arena);
    free(t->cells);
    free(t->rows);
    strbuf_free(&t->text);
    free(t->nat);
    free(t->shown_w);
    free(t->col_x);
    free(t->col_w);
    free(t->wbuf);
    free(t->drawn);
    free(t);
}

static const struct widget_ops table_ops = {
    .kind = "table",
    .draw = table_draw,
    .key = table_key,
    .height = table_height,
    .destroy = table_destroy,
};

/* ---- the interface ----------------------------------------------------- */

struct table *table_new(const struct table_source *src, void *ctx, const struct table_column *cols,
                        size_t ncols)
{
    struct table *t = xcalloc(1, sizeof *t);
    t->base.ops = &table_ops;
    t->base.dirty = true;
    t->src = src;
    t->ctx = ctx;
    t->pal = widget_palette_mono();
    t->utf8 = true;
    t->sort_col = TABLE_UNSORTED;
    t->ncols = ncols;
    t->cols = xcalloc(ncols ? ncols : 1, sizeof *t->cols);
    for (size_t c = 0; c < ncols; c++) {
        struct column *col = &t->cols[c];
        const char *title = cols[c].title ? cols[c].title : "";
        col->title = xstrdup(title);
        col->name = column_name(title, strlen(title));
        col->title_w = (int)utf8_width(title, strlen(title));
        col->min_w = cols[c].min_width > 0 ? cols[c].min_width : 1;
        col->max_w = cols[c].max_width;
        if (col->max_w > 0 && col->max_w < col->min_w)
            col->max_w = col->min_w;
        col->right = cols[c].right_align;
    }
    size_t n = ncols ? ncols : 1;
    t->nat = xcalloc(n, sizeof *t->nat);
    t->shown_w = xcalloc(n, sizeof *t->shown_w);
    t->col_x = xcalloc(n, sizeof *t->col_x);
    t->col_w = xcalloc(n, sizeof *t->col_w);
    rebuild(t);
    return t;
}

void table_free(struct table *t)
{
    if (t)
        table_destroy(&t->base);
}

struct widget *table_widget(struct table *t)
{
    return &t->base;
}

struct table *table_from_widget(struct widget *wd)
{
    return wd && wd->ops == &table_ops ? (struct table *)wd : NULL;
}

void table_refresh(struct table *t)
{
    rebuild(t);
}

/* A new filter re-reads every row; the same filter again does nothing. */
void table_set_filter(struct table *t, const char *filter)
{
    if (!filter)
        filter = "";
    if (strcmp(filter, strbuf_str(&t->filter)) == 0)
        return;
    strbuf_reset(&t->filter);
    strbuf_adds(&t->filter, filter);
    parse_filter(t);
    rebuild(t);
}

const char *table_filter(const struct table *t)
{
    return strbuf_str(&t->filter);
}

void table_set_sort(struct table *t, size_t col, bool descending)
{
    if (col != TABLE_UNSORTED && col >= t->ncols)
        col = TABLE_UNSORTED;
    resort(t, col, descending);
}

size_t table_sort_column(const struct table *t, bool *descending)
{
    if (descending)
        *descending = t->desc;
    return t->sort_col;
}

size_t table_view_count(const struct table *t)
{
    return t->nview;
}

size_t table_view_row(const struct table *t, size_t pos)
{
    return pos < t->nview ? t->view[pos] : NO_ROW;
}

size_t table_cursor_pos(const struct table *t)
{
    return t->cursor;
}

bool table_cursor_row(const struct table *t, size_t *row, uint64_t *key)
{
    if (t->nview == 0)
        return false;
    if (row)
        *row = t->view[t->cursor];
    if (key)
        *key = t->cursor_key;
    return true;
}

/* A linear search of the view: O(n) row_key calls. */
bool table_set_cursor_key(struct table *t, uint64_t key)
{
    for (size_t i = 0; i < t->nview; i++)
        if (row_key(t, t->view[i]) == key) {
            if (i != t->cursor) {
                set_cursor(t, i);
                t->base.dirty = true;
            }
            return true;
        }
    return false;
}

size_t table_top(const struct table *t)
{
    return t->top;
}

bool table_is_marked(const struct table *t, uint64_t key)
{
    return markset_has(&t->marks, key);
}

void table_set_marked(struct table *t, uint64_t key, bool marked)
{
    if (marked)
        markset_add(&t->marks, key);
    else
        markset_del(&t->marks, key);
    t->base.dirty = true;
}

void table_clear_marks(struct table *t)
{
    markset_free(&t->marks);
    t->base.dirty = true;
}

size_t table_mark_count(const struct table *t)
{
    return t->marks.n;
}

static int cmp_u64(const void *pa, const void *pb)
{
    uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
    return (a > b) - (a < b);
}

/* Collects the set's keys and sorts them. */
size_t table_marked(const struct table *t, uint64_t **keys)
{
    size_t n = 0;
    *keys = NULL;
    if (t->marks.n == 0)
        return 0;
    *keys = xreallocarray(NULL, t->marks.n, sizeof **keys);
    for (size_t i = 0; i < t->marks.cap; i++)
        if (t->marks.used[i])
            (*keys)[n++] = t->marks.key[i];
    qsort(*keys, n, sizeof **keys, cmp_u64);
    return n;
}

void table_set_height(struct table *t, int lines)
{
    t->height = lines > 0 ? lines : 0;
    t->base.dirty = true;
}

void table_set_palette(struct table *t, const struct widget_palette *pal)
{
    t->pal = pal ? pal : widget_palette_mono();
    t->base.dirty = true;
}

void table_set_utf8(struct table *t, bool utf8)
{
    t->utf8 = utf8;
    t->base.dirty = true;
}

void table_set_empty_text(struct table *t, const char *utf8)
{
    free(t->empty_text);
    t->empty_text = utf8 ? xstrdup(utf8) : NULL;
    t->base.dirty = true;
}

void table_invalidate(struct table *t)
{
    if (t->drawn)
        memset(t->drawn, 0, (size_t)t->drawn_cap * sizeof *t->drawn);
    t->base.dirty = true;
}

int table_drawn_lines(const struct table *t)
{
    return t->drawn_lines;
}

void table_set_also(struct table *t, size_t col, const char *title)
{
    if (col >= t->ncols)
        return;
    free(t->cols[col].also);
    t->cols[col].also = title ? column_name(title, strlen(title)) : NULL;
    parse_filter(t);
    table_refresh(t);
}

void table_set_widest(struct table *t, size_t col, int width)
{
    if (col >= t->ncols || t->cols[col].widest == width)
        return;
    t->cols[col].widest = width > 0 ? width : 0;
    t->base.dirty = true;
}

void table_set_drop(struct table *t, const bool *drop)
{
    t->drops = false;
    for (size_t c = 0; c < t->ncols; c++) {
        t->cols[c].drop = drop ? drop[c] : false;
        t->drops |= t->cols[c].drop;
    }
    t->base.dirty = true;
}

void table_set_distinct(struct table *t, size_t col, bool on)
{
    if (col >= t->ncols)
        return;
    t->cols[col].distinct = on;
    t->base.dirty = true;
}

void table_set_keep(struct table *t, const int *keep)
{
    t->keeps = keep != NULL;
    for (size_t c = 0; c < t->ncols; c++)
        t->cols[c].keep = keep ? keep[c] : 0;
    t->base.dirty = true;
}
