/*
 * test_pathpart: the one component rule that api/validate, api/slurm_script
 * and util/beneath share — empty and "." components are none, ".." is one —
 * and the canonical form both validation and the Slurm binds compare.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h> /* after the four headers it needs */

#include <string.h>

#include "util/pathpart.h"
#include "util/strbuf.h"

/* The components of p joined by '|', e.g. "a|..|b". */
static void expect_parts(const char *p, const char *want)
{
    struct strbuf got = STRBUF_INIT;
    const char *part;
    size_t len;
    while ((part = path_next_part(&p, &len)) != NULL) {
        if (got.len)
            strbuf_addc(&got, '|');
        strbuf_add(&got, part, len);
    }
    assert_string_equal(strbuf_str(&got), want);
    assert_int_equal(*p, '\0'); /* nothing is left behind the last component */
    strbuf_free(&got);
}

static void components_skip_empty_and_dot(void **state)
{
    (void)state;
    expect_parts("/a/b", "a|b");
    expect_parts("//a///b//", "a|b");
    expect_parts("/./a/./b/.", "a|b");
    expect_parts("/a/../b", "a|..|b");
    expect_parts("/.../.a/a.", "...|.a|a.");
    expect_parts("", "");
    expect_parts("/", "");
    expect_parts("/././/", "");
}

static void expect_normal(const char *p, const char *want)
{
    struct strbuf out = STRBUF_INIT;
    strbuf_adds(&out, "stale"); /* reset first: what out held is not kept */
    path_normalise(p, &out);
    assert_string_equal(strbuf_str(&out), want);
    strbuf_free(&out);
}

static void normal_form_is_one_spelling(void **state)
{
    (void)state;
    expect_normal("/lustre/ds/", "/lustre/ds");
    expect_normal("/lustre//ds/./imagenet", "/lustre/ds/imagenet");
    expect_normal("lustre/ds", "/lustre/ds");
    expect_normal("/", "/");
    expect_normal("", "/");
    expect_normal("/a/../b", "/a/../b"); /* ".." is the caller's to refuse, not resolved */
}

static void dotdot_is_found_only_as_a_component(void **state)
{
    (void)state;
    assert_true(path_has_dotdot("/a/../b"));
    assert_true(path_has_dotdot(".."));
    assert_true(path_has_dotdot("/a/b/.."));
    assert_true(path_has_dotdot("/a/./..//b"));
    assert_false(path_has_dotdot("/a/..b/c"));
    assert_false(path_has_dotdot("/a/b.."));
    assert_false(path_has_dotdot("/.../x"));
    assert_false(path_has_dotdot("/a/./b"));
    assert_false(path_has_dotdot(""));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(components_skip_empty_and_dot),
        cmocka_unit_test(normal_form_is_one_spelling),
        cmocka_unit_test(dotdot_is_found_only_as_a_component),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
