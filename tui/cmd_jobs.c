/*
 * cmd_jobs: the verbs over a backend's jobs — submit, get (jobs, a job,
 * workers, events), logs, stop, start, delete.
 *
 * Each verb resolves the context (api/context: --context, --endpoint,
 * $TRAINJOB_ENDPOINT, config.yaml or the built-in local engine), opens its
 * backend (api/backend) and prints what came back: tables for people, the
 * API's own JSON or YAML with -o. Every string from the server is sanitized
 * before it is printed. Exit status: 0 ok, 1 the server said no (or a job
 * file is invalid), 2 usage, I/O, or the server cannot be reached.
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
#include "tui/cli.h"
#include "tui/session.h"
#include "util/strbuf.h"
#include "util/timefmt.h"
#include "util/utf8.h"
#include "util/xalloc.h"

/* An unlimited restart budget (backoff_limit -1) in tables: ASCII, so scripts can match it. */
#define RESTARTS_UNLIMITED "inf"
#define NONE "-"

/* ---- printing ----------------------------------------------------------- */

/* Appends text from outside (a server, a file) made safe for a terminal. */
static void add_clean(struct strbuf *sb, const char *s)
{
    if (s)
        utf8_sanitize(sb, s, strlen(s), 0);
}

/* Prints "trainjob: [FIELD: ]MESSAGE", sanitized: the message is the server's. */
static void print_error(FILE *err, const struct api_error *e, bool with_field)
{
    struct strbuf sb = STRBUF_INIT;
    strbuf_adds(&sb, "trainjob: ");
    size_t flen = strlen(e->field);
    bool has_prefix = flen && strncmp(e->message, e->field, flen) == 0 && e->message[flen] == ':';
    if (with_field && flen && !has_prefix) {
        add_clean(&sb, e->field);
        strbuf_adds(&sb, ": ");
    }
    add_clean(&sb, e->message);
    fprintf(err, "%s\n", strbuf_str(&sb));
    strbuf_free(&sb);
}

/* Prints a failed call and gives its exit status: 1 when the server said no, else 2. */
static int failed(FILE *err, enum backend_status st, const struct api_error *e, bool with_field)
{
    print_error(err, e, with_field);
    return st == BACKEND_REJECTED ? EXIT_INVALID : EXIT_USAGE;
}

/* A table of sanitized cells, printed with columns as wide as their widest cell. */
struct table {
    size_t cols;
    char **cells; /* rows × cols */
    size_t rows;
    size_t cap; /* rows there is room for: doubled, so 50,000 rows are not 50,000 reallocs */
};

/* Adds a row of t->cols cells (NULL or "" print as "-"). */
static void table_row(struct table *t, const char *const *cells)
{
    if (t->rows == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 64;
        t->cells = xreallocarray(t->cells, t->cap * t->cols, sizeof *t->cells);
    }
    for (size_t c = 0; c < t->cols; c++) {
        struct strbuf sb = STRBUF_INIT;
        add_clean(&sb, cells[c] && *cells[c] ? cells[c] : NONE);
        t->cells[t->rows * t->cols + c] = strbuf_detach(&sb, NULL);
    }
    t->rows++;
}

/* Prints (unless out is NULL) and frees t: three spaces between columns, the last column unpadded.
 */
static void table_print(struct table *t, FILE *out)
{
    size_t *width = xcalloc(t->cols, sizeof *width);
    for (size_t r = 0; r < t->rows; r++)
        for (size_t c = 0; c < t->cols; c++) {
            const char *s = t->cells[r * t->cols + c];
            size_t w = utf8_width(s, strlen(s));
            if (w > width[c])
                width[c] = w;
        }
    for (size_t r = 0; out && r < t->rows; r++) {
        struct strbuf line = STRBUF_INIT;
        for (size_t c = 0; c < t->cols; c++) {
            const char *s = t->cells[r * t->cols + c];
            strbuf_adds(&line, s);
            if (c + 1 < t->cols)
                for (size_t w = utf8_width(s, strlen(s)); w < width[c] + 3; w++)
                    strbuf_addc(&line, ' ');
        }
        while (line.len && line.buf[line.len - 1] == ' ')
            strbuf_truncate(&line, line.len - 1);
        fprintf(out, "%s\n", strbuf_str(&line));
        strbuf_free(&line);
    }
    for (size_t i = 0; i < t->rows * t->cols; i++)
        free(t->cells[i]);
    free(t->cells);
    free(width);
    memset(t, 0, sizeof *t);
}

