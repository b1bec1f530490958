/*
 * test_runner: real workers through the real shim ($TRAINJOB_SHIM, an
 * absolute path; every test that needs it is skipped without it). Exit codes
 * and both output streams in the log; SIGKILL and SIGTERM (sent to the group,
 * and forwarded by the shim, as are SIGHUP and SIGINT) as 128 + signal; the
 * environment the worker sees; the log cap and its rotation; a shim
 * outliving the process that started it; leftovers of a finished worker; pid
 * reuse in runner_alive; start failures; damaged status files; and, where
 * bubblewrap works, binds (read-write and read-only) and the working
 * directory inside the sandbox; the claim that lets an attempt start at most
 * once; 50 launches in flight at once; a pidfd that sees a killed shim.
 *
 * Waiting for a worker polls its status file every 10 ms for at most 5 s.
 * The test process is a child subreaper and reaps the shims after each test.
 */
// clang-format off
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
// clang-format on

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "engine/runner.h"
#include "util/fileio.h"
#include "util/procstat.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#define WAIT_STEP_MS 10
#define WAIT_MAX_MS 5000

/* One test's scratch directory and the paths in it. */
struct fixture {
    char dir[64];
    char *status;
    char *log;
};

static char *const plain_env[] = {"PATH=/usr/bin:/bin", "LANG=C", NULL};

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

static int setup(void **state)
{
    struct fixture *f = xcalloc(1, sizeof(*f));
    snprintf(f->dir, sizeof(f->dir), "/tmp/test_runner.XXXXXX");
    if (!mkdtemp(f->dir))
        return -1;
    f->status = xasprintf("%s/status", f->dir);
    f->log = xasprintf("%s/log", f->dir);
    *state = f;
    return 0;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    return remove(path);
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    runner_reap(); /* the shims that ended, reparented to us (see main) */
    /* Make any read-only test directory removable again. */
    nftw(f->dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    free(f->status);
    free(f->log);
    free(f);
    return 0;
}

/* The shim from $TRAINJOB_SHIM; skips the test when there is none. */
static const char *shim_or_skip(void)
{
    const char *shim = getenv("TRAINJOB_SHIM");
    if (!shim || shim[0] != '/' || access(shim, X_OK) != 0) {
        print_message("TRAINJOB_SHIM is not set to an executable absolute path: skipped\n");
        skip();
    }
    return shim;
}

/* A spec running script with the plain environment and a 1 MiB log cap; no shim yet. */
static struct runner_spec spec_base(const struct fixture *f, const char *script)
{
    struct runner_spec s;
    memset(&s, 0, sizeof(s));
    s.status_path = f->status;
    s.log_path = f->log;
    s.log_cap = 1 << 20;
    s.script = script;
    s.envp = plain_env;
    return s;
}

/*
 * spec_base run by the real shim. A test that allocates before its spec
 * calls shim_or_skip() first: a skip leaves the test where it stands.
 */
static struct runner_spec spec_for(const struct fixture *f, const char *script)
{
    struct runner_spec s = spec_base(f, script);
    s.shim_path = shim_or_skip();
    return s;
}

/* Makes the fixture's status path ready for another start (a new attempt). */
static void next_attempt(const struct fixture *f)
{
    char *claim = xasprintf("%s.claim", f->status);
    unlink(f->status);
    unlink(claim);
    free(claim);
}

/* Starts spec and fails the test when it does not start. */
static void start(const struct runner_spec *spec, struct runner_proc *proc)
{
    struct strbuf err = STRBUF_INIT;
    int rc = runner_start(spec, proc, &err);
    if (rc != 0)
        print_message("runner_start: %s\n", strbuf_str(&err));
    assert_int_equal(rc, 0);
    assert_true(proc->shim_pid > 0);
    assert_true(proc->worker_pgid > 0);
    strbuf_free(&err);
}

/* The worker's exit code, waiting for the status file (fails after WAIT_MAX_MS). */
static int wait_exit_code(const char *status_path)
{
    int code = -1;
    for (int waited = 0; waited <= WAIT_MAX_MS; waited += WAIT_STEP_MS) {
        int rc = runner_read_status(status_path, &code);
        assert_int_not_equal(rc, -1);
        if (rc == 1)
            return code;
        sleep_ms(WAIT_STEP_MS);
    }
    fail_msg("no status in %s after %d ms", status_path, WAIT_MAX_MS);
    return -1;
}

/* Waits until the shim is gone (bounded); returns whether it went. */
static bool wait_gone(const struct runner_proc *proc)
{
    for (int waited = 0; waited <= WAIT_MAX_MS; waited += WAIT_STEP_MS) {
        if (!runner_alive(proc))
            return true;
        sleep_ms(WAIT_STEP_MS);
    }
    return false;
}

/* The whole file (NULL when it does not exist); *len its size. */
static char *slurp(const char *path, size_t *len)
{
    char *data = NULL;
    size_t n = 0;
    struct strbuf err = STRBUF_INIT;
    if (file_read_all(path, 16u << 20, &data, &n, &err) != 0)
        data = NULL;
    strbuf_free(&err);
    if (len)
        *len = n;
    return data;
}

static void test_exit_code_and_log(void **state)
{
    struct fixture *f = *state;
    struct runner_spec spec = spec_for(f, "echo hello; echo err >&2; exit 3");
    struct runner_proc proc;
    start(&spec, &proc);
    assert_int_equal(wait_exit_code(f->status), 3);
    char *log = slurp(f->log, NULL);
    assert_non_null(log);
    assert_string_equal(log, "hello\nerr\n");
    free(log);

    /* The pid file names the shim and the worker's group; refresh reads it back. */
    char *pid_path = xasprintf("%s.pid", f->status);
    char *pids = slurp(pid_path, NULL);
    char want[96];
    assert_true(proc.worker_start_ticks > 0);
    snprintf(want, sizeof(want), "%ld %ld %llu\n", (long)proc.shim_pid, (long)proc.worker_pgid,
             (unsigned long long)proc.worker_start_ticks);
    assert_string_equal(pids, want);
    struct runner_proc again = proc;
    again.worker_pgid = 0;
    runner_refresh(&again, f->status);
    assert_int_equal(again.worker_pgid, proc.worker_pgid);
    again.worker_pgid = 0;
    again.shim_pid = proc.shim_pid + 1; /* another shim's file: left alone */
    runner_refresh(&again, f->status);
    assert_int_equal(again.worker_pgid, 0);
    runner_refresh(&again, NULL);
    assert_int_equal(again.worker_pgid, 0);
    free(pids);
    free(pid_path);

    assert_true(wait_gone(&proc));
    /* Nothing besides the status, pid and log files (and the log's time index): no temporary
     * file is left over. */
    DIR *d = opendir(f->dir);
    assert_non_null(d);
    int entries = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        entries++;
        assert_true(strcmp(e->d_name, "status") == 0 || strcmp(e->d_name, "status.pid") == 0 ||
                    strcmp(e->d_name, "status.claim") == 0 || strcmp(e->d_name, "log") == 0 ||
                    strcmp(e->d_name, "log.idx") == 0);
    }
    closedir(d);
    assert_int_equal(entries, 5);
}

