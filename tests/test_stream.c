/*
 * test_stream: engine/stream's queue toward one long-lived client — a
 * refill producer writes a snapshot far larger than the queue's cap as the
 * reader drains it (so a watch's first sync of many jobs never overflows),
 * in order, with live writes interleaved; a reader that stops reading is
 * still cut off at the cap.
 */
// clang-format off
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
// clang-format on

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/shares.h"
#include "engine/stream.h"

struct producer {
    int next, last; /* lines next..last remain */
    int calls;
    int freed;
};

static void refill(void *ctx, struct stream *s)
{
    struct producer *p = ctx;
    p->calls++;
    /* 100 lines of ~1 KiB a call. */
    char line[1100];
    for (int i = 0; i < 100 && p->next <= p->last; i++, p->next++) {
        int n = snprintf(line, sizeof line, "%08d %01000d\n", p->next, 0);
        stream_write(s, line, (size_t)n);
    }
    if (p->next > p->last) {
        stream_write(s, "END\n", 4);
        stream_set_refill(s, NULL, NULL, NULL);
    }
}

static void count_free(void *ctx)
{
    ((struct producer *)ctx)->freed++;
}

static void a_snapshot_larger_than_the_cap_arrives_whole_and_in_order(void **state)
{
    (void)state;
    struct stream *s = stream_new();
    /* 20,000 lines of ~1 KiB: 20 MiB, more than twice the cap. */
    struct producer p = {.next = 1, .last = 20000};
    stream_set_refill(s, refill, &p, count_free);
    assert_int_equal(p.calls, 0); /* nothing is produced before a read */
    char buf[16384];
    struct {
        char *data;
        size_t len, cap;
    } all = {NULL, 0, 0};
    size_t max_pending = 0;
    bool live_sent = false;
    for (;;) {
        size_t n = stream_read(s, buf, sizeof buf);
        if (stream_pending(s) > max_pending)
            max_pending = stream_pending(s);
        if (n == 0)
            break;
        if (all.len + n > all.cap) {
            all.cap = (all.len + n) * 2;
            all.data = realloc(all.data, all.cap);
        }
        memcpy(all.data + all.len, buf, n);
        all.len += n;
        /* A live message between the snapshot's lines. */
        if (p.calls == 3 && !live_sent) {
            stream_write(s, "LIVE\n", 5);
            live_sent = true;
        }
    }
    assert_false(stream_closed(s));
    assert_false(stream_refilling(s));
    assert_int_equal(p.freed, 1);
    assert_true(max_pending < (1u << 20)); /* never near the 8 MiB cap */
    /* Every line, in order, once. */
    int expect = 1, live = 0;
    for (char *line = all.data; line < all.data + all.len;) {
        char *nl = memchr(line, '\n', (size_t)(all.data + all.len - line));
        assert_non_null(nl);
        if (strncmp(line, "LIVE", 4) == 0) {
            live++;
        } else if (strncmp(line, "END", 3) == 0) {
            assert_int_equal(expect, 20001);
        } else {
            assert_int_equal(atoi(line), expect);
            expect++;
        }
        line = nl + 1;
    }
    assert_int_equal(live, 1);
    free(all.data);
    stream_unref(s);
}

static void a_reader_that_stops_is_still_cut_at_the_cap(void **state)
{
    (void)state;
    struct stream *s = stream_new();
    char chunk[65536];
    memset(chunk, 'x', sizeof chunk);
    for (int i = 0; i < 200 && !stream_closed(s); i++)
        stream_write(s, chunk, sizeof chunk); /* 12.5 MiB, nobody reading */
    assert_true(stream_closed(s));
    stream_unref(s);
}

static void a_refill_is_freed_with_the_stream(void **state)
{
    (void)state;
    struct stream *s = stream_new();
    struct producer p = {.next = 1, .last = 10};
    stream_set_refill(s, refill, &p, count_free);
    stream_unref(s); /* the client went away before reading */
    assert_int_equal(p.freed, 1);
    assert_int_equal(p.calls, 0);
}

/* The read part of the queue is dropped as it goes: a 20 MiB sync never holds more than ~1 MiB. */
static void a_long_sync_holds_a_bounded_buffer_and_none_once_drained(void **state)
{
    (void)state;
    struct stream *s = stream_new();
    struct producer p = {.next = 1, .last = 20000};
    stream_set_refill(s, refill, &p, count_free);
    char buf[16384];
    size_t max_footprint = 0, total = 0, n;
    while ((n = stream_read(s, buf, sizeof buf)) > 0) {
        total += n;
        if (stream_footprint(s) > max_footprint)
            max_footprint = stream_footprint(s);
    }
    assert_true(total > (20u << 20) - (1u << 20));
    assert_true(max_footprint < (1u << 20));
    assert_true(stream_footprint(s) <= (16u << 10)); /* parked: no sync-sized buffer kept */
    stream_unref(s);
}

