/*
 * engine: trainjobd's core — opening the state (configuration, store, jobs,
 * watchers), the requests the routes hand over, persistence of each job as
 * one JSON record, events and watch streams. What happens to a job once it
 * is accepted (scheduling, workers, faults) is lifecycle.c's.
 */
#include "engine/engine.h"

#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <poll.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/apierror.h"
#include "api/catalog.h"
#include "api/catalog_json.h"
#include "api/finding.h"
#include "api/jobspec_defaults.h"
#include "api/jobspec_json.h"
#include "api/schema.h"
#include "api/validate.h"
#include "engine/cgroup.h"
#include "engine/fault.h"
#include "engine/jobfiles.h"
#include "engine/logfollow.h"
#include "engine/state.h"
#include "engine/store.h"
#include "engine/stream.h"
#include "util/fileio.h"
#include "util/hmap.h"
#include "util/loop.h"
#include "util/strbuf.h"
#include "util/timefmt.h"
#include "util/xalloc.h"

#define MAX_BODY (1u << 20)
#define MAX_BATCH 200

void engine_log(const char *fmt, ...)
{
    char stamp[TIMEFMT_RFC3339_LEN];
    time_rfc3339(time_now_ms(), stamp);
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s trainjobd: ", stamp);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* ---- persistence: one JSON record per job ---------------------------- */

static const char *const after_stop_tab[] = {"NONE",    "SUSPEND", "RESTART",
                                             "REQUEUE", "FAIL",    "DELETE"};
static const struct enum_names after_stop_names = {after_stop_tab, sizeof after_stop_tab /
                                                                       sizeof after_stop_tab[0]};

static const struct field proc_fields[] = {
    F_INT(struct runner_proc, shim_pid),
    F_INT(struct runner_proc, worker_pgid),
    F_I64(struct runner_proc, shim_start_ticks),
};
static const struct object_type proc_type = SCHEMA_OBJ(proc_fields);

static const struct field eworker_fields[] = {
    F_STR(struct eworker, name),
    F_STR(struct eworker, role),
    F_INT(struct eworker, index),
    F_STR(struct eworker, node),
    F_STR(struct eworker, devices),
    F_INT(struct eworker, port),
    F_ENUMERATION(struct eworker, phase, worker_phase_names),
    F_INT(struct eworker, restarts),
    F_OPT_INT32(struct eworker, exit_code),
    F_INT(struct eworker, attempt),
    F_FLAG(struct eworker, live),
    F_FLAG(struct eworker, starting),
    {"proc", F_OBJECT, offsetof(struct eworker, proc), SCHEMA_NO_FLAG, NULL, &proc_type, 0},
    F_STR(struct eworker, create_time),
    F_STR(struct eworker, start_time),
    F_STR(struct eworker, finish_time),
};
static const struct object_type eworker_type = SCHEMA_ELEM(struct eworker, eworker_fields);

static const struct field ejob_fields[] = {
    F_I64(struct ejob, seq),
    F_INT(struct ejob, restarts),
    F_STRINGS(struct ejob, excluded, excluded_count),
    F_LIST(struct ejob, workers, worker_count, eworker_type),
    F_ENUMERATION(struct ejob, after_stop, after_stop_names),
    F_STR(struct ejob, after_stop_reason),
    F_STR(struct ejob, preempted_by),
    F_INT(struct ejob, gpus),
    F_INT(struct ejob, cpus),
    F_I64(struct ejob, memory_mib),
    F_INT(struct ejob, crash_loops),
    F_I64(struct ejob, backoff_until_ms),
    F_STR(struct ejob, backoff_worker),
    F_STR(struct ejob, backoff_reason),
    F_I64(struct ejob, events_folded),
};
static const struct object_type ejob_type = SCHEMA_OBJ(ejob_fields);

void ejob_free(struct ejob *job)
{
    if (job == NULL)
        return;
    jobspec_free(&job->spec);
    free(job->shown_job);
    free(job->shown_workers);
    free(job->shown_summary);
    for (size_t i = 0; i < job->held_event_count; i++)
        free(job->held_events[i].json);
    free(job->held_events);
    schema_free(&ejob_type, job);
    free(job);
}

static char *job_record(const struct ejob *job)
{
    json_t *rec = schema_encode(&ejob_type, job);
    json_object_set_new(rec, "job", jobspec_to_json(&job->spec));
    char *s = json_dumps(rec, JSON_COMPACT);
    json_decref(rec);
    if (s == NULL)
        xalloc_die();
    return s;
}

static struct ejob *job_from_record(const char *json)
{
    json_t *rec = json_loads(json, 0, NULL);
    if (rec == NULL)
        return NULL;
    struct ejob *job = xcalloc(1, sizeof *job);
    struct findings fs = FINDINGS_INIT;
    jobspec_init(&job->spec);
    schema_decode(rec, &ejob_type, job, SCHEMA_LENIENT, "", &fs);
    jobspec_from_json(json_object_get(rec, "job"), JOBSPEC_LENIENT, &job->spec, &fs);
    findings_free(&fs);
    json_decref(rec);
    if (job->spec.uid == NULL || job->spec.name == NULL || job->spec.workspace_name == NULL) {
        ejob_free(job);
        return NULL;
    }
    return job;
}

static json_t *workers_json(const struct ejob *job);

/* The output fields derived from the workers: ready workers, restarts used. */
static void derive_outputs(struct ejob *job)
{
    int ready = 0, faulty = 0;
    for (size_t i = 0; i < job->worker_count; i++) {
        const struct eworker *w = &job->workers[i];
        ready += w->phase == WORKER_RUNNING;
        faulty +=
            w->phase == WORKER_FAILED || w->restarts > 0 || (w->has_exit_code && w->exit_code);
    }
    job->spec.has_faulty_workers = true;
    job->spec.faulty_workers = faulty;
    job->spec.has_ready_workers = true;
    job->spec.ready_workers = ready;
    job->spec.has_restart_count = true;
    job->spec.restart_count = job->restarts;
}

/* j (taken) as compact JSON text. */
static char *dump_json(json_t *j)
{
    char *text = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    if (text == NULL)
        xalloc_die();
    return text;
}

/* The job as it is now on disk becomes what clients see. */
static void take_snapshot(struct ejob *job)
{
    free(job->shown_job);
    free(job->shown_workers);
    job->shown_job = dump_json(jobspec_to_json(&job->spec));
    job->shown_workers = dump_json(workers_json(job));
    struct strbuf sum = STRBUF_INIT;
    jobspec_summary_write(&job->spec, &sum);
    free(job->shown_summary);
    job->shown_summary = strbuf_detach(&sum, NULL);
}

static void retry_saves(void *ctx);

static void arm_retry(struct engine *eng)
{
    if (eng->save_timer == 0) {
        struct config_limits lim;
        config_effective_limits(&eng->cfg, &lim);
        eng->save_timer = loop_add_timer(eng->loop, lim.save_retry_ms, retry_saves, eng);
    }
}

/* A save the store refused: memory stays ahead of the disk until a retry succeeds. */
static void save_failed(struct engine *eng, struct ejob *job, const char *why)
{
    if (!job->unsaved) {
        json_t *saved = job->shown_job ? json_loads(job->shown_job, 0, NULL) : NULL;
        const char *shown = json_string_value(json_object_get(saved, "state"));
        engine_log("saving job %s: %s; it keeps showing its last saved state (%s) and is saved "
                   "again when the disk allows",
                   job->spec.name, why, shown ? shown : "none");
        json_decref(saved);
    }
    job->unsaved = true;
    arm_retry(eng);
}

/* A save reached the disk: clients may see it. */
static void save_done(struct ejob *job)
{
    if (job->unsaved)
        engine_log("job %s: saved again after the store refused it", job->spec.name);
    job->unsaved = false;
    take_snapshot(job);
}

int engine_save(struct engine *eng, struct ejob *job)
{
    derive_outputs(job);
    eng->changes++; /* what a kept scheduling pass read may have changed */
    char *rec = job_record(job);
    struct strbuf err = STRBUF_INIT;
    enum store_status st = store_job_update(eng->store, job->spec.uid, rec, &err);
    free(rec);
    if (st != STORE_OK) {
        save_failed(eng, job, strbuf_str(&err));
        strbuf_free(&err);
        return -1;
    }
    strbuf_free(&err);
    if (eng->batch_depth > 0) {
        /* On disk only once the batch commits: shown then. */
        if (!job->in_batch) {
            eng->batch = xreallocarray(eng->batch, eng->batch_count + 1, sizeof *eng->batch);
            eng->batch[eng->batch_count++] = job;
            job->in_batch = true;
        }
        return 0;
    }
    save_done(job);
    return 0;
}

bool engine_job_saved(const struct engine *eng, const struct ejob *job)
{
    (void)eng;
    return !job->unsaved && !job->in_batch;
}

/* ---- the job table ---------------------------------------------------- */

/*
 * eng->jobs holds the jobs in seq order (lists and watch syncs walk it);
 * by_name and by_uid find one in O(1) whatever the count (issue 14: a
 * linear scan made a GET 3 ms at 50k jobs and every POST's name check
 * O(N)).
 */
struct name_key {
    const char *ws, *name;
};

static bool same_name(const void *item, const void *key)
{
    const struct ejob *j = item;
    const struct name_key *k = key;
    return strcmp(j->spec.name, k->name) == 0 && strcmp(j->spec.workspace_name, k->ws) == 0;
}

static bool same_uid(const void *item, const void *key)
{
    return strcmp(((const struct ejob *)item)->spec.uid, key) == 0;
}

static uint64_t uid_hash(const char *uid)
{
    return hmap_hash(uid, strlen(uid));
}

struct ejob *engine_find(struct engine *eng, const char *ws, const char *name)
{
    if (ws == NULL || name == NULL)
        return NULL;
    struct name_key k = {ws, name};
    return hmap_get(&eng->by_name, hmap_hash2(ws, name), same_name, &k);
}

struct ejob *engine_find_uid(struct engine *eng, const char *uid)
{
    if (uid == NULL)
        return NULL;
    return hmap_get(&eng->by_uid, uid_hash(uid), same_uid, uid);
}

/* Appends a job (its seq above every other's) and indexes it. */
static void add_job(struct engine *eng, struct ejob *job)
{
    if (eng->job_count == eng->job_cap) {
        eng->job_cap = eng->job_cap ? eng->job_cap * 2 : 64;
        eng->jobs = xreallocarray(eng->jobs, eng->job_cap, sizeof *eng->jobs);
    }
    eng->jobs[eng->job_count++] = job;
    if (job->seq >= eng->next_seq)
        eng->next_seq = job->seq + 1;
    hmap_put(&eng->by_name, hmap_hash2(job->spec.workspace_name, job->spec.name), job);
    hmap_put(&eng->by_uid, uid_hash(job->spec.uid), job);
}

/* The position of the first job with a seq above seq (eng->jobs is in seq order). */
static size_t first_after(const struct engine *eng, uint64_t seq)
{
    size_t lo = 0, hi = eng->job_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (eng->jobs[mid]->seq <= seq)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Takes job out of the table and its indexes (not freed). */
static void drop_job(struct engine *eng, struct ejob *job)
{
    hmap_remove(&eng->by_name, hmap_hash2(job->spec.workspace_name, job->spec.name), job);
    hmap_remove(&eng->by_uid, uid_hash(job->spec.uid), job);
    size_t i = first_after(eng, job->seq - 1);
    if (i >= eng->job_count || eng->jobs[i] != job) /* not in seq order after all: look */
        for (i = 0; i < eng->job_count && eng->jobs[i] != job; i++)
            ;
    if (i < eng->job_count) {
        memmove(&eng->jobs[i], &eng->jobs[i + 1], (eng->job_count - i - 1) * sizeof job);
        eng->job_count--;
    }
}

/* ---- watch streams and events ----------------------------------------- */

/* The view a watch stream asked for: kept as its stream offset, which a watch does not use. */
static enum job_view watcher_view(const struct stream *s)
{
    return stream_offset(s) == JOB_VIEW_BASIC ? JOB_VIEW_BASIC : JOB_VIEW_FULL;
}

/* Does a watcher of ws want its JOB messages in view? */
static bool watched_in(const struct engine *eng, const char *ws, enum job_view view)
{
    for (size_t i = 0; i < eng->watcher_count; i++)
        if (watcher_view(eng->watchers[i]) == view && strcmp(stream_tag(eng->watchers[i]), ws) == 0)
            return true;
    return false;
}

/* Sends line (len bytes, its '\n' included) to the watchers of ws that asked for view (< 0: all).
 */
static void broadcast_line(struct engine *eng, const char *ws, int view, const char *line,
                           size_t len)
{
    engine_prune_watchers(eng);
    for (size_t i = 0; i < eng->watcher_count; i++) {
        struct stream *s = eng->watchers[i];
        if (strcmp(stream_tag(s), ws) == 0 && (view < 0 || (int)watcher_view(s) == view))
            stream_write(s, line, len);
    }
}

/*
 * Sends msg (taken) as one line to the watchers of ws that asked for view
 * (< 0: all of them); inside a batch it waits for the commit (it may tell of
 * what is saved there).
 */
static void broadcast_view(struct engine *eng, const char *ws, int view, json_t *msg)
{
    char *text = json_dumps(msg, JSON_COMPACT);
    json_decref(msg);
    if (text == NULL)
        xalloc_die();
    char *line = xasprintf("%s\n", text);
    free(text);
    if (eng->batch_depth > 0) {
        eng->batch_lines =
            xreallocarray(eng->batch_lines, eng->batch_line_count + 1, sizeof *eng->batch_lines);
        eng->batch_lines[eng->batch_line_count++] = (struct batch_line){xstrdup(ws), line, view};
        return;
    }
    broadcast_line(eng, ws, view, line, strlen(line));
    free(line);
}

static void broadcast(struct engine *eng, const char *ws, json_t *msg)
{
    broadcast_view(eng, ws, -1, msg);
}

/* The job as last saved (GET, lists, replies): never a state the disk does not have. */
static json_t *job_json(const struct ejob *job)
{
    json_t *saved = job->shown_job ? json_loads(job->shown_job, 0, NULL) : NULL;
    return saved ? saved : jobspec_to_json(&job->spec);
}

/* Its workers as last saved. */
static json_t *saved_workers(const struct ejob *job)
{
    json_t *saved = job->shown_workers ? json_loads(job->shown_workers, 0, NULL) : NULL;
    return saved ? saved : json_array();
}

/*
 * Appends a watch stream's JOB line for the job as last saved: the whole job
 * with its workers, or its summary alone.
 */
static void job_message(const struct ejob *job, enum job_view view, struct strbuf *out)
{
    if (view == JOB_VIEW_BASIC) {
        strbuf_adds(out, "{\"type\":\"JOB\",\"job\":");
        strbuf_adds(out, job->shown_summary);
        strbuf_adds(out, "}\n");
        return;
    }
    /* Spliced from the saved texts: no JSON is built or parsed per message. */
    strbuf_adds(out, "{\"type\":\"JOB\",\"job\":");
    strbuf_adds(out, job->shown_job ? job->shown_job : "{}");
    strbuf_adds(out, ",\"workers\":");
    strbuf_adds(out, job->shown_workers ? job->shown_workers : "[]");
    strbuf_adds(out, "}\n");
}

/* Watchers hear the job as saved; a job whose save failed or waits for its batch is not sent. */
void engine_publish(struct engine *eng, struct ejob *job)
{
    if (eng->watcher_count == 0 || !engine_job_saved(eng, job) || job->shown_job == NULL)
        return;
    for (int v = JOB_VIEW_FULL; v <= JOB_VIEW_BASIC; v++) {
        if (!watched_in(eng, job->spec.workspace_name, (enum job_view)v))
            continue;
        struct strbuf line = STRBUF_INIT;
        job_message(job, (enum job_view)v, &line);
        broadcast_line(eng, job->spec.workspace_name, v, line.buf, line.len);
        strbuf_free(&line);
    }
}

void engine_batch_begin(struct engine *eng)
{
    if (eng->batch_depth++ == 0)
        store_begin(eng->store, NULL); /* a failure shows at the commit */
}

void engine_batch_end(struct engine *eng)
{
    if (eng->batch_depth == 0 || --eng->batch_depth > 0)
        return;
    struct strbuf err = STRBUF_INIT;
    bool ok = store_commit(eng->store, &err) == STORE_OK;
    if (!ok)
        store_rollback(eng->store);
    size_t count = eng->batch_count;
    struct ejob **jobs = eng->batch;
    eng->batch = NULL;
    eng->batch_count = 0;
    for (size_t i = 0; i < count; i++) {
        jobs[i]->in_batch = false;
        if (ok && !jobs[i]->unsaved)
            save_done(jobs[i]);
        else if (!ok)
            save_failed(eng, jobs[i], strbuf_str(&err));
    }
    if (!ok && eng->batch_line_count)
        engine_log("%zu event(s) not recorded: %s", eng->batch_line_count, strbuf_str(&err));
    for (size_t i = 0; i < eng->batch_line_count; i++) {
        struct batch_line *bl = &eng->batch_lines[i];
        if (ok)
            broadcast_line(eng, bl->ws, bl->view, bl->line, strlen(bl->line));
        free(bl->ws);
        free(bl->line);
    }
    free(eng->batch_lines);
    eng->batch_lines = NULL;
    eng->batch_line_count = 0;
    for (size_t i = 0; ok && i < count; i++)
        engine_publish(eng, jobs[i]);
    free(jobs);
    strbuf_free(&err);
}

/* Most events a job whose save failed holds; older ones are dropped (and logged). */
#define MAX_HELD_EVENTS 100

/* Stores one event (its JSON without id), folds old ones, and tells watchers; false on failure. */
static bool record_event(struct engine *eng, struct ejob *job, int64_t time_ms, const char *json,
                         bool quiet)
{
    struct strbuf err = STRBUF_INIT;
    int64_t id = 0;
    struct config_limits lim;
    config_effective_limits(&eng->cfg, &lim);
    bool stored =
        store_event_add(eng->store, job->spec.uid, time_ms, json, &id, &err) == STORE_OK &&
        store_events_trim(eng->store, job->spec.uid, lim.events_per_job, &job->events_folded,
                          &err) == STORE_OK;
    if (!stored && !quiet)
        engine_log("event for %s not recorded: %s", job->spec.name, strbuf_str(&err));
    strbuf_free(&err);
    if (stored && eng->watcher_count) {
        json_t *e = json_loads(json, 0, NULL);
        if (e != NULL) {
            json_object_set_new(e, "id", json_integer(id));
            broadcast(eng, job->spec.workspace_name,
                      json_pack("{s:s, s:o}", "type", "EVENT", "event", e));
        }
    }
    return stored;
}

/* Holds an event of a job whose state is not saved: it must not be told before that state. */
static void hold_event(struct ejob *job, int64_t time_ms, const char *json)
{
    if (job->held_event_count == MAX_HELD_EVENTS) {
        engine_log("job %s: an event dropped while its saves fail: %s", job->spec.name,
                   job->held_events[0].json);
        free(job->held_events[0].json);
        memmove(job->held_events, job->held_events + 1,
                (MAX_HELD_EVENTS - 1) * sizeof *job->held_events);
        job->held_event_count--;
    }
    job->held_events =
        xreallocarray(job->held_events, job->held_event_count + 1, sizeof *job->held_events);
    job->held_events[job->held_event_count++] = (struct held_event){time_ms, xstrdup(json)};
}

/* Records the events held while the job could not be saved; false while the store still refuses. */
static bool release_events(struct engine *eng, struct ejob *job)
{
    size_t done = 0;
    while (done < job->held_event_count && record_event(eng, job, job->held_events[done].time_ms,
                                                        job->held_events[done].json, true)) {
        free(job->held_events[done].json);
        done++;
    }
    memmove(job->held_events, job->held_events + done,
            (job->held_event_count - done) * sizeof *job->held_events);
    job->held_event_count -= done;
    return job->held_event_count == 0;
}

void engine_event(struct engine *eng, struct ejob *job, struct job_event *ev)
{
    char stamp[TIMEFMT_RFC3339_LEN];
    int64_t now = time_now_ms();
    time_rfc3339(now, stamp);
    ev->time = stamp;
    ev->job = job->spec.name;
    json_t *j = job_event_to_json(ev);
    char *s = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    if (s == NULL)
        xalloc_die();
    /* A job whose last save failed: its events wait for the state they tell of. */
    if (job->unsaved || job->held_event_count > 0)
        hold_event(job, now, s);
    else
        record_event(eng, job, now, s, false);
    free(s);
    ev->id = 0;
    ev->time = NULL;
    ev->job = NULL;
}

bool job_state_terminal(enum job_state s)
{
    return s == JOB_STATE_SUCCEEDED || s == JOB_STATE_FAILED || s == JOB_STATE_SUSPENDED ||
           s == JOB_STATE_DELETED;
}

static void stamp(char **field)
{
    char buf[TIMEFMT_RFC3339_LEN];
    time_rfc3339(time_now_ms(), buf);
    free(*field);
    *field = xstrdup(buf);
}

/* Do two reasons say the same thing but for their numbers ("needs 16 GPUs, 8 free")? */
static bool same_but_numbers(const char *a, const char *b)
{
    if (a == NULL || b == NULL)
        return a == b;
    while (*a || *b) {
        while (*a >= '0' && *a <= '9')
            a++;
        while (*b >= '0' && *b <= '9')
            b++;
        if (*a != *b)
            return false;
        if (*a)
            a++, b++;
    }
    return true;
}

void engine_set_state(struct engine *eng, struct ejob *job, enum job_state state,
                      const char *message)
{
    enum job_state old = job->spec.state;
    bool message_changed = (message == NULL) != (job->spec.state_message == NULL) ||
                           (message && strcmp(message, job->spec.state_message) != 0);
    job->spec.state = state;
    char *job_prev_message = job->spec.state_message;
    job->spec.state_message = message && message[0] ? xstrdup(message) : NULL;
    stamp(&job->spec.update_time);
    if (state == JOB_STATE_RUNNING && old != JOB_STATE_RUNNING)
        stamp(&job->spec.start_time);
    if (state == JOB_STATE_SUSPENDED)
        stamp(&job->spec.suspend_time);
    if (state == JOB_STATE_SUCCEEDED || state == JOB_STATE_FAILED)
        stamp(&job->spec.complete_time);
    engine_save(eng, job);
    engine_publish(eng, job);
    /* A waiting reason whose numbers move with free capacity is not news. */
    bool news = old != state || (message_changed && !same_but_numbers(message, job_prev_message));
    free(job_prev_message);
    if (news) {
        struct job_event ev = {0};
        ev.kind = old != state ? EVENT_STATE : EVENT_WAITING;
        ev.state = state;
        char text[512];
        if (old != state)
            snprintf(text, sizeof text, "%s → %s%s%s", enum_name(&job_state_names, (int)old),
                     enum_name(&job_state_names, (int)state), message && *message ? ": " : "",
                     message ? message : "");
        else
            snprintf(text, sizeof text, "%s", message ? message : "");
        ev.message = text;
        engine_event(eng, job, &ev);
    }
}

/* The job is gone from the store: tell watchers, drop it and its files. */
static void forget_job(struct engine *eng, struct ejob *job)
{
    eng->changes++; /* what a kept scheduling pass read may have changed */
    if (eng->watcher_count)
        broadcast(eng, job->spec.workspace_name,
                  json_pack("{s:s, s:{s:s, s:s}}", "type", "DELETED", "job", "name", job->spec.name,
                            "uid", job->spec.uid));
    lifecycle_forget(eng, job);
    drop_job(eng, job);
    for (size_t i = 0; i < eng->batch_count; i++)
        if (eng->batch[i] == job)
            eng->batch[i--] = eng->batch[--eng->batch_count];
    /* Its workers are gone: its logs, status files and directories go with it. */
    jobfiles_remove(eng->state_dir, job->spec.uid);
    ejob_free(job);
}

void engine_remove(struct engine *eng, struct ejob *job)
{
    struct strbuf err = STRBUF_INIT;
    if (store_job_delete(eng->store, job->spec.uid, &err) == STORE_ERROR) {
        /* Still on disk: kept (DELETING) until a retry removes it, files and all. */
        if (!job->remove_pending)
            engine_log("deleting %s: %s; retried when the disk allows", job->spec.name,
                       strbuf_str(&err));
        job->remove_pending = true;
        arm_retry(eng);
        strbuf_free(&err);
        return;
    }
    strbuf_free(&err);
    forget_job(eng, job);
}

/* The status files of ended workers, once their ends are on disk. */
static void forget_status_files(struct engine *eng, struct ejob *job)
{
    for (size_t i = 0; i < job->worker_count; i++) {
        const struct eworker *w = &job->workers[i];
        if (w->live || !w->has_exit_code)
            continue;
        char *status = lifecycle_status_path(eng, job, w);
        char *pid = xasprintf("%s.pid", status);
        unlink(status);
        unlink(pid);
        free(pid);
        free(status);
    }
}

/* The save timer: saves (and deletes) the store refused before, until it takes them. */
static void retry_saves(void *ctx)
{
    struct engine *eng = ctx;
    eng->save_timer = 0;
    for (size_t i = 0; i < eng->job_count;) {
        struct ejob *job = eng->jobs[i];
        if (job->remove_pending) {
            struct strbuf err = STRBUF_INIT;
            bool gone = store_job_delete(eng->store, job->spec.uid, &err) != STORE_ERROR;
            strbuf_free(&err);
            if (gone) {
                engine_log("job %s: deleted after the store refused it", job->spec.name);
                forget_job(eng, job);
                continue; /* the next job moved into slot i */
            }
            arm_retry(eng);
        } else if (job->unsaved && engine_save(eng, job) == 0) {
            engine_publish(eng, job);
            forget_status_files(eng, job);
            eng->spawn_wanted = true; /* starts it recorded may go now */
        }
        if (!job->unsaved && job->held_event_count > 0 && !release_events(eng, job))
            arm_retry(eng);
        i++;
    }
    lifecycle_spawn_more(eng);
}

/* ---- inotify: worker ends and log growth ------------------------------ */

/*
 * Status files are named <uid>.<attempt>.<worker> (see lifecycle_status_path);
 * their .pid companion matters to a start a shim of an earlier trainjobd owes.
 */
static void status_file_appeared(struct engine *eng, const char *fname)
{
    char uid[64];
    int attempt;
    int n = 0;
    if (sscanf(fname, "%63[^.].%d.%n", uid, &attempt, &n) != 2 || n == 0)
        return;
    const char *worker = fname + n;
    if (strstr(worker, ".tmp"))
        return;
    size_t len = strlen(worker);
    bool pidfile = len > 4 && strcmp(worker + len - 4, ".pid") == 0;
    if (pidfile)
        len -= 4;
    else if (strchr(worker, '.'))
        return;
    struct ejob *job = engine_find_uid(eng, uid);
    if (job == NULL)
        return;
    for (size_t i = 0; i < job->worker_count; i++) {
        struct eworker *w = &job->workers[i];
        if (strncmp(w->name, worker, len) != 0 || w->name[len] != '\0' || w->attempt != attempt ||
            !w->live)
            continue;
        if (pidfile) {
            if (w->starting)
                shimwatch_pidfile(eng, job, w);
            return;
        }
        char *path = lifecycle_status_path(eng, job, w);
        int code;
        int rc = runner_read_status(path, &code);
        free(path);
        if (rc == 1)
            lifecycle_worker_ended(eng, job, w, code);
        return;
    }
}

/* A worker log changed: its followers read on (a rotation counted when FILE.1 appeared). */
static void poke_followers(struct engine *eng, const char *fname, bool rotated)
{
    for (size_t i = 0; i < eng->follower_count;) {
        struct stream *s = eng->followers[i];
        if (stream_abandoned(s) || stream_closed(s)) {
            stream_unref(s);
            eng->followers[i] = eng->followers[--eng->follower_count];
            continue;
        }
        if (logfollow_matches(s, fname)) {
            if (rotated)
                logfollow_rotated(s);
            logfollow_poke(s, false);
        }
        i++;
    }
}

static void on_inotify(void *ctx, int fd, short revents)
{
    struct engine *eng = ctx;
    char buf[8192] __attribute__((aligned(__alignof__(struct inotify_event))));
    (void)revents;
    for (;;) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n <= 0)
            break;
        for (char *p = buf; p < buf + n;) {
            struct inotify_event *ev = (struct inotify_event *)p;
            if (ev->len > 0) {
                if (ev->wd == eng->status_wd)
                    status_file_appeared(eng, ev->name);
                else if (ev->wd == eng->log_wd)
                    poke_followers(eng, ev->name, (ev->mask & IN_MOVED_TO) != 0);
            }
            p += sizeof *ev + ev->len;
        }
    }
}

