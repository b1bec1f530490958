/*
 * test_logfollow: a followed worker log (engine/logfollow) read back through
 * its stream and the client's frame parser (api/logframes): every byte of a
 * log far larger than the stream's cap arrives in order; a rotation is
 * followed into the next file; generations rotated away unread are reported
 * with their size ("… N MiB skipped …", an S frame); the worker's end ends
 * the stream at the log's end (E); a client resumes at the cursor it had;
 * hostile frames are refused, not guessed.
 */
// clang-format off
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
// clang-format on

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/logframes.h"
#include "engine/logfollow.h"
#include "engine/stream.h"
#include "util/logindex.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

struct fixture {
    char *dir;
    char *log; /* dir/job.worker-0.log */
    char *rotated;
};

static int setup(void **state)
{
    char tmpl[] = "/tmp/test_logfollow.XXXXXX";
    if (mkdtemp(tmpl) == NULL)
        return -1;
    struct fixture *f = xcalloc(1, sizeof *f);
    f->dir = xstrdup(tmpl);
    f->log = xasprintf("%s/job.worker-0.log", tmpl);
    f->rotated = xasprintf("%s.1", f->log);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    unlink(f->log);
    unlink(f->rotated);
    rmdir(f->dir);
    free(f->dir);
    free(f->log);
    free(f->rotated);
    free(f);
    return 0;
}

/* Appends n bytes of a recognisable pattern starting at absolute position from. */
static void append(const char *path, uint64_t from, size_t n)
{
    FILE *fp = fopen(path, "ab");
    assert_non_null(fp);
    for (size_t i = 0; i < n; i++)
        fputc('a' + (int)((from + i) % 26), fp);
    fclose(fp);
}

/* Drains everything the stream has now (refills included) into out. */
static void drain(struct stream *s, struct strbuf *out)
{
    char buf[65536];
    size_t n;
    while ((n = stream_read(s, buf, sizeof buf)) > 0)
        strbuf_add(out, buf, n);
}

/* An unframed follow of a log written and rotated, read once at the end. */
static void test_every_byte_across_a_rotation(void **state)
{
    struct fixture *f = *state;
    size_t cap = 1u << 20;
    append(f->log, 0, 100);
    struct logfollow_start how = {f->log, -1, false, NULL, cap, true, false};
    struct strbuf err = STRBUF_INIT;
    struct stream *s = logfollow_open(&how, &err);
    assert_non_null(s);
    struct strbuf out = STRBUF_INIT;
    drain(s, &out);
    assert_int_equal(out.len, 100);
    /* The shim fills the file to its cap, rotates, and writes more: 12 MiB beyond the stream cap.
     */
    append(f->log, 100, cap - 100);
    assert_int_equal(rename(f->log, f->rotated), 0);
    logfollow_rotated(s);
    append(f->log, cap, 300);
    logfollow_poke(s, true);
    drain(s, &out);
    assert_true(stream_closed(s));
    assert_int_equal(out.len, cap + 300);
    for (size_t i = 0; i < out.len; i++)
        if (out.buf[i] != 'a' + (int)(i % 26))
            fail_msg("byte %zu differs", i);
    strbuf_free(&out);
    stream_unref(s);
    strbuf_free(&err);
}

/* A reader that fell behind by several generations: the gap is said, with its size. */
static void test_skipped_generations_are_said(void **state)
{
    struct fixture *f = *state;
    size_t cap = 4096;
    append(f->log, 0, 10);
    struct logfollow_start how = {f->log, -1, false, NULL, cap, true, false};
    struct strbuf err = STRBUF_INIT;
    struct stream *s = logfollow_open(&how, &err);
    assert_non_null(s);
    /* Three rotations while the client reads nothing: ours, one lost, FILE.1, FILE. */
    uint64_t pos = 10;
    for (int r = 0; r < 3; r++) {
        append(f->log, pos, cap - (r == 0 ? 10 : 0));
        pos += cap - (r == 0 ? 10 : 0);
        unlink(f->rotated);
        assert_int_equal(rename(f->log, f->rotated), 0);
        logfollow_rotated(s);
    }
    append(f->log, pos, 5);
    logfollow_poke(s, true);
    struct strbuf out = STRBUF_INIT;
    drain(s, &out);
    /* ours (4096, held open) + "… 4 KiB skipped …" + FILE.1 (4096) + FILE (5) */
    const char *marker = strstr(strbuf_str(&out), "… 4 KiB skipped");
    assert_non_null(marker);
    /* on a line of its own: the pattern has no newline, so one is added before it */
    assert_int_equal(marker - out.buf, 4097);
    assert_int_equal(out.buf[4096], '\n');
    const char *after = strchr(marker, '\n') + 1;
    assert_int_equal(out.buf + out.len - after, 4096 + 5);
    strbuf_free(&out);
    stream_unref(s);
    strbuf_free(&err);
}

