/*
 * test_scalarpage: the JSON of trainjobd's scalars reply (api/scalarpage) —
 * NaN and ±Inf survive as words and come back as such, floats print short
 * and read back equal, doubles exactly, steps to 2^62; run and tag names a
 * job wrote (quotes, backslashes, escapes, bad UTF-8) still make valid JSON;
 * a reply with a bad point is refused naming it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h> /* after the four headers it needs */

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "api/apierror.h"
#include "api/scalarpage.h"
#include "util/strbuf.h"

/* The text of v as a JSON value (owned). */
static char *value_text(double v)
{
    struct strbuf sb = STRBUF_INIT;
    scalarpage_json_value(&sb, v);
    return strbuf_detach(&sb, NULL);
}

static void assert_value_text(double v, const char *want)
{
    char *got = value_text(v);
    assert_string_equal(got, want);
    free(got);
}

static bool same_double(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0 || (isnan(a) && isnan(b));
}

/* The text reader gives what the tree reader gave (want), bit for bit. */
static void same_from_text(const char *text, size_t len, const struct scalar_page *want)
{
    struct scalar_page got;
    scalar_page_init(&got);
    struct api_error err = {0};
    if (scalar_page_from_text(text, len, &got, &err) != 0)
        fail_msg("the text reader refused: %s (%s)", err.message, err.field);
    assert_int_equal(got.count, want->count);
    assert_true((got.log_path == NULL) == (want->log_path == NULL));
    if (got.log_path)
        assert_string_equal(got.log_path, want->log_path);
    assert_true((got.cursor == NULL) == (want->cursor == NULL));
    if (got.cursor)
        assert_string_equal(got.cursor, want->cursor);
    assert_int_equal(got.more, want->more);
    assert_int_equal(got.bad_crc, want->bad_crc);
    assert_int_equal(got.bad_protobuf, want->bad_protobuf);
    assert_int_equal(got.dropped, want->dropped);
    for (size_t i = 0; i < got.count; i++) {
        assert_string_equal(got.points[i].run, want->points[i].run);
        assert_string_equal(got.points[i].tag, want->points[i].tag);
        assert_int_equal(got.points[i].step, want->points[i].step);
        assert_true(same_double(got.points[i].wall_time, want->points[i].wall_time));
        assert_true(same_double(got.points[i].value, want->points[i].value));
    }
    scalar_page_free(&got);
}

/* Encodes p, parses it back with jansson (it must be valid JSON) and decodes it into out. */
static void round_trip(const struct scalar_page *p, struct scalar_page *out)
{
    struct strbuf sb = STRBUF_INIT;
    scalar_page_to_json(p, &sb);
    json_error_t jerr;
    json_t *j = json_loadb(sb.buf, sb.len, 0, &jerr);
    if (j == NULL)
        fail_msg("not JSON (%s): %s", jerr.text, sb.buf);
    struct api_error err = {0};
    scalar_page_init(out);
    if (scalar_page_from_json(j, out, &err) != 0)
        fail_msg("refused: %s", err.message);
    json_decref(j);
    same_from_text(sb.buf, sb.len, out);
    strbuf_free(&sb);
}

static void test_values_short_and_exact(void **state)
{
    (void)state;
    assert_value_text(0.1f, "0.1"); /* a float32 simple_value: no 0.10000000149011612 */
    assert_value_text(0.1, "0.1");
    assert_value_text(3, "3");
    assert_value_text(-2.5, "-2.5");
    assert_value_text(1e21, "1e+21");
    assert_value_text(1.0 / 3.0, "0.3333333333333333"); /* 16 digits read back */
    assert_value_text((float)(1.0 / 3.0), "0.33333334");
    /* what JSON cannot carry as a number */
    assert_value_text(NAN, "\"NaN\"");
    assert_value_text(INFINITY, "\"Infinity\"");
    assert_value_text(-INFINITY, "\"-Infinity\"");
}

static void assert_wall_text(double t, const char *want)
{
    struct strbuf sb = STRBUF_INIT;
    scalarpage_json_wall_time(&sb, t);
    assert_string_equal(strbuf_str(&sb), want);
    strbuf_free(&sb);
}

/* Wall times to the microsecond, no float noise, no trailing zeros. */
static void test_wall_times(void **state)
{
    (void)state;
    assert_wall_text(1700000000.25, "1700000000.25");
    assert_wall_text(1700000001.0, "1700000001");
    assert_wall_text(1700000000.000001, "1700000000.000001");
    assert_wall_text(0, "0");
    assert_wall_text(0.0000015, "0.000002");
    assert_wall_text(-0.5, "-0.5");
    assert_wall_text(NAN, "0");
    assert_wall_text(1e300, "0");
}

