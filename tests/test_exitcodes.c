/*
 * test_exitcodes: the exit-code list grammar of trainjob-job(5) — every example the
 * spec names, the boundaries, exact error offsets and messages, the canonical
 * format and its round trip, the shadowing check between rules, and what
 * an exit code means.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h> /* after the four headers it needs */

#include <stdlib.h>
#include <string.h>

#include "api/exitcodes.h"
#include "util/strbuf.h"

/* Parses s, which must be valid, and returns its canonical text (owned). */
static char *canon(const char *s)
{
    struct exitcode_set set;
    struct exitcodes_error err = {0};
    struct strbuf sb = STRBUF_INIT;

    if (exitcodes_parse(s, &set, &err) != 0)
        fail_msg("\"%s\" rejected at %zu: %s", s, err.offset, err.message);
    exitcodes_format(&set, &sb);
    return strbuf_detach(&sb, NULL);
}

static void assert_canon(const char *s, const char *want)
{
    char *got = canon(s);
    assert_string_equal(got, want);
    free(got);
}

/* Parses s, which must be invalid, and checks the error offset and message. */
static void assert_error(const char *s, size_t offset, const char *message)
{
    struct exitcode_set set, before;
    struct exitcodes_error err = {0};

    exitcodes_clear(&set);
    exitcodes_add(&set, 42);
    before = set;
    assert_int_equal(exitcodes_parse(s, &set, &err), -1);
    assert_int_equal(err.offset, offset);
    if (message != NULL)
        assert_string_equal(err.message, message);
    assert_memory_equal(&set, &before, sizeof set); /* untouched on error */
}

static void test_valid_examples(void **state)
{
    assert_canon("1", "1");
    assert_canon("200-205", "200-205");
    assert_canon("199,255", "199,255");
    assert_canon("199,200-204,230", "199-204,230");
    assert_canon(" 1 , 2 - 3 ", "1-3");
    assert_canon("\t7\t-\t9\t", "7-9");
    assert_canon("5-5", "5");
    assert_canon("3,1,2", "1-3");
    assert_canon("10-20,15-25", "10-25");
    assert_canon("1,1,1", "1");
}

static void test_members(void **state)
{
    struct exitcode_set set;
    struct exitcodes_error err;

    assert_int_equal(exitcodes_parse("199,200-204,230", &set, &err), 0);
    assert_int_equal(exitcodes_count(&set), 7);
    assert_false(exitcodes_has(&set, 198));
    for (int c = 199; c <= 204; c++)
        assert_true(exitcodes_has(&set, c));
    assert_false(exitcodes_has(&set, 205));
    assert_true(exitcodes_has(&set, 230));
    assert_false(exitcodes_has(&set, 0));
    assert_false(exitcodes_has(&set, 256));
    assert_false(exitcodes_has(&set, -1));
}

static void test_boundaries(void **state)
{
    assert_canon("1", "1");
    assert_canon("255", "255");
    assert_canon("1-255", "1-255");
    assert_canon("254-255", "254-255");
    assert_error("0", 0, "0 is out of range 1-255");
    assert_error("256", 0, "256 is out of range 1-255");
    assert_error("1,256", 2, "256 is out of range 1-255");
    assert_error("0-5", 0, "0 is out of range 1-255");
    assert_error("250-256", 4, "256 is out of range 1-255");
    assert_error("1000", 0, "1000 is out of range 1-255");
}

