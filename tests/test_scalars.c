/*
 * test_scalars: how trainjobd finds a job's TensorBoard log directory on the
 * host (engine/scalars) — the mount that holds tensorboard.log_path,
 * component by component, and the directory opened below the volume
 * without following a symlink the job planted there, at the log path or
 * above it; a directory not written yet is told apart from a refusal.
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

#include "api/jobspec.h"
#include "engine/scalars.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

static char root[256];

static int setup(void **state)
{
    (void)state;
    snprintf(root, sizeof root, "/tmp/test_scalars.XXXXXX");
    if (mkdtemp(root) == NULL)
        return -1;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char *cmd = xasprintf("rm -rf '%s'", root);
    int rc = system(cmd);
    free(cmd);
    return rc == 0 ? 0 : -1;
}

static void mk(const char *rel)
{
    char *p = xasprintf("%s/%s", root, rel);
    assert_int_equal(mkdir(p, 0755), 0);
    free(p);
}

static void test_mount_of(void **state)
{
    (void)state;
    struct mount mounts[2] = {
        {.id = "data", .mount_path = "/mnt/data"},
        {.id = "scratch", .subdir = "/users/a", .mount_path = "/mnt/afs/"},
    };
    struct jobspec job = {0};
    job.mount = mounts;
    job.mount_count = 2;
    struct strbuf rest = STRBUF_INIT;
    assert_ptr_equal(scalars_mount_of(&job, "/mnt/afs/tb/run1", &rest), &mounts[1]);
    assert_string_equal(strbuf_str(&rest), "/tb/run1");
    assert_ptr_equal(scalars_mount_of(&job, "//mnt/./afs//tb/", &rest), &mounts[1]);
    assert_string_equal(strbuf_str(&rest), "/tb");
    assert_ptr_equal(scalars_mount_of(&job, "/mnt/data", &rest), &mounts[0]);
    assert_string_equal(strbuf_str(&rest), "");
    /* a name that only starts like a mount path is not under it */
    assert_null(scalars_mount_of(&job, "/mnt/afs2/tb", &rest));
    assert_null(scalars_mount_of(&job, "/mnt", &rest));
    assert_null(scalars_mount_of(&job, "/elsewhere", &rest));
    /* ".." stays a component: beneath refuses it when the directory is opened */
    assert_ptr_equal(scalars_mount_of(&job, "/mnt/afs/../../etc", &rest), &mounts[1]);
    assert_string_equal(strbuf_str(&rest), "/../../etc");
    strbuf_free(&rest);
}

static void test_open_dir(void **state)
{
    (void)state;
    mk("vol");
    mk("vol/job");
    mk("vol/job/tb");
    mk("outside");
    char *vol = xasprintf("%s/vol", root);
    char *outside = xasprintf("%s/outside", root);
    struct strbuf err = STRBUF_INIT;
    int missing;

    int fd = scalars_open_dir(vol, "/job", "/tb", &missing, &err);
    assert_true(fd >= 0);
    struct stat a, b;
    char *tb = xasprintf("%s/job/tb", vol);
    assert_int_equal(fstat(fd, &a), 0);
    assert_int_equal(stat(tb, &b), 0);
    assert_true(a.st_ino == b.st_ino && a.st_dev == b.st_dev);
    close(fd);

    /* not written yet: missing, not refused */
    strbuf_reset(&err);
    assert_int_equal(scalars_open_dir(vol, "/job", "/tb/later", &missing, &err), -1);
    assert_int_equal(missing, 1);
    strbuf_reset(&err);
    assert_int_equal(scalars_open_dir(vol, "/nojob", "/tb", &missing, &err), -1);
    assert_int_equal(missing, 1);

    /* the job plants a symlink at its log path: refused, not followed */
    char *link = xasprintf("%s/job/evil", vol);
    assert_int_equal(symlink(outside, link), 0);
    strbuf_reset(&err);
    assert_int_equal(scalars_open_dir(vol, "/job", "/evil", &missing, &err), -1);
    assert_int_equal(missing, 0);
    assert_non_null(strstr(strbuf_str(&err), "is a symlink"));
    /* …or above it */
    strbuf_reset(&err);
    assert_int_equal(scalars_open_dir(vol, "/job", "/evil/tb", &missing, &err), -1);
    assert_int_equal(missing, 0);
    assert_non_null(strstr(strbuf_str(&err), "/job/evil is a symlink"));
    /* a symlink back inside the volume is refused all the same */
    char *inside = xasprintf("%s/job/back", vol);
    assert_int_equal(symlink(tb, inside), 0);
    strbuf_reset(&err);
    assert_int_equal(scalars_open_dir(vol, "/job", "/back", &missing, &err), -1);
    assert_int_equal(missing, 0);
    /* the mount's subdir itself, planted by another job */
    char *sub = xasprintf("%s/shared", vol);
    assert_int_equal(symlink(outside, sub), 0);
    strbuf_reset(&err);
    assert_int_equal(scalars_open_dir(vol, "/shared", "/tb", &missing, &err), -1);
    assert_int_equal(missing, 0);
    /* ".." never climbs out */
    strbuf_reset(&err);
    assert_int_equal(scalars_open_dir(vol, "/job", "/../../outside", &missing, &err), -1);
    assert_int_equal(missing, 0);
    assert_non_null(strstr(strbuf_str(&err), "'..' is not allowed"));
    /* a file where the directory should be */
    char *file = xasprintf("%s/job/file", vol);
    int ffd = open(file, O_WRONLY | O_CREAT, 0644);
    assert_true(ffd >= 0);
    close(ffd);
    strbuf_reset(&err);
    assert_int_equal(scalars_open_dir(vol, "/job", "/file", &missing, &err), -1);
    assert_int_equal(missing, 0);

    strbuf_free(&err);
    free(vol);
    free(outside);
    free(tb);
    free(link);
    free(inside);
    free(sub);
    free(file);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mount_of),
        cmocka_unit_test_setup_teardown(test_open_dir, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
