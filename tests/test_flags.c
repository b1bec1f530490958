/*
 * Tests for trainjobd's flag parsers: whole values only, ranges, and messages
 * that name the flag (issue 10 item 21: --listen 127.0.0.1:18766junk was accepted).
 */
// clang-format off
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
// clang-format on

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "engine/flags.h"
#include "util/strbuf.h"

/* Parses text as --listen; returns the status and keeps the message in msg. */
static int listen_rc(const char *text, struct sockaddr_in *a, char *msg, size_t size)
{
    struct strbuf err = STRBUF_INIT;
    int rc = flags_parse_listen("--listen", text, a, &err);
    snprintf(msg, size, "%s", strbuf_str(&err));
    strbuf_free(&err);
    return rc;
}

static void listen_takes_loopback_and_port(void **state)
{
    (void)state;
    struct sockaddr_in a;
    char msg[300];
    assert_int_equal(listen_rc("127.0.0.1:18766", &a, msg, sizeof msg), 0);
    assert_int_equal(ntohs(a.sin_port), 18766);
    assert_int_equal(ntohl(a.sin_addr.s_addr), 0x7f000001);
    assert_int_equal(listen_rc("127.9.8.7:1", &a, msg, sizeof msg), 0);
    assert_int_equal(listen_rc("127.0.0.1:65535", &a, msg, sizeof msg), 0);
    /* Port 0: the kernel picks a free one, which trainjobd then logs. */
    assert_int_equal(listen_rc("127.0.0.1:0", &a, msg, sizeof msg), 0);
    assert_int_equal(ntohs(a.sin_port), 0);
}

static void listen_refuses_junk(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "127.0.0.1:18766junk", "127.0.0.1:18766 ",
        " 127.0.0.1:1",        "127.0.0.1:+80",
        "127.0.0.1:-80",       "127.0.0.1:00",
        "127.0.0.1:65536",     "127.0.0.1:99999999999",
        "127.0.0.1:",          ":80",
        "127.0.0.1",           "127.1:80",
        "127.0.0.01:80",       "127.0.0.256:80",
        "127.0.0.1.1:80",      "0x7f.0.0.1:80",
        "localhost:80",        "10.0.0.1:80",
        "0.0.0.0:80",          "127.0.0.1:080",
        "127.0.0.1:8\n0",      "",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct sockaddr_in a;
        char msg[300];
        if (listen_rc(bad[i], &a, msg, sizeof msg) == 0)
            fail_msg("--listen '%s' was accepted", bad[i]);
        assert_non_null(strstr(msg, "--listen"));
        assert_null(strchr(msg, '\n'));
    }
}

static void seconds_are_whole_and_bounded(void **state)
{
    (void)state;
    struct strbuf err = STRBUF_INIT;
    int ms = -1;
    assert_int_equal(flags_parse_seconds("--grace", "10", 3600, &ms, &err), 0);
    assert_int_equal(ms, 10000);
    assert_int_equal(flags_parse_seconds("--grace", "0.25", 3600, &ms, &err), 0);
    assert_int_equal(ms, 250);
    assert_int_equal(flags_parse_seconds("--grace", "3600", 3600, &ms, &err), 0);
    assert_int_equal(ms, 3600000);
    static const char *const bad[] = {"",     "abc",    "-1",          "+1",   "1e3",
                                      "1.",   ".5",     "0.5x",        "nan",  "inf",
                                      "3601", "1.2345", "99999999999", "0x10", " 1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        strbuf_reset(&err);
        if (flags_parse_seconds("--grace", bad[i], 3600, &ms, &err) == 0)
            fail_msg("--grace '%s' was accepted", bad[i]);
        assert_non_null(strstr(strbuf_str(&err), "--grace"));
    }
    strbuf_free(&err);
}

static void sizes_take_suffixes_and_ranges(void **state)
{
    (void)state;
    struct strbuf err = STRBUF_INIT;
    size_t n = 0;
    assert_int_equal(flags_parse_size("--log-cap", "16M", 4096, (size_t)1 << 40, &n, &err), 0);
    assert_int_equal(n, 16u << 20);
    assert_int_equal(flags_parse_size("--log-cap", "4096", 4096, (size_t)1 << 40, &n, &err), 0);
    assert_int_equal(n, 4096);
    assert_int_equal(flags_parse_size("--log-cap", "2g", 4096, (size_t)1 << 40, &n, &err), 0);
    assert_int_equal(n, (size_t)2 << 30);
    static const char *const bad[] = {"",
                                      "1",
                                      "16MB",
                                      "-16M",
                                      "16 M",
                                      "M",
                                      "1T",
                                      "4095",
                                      "18446744073709551615G",
                                      "99999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        strbuf_reset(&err);
        if (flags_parse_size("--log-cap", bad[i], 4096, (size_t)1 << 40, &n, &err) == 0)
            fail_msg("--log-cap '%s' was accepted", bad[i]);
        assert_non_null(strstr(strbuf_str(&err), "--log-cap"));
    }
    strbuf_free(&err);
}

static void paths_are_not_empty_or_control(void **state)
{
    (void)state;
    struct strbuf err = STRBUF_INIT;
    assert_int_equal(flags_check_path("--socket", "/tmp/x.sock", &err), 0);
    assert_int_equal(flags_check_path("--socket", "", &err), -1);
    assert_non_null(strstr(strbuf_str(&err), "--socket"));
    strbuf_reset(&err);
    assert_int_equal(flags_check_path("--state-dir", "/tmp/a\033[2Jb", &err), -1);
    /* The escape is not echoed into the terminal. */
    assert_null(strchr(strbuf_str(&err), '\033'));
    strbuf_free(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(listen_takes_loopback_and_port),
        cmocka_unit_test(listen_refuses_junk),
        cmocka_unit_test(seconds_are_whole_and_bounded),
        cmocka_unit_test(sizes_take_suffixes_and_ranges),
        cmocka_unit_test(paths_are_not_empty_or_control),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
