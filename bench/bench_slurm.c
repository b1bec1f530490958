/*
 * bench_slurm: trainjob on Slurm next to Slurm's own tools and next to
 * trainjobd, in one run (issues 9 and 14), as a user feels it:
 *   1. submit -> RUNNING of the same job file through the CLI, Slurm and
 *      trainjobd interleaved (S, T, S, T, …), median and p90 of 20 each;
 *   2. REST calls (and bytes) per minute that `trainjob top` on a pty costs
 *      slurmrestd while it watches 100 Slurm jobs, counted by a loopback proxy
 *      of this file between them, with nothing changing and while jobs are
 *      cancelled, per path;
 *   3. `trainjob get jobs` over 1,000 pending Slurm jobs, cold (no list kept
 *      in the cache) next to slurmrestd's own GET /jobs (as a process asking
 *      it feels it: tests/tools/unixget from exec to exit, through the same
 *      pipe as trainjob; the same GET by libcurl in this process, no exec,
 *      shown beside it) and warm (right after
 *      a cold one) next to `squeue -a` on the same cluster, with its peak RSS
 *      and how many warm lists slurmrestd answered 304 (TRAINJOB_HTTP_STATS),
 *      and over 1,000 trainjobd jobs (issue 14's row);
 *   4. nine rounds of 200 trivial jobs (one worker running `true`) through
 *      the Slurm context next to `sbatch --wrap=true` with the same GPU, as
 *      the same user, who goes first alternating (issue 24): jobs a second
 *      until Slurm ended them all (and each round's ratio, lowest to
 *      highest: slurmctld's scheduling moves one round by a third), the
 *      cluster's CPU per job (a cpuacct cgroup holding its daemons, so every
 *      slurmstepd and batch script), that plus the submitting command's own
 *      (slurmrestd, in the cluster, does for trainjob's POST what sbatch
 *      does in its own process), and each submit's exec to exit; first,
 *      `trainjob get jobs` over 10 held jobs next to `squeue -a`;
 *   5. `trainjob get jobs` cold over part 3's 1,000 jobs among 50,000: the
 *      replies slurmrestd gave for part 3's jobs recorded, the other 49,000
 *      jobs copies of them as another user's, served by a loopback fake
 *      (no test cluster holds 50,000 jobs in a bench's time), next to the
 *      same 1,000 jobs alone from the same fake: wall time, client CPU and
 *      peak RSS, and the byte-identical list both give.
 *
 * The jobs of 2 and 3 stay pending: submitted held over REST (8 POSTs in
 * flight), each with a job directory holding the job.json trainjob wrote for
 * a real submission, as its working directory, so the driver lists them as
 * its own. The cluster is started afresh before 3, so that Slurm's answers
 * carry no ended jobs of 1 and 2 (it keeps them for MinJobAge).
 *
 * It starts its own cluster (tests/slurm/cluster.sh in a mkdtemp directory,
 * ports from its pid; needs root, as slurmd does) and its own trainjobd, and
 * stops both by pid at the end, also after a failure or SIGINT/SIGTERM.
 * When Slurm cannot be started every Slurm row reads n/a with the reason
 * and it exits 0, so `make bench` goes on. Asserts nothing; exits 1 only
 * when its own setup fails. BENCH_PARTS=13 runs only parts 1 and 3;
 * BENCH_SLURM_JOBS sets part 4's jobs a round;
 * TRAINJOB_BIN, TRAINJOBD_BIN and TRAINJOB_TOP name other builds and trees.
 */
#include <arpa/inet.h>
#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <jansson.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench.h"
#include "engine/runner.h"
#include "tests/tools/seed.h"
#include "util/fileio.h"
#include "util/procstat.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#define SUBMITS 20           /* per side in part 1 */
#define RUNNING_CAP_MS 60000 /* a job not RUNNING by then counts as this */
#define WATCHED 100          /* part 2's jobs */
#define CANCELLED 10         /* of them, cancelled in the changing window */
#define WINDOW_MS 30000      /* each of part 2's windows */
#define LISTED 1000          /* part 3's jobs */
#define LIST_RUNS 10         /* part 3's alternating runs */
#define PATHS 32             /* distinct request paths the proxy keeps apart */
#define TRIVIAL_JOBS 200     /* part 4's jobs a round (BENCH_SLURM_JOBS) */
#define TRIVIAL_ROUNDS 9     /* part 4's rounds a side, interleaved, who goes first alternating */

static char tmp[64];           /* the mkdtemp directory holding everything */
static char cluster_dir[128];  /* tmp/cl, while a cluster may run there */
static char top_dir[PATH_MAX]; /* the source tree (tests/slurm/cluster.sh) */
static char trainjob[PATH_MAX], trainjobd[PATH_MAX];
/* tests/tools/cputime, built beside this bench: runs a command and says its peak RSS */
static char cputime[PATH_MAX];
/* tests/tools/unixget, built beside it: one GET over a Unix socket, the reply read and dropped */
static char unixget[PATH_MAX];
static volatile pid_t engine_pid, proxy_pid, top_pid, fake_pid;
/* part 3 ran on a cluster and left its jobs there (part 5 records their replies) */
static bool slurm_ran_3;
static int port_base;

