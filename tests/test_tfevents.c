/*
 * test_tfevents: the TensorBoard event-file reader (api/tfevents). CRC-32C
 * against the standard check value and a bitwise reference; the record
 * framing at every cut of a record, with a damaged data CRC, a damaged
 * header and an oversized record; fixtures written by the real protobuf
 * runtime (tests/fixtures/tensorboard/gen_events.py: both scalar forms,
 * other plugins, two ranks, a partial last record, a corrupted file, NaN
 * and ±Inf); reading a file as it grows a byte at a time and in random
 * pieces (each scalar exactly once); paging with a limit and resuming from
 * the cursor in a new reader; hostile cursors; symlinks, a FIFO and a
 * truncated or replaced file; a million points; a 64 GiB hole between
 * two records, skipped unread. The bulk path for simple_value records
 * against tfrecord_next and the general decoder, cut at every byte, under
 * limits, and in a follower, on the crc32 instruction and on the table.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h> /* after the four headers it needs */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "api/tfevents.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

/* ---- helpers ---- */

struct got {
    struct strbuf text; /* one line per scalar: run tag step value */
    size_t n;
};

static void on_scalar(void *ctx, const struct tfevents_scalar *s)
{
    struct got *g = ctx;
    strbuf_addf(&g->text, "%s %s %" PRId64 " %.9g %.3f\n", s->run, s->tag, s->step, s->value,
                s->wall_time);
    g->n++;
}

static void got_free(struct got *g)
{
    strbuf_free(&g->text);
    g->n = 0;
}

static void remove_tree(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return;
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        struct dirent *e;
        while (d && (e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            char *child = xasprintf("%s/%s", path, e->d_name);
            remove_tree(child);
            free(child);
        }
        if (d)
            closedir(d);
        rmdir(path);
    } else {
        unlink(path);
    }
}

static int make_dir(void **state)
{
    char tmpl[] = "/tmp/test_tfevents.XXXXXX";
    if (mkdtemp(tmpl) == NULL)
        return -1;
    *state = xstrdup(tmpl);
    return 0;
}

static int remove_dir(void **state)
{
    remove_tree(*state);
    free(*state);
    return 0;
}

/* Runs the fixture generator into DIR/logs (and DIR/growing.rest). */
static void gen_fixtures(const char *dir, const char *scenarios)
{
    const char *top = getenv("TRAINJOB_TOP");
    char *cmd = xasprintf("/usr/bin/python3 %s/tests/fixtures/tensorboard/gen_events.py %s/logs %s",
                          top ? top : ".", dir, scenarios);
    int rc = system(cmd);
    if (rc != 0)
        fail_msg("%s: exit %d", cmd, rc);
    free(cmd);
}

static void append_file(const char *path, const void *data, size_t n)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, data, n), (ssize_t)n);
    close(fd);
}

static char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    struct strbuf sb = STRBUF_INIT;
    char tmp[65536];
    size_t k;
    while ((k = fread(tmp, 1, sizeof tmp, f)) > 0)
        strbuf_add(&sb, tmp, k);
    fclose(f);
    return strbuf_detach(&sb, n);
}

static struct tfevents_dir *open_dir(const char *path)
{
    struct strbuf err = STRBUF_INIT;
    struct tfevents_dir *d = tfevents_open(path, &err);
    if (d == NULL)
        fail_msg("%s", strbuf_str(&err));
    strbuf_free(&err);
    return d;
}

static struct tfevents_poll_result poll_all(struct tfevents_dir *d, struct got *g)
{
    struct strbuf err = STRBUF_INIT;
    struct tfevents_poll_result r;
    assert_int_equal(tfevents_poll(d, NULL, on_scalar, g, &r, &err), 0);
    strbuf_free(&err);
    return r;
}

/* Whether the text of g holds line exactly once. */
static int count_lines(const struct got *g, const char *line)
{
    int n = 0;
    size_t len = strlen(line);
    for (const char *p = strbuf_str(&g->text); (p = strstr(p, line)) != NULL; p += len)
        if (p == strbuf_str(&g->text) || p[-1] == '\n')
            n++;
    return n;
}

/* ---- CRC and framing ---- */

static uint32_t crc_bitwise(const uint8_t *p, size_t n)
{
    uint32_t c = 0xffffffffu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ (0x82f63b78u & (0u - (c & 1u)));
    }
    return ~c;
}

static int count_value(void *ctx, const struct tfevents_value *v)
{
    (void)ctx;
    (void)v;
    return 0;
}

/*
 * How many checks of tfevents_crc32c fail (no cmocka asserts: it also runs in
 * a forked child, on the table path, while the parent runs on the CPU's
 * crc32 instruction).
 */
static int crc_mismatches(void)
{
    int bad = tfevents_crc32c("123456789", 9) != 0xe3069283u; /* the CRC-32C check value */
    bad += tfevents_crc32c("", 0) != 0;
    static uint8_t buf[8200];
    srand(7);
    for (size_t i = 0; i < sizeof buf; i++)
        buf[i] = (uint8_t)rand();
    for (size_t off = 0; off < 9; off++)
        for (size_t n = 0; n + off <= sizeof buf; n += 1 + n / 3)
            bad += tfevents_crc32c(buf + off, n) != crc_bitwise(buf + off, n);
    /* Every length a record of small scalars has, at every alignment: each tail of 0-7 bytes. */
    for (size_t off = 0; off < 9; off++)
        for (size_t n = 0; n <= 300; n++)
            bad += tfevents_crc32c(buf + off, n) != crc_bitwise(buf + off, n);
    /* Longer ones run in three streams of 64 or 1,024 bytes: each length around their ends. */
    for (size_t n = 300; n <= 700; n++)
        bad += tfevents_crc32c(buf + n % 8, n) != crc_bitwise(buf + n % 8, n);
    for (size_t at = 3 * 1024; at + 8 < sizeof buf; at += 3 * 1024)
        for (size_t n = at - 200; n <= at + 8; n++)
            bad += tfevents_crc32c(buf + n % 8, n) != crc_bitwise(buf + n % 8, n);
    bad += tfevents_crc32c(buf, sizeof buf) != crc_bitwise(buf, sizeof buf);
    uint32_t c = crc_bitwise(buf, 8);
    bad += tfevents_masked_crc32c(buf, 8) != ((c >> 15) | (c << 17)) + 0xa282ead8u;
    /* tfrecord_next has its own copy of each path. */
    struct strbuf rec = STRBUF_INIT;
    struct tfrecord r;
    tfrecord_write(&rec, buf, 100);
    bad += tfrecord_next((uint8_t *)rec.buf, rec.len, &r) != TFRECORD_OK;
    rec.buf[50] ^= 1;
    bad += tfrecord_next((uint8_t *)rec.buf, rec.len, &r) != TFRECORD_BAD;
    rec.buf[3] ^= 1;
    bad += tfrecord_next((uint8_t *)rec.buf, rec.len, &r) != TFRECORD_RESYNC;
    /* Records long enough for three streams: a flipped byte in any block is found. */
    const size_t longer[] = {192, 500, 3072, 5000, 8000};
    for (size_t i = 0; i < sizeof longer / sizeof *longer; i++) {
        strbuf_reset(&rec);
        tfrecord_write(&rec, buf, longer[i]);
        bad += tfrecord_next((uint8_t *)rec.buf, rec.len, &r) != TFRECORD_OK;
        for (size_t at = TFRECORD_HEADER; at < rec.len; at += longer[i] / 7) {
            rec.buf[at] ^= 0x20;
            bad += tfrecord_next((uint8_t *)rec.buf, rec.len, &r) != TFRECORD_BAD;
            rec.buf[at] ^= 0x20;
        }
    }
    /*
     * So has tfevents_decode_simple_run: a record of every tag length it takes (up to 118
     * bytes: the summary's length then needs a second byte, which the general path reads).
     */
    uint64_t taken;
    char tag[128];
    for (size_t t = 1; t <= 125; t++) {
        memset(tag, 'a' + (int)(t % 26), t);
        tag[t] = '\0';
        strbuf_reset(&rec);
        tfevents_write_simple(&rec, (int64_t)t * 977, (double)t, tag, (float)t);
        bad += tfevents_decode_simple_run((uint8_t *)rec.buf, rec.len, 0, 0, count_value, NULL,
                                          &taken) != (t <= 118 ? rec.len : 0);
        bad += taken != (t <= 118);
        for (size_t at = 0; at < rec.len; at += 1 + at / 4) { /* any flipped bit: not taken */
            rec.buf[at] ^= (char)(1 << (at % 8));
            bad += tfevents_decode_simple_run((uint8_t *)rec.buf, rec.len, 0, 0, count_value, NULL,
                                              &taken) != 0;
            rec.buf[at] ^= (char)(1 << (at % 8));
        }
    }
    strbuf_free(&rec);
    return bad;
}

