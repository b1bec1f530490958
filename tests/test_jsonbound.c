/*
 * test_jsonbound: the bounded JSON loader and its tokenizer (api/jsonbound)
 * — where values end through strings, escapes and nesting, the spans of a
 * member and of array elements, a member compared without decoding, and a
 * reply refused for the memory it would take, before any of it is decoded.
 */
// clang-format off
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
// clang-format on

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "api/jsonbound.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

static size_t end_of(const char *text)
{
    size_t p = 0;
    if (jsonbound_skip(text, strlen(text), &p, NULL) != 0)
        return (size_t)-1;
    return p;
}

static void values_end_where_json_says(void **state)
{
    (void)state;
    assert_int_equal(end_of("  12 , 3"), 4);
    assert_int_equal(end_of("\"a]}\\\"\" x"), 7); /* brackets and a quote inside a string */
    assert_int_equal(end_of("{\"a\": [1, {\"b\": \"}\"}], \"c\": null} tail"), 33);
    assert_int_equal(end_of("[[[]]]]"), 6);
    assert_int_equal(end_of("[1, 2"), (size_t)-1);   /* cut short */
    assert_int_equal(end_of("[1, 2}"), (size_t)-1);  /* brackets that do not match */
    assert_int_equal(end_of("\"open"), (size_t)-1);  /* a string never closed */
    assert_int_equal(end_of("\"a\\\""), (size_t)-1); /* its last quote escaped */
    assert_int_equal(end_of("}"), (size_t)-1);
    char deep[5000];
    memset(deep, '[', sizeof deep);
    assert_int_equal(jsonbound_skip(deep, sizeof deep, &(size_t){0}, NULL), -1);

    struct jsonbound_count c = {0, 0, 0};
    size_t p = 0;
    const char *t = "{\"ab\": [1, \"xyz\", true], \"c\": {}}";
    assert_int_equal(jsonbound_skip(t, strlen(t), &p, &c), 0);
    assert_int_equal(c.values, 6); /* {, [, 1, "xyz", true, {} — keys are members */
    assert_int_equal(c.members, 2);
    assert_int_equal(c.text, 2 + 3 + 1);
}

static int collect(void *ctx, const char *elem, size_t len)
{
    struct strbuf *sb = ctx;
    strbuf_add(sb, elem, len);
    strbuf_addc(sb, '|');
    return 0;
}

static void members_and_elements_are_found_by_span(void **state)
{
    (void)state;
    const char *t =
        "{\"meta\": {\"jobs\": 1}, \"x\\\"jobs\": 2, \"jobs\": [ {\"user_name\": \"a\"}, "
        "\"s,]\" , [1,2] ,3 ], \"errors\": []}";
    size_t s, e;
    assert_true(jsonbound_member(t, strlen(t), "jobs", &s, &e));
    assert_int_equal(t[s], '[');
    struct strbuf sb = STRBUF_INIT;
    assert_int_equal(jsonbound_elements(t, s, e, collect, &sb), 0);
    assert_string_equal(strbuf_str(&sb), "{\"user_name\": \"a\"}|\"s,]\"|[1,2]|3|");
    assert_true(jsonbound_member(t, strlen(t), "errors", &s, &e));
    assert_int_equal(e - s, 2);
    assert_false(jsonbound_member(t, strlen(t), "nope", &s, &e));
    assert_false(jsonbound_member("[1]", 3, "jobs", &s, &e));
    strbuf_reset(&sb);
    assert_int_equal(jsonbound_elements("[1, 2", 0, 5, collect, &sb), -1);
    assert_int_equal(jsonbound_elements(" []", 0, 3, collect, &sb), 0);
    strbuf_free(&sb);

    const char *job =
        "{\"name\": \"x\", \"user_name\": \"al\\u0069ce\", \"other\": {\"user_name\": "
        "\"bob\"}}";
    assert_true(jsonbound_member_is(job, strlen(job), "user_name", "alice")); /* escaped */
    assert_false(jsonbound_member_is(job, strlen(job), "user_name", "bob"));  /* not nested ones */
    assert_false(jsonbound_member_is(job, strlen(job), "user_name", "alic"));
    const char *plain = "{\"user_name\": \"bob\"}";
    assert_true(jsonbound_member_is(plain, strlen(plain), "user_name", "bob"));
    assert_false(jsonbound_member_is("{\"user_name\": 7}", 16, "user_name", "7"));
}

/* n zeros in an array: "[0,0,…]", about 2n bytes and n values. */
static char *zeros(size_t n, size_t *len)
{
    char *t = xmalloc(2 * n + 2);
    t[0] = '[';
    for (size_t i = 0; i < n; i++) {
        t[1 + 2 * i] = '0';
        t[2 + 2 * i] = ',';
    }
    t[2 * n] = ']';
    t[2 * n + 1] = '\0';
    *len = 2 * n + 1;
    return t;
}

static void a_reply_over_the_bound_is_refused_before_decoding(void **state)
{
    (void)state;
    struct strbuf why = STRBUF_INIT;
    json_t *j = jsonbound_loadb("{\"a\": [1, 2]}", 13, 0, &why);
    assert_non_null(j);
    json_decref(j);
    assert_null(jsonbound_loadb("{\"a\": ", 6, 0, &why));
    assert_non_null(strstr(strbuf_str(&why), "not JSON"));
    strbuf_reset(&why);

    size_t len;
    char *t = zeros(100000, &len);
    assert_null(jsonbound_loadb(t, len, 1 << 20, &why)); /* 100,000 values: about 6 MiB */
    assert_string_equal(strbuf_str(&why),
                        "reply of 100001 values would take about 7 MiB, over the 1 MiB bound");
    strbuf_reset(&why);
    free(t);

    /*
     * 8 million values (16 MB of text) would take some 512 MiB decoded,
     * over the default bound: refused, and the process grows by about the
     * text alone (jansson would have taken over 500 MiB).
     */
    t = zeros(8u << 20, &len);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct rusage before, after;
        getrusage(RUSAGE_SELF, &before);
        struct strbuf w = STRBUF_INIT;
        json_t *big = jsonbound_loadb(t, len, 0, &w);
        getrusage(RUSAGE_SELF, &after);
        bool refused = big == NULL && strstr(strbuf_str(&w), "over the 256 MiB bound");
        long grew_kib = after.ru_maxrss - before.ru_maxrss;
        _exit(!refused ? 1 : grew_kib > 32 * 1024 ? 2 : 0);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    free(t);
    strbuf_free(&why);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(values_end_where_json_says),
        cmocka_unit_test(members_and_elements_are_found_by_span),
        cmocka_unit_test(a_reply_over_the_bound_is_refused_before_decoding),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
