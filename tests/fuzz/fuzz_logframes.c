/*
 * fuzz_logframes: libFuzzer target for the client's parser of a framed log
 * stream (api/logframes; built with clang by `make fuzz`, and with
 * tests/fuzz/replay.c by `make test`). The stream comes from a server, so it
 * is hostile input.
 *
 * For any input: the log bytes handed on are never more than the input and
 * are a contiguous part of it; the result is the same whether the input
 * arrives whole, byte by byte, or cut at a point taken from the input; so are
 * the time (T) and caught-up (C) state; a
 * broken stream stays broken and hands nothing on after breaking.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/logframes.h"
#include "util/strbuf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "fuzz_logframes: %s:%d: check failed: %s\n", __FILE__, __LINE__,       \
                    #cond);                                                                        \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

struct result {
    struct strbuf data;
    uint64_t skipped;
    int skips;
    const char *base; /* the input, to check data is taken from it */
    size_t size;
};

static int on_data(void *ctx, const char *p, size_t n)
{
    struct result *r = ctx;
    CHECK(p >= r->base && p + n <= r->base + r->size);
    strbuf_add(&r->data, p, n);
    return 0;
}

static int on_skip(void *ctx, uint64_t bytes)
{
    struct result *r = ctx;
    r->skipped += bytes;
    r->skips++;
    return 0;
}

/* Parses data in pieces of at most step bytes (0: whole); fills r and lf. */
static void parse(const char *in, size_t size, size_t step, struct result *r, struct logframes *lf)
{
    memset(r, 0, sizeof *r);
    r->base = in;
    r->size = size;
    logframes_init(lf, on_data, on_skip, r);
    size_t off = 0;
    while (off < size) {
        size_t n = step == 0 || size - off < step ? size - off : step;
        int rc = logframes_feed(lf, in + off, n);
        if (lf->broken) {
            size_t before = r->data.len;
            CHECK(rc != 0);
            CHECK(logframes_feed(lf, "D 1\nx", 5) != 0);
            CHECK(r->data.len == before);
            break;
        }
        off += n;
    }
    CHECK(r->data.len <= size);
}

static void same(const struct result *a, const struct logframes *la, const struct result *b,
                 const struct logframes *lb)
{
    CHECK(la->broken == lb->broken);
    if (la->broken)
        return; /* where it broke may differ by a piece; nothing else is promised */
    CHECK(a->data.len == b->data.len);
    CHECK(a->data.len == 0 || memcmp(a->data.buf, b->data.buf, a->data.len) == 0);
    CHECK(a->skipped == b->skipped && a->skips == b->skips);
    CHECK(la->ended == lb->ended);
    CHECK(la->have_position == lb->have_position);
    CHECK(la->have_time == lb->have_time && la->time_ms == lb->time_ms);
    CHECK(la->caught_up == lb->caught_up);
    char ca[64], cb[64];
    CHECK(logframes_cursor(la, ca, sizeof ca) == logframes_cursor(lb, cb, sizeof cb));
    if (la->have_position)
        CHECK(strcmp(ca, cb) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *in = (const char *)data;
    struct result whole, bytes, cut;
    struct logframes lw, lb, lc;
    parse(in, size, 0, &whole, &lw);
    parse(in, size, 1, &bytes, &lb);
    parse(in, size, size ? 1 + data[0] % 61 : 0, &cut, &lc);
    same(&whole, &lw, &bytes, &lb);
    same(&whole, &lw, &cut, &lc);
    struct result *all[] = {&whole, &bytes, &cut};
    struct logframes *lfs[] = {&lw, &lb, &lc};
    for (int i = 0; i < 3; i++) {
        strbuf_free(&all[i]->data);
        logframes_free(lfs[i]);
    }
    return 0;
}
