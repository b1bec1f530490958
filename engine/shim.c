/*
 * trainjob-shim: the small process between trainjobd and one worker.
 *
 *   trainjob-shim --status FILE --log FILE --log-cap BYTES (--script-fd N | --script-file FILE)
 *                 [--cwd DIR] [--sandbox] [--bwrap PATH] [--user UID:GID[:GID,...]]
 *                 [--bind SRC:DST[:ro]]... [--volume NAME ROOT SUBDIR DST ro|rw]...
 *                 [--cgroup DIR]...
 *   trainjob-shim --init [--ready-fd N] [--user UID:GID[:GID,...]] -- PROGRAM [ARG]...
 *                 (pid 1 in the sandbox)
 *   trainjob-shim --exec --leader PID --ticks START WORKER
 *                 (a command inside a running worker: shim_exec.c)
 *
 * runner_start (engine/runner.c) execs it with the worker's environment as
 * its own. The startup script comes as descriptor N (an anonymous memory
 * file, 0600, written and sealed by the runner: nothing is created on disk
 * for it) or in a file (0600, removed once read), never on a command line,
 * where `ps` would show it to everyone. The
 * shim starts a new session (so it outlives trainjobd), starts
 * `/bin/sh SCRIPT-FILE` in a process group of its own — inside bubblewrap
 * with --sandbox — and then:
 *
 *  - claims the attempt first: creates FILE.claim with O_CREAT | O_EXCL and
 *    its pid, and starts nothing when the file is there already (trainjobd
 *    took it to cancel this start; see runner.h);
 *  - writes "<shim pid> <worker pgid> <its start ticks>\n" to FILE.pid (atomically) and the
 *    same line to its standard output, which runner_start reads to learn the
 *    worker started — once its program runs: the forked child's exec
 *    succeeded (a close-on-exec pipe), and in the sandbox its init said it
 *    is ready, so bwrap made every mount; a failure before that (bwrap's
 *    "Can't find source path" for a subdir removed since the shim opened
 *    it, say) is one "error <message>" line there instead, exit status 1,
 *    no status file, and the worker's cgroups removed;
 *  - copies the worker's stdout and stderr into the log, keeping each file at
 *    most BYTES long (0: no cap): when the log is full it becomes FILE.1
 *    (replacing the old one) and a new log starts, so at most 2 × BYTES are
 *    on disk and at least the last BYTES written are kept;
 *  - forwards SIGTERM, SIGINT and SIGHUP to the worker's process group —
 *    in the sandbox through its pid 1, so bubblewrap itself never sees them
 *    and a worker's `trap … TERM` has the whole grace period;
 *  - with --cgroup (one per cgroup hierarchy, made by engine/cgroup with the
 *    worker's limits), the worker joins each cgroup before it execs, and
 *    when it has ended whatever is left in them is killed (trainjobd
 *    removes them when it records the end — or, with --engine-lock FILE, the
 *    shim does when no engine holds that lock then: stopped while the worker
 *    ran, none would); a kill by the memory limit is
 *    said in the log;
 *  - when the worker's main process ends, kills what is left in its process
 *    group (as a container's leftovers die with it), copies the rest of the
 *    output (waiting at most a second for processes that escaped the group),
 *    and writes "exit_code N\n" — N the exit status, or 128 + signal — to
 *    FILE exactly once, through a temp file, fsync and rename.
 *
 * With --user (trainjobd runs as root), the worker never does: the shim
 * does root's part — cgroups, the log and status files, opening volumes,
 * binds and the working directory as descriptors — and the worker's
 * process takes the groups, gid and uid (each checked) before its program;
 * in the sandbox bwrap keeps only CAP_SETUID and CAP_SETGID for the init,
 * which drops so before it says it is ready. Volume subdirs are opened and
 * created with the user's file-system ids (shim_act_as).
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
 * The sandbox: bubblewrap (--bwrap, found by trainjobd, never from a job's
 * PATH) with a tmpfs as /, the host's /usr read-only, the files of /etc a
 * program needs (never /etc whole: shadow, gshadow, ssl/private), /sys
 * read-only without /sys/fs/cgroup, /sys/firmware and /sys/kernel/debug,
 * /bin, /sbin, /lib* as the host has them (symlinks into /usr, or
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
 * a pid 1 without a handler, so ones that come earlier wait (blocked until
 * then: the shim reports the start only after that byte). The script is
 * at /trainjob/startup.sh (a read-only copy). No descriptor of the shim's
 * reaches the worker: the init closes all it inherited.
 *
 * The parts (one binary, sharing engine/shim_priv.h): this file parses the
 * arguments, starts and supervises the worker and forwards signals;
 * shim_sandbox.c builds bubblewrap's command line and checks the mounts;
 * shim_log.c writes the capped log and the status file; shim_init.c is
 * --init.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "engine/cgroup.h"
#include "engine/shim_priv.h"
#include "engine/statelock.h"
#include "util/beneath.h"
#include "util/fileio.h"
#include "util/procstat.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

/*
 * Read by the signal handler: where termination signals go (-pgid: the
 * worker's process group; a pid: the sandbox's init; 0: nowhere, the worker
 * ended), and where to wake the loop.
 */
