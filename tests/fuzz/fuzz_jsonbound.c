/*
 * Fuzz target: arbitrary bytes through api/jsonbound — the tokenizer, the
 * spans of a member and of an array's elements, a member compared in place,
 * the bounded loader with a small bound, and a stream fed the input whole,
 * a byte at a time and cut at random (seeded by the input), also with its
 * objects whole in a piece read in place (jsonbound_stream_set_walk, by
 * jsonbound_skip, as api/slurm_rest reads jobs with jobsum). The tokenizer
 * must never read past the input; whatever jansson decodes whole it must
 * find the end of and every span it gives must lie in the input. The
 * stream must give the same, however cut, and for an object jansson
 * decodes, the elements and other members reading it whole gives. A
 * crash, an abort or a failed check is the finding.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/jsonbound.h"
#include "util/strbuf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct spans {
    const char *buf;
    size_t len, count;
};

static int in_input(void *ctx, const char *elem, size_t len)
{
    struct spans *s = ctx;
    if (elem < s->buf || elem + len > s->buf + s->len || len == 0)
        abort();
    s->count++;
    return 0;
}

/* Elements as "<length>:<bytes>", so any byte may be in one. */
static int collect(void *ctx, const char *elem, size_t len)
{
    struct strbuf *sb = ctx;
    strbuf_addf(sb, "%zu:", len);
    strbuf_add(sb, elem, len);
    return 0;
}

/* A walk_fn: an object whole in the piece collected in place, as the stream would hand it. */
static size_t walk_object(void *ctx, const char *data, size_t len)
{
    size_t end = 0;
    if (len == 0 || data[0] != '{' || jsonbound_skip(data, len, &end, NULL) != 0)
        return 0;
    if (end > len)
        abort();
    collect(ctx, data, end);
    return end;
}

/* What a stream read: its elements, its other members (dumped) or why it failed. */
struct streamed {
    struct strbuf elems, rest;
    int rc;
};

/* buf fed in pieces: whole (step 0), size bytes at a time, or cut at random from seed. */
static void stream_read(const char *buf, size_t size, size_t step, unsigned seed, bool walk,
                        struct streamed *out)
{
    out->elems = (struct strbuf)STRBUF_INIT;
    out->rest = (struct strbuf)STRBUF_INIT;
    struct jsonbound_stream *js = jsonbound_stream_new("jobs", 64, 1 << 16, collect, &out->elems);
    if (walk)
        jsonbound_stream_set_walk(js, walk_object);
    for (size_t at = 0; at < size;) {
        size_t n = size - at;
        if (step)
            n = n < step ? n : step;
        else if (seed) {
            seed = seed * 1103515245u + 12345u;
            n = n < (seed >> 16) % 13 ? n : (seed >> 16) % 13;
        }
        /* Each piece a buffer of its own: ASan sees a read past it. */
        char *piece = malloc(n ? n : 1);
        if (piece == NULL)
            abort();
        memcpy(piece, buf + at, n);
        jsonbound_stream_feed(js, piece, n);
        free(piece);
        at += n;
    }
    bool had;
    json_t *j = jsonbound_stream_end(js, &had, &out->rest);
    out->rc = j ? 0 : -1;
    if (j) {
        char *d = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
        strbuf_adds(&out->rest, d ? d : "");
        free(d);
    }
    json_decref(j);
    jsonbound_stream_free(js);
}

static bool same(const struct streamed *a, const struct streamed *b)
{
    return a->rc == b->rc && a->elems.len == b->elems.len &&
           memcmp(strbuf_str(&a->elems), strbuf_str(&b->elems), a->elems.len) == 0 &&
           strcmp(strbuf_str(&a->rest), strbuf_str(&b->rest)) == 0;
}

static void streamed_free(struct streamed *s)
{
    strbuf_free(&s->elems);
    strbuf_free(&s->rest);
}

