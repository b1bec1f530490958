/*
 * rundir: the directory of the files that describe running workers, on a
 * tmpfs when one may be used (see rundir.h). Everything found on the way
 * is opened without following a symlink and checked on the descriptor
 * opened (owner, mode, file system), so what is checked is what is used.
 */
#include "engine/rundir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "util/fileio.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

const char *const *rundir_bases(void)
{
    static const char *root_bases[] = {"/run", "/dev/shm", NULL};
    static const char *user_bases[] = {NULL};
    return geteuid() == 0 ? root_bases : user_bases;
}

static bool on_tmpfs(int fd)
{
    struct statfs sf;
    if (fstatfs(fd, &sf) != 0)
        return false;
    uint32_t type = (uint32_t)sf.f_type;
    return type == (uint32_t)TMPFS_MAGIC || type == (uint32_t)RAMFS_MAGIC;
}

/*
 * Opens name (below at) as a private directory of this process's user on
 * a tmpfs: a directory, not a symlink, owned by the effective uid, with
 * no rights for group or others. Returns its descriptor, or -1 with why
 * (naming shown) in why; errno is ENOENT when it is missing.
 */
static int open_private(int at, const char *name, const char *shown, struct strbuf *why)
{
    int fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        strbuf_addf(why, "%s: %s", shown,
                    e == ELOOP || e == ENOTDIR ? "not a directory (a symlink?)" : strerror(e));
        errno = e;
        return -1;
    }
    struct stat st;
    const char *wrong = NULL;
    if (fstat(fd, &st) != 0)
        wrong = strerror(errno);
    else if (st.st_uid != geteuid())
        wrong = "owned by another user";
    else if ((st.st_mode & 077) != 0)
        wrong = "open to group or others (not 0700)";
    else if (!on_tmpfs(fd))
        wrong = "not on a tmpfs";
    if (wrong) {
        strbuf_addf(why, "%s: %s", shown, wrong);
        close(fd);
        errno = EPERM;
        return -1;
    }
    return fd;
}

/* open_private, making the directory (0700) first when it is missing. */
static int make_private(int at, const char *name, const char *shown, struct strbuf *why)
{
    if (mkdirat(at, name, 0700) != 0 && errno != EEXIST) {
        strbuf_addf(why, "%s: %s", shown, strerror(errno));
        return -1;
    }
    return open_private(at, name, shown, why);
}

/* In a runtime directory: the link to the state directory it serves. */
#define STATE_LINK ".state"

/*
 * The runtime directory this process uses, held by a shared flock for as
 * long as it does (rundir_release lets go; so does the end of the process,
 * even a kill -9): another engine's sweep leaves a directory alone while
 * anyone holds it. Its state directory may look gone to that engine and not
 * be (a root engine in a chroot, or another mount namespace, that shares
 * /dev/shm: the deb suite runs one), so a path alone does not say it.
 */
static int held = -1;

/* Holds the runtime directory open as fd (taken), letting the one held before go. */
static void hold(int fd)
{
    if (held >= 0)
        close(held);
    held = fd;
    if (fd >= 0)
        (void)flock(fd, LOCK_SH | LOCK_NB); /* only a sweep takes it exclusively, for a moment */
}

/*
 * The names in the directory fd (closed here) that keep(ctx, dirfd, name)
 * accepts, NULL-terminated: read whole before anything is removed, as
 * removing while reading may skip entries.
 */
static char **names_in(int fd, bool (*keep)(void *ctx, int dir, const char *name), void *ctx)
{
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (d == NULL) {
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    char **names = NULL;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
            !keep(ctx, dirfd(d), e->d_name))
            continue;
        names = xreallocarray(names, n + 2, sizeof *names);
        names[n++] = xstrdup(e->d_name);
        names[n] = NULL;
    }
    closedir(d);
    return names;
}

static void names_free(char **names)
{
    for (size_t i = 0; names && names[i]; i++)
        free(names[i]);
    free(names);
}

static bool any_name(void *ctx, int dir, const char *name)
{
    (void)ctx, (void)dir, (void)name;
    return true;
}

