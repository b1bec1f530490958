/*
 * test_logring: the bounded log line store — chunks split on '\n' per
 * source with unfinished lines kept apart, force-split of overlong lines at
 * a character boundary, carriage returns (CRLF, progress bars), the
 * sanitizer applied to every line, eviction by bytes and by lines with the
 * dropped count, O(1) access by sequence number after eviction, search in
 * both directions, the first error line, the table of unfinished lines,
 * and memory that stays bounded over 1,000,000 lines.
 */
// clang-format off
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
// clang-format on

#include <stdio.h>
#include <string.h>

#include "util/logring.h"
#include "util/strbuf.h"

/* Appends a C string as a chunk of source's stream. */
static void put(struct logring *r, uint32_t source, const char *s)
{
    logring_append(r, source, s, strlen(s));
}

/* Asserts line seq has text and source. */
static void assert_line(const struct logring *r, uint64_t seq, const char *text, uint32_t source)
{
    struct logring_line line;
    assert_true(logring_get(r, seq, &line));
    assert_string_equal(line.text, text);
    assert_int_equal(line.len, strlen(text));
    assert_int_equal(line.source, source);
    assert_string_equal(logring_text(r, seq), text);
    assert_int_equal(logring_source(r, seq), source);
}

static struct logring *small_ring(size_t bytes, size_t lines, size_t max_line, size_t partials)
{
    struct logring_config cfg = {bytes, lines, max_line, partials};
    return logring_new(&cfg);
}

static void test_empty_ring(void **state)
{
    struct logring *r = logring_new(NULL);
    struct logring_config lim;

    logring_limits(r, &lim);
    assert_int_equal(lim.max_bytes, LOGRING_DEFAULT_BYTES);
    assert_int_equal(lim.max_lines, LOGRING_DEFAULT_LINES);
    assert_int_equal(lim.max_line, LOGRING_DEFAULT_LINE);
    assert_int_equal(lim.max_partials, LOGRING_DEFAULT_PARTIALS);
    assert_int_equal(logring_count(r), 0);
    assert_int_equal(logring_first_seq(r), 1);
    assert_int_equal(logring_last_seq(r), 0);
    assert_int_equal(logring_bytes_used(r), 0);
    assert_null(logring_text(r, 0));
    assert_null(logring_text(r, 1));
    assert_int_equal(logring_source(r, 1), UINT32_MAX);
    assert_int_equal(logring_find(r, 1, "x", true), 0);
    assert_int_equal(logring_first_match(r, NULL, NULL), 0);
    logring_append(r, 0, "", 0);
    logring_flush(r, 7); /* nothing unfinished */
    assert_int_equal(logring_count(r), 0);
    logring_free(r);
    logring_free(NULL);
}

static void test_limits_clamped(void **state)
{
    struct logring *r = small_ring(10, 1, 1, 100000);
    struct logring_config lim;

    logring_limits(r, &lim);
    assert_int_equal(lim.max_bytes, 4096);
    assert_int_equal(lim.max_lines, 16);
    assert_int_equal(lim.max_line, 64);
    assert_int_equal(lim.max_partials, 4096);
    logring_free(r);

    /* A line can never be more than a quarter of the arena. */
    r = small_ring(8192, 0, 1 << 20, 0);
    logring_limits(r, &lim);
    assert_int_equal(lim.max_line, 2048);
    logring_free(r);
}

