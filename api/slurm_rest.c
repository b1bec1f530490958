/*
 * slurm_rest: the Slurm driver's requests to slurmrestd — the JWT (from
 * token_file or token_command, fetched again once when refused), the API
 * version (from /openapi/v3 through api/slurm_shapes, kept in the user's
 * cache per endpoint with the server's release, learnt again when it changes),
 * and slurm_rest, the one call every operation of api/slurm*.c makes;
 * transport failures and Slurm's errors worded for the user. slurm_rest
 * blocks (the CLI) or, while an operation runs for the loop (s->replay),
 * answers from the replies recorded so far and notes the next request for
 * api/slurm.c to make through http_multi. token_command runs bounded (10 s,
 * its process group killed), watched by top's loop or, for the CLI, by a
 * loop of its own: one mechanism for both.
 * Every reply is counted for TRAINJOB_HTTP_STATS.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "api/apierror.h"
#include "api/context.h"
#include "api/http.h"
#include "api/jobsum.h"
#include "api/jsonbound.h"
#include "api/paths.h"
#include "api/slurm_priv.h"
#include "api/slurm_shapes.h"
#include "util/fileio.h"
#include "util/loop.h"
#include "util/strbuf.h"
#include "util/timefmt.h"
#include "util/utf8.h"
#include "util/xalloc.h"

#define TOKEN_MAX 16384
#define TOKEN_TIMEOUT_MS 10000 /* token_command's time to print a token and exit (doc/slurm.md) */

/* ---- counting calls (TRAINJOB_HTTP_STATS) ----------------------------------- */

/*
 * Every reply from slurmrestd is counted (requests and reply bytes, blocking
 * or on the loop). With TRAINJOB_HTTP_STATS=FILE the totals are appended to
 * FILE at exit as one line "slurm calls=N bytes=M seconds=S pid=P", which the
 * bench reads to give REST calls per minute.
 */
static struct {
    unsigned long long calls, bytes;
    int64_t since;
    bool registered;
} stats;

static void stats_write(void)
{
    const char *path = getenv("TRAINJOB_HTTP_STATS");
    if (path == NULL || *path == '\0')
        return;
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return;
    char *line =
        xasprintf("slurm calls=%llu bytes=%llu seconds=%.1f pid=%ld\n", stats.calls, stats.bytes,
                  (double)(time_now_ms() - stats.since) / 1000.0, (long)getpid());
    ssize_t n = write(fd, line, strlen(line));
    (void)n;
    free(line);
    close(fd);
}

static void slurm_stats_count(const struct http_result *r, size_t streamed)
{
    if (!stats.registered) {
        stats.registered = true;
        stats.since = time_now_ms();
        if (getenv("TRAINJOB_HTTP_STATS"))
            atexit(stats_write);
    }
    stats.calls++;
    stats.bytes += r->body.len + streamed;
}

/* ---- the token ------------------------------------------------------------ */

/*
 * The JWT in text: the line "SLURM_JWT=<jwt>" (as scontrol token prints it)
 * wherever it is, else the first non-blank line; blanks trimmed, NULL when none.
 */
static char *token_of(const char *text, size_t len)
{
    const char *found = NULL, *found_end = NULL;
    for (int pass = 0; pass < 2 && found == NULL; pass++) {
        for (const char *p = text, *end = text + len; p < end;) {
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            const char *le = nl ? nl : end;
            const char *s = p;
            while (s < le && (*s == ' ' || *s == '\t'))
                s++;
            if (pass == 0 && (size_t)(le - s) > 10 && strncmp(s, "SLURM_JWT=", 10) == 0)
                found = s + 10;
            else if (pass == 1 && s < le && *s != '\r')
                found = s;
            if (found) {
                found_end = le;
                break;
            }
            p = le + 1;
        }
    }
    if (found == NULL)
        return NULL;
    size_t n = 0;
    while (found + n < found_end && found[n] > ' ' && found[n] < 0x7f)
        n++;
    return n ? xstrndup(found, n) : NULL;
}

static int run_token_command(struct slurm *s, struct backend *b, struct strbuf *why);

/* ---- the token file --------------------------------------------------------- */

/*
 * token_file is opened without following a symlink and must be a regular
 * file (either is refused naming the file). One readable by group or others
 * is used but warned about once, as ssh does for a key: on stderr for the
 * CLI, kept in s->warning for a screen to show (slurm_take_warning).
 */
static int read_token_file(struct slurm *s, struct strbuf *why)
{
    int fd = open(s->token_file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ELOOP)
            strbuf_addf(why, "token_file %s is a symlink; refused (name the file itself)",
                        s->token_file);
        else
            strbuf_addf(why, "token_file %s: %s", s->token_file, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        strbuf_addf(why, "token_file %s is not a regular file; refused", s->token_file);
        close(fd);
        return -1;
    }
    /* Another user's token, or one they may replace, would make every request theirs. */
    struct strbuf own = STRBUF_INIT;
    if (context_file_trusted(s->token_file, &st, &own) != 0) {
        strbuf_addf(why, "token_file %s: whoever can write it chooses as whom you act; refused",
                    strbuf_str(&own));
        strbuf_free(&own);
        close(fd);
        return -1;
    }
    strbuf_free(&own);
    if ((st.st_mode & 077) != 0 && !s->warned) {
        s->warned = true;
        free(s->warning);
        s->warning = xasprintf("warning: token_file %s is readable by %s (mode %04o): run "
                               "chmod 600 %s",
                               s->token_file, (st.st_mode & 007) ? "others" : "its group",
                               (unsigned)(st.st_mode & 07777), s->token_file);
        if (s->replay == NULL) { /* the CLI: said now; a screen takes it from s->warning */
            fprintf(stderr, "trainjob: %s\n", s->warning);
            free(s->warning);
            s->warning = NULL;
        }
    }
    struct strbuf data = STRBUF_INIT;
    char buf[4096];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
        if (n > 0 && data.len < TOKEN_MAX)
            strbuf_add(&data, buf, (size_t)n);
    close(fd);
    int rc = -1;
    char *t = token_of(data.buf ? data.buf : "", data.len);
    if (t == NULL) {
        strbuf_addf(why, "token_file %s holds no token", s->token_file);
    } else {
        free(s->token);
        s->token = t;
        rc = 0;
    }
    if (data.buf)
        memset(data.buf, 0, data.len);
    strbuf_free(&data);
    return rc;
}

char *slurm_take_warning(struct backend *b)
{
    struct slurm *s = driver(b);
    char *w = s->warning;
    s->warning = NULL;
    return w;
}

/* Puts the two headers for s->token on the client. */
static int token_headers(struct slurm *s, struct strbuf *why)
{
    char *lines =
        xasprintf("X-SLURM-USER-NAME: %s\r\nX-SLURM-USER-TOKEN: %s\r\n", s->user, s->token);
    int rc = http_client_set_headers(s->client, lines);
    memset(lines, 0, strlen(lines));
    free(lines);
    if (rc != 0)
        strbuf_adds(why, "the user or the token holds a control character");
    return rc;
}