static void test_invalid_examples(void **state)
{
    assert_error("205-200", 0, "range 205-200 is reversed");
    assert_error("1, 205-200", 3, "range 205-200 is reversed");
    assert_error("1,,2", 2, "empty item");
    assert_error("1-", 2, "expected a number");
    assert_error("-1", 0, "expected a number");
    assert_error("a", 0, "expected a number");
    assert_error("", 0, "empty list");
    assert_error("   ", 0, "empty list");
    assert_error("1,", 2, "empty item");
    assert_error(",1", 0, "empty item");
    assert_error("+1", 0, "expected a number");
    assert_error("1-2-3", 3, "expected \",\" between items");
    assert_error("007", 0, "leading zero");
    assert_error("1,01", 2, "leading zero");
    assert_error("00", 0, "leading zero");
    assert_error("1 2", 2, "expected \",\" between items");
    assert_error("1a", 1, "expected \",\" between items");
    assert_error("1-a", 2, "expected a number");
    assert_error("1 - ,2", 4, "expected a number");
    assert_error("1, ,2", 3, "empty item");
    assert_error("1,  ", 4, "empty item");
    assert_error("1.5", 1, "expected \",\" between items");
    assert_error("1\n", 1, "expected \",\" between items");
    assert_error("\xe4\xb8\x80", 0, "expected a number");
}

static void test_no_overflow(void **state)
{
    assert_error("99999999999999999999", 0, "99999999999999999999 is out of range 1-255");
    assert_error("1-99999999999999999999", 2, "99999999999999999999 is out of range 1-255");
    assert_error("18446744073709551617", 0, "18446744073709551617 is out of range 1-255");

    /* A long digit run is cut in the message, which stays a full sentence. */
    char digits[201];
    memset(digits, '9', 200);
    digits[200] = '\0';
    struct exitcode_set set;
    struct exitcodes_error err;
    assert_int_equal(exitcodes_parse(digits, &set, &err), -1);
    assert_int_equal(err.offset, 0);
    assert_non_null(strstr(err.message, "... is out of range 1-255"));
}

/* Builds a string of exactly len characters: a valid list padded with blanks. */
static void padded(char *buf, size_t len, const char *list)
{
    size_t n = strlen(list);
    memcpy(buf, list, n);
    memset(buf + n, ' ', len - n);
    buf[len] = '\0';
}

static void test_length_limit(void **state)
{
    char buf[EXITCODES_MAX_LEN + 2];
    struct exitcode_set set;
    struct exitcodes_error err;
    const char *list = "1,2,3,100-200,255";

    padded(buf, EXITCODES_MAX_LEN, list);
    assert_int_equal(strlen(buf), 1024);
    assert_int_equal(exitcodes_parse(buf, &set, &err), 0);
    assert_int_equal(exitcodes_count(&set), 3 + 101 + 1);

    padded(buf, EXITCODES_MAX_LEN + 1, list);
    assert_int_equal(strlen(buf), 1025);
    assert_error(buf, 1024, "list longer than 1024 characters");

    /* Real content all the way: "1,1,1,…" of 1023 and 1025 characters. */
    for (size_t i = 0; i < EXITCODES_MAX_LEN; i++)
        buf[i] = i % 2 ? ',' : '1';
    buf[1023] = '\0';
    assert_int_equal(exitcodes_parse(buf, &set, &err), 0);
    assert_int_equal(exitcodes_count(&set), 1);
    buf[1023] = ',';
    buf[1024] = '1';
    buf[1025] = '\0';
    assert_int_equal(strlen(buf), 1025);
    assert_error(buf, 1024, "list longer than 1024 characters");
}

static void assert_round_trip(const struct exitcode_set *set, const char *want)
{
    struct strbuf sb = STRBUF_INIT;
    struct exitcode_set back;
    struct exitcodes_error err;

    exitcodes_format(set, &sb);
    assert_string_equal(strbuf_str(&sb), want);
    if (!exitcodes_empty(set)) {
        assert_int_equal(exitcodes_parse(strbuf_str(&sb), &back, &err), 0);
        assert_memory_equal(&back, set, sizeof back);
    }
    strbuf_free(&sb);
}

