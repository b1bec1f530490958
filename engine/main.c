/*
 * main: trainjobd, the local engine. Parses its flags, opens the engine and
 * the HTTP server, then runs the one poll loop until SIGTERM or SIGINT.
 * Without --foreground it detaches (the way tmux starts its server) and logs
 * to <state-dir>/trainjobd.log.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/paths.h"
#include "engine/engine.h"
#include "engine/http.h"
#include "engine/runner.h"
#include "util/fileio.h"
#include "util/loop.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#ifndef TRAINJOB_VERSION
#define TRAINJOB_VERSION "0.1"
#endif

static void usage(FILE *out)
{
    fputs("usage: trainjobd [OPTIONS]\n"
          "\n"
          "The local engine behind trainjob: serves the SenseCore ACP training-job API on a\n"
          "Unix socket, schedules jobs onto this machine (or simulated nodes) and runs their\n"
          "workers as local processes.\n"
          "\n"
          "  --config FILE        engine.yaml (default ~/.config/trainjob/engine.yaml;\n"
          "                       written with this machine's defaults when missing)\n"
          "  --state-dir DIR      engine.db, logs, status files\n"
          "                       (default ~/.local/state/trainjob/engine)\n"
          "  --socket PATH        Unix socket (default $XDG_RUNTIME_DIR/trainjob/engine.sock)\n"
          "  --listen ADDR:PORT   also listen on loopback TCP; requests must be AK/SK signed\n"
          "  --demo               a new config gets 4 simulated nodes with 8 GPUs each\n"
          "  --grace SECONDS      SIGTERM to SIGKILL when stopping workers (default 10)\n"
          "  --start-timeout SECONDS\n"
          "                       how long a worker's shim may take to start it (default 30)\n"
          "  --foreground         stay attached; log to stderr\n"
          "  --version, --help\n",
          out);
}

/* The shim binary: --shim, $TRAINJOB_SHIM, or trainjob-shim beside this binary. */
static char *find_shim(const char *flag)
{
    if (flag)
        return xstrdup(flag);
    const char *env = getenv("TRAINJOB_SHIM");
    if (env && *env)
        return xstrdup(env);
    char *beside = file_beside_self("trainjob-shim");
    return beside ? beside : xstrdup("trainjob-shim");
}

static void on_stop(void *ctx, int signo)
{
    (void)signo;
    loop_stop(ctx);
}

static void on_child(void *ctx, int signo)
{
    (void)ctx;
    (void)signo;
    runner_reap();
}

