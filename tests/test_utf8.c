/*
 * test_utf8: decoding and encoding (including every kind of invalid
 * sequence), counting, display width, and the terminal sanitizer byte for
 * byte: escape sequences, OSC titles, C1 controls, BEL, DEL, newlines, tabs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h> /* after the four headers it needs */

#include <locale.h>
#include <stdio.h>
#include <string.h>
#include <wchar.h>

#include "util/strbuf.h"
#include "util/utf8.h"

/* Decodes the first code point of s (n bytes) and checks value and length. */
static void assert_decode(const char *s, size_t n, uint32_t want_cp, size_t want_len)
{
    uint32_t cp = 0;
    size_t k = utf8_decode(s, n, &cp);
    assert_int_equal(cp, want_cp);
    assert_int_equal(k, want_len);
}

static void test_decode_valid(void **state)
{
    assert_decode("A", 1, 'A', 1);
    assert_decode("\x7f", 1, 0x7F, 1);
    assert_decode("\xc2\x80", 2, 0x80, 2);
    assert_decode("\xc3\xa9", 2, 0xE9, 2); /* é */
    assert_decode("\xdf\xbf", 2, 0x7FF, 2);
    assert_decode("\xe0\xa0\x80", 3, 0x800, 3);
    assert_decode("\xe5\x9f\xba", 3, 0x57FA, 3); /* 基 */
    assert_decode("\xed\x9f\xbf", 3, 0xD7FF, 3); /* last before surrogates */
    assert_decode("\xee\x80\x80", 3, 0xE000, 3); /* first after surrogates */
    assert_decode("\xef\xbf\xbd", 3, 0xFFFD, 3); /* a genuine U+FFFD */
    assert_decode("\xef\xbf\xbf", 3, 0xFFFF, 3);
    assert_decode("\xf0\x90\x80\x80", 4, 0x10000, 4);
    assert_decode("\xf0\x9f\x98\x80", 4, 0x1F600, 4); /* 😀 */
    assert_decode("\xf4\x8f\xbf\xbf", 4, 0x10FFFF, 4);
    /* more bytes available than needed */
    assert_decode("\xc3\xa9xyz", 5, 0xE9, 2);
    assert_decode("\0", 1, 0, 1);
}

static void test_decode_invalid(void **state)
{
    /* lone continuation bytes and bytes that never start a sequence */
    assert_decode("\x80", 1, UTF8_REPLACEMENT, 1);
    assert_decode("\xbf", 1, UTF8_REPLACEMENT, 1);
    assert_decode("\xfe", 1, UTF8_REPLACEMENT, 1);
    assert_decode("\xff", 1, UTF8_REPLACEMENT, 1);
    assert_decode("\xf5\x80\x80\x80", 4, UTF8_REPLACEMENT, 1);
    /* overlong forms */
    assert_decode("\xc0\x80", 2, UTF8_REPLACEMENT, 1);
    assert_decode("\xc1\xbf", 2, UTF8_REPLACEMENT, 1);
    assert_decode("\xe0\x80\x80", 3, UTF8_REPLACEMENT, 1);
    assert_decode("\xe0\x9f\xbf", 3, UTF8_REPLACEMENT, 1);
    assert_decode("\xf0\x80\x80\x80", 4, UTF8_REPLACEMENT, 1);
    assert_decode("\xf0\x8f\xbf\xbf", 4, UTF8_REPLACEMENT, 1);
    /* surrogates */
    assert_decode("\xed\xa0\x80", 3, UTF8_REPLACEMENT, 1);
    assert_decode("\xed\xbf\xbf", 3, UTF8_REPLACEMENT, 1);
    /* above U+10FFFF */
    assert_decode("\xf4\x90\x80\x80", 4, UTF8_REPLACEMENT, 1);
    /* truncated: not enough bytes, or a non-continuation byte too early */
    assert_decode("\xc3", 1, UTF8_REPLACEMENT, 1);
    assert_decode("\xe5\x9f", 2, UTF8_REPLACEMENT, 1);
    assert_decode("\xf0\x9f\x98", 3, UTF8_REPLACEMENT, 1);
    assert_decode("\xe5\x9f"
                  "A",
                  3, UTF8_REPLACEMENT, 1);
    assert_decode("\xc3"
                  "A",
                  2, UTF8_REPLACEMENT, 1);
    /* n bounds the read even when the bytes after would complete it */
    assert_decode("\xe5\x9f\xba", 2, UTF8_REPLACEMENT, 1);
}