static void test_split_chunks_per_source(void **state)
{
    struct logring *r = logring_new(NULL);

    /* Two workers' chunks interleave, each cut mid-line. */
    put(r, 0, "hel");
    put(r, 1, "abc\nde");
    put(r, 0, "lo\nwor");
    put(r, 1, "f\n");
    assert_int_equal(logring_count(r), 3);
    put(r, 0, "ld\n\nlast");
    assert_int_equal(logring_count(r), 5);
    assert_line(r, 1, "abc", 1);
    assert_line(r, 2, "hello", 0);
    assert_line(r, 3, "def", 1);
    assert_line(r, 4, "world", 0);
    assert_line(r, 5, "", 0);
    assert_null(logring_text(r, 6)); /* "last" waits for its newline */

    /* Byte by byte is the same as all at once. */
    const char *s = "one\ntwo\n";
    for (size_t i = 0; s[i]; i++)
        logring_append(r, 2, s + i, 1);
    assert_line(r, 6, "one", 2);
    assert_line(r, 7, "two", 2);

    /* The stream ends without a newline: flush stores what is left. */
    logring_flush(r, 0);
    assert_line(r, 8, "last", 0);
    logring_flush(r, 0);
    assert_int_equal(logring_last_seq(r), 8);
    logring_free(r);
}

static void test_force_split_long_lines(void **state)
{
    struct logring *r = small_ring(0, 0, 64, 0);
    struct logring_line line;
    char buf[200];

    /* Unfinished: 150 bytes without a newline make two split lines of 64. */
    memset(buf, 'x', 150);
    logring_append(r, 0, buf, 150);
    assert_int_equal(logring_count(r), 2);
    assert_true(logring_get(r, 1, &line));
    assert_int_equal(line.len, 64);
    assert_int_equal(line.flags, LOGRING_SPLIT);
    put(r, 0, "\n");
    assert_true(logring_get(r, 3, &line));
    assert_int_equal(line.len, 22);
    assert_int_equal(line.flags, 0);
    assert_int_equal(logring_split_count(r), 2);

    /* Complete in one chunk: the same cut. */
    memset(buf, 'y', 130);
    buf[130] = '\n';
    logring_append(r, 1, buf, 131);
    assert_int_equal(logring_count(r), 6);
    assert_true(logring_get(r, 6, &line));
    assert_int_equal(line.len, 2);

    /* A cut never splits a character: 63 ASCII bytes then 基 (3 bytes). */
    memset(buf, 'a', 63);
    memcpy(buf + 63,
           "\xe5\x9f\xba"
           "bc\n",
           6);
    logring_append(r, 2, buf, 69);
    assert_true(logring_get(r, 7, &line));
    assert_int_equal(line.len, 63);
    assert_string_equal(logring_text(r, 8), "\xe5\x9f\xba"
                                            "bc");
    /* The same through the unfinished line, the character arriving in pieces. */
    logring_append(r, 3, buf, 64);
    logring_append(r, 3, buf + 64, 5);
    assert_true(logring_get(r, 9, &line));
    assert_int_equal(line.len, 63);
    assert_int_equal(line.flags, LOGRING_SPLIT);
    assert_string_equal(logring_text(r, 10), "\xe5\x9f\xba"
                                             "bc");
    logring_free(r);
}

static void test_carriage_returns(void **state)
{
    struct logring *r = small_ring(0, 0, 64, 0);

    put(r, 0, "dos line\r\n");
    put(r, 0, "10%\r20%\r30%\n");
    put(r, 0, "a\r");
    put(r, 0, "\nb\n"); /* "\r\n" cut between chunks */
    assert_line(r, 1, "dos line", 0);
    assert_line(r, 2, "30%", 0);
    assert_line(r, 3, "a", 0);
    assert_line(r, 4, "b", 0);

    /* A progress bar that redraws with '\r' for ever never grows a line. */
    char buf[64];
    for (int i = 0; i <= 1000; i++) {
        int n = snprintf(buf, sizeof buf, "\rprogress %d%%", i);
        logring_append(r, 1, buf, (size_t)n);
    }
    assert_int_equal(logring_count(r), 4);
    assert_int_equal(logring_split_count(r), 0);
    put(r, 1, "\n");
    assert_line(r, 5, "progress 1000%", 1);
    logring_free(r);
}

