/*
 * cmd_get: `trainjob get jobs|job|workers|events|catalog`, kubectl's way —
 * tables for people (--no-headers, -o wide), -o name (KIND/NAME lines),
 * -o json|yaml (the API's own objects), --sort-by FIELD, --mine / --user U,
 * and -w/--watch: the list, then a line per change as the backend's watch
 * stream reports it (one JSON object per line with -o json), until Ctrl-C.
 * cli/cli.c's verb table calls cmd_get; printing is cli/output's.
 */
#include <ctype.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/backend.h"
#include "api/catalog_json.h"
#include "api/context.h"
#include "api/jobspec_json.h"
#include "cli/cli.h"
#include "cli/output.h"
#include "util/fuzzy.h"
#include "util/sizefmt.h"
#include "util/strbuf.h"
#include "util/timefmt.h"
#include "util/xalloc.h"

static const char get_usage[] =
    "usage: trainjob get jobs [-o json|yaml|wide|name] [--state S[,S...]] [--mine | --user U]\n"
    "       trainjob get job NAME [-o json|yaml|name]\n"
    "       trainjob get workers NAME [-o json|yaml|wide|name]\n"
    "       trainjob get events NAME [-o json|yaml|name]\n"
    "       trainjob get catalog [-o json|yaml]\n"
    "Options: --no-headers (tables), --sort-by FIELD, -w/--watch (jobs, workers,\n"
    "events: print the list, then a line per change until Ctrl-C; -o json gives one\n"
    "object per line). FIELD is any column as its title reads, in any case (age:\n"
    "youngest first; display-name or \"DISPLAY NAME\"), or created, user. --state\n"
    "takes states in any case, several with commas: --state running,failed.\n"
    "Jobs: NAME, DISPLAY NAME, STATE, PRIORITY, TYPE (standard or idle), WORKERS\n"
    "ready/total, RESTARTS used/limit (" RESTARTS_UNLIMITED " when unlimited), AGE; -o wide adds\n"
    "POOL and REASON (why a job waits or failed). A job prints as YAML by default.\n"
    "--mine: the jobs you created (the backend says who you are); --user U: U's.\n"
    "--context a,b (or all) lists the jobs of several contexts in one table, CONTEXT\n"
    "first; a context that cannot be reached is said and the others still listed.\n"
    "Exit status: 0 done, 1 refused or not found, 2 usage, 3 no server.\n";

enum get_what {
    GET_JOBS,
    GET_WORKERS,
    GET_EVENTS,
    GET_CATALOG,
};

/* What the options asked for, shared by the list, the sort and the watch. */
struct get_opts {
    enum get_what what;
    const char *name; /* get job NAME, workers NAME, events NAME */
    enum output o;
    bool no_headers;
    int sort;          /* index into the what's sort fields; -1: the server's order */
    const char *state; /* jobs: --state, canonical: "RUNNING" or "RUNNING,FAILED" */
    const char *user;  /* jobs: --user, or --mine resolved */
};

/* ---- sorting ------------------------------------------------------------ */

/* --sort-by's fields, per kind; the first of each is what names the rows. */
/* Every column is a key, named as its title reads ("display-name" for DISPLAY NAME). */
static const char *const job_sort_fields[] = {
    "name",         "created", "state",   "priority", "restarts", "pool", "user",
    "display-name", "type",    "workers", "age",      "reason",   "id",   NULL};
static const char *const worker_sort_fields[] = {
    "name", "node", "phase", "restarts", "created", "role", "exit", "held-devices",
    "age",  "ip",   "host-ip", "last-state", NULL};
static const char *const event_sort_fields[] = {"time", "kind", "message", NULL};

static const char *const *sort_fields(enum get_what what)
{
    return what == GET_JOBS      ? job_sort_fields
           : what == GET_WORKERS ? worker_sort_fields
           : what == GET_EVENTS  ? event_sort_fields
                                 : NULL;
}

const char *const *get_sort_fields(const char *kind)
{
    if (!kind)
        return NULL;
    if (strcmp(kind, "jobs") == 0 || strcmp(kind, "job") == 0)
        return job_sort_fields;
    if (strcmp(kind, "workers") == 0 || strcmp(kind, "worker") == 0)
        return worker_sort_fields;
    if (strcmp(kind, "events") == 0 || strcmp(kind, "event") == 0)
        return event_sort_fields;
    return NULL;
}

static int cmp_str(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "");
}

static int cmp_int(long a, long b)
{
    return (a > b) - (a < b);
}

static int job_sort_field; /* qsort has no context argument */
static int job_total_workers(const struct jobspec *job);

/* Orders two jobs by job_sort_field, then by name so the order is total. */
static int cmp_jobs(const void *pa, const void *pb)
{
    const struct jobspec *a = pa, *b = pb;
    int c = 0;
    switch (job_sort_field) {
    case 1: /* created: RFC 3339 in UTC sorts as text */
        c = cmp_str(a->create_time, b->create_time);
        break;
    case 2:
        c = cmp_str(enum_name_or(&job_state_names, (int)a->state, a->state_other),
                    enum_name_or(&job_state_names, (int)b->state, b->state_other));
        break;
    case 3: /* highest first, as a queue runs them */
        c = cmp_int(b->scheduling.priority, a->scheduling.priority);
        break;
    case 4:
        c = cmp_int(b->restart_count, a->restart_count);
        break;
    case 5:
        c = cmp_str(a->resource_pool.name, b->resource_pool.name);
        break;
    case 6:
        c = cmp_str(a->ownership.user_name, b->ownership.user_name);
        break;
    case 7:
        c = cmp_str(a->display_name, b->display_name);
        break;
    case 8: /* standard before idle, as the column reads */
        c = cmp_int(jobspec_is_idle(a), jobspec_is_idle(b));
        break;
    case 9: /* most workers ready first, then most asked for */
        c = cmp_int(b->ready_workers, a->ready_workers);
        if (c == 0)
            c = cmp_int(job_total_workers(b), job_total_workers(a));
        break;
    case 10: /* youngest first: the AGE column read upwards */
        c = cmp_str(b->create_time, a->create_time);
        break;
    case 11:
        c = cmp_str(a->state_message, b->state_message);
        break;
    case 12:
        c = cmp_str(jobspec_scheduler_id(a), jobspec_scheduler_id(b));
        break;
    }
    return c ? c : cmp_str(a->name, b->name);
}

static int worker_sort_field;

