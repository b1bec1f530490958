/*
 * Tests for routes_check: what a request brings (decoded path segments,
 * query keys and values) is UTF-8 without control characters and bounded
 * before any handler sees it; a refusal names the segment or parameter.
 */
// clang-format off
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
// clang-format on

#include <string.h>

#include "api/apierror.h"
#include "engine/routes.h"

/* A query of one key=value (value_len bytes, NULs allowed). */
struct query {
    const char *key, *value;
    size_t value_len;
};

static int each(void *ctx, http_arg_fn fn, void *arg)
{
    const struct query *q = ctx;
    return q->key ? fn(arg, q->key, strlen(q->key), q->value, q->value_len) : 0;
}

static int check(const char *path, const char *target, const char *key, const char *value,
                 size_t value_len, struct api_error *err)
{
    struct query q = {key, value, value_len};
    struct http_request req = {"GET", path, target, NULL, each, &q, NULL, 0, "u", NULL, NULL};
    memset(err, 0, sizeof *err);
    return routes_check(&req, err);
}

static void good_requests_pass(void **state)
{
    (void)state;
    struct api_error err;
    assert_int_equal(
        check("/trainjob/v1/workspaces/default/trainingJobs/训练-1", NULL, "name", "pt-", 3, &err),
        0);
    assert_int_equal(check("/trainjob/v1/catalog", "/trainjob/v1/catalog", NULL, NULL, 0, &err), 0);
    assert_int_equal(check("/", "/", "watch", NULL, 0, &err), 0);
}

static void bad_segments_are_named(void **state)
{
    (void)state;
    struct api_error err;
    assert_int_equal(
        check("/trainjob/v1/workspaces/nosuchws/trainingJobs/\xff", NULL, NULL, NULL, 0, &err),
        400);
    assert_string_equal(err.message, "path segment 6 (after 'trainingJobs'): not valid UTF-8");
    assert_int_equal(check("/a/\xc0\xaf", NULL, NULL, NULL, 0, &err), 400); /* overlong '/' */
    assert_int_equal(check("/a/b\x1b[2J", NULL, NULL, NULL, 0, &err), 400);
    assert_string_equal(err.message, "path segment 2 (after 'a'): has a control character");
    assert_int_equal(check("/a/b\xc2\x9b", NULL, NULL, NULL, 0, &err), 400); /* C1 CSI */
    assert_int_equal(check("/a/b\x7f", NULL, NULL, NULL, 0, &err), 400);
    char longseg[300];
    memset(longseg, 'a', sizeof longseg);
    longseg[0] = '/';
    longseg[sizeof longseg - 1] = '\0';
    assert_int_equal(check(longseg, NULL, NULL, NULL, 0, &err), 400);
    assert_string_equal(err.message, "path segment 1: too long");
    char many[200] = "";
    for (int i = 0; i < 30; i++)
        memcpy(many + 2 * i, "/s", 3);
    assert_int_equal(check(many, NULL, NULL, NULL, 0, &err), 400);
    /* %00 cuts the decoded path short: refused in the raw target. */
    assert_int_equal(check("/trainjob/v1/x/a", "/trainjob/v1/x/a%00b", NULL, NULL, 0, &err), 400);
    assert_int_equal(check("/trainjob/v1/x/a", "/trainjob/v1/x/a?q=%00", "q", "\0", 1, &err),
                     400); /* …in the query it is the value that says so */
}

static void bad_query_values_are_named(void **state)
{
    (void)state;
    struct api_error err;
    assert_int_equal(check("/a", NULL, "filter", "name='\xff'", 8, &err), 400);
    assert_string_equal(err.field, "filter");
    assert_string_equal(err.message, "query parameter filter: not valid UTF-8");
    assert_int_equal(check("/a", NULL, "name", "a\0b", 3, &err), 400);
    assert_string_equal(err.message, "query parameter name: has a control character");
    assert_int_equal(check("/a", NULL, "k\xff", "v", 1, &err), 400);
    assert_string_equal(err.message, "a query parameter name: not valid UTF-8");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(good_requests_pass),
        cmocka_unit_test(bad_segments_are_named),
        cmocka_unit_test(bad_query_values_are_named),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
