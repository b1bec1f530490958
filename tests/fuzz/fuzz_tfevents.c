/*
 * fuzz_tfevents: libFuzzer target for the TensorBoard event-file reader
 * (api/tfevents: the TFRecord framing, the protobuf decoder and the log
 * directory follower; built with clang by `make fuzz`, and with
 * tests/fuzz/replay.c by `make test`). An event file is written by a job, so
 * it is hostile input.
 *
 * For any file content:
 *   - framing the bytes whole, or first a prefix cut at a point taken from
 *     the input and then the rest, consumes the same records at the same
 *     offsets and hands on the same values (a record cut short is "not yet",
 *     never damage, and never delivered twice);
 *   - every value handed on has a tag of valid UTF-8 without NUL, at most
 *     TFEVENTS_MAX_TAG bytes; the decoder's check-only pass agrees with its
 *     delivering pass, and its fast path for simple_value events with the
 *     general decoder;
 *   - the follower reading the file written whole, or written in three
 *     pieces with a poll after each, delivers the same scalars and counts the
 *     same damage; its cursor, given to a new reader, reads back the same;
 *   - the same with and without its bulk path for simple_value records;
 *   - wherever framing stands, a record the bulk path takes is one that
 *     tfrecord_next finds whole and checking, with the same values.
 */
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/tfevents.h"
#include "util/strbuf.h"
#include "util/utf8.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "fuzz_tfevents: %s:%d: check failed: %s\n", __FILE__, __LINE__,        \
                    #cond);                                                                        \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* ---- the framing in memory ---- */

struct framed {
    struct strbuf text; /* per record: offset and the values it handed on */
    uint64_t offset;    /* where framing stopped */
    uint64_t ok, bad, oversized, bad_proto, resync_bytes;
};

static int on_value(void *ctx, const struct tfevents_value *v)
{
    struct strbuf *sb = ctx;
    CHECK(v->tag_len > 0 && v->tag_len <= TFEVENTS_MAX_TAG);
    CHECK(memchr(v->tag, 0, v->tag_len) == NULL);
    CHECK(utf8_valid(v->tag, v->tag_len));
    strbuf_addf(sb, " %d:%.*s:%" PRId64 ":%a", (int)v->kind, (int)v->tag_len, v->tag, v->step,
                v->value);
    return 0;
}

/* Frames buf[f->offset .. n) as the follower does, stopping at a record not yet whole. */
static void frame(const uint8_t *buf, size_t n, struct framed *f)
{
    while (f->offset < n) {
        struct strbuf bulk = STRBUF_INIT;
        uint64_t taken;
        size_t used = tfevents_decode_simple_run(buf + f->offset, n - f->offset, 1, 0, on_value,
                                                 &bulk, &taken);
        CHECK(taken <= 1 && (taken == 1) == (used > 0));
        struct tfrecord rec;
        enum tfrecord_status st = tfrecord_next(buf + f->offset, n - f->offset, &rec);
        if (taken == 1) {
            struct strbuf general = STRBUF_INIT;
            CHECK(st == TFRECORD_OK && rec.consumed == used);
            CHECK(tfevents_decode(rec.data, rec.len, on_value, &general, NULL) ==
                  TFEVENTS_DECODE_OK);
            CHECK(strcmp(strbuf_str(&general), strbuf_str(&bulk)) == 0);
            strbuf_free(&general);
        }
        strbuf_free(&bulk);
        if (st == TFRECORD_PARTIAL) {
            CHECK(rec.need > n - f->offset);
            break;
        }
        CHECK(rec.consumed > 0);
        if (st == TFRECORD_OVERSIZED) {
            if (rec.consumed > n - f->offset)
                break;
            f->oversized++;
        } else if (st == TFRECORD_RESYNC) {
            f->resync_bytes += rec.consumed;
        } else if (st == TFRECORD_BAD) {
            f->bad++;
        } else {
            f->ok++;
            strbuf_addf(&f->text, "@%" PRIu64, f->offset);
            size_t mark = f->text.len;
            enum tfevents_decode_status check =
                tfevents_decode(rec.data, rec.len, NULL, NULL, NULL);
            uint64_t bad_values = 0;
            enum tfevents_decode_status st2 =
                tfevents_decode(rec.data, rec.len, on_value, &f->text, &bad_values);
            CHECK(check == st2);
            /* The fast path for simple_value events agrees with the general decoder. */
            struct strbuf general = STRBUF_INIT;
            uint64_t bad2 = 0;
            tfevents_decode_fast_path(false);
            enum tfevents_decode_status st3 =
                tfevents_decode(rec.data, rec.len, on_value, &general, &bad2);
            tfevents_decode_fast_path(true);
            CHECK(st3 == st2 && bad2 == bad_values);
            CHECK(strcmp(strbuf_str(&general), strbuf_str(&f->text) + mark) == 0);
            strbuf_free(&general);
            if (st2 == TFEVENTS_DECODE_BAD)
                f->bad_proto++;
            strbuf_addf(&f->text, " bad=%" PRIu64 "\n", bad_values);
        }
        CHECK(rec.consumed <= n - f->offset);
        f->offset += rec.consumed;
    }
}

static void same_framing(const struct framed *a, const struct framed *b)
{
    CHECK(a->offset == b->offset);
    CHECK(a->ok == b->ok && a->bad == b->bad && a->oversized == b->oversized);
    CHECK(a->bad_proto == b->bad_proto && a->resync_bytes == b->resync_bytes);
    CHECK(a->text.len == b->text.len);
    CHECK(a->text.len == 0 || memcmp(a->text.buf, b->text.buf, a->text.len) == 0);
}