static double now_ms(void)
{
    return bench_now_ns() / 1e6;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Prints why a step failed; returns -1 for the caller to pass up. */
static int fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("bench_slurm: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return -1;
}

/* ---- the table ------------------------------------------------------------ */

static void row(const char *what, const char *value, const char *target, const char *reference,
                const char *ratio)
{
    printf("| %-56s | %13s | %-28s | %-22s | %-7s |\n", what, value, target, reference, ratio);
    fflush(stdout);
}

static void header(void)
{
    printf("Slurm next to trainjob (%s): a local 3-node Slurm 22.05 cluster and trainjobd;\n"
           "ratio = value / reference\n",
           trainjob);
    row("measurement", "value", "target", "reference", "ratio");
    printf("|%s|%s|%s|%s|%s|\n", "----------------------------------------------------------",
           "---------------", "------------------------------", "------------------------",
           "---------");
    fflush(stdout);
}

/* v with unit, or "n/a" for v < 0. */
static void fmt(char *buf, size_t n, double v, int decimals, const char *unit)
{
    if (v < 0)
        snprintf(buf, n, "n/a");
    else
        snprintf(buf, n, "%.*f %s", decimals, v, unit);
}

static void fmt_ratio(char *buf, size_t n, double a, double b)
{
    if (a < 0 || b <= 0)
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%.2fx", a / b);
}

/* The rows a part would print, as n/a with why (never a made-up number). */
static void rows_na(const char *const *names, size_t n, const char *why)
{
    char reason[64];
    snprintf(reason, sizeof reason, "n/a: %.58s", why);
    for (size_t i = 0; i < n; i++)
        row(names[i], "n/a", "-", reason, "-");
}

/* ---- processes ------------------------------------------------------------ */

struct run {
    double ms;         /* exec to exit */
    size_t bytes;      /* of its standard output */
    int status;        /* exit status; -1 when it did not exit */
    double cpu_ms;     /* its user and system CPU */
    struct strbuf out; /* its standard output, when kept */
};

/*
 * Runs argv (searched in PATH) with TRAINJOB_CONFIG=config (unset for NULL),
 * its output counted (and kept in r->out when keep), its errors in
 * tmp/cmd.err; waits for it.
 */
static int run_cmd(char *const argv[], const char *config, bool keep, struct run *r)
{
    r->ms = -1;
    r->cpu_ms = -1;
    r->bytes = 0;
    r->status = -1;
    strbuf_reset(&r->out);
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0)
        return fail("pipe: %s", strerror(errno));
    char *errpath = xasprintf("%s/cmd.err", tmp);
    double t0 = now_ms();
    pid_t pid = fork();
    if (pid == 0) {
        int err = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int null = open("/dev/null", O_RDONLY);
        dup2(p[1], STDOUT_FILENO);
        if (err >= 0)
            dup2(err, STDERR_FILENO);
        if (null >= 0)
            dup2(null, STDIN_FILENO);
        if (config)
            setenv("TRAINJOB_CONFIG", config, 1);
        else
            unsetenv("TRAINJOB_CONFIG");
        execvp(argv[0], argv);
        _exit(127);
    }
    free(errpath);
    close(p[1]);
    if (pid < 0) {
        close(p[0]);
        return fail("fork: %s", strerror(errno));
    }
    char buf[65536];
    ssize_t n;
    while ((n = read(p[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR)) {
        if (n <= 0)
            continue;
        r->bytes += (size_t)n;
        if (keep)
            strbuf_add(&r->out, buf, (size_t)n);
    }
    close(p[0]);
    int status;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    while (wait4(pid, &status, 0, &ru) < 0 && errno == EINTR)
        ;
    r->ms = now_ms() - t0;
    r->cpu_ms = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
                (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
    r->status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return 0;
}

/* The last bytes of tmp/cmd.err on one line, for a failure message. */
static void cmd_err_tail(char *out, size_t n)
{
    char *path = xasprintf("%s/cmd.err", tmp), *data = NULL;
    size_t len = 0;
    struct strbuf err = STRBUF_INIT;
    out[0] = '\0';
    if (file_read_all(path, 1 << 20, &data, &len, &err) == 0) {
        size_t from = len > n - 1 ? len - (n - 1) : 0, k = 0;
        for (size_t i = from; i < len && k + 1 < n; i++)
            out[k++] = data[i] == '\n' ? ' ' : data[i];
        out[k] = '\0';
    }
    free(data);
    free(path);
    strbuf_free(&err);
}

/*
 * The peak resident set of argv, in KiB, or -1. Run through cputime, a
 * small process: the ru_maxrss of a child of this bench counts the pages it
 * shared with the bench before its exec, so every command looked as big as
 * the bench (10.2 MiB for trainjob and squeue alike).
 */
static long peak_rss_kb(char *const argv[], const char *config, struct run *r)
{
    size_t n = 0;
    while (argv[n])
        n++;
    char **av = xcalloc(n + 2, sizeof *av);
    av[0] = cputime;
    memcpy(av + 1, argv, n * sizeof *av);
    long kb = -1;
    if (run_cmd(av, config, false, r) == 0 && r->status == 0) {
        char *path = xasprintf("%s/cmd.err", tmp), *data = NULL, *at;
        size_t len = 0;
        struct strbuf err = STRBUF_INIT;
        if (file_read_all(path, 1 << 20, &data, &len, &err) == 0 &&
            (at = strstr(data, "maxrss_kb ")) != NULL)
            kb = strtol(at + strlen("maxrss_kb "), NULL, 10);
        free(data);
        free(path);
        strbuf_free(&err);
    }
    free(av);
    return kb;
}

/* SIGTERM to pid, SIGKILL after 5 s; reaps it. */
static void stop_pid(volatile pid_t *pidp)
{
    pid_t pid = *pidp;
    if (pid <= 0)
        return;
    kill(pid, SIGTERM);
    double end = now_ms() + 5000;
    while (waitpid(pid, NULL, WNOHANG) == 0) {
        if (now_ms() > end) {
            kill(pid, SIGKILL);
            waitpid(pid, NULL, 0);
            break;
        }
        sleep_ms(10);
    }
    *pidp = 0;
}

/* ---- the cluster ---------------------------------------------------------- */

/* Runs `sh tests/slurm/cluster.sh CMD DIR`, its output to tmp/cluster.log; its exit status. */
static int cluster_cmd(const char *cmd)
{
    char *script = xasprintf("%s/tests/slurm/cluster.sh", top_dir);
    char *log = xasprintf("%s/cluster.log", tmp);
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0600);
        if (fd >= 0) {
            dup2(fd, STDOUT_FILENO);
            dup2(fd, STDERR_FILENO);
        }
        char pb[16];
        snprintf(pb, sizeof pb, "%d", port_base);
        setenv("TJ_SLURM_PORT_BASE", pb, 1);
        execlp("sh", "sh", script, cmd, cluster_dir, (char *)NULL);
        _exit(127);
    }
    int status = -1;
    if (pid > 0)
        waitpid(pid, &status, 0);
    free(script);
    free(log);
    return pid > 0 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Signals end the run through here: the cluster, trainjobd, top, the proxy and the fake stop by
 * pid. */
static void on_signal(int sig)
{
    pid_t kids[] = {top_pid, proxy_pid, engine_pid, fake_pid};
    for (size_t i = 0; i < sizeof kids / sizeof kids[0]; i++)
        if (kids[i] > 0)
            kill(kids[i], SIGKILL);
    if (cluster_dir[0]) {
        char script[PATH_MAX + 32];
        size_t n = strlen(top_dir);
        if (n + 24 < sizeof script) {
            memcpy(script, top_dir, n);
            memcpy(script + n, "/tests/slurm/cluster.sh", 24);
            pid_t pid = fork();
            if (pid == 0) {
                execlp("sh", "sh", script, "stop", cluster_dir, (char *)NULL);
                _exit(127);
            }
            if (pid > 0)
                waitpid(pid, NULL, 0);
        }
    }
    pid_t pid = tmp[0] ? fork() : -1;
    if (pid == 0) {
        execlp("rm", "rm", "-rf", tmp, (char *)NULL);
        _exit(127);
    }
    if (pid > 0)
        waitpid(pid, NULL, 0);
    _exit(128 + sig);
}

/* Reads DIR/env (lines `export K='V'`) into this process's environment; -1 when unreadable. */
static int cluster_env(void)
{
    char *path = xasprintf("%s/env", cluster_dir), *data = NULL;
    size_t len = 0;
    struct strbuf err = STRBUF_INIT;
    int rc = file_read_all(path, 1 << 16, &data, &len, &err) == 0 ? 0 : -1;
    for (char *line = rc == 0 ? strtok(data, "\n") : NULL; line; line = strtok(NULL, "\n")) {
        if (strncmp(line, "export ", 7) != 0)
            continue;
        char *eq = strchr(line, '=');
        if (eq == NULL || eq[1] != '\'' || strlen(eq) < 3 || eq[strlen(eq) - 1] != '\'')
            continue;
        *eq = '\0';
        eq[strlen(eq + 1)] = '\0'; /* the closing quote */
        setenv(line + 7, eq + 2, 1);
    }
    free(data);
    free(path);
    strbuf_free(&err);
    return rc == 0 && getenv("SLURMRESTD_TOKEN") && getenv("TJ_SLURM_JOBS_DIR") &&
                   getenv("SLURMRESTD_URL")
               ? 0
               : -1;
}

/*
 * Starts a fresh cluster in tmp/cl (Slurm's state is wiped on every start:
 * job ids restart at 1) and loads its env. 0, or -1 with why.
 */
static int cluster_start(char *why, size_t whysz)
{
    if (cluster_dir[0])
        cluster_cmd("stop");
    snprintf(cluster_dir, sizeof cluster_dir, "%s/cl", tmp);
    if (cluster_cmd("start") != 0 || cluster_env() != 0) {
        char *log = xasprintf("%s/cluster.log", tmp), *data = NULL;
        size_t len = 0;
        struct strbuf err = STRBUF_INIT;
        snprintf(why, whysz, "the cluster did not start");
        if (file_read_all(log, 1 << 20, &data, &len, &err) == 0) {
            /* the last "ERROR" line says why */
            char *e = NULL;
            for (char *p = data; (p = strstr(p, "ERROR: ")) != NULL; p++)
                e = p + 7;
            if (e)
                snprintf(why, whysz, "%.*s", (int)strcspn(e, "\n"), e);
        }
        fail("the Slurm cluster did not start (see %s): %s", log, why);
        free(data);
        free(log);
        strbuf_free(&err);
        return -1;
    }
    return 0;
}

/* ---- trainjob's configuration -------------------------------------------- */

/* tmp/NAME.yaml: one context, driver slurm, on endpoint. */
static char *slurm_config(const char *name, const char *endpoint)
{
    char *path = xasprintf("%s/%s.yaml", tmp, name), *token = xasprintf("%s/token", tmp);
    struct strbuf y = STRBUF_INIT, err = STRBUF_INIT;
    strbuf_addf(&y, "%s\n", getenv("SLURMRESTD_TOKEN"));
    if (file_write_atomic(token, y.buf, y.len, 0600, &err) != 0)
        fail("%s", strbuf_str(&err));
    strbuf_reset(&y);
    strbuf_addf(&y,
                "current_context: lab\n"
                "contexts:\n"
                "  - name: lab\n"
                "    driver: slurm\n"
                "    endpoint: %s\n"
                "    user: %s\n"
                "    token_file: %s\n"
                "    jobs_dir: %s\n"
                "    workspace: default\n",
                endpoint, getenv("SLURMRESTD_USER"), token, getenv("TJ_SLURM_JOBS_DIR"));
    if (file_write_atomic(path, y.buf, y.len, 0600, &err) != 0)
        fail("%s", strbuf_str(&err));
    strbuf_free(&y);
    strbuf_free(&err);
    free(token);
    return path;
}

/* The job file of part 1, the same for Slurm and trainjobd but for its name. */
static char *job_file(const char *name)
{
    char *path = xasprintf("%s/%s.job.yaml", tmp, name);
    struct strbuf y = STRBUF_INIT, err = STRBUF_INIT;
    strbuf_addf(&y,
                "workspace_name: default\n"
                "name: %s\n"
                "display_name: %s\n"
                "framework: PYTORCH_DDP\n"
                "resource_pool:\n"
                "  name: standard\n"
                "roles:\n"
                "  - total_replicas: 1\n"
                "    resource_spec:\n"
                "      - name: gpu-1\n"
                "    image_path: local/host\n"
                "    startup_script: sleep 600\n",
                name, name);
    if (file_write_atomic(path, y.buf, y.len, 0644, &err) != 0)
        fail("%s", strbuf_str(&err));
    strbuf_free(&y);
    strbuf_free(&err);
    return path;
}

/* ---- trainjobd ------------------------------------------------------------ */

static char engine_socket[128];

/*
 * Starts trainjobd on dir (engine.yaml there, state in dir/state, socket
 * dir/s.sock) and waits until `trainjob get jobs` answers. 0, or -1.
 */
static int engine_start(const char *dir)
{
    char *config = xasprintf("%s/engine.yaml", dir), *state = xasprintf("%s/state", dir);
    char *log = xasprintf("%s/engine.log", dir);
    snprintf(engine_socket, sizeof engine_socket, "%.110s/s.sock", dir);
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd >= 0) {
            dup2(fd, STDOUT_FILENO);
            dup2(fd, STDERR_FILENO);
        }
        execl(trainjobd, "trainjobd", "--foreground", "--grace", "1", "--config", config,
              "--state-dir", state, "--socket", engine_socket, (char *)NULL);
        _exit(127);
    }
    engine_pid = pid > 0 ? pid : 0;
    char endpoint[160];
    snprintf(endpoint, sizeof endpoint, "http+unix://%s", engine_socket);
    char *argv[] = {trainjob, "--endpoint", endpoint, "get", "catalog", NULL};
    struct run r = {.out = STRBUF_INIT};
    int rc = -1;
    for (double end = now_ms() + 60000; pid > 0 && now_ms() < end; sleep_ms(50)) {
        if (waitpid(pid, NULL, WNOHANG) == pid) {
            engine_pid = 0;
            break;
        }
        struct stat st;
        if (stat(engine_socket, &st) == 0 && run_cmd(argv, NULL, false, &r) == 0 && r.status == 0) {
            rc = 0;
            break;
        }
    }
    if (rc != 0)
        fail("trainjobd on %s did not answer (see %s)", dir, log);
    strbuf_free(&r.out);
    free(config);
    free(state);
    free(log);
    return rc;
}

/* Stops trainjobd, then the workers it left running (it keeps them across restarts). */
static void engine_stop(const char *dir)
{
    stop_pid(&engine_pid);
    char *status = xasprintf("%s/state/status", dir);
    DIR *dp = opendir(status);
    struct dirent *e;
    while (dp && (e = readdir(dp)) != NULL) {
        size_t n = strlen(e->d_name);
        if (n < 5 || strcmp(e->d_name + n - 4, ".pid") != 0)
            continue;
        char *path = xasprintf("%s/%.*s", status, (int)(n - 4), e->d_name);
        struct runner_proc proc;
        if (access(path, F_OK) != 0 && runner_read_pidfile(path, &proc) == 0)
            runner_kill_group(&proc, SIGKILL);
        free(path);
    }
    if (dp)
        closedir(dp);
    free(status);
}

/* engine.yaml for part 1: the cluster's shape (3 nodes, 8 GPUs, 8 CPUs, 8,000 MiB), pool and spec
 * named as Slurm's. */
static int engine_config_like_slurm(const char *dir)
{
    struct strbuf y = STRBUF_INIT, err = STRBUF_INIT;
    strbuf_addf(&y,
                "subscription: local\n"
                "resource_group: default\n"
                "zone: local-1z\n"
                "regions:\n"
                "- {name: local-1, zones: [local-1z], vpcs: [vpc-local]}\n"
                "workspaces:\n"
                "- name: default\n"
                "  owners: [%s]\n"
                "nodes:\n",
                seed_user());
    for (int i = 1; i <= 3; i++)
        strbuf_addf(&y,
                    "- {name: n%d, gpus: 8, gpu_type: simulated, cpus: 8, memory_mib: 8000, "
                    "simulated: true}\n",
                    i);
    strbuf_adds(&y, "pools:\n"
                    "- {name: standard, type: dedicated}\n"
                    "specs:\n"
                    "- {name: gpu-1, gpus: 1, cpus: 1, memory_mib: 1000}\n"
                    "images:\n"
                    "- {path: local/host}\n");
    char *path = xasprintf("%s/engine.yaml", dir);
    int rc =
        file_mkdirs(dir, 0700, &err) == 0 && file_write_atomic(path, y.buf, y.len, 0600, &err) == 0
            ? 0
            : fail("%s", strbuf_str(&err));
    free(path);
    strbuf_free(&y);
    strbuf_free(&err);
    return rc;
}

/* ---- 1: submit -> RUNNING ------------------------------------------------- */

/* The first job.json of a Slurm job trainjob made, kept for part 2 and 3's directories. */
static struct strbuf template_json = STRBUF_INIT;

static void keep_template(const char *name)
{
    if (template_json.len)
        return;
    char *path = xasprintf("%s/default/%s/job.json", getenv("TJ_SLURM_JOBS_DIR"), name);
    char *data = NULL;
    size_t len = 0;
    struct strbuf err = STRBUF_INIT;
    if (file_read_all(path, 1 << 20, &data, &len, &err) == 0)
        strbuf_add(&template_json, data, len);
    free(data);
    free(path);
    strbuf_free(&err);
}

/*
 * exec of `trainjob submit -f FILE` to the first `trainjob get job NAME`
 * saying RUNNING, ms (RUNNING_CAP_MS when never); then deletes the job.
 * -1 when a command failed (why in why).
 */
static double submit_to_running(const char *name, const char *config, const char *endpoint,
                                char *why, size_t whysz)
{
    char *file = job_file(name);
    char *sub[] = {trainjob, "--endpoint", (char *)endpoint, "submit", "-f", file, NULL};
    char *get[] = {trainjob, "--endpoint", (char *)endpoint, "get", "job", (char *)name, NULL};
    char *del[] = {trainjob, "--endpoint", (char *)endpoint, "delete", (char *)name, NULL};
    if (endpoint == NULL) { /* the context's */
        memmove(sub + 1, sub + 3, 4 * sizeof *sub);
        memmove(get + 1, get + 3, 4 * sizeof *get);
        memmove(del + 1, del + 3, 3 * sizeof *del);
    }
    struct run r = {.out = STRBUF_INIT};
    double t0 = now_ms(), dt = -1;
    if (run_cmd(sub, config, false, &r) != 0 || r.status != 0) {
        char err[160];
        cmd_err_tail(err, sizeof err);
        snprintf(why, whysz, "submit %s: %s", name, err);
        goto out;
    }
    if (config)
        keep_template(name);
    for (;;) {
        if (run_cmd(get, config, true, &r) != 0 || r.status != 0) {
            char err[160];
            cmd_err_tail(err, sizeof err);
            snprintf(why, whysz, "get job %s: %s", name, err);
            goto out;
        }
        dt = now_ms() - t0;
        const char *o = strbuf_str(&r.out);
        if (strstr(o, "\nstate: RUNNING\n"))
            break;
        if (strstr(o, "\nstate: FAILED") || strstr(o, "\nstate: SUCCEEDED") ||
            strstr(o, "\nstate: SUSPENDED")) {
            snprintf(why, whysz, "%s ended before RUNNING: %.80s", name, o);
            dt = -1;
            goto out;
        }
        if (dt > RUNNING_CAP_MS) {
            dt = RUNNING_CAP_MS;
            break;
        }
    }
out:
    /* the cluster (and the engine) stays empty: delete it, waiting, outside the figure */
    run_cmd(del, config, false, &r);
    strbuf_free(&r.out);
    free(file);
    return dt;
}