static void test_encode(void **state)
{
    char out[4];
    assert_int_equal(utf8_encode('A', out), 1);
    assert_memory_equal(out, "A", 1);
    assert_int_equal(utf8_encode(0xE9, out), 2);
    assert_memory_equal(out, "\xc3\xa9", 2);
    assert_int_equal(utf8_encode(0x7FF, out), 2);
    assert_memory_equal(out, "\xdf\xbf", 2);
    assert_int_equal(utf8_encode(0x800, out), 3);
    assert_memory_equal(out, "\xe0\xa0\x80", 3);
    assert_int_equal(utf8_encode(0x7EBF, out), 3); /* 线 */
    assert_memory_equal(out, "\xe7\xba\xbf", 3);
    assert_int_equal(utf8_encode(0x10000, out), 4);
    assert_memory_equal(out, "\xf0\x90\x80\x80", 4);
    assert_int_equal(utf8_encode(0x10FFFF, out), 4);
    assert_memory_equal(out, "\xf4\x8f\xbf\xbf", 4);
    /* what cannot be encoded becomes U+FFFD */
    assert_int_equal(utf8_encode(0xD800, out), 3);
    assert_memory_equal(out, "\xef\xbf\xbd", 3);
    assert_int_equal(utf8_encode(0x110000, out), 3);
    assert_memory_equal(out, "\xef\xbf\xbd", 3);

    /* round trip over every scalar value */
    for (uint32_t cp = 0; cp <= 0x10FFFF; cp++) {
        if (cp >= 0xD800 && cp <= 0xDFFF)
            continue;
        uint32_t back;
        size_t n = utf8_encode(cp, out);
        assert_int_equal(utf8_decode(out, n, &back), n);
        if (back != cp)
            fail_msg("U+%04X decoded as U+%04X", (unsigned)cp, (unsigned)back);
    }
}

static void test_valid(void **state)
{
    assert_true(utf8_valid("", 0));
    assert_true(utf8_valid("ResNet\xe5\x9f\xba\xe7\xba\xbf", 12));
    assert_true(utf8_valid("\xef\xbf\xbd", 3));
    assert_false(utf8_valid("abc\xff", 4));
    assert_false(utf8_valid("\xc0\xaf", 2));
    assert_false(utf8_valid("\xed\xa0\x80", 3));
    assert_false(utf8_valid("\xe5\x9f", 2));
    /* an embedded NUL is valid UTF-8; n, not strlen, bounds the text */
    assert_true(utf8_valid("a\0b", 3));
}

static void test_count(void **state)
{
    const char *s = "ResNet\xe5\x9f\xba\xe7\xba\xbf"; /* ResNet基线 */
    assert_int_equal(utf8_count(s, strlen(s)), 8);
    assert_int_equal(utf8_count("", 0), 0);
    assert_int_equal(utf8_count("\xf0\x9f\x98\x80", 4), 1);
    /* invalid bytes count one each */
    assert_int_equal(utf8_count("a\xff\xfe"
                                "b",
                                4),
                     4);
    assert_int_equal(utf8_count("\xe5\x9f", 2), 2);
}

