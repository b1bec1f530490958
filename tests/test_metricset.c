/*
 * test_metricset: bounded series per (run, tag) (api/metricset). A million
 * points stay within the bucket bound with memory that stops growing; a
 * single spike anywhere survives; first and last points are exact; every
 * bucket's min/max agree with a brute-force pass over random streams; NaN
 * and ±Inf are kept as such; a lower step purges as after a restart; steps
 * at the ends of int64 do not overflow; the series bound counts what it drops.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h> /* after the four headers it needs */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/metricset.h"
#include "util/xalloc.h"

static void test_basic(void **state)
{
    (void)state;
    struct metricset *ms = metricset_new(0, 0);
    metricset_add(ms, "rank0", "loss", 0, 10.0, 1.0);
    metricset_add(ms, "rank0", "loss", 1, 11.0, 0.5);
    metricset_add(ms, "rank1", "loss", 0, 10.0, 2.0);
    assert_int_equal(metricset_count(ms), 2);
    const struct metric_series *s = metricset_find(ms, "rank0", "loss");
    assert_non_null(s);
    assert_ptr_equal(s, metricset_at(ms, 0));
    assert_string_equal(metric_series_run(s), "rank0");
    assert_string_equal(metric_series_tag(s), "loss");
    assert_int_equal(metric_series_seen(s), 2);
    struct metric_point last;
    assert_true(metric_series_last(s, &last));
    assert_true(last.step == 1 && last.value == 0.5 && last.wall_time == 11.0);
    assert_null(metricset_find(ms, "rank0", "acc"));
    assert_null(metricset_find(ms, "rank", "0loss")); /* the key is the pair, not a concatenation */
    struct metric_point pts[8];
    assert_int_equal(metric_series_points(s, pts, 8), 2);
    assert_true(pts[0].step == 0 && pts[0].value == 1.0);
    assert_true(pts[1].step == 1 && pts[1].value == 0.5);
    metricset_free(ms);
}

static void test_bounded_million(void **state)
{
    (void)state;
    struct metricset *ms = metricset_new(1024, 0);
    size_t mem_at_100k = 0;
    for (int64_t i = 0; i < 1000000; i++) {
        double v = sin((double)i / 1000.0);
        if (i == 777777)
            v = 1e6; /* one spike */
        if (i == 123457)
            v = -1e6;
        metricset_add(ms, "r", "t", i, 1e9 + (double)i, v);
        if (i == 100000)
            mem_at_100k = metricset_memory(ms);
    }
    const struct metric_series *s = metricset_find(ms, "r", "t");
    size_t nb = metric_series_bucket_count(s);
    assert_true(nb <= 1024 && nb >= 512);
    assert_int_equal(metricset_memory(ms), mem_at_100k); /* flat once the buckets are full */
    assert_true(metricset_memory(ms) < 120 * 1024);
    assert_int_equal(metric_series_seen(s), 1000000);
    size_t n = metric_series_points(s, NULL, 0);
    assert_true(n <= 5 * nb);
    struct metric_point *p = xcalloc(n, sizeof *p);
    assert_int_equal(metric_series_points(s, p, n), n);
    double max = -INFINITY, min = INFINITY;
    for (size_t i = 0; i < n; i++) {
        if (i > 0)
            assert_true(p[i].step >= p[i - 1].step);
        if (p[i].value > max)
            max = p[i].value;
        if (p[i].value < min)
            min = p[i].value;
    }
    assert_true(max == 1e6);
    assert_true(min == -1e6);
    assert_true(p[0].step == 0 && p[n - 1].step == 999999); /* first and last exact */
    assert_true(p[n - 1].wall_time == 1e9 + 999999);
    free(p);
    metricset_free(ms);
}

/* Random increasing steps: each bucket's extremes are those of the points in its step range. */
static void test_brute_force(void **state)
{
    (void)state;
    srand(11);
    for (int round = 0; round < 20; round++) {
        size_t nb = 2 + (size_t)(rand() % 40);
        struct metricset *ms = metricset_new(nb, 0);
        size_t npts = 1 + (size_t)(rand() % 3000);
        int64_t *steps = xcalloc(npts, sizeof *steps);
        double *vals = xcalloc(npts, sizeof *vals);
        int64_t step = rand() % 100 - 50;
        for (size_t i = 0; i < npts; i++) {
            step += rand() % 4 == 0 ? 0 : rand() % (round % 2 ? 1000 : 3);
            steps[i] = step;
            vals[i] = (double)(rand() % 2001 - 1000);
            metricset_add(ms, "r", "t", steps[i], 0, vals[i]);
        }
        const struct metric_series *s = metricset_find(ms, "r", "t");
        size_t count = metric_series_bucket_count(s);
        assert_true(count >= 1 && count <= (nb + (nb & 1)));
        size_t covered = 0;
        for (size_t b = 0; b < count; b++) {
            struct metric_bucket bk;
            metric_series_bucket(s, b, &bk);
            double mn = INFINITY, mx = -INFINITY;
            size_t first = npts, last = 0;
            for (size_t i = 0; i < npts; i++) {
                if (steps[i] < bk.first.step || steps[i] > bk.last.step)
                    continue;
                covered++;
                if (first == npts)
                    first = i;
                last = i;
                if (vals[i] < mn)
                    mn = vals[i];
                if (vals[i] > mx)
                    mx = vals[i];
            }
            assert_true(bk.has_minmax);
            assert_true(bk.min.value == mn);
            assert_true(bk.max.value == mx);
            assert_true(bk.first.value == vals[first]);
            assert_true(bk.last.value == vals[last]);
        }
        assert_int_equal(covered, npts); /* every point lies in exactly one bucket */
        free(steps);
        free(vals);
        metricset_free(ms);
    }
}

