/*
 * trainjob-shim: the small process between trainjobd and one worker.
 *
 *   trainjob-shim --status FILE --log FILE --log-cap BYTES --script-file FILE
 *                 [--cwd DIR] [--sandbox] [--bind SRC:DST[:ro]]...
 *                 [--volume NAME ROOT SUBDIR DST ro|rw]... [--cgroup DIR]...
 *   trainjob-shim --init [--ready-fd N] -- PROGRAM [ARG]...   (pid 1 in the sandbox)
 *
 * runner_start (engine/runner.c) execs it with the worker's environment as
 * its own. The startup script comes in a file (0600, written by the runner)
 * and never on a command line, where `ps` would show it to everyone. The
 * shim starts a new session (so it outlives trainjobd), starts
 * `/bin/sh SCRIPT-FILE` in a process group of its own — inside bubblewrap
 * with --sandbox — and then:
 *
 *  - claims the attempt first: creates FILE.claim with O_CREAT | O_EXCL and
 *    its pid, and starts nothing when the file is there already (trainjobd
 *    took it to cancel this start; see runner.h);
 *  - writes "<shim pid> <worker pgid> <its start ticks>\n" to FILE.pid (atomically) and the
 *    same line to its standard output, which runner_start reads to learn the
 *    worker started; a failure before that is one "error <message>" line
 *    there instead, exit status 1, and no status file;
 *  - copies the worker's stdout and stderr into the log, keeping each file at
 *    most BYTES long (0: no cap): when the log is full it becomes FILE.1
 *    (replacing the old one) and a new log starts, so at most 2 × BYTES are
 *    on disk and at least the last BYTES written are kept;
 *  - forwards SIGTERM, SIGINT and SIGHUP to the worker's process group —
 *    in the sandbox through its pid 1, so bubblewrap itself never sees them
 *    and a worker's `trap … TERM` has the whole grace period;
 *  - with --cgroup (one per cgroup hierarchy, made by engine/cgroup with the
 *    worker's limits), the worker joins each cgroup before it execs, and
 *    when it has ended whatever is left in them is killed and they are
 *    removed; a kill by the memory limit is said in the log;
 *  - when the worker's main process ends, kills what is left in its process
 *    group (as a container's leftovers die with it), copies the rest of the
 *    output (waiting at most a second for processes that escaped the group),
 *    and writes "exit_code N\n" — N the exit status, or 128 + signal — to
 *    FILE exactly once, through a temp file, fsync and rename.
 *
 * Volumes: each --volume is ROOT (the volume, from the engine's config) and
 * SUBDIR below it, which the shim opens right before the worker starts with
 * beneath_open_dir (util/beneath.c): no symlink is followed, missing
 * directories are created below the volume, and bubblewrap binds that
 * descriptor (--bind-fd), so nothing a job planted in a shared volume can
 * send the mount elsewhere. A subdir that cannot be opened so fails the
 * start ("volume scratch: subdir /evil: is a symlink; refused"), with or
 * without the sandbox.
 *
 * The sandbox: bubblewrap with a tmpfs as /, the host's /usr, /etc and /sys
 * read-only, /bin, /sbin, /lib* as the host has them (symlinks into /usr, or
 * read-only binds), a fresh /proc (its sys, sysrq-trigger, irq, bus and fs
 * read-only: uid 0 may write there without any capability), a minimal /dev
 * plus the NVIDIA devices, a tmpfs /tmp, then each --bind and --volume
 * (read-only with ro; bwrap creates the mount points; no mount path may lie
 * inside another, where a job's symlink could redirect it), and the working
 * directory: through a bind that covers it, or bound read-write at its own
 * path. The worker gets its own pid, IPC and UTS namespaces and no
 * capabilities (no_new_privs, so no setuid binary gives them back); it keeps
 * the host's network, which a local training job needs. Its pid 1 is this
 * binary again (--init, bound at /trainjob/init): it starts the script in a
 * process group, forwards SIGTERM, SIGINT and SIGHUP to it, reaps orphans,
 * and exits with the script's status — the pid namespace, and everything
 * the script left in it, ends with it. The shim learns the init's host pid
 * from bwrap's --info-fd and forwards signals to it once the init says (a
 * byte on --ready-fd) that it takes them; the kernel drops signals sent to
 * a pid 1 without a handler, so ones that come earlier wait. The script is
 * at /trainjob/startup.sh (a read-only copy). No descriptor of the shim's
 * reaches the worker: the init closes all it inherited.
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

#include "engine/cgroup.h"
#include "util/beneath.h"
#include "util/fileio.h"
#include "util/procstat.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

/* How long to keep copying output after the worker ended, for escaped writers. */
#define DRAIN_MS 1000
/* The exit code of a worker that could not be started (as the shell's "not found"). */
#define EXIT_CANNOT_RUN 127
/* Where the sandbox has the platform's files (api/validate.h VALIDATE_PLATFORM_DIR). */
#define SANDBOX_INIT "/trainjob/init"
#define SANDBOX_SCRIPT "/trainjob/startup.sh"
/* The most of a startup script the shim passes on (the API allows far less). */
#define SCRIPT_MAX (1 << 20)
/* How long the shim waits for bubblewrap to say which pid the sandbox's init has. */
#define INFO_TIMEOUT_MS 30000