static void test_sanitize_each_line(void **state)
{
    struct logring *r = logring_new(NULL);

    put(r, 0, "\x1b[31mred\x1b[0m text\tTab\x07 bell\n");
    assert_line(r, 1, "red text\tTab bell", 0);
    /* An escape sequence cut between chunks is still removed whole. */
    put(r, 0, "\x1b[3");
    put(r, 0, "1mX\x1b]0;title\x07Y\n");
    assert_line(r, 2, "XY", 0);
    /* Invalid UTF-8 becomes U+FFFD; valid text stays. */
    put(r, 0, "bad \xff byte, 基线 ok\n");
    assert_line(r, 3, "bad \xef\xbf\xbd byte, 基线 ok", 0);
    /* A NUL byte is a control character: dropped. */
    logring_append(r, 0, "a\0b\n", 4);
    assert_line(r, 4, "ab", 0);
    logring_free(r);
}

static void test_byte_cap_eviction(void **state)
{
    struct logring *r = small_ring(4096, 0, 0, 0);
    char buf[128];

    for (int i = 0; i < 1000; i++) {
        int n = snprintf(buf, sizeof buf, "line %04d %s\n", i,
                         "................................................................"
                         "..........................");
        logring_append(r, (uint32_t)(i % 3), buf, (size_t)n);
        assert_true(logring_bytes_used(r) <= 4096);
    }
    size_t count = logring_count(r);
    assert_true(count >= 4096 / 101 - 1 && count <= 4096 / 101);
    assert_int_equal(logring_dropped(r), 1000 - count);
    assert_int_equal(logring_first_seq(r), logring_dropped(r) + 1);
    assert_int_equal(logring_last_seq(r), 1000);
    /* The newest are kept, in order. */
    const char *newest = logring_text(r, 1000);
    assert_non_null(newest);
    assert_memory_equal(newest, "line 0999 ", 10);
    const char *oldest = logring_text(r, logring_first_seq(r));
    snprintf(buf, sizeof buf, "line %04llu ", (unsigned long long)(logring_first_seq(r) - 1));
    assert_memory_equal(oldest, buf, 10);
    logring_free(r);
}

static void test_line_cap_eviction(void **state)
{
    struct logring *r = small_ring(0, 16, 0, 0);
    for (int i = 0; i < 100; i++)
        put(r, 0, "x\n");
    assert_int_equal(logring_count(r), 16);
    assert_int_equal(logring_dropped(r), 84);
    assert_int_equal(logring_first_seq(r), 85);
    logring_free(r);
}

static void test_seq_access_after_eviction(void **state)
{
    struct logring *r = small_ring(4096, 16, 0, 0);
    struct logring_line line;
    char buf[32];

    for (int i = 1; i <= 40; i++) {
        snprintf(buf, sizeof buf, "n%d\n", i);
        put(r, (uint32_t)i, buf);
    }
    assert_int_equal(logring_first_seq(r), 25);
    /* A view holding seq 10 learns it is gone; 25..40 are where they were. */
    assert_null(logring_text(r, 10));
    assert_false(logring_get(r, 24, &line));
    assert_int_equal(logring_source(r, 24), UINT32_MAX);
    for (uint64_t s = 25; s <= 40; s++) {
        snprintf(buf, sizeof buf, "n%llu", (unsigned long long)s);
        assert_line(r, s, buf, (uint32_t)s);
    }
    assert_null(logring_text(r, 41));
    assert_null(logring_text(r, 0));
    assert_null(logring_text(r, UINT64_MAX));

    /* Clearing keeps numbering on. */
    logring_clear(r);
    assert_int_equal(logring_count(r), 0);
    assert_int_equal(logring_first_seq(r), 41);
    assert_int_equal(logring_last_seq(r), 40);
    assert_null(logring_text(r, 40));
    put(r, 0, "after\n");
    assert_line(r, 41, "after", 0);
    assert_int_equal(logring_dropped(r), 24);
    logring_free(r);
}