static const char *const part1_rows[] = {
    "submit -> RUNNING via CLI, trainjobd (median of 20)",
    "  p90",
    "submit -> RUNNING via CLI, Slurm (median of 20)",
    "  p90",
};

static void part1(bool slurm_up, const char *slurm_why, const char *slurm_cfg)
{
    char dir[128], why[256] = "", endpoint[160];
    snprintf(dir, sizeof dir, "%s/e1", tmp);
    if (engine_config_like_slurm(dir) != 0 || engine_start(dir) != 0) {
        engine_stop(dir);
        rows_na(part1_rows, 4, "trainjobd did not start");
        return;
    }
    snprintf(endpoint, sizeof endpoint, "http+unix://%s", engine_socket);
    double s[SUBMITS], t[SUBMITS];
    int ns = 0, nt = 0, capped = 0;
    fprintf(stderr, "bench_slurm: 1: %d submissions each, interleaved\n", SUBMITS);
    for (int i = 0; i < SUBMITS; i++) {
        char name[32];
        if (slurm_up && ns >= 0) {
            snprintf(name, sizeof name, "s-%02d", i);
            double ms = submit_to_running(name, slurm_cfg, NULL, why, sizeof why);
            if (ms < 0) {
                fail("1: Slurm: %s", why);
                ns = -1;
            } else {
                capped += ms >= RUNNING_CAP_MS;
                s[ns++] = ms;
            }
        }
        if (nt >= 0) {
            snprintf(name, sizeof name, "t-%02d", i);
            char twhy[256];
            double ms = submit_to_running(name, NULL, endpoint, twhy, sizeof twhy);
            if (ms < 0) {
                fail("1: trainjobd: %s", twhy);
                nt = -1;
            } else {
                capped += ms >= RUNNING_CAP_MS;
                t[nt++] = ms;
            }
        }
    }
    engine_stop(dir);
    if (capped)
        fprintf(stderr, "bench_slurm: 1: %d jobs were not RUNNING within %d s (counted as that)\n",
                capped, RUNNING_CAP_MS / 1000);
    double tm = nt > 0 ? bench_quantile(t, (size_t)nt, 0.5) : -1;
    double tp = nt > 0 ? bench_quantile(t, (size_t)nt, 0.9) : -1;
    double sm = ns > 0 ? bench_quantile(s, (size_t)ns, 0.5) : -1;
    double sp = ns > 0 ? bench_quantile(s, (size_t)ns, 0.9) : -1;
    char v[32], ref[64], ratio[16];
    const char *sref = !slurm_up ? slurm_why : ns < 0 ? why : NULL;
    fmt(v, sizeof v, tm, 1, "ms");
    if (sref)
        snprintf(ref, sizeof ref, "Slurm n/a: %.50s", sref);
    else
        snprintf(ref, sizeof ref, "Slurm %.0f ms", sm);
    fmt_ratio(ratio, sizeof ratio, tm, sm);
    row(part1_rows[0], v, "side by side with Slurm", ref, ratio);
    fmt(v, sizeof v, tp, 1, "ms");
    if (!sref)
        snprintf(ref, sizeof ref, "Slurm %.0f ms", sp);
    fmt_ratio(ratio, sizeof ratio, tp, sp);
    row(part1_rows[1], v, "-", ref, ratio);
    fmt(v, sizeof v, sm, 0, "ms");
    row(part1_rows[2], v, "-", sref ? ref : "(the reference)", "-");
    fmt(v, sizeof v, sp, 0, "ms");
    row(part1_rows[3], v, "-", "-", "-");
}

/* ---- held Slurm jobs, submitted over REST ---------------------------------- */

static size_t on_reply(char *data, size_t size, size_t n, void *ctx)
{
    strbuf_add(ctx, data, size * n);
    return size * n;
}

/*
 * n held jobs PREFIX-NNN in the standard partition, each with its job
 * directory (holding the job.json trainjob wrote for part 1's first job) as
 * its working directory, so that trainjob's driver lists them as its own;
 * 8 POSTs in flight. Their Slurm ids in ids. 0, or -1 with why.
 */
static int submit_held(const char *prefix, int n, long *ids, char *why, size_t whysz)
{
    const char *jobs = getenv("TJ_SLURM_JOBS_DIR");
    char *url = xasprintf("%s/slurm/v0.0.38/job/submit", getenv("SLURMRESTD_URL"));
    char *user = xasprintf("X-SLURM-USER-NAME: %s", getenv("SLURMRESTD_USER"));
    char *token = xasprintf("X-SLURM-USER-TOKEN: %s", getenv("SLURMRESTD_TOKEN"));
    struct curl_slist *h = curl_slist_append(NULL, user);
    h = curl_slist_append(h, token);
    h = curl_slist_append(h, "Content-Type: application/json");
    CURLM *m = curl_multi_init();
    struct slot {
        CURL *c;
        int job;
        struct strbuf body, reply;
    } slots[8];
    memset(slots, 0, sizeof slots);
    int next = 0, done = 0, rc = 0;
    struct strbuf err = STRBUF_INIT;
    while (done < n && rc == 0) {
        for (size_t k = 0; k < 8 && next < n; k++) {
            struct slot *s = &slots[k];
            if (s->c)
                continue;
            char *dir = xasprintf("%s/default/%s-%03d", jobs, prefix, next);
            char *jj = xasprintf("%s/job.json", dir);
            /* The mark a submit writes, in the directory and the comment: the driver's own job. */
            char *mk = xasprintf("%s/mark", dir);
            char mark[33];
            snprintf(mark, sizeof mark, "%032x", (unsigned)next);
            if (file_mkdirs(dir, 0755, &err) != 0 ||
                file_write_atomic(mk, mark, 32, 0644, &err) != 0 ||
                (template_json.len &&
                 file_write_atomic(jj, template_json.buf, template_json.len, 0644, &err) != 0)) {
                snprintf(why, whysz, "%s", strbuf_str(&err));
                rc = -1;
            }
            strbuf_reset(&s->body);
            strbuf_reset(&s->reply);
            strbuf_addf(&s->body,
                        "{\"script\":\"#!/bin/sh\\nsleep 600\\n\",\"job\":{\"name\":\"%s-%03d\","
                        "\"partition\":\"standard\",\"nodes\":1,\"tasks\":1,\"hold\":true,"
                        "\"current_working_directory\":\"%s\",\"comment\":\"trainjob:%s\","
                        "\"environment\":{\"PATH\":\"/usr/bin:/bin\"},"
                        "\"standard_output\":\"/dev/null\",\"standard_error\":\"/dev/null\"}}",
                        prefix, next, dir, mark);
            free(mk);
            free(dir);
            free(jj);
            s->c = curl_easy_init();
            s->job = next++;
            curl_easy_setopt(s->c, CURLOPT_URL, url);
            curl_easy_setopt(s->c, CURLOPT_HTTPHEADER, h);
            curl_easy_setopt(s->c, CURLOPT_POSTFIELDS, s->body.buf);
            curl_easy_setopt(s->c, CURLOPT_WRITEFUNCTION, on_reply);
            curl_easy_setopt(s->c, CURLOPT_WRITEDATA, &s->reply);
            curl_easy_setopt(s->c, CURLOPT_TIMEOUT_MS, 60000L);
            curl_multi_add_handle(m, s->c);
        }
        int running = 0;
        curl_multi_perform(m, &running);
        curl_multi_poll(m, NULL, 0, 100, NULL);
        CURLMsg *msg;
        int left;
        while ((msg = curl_multi_info_read(m, &left)) != NULL) {
            if (msg->msg != CURLMSG_DONE)
                continue;
            for (size_t k = 0; k < 8; k++) {
                struct slot *s = &slots[k];
                if (s->c != msg->easy_handle)
                    continue;
                long code = 0;
                curl_easy_getinfo(s->c, CURLINFO_RESPONSE_CODE, &code);
                const char *id = strstr(strbuf_str(&s->reply), "\"job_id\"");
                if (msg->data.result != CURLE_OK || code != 200 || id == NULL) {
                    snprintf(why, whysz, "POST job/submit: %s %ld %.80s",
                             curl_easy_strerror(msg->data.result), code, strbuf_str(&s->reply));
                    rc = -1;
                } else {
                    ids[s->job] = strtol(id + strcspn(id, "0123456789"), NULL, 10);
                    done++;
                }
                curl_multi_remove_handle(m, s->c);
                curl_easy_cleanup(s->c);
                s->c = NULL;
            }
        }
    }
    for (size_t k = 0; k < 8; k++) {
        if (slots[k].c) {
            curl_multi_remove_handle(m, slots[k].c);
            curl_easy_cleanup(slots[k].c);
        }
        strbuf_free(&slots[k].body);
        strbuf_free(&slots[k].reply);
    }
    curl_multi_cleanup(m);
    curl_slist_free_all(h);
    strbuf_free(&err);
    free(url);
    free(user);
    free(token);
    if (rc != 0)
        fail("submitting held jobs: %s", why);
    return rc;
}

/* ---- 2: the counting proxy -------------------------------------------------- */

/* What the proxy counted; in memory shared with its process. */
struct proxy_counts {
    long requests;
    long bytes_up, bytes_down;
    /* gaps between two requests: the shortest, their sum and count; reset by the bench */
    double last_ns, min_gap_ns, gap_sum_ns;
    long gaps;
    int npaths;
    struct {
        char key[96];
        long count;
    } paths[PATHS];
};

static struct proxy_counts *counts;

/* One connection: the client's side, upstream's, and where its request stream is. */
struct pconn {
    int client, up;
    char line[1024];
    size_t len;
    bool in_headers;
    long content_length, body_left;
};

/* "GET /slurm/v0.0.38/job/17?update_time=5 HTTP/1.1" -> "GET /slurm/v0.0.38/job/ID?update_time". */
static void path_key(const char *line, char *key, size_t n)
{
    struct strbuf k = STRBUF_INIT;
    const char *sp = strchr(line, ' ');
    strbuf_add(&k, line, sp ? (size_t)(sp - line) : strlen(line));
    strbuf_addc(&k, ' ');
    const char *p = sp ? sp + 1 : "";
    size_t plen = strcspn(p, " ?");
    for (size_t i = 0; i < plen;) {
        size_t seg = strcspn(p + i, "/");
        if (seg > plen - i)
            seg = plen - i;
        bool digits = seg > 0 && strspn(p + i, "0123456789") >= seg;
        if (digits)
            strbuf_adds(&k, "ID");
        else
            strbuf_add(&k, p + i, seg);
        i += seg;
        if (i < plen && p[i] == '/') {
            strbuf_addc(&k, '/');
            i++;
        }
    }
    /* the query's names, not its values: "?update_time" */
    const char *q = p[plen] == '?' ? p + plen + 1 : NULL;
    for (char sep = '?'; q && *q && *q != ' '; sep = '&') {
        size_t name = strcspn(q, "=& ");
        strbuf_addf(&k, "%c%.*s", sep, (int)name, q);
        q += strcspn(q, "& ");
        q += *q == '&';
    }
    snprintf(key, n, "%s", strbuf_str(&k));
    strbuf_free(&k);
}

static void count_request(const char *line)
{
    char key[96];
    path_key(line, key, sizeof key);
    __atomic_add_fetch(&counts->requests, 1, __ATOMIC_RELAXED);
    double now = bench_now_ns();
    if (counts->last_ns > 0 &&
        (counts->min_gap_ns <= 0 || now - counts->last_ns < counts->min_gap_ns))
        counts->min_gap_ns = now - counts->last_ns;
    if (counts->last_ns > 0) {
        counts->gap_sum_ns += now - counts->last_ns;
        counts->gaps++;
    }
    counts->last_ns = now;
    int i;
    for (i = 0; i < counts->npaths; i++)
        if (strcmp(counts->paths[i].key, key) == 0)
            break;
    if (i == counts->npaths && i < PATHS) {
        snprintf(counts->paths[i].key, sizeof counts->paths[i].key, "%s", key);
        __atomic_store_n(&counts->npaths, i + 1, __ATOMIC_RELEASE);
    }
    if (i < PATHS)
        __atomic_add_fetch(&counts->paths[i].count, 1, __ATOMIC_RELAXED);
}

