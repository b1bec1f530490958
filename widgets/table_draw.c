/*
 * table_draw: the table widget's frame (ops->draw, see table.c's header
 * comment): the cells of the rows on the screen read into a frame buffer,
 * the column widths computed from them, then each screen line hashed and
 * written only when its hash differs from what was written there last.
 * Called through the widget ops that table.c sets up; moved out of table.c
 * unchanged.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "util/strbuf.h"
#include "util/utf8.h"
#include "util/xalloc.h"
#include "widgets/table_priv.h"

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

/*
 * The narrowest width at which column c's cells on the screen (rows of them,
 * read) still differ where their texts do: a cut cell shows its first
 * width - 1 cells and "…", so two texts sharing a prefix of p cells need
 * p + 2 (or the longer one whole).
 */
static int distinct_width(const struct table *t, size_t rows, size_t c)
{
    const char *text = strbuf_str(&t->text);
    int need = 0;
    for (size_t a = 0; a < rows; a++) {
        const struct fcell *x = &t->cells[a * t->ncols + c];
        for (size_t b = a + 1; b < rows; b++) {
            const struct fcell *y = &t->cells[b * t->ncols + c];
            if (x->len == y->len && memcmp(text + x->off, text + y->off, x->len) == 0)
                continue; /* the same text: nothing tells them apart */
            size_t p = 0;
            while (p < x->len && p < y->len && text[x->off + p] == text[y->off + p])
                p++;
            while (p > 0 && ((unsigned char)text[x->off + p] & 0xC0) == 0x80)
                p--; /* whole characters */
            int pw = (int)utf8_width(text + x->off, p) + 2;
            int longer = x->width > y->width ? x->width : y->width;
            int w = pw < longer ? pw : longer;
            need = w > need ? w : need;
        }
    }
    return need;
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
    for (size_t c = 0; c < t->ncols; c++) {
        t->shown_w[c] = t->nat[c];
        if (t->cols[c].widest > t->nat[c])
            t->nat[c] = t->cols[c].widest;
        if (t->cols[c].distinct)
            t->cols[c].distinct_w = distinct_width(t, rows, c);
    }
}

/*
 * Column positions and widths (0: cut off) in w cells from the natural
 * widths: flexible columns share the room left; too little room shrinks
 * columns to their minimum in keep order (table.h), then cuts at the edge.
 */
static void layout(struct table *t, int w)
{
    long need = (long)t->ncols - 1, nflex = 0;
    for (size_t c = 0; c < t->ncols; c++) {
        const struct column *col = &t->cols[c];
        int cw = t->nat[c] < col->min_w ? col->min_w : t->nat[c];
        if (t->keeps && !t->drops && col->max_w == 0)
            cw = col->min_w; /* its text takes what is left, not the others' room */
        else if (t->drops && col->max_w == 0)
            cw = t->nat[c]; /* its text whole; its minimum is for when it must shrink */
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
    /* Too narrow: first give up the room kept for values not on the screen (table_set_widest). */
    for (size_t c = t->ncols; c-- > 0 && need > avail;) {
        int floor_w = t->shown_w[c] < t->cols[c].min_w ? t->cols[c].min_w : t->shown_w[c];
        long d = t->col_w[c] - floor_w;
        if (d > need - avail)
            d = need - avail;
        if (d > 0 && t->cols[c].widest > 0) {
            t->col_w[c] -= (int)d;
            need -= d;
        }
    }
    /* Then shrink in keep order (lowest first; flexible, then right to left). */
    int lo = 0, hi = 0;
    for (size_t c = 0; c < t->ncols; c++) {
        lo = c == 0 || t->cols[c].keep < lo ? t->cols[c].keep : lo;
        hi = c == 0 || t->cols[c].keep > hi ? t->cols[c].keep : hi;
    }
    for (int keep = lo; keep <= hi && need > avail; keep++) {
        for (int pass = 0; pass < 2 && need > avail; pass++) {
            for (size_t c = t->ncols; c-- > 0 && need > avail;) {
                if (t->cols[c].keep != keep || (t->cols[c].max_w == 0) != (pass == 0))
                    continue;
                if (t->cols[c].drop && t->col_w[c] > 0) { /* whole, or not at all */
                    need -= t->col_w[c] + 1;
                    t->col_w[c] = 0;
                    continue;
                }
                int floor_w = t->cols[c].min_w;
                if (t->cols[c].distinct && t->cols[c].distinct_w > floor_w)
                    floor_w = t->cols[c].distinct_w < t->col_w[c] ? t->cols[c].distinct_w
                                                                  : t->col_w[c];
                long d = t->col_w[c] - floor_w;
                if (d > need - avail)
                    d = need - avail;
                if (d > 0) {
                    t->col_w[c] -= (int)d;
                    need -= d;
                }
            }
        }
    }
    /* A column dropped whole comes back when the room its drop freed beyond need holds it. */
    for (int keep = hi; t->drops && keep >= lo && need < avail; keep--) {
        for (size_t c = 0; c < t->ncols && need < avail; c++) {
            const struct column *col = &t->cols[c];
            if (!col->drop || col->keep != keep || t->col_w[c] != 0)
                continue;
            int cw = t->nat[c] < col->min_w ? col->min_w : t->nat[c];
            if (col->max_w > 0 && cw > col->max_w)
                cw = col->max_w;
            if (t->shown_w[c] < cw && t->cols[c].widest > 0) /* the room kept for unseen values */
                cw = t->shown_w[c] < col->min_w ? col->min_w : t->shown_w[c];
            if (need + cw + 1 <= avail) {
                t->col_w[c] = cw;
                need += cw + 1;
            }
        }
    }
    if (t->drops && need < avail && nflex > 0) { /* dropping made more room than needed */
        long extra = avail - need, k = 0;
        for (size_t c = 0; c < t->ncols; c++)
            if (t->cols[c].max_w == 0 && t->col_w[c] > 0)
                t->col_w[c] += (int)(extra / nflex + (k++ < extra % nflex));
    }
    int x = GUTTER;
    for (size_t c = 0; c < t->ncols; c++) {
        t->col_x[c] = x;
        if (t->cols[c].drop && t->col_w[c] == 0)
            continue; /* dropped: takes no room, not even its separator */
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
void table_draw(struct widget *wd, WINDOW *win, int y, int x, int w, bool focused)
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
