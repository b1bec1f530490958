/*
 * test_sortrec: the table's sort apart from the table (widgets/sortrec.c) —
 * which cells read as numbers (decimals, percentages, durations) and which
 * do not, that the number keys order as the numbers do, and that the sort
 * is stable, puts numbers before text, orders text by its whole folded
 * form past the 8-byte prefix, defers to an owner's compare, and reverses
 * for descending without reversing ties.
 */
// clang-format off
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
// clang-format on

#include <string.h>

#include "util/strbuf.h"
#include "widgets/sortrec.h"

static double num(const char *s)
{
    double v = -12345;
    assert_true(sortrec_parse_number(s, strlen(s), &v));
    return v;
}

static void test_numbers(void **state)
{
    (void)state;
    assert_true(num("12") == 12);
    assert_true(num("-0.5") == -0.5);
    assert_true(num(" 97% ") == 97);
    assert_true(num("+3") == 3);
    assert_true(num("1.") == 1); /* a trailing point: the digits before it count */
    assert_true(num("2.5%") == 2.5);
    assert_true(num("90s") == 90);
    assert_true(num("1h30m") == 5400);
    assert_true(num("2d") == 2 * 86400);
    assert_true(num("1w1d") == 8 * 86400);
    assert_true(num("1y") == 365 * 86400.0);
    double v;
    const char *no[] = {"",   " ",    "abc", ".", "-",   "1h-2m", "+5m",
                        "5x", "1.5h", "5m3", "%", "1 2", "0x10"};
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
        assert_false(sortrec_parse_number(no[i], strlen(no[i]), &v));
}

static void test_number_keys_order(void **state)
{
    (void)state;
    const double v[] = {-1e300, -3.5, -1, -0.0, 0, 1e-9, 1, 2, 1e300};
    for (size_t i = 0; i + 1 < sizeof v / sizeof v[0]; i++)
        assert_true(sortrec_number_key(v[i]) <= sortrec_number_key(v[i + 1]));
    assert_true(sortrec_number_key(-0.0) == sortrec_number_key(0.0));
    assert_true(sortrec_number_key(-1) < sortrec_number_key(1));
}

/* Records for cells: numbers as keys, texts folded into arena (as table.c caches them). */
static void make(struct sortrec *r, const char *const *cells, size_t n, struct strbuf *arena)
{
    strbuf_reset(arena);
    for (size_t i = 0; i < n; i++) {
        const char *s = cells[i];
        size_t len = strlen(s);
        double d;
        r[i].row = (uint32_t)i;
        r[i].text = 0;
        if (sortrec_parse_number(s, len, &d)) {
            r[i].key = sortrec_number_key(d);
            continue;
        }
        r[i].key = 0;
        r[i].text = (uint32_t)arena->len + 1;
        for (size_t k = 0; k < len && k < 8; k++)
            r[i].key |= (uint64_t)(unsigned char)s[k] << (56 - 8 * k);
        strbuf_add(arena, s, len + 1);
    }
}

static int by_len(void *ctx, size_t a, size_t b, size_t col)
{
    const char *const *cells = ctx;
    (void)col;
    return (int)strlen(cells[a]) - (int)strlen(cells[b]);
}

static void test_sort(void **state)
{
    (void)state;
    const char *cells[] = {"beta", "10", "alphabet-z", "2", "alphabet-a", "1h", "beta", "-1"};
    enum { N = sizeof cells / sizeof cells[0] };
    struct sortrec r[2 * N];
    struct strbuf arena = STRBUF_INIT;
    make(r, cells, N, &arena);
    struct sortrec_ctx c = {.arena = strbuf_str(&arena)};
    sortrec_sort(&c, r, r + N, N);
    const uint32_t want[] = {7, 3, 1, 5, 4, 2, 0, 6}; /* -1 2 10 1h(3600), texts past 8 bytes */
    for (size_t i = 0; i < N; i++)
        assert_int_equal(r[i].row, want[i]);

    make(r, cells, N, &arena);
    c.desc = true;
    sortrec_sort(&c, r, r + N, N);
    const uint32_t down[] = {0, 6, 2, 4, 5, 1, 3, 7}; /* ties (the two "beta") keep row order */
    for (size_t i = 0; i < N; i++)
        assert_int_equal(r[i].row, down[i]);

    /* The owner's compare: every key equal, rows by cell length, ties by row. */
    for (size_t i = 0; i < N; i++)
        r[i] = (struct sortrec){0, (uint32_t)i, 0};
    struct sortrec_ctx o = {.owner_cmp = by_len, .owner_ctx = (void *)cells};
    sortrec_sort(&o, r, r + N, N);
    const uint32_t by_length[] = {3, 1, 5, 7, 0, 6, 2, 4};
    for (size_t i = 0; i < N; i++)
        assert_int_equal(r[i].row, by_length[i]);
    strbuf_free(&arena);
}

/* Many equal and unequal keys through the merge passes: sorted, and stable. */
static void test_sort_many(void **state)
{
    (void)state;
    enum { N = 5000 };
    static struct sortrec r[2 * N];
    uint64_t x = 88172645463325252ull;
    for (size_t i = 0; i < N; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        r[i] = (struct sortrec){sortrec_number_key((double)(x % 97)), (uint32_t)i, 0};
    }
    struct sortrec_ctx c = {0};
    sortrec_sort(&c, r, r + N, N);
    for (size_t i = 1; i < N; i++) {
        assert_true(r[i - 1].key <= r[i].key);
        if (r[i - 1].key == r[i].key)
            assert_true(r[i - 1].row < r[i].row);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_numbers),
        cmocka_unit_test(test_number_keys_order),
        cmocka_unit_test(test_sort),
        cmocka_unit_test(test_sort_many),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