/* "3m" since an RFC 3339 time, or "-". */
static void age(const char *since, char *buf, size_t size)
{
    int64_t t = since ? time_parse_rfc3339(since) : -1;
    if (t < 0) {
        snprintf(buf, size, NONE);
        return;
    }
    int64_t d = time_now_ms() - t;
    time_age(d < 0 ? 0 : d, buf, size);
}

enum output {
    OUTPUT_TABLE,
    OUTPUT_WIDE,
    OUTPUT_JSON,
    OUTPUT_YAML,
};

/* -o's value; -1 for an unknown one. */
static int output_from(const char *s)
{
    if (strcmp(s, "wide") == 0)
        return OUTPUT_WIDE;
    if (strcmp(s, "json") == 0)
        return OUTPUT_JSON;
    if (strcmp(s, "yaml") == 0 || strcmp(s, "yml") == 0)
        return OUTPUT_YAML;
    return -1;
}

/* Makes every string in tree safe for a terminal, in place (newlines and tabs kept). */
static void sanitize_tree(json_t *tree)
{
    if (json_is_string(tree)) {
        struct strbuf clean = STRBUF_INIT;
        utf8_sanitize(&clean, json_string_value(tree), json_string_length(tree),
                      UTF8_KEEP_NEWLINE | UTF8_KEEP_TAB);
        json_string_setn(tree, clean.buf ? clean.buf : "", clean.len);
        strbuf_free(&clean);
    } else if (json_is_array(tree)) {
        size_t i;
        json_t *v;
        json_array_foreach(tree, i, v) sanitize_tree(v);
    } else if (json_is_object(tree)) {
        const char *k;
        json_t *v;
        json_object_foreach(tree, k, v) sanitize_tree(v);
    }
}

/*
 * Prints a tree (which it frees) as indented JSON or YAML: exactly the
 * server's data into a pipe or file, sanitized strings on a terminal.
 */