static void test_format(void **state)
{
    struct exitcode_set set;

    exitcodes_clear(&set);
    assert_round_trip(&set, "");
    assert_true(exitcodes_empty(&set));

    exitcodes_all(&set);
    assert_int_equal(exitcodes_count(&set), 255);
    assert_false(exitcodes_has(&set, 0));
    assert_round_trip(&set, "1-255");

    exitcodes_clear(&set);
    exitcodes_add(&set, 1);
    exitcodes_add(&set, 2);
    assert_round_trip(&set, "1-2");
    exitcodes_add(&set, 3);
    exitcodes_add(&set, 7);
    assert_round_trip(&set, "1-3,7");

    exitcodes_clear(&set);
    for (int c = 1; c <= 255; c += 2)
        exitcodes_add(&set, c);
    assert_int_equal(exitcodes_count(&set), 128);
    struct strbuf sb = STRBUF_INIT;
    exitcodes_format(&set, &sb);
    assert_true(sb.len <= EXITCODES_MAX_LEN); /* the worst case still parses */
    strbuf_free(&sb);
    exitcodes_clear(&set);
    for (int c = 2; c <= 254; c += 2)
        exitcodes_add(&set, c);
    exitcodes_add(&set, 255);
    exitcodes_add(&set, 63);
    exitcodes_add(&set, 65);
    {
        struct exitcode_set back;
        struct exitcodes_error err;
        exitcodes_format(&set, &sb);
        assert_int_equal(exitcodes_parse(strbuf_str(&sb), &back, &err), 0);
        assert_memory_equal(&back, &set, sizeof back);
        strbuf_free(&sb);
    }

    /* Word boundaries of the bit set: 63|64 and 127|128. */
    exitcodes_clear(&set);
    exitcodes_add_range(&set, 60, 70);
    exitcodes_add_range(&set, 127, 128);
    exitcodes_add(&set, 192);
    assert_round_trip(&set, "60-70,127-128,192");

    /* Out-of-range adds are ignored, ranges clipped. */
    exitcodes_clear(&set);
    exitcodes_add(&set, 0);
    exitcodes_add(&set, 256);
    exitcodes_add(&set, -3);
    assert_true(exitcodes_empty(&set));
    exitcodes_add_range(&set, -10, 3);
    exitcodes_add_range(&set, 250, 1000);
    assert_round_trip(&set, "1-3,250-255");

    /* format appends */
    strbuf_adds(&sb, "codes: ");
    exitcodes_format(&set, &sb);
    assert_string_equal(strbuf_str(&sb), "codes: 1-3,250-255");
    strbuf_free(&sb);
}

static void test_set_algebra(void **state)
{
    struct exitcode_set a, b, out;
    struct exitcodes_error err;

    assert_int_equal(exitcodes_parse("1-10,100", &a, &err), 0);
    assert_int_equal(exitcodes_parse("5-20,200", &b, &err), 0);
    exitcodes_intersect(&out, &a, &b);
    assert_round_trip(&out, "5-10");
    exitcodes_union(&out, &a, &b);
    assert_round_trip(&out, "1-20,100,200");
    exitcodes_union(&a, &a, &b); /* out may alias an input */
    assert_round_trip(&a, "1-20,100,200");
}

/* Shadowing: each callback recorded as "rule<-earlier:codes[!]". */
struct shadow_log {
    struct strbuf sb;
    int calls;
};

static void record_shadow(void *ctx, size_t rule, size_t earlier,
                          const struct exitcode_set *overlap, bool whole)
{
    struct shadow_log *log = ctx;
    if (log->calls++)
        strbuf_addc(&log->sb, ' ');
    strbuf_addf(&log->sb, "%zu<-%zu:", rule, earlier);
    exitcodes_format(overlap, &log->sb);
    if (whole)
        strbuf_addc(&log->sb, '!');
}

/* Runs the shadowing check over rules written in the grammar ("*" = all). */
static void assert_shadowing(const char *const *rules, size_t n, const char *want)
{
    struct exitcode_set sets[8];
    struct exitcodes_error err;
    struct shadow_log log = {STRBUF_INIT, 0};

    assert_true(n <= 8);
    for (size_t i = 0; i < n; i++) {
        if (strcmp(rules[i], "*") == 0)
            exitcodes_all(&sets[i]);
        else
            assert_int_equal(exitcodes_parse(rules[i], &sets[i], &err), 0);
    }
    exitcodes_shadowing(sets, n, record_shadow, &log);
    assert_string_equal(strbuf_str(&log.sb), want);
    strbuf_free(&log.sb);
}

