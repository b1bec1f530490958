/*
 * test_yamltree: the YAML reader and writer (api/yamltree.c) and the
 * position table it fills (api/docpos.c): scalar resolution, tags, block
 * scalars, anchors and alias bombs, every error with its line:column,
 * positions of fields, placing findings, the emit/parse round trip, and
 * JSON text read as YAML.
 */
/* cmocka.h needs these first, in this order. */
/* clang-format off */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
/* clang-format on */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/docpos.h"
#include "api/finding.h"
#include "api/yamltree.h"
#include "util/strbuf.h"

/* ---- helpers ------------------------------------------------------------ */

static json_t *parse_ok(const char *text, struct docpos *pos)
{
    struct doc_error err;
    json_t *t = yamltree_parse(text, strlen(text), pos, &err);
    if (!t)
        fail_msg("parse failed at %d:%d: %s\n--- input:\n%s", err.line, err.col, err.message, text);
    return t;
}

/* Parses text expecting an error at line:col whose message contains want. */
static void expect_error_n(const char *text, size_t len, int line, int col, const char *want)
{
    struct doc_error err;
    struct docpos pos = DOCPOS_INIT;
    json_t *t = yamltree_parse(text, len, &pos, &err);
    if (t) {
        char *s = json_dumps(t, JSON_ENCODE_ANY);
        fail_msg("expected an error, got %s", s);
    }
    if (!strstr(err.message, want) || err.line != line || err.col != col)
        fail_msg("expected %d:%d '%s', got %d:%d '%s'", line, col, want, err.line, err.col,
                 err.message);
    assert_int_equal(pos.count, 0); /* a failed parse leaves no positions */
    docpos_free(&pos);
}

static void expect_error(const char *text, int line, int col, const char *want)
{
    expect_error_n(text, strlen(text), line, col, want);
}

/* The value of key "v" in the one-entry document "v: <scalar>". */
static json_t *value_of(const char *scalar)
{
    char doc[256];
    snprintf(doc, sizeof doc, "v: %s\n", scalar);
    json_t *t = parse_ok(doc, NULL);
    json_t *v = json_incref(json_object_get(t, "v"));
    json_decref(t);
    return v;
}