static void test_crc32c(void **state)
{
    (void)state;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) { /* before this process's first CRC: the table path */
        setenv("TRAINJOB_CRC_SOFTWARE", "1", 1);
        _exit(crc_mismatches() ? 1 : 0);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    assert_int_equal(crc_mismatches(), 0);
}

static void test_record_cuts(void **state)
{
    (void)state;
    struct strbuf sb = STRBUF_INIT;
    tfevents_write_simple(&sb, 7, 1.5, "loss", 0.25f);
    const uint8_t *b = (const uint8_t *)sb.buf;
    struct tfrecord rec;
    /* Every prefix is "not yet", never damage, and says how much it needs. */
    for (size_t n = 0; n < sb.len; n++) {
        assert_int_equal(tfrecord_next(b, n, &rec), TFRECORD_PARTIAL);
        assert_true(rec.need > n && rec.need <= sb.len);
        assert_int_equal(rec.consumed, 0);
    }
    assert_int_equal(tfrecord_next(b, sb.len, &rec), TFRECORD_OK);
    assert_int_equal(rec.consumed, sb.len);
    assert_int_equal(rec.len, sb.len - TFRECORD_OVERHEAD);

    /* A flipped data byte: the record is skipped whole. */
    uint8_t *bad = xmalloc(sb.len);
    memcpy(bad, b, sb.len);
    bad[TFRECORD_HEADER + 3] ^= 0x10;
    assert_int_equal(tfrecord_next(bad, sb.len, &rec), TFRECORD_BAD);
    assert_int_equal(rec.consumed, sb.len);

    /* A flipped length byte: scanned past to the next header that checks. */
    struct strbuf two = STRBUF_INIT;
    strbuf_add(&two, b, sb.len);
    strbuf_add(&two, b, sb.len);
    two.buf[1] ^= 0x01;
    size_t pos = 0, skipped = 0;
    enum tfrecord_status st;
    while ((st = tfrecord_next((uint8_t *)two.buf + pos, two.len - pos, &rec)) == TFRECORD_RESYNC) {
        pos += rec.consumed;
        skipped += rec.consumed;
    }
    assert_int_equal(st, TFRECORD_OK);
    assert_int_equal(skipped, sb.len);
    /* The same damage seen through a short window scans the same bytes, in more steps. */
    assert_int_equal(tfrecord_next((uint8_t *)two.buf, 20, &rec), TFRECORD_RESYNC);
    assert_int_equal(rec.consumed, 20 - TFRECORD_HEADER + 1);

    /* A header announcing more than the limit (its CRC checks): skipped unread. */
    uint8_t head[TFRECORD_HEADER];
    uint64_t big = (uint64_t)TFEVENTS_MAX_RECORD + 1;
    for (int i = 0; i < 8; i++)
        head[i] = (uint8_t)(big >> (8 * i));
    uint32_t m = tfevents_masked_crc32c(head, 8);
    for (int i = 0; i < 4; i++)
        head[8 + i] = (uint8_t)(m >> (8 * i));
    assert_int_equal(tfrecord_next(head, sizeof head, &rec), TFRECORD_OVERSIZED);
    assert_int_equal(rec.consumed, big + TFRECORD_OVERHEAD);
    /* A length near 2^64 cannot be skipped: it is damage. */
    memset(head, 0xff, 8);
    m = tfevents_masked_crc32c(head, 8);
    for (int i = 0; i < 4; i++)
        head[8 + i] = (uint8_t)(m >> (8 * i));
    assert_int_equal(tfrecord_next(head, sizeof head, &rec), TFRECORD_RESYNC);
    free(bad);
    strbuf_free(&sb);
    strbuf_free(&two);
}

struct vals {
    int n;
    struct tfevents_value v[8];
    char tags[8][32];
};

static int on_value(void *ctx, const struct tfevents_value *v)
{
    struct vals *vs = ctx;
    if (vs->n < 8) {
        vs->v[vs->n] = *v;
        snprintf(vs->tags[vs->n], sizeof vs->tags[0], "%.*s", (int)v->tag_len, v->tag);
        vs->n++;
    }
    return 0;
}

static void decode_cases(void);

static void test_decode(void **state)
{
    (void)state;
    /* The same answers with and without the fast path for simple_value events. */
    for (int fast = 1; fast >= 0; fast--) {
        tfevents_decode_fast_path(fast);
        decode_cases();
    }
    tfevents_decode_fast_path(true);
}

