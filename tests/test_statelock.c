/*
 * test_statelock: engine/statelock over real processes — a second engine
 * on a held state dir is refused and told who holds it; an engine killed
 * (SIGKILL) while a child it forked has not reached its exec yet (so the
 * child has a copy of the lock's descriptor) leaves the lock free for the
 * engine started right after; a detached engine takes the lock over from
 * the process it was forked from; a worker's shim shares the lock only
 * while no engine holds it, and an engine starting meanwhile waits for it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h> /* after the four headers it needs */

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "engine/statelock.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

static int make_dir(void **state)
{
    char tmpl[] = "/tmp/test_statelock.XXXXXX";
    char *dir = mkdtemp(tmpl);
    assert_non_null(dir);
    *state = xstrdup(dir);
    return 0;
}

static int remove_dir(void **state)
{
    char *dir = *state;
    char *lock = xasprintf("%s/trainjobd.lock", dir);
    unlink(lock);
    rmdir(dir);
    free(lock);
    free(dir);
    return 0;
}

/* Reads a pid the child wrote on fd (0 at EOF). */
static pid_t read_pid(int fd)
{
    pid_t pid = 0;
    return read(fd, &pid, sizeof pid) == (ssize_t)sizeof pid ? pid : 0;
}

/*
 * Forks an "engine" that takes the lock of dir and then, with forked, forks
 * a child that never execs (as one caught between its fork and its exec);
 * returns the engine's pid once it holds the lock, the child's in *child.
 */
static pid_t start_holder(const char *dir, bool forked, pid_t *child)
{
    int p[2];
    assert_int_equal(pipe(p), 0);
    pid_t eng = fork();
    assert_true(eng >= 0);
    if (eng == 0) {
        close(p[0]);
        struct strbuf err = STRBUF_INIT;
        if (statelock_acquire(dir, "/run/one.sock", &err) < 0)
            _exit(2);
        pid_t c = 0;
        if (forked) {
            c = fork();
            if (c == 0) {
                for (;;)
                    pause(); /* the descriptor stays open here, never exec'd */
            }
        }
        pid_t me = getpid();
        if (write(p[1], &me, sizeof me) != (ssize_t)sizeof me ||
            write(p[1], &c, sizeof c) != (ssize_t)sizeof c)
            _exit(3);
        for (;;)
            pause();
    }
    close(p[1]);
    pid_t got = read_pid(p[0]);
    *child = read_pid(p[0]);
    close(p[0]);
    assert_int_equal(got, eng);
    return eng;
}

static void a_live_holder_is_named(void **state)
{
    const char *dir = *state;
    pid_t child;
    pid_t eng = start_holder(dir, false, &child);
    struct strbuf err = STRBUF_INIT;
    assert_int_equal(statelock_acquire(dir, "/run/two.sock", &err), -1);
    char *want = xasprintf("state dir %s is in use by trainjobd pid %ld on socket /run/one.sock",
                           dir, (long)eng);
    assert_string_equal(strbuf_str(&err), want);
    free(want);
    strbuf_free(&err);
    kill(eng, SIGKILL);
    waitpid(eng, NULL, 0);
}

static void a_killed_holder_leaves_it_free_despite_its_child(void **state)
{
    const char *dir = *state;
    pid_t child;
    pid_t eng = start_holder(dir, true, &child);
    assert_true(child > 0);
    assert_int_equal(kill(eng, SIGKILL), 0);
    assert_int_equal(waitpid(eng, NULL, 0), eng);
    /* The child lives on with its copy of the descriptor; the engine is gone. */
    assert_int_equal(kill(child, 0), 0);
    struct strbuf err = STRBUF_INIT;
    int fd = statelock_acquire(dir, "/run/two.sock", &err);
    kill(child, SIGKILL);
    if (fd < 0)
        fail_msg("a restart after kill -9 was refused: %s", strbuf_str(&err));
    close(fd);
    strbuf_free(&err);
}

