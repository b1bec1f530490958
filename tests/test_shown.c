/*
 * test_shown: the saved texts trainjobd keeps deflated (engine/shown) come
 * back byte for byte — short and long, empty, binary and incompressible,
 * of each kind — and a job like the first one packs to a small fraction of
 * its text (the point of the module: issue 14's engine RSS).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h> /* after the four headers it needs */

#include <stdlib.h>
#include <string.h>

#include "engine/shown.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

/* Packs text, checks both ways of reading it back, returns its size in memory. */
static size_t round_trip(enum shown_kind kind, const char *text, size_t len)
{
    struct shown *s = shown_pack(kind, text, len);
    assert_non_null(s);
    char *back = shown_text(s);
    assert_memory_equal(back, text, len);
    assert_int_equal(back[len], '\0');
    struct strbuf sb = STRBUF_INIT;
    strbuf_adds(&sb, "prefix:");
    shown_append(s, &sb);
    assert_int_equal(sb.len, 7 + len);
    assert_memory_equal(sb.buf + 7, text, len);
    assert_int_equal(sb.buf[sb.len], '\0');
    size_t size = shown_size(s);
    strbuf_free(&sb);
    free(back);
    free(s);
    return size;
}

static char *job_text(int i)
{
    return xasprintf(
        "{\"subscription_name\":\"local\",\"resource_group_name\":\"default\",\"zone\":"
        "\"local-1z\",\"workspace_name\":\"default\",\"display_name\":\"s-%06d\",\"name\":\"s-%"
        "06d\","
        "\"uid\":\"000001a2335d09e0-%08x\",\"id\":\"/subscriptions/local/resourceGroups/default/"
        "zones/local-1z/workspaces/default/trainingJobs/s-%06d\",\"framework\":\"PYTORCH_DDP\","
        "\"resource_pool\":{\"name\":\"std\"},\"scheduling\":{\"priority\":\"NORMAL\"},\"roles\":"
        "[{\"name\":\"Worker\",\"total_replicas\":1,\"resource_spec\":[{\"name\":\"cpu-1\"}],"
        "\"image_path\":\"local/host\",\"startup_script\":\"python train.py --step %d\"}],"
        "\"state\":\"QUEUEING\",\"create_time\":\"2026-12-01T20:47:45.%03dZ\"}",
        i, i, (unsigned)i * 2654435761u, i, i, i % 1000);
}

static void test_round_trips(void **state)
{
    (void)state;
    round_trip(SHOWN_WORKERS, "[]", 2);
    round_trip(SHOWN_WORKERS, "", 0);
    char *first = job_text(0);
    round_trip(SHOWN_JOB, first, strlen(first)); /* becomes the dictionary */
    free(first);
    /* every kind, sizes around the packing threshold and the dictionary's length */
    for (size_t len = 0; len < 5000; len += 37) {
        char *t = xmalloc(len + 1);
        for (size_t i = 0; i < len; i++)
            t[i] = (char)('a' + (i * 7 + len) % 26);
        for (int k = SHOWN_JOB; k <= SHOWN_SUMMARY; k++)
            round_trip((enum shown_kind)k, t, len);
        free(t);
    }
    /* binary and incompressible: kept as it is, still exact */
    size_t n = 70000;
    unsigned char *bin = xmalloc(n);
    uint32_t x = 2463534242u;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        bin[i] = (unsigned char)x;
    }
    size_t size = round_trip(SHOWN_JOB, (const char *)bin, n);
    assert_true(size <= n + 16); /* never much more than the text */
    free(bin);
}

/* Jobs alike pack small: what differs, not the whole text. */
static void test_jobs_pack_small(void **state)
{
    (void)state;
    size_t text = 0, packed = 0;
    for (int i = 1; i <= 200; i++) {
        char *t = job_text(i * 101);
        text += strlen(t);
        packed += round_trip(SHOWN_JOB, t, strlen(t));
        free(t);
    }
    if (packed * 4 > text)
        fail_msg("200 jobs: %zu bytes packed from %zu", packed, text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trips),
        cmocka_unit_test(test_jobs_pack_small),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