static void print_tree(json_t *tree, enum output o, FILE *out)
{
    if (isatty(fileno(out)))
        sanitize_tree(tree);
    struct strbuf sb = STRBUF_INIT;
    if (o == OUTPUT_JSON) {
        char *s = json_dumps(tree, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        if (s == NULL)
            xalloc_die();
        strbuf_adds(&sb, s);
        strbuf_addc(&sb, '\n');
        free(s);
    } else {
        struct doc_error derr;
        (void)yamltree_emit(tree, &sb, &derr);
    }
    fputs(strbuf_str(&sb), out);
    strbuf_free(&sb);
    json_decref(tree);
}

/* ---- sessions: context + backend ---------------------------------------- */

int session_open(const struct cli_globals *g, struct session *s, FILE *err)
{
    memset(s, 0, sizeof *s);
    struct context_request req = {NULL, g->context, g->endpoint, getenv("TRAINJOB_ENDPOINT"),
                                  g->workspace};
    struct findings fs = FINDINGS_INIT;
    struct strbuf why = STRBUF_INIT;
    int rc = EXIT_OK;
    int resolved = context_resolve(&req, &s->rc, &fs, &why);
    /* Errors about the file, or warnings (a secret key file others may read). */
    for (size_t i = 0; i < fs.count; i++) {
        const struct finding *f = &fs.items[i];
        struct strbuf line = STRBUF_INIT;
        add_clean(&line, s->rc.config_path);
        if (f->line > 0)
            strbuf_addf(&line, ":%d:%d", f->line, f->col);
        strbuf_addf(&line, ": %s: ", severity_name(f->severity));
        if (f->path[0]) {
            add_clean(&line, f->path);
            strbuf_adds(&line, ": ");
        }
        add_clean(&line, f->message);
        fprintf(err, "%s\n", strbuf_str(&line));
        strbuf_free(&line);
    }
    if (resolved != 0) {
        if (why.len) {
            struct strbuf line = STRBUF_INIT;
            add_clean(&line, strbuf_str(&why));
            fprintf(err, "trainjob: %s\n", strbuf_str(&line));
            strbuf_free(&line);
        }
        rc = EXIT_USAGE;
    } else if ((s->b = backend_open(&s->rc, &why)) == NULL) {
        struct strbuf line = STRBUF_INIT;
        add_clean(&line, strbuf_str(&why));
        fprintf(err, "trainjob: %s\n", strbuf_str(&line));
        strbuf_free(&line);
        rc = EXIT_USAGE;
    }
    findings_free(&fs);
    strbuf_free(&why);
    if (rc != EXIT_OK)
        resolved_context_free(&s->rc);
    return rc;
}

void session_close(struct session *s)
{
    backend_free(s->b);
    resolved_context_free(&s->rc);
    memset(s, 0, sizeof *s);
}

/*
 * Parses a verb's options: its own (short, plus long rows before the global
 * ones) and the global options. Returns the option character to handle,
 * 0 when a global one was taken, or -1 at the end; '?' for a bad option.
 */
static int next_option(int argc, char **argv, const char *shortopts, const struct option *longopts,
                       struct cli_globals *g)
{
    int c = getopt_long(argc, argv, shortopts, longopts, NULL);
    if (c != -1 && cli_global_option(g, c, optarg))
        return 0;
    return c;
}

/* The message every verb gives for an option it does not take (or one missing its value). */
static int bad_option(const char *verb, const char *shortopts, char **argv, FILE *err)
{
    const char *arg = argv[optind - 1];
    bool is_long = strncmp(arg, "--", 2) == 0;
    const char *p = !is_long && optopt > 0 && optopt < 0x100 ? strchr(shortopts, optopt) : NULL;
    if (is_long)
        fprintf(err, "trainjob %s: unknown option, or one missing its value: '%s'\n", verb, arg);
    else if (p && p[1] == ':')
        fprintf(err, "trainjob %s: option '-%c' needs a value\n", verb, optopt);
    else
        fprintf(err, "trainjob %s: unknown option '-%c'\n", verb, optopt ? optopt : '?');
    fprintf(err, "Run 'trainjob %s --help' for its options.\n", verb);
    return EXIT_USAGE;
}

/* ---- submit ------------------------------------------------------------- */

static const char submit_usage[] =
    "usage: trainjob submit -f FILE [--workspace WS]\n"
    "Checks the job file against every rule of the form (findings as FILE:LINE:COL,\n"
    "nothing is sent while there are errors), then creates the job. --workspace\n"
    "fills in a file that names no workspace_name.\n";

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
    while ((c = next_option(argc, argv, "f:h", longopts, &local)) != -1) {
        if (c == 'f') {
            file = optarg;
        } else if (c == 'h') {
            fputs(submit_usage, out);
            return EXIT_OK;
        } else if (c != 0) {
            return bad_option("submit", "f:h", argv, err);
        }
    }
    if (file == NULL && optind == argc - 1)
        file = argv[optind++]; /* `submit FILE` reads as meant */
    if (file == NULL || optind != argc) {
        fputs(submit_usage, err);
        return EXIT_USAGE;
    }

    /* Offline first, exactly as `validate` does: nothing is sent while the file has errors. */
    char *vargv[6];
    int vargc = 0;
    vargv[vargc++] = (char *)"validate";
    vargv[vargc++] = (char *)"-q";
    if (local.workspace) {
        vargv[vargc++] = (char *)"--workspace";
        vargv[vargc++] = (char *)local.workspace;
    }
    vargv[vargc++] = (char *)file;
    vargv[vargc] = NULL;
    int rc = cmd_validate(&local, vargc, vargv, out, err);
    if (rc != EXIT_OK)
        return rc;

    struct jobfile jf;
    struct findings fs = FINDINGS_INIT;
    struct strbuf io = STRBUF_INIT;
    jobfile_init(&jf);
    if (jobfile_load(file, &jf, &fs, &io) != JOBFILE_OK) {
        fprintf(err, "trainjob: %s: changed while being read\n", file);
        rc = EXIT_USAGE;
        goto out;
    }
    struct session s;
    if ((rc = session_open(&local, &s, err)) != EXIT_OK)
        goto out;
    if (jf.job.workspace_name == NULL)
        jf.job.workspace_name = xstrdup(s.b->target.workspace);
    backend_set_workspace(s.b, jf.job.workspace_name);
    /* ACP wants the name in the query; every other default is the server's to fill (it
     * knows, from its catalog, whether a pool is idle and so which quota type applies). */
    if (jf.job.name == NULL)
        jf.job.name = jobspec_generate_name(jf.job.framework);

    struct jobspec created;
    struct api_error e;
    enum backend_status st = backend_create(s.b, &jf.job, &created, &e);
    if (st != BACKEND_OK) {
        rc = failed(err, st, &e, true);
    } else {
        struct strbuf line = STRBUF_INIT;
        strbuf_adds(&line, "job ");
        add_clean(&line, created.name ? created.name : jf.job.name);
        strbuf_addf(&line, " created (%s)", enum_name(&job_state_names, (int)created.state));
        fprintf(out, "%s\n", strbuf_str(&line));
        strbuf_free(&line);
        jobspec_free(&created);
    }
    session_close(&s);
out:
    strbuf_free(&io);
    findings_free(&fs);
    jobfile_free(&jf);
    return rc;
}