static void test_exit_zero(void **state)
{
    struct fixture *f = *state;
    struct runner_spec spec = spec_for(f, "true");
    struct runner_proc proc;
    start(&spec, &proc);
    assert_int_equal(wait_exit_code(f->status), 0);
    size_t len = 1;
    char *log = slurp(f->log, &len);
    assert_non_null(log);
    assert_int_equal(len, 0);
    free(log);
}

static void test_sigkill(void **state)
{
    struct fixture *f = *state;
    struct runner_spec spec = spec_for(f, "sleep 30");
    struct runner_proc proc;
    start(&spec, &proc);
    assert_int_equal(runner_signal(&proc, SIGKILL), 0);
    assert_int_equal(wait_exit_code(f->status), 128 + SIGKILL);
    assert_true(wait_gone(&proc));
}

static void test_sigterm_to_group(void **state)
{
    struct fixture *f = *state;
    struct runner_spec spec = spec_for(f, "trap - TERM; sleep 30");
    struct runner_proc proc;
    start(&spec, &proc);
    assert_int_equal(runner_signal(&proc, SIGTERM), 0);
    assert_int_equal(wait_exit_code(f->status), 128 + SIGTERM);
}

/* With the group unknown, the signal goes to the shim, which forwards it. */
static void test_sigterm_forwarded(void **state)
{
    struct fixture *f = *state;
    struct runner_spec spec = spec_for(f, "trap - TERM; echo started; sleep 30");
    struct runner_proc proc;
    start(&spec, &proc);
    struct runner_proc shim_only = proc;
    shim_only.worker_pgid = 0;
    assert_int_equal(runner_signal(&shim_only, SIGTERM), 0);
    assert_int_equal(wait_exit_code(f->status), 128 + SIGTERM);
    assert_true(wait_gone(&proc));

    /* SIGHUP is forwarded too (the shim itself survives it). */
    next_attempt(f);
    struct runner_spec hup = spec_for(f, "sleep 30");
    start(&hup, &proc);
    shim_only = proc;
    shim_only.worker_pgid = 0;
    assert_int_equal(runner_signal(&shim_only, SIGHUP), 0);
    assert_int_equal(wait_exit_code(f->status), 128 + SIGHUP);
}

/*
 * SIGINT is forwarded too. sh itself catches SIGINT at moments and may lose
 * one that arrives early, so the worker traps it and says when it is ready.
 */
static void test_sigint_forwarded(void **state)
{
    struct fixture *f = *state;
    struct runner_spec spec =
        spec_for(f, "trap 'echo got INT; exit 42' INT; echo ready; while :; do sleep 0.05; done");
    struct runner_proc proc;
    start(&spec, &proc);
    bool ready = false;
    for (int waited = 0; !ready && waited <= WAIT_MAX_MS; waited += WAIT_STEP_MS) {
        char *log = slurp(f->log, NULL);
        ready = log && strstr(log, "ready\n");
        free(log);
        if (!ready)
            sleep_ms(WAIT_STEP_MS);
    }
    assert_true(ready);
    struct runner_proc shim_only = proc;
    shim_only.worker_pgid = 0;
    assert_int_equal(runner_signal(&shim_only, SIGINT), 0);
    assert_int_equal(wait_exit_code(f->status), 42);
    char *log = slurp(f->log, NULL);
    assert_string_equal(log, "ready\ngot INT\n");
    free(log);
}

/* The worker's environment is exactly envp: nothing of the test's leaks in. */
static void test_environment(void **state)
{
    struct fixture *f = *state;
    char *const envp[] = {"RANK=5", "PATH=/usr/bin:/bin", "WITH_SPACE=a b", NULL};
    struct runner_spec spec =
        spec_for(f, "echo \"rank=$RANK\"; echo \"home=${HOME-unset}\"; echo \"$WITH_SPACE\"");
    spec.envp = envp;
    struct runner_proc proc;
    start(&spec, &proc);
    assert_int_equal(wait_exit_code(f->status), 0);
    char *log = slurp(f->log, NULL);
    assert_string_equal(log, "rank=5\nhome=unset\na b\n");
    free(log);
}

static void test_cwd(void **state)
{
    struct fixture *f = *state;
    shim_or_skip();
    char *work = xasprintf("%s/work", f->dir);
    assert_int_equal(mkdir(work, 0755), 0);
    struct runner_spec spec = spec_for(f, "pwd; echo x > here");
    spec.cwd = work;
    struct runner_proc proc;
    start(&spec, &proc);
    assert_int_equal(wait_exit_code(f->status), 0);
    char *log = slurp(f->log, NULL);
    char *want = xasprintf("%s\n", work);
    assert_string_equal(log, want);
    char *here = xasprintf("%s/here", work);
    assert_int_equal(access(here, F_OK), 0);
    free(here);
    free(want);
    free(log);

    /*
     * A working directory that does not exist: the worker's program never
     * runs, so the start fails (could not start, no exit code), naming it.
     */
    next_attempt(f);
    char *missing = xasprintf("%s/missing", f->dir);
    spec.cwd = missing;
    struct strbuf err = STRBUF_INIT;
    assert_int_equal(runner_start(&spec, &proc, &err), -1);
    assert_non_null(strstr(strbuf_str(&err), missing));
    assert_int_not_equal(access(f->status, F_OK), 0);
    strbuf_free(&err);
    free(missing);
    free(work);
}

