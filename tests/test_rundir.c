/*
 * test_rundir: where trainjobd's worker status files go (engine/rundir).
 * Each test gets a state directory under /tmp and a base on a tmpfs
 * (/dev/shm, skipped where that is no tmpfs) standing in for /run.
 *
 * Used: a fresh private directory on the tmpfs, linked from STATE/status,
 * and the same one again through the link (a restarted engine finds its
 * workers' files); made again when a reboot emptied the tmpfs. Refused, for
 * STATE/status as a directory: a base that is no tmpfs, a per-user
 * directory that is another user's, open to others, or a symlink. Kept: a
 * STATE/status directory holding a previous engine's files. Released: an
 * empty tmpfs directory, not one with a file in it. Swept at the next
 * engine's start: the directory of a state directory that is gone, or was
 * made again (another inode), files and all; another engine's is kept.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h> /* after the four headers it needs */

#include <fcntl.h>
#include <ftw.h>
#include <linux/magic.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/rundir.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

struct fixture {
    char *state; /* the state directory (/tmp: no tmpfs) */
    char *base;  /* a base on a tmpfs */
    char *top;   /* base/trainjobd-UID */
    char *link;  /* state/status */
    const char *bases[2];
};

static bool is_tmpfs(const char *path)
{
    struct statfs sf;
    return statfs(path, &sf) == 0 && (uint32_t)sf.f_type == (uint32_t)TMPFS_MAGIC;
}

