/*
 * statelock: the state directory's lock file; see statelock.h.
 */
#include "engine/statelock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util/strbuf.h"
#include "util/xalloc.h"

/* The most of a holder's lock file we read (pid and socket path). */
#define LOCK_TEXT_MAX 4200
/* The longest holder socket path shown. */
#define HOLDER_SOCK_MAX 4100
/* How long a detached engine waits for the process it came from to let the lock go (2 s). */
#define TAKE_OVER_TRIES 200
#define TAKE_OVER_PAUSE_NS 10000000L
/* How long an engine waits for shims holding the lock shared to let go (1 s). */
#define SHARED_TRIES 100
#define SHARED_PAUSE_NS 10000000L

/* Reads the holder's "pid N\nsocket S\n" into pid and sock ("?" for what is not there). */
static void read_holder(int fd, char *pid, size_t pid_size, char *sock, size_t sock_size)
{
    snprintf(pid, pid_size, "?");
    snprintf(sock, sock_size, "?");
    char *buf = xmalloc(LOCK_TEXT_MAX + 1);
    ssize_t n = pread(fd, buf, LOCK_TEXT_MAX, 0);
    if (n > 0) {
        buf[n] = '\0';
        for (char *line = buf; line && *line;) {
            char *next = strchr(line, '\n');
            if (next)
                *next++ = '\0';
            if (strncmp(line, "pid ", 4) == 0 && strspn(line + 4, "0123456789") == strlen(line + 4))
                snprintf(pid, pid_size, "%s", line + 4);
            else if (strncmp(line, "socket ", 7) == 0)
                snprintf(sock, sock_size, "%s", line + 7);
            line = next;
        }
        /* The path is shown in a terminal: nothing unprintable. */
        for (char *p = sock; *p; p++)
            if ((unsigned char)*p < 0x20 || *p == 0x7f)
                *p = '?';
    }
    free(buf);
}

void statelock_update(int fd, const char *socket_path)
{
    struct strbuf sb = STRBUF_INIT;
    strbuf_addf(&sb, "pid %ld\nsocket %s\n", (long)getpid(), socket_path);
    /* Best effort: the lock itself is what counts; the text only names the holder. */
    if (ftruncate(fd, 0) == 0 && pwrite(fd, sb.buf, sb.len, 0) < 0) {
    }
    strbuf_free(&sb);
}

/* A write lock on the whole file, owned by this process (no child of it has it). */
static int lock_whole(int fd, int cmd, struct flock *fl)
{
    *fl = (struct flock){.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};
    int rc;
    do
        rc = fcntl(fd, cmd, fl);
    while (rc != 0 && errno == EINTR);
    return rc;
}

/* The pid of the process holding the lock on fd's file, or 0 (none, or unknown). */
static pid_t holder_pid(int fd)
{
    struct flock fl;
    return lock_whole(fd, F_GETLK, &fl) == 0 && fl.l_type != F_UNLCK ? fl.l_pid : 0;
}

/* Is fd's file locked shared (by a shim, statelock_share_idle) and by no engine? */
static bool held_shared(int fd)
{
    struct flock fl;
    return lock_whole(fd, F_GETLK, &fl) == 0 && fl.l_type == F_RDLCK;
}

/* Takes the lock on fd; on failure says who holds it, or why it could not be taken. */
static int take(int fd, const char *state_dir, const char *path, struct strbuf *err)
{
    struct flock fl;
    /* A shim holds it shared for a few rmdirs: wait for those. */
    for (int tries = 0;; tries++) {
        if (lock_whole(fd, F_SETLK, &fl) == 0)
            return 0;
        int why = errno;
        bool shared = (why == EACCES || why == EAGAIN) && held_shared(fd);
        if (shared && tries >= SHARED_TRIES) {
            strbuf_addf(err, "state dir %s: a worker's shim has held %s for over a second",
                        state_dir, path);
            return -1;
        }
        if (!shared) {
            errno = why;
            break;
        }
        struct timespec ts = {0, SHARED_PAUSE_NS};
        nanosleep(&ts, NULL);
    }
    if (errno == EACCES || errno == EAGAIN) {
        char pid[32], sock[HOLDER_SOCK_MAX];
        read_holder(fd, pid, sizeof pid, sock, sizeof sock);
        strbuf_addf(err, "state dir %s is in use by trainjobd pid %s on socket %s", state_dir, pid,
                    sock);
    } else {
        strbuf_addf(err, "%s: cannot lock: %s", path, strerror(errno));
    }
    return -1;
}

char *statelock_path(const char *state_dir)
{
    return xasprintf("%s/trainjobd.lock", state_dir);
}

int statelock_share_idle(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return -1;
    struct flock fl = {.l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};
    int rc;
    do
        rc = fcntl(fd, F_SETLK, &fl);
    while (rc != 0 && errno == EINTR);
    if (rc != 0) { /* an engine holds it */
        int why = errno;
        close(fd);
        errno = why;
        return -1;
    }
    return fd;
}

int statelock_acquire(const char *state_dir, const char *socket_path, struct strbuf *err)
{
    char *path = statelock_path(state_dir);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) {
        strbuf_addf(err, "%s: %s", path, strerror(errno));
        free(path);
        return -1;
    }
    if (take(fd, state_dir, path, err) != 0) {
        close(fd);
        free(path);
        return -1;
    }
    free(path);
    statelock_update(fd, socket_path);
    return fd;
}

int statelock_take_over(int fd, pid_t from, const char *state_dir, const char *socket_path,
                        struct strbuf *err)
{
    char *path = statelock_path(state_dir);
    size_t start = err->len;
    int rc;
    /* It lets go as soon as it has forked: this waits for that, not for another engine. */
    for (int tries = 0; (rc = take(fd, state_dir, path, err)) != 0 && tries < TAKE_OVER_TRIES;
         tries++) {
        pid_t holder = holder_pid(fd);
        if (holder != from && holder != 0) /* 0: let go just now */
            break;
        strbuf_truncate(err, start);
        struct timespec ts = {0, TAKE_OVER_PAUSE_NS};
        nanosleep(&ts, NULL);
    }
    free(path);
    if (rc == 0)
        statelock_update(fd, socket_path);
    return rc;
}
