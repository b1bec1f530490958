/*
 * test_strbuf: the growable buffer (appends, printf-style appends past the
 * first allocation and past a megabyte, truncate, reset, detach) and the
 * string view.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h> /* after the four headers it needs */

#include <stdlib.h>
#include <string.h>

#include "util/strbuf.h"

static void test_empty(void **state)
{
    struct strbuf sb = STRBUF_INIT;
    assert_null(sb.buf);
    assert_string_equal(strbuf_str(&sb), "");
    strbuf_truncate(&sb, 0); /* no buffer yet: nothing to do */
    strbuf_reset(&sb);
    assert_string_equal(strbuf_str(&sb), "");
    strbuf_free(&sb);
    strbuf_free(&sb); /* twice is harmless */
}

static void test_add(void **state)
{
    struct strbuf sb = STRBUF_INIT;
    strbuf_add(&sb, "abc", 3);
    strbuf_adds(&sb, "def");
    strbuf_addc(&sb, 'g');
    strbuf_add(&sb, "ignored", 0);
    assert_int_equal(sb.len, 7);
    assert_string_equal(strbuf_str(&sb), "abcdefg");
    assert_true(sb.cap > sb.len);
    /* bytes, not strings: an embedded NUL is kept and the end terminated */
    strbuf_add(&sb, "x\0y", 3);
    assert_int_equal(sb.len, 10);
    assert_memory_equal(sb.buf, "abcdefgx\0y", 11);
    strbuf_free(&sb);
    assert_null(sb.buf);
    assert_int_equal(sb.len, 0);
    assert_int_equal(sb.cap, 0);
}

static void test_add_grows(void **state)
{
    struct strbuf sb = STRBUF_INIT;
    for (int i = 0; i < 1000; i++)
        strbuf_addc(&sb, (char)('a' + i % 26));
    assert_int_equal(sb.len, 1000);
    assert_int_equal(strlen(strbuf_str(&sb)), 1000);
    for (int i = 0; i < 1000; i++)
        assert_int_equal(sb.buf[i], 'a' + i % 26);
    strbuf_free(&sb);
}

/* Appending the buffer to itself must survive the reallocation. */
static void test_add_self(void **state)
{
    struct strbuf sb = STRBUF_INIT;
    strbuf_adds(&sb, "0123456789");
    for (int i = 0; i < 10; i++)
        strbuf_add(&sb, sb.buf, sb.len);
    assert_int_equal(sb.len, 10 * 1024);
    for (size_t i = 0; i < sb.len; i++)
        assert_int_equal(sb.buf[i], '0' + (int)(i % 10));
    strbuf_adds(&sb, sb.buf + sb.len - 3);
    assert_int_equal(sb.len, 10 * 1024 + 3);
    assert_string_equal(sb.buf + sb.len - 6, "789789");
    strbuf_free(&sb);
}

static void test_addf(void **state)
{
    struct strbuf sb = STRBUF_INIT;
    strbuf_addf(&sb, "%s=%d", "workers", 8);
    assert_string_equal(strbuf_str(&sb), "workers=8");
    strbuf_addf(&sb, "%s", ""); /* empty result adds nothing */
    assert_int_equal(sb.len, 9);
    strbuf_addf(&sb, ", %zu GiB", (size_t)80);
    assert_string_equal(strbuf_str(&sb), "workers=8, 80 GiB");
    strbuf_free(&sb);

    /* an empty format on an empty buffer still reads as "" */
    strbuf_addf(&sb, "%s", "");
    assert_string_equal(strbuf_str(&sb), "");
    strbuf_free(&sb);
}

static void test_addf_past_64(void **state)
{
    struct strbuf sb = STRBUF_INIT;
    char want[201];
    memset(want, 'x', 200);
    want[200] = '\0';
    /* one append bigger than the first allocation */
    strbuf_addf(&sb, "%s", want);
    assert_int_equal(sb.len, 200);
    assert_string_equal(strbuf_str(&sb), want);
    strbuf_free(&sb);

    /* crossing 64 exactly: 63 bytes, then 1, then 1 */
    memset(want, 'y', 63);
    want[63] = '\0';
    strbuf_addf(&sb, "%s", want);
    assert_int_equal(sb.len, 63);
    strbuf_addf(&sb, "%c", 'z');
    strbuf_addf(&sb, "%c", 'z');
    assert_int_equal(sb.len, 65);
    assert_int_equal(sb.buf[65], '\0');
    assert_string_equal(sb.buf + 62, "yzz");
    strbuf_free(&sb);
}

