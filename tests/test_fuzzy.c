/*
 * test_fuzzy: the edit distance behind "did you mean …?" and the choice of
 * the suggestion (or none) among field names.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h> /* after the four headers it needs */

#include <string.h>

#include "util/fuzzy.h"

static void test_distance(void **state)
{
    assert_int_equal(fuzzy_distance("", ""), 0);
    assert_int_equal(fuzzy_distance("abc", ""), 3);
    assert_int_equal(fuzzy_distance("", "abc"), 3);
    assert_int_equal(fuzzy_distance("priority", "priority"), 0);
    assert_int_equal(fuzzy_distance("kitten", "sitting"), 3);
    assert_int_equal(fuzzy_distance("workers", "worker"), 1);    /* deletion */
    assert_int_equal(fuzzy_distance("worker", "workers"), 1);    /* insertion */
    assert_int_equal(fuzzy_distance("image", "imoge"), 1);       /* substitution */
    assert_int_equal(fuzzy_distance("Priority", "PRIORITY"), 0); /* case-insensitive */
}

static void test_transposition(void **state)
{
    assert_int_equal(fuzzy_distance("priorty", "priority"), 1);
    assert_int_equal(fuzzy_distance("prioirty", "priority"), 1); /* adjacent swap */
    assert_int_equal(fuzzy_distance("ab", "ba"), 1);
    assert_int_equal(fuzzy_distance("abc", "ca"), 3); /* OSA, not full DL */
    assert_int_equal(fuzzy_distance("gpus", "gpsu"), 1);
    /* symmetric */
    assert_int_equal(fuzzy_distance("priority", "priorty"), 1);
    assert_int_equal(fuzzy_distance("sitting", "kitten"), 3);
}

static void test_long_inputs(void **state)
{
    /* inputs are cut at 64 bytes: bounded work, no overflow */
    char a[300], b[300];
    memset(a, 'a', sizeof a - 1);
    a[sizeof a - 1] = '\0';
    memset(b, 'b', sizeof b - 1);
    b[sizeof b - 1] = '\0';
    assert_int_equal(fuzzy_distance(a, b), 64);
    assert_int_equal(fuzzy_distance(a, a), 0);
    assert_int_equal(fuzzy_distance(a, ""), 64);
}

static const char *const fields[] = {
    "name",          "priority",   "image",          "workers",     "worker_spec",
    "backoff_limit", "quota_type", "restart_policy", "max_runtime",
};
#define NFIELDS (sizeof fields / sizeof fields[0])

static void test_nearest(void **state)
{
    assert_string_equal(fuzzy_nearest("priorty", fields, NFIELDS), "priority");
    assert_string_equal(fuzzy_nearest("PRIORITY", fields, NFIELDS), "priority");
    assert_string_equal(fuzzy_nearest("backof_limit", fields, NFIELDS), "backoff_limit");
    assert_string_equal(fuzzy_nearest("worker", fields, NFIELDS), "workers");
    assert_string_equal(fuzzy_nearest("imgae", fields, NFIELDS), "image");
    assert_string_equal(fuzzy_nearest("restartpolcy", fields, NFIELDS), "restart_policy");
    assert_null(fuzzy_nearest("zzzzzz", fields, NFIELDS));
    assert_null(fuzzy_nearest("completely_unrelated", fields, NFIELDS));
    assert_null(fuzzy_nearest("priorty", fields, 0));
}

static void test_nearest_limits(void **state)
{
    /* words of up to three letters allow one edit; two from four letters on,
     * a third of the length beyond that */
    const char *const short_words[] = {"gpu"};
    assert_string_equal(fuzzy_nearest("gpx", short_words, 1), "gpu");
    assert_null(fuzzy_nearest("gxx", short_words, 1));
    assert_null(fuzzy_nearest("xxx", short_words, 1));
    const char *const four[] = {"name"};
    assert_string_equal(fuzzy_nearest("nmae", four, 1), "name");
    assert_string_equal(fuzzy_nearest("nxxe", four, 1), "name");
    /* twelve letters: up to four edits */
    const char *const long_words[] = {"abcdefghijkl"};
    assert_string_equal(fuzzy_nearest("abcdefghWXYZ", long_words, 1), "abcdefghijkl");
    assert_null(fuzzy_nearest("abcdefgVWXYZ", long_words, 1));
    /* the first of equally close candidates wins */
    const char *const tie[] = {"cat", "car"};
    assert_string_equal(fuzzy_nearest("caz", tie, 2), "cat");
    /* a word longer than 64 bytes is never a typo */
    char big[100];
    memset(big, 'n', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    const char *const same[] = {big};
    assert_null(fuzzy_nearest(big, same, 1));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_distance),       cmocka_unit_test(test_transposition),
        cmocka_unit_test(test_long_inputs),    cmocka_unit_test(test_nearest),
        cmocka_unit_test(test_nearest_limits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
