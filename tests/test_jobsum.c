/*
 * test_jobsum: trainjobd's summaries read straight into rows (api/jobsum).
 * Whatever jobspec_summary_write makes — random jobs, hostile names — reads
 * back equal to what the jansson decoder makes of the same text; a watch
 * line is taken only when it is a summary's JOB line; and hostile replies
 * (too deep, too long, not UTF-8, lone surrogates, NUL, wrong types, numbers
 * that do not fit, text after the end) are refused naming the byte and field.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h> /* after the four headers it needs */

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/apierror.h"
#include "api/backend.h"
#include "api/finding.h"
#include "api/jobspec.h"
#include "api/jobspec_json.h"
#include "api/jobsum.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

static unsigned seed = 12345;

static unsigned rnd(unsigned n)
{
    seed = seed * 1103515245u + 12345u;
    return (seed >> 16) % n;
}

/* A name that is sometimes plain, sometimes full of what JSON must escape. */
static char *rnd_text(void)
{
    static const char *const parts[] = {"job", "-",    "é",    "\"", "\\", "/",    "\n",
                                        "\t",  "\x01", "日本", "😀",  " ",  "\x7f", "x"};
    struct strbuf sb = STRBUF_INIT;
    unsigned n = 1 + rnd(8);
    for (unsigned i = 0; i < n; i++)
        strbuf_adds(&sb, parts[rnd(sizeof parts / sizeof *parts)]);
    return strbuf_detach(&sb, NULL);
}

static void rnd_job(struct jobspec *j, int i)
{
    jobspec_init(j);
    j->name = xasprintf("pt-%d", i);
    if (rnd(2))
        j->display_name = rnd_text();
    j->uid = xasprintf("uid-%d", i);
    j->framework = (enum framework)rnd((unsigned)framework_names.count);
    if (rnd(3)) {
        j->resource_pool.present = true;
        j->resource_pool.name = rnd_text();
    }
    j->scheduling.present = true;
    j->scheduling.priority = (enum priority)rnd((unsigned)priority_names.count);
    if (rnd(2))
        j->scheduling.quota_type = QUOTA_TYPE_SPOT;
    if (rnd(4)) {
        struct role *r = jobspec_add_role(j);
        r->name = xstrdup(JOBSPEC_ROLE_NAME);
        if (rnd(2)) {
            r->has_total_replicas = true;
            r->total_replicas = (int32_t)rnd(100);
        }
        unsigned specs = rnd(3);
        for (unsigned k = 0; k < specs; k++) {
            struct resource_spec_ref *s = role_add_spec(r);
            s->name = rnd_text();
            if (rnd(2)) {
                s->has_replicas = true;
                s->replicas = (int32_t)rnd(8);
            }
            if (k == 0 && rnd(2))
                s->description = xstrdup("1xA100-80GB");
        }
    }
    if (rnd(2)) {
        j->fault_tolerance.present = true;
        j->fault_tolerance.has_backoff_limit = true;
        j->fault_tolerance.backoff_limit = (int32_t)rnd(100) - 1;
    }
    j->state = (enum job_state)rnd((unsigned)job_state_names.count);
    if (rnd(2))
        j->state_message = rnd_text();
    if (rnd(2)) {
        j->has_restart_count = true;
        j->restart_count = (int32_t)rnd(5);
    }
    if (rnd(2)) {
        j->has_ready_workers = true;
        j->ready_workers = (int32_t)rnd(5);
    }
    if (rnd(2)) {
        j->has_faulty_workers = true;
        j->faulty_workers = 1 + (int32_t)rnd(5);
    }
    j->create_time = xstrdup("2026-11-29T10:00:00Z");
}

/* The jansson decoder's reading of one summary text (the reference). */
static void reference(const char *text, struct jobspec *out)
{
    json_t *j = json_loads(text, 0, NULL);
    assert_non_null(j);
    struct findings fs = FINDINGS_INIT;
    jobspec_init(out);
    jobspec_from_json(j, JOBSPEC_LENIENT, out, &fs);
    findings_free(&fs);
    json_decref(j);
}

