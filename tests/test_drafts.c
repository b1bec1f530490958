/*
 * test_drafts: the wizard's list of unfinished jobs (tui/wizard_drafts) is
 * newest first to the nanosecond: drafts written within one second (a new
 * job, then a clone a moment later) keep their order, whatever their names.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h> /* after the four headers it needs */

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tui/wizard_drafts.h"
#include "util/xalloc.h"

/* dir/name, a draft of label, modified at second sec and nanosecond nsec. */
static void put_draft(const char *dir, const char *name, const char *label, long nsec)
{
    char *path = xasprintf("%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "%s%s\ndisplay_name: x\n", DRAFTS_HEADER, label);
    fclose(f);
    struct timespec ts[2] = {{1767000000, nsec}, {1767000000, nsec}};
    assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
    free(path);
}

static void drafts_of_one_second_are_newest_first(void **state)
{
    (void)state;
    char dir[] = "/tmp/test_drafts.XXXXXX";
    assert_non_null(mkdtemp(dir));
    /* Names in the opposite order of the times: only the nanoseconds can tell. */
    put_draft(dir, "draft-cccccccccccccccc.yaml", "newest", 900000000);
    put_draft(dir, "draft-bbbbbbbbbbbbbbbb.yaml", "middle", 500000000);
    put_draft(dir, "draft-aaaaaaaaaaaaaaaa.yaml", "oldest", 100000000);
    struct draft_list l;
    drafts_list(dir, &l);
    assert_int_equal(l.count, 3);
    assert_string_equal(l.items[0].label, "newest");
    assert_string_equal(l.items[1].label, "middle");
    assert_string_equal(l.items[2].label, "oldest");
    for (size_t i = 0; i < l.count; i++)
        unlink(l.items[i].path);
    drafts_free(&l);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(drafts_of_one_second_are_newest_first),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
