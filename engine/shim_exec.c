/*
 * shim_exec: `trainjob-shim --exec`, a command run inside a running
 * worker, as `kubectl exec` runs one in a container. trainjobd starts it
 * (engine/exec.c) once it has checked who asks, with the client's
 * connection as descriptor 3:
 *
 *   trainjob-shim --exec --leader PID --ticks START WORKER
 *
 * PID is the worker's process-group leader (bubblewrap in the sandbox, the
 * worker's shell without), START its start time as its shim recorded it, so
 * a reused number is refused. The process the command joins is the
 * sandbox's pid 1 (the leader's child in a pid namespace of its own), or
 * the leader itself without the sandbox; everything is taken from it, never
 * from the client: its namespaces (user when it has its own, then cgroup,
 * IPC, UTS, network, pid and mount), its root and working directory, its
 * cgroups (the same limits), its uid, gid and groups, and its environment.
 * The command gets no capabilities and no_new_privs, as the worker.
 *
 * The client sends one message (api/exec.h EXEC_WIRE_*): a header, then
 * NUL-ended strings (TERM=… when it asks for a terminal, then the
 * command's arguments; none: the worker's shell, bash where the sandbox
 * has it, else /bin/sh), with four descriptors: the command's stdin,
 * stdout and stderr (a terminal's side, with the tty flag: it becomes the
 * command's controlling terminal) and the write end of a pipe where this
 * process answers one line: "exit N" (N the status, 128 + signal for a
 * signal death) or "error WHY" when the command could not start. When the
 * client hangs up first, the command's session gets SIGHUP, then SIGKILL.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/nsfs.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "api/exec_wire.h"
#include "engine/shim_priv.h"
#include "util/procstat.h"
#include "util/xalloc.h"

#define SOCK_FD 3
/* The most environment a worker's pid 1 may have that the command takes over. */
#define ENV_MAX (1u << 20)
/* How long a command whose client hung up has after SIGHUP before SIGKILL. */
#define HANGUP_GRACE_MS 2000

static int answer_fd = -1;

/* Ends the helper before the command ran: "error WHY" to the client. */
static _Noreturn void exec_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static _Noreturn void exec_fail(const char *fmt, ...)
{
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (answer_fd >= 0)
        dprintf(answer_fd, "error %s\n", msg);
    else
        dprintf(STDERR_FILENO, "trainjob-shim --exec: %s\n", msg);
    _exit(1); /* as at the end of shim_exec_main: maybe in the worker's pid namespace already */
}

/* Reads all of /proc/PID/NAME (0: our own; at most max bytes) into a new buffer; NULL when it
 * cannot. */
static char *proc_read(pid_t pid, const char *name, size_t max, size_t *len)
{
    char path[64];
    if (pid)
        snprintf(path, sizeof path, "/proc/%ld/%s", (long)pid, name);
    else
        snprintf(path, sizeof path, "/proc/self/%s", name);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = xmalloc(cap + 1);
    for (;;) {
        if (n == cap) {
            if (cap >= max)
                break;
            cap *= 2;
            buf = xrealloc(buf, cap + 1);
        }
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        n += (size_t)r;
    }
    close(fd);
    buf[n] = '\0';
    *len = n;
    return buf;
}

/* The inode of /proc/PID/ns/NAME (0 when unknown). */
static ino_t ns_of(pid_t pid, const char *name)
{
    char path[64];
    struct stat st;
    if (pid)
        snprintf(path, sizeof path, "/proc/%ld/ns/%s", (long)pid, name);
    else
        snprintf(path, sizeof path, "/proc/self/ns/%s", name);
    return stat(path, &st) == 0 ? st.st_ino : 0;
}

/* The process the command joins: the leader's child in another pid namespace, or the leader. */
static pid_t target_of(pid_t leader)
{
    char name[64];
    snprintf(name, sizeof name, "task/%ld/children", (long)leader);
    size_t len;
    char *kids = proc_read(leader, name, 1 << 16, &len);
    pid_t found = leader;
    ino_t own = ns_of(leader, "pid");
    for (char *p = kids, *end; p && *p; p = end) {
        long pid = strtol(p, &end, 10);
        if (end == p)
            break;
        if (pid > 0 && ns_of((pid_t)pid, "pid") != own) {
            found = (pid_t)pid;
            break;
        }
    }
    free(kids);
    return found;
}

