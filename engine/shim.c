/*
 * trainjob-shim: the small process between trainjobd and one worker.
 *
 *   trainjob-shim --status FILE --log FILE --log-cap BYTES [--cwd DIR]
 *                 [--sandbox] [--bind SRC:DST[:ro]]... -- SCRIPT
 *
 * runner_start (engine/runner.c) execs it with the worker's environment as
 * its own. The shim starts a new session (so it outlives trainjobd), starts
 * `/bin/sh -c SCRIPT` in a process group of its own — inside bubblewrap with
 * --sandbox — and then:
 *
 *  - claims the attempt first: creates FILE.claim with O_CREAT | O_EXCL and
 *    its pid, and starts nothing when the file is there already (trainjobd
 *    took it to cancel this start; see runner.h);
 *  - writes "<shim pid> <worker pgid>\n" to FILE.pid (atomically) and the
 *    same line to its standard output, which runner_start reads to learn the
 *    worker started; a failure before that is one "error <message>" line
 *    there instead, exit status 1, and no status file;
 *  - copies the worker's stdout and stderr into the log, keeping each file at
 *    most BYTES long (0: no cap): when the log is full it becomes FILE.1
 *    (replacing the old one) and a new log starts, so at most 2 × BYTES are
 *    on disk and at least the last BYTES written are kept;
 *  - forwards SIGTERM, SIGINT and SIGHUP to the worker's process group;
 *  - when the worker's main process ends, kills what is left in its process
 *    group (as a container's leftovers die with it), copies the rest of the
 *    output (waiting at most a second for processes that escaped the group),
 *    and writes "exit_code N\n" — N the exit status, or 128 + signal — to
 *    FILE exactly once, through a temp file, fsync and rename.
 *
 * The sandbox: bubblewrap with a tmpfs as /, the host's /usr, /etc and /sys
 * read-only, /bin, /sbin, /lib* as the host has them (symlinks into /usr, or
 * read-only binds), a fresh /proc, a minimal /dev plus the NVIDIA devices, a
 * tmpfs /tmp, then each --bind (read-only with :ro; bwrap creates the mount
 * points), and the working directory: through a bind that covers it, or
 * bound read-write at its own path. Only the mount namespace is unshared
 * (bwrap adds a user namespace when it needs one): the worker keeps the
 * host's network, pids and users, which is what a local training job wants.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/fileio.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

/* How long to keep copying output after the worker ended, for escaped writers. */
#define DRAIN_MS 1000
/* The exit code of a worker that could not be started (as the shell's "not found"). */
#define EXIT_CANNOT_RUN 127

struct shim_bind {
    char *src;
    char *dst;
    bool read_only;
};

struct shim_args {
    const char *status;
    const char *log;
    size_t log_cap;
    const char *cwd;
    bool sandbox;
    struct shim_bind *binds;
    size_t bind_count;
    const char *script;
};

/* The log file and its rotation. */
struct shim_log {
    const char *path;
    char *rotated; /* path + ".1" */
    int fd;        /* -1 when it could not be reopened: output is dropped */
    size_t size;
    size_t cap; /* 0: no cap */
};

/* A growing NULL-terminated argument vector (owned strings). */
struct argv_buf {
    char **v;
    size_t n, cap;
};

/* Read by the signal handler: the worker's process group, and where to wake the loop. */
static volatile sig_atomic_t worker_pgid;
static int wake_fd = -1;

/* Forwards termination signals to the worker's group; SIGCHLD wakes the main loop. */
static void on_signal(int sig)
{
    int saved = errno;
    if (sig == SIGCHLD) {
        if (wake_fd >= 0 && write(wake_fd, "c", 1) < 0) {
            /* the pipe is full: the loop is awake already */
        }
    } else if (worker_pgid > 0) {
        kill(-(pid_t)worker_pgid, sig);
    }
    errno = saved;
}

/* Gives up before the worker started: one "error …" line for runner_start, exit 1. */
static _Noreturn void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static _Noreturn void fail(const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    dprintf(STDOUT_FILENO, "error %s\n", msg);
    dprintf(STDERR_FILENO, "trainjob-shim: %s\n", msg);
    exit(1);
}