/* ---- opening ----------------------------------------------------------- */

static char *current_user(void)
{
    struct passwd *pw = getpwuid(getuid());
    if (pw && pw->pw_name)
        return xstrdup(pw->pw_name);
    return xasprintf("uid%ld", (long)getuid());
}

static int load_config(struct engine *eng, struct strbuf *err)
{
    char *text = NULL;
    size_t len = 0;
    struct strbuf io = STRBUF_INIT;
    if (access(eng->config_path, F_OK) != 0) {
        struct machine_info mi;
        config_probe_machine(&mi);
        char *user = current_user();
        config_default(&eng->cfg, &mi, user, eng->state_dir, eng->opt.demo);
        free(user);
        machine_info_free(&mi);
        struct strbuf out = STRBUF_INIT;
        config_write(&eng->cfg, &out);
        char *dir = xstrdup(eng->config_path);
        char *slash = strrchr(dir, '/');
        if (slash && slash != dir)
            *slash = '\0';
        int rc = (slash ? file_mkdirs(dir, 0700, err) : 0) ||
                 file_write_atomic(eng->config_path, out.buf, out.len, 0600, err);
        free(dir);
        strbuf_free(&out);
        if (rc == 0)
            engine_log("wrote a default configuration to %s%s", eng->config_path,
                       eng->opt.demo ? " (with simulated demo nodes)" : "");
        return rc ? -1 : 0;
    }
    if (file_read_all(eng->config_path, 4u << 20, &text, &len, &io) != 0) {
        strbuf_addf(err, "%s", strbuf_str(&io));
        strbuf_free(&io);
        return -1;
    }
    struct findings fs = FINDINGS_INIT;
    int rc = config_parse(eng->config_path, text, len, &eng->cfg, &fs);
    for (size_t i = 0; i < fs.count; i++) {
        const struct finding *f = &fs.items[i];
        if (rc != 0 && f->severity != SEVERITY_ERROR)
            continue;
        strbuf_addf(err, "%s%s:%d:%d: %s: %s%s%s", err->len ? "\n" : "", eng->config_path, f->line,
                    f->col, severity_name(f->severity), f->path, f->path[0] ? ": " : "",
                    f->message);
    }
    if (rc == 0 && err->len) {
        engine_log("%s", strbuf_str(err));
        strbuf_reset(err);
    }
    findings_free(&fs);
    free(text);
    strbuf_free(&io);
    return rc;
}