/* Who the worker is: the effective ids and groups /proc/PID/status gives. */
static void user_of(pid_t pid, struct shim_user *u)
{
    size_t len;
    char *st = proc_read(pid, "status", 1 << 16, &len);
    if (st == NULL)
        exec_fail("the worker ended");
    const char *uid = strstr(st, "\nUid:"), *gid = strstr(st, "\nGid:");
    const char *groups = strstr(st, "\nGroups:");
    if (!uid || !gid || !groups)
        exec_fail("cannot read who the worker runs as");
    long r, e;
    if (sscanf(uid, "\nUid: %ld %ld", &r, &e) != 2)
        exec_fail("cannot read the worker's uid");
    u->uid = (uid_t)e;
    if (sscanf(gid, "\nGid: %ld %ld", &r, &e) != 2)
        exec_fail("cannot read the worker's gid");
    u->gid = (gid_t)e;
    const char *p = groups + strlen("\nGroups:");
    u->group_count = 0;
    for (char *end;; p = end) {
        long g = strtol(p, &end, 10);
        if (end == p || u->group_count == GROUPS_MAX)
            break;
        u->groups[u->group_count++] = (gid_t)g;
    }
    u->drop = true;
    free(st);
}

#define CGROUPS_MAX 16

/* Whether text (lines) has line whole. */
static bool has_line(const char *text, const char *line)
{
    size_t n = strlen(line);
    for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if (strncmp(p, line, n) == 0 && (p[n] == '\n' || p[n] == '\0'))
            return true;
    return false;
}

/*
 * Opens cgroup.procs of every cgroup of pid but the root ones and ours (v2
 * "0::/P", v1 "N:CONTROLLERS:/P"), while the host's /sys is ours: the command
 * writes itself into each (join_cgroups) once forked, and this helper stays
 * out of them, so the worker's end (which kills all in them) still leaves
 * it to say how the command ended. Returns how many are in fds.
 */
