/*
 * utf8: see utf8.h. Pure functions over byte ranges; no locale involved.
 */
#include "util/utf8.h"

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

/* East Asian Wide and Fullwidth blocks, sorted. */
static const struct range wide[] = {
    {0x1100, 0x115F},   {0x231A, 0x231B},   {0x2329, 0x232A},   {0x23E9, 0x23EC},
    {0x23F0, 0x23F0},   {0x23F3, 0x23F3},   {0x25FD, 0x25FE},   {0x2614, 0x2615},
    {0x2648, 0x2653},   {0x267F, 0x267F},   {0x2693, 0x2693},   {0x26A1, 0x26A1},
    {0x26AA, 0x26AB},   {0x26BD, 0x26BE},   {0x26C4, 0x26C5},   {0x26CE, 0x26CE},
    {0x26D4, 0x26D4},   {0x26EA, 0x26EA},   {0x26F2, 0x26F3},   {0x26F5, 0x26F5},
    {0x26FA, 0x26FA},   {0x26FD, 0x26FD},   {0x2705, 0x2705},   {0x270A, 0x270B},
    {0x2728, 0x2728},   {0x274C, 0x274C},   {0x274E, 0x274E},   {0x2753, 0x2755},
    {0x2757, 0x2757},   {0x2795, 0x2797},   {0x27B0, 0x27B0},   {0x27BF, 0x27BF},
    {0x2B1B, 0x2B1C},   {0x2B50, 0x2B50},   {0x2B55, 0x2B55},   {0x2E80, 0x303E},
    {0x3041, 0x33FF},   {0x3400, 0x4DBF},   {0x4E00, 0x9FFF},   {0xA000, 0xA4CF},
    {0xA960, 0xA97F},   {0xAC00, 0xD7A3},   {0xF900, 0xFAFF},   {0xFE10, 0xFE19},
    {0xFE30, 0xFE6F},   {0xFF00, 0xFF60},   {0xFFE0, 0xFFE6},   {0x16FE0, 0x16FE4},
    {0x17000, 0x18CFF}, {0x1B000, 0x1B2FF}, {0x1F004, 0x1F004}, {0x1F0CF, 0x1F0CF},
    {0x1F18E, 0x1F18E}, {0x1F191, 0x1F19A}, {0x1F200, 0x1F251}, {0x1F300, 0x1F64F},
    {0x1F680, 0x1F6FF}, {0x1F7E0, 0x1F7EB}, {0x1F90C, 0x1F9FF}, {0x1FA70, 0x1FAFF},
    {0x20000, 0x2FFFD}, {0x30000, 0x3FFFD},
};

/* Combining marks and zero-width characters, sorted. */
static const struct range zero[] = {
    {0x0300, 0x036F}, {0x0483, 0x0489},   {0x0591, 0x05BD}, {0x0610, 0x061A}, {0x064B, 0x065F},
    {0x0E31, 0x0E31}, {0x0E34, 0x0E3A},   {0x1AB0, 0x1AFF}, {0x1DC0, 0x1DFF}, {0x200B, 0x200F},
    {0x2028, 0x202E}, {0x2060, 0x2064},   {0x20D0, 0x20FF}, {0xFE00, 0xFE0F}, {0xFE20, 0xFE2F},
    {0xFEFF, 0xFEFF}, {0xE0100, 0xE01EF},
};

int utf8_cpwidth(uint32_t cp)
{
    if (cp < 0x20 || (cp >= 0x7F && cp < 0xA0))
        return -1;
    if (cp < 0x300)
        return 1;
    if (in_ranges(cp, zero, sizeof zero / sizeof zero[0]))
        return 0;
    if (in_ranges(cp, wide, sizeof wide / sizeof wide[0]))
        return 2;
    return 1;
}

size_t utf8_width(const char *s, size_t n)
{
    size_t i = 0, w = 0;
    while (i < n) {
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
 * rather than leaving its parameters on screen.
 */
static size_t escape_length(const char *s, size_t n, uint32_t intro, size_t k)
{
    size_t i = k;
    uint32_t kind = intro;

    if (intro == 0x1B) {
        if (i >= n)
            return i;
        unsigned char c = (unsigned char)s[i];
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
            return i < n ? i + 1 : i;
        }
        i++;
    }
    if (kind == 0x9B) {
        /* CSI: parameters and intermediates, then a final byte 0x40-0x7E. */
        while (i < n) {
            unsigned char c = (unsigned char)s[i++];
            if (c >= 0x40 && c <= 0x7E)
                break;
            if (c < 0x20)
                break;
        }
        return i;
    }
    if (kind == 0x9D || kind == 0x90 || kind == 0x98 || kind == 0x9E || kind == 0x9F) {
        /* String sequences end at BEL, ST (ESC \) or C1 ST. */
        while (i < n) {
            unsigned char c = (unsigned char)s[i];
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

/* Bidi embeddings, overrides and isolates can reorder what a person reads. */
static bool is_bidi_control(uint32_t cp)
{
    return (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
}

void utf8_sanitize(struct strbuf *out, const char *s, size_t n, unsigned flags)
{
    size_t i = 0;
    strbuf_grow(out, n);
    while (i < n) {
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
        } else if (cp < 0x20 || cp == 0x7F || is_bidi_control(cp)) {
            /* dropped */
        } else if (cp == UTF8_REPLACEMENT && k == 1) {
            strbuf_adds(out, "\xEF\xBF\xBD");
        } else {
            strbuf_add(out, s + i, k);
        }
        i += k;
    }
}