/* ---- the follower on a real file ---- */

static char *dir; /* one scratch directory per process */
static char *file;

static void on_scalar(void *ctx, const struct tfevents_scalar *s)
{
    strbuf_addf(ctx, "%s|%s|%" PRId64 "|%a|%a\n", s->run, s->tag, s->step, s->value, s->wall_time);
}

static void write_at(const uint8_t *data, size_t off, size_t n, bool create)
{
    int fd = open(file, O_WRONLY | O_CREAT | (create ? O_TRUNC : O_APPEND), 0644);
    CHECK(fd >= 0);
    CHECK(pwrite(fd, data + off, n, (off_t)off) == (ssize_t)n);
    close(fd);
}

struct followed {
    struct strbuf text, cursor;
    struct tfevents_stats stats;
};

/* Writes data in pieces cut at cuts[] (ascending, ending with size), polling after each. */
static void follow(const uint8_t *data, size_t size, const size_t *cuts, int ncuts,
                   struct followed *out)
{
    struct strbuf err = STRBUF_INIT;
    unlink(file);
    write_at(data, 0, 0, true);
    struct tfevents_dir *d = tfevents_open(dir, &err);
    CHECK(d != NULL);
    size_t done = 0;
    for (int i = 0; i < ncuts; i++) {
        write_at(data, done, cuts[i] - done, false);
        done = cuts[i];
        CHECK(tfevents_poll(d, NULL, on_scalar, &out->text, NULL, &err) == 0);
    }
    CHECK(done == size);
    out->stats = *tfevents_stats(d);
    tfevents_cursor(d, &out->cursor);
    tfevents_close(d);

    /* The cursor reads back as itself. */
    struct strbuf again = STRBUF_INIT;
    d = tfevents_open(dir, &err);
    CHECK(d != NULL);
    CHECK(tfevents_set_cursor(d, strbuf_str(&out->cursor), &err) == 0);
    tfevents_cursor(d, &again);
    CHECK(strcmp(strbuf_str(&again), strbuf_str(&out->cursor)) == 0);
    tfevents_close(d);
    strbuf_free(&again);
    strbuf_free(&err);
}

static void cleanup(void)
{
    unlink(file);
    rmdir(dir);
}

static void setup(void)
{
    if (dir != NULL)
        return;
    char tmpl[] = "/tmp/fuzz_tfevents.XXXXXX";
    CHECK(mkdtemp(tmpl) != NULL);
    dir = strdup(tmpl);
    size_t n = strlen(dir) + 64;
    file = malloc(n);
    snprintf(file, n, "%s/events.out.tfevents.1.fuzz", dir);
    atexit(cleanup);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    setup();
    size_t cut = size ? (data[0] * 257u + (size > 1 ? data[1] : 0)) % (size + 1) : 0;

    struct framed whole = {STRBUF_INIT, 0, 0, 0, 0, 0, 0};
    struct framed parts = {STRBUF_INIT, 0, 0, 0, 0, 0, 0};
    frame(data, size, &whole);
    frame(data, cut, &parts); /* what was written so far */
    CHECK(parts.offset <= cut);
    frame(data, size, &parts); /* and the rest once it came */
    same_framing(&whole, &parts);

    struct followed a = {STRBUF_INIT, STRBUF_INIT, {0}}, b = {STRBUF_INIT, STRBUF_INIT, {0}};
    size_t one[] = {size};
    size_t cut2 = cut + (size - cut) / 2;
    size_t three[] = {cut, cut2, size};
    follow(data, size, one, 1, &a);
    follow(data, size, three, 3, &b);
    struct followed c = {STRBUF_INIT, STRBUF_INIT, {0}};
    tfevents_decode_fast_path(false);
    follow(data, size, three, 3, &c);
    tfevents_decode_fast_path(true);
    CHECK(strcmp(strbuf_str(&b.text), strbuf_str(&c.text)) == 0);
    CHECK(strcmp(strbuf_str(&b.cursor), strbuf_str(&c.cursor)) == 0);
    CHECK(memcmp(&b.stats, &c.stats, offsetof(struct tfevents_stats, last_hole_file)) == 0);
    CHECK(strcmp(strbuf_str(&a.text), strbuf_str(&b.text)) == 0);
    CHECK(strcmp(strbuf_str(&a.cursor), strbuf_str(&b.cursor)) == 0);
    CHECK(a.stats.bytes == b.stats.bytes && a.stats.records == b.stats.records);
    CHECK(a.stats.scalars == b.stats.scalars && a.stats.bad_crc == b.stats.bad_crc);
    CHECK(a.stats.bad_proto == b.stats.bad_proto && a.stats.resync_bytes == b.stats.resync_bytes);
    CHECK(a.stats.oversized == b.stats.oversized && a.stats.bad_values == b.stats.bad_values);
    CHECK(a.stats.bytes == whole.offset);
    CHECK(a.stats.records == whole.ok && a.stats.bad_crc == whole.bad);

    strbuf_free(&whole.text);
    strbuf_free(&parts.text);
    strbuf_free(&a.text);
    strbuf_free(&a.cursor);
    strbuf_free(&b.text);
    strbuf_free(&b.cursor);
    strbuf_free(&c.text);
    strbuf_free(&c.cursor);
    return 0;
}
