/*
 * watchload: the watcher side of the "watchers that vanish" attack in
 * tests/watchers.test.sh.
 *
 *   watchload seed CONFIG STATE N   N pending jobs in workspace "default",
 *                                   created by the engine in process (no
 *                                   HTTP, no pass), so a test has thousands
 *                                   of jobs in seconds → "seeded N"
 *   watchload watch SOCKET PATH N   N watch streams on trainjobd's Unix
 *                                   socket at once (GET PATH), each read up
 *                                   to its "SYNCED" line (≤ 60 s in all);
 *                                   then every socket is closed at once and
 *                                   nothing else is said → "synced K"
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "api/apierror.h"
#include "engine/engine.h"
#include "util/loop.h"
#include "util/strbuf.h"

#define WAIT_MS 60000

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* N jobs like tests/engine.test.sh's: one role on cpu-1, into an unschedulable node. */
static int seed(const char *config, const char *state, int n)
{
    struct loop *lp = loop_new();
    struct engine_options opt = {
        .config_path = config, .state_dir = state, .shim_path = "/bin/false"};
    struct engine *eng = NULL;
    struct strbuf err = STRBUF_INIT, body = STRBUF_INIT;
    const char *user = getenv("USER_NAME");
    int made = 0;
    if (engine_open(&opt, lp, &eng, &err) != 0) {
        fprintf(stderr, "watchload: %s\n", strbuf_str(&err));
        return 1;
    }
    for (int i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "w-%05d", i);
        strbuf_reset(&body);
        strbuf_addf(&body,
                    "{\"display_name\":\"%s\",\"framework\":\"PYTORCH_DDP\","
                    "\"resource_pool\":{\"name\":\"std\"},"
                    "\"roles\":[{\"total_replicas\":1,\"resource_spec\":[{\"name\":\"cpu-1\"}],"
                    "\"image_path\":\"local/host\",\"startup_script\":\"true\"}]}",
                    name);
        struct api_error aerr = {0};
        json_t *reply = NULL;
        int st = engine_job_create(eng, user ? user : "root", "default", name, body.buf, body.len,
                                   &reply, &aerr);
        json_decref(reply);
        if (st != 200) {
            fprintf(stderr, "watchload: %s: %d %s\n", name, st, aerr.message);
            break;
        }
        made++;
    }
    engine_close(eng);
    loop_free(lp);
    strbuf_free(&err);
    strbuf_free(&body);
    printf("seeded %d\n", made);
    return made == n ? 0 : 1;
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
    if (argc == 5 && strcmp(argv[1], "seed") == 0)
        return seed(argv[2], argv[3], atoi(argv[4]));
    if (argc == 5 && strcmp(argv[1], "watch") == 0)
        return watch(argv[2], argv[3], atoi(argv[4]));
    fprintf(stderr, "usage: watchload seed CONFIG STATE N | watch SOCKET PATH N\n");
    return 2;
}