/* Loading the store: the engine, and the uids of records it could not read (files kept). */
struct load_ctx {
    struct engine *eng;
    char **skipped;
    size_t skipped_count;
};

static int load_job(void *ctx, const char *uid, uint64_t seq, const char *json)
{
    struct load_ctx *lc = ctx;
    struct engine *eng = lc->eng;
    struct ejob *job = job_from_record(json);
    if (job == NULL) {
        engine_log("job %s: unreadable record, skipped", uid);
        lc->skipped = xreallocarray(lc->skipped, lc->skipped_count + 1, sizeof *lc->skipped);
        lc->skipped[lc->skipped_count++] = xstrdup(uid);
        return 0;
    }
    job->seq = seq;
    derive_outputs(job);
    take_snapshot(job); /* it is what the disk holds */
    add_job(eng, job);
    return 0;
}

/* Does the store have a job uid (read or not)? */
static bool uid_in_store(void *ctx, const char *uid)
{
    struct load_ctx *lc = ctx;
    if (engine_find_uid(lc->eng, uid) != NULL)
        return true;
    for (size_t i = 0; i < lc->skipped_count; i++)
        if (strcmp(lc->skipped[i], uid) == 0)
            return true;
    return false;
}

int engine_open(const struct engine_options *opt, struct loop *lp, struct engine **out,
                struct strbuf *err)
{
    struct engine *eng = xcalloc(1, sizeof *eng);
    eng->opt = *opt;
    eng->loop = lp;
    eng->inotify_fd = -1;
    eng->config_path = xstrdup(opt->config_path);
    eng->state_dir = xstrdup(opt->state_dir);
    eng->shim_path = xstrdup(opt->shim_path);
    eng->status_dir = xasprintf("%s/status", opt->state_dir);
    eng->log_dir = xasprintf("%s/logs", opt->state_dir);
    eng->next_seq = 1;
    if (eng->opt.grace_ms <= 0)
        eng->opt.grace_ms = 10000;
    if (eng->opt.log_cap == 0)
        eng->opt.log_cap = 16u << 20;
    if (eng->opt.start_timeout_ms <= 0)
        eng->opt.start_timeout_ms = RUNNER_REPORT_TIMEOUT_MS;
    /* A pidfd per running shim and a pipe per start in flight: room beyond the default 1024. */
    struct rlimit nofile;
    if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
        nofile.rlim_cur = nofile.rlim_max;
        setrlimit(RLIMIT_NOFILE, &nofile);
    }

    if (file_mkdirs(eng->status_dir, 0700, err) != 0 || file_mkdirs(eng->log_dir, 0700, err) != 0)
        goto fail;
    if (load_config(eng, err) != 0)
        goto fail;
    eng->cfg.engine_user = current_user(); /* the Unix socket's owner: an admin always */
    for (size_t i = 0; i < eng->cfg.volume_count; i++) {
        struct strbuf ignored = STRBUF_INIT;
        if (eng->cfg.volumes[i].path && file_mkdirs(eng->cfg.volumes[i].path, 0755, &ignored))
            engine_log("volume %s: %s", eng->cfg.volumes[i].id, strbuf_str(&ignored));
        strbuf_free(&ignored);
    }
    char *db = xasprintf("%s/engine.db", opt->state_dir);
    enum store_status st = store_open(db, &eng->store, err);
    free(db);
    if (st != STORE_OK)
        goto fail;
    struct load_ctx lc = {eng, NULL, 0};
    bool loaded = store_jobs_each(eng->store, load_job, &lc, err) == STORE_OK;
    /* What a crash left of deleted jobs (files of uids the store does not have). */
    if (loaded)
        jobfiles_collect(eng->state_dir, uid_in_store, &lc);
    for (size_t i = 0; i < lc.skipped_count; i++)
        free(lc.skipped[i]);
    free(lc.skipped);
    if (!loaded)
        goto fail;
    uint64_t max = store_max_seq(eng->store);
    if (max >= eng->next_seq)
        eng->next_seq = max + 1;

    eng->inotify_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (eng->inotify_fd < 0) {
        strbuf_addf(err, "inotify: %s", strerror(errno));
        goto fail;
    }
    eng->status_wd = inotify_add_watch(eng->inotify_fd, eng->status_dir, IN_MOVED_TO);
    eng->log_wd =
        inotify_add_watch(eng->inotify_fd, eng->log_dir, IN_MODIFY | IN_CREATE | IN_MOVED_TO);
    if (eng->status_wd < 0 || eng->log_wd < 0) {
        strbuf_addf(err, "inotify on %s: %s", eng->state_dir, strerror(errno));
        goto fail;
    }
    loop_add_fd(lp, eng->inotify_fd, POLLIN, on_inotify, eng);
    eng->sandbox = runner_sandbox_available();
    if (!eng->sandbox)
        engine_log("bubblewrap not available: workers run without a sandbox; volumes and "
                   "the SSH directory are passed as TRAINJOB_MOUNT_* variables");

    for (size_t i = 0; i < eng->job_count; i++)
        lifecycle_adopt(eng, eng->jobs[i]);
    lifecycle_schedule_soon(eng);
    *out = eng;
    return 0;
