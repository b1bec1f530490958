/*
 * shareload: the members' side of the shared-engine attacks in
 * tests/shares.test.sh and bench/bench_shares (issue 20), against trainjobd
 * on 127.0.0.1:PORT. Requests are signed as trainjob signs them (api/hmac).
 *
 *   shareload signed PORT AK SK N PATH    N signed GETs of PATH, one
 *                                         connection each, one after the
 *                                         other → "codes 200:A 404:B 429:C
 *                                         other:D" then the first 429's
 *                                         message on a line of its own
 *   shareload trickle PORT SRC N SECONDS  N connections from address SRC,
 *                                         each sending one byte of a header
 *                                         every second; waits up to SECONDS
 *                                         → "closed K of N, the last after
 *                                         MS ms"
 *   shareload flood PORT N SRC…           N connections spread over the
 *                                         source addresses, each sending
 *                                         half a request line, then held
 *                                         until stdin closes → "open N"
 *   shareload watch PORT AK SK N PATH     N signed watch streams of PATH on
 *                                         N connections, never read past
 *                                         their status line; held until
 *                                         stdin closes → "codes 200:A
 *                                         429:C other:D" and the first
 *                                         429's message
 *   shareload slowloris PORT N SRC…       keeps N connections trickling a
 *                                         header byte a second, spread over
 *                                         the source addresses, dialling
 *                                         again each one the server closes,
 *                                         until killed (for the bench)
 *   shareload latency PORT AK SK N PATH   N signed GETs of PATH one after
 *                                         the other, each on a fresh
 *                                         connection, for a minute at most →
 *                                         "ms MEDIAN P99 ok K of SENT"
 */

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "api/hmac.h"

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A blocking connection to 127.0.0.1:port from address src (NULL: any), or -1. */
static int dial(int port, const char *src)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct timeval tv = {2, 0}; /* a connect the server never accepts fails in 2 s */
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    if (src) {
        if (inet_pton(AF_INET, src, &a.sin_addr) != 1 ||
            bind(fd, (struct sockaddr *)&a, sizeof a)) {
            close(fd);
            return -1;
        }
    }
    a.sin_port = htons((unsigned short)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Sends a signed GET of path (the whole request) on fd. */
static int send_signed(int fd, const char *ak, const char *sk, const char *path)
{
    char date[HMAC_DATE_LEN], nonce[HMAC_NONCE_LEN];
    struct hmac_signed sg;
    hmac_date(time(NULL), date);
    hmac_nonce(nonce);
    if (hmac_sign_request(ak, sk, "GET", path, "", 0, date, nonce, &sg) != NULL)
        return -1;
    char req[2048];
    int n = snprintf(req, sizeof req,
                     "GET %s HTTP/1.1\r\nHost: x\r\nX-Date: %s\r\nDigest: %s\r\nX-Nonce: %s\r\n"
                     "Authorization: %s\r\n\r\n",
                     path, sg.date, sg.digest, sg.nonce, sg.authorization);
    return n > 0 && (size_t)n < sizeof req && send(fd, req, (size_t)n, MSG_NOSIGNAL) == n ? 0 : -1;
}

/* Has buf (NUL-terminated) a whole response: its header and Content-Length bytes of body? */
static int complete(const char *buf, size_t have)
{
    const char *end = strstr(buf, "\r\n\r\n");
    if (end == NULL)
        return 0;
    const char *cl = strcasestr(buf, "\r\nContent-Length:");
    if (cl == NULL || cl > end)
        return 0; /* a stream: it ends when the peer closes */
    size_t body = (size_t)strtoull(cl + 17, NULL, 10);
    return have >= (size_t)(end + 4 - buf) + body;
}

/*
 * Reads what fd answers (its header alone unless whole) after the *len
 * bytes buf has, until it is complete, the peer closes, max bytes or 5 s;
 * the status code (0: none).
 */
static int read_answer(int fd, char *buf, size_t max, size_t *len, int whole)
{
    size_t have = *len;
    long long deadline = now_ms() + 5000;
    buf[have] = '\0';
    while (have + 1 < max && now_ms() < deadline && !(whole && complete(buf, have))) {
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, (int)(deadline - now_ms())) <= 0)
            break;
        ssize_t n = recv(fd, buf + have, max - 1 - have, 0);
        if (n <= 0)
            break;
        have += (size_t)n;
        buf[have] = '\0';
        if (whole ? complete(buf, have) : strstr(buf, "\r\n\r\n") != NULL)
            break;
    }
    buf[have] = '\0';
    *len = have;
    int code = 0;
    if (sscanf(buf, "HTTP/1.%*d %d", &code) != 1)
        code = 0;
    return code;
}