static int cmp_workers(const void *pa, const void *pb)
{
    const struct worker_info *a = pa, *b = pb;
    int c = 0;
    switch (worker_sort_field) {
    case 1:
        c = cmp_str(a->node_name, b->node_name);
        break;
    case 2:
        c = cmp_str(worker_phase_text(a), worker_phase_text(b));
        break;
    case 3:
        c = cmp_int(b->restarts, a->restarts);
        break;
    case 4:
        c = cmp_str(a->create_time, b->create_time);
        break;
    case 5:
        c = cmp_str(a->role, b->role);
        break;
    case 6: /* exited workers first, then by code */
        c = cmp_int(b->has_exit_code, a->has_exit_code);
        if (c == 0)
            c = cmp_int(a->exit_code, b->exit_code);
        break;
    case 7: {
        struct strbuf da = STRBUF_INIT, db = STRBUF_INIT;
        worker_devices_text(a, &da);
        worker_devices_text(b, &db);
        c = cmp_str(strbuf_str(&da), strbuf_str(&db));
        strbuf_free(&da);
        strbuf_free(&db);
        break;
    }
    case 8: /* youngest first */
        c = cmp_str(b->create_time, a->create_time);
        break;
    case 9:
        c = cmp_str(a->ip, b->ip);
        break;
    case 10:
        c = cmp_str(a->host_ip, b->host_ip);
        break;
    case 11: /* the latest end first; never ended last */
        c = cmp_str(b->last_state.finish_time, a->last_state.finish_time);
        break;
    }
    return c ? c : cmp_str(a->name, b->name);
}

static int event_sort_field;

static int cmp_events(const void *pa, const void *pb)
{
    const struct job_event *a = pa, *b = pb;
    int c = 0;
    if (event_sort_field == 1)
        c = cmp_str(enum_name(&job_event_kind_names, (int)a->kind),
                    enum_name(&job_event_kind_names, (int)b->kind));
    else if (event_sort_field == 2)
        c = cmp_str(a->message, b->message);
    return c ? c : cmp_int(a->id, b->id);
}

/* Whether field names key: any case, a space or '_' for '-' ("AGE", "DISPLAY NAME"). */
static bool sort_key_is(const char *key, const char *field)
{
    for (; *key && *field; key++, field++) {
        char c = (char)tolower((unsigned char)*field);
        if (c == ' ' || c == '_')
            c = '-';
        if (c != *key)
            return false;
    }
    return *key == 0 && *field == 0;
}

/* --sort-by's value for what: its index, or -1 after saying which fields there are. */
static int sort_from(enum get_what what, const char *field, FILE *err)
{
    const char *const *f = sort_fields(what);
    for (int i = 0; f && f[i]; i++)
        if (sort_key_is(f[i], field))
            return i;
    struct strbuf sb = STRBUF_INIT;
    strbuf_adds(&sb, "trainjob get: cannot sort by '");
    cli_clean(&sb, field);
    if (f == NULL) {
        strbuf_adds(&sb, "': the catalog has no order to choose");
    } else {
        strbuf_adds(&sb, "'; sort by one of:");
        for (int i = 0; f[i]; i++)
            strbuf_addf(&sb, " %s", f[i]);
    }
    fprintf(err, "%s\n", strbuf_str(&sb));
    strbuf_free(&sb);
    return -1;
}

/* ---- rows --------------------------------------------------------------- */

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

static const char *const job_head[] = {"NAME", "DISPLAY NAME", "STATE",    "PRIORITY",
                                       "TYPE", "WORKERS",      "RESTARTS", "AGE",
                                       "POOL", "REASON",       "ID"};

/*
 * Writes v in decimal at p (room for 12 bytes), NUL-ended; returns the end.
 * A row's numbers without snprintf, ~10 % of `get jobs` over 50,000 rows.
 */
static char *put_int(char *p, int32_t v)
{
    char digits[12];
    size_t n = 0;
    uint32_t u = v < 0 ? 0u - (uint32_t)v : (uint32_t)v;
    do
        digits[n++] = (char)('0' + u % 10);
    while ((u /= 10) != 0);
    if (v < 0)
        *p++ = '-';
    while (n)
        *p++ = digits[--n];
    *p = '\0';
    return p;
}

/* "LEFT/RIGHT" at out, LEFT a count or NONE when absent. */
static void put_ratio(char out[32], bool has, int32_t left, const char *right)
{
    char *p = has ? put_int(out, left) : (char *)memcpy(out, NONE, sizeof NONE) + sizeof NONE - 1;
    *p++ = '/';
    size_t n = strlen(right);
    memcpy(p, right, n + 1);
}

/* The job's row: 11 cells (the last three only with -o wide; ID: jobspec_scheduler_id),
 * after its context's name if given. */
static void job_row_in(struct cli_table *t, const struct jobspec *j, const char *context)
{
    char workers[32], restarts[32], limit[16], total[16], when[16];
    put_int(total, job_total_workers(j));
    put_ratio(workers, j->has_ready_workers, j->ready_workers, total);
    int32_t lim = j->fault_tolerance.has_backoff_limit ? j->fault_tolerance.backoff_limit : 0;
    if (lim < 0)
        memcpy(limit, RESTARTS_UNLIMITED, sizeof RESTARTS_UNLIMITED);
    else
        put_int(limit, lim);
    put_ratio(restarts, j->has_restart_count, j->restart_count, limit);
    cli_age(j->create_time, when, sizeof when);
    /* a value this build does not know is shown as the server said it */
    const char *state = enum_name_or(&job_state_names, (int)j->state, j->state_other);
    const char *prio = j->scheduling.priority || j->scheduling.priority_other
                           ? enum_name_or(&priority_names, (int)j->scheduling.priority,
                                          j->scheduling.priority_other)
                           : NULL;
    const char *row[] = {j->name,
                         j->display_name,
                         state,
                         prio,
                         jobspec_is_idle(j) ? "idle" : "standard",
                         workers,
                         restarts,
                         when,
                         j->resource_pool.name,
                         j->state_message,
                         jobspec_scheduler_id(j)};
    if (context == NULL) {
        cli_table_row(t, row);
        return;
    }
    const char *with[1 + sizeof row / sizeof row[0]] = {context};
    memcpy(with + 1, row, sizeof row);
    cli_table_row(t, with);
}

static void job_row(struct cli_table *t, const struct jobspec *j)
{
    job_row_in(t, j, NULL);
}

static const char *const worker_head[] = {
    "NAME",         "ROLE", "NODE", "PHASE", "RESTARTS", "EXIT", "LAST STATE",
    "HELD DEVICES", "AGE",  "IP",   "HOST IP"};

