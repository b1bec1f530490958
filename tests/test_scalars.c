/*
 * test_scalars: how trainjobd finds a job's TensorBoard log directory on the
 * host (engine/scalars) — the mount that holds tensorboard.log_path,
 * component by component, and the directory opened below the volume
 * without following a symlink the job planted there, at the log path or
 * above it; a directory not written yet is told apart from a refusal; a
 * page of ?chart= (the points a chart keeps, exact) against every point.
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

#include <math.h>

#include "api/jobspec.h"
#include "api/scalarpage.h"
#include "api/tfevents.h"
#include "api/apierror.h"
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

/*
 * ?chart=N: a page of 100,000 points of one series sends at most 5 per
 * bucket (first, last, min, max, NaN), every one of them a point of the
 * file exactly (step and value), the spike and the dip among them, and the
 * page still counts every point read; without chart every point comes.
 */
static void test_chart_page(void **state)
{
    (void)state;
    char dir[300], path[340];
    snprintf(dir, sizeof dir, "%s/chart", root);
    mkdir(dir, 0755);
    snprintf(path, sizeof path, "%s/events.out.tfevents.1", dir);
    struct strbuf sb = STRBUF_INIT;
    enum { N = 100000, BUCKETS = 64 };
    for (int64_t s = 0; s < N; s++) {
        float v = (float)(1.0 / (1.0 + (double)s));
        if (s == 31337)
            v = 1000.5f; /* a spike */
        if (s == 77777)
            v = -3.25f; /* a dip */
        tfevents_write_simple(&sb, s, 1.7e9 + (double)s, "loss", v);
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, sb.buf, sb.len), (ssize_t)sb.len);
    close(fd);
    strbuf_free(&sb);

    for (int chart = 0; chart <= 1; chart++) {
        struct strbuf why = STRBUF_INIT, out = STRBUF_INIT;
        struct tfevents_dir *d = tfevents_open(dir, &why);
        assert_non_null(d);
        struct scalars_page_info info;
        assert_int_equal(scalars_page(d, "/tb", SCALARPAGE_MAX_LIMIT, chart ? BUCKETS : 0,
                                      (size_t)64 << 20, NULL, &out, &info, &why),
                         0);
        tfevents_close(d);
        assert_int_equal(info.scalars, N);
        struct scalar_page p;
        scalar_page_init(&p);
        struct api_error err = {0};
        assert_int_equal(scalar_page_from_text(out.buf, out.len, &p, &err), 0);
        if (!chart) {
            assert_int_equal(p.count, N);
        } else {
            assert_true(p.count <= 5 * BUCKETS);
            assert_true(p.count >= BUCKETS);
        }
        bool spike = false, dip = false;
        for (size_t i = 0; i < p.count; i++) {
            const struct scalar_point *pt = &p.points[i];
            float want = (float)(1.0 / (1.0 + (double)pt->step));
            if (pt->step == 31337)
                want = 1000.5f;
            if (pt->step == 77777)
                want = -3.25f;
            assert_true((float)pt->value == want); /* exact, a point of the file */
            if (i > 0)
                assert_true(pt->step > p.points[i - 1].step); /* in step order, each once */
            spike |= pt->value == 1000.5;
            dip |= pt->value == -3.25;
        }
        assert_true(spike && dip);
        assert_int_equal(p.points[0].step, 0);
        assert_int_equal(p.points[p.count - 1].step, N - 1);
        scalar_page_free(&p);
        strbuf_free(&out);
        strbuf_free(&why);
    }
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mount_of),
        cmocka_unit_test_setup_teardown(test_open_dir, setup, teardown),
        cmocka_unit_test_setup_teardown(test_chart_page, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