static _Noreturn void usage(const char *why)
{
    fail("%s\nusage: trainjob-shim --status FILE --log FILE --log-cap BYTES [--cwd DIR] "
         "[--sandbox] [--bind SRC:DST[:ro]]... -- SCRIPT",
         why);
}

/* Splits SRC:DST[:ro] (also :rw) into a bind; both paths absolute. */
static bool parse_bind(const char *text, struct shim_bind *b)
{
    const char *colon = strchr(text, ':');
    if (!colon || text[0] != '/' || colon[1] != '/')
        return false;
    const char *dst = colon + 1;
    size_t dst_len = strlen(dst);
    b->read_only = false;
    if (dst_len > 3 && strcmp(dst + dst_len - 3, ":ro") == 0) {
        b->read_only = true;
        dst_len -= 3;
    } else if (dst_len > 3 && strcmp(dst + dst_len - 3, ":rw") == 0) {
        dst_len -= 3;
    }
    if (memchr(dst, ':', dst_len))
        return false;
    b->src = xstrndup(text, (size_t)(colon - text));
    b->dst = xstrndup(dst, dst_len);
    return true;
}

/* Reads the command line into a; exits with a usage message when it is wrong. */
static void parse_args(int argc, char **argv, struct shim_args *a)
{
    bool have_cap = false;
    for (int i = 1; i < argc; i++) {
        const char *opt = argv[i];
        if (strcmp(opt, "--") == 0) {
            if (i + 2 != argc)
                usage("expected exactly one SCRIPT after --");
            a->script = argv[i + 1];
            break;
        }
        if (strcmp(opt, "--sandbox") == 0) {
            a->sandbox = true;
            continue;
        }
        if (i + 1 >= argc)
            usage("an option is missing its value");
        const char *val = argv[++i];
        if (strcmp(opt, "--status") == 0) {
            a->status = val;
        } else if (strcmp(opt, "--log") == 0) {
            a->log = val;
        } else if (strcmp(opt, "--cwd") == 0) {
            a->cwd = val;
        } else if (strcmp(opt, "--log-cap") == 0) {
            char *end;
            errno = 0;
            unsigned long long cap = strtoull(val, &end, 10);
            if (errno || end == val || *end || val[0] == '-' || cap > SIZE_MAX)
                usage("--log-cap needs a number of bytes");
            a->log_cap = (size_t)cap;
            have_cap = true;
        } else if (strcmp(opt, "--bind") == 0) {
            a->binds = xreallocarray(a->binds, a->bind_count + 1, sizeof(*a->binds));
            if (!parse_bind(val, &a->binds[a->bind_count]))
                usage("--bind needs /SRC:/DST or /SRC:/DST:ro");
            a->bind_count++;
        } else {
            usage("unknown option");
        }
    }
    if (!a->status || !a->log || !have_cap || !a->script)
        usage("--status, --log, --log-cap and SCRIPT are required");
}

static void argv_push(struct argv_buf *av, const char *s)
{
    if (av->n + 2 > av->cap) {
        av->cap = av->cap ? av->cap * 2 : 64;
        av->v = xreallocarray(av->v, av->cap, sizeof(*av->v));
    }
    av->v[av->n++] = xstrdup(s);
    av->v[av->n] = NULL;
}

static void argv_push3(struct argv_buf *av, const char *a, const char *b, const char *c)
{
    argv_push(av, a);
    argv_push(av, b);
    argv_push(av, c);
}

/* Where host directory cwd appears inside the sandbox, or NULL when no bind covers it. */
static char *covered_cwd(const struct shim_args *a)
{
    const struct shim_bind *best = NULL;
    size_t best_len = 0;
    for (size_t i = 0; i < a->bind_count; i++) {
        const char *src = a->binds[i].src;
        size_t len = strlen(src);
        while (len > 1 && src[len - 1] == '/')
            len--;
        bool under = strncmp(a->cwd, src, len) == 0 &&
                     (a->cwd[len] == '\0' || a->cwd[len] == '/' || len == 1);
        if (under && (!best || len > best_len)) {
            best = &a->binds[i];
            best_len = len;
        }
    }
    if (!best)
        return NULL;
    const char *rest = a->cwd + (best_len == 1 ? 0 : best_len);
    if (*rest == '\0')
        return xstrdup(best->dst);
    size_t dst_len = strlen(best->dst);
    if (dst_len > 0 && best->dst[dst_len - 1] == '/')
        rest++;
    return xasprintf("%s%s", best->dst, rest);
}