/* 200 KB of output with a 64 KiB cap: log and log.1, each at most the cap, hold the tail. */
static void test_log_cap(void **state)
{
    struct fixture *f = *state;
    const size_t cap = 64 * 1024;
    /* 4000 lines of 51 bytes: "%050d\n" */
    struct runner_spec spec =
        spec_for(f, "i=0; while [ $i -lt 4000 ]; do printf '%050d\\n' $i; i=$((i + 1)); done");
    spec.log_cap = cap;
    struct runner_proc proc;
    start(&spec, &proc);
    assert_int_equal(wait_exit_code(f->status), 0);

    struct strbuf want = STRBUF_INIT;
    for (int i = 0; i < 4000; i++)
        strbuf_addf(&want, "%050d\n", i);
    assert_int_equal(want.len, 4000 * 51);

    char *rotated_path = xasprintf("%s.1", f->log);
    size_t len0 = 0, len1 = 0;
    char *log0 = slurp(f->log, &len0);
    char *log1 = slurp(rotated_path, &len1);
    assert_non_null(log0);
    assert_non_null(log1);
    assert_true(len0 <= cap);
    assert_true(len1 <= cap);
    assert_true(len0 + len1 >= cap);
    assert_true(len0 > 0);
    /* log.1 then log is exactly the end of the output. */
    struct strbuf got = STRBUF_INIT;
    strbuf_add(&got, log1, len1);
    strbuf_add(&got, log0, len0);
    assert_memory_equal(got.buf, want.buf + want.len - got.len, got.len);
    /* Nothing else was left in the directory (no log.2, no temp files). */
    char *two = xasprintf("%s.2", f->log);
    assert_int_not_equal(access(two, F_OK), 0);
    free(two);
    strbuf_free(&got);
    strbuf_free(&want);
    free(log0);
    free(log1);
    free(rotated_path);
}

/*
 * The shim outlives the process that started it: a child starts the worker
 * and exits at once; the test, its parent, still gets the exit code.
 */
static void test_outlives_parent(void **state)
{
    struct fixture *f = *state;
    struct runner_spec spec = spec_for(f, "sleep 0.3; exit 7");
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        struct runner_proc p;
        struct strbuf err = STRBUF_INIT;
        int rc = runner_start(&spec, &p, &err);
        if (rc == 0 && write(fds[1], &p, sizeof(p)) != (ssize_t)sizeof(p))
            rc = -1;
        _exit(rc == 0 ? 0 : 1);
    }
    close(fds[1]);
    int wstatus = 0;
    assert_int_equal(waitpid(child, &wstatus, 0), child);
    assert_true(WIFEXITED(wstatus));
    assert_int_equal(WEXITSTATUS(wstatus), 0);
    struct runner_proc proc;
    assert_int_equal(read(fds[0], &proc, sizeof(proc)), (ssize_t)sizeof(proc));
    close(fds[0]);

    /* The starter is gone; the worker still runs and its shim is alive. */
    int code;
    assert_int_equal(runner_read_status(f->status, &code), 0);
    assert_true(runner_alive(&proc));
    assert_int_equal(wait_exit_code(f->status), 7);
    assert_true(wait_gone(&proc));
}

/* What a worker leaves behind in its process group dies with it. */
static void test_leftovers_killed(void **state)
{
    struct fixture *f = *state;
    shim_or_skip();
    char *script = xasprintf("sleep 30 & echo $! > %s/bg; exit 0", f->dir);
    struct runner_spec spec = spec_for(f, script);
    struct runner_proc proc;
    start(&spec, &proc);
    assert_int_equal(wait_exit_code(f->status), 0);
    char *bg_path = xasprintf("%s/bg", f->dir);
    char *bg = slurp(bg_path, NULL);
    assert_non_null(bg);
    long pid = strtol(bg, NULL, 10);
    assert_true(pid > 0);
    /* Gone, or a zombie nobody reaped yet: either way not running. */
    char stat_path[64], buf[512];
    snprintf(stat_path, sizeof(stat_path), "/proc/%ld/stat", pid);
    int fd = open(stat_path, O_RDONLY);
    if (fd >= 0) {
        ssize_t n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (n > 0) {
            buf[n] = '\0';
            char *p = strrchr(buf, ')');
            assert_non_null(p);
            assert_true(p[2] == 'Z' || p[2] == 'X');
        }
    }
    free(bg);
    free(bg_path);
    free(script);
}

static void test_alive(void **state)
{
    struct fixture *f = *state;
    struct runner_spec spec = spec_for(f, "sleep 30");
    struct runner_proc proc;
    start(&spec, &proc);
    assert_true(runner_alive(&proc));
    assert_true(proc.shim_start_ticks > 0);

    /* The same pid with another start time is another process. */
    struct runner_proc reused = proc;
    reused.shim_start_ticks = proc.shim_start_ticks + 1;
    assert_false(runner_alive(&reused));
    reused.shim_start_ticks = 0;
    assert_false(runner_alive(&reused));

    assert_int_equal(runner_signal(&proc, SIGKILL), 0);
    assert_int_equal(wait_exit_code(f->status), 137);
    assert_true(wait_gone(&proc));

    /* A pid that is certainly dead: a child of ours, reaped. */
    pid_t child = fork();
    if (child == 0)
        _exit(0);
    assert_int_equal(waitpid(child, NULL, 0), child);
    struct runner_proc dead = {
        .shim_pid = child, .worker_pgid = child, .shim_start_ticks = proc.shim_start_ticks};
    assert_false(runner_alive(&dead));
    struct runner_proc none = {0};
    assert_false(runner_alive(&none));
    assert_int_equal(runner_signal(&none, SIGTERM), -1);
}