static volatile sig_atomic_t forward_to;
static int wake_fd = -1;
/* The script file, removed on every way out (it is only ever read once). */
static const char *script_to_remove;
/* The worker's cgroups, removed when the start fails (shim_fail): nothing runs in them. */
static const char *const *cgroups_to_remove;
static size_t cgroups_to_remove_count;

/* Forwards termination signals to the worker; SIGCHLD wakes the main loop. */
static void on_signal(int sig)
{
    int saved = errno;
    if (sig == SIGCHLD) {
        if (wake_fd >= 0 && write(wake_fd, "c", 1) < 0) {
            /* the pipe is full: the loop is awake already */
        }
    } else if (forward_to != 0) {
        kill((pid_t)forward_to, sig);
    }
    errno = saved;
}

/* Gives up before the worker started: one "error …" line for runner_start, exit 1. */
_Noreturn void shim_fail(const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (script_to_remove)
        unlink(script_to_remove);
    for (size_t i = 0; i < cgroups_to_remove_count; i++)
        cgroup_kill_remove(cgroups_to_remove[i]);
    dprintf(STDOUT_FILENO, "error %s\n", msg);
    dprintf(STDERR_FILENO, "trainjob-shim: %s\n", msg);
    exit(1);
}

static _Noreturn void usage(const char *why)
{
    shim_fail("%s\nusage: trainjob-shim --status FILE --log FILE --log-cap BYTES "
              "(--script-fd N | --script-file FILE) "
              "[--cwd DIR] [--sandbox] [--bwrap PATH] [--user UID:GID[:GID,...]] "
              "[--bind SRC:DST[:ro]]... [--volume NAME ROOT SUBDIR DST ro|rw]... [--cgroup DIR]...",
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

/* A decimal id for --user (not -1, which the kernel reads as "unchanged"). */
static bool parse_id(const char *s, size_t len, unsigned *out)
{
    unsigned long long v = 0;
    if (len == 0 || len > 10)
        return false;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (unsigned)(s[i] - '0');
    }
    if (v >= 0xffffffffULL)
        return false;
    *out = (unsigned)v;
    return true;
}

/* UID:GID[:G1,G2,...] into u; uid 0 is refused (the point is not to be root). */
bool shim_parse_user(const char *text, struct shim_user *u)
{
    unsigned id;
    size_t len = strcspn(text, ":");
    if (!parse_id(text, len, &id) || id == 0 || text[len] != ':')
        return false;
    u->uid = (uid_t)id;
    text += len + 1;
    len = strcspn(text, ":");
    if (!parse_id(text, len, &id))
        return false;
    u->gid = (gid_t)id;
    text += len;
    u->group_count = 0;
    if (*text == ':') {
        text++;
        while (*text) {
            len = strcspn(text, ",");
            if (u->group_count == GROUPS_MAX || !parse_id(text, len, &id))
                return false;
            u->groups[u->group_count++] = (gid_t)id;
            text += len;
            if (*text == ',')
                text++;
        }
    }
    u->drop = true;
    return true;
}

/*
 * Checks file access as the worker's user (set) or as the shim again
 * (!set): its groups, then the file-system gid and uid, each checked.
 * Nothing without --user. A failure to go back ends the shim.
 */
void shim_act_as(const struct shim_user *u, bool set)
{
    if (!u->drop)
        return;
    static gid_t saved[GROUPS_MAX];
    static int saved_count = -1;
    if (set) {
        saved_count = getgroups(GROUPS_MAX, saved);
        if (saved_count < 0 || setgroups(u->group_count, u->groups) != 0)
            shim_fail("cannot take the worker's groups: %s", strerror(errno));
        setfsgid(u->gid);
        setfsuid(u->uid);
        if ((uid_t)setfsuid((uid_t)-1) != u->uid || (gid_t)setfsgid((gid_t)-1) != u->gid)
            shim_fail("cannot act as uid %ld gid %ld", (long)u->uid, (long)u->gid);
    } else {
        setfsuid(geteuid());
        setfsgid(getegid());
        if ((uid_t)setfsuid((uid_t)-1) != geteuid() ||
            setgroups(saved_count > 0 ? (size_t)saved_count : 0, saved) != 0)
            shim_fail("cannot act as the shim again: %s", strerror(errno));
    }
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
        } else if (strcmp(opt, "--script-fd") == 0) {
            char *end;
            errno = 0;
            long fd = strtol(val, &end, 10);
            if (errno || end == val || *end || fd < 3 || fd > INT_MAX)
                usage("--script-fd needs a descriptor number of 3 or more");
            a->script_in = (int)fd;
        } else if (strcmp(opt, "--bwrap") == 0) {
            if (val[0] != '/')
                usage("--bwrap needs an absolute path");
            a->bwrap = val;
        } else if (strcmp(opt, "--user") == 0) {
            if (!shim_parse_user(val, &a->user))
                usage("--user needs UID:GID[:GID,...], numbers, UID not 0");
            a->user_arg = val;
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
        } else if (strcmp(opt, "--engine-lock") == 0) {
            if (val[0] != '/')
                usage("--engine-lock needs an absolute file");
            a->engine_lock = val;
        } else {
            usage("unknown option");
        }
    }
    if (!a->status || !a->log || !have_cap || (!a->script_file == (a->script_in < 0)))
        usage("--status, --log, --log-cap and one of --script-fd and --script-file are required");
}

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * The script: a regular file of ours that nobody else may read or write,
 * given as a descriptor (--script-fd) or by name (--script-file). In the
 * sandbox it is copied in from a descriptor (so a named file can go at
 * once); without, sh reads it through /proc/self/fd, or a named file of
 * trainjobd's own user by name (it goes when the worker ends).
 */