static size_t open_cgroups(pid_t pid, int fds[CGROUPS_MAX])
{
    size_t len, own_len, n = 0;
    char *theirs = proc_read(pid, "cgroup", 1 << 16, &len);
    char *ours = proc_read(0, "cgroup", 1 << 16, &own_len);
    if (theirs == NULL)
        exec_fail("the worker ended");
    for (char *save = NULL, *line = strtok_r(theirs, "\n", &save); line && n < CGROUPS_MAX;
         line = strtok_r(NULL, "\n", &save)) {
        if (has_line(ours, line))
            continue; /* ours already (no cgroup of its own: limits not enforced here) */
        char *c1 = strchr(line, ':');
        char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (c2 == NULL)
            continue;
        *c2 = '\0';
        const char *ctl = c1 + 1, *path = c2 + 1;
        if (strcmp(path, "/") == 0 || strncmp(ctl, "name=", 5) == 0)
            continue;
        char file[4096];
        if (*ctl == '\0')
            snprintf(file, sizeof file, "/sys/fs/cgroup%s/cgroup.procs", path);
        else
            snprintf(file, sizeof file, "/sys/fs/cgroup/%s%s/cgroup.procs", ctl, path);
        int fd = open(file, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
            exec_fail("cannot join the worker's cgroup %s: %s", file, strerror(errno));
        fds[n++] = fd;
    }
    free(theirs);
    free(ours);
    return n;
}

/* In the forked child: into each cgroup opened ("0": the writer). Allocates nothing. */
static int join_cgroups(const int *fds, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (write(fds[i], "0", 1) != 1)
            return -1;
    return 0;
}

/* The worker's namespaces, in the order they are entered (user last: see enter_namespaces). */
static const struct {
    const char *name;
    int type;
} ns_order[] = {
    {"cgroup", CLONE_NEWCGROUP}, {"ipc", CLONE_NEWIPC}, {"uts", CLONE_NEWUTS},
    {"net", CLONE_NEWNET},       {"pid", CLONE_NEWPID}, {"mnt", CLONE_NEWNS},
    {"user", CLONE_NEWUSER},
};
#define NS_COUNT (sizeof ns_order / sizeof ns_order[0])

/* The inode of the namespace fd is. */
static ino_t ino_of(int fd)
{
    struct stat st;
    return fstat(fd, &st) == 0 ? st.st_ino : 0;
}

/*
 * Enters each namespace of pid that is not ours, every one opened (and
 * compared with ours) before the first is entered: after the mount
 * namespace /proc is the sandbox's. An unprivileged bwrap (a personal
 * engine) makes the namespaces in a user namespace of its own, where the
 * helper, their owner's user, may act, and runs the worker in another
 * nested below it: the owner is entered first, the worker's own last.
 */
static void enter_namespaces(pid_t pid)
{
    int fd[NS_COUNT];
    bool differs[NS_COUNT];
    for (size_t i = 0; i < NS_COUNT; i++) {
        char path[64];
        snprintf(path, sizeof path, "/proc/%ld/ns/%s", (long)pid, ns_order[i].name);
        fd[i] = open(path, O_RDONLY | O_CLOEXEC);
        if (fd[i] < 0)
            exec_fail("cannot open the worker's %s namespace: %s", ns_order[i].name,
                      strerror(errno));
        differs[i] = ino_of(fd[i]) != ns_of(0, ns_order[i].name);
    }
    ino_t user_now = ns_of(0, "user");
    int owner = ioctl(fd[1], NS_GET_USERNS); /* who owns its IPC namespace (kernel 4.9+) */
    if (owner >= 0 && ino_of(owner) != user_now) {
        if (setns(owner, CLONE_NEWUSER) != 0)
            exec_fail("cannot enter the worker's user namespace: %s", strerror(errno));
        user_now = ino_of(owner);
    }
    if (owner >= 0)
        close(owner);
    for (size_t i = 0; i < NS_COUNT; i++) {
        bool user = ns_order[i].type == CLONE_NEWUSER;
        bool enter = user ? ino_of(fd[i]) != user_now : differs[i];
        if (enter && setns(fd[i], ns_order[i].type) != 0)
            exec_fail("cannot enter the worker's %s namespace: %s", ns_order[i].name,
                      strerror(errno));
        close(fd[i]);
    }
}

/* Reads the client's message: header, strings, four descriptors. */
static char *read_request(struct exec_wire_header *h, int fds[4])
{
    char cbuf[CMSG_SPACE(4 * sizeof(int))];
    struct iovec iov = {h, sizeof *h};
    struct msghdr msg = {0};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = cbuf;
    msg.msg_controllen = sizeof cbuf;
    ssize_t n;
    do
        n = recvmsg(SOCK_FD, &msg, MSG_CMSG_CLOEXEC | MSG_WAITALL);
    while (n < 0 && errno == EINTR);
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    if (n != (ssize_t)sizeof *h || c == NULL || c->cmsg_level != SOL_SOCKET ||
        c->cmsg_type != SCM_RIGHTS || c->cmsg_len != CMSG_LEN(4 * sizeof(int)) ||
        (msg.msg_flags & MSG_CTRUNC))
        exec_fail("the client's request is not an exec request");
    memcpy(fds, CMSG_DATA(c), 4 * sizeof(int));
    answer_fd = fds[3];
    if (memcmp(h->magic, EXEC_WIRE_MAGIC, sizeof h->magic) != 0 || h->len > EXEC_WIRE_MAX ||
        h->argc > EXEC_WIRE_MAX_ARGS || h->envc > 1)
        exec_fail("the client's request is not an exec request of this version");
    char *s = xmalloc((size_t)h->len + 1);
    size_t got = 0;
    while (got < h->len) {
        ssize_t r = read(SOCK_FD, s + got, h->len - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            exec_fail("the client's request was cut short");
        got += (size_t)r;
    }
    s[got] = '\0';
    if (got && s[got - 1] != '\0')
        exec_fail("the client's request does not end its last string");
    return s;
}

/* The request's strings into env (TERM only) and argv; returns argv (NULL-ended). */
static char **split_request(char *s, const struct exec_wire_header *h, char **term)
{
    size_t count = 0;
    char **argv = xcalloc((size_t)h->argc + 2, sizeof *argv);
    char *p = s, *end = s + h->len;
    *term = NULL;
    for (uint32_t i = 0; i < h->envc + h->argc; i++) {
        if (p >= end)
            exec_fail("the client's request has fewer strings than it says");
        if (i < h->envc) {
            if (strncmp(p, "TERM=", 5) != 0 || strchr(p + 5, '/'))
                exec_fail("the client may set TERM only");
            *term = p;
        } else {
            argv[count++] = p;
        }
        p += strlen(p) + 1;
    }
    return argv;
}

/* The worker's environment (its pid 1's), with the client's TERM when it asked for one. */
static char **worker_env(pid_t pid, char *term)
{
    size_t len;
    char *env = proc_read(pid, "environ", ENV_MAX, &len);
    if (env == NULL)
        exec_fail("the worker ended");
    size_t n = 0;
    for (size_t i = 0; i < len; i++)
        n += env[i] == '\0';
    char **out = xcalloc(n + 2, sizeof *out);
    size_t k = 0;
    for (char *p = env; p < env + len; p += strlen(p) + 1)
        if (!(term && strncmp(p, "TERM=", 5) == 0))
            out[k++] = p;
    if (term)
        out[k++] = term;
    return out;
}

/* Drops every capability from the bounding set (the worker has none: bwrap --cap-drop ALL). */
static void drop_bounding_set(void)
{
    for (int cap = 0; cap <= 63; cap++)
        if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL)
            break; /* not ours to drop (no CAP_SETPCAP): exec clears them anyway */
}

/* In the forked child, inside the worker's pid namespace: becomes the command. */
static _Noreturn void run_command(const struct exec_wire_header *h, const int fds[4],
                                  const struct shim_user *u, char **argv, char **envp,
                                  const int *cg, size_t ncg)
{
    setsid();
    if (join_cgroups(cg, ncg) != 0) {
        dprintf(fds[2], "trainjob exec: cannot join the worker's cgroups: %s\n", strerror(errno));
        _exit(126);
    }
    for (int i = 0; i < 3; i++)
        if (dup2(fds[i], i) < 0)
            _exit(126);
    /* Nothing of the helper's (the engine's connection, the answer pipe) reaches the command. */
    if (syscall(SYS_close_range, 3u, ~0u, 0u) != 0)
        for (int fd = 3; fd < 1024; fd++)
            close(fd);
    signal(SIGPIPE, SIG_DFL);
    signal(SIGCHLD, SIG_DFL);
    drop_bounding_set();
    char why[256];
    if (geteuid() == 0 || getuid() != u->uid || getgid() != u->gid) {
        if (shim_drop_privileges(u, why, sizeof why) != 0) {
            dprintf(STDERR_FILENO, "trainjob exec: %s\n", why);
            _exit(126);
        }
    } else if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
        _exit(126);
    }
    /* The terminal becomes the command's own, as the worker's user (a root caller could steal one).
     */
    if ((h->flags & EXEC_WIRE_TTY) && ioctl(STDIN_FILENO, TIOCSCTTY, 0) != 0)
        dprintf(STDERR_FILENO, "trainjob exec: no controlling terminal: %s\r\n", strerror(errno));
    if (argv[0] == NULL)
        argv[0] = access("/bin/bash", X_OK) == 0 ? "/bin/bash" : "/bin/sh";
    environ = envp;
    execvp(argv[0], argv);
    int e = errno;
    dprintf(STDERR_FILENO, "trainjob exec: %s: %s\n", argv[0], strerror(e));
    _exit(e == ENOENT ? 127 : 126);
}