static void worker_row(struct cli_table *t, const struct worker_info *w)
{
    char restarts[16], exit_code[160], when[16];
    struct strbuf last = STRBUF_INIT;
    worker_last_state_text(&w->last_state, time_now_ms(), false, &last);
    snprintf(restarts, sizeof restarts, "%d", (int)w->restarts);
    if (!w->has_exit_code)
        snprintf(exit_code, sizeof exit_code, NONE);
    else if (w->exit_reason && *w->exit_reason)
        snprintf(exit_code, sizeof exit_code, "%d %s", (int)w->exit_code, w->exit_reason);
    else
        snprintf(exit_code, sizeof exit_code, "%d", (int)w->exit_code);
    struct strbuf dev = STRBUF_INIT;
    worker_devices_text(w, &dev);
    cli_age(w->create_time, when, sizeof when);
    const char *row[] = {w->name,  w->role,   w->node_name,     worker_phase_text(w),
                         restarts, exit_code, last.len ? strbuf_str(&last) : NULL,
                         strbuf_str(&dev), when, w->ip, w->host_ip};
    cli_table_row(t, row);
    strbuf_free(&dev);
    strbuf_free(&last);
}

static const char *const event_head[] = {"TIME", "KIND", "MESSAGE"};

static void event_row(struct cli_table *t, const struct job_event *ev)
{
    /* No kind: the engine's note of how many older events it folded. */
    const char *kind = ev->kind ? enum_name(&job_event_kind_names, (int)ev->kind) : NULL;
    char when[TIMEFMT_RFC3339_LEN];
    time_shown(ev->time, when);
    const char *row[] = {ev->time ? when : NULL, kind, ev->message};
    cli_table_row(t, row);
}

/* Prints "KIND/NAME", sanitized, as kubectl's -o name. */
static void print_name(FILE *out, const char *kind, const char *name)
{
    struct strbuf sb = STRBUF_INIT;
    strbuf_addf(&sb, "%s/", kind);
    cli_clean(&sb, name);
    fprintf(out, "%s\n", strbuf_str(&sb));
    fflush(out);
    strbuf_free(&sb);
}

/* One object as a line of compact JSON (a watch's -o json); frees it. */
static void print_json_line(json_t *obj, FILE *out)
{
    cli_times_shown(obj);
    if (isatty(fileno(out)))
        cli_sanitize_tree(obj);
    char *s = json_dumps(obj, JSON_COMPACT | JSON_PRESERVE_ORDER);
    if (s == NULL)
        xalloc_die();
    fprintf(out, "%s\n", s);
    fflush(out);
    free(s);
    json_decref(obj);
}

/* A table of the columns the output shows, with its head unless --no-headers. */
static void table_start(struct cli_table *t, const struct get_opts *op)
{
    memset(t, 0, sizeof *t);
    const char *const *head = op->what == GET_JOBS      ? job_head
                              : op->what == GET_WORKERS ? worker_head
                                                        : event_head;
    t->cols = op->what == GET_EVENTS    ? 3u
              : op->what == GET_WORKERS ? (op->o != OUTPUT_WIDE ? 9u : 11u)
              : op->o != OUTPUT_WIDE    ? 8u
                                        : 11u;
    cli_table_row(t, head);
}

/*
 * A watch's columns of names from a fixed set (STATE, PHASE, KIND…) as wide
 * as the widest of them, and its numbers as wide as most get, from the
 * start: a change to SUSPENDING, or a tenth restart, moves no column (the
 * header is printed once, as kubectl -w does). Free text still widens.
 */
static void watch_widths(struct cli_table *t, const struct get_opts *op)
{
    if (op->what == GET_JOBS) {
        cli_table_least(t, 2, cli_enum_width(&job_state_names));
        cli_table_least(t, 3, cli_enum_width(&priority_names));
        cli_table_least(t, 4, strlen("standard"));
        cli_table_least(t, 5, strlen("100/100"));
        cli_table_least(t, 6, strlen("100/inf"));
        cli_table_least(t, 7, strlen("100d"));
    } else if (op->what == GET_WORKERS) {
        size_t phase = cli_enum_width(&worker_phase_names);
        cli_table_least(t, 3, phase > strlen("Stopped") ? phase : strlen("Stopped"));
        cli_table_least(t, 4, strlen("RESTARTS"));
        cli_table_least(t, 5, strlen("1 general error"));
        cli_table_least(t, 7, strlen("100d"));
    } else {
        cli_table_least(t, 0, strlen("2026-11-29T15:04:05Z"));
        cli_table_least(t, 1, cli_enum_width(&job_event_kind_names));
    }
}

/* ---- the lists ---------------------------------------------------------- */

/* What print_list needs of one kind of item: its name line, its JSON, its table row. */
struct list_kind {
    const char *kind;                                    /* -o name: KIND/NAME */
    const char *key;                                     /* -o json|yaml: {"KEY": [...]} */
    size_t size;                                         /* of one item */
    const char *(*name)(const void *item, char buf[32]); /* the item's, or made in buf */
    json_t *(*to_json)(const void *item);
    void (*row)(struct cli_table *t, const void *item);
};

/*
 * Prints n items in the chosen output. A watch (keep) prints JSON one object a
 * line and keeps the table's widths for the rows that come later.
 */
static void print_list(const struct get_opts *op, const struct list_kind *k, const void *items,
                       size_t n, struct cli_table *t, bool keep, FILE *out)
{
    const char *at = items;
    if (op->o == OUTPUT_NAME) {
        for (size_t i = 0; i < n; i++) {
            char buf[32];
            print_name(out, k->kind, k->name(at + i * k->size, buf));
        }
    } else if (op->o == OUTPUT_JSON && keep) {
        for (size_t i = 0; i < n; i++)
            print_json_line(k->to_json(at + i * k->size), out);
    } else if (op->o == OUTPUT_JSON || op->o == OUTPUT_YAML) {
        json_t *arr = json_array();
        for (size_t i = 0; i < n; i++)
            json_array_append_new(arr, k->to_json(at + i * k->size));
        cli_print_tree(json_pack("{s:o}", k->key, arr), op->o, out);
    } else {
        bool first = t->width == NULL;
        if (first)
            table_start(t, op);
        if (first && keep)
            watch_widths(t, op);
        for (size_t i = 0; i < n; i++)
            k->row(t, at + i * k->size);
        cli_table_print(t, out, first && op->no_headers ? 1 : 0, keep);
    }
}

static const char *job_name(const void *item, char buf[32])
{
    (void)buf;
    return ((const struct jobspec *)item)->name;
}
static json_t *job_json(const void *item)
{
    return jobspec_to_json(item);
}
static void job_row_of(struct cli_table *t, const void *item)
{
    job_row(t, item);
}
static const struct list_kind job_kind = {"job",    "training_jobs", sizeof(struct jobspec),
                                          job_name, job_json,        job_row_of};

static const char *worker_name(const void *item, char buf[32])
{
    (void)buf;
    return ((const struct worker_info *)item)->name;
}
static json_t *worker_json(const void *item)
{
    return worker_info_to_json(item);
}
static void worker_row_of(struct cli_table *t, const void *item)
{
    worker_row(t, item);
}
static const struct list_kind worker_kind = {"worker",    "workers",   sizeof(struct worker_info),
                                             worker_name, worker_json, worker_row_of};