static void decode_cases(void)
{
    struct strbuf sb = STRBUF_INIT;
    tfevents_write_simple(&sb, -5, 1234.5, "train/loss", -2.5f);
    struct vals vs = {0};
    uint64_t bad = 9;
    const uint8_t *data = (const uint8_t *)sb.buf + TFRECORD_HEADER;
    size_t len = sb.len - TFRECORD_OVERHEAD;
    assert_int_equal(tfevents_decode(data, len, on_value, &vs, &bad), TFEVENTS_DECODE_OK);
    assert_int_equal(bad, 0);
    assert_int_equal(vs.n, 1);
    assert_string_equal(vs.tags[0], "train/loss");
    assert_int_equal(vs.v[0].kind, TFEVENTS_SIMPLE);
    assert_true(vs.v[0].value == -2.5);
    assert_true(vs.v[0].step == -5);
    assert_true(vs.v[0].wall_time == 1234.5);
    assert_null(vs.v[0].plugin);

    /* Every truncation of the Event is bad and hands nothing on. */
    for (size_t n = 1; n < len; n++) {
        memset(&vs, 0, sizeof vs);
        tfevents_decode(data, n, on_value, &vs, &bad); /* cut between fields: a valid Event */
        assert_int_equal(vs.n, 0);
    }
    /* A group (wire type 3) is refused; an empty Event is fine. */
    const uint8_t group[] = {0x0b, 0x0c};
    assert_int_equal(tfevents_decode(group, sizeof group, on_value, &vs, &bad),
                     TFEVENTS_DECODE_BAD);
    assert_int_equal(tfevents_decode(group, 0, on_value, &vs, &bad), TFEVENTS_DECODE_OK);
    /* A tag that is not UTF-8 spoils only its value. */
    const uint8_t badtag[] = {0x2a, 0x0b, 0x0a, 0x09, 0x0a, 0x02, 0xc3,
                              0x28, 0x15, 0,    0,    0x80, 0x3f};
    memset(&vs, 0, sizeof vs);
    assert_int_equal(tfevents_decode(badtag, sizeof badtag, on_value, &vs, &bad),
                     TFEVENTS_DECODE_OK);
    assert_int_equal(vs.n, 0);
    assert_int_equal(bad, 1);

    /* Step 0 and wall_time 0 are absent on the wire (proto3 defaults). */
    strbuf_reset(&sb);
    tfevents_write_simple(&sb, 0, 0, "t", 1.0f);
    memset(&vs, 0, sizeof vs);
    data = (const uint8_t *)sb.buf + TFRECORD_HEADER;
    len = sb.len - TFRECORD_OVERHEAD;
    assert_int_equal(tfevents_decode(data, len, on_value, &vs, &bad), TFEVENTS_DECODE_OK);
    assert_int_equal(vs.n, 1);
    assert_true(vs.v[0].step == 0 && vs.v[0].wall_time == 0 && vs.v[0].value == 1.0);

    /* A later step field wins over the one before the summary; a second value is kept. */
    struct strbuf ev = STRBUF_INIT;
    strbuf_add(&ev, data, len);
    const uint8_t more[] = {0x10, 0x07, 0x2a, 0x0a, 0x0a, 0x08, 0x0a,
                            0x01, 'u',  0x15, 0,    0,    0,    0x40};
    strbuf_add(&ev, more, sizeof more);
    memset(&vs, 0, sizeof vs);
    assert_int_equal(tfevents_decode((uint8_t *)ev.buf, ev.len, on_value, &vs, &bad),
                     TFEVENTS_DECODE_OK);
    assert_int_equal(vs.n, 2);
    assert_string_equal(vs.tags[1], "u");
    assert_true(vs.v[0].step == 7 && vs.v[1].step == 7 && vs.v[1].value == 2.0);
    strbuf_free(&ev);
    strbuf_free(&sb);
}

/* ---- fixtures from the real writer ---- */

static void test_fixtures(void **state)
{
    const char *dir = *state;
    gen_fixtures(dir, "");
    char *logs = xasprintf("%s/logs", dir);
    struct tfevents_dir *d = open_dir(logs);
    struct got g = {STRBUF_INIT, 0};
    poll_all(d, &g);
    const struct tfevents_stats *st = tfevents_stats(d);

    /* Runs: the root and every subdirectory that holds event files, in name order. */
    assert_int_equal(tfevents_run_count(d), 5);
    const char *runs[] = {".", "corrupt", "growing", "rank0", "rank1"};
    for (size_t i = 0; i < 5; i++)
        assert_string_equal(tfevents_run_name(d, i), runs[i]);

    /* TF1/PyTorch simple_value, with NaN and ±Inf as written. */
    for (int step = 0; step < 100; step++) {
        char line[128];
        snprintf(line, sizeof line, "rank0 loss %d %.9g ", step, (double)(float)(1.0 / (1 + step)));
        assert_int_equal(count_lines(&g, line), 1);
        snprintf(line, sizeof line, "rank0 lr %d %.9g ", step,
                 (double)(float)(0.1 * pow(0.5, step / 10)));
        assert_int_equal(count_lines(&g, line), 1);
    }
    assert_int_equal(count_lines(&g, "rank0 weird 1 nan "), 1);
    assert_int_equal(count_lines(&g, "rank0 weird 2 inf "), 1);
    assert_int_equal(count_lines(&g, "rank0 weird 3 -inf "), 1);

    /* TF2 tensors: float_val, double_val, and both in tensor_content. */
    for (int step = 0; step < 100; step++) {
        char line[128];
        snprintf(line, sizeof line, "rank1 loss %d %.9g ", step, (double)(float)(1.0 / (1 + step)));
        assert_int_equal(count_lines(&g, line), 1);
        snprintf(line, sizeof line, "rank1 acc %d %.9g ", step, step / 100.0);
        assert_int_equal(count_lines(&g, line), 1);
        snprintf(line, sizeof line, "rank1 f_content %d %.9g ", step, 2.0 * step);
        assert_int_equal(count_lines(&g, line), 1);
        snprintf(line, sizeof line, "rank1 d_content %d %.9g ", step, -3.0 * step);
        assert_int_equal(count_lines(&g, line), 1);
    }
    /* Other plugins' values (histogram, image, text, a declared non-scalar plugin) are skipped. */
    assert_null(strstr(strbuf_str(&g.text), " notes "));
    assert_null(strstr(strbuf_str(&g.text), " other_plugin "));
    assert_null(strstr(strbuf_str(&g.text), " hist2 "));
    assert_null(strstr(strbuf_str(&g.text), " weights "));
    assert_null(strstr(strbuf_str(&g.text), " sample "));
    assert_int_equal(st->other_values, 2 + 30);

    /* The corrupted file: good records around a bad CRC, a bad header and a non-Event. */
    assert_int_equal(count_lines(&g, "corrupt loss 0 1 "), 1);
    assert_int_equal(count_lines(&g, "corrupt loss 1 "), 0);
    assert_int_equal(count_lines(&g, "corrupt loss 2 "), 1);
    assert_int_equal(count_lines(&g, "corrupt loss 3 "), 0);
    assert_int_equal(count_lines(&g, "corrupt loss 4 "), 1);
    assert_int_equal(count_lines(&g, "corrupt loss 5 "), 1);
    assert_int_equal(st->bad_crc, 1);
    assert_int_equal(st->resyncs, 1);
    assert_int_equal(st->bad_proto, 1);
    assert_int_equal(count_lines(&g, ". root_tag 42 0.25 "), 1);

    /* The tests' own writer writes the very bytes python-protobuf does. */
    char *root_file = xasprintf("%s/events.out.tfevents.1700000003.host", logs);
    size_t root_len;
    char *root_data = slurp(root_file, &root_len);
    struct strbuf mine = STRBUF_INIT;
    tfevents_write_simple(&mine, 42, 1.7e9 + 42, "root_tag", 0.25f);
    assert_true(root_len > mine.len);
    assert_memory_equal(root_data + root_len - mine.len, mine.buf, mine.len);
    strbuf_free(&mine);
    free(root_data);
    free(root_file);

    /* The file still being written: 9 of 10, the 10th once it is whole, and only once. */
    assert_int_equal(count_lines(&g, "growing loss 8 "), 1);
    assert_int_equal(count_lines(&g, "growing loss 9 "), 0);
    size_t total = g.n;
    assert_int_equal(total, 100 * 2 + 5 + 400 + 4 + 1 + 9);
    struct tfevents_poll_result r = poll_all(d, &g);
    assert_int_equal(r.scalars, 0);
    assert_int_equal(r.bytes, 0);
    char *rest_path = xasprintf("%s/growing.rest", dir);
    size_t rest_len;
    char *rest = slurp(rest_path, &rest_len);
    char *growing = xasprintf("%s/growing/events.out.tfevents.1700000001.host", logs);
    append_file(growing, rest, 1); /* one more byte: still not whole */
    r = poll_all(d, &g);
    assert_int_equal(r.scalars, 0);
    append_file(growing, rest + 1, rest_len - 1);
    r = poll_all(d, &g);
    assert_int_equal(r.scalars, 1);
    assert_int_equal(count_lines(&g, "growing loss 9 0.100000001 "), 1);
    r = poll_all(d, &g);
    assert_int_equal(r.scalars, 0);
    assert_int_equal(st->bad_crc, 1); /* the half record was never damage */

    /* A new run appears. */
    struct strbuf sb = STRBUF_INIT;
    tfevents_write_simple(&sb, 1, 2.0, "late", 3.0f);
    char *newdir = xasprintf("%s/deep/er/run", logs);
    char *cmd = xasprintf("mkdir -p %s", newdir);
    assert_int_equal(system(cmd), 0);
    char *newfile = xasprintf("%s/events.out.tfevents.1.x", newdir);
    append_file(newfile, sb.buf, sb.len);
    r = poll_all(d, &g);
    assert_int_equal(r.scalars, 1);
    assert_int_equal(count_lines(&g, "deep/er/run late 1 3 "), 1);

    tfevents_close(d);
    got_free(&g);
    strbuf_free(&sb);
    free(cmd);
    free(newdir);
    free(newfile);
    free(rest);
    free(rest_path);
    free(growing);
    free(logs);
}