/* Starts that fail leave nothing behind and say why. */
static void test_start_errors(void **state)
{
    struct fixture *f = *state;
    struct runner_spec spec = spec_for(f, "exit 0");
    struct runner_proc proc;
    struct strbuf err = STRBUF_INIT;

    char *no_shim = xasprintf("%s/no-such-shim", f->dir);
    spec.shim_path = no_shim;
    assert_int_equal(runner_start(&spec, &proc, &err), -1);
    assert_non_null(strstr(strbuf_str(&err), no_shim));
    assert_int_equal(proc.shim_pid, 0);
    strbuf_reset(&err);
    free(no_shim);

    /* The log cannot be opened: the shim refuses before starting the worker. */
    spec = spec_for(f, "exit 0");
    char *bad_log = xasprintf("%s/no-such-dir/log", f->dir);
    spec.log_path = bad_log;
    assert_int_equal(runner_start(&spec, &proc, &err), -1);
    assert_non_null(strstr(strbuf_str(&err), "cannot open the log"));
    assert_int_not_equal(access(f->status, F_OK), 0);
    char *pid_path = xasprintf("%s.pid", f->status);
    assert_int_not_equal(access(pid_path, F_OK), 0);
    free(pid_path);
    strbuf_reset(&err);
    free(bad_log);

    /* The status directory is not there: the pid file cannot be written either. */
    spec = spec_for(f, "exit 0");
    char *bad_status = xasprintf("%s/no-such-dir/status", f->dir);
    spec.status_path = bad_status;
    assert_int_equal(runner_start(&spec, &proc, &err), -1);
    assert_true(err.len > 0);
    strbuf_reset(&err);
    free(bad_status);

    /* A bind the shim's command line cannot carry, and a missing script. */
    spec = spec_for(f, "exit 0");
    struct runner_bind colon = {.host_path = "/tmp/a:b", .mount_path = "/mnt/x"};
    spec.binds = &colon;
    spec.bind_count = 1;
    assert_int_equal(runner_start(&spec, &proc, &err), -1);
    assert_non_null(strstr(strbuf_str(&err), "':'"));
    strbuf_reset(&err);
    spec = spec_for(f, NULL);
    assert_int_equal(runner_start(&spec, &proc, &err), -1);
    strbuf_free(&err);
}

/* Waits until the log holds text (bounded); returns whether it came. */
static bool wait_log(const struct fixture *f, const char *text)
{
    for (int waited = 0; waited <= WAIT_MAX_MS; waited += WAIT_STEP_MS) {
        char *log = slurp(f->log, NULL);
        bool found = log && strstr(log, text);
        free(log);
        if (found)
            return true;
        sleep_ms(WAIT_STEP_MS);
    }
    return false;
}

/* Does any process's command line on the host hold text? */
static bool any_cmdline_has(const char *text)
{
    DIR *d = opendir("/proc");
    assert_non_null(d);
    bool found = false;
    struct dirent *e;
    while (!found && (e = readdir(d)) != NULL) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        char path[300];
        snprintf(path, sizeof(path), "/proc/%s/cmdline", e->d_name);
        int fd = open(path, O_RDONLY);
        if (fd < 0)
            continue;
        char buf[8192];
        ssize_t n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        for (ssize_t i = 0; i < n; i++)
            if (buf[i] == '\0')
                buf[i] = ' ';
        if (n > 0) {
            buf[n] = '\0';
            found = strstr(buf, text) != NULL;
        }
    }
    closedir(d);
    return found;
}

/* The names created in the directory inotify fd watches, one after another ("" when none). */
static char *created_names(int fd)
{
    struct strbuf names = STRBUF_INIT;
    char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0) {
        for (char *p = buf; p < buf + n;) {
            const struct inotify_event *ev = (const struct inotify_event *)p;
            if (ev->len > 0)
                strbuf_addf(&names, "%s ", ev->name);
            p += sizeof *ev + ev->len;
        }
    }
    return strbuf_detach(&names, NULL);
}

/*
 * Issue 10, item 2: the startup script is in no command line on the host
 * (`ps` showed it to every user). Issue 24: nor is a file created for it
 * beside the status file, even for a moment (a file per start in a
 * directory of thousands of deleted entries cost the kernel a scan each):
 * the shim gets it as a descriptor.
 */
static void script_not_in_argv(struct fixture *f, bool sandbox)
{
    shim_or_skip();
    const char *marker = "marker-7f3a9c-not-in-ps";
    char *script = xasprintf("m=%s; echo ready; while :; do sleep 0.05; done", marker);
    struct runner_spec spec = spec_for(f, script);
    spec.sandbox = sandbox;
    int watch = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    assert_true(watch >= 0);
    assert_true(inotify_add_watch(watch, f->dir, IN_CREATE) >= 0);
    struct runner_proc proc;
    start(&spec, &proc);
    assert_true(wait_log(f, "ready\n"));
    assert_false(any_cmdline_has(marker));
    char *script_path = xasprintf("%s.script", f->status);
    bool script_there = access(script_path, F_OK) == 0;
    char *created = created_names(watch);
    /* The worker loops: it goes before any check can fail and leave it running. */
    assert_int_equal(runner_signal(&proc, SIGKILL), 0);
    assert_int_equal(wait_exit_code(f->status), 137);
    assert_false(script_there);
    assert_null(strstr(created, ".script "));
    assert_non_null(strstr(created, "status.claim ")); /* the watch sees the shim's files */
    assert_int_not_equal(access(script_path, F_OK), 0);
    close(watch);
    free(created);
    free(script_path);
    free(script);
}

static void test_script_not_in_argv(void **state)
{
    script_not_in_argv(*state, false);
}

/* A trapping worker gets SIGTERM and all the time it needs (issue 10, item 17). */
static void grace_honoured(struct fixture *f, bool sandbox)
{
    struct runner_spec spec =
        spec_for(f, "trap 'echo got-term; sleep 1; echo cleaned-up; exit 0' TERM; echo ready; "
                    "while :; do sleep 0.2; done");
    spec.sandbox = sandbox;
    struct runner_proc proc;
    start(&spec, &proc);
    assert_true(wait_log(f, "ready\n"));
    assert_int_equal(runner_signal(&proc, SIGTERM), 0);
    assert_int_equal(wait_exit_code(f->status), 0);
    char *log = slurp(f->log, NULL);
    assert_non_null(strstr(log, "got-term\ncleaned-up\n"));
    free(log);
    assert_true(wait_gone(&proc));
}

static void test_grace_honoured(void **state)
{
    grace_honoured(*state, false);
}

