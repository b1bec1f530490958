/*
 * bench_wizard: the create-task wizard as a person meets it, on a 120x40
 * pseudo terminal against a real trainjobd — time from exec to the first
 * complete frame, CPU per keystroke while typing in a field (the CPU time
 * the scheduler counted, in ns, over every key of every run, divided by
 * the keys: not a median of 10 ms ticks), resident memory with the wizard
 * open next to htop's on the same terminal (when htop is installed:
 * scripts/deps.sh --bench), and wake-ups while it sits idle (the loop
 * should make none). Prints one table.
 *
 * Every process runs with HOME and every XDG_* directory in the run's
 * temporary directory: the wizard keeps drafts in its state directory, and
 * a benchmark must not leave one in the user's.
 *
 * With valgrind installed (scripts/deps.sh installs it) two more rows:
 * instructions per keystroke typing in a field and per section switch,
 * counted by callgrind — a figure that does not move with the machine's
 * load, so a regression shows even on a busy CI box. Only the work a key
 * causes is counted (--toggle-collect on the stdin handler, the draw and
 * the debounced validation), and each figure is the difference between a
 * short and a long run over the difference in keys, so start-up, the first
 * frame and the final validation cancel out.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench.h"
#include "util/fileio.h"
#include "util/procstat.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#define RUNS 11
#define KEYS 200
#define TERM_ROWS 40
#define TERM_COLS 120

static double proc_tick_ms(pid_t pid);

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Reads what the wizard writes until `needle` has appeared or ms pass; true if it did. */
static bool read_until(int fd, struct strbuf *seen, const char *needle, int ms)
{
    double end = now_ms() + ms;
    while (now_ms() < end) {
        if (strstr(strbuf_str(seen), needle))
            return true;
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, 50) <= 0)
            continue;
        char buf[8192];
        ssize_t n = read(fd, buf, sizeof buf);
        if (n <= 0)
            return false;
        strbuf_add(seen, buf, (size_t)n);
    }
    return strstr(strbuf_str(seen), needle) != NULL;
}

static void drain(int fd)
{
    char buf[8192];
    struct pollfd p = {fd, POLLIN, 0};
    while (poll(&p, 1, 0) > 0 && read(fd, buf, sizeof buf) > 0)
        ;
}

/*
 * CPU time of every thread of pid, in ms, from the scheduler's own count
 * (/proc/PID/task/TID/schedstat, nanoseconds); the clock-tick figure of
 * /proc/PID/stat when schedstat is missing.
 */
static double proc_cpu_ms(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    double ns = 0;
    bool any = false;
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char *p = xasprintf("/proc/%d/task/%s/schedstat", (int)pid, e->d_name);
        FILE *f = fopen(p, "r");
        unsigned long long run = 0;
        if (f && fscanf(f, "%llu", &run) == 1) {
            ns += (double)run;
            any = true;
        }
        if (f)
            fclose(f);
        free(p);
    }
    if (d)
        closedir(d);
    return any ? ns / 1e6 : proc_tick_ms(pid);
}

/* User + system CPU time of pid, in milliseconds (10 ms ticks). */
static double proc_tick_ms(pid_t pid)
{
    double ms = 0;
    return procstat_cpu_ms(pid, &ms, NULL) == 0 ? ms : 0;
}

/* In a child: HOME and every XDG_* directory under home, so nothing lands in the user's. */
static void private_env(const char *home)
{
    static const char *const vars[][2] = {{"XDG_CONFIG_HOME", "config"},
                                          {"XDG_STATE_HOME", "state"},
                                          {"XDG_DATA_HOME", "data"},
                                          {"XDG_CACHE_HOME", "cache"},
                                          {"XDG_RUNTIME_DIR", "runtime"}};
    setenv("HOME", home, 1);
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        char *dir = xasprintf("%s/xdg/%s", home, vars[i][1]);
        setenv(vars[i][0], dir, 1);
        free(dir);
    }
    unsetenv("XDG_CONFIG_DIRS");
    unsetenv("XDG_DATA_DIRS");
    setenv("TERM", "xterm-256color", 1);
    setenv("LC_ALL", "C.UTF-8", 1);
}

/*
 * In a child: a home of its own below home. A wizard stopped with SIGTERM
 * keeps a draft in its state directory, and the next run would open on
 * "Resume draft?" instead of the form it measures.
 */
static void fresh_env(const char *home)
{
    char *own = xasprintf("%s/run-%d", home, (int)getpid());
    (void)mkdir(own, 0700);
    private_env(own);
    free(own);
}