struct collected {
    struct strbuf data;
    uint64_t skipped;
    int skips;
};

static int collect_data(void *ctx, const char *p, size_t n)
{
    strbuf_add(&((struct collected *)ctx)->data, p, n);
    return 0;
}

static int collect_skip(void *ctx, uint64_t bytes)
{
    struct collected *c = ctx;
    c->skipped += bytes;
    c->skips++;
    return 0;
}

/* Framed: positions, a resume at the cursor, and the end frame. */
static void test_framed_resume(void **state)
{
    struct fixture *f = *state;
    append(f->log, 0, 1000);
    struct logfollow_start how = {f->log, -1, true, NULL, 1u << 20, true, false};
    struct strbuf err = STRBUF_INIT;
    struct stream *s = logfollow_open(&how, &err);
    assert_non_null(s);
    struct strbuf wire = STRBUF_INIT;
    drain(s, &wire);
    struct collected c = {STRBUF_INIT, 0, 0};
    struct logframes lf;
    logframes_init(&lf, collect_data, collect_skip, &c);
    /* The connection is cut in the middle of a data frame: only what arrived counts. */
    assert_int_equal(logframes_feed(&lf, wire.buf, wire.len - 400), 0);
    char cursor[64];
    assert_true(logframes_cursor(&lf, cursor, sizeof cursor));
    assert_int_equal(c.data.len, 600);
    stream_unref(s); /* the engine restarts */
    append(f->log, 1000, 50);
    how.from = cursor;
    s = logfollow_open(&how, &err);
    assert_non_null(s);
    logfollow_poke(s, true);
    strbuf_reset(&wire);
    drain(s, &wire);
    logframes_reset_stream(&lf);
    assert_int_equal(logframes_feed(&lf, wire.buf, wire.len), 0);
    assert_true(lf.ended);
    assert_int_equal(c.skips, 0);
    assert_int_equal(c.data.len, 1050);
    for (size_t i = 0; i < c.data.len; i++)
        if (c.data.buf[i] != 'a' + (int)(i % 26))
            fail_msg("byte %zu differs", i);
    /* A cursor into a generation rotated away twice: resumed with a gap of unknown size. */
    stream_unref(s);
    how.from = "1:5";
    s = logfollow_open(&how, &err);
    assert_non_null(s);
    strbuf_reset(&wire);
    drain(s, &wire);
    assert_non_null(strstr(strbuf_str(&wire), "S 0\n"));
    stream_unref(s);
    logframes_free(&lf);
    strbuf_free(&c.data);
    strbuf_free(&wire);
    strbuf_free(&err);
}

/* --tail N starts N lines from the end, and the follow goes on from there. */
static void test_tail_then_follow(void **state)
{
    struct fixture *f = *state;
    FILE *fp = fopen(f->log, "w");
    fputs("one\ntwo\nthree\n", fp);
    fclose(fp);
    struct logfollow_start how = {f->log, 2, false, NULL, 1u << 20, true, false};
    struct strbuf err = STRBUF_INIT;
    struct stream *s = logfollow_open(&how, &err);
    struct strbuf out = STRBUF_INIT;
    drain(s, &out);
    assert_string_equal(strbuf_str(&out), "two\nthree\n");
    fp = fopen(f->log, "a");
    fputs("four", fp); /* a partial last line arrives as it is */
    fclose(fp);
    logfollow_poke(s, false);
    drain(s, &out);
    assert_string_equal(strbuf_str(&out), "two\nthree\nfour");
    assert_false(stream_closed(s));
    stream_unref(s);
    how.tail = 0;
    s = logfollow_open(&how, &err);
    strbuf_reset(&out);
    drain(s, &out);
    assert_int_equal(out.len, 0);
    stream_unref(s);
    strbuf_free(&out);
    strbuf_free(&err);
}