static void open_script(struct shim_args *a)
{
    const char *what = a->script_file ? a->script_file : "descriptor";
    int fd = a->script_in;
    if (a->script_file) {
        script_to_remove = a->script_file;
        fd = open(a->script_file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    }
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0)
        shim_fail("script %s: %s", what, strerror(errno));
    if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077) != 0 ||
        st.st_size > SCRIPT_MAX)
        shim_fail("script %s: not a private file of ours (0600, at most %d bytes)", what,
                  SCRIPT_MAX);
    /* bwrap copies it from the descriptor's offset, which the runner's write left at the end. */
    if (lseek(fd, 0, SEEK_SET) != 0)
        shim_fail("script %s: %s", what, strerror(errno));
    if (!a->sandbox && !a->user.drop && a->script_file) {
        close(fd);
        return;
    }
    if (!a->sandbox && a->user.drop) {
        /* sh reads it as the worker's user, through a descriptor (the path may be out of reach). */
        if (fchown(fd, a->user.uid, a->user.gid) != 0)
            shim_fail("script %s: %s", what, strerror(errno));
    }
    a->script_fd = fcntl(fd, F_DUPFD, 3);
    close(fd);
    a->script_in = -1;
    if (a->script_fd < 0)
        shim_fail("script: %s", strerror(errno));
    if (a->sandbox && a->script_file) {
        unlink(a->script_file);
        script_to_remove = NULL;
    }
}

