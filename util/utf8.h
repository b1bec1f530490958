/*
 * utf8: decoding, validation, counting and display width of UTF-8 text, and
 * the sanitizer every piece of outside text (names, logs, server replies)
 * passes through before it reaches a terminal.
 *
 * Width is the C library's wcwidth(3) — what ncurses measures with — asked
 * under a C.UTF-8 locale object, so the answer is the same in the C locale
 * and in any UTF-8 locale (glibc's widths come from its one UTF-8 charmap).
 * Only where no C.UTF-8 locale exists and the process locale is not UTF-8
 * either (then curses cannot draw non-ASCII anyway) does a rough fallback
 * answer: CJK, kana, Hangul and full-width forms two cells, the rest one.
 */
#ifndef UTIL_UTF8_H
#define UTIL_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct strbuf;

#define UTF8_REPLACEMENT 0xFFFDu

/*
 * Decodes one code point from s (n bytes available). Returns the bytes
 * consumed (1..4). Invalid or truncated input yields U+FFFD and consumes one
 * byte, so a loop always advances. n must be > 0.
 */
size_t utf8_decode(const char *s, size_t n, uint32_t *cp);
/* Encodes cp into out (at least 4 bytes); returns the length. */
size_t utf8_encode(uint32_t cp, char *out);
bool utf8_valid(const char *s, size_t n);
/* Number of code points (invalid bytes count one each). */
size_t utf8_count(const char *s, size_t n);
/*
 * Terminal cells a code point takes: 0, 1 or 2; -1 for control characters
 * and what wcwidth calls unprintable (unassigned code points, surrogates).
 */
int utf8_cpwidth(uint32_t cp);
/* Terminal cells a string takes, controls counted as 0. */
size_t utf8_width(const char *s, size_t n);
/* CJK ideographs (unified, extensions and compatibility). */
bool utf8_is_cjk(uint32_t cp);
/*
 * Invisible format characters that utf8_sanitize shows escaped: zero-width
 * space/joiners (U+200B–U+200F), bidi controls (U+202A–U+202E,
 * U+2066–U+2069), U+2060–U+2064, U+FEFF, soft hyphen, tags and the like.
 */
bool utf8_is_invisible_format(uint32_t cp);

enum {
    UTF8_KEEP_NEWLINE = 1 << 0, /* keep '\n' (log lines, scripts) */
    UTF8_KEEP_TAB = 1 << 1,     /* keep '\t' instead of turning it into a space */
};

/*
 * Appends s to out made safe for a terminal: invalid UTF-8 becomes U+FFFD,
 * escape sequences (CSI, OSC, DCS, …) are removed whole — but never past a
 * newline, and a string sequence (OSC, DCS, APC…) left unterminated ends at
 * its line's end or after 4096 bytes, so it cannot hide the lines after
 * it —, other C0/C1 controls
 * and DEL are dropped, tabs become a space unless kept, and invisible format
 * characters (utf8_is_invisible_format: ZWSP, bidi controls, BOM, …) are
 * shown as text, "\u200b" ("\U000e0041" above the BMP), so a name that
 * holds one cannot pass for another or reorder what is read.
 */
void utf8_sanitize(struct strbuf *out, const char *s, size_t n, unsigned flags);

#endif
