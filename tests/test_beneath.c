/*
 * test_beneath: beneath_open_dir, the resolver trainjob-shim uses for a
 * volume's subdirectory (issue 10, item 1: a job plants `ln -sfn / evil` in a
 * shared volume and another job mounts subdir /evil). Each test gets a
 * fresh directory with a "vol" (the volume) and an "outside" holding a
 * canary; every case runs with openat2 and again with the O_NOFOLLOW walk.
 *
 * Refused: a symlink at the end, in the middle, relative, absolute, pointing
 * back inside, dangling; "..", a file on the way. Accepted: existing and
 * missing directories (created below the volume only). A race (a symlink
 * swapped in between a check and the bind) cannot be staged from here; the
 * design closes it: every component is opened below the descriptor of the
 * one before with symlinks refused, mkdirat never follows one, and the shim
 * binds the final descriptor itself, so there is no later lookup by name.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h> /* after the four headers it needs */

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/beneath.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

struct fixture {
    char *dir;     /* the test's directory */
    char *vol;     /* dir/vol: the volume */
    char *outside; /* dir/outside: must never be reached */
    int vol_fd;
};

static int setup(void **state)
{
    char tmpl[] = "/tmp/test_beneath.XXXXXX";
    if (mkdtemp(tmpl) == NULL)
        return -1;
    struct fixture *f = xcalloc(1, sizeof *f);
    f->dir = xstrdup(tmpl);
    f->vol = xasprintf("%s/vol", f->dir);
    f->outside = xasprintf("%s/outside", f->dir);
    if (mkdir(f->vol, 0755) != 0 || mkdir(f->outside, 0755) != 0)
        return -1;
    f->vol_fd = open(f->vol, O_PATH | O_DIRECTORY | O_CLOEXEC);
    *state = f;
    return f->vol_fd >= 0 ? 0 : -1;
}

/* Removes a tree without following symlinks (the tests plant some pointing at /). */
static void remove_tree(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return;
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        if (d != NULL) {
            struct dirent *e;
            while ((e = readdir(d)) != NULL) {
                if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                    continue;
                char *child = xasprintf("%s/%s", path, e->d_name);
                remove_tree(child);
                free(child);
            }
            closedir(d);
        }
        rmdir(path);
    } else {
        unlink(path);
    }
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    beneath_use_openat2(-1);
    close(f->vol_fd);
    remove_tree(f->dir);
    free(f->dir);
    free(f->vol);
    free(f->outside);
    free(f);
    return 0;
}

/* Creates the directories of a relative path below base. */
static void mkdirs_at(const char *base, const char *rel)
{
    char *path = xasprintf("%s/%s", base, rel);
    for (char *p = path + strlen(base) + 1; *p; p++) {
        if (*p == '/') {
            *p = '\0';
            mkdir(path, 0755);
            *p = '/';
        }
    }
    mkdir(path, 0755);
    free(path);
}

static void plant_link(const char *base, const char *rel, const char *target)
{
    char *path = xasprintf("%s/%s", base, rel);
    assert_int_equal(symlink(target, path), 0);
    free(path);
}

/* Opens subdir below the volume and checks it is the directory vol/want. */
static void expect_dir(const struct fixture *f, const char *subdir, bool create, const char *want)
{
    struct strbuf err = STRBUF_INIT;
    int fd = beneath_open_dir(f->vol_fd, subdir, create, &err);
    if (fd < 0)
        fail_msg("%s: %s", subdir, strbuf_str(&err));
    struct stat got, exp;
    assert_int_equal(fstat(fd, &got), 0);
    char *path = xasprintf("%s%s%s", f->vol, want[0] ? "/" : "", want);
    assert_int_equal(lstat(path, &exp), 0);
    assert_true(S_ISDIR(exp.st_mode));
    assert_int_equal(got.st_ino, exp.st_ino);
    assert_int_equal(got.st_dev, exp.st_dev);
    /* O_PATH and close-on-exec: nothing the shim passes on by accident. */
    int fl = fcntl(fd, F_GETFL);
    assert_true((fl & O_PATH) != 0);
    assert_true((fcntl(fd, F_GETFD) & FD_CLOEXEC) != 0);
    close(fd);
    free(path);
    strbuf_free(&err);
}

/* Expects subdir to be refused with exactly the message want. */
static void expect_refused(const struct fixture *f, const char *subdir, bool create,
                           const char *want)
{
    struct strbuf err = STRBUF_INIT;
    int fd = beneath_open_dir(f->vol_fd, subdir, create, &err);
    if (fd >= 0)
        fail_msg("%s was opened; want \"%s\"", subdir, want);
    assert_string_equal(strbuf_str(&err), want);
    strbuf_free(&err);
}

/* The errno a refusal leaves: what callers tell "not made yet" (ENOENT) by. */
static int refusal_errno(const struct fixture *f, const char *subdir)
{
    struct strbuf err = STRBUF_INIT;
    errno = 0;
    int fd = beneath_open_dir(f->vol_fd, subdir, false, &err);
    int e = errno;
    if (fd >= 0)
        fail_msg("%s was opened", subdir);
    strbuf_free(&err);
    return e;
}

