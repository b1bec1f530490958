/*
 * test_colconf: the jobs view's columns file read as hostile — titles in
 * any case and spelling of spaces, comments and CRLF; an unknown or repeated
 * title, an empty choice, a NUL, an overlong line or an oversized file is an
 * error naming file:line; format and parse agree.
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
#include <sys/stat.h>
#include <unistd.h>

#include "tui/colconf.h"
#include "util/strbuf.h"

static const char *const titles[] = {"NAME", "DISPLAY NAME", "STATE", "AGE"};
#define N (sizeof titles / sizeof titles[0])

/* Parses text; returns rc, the order in order/count, the message in err. */
static int parse(const char *text, size_t len, size_t *order, size_t *count, struct strbuf *err)
{
    strbuf_reset(err);
    return colconf_parse(text, len, "cols", titles, NULL, N, order, count, err);
}

/* A title a column had before still reads as that column (JOBID was ID). */
static void former_titles_still_read(void **state)
{
    (void)state;
    static const char *const now[] = {"NAME", "JOBID"};
    static const char *const former[] = {NULL, "ID"};
    struct strbuf err = STRBUF_INIT;
    size_t order[2], count;
    const char *t = "NAME\nID\n";
    assert_int_equal(colconf_parse(t, strlen(t), "cols", now, former, 2, order, &count, &err), 0);
    assert_int_equal(count, 2);
    assert_int_equal(order[1], 1);
    t = "jobid\n";
    assert_int_equal(colconf_parse(t, strlen(t), "cols", now, former, 2, order, &count, &err), 0);
    assert_int_equal(order[0], 1);
    t = "JOBID\nID\n"; /* the same column twice, under both names */
    assert_int_equal(colconf_parse(t, strlen(t), "cols", now, former, 2, order, &count, &err), -1);
    strbuf_free(&err);
}

static void good_files_choose_and_order(void **state)
{
    (void)state;
    struct strbuf err = STRBUF_INIT;
    size_t order[N], count;
    const char *t = "# comment\r\n\r\n  age \r\ndisplay_name\nDisplay-Name2";
    assert_int_equal(parse(t, strlen(t), order, &count, &err), -1);
    assert_string_equal(strbuf_str(&err),
                        "cols:5: unknown column 'Display-Name2' (columns: NAME, DISPLAY NAME, "
                        "STATE, AGE)");
    t = "# comment\r\n\r\n  age \r\ndisplay_name\nstate";
    assert_int_equal(parse(t, strlen(t), order, &count, &err), 0);
    assert_int_equal(count, 3);
    assert_int_equal(order[0], 3);
    assert_int_equal(order[1], 1);
    assert_int_equal(order[2], 2);
    /* What format writes, parse reads back. */
    struct strbuf out = STRBUF_INIT;
    colconf_format(&out, titles, order, count);
    size_t again[N], n2;
    assert_int_equal(parse(strbuf_str(&out), out.len, again, &n2, &err), 0);
    assert_int_equal(n2, 3);
    assert_memory_equal(again, order, sizeof *order * 3);
    strbuf_free(&out);
    strbuf_free(&err);
}

static void bad_files_are_named_by_line(void **state)
{
    (void)state;
    struct strbuf err = STRBUF_INIT;
    size_t order[N], count;
    const char *t = "name\nstate\nNAME\n";
    assert_int_equal(parse(t, strlen(t), order, &count, &err), -1);
    assert_string_equal(strbuf_str(&err), "cols:3: column listed twice: 'NAME'");
    t = "# nothing\n\n";
    assert_int_equal(parse(t, strlen(t), order, &count, &err), -1);
    assert_non_null(strstr(strbuf_str(&err), "cols:2: no column listed"));
    assert_int_equal(parse("", 0, order, &count, &err), -1);
    assert_non_null(strstr(strbuf_str(&err), "cols:1: no column listed"));
    /* A NUL inside a line, an escape sequence shown sanitized, an overlong line. */
    const char nul[] = "name\nst\0ate\n";
    assert_int_equal(parse(nul, sizeof nul - 1, order, &count, &err), -1);
    assert_non_null(strstr(strbuf_str(&err), "cols:2: not a column title"));
    t = "\033]0;pwned\007\n";
    assert_int_equal(parse(t, strlen(t), order, &count, &err), -1);
    assert_null(strchr(strbuf_str(&err), '\033'));
    assert_null(strchr(strbuf_str(&err), '\007'));
    char big[COLCONF_MAX_BYTES + 2];
    memset(big, 'a', sizeof big);
    assert_int_equal(parse(big, 100, order, &count, &err), -1);
    assert_non_null(strstr(strbuf_str(&err), "cols:1: not a column title"));
    assert_true(err.len < 200);
    assert_int_equal(parse(big, sizeof big, order, &count, &err), -1);
    assert_non_null(strstr(strbuf_str(&err), "too large"));
    strbuf_free(&err);
}

/* A FIFO (or a directory) where the file should be is an error, not a start that hangs. */
static void load_refuses_what_is_not_a_file(void **state)
{
    (void)state;
    char path[64];
    snprintf(path, sizeof path, "/tmp/tj-colconf-%ld", (long)getpid());
    unlink(path);
    struct strbuf err = STRBUF_INIT;
    size_t order[N], count;
    assert_int_equal(colconf_load(path, titles, NULL, N, order, &count, &err), 0); /* none: defaults */
    assert_int_equal(mkfifo(path, 0600), 0);
    assert_int_equal(colconf_load(path, titles, NULL, N, order, &count, &err), -1);
    assert_non_null(strstr(strbuf_str(&err), "not a regular file"));
    unlink(path);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("age\nname\n", f);
    fclose(f);
    strbuf_reset(&err);
    assert_int_equal(colconf_load(path, titles, NULL, N, order, &count, &err), 1);
    assert_int_equal(count, 2);
    assert_int_equal(order[0], 3);
    unlink(path);
    strbuf_free(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(good_files_choose_and_order),
        cmocka_unit_test(former_titles_still_read),
        cmocka_unit_test(bad_files_are_named_by_line),
        cmocka_unit_test(load_refuses_what_is_not_a_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