static void test_nan_inf(void **state)
{
    (void)state;
    struct metricset *ms = metricset_new(4, 0);
    double v[] = {1.0, NAN, INFINITY, -INFINITY, 2.0, NAN};
    for (int i = 0; i < 6; i++)
        metricset_add(ms, "r", "t", i, 0, v[i]);
    const struct metric_series *s = metricset_find(ms, "r", "t");
    int nan = 0, pinf = 0, ninf = 0;
    struct metric_point p[32];
    size_t n = metric_series_points(s, p, 32);
    for (size_t i = 0; i < n; i++) {
        nan += isnan(p[i].value);
        pinf += isinf(p[i].value) && p[i].value > 0;
        ninf += isinf(p[i].value) && p[i].value < 0;
    }
    assert_true(nan >= 1);
    assert_int_equal(pinf, 1);
    assert_int_equal(ninf, 1);
    struct metric_point last;
    assert_true(metric_series_last(s, &last));
    assert_true(isnan(last.value));
    /* A series of NaN only. */
    metricset_add(ms, "r", "nan", 0, 0, NAN);
    s = metricset_find(ms, "r", "nan");
    struct metric_bucket b;
    metric_series_bucket(s, 0, &b);
    assert_true(b.has_nan && !b.has_minmax);
    assert_int_equal(metric_series_points(s, p, 32), 1);
    metricset_free(ms);
}

static void test_purge(void **state)
{
    (void)state;
    struct metricset *ms = metricset_new(8, 0);
    for (int i = 0; i <= 1000; i++)
        metricset_add(ms, "r", "t", i, 0, i == 900 ? 1e9 : (double)i);
    /* The job restarts from the checkpoint at step 800: the old 800..1000 go. */
    metricset_add(ms, "r", "t", 800, 0, -1.0);
    const struct metric_series *s = metricset_find(ms, "r", "t");
    assert_int_equal(metric_series_purges(s), 1);
    struct metric_point p[64];
    size_t n = metric_series_points(s, p, 64);
    for (size_t i = 0; i < n; i++) {
        assert_true(p[i].step <= 800);
        assert_true(p[i].value != 1e9);
        if (p[i].step == 800)
            assert_true(p[i].value == -1.0);
    }
    assert_true(p[n - 1].step == 800);
    assert_true(p[0].step == 0);
    /* Below the first step: everything goes. */
    metricset_add(ms, "r", "t", -5, 0, 3.0);
    assert_int_equal(metric_series_points(s, p, 64), 1);
    assert_true(p[0].step == -5 && p[0].value == 3.0);
    assert_int_equal(metric_series_seen(s), 1003);
    metricset_free(ms);
}

static void test_extreme_steps(void **state)
{
    (void)state;
    struct metricset *ms = metricset_new(2, 0);
    int64_t steps[] = {INT64_MIN, INT64_MIN + 1, -1, 0, 1, INT64_MAX / 2, INT64_MAX - 1, INT64_MAX};
    for (size_t i = 0; i < sizeof steps / sizeof *steps; i++)
        metricset_add(ms, "r", "t", steps[i], 0, (double)i);
    const struct metric_series *s = metricset_find(ms, "r", "t");
    assert_true(metric_series_bucket_count(s) <= 2);
    struct metric_point p[16];
    size_t n = metric_series_points(s, p, 16);
    assert_true(p[0].step == INT64_MIN && p[n - 1].step == INT64_MAX);
    assert_true(p[n - 1].value == 7.0);
    metricset_free(ms);
}

static void test_series_bound(void **state)
{
    (void)state;
    struct metricset *ms = metricset_new(0, 3);
    char tag[16];
    for (int i = 0; i < 10; i++) {
        snprintf(tag, sizeof tag, "t%d", i);
        metricset_add(ms, "r", tag, 0, 0, 1.0);
        metricset_add(ms, "r", tag, 1, 0, 1.0);
    }
    assert_int_equal(metricset_count(ms), 3);
    assert_int_equal(metricset_dropped(ms), 14);
    assert_non_null(metricset_find(ms, "r", "t2"));
    assert_null(metricset_find(ms, "r", "t3"));
    metricset_free(ms);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_basic),        cmocka_unit_test(test_bounded_million),
        cmocka_unit_test(test_brute_force),  cmocka_unit_test(test_nan_inf),
        cmocka_unit_test(test_purge),        cmocka_unit_test(test_extreme_steps),
        cmocka_unit_test(test_series_bound),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
