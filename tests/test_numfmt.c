/*
 * test_numfmt: the shortest-digits formatter against the snprintf/strtod
 * way it replaces, text for text, on hand-picked values (±0, subnormals,
 * powers of ten, float and double edges, values that need 17 digits) and
 * on 400,000 random floats and doubles (random bits, so every exponent
 * comes), and each text read back by strtod as the same value.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h> /* after the four headers it needs */

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/numfmt.h"

/* The same text as the slow way, and it reads back. */
static void check(double v)
{
    char fast[NUMFMT_SIZE], slow[NUMFMT_SIZE];
    size_t n = numfmt_shortest(fast, v);
    numfmt_shortest_slow(slow, v);
    if (strcmp(fast, slow) != 0)
        fail_msg("%a: '%s', the slow way '%s'", v, fast, slow);
    assert_int_equal(n, strlen(fast));
    if (isnan(v))
        return;
    double back = strtod(fast, NULL);
    if ((double)(float)v == v) {
        if ((float)back != (float)v || signbit(back) != signbit(v))
            fail_msg("%a: '%s' reads back as %a", v, fast, back);
    } else if (back != v) {
        fail_msg("%a: '%s' reads back as %a", v, fast, back);
    }
}

static void test_known(void **state)
{
    (void)state;
    static const struct {
        double v;
        const char *text;
    } cases[] = {
        {0.0, "0"},
        {-0.0, "-0"},
        {1.0, "1"},
        {0.1f, "0.1"},
        {0.1, "0.1"},
        {1e6, "1e+06"},
        {123456.0, "123456"},
        {1234567.0, "1234567"},
        {1e-5, "1e-05"},
        {0.0001, "0.0001"},
        {1.0 / 3.0, "0.3333333333333333"},
        {1.0f / 3.0f, "0.33333334"},
        {5e-324, "4.94065645841247e-324"},
        {DBL_MAX, "1.7976931348623157e+308"},
        {FLT_MAX, "3.4028235e+38"},
        {FLT_MIN, "1.1754944e-38"},
        {-2.5, "-2.5"},
        {100.0, "100"},
        {1e15, "1e+15"},
        {123456789012345.0, "123456789012345"},
        {0.30000000000000004, "0.30000000000000004"},
        {INFINITY, "inf"},
        {-INFINITY, "-inf"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char buf[NUMFMT_SIZE];
        numfmt_shortest(buf, cases[i].v);
        if (strcmp(buf, cases[i].text) != 0)
            fail_msg("%a: '%s', not '%s'", cases[i].v, buf, cases[i].text);
        check(cases[i].v);
    }
    char buf[NUMFMT_SIZE];
    numfmt_shortest(buf, NAN);
    assert_true(strstr(buf, "nan") != NULL);
}

static uint64_t next(uint64_t *x)
{
    *x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
    return *x;
}

static void test_edges(void **state)
{
    (void)state;
    /* every power of ten, either side of it, and halfway values */
    for (int e = -330; e <= 310; e++) {
        double p = pow(10, e);
        check(p);
        check(nextafter(p, 0));
        check(nextafter(p, INFINITY));
        float pf = (float)p;
        if (isfinite(pf)) {
            check(pf);
            check(nextafterf(pf, 0));
            check(nextafterf(pf, INFINITY));
        }
        check(-p * 1.5);
        check(p * 9.5);
        check(p * 0.5);
    }
    /* every subnormal float exponent and the double subnormal range */
    for (int i = 0; i < 64; i++) {
        check(ldexpf(1.0f, -126 - (i % 24)) * 3);
        check(ldexp(1.0, -1022 - i) * 5);
    }
}

/* Random bits: every exponent, every mantissa, as floats and as doubles. */
static void test_random(void **state)
{
    (void)state;
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (int i = 0; i < 200000; i++) {
        uint64_t bits = next(&x);
        double d;
        memcpy(&d, &bits, sizeof d);
        if (isfinite(d))
            check(d);
        uint32_t fbits = (uint32_t)next(&x);
        float f;
        memcpy(&f, &fbits, sizeof f);
        if (isfinite(f))
            check(f);
    }
}

/* Values as training logs hold them: floats of a few digits, losses, steps. */
static void test_typical(void **state)
{
    (void)state;
    uint64_t x = 12345;
    for (int i = 0; i < 200000; i++) {
        double u = (double)(next(&x) >> 11) / 9007199254740992.0;
        check((float)(u * 10));
        check((float)exp(-20 * u));
        check(round(u * 1e6) / 1e3);
        check(u);
        check((double)(int64_t)(next(&x) % 100000000));
    }
}

/* Integers as "%lld" prints them, the ends of the range too. */
static void test_int(void **state)
{
    (void)state;
    static const long long cases[] = {0, 1, -1, 9, 10, 99, 100, 101, 1700000000, -1234567,
                                      9223372036854775807LL, -9223372036854775807LL - 1};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct strbuf sb = STRBUF_INIT;
        char want[32];
        snprintf(want, sizeof want, "%lld", cases[i]);
        numfmt_add_int(&sb, cases[i]);
        assert_string_equal(strbuf_str(&sb), want);
        strbuf_free(&sb);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known),
        cmocka_unit_test(test_edges),
        cmocka_unit_test(test_random),
        cmocka_unit_test(test_typical),
        cmocka_unit_test(test_int),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
