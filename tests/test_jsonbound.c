/*
 * test_jsonbound: the bounded JSON loader and its tokenizer (api/jsonbound)
 * — where values end through strings, escapes and nesting, the spans of a
 * member and of array elements, a member compared without decoding, a
 * reply refused for the memory it would take, before any of it is decoded,
 * and a reply read in pieces (a stream) giving what reading it whole gives,
 * however it is cut.
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

/* ---- a reply read in pieces ------------------------------------------------- */

/* Elements and the other members read whole (the spans above), the way a stream must give them. */
static void read_whole(const char *t, struct strbuf *elems, char **rest)
{
    size_t s, e;
    assert_true(jsonbound_member(t, strlen(t), "jobs", &s, &e));
    assert_int_equal(jsonbound_elements(t, s, e, collect, elems), 0);
    json_t *j = json_loads(t, 0, NULL);
    assert_non_null(j);
    json_object_del(j, "jobs");
    *rest = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(j);
}

/* Set by a test: read_cut's stream reads the objects whole in a piece in place (walk_object). */
static bool walking;
static size_t walked;

/* A walk_fn: an object whole in the piece (as jsonbound_skip finds its end) collected in place. */
static size_t walk_object(void *ctx, const char *data, size_t len)
{
    size_t end = 0;
    if (len == 0 || data[0] != '{' || jsonbound_skip(data, len, &end, NULL) != 0)
        return 0;
    walked++;
    collect(ctx, data, end);
    return end;
}

/*
 * t fed in the pieces that cut it at cuts[0..n) (ascending): 0 and the
 * elements and other members, or the stream's failure (-1) with why.
 */
static int read_cut(const char *t, const size_t *cuts, size_t n, size_t max_element,
                    struct strbuf *elems, char **rest, struct strbuf *why)
{
    struct jsonbound_stream *js = jsonbound_stream_new("jobs", max_element, 1024, collect, elems);
    if (walking)
        jsonbound_stream_set_walk(js, walk_object);
    size_t len = strlen(t), at = 0;
    for (size_t i = 0; i <= n; i++) {
        size_t to = i < n ? cuts[i] : len;
        /* Each piece in a buffer of its own size: ASan sees a read past it. */
        char *piece = xmalloc(to - at + 1);
        memcpy(piece, t + at, to - at);
        jsonbound_stream_feed(js, piece, to - at);
        free(piece);
        at = to;
    }
    bool had;
    json_t *j = jsonbound_stream_end(js, &had, why);
    jsonbound_stream_free(js);
    if (j == NULL)
        return -1;
    assert_true(had);
    *rest = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(j);
    return 0;
}

/* Brackets and quotes in strings, escapes (a quote, a backslash, \u), nesting, scalars. */
static const char *const tricky =
    " {\"meta\": {\"plugin\": {\"type\": \"openapi/v0.0.38\", \"jobs\": [9]}}, "
    "\"errors\" : [] ,\"warnings\":[{\"description\": \"a ]}\\\"[{\\\\\"}], "
    "\"x\\\"jobs\": -12.5e3, \"jobs\": [ {\"user_name\": \"al\\u0069ce\", \"c\": \"}]\\\\\"},"
    "{\"user_name\":\"bob\",\"a\":[[],{},[{\"b\":\"\\\"\"}]]} , \"s,]\\\"\" ,[1,2],3 ,true,null,"
    "-0.5E-2 ] ,\"last_update\": 1700000000, \"t\": true }\n";