/* Reads src into a fresh log directory as a writer would, in pieces, polling after each. */
static void grow_and_poll(const char *dir, const char *data, size_t len, unsigned seed,
                          int bytewise, struct got *g)
{
    char *logs = xasprintf("%s/grow%u", dir, seed);
    assert_int_equal(mkdir(logs, 0755), 0);
    char *file = xasprintf("%s/events.out.tfevents.9.h", logs);
    struct tfevents_dir *d = open_dir(logs);
    srand(seed);
    size_t off = 0;
    while (off < len) {
        size_t n = bytewise ? 1 : 1 + (size_t)rand() % 97;
        if (n > len - off)
            n = len - off;
        append_file(file, data + off, n);
        off += n;
        poll_all(d, g);
    }
    tfevents_close(d);
    free(file);
    free(logs);
}

static void test_growing_pieces(void **state)
{
    const char *dir = *state;
    gen_fixtures(dir, "tf2");
    char *src = xasprintf("%s/logs/rank1/events.out.tfevents.1700000000.host.2.0.v2", dir);
    size_t len;
    char *data = slurp(src, &len);

    /* The whole file at once. */
    char *one = xasprintf("%s/one", dir);
    assert_int_equal(mkdir(one, 0755), 0);
    char *file = xasprintf("%s/events.out.tfevents.9.h", one);
    append_file(file, data, len);
    struct tfevents_dir *d = open_dir(one);
    struct got whole = {STRBUF_INIT, 0};
    poll_all(d, &whole);
    tfevents_close(d);
    assert_int_equal(whole.n, 400);

    /* A byte at a time, and in random pieces: the same scalars, each once, in order. */
    struct got bytes = {STRBUF_INIT, 0}, pieces = {STRBUF_INIT, 0};
    grow_and_poll(dir, data, len, 1, 1, &bytes);
    grow_and_poll(dir, data, len, 2, 0, &pieces);
    /* The run is "." in each, the tags are the same: compare text. */
    assert_string_equal(strbuf_str(&bytes.text), strbuf_str(&whole.text));
    assert_string_equal(strbuf_str(&pieces.text), strbuf_str(&whole.text));
    got_free(&whole);
    got_free(&bytes);
    got_free(&pieces);
    free(data);
    free(src);
    free(one);
    free(file);
}

static void test_cursor_paging(void **state)
{
    const char *dir = *state;
    gen_fixtures(dir, "simple tf2 corrupt root");
    char *logs = xasprintf("%s/logs", dir);
    struct tfevents_dir *d = open_dir(logs);
    struct got whole = {STRBUF_INIT, 0};
    poll_all(d, &whole);
    tfevents_close(d);

    /* Pages of at most 7 records, each by a new reader resumed from the last cursor. */
    struct got paged = {STRBUF_INIT, 0};
    struct strbuf cursor = STRBUF_INIT, err = STRBUF_INIT;
    struct tfevents_limit lim = {0, 7};
    int pages = 0;
    for (;;) {
        d = open_dir(logs);
        assert_int_equal(tfevents_set_cursor(d, strbuf_str(&cursor), &err), 0);
        struct tfevents_poll_result r;
        assert_int_equal(tfevents_poll(d, &lim, on_scalar, &paged, &r, &err), 0);
        assert_true(r.records <= 7);
        strbuf_reset(&cursor);
        tfevents_cursor(d, &cursor);
        tfevents_close(d);
        pages++;
        assert_true(pages < 1000);
        if (!r.more)
            break;
    }
    assert_true(pages > 30);
    assert_string_equal(strbuf_str(&paged.text), strbuf_str(&whole.text));

    /* A byte limit pages too; the cursor names every file read, printable and without spaces. */
    d = open_dir(logs);
    struct tfevents_limit blim = {1000, 0};
    struct tfevents_poll_result r;
    struct got g = {STRBUF_INIT, 0};
    assert_int_equal(tfevents_poll(d, &blim, on_scalar, &g, &r, &err), 0);
    assert_true(r.more);
    assert_true(r.bytes >= 1000 && r.bytes < 1000 + 200);
    strbuf_reset(&cursor);
    tfevents_cursor(d, &cursor);
    for (const char *p = strbuf_str(&cursor); *p; p++)
        assert_true(*p > ' ' && *p < 127);
    tfevents_close(d);

    got_free(&whole);
    got_free(&paged);
    got_free(&g);
    strbuf_free(&cursor);
    strbuf_free(&err);
    free(logs);
}

