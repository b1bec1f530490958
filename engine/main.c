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
#include "engine/cgroup.h"
#include "engine/engine.h"
#include "engine/flags.h"
#include "engine/http.h"
#include "engine/runner.h"
#include "engine/statelock.h"
#include "engine/stopmark.h"
#include "util/buildinfo.h"
#include "util/fileio.h"
#include "util/loop.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

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
          "                       (port 0: any free port, logged as it starts)\n"
          "  --demo               add 4 simulated nodes with 8 GPUs each to the config\n"
          "  --grace SECONDS      SIGTERM to SIGKILL when stopping workers (default 10)\n"
          "  --log-cap SIZE       bytes per worker log before it rotates (default 16M)\n"
          "  --cgroup-root DIR    where the cgroup hierarchies are mounted (default\n"
          "                       /sys/fs/cgroup): workers are held to their specs there\n"
          "  --runtime-dir DIR    where worker status files go when DIR is a tmpfs (default\n"
          "                       /run or /dev/shm as root, else the state directory)\n"
          "  --start-timeout SECONDS\n"
          "                       how long a worker's shim may take to start it (default 30)\n"
          "  --foreground         stay attached; log to stderr\n"
          "  --version, --help\n",
          out);
}

/*
 * The shim binary: --shim, $TRAINJOB_SHIM, or the one of this build or
 * installed tree (beside trainjobd, or libexec/trainjob: util/buildinfo).
 */