/* A volume whose subdir a job turned into a symlink out of it is refused (item 1). */
static void volume_symlink_refused(struct fixture *f, bool sandbox)
{
    shim_or_skip();
    char *vol = xasprintf("%s/vol", f->dir);
    char *evil = xasprintf("%s/vol/evil", f->dir);
    assert_int_equal(mkdir(vol, 0755), 0);
    assert_int_equal(symlink("/", evil), 0);
    struct runner_bind bind = {
        .host_path = vol, .mount_path = "/mnt/x", .volume = "scratch", .subdir = "/evil"};
    struct runner_spec spec = spec_for(f, "ls /mnt/x/etc; exit 0");
    spec.sandbox = sandbox;
    spec.binds = &bind;
    spec.bind_count = 1;
    struct runner_proc proc;
    struct strbuf err = STRBUF_INIT;
    assert_int_equal(runner_start(&spec, &proc, &err), -1);
    assert_string_equal(strbuf_str(&err),
                        "trainjob-shim: volume scratch: subdir /evil: is a symlink; refused");
    assert_int_not_equal(access(f->status, F_OK), 0);
    char *script_path = xasprintf("%s.script", f->status);
    assert_int_not_equal(access(script_path, F_OK), 0);
    free(script_path);

    /* Through a symlinked parent nothing is created outside either (mkdir -p did). */
    char *outside = xasprintf("%s/outside", f->dir);
    char *made = xasprintf("%s/outside/made", f->dir);
    assert_int_equal(mkdir(outside, 0755), 0);
    unlink(evil);
    assert_int_equal(symlink(outside, evil), 0);
    bind.subdir = "/evil/made";
    strbuf_reset(&err);
    next_attempt(f);
    assert_int_equal(runner_start(&spec, &proc, &err), -1);
    assert_string_equal(
        strbuf_str(&err),
        "trainjob-shim: volume scratch: subdir /evil/made: /evil is a symlink; refused");
    assert_int_not_equal(access(made, F_OK), 0);

    /* A plain subdir is created below the volume and is what the worker writes to. */
    bind.subdir = "/a/b";
    spec.script = sandbox ? "echo hi > /mnt/x/f" : "true";
    next_attempt(f);
    start(&spec, &proc);
    assert_int_equal(wait_exit_code(f->status), 0);
    char *ab = xasprintf("%s/vol/a/b%s", f->dir, sandbox ? "/f" : "");
    assert_int_equal(access(ab, F_OK), 0);
    free(ab);
    free(made);
    free(outside);
    strbuf_free(&err);
    free(evil);
    free(vol);
}

static void test_volume_symlink_refused(void **state)
{
    volume_symlink_refused(*state, false);
}

/* Writes text to path (replacing it). */
static void put(const char *path, const char *text)
{
    struct strbuf err = STRBUF_INIT;
    assert_int_equal(file_write_atomic(path, text, strlen(text), 0644, &err), 0);
    strbuf_free(&err);
}

