/*
 * Fuzz target: arbitrary bytes as one whole HTTP request (request line,
 * headers, body) sent to trainjobd's real HTTP server — libmicrohttpd,
 * admission, routes and every engine handler — on an engine opened once on
 * a temporary state directory. A request that carries an Authorization
 * header goes to the loopback TCP listener (signed requests), any other to
 * the Unix socket (the caller is this process's user: an admin, as the
 * engine's user). Its only node is unschedulable and its shim path does not
 * exist, so a job the fuzzer creates waits with a reason and never runs
 * anything (and no time goes to forking a sanitized process).
 *
 * The engine must answer every request and stay up: a crash or an abort is
 * the finding. The temporary directory is removed at exit.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "engine/engine.h"
#include "engine/http.h"
#include "util/loop.h"
#include "util/strbuf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct loop *lp;
static struct engine *eng;
static struct http_server *srv;
static char dir[64];
static char sock_path[96];
static int tcp_port;

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void cleanup(void)
{
    http_server_stop(srv);
    engine_close(eng);
    loop_free(lp);
    if (dir[0])
        nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void write_config(const char *path, const char *vol)
{
    struct passwd *pw = getpwuid(getuid());
    const char *me = pw && pw->pw_name ? pw->pw_name : "root";
    FILE *f = fopen(path, "w");
    if (f == NULL)
        abort();
    fprintf(
        f,
        "subscription: local\nresource_group: default\nzone: local-1z\n"
        "regions:\n- name: local-1\n  zones: [local-1z]\n  vpcs: [vpc-local]\n"
        "workspaces:\n- name: default\n  owners: [%s]\n"
        "- name: team\n  owners: [somebody-else]\n  members: [%s]\n"
        "nodes:\n- {name: n1, gpus: 8, gpu_type: simulated, cpus: 16, memory_mib: 65536, "
        "simulated: true, unschedulable: true}\n"
        "pools:\n- {name: std, type: dedicated}\n- {name: idle, type: idle, zones: [local-1z]}\n"
        "specs:\n- {name: gpu-1, gpus: 1, cpus: 1, memory_mib: 512}\n"
        "images:\n- {path: local/host}\n"
        "volumes:\n- {id: scratch, zone: local-1z, path: %s}\n"
        "keys:\n- {access_key: AKFUZZ, secret_key: SKFUZZ, user: %s}\n",
        me, me, vol, me);
    fclose(f);
}

static void init(void)
{
    signal(SIGPIPE, SIG_IGN);
    /* On tmpfs when there is one: every create is a SQLite commit, and fsync there is free. */
    snprintf(dir, sizeof dir, "/dev/shm/fuzz-http-XXXXXX");
    if (mkdtemp(dir) == NULL) {
        snprintf(dir, sizeof dir, "/tmp/fuzz-http-XXXXXX");
        if (mkdtemp(dir) == NULL)
            abort();
    }
    atexit(cleanup);
    char config[128], state[128], vol[128], shim[128];
    snprintf(config, sizeof config, "%s/engine.yaml", dir);
    snprintf(state, sizeof state, "%s/state", dir);
    snprintf(vol, sizeof vol, "%s/vol", dir);
    snprintf(shim, sizeof shim, "%s/no-such-shim", dir);
    snprintf(sock_path, sizeof sock_path, "%.60s/engine.sock", dir);
    write_config(config, vol);
    lp = loop_new();
    struct engine_options opt = {
        .config_path = config, .state_dir = state, .shim_path = shim, .grace_ms = 100};
    struct strbuf err = STRBUF_INIT;
    if (engine_open(&opt, lp, &eng, &err) != 0) {
        fprintf(stderr, "fuzz_http: %s\n", strbuf_str(&err));
        abort();
    }
    /* TCP on a free port near one derived from the pid; Unix only if none is free. */
    for (int i = 0; i < 20 && srv == NULL; i++) {
        char listen[32];
        tcp_port = 20000 + (getpid() * 7 + i * 997) % 40000;
        snprintf(listen, sizeof listen, "127.0.0.1:%d", tcp_port);
        strbuf_reset(&err);
        srv = http_server_start(eng, lp, sock_path, listen, &err);
    }
    if (srv == NULL) {
        tcp_port = 0;
        strbuf_reset(&err);
        srv = http_server_start(eng, lp, sock_path, NULL, &err);
    }
    if (srv == NULL) {
        fprintf(stderr, "fuzz_http: %s\n", strbuf_str(&err));
        abort();
    }
    strbuf_free(&err);
}

static int connect_to(bool tcp)
{
    int fd;
    if (tcp) {
        struct sockaddr_in a = {0};
        a.sin_family = AF_INET;
        a.sin_port = htons((uint16_t)tcp_port);
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) != 0 && errno != EINPROGRESS) {
            close(fd);
            return -1;
        }
    } else {
        struct sockaddr_un a = {0};
        a.sun_family = AF_UNIX;
        snprintf(a.sun_path, sizeof a.sun_path, "%s", sock_path);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
            close(fd);
            return -1;
        }
    }
    return fd;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (lp == NULL)
        init();
    bool tcp = tcp_port && memmem(data, size, "\nAuthorization:", 15) != NULL;
    int fd = connect_to(tcp);
    if (fd < 0)
        abort(); /* the engine stopped accepting */
    size_t sent = 0;
    bool shut = false, eof = false;
    int idle = 0;
    char buf[65536];
    /* Send everything, read until the engine closes; a stream that stays open (watch, follow)
     * is left after 20 quiet turns. */
    for (int turn = 0; turn < 4000 && !eof && idle < 20; turn++) {
        if (sent < size) {
            ssize_t n = send(fd, data + sent, size - sent, MSG_NOSIGNAL);
            if (n > 0)
                sent += (size_t)n;
            else if (n < 0 && errno != EAGAIN && errno != EINTR)
                sent = size; /* the engine answered early and closed: fine */
        } else if (!shut) {
            shutdown(fd, SHUT_WR);
            shut = true;
        }
        loop_run_once(lp, shut ? 1 : 0);
        bool got = false;
        for (;;) {
            ssize_t n = recv(fd, buf, sizeof buf, 0);
            if (n > 0) {
                got = true;
                continue;
            }
            if (n == 0 || (errno != EAGAIN && errno != EINTR))
                eof = true;
            break;
        }
        idle = got || !shut ? 0 : idle + 1;
    }
    close(fd);
    /* Let the server see the close and free the connection. */
    for (int i = 0; i < 3; i++)
        loop_run_once(lp, 0);
    return 0;
}