int shim_exec_main(int argc, char **argv)
{
    if (argc != 7 || strcmp(argv[2], "--leader") != 0 || strcmp(argv[4], "--ticks") != 0)
        exec_fail("usage: trainjob-shim --exec --leader PID --ticks START WORKER");
    pid_t leader = (pid_t)strtol(argv[3], NULL, 10);
    uint64_t ticks = strtoull(argv[5], NULL, 10);
    const char *worker = argv[6];
    signal(SIGPIPE, SIG_IGN);
    int fl = fcntl(SOCK_FD, F_GETFL);
    if (fl < 0 || fcntl(SOCK_FD, F_SETFL, fl & ~O_NONBLOCK) != 0)
        exec_fail("no connection to the client");

    struct exec_wire_header h;
    int fds[4];
    char *strings = read_request(&h, fds);
    char *term;
    char **cmd = split_request(strings, &h, &term);

    struct procstat ps;
    if (leader <= 1 || procstat_read(leader, &ps) != 0 || (ticks && ps.start_ticks != ticks))
        exec_fail("worker %s is not running", worker);
    pid_t target = target_of(leader);
    struct shim_user u;
    user_of(target, &u);
    if (u.uid == 0)
        exec_fail("worker %s runs as root; refused", worker);
    char **envp = worker_env(target, term);
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/root", (long)target);
    int root = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
    snprintf(path, sizeof path, "/proc/%ld/cwd", (long)target);
    int cwd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (root < 0 || cwd < 0)
        exec_fail("cannot open the worker's root and working directory: %s", strerror(errno));

    /* Its cgroups while the host's /sys is ours, then its namespaces, user first. */
    int cg[CGROUPS_MAX];
    size_t ncg = open_cgroups(target, cg);
    enter_namespaces(target);
    if (fchdir(root) != 0 || chroot(".") != 0 || fchdir(cwd) != 0)
        exec_fail("cannot enter the worker's root and working directory: %s", strerror(errno));
    close(root);
    close(cwd);

    pid_t child = fork();
    if (child < 0)
        exec_fail("fork: %s", strerror(errno));
    if (child == 0) {
        close(fds[3]);
        close(SOCK_FD);
        run_command(&h, fds, &u, cmd, envp, cg, ncg);
    }
    for (int i = 0; i < 3; i++)
        close(fds[i]);
    for (size_t i = 0; i < ncg; i++)
        close(cg[i]);
    answer_fd = -1; /* from here on the answer is the command's status */

    /* Waits for the command, or for the client to hang up (then SIGHUP, SIGKILL). */
    int pidfd = (int)syscall(SYS_pidfd_open, child, 0);
    bool hung_up = false;
    int64_t waited = 0;
    int status = 0;
    for (;;) {
        pid_t w = waitpid(child, &status, WNOHANG);
        if (w == child)
            break;
        struct pollfd p[2] = {{SOCK_FD, hung_up ? 0 : POLLIN | POLLRDHUP, 0}, {pidfd, POLLIN, 0}};
        int rc = poll(p, pidfd >= 0 ? 2 : 1, hung_up || pidfd < 0 ? 100 : -1);
        if (rc < 0 && errno != EINTR)
            break;
        if (!hung_up && p[0].revents) {
            char c;
            if (recv(SOCK_FD, &c, 1, MSG_DONTWAIT) <= 0) {
                hung_up = true;
                kill(-child, SIGHUP);
                kill(child, SIGHUP);
            }
        }
        if (hung_up && (waited += 100) >= HANGUP_GRACE_MS) {
            kill(-child, SIGKILL);
            kill(child, SIGKILL);
        }
    }
    int code = WIFEXITED(status)     ? WEXITSTATUS(status)
               : WIFSIGNALED(status) ? 128 + WTERMSIG(status)
                                     : 1;
    dprintf(fds[3], "exit %d\n", code);
    /*
     * Ends now, without exit handlers: it entered the worker's pid namespace
     * for its children, and a sanitizer's leak check at exit (a traced
     * clone, landing there) would never finish. It holds nothing to flush.
     */
    _exit(0);
}