static void test_round_trip(void **state)
{
    (void)state;
    struct scalar_page p, q;
    scalar_page_init(&p);
    p.log_path = strdup("/mnt/afs/tb");
    p.cursor = strdup("rank0/events.out.tfevents.1:120,.");
    p.more = true;
    p.bad_crc = 2;
    p.bad_protobuf = 1;
    p.dropped = 7;
    scalar_page_add(&p, ".", "loss", 0, 1700000000.25, 0.1f);
    scalar_page_add(&p, "rank0", "loss", 1, 1700000000.5, NAN);
    scalar_page_add(&p, "rank1", "grad/norm", -5, 1700000001.0, INFINITY);
    scalar_page_add(&p, "rank1", "grad/norm", INT64_C(1) << 62, 0, -INFINITY);
    scalar_page_add(&p, "a/b", "lr", 7, 1700000002.000001, 1.0 / 3.0);
    scalar_page_add(&p, "a/b", "tiny", 8, 1, 1e-45f); /* a float denormal */
    round_trip(&p, &q);
    assert_string_equal(q.log_path, "/mnt/afs/tb");
    assert_string_equal(q.cursor, p.cursor);
    assert_true(q.more);
    assert_int_equal(q.bad_crc, 2);
    assert_int_equal(q.bad_protobuf, 1);
    assert_int_equal(q.dropped, 7);
    assert_int_equal(q.count, p.count);
    for (size_t i = 0; i < p.count; i++) {
        assert_string_equal(q.points[i].run, p.points[i].run);
        assert_string_equal(q.points[i].tag, p.points[i].tag);
        assert_true(q.points[i].step == p.points[i].step);
        assert_true(fabs(q.points[i].wall_time - p.points[i].wall_time) < 1e-6);
    }
    assert_true((float)q.points[0].value == 0.1f);
    assert_true(isnan(q.points[1].value));
    assert_true(isinf(q.points[2].value) && q.points[2].value > 0);
    assert_true(isinf(q.points[3].value) && q.points[3].value < 0);
    assert_true(q.points[4].value == 1.0 / 3.0); /* a double, to the last bit */
    assert_true((float)q.points[5].value == 1e-45f);
    scalar_page_free(&p);
    scalar_page_free(&q);
}

/* Names a job wrote still make valid JSON, and come back as they were (bad bytes: U+FFFD). */
static void test_hostile_names(void **state)
{
    (void)state;
    struct scalar_page p, q;
    scalar_page_init(&p);
    scalar_page_add(&p, "run\"1\\", "tag\x1b[2J\x07\n", 1, 0, 1);
    scalar_page_add(&p, "r\xff\xfe", "\xe6\x8d\x9f\xe5\xa4\xb1", 2, 0, 2); /* 损失 */
    scalar_page_add(&p, "\xc3", "\x7f\xc2\x9b", 3, 0, 3);                  /* cut; DEL, C1 CSI */
    round_trip(&p, &q);
    assert_string_equal(q.points[0].run, "run\"1\\");
    assert_string_equal(q.points[0].tag, "tag\x1b[2J\x07\n"); /* escaped in JSON, kept */
    assert_string_equal(q.points[1].run, "r\xef\xbf\xbd\xef\xbf\xbd");
    assert_string_equal(q.points[1].tag, "\xe6\x8d\x9f\xe5\xa4\xb1");
    assert_string_equal(q.points[2].run, "\xef\xbf\xbd");
    assert_string_equal(q.points[2].tag, "\x7f\xc2\x9b");
    scalar_page_free(&p);
    scalar_page_free(&q);
}

/* Decodes text, which must be refused, and checks the field named. */
static void assert_refused(const char *text, const char *field)
{
    json_t *j = json_loads(text, 0, NULL);
    if (j == NULL)
        j = json_string(text); /* not an object at all */
    struct scalar_page p;
    scalar_page_init(&p);
    struct api_error err = {0};
    assert_int_equal(scalar_page_from_json(j, &p, &err), -1);
    assert_string_equal(err.field, field);
    assert_int_equal(err.status, 502);
    scalar_page_free(&p);
    json_decref(j);
    /* the text reader refuses it too, naming the same field */
    scalar_page_init(&p);
    memset(&err, 0, sizeof err);
    assert_int_equal(scalar_page_from_text(text, strlen(text), &p, &err), -1);
    assert_string_equal(err.field, field);
    assert_int_equal(err.status, 502);
    scalar_page_free(&p);
}

static void test_refused(void **state)
{
    (void)state;
    assert_refused("[1]", "");
    assert_refused("{\"scalars\": {}}", "scalars");
    assert_refused("{\"scalars\": [{\"tag\":\"a\",\"step\":1,\"value\":\"nan\"}]}",
                   "scalars[0].value");
    assert_refused("{\"scalars\": [{\"tag\":\"a\",\"step\":1,\"value\":1},"
                   "{\"step\":1,\"value\":1}]}",
                   "scalars[1].tag");
    assert_refused("{\"scalars\": [{\"tag\":\"a\",\"step\":\"1\",\"value\":1}]}",
                   "scalars[0].step");
    assert_refused("{\"scalars\": [{\"tag\":\"a\",\"step\":1.5,\"value\":1}]}", "scalars[0].step");
    assert_refused("{\"scalars\": [{\"tag\":\"a\",\"step\":1,\"value\":null}]}",
                   "scalars[0].value");
}