fail:
    engine_close(eng);
    return -1;
}

void engine_close(struct engine *eng)
{
    if (eng == NULL)
        return;
    if (eng->inotify_fd >= 0) {
        loop_remove_fd(eng->loop, eng->inotify_fd);
        close(eng->inotify_fd);
    }
    if (eng->save_timer)
        loop_cancel(eng->loop, eng->save_timer);
    eng->save_timer = 0;
    if (eng->backoff_timer)
        loop_cancel(eng->loop, eng->backoff_timer);
    /* A last try for what the disk refused; what still fails is in the log. */
    for (size_t i = 0; eng->store && i < eng->job_count; i++) {
        struct ejob *job = eng->jobs[i];
        if (!job->unsaved)
            continue;
        char *rec = job_record(job);
        if (store_job_update(eng->store, job->spec.uid, rec, NULL) != STORE_OK)
            engine_log("job %s: not saved at exit; after a restart it is as last saved",
                       job->spec.name);
        free(rec);
    }
    /* Workers keep running under their shims; starts in flight report to the next trainjobd. */
    eng->spawn_wanted = false;
    lifecycle_sched_free(eng);
    if (eng->trim_timer)
        loop_cancel(eng->loop, eng->trim_timer);
    for (size_t i = 0; i < eng->job_count; i++) {
        lifecycle_forget(eng, eng->jobs[i]);
        lifecycle_cancel_kill(eng, eng->jobs[i]);
        ejob_free(eng->jobs[i]);
    }
    if (eng->sched_timer)
        loop_cancel(eng->loop, eng->sched_timer);
    if (eng->spawn_timer)
        loop_cancel(eng->loop, eng->spawn_timer);
    free(eng->jobs);
    hmap_free(&eng->by_name);
    hmap_free(&eng->by_uid);
    for (size_t i = 0; i < eng->watcher_count; i++) {
        stream_close(eng->watchers[i]);
        stream_unref(eng->watchers[i]);
    }
    free(eng->watchers);
    for (size_t i = 0; i < eng->follower_count; i++) {
        stream_close(eng->followers[i]);
        stream_unref(eng->followers[i]);
    }
    free(eng->followers);
    if (eng->store)
        store_close(eng->store);
    config_free(&eng->cfg);
    free(eng->config_path);
    free(eng->state_dir);
    free(eng->shim_path);
    free(eng->status_dir);
    free(eng->log_dir);
    free(eng);
}

const char *engine_subscription(const struct engine *eng)
{
    return eng->cfg.subscription ? eng->cfg.subscription : "local";
}

const char *engine_resource_group(const struct engine *eng)
{
    return eng->cfg.resource_group ? eng->cfg.resource_group : "default";
}

const char *engine_zone(const struct engine *eng)
{
    return eng->cfg.zone ? eng->cfg.zone : "local-1z";
}

const char *engine_key_user(const struct engine *eng, const char *access_key, const char **secret)
{
    const struct config_key *k = config_key(&eng->cfg, access_key);
    if (k == NULL)
        return NULL;
    *secret = k->secret_key;
    return k->user;
}

/* ---- requests ----------------------------------------------------------- */