static pid_t start_wizard(const char *bin, const char *endpoint, const char *home, int *master)
{
    struct winsize ws = {TERM_ROWS, TERM_COLS, 0, 0};
    pid_t pid = forkpty(master, NULL, NULL, &ws);
    if (pid == 0) {
        fresh_env(home);
        execl(bin, bin, "--endpoint", endpoint, "new", "-f", "examples/pytorch-ddp.yaml",
              (char *)NULL);
        _exit(127);
    }
    return pid;
}

static void stop(pid_t pid)
{
    kill(pid, SIGTERM);
    waitpid(pid, NULL, 0);
}

/* Is prog an executable in $PATH? */
static bool in_path(const char *prog)
{
    const char *path = getenv("PATH");
    while (path && *path) {
        size_t n = strcspn(path, ":");
        char *candidate = xasprintf("%.*s/%s", (int)n, path, prog);
        bool ok = access(candidate, X_OK) == 0;
        free(candidate);
        if (ok)
            return true;
        path += n + (path[n] == ':');
    }
    return false;
}

/* The wizard under callgrind, counting only what keys cause; its profile goes to out. */
static pid_t start_callgrind(const char *bin, const char *endpoint, const char *home,
                             const char *out, int *master)
{
    struct winsize ws = {TERM_ROWS, TERM_COLS, 0, 0};
    pid_t pid = forkpty(master, NULL, NULL, &ws);
    if (pid == 0) {
        fresh_env(home);
        char *file = xasprintf("--callgrind-out-file=%s", out);
        execlp("valgrind", "valgrind", "--tool=callgrind", "--quiet", file, "--collect-atstart=no",
               "--toggle-collect=on_stdin", "--toggle-collect=draw_now",
               "--toggle-collect=on_validate_timer", bin, "--endpoint", endpoint, "new", "-f",
               "examples/pytorch-ddp.yaml", (char *)NULL);
        _exit(127);
    }
    return pid;
}

/* The instruction count ("summary:" or "totals:") of a callgrind profile; -1 if none. */
static double callgrind_total(const char *path)
{
    FILE *f = fopen(path, "r");
    char line[256];
    double v = -1;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "summary:", 8) == 0 || strncmp(line, "totals:", 7) == 0)
            v = atof(strchr(line, ':') + 1);
    if (f)
        fclose(f);
    return v;
}

/*
 * Instructions the keys cause under callgrind: into the field (prelude),
 * then n times the key of step(i), each after the screen answered the last.
 */
static double callgrind_run(const char *tj, const char *endpoint, const char *tmp,
                            const char *prelude, const char *(*step)(int), int n)
{
    char *out = xasprintf("%s/callgrind.%d.out", tmp, n);
    int master;
    struct strbuf seen = STRBUF_INIT;
    pid_t pid = start_callgrind(tj, endpoint, tmp, out, &master);
    double total = -1;
    if (read_until(master, &seen, "Quit", 60000)) {
        ssize_t w = write(master, prelude, strlen(prelude));
        usleep(500000);
        drain(master);
        for (int k = 0; k < n; k++) {
            const char *key = step(k);
            w = write(master, key, strlen(key));
            struct pollfd p = {master, POLLIN, 0};
            poll(&p, 1, 5000); /* under valgrind the answer is slow: wait for it */
            usleep(20000);     /* the rest of the frame */
            drain(master);
        }
        (void)w;
        usleep(1500000); /* the validation after the keys stop */
        drain(master);
        stop(pid);
        total = callgrind_total(out);
    } else {
        stop(pid);
    }
    close(master);
    strbuf_free(&seen);
    unlink(out);
    free(out);
    return total;
}

static const char *typing_key(int i)
{
    static const char letters[] = "abcdefghijklmnopqrstuvwxyz";
    static char key[2];
    key[0] = letters[i % 26];
    return key;
}

static const char *section_key(int i)
{
    return i % 2 == 0 ? "\033[6~" : "\033[5~"; /* PgDn, PgUp */
}

/*
 * Resident kB of pid's mappings of libcurl and the libraries it brings
 * (TLS, Kerberos, LDAP, SSH, p11-kit...), and of libcrypto alone: what a
 * wizard on the Unix socket pays for transports it does not use (issue 14).
 */
