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
    int title_w;
    int min_w, max_w; /* max_w 0: flexible */
    bool right;
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

static const struct widget_ops table_ops;

static char fold(char c)
{
    return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static bool is_alnum(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* ---- filter ------------------------------------------------------------ */

/* s folded, with ' ', '_' and '-' left out: how titles and terms name a column. */
static char *column_name(const char *s, size_t n)
{
    char *out = xmalloc(n + 1);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '_' && s[i] != '-')
            out[k++] = fold(s[i]);
    out[k] = '\0';
    return out;
}

static char *folded_copy(const char *s, size_t n)
{
    char *out = xmalloc(n + 1);
    for (size_t i = 0; i < n; i++)
        out[i] = fold(s[i]);
    out[n] = '\0';
    return out;
}

static void free_terms(struct table *t)
{
    for (size_t i = 0; i < t->nterms; i++)
        free(t->terms[i].text);
    free(t->terms);
    t->terms = NULL;
    t->nterms = 0;
}

/* One term of the filter: `col=value` or a substring. */
static struct term parse_term(const struct table *t, const char *s, size_t n)
{
    struct term term = {.col = TERM_ANY};
    const char *eq = memchr(s, '=', n);
    if (eq && eq > s) {
        char *name = column_name(s, (size_t)(eq - s));
        term.col = TERM_NONE;
        for (size_t c = 0; c < t->ncols; c++)
            if (strcmp(name, t->cols[c].name) == 0) {
                term.col = c;
                break;
            }
        free(name);
        n -= (size_t)(eq + 1 - s);
        s = eq + 1;
    }
    term.text = folded_copy(s, n);
    term.len = n;
    return term;
}

/* Splits the filter at spaces into terms. */
static void parse_filter(struct table *t)
{
    const char *s = strbuf_str(&t->filter);
    free_terms(t);
    for (size_t i = 0; s[i];) {
        while (s[i] == ' ' || s[i] == '\t')
            i++;
        size_t start = i;
        while (s[i] && s[i] != ' ' && s[i] != '\t')
            i++;
        if (i == start)
            break;
        t->terms = xreallocarray(t->terms, t->nterms + 1, sizeof *t->terms);
        t->terms[t->nterms++] = parse_term(t, s + start, i - start);
    }
}

/* Whether hay (hn bytes) contains the folded needle, ASCII case-insensitively. */
static bool contains_folded(const char *hay, size_t hn, const char *needle, size_t nn)
{
    if (nn == 0)
        return true;
    for (size_t i = 0; i + nn <= hn; i++) {
        if (fold(hay[i]) != needle[0])
            continue;
        size_t j = 1;
        while (j < nn && fold(hay[i + j]) == needle[j])
            j++;
        if (j == nn)
            return true;
    }
    return false;
}

static bool equals_folded(const char *s, size_t n, const char *folded, size_t fn)
{
    if (n != fn)
        return false;
    for (size_t i = 0; i < n; i++)
        if (fold(s[i]) != folded[i])
            return false;
    return true;
}

/*
 * A `col=value` match: the cell equals value, or is an icon (a word with no
 * ASCII letter or digit), spaces, then value ("✗ FAILED").
 */
static bool cell_matches_value(const char *s, size_t n, const struct term *term)
{
    if (equals_folded(s, n, term->text, term->len))
        return true;
    const char *sp = memchr(s, ' ', n);
    if (!sp || sp == s)
        return false;
    for (const char *p = s; p < sp; p++)
        if (is_alnum(*p))
            return false;
    while (sp < s + n && *sp == ' ')
        sp++;
    return equals_folded(sp, (size_t)(s + n - sp), term->text, term->len);
}

/* The owner's text of a cell, "" for NULL; valid until the next call. */
static const char *cell_text(struct table *t, size_t row, size_t col)
{
    const char *s = t->src->cell(t->ctx, row, col, t->scratch, sizeof t->scratch);
    return s ? s : "";
}

/* Whether the owner's row passes every term of the filter. */
static bool row_passes(struct table *t, size_t row)
{
    for (size_t i = 0; i < t->nterms; i++) {
        const struct term *term = &t->terms[i];
        if (term->col == TERM_NONE)
            return false;
        if (term->col != TERM_ANY) {
            const char *s = cell_text(t, row, term->col);
            if (!cell_matches_value(s, strlen(s), term))
                return false;
            continue;
        }
        bool found = false;
        for (size_t c = 0; c < t->ncols && !found; c++) {
            const char *s = cell_text(t, row, c);
            found = contains_folded(s, strlen(s), term->text, term->len);
        }
        if (!found)
            return false;
    }
    return true;
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
static void clamp_scroll(struct table *t)
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
static uint64_t row_key(const struct table *t, size_t row)
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

/* ---- drawing ----------------------------------------------------------- */

/* FNV-1a over n bytes, from h. */
static uint64_t mix(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001B3ull;
    return h;
}

static uint64_t mix_int(uint64_t h, uint64_t v)
{
    return mix(h, &v, sizeof v);
}

/* Room for n more wide characters in the line buffer. */
static wchar_t *wbuf(struct table *t, size_t n)
{
    if (n > t->wbuf_cap) {
        t->wbuf_cap = n;
        free(t->wbuf);
        t->wbuf = xreallocarray(NULL, n, sizeof *t->wbuf);
    }
    return t->wbuf;
}

/*
 * Writes s (n bytes, tw cells) in exactly cw cells at (y, x): aligned, or
 * cut with the ellipsis; a suffix code point (the sort arrow, 0: none)
 * takes the last cell of the text. A wide character that does not fit
 * leaves a blank; marks at the start of s are dropped.
 */
static void put_cell(struct table *t, WINDOW *win, int y, int x, int cw, const char *s, size_t n,
                     int tw, bool right, uint32_t suffix)
{
    if (cw <= 0)
        return;
    wchar_t *buf = wbuf(t, n + (size_t)cw + 2);
    int room = suffix ? cw - 1 : cw, used = 0;
    size_t len = 0;
    bool cut = tw > room;
    if (cut)
        room--; /* the ellipsis */
    for (size_t i = 0; i < n && room >= 0;) {
        uint32_t cp;
        i += utf8_decode(s + i, n - i, &cp);
        int w = utf8_cpwidth(cp);
        if (w < 0 || (w == 0 && len == 0))
            continue;
        if (used + w > room)
            break;
        buf[len++] = (wchar_t)cp;
        used += w;
    }
    if (cut && room >= 0) {
        buf[len++] = (wchar_t)(t->utf8 ? ELLIPSIS : '~');
        used++;
    }
    if (suffix) {
        buf[len++] = (wchar_t)suffix;
        used++;
    }
    int pad = cw - used;
    if (right && pad > 0) {
        memmove(buf + pad, buf, len * sizeof *buf);
        for (int k = 0; k < pad; k++)
            buf[k] = ' ';
        len += (size_t)pad;
    } else {
        for (int k = 0; k < pad; k++)
            buf[len++] = ' ';
    }
    mvwaddnwstr(win, y, x, buf, (int)len);
}

/* Writes w blanks at (y, x) in the window's attributes. */
static void put_blanks(struct table *t, WINDOW *win, int y, int x, int w)
{
    if (w <= 0)
        return;
    /* Terminated too: ncurses may look one past the n it was given (valgrind saw it). */
    wchar_t *buf = wbuf(t, (size_t)w + 1);
    for (int k = 0; k < w; k++)
        buf[k] = ' ';
    buf[w] = L'\0';
    mvwaddnwstr(win, y, x, buf, w);
}

/* Sets the window's attributes to a, its colour pair included. */
static void set_attr(WINDOW *win, attr_t a)
{
    wattr_set(win, a & ~A_COLOR, (short)PAIR_NUMBER(a), NULL);
}

/* Reads the cells of the rows on the screen (rows of them) and the natural column widths. */
static void read_frame(struct table *t, size_t rows)
{
    if (rows * t->ncols > t->cells_cap) {
        t->cells_cap = rows * t->ncols;
        free(t->cells);
        t->cells = xreallocarray(NULL, t->cells_cap, sizeof *t->cells);
    }
    if (rows > t->rows_cap) {
        t->rows_cap = rows;
        free(t->rows);
        t->rows = xreallocarray(NULL, t->rows_cap, sizeof *t->rows);
    }
    strbuf_reset(&t->text);
    for (size_t c = 0; c < t->ncols; c++)
        t->nat[c] = t->cols[c].title_w + (c == t->sort_col);
    for (size_t r = 0; r < rows; r++) {
        size_t row = t->view[t->top + r];
        t->rows[r].cursor = t->top + r == t->cursor;
        t->rows[r].marked = t->marks.n > 0 && markset_has(&t->marks, row_key(t, row));
        for (size_t c = 0; c < t->ncols; c++) {
            struct fcell *fc = &t->cells[r * t->ncols + c];
            const char *s = cell_text(t, row, c);
            fc->len = strlen(s);
            fc->off = t->text.len;
            strbuf_add(&t->text, s, fc->len);
            size_t w = utf8_width(s, fc->len);
            fc->width = w > CELL_WIDTH_MAX ? CELL_WIDTH_MAX : (int)w;
            fc->attr = t->src->cell_attr ? t->src->cell_attr(t->ctx, row, c) : 0;
            if (fc->width > t->nat[c])
                t->nat[c] = fc->width;
        }
    }
}

/*
 * Column positions and widths (0: cut off) in w cells from the natural
 * widths: flexible columns share the room left; too little room shrinks
 * flexible columns to their minimum, then the others from the right, then
 * cuts at the edge.
 */
static void layout(struct table *t, int w)
{
    long need = (long)t->ncols - 1, nflex = 0;
    for (size_t c = 0; c < t->ncols; c++) {
        const struct column *col = &t->cols[c];
        int cw = t->nat[c] < col->min_w ? col->min_w : t->nat[c];
        if (col->max_w > 0 && cw > col->max_w)
            cw = col->max_w;
        t->col_w[c] = cw;
        need += cw;
        nflex += col->max_w == 0;
    }
    long avail = (long)w - GUTTER;
    if (need <= avail && nflex > 0) {
        long extra = avail - need, k = 0;
        for (size_t c = 0; c < t->ncols; c++)
            if (t->cols[c].max_w == 0)
                t->col_w[c] += (int)(extra / nflex + (k++ < extra % nflex));
    }
    for (int pass = 0; pass < 2 && need > avail; pass++) {
        for (size_t c = t->ncols; c-- > 0 && need > avail;) {
            if ((t->cols[c].max_w == 0) != (pass == 0))
                continue;
            long d = t->col_w[c] - t->cols[c].min_w;
            if (d > need - avail)
                d = need - avail;
            if (d > 0) {
                t->col_w[c] -= (int)d;
                need -= d;
            }
        }
    }
    int x = GUTTER;
    for (size_t c = 0; c < t->ncols; c++) {
        t->col_x[c] = x;
        if (x >= w) {
            t->col_w[c] = 0;
            continue;
        }
        int cw = t->col_w[c];
        if (cw > w - x)
            t->col_w[c] = w - x;
        x += cw + 1;
    }
}

/* A hash of everything every line depends on: rectangle, layout, palette, modes. */
static uint64_t layout_hash(const struct table *t, int w)
{
    const struct widget_palette *p = t->pal;
    attr_t attrs[] = {p->normal, p->dim, p->selected, p->title, p->key};
    uint64_t h = 0xCBF29CE484222325ull;
    h = mix_int(h, (uint64_t)w);
    h = mix_int(h, (uint64_t)t->utf8 << 1 | t->base.disabled);
    h = mix(h, attrs, sizeof attrs);
    h = mix(h, t->col_x, t->ncols * sizeof *t->col_x);
    return mix(h, t->col_w, t->ncols * sizeof *t->col_w);
}

static attr_t with_disabled(const struct table *t, attr_t a)
{
    return t->base.disabled ? a | A_DIM : a;
}

/* Writes the header line: titles, the sort arrow, separators, in `title`. */
static void draw_header(struct table *t, WINDOW *win, int y, int x, int w)
{
    set_attr(win, with_disabled(t, t->pal->title));
    put_blanks(t, win, y, x, w);
    uint32_t arrow = t->desc ? (t->utf8 ? ARROW_DOWN : 'v') : (t->utf8 ? ARROW_UP : '^');
    for (size_t c = 0; c < t->ncols; c++) {
        const struct column *col = &t->cols[c];
        bool sorted = c == t->sort_col;
        put_cell(t, win, y, x + t->col_x[c], t->col_w[c], col->title, strlen(col->title),
                 col->title_w, col->right, sorted ? arrow : 0);
    }
}

/* What the header would draw: the layout is in seed; the sort column and direction. */
static uint64_t header_hash(const struct table *t, uint64_t seed)
{
    return mix_int(mix_int(seed, 'H'), (uint64_t)t->sort_col << 1 | t->desc) | 1;
}

/* What the r-th row on the screen would draw: flags, then each cell's attr and text. */
static uint64_t row_hash(const struct table *t, uint64_t seed, size_t r)
{
    const struct frow *fr = &t->rows[r];
    uint64_t h = mix_int(seed, 'R' | (uint64_t)fr->cursor << 8 | (uint64_t)fr->marked << 9);
    for (size_t c = 0; c < t->ncols; c++) {
        const struct fcell *fc = &t->cells[r * t->ncols + c];
        h = mix_int(h, (uint64_t)fc->attr);
        h = mix_int(h, fc->len);
        h = mix(h, strbuf_str(&t->text) + fc->off, fc->len);
    }
    return h | 1;
}

/* Writes the r-th row on the screen at line y. */
static void draw_row(struct table *t, WINDOW *win, int y, int x, int w, size_t r)
{
    const struct frow *fr = &t->rows[r];
    attr_t base = with_disabled(t, fr->cursor ? t->pal->selected : t->pal->normal);
    set_attr(win, base);
    put_blanks(t, win, y, x, w);
    if (fr->marked) {
        set_attr(win, with_disabled(t, fr->cursor ? t->pal->selected : t->pal->key));
        mvwaddch(win, y, x, MARK_GLYPH);
    }
    for (size_t c = 0; c < t->ncols; c++) {
        const struct fcell *fc = &t->cells[r * t->ncols + c];
        if (t->col_w[c] <= 0)
            continue;
        attr_t a = base;
        if (fc->attr != 0)
            a = with_disabled(t, fr->cursor ? t->pal->selected | (fc->attr & ~A_COLOR) : fc->attr);
        set_attr(win, a);
        put_cell(t, win, y, x + t->col_x[c], t->col_w[c], strbuf_str(&t->text) + fc->off, fc->len,
                 fc->width, t->cols[c].right, 0);
    }
}

/* Writes an empty line (the empty text on the first line of an empty view). */
static void draw_blank(struct table *t, WINDOW *win, int y, int x, int w, bool empty_text)
{
    set_attr(win, with_disabled(t, t->pal->normal));
    put_blanks(t, win, y, x, w);
    if (empty_text) {
        set_attr(win, with_disabled(t, t->pal->dim));
        size_t n = strlen(t->empty_text);
        put_cell(t, win, y, x + GUTTER, w - GUTTER, t->empty_text, n,
                 (int)utf8_width(t->empty_text, n), false, 0);
    }
}

/* Forgets what was drawn when the rectangle changed; sizes the hash array. */
static void check_rectangle(struct table *t, WINDOW *win, int y, int x, int w, int h)
{
    if (win == t->last_win && y == t->last_y && x == t->last_x && w == t->last_w && h == t->last_h)
        return;
    t->last_win = win;
    t->last_y = y;
    t->last_x = x;
    t->last_w = w;
    t->last_h = h;
    if (h > t->drawn_cap) {
        free(t->drawn);
        t->drawn = xreallocarray(NULL, (size_t)h, sizeof *t->drawn);
        t->drawn_cap = h;
    }
    memset(t->drawn, 0, (size_t)h * sizeof *t->drawn);
}

/* Writes line i when its hash changed; counts it. */
static bool needs_line(struct table *t, int i, uint64_t hash)
{
    if (t->drawn[i] == hash)
        return false;
    t->drawn[i] = hash;
    t->drawn_lines++;
    return true;
}

/* ops->draw: header and rows; only the lines whose hash changed are written. */
static void table_draw(struct widget *wd, WINDOW *win, int y, int x, int w, bool focused)
{
    struct table *t = (struct table *)wd;
    attr_t attrs;
    short pair;

    wd->dirty = false;
    t->drawn_lines = 0;
    int h = t->height > 0 ? t->height : getmaxy(win) - y;
    if (w <= 0 || h <= 0)
        return;
    check_rectangle(t, win, y, x, w, h);
    t->page = h > 1 ? h - 1 : 1;
    clamp_scroll(t);
    size_t body = (size_t)(h - 1);
    size_t rows = t->nview - t->top < body ? t->nview - t->top : body;

    wattr_get(win, &attrs, &pair, NULL);
    read_frame(t, rows);
    layout(t, w);
    uint64_t seed = layout_hash(t, w);
    if (needs_line(t, 0, header_hash(t, seed)))
        draw_header(t, win, y, x, w);
    for (size_t r = 0; r < body; r++) {
        int line = (int)r + 1;
        if (r < rows) {
            if (needs_line(t, line, row_hash(t, seed, r)))
                draw_row(t, win, y + line, x, w, r);
            continue;
        }
        bool empty_text = r == 0 && t->nview == 0 && t->empty_text;
        uint64_t hash = mix_int(seed, empty_text ? 'E' : 'B');
        if (empty_text)
            hash = mix(hash, t->empty_text, strlen(t->empty_text));
        if (needs_line(t, line, hash | 1))
            draw_blank(t, win, y + line, x, w, empty_text);
    }
    wattr_set(win, attrs, pair, NULL);
    if (focused)
        wmove(win, t->nview > 0 && body > 0 ? y + 1 + (int)(t->cursor - t->top) : y, x);
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