/* Random summaries read the same by jobsum (as a page and as watch lines) as by jansson. */
static void test_same_as_jansson(void **state)
{
    (void)state;
    enum { N = 400 };
    struct strbuf page = STRBUF_INIT;
    char *texts[N];
    strbuf_adds(&page, "{\"training_jobs\":[");
    for (int i = 0; i < N; i++) {
        struct jobspec j;
        rnd_job(&j, i);
        struct strbuf one = STRBUF_INIT;
        jobspec_summary_write(&j, &one);
        texts[i] = strbuf_detach(&one, NULL);
        strbuf_addf(&page, "%s%s", i ? "," : "", texts[i]);
        jobspec_free(&j);
    }
    strbuf_adds(&page, "],\"next_page_token\":\"k400-9000\",\"total_size\":9000}");
    struct job_list l;
    struct api_error err = {0};
    assert_int_equal(jobsum_page(page.buf, page.len, &l, &err), 0);
    assert_int_equal(l.count, N);
    assert_string_equal(l.next_page_token, "k400-9000");
    assert_int_equal(l.total_size, 9000);
    for (int i = 0; i < N; i++) {
        struct jobspec want;
        reference(texts[i], &want);
        if (!jobspec_equal(&want, &l.jobs[i]))
            fail_msg("summary %d read differently: %s", i, texts[i]);
        char *line = xasprintf("{\"type\":\"JOB\",\"job\":%s}", texts[i]);
        struct jobspec got;
        assert_int_equal(jobsum_watch_line(line, strlen(line), &got, &err), 1);
        assert_true(jobspec_equal(&want, &got));
        jobspec_free(&got);
        jobspec_free(&want);
        free(line);
        free(texts[i]);
    }
    job_list_free(&l);
    strbuf_free(&page);
}

/* Escapes decode to UTF-8; nulls and unknown fields (of any shape) are skipped. */
static void test_escapes_and_unknown(void **state)
{
    (void)state;
    const char *text =
        "{\"training_jobs\":[{\"future\":{\"a\":[1,-2.5e3,true,false,null,{\"b\":\"\\u00e9\"}]},"
        "\"name\":\"a\\u00e9\\ud83d\\ude00\\n\\t\\\"\\\\\\/\",\"display_name\":null,"
        "\"state\":\"NO_SUCH_STATE\",\"scheduling\":{\"priority\":\"HIGH\",\"x\":[]},"
        "\"name\":\"second\"}],\"more\":\"\"}";
    struct job_list l;
    struct api_error err = {0};
    assert_int_equal(jobsum_page(text, strlen(text), &l, &err), 0);
    assert_int_equal(l.count, 1);
    assert_string_equal(l.jobs[0].name, "second"); /* a repeated key: the last wins */
    assert_null(l.jobs[0].display_name);
    assert_int_equal(l.jobs[0].state, JOB_STATE_UNSPECIFIED);
    assert_string_equal(l.jobs[0].state_other, "NO_SUCH_STATE"); /* the server's word, kept */
    assert_int_equal(l.jobs[0].scheduling.priority, PRIORITY_HIGH);
    assert_null(l.jobs[0].scheduling.priority_other);
    assert_null(l.next_page_token);
    assert_int_equal(l.total_size, 1);
    job_list_free(&l);

    const char *esc =
        "{\"training_jobs\":[{\"name\":\"a\\u00e9\\ud83d\\ude00\\n\\t\\\"\\\\\\/\"}]}";
    assert_int_equal(jobsum_page(esc, strlen(esc), &l, &err), 0);
    assert_string_equal(l.jobs[0].name, "a\xc3\xa9\xf0\x9f\x98\x80\n\t\"\\/");
    job_list_free(&l);
}

/*
 * Values of a newer server (a state, priority, quota type, framework this
 * build does not know) are kept as the server said them, as jansson's
 * reader keeps them, escapes and all; a known value later in the text
 * drops the kept word.
 */