static void test_width(void **state)
{
    const char *s = "ResNet\xe5\x9f\xba\xe7\xba\xbf";
    assert_int_equal(utf8_width(s, strlen(s)), 6 + 2 * 2);
    assert_int_equal(utf8_cpwidth('a'), 1);
    assert_int_equal(utf8_cpwidth(0x57FA), 2);  /* 基 */
    assert_int_equal(utf8_cpwidth(0xAC00), 2);  /* 가 */
    assert_int_equal(utf8_cpwidth(0x3042), 2);  /* あ */
    assert_int_equal(utf8_cpwidth(0xFF21), 2);  /* Ａ full-width */
    assert_int_equal(utf8_cpwidth(0x3000), 2);  /* ideographic space */
    assert_int_equal(utf8_cpwidth(0x20000), 2); /* extension B */
    assert_int_equal(utf8_cpwidth(0x1F600), 2); /* emoji */
    assert_int_equal(utf8_cpwidth(0xE9), 1);
    assert_int_equal(utf8_cpwidth(0xFF61), 1); /* half-width katakana punctuation */
    assert_int_equal(utf8_cpwidth(0x0301), 0); /* combining acute */
    assert_int_equal(utf8_cpwidth(0x200B), 0); /* zero width space */
    assert_int_equal(utf8_cpwidth(0xFE0F), 0); /* variation selector */
    assert_int_equal(utf8_cpwidth(0x00), -1);
    assert_int_equal(utf8_cpwidth(0x1B), -1);
    assert_int_equal(utf8_cpwidth(0x7F), -1);
    assert_int_equal(utf8_cpwidth(0x9B), -1);
    /* e + combining acute is one cell; controls count none */
    assert_int_equal(utf8_width("e\xcc\x81", 3), 1);
    assert_int_equal(utf8_width("a\tb\x1b", 4), 2);
    assert_int_equal(utf8_width("", 0), 0);
    /* an invalid byte shows as U+FFFD, one cell */
    assert_int_equal(utf8_width("\xff", 1), 1);
}

static void test_is_cjk(void **state)
{
    assert_true(utf8_is_cjk(0x57FA));
    assert_true(utf8_is_cjk(0x4E00));
    assert_true(utf8_is_cjk(0x9FFF));
    assert_true(utf8_is_cjk(0x3400));
    assert_true(utf8_is_cjk(0xF900));
    assert_true(utf8_is_cjk(0x20000));
    assert_false(utf8_is_cjk('A'));
    assert_false(utf8_is_cjk(0x3042)); /* kana is wide but not an ideograph */
    assert_false(utf8_is_cjk(0xAC00));
}

/* Sanitizes s with flags and compares the bytes with want. */
static void assert_sanitized(const char *s, size_t n, unsigned flags, const char *want)
{
    struct strbuf sb = STRBUF_INIT;
    utf8_sanitize(&sb, s, n, flags);
    assert_int_equal(sb.len, strlen(want));
    assert_string_equal(strbuf_str(&sb), want);
    strbuf_free(&sb);
}

#define SANITIZED(lit, flags, want) assert_sanitized(lit, sizeof(lit) - 1, flags, want)

static void test_sanitize_escapes(void **state)
{
    SANITIZED("plain text", 0, "plain text");
    SANITIZED("ResNet\xe5\x9f\xba\xe7\xba\xbf", 0, "ResNet\xe5\x9f\xba\xe7\xba\xbf");
    /* CSI colour, cursor movement, private modes */
    SANITIZED("\x1b[31mred\x1b[0m", 0, "red");
    SANITIZED("a\x1b[2J\x1b[Hb", 0, "ab");
    SANITIZED("a\x1b[?1049hb", 0, "ab");
    SANITIZED("a\x1b[38;5;196mb", 0, "ab");
    /* OSC title, ended by BEL or by ST */
    SANITIZED("\x1b]0;evil\x07job", 0, "job");
    SANITIZED("\x1b]2;evil\x1b\\job", 0, "job");
    SANITIZED("x\x1b]8;;http://evil/\x07link\x1b]8;;\x07y", 0, "xlinky");
    /* DCS, APC, PM, SOS */
    SANITIZED("a\x1bPq#0;2;0;0;0\x1b\\b", 0, "ab");
    SANITIZED("a\x1b_payload\x1b\\b", 0, "ab");
    SANITIZED("a\x1b^pm\x07"
              "b",
              0, "ab");
    SANITIZED("a\x1bXsos\x1b\\b", 0, "ab");
    /* C1 CSI and OSC as UTF-8 (U+009B, U+009D), C1 ST */
    SANITIZED("a\xc2\x9b"
              "31mred",
              0, "ared");
    SANITIZED("a\xc2\x9d"
              "0;evil\x07"
              "b",
              0, "ab");
    SANITIZED("a\xc2\x9d"
              "0;evil\xc2\x9c"
              "b",
              0, "ab");
    SANITIZED("a\xc2\x85"
              "b",
              0, "ab"); /* NEL, a lone C1 control */
    /* two-byte escapes: ESC c (reset), ESC ( B (charset), ESC 7 */
    SANITIZED("a\x1b"
              "cb",
              0, "ab");
    SANITIZED("a\x1b(Bb", 0, "ab");
    SANITIZED("a\x1b"
              "7b",
              0, "ab");
    /* unterminated sequences are dropped to the end, never half-shown */
    SANITIZED("ok\x1b[31", 0, "ok");
    SANITIZED("ok\x1b]0;evil", 0, "ok");
    SANITIZED("ok\x1b", 0, "ok");
    SANITIZED("ok\xc2\x9b", 0, "ok");
}

