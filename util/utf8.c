/*
 * utf8: see utf8.h. Pure functions over byte ranges; widths are asked of
 * the C library under a C.UTF-8 locale object, never the process locale.
 */
#include "util/utf8.h"

#include <locale.h>
#include <pthread.h>
#include <stdlib.h>
#include <wchar.h>

#include "util/strbuf.h"

size_t utf8_decode(const char *str, size_t n, uint32_t *cp)
{
    const unsigned char *s = (const unsigned char *)str;
    unsigned char c = s[0];
    size_t len;
    uint32_t v, min;

    if (c < 0x80) {
        *cp = c;
        return 1;
    } else if (c >= 0xC2 && c <= 0xDF) {
        len = 2, v = c & 0x1F, min = 0x80;
    } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3, v = c & 0x0F, min = 0x800;
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4, v = c & 0x07, min = 0x10000;
    } else {
        *cp = UTF8_REPLACEMENT;
        return 1;
    }
    if (n < len) {
        *cp = UTF8_REPLACEMENT;
        return 1;
    }
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) {
            *cp = UTF8_REPLACEMENT;
            return 1;
        }
        v = (v << 6) | (s[i] & 0x3F);
    }
    if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) {
        *cp = UTF8_REPLACEMENT;
        return 1;
    }
    *cp = v;
    return len;
}

size_t utf8_encode(uint32_t cp, char *out)
{
    unsigned char *o = (unsigned char *)out;
    if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        cp = UTF8_REPLACEMENT;
    if (cp < 0x80) {
        o[0] = (unsigned char)cp;
        return 1;
    } else if (cp < 0x800) {
        o[0] = (unsigned char)(0xC0 | (cp >> 6));
        o[1] = (unsigned char)(0x80 | (cp & 0x3F));
        return 2;
    } else if (cp < 0x10000) {
        o[0] = (unsigned char)(0xE0 | (cp >> 12));
        o[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (unsigned char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (unsigned char)(0xF0 | (cp >> 18));
    o[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (unsigned char)(0x80 | (cp & 0x3F));
    return 4;
}

bool utf8_valid(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        uint32_t cp;
        size_t k = utf8_decode(s + i, n - i, &cp);
        /* A genuine U+FFFD is three bytes; a one-byte U+FFFD is an error. */
        if (cp == UTF8_REPLACEMENT && k == 1)
            return false;
        i += k;
    }
    return true;
}

size_t utf8_count(const char *s, size_t n)
{
    size_t i = 0, count = 0;
    while (i < n) {
        uint32_t cp;
        i += utf8_decode(s + i, n - i, &cp);
        count++;
    }
    return count;
}

struct range {
    uint32_t lo, hi;
};

static bool in_ranges(uint32_t cp, const struct range *r, size_t n)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (cp < r[mid].lo)
            hi = mid;
        else if (cp > r[mid].hi)
            lo = mid + 1;
        else
            return true;
    }
    return false;
}

/*
 * The C library's answer under a UTF-8 LC_CTYPE, whatever the process
 * locale is: a C.UTF-8 locale object made once and used for the one call
 * (glibc takes the widths of every UTF-8 locale from its one UTF-8 charmap,
 * so this is what ncurses measures in any UTF-8 locale). Without that
 * locale, the process locale if it is UTF-8; else -2 ("cannot ask").
 */
static locale_t width_locale;
static pthread_once_t width_once = PTHREAD_ONCE_INIT;

static void width_locale_init(void)
{
    width_locale = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
}

static int libc_width(uint32_t cp)
{
    pthread_once(&width_once, width_locale_init);
    if (width_locale) {
        locale_t old = uselocale(width_locale);
        int w = wcwidth((wchar_t)cp);
        uselocale(old);
        return w;
    }
    if (MB_CUR_MAX > 1)
        return wcwidth((wchar_t)cp);
    return -2;
}

int utf8_cpwidth(uint32_t cp)
{
    if (cp < 0x20 || (cp >= 0x7F && cp < 0xA0))
        return -1;
    if (cp < 0x7F)
        return 1;
    if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return -1;
    int w = libc_width(cp);
    if (w != -2)
        return w;
    /* No UTF-8 locale at all (documented fallback): CJK wide, the rest one cell. */
    return utf8_is_cjk(cp) || (cp >= 0xAC00 && cp <= 0xD7A3) || (cp >= 0x3040 && cp <= 0x30FF) ||
                   (cp >= 0xFF00 && cp <= 0xFF60)
               ? 2
               : 1;
}

size_t utf8_width(const char *s, size_t n)
{
    size_t i = 0, w = 0;
    while (i < n) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x7f) { /* printable ASCII: one cell */
            w++, i++;
            continue;
        }
        uint32_t cp;
        i += utf8_decode(s + i, n - i, &cp);
        int cw = utf8_cpwidth(cp);
        if (cw > 0)
            w += (size_t)cw;
    }
    return w;
}

bool utf8_is_cjk(uint32_t cp)
{
    static const struct range cjk[] = {
        {0x3400, 0x4DBF},   {0x4E00, 0x9FFF},   {0xF900, 0xFAFF},   {0x20000, 0x2A6DF},
        {0x2A700, 0x2EBEF}, {0x2F800, 0x2FA1F}, {0x30000, 0x3134F},
    };
    return in_ranges(cp, cjk, sizeof cjk / sizeof cjk[0]);
}