/* Follows the client's bytes: request lines, headers, Content-Length bodies. */
static void scan_requests(struct pconn *c, const char *buf, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (c->body_left > 0) {
            size_t skip = (size_t)c->body_left < n - i ? (size_t)c->body_left : n - i;
            c->body_left -= (long)skip;
            i += skip - 1;
            continue;
        }
        if (buf[i] != '\n') {
            if (c->len < sizeof c->line - 1)
                c->line[c->len++] = buf[i];
            continue;
        }
        if (c->len && c->line[c->len - 1] == '\r')
            c->len--;
        c->line[c->len] = '\0';
        if (!c->in_headers) {
            if (c->len) {
                count_request(c->line);
                c->in_headers = true;
                c->content_length = 0;
            }
        } else if (c->len == 0) {
            c->in_headers = false;
            c->body_left = c->content_length;
        } else if (strncasecmp(c->line, "content-length:", 15) == 0) {
            c->content_length = atol(c->line + 15);
        }
        c->len = 0;
    }
}

/* Writes all of buf to fd (blocking); false when it cannot. */
static bool write_all(int fd, const char *buf, size_t n)
{
    while (n) {
        ssize_t w = write(fd, buf, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        buf += w;
        n -= (size_t)w;
    }
    return true;
}

/* The proxy's process: accepts on lfd, connects each client to up, copies and counts. */
static void proxy_main(int lfd, const struct sockaddr_in *up)
{
    struct pconn conns[64];
    size_t nc = 0;
    char buf[65536];
    for (;;) {
        struct pollfd p[1 + 2 * 64];
        p[0] = (struct pollfd){lfd, POLLIN, 0};
        for (size_t i = 0; i < nc; i++) {
            p[1 + 2 * i] = (struct pollfd){conns[i].client, POLLIN, 0};
            p[2 + 2 * i] = (struct pollfd){conns[i].up, POLLIN, 0};
        }
        if (poll(p, 1 + 2 * nc, -1) < 0)
            continue;
        for (size_t i = nc; i-- > 0;) {
            struct pconn *c = &conns[i];
            bool gone = false;
            for (int side = 0; side < 2 && !gone; side++) {
                if (!(p[1 + 2 * i + side].revents & (POLLIN | POLLHUP | POLLERR)))
                    continue;
                int from = side ? c->up : c->client, to = side ? c->client : c->up;
                ssize_t r = read(from, buf, sizeof buf);
                if (r <= 0) {
                    gone = true;
                    break;
                }
                if (side == 0) {
                    scan_requests(c, buf, (size_t)r);
                    __atomic_add_fetch(&counts->bytes_up, r, __ATOMIC_RELAXED);
                } else {
                    __atomic_add_fetch(&counts->bytes_down, r, __ATOMIC_RELAXED);
                }
                gone = !write_all(to, buf, (size_t)r);
            }
            if (gone) {
                close(c->client);
                close(c->up);
                conns[i] = conns[--nc];
            }
        }
        if (p[0].revents & POLLIN) {
            int cfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
            if (cfd < 0)
                continue;
            int ufd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
            if (nc == 64 || ufd < 0 || connect(ufd, (const struct sockaddr *)up, sizeof *up) != 0) {
                close(cfd);
                if (ufd >= 0)
                    close(ufd);
                continue;
            }
            memset(&conns[nc], 0, sizeof conns[nc]);
            conns[nc].client = cfd;
            conns[nc].up = ufd;
            nc++;
        }
    }
}

/* Starts the proxy to slurmrestd's TCP port on a free loopback port; that port, or -1. */
static int proxy_start(void)
{
    const char *url = getenv("SLURMRESTD_URL"); /* http://127.0.0.1:PORT */
    const char *colon = url ? strrchr(url, ':') : NULL;
    struct sockaddr_in up = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    up.sin_port = htons((uint16_t)(colon ? atoi(colon + 1) : 0));
    struct sockaddr_in me = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof me;
    int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (lfd < 0 || bind(lfd, (struct sockaddr *)&me, sizeof me) != 0 || listen(lfd, 64) != 0 ||
        getsockname(lfd, (struct sockaddr *)&me, &len) != 0) {
        if (lfd >= 0)
            close(lfd);
        return fail("proxy: %s", strerror(errno));
    }
    if (counts == NULL) {
        counts =
            mmap(NULL, sizeof *counts, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (counts == MAP_FAILED) {
            counts = NULL;
            close(lfd);
            return fail("mmap: %s", strerror(errno));
        }
    }
    memset(counts, 0, sizeof *counts);
    pid_t pid = fork();
    if (pid == 0) {
        signal(SIGTERM, SIG_DFL);
        signal(SIGINT, SIG_DFL);
        signal(SIGPIPE, SIG_IGN);
        proxy_main(lfd, &up);
        _exit(0);
    }
    close(lfd);
    if (pid < 0)
        return fail("fork: %s", strerror(errno));
    proxy_pid = pid;
    return ntohs(me.sin_port);
}

/* ---- 2: trainjob top watching ------------------------------------------------ */

/* CPU (user + system) pid has used, ms. */
static double cpu_ms(pid_t pid)
{
    double ms = 0;
    return procstat_cpu_ms(pid, &ms, NULL) == 0 ? ms : 0;
}

struct window {
    long requests, up, down;
    long path[PATHS];
    double cpu_ms;
    double min_gap_ms, mean_gap_ms; /* since the window before */
};

static void snapshot(struct window *w)
{
    w->requests = __atomic_load_n(&counts->requests, __ATOMIC_RELAXED);
    w->up = __atomic_load_n(&counts->bytes_up, __ATOMIC_RELAXED);
    w->down = __atomic_load_n(&counts->bytes_down, __ATOMIC_RELAXED);
    for (int i = 0; i < PATHS; i++)
        w->path[i] = __atomic_load_n(&counts->paths[i].count, __ATOMIC_RELAXED);
    w->cpu_ms = top_pid > 0 ? cpu_ms(top_pid) : -1;
    w->min_gap_ms = counts->min_gap_ns > 0 ? counts->min_gap_ns / 1e6 : -1;
    w->mean_gap_ms = counts->gaps ? counts->gap_sum_ns / (double)counts->gaps / 1e6 : -1;
    counts->min_gap_ns = counts->gap_sum_ns = 0; /* a race with the proxy loses one gap */
    counts->gaps = 0;
}

static const char *const part2_rows[] = {
    "REST calls/min, top over 100 Slurm jobs, quiet",
    "  bytes/min (to slurmrestd / from it)",
    "  gap between two calls, shortest/mean",
    "REST calls/min, same, 10 jobs cancelled meanwhile",
    "  bytes/min (to slurmrestd / from it)",
    "  gap between two calls, shortest/mean",
};

static void window_rows(const char *calls_row, const char *bytes_row, const struct window *a,
                        const struct window *b, double ms, const char *target)
{
    char v[32], ref[64];
    double per = 60000.0 / ms;
    fmt(v, sizeof v, (double)(b->requests - a->requests) * per, 1, "/min");
    snprintf(ref, sizeof ref, "top CPU %.0f ms/min",
             a->cpu_ms >= 0 && b->cpu_ms >= 0 ? (b->cpu_ms - a->cpu_ms) * per : -1.0);
    row(calls_row, v, target, ref, "-");
    snprintf(v, sizeof v, "%.0f/%.0f kB", (double)(b->up - a->up) * per / 1e3,
             (double)(b->down - a->down) * per / 1e3);
    row(bytes_row, v, "-", "-", "-");
    if (b->min_gap_ms < 0)
        snprintf(v, sizeof v, "n/a");
    else
        snprintf(v, sizeof v, "%.0f/%.0f ms", b->min_gap_ms, b->mean_gap_ms);
    row("  gap between two calls, shortest/mean", v, ">= 1000 ms", "-", "-");
}

static void part2(bool slurm_up, const char *slurm_why)
{
    if (!slurm_up) {
        rows_na(part2_rows, 6, slurm_why);
        return;
    }
    char why[256] = "";
    long ids[WATCHED];
    int port = -1, fd = -1;
    char *config = NULL;
    struct strbuf seen = STRBUF_INIT;
    fprintf(stderr, "bench_slurm: 2: %d held jobs, top through a counting proxy\n", WATCHED);
    if (submit_held("h", WATCHED, ids, why, sizeof why) != 0)
        goto na;
    if ((port = proxy_start()) < 0) {
        snprintf(why, sizeof why, "the proxy did not start");
        goto na;
    }
    char endpoint[64];
    snprintf(endpoint, sizeof endpoint, "http://127.0.0.1:%d", port);
    config = slurm_config("proxy", endpoint);
    struct winsize ws = {.ws_row = 40, .ws_col = 140};
    pid_t pid = forkpty(&fd, NULL, NULL, &ws);
    if (pid == 0) {
        setenv("TERM", "screen-256color", 1);
        setenv("LANG", "C.UTF-8", 1);
        setenv("TRAINJOB_CONFIG", config, 1);
        execl(trainjob, "trainjob", "top", (char *)NULL);
        _exit(127);
    }
    if (pid < 0) {
        snprintf(why, sizeof why, "forkpty: %s", strerror(errno));
        goto na;
    }
    top_pid = pid;
    /* the jobs are on its screen (h-0NN), then it settles for 5 s outside the figures */
    if (!bench_pty_wait(fd, 60000, "h-0", &seen)) {
        snprintf(why, sizeof why, "trainjob top never showed the jobs");
        goto na;
    }
    bench_pty_wait(fd, 5000, NULL, NULL);
    struct window w0, w1, w2;
    snapshot(&w0);
    double t0 = now_ms();
    bench_pty_wait(fd, WINDOW_MS, NULL, NULL);
    snapshot(&w1);
    double t1 = now_ms();
    for (int i = 0; i < CANCELLED; i++) {
        char id[24];
        snprintf(id, sizeof id, "%ld", ids[i]);
        char *argv[] = {"scancel", id, NULL};
        struct run r = {.out = STRBUF_INIT};
        run_cmd(argv, NULL, false, &r);
        strbuf_free(&r.out);
        bench_pty_wait(fd, (int)(t1 + (double)(i + 1) * WINDOW_MS / CANCELLED - now_ms()), NULL,
                       NULL);
    }
    snapshot(&w2);
    double t2 = now_ms();
    if (w1.cpu_ms < 0 || w2.cpu_ms < 0 || waitpid(top_pid, NULL, WNOHANG) != 0) {
        snprintf(why, sizeof why, "trainjob top exited during the window");
        goto na;
    }
    window_rows(part2_rows[0], part2_rows[1], &w0, &w1, t1 - t0, "1 list/refresh, >= 1 s apart");
    window_rows(part2_rows[3], part2_rows[4], &w1, &w2, t2 - t1, "slower when quiet");
    for (int i = 0; i < counts->npaths; i++) {
        char what[80], v[32];
        snprintf(what, sizeof what, "  %.54s", counts->paths[i].key);
        snprintf(v, sizeof v, "%ld/%ld/%ld", w0.path[i], w1.path[i] - w0.path[i],
                 w2.path[i] - w1.path[i]);
        row(what, v, "calls: start/quiet/changing", "-", "-");
    }
    goto out;
na:
    fail("2: %s", why);
    rows_na(part2_rows, 6, why);
out:
    if (top_pid > 0 && fd >= 0 && write(fd, "q", 1) == 1)
        for (int i = 0; i < 50 && waitpid(top_pid, NULL, WNOHANG) == 0; i++)
            sleep_ms(20);
    if (top_pid > 0 && waitpid(top_pid, NULL, WNOHANG) != 0)
        top_pid = 0;
    stop_pid(&top_pid);
    if (fd >= 0)
        close(fd);
    stop_pid(&proxy_pid);
    strbuf_free(&seen);
    free(config);
}

/* ---- 3: get jobs over 1,000 ---------------------------------------------------- */

static const char *const part3_rows[] = {
    "trainjob get jobs, 1,000 Slurm jobs, cold (median of 10)",
    "  its output",
    "  slurmrestd's GET /jobs alone",
    "  the same GET in this process (libcurl, no exec)",
    "trainjob get jobs, 1,000 trainjobd jobs (median of 10)",
    "  its output",
    "squeue -a, the same 1,000 Slurm jobs (median of 10)",
    "trainjob get jobs, 1,000 Slurm jobs, warm (median of 10)",
    "  its peak RSS, cold",
    "  warm lists answered 304, no bytes",
};

/*
 * Drops the Slurm driver's kept lists (tmp/home/trainjob/slurm-jobs-*,
 * XDG_CACHE_HOME being tmp/home for every command), so the next list is cold.
 */
static void forget_lists(void)
{
    char dir[128];
    snprintf(dir, sizeof dir, "%s/home/trainjob", tmp);
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL)
        if (strncmp(e->d_name, "slurm-jobs-", 11) == 0)
            (void)unlinkat(dirfd(d), e->d_name, 0);
    if (d)
        closedir(d);
}

/*
 * GET url (on slurmrestd's socket when unix_socket) with the user's headers,
 * the reply appended to body; its HTTP status, or -1.
 */
static long rest_get(const char *url, bool unix_socket, long timeout_ms, struct strbuf *body)
{
    char *user = xasprintf("X-SLURM-USER-NAME: %s", getenv("SLURMRESTD_USER"));
    char *token = xasprintf("X-SLURM-USER-TOKEN: %s", getenv("SLURMRESTD_TOKEN"));
    struct curl_slist *h = curl_slist_append(NULL, user);
    h = curl_slist_append(h, token);
    CURL *c = curl_easy_init();
    if (unix_socket)
        curl_easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, getenv("SLURMRESTD_SOCKET"));
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_reply);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, body);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms);
    long code = -1;
    if (curl_easy_perform(c) != CURLE_OK || curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code))
        code = -1;
    curl_easy_cleanup(c);
    curl_slist_free_all(h);
    free(user);
    free(token);
    return code;
}