static void a_stream_cut_anywhere_reads_as_the_whole(void **state)
{
    (void)state;
    struct strbuf want = STRBUF_INIT;
    char *want_rest = NULL;
    read_whole(tricky, &want, &want_rest);
    assert_non_null(strstr(want_rest, "last_update")); /* the other members are kept */
    assert_null(strstr(want_rest, "bob"));
    size_t len = strlen(tricky);
    struct strbuf why = STRBUF_INIT;
    /* Pieces of every size from 1 to the whole. */
    for (size_t size = 1; size <= len; size++) {
        size_t cuts[512], n = 0;
        for (size_t at = size; at < len; at += size)
            cuts[n++] = at;
        struct strbuf got = STRBUF_INIT;
        char *rest = NULL;
        assert_int_equal(read_cut(tricky, cuts, n, 1 << 20, &got, &rest, &why), 0);
        assert_string_equal(strbuf_str(&got), strbuf_str(&want));
        assert_string_equal(rest, want_rest);
        free(rest);
        strbuf_free(&got);
    }
    /* Every single cut and every pair of cuts: inside strings, escapes, between elements. */
    for (size_t a = 0; a <= len; a++)
        for (size_t b = a; b <= len; b += (a % 7) + 1) {
            size_t cuts[2] = {a, b};
            struct strbuf got = STRBUF_INIT;
            char *rest = NULL;
            assert_int_equal(read_cut(tricky, cuts, 2, 1 << 20, &got, &rest, &why), 0);
            assert_string_equal(strbuf_str(&got), strbuf_str(&want));
            assert_string_equal(rest, want_rest);
            free(rest);
            strbuf_free(&got);
        }
    /* Random cuts, many at a time (a fixed seed: the same cuts every run). */
    unsigned seed = 20;
    for (int round = 0; round < 2000; round++) {
        size_t cuts[64], n = 0, at = 0;
        while (n < 64) {
            seed = seed * 1103515245u + 12345u;
            at += (seed >> 16) % 9;
            if (at > len)
                break;
            cuts[n++] = at;
        }
        struct strbuf got = STRBUF_INIT;
        char *rest = NULL;
        assert_int_equal(read_cut(tricky, cuts, n, 1 << 20, &got, &rest, &why), 0);
        assert_string_equal(strbuf_str(&got), strbuf_str(&want));
        assert_string_equal(rest, want_rest);
        free(rest);
        strbuf_free(&got);
    }
    free(want_rest);
    strbuf_free(&want);
    strbuf_free(&why);
}

/*
 * Elements whole in a piece read in place by a walk function give what the
 * stream gathering them gives, cut anywhere; an element cut by a piece's
 * end, or one the walk does not read (a scalar), is gathered and handed to
 * fn; one over max_element is read by neither.
 */
static void a_stream_walks_whole_elements_in_place(void **state)
{
    (void)state;
    struct strbuf want = STRBUF_INIT, why = STRBUF_INIT;
    char *want_rest = NULL;
    read_whole(tricky, &want, &want_rest);
    size_t len = strlen(tricky);
    walking = true;
    for (size_t a = 0; a <= len; a++) {
        size_t cuts[1] = {a};
        struct strbuf got = STRBUF_INIT;
        char *rest = NULL;
        walked = 0;
        assert_int_equal(read_cut(tricky, cuts, 1, 1 << 20, &got, &rest, &why), 0);
        assert_string_equal(strbuf_str(&got), strbuf_str(&want));
        assert_string_equal(rest, want_rest);
        assert_true(walked <= 2);
        if (a == 0 || a == len)
            assert_int_equal(walked, 2); /* alice's and bob's objects; the rest gathered */
        free(rest);
        strbuf_free(&got);
    }
    /* Over max_element (40 bytes: bob's object is 41): neither walked nor handed over. */
    struct strbuf small = STRBUF_INIT, small_walked = STRBUF_INIT;
    char *r1 = NULL, *r2 = NULL;
    walking = false;
    assert_int_equal(read_cut(tricky, NULL, 0, 40, &small, &r1, &why), 0);
    walking = true;
    walked = 0;
    assert_int_equal(read_cut(tricky, NULL, 0, 40, &small_walked, &r2, &why), 0);
    assert_int_equal(walked, 1);
    assert_string_equal(strbuf_str(&small_walked), strbuf_str(&small));
    assert_null(strstr(strbuf_str(&small), "bob"));
    walking = false;
    free(r1);
    free(r2);
    strbuf_free(&small);
    strbuf_free(&small_walked);
    free(want_rest);
    strbuf_free(&want);
    strbuf_free(&why);
}

