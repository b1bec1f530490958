/*
 * test_bump: util/bump hands out aligned memory in order, keeps what it
 * handed out intact as it maps more blocks (a request larger than a block
 * gets one of its own); bump_reset keeps the first block only, with no more
 * than 64 KiB of it resident (and, under AddressSanitizer, poisoned), and
 * bump_free unmaps all.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h> /* after the four headers it needs */

#include <stdalign.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif

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
    bump_free(&b);
    assert_null(b.head);
    assert_int_equal(b.mapped, 0);
}

/* Resident pages of the 1 MiB block that holds first (mincore). */
static size_t resident_pages(const void *first)
{
    long page = sysconf(_SC_PAGESIZE);
    unsigned char *start = (unsigned char *)((uintptr_t)first & ~(uintptr_t)(page - 1));
    size_t n = (size_t)(1024 * 1024 / page);
    unsigned char vec[1024 * 1024 / 4096];
    assert_true(n <= sizeof vec);
    assert_int_equal(mincore(start, (size_t)(1024 * 1024), vec), 0);
    size_t r = 0;
    for (size_t i = 0; i < n; i++)
        r += vec[i] & 1;
    return r;
}

static void a_reset_keeps_the_first_block_with_little_of_it_resident(void **state)
{
    (void)state;
    struct bump b = BUMP_INIT;
    unsigned char *first = bump_alloc(&b, 16);
    for (int i = 0; i < 20000; i++) /* ~2 MiB: the first block filled, then more */
        memset(bump_alloc(&b, 100), 1, 100);
    assert_true(b.mapped > 1024 * 1024);
    long page = sysconf(_SC_PAGESIZE);
    assert_true(resident_pages(first) > (size_t)(256 * 1024 / page));
    bump_reset(&b);
    assert_int_equal(b.mapped, 1024 * 1024);
    assert_true(resident_pages(first) <= (size_t)(64 * 1024 / page));
    /* The next round starts where the first did: no new mapping. */
    assert_ptr_equal(bump_alloc(&b, 16), first);
    assert_int_equal(b.mapped, 1024 * 1024);
    bump_reset(&b);
    bump_free(&b);
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
    bump_reset(&b); /* the first block kept, the large one unmapped */
    assert_int_equal(b.mapped, 1024 * 1024);
    bump_free(&b);
    bump_free(&b); /* twice: nothing left to unmap */
    assert_int_equal(b.mapped, 0);
    char *again = bump_dup(&b, "", 0); /* zero bytes: still a usable pointer */
    assert_non_null(again);
    bump_reset(&b);
    bump_free(&b);
}

static void a_large_first_request_is_not_kept(void **state)
{
    (void)state;
    struct bump b = BUMP_INIT;
    memset(bump_alloc(&b, 2 * 1024 * 1024), 2, 2 * 1024 * 1024);
    bump_reset(&b);
    assert_null(b.head);
    assert_int_equal(b.mapped, 0);
}

/* Under AddressSanitizer: what a round handed out reads as freed once it is reset. */
static void a_pointer_kept_past_a_reset_is_poisoned(void **state)
{
    (void)state;
#if defined(__SANITIZE_ADDRESS__)
    struct bump b = BUMP_INIT;
    char *p = bump_alloc(&b, 32);
    assert_false(__asan_address_is_poisoned(p));
    assert_false(__asan_address_is_poisoned(p + 31));
    assert_true(__asan_address_is_poisoned(p + 32)); /* the rest of the block */
    bump_reset(&b);
    assert_true(__asan_address_is_poisoned(p));
    assert_ptr_equal(bump_alloc(&b, 8), p); /* handed out again: usable */
    assert_false(__asan_address_is_poisoned(p));
    bump_free(&b);
#else
    skip(); /* nothing poisons without AddressSanitizer */
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hands_out_aligned_memory_that_stays),
        cmocka_unit_test(a_large_request_gets_a_block_of_its_own),
        cmocka_unit_test(a_reset_keeps_the_first_block_with_little_of_it_resident),
        cmocka_unit_test(a_large_first_request_is_not_kept),
        cmocka_unit_test(a_pointer_kept_past_a_reset_is_poisoned),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
