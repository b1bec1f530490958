/*
 * slurm: the Slurm driver — slurmrestd calls (JWT, version from /openapi/v3
 * through api/slurm_shapes), the job directories on the shared filesystem,
 * and the mapping of Slurm's states to trainjob's; see slurm.h. Opened by
 * backend_open (api/backend.c); `trainjob render --target slurm` calls
 * slurm_render.
 *
 * Polling is kind to slurmctld: a list, and every get, is one GET /jobs
 * (filtered here to the workspace's job directories); the catalog is GET
 * /partitions and GET /nodes; the version is asked once per backend.
 */
#include "api/slurm.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "api/context.h"
#include "api/finding.h"
#include "api/http.h"
#include "api/http_multi.h"
#include "api/jobspec_json.h"
#include "api/slurm_script.h"
#include "api/slurm_shapes.h"
#include "util/fileio.h"
#include "util/loop.h"
#include "util/strbuf.h"
#include "util/timefmt.h"
#include "util/utf8.h"
#include "util/xalloc.h"

#define TOKEN_MAX 16384
#define JOBJSON_MAX (1u << 20)  /* job.json read back */
#define EVENTS_MAX (256u << 10) /* the tail of events.jsonl read */
#define EVENTS_COUNT_MAX 2000   /* events kept from it */
#define EVENT_TEXT_MAX 1024     /* bytes of one event's text */
#define WORKER_FILE_MAX (64u << 10)
#define WORKERS_MAX 4096
#define LOG_TAIL_MAX (8u << 20) /* bytes read back for a tail */
#define FOLLOW_POLL_MS 500
#define FOLLOW_STATE_MS                                                                            \
    5000 /* a followed log asks Slurm whether its job ended: 12 calls a minute */
#define DELETE_WAIT_MS 10000
#define DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

struct slurm {
    struct http_client *client;
    const struct slurm_shape *shape; /* NULL until /openapi/v3 was read */
    char *context;
    char *user;
    char *token_file;
    char *token_command;
    char *token; /* the one in use */
    char *jobs_dir;
    char *launcher;
    json_t *qos;
};