static const char *event_name(const void *item, char buf[32])
{
    snprintf(buf, 32, "%lld", (long long)((const struct job_event *)item)->id);
    return buf;
}
static json_t *event_json(const void *item)
{
    return job_event_to_json(item);
}
static void event_row_of(struct cli_table *t, const void *item)
{
    event_row(t, item);
}
static const struct list_kind event_kind = {"event",    "events",   sizeof(struct job_event),
                                            event_name, event_json, event_row_of};

/* The server-side filter of get jobs: state and creator. */
static void jobs_filter(const struct get_opts *op, struct strbuf *f)
{
    /* The filter language has no OR: several states are kept here (job_matches). */
    if (op->state && strchr(op->state, ',') == NULL)
        strbuf_addf(f, "state='%s'", op->state);
    if (op->user) {
        if (f->len)
            strbuf_adds(f, " AND ");
        strbuf_addf(f, "user_name='%s'", op->user);
    }
}

/* Whether a job (from a watch) passes get jobs' filters. */
static bool job_matches(const struct get_opts *op, const struct jobspec *j)
{
    if (op->state) {
        const char *name = enum_name_or(&job_state_names, (int)j->state, j->state_other);
        size_t len = strlen(name);
        bool in = false;
        for (const char *p = op->state; *p && !in; p += strcspn(p, ",") + (p[strcspn(p, ",")] != 0))
            in = strcspn(p, ",") == len && strncmp(p, name, len) == 0;
        if (!in)
            return false;
    }
    if (op->user && cmp_str(j->ownership.user_name, op->user) != 0)
        return false;
    return true;
}

/* `get jobs`: every page, filtered by the server, sorted here when asked. */
/* Says on err that no job matched get jobs' filters. */
static void no_jobs(struct session *s, const struct get_opts *op, FILE *err)
{
    struct strbuf line = STRBUF_INIT;
    strbuf_adds(&line, "No jobs in workspace ");
    cli_clean(&line, s->b->target.workspace);
    if (op->state)
        strbuf_addf(&line, " in state %s", op->state);
    if (op->user) {
        strbuf_adds(&line, " created by ");
        cli_clean(&line, op->user);
    }
    fprintf(err, "%s.\n", strbuf_str(&line));
    strbuf_free(&line);
}

struct job_rows {
    const struct get_opts *op;
    struct cli_table t;
    size_t count;
    FILE *out;
};

/* backend_job_fn of an unsorted table or name list: the job's row as its page comes (not kept). */
static int job_rows_add(void *ctx, struct jobspec *job)
{
    struct job_rows *r = ctx;
    if (!job_matches(r->op, job))
        return 0;
    if (r->op->o == OUTPUT_NAME)
        print_name(r->out, "job", job->name);
    else
        job_row(&r->t, job);
    r->count++;
    return 0;
}

/* Drops the jobs of l that get jobs' filters leave out (several states are not the server's). */
static void jobs_keep(const struct get_opts *op, struct job_list *l)
{
    size_t k = 0;
    for (size_t i = 0; i < l->count; i++) {
        if (job_matches(op, &l->jobs[i]))
            l->jobs[k++] = l->jobs[i];
        else
            jobspec_free(&l->jobs[i]);
    }
    l->count = k;
}

static int get_jobs(struct session *s, const struct get_opts *op, FILE *out, FILE *err)
{
    struct strbuf filter = STRBUF_INIT;
    jobs_filter(op, &filter);
    const char *f = filter.len ? strbuf_str(&filter) : NULL;
    struct api_error e;
    bool whole = op->o == OUTPUT_JSON || op->o == OUTPUT_YAML;
    enum backend_status st;
    if (op->sort < 0 && !whole) {
        /* In the server's order: a row is made as its page comes and no job is kept. */
        struct job_rows r = {.op = op, .out = out};
        if (op->o != OUTPUT_NAME)
            table_start(&r.t, op);
        st = backend_list_each(s->b, f, true, job_rows_add, &r, NULL, &e);
        strbuf_free(&filter);
        if (st == BACKEND_OK && r.count == 0)
            no_jobs(s, op, err);
        else if (st == BACKEND_OK && op->o != OUTPUT_NAME)
            cli_table_print(&r.t, out, op->no_headers ? 1 : 0, false);
        cli_table_free(&r.t);
        return st == BACKEND_OK ? EXIT_OK : cli_failed(err, st, &e, false);
    }
    struct job_list l;
    st = backend_list_all(s->b, f, !whole, &l, &e);
    strbuf_free(&filter);
    if (st != BACKEND_OK)
        return cli_failed(err, st, &e, false);
    jobs_keep(op, &l);
    if (op->sort >= 0) {
        job_sort_field = op->sort;
        qsort(l.jobs, l.count, sizeof *l.jobs, cmp_jobs);
    }
    if (l.count == 0 && !whole) {
        no_jobs(s, op, err);
    } else {
        struct cli_table t = {0};
        print_list(op, &job_kind, l.jobs, l.count, &t, false, out);
    }
    job_list_free(&l);
    return EXIT_OK;
}

/* One job of `get jobs --context a,b` and the context it is in. */
struct job_in {
    const struct jobspec *job;
    const char *context;
};

static int cmp_jobs_in(const void *pa, const void *pb)
{
    const struct job_in *a = pa, *b = pb;
    int c = cmp_jobs(a->job, b->job);
    return c ? c : strcmp(a->context, b->context);
}

static int resolve_mine(struct session *s, struct get_opts *op, char **who, FILE *err);

/*
 * `get jobs --context a,b` (or all): every context's jobs in one table, a
 * CONTEXT column first, each context asked with its own session (--mine:
 * whom each backend says you are). A context that cannot be opened or
 * reached is said on err, named, and the others are still listed; the exit
 * status is then that failure's.
 */