static void test_read_status(void **state)
{
    struct fixture *f = *state;
    int code = -5;
    assert_int_equal(runner_read_status(f->status, &code), 0);
    assert_int_equal(code, -5);
    static const struct {
        const char *text;
        int rc, code;
    } cases[] = {
        {"exit_code 0\n", 1, 0},   {"exit_code 143\n", 1, 143},
        {"exit_code 255", 1, 255}, {"", -1, 0},
        {"exit_code\n", -1, 0},    {"exit_code \n", -1, 0},
        {"exit_code -1\n", -1, 0}, {"exit_code 256\n", -1, 0},
        {"exit_code 3x\n", -1, 0}, {"exit_code 3\nmore\n", -1, 0},
        {"garbage\n", -1, 0},      {"exit_code  3\n", -1, 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        put(f->status, cases[i].text);
        code = -5;
        assert_int_equal(runner_read_status(f->status, &code), cases[i].rc);
        if (cases[i].rc == 1)
            assert_int_equal(code, cases[i].code);
    }
}

/* The sandbox, or a skip when bubblewrap does not work here. */
static void sandbox_or_skip(void)
{
    if (!runner_sandbox_available()) {
        print_message("bubblewrap is not available: skipped\n");
        skip();
    }
}

static void test_sandbox_binds(void **state)
{
    struct fixture *f = *state;
    shim_or_skip();
    sandbox_or_skip();
    char *data = xasprintf("%s/data", f->dir);
    char *ro = xasprintf("%s/ro", f->dir);
    assert_int_equal(mkdir(data, 0755), 0);
    assert_int_equal(mkdir(ro, 0755), 0);
    char *marker = xasprintf("%s/marker", data);
    put(marker, "m\n");

    struct runner_bind binds[] = {{.host_path = data, .mount_path = "/mnt/afs"},
                                  {.host_path = ro, .mount_path = "/mnt/ro", .read_only = true}};
    /* The marker is seen, the read-only bind refuses, the rest of the host is not there. */
    char *script = xasprintf("ls /mnt/afs/marker && echo out > /mnt/afs/written && "
                             "if echo x > /mnt/ro/new; then exit 9; fi; "
                             "if [ -e %s ]; then exit 8; fi; echo done",
                             f->dir);
    struct runner_spec spec = spec_for(f, script);
    spec.sandbox = true;
    spec.binds = binds;
    spec.bind_count = 2;
    struct runner_proc proc;
    start(&spec, &proc);
    assert_int_equal(wait_exit_code(f->status), 0);
    char *log = slurp(f->log, NULL);
    assert_non_null(strstr(log, "/mnt/afs/marker\n"));
    assert_non_null(strstr(log, "Read-only file system"));
    assert_non_null(strstr(log, "done\n"));
    free(log);

    /* The read-write bind wrote through to the host; the read-only one did not. */
    char *written = xasprintf("%s/written", data);
    char *text = slurp(written, NULL);
    assert_string_equal(text, "out\n");
    char *new_file = xasprintf("%s/new", ro);
    assert_int_not_equal(access(new_file, F_OK), 0);
    free(new_file);
    free(text);
    free(written);
    free(marker);
    free(ro);
    free(data);
    free(script);
}

/* Inside the sandbox the working directory is there: at its own path, or through a bind. */
static void test_sandbox_cwd(void **state)
{
    struct fixture *f = *state;
    shim_or_skip();
    sandbox_or_skip();
    char *work = xasprintf("%s/work", f->dir);
    char *sub = xasprintf("%s/work/sub", f->dir);
    assert_int_equal(mkdir(work, 0755), 0);
    assert_int_equal(mkdir(sub, 0755), 0);

    struct runner_spec spec = spec_for(f, "pwd; echo x > file");
    spec.sandbox = true;
    spec.cwd = work;
    struct runner_proc proc;
    start(&spec, &proc);
    assert_int_equal(wait_exit_code(f->status), 0);
    char *log = slurp(f->log, NULL);
    char *want = xasprintf("%s\n", work);
    assert_string_equal(log, want);
    free(want);
    free(log);
    char *file = xasprintf("%s/file", work);
    assert_int_equal(access(file, F_OK), 0);
    free(file);

    next_attempt(f);
    unlink(f->log);
    struct runner_bind bind = {.host_path = work, .mount_path = "/mnt/afs"};
    spec.cwd = sub;
    spec.binds = &bind;
    spec.bind_count = 1;
    start(&spec, &proc);
    assert_int_equal(wait_exit_code(f->status), 0);
    log = slurp(f->log, NULL);
    assert_string_equal(log, "/mnt/afs/sub\n");
    free(log);
    free(sub);
    free(work);
}

static void test_sandbox_script_not_in_argv(void **state)
{
    shim_or_skip();
    sandbox_or_skip();
    script_not_in_argv(*state, true);
}

static void test_sandbox_grace_honoured(void **state)
{
    shim_or_skip();
    sandbox_or_skip();
    grace_honoured(*state, true);
}

/* SIGKILL still ends everything in the sandbox, including what left the process group. */
static void test_sandbox_kill_ends_all(void **state)
{
    struct fixture *f = *state;
    shim_or_skip();
    sandbox_or_skip();
    struct runner_spec spec =
        spec_for(f, "trap '' TERM; setsid sleep 59.731 & echo ready; while :; do sleep 0.2; done");
    spec.sandbox = true;
    struct runner_proc proc;
    start(&spec, &proc);
    assert_true(wait_log(f, "ready\n"));
    /* Ignored TERM: still running a while later. */
    assert_int_equal(runner_signal(&proc, SIGTERM), 0);
    sleep_ms(300);
    int code;
    assert_int_equal(runner_read_status(f->status, &code), 0);
    assert_int_equal(runner_signal(&proc, SIGKILL), 0);
    assert_int_equal(wait_exit_code(f->status), 137);
    assert_true(wait_gone(&proc));
    assert_false(any_cmdline_has("sleep 59.731"));
}

/* A SIGTERM sent as soon as the start returns is not lost to a pid 1 still starting up. */
static void test_sandbox_term_right_after_start(void **state)
{
    struct fixture *f = *state;
    shim_or_skip();
    sandbox_or_skip();
    for (int i = 0; i < 5; i++) {
        next_attempt(f);
        struct runner_spec spec = spec_for(f, "sleep 30");
        spec.sandbox = true;
        struct runner_proc proc;
        start(&spec, &proc);
        assert_int_equal(runner_signal(&proc, SIGTERM), 0);
        assert_int_equal(wait_exit_code(f->status), 128 + SIGTERM);
        assert_true(wait_gone(&proc));
    }
}

static void test_sandbox_volume_symlink_refused(void **state)
{
    shim_or_skip();
    sandbox_or_skip();
    volume_symlink_refused(*state, true);
}

/*
 * Item 2: the worker sees its own processes only (a pid namespace, our init
 * as pid 1, no descriptor of the shim's), has no capabilities, and cannot
 * write the kernel's settings (uid 0 may, without any capability: writing
 * core_pattern runs a program as root on the host).
 */
static void test_sandbox_isolation(void **state)
{
    struct fixture *f = *state;
    shim_or_skip();
    sandbox_or_skip();
    struct runner_spec spec =
        spec_for(f, "echo pids $(ls -d /proc/[0-9]* | wc -l); echo me $$; "
                    "echo init $(tr '\\0' ' ' < /proc/1/cmdline); echo initfds $(ls /proc/1/fd); "
                    "for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline; echo; done; "
                    "grep CapEff /proc/self/status; "
                    "if cat /proc/sys/kernel/core_pattern > /proc/sys/kernel/core_pattern; then "
                    "echo sysctl-written; fi; "
                    "if echo 0 > /proc/sysrq-trigger; then echo sysrq-written; fi; echo end");
    spec.sandbox = true;
    struct runner_proc proc;
    start(&spec, &proc);
    assert_int_equal(wait_exit_code(f->status), 0);
    char log[8192];
    int fd = open(f->log, O_RDONLY);
    assert_true(fd >= 0);
    ssize_t n = read(fd, log, sizeof(log) - 1);
    close(fd);
    assert_true(n > 0);
    log[n] = '\0';
    int count = -1;
    assert_int_equal(sscanf(log, "pids %d", &count), 1);
    assert_true(count >= 2 && count <= 6); /* init, sh, and the $(ls | wc) subshell, ls, wc */
    assert_non_null(strstr(log, "me 2\n"));
    const char *init = strstr(log, "init /trainjob/init --init --ready-fd ");
    assert_non_null(init);
    assert_non_null(strstr(init, " -- /bin/sh /trainjob/startup.sh\n"));
    assert_non_null(strstr(log, "initfds 0 1 2\n"));
    assert_null(strstr(log, "test_runner"));
    assert_null(strstr(log, "--status"));
    assert_non_null(strstr(log, "CapEff:\t0000000000000000\n"));
    assert_null(strstr(log, "sysctl-written"));
    assert_null(strstr(log, "sysrq-written"));
    assert_non_null(strstr(log, "end\n"));
}

/* A mount path inside another is refused: the first one's content would steer the second. */
static void test_sandbox_nested_mounts_refused(void **state)
{
    struct fixture *f = *state;
    shim_or_skip();
    sandbox_or_skip();
    char *a = xasprintf("%s/a", f->dir);
    assert_int_equal(mkdir(a, 0755), 0);
    struct runner_bind binds[] = {
        {.host_path = a, .mount_path = "/mnt/a"},
        {.host_path = a, .mount_path = "/mnt/a/b/", .volume = "scratch", .subdir = "/b"}};
    struct runner_spec spec = spec_for(f, "true");
    spec.sandbox = true;
    spec.binds = binds;
    spec.bind_count = 2;
    struct runner_proc proc;
    struct strbuf err = STRBUF_INIT;
    assert_int_equal(runner_start(&spec, &proc, &err), -1);
    assert_string_equal(strbuf_str(&err), "trainjob-shim: cannot mount /mnt/a/b/: inside /mnt/a; "
                                          "one mount path may not lie inside another");
    binds[1].mount_path = "/trainjob/init";
    strbuf_reset(&err);
    next_attempt(f);
    assert_int_equal(runner_start(&spec, &proc, &err), -1);
    assert_non_null(strstr(strbuf_str(&err), "the same path as"));
    strbuf_free(&err);
    free(a);
}

/*
 * The claim decides an attempt once: taken by trainjobd first, the shim
 * starts nothing (the script would leave a file) and says so; taken by the
 * shim, trainjobd loses and learns which shim holds it.
 */
static void test_claim(void **state)
{
    struct fixture *f = *state;
    shim_or_skip();
    char *ran = xasprintf("%s/ran", f->dir);
    char *script = xasprintf("touch %s; sleep 30", ran);
    struct runner_spec spec = spec_for(f, script);
    struct runner_proc proc;
    struct strbuf err = STRBUF_INIT;

    assert_int_equal(runner_claim(f->status), 1);
    assert_int_equal(runner_claim(f->status), 0);
    assert_int_equal(runner_claim_owner(f->status), -1); /* trainjobd's own claim */
    assert_int_equal(runner_start(&spec, &proc, &err), -1);
    assert_non_null(strstr(strbuf_str(&err), "cancelled"));
    assert_int_equal(proc.shim_pid, 0);
    char *pid_path = xasprintf("%s.pid", f->status);
    assert_int_not_equal(access(pid_path, F_OK), 0);
    assert_int_not_equal(access(ran, F_OK), 0);
    struct runner_proc none;
    assert_int_equal(runner_read_pidfile(f->status, &none), -1);

    next_attempt(f);
    start(&spec, &proc);
    assert_int_equal(runner_claim(f->status), 0);
    assert_int_equal(runner_claim_owner(f->status), proc.shim_pid);
    struct runner_proc again;
    assert_int_equal(runner_read_pidfile(f->status, &again), 0);
    assert_int_equal(again.shim_pid, proc.shim_pid);
    assert_int_equal(again.worker_pgid, proc.worker_pgid);
    assert_true(runner_alive(&again));
    assert_int_equal(runner_signal(&proc, SIGKILL), 0);
    assert_int_equal(wait_exit_code(f->status), 137);
    free(pid_path);
    free(script);
    free(ran);
    strbuf_free(&err);
}

/*
 * runner_launch does not wait: 50 shims are launched before any report is
 * read, then every report arrives on its own pipe, each naming its shim.
 */
#define MANY 50
static void test_launch_many(void **state)
{
    struct fixture *f = *state;
    shim_or_skip();
    struct runner_launch *l[MANY];
    char *status[MANY];
    struct strbuf err = STRBUF_INIT;
    for (int i = 0; i < MANY; i++) {
        status[i] = xasprintf("%s/status.%d", f->dir, i);
        struct runner_spec spec = spec_for(f, "sleep 30");
        spec.status_path = status[i];
        assert_int_equal(runner_launch(&spec, &l[i], &err), 0);
        assert_true(runner_launch_pid(l[i]) > 0);
    }
    int reported = 0;
    struct runner_proc proc[MANY];
    bool done[MANY] = {false};
    for (int waited = 0; reported < MANY && waited <= WAIT_MAX_MS; waited += WAIT_STEP_MS) {
        for (int i = 0; i < MANY; i++) {
            if (done[i])
                continue;
            int rc = runner_launch_read(l[i], &proc[i], &err);
            if (rc == -1)
                print_message("launch %d: %s\n", i, strbuf_str(&err));
            assert_int_not_equal(rc, -1);
            if (rc == 1) {
                done[i] = true;
                reported++;
                assert_int_equal(proc[i].shim_pid, runner_launch_pid(l[i]));
                assert_true(proc[i].worker_pgid > 0);
            }
        }
        if (reported < MANY)
            sleep_ms(WAIT_STEP_MS);
    }
    assert_int_equal(reported, MANY);
    for (int i = 0; i < MANY; i++) {
        runner_launch_free(l[i], false);
        assert_int_equal(runner_signal(&proc[i], SIGKILL), 0);
        assert_int_equal(wait_exit_code(status[i]), 137);
        free(status[i]);
    }
    strbuf_free(&err);
}

/* What a launch says of a "shim" (a script at f->dir/fake-shim) that ends without its report. */
static void silent_end(const struct fixture *f, const char *body, struct strbuf *err)
{
    char *path = xasprintf("%s/fake-shim", f->dir);
    char *text = xasprintf("#!/bin/sh\n%s\n", body);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
    assert_int_equal(chmod(path, 0755), 0);
    struct runner_spec spec = spec_base(f, "exit 0");
    spec.shim_path = path;
    struct runner_launch *l;
    assert_int_equal(runner_launch(&spec, &l, err), 0);
    struct runner_proc proc;
    int rc = 0;
    for (int waited = 0; rc == 0 && waited <= WAIT_MAX_MS; waited += WAIT_STEP_MS) {
        rc = runner_launch_read(l, &proc, err);
        if (rc == 0)
            sleep_ms(WAIT_STEP_MS);
    }
    assert_int_equal(rc, -1);
    runner_launch_free(l, false);
    free(text);
    free(path);
}

/* A shim that ends without a word: the failure says how it ended and what it wrote. */
static void test_silent_shim_end_described(void **state)
{
    struct fixture *f = *state;
    struct strbuf err = STRBUF_INIT;
    silent_end(f, "printf 'nonsense\\033[2J\\n'; kill -KILL $$", &err);
    print_message("%s\n", strbuf_str(&err));
    assert_non_null(strstr(strbuf_str(&err), "exited without starting the worker"));
    assert_non_null(strstr(strbuf_str(&err), "it wrote \"nonsense\\x1b[2J\""));
    assert_non_null(strstr(strbuf_str(&err), "killed by signal 9"));
    strbuf_reset(&err);
    silent_end(f, "exit 3", &err);
    assert_non_null(strstr(strbuf_str(&err), "exited without starting the worker; exit status 3"));
    strbuf_free(&err);
}

/* A child in a process group of its own, pausing until killed. */
static pid_t group_leader(void)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        setpgid(0, 0);
        for (;;)
            pause();
    }
    setpgid(pid, pid);
    return pid;
}