static void test_cursor_hostile(void **state)
{
    const char *dir = *state;
    struct tfevents_dir *d = open_dir(dir);
    struct strbuf err = STRBUF_INIT;
    const char *bad[] = {
        "../x:1", "/abs:1",  "a/../b:1", "a//b:1",
        "./a:1",  "a:",      "a",        "a:-1",
        "a:1,",   ",a:1",    "%00:1",    "a%2:1",
        "a b:1",  "a:1,a:2", "a:1x",     "a:99999999999999999999",
        "a\n:1",  "!t",      "a!",       "../x!t",
        "a!b:1",  "a!t,a!t",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        strbuf_reset(&err);
        if (tfevents_set_cursor(d, bad[i], &err) != -1)
            fail_msg("cursor \"%s\" was taken", bad[i]);
        assert_non_null(strstr(strbuf_str(&err), "cursor"));
    }
    /* Names with any byte round-trip through the escaping. */
    assert_int_equal(tfevents_set_cursor(d, "z:0,r%2C1/ev%3Atfevents%25:12,.!x,r%2C1!a%21b", &err),
                     0);
    struct strbuf c = STRBUF_INIT;
    tfevents_cursor(d, &c);
    assert_string_equal(strbuf_str(&c), "r%2C1/ev%3Atfevents%25:12,z:0,.!x,r%2C1!a%21b");
    /* Once only, before polling. */
    assert_int_equal(tfevents_set_cursor(d, "", &err), -1);
    tfevents_close(d);
    strbuf_free(&c);
    strbuf_free(&err);
}

/* A cursor past a damaged stretch, or pointing inside a record, resynchronises. */
static void test_cursor_mid_record(void **state)
{
    const char *dir = *state;
    struct strbuf sb = STRBUF_INIT;
    for (int i = 0; i < 10; i++)
        tfevents_write_simple(&sb, i, 0, "t", (float)i);
    char *file = xasprintf("%s/events.out.tfevents.1.h", dir);
    append_file(file, sb.buf, sb.len);
    size_t one = sb.len / 10;
    struct tfevents_dir *d = open_dir(dir);
    struct strbuf err = STRBUF_INIT;
    char *cur = xasprintf("events.out.tfevents.1.h:%zu", one * 3 + 5);
    assert_int_equal(tfevents_set_cursor(d, cur, &err), 0);
    struct got g = {STRBUF_INIT, 0};
    poll_all(d, &g);
    assert_int_equal(g.n, 6); /* records 4..9 */
    assert_int_equal(count_lines(&g, ". t 4 4 "), 1);
    assert_int_equal(tfevents_stats(d)->resyncs, 1);
    tfevents_close(d);
    got_free(&g);
    strbuf_free(&sb);
    strbuf_free(&err);
    free(cur);
    free(file);
}

static void alarm_handler(int sig)
{
    (void)sig;
    static const char msg[] = "test_tfevents: the reader blocked (a FIFO?)\n";
    if (write(2, msg, sizeof msg - 1) < 0)
        _exit(2);
    _exit(1);
}

static void test_hostile_tree(void **state)
{
    const char *dir = *state;
    struct strbuf sb = STRBUF_INIT;
    tfevents_write_simple(&sb, 1, 0, "secret", 42.0f);
    char *outside = xasprintf("%s/outside", dir);
    char *logs = xasprintf("%s/logs", dir);
    assert_int_equal(mkdir(outside, 0755), 0);
    assert_int_equal(mkdir(logs, 0755), 0);
    char *p = xasprintf("%s/events.out.tfevents.1.h", outside);
    append_file(p, sb.buf, sb.len);
    free(p);
    /* A symlinked run directory, a symlinked event file, a FIFO named like one. */
    p = xasprintf("%s/linkrun", logs);
    assert_int_equal(symlink(outside, p), 0);
    free(p);
    p = xasprintf("%s/events.out.tfevents.2.h", logs);
    char *target = xasprintf("%s/events.out.tfevents.1.h", outside);
    assert_int_equal(symlink(target, p), 0);
    free(p);
    p = xasprintf("%s/fifo", logs);
    assert_int_equal(mkdir(p, 0755), 0);
    free(p);
    p = xasprintf("%s/fifo/events.out.tfevents.3.h", logs);
    assert_int_equal(mkfifo(p, 0644), 0);
    free(p);

    signal(SIGALRM, alarm_handler);
    alarm(20);
    struct tfevents_dir *d = open_dir(logs);
    struct got g = {STRBUF_INIT, 0};
    poll_all(d, &g);
    alarm(0);
    assert_int_equal(g.n, 0);
    assert_int_equal(tfevents_run_count(d), 0);
    assert_true(tfevents_stats(d)->skipped_entries >= 2);

    /* Truncated, then replaced by another file under the same name: read again from 0. */
    char *f = xasprintf("%s/events.out.tfevents.5.h", logs);
    struct strbuf two = STRBUF_INIT;
    tfevents_write_simple(&two, 1, 0, "a", 1.0f);
    tfevents_write_simple(&two, 2, 0, "a", 2.0f);
    append_file(f, two.buf, two.len);
    poll_all(d, &g);
    assert_int_equal(g.n, 2);
    assert_int_equal(truncate(f, 0), 0);
    append_file(f, sb.buf, sb.len); /* shorter than before */
    poll_all(d, &g);
    assert_int_equal(g.n, 3);
    assert_int_equal(tfevents_stats(d)->truncated, 1);
    char *tmp = xasprintf("%s/x.tmp", logs);
    append_file(tmp, two.buf, two.len);
    append_file(tmp, two.buf, two.len);
    assert_int_equal(rename(tmp, f), 0);
    poll_all(d, &g);
    assert_int_equal(g.n, 7);
    assert_int_equal(tfevents_stats(d)->truncated, 2);
    /* Replaced by a copy of itself grown by one record (rsync without --inplace): only the new one.
     */
    size_t flen;
    char *fdata = slurp(f, &flen);
    struct strbuf one = STRBUF_INIT;
    tfevents_write_simple(&one, 9, 0, "a", 9.0f);
    append_file(tmp, fdata, flen);
    append_file(tmp, one.buf, one.len);
    assert_int_equal(rename(tmp, f), 0);
    poll_all(d, &g);
    assert_int_equal(g.n, 8);
    assert_int_equal(count_lines(&g, ". a 9 9 "), 1);
    assert_int_equal(tfevents_stats(d)->truncated, 2);
    strbuf_free(&one);
    free(fdata);
    tfevents_close(d);

    got_free(&g);
    strbuf_free(&sb);
    strbuf_free(&two);
    free(outside);
    free(logs);
    free(target);
    free(f);
    free(tmp);
}

static void test_oversized(void **state)
{
    const char *dir = *state;
    char *file = xasprintf("%s/events.out.tfevents.1.h", dir);
    struct strbuf sb = STRBUF_INIT;
    tfevents_write_simple(&sb, 1, 0, "before", 1.0f);
    size_t big = TFEVENTS_MAX_RECORD + 10;
    char *blob = xcalloc(1, big);
    tfrecord_write(&sb, blob, big);
    append_file(file, sb.buf, sb.len - 100); /* the big record not whole yet */
    struct tfevents_dir *d = open_dir(dir);
    struct got g = {STRBUF_INIT, 0};
    poll_all(d, &g);
    assert_int_equal(g.n, 1);
    assert_int_equal(tfevents_stats(d)->oversized, 0);
    struct strbuf after = STRBUF_INIT;
    strbuf_add(&after, sb.buf + sb.len - 100, 100);
    tfevents_write_simple(&after, 2, 0, "after", 2.0f);
    append_file(file, after.buf, after.len);
    poll_all(d, &g);
    assert_int_equal(g.n, 2);
    assert_int_equal(count_lines(&g, ". after 2 2 "), 1);
    assert_int_equal(tfevents_stats(d)->oversized, 1);
    tfevents_close(d);
    got_free(&g);
    strbuf_free(&sb);
    strbuf_free(&after);
    free(blob);
    free(file);
}