static int setup(void **state)
{
    char st[] = "/tmp/test_rundir.XXXXXX";
    char base[] = "/dev/shm/test_rundir.XXXXXX";
    if (mkdtemp(st) == NULL)
        return -1;
    struct fixture *f = xcalloc(1, sizeof *f);
    f->state = xstrdup(st);
    f->link = xasprintf("%s/status", st);
    if (is_tmpfs("/dev/shm") && mkdtemp(base) != NULL) {
        f->base = xstrdup(base);
        f->top = xasprintf("%s/trainjobd-%u", base, (unsigned)geteuid());
    }
    f->bases[0] = f->base;
    *state = f;
    return 0;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    chmod(path, 0700);
    return remove(path) == 0 ? 0 : 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    nftw(f->state, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    if (f->base)
        nftw(f->base, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    free(f->state), free(f->base), free(f->top), free(f->link);
    free(f);
    return 0;
}

/* rundir_status_dir on the fixture's base; the note in *note (freed by the caller). */
static char *status_dir(struct fixture *f, struct strbuf *note)
{
    struct strbuf err = STRBUF_INIT;
    char *dir = rundir_status_dir(f->state, f->bases, note, &err);
    assert_non_null(dir);
    assert_int_equal(err.len, 0);
    strbuf_free(&err);
    return dir;
}

static void assert_private_dir(const char *path)
{
    struct stat st;
    assert_int_equal(lstat(path, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    assert_int_equal(st.st_mode & 0777, 0700);
    assert_int_equal(st.st_uid, geteuid());
}

/* The link's target, "" when it is no link. */
static char *link_target(const char *link)
{
    static char buf[4096];
    ssize_t n = readlink(link, buf, sizeof buf - 1);
    buf[n > 0 ? n : 0] = '\0';
    return buf;
}

#define NEED_TMPFS(f)                                                                              \
    do {                                                                                           \
        if ((f)->base == NULL)                                                                     \
            skip();                                                                                \
    } while (0)

static void test_fresh_on_tmpfs(void **state)
{
    struct fixture *f = *state;
    NEED_TMPFS(f);
    struct strbuf note = STRBUF_INIT;
    char *dir = status_dir(f, &note);
    assert_true(is_tmpfs(dir));
    assert_ptr_equal(strstr(dir, f->top), dir); /* base/trainjobd-UID/… */
    assert_private_dir(f->top);
    assert_private_dir(dir);
    assert_string_equal(link_target(f->link), dir);
    assert_non_null(strstr(strbuf_str(&note), "(tmpfs)"));
    /* What a shim writes through the engine's path is there for the next one. */
    char *file = xasprintf("%s/u.1.w", dir);
    FILE *fp = fopen(file, "w");
    assert_non_null(fp);
    fclose(fp);
    struct strbuf note2 = STRBUF_INIT;
    char *again = status_dir(f, &note2);
    assert_string_equal(again, dir);
    assert_int_equal(access(file, F_OK), 0);
    free(file), free(again), free(dir);
    strbuf_free(&note), strbuf_free(&note2);
}

static void test_made_again_after_reboot(void **state)
{
    struct fixture *f = *state;
    NEED_TMPFS(f);
    struct strbuf note = STRBUF_INIT;
    char *dir = status_dir(f, &note);
    nftw(f->top, rm_one, 16, FTW_DEPTH | FTW_PHYS); /* the tmpfs emptied */
    assert_int_equal(access(f->top, F_OK), -1);
    struct strbuf note2 = STRBUF_INIT;
    char *again = status_dir(f, &note2);
    assert_string_equal(again, dir);
    assert_private_dir(again);
    assert_string_equal(link_target(f->link), again);
    /* The link's old target gone is no failure to report: the note names it as used only. */
    if (strstr(strbuf_str(&note2), "not used") != NULL)
        fail_msg("the note reports the gone directory it made again: %s", strbuf_str(&note2));
    free(dir), free(again);
    strbuf_free(&note), strbuf_free(&note2);
}

/* Each case leaves STATE/status a plain private directory and says why in the note. */
static void assert_refused(struct fixture *f, const char *why)
{
    struct strbuf note = STRBUF_INIT;
    char *dir = status_dir(f, &note);
    assert_string_equal(dir, f->link);
    assert_private_dir(f->link);
    if (strstr(strbuf_str(&note), why) == NULL)
        fail_msg("note '%s' does not say '%s'", strbuf_str(&note), why);
    free(dir);
    strbuf_free(&note);
}

static void test_not_tmpfs(void **state)
{
    struct fixture *f = *state;
    char *plain = xasprintf("%s/base", f->state);
    assert_int_equal(mkdir(plain, 0700), 0);
    f->bases[0] = plain;
    assert_refused(f, "not a tmpfs");
    f->bases[0] = f->base;
    free(plain);
}

static void test_open_to_others(void **state)
{
    struct fixture *f = *state;
    NEED_TMPFS(f);
    assert_int_equal(mkdir(f->top, 0700), 0);
    assert_int_equal(chmod(f->top, 0777), 0);
    assert_refused(f, "open to group or others");
}

static void test_another_users(void **state)
{
    struct fixture *f = *state;
    NEED_TMPFS(f);
    if (geteuid() != 0)
        skip(); /* only root can give a directory away */
    assert_int_equal(mkdir(f->top, 0700), 0);
    assert_int_equal(chown(f->top, 65534, 65534), 0);
    assert_refused(f, "owned by another user");
}

static void test_symlink_refused(void **state)
{
    struct fixture *f = *state;
    NEED_TMPFS(f);
    char *elsewhere = xasprintf("%s/elsewhere", f->base);
    assert_int_equal(mkdir(elsewhere, 0700), 0);
    assert_int_equal(symlink(elsewhere, f->top), 0);
    assert_refused(f, "not a directory (a symlink?)");
    free(elsewhere);
}

static void test_unfit_link_target(void **state)
{
    struct fixture *f = *state;
    NEED_TMPFS(f);
    struct strbuf note = STRBUF_INIT;
    char *dir = status_dir(f, &note);
    assert_int_equal(chmod(dir, 0755), 0); /* not private any more: not used */
    f->bases[0] = NULL;                    /* and no base to make another in */
    struct strbuf note2 = STRBUF_INIT;
    char *again = status_dir(f, &note2);
    assert_string_equal(again, f->link);
    assert_private_dir(f->link);
    free(dir), free(again);
    strbuf_free(&note), strbuf_free(&note2);
}

static void test_previous_files_kept(void **state)
{
    struct fixture *f = *state;
    NEED_TMPFS(f);
    assert_int_equal(mkdir(f->link, 0700), 0);
    char *file = xasprintf("%s/u.1.w.pid", f->link);
    FILE *fp = fopen(file, "w");
    assert_non_null(fp);
    fclose(fp);
    struct strbuf note = STRBUF_INIT;
    char *dir = status_dir(f, &note);
    assert_string_equal(dir, f->link);
    assert_int_equal(access(file, F_OK), 0);
    assert_non_null(strstr(strbuf_str(&note), "previous engine"));
    free(dir), free(file);
    strbuf_free(&note);
    /* An empty one moves to the tmpfs. */
    char *file2 = xasprintf("%s/u.1.w.pid", f->link);
    assert_int_equal(unlink(file2), 0);
    free(file2);
    struct strbuf note2 = STRBUF_INIT;
    char *moved = status_dir(f, &note2);
    assert_true(is_tmpfs(moved));
    assert_string_equal(link_target(f->link), moved);
    free(moved);
    strbuf_free(&note2);
}

/* A second state directory beside the fixture's, as another engine's. */
static char *other_state(void)
{
    char tmpl[] = "/tmp/test_rundir.XXXXXX";
    assert_non_null(mkdtemp(tmpl));
    return xstrdup(tmpl);
}

/*
 * A runtime directory whose state directory looks gone is not swept while
 * its engine holds it (an engine in a chroot sharing /dev/shm sees no other
 * engine's state directory); once that engine has ended, it is.
 */
static void test_held_not_swept(void **state)
{
    struct fixture *f = *state;
    NEED_TMPFS(f);
    char *other = other_state();
    char *again = other_state(); /* made now: no inode of other's to take over later */
    int p[2];
    assert_int_equal(pipe(p), 0);
    pid_t eng = fork();
    assert_true(eng >= 0);
    if (eng == 0) {
        struct strbuf n = STRBUF_INIT, e = STRBUF_INIT;
        char *d = rundir_status_dir(other, f->bases, &n, &e);
        size_t len = d ? strlen(d) : 0;
        if (write(p[1], &len, sizeof len) != (ssize_t)sizeof len ||
            (len && write(p[1], d, len) != (ssize_t)len))
            _exit(1);
        for (;;)
            pause();
    }
    close(p[1]);
    size_t len = 0;
    assert_int_equal(read(p[0], &len, sizeof len), (ssize_t)sizeof len);
    assert_true(len > 0 && len < 4096);
    char *held_dir = xcalloc(1, len + 1);
    assert_int_equal(read(p[0], held_dir, len), (ssize_t)len);
    close(p[0]);
    nftw(other, rm_one, 16, FTW_DEPTH | FTW_PHYS); /* its state dir out of our sight */
    struct strbuf note = STRBUF_INIT;
    char *dir = status_dir(f, &note); /* a start sweeps */
    bool kept = access(held_dir, F_OK) == 0;
    kill(eng, SIGKILL);
    waitpid(eng, NULL, 0);
    assert_true(kept);
    char *err_dir;
    struct strbuf err = STRBUF_INIT;
    err_dir = rundir_status_dir(again, f->bases, &note, &err); /* the next start, its engine gone */
    assert_non_null(err_dir);
    assert_int_equal(access(held_dir, F_OK), -1);
    nftw(again, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    free(err_dir), free(again), free(dir), free(held_dir), free(other);
    strbuf_free(&note), strbuf_free(&err);
}

static void test_orphans_swept(void **state)
{
    struct fixture *f = *state;
    NEED_TMPFS(f);
    struct strbuf note = STRBUF_INIT, err = STRBUF_INIT;
    char *gone = other_state(), *live = other_state();
    char *gone_dir = rundir_status_dir(gone, f->bases, &note, &err);
    char *live_dir = rundir_status_dir(live, f->bases, &note, &err);
    assert_non_null(gone_dir);
    assert_non_null(live_dir);
    char *file = xasprintf("%s/u.1.w.pid", gone_dir); /* a worker's file stays with its dir */
    FILE *fp = fopen(file, "w");
    assert_non_null(fp);
    fclose(fp);
    nftw(gone, rm_one, 16, FTW_DEPTH | FTW_PHYS); /* its state directory removed */
    char *dir = status_dir(f, &note);             /* the next engine's start sweeps */
    assert_int_equal(access(gone_dir, F_OK), -1);
    assert_private_dir(live_dir); /* its state directory is there: kept */
    assert_private_dir(dir);
    /* A state directory made again at the same path is another one. */
    nftw(live, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    assert_int_equal(mkdir(live, 0700), 0);
    char *plain = xasprintf("%s/plain", f->state);
    assert_int_equal(mkdir(plain, 0700), 0);
    char *third = rundir_status_dir(plain, f->bases, &note, &err);
    assert_non_null(third);
    struct stat st;
    assert_int_equal(stat(live, &st), 0);
    char leaf[64];
    snprintf(leaf, sizeof leaf, "%jx-%jx", (uintmax_t)st.st_dev, (uintmax_t)st.st_ino);
    if (strstr(live_dir, leaf) == NULL) /* (the same inode again: still its own) */
        assert_int_equal(access(live_dir, F_OK), -1);
    nftw(live, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    free(gone), free(live), free(gone_dir), free(live_dir), free(file), free(dir), free(plain),
        free(third);
    strbuf_free(&note), strbuf_free(&err);
}

static void test_release(void **state)
{
    struct fixture *f = *state;
    NEED_TMPFS(f);
    struct strbuf note = STRBUF_INIT;
    char *dir = status_dir(f, &note);
    char *file = xasprintf("%s/u.1.w.claim", dir);
    FILE *fp = fopen(file, "w");
    assert_non_null(fp);
    fclose(fp);
    rundir_release(f->state, dir);
    assert_int_equal(access(file, F_OK), 0); /* a worker's file: kept */
    assert_int_equal(unlink(file), 0);
    rundir_release(f->state, dir);
    assert_int_equal(access(dir, F_OK), -1);
    /* A plain STATE/status is never removed. */
    f->bases[0] = NULL;
    char *plain = status_dir(f, &note);
    assert_string_equal(plain, f->link);
    rundir_release(f->state, plain);
    assert_private_dir(plain);
    free(dir), free(file), free(plain);
    strbuf_free(&note);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_fresh_on_tmpfs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_made_again_after_reboot, setup, teardown),
        cmocka_unit_test_setup_teardown(test_not_tmpfs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_open_to_others, setup, teardown),
        cmocka_unit_test_setup_teardown(test_another_users, setup, teardown),
        cmocka_unit_test_setup_teardown(test_symlink_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unfit_link_target, setup, teardown),
        cmocka_unit_test_setup_teardown(test_previous_files_kept, setup, teardown),
        cmocka_unit_test_setup_teardown(test_held_not_swept, setup, teardown),
        cmocka_unit_test_setup_teardown(test_orphans_swept, setup, teardown),
        cmocka_unit_test_setup_teardown(test_release, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