/* /bin, /sbin, /lib* as the host has them: symlinks stay symlinks, directories are bound. */
static void sandbox_system_dirs(struct argv_buf *av)
{
    static const char *const dirs[] = {"/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32"};
    for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
        struct stat st;
        if (lstat(dirs[i], &st) != 0)
            continue;
        if (S_ISLNK(st.st_mode)) {
            char target[PATH_MAX];
            ssize_t n = readlink(dirs[i], target, sizeof(target) - 1);
            if (n <= 0)
                continue;
            target[n] = '\0';
            argv_push3(av, "--symlink", target, dirs[i]);
        } else if (S_ISDIR(st.st_mode)) {
            argv_push3(av, "--ro-bind", dirs[i], dirs[i]);
        }
    }
}

/* The host's NVIDIA device nodes, so a worker can use the GPUs it was given. */
static void sandbox_gpu_devices(struct argv_buf *av)
{
    DIR *d = opendir("/dev");
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, "nvidia", 6) != 0)
            continue;
        char path[300];
        snprintf(path, sizeof(path), "/dev/%s", e->d_name);
        argv_push3(av, "--dev-bind-try", path, path);
    }
    closedir(d);
}

/* The command that runs the worker: /bin/sh -c SCRIPT, or bwrap around it. */
static void worker_argv(const struct shim_args *a, struct argv_buf *av)
{
    if (a->sandbox) {
        argv_push(av, "bwrap");
        argv_push(av, "--die-with-parent");
        argv_push(av, "--tmpfs");
        argv_push(av, "/");
        argv_push3(av, "--ro-bind", "/usr", "/usr");
        argv_push3(av, "--ro-bind", "/etc", "/etc");
        sandbox_system_dirs(av);
        argv_push3(av, "--ro-bind-try", "/sys", "/sys");
        argv_push3(av, "--ro-bind-try", "/run/systemd/resolve", "/run/systemd/resolve");
        argv_push(av, "--proc");
        argv_push(av, "/proc");
        argv_push(av, "--dev");
        argv_push(av, "/dev");
        sandbox_gpu_devices(av);
        argv_push(av, "--tmpfs");
        argv_push(av, "/tmp");
        char *inside = a->cwd ? covered_cwd(a) : NULL;
        /* The working directory goes first, so a bind below it is not hidden. */
        if (a->cwd && !inside) {
            argv_push3(av, "--bind", a->cwd, a->cwd);
            inside = xstrdup(a->cwd);
        }
        for (size_t i = 0; i < a->bind_count; i++) {
            const struct shim_bind *b = &a->binds[i];
            argv_push3(av, b->read_only ? "--ro-bind" : "--bind", b->src, b->dst);
        }
        if (inside) {
            argv_push(av, "--chdir");
            argv_push(av, inside);
            free(inside);
        }
        argv_push(av, "--");
    }
    argv_push(av, "/bin/sh");
    argv_push(av, "-c");
    argv_push(av, a->script);
}

/* In the forked child: becomes the worker (its own process group, output into out_w). */
static _Noreturn void exec_worker(const struct shim_args *a, char **argv, int out_w)
{
    setpgid(0, 0);
    if (dup2(out_w, STDOUT_FILENO) < 0 || dup2(out_w, STDERR_FILENO) < 0)
        _exit(EXIT_CANNOT_RUN);
    static const int sigs[] = {SIGTERM, SIGINT, SIGHUP, SIGCHLD, SIGPIPE};
    for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
        signal(sigs[i], SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);

    if (a->sandbox) {
        execvp(argv[0], argv);
        if (errno == ENOENT)
            execv("/usr/bin/bwrap", argv);
    } else {
        if (a->cwd && chdir(a->cwd) != 0) {
            dprintf(STDERR_FILENO, "trainjob-shim: %s: %s\n", a->cwd, strerror(errno));
            _exit(EXIT_CANNOT_RUN);
        }
        execv(argv[0], argv);
    }
    dprintf(STDERR_FILENO, "trainjob-shim: cannot run %s: %s\n", argv[0], strerror(errno));
    _exit(EXIT_CANNOT_RUN);
}