/*
 * Length of the escape sequence starting at s[0] == ESC (or a C1 introducer
 * already decoded as cp at s, taking k bytes), so the whole sequence is dropped
 * rather than leaving its parameters on screen. A sequence never swallows a
 * newline: a string sequence (OSC, DCS, SOS, PM, APC) left unterminated ends
 * at the end of its line, or after ESCAPE_STRING_MAX bytes, so the lines
 * after it still show (a job cannot hide its own errors behind one); a CSI
 * or an ESC cut by a control character ends before it.
 */
#define ESCAPE_STRING_MAX 4096 /* an OSC 8 link's URI fits; a longer string shows the rest */

static size_t escape_length(const char *s, size_t n, uint32_t intro, size_t k)
{
    size_t i = k;
    uint32_t kind = intro;

    if (intro == 0x1B) {
        if (i >= n)
            return i;
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20)
            return i; /* a lone ESC: the control after it is handled on its own */
        if (c == '[')
            kind = 0x9B;
        else if (c == ']')
            kind = 0x9D;
        else if (c == 'P' || c == 'X' || c == '^' || c == '_')
            kind = 0x90;
        else {
            /* ESC, intermediates 0x20-0x2F, one final byte. */
            while (i < n && (unsigned char)s[i] >= 0x20 && (unsigned char)s[i] <= 0x2F)
                i++;
            return i < n && (unsigned char)s[i] >= 0x20 ? i + 1 : i;
        }
        i++;
    }
    if (kind == 0x9B) {
        /* CSI: parameters and intermediates, then a final byte 0x40-0x7E. */
        while (i < n) {
            unsigned char c = (unsigned char)s[i];
            if (c < 0x20)
                break;
            i++;
            if (c >= 0x40 && c <= 0x7E)
                break;
        }
        return i;
    }
    if (kind == 0x9D || kind == 0x90 || kind == 0x98 || kind == 0x9E || kind == 0x9F) {
        /* String sequences end at BEL, ST (ESC \) or C1 ST; unterminated, before a newline. */
        size_t limit = n - i > ESCAPE_STRING_MAX ? i + ESCAPE_STRING_MAX : n;
        while (i < limit) {
            unsigned char c = (unsigned char)s[i];
            if (c == '\n')
                return i;
            if (c == 0x07)
                return i + 1;
            if (c == 0x1B && i + 1 < n && s[i + 1] == '\\')
                return i + 2;
            if (c == 0xC2 && i + 1 < n && (unsigned char)s[i + 1] == 0x9C)
                return i + 2;
            i++;
        }
        return i;
    }
    return i;
}

/*
 * Invisible format characters (Unicode category Cf without the visible
 * prepended marks, plus the line and paragraph separators): zero-width
 * spaces and joiners, bidi embeddings, overrides and isolates (which can
 * reorder what a person reads), word joiners, the BOM, tags. A name holding
 * one looks like another name, so they are shown, not drawn.
 */
bool utf8_is_invisible_format(uint32_t cp)
{
    static const struct range fmt[] = {
        {0x00AD, 0x00AD},   {0x061C, 0x061C},   {0x180E, 0x180E},   {0x200B, 0x200F},
        {0x2028, 0x202E},   {0x2060, 0x2064},   {0x2066, 0x206F},   {0xFEFF, 0xFEFF},
        {0xFFF9, 0xFFFB},   {0x1BCA0, 0x1BCA3}, {0x1D173, 0x1D17A}, {0xE0001, 0xE0001},
        {0xE0020, 0xE007F},
    };
    return in_ranges(cp, fmt, sizeof fmt / sizeof fmt[0]);
}

void utf8_sanitize(struct strbuf *out, const char *s, size_t n, unsigned flags)
{
    size_t i = 0;
    strbuf_grow(out, n);
    while (i < n) {
        size_t plain = i; /* a run of printable ASCII goes as it is, in one piece */
        while (plain < n && (unsigned char)s[plain] >= 0x20 && (unsigned char)s[plain] < 0x7f)
            plain++;
        if (plain > i) {
            strbuf_add(out, s + i, plain - i);
            i = plain;
            continue;
        }
        uint32_t cp;
        size_t k = utf8_decode(s + i, n - i, &cp);
        if (cp == 0x1B || (cp >= 0x80 && cp <= 0x9F)) {
            i += escape_length(s + i, n - i, cp, k);
            continue;
        }
        if (cp == '\n' && (flags & UTF8_KEEP_NEWLINE)) {
            strbuf_addc(out, '\n');
        } else if (cp == '\t') {
            strbuf_addc(out, (flags & UTF8_KEEP_TAB) ? '\t' : ' ');
        } else if (cp < 0x20 || cp == 0x7F) {
            /* dropped */
        } else if (utf8_is_invisible_format(cp)) {
            strbuf_addf(out, cp > 0xFFFF ? "\\U%08x" : "\\u%04x", (unsigned)cp);
        } else if (cp == UTF8_REPLACEMENT && k == 1) {
            strbuf_adds(out, "\xEF\xBF\xBD");
        } else {
            strbuf_add(out, s + i, k);
        }
        i += k;
    }
}
