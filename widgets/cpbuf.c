/*
 * cpbuf: code-point arrays, units and words, and drawing a unit; see cpbuf.h.
 */
#include "widgets/cpbuf.h"

#include <stdlib.h>
#include <string.h>

#include "util/utf8.h"
#include "util/xalloc.h"

void cpbuf_insert(struct cpbuf *b, size_t at, const uint32_t *src, size_t n)
{
    if (n == 0)
        return;
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 16;
        while (cap < b->len + n)
            cap *= 2;
        b->cp = xreallocarray(b->cp, cap, sizeof *b->cp);
        b->cap = cap;
    }
    memmove(b->cp + at + n, b->cp + at, (b->len - at) * sizeof *b->cp);
    memcpy(b->cp + at, src, n * sizeof *src);
    b->len += n;
}

void cpbuf_erase(struct cpbuf *b, size_t from, size_t to)
{
    memmove(b->cp + from, b->cp + to, (b->len - to) * sizeof *b->cp);
    b->len -= to - from;
}

void cpbuf_set_utf8(struct cpbuf *b, const char *s, size_t max)
{
    b->len = 0;
    if (!s)
        return;
    size_t n = strlen(s);
    for (size_t i = 0; i < n && (max == 0 || b->len < max);) {
        uint32_t cp;
        i += utf8_decode(s + i, n - i, &cp);
        cpbuf_insert(b, b->len, &cp, 1);
    }
}

void cpbuf_free(struct cpbuf *b)
{
    free(b->cp);
    b->cp = NULL;
    b->len = b->cap = 0;
}

bool cpbuf_is_mark(uint32_t cp)
{
    return utf8_cpwidth(cp) == 0;
}

size_t cpbuf_next_unit(const struct cpbuf *b, size_t i)
{
    if (i >= b->len)
        return b->len;
    for (i++; i < b->len && cpbuf_is_mark(b->cp[i]); i++)
        ;
    return i;
}

size_t cpbuf_prev_unit(const struct cpbuf *b, size_t i)
{
    if (i == 0)
        return 0;
    for (i--; i > 0 && cpbuf_is_mark(b->cp[i]); i--)
        ;
    return i;
}

bool cpbuf_is_space(uint32_t cp)
{
    return cp == ' ' || cp == '\t' || cp == 0xA0 || cp == 0x1680 ||
           (cp >= 0x2000 && cp <= 0x200A) || cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

bool cpbuf_not_space(uint32_t cp)
{
    return !cpbuf_is_space(cp);
}

bool cpbuf_is_word(uint32_t cp)
{
    if (cp < 0x80)
        return (cp >= '0' && cp <= '9') || (cp >= 'A' && cp <= 'Z') || (cp >= 'a' && cp <= 'z');
    if (cpbuf_is_space(cp) || (cp >= 0x2010 && cp <= 0x2027) || (cp >= 0x3000 && cp <= 0x303F))
        return false;
    return !((cp >= 0xFF01 && cp <= 0xFF0F) || (cp >= 0xFF1A && cp <= 0xFF20) ||
             (cp >= 0xFF3B && cp <= 0xFF40) || (cp >= 0xFF5B && cp <= 0xFF65));
}

bool cpbuf_is_insertable(int code)
{
    if (code < 0 || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF))
        return false;
    uint32_t cp = (uint32_t)code;
    if ((cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069))
        return false;
    return utf8_cpwidth(cp) >= 0;
}

size_t cpbuf_word_start(const struct cpbuf *b, size_t pos, bool (*in_word)(uint32_t))
{
    while (pos > 0 && !in_word(b->cp[cpbuf_prev_unit(b, pos)]))
        pos = cpbuf_prev_unit(b, pos);
    while (pos > 0 && in_word(b->cp[cpbuf_prev_unit(b, pos)]))
        pos = cpbuf_prev_unit(b, pos);
    return pos;
}

size_t cpbuf_word_end(const struct cpbuf *b, size_t pos)
{
    while (pos < b->len && !cpbuf_is_word(b->cp[pos]))
        pos = cpbuf_next_unit(b, pos);
    while (pos < b->len && cpbuf_is_word(b->cp[pos]))
        pos = cpbuf_next_unit(b, pos);
    return pos;
}

void cpbuf_draw_unit(WINDOW *win, int y, int x, const struct cpbuf *b, size_t i, size_t end,
                     uint32_t mask)
{
    wchar_t wch[CCHARW_MAX + 1];
    size_t n = 0;
    int bw = utf8_cpwidth(b->cp[i]);
    cchar_t cc;

    if (mask) {
        wch[n++] = (wchar_t)mask;
        i = end;
    } else if (bw == 0) {
        wch[n++] = 0x25CC;
    } else {
        wch[n++] = (wchar_t)(bw < 0 ? UTF8_REPLACEMENT : b->cp[i]);
        i++;
    }
    for (; i < end && n < CCHARW_MAX; i++)
        wch[n++] = (wchar_t)b->cp[i];
    wch[n] = 0;
    if (setcchar(&cc, wch, A_NORMAL, 0, NULL) != OK) {
        wch[1] = 0; /* curses refused a mark: the base alone */
        if (setcchar(&cc, wch, A_NORMAL, 0, NULL) != OK)
            return;
    }
    mvwadd_wch(win, y, x, &cc);
}
