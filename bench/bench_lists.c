/*
 * bench_lists: lists at scale, as a user feels them (issue 14) — the real
 * `trainjob get jobs` against the real trainjobd over 1,000, 10,000 and
 * 50,000 jobs (median wall time of whole runs), the bytes a list sends per
 * job (whole jobs and view=BASIC summaries), the real `trainjob top` on a
 * pty from exec to "live" over 10,000 and 50,000 jobs with its RSS, and the
 * engine's RSS holding 50,000 jobs. Each figure is printed next to its
 * target; the reference (squeue on the same machine) is printed as n/a when
 * Slurm is not installed.
 *
 * The jobs are seeded in process (tests/tools/seed.c: engine_job_create in
 * one store transaction, the loop never runs) into one mkdtemp directory; trainjobd
 * and trainjob are the build's (beside this binary's directory), started
 * here and stopped by pid. Asserts nothing; exits 1 only when the setup fails.
 */
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <jansson.h>
#include <limits.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/bench.h"
#include "tests/tools/seed.h"
#include "util/fileio.h"
#include "util/procstat.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#define START_CAP_MS 180000 /* 50,000 jobs load in ~10 s quiet, over 60 s at load 25 */
#define TOP_CAP_MS 60000

static const char jobs_path[] = "/compute/acp/data/v2/subscriptions/local/resourceGroups/default/"
                                "zones/local-1z/workspaces/default/trainingJobs";

static char tmpdir[64], trainjob[PATH_MAX], trainjobd[PATH_MAX], cputime[PATH_MAX];
/*
 * The largest peak RSS of a `get jobs` client since it was zeroed; -1: not
 * known. Read from tests/tools/cputime, which runs the client: our own
 * ru_maxrss of a child counts the pages it shared with us before exec (this
 * process holds the seeded jobs), which made every client look ~96 MiB.
 */
static long get_peak_kb;

static double now_ms(void)
{
    return bench_now_ns() / 1e6;
}

static int fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "bench_lists: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return -1;
}

static void row(const char *what, const char *value, const char *target, const char *reference)
{
    printf("| %-46s | %14s | %-18s | %-16s |\n", what, value, target, reference);
    fflush(stdout);
}

/* ---- seeding ------------------------------------------------------------- */

/* A config (one unschedulable node: nothing runs) and n waiting jobs in dir/state. */
static int seed(const char *dir, int n)
{
    char *config = xasprintf("%s/engine.yaml", dir), *state = xasprintf("%s/state", dir);
    const char *user = seed_user();
    struct strbuf err = STRBUF_INIT;
    int rc = -1;
    if (file_mkdirs(dir, 0700, &err) != 0 || seed_write_config(config, user, true, &err) != 0)
        fail("%s", strbuf_str(&err));
    else if (seed_jobs(config, state, user, "b", 6, n, &err) != 0)
        fail("seeding %s: %s", dir, strbuf_str(&err));
    else
        rc = 0;
    strbuf_free(&err);
    free(config);
    free(state);
    return rc;
}

/* ---- the engine ----------------------------------------------------------- */

struct engine_proc {
    pid_t pid;
    char socket[256];
};

static size_t on_body(char *data, size_t size, size_t n, void *ctx)
{
    strbuf_add(ctx, data, size * n);
    return size * n;
}

/* GET path over the socket into body; the HTTP status, 0 when nothing answered. */
static long get(const char *socket, const char *path, struct strbuf *body)
{
    CURL *c = curl_easy_init();
    char url[1024];
    snprintf(url, sizeof url, "http://x%s", path);
    strbuf_reset(body);
    curl_easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, socket);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, body);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 60000L);
    long code = 0;
    if (curl_easy_perform(c) == CURLE_OK)
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
    curl_easy_cleanup(c);
    return code;
}

