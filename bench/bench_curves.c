/*
 * bench_curves: issue 24's rows for TensorBoard curves, each beside its
 * reference measured in the same run, interleaved, medians of RUNS:
 *   - the Metrics pane loading every point of a 100 MB event file (4 tags
 *     x 525,000 steps, ~2.1 M points) from a real trainjobd over its Unix
 *     socket: tui/metrics_pane polled page after page until the backend
 *     says there is no more, exactly as the job screen does after `M`
 *     (engine pages, HTTP, decoding, the pane's metricset); the engine's
 *     CPU for it from /proc; the pages and the points the pane ended with;
 *   - `trainjob metrics --logdir DIR -o csv >/dev/null`, in rows per second;
 *   - the reference for both: `trainjob metrics --logdir DIR` (the table:
 *     the whole file read into a metricset), the CLI of this build.
 * Everything lives in one mkdtemp directory under $TMPDIR (or /tmp):
 * event file, engine config and state, socket; trainjobd (beside this
 * binary's directory, or $TRAINJOBD_BIN) is stopped by pid, the directory
 * removed. Asserts nothing; exits 1 only when the setup fails.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "api/apierror.h"
#include "api/backend.h"
#include "api/context.h"
#include "api/http_multi.h"
#include "api/tfevents.h"
#include "bench/bench.h"
#include "engine/engine.h"
#include "engine/state.h"
#include "engine/store.h"
#include "tui/metrics_pane.h"
#include "util/fileio.h"
#include "util/loop.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#define RUNS 5
#define STEPS 525000
#define NTAGS 4

static const char *const tags[NTAGS] = {"train/loss", "train/acc", "eval/loss", "lr"};

__attribute__((format(printf, 1, 2))) static int fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "bench_curves: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return -1;
}

/* A binary beside this one's directory (build/X for build/bench/bench_curves), or $ENV. */
static char *sibling(const char *env, const char *name)
{
    const char *e = getenv(env);
    if (e && *e)
        return xstrdup(e);
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return xstrdup(name);
    self[n] = '\0';
    char *dir = dirname(dirname(self));
    return xasprintf("%s/%s", dir, name);
}

/* The event file: each step one record per tag, as a summary writer appends them. */
static int write_events(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return fail("%s: %s", path, strerror(errno));
    struct strbuf sb = STRBUF_INIT;
    uint64_t x = 0x9E3779B97F4A7C15ull;
    int rc = 0;
    for (int64_t s = 0; s < STEPS && rc == 0; s++) {
        for (int t = 0; t < NTAGS; t++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            double noise = (double)(x % 10000) / 1e5;
            float v = (float)(1.0 / (1.0 + (double)s / 1000) + t + noise);
            tfevents_write_simple(&sb, s, 1.7e9 + (double)s * 0.25, tags[t], v);
        }
        if (sb.len > (1u << 20) || s == STEPS - 1) {
            if (write(fd, sb.buf, sb.len) != (ssize_t)sb.len)
                rc = fail("%s: %s", path, strerror(errno));
            strbuf_reset(&sb);
        }
    }
    strbuf_free(&sb);
    close(fd);
    return rc;
}

/* The engine's config: one node, no room to run (the job only holds the log path), a volume. */
static int write_config(const char *path, const char *vol)
{
    struct strbuf y = STRBUF_INIT, err = STRBUF_INIT;
    strbuf_addf(&y,
                "subscription: local\nresource_group: default\nzone: local-1z\n"
                "regions:\n- {name: local-1, zones: [local-1z], vpcs: [vpc-local]}\n"
                "workspaces:\n- name: default\n  owners: [root]\n"
                "nodes:\n- {name: n1, gpus: 0, cpus: 4, memory_mib: 65536, unschedulable: true}\n"
                "pools:\n- {name: std, type: dedicated}\n"
                "specs:\n- {name: cpu-1, gpus: 0, cpus: 1, memory_mib: 256}\n"
                "images:\n- {path: local/host}\n"
                "volumes:\n- {id: scratch, zone: local-1z, path: %s}\n",
                vol);
    int rc = file_write_atomic(path, y.buf, y.len, 0600, &err);
    if (rc)
        fail("%s: %s", path, strbuf_str(&err));
    strbuf_free(&y);
    strbuf_free(&err);
    return rc ? -1 : 0;
}

