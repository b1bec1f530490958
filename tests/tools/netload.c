/*
 * netload: the network side of the overload attacks in tests/access.test.sh,
 * against a server on 127.0.0.1 only. Each mode opens its connections,
 * prints one line of what happened, then holds them until stdin closes (so
 * the test can look at the server meanwhile) and exits.
 *
 *   netload halfopen PORT N       N connections, each sending half a request
 *                                 line and never the rest
 *                                 → "open K"
 *   netload bigpost PORT N BYTES  N unsigned POSTs declaring BYTES of body;
 *                                 waits (≤ 5 s in all) for each answer before
 *                                 sending any body, then pushes the body
 *                                 → "answered A before-body; 401 R"
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A non-blocking connection to 127.0.0.1:port in progress, or -1. */
static int dial(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((unsigned short)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0 && errno != EINPROGRESS) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Waits until every fd in fds[0..n) has events or the deadline passes; calls fn on each. */
static void wait_all(int *fds, int n, short events, long long deadline,
                     int (*fn)(int fd, short revents, void *ctx), void *ctx)
{
    struct pollfd *p = calloc((size_t)n, sizeof *p);
    char *done = calloc((size_t)n, 1);
    int left = 0;
    for (int i = 0; i < n; i++)
        if (fds[i] >= 0)
            left++;
        else
            done[i] = 1;
    while (left > 0 && now_ms() < deadline) {
        int m = 0;
        int *idx = calloc((size_t)n, sizeof *idx);
        for (int i = 0; i < n; i++)
            if (!done[i]) {
                p[m].fd = fds[i];
                p[m].events = events;
                idx[m++] = i;
            }
        int r = poll(p, (nfds_t)m, (int)(deadline - now_ms()));
        for (int k = 0; r > 0 && k < m; k++)
            if (p[k].revents && fn(fds[idx[k]], p[k].revents, ctx)) {
                done[idx[k]] = 1;
                left--;
            }
        free(idx);
    }
    free(p);
    free(done);
}

static const char *half_request;

static int send_half(int fd, short revents, void *ctx)
{
    int *open = ctx;
    if (revents & (POLLERR | POLLHUP))
        return 1;
    if (send(fd, half_request, strlen(half_request), MSG_NOSIGNAL) > 0)
        (*open)++;
    return 1;
}

struct answers {
    int answered, refused;
};

static int read_status(int fd, short revents, void *ctx)
{
    struct answers *a = ctx;
    char buf[256];
    ssize_t n = recv(fd, buf, sizeof buf - 1, 0);
    if (n <= 0)
        return n == 0 || errno != EAGAIN;
    buf[n] = '\0';
    a->answered++;
    if (strncmp(buf, "HTTP/1.1 401", 12) == 0 || strncmp(buf, "HTTP/1.0 401", 12) == 0)
        a->refused++;
    (void)revents;
    return 1;
}

static void hold(int *fds, int n)
{
    char c;
    while (read(STDIN_FILENO, &c, 1) > 0)
        ;
    for (int i = 0; i < n; i++)
        if (fds[i] >= 0)
            close(fds[i]);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: netload halfopen PORT N | bigpost PORT N BYTES\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    int port = atoi(argv[2]), n = atoi(argv[3]);
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    int *fds = calloc((size_t)n, sizeof *fds);
    for (int i = 0; i < n; i++)
        fds[i] = dial(port);
    if (strcmp(argv[1], "halfopen") == 0) {
        half_request = "GET /trainjob/v1/catalog HTTP/1.1\r\nHost: x\r\nX-Date: Wed, 26 Jul";
        int open = 0;
        wait_all(fds, n, POLLOUT, now_ms() + 5000, send_half, &open);
        printf("open %d\n", open);
        fflush(stdout);
        hold(fds, n);
        return 0;
    }
    if (strcmp(argv[1], "bigpost") == 0 && argc == 5) {
        long bytes = atol(argv[4]);
        char head[256];
        int len = snprintf(head, sizeof head,
                           "POST /trainjob/v1/workspaces HTTP/1.1\r\nHost: x\r\n"
                           "Content-Type: application/json\r\nContent-Length: %ld\r\n\r\n",
                           bytes);
        for (int i = 0; i < n; i++) {
            struct pollfd p = {fds[i], POLLOUT, 0};
            if (fds[i] >= 0 &&
                (poll(&p, 1, 2000) != 1 || send(fds[i], head, (size_t)len, MSG_NOSIGNAL) != len)) {
                close(fds[i]);
                fds[i] = -1;
            }
        }
        struct answers a = {0, 0};
        wait_all(fds, n, POLLIN, now_ms() + 5000, read_status, &a);
        /* Now push the bodies, as the attacker did: as much as each socket takes. */
        static char body[1 << 16];
        memset(body, 'x', sizeof body);
        for (int i = 0; i < n; i++) {
            for (long sent = 0; fds[i] >= 0 && sent < bytes;) {
                size_t chunk =
                    (size_t)(bytes - sent) < sizeof body ? (size_t)(bytes - sent) : sizeof body;
                ssize_t w = send(fds[i], body, chunk, MSG_NOSIGNAL | MSG_DONTWAIT);
                if (w <= 0)
                    break;
                sent += w;
            }
        }
        printf("answered %d before-body; 401 %d\n", a.answered, a.refused);
        fflush(stdout);
        hold(fds, n);
        return 0;
    }
    fprintf(stderr, "netload: unknown mode %s\n", argv[1]);
    return 2;
}
