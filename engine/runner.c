/*
 * runner: starts workers through trainjob-shim (engine/shim.c) and finds
 * them again (see runner.h for the model).
 *
 * runner_launch spawns the shim with its standard output a pipe back to the
 * caller, which reads one line from it — "<shim pid> <worker pgid> <ticks>" once the
 * worker runs, or "error <message>" — and then EOF. Nothing else crosses
 * that pipe, and nothing here waits for the worker. Everything after that
 * goes through files (the status file, its .pid and .claim companions) and
 * /proc, so the same calls work for a worker started by an earlier trainjobd.
 *
 * State: only the cached answer of runner_sandbox_available (and each
 * launch's pipe, owned by its caller). run_quietly's forked child calls only
 * exec-safe functions.
 */
#include "engine/runner.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/fileio.h"
#include "util/loop.h"
#include "util/procstat.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

/* The shim's descriptor for the script (--script-fd). */
#define SCRIPT_FD 3

/* A growing NULL-terminated argument vector (owned strings). */
struct argv_buf {
    char **v;
    size_t n, cap;
};

static void argv_add(struct argv_buf *av, char *owned)
{
    if (av->n + 2 > av->cap) {
        av->cap = av->cap ? av->cap * 2 : 32;
        av->v = xreallocarray(av->v, av->cap, sizeof(*av->v));
    }
    av->v[av->n++] = owned;
    av->v[av->n] = NULL;
}

static void argv_free(struct argv_buf *av)
{
    for (size_t i = 0; i < av->n; i++)
        free(av->v[i]);
    free(av->v);
}

/* Waits for a child of ours, retrying on EINTR. Returns its wait status, or -1. */
static int wait_child(pid_t pid)
{
    int status;
    for (;;) {
        if (waitpid(pid, &status, 0) == pid)
            return status;
        if (errno != EINTR)
            return -1;
    }
}

/* In a child about to exec: default signal dispositions, nothing blocked. */
static void reset_signals(void)
{
    for (int sig = 1; sig < NSIG; sig++) {
        if (sig != SIGKILL && sig != SIGSTOP)
            signal(sig, SIG_DFL);
    }
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
}

/* In a child about to exec: closes every descriptor from 3 up. */
static void close_from_3(void)
{
    if (close_range(3, ~0U, 0) == 0)
        return;
    long max = sysconf(_SC_OPEN_MAX);
    if (max < 0 || max > 65536)
        max = 65536;
    for (int fd = 3; fd < max; fd++)
        close(fd);
}

/* Runs argv with no input or output and returns its exit status (-1 when it could not). */
static int run_quietly(char *const argv[])
{
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        int nul = open("/dev/null", O_RDWR);
        if (nul >= 0) {
            dup2(nul, STDIN_FILENO);
            dup2(nul, STDOUT_FILENO);
            dup2(nul, STDERR_FILENO);
        }
        close_from_3();
        reset_signals();
        execvp(argv[0], argv);
        _exit(127);
    }
    int status = wait_child(pid);
    return status >= 0 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

bool runner_sandbox_available(void)
{
    static int available = -1;
    if (available < 0) {
        /* The namespaces and special mounts the shim's sandbox makes (a /proc may be refused). */
        char *const argv[] = {"bwrap",
                              "--unshare-pid",
                              "--unshare-ipc",
                              "--unshare-uts",
                              "--as-pid-1",
                              "--cap-drop",
                              "ALL",
                              "--ro-bind",
                              "/",
                              "/",
                              "--proc",
                              "/proc",
                              "--dev",
                              "/dev",
                              "--tmpfs",
                              "/tmp",
                              "true",
                              NULL};
        available = run_quietly(argv) == 0;
    }
    return available == 1;
}

const char *runner_bwrap_path(void)
{
    static char *path;
    if (path == NULL) {
        const char *dirs = getenv("PATH");
        if (dirs == NULL || !*dirs)
            dirs = "/usr/local/bin:/usr/bin:/bin";
        while (*dirs && path == NULL) {
            size_t len = strcspn(dirs, ":");
            char *cand = xasprintf("%.*s/bwrap", (int)len, dirs);
            if (cand[0] == '/' && access(cand, X_OK) == 0)
                path = cand;
            else
                free(cand);
            dirs += len + (dirs[len] == ':');
        }
        if (path == NULL)
            path = xstrdup("/usr/bin/bwrap");
    }
    return path;
}

