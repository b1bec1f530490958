/*
 * test_sizefmt: byte counts as people read them, in the largest unit
 * reached, never as "0 GiB" or "1e+03 MiB".
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h> /* after the four headers it needs */

#include <string.h>

#include "util/sizefmt.h"

static void said(uint64_t bytes, const char *want)
{
    char buf[SIZEFMT_SIZE];
    assert_string_equal(sizefmt(buf, bytes), want);
}

static void test_units(void **state)
{
    (void)state;
    said(0, "0 bytes");
    said(1, "1 byte");
    said(1023, "1023 bytes");
    said(1024, "1 KiB");
    said(1536, "1.5 KiB");
    said(64ull << 20, "64 MiB");
    said(1000ull << 20, "1000 MiB"); /* not "0 GiB", not "1e+03 MiB" */
    said(100ull << 30, "100 GiB");
    said((3ull << 30) / 2, "1.5 GiB");
    said((1ull << 30) - 1, "1 GiB"); /* 1023.99… MiB rounds into the next unit */
    said(UINT64_MAX, "16 EiB");
}

static void test_whole_and_mib(void **state)
{
    (void)state;
    struct strbuf sb = STRBUF_INIT;
    sizefmt_add_whole(&sb, (3ull << 20) + (300ull << 10));
    assert_string_equal(strbuf_str(&sb), "3 MiB");
    strbuf_reset(&sb);
    sizefmt_add_mib(&sb, 1000);
    assert_string_equal(strbuf_str(&sb), "1000 MiB");
    strbuf_reset(&sb);
    sizefmt_add_mib(&sb, 16384);
    assert_string_equal(strbuf_str(&sb), "16 GiB");
    strbuf_free(&sb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_units),
        cmocka_unit_test(test_whole_and_mib),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