/* The client left mid-sync while the engine still holds the stream: buffer and refill go now. */
static void an_abandoned_stream_frees_its_buffer_and_refill_at_once(void **state)
{
    (void)state;
    struct stream *s = stream_new();
    struct stream *engine_ref = stream_ref(s);
    struct producer p = {.next = 1, .last = 20000};
    stream_set_refill(s, refill, &p, count_free);
    char buf[4096];
    assert_true(stream_read(s, buf, sizeof buf) > 0);
    assert_true(stream_footprint(s) > 0);
    stream_abandon(s);
    stream_unref(s); /* the HTTP side's reference */
    assert_int_equal(p.freed, 1);
    assert_int_equal(stream_footprint(engine_ref), 0);
    assert_false(stream_refilling(engine_ref));
    stream_write(engine_ref, "late\n", 5); /* an event for a gone watcher is dropped */
    assert_int_equal(stream_footprint(engine_ref), 0);
    stream_unref(engine_ref);
}

/* Issue 20 item 9: the bytes queued for all of one user's streams are bounded together. */
static void a_users_streams_share_one_byte_budget(void **state)
{
    (void)state;
    struct shares *t = shares_new();
    struct share *alice = shares_of(t, "alice"), *bob = shares_of(t, "bob");
    char chunk[1000];
    memset(chunk, 'x', sizeof chunk);
    struct stream *a1 = stream_new(), *a2 = stream_new(), *b1 = stream_new();
    assert_true(share_take(alice, SHARE_STREAMS, 1, 2));
    stream_set_share(a1, alice, SHARE_STREAMS, 3000);
    assert_true(share_take(alice, SHARE_STREAMS, 1, 2));
    stream_set_share(a2, alice, SHARE_STREAMS, 3000);
    assert_false(share_take(alice, SHARE_STREAMS, 1, 2)); /* a third: refused */
    assert_true(share_take(bob, SHARE_STREAMS, 1, 2));
    stream_set_share(b1, bob, SHARE_STREAMS, 3000);
    /* Two of alice's idle streams: together at most 3000 bytes, then the next write closes one. */
    stream_write(a1, chunk, sizeof chunk);
    stream_write(a2, chunk, sizeof chunk);
    stream_write(a1, chunk, sizeof chunk);
    assert_int_equal(share_used(alice, SHARE_STREAM_BYTES), 3000);
    stream_write(a2, chunk, sizeof chunk);
    assert_true(stream_closed(a2));
    assert_int_equal(stream_pending(a2), 1000); /* what was queued is still sent */
    assert_int_equal(share_used(alice, SHARE_STREAM_BYTES), 3000);
    /* bob's stream does not notice. */
    stream_write(b1, chunk, sizeof chunk);
    stream_write(b1, chunk, sizeof chunk);
    assert_false(stream_closed(b1));
    assert_int_equal(share_used(bob, SHARE_STREAM_BYTES), 2000);
    /* Read bytes are given back; an abandoned stream gives back all and its count. */
    char buf[4096];
    assert_int_equal(stream_read(a1, buf, 1500), 1500);
    assert_int_equal(share_used(alice, SHARE_STREAM_BYTES), 1500);
    stream_abandon(a2);
    assert_int_equal(share_used(alice, SHARE_STREAM_BYTES), 500);
    assert_int_equal(share_used(alice, SHARE_STREAMS), 1);
    /* Freed without being abandoned: the same. */
    stream_unref(a1);
    assert_int_equal(share_used(alice, SHARE_STREAM_BYTES), 0);
    assert_int_equal(share_used(alice, SHARE_STREAMS), 0);
    stream_unref(a2);
    stream_unref(b1);
    assert_int_equal(share_used(bob, SHARE_STREAMS), 0);
    assert_int_equal(share_used(bob, SHARE_STREAM_BYTES), 0);
    shares_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_snapshot_larger_than_the_cap_arrives_whole_and_in_order),
        cmocka_unit_test(a_reader_that_stops_is_still_cut_at_the_cap),
        cmocka_unit_test(a_refill_is_freed_with_the_stream),
        cmocka_unit_test(a_long_sync_holds_a_bounded_buffer_and_none_once_drained),
        cmocka_unit_test(an_abandoned_stream_frees_its_buffer_and_refill_at_once),
        cmocka_unit_test(a_users_streams_share_one_byte_budget),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