/* ---- get ---------------------------------------------------------------- */

static const char get_usage[] =
    "usage: trainjob get jobs [-o json|yaml|wide] [--state STATE]\n"
    "       trainjob get job NAME [-o json|yaml]\n"
    "       trainjob get workers NAME [-o json|yaml|wide]\n"
    "       trainjob get events NAME [-o json|yaml]\n"
    "Jobs: NAME, DISPLAY NAME, STATE, PRIORITY, TYPE (standard or idle), WORKERS\n"
    "ready/total, RESTARTS used/limit (" RESTARTS_UNLIMITED " when unlimited), AGE; -o wide adds\n"
    "POOL and REASON (why a job waits or failed). A job prints as YAML by default.\n";

/* Workers a job asks for: the Worker role's total_replicas (or its per-spec replicas). */
static int job_total_workers(const struct jobspec *job)
{
    const struct role *r = jobspec_worker(job);
    if (r == NULL)
        return 0;
    if (r->has_total_replicas)
        return r->total_replicas;
    int n = 0;
    for (size_t i = 0; i < r->resource_spec_count; i++)
        n += r->resource_spec[i].has_replicas ? r->resource_spec[i].replicas : 0;
    return n;
}

/* The job table: one row a job, REASON and POOL with -o wide (10 columns, else 8). */
static void jobs_table_head(struct table *t)
{
    const char *head[] = {"NAME",    "DISPLAY NAME", "STATE", "PRIORITY", "TYPE",
                          "WORKERS", "RESTARTS",     "AGE",   "POOL",     "REASON"};
    table_row(t, head);
}

/* backend_job_fn of get jobs: the job's row, as each page arrives (the job is not kept). */
static int jobs_table_add(void *ctx, struct jobspec *job)
{
    struct table *t = ctx;
    const struct jobspec *j = job;
    char workers[32], restarts[32], limit[16], when[16];
    int total = job_total_workers(j);
    if (j->has_ready_workers)
        snprintf(workers, sizeof workers, "%d/%d", (int)j->ready_workers, total);
    else
        snprintf(workers, sizeof workers, NONE "/%d", total);
    int32_t lim = j->fault_tolerance.has_backoff_limit ? j->fault_tolerance.backoff_limit : 0;
    if (lim < 0)
        snprintf(limit, sizeof limit, RESTARTS_UNLIMITED);
    else
        snprintf(limit, sizeof limit, "%d", (int)lim);
    if (j->has_restart_count)
        snprintf(restarts, sizeof restarts, "%d/%s", (int)j->restart_count, limit);
    else
        snprintf(restarts, sizeof restarts, NONE "/%s", limit);
    age(j->create_time, when, sizeof when);
    const char *row[] = {
        j->name,
        j->display_name,
        enum_name(&job_state_names, (int)j->state),
        j->scheduling.priority ? enum_name(&priority_names, (int)j->scheduling.priority) : NULL,
        jobspec_is_idle(j) ? "idle" : "standard",
        workers,
        restarts,
        when,
        j->resource_pool.name,
        j->state_message};
    table_row(t, row);
    return 0;
}