static void test_unknown_values_kept(void **state)
{
    (void)state;
    static const char *const jobs[] = {
        "{\"name\":\"a\",\"state\":\"PREEMPTED\",\"framework\":\"JAX\","
        "\"scheduling\":{\"priority\":\"URGENT\",\"quota_type\":\"ON_DEMAND\"}}",
        "{\"name\":\"b\",\"state\":\"PRE\\u001b[31mEMPTED\\u00e9\",\"scheduling\":{\"priority\":"
        "\"\"}}",
        "{\"name\":\"c\",\"state\":\"PREEMPTED\",\"state\":\"RUNNING\"}",
    };
    for (size_t i = 0; i < sizeof jobs / sizeof *jobs; i++) {
        char *page = xasprintf("{\"training_jobs\":[%s]}", jobs[i]);
        struct job_list l;
        struct api_error err = {0};
        assert_int_equal(jobsum_page(page, strlen(page), &l, &err), 0);
        struct jobspec want;
        reference(jobs[i], &want);
        if (!jobspec_equal(&want, &l.jobs[0]))
            fail_msg("job %zu read differently: %s", i, jobs[i]);
        char *line = xasprintf("{\"type\":\"JOB\",\"job\":%s}", jobs[i]);
        struct jobspec got;
        assert_int_equal(jobsum_watch_line(line, strlen(line), &got, &err), 1);
        assert_true(jobspec_equal(&want, &got));
        if (i == 0) {
            assert_int_equal(got.state, JOB_STATE_UNSPECIFIED);
            assert_string_equal(got.state_other, "PREEMPTED");
            assert_string_equal(got.framework_other, "JAX");
            assert_string_equal(got.scheduling.priority_other, "URGENT");
            assert_string_equal(got.scheduling.quota_type_other, "ON_DEMAND");
        } else if (i == 1) {
            assert_string_equal(got.state_other, "PRE\x1b[31mEMPTED\xc3\xa9");
        } else {
            assert_int_equal(got.state, JOB_STATE_RUNNING);
            assert_null(got.state_other);
        }
        jobspec_free(&got);
        jobspec_free(&want);
        job_list_free(&l);
        free(line);
        free(page);
    }
}