/* Gets a token (again when fresh) and puts the two headers on the client (blocking). */
static int load_token(struct backend *b, bool fresh, struct strbuf *why)
{
    struct slurm *s = driver(b);
    if (s->token && !fresh)
        return 0;
    int rc = s->token_command ? run_token_command(s, b, why) : read_token_file(s, why);
    if (rc != 0)
        return -1;
    return token_headers(s, why);
}

/* ---- the token command ------------------------------------------------------ */

/*
 * token_command runs as a child of its own process group, without a shell,
 * stdin and stderr on /dev/null, stdout on a pipe read to at most TOKEN_MAX
 * bytes (more is read and dropped). It has TOKEN_TIMEOUT_MS to print and
 * exit; past that its group is killed (by the child's pid, which leads the
 * group) and the call fails "timed out after 10 s". The pipe is a loop fd
 * and the deadline a loop timer (slurm_token_start): on top's loop, so top
 * keeps drawing and reading keys meanwhile, and for the CLI on a loop of its
 * own (run_token_command), so the deadline holds there too however long the
 * child keeps its stdout open: a
 * child watched by the loop rather than a thread, because the child has to be
 * killed and reaped anyway and the loop already multiplexes fds and timers.
 */
struct slurm_token_run {
    struct backend *b;
    struct loop *lp;
    pid_t pid;
    int fd;
    int64_t deadline;
    uint64_t timer;
    struct strbuf out;
    char *argv0;
    char *fail; /* why it could not start, said from the loop */
    slurm_token_fn done;
    void *ctx;
};

/* Splits the command on blanks (at most 31 words); argv points into copy. */
static int split_command(char *copy, char **argv)
{
    int argc = 0;
    for (char *tok = strtok(copy, " \t"); tok && argc < 31; tok = strtok(NULL, " \t"))
        argv[argc++] = tok;
    argv[argc] = NULL;
    return argc;
}

/* Starts the child; 0, or -1 with why. */
static int token_spawn(struct slurm_token_run *t, struct strbuf *why)
{
    struct slurm *s = driver(t->b);
    char *copy = xstrdup(s->token_command);
    char *argv[32];
    int argc = split_command(copy, argv);
    if (argc == 0) {
        strbuf_addf(why, "context '%s': token_command is empty", s->context);
        free(copy);
        return -1;
    }
    t->argv0 = xstrdup(argv[0]);
    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC) != 0) {
        strbuf_addf(why, "token_command: pipe: %s", strerror(errno));
        free(copy);
        return -1;
    }
    pid_t pid = fork();
    if (pid == 0) {
        /* Its own group, so a timeout kills whatever it started too. */
        setpgid(0, 0);
        /* Its stderr would land on top's screen: it goes nowhere (run it yourself to see it). */
        dup2(pfd[1], 1);
        int null = open("/dev/null", O_RDWR);
        if (null >= 0) {
            dup2(null, 0);
            dup2(null, 2);
        }
        execvp(argv[0], argv);
        _exit(127);
    }
    close(pfd[1]);
    free(copy);
    if (pid < 0) {
        close(pfd[0]);
        strbuf_addf(why, "token_command: fork: %s", strerror(errno));
        return -1;
    }
    setpgid(pid, pid); /* also from here: no window where a kill of the group misses it */
    t->pid = pid;
    t->fd = pfd[0];
    t->deadline = time_now_ms() + TOKEN_TIMEOUT_MS;
    return 0;
}