static struct slurm *driver(struct backend *b)
{
    return b->driver;
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

/* Runs token_command (split on blanks, no shell) and takes the token from its stdout. */
static int run_token_command(struct slurm *s, struct strbuf *why)
{
    char *copy = xstrdup(s->token_command);
    char *argv[32];
    int argc = 0;
    for (char *tok = strtok(copy, " \t"); tok && argc < 31; tok = strtok(NULL, " \t"))
        argv[argc++] = tok;
    argv[argc] = NULL;
    if (argc == 0) {
        strbuf_adds(why, "token_command is empty");
        free(copy);
        return -1;
    }
    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC) != 0) {
        strbuf_addf(why, "token_command: pipe: %s", strerror(errno));
        free(copy);
        return -1;
    }
    pid_t pid = fork();
    if (pid == 0) {
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
    struct strbuf outb = STRBUF_INIT;
    if (pid > 0) {
        char buf[4096];
        ssize_t n;
        while ((n = read(pfd[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
            if (n > 0 && outb.len < TOKEN_MAX)
                strbuf_add(&outb, buf, (size_t)n);
    }
    close(pfd[0]);
    int status = 0;
    int rc = -1;
    if (pid < 0) {
        strbuf_addf(why, "token_command: fork: %s", strerror(errno));
    } else if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        strbuf_addf(why, "token_command '%s' failed (%s %d; run it yourself to see why)", argv[0],
                    WIFEXITED(status) ? "exit" : "signal",
                    WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
    } else {
        char *t = token_of(outb.buf ? outb.buf : "", outb.len);
        if (t == NULL) {
            strbuf_addf(why, "token_command '%s' printed no token", argv[0]);
        } else {
            free(s->token);
            s->token = t;
            rc = 0;
        }
    }
    if (outb.buf)
        memset(outb.buf, 0, outb.len);
    strbuf_free(&outb);
    free(copy);
    return rc;
}

static int read_token_file(struct slurm *s, struct strbuf *why)
{
    char *data = NULL;
    size_t len = 0;
    struct strbuf io = STRBUF_INIT;
    int rc = -1;
    if (file_read_all(s->token_file, TOKEN_MAX, &data, &len, &io) != 0) {
        strbuf_addf(why, "token_file: %s", strbuf_str(&io));
    } else {
        char *t = token_of(data, len);
        if (t == NULL) {
            strbuf_addf(why, "token_file %s holds no token", s->token_file);
        } else {
            free(s->token);
            s->token = t;
            rc = 0;
        }
        memset(data, 0, len);
    }
    free(data);
    strbuf_free(&io);
    return rc;
}

/* Gets a token (again when fresh) and puts the two headers on the client. */
static int load_token(struct slurm *s, bool fresh, struct strbuf *why)
{
    if (s->token && !fresh)
        return 0;
    int rc = s->token_command ? run_token_command(s, why) : read_token_file(s, why);
    if (rc != 0)
        return -1;
    char *lines =
        xasprintf("X-SLURM-USER-NAME: %s\r\nX-SLURM-USER-TOKEN: %s\r\n", s->user, s->token);
    rc = http_client_set_headers(s->client, lines);
    memset(lines, 0, strlen(lines));
    free(lines);
    if (rc != 0)
        strbuf_adds(why, "the user or the token holds a control character");
    return rc;
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
 * One request: path is absolute ("/openapi/v3") or under the API version
 * ("jobs" → "/slurm/v0.0.38/jobs"). A refused token is fetched again once
 * (token_command) and the request repeated. *reply gets the JSON of a 2xx
 * reply; errors a Slurm reply carries with a 2xx status are failures too.
 */
static enum backend_status rest(struct backend *b, const char *method, const char *path,
                                const json_t *body, json_t **reply, struct api_error *err);

/* The API version to speak, from /openapi/v3 the first time (once per backend). */
static enum backend_status ensure_shape(struct backend *b, struct api_error *err)
{
    struct slurm *s = driver(b);
    if (s->shape)
        return BACKEND_OK;
    json_t *doc = NULL;
    enum backend_status st = rest(b, "GET", "/openapi/v3", NULL, &doc, err);
    if (st != BACKEND_OK)
        return st;
    struct strbuf why = STRBUF_INIT;
    s->shape = slurm_shape_choose(doc, &why);
    json_decref(doc);
    if (s->shape == NULL) {
        api_error_set(err, 501, "Unsupported", "", "context '%s': %s", s->context,
                      strbuf_str(&why));
        st = BACKEND_REJECTED;
    }
    strbuf_free(&why);
    return st;
}

static enum backend_status rest(struct backend *b, const char *method, const char *path,
                                const json_t *body, json_t **reply, struct api_error *err)
{
    struct slurm *s = driver(b);
    *reply = NULL;
    struct strbuf why = STRBUF_INIT;
    if (load_token(s, false, &why) != 0) {
        enum backend_status st = auth_failed(b, strbuf_str(&why), err);
        strbuf_free(&why);
        return st;
    }
    if (path[0] != '/') {
        enum backend_status st = ensure_shape(b, err);
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
    for (int attempt = 0;; attempt++) {
        struct http_result r;
        http_result_init(&r);
        http_call(s->client, method, strbuf_str(&p), text, text ? strlen(text) : 0, &r);
        if (r.transport != TRANSPORT_NONE) {
            st = transport_error(b, &r, err);
            http_result_free(&r);
            break;
        }
        json_t *j = json_loadb(r.body.buf ? r.body.buf : "", r.body.len, 0, NULL);
        if (auth_refused(r.status, j)) {
            json_decref(j);
            http_result_free(&r);
            strbuf_reset(&why);
            if (attempt == 0 && s->token_command && load_token(s, true, &why) == 0)
                continue;
            st = auth_failed(b, strbuf_str(&why), err);
            break;
        }
        const json_t *errs = json_object_get(j, "errors");
        bool slurm_err = json_is_array(errs) && json_array_size(errs) > 0;
        if (r.status < 200 || r.status >= 300 || j == NULL || slurm_err) {
            struct strbuf m = STRBUF_INIT;
            slurm_error_text(j, r.body.buf, r.body.len, &m);
            int status = r.status >= 200 && r.status < 300 ? 500 : r.status;
            api_error_set(err, status, "SlurmError", "", "slurmrestd %s %s: %s", method,
                          strbuf_str(&p), strbuf_str(&m));
            strbuf_free(&m);
            json_decref(j);
            st = BACKEND_REJECTED;
        } else {
            *reply = j;
        }
        http_result_free(&r);
        break;
    }
    free(text);
    strbuf_free(&p);
    strbuf_free(&why);
    return st;
}

/* ---- job directories ------------------------------------------------------ */

/* "$jobs_dir/<workspace>/<name>", or NULL (err says why) for a name unsafe as a path component. */
static char *job_dir(struct backend *b, const char *name, struct api_error *err)
{
    char *d = slurm_jobdir(driver(b)->jobs_dir, b->target.workspace, name ? name : "");
    if (d == NULL)
        api_error_set(err, 400, "InvalidName", "name",
                      "'%s' cannot name a job directory (letters, digits, '-', '_' and '.')",
                      name ? name : "");
    return d;
}

/* Opens dir (O_PATH-free: readable) refusing a symlink as its last component. */
static int open_dir_nofollow(const char *dir)
{
    return open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/* Reads name below dirfd (no symlink, a regular file) into *out: at most max bytes, the tail when
 * tail. */
static int read_at(int dirfd, const char *name, size_t max, bool tail, struct strbuf *out)
{
    int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return -1;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return -1;
    }
    off_t start = 0;
    if (tail && st.st_size > (off_t)max)
        start = st.st_size - (off_t)max;
    if (start > 0 && lseek(fd, start, SEEK_SET) < 0) {
        close(fd);
        return -1;
    }
    char buf[16384];
    ssize_t n;
    while (out->len < max && (n = read(fd, buf, sizeof buf)) != 0) {
        if (n < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        size_t take = (size_t)n;
        if (out->len + take > max)
            take = max - out->len;
        strbuf_add(out, buf, take);
    }
    close(fd);
    return 0;
}

/* A file of the job directory, bounded; -1 when it is missing or not a plain file. */
static int read_job_file(const char *dir, const char *sub, const char *name, size_t max, bool tail,
                         struct strbuf *out)
{
    int dfd = open_dir_nofollow(dir);
    if (dfd < 0)
        return -1;
    int fd = dfd;
    if (sub) {
        fd = openat(dfd, sub, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        close(dfd);
        if (fd < 0)
            return -1;
    }
    int rc = read_at(fd, name, max, tail, out);
    close(fd);
    return rc;
}

/* A copy of text made safe for a terminal and at most max bytes. */
static char *clean(const char *text, size_t max)
{
    if (text == NULL)
        return NULL;
    struct strbuf sb = STRBUF_INIT;
    size_t n = strlen(text);
    utf8_sanitize(&sb, text, n > max ? max : n, 0);
    return strbuf_detach(&sb, NULL);
}

/* ---- states --------------------------------------------------------------- */

struct reason_word {
    const char *reason;
    const char *words;
};

static const struct reason_word reasons[] = {
    {"None", "waiting to be scheduled"},
    {"Resources", "waiting for free resources (nodes, GPUs, CPUs or memory)"},
    {"Priority", "waiting behind jobs of higher priority"},
    {"BeginTime", "held until its begin time"},
    {"Dependency", "waiting for a job it depends on"},
    {"JobHeldUser", "held by its user"},
    {"JobHeldAdmin", "held by an administrator"},
    {"QOSNotAllowed", "its QOS is not allowed in this partition"},
    {"InvalidQOS", "its QOS is not valid"},
    {"ReqNodeNotAvail", "a node it needs is not available (down, drained or reserved)"},
    {"PartitionNodeLimit", "it asks for more nodes than the partition allows"},
    {"PartitionDown", "the partition is down"},
    {"PartitionInactive", "the partition is inactive"},
    {"PartitionConfig", "the partition cannot hold it (GPUs, CPUs or memory per node)"},
    {"NodeDown", "a node it needs is down"},
    {"BadConstraints", "no node matches what it asks for"},
    {"Reservation", "waiting for its reservation"},
    {"Licenses", "waiting for licenses"},
    {"launch_failed_requeued_held", "its launch failed; held after a requeue"},
};

static void reason_words(const char *reason, struct strbuf *out)
{
    for (size_t i = 0; reason && i < sizeof reasons / sizeof reasons[0]; i++)
        if (strcmp(reason, reasons[i].reason) == 0) {
            strbuf_adds(out, reasons[i].words);
            return;
        }
    if (reason && strncmp(reason, "QOS", 3) == 0) {
        strbuf_adds(out, "held by a limit of its QOS (");
    } else if (reason && strncmp(reason, "Assoc", 5) == 0) {
        strbuf_adds(out, "held by a limit of its account (");
    } else {
        strbuf_adds(out, "Slurm says: ");
        utf8_sanitize(out, reason ? reason : "?", reason ? strnlen(reason, 64) : 1, 0);
        return;
    }
    utf8_sanitize(out, reason, strnlen(reason, 64), 0);
    strbuf_adds(out, ")");
}

static bool is(const char *a, const char *b)
{
    return a && strcmp(a, b) == 0;
}

/* "exit code 3" / "killed by signal 9 (SIGKILL)". */
static void exit_words(const struct slurm_job *j, struct strbuf *out)
{
    if (!j->has_exit)
        return;
    if (j->exit_signal) {
        const char *name = sigabbrev_np(j->exit_signal);
        strbuf_addf(out, "killed by signal %d", j->exit_signal);
        if (name)
            strbuf_addf(out, " (SIG%s)", name);
    } else {
        strbuf_addf(out, "exit code %d", j->exit_status);
    }
}

bool slurm_job_ended(const struct slurm_job *j)
{
    static const char *const ended[] = {
        "COMPLETED", "CANCELLED", "FAILED",         "TIMEOUT",      "NODE_FAIL",    "OUT_OF_MEMORY",
        "BOOT_FAIL", "DEADLINE",  "PREEMPTED_DONE", "SPECIAL_EXIT", "LAUNCH_FAILED"};
    for (size_t i = 0; i < sizeof ended / sizeof ended[0]; i++)
        if (is(j->state, ended[i]))
            return true;
    return false;
}

enum job_state slurm_job_state(const struct slurm_job *j, struct strbuf *msg)
{
    const char *s = j->state ? j->state : "";
    if (is(s, "PENDING") || is(s, "REQUEUED") || is(s, "REQUEUE_HOLD") || is(s, "REQUEUE_FED") ||
        is(s, "PREEMPTED")) {
        if (j->restarts > 0 || !is(s, "PENDING")) {
            strbuf_addf(msg, "preempted by a job of higher priority and requeued (run %d); ",
                        j->restarts + 1);
        }
        reason_words(j->reason, msg);
        return JOB_STATE_QUEUEING;
    }
    if (is(s, "CONFIGURING")) {
        strbuf_adds(msg, "nodes are being configured");
        return JOB_STATE_STARTING;
    }
    if (is(s, "RUNNING"))
        return JOB_STATE_RUNNING;
    if (is(s, "COMPLETING") || is(s, "STAGE_OUT") || is(s, "SIGNALING")) {
        strbuf_adds(msg, "completing: Slurm is ending the job's steps");
        return JOB_STATE_RUNNING;
    }
    if (is(s, "COMPLETED"))
        return JOB_STATE_SUCCEEDED;
    if (is(s, "CANCELLED")) {
        strbuf_adds(msg, "stopped (the Slurm job was cancelled)");
        return JOB_STATE_SUSPENDED;
    }
    if (is(s, "SUSPENDED") || is(s, "STOPPED")) {
        strbuf_adds(msg, "suspended by Slurm");
        return JOB_STATE_SUSPENDED;
    }
    static const struct reason_word failed[] = {
        {"FAILED", "failed"},
        {"TIMEOUT", "reached its time limit"},
        {"NODE_FAIL", "a node failed"},
        {"OUT_OF_MEMORY", "ran out of memory"},
        {"BOOT_FAIL", "a node failed to boot"},
        {"DEADLINE", "missed its deadline"},
        {"SPECIAL_EXIT", "ended with a special exit"},
        {"LAUNCH_FAILED", "could not be launched"},
    };
    for (size_t i = 0; i < sizeof failed / sizeof failed[0]; i++)
        if (is(s, failed[i].reason)) {
            strbuf_adds(msg, failed[i].words);
            if (j->has_exit) {
                strbuf_adds(msg, ": ");
                exit_words(j, msg);
            }
            return JOB_STATE_FAILED;
        }
    strbuf_adds(msg, "Slurm state ");
    utf8_sanitize(msg, s, strnlen(s, 64), 0);
    return JOB_STATE_UNSPECIFIED;
}

/* ---- jobs ----------------------------------------------------------------- */

/* Slurm's jobs of the workspace, newest first per name; from one GET /jobs. */
struct found {
    struct slurm_job *jobs;
    size_t count;
};

static void found_free(struct found *f)
{
    for (size_t i = 0; i < f->count; i++)
        slurm_job_free(&f->jobs[i]);
    free(f->jobs);
    memset(f, 0, sizeof *f);
}

/* The name of the job whose directory dir is, in the workspace; NULL when it is none of them. */
static const char *name_in(struct backend *b, const char *cwd, char **prefix_cache)
{
    if (*prefix_cache == NULL) {
        char *d = slurm_jobdir(driver(b)->jobs_dir, b->target.workspace, "x");
        if (d == NULL)
            return NULL;
        d[strlen(d) - 1] = '\0'; /* ".../<workspace>/" */
        *prefix_cache = d;
    }
    size_t n = strlen(*prefix_cache);
    if (cwd == NULL || strncmp(cwd, *prefix_cache, n) != 0)
        return NULL;
    const char *name = cwd + n;
    if (*name == '\0' || strchr(name, '/'))
        return NULL;
    return name;
}

/* GET /jobs: the workspace's jobs, the newest Slurm job per name. */
static enum backend_status fetch_jobs(struct backend *b, struct found *out, struct api_error *err)
{
    memset(out, 0, sizeof *out);
    json_t *reply;
    enum backend_status st = rest(b, "GET", "jobs", NULL, &reply, err);
    if (st != BACKEND_OK)
        return st;
    const json_t *arr = json_object_get(reply, "jobs");
    size_t cap = json_is_array(arr) ? json_array_size(arr) : 0;
    out->jobs = xcalloc(cap ? cap : 1, sizeof *out->jobs);
    char *prefix = NULL;
    size_t i;
    json_t *v;
    json_array_foreach(arr, i, v)
    {
        struct slurm_job j;
        struct strbuf why = STRBUF_INIT;
        int rc = slurm_job_decode(driver(b)->shape, v, &j, &why);
        strbuf_free(&why);
        if (rc != 0)
            continue;
        const char *name = name_in(b, j.cwd, &prefix);
        struct stat gone;
        /* A deleted job: its directory is gone, and Slurm keeps its end for MinJobAge. */
        if (name == NULL ||
            ((slurm_job_ended(&j) || is(j.state, "COMPLETING")) && lstat(j.cwd, &gone) != 0)) {
            slurm_job_free(&j);
            continue;
        }
        size_t k;
        for (k = 0; k < out->count; k++)
            if (strcmp(name_in(b, out->jobs[k].cwd, &prefix), name) == 0)
                break;
        if (k < out->count) {
            if (out->jobs[k].id > j.id) {
                slurm_job_free(&j);
                continue;
            }
            slurm_job_free(&out->jobs[k]);
            out->jobs[k] = j;
        } else {
            out->jobs[out->count++] = j;
        }
    }
    free(prefix);
    json_decref(reply);
    return BACKEND_OK;
}

static const struct slurm_job *found_job(struct backend *b, const struct found *f, const char *name)
{
    char *prefix = NULL;
    const struct slurm_job *hit = NULL;
    for (size_t i = 0; i < f->count && !hit; i++) {
        const char *n = name_in(b, f->jobs[i].cwd, &prefix);
        if (n && strcmp(n, name) == 0)
            hit = &f->jobs[i];
    }
    free(prefix);
    return hit;
}

static char *rfc3339(int64_t epoch)
{
    if (epoch <= 0)
        return NULL;
    char buf[TIMEFMT_RFC3339_LEN];
    time_rfc3339(epoch * 1000, buf);
    return xstrdup(buf);
}

/* The stored job.json of a directory, or false. */
static bool stored_job(const char *dir, struct jobspec *out)
{
    struct strbuf sb = STRBUF_INIT;
    bool ok = false;
    if (read_job_file(dir, NULL, "job.json", JOBJSON_MAX, false, &sb) == 0) {
        json_t *j = json_loadb(sb.buf ? sb.buf : "", sb.len, 0, NULL);
        struct findings fs = FINDINGS_INIT;
        if (json_is_object(j)) {
            jobspec_free(out);
            jobspec_init(out);
            ok = jobspec_from_json(j, JOBSPEC_LENIENT, out, &fs) == 0;
        }
        findings_free(&fs);
        json_decref(j);
    }
    strbuf_free(&sb);
    return ok;
}

static size_t workers_from_dir(const char *dir, struct worker_list *out);

/* state.json's "restarts": the fault-tolerance restarts the supervisor used; -1 when unknown. */
static int32_t restarts_used(const char *dir)
{
    struct strbuf sb = STRBUF_INIT;
    int32_t n = -1;
    if (read_job_file(dir, NULL, "state.json", WORKER_FILE_MAX, false, &sb) == 0) {
        json_t *j = json_loadb(sb.buf ? sb.buf : "", sb.len, 0, NULL);
        const json_t *v = json_object_get(j, "restarts");
        if (json_is_integer(v) && json_integer_value(v) >= 0 && json_integer_value(v) < 1000000)
            n = (int32_t)json_integer_value(v);
        json_decref(j);
    }
    strbuf_free(&sb);
    return n;
}

/* Running workers, from the records (else every allocated node of a running job). */
static int32_t ready_count(const char *dir, const struct slurm_job *sj)
{
    struct worker_list w;
    memset(&w, 0, sizeof w);
    int32_t n = 0;
    if (workers_from_dir(dir, &w) > 0) {
        for (size_t i = 0; i < w.count; i++)
            n += w.workers[i].phase == WORKER_RUNNING;
    } else if (is(sj->state, "RUNNING")) {
        n = (int32_t)sj->alloc_count;
    }
    worker_list_free(&w);
    return n;
}

/* The job as trainjob shows it: job.json (when readable) plus Slurm's view of it. */
static void make_job(struct backend *b, const char *name, const struct slurm_job *sj,
                     struct jobspec *out)
{
    jobspec_init(out);
    char *dir = slurm_jobdir(driver(b)->jobs_dir, b->target.workspace, name);
    if (dir)
        stored_job(dir, out);
    free(out->name);
    out->name = xstrdup(name);
    free(out->workspace_name);
    out->workspace_name = xstrdup(b->target.workspace);
    free(out->uid);
    out->uid = xasprintf("slurm:%s/%s", b->target.workspace, name);
    free(out->state_message);
    out->state_message = NULL;
    if (sj == NULL) {
        /* Gone from slurmctld (MinJobAge): the supervisor's records say how it ended. */
        struct stat js;
        char *jp = dir ? xasprintf("%s/job.json", dir) : NULL;
        if (jp && lstat(jp, &js) == 0 && out->create_time == NULL)
            out->create_time = rfc3339((int64_t)js.st_mtime); /* when it was submitted */
        free(jp);
        int32_t used_then = dir ? restarts_used(dir) : -1;
        if (used_then >= 0) {
            out->has_restart_count = true;
            out->restart_count = used_then;
        }
        struct worker_list w;
        memset(&w, 0, sizeof w);
        size_t ok = 0, failed = 0, n = dir ? workers_from_dir(dir, &w) : 0;
        for (size_t i = 0; i < n; i++) {
            ok += w.workers[i].phase == WORKER_SUCCEEDED;
            failed += w.workers[i].phase == WORKER_FAILED;
        }
        worker_list_free(&w);
        out->state = failed         ? JOB_STATE_FAILED
                     : n && ok == n ? JOB_STATE_SUCCEEDED
                                    : JOB_STATE_UNSPECIFIED;
        out->state_message =
            xstrdup(out->state == JOB_STATE_UNSPECIFIED
                        ? "Slurm no longer reports this job (it ended more than MinJobAge ago)"
                        : "ended (from its workers' records: Slurm no longer reports the job)");
        free(dir);
        return;
    }
    free(out->id);
    out->id = xasprintf("%lld", (long long)sj->id);
    if (sj->user && out->ownership.user_name == NULL) {
        out->ownership.present = true;
        out->ownership.user_name = clean(sj->user, 64);
    }
    struct strbuf msg = STRBUF_INIT;
    out->state = slurm_job_state(sj, &msg);
    if (msg.len)
        out->state_message = strbuf_detach(&msg, NULL);
    strbuf_free(&msg);
    int32_t used = dir ? restarts_used(dir) : -1;
    out->has_restart_count = true;
    out->restart_count = used >= 0 ? used : 0;
    if (out->state == JOB_STATE_RUNNING && dir) {
        out->has_ready_workers = true;
        out->ready_workers = ready_count(dir, sj);
    }
    free(out->create_time);
    out->create_time = rfc3339(sj->submit_time);
    free(out->start_time);
    out->start_time = out->state == JOB_STATE_QUEUEING ? NULL : rfc3339(sj->start_time);
    free(out->complete_time);
    out->complete_time = slurm_job_ended(sj) ? rfc3339(sj->end_time) : NULL;
    free(dir);
}

/* The names of the workspace's job directories holding a job.json (at most cap). */
static size_t dir_names(struct backend *b, char ***out)
{
    *out = NULL;
    char *d = slurm_jobdir(driver(b)->jobs_dir, b->target.workspace, "x");
    if (d == NULL)
        return 0;
    d[strlen(d) - 2] = '\0';
    int fd = open_dir_nofollow(d);
    free(d);
    if (fd < 0)
        return 0;
    DIR *dp = fdopendir(fd);
    if (dp == NULL) {
        close(fd);
        return 0;
    }
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(dp)) != NULL && n < 100000) {
        if (e->d_name[0] == '.')
            continue;
        struct stat st;
        if (fstatat(dirfd(dp), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode))
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            *out = xreallocarray(*out, cap, sizeof **out);
        }
        (*out)[n++] = xstrdup(e->d_name);
    }
    closedir(dp);
    return n;
}

static enum backend_status slurm_get(struct backend *b, const char *name, struct jobspec *out,
                                     struct api_error *err)
{
    jobspec_init(out);
    char *dir = job_dir(b, name, err);
    if (dir == NULL)
        return BACKEND_REJECTED;
    struct found f;
    enum backend_status st = fetch_jobs(b, &f, err);
    if (st == BACKEND_OK) {
        const struct slurm_job *sj = found_job(b, &f, name);
        struct stat s;
        if (sj == NULL && lstat(dir, &s) != 0) {
            api_error_set(err, 404, "NotFound", "name", "no job '%s' in workspace %s", name,
                          b->target.workspace);
            st = BACKEND_REJECTED;
        } else {
            make_job(b, name, sj, out);
        }
    }
    found_free(&f);
    free(dir);
    return st;
}

/* A list filter's terms, as `get jobs` writes them: state='X' AND user_name='Y'. */
struct list_filter {
    char *state, *user;
};

static void list_filter_free(struct list_filter *f)
{
    free(f->state);
    free(f->user);
}

/* Parses filter into f; -1 with err set for a term the driver does not know. */
static int list_filter_parse(const char *filter, struct list_filter *f, struct api_error *err)
{
    memset(f, 0, sizeof f[0]);
    const char *p = filter ? filter : "";
    while (*p) {
        while (*p == ' ')
            p++;
        if (strncmp(p, "AND ", 4) == 0) {
            p += 4;
            continue;
        }
        char **slot = strncmp(p, "state='", 7) == 0        ? &f->state
                      : strncmp(p, "user_name='", 11) == 0 ? &f->user
                                                           : NULL;
        const char *v = slot ? strchr(p, '\'') + 1 : NULL;
        const char *end = v ? strchr(v, '\'') : NULL;
        if (slot == NULL || end == NULL) {
            api_error_set(err, 400, "InvalidFilter", "filter",
                          "the slurm driver filters by state='…' and user_name='…' only");
            list_filter_free(f);
            return -1;
        }
        free(*slot);
        *slot = xstrndup(v, (size_t)(end - v));
        p = end + 1;
    }
    return 0;
}

static bool list_filter_match(const struct list_filter *f, const struct jobspec *j)
{
    if (f->state && strcmp(enum_name(&job_state_names, (int)j->state), f->state) != 0)
        return false;
    if (f->user && (j->ownership.user_name == NULL || strcmp(j->ownership.user_name, f->user) != 0))
        return false;
    return true;
}

static enum backend_status slurm_list(struct backend *b, const struct list_query *q,
                                      struct job_list *out, struct api_error *err)
{
    memset(out, 0, sizeof *out);
    struct list_filter lf;
    if (list_filter_parse(q ? q->filter : NULL, &lf, err) != 0)
        return BACKEND_REJECTED;
    struct found f;
    enum backend_status st = fetch_jobs(b, &f, err);
    if (st != BACKEND_OK) {
        list_filter_free(&lf);
        return st;
    }
    char **names;
    size_t nn = dir_names(b, &names);
    char *prefix = NULL;
    size_t cap = nn + f.count;
    out->jobs = xcalloc(cap ? cap : 1, sizeof *out->jobs);
    for (size_t i = 0; i < f.count; i++) {
        const char *name = name_in(b, f.jobs[i].cwd, &prefix);
        if (q && q->name && strncmp(name, q->name, strlen(q->name)) != 0)
            continue;
        make_job(b, name, &f.jobs[i], &out->jobs[out->count++]);
    }
    for (size_t i = 0; i < nn; i++) {
        bool seen = found_job(b, &f, names[i]) != NULL;
        if (!seen && !(q && q->name && strncmp(names[i], q->name, strlen(q->name)) != 0)) {
            char *dir = slurm_jobdir(driver(b)->jobs_dir, b->target.workspace, names[i]);
            struct stat s;
            /* Only directories trainjob made: they hold a job.json. */
            if (dir && fstatat(AT_FDCWD, dir, &s, AT_SYMLINK_NOFOLLOW) == 0) {
                struct jobspec probe;
                jobspec_init(&probe);
                if (stored_job(dir, &probe))
                    make_job(b, names[i], NULL, &out->jobs[out->count++]);
                jobspec_free(&probe);
            }
            free(dir);
        }
        free(names[i]);
    }
    free(names);
    free(prefix);
    found_free(&f);
    size_t kept = 0;
    for (size_t i = 0; i < out->count; i++) {
        if (list_filter_match(&lf, &out->jobs[i]))
            out->jobs[kept++] = out->jobs[i];
        else
            jobspec_free(&out->jobs[i]);
    }
    out->count = kept;
    list_filter_free(&lf);
    out->total_size = (long)out->count;
    return BACKEND_OK;
}

/* ---- workers and events --------------------------------------------------- */

/* A safe worker name: what a file name of workers/ or logs/ may be. */
static bool safe_component(const char *s)
{
    if (s == NULL || *s == '\0' || *s == '.' || strlen(s) > 128)
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '-' || *s == '_' || *s == '.'))
            return false;
    return true;
}

static char *jstr(const json_t *o, const char *key, size_t max)
{
    const json_t *v = json_object_get(o, key);
    return json_is_string(v) ? clean(json_string_value(v), max) : NULL;
}

static bool jint(const json_t *o, const char *key, int64_t lo, int64_t hi, int32_t *out)
{
    const json_t *v = json_object_get(o, key);
    if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi)
        return false;
    *out = (int32_t)json_integer_value(v);
    return true;
}

/* One workers/<name>.json the supervisor wrote, checked field by field; false when unusable. */
static bool worker_from_record(const json_t *r, struct worker_info *w)
{
    memset(w, 0, sizeof *w);
    const char *name = json_string_value(json_object_get(r, "name"));
    if (!safe_component(name))
        return false;
    w->name = xstrdup(name);
    w->node_name = jstr(r, "node", 128);
    const char *phase = json_string_value(json_object_get(r, "phase"));
    int p = phase ? enum_value(&worker_phase_names, phase) : -1;
    if (p > 0)
        w->phase = (enum worker_phase)p;
    else if (phase)
        w->phase_other = clean(phase, 32);
    int32_t v;
    if (jint(r, "restarts", 0, INT32_MAX, &v)) {
        w->has_restarts = true;
        w->restarts = v;
    }
    int32_t sig = 0;
    bool has_sig = jint(r, "signal", 1, 127, &sig);
    if (jint(r, "exit_code", 0, 255, &v) || has_sig) {
        w->has_exit_code = true;
        w->exit_code = has_sig ? 128 + sig : v;
        if (has_sig) {
            const char *sn = sigabbrev_np(sig);
            w->exit_reason = xasprintf("killed (SIG%s)", sn ? sn : "?");
        }
    }
    char *rule = jstr(r, "rule", 256);
    if (rule) {
        free(w->exit_reason);
        w->exit_reason = rule;
    }
    w->start_time = jstr(r, "started", 40);
    w->finish_time = jstr(r, "ended", 40);
    w->role = xstrndup(w->name, strcspn(w->name, "-"));
    return true;
}

static int cmp_worker(const void *a, const void *b)
{
    const struct worker_info *x = a, *y = b;
    return strcmp(x->name, y->name);
}

/* workers/<worker>.json of a job directory; 0 when there are none. */
static size_t workers_from_dir(const char *dir, struct worker_list *out)
{
    int dfd = open_dir_nofollow(dir);
    if (dfd < 0)
        return 0;
    int wfd = openat(dfd, "workers", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    close(dfd);
    if (wfd < 0)
        return 0;
    DIR *dp = fdopendir(wfd);
    if (dp == NULL) {
        close(wfd);
        return 0;
    }
    size_t cap = 0;
    struct dirent *e;
    int seen = 0;
    while ((e = readdir(dp)) != NULL && seen++ < WORKERS_MAX * 2 && out->count < WORKERS_MAX) {
        size_t n = strlen(e->d_name);
        if (e->d_name[0] == '.' || n < 6 || strcmp(e->d_name + n - 5, ".json") != 0)
            continue;
        struct strbuf sb = STRBUF_INIT;
        if (read_at(dirfd(dp), e->d_name, WORKER_FILE_MAX, false, &sb) == 0) {
            json_t *j = json_loadb(sb.buf ? sb.buf : "", sb.len, 0, NULL);
            struct worker_info w;
            if (json_is_object(j) && worker_from_record(j, &w)) {
                if (out->count == cap) {
                    cap = cap ? cap * 2 : 8;
                    out->workers = xreallocarray(out->workers, cap, sizeof *out->workers);
                }
                out->workers[out->count++] = w;
            }
            json_decref(j);
        }
        strbuf_free(&sb);
    }
    closedir(dp);
    if (out->count > 1)
        qsort(out->workers, out->count, sizeof *out->workers, cmp_worker);
    return out->count;
}

/* A worker's phase when only Slurm's view of the whole job is known. */
static enum worker_phase phase_of(const struct slurm_job *sj)
{
    if (is(sj->state, "RUNNING") || is(sj->state, "COMPLETING"))
        return WORKER_RUNNING;
    if (is(sj->state, "COMPLETED"))
        return WORKER_SUCCEEDED;
    if (is(sj->state, "CANCELLED"))
        return WORKER_TERMINATING;
    return slurm_job_ended(sj) ? WORKER_FAILED : WORKER_PENDING;
}

static enum backend_status slurm_workers(struct backend *b, const char *name,
                                         struct worker_list *out, struct api_error *err)
{
    memset(out, 0, sizeof *out);
    char *dir = job_dir(b, name, err);
    if (dir == NULL)
        return BACKEND_REJECTED;
    struct found f;
    enum backend_status st = fetch_jobs(b, &f, err);
    if (st != BACKEND_OK) {
        free(dir);
        return st;
    }
    const struct slurm_job *sj = found_job(b, &f, name);
    if (workers_from_dir(dir, out) > 0 && sj && !slurm_job_ended(sj)) {
        /* The records say what ran; the allocation says which GPUs each node gave. */
        for (size_t i = 0; i < out->count; i++)
            for (size_t k = 0; k < sj->alloc_count && !out->workers[i].devices; k++)
                if (out->workers[i].node_name && sj->alloc[k].gpus &&
                    strcmp(out->workers[i].node_name, sj->alloc[k].node) == 0)
                    out->workers[i].devices = xstrdup(sj->alloc[k].gpus);
    } else if (out->count == 0 && sj) {
        /* No records yet: one worker per allocated node, from Slurm's allocation. */
        struct jobspec job;
        jobspec_init(&job);
        stored_job(dir, &job);
        out->workers = xcalloc(sj->alloc_count ? sj->alloc_count : 1, sizeof *out->workers);
        for (size_t i = 0; i < sj->alloc_count; i++) {
            struct worker_info *w = &out->workers[out->count++];
            char nm[32];
            slurm_worker_name(&job, (int)i, nm, sizeof nm);
            w->name = xstrdup(nm);
            w->role = xstrndup(nm, strcspn(nm, "-"));
            w->node_name = xstrdup(sj->alloc[i].node);
            w->phase = phase_of(sj);
            w->devices = sj->alloc[i].gpus ? xstrdup(sj->alloc[i].gpus) : NULL;
        }
        jobspec_free(&job);
    }
    found_free(&f);
    free(dir);
    return BACKEND_OK;
}

struct event_kind {
    const char *reason;
    enum job_event_kind kind;
};

/* The supervisor's reasons (worded as trainjobd's) to event kinds. */
static const struct event_kind event_kinds[] = {
    {"Created", EVENT_CREATED},        {"Submitted", EVENT_CREATED},
    {"Scheduled", EVENT_SCHEDULED},    {"Started", EVENT_STARTED},
    {"Preempted", EVENT_PREEMPTED},    {"Requeued", EVENT_PREEMPTED},
    {"NodeMarked", EVENT_NODE_MARKED}, {"Stopped", EVENT_STOPPED},
    {"WorkerStarted", EVENT_WORKER},   {"WorkerExited", EVENT_WORKER},
    {"WorkerSucceeded", EVENT_WORKER}, {"WorkerFailed", EVENT_FAULT},
    {"RestartPod", EVENT_FAULT},       {"RestartJob", EVENT_FAULT},
    {"FailJob", EVENT_FAULT},          {"BackoffLimitExceeded", EVENT_FAULT},
    {"Succeeded", EVENT_STATE},        {"Failed", EVENT_STATE},
    {"Running", EVENT_STATE},
};

/* One line of events.jsonl to an event; false when it is not an object of strings. */
static bool event_from_line(const char *line, size_t len, const char *job, struct job_event *e)
{
    memset(e, 0, sizeof *e);
    json_t *j = json_loadb(line, len, 0, NULL);
    if (!json_is_object(j)) {
        json_decref(j);
        return false;
    }
    const char *reason = json_string_value(json_object_get(j, "reason"));
    const char *message = json_string_value(json_object_get(j, "message"));
    const char *type = json_string_value(json_object_get(j, "type"));
    if (reason == NULL && message == NULL) {
        json_decref(j);
        return false;
    }
    e->job = xstrdup(job);
    e->time = jstr(j, "time", 40);
    e->worker = jstr(j, "worker", 128);
    e->node = jstr(j, "node", 128);
    /* The supervisor names the kind (api/jobstatus.h's names); else it comes from the reason. */
    const char *kind = json_string_value(json_object_get(j, "kind"));
    int k = kind ? enum_value(&job_event_kind_names, kind) : -1;
    if (k > 0)
        e->kind = (enum job_event_kind)k;
    for (size_t i = 0; k <= 0 && reason && i < sizeof event_kinds / sizeof event_kinds[0]; i++)
        if (strcmp(reason, event_kinds[i].reason) == 0)
            e->kind = event_kinds[i].kind;
    if (e->kind == EVENT_UNSPECIFIED && type && strcmp(type, "Warning") == 0)
        e->kind = EVENT_FAULT;
    int32_t v;
    if (jint(j, "exit_code", 0, 255, &v)) {
        e->has_exit_code = true;
        e->exit_code = v;
    }
    if (jint(j, "restarts_used", 0, INT32_MAX, &v)) {
        e->has_restarts_used = true;
        e->restarts_used = v;
    }
    if (jint(j, "restart_limit", -1, INT32_MAX, &v)) {
        e->has_restart_limit = true;
        e->restart_limit = v;
    }
    if (jint(j, "rule", 1, 1000, &v)) {
        e->has_rule = true;
        e->rule = v;
    }
    e->action = jstr(j, "action", 32);
    struct strbuf m = STRBUF_INIT;
    if (message)
        utf8_sanitize(&m, message, strnlen(message, EVENT_TEXT_MAX), 0);
    else
        utf8_sanitize(&m, reason, strnlen(reason, 64), 0);
    e->message = strbuf_detach(&m, NULL);
    json_decref(j);
    return true;
}

/*
 * The last EVENTS_MAX bytes of events.jsonl: a first line cut by the bound
 * is dropped, lines that are not events are skipped, at most
 * EVENTS_COUNT_MAX events are kept (the newest).
 */
static size_t events_from_dir(const char *dir, const char *job, struct job_event_list *out)
{
    struct strbuf sb = STRBUF_INIT;
    if (read_job_file(dir, NULL, "events.jsonl", EVENTS_MAX, true, &sb) != 0) {
        strbuf_free(&sb);
        return 0;
    }
    const char *p = sb.buf ? sb.buf : "", *end = p + sb.len;
    struct stat st;
    (void)st;
    size_t cap = 0;
    bool first = true;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (nl == NULL)
            break; /* a line still being written */
        if (!(first && sb.len == EVENTS_MAX)) {
            struct job_event e;
            if (event_from_line(p, (size_t)(nl - p), job, &e)) {
                if (out->count == EVENTS_COUNT_MAX) {
                    job_event_free(&out->events[0]);
                    memmove(out->events, out->events + 1, (out->count - 1) * sizeof *out->events);
                    out->count--;
                }
                if (out->count == cap) {
                    cap = cap ? cap * 2 : 32;
                    out->events = xreallocarray(out->events, cap, sizeof *out->events);
                }
                e.id = (int64_t)out->count + 1;
                out->events[out->count++] = e;
            }
        }
        first = false;
        p = nl + 1;
    }
    strbuf_free(&sb);
    return out->count;
}

static enum backend_status slurm_events(struct backend *b, const char *name,
                                        struct job_event_list *out, struct api_error *err)
{
    memset(out, 0, sizeof *out);
    char *dir = job_dir(b, name, err);
    if (dir == NULL)
        return BACKEND_REJECTED;
    struct stat s;
    if (lstat(dir, &s) != 0) {
        free(dir);
        api_error_set(err, 404, "NotFound", "name", "no job '%s' in workspace %s", name,
                      b->target.workspace);
        return BACKEND_REJECTED;
    }
    events_from_dir(dir, name, out);
    free(dir);
    return BACKEND_OK;
}

/* ---- logs ----------------------------------------------------------------- */

/* Hands the last tail lines of buf (all when tail < 0) to fn. */
static int emit_tail(const char *buf, size_t len, long tail, backend_data_fn fn, void *ctx)
{
    size_t start = 0;
    if (tail >= 0) {
        long lines = 0;
        size_t i = len;
        if (i > 0 && buf[i - 1] == '\n')
            i--;
        while (i > 0) {
            if (buf[i - 1] == '\n' && ++lines == tail)
                break;
            i--;
        }
        start = tail == 0 ? len : i;
    }
    return len > start ? fn(ctx, buf + start, len - start) : 0;
}

/* The log's descriptor: logs/<worker>.log below the job directory, no symlink followed. */
static int open_log(const char *dir, const char *worker)
{
    int dfd = open_dir_nofollow(dir);
    if (dfd < 0)
        return -1;
    int lfd = openat(dfd, "logs", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    close(dfd);
    if (lfd < 0)
        return -1;
    char *file = xasprintf("%s.log", worker);
    int fd = openat(lfd, file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    free(file);
    close(lfd);
    struct stat st;
    if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) {
        close(fd);
        fd = -1;
    }
    return fd;
}

/* A worker's log being read: opened when it appears, its tail first, then what is added. */
struct log_follow {
    struct backend *b;
    char *name, *worker, *dir;
    long tail;
    bool follow;
    int fd;                /* -1 until the log exists */
    int64_t open_deadline; /* a follow waits this long for the log to appear */
    int64_t next_state;    /* when to ask Slurm again whether the job ended */
    int quiet_after_end;   /* -1 while the job runs; then quiet steps since it ended */
};

static void log_follow_free(void *p)
{
    struct log_follow *f = p;
    if (f == NULL)
        return;
    if (f->fd >= 0)
        close(f->fd);
    free(f->name);
    free(f->worker);
    free(f->dir);
    free(f);
}

static struct log_follow *log_follow_new(struct backend *b, const char *name, const char *worker,
                                         long tail, bool follow, struct api_error *err)
{
    if (!safe_component(worker)) {
        api_error_set(err, 400, "InvalidWorker", "worker", "'%s' is not a worker name",
                      worker ? worker : "");
        return NULL;
    }
    char *dir = job_dir(b, name, err);
    if (dir == NULL)
        return NULL;
    struct log_follow *f = xcalloc(1, sizeof *f);
    f->b = b;
    f->name = xstrdup(name);
    f->worker = xstrdup(worker);
    f->dir = dir;
    f->tail = tail;
    f->follow = follow;
    f->fd = -1;
    f->open_deadline = time_now_ms() + 60000;
    f->next_state = time_now_ms() + FOLLOW_STATE_MS;
    f->quiet_after_end = -1;
    return f;
}

/*
 * One step of reading a log: open it (handing on its last tail lines), hand
 * on what was added, and every FOLLOW_STATE_MS ask Slurm whether the job
 * ended; a follow ends a few quiet steps after the job did. Returns true
 * when the stream is over (*st says how), false to step again after
 * FOLLOW_POLL_MS. Shared by the blocking call and the TUI's timer.
 */
static bool log_step(struct log_follow *f, backend_data_fn fn, void *ctx, enum backend_status *st,
                     struct api_error *err)
{
    *st = BACKEND_OK;
    char buf[65536];
    ssize_t n;
    if (f->fd < 0) {
        f->fd = open_log(f->dir, f->worker);
        if (f->fd < 0) {
            if (f->follow && time_now_ms() <= f->open_deadline)
                return false;
            api_error_set(err, 404, "NotFound", "worker", "no log of worker '%s' of job '%s' yet",
                          f->worker, f->name);
            *st = BACKEND_REJECTED;
            return true;
        }
        struct stat s;
        off_t size = fstat(f->fd, &s) == 0 ? s.st_size : 0;
        off_t start = size > (off_t)LOG_TAIL_MAX ? size - (off_t)LOG_TAIL_MAX : 0;
        struct strbuf sb = STRBUF_INIT;
        if (lseek(f->fd, start, SEEK_SET) == start)
            while (sb.len < LOG_TAIL_MAX && (n = read(f->fd, buf, sizeof buf)) > 0)
                strbuf_add(&sb, buf, (size_t)n);
        int stop = emit_tail(sb.buf ? sb.buf : "", sb.len, f->tail, fn, ctx);
        strbuf_free(&sb);
        if (stop || !f->follow)
            return true;
    }
    for (int i = 0; i < 64; i++) { /* bounded: a log written faster than read yields the loop */
        n = read(f->fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        if (fn(ctx, buf, (size_t)n))
            return true;
    }
    if (f->quiet_after_end >= 0 && f->quiet_after_end++ >= 2)
        return true; /* the job ended and its log stayed quiet */
    if (f->quiet_after_end < 0 && time_now_ms() >= f->next_state) {
        f->next_state = time_now_ms() + FOLLOW_STATE_MS;
        struct jobspec j;
        struct api_error e;
        if (slurm_get(f->b, f->name, &j, &e) == BACKEND_OK &&
            (j.state == JOB_STATE_SUCCEEDED || j.state == JOB_STATE_FAILED ||
             j.state == JOB_STATE_SUSPENDED || j.state == JOB_STATE_UNSPECIFIED))
            f->quiet_after_end = 0;
        jobspec_free(&j);
    }
    return false;
}

static enum backend_status slurm_logs(struct backend *b, const char *name, const char *worker,
                                      long tail, bool follow, backend_data_fn fn, void *ctx,
                                      struct api_error *err)
{
    struct log_follow *f = log_follow_new(b, name, worker, tail, follow, err);
    if (f == NULL)
        return BACKEND_REJECTED;
    enum backend_status st;
    while (!log_step(f, fn, ctx, &st, err))
        poll(NULL, 0, FOLLOW_POLL_MS);
    log_follow_free(f);
    return st;
}

/* ---- catalog -------------------------------------------------------------- */

/* GPUs in a node's gres ("gpu:8", "gpu:a100:4,shard:2"); 0 when none. */
static int gres_gpus(const char *gres, char **type)
{
    int total = 0;
    const char *p = gres;
    while (p && *p) {
        size_t n = strcspn(p, ",");
        if (n > 4 && strncmp(p, "gpu:", 4) == 0) {
            const char *last = p + n;
            while (last > p && last[-1] != ':')
                last--;
            int count = atoi(last);
            const char *t = p + 4;
            size_t tl = (size_t)(last - 1 - t);
            if (last - 1 > t && type && *type == NULL)
                *type = xstrndup(t, tl);
            if (count > 0 && count < 1 << 16)
                total += count;
        }
        p += n;
        if (*p == ',')
            p++;
    }
    return total;
}

static bool in_array(const json_t *arr, const char *word)
{
    size_t i;
    json_t *v;
    json_array_foreach(arr, i, v) if (json_is_string(v) &&
                                      strcasecmp(json_string_value(v), word) == 0) return true;
    return false;
}

static void add_spec(struct catalog_pool *pool, size_t *cap, int gpus, int vcpus, int64_t mem,
                     const char *type, int nodes)
{
    if (pool->spec_count == *cap) {
        *cap = *cap ? *cap * 2 : 8;
        pool->specs = xreallocarray(pool->specs, *cap, sizeof *pool->specs);
    }
    struct catalog_spec *s = &pool->specs[pool->spec_count++];
    memset(s, 0, sizeof *s);
    s->name = gpus ? xasprintf("gpu-%d", gpus) : xasprintf("cpu-%d", vcpus);
    s->devices = gpus;
    s->device_type = gpus ? xstrdup(type ? type : "GPU") : NULL;
    s->vcpus = vcpus > 0 ? vcpus : 1;
    s->memory_mib = mem;
    s->max_replicas = nodes;
}

/* The specs of a partition: GPUs 1, 2, 4 … up to its smallest node's, CPUs and memory in
 * proportion. */
static void partition_specs(struct catalog_pool *pool, const json_t *nodes)
{
    int min_gpus = -1, min_cpus = -1, count = 0;
    int64_t min_mem = -1;
    char *type = NULL;
    size_t i;
    json_t *n;
    json_array_foreach(nodes, i, n)
    {
        if (!in_array(json_object_get(n, "partitions"), pool->name))
            continue;
        const char *gres = json_string_value(json_object_get(n, "gres"));
        int g = gres_gpus(gres, &type);
        int64_t cpus = 0, mem = 0;
        slurm_number(json_object_get(n, "cpus"), &cpus);
        slurm_number(json_object_get(n, "real_memory"), &mem);
        if (min_gpus < 0 || g < min_gpus)
            min_gpus = g;
        if (min_cpus < 0 || cpus < min_cpus)
            min_cpus = (int)cpus;
        if (min_mem < 0 || mem < min_mem)
            min_mem = mem;
        count++;
    }
    size_t cap = 0;
    if (count == 0) {
        free(type);
        return;
    }
    if (min_gpus <= 0) {
        add_spec(pool, &cap, 0, min_cpus, min_mem, NULL, count);
    } else {
        for (int g = 1; g <= min_gpus; g *= 2)
            add_spec(pool, &cap, g, min_cpus * g / min_gpus, min_mem * g / min_gpus, type, count);
        if ((min_gpus & (min_gpus - 1)) != 0)
            add_spec(pool, &cap, min_gpus, min_cpus, min_mem, type, count);
    }
    free(type);
}

static enum backend_status slurm_catalog(struct backend *b, struct catalog *out,
                                         struct api_error *err)
{
    memset(out, 0, sizeof *out);
    json_t *parts, *nodes;
    enum backend_status st = rest(b, "GET", "partitions", NULL, &parts, err);
    if (st != BACKEND_OK)
        return st;
    st = rest(b, "GET", "nodes", NULL, &nodes, err);
    if (st != BACKEND_OK) {
        json_decref(parts);
        return st;
    }
    struct slurm *s = driver(b);
    out->user = xstrdup(s->user);
    const json_t *pa = json_object_get(parts, "partitions");
    const json_t *na = json_object_get(nodes, "nodes");
    size_t np = json_is_array(pa) ? json_array_size(pa) : 0;
    out->pools = xcalloc(np ? np : 1, sizeof *out->pools);
    out->workspaces = xcalloc(1, sizeof *out->workspaces);
    out->workspace_count = 1;
    struct catalog_workspace *ws = &out->workspaces[0];
    ws->name = xstrdup(b->target.workspace);
    /* HIGH and HIGHEST are offered when the context maps them to a QOS: Slurm has no other. */
    bool high = false;
    const char *qk;
    json_t *qv;
    json_object_foreach(s->qos, qk, qv) high = high || strstr(qk, "HIGH") != NULL;
    ws->role = high ? MEMBER_OWNER : MEMBER;
    ws->pools = xcalloc(np ? np : 1, sizeof *ws->pools);
    size_t i;
    json_t *p;
    json_array_foreach(pa, i, p)
    {
        const char *name = json_string_value(json_object_get(p, "name"));
        if (name == NULL || !safe_component(name))
            continue;
        struct catalog_pool *pool = &out->pools[out->pool_count++];
        pool->name = xstrdup(name);
        const json_t *pm = json_object_get(p, "preemption_mode");
        bool idle = in_array(pm, "requeue") || in_array(pm, "cancel") ||
                    (json_is_string(pm) && (strcasestr(json_string_value(pm), "requeue") ||
                                            strcasestr(json_string_value(pm), "cancel")));
        pool->type = idle ? POOL_IDLE : POOL_DEDICATED;
        pool->display_name = xasprintf("Slurm partition %s", name);
        partition_specs(pool, na);
        ws->pools[ws->pool_count++] = xstrdup(name);
    }
    out->images = xcalloc(1, sizeof *out->images);
    out->image_count = 1;
    out->images[0].path = xstrdup("local/host");
    out->images[0].source = xstrdup("official");
    out->images[0].description =
        xstrdup(s->launcher && *s->launcher
                    ? "the node's own environment (or any image, through the context's launcher)"
                    : "the node's own environment");
    out->resource_limits = xstrdup("enforced by Slurm (cons_tres: CPUs, memory, GPUs per node)");
    out->unknown = CATALOG_UNKNOWN_ZONES | CATALOG_UNKNOWN_VOLUMES;
    json_decref(parts);
    json_decref(nodes);
    return BACKEND_OK;
}

/* ---- submit --------------------------------------------------------------- */

/* The QOS the context maps the job's priority to, or NULL. */
static const char *qos_for(const json_t *qos, const struct jobspec *job)
{
    enum priority p = job->scheduling.priority ? job->scheduling.priority : PRIORITY_NORMAL;
    char key[32];
    snprintf(key, sizeof key, "%s%s", jobspec_is_idle(job) ? "IDLE_" : "",
             enum_name(&priority_names, (int)p));
    return json_string_value(json_object_get(qos, key));
}

/* Where and how a job is submitted: the context's part. */
struct site_conf {
    const char *jobs_dir, *workspace, *launcher;
    const json_t *qos;
    bool idle_pool; /* the partition requeues or cancels preempted jobs */
};

/* The submit of job: its script rendered by slurm_script_render, its resources from spec. */
static int build_submit(const struct slurm_shape *shape, const struct site_conf *c,
                        const struct jobspec *job, const struct catalog_spec *spec,
                        const char *exclude, json_t **body, struct strbuf *gaps,
                        struct api_error *err)
{
    *body = NULL;
    const struct role *r = jobspec_worker(job);
    enum priority prio = job->scheduling.priority;
    if ((prio == PRIORITY_HIGH || prio == PRIORITY_HIGHEST) && qos_for(c->qos, job) == NULL) {
        api_error_set(err, 400, "InvalidField", "scheduling.priority",
                      "%s needs a QOS: the context maps none for it (qos: {%s%s: <qos>})",
                      enum_name(&priority_names, (int)prio), jobspec_is_idle(job) ? "IDLE_" : "",
                      enum_name(&priority_names, (int)prio));
        return -1;
    }
    if (r == NULL || !r->has_total_replicas || r->total_replicas < 1) {
        api_error_set(err, 400, "InvalidField", "roles[0].total_replicas",
                      "a Slurm job needs total_replicas (one node per worker)");
        return -1;
    }
    char *dir = slurm_jobdir(c->jobs_dir, c->workspace, job->name ? job->name : "");
    if (dir == NULL) {
        api_error_set(err, 400, "InvalidName", "name",
                      "'%s' cannot name a job directory (letters, digits, '-', '_' and '.')",
                      job->name ? job->name : "");
        return -1;
    }
    struct slurm_site site = {c->jobs_dir, c->workspace, c->launcher};
    struct strbuf script = STRBUF_INIT;
    if (slurm_script_render(job, &site, &script, gaps, err) != 0) {
        strbuf_free(&script);
        free(dir);
        return -1;
    }
    const char **env = xcalloc(job->env_count + 2, sizeof *env);
    char **owned = xcalloc(job->env_count + 2, sizeof *owned);
    size_t ne = 0;
    bool has_path = false;
    for (size_t i = 0; i < job->env_count; i++) {
        if (job->env[i].key == NULL)
            continue;
        has_path = has_path || strcmp(job->env[i].key, "PATH") == 0;
        owned[ne] = xasprintf("%s=%s", job->env[i].key, job->env[i].value ? job->env[i].value : "");
        env[ne] = owned[ne];
        ne++;
    }
    if (!has_path) {
        owned[ne] = xstrdup("PATH=" DEFAULT_PATH); /* slurmrestd gives none: srun needs it */
        env[ne] = owned[ne];
        ne++;
    }
    char *out_file = xasprintf("%s/slurm-%%j.out", dir);
    bool marks = false;
    for (size_t i = 0; i < job->fault_tolerance.rule_count; i++)
        marks = marks || job->fault_tolerance.rules[i].mark_node_unschedulable;
    struct slurm_submit sub = {
        .name = job->name,
        .partition = job->resource_pool.name,
        .qos = qos_for(c->qos, job),
        .exclude = exclude,
        .cwd = dir,
        .standard_output = out_file,
        .nodes = r->total_replicas,
        .gpus_per_node = spec ? spec->devices : 0,
        .cpus_per_task = spec ? spec->vcpus : 0,
        .memory_mb = spec ? spec->memory_mib : 0,
        /* Idle jobs come back after preemption; marking a node needs a requeue too. */
        .requeue = jobspec_is_idle(job) || c->idle_pool || marks,
        .env = env,
        .env_count = ne,
    };
    *body = slurm_submit_body(shape, &sub, strbuf_str(&script));
    for (size_t i = 0; i < ne; i++)
        free(owned[i]);
    free(owned);
    free(env);
    free(out_file);
    strbuf_free(&script);
    free(dir);
    return 0;
}

/* Makes dir (and logs/, workers/) for the job's user: when trainjob runs as root, chowned to it. */
static int make_job_dir(struct slurm *s, const char *dir, struct api_error *err)
{
    struct strbuf why = STRBUF_INIT;
    char *parent = xstrdup(dir);
    *strrchr(parent, '/') = '\0';
    int rc = file_mkdirs(parent, 0755, &why);
    free(parent);
    if (rc != 0) {
        api_error_set(err, 500, "JobsDir", "", "context '%s': jobs_dir: %s", s->context,
                      strbuf_str(&why));
        strbuf_free(&why);
        return -1;
    }
    strbuf_free(&why);
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        api_error_set(err, 500, "JobsDir", "", "cannot make %s: %s", dir, strerror(errno));
        return -1;
    }
    int dfd = open_dir_nofollow(dir);
    if (dfd < 0) {
        api_error_set(err, 500, "JobsDir", "", "%s is not a directory trainjob made: %s", dir,
                      strerror(errno));
        return -1;
    }
    (void)mkdirat(dfd, "logs", 0755);
    (void)mkdirat(dfd, "workers", 0755);
    struct passwd *pw = geteuid() == 0 ? getpwnam(s->user) : NULL;
    if (pw) {
        /* The job runs as the token's user and writes its events, records and logs here. */
        if (fchown(dfd, pw->pw_uid, pw->pw_gid) != 0 ||
            fchownat(dfd, "logs", pw->pw_uid, pw->pw_gid, AT_SYMLINK_NOFOLLOW) != 0 ||
            fchownat(dfd, "workers", pw->pw_uid, pw->pw_gid, AT_SYMLINK_NOFOLLOW) != 0) {
            api_error_set(err, 500, "JobsDir", "", "cannot give %s to user %s: %s", dir, s->user,
                          strerror(errno));
            close(dfd);
            return -1;
        }
    }
    close(dfd);
    return 0;
}

/* Appends one event of the driver's own (submit, stop) to the job's events.jsonl, as the job's user
 * owns it. */
static void append_event(struct slurm *s, const char *dir, const char *reason, const char *message)
{
    int dfd = open_dir_nofollow(dir);
    if (dfd < 0)
        return;
    int fd =
        openat(dfd, "events.jsonl", O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    close(dfd);
    if (fd < 0)
        return;
    struct stat st;
    struct passwd *pw = geteuid() == 0 ? getpwnam(s->user) : NULL;
    if (pw && fstat(fd, &st) == 0 && st.st_uid == 0)
        (void)fchown(fd, pw->pw_uid, pw->pw_gid); /* the supervisor appends to it as that user */
    char now[TIMEFMT_RFC3339_LEN];
    time_rfc3339(time_now_ms(), now);
    json_t *e = json_pack("{s:s, s:s, s:s, s:s}", "time", now, "type", "Normal", "reason", reason,
                          "message", message);
    char *line = json_dumps(e, JSON_COMPACT);
    struct strbuf sb = STRBUF_INIT;
    strbuf_adds(&sb, line);
    strbuf_addc(&sb, '\n');
    if (write(fd, sb.buf, sb.len) < 0) {
        /* best effort: the job's own history, not its state */
    }
    strbuf_free(&sb);
    free(line);
    json_decref(e);
    close(fd);
}

/* The pool and spec a job names, from the cluster's catalog; NULL spec with why in err. */
static const struct catalog_spec *job_spec(const struct catalog *cat, const struct jobspec *job,
                                           struct api_error *err)
{
    const char *pool_name = job->resource_pool.name;
    const struct catalog_pool *pool = pool_name ? catalog_pool(cat, pool_name) : NULL;
    struct strbuf names = STRBUF_INIT;
    if (pool == NULL) {
        for (size_t i = 0; i < cat->pool_count; i++)
            strbuf_addf(&names, "%s%s", i ? ", " : "", cat->pools[i].name);
        api_error_set(err, 400, "InvalidField", "resource_pool.name",
                      "%s%s%s: the pools are the cluster's partitions: %s",
                      pool_name ? "no partition '" : "required", pool_name ? pool_name : "",
                      pool_name ? "'" : "", strbuf_str(&names));
        strbuf_free(&names);
        return NULL;
    }
    const struct role *r = jobspec_worker(job);
    const char *spec_name = r && r->resource_spec_count ? r->resource_spec[0].name : NULL;
    const struct catalog_spec *spec = spec_name ? catalog_pool_spec(pool, spec_name) : NULL;
    if (spec == NULL) {
        for (size_t i = 0; i < pool->spec_count; i++)
            strbuf_addf(&names, "%s%s", i ? ", " : "", pool->specs[i].name);
        api_error_set(err, 400, "InvalidField", "roles[0].resource_spec[0].name",
                      "%s%s%s in partition %s: choose one of: %s",
                      spec_name ? "no resource spec '" : "required", spec_name ? spec_name : "",
                      spec_name ? "'" : "", pool->name, strbuf_str(&names));
    }
    strbuf_free(&names);
    return spec;
}

/*
 * The nodes the supervisor marked unschedulable for this job (state.json's
 * "marked"), as "n1,n3" for exclude_nodes; NULL when none. A name that is
 * not a plain node name is skipped: the file is the job's to write.
 */
static char *marked_nodes(const char *dir)
{
    struct strbuf sb = STRBUF_INIT, out = STRBUF_INIT;
    if (read_job_file(dir, NULL, "state.json", WORKER_FILE_MAX, false, &sb) == 0) {
        json_t *j = json_loadb(sb.buf ? sb.buf : "", sb.len, 0, NULL);
        size_t i;
        json_t *v;
        json_array_foreach(json_object_get(j, "marked"), i, v)
        {
            const char *n = json_string_value(v);
            if (i < 64 && safe_component(n))
                strbuf_addf(&out, "%s%s", out.len ? "," : "", n);
        }
        json_decref(j);
    }
    strbuf_free(&sb);
    if (out.len == 0) {
        strbuf_free(&out);
        return NULL;
    }
    return strbuf_detach(&out, NULL);
}

static int remove_at(int parent, const char *name, int depth);

/*
 * Submits job (create, or start = the stored job again): its directory,
 * job.json, the rendered script, POST job/submit. A name with a Slurm job
 * still alive is refused; create also refuses a name whose directory exists.
 */
static enum backend_status submit(struct backend *b, const struct jobspec *job, bool fresh,
                                  struct jobspec *out, struct api_error *err)
{
    struct slurm *s = driver(b);
    jobspec_init(out);
    char *dir = job_dir(b, job->name, err);
    if (dir == NULL)
        return BACKEND_REJECTED;
    struct found f;
    enum backend_status st = fetch_jobs(b, &f, err);
    if (st != BACKEND_OK) {
        free(dir);
        return st;
    }
    const struct slurm_job *alive = found_job(b, &f, job->name);
    struct stat sb;
    if (alive && !slurm_job_ended(alive)) {
        api_error_set(err, 409, "AlreadyExists", "name", "job '%s' is still %s as Slurm job %lld",
                      job->name, alive->state ? alive->state : "?", (long long)alive->id);
        st = BACKEND_REJECTED;
    } else if (fresh && lstat(dir, &sb) == 0) {
        api_error_set(err, 409, "AlreadyExists", "name", "already used in workspace %s (%s)",
                      b->target.workspace, dir);
        st = BACKEND_REJECTED;
    }
    found_free(&f);
    struct catalog cat;
    memset(&cat, 0, sizeof cat);
    const struct catalog_spec *spec = NULL;
    if (st == BACKEND_OK && (st = slurm_catalog(b, &cat, err)) == BACKEND_OK &&
        (spec = job_spec(&cat, job, err)) == NULL)
        st = BACKEND_REJECTED;
    json_t *body = NULL;
    struct site_conf site = {s->jobs_dir, b->target.workspace, s->launcher, s->qos, false};
    const struct catalog_pool *pool =
        catalog_pool(&cat, job->resource_pool.name ? job->resource_pool.name : "");
    site.idle_pool = pool && pool->type == POOL_IDLE;
    /* A start keeps away from the nodes the job marked (the supervisor's state.json). */
    char *exclude = fresh ? NULL : marked_nodes(dir);
    if (st == BACKEND_OK &&
        build_submit(s->shape, &site, job, spec, exclude, &body, NULL, err) != 0)
        st = BACKEND_REJECTED;
    free(exclude);
    bool made = false; /* this call made the directory (create: nothing was there) */
    if (st == BACKEND_OK && make_job_dir(s, dir, err) != 0)
        st = BACKEND_REJECTED;
    else if (st == BACKEND_OK)
        made = fresh;
    if (st == BACKEND_OK) {
        json_t *j = jobspec_to_json(job);
        char *text = json_dumps(j, JSON_INDENT(2));
        char *path = xasprintf("%s/job.json", dir);
        struct strbuf why = STRBUF_INIT;
        if (file_write_atomic(path, text, strlen(text), 0644, &why) != 0) {
            api_error_set(err, 500, "JobsDir", "", "%s", strbuf_str(&why));
            st = BACKEND_REJECTED;
        }
        strbuf_free(&why);
        free(path);
        free(text);
        json_decref(j);
    }
    json_t *reply = NULL;
    if (st == BACKEND_OK)
        st = rest(b, "POST", "job/submit", body, &reply, err);
    if (st == BACKEND_OK) {
        int64_t id = 0;
        slurm_number(json_object_get(reply, "job_id"), &id);
        jobspec_copy(out, job);
        free(out->id);
        out->id = xasprintf("%lld", (long long)id);
        free(out->uid);
        out->uid = xasprintf("slurm:%s/%s", b->target.workspace, job->name);
        out->state = JOB_STATE_QUEUEING;
        char *m = xasprintf("submitted as Slurm job %lld to partition %s: %d node(s), %s each",
                            (long long)id, job->resource_pool.name,
                            jobspec_worker(job)->total_replicas, spec->name);
        append_event(s, dir, fresh ? "Submitted" : "Started", m);
        free(m);
    } else if (made) {
        /* Nothing was submitted: the directory this call made goes again, so the name is free. */
        char *slash = strrchr(dir, '/');
        *slash = '\0';
        int pfd = open_dir_nofollow(dir);
        if (pfd >= 0) {
            (void)remove_at(pfd, slash + 1, 0);
            close(pfd);
        }
    }
    json_decref(reply);
    json_decref(body);
    catalog_free(&cat);
    free(dir);
    return st;
}

static enum backend_status slurm_create(struct backend *b, const struct jobspec *job,
                                        struct jobspec *out, struct api_error *err)
{
    if (job->name == NULL || *job->name == '\0') {
        jobspec_init(out);
        api_error_set(err, 400, "InvalidField", "name", "a Slurm job needs a name");
        return BACKEND_REJECTED;
    }
    struct jobspec j;
    jobspec_copy(&j, job);
    free(j.workspace_name);
    j.workspace_name = xstrdup(b->target.workspace);
    enum backend_status st = submit(b, &j, true, out, err);
    jobspec_free(&j);
    return st;
}

static enum backend_status slurm_start(struct backend *b, const char *name, struct jobspec *out,
                                       struct api_error *err)
{
    jobspec_init(out);
    char *dir = job_dir(b, name, err);
    if (dir == NULL)
        return BACKEND_REJECTED;
    struct jobspec job;
    jobspec_init(&job);
    enum backend_status st = BACKEND_OK;
    if (!stored_job(dir, &job)) {
        api_error_set(err, 404, "NotFound", "name",
                      "no job '%s' in workspace %s (no readable job.json in %s)", name,
                      b->target.workspace, dir);
        st = BACKEND_REJECTED;
    } else {
        free(job.name);
        job.name = xstrdup(name); /* the directory's, whatever the file says */
        st = submit(b, &job, false, out, err);
    }
    jobspec_free(&job);
    free(dir);
    return st;
}

static void batch_add(struct batch_result *out, const char *name, enum batch_outcome o,
                      const char *word)
{
    out->items = xreallocarray(out->items, out->count + 1, sizeof *out->items);
    out->items[out->count].name = xstrdup(name);
    out->items[out->count].outcome = o;
    out->items[out->count].result = xstrdup(word);
    out->count++;
}

/* DELETE job/<id>: Slurm's scancel — SIGTERM to every step, KillWait, then SIGKILL. */
static enum backend_status cancel(struct backend *b, int64_t id, struct api_error *err)
{
    char path[64];
    snprintf(path, sizeof path, "job/%lld", (long long)id);
    json_t *reply;
    enum backend_status st = rest(b, "DELETE", path, NULL, &reply, err);
    json_decref(reply);
    return st;
}

static enum backend_status slurm_stop(struct backend *b, const char *const *names, size_t n,
                                      struct batch_result *out, struct api_error *err)
{
    memset(out, 0, sizeof *out);
    struct found f;
    enum backend_status st = fetch_jobs(b, &f, err);
    for (size_t i = 0; st == BACKEND_OK && i < n; i++) {
        const struct slurm_job *sj = found_job(b, &f, names[i]);
        if (sj == NULL)
            batch_add(out, names[i], BATCH_NOT_FOUND, "NOT_FOUND");
        else if (slurm_job_ended(sj))
            batch_add(out, names[i], BATCH_SKIPPED, "SKIPPED");
        else if ((st = cancel(b, sj->id, err)) == BACKEND_OK) {
            batch_add(out, names[i], BATCH_DONE, "STOPPING");
            char *dir = slurm_jobdir(driver(b)->jobs_dir, b->target.workspace, names[i]);
            char *m = xasprintf("stop: Slurm job %lld cancelled (SIGTERM to every step, SIGKILL "
                                "after the cluster's KillWait)",
                                (long long)sj->id);
            if (dir)
                append_event(driver(b), dir, "Stopped", m);
            free(m);
            free(dir);
        }
    }
    found_free(&f);
    return st;
}

/* Removes name below parent and all it holds, never following a symlink; 0 when gone. */
static int remove_at(int parent, const char *name, int depth)
{
    if (unlinkat(parent, name, 0) == 0 || errno == ENOENT)
        return 0;
    if ((errno != EISDIR && errno != EPERM) || depth > 64)
        return -1;
    int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return -1;
    DIR *dp = fdopendir(fd);
    if (dp == NULL) {
        close(fd);
        return -1;
    }
    int rc = 0;
    struct dirent *e;
    while ((e = readdir(dp)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            rc |= remove_at(dirfd(dp), e->d_name, depth + 1);
    closedir(dp);
    if (unlinkat(parent, name, AT_REMOVEDIR) != 0 && errno != ENOENT)
        rc = -1;
    return rc;
}

/*
 * Waits (at most DELETE_WAIT_MS) for a cancelled job to leave Slurm's
 * running states, so its supervisor is gone before its directory is removed
 * and nothing of it is written there after.
 */
static void wait_ended(struct backend *b, int64_t id)
{
    char path[64];
    snprintf(path, sizeof path, "job/%lld", (long long)id);
    int64_t deadline = time_now_ms() + DELETE_WAIT_MS;
    while (time_now_ms() < deadline) {
        json_t *reply;
        struct api_error e;
        if (rest(b, "GET", path, NULL, &reply, &e) != BACKEND_OK)
            return;
        struct slurm_job j;
        struct strbuf why = STRBUF_INIT;
        bool ended = true;
        if (slurm_job_decode(driver(b)->shape, json_array_get(json_object_get(reply, "jobs"), 0),
                             &j, &why) == 0) {
            ended = slurm_job_ended(&j);
            slurm_job_free(&j);
        }
        strbuf_free(&why);
        json_decref(reply);
        if (ended)
            return;
        poll(NULL, 0, 200);
    }
}

static enum backend_status slurm_delete(struct backend *b, const char *const *names, size_t n,
                                        struct batch_result *out, struct api_error *err)
{
    memset(out, 0, sizeof *out);
    struct found f;
    enum backend_status st = fetch_jobs(b, &f, err);
    for (size_t i = 0; st == BACKEND_OK && i < n; i++) {
        char *dir = job_dir(b, names[i], err);
        if (dir == NULL) {
            batch_add(out, names[i], BATCH_NOT_FOUND, "NOT_FOUND");
            continue;
        }
        const struct slurm_job *sj = found_job(b, &f, names[i]);
        if (sj && !slurm_job_ended(sj) && (st = cancel(b, sj->id, err)) == BACKEND_OK)
            wait_ended(b, sj->id);
        struct stat s;
        if (st == BACKEND_OK && sj == NULL && lstat(dir, &s) != 0) {
            batch_add(out, names[i], BATCH_NOT_FOUND, "NOT_FOUND");
        } else if (st == BACKEND_OK) {
            char *slash = strrchr(dir, '/');
            *slash = '\0';
            int pfd = open_dir_nofollow(dir);
            if (pfd >= 0 && remove_at(pfd, slash + 1, 0) == 0) {
                batch_add(out, names[i], BATCH_DONE, "DELETING");
            } else {
                api_error_set(err, 500, "JobsDir", "", "cannot remove %s/%s: %s", dir, slash + 1,
                              strerror(errno));
                st = BACKEND_REJECTED;
            }
            if (pfd >= 0)
                close(pfd);
        }
        free(dir);
    }
    found_free(&f);
    return st;
}

/* ---- calls through the loop ------------------------------------------------- */

/*
 * The TUI's calls: slurmrestd answers a call in tens of milliseconds, so a
 * call is made at once and its reply handed back from the loop (never from
 * inside send). A log is followed on the loop's timer (the file read every
 * FOLLOW_POLL_MS); there is no watch stream (the TUI polls the list, one
 * GET /jobs per refresh).
 */
static int collect_data(void *ctx, const char *data, size_t len)
{
    return backend_call_data(ctx, data, len);
}

static void call_end(void *ctx)
{
    struct backend_call *c = ctx;
    c->timer = 0;
    backend_call_done(c);
}

/* A followed log's next step, from the loop: its data to the caller, then again or the end. */
static void follow_tick(void *ctx)
{
    struct backend_call *c = ctx;
    c->timer = 0;
    enum backend_status st;
    if (log_step(c->driver_data, collect_data, c, &st, &c->reply.err) || c->cancelled) {
        c->reply.status = st;
        backend_call_done(c);
        return;
    }
    c->timer = loop_add_timer(http_multi_loop(c->m), FOLLOW_POLL_MS, follow_tick, c);
}

static void slurm_send(struct backend *b, struct http_multi *m, struct backend_call *c)
{
    const struct backend_request *rq = &c->rq;
    struct backend_reply *r = &c->reply;
    struct api_error *err = &r->err;
    switch (rq->op) {
    case BACKEND_OP_GET:
        r->status = slurm_get(b, rq->name, &r->job, err);
        break;
    case BACKEND_OP_LIST:
        r->status = slurm_list(b, &rq->query, &r->list, err);
        break;
    case BACKEND_OP_WORKERS:
        r->status = slurm_workers(b, rq->name, &r->workers, err);
        break;
    case BACKEND_OP_EVENTS:
        r->status = slurm_events(b, rq->name, &r->events, err);
        break;
    case BACKEND_OP_STOP:
        r->status = slurm_stop(b, rq->names, rq->count, &r->batch, err);
        break;
    case BACKEND_OP_START:
        r->status = slurm_start(b, rq->name, &r->job, err);
        break;
    case BACKEND_OP_DELETE:
        r->status = slurm_delete(b, rq->names, rq->count, &r->batch, err);
        break;
    case BACKEND_OP_CATALOG:
        r->status = slurm_catalog(b, &r->catalog, err);
        break;
    case BACKEND_OP_CREATE:
        r->status = slurm_create(b, rq->job, &r->job, err);
        break;
    case BACKEND_OP_LOGS: {
        /* Followed on the loop's timer: the file is read every FOLLOW_POLL_MS. */
        struct log_follow *f = log_follow_new(b, rq->name, rq->worker, rq->tail, rq->follow, err);
        if (f == NULL) {
            r->status = BACKEND_REJECTED;
            break;
        }
        c->driver_data = f;
        c->driver_free = log_follow_free;
        c->timer = loop_add_timer(http_multi_loop(m), 0, follow_tick, c);
        return;
    }
    case BACKEND_OP_WATCH:
        r->status = backend_unsupported(b, "watching jobs", err);
        break;
    default:
        r->status = backend_unsupported(b, "this request", err);
        break;
    }
    c->timer = loop_add_timer(http_multi_loop(m), 0, call_end, c);
}

static void slurm_free(struct backend *b)
{
    struct slurm *s = driver(b);
    http_client_free(s->client);
    free(s->context);
    free(s->user);
    free(s->token_file);
    free(s->token_command);
    if (s->token) {
        memset(s->token, 0, strlen(s->token));
        free(s->token);
    }
    free(s->jobs_dir);
    free(s->launcher);
    json_decref(s->qos);
    free(s);
}

static const struct backend_ops slurm_ops = {
    .name = "slurm",
    .catalog = slurm_catalog,
    .create = slurm_create,
    .get = slurm_get,
    .list = slurm_list,
    .workers = slurm_workers,
    .events = slurm_events,
    .logs = slurm_logs,
    .stop = slurm_stop,
    .start = slurm_start,
    .remove = slurm_delete,
    .send = slurm_send,
    .free = slurm_free,
};

struct backend *slurm_backend_new(struct http_client *client, const struct context *c,
                                  struct strbuf *err)
{
    if (c->user == NULL || (c->token_file == NULL && c->token_command == NULL) ||
        c->jobs_dir == NULL) {
        strbuf_addf(err,
                    "context '%s': driver slurm needs user, token_file or token_command, "
                    "and jobs_dir",
                    c->name);
        http_client_free(client);
        return NULL;
    }
    struct slurm *s = xcalloc(1, sizeof *s);
    s->client = client;
    s->context = xstrdup(c->name);
    s->user = xstrdup(c->user);
    s->token_file = c->token_file ? xstrdup(c->token_file) : NULL;
    s->token_command = c->token_command ? xstrdup(c->token_command) : NULL;
    s->jobs_dir = xstrdup(c->jobs_dir);
    for (size_t n = strlen(s->jobs_dir); n > 1 && s->jobs_dir[n - 1] == '/'; n--)
        s->jobs_dir[n - 1] = '\0'; /* Slurm reports the directory as given: one spelling */
    s->launcher = c->launcher ? xstrdup(c->launcher) : NULL;
    s->qos = c->qos ? json_deep_copy(c->qos) : NULL;
    struct backend_target t = {c->subscription, c->resource_group, c->zone, c->workspace};
    return backend_new(&slurm_ops, s, &t, http_client_endpoint(client));
}

/* ---- render ----------------------------------------------------------------- */

int slurm_render(const struct jobspec *job, const struct context *c, const char *version,
                 const struct catalog *cat, struct strbuf *out, struct strbuf *err)
{
    const struct slurm_shape *shape = slurm_shape_find(version ? version : "v0.0.38");
    if (shape == NULL) {
        strbuf_addf(err, "no Slurm API version '%s' (trainjob speaks v0.0.38 and v0.0.40)",
                    version);
        return -1;
    }
    const char *jobs_dir = c && c->jobs_dir ? c->jobs_dir : "/shared/trainjob/jobs";
    const char *workspace = job->workspace_name ? job->workspace_name
                            : c && c->workspace ? c->workspace
                                                : "default";
    struct site_conf site = {jobs_dir, workspace, c ? c->launcher : NULL, c ? c->qos : NULL, false};
    /* The spec as its name says ("gpu-2": 2 GPUs); CPUs and memory come from the cluster. */
    struct catalog_spec spec;
    memset(&spec, 0, sizeof spec);
    const struct role *r = jobspec_worker(job);
    const char *sn = r && r->resource_spec_count ? r->resource_spec[0].name : NULL;
    const struct catalog_pool *pool =
        cat && job->resource_pool.name ? catalog_pool(cat, job->resource_pool.name) : NULL;
    const struct catalog_spec *known = pool && sn ? catalog_pool_spec(pool, sn) : NULL;
    if (known)
        spec = *known;
    else if (sn && strncmp(sn, "gpu-", 4) == 0)
        spec.devices = atoi(sn + 4);
    if (pool)
        site.idle_pool = pool->type == POOL_IDLE;
    struct strbuf gaps = STRBUF_INIT;
    struct api_error e;
    json_t *body = NULL;
    if (build_submit(shape, &site, job, &spec, NULL, &body, &gaps, &e) != 0) {
        strbuf_addf(err, "%s%s%s", e.field[0] ? e.field : "", e.field[0] ? ": " : "", e.message);
        strbuf_free(&gaps);
        return -1;
    }
    char *text = json_dumps(body, JSON_INDENT(2));
    strbuf_addf(out, "POST /slurm/%s/job/submit\n", shape->version);
    strbuf_addf(out, "X-SLURM-USER-NAME: %s\nX-SLURM-USER-TOKEN: <the context's token>\n\n",
                c && c->user ? c->user : "<user>");
    strbuf_adds(out, text);
    strbuf_adds(out, "\n\n# the batch script (the \"script\" above):\n");
    strbuf_adds(out, json_string_value(json_object_get(body, "script")));
    strbuf_adds(out, "\n# what Slurm cannot honour as written:\n");
    if (gaps.len == 0)
        strbuf_adds(out, "(nothing: every rule of the job is honoured)\n");
    else
        strbuf_add(out, gaps.buf, gaps.len);
    free(text);
    json_decref(body);
    strbuf_free(&gaps);
    return 0;
}