struct tally {
    int ok, not_found, too_many, other;
    char first_429[512];
};

static void count(struct tally *t, int code, const char *answer)
{
    if (code == 200)
        t->ok++;
    else if (code == 404)
        t->not_found++;
    else if (code == 429) {
        if (t->too_many++ == 0) {
            const char *m = strstr(answer, "\"message\":\"");
            snprintf(t->first_429, sizeof t->first_429, "%s", m ? m + 11 : "(no message)");
            t->first_429[strcspn(t->first_429, "\"")] = '\0';
        }
    } else
        t->other++;
}

static void hold(void)
{
    char c;
    while (read(STDIN_FILENO, &c, 1) > 0)
        ;
}

static int signed_mode(int port, const char *ak, const char *sk, int n, const char *path)
{
    struct tally t = {0};
    static char buf[65536];
    for (int i = 0; i < n; i++) {
        int fd = dial(port, NULL);
        size_t len = 0;
        int code = fd >= 0 && send_signed(fd, ak, sk, path) == 0
                       ? read_answer(fd, buf, sizeof buf, &len, 1)
                       : 0;
        count(&t, code, buf);
        if (fd >= 0)
            close(fd);
    }
    printf("codes 200:%d 404:%d 429:%d other:%d\n%s\n", t.ok, t.not_found, t.too_many, t.other,
           t.first_429);
    return 0;
}