/* Bytes this process has read so far (rchar of /proc/self/io), or -1 when unknown. */
static long long bytes_read(void)
{
    FILE *f = fopen("/proc/self/io", "r");
    long long v = -1;
    char line[128];
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "rchar: %lld", &v) == 1)
            break;
    if (f)
        fclose(f);
    return v;
}

/*
 * A 64 GiB hole (truncate -s, nothing on disk) between two records: both
 * are read in a few pages of 8 MiB, and the hole is skipped unread instead
 * of scanned a byte at a time for a header it cannot hold.
 */
static void test_sparse_hole(void **state)
{
    const char *dir = *state;
    const off_t hole_end = (off_t)64 << 30;
    char *file = xasprintf("%s/events.out.tfevents.1.h", dir);
    struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;
    tfevents_write_simple(&a, 1, 1.5, "before", 1.0f);
    tfevents_write_simple(&b, 2, 2.5, "after", 2.0f);
    int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, a.buf, a.len), (ssize_t)a.len);
    if (ftruncate(fd, hole_end) != 0) {
        close(fd);
        skip(); /* a filesystem without files this large */
    }
    assert_int_equal(pwrite(fd, b.buf, b.len, hole_end), (ssize_t)b.len);
    close(fd);
    fd = open(file, O_RDONLY);
    assert_true(fd >= 0);
    off_t data = lseek(fd, 1 << 20, SEEK_DATA);
    close(fd);
    if (data < hole_end - 65536) {
        print_message("[  SKIPPED ] %s: no SEEK_DATA here (lseek said %lld)\n", dir,
                      (long long)data);
        skip();
    }
    struct tfevents_dir *d = open_dir(dir);
    struct got g = {STRBUF_INIT, 0};
    struct strbuf err = STRBUF_INIT;
    struct tfevents_limit lim = {8u << 20, 0};
    long long before = bytes_read();
    int polls = 0;
    struct tfevents_poll_result r;
    do {
        assert_int_equal(tfevents_poll(d, &lim, on_scalar, &g, &r, &err), 0);
    } while (r.more && ++polls < 16);
    long long after = bytes_read();
    assert_int_equal(count_lines(&g, ". before 1 1 1.500"), 1);
    assert_int_equal(count_lines(&g, ". after 2 2 2.500"), 1);
    assert_int_equal(g.n, 2);
    assert_true(tfevents_stats(d)->hole_bytes > (uint64_t)hole_end - (2u << 20));
    /* a hole, from the end of the first record to the second: not damage */
    assert_int_equal(tfevents_stats(d)->holes, 1);
    assert_int_equal(tfevents_stats(d)->resyncs, 0);
    assert_int_equal(tfevents_stats(d)->bad_crc, 0);
    assert_int_equal(tfevents_stats(d)->last_hole_at, a.len);
    assert_int_equal(tfevents_stats(d)->last_hole_len, (uint64_t)hole_end - a.len);
    assert_string_equal(tfevents_stats(d)->last_hole_file, "events.out.tfevents.1.h");
    if (before >= 0 && after >= 0)
        assert_true(after - before < (4 << 20)); /* the hole was not read */

    /* A hole at the end (the file grown sparse again), then a record after it. */
    const off_t end = hole_end + (off_t)b.len;
    fd = open(file, O_WRONLY);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, 2 * hole_end), 0);
    before = bytes_read();
    assert_int_equal(tfevents_poll(d, &lim, on_scalar, &g, &r, &err), 0);
    if (r.more)
        assert_int_equal(tfevents_poll(d, &lim, on_scalar, &g, &r, &err), 0);
    assert_false(r.more);
    assert_int_equal(g.n, 2);
    struct strbuf c = STRBUF_INIT;
    tfevents_write_simple(&c, 3, 3.5, "later", 3.0f);
    assert_int_equal(pwrite(fd, c.buf, c.len, 2 * hole_end), (ssize_t)c.len);
    close(fd);
    assert_int_equal(tfevents_poll(d, &lim, on_scalar, &g, &r, &err), 0);
    if (r.more)
        assert_int_equal(tfevents_poll(d, &lim, on_scalar, &g, &r, &err), 0);
    after = bytes_read();
    assert_int_equal(count_lines(&g, ". later 3 3 3.500"), 1);
    assert_int_equal(g.n, 3);
    if (before >= 0 && after >= 0)
        assert_true(after - before < (4 << 20));
    /* both holes, each skipped but for a little scanned at its edges */
    assert_true(tfevents_stats(d)->hole_bytes >
                (uint64_t)(2 * hole_end - end + hole_end) - (4u << 20));
    /* the second hole, read in two polls, is one hole */
    assert_int_equal(tfevents_stats(d)->holes, 2);
    assert_int_equal(tfevents_stats(d)->resyncs, 0);
    assert_int_equal(tfevents_stats(d)->last_hole_at, end);
    assert_int_equal(tfevents_stats(d)->last_hole_len, (uint64_t)(2 * hole_end - end));
    strbuf_free(&c);
    tfevents_close(d);
    got_free(&g);
    strbuf_free(&a);
    strbuf_free(&b);
    strbuf_free(&err);
    free(file);
}

/* Zeros written between two records are no hole: one damaged stretch, counted once it ends. */
static void test_written_zeros(void **state)
{
    const char *dir = *state;
    char *file = xasprintf("%s/events.out.tfevents.1.z", dir);
    struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;
    tfevents_write_simple(&a, 1, 1.5, "before", 1.0f);
    tfevents_write_simple(&b, 2, 2.5, "after", 2.0f);
    char *zeros = xcalloc(1, 256 << 10);
    int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, a.buf, a.len), (ssize_t)a.len);
    assert_int_equal(write(fd, zeros, 256 << 10), 256 << 10);
    struct tfevents_dir *d = open_dir(dir);
    struct got g = {STRBUF_INIT, 0};
    struct strbuf err = STRBUF_INIT;
    struct tfevents_poll_result r;
    assert_int_equal(tfevents_poll(d, NULL, on_scalar, &g, &r, &err), 0);
    /* zeros at the end: maybe the start of a hole, not yet damage */
    assert_int_equal(tfevents_stats(d)->resyncs, 0);
    assert_int_equal(write(fd, b.buf, b.len), (ssize_t)b.len);
    close(fd);
    assert_int_equal(tfevents_poll(d, NULL, on_scalar, &g, &r, &err), 0);
    assert_int_equal(count_lines(&g, ". after 2 2 2.500"), 1);
    assert_int_equal(g.n, 2);
    assert_int_equal(tfevents_stats(d)->resyncs, 1);
    assert_int_equal(tfevents_stats(d)->holes, 0);
    assert_int_equal(tfevents_stats(d)->hole_bytes, 0);
    tfevents_close(d);
    got_free(&g);
    free(zeros);
    strbuf_free(&a);
    strbuf_free(&b);
    strbuf_free(&err);
    free(file);
}

