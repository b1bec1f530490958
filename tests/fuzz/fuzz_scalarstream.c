/*
 * fuzz_scalarstream: libFuzzer target for the client's decoder of trainjobd's
 * scalar push stream (api/scalarpage's scalar_stream; built with clang by
 * `make fuzz`, and with tests/fuzz/replay.c by `make test`). The stream
 * comes from a server, so it is hostile input.
 *
 * For any input: the pages and points handed on, the end reason and whether
 * the stream broke are the same whether the input arrives whole, byte by
 * byte, or cut at a point taken from the input; a broken or ended stream
 * hands nothing on after that; no line over the cap is ever held.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/apierror.h"
#include "api/scalarpage.h"
#include "util/strbuf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "fuzz_scalarstream: %s:%d: check failed: %s\n", __FILE__, __LINE__,    \
                    #cond);                                                                        \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

#define MAX_LINE 4096

struct result {
    size_t pages, points;
    struct strbuf digest; /* what was handed on: tags, steps, cursors */
    bool broken;
    char end[64];
};

static int on_page(void *ctx, struct scalar_page *p)
{
    struct result *r = ctx;
    CHECK(!r->broken);
    r->pages++;
    r->points += p->count;
    strbuf_addf(&r->digest, "[%s]", p->cursor ? p->cursor : "-");
    for (size_t i = 0; i < p->count; i++)
        strbuf_addf(&r->digest, "%s/%s@%lld;", p->points[i].run, p->points[i].tag,
                    (long long)p->points[i].step);
    return 0;
}

/* Feeds in pieces of at most step bytes (0: whole). */
static void decode(const char *in, size_t size, size_t step, struct result *r)
{
    memset(r, 0, sizeof *r);
    struct scalar_stream ss;
    scalar_stream_init(&ss, MAX_LINE);
    size_t off = 0;
    while (off < size && !r->broken) {
        size_t n = step && size - off > step ? step : size - off;
        struct api_error err;
        memset(&err, 0, sizeof err);
        size_t pages = r->pages;
        if (scalar_stream_feed(&ss, in + off, n, on_page, r, &err) != 0) {
            r->broken = true;
            CHECK(err.message[0] != '\0');
        }
        CHECK(ss.line.len <= MAX_LINE);
        if (ss.end && !r->broken)
            CHECK(r->pages >= pages);
        off += n;
    }
    if (ss.end)
        snprintf(r->end, sizeof r->end, "%s", ss.end);
    scalar_stream_free(&ss);
}

static void same(const struct result *a, const struct result *b)
{
    CHECK(a->broken == b->broken);
    CHECK(a->pages == b->pages && a->points == b->points);
    CHECK(strcmp(a->end, b->end) == 0);
    CHECK(a->digest.len == b->digest.len &&
          (a->digest.len == 0 || memcmp(a->digest.buf, b->digest.buf, a->digest.len) == 0));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *in = (const char *)data;
    struct result whole, bytes, cut;
    decode(in, size, 0, &whole);
    decode(in, size, 1, &bytes);
    decode(in, size, size ? 1 + data[0] % (size + 1) : 1, &cut);
    same(&whole, &bytes);
    same(&whole, &cut);
    strbuf_free(&whole.digest);
    strbuf_free(&bytes.digest);
    strbuf_free(&cut.digest);
    return 0;
}