/* Asserts the value of scalar equals the JSON text want (types included). */
static void expect_scalar(const char *scalar, const char *want_json)
{
    json_error_t jerr;
    json_t *want = json_loads(want_json, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
    assert_non_null(want);
    json_t *got = value_of(scalar);
    if (!json_equal(got, want)) {
        char *g = json_dumps(got, JSON_ENCODE_ANY);
        fail_msg("'%s': expected %s, got %s", scalar, want_json, g);
    }
    json_decref(got);
    json_decref(want);
}

/* Emits tree, parses the text back and asserts the trees are equal. */
static void expect_round_trip(const json_t *tree)
{
    struct strbuf out = STRBUF_INIT;
    struct doc_error err;
    if (yamltree_emit(tree, &out, &err) != 0)
        fail_msg("emit failed: %s", err.message);
    json_t *back = yamltree_parse(out.buf, out.len, NULL, &err);
    if (!back)
        fail_msg("re-parse failed at %d:%d: %s\n--- emitted:\n%s", err.line, err.col, err.message,
                 strbuf_str(&out));
    if (!json_equal(tree, back)) {
        char *a = json_dumps(tree, JSON_ENCODE_ANY), *b = json_dumps(back, JSON_ENCODE_ANY);
        fail_msg("round trip changed the tree\nwas:  %s\nnow:  %s\n--- emitted:\n%s", a, b,
                 strbuf_str(&out));
    }
    json_decref(back);
    strbuf_free(&out);
}

static char *emit_text(const json_t *tree)
{
    struct strbuf out = STRBUF_INIT;
    struct doc_error err;
    assert_int_equal(yamltree_emit(tree, &out, &err), 0);
    return strbuf_detach(&out, NULL);
}

static void expect_pos(const struct docpos *pos, const char *path, int key_line, int key_col,
                       int line, int col, enum docpos_style style)
{
    const struct docpos_entry *e = docpos_find(pos, path);
    if (!e)
        fail_msg("no position for '%s'", path);
    if (e->key_line != key_line || e->key_col != key_col || e->line != line || e->col != col ||
        e->style != style)
        fail_msg("'%s': expected key %d:%d value %d:%d style %d, got key %d:%d value %d:%d "
                 "style %d",
                 path, key_line, key_col, line, col, (int)style, e->key_line, e->key_col, e->line,
                 e->col, (int)e->style);
}

/* ---- reading scalars ---------------------------------------------------- */

static void test_scalar_resolution(void **state)
{
    static const struct {
        const char *yaml, *json;
    } table[] = {
        /* null */
        {"", "null"},
        {"~", "null"},
        {"null", "null"},
        {"Null", "null"},
        {"NULL", "null"},
        {"nULL", "\"nULL\""},
        /* booleans: YAML 1.2 only, yes/no/on/off are strings */
        {"true", "true"},
        {"True", "true"},
        {"TRUE", "true"},
        {"false", "false"},
        {"False", "false"},
        {"FALSE", "false"},
        {"tRUE", "\"tRUE\""},
        {"yes", "\"yes\""},
        {"no", "\"no\""},
        {"on", "\"on\""},
        {"off", "\"off\""},
        {"y", "\"y\""},
        /* integers */
        {"0", "0"},
        {"8", "8"},
        {"-17", "-17"},
        {"+5", "5"},
        {"007", "7"},
        {"0o17", "15"},
        {"0x1F", "31"},
        {"0xff", "255"},
        {"9223372036854775807", "9223372036854775807"},
        {"-9223372036854775808", "-9223372036854775808"},
        {"0x", "\"0x\""},
        {"0o", "\"0o\""},
        {"0o8", "\"0o8\""},
        {"-0x10", "\"-0x10\""},
        {"0b101", "\"0b101\""},
        {"1_000", "\"1_000\""},
        {"0X1F", "\"0X1F\""},
        /* floats */
        {"1.5", "1.5"},
        {"-2.25", "-2.25"},
        {".5", "0.5"},
        {"-.5", "-0.5"},
        {"+.5e-3", "0.0005"},
        {"1.", "1.0"},
        {"1e3", "1000.0"},
        {"1E-2", "0.01"},
        {"-1.5e+3", "-1500.0"},
        {"00.25", "0.25"},
        {"2.0", "2.0"},
        {"1e", "\"1e\""},
        {".", "\".\""},
        {"1.2.3", "\"1.2.3\""},
        {"e5", "\"e5\""},
        {"inf", "\"inf\""},
        {"NaN", "\"NaN\""},
        /* strings */
        {"12:30", "\"12:30\""},
        {"N2lS.Ie.I60.8", "\"N2lS.Ie.I60.8\""},
        {"hello world", "\"hello world\""},
        {"ResNet50 基线 v2", "\"ResNet50 基线 v2\""},
        {"<<", "\"<<\""},
        {"a#b", "\"a#b\""},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        expect_scalar(table[i].yaml, table[i].json);
}

static void test_integer_overflow(void **state)
{
    /* Too large for a long long: a real holding the value. */
    expect_scalar("9223372036854775808", "9223372036854775808.0");
    expect_scalar("-9223372036854775809", "-9223372036854775809.0");
    expect_scalar("99999999999999999999", "1e20");
    expect_scalar("0x10000000000000000", "18446744073709551616.0");
    expect_scalar("0o1000000000000000000000", "9223372036854775808.0");
    /* Too large even for a double: an error. */
    char doc[600];
    int n = snprintf(doc, sizeof doc, "v: 1");
    for (int i = 0; i < 400; i++)
        n += snprintf(doc + n, sizeof doc - (size_t)n, "0");
    expect_error(doc, 1, 4, "out of range");
    expect_error("v: 1e999", 1, 4, "number 1e999 is out of range");
    expect_error("v: -1e999", 1, 4, "out of range");
    expect_scalar("1e-400", "0.0"); /* underflow is zero */
}

static void test_inf_nan(void **state)
{
    const char *texts[] = {".inf", "-.inf", "+.INF", ".Inf",
                           ".nan", ".NaN",  ".NAN",  "!!float .inf"};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        char doc[64];
        snprintf(doc, sizeof doc, "a: 1\nv: %s\n", texts[i]);
        expect_error(doc, 2, 4, "infinite and NaN numbers are not supported");
    }
    expect_scalar("\".inf\"", "\".inf\""); /* quoted: a string */
}

static void test_quoted_vs_plain(void **state)
{
    expect_scalar("\"8\"", "\"8\"");
    expect_scalar("'8'", "\"8\"");
    expect_scalar("\"true\"", "\"true\"");
    expect_scalar("'null'", "\"null\"");
    expect_scalar("''", "\"\"");
    expect_scalar("\"\"", "\"\"");
    expect_scalar("\"~\"", "\"~\"");
    expect_scalar("'1.5'", "\"1.5\"");
    expect_scalar("\"a\\tb\\u00e9\\x41\"", "\"a\\tbéA\"");
    expect_scalar("'it''s'", "\"it's\"");
    expect_scalar("\"x\\0y\"", "\"x\\u0000y\""); /* NUL from an escape: kept */
    expect_scalar("! 8", "\"8\"");               /* the non-specific tag: a string */
}

static void test_tags(void **state)
{
    expect_scalar("!!str 8", "\"8\"");
    expect_scalar("!!str", "\"\"");
    expect_scalar("!!int \"12\"", "12");
    expect_scalar("!!int 0x10", "16");
    expect_scalar("!!float 1", "1.0");
    expect_scalar("!!float '2.5'", "2.5");
    expect_scalar("!!bool 'true'", "true");
    expect_scalar("!!bool FALSE", "false");
    expect_scalar("!!null ''", "null");
    expect_scalar("!!null ~", "null");
    expect_scalar("!!map {a: 1}", "{\"a\": 1}");
    expect_scalar("!!seq [1]", "[1]");
    expect_scalar("!<tag:yaml.org,2002:int> 3", "3");

    expect_error("v: !!int abc", 1, 4, "'abc' is not an integer (!!int)");
    expect_error("v: !!int 1.5", 1, 4, "is not an integer");
    expect_error("v: !!float abc", 1, 4, "is not a number");
    expect_error("v: !!bool yes", 1, 4, "'yes' is not true or false (!!bool)");
    expect_error("v: !!null 0", 1, 4, "is not null");
    expect_error("v: !foo bar", 1, 4, "unsupported tag !foo");
    expect_error("v: !!binary aGk=", 1, 4, "unsupported tag !!binary");
    expect_error("v: !!set {a}", 1, 4, "unsupported tag !!set");
    expect_error("v: !!seq {a: 1}", 1, 4, "unsupported tag !!seq");
    expect_error("v: !!map [1]", 1, 4, "unsupported tag !!map");
    expect_error("v: !!str [1]", 1, 4, "unsupported tag !!str");
    expect_error("v: !<tag:example.com,2000:x> 1", 1, 4, "unsupported tag tag:example.com,2000:x");
    expect_error("a: 1\n!!int x: 2", 2, 1, "is not an integer"); /* tagged keys are checked */
    expect_error("!foo a: 1", 1, 1, "unsupported tag !foo");
}

static void test_block_scalars(void **state)
{
    struct docpos pos = DOCPOS_INIT;
    json_t *t = parse_ok("keep: |\n  line one\n  line two\n"
                         "strip: |-\n  x\n  y\n"
                         "plus: |+\n  x\n\n"
                         "folded: >\n  a\n  b\n\n  c\n"
                         "folded_strip: >-\n  a\n  b\n"
                         "indented: |2\n    four\n  two\n"
                         "last: 1\n",
                         &pos);
    assert_string_equal(json_string_value(json_object_get(t, "keep")), "line one\nline two\n");
    assert_string_equal(json_string_value(json_object_get(t, "strip")), "x\ny");
    assert_string_equal(json_string_value(json_object_get(t, "plus")), "x\n\n");
    assert_string_equal(json_string_value(json_object_get(t, "folded")), "a b\nc\n");
    assert_string_equal(json_string_value(json_object_get(t, "folded_strip")), "a b");
    assert_string_equal(json_string_value(json_object_get(t, "indented")), "  four\ntwo\n");
    expect_pos(&pos, "keep", 1, 1, 1, 7, DOCPOS_BLOCK);
    expect_pos(&pos, "strip", 4, 1, 4, 8, DOCPOS_BLOCK);
    /* a block scalar that looks like a number is still a string */
    json_decref(t);
    docpos_free(&pos);
    expect_scalar("|\n  8", "\"8\\n\"");
    expect_scalar("|-\n  true", "\"true\"");
}

/* ---- anchors and aliases ------------------------------------------------ */

static void test_anchors_aliases(void **state)
{
    struct docpos pos = DOCPOS_INIT;
    json_t *t = parse_ok("base: &b {x: 1, y: [a, b]}\n"
                         "other: *b\n"
                         "list: [&s text, *s, &n 5, *n]\n"
                         "<<: *b\n"
                         "&k key: *k\n",
                         &pos);
    json_t *base = json_object_get(t, "base");
    /* an alias shares the node: no copy */
    assert_ptr_equal(json_object_get(t, "other"), base);
    assert_ptr_equal(json_object_get(t, "<<"), base); /* a merge key is an ordinary key */
    assert_true(base->refcount >= 3);
    json_t *want = json_loads("{\"base\": {\"x\": 1, \"y\": [\"a\", \"b\"]},"
                              " \"other\": {\"x\": 1, \"y\": [\"a\", \"b\"]},"
                              " \"list\": [\"text\", \"text\", 5, 5],"
                              " \"<<\": {\"x\": 1, \"y\": [\"a\", \"b\"]}, \"key\": \"key\"}",
                              0, NULL);
    assert_true(json_equal(t, want));
    /* an alias is placed where the alias stands; what it shares has no entries of its own */
    expect_pos(&pos, "other", 2, 1, 2, 8, DOCPOS_BLOCK);
    expect_pos(&pos, "list[1]", 0, 0, 3, 17, DOCPOS_BLOCK);
    assert_null(docpos_find(&pos, "other.x"));
    assert_string_equal(docpos_nearest(&pos, "other.y[1]")->path, "other");
    json_decref(want);
    json_decref(t);
    docpos_free(&pos);

    /* the newest anchor of a name wins */
    t = parse_ok("- &a 1\n- &a 2\n- *a\n", NULL);
    assert_int_equal(json_integer_value(json_array_get(t, 2)), 2);
    json_decref(t);

    expect_error("a: &x 1\nb: *y\n", 2, 4, "undefined alias *y");
    expect_error("a: *x\nb: &x 1\n", 1, 4, "undefined alias *x"); /* aliases look back only */
    expect_error("a: &x [1, *x]\n", 1, 11, "alias *x refers to a node that contains it");
    expect_error("a: &x\n  b: &y\n    c: *x\n", 3, 8, "refers to a node that contains it");
    expect_error("a: &x 1\n*x : 2\n", 2, 1, "mapping keys must be plain strings");
}

/* LEVELS levels of 10 aliases each over a list of 10 scalars (caller frees). */
static char *alias_levels(int levels)
{
    struct strbuf doc = STRBUF_INIT;
    strbuf_adds(&doc, "a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
    for (int level = 1; level <= levels; level++) {
        strbuf_addf(&doc, "a%d: &a%d [", level, level);
        for (int i = 0; i < 10; i++)
            strbuf_addf(&doc, "%s*a%d", i ? ", " : "", level - 1);
        strbuf_adds(&doc, "]\n");
    }
    return strbuf_detach(&doc, NULL);
}

static void test_alias_bomb(void **state)
{
    (void)state;
    /* 3 levels: aliases add 12,330 nodes, under the limit: shared, not copied. */
    char *doc = alias_levels(3);
    struct docpos pos = DOCPOS_INIT;
    json_t *t = parse_ok(doc, &pos);
    assert_int_equal(json_object_size(t), 4);
    json_t *a3 = json_object_get(t, "a3");
    assert_int_equal(json_array_size(a3), 10);
    assert_ptr_equal(json_array_get(a3, 0), json_object_get(t, "a2"));
    assert_true(pos.count < 100);
    json_decref(t);
    docpos_free(&pos);
    free(doc);

    /*
     * 9 levels: 10^9 leaves once expanded (a deep copy of it took 16 GB). The
     * count passes 100,000 at a4's eighth alias (12,330 + 8 x 11,111): the
     * error is there, naming the node and the limit, and nothing is kept.
     */
    doc = alias_levels(9);
    clock_t start = clock();
    struct doc_error err;
    assert_null(yamltree_parse(doc, strlen(doc), &pos, &err));
    double seconds = (double)(clock() - start) / CLOCKS_PER_SEC;
    assert_true(seconds < 1.0);
    assert_int_equal(err.line, 5);
    assert_int_equal(err.col, 45);
    assert_string_equal(err.path, "a4[7]");
    assert_non_null(strstr(err.message, "aliases expand to more than 100000 nodes"));
    assert_int_equal(pos.count, 0);
    docpos_free(&pos);
    free(doc);

    /* Reported as a finding at the alias, with the node's path. */
    struct findings fs = FINDINGS_INIT;
    doc = alias_levels(5);
    assert_null(yamltree_parse_or_report(doc, strlen(doc), NULL, &fs));
    assert_int_equal(fs.count, 1);
    assert_string_equal(fs.items[0].path, "a4[7]");
    assert_int_equal(fs.items[0].line, 5);
    assert_int_equal(fs.items[0].col, 45);
    findings_free(&fs);
    free(doc);

    /* Text counts too: a 1 MiB scalar aliased five times is more than 4 MiB. */
    struct strbuf big = STRBUF_INIT;
    strbuf_adds(&big, "s: &s ");
    for (int i = 0; i < (1 << 20); i++)
        strbuf_addc(&big, 'x');
    strbuf_adds(&big, "\nt: [*s, *s, *s, *s, *s]\n");
    assert_null(yamltree_parse(big.buf, big.len, NULL, &err));
    assert_int_equal(err.line, 2);
    assert_int_equal(err.col, 21);
    assert_string_equal(err.path, "t[4]");
    assert_non_null(strstr(err.message, "more than 4 MiB of text"));
    strbuf_free(&big);
}

/* ---- errors ------------------------------------------------------------- */

static void test_duplicate_key(void **state)
{
    expect_error("a: 1\nb:\n  c: 2\n  c: 3\n", 4, 3, "duplicate key 'c'");
    expect_error("{\"x\":1,\"x\":2}", 1, 8, "duplicate key 'x'");
    expect_error("name: a\nname: b\n", 2, 1, "duplicate key 'name'");
    /* keys are compared as text: 1 and "1" are the same key */
    expect_error("1: a\n\"1\": b\n", 2, 1, "duplicate key '1'");
    /* a long or strange key is shortened and made printable in the message */
    expect_error("\"a\\tb\": 1\n\"a\\tb\": 2\n", 2, 1, "duplicate key 'a?b'");
}

static void test_non_scalar_keys(void **state)
{
    expect_error("[1, 2]: x\n", 1, 1, "mapping keys must be plain strings");
    expect_error("? {a: 1}\n: x\n", 1, 3, "mapping keys must be plain strings");
    expect_error("\"a\\0b\": 1\n", 1, 1, "mapping keys must not contain NUL characters");
    /* scalar keys become strings */
    json_t *t = parse_ok("1: a\ntrue: b\nnull: c\n1.5: d\n~: e\n", NULL);
    json_t *want = json_loads("{\"1\": \"a\", \"true\": \"b\", \"null\": \"c\", \"1.5\": \"d\","
                              " \"~\": \"e\"}",
                              0, NULL);
    assert_true(json_equal(t, want));
    json_decref(want);
    json_decref(t);
    t = parse_ok("? a\n.inf: x\n", NULL); /* a key is never resolved as a number */
    assert_true(json_is_null(json_object_get(t, "a")));
    assert_string_equal(json_string_value(json_object_get(t, ".inf")), "x");
    json_decref(t);
}

static void test_tab_indentation(void **state)
{
    expect_error("a:\n\tb: 1\n", 2, 1, "tab character");
    expect_error("a:\n  b: 1\n  c:\n\t  d: 2\n", 4, 1, "tab character");
    /* a tab inside a value is fine */
    expect_scalar("\"a\tb\"", "\"a\\tb\"");
}

static void test_syntax_errors(void **state)
{
    expect_error("a: b: c", 1, 5, "mapping values are not allowed in this context");
    expect_error("a: 'abc", 1, 8,
                 "found unexpected end of stream (while scanning a quoted scalar started at "
                 "line 1, column 4)");
    expect_error("a: \"abc\n", 2, 1, "found unexpected end of stream");
    expect_error("x: [1,", 2, 1, "did not find expected node content"); /* at the end */
    expect_error("a:\n  - b\n  c: d\n", 3, 3, "did not find expected '-' indicator");
    expect_error("a: {b: 1\n", 2, 1, "did not find expected ',' or '}'");
    expect_error("@x: 1\n", 1, 1, "found character that cannot start any token");
    expect_error("\"\\ud83d\\ude00\"", 1, 4, "invalid Unicode character escape code");
}

static void test_multiple_documents(void **state)
{
    expect_error("a: 1\n---\nb: 2\n", 2, 1, "only one document is allowed");
    expect_error("--- a\n--- b\n", 2, 1, "only one document is allowed");
    expect_error("a: 1\n...\n---\nb: 2\n", 3, 1, "only one document is allowed");
    /* one document, with markers, is fine */
    json_t *t = parse_ok("%YAML 1.2\n---\na: 1\n...\n", NULL);
    assert_int_equal(json_integer_value(json_object_get(t, "a")), 1);
    json_decref(t);
}

static void test_empty_documents(void **state)
{
    const char *texts[] = {"", "\n", "# only a comment\n", "---\n", "--- ~\n"};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        struct doc_error err;
        json_t *t = yamltree_parse(texts[i], strlen(texts[i]), NULL, &err);
        assert_non_null(t);
        assert_true(json_is_null(t));
        json_decref(t);
    }
    struct doc_error err;
    json_t *t = yamltree_parse(NULL, 0, NULL, &err);
    assert_true(json_is_null(t));
    json_decref(t);
    /* a scalar document */
    t = parse_ok("hello\n", NULL);
    assert_string_equal(json_string_value(t), "hello");
    json_decref(t);
}

static char *nested(int levels, const char *open, const char *inner, const char *close)
{
    struct strbuf sb = STRBUF_INIT;
    for (int i = 0; i < levels; i++)
        strbuf_adds(&sb, open);
    strbuf_adds(&sb, inner);
    for (int i = 0; i < levels; i++)
        strbuf_adds(&sb, close);
    return strbuf_detach(&sb, NULL);
}

static void test_depth_limit(void **state)
{
    char *ok = nested(YAMLTREE_MAX_DEPTH, "[", "1", "]");
    json_t *t = parse_ok(ok, NULL);
    json_decref(t);
    free(ok);
    char *deep = nested(YAMLTREE_MAX_DEPTH + 1, "[", "1", "]");
    expect_error(deep, 1, YAMLTREE_MAX_DEPTH + 1, "nesting deeper than 64 levels");
    free(deep);
    deep = nested(YAMLTREE_MAX_DEPTH + 1, "{a: ", "1", "}");
    expect_error(deep, 1, 4 * YAMLTREE_MAX_DEPTH + 1, "nesting deeper than 64 levels");
    free(deep);
    deep = nested(100000, "[", "", "]"); /* no C stack is used per level */
    expect_error(deep, 1, YAMLTREE_MAX_DEPTH + 1, "nesting deeper than 64 levels");
    free(deep);

    /* block style: 64 mappings deep (63 "k:" lines and a leaf) is fine, 65 is not */
    struct strbuf sb = STRBUF_INIT;
    for (int i = 0; i < YAMLTREE_MAX_DEPTH - 1; i++)
        strbuf_addf(&sb, "%*sk:\n", i, "");
    strbuf_addf(&sb, "%*sleaf: 1\n", YAMLTREE_MAX_DEPTH - 1, "");
    t = parse_ok(strbuf_str(&sb), NULL);
    json_decref(t);
    strbuf_reset(&sb);
    for (int i = 0; i < YAMLTREE_MAX_DEPTH; i++)
        strbuf_addf(&sb, "%*sk:\n", i, "");
    strbuf_addf(&sb, "%*sleaf: 1\n", YAMLTREE_MAX_DEPTH, "");
    expect_error(strbuf_str(&sb), YAMLTREE_MAX_DEPTH + 1, YAMLTREE_MAX_DEPTH + 1,
                 "nesting deeper than 64 levels");
    strbuf_free(&sb);
}

static void test_invalid_utf8(void **state)
{
    expect_error("a: \xff\n", 1, 4, "invalid UTF-8");
    expect_error("a: b\nc: \xc3\x28\n", 2, 4, "invalid UTF-8");
    expect_error("a: b\nc: d\xe4\xb8", 2, 5, "invalid UTF-8");
    expect_error("名: \xed\xa0\x80\n", 1, 4, "invalid"); /* an encoded surrogate */
    /* NUL and other control bytes in the text itself; the length is what counts */
    expect_error_n("a: b\0c\nd: 1\n", 12, 1, 5, "control characters are not allowed");
    expect_error("a: \x01\n", 1, 4, "control characters are not allowed");
    /* UTF-16 (which libyaml would decode after its byte order mark) is refused */
    expect_error_n("\xff\xfe"
                   "a\0:\0 \0"
                   "1\0",
                   10, 1, 1, "only UTF-8 is supported");
    expect_error_n("\xfe\xff"
                   "\0a\0:",
                   6, 1, 1, "only UTF-8 is supported");
    /* a byte order mark is accepted */
    json_t *t = parse_ok("\xef\xbb\xbf"
                         "a: 1\n",
                         NULL);
    assert_int_equal(json_integer_value(json_object_get(t, "a")), 1);
    json_decref(t);
}

/* ---- positions ---------------------------------------------------------- */

static const char positions_doc[] = "name: demo\n"
                                    "roles:\n"
                                    "  - image_path: reg/img:1\n"
                                    "    total_replicas: 2\n"
                                    "    script: |\n"
                                    "      echo hi\n"
                                    "labels: {team: \"vision\", tier: 'gold'}\n"
                                    "list: [1, \"two\"]\n"
                                    "名: 值\n"
                                    "empty:\n";

static void test_positions(void **state)
{
    struct docpos pos = DOCPOS_INIT;
    json_t *t = parse_ok(positions_doc, &pos);
    expect_pos(&pos, "", 0, 0, 1, 1, DOCPOS_BLOCK);
    expect_pos(&pos, "name", 1, 1, 1, 7, DOCPOS_PLAIN);
    expect_pos(&pos, "roles", 2, 1, 3, 3, DOCPOS_BLOCK);
    expect_pos(&pos, "roles[0]", 0, 0, 3, 5, DOCPOS_BLOCK);
    expect_pos(&pos, "roles[0].image_path", 3, 5, 3, 17, DOCPOS_PLAIN);
    expect_pos(&pos, "roles[0].total_replicas", 4, 5, 4, 21, DOCPOS_PLAIN);
    expect_pos(&pos, "roles[0].script", 5, 5, 5, 13, DOCPOS_BLOCK);
    expect_pos(&pos, "labels", 7, 1, 7, 9, DOCPOS_BLOCK);
    expect_pos(&pos, "labels.team", 7, 10, 7, 16, DOCPOS_QUOTED);
    expect_pos(&pos, "labels.tier", 7, 26, 7, 32, DOCPOS_QUOTED);
    expect_pos(&pos, "list[0]", 0, 0, 8, 8, DOCPOS_PLAIN);
    expect_pos(&pos, "list[1]", 0, 0, 8, 11, DOCPOS_QUOTED);
    /* columns count characters, not bytes */
    expect_pos(&pos, "名", 9, 1, 9, 4, DOCPOS_PLAIN);
    assert_non_null(docpos_find(&pos, "empty"));
    assert_int_equal(pos.count, 15);
    /* entries come in document order */
    assert_string_equal(pos.items[0].path, "");
    assert_string_equal(pos.items[1].path, "name");
    assert_string_equal(pos.items[pos.count - 1].path, "empty");
    json_decref(t);

    /* a second parse appends; a failed one leaves the table as it was */
    size_t before = pos.count;
    struct doc_error err;
    assert_null(yamltree_parse("a: 1\na: 2\n", 10, &pos, &err));
    assert_int_equal(pos.count, before);
    docpos_free(&pos);
    assert_int_equal(pos.count, 0);
    assert_null(pos.items);

    /* positions may be skipped */
    t = parse_ok(positions_doc, NULL);
    assert_non_null(t);
    json_decref(t);

    /* a root scalar, and CRLF line ends */
    t = parse_ok("  'x'\n", &pos);
    expect_pos(&pos, "", 0, 0, 1, 3, DOCPOS_QUOTED);
    json_decref(t);
    docpos_free(&pos);
    t = parse_ok("a: 1\r\nb:\r\n  - x\r\n", &pos);
    expect_pos(&pos, "b[0]", 0, 0, 3, 5, DOCPOS_PLAIN);
    json_decref(t);
    docpos_free(&pos);
}

static void test_docpos_nearest(void **state)
{
    struct docpos pos = DOCPOS_INIT;
    assert_null(docpos_nearest(&pos, "a.b"));
    assert_null(docpos_find(&pos, ""));
    docpos_add(&pos, "", 0, 0, 1, 1, DOCPOS_BLOCK);
    docpos_add(&pos, "a", 1, 1, 2, 3, DOCPOS_BLOCK);
    docpos_add(&pos, "a.b", 2, 3, 3, 5, DOCPOS_BLOCK);
    docpos_add(&pos, "a.b[3]", 0, 0, 4, 7, DOCPOS_BLOCK);
    docpos_add(&pos, "a.bc", 5, 3, 5, 7, DOCPOS_PLAIN);

    assert_string_equal(docpos_find(&pos, "a.b")->path, "a.b");
    assert_null(docpos_find(&pos, "a.b[3].c"));
    assert_null(docpos_find(&pos, "a.")); /* a prefix of a path is not that path */
    assert_string_equal(docpos_nearest(&pos, "a.b[3].c")->path, "a.b[3]");
    assert_string_equal(docpos_nearest(&pos, "a.b[3].c.d[0]")->path, "a.b[3]");
    assert_string_equal(docpos_nearest(&pos, "a.b[3]")->path, "a.b[3]");
    assert_string_equal(docpos_nearest(&pos, "a.b[4]")->path, "a.b");
    assert_string_equal(docpos_nearest(&pos, "a.bc")->path, "a.bc");
    assert_string_equal(docpos_nearest(&pos, "a.bcd")->path, "a");
    assert_string_equal(docpos_nearest(&pos, "a.x.y")->path, "a");
    assert_string_equal(docpos_nearest(&pos, "zzz")->path, "");
    assert_string_equal(docpos_nearest(&pos, "[2].x")->path, "");
    assert_string_equal(docpos_nearest(&pos, "")->path, "");
    docpos_free(&pos);

    /* without a root entry, an unknown top-level path has no position */
    docpos_add(&pos, "a", 1, 1, 1, 4, DOCPOS_PLAIN);
    assert_null(docpos_nearest(&pos, "b.c"));
    docpos_free(&pos);
}

/* Places one finding at path/offset and asserts where it lands. */
static void expect_located(const struct docpos *pos, const char *path, int offset, int line,
                           int col)
{
    struct findings fs = FINDINGS_INIT;
    findings_add_at(&fs, SEVERITY_ERROR, path, offset, "message");
    docpos_locate(pos, &fs);
    int got_line = fs.items[0].line, got_col = fs.items[0].col;
    findings_free(&fs);
    if (got_line != line || got_col != col)
        fail_msg("'%s' at offset %d: expected %d:%d, got %d:%d", path, offset, line, col, got_line,
                 got_col);
}

static void test_docpos_locate(void **state)
{
    struct docpos pos = DOCPOS_INIT;
    json_t *t = parse_ok(positions_doc, &pos);
    json_decref(t);

    /* the value, the key, a byte inside a plain and a quoted value */
    expect_located(&pos, "roles[0].image_path", FINDING_AT_VALUE, 3, 17);
    expect_located(&pos, "roles[0].image_path", FINDING_AT_KEY, 3, 5);
    expect_located(&pos, "roles[0].image_path", 4, 3, 21);
    expect_located(&pos, "labels.team", 0, 7, 17);
    expect_located(&pos, "labels.team", 2, 7, 19);
    expect_located(&pos, "labels.team", FINDING_AT_KEY, 7, 10);
    /* a block value has no column inside */
    expect_located(&pos, "roles[0].script", 5, 5, 13);
    /* a sequence item has no key: its value */
    expect_located(&pos, "roles[0]", FINDING_AT_KEY, 3, 5);
    /* an absent field: where its parent's value starts */
    expect_located(&pos, "roles[0].resource_spec", FINDING_AT_VALUE, 3, 5);
    expect_located(&pos, "roles[0].resource_spec[0].name", FINDING_AT_KEY, 3, 5);
    expect_located(&pos, "roles[1].name", 3, 3, 3);
    expect_located(&pos, "workspace_name", FINDING_AT_VALUE, 1, 1);
    expect_located(&pos, "", FINDING_AT_VALUE, 1, 1);

    /* findings that have a position keep it; an empty table places nothing */
    struct findings fs = FINDINGS_INIT;
    findings_add_pos(&fs, SEVERITY_WARNING, "name", 9, 9, "kept");
    findings_add(&fs, SEVERITY_ERROR, "name", "placed");
    docpos_locate(&pos, &fs);
    assert_int_equal(fs.items[0].line, 9);
    assert_int_equal(fs.items[0].col, 9);
    assert_int_equal(fs.items[1].line, 1);
    assert_int_equal(fs.items[1].col, 7);
    docpos_free(&pos);
    findings_add(&fs, SEVERITY_ERROR, "name", "unplaced");
    docpos_locate(&pos, &fs);
    assert_int_equal(fs.items[2].line, 0);
    assert_int_equal(fs.items[2].col, 0);
    findings_free(&fs);
}

/* ---- writing and the round trip ---------------------------------------- */

static const char *const tricky_strings[] = {
    "",
    "8",
    "-8",
    "true",
    "False",
    "null",
    "Null",
    "~",
    "1.5",
    "1e5",
    ".5",
    "1.",
    "0x1F",
    "0o17",
    "+1",
    ".inf",
    "-.Inf",
    ".nan",
    "yes",
    "no",
    "on",
    "off",
    "plain text",
    "ResNet50 基线 v2",
    "多行\n文本",
    "日本語のテキスト",
    " leading",
    "trailing ",
    " both ",
    "   ",
    " ",
    "a: b",
    "a:b",
    "key:",
    "x #comment",
    "#not a comment",
    "-",
    "- item",
    "-x",
    "--",
    "---",
    "...",
    "*alias",
    "&anchor",
    "!tag",
    "|",
    "|x",
    ">",
    ">x",
    "'",
    "'quoted'",
    "\"",
    "\"dq\"",
    "%x",
    "@x",
    "`x",
    "?",
    "? x",
    ",",
    "[x]",
    "{x}",
    "<<",
    "=",
    "line\n",
    "line\n\n",
    "\n",
    "\n\n",
    "\nleading newline",
    "two\nlines",
    " indented\nsecond",
    "trailing space \nline",
    "a\tb",
    "\t",
    "tab\tand\nnewline",
    "\x01",
    "ctrl\x01\x02\x1f",
    "\x7f",
    "bell\a",
    "esc\x1b[31m",
    "cr\r",
    "crlf\r\n",
    "\xc2\x85nel",    /* U+0085 */
    "ls\xe2\x80\xa8", /* U+2028 */
    "\xef\xbb\xbf"
    "bom", /* U+FEFF */
    "emoji \xf0\x9f\x98\x80",
    "back\\slash",
    "a very long string that goes on and on past the usual line width of eighty "
    "characters so that an emitter might want to fold it somewhere in the middle",
    "registry.cn-sh-01.sensecore.cn/ngc/pytorch:25.06-py3",
    "$WORLD_SIZE",
    "254,255",
    "199,200-204,230",
    "yes",
    "No",
    "ON",
    "off",
    "y",
    "=",
    "<<",
    "1_000",
    "0b11",
    "1:30:00",
    "+.5",
    "0o17",
};

static void test_round_trip_strings(void **state)
{
    size_t n = sizeof tricky_strings / sizeof tricky_strings[0];
    json_t *all = json_array(), *as_keys = json_object();
    for (size_t i = 0; i < n; i++) {
        const char *s = tricky_strings[i];
        json_t *one = json_pack("{s:s, s:[s, {s:s}]}", "value", s, "list", s, "k", s);
        json_object_set_new(one, s, json_integer((json_int_t)i));
        expect_round_trip(one);
        json_t *root = json_string(s); /* as the whole document */
        expect_round_trip(root);
        json_decref(root);
        json_array_append_new(all, one);
        json_object_set_new(as_keys, s, json_string(s));
    }
    expect_round_trip(all);
    expect_round_trip(as_keys);
    json_decref(all);
    json_decref(as_keys);
    /* a NUL inside a value survives */
    json_t *nul = json_stringn("a\0b", 3);
    expect_round_trip(nul);
    json_decref(nul);
}

static void test_round_trip_trees(void **state)
{
    static const char *const trees[] = {
        "{}",
        "[]",
        "null",
        "true",
        "0",
        "\"\"",
        "{\"a\": {}, \"b\": [], \"c\": [{}, [], [[]], {\"d\": {}}]}",
        "{\"ints\": [0, 1, -1, 9223372036854775807, -9223372036854775808, 42]}",
        "{\"reals\": [0.0, -0.0, 2.0, -2.0, 0.1, 0.3, 1e300, -1e-300, 5e-324,"
        " 1.7976931348623157e308, 123456789.123, 1e15, 1e16, 1e17, 9007199254740993.0,"
        " 3.141592653589793, 2.718281828459045, 100.0, 1.5e-7]}",
        "{\"mixed\": [null, true, false, 1, 1.5, \"s\", {\"k\": [1, {\"x\": null}]}]}",
        "[[1, [2, [3, [4]]]], {\"a\": {\"b\": {\"c\": {\"d\": \"e\"}}}}]",
        "{\"z\": 1, \"a\": 2, \"m\": 3, \"b\": 4}",
    };
    for (size_t i = 0; i < sizeof trees / sizeof trees[0]; i++) {
        json_error_t jerr;
        json_t *t = json_loads(trees[i], JSON_DECODE_ANY, &jerr);
        if (!t)
            fail_msg("bad test JSON %s: %s", trees[i], jerr.text);
        expect_round_trip(t);
        json_decref(t);
    }

    /* the job example */
    FILE *f = fopen("tests/fuzz/seeds/yaml/job-example.yaml", "rb"); /* run from the top */
    if (f) {
        char buf[8192];
        size_t len = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[len] = '\0';
        json_t *t = parse_ok(buf, NULL);
        expect_round_trip(t);
        json_decref(t);
    }

    /* 64 levels deep round-trips; 65 cannot be written */
    json_t *deep = json_integer(1);
    for (int i = 0; i < YAMLTREE_MAX_DEPTH; i++)
        deep = json_pack("{s:o}", "k", deep);
    expect_round_trip(deep);
    json_t *deeper = json_pack("[o]", deep);
    struct strbuf out = STRBUF_INIT;
    strbuf_adds(&out, "kept");
    struct doc_error err;
    assert_int_equal(yamltree_emit(deeper, &out, &err), -1);
    assert_string_equal(err.message, "nesting deeper than 64 levels");
    assert_string_equal(strbuf_str(&out), "kept"); /* nothing appended on error */
    json_decref(deeper);
    strbuf_free(&out);
}

static void test_emit_text(void **state)
{
    static const struct {
        const char *json, *yaml;
    } table[] = {
        {"{\"a\": \"8\"}", "a: '8'\n"},
        {"{\"a\": 8}", "a: 8\n"},
        {"{\"x\": 2.0}", "x: 2.0\n"},
        {"{\"x\": 0.1}", "x: 0.1\n"},
        {"{\"x\": 1e20}", "x: 1e20\n"},
        {"{\"s\": \"true\", \"b\": true, \"z\": null}", "s: 'true'\nb: true\nz: null\n"},
        {"{\"e\": \"\"}", "e: ''\n"},
        {"{}", "{}\n"},
        {"[]", "[]\n"},
        {"{\"o\": {}, \"l\": []}", "o: {}\nl: []\n"},
        {"{\"s\": \"x\\n\"}", "s: |\n  x\n"},
        {"{\"s\": \"x\\ny\"}", "s: |-\n  x\n  y\n"},
        {"{\"s\": \"名前\"}", "s: 名前\n"},
        {"{\"s\": \"a\\u0001\"}", "s: \"a\\x01\"\n"},
        {"{\"roles\": [{\"name\": \"Worker\", \"k\": 2}]}", "roles:\n- name: Worker\n  k: 2\n"},
        {"{\"1\": \"a\"}", "'1': a\n"},
        /* what a YAML 1.1 reader (PyYAML, kubectl's go-yaml) would not read as a string */
        {"{\"v\": \"yes\"}", "v: 'yes'\n"},
        {"{\"v\": \"Off\"}", "v: 'Off'\n"},
        {"{\"v\": \"y\"}", "v: 'y'\n"},
        {"{\"v\": \"NO\"}", "v: 'NO'\n"},
        {"{\"v\": \"=\"}", "v: '='\n"},
        {"{\"v\": \"<<\"}", "v: '<<'\n"},
        {"{\"v\": \"1_000\"}", "v: '1_000'\n"},
        {"{\"v\": \"0b101\"}", "v: '0b101'\n"},
        {"{\"v\": \"1:30\"}", "v: '1:30'\n"},
        {"{\"v\": \"0777\"}", "v: '0777'\n"},
        {"{\"on\": 1}", "'on': 1\n"},
        {"{\"n\": 2.0}", "'n': 2.0\n"}, /* go-yaml's "n" is false */
        /* … and what it reads as a string stays plain */
        {"{\"v\": \"yesterday\"}", "v: yesterday\n"},
        {"{\"v\": \"v1.2\"}", "v: v1.2\n"},
        {"{\"v\": \"1-255\"}", "v: 1-255\n"},
        {"{\"v\": \"2024-01-02\"}", "v: '2024-01-02'\n"},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        json_t *t = json_loads(table[i].json, JSON_DECODE_ANY, NULL);
        assert_non_null(t);
        char *text = emit_text(t);
        if (strcmp(text, table[i].yaml) != 0)
            fail_msg("%s: expected\n%s--- got\n%s", table[i].json, table[i].yaml, text);
        free(text);
        json_decref(t);
    }

    /* emit appends */
    struct strbuf out = STRBUF_INIT;
    strbuf_adds(&out, "# head\n");
    json_t *t = json_pack("{s:i}", "a", 1);
    struct doc_error err;
    assert_int_equal(yamltree_emit(t, &out, &err), 0);
    assert_string_equal(strbuf_str(&out), "# head\na: 1\n");
    json_decref(t);

    /* what cannot be written is an error, and nothing is appended */
    t = json_stringn_nocheck("\xff", 1);
    assert_int_equal(yamltree_emit(t, &out, &err), -1);
    assert_string_equal(strbuf_str(&out), "# head\na: 1\n");
    json_decref(t);
    t = json_object();
    json_object_setn_new_nocheck(t, "a\0b", 3, json_true());
    assert_int_equal(yamltree_emit(t, &out, &err), -1);
    assert_string_equal(err.message, "mapping keys must not contain NUL characters");
    json_decref(t);
    assert_int_equal(yamltree_emit(NULL, &out, &err), -1);
    strbuf_free(&out);
}

/* ---- JSON text ---------------------------------------------------------- */

static void test_json_text(void **state)
{
    static const char *const texts[] = {
        "{\"a\":1,\"b\":[true,null,\"x\"],\"c\":{\"d\":\"é\"}}",
        "{\"a\": 1, \"b\": [true, null, \"x\"], \"c\": {\"d\": \"\\u00e9\"}}",
        "{\n  \"name\": \"demo\",\n  \"n\": -3,\n  \"r\": 1.25,\n  \"e\": 1e3,\n"
        "  \"list\": [],\n  \"obj\": {},\n  \"s\": \"a\\\"b\\\\c\\/d\\n\\t\"\n}\n",
        "[1,2.5,-0,\"\",{},[],false]",
        "{\"key with spaces\":\"value: with colon\",\"#\":\"# not a comment\"}",
        "{\"nested\":{\"deep\":{\"deeper\":[{\"x\":[1,[2,[3]]]}]}}}",
        "\"just a string\"",
        "42",
    };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        json_error_t jerr;
        json_t *want = json_loads(texts[i], JSON_DECODE_ANY, &jerr);
        if (!want)
            fail_msg("bad test JSON %s: %s", texts[i], jerr.text);
        json_t *got = parse_ok(texts[i], NULL);
        if (!json_equal(got, want)) {
            char *g = json_dumps(got, JSON_ENCODE_ANY);
            fail_msg("%s read as YAML gives %s", texts[i], g);
        }
        json_decref(got);
        json_decref(want);
    }

    /* positions in compact JSON */
    struct docpos pos = DOCPOS_INIT;
    json_t *t = parse_ok(texts[0], &pos);
    expect_pos(&pos, "a", 1, 2, 1, 6, DOCPOS_PLAIN);
    expect_pos(&pos, "b", 1, 8, 1, 12, DOCPOS_BLOCK);
    expect_pos(&pos, "b[2]", 0, 0, 1, 23, DOCPOS_QUOTED);
    expect_pos(&pos, "c.d", 1, 33, 1, 37, DOCPOS_QUOTED);
    json_decref(t);
    docpos_free(&pos);
    t = parse_ok(texts[2], &pos);
    expect_pos(&pos, "n", 3, 3, 3, 8, DOCPOS_PLAIN);
    expect_pos(&pos, "s", 8, 3, 8, 8, DOCPOS_QUOTED);
    json_decref(t);
    docpos_free(&pos);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scalar_resolution),
        cmocka_unit_test(test_integer_overflow),
        cmocka_unit_test(test_inf_nan),
        cmocka_unit_test(test_quoted_vs_plain),
        cmocka_unit_test(test_tags),
        cmocka_unit_test(test_block_scalars),
        cmocka_unit_test(test_anchors_aliases),
        cmocka_unit_test(test_alias_bomb),
        cmocka_unit_test(test_duplicate_key),
        cmocka_unit_test(test_non_scalar_keys),
        cmocka_unit_test(test_tab_indentation),
        cmocka_unit_test(test_syntax_errors),
        cmocka_unit_test(test_multiple_documents),
        cmocka_unit_test(test_empty_documents),
        cmocka_unit_test(test_depth_limit),
        cmocka_unit_test(test_invalid_utf8),
        cmocka_unit_test(test_positions),
        cmocka_unit_test(test_docpos_nearest),
        cmocka_unit_test(test_docpos_locate),
        cmocka_unit_test(test_round_trip_strings),
        cmocka_unit_test(test_round_trip_trees),
        cmocka_unit_test(test_emit_text),
        cmocka_unit_test(test_json_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