static int engine_start(const char *dir, struct engine_proc *e)
{
    char *config = xasprintf("%s/engine.yaml", dir), *state = xasprintf("%s/state", dir);
    char *log = xasprintf("%s/engine.log", dir);
    snprintf(e->socket, sizeof e->socket, "%.200s/s.sock", dir);
    pid_t pid = fork();
    if (pid < 0)
        return fail("fork: %s", strerror(errno));
    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd >= 0) {
            dup2(fd, STDOUT_FILENO);
            dup2(fd, STDERR_FILENO);
        }
        execl(trainjobd, "trainjobd", "--foreground", "--config", config, "--state-dir", state,
              "--socket", e->socket, (char *)NULL);
        _exit(127);
    }
    e->pid = pid;
    struct strbuf body = STRBUF_INIT;
    double end = now_ms() + START_CAP_MS;
    long code = 0;
    while (now_ms() < end && (code = get(e->socket, "/trainjob/v1/catalog", &body)) != 200) {
        if (waitpid(pid, NULL, WNOHANG) == pid) {
            e->pid = 0;
            break;
        }
        struct timespec ts = {0, 50000000};
        nanosleep(&ts, NULL);
    }
    strbuf_free(&body);
    int rc = code == 200 ? 0 : fail("trainjobd on %s did not answer (see %s)", dir, log);
    free(config);
    free(state);
    free(log);
    return rc;
}

static void engine_stop(struct engine_proc *e)
{
    if (e->pid > 0) {
        kill(e->pid, SIGTERM);
        waitpid(e->pid, NULL, 0);
    }
    e->pid = 0;
}

/* ---- the client ------------------------------------------------------------ */

/* CPU time (user + system) trainjobd has used so far, ms. */
static double engine_cpu_ms(pid_t pid)
{
    double ms = 0;
    return procstat_cpu_ms(pid, &ms, NULL) == 0 ? ms : 0;
}

/*
 * Wall time of one `trainjob get jobs` (output to /dev/null), ms; -1 when it
 * failed. *cpu: the CPU it and the engine used meanwhile (the figure a busy
 * machine does not inflate).
 */