static void curl_tree_kb(pid_t pid, long *tree, long *crypto)
{
    static const char *const libs[] = {
        "libcurl.",      "libssl.",      "libcrypto.",      "libgnutls.",  "libp11-kit.",
        "libkrb5.",      "libk5crypto.", "libgssapi",       "libldap",     "liblber",
        "libsasl2.",     "libssh2.",     "librtmp.",        "libnghttp2.", "libidn2.",
        "libpsl.",       "libnettle.",   "libhogweed.",     "libgmp.",     "libtasn1.",
        "libunistring.", "libbrotli",    "libzstd.",        "libz.so",     "libffi.",
        "libkeyutils.",  "libcom_err.",  "libkrb5support.", "libresolv."};
    char path[64], line[512], name[512] = "";
    snprintf(path, sizeof path, "/proc/%d/smaps", (int)pid);
    FILE *f = fopen(path, "r");
    *tree = *crypto = f ? 0 : -1;
    while (f && fgets(line, sizeof line, f)) {
        long kb;
        if (sscanf(line, "%*x-%*x %*s %*s %*s %*s %511s", name) == 1)
            continue;
        if (sscanf(line, "Rss: %ld", &kb) != 1)
            continue;
        const char *base = strrchr(name, '/');
        base = base ? base + 1 : name;
        for (size_t i = 0; i < sizeof libs / sizeof libs[0]; i++) {
            if (strncmp(base, libs[i], strlen(libs[i])) == 0) {
                *tree += kb;
                if (strcmp(libs[i], "libcrypto.") == 0)
                    *crypto += kb;
                break;
            }
        }
    }
    if (f)
        fclose(f);
}

/* Instructions per key: the long run less the short one, over the keys between. */
static double per_key_ir(const char *tj, const char *endpoint, const char *tmp, const char *prelude,
                         const char *(*step)(int))
{
    enum { SHORT = 10, LONG = 60 };
    double a = callgrind_run(tj, endpoint, tmp, prelude, step, SHORT);
    double b = callgrind_run(tj, endpoint, tmp, prelude, step, LONG);
    return a < 0 || b < 0 ? -1 : (b - a) / (LONG - SHORT);
}