/*
 * An unterminated OSC (or DCS, APC, PM, SOS) in a log ends at the end of its
 * line: the lines after it show, so a job cannot hide its own errors behind
 * one. A string longer than 4096 bytes ends there too; no sequence, CSI or
 * ESC, swallows a newline.
 */
static void test_sanitize_unterminated_string_ends_at_newline(void **state)
{
    unsigned nl = UTF8_KEEP_NEWLINE;
    SANITIZED("starting\n\x1b]0;hide everything\nERROR: out of memory\nexit 1\n", nl,
              "starting\n\nERROR: out of memory\nexit 1\n");
    SANITIZED("a\x1bPq#0;2\nERROR b\n", nl, "a\nERROR b\n");
    SANITIZED("a\x1b_apc\nERROR b\n", nl, "a\nERROR b\n");
    SANITIZED("a\x1b^pm\nERROR b\n", nl, "a\nERROR b\n");
    SANITIZED("a\x1bXsos\nERROR b\n", nl, "a\nERROR b\n");
    SANITIZED("a\xc2\x9d"
              "0;c1 osc\nERROR b\n",
              nl, "a\nERROR b\n");
    /* without the newline flag the newline is still the end of the string */
    SANITIZED("a\x1b]0;t\nb", 0, "ab");
    /* a CSI or an ESC cut by a newline ends before it */
    SANITIZED("a\x1b[31\nb", nl, "a\nb");
    SANITIZED("a\x1b\nb", nl, "a\nb");
    SANITIZED("a\x1b(\nb", nl, "a\nb");
    /* terminated ones are dropped whole as before */
    SANITIZED("a\x1b]0;t\x07"
              "b\n",
              nl, "ab\n");

    /* a string longer than 4096 bytes with no newline ends after 4096 */
    struct strbuf in = STRBUF_INIT, want = STRBUF_INIT;
    strbuf_adds(&in, "a\x1b]0;");
    for (int i = 0; i < 5000; i++)
        strbuf_addc(&in, 'x');
    strbuf_adds(&in, "ERROR");
    strbuf_adds(&want, "a");
    for (int i = 0; i < 5000 + 2 - 4096; i++) /* "0;" and 5000 x: 4096 of them dropped */
        strbuf_addc(&want, 'x');
    strbuf_adds(&want, "ERROR");
    assert_sanitized(in.buf, in.len, nl, strbuf_str(&want));
    strbuf_free(&in);
    strbuf_free(&want);
    (void)state;
}

static void test_sanitize_controls(void **state)
{
    SANITIZED("ding\x07!", 0, "ding!");
    SANITIZED("del\x7f!", 0, "del!");
    SANITIZED("a\x00"
              "b",
              0, "ab");
    SANITIZED("back\bspace", 0, "backspace");
    SANITIZED("car\rriage", 0, "carriage");
    /* newline only with the flag */
    SANITIZED("one\ntwo", 0, "onetwo");
    SANITIZED("one\ntwo", UTF8_KEEP_NEWLINE, "one\ntwo");
    SANITIZED("one\r\ntwo", UTF8_KEEP_NEWLINE, "one\ntwo");
    /* tab becomes a space unless kept */
    SANITIZED("a\tb", 0, "a b");
    SANITIZED("a\tb", UTF8_KEEP_TAB, "a\tb");
    SANITIZED("a\tb\nc", UTF8_KEEP_TAB | UTF8_KEEP_NEWLINE, "a\tb\nc");
}