/*
 * ms of one GET /slurm/v0.0.38/jobs on slurmrestd's socket, the driver's
 * list call, as a process asking it feels it: unixget (connect, send, read
 * the whole reply and drop it) from exec to exit through run_cmd, as
 * trainjob is measured. -1 when it fails.
 */
static double rest_jobs_ms(size_t *bytes, struct run *r)
{
    char *user = xasprintf("X-SLURM-USER-NAME: %s", getenv("SLURMRESTD_USER"));
    char *token = xasprintf("X-SLURM-USER-TOKEN: %s", getenv("SLURMRESTD_TOKEN"));
    char *argv[] = {unixget,
                    getenv("SLURMRESTD_SOCKET"),
                    "/slurm/v0.0.38/jobs",
                    user,
                    token,
                    "Accept: application/json",
                    NULL};
    double ms = -1;
    if (run_cmd(argv, NULL, false, r) == 0 && r->status == 0) {
        char *path = xasprintf("%s/cmd.err", tmp), *data = NULL, *at;
        size_t len = 0;
        struct strbuf err = STRBUF_INIT;
        if (file_read_all(path, 1 << 20, &data, &len, &err) == 0 &&
            (at = strstr(data, " bytes ")) != NULL) {
            *bytes = (size_t)strtoull(at + 7, NULL, 10);
            ms = r->ms;
        }
        free(data);
        free(path);
        strbuf_free(&err);
    }
    free(user);
    free(token);
    return ms;
}

/*
 * ms of the same GET made in this process by libcurl: no exec, no exit, no
 * pipe (what this row measured before unixget; shown beside it). -1 when
 * it fails.
 */
static double rest_jobs_inproc_ms(size_t *bytes)
{
    struct strbuf body = STRBUF_INIT;
    double t0 = now_ms();
    long code = rest_get("http://slurmrestd/slurm/v0.0.38/jobs", true, 60000L, &body);
    double ms = now_ms() - t0;
    *bytes = body.len;
    strbuf_free(&body);
    return code == 200 ? ms : -1;
}

/*
 * Of the lines TRAINJOB_HTTP_STATS appended to path (one a run), those of a
 * run whose requests were all answered with no bytes (a 304), in *quiet.
 */
static long stats_lines(const char *path, long *quiet)
{
    char *data = NULL;
    size_t len = 0;
    struct strbuf err = STRBUF_INIT;
    long n = 0;
    *quiet = 0;
    if (file_read_all(path, 1 << 20, &data, &len, &err) == 0)
        for (char *line = strtok(data, "\n"); line; line = strtok(NULL, "\n")) {
            n++;
            *quiet += strstr(line, " bytes=0 ") != NULL;
        }
    free(data);
    strbuf_free(&err);
    return n;
}

/*
 * Waits (at most 10 s) until slurmctld's jobs have not changed for two
 * seconds: GET /jobs?update_time=<now - 1> is answered 304. A list asks
 * after the second before it was sent, so a warm list right after a cold
 * one finds no change only then; the jobs just submitted keep changing for
 * a moment. The seconds waited; -1 when it did not settle.
 */
static double rest_settle(void)
{
    struct strbuf body = STRBUF_INIT;
    double t0 = now_ms(), waited = -1;
    while (now_ms() - t0 < 10000) {
        char url[96];
        snprintf(url, sizeof url, "http://slurmrestd/slurm/v0.0.38/jobs?update_time=%lld",
                 (long long)time(NULL) - 1);
        long code = rest_get(url, true, 10000L, &body);
        strbuf_reset(&body);
        if (code == 304) {
            waited = (now_ms() - t0) / 1e3;
            break;
        }
        sleep_ms(250);
    }
    strbuf_free(&body);
    return waited;
}

/* Lines of text. */
static long lines_of(const struct strbuf *sb)
{
    long n = 0;
    for (size_t i = 0; i < sb->len; i++)
        n += sb->buf[i] == '\n';
    return n;
}

static void part3(bool slurm_up, const char *slurm_why, const char *slurm_cfg)
{
    char why[256] = "", dir[128], endpoint[160];
    static long ids[LISTED];
    bool slurm = slurm_up, engine = false;
    if (slurm) {
        fprintf(stderr, "bench_slurm: 3: %d held jobs\n", LISTED);
        double t0 = now_ms();
        if (submit_held("p", LISTED, ids, why, sizeof why) != 0)
            slurm = false;
        else {
            double submitted = (now_ms() - t0) / 1e3;
            fprintf(stderr, "bench_slurm: 3: submitted in %.1f s, settled in %.1f s\n", submitted,
                    rest_settle());
        }
    } else {
        snprintf(why, sizeof why, "%s", slurm_why);
    }
    /* trainjobd holding 1,000 waiting jobs, seeded in process */
    snprintf(dir, sizeof dir, "%s/e3", tmp);
    char *config = xasprintf("%s/engine.yaml", dir), *state = xasprintf("%s/state", dir);
    struct strbuf err = STRBUF_INIT;
    if (file_mkdirs(dir, 0700, &err) != 0 ||
        seed_write_config(config, seed_user(), true, &err) != 0 ||
        seed_jobs(config, state, seed_user(), "b", 4, LISTED, &err) != 0)
        fail("3: seeding trainjobd: %s", strbuf_str(&err));
    else
        engine = engine_start(dir) == 0;
    strbuf_free(&err);
    free(config);
    free(state);
    snprintf(endpoint, sizeof endpoint, "http+unix://%s", engine_socket);

    double sl[LIST_RUNS], tl[LIST_RUNS], sq[LIST_RUNS], rj[LIST_RUNS], sw[LIST_RUNS];
    double ri[LIST_RUNS];
    double rss[LIST_RUNS], sq_rss[LIST_RUNS];
    size_t sl_b = 0, tl_b = 0, sq_b = 0, rj_b = 0, ri_b = 0;
    long sl_rows = 0, tl_rows = 0, sq_rows = 0;
    char *sget[] = {trainjob, "get", "jobs", NULL};
    char *tget[] = {trainjob, "--endpoint", endpoint, "get", "jobs", NULL};
    char *squeue[] = {"squeue", "-a", NULL};
    struct run r = {.out = STRBUF_INIT};
    /* What each warm list asked and got: the row below says whether it was a 304. */
    char *warm_stats = xasprintf("%s/warm-stats", tmp);
    (void)unlink(warm_stats);
    for (int i = 0; i < LIST_RUNS; i++) {
        if (slurm) {
            forget_lists(); /* cold: nothing kept, the whole list asked */
            if (run_cmd(sget, slurm_cfg, true, &r) != 0 || r.status != 0) {
                char e[160];
                cmd_err_tail(e, sizeof e);
                snprintf(why, sizeof why, "get jobs: %s", e);
                fail("3: %s", why);
                slurm = false;
            }
            sl[i] = r.ms, sl_b = r.bytes, sl_rows = lines_of(&r.out);
            setenv("TRAINJOB_HTTP_STATS", warm_stats, 1);
            if (slurm && (run_cmd(sget, slurm_cfg, false, &r) != 0 || r.status != 0)) {
                snprintf(why, sizeof why, "get jobs (warm) failed");
                slurm = false;
            }
            unsetenv("TRAINJOB_HTTP_STATS");
            sw[i] = r.ms; /* warm: right after the cold one, only changes asked */
            if (slurm && (run_cmd(squeue, NULL, true, &r) != 0 || r.status != 0)) {
                snprintf(why, sizeof why, "squeue failed");
                slurm = false;
            }
            sq[i] = r.ms, sq_b = r.bytes, sq_rows = lines_of(&r.out);
            if (slurm && (rj[i] = rest_jobs_ms(&rj_b, &r)) < 0) {
                snprintf(why, sizeof why, "GET /jobs (unixget) failed");
                slurm = false;
            }
            if (slurm && (ri[i] = rest_jobs_inproc_ms(&ri_b)) < 0) {
                snprintf(why, sizeof why, "GET /jobs (libcurl) failed");
                slurm = false;
            }
            /* Peak RSS in runs of their own (through cputime), the list cold again. */
            forget_lists();
            rss[i] = slurm ? (double)peak_rss_kb(sget, slurm_cfg, &r) : -1;
            sq_rss[i] = slurm ? (double)peak_rss_kb(squeue, NULL, &r) : -1;
        }
        if (engine) {
            if (run_cmd(tget, NULL, true, &r) != 0 || r.status != 0) {
                fail("3: trainjob get jobs on trainjobd failed");
                engine = false;
            }
            tl[i] = r.ms, tl_b = r.bytes, tl_rows = lines_of(&r.out);
        }
    }
    strbuf_free(&r.out);
    engine_stop(dir);
    double slm = slurm ? bench_quantile(sl, LIST_RUNS, 0.5) : -1;
    double tlm = engine ? bench_quantile(tl, LIST_RUNS, 0.5) : -1;
    double sqm = slurm ? bench_quantile(sq, LIST_RUNS, 0.5) : -1;
    double rjm = slurm ? bench_quantile(rj, LIST_RUNS, 0.5) : -1;
    double rim = slurm ? bench_quantile(ri, LIST_RUNS, 0.5) : -1;
    double swm = slurm ? bench_quantile(sw, LIST_RUNS, 0.5) : -1;
    double rssm = slurm ? bench_quantile(rss, LIST_RUNS, 0.5) : -1;
    double sq_rssm = slurm ? bench_quantile(sq_rss, LIST_RUNS, 0.5) : -1;
    char v[32], ref[64], ratio[16], what[80];
    if (slurm)
        snprintf(ref, sizeof ref, "GET /jobs alone %.0f ms", rjm);
    else
        snprintf(ref, sizeof ref, "n/a: %.57s", why);
    fmt(v, sizeof v, slm, 0, "ms");
    fmt_ratio(ratio, sizeof ratio, slm, rjm);
    row(part3_rows[0], v, "<= 1.2x GET /jobs", ref, ratio);
    if (slurm)
        snprintf(ref, sizeof ref, "squeue %.0f ms", sqm);
    fmt(v, sizeof v, swm, 0, "ms");
    fmt_ratio(ratio, sizeof ratio, swm, sqm);
    row(part3_rows[7], v, "<= 3x squeue", ref, ratio);
    if (slurm)
        snprintf(ref, sizeof ref, "squeue %.1f MiB", sq_rssm / 1024);
    fmt(v, sizeof v, slurm ? rssm / 1024 : -1, 1, "MiB");
    fmt_ratio(ratio, sizeof ratio, rssm, sq_rssm);
    row(part3_rows[8], v, "flat in the cluster's size", ref, ratio);
    long quiet, warm_runs = stats_lines(warm_stats, &quiet);
    char answered[48] = "n/a";
    if (slurm)
        snprintf(answered, sizeof answered, "%ld of %ld", quiet, warm_runs);
    row(part3_rows[9], answered, "all", "-", "-");
    free(warm_stats);
    snprintf(what, sizeof what, "  its output (%ld lines)", sl_rows);
    fmt(v, sizeof v, slurm ? (double)sl_b / 1e3 : -1, 1, "kB");
    if (slurm)
        snprintf(ref, sizeof ref, "squeue %.1f kB", (double)sq_b / 1e3);
    row(what, v, "-", ref, "-");
    fmt(v, sizeof v, rjm, 0, "ms");
    snprintf(what, sizeof what, "  slurmrestd's GET /jobs alone (%.1f MB), exec to exit",
             (double)rj_b / 1e6);
    row(slurm ? what : part3_rows[2], v, "-", "unixget", "-");
    fmt(v, sizeof v, rim, 0, "ms");
    fmt_ratio(ratio, sizeof ratio, slm, rim);
    row(part3_rows[3], v, "-", slurm ? "trainjob's against it" : "-", ratio);
    fmt(v, sizeof v, tlm, 0, "ms");
    if (slurm)
        snprintf(ref, sizeof ref, "squeue %.0f ms", sqm);
    fmt_ratio(ratio, sizeof ratio, tlm, sqm);
    row(part3_rows[4], v, "<= squeue (issue 14)", ref, ratio);
    snprintf(what, sizeof what, "  its output (%ld lines)", tl_rows);
    fmt(v, sizeof v, engine ? (double)tl_b / 1e3 : -1, 1, "kB");
    row(what, v, "-", "-", "-");
    snprintf(what, sizeof what, "squeue -a, the same Slurm jobs (%ld lines)", sq_rows);
    fmt(v, sizeof v, sqm, 0, "ms");
    row(what, v, "-", "(the reference)", "-");
    slurm_ran_3 = slurm;
}