/* The whole log is both generations the shim keeps: FILE.1, then FILE. */
static void test_whole_log_from_rotated(void **state)
{
    struct fixture *f = *state;
    append(f->rotated, 0, 4096);
    append(f->log, 4096, 100);
    struct logfollow_start how = {f->log, -1, false, NULL, 4096, true, false};
    struct strbuf err = STRBUF_INIT;
    struct stream *s = logfollow_open(&how, &err);
    assert_non_null(s);
    append(f->log, 4196, 4);
    logfollow_poke(s, true);
    struct strbuf out = STRBUF_INIT;
    drain(s, &out);
    assert_true(stream_closed(s));
    assert_int_equal(out.len, 4200);
    for (size_t i = 0; i < out.len; i++)
        if (out.buf[i] != 'a' + (int)(i % 26))
            fail_msg("byte %zu differs", i);
    stream_unref(s);
    strbuf_free(&out);
    strbuf_free(&err);
}

/* A log that does not exist yet is followed from its first byte once it appears. */
static void test_log_not_there_yet(void **state)
{
    struct fixture *f = *state;
    struct logfollow_start how = {f->log, 10, true, NULL, 1u << 20, true, false};
    struct strbuf err = STRBUF_INIT;
    struct stream *s = logfollow_open(&how, &err);
    assert_non_null(s);
    struct strbuf wire = STRBUF_INIT;
    drain(s, &wire);
    assert_int_equal(wire.len, 0);
    append(f->log, 0, 30);
    logfollow_poke(s, true);
    drain(s, &wire);
    assert_true(stream_closed(s));
    struct collected c = {STRBUF_INIT, 0, 0};
    struct logframes lf;
    logframes_init(&lf, collect_data, collect_skip, &c);
    assert_int_equal(logframes_feed(&lf, wire.buf, wire.len), 0);
    assert_int_equal(c.data.len, 30);
    assert_true(lf.ended);
    logframes_free(&lf);
    strbuf_free(&c.data);
    strbuf_free(&wire);
    stream_unref(s);
    strbuf_free(&err);
}

/* Frames from a hostile or foreign server: refused, never taken for data. */
/* Writes index records (offset, ms) to path. */
static void write_index(const char *path, const uint64_t (*recs)[2], size_t n)
{
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    for (size_t i = 0; i < n; i++) {
        unsigned char rec[LOGINDEX_RECORD];
        logindex_encode(&(struct logindex_rec){recs[i][0], recs[i][1]}, rec);
        assert_int_equal(fwrite(rec, 1, sizeof rec, fp), sizeof rec);
    }
    fclose(fp);
}

/* With times: a T frame where the index says the time changes, D frames cut there, C, then E. */
static void test_times_from_the_index(void **state)
{
    struct fixture *f = *state;
    append(f->log, 0, 300);
    char *idx = xasprintf("%s.idx", f->log);
    const uint64_t recs[][2] = {
        {0, 1700000000000ull}, {100, 1700000000500ull}, {250, 1700000001000ull}};
    write_index(idx, recs, 3);
    struct logfollow_start how = {f->log, -1, true, NULL, 1u << 20, true, true};
    struct strbuf err = STRBUF_INIT;
    struct stream *s = logfollow_open(&how, &err);
    assert_non_null(s);
    struct strbuf wire = STRBUF_INIT;
    drain(s, &wire);
    const char *w = strbuf_str(&wire);
    assert_non_null(strstr(w, "T 1700000000000\nD 100\n"));
    assert_non_null(strstr(w, "T 1700000000500\nD 150\n"));
    assert_non_null(strstr(w, "T 1700000001000\nD 50\n"));
    assert_true(wire.len > 2 && strcmp(w + wire.len - 2, "C\n") == 0);
    logfollow_poke(s, true);
    drain(s, &wire);
    struct collected c = {STRBUF_INIT, 0, 0};
    struct logframes lf;
    logframes_init(&lf, collect_data, collect_skip, &c);
    assert_int_equal(logframes_feed(&lf, wire.buf, wire.len), 0);
    assert_true(lf.ended);
    assert_true(lf.have_time);
    assert_true(lf.time_ms == 1700000001000ull);
    assert_int_equal(c.data.len, 300); /* the bytes exactly as written */
    for (size_t i = 0; i < c.data.len; i++)
        if (c.data.buf[i] != 'a' + (int)(i % 26))
            fail_msg("byte %zu differs", i);
    logframes_free(&lf);
    strbuf_free(&c.data);
    strbuf_free(&wire);
    stream_unref(s);
    unlink(idx);
    free(idx);
    strbuf_free(&err);
}