/* `get jobs`: every page, optionally filtered by state. */
static int get_jobs(struct session *s, const char *state, enum output o, FILE *out, FILE *err)
{
    char filter[96] = "";
    if (state) {
        if (enum_value(&job_state_names, state) <= 0) {
            fprintf(err, "trainjob get: --state takes a job state such as RUNNING, not '%s'\n",
                    state);
            return EXIT_USAGE;
        }
        snprintf(filter, sizeof filter, "state='%s'", state);
    }
    struct api_error e;
    if (o == OUTPUT_JSON || o == OUTPUT_YAML) { /* whole jobs, as the server has them */
        struct job_list l;
        enum backend_status st = backend_list_all(s->b, state ? filter : NULL, false, &l, &e);
        if (st != BACKEND_OK)
            return failed(err, st, &e, false);
        json_t *arr = json_array();
        for (size_t i = 0; i < l.count; i++)
            json_array_append_new(arr, jobspec_to_json(&l.jobs[i]));
        print_tree(json_pack("{s:o}", "training_jobs", arr), o, out);
        job_list_free(&l);
        return EXIT_OK;
    }
    /* The table: summaries (view=BASIC on trainjobd), a row made as each page comes. */
    struct table t = {o == OUTPUT_WIDE ? 10u : 8u, NULL, 0, 0};
    jobs_table_head(&t);
    enum backend_status st =
        backend_list_each(s->b, state ? filter : NULL, true, jobs_table_add, &t, NULL, &e);
    if (st != BACKEND_OK) {
        table_print(&t, NULL);
        return failed(err, st, &e, false);
    }
    if (t.rows == 1) {
        table_print(&t, NULL);
        struct strbuf line = STRBUF_INIT;
        strbuf_adds(&line, "No jobs in workspace ");
        add_clean(&line, s->b->target.workspace);
        fprintf(err, "%s%s%s.\n", strbuf_str(&line), state ? " in state " : "", state ? state : "");
        strbuf_free(&line);
    } else {
        table_print(&t, out);
    }
    return EXIT_OK;
}

/* `get job NAME`: the job as YAML (default) or JSON. */
static int get_job(struct session *s, const char *name, enum output o, FILE *out, FILE *err)
{
    struct jobspec job;
    struct api_error e;
    enum backend_status st = backend_get(s->b, name, &job, &e);
    if (st != BACKEND_OK)
        return failed(err, st, &e, false);
    print_tree(jobspec_to_json(&job), o == OUTPUT_JSON ? OUTPUT_JSON : OUTPUT_YAML, out);
    jobspec_free(&job);
    return EXIT_OK;
}

/* `get workers NAME`: the worker table, or JSON/YAML. */
static int get_workers(struct session *s, const char *name, enum output o, FILE *out, FILE *err)
{
    struct worker_list l;
    struct api_error e;
    enum backend_status st = backend_workers(s->b, name, &l, &e);
    if (st != BACKEND_OK)
        return failed(err, st, &e, false);
    if (o == OUTPUT_JSON || o == OUTPUT_YAML) {
        json_t *arr = json_array();
        for (size_t i = 0; i < l.count; i++)
            json_array_append_new(arr, worker_info_to_json(&l.workers[i]));
        print_tree(json_pack("{s:o}", "workers", arr), o, out);
    } else if (l.count == 0) {
        fputs("No workers (the job has not been scheduled).\n", err);
    } else {
        bool wide = o == OUTPUT_WIDE;
        struct table t = {wide ? 10u : 8u, NULL, 0, 0};
        const char *head[] = {"NAME", "ROLE",    "NODE", "PHASE", "RESTARTS",
                              "EXIT", "DEVICES", "AGE",  "IP",    "HOST IP"};
        table_row(&t, head);
        for (size_t i = 0; i < l.count; i++) {
            const struct worker_info *w = &l.workers[i];
            char restarts[16], exit_code[160], when[16];
            snprintf(restarts, sizeof restarts, "%d", (int)w->restarts);
            if (!w->has_exit_code)
                snprintf(exit_code, sizeof exit_code, NONE);
            else if (w->exit_reason && *w->exit_reason)
                snprintf(exit_code, sizeof exit_code, "%d %s", (int)w->exit_code, w->exit_reason);
            else
                snprintf(exit_code, sizeof exit_code, "%d", (int)w->exit_code);
            struct strbuf dev = STRBUF_INIT;
            if (w->devices && *w->devices)
                strbuf_addf(&dev, "%s%s", w->devices, w->simulated ? " (simulated)" : "");
            age(w->create_time, when, sizeof when);
            const char *row[] = {w->name,
                                 w->role,
                                 w->node_name,
                                 enum_name(&worker_phase_names, (int)w->phase),
                                 restarts,
                                 exit_code,
                                 strbuf_str(&dev),
                                 when,
                                 w->ip,
                                 w->host_ip};
            table_row(&t, row);
            strbuf_free(&dev);
        }
        table_print(&t, out);
    }
    worker_list_free(&l);
    return EXIT_OK;
}