/* Reads what is there; true at end of file or error (the fd is then closed). */
static bool token_read(struct slurm_token_run *t)
{
    char buf[4096];
    for (;;) {
        ssize_t n = read(t->fd, buf, sizeof buf);
        if (n > 0) {
            if (t->out.len < TOKEN_MAX)
                strbuf_add(&t->out, buf, (size_t)n);
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return false;
        return true;
    }
}

/* Kills the child's group and reaps it. */
static void token_kill(struct slurm_token_run *t)
{
    if (t->pid > 0) {
        kill(-t->pid, SIGKILL);
        kill(t->pid, SIGKILL);
        while (waitpid(t->pid, NULL, 0) < 0 && errno == EINTR)
            ;
        t->pid = 0;
    }
}

/* The end: status of the reaped child (or timed out) to the token; 0 or -1 with why. */
static int token_finish(struct slurm_token_run *t, bool timed_out, int status, struct strbuf *why)
{
    struct slurm *s = driver(t->b);
    int rc = -1;
    if (timed_out) {
        strbuf_addf(why, "context '%s': token_command '%s' timed out after %d s (killed)",
                    s->context, s->token_command, TOKEN_TIMEOUT_MS / 1000);
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        strbuf_addf(why, "token_command '%s' failed (%s %d; run it yourself to see why)", t->argv0,
                    WIFEXITED(status) ? "exit" : "signal",
                    WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
    } else {
        char *tok = token_of(t->out.buf ? t->out.buf : "", t->out.len);
        if (tok == NULL) {
            strbuf_addf(why, "token_command '%s' printed no token", t->argv0);
        } else {
            free(s->token);
            s->token = tok;
            rc = 0;
        }
    }
    if (t->out.buf)
        memset(t->out.buf, 0, t->out.len);
    return rc;
}

static void token_run_free(struct slurm_token_run *t)
{
    if (t == NULL)
        return;
    if (t->timer)
        loop_cancel(t->lp, t->timer);
    if (t->fd >= 0) {
        if (t->lp)
            loop_remove_fd(t->lp, t->fd);
        close(t->fd);
    }
    token_kill(t);
    if (t->out.buf)
        memset(t->out.buf, 0, t->out.len);
    strbuf_free(&t->out);
    free(t->argv0);
    free(t->fail);
    free(t);
}

static struct slurm_token_run *token_run_new(struct backend *b, struct loop *lp)
{
    struct slurm_token_run *t = xcalloc(1, sizeof *t);
    t->b = b;
    t->lp = lp;
    t->fd = -1;
    t->out = (struct strbuf)STRBUF_INIT;
    return t;
}

/* What the CLI's wait on token_command ended with. */
struct token_wait {
    bool done;
    int rc;
    struct strbuf *why;
};

static void token_waited(void *ctx, int rc, const char *why)
{
    struct token_wait *w = ctx;
    w->done = true;
    w->rc = rc;
    if (rc != 0)
        strbuf_adds(w->why, why);
}

/*
 * Runs token_command and waits for it (the CLI): the same child and deadline
 * as on top's loop (slurm_token_start), on a loop of its own, so a command
 * that prints a token and lingers (or leaves a child holding its stdout) is
 * killed at TOKEN_TIMEOUT_MS rather than waited for as long as it lives.
 */
static int run_token_command(struct slurm *s, struct backend *b, struct strbuf *why)
{
    (void)s;
    struct loop *lp = loop_new();
    struct token_wait w = {false, -1, why};
    slurm_token_start(b, lp, token_waited, &w);
    while (!w.done)
        loop_run_once(lp, -1);
    loop_free(lp);
    return w.rc;
}

static void token_async_end(struct slurm_token_run *t, bool timed_out, int status)
{
    struct strbuf why = STRBUF_INIT;
    if (timed_out)
        token_kill(t);
    int rc = token_finish(t, timed_out, status, &why);
    if (rc == 0)
        rc = token_headers(driver(t->b), &why);
    slurm_token_fn done = t->done;
    void *ctx = t->ctx;
    token_run_free(t);
    done(ctx, rc, strbuf_str(&why));
    strbuf_free(&why);
}

/* After end of file: is the child gone yet? (a child may close stdout and linger) */
static void token_reap_tick(void *ctx)
{
    struct slurm_token_run *t = ctx;
    t->timer = 0;
    int status = 0;
    pid_t w = waitpid(t->pid, &status, WNOHANG);
    if (w == t->pid || (w < 0 && errno != EINTR)) {
        t->pid = 0;
        token_async_end(t, false, w < 0 ? 127 << 8 : status);
        return;
    }
    if (time_now_ms() >= t->deadline) {
        token_async_end(t, true, 0);
        return;
    }
    t->timer = loop_add_timer(t->lp, 10, token_reap_tick, t);
}

static void token_deadline(void *ctx)
{
    struct slurm_token_run *t = ctx;
    t->timer = 0;
    token_async_end(t, true, 0);
}

static void token_readable(void *ctx, int fd, short revents)
{
    struct slurm_token_run *t = ctx;
    if (!token_read(t))
        return;
    loop_remove_fd(t->lp, fd);
    close(fd);
    t->fd = -1;
    if (t->timer)
        loop_cancel(t->lp, t->timer);
    t->timer = 0;
    token_reap_tick(t);
}

static void token_fail_tick(void *ctx)
{
    struct slurm_token_run *t = ctx;
    t->timer = 0;
    slurm_token_fn done = t->done;
    void *dctx = t->ctx;
    char *why = t->fail;
    t->fail = NULL;
    token_run_free(t);
    done(dctx, -1, why ? why : "token_command could not start");
    free(why);
}

struct slurm_token_run *slurm_token_start(struct backend *b, struct loop *lp, slurm_token_fn done,
                                          void *ctx)
{
    struct slurm_token_run *t = token_run_new(b, lp);
    t->done = done;
    t->ctx = ctx;
    struct strbuf why = STRBUF_INIT;
    if (token_spawn(t, &why) != 0) {
        /* Said from the loop, never from inside the caller. */
        t->fail = xstrdup(strbuf_str(&why));
        strbuf_free(&why);
        t->timer = loop_add_timer(lp, 0, token_fail_tick, t);
        return t;
    }
    strbuf_free(&why);
    fcntl(t->fd, F_SETFL, fcntl(t->fd, F_GETFL) | O_NONBLOCK);
    loop_add_fd(lp, t->fd, POLLIN, token_readable, t);
    t->timer = loop_add_timer(lp, TOKEN_TIMEOUT_MS, token_deadline, t);
    return t;
}

void slurm_token_cancel(struct slurm_token_run *t)
{
    token_run_free(t);
}

/* ---- REST ----------------------------------------------------------------- */

static enum backend_status transport_error(const struct backend *b, const struct http_result *r,
                                           struct api_error *err)
{
    switch (r->transport) {
    case TRANSPORT_UNREACHABLE:
        api_error_set(err, 0, "Unreachable", "", "cannot reach slurmrestd at %s: %s", b->endpoint,
                      r->message);
        return BACKEND_UNREACHABLE;
    case TRANSPORT_TIMEOUT:
        api_error_set(err, 0, "Timeout", "", "slurmrestd at %s did not answer in time: %s",
                      b->endpoint, r->message);
        return BACKEND_TRANSPORT;
    default:
        api_error_set(err, 0, "Transport", "", "talking to slurmrestd at %s: %s", b->endpoint,
                      r->message);
        return BACKEND_TRANSPORT;
    }
}

/*
 * True when a reply is slurmrestd refusing the token: 401, or (22.05) 500
 * whose every error is the bare "Unspecified error" (-1) a rejected JWT
 * gives; a real Slurm rejection carries its own error number.
 */
static bool auth_refused(int status, const json_t *reply)
{
    if (status == 401)
        return true;
    if (status != 500 || !json_is_object(reply))
        return false;
    const json_t *errs = json_object_get(reply, "errors");
    if (!json_is_array(errs) || json_array_size(errs) == 0)
        return false;
    size_t i;
    json_t *e;
    json_array_foreach(errs, i, e)
    {
        json_int_t n = -2;
        const json_t *num = json_object_get(e, "error_number");
        if (num == NULL)
            num = json_object_get(e, "errno");
        if (json_is_integer(num))
            n = json_integer_value(num);
        if (n != -1)
            return false;
    }
    return true;
}

/* slurm_errno.h's "Invalid job id specified": the job is not (or no longer) in slurmctld. */
#define ESLURM_INVALID_JOB_ID 2017

/* The first error of a Slurm reply, sanitized: "2014: Requested node configuration is not
 * available". */
static void slurm_error_text(const json_t *reply, const char *raw, size_t rawlen,
                             struct strbuf *out)
{
    const json_t *errs = json_object_get(reply, "errors");
    const json_t *e = json_array_get(errs, 0);
    if (json_is_object(e)) {
        const json_t *num = json_object_get(e, "error_number");
        if (num == NULL)
            num = json_object_get(e, "error_code");
        const char *text = json_string_value(json_object_get(e, "error"));
        const char *desc = json_string_value(json_object_get(e, "description"));
        if (json_is_integer(num))
            strbuf_addf(out, "error %lld: ", (long long)json_integer_value(num));
        if (text)
            utf8_sanitize(out, text, strlen(text), 0);
        if (desc && *desc) {
            strbuf_adds(out, " (");
            utf8_sanitize(out, desc, strlen(desc), 0);
            strbuf_adds(out, ")");
        }
        return;
    }
    size_t n = rawlen > 300 ? 300 : rawlen;
    if (n)
        utf8_sanitize(out, raw, n, 0);
    else
        strbuf_adds(out, "no reason given");
}

static enum backend_status auth_failed(struct backend *b, const char *detail, struct api_error *err)
{
    struct slurm *s = driver(b);
    api_error_set(err, 401, "Unauthenticated", "",
                  "context '%s': authentication failed at %s: slurmrestd refused the token for "
                  "user '%s'%s%s; check %s (mint one with `scontrol token username=%s`)",
                  s->context, b->endpoint, s->user, detail && *detail ? ": " : "",
                  detail ? detail : "", s->token_command ? "token_command" : "token_file", s->user);
    return BACKEND_REJECTED;
}

/*
 * The API version, cached per endpoint: <cache dir>/slurm-api-<hash>.json,
 * {"endpoint","version","release"} (release: the Slurm release the replies'
 * meta named, the server's identity). Written 0600 into a directory only the
 * user may write, read only when both are the user's and nobody else's to
 * change (a file another user planted would choose the paths we call).
 */
#define SHAPE_CACHE_MAX 4096

static char *shape_cache_path(const struct backend *b)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (const char *p = b->endpoint ? b->endpoint : ""; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ULL;
    char *dir = paths_cache_dir();
    char *path = xasprintf("%s/slurm-api-%016llx.json", dir, (unsigned long long)h);
    free(dir);
    return path;
}

/* Whether the directory of path is the user's alone to change. */
static bool cache_dir_safe(const char *path)
{
    char *dir = xstrdup(path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    struct stat st;
    bool ok = stat(dir, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() &&
              (st.st_mode & 022) == 0;
    free(dir);
    return ok;
}

/* The cached shape of the endpoint, its release in s->shape_release; NULL when none is usable. */
static const struct slurm_shape *shape_cache_read(struct backend *b)
{
    struct slurm *s = driver(b);
    char *path = shape_cache_path(b);
    const struct slurm_shape *shape = NULL;
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
        (st.st_mode & 077) == 0 && st.st_size < SHAPE_CACHE_MAX && cache_dir_safe(path)) {
        char buf[SHAPE_CACHE_MAX];
        ssize_t n = read(fd, buf, sizeof buf);
        json_t *j = n > 0 ? json_loadb(buf, (size_t)n, 0, NULL) : NULL;
        const char *ep = json_string_value(json_object_get(j, "endpoint"));
        const char *rel = json_string_value(json_object_get(j, "release"));
        if (ep && b->endpoint && strcmp(ep, b->endpoint) == 0 && rel && *rel)
            shape = slurm_shape_find(json_string_value(json_object_get(j, "version")));
        if (shape) {
            free(s->shape_release);
            s->shape_release = xstrdup(rel);
        }
        json_decref(j);
    }
    if (fd >= 0)
        close(fd);
    free(path);
    return shape;
}

/* Keeps the version in use with the server's release; a failure only costs the next run a read. */
static void shape_cache_write(struct backend *b, const char *release)
{
    struct slurm *s = driver(b);
    char *path = shape_cache_path(b);
    char *dir = paths_cache_dir();
    struct strbuf why = STRBUF_INIT;
    if (file_mkdirs(dir, 0700, &why) == 0 && cache_dir_safe(path)) {
        json_t *j = json_pack("{s:s, s:s, s:s}", "endpoint", b->endpoint ? b->endpoint : "",
                              "version", s->shape->version, "release", release);
        char *text = j ? json_dumps(j, JSON_COMPACT) : NULL;
        if (text)
            (void)file_write_atomic_nosync(path, text, strlen(text), 0600, &why);
        free(text);
        json_decref(j);
    }
    s->shape_saved = true;
    strbuf_free(&why);
    free(dir);
    free(path);
}

/*
 * Replies kept for the next process, in the user's cache per endpoint,
 * Slurm user and workspace: <cache dir>/slurm-<kind>-<hash>.json, holding
 * {"endpoint","user","workspace","since", and the kind's members}. "jobs":
 * the context's last GET /jobs (the user's jobs, the members the decoder
 * reads) with the update_time to ask after (304 when no job changed);
 * "catalog": the partitions and nodes a submit reads, with when they were
 * read. The same rules as the version's cache: the user's own 0600 file in
 * a directory only they may change, opened without following a symlink;
 * anything else is not read (another user could otherwise choose the jobs
 * we show or the shape we submit) and the server is asked.
 */
#define KEPT_MAX ((size_t)64 << 20)
/*
 * What a kept file (the catalog), or the user's jobs of a listing handed
 * as a tree (joblist_tree), may take decoded: the jobs were read one at a
 * time, so their sum is bounded only by the user's jobs; 256 MiB
 * (JSONBOUND_MAX) refused 50,000 running jobs (37 MB, about 370 MiB
 * decoded). The kept jobs themselves are read back job by job.
 */
#define KEPT_DECODED_MAX ((size_t)1 << 30)

static char *kept_path(const struct backend *b, const char *kind)
{
    const struct slurm *s = driver((struct backend *)b);
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    const char *parts[] = {b->endpoint, s->user, b->target.workspace};
    for (size_t i = 0; i < 3; i++) {
        for (const char *p = parts[i] ? parts[i] : ""; *p; p++)
            h = (h ^ (unsigned char)*p) * 1099511628211ULL;
        h = (h ^ '\n') * 1099511628211ULL;
    }
    char *dir = paths_cache_dir();
    char *path = xasprintf("%s/slurm-%s-%016llx.json", dir, kind, (unsigned long long)h);
    free(dir);
    return path;
}

static bool kept_is(const json_t *j, const char *key, const char *want)
{
    const char *v = json_string_value(json_object_get(j, key));
    return v && strcmp(v, want ? want : "") == 0;
}

/* The text of the kept kind when the file may be trusted (false: none to trust). */
static bool kept_text(struct backend *b, const char *kind, struct strbuf *text)
{
    char *path = kept_path(b, kind);
    bool ok = false;
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
        (st.st_mode & 077) == 0 && (size_t)st.st_size < KEPT_MAX && cache_dir_safe(path)) {
        strbuf_grow(text, (size_t)st.st_size + 1);
        ssize_t n = read(fd, text->buf, (size_t)st.st_size);
        if (n == st.st_size) {
            text->len = (size_t)n;
            text->buf[n] = '\0';
            ok = true;
        }
    }
    if (fd >= 0)
        close(fd);
    free(path);
    return ok;
}

/*
 * Whether the envelope j of a kept file is this context's (endpoint, user,
 * workspace) with a time; its members then removed, *since set.
 */
static bool kept_ours(struct backend *b, json_t *j, int64_t *since)
{
    struct slurm *s = driver(b);
    const json_t *t = json_object_get(j, "since");
    if (!kept_is(j, "endpoint", b->endpoint) || !kept_is(j, "user", s->user) ||
        !kept_is(j, "workspace", b->target.workspace) || !json_is_integer(t) ||
        json_integer_value(t) <= 0)
        return false;
    *since = json_integer_value(t);
    json_object_del(j, "endpoint");
    json_object_del(j, "user");
    json_object_del(j, "workspace");
    json_object_del(j, "since");
    return true;
}

json_t *slurm_kept_read(struct backend *b, const char *kind, int64_t *since)
{
    struct strbuf text = STRBUF_INIT, why = STRBUF_INIT;
    json_t *doc = NULL;
    if (kept_text(b, kind, &text)) {
        json_t *j = jsonbound_loadb(text.buf, text.len, KEPT_DECODED_MAX, &why);
        if (kept_ours(b, j, since))
            doc = json_incref(j);
        json_decref(j);
    }
    strbuf_free(&text);
    strbuf_free(&why);
    return doc;
}

void slurm_kept_write_text(struct backend *b, const char *kind, struct strbuf *text, int64_t since)
{
    struct slurm *s = driver(b);
    char *path = kept_path(b, kind);
    char *dir = paths_cache_dir();
    struct strbuf why = STRBUF_INIT;
    json_t *j =
        json_pack("{s:s, s:s, s:s, s:I}", "endpoint", b->endpoint ? b->endpoint : "", "user",
                  s->user ? s->user : "", "workspace",
                  b->target.workspace ? b->target.workspace : "", "since", (json_int_t)since);
    char *envelope = j ? json_dumps(j, JSON_COMPACT) : NULL;
    if (envelope && text->len && text->buf[0] == '{' && file_mkdirs(dir, 0700, &why) == 0 &&
        cache_dir_safe(path)) {
        size_t was = text->len;
        if (text->len > 1)
            strbuf_addc(text, ',');
        strbuf_adds(text, envelope + 1); /* its members and closing brace */
        (void)file_write_atomic_nosync(path, text->buf, text->len, 0600, &why);
        text->len = was;
        text->buf[was] = '\0';
    }
    free(envelope);
    json_decref(j);
    strbuf_free(&why);
    free(dir);
    free(path);
}

void slurm_kept_write(struct backend *b, const char *kind, const json_t *doc, int64_t since)
{
    char *dump = json_is_object(doc) ? json_dumps(doc, JSON_COMPACT) : NULL;
    size_t n = dump ? strlen(dump) : 0;
    if (n >= 2 && dump[n - 1] == '}') {
        struct strbuf text = STRBUF_INIT;
        strbuf_add(&text, dump, n - 1);
        free(dump);
        dump = NULL;
        slurm_kept_write_text(b, kind, &text, since);
        strbuf_free(&text);
    }
    free(dump);
}

/*
 * What a reply to a request under the version says of the version: a
 * cached one is confirmed by a reply of the same release. A 404 or another
 * release means the server changed: the cache is dropped, and true returned
 * when the request is to be repeated under the version asked again (on the
 * loop, the next process asks) — a 404 (the path is gone: nothing was
 * done), or a GET that failed. A request that succeeded stands (the version
 * still serves; the cache is written again with the new release), and a
 * failed POST or DELETE is never sent twice. A version read from
 * /openapi/v3 is cached with the release of its first good reply.
 */
static bool shape_stale(struct backend *b, const char *method, const char *path, int status,
                        const json_t *j)
{
    struct slurm *s = driver(b);
    if (s->shape == NULL || strncmp(path, "/slurm/", 7) != 0)
        return false;
    const char *rel = json_string_value(
        json_object_get(json_object_get(json_object_get(j, "meta"), "Slurm"), "release"));
    bool ok = status >= 200 && status < 300;
    if (s->shape_cached) {
        bool other = rel && s->shape_release && strcmp(rel, s->shape_release) != 0;
        if (status == 404 || other) {
            char *cache = shape_cache_path(b);
            (void)unlink(cache);
            free(cache);
            s->shape_cached = false;
            s->shape_saved = false;
            if (ok && rel && *rel)
                shape_cache_write(b, rel);
            return !ok && (status == 404 || strcmp(method, "GET") == 0);
        }
        if (rel && status >= 200 && status < 300)
            s->shape_cached = false; /* confirmed */
        return false;
    }
    if (!s->shape_saved && rel && *rel && status >= 200 && status < 300)
        shape_cache_write(b, rel);
    return false;
}

/*
 * The API version to speak: the user's cache of it for this endpoint, else
 * /openapi/v3 (once per backend). On the loop one call asks; the others
 * started meanwhile (top's first list, catalog, …) wait for its answer,
 * polling every 50 ms.
 */
enum backend_status slurm_ensure_shape(struct backend *b, struct api_error *err)
{
    struct slurm *s = driver(b);
    if (s->shape)
        return BACKEND_OK;
    if (!s->shape_saved && (s->shape = shape_cache_read(b)) != NULL) {
        s->shape_cached = true;
        s->shape_saved = true;
        return BACKEND_OK;
    }
    if (s->replay && s->shape_asker && s->shape_asker != s->replay) {
        slurm_wait(b, 50);
        api_error_set(err, 0, "Pending", "", "waiting for slurmrestd");
        return BACKEND_TRANSPORT;
    }
    if (s->replay)
        s->shape_asker = s->replay;
    json_t *doc = NULL;
    enum backend_status st = slurm_rest(b, "GET", "/openapi/v3", NULL, &doc, err);
    if (!slurm_pending(b))
        s->shape_asker = NULL; /* answered, or failed: a waiting call asks again */
    if (st != BACKEND_OK)
        return st;
    struct strbuf why = STRBUF_INIT;
    s->shape = slurm_shape_choose(doc, &why);
    s->shape_cached = false;
    s->shape_saved = false;
    json_decref(doc);
    if (s->shape == NULL) {
        api_error_set(err, 501, "Unsupported", "", "context '%s': %s", s->context,
                      strbuf_str(&why));
        st = BACKEND_REJECTED;
    }
    strbuf_free(&why);
    return st;
}

/*
 * A GET /jobs reply read as it arrives: slurmrestd has no filter by user, so
 * the reply is the cluster's. Each element of "jobs" is walked once by
 * api/jobsum's parser (checked as JSON whole): in place when it is whole in
 * the piece that arrived, else held until it closes. The walk notes where
 * the members a job is decoded from are (slurm_job_fields:
 * about a tenth of the 3 KB a job is); only when its user_name is the
 * user's are they decoded (slurm_job_decode_text, no tree) and their text
 * kept for the list of the next process. The other members of the reply
 * (errors, warnings, meta) are kept within SLURM_REST_MAX. Memory follows
 * the largest job and the user's jobs, not the cluster's; an element over
 * SLURM_JOB_MAX is skipped unread, so no other user's job can make the
 * listing fail. The kept list is read back by the same reader.
 */
struct slurm_jobs_read {
    char *user;
    struct slurm_joblist *list; /* the user's jobs so far */
    struct jsonbound_stream *js;
    struct slurm_job_text at; /* the element's members a job is decoded from */
    bool mine;                /* the element's user_name is the user's */
    size_t bytes;             /* of the reply, for TRAINJOB_HTTP_STATS */
    size_t others;            /* elements of other users, never decoded */
    size_t bad;               /* elements of the user that are no job (no job_id) */
};

struct slurm_joblist *slurm_joblist_ref(struct slurm_joblist *l)
{
    if (l)
        l->refs++;
    return l;
}

void slurm_joblist_unref(struct slurm_joblist *l)
{
    if (l == NULL || --l->refs > 0)
        return;
    for (size_t i = 0; i < l->count; i++)
        slurm_job_free(&l->jobs[i]);
    free(l->jobs);
    strbuf_free(&l->text);
    free(l);
}

static struct slurm_joblist *joblist_new(void)
{
    struct slurm_joblist *l = xcalloc(1, sizeof *l);
    l->refs = 1;
    l->text = (struct strbuf)STRBUF_INIT;
    strbuf_adds(&l->text, "{\"jobs\":[");
    return l;
}

/* One member of an element: where a member a job is decoded from is, noted. */
static int job_member(void *ctx, const char *key, size_t key_len, const char *value,
                      size_t value_len)
{
    struct slurm_jobs_read *jr = ctx;
    int f = slurm_job_field(key, key_len);
    if (f < 0)
        return 0;
    if (f == SLURM_JOB_USER)
        jr->mine = value_len == strlen(jr->user) + 2 && value[0] == '"' &&
                   memcmp(value + 1, jr->user, value_len - 2) == 0;
    jr->at.value[f] = value;
    jr->at.len[f] = value_len;
    return 0;
}

/* The members a job was decoded from, as an object's text, added to the list's. */
static void kept_add(struct strbuf *text, const struct slurm_job_text *at)
{
    if (text->buf[text->len - 1] != '[')
        strbuf_addc(text, ',');
    strbuf_addc(text, '{');
    bool first = true;
    for (int f = 0; f < SLURM_JOB_FIELD_COUNT; f++) {
        if (at->value[f] == NULL)
            continue;
        strbuf_adds(text, first ? "\"" : ",\"");
        strbuf_adds(text, slurm_job_fields[f]); /* one of ours: nothing to escape */
        strbuf_adds(text, "\":");
        const char *v = at->value[f];
        if (v[0] == '{' || v[0] == '[')
            jsonbound_add_compact(text, v, at->len[f]); /* no blanks to read again */
        else /* a string or a scalar as walked: nothing outside its quotes to drop */
            strbuf_add(text, v, at->len[f]);
        first = false;
    }
    strbuf_addc(text, '}');
}

/* An element walked whole: decoded and kept when its user_name is the user's. */
static void job_walked(struct slurm_jobs_read *jr)
{
    if (!jr->mine) { /* another user's: not decoded */
        jr->others++;
        return;
    }
    struct slurm_joblist *l = jr->list;
    if (l->count == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 64;
        l->jobs = xreallocarray(l->jobs, l->cap, sizeof *l->jobs);
    }
    struct strbuf why = STRBUF_INIT;
    if (slurm_job_decode_text(NULL, &jr->at, &l->jobs[l->count], &why) == 0) {
        l->count++;
        kept_add(&l->text, &jr->at);
    } else {
        jr->bad++;
    }
    strbuf_free(&why);
}

/* One element of .jobs[], gathered by the stream (it spanned two pieces, or is not an object). */
static int user_job(void *ctx, const char *elem, size_t len)
{
    struct slurm_jobs_read *jr = ctx;
    struct api_error e;
    memset(&jr->at, 0, sizeof jr->at);
    jr->mine = false;
    if (jobsum_members(elem, len, job_member, jr, &e) != 0) { /* not JSON: no job of anyone's */
        jr->others++;
        return 0;
    }
    job_walked(jr);
    return 0;
}

/* One element of .jobs[] whole in the piece that arrived: walked in place, not gathered first. */
static size_t user_job_here(void *ctx, const char *data, size_t len)
{
    struct slurm_jobs_read *jr = ctx;
    memset(&jr->at, 0, sizeof jr->at);
    jr->mine = false;
    size_t took = jobsum_members_head(data, len, job_member, jr);
    if (took > 0)
        job_walked(jr);
    return took;
}

/* GET /slurm/<version>/jobs[?…]: the cluster-wide listing. */
static bool is_jobs_listing(const char *method, const char *path)
{
    const char *last = strrchr(path, '/');
    return strcmp(method, "GET") == 0 && strncmp(path, "/slurm/", 7) == 0 && last &&
           strncmp(last, "/jobs", 5) == 0 && (last[5] == '\0' || last[5] == '?');
}

static struct slurm_jobs_read *jobs_read_new(struct backend *b)
{
    struct slurm_jobs_read *jr = xcalloc(1, sizeof *jr);
    jr->user = xstrdup(driver(b)->user ? driver(b)->user : "");
    jr->list = joblist_new();
    jr->js = jsonbound_stream_new("jobs", SLURM_JOB_MAX, SLURM_REST_MAX, user_job, jr);
    jsonbound_stream_set_walk(jr->js, user_job_here);
    return jr;
}

struct slurm_jobs_read *slurm_jobs_read_new(struct backend *b, const char *method, const char *path)
{
    return is_jobs_listing(method, path) ? jobs_read_new(b) : NULL;
}

int slurm_jobs_read_data(void *ctx, const char *data, size_t len)
{
    struct slurm_jobs_read *jr = ctx;
    jr->bytes += len;
    return jsonbound_stream_feed(jr->js, data, len) == 0 ? 0 : -1;
}

void slurm_jobs_read_free(struct slurm_jobs_read *jr)
{
    if (jr == NULL)
        return;
    free(jr->user);
    slurm_joblist_unref(jr->list);
    jsonbound_stream_free(jr->js);
    free(jr);
}

/*
 * The reply read as {"errors": […], …, "jobs": [the user's]}: its members
 * but "jobs", the user's jobs in *jobs (the reader's); NULL with why when
 * it is not such a document.
 */
static json_t *jobs_read_end(struct slurm_jobs_read *jr, struct slurm_joblist **jobs,
                             struct strbuf *why)
{
    bool had_jobs;
    json_t *out = jsonbound_stream_end(jr->js, &had_jobs, why);
    if (out == NULL)
        return NULL;
    if (!json_is_object(out) || !had_jobs) {
        strbuf_adds(why, "a /jobs reply without \"jobs\"");
        json_decref(out);
        return NULL;
    }
    strbuf_addc(&jr->list->text, ']');
    *jobs = jr->list;
    jr->list = NULL;
    return out;
}

struct slurm_joblist *slurm_kept_jobs_read(struct backend *b, int64_t *since)
{
    struct strbuf text = STRBUF_INIT, why = STRBUF_INIT;
    struct slurm_joblist *jobs = NULL;
    if (kept_text(b, "jobs", &text)) {
        struct slurm_jobs_read *jr = jobs_read_new(b);
        json_t *j = NULL;
        if (slurm_jobs_read_data(jr, text.buf, text.len) == 0)
            j = jobs_read_end(jr, &jobs, &why);
        if (!kept_ours(b, j, since)) {
            slurm_joblist_unref(jobs);
            jobs = NULL;
        }
        json_decref(j);
        slurm_jobs_read_free(jr);
    }
    strbuf_free(&text);
    strbuf_free(&why);
    return jobs;
}

/* The jobs of l as a tree ({"jobs":[…]}'s array), for a caller that reads them so. */
static json_t *joblist_tree(struct slurm_joblist *l)
{
    struct strbuf why = STRBUF_INIT;
    strbuf_addc(&l->text, '}');
    json_t *doc = jsonbound_loadb(l->text.buf, l->text.len, KEPT_DECODED_MAX, &why);
    l->text.buf[--l->text.len] = '\0';
    json_t *arr = json_incref(json_object_get(doc, "jobs"));
    json_decref(doc);
    strbuf_free(&why);
    return arr ? arr : json_array();
}

/*
 * A reply to the result of one request: the JSON of a 2xx reply in *reply;
 * errors a Slurm reply carries with a 2xx status are failures too. *refused
 * says the token was refused (err is then not set). jr: the GET /jobs reply
 * read as it arrived (a body, from a transport that did not stream it, is
 * read through one too); its jobs go to *jobs (NULL for any other reply).
 */
static enum backend_status decode_reply(struct backend *b, const char *method, const char *path,
                                        struct http_result *r, struct slurm_jobs_read *jr,
                                        json_t **reply, struct slurm_joblist **jobs, bool *refused,
                                        bool *stale, struct api_error *err)
{
    *reply = NULL;
    *jobs = NULL;
    *refused = false;
    *stale = false;
    slurm_stats_count(r, jr ? jr->bytes : 0);
    if (r->transport != TRANSPORT_NONE)
        return transport_error(b, r, err);
    if (r->status == 304) { /* ?update_time=: nothing changed since */
        *reply = json_null();
        return BACKEND_OK;
    }
    const char *text = r->body.buf ? r->body.buf : "";
    struct strbuf why = STRBUF_INIT;
    json_t *j = NULL;
    struct slurm_joblist *list = NULL;
    if (r->status >= 200 && r->status < 300 && is_jobs_listing(method, path)) {
        struct slurm_jobs_read *own = jr ? NULL : jobs_read_new(b);
        struct slurm_jobs_read *read = jr ? jr : own;
        if (r->body.len)
            slurm_jobs_read_data(read, text, r->body.len);
        j = jobs_read_end(read, &list, &why);
        slurm_jobs_read_free(own);
    } else {
        j = jsonbound_loadb(text, r->body.len, 0, &why);
    }
    if (j == NULL && r->status >= 200 && r->status < 300 && why.len) {
        /* A 2xx reply too large to decode, or not JSON: said as such, not as Slurm's error. */
        api_error_set(err, 502, "BadReply", "", "slurmrestd %s %s: %s", method, path,
                      strbuf_str(&why));
        strbuf_free(&why);
        return BACKEND_REJECTED;
    }
    strbuf_free(&why);
    *stale = shape_stale(b, method, path, r->status, j);
    if (auth_refused(r->status, j)) {
        json_decref(j);
        slurm_joblist_unref(list);
        *refused = true;
        return BACKEND_REJECTED;
    }
    const json_t *errs = json_object_get(j, "errors");
    bool slurm_err = json_is_array(errs) && json_array_size(errs) > 0;
    if (r->status < 200 || r->status >= 300 || j == NULL || slurm_err) {
        struct strbuf m = STRBUF_INIT;
        slurm_error_text(j, r->body.buf, r->body.len, &m);
        int status = r->status >= 200 && r->status < 300 ? 500 : r->status;
        /* slurmrestd 22.05 says a job it does not know with a 500: it is a 404. */
        const json_t *num = json_object_get(json_array_get(errs, 0), "error_number");
        bool no_job = json_is_integer(num) && json_integer_value(num) == ESLURM_INVALID_JOB_ID;
        api_error_set(err, no_job ? 404 : status, no_job ? "NotFound" : "SlurmError", "",
                      "slurmrestd %s %s: %s", method, path, strbuf_str(&m));
        strbuf_free(&m);
        json_decref(j);
        slurm_joblist_unref(list);
        return BACKEND_REJECTED;
    }
    *reply = j;
    *jobs = list;
    return BACKEND_OK;
}

/* ---- replies made on the loop (see slurm_priv.h) ------------------------------ */

static char *replay_key(const char *method, const char *path, const char *body)
{
    return xasprintf("%s %s\n%s", method, path, body ? body : "");
}

void slurm_replay_free(struct slurm_replay *rp)
{
    for (size_t i = 0; i < rp->count; i++) {
        free(rp->entries[i].key);
        json_decref(rp->entries[i].reply);
        slurm_joblist_unref(rp->entries[i].jobs);
    }
    free(rp->entries);
    free(rp->method);
    free(rp->path);
    free(rp->body);
    free(rp->token_error);
    free(rp->made);
    memset(rp, 0, sizeof *rp);
}

void slurm_replay_store(struct slurm_replay *rp, enum backend_status st, json_t *reply,
                        struct slurm_joblist *jobs, const struct api_error *err)
{
    rp->entries = xreallocarray(rp->entries, rp->count + 1, sizeof *rp->entries);
    struct slurm_replay_entry *e = &rp->entries[rp->count++];
    e->key = replay_key(rp->method, rp->path, rp->body);
    e->st = st;
    e->reply = reply;
    e->jobs = jobs;
    e->sent_ms = rp->sent_ms;
    if (err)
        e->err = *err;
    else
        memset(&e->err, 0, sizeof e->err);
    free(rp->method);
    free(rp->path);
    free(rp->body);
    rp->method = rp->path = rp->body = NULL;
    rp->pending = false;
    rp->delay_ms = 0;
}

bool slurm_pending(struct backend *b)
{
    const struct slurm_replay *rp = driver(b)->replay;
    return rp && (rp->pending || rp->need_token);
}

void slurm_wait(struct backend *b, int delay_ms)
{
    struct slurm_replay *rp = driver(b)->replay;
    if (rp == NULL || rp->pending)
        return;
    rp->pending = true;
    rp->wait_only = true;
    rp->delay_ms = delay_ms;
}

void slurm_replay_gone(struct backend *b, const struct slurm_replay *rp)
{
    if (driver(b)->shape_asker == rp)
        driver(b)->shape_asker = NULL;
}

void slurm_rest_again(struct backend *b, const char *method, const char *path, int delay_ms)
{
    struct slurm *s = driver(b);
    struct slurm_replay *rp = s->replay;
    if (rp == NULL || rp->pending || s->shape == NULL)
        return;
    char *full =
        path[0] == '/' ? xstrdup(path) : xasprintf("/slurm/%s/%s", s->shape->version, path);
    char *key = replay_key(method, full, NULL);
    for (size_t i = 0; i < rp->count; i++)
        if (strcmp(rp->entries[i].key, key) == 0) {
            free(rp->entries[i].key);
            json_decref(rp->entries[i].reply);
            slurm_joblist_unref(rp->entries[i].jobs);
            rp->entries[i] = rp->entries[--rp->count];
            break;
        }
    free(key);
    rp->method = xstrdup(method);
    rp->path = full;
    rp->body = NULL;
    rp->pending = true;
    rp->delay_ms = delay_ms;
}

/* The reply recorded for this request, or the request noted as the one to make next. */
static enum backend_status replayed(struct slurm *s, const char *method, const char *path,
                                    const char *text, json_t **reply, struct slurm_joblist **jobs,
                                    struct api_error *err)
{
    struct slurm_replay *rp = s->replay;
    char *key = replay_key(method, path, text);
    for (size_t i = 0; i < rp->count; i++)
        if (strcmp(rp->entries[i].key, key) == 0) {
            free(key);
            *reply = json_incref(rp->entries[i].reply);
            *jobs = slurm_joblist_ref(rp->entries[i].jobs);
            *err = rp->entries[i].err;
            s->sent_ms = rp->entries[i].sent_ms;
            return rp->entries[i].st;
        }
    free(key);
    if (!rp->pending) {
        rp->method = xstrdup(method);
        rp->path = xstrdup(path);
        rp->body = text ? xstrdup(text) : NULL;
        rp->pending = true;
        rp->delay_ms = 0;
    }
    api_error_set(err, 0, "Pending", "", "waiting for slurmrestd");
    return BACKEND_TRANSPORT;
}

/* slurm_rest, a listing's jobs in *jobs. */
static enum backend_status rest(struct backend *b, const char *method, const char *path,
                                const json_t *body, json_t **reply, struct slurm_joblist **jobs,
                                struct api_error *err)
{
    struct slurm *s = driver(b);
    *reply = NULL;
    *jobs = NULL;
    struct strbuf why = STRBUF_INIT;
    struct slurm_replay *rp = s->replay;
    if (rp && (rp->pending || rp->need_token)) {
        /* An earlier request of this run is not answered yet: the run is thrown away. */
        api_error_set(err, 0, "Pending", "", "waiting for slurmrestd");
        return BACKEND_TRANSPORT;
    }
    if (rp && s->token == NULL && s->token_command) {
        /* On the loop the command runs as a watched child, never here. */
        if (rp->token_error)
            return auth_failed(b, rp->token_error, err);
        rp->need_token = true;
        api_error_set(err, 0, "Pending", "", "waiting for token_command");
        return BACKEND_TRANSPORT;
    }
    if (load_token(b, false, &why) != 0) {
        enum backend_status st = auth_failed(b, strbuf_str(&why), err);
        strbuf_free(&why);
        return st;
    }
    if (path[0] != '/') {
        enum backend_status st = slurm_ensure_shape(b, err);
        if (st != BACKEND_OK) {
            strbuf_free(&why);
            return st;
        }
    }
    struct strbuf p = STRBUF_INIT;
    if (path[0] == '/')
        strbuf_adds(&p, path);
    else
        strbuf_addf(&p, "/slurm/%s/%s", s->shape->version, path);
    char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    enum backend_status st = BACKEND_OK;
    if (rp) {
        st = replayed(s, method, strbuf_str(&p), text, reply, jobs, err);
    } else {
        bool retried_stale = false;
        for (int attempt = 0;; attempt++) {
            struct http_result r;
            http_result_init(&r);
            s->sent_ms = time_now_ms();
            struct slurm_jobs_read *jr = slurm_jobs_read_new(b, method, strbuf_str(&p));
            if (jr)
                http_stream(s->client, strbuf_str(&p), slurm_jobs_read_data, jr, &r);
            else
                http_call(s->client, method, strbuf_str(&p), text, text ? strlen(text) : 0, &r);
            bool refused, stale;
            st =
                decode_reply(b, method, strbuf_str(&p), &r, jr, reply, jobs, &refused, &stale, err);
            slurm_jobs_read_free(jr);
            http_result_free(&r);
            if (stale && path[0] != '/' && !retried_stale) {
                /* the cached version is no longer the server's: learnt again, asked again */
                retried_stale = true;
                json_decref(*reply);
                *reply = NULL;
                slurm_joblist_unref(*jobs);
                *jobs = NULL;
                const struct slurm_shape *was = s->shape;
                s->shape = NULL;
                st = slurm_ensure_shape(b, err);
                if (st != BACKEND_OK) {
                    s->shape = was;
                    break;
                }
                strbuf_reset(&p);
                strbuf_addf(&p, "/slurm/%s/%s", s->shape->version, path);
                attempt--;
                continue;
            }
            if (refused) {
                strbuf_reset(&why);
                if (attempt == 0 && s->token_command && load_token(b, true, &why) == 0)
                    continue;
                st = auth_failed(b, strbuf_str(&why), err);
            }
            break;
        }
    }
    if (rp == NULL && strcmp(method, "GET") != 0)
        s->jobs_at = 0; /* a change was asked for: the next GET /jobs asks slurmctld */
    free(text);
    strbuf_free(&p);
    strbuf_free(&why);
    return st;
}

enum backend_status slurm_rest(struct backend *b, const char *method, const char *path,
                               const json_t *body, json_t **reply, struct api_error *err)
{
    struct slurm_joblist *jobs;
    enum backend_status st = rest(b, method, path, body, reply, &jobs, err);
    if (jobs) { /* a listing read by a caller of its tree: the user's jobs in "jobs" */
        json_t *copy = json_copy(*reply);
        json_object_set_new(copy, "jobs", joblist_tree(jobs));
        json_decref(*reply);
        *reply = copy;
        slurm_joblist_unref(jobs);
    }
    return st;
}

enum backend_status slurm_rest_jobs(struct backend *b, const char *path, json_t **reply,
                                    struct slurm_joblist **jobs, struct api_error *err)
{
    return rest(b, "GET", path, NULL, reply, jobs, err);
}

enum backend_status slurm_rest_decode(struct backend *b, const char *method, const char *path,
                                      struct http_result *r, struct slurm_jobs_read *jr,
                                      json_t **reply, struct slurm_joblist **jobs, bool *refused,
                                      struct api_error *err)
{
    bool stale; /* on the loop the next operation asks the version again */
    return decode_reply(b, method, path, r, jr, reply, jobs, refused, &stale, err);
}

enum backend_status slurm_auth_failed(struct backend *b, const char *detail, struct api_error *err)
{
    return auth_failed(b, detail, err);
}
