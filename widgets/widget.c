/*
 * widget: what all widgets share — the mono palette and the text drawing
 * helpers; see widget.h.
 */
#include "widgets/widget.h"

#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "util/utf8.h"
#include "util/xalloc.h"

const struct widget_palette *widget_palette_mono(void)
{
    static const struct widget_palette mono = {
        .normal = A_NORMAL,
        .dim = A_DIM,
        .label = A_NORMAL,
        .focus = A_UNDERLINE,
        .selected = A_REVERSE,
        .error = A_BOLD,
        .warning = A_UNDERLINE,
        .ok = A_NORMAL,
        .help = A_DIM,
        .title = A_BOLD,
        .border = A_NORMAL,
        .key = A_REVERSE,
    };
    return &mono;
}

void widget_set_role(WINDOW *win, attr_t a)
{
    wattr_set(win, a & ~A_COLOR, (short)PAIR_NUMBER(a), NULL);
}

int widget_text_cells(const char *s, size_t n)
{
    int cells = 0;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        i += utf8_decode(s + i, n - i, &cp);
        int cw = utf8_cpwidth(cp);
        cells += cw < 0 ? 1 : cw;
    }
    return cells;
}

int widget_fit_cells(const char *s, int max_cells)
{
    size_t n = strlen(s);
    int cells = 0;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        i += utf8_decode(s + i, n - i, &cp);
        int cw = utf8_cpwidth(cp);
        cw = cw < 0 ? 1 : cw;
        if (cells + cw > max_cells)
            break;
        cells += cw;
    }
    return cells;
}

int widget_put_textn(WINDOW *win, int y, int x, const char *s, size_t n, int max_cells)
{
    int used = 0;

    wmove(win, y, x);
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        cchar_t cc;
        i += utf8_decode(s + i, n - i, &cp);
        int cw = utf8_cpwidth(cp);
        if (cw < 0) {
            cp = UTF8_REPLACEMENT;
            cw = 1;
        }
        if (cw == 0 && used == 0)
            continue; /* a mark with no character to sit on */
        if (used + cw > max_cells)
            break;
        wchar_t wch[2] = {(wchar_t)cp, 0};
        if (setcchar(&cc, wch, A_NORMAL, 0, NULL) == OK)
            wadd_wch(win, &cc);
        used += cw;
    }
    return used;
}

int widget_put_text(WINDOW *win, int y, int x, const char *utf8, int max_cells)
{
    return widget_put_textn(win, y, x, utf8, strlen(utf8), max_cells);
}

void widget_blank(WINDOW *win, int y, int x, int w)
{
    for (int c = 0; c < w; c++)
        mvwaddch(win, y, x + c, ' ');
}

size_t widget_fit_bytes(const char *s, size_t n, int w, int *cells)
{
    size_t i = 0;
    int c = 0;
    while (i < n) {
        uint32_t cp;
        size_t k = utf8_decode(s + i, n - i, &cp);
        int cw = utf8_cpwidth(cp);
        if (cw < 0)
            cw = 0;
        if (c + cw > w)
            break;
        c += cw;
        i += k;
    }
    if (cells)
        *cells = c;
    return i;
}

void widget_put_bytes(WINDOW *win, int y, int x, const char *s, size_t n)
{
    wchar_t *buf = xreallocarray(NULL, n + 1, sizeof *buf);
    size_t len = 0;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        i += utf8_decode(s + i, n - i, &cp);
        if (utf8_cpwidth(cp) >= 0)
            buf[len++] = (wchar_t)cp;
    }
    if (len > 0)
        mvwaddnwstr(win, y, x, buf, (int)len);
    free(buf);
}

void widget_put_clipped(WINDOW *win, int y, int x, int w, const char *s, size_t n, bool utf8)
{
    int cells;
    if (w <= 0)
        return;
    if (widget_fit_bytes(s, n, w, &cells) == n) {
        widget_put_bytes(win, y, x, s, n);
        return;
    }
    size_t k = widget_fit_bytes(s, n, w - 1, &cells);
    widget_put_bytes(win, y, x, s, k);
    if (utf8)
        widget_put_bytes(win, y, x + cells, "\xe2\x80\xa6", 3);
    else
        mvwaddch(win, y, x + cells, '~');
}

size_t widget_wrap_line(const char *s, size_t n, int w, size_t *len)
{
    size_t k = widget_fit_bytes(s, n, w, NULL), next;
    if (k >= n) {
        *len = n;
        return n;
    }
    if (k == 0) { /* one character wider than the line: it goes alone */
        uint32_t cp;
        *len = utf8_decode(s, n, &cp);
        return *len;
    }
    next = k;
    if (s[k] != ' ') {
        size_t j = k;
        while (j > 0 && s[j - 1] != ' ')
            j--;
        if (j > 0)
            next = j;
    }
    *len = next;
    while (*len > 0 && s[*len - 1] == ' ')
        (*len)--;
    while (next < n && s[next] == ' ')
        next++;
    return next;
}

int widget_wrapped_lines(const char *s, int w, int max_lines)
{
    size_t n = strlen(s), pos = 0;
    int lines = 0;
    if (w <= 0)
        return 1;
    while (pos < n && lines < max_lines) {
        size_t len;
        pos += widget_wrap_line(s + pos, n - pos, w, &len);
        lines++;
    }
    return lines > 0 ? lines : 1;
}

void widget_put_wrapped(WINDOW *win, int y, int x, int w, const char *s, int max_lines, bool utf8)
{
    size_t n = strlen(s), pos = 0;
    for (int line = 0; w > 0 && pos < n && line < max_lines; line++) {
        size_t len, next = widget_wrap_line(s + pos, n - pos, w, &len);
        if (line == max_lines - 1)
            len = n - pos;
        widget_put_clipped(win, y + line, x, w, s + pos, len, utf8);
        pos += next;
    }
}