/* What the sandbox needs besides the volumes: this binary as its init, the info and ready pipes. */
static void open_sandbox_fds(struct shim_args *a)
{
    int exe = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    int info[2], ready[2];
    if (exe < 0 || pipe2(info, O_CLOEXEC) != 0 || pipe2(ready, O_CLOEXEC) != 0)
        shim_fail("sandbox: %s", strerror(errno));
    a->exe_fd = fcntl(exe, F_DUPFD, 3);
    a->info_w = fcntl(info[1], F_DUPFD, 3);
    a->ready_w = fcntl(ready[1], F_DUPFD, 3);
    a->info_r = info[0];
    a->ready_r = ready[0];
    /* The init's byte says it takes signals (await_init). */
    if (fcntl(a->ready_r, F_SETFL, O_NONBLOCK) != 0)
        shim_fail("sandbox: %s", strerror(errno));
    close(exe);
    close(info[1]);
    close(ready[1]);
    if (a->exe_fd < 0 || a->info_w < 0 || a->ready_w < 0)
        shim_fail("sandbox: %s", strerror(errno));
}

/* In the shim once the worker was forked: what only bwrap needed is closed. */
static void close_child_fds(struct shim_args *a)
{
    for (size_t i = 0; i < a->bind_count; i++) {
        if (a->binds[i].fd >= 0)
            close(a->binds[i].fd);
        a->binds[i].fd = -1;
    }
    int *fds[] = {&a->script_fd, &a->exe_fd, &a->info_w, &a->ready_w, &a->cwd_fd};
    for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
        if (*fds[i] >= 0)
            close(*fds[i]);
        *fds[i] = -1;
    }
    for (size_t i = 0; i < a->etc_count; i++) {
        if (a->etc_fds[i] >= 0)
            close(a->etc_fds[i]);
        a->etc_fds[i] = -1;
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

/*
 * In the forked child, before the worker's program: says why it cannot run,
 * in the log and on fail_w (which tells the shim that the worker never
 * started), and exits.
 */
static _Noreturn void child_fail(int fail_w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static _Noreturn void child_fail(int fail_w, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    dprintf(STDERR_FILENO, "trainjob-shim: %s\n", msg);
    dprintf(fail_w, "%s", msg);
    _exit(EXIT_CANNOT_RUN);
}

int shim_drop_privileges(const struct shim_user *u, char *why, size_t size)
{
    if (setgroups(u->group_count, u->groups) != 0) {
        snprintf(why, size, "cannot set the worker's groups: %s", strerror(errno));
        return -1;
    }
    if (setresgid(u->gid, u->gid, u->gid) != 0) {
        snprintf(why, size, "cannot set gid %ld: %s", (long)u->gid, strerror(errno));
        return -1;
    }
    if (setresuid(u->uid, u->uid, u->uid) != 0) {
        snprintf(why, size, "cannot set uid %ld: %s", (long)u->uid, strerror(errno));
        return -1;
    }
    if (getuid() != u->uid || geteuid() != u->uid || getgid() != u->gid || setuid(0) == 0) {
        snprintf(why, size, "the worker would keep root's privileges; refused");
        return -1;
    }
    /* No setuid program gives them back (bwrap sets this too). */
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
        snprintf(why, size, "no_new_privs: %s", strerror(errno));
        return -1;
    }
    return 0;
}

/* In the forked child: becomes the worker (its own process group, output into out_w). */
static _Noreturn void exec_worker(const struct shim_args *a, char **argv, int out_w, int fail_w)
{
    setpgid(0, 0);
    if (dup2(out_w, STDOUT_FILENO) < 0 || dup2(out_w, STDERR_FILENO) < 0)
        child_fail(fail_w, "cannot direct the output into the log: %s", strerror(errno));
    static const int sigs[] = {SIGTERM, SIGINT, SIGHUP, SIGCHLD, SIGPIPE};
    for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
        signal(sigs[i], SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    /* Into the worker's cgroups before it runs: its limits hold from its first instruction. */
    for (size_t i = 0; i < a->cgroup_count; i++)
        if (cgroup_join(a->cgroups[i]) != 0)
            child_fail(fail_w, "cannot join the worker's cgroup %s: %s", a->cgroups[i],
                       strerror(errno));
    /*
     * Root's part is done (cgroups, descriptors): the rest runs as the
     * worker's user. In the sandbox bubblewrap needs root to mount; its
     * init drops before the script (shim_init.c).
     */
    char why[256];
    if (a->user.drop && !a->sandbox && shim_drop_privileges(&a->user, why, sizeof why) != 0)
        child_fail(fail_w, "%s", why);
    if (!a->sandbox && a->cwd_fd >= 0 && fchdir(a->cwd_fd) != 0)
        child_fail(fail_w, "%s: %s", a->cwd, strerror(errno));
    execv(argv[0], argv);
    child_fail(fail_w, "cannot run %s: %s", argv[0], strerror(errno));
}

/*
 * Reads what the child said before its exec into buf (NUL-terminated):
 * nothing (end of file at the exec) means the program runs.
 */
static size_t read_child_failure(int fd, char *buf, size_t size)
{
    size_t len = 0;
    for (;;) {
        ssize_t n = read(fd, buf + len, size - 1 - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        len += (size_t)n;
        if (len + 1 >= size)
            break;
    }
    buf[len] = '\0';
    return len;
}

/*
 * In the sandbox: waits until its init says it runs (a byte on ready_r) —
 * bubblewrap has made every mount then. Returns true; false when bwrap ended
 * or timed out first: the worker never started.
 */
static bool await_init(int ready_r)
{
    long long deadline = now_ms() + INFO_TIMEOUT_MS;
    for (;;) {
        long long left = deadline - now_ms();
        struct pollfd p = {ready_r, POLLIN, 0};
        if (left <= 0)
            return false;
        int r = poll(&p, 1, (int)left);
        if (r < 0 && errno != EINTR)
            return false;
        if (r <= 0)
            continue;
        char c;
        ssize_t n = read(ready_r, &c, 1);
        if (n == 1)
            return true;
        if (n == 0 || (errno != EINTR && errno != EAGAIN))
            return false;
    }
}

/* What bwrap said before it ended (its stderr, in the output pipe): at most size - 1 bytes. */
static void read_setup_message(int out_r, char *buf, size_t size, struct shim_log *lg)
{
    size_t len = 0;
    long long deadline = now_ms() + 200;
    while (len + 1 < size) {
        long long left = deadline - now_ms();
        struct pollfd p = {out_r, POLLIN, 0};
        if (left <= 0 || poll(&p, 1, (int)left) <= 0)
            break;
        ssize_t n = read(out_r, buf + len, size - 1 - len);
        if (n <= 0)
            break;
        shim_log_write(lg, buf + len, (size_t)n);
        len += (size_t)n;
    }
    buf[len] = '\0';
    while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == ' '))
        buf[--len] = '\0';
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)buf[i] < 0x20)
            buf[i] = ' ';
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
                shim_log_write(lg, buf, (size_t)n);
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
                shim_log_write(lg, buf, (size_t)n);
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
 * then kills what is left in the worker's cgroups; trainjobd removes them
 * (or keeps them for its next worker) when it records the end (main removes
 * them when no engine is there to).
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
        shim_log_write(lg, msg, sizeof msg - 1);
    }
    for (size_t i = 0; i < a->cgroup_count; i++)
        cgroup_kill_empty(a->cgroups[i]);
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
    if (argc > 1 && strcmp(argv[1], "--init") == 0)
        return shim_init_main(argc, argv);
    if (argc > 1 && strcmp(argv[1], "--exec") == 0)
        return shim_exec_main(argc, argv);
    struct shim_args a;
    memset(&a, 0, sizeof(a));
    a.script_in = a.script_fd = a.exe_fd = a.info_w = a.info_r = a.ready_w = a.ready_r = a.cwd_fd =
        -1;
    a.bwrap = "/usr/bin/bwrap";
    parse_args(argc, argv, &a);
    cgroups_to_remove = a.cgroups;
    cgroups_to_remove_count = a.cgroup_count;

    sigset_t handled;
    setup_signals(&handled);
    (void)setsid();

    struct shim_log lg = {a.log, xasprintf("%s.1", a.log), -1, 0, a.log_cap, -1, 0, -1};
    if (!shim_log_open(&lg, false))
        shim_fail("cannot open the log %s: %s", a.log, strerror(errno));
    int out[2], wake[2];
    if (pipe2(out, O_CLOEXEC) != 0 || pipe2(wake, O_CLOEXEC | O_NONBLOCK) != 0)
        shim_fail("pipe: %s", strerror(errno));
    wake_fd = wake[1];

    /* At most one start per attempt: the claim is ours, or this start was cancelled. */
    char *claim_path = xasprintf("%s.claim", a.status);
    int claim = open(claim_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (claim < 0 && errno == EEXIST)
        shim_fail("start cancelled: %s is taken (trainjobd gave up on this start)", claim_path);
    if (claim < 0)
        shim_fail("cannot claim the start: %s: %s", claim_path, strerror(errno));
    dprintf(claim, "%ld\n", (long)getpid());
    close(claim);
    free(claim_path);

    open_script(&a);
    if (a.sandbox)
        shim_check_mount_paths(&a);
    shim_resolve_volumes(&a);
    shim_open_binds(&a);
    if (a.sandbox)
        open_sandbox_fds(&a);
    shim_open_etc(&a);
    struct argv_buf av = {NULL, 0, 0};
    shim_worker_argv(&a, &av);
    int fail[2];
    if (pipe2(fail, O_CLOEXEC) != 0)
        shim_fail("pipe: %s", strerror(errno));
    pid_t pid = fork();
    if (pid < 0)
        shim_fail("fork: %s", strerror(errno));
    if (pid == 0)
        exec_worker(&a, av.v, out[1], fail[1]);
    close(out[1]);
    close(fail[1]);
    close_child_fds(&a);
    setpgid(pid, pid); /* also done by the child: whichever runs first */
    forward_to = -pid;

    /*
     * Did the worker's program start? Not when the child failed before its
     * exec, nor when bubblewrap ended before the sandbox's init ran (a bind
     * source gone, say): either is "could not start", never the worker's
     * exit, and nothing is left of it.
     */
    char why[SETUP_MESSAGE_MAX];
    bool failed = read_child_failure(fail[0], why, sizeof why) > 0;
    close(fail[0]);
    pid_t init = 0;
    if (!failed && a.sandbox) {
        init = read_init_pid(a.info_r);
        if (!await_init(a.ready_r)) {
            failed = true;
            kill(-pid, SIGKILL);
            read_setup_message(out[0], why, sizeof why, &lg);
            if (!why[0])
                snprintf(why, sizeof why, "bubblewrap ended before the worker ran");
        }
    }
    if (failed) {
        kill(-pid, SIGKILL);
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
        }
        shim_fail("%s%s", a.sandbox ? "the sandbox could not be set up: " : "", why);
    }

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
    /* Not fsynced: it names processes, which a crash of the machine ends with it. */
    if (file_write_atomic_nosync(pid_path, line, (size_t)len, 0644, &err) != 0) {
        kill(-pid, SIGKILL);
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
        }
        shim_fail("%s", strbuf_str(&err));
    }
    free(pid_path);
    shim_write_all(STDOUT_FILENO, line, (size_t)len);
    int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (devnull >= 0) {
        dup2(devnull, STDOUT_FILENO);
        close(devnull);
    }
    if (a.sandbox && init > 0) {
        /*
         * Signals go to the sandbox's init, never to bwrap: it would die and
         * take all with it. The init takes them already (await_init).
         * info_r and ready_r stay open until the shim exits.
         */
        forward_to = init;
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
    bool written = shim_write_status(a.status, line, (size_t)len, &lg);
    /*
     * No engine to record the end (it was stopped while the worker ran): the
     * cgroups are ours, and the engine's subtree once the last is gone. The
     * shared lock keeps an engine from starting meanwhile and making its
     * cgroups in the subtree being removed. A state directory that is gone
     * (no lock file, nor a status written) has no engine either: the
     * worker's cgroups go, the subtree stays for the engine that may come.
     */
    int lock = a.engine_lock ? statelock_share_idle(a.engine_lock) : -1;
    if (lock >= 0 || (a.engine_lock && errno == ENOENT))
        for (size_t i = 0; i < a.cgroup_count; i++)
            if (cgroup_kill_remove(a.cgroups[i]) && lock >= 0)
                cgroup_remove_engine_dir(a.cgroups[i]);
    if (lock >= 0)
        close(lock);
    if (!written)
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
    free(a.etc_fds);
    free(lg.rotated);
    return 0;
}
