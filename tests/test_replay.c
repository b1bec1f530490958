/*
 * Tests for engine/replay: a signature is accepted once inside its window,
 * forgotten when its date leaves the window, and each key's share never
 * grows past its cap (it refuses instead of forgetting a live entry) while
 * other keys are untouched by one key's flood. Also the per-user share
 * table (engine/shares) and the default limits a team engine runs with.
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

#include "engine/config.h"
#include "engine/replay.h"
#include "engine/shares.h"

static void a_signature_is_accepted_once(void **state)
{
    (void)state;
    struct replay *r = replay_new(16);
    assert_int_equal(replay_check(r, "AK", "sigA", 1300, 1000), REPLAY_NEW);
    assert_int_equal(replay_check(r, "AK", "sigA", 1300, 1001), REPLAY_SEEN);
    assert_int_equal(replay_check(r, "AK", "sigB", 1300, 1001), REPLAY_NEW);
    assert_int_equal(replay_count(r), 2);
    /* After its date left the window the entry goes (a replay then fails on the date). */
    assert_int_equal(replay_check(r, "AK", "sigA", 1700, 1301), REPLAY_NEW);
    replay_free(r);
}

static void memory_is_bounded(void **state)
{
    (void)state;
    struct replay *r = replay_new(100);
    char sig[32];
    for (int i = 0; i < 100; i++) {
        snprintf(sig, sizeof sig, "s%d", i);
        assert_int_equal(replay_check(r, "AK", sig, 2000 + i, 1000), REPLAY_NEW);
    }
    /* Full of live entries: refuse, and still know every one of them. */
    assert_int_equal(replay_check(r, "AK", "new", 2500, 1000), REPLAY_FULL);
    assert_int_equal(replay_check(r, "AK", "s0", 2000, 1000), REPLAY_SEEN);
    assert_int_equal(replay_check(r, "AK", "s99", 2099, 1000), REPLAY_SEEN);
    assert_int_equal(replay_count(r), 100);
    /* Once some expire, room comes back. */
    assert_int_equal(replay_check(r, "AK", "new", 2500, 2050), REPLAY_NEW);
    assert_true(replay_count(r) <= 100);
    assert_int_equal(replay_check(r, "AK", "s99", 2099, 2050), REPLAY_SEEN);
    replay_free(r);
}

/* Issue 20 item 7: one key's flood fills its own share only. */
static void one_key_fills_only_its_share(void **state)
{
    (void)state;
    struct replay *r = replay_new(50);
    char sig[32];
    for (int i = 0; i < 50; i++) {
        snprintf(sig, sizeof sig, "a%d", i);
        assert_int_equal(replay_check(r, "AKA", sig, 1300, 1000), REPLAY_NEW);
    }
    assert_int_equal(replay_check(r, "AKA", "one-more", 1300, 1000), REPLAY_FULL);
    assert_int_equal(replay_key_count(r, "AKA"), 50);
    /* The full key is told when room comes back: its first entry's end. */
    assert_int_equal(replay_key_frees_at(r, "AKA"), 1300);
    /* Another key is not affected, up to its own share. */
    for (int i = 0; i < 50; i++) {
        snprintf(sig, sizeof sig, "b%d", i);
        assert_int_equal(replay_check(r, "AKB", sig, 1300, 1000), REPLAY_NEW);
    }
    assert_int_equal(replay_key_count(r, "AKB"), 50);
    assert_int_equal(replay_key_frees_at(r, "AKB"), 0); /* not told before it was refused */
    /* The same signature under two keys is two requests (a replay is per key). */
    assert_int_equal(replay_check(r, "AKB", "a0", 1300, 1000), REPLAY_FULL);
    assert_int_equal(replay_check(r, "AKA", "a0", 1300, 1000), REPLAY_SEEN);
    assert_int_equal(replay_count(r), 100);
    replay_free(r);
}