static int member_check(struct engine *eng, const char *user, const char *ws, struct api_error *err)
{
    bool exists = false;
    for (size_t i = 0; i < eng->cfg.workspace_count; i++)
        exists |= strcmp(eng->cfg.workspaces[i].name, ws) == 0;
    if (!exists)
        return api_error_set(err, 404, "WorkspaceNotFound", "workspace_name",
                             "workspace '%s' does not exist", ws);
    if (config_role(&eng->cfg, ws, user) == MEMBER_NONE)
        return api_error_set(err, 403, "PermissionDenied", "workspace_name",
                             "user '%s' is not a member of workspace '%s'", user, ws);
    return 0;
}

/* A change the store refused: 503, the job showing its last saved state until a retry. */
static int not_saved(const struct ejob *job, struct api_error *err)
{
    if (!job->unsaved)
        return 0;
    return api_error_set(err, 503, "StoreFailed", "",
                         "job '%s': the change is not on disk yet (the engine log says why); it "
                         "is kept and saved when the disk allows, and until then the job shows "
                         "its last saved state",
                         job->spec.name);
}

static int find_job(struct engine *eng, const char *user, const char *ws, const char *name,
                    struct ejob **out, struct api_error *err)
{
    int rc = member_check(eng, user, ws, err);
    if (rc)
        return rc;
    *out = engine_find(eng, ws, name);
    if (*out == NULL || (*out)->spec.state == JOB_STATE_DELETED)
        return api_error_set(err, 404, "NotFound", "name",
                             "training job '%s' not found in workspace '%s'", name, ws);
    return 0;
}

int engine_find_readable(struct engine *eng, const char *user, const char *ws, const char *name,
                         struct ejob **out, struct api_error *err)
{
    return find_job(eng, user, ws, name, out, err);
}

/*
 * Who may change a job (update, stop, start, delete, markNode), the one rule
 * for all of them, as on ACP: a member changes only the jobs they created;
 * the workspace's owners and the admins change every job. Every member may
 * read every job of the workspace. Returns 0 or 403 with the rule in err.
 */
static int change_check(struct engine *eng, const char *user, const char *ws,
                        const struct ejob *job, struct api_error *err)
{
    enum member_role role = config_role(&eng->cfg, ws, user);
    if (role == MEMBER_OWNER || role == MEMBER_ADMIN)
        return 0;
    const char *creator = job->spec.ownership.user_name;
    if (creator && user && strcmp(creator, user) == 0)
        return 0;
    return api_error_set(err, 403, "PermissionDenied", "name",
                         "user '%s' may not change job '%s', created by %s: members of workspace "
                         "'%s' change only the jobs they created; its owners and admins change "
                         "all",
                         user, job->spec.name, creator ? creator : "another user", ws);
}

/* find_job for a request that changes the job: the caller must pass change_check. */
static int find_job_to_change(struct engine *eng, const char *user, const char *ws,
                              const char *name, struct ejob **out, struct api_error *err)
{
    int rc = find_job(eng, user, ws, name, out, err);
    return rc ? rc : change_check(eng, user, ws, *out, err);
}

int engine_catalog(struct engine *eng, const char *user, json_t **reply, struct api_error *err)
{
    (void)err;
    struct catalog cat;
    memset(&cat, 0, sizeof cat);
    config_catalog(&eng->cfg, user, &cat);
    cat.resource_limits = xstrdup(cgroup_summary(eng->opt.cgroups));
    *reply = catalog_to_json(&cat);
    catalog_free(&cat);
    return 200;
}

static int save_config(struct engine *eng, struct api_error *err)
{
    struct strbuf out = STRBUF_INIT, io = STRBUF_INIT;
    config_write(&eng->cfg, &out);
    int rc = file_write_atomic(eng->config_path, out.buf, out.len, 0600, &io);
    if (rc != 0)
        api_error_set(err, 500, "ConfigNotSaved", "", "%s", strbuf_str(&io));
    strbuf_free(&out);
    strbuf_free(&io);
    return rc;
}

int engine_create_workspace(struct engine *eng, const char *user, const json_t *body,
                            json_t **reply, struct api_error *err)
{
    if (!config_is_admin(&eng->cfg, user))
        return api_error_set(err, 403, "PermissionDenied", "",
                             "creating a workspace is an admin's act: '%s' is not among the "
                             "admins of engine.yaml (the user who runs trainjobd always is)",
                             user);
    const char *name = json_string_value(json_object_get(body, "name"));
    char buf[160];
    const char *bad = name ? validate_job_name(name, buf, sizeof buf) : "required";
    if (bad)
        return api_error_set(err, 400, "InvalidField", "name", "workspace name: %s", bad);
    for (size_t i = 0; i < eng->cfg.workspace_count; i++)
        if (strcmp(eng->cfg.workspaces[i].name, name) == 0)
            return api_error_set(err, 409, "AlreadyExists", "name", "workspace '%s' already exists",
                                 name);
    eng->cfg.workspaces = xreallocarray(eng->cfg.workspaces, eng->cfg.workspace_count + 1,
                                        sizeof *eng->cfg.workspaces);
    struct config_workspace *ws = &eng->cfg.workspaces[eng->cfg.workspace_count++];
    memset(ws, 0, sizeof *ws);
    ws->name = xstrdup(name);
    ws->owners = xmalloc(sizeof *ws->owners);
    ws->owners[0] = xstrdup(user);
    ws->owner_count = 1;
    if (save_config(eng, err) != 0)
        return err->status;
    *reply = json_pack("{s:s, s:s}", "name", name, "role", "OWNER");
    return 200;
}

static bool name_taken(void *ctx, const char *ws, const char *name)
{
    return engine_find(ctx, ws, name) != NULL;
}

/* The first error of a validation, as the HTTP answer; every error in details. */
static int reject(const struct findings *fs, struct api_error *err)
{
    for (size_t i = 0; i < fs->count; i++) {
        const struct finding *f = &fs->items[i];
        if (f->severity != SEVERITY_ERROR)
            continue;
        bool perm = strcmp(f->path, "scheduling.priority") == 0 && strstr(f->message, "owner");
        bool ws = strcmp(f->path, "workspace_name") == 0 && strstr(f->message, "not one of");
        return api_error_set(err, perm || ws ? 403 : 400,
                             perm || ws ? "PermissionDenied" : "InvalidField", f->path, "%s: %s",
                             f->path, f->message);
    }
    return 0;
}

static void resolve_demand(struct engine *eng, struct ejob *job)
{
    const struct role *r = jobspec_worker(&job->spec);
    const struct config_spec *spec =
        r && r->resource_spec_count ? config_spec(&eng->cfg, r->resource_spec[0].name) : NULL;
    if (spec) {
        job->gpus = spec->gpus;
        job->cpus = spec->cpus;
        job->memory_mib = spec->memory_mib;
    }
}

int engine_job_create(struct engine *eng, const char *user, const char *ws, const char *name,
                      const char *body, size_t body_len, json_t **reply, struct api_error *err)
{
    int rc = member_check(eng, user, ws, err);
    if (rc)
        return rc;
    if (body_len > MAX_BODY)
        return api_error_set(err, 413, "TooLarge", "", "request body over %u bytes", MAX_BODY);
    json_error_t jerr;
    json_t *root = json_loadb(body, body_len, JSON_REJECT_DUPLICATES, &jerr);
    if (root == NULL)
        return api_error_set(err, 400, "InvalidJSON", "", "invalid JSON at line %d column %d: %s",
                             jerr.line, jerr.column, jerr.text);
    struct ejob *job = xcalloc(1, sizeof *job);
    jobspec_init(&job->spec);
    struct findings fs = FINDINGS_INIT;
    jobspec_from_json(root, JOBSPEC_STRICT, &job->spec, &fs);
    json_decref(root);
    if (name && *name) {
        if (job->spec.name && strcmp(job->spec.name, name) != 0) {
            findings_add(&fs, SEVERITY_ERROR, "name", "'%s' differs from training_job_name '%s'",
                         job->spec.name, name);
        } else if (job->spec.name == NULL) {
            job->spec.name = xstrdup(name);
        }
    }
    if (job->spec.workspace_name && strcmp(job->spec.workspace_name, ws) != 0)
        findings_add(&fs, SEVERITY_ERROR, "workspace_name",
                     "'%s' differs from the workspace in the path, '%s'", job->spec.workspace_name,
                     ws);
    struct catalog cat;
    memset(&cat, 0, sizeof cat);
    config_catalog(&eng->cfg, user, &cat);
    struct validate_options vo = {&cat, ws, name_taken, eng, true};
    if (!findings_count(&fs, SEVERITY_ERROR))
        validate_job(&job->spec, &vo, &fs);
    rc = reject(&fs, err);
    if (rc == 400 && strstr(err->message, "already used"))
        err->status = rc = 409, snprintf(err->reason, sizeof err->reason, "NameTaken");
    findings_free(&fs);
    if (rc) {
        catalog_free(&cat);
        ejob_free(job);
        return rc;
    }
    if (job->spec.workspace_name == NULL)
        job->spec.workspace_name = xstrdup(ws);
    if (job->spec.name == NULL) {
        do {
            free(job->spec.name);
            job->spec.name = jobspec_generate_name(job->spec.framework);
        } while (engine_find(eng, ws, job->spec.name));
    }
    jobspec_fill_defaults(&job->spec, &cat);
    catalog_free(&cat);

    char uid[40];
    char *gen = jobspec_generate_name(FRAMEWORK_UNSPECIFIED); /* "pt-" + 8 random chars */
    snprintf(uid, sizeof uid, "%016llx-%s", (unsigned long long)time_now_ms(), gen + 3);
    free(gen);
    job->spec.uid = xstrdup(uid);
    job->spec.id = xasprintf("/subscriptions/%s/resourceGroups/%s/zones/%s/workspaces/%s/"
                             "trainingJobs/%s",
                             engine_subscription(eng), engine_resource_group(eng), engine_zone(eng),
                             ws, job->spec.name);
    job->spec.subscription_name = xstrdup(engine_subscription(eng));
    job->spec.resource_group_name = xstrdup(engine_resource_group(eng));
    job->spec.zone = xstrdup(engine_zone(eng));
    job->spec.ownership.present = true;
    job->spec.ownership.user_name = xstrdup(user);
    job->spec.ownership.user_id = xstrdup(user);
    job->spec.state = JOB_STATE_QUEUEING;
    job->spec.state_message = xstrdup("waiting for the scheduler");
    stamp(&job->spec.create_time);
    stamp(&job->spec.update_time);
    job->spec.has_restart_count = true;
    job->spec.has_ready_workers = true;
    job->seq = eng->next_seq++;
    resolve_demand(eng, job);

    char *rec = job_record(job);
    struct strbuf serr = STRBUF_INIT;
    enum store_status st =
        store_job_insert(eng->store, job->spec.uid, ws, job->spec.name, job->seq, rec, &serr);
    free(rec);
    if (st != STORE_OK) {
        rc = st == STORE_EXISTS ? api_error_set(err, 409, "NameTaken", "name",
                                                "name '%s' is already used in "
                                                "workspace '%s'",
                                                job->spec.name, ws)
                                : api_error_set(err, 503, "StoreFailed", "", "job not stored: %s",
                                                strbuf_str(&serr));
        strbuf_free(&serr);
        ejob_free(job);
        return rc;
    }
    strbuf_free(&serr);
    derive_outputs(job);
    take_snapshot(job);
    add_job(eng, job);
    struct job_event ev = {0};
    ev.kind = EVENT_CREATED;
    ev.state = JOB_STATE_QUEUEING;
    char text[200];
    snprintf(text, sizeof text, "created by %s", user);
    ev.message = text;
    engine_event(eng, job, &ev);
    engine_publish(eng, job);
    lifecycle_schedule_added(eng);
    *reply = job_json(job);
    return 200;
}

