/*
 * cmd_jobs: the verbs that act on a backend's jobs — submit, logs, stop,
 * start, delete (get and describe are cli/cmd_get.c, cli/cmd_describe.c).
 *
 * Each verb resolves the context (api/context: --context, --endpoint,
 * $TRAINJOB_ENDPOINT, config.yaml or the built-in local engine), opens its
 * backend (api/backend) and prints what came back (cli/output), every
 * string from the server sanitized. Exit status (util/exitstatus.h): 0 the
 * job is in the state asked for, also when it already was (kubectl's
 * "unchanged"); 1 the server said no: not found, a state from which the
 * wanted one cannot be reached, an invalid job file; 2 usage; 3 the server
 * cannot be reached.
 */
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api/backend.h"
#include "api/context.h"
#include "api/docpos.h"
#include "api/finding.h"
#include "api/http_multi.h"
#include "api/jobfile.h"
#include "api/jobspec_defaults.h"
#include "api/jobspec_json.h"
#include "api/logframes.h"
#include "api/yamltree.h"
#include "cli/cli.h"
#include "cli/output.h"
#include "util/loop.h"
#include "util/sizefmt.h"
#include "util/strbuf.h"
#include "util/timefmt.h"
#include "util/utf8.h"
#include "util/xalloc.h"

static const char submit_usage[] =
    "usage: trainjob submit -f FILE [--workspace WS]\n"
    "Checks the job file against every rule of the form (findings as FILE:LINE:COL,\n"
    "nothing is sent while there are errors), then creates the job in the workspace\n"
    "chosen (--workspace, else the context's); a file naming another is refused.\n"
    "The file is read once; -f - reads it from standard input.\n";

static const char apply_usage[] =
    "usage: trainjob apply -f FILE [--workspace WS]\n"
    "As kubectl users type it: a job of that name that does not exist yet is\n"
    "submitted (as `submit -f FILE`). trainjob does not update jobs in place (a\n"
    "running job's workers cannot take a new spec): for a job that exists, apply\n"
    "lists the fields the file would change, changes nothing and exits 1; delete\n"
    "the job and apply again, or submit the file under another name.\n"
    "(`create -f FILE` is `submit -f FILE`.)\n";

/*
 * The fields of want (a job file as JSON) whose values differ from have (the
 * job on the server), as "  path: old → new" lines; fields the file leaves
 * out are the server's defaults and are not compared (in objects, and in the
 * elements of lists as long as the file's, so roles[0].image_path).
 */