static int get_jobs_in(const struct cli_globals *g, const struct get_opts *op, FILE *out, FILE *err,
                       bool mine)
{
    struct strbuf why = STRBUF_INIT;
    char **names;
    size_t n = context_spec_names(g->context, &names, &why);
    if (n == 0) {
        fprintf(err, "trainjob get: %s\n", strbuf_str(&why));
        strbuf_free(&why);
        return EXIT_USAGE;
    }
    strbuf_free(&why);
    struct job_list *lists = xcalloc(n, sizeof *lists);
    size_t total = 0;
    int rc = EXIT_OK;
    for (size_t i = 0; i < n; i++) {
        struct session_target t = {g->workspace, names[i], NULL};
        struct session s;
        if (session_open(&t, &s, err) != 0) {
            rc = rc ? rc : EXIT_USAGE;
            continue;
        }
        struct get_opts one = *op;
        char *who = NULL;
        int r = mine ? resolve_mine(&s, &one, &who, err) : EXIT_OK;
        struct strbuf filter = STRBUF_INIT;
        jobs_filter(&one, &filter);
        struct api_error e;
        if (r == EXIT_OK) {
            enum backend_status st =
                backend_list_all(s.b, filter.len ? strbuf_str(&filter) : NULL, true, &lists[i], &e);
            if (st != BACKEND_OK) {
                fprintf(err, "trainjob get: context %s:\n", names[i]);
                r = cli_failed(err, st, &e, false);
            } else {
                jobs_keep(&one, &lists[i]);
            }
        }
        rc = rc ? rc : r;
        total += lists[i].count;
        strbuf_free(&filter);
        free(who);
        session_close(&s);
    }
    struct job_in *rows = xcalloc(total ? total : 1, sizeof *rows);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < lists[i].count; j++)
            rows[k++] = (struct job_in){&lists[i].jobs[j], names[i]};
    if (op->sort >= 0) {
        job_sort_field = op->sort;
        qsort(rows, total, sizeof *rows, cmp_jobs_in);
    }
    if (total == 0) {
        fputs("No jobs in these contexts.\n", err);
    } else {
        struct cli_table t;
        memset(&t, 0, sizeof t);
        const size_t n_head = sizeof job_head / sizeof job_head[0];
        t.cols = op->o == OUTPUT_WIDE ? 1 + n_head : 9u;
        const char *head[1 + sizeof job_head / sizeof job_head[0]] = {"CONTEXT"};
        memcpy(head + 1, job_head, sizeof job_head);
        cli_table_row(&t, head);
        for (size_t i = 0; i < total; i++)
            job_row_in(&t, rows[i].job, rows[i].context);
        cli_table_print(&t, out, op->no_headers ? 1 : 0, false);
        cli_table_free(&t);
    }
    free(rows);
    for (size_t i = 0; i < n; i++) {
        job_list_free(&lists[i]);
        free(names[i]);
    }
    free(lists);
    free(names);
    return rc;
}

/* `get job NAME`: the job as YAML (default) or JSON, or job/NAME. */
static int get_job(struct session *s, const struct get_opts *op, FILE *out, FILE *err)
{
    struct jobspec job;
    struct api_error e;
    enum backend_status st = backend_get(s->b, op->name, &job, &e);
    if (st != BACKEND_OK)
        return cli_failed(err, st, &e, false);
    if (op->o == OUTPUT_NAME)
        print_name(out, "job", job.name ? job.name : op->name);
    else
        cli_print_tree(jobspec_to_json(&job), op->o == OUTPUT_JSON ? OUTPUT_JSON : OUTPUT_YAML,
                       out);
    jobspec_free(&job);
    return EXIT_OK;
}

/* `get workers NAME`: the worker table, or JSON/YAML, or worker/NAME lines. */
static int get_workers(struct session *s, const struct get_opts *op, FILE *out, FILE *err)
{
    struct worker_list l;
    struct api_error e;
    enum backend_status st = backend_workers(s->b, op->name, &l, &e);
    if (st != BACKEND_OK)
        return cli_failed(err, st, &e, false);
    if (op->sort >= 0) {
        worker_sort_field = op->sort;
        qsort(l.workers, l.count, sizeof *l.workers, cmp_workers);
    }
    if (l.count == 0 && (op->o == OUTPUT_TABLE || op->o == OUTPUT_WIDE)) {
        fputs("No workers (the job has not been scheduled).\n", err);
    } else {
        struct cli_table t = {0};
        print_list(op, &worker_kind, l.workers, l.count, &t, false, out);
    }
    worker_list_free(&l);
    return EXIT_OK;
}

/* `get events NAME`: time, kind and message of each event. */
static int get_events(struct session *s, const struct get_opts *op, FILE *out, FILE *err,
                      int64_t *last_id, struct cli_table *t, bool keep)
{
    struct job_event_list l;
    struct api_error e;
    enum backend_status st = backend_events(s->b, op->name, &l, &e);
    if (st != BACKEND_OK)
        return cli_failed(err, st, &e, false);
    if (op->sort >= 0) {
        event_sort_field = op->sort;
        qsort(l.events, l.count, sizeof *l.events, cmp_events);
    }
    print_list(op, &event_kind, l.events, l.count, t, keep, out);
    for (size_t i = 0; last_id && i < l.count; i++)
        if (l.events[i].id > *last_id)
            *last_id = l.events[i].id;
    job_event_list_free(&l);
    return EXIT_OK;
}

/* ---- the catalog -------------------------------------------------------- */

/* The priorities the caller may set in workspace ws (api/catalog's rule), blank-separated. */
static void catalog_priorities(const struct catalog *cat, const char *ws, struct strbuf *sb)
{
    const char *sep = "";
    for (int p = PRIORITY_NORMAL; p <= PRIORITY_HIGHEST; p++) {
        if (!catalog_priority_allowed(cat, ws, p))
            continue;
        strbuf_addf(sb, "%s%s", sep, enum_name(&priority_names, p));
        sep = " ";
    }
}