/* `get events NAME`: time, kind and message of each event. */
static int get_events(struct session *s, const char *name, enum output o, FILE *out, FILE *err)
{
    struct job_event_list l;
    struct api_error e;
    enum backend_status st = backend_events(s->b, name, &l, &e);
    if (st != BACKEND_OK)
        return failed(err, st, &e, false);
    if (o == OUTPUT_JSON || o == OUTPUT_YAML) {
        json_t *arr = json_array();
        for (size_t i = 0; i < l.count; i++)
            json_array_append_new(arr, job_event_to_json(&l.events[i]));
        print_tree(json_pack("{s:o}", "events", arr), o, out);
    } else {
        struct table t = {3, NULL, 0, 0};
        const char *head[] = {"TIME", "KIND", "MESSAGE"};
        table_row(&t, head);
        for (size_t i = 0; i < l.count; i++) {
            const struct job_event *ev = &l.events[i];
            /* No kind: the engine's note of how many older events it folded. */
            const char *kind = ev->kind ? enum_name(&job_event_kind_names, (int)ev->kind) : NULL;
            const char *row[] = {ev->time, kind, ev->message};
            table_row(&t, row);
        }
        table_print(&t, out);
    }
    job_event_list_free(&l);
    return EXIT_OK;
}

enum get_what {
    GET_JOBS,
    GET_WORKERS,
    GET_EVENTS,
};

