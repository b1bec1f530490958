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
#include "api/jobfile.h"
#include "api/jobspec_defaults.h"
#include "api/jobspec_json.h"
#include "api/logframes.h"
#include "api/yamltree.h"
#include "cli/cli.h"
#include "cli/output.h"
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

/* `submit -f FILE`: validate offline (exit 1, nothing sent), then create. */
int cmd_submit(const struct cli_globals *g, int argc, char **argv, FILE *out, FILE *err)
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
            fputs(submit_usage, out);
            return EXIT_OK;
        } else if (c != 0) {
            return cli_bad_option("submit", "f:h", argv, err);
        }
    }
    if (file == NULL && optind == argc - 1)
        file = argv[optind++]; /* `submit FILE` reads as meant */
    if (file == NULL || optind != argc) {
        fputs(submit_usage, err);
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
    "usage: trainjob logs NAME [-w WORKER] [-f] [--tail N]\n"
    "Prints a worker's log (by default the job's first worker, e.g. master-0).\n"
    "-f follows it until the job ends (or Ctrl-C); --tail N starts N lines from the end.\n";

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
int cmd_logs(const struct cli_globals *g, int argc, char **argv, FILE *out, FILE *err)
{
    static const struct option longopts[] = {
        {"worker", required_argument, NULL, 'w'},
        {"follow", no_argument, NULL, 'f'},
        {"tail", required_argument, NULL, 'n'},
        {"help", no_argument, NULL, 'h'},
        CLI_GLOBAL_OPTIONS,
        {NULL, 0, NULL, 0},
    };
    struct cli_globals local = *g;
    const char *worker = NULL;
    bool follow = false;
    long tail = -1;
    int c;
    optind = 0;
    opterr = 0;
    while ((c = cli_next_option(argc, argv, "w:fn:h", longopts, &local)) != -1) {
        if (c == 'w') {
            worker = optarg;
        } else if (c == 'f') {
            follow = true;
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
            return cli_bad_option("logs", "w:fn:h", argv, err);
        }
    }
    if (argc - optind != 1) {
        fputs(logs_usage, err);
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
    if (worker == NULL) {
        struct worker_list wl;
        st = backend_workers(s.b, name, &wl, &e);
        if (st != BACKEND_OK) {
            rc = cli_failed(err, st, &e, false);
            goto out;
        }
        if (wl.count == 0 || wl.workers[0].name == NULL) {
            struct strbuf line = STRBUF_INIT;
            strbuf_adds(&line, "trainjob: job ");
            cli_clean(&line, name);
            strbuf_adds(&line, " has no workers yet: it has not been scheduled");
            fprintf(err, "%s\n", strbuf_str(&line));
            strbuf_free(&line);
            worker_list_free(&wl);
            rc = EXIT_INVALID;
            goto out;
        }
        first = xstrdup(wl.workers[0].name);
        worker = first;
        worker_list_free(&wl);
    }
    struct log_out lo = {out, isatty(fileno(out)) != 0, STRBUF_INIT, '\n'};
    if (follow && s.b->ops->logs_framed) {
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

/* Parses the options of stop/start/delete; the names follow at argv[optind]. */
static int names_options(const char *verb, const char *usage, struct cli_globals *local, int argc,
                         char **argv, FILE *out, FILE *err)
{
    static const struct option longopts[] = {
        {"help", no_argument, NULL, 'h'},
        CLI_GLOBAL_OPTIONS,
        {NULL, 0, NULL, 0},
    };
    int c;
    optind = 0;
    opterr = 0;
    while ((c = cli_next_option(argc, argv, "h", longopts, local)) != -1) {
        if (c == 'h') {
            fputs(usage, out);
            return -1;
        }
        if (c != 0)
            return cli_bad_option(verb, "h", argv, err);
    }
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
        "usage: trainjob start NAME\n"
        "Queues a stopped (SUSPENDED) job again. Exit 0 when the job is started,\n"
        "also when it already was (queued or running); 1 when it is not found or\n"
        "has finished (SUCCEEDED, FAILED: submit it again); 3 no server.\n";
    struct cli_globals local = *g;
    int rc = names_options("start", usage, &local, argc, argv, out, err);
    if (rc != EXIT_OK)
        return rc < 0 ? EXIT_OK : rc;
    if (argc - optind != 1) {
        fputs(usage, err);
        return EXIT_USAGE;
    }
    const char *name = argv[optind];
    struct session s;
    if ((rc = cli_session_open(&local, &s, err)) != EXIT_OK)
        return rc;
    struct jobspec job;
    struct api_error e;
    enum backend_status st = backend_start(s.b, name, &job, &e);
    if (st == BACKEND_REJECTED && already_started(s.b, name, out)) {
        rc = EXIT_OK;
    } else if (st != BACKEND_OK) {
        rc = cli_failed(err, st, &e, false);
    } else {
        char what[64];
        snprintf(what, sizeof what, "started (%s)",
                 enum_name_or(&job_state_names, (int)job.state, job.state_other));
        say_job(out, "", job.name ? job.name : name, what);
        jobspec_free(&job);
    }
    session_close(&s);
    return rc;
}