/* `get catalog`: pools, specs, images and priorities, as tables or the backend's JSON/YAML. */
static int get_catalog(struct session *s, const struct get_opts *op, FILE *out, FILE *err)
{
    struct catalog cat;
    struct api_error e;
    enum backend_status st = backend_catalog(s->b, &cat, &e);
    if (st != BACKEND_OK)
        return cli_failed(err, st, &e, false);
    struct strbuf prio = STRBUF_INIT;
    catalog_priorities(&cat, s->b->target.workspace, &prio);
    if (op->o == OUTPUT_JSON || op->o == OUTPUT_YAML) {
        json_t *tree = catalog_to_json(&cat);
        json_t *arr = json_array();
        char *dup = xstrdup(strbuf_str(&prio));
        for (char *save = NULL, *p = strtok_r(dup, " ", &save); p; p = strtok_r(NULL, " ", &save))
            json_array_append_new(arr, json_string(p));
        free(dup);
        json_object_set_new(tree, "priorities", arr);
        cli_print_tree(tree, op->o, out);
    } else {
        struct strbuf line = STRBUF_INIT;
        strbuf_adds(&line, "Workspace ");
        cli_clean(&line, s->b->target.workspace);
        if (cat.user) {
            strbuf_adds(&line, ", as ");
            cli_clean(&line, cat.user);
        }
        strbuf_addf(&line, "; priorities you may set: %s", strbuf_str(&prio));
        const struct catalog_workspace *cw = catalog_workspace(&cat, s->b->target.workspace);
        if (cw && cw->priorities != 0 && cw->priorities_note &&
            (!catalog_ws_priority_allowed(cw, PRIORITY_HIGH) ||
             !catalog_ws_priority_allowed(cw, PRIORITY_HIGHEST))) {
            strbuf_adds(&line, " (");
            cli_clean(&line, cw->priorities_note);
            strbuf_adds(&line, ")");
        }
        if (cat.run_as) {
            /* Who the backend runs the caller's jobs as (trainjobd: never root). */
            strbuf_adds(&line, "\nYour jobs run as ");
            cli_clean(&line, cat.run_as);
        }
        fprintf(out, "%s\n\n", strbuf_str(&line));
        strbuf_free(&line);

        struct cli_table t = {.cols = 5};
        const char *ph[] = {"POOL", "TYPE", "ZONES", "SPEC", "PER WORKER"};
        cli_table_row(&t, ph);
        for (size_t i = 0; i < cat.pool_count; i++) {
            const struct catalog_pool *p = &cat.pools[i];
            struct strbuf zones = STRBUF_INIT;
            for (size_t z = 0; z < p->zone_count; z++)
                strbuf_addf(&zones, "%s%s", z ? "," : "", p->zones[z]);
            for (size_t k = 0; k < (p->spec_count ? p->spec_count : 1); k++) {
                const struct catalog_spec *sp = p->spec_count ? &p->specs[k] : NULL;
                struct strbuf what = STRBUF_INIT;
                if (sp && sp->devices)
                    strbuf_addf(&what, "%d× %s%s, ", sp->devices,
                                sp->device_type ? sp->device_type : "GPU",
                                sp->simulated ? " (simulated)" : "");
                if (sp) {
                    strbuf_addf(&what, "%d CPU, ", sp->vcpus);
                    sizefmt_add_mib(&what, sp->memory_mib);
                }
                const char *row[] = {p->name, pool_type_label(p->type), strbuf_str(&zones),
                                     sp ? sp->name : NULL, strbuf_str(&what)};
                cli_table_row(&t, row);
                strbuf_free(&what);
            }
            strbuf_free(&zones);
        }
        cli_table_print(&t, out, op->no_headers ? 1 : 0, false);

        t = (struct cli_table){.cols = 3};
        const char *ih[] = {"IMAGE", "SOURCE", "DESCRIPTION"};
        cli_table_row(&t, ih);
        for (size_t i = 0; i < cat.image_count; i++) {
            const struct catalog_image *im = &cat.images[i];
            const char *row[] = {im->path, im->source, im->description};
            cli_table_row(&t, row);
        }
        fputc('\n', out);
        cli_table_print(&t, out, op->no_headers ? 1 : 0, false);

        if (cat.volume_count > 0) {
            t = (struct cli_table){.cols = 4};
            const char *vh[] = {"VOLUME", "NAME", "ZONE", "PATH ON THE NODES"};
            cli_table_row(&t, vh);
            for (size_t i = 0; i < cat.volume_count; i++) {
                const struct catalog_volume *v = &cat.volumes[i];
                const char *row[] = {v->id, v->display_name, v->zone, v->path};
                cli_table_row(&t, row);
            }
            fputc('\n', out);
            cli_table_print(&t, out, op->no_headers ? 1 : 0, false);
        }
    }
    strbuf_free(&prio);
    catalog_free(&cat);
    return EXIT_OK;
}

/* ---- watch -------------------------------------------------------------- */

/* What a watch has printed: the row last shown per job or worker, the last event. */
struct watch_ctx {
    const struct get_opts *op;
    FILE *out, *err;
    bool ended; /* we ended it: the job is gone */
    struct cli_table t;
    bool synced;
    struct jobspec *pending; /* jobs before SYNCED, printed as the first list */
    size_t pending_count;
    char **keys; /* "name\tstate…" last printed, per job or worker */
    size_t key_count;
    int64_t last_event;
};

/* What a change must alter to be printed: the row as it would be shown. */
static char *job_key(const struct jobspec *j)
{
    return xasprintf("%s\t%d\t%d\t%d\t%d\t%s\t%d", j->name ? j->name : "", (int)j->state,
                     (int)j->ready_workers, (int)j->restart_count, (int)j->scheduling.priority,
                     j->state_message ? j->state_message : "", (int)j->faulty_workers);
}

static char *worker_key(const struct worker_info *w)
{
    return xasprintf("%s\t%d\t%d\t%d\t%d\t%s", w->name ? w->name : "", (int)w->phase,
                     (int)w->restarts, (int)w->has_exit_code, (int)w->exit_code,
                     w->node_name ? w->node_name : "");
}

/* True when key is new or differs from the one kept for its name (then kept); takes key. */
static bool key_changed(struct watch_ctx *w, char *key)
{
    size_t nlen = strcspn(key, "\t");
    for (size_t i = 0; i < w->key_count; i++) {
        if (strncmp(w->keys[i], key, nlen) == 0 && w->keys[i][nlen] == '\t') {
            bool changed = strcmp(w->keys[i], key) != 0;
            free(w->keys[i]);
            w->keys[i] = key;
            return changed;
        }
    }
    w->keys = xreallocarray(w->keys, w->key_count + 1, sizeof *w->keys);
    w->keys[w->key_count++] = key;
    return true;
}

/* Forgets what was shown of a job (it is gone); false when it was never shown. */
static bool key_forget(struct watch_ctx *w, const char *name)
{
    size_t nlen = strlen(name ? name : "");
    for (size_t i = 0; name && i < w->key_count; i++) {
        if (strncmp(w->keys[i], name, nlen) == 0 && w->keys[i][nlen] == '\t') {
            free(w->keys[i]);
            w->keys[i] = w->keys[--w->key_count];
            return true;
        }
    }
    return false;
}