/* Is pid gone (no such process, or a zombie)? Waits at most WAIT_MAX_MS. */
static bool ended(pid_t pid)
{
    for (int ms = 0; ms < WAIT_MAX_MS; ms += 10) {
        struct procstat st;
        if (procstat_read(pid, &st) != 0 || st.state == 'Z' || st.state == 'X')
            return true;
        usleep(10 * 1000);
    }
    return false;
}

/*
 * A saved group number is signalled only while it is still the worker's:
 * a stranger that got the number since (another start time) is left alone.
 */
static void test_kill_group_only_ours(void **state)
{
    (void)state;
    pid_t stranger = group_leader();
    struct procstat st;
    assert_int_equal(procstat_read(stranger, &st), 0);
    assert_int_equal(st.pgrp, stranger);

    struct runner_proc saved = {.shim_pid = 0, .worker_pgid = stranger};
    saved.worker_start_ticks = st.start_ticks + 1; /* the worker that had this number */
    errno = 0;
    assert_int_equal(runner_kill_group(&saved, SIGKILL), -1);
    assert_int_equal(errno, ESRCH);
    /* Unrecorded start time, and no shim of ours running as its parent: refused too. */
    saved.worker_start_ticks = 0;
    saved.shim_pid = getppid();
    assert_int_equal(runner_kill_group(&saved, SIGKILL), -1);
    usleep(50 * 1000);
    int status;
    assert_int_equal(waitpid(stranger, &status, WNOHANG), 0); /* still alive */

    /* The recorded start time: it is ours, and the whole group goes. */
    saved.worker_start_ticks = st.start_ticks;
    assert_int_equal(runner_kill_group(&saved, SIGKILL), 0);
    assert_int_equal(waitpid(stranger, &status, 0), stranger);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
}

