/*
 * fuzz_exitcodes: libFuzzer target for the exit-code list parser (built with
 * clang by `make fuzz`, and with tests/fuzz/replay.c by `make test`).
 *
 * For any input: the parser never reads past the string, an error points
 * inside it (offset <= length) with a message, and a failed parse leaves the
 * set alone. For an accepted input: the canonical form parses back to the same
 * set, has one item per run and is its own canonical form; so does the
 * set's complement. The raw bytes are also read as sets to check the format
 * round trip and the shadowing check's invariants on sets the grammar would
 * take long to reach.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/exitcodes.h"
#include "util/strbuf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "fuzz_exitcodes: %s:%d: check failed: %s\n", __FILE__, __LINE__,       \
                    #cond);                                                                        \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

static bool same_set(const struct exitcode_set *a, const struct exitcode_set *b)
{
    return memcmp(a, b, sizeof *a) == 0;
}

/* format(set) parses back to set, and is a fixed point of parse+format. */
static void check_round_trip(const struct exitcode_set *set)
{
    struct strbuf text = STRBUF_INIT, again = STRBUF_INIT;
    struct exitcode_set back;
    struct exitcodes_error err;

    exitcodes_format(set, &text);
    CHECK(text.len <= EXITCODES_MAX_LEN);
    CHECK(strlen(strbuf_str(&text)) == text.len);
    if (exitcodes_empty(set)) {
        CHECK(text.len == 0);
        strbuf_free(&text);
        return;
    }
    if (exitcodes_parse(strbuf_str(&text), &back, &err) != 0) {
        fprintf(stderr, "canonical \"%s\" rejected at %zu: %s\n", strbuf_str(&text), err.offset,
                err.message);
        abort();
    }
    CHECK(same_set(&back, set));
    /* canonical: one item per run of consecutive codes, ascending */
    size_t runs = 0, items = 1;
    for (int c = 1; c <= 255; c++)
        if (exitcodes_has(set, c) && !exitcodes_has(set, c - 1))
            runs++;
    for (const char *p = strbuf_str(&text); *p != '\0'; p++)
        items += *p == ',';
    CHECK(items == runs);
    CHECK(strspn(strbuf_str(&text), "0123456789,-") == text.len);
    exitcodes_format(&back, &again);
    CHECK(strcmp(strbuf_str(&again), strbuf_str(&text)) == 0);
    strbuf_free(&text);
    strbuf_free(&again);
}

static void check_parse(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    CHECK(s != NULL);
    if (size > 0)
        memcpy(s, data, size);
    s[size] = '\0';
    size_t len = strlen(s); /* an embedded NUL ends the string early */

    struct exitcode_set set, sentinel;
    struct exitcodes_error err;
    memset(&sentinel, 0xA5, sizeof sentinel);
    set = sentinel;
    memset(&err, 0, sizeof err);

    if (exitcodes_parse(s, &set, &err) == 0) {
        CHECK(len <= EXITCODES_MAX_LEN);
        CHECK(!exitcodes_empty(&set));
        CHECK((set.bits[0] & 1) == 0);
        /* only the grammar's bytes get through */
        CHECK(strspn(s, "0123456789,- \t") == len);
        check_round_trip(&set);
        /* and its complement, which reaches the runs the input left out */
        struct exitcode_set all, rest;
        exitcodes_all(&all);
        for (size_t w = 0; w < 4; w++)
            rest.bits[w] = all.bits[w] & ~set.bits[w];
        CHECK(exitcodes_count(&rest) + exitcodes_count(&set) == 255);
        check_round_trip(&rest);
    } else {
        CHECK(err.offset <= len);
        CHECK(err.offset <= size);
        CHECK(memchr(err.message, '\0', sizeof err.message) != NULL);
        CHECK(err.message[0] != '\0');
        CHECK(same_set(&set, &sentinel));
        if (len > EXITCODES_MAX_LEN)
            CHECK(err.offset == EXITCODES_MAX_LEN);
    }
    /* err may be NULL */
    exitcodes_parse(s, &set, NULL);
    free(s);
}

/* Reads 32 bytes as a set (code 0 dropped). */
static void set_from_bytes(struct exitcode_set *set, const uint8_t *p)
{
    for (size_t w = 0; w < 4; w++) {
        uint64_t v = 0;
        for (size_t b = 0; b < 8; b++)
            v |= (uint64_t)p[w * 8 + b] << (8 * b);
        set->bits[w] = v;
    }
    set->bits[0] &= ~UINT64_C(1);
}

struct shadow_check {
    const struct exitcode_set *rules;
    size_t n;
    size_t last_rule, last_earlier;
    bool any;
    struct exitcode_set seen[8]; /* union of the overlaps reported per rule */
    int whole[8];                /* -1 until reported */
};

static void on_shadow(void *ctx, size_t rule, size_t earlier, const struct exitcode_set *overlap,
                      bool whole)
{
    struct shadow_check *c = ctx;
    struct exitcode_set both, dup;

    CHECK(rule < c->n && earlier < rule);
    /* calls come in order of (rule, earlier) */
    CHECK(!c->any || rule > c->last_rule || (rule == c->last_rule && earlier > c->last_earlier));
    c->any = true;
    c->last_rule = rule;
    c->last_earlier = earlier;
    CHECK(!exitcodes_empty(overlap));
    /* the overlap lies in both rules and in no rule before `earlier` */
    exitcodes_intersect(&both, &c->rules[rule], &c->rules[earlier]);
    exitcodes_intersect(&dup, overlap, &both);
    CHECK(same_set(&dup, overlap));
    for (size_t j = 0; j < earlier; j++) {
        exitcodes_intersect(&dup, overlap, &c->rules[j]);
        CHECK(exitcodes_empty(&dup));
    }
    /* overlaps of one rule never repeat a code */
    exitcodes_intersect(&dup, overlap, &c->seen[rule]);
    CHECK(exitcodes_empty(&dup));
    exitcodes_union(&c->seen[rule], &c->seen[rule], overlap);
    CHECK(c->whole[rule] == -1 || c->whole[rule] == (int)whole);
    c->whole[rule] = whole;
}

/* Runs the shadowing check on up to 8 rules cut from the data. */
static void check_shadowing(const uint8_t *data, size_t size)
{
    struct exitcode_set rules[8];
    size_t n = size / 32 > 8 ? 8 : size / 32;
    struct shadow_check c;

    memset(rules, 0, sizeof rules);
    memset(&c, 0, sizeof c);
    for (size_t i = 0; i < n; i++) {
        set_from_bytes(&rules[i], data + 32 * i);
        check_round_trip(&rules[i]);
        c.whole[i] = -1;
    }
    c.rules = rules;
    c.n = n;
    exitcodes_shadowing(rules, n, on_shadow, &c);

    /* every code of rule i caught earlier is reported exactly once, and
     * `whole` says whether that is all of rule i */
    struct exitcode_set before;
    exitcodes_clear(&before);
    for (size_t i = 0; i < n; i++) {
        struct exitcode_set caught;
        exitcodes_intersect(&caught, &rules[i], &before);
        CHECK(same_set(&caught, &c.seen[i]));
        bool whole = same_set(&caught, &rules[i]);
        if (!exitcodes_empty(&caught))
            CHECK(c.whole[i] == (int)whole);
        else
            CHECK(c.whole[i] == -1);
        exitcodes_union(&before, &before, &rules[i]);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_parse(data, size);
    check_shadowing(data, size);
    return 0;
}