/* backend_watch_fn of get -w: the first list at SYNCED, then a line per change. */
static int on_watch(void *ctx, const struct watch_message *m)
{
    struct watch_ctx *w = ctx;
    const struct get_opts *op = w->op;
    if (op->what == GET_JOBS) {
        if (m->kind == WATCH_JOB && job_matches(op, &m->job)) {
            if (!key_changed(w, job_key(&m->job)))
                return 0;
            if (!w->synced) {
                w->pending = xreallocarray(w->pending, w->pending_count + 1, sizeof *w->pending);
                jobspec_copy(&w->pending[w->pending_count++], &m->job);
                return 0;
            }
            print_list(op, &job_kind, &m->job, 1, &w->t, true, w->out);
        } else if (m->kind == WATCH_DELETED && w->synced && key_forget(w, m->job.name)) {
            struct jobspec gone = m->job; /* name and uid: the row says DELETED */
            gone.state = JOB_STATE_DELETED;
            print_list(op, &job_kind, &gone, 1, &w->t, true, w->out);
        } else if (m->kind == WATCH_SYNCED && !w->synced) {
            w->synced = true;
            if (op->sort >= 0) {
                job_sort_field = op->sort;
                qsort(w->pending, w->pending_count, sizeof *w->pending, cmp_jobs);
            }
            print_list(op, &job_kind, w->pending, w->pending_count, &w->t, true, w->out);
        }
        return ferror(w->out) ? 1 : 0;
    }
    if (op->what == GET_WORKERS && m->kind == WATCH_JOB && m->has_workers &&
        cmp_str(m->job.name, op->name) == 0) {
        for (size_t i = 0; i < m->workers.count; i++) {
            const struct worker_info *wi = &m->workers.workers[i];
            if (key_changed(w, worker_key(wi)) && w->synced)
                print_list(op, &worker_kind, wi, 1, &w->t, true, w->out);
        }
    } else if (op->what == GET_EVENTS && m->kind == WATCH_EVENT &&
               cmp_str(m->event.job, op->name) == 0 && m->event.id > w->last_event) {
        w->last_event = m->event.id;
        print_list(op, &event_kind, &m->event, 1, &w->t, true, w->out);
    } else if (m->kind == WATCH_SYNCED) {
        w->synced = true;
    } else if (m->kind == WATCH_DELETED && cmp_str(m->job.name, op->name) == 0 && w->synced) {
        struct strbuf line = STRBUF_INIT;
        strbuf_adds(&line, "trainjob: job ");
        cli_clean(&line, op->name);
        strbuf_adds(&line, " was deleted");
        fprintf(w->err, "%s\n", strbuf_str(&line));
        strbuf_free(&line);
        w->ended = true;
        return 1;
    }
    return ferror(w->out) ? 1 : 0;
}

/*
 * get -w: the list as get prints it, then a line per change from the
 * backend's watch stream, until Ctrl-C, the job is deleted, or the stream
 * ends (the server went away: exit 3).
 */
static int get_watch(struct session *s, const struct get_opts *op, FILE *out, FILE *err)
{
    struct watch_ctx w = {0};
    w.op = op;
    w.out = out;
    w.err = err;
    int rc = EXIT_OK;
    if (op->what == GET_WORKERS) {
        /* The first list from the workers call: a job's workers come with its watch message only
         * when it changes. Keys are seeded there so the first change prints once. */
        struct worker_list l;
        struct api_error e;
        enum backend_status st = backend_workers(s->b, op->name, &l, &e);
        if (st != BACKEND_OK)
            return cli_failed(err, st, &e, false);
        if (op->sort >= 0) {
            worker_sort_field = op->sort;
            qsort(l.workers, l.count, sizeof *l.workers, cmp_workers);
        }
        print_list(op, &worker_kind, l.workers, l.count, &w.t, true, out);
        for (size_t i = 0; i < l.count; i++)
            key_changed(&w, worker_key(&l.workers[i]));
        worker_list_free(&l);
    } else if (op->what == GET_EVENTS) {
        if ((rc = get_events(s, op, out, err, &w.last_event, &w.t, true)) != EXIT_OK)
            return rc;
    }
    struct api_error e;
    memset(&e, 0, sizeof e);
    enum backend_status st = backend_watch(s->b, on_watch, &w, &e);
    if (st != BACKEND_OK)
        rc = cli_failed(err, st, &e, false);
    else if (!ferror(out) && !w.ended) {
        fputs("trainjob: the watch stream ended\n", err);
        rc = EXIT_UNREACHABLE;
    }
    for (size_t i = 0; i < w.pending_count; i++)
        jobspec_free(&w.pending[i]);
    free(w.pending);
    for (size_t i = 0; i < w.key_count; i++)
        free(w.keys[i]);
    free(w.keys);
    cli_table_free(&w.t);
    return rc;
}

/* ---- the verb ----------------------------------------------------------- */

/* --mine: who the backend says the caller is (its catalog's user). */
static int resolve_mine(struct session *s, struct get_opts *op, char **who, FILE *err)
{
    struct catalog cat;
    struct api_error e;
    enum backend_status st = backend_catalog(s->b, &cat, &e);
    if (st != BACKEND_OK)
        return cli_failed(err, st, &e, false);
    if (cat.user == NULL || *cat.user == '\0') {
        fputs("trainjob get: --mine: this backend does not say who you are; use --user NAME\n",
              err);
        catalog_free(&cat);
        return EXIT_USAGE;
    }
    *who = xstrdup(cat.user);
    op->user = *who;
    catalog_free(&cat);
    return EXIT_OK;
}

/* Checks a filter value: the server's filter syntax quotes with ' and has no escape. */
static bool filter_safe(const char *v)
{
    return *v && strchr(v, '\'') == NULL && strchr(v, '\\') == NULL;
}

/*
 * --state's value: one state or several separated by commas, in any case
 * ("failed", "RUNNING,FAILED"); the same list in capitals in buf, or false
 * after saying which word is not a state (or that the list is too long).
 */
static bool states_canonical(const char *arg, char *buf, size_t size, FILE *err)
{
    struct strbuf out = STRBUF_INIT;
    const char *p = arg;
    for (;;) {
        size_t len = strcspn(p, ",");
        struct strbuf word = STRBUF_INIT;
        for (size_t i = 0; i < len; i++)
            strbuf_addc(&word, (char)toupper((unsigned char)p[i]));
        const char *w = strbuf_str(&word);
        if (!filter_safe(w) || enum_value(&job_state_names, w) <= 0) {
            struct strbuf line = STRBUF_INIT;
            strbuf_adds(&line, "trainjob get: --state takes job states such as RUNNING or "
                               "RUNNING,FAILED, not '");
            cli_clean(&line, len ? w : arg);
            strbuf_adds(&line, "'; states:");
            for (size_t v = 1; v < job_state_names.count; v++)
                strbuf_addf(&line, " %s", job_state_names.names[v]);
            fprintf(err, "%s\n", strbuf_str(&line));
            strbuf_free(&line);
            strbuf_free(&word);
            strbuf_free(&out);
            return false;
        }
        if (out.len)
            strbuf_addc(&out, ',');
        strbuf_adds(&out, w);
        strbuf_free(&word);
        if (p[len] == 0)
            break;
        p += len + 1;
    }
    bool fits = out.len < size;
    if (fits)
        memcpy(buf, out.buf, out.len + 1);
    else
        fprintf(err, "trainjob get: --state: a list of over %zu characters\n", size - 1);
    strbuf_free(&out);
    return fits;
}