/* `get jobs|job|workers|events`: parses what to get, then asks the backend. */
int cmd_get(const struct cli_globals *g, int argc, char **argv, FILE *out, FILE *err)
{
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"state", required_argument, NULL, 's'},
        {"help", no_argument, NULL, 'h'},
        CLI_GLOBAL_OPTIONS,
        {NULL, 0, NULL, 0},
    };
    struct cli_globals local = *g;
    int o = OUTPUT_TABLE;
    const char *state = NULL;
    int c;
    optind = 0;
    opterr = 0;
    while ((c = next_option(argc, argv, "o:h", longopts, &local)) != -1) {
        if (c == 'o') {
            if ((o = output_from(optarg)) < 0) {
                fprintf(err, "trainjob get: -o takes json, yaml or wide, not '%s'\n", optarg);
                return EXIT_USAGE;
            }
        } else if (c == 's') {
            state = optarg;
        } else if (c == 'h') {
            fputs(get_usage, out);
            return EXIT_OK;
        } else if (c != 0) {
            return bad_option("get", "o:h", argv, err);
        }
    }
    int args = argc - optind;
    const char *what_s = args > 0 ? argv[optind] : NULL;
    const char *name = args > 1 ? argv[optind + 1] : NULL;
    enum get_what what;
    if (what_s && (strcmp(what_s, "jobs") == 0 || strcmp(what_s, "job") == 0))
        what = GET_JOBS;
    else if (what_s && (strcmp(what_s, "workers") == 0 || strcmp(what_s, "worker") == 0))
        what = GET_WORKERS;
    else if (what_s && (strcmp(what_s, "events") == 0 || strcmp(what_s, "event") == 0))
        what = GET_EVENTS;
    else {
        if (what_s)
            fprintf(err, "trainjob get: cannot get '%s'\n", what_s);
        fputs(get_usage, err);
        return EXIT_USAGE;
    }
    if (args > 2 || (what != GET_JOBS && name == NULL)) {
        fputs(get_usage, err);
        return EXIT_USAGE;
    }
    if ((what != GET_JOBS || name) && state) {
        fputs("trainjob get: --state filters the job list only\n", err);
        return EXIT_USAGE;
    }
    if (o == OUTPUT_WIDE && (what == GET_EVENTS || (what == GET_JOBS && name))) {
        fputs("trainjob get: -o wide is for the job and worker tables; use json or yaml\n", err);
        return EXIT_USAGE;
    }
    struct session s;
    int rc = session_open(&local, &s, err);
    if (rc != EXIT_OK)
        return rc;
    if (what == GET_JOBS && name == NULL)
        rc = get_jobs(&s, state, (enum output)o, out, err);
    else if (what == GET_JOBS)
        rc = get_job(&s, name, (enum output)o, out, err);
    else if (what == GET_WORKERS)
        rc = get_workers(&s, name, (enum output)o, out, err);
    else
        rc = get_events(&s, name, (enum output)o, out, err);
    session_close(&s);
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
    char line[160];
    char amount[48];
    if (bytes >= (1u << 20))
        snprintf(amount, sizeof amount, "%llu MiB",
                 (unsigned long long)((bytes + (1u << 19)) >> 20));
    else if (bytes >= 1024)
        snprintf(amount, sizeof amount, "%llu KiB", (unsigned long long)((bytes + 512) >> 10));
    else
        snprintf(amount, sizeof amount, "%llu bytes", (unsigned long long)bytes);
    snprintf(line, sizeof line, "… %s skipped (the log rotated faster than it was read) …\n",
             bytes ? amount : "some output");
    bool mid_line = lo->tty ? lo->pending.len > 0 : lo->last != '\n';
    if (mid_line)
        on_log(lo, "\n", 1);
    return on_log(lo, line, strlen(line));
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
        if (st == BACKEND_REJECTED) {
            rc = failed(err, st, &e, false);
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
            rc = failed(err, st, &e, false);
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
    while ((c = next_option(argc, argv, "w:fn:h", longopts, &local)) != -1) {
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
            return bad_option("logs", "w:fn:h", argv, err);
        }
    }
    if (argc - optind != 1) {
        fputs(logs_usage, err);
        return EXIT_USAGE;
    }
    const char *name = argv[optind];
    struct session s;
    int rc = session_open(&local, &s, err);
    if (rc != EXIT_OK)
        return rc;
    struct api_error e;
    enum backend_status st;
    char *first = NULL;
    if (worker == NULL) {
        struct worker_list wl;
        st = backend_workers(s.b, name, &wl, &e);
        if (st != BACKEND_OK) {
            rc = failed(err, st, &e, false);
            goto out;
        }
        if (wl.count == 0 || wl.workers[0].name == NULL) {
            struct strbuf line = STRBUF_INIT;
            strbuf_adds(&line, "trainjob: job ");
            add_clean(&line, name);
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
    if (follow) {
        rc = follow_log(&s, name, worker, tail, &lo, err);
    } else {
        st = backend_logs(s.b, name, worker, tail, follow, on_log, &lo, &e);
        if (st != BACKEND_OK)
            rc = failed(err, st, &e, false);
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
    while ((c = next_option(argc, argv, "h", longopts, local)) != -1) {
        if (c == 'h') {
            fputs(usage, out);
            return -1;
        }
        if (c != 0)
            return bad_option(verb, "h", argv, err);
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
    add_clean(&line, name);
    strbuf_addc(&line, ' ');
    add_clean(&line, what);
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
        "SUSPENDED; `trainjob start NAME` queues it again.\n";
    static const char delete_usage[] =
        "usage: trainjob delete NAME...\n"
        "Deletes jobs, stopping their workers first. This cannot be undone.\n";
    const char *verb = stop ? "stop" : "delete";
    struct cli_globals local = *g;
    int rc = names_options(verb, stop ? stop_usage : delete_usage, &local, argc, argv, out, err);
    if (rc != EXIT_OK)
        return rc < 0 ? EXIT_OK : rc;
    struct session s;
    if ((rc = session_open(&local, &s, err)) != EXIT_OK)
        return rc;
    const char *const *names = (const char *const *)argv + optind;
    size_t n = (size_t)(argc - optind);
    struct batch_result r;
    struct api_error e;
    enum backend_status st =
        stop ? backend_stop(s.b, names, n, &r, &e) : backend_delete(s.b, names, n, &r, &e);
    if (st != BACKEND_OK) {
        rc = failed(err, st, &e, false);
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

/* `start NAME`: queue a SUSPENDED job again. */
int cmd_start(const struct cli_globals *g, int argc, char **argv, FILE *out, FILE *err)
{
    static const char usage[] = "usage: trainjob start NAME\n"
                                "Queues a stopped (SUSPENDED) job again.\n";
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
    if ((rc = session_open(&local, &s, err)) != EXIT_OK)
        return rc;
    struct jobspec job;
    struct api_error e;
    enum backend_status st = backend_start(s.b, name, &job, &e);
    if (st != BACKEND_OK) {
        rc = failed(err, st, &e, false);
    } else {
        char what[64];
        snprintf(what, sizeof what, "started (%s)", enum_name(&job_state_names, (int)job.state));
        say_job(out, "", job.name ? job.name : name, what);
        jobspec_free(&job);
    }
    session_close(&s);
    return rc;
}
