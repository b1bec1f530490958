/*
 * shim_sandbox: the worker's command line for trainjob-shim (shim.c's main)
 * — bubblewrap's arguments for the sandbox that shim.c's top comment
 * describes (system directories, the few files of /etc a program needs,
 * GPU devices, a read-only /proc, /sys without the cgroups, binds, volumes,
 * the working directory), or plain /bin/sh without --sandbox — and the
 * checks before it: no mount path inside another, each --volume's subdir
 * opened beneath its root as the worker's user, and every other bind
 * opened by the shim, so bubblewrap (run as that user) binds descriptors
 * and never walks a path the user could not.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/shim_priv.h"
#include "util/beneath.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

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

/* Pushes "--OPT N" for a descriptor. */
static void argv_push_fd(struct argv_buf *av, const char *opt, int fd)
{
    char num[16];
    snprintf(num, sizeof(num), "%d", fd);
    argv_push(av, opt);
    argv_push(av, num);
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

/*
 * The directories above dst (not "/"), made 0755 with --dir before a bind
 * there: bwrap run as root makes missing parents that only root may enter,
 * and the worker is not root. made holds those pushed so far (owned).
 */
static void push_parents(struct argv_buf *av, struct argv_buf *made, const char *dst)
{
    if (made == NULL)
        return; /* bwrap as the worker's own user makes parents it may enter */
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s", dst);
    for (char *slash = strchr(path + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
        *slash = '\0';
        bool seen = false;
        for (size_t i = 0; i < made->n && !seen; i++)
            seen = strcmp(made->v[i], path) == 0;
        if (!seen) {
            argv_push(made, path);
            argv_push(av, "--dir");
            argv_push(av, path);
        }
        *slash = '/';
    }
}

static void argv_buf_free(struct argv_buf *av)
{
    for (size_t i = 0; i < av->n; i++)
        free(av->v[i]);
    free(av->v);
}

/*
 * What a program needs of /etc, bound read-only one by one (those the host
 * has): users and groups by name, name resolution, the dynamic linker's
 * cache, certificates, time zone, and the configuration of the tools a
 * training job runs (ssh for MPI, Open MPI, NVIDIA). Never /etc whole: it
 * holds /etc/shadow, /etc/gshadow and /etc/ssl/private.
 */
static const char *const etc_files[] = {"passwd",
                                        "group",
                                        "hosts",
                                        "host.conf",
                                        "hostname",
                                        "resolv.conf",
                                        "nsswitch.conf",
                                        "gai.conf",
                                        "services",
                                        "protocols",
                                        "networks",
                                        "ld.so.cache",
                                        "ld.so.conf",
                                        "ld.so.conf.d",
                                        "localtime",
                                        "timezone",
                                        "alternatives",
                                        "ssl/certs",
                                        "ssl/openssl.cnf",
                                        "ca-certificates",
                                        "ca-certificates.conf",
                                        "pki/tls/certs",
                                        "pki/ca-trust/extracted",
                                        "crypto-policies",
                                        "mime.types",
                                        "os-release",
                                        "lsb-release",
                                        "debian_version",
                                        "terminfo",
                                        "inputrc",
                                        "environment",
                                        "ssh/ssh_config",
                                        "ssh/ssh_config.d",
                                        "openmpi",
                                        "mpi",
                                        "nvidia",
                                        "OpenCL",
                                        "vulkan",
                                        "fonts",
                                        "magic",
                                        "profile",
                                        "bash.bashrc",
                                        "python3",
                                        "pip.conf",
                                        "machine-id"};

#define ETC_COUNT (sizeof(etc_files) / sizeof(etc_files[0]))
/* The largest file of /etc copied into the sandbox rather than bound (ld.so.cache is ~100 KB). */
#define ETC_COPY_MAX (4 << 20)

/*
 * Opens the entries of etc_files that bwrap may copy instead of bind: a
 * regular file (symlinks followed, as a bind does) owned by root, readable
 * by everyone, with no set-id bit, of at most ETC_COPY_MAX bytes. The worker reads the same
 * bytes with the same owner and mode as through a bind, and cannot write
 * either (it is not root); what it saves is bwrap's pass over the mount
 * table for each bind. Directories and every other file stay binds.
 */
void shim_open_etc(struct shim_args *a)
{
    if (!a->sandbox || !a->user.drop)
        return;
    a->etc_fds = xcalloc(ETC_COUNT, sizeof(*a->etc_fds));
    a->etc_count = ETC_COUNT;
    for (size_t i = 0; i < ETC_COUNT; i++) {
        a->etc_fds[i] = -1;
        char path[PATH_MAX];
        snprintf(path, sizeof(path), "/etc/%s", etc_files[i]);
        int fd = open(path, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
        struct stat st;
        if (fd < 0)
            continue;
        if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == 0 &&
            (st.st_mode & S_IROTH) && !(st.st_mode & (S_ISUID | S_ISGID)) &&
            st.st_size <= ETC_COPY_MAX)
            a->etc_fds[i] = fcntl(fd, F_DUPFD, 3); /* inherited by bwrap, which reads it */
        close(fd);
    }
}

static void sandbox_etc(const struct shim_args *a, struct argv_buf *av, struct argv_buf *made)
{
    for (size_t i = 0; i < ETC_COUNT; i++) {
        char path[PATH_MAX];
        snprintf(path, sizeof(path), "/etc/%s", etc_files[i]);
        int fd = i < a->etc_count ? a->etc_fds[i] : -1;
        if (fd < 0 && access(path, F_OK) != 0)
            continue;
        push_parents(av, made, path);
        if (fd >= 0) {
            struct stat st;
            char mode[8];
            if (fstat(fd, &st) != 0)
                st.st_mode = 0444;
            /* Its permissions, never a set-id bit: the copy is root's in the sandbox. */
            snprintf(mode, sizeof(mode), "%04o", (unsigned)(st.st_mode & 0777));
            argv_push(av, "--perms");
            argv_push(av, mode);
            argv_push_fd(av, "--file", fd);
            argv_push(av, path);
        } else {
            argv_push3(av, "--ro-bind-try", path, path);
        }
    }
}

/*
 * /sys read-only without what tells of other jobs or of the machine's
 * firmware: /sys/fs/cgroup (every worker's cgroup, with its limits and
 * memory) and /sys/firmware are empty there.
 */
static void sandbox_sys(struct argv_buf *av)
{
    struct stat st;
    if (stat("/sys", &st) != 0)
        return;
    argv_push3(av, "--ro-bind", "/sys", "/sys");
    static const char *const hidden[] = {"/sys/fs/cgroup", "/sys/firmware", "/sys/kernel/debug"};
    for (size_t i = 0; i < sizeof(hidden) / sizeof(hidden[0]); i++) {
        if (stat(hidden[i], &st) == 0 && S_ISDIR(st.st_mode)) {
            argv_push(av, "--tmpfs");
            argv_push(av, hidden[i]);
        }
    }
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
void shim_worker_argv(const struct shim_args *a, struct argv_buf *av)
{
    if (!a->sandbox) {
        argv_push(av, "/bin/sh");
        if (a->script_fd >= 0) {
            char path[32];
            snprintf(path, sizeof(path), "/proc/self/fd/%d", a->script_fd);
            argv_push(av, path);
        } else {
            argv_push(av, a->script_file);
        }
        return;
    }
    argv_push(av, a->bwrap);
    argv_push(av, "--die-with-parent");
    /* Its own pids (no host process to see or signal), IPC and host name; the host's network. */
    argv_push(av, "--unshare-pid");
    argv_push(av, "--unshare-ipc");
    argv_push(av, "--unshare-uts");
    argv_push(av, "--as-pid-1");
    /* No capabilities in the sandbox, whoever the worker is (its own user namespace's too). */
    argv_push(av, "--cap-drop");
    argv_push(av, "ALL");
    if (a->user.drop) {
        /* Only for the init to become the worker's user; gone with uid 0 (shim_init.c). */
        argv_push(av, "--cap-add");
        argv_push(av, "CAP_SETUID");
        argv_push(av, "--cap-add");
        argv_push(av, "CAP_SETGID");
    }
    argv_push_fd(av, "--info-fd", a->info_w);
    argv_push(av, "--tmpfs");
    argv_push(av, "/");
    argv_push3(av, "--ro-bind", "/usr", "/usr");
    /*
     * Run as root for another user, only what a program needs of /etc; a
     * personal engine's worker is the user who may read /etc anyway (not
     * shadow): the whole of it, in one bind, as before.
     */
    struct argv_buf made_dirs = {NULL, 0, 0};
    struct argv_buf *made = a->user.drop ? &made_dirs : NULL;
    if (a->user.drop)
        sandbox_etc(a, av, made);
    else
        argv_push3(av, "--ro-bind", "/etc", "/etc");
    sandbox_system_dirs(av);
    sandbox_sys(av);
    if (access("/run/systemd/resolve", F_OK) == 0) {
        push_parents(av, made, "/run/systemd/resolve");
        argv_push3(av, "--ro-bind-try", "/run/systemd/resolve", "/run/systemd/resolve");
    }
    argv_push(av, "--proc");
    argv_push(av, "/proc");
    sandbox_proc_read_only(av);
    argv_push(av, "--dev");
    argv_push(av, "/dev");
    sandbox_gpu_devices(av);
    if (a->user.drop) {
        /* The worker is not root: /tmp as on the host, and the platform's directory it may read. */
        argv_push(av, "--perms");
        argv_push(av, "1777");
    }
    argv_push(av, "--tmpfs");
    argv_push(av, "/tmp");
    argv_push(av, "--dir");
    argv_push(av, "/trainjob");
    argv_push_fd(av, "--ro-bind-fd", a->exe_fd);
    argv_push(av, SANDBOX_INIT);
    if (a->user.drop) {
        /* bwrap makes it root's, 0600: the worker's user must read it. */
        argv_push(av, "--perms");
        argv_push(av, "0444");
    }
    argv_push_fd(av, "--ro-bind-data", a->script_fd);
    argv_push(av, SANDBOX_SCRIPT);
    char *inside = a->cwd ? covered_cwd(a) : NULL;
    /* The working directory goes first, so a bind below it is not hidden. */
    if (a->cwd && !inside) {
        push_parents(av, made, a->cwd);
        if (a->user.drop) {
            argv_push_fd(av, "--bind-fd", a->cwd_fd);
            argv_push(av, a->cwd);
        } else {
            argv_push3(av, "--bind", a->cwd, a->cwd);
        }
        inside = xstrdup(a->cwd);
    }
    for (size_t i = 0; i < a->bind_count; i++) {
        const struct shim_bind *b = &a->binds[i];
        push_parents(av, made, b->dst);
        if (b->fd >= 0) {
            argv_push_fd(av, b->read_only ? "--ro-bind-fd" : "--bind-fd", b->fd);
            argv_push(av, b->dst);
        } else {
            argv_push3(av, b->read_only ? "--ro-bind" : "--bind", b->src, b->dst);
        }
    }
    argv_buf_free(&made_dirs);
    if (inside) {
        argv_push(av, "--chdir");
        argv_push(av, inside);
        free(inside);
    }
    argv_push(av, "--");
    argv_push(av, SANDBOX_INIT);
    argv_push(av, "--init");
    argv_push_fd(av, "--ready-fd", a->ready_w);
    if (a->user.drop) {
        argv_push(av, "--user");
        argv_push(av, a->user_arg);
    }
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
void shim_check_mount_paths(const struct shim_args *a)
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
                shim_fail("cannot mount %s: %s %s; one mount path may not lie inside another",
                          dst[i], path_within(dst[j], dst[i]) ? "the same path as" : "inside",
                          dst[j]);
    free(dst);
}

/*
 * Opens each volume's subdirectory below its root (util/beneath.c), creating
 * what is missing, and keeps the descriptor for bwrap (not close-on-exec).
 * Without the sandbox the check alone matters: the descriptors are closed.
 */
void shim_resolve_volumes(struct shim_args *a)
{
    for (size_t i = 0; i < a->bind_count; i++) {
        struct shim_bind *b = &a->binds[i];
        if (!b->volume)
            continue;
        int root = open(b->src, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (root < 0)
            shim_fail("volume %s: %s: %s", b->volume, b->src, strerror(errno));
        /* Below its root, as the worker's user: what it creates is its own, and it may
         * create only where that user may. */
        struct strbuf why = STRBUF_INIT;
        shim_act_as(&a->user, true);
        int fd = beneath_open_dir(root, b->subdir, true, &why);
        shim_act_as(&a->user, false);
        close(root);
        if (fd < 0)
            shim_fail("volume %s: subdir %s: %s; refused", b->volume, b->subdir, strbuf_str(&why));
        strbuf_free(&why);
        if (a->sandbox) {
            b->fd = fcntl(fd, F_DUPFD, 3); /* the same directory, inherited by bwrap */
            if (b->fd < 0)
                shim_fail("volume %s: %s", b->volume, strerror(errno));
        }
        close(fd);
    }
}

/*
 * Opens the working directory and, where the shim is root and the worker
 * is not (--user), the source of every plain bind: bubblewrap binds the
 * descriptors, so their host paths need not be reachable by the worker's
 * user (a state directory is the engine's own, 0700). In the sandbox they
 * are inherited by bwrap (not close-on-exec); without, only the working
 * directory is kept, for the worker's fchdir.
 */
void shim_open_binds(struct shim_args *a)
{
    if (a->cwd) {
        int fd = open(a->cwd, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
            shim_fail("working directory %s: %s", a->cwd, strerror(errno));
        a->cwd_fd = a->sandbox ? fcntl(fd, F_DUPFD, 3) : fcntl(fd, F_DUPFD_CLOEXEC, 3);
        close(fd);
        if (a->cwd_fd < 0)
            shim_fail("working directory %s: %s", a->cwd, strerror(errno));
    }
    /* bwrap run as an ordinary user (a personal trainjobd) binds paths, as that user may. */
    if (!a->sandbox || !a->user.drop)
        return;
    for (size_t i = 0; i < a->bind_count; i++) {
        struct shim_bind *b = &a->binds[i];
        if (b->volume)
            continue;
        int fd = open(b->src, O_PATH | O_CLOEXEC);
        if (fd < 0)
            shim_fail("cannot bind %s at %s: %s", b->src, b->dst, strerror(errno));
        b->fd = fcntl(fd, F_DUPFD, 3);
        close(fd);
        if (b->fd < 0)
            shim_fail("cannot bind %s: %s", b->src, strerror(errno));
    }
}
