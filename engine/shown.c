/*
 * shown: the saved texts of a job kept deflated (see shown.h). It owns one
 * deflate and one inflate stream, reused for every text (an init allocates
 * and clears tens of KB), and the dictionary of each kind, fixed once set.
 * Raw deflate (no zlib header or checksum: the text never leaves memory),
 * a 4 KB window that holds the whole dictionary.
 */
#include "engine/shown.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "util/strbuf.h"
#include "util/xalloc.h"

#define SHOWN_WINDOW_BITS 12 /* a 4 KB window */
/*
 * A 4 KB hash table to match the window (deflate's default is 64 KB), and
 * every pack clears it: for texts of a few KB the default's clearing cost
 * more than the compression.
 */
#define SHOWN_MEM_LEVEL 5
#define SHOWN_DICT_MAX 2048 /* the first text of a kind, up to this much */
#define SHOWN_PACK_MIN 48   /* shorter texts ("[]") are kept as they are */

struct shown {
    uint32_t raw;    /* bytes of the text */
    uint32_t packed; /* bytes of data when deflated; 0: data is the text itself */
    uint8_t kind;
    unsigned char data[];
};

static struct {
    unsigned char *bytes;
    unsigned len;
} dicts[SHOWN_SUMMARY + 1];

static z_stream def, inf;
static bool def_ready, inf_ready;

/* A zlib failure that cannot happen with good memory: the engine stops rather than show garbage. */
static void broken(const char *what, int rc)
{
    fprintf(stderr, "trainjobd: shown: %s failed (zlib %d)\n", what, rc);
    abort();
}

static const unsigned char *dict_of(enum shown_kind kind, const char *text, size_t len,
                                    unsigned *dlen)
{
    if (dicts[kind].bytes == NULL) {
        unsigned n = len < SHOWN_DICT_MAX ? (unsigned)len : SHOWN_DICT_MAX;
        dicts[kind].bytes = xmalloc(n ? n : 1);
        memcpy(dicts[kind].bytes, text, n);
        dicts[kind].len = n;
    }
    *dlen = dicts[kind].len;
    return dicts[kind].bytes;
}

/* The text as it is, when deflating would not make it smaller. */
static struct shown *plain(enum shown_kind kind, const char *text, size_t len)
{
    struct shown *s = xmalloc(sizeof *s + len);
    s->raw = (uint32_t)len;
    s->packed = 0;
    s->kind = (uint8_t)kind;
    memcpy(s->data, text, len);
    return s;
}

struct shown *shown_pack(enum shown_kind kind, const char *text, size_t len)
{
    if (len > UINT32_MAX / 2)
        broken("a text over 2 GB", 0);
    if (len < SHOWN_PACK_MIN)
        return plain(kind, text, len);
    int rc;
    if (!def_ready) {
        rc = deflateInit2(&def, Z_BEST_SPEED, Z_DEFLATED, -SHOWN_WINDOW_BITS, SHOWN_MEM_LEVEL,
                          Z_DEFAULT_STRATEGY);
        if (rc != Z_OK)
            broken("deflateInit2", rc);
        def_ready = true;
    }
    unsigned dlen;
    const unsigned char *dict = dict_of(kind, text, len, &dlen);
    if ((rc = deflateReset(&def)) != Z_OK || (rc = deflateSetDictionary(&def, dict, dlen)) != Z_OK)
        broken("deflateSetDictionary", rc);
    uLong bound = deflateBound(&def, (uLong)len);
    static unsigned char *scratch;
    static size_t scratch_cap;
    if (bound > scratch_cap) {
        scratch_cap = bound;
        free(scratch);
        scratch = xmalloc(scratch_cap);
    }
    def.next_in = (Bytef *)(uintptr_t)text;
    def.avail_in = (uInt)len;
    def.next_out = scratch;
    def.avail_out = (uInt)bound;
    if ((rc = deflate(&def, Z_FINISH)) != Z_STREAM_END)
        broken("deflate", rc);
    size_t packed = (size_t)def.total_out;
    if (packed >= len)
        return plain(kind, text, len);
    struct shown *s = xmalloc(sizeof *s + packed);
    s->raw = (uint32_t)len;
    s->packed = (uint32_t)packed;
    s->kind = (uint8_t)kind;
    memcpy(s->data, scratch, packed);
    return s;
}

/* Inflates s into dst, which has room for s->raw bytes. */
static void unpack(const struct shown *s, unsigned char *dst)
{
    if (s->packed == 0) {
        memcpy(dst, s->data, s->raw);
        return;
    }
    int rc;
    if (!inf_ready) {
        if ((rc = inflateInit2(&inf, -SHOWN_WINDOW_BITS)) != Z_OK)
            broken("inflateInit2", rc);
        inf_ready = true;
    }
    if ((rc = inflateReset(&inf)) != Z_OK ||
        (rc = inflateSetDictionary(&inf, dicts[s->kind].bytes, dicts[s->kind].len)) != Z_OK)
        broken("inflateSetDictionary", rc);
    inf.next_in = (Bytef *)(uintptr_t)s->data;
    inf.avail_in = s->packed;
    inf.next_out = dst;
    inf.avail_out = s->raw;
    if ((rc = inflate(&inf, Z_FINISH)) != Z_STREAM_END || inf.total_out != s->raw)
        broken("inflate", rc);
}

void shown_append(const struct shown *s, struct strbuf *out)
{
    if (s == NULL)
        return;
    strbuf_grow(out, s->raw);
    unpack(s, (unsigned char *)out->buf + out->len);
    out->len += s->raw;
    out->buf[out->len] = '\0';
}

char *shown_text(const struct shown *s)
{
    if (s == NULL)
        return NULL;
    char *t = xmalloc((size_t)s->raw + 1);
    unpack(s, (unsigned char *)t);
    t[s->raw] = '\0';
    return t;
}

size_t shown_size(const struct shown *s)
{
    return s ? sizeof *s + (s->packed ? s->packed : s->raw) : 0;
}