/* ---- 4: trivial jobs through the Slurm context, next to sbatch ------------------ */

/*
 * The cluster's CPU (its daemons, munged, every slurmstepd and batch script
 * they start) counted by a cpuacct cgroup (v1) the daemons are moved into
 * for the part; their children are born in it. -1 when there is none.
 */
static char acct_dir[128];

static int acct_start(void)
{
    snprintf(acct_dir, sizeof acct_dir, "/sys/fs/cgroup/cpuacct/bench_slurm.%ld", (long)getpid());
    if (mkdir(acct_dir, 0755) != 0) {
        acct_dir[0] = '\0';
        return -1;
    }
    char *procs = xasprintf("%s/cgroup.procs", acct_dir);
    char *pidfiles = xasprintf("%s/run", cluster_dir);
    int moved = 0;
    DIR *d = opendir(pidfiles);
    for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
        size_t n = strlen(e->d_name);
        if (n < 5 || strcmp(e->d_name + n - 4, ".pid") != 0)
            continue;
        char *p = xasprintf("%s/%s", pidfiles, e->d_name), *data = NULL;
        size_t len = 0;
        struct strbuf err = STRBUF_INIT;
        if (file_read_all(p, 64, &data, &len, &err) == 0 && atol(data) > 1) {
            FILE *f = fopen(procs, "w");
            if (f && fprintf(f, "%ld\n", atol(data)) > 0 && fclose(f) == 0)
                moved++;
            else if (f)
                fclose(f);
        }
        free(data);
        free(p);
        strbuf_free(&err);
    }
    if (d)
        closedir(d);
    free(pidfiles);
    free(procs);
    return moved > 0 ? 0 : -1;
}

/* The cgroup's CPU so far, ms; -1 without one. */
static double acct_ms(void)
{
    if (!acct_dir[0])
        return -1;
    char *p = xasprintf("%s/cpuacct.usage", acct_dir), *data = NULL;
    size_t len = 0;
    struct strbuf err = STRBUF_INIT;
    double ms = file_read_all(p, 64, &data, &len, &err) == 0 ? (double)atoll(data) / 1e6 : -1;
    free(data);
    free(p);
    strbuf_free(&err);
    return ms;
}

/* Its processes back to the root cgroup, and it removed. */
static void acct_stop(void)
{
    if (!acct_dir[0])
        return;
    char *p = xasprintf("%s/cgroup.procs", acct_dir);
    FILE *in = fopen(p, "r");
    char line[32];
    while (in && fgets(line, sizeof line, in)) {
        FILE *out = fopen("/sys/fs/cgroup/cpuacct/cgroup.procs", "w");
        if (out) {
            fputs(line, out);
            fclose(out);
        }
    }
    if (in)
        fclose(in);
    free(p);
    if (rmdir(acct_dir) != 0)
        fprintf(stderr, "bench_slurm: rmdir %s: %s\n", acct_dir, strerror(errno));
    acct_dir[0] = '\0';
}

/* A job file: one worker running `true` on one GPU of the standard partition. */
static char *trivial_file(const char *name)
{
    char *path = xasprintf("%s/%s.job.yaml", tmp, name);
    struct strbuf y = STRBUF_INIT, err = STRBUF_INIT;
    strbuf_addf(&y,
                "workspace_name: default\nname: %s\ndisplay_name: %s\nframework: PYTORCH_DDP\n"
                "resource_pool:\n  name: standard\n"
                "roles:\n  - total_replicas: 1\n    resource_spec:\n      - name: gpu-1\n"
                "    image_path: local/host\n    startup_script: \"true\"\n",
                name, name);
    if (file_write_atomic(path, y.buf, y.len, 0644, &err) != 0)
        fail("%s", strbuf_str(&err));
    strbuf_free(&y);
    strbuf_free(&err);
    return path;
}

/* Jobs Slurm has not ended (squeue's lines); -1 when squeue fails. */
static long live_jobs(void)
{
    char *argv[] = {"squeue", "-h", "-o", "%i", NULL};
    struct run r = {.out = STRBUF_INIT};
    long n = run_cmd(argv, NULL, true, &r) == 0 && r.status == 0 ? lines_of(&r.out) : -1;
    strbuf_free(&r.out);
    return n;
}

struct round {
    double jobs_s, cpu_ms; /* jobs a second, the cluster's CPU a job */
    double all_ms;         /* that and the submitting command's own CPU, a job */
};

/*
 * n jobs submitted one after the other (through trainjob's Slurm context, or
 * sbatch --wrap=true as the same user with the same GPU), until Slurm has
 * ended them all: jobs a second from the first submit, the cluster's CPU
 * per job (and with each submit's own), each submit's exec-to-exit in
 * submit_ms. -1 with why on failure.
 */
static int trivial_round(bool tj, int round, int n, const char *cfg, double *submit_ms,
                         struct round *out, char *why, size_t whysz)
{
    struct run r = {.out = STRBUF_INIT};
    double cpu0 = acct_ms(), t0 = now_ms(), client = 0;
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        char name[32];
        snprintf(name, sizeof name, "r%d-%03d", round, i);
        char *file = tj ? trivial_file(name) : NULL;
        char *user = xasprintf("--uid=%s", getenv("SLURMRESTD_USER"));
        char *tjv[] = {trainjob, "submit", "-f", file, NULL};
        char *sbv[] = {"sbatch", "--quiet", user, "-p", "standard",  "--gres=gpu:1", "-J",
                       name,     "-D",      tmp,  "-o", "/dev/null", "--wrap=true",  NULL};
        if (run_cmd(tj ? tjv : sbv, tj ? cfg : NULL, false, &r) != 0 || r.status != 0) {
            char e[160];
            cmd_err_tail(e, sizeof e);
            snprintf(why, whysz, "%s: %s", tj ? "trainjob submit" : "sbatch", e);
            rc = -1;
        }
        submit_ms[i] = r.ms;
        client += r.cpu_ms;
        free(user);
        free(file);
    }
    long live = 1;
    while (rc == 0 && (live = live_jobs()) > 0 && now_ms() - t0 < 300000)
        sleep_ms(100);
    if (rc == 0 && live != 0) {
        snprintf(why, whysz, "%ld jobs not ended within 300 s", live);
        rc = -1;
    }
    double dt = now_ms() - t0, cpu = acct_ms();
    out->jobs_s = rc == 0 ? n * 1000.0 / dt : -1;
    out->cpu_ms = rc == 0 && cpu0 >= 0 ? (cpu - cpu0) / n : -1;
    out->all_ms = out->cpu_ms >= 0 ? out->cpu_ms + client / n : -1;
    strbuf_free(&r.out);
    return rc;
}

static const char *const part4_rows[] = {
    "trivial jobs through the Slurm context, jobs/s",
    "  each round's ratio: lowest, median, highest",
    "  the cluster's CPU per job",
    "  with the submitting command's own",
    "trainjob submit to Slurm, exec to exit",
    "trainjob get jobs, 10 Slurm jobs (median of 7)",
};

/*
 * `trainjob get jobs` over 10 held jobs of the user next to `squeue -a`,
 * interleaved, medians of 7 (a process that learns nothing it knew: the
 * API version is in its cache after the first); the jobs are cancelled after.
 */
static void list_ten(const char *cfg)
{
    long ids[10];
    char why[256] = "";
    if (submit_held("q", 10, ids, why, sizeof why) != 0) {
        row(part4_rows[5], "n/a", "-", why, "-");
        return;
    }
    double tj[7], sq[7];
    char *get[] = {trainjob, "get", "jobs", NULL};
    char *squeue[] = {"squeue", "-a", NULL};
    struct run r = {.out = STRBUF_INIT};
    int n = 0;
    for (; n < 7; n++) {
        if (run_cmd(get, cfg, false, &r) != 0 || r.status != 0)
            break;
        tj[n] = r.ms;
        if (run_cmd(squeue, NULL, false, &r) != 0 || r.status != 0)
            break;
        sq[n] = r.ms;
    }
    char *cancel[12] = {"scancel"};
    char idtext[10][24];
    for (int i = 0; i < 10; i++) {
        snprintf(idtext[i], sizeof idtext[i], "%ld", ids[i]);
        cancel[i + 1] = idtext[i];
    }
    cancel[11] = NULL;
    run_cmd(cancel, NULL, false, &r);
    strbuf_free(&r.out);
    long live = 1;
    for (int k = 0; k < 100 && (live = live_jobs()) > 0; k++)
        sleep_ms(100);
    char v[32], ref[64], ratio[16];
    if (n < 7) {
        row(part4_rows[5], "n/a", "-", "get jobs or squeue failed", "-");
        return;
    }
    double a = bench_quantile(tj, 7, 0.5), b = bench_quantile(sq, 7, 0.5);
    fmt(v, sizeof v, a, 1, "ms");
    snprintf(ref, sizeof ref, "squeue -a %.1f ms", b);
    fmt_ratio(ratio, sizeof ratio, a, b);
    row(part4_rows[5], v, "-", ref, ratio);
}