static void test_arena_wraps_around(void **state)
{
    /* Lines of odd sizes wrap the arena many times; every held line stays intact. */
    struct logring *r = small_ring(4096, 0, 0, 0);
    char buf[600];
    for (int i = 0; i < 5000; i++) {
        size_t n = (size_t)(i * 37 % 500) + 1;
        memset(buf, 'a' + i % 26, n);
        buf[n] = '\n';
        logring_append(r, 0, buf, n + 1);
        assert_true(logring_bytes_used(r) <= 4096);
    }
    for (uint64_t s = logring_first_seq(r); s <= logring_last_seq(r); s++) {
        struct logring_line line;
        int i = (int)(s - 1);
        assert_true(logring_get(r, s, &line));
        assert_int_equal(line.len, (size_t)(i * 37 % 500) + 1);
        for (size_t k = 0; k < line.len; k++)
            assert_int_equal(line.text[k], 'a' + i % 26);
        assert_int_equal(line.text[line.len], '\0');
    }
    assert_int_equal(logring_dropped(r) + logring_count(r), 5000);
    logring_free(r);
}

static void test_search(void **state)
{
    struct logring *r = logring_new(NULL);

    put(r, 0, "epoch 1 loss 2.1\n");      /* 1 */
    put(r, 1, "Saving Checkpoint\n");     /* 2 */
    put(r, 0, "epoch 2 loss 1.7\n");      /* 3 */
    put(r, 1, "checkpoint saved\n");      /* 4 */
    put(r, 0, "epoch 3 loss 1.2 基线\n"); /* 5 */

    assert_int_equal(logring_find(r, 1, "CHECKPOINT", true), 2);
    assert_int_equal(logring_find(r, 3, "checkpoint", true), 4);
    assert_int_equal(logring_find(r, 5, "checkpoint", true), 0);
    assert_int_equal(logring_find(r, 5, "checkpoint", false), 4);
    assert_int_equal(logring_find(r, 3, "checkpoint", false), 2);
    assert_int_equal(logring_find(r, 1, "checkpoint", false), 0);
    /* from is inclusive and clamped to what is held. */
    assert_int_equal(logring_find(r, 2, "checkpoint", true), 2);
    assert_int_equal(logring_find(r, 0, "epoch", true), 1);
    assert_int_equal(logring_find(r, 99, "epoch", false), 5);
    assert_int_equal(logring_find(r, 99, "epoch", true), 0);
    assert_int_equal(logring_find(r, 1, "基线", true), 5);
    assert_int_equal(logring_find(r, 1, "", true), 0);
    assert_int_equal(logring_find(r, 1, NULL, true), 0);
    assert_int_equal(logring_find(r, 1, "nowhere", true), 0);

    assert_int_equal(logring_match_at("abcABC", 6, "cA", 2), 2);
    assert_int_equal(logring_match_at("abc", 3, "abcd", 4), 3);
    assert_int_equal(logring_match_at("abc", 3, "x", 1), 3);
    assert_int_equal(logring_match_at("aaab", 4, "AAB", 3), 1);
    logring_free(r);
}

/* A predicate for tests: lines of source 1 starting with "!". */
static bool bang_from_one(const struct logring_line *line, void *arg)
{
    int *calls = arg;
    (*calls)++;
    return line->source == 1 && line->len > 0 && line->text[0] == '!';
}