/* Opens (appends to) the log; returns false when it cannot. */
static bool log_open(struct shim_log *lg, bool truncate)
{
    int flags = O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | (truncate ? O_TRUNC : 0);
    lg->fd = open(lg->path, flags, 0644);
    lg->size = 0;
    if (lg->fd < 0)
        return false;
    struct stat st;
    if (fstat(lg->fd, &st) == 0 && st.st_size > 0)
        lg->size = (size_t)st.st_size;
    return true;
}

/* The log is full: it becomes log.1 and a new one starts (truncated, if the rename failed). */
static void log_rotate(struct shim_log *lg)
{
    if (lg->fd >= 0)
        close(lg->fd);
    (void)rename(lg->path, lg->rotated);
    log_open(lg, true);
}

/* Writes all of p, retrying short writes; gives up (drops the bytes) on an error. */
static void write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        p += w;
        n -= (size_t)w;
    }
}

/* Appends output to the log, rotating whenever it reaches the cap (lines may be split). */
static void log_write(struct shim_log *lg, const char *p, size_t n)
{
    while (n > 0) {
        size_t room = n;
        if (lg->cap > 0) {
            room = lg->size >= lg->cap ? 0 : lg->cap - lg->size;
            if (room == 0) {
                log_rotate(lg);
                continue;
            }
        }
        size_t k = n < room ? n : room;
        if (lg->fd >= 0)
            write_all(lg->fd, p, k);
        lg->size += k;
        p += k;
        n -= k;
    }
}

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Has the worker ended? Then kills its leftovers (its zombie keeps the group id) and reaps it. */
static bool worker_ended(pid_t pid, int *wstatus)
{
    siginfo_t si;
    memset(&si, 0, sizeof(si));
    if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) != 0 || si.si_pid != pid)
        return false;
    kill(-pid, SIGKILL);
    while (waitpid(pid, wstatus, 0) < 0 && errno == EINTR) {
    }
    return true;
}

/*
 * Copies the worker's output into the log until it has ended and its output
 * is closed (or DRAIN_MS after its end). Returns its wait status.
 */
static int supervise(pid_t pid, int out_r, int wake_r, struct shim_log *lg)
{
    static char buf[65536];
    int wstatus = 0;
    bool ended = false, eof = false;
    long long deadline = 0;
    while (!(ended && eof)) {
        int timeout = -1;
        if (ended) {
            long long left = deadline - now_ms();
            if (left <= 0)
                break;
            timeout = (int)left;
        }
        struct pollfd fds[2] = {{eof ? -1 : out_r, POLLIN, 0}, {wake_r, POLLIN, 0}};
        int r = poll(fds, 2, timeout);
        if (r < 0 && errno != EINTR) {
            /* Cannot happen in practice; copy the rest blocking rather than lose output. */
            for (;;) {
                ssize_t n = eof ? 0 : read(out_r, buf, sizeof(buf));
                if (n < 0 && errno == EINTR)
                    continue;
                if (n <= 0)
                    break;
                log_write(lg, buf, (size_t)n);
            }
            break;
        }
        if (r > 0 && (fds[1].revents & POLLIN)) {
            char drain[64];
            while (read(wake_r, drain, sizeof(drain)) > 0) {
            }
        }
        if (!ended && worker_ended(pid, &wstatus)) {
            ended = true;
            deadline = now_ms() + DRAIN_MS;
        }
        if (r > 0 && !eof && (fds[0].revents & (POLLIN | POLLHUP | POLLERR))) {
            ssize_t n = read(out_r, buf, sizeof(buf));
            if (n > 0)
                log_write(lg, buf, (size_t)n);
            else if (n == 0 || (errno != EINTR && errno != EAGAIN))
                eof = true;
        }
    }
    if (!ended) {
        while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
        }
    }
    return wstatus;
}

