/*
 * fileio: see fileio.h.
 */
#include "util/fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/strbuf.h"
#include "util/xalloc.h"

/*
 * Reads fd to its end into a NUL-terminated buffer of at most max bytes;
 * closes it when owned. Messages name path.
 */
static int read_fd_all(int fd, bool owned, const char *path, size_t max, char **data, size_t *len,
                       struct strbuf *err)
{
    struct strbuf sb = STRBUF_INIT;
    for (;;) {
        /*
         * Small first (most files read are a line or a control file), then
         * doubling: a 64 KB buffer for every small read was a large chunk
         * allocated and freed each time, and each such free consolidates
         * the whole heap.
         */
        strbuf_grow(&sb, sb.len < 4096 ? 4096 : sb.len);
        ssize_t n = read(fd, sb.buf + sb.len, sb.cap - sb.len - 1);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            strbuf_addf(err, "%s: %s", path, strerror(errno));
            goto fail;
        }
        if (n == 0)
            break;
        sb.len += (size_t)n;
        sb.buf[sb.len] = '\0';
        if (sb.len > max) {
            strbuf_addf(err, "%s: larger than %zu bytes", path, max);
            goto fail;
        }
    }
    if (owned)
        close(fd);
    *data = strbuf_detach(&sb, len);
    return 0;
fail:
    if (owned)
        close(fd);
    strbuf_free(&sb);
    return -1;
}

int file_read_all(const char *path, size_t max, char **data, size_t *len, struct strbuf *err)
{
    bool is_stdin = strcmp(path, "-") == 0;
    int fd = is_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        strbuf_addf(err, "%s: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        strbuf_addf(err, "%s: is a directory", path);
        if (!is_stdin)
            close(fd);
        return -1;
    }
    return read_fd_all(fd, !is_stdin, path, max, data, len, err);
}

int file_read_regular(const char *path, size_t max, char **data, size_t *len, struct strbuf *err)
{
    struct stat st;
    return file_read_regular_stat(path, max, data, len, &st, err);
}

int file_read_regular_stat(const char *path, size_t max, char **data, size_t *len,
                           struct stat *st_out, struct strbuf *err)
{
    /* O_NONBLOCK: opening a FIFO with no writer returns at once instead of waiting for one. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        strbuf_addf(err, "%s: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        strbuf_addf(err, "%s: not a regular file", path);
        close(fd);
        return -1;
    }
    /* Reads of a regular file ignore O_NONBLOCK; clear it all the same. */
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        (void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    *st_out = st;
    return read_fd_all(fd, true, path, max, data, len, err);
}

/* Makes a rename durable: fsync the directory holding path (best effort). */
static void sync_parent_dir(const char *path)
{
    const char *slash = strrchr(path, '/');
    char *dir = slash ? xstrndup(path, slash == path ? 1 : (size_t)(slash - path)) : xstrdup(".");
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
    free(dir);
}

/* file_write_atomic's work; durable adds the fsyncs of the file and its directory. */
static int write_atomic(const char *path, const void *data, size_t len, mode_t mode, bool durable,
                        struct strbuf *err)
{
    /* A name no other writer (another process, or another call here) uses. */
    static unsigned long counter;
    char *tmp = xasprintf("%s.tmp.%ld.%lu", path, (long)getpid(), counter++);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    if (fd < 0) {
        /* Name the file the user asked for, not our temporary one. */
        strbuf_addf(err, "%s: %s", path, strerror(errno));
        free(tmp);
        return -1;
    }
    const char *p = data;
    size_t left = len;
    while (left > 0) {
        ssize_t n = write(fd, p, left);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            goto fail;
        }
        p += n;
        left -= (size_t)n;
    }
    if (durable && fsync(fd) != 0)
        goto fail;
    if (close(fd) != 0) {
        fd = -1;
        goto fail;
    }
    fd = -1;
    if (rename(tmp, path) != 0)
        goto fail;
    free(tmp);
    if (durable)
        sync_parent_dir(path);
    return 0;
fail:
    strbuf_addf(err, "%s: %s", path, strerror(errno));
    if (fd >= 0)
        close(fd);
    unlink(tmp);
    free(tmp);
    return -1;
}

int file_write_atomic(const char *path, const void *data, size_t len, mode_t mode,
                      struct strbuf *err)
{
    return write_atomic(path, data, len, mode, true, err);
}

int file_write_atomic_nosync(const char *path, const void *data, size_t len, mode_t mode,
                             struct strbuf *err)
{
    return write_atomic(path, data, len, mode, false, err);
}

/* Creates dir unless it is already a directory (EEXIST alone is not enough:
 * a regular file of that name must fail with ENOTDIR). */
static int mkdir_one(const char *dir, mode_t mode)
{
    struct stat st;
    if (mkdir(dir, mode) == 0)
        return 0;
    if (errno != EEXIST)
        return -1;
    if (stat(dir, &st) != 0)
        return -1;
    if (!S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return -1;
    }
    return 0;
}

int file_mkdirs(const char *path, mode_t mode, struct strbuf *err)
{
    if (path[0] == '\0') {
        strbuf_adds(err, "empty directory name");
        return -1;
    }
    char *p = xstrdup(path);
    for (char *s = p + 1;; s++) {
        if (*s == '/' || *s == '\0') {
            char saved = *s;
            *s = '\0';
            if (mkdir_one(p, mode) != 0) {
                strbuf_addf(err, "%s: %s", p, strerror(errno));
                free(p);
                return -1;
            }
            *s = saved;
            if (saved == '\0')
                break;
        }
    }
    free(p);
    return 0;
}

char *file_beside_self(const char *name)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return NULL;
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (slash == NULL)
        return NULL;
    *slash = '\0';
    return xasprintf("%s/%s", self, name);
}