static void test_first_error_line(void **state)
{
    struct logring *r = small_ring(0, 16, 0, 0);
    int calls = 0;

    put(r, 0, "step 1 ok\n");
    put(r, 0, "all reduce done, 0 warnings\n");
    assert_int_equal(logring_first_match(r, NULL, NULL), 0);
    put(r, 1, "RuntimeError: CUDA error: an illegal memory access\n"); /* 3 */
    put(r, 0, "Traceback (most recent call last):\n");                 /* 4 */
    assert_int_equal(logring_first_match(r, NULL, NULL), 3);
    assert_int_equal(logring_next_match(r, 4, logring_is_error_line, NULL, true), 4);
    assert_int_equal(logring_next_match(r, 2, logring_is_error_line, NULL, false), 0);

    static const char *const errors[] = {
        "ERROR: boom",
        "Fatal Python error",
        "thread panicked",
        "Segmentation fault",
        "Aborted (core dumped)",
        "torch.cuda.OutOfMemoryError",
        "CUDA out of memory",
        "oom-kill: constraint",
        "host:1:2 [0] NCCL WARN Net : Connection closed",
        "worker killed by signal 9",
        "java.lang.Exception: x",
        "error",
    };
    static const char *const fine[] = {
        "", "stderr redirected", "loss 0.1", "epoch 3/10", "warning: deprecated", "errr",
    };
    for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++) {
        struct logring_line l = {errors[i], strlen(errors[i]), 0, 0};
        assert_true(logring_is_error_line(&l, NULL));
    }
    for (size_t i = 0; i < sizeof fine / sizeof fine[0]; i++) {
        struct logring_line l = {fine[i], strlen(fine[i]), 0, 0};
        assert_false(logring_is_error_line(&l, NULL));
    }

    /* A predicate of one's own, with its argument. */
    put(r, 0, "!not this source\n");
    put(r, 1, "!this one\n"); /* 6 */
    assert_int_equal(logring_first_match(r, bang_from_one, &calls), 6);
    assert_int_equal(calls, 6);

    /* Once the first error is dropped, the first one held is found. */
    for (int i = 0; i < 13; i++)
        put(r, 0, "filler\n");
    assert_int_equal(logring_first_seq(r), 4);
    assert_int_equal(logring_first_match(r, NULL, NULL), 4);
    logring_free(r);
}

static void test_partial_table_bounded(void **state)
{
    struct logring *r = small_ring(0, 0, 0, 2);

    put(r, 0, "a");
    put(r, 1, "b");
    put(r, 0, "a");
    put(r, 2, "c"); /* no slot left: source 1's line, the stalest, is finished */
    assert_int_equal(logring_count(r), 1);
    assert_line(r, 1, "b", 1);
    put(r, 2, "x\n");
    assert_line(r, 2, "cx", 2);
    put(r, 3, "d"); /* source 2's slot is empty now: reused, nothing finished */
    assert_int_equal(logring_count(r), 2);
    put(r, 0, "\n");
    assert_line(r, 3, "aa", 0);
    logring_flush(r, 3);
    assert_line(r, 4, "d", 3);
    logring_free(r);
}

/* One line of about 100 bytes from source, numbered i. */
static size_t make_line(char *buf, size_t cap, uint64_t i, uint32_t source)
{
    int n = snprintf(buf, cap,
                     "[worker-%u] step %08llu loss=%.4f lr=3.0e-4 tokens/s=123456 "
                     "grad_norm=0.98 mem=71.2GiB\n",
                     source, (unsigned long long)i, 1.0 / (double)(i + 1));
    return (size_t)n;
}

