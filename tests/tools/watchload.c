/*
 * watchload: the watcher side of the "watchers that vanish" attack in
 * tests/watchers.test.sh (its jobs are seeded by tests/tools/seedjobs).
 *
 *   watchload watch SOCKET PATH N   N watch streams on trainjobd's Unix
 *                                   socket at once (GET PATH), each read up
 *                                   to its "SYNCED" line (≤ 60 s in all);
 *                                   then every socket is closed at once and
 *                                   nothing else is said → "synced K"
 */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define WAIT_MS 60000

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int dial(const char *path)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof a.sun_path)
        return -1;
    memcpy(a.sun_path, path, strlen(path) + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Reads fd until "SYNCED" went by or the deadline; true when it did. */
static bool read_to_synced(int fd, long long deadline)
{
    char buf[65536 + 16];
    size_t keep = 0; /* the last bytes of the previous read, for a marker cut in two */
    for (;;) {
        long long left = deadline - now_ms();
        if (left <= 0)
            return false;
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, (int)left) <= 0)
            return false;
        ssize_t got = read(fd, buf + keep, sizeof buf - keep - 1);
        if (got <= 0)
            return false;
        size_t len = keep + (size_t)got;
        buf[len] = '\0';
        if (memmem(buf, len, "\"SYNCED\"", 8))
            return true;
        keep = len < 8 ? len : 8;
        memmove(buf, buf + len - keep, keep);
    }
}

static int watch(const char *sock, const char *path, int n)
{
    int *fds = calloc((size_t)n, sizeof *fds);
    if (fds == NULL)
        return 1;
    char req[1024];
    int len = snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", path);
    if (len <= 0 || (size_t)len >= sizeof req)
        return 1;
    for (int i = 0; i < n; i++) {
        fds[i] = dial(sock);
        if (fds[i] >= 0 && write(fds[i], req, (size_t)len) != len) {
            close(fds[i]);
            fds[i] = -1;
        }
    }
    long long deadline = now_ms() + WAIT_MS;
    int synced = 0;
    for (int i = 0; i < n; i++)
        synced += fds[i] >= 0 && read_to_synced(fds[i], deadline);
    for (int i = 0; i < n; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    free(fds);
    printf("synced %d\n", synced);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 5 && strcmp(argv[1], "watch") == 0)
        return watch(argv[2], argv[3], atoi(argv[4]));
    fprintf(stderr, "usage: watchload watch SOCKET PATH N\n");
    return 2;
}
