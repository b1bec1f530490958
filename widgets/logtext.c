/*
 * logtext: a log line in terminal cells, for the log view (widgets/logview.c)
 * — the "units and rows" it lays out and draws. A unit is a character and
 * the zero-width marks after it; a tab runs to the next multiple of
 * LOGTEXT_TAB_CELLS; a wide character that does not fit a wrapped row's
 * last cell moves whole to the next row. Drawing writes each cell once,
 * shows a lone mark on a dotted circle and a control character as U+FFFD,
 * and puts search matches in the palette's selected role.
 */
#include "widgets/logtext.h"

#include <string.h>

#include "util/logring.h"
#include "util/strbuf.h"
#include "util/utf8.h"

/* Draws in a palette role (its colour pair included). */
void logtext_use_role(WINDOW *win, attr_t a)
{
    wattr_set(win, a & ~A_COLOR, (short)PAIR_NUMBER(a), NULL);
}

/*
 * The unit at byte i of s: returns its end, sets its base code point and
 * the cells it takes at column col (a tab up to the next stop; a lone mark
 * or a control character one).
 */
static size_t unit_at(const char *s, size_t len, size_t i, int col, uint32_t *base, int *cells)
{
    uint32_t cp;
    size_t k = i + utf8_decode(s + i, len - i, &cp);
    *base = cp;
    if (cp == '\t') {
        *cells = LOGTEXT_TAB_CELLS - col % LOGTEXT_TAB_CELLS;
        return k;
    }
    *cells = utf8_cpwidth(cp) == 2 ? 2 : 1;
    while (k < len) {
        uint32_t m;
        size_t mk = utf8_decode(s + k, len - k, &m);
        if (utf8_cpwidth(m) != 0)
            break;
        k += mk;
    }
    return k;
}

/*
 * Where the wrapped row starting at byte from ends, w cells wide: a wide
 * character that does not fit goes to the next row; a tab fills the rest
 * of its row; a unit wider than a whole row stands alone.
 */
size_t logtext_row_end(const char *s, size_t len, size_t from, int w)
{
    int col = 0;
    size_t i = from;
    while (i < len) {
        uint32_t b;
        int c;
        size_t next = unit_at(s, len, i, col, &b, &c);
        if (col + c > w) {
            if (col == 0 || (b == '\t' && col < w))
                i = next;
            break;
        }
        col += c;
        i = next;
    }
    return i;
}

/* Rows line s takes at text width w. */
int logtext_rows(const char *s, size_t len, int w, bool wrap)
{
    if (!wrap || w <= 0)
        return 1;
    int n = 0;
    size_t from = 0;
    do {
        from = logtext_row_end(s, len, from, w);
        n++;
    } while (from < len);
    return n;
}

/* Cells a whole line takes unwrapped. */
int logtext_cells(const char *s, size_t len)
{
    int col = 0;
    for (size_t i = 0; i < len;) {
        uint32_t b;
        int c;
        i = unit_at(s, len, i, col, &b, &c);
        col += c;
    }
    return col;
}

/*
 * Draws the unit s[i..end) with base b at (y, x), c cells: a tab as
 * blanks, a lone mark on a dotted circle, a control character as U+FFFD.
 */
static void put_unit(WINDOW *win, int y, int x, const char *s, size_t i, size_t end, uint32_t b,
                     int c)
{
    wchar_t wch[CCHARW_MAX + 1];
    size_t n = 0;
    cchar_t cc;

    if (b == '\t') {
        for (int k = 0; k < c; k++)
            mvwaddch(win, y, x + k, ' ');
        return;
    }
    if (b < 0x7F && b >= 0x20) {
        mvwaddch(win, y, x, (chtype)b);
        return;
    }
    int bw = utf8_cpwidth(b);
    if (bw == 0) {
        wch[n++] = 0x25CC;
    } else {
        uint32_t cp;
        i += utf8_decode(s + i, end - i, &cp);
        wch[n++] = (wchar_t)(bw < 0 ? UTF8_REPLACEMENT : b);
    }
    while (i < end && n < CCHARW_MAX) {
        uint32_t cp;
        i += utf8_decode(s + i, end - i, &cp);
        wch[n++] = (wchar_t)cp;
    }
    wch[n] = 0;
    if (setcchar(&cc, wch, A_NORMAL, 0, NULL) != OK) {
        wch[1] = 0;
        if (setcchar(&cc, wch, A_NORMAL, 0, NULL) != OK)
            return;
    }
    mvwadd_wch(win, y, x, &cc);
}

/* Draws s at (y, x) clipped to w cells; returns the cells used. */
int logtext_put(WINDOW *win, int y, int x, int w, const char *s, size_t len)
{
    int col = 0;
    for (size_t i = 0; i < len;) {
        uint32_t b;
        int c;
        size_t next = unit_at(s, len, i, col, &b, &c);
        if (col + c > w)
            break;
        put_unit(win, y, x + col, s, i, next, b, c);
        col += c;
        i = next;
    }
    return col;
}

/* Blanks w cells at (y, x). */
void logtext_blank(WINDOW *win, int y, int x, int w)
{
    for (int c = 0; c < w; c++)
        mvwaddch(win, y, x + c, ' ');
}

/* The matches of needle nd (empty: none) in line s. */
void logtext_highlight_init(struct logtext_highlight *h, const char *s, size_t len,
                            const struct strbuf *nd)
{
    h->s = s;
    h->len = len;
    h->needle = strbuf_str(nd);
    h->nlen = nd->len;
    h->start = nd->len ? logring_match_at(s, len, h->needle, h->nlen) : len;
    h->end = h->start + h->nlen;
}

/* True when byte i lies in a match. */
static bool highlight_at(struct logtext_highlight *h, size_t i)
{
    while (h->start < h->len && h->end <= i) {
        h->start = h->end + logring_match_at(h->s + h->end, h->len - h->end, h->needle, h->nlen);
        h->end = h->start + h->nlen;
    }
    return h->start <= i && i < h->end;
}

/*
 * Draws the units of s[from, to) in w cells at (y, x), skipping the first
 * `skip` cells of text (the sideways scroll); matches in the selected role.
 * Cells no unit covers are blanked, each cell written once.
 */
void logtext_draw_row(const struct widget_palette *pal, WINDOW *win, int y, int x, int w,
                      const char *s, size_t from, size_t to, int skip, struct logtext_highlight *hl)
{
    int col = 0, filled = 0;
    bool lit = false;

    logtext_use_role(win, pal->normal);
    for (size_t i = from; i < to;) {
        uint32_t b;
        int c;
        size_t next = unit_at(s, to, i, col, &b, &c);
        int start = col - skip;
        if (start >= w)
            break;
        if (b == '\t' && start + c > w)
            c = w - start; /* a wrapped row's last tab */
        if (start >= 0 && start + c <= w) {
            bool on = highlight_at(hl, i);
            if (filled < start) {
                if (lit)
                    logtext_use_role(win, pal->normal);
                logtext_blank(win, y, x + filled, start - filled);
                lit = false;
            }
            if (on != lit) {
                logtext_use_role(win, on ? pal->selected : pal->normal);
                lit = on;
            }
            put_unit(win, y, x + start, s, i, next, b, c);
            filled = start + c;
        }
        col += c;
        i = next;
    }
    if (lit)
        logtext_use_role(win, pal->normal);
    if (filled < w)
        logtext_blank(win, y, x + filled, w - filled);
}