static void test_million_lines_bounded(void **state)
{
    struct logring *r = logring_new(NULL);
    struct logring_config lim;
    char chunk[8192];
    size_t used = 0, memory_after_warmup = 0;
    const uint64_t total = 1000000;

    logring_limits(r, &lim);
    /* Chunks of about 8 KiB per source cut mid-line, as a stream delivers them. */
    uint64_t i = 0;
    while (i < total) {
        uint32_t source = (uint32_t)(i / 50 % 4);
        used = 0;
        for (int k = 0; k < 50 && i < total; k++, i++)
            used += make_line(chunk + used, sizeof chunk - used, i, source);
        size_t cut = used / 3;
        logring_append(r, source, chunk, cut);
        logring_append(r, source, chunk + cut, used - cut);
        assert_true(logring_bytes_used(r) <= lim.max_bytes);
        if (i == 200000)
            memory_after_warmup = logring_memory(r);
    }
    assert_int_equal(logring_last_seq(r), total);
    assert_int_equal(logring_dropped(r) + logring_count(r), total);
    assert_true(logring_bytes_used(r) <= lim.max_bytes);
    assert_true(logring_bytes_used(r) > lim.max_bytes - 2 * 128); /* full, not half empty */
    /* Nothing grew after the first 200,000 lines, and the total is what the header promises. */
    assert_int_equal(logring_memory(r), memory_after_warmup);
    assert_true(logring_memory(r) < lim.max_bytes + 16 * lim.max_lines +
                                        (lim.max_partials + 6) * lim.max_line +
                                        40 * lim.max_partials + 1024);
    /* The newest line is the last one appended. */
    char want[256];
    make_line(want, sizeof want, total - 1, (uint32_t)((total - 1) / 50 % 4));
    want[strlen(want) - 1] = '\0';
    assert_string_equal(logring_text(r, total), want);
    logring_free(r);
}

/* The unfinished line as a view shows it: newest source, sanitized, a cut character held back. */
static void test_partial_line_shown(void **state)
{
    (void)state;
    struct logring *r = logring_new(NULL);
    struct strbuf out = STRBUF_INIT;
    uint32_t from = 99;
    assert_false(logring_partial(r, true, 0, &out, &from));
    logring_append(r, 0, "done\nwaiting for inp", 20);
    uint64_t tick = logring_tick(r);
    assert_true(logring_partial(r, true, 0, &out, &from));
    assert_string_equal(strbuf_str(&out), "waiting for inp");
    assert_int_equal(from, 0);
    /* Another source appends later: it is the newest; one source asked for keeps its own. */
    const char *bar = "\x1b[1mbold\x1b[0m 10%\r 20%";
    logring_append(r, 3, bar, strlen(bar));
    assert_true(logring_tick(r) > tick);
    assert_true(logring_partial(r, true, 0, &out, &from));
    assert_string_equal(strbuf_str(&out), " 20%");
    assert_int_equal(from, 3);
    assert_true(logring_partial(r, false, 0, &out, &from));
    assert_string_equal(strbuf_str(&out), "waiting for inp");
    /* A UTF-8 character cut between reads is held back, then shown whole. */
    logring_append(r, 0, "ut \xe4\xbd", 5);
    assert_true(logring_partial(r, false, 0, &out, &from));
    assert_string_equal(strbuf_str(&out), "waiting for input ");
    logring_append(r, 0, "\xa0", 1);
    assert_true(logring_partial(r, false, 0, &out, &from));
    assert_string_equal(strbuf_str(&out), "waiting for input \xe4\xbd\xa0");
    /* Finished: a stored line, and no partial any more. */
    logring_append(r, 0, "\n", 1);
    assert_false(logring_partial(r, false, 0, &out, &from));
    assert_string_equal(logring_text(r, logring_last_seq(r)), "waiting for input \xe4\xbd\xa0");
    strbuf_free(&out);
    logring_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty_ring),
        cmocka_unit_test(test_limits_clamped),
        cmocka_unit_test(test_split_chunks_per_source),
        cmocka_unit_test(test_force_split_long_lines),
        cmocka_unit_test(test_carriage_returns),
        cmocka_unit_test(test_sanitize_each_line),
        cmocka_unit_test(test_byte_cap_eviction),
        cmocka_unit_test(test_line_cap_eviction),
        cmocka_unit_test(test_seq_access_after_eviction),
        cmocka_unit_test(test_arena_wraps_around),
        cmocka_unit_test(test_search),
        cmocka_unit_test(test_first_error_line),
        cmocka_unit_test(test_partial_table_bounded),
        cmocka_unit_test(test_million_lines_bounded),
        cmocka_unit_test(test_partial_line_shown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