/* A hostile index: times are used up to the first record that goes backwards or is absurd. */
static void test_hostile_index(void **state)
{
    struct fixture *f = *state;
    append(f->log, 0, 300);
    char *idx = xasprintf("%s.idx", f->log);
    const uint64_t recs[][2] = {{0, 1700000000000ull},
                                {100, 1600000000000ull}, /* back in time */
                                {200, 1800000000000ull}};
    write_index(idx, recs, 3);
    struct logfollow_start how = {f->log, -1, true, NULL, 1u << 20, true, true};
    struct strbuf err = STRBUF_INIT;
    struct stream *s = logfollow_open(&how, &err);
    assert_non_null(s);
    logfollow_poke(s, true);
    struct strbuf wire = STRBUF_INIT;
    drain(s, &wire);
    assert_non_null(strstr(strbuf_str(&wire), "T 1700000000000\nD 300\n"));
    assert_null(strstr(strbuf_str(&wire), "T 1800000000000"));
    stream_unref(s);
    /* Garbage (not whole records, absurd times, a symbolic link): no times, every byte. */
    unlink(idx);
    assert_int_equal(symlink("/etc/passwd", idx), 0);
    s = logfollow_open(&how, &err);
    assert_non_null(s);
    logfollow_poke(s, true);
    strbuf_reset(&wire);
    drain(s, &wire);
    assert_null(strstr(strbuf_str(&wire), "T "));
    assert_non_null(strstr(strbuf_str(&wire), "D 300\n"));
    stream_unref(s);
    unlink(idx);
    FILE *fp = fopen(idx, "wb");
    assert_non_null(fp);
    fputs("0123456789abcdef0123", fp); /* 20 bytes: one record of nonsense, then a cut one */
    fclose(fp);
    s = logfollow_open(&how, &err);
    assert_non_null(s);
    logfollow_poke(s, true);
    strbuf_reset(&wire);
    drain(s, &wire);
    assert_null(strstr(strbuf_str(&wire), "T "));
    assert_non_null(strstr(strbuf_str(&wire), "D 300\n"));
    stream_unref(s);
    unlink(idx);
    free(idx);
    strbuf_free(&wire);
    strbuf_free(&err);
}

static void test_bad_frames(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "X 1\n",     "D\n",     "D -5\n", "D 99999999999999999999999\n",
        "P 1\n",     "P a b\n", "S x\n",  "hello world\n",
        "E extra\n", "D 1 2\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct collected c = {STRBUF_INIT, 0, 0};
        struct logframes lf;
        logframes_init(&lf, collect_data, collect_skip, &c);
        assert_int_not_equal(logframes_feed(&lf, bad[i], strlen(bad[i])), 0);
        assert_true(lf.broken);
        assert_int_equal(c.data.len, 0);
        logframes_free(&lf);
        strbuf_free(&c.data);
    }
    /* A header that never ends is refused once longer than any header can be. */
    struct logframes lf;
    logframes_init(&lf, NULL, NULL, NULL);
    char longhead[200];
    memset(longhead, '7', sizeof longhead);
    assert_int_not_equal(logframes_feed(&lf, longhead, sizeof longhead), 0);
    logframes_free(&lf);
    /* Good frames split at every byte parse the same. */
    const char *good = "P 12 5\nD 3\nabcS 4096\nD 1\nzE\n";
    struct collected c = {STRBUF_INIT, 0, 0};
    logframes_init(&lf, collect_data, collect_skip, &c);
    for (size_t i = 0; good[i]; i++)
        assert_int_equal(logframes_feed(&lf, good + i, 1), 0);
    assert_string_equal(strbuf_str(&c.data), "abcz");
    assert_int_equal(c.skipped, 4096);
    assert_true(lf.ended);
    char cursor[64];
    assert_true(logframes_cursor(&lf, cursor, sizeof cursor));
    assert_string_equal(cursor, "12:9");
    logframes_free(&lf);
    strbuf_free(&c.data);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_every_byte_across_a_rotation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_skipped_generations_are_said, setup, teardown),
        cmocka_unit_test_setup_teardown(test_framed_resume, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tail_then_follow, setup, teardown),
        cmocka_unit_test_setup_teardown(test_log_not_there_yet, setup, teardown),
        cmocka_unit_test_setup_teardown(test_whole_log_from_rotated, setup, teardown),
        cmocka_unit_test_setup_teardown(test_times_from_the_index, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hostile_index, setup, teardown),
        cmocka_unit_test(test_bad_frames),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