static void a_stream_fails_saying_why_and_skips_an_element_too_long(void **state)
{
    (void)state;
    struct strbuf got = STRBUF_INIT, why = STRBUF_INIT;
    char *rest = NULL;
    /* Cut short, anywhere: never a result. */
    size_t len = strlen(tricky);
    for (size_t end = 0; end + 2 < len; end++) {
        char *t = xstrndup(tricky, end);
        strbuf_reset(&why);
        assert_int_equal(read_cut(t, NULL, 0, 1 << 20, &got, &rest, &why), -1);
        assert_true(why.len > 0);
        free(t);
    }
    static const struct {
        const char *text, *why;
    } bad[] = {
        {"[1]", "not a JSON object"},
        {"{\"jobs\": {}}", "\"jobs\" is not one array"},
        {"{\"jobs\": [], \"jobs\": []}", "\"jobs\" is not one array"},
        {"{\"jobs\": [[1}]}", "brackets that do not match"},
        {"{\"jobs\": [1 2]}", "',' or ']' expected"},
        {"{\"a\" 1}", "':' expected"},
        {"{\"jobs\": []} x", "text after its end"},
        {"{\"meta\": \"", "ends before its object does"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        strbuf_reset(&why);
        assert_int_equal(read_cut(bad[i].text, NULL, 0, 1 << 20, &got, &rest, &why), -1);
        if (strstr(strbuf_str(&why), bad[i].why) == NULL)
            fail_msg("%s: said '%s'", bad[i].text, strbuf_str(&why));
    }
    /* The other members over their bound (1 KiB here) fail the stream. */
    struct strbuf big = STRBUF_INIT;
    strbuf_adds(&big, "{\"jobs\": [], \"meta\": \"");
    for (int i = 0; i < 2000; i++)
        strbuf_addc(&big, 'm');
    strbuf_adds(&big, "\"}");
    strbuf_reset(&why);
    assert_int_equal(read_cut(strbuf_str(&big), NULL, 0, 1 << 20, &got, &rest, &why), -1);
    assert_non_null(strstr(strbuf_str(&why), "over the bound of 1 KiB"));
    /* An element over max_element is read past, not held: the others still come. */
    strbuf_reset(&big);
    strbuf_adds(&big, "{\"jobs\": [1, \"");
    for (int i = 0; i < 5000; i++)
        strbuf_adds(&big, "]\\\"");
    strbuf_adds(&big, "\", {\"a\": 2}]}");
    size_t cuts[] = {5, 17, 100, 4000, 9000};
    strbuf_reset(&got);
    assert_int_equal(read_cut(strbuf_str(&big), cuts, 5, 64, &got, &rest, &why), 0);
    assert_string_equal(strbuf_str(&got), "1|{\"a\": 2}|");
    assert_string_equal(rest, "{}");
    free(rest);
    strbuf_free(&big);
    strbuf_free(&got);
    strbuf_free(&why);
}

/* Blanks between tokens go; those in strings (escaped quotes and backslashes too) stay. */
static void compact_text_keeps_strings_whole(void **state)
{
    (void)state;
    const char *t = "{ \"a b\" :\n [ 1 ,\t2 ],\r\n \"q\\\" x\\\\\" : \" \\\\\" }  ";
    struct strbuf out = STRBUF_INIT;
    jsonbound_add_compact(&out, t, strlen(t));
    assert_string_equal(strbuf_str(&out), "{\"a b\":[1,2],\"q\\\" x\\\\\":\" \\\\\"}");
    json_t *a = json_loads(t, 0, NULL), *b = json_loads(strbuf_str(&out), 0, NULL);
    assert_non_null(a);
    assert_true(json_equal(a, b));
    json_decref(a);
    json_decref(b);
    strbuf_reset(&out);
    const char *cut = "\"ends in \\"; /* a string cut after a backslash */
    jsonbound_add_compact(&out, cut, strlen(cut));
    assert_string_equal(strbuf_str(&out), "\"ends in \\");
    strbuf_free(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(values_end_where_json_says),
        cmocka_unit_test(members_and_elements_are_found_by_span),
        cmocka_unit_test(a_reply_over_the_bound_is_refused_before_decoding),
        cmocka_unit_test(a_stream_cut_anywhere_reads_as_the_whole),
        cmocka_unit_test(a_stream_walks_whole_elements_in_place),
        cmocka_unit_test(a_stream_fails_saying_why_and_skips_an_element_too_long),
        cmocka_unit_test(compact_text_keeps_strings_whole),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