/*
 * The startup script in an anonymous memory file, readable by us alone and
 * sealed: the shim gets it as a descriptor, so it is in no command line
 * (`ps` shows those to everyone) and nothing is created on disk for it (a
 * file created per start in a directory that churns thousands of entries
 * costs the kernel a scan of the deleted ones). Returns the descriptor
 * (close-on-exec, 4 or more, so it is never the 3 it becomes in the shim),
 * or -1 with err set.
 */
static int script_memfd(const char *script, struct strbuf *err)
{
    int fd = memfd_create("trainjob-script", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0) {
        strbuf_addf(err, "runner: the script's memory file: %s", strerror(errno));
        return -1;
    }
    size_t len = strlen(script);
    size_t done = 0;
    while (done < len) {
        ssize_t n = write(fd, script + done, len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        done += (size_t)n;
    }
    int high = -1;
    if (done == len && fchmod(fd, 0600) == 0 &&
        fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) == 0)
        high = fcntl(fd, F_DUPFD_CLOEXEC, SCRIPT_FD + 1);
    if (high < 0)
        strbuf_addf(err, "runner: the script's memory file: %s",
                    done < len ? "short write" : strerror(errno));
    close(fd);
    return high;
}

/* The shim's command line for spec (its script comes as descriptor SCRIPT_FD). */
static void shim_argv(const struct runner_spec *spec, bool sandbox, struct argv_buf *av)
{
    argv_add(av, xstrdup(spec->shim_path));
    argv_add(av, xstrdup("--status"));
    argv_add(av, xstrdup(spec->status_path));
    argv_add(av, xstrdup("--log"));
    argv_add(av, xstrdup(spec->log_path));
    argv_add(av, xstrdup("--log-cap"));
    argv_add(av, xasprintf("%zu", spec->log_cap));
    argv_add(av, xstrdup("--script-fd"));
    argv_add(av, xasprintf("%d", SCRIPT_FD));
    if (spec->cwd) {
        argv_add(av, xstrdup("--cwd"));
        argv_add(av, xstrdup(spec->cwd));
    }
    if (sandbox) {
        argv_add(av, xstrdup("--sandbox"));
        argv_add(av, xstrdup("--bwrap"));
        argv_add(av, xstrdup(runner_bwrap_path()));
    }
    if (spec->user.drop) {
        struct strbuf u = STRBUF_INIT;
        strbuf_addf(&u, "%lu:%lu", (unsigned long)spec->user.uid, (unsigned long)spec->user.gid);
        for (size_t i = 0; i < spec->user.group_count; i++)
            strbuf_addf(&u, "%c%lu", i ? ',' : ':', (unsigned long)spec->user.groups[i]);
        argv_add(av, xstrdup("--user"));
        argv_add(av, strbuf_detach(&u, NULL));
    }
    for (size_t i = 0; i < spec->bind_count; i++) {
        const struct runner_bind *b = &spec->binds[i];
        if (b->volume) {
            /* Checked (and created) below the volume by the shim, sandbox or not. */
            argv_add(av, xstrdup("--volume"));
            argv_add(av, xstrdup(b->volume));
            argv_add(av, xstrdup(b->host_path));
            argv_add(av, xstrdup(b->subdir ? b->subdir : ""));
            argv_add(av, xstrdup(b->mount_path));
            argv_add(av, xstrdup(b->read_only ? "ro" : "rw"));
        } else if (sandbox) {
            argv_add(av, xstrdup("--bind"));
            argv_add(av,
                     xasprintf("%s:%s%s", b->host_path, b->mount_path, b->read_only ? ":ro" : ""));
        }
    }
    for (size_t i = 0; spec->cgroups && spec->cgroups[i]; i++) {
        argv_add(av, xstrdup("--cgroup"));
        argv_add(av, xstrdup(spec->cgroups[i]));
    }
    if (spec->cgroups && spec->cgroups[0] && spec->engine_lock) {
        argv_add(av, xstrdup("--engine-lock"));
        argv_add(av, xstrdup(spec->engine_lock));
    }
}