static char *find_shim(const char *flag)
{
    if (flag)
        return xstrdup(flag);
    const char *env = getenv("TRAINJOB_SHIM");
    if (env && *env)
        return xstrdup(env);
    char *found = buildinfo_helper("trainjob-shim");
    return found ? found : xstrdup("trainjob-shim");
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

/* Detaches: a grandchild in its own session, stdio to the log file; the parent lets lock_fd go. */
static int daemonize(const char *log_path, int ready_pipe[2], int lock_fd)
{
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid > 0) {
        /* The state lock is the detached process's to take over (statelock.h): let go of it. */
        close(lock_fd);
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

/* Limits of the numeric flags. */
#define GRACE_MAX_S 3600
#define START_TIMEOUT_MAX_S 3600
#define LOG_CAP_MIN (4u << 10)
#define LOG_CAP_MAX ((size_t)1 << 40)

/* What the command line asked for, every value checked. */
struct flags {
    const char *config, *state, *sock, *listen_addr, *shim, *cgroup_root, *runtime_dir;
    bool demo, foreground;
    int grace_ms;
    size_t log_cap;
    int start_timeout_ms; /* 0: the runner's default */
};

/*
 * Reads the command line strictly: every value whole and in range, no stray
 * arguments. Returns -1 to go on, or the exit status (0 for --help and
 * --version, 2 with a message naming the flag on stderr).
 */
static int parse_flags(int argc, char **argv, struct flags *f)
{
    static const struct option longopts[] = {
        {"config", required_argument, NULL, 'c'},
        {"state-dir", required_argument, NULL, 's'},
        {"socket", required_argument, NULL, 'S'},
        {"listen", required_argument, NULL, 'l'},
        {"demo", no_argument, NULL, 'd'},
        {"grace", required_argument, NULL, 'g'},
        {"log-cap", required_argument, NULL, 'L'},
        {"foreground", no_argument, NULL, 'f'},
        {"shim", required_argument, NULL, 'x'},
        {"cgroup-root", required_argument, NULL, 'C'},
        {"start-timeout", required_argument, NULL, 'T'},
        {"runtime-dir", required_argument, NULL, 'R'},
        {"version", no_argument, NULL, 'V'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct strbuf err = STRBUF_INIT;
    struct sockaddr_in addr;
    int c, rc = 0;
    while (rc == 0 && (c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'c':
            rc = flags_check_path("--config", f->config = optarg, &err);
            break;
        case 's':
            rc = flags_check_path("--state-dir", f->state = optarg, &err);
            break;
        case 'S':
            rc = flags_check_path("--socket", f->sock = optarg, &err);
            break;
        case 'l':
            rc = flags_parse_listen("--listen", f->listen_addr = optarg, &addr, &err);
            break;
        case 'd':
            f->demo = true;
            break;
        case 'g':
            rc = flags_parse_seconds("--grace", optarg, GRACE_MAX_S, &f->grace_ms, &err);
            /* The engine takes 0 as "the default": a 0 here would silently mean 10 s. */
            if (rc == 0 && f->grace_ms == 0) {
                strbuf_adds(&err, "--grace '0': must be more than 0 (0.001 at least)");
                rc = -1;
            }
            break;
        case 'L':
            rc = flags_parse_size("--log-cap", optarg, LOG_CAP_MIN, LOG_CAP_MAX, &f->log_cap, &err);
            break;
        case 'f':
            f->foreground = true;
            break;
        case 'x':
            rc = flags_check_path("--shim", f->shim = optarg, &err);
            break;
        case 'C':
            rc = flags_check_path("--cgroup-root", f->cgroup_root = optarg, &err);
            break;
        case 'R':
            rc = flags_check_path("--runtime-dir", f->runtime_dir = optarg, &err);
            if (rc == 0 && optarg[0] != '/') {
                strbuf_addf(&err, "--runtime-dir '%s': must be an absolute path", optarg);
                rc = -1;
            }
            break;
        case 'T':
            rc = flags_parse_seconds("--start-timeout", optarg, START_TIMEOUT_MAX_S,
                                     &f->start_timeout_ms, &err);
            if (rc == 0 && f->start_timeout_ms == 0) {
                strbuf_adds(&err, "--start-timeout '0': must be more than 0 (0.001 at least)");
                rc = -1;
            }
            break;
        case 'V':
            printf("trainjobd %s\n", buildinfo_version());
            return 0;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (rc == 0 && optind < argc) {
        strbuf_adds(&err, "unexpected argument '");
        for (const char *p = argv[optind]; *p && p - argv[optind] < 80; p++)
            strbuf_addc(&err, (unsigned char)*p >= 0x20 && *p != 0x7f ? *p : '?');
        strbuf_adds(&err, "' (trainjobd takes only options)");
        rc = -1;
    }
    if (rc != 0) {
        fprintf(stderr, "trainjobd: %s\n", strbuf_str(&err));
        strbuf_free(&err);
        return 2;
    }
    return -1;
}

int main(int argc, char **argv)
{
    struct flags fl = {.cgroup_root = "/sys/fs/cgroup", .grace_ms = 10000};
    int parsed = parse_flags(argc, argv, &fl);
    if (parsed >= 0)
        return parsed;
    const char *listen_addr = fl.listen_addr;
    bool foreground = fl.foreground;
    char *config_path = fl.config ? xstrdup(fl.config) : paths_engine_config();
    char *state_dir = fl.state ? xstrdup(fl.state) : paths_engine_state();
    char *socket_path = fl.sock ? xstrdup(fl.sock) : paths_engine_socket();
    char *shim_path = find_shim(fl.shim);
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
    /* One engine per state dir, decided before the store is opened or anything started. */
    int lock_fd = statelock_acquire(state_dir, socket_path, &err);
    if (lock_fd < 0) {
        fprintf(stderr, "trainjobd: %s\n", strbuf_str(&err));
        return 1;
    }

    int ready[2] = {-1, -1};
    if (!foreground) {
        char *log = xasprintf("%s/trainjobd.log", state_dir);
        pid_t first = getpid();
        if (pipe2(ready, O_CLOEXEC) != 0 || daemonize(log, ready, lock_fd) != 0) {
            fprintf(stderr, "trainjobd: cannot detach: %s\n", strerror(errno));
            return 1;
        }
        free(log);
        /* The lock's descriptor came through both forks, the lock did not: take it over. */
        if (statelock_take_over(lock_fd, first, state_dir, socket_path, &err) != 0) {
            fprintf(stderr, "trainjobd: %s\n", strbuf_str(&err));
            return 1;
        }
    }
    signal(SIGPIPE, SIG_IGN);
    /* Shims whose first parent exits become our children, so we reap them. */
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    struct loop *lp = loop_new();
    loop_add_signal(lp, SIGTERM, on_stop, lp);
    loop_add_signal(lp, SIGINT, on_stop, lp);
    loop_add_signal(lp, SIGCHLD, on_child, NULL);
    stopmark_watch_signals();

    /* Once, in the process that stays: whether workers can be held to their specs. */
    struct cgroups *cgroups = cgroup_probe(fl.cgroup_root, NULL);
    struct engine_options opt = {.config_path = config_path,
                                 .state_dir = state_dir,
                                 .shim_path = shim_path,
                                 .demo = fl.demo,
                                 .grace_ms = fl.grace_ms,
                                 .log_cap = fl.log_cap,
                                 .cgroups = cgroups,
                                 .runtime_dir = fl.runtime_dir,
                                 .start_timeout_ms = fl.start_timeout_ms};
    struct engine *eng = NULL;
    struct http_server *srv = NULL;
    int status = 1;
    if (engine_open(&opt, lp, &eng, &err) != 0) {
        fprintf(stderr, "trainjobd: %s\n", strbuf_str(&err));
    } else if ((srv = http_server_start(eng, lp, socket_path, listen_addr, &err)) == NULL) {
        fprintf(stderr, "trainjobd: %s\n", strbuf_str(&err));
    } else {
        const char *tcp = http_server_tcp_address(srv);
        engine_log("listening on %s%s%s (pid %ld)", socket_path, tcp ? " and " : "", tcp ? tcp : "",
                   (long)getpid());
        /* Started again, whoever stopped it: clients may start it on demand once more. */
        stopmark_clear(state_dir);
        if (ready[1] >= 0) {
            char ok = 0;
            ssize_t n = write(ready[1], &ok, 1);
            (void)n;
            close(ready[1]);
            ready[1] = -1;
        }
        loop_run(lp);
        /* Stopped on purpose: a client does not start it again by itself (api/autostart). */
        char *sender = stopmark_signal_sender();
        const char *who = engine_stopped_by(eng) ? engine_stopped_by(eng) : sender;
        engine_log("stopping%s%s (workers keep running under their shims)", who ? " by " : "",
                   who ? who : "");
        if (stopmark_write(state_dir, who ? who : "a signal", &err) != 0)
            engine_log("%s", strbuf_str(&err));
        free(sender);
        status = 0;
    }
    fflush(stderr);
    if (ready[1] >= 0)
        close(ready[1]);
    http_server_stop(srv);
    engine_close(eng);
    cgroup_leave_engine(cgroups); /* its launch threads have ended with it */
    cgroup_free(cgroups);
    loop_free(lp);
    strbuf_free(&err);
    free(config_path);
    free(state_dir);
    free(socket_path);
    free(shim_path);
    close(lock_fd);
    return status;
}
