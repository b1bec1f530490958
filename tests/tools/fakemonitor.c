/*
 * fakemonitor: a stand-in for SenseCore's Monitor service (the offline-log
 * endpoint api/acp_logs.c reads), for tests/logs.test.sh's check that the
 * TUI's log pane shows an ACP worker's log. On 127.0.0.1 only, on a port
 * the kernel picks:
 *
 *   fakemonitor PORTFILE COUNTFILE
 *
 * writes the port to PORTFILE once it listens, then answers every request
 * with two hits of the pod the request's custom_filter names (its "value"),
 * and writes the number of requests answered to COUNTFILE after each. It
 * exits after 5 minutes at most; the test stops it by pid before that.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define REQ_MAX 65536

/* A request: its headers and Content-Length bytes of body, NUL-ended in buf; -1 when cut. */
static int read_request(int fd, char *buf, size_t cap)
{
    size_t len = 0;
    char *end = NULL;
    long body = 0;
    for (;;) {
        if (end && len >= (size_t)(end + 4 - buf) + (size_t)body)
            return 0;
        if (len + 1 >= cap)
            return -1;
        ssize_t n = read(fd, buf + len, cap - 1 - len);
        if (n <= 0)
            return -1;
        len += (size_t)n;
        buf[len] = '\0';
        if (end == NULL && (end = strstr(buf, "\r\n\r\n")) != NULL) {
            const char *cl = strcasestr(buf, "\r\nContent-Length:");
            body = cl && cl < end ? strtol(cl + 17, NULL, 10) : 0;
            if (body < 0 || body > REQ_MAX / 2)
                return -1;
        }
    }
}

/* The pod the request asks for: the first "value":"…" of its body, letters, digits, '-', '.'. */
static void pod_of(const char *req, char *pod, size_t cap)
{
    const char *v = strstr(req, "\"value\":\"");
    size_t n = 0;
    if (v)
        for (v += 9; n + 1 < cap && *v &&
                     strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                            "0123456789-._",
                            *v);
             v++)
            pod[n++] = *v;
    pod[n] = '\0';
}

static void answer(int fd, const char *pod)
{
    char body[2048], head[256];
    int bn = snprintf(body, sizeof body,
                      "{\"hits\":["
                      "{\"body\":\"FAKE-MONITOR-LINE one\",\"log_time\":\"2026-01-01T00:00:01Z\","
                      "\"attributes\":{\"k8s.pod.name\":\"%s\"}},"
                      "{\"body\":\"FAKE-MONITOR-LINE two\\u001b]0;pwned\\u0007\","
                      "\"log_time\":\"2026-01-01T00:00:02Z\","
                      "\"attributes\":{\"k8s.pod.name\":\"%s\"}}],\"total\":2}",
                      pod, pod);
    int hn = snprintf(head, sizeof head,
                      "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                      "Content-Length: %d\r\nConnection: close\r\n\r\n",
                      bn);
    if (write(fd, head, (size_t)hn) != hn || write(fd, body, (size_t)bn) != bn)
        perror("fakemonitor: write");
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: fakemonitor PORTFILE COUNTFILE\n");
        return 2;
    }
    alarm(300);
    int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof a;
    if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof a) != 0 || listen(s, 16) != 0 ||
        getsockname(s, (struct sockaddr *)&a, &al) != 0) {
        perror("fakemonitor: listen");
        return 1;
    }
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", argv[1]);
    FILE *f = fopen(tmp, "w");
    if (f == NULL || fprintf(f, "%d\n", ntohs(a.sin_port)) < 0 || fclose(f) != 0 ||
        rename(tmp, argv[1]) != 0) {
        perror(argv[1]);
        return 1;
    }
    static char req[REQ_MAX];
    for (long count = 1;; count++) {
        int c = accept(s, NULL, NULL);
        if (c < 0)
            continue;
        char pod[128];
        if (read_request(c, req, sizeof req) == 0) {
            pod_of(req, pod, sizeof pod);
            answer(c, pod);
        }
        close(c);
        f = fopen(argv[2], "w");
        if (f) {
            fprintf(f, "%ld\n", count);
            fclose(f);
        }
    }
}