/* A --bind (src a host path) or a --volume (src its root, subdir below it, opened into fd). */
struct shim_bind {
    char *src;
    char *dst;
    bool read_only;
    char *volume; /* NULL for a --bind */
    char *subdir;
    int fd; /* the resolved volume directory, inherited by bwrap; -1 otherwise */
};

struct shim_args {
    const char *status;
    const char *log;
    size_t log_cap;
    const char *cwd;
    bool sandbox;
    struct shim_bind *binds;
    size_t bind_count;
    const char **cgroups; /* directories the worker joins */
    size_t cgroup_count;
    const char *script_file;
    /* Inherited by bwrap only (not close-on-exec; closed by the shim once it started): */
    int script_fd; /* the script file, copied into the sandbox */
    int exe_fd;    /* this binary, the sandbox's init */
    int info_w;    /* bwrap --info-fd: the host pid of the sandbox's pid 1 */
    int info_r;
    int ready_w; /* the init writes one byte once it takes signals */
    int ready_r;
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

/*
 * Read by the signal handler: where termination signals go (-pgid: the
 * worker's process group; a pid: the sandbox's init; 0: nowhere, the worker
 * ended), and where to wake the loop.
 */
static volatile sig_atomic_t forward_to;
static int wake_fd = -1;
/*
 * In the sandbox: has its init said it takes signals (a byte on ready_fd,
 * which raises SIGIO)? Until then the kernel would drop a signal sent to a
 * pid 1 without a handler, so forwarded ones wait in pending_sigs (a bit
 * per signal) and go when it is ready.
 */
static volatile sig_atomic_t init_ready = 1;
static volatile sig_atomic_t pending_sigs;
static int ready_fd = -1;

/* The bit for a forwarded signal in pending_sigs. */
static int pending_bit(int sig)
{
    return sig == SIGTERM ? 1 : sig == SIGINT ? 2 : 4;
}
/* The script file, removed on every way out (it is only ever read once). */
static const char *script_to_remove;

/*
 * Forwards termination signals to the worker (held back until the sandbox's
 * init is ready: SIGIO from the ready pipe); SIGCHLD wakes the main loop.
 */
static void on_signal(int sig)
{
    int saved = errno;
    if (sig == SIGCHLD) {
        if (wake_fd >= 0 && write(wake_fd, "c", 1) < 0) {
            /* the pipe is full: the loop is awake already */
        }
    } else if (sig == SIGIO) {
        char c;
        /* A byte: ready. End of file: bwrap ended without it; nothing to wait for. */
        if (!init_ready && ready_fd >= 0 && (read(ready_fd, &c, 1) >= 0 || errno != EAGAIN)) {
            init_ready = 1;
            static const int sigs[] = {SIGTERM, SIGINT, SIGHUP};
            for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
                if ((pending_sigs & pending_bit(sigs[i])) && forward_to != 0)
                    kill((pid_t)forward_to, sigs[i]);
            pending_sigs = 0;
        }
    } else if (!init_ready) {
        pending_sigs |= pending_bit(sig);
    } else if (forward_to != 0) {
        kill((pid_t)forward_to, sig);
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
    if (script_to_remove)
        unlink(script_to_remove);
    dprintf(STDOUT_FILENO, "error %s\n", msg);
    dprintf(STDERR_FILENO, "trainjob-shim: %s\n", msg);
    exit(1);
}

static _Noreturn void usage(const char *why)
{
    fail("%s\nusage: trainjob-shim --status FILE --log FILE --log-cap BYTES --script-file FILE "
         "[--cwd DIR] [--sandbox] [--bind SRC:DST[:ro]]... "
         "[--volume NAME ROOT SUBDIR DST ro|rw]... [--cgroup DIR]...",
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
    b->volume = NULL;
    b->subdir = NULL;
    b->fd = -1;
    return true;
}

/* NAME ROOT SUBDIR DST MODE into a volume bind; ROOT and DST absolute, MODE ro or rw. */
static bool parse_volume(char **v, struct shim_bind *b)
{
    if (!v[0][0] || v[1][0] != '/' || v[3][0] != '/' ||
        (strcmp(v[4], "ro") != 0 && strcmp(v[4], "rw") != 0))
        return false;
    b->volume = xstrdup(v[0]);
    b->src = xstrdup(v[1]);
    b->subdir = xstrdup(v[2]);
    b->dst = xstrdup(v[3]);
    b->read_only = strcmp(v[4], "ro") == 0;
    b->fd = -1;
    return true;
}

/* Reads the command line into a; exits with a usage message when it is wrong. */
static void parse_args(int argc, char **argv, struct shim_args *a)
{
    bool have_cap = false;
    for (int i = 1; i < argc; i++) {
        const char *opt = argv[i];
        if (strcmp(opt, "--sandbox") == 0) {
            a->sandbox = true;
            continue;
        }
        if (strcmp(opt, "--volume") == 0) {
            if (i + 5 >= argc)
                usage("--volume needs NAME ROOT SUBDIR DST ro|rw");
            a->binds = xreallocarray(a->binds, a->bind_count + 1, sizeof(*a->binds));
            if (!parse_volume(argv + i + 1, &a->binds[a->bind_count]))
                usage("--volume needs NAME /ROOT SUBDIR /DST ro|rw");
            a->bind_count++;
            i += 5;
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
        } else if (strcmp(opt, "--script-file") == 0) {
            a->script_file = val;
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
        } else if (strcmp(opt, "--cgroup") == 0) {
            if (val[0] != '/')
                usage("--cgroup needs an absolute directory");
            a->cgroups = xreallocarray(a->cgroups, a->cgroup_count + 1, sizeof(*a->cgroups));
            a->cgroups[a->cgroup_count++] = val;
        } else {
            usage("unknown option");
        }
    }
    if (!a->status || !a->log || !have_cap || !a->script_file)
        usage("--status, --log, --log-cap and --script-file are required");
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
        if (a->binds[i].volume)
            continue; /* bound by descriptor: its path is not what the worker sees */
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

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Pushes "--OPT N" for a descriptor. */
static void argv_push_fd(struct argv_buf *av, const char *opt, int fd)
{
    char num[16];
    snprintf(num, sizeof(num), "%d", fd);
    argv_push(av, opt);
    argv_push(av, num);
}

/*
 * Parts of a fresh /proc that uid 0 may write without any capability
 * (kernel.core_pattern runs a program as root on the host; sysrq-trigger
 * crashes it): bound read-only over themselves.
 */
static void sandbox_proc_read_only(struct argv_buf *av)
{
    static const char *const dirs[] = {"/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus",
                                       "/proc/fs"};
    for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
        argv_push3(av, "--ro-bind-try", dirs[i], dirs[i]);
}

/* The command that runs the worker: /bin/sh SCRIPT-FILE, or bwrap and our init around it. */
static void worker_argv(const struct shim_args *a, struct argv_buf *av)
{
    if (!a->sandbox) {
        argv_push(av, "/bin/sh");
        argv_push(av, a->script_file);
        return;
    }
    argv_push(av, "bwrap");
    argv_push(av, "--die-with-parent");
    /* Its own pids (no host process to see or signal), IPC and host name; the host's network. */
    argv_push(av, "--unshare-pid");
    argv_push(av, "--unshare-ipc");
    argv_push(av, "--unshare-uts");
    argv_push(av, "--as-pid-1");
    /* trainjobd runs as root here and there: root without capabilities in the sandbox. */
    argv_push(av, "--cap-drop");
    argv_push(av, "ALL");
    argv_push_fd(av, "--info-fd", a->info_w);
    argv_push(av, "--tmpfs");
    argv_push(av, "/");
    argv_push3(av, "--ro-bind", "/usr", "/usr");
    argv_push3(av, "--ro-bind", "/etc", "/etc");
    sandbox_system_dirs(av);
    argv_push3(av, "--ro-bind-try", "/sys", "/sys");
    argv_push3(av, "--ro-bind-try", "/run/systemd/resolve", "/run/systemd/resolve");
    argv_push(av, "--proc");
    argv_push(av, "/proc");
    sandbox_proc_read_only(av);
    argv_push(av, "--dev");
    argv_push(av, "/dev");
    sandbox_gpu_devices(av);
    argv_push(av, "--tmpfs");
    argv_push(av, "/tmp");
    argv_push_fd(av, "--ro-bind-fd", a->exe_fd);
    argv_push(av, SANDBOX_INIT);
    argv_push_fd(av, "--ro-bind-data", a->script_fd);
    argv_push(av, SANDBOX_SCRIPT);
    char *inside = a->cwd ? covered_cwd(a) : NULL;
    /* The working directory goes first, so a bind below it is not hidden. */
    if (a->cwd && !inside) {
        argv_push3(av, "--bind", a->cwd, a->cwd);
        inside = xstrdup(a->cwd);
    }
    for (size_t i = 0; i < a->bind_count; i++) {
        const struct shim_bind *b = &a->binds[i];
        if (b->volume) {
            argv_push_fd(av, b->read_only ? "--ro-bind-fd" : "--bind-fd", b->fd);
            argv_push(av, b->dst);
        } else {
            argv_push3(av, b->read_only ? "--ro-bind" : "--bind", b->src, b->dst);
        }
    }
    if (inside) {
        argv_push(av, "--chdir");
        argv_push(av, inside);
        free(inside);
    }
    argv_push(av, "--");
    argv_push(av, SANDBOX_INIT);
    argv_push(av, "--init");
    argv_push_fd(av, "--ready-fd", a->ready_w);
    argv_push(av, "--");
    argv_push(av, "/bin/sh");
    argv_push(av, SANDBOX_SCRIPT);
}

/* Is the absolute path p equal to or below base? Both compared component by component. */
static bool path_within(const char *p, const char *base)
{
    for (;;) {
        while (*p == '/' || (p[0] == '.' && (p[1] == '/' || p[1] == '\0')))
            p++;
        while (*base == '/' || (base[0] == '.' && (base[1] == '/' || base[1] == '\0')))
            base++;
        if (*base == '\0')
            return true;
        size_t lp = strcspn(p, "/"), lb = strcspn(base, "/");
        if (lp != lb || memcmp(p, base, lp) != 0)
            return false;
        p += lp;
        base += lb;
    }
}

/*
 * Refuses a mount path inside another: bubblewrap would create it through
 * what is mounted there first, where a job can plant a symlink that sends
 * the mkdir and the bind anywhere on the host.
 */
static void check_mount_paths(const struct shim_args *a)
{
    size_t n = a->bind_count;
    const char **dst = xcalloc(n + 3, sizeof(*dst));
    for (size_t i = 0; i < n; i++)
        dst[i] = a->binds[i].dst;
    dst[n++] = SANDBOX_INIT;
    dst[n++] = SANDBOX_SCRIPT;
    char *inside = a->cwd ? covered_cwd(a) : NULL;
    if (a->cwd && !inside)
        dst[n++] = a->cwd;
    free(inside);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++)
            if (i != j && path_within(dst[i], dst[j]))
                fail("cannot mount %s: %s %s; one mount path may not lie inside another", dst[i],
                     path_within(dst[j], dst[i]) ? "the same path as" : "inside", dst[j]);
    free(dst);
}

/*
 * Opens each volume's subdirectory below its root (util/beneath.c), creating
 * what is missing, and keeps the descriptor for bwrap (not close-on-exec).
 * Without the sandbox the check alone matters: the descriptors are closed.
 */
static void resolve_volumes(struct shim_args *a)
{
    for (size_t i = 0; i < a->bind_count; i++) {
        struct shim_bind *b = &a->binds[i];
        if (!b->volume)
            continue;
        int root = open(b->src, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (root < 0)
            fail("volume %s: %s: %s", b->volume, b->src, strerror(errno));
        struct strbuf why = STRBUF_INIT;
        int fd = beneath_open_dir(root, b->subdir, true, &why);
        close(root);
        if (fd < 0)
            fail("volume %s: subdir %s: %s; refused", b->volume, b->subdir, strbuf_str(&why));
        strbuf_free(&why);
        if (a->sandbox) {
            b->fd = fcntl(fd, F_DUPFD, 3); /* the same directory, inherited by bwrap */
            if (b->fd < 0)
                fail("volume %s: %s", b->volume, strerror(errno));
        }
        close(fd);
    }
}

/*
 * The script file: a regular file of ours that nobody else may read or
 * write. In the sandbox it is copied in from a descriptor (so the file can go
 * at once); without, sh reads it by name and it goes when the worker ends.
 */
static void open_script(struct shim_args *a)
{
    script_to_remove = a->script_file;
    int fd = open(a->script_file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0)
        fail("script %s: %s", a->script_file, strerror(errno));
    if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077) != 0 ||
        st.st_size > SCRIPT_MAX)
        fail("script %s: not a private file of ours (0600, at most %d bytes)", a->script_file,
             SCRIPT_MAX);
    if (!a->sandbox) {
        close(fd);
        return;
    }
    a->script_fd = fcntl(fd, F_DUPFD, 3);
    close(fd);
    if (a->script_fd < 0)
        fail("script: %s", strerror(errno));
    unlink(a->script_file);
    script_to_remove = NULL;
}

/* What the sandbox needs besides the volumes: this binary as its init, the info and ready pipes. */
static void open_sandbox_fds(struct shim_args *a)
{
    int exe = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    int info[2], ready[2];
    if (exe < 0 || pipe2(info, O_CLOEXEC) != 0 || pipe2(ready, O_CLOEXEC) != 0)
        fail("sandbox: %s", strerror(errno));
    a->exe_fd = fcntl(exe, F_DUPFD, 3);
    a->info_w = fcntl(info[1], F_DUPFD, 3);
    a->ready_w = fcntl(ready[1], F_DUPFD, 3);
    a->info_r = info[0];
    a->ready_r = ready[0];
    /* The init's byte raises SIGIO here (blocked until the worker has started). */
    if (fcntl(a->ready_r, F_SETOWN, getpid()) != 0 ||
        fcntl(a->ready_r, F_SETFL, O_ASYNC | O_NONBLOCK) != 0)
        fail("sandbox: %s", strerror(errno));
    ready_fd = a->ready_r;
    close(exe);
    close(info[1]);
    close(ready[1]);
    if (a->exe_fd < 0 || a->info_w < 0 || a->ready_w < 0)
        fail("sandbox: %s", strerror(errno));
}

/* In the shim once the worker was forked: what only bwrap needed is closed. */
static void close_child_fds(struct shim_args *a)
{
    for (size_t i = 0; i < a->bind_count; i++) {
        if (a->binds[i].fd >= 0)
            close(a->binds[i].fd);
        a->binds[i].fd = -1;
    }
    int *fds[] = {&a->script_fd, &a->exe_fd, &a->info_w, &a->ready_w};
    for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
        if (*fds[i] >= 0)
            close(*fds[i]);
        *fds[i] = -1;
    }
}

/*
 * The host pid of the sandbox's pid 1, from bwrap's --info-fd
 * ({"child-pid": N, …}), or 0 when bwrap ended without saying. bwrap
 * writes it right after its clone; the caller keeps fd open, so the rest
 * bwrap writes never meets a closed pipe (SIGPIPE would kill bwrap).
 */
static pid_t read_init_pid(int fd)
{
    char buf[1024];
    size_t len = 0;
    long long deadline = now_ms() + INFO_TIMEOUT_MS;
    for (;;) {
        buf[len] = '\0';
        const char *key = strstr(buf, "\"child-pid\":");
        if (key) {
            char *end;
            long pid = strtol(key + 12, &end, 10);
            if (*end != '\0' && end != key + 12)
                return pid > 0 && pid <= INT32_MAX ? (pid_t)pid : 0;
        }
        long long left = deadline - now_ms();
        struct pollfd p = {fd, POLLIN, 0};
        if (len + 1 >= sizeof(buf) || left <= 0 || (poll(&p, 1, (int)left) < 0 && errno != EINTR))
            return 0;
        ssize_t n = read(fd, buf + len, sizeof(buf) - 1 - len);
        if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN))
            return 0;
        if (n > 0)
            len += (size_t)n;
    }
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
    /* Into the worker's cgroups before it runs: its limits hold from its first instruction. */
    for (size_t i = 0; i < a->cgroup_count; i++) {
        if (cgroup_join(a->cgroups[i]) != 0) {
            dprintf(STDERR_FILENO, "trainjob-shim: cannot join the worker's cgroup %s: %s\n",
                    a->cgroups[i], strerror(errno));
            _exit(EXIT_CANNOT_RUN);
        }
    }

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

