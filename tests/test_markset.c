/*
 * test_markset: the set of row keys behind the table's marks
 * (widgets/markset.c) — adds, lookups and deletes checked against a plain
 * array through growth and through deletes in the middle of probe runs
 * (keys chosen to collide), key 0 and the largest key included.
 */
// clang-format off
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
// clang-format on

#include <string.h>

#include "widgets/markset.h"

static void test_basics(void **state)
{
    (void)state;
    struct markset m;
    memset(&m, 0, sizeof m);
    assert_false(markset_has(&m, 0));
    markset_del(&m, 7); /* empty: nothing to do */
    markset_add(&m, 0);
    markset_add(&m, UINT64_MAX);
    markset_add(&m, 0); /* twice: still one */
    assert_int_equal(m.n, 2);
    assert_true(markset_has(&m, 0));
    assert_true(markset_has(&m, UINT64_MAX));
    assert_false(markset_has(&m, 1));
    markset_del(&m, 0);
    markset_del(&m, 0);
    assert_int_equal(m.n, 1);
    assert_false(markset_has(&m, 0));
    assert_true(markset_has(&m, UINT64_MAX));
    markset_free(&m);
    assert_int_equal(m.n, 0);
    assert_false(markset_has(&m, UINT64_MAX));
}

/* Random adds and deletes against a reference membership array. */
static void test_against_reference(void **state)
{
    (void)state;
    enum { KEYS = 3000, STEPS = 60000 };
    static unsigned char in[KEYS];
    memset(in, 0, sizeof in);
    struct markset m;
    memset(&m, 0, sizeof m);
    uint64_t x = 0x9E3779B97F4A7C15ull;
    size_t n = 0;
    for (int step = 0; step < STEPS; step++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        size_t k = (size_t)(x % KEYS);
        /* Keys that differ only above the bits the hash keeps after its shift collide more. */
        uint64_t key = (uint64_t)k << 40 | (k & 3);
        if ((x >> 32) % 3 == 0) {
            markset_del(&m, key);
            n -= in[k];
            in[k] = 0;
        } else {
            markset_add(&m, key);
            n += !in[k];
            in[k] = 1;
        }
        if (step % 1000 == 0)
            for (size_t j = 0; j < KEYS; j++)
                assert_int_equal(markset_has(&m, (uint64_t)j << 40 | (j & 3)), in[j]);
        assert_int_equal(m.n, n);
    }
    for (size_t j = 0; j < KEYS; j++)
        assert_int_equal(markset_has(&m, (uint64_t)j << 40 | (j & 3)), in[j]);
    assert_true(m.n * 2 <= m.cap);
    markset_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_basics),
        cmocka_unit_test(test_against_reference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
