/*
 * unixget: the least a process can do to ask an HTTP server on a Unix
 * socket for one resource — connect, send one GET, read the whole reply
 * and drop it, exit. bench_slurm runs it as the reference for a cold
 * `trainjob get jobs` (slurmrestd's own time for GET /jobs), measured the
 * way trainjob is: from exec to exit, its output through the same pipe.
 * It links libc alone and keeps nothing of the body, so its own part is as
 * small as a client's can be.
 *
 *   unixget SOCKET TARGET [HEADER…]
 *
 * HEADER is a whole "Name: value" line without its CRLF. On stderr:
 * "status N bytes M" (M: the reply's bytes after its head). Exits 0 for a
 * 200 whose body is as long as its Content-Length says (or read to the
 * close without one), 1 otherwise, 2 on a usage error.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* Sends all of buf; -1 on an error. */
static int send_all(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: unixget SOCKET TARGET [HEADER...]\n");
        return 2;
    }
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (strlen(argv[1]) >= sizeof a.sun_path) {
        fprintf(stderr, "unixget: socket path too long\n");
        return 2;
    }
    memcpy(a.sun_path, argv[1], strlen(argv[1]) + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        perror("unixget: connect");
        return 1;
    }
    static char req[16384];
    int n = snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n",
                     argv[2]);
    for (int i = 3; i < argc && n > 0 && (size_t)n < sizeof req; i++)
        n += snprintf(req + n, sizeof req - (size_t)n, "%s\r\n", argv[i]);
    if (n <= 0 || (size_t)n + 3 > sizeof req) {
        fprintf(stderr, "unixget: request over %zu bytes\n", sizeof req);
        return 2;
    }
    memcpy(req + n, "\r\n", 3);
    if (send_all(fd, req, (size_t)n + 2) != 0) {
        perror("unixget: send");
        return 1;
    }
    /* The head kept until its blank line; the body counted and dropped. */
    static char buf[256 << 10], head[16384];
    size_t head_len = 0, body = 0;
    long long want = -1;
    int status = 0;
    bool in_head = true;
    for (;;) {
        ssize_t got = read(fd, buf, sizeof buf);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            perror("unixget: read");
            return 1;
        }
        if (got == 0)
            break;
        size_t off = 0;
        if (in_head) {
            size_t take =
                (size_t)got < sizeof head - 1 - head_len ? (size_t)got : sizeof head - 1 - head_len;
            memcpy(head + head_len, buf, take);
            head_len += take;
            head[head_len] = '\0';
            char *end = strstr(head, "\r\n\r\n");
            if (end == NULL) {
                if (head_len == sizeof head - 1) {
                    fprintf(stderr, "unixget: a reply head over %zu bytes\n", sizeof head);
                    return 1;
                }
                continue;
            }
            in_head = false;
            off = (size_t)(end + 4 - head) - (head_len - take);
            end[2] = '\0';
            if (sscanf(head, "HTTP/1.%*d %d", &status) != 1)
                status = 0;
            for (char *line = strstr(head, "\r\n"); line && line[2];
                 line = strstr(line + 2, "\r\n"))
                if (strncasecmp(line + 2, "Content-Length:", 15) == 0)
                    want = strtoll(line + 17, NULL, 10);
        }
        body += (size_t)got - off;
        if (want >= 0 && body >= (size_t)want) {
            body = (size_t)want; /* slurmrestd 22.05 writes a stray header line after it */
            break;
        }
    }
    close(fd);
    fprintf(stderr, "status %d bytes %zu\n", status, body);
    return status == 200 && !in_head && (want < 0 || body == (size_t)want) ? 0 : 1;
}