/* Has the worker ended? Then kills its leftovers (its zombie keeps the group id) and reaps it. */
static bool worker_ended(pid_t pid, int *wstatus)
{
    siginfo_t si;
    memset(&si, 0, sizeof(si));
    if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) != 0 || si.si_pid != pid)
        return false;
    forward_to = 0;
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

/*
 * After the worker: says in the log when the memory limit killed something,
 * then kills what is left in the worker's cgroups and removes them.
 */
static void end_cgroups(const struct shim_args *a, struct shim_log *lg)
{
    bool oom = false;
    for (size_t i = 0; i < a->cgroup_count; i++)
        oom |= cgroup_oom_killed(a->cgroups[i]);
    if (oom) {
        static const char msg[] = "trainjob-shim: the worker reached the memory limit of its "
                                  "resource spec; the kernel killed a process of it with SIGKILL "
                                  "(exit code 137 when it was the worker itself)\n";
        log_write(lg, msg, sizeof msg - 1);
    }
    for (size_t i = 0; i < a->cgroup_count; i++)
        cgroup_kill_remove(a->cgroups[i]);
}

/* Blocks the signals the shim handles and installs its handler for them. */
static void setup_signals(sigset_t *handled)
{
    sigemptyset(handled);
    sigaddset(handled, SIGTERM);
    sigaddset(handled, SIGINT);
    sigaddset(handled, SIGHUP);
    sigaddset(handled, SIGCHLD);
    sigaddset(handled, SIGIO);
    sigprocmask(SIG_BLOCK, handled, NULL);
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sa.sa_mask = *handled;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    sigaction(SIGIO, &sa, NULL);
    sa.sa_flags = SA_NOCLDSTOP;
    sigaction(SIGCHLD, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
}

/* ---- --init: pid 1 inside the sandbox ---------------------------------- */

/* Only there so that pid 1 is sure to receive these from the host; sigwaitinfo takes them. */
static void on_init_signal(int sig)
{
    (void)sig;
}

/*
 * The sandbox's pid 1: closes every descriptor it inherited, starts PROGRAM
 * in a process group of its own, forwards SIGTERM, SIGINT and SIGHUP to that
 * group, reaps every orphan, and exits with PROGRAM's status (128 + signal
 * for a signal death) — which ends the pid namespace and all left in it.
 */
static int init_main(int argc, char **argv)
{
    int ready = -1;
    int first = 2;
    if (argc > 3 && strcmp(argv[2], "--ready-fd") == 0) {
        ready = atoi(argv[3]);
        first = 4;
    }
    if (argc < first + 2 || strcmp(argv[first], "--") != 0) {
        dprintf(STDERR_FILENO, "usage: trainjob-shim --init [--ready-fd N] -- PROGRAM [ARG]...\n");
        return EXIT_CANNOT_RUN;
    }
    char **prog = argv + first + 1;
    static const int sigs[] = {SIGTERM, SIGINT, SIGHUP, SIGCHLD};
    sigset_t set;
    sigemptyset(&set);
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_init_signal;
    for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
        sigaddset(&set, sigs[i]);
        sigaction(sigs[i], &sa, NULL);
    }
    sigprocmask(SIG_BLOCK, &set, NULL);
    /* Signals are taken now: the shim may forward them (its SIGIO, see on_signal). */
    if (ready > 2 && write(ready, "r", 1) != 1) {
        /* the shim is gone or gave up waiting: nothing to tell */
    }
    if (close_range(3, ~0U, 0) != 0) {
        for (int fd = 3; fd < 65536; fd++)
            close(fd);
    }
    pid_t child = fork();
    if (child < 0) {
        dprintf(STDERR_FILENO, "trainjob-shim: init: fork: %s\n", strerror(errno));
        return EXIT_CANNOT_RUN;
    }
    if (child == 0) {
        setpgid(0, 0);
        for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
            signal(sigs[i], SIG_DFL);
        sigprocmask(SIG_UNBLOCK, &set, NULL);
        execv(prog[0], prog);
        dprintf(STDERR_FILENO, "trainjob-shim: cannot run %s: %s\n", prog[0], strerror(errno));
        _exit(EXIT_CANNOT_RUN);
    }
    setpgid(child, child); /* also done by the child: whichever runs first */
    for (;;) {
        int sig = sigwaitinfo(&set, NULL);
        if (sig < 0)
            continue;
        if (sig != SIGCHLD) {
            if (kill(-child, sig) != 0)
                kill(child, sig);
            continue;
        }
        int st;
        pid_t p;
        while ((p = waitpid(-1, &st, WNOHANG)) > 0 || (p < 0 && errno == EINTR)) {
            if (p != child)
                continue;
            if (WIFEXITED(st))
                return WEXITSTATUS(st);
            return WIFSIGNALED(st) ? 128 + WTERMSIG(st) : 255;
        }
    }
}