int engine_job_get(struct engine *eng, const char *user, const char *ws, const char *name,
                   json_t **reply, struct api_error *err)
{
    struct ejob *job;
    int rc = find_job(eng, user, ws, name, &job, err);
    if (rc)
        return rc;
    *reply = job_json(job);
    return 200;
}

/* One term of a list filter: key='value'. */
static bool filter_matches(const struct ejob *job, const char *key, const char *value)
{
    const struct jobspec *s = &job->spec;
    if (strcmp(key, "name") == 0)
        return strcmp(s->name, value) == 0;
    if (strcmp(key, "display_name") == 0)
        return s->display_name && strcmp(s->display_name, value) == 0;
    if (strcmp(key, "state") == 0)
        return strcmp(enum_name(&job_state_names, (int)s->state), value) == 0;
    if (strcmp(key, "user_name") == 0 || strcmp(key, "creator_id") == 0)
        return s->ownership.user_name && strcmp(s->ownership.user_name, value) == 0;
    return false;
}

/* Parses "k='v' AND k2='v2'" into pairs; returns -1 with a message on bad syntax. */
static int parse_filter(const char *filter, char keys[8][32], char values[8][256], int *count,
                        struct api_error *err)
{
    *count = 0;
    const char *p = filter;
    while (p && *p) {
        while (*p == ' ')
            p++;
        if (*p == '\0')
            break;
        if (*count == 8)
            return api_error_set(err, 400, "InvalidFilter", "filter", "at most 8 terms");
        int klen = 0, vlen = 0;
        while (p[klen] && p[klen] != '=' && p[klen] != ' ' && klen < 31)
            klen++;
        if (p[klen] != '=' || p[klen + 1] != '\'')
            return api_error_set(err, 400, "InvalidFilter", "filter",
                                 "expected key='value' at '%.40s'", p);
        memcpy(keys[*count], p, (size_t)klen);
        keys[*count][klen] = '\0';
        const char *v = p + klen + 2;
        while (v[vlen] && v[vlen] != '\'' && vlen < 255)
            vlen++;
        if (v[vlen] != '\'')
            return api_error_set(err, 400, "InvalidFilter", "filter", "unterminated value");
        memcpy(values[*count], v, (size_t)vlen);
        values[*count][vlen] = '\0';
        if (strcmp(keys[*count], "name") && strcmp(keys[*count], "state") &&
            strcmp(keys[*count], "display_name") && strcmp(keys[*count], "user_name") &&
            strcmp(keys[*count], "creator_id"))
            return api_error_set(err, 400, "InvalidFilter", "filter",
                                 "cannot filter on '%s'; use name, state, display_name or "
                                 "user_name",
                                 keys[*count]);
        (*count)++;
        p = v + vlen + 1;
        while (*p == ' ')
            p++;
        if (strncmp(p, "AND ", 4) == 0)
            p += 4;
        else if (*p)
            return api_error_set(err, 400, "InvalidFilter", "filter",
                                 "expected AND between terms at '%.40s'", p);
    }
    return 0;
}

int engine_job_view(const char *value)
{
    if (value == NULL || *value == '\0' || strcmp(value, "FULL") == 0)
        return JOB_VIEW_FULL;
    if (strcmp(value, "BASIC") == 0)
        return JOB_VIEW_BASIC;
    return -1;
}

/* Appends a job as view asks, as JSON text. */
static void job_text(const struct ejob *job, enum job_view view, struct strbuf *out)
{
    if (view == JOB_VIEW_BASIC) {
        if (job->shown_summary)
            strbuf_adds(out, job->shown_summary); /* as last saved, like job_json */
        else
            jobspec_summary_write(&job->spec, out);
        return;
    }
    if (job->shown_job) {
        strbuf_adds(out, job->shown_job);
        return;
    }
    char *s = dump_json(jobspec_to_json(&job->spec));
    strbuf_adds(out, s);
    free(s);
}

/*
 * Where a list page starts. Our next_page_token is "k<seq>-<total>": the
 * page goes on after the job with that seq (a binary search: eng->jobs is in
 * seq order), and total_size is the first page's count, carried along — so
 * following every page of N jobs costs O(N) in all, not O(N) per page, and
 * no job is sent twice when jobs come and go between pages. A decimal page
 * number (what ACP's clients send) still works, by counting from the start.
 */
struct page_start {
    size_t from; /* the first position of eng->jobs to look at */
    size_t skip; /* matching jobs to pass over first (a page number) */
    long total;  /* carried total_size; -1: count it */
};

static int page_start(struct engine *eng, const char *token, int size, struct page_start *ps,
                      struct api_error *err)
{
    memset(ps, 0, sizeof *ps);
    ps->total = -1;
    if (token == NULL || *token == '\0')
        return 0;
    char *end;
    if (token[0] == 'k' && token[1] >= '0' && token[1] <= '9') {
        errno = 0;
        unsigned long long seq = strtoull(token + 1, &end, 10);
        if (errno == 0 && *end == '-' && end[1] >= '0' && end[1] <= '9') {
            long total = strtol(end + 1, &end, 10);
            if (errno == 0 && *end == '\0' && total >= 0) {
                ps->from = first_after(eng, (uint64_t)seq);
                ps->total = total;
                return 0;
            }
        }
    } else {
        long page = strtol(token, &end, 10);
        if (*end == '\0' && page >= 1 && page <= LONG_MAX / 500) {
            ps->skip = (size_t)(page - 1) * (size_t)size;
            return 0;
        }
    }
    return api_error_set(err, 400, "InvalidArgument", "page_token",
                         "'%.40s' is not a page token of this server", token);
}

int engine_job_list_text(struct engine *eng, const char *user, const char *ws,
                         const struct job_query *q, struct strbuf *out, struct api_error *err)
{
    int rc = member_check(eng, user, ws, err);
    if (rc)
        return rc;
    int size = q->page_size;
    if (size < 0)
        return api_error_set(err, 400, "InvalidArgument", "page_size", "must not be negative");
    if (size == 0)
        size = 10;
    if (size > 500)
        size = 500;
    struct page_start ps;
    if ((rc = page_start(eng, q->page_token, size, &ps, err)) != 0)
        return rc;
    char keys[8][32], values[8][256];
    int terms;
    if ((rc = parse_filter(q->filter, keys, values, &terms, err)) != 0)
        return rc;
    size_t prefix = q->name ? strlen(q->name) : 0;
    strbuf_adds(out, "{\"training_jobs\":[");
    size_t matched = 0, sent = 0;
    uint64_t last_seq = 0;
    bool more = false;
    for (size_t i = ps.from; i < eng->job_count; i++) {
        struct ejob *job = eng->jobs[i];
        if (strcmp(job->spec.workspace_name, ws) != 0 || job->spec.state == JOB_STATE_DELETED)
            continue;
        if (prefix && strncmp(job->spec.name, q->name, prefix) != 0)
            continue;
        bool ok = true;
        for (int t = 0; t < terms && ok; t++)
            ok = filter_matches(job, keys[t], values[t]);
        if (!ok)
            continue;
        matched++;
        if (matched <= ps.skip)
            continue;
        if (sent == (size_t)size) {
            more = true;
            if (ps.total >= 0)
                break; /* the total is known: no need to count the rest */
            continue;
        }
        if (sent)
            strbuf_addc(out, ',');
        job_text(job, q->view, out);
        last_seq = job->seq;
        sent++;
    }
    long total = ps.total >= 0 ? ps.total : (long)matched;
    char next[48] = "";
    if (more)
        snprintf(next, sizeof next, "k%llu-%ld", (unsigned long long)last_seq, total);
    strbuf_addf(out, "],\"next_page_token\":\"%s\",\"total_size\":%ld}", next, total);
    return 200;
}

int engine_job_list(struct engine *eng, const char *user, const char *ws, const struct job_query *q,
                    json_t **reply, struct api_error *err)
{
    struct strbuf text = STRBUF_INIT;
    int rc = engine_job_list_text(eng, user, ws, q, &text, err);
    if (rc == 200) {
        *reply = json_loadb(text.buf, text.len, 0, NULL);
        if (*reply == NULL)
            rc = api_error_set(err, 500, "Internal", "", "the list could not be built");
    }
    strbuf_free(&text);
    return rc;
}