static void test_addf_past_1mb(void **state)
{
    struct strbuf sb = STRBUF_INIT;
    size_t big = (1u << 20) + 12345;
    char *want = malloc(big + 1);
    assert_non_null(want);
    for (size_t i = 0; i < big; i++)
        want[i] = (char)('A' + i % 23);
    want[big] = '\0';
    strbuf_addf(&sb, "[%s]", want);
    assert_int_equal(sb.len, big + 2);
    assert_int_equal(sb.buf[0], '[');
    assert_memory_equal(sb.buf + 1, want, big);
    assert_string_equal(sb.buf + big + 1, "]");

    /* many small appends past a megabyte */
    strbuf_reset(&sb);
    for (int i = 0; i < 200000; i++)
        strbuf_addf(&sb, "%06d", i);
    assert_int_equal(sb.len, 6 * 200000);
    assert_memory_equal(sb.buf + 6 * 199999, "199999", 7);
    free(want);
    strbuf_free(&sb);
}

/* strbuf_vaddf through a variadic wrapper, as callers' error helpers do. */
static void __attribute__((format(printf, 2, 3))) wrapped(struct strbuf *sb, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    strbuf_vaddf(sb, fmt, ap);
    va_end(ap);
}

static void test_vaddf(void **state)
{
    struct strbuf sb = STRBUF_INIT;
    wrapped(&sb, "%s: %d", "line", 42);
    wrapped(&sb, " %s", "ok");
    assert_string_equal(strbuf_str(&sb), "line: 42 ok");
    strbuf_free(&sb);
}

static void test_truncate(void **state)
{
    struct strbuf sb = STRBUF_INIT;
    strbuf_adds(&sb, "hello world");
    strbuf_truncate(&sb, 5);
    assert_int_equal(sb.len, 5);
    assert_string_equal(strbuf_str(&sb), "hello");
    strbuf_truncate(&sb, 50); /* never lengthens */
    assert_int_equal(sb.len, 5);
    assert_string_equal(strbuf_str(&sb), "hello");
    strbuf_adds(&sb, "!");
    assert_string_equal(strbuf_str(&sb), "hello!");
    strbuf_reset(&sb);
    assert_int_equal(sb.len, 0);
    assert_string_equal(strbuf_str(&sb), "");
    assert_non_null(sb.buf); /* reset keeps the allocation */
    strbuf_free(&sb);
}

static void test_detach(void **state)
{
    struct strbuf sb = STRBUF_INIT;
    size_t len = 99;
    char *p = strbuf_detach(&sb, &len);
    assert_non_null(p);
    assert_string_equal(p, "");
    assert_int_equal(len, 0);
    free(p);

    strbuf_adds(&sb, "abc");
    p = strbuf_detach(&sb, &len);
    assert_string_equal(p, "abc");
    assert_int_equal(len, 3);
    assert_null(sb.buf);
    assert_int_equal(sb.len, 0);
    assert_int_equal(sb.cap, 0);
    assert_string_equal(strbuf_str(&sb), "");
    free(p);

    /* after reset, detach hands back "" and the old allocation */
    strbuf_adds(&sb, "gone");
    strbuf_reset(&sb);
    p = strbuf_detach(&sb, NULL);
    assert_string_equal(p, "");
    free(p);
    /* grown but never written: "" as well */
    strbuf_grow(&sb, 4096);
    p = strbuf_detach(&sb, &len);
    assert_string_equal(p, "");
    assert_int_equal(len, 0);
    free(p);
    /* the buffer is reusable after detach */
    strbuf_adds(&sb, "again");
    assert_string_equal(strbuf_str(&sb), "again");
    strbuf_free(&sb);
}

static void test_grow(void **state)
{
    struct strbuf sb = STRBUF_INIT;
    strbuf_grow(&sb, 1000);
    assert_true(sb.cap >= 1001);
    assert_int_equal(sb.len, 0);
    assert_string_equal(strbuf_str(&sb), ""); /* allocated, still terminated */
    char *before = sb.buf;
    for (int i = 0; i < 1000; i++)
        strbuf_addc(&sb, 'q');
    assert_ptr_equal(sb.buf, before); /* the room was really there */
    strbuf_free(&sb);
}

static void test_strview(void **state)
{
    struct strview v = strview_from("priority");
    assert_int_equal(v.n, 8);
    assert_true(strview_eq(v, "priority"));
    assert_false(strview_eq(v, "prio"));
    assert_false(strview_eq(v, "priority!"));
    struct strview part = {"priority", 4};
    assert_true(strview_eq(part, "prio"));
    struct strview none = strview_from(NULL);
    assert_int_equal(none.n, 0);
    assert_true(strview_eq(none, ""));
    assert_false(strview_eq(none, "x"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty),         cmocka_unit_test(test_add),
        cmocka_unit_test(test_add_grows),     cmocka_unit_test(test_add_self),
        cmocka_unit_test(test_addf),          cmocka_unit_test(test_addf_past_64),
        cmocka_unit_test(test_addf_past_1mb), cmocka_unit_test(test_vaddf),
        cmocka_unit_test(test_truncate),      cmocka_unit_test(test_detach),
        cmocka_unit_test(test_grow),          cmocka_unit_test(test_strview),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