/* Removes the files of leaf (below top) and leaf itself: one level, no symlink followed. */
static void remove_leaf(int top, const char *leaf)
{
    int fd = openat(top, leaf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int dir = fd >= 0 ? dup(fd) : -1;
    char **names = names_in(fd, any_name, NULL);
    for (size_t i = 0; dir >= 0 && names && names[i]; i++)
        (void)unlinkat(dir, names[i], 0);
    names_free(names);
    if (dir >= 0)
        close(dir);
    (void)unlinkat(top, leaf, AT_REMOVEDIR);
}

/*
 * Is name (in dir) the runtime directory of a state directory that is
 * gone: its link names no directory, or one of another device and inode
 * than its name says (made again since)? One without the link is not.
 */
static bool orphan(void *ctx, int dir, const char *name)
{
    uintmax_t dev, ino;
    int used = 0;
    if (strcmp(name, ctx) == 0 || sscanf(name, "%jx-%jx%n", &dev, &ino, &used) != 2 ||
        name[used] != '\0')
        return false;
    char *link = xasprintf("%s/%s", name, STATE_LINK);
    char target[PATH_MAX];
    ssize_t n = readlinkat(dir, link, target, sizeof target - 1);
    free(link);
    if (n <= 0)
        return false;
    target[n] = '\0';
    struct stat st;
    return stat(target, &st) != 0 || (uintmax_t)st.st_dev != dev || (uintmax_t)st.st_ino != ino;
}

/*
 * Removes the runtime directories below top, but keep, whose state
 * directory is gone (orphan) and that no engine holds: no engine can adopt
 * what is there any more. A test suite, for one, removes its state
 * directories. Each is held exclusively while it is removed.
 */
static void sweep_orphans(int top, const char *keep)
{
    char **names =
        names_in(openat(top, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC), orphan, (void *)keep);
    for (size_t i = 0; names && names[i]; i++) {
        int fd = openat(top, names[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0)
            remove_leaf(top, names[i]);
        if (fd >= 0)
            close(fd);
    }
    names_free(names);
}

/*
 * Makes base/trainjobd-UID/DEV-INO (DEV and INO the state directory's),
 * each level a private directory. base itself must be a tmpfs that only
 * root or this user may change, or where the sticky bit keeps others from
 * renaming what is ours. Returns the path, or NULL with why.
 */
static char *make_in_base(const char *base, const char *state_dir, const struct stat *state,
                          struct strbuf *why)
{
    int bfd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (bfd < 0) {
        strbuf_addf(why, "%s: %s", base, strerror(errno));
        return NULL;
    }
    struct stat st;
    const char *wrong = NULL;
    if (fstat(bfd, &st) != 0)
        wrong = strerror(errno);
    else if (st.st_uid != 0 && st.st_uid != geteuid())
        wrong = "owned by another user";
    else if ((st.st_mode & 022) != 0 && (st.st_mode & S_ISVTX) == 0)
        wrong = "writable by others without the sticky bit";
    else if (!on_tmpfs(bfd))
        wrong = "not a tmpfs";
    if (wrong) {
        strbuf_addf(why, "%s: %s", base, wrong);
        close(bfd);
        return NULL;
    }
    char top[32];
    snprintf(top, sizeof top, "trainjobd-%ju", (uintmax_t)geteuid());
    char *top_path = xasprintf("%s/%s", base, top);
    int tfd = make_private(bfd, top, top_path, why);
    close(bfd);
    char *path = NULL;
    if (tfd >= 0) {
        char leaf[64];
        snprintf(leaf, sizeof leaf, "%jx-%jx", (uintmax_t)state->st_dev, (uintmax_t)state->st_ino);
        path = xasprintf("%s/%s", top_path, leaf);
        int lfd = make_private(tfd, leaf, path, why);
        if (lfd < 0) {
            free(path);
            path = NULL;
        } else {
            /* Held before its link: a sweep reads the link, then asks the lock. */
            hold(fcntl(lfd, F_DUPFD_CLOEXEC, 0));
            /* Which state directory it serves, for sweep_orphans. */
            char *target = realpath(state_dir, NULL);
            if (target && symlinkat(target, lfd, STATE_LINK) != 0 && errno == EEXIST) {
                unlinkat(lfd, STATE_LINK, 0);
                (void)symlinkat(target, lfd, STATE_LINK);
            }
            free(target);
            close(lfd);
            sweep_orphans(tfd, leaf);
        }
        close(tfd);
    }
    free(top_path);
    return path;
}

/* Does directory path hold no entry (or cannot be read)? */
static bool dir_empty(const char *path)
{
    DIR *d = opendir(path);
    if (d == NULL)
        return false;
    struct dirent *e;
    bool empty = true;
    while (empty && (e = readdir(d)) != NULL)
        empty = strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0;
    closedir(d);
    return empty;
}

/*
 * The target of link when it is a fit runtime directory; else NULL, and the
 * link goes. why says what was unfit; a target that is simply gone (a reboot,
 * the last engine's release) is made again without a word.
 */
static char *linked_dir(const char *link, struct strbuf *why)
{
    char target[PATH_MAX];
    ssize_t n = readlink(link, target, sizeof target - 1);
    struct stat st;
    if (n > 0 && target[0] == '/') {
        target[n] = '\0';
        if (lstat(target, &st) != 0 && errno == ENOENT) {
            unlink(link);
            return NULL;
        }
        int fd = open_private(AT_FDCWD, target, target, why);
        if (fd >= 0) {
            hold(fd);
            return xstrdup(target);
        }
    }
    unlink(link); /* gone with a reboot, or unfit: made again below */
    return NULL;
}

char *rundir_status_dir(const char *state_dir, const char *const *bases, struct strbuf *note,
                        struct strbuf *err)
{
    char *link = xasprintf("%s/status", state_dir);
    struct strbuf why = STRBUF_INIT;
    struct stat st;
    if (lstat(link, &st) == 0) {
        if (S_ISDIR(st.st_mode) && !dir_empty(link)) {
            strbuf_addf(note, "worker status files in %s (it holds a previous engine's)", link);
            return link;
        }
        if (S_ISDIR(st.st_mode) && rmdir(link) != 0) {
            strbuf_addf(note, "worker status files in %s", link);
            return link;
        }
        if (S_ISLNK(st.st_mode)) {
            char *dir = linked_dir(link, &why);
            if (dir) {
                strbuf_addf(note, "worker status files in %s (tmpfs)", dir);
                free(link);
                strbuf_free(&why);
                return dir;
            }
        } else if (!S_ISDIR(st.st_mode)) {
            strbuf_addf(err, "%s: not a directory", link);
            free(link);
            strbuf_free(&why);
            return NULL;
        }
    }
    struct stat state;
    char *dir = NULL;
    if (stat(state_dir, &state) != 0) {
        strbuf_addf(&why, "%s: %s", state_dir, strerror(errno));
    } else {
        for (size_t i = 0; bases && bases[i] && dir == NULL; i++) {
            size_t said = why.len;
            if (why.len)
                strbuf_adds(&why, "; ");
            dir = make_in_base(bases[i], state_dir, &state, &why);
            if (dir)
                strbuf_truncate(&why, said);
        }
    }
    if (dir && symlink(dir, link) != 0) {
        strbuf_addf(&why, "%s%s: %s", why.len ? "; " : "", link, strerror(errno));
        free(dir);
        dir = NULL;
        hold(-1);
    }
    if (dir) {
        strbuf_addf(note, "worker status files in %s (tmpfs)", dir);
        if (why.len)
            strbuf_addf(note, "; not used: %s", strbuf_str(&why));
        free(link);
        strbuf_free(&why);
        return dir;
    }
    if (file_mkdirs(link, 0700, err) != 0) {
        free(link);
        strbuf_free(&why);
        return NULL;
    }
    strbuf_addf(note, "worker status files in %s", link);
    if (why.len)
        strbuf_addf(note, " (no tmpfs: %s)", strbuf_str(&why));
    strbuf_free(&why);
    return link;
}

void rundir_release(const char *state_dir, const char *status_dir)
{
    hold(-1);
    if (status_dir == NULL)
        return;
    char *plain = xasprintf("%s/status", state_dir);
    DIR *d = strcmp(plain, status_dir) != 0 ? opendir(status_dir) : NULL;
    free(plain);
    if (d == NULL)
        return;
    /* Kept while a worker's file is there; else its link to the state dir goes, then it. */
    bool others = false;
    struct dirent *e;
    while (!others && (e = readdir(d)) != NULL)
        others = strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 &&
                 strcmp(e->d_name, STATE_LINK) != 0;
    if (!others) {
        bool linked = unlinkat(dirfd(d), STATE_LINK, 0) == 0;
        if (rmdir(status_dir) != 0 && linked) {
            char *target = realpath(state_dir, NULL); /* a file came meanwhile: link again */
            if (target)
                (void)symlinkat(target, dirfd(d), STATE_LINK);
            free(target);
        }
    }
    closedir(d);
}