static double get_jobs_ms(const struct engine_proc *e, double *cpu)
{
    char endpoint[PATH_MAX + 16];
    snprintf(endpoint, sizeof endpoint, "http+unix://%s", e->socket);
    double t0 = now_ms(), engine0 = engine_cpu_ms(e->pid);
    char *errs = xasprintf("%s/get.err", tmpdir);
    pid_t pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        dup2(null, STDOUT_FILENO);
        int err = open(errs, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        dup2(err, STDERR_FILENO);
        setenv("HOME", tmpdir, 1);
        execl(cputime, "cputime", trainjob, "--endpoint", endpoint, "get", "jobs", (char *)NULL);
        _exit(127);
    }
    int status = 0;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    wait4(pid, &status, 0, &ru);
    double ms = now_ms() - t0;
    char *text = NULL;
    const char *at = NULL;
    long kb = -1;
    size_t len = 0;
    struct strbuf why = STRBUF_INIT;
    if (file_read_all(errs, 4096, &text, &len, &why) == 0 && (at = strstr(text, "maxrss_kb ")))
        kb = strtol(at + 10, NULL, 10);
    if (kb < 0 || get_peak_kb < 0)
        get_peak_kb = -1;
    else if (kb > get_peak_kb)
        get_peak_kb = kb;
    free(text);
    free(errs);
    strbuf_free(&why);
    *cpu = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3 +
           (engine_cpu_ms(e->pid) - engine0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? ms : -1;
}

/* The median wall time of runs `get jobs`; *cpu the median CPU (client + engine). */
static double median_get_jobs(const struct engine_proc *e, int runs, double *cpu)
{
    double v[16], c[16];
    int n = 0;
    for (int i = 0; i < runs && i < 16; i++) {
        double ms = get_jobs_ms(e, &c[n]);
        if (ms < 0)
            return -1;
        v[n++] = ms;
    }
    *cpu = bench_quantile(c, (size_t)n, 0.5);
    return bench_quantile(v, (size_t)n, 0.5);
}

/* Bytes per job of a page of 500, in view ("" or "&view=BASIC"). */
static double bytes_per_job(const struct engine_proc *e, const char *view)
{
    char path[512];
    snprintf(path, sizeof path, "%s?page_size=500%s", jobs_path, view);
    struct strbuf body = STRBUF_INIT;
    long code = get(e->socket, path, &body);
    json_t *j = code == 200 ? json_loadb(body.buf, body.len, 0, NULL) : NULL;
    size_t n = json_array_size(json_object_get(j, "training_jobs"));
    double per = n ? (double)body.len / (double)n : -1;
    json_decref(j);
    strbuf_free(&body);
    return per;
}

/* `trainjob top` on a 120x40 pty: ms from exec to the frame with all n jobs and "live"; its RSS. */
static int top_to_live(const struct engine_proc *e, int n, double *ms, long *rss_kb, long *hwm_kb)
{
    char endpoint[PATH_MAX + 16], want[64];
    snprintf(endpoint, sizeof endpoint, "http+unix://%s", e->socket);
    snprintf(want, sizeof want, "%d", n); /* curses writes only what changed: the count alone */
    struct winsize ws = {.ws_row = 40, .ws_col = 120};
    int fd;
    double t0 = now_ms();
    pid_t pid = forkpty(&fd, NULL, NULL, &ws);
    if (pid < 0)
        return fail("forkpty: %s", strerror(errno));
    if (pid == 0) {
        setenv("TERM", "screen-256color", 1); /* no rep: numbers arrive whole */
        setenv("LANG", "C.UTF-8", 1);
        setenv("HOME", tmpdir, 1);
        execl(trainjob, "trainjob", "--endpoint", endpoint, "top", (char *)NULL);
        _exit(127);
    }
    struct strbuf out = STRBUF_INIT;
    int rc = 0;
    bool live = bench_pty_wait(fd, TOP_CAP_MS, "live", &out);
    *ms = now_ms() - t0;
    /*
     * "live" comes with SYNCED, so the frame that shows it counts every job.
     * curses writes only the digits that changed (49500 -> 50000 is "500"):
     * when the whole count is not in the stream, C-l (redraw) repaints it.
     */
    bool counted = live && strstr(strbuf_str(&out), want);
    if (live && !counted && write(fd, "\x0c", 1) == 1)
        counted = bench_pty_wait(fd, 2000, want, &out);
    if (!counted) {
        struct strbuf tail = STRBUF_INIT;
        for (size_t i = out.len > 600 ? out.len - 600 : 0; i < out.len; i++)
            strbuf_addf(&tail, out.buf[i] >= 32 && out.buf[i] < 127 ? "%c" : "\\x%02x",
                        (unsigned char)out.buf[i]);
        rc = fail("trainjob top never showed %d jobs live; its screen ended: %s", n,
                  strbuf_str(&tail));
        strbuf_free(&tail);
    }
    *rss_kb = bench_proc_field(pid, "status", "VmRSS:");
    *hwm_kb = bench_proc_field(pid, "status", "VmHWM:");
    if (write(fd, "q", 1) != 1 || waitpid(pid, NULL, WNOHANG) == 0) {
        struct timespec tsl = {0, 200000000};
        nanosleep(&tsl, NULL);
        if (waitpid(pid, NULL, WNOHANG) == 0) {
            kill(pid, SIGTERM);
            waitpid(pid, NULL, 0);
        }
    }
    close(fd);
    strbuf_free(&out);
    return rc;
}

/* ---- main ------------------------------------------------------------------ */

static void fmt(char *buf, size_t n, double v, int decimals, const char *unit)
{
    if (v < 0)
        snprintf(buf, n, "failed");
    else
        snprintf(buf, n, "%.*f %s", decimals, v, unit);
}

int main(int argc, char **argv)
{
    (void)argc;
    char self[PATH_MAX - 64];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len <= 0) {
        fail("cannot find this binary");
        return 1;
    }
    self[len] = '\0';
    char *slash = strrchr(self, '/');
    *slash = '\0';
    const char *d = getenv("TRAINJOBD_BIN");
    snprintf(trainjobd, sizeof trainjobd, "%s", d ? d : "");
    if (!d)
        snprintf(trainjobd, sizeof trainjobd, "%s/../trainjobd", self);
    snprintf(cputime, sizeof cputime, "%s/../tests/tools/cputime", self);
    const char *c = getenv("TRAINJOB_BIN"); /* another build to compare with */
    if (c)
        snprintf(trainjob, sizeof trainjob, "%s", c);
    else
        snprintf(trainjob, sizeof trainjob, "%s/../trainjob", self);
    snprintf(tmpdir, sizeof tmpdir, "/tmp/bench_lists.XXXXXX");
    if (mkdtemp(tmpdir) == NULL) {
        fail("mkdtemp: %s", strerror(errno));
        return 1;
    }
    curl_global_init(CURL_GLOBAL_DEFAULT);
    (void)argv;
    bool slurm = system("command -v squeue >/dev/null 2>&1") == 0;
    const char *ref = slurm ? "squeue: see note" : "n/a (no Slurm)";

    printf("lists at scale (%s): the real trainjob and trainjobd over seeded jobs\n", trainjob);
    printf("| %-46s | %14s | %-18s | %-16s |\n", "measurement", "value", "target", "reference");
    printf("|%s|%s|%s|%s|\n", "------------------------------------------------",
           "----------------", "--------------------", "------------------");
    static const int sizes[] = {1000, 10000, 50000};
    int rc = 0;
    for (size_t s = 0; s < 3 && rc == 0; s++) {
        int n = sizes[s];
        char dir[128], what[96], val[32];
        snprintf(dir, sizeof dir, "%s/j%d", tmpdir, n);
        fprintf(stderr, "bench_lists: seeding %d jobs\n", n);
        struct engine_proc e = {0};
        if (seed(dir, n) != 0 || engine_start(dir, &e) != 0) {
            engine_stop(&e);
            rc = -1;
            break;
        }
        get_peak_kb = 0;
        double get_cpu = -1, get_ms = median_get_jobs(&e, 5, &get_cpu);
        snprintf(what, sizeof what, "trainjob get jobs, %d jobs (median)", n);
        fmt(val, sizeof val, get_ms, 0, "ms");
        row(what, val,
            n == 1000    ? "<= squeue"
            : n == 50000 ? "< 1000 ms"
                         : "-",
            n == 1000 ? ref : "-");
        snprintf(what, sizeof what, "  its CPU, client + engine (median)");
        fmt(val, sizeof val, get_cpu, 0, "ms");
        row(what, val, "-", "-");
        fmt(val, sizeof val, get_peak_kb < 0 ? -1 : (double)get_peak_kb / 1024, 1, "MiB");
        row("  its client's peak RSS (ru_maxrss)", val, "-", "-");
        if (n == 1000) {
            fmt(val, sizeof val, bytes_per_job(&e, ""), 0, "B");
            row("bytes per job in a list, whole jobs (FULL)", val, "-", "-");
            fmt(val, sizeof val, bytes_per_job(&e, "&view=BASIC"), 0, "B");
            row("bytes per job in a list, summaries (BASIC)", val, "as few as a row", "-");
        }
        if (n >= 10000) {
            double top_ms = -1;
            long top_kb = -1, top_hwm = -1;
            top_to_live(&e, n, &top_ms, &top_kb, &top_hwm);
            snprintf(what, sizeof what, "trainjob top: exec -> live, %d jobs", n);
            fmt(val, sizeof val, top_ms, 0, "ms");
            row(what, val, n == 50000 ? "< 1000 ms" : "-", "-");
            snprintf(what, sizeof what, "trainjob top RSS once live, %d jobs", n);
            fmt(val, sizeof val, top_kb < 0 ? -1 : (double)top_kb / 1024, 1, "MiB");
            row(what, val, n == 50000 ? "< 40 MiB" : "-", "-");
            snprintf(what, sizeof what, "  its peak (VmHWM)");
            fmt(val, sizeof val, top_hwm < 0 ? -1 : (double)top_hwm / 1024, 1, "MiB");
            row(what, val, "-", "-");
        }
        if (n == 50000) {
            long rss = bench_proc_field(e.pid, "status", "VmRSS:");
            long hwm = bench_proc_field(e.pid, "status", "VmHWM:");
            fmt(val, sizeof val, rss < 0 ? -1 : (double)rss / 1024, 1, "MiB");
            row("trainjobd RSS holding 50,000 jobs (after all)", val, "< 60 MiB", "-");
            fmt(val, sizeof val, hwm < 0 ? -1 : (double)hwm / 1024, 1, "MiB");
            row("trainjobd peak RSS (VmHWM), 50,000 jobs", val, "-", "-");
        }
        engine_stop(&e);
    }
    bench_remove_tree(tmpdir);
    curl_global_cleanup();
    return rc == 0 ? 0 : 1;
}
