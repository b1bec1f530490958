/*
 * test_bump: util/bump hands out aligned memory in order, keeps what it
 * handed out intact as it maps more blocks (a request larger than a block
 * gets one of its own), and bump_reset unmaps all of it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h> /* after the four headers it needs */

#include <stdalign.h>
#include <string.h>

#include "util/bump.h"

static void hands_out_aligned_memory_that_stays(void **state)
{
    (void)state;
    struct bump b = BUMP_INIT;
    enum { N = 20000 };
    static unsigned char *p[N];
    for (int i = 0; i < N; i++) {
        size_t n = (size_t)(i % 97) + 1; /* 1..97 bytes: ~1 MiB in all, more than one block */
        p[i] = bump_alloc(&b, n);
        assert_int_equal((uintptr_t)p[i] % alignof(max_align_t), 0);
        memset(p[i], i & 0xff, n);
    }
    assert_true(b.mapped >= 2 * 1024 * 1024);
    for (int i = 0; i < N; i++)
        for (size_t k = 0; k < (size_t)(i % 97) + 1; k++)
            if (p[i][k] != (unsigned char)(i & 0xff))
                fail_msg("allocation %d changed at byte %zu", i, k);
    bump_reset(&b);
    assert_null(b.head);
    assert_int_equal(b.mapped, 0);
}

static void a_large_request_gets_a_block_of_its_own(void **state)
{
    (void)state;
    struct bump b = BUMP_INIT;
    char *small = bump_dup(&b, "kept", 5);
    size_t big = 3 * 1024 * 1024 + 1;
    unsigned char *p = bump_alloc(&b, big);
    memset(p, 0xab, big);
    assert_int_equal(p[big - 1], 0xab);
    assert_string_equal(small, "kept");
    assert_true(b.mapped >= 1024 * 1024 + big);
    bump_reset(&b);
    bump_reset(&b); /* twice: nothing left to unmap */
    assert_int_equal(b.mapped, 0);
    char *again = bump_dup(&b, "", 0); /* zero bytes: still a distinct, usable pointer */
    assert_non_null(again);
    bump_reset(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hands_out_aligned_memory_that_stays),
        cmocka_unit_test(a_large_request_gets_a_block_of_its_own),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
