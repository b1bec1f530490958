/*
 * Tests for engine/replay: a signature is accepted once inside its window,
 * forgotten when its date leaves the window, and the table never grows past
 * its cap (it refuses instead of forgetting a live entry).
 */
// clang-format off
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
// clang-format on

#include <stdio.h>

#include "engine/replay.h"

static void a_signature_is_accepted_once(void **state)
{
    (void)state;
    struct replay *r = replay_new(16);
    assert_int_equal(replay_check(r, "sigA", 1300, 1000), REPLAY_NEW);
    assert_int_equal(replay_check(r, "sigA", 1300, 1001), REPLAY_SEEN);
    assert_int_equal(replay_check(r, "sigB", 1300, 1001), REPLAY_NEW);
    assert_int_equal(replay_count(r), 2);
    /* After its date left the window the entry goes (a replay then fails on the date). */
    assert_int_equal(replay_check(r, "sigA", 1700, 1301), REPLAY_NEW);
    replay_free(r);
}

static void memory_is_bounded(void **state)
{
    (void)state;
    struct replay *r = replay_new(100);
    char sig[32];
    for (int i = 0; i < 100; i++) {
        snprintf(sig, sizeof sig, "s%d", i);
        assert_int_equal(replay_check(r, sig, 2000 + i, 1000), REPLAY_NEW);
    }
    /* Full of live entries: refuse, and still know every one of them. */
    assert_int_equal(replay_check(r, "new", 2500, 1000), REPLAY_FULL);
    assert_int_equal(replay_check(r, "s0", 2000, 1000), REPLAY_SEEN);
    assert_int_equal(replay_check(r, "s99", 2099, 1000), REPLAY_SEEN);
    assert_int_equal(replay_count(r), 100);
    /* Once some expire, room comes back. */
    assert_int_equal(replay_check(r, "new", 2500, 2050), REPLAY_NEW);
    assert_true(replay_count(r) <= 100);
    assert_int_equal(replay_check(r, "s99", 2099, 2050), REPLAY_SEEN);
    replay_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_signature_is_accepted_once),
        cmocka_unit_test(memory_is_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