int engine_job_update(struct engine *eng, const char *user, const char *ws, const char *name,
                      const char *update_mask, const char *body, size_t body_len, json_t **reply,
                      struct api_error *err)
{
    struct ejob *job;
    int rc = find_job_to_change(eng, user, ws, name, &job, err);
    if (rc)
        return rc;
    json_t *root = json_loadb(body, body_len, 0, NULL);
    if (!json_is_object(root)) {
        json_decref(root);
        return api_error_set(err, 400, "InvalidJSON", "", "the body must be a TrainingJob object");
    }
    struct jobspec patch;
    jobspec_init(&patch);
    struct findings fs = FINDINGS_INIT;
    jobspec_from_json(root, JOBSPEC_LENIENT, &patch, &fs);
    json_decref(root);
    bool want_name = false, want_prio = false;
    const char *m = update_mask ? update_mask : "";
    while (*m) {
        size_t n = strcspn(m, ",");
        if (n == 12 && strncmp(m, "display_name", n) == 0)
            want_name = true;
        else if (n == 19 && strncmp(m, "scheduling.priority", n) == 0)
            want_prio = true;
        else {
            rc = api_error_set(err, 400, "InvalidArgument", "update_mask",
                               "'%.*s' cannot be updated; only display_name and "
                               "scheduling.priority",
                               (int)n, m);
            goto out;
        }
        m += n + (m[n] == ',');
    }
    if (!want_name && !want_prio) {
        rc = api_error_set(err, 400, "InvalidArgument", "update_mask",
                           "name the fields to update: display_name, scheduling.priority");
        goto out;
    }
    char buf[200];
    if (want_name) {
        const char *bad = patch.display_name
                              ? validate_display_name(patch.display_name, buf, sizeof buf)
                              : "required";
        if (bad) {
            rc = api_error_set(err, 400, "InvalidField", "display_name", "display_name: %s", bad);
            goto out;
        }
    }
    if (want_prio) {
        enum priority p = patch.scheduling.priority;
        if (p == PRIORITY_UNSPECIFIED) {
            rc = api_error_set(err, 400, "InvalidField", "scheduling.priority",
                               "scheduling.priority: required: NORMAL, HIGH or HIGHEST");
            goto out;
        }
        enum member_role role = config_role(&eng->cfg, ws, user);
        if (p != PRIORITY_NORMAL && role != MEMBER_OWNER && role != MEMBER_ADMIN) {
            rc = api_error_set(err, 403, "PermissionDenied", "scheduling.priority",
                               "scheduling.priority: %s needs workspace owner rights; %s is a "
                               "member of %s",
                               enum_name(&priority_names, (int)p), user, ws);
            goto out;
        }
        job->spec.scheduling.priority = p;
    }
    if (want_name) {
        free(job->spec.display_name);
        job->spec.display_name = xstrdup(patch.display_name);
    }
    stamp(&job->spec.update_time);
    engine_save(eng, job);
    engine_publish(eng, job);
    if (want_prio)
        lifecycle_schedule_soon(eng);
    if ((rc = not_saved(job, err)) != 0)
        goto out;
    *reply = job_json(job);
    rc = 200;
out:
    findings_free(&fs);
    jobspec_free(&patch);
    return rc;
}

/* Reads {training_job_names:[…]} (at most MAX_BATCH) into names. */
static int batch_names(const char *body, size_t len, json_t **names, struct api_error *err)
{
    json_t *root = json_loadb(body, len, 0, NULL);
    json_t *list = json_object_get(root, "training_job_names");
    if (!json_is_array(list)) {
        json_decref(root);
        return api_error_set(err, 400, "InvalidArgument", "training_job_names",
                             "expected {\"training_job_names\": [names]}");
    }
    if (json_array_size(list) > MAX_BATCH) {
        json_decref(root);
        return api_error_set(err, 400, "InvalidArgument", "training_job_names",
                             "at most %d names per call", MAX_BATCH);
    }
    *names = json_incref(list);
    json_decref(root);
    return 0;
}

/* Stops one job for a batch; returns the per-name result. */
static const char *stop_one(struct engine *eng, struct ejob *job)
{
    if (job_state_terminal(job->spec.state) || job->after_stop == AFTER_STOP_DELETE)
        return "SKIPPED";
    lifecycle_stop(eng, job, AFTER_STOP_SUSPEND, "stopped by the user");
    return "STOPPING";
}

static const char *delete_one(struct engine *eng, struct ejob *job)
{
    lifecycle_stop(eng, job, AFTER_STOP_DELETE, "deleted by the user");
    return "DELETING";
}

/* :batchStop and :batchDelete: {training_job_names:[…]} → {results:[{name, result}]}. */
static int batch(struct engine *eng, const char *user, const char *ws, const char *body,
                 size_t body_len, const char *(*act)(struct engine *, struct ejob *),
                 json_t **reply, struct api_error *err)
{
    json_t *names = NULL;
    int rc = member_check(eng, user, ws, err);
    if (rc || (rc = batch_names(body, body_len, &names, err)))
        return rc;
    size_t i;
    json_t *v;
    /* All or nothing: one job the caller may not change refuses the whole call. */
    json_array_foreach(names, i, v)
    {
        const char *name = json_string_value(v);
        struct ejob *job = name ? engine_find(eng, ws, name) : NULL;
        if (job && (rc = change_check(eng, user, ws, job, err)) != 0) {
            json_decref(names);
            return rc;
        }
    }
    json_t *results = json_array();
    json_array_foreach(names, i, v)
    {
        const char *name = json_string_value(v);
        struct ejob *job = name ? engine_find(eng, ws, name) : NULL;
        const char *outcome = job ? act(eng, job) : "NOT_FOUND";
        json_array_append_new(results, json_pack("{s:s?, s:s}", "name", name, "result", outcome));
    }
    json_decref(names);
    *reply = json_pack("{s:o}", "results", results);
    return 200;
}

int engine_jobs_stop(struct engine *eng, const char *user, const char *ws, const char *body,
                     size_t body_len, json_t **reply, struct api_error *err)
{
    return batch(eng, user, ws, body, body_len, stop_one, reply, err);
}

int engine_jobs_delete(struct engine *eng, const char *user, const char *ws, const char *body,
                       size_t body_len, json_t **reply, struct api_error *err)
{
    return batch(eng, user, ws, body, body_len, delete_one, reply, err);
}

int engine_job_start(struct engine *eng, const char *user, const char *ws, const char *name,
                     json_t **reply, struct api_error *err)
{
    struct ejob *job;
    int rc = find_job_to_change(eng, user, ws, name, &job, err);
    if (rc)
        return rc;
    if (job->spec.state != JOB_STATE_SUSPENDED)
        return api_error_set(err, 409, "InvalidState", "state",
                             "job '%s' is %s; only a stopped (SUSPENDED) job can be started", name,
                             enum_name(&job_state_names, (int)job->spec.state));
    for (size_t i = 0; i < job->worker_count; i++) {
        job->workers[i].phase = WORKER_PENDING;
        job->workers[i].has_exit_code = false;
    }
    /* A person starting it again ends a crash loop's back-off. */
    job->crash_loops = 0;
    job->backoff_until_ms = 0;
    free(job->backoff_worker);
    job->backoff_worker = NULL;
    struct job_event ev = {0};
    ev.kind = EVENT_STARTED;
    char text[160];
    snprintf(text, sizeof text, "started again by %s", user);
    ev.message = text;
    engine_event(eng, job, &ev);
    engine_set_state(eng, job, JOB_STATE_QUEUEING, "waiting for the scheduler");
    lifecycle_schedule_soon(eng);
    if ((rc = not_saved(job, err)) != 0)
        return rc;
    *reply = job_json(job);
    return 200;
}

/* The "node" of a :markNode body: a node of this engine's config, or a 400 naming node. */
static int marked_node(struct engine *eng, const char *body, size_t body_len, const char **node,
                       json_t **root, struct api_error *err)
{
    if (body_len > MAX_BODY)
        return api_error_set(err, 413, "TooLarge", "", "request body over %u bytes", MAX_BODY);
    *root = json_loadb(body ? body : "", body_len, 0, NULL);
    *node = json_string_value(json_object_get(*root, "node"));
    if (*node == NULL || **node == '\0')
        return api_error_set(err, 400, "InvalidArgument", "node",
                             "node: required: expected {\"node\": \"NODE\"}");
    if (config_node(&eng->cfg, *node) == NULL)
        return api_error_set(err, 400, "InvalidField", "node",
                             "node: '%s' is not a node of this engine", *node);
    return 0;
}

int engine_job_mark_node(struct engine *eng, const char *user, const char *ws, const char *name,
                         const char *body, size_t body_len, json_t **reply, struct api_error *err)
{
    struct ejob *job;
    json_t *root = NULL;
    const char *node = NULL;
    int rc = find_job_to_change(eng, user, ws, name, &job, err);
    if (rc == 0)
        rc = marked_node(eng, body, body_len, &node, &root, err);
    if (rc == 0) {
        lifecycle_mark_node(eng, job, node, user);
        stamp(&job->spec.update_time);
        engine_save(eng, job);
        engine_publish(eng, job);
        /* A waiting job's reason may now name the node. */
        lifecycle_schedule_soon(eng);
        rc = not_saved(job, err);
        if (rc == 0) {
            *reply = job_json(job);
            rc = 200;
        }
    }
    json_decref(root);
    return rc;
}

static json_t *workers_json(const struct ejob *job)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < job->worker_count; i++) {
        const struct eworker *w = &job->workers[i];
        struct worker_info wi;
        memset(&wi, 0, sizeof wi);
        char uid[96];
        snprintf(uid, sizeof uid, "%s-%s", job->spec.uid, w->name);
        wi.uid = uid;
        wi.name = w->name;
        wi.role = w->role;
        wi.node_name = w->node;
        wi.ip = (char *)"127.0.0.1";
        wi.host_ip = (char *)"127.0.0.1";
        wi.phase = w->phase;
        wi.restarts = w->restarts;
        wi.has_exit_code = w->has_exit_code;
        wi.exit_code = w->exit_code;
        wi.exit_reason =
            w->has_exit_code && w->exit_code != 0 ? (char *)fault_exit_meaning(w->exit_code) : NULL;
        wi.devices = w->devices;
        wi.simulated = w->node && strncmp(w->node, "sim-", 4) == 0;
        wi.create_time = w->create_time;
        wi.start_time = w->start_time;
        wi.finish_time = w->finish_time;
        json_array_append_new(arr, worker_info_to_json(&wi));
    }
    return arr;
}