static size_t apply_diff(struct strbuf *out, const char *path, json_t *want, json_t *have)
{
    if (json_is_object(want) && json_is_object(have)) {
        size_t n = 0;
        const char *key;
        json_t *v;
        json_object_foreach(want, key, v)
        {
            struct strbuf sub = STRBUF_INIT;
            strbuf_addf(&sub, "%s%s%s", path, *path ? "." : "", key);
            n += apply_diff(out, strbuf_str(&sub), v, json_object_get(have, key));
            strbuf_free(&sub);
        }
        return n;
    }
    if (json_is_array(want) && json_is_array(have) &&
        json_array_size(want) == json_array_size(have)) {
        size_t n = 0;
        for (size_t i = 0; i < json_array_size(want); i++) {
            struct strbuf sub = STRBUF_INIT;
            strbuf_addf(&sub, "%s[%zu]", path, i);
            n +=
                apply_diff(out, strbuf_str(&sub), json_array_get(want, i), json_array_get(have, i));
            strbuf_free(&sub);
        }
        return n;
    }
    if (have != NULL && json_equal(want, have))
        return 0;
    char *a = have ? json_dumps(have, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
    char *b = json_dumps(want, JSON_ENCODE_ANY | JSON_COMPACT);
    strbuf_adds(out, "  ");
    cli_clean(out, path);
    strbuf_adds(out, ": ");
    cli_clean(out, a ? a : "(not set)");
    strbuf_adds(out, " → ");
    cli_clean(out, b ? b : "?");
    strbuf_addc(out, '\n');
    free(a);
    free(b);
    return 1;
}

/* apply of a job that exists: what would change, and that nothing did. */
static int apply_existing(const struct jobspec *file_job, const struct jobspec *have,
                          const char *file, FILE *err)
{
    json_t *want = jobspec_to_json(file_job), *cur = jobspec_to_json(have);
    struct strbuf diff = STRBUF_INIT, line = STRBUF_INIT;
    size_t n = apply_diff(&diff, "", want, cur);
    json_decref(want);
    json_decref(cur);
    strbuf_adds(&line, "trainjob apply: job ");
    cli_clean(&line, have->name ? have->name : file_job->name);
    if (n == 0)
        strbuf_adds(&line, " exists and matches the file: nothing to do\n");
    else
        strbuf_addf(&line, " exists; %s would change %zu field%s:\n", file, n, n == 1 ? "" : "s");
    fputs(strbuf_str(&line), err);
    if (n == 0) {
        strbuf_free(&diff);
        strbuf_free(&line);
        return EXIT_OK;
    }
    fputs(strbuf_str(&diff), err);
    strbuf_reset(&line);
    strbuf_adds(&line, "trainjob does not update jobs in place: nothing was changed. "
                       "Run `trainjob delete ");
    cli_clean(&line, have->name ? have->name : file_job->name);
    strbuf_addf(&line, "` and apply again, or submit the file under another name.\n");
    fputs(strbuf_str(&line), err);
    strbuf_free(&diff);
    strbuf_free(&line);
    return EXIT_INVALID;
}

static int submit_run(const struct cli_globals *g, int argc, char **argv, FILE *out, FILE *err,
                      bool apply);

/* `submit -f FILE`: validate offline (exit 1, nothing sent), then create. */
int cmd_submit(const struct cli_globals *g, int argc, char **argv, FILE *out, FILE *err)
{
    return submit_run(g, argc, argv, out, err, false);
}

/* `apply -f FILE`: submit, or for a job that exists say what would change. */
int cmd_apply(const struct cli_globals *g, int argc, char **argv, FILE *out, FILE *err)
{
    return submit_run(g, argc, argv, out, err, true);
}

static int submit_run(const struct cli_globals *g, int argc, char **argv, FILE *out, FILE *err,
                      bool apply)
{
    static const struct option longopts[] = {
        {"filename", required_argument, NULL, 'f'},
        {"help", no_argument, NULL, 'h'},
        CLI_GLOBAL_OPTIONS,
        {NULL, 0, NULL, 0},
    };
    struct cli_globals local = *g;
    const char *file = NULL;
    int c;
    optind = 0;
    opterr = 0;
    while ((c = cli_next_option(argc, argv, "f:h", longopts, &local)) != -1) {
        if (c == 'f') {
            file = optarg;
        } else if (c == 'h') {
            fputs(apply ? apply_usage : submit_usage, out);
            return EXIT_OK;
        } else if (c != 0) {
            return cli_bad_option(argv[0], "f:h", argv, err);
        }
    }
    if (file == NULL && optind == argc - 1)
        file = argv[optind++]; /* `submit FILE` reads as meant */
    if (file == NULL || optind != argc) {
        fputs(apply ? apply_usage : submit_usage, err);
        return EXIT_USAGE;
    }

    /*
     * The file read once (standard input too) and checked as `validate
     * --catalog` does: every rule of the form and of the backend's catalog,
     * all said at once; a file with errors of its own is said without
     * asking any server, and nothing is sent while the file has errors.
     */
    struct job_check *jc = job_check_new(&local, true, true);
    struct jobfile jf;
    struct findings fs = FINDINGS_INIT;
    jobfile_init(&jf);
    int rc = job_check_file(jc, file, &jf, &fs, err);
    if (rc != EXIT_OK)
        goto out;
    /* The session the catalog came from (open even when the backend has none to give). */
    struct backend *b = job_check_session(jc)->b;
    struct strbuf why = STRBUF_INIT;
    if (backend_job_workspace(b, &jf.job, &why) != 0) {
        fprintf(err, "trainjob: %s: %s\n", file, strbuf_str(&why));
        strbuf_free(&why);
        rc = EXIT_USAGE;
        goto out;
    }
    strbuf_free(&why);
    /* ACP wants the name in the query; every other default is the server's to fill (it
     * knows, from its catalog, whether a pool is idle and so which quota type applies). */
    if (jf.job.name == NULL)
        jf.job.name = jobspec_generate_name(jf.job.framework);

    struct jobspec created;
    struct api_error e;
    if (apply) {
        struct jobspec have;
        if (backend_get(b, jf.job.name, &have, &e) == BACKEND_OK) {
            rc = apply_existing(&jf.job, &have, file, err);
            jobspec_free(&have);
            goto out;
        }
    }
    enum backend_status st = backend_create(b, &jf.job, &created, &e);
    if (st != BACKEND_OK) {
        rc = cli_failed(err, st, &e, true);
    } else {
        struct strbuf line = STRBUF_INIT;
        strbuf_adds(&line, "job ");
        cli_clean(&line, created.name ? created.name : jf.job.name);
        strbuf_addf(&line, " created (%s)",
                    enum_name_or(&job_state_names, (int)created.state, created.state_other));
        fprintf(out, "%s\n", strbuf_str(&line));
        strbuf_free(&line);
        jobspec_free(&created);
    }
out:
    job_check_free(jc);
    findings_free(&fs);
    jobfile_free(&jf);
    return rc;
}

/* ---- logs --------------------------------------------------------------- */

static const char logs_usage[] =
    "usage: trainjob logs NAME [-w WORKER | -a] [-f] [--tail N] [-p] [--timestamps] [--since D]\n"
    "Prints a worker's log (by default the job's first worker, e.g. master-0).\n"
    "  -w, --worker WORKER  that worker's log (-w names a worker here; to watch the\n"
    "                       log as get -w watches a list, use -f, as kubectl logs -f)\n"
    "  -a, --all-workers    every worker's log, one after another, each line after\n"
    "                       [WORKER] (the job screen's `a` interleaves them live)\n"
    "  -f, --follow         follow the log until the job ends (or Ctrl-C)\n"
    "  --tail N             start N lines from the end\n"
    "  -p, --previous       the previous attempt's log: what a restarted worker wrote\n"
    "                       before its last restart (attempts start at the\n"
    "                       '--- TIME: WORKER restarted on NODE (attempt N) ---' lines)\n"
    "  --timestamps         each line after the time it was written (RFC 3339, UTC)\n"
    "  --since D|TIME       only lines written in the last D (90s, 10m, 2h30m, 1d) or\n"
    "                       after TIME (RFC 3339); both need a backend that sends\n"
    "                       the times of lines (trainjobd)\n";

/*
 * Log text on its way out: into a pipe or file as it came; to a terminal
 * line by line, sanitized (an escape sequence cut between two reads must
 * not slip through in halves).
 */
struct log_out {
    FILE *out;
    bool tty;
    struct strbuf pending; /* the start of a line not yet ended */
    char last;             /* the last byte written (not a terminal) */
};

/* Writes the complete lines of pending (all of it when flush), sanitized. */
static void log_drain(struct log_out *lo, bool flush)
{
    size_t end = lo->pending.len;
    if (!flush) {
        while (end > 0 && lo->pending.buf[end - 1] != '\n')
            end--;
    }
    if (end == 0)
        return;
    struct strbuf clean = STRBUF_INIT;
    utf8_sanitize(&clean, lo->pending.buf, end, UTF8_KEEP_NEWLINE | UTF8_KEEP_TAB);
    fwrite(clean.buf ? clean.buf : "", 1, clean.len, lo->out);
    fflush(lo->out);
    strbuf_free(&clean);
    size_t rest = lo->pending.len - end;
    memmove(lo->pending.buf, lo->pending.buf + end, rest);
    strbuf_truncate(&lo->pending, rest);
}

/* backend_data_fn for logs: raw to a pipe, sanitized lines to a terminal. */
static int on_log(void *ctx, const char *data, size_t len)
{
    struct log_out *lo = ctx;
    if (!lo->tty) {
        if (len > 0)
            lo->last = data[len - 1];
        fwrite(data, 1, len, lo->out);
        fflush(lo->out);
        return ferror(lo->out) ? 1 : 0;
    }
    strbuf_add(&lo->pending, data, len);
    log_drain(lo, lo->pending.len > 65536); /* a very long line goes out in pieces */
    return ferror(lo->out) ? 1 : 0;
}

/* A gap in a followed log, said on a line of its own where it happened. */
static int on_log_skip(void *ctx, uint64_t bytes)
{
    struct log_out *lo = ctx;
    struct strbuf line = STRBUF_INIT;
    strbuf_adds(&line, "… ");
    if (bytes)
        sizefmt_add_whole(&line, bytes);
    else
        strbuf_adds(&line, "some output");
    strbuf_adds(&line, " skipped (the log rotated faster than it was read) …\n");
    bool mid_line = lo->tty ? lo->pending.len > 0 : lo->last != '\n';
    if (mid_line)
        on_log(lo, "\n", 1);
    int rc = on_log(lo, line.buf, line.len);
    strbuf_free(&line);
    return rc;
}

static int on_log_frames(void *ctx, const char *data, size_t len)
{
    return logframes_feed(ctx, data, len);
}

static void pause_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* How long `logs -f` keeps trying to reach an engine that went away. */
#define FOLLOW_RECONNECT_MS 60000

/*
 * `logs -f`: the log in frames, so that when the engine restarts (or the
 * connection is cut) it reconnects and continues at the byte where it was,
 * until the log is complete (the E frame), or the engine stays away for
 * FOLLOW_RECONNECT_MS.
 */
static int follow_log(struct session *s, const char *name, const char *worker, long tail,
                      struct log_out *lo, FILE *err)
{
    struct logframes lf;
    logframes_init(&lf, on_log, on_log_skip, lo);
    char cursor[64];
    const char *from = NULL;
    int rc = EXIT_OK;
    int64_t away_since = 0;
    long pause = 100;
    bool told = false;
    for (;;) {
        struct api_error e;
        memset(&e, 0, sizeof e);
        logframes_reset_stream(&lf);
        uint64_t before = lf.received;
        enum backend_status st =
            backend_logs_framed(s->b, name, worker, tail, from, on_log_frames, &lf, &e);
        if (lf.broken) {
            fprintf(err, "trainjob: the engine's log stream is not understood\n");
            rc = EXIT_USAGE;
            break;
        }
        if (lf.ended)
            break;
        if (st == BACKEND_REJECTED && e.status == 501 && from == NULL && lf.received == 0) {
            /* no resumable log (real ACP: its Monitor service, polled by the driver) */
            st = backend_logs(s->b, name, worker, tail, true, on_log, lo, &e);
            if (st != BACKEND_OK)
                rc = cli_failed(err, st, &e, false);
            break;
        }
        if (st == BACKEND_REJECTED) {
            rc = cli_failed(err, st, &e, false);
            break;
        }
        /* Cut short: an engine restart, or the connection dropped. */
        if (logframes_cursor(&lf, cursor, sizeof cursor))
            from = cursor;
        bool progressed = lf.received != before;
        int64_t now = time_now_ms();
        if (progressed || away_since == 0) {
            away_since = now;
            pause = 100;
        } else if (now - away_since > FOLLOW_RECONNECT_MS) {
            rc = cli_failed(err, st, &e, false);
            break;
        }
        if (!progressed && !told) {
            fprintf(err, "trainjob: lost the engine%s%s; reconnecting\n", e.message[0] ? ": " : "",
                    e.message);
            told = true;
        }
        if (progressed)
            told = false;
        pause_ms(pause);
        if (pause < 2000)
            pause *= 2;
    }
    logframes_free(&lf);
    return rc;
}

/* `logs NAME`: the first worker unless -w; -f follows until the job ends. */
/*
 * --timestamps and --since: the log read in frames with times (trainjobd's T
 * frames: when each piece was written), through the loop as the job
 * screen reads it. Each line is said after the time its first byte was
 * written; --since drops the lines written before. Without -f the read ends
 * when the engine says it is caught up.
 */
struct timed {
    struct logframes lf;
    struct log_out *lo;
    struct loop *lp;
    bool follow, timestamps;
    int64_t since_ms; /* 0: every line */
    bool at_start;    /* the next byte begins a line */
    bool skipping;    /* the line being read is older than since_ms */
    bool done;
    struct backend_reply reply;
};

static int timed_data(void *ctx, const char *data, size_t len)
{
    struct timed *t = ctx;
    while (len > 0) {
        if (t->at_start) {
            int64_t ms = t->lf.have_time ? (int64_t)t->lf.time_ms : 0;
            t->skipping = t->since_ms > 0 && ms > 0 && ms < t->since_ms;
            if (t->timestamps && !t->skipping) {
                char stamp[TIMEFMT_RFC3339_LEN];
                if (ms > 0)
                    time_rfc3339(ms, stamp);
                else
                    snprintf(stamp, sizeof stamp, "-");
                on_log(t->lo, stamp, strlen(stamp));
                on_log(t->lo, " ", 1);
            }
            t->at_start = false;
        }
        const char *nl = memchr(data, '\n', len);
        size_t n = nl ? (size_t)(nl - data) + 1 : len;
        if (!t->skipping && on_log(t->lo, data, n))
            return 1;
        t->at_start = nl != NULL;
        data += n;
        len -= n;
    }
    return 0;
}

static int timed_frames(void *ctx, const char *data, size_t len)
{
    struct timed *t = ctx;
    int rc = logframes_feed(&t->lf, data, len);
    if (rc == 0 && !t->follow && t->lf.caught_up)
        return 1; /* all the log had: a read without -f ends here */
    return rc;
}

static void timed_done(void *ctx, struct backend_reply *r)
{
    struct timed *t = ctx;
    t->done = true;
    t->reply.status = r->status;
    t->reply.err = r->err;
    loop_stop(t->lp);
}

/* "90s", "10m", "2h30m", "1d" (a duration before now) or an RFC 3339 time: unix ms, or -1. */
static int64_t since_ms_of(const char *arg)
{
    int64_t at = time_parse_rfc3339(arg);
    if (at >= 0)
        return at;
    int64_t total = 0;
    const char *p = arg;
    if (*p == '\0')
        return -1;
    while (*p) {
        char *end;
        errno = 0;
        long long v = strtoll(p, &end, 10);
        if (end == p || v < 0 || errno || v > 1000000000)
            return -1;
        int64_t unit = *end == 's'   ? 1000
                       : *end == 'm' ? 60000
                       : *end == 'h' ? 3600000
                       : *end == 'd' ? 86400000
                                     : 0;
        if (unit == 0)
            return -1;
        total += (int64_t)v * unit;
        p = end + 1;
    }
    return time_now_ms() - total;
}

static int timed_log(struct session *s, const char *name, const char *worker, long tail,
                     bool follow, bool timestamps, int64_t since_ms, struct log_out *lo, FILE *err)
{
    if (s->b->ops->logs_framed == NULL) {
        fprintf(err,
                "trainjob logs: --timestamps and --since need the times of each line, "
                "which this backend (%s) does not send; use --tail N, or --previous\n",
                s->b->ops->name);
        return EXIT_USAGE;
    }
    struct timed t = {.lo = lo,
                      .follow = follow,
                      .timestamps = timestamps,
                      .since_ms = since_ms,
                      .at_start = true};
    logframes_init(&t.lf, timed_data, on_log_skip, &t);
    t.lp = loop_new();
    struct http_multi *m = http_multi_new(t.lp);
    struct backend_request rq = {.op = BACKEND_OP_LOGS,
                                 .name = name,
                                 .worker = worker,
                                 .tail = tail,
                                 .follow = true,
                                 .framed = true,
                                 .times = true};
    struct backend_call *call = backend_send(s->b, m, &rq, timed_done, NULL, timed_frames, &t);
    while (!t.done && call != NULL)
        loop_run_once(t.lp, 1000);
    int rc = EXIT_OK;
    if (t.lf.broken) {
        fprintf(err, "trainjob: the engine's log stream is not understood\n");
        rc = EXIT_USAGE;
    } else if (t.reply.status != BACKEND_OK && !(t.lf.caught_up || t.lf.ended)) {
        rc = cli_failed(err, t.reply.status, &t.reply.err, false);
    }
    http_multi_free(m);
    loop_free(t.lp);
    logframes_free(&t.lf);
    return rc;
}

/* Says that job name has no worker to read a log of; EXIT_INVALID. */
static int no_workers_yet(const char *name, FILE *err)
{
    struct strbuf line = STRBUF_INIT;
    strbuf_adds(&line, "trainjob: job ");
    cli_clean(&line, name);
    strbuf_adds(&line, " has no workers yet: it has not been scheduled");
    fprintf(err, "%s\n", strbuf_str(&line));
    strbuf_free(&line);
    return EXIT_INVALID;
}

/* Whether a line of a log is the marker the engine writes before each attempt. */
static bool attempt_marker(const char *line, size_t len)
{
    static const char tail[] = ") ---\n";
    size_t tn = sizeof tail - 1;
    if (len < 4 + tn || memcmp(line, "--- ", 4) != 0 || memcmp(line + len - tn, tail, tn) != 0)
        return false;
    return memmem(line, len, " (attempt ", 10) != NULL;
}

/*
 * --previous: the log is read through, keeping the attempt before the last
 * one (the log is bounded by the engine's rotation, so are both parts).
 */
struct attempts {
    struct strbuf line; /* a line not ended yet */
    struct strbuf prev; /* the attempt before the current one, its marker first */
    struct strbuf cur;  /* the attempt being read */
    int markers;
};

static void attempts_line(struct attempts *a, const char *line, size_t len)
{
    if (attempt_marker(line, len)) {
        struct strbuf t = a->prev;
        a->prev = a->cur;
        a->cur = t;
        strbuf_reset(&a->cur);
        a->markers++;
    }
    strbuf_add(&a->cur, line, len);
}

static int on_log_attempts(void *ctx, const char *data, size_t len)
{
    struct attempts *a = ctx;
    while (len > 0) {
        const char *nl = memchr(data, '\n', len);
        size_t n = nl ? (size_t)(nl - data) + 1 : len;
        strbuf_add(&a->line, data, n);
        if (nl) {
            attempts_line(a, a->line.buf, a->line.len);
            strbuf_reset(&a->line);
        }
        data += n;
        len -= n;
    }
    return 0;
}

/* --all-workers: each line after "[WORKER] ". */
struct prefixed {
    struct log_out *lo;
    const char *worker;
    bool at_start; /* the next byte begins a line */
};

static int on_log_prefixed(void *ctx, const char *data, size_t len)
{
    struct prefixed *px = ctx;
    while (len > 0) {
        if (px->at_start) {
            struct strbuf head = STRBUF_INIT;
            strbuf_addf(&head, "[%s] ", px->worker);
            int rc = on_log(px->lo, head.buf, head.len);
            strbuf_free(&head);
            if (rc)
                return rc;
            px->at_start = false;
        }
        const char *nl = memchr(data, '\n', len);
        size_t n = nl ? (size_t)(nl - data) + 1 : len;
        if (on_log(px->lo, data, n))
            return 1;
        px->at_start = nl != NULL;
        data += n;
        len -= n;
    }
    return 0;
}

/* `logs NAME -a`: every worker's log in turn, prefixed; the first failure is the status. */
static int all_workers_logs(struct session *s, const char *name, long tail, struct log_out *lo,
                            FILE *err)
{
    struct worker_list wl;
    struct api_error e;
    enum backend_status st = backend_workers(s->b, name, &wl, &e);
    if (st != BACKEND_OK)
        return cli_failed(err, st, &e, false);
    int rc = EXIT_OK;
    if (wl.count == 0) {
        rc = no_workers_yet(name, err);
    }
    for (size_t i = 0; i < wl.count && rc == EXIT_OK; i++) {
        if (wl.workers[i].name == NULL)
            continue;
        struct prefixed px = {lo, wl.workers[i].name, true};
        st = backend_logs(s->b, name, wl.workers[i].name, tail, false, on_log_prefixed, &px, &e);
        if (st != BACKEND_OK)
            rc = cli_failed(err, st, &e, false);
        else if (!px.at_start)
            on_log(lo, "\n", 1); /* a last line without its newline */
    }
    worker_list_free(&wl);
    return rc;
}

/* `logs NAME -p`: the attempt before the last, or exit 1 when there was one attempt. */
static int previous_log(struct session *s, const char *name, const char *worker, struct log_out *lo,
                        FILE *err)
{
    struct attempts a = {STRBUF_INIT, STRBUF_INIT, STRBUF_INIT, 0};
    struct api_error e;
    int rc = EXIT_OK;
    enum backend_status st = backend_logs(s->b, name, worker, -1, false, on_log_attempts, &a, &e);
    if (st != BACKEND_OK) {
        rc = cli_failed(err, st, &e, false);
    } else {
        if (a.line.len)
            attempts_line(&a, a.line.buf, a.line.len);
        if (a.markers < 2) {
            struct strbuf line = STRBUF_INIT;
            strbuf_adds(&line, "trainjob logs: ");
            cli_clean(&line, worker);
            strbuf_adds(&line, " of job ");
            cli_clean(&line, name);
            strbuf_addf(&line, " has no previous attempt: %s",
                        a.markers == 1 ? "it has not been restarted"
                                       : "its log has no attempt lines");
            fprintf(err, "%s\n", strbuf_str(&line));
            strbuf_free(&line);
            rc = EXIT_INVALID;
        } else {
            on_log(lo, a.prev.buf, a.prev.len);
        }
    }
    strbuf_free(&a.line);
    strbuf_free(&a.prev);
    strbuf_free(&a.cur);
    return rc;
}

int cmd_logs(const struct cli_globals *g, int argc, char **argv, FILE *out, FILE *err)
{
    static const struct option longopts[] = {
        {"worker", required_argument, NULL, 'w'},
        {"follow", no_argument, NULL, 'f'},
        {"tail", required_argument, NULL, 'n'},
        {"previous", no_argument, NULL, 'p'},
        {"all-workers", no_argument, NULL, 'a'},
        {"timestamps", no_argument, NULL, 'T'},
        {"since", required_argument, NULL, 'S'},
        {"help", no_argument, NULL, 'h'},
        CLI_GLOBAL_OPTIONS,
        {NULL, 0, NULL, 0},
    };
    struct cli_globals local = *g;
    const char *worker = NULL;
    bool follow = false, previous = false, all = false, timestamps = false;
    int64_t since_ms = 0;
    long tail = -1;
    int c;
    optind = 0;
    opterr = 0;
    while ((c = cli_next_option(argc, argv, "w:fn:pah", longopts, &local)) != -1) {
        if (c == 'w') {
            worker = optarg;
        } else if (c == 'f') {
            follow = true;
        } else if (c == 'p') {
            previous = true;
        } else if (c == 'a') {
            all = true;
        } else if (c == 'T') {
            timestamps = true;
        } else if (c == 'S') {
            if ((since_ms = since_ms_of(optarg)) < 0) {
                struct strbuf line = STRBUF_INIT;
                strbuf_adds(&line, "trainjob logs: --since takes a duration (90s, 10m, 2h30m, 1d) "
                                   "or an RFC 3339 time (2026-12-05T01:00:00Z), not '");
                cli_clean(&line, optarg);
                fprintf(err, "%s'\n", strbuf_str(&line));
                strbuf_free(&line);
                return EXIT_USAGE;
            }
        } else if (c == 'n') {
            char *end;
            errno = 0;
            tail = strtol(optarg, &end, 10);
            if (*optarg == '\0' || *end || tail < 0 || errno) {
                fprintf(err, "trainjob logs: --tail takes a number of lines, not '%s'\n", optarg);
                return EXIT_USAGE;
            }
        } else if (c == 'h') {
            fputs(logs_usage, out);
            return EXIT_OK;
        } else if (c != 0) {
            int rc = cli_bad_option("logs", "w:fn:pah", argv, err);
            if (optopt == 'w')
                fputs("(-w names a worker in logs; to follow the log, as get -w watches, use -f)\n",
                      err);
            return rc;
        }
    }
    if (argc - optind != 1) {
        fputs(logs_usage, err);
        if (argc - optind == 0 && worker)
            fputs("(-w names a worker in logs, not the job; to follow the log use -f)\n", err);
        return EXIT_USAGE;
    }
    if ((timestamps || since_ms > 0) && (all || previous)) {
        fputs("trainjob logs: --timestamps and --since read one worker's current log: give them "
              "without -a or -p\n",
              err);
        return EXIT_USAGE;
    }
    if ((all && (worker || previous || follow)) || (previous && follow)) {
        fprintf(err, "trainjob logs: %s\n",
                all && worker     ? "-a is every worker: give it without -w"
                : all && previous ? "-p is one worker's previous attempt: give it without -a"
                : all             ? "-a prints the logs as they are; to follow every worker live, "
                                    "open the job in `trainjob top` and press a"
                                  : "-p is an attempt that has ended: there is nothing to follow");
        return EXIT_USAGE;
    }
    const char *name = argv[optind];
    struct session s;
    int rc = cli_session_open(&local, &s, err);
    if (rc != EXIT_OK)
        return rc;
    struct api_error e;
    enum backend_status st;
    char *first = NULL;
    if (all) {
        struct log_out lo = {out, isatty(fileno(out)) != 0, STRBUF_INIT, '\n'};
        rc = all_workers_logs(&s, name, tail, &lo, err);
        log_drain(&lo, true);
        strbuf_free(&lo.pending);
        goto out;
    }
    if (worker == NULL) {
        struct worker_list wl;
        st = backend_workers(s.b, name, &wl, &e);
        if (st != BACKEND_OK) {
            rc = cli_failed(err, st, &e, false);
            goto out;
        }
        if (wl.count == 0 || wl.workers[0].name == NULL) {
            worker_list_free(&wl);
            rc = no_workers_yet(name, err);
            goto out;
        }
        first = xstrdup(wl.workers[0].name);
        worker = first;
        worker_list_free(&wl);
    }
    struct log_out lo = {out, isatty(fileno(out)) != 0, STRBUF_INIT, '\n'};
    if (previous) {
        rc = previous_log(&s, name, worker, &lo, err);
    } else if (timestamps || since_ms > 0) {
        rc = timed_log(&s, name, worker, tail, follow, timestamps, since_ms, &lo, err);
    } else if (follow && s.b->ops->logs_framed) {
        rc = follow_log(&s, name, worker, tail, &lo, err);
    } else if (follow) {
        /* A backend without frames (slurm) follows its own way until the job ends. */
        st = backend_logs(s.b, name, worker, tail, true, on_log, &lo, &e);
        if (st != BACKEND_OK)
            rc = cli_failed(err, st, &e, false);
    } else {
        st = backend_logs(s.b, name, worker, tail, follow, on_log, &lo, &e);
        if (st != BACKEND_OK)
            rc = cli_failed(err, st, &e, false);
    }
    log_drain(&lo, true);
    strbuf_free(&lo.pending);
out:
    free(first);
    session_close(&s);
    return rc;
}

/* ---- stop, start, delete ------------------------------------------------ */

/*
 * Parses the options of stop/start/delete/priority; the names follow at
 * argv[optind]. Returns EXIT_OK, -1 after --help, or the exit status of a usage error.
 */
static int names_options(const char *verb, const char *usage, struct cli_globals *local, int argc,
                         char **argv, FILE *out, FILE *err)
{
    int rc = cli_plain_options(verb, usage, argc, argv, local, out, err);
    if (rc >= 0)
        return rc == EXIT_OK ? -1 : rc; /* -1: the help was asked for */
    if (optind >= argc) {
        fputs(usage, err);
        return EXIT_USAGE;
    }
    return EXIT_OK;
}

/* Prints "job NAME WHAT" for one name, sanitized. */
static void say_job(FILE *f, const char *prefix, const char *name, const char *what)
{
    struct strbuf line = STRBUF_INIT;
    strbuf_adds(&line, prefix);
    strbuf_adds(&line, "job ");
    cli_clean(&line, name);
    strbuf_addc(&line, ' ');
    cli_clean(&line, what);
    fprintf(f, "%s\n", strbuf_str(&line));
    strbuf_free(&line);
}

/* Runs a batch verb over argv's names; exit 1 when some name was not found. */
static int batch_verb(const struct cli_globals *g, int argc, char **argv, FILE *out, FILE *err,
                      bool stop)
{
    static const char stop_usage[] =
        "usage: trainjob stop NAME...\n"
        "Stops jobs: their workers get SIGTERM (then SIGKILL) and the job becomes\n"
        "SUSPENDED; `trainjob start NAME` queues it again. Exit 0 when every job is\n"
        "stopped, also when it was not running; 1 when a name is not found; 3 no server.\n";
    static const char delete_usage[] =
        "usage: trainjob delete NAME...\n"
        "Deletes jobs, stopping their workers first. This cannot be undone.\n"
        "Exit 0 when every job is deleted; 1 when a name is not found (as kubectl\n"
        "delete: a typo must not look like success); 3 no server.\n";
    const char *verb = stop ? "stop" : "delete";
    struct cli_globals local = *g;
    int rc = names_options(verb, stop ? stop_usage : delete_usage, &local, argc, argv, out, err);
    if (rc != EXIT_OK)
        return rc < 0 ? EXIT_OK : rc;
    struct session s;
    if ((rc = cli_session_open(&local, &s, err)) != EXIT_OK)
        return rc;
    const char *const *names = (const char *const *)argv + optind;
    size_t n = (size_t)(argc - optind);
    struct batch_result r;
    struct api_error e;
    enum backend_status st =
        stop ? backend_stop(s.b, names, n, &r, &e) : backend_delete(s.b, names, n, &r, &e);
    if (st != BACKEND_OK) {
        rc = cli_failed(err, st, &e, false);
    } else {
        for (size_t i = 0; i < r.count; i++) {
            const struct batch_item *it = &r.items[i];
            switch (it->outcome) {
            case BATCH_DONE:
                say_job(out, "", it->name, stop ? "stopping" : "deleted");
                break;
            case BATCH_SKIPPED:
                say_job(out, "", it->name, stop ? "is not running: nothing to stop" : "skipped");
                break;
            case BATCH_NOT_FOUND:
                say_job(err, "trainjob: ", it->name, "not found");
                rc = EXIT_INVALID;
                break;
            case BATCH_UNKNOWN:
                say_job(out, "", it->name, stop ? "stop requested" : "delete requested");
                break;
            }
        }
        batch_result_free(&r);
    }
    session_close(&s);
    return rc;
}

/* `stop NAME...`: batchStop, one line per name. */
int cmd_stop(const struct cli_globals *g, int argc, char **argv, FILE *out, FILE *err)
{
    return batch_verb(g, argc, argv, out, err, true);
}

/* `delete NAME...`: batchDelete, one line per name. */
int cmd_delete(const struct cli_globals *g, int argc, char **argv, FILE *out, FILE *err)
{
    return batch_verb(g, argc, argv, out, err, false);
}

/*
 * After a refused start: whether the job is already started (queued, on its
 * way, or running), said on out. That is the state start asks for, so it is
 * exit 0 as `stop` of a stopped job is; a finished job is the wrong state.
 */
static bool already_started(struct backend *b, const char *name, FILE *out)
{
    struct jobspec job;
    struct api_error e;
    if (backend_get(b, name, &job, &e) != BACKEND_OK)
        return false;
    bool started = false;
    switch (job.state) {
    case JOB_STATE_WAITING:
    case JOB_STATE_INIT:
    case JOB_STATE_QUEUEING:
    case JOB_STATE_CREATING:
    case JOB_STATE_STARTING:
    case JOB_STATE_RUNNING:
    case JOB_STATE_RESTARTING:
        started = true;
        break;
    default:
        break;
    }
    if (started) {
        char what[96];
        snprintf(what, sizeof what, "is already started (%s): nothing to start",
                 enum_name_or(&job_state_names, (int)job.state, job.state_other));
        say_job(out, "", job.name ? job.name : name, what);
    }
    jobspec_free(&job);
    return started;
}

/* `priority NAME LEVEL`: the job's new priority, as the backend takes it (Slurm: the QOS). */
int cmd_priority(const struct cli_globals *g, int argc, char **argv, FILE *out, FILE *err)
{
    static const char usage[] =
        "usage: trainjob priority NAME NORMAL|HIGH|HIGHEST\n"
        "Changes a job's priority (HIGH and HIGHEST need owner rights in the workspace;\n"
        "on Slurm, the context's qos: map names the QOS each one is). Exit 0 when the\n"
        "job has it, also when it already had; 1 when the backend refuses (not found,\n"
        "not allowed, a running Slurm job whose QOS Slurm will not change); 3 no server.\n";
    struct cli_globals local = *g;
    int rc = names_options("priority", usage, &local, argc, argv, out, err);
    if (rc != EXIT_OK)
        return rc < 0 ? EXIT_OK : rc;
    if (argc - optind != 2) {
        fputs(usage, err);
        return EXIT_USAGE;
    }
    const char *name = argv[optind];
    char level[16];
    snprintf(level, sizeof level, "%s", argv[optind + 1]);
    for (char *p = level; *p; p++)
        *p = (char)(*p >= 'a' && *p <= 'z' ? *p - 'a' + 'A' : *p);
    int p = enum_value(&priority_names, level);
    if (p <= (int)PRIORITY_UNSPECIFIED) {
        struct strbuf line = STRBUF_INIT;
        strbuf_adds(&line, "trainjob priority: '");
        cli_clean(&line, argv[optind + 1]);
        strbuf_adds(&line, "' is not one of NORMAL, HIGH, HIGHEST");
        fprintf(err, "%s\n", strbuf_str(&line));
        strbuf_free(&line);
        return EXIT_USAGE;
    }
    struct session s;
    if ((rc = cli_session_open(&local, &s, err)) != EXIT_OK)
        return rc;
    struct job_update u = {.priority = (enum priority)p};
    struct jobspec job;
    struct api_error e;
    enum backend_status st = backend_update(s.b, name, &u, &job, &e);
    if (st != BACKEND_OK) {
        rc = cli_failed(err, st, &e, true);
    } else {
        char what[64];
        snprintf(what, sizeof what, "priority %s",
                 enum_name(&priority_names, (int)(job.scheduling.priority ? job.scheduling.priority
                                                                          : PRIORITY_NORMAL)));
        say_job(out, "", job.name ? job.name : name, what);
        jobspec_free(&job);
    }
    session_close(&s);
    return rc;
}

/* `start NAME`: queue a SUSPENDED job again; a started one is left as it is (exit 0). */
int cmd_start(const struct cli_globals *g, int argc, char **argv, FILE *out, FILE *err)
{
    static const char usage[] =
        "usage: trainjob start NAME...\n"
        "Queues stopped (SUSPENDED) jobs again, one line per name. Exit 0 when every\n"
        "job is started, also when it already was (queued or running); 1 when one is\n"
        "not found or has finished (SUCCEEDED, FAILED: submit it again); 3 no server.\n";
    struct cli_globals local = *g;
    int rc = names_options("start", usage, &local, argc, argv, out, err);
    if (rc != EXIT_OK)
        return rc < 0 ? EXIT_OK : rc;
    if (argc - optind < 1) {
        fputs(usage, err);
        return EXIT_USAGE;
    }
    struct session s;
    if ((rc = cli_session_open(&local, &s, err)) != EXIT_OK)
        return rc;
    /* One request per name (there is no batch start); the worst outcome is the exit status. */
    for (int i = optind; i < argc; i++) {
        const char *name = argv[i];
        struct jobspec job;
        struct api_error e;
        int one = EXIT_OK;
        enum backend_status st = backend_start(s.b, name, &job, &e);
        if (st == BACKEND_REJECTED && already_started(s.b, name, out)) {
            one = EXIT_OK;
        } else if (st != BACKEND_OK) {
            one = cli_failed(err, st, &e, false);
        } else {
            char what[64];
            snprintf(what, sizeof what, "started (%s)",
                     enum_name_or(&job_state_names, (int)job.state, job.state_other));
            say_job(out, "", job.name ? job.name : name, what);
            jobspec_free(&job);
        }
        if (one > rc)
            rc = one;
        if (one == EXIT_UNREACHABLE)
            break; /* the next names would say the same */
    }
    session_close(&s);
    return rc;
}