/* The job "curves" with its log path on the volume, written into the state before the engine starts. */
static int seed_job(const char *config, const char *state_dir, const char *user)
{
    struct loop *lp = loop_new();
    struct engine_options opt = {
        .config_path = config, .state_dir = state_dir, .shim_path = "/bin/false"};
    struct engine *eng = NULL;
    struct strbuf err = STRBUF_INIT;
    int rc = -1;
    static const char body[] =
        "{\"display_name\":\"curves\",\"framework\":\"PYTORCH_DDP\","
        "\"resource_pool\":{\"name\":\"std\"},"
        "\"roles\":[{\"total_replicas\":1,\"resource_spec\":[{\"name\":\"cpu-1\"}],"
        "\"image_path\":\"local/host\",\"startup_script\":\"true\"}],"
        "\"mount\":[{\"id\":\"scratch\",\"subdir\":\"/curves\",\"mount_path\":\"/mnt/afs\"}],"
        "\"tensorboard\":{\"log_path\":\"/mnt/afs/tb\"}}";
    if (engine_open(&opt, lp, &eng, &err) == 0 && store_begin(eng->store, &err) == STORE_OK) {
        struct api_error aerr = {0};
        json_t *reply = NULL;
        int st = engine_job_create(eng, user, "default", "curves", body, sizeof body - 1, &reply,
                                   &aerr);
        json_decref(reply);
        if (st != 200) {
            fail("creating the job: %s", aerr.message);
            store_rollback(eng->store);
        } else if (store_commit(eng->store, &err) == STORE_OK) {
            rc = 0;
        }
    }
    if (rc && err.len)
        fail("%s", strbuf_str(&err));
    engine_close(eng);
    loop_free(lp);
    strbuf_free(&err);
    return rc;
}

static bool socket_answers(const char *path)
{
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
    bool ok = fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) == 0;
    if (fd >= 0)
        close(fd);
    return ok;
}

static pid_t start_engine(const char *bin, const char *config, const char *state,
                          const char *sock, const char *log)
{
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGTERM); /* a bench that dies leaves no engine behind */
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd >= 0) {
            dup2(fd, STDOUT_FILENO);
            dup2(fd, STDERR_FILENO);
        }
        execl(bin, bin, "--foreground", "--config", config, "--state-dir", state, "--socket", sock,
              (char *)NULL);
        _exit(127);
    }
    for (int i = 0; pid > 0 && i < 400; i++) {
        if (socket_answers(sock))
            return pid;
        if (waitpid(pid, NULL, WNOHANG) == pid)
            return -1;
        struct timespec ts = {0, 25000000};
        nanosleep(&ts, NULL);
    }
    return -1;
}

/* utime + stime of pid in seconds. */
static double cpu_of(pid_t pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')');
    unsigned long ut = 0, st = 0;
    if (p)
        sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st);
    return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* Runs argv with stdout to /dev/null; seconds of wall time (-1 when it failed), and of CPU. */
static double timed_exec(char *const argv[], double *cpu)
{
    double t0 = bench_now_ns();
    pid_t pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        dup2(null, STDOUT_FILENO);
        execv(argv[0], argv);
        _exit(127);
    }
    int status = 0;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    wait4(pid, &status, 0, &ru);
    double s = (bench_now_ns() - t0) / 1e9;
    *cpu = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? s : -1;
}

struct pane_run {
    struct metrics_pane *p;
    bool done;
};


