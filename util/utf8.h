/*
 * utf8: decoding, validation, counting and display width of UTF-8 text, and
 * the sanitizer every piece of outside text (names, logs, server replies)
 * passes through before it reaches a terminal.
 *
 * Width follows Unicode East Asian Width: CJK ideographs, Hangul, kana and
 * full-width forms take two cells, combining marks none. The table is ours so
 * the answer does not depend on the process locale.
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
/* Terminal cells a code point takes: 0, 1 or 2 (-1 for control characters). */
int utf8_cpwidth(uint32_t cp);
/* Terminal cells a string takes, controls counted as 0. */
size_t utf8_width(const char *s, size_t n);
/* CJK ideographs (unified, extensions and compatibility). */
bool utf8_is_cjk(uint32_t cp);

enum {
    UTF8_KEEP_NEWLINE = 1 << 0, /* keep '\n' (log lines, scripts) */
    UTF8_KEEP_TAB = 1 << 1,     /* keep '\t' instead of turning it into a space */
};

/*
 * Appends s to out made safe for a terminal: invalid UTF-8 becomes U+FFFD,
 * escape sequences (CSI, OSC, DCS, …) are removed whole, other C0/C1 controls
 * DEL and bidi embedding/override/isolate controls are dropped, tabs become a
 * space unless kept.
 */
void utf8_sanitize(struct strbuf *out, const char *s, size_t n, unsigned flags);

#endif