/* The spec's mistakes runner_start refuses before starting anything. */
static int check_spec(const struct runner_spec *spec, struct strbuf *err)
{
    if (!spec->shim_path || !spec->status_path || !spec->log_path || !spec->script) {
        strbuf_adds(err, "runner: the shim, status file, log file and script are required");
        return -1;
    }
    for (size_t i = 0; i < spec->bind_count; i++) {
        const struct runner_bind *b = &spec->binds[i];
        if (!b->host_path || !b->mount_path || b->host_path[0] != '/' || b->mount_path[0] != '/') {
            strbuf_adds(err, "runner: a bind needs two absolute paths");
            return -1;
        }
        if (b->volume && !b->volume[0]) {
            strbuf_addf(err, "runner: the volume bound at %s has no name", b->mount_path);
            return -1;
        }
        if (!b->volume && (strchr(b->host_path, ':') || strchr(b->mount_path, ':'))) {
            strbuf_addf(err, "runner: cannot bind %s at %s: a path contains ':'", b->host_path,
                        b->mount_path);
            return -1;
        }
    }
    return 0;
}

/* The start time of pid (0 when it is gone or unreadable: then it is never "alive"). */
static uint64_t start_ticks_of(pid_t pid)
{
    struct procstat st;
    return procstat_read(pid, &st) == 0 ? st.start_ticks : 0;
}

/*
 * Parses "<shim pid> <worker pgid> [<worker start ticks>]" (the pid file and
 * the shim's report) into out's shim_pid, worker_pgid and worker_start_ticks
 * (0 from a shim older than the third number).
 */
static int parse_pids(const char *s, struct runner_proc *out)
{
    char *end;
    errno = 0;
    long a = strtol(s, &end, 10);
    if (errno || end == s || *end != ' ' || a <= 0 || a > INT_MAX)
        return -1;
    const char *q = end + 1;
    long b = strtol(q, &end, 10);
    if (errno || end == q || b <= 0 || b > INT_MAX)
        return -1;
    unsigned long long ticks = 0;
    if (*end == ' ') {
        q = end + 1;
        if (!(*q >= '0' && *q <= '9'))
            return -1;
        ticks = strtoull(q, &end, 10);
        if (errno)
            return -1;
    }
    if (*end != '\n' && *end != '\0')
        return -1;
    out->shim_pid = (pid_t)a;
    out->worker_pgid = (pid_t)b;
    out->worker_start_ticks = ticks;
    return 0;
}

struct runner_launch {
    pid_t pid;
    int fd;             /* the report pipe's read end (non-blocking); -1 once closed */
    struct strbuf line; /* what the shim wrote so far */
};

/*
 * posix_spawn, not fork: glibc's clone(CLONE_VM | CLONE_VFORK) copies no page
 * tables, so a start costs the same in an engine holding 50,000 jobs as in an
 * empty one, and an exec failure comes back as the error. The shim is our
 * child (trainjobd is a child subreaper, so a double fork would hand it back
 * to us anyway); it makes itself a session leader, and our SIGCHLD reaps it.
 */
int runner_launch(const struct runner_spec *spec, struct runner_launch **out, struct strbuf *err)
{
    *out = NULL;
    if (check_spec(spec, err) != 0)
        return -1;
    int script = script_memfd(spec->script, err);
    if (script < 0)
        return -1;
    struct argv_buf av = {NULL, 0, 0};
    shim_argv(spec, spec->sandbox && runner_sandbox_available(), &av);
    int report[2];
    if (pipe2(report, O_CLOEXEC) != 0) {
        strbuf_addf(err, "runner: pipe: %s", strerror(errno));
        argv_free(&av);
        close(script);
        return -1;
    }
    /* Out of the way of 0-2, in case trainjobd runs with some of them closed. */
    int rep = fcntl(report[1], F_DUPFD_CLOEXEC, 3);
    close(report[1]);
    if (rep < 0) {
        strbuf_addf(err, "runner: pipe: %s", strerror(errno));
        close(report[0]);
        argv_free(&av);
        close(script);
        return -1;
    }
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDWR, 0);
    posix_spawn_file_actions_adddup2(&fa, rep, STDOUT_FILENO);
    posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_RDWR, 0);
    /* After the report's dup: rep may be SCRIPT_FD; script never is (script_memfd). */
    posix_spawn_file_actions_adddup2(&fa, script, SCRIPT_FD);
    posix_spawn_file_actions_addclosefrom_np(&fa, SCRIPT_FD + 1);
    posix_spawnattr_init(&attr);
    sigset_t all, none;
    sigfillset(&all);
    sigemptyset(&none);
    posix_spawnattr_setsigdefault(&attr, &all);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
    static char *const no_env[] = {NULL};
    pid_t pid = 0;
    int rc = posix_spawn(&pid, spec->shim_path, &fa, &attr, av.v, spec->envp ? spec->envp : no_env);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    argv_free(&av);
    close(rep);
    close(script);
    if (rc != 0) {
        close(report[0]);
        strbuf_addf(err, "trainjob-shim: cannot run %s: %s", spec->shim_path, strerror(rc));
        return -1;
    }
    int fl = fcntl(report[0], F_GETFL);
    if (fl >= 0)
        fcntl(report[0], F_SETFL, fl | O_NONBLOCK);
    struct runner_launch *l = xcalloc(1, sizeof *l);
    l->pid = pid;
    l->fd = report[0];
    l->line = (struct strbuf)STRBUF_INIT;
    *out = l;
    return 0;
}