/* ---- the bulk path for simple_value records ---- */

/* Records of every kind the bulk path must take or leave; bounds[] gets each record's end. */
static size_t mixed_records(struct strbuf *out, size_t *bounds, bool *simple)
{
    static const char *tags[] = {
        "train/loss", "a", "lr", "eval/accuracy", "\xe6\x90\x8d\xe5\xa4\xb1", "grad_norm"};
    const uint8_t two_values[] = {0x10, 0x07, 0x2a, 0x0a, 0x0a, 0x08, 0x0a, 0x01, 'u',
                                  0x15, 0,    0,    0,    0x40, 0x2a, 0x0a, 0x0a, 0x08,
                                  0x0a, 0x01, 'v',  0x15, 0,    0,    0,    0x40};
    const uint8_t bad_utf8[] = {0x2a, 0x0b, 0x0a, 0x09, 0x0a, 0x02, 0xc3,
                                0x28, 0x15, 0,    0,    0x80, 0x3f};
    char long_tag[119];
    memset(long_tag, 'x', 118);
    long_tag[118] = '\0';
    size_t n = 0;
    for (int i = 0; i < 40; i++) {
        size_t start = out->len;
        bool take = true;
        switch (i % 10) {
        case 3: /* an Event of two values: the general decoder's */
            tfrecord_write(out, two_values, sizeof two_values);
            take = false;
            break;
        case 5: /* a tag that is not UTF-8: a bad value */
            tfrecord_write(out, bad_utf8, sizeof bad_utf8);
            take = false;
            break;
        case 6: /* a simple record whose data fails its CRC */
            tfevents_write_simple(out, i, 1.0, "loss", 1.0f);
            out->buf[start + TFRECORD_HEADER + 4] ^= 0x40;
            take = false;
            break;
        case 8: /* the longest tag the fast layout has, a negative step, NaN */
            tfevents_write_simple(out, -(int64_t)i, 1.7e9, long_tag, NAN);
            break;
        case 9: /* step 0 and wall_time 0 are absent; -Inf */
            tfevents_write_simple(out, 0, 0, tags[i % 6], -INFINITY);
            break;
        default:
            tfevents_write_simple(out, (int64_t)i << (i % 41), 1.7e9 + i * 0.25, tags[i % 6],
                                  (float)i / 3);
        }
        if (i == 17) { /* a damaged length: scanned past to the next header */
            out->buf[start + 2] ^= 0x01;
            take = false;
        }
        bounds[n] = out->len;
        simple[n++] = take;
    }
    return n;
}

static int value_text(void *ctx, const struct tfevents_value *v)
{
    strbuf_addf(ctx, "%.*s %" PRId64 " %a %a\n", (int)v->tag_len, v->tag, v->step, v->value,
                v->wall_time);
    return 0;
}

/*
 * Frames buf[0..n) as the follower does, each record the bulk path takes
 * (max_records at a time) or, when it takes none, through tfrecord_next and
 * tfevents_decode; the values go to text, the offset reached is returned.
 */
static size_t frame_all(const uint8_t *buf, size_t n, uint64_t max_records, struct strbuf *text,
                        uint64_t *ok)
{
    size_t off = 0;
    *ok = 0;
    while (off < n) {
        uint64_t taken;
        size_t used = tfevents_decode_simple_run(buf + off, n - off, max_records, 0, value_text,
                                                 text, &taken);
        if (taken > 0) {
            assert_true(used <= n - off);
            off += used;
            *ok += taken;
            continue;
        }
        struct tfrecord rec;
        enum tfrecord_status st = tfrecord_next(buf + off, n - off, &rec);
        if (st == TFRECORD_PARTIAL)
            break;
        if (st == TFRECORD_OK) {
            tfevents_decode(rec.data, rec.len, value_text, text, NULL);
            (*ok)++;
        }
        off += (size_t)rec.consumed;
    }
    return off;
}

/*
 * The bulk path takes exactly the simple records that check, whole, within
 * its limits, and hands on what tfrecord_next and the general decoder do.
 */
static void test_simple_run(void **state)
{
    (void)state;
    struct strbuf all = STRBUF_INIT, want = STRBUF_INIT, got = STRBUF_INIT;
    size_t bounds[64];
    bool simple[64];
    size_t nrec = mixed_records(&all, bounds, simple);
    const uint8_t *buf = (const uint8_t *)all.buf;

    tfevents_decode_fast_path(false); /* the reference: the general path alone */
    uint64_t want_ok, got_ok;
    size_t want_end = frame_all(buf, all.len, 0, &want, &want_ok);
    uint64_t taken;
    assert_int_equal(tfevents_decode_simple_run(buf, all.len, 0, 0, value_text, &got, &taken), 0);
    assert_int_equal(taken, 0);
    tfevents_decode_fast_path(true);
    assert_int_equal(want_end, all.len);
    for (uint64_t step = 0; step <= 3; step++) { /* 0: no limit */
        strbuf_reset(&got);
        assert_int_equal(frame_all(buf, all.len, step, &got, &got_ok), all.len);
        assert_int_equal(got_ok, want_ok);
        assert_string_equal(strbuf_str(&got), strbuf_str(&want));
    }

    /* From each record's start, the run of simple records after it, cut at every byte. */
    for (size_t r = 0; r < nrec; r++) {
        size_t start = r ? bounds[r - 1] : 0, end = start;
        for (size_t k = r; k < nrec && simple[k]; k++)
            end = bounds[k];
        for (size_t n = start; n <= all.len; n++) {
            size_t expect = start;
            for (size_t k = r; k < nrec && bounds[k] <= n && bounds[k] <= end; k++)
                expect = bounds[k];
            size_t used =
                tfevents_decode_simple_run(buf + start, n - start, 0, 0, count_value, NULL, &taken);
            assert_int_equal(start + used, expect);
        }
    }

    /* The limits: records, and bytes (a record is taken while fewer were consumed). */
    assert_true(simple[0] && simple[1] && simple[2]);
    assert_int_equal(tfevents_decode_simple_run(buf, all.len, 2, 0, count_value, NULL, &taken),
                     bounds[1]);
    assert_int_equal(taken, 2);
    assert_int_equal(tfevents_decode_simple_run(buf, all.len, 0, 1, count_value, NULL, &taken),
                     bounds[0]);
    assert_int_equal(
        tfevents_decode_simple_run(buf, all.len, 0, bounds[0], count_value, NULL, &taken),
        bounds[0]);
    assert_int_equal(
        tfevents_decode_simple_run(buf, all.len, 0, bounds[0] + 1, count_value, NULL, &taken),
        bounds[1]);
    strbuf_free(&all);
    strbuf_free(&want);
    strbuf_free(&got);
}

struct followed {
    struct got got;
    struct tfevents_stats stats;
};

