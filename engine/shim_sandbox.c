/*
 * shim_sandbox: the worker's command line for trainjob-shim (shim.c's main)
 * — bubblewrap's arguments for the sandbox that shim.c's top comment
 * describes (system directories, GPU devices, a read-only /proc, binds,
 * volumes, the working directory), or plain /bin/sh without --sandbox —
 * and the checks before it: no mount path inside another, and each
 * --volume's subdir opened beneath its root.
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
void shim_worker_argv(const struct shim_args *a, struct argv_buf *av)
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
        struct strbuf why = STRBUF_INIT;
        int fd = beneath_open_dir(root, b->subdir, true, &why);
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