int engine_job_workers(struct engine *eng, const char *user, const char *ws, const char *name,
                       json_t **reply, struct api_error *err)
{
    struct ejob *job;
    int rc = find_job(eng, user, ws, name, &job, err);
    if (rc)
        return rc;
    json_t *workers = saved_workers(job); /* as last saved, like the job */
    *reply = json_pack("{s:o, s:s, s:I}", "workers", workers, "next_page_token", "", "total_size",
                       (json_int_t)json_array_size(workers));
    return 200;
}

/* n with thousands separators: 1234567 → "1,234,567". */
static void format_thousands(int64_t n, char *out, size_t size)
{
    char digits[24];
    int len = snprintf(digits, sizeof digits, "%lld", (long long)(n < 0 ? 0 : n));
    size_t o = 0;
    for (int i = 0; i < len && o + 2 < size; i++) {
        if (i > 0 && (len - i) % 3 == 0)
            out[o++] = ',';
        out[o++] = digits[i];
    }
    out[o] = '\0';
}

static int collect_event(void *ctx, int64_t id, int64_t time_ms, const char *json)
{
    (void)id;
    (void)time_ms;
    json_t *e = json_loads(json, 0, NULL);
    if (e) {
        json_object_set_new(e, "id", json_integer(id));
        json_array_append_new(ctx, e);
    }
    return 0;
}

int engine_job_events(struct engine *eng, const char *user, const char *ws, const char *name,
                      json_t **reply, struct api_error *err)
{
    struct ejob *job;
    int rc = find_job(eng, user, ws, name, &job, err);
    if (rc)
        return rc;
    json_t *arr = json_array();
    if (job->events_folded > 0) {
        /* The events kept are the newest; say how many older ones were folded. */
        struct config_limits lim;
        config_effective_limits(&eng->cfg, &lim);
        char count[32], text[160];
        format_thousands(job->events_folded, count, sizeof count);
        snprintf(text, sizeof text, "… %s earlier event%s folded (the newest %d are kept)", count,
                 job->events_folded == 1 ? "" : "s", lim.events_per_job);
        struct job_event note = {0};
        note.kind = EVENT_UNSPECIFIED;
        note.job = job->spec.name;
        note.message = text;
        json_array_append_new(arr, job_event_to_json(&note));
    }
    struct strbuf serr = STRBUF_INIT;
    if (store_events_each(eng->store, job->spec.uid, 0, collect_event, arr, &serr) != STORE_OK) {
        json_decref(arr);
        rc = api_error_set(err, 500, "StoreFailed", "", "%s", strbuf_str(&serr));
        strbuf_free(&serr);
        return rc;
    }
    strbuf_free(&serr);
    *reply = json_pack("{s:o}", "events", arr);
    return 200;
}

/* Appends the last `tail` lines of the file at path (all when tail < 0). */
static void tail_file(const char *path, long tail, struct strbuf *out)
{
    char *data;
    size_t len;
    struct strbuf io = STRBUF_INIT;
    if (file_read_all(path, SIZE_MAX / 2, &data, &len, &io) != 0) {
        strbuf_free(&io);
        return;
    }
    strbuf_free(&io);
    size_t start = 0;
    if (tail >= 0) {
        long lines = 0;
        size_t i = len;
        if (i > 0 && data[i - 1] == '\n')
            i--;
        while (i > 0) {
            if (data[i - 1] == '\n' && ++lines == tail + (tail == 0))
                break;
            i--;
        }
        start = tail == 0 ? len : i;
    }
    strbuf_add(out, data + start, len - start);
    free(data);
}

int engine_worker_log(struct engine *eng, const char *user, const char *ws, const char *name,
                      const struct worker_log_query *lq, struct strbuf *out,
                      struct stream **follow_stream, struct api_error *err)
{
    struct ejob *job;
    int rc = find_job(eng, user, ws, name, &job, err);
    if (rc)
        return rc;
    const char *worker = lq->worker;
    bool known = false;
    for (size_t i = 0; i < job->worker_count; i++)
        known |= strcmp(job->workers[i].name, worker) == 0;
    if (!known)
        return api_error_set(err, 404, "NotFound", "worker", "job '%s' has no worker '%s'%s", name,
                             worker, job->worker_count ? "" : " (it has not been scheduled yet)");
    char *path = lifecycle_log_path(eng, job, worker);
    if (!lq->follow) {
        if (lq->tail < 0) { /* the whole log: its rotated generation first */
            char *rotated = xasprintf("%s.1", path);
            tail_file(rotated, -1, out);
            free(rotated);
        }
        tail_file(path, lq->tail, out);
        free(path);
        return 200;
    }
    /* Following: read as the client drains, to the end once the worker has ended. */
    struct logfollow_start how = {path, lq->tail, lq->framed, lq->from, eng->opt.log_cap, true};
    struct strbuf why = STRBUF_INIT;
    struct stream *s = logfollow_open(&how, &why);
    free(path);
    if (s == NULL) {
        rc = api_error_set(err, 500, "LogUnreadable", "worker", "%s", strbuf_str(&why));
        strbuf_free(&why);
        return rc;
    }
    strbuf_free(&why);
    if (job_state_terminal(job->spec.state))
        logfollow_poke(s, true);
    eng->followers = xreallocarray(eng->followers, eng->follower_count + 1, sizeof *eng->followers);
    eng->followers[eng->follower_count++] = stream_ref(s);
    *follow_stream = s;
    return 200;
}

/* Tells the log followers of a job that will write no more: they end at the log's end. */
void engine_end_followers(struct engine *eng, struct ejob *job);
void engine_end_followers(struct engine *eng, struct ejob *job)
{
    char prefix[128];
    snprintf(prefix, sizeof prefix, "%s.", job->spec.uid);
    for (size_t i = 0; i < eng->follower_count; i++)
        if (logfollow_matches_job(eng->followers[i], prefix))
            logfollow_poke(eng->followers[i], true);
}

/*
 * A watch stream's first sync, written as the client drains it: the jobs
 * of the workspace in seq order (eng->jobs is kept in that order), each as
 * it is when its line is written, then SYNCED. A job created meanwhile has
 * a higher seq and is sent too; one deleted meanwhile is simply not found.
 */
struct watch_sync {
    struct engine *eng;
    char *ws;
    enum job_view view;
    struct strbuf line; /* one JOB line, reused */
    uint64_t last_seq;  /* the jobs up to this one are sent */
};

#define SYNC_BATCH_BYTES (256u << 10)

static void sync_free(void *ctx)
{
    struct watch_sync *ws = ctx;
    strbuf_free(&ws->line);
    free(ws->ws);
    free(ws);
}

static void sync_refill(void *ctx, struct stream *s)
{
    struct watch_sync *sync = ctx;
    struct engine *eng = sync->eng;
    /* The first job after last_seq: a binary search, the array being in seq order. */
    size_t lo = 0, hi = eng->job_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (eng->jobs[mid]->seq <= sync->last_seq)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t written = 0;
    for (size_t i = lo; i < eng->job_count && written < SYNC_BATCH_BYTES; i++) {
        struct ejob *job = eng->jobs[i];
        sync->last_seq = job->seq;
        if (strcmp(job->spec.workspace_name, sync->ws) != 0)
            continue;
        if (job->shown_job == NULL)
            continue;
        strbuf_reset(&sync->line);
        job_message(job, sync->view, &sync->line);
        stream_write(s, sync->line.buf, sync->line.len);
        written += sync->line.len;
    }
    if (written < SYNC_BATCH_BYTES) {
        stream_write(s, "{\"type\":\"SYNCED\"}\n", 18);
        stream_set_refill(s, NULL, NULL, NULL); /* frees sync: nothing after this */
    }
}

/*
 * A first sync grows each watcher's buffers to a few hundred KB; freed, that
 * memory stays in the heap (glibc returns only its top). Once per loop turn in
 * which watchers left, the free pages go back to the system.
 */
static void trim_heap(void *ctx)
{
    struct engine *eng = ctx;
    eng->trim_timer = 0;
    malloc_trim(0);
}

void engine_prune_watchers(struct engine *eng)
{
    size_t before = eng->watcher_count;
    for (size_t i = 0; i < eng->watcher_count;) {
        struct stream *s = eng->watchers[i];
        if (stream_abandoned(s) || stream_closed(s)) {
            stream_unref(s);
            eng->watchers[i] = eng->watchers[--eng->watcher_count];
            continue;
        }
        i++;
    }
    if (eng->watcher_count == before)
        return;
    engine_log("watch: %zu watchers", eng->watcher_count);
    if (eng->trim_timer == 0)
        eng->trim_timer = loop_add_timer(eng->loop, 0, trim_heap, eng);
}

int engine_watch(struct engine *eng, const char *user, const char *ws, struct stream **out,
                 struct api_error *err)
{
    return engine_watch_view(eng, user, ws, JOB_VIEW_FULL, out, err);
}

int engine_watch_view(struct engine *eng, const char *user, const char *ws, enum job_view view,
                      struct stream **out, struct api_error *err)
{
    int rc = member_check(eng, user, ws, err);
    if (rc)
        return rc;
    struct stream *s = stream_new();
    stream_set_tag(s, ws, view); /* a watcher's offset is its view (see watcher_view) */
    struct watch_sync *sync = xcalloc(1, sizeof *sync);
    sync->eng = eng;
    sync->ws = xstrdup(ws);
    sync->view = view;
    stream_set_refill(s, sync_refill, sync, sync_free);
    eng->watchers = xreallocarray(eng->watchers, eng->watcher_count + 1, sizeof *eng->watchers);
    eng->watchers[eng->watcher_count++] = stream_ref(s);
    *out = s;
    return 200;
}