/* Only a summary's JOB line is taken; every other message is left to the general decoder. */
static void test_watch_lines(void **state)
{
    (void)state;
    static const struct {
        const char *line;
        int want;
    } cases[] = {
        {"{\"type\":\"JOB\",\"job\":{\"name\":\"a\",\"state\":\"RUNNING\"}}", 1},
        {"{\"job\":{\"name\":\"a\"},\"type\":\"JOB\"}", 1},
        {"{\"type\":\"JOB\",\"job\":{\"name\":\"a\"},\"workers\":[]}", 0},
        {"{\"type\":\"DELETED\",\"job\":{\"name\":\"a\",\"uid\":\"u\"}}", 0},
        {"{\"type\":\"SYNCED\"}", 0},
        {"{\"type\":\"EVENT\",\"event\":{\"reason\":\"x\"}}", 0},
        {"{\"type\":\"JOB\",\"job\":\"not an object\"}", 0},
        {"{\"type\":\"JOB\"", -1},
        {"[]", -1},
        {"{\"type\":7}", -1},
        {"", -1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        struct jobspec j;
        struct api_error err = {0};
        int got = jobsum_watch_line(cases[i].line, strlen(cases[i].line), &j, &err);
        if (got != cases[i].want)
            fail_msg("'%s': %d, not %d", cases[i].line, got, cases[i].want);
        if (got == 1)
            assert_string_equal(j.name, "a");
        jobspec_free(&j);
    }
}

/* A page of text refused with a message that holds want. */
/* jobsum_members: each key decoded with its value's span as written; the whole object checked. */
static int note_member(void *ctx, const char *key, size_t key_len, const char *value,
                       size_t value_len)
{
    struct strbuf *sb = ctx;
    assert_int_equal(strlen(key), key_len);
    strbuf_addf(sb, "%s=%.*s;", key, (int)value_len, value);
    return 0;
}

static void test_members(void **state)
{
    (void)state;
    struct strbuf sb = STRBUF_INIT;
    struct api_error err = {0};
    const char *text = "{ \"a\\u0062\" : [1, {\"x\": \"}\"}] ,\"n\":-2.5e3,\"s\":\"q\\\"\"}";
    assert_int_equal(jobsum_members(text, strlen(text), note_member, &sb, &err), 0);
    assert_string_equal(strbuf_str(&sb), "ab=[1, {\"x\": \"}\"}];n=-2.5e3;s=\"q\\\"\";");
    static const char *const bad[] = {
        "[1]", "{\"a\":1,}", "{\"a\":[1}", "{\"a\":\"\\x\"}", "{\"a\":1} x", "{\"a\":tru}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        strbuf_reset(&sb);
        memset(&err, 0, sizeof err);
        if (jobsum_members(bad[i], strlen(bad[i]), note_member, &sb, &err) == 0)
            fail_msg("accepted: %s", bad[i]);
        if (strstr(err.message, "at byte") == NULL)
            fail_msg("'%s': the message '%s' names no byte", bad[i], err.message);
    }
    strbuf_free(&sb);
}

/*
 * A string's bytes are read eight at a time until one ends the run (a quote,
 * a backslash, a control) and one at a time at the end of the text: every
 * such byte, a plain one and bytes of UTF-8 (good and bad) at each place
 * of strings 0 to 24 bytes long, ended or cut short, read as jansson reads
 * them — taken with the same bytes or refused. Each text is an exact-size
 * copy, so a read past it shows under ASan.
 */
static void test_string_every_place(void **state)
{
    (void)state;
    static const struct {
        const char *bytes;
        size_t len;
    } odd[] = {
        {"\"", 2},   {"\\\\", 2},     {"\\n", 2},          {"\\u00e9", 6}, {"\x01", 1}, {"\x1f", 1},
        {"\x7f", 1}, {"\xc3\xa9", 2}, {"\xe2\x82\xac", 3}, {"\xff", 1},    {"\xc3", 1}, {"\"", 1},
    };
    for (size_t len = 0; len <= 24; len++)
        for (size_t at = 0; at <= len; at++)
            for (size_t o = 0; o < sizeof odd / sizeof odd[0]; o++)
                for (int ended = 0; ended < 2; ended++) {
                    struct strbuf t = STRBUF_INIT;
                    strbuf_addc(&t, '"');
                    for (size_t i = 0; i < len; i++) {
                        if (i == at)
                            strbuf_add(&t, odd[o].bytes, odd[o].len);
                        strbuf_addc(&t, (char)('a' + i % 26));
                    }
                    if (at == len)
                        strbuf_add(&t, odd[o].bytes, odd[o].len);
                    if (ended)
                        strbuf_addc(&t, '"');
                    char *text = xmalloc(t.len ? t.len : 1); /* no NUL after it */
                    memcpy(text, t.buf, t.len);
                    json_error_t je;
                    json_t *j = json_loadb(text, t.len, JSON_DECODE_ANY, &je);
                    char *got = NULL;
                    bool ok = jobsum_string(text, t.len, &got);
                    if (ok != (j != NULL))
                        fail_msg("'%s': jobsum %s, jansson %s", t.buf, ok ? "took it" : "refused",
                                 j ? "took it" : "refused");
                    if (ok && (json_string_length(j) != strlen(got) ||
                               memcmp(json_string_value(j), got, strlen(got)) != 0))
                        fail_msg("'%s': jobsum read '%s', jansson '%s'", t.buf, got,
                                 json_string_value(j));
                    free(got);
                    json_decref(j);
                    free(text);
                    strbuf_free(&t);
                }
}

static void assert_refused(const char *text, size_t len, const char *want)
{
    struct job_list l;
    struct api_error err = {0};
    if (jobsum_page(text, len, &l, &err) == 0)
        fail_msg("accepted: %.200s", text);
    assert_null(l.jobs);
    if (strstr(err.message, want) == NULL || strstr(err.message, "at byte") == NULL)
        fail_msg("'%.100s': the message '%s' does not say '%s'", text, err.message, want);
}

static void test_hostile(void **state)
{
    (void)state;
    static const struct {
        const char *text, *want;
    } cases[] = {
        {"{\"training_jobs\":[{\"name\":\"a\"},{\"state\":7}]}", "training_jobs[1].state"},
        {"{\"training_jobs\":[{\"restart_count\":\"3\"}]}", "expected an integer"},
        {"{\"training_jobs\":[{\"restart_count\":3000000000}]}", "32-bit"},
        {"{\"training_jobs\":[{\"restart_count\":1.5}]}", "32-bit"},
        {"{\"training_jobs\":[{\"roles\":{}}]}", "training_jobs[0].roles"},
        {"{\"training_jobs\":[{\"roles\":[{\"resource_spec\":[{\"name\":1}]}]}]}",
         "roles.resource_spec"},
        {"{\"training_jobs\":{}}", "expected a list"},
        {"{\"training_jobs\":[7]}", "expected an object"},
        {"{\"total_size\":\"9\"}", "total_size"},
        {"{\"x\":99999999999999999999}", "64 bits"},
        {"{\"x\":1e99999}", "overflows"},
        {"{\"x\":01}", "expected ',' or '}'"},
        {"{\"x\":-}", "expected a value"},
        {"{\"x\":1.}", "digits after"},
        {"{\"x\":tru}", "expected a value"},
        {"{\"x\":\"\\ud800\"}", "high surrogate"},
        {"{\"x\":\"\\udc00\"}", "lone low surrogate"},
        {"{\"x\":\"\\u0000\"}", "NUL"},
        {"{\"x\":\"\\x\"}", "unknown escape"},
        {"{\"x\":\"\\u12g4\"}", "four hex digits"},
        {"{\"x\":\"a\tb\"}", "control character"},
        {"{\"x\":\"\xc3\x28\"}", "not UTF-8"},
        {"{\"x\":\"\xed\xa0\x80\"}", "not UTF-8"},
        {"{\"x\":\"abc", "not ended"},
        {"{\"x\":1} x", "text after the end"},
        {"{\"x\":1,}", "expected a member name"},
        {"{\"x\" 1}", "expected ':'"},
        {"[1]", "as an object"},
        {"", "as an object"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        assert_refused(cases[i].text, strlen(cases[i].text), cases[i].want);

    /* 33 levels of nesting in an unknown field */
    struct strbuf deep = STRBUF_INIT;
    strbuf_adds(&deep, "{\"x\":");
    for (int i = 0; i < JOBSUM_MAX_DEPTH; i++)
        strbuf_addc(&deep, '[');
    for (int i = 0; i < JOBSUM_MAX_DEPTH; i++)
        strbuf_addc(&deep, ']');
    strbuf_addc(&deep, '}');
    assert_refused(deep.buf, deep.len, "deeper than 32");
    /* one level less is fine */
    struct job_list l;
    struct api_error err = {0};
    assert_int_equal(jobsum_page(deep.buf + 5, deep.len - 6, &l, &err), -1); /* an array: no */
    strbuf_reset(&deep);
    strbuf_adds(&deep, "{\"x\":");
    for (int i = 0; i < JOBSUM_MAX_DEPTH - 1; i++)
        strbuf_addc(&deep, '[');
    for (int i = 0; i < JOBSUM_MAX_DEPTH - 1; i++)
        strbuf_addc(&deep, ']');
    strbuf_addc(&deep, '}');
    assert_int_equal(jobsum_page(deep.buf, deep.len, &l, &err), 0);
    job_list_free(&l);
    strbuf_free(&deep);

    /* a string over 64 KiB, plain and as escapes */
    struct strbuf big = STRBUF_INIT;
    strbuf_adds(&big, "{\"training_jobs\":[{\"name\":\"");
    for (unsigned i = 0; i <= JOBSUM_MAX_STRING; i++)
        strbuf_addc(&big, 'a');
    strbuf_adds(&big, "\"}]}");
    assert_refused(big.buf, big.len, "longer than 64 KiB");
    strbuf_reset(&big);
    strbuf_adds(&big, "{\"x\":\"");
    for (unsigned i = 0; i <= JOBSUM_MAX_STRING / 2; i++)
        strbuf_adds(&big, "\\u00e9");
    strbuf_adds(&big, "\"}");
    assert_refused(big.buf, big.len, "longer than 64 KiB");
    strbuf_free(&big);

    /* what a few bytes would make into much memory: bounded lists, no list given twice */
    struct strbuf many = STRBUF_INIT;
    strbuf_adds(&many, "{\"training_jobs\":[{\"roles\":[{}");
    for (int i = 0; i < JOBSUM_MAX_ITEMS; i++)
        strbuf_adds(&many, ",{}");
    strbuf_adds(&many, "]}]}");
    assert_refused(many.buf, many.len, "more than 64 items");
    assert_refused("{\"training_jobs\":[{\"roles\":[{}],\"roles\":[{}]}]}", 47,
                   "roles given twice");
    strbuf_reset(&many);
    strbuf_adds(&many, "{\"training_jobs\":[{}");
    for (int i = 0; i < JOBSUM_MAX_ROWS; i++)
        strbuf_adds(&many, ",{}");
    strbuf_adds(&many, "]}");
    assert_refused(many.buf, many.len, "more than 5000 jobs");
    strbuf_free(&many);

    /* a NUL byte in the reply */
    assert_refused("{\"x\":\"a\0b\"}", 11, "control character");
    assert_refused("{\"x\":1}\0", 8, "text after the end"); /* NUL after the value */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_as_jansson),
        cmocka_unit_test(test_unknown_values_kept),
        cmocka_unit_test(test_escapes_and_unknown),
        cmocka_unit_test(test_watch_lines),
        cmocka_unit_test(test_hostile),
        cmocka_unit_test(test_members),
        cmocka_unit_test(test_string_every_place),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