/* The leader gone, its group lives on: the number is still the group's, and it is killed. */
static void test_kill_group_leader_gone(void **state)
{
    (void)state;
    int p[2];
    assert_int_equal(pipe(p), 0);
    pid_t leader = fork();
    assert_true(leader >= 0);
    if (leader == 0) {
        setpgid(0, 0);
        pid_t member = fork();
        if (member == 0) {
            for (;;)
                pause();
        }
        (void)!write(p[1], &member, sizeof member);
        _exit(0);
    }
    setpgid(leader, leader);
    close(p[1]);
    pid_t member = 0;
    assert_int_equal(read(p[0], &member, sizeof member), (ssize_t)sizeof member);
    close(p[0]);
    struct procstat st;
    assert_int_equal(procstat_read(member, &st), 0);
    int status;
    assert_int_equal(waitpid(leader, &status, 0), leader);
    assert_int_equal(st.pgrp, leader);

    struct runner_proc saved = {.worker_pgid = leader, .worker_start_ticks = 12345};
    assert_int_equal(runner_kill_group(&saved, SIGKILL), 0);
    assert_true(ended(member));
    waitpid(member, &status, WNOHANG); /* ours when we are the subreaper */
}

/* A pidfd on the shim becomes readable when the shim dies, even by SIGKILL. */
static void test_pidfd_sees_shim_die(void **state)
{
    struct fixture *f = *state;
    struct runner_spec spec = spec_for(f, "sleep 30");
    struct runner_proc proc;
    start(&spec, &proc);
    int pfd = runner_pidfd_open(proc.shim_pid);
    if (pfd < 0 && errno == ENOSYS) {
        runner_signal(&proc, SIGKILL);
        skip();
    }
    assert_true(pfd >= 0);
    struct pollfd p = {pfd, POLLIN, 0};
    assert_int_equal(poll(&p, 1, 0), 0);
    assert_int_equal(runner_pidfd_signal(pfd, SIGKILL), 0);
    assert_int_equal(poll(&p, 1, WAIT_MAX_MS), 1);
    /* The shim is gone without a status; its worker lives on until someone kills the group. */
    int code;
    assert_int_equal(runner_read_status(f->status, &code), 0);
    assert_int_equal(kill(-proc.worker_pgid, 0), 0);
    assert_int_equal(kill(-proc.worker_pgid, SIGKILL), 0);
    close(pfd);
}

int main(void)
{
    /*
     * Orphaned shims come to us rather than to a PID 1 that may never reap
     * them (as in some containers), so a run leaves no zombies behind.
     */
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_exit_code_and_log, setup, teardown),
        cmocka_unit_test_setup_teardown(test_exit_zero, setup, teardown),
        cmocka_unit_test_setup_teardown(test_silent_shim_end_described, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sigkill, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sigterm_to_group, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sigterm_forwarded, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sigint_forwarded, setup, teardown),
        cmocka_unit_test_setup_teardown(test_environment, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cwd, setup, teardown),
        cmocka_unit_test_setup_teardown(test_log_cap, setup, teardown),
        cmocka_unit_test_setup_teardown(test_outlives_parent, setup, teardown),
        cmocka_unit_test_setup_teardown(test_leftovers_killed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_alive, setup, teardown),
        cmocka_unit_test_setup_teardown(test_start_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_read_status, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sandbox_binds, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sandbox_cwd, setup, teardown),
        cmocka_unit_test_setup_teardown(test_script_not_in_argv, setup, teardown),
        cmocka_unit_test_setup_teardown(test_grace_honoured, setup, teardown),
        cmocka_unit_test_setup_teardown(test_volume_symlink_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sandbox_script_not_in_argv, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sandbox_grace_honoured, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sandbox_kill_ends_all, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sandbox_term_right_after_start, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sandbox_volume_symlink_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sandbox_isolation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sandbox_nested_mounts_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_claim, setup, teardown),
        cmocka_unit_test_setup_teardown(test_launch_many, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pidfd_sees_shim_die, setup, teardown),
        cmocka_unit_test(test_kill_group_only_ours),
        cmocka_unit_test(test_kill_group_leader_gone),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
