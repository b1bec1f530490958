/*
 * Tests for the event loop (timers in deadline order, cancel, fd readiness,
 * signals through the self-pipe), wall-clock formatting and the engine's
 * stream buffer between the engine and a parked HTTP connection.
 */
// clang-format off
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
// clang-format on

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "engine/stream.h"
#include "util/loop.h"
#include "util/timefmt.h"

static char order[16];
static size_t order_len;

static void mark(void *ctx)
{
    order[order_len++] = *(const char *)ctx;
}

static void timers_fire_in_deadline_order(void **state)
{
    (void)state;
    struct loop *lp = loop_new();
    order_len = 0;
    loop_add_timer(lp, 30, mark, "c");
    loop_add_timer(lp, 10, mark, "a");
    uint64_t gone = loop_add_timer(lp, 15, mark, "x");
    loop_add_timer(lp, 20, mark, "b");
    loop_cancel(lp, gone);
    int64_t start = loop_now_ms();
    while (order_len < 3 && loop_now_ms() - start < 2000)
        loop_run_once(lp, 100);
    assert_int_equal(order_len, 3);
    assert_memory_equal(order, "abc", 3);
    assert_true(loop_now_ms() - start >= 30);
    loop_free(lp);
}

static int fd_hits;

static void on_fd(void *ctx, int fd, short revents)
{
    char buf[8];
    (void)ctx;
    assert_true(revents & POLLIN);
    assert_int_equal(read(fd, buf, sizeof buf), 1);
    fd_hits++;
}

static void fd_readiness_calls_back(void **state)
{
    (void)state;
    struct loop *lp = loop_new();
    int p[2];
    assert_int_equal(pipe(p), 0);
    fd_hits = 0;
    loop_add_fd(lp, p[0], POLLIN, on_fd, NULL);
    loop_run_once(lp, 0); /* nothing to read: no call */
    assert_int_equal(fd_hits, 0);
    assert_int_equal(write(p[1], "x", 1), 1);
    loop_run_once(lp, 1000);
    assert_int_equal(fd_hits, 1);
    loop_remove_fd(lp, p[0]);
    assert_int_equal(write(p[1], "y", 1), 1);
    loop_run_once(lp, 0);
    assert_int_equal(fd_hits, 1);
    close(p[0]);
    close(p[1]);
    loop_free(lp);
}

/*
 * Two ready pipes; whichever is called first ends the other's watch and
 * watches a fresh, empty pipe under the other's number. That new watch is
 * not called in this turn for the old file's readiness (the old loop looked
 * its callback up by number and called it with the old file's revents).
 */
struct swap_state {
    struct loop *lp;
    int read_end[2], spare[2];
    int first_calls, stale_calls;
};

static void on_stale(void *ctx, int fd, short revents)
{
    struct swap_state *st = ctx;
    (void)fd;
    (void)revents;
    st->stale_calls++;
}

static void on_first(void *ctx, int fd, short revents)
{
    struct swap_state *st = ctx;
    (void)revents;
    st->first_calls++;
    int other = fd == st->read_end[0] ? st->read_end[1] : st->read_end[0];
    loop_remove_fd(st->lp, fd);
    loop_remove_fd(st->lp, other);
    assert_int_equal(dup2(st->spare[0], other), other); /* the number now names an empty pipe */
    loop_add_fd(st->lp, other, POLLIN, on_stale, st);
}

static void a_watch_sees_only_its_own_file(void **state)
{
    (void)state;
    struct swap_state st = {.lp = loop_new()};
    int a[2], b[2];
    assert_int_equal(pipe(a), 0);
    assert_int_equal(pipe(b), 0);
    assert_int_equal(pipe(st.spare), 0);
    st.read_end[0] = a[0], st.read_end[1] = b[0];
    assert_int_equal(write(a[1], "x", 1), 1);
    assert_int_equal(write(b[1], "y", 1), 1);
    loop_add_fd(st.lp, a[0], POLLIN, on_first, &st);
    loop_add_fd(st.lp, b[0], POLLIN, on_first, &st);
    loop_run_once(st.lp, 1000);
    assert_int_equal(st.first_calls, 1);
    assert_int_equal(st.stale_calls, 0);
    loop_run_once(st.lp, 0); /* the spare pipe is empty: still nothing */
    assert_int_equal(st.stale_calls, 0);
    assert_int_equal(write(st.spare[1], "z", 1), 1);
    loop_run_once(st.lp, 1000);
    assert_int_equal(st.stale_calls, 1);
    loop_free(st.lp);
    for (int i = 0; i < 2; i++) {
        close(a[i]);
        close(b[i]);
        close(st.spare[i]);
    }
}

static int file_hits;
static short file_revents;

static void on_file(void *ctx, int fd, short revents)
{
    (void)ctx;
    (void)fd;
    file_hits++;
    file_revents = revents;
}

