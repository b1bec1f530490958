/*
 * bench_shares: a team trainjobd under the three abuses of issue 20 at once,
 * seen by a fourth member.
 *
 * One real trainjobd (the build's, beside this binary's directory;
 * $TRAINJOBD_BIN overrides) on loopback TCP with four members' keys. Member
 * D's latency — signed GETs of the catalog, each on a fresh connection, as
 * a script would send them — is measured with the engine idle, then while
 *   A floods signed requests (past its replay share: 429s),
 *   nobody keeps 1,100 connections from 127.0.0.2/.3 trickling a header
 *   byte a second, dialling again each one the engine closes, and
 *   C holds 40 FULL watch streams it never reads,
 * all in the same run, with the engine's default limits. The attackers and
 * the measuring client are tests/tools/shareload. Prints one table (median,
 * p99, ratio to idle); asserts nothing, exits 1 only when the setup fails.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/bench.h"
#include "util/fileio.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#define SAMPLES 300
#define WARM_MS 3000 /* the attacks run this long before D measures */

static const char watch_path[] =
    "/compute/acp/data/v2/subscriptions/local/resourceGroups/default/"
    "zones/local-1z/workspaces/default/trainingJobs?watch=true&view=FULL";

/* A program beside dir (this binary's build directory), or $env. */
static char *beside(const char *env, const char *dir, const char *rel)
{
    const char *e = getenv(env);
    return e && *e ? xstrdup(e) : xasprintf("%s/%s", dir, rel);
}

/* Forks argv with stdin from /dev/null (or a pipe's read end) and stdout to out (may be NULL). */
static pid_t spawn(char *const argv[], int in, const char *out)
{
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    int fd = in >= 0 ? in : open("/dev/null", O_RDONLY);
    dup2(fd, 0);
    if (out) {
        int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        dup2(o, 1);
        dup2(o, 2);
    }
    execv(argv[0], argv);
    _exit(127);
}

/* Runs shareload latency as D; the median and p99 in ms, false when it failed. */
static bool measure(const char *load, const char *port, const char *tmp, double *median,
                    double *p99, int *ok, int *sent)
{
    char *out = xasprintf("%s/latency", tmp);
    char n[16];
    snprintf(n, sizeof n, "%d", SAMPLES);
    char *argv[] = {(char *)load, "latency", (char *)port,           "AKD",
                    "SKD",        n,         "/trainjob/v1/catalog", NULL};
    pid_t pid = spawn(argv, -1, out);
    int st = 0;
    waitpid(pid, &st, 0);
    struct strbuf err = STRBUF_INIT;
    char *text = NULL;
    size_t len = 0;
    bool good = file_read_all(out, 4096, &text, &len, &err) == 0 &&
                sscanf(text, "ms %lf %lf ok %d of %d", median, p99, ok, sent) == 4;
    free(text);
    strbuf_free(&err);
    free(out);
    return good;
}

static void row(const char *what, double median, double p99, double idle_median, double idle_p99)
{
    printf("| %-46s | %8.3f | %8.3f | %6.2fx | %6.2fx |\n", what, median, p99, median / idle_median,
           p99 / idle_p99);
}