/* Detaches: a grandchild in its own session, stdio to the log file. */
static int daemonize(const char *log_path, int ready_pipe[2])
{
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid > 0) {
        /* Wait until the child says it listens (or failed), so callers can connect at once. */
        close(ready_pipe[1]);
        char c = 1;
        ssize_t n = read(ready_pipe[0], &c, 1);
        _exit(n == 1 && c == 0 ? 0 : 1);
    }
    close(ready_pipe[0]);
    setsid();
    if (fork() > 0)
        _exit(0);
    int fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (null >= 0)
        dup2(null, STDIN_FILENO);
    if (fd >= 0) {
        dup2(fd, STDOUT_FILENO);
        dup2(fd, STDERR_FILENO);
    }
    return 0;
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"config", required_argument, NULL, 'c'},
        {"state-dir", required_argument, NULL, 's'},
        {"socket", required_argument, NULL, 'S'},
        {"listen", required_argument, NULL, 'l'},
        {"demo", no_argument, NULL, 'd'},
        {"grace", required_argument, NULL, 'g'},
        {"foreground", no_argument, NULL, 'f'},
        {"shim", required_argument, NULL, 'x'},
        {"start-timeout", required_argument, NULL, 'T'},
        {"version", no_argument, NULL, 'V'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *config = NULL, *state = NULL, *sock = NULL, *listen_addr = NULL, *shim = NULL;
    bool demo = false, foreground = false;
    int grace_ms = 10000, start_timeout_ms = 0, c;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'c':
            config = optarg;
            break;
        case 's':
            state = optarg;
            break;
        case 'S':
            sock = optarg;
            break;
        case 'l':
            listen_addr = optarg;
            break;
        case 'd':
            demo = true;
            break;
        case 'g':
            grace_ms = (int)(atof(optarg) * 1000);
            break;
        case 'f':
            foreground = true;
            break;
        case 'x':
            shim = optarg;
            break;
        case 'T': {
            char *end;
            errno = 0;
            double sec = strtod(optarg, &end);
            if (errno || end == optarg || *end || !(sec > 0 && sec <= 3600)) {
                fprintf(stderr, "trainjobd: --start-timeout needs seconds (0 < s <= 3600)\n");
                return 2;
            }
            start_timeout_ms = (int)(sec * 1000);
            break;
        }
        case 'V':
            printf("trainjobd %s\n", TRAINJOB_VERSION);
            return 0;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    char *config_path = config ? xstrdup(config) : paths_engine_config();
    char *state_dir = state ? xstrdup(state) : paths_engine_state();
    char *socket_path = sock ? xstrdup(sock) : paths_engine_socket();
    char *shim_path = find_shim(shim);
    struct strbuf err = STRBUF_INIT;
    char *sock_dir = xstrdup(socket_path);
    char *slash = strrchr(sock_dir, '/');
    if (slash && slash != sock_dir)
        *slash = '\0';
    if (file_mkdirs(state_dir, 0700, &err) != 0 || (slash && file_mkdirs(sock_dir, 0700, &err))) {
        fprintf(stderr, "trainjobd: %s\n", strbuf_str(&err));
        return 1;
    }
    free(sock_dir);

    int ready[2] = {-1, -1};
    if (!foreground) {
        char *log = xasprintf("%s/trainjobd.log", state_dir);
        if (pipe2(ready, O_CLOEXEC) != 0 || daemonize(log, ready) != 0) {
            fprintf(stderr, "trainjobd: cannot detach: %s\n", strerror(errno));
            return 1;
        }
        free(log);
    }
    signal(SIGPIPE, SIG_IGN);
    /* Shims whose first parent exits become our children, so we reap them. */
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    struct loop *lp = loop_new();
    loop_add_signal(lp, SIGTERM, on_stop, lp);
    loop_add_signal(lp, SIGINT, on_stop, lp);
    loop_add_signal(lp, SIGCHLD, on_child, NULL);

    struct engine_options opt = {config_path, state_dir, shim_path,       demo,
                                 grace_ms,    0,         start_timeout_ms};
    struct engine *eng = NULL;
    struct http_server *srv = NULL;
    int status = 1;
    if (engine_open(&opt, lp, &eng, &err) != 0) {
        fprintf(stderr, "trainjobd: %s\n", strbuf_str(&err));
    } else if ((srv = http_server_start(eng, lp, socket_path, listen_addr, &err)) == NULL) {
        fprintf(stderr, "trainjobd: %s\n", strbuf_str(&err));
    } else {
        engine_log("listening on %s%s%s (pid %ld)", socket_path, listen_addr ? " and " : "",
                   listen_addr ? listen_addr : "", (long)getpid());
        if (ready[1] >= 0) {
            char ok = 0;
            ssize_t n = write(ready[1], &ok, 1);
            (void)n;
            close(ready[1]);
            ready[1] = -1;
        }
        loop_run(lp);
        engine_log("stopping (workers keep running under their shims)");
        status = 0;
    }
    fflush(stderr);
    if (ready[1] >= 0)
        close(ready[1]);
    http_server_stop(srv);
    engine_close(eng);
    loop_free(lp);
    strbuf_free(&err);
    free(config_path);
    free(state_dir);
    free(socket_path);
    free(shim_path);
    return status;
}