static bool exists(const char *base, const char *rel)
{
    char *path = xasprintf("%s/%s", base, rel);
    struct stat st;
    bool yes = lstat(path, &st) == 0;
    free(path);
    return yes;
}

/* Each case with openat2, then with the O_NOFOLLOW walk. */
#define BOTH_WAYS(body)                                                                            \
    for (int way = 1; way >= 0; way--) {                                                           \
        beneath_use_openat2(way ? -1 : 0);                                                         \
        body                                                                                       \
    }

static void test_plain_dirs(void **state)
{
    struct fixture *f = *state;
    mkdirs_at(f->vol, "a/b");
    BOTH_WAYS({
        expect_dir(f, "/a/b", false, "a/b");
        expect_dir(f, "a/b", false, "a/b");
        expect_dir(f, "/./a//b/", false, "a/b");
        expect_dir(f, "", false, "");
        expect_dir(f, "/", false, "");
        expect_dir(f, NULL, false, "");
    })
}

static void test_missing_dirs_created(void **state)
{
    struct fixture *f = *state;
    expect_refused(f, "/m/n", false, "/m: No such file or directory");
    expect_refused(f, "/m", false, "No such file or directory");
    assert_int_equal(refusal_errno(f, "/m/n"), ENOENT);
    plant_link(f->vol, "link", "/");
    assert_int_not_equal(refusal_errno(f, "/link"), ENOENT); /* refused, not "not made yet" */
    assert_int_not_equal(refusal_errno(f, "/link"), 0);
    assert_false(exists(f->vol, "m"));
    expect_dir(f, "/m/n/o", true, "m/n/o");
    beneath_use_openat2(0);
    expect_dir(f, "/p/q", true, "p/q");
}

/* The attack: `ln -sfn / evil` in the volume, then a mount of subdir /evil. */
static void test_symlink_at_end(void **state)
{
    struct fixture *f = *state;
    plant_link(f->vol, "evil", "/");
    plant_link(f->vol, "out", f->outside);
    BOTH_WAYS({
        expect_refused(f, "/evil", true, "is a symlink");
        expect_refused(f, "/evil/", false, "is a symlink");
        expect_refused(f, "/out", true, "is a symlink");
    })
}

static void test_symlink_in_middle(void **state)
{
    struct fixture *f = *state;
    mkdirs_at(f->vol, "a");
    plant_link(f->vol, "a/evil", "/");
    plant_link(f->vol, "a/out", f->outside);
    BOTH_WAYS({
        expect_refused(f, "/a/evil/etc", true, "/a/evil is a symlink");
        /* Creating below it would have made outside/new: the old mkdir -p did. */
        expect_refused(f, "/a/out/new/deeper", true, "/a/out is a symlink");
        assert_false(exists(f->outside, "new"));
    })
}

/* No symlink at all, even one that stays inside: its target can change after the check. */
static void test_symlink_inside_refused(void **state)
{
    struct fixture *f = *state;
    mkdirs_at(f->vol, "real/sub");
    plant_link(f->vol, "rel", "real");
    char *abs = xasprintf("%s/real", f->vol);
    plant_link(f->vol, "abs", abs);
    plant_link(f->vol, "up", "../outside");
    BOTH_WAYS({
        expect_refused(f, "/rel", false, "is a symlink");
        expect_refused(f, "/rel/sub", false, "/rel is a symlink");
        expect_refused(f, "/abs/sub", true, "/abs is a symlink");
        expect_refused(f, "/up", true, "is a symlink");
    })
    free(abs);
}

/* A dangling link: mkdirat must not create its target, the open must refuse it. */
static void test_dangling_symlink(void **state)
{
    struct fixture *f = *state;
    plant_link(f->vol, "dang", "nowhere");
    char *target = xasprintf("%s/made", f->outside);
    plant_link(f->vol, "dang-out", target);
    BOTH_WAYS({
        expect_refused(f, "/dang", true, "is a symlink");
        expect_refused(f, "/dang-out/x", true, "/dang-out is a symlink");
        assert_false(exists(f->vol, "nowhere"));
        assert_false(exists(f->outside, "made"));
    })
    free(target);
}

static void test_dotdot_and_files(void **state)
{
    struct fixture *f = *state;
    mkdirs_at(f->vol, "a");
    char *file = xasprintf("%s/a/file", f->vol);
    FILE *fp = fopen(file, "w");
    assert_non_null(fp);
    fclose(fp);
    BOTH_WAYS({
        expect_refused(f, "/..", true, "'..' is not allowed");
        expect_refused(f, "/a/../../outside", true, "'..' is not allowed");
        expect_refused(f, "/a/file/x", true, "/a/file is not a directory");
        expect_refused(f, "/a/file", true, "is not a directory");
    })
    assert_false(exists(f->outside, "x"));
    free(file);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_plain_dirs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_dirs_created, setup, teardown),
        cmocka_unit_test_setup_teardown(test_symlink_at_end, setup, teardown),
        cmocka_unit_test_setup_teardown(test_symlink_in_middle, setup, teardown),
        cmocka_unit_test_setup_teardown(test_symlink_inside_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dangling_symlink, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dotdot_and_files, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