/* What poll(2) calls always ready (a regular file, /dev/null) is called back at every turn. */
static void files_are_always_ready(void **state)
{
    (void)state;
    struct loop *lp = loop_new();
    int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
    assert_true(null >= 0);
    file_hits = 0;
    loop_add_fd(lp, null, POLLIN, on_file, NULL);
    int64_t start = loop_now_ms();
    loop_run_once(lp, 5000); /* does not wait: the file is ready */
    assert_true(loop_now_ms() - start < 2500);
    assert_int_equal(file_hits, 1);
    assert_true(file_revents & POLLIN);
    loop_run_once(lp, 0);
    assert_int_equal(file_hits, 2);
    loop_remove_fd(lp, null);
    loop_run_once(lp, 0);
    assert_int_equal(file_hits, 2);
    close(null);
    loop_free(lp);
}

/* Many watched, one ready: only that one is called back, once per turn it is ready. */
static int many_hits, many_fd;

static void on_many(void *ctx, int fd, short revents)
{
    char c;
    (void)ctx;
    (void)revents;
    many_hits++;
    many_fd = fd;
    assert_int_equal(read(fd, &c, 1), 1);
}

static void one_ready_among_many(void **state)
{
    (void)state;
    enum { PIPES = 200 };
    struct loop *lp = loop_new();
    int p[PIPES][2];
    for (int i = 0; i < PIPES; i++) {
        assert_int_equal(pipe2(p[i], O_CLOEXEC), 0);
        loop_add_fd(lp, p[i][0], POLLIN, on_many, NULL);
    }
    many_hits = 0;
    for (int round = 0; round < 3; round++) {
        int i = (round * 67) % PIPES;
        assert_int_equal(write(p[i][1], "x", 1), 1);
        loop_run_once(lp, 1000);
        assert_int_equal(many_hits, round + 1);
        assert_int_equal(many_fd, p[i][0]);
    }
    loop_set_events(lp, p[5][0], 0); /* no longer wants input: not called for it */
    assert_int_equal(write(p[5][1], "x", 1), 1);
    loop_run_once(lp, 0);
    assert_int_equal(many_hits, 3);
    loop_set_events(lp, p[5][0], POLLIN);
    loop_run_once(lp, 1000);
    assert_int_equal(many_hits, 4);
    for (int i = 0; i < PIPES; i++) {
        loop_remove_fd(lp, p[i][0]);
        close(p[i][0]);
        close(p[i][1]);
    }
    loop_free(lp);
}

static int got_signal;

static void on_signal(void *ctx, int signo)
{
    got_signal = signo;
    loop_stop(ctx);
}

static void signals_arrive_through_the_loop(void **state)
{
    (void)state;
    struct loop *lp = loop_new();
    got_signal = 0;
    loop_add_signal(lp, SIGUSR1, on_signal, lp);
    raise(SIGUSR1);
    assert_int_equal(got_signal, 0); /* the handler only wrote a byte */
    loop_run(lp);
    assert_int_equal(got_signal, SIGUSR1);
    assert_true(loop_stopped(lp));
    loop_free(lp);
}

static void rfc3339_round_trips(void **state)
{
    (void)state;
    char buf[TIMEFMT_RFC3339_LEN];
    time_rfc3339(1764428645123, buf);
    assert_string_equal(buf, "2025-11-29T15:04:05.123Z");
    assert_int_equal(time_parse_rfc3339(buf), 1764428645123);
    assert_int_equal(time_parse_rfc3339("2025-11-29T23:04:05+08:00"), 1764428645000);
    assert_int_equal(time_parse_rfc3339("2025-11-29T15:04:05.5Z"), 1764428645500);
    assert_int_equal(time_parse_rfc3339("yesterday"), -1);
    assert_int_equal(time_parse_rfc3339("2025-11-29T15:04:05"), -1);
    assert_int_equal(time_parse_rfc3339(NULL), -1);
    /* shapes off the fast path read as sscanf always read them */
    assert_int_equal(time_parse_rfc3339(" 2025-11-29T15:04:05Z"), 1764428645000);
    assert_int_equal(time_parse_rfc3339("2025-11-29T15:04:5Z"), 1764428645000);
    assert_int_equal(time_parse_rfc3339("2025-11-29T15:04"), -1);
}

/* The day arithmetic agrees with timegm: leap years, centuries, days past a month's end. */
/* Every backend's times print in one form: trainjobd's ms, Slurm's seconds and offsets alike. */
static void times_are_shown_in_one_form(void **state)
{
    (void)state;
    char buf[TIMEFMT_RFC3339_LEN];
    time_shown("2025-11-29T15:04:05.123Z", buf);
    assert_string_equal(buf, "2025-11-29T15:04:05Z");
    time_shown("2025-11-29T15:04:05Z", buf);
    assert_string_equal(buf, "2025-11-29T15:04:05Z");
    time_shown("2025-11-29T23:04:05+08:00", buf);
    assert_string_equal(buf, "2025-11-29T15:04:05Z");
    time_shown("2025-11-29T15:04:05.999Z", buf); /* never rounded into the next second */
    assert_string_equal(buf, "2025-11-29T15:04:05Z");
    time_shown("yesterday", buf);
    assert_string_equal(buf, "yesterday");
    time_shown(NULL, buf);
    assert_string_equal(buf, "");
}