static void test_sanitize_invalid(void **state)
{
    /* invalid UTF-8 becomes U+FFFD, one per bad byte */
    SANITIZED("a\xff"
              "b",
              0,
              "a\xef\xbf\xbd"
              "b");
    SANITIZED("\xc0\xaf", 0, "\xef\xbf\xbd\xef\xbf\xbd");
    SANITIZED("\xed\xa0\x80", 0, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
    SANITIZED("x\xe5\x9f", 0, "x\xef\xbf\xbd\xef\xbf\xbd");
    /* a raw 8-bit CSI byte is not UTF-8: shown as U+FFFD, never passed on */
    SANITIZED("a\x9b"
              "31mb",
              0,
              "a\xef\xbf\xbd"
              "31mb");
    /* sanitize appends */
    struct strbuf sb = STRBUF_INIT;
    strbuf_adds(&sb, "name: ");
    utf8_sanitize(&sb, "\x1b[1mx\x1b[0m", 9, 0);
    assert_string_equal(strbuf_str(&sb), "name: x");
    strbuf_free(&sb);
    /* empty input leaves out empty (and readable) */
    utf8_sanitize(&sb, "", 0, 0);
    assert_string_equal(strbuf_str(&sb), "");
    strbuf_free(&sb);
}

/*
 * Invisible format characters: "ad\u200bmin" must not pass for "admin", so
 * each is shown as \uXXXX (\UXXXXXXXX above the BMP); visible neighbours stay.
 */
static void test_sanitize_invisible(void **state)
{
    (void)state;
    assert_sanitized("ad\xE2\x80\x8Bmin", 8, 0, "ad\\u200bmin");
    assert_sanitized("\xEF\xBB\xBFname", 7, 0, "\\ufeffname"); /* BOM */
    assert_sanitized("a\xE2\x80\x8D"
                     "b",
                     5, 0, "a\\u200db"); /* ZWJ */
    assert_sanitized("a\xE2\x81\xA0"
                     "b",
                     5, 0, "a\\u2060b"); /* word joiner */
    assert_sanitized("a\xE2\x81\xA4"
                     "b",
                     5, 0, "a\\u2064b"); /* invisible plus */
    assert_sanitized("a\xE2\x80\xAA"
                     "b\xE2\x80\xAC"
                     "c",
                     9, 0, "a\\u202ab\\u202cc"); /* LRE, PDF */
    assert_sanitized("a\xC2\xAD"
                     "b",
                     4, 0, "a\\u00adb"); /* soft hyphen */
    assert_sanitized("a\xF3\xA0\x80\x81"
                     "b",
                     6, 0, "a\\U000e0001b"); /* language tag */
    assert_sanitized("a\xE2\x80\xA8"
                     "b",
                     5, 0, "a\\u2028b"); /* line separator */
    /* Not format characters: a combining mark and CJK pass unchanged. */
    assert_sanitized("e\xCC\x81\xE5\x9F\xBA", 6, 0, "e\xCC\x81\xE5\x9F\xBA");
    /* Every Cf the predicate names comes out escaped and takes its text's width. */
    for (uint32_t cp = 0xA0; cp <= 0x10FFFF; cp++) {
        if (!utf8_is_invisible_format(cp))
            continue;
        char enc[4], want[16];
        size_t k = utf8_encode(cp, enc);
        struct strbuf sb = STRBUF_INIT;
        utf8_sanitize(&sb, enc, k, 0);
        snprintf(want, sizeof want, cp > 0xFFFF ? "\\U%08x" : "\\u%04x", (unsigned)cp);
        assert_string_equal(strbuf_str(&sb), want);
        assert_int_equal(utf8_width(sb.buf, sb.len), strlen(want));
        strbuf_free(&sb);
    }
}

/*
 * Our widths are the C library's (what ncurses draws with): every code
 * point, compared with wcwidth under C.UTF-8 — 0 differences — while the
 * process locale is still "C" (utf8_cpwidth must not depend on it).
 */
static void test_width_is_wcwidth(void **state)
{
    (void)state;
    assert_non_null(setlocale(LC_ALL, "C"));
    int c_locale[0x110000 / 64 + 1] = {0}; /* a sample taken under "C" */
    for (uint32_t cp = 0; cp <= 0x10FFFF; cp += 64)
        c_locale[cp / 64] = utf8_cpwidth(cp + 0x30 > 0x10FFFF ? cp : cp + 0x30);
    locale_t u = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
    assert_non_null(u);
    locale_t old = uselocale(u);
    size_t differ = 0, wide = 0, zero = 0;
    uint32_t first = 0;
    for (uint32_t cp = 0; cp <= 0x10FFFF; cp++) {
        /* NUL is a control to us (-1); glibc gives it 0. Surrogates are not characters. */
        if (cp == 0 || (cp >= 0xD800 && cp <= 0xDFFF))
            continue;
        int ours = utf8_cpwidth(cp), libc = wcwidth((wchar_t)cp);
        if (ours != libc && differ++ == 0)
            first = cp;
        wide += libc == 2;
        zero += libc == 0;
    }
    for (uint32_t cp = 0; cp <= 0x10FFFF; cp += 64) {
        uint32_t c = cp + 0x30 > 0x10FFFF ? cp : cp + 0x30;
        if (c == 0 || (c >= 0xD800 && c <= 0xDFFF))
            continue;
        if (c_locale[cp / 64] != wcwidth((wchar_t)c))
            fail_msg("U+%04X: %d under C, wcwidth %d", (unsigned)c, c_locale[cp / 64],
                     wcwidth((wchar_t)c));
    }
    uselocale(old);
    freelocale(u);
    if (differ)
        fail_msg("%zu code points differ from wcwidth, the first U+%04X", differ, (unsigned)first);
    /* The comparison compared something: glibc knows thousands of each. */
    assert_true(wide > 1000 && zero > 1000);
}

/* Whatever goes in, no control byte and no invalid UTF-8 comes out. */
/* "Trojan source": bidi overrides would make a name read differently than it is. */
static void test_sanitize_bidi(void **state)
{
    (void)state;
    const char *s = "job\xE2\x80\xAEtxt.exe\xE2\x81\xA6x\xE2\x81\xA9";
    /* Shown, not obeyed: the override and the isolates are escaped as text. */
    assert_sanitized(s, strlen(s), 0, "job\\u202etxt.exe\\u2066x\\u2069");
    /* Ordinary right-to-left text stays. */
    assert_sanitized("\xD7\xA9\xD7\x9C", 4, 0, "\xD7\xA9\xD7\x9C");
}

static void test_sanitize_output_is_safe(void **state)
{
    unsigned char in[512];
    uint32_t seed = 12345;
    for (int round = 0; round < 2000; round++) {
        size_t n = (size_t)(round % 97) + 1;
        for (size_t i = 0; i < n; i++) {
            seed = seed * 1103515245u + 12345u;
            unsigned char c = (unsigned char)(seed >> 16);
            /* bias towards the interesting bytes */
            static const unsigned char hot[] = {0x1b, '[',  ']',  0x07, 0xc2, 0x9b,
                                                0x9d, 0x9c, '\\', '\n', '\t', 'm'};
            in[i] = (seed >> 12) & 1 ? hot[c % sizeof hot] : c;
        }
        struct strbuf sb = STRBUF_INIT;
        utf8_sanitize(&sb, (const char *)in, n, 0);
        assert_true(utf8_valid(sb.buf ? sb.buf : "", sb.len));
        for (size_t i = 0; i < sb.len;) {
            uint32_t cp;
            i += utf8_decode(sb.buf + i, sb.len - i, &cp);
            if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F))
                fail_msg("control U+%04X left in output (round %d)", (unsigned)cp, round);
        }
        strbuf_free(&sb);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decode_valid),
        cmocka_unit_test(test_decode_invalid),
        cmocka_unit_test(test_encode),
        cmocka_unit_test(test_valid),
        cmocka_unit_test(test_count),
        cmocka_unit_test(test_width),
        cmocka_unit_test(test_is_cjk),
        cmocka_unit_test(test_sanitize_escapes),
        cmocka_unit_test(test_sanitize_unterminated_string_ends_at_newline),
        cmocka_unit_test(test_sanitize_controls),
        cmocka_unit_test(test_sanitize_invalid),
        cmocka_unit_test(test_sanitize_bidi),
        cmocka_unit_test(test_sanitize_invisible),
        cmocka_unit_test(test_width_is_wcwidth),
        cmocka_unit_test(test_sanitize_output_is_safe),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