static int trickle_mode(int port, const char *src, int n, int seconds)
{
    int *fds = calloc((size_t)n, sizeof *fds);
    const char *header = "GET /trainjob/v1/catalog HTTP/1.1\r\nHost: x\r\nX-Date: Wed, 26 Jul";
    size_t hlen = strlen(header), sent = 0;
    int closed = 0;
    long long start = now_ms(), last = 0;
    for (int i = 0; i < n; i++)
        fds[i] = dial(port, src);
    while (closed < n && now_ms() - start < (long long)seconds * 1000) {
        for (int i = 0; i < n; i++) {
            if (fds[i] < 0)
                continue;
            char c;
            ssize_t got = recv(fds[i], &c, 1, MSG_DONTWAIT);
            if (got == 0 || (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK) ||
                send(fds[i], header + sent % hlen, 1, MSG_NOSIGNAL) != 1) {
                close(fds[i]);
                fds[i] = -1;
                closed++;
                last = now_ms() - start;
            }
        }
        sent++;
        usleep(1000 * 1000);
    }
    for (int i = 0; i < n; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    printf("closed %d of %d, the last after %lld ms\n", closed, n, last);
    free(fds);
    return 0;
}

static int flood_mode(int port, int n, char **srcs, int nsrc)
{
    int *fds = calloc((size_t)n, sizeof *fds);
    const char *half = "GET /trainjob/v1/catalog HTTP/1.1\r\nHost: x\r\nX-Date: Wed, 26 Jul";
    int open = 0;
    for (int i = 0; i < n; i++) {
        fds[i] = dial(port, srcs[i % nsrc]);
        if (fds[i] >= 0 && send(fds[i], half, strlen(half), MSG_NOSIGNAL) > 0)
            open++;
    }
    printf("open %d\n", open);
    fflush(stdout);
    hold();
    for (int i = 0; i < n; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    free(fds);
    return 0;
}

static int watch_mode(int port, const char *ak, const char *sk, int n, const char *path)
{
    int *fds = calloc((size_t)n, sizeof *fds);
    struct tally t = {0};
    char buf[4096];
    for (int i = 0; i < n; i++) {
        fds[i] = dial(port, NULL);
        size_t len = 0;
        int code = fds[i] >= 0 && send_signed(fds[i], ak, sk, path) == 0
                       ? read_answer(fds[i], buf, sizeof buf, &len, 0)
                       : 0;
        if (code == 429) /* the whole answer, for its message */
            read_answer(fds[i], buf, sizeof buf, &len, 1);
        count(&t, code, buf);
    }
    printf("codes 200:%d 429:%d other:%d\n%s\n", t.ok, t.too_many, t.other + t.not_found,
           t.first_429);
    fflush(stdout);
    hold();
    for (int i = 0; i < n; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    free(fds);
    return 0;
}

static __attribute__((noreturn)) void slowloris_mode(int port, int n, char **srcs, int nsrc)
{
    int *fds = calloc((size_t)n, sizeof *fds);
    const char *header = "GET /trainjob/v1/catalog HTTP/1.1\r\nHost: x\r\nX-Date: Wed, 26 Jul";
    size_t hlen = strlen(header);
    for (int i = 0; i < n; i++)
        fds[i] = -1;
    for (size_t tick = 0;; tick++) {
        for (int i = 0; i < n; i++) {
            char c;
            if (fds[i] >= 0) {
                ssize_t got = recv(fds[i], &c, 1, MSG_DONTWAIT);
                if (got == 0 || (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK) ||
                    send(fds[i], header + tick % hlen, 1, MSG_NOSIGNAL) != 1) {
                    close(fds[i]);
                    fds[i] = -1;
                }
            }
            if (fds[i] < 0) /* dial again at once: the attacker wants every slot */
                fds[i] = dial(port, srcs[i % nsrc]);
        }
        usleep(1000 * 1000);
    }
}

static int cmp_ms(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int latency_mode(int port, const char *ak, const char *sk, int n, const char *path)
{
    double *ms = calloc((size_t)n, sizeof *ms);
    static char buf[65536];
    int ok = 0, sent = 0;
    long long start = now_ms();
    /* At most a minute in all: an engine that no longer answers is reported, not waited for. */
    for (int i = 0; i < n && now_ms() - start < 60000; i++, sent++) {
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        int fd = dial(port, NULL);
        size_t len = 0;
        int code = fd >= 0 && send_signed(fd, ak, sk, path) == 0
                       ? read_answer(fd, buf, sizeof buf, &len, 1)
                       : 0;
        if (fd >= 0)
            close(fd);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        ms[i] = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
        ok += code == 200;
    }
    qsort(ms, (size_t)sent, sizeof *ms, cmp_ms);
    printf("ms %.3f %.3f ok %d of %d\n", ms[sent / 2], ms[(size_t)((double)(sent - 1) * 0.99)], ok,
           sent);
    free(ms);
    return 0;
}

int main(int argc, char **argv)
{
    signal(SIGPIPE, SIG_IGN);
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    if (argc == 7 && strcmp(argv[1], "signed") == 0)
        return signed_mode(atoi(argv[2]), argv[3], argv[4], atoi(argv[5]), argv[6]);
    if (argc == 6 && strcmp(argv[1], "trickle") == 0)
        return trickle_mode(atoi(argv[2]), argv[3], atoi(argv[4]), atoi(argv[5]));
    if (argc >= 5 && strcmp(argv[1], "flood") == 0)
        return flood_mode(atoi(argv[2]), atoi(argv[3]), argv + 4, argc - 4);
    if (argc == 7 && strcmp(argv[1], "watch") == 0)
        return watch_mode(atoi(argv[2]), argv[3], argv[4], atoi(argv[5]), argv[6]);
    if (argc >= 5 && strcmp(argv[1], "slowloris") == 0)
        slowloris_mode(atoi(argv[2]), atoi(argv[3]), argv + 4, argc - 4);
    if (argc == 7 && strcmp(argv[1], "latency") == 0 && atoi(argv[5]) > 0)
        return latency_mode(atoi(argv[2]), argv[3], argv[4], atoi(argv[5]), argv[6]);
    fprintf(stderr, "usage: shareload signed PORT AK SK N PATH | trickle PORT SRC N SECONDS |\n"
                    "       flood PORT N SRC... | watch PORT AK SK N PATH |\n"
                    "       slowloris PORT N SRC... | latency PORT AK SK N PATH\n");
    return 2;
}