/* Entries leave with their date, whatever order they came in. */
static void expiry_in_any_order(void **state)
{
    (void)state;
    struct replay *r = replay_new(3);
    assert_int_equal(replay_check(r, "AK", "late", 1360, 1000), REPLAY_NEW);
    assert_int_equal(replay_check(r, "AK", "early", 1010, 1000), REPLAY_NEW);
    assert_int_equal(replay_check(r, "AK", "mid", 1200, 1000), REPLAY_NEW);
    assert_int_equal(replay_check(r, "AK", "x", 1300, 1005), REPLAY_FULL);
    assert_int_equal(replay_key_frees_at(r, "AK"), 1010);
    /* Refused again within the same second: no second sweep, still full. */
    assert_int_equal(replay_check(r, "AK", "x", 1300, 1005), REPLAY_FULL);
    /* "early" (not at the head of the list) has expired by 1011. */
    assert_int_equal(replay_check(r, "AK", "x", 1300, 1011), REPLAY_NEW);
    assert_int_equal(replay_check(r, "AK", "late", 1360, 1011), REPLAY_SEEN);
    assert_int_equal(replay_key_count(r, "AK"), 3);
    replay_free(r);
}

static void shares_count_per_user(void **state)
{
    (void)state;
    struct shares *t = shares_new();
    struct share *a = shares_of(t, "alice"), *b = shares_of(t, "bob");
    assert_ptr_equal(shares_of(t, "alice"), a);
    assert_int_equal(shares_count(t), 2);
    for (int i = 0; i < 3; i++)
        assert_true(share_take(a, SHARE_STREAMS, 1, 3));
    assert_false(share_take(a, SHARE_STREAMS, 1, 3));
    assert_int_equal(share_used(a, SHARE_STREAMS), 3);
    assert_true(share_take(b, SHARE_STREAMS, 1, 3));       /* bob does not notice */
    assert_int_equal(share_used(a, SHARE_CONNECTIONS), 0); /* kinds are apart */
    share_give(a, SHARE_STREAMS, 1);
    assert_true(share_take(a, SHARE_STREAMS, 1, 3));
    /* Bytes: a take that would pass the limit takes nothing. */
    assert_true(share_take(a, SHARE_STREAM_BYTES, 900, 1000));
    assert_false(share_take(a, SHARE_STREAM_BYTES, 101, 1000));
    assert_true(share_take(a, SHARE_STREAM_BYTES, 100, 1000));
    assert_false(share_take(a, SHARE_STREAM_BYTES, (size_t)-1, 1000)); /* no overflow */
    share_give(a, SHARE_STREAM_BYTES, 5000);                           /* never below zero */
    assert_int_equal(share_used(a, SHARE_STREAM_BYTES), 0);
    /* The engine's own user (no share) is not counted here. */
    assert_true(share_take(NULL, SHARE_STREAMS, 1, 0));
    assert_int_equal(share_used(NULL, SHARE_STREAMS), 0);
    shares_free(t);
}

/* The limits a team engine has when engine.yaml says nothing (tests may set smaller ones). */
static void default_limits(void **state)
{
    (void)state;
    struct engine_config cfg;
    memset(&cfg, 0, sizeof cfg);
    struct config_limits l;
    config_effective_limits(&cfg, &l);
    assert_int_equal(l.replay_per_key, 4096);
    assert_int_equal(l.connections_per_member, 64);
    assert_int_equal(l.anonymous_connections, 256);
    assert_int_equal(l.request_seconds, 10);
    assert_int_equal(l.streams_per_member, 32);
    assert_int_equal(l.stream_mib_per_member, 64);
    assert_int_equal(l.scalar_follows_per_member, 8);
    cfg.limits.replay_per_key = 50;
    cfg.limits.request_seconds = 2;
    config_effective_limits(&cfg, &l);
    assert_int_equal(l.replay_per_key, 50);
    assert_int_equal(l.request_seconds, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_signature_is_accepted_once), cmocka_unit_test(memory_is_bounded),
        cmocka_unit_test(one_key_fills_only_its_share), cmocka_unit_test(expiry_in_any_order),
        cmocka_unit_test(shares_count_per_user),        cmocka_unit_test(default_limits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