static void test_shadowing(void **state)
{
    /* no overlap: no callback */
    const char *disjoint[] = {"1-10", "11-20", "200"};
    assert_shadowing(disjoint, 3, "");

    /* partial overlap reports the overlap, not whole */
    const char *partial[] = {"1-10", "5-20"};
    assert_shadowing(partial, 2, "1<-0:5-10");

    /* a later rule entirely covered by one earlier rule */
    const char *covered[] = {"1-100", "50-60"};
    assert_shadowing(covered, 2, "1<-0:50-60!");

    /* covered by two earlier rules together: whole on every call */
    const char *split[] = {"1-5", "6-10", "3-8"};
    assert_shadowing(split, 3, "2<-0:3-5! 2<-1:6-8!");

    /* attribution to the first covering rule: rule 1 also holds 5-6, but
     * rule 0 catches them first, so rule 1 is charged only with 7 */
    const char *first[] = {"1-6", "5-7", "5-7"};
    assert_shadowing(first, 3, "1<-0:5-6 2<-0:5-6! 2<-1:7!");

    /* an earlier catch-all shadows everything after it */
    const char *all_first[] = {"*", "137", "1-255"};
    assert_shadowing(all_first, 3, "1<-0:137! 2<-0:1-255!");

    /* a catch-all last is only partly shadowed */
    const char *all_last[] = {"137", "*"};
    assert_shadowing(all_last, 2, "1<-0:137");

    /* an earlier rule overlapping only codes already caught: no call for it */
    const char *dup[] = {"1-10", "2-3", "2-3,50"};
    assert_shadowing(dup, 3, "1<-0:2-3! 2<-0:2-3");

    /* zero or one rule: nothing to report */
    assert_shadowing(disjoint, 0, "");
    assert_shadowing(disjoint, 1, "");
}

/* What a worker's exit code means: the shell's codes and 128 + a Linux signal. */
static void test_meanings(void **state)
{
    assert_null(exitcode_meaning(0));
    assert_string_equal(exitcode_meaning(1), "general error");
    assert_string_equal(exitcode_meaning(2), "misuse of shell builtin");
    assert_null(exitcode_meaning(3));
    assert_string_equal(exitcode_meaning(126), "command not executable");
    assert_string_equal(exitcode_meaning(127), "command not found");
    assert_null(exitcode_meaning(128));
    assert_string_equal(exitcode_meaning(129), "killed by signal 1 (SIGHUP)");
    assert_string_equal(exitcode_meaning(134), "aborted (SIGABRT)");
    assert_string_equal(exitcode_meaning(137), "killed (SIGKILL/OOM)");
    assert_string_equal(exitcode_meaning(139), "segfault (SIGSEGV)");
    assert_string_equal(exitcode_meaning(143), "terminated (SIGTERM)");
    assert_string_equal(exitcode_meaning(159), "killed by signal 31 (SIGSYS)");
    assert_null(exitcode_meaning(160));
    assert_null(exitcode_meaning(201));
    assert_null(exitcode_meaning(255));
    assert_null(exitcode_meaning(-1));
    assert_null(exitcode_meaning(100000));
    for (int code = 129; code <= 159; code++)
        assert_non_null(strstr(exitcode_meaning(code), "(SIG"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid_examples), cmocka_unit_test(test_members),
        cmocka_unit_test(test_boundaries),     cmocka_unit_test(test_invalid_examples),
        cmocka_unit_test(test_no_overflow),    cmocka_unit_test(test_length_limit),
        cmocka_unit_test(test_format),         cmocka_unit_test(test_set_algebra),
        cmocka_unit_test(test_shadowing),      cmocka_unit_test(test_meanings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