/* The stream against the whole: the same however cut, and as jansson and the spans read it. */
static void check_stream(const char *buf, size_t size)
{
    unsigned seed = 1;
    for (size_t i = 0; i < size; i++)
        seed = seed * 31u + (unsigned char)buf[i];
    struct streamed whole, bytes, cut, walked, walked_cut;
    stream_read(buf, size, 0, 0, false, &whole);
    stream_read(buf, size, 1, 0, false, &bytes);
    stream_read(buf, size, 0, seed | 1u, false, &cut);
    stream_read(buf, size, 0, 0, true, &walked);
    stream_read(buf, size, 0, seed | 1u, true, &walked_cut);
    if (!same(&whole, &bytes) || !same(&whole, &cut))
        abort(); /* a cut changed what was read */
    if (!same(&whole, &walked) || !same(&whole, &walked_cut))
        abort(); /* reading elements in place changed what was read */
    json_t *doc = json_loadb(buf, size, 0, NULL);
    json_t *jobs = json_object_get(doc, "jobs");
    size_t s, e;
    if (whole.rc == 0 && json_is_array(jobs) && jsonbound_member(buf, size, "jobs", &s, &e)) {
        /* Elements over the stream's 64 bytes are skipped: compared as the spans less those. */
        struct strbuf spans = STRBUF_INIT, kept = STRBUF_INIT;
        if (jsonbound_elements(buf, s, e, collect, &spans) != 0)
            abort(); /* the stream read an array the spans cannot */
        for (const char *p = strbuf_str(&spans), *end = p + spans.len; p < end;) {
            char *colon;
            size_t n = strtoul(p, &colon, 10);
            if (n <= 64)
                strbuf_add(&kept, p, (size_t)(colon + 1 + n - p));
            p = colon + 1 + n;
        }
        if (kept.len != whole.elems.len ||
            memcmp(strbuf_str(&kept), strbuf_str(&whole.elems), kept.len) != 0)
            abort(); /* the stream's elements are not the array's */
        strbuf_free(&spans);
        strbuf_free(&kept);
        /* The other members, unless one of them spells "jobs" with escapes. */
        json_t *rest = json_loads(strbuf_str(&whole.rest), 0, NULL);
        if (rest == NULL)
            abort();
        if (json_object_get(rest, "jobs") == NULL) {
            json_object_del(doc, "jobs");
            char *d = json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS);
            if (d == NULL || strcmp(d, strbuf_str(&whole.rest)) != 0)
                abort(); /* the stream kept other members than the whole has */
            free(d);
        }
        json_decref(rest);
    }
    json_decref(doc);
    streamed_free(&whole);
    streamed_free(&bytes);
    streamed_free(&cut);
    streamed_free(&walked);
    streamed_free(&walked_cut);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* A copy of exactly size bytes: ASan sees any read past the end. */
    char *buf = malloc(size ? size : 1);
    if (buf == NULL)
        return 0;
    memcpy(buf, data, size);
    size_t end = 0;
    int rc = jsonbound_skip(buf, size, &end, NULL);
    if (rc == 0 && end > size)
        abort();
    json_t *whole = json_loadb(buf, size, JSON_DECODE_ANY | JSON_DISABLE_EOF_CHECK, NULL);
    if (whole && rc != 0)
        abort(); /* jansson read a value whose end the tokenizer did not find */
    json_decref(whole);
    size_t s, e;
    if (jsonbound_member(buf, size, "jobs", &s, &e)) {
        if (s > e || e > size)
            abort();
        struct spans sp = {buf, size, 0};
        jsonbound_elements(buf, s, e, in_input, &sp);
    }
    (void)jsonbound_member_is(buf, size, "user_name", "alice");
    struct strbuf why = STRBUF_INIT;
    json_t *j = jsonbound_loadb(buf, size, 4096, &why);
    json_decref(j);
    strbuf_free(&why);
    check_stream(buf, size);
    free(buf);
    return 0;
}