/* Could this write failure pass (a full disk, a quota, a flaky device)? */
static bool transient(int err)
{
    return err == ENOSPC || err == EDQUOT || err == EIO || err == ENOMEM || err == EAGAIN ||
           err == EMFILE || err == ENFILE || err == EINTR;
}

/*
 * Writes the status file, retrying with a growing pause (0.1 s doubling to
 * 5 s): for as long as the disk is full (or another failure that passes),
 * about a minute for any other. A full disk must not turn the worker's end
 * into "shim gone without a word" (137). Until it lands, the shim lives on
 * and the exit status stays in memory; the first failure goes to the log.
 * Returns false when it gave up.
 */
static bool write_status(const char *path, const char *line, size_t len, struct shim_log *lg)
{
    long pause_ms = 100;
    bool told = false;
    for (int attempt = 0;; attempt++) {
        struct strbuf err = STRBUF_INIT;
        int rc = file_write_atomic(path, line, len, 0644, &err);
        int why = errno;
        if (rc == 0 || why == ENOENT) {
            strbuf_free(&err); /* written, or its directory is gone with the job */
            return rc == 0;
        }
        if (!transient(why) && attempt >= 15) {
            strbuf_free(&err);
            return false;
        }
        if (!told && lg->fd >= 0) {
            char msg[1200];
            int m = snprintf(msg, sizeof(msg), "trainjob-shim: %s (retrying until it can)\n",
                             strbuf_str(&err));
            if (m > 0)
                write_all(lg->fd, msg, (size_t)m < sizeof(msg) ? (size_t)m : sizeof(msg) - 1);
            told = true;
        }
        strbuf_free(&err);
        struct timespec ts = {pause_ms / 1000, (pause_ms % 1000) * 1000000L};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
        }
        if (pause_ms < 5000)
            pause_ms *= 2;
    }
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--init") == 0)
        return init_main(argc, argv);
    struct shim_args a;
    memset(&a, 0, sizeof(a));
    a.script_fd = a.exe_fd = a.info_w = a.info_r = a.ready_w = a.ready_r = -1;
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

    open_script(&a);
    if (a.sandbox)
        check_mount_paths(&a);
    resolve_volumes(&a);
    if (a.sandbox)
        open_sandbox_fds(&a);
    struct argv_buf av = {NULL, 0, 0};
    worker_argv(&a, &av);
    pid_t pid = fork();
    if (pid < 0)
        fail("fork: %s", strerror(errno));
    if (pid == 0)
        exec_worker(&a, av.v, out[1]);
    close(out[1]);
    close_child_fds(&a);
    setpgid(pid, pid); /* also done by the child: whichever runs first */
    forward_to = -pid;

    /*
     * The pid file, then the same line for runner_start: the worker runs.
     * The worker is our child, unreaped: its start time is still there to
     * read, and tells its group apart from a later one with the same number.
     */
    struct procstat st;
    unsigned long long ticks = procstat_read(pid, &st) == 0 ? st.start_ticks : 0;
    char line[96];
    int len = snprintf(line, sizeof(line), "%ld %ld %llu\n", (long)getpid(), (long)pid, ticks);
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
    if (a.sandbox) {
        /*
         * Signals go to the sandbox's init, never to bwrap: it would die and
         * take all with it. Until they can go there they wait, blocked.
         */
        pid_t init = read_init_pid(a.info_r);
        if (init > 0) {
            forward_to = init;
            init_ready = 0; /* until its byte comes (SIGIO is still blocked) */
            raise(SIGIO);   /* in case the byte is there already */
        }
        /* info_r and ready_r stay open until the shim exits. */
    }
    sigprocmask(SIG_UNBLOCK, &handled, NULL);

    int wstatus = supervise(pid, out[0], wake[0], &lg);
    if (script_to_remove)
        unlink(script_to_remove);
    int code = 255;
    if (WIFEXITED(wstatus))
        code = WEXITSTATUS(wstatus);
    else if (WIFSIGNALED(wstatus))
        code = 128 + WTERMSIG(wstatus);
    end_cgroups(&a, &lg);

    len = snprintf(line, sizeof(line), "exit_code %d\n", code);
    if (!write_status(a.status, line, (size_t)len, &lg))
        return 1;
    for (size_t i = 0; i < av.n; i++)
        free(av.v[i]);
    free(av.v);
    for (size_t i = 0; i < a.bind_count; i++) {
        free(a.binds[i].src);
        free(a.binds[i].dst);
        free(a.binds[i].volume);
        free(a.binds[i].subdir);
    }
    free(a.binds);
    free(a.cgroups);
    free(lg.rotated);
    return 0;
}