/* `get jobs|job|workers|events|catalog`: parses what to get, then asks the backend. */
int cmd_get(const struct cli_globals *g, int argc, char **argv, FILE *out, FILE *err)
{
    enum { OPT_STATE = 0x200, OPT_NO_HEADERS, OPT_SORT_BY, OPT_MINE, OPT_USER };
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"state", required_argument, NULL, OPT_STATE},
        {"watch", no_argument, NULL, 'w'},
        {"no-headers", no_argument, NULL, OPT_NO_HEADERS},
        {"sort-by", required_argument, NULL, OPT_SORT_BY},
        {"mine", no_argument, NULL, OPT_MINE},
        {"user", required_argument, NULL, OPT_USER},
        {"help", no_argument, NULL, 'h'},
        CLI_GLOBAL_OPTIONS,
        {NULL, 0, NULL, 0},
    };
    struct cli_globals local = *g;
    struct get_opts op = {GET_JOBS, NULL, OUTPUT_TABLE, false, -1, NULL, NULL};
    const char *sort_by = NULL;
    bool watch = false, mine = false;
    int c, o;
    optind = 0;
    opterr = 0;
    while ((c = cli_next_option(argc, argv, "o:wh", longopts, &local)) != -1) {
        switch (c) {
        case 0:
            break;
        case 'o':
            if ((o = cli_output_from(optarg)) < 0) {
                fprintf(err, "trainjob get: -o takes json, yaml, wide or name, not '%s'\n", optarg);
                return EXIT_USAGE;
            }
            op.o = (enum output)o;
            break;
        case OPT_STATE:
            op.state = optarg;
            break;
        case 'w':
            watch = true;
            break;
        case OPT_NO_HEADERS:
            op.no_headers = true;
            break;
        case OPT_SORT_BY:
            sort_by = optarg;
            break;
        case OPT_MINE:
            mine = true;
            break;
        case OPT_USER:
            op.user = optarg;
            break;
        case 'h':
            fputs(get_usage, out);
            return EXIT_OK;
        default:
            return cli_bad_option("get", "o:wh", argv, err);
        }
    }
    int args = argc - optind;
    const char *what_s = args > 0 ? argv[optind] : NULL;
    op.name = args > 1 ? argv[optind + 1] : NULL;
    if (what_s && (strcmp(what_s, "jobs") == 0 || strcmp(what_s, "job") == 0))
        op.what = GET_JOBS;
    else if (what_s && (strcmp(what_s, "workers") == 0 || strcmp(what_s, "worker") == 0))
        op.what = GET_WORKERS;
    else if (what_s && (strcmp(what_s, "events") == 0 || strcmp(what_s, "event") == 0))
        op.what = GET_EVENTS;
    else if (what_s && strcmp(what_s, "catalog") == 0)
        op.what = GET_CATALOG;
    else {
        if (what_s) {
            static const char *const kinds[] = {"jobs",   "job",   "workers", "worker",
                                                "events", "event", "catalog"};
            const char *near = fuzzy_nearest(what_s, kinds, sizeof kinds / sizeof *kinds);
            struct strbuf line = STRBUF_INIT;
            strbuf_adds(&line, "trainjob get: cannot get '");
            cli_clean(&line, what_s);
            strbuf_adds(&line, "'");
            if (near)
                strbuf_addf(&line, " (did you mean %s?)", near);
            fprintf(err, "%s\n", strbuf_str(&line));
            strbuf_free(&line);
        }
        fputs(get_usage, err);
        return EXIT_USAGE;
    }
    bool job_list = op.what == GET_JOBS && op.name == NULL;
    if (args > 2 || ((op.what == GET_WORKERS || op.what == GET_EVENTS) && op.name == NULL) ||
        (op.what == GET_CATALOG && op.name)) {
        fputs(get_usage, err);
        return EXIT_USAGE;
    }
    if (!job_list && (op.state || op.user || mine)) {
        fputs("trainjob get: --state, --mine and --user filter the job list only\n", err);
        return EXIT_USAGE;
    }
    if (mine && op.user) {
        fputs("trainjob get: --mine and --user name the creator twice; give one\n", err);
        return EXIT_USAGE;
    }
    char states[256]; /* --state in capitals, as the server names states */
    if (op.state && !states_canonical(op.state, states, sizeof states, err))
        return EXIT_USAGE;
    if (op.state)
        op.state = states;
    if (op.user && !filter_safe(op.user)) {
        fputs("trainjob get: --user takes a user name (no quotes or backslashes)\n", err);
        return EXIT_USAGE;
    }
    if (op.o == OUTPUT_WIDE &&
        (op.what == GET_EVENTS || op.what == GET_CATALOG || (op.what == GET_JOBS && op.name))) {
        fputs("trainjob get: -o wide is for the job and worker tables; use json or yaml\n", err);
        return EXIT_USAGE;
    }
    if (op.o == OUTPUT_NAME && op.what == GET_CATALOG) {
        fputs("trainjob get: -o name is for jobs, workers and events\n", err);
        return EXIT_USAGE;
    }
    if (sort_by && (op.what == GET_CATALOG || (op.what == GET_JOBS && op.name))) {
        fputs("trainjob get: --sort-by orders lists: jobs, workers or events\n", err);
        return EXIT_USAGE;
    }
    if (sort_by && (op.sort = sort_from(op.what, sort_by, err)) < 0)
        return EXIT_USAGE;
    if (watch && (op.what == GET_CATALOG || (op.what == GET_JOBS && op.name))) {
        fputs("trainjob get: -w watches lists: jobs, workers NAME or events NAME\n", err);
        return EXIT_USAGE;
    }
    if (watch && op.o == OUTPUT_YAML) {
        fputs("trainjob get: -w prints a line per change: use -o json, name, wide or a table\n",
              err);
        return EXIT_USAGE;
    }
    if (context_spec_several(local.context)) {
        /* Several contexts: the job list as a table, a CONTEXT column first. */
        if (!job_list || watch || (op.o != OUTPUT_TABLE && op.o != OUTPUT_WIDE) || local.endpoint) {
            fputs("trainjob get: --context a,b (or all) lists jobs as a table (or -o wide), "
                  "without -w or --endpoint\n",
                  err);
            return EXIT_USAGE;
        }
        return get_jobs_in(&local, &op, out, err, mine);
    }
    struct session s;
    int rc = cli_session_open(&local, &s, err);
    if (rc != EXIT_OK)
        return rc;
    char *who = NULL;
    if (mine && (rc = resolve_mine(&s, &op, &who, err)) != EXIT_OK)
        goto out;
    if (watch)
        rc = get_watch(&s, &op, out, err);
    else if (job_list)
        rc = get_jobs(&s, &op, out, err);
    else if (op.what == GET_JOBS)
        rc = get_job(&s, &op, out, err);
    else if (op.what == GET_WORKERS)
        rc = get_workers(&s, &op, out, err);
    else if (op.what == GET_EVENTS) {
        struct cli_table t = {0};
        rc = get_events(&s, &op, out, err, NULL, &t, false);
    } else
        rc = get_catalog(&s, &op, out, err);
out:
    free(who);
    session_close(&s);
    return rc;
}