static void part4(bool slurm_up, const char *slurm_why, const char *slurm_cfg)
{
    if (!slurm_up) {
        rows_na(part4_rows, 6, slurm_why);
        return;
    }
    list_ten(slurm_cfg);
    const char *env = getenv("BENCH_SLURM_JOBS");
    int n = env && atoi(env) > 0 ? atoi(env) : TRIVIAL_JOBS;
    bool acct = acct_start() == 0;
    if (!acct)
        fprintf(stderr, "bench_slurm: 4: no cpuacct cgroup: the CPU row reads n/a\n");
    double *tsub = xcalloc((size_t)(n * TRIVIAL_ROUNDS), sizeof *tsub);
    double *ssub = xcalloc((size_t)(n * TRIVIAL_ROUNDS), sizeof *ssub);
    double tj_s[TRIVIAL_ROUNDS], tj_c[TRIVIAL_ROUNDS], sb_s[TRIVIAL_ROUNDS], sb_c[TRIVIAL_ROUNDS];
    double tj_a[TRIVIAL_ROUNDS], sb_a[TRIVIAL_ROUNDS];
    char why[256] = "";
    int done = 0;
    double pair[TRIVIAL_ROUNDS]; /* each round's jobs/s against sbatch's */
    fprintf(stderr,
            "bench_slurm: 4: %d rounds of %d trivial jobs each, interleaved, sbatch first in "
            "odd rounds\n",
            TRIVIAL_ROUNDS, n);
    for (int k = 0; k < TRIVIAL_ROUNDS; k++) {
        /* Who goes first alternates: the second side of a round finds the first's
         * ended jobs in slurmctld's tables (MinJobAge) and a cluster just busy. */
        struct round a, b;
        bool sb_first = k % 2 == 0, ok = true;
        for (int side = 0; side < 2 && ok; side++) {
            bool tj = sb_first ? side == 1 : side == 0;
            ok = tj ? trivial_round(true, 2 * k + 1, n, slurm_cfg, tsub + k * n, &a, why,
                                    sizeof why) == 0
                    : trivial_round(false, 2 * k, n, NULL, ssub + k * n, &b, why, sizeof why) == 0;
        }
        if (!ok) {
            fail("4: %s", why);
            break;
        }
        sb_s[k] = b.jobs_s, sb_c[k] = b.cpu_ms, tj_s[k] = a.jobs_s, tj_c[k] = a.cpu_ms;
        sb_a[k] = b.all_ms, tj_a[k] = a.all_ms;
        pair[k] = a.jobs_s / b.jobs_s;
        fprintf(stderr,
                "bench_slurm: 4: round %d (%s first): trainjob %.1f jobs/s %.1f ms (%.1f), sbatch "
                "%.1f jobs/s %.1f ms (%.1f), ratio %.2f\n",
                k + 1, sb_first ? "sbatch" : "trainjob", a.jobs_s, a.cpu_ms, a.all_ms, b.jobs_s,
                b.cpu_ms, b.all_ms, pair[k]);
        done++;
    }
    acct_stop();
    char v[32], ref[64], ratio[16], what[80];
    if (done == 0) {
        rows_na(part4_rows, 5, why);
    } else {
        double tjs = bench_quantile(tj_s, (size_t)done, 0.5);
        double sbs = bench_quantile(sb_s, (size_t)done, 0.5);
        double tjc = acct ? bench_quantile(tj_c, (size_t)done, 0.5) : -1;
        double sbc = acct ? bench_quantile(sb_c, (size_t)done, 0.5) : -1;
        double tja = acct ? bench_quantile(tj_a, (size_t)done, 0.5) : -1;
        double sba = acct ? bench_quantile(sb_a, (size_t)done, 0.5) : -1;
        double tjm = bench_quantile(tsub, (size_t)(done * n), 0.5);
        double sbm = bench_quantile(ssub, (size_t)(done * n), 0.5);
        snprintf(what, sizeof what, "%d trivial jobs via the Slurm context (median of %d)", n,
                 done);
        fmt(v, sizeof v, tjs, 1, "jobs/s");
        snprintf(ref, sizeof ref, "sbatch --wrap=true %.1f/s", sbs);
        fmt_ratio(ratio, sizeof ratio, tjs, sbs);
        row(what, v, ">= 0.8x sbatch", ref, ratio);
        /* The spread says how far one round's luck in slurmctld's scheduling moves it. */
        double lo = pair[0], hi = pair[0];
        for (int k = 1; k < done; k++)
            lo = pair[k] < lo ? pair[k] : lo, hi = pair[k] > hi ? pair[k] : hi;
        snprintf(v, sizeof v, "%.2fx", bench_quantile(pair, (size_t)done, 0.5));
        snprintf(ref, sizeof ref, "%.2fx to %.2fx", lo, hi);
        row(part4_rows[1], v, "-", ref, "-");
        fmt(v, sizeof v, tjc, 1, "ms");
        if (sbc >= 0)
            snprintf(ref, sizeof ref, "sbatch %.1f ms", sbc);
        else
            snprintf(ref, sizeof ref, "n/a: no cpuacct cgroup");
        fmt_ratio(ratio, sizeof ratio, tjc, sbc);
        row(part4_rows[2], v, "<= 1.5x sbatch", ref, ratio);
        fmt(v, sizeof v, tja, 1, "ms");
        if (sba >= 0)
            snprintf(ref, sizeof ref, "sbatch %.1f ms", sba);
        else
            snprintf(ref, sizeof ref, "n/a: no cpuacct cgroup");
        fmt_ratio(ratio, sizeof ratio, tja, sba);
        row(part4_rows[3], v, "-", ref, ratio);
        snprintf(what, sizeof what, "trainjob submit to Slurm, exec to exit (median of %d)",
                 done * n);
        fmt(v, sizeof v, tjm, 1, "ms");
        snprintf(ref, sizeof ref, "sbatch %.1f ms", sbm);
        fmt_ratio(ratio, sizeof ratio, tjm, sbm);
        row(what, v, "<= 2x sbatch", ref, ratio);
    }
    free(tsub);
    free(ssub);
}

/* ---- main ---------------------------------------------------------------------- */

/* Is part (a digit) to run? BENCH_PARTS (e.g. "3") picks some; unset, all run. */
/* ---- 5: 1,000 of 50,000 jobs, recorded replies from a loopback fake ------------- */

#define CROWD 50000  /* part 5's cluster: part 3's 1,000 jobs and other users' */
#define CROWD_RUNS 5 /* part 5's alternating runs */

static const char *const part5_rows[] = {
    "get jobs, 1,000 of 50,000 Slurm jobs, cold (median of 5)",
    "  the same 1,000 jobs alone, from the same fake",
    "  its client CPU, 50,000 jobs against 1,000",
    "  its peak RSS, 50,000 jobs against 1,000",
    "  the 50,000-job reply alone, read by curl",
};

/* The fake's replies; a connection on lfd[i] is answered with jobs[i]. */
struct fake {
    int lfd[2];
    struct strbuf openapi, jobs[2];
};

/*
 * Reads one request from fd and answers it from f's replies (GET /openapi/v3;
 * GET …/jobs whole, or 304 with ?update_time; 404 else). False when the
 * connection ended.
 */
static bool fake_answer(int fd, const struct fake *f, int which)
{
    char req[8192];
    size_t len = 0;
    while (len < 4 || memcmp(req + len - 4, "\r\n\r\n", 4) != 0) {
        if (len == sizeof req)
            return false;
        ssize_t r = read(fd, req + len, 1); /* requests are small; nothing read past one */
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return false;
        len += (size_t)r;
    }
    const struct strbuf *body = NULL;
    size_t path = strcspn(req, " ") + 1, plen = strcspn(req + path, " ");
    const char *p = req + path;
    bool jobs = plen >= 5 && strncmp(p, "/slurm/", 7) == 0 && memmem(p, plen, "/jobs", 5) != NULL;
    if (plen == 11 && strncmp(p, "/openapi/v3", 11) == 0)
        body = &f->openapi;
    else if (jobs && memchr(p, '?', plen) == NULL)
        body = &f->jobs[which];
    char head[200];
    int n;
    if (jobs && body == NULL)
        n = snprintf(head, sizeof head, "HTTP/1.1 304 Not Modified\r\n\r\n");
    else
        n = snprintf(head, sizeof head,
                     "HTTP/1.1 %s\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n\r\n",
                     body ? "200 OK" : "404 Not Found", body ? body->len : 0);
    return write_all(fd, head, (size_t)n) && (body == NULL || write_all(fd, body->buf, body->len));
}

/* The fake's process: answers on both ports, a connection at a time as its requests come. */
static void fake_main(const struct fake *f)
{
    struct {
        int fd, which;
    } conns[64];
    size_t nc = 0;
    for (;;) {
        struct pollfd p[2 + 64];
        p[0] = (struct pollfd){f->lfd[0], POLLIN, 0};
        p[1] = (struct pollfd){f->lfd[1], POLLIN, 0};
        for (size_t i = 0; i < nc; i++)
            p[2 + i] = (struct pollfd){conns[i].fd, POLLIN, 0};
        if (poll(p, 2 + nc, -1) < 0)
            continue;
        for (size_t i = nc; i-- > 0;)
            if ((p[2 + i].revents & (POLLIN | POLLHUP | POLLERR)) &&
                !fake_answer(conns[i].fd, f, conns[i].which)) {
                close(conns[i].fd);
                conns[i] = conns[--nc];
            }
        for (int w = 0; w < 2; w++) {
            int cfd = (p[w].revents & POLLIN) ? accept4(f->lfd[w], NULL, NULL, SOCK_CLOEXEC) : -1;
            if (cfd >= 0 && nc == 64)
                close(cfd);
            else if (cfd >= 0)
                conns[nc].fd = cfd, conns[nc++].which = w;
        }
    }
}

/* Starts the fake on two free loopback ports, put in ports; 0, or -1. */
static int fake_start(struct fake *f, int ports[2])
{
    for (int w = 0; w < 2; w++) {
        struct sockaddr_in me = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t len = sizeof me;
        f->lfd[w] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (f->lfd[w] < 0 || bind(f->lfd[w], (struct sockaddr *)&me, sizeof me) != 0 ||
            listen(f->lfd[w], 16) != 0 || getsockname(f->lfd[w], (struct sockaddr *)&me, &len) != 0)
            return fail("fake: %s", strerror(errno));
        ports[w] = ntohs(me.sin_port);
    }
    pid_t pid = fork();
    if (pid == 0) {
        signal(SIGTERM, SIG_DFL);
        signal(SIGINT, SIG_DFL);
        signal(SIGPIPE, SIG_IGN);
        fake_main(f);
        _exit(0);
    }
    close(f->lfd[0]);
    close(f->lfd[1]);
    if (pid < 0)
        return fail("fork: %s", strerror(errno));
    fake_pid = pid;
    return 0;
}

/*
 * The reply of a cluster of total jobs (at least mine's) built from mine,
 * slurmrestd's reply holding part 3's jobs: those, then copies of them as
 * other users' jobs (their own ids, names and user), in slurmrestd's layout
 * (indented by 2, "\/"). Empty when mine is not such a reply.
 */
static void crowd_reply(const struct strbuf *mine, size_t total, struct strbuf *out)
{
    json_t *doc = json_loadb(mine->buf, mine->len, 0, NULL);
    json_t *jobs = json_object_get(doc, "jobs");
    size_t own = json_array_size(jobs);
    strbuf_reset(out);
    if (own == 0) {
        json_decref(doc);
        return;
    }
    const size_t flags = JSON_INDENT(2) | JSON_ESCAPE_SLASH;
    char *meta = json_dumps(json_object_get(doc, "meta"), flags);
    strbuf_addf(out, "{\n\"meta\": %s,\n\"errors\": [],\n\"jobs\": [\n", meta ? meta : "{}");
    free(meta);
    for (size_t k = 0; k < total || k < own; k++) {
        json_t *job = json_array_get(jobs, k % own);
        if (k >= own) {
            char name[32];
            snprintf(name, sizeof name, "other-%zu", k);
            job = json_deep_copy(job);
            json_object_set_new(job, "job_id", json_integer(2000000 + (json_int_t)k));
            json_object_set_new(job, "name", json_string(name));
            json_object_set_new(job, "user_name", json_string("someone-else"));
            json_object_set_new(job, "user_id", json_integer(40000 + (json_int_t)(k % 50)));
            json_object_set_new(job, "comment", json_string(""));
        }
        char *text = json_dumps(job, flags);
        strbuf_addf(out, "%s%s", k ? ",\n" : "", text);
        free(text);
        if (k >= own)
            json_decref(job);
    }
    strbuf_adds(out, "\n]\n}\n");
    json_decref(doc);
}

/* Do lists a and b hold the same rows, but for their ages (the last column, which ticks)? */
static bool same_rows(const struct strbuf *a, const struct strbuf *b)
{
    const char *p = strbuf_str(a), *q = strbuf_str(b);
    while (*p && *q) {
        size_t lp = strcspn(p, "\n"), lq = strcspn(q, "\n");
        size_t cut_p = lp, cut_q = lq;
        while (cut_p && p[cut_p - 1] != ' ')
            cut_p--;
        while (cut_q && q[cut_q - 1] != ' ')
            cut_q--;
        if (cut_p != cut_q || memcmp(p, q, cut_p) != 0)
            return false;
        p += lp + (p[lp] == '\n');
        q += lq + (q[lq] == '\n');
    }
    return *p == *q;
}

