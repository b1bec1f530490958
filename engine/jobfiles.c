/*
 * jobfiles: removing a job's files under the state directory (see
 * jobfiles.h). Called by engine/record.c: jobfiles_remove when a deleted
 * job's last worker has ended; by engine.c: jobfiles_collect once at start-up.
 *
 * Trees are removed relative to directory descriptors (openat with
 * O_NOFOLLOW, unlinkat), never by path strings, so a symbolic link a job
 * planted is unlinked, not followed. A directory the job made unreadable is
 * given back its owner's rights first. Depth is bounded: what lies deeper
 * is left and logged rather than exhausting descriptors.
 */
#include "engine/jobfiles.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/elog.h"
#include "util/xalloc.h"

#define MAX_DEPTH 128

/*
 * The directories under the state dir holding one entry per job: UID or
 * UID.…; the status directory (engine/rundir: maybe on a tmpfs) comes last.
 */
static const char *const per_job_dirs[] = {"work", "platform", "ssh", "logs", "status"};
#define PER_JOB_DIRS (sizeof per_job_dirs / sizeof per_job_dirs[0])

/* Per-job directory i's path: state_dir/NAME, or status_dir for "status". */
static char *per_job_path(const char *state_dir, const char *status_dir, size_t i)
{
    if (i == PER_JOB_DIRS - 1 && status_dir)
        return xstrdup(status_dir);
    return xasprintf("%s/%s", state_dir, per_job_dirs[i]);
}

bool jobfiles_is_uid(const char *name, size_t len)
{
    if (len < 18 || len > 64 || name[16] != '-')
        return false;
    for (size_t i = 0; i < len; i++) {
        char c = name[i];
        bool hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
        bool alnum = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z');
        if (i < 16 ? !hex : i > 16 && !alnum)
            return false;
    }
    return true;
}

/* The uid an entry of a per-job directory belongs to: the name up to its first dot. */
static size_t uid_len(const char *name)
{
    size_t n = strcspn(name, ".");
    return jobfiles_is_uid(name, n) ? n : 0;
}

static size_t remove_at(int parent, const char *name, int depth);

/* Empties the directory name (in dirfd) entry by entry; returns what was left. */
static size_t empty_dir(int parent, const char *name, int depth)
{
    int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && errno == EACCES) {
        /* The job took its own rights away: give the owner's back (a directory, checked). */
        struct stat st;
        if (fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode) &&
            fchmodat(parent, name, 0700, 0) == 0)
            fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    }
    if (fd < 0)
        return 1;
    struct stat st;
    if (fstat(fd, &st) == 0 && (st.st_mode & 0700) != 0700)
        (void)fchmod(fd, st.st_mode | 0700); /* to unlink what it holds */
    DIR *d = fdopendir(fd);
    if (d == NULL) {
        close(fd);
        return 1;
    }
    size_t left = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        left += remove_at(dirfd(d), e->d_name, depth + 1);
    }
    closedir(d);
    return left;
}

/* Removes name (in dirfd) and, for a directory, all it holds; returns what was left. */
static size_t remove_at(int parent, const char *name, int depth)
{
    if (unlinkat(parent, name, 0) == 0 || errno == ENOENT)
        return 0;
    if (errno != EISDIR && errno != EPERM)
        return 1;
    if (depth >= MAX_DEPTH)
        return 1;
    size_t left = empty_dir(parent, name, depth);
    if (unlinkat(parent, name, AT_REMOVEDIR) == 0 || errno == ENOENT)
        return left;
    return left + 1;
}

/* Removes the entries of the directory path whose uid is uid. */
static size_t remove_in(const char *path, const char *uid)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return 0;
    DIR *d = fdopendir(fd);
    if (d == NULL) {
        close(fd);
        return 0;
    }
    size_t ulen = strlen(uid), left = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (uid_len(e->d_name) == ulen && strncmp(e->d_name, uid, ulen) == 0)
            left += remove_at(dirfd(d), e->d_name, 0);
    }
    closedir(d);
    return left;
}

size_t jobfiles_remove(const char *state_dir, const char *status_dir, const char *uid)
{
    size_t left = 0;
    for (size_t i = 0; i < PER_JOB_DIRS; i++) {
        char *path = per_job_path(state_dir, status_dir, i);
        left += remove_in(path, uid);
        free(path);
    }
    if (left)
        engine_log("job %s: %zu file(s) under %s could not be removed", uid, left, state_dir);
    return left;
}

size_t jobfiles_collect(const char *state_dir, const char *status_dir,
                        bool (*known)(void *ctx, const char *uid), void *ctx)
{
    size_t collected = 0;
    for (size_t i = 0; i < PER_JOB_DIRS; i++) {
        char *path = per_job_path(state_dir, status_dir, i);
        DIR *d = opendir(path);
        if (d == NULL) {
            free(path);
            continue;
        }
        /* Names first, removal after: removing while reading may skip entries. */
        char **uids = NULL;
        size_t n = 0;
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            size_t len = uid_len(e->d_name);
            if (len == 0)
                continue;
            char *uid = xstrndup(e->d_name, len);
            bool seen = known(ctx, uid);
            for (size_t k = 0; !seen && k < n; k++)
                seen = strcmp(uids[k], uid) == 0;
            if (seen) {
                free(uid);
                continue;
            }
            uids = xreallocarray(uids, n + 1, sizeof *uids);
            uids[n++] = uid;
        }
        closedir(d);
        for (size_t k = 0; k < n; k++) {
            engine_log("collecting the %s files of job %s, which the store does not have",
                       per_job_dirs[i], uids[k]);
            (void)remove_in(path, uids[k]);
            free(uids[k]);
            collected++;
        }
        free(uids);
        free(path);
    }
    return collected;
}