/* Blocks the signals the shim handles and installs its handler for them. */
static void setup_signals(sigset_t *handled)
{
    sigemptyset(handled);
    sigaddset(handled, SIGTERM);
    sigaddset(handled, SIGINT);
    sigaddset(handled, SIGHUP);
    sigaddset(handled, SIGCHLD);
    sigprocmask(SIG_BLOCK, handled, NULL);
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sa.sa_mask = *handled;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    sa.sa_flags = SA_NOCLDSTOP;
    sigaction(SIGCHLD, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
}

int main(int argc, char **argv)
{
    struct shim_args a;
    memset(&a, 0, sizeof(a));
    parse_args(argc, argv, &a);

    sigset_t handled;
    setup_signals(&handled);
    (void)setsid();

    struct shim_log lg = {a.log, xasprintf("%s.1", a.log), -1, 0, a.log_cap};
    if (!log_open(&lg, false))
        fail("cannot open the log %s: %s", a.log, strerror(errno));
    int out[2], wake[2];
    if (pipe2(out, O_CLOEXEC) != 0 || pipe2(wake, O_CLOEXEC | O_NONBLOCK) != 0)
        fail("pipe: %s", strerror(errno));
    wake_fd = wake[1];

    /* At most one start per attempt: the claim is ours, or this start was cancelled. */
    char *claim_path = xasprintf("%s.claim", a.status);
    int claim = open(claim_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (claim < 0 && errno == EEXIST)
        fail("start cancelled: %s is taken (trainjobd gave up on this start)", claim_path);
    if (claim < 0)
        fail("cannot claim the start: %s: %s", claim_path, strerror(errno));
    dprintf(claim, "%ld\n", (long)getpid());
    close(claim);
    free(claim_path);

    struct argv_buf av = {NULL, 0, 0};
    worker_argv(&a, &av);
    pid_t pid = fork();
    if (pid < 0)
        fail("fork: %s", strerror(errno));
    if (pid == 0)
        exec_worker(&a, av.v, out[1]);
    close(out[1]);
    setpgid(pid, pid); /* also done by the child: whichever runs first */
    worker_pgid = pid;

    /* The pid file, then the same line for runner_start: the worker runs. */
    char line[64];
    int len = snprintf(line, sizeof(line), "%ld %ld\n", (long)getpid(), (long)pid);
    char *pid_path = xasprintf("%s.pid", a.status);
    struct strbuf err = STRBUF_INIT;
    if (file_write_atomic(pid_path, line, (size_t)len, 0644, &err) != 0) {
        kill(-pid, SIGKILL);
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
        }
        fail("%s", strbuf_str(&err));
    }
    free(pid_path);
    write_all(STDOUT_FILENO, line, (size_t)len);
    int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (devnull >= 0) {
        dup2(devnull, STDOUT_FILENO);
        close(devnull);
    }
    sigprocmask(SIG_UNBLOCK, &handled, NULL);

    int wstatus = supervise(pid, out[0], wake[0], &lg);
    int code = 255;
    if (WIFEXITED(wstatus))
        code = WEXITSTATUS(wstatus);
    else if (WIFSIGNALED(wstatus))
        code = 128 + WTERMSIG(wstatus);

    len = snprintf(line, sizeof(line), "exit_code %d\n", code);
    if (file_write_atomic(a.status, line, (size_t)len, 0644, &err) != 0) {
        char msg[1200];
        int m = snprintf(msg, sizeof(msg), "trainjob-shim: %s\n", strbuf_str(&err));
        if (lg.fd >= 0 && m > 0)
            write_all(lg.fd, msg, (size_t)m < sizeof(msg) ? (size_t)m : sizeof(msg) - 1);
        return 1;
    }
    strbuf_free(&err);
    for (size_t i = 0; i < av.n; i++)
        free(av.v[i]);
    free(av.v);
    for (size_t i = 0; i < a.bind_count; i++) {
        free(a.binds[i].src);
        free(a.binds[i].dst);
    }
    free(a.binds);
    free(lg.rotated);
    return 0;
}