/* The pane from empty to every point; seconds, the pages, and the points the charts hold. */
static double pane_load(struct backend *b, uint64_t *pages, size_t *points, double *cpu,
                        bool *ok)
{
    struct timespec c0, c1;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
    struct loop *lp = loop_new();
    struct http_multi *m = http_multi_new(lp);
    struct pane_run r = {metrics_pane_new(), false};
    double t0 = bench_now_ns();
    metrics_pane_set_job_state(r.p, JOB_STATE_SUCCEEDED);
    metrics_pane_set_visible(r.p, true);
    metrics_pane_set_backend(r.p, b, m, lp, "curves");
    while (!r.done && (bench_now_ns() - t0) < 120e9) {
        loop_run_once(lp, 100);
        /* done once a page came and nothing more is coming (the file read to its end) */
        r.done = metrics_pane_message(r.p) ||
                 (metrics_pane_pages(r.p) > 0 && !metrics_pane_loading(r.p));
    }
    double s = (bench_now_ns() - t0) / 1e9;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
    *cpu = (double)(c1.tv_sec - c0.tv_sec) + (double)(c1.tv_nsec - c0.tv_nsec) / 1e9;
    *pages = metrics_pane_pages(r.p);
    *points = 0;
    for (int t = 0; t < NTAGS; t++)
        *points += metrics_pane_points(r.p, ".", tags[t], NULL, 0);
    *ok = r.done && metrics_pane_message(r.p) == NULL;
    if (metrics_pane_message(r.p))
        fprintf(stderr, "bench_curves: the pane says: %s\n", metrics_pane_message(r.p));
    metrics_pane_free(r.p);
    http_multi_free(m);
    loop_free(lp);
    return s;
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    char *dir = xasprintf("%s/bench_curves.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (mkdtemp(dir) == NULL) {
        fail("mkdtemp %s: %s", dir, strerror(errno));
        return 1;
    }
    char *vol = xasprintf("%s/vol", dir), *tb = xasprintf("%s/vol/curves/tb", dir);
    char *events = xasprintf("%s/events.out.tfevents.1700000000.bench", tb);
    char *config = xasprintf("%s/engine.yaml", dir), *state = xasprintf("%s/state", dir);
    char *sock = xasprintf("%s/engine.sock", dir), *log = xasprintf("%s/engine.log", dir);
    char *trainjobd = sibling("TRAINJOBD_BIN", "trainjobd");
    char *trainjob = sibling("TRAINJOB_BIN", "trainjob");
    struct strbuf err = STRBUF_INIT;
    int rc = 1;
    pid_t engine = -1;
    struct backend *b = NULL;
    if (file_mkdirs(tb, 0755, &err) != 0 || file_mkdirs(state, 0700, &err) != 0) {
        fail("%s", strbuf_str(&err));
        goto out;
    }
    if (write_events(events) || write_config(config, vol) || seed_job(config, state, "root"))
        goto out;
    engine = start_engine(trainjobd, config, state, sock, log);
    if (engine < 0) {
        fail("%s did not answer (its log: %s)", trainjobd, log);
        goto out;
    }
    struct resolved_context ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.ctx.name = (char *)"bench";
    ctx.ctx.driver = CONTEXT_DRIVER_TRAINJOBD;
    ctx.ctx.endpoint = xasprintf("http+unix://%s", sock);
    ctx.ctx.workspace = (char *)"default";
    ctx.ctx.subscription = (char *)"local";
    ctx.ctx.resource_group = (char *)"default";
    ctx.ctx.zone = (char *)"local-1z";
    b = backend_open(&ctx, &err);
    free(ctx.ctx.endpoint);
    if (b == NULL) {
        fail("backend: %s", strbuf_str(&err));
        goto out;
    }
    struct stat st;
    stat(events, &st);

    double pane_s[RUNS], pane_cpu[RUNS], client_cpu[RUNS], read_s[RUNS], csv_s[RUNS];
    double read_cpu[RUNS], csv_cpu[RUNS];
    uint64_t pages = 0;
    size_t points = 0;
    bool ok = true;
    char *read_argv[] = {trainjob, (char *)"metrics", (char *)"--logdir", tb, NULL};
    char *csv_argv[] = {trainjob, (char *)"metrics", (char *)"--logdir", tb, (char *)"-o",
                        (char *)"csv", NULL};
    for (int i = 0; i < RUNS && ok; i++) {
        read_s[i] = timed_exec(read_argv, &read_cpu[i]);
        double c0 = cpu_of(engine);
        pane_s[i] = pane_load(b, &pages, &points, &client_cpu[i], &ok);
        pane_cpu[i] = cpu_of(engine) - c0;
        csv_s[i] = timed_exec(csv_argv, &csv_cpu[i]);
        ok = ok && read_s[i] >= 0 && csv_s[i] >= 0;
    }
    if (!ok) {
        fail("a run failed (the engine's log: %s)", log);
        goto out;
    }
    double read_m = bench_quantile(read_s, RUNS, 0.5), pane_m = bench_quantile(pane_s, RUNS, 0.5);
    double csv_m = bench_quantile(csv_s, RUNS, 0.5);
    double npoints = (double)STEPS * NTAGS;
    printf("TensorBoard curves (issue 24): one %.0f MB event file, %d tags x %d steps = %.0f "
           "points; %d interleaved runs, medians; trainjobd over its Unix socket\n",
           (double)st.st_size / 1e6, NTAGS, STEPS, npoints, RUNS);
    printf("| %-52s | %10s | %-32s | %10s | %7s | %-8s |\n", "measurement", "trainjob",
           "reference, same run", "reference", "ratio", "target");
    printf("|------------------------------------------------------|------------|------------------"
           "----------------|------------|---------|----------|\n");
    printf("| %-52s | %8.3f s | %-32s | %8.3f s | %6.2fx | %-8s |\n",
           "Metrics pane, all points (engine pages + client)", pane_m,
           "metrics --logdir (the table read)", read_m, pane_m / read_m, "<= 3x");
    double read_c = bench_quantile(read_cpu, RUNS, 0.5);
    double pane_c = bench_quantile(pane_cpu, RUNS, 0.5) + bench_quantile(client_cpu, RUNS, 0.5);
    printf("| %-52s | %8.3f s | %-32s | %8.3f s | %6.2fx | %-8s |\n",
           "...CPU: engine + client", pane_c, "the table read's CPU", read_c, pane_c / read_c,
           "<= 3x");
    printf("| %-52s | %8.3f s | %-32s | %10s | %7s | %-8s |\n", "...of which the engine's",
           bench_quantile(pane_cpu, RUNS, 0.5), "", "", "", "-");
    printf("| %-52s | %10llu | %-32s | %10s | %7s | %-8s |\n", "...pages it took",
           (unsigned long long)pages, "", "", "", "-");
    printf("| %-52s | %10zu | %-32s | %10.0f | %7s | %-8s |\n",
           "...points the pane's charts hold (of all read)", points, "points in the file", npoints,
           "", "-");
    printf("| %-52s | %8.3f s | %-32s | %8.3f s | %6.2fx | %-8s |\n", "metrics -o csv >/dev/null",
           csv_m, "metrics --logdir (the table read)", read_m, csv_m / read_m, "-");
    printf("| %-52s | %6.2f M/s | %-32s | %10s | %7s | %-8s |\n", "...rows per second",
           npoints / csv_m / 1e6, "", "", "", ">= 5 M/s");
    double csv_c = bench_quantile(csv_cpu, RUNS, 0.5);
    printf("| %-52s | %6.2f M/s | %-32s | %8.3f s | %6.2fx | %-8s |\n",
           "...rows per CPU-second", npoints / csv_c / 1e6, "the table read's CPU", read_c,
           csv_c / read_c, ">= 5 M/s");
    rc = 0;
out:
    if (b)
        backend_free(b);
    if (engine > 0) {
        kill(engine, SIGTERM);
        waitpid(engine, NULL, 0);
    }
    bench_remove_tree(dir);
    strbuf_free(&err);
    free(dir);
    free(vol);
    free(tb);
    free(events);
    free(config);
    free(state);
    free(sock);
    free(log);
    free(trainjobd);
    free(trainjob);
    return rc;
}