static void a_detached_engine_takes_it_over(void **state)
{
    const char *dir = *state;
    struct strbuf err = STRBUF_INIT;
    int fd = statelock_acquire(dir, "/run/one.sock", &err);
    assert_true(fd >= 0);
    pid_t parent = getpid();
    pid_t kid = fork();
    assert_true(kid >= 0);
    if (kid == 0) {
        struct strbuf why = STRBUF_INIT;
        _exit(statelock_take_over(fd, parent, dir, "/run/one.sock", &why) == 0 ? 0 : 1);
    }
    struct timespec ts = {0, 100 * 1000000L}; /* the child waits for us */
    nanosleep(&ts, NULL);
    close(fd);
    int status = 0;
    assert_int_equal(waitpid(kid, &status, 0), kid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    strbuf_free(&err);
}

static void a_take_over_does_not_wait_for_another_engine(void **state)
{
    const char *dir = *state;
    pid_t child;
    pid_t eng = start_holder(dir, false, &child);
    struct strbuf err = STRBUF_INIT;
    char *path = xasprintf("%s/trainjobd.lock", dir);
    FILE *f = fopen(path, "r+");
    assert_non_null(f);
    /* from is not the holder: refused, naming the holder (once: no retries' messages) */
    assert_int_equal(statelock_take_over(fileno(f), getpid(), dir, "/run/two.sock", &err), -1);
    char *want = xasprintf("state dir %s is in use by trainjobd pid %ld on socket /run/one.sock",
                           dir, (long)eng);
    assert_string_equal(strbuf_str(&err), want);
    free(want);
    fclose(f);
    free(path);
    strbuf_free(&err);
    kill(eng, SIGKILL);
    waitpid(eng, NULL, 0);
}

/*
 * Forks a "shim" that takes the lock of dir shared (statelock_share_idle),
 * says so, holds it for hold_ms (-1: until killed) and exits 0 — or 1 at
 * once when it could not take it. Returns its pid once it has answered;
 * *took says whether it took the lock.
 */
static pid_t start_shim(const char *dir, int hold_ms, bool *took)
{
    int p[2];
    assert_int_equal(pipe(p), 0);
    pid_t shim = fork();
    assert_true(shim >= 0);
    if (shim == 0) {
        close(p[0]);
        char *path = statelock_path(dir);
        int fd = statelock_share_idle(path);
        char ok = fd >= 0 ? 'y' : 'n';
        if (write(p[1], &ok, 1) != 1 || fd < 0)
            _exit(1);
        if (hold_ms < 0)
            for (;;)
                pause();
        struct timespec ts = {hold_ms / 1000, (long)(hold_ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
        _exit(0);
    }
    close(p[1]);
    char ok = 0;
    assert_int_equal(read(p[0], &ok, 1), 1);
    close(p[0]);
    *took = ok == 'y';
    return shim;
}

/* A shim shares the lock only while no engine holds it; two shims share it together. */
static void a_shim_shares_it_only_without_an_engine(void **state)
{
    const char *dir = *state;
    pid_t child;
    pid_t eng = start_holder(dir, false, &child);
    bool took = true;
    pid_t one = start_shim(dir, -1, &took);
    assert_false(took);
    waitpid(one, NULL, 0);
    kill(eng, SIGKILL);
    waitpid(eng, NULL, 0);
    one = start_shim(dir, -1, &took);
    assert_true(took);
    pid_t two = start_shim(dir, -1, &took);
    assert_true(took); /* the second shim is not taken for an engine */
    kill(one, SIGKILL);
    kill(two, SIGKILL);
    waitpid(one, NULL, 0);
    waitpid(two, NULL, 0);
}

/* The lock file an engine that ran on dir left (a shim opens it, never makes it). */
static void engine_ran(const char *dir)
{
    struct strbuf err = STRBUF_INIT;
    int fd = statelock_acquire(dir, "/run/one.sock", &err);
    assert_true(fd >= 0);
    close(fd);
    strbuf_free(&err);
}

/* An engine starting while a shim removes its cgroups waits for it, then starts. */
static void an_engine_waits_for_a_shim(void **state)
{
    const char *dir = *state;
    char *path = statelock_path(dir);
    errno = 0;
    assert_int_equal(statelock_share_idle(path), -1); /* no lock file: no engine ever ran */
    assert_int_equal(errno, ENOENT);
    free(path);
    engine_ran(dir);
    bool took = false;
    pid_t shim = start_shim(dir, 300, &took);
    assert_true(took);
    struct strbuf err = STRBUF_INIT;
    int fd = statelock_acquire(dir, "/run/one.sock", &err);
    int status = -1;
    assert_int_equal(waitpid(shim, &status, WNOHANG), shim); /* it let go first */
    if (fd < 0)
        fail_msg("refused while a shim held the lock shared: %s", strbuf_str(&err));
    /* and no shim shares it with an engine */
    pid_t late = start_shim(dir, -1, &took);
    assert_false(took);
    waitpid(late, NULL, 0);
    close(fd);
    strbuf_free(&err);
}

/* A shim that never lets go is named, not taken for an engine. */
static void a_shim_that_holds_on_is_named(void **state)
{
    const char *dir = *state;
    engine_ran(dir);
    bool took = false;
    pid_t shim = start_shim(dir, -1, &took);
    assert_true(took);
    struct strbuf err = STRBUF_INIT;
    assert_int_equal(statelock_acquire(dir, "/run/one.sock", &err), -1);
    char *want = xasprintf("state dir %s: a worker's shim has held %s/trainjobd.lock for over a "
                           "second",
                           dir, dir);
    assert_string_equal(strbuf_str(&err), want);
    free(want);
    kill(shim, SIGKILL);
    waitpid(shim, NULL, 0);
    strbuf_free(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(a_live_holder_is_named, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(a_killed_holder_leaves_it_free_despite_its_child, make_dir,
                                        remove_dir),
        cmocka_unit_test_setup_teardown(a_detached_engine_takes_it_over, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(a_take_over_does_not_wait_for_another_engine, make_dir,
                                        remove_dir),
        cmocka_unit_test_setup_teardown(a_shim_shares_it_only_without_an_engine, make_dir,
                                        remove_dir),
        cmocka_unit_test_setup_teardown(an_engine_waits_for_a_shim, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(a_shim_that_holds_on_is_named, make_dir, remove_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