static void parsed_times_agree_with_timegm(void **state)
{
    (void)state;
    static const int years[] = {1600, 1899, 1900, 1969, 1970, 1999, 2000, 2024, 2100, 2400, 9999};
    for (size_t y = 0; y < sizeof years / sizeof *years; y++)
        for (int mon = 1; mon <= 12; mon++)
            for (int mday = 0; mday <= 32; mday += 1) {
                char text[64];
                snprintf(text, sizeof text, "%04d-%02d-%02dT23:59:60Z", years[y], mon, mday);
                struct tm tm = {.tm_year = years[y] - 1900,
                                .tm_mon = mon - 1,
                                .tm_mday = mday,
                                .tm_hour = 23,
                                .tm_min = 59,
                                .tm_sec = 60};
                assert_int_equal(time_parse_rfc3339(text), (int64_t)timegm(&tm) * 1000);
            }
    /* a month out of range still goes through timegm's normalization */
    struct tm tm = {.tm_year = 2025 - 1900, .tm_mon = 12, .tm_mday = 1};
    assert_int_equal(time_parse_rfc3339("2025-13-01T00:00:00Z"), (int64_t)timegm(&tm) * 1000);
}

static void ages_are_short(void **state)
{
    (void)state;
    char buf[16];
    time_age(12000, buf, sizeof buf);
    assert_string_equal(buf, "12s");
    time_age(3 * 60000 + 5000, buf, sizeof buf);
    assert_string_equal(buf, "3m");
    time_age(2 * 3600000, buf, sizeof buf);
    assert_string_equal(buf, "2h");
    time_age(5 * 86400000LL, buf, sizeof buf);
    assert_string_equal(buf, "5d");
    time_age(-5, buf, sizeof buf);
    assert_string_equal(buf, "0s");
}

static int wakes;

static void on_wake(void *ctx)
{
    (void)ctx;
    wakes++;
}

static void stream_parks_and_wakes(void **state)
{
    (void)state;
    struct stream *s = stream_new();
    char buf[64];
    wakes = 0;
    stream_set_waker(s, on_wake, NULL);
    assert_int_equal(stream_read(s, buf, sizeof buf), 0);
    stream_park(s);
    stream_write(s, "hello ", 6);
    stream_write(s, "world", 5);
    assert_int_equal(wakes, 1); /* one wake per parking, not per write */
    assert_int_equal(stream_read(s, buf, 4), 4);
    assert_memory_equal(buf, "hell", 4);
    assert_int_equal(stream_read(s, buf, sizeof buf), 7);
    assert_memory_equal(buf, "o world", 7);
    stream_park(s);
    stream_close(s);
    assert_int_equal(wakes, 2);
    assert_true(stream_closed(s));
    stream_write(s, "late", 4); /* dropped after close */
    assert_int_equal(stream_pending(s), 0);
    struct stream *t = stream_ref(s);
    stream_unref(s);
    stream_abandon(t);
    assert_true(stream_abandoned(t));
    stream_unref(t);
}

static void stream_caps_a_reader_that_does_not_read(void **state)
{
    (void)state;
    struct stream *s = stream_new();
    static char chunk[1 << 20];
    memset(chunk, 'x', sizeof chunk);
    for (int i = 0; i < 20 && !stream_closed(s); i++)
        stream_write(s, chunk, sizeof chunk);
    assert_true(stream_closed(s)); /* the client reconnects; the engine does not grow */
    assert_true(stream_pending(s) <= (8u << 20));
    stream_unref(s);
}

/*
 * A wait that fails for a reason other than a signal is a bug (the epoll fd
 * closed under the loop): the process aborts rather than go round again at
 * once for ever. Found here by its /proc/self/fd link, closed in a child.
 */
static void a_broken_wait_aborts(void **state)
{
    (void)state;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct loop *lp = loop_new();
        int closed = 0;
        char link[64], target[64];
        for (int fd = 3; fd < 1024; fd++) {
            snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
            ssize_t n = readlink(link, target, sizeof target - 1);
            if (n > 0 && (target[n] = '\0', strcmp(target, "anon_inode:[eventpoll]") == 0))
                closed += close(fd) == 0;
        }
        if (closed != 1)
            _exit(2); /* not the one epoll fd expected: the test is wrong, not the loop */
        for (int i = 0; i < 3; i++)
            loop_run_once(lp, 0);
        _exit(0);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFSIGNALED(st));
    assert_int_equal(WTERMSIG(st), SIGABRT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(timers_fire_in_deadline_order),
        cmocka_unit_test(a_broken_wait_aborts),
        cmocka_unit_test(fd_readiness_calls_back),
        cmocka_unit_test(a_watch_sees_only_its_own_file),
        cmocka_unit_test(files_are_always_ready),
        cmocka_unit_test(one_ready_among_many),
        cmocka_unit_test(times_are_shown_in_one_form),
        cmocka_unit_test(signals_arrive_through_the_loop),
        cmocka_unit_test(rfc3339_round_trips),
        cmocka_unit_test(parsed_times_agree_with_timegm),
        cmocka_unit_test(ages_are_short),
        cmocka_unit_test(stream_parks_and_wakes),
        cmocka_unit_test(stream_caps_a_reader_that_does_not_read),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