/* What is unknown or absent is lenient: no run means ".", counts below 0 mean 0. */
static void test_lenient(void **state)
{
    (void)state;
    json_t *j = json_loads("{\"cursor\":\"c\",\"future\":1,\"bad_records\":{\"crc\":-3},"
                           "\"scalars\":[{\"tag\":\"t\",\"step\":4,\"value\":\"-Infinity\"}]}",
                           0, NULL);
    struct scalar_page p;
    scalar_page_init(&p);
    struct api_error err = {0};
    assert_int_equal(scalar_page_from_json(j, &p, &err), 0);
    assert_null(p.log_path);
    assert_false(p.more);
    assert_int_equal(p.bad_crc, 0);
    assert_int_equal(p.count, 1);
    assert_string_equal(p.points[0].run, ".");
    assert_true(isinf(p.points[0].value) && p.points[0].value < 0);
    char *text = json_dumps(j, JSON_COMPACT);
    same_from_text(text, strlen(text), &p);
    free(text);
    scalar_page_free(&p);
    json_decref(j);
}

/* Escapes jansson writes and a server may send: \u with surrogate pairs, \/ and the short ones. */
/* --tag and the pane's filter: TensorBoard's path-like tags found by their last part too. */
static void test_tag_match(void **state)
{
    (void)state;
    assert_true(scalarpage_tag_match("loss*", "train/loss"));
    assert_true(scalarpage_tag_match("loss*", "loss"));
    assert_true(scalarpage_tag_match("loss*", "a/b/loss_avg"));
    assert_false(scalarpage_tag_match("loss*", "train/lr"));
    assert_false(scalarpage_tag_match("loss*", "loss_dir/lr")); /* the last part only */
    assert_true(scalarpage_tag_match("train/*", "train/loss"));
    assert_true(scalarpage_tag_match("train/*", "train/a/b")); /* '*' crosses '/' */
    assert_false(scalarpage_tag_match("train/*", "eval/loss"));
    assert_false(scalarpage_tag_match("train/l*", "eval/train/lr"));
    assert_true(scalarpage_tag_match("*/lr", "x/train/lr"));
    assert_true(scalarpage_tag_match("train/loss", "train/loss"));
    assert_false(scalarpage_tag_match("train", "train/loss"));
    assert_false(scalarpage_tag_match("train*", "train/loss"));
    assert_true(scalarpage_tag_match("[ab]cc", "x/acc"));
}

static void test_text_escapes(void **state)
{
    (void)state;
    static const char text[] =
        "{ \"log_path\" : \"/a\\/b\", \"cursor\":\"x\\\"y\",\"more\":true,"
        "\"dropped\":7, \"scalars\" : [ {\"run\":\"r\\u00e9\\ud83d\\ude00\\t\","
        "\"tag\":\"a\\\\b\",\"step\":-9223372036854775808,\"wall_time\":1.5e9,"
        "\"value\":-0.0}, {\"tag\":\"t\",\"step\":3,\"value\":1E-310,\"x\":[1,{\"y\":\"]\"}]} ] }\n";
    json_t *j = json_loadb(text, sizeof text - 1, 0, NULL);
    assert_non_null(j);
    struct scalar_page want;
    scalar_page_init(&want);
    struct api_error err = {0};
    assert_int_equal(scalar_page_from_json(j, &want, &err), 0);
    json_decref(j);
    same_from_text(text, sizeof text - 1, &want);
    assert_string_equal(want.points[0].run, "r\xc3\xa9\xf0\x9f\x98\x80\t");
    assert_true(signbit(want.points[1 - 1].value));
    scalar_page_free(&want);
    /* cut short, or something after the object: refused */
    struct scalar_page p;
    scalar_page_init(&p);
    assert_int_equal(scalar_page_from_text(text, 40, &p, &err), -1);
    scalar_page_free(&p);
    scalar_page_init(&p);
    assert_int_equal(scalar_page_from_text("{}x", 3, &p, &err), -1);
    scalar_page_free(&p);
    /* what jansson refuses, this refuses: bad UTF-8, a leading zero, "1." */
    static const char *const bad[] = {
        "{\"scalars\":[{\"tag\":\"\xff\",\"step\":1,\"value\":1}]}",
        "{\"scalars\":[{\"tag\":\"t\",\"step\":01,\"value\":1}]}",
        "{\"scalars\":[{\"tag\":\"t\",\"step\":1,\"value\":1.}]}",
        "{\"scalars\":[{\"tag\":\"t\",\"step\":1,\"value\":1e}]}",
        "{\"scalars\":[{\"tag\":\"t\\u0000\",\"step\":1,\"value\":1}]}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_null(json_loads(bad[i], 0, NULL));
        scalar_page_init(&p);
        assert_int_equal(scalar_page_from_text(bad[i], strlen(bad[i]), &p, &err), -1);
        scalar_page_free(&p);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_values_short_and_exact),
        cmocka_unit_test(test_tag_match),
        cmocka_unit_test(test_wall_times),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_hostile_names),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_lenient),
        cmocka_unit_test(test_text_escapes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