int main(void)
{
    char *dir = file_beside_self("..");
    char *tj = xasprintf("%s/trainjob", dir), *tjd = xasprintf("%s/trainjobd", dir);
    char tmpl[] = "/tmp/bench-wizard-XXXXXX";
    char *tmp = mkdtemp(tmpl);
    if (tmp == NULL || access(tj, X_OK) != 0 || access(tjd, X_OK) != 0) {
        fprintf(stderr, "bench_wizard: needs trainjob and trainjobd in %s\n", dir);
        return 1;
    }
    char *sock = xasprintf("%s/engine.sock", tmp), *endpoint = xasprintf("http+unix://%s", sock);
    char *state = xasprintf("%s/state", tmp), *conf = xasprintf("%s/engine.yaml", tmp);
    pid_t engine = fork();
    if (engine == 0) {
        private_env(tmp);
        int null = open("/dev/null", O_WRONLY);
        dup2(null, 1);
        dup2(null, 2);
        execl(tjd, tjd, "--foreground", "--config", conf, "--state-dir", state, "--socket", sock,
              (char *)NULL);
        _exit(127);
    }
    for (int i = 0; i < 100 && access(sock, F_OK) != 0; i++)
        usleep(100000);

    double first[RUNS], per_key[RUNS], cpu_all_ms = 0;
    long rss_kb = 0, anon_kb = -1, pss_kb = -1, idle_switches = -1, curl_kb = -1, crypto_kb = -1;
    for (int r = 0; r < RUNS; r++) {
        int master;
        struct strbuf seen = STRBUF_INIT;
        double t0 = now_ms();
        pid_t pid = start_wizard(tj, endpoint, tmp, &master);
        if (!read_until(master, &seen, "Quit", 10000)) {
            fprintf(stderr, "bench_wizard: no first frame\n%s\n", strbuf_str(&seen));
            stop(pid);
            stop(engine);
            return 1;
        }
        first[r] = now_ms() - t0;
        /* Into the display name field, then type, one key at a time. */
        ssize_t w = write(master, "\t\x05", 2);
        usleep(100000);
        drain(master);
        double cpu0 = proc_cpu_ms(pid);
        for (int k = 0; k < KEYS; k++) {
            char c = (char)('a' + k % 26);
            w = write(master, &c, 1);
            struct pollfd p = {master, POLLIN, 0};
            poll(&p, 1, 100); /* wait for its echo on screen */
            drain(master);
        }
        (void)w;
        usleep(400000); /* the validation after typing stops */
        drain(master);
        per_key[r] = (proc_cpu_ms(pid) - cpu0) * 1000.0 / KEYS;
        cpu_all_ms += proc_cpu_ms(pid) - cpu0;
        if (r == 0) {
            rss_kb = bench_proc_field(pid, "status", "VmRSS:");
            curl_tree_kb(pid, &curl_kb, &crypto_kb);
            anon_kb = bench_proc_field(pid, "status", "RssAnon:");
            pss_kb = bench_proc_field(pid, "smaps_rollup", "Pss:");
            long before = bench_proc_field(pid, "status", "voluntary_ctxt_switches:") +
                          bench_proc_field(pid, "status", "nonvoluntary_ctxt_switches:");
            sleep(5);
            drain(master);
            idle_switches = bench_proc_field(pid, "status", "voluntary_ctxt_switches:") +
                            bench_proc_field(pid, "status", "nonvoluntary_ctxt_switches:") - before;
        }
        stop(pid);
        close(master);
        strbuf_free(&seen);
    }
    double ir_type = -1, ir_section = -1;
    bool callgrind = in_path("valgrind");
    if (callgrind) {
        ir_type =
            per_key_ir(tj, endpoint, tmp, "\t\x05", typing_key); /* Display name, at its end */
        ir_section = per_key_ir(tj, endpoint, tmp, "", section_key);
    }
    long htop_kb = in_path("htop") ? bench_htop_rss_kb(TERM_ROWS, TERM_COLS, tmp) : -1;
    kill(engine, SIGTERM);
    waitpid(engine, NULL, 0);
    qsort(first, RUNS, sizeof first[0], bench_cmp_double);
    qsort(per_key, RUNS, sizeof per_key[0], bench_cmp_double);

    printf("create-task wizard (trainjob new on a %dx%d pty, real trainjobd); %d runs; reference: "
           "htop on the same pty\n",
           TERM_COLS, TERM_ROWS, RUNS);
    printf("| %-44s | %10s | %10s | %-16s | %-12s |\n", "measurement", "median", "worst", "target",
           "reference");
    printf("|----------------------------------------------|------------|------------|-------------"
           "-----|--------------|\n");
    char htop[32] = "n/a";
    if (htop_kb >= 0)
        snprintf(htop, sizeof htop, "htop %.1f MB", htop_kb / 1024.0);
    printf("| %-44s | %7.1f ms | %7.1f ms | %-16s | %-12s |\n",
           "exec -> first complete frame (incl. catalog)", first[RUNS / 2], first[RUNS - 1],
           "< 30 ms", "n/a");
    printf("| %-44s | %7.1f µs | %7.1f µs | %-16s | %-12s |\n",
           "CPU per keystroke (all keys' CPU / keys)", cpu_all_ms * 1000.0 / (RUNS * KEYS),
           per_key[RUNS - 1], "< 1 ms", "n/a");
    printf("| %-44s | %7.1f MB | %10s | %-16s | %-12s |\n", "RSS with the wizard open",
           rss_kb / 1024.0, "n/a", "< 7 MB", htop);
    /* The rest of RSS is shared libraries' pages: libcrypto alone, loaded by libcurl's
     * dependencies with either TLS flavour, is about 3 MB of relocated pages. */
    printf("| %-44s | %7.1f MB | %10s | %-16s | %-12s |\n",
           "...of it libcurl and the libraries it loads", curl_kb / 1024.0, "n/a", "-", "n/a");
    printf("| %-44s | %7.1f MB | %10s | %-16s | %-12s |\n", "   ...of those, libcrypto",
           crypto_kb / 1024.0, "n/a", "-", "n/a");
    printf("| %-44s | %7.1f MB | %10s | %-16s | %-12s |\n", "...of it anonymous (heap, stacks)",
           anon_kb / 1024.0, "n/a", "-", "n/a");
    printf("| %-44s | %7.1f MB | %10s | %-16s | %-12s |\n", "PSS (shared pages split among users)",
           pss_kb / 1024.0, "n/a", "-", "n/a");
    printf("| %-44s | %10ld | %10s | %-16s | %-12s |\n", "context switches in 5 s idle",
           idle_switches, "n/a", "0 wake-ups", "n/a");
    if (!callgrind)
        printf("| %-44s | %10s | %10s | %-16s | %-12s |\n", "callgrind: instructions per keystroke",
               "skipped", "n/a", "no valgrind", "n/a");
    else {
        printf("| %-44s | %6.0f kIr | %10s | %-16s | %-12s |\n",
               "callgrind: instructions per keystroke typing", ir_type / 1e3, "n/a", "< 1000 kIr",
               "n/a");
        printf("| %-44s | %6.0f kIr | %10s | %-16s | %-12s |\n",
               "callgrind: instructions per section switch", ir_section / 1e3, "n/a", "< 5000 kIr",
               "n/a");
    }
    char *cmd = xasprintf("rm -rf '%s'", tmp);
    int rc = system(cmd);
    (void)rc;
    free(cmd);
    free(sock), free(endpoint), free(state), free(conf), free(tj), free(tjd), free(dir);
    return 0;
}