int main(int argc, char **argv)
{
    (void)argc;
    signal(SIGPIPE, SIG_IGN);
    char *self = realpath("/proc/self/exe", NULL);
    char *bench_dir = xstrdup(self ? self : argv[0]);
    *strrchr(bench_dir, '/') = '\0';
    char *build = xasprintf("%s/..", bench_dir);
    char *trainjobd = beside("TRAINJOBD_BIN", build, "trainjobd");
    char *shim = beside("TRAINJOB_SHIM", build, "trainjob-shim");
    char *load = xasprintf("%s/tests/tools/shareload", build);
    char tmpl[] = "/tmp/bench_shares.XXXXXX";
    char *tmp = mkdtemp(tmpl);
    if (tmp == NULL || access(load, X_OK) != 0 || access(trainjobd, X_OK) != 0) {
        fprintf(stderr, "bench_shares: needs %s and %s\n", trainjobd, load);
        return 1;
    }
    const char *me = getenv("USER") ? getenv("USER") : "root";
    char *conf = xasprintf("%s/engine.yaml", tmp);
    char *text =
        xasprintf("subscription: local\nresource_group: default\nzone: local-1z\n"
                  "regions:\n- {name: local-1, zones: [local-1z], vpcs: [vpc-local]}\n"
                  "workspaces:\n- name: default\n  owners: [%s]\n  members: [ma, mb, mc, md]\n"
                  "nodes:\n- {name: n1, gpus: 0, cpus: 8, memory_mib: 8192}\n"
                  "pools:\n- {name: std, type: dedicated}\n"
                  "specs:\n- {name: cpu-1, gpus: 0, cpus: 1, memory_mib: 256}\n"
                  "images:\n- {path: local/host}\n"
                  "keys:\n- {access_key: AKA, secret_key: SKA, user: ma}\n"
                  "- {access_key: AKC, secret_key: SKC, user: mc}\n"
                  "- {access_key: AKD, secret_key: SKD, user: md}\n",
                  me);
    struct strbuf err = STRBUF_INIT;
    if (file_write_atomic(conf, text, strlen(text), 0600, &err) != 0) {
        fprintf(stderr, "bench_shares: %s\n", strbuf_str(&err));
        return 1;
    }
    char *state = xasprintf("%s/state", tmp), *sock = xasprintf("%s/engine.sock", tmp);
    char *log = xasprintf("%s/engine.log", tmp);
    setenv("HOME", tmp, 1);
    setenv("TRAINJOB_SHIM", shim, 1);
    char *eargv[] = {trainjobd,  "--foreground", "--config", conf,          "--state-dir", state,
                     "--socket", sock,           "--listen", "127.0.0.1:0", NULL};
    pid_t engine = spawn(eargv, -1, log);
    char port[16] = "";
    for (int i = 0; i < 200 && !port[0]; i++) {
        usleep(50 * 1000);
        struct strbuf e = STRBUF_INIT;
        char *l = NULL;
        size_t len = 0;
        if (file_read_all(log, 1 << 20, &l, &len, &e) == 0) {
            const char *at = strstr(l, "and 127.0.0.1:");
            if (at && sscanf(at + 14, "%15[0-9]", port) != 1)
                port[0] = '\0';
        }
        free(l);
        strbuf_free(&e);
    }
    if (!port[0]) {
        fprintf(stderr, "bench_shares: trainjobd did not say its port (see %s)\n", log);
        kill(engine, SIGKILL);
        return 1;
    }
    usleep(300 * 1000);

    double idle_m = 0, idle_p = 0, m = 0, p = 0;
    int idle_ok = 0, ok = 0, idle_sent = 0, sent = 0;
    bool good = measure(load, port, tmp, &idle_m, &idle_p, &idle_ok, &idle_sent);

    /* The attacks, all at once. */
    char *flood[] = {load, "signed", port, "AKA", "SKA", "100000000", "/trainjob/v1/nosuch", NULL};
    char *loris[] = {load, "slowloris", port, "1100", "127.0.0.2", "127.0.0.3", NULL};
    char *watches[] = {load, "watch", port, "AKC", "SKC", "40", (char *)watch_path, NULL};
    int hold[2];
    if (pipe2(hold, O_CLOEXEC) != 0)
        return 1;
    pid_t pa = spawn(flood, -1, "/dev/null");
    pid_t pb = spawn(loris, -1, "/dev/null");
    pid_t pc = spawn(watches, hold[0], "/dev/null");
    close(hold[0]);
    usleep(WARM_MS * 1000);
    long rss_kb = bench_proc_field(engine, "status", "VmRSS:");
    good = good && measure(load, port, tmp, &m, &p, &ok, &sent);
    kill(pa, SIGKILL);
    kill(pb, SIGKILL);
    close(hold[1]); /* C closes its watches */
    waitpid(pa, NULL, 0);
    waitpid(pb, NULL, 0);
    waitpid(pc, NULL, 0);
    kill(engine, SIGTERM);
    waitpid(engine, NULL, 0);

    printf("trainjobd shared by members (issue 20): member D's signed GET of the catalog, a fresh "
           "connection each, %d samples\n",
           SAMPLES);
    printf("| %-46s | %8s | %8s | %7s | %7s |\n", "engine", "median", "p99", "median", "p99");
    printf("|%s|%s|%s|%s|%s|\n", "------------------------------------------------", "----------",
           "----------", "---------", "---------");
    if (!good) {
        printf("| %-46s | %8s | %8s | %7s | %7s |\n", "(the measuring client failed)", "n/a", "n/a",
               "n/a", "n/a");
    } else {
        row("idle (ms; ratio to idle)", idle_m, idle_p, idle_m, idle_p);
        row("A replay flood, 1,100 slowloris, C 40 watches", m, p, idle_m, idle_p);
    }
    printf("answered 200: idle %d/%d, under the abuse %d/%d (a minute at most); engine RSS under "
           "it %ld kB\n",
           idle_ok, idle_sent, ok, sent, rss_kb);
    bench_remove_tree(tmp);
    return good ? 0 : 1;
}