int runner_launch_fd(const struct runner_launch *l)
{
    return l->fd;
}

pid_t runner_launch_pid(const struct runner_launch *l)
{
    return l->pid;
}

/*
 * A shim that ended without its report line: how it ended (not reaped here:
 * WNOWAIT leaves that to runner_launch_free) and what it wrote instead, so the
 * job's event says why. Its descriptors close as it exits, so a shim whose EOF
 * came first is a zombie within moments; one not yet is said to be so.
 */
/* The wait status of pid if runner_reap reaped it lately (false otherwise). */
static bool reaped_status(pid_t pid, int *status);

static void describe_silent_end(const struct runner_launch *l, struct strbuf *err)
{
    if (l->line.len > 0) {
        strbuf_adds(err, "; it wrote \"");
        for (size_t i = 0; i < l->line.len && i < 80; i++) {
            unsigned char c = (unsigned char)l->line.buf[i];
            if (c == '\n')
                break;
            if (c >= 0x20 && c < 0x7f)
                strbuf_addf(err, "%c", c);
            else
                strbuf_addf(err, "\\x%02x", c);
        }
        strbuf_adds(err, "\"");
    }
    int status = 0;
    for (int tries = 0; !reaped_status(l->pid, &status); tries++) {
        siginfo_t si;
        memset(&si, 0, sizeof si);
        if (waitid(P_PID, (id_t)l->pid, &si, WEXITED | WNOHANG | WNOWAIT) != 0)
            return; /* reaped and forgotten, or not our child: nothing more to say */
        if (si.si_pid == l->pid) {
            status = si.si_code == CLD_EXITED ? W_EXITCODE(si.si_status, 0) : si.si_status;
            break;
        }
        if (tries == 50) {
            strbuf_adds(err, "; it has not exited");
            return;
        }
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    if (WIFEXITED(status))
        strbuf_addf(err, "; exit status %d", WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        strbuf_addf(err, "; killed by signal %d (%s)", WTERMSIG(status),
                    strsignal(WTERMSIG(status)));
}

int runner_launch_read(struct runner_launch *l, struct runner_proc *out, struct strbuf *err)
{
    bool eof = l->fd < 0;
    while (!eof && !memchr(l->line.buf ? l->line.buf : "", '\n', l->line.len)) {
        char buf[512];
        ssize_t n = read(l->fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 0;
        if (n <= 0)
            eof = true;
        else if (l->line.len < 4096)
            strbuf_add(&l->line, buf, (size_t)n);
    }
    const char *line = strbuf_str(&l->line);
    memset(out, 0, sizeof *out);
    if (strncmp(line, "error ", 6) == 0) {
        if (!memchr(line, '\n', l->line.len) && !eof)
            return 0;
        size_t n = strcspn(line + 6, "\n");
        strbuf_addf(err, "trainjob-shim: %.*s", (int)n, line + 6);
        return -1;
    }
    if (parse_pids(line, out) != 0 || out->shim_pid != l->pid) {
        memset(out, 0, sizeof *out);
        strbuf_adds(err, "trainjob-shim: exited without starting the worker");
        describe_silent_end(l, err);
        return -1;
    }
    /* A shim that is gone already (a very short worker) keeps ticks 0: never "alive". */
    out->shim_start_ticks = start_ticks_of(out->shim_pid);
    return 1;
}

void runner_launch_free(struct runner_launch *l, bool kill_shim)
{
    if (l == NULL)
        return;
    /* Still our unreaped child, or reaped and its pid possibly reused: ask the kernel by pidfd. */
    if (kill_shim) {
        int pfd = runner_pidfd_open(l->pid);
        if (pfd >= 0) {
            runner_pidfd_signal(pfd, SIGKILL);
            close(pfd);
        } else if (errno == ENOSYS) {
            kill(l->pid, SIGKILL); /* no pidfd here: still our child unless our SIGCHLD reaped it */
        }
    }
    if (l->fd >= 0)
        close(l->fd);
    strbuf_free(&l->line);
    free(l);
}

int runner_start(const struct runner_spec *spec, struct runner_proc *out, struct strbuf *err)
{
    memset(out, 0, sizeof(*out));
    struct runner_launch *l;
    if (runner_launch(spec, &l, err) != 0)
        return -1;
    int64_t deadline = loop_now_ms() + RUNNER_REPORT_TIMEOUT_MS;
    int rc;
    while ((rc = runner_launch_read(l, out, err)) == 0) {
        int64_t left = deadline - loop_now_ms();
        struct pollfd p = {l->fd, POLLIN, 0};
        if (left <= 0 || (poll(&p, 1, (int)left) < 0 && errno != EINTR)) {
            strbuf_addf(err, "runner: the shim did not report within %d s",
                        RUNNER_REPORT_TIMEOUT_MS / 1000);
            break;
        }
    }
    runner_launch_free(l, rc == 0);
    if (rc != 1) {
        memset(out, 0, sizeof(*out));
        return -1;
    }
    return 0;
}

/* <status_path>.claim: whoever creates it first decides whether this attempt runs. */
int runner_claim(const char *status_path)
{
    char *path = xasprintf("%s.claim", status_path);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    int saved = errno;
    free(path);
    if (fd >= 0) {
        /* "0": trainjobd's claim, no shim behind it. */
        ssize_t n = write(fd, "0\n", 2);
        (void)n;
        close(fd);
        return 1;
    }
    return saved == EEXIST ? 0 : -1;
}

pid_t runner_claim_owner(const char *status_path)
{
    /* "0\n" is trainjobd's own claim: -1; an empty file is a shim between its open and its write.
     */
    char *path = xasprintf("%s.claim", status_path);
    char *data = NULL;
    size_t len;
    struct strbuf err = STRBUF_INIT;
    long pid = 0;
    if (file_read_all(path, 64, &data, &len, &err) == 0) {
        char *end;
        errno = 0;
        pid = strtol(data, &end, 10);
        if (pid == 0 && end != data && *end == '\n')
            pid = -1;
        else if (errno || end == data || *end != '\n' || pid <= 1 || pid > INT_MAX)
            pid = 0;
    }
    free(data);
    free(path);
    strbuf_free(&err);
    return (pid_t)pid;
}

int runner_read_pidfile(const char *status_path, struct runner_proc *out)
{
    char *path = xasprintf("%s.pid", status_path);
    char *data = NULL;
    size_t len;
    struct strbuf err = STRBUF_INIT;
    int rc = -1;
    memset(out, 0, sizeof *out);
    if (file_read_all(path, 64, &data, &len, &err) == 0 && parse_pids(data, out) == 0) {
        out->shim_start_ticks = start_ticks_of(out->shim_pid);
        rc = 0;
    } else {
        memset(out, 0, sizeof *out);
    }
    free(data);
    free(path);
    strbuf_free(&err);
    return rc;
}

int runner_pidfd_open(pid_t pid)
{
#ifdef SYS_pidfd_open
    if (pid <= 0) {
        errno = ESRCH;
        return -1;
    }
    return (int)syscall(SYS_pidfd_open, pid, 0);
#else
    (void)pid;
    errno = ENOSYS;
    return -1;
#endif
}

int runner_pidfd_signal(int pidfd, int sig)
{
#ifdef SYS_pidfd_send_signal
    return (int)syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
#else
    (void)pidfd;
    (void)sig;
    errno = ENOSYS;
    return -1;
#endif
}

int runner_signal(const struct runner_proc *proc, int sig)
{
    /* The shim forwards it where the worker's own processes get it (see runner.h). */
    if (sig != SIGKILL && proc->shim_pid > 0 && runner_alive(proc) &&
        kill(proc->shim_pid, sig) == 0)
        return 0;
    if (proc->worker_pgid > 0)
        return runner_kill_group(proc, sig);
    if (proc->shim_pid > 0)
        return kill(proc->shim_pid, sig);
    errno = ESRCH;
    return -1;
}

int runner_kill_group(const struct runner_proc *proc, int sig)
{
    if (proc->worker_pgid <= 0) {
        errno = ESRCH;
        return -1;
    }
    struct procstat st;
    if (procstat_read(proc->worker_pgid, &st) == 0) {
        /*
         * A process has the group's number: it is the worker's leader only
         * when its start time is the one the shim recorded — or, from a shim
         * that recorded none, when it is the child of our shim, still running.
         */
        bool ours = proc->worker_start_ticks ? st.start_ticks == proc->worker_start_ticks
                                             : st.ppid == proc->shim_pid && runner_alive(proc);
        if (!ours) {
            errno = ESRCH;
            return -1;
        }
    }
    /*
     * Else the leader is gone. The kernel does not hand out a number while a
     * process group still uses it, so the group is the worker's remains, or
     * gone (ESRCH) — never a stranger's, short of the whole pid space
     * wrapping between the look above and this call.
     */
    return kill(-proc->worker_pgid, sig);
}

bool runner_alive(const struct runner_proc *proc)
{
    struct procstat st;
    if (proc->shim_pid <= 0 || proc->shim_start_ticks == 0)
        return false;
    if (procstat_read(proc->shim_pid, &st) != 0)
        return false;
    /* A zombie has ended: nobody reaped it yet (a PID 1 that does not reap). */
    return st.state != 'Z' && st.state != 'X' && st.start_ticks == proc->shim_start_ticks;
}

int runner_read_status(const char *status_path, int *exit_code)
{
    int fd = open(status_path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? 0 : -1;
    char buf[64];
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    if (strncmp(buf, "exit_code ", 10) != 0)
        return -1;
    const char *p = buf + 10;
    char *end;
    errno = 0;
    long code = strtol(p, &end, 10);
    if (errno || end == p || !(p[0] >= '0' && p[0] <= '9') || code > 255)
        return -1;
    if (!((end[0] == '\n' && end[1] == '\0') || end[0] == '\0'))
        return -1;
    *exit_code = (int)code;
    return 1;
}

void runner_refresh(struct runner_proc *proc, const char *status_path)
{
    if (!status_path)
        return;
    char *path = xasprintf("%s.pid", status_path);
    char *data = NULL;
    size_t len;
    struct strbuf err = STRBUF_INIT;
    struct runner_proc read;
    if (file_read_all(path, 64, &data, &len, &err) == 0 && parse_pids(data, &read) == 0 &&
        read.shim_pid == proc->shim_pid) {
        proc->worker_pgid = read.worker_pgid;
        proc->worker_start_ticks = read.worker_start_ticks;
    }
    free(data);
    free(path);
    strbuf_free(&err);
}

/* The last children reaped, with their wait status: a failed start says how its shim ended. */
#define REAPED_KEPT 64
static struct {
    pid_t pid;
    int status;
} reaped[REAPED_KEPT];
static size_t reaped_next;

void runner_reap(void)
{
    for (;;) {
        int status;
        pid_t pid = waitpid(-1, &status, WNOHANG);
        if (pid > 0) {
            reaped[reaped_next].pid = pid;
            reaped[reaped_next].status = status;
            reaped_next = (reaped_next + 1) % REAPED_KEPT;
            continue;
        }
        if (pid < 0 && errno == EINTR)
            continue;
        return;
    }
}

static bool reaped_status(pid_t pid, int *status)
{
    for (size_t i = 0; i < REAPED_KEPT; i++) {
        size_t k = (reaped_next + REAPED_KEPT - 1 - i) % REAPED_KEPT;
        if (reaped[k].pid == pid) {
            *status = reaped[k].status;
            return true;
        }
    }
    return false;
}