/* ms to GET url whole with curl, -1 when it fails. */
static double fake_read_ms(const char *url, size_t *bytes)
{
    struct strbuf body = STRBUF_INIT;
    double t0 = now_ms();
    long code = rest_get(url, false, 60000L, &body);
    double ms = now_ms() - t0;
    *bytes = body.len;
    strbuf_free(&body);
    return code == 200 ? ms : -1;
}

static void part5(bool slurm, const char *slurm_why)
{
    char why[256] = "", url[96], endpoint[64];
    struct fake f = {.openapi = STRBUF_INIT, .jobs = {STRBUF_INIT, STRBUF_INIT}};
    struct strbuf mine = STRBUF_INIT;
    char *cfg[2] = {NULL, NULL};
    int ports[2];
    if (!slurm) {
        snprintf(why, sizeof why, "%s", slurm_ran_3 ? slurm_why : "needs part 3's jobs");
        goto na;
    }
    fprintf(stderr, "bench_slurm: 5: part 3's jobs among %d, from a loopback fake\n", CROWD);
    if (rest_get("http://slurmrestd/openapi/v3", true, 60000L, &f.openapi) != 200 ||
        rest_get("http://slurmrestd/slurm/v0.0.38/jobs", true, 60000L, &mine) != 200) {
        snprintf(why, sizeof why, "recording slurmrestd's replies failed");
        goto na;
    }
    crowd_reply(&mine, 0, &f.jobs[0]);
    crowd_reply(&mine, CROWD, &f.jobs[1]);
    if (f.jobs[0].len == 0 || f.jobs[1].len == 0) {
        snprintf(why, sizeof why, "slurmrestd's GET /jobs held no jobs");
        goto na;
    }
    if (fake_start(&f, ports) != 0) {
        snprintf(why, sizeof why, "the fake did not start");
        goto na;
    }
    for (int w = 0; w < 2; w++) {
        char name[16];
        snprintf(endpoint, sizeof endpoint, "http://127.0.0.1:%d", ports[w]);
        snprintf(name, sizeof name, "fake%d", w);
        cfg[w] = slurm_config(name, endpoint);
    }
    snprintf(url, sizeof url, "http://127.0.0.1:%d/slurm/v0.0.38/jobs", ports[1]);

    double ms[2][CROWD_RUNS], cpu[2][CROWD_RUNS], rss[2][CROWD_RUNS], alone[CROWD_RUNS];
    size_t alone_b = 0;
    struct run r = {.out = STRBUF_INIT};
    struct strbuf out0 = STRBUF_INIT;
    char *get[] = {trainjob, "get", "jobs", NULL};
    for (int i = 0; i < CROWD_RUNS && !why[0]; i++) {
        for (int w = 0; w < 2 && !why[0]; w++) {
            forget_lists(); /* cold */
            if (run_cmd(get, cfg[w], true, &r) != 0 || r.status != 0) {
                char e[160];
                cmd_err_tail(e, sizeof e);
                snprintf(why, sizeof why, "get jobs: %s", e);
                break;
            }
            ms[w][i] = r.ms, cpu[w][i] = r.cpu_ms;
            if (w == 0 && i == 0)
                strbuf_add(&out0, r.out.buf, r.out.len);
            else if (!same_rows(&r.out, &out0))
                snprintf(why, sizeof why, "the lists of 1,000 and 50,000 jobs differ");
        }
        if (!why[0] && (alone[i] = fake_read_ms(url, &alone_b)) < 0)
            snprintf(why, sizeof why, "GET /jobs from the fake failed");
        for (int w = 0; w < 2 && !why[0]; w++) {
            forget_lists();
            if ((rss[w][i] = (double)peak_rss_kb(get, cfg[w], &r)) < 0)
                snprintf(why, sizeof why, "get jobs under cputime failed");
        }
    }
    strbuf_free(&r.out);
    strbuf_free(&out0);
    stop_pid(&fake_pid);
    if (why[0])
        goto na;
    double m[2], c[2], k[2];
    for (int w = 0; w < 2; w++) {
        m[w] = bench_quantile(ms[w], CROWD_RUNS, 0.5);
        c[w] = bench_quantile(cpu[w], CROWD_RUNS, 0.5);
        k[w] = bench_quantile(rss[w], CROWD_RUNS, 0.5);
    }
    double am = bench_quantile(alone, CROWD_RUNS, 0.5);
    char v[32], ref[64], ratio[16];
    fmt(v, sizeof v, m[1], 0, "ms");
    snprintf(ref, sizeof ref, "the reply alone %.0f ms", am);
    fmt_ratio(ratio, sizeof ratio, m[1], am);
    row(part5_rows[0], v, "-", ref, ratio);
    fmt(v, sizeof v, m[0], 0, "ms");
    row(part5_rows[1], v, "-", "-", "-");
    fmt(v, sizeof v, c[1], 0, "ms");
    snprintf(ref, sizeof ref, "1,000 jobs %.0f ms", c[0]);
    fmt_ratio(ratio, sizeof ratio, c[1], c[0]);
    row(part5_rows[2], v, "-", ref, ratio);
    fmt(v, sizeof v, k[1] / 1024, 1, "MiB");
    snprintf(ref, sizeof ref, "1,000 jobs %.1f MiB", k[0] / 1024);
    fmt_ratio(ratio, sizeof ratio, k[1], k[0]);
    row(part5_rows[3], v, "flat in the cluster's size", ref, ratio);
    char what[80];
    snprintf(what, sizeof what, "  the 50,000-job reply alone (%.0f MB), read by curl",
             (double)alone_b / 1e6);
    fmt(v, sizeof v, am, 0, "ms");
    row(what, v, "-", "(the reference)", "-");
    goto done;
na:
    rows_na(part5_rows, sizeof part5_rows / sizeof part5_rows[0], why);
done:
    stop_pid(&fake_pid);
    strbuf_free(&mine);
    strbuf_free(&f.openapi);
    strbuf_free(&f.jobs[0]);
    strbuf_free(&f.jobs[1]);
    free(cfg[0]);
    free(cfg[1]);
}

static bool part_wanted(char part)
{
    const char *want = getenv("BENCH_PARTS");
    return want == NULL || *want == '\0' || strchr(want, part) != NULL;
}

/* Where this binary's build and source tree are; -1 when unknown. */
static int find_paths(void)
{
    char self[PATH_MAX - 64];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len <= 0)
        return fail("cannot find this binary");
    self[len] = '\0';
    *strrchr(self, '/') = '\0'; /* .../build/bench */
    const char *v = getenv("TRAINJOB_BIN");
    snprintf(trainjob, sizeof trainjob, "%s", v ? v : "");
    if (v == NULL)
        snprintf(trainjob, sizeof trainjob, "%s/../trainjob", self);
    v = getenv("TRAINJOBD_BIN");
    snprintf(trainjobd, sizeof trainjobd, "%s", v ? v : "");
    if (v == NULL)
        snprintf(trainjobd, sizeof trainjobd, "%s/../trainjobd", self);
    snprintf(cputime, sizeof cputime, "%s/../tests/tools/cputime", self);
    snprintf(unixget, sizeof unixget, "%s/../tests/tools/unixget", self);
    v = getenv("TRAINJOB_TOP");
    snprintf(top_dir, sizeof top_dir, "%s", v ? v : "");
    if (v == NULL && getcwd(top_dir, sizeof top_dir) == NULL)
        return fail("getcwd: %s", strerror(errno));
    return 0;
}

int main(void)
{
    if (find_paths() != 0)
        return 1;
    if (access(trainjob, X_OK) != 0 || access(trainjobd, X_OK) != 0) {
        fail("%s or %s: not built (make, or set TRAINJOB_BIN/TRAINJOBD_BIN)", trainjob, trainjobd);
        return 1;
    }
    snprintf(tmp, sizeof tmp, "/tmp/bench_slurm.XXXXXX");
    if (mkdtemp(tmp) == NULL || chmod(tmp, 0755) != 0) { /* slurmrestd and jobs: o+x */
        fail("mkdtemp: %s", strerror(errno));
        return 1;
    }
    char *home = xasprintf("%s/home", tmp);
    mkdir(home, 0700);
    setenv("HOME", home, 1); /* trainjob's own files stay here, not in the user's */
    const char *xdg[] = {"XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME"};
    for (size_t i = 0; i < sizeof xdg / sizeof xdg[0]; i++)
        setenv(xdg[i], home, 1);
    unsetenv("TRAINJOB_ENDPOINT");
    signal(SIGPIPE, SIG_IGN);
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    signal(SIGHUP, on_signal);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    /* Below the kernel's ephemeral range (32768 up), where outgoing connections take ports. */
    port_base = 10000 + (int)(getpid() % 200) * 110;

    char slurm_why[200] = "";
    bool up = false;
    char script[PATH_MAX + 32];
    snprintf(script, sizeof script, "%s/tests/slurm/cluster.sh", top_dir);
    if (getuid() != 0)
        snprintf(slurm_why, sizeof slurm_why, "needs root (slurmd runs jobs as their users)");
    else if (access(script, R_OK) != 0)
        snprintf(slurm_why, sizeof slurm_why, "no tests/slurm/cluster.sh here (set TRAINJOB_TOP)");
    else
        up = cluster_start(slurm_why, sizeof slurm_why) == 0;
    char *slurm_cfg = NULL;
    if (up) {
        char endpoint[160];
        snprintf(endpoint, sizeof endpoint, "http+unix://%s", getenv("SLURMRESTD_SOCKET"));
        slurm_cfg = slurm_config("slurm", endpoint);
        /* part 2 and 3's job directories copy the job.json trainjob writes */
        char why[256];
        submit_to_running("tmpl", slurm_cfg, NULL, why, sizeof why);
    }
    header();
    if (part_wanted('1'))
        part1(up, slurm_why, slurm_cfg);
    if (part_wanted('2'))
        part2(up, slurm_why);
    if (up && part_wanted('3') &&
        (part_wanted('1') ||
         part_wanted(
             '2'))) { /* a fresh cluster: no ended jobs of parts 1 and 2 in Slurm's answers */
        up = cluster_start(slurm_why, sizeof slurm_why) == 0;
        if (up) {
            free(slurm_cfg);
            char endpoint[160];
            snprintf(endpoint, sizeof endpoint, "http+unix://%s", getenv("SLURMRESTD_SOCKET"));
            slurm_cfg = slurm_config("slurm", endpoint);
        }
    }
    if (part_wanted('3'))
        part3(up, slurm_why, slurm_cfg);
    if (part_wanted('5'))
        part5(up && slurm_ran_3, slurm_why);
    if (up && part_wanted('4') && (part_wanted('1') || part_wanted('2') || part_wanted('3'))) {
        /* a fresh cluster: no jobs of the parts before in Slurm's answers */
        up = cluster_start(slurm_why, sizeof slurm_why) == 0;
        if (up) {
            free(slurm_cfg);
            char endpoint[160];
            snprintf(endpoint, sizeof endpoint, "http+unix://%s", getenv("SLURMRESTD_SOCKET"));
            slurm_cfg = slurm_config("slurm", endpoint);
        }
    }
    if (part_wanted('4'))
        part4(up, slurm_why, slurm_cfg);
    printf("load (/proc/loadavg): ");
    fflush(stdout);
    char *cat[] = {"cat", "/proc/loadavg", NULL};
    struct run r = {.out = STRBUF_INIT};
    if (run_cmd(cat, NULL, true, &r) == 0)
        fputs(strbuf_str(&r.out), stdout);
    strbuf_free(&r.out);

    acct_stop();
    stop_pid(&top_pid);
    stop_pid(&proxy_pid);
    stop_pid(&fake_pid);
    stop_pid(&engine_pid);
    if (cluster_dir[0])
        cluster_cmd("stop"); /* cancels the cluster's jobs, then stops its daemons */
    cluster_dir[0] = '\0';
    bench_remove_tree(tmp);
    free(slurm_cfg);
    free(home);
    strbuf_free(&template_json);
    curl_global_cleanup();
    return 0;
}