/* Reads file data written whole, or growing a byte at a time, or paged by lim: text and stats. */
static void follow_file(const char *dir, const char *data, size_t len, bool bytewise,
                        const struct tfevents_limit *lim, struct followed *out)
{
    char *file = xasprintf("%s/events.out.tfevents.1.h", dir);
    unlink(file);
    append_file(file, "", 0);
    struct tfevents_dir *d = open_dir(dir);
    struct strbuf err = STRBUF_INIT;
    struct tfevents_poll_result r;
    for (size_t off = 0; off < len;) {
        size_t n = bytewise ? 1 : len - off;
        append_file(file, data + off, n);
        off += n;
        do
            assert_int_equal(tfevents_poll(d, lim, on_scalar, &out->got, &r, &err), 0);
        while (r.more);
    }
    out->stats = *tfevents_stats(d);
    tfevents_close(d);
    strbuf_free(&err);
    free(file);
}

static void same_followed(const struct followed *a, const struct followed *b)
{
    assert_string_equal(strbuf_str(&a->got.text), strbuf_str(&b->got.text));
    assert_int_equal(a->got.n, b->got.n);
    assert_int_equal(a->stats.bytes, b->stats.bytes);
    assert_int_equal(a->stats.records, b->stats.records);
    assert_int_equal(a->stats.scalars, b->stats.scalars);
    assert_int_equal(a->stats.bad_crc, b->stats.bad_crc);
    assert_int_equal(a->stats.resyncs, b->stats.resyncs);
    assert_int_equal(a->stats.resync_bytes, b->stats.resync_bytes);
    assert_int_equal(a->stats.bad_values, b->stats.bad_values);
    assert_int_equal(a->stats.bad_proto, b->stats.bad_proto);
}

/*
 * The follower with its bulk path reads what it reads without it: the file
 * whole, written a byte at a time (every record split at every byte across
 * polls), and paged by small limits.
 */
static void test_simple_run_follow(void **state)
{
    const char *dir = *state;
    struct strbuf all = STRBUF_INIT;
    size_t bounds[64];
    bool simple[64];
    mixed_records(&all, bounds, simple);
    all.len -= 7; /* the last record not whole yet */
    struct followed ref = {{STRBUF_INIT, 0}, {0}};
    tfevents_decode_fast_path(false);
    follow_file(dir, all.buf, all.len, false, NULL, &ref);
    tfevents_decode_fast_path(true);
    assert_int_equal(ref.stats.bad_crc, 1 * 4);
    assert_int_equal(ref.stats.resyncs, 1);
    assert_int_equal(ref.stats.bad_values, 1 * 4);
    assert_true(ref.got.n > 20);

    struct tfevents_limit by_records = {0, 3}, by_bytes = {100, 0};
    const struct tfevents_limit *lims[] = {NULL, &by_records, &by_bytes};
    for (int bytewise = 0; bytewise <= 1; bytewise++)
        for (int l = 0; l < 3; l++) {
            struct followed f = {{STRBUF_INIT, 0}, {0}};
            follow_file(dir, all.buf, all.len, bytewise, lims[l], &f);
            same_followed(&f, &ref);
            got_free(&f.got);
        }
    got_free(&ref.got);
    strbuf_free(&all);
}

static void tag_text(void *ctx, const struct tfevents_scalar *s)
{
    strbuf_addf(ctx, "%s\n", s->tag);
}

/* Every tag length, up to TFEVENTS_MAX_TAG, comes out of the follower whole. */
static void test_tag_lengths(void **state)
{
    const char *dir = *state;
    struct strbuf file = STRBUF_INIT, want = STRBUF_INIT, got = STRBUF_INIT, err = STRBUF_INIT;
    char tag[TFEVENTS_MAX_TAG + 1];
    for (size_t n = 1; n <= TFEVENTS_MAX_TAG; n += n < 40 ? 1 : 61) {
        for (size_t i = 0; i < n; i++)
            tag[i] = (char)('a' + (i * 7 + n) % 26);
        tag[n] = '\0';
        tfevents_write_simple(&file, (int64_t)n, 1.0, tag, 1.0f);
        strbuf_addf(&want, "%s\n", tag);
    }
    char *path = xasprintf("%s/events.out.tfevents.1.h", dir);
    append_file(path, file.buf, file.len);
    struct tfevents_dir *d = open_dir(dir);
    assert_int_equal(tfevents_poll(d, NULL, tag_text, &got, NULL, &err), 0);
    assert_string_equal(strbuf_str(&got), strbuf_str(&want));
    tfevents_close(d);
    free(path);
    strbuf_free(&file);
    strbuf_free(&want);
    strbuf_free(&got);
    strbuf_free(&err);
}

/* Both tests again in a copy of this program that never uses the crc32 instruction. */
static void test_simple_run_software(void **state)
{
    (void)state;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        dup2(null, 1);
        execl("/proc/self/exe", "test_tfevents", "--software-crc", (char *)NULL);
        _exit(127);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
}

static void count_scalar(void *ctx, const struct tfevents_scalar *s)
{
    uint64_t *n = ctx;
    if (s->step == (int64_t)*n)
        (*n)++;
}

static void test_million(void **state)
{
    const char *dir = *state;
    char *file = xasprintf("%s/events.out.tfevents.1.h", dir);
    struct strbuf sb = STRBUF_INIT;
    FILE *f = fopen(file, "wb");
    assert_non_null(f);
    for (int i = 0; i < 1000000; i++) {
        tfevents_write_simple(&sb, i, 1.7e9 + i, "loss", (float)i);
        if (sb.len > (1 << 20) || i == 999999) {
            assert_int_equal(fwrite(sb.buf, 1, sb.len, f), sb.len);
            strbuf_reset(&sb);
        }
    }
    fclose(f);
    struct tfevents_dir *d = open_dir(dir);
    uint64_t n = 0;
    struct strbuf err = STRBUF_INIT;
    struct tfevents_poll_result r;
    assert_int_equal(tfevents_poll(d, NULL, count_scalar, &n, &r, &err), 0);
    assert_int_equal(n, 1000000); /* every step, in order */
    assert_int_equal(r.scalars, 1000000);
    tfevents_close(d);
    strbuf_free(&sb);
    strbuf_free(&err);
    free(file);
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--software-crc") == 0) {
        setenv("TRAINJOB_CRC_SOFTWARE", "1", 1); /* before the first CRC */
        const struct CMUnitTest sw[] = {
            cmocka_unit_test(test_simple_run),
            cmocka_unit_test_setup_teardown(test_simple_run_follow, make_dir, remove_dir),
        };
        return cmocka_run_group_tests(sw, NULL, NULL);
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crc32c),
        cmocka_unit_test(test_record_cuts),
        cmocka_unit_test(test_decode),
        cmocka_unit_test_setup_teardown(test_fixtures, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(test_growing_pieces, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(test_cursor_paging, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(test_cursor_hostile, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(test_cursor_mid_record, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(test_hostile_tree, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(test_oversized, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(test_million, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(test_sparse_hole, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(test_written_zeros, make_dir, remove_dir),
        cmocka_unit_test(test_simple_run),
        cmocka_unit_test_setup_teardown(test_simple_run_follow, make_dir, remove_dir),
        cmocka_unit_test(test_simple_run_software),
        cmocka_unit_test_setup_teardown(test_tag_lengths, make_dir, remove_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
