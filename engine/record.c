/*
 * record: each job as one JSON record in the store — the record's schema,
 * saves and their retries, the snapshot GET and watchers see (the job "as
 * last saved"), store batches, events, state changes and removal. Called by
 * engine.c (loading and closing), requests.c, queries.c, watch.c and
 * lifecycle.c; what a save tells watchers goes through watch.c.
 */
#include "engine/engine.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/fault.h"
#include "api/finding.h"
#include "api/jobspec_json.h"
#include "api/schema.h"
#include "engine/cgroup.h"
#include "engine/jobfiles.h"
#include "engine/shown.h"
#include "engine/state.h"
#include "engine/store.h"
#include "util/loop.h"
#include "util/strbuf.h"
#include "util/timefmt.h"
#include "util/xalloc.h"

/* ---- persistence: one JSON record per job ---------------------------- */

static const char *const after_stop_tab[] = {"NONE",    "SUSPEND", "RESTART",
                                             "REQUEUE", "FAIL",    "DELETE"};
static const struct enum_names after_stop_names = {after_stop_tab, sizeof after_stop_tab /
                                                                       sizeof after_stop_tab[0]};

static const struct field proc_fields[] = {
    F_INT(struct runner_proc, shim_pid),
    F_INT(struct runner_proc, worker_pgid),
    F_I64(struct runner_proc, shim_start_ticks),
    F_I64(struct runner_proc, worker_start_ticks),
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
    F_FLAG(struct eworker, stopped),
    {"proc", F_OBJECT, offsetof(struct eworker, proc), SCHEMA_NO_FLAG, NULL, &proc_type, 0},
    F_STR(struct eworker, create_time),
    F_STR(struct eworker, start_time),
    F_STR(struct eworker, finish_time),
    F_SECTION(struct eworker, last_state, worker_last_state_type),
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

static void snapshot_free(struct snapshot *snap)
{
    if (snap == NULL || snap->in_batch_bump)
        return;
    free(snap->job);
    free(snap->workers);
    free(snap->summary);
    free(snap);
}

void ejob_free(struct ejob *job)
{
    if (job == NULL)
        return;
    if (job->full_) {
        jobspec_free(job->full_);
        free(job->full_);
    }
    free(job->uid);
    free(job->name);
    free(job->display_name);
    ejob_unshare_text(job->state_message);
    free(job->shown_job);
    free(job->shown_workers);
    free(job->shown_summary);
    snapshot_free(job->pending);
    for (size_t i = 0; i < job->held_event_count; i++)
        free(job->held_events[i].json);
    free(job->held_events);
    schema_free(&ejob_type, job);
    free(job);
}

char *job_spec_text(struct engine *eng, struct ejob *job)
{
    return dump_json(jobspec_to_json(ejob_spec(eng, job)));
}

char *job_record_with(struct ejob *job, const char *spec)
{
    /* The record's own fields, then "job": spec spliced in as its last member. */
    char *own = dump_json(schema_encode(&ejob_type, job));
    size_t len = strlen(own);
    struct strbuf rec = STRBUF_INIT;
    strbuf_grow(&rec, len + strlen(spec) + 8);
    strbuf_add(&rec, own, len - 1); /* without its closing brace */
    strbuf_adds(&rec, len > 2 ? ",\"job\":" : "\"job\":");
    strbuf_adds(&rec, spec);
    strbuf_addc(&rec, '}');
    free(own);
    return strbuf_detach(&rec, NULL);
}

char *job_record(struct engine *eng, struct ejob *job)
{
    char *spec = job_spec_text(eng, job);
    char *rec = job_record_with(job, spec);
    free(spec);
    return rec;
}

struct ejob *job_from_record(struct engine *eng, const char *json)
{
    json_t *rec = json_loads(json, 0, NULL);
    if (rec == NULL)
        return NULL;
    struct ejob *job = xcalloc(1, sizeof *job);
    job->events_stored = -1; /* the store's count is not read: its first event folds */
    struct findings fs = FINDINGS_INIT;
    struct jobspec *full = xmalloc(sizeof *full);
    jobspec_init(full);
    job->full_ = full;
    schema_decode(rec, &ejob_type, job, SCHEMA_LENIENT, "", &fs);
    jobspec_from_json(json_object_get(rec, "job"), JOBSPEC_LENIENT, full, &fs);
    findings_free(&fs);
    json_decref(rec);
    if (full->uid == NULL || full->name == NULL || full->workspace_name == NULL) {
        ejob_free(job);
        return NULL;
    }
    ejob_set_hot(eng, job, full);
    return job;
}

json_t *workers_json(const struct ejob *job)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < job->worker_count; i++) {
        const struct eworker *w = &job->workers[i];
        struct worker_info wi;
        memset(&wi, 0, sizeof wi);
        char uid[96];
        snprintf(uid, sizeof uid, "%s-%s", job->uid, w->name);
        wi.uid = uid;
        wi.name = w->name;
        wi.role = w->role;
        wi.node_name = w->node;
        wi.ip = (char *)"127.0.0.1";
        wi.host_ip = (char *)"127.0.0.1";
        wi.phase = w->phase;
        if (w->stopped) { /* an end trainjobd asked for: no failure (its code stays, told why) */
            wi.phase = WORKER_PHASE_UNSPECIFIED;
            wi.phase_other = (char *)"Stopped";
        }
        wi.has_restarts = wi.has_simulated = true;
        wi.restarts = w->restarts;
        wi.has_exit_code = w->has_exit_code;
        wi.exit_code = w->exit_code;
        if (w->stopped)
            wi.exit_reason = (char *)"stopped";
        else if (w->has_exit_code && w->exit_code != 0)
            wi.exit_reason = (char *)fault_exit_meaning(w->exit_code);
        wi.devices = w->devices;
        wi.simulated = w->node && strncmp(w->node, "sim-", 4) == 0;
        wi.create_time = w->create_time;
        wi.start_time = w->start_time;
        wi.finish_time = w->finish_time;
        wi.last_state = w->last_state; /* shared, not owned: wi is only encoded */
        json_array_append_new(arr, worker_info_to_json(&wi));
    }
    return arr;
}

/* The output fields derived from the workers: ready workers, restarts used. */
void derive_outputs(struct engine *eng, struct ejob *job)
{
    struct jobspec *s = ejob_spec(eng, job);
    int ready = 0, faulty = 0;
    for (size_t i = 0; i < job->worker_count; i++) {
        const struct eworker *w = &job->workers[i];
        ready += w->phase == WORKER_RUNNING;
        /* A worker trainjobd stopped (stop, delete, restart, preemption) ended as asked. */
        bool failed = w->phase == WORKER_FAILED || (w->has_exit_code && w->exit_code);
        faulty += (failed && !w->stopped) || w->restarts > 0;
    }
    s->has_faulty_workers = true;
    s->faulty_workers = faulty;
    s->has_ready_workers = true;
    s->ready_workers = ready;
    /* The nodes its live workers are on, each once, in worker order (the jobs view's NODE). */
    struct strbuf nodes = STRBUF_INIT;
    for (size_t i = 0; i < job->worker_count; i++) {
        const struct eworker *w = &job->workers[i];
        if (!w->live || w->node == NULL || *w->node == '\0')
            continue;
        bool seen = false;
        for (size_t k = 0; k < i && !seen; k++)
            seen = job->workers[k].live && job->workers[k].node &&
                   strcmp(job->workers[k].node, w->node) == 0;
        if (!seen)
            strbuf_addf(&nodes, "%s%s", nodes.len ? "," : "", w->node);
    }
    free(s->nodes);
    s->nodes = nodes.len ? strbuf_detach(&nodes, NULL) : NULL;
    strbuf_free(&nodes);
    s->has_restart_count = true;
    s->restart_count = job->restarts;
}

/* j (taken) as compact JSON text. */
char *dump_json(json_t *j)
{
    char *text = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    if (text == NULL)
        xalloc_die();
    return text;
}

/*
 * The texts the job shows, packed from what memory holds now; spec: its
 * spec's text (job_spec_text) when the caller has it, else NULL.
 */
static struct snapshot *snapshot_of(struct engine *eng, struct ejob *job, const char *spec)
{
    struct snapshot *snap = xcalloc(1, sizeof *snap);
    const struct jobspec *s = ejob_spec(eng, job);
    char *text = spec ? NULL : job_spec_text(eng, job);
    const char *jt = spec ? spec : text;
    snap->job = shown_pack(SHOWN_JOB, jt, strlen(jt));
    free(text);
    text = dump_json(workers_json(job));
    snap->workers = shown_pack(SHOWN_WORKERS, text, strlen(text));
    free(text);
    struct strbuf sum = STRBUF_INIT;
    jobspec_summary_write(s, &sum);
    snap->summary = shown_pack(SHOWN_SUMMARY, sum.buf ? sum.buf : "", sum.len);
    strbuf_free(&sum);
    return snap;
}

/* snap (taken) becomes what clients see. */
static void snapshot_show(struct ejob *job, struct snapshot *snap)
{
    free(job->shown_job);
    free(job->shown_workers);
    free(job->shown_summary);
    job->shown_job = snap->job;
    job->shown_workers = snap->workers;
    job->shown_summary = snap->summary;
    free(snap);
}

/* A copy of a packed text (one block of shown_size bytes). */
static struct shown *shown_copy(const struct shown *src)
{
    size_t n = shown_size(src);
    struct shown *copy = xmalloc(n);
    memcpy(copy, src, n);
    return copy;
}

/*
 * snap (taken, freed) moved into the open batch's bump: what the batch will
 * show stays off the malloc heap until then. Held on the heap, 50,000 jobs'
 * pending texts were spread over ~16 MB of it among the pass's other memory,
 * and the copies shown after took their places, which pinned all of it.
 */
static struct snapshot *snapshot_to_bump(struct bump *bump, struct snapshot *snap)
{
    struct snapshot *b = bump_alloc(bump, sizeof *b);
    b->job = bump_dup(bump, snap->job, shown_size(snap->job));
    b->workers = bump_dup(bump, snap->workers, shown_size(snap->workers));
    b->summary = bump_dup(bump, snap->summary, shown_size(snap->summary));
    b->in_batch_bump = true;
    snapshot_free(snap);
    return b;
}

/* A snapshot of the batch's bump copied onto the heap, to outlive the batch. */
static struct snapshot *snapshot_from_bump(const struct snapshot *snap)
{
    struct snapshot *h = xcalloc(1, sizeof *h);
    h->job = shown_copy(snap->job);
    h->workers = shown_copy(snap->workers);
    h->summary = shown_copy(snap->summary);
    return h;
}

/*
 * The jobs a batch saved show what they saved (their pending snapshots, in
 * the batch's bump): every old text freed first, then every copy made, so
 * that the copies take the old texts' places where they fit. A job whose
 * snapshot a later save took meanwhile is skipped.
 */
static void show_pending(struct ejob **jobs, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        if (jobs[i]->pending == NULL)
            continue;
        free(jobs[i]->shown_job);
        free(jobs[i]->shown_workers);
        free(jobs[i]->shown_summary);
        jobs[i]->shown_job = jobs[i]->shown_workers = jobs[i]->shown_summary = NULL;
    }
    for (size_t i = 0; i < count; i++) {
        const struct snapshot *snap = jobs[i]->pending;
        if (snap == NULL)
            continue;
        jobs[i]->shown_job = shown_copy(snap->job);
        jobs[i]->shown_workers = shown_copy(snap->workers);
        jobs[i]->shown_summary = shown_copy(snap->summary);
        snapshot_free(jobs[i]->pending);
        jobs[i]->pending = NULL;
    }
}

void take_snapshot(struct engine *eng, struct ejob *job)
{
    take_snapshot_with(eng, job, NULL);
}

void take_snapshot_with(struct engine *eng, struct ejob *job, const char *spec)
{
    snapshot_show(job, snapshot_of(eng, job, spec));
    snapshot_free(job->pending); /* older than what is shown now */
    job->pending = NULL;
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
        char *text = shown_text(job->shown_job);
        json_t *saved = text ? json_loads(text, 0, NULL) : NULL;
        free(text);
        const char *shown = json_string_value(json_object_get(saved, "state"));
        engine_log("saving job %s: %s; it keeps showing its last saved state (%s) and is saved "
                   "again when the disk allows",
                   job->name, why, shown ? shown : "none");
        json_decref(saved);
    }
    job->unsaved = true;
    arm_retry(eng);
}

/* A save reached the disk: clients may see it (spec: as in snapshot_of). */
static void save_done(struct engine *eng, struct ejob *job, const char *spec)
{
    if (job->unsaved)
        engine_log("job %s: saved again after the store refused it", job->name);
    job->unsaved = false;
    take_snapshot_with(eng, job, spec);
    lifecycle_stop_saved(eng, job); /* a stop held for its intent goes on */
}

int engine_save(struct engine *eng, struct ejob *job)
{
    derive_outputs(eng, job);
    eng->changes++; /* what a kept scheduling pass read may have changed */
    /* The spec's text once: the record holds it, and so does the snapshot shown after. */
    char *spec = job_spec_text(eng, job);
    char *rec = job_record_with(job, spec);
    struct strbuf err = STRBUF_INIT;
    enum store_status st = store_job_update(eng->store, job->uid, rec, &err);
    free(rec);
    if (st != STORE_OK) {
        save_failed(eng, job, strbuf_str(&err));
        strbuf_free(&err);
        free(spec);
        return -1;
    }
    strbuf_free(&err);
    if (eng->batch_depth > 0) {
        /* On disk only once the batch commits: shown then, as it is now. */
        snapshot_free(job->pending);
        job->pending = snapshot_to_bump(&eng->batch_snaps, snapshot_of(eng, job, spec));
        free(spec);
        if (!job->in_batch) {
            eng->batch = xreallocarray(eng->batch, eng->batch_count + 1, sizeof *eng->batch);
            eng->batch[eng->batch_count++] = job;
            job->in_batch = true;
        }
        return 0;
    }
    save_done(eng, job, spec);
    free(spec);
    return 0;
}

int engine_write_record(struct engine *eng, struct ejob *job, struct strbuf *err)
{
    char *rec = job_record(eng, job);
    enum store_status st = store_job_update(eng->store, job->uid, rec, err);
    free(rec);
    return st == STORE_OK ? 0 : -1;
}

bool engine_job_saved(const struct engine *eng, const struct ejob *job)
{
    (void)eng;
    return !job->unsaved && !job->in_batch;
}

/* The job as last saved (GET, lists, replies): never a state the disk does not have. */
json_t *job_json(const struct ejob *job)
{
    char *text = shown_text(job->shown_job);
    json_t *saved = text ? json_loads(text, 0, NULL) : NULL;
    free(text);
    return saved ? saved : job->full_ ? jobspec_to_json(job->full_) : json_object();
}

/* Its workers as last saved. */
json_t *saved_workers(const struct ejob *job)
{
    char *text = shown_text(job->shown_workers);
    json_t *saved = text ? json_loads(text, 0, NULL) : NULL;
    free(text);
    return saved ? saved : json_array();
}
/* Jobs a batch saves past which the heap is trimmed once it is shown. */
#define BIG_BATCH 1000

/* Most events a job whose save failed holds; older ones are dropped (and logged). */
#define MAX_HELD_EVENTS 100

static void hold_event_at(struct ejob *job, size_t pos, int64_t time_ms, const char *json);

/* Keeps an event written inside the open batch until the batch commits. */
static void keep_batch_event(struct engine *eng, const char *uid, int64_t time_ms, const char *json)
{
    size_t ul = strlen(uid) + 1, jl = strlen(json) + 1;
    while (eng->batch_event_len + ul + jl > eng->batch_event_text_cap) {
        eng->batch_event_text_cap =
            eng->batch_event_text_cap ? eng->batch_event_text_cap * 2 : 4096;
        eng->batch_event_text = xrealloc(eng->batch_event_text, eng->batch_event_text_cap);
    }
    if (eng->batch_event_count == eng->batch_event_cap) {
        eng->batch_event_cap = eng->batch_event_cap ? eng->batch_event_cap * 2 : 64;
        eng->batch_events =
            xreallocarray(eng->batch_events, eng->batch_event_cap, sizeof *eng->batch_events);
    }
    struct batch_event *be = &eng->batch_events[eng->batch_event_count++];
    be->uid = eng->batch_event_len;
    memcpy(eng->batch_event_text + eng->batch_event_len, uid, ul);
    eng->batch_event_len += ul;
    be->json = eng->batch_event_len;
    memcpy(eng->batch_event_text + eng->batch_event_len, json, jl);
    eng->batch_event_len += jl;
    be->time_ms = time_ms;
}

/*
 * A batch that did not commit took its events with it: each is held again on
 * its job, before any the job held meanwhile, and recorded after the state it
 * tells of once a save succeeds (retry_saves), as for a save refused alone.
 * Newest first, each put in front: a job's events keep their order, and a job
 * already holding the most it may loses the oldest, as hold_event_at does.
 */
static void hold_batch_events(struct engine *eng, bool ok)
{
    for (size_t i = eng->batch_event_count; !ok && i-- > 0;) {
        const struct batch_event *be = &eng->batch_events[i];
        struct ejob *job = engine_find_uid(eng, eng->batch_event_text + be->uid);
        if (job == NULL)
            continue;
        if (job->held_event_count >= MAX_HELD_EVENTS)
            engine_log("job %s: an event dropped while its saves fail: %s", job->name,
                       eng->batch_event_text + be->json);
        else
            hold_event_at(job, 0, be->time_ms, eng->batch_event_text + be->json);
    }
    free(eng->batch_events);
    free(eng->batch_event_text);
    eng->batch_events = NULL;
    eng->batch_event_text = NULL;
    eng->batch_event_count = eng->batch_event_cap = 0;
    eng->batch_event_len = eng->batch_event_text_cap = 0;
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
    struct ejob **show = xreallocarray(NULL, count ? count : 1, sizeof *show);
    size_t show_count = 0;
    for (size_t i = 0; i < count; i++) {
        jobs[i]->in_batch = false;
        if (ok && !jobs[i]->unsaved && jobs[i]->pending)
            show[show_count++] = jobs[i]; /* packed when it was saved */
        else if (ok && !jobs[i]->unsaved)
            save_done(eng, jobs[i], NULL);
        else if (!ok)
            save_failed(eng, jobs[i], strbuf_str(&err));
    }
    show_pending(show, show_count);
    free(show);
    /* What a failed batch would have shown stays what memory holds (ejob_spec reads it). */
    for (size_t i = 0; i < count; i++)
        if (jobs[i]->pending && jobs[i]->pending->in_batch_bump)
            jobs[i]->pending = snapshot_from_bump(jobs[i]->pending);
    if (eng->batch_depth == 0) /* else a batch begun meanwhile holds its own there */
        bump_reset(&eng->batch_snaps);
    if (!ok && eng->batch_event_count) {
        engine_log("%zu event(s) held until their jobs are saved: %s", eng->batch_event_count,
                   strbuf_str(&err));
        arm_retry(eng); /* their jobs may all be saved: the retry records the events */
    }
    hold_batch_events(eng, ok);
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
    /* A pass that re-saved thousands of jobs held their old and new texts at once. */
    if (count >= BIG_BATCH) {
        engine_trim_soon(eng);
    }
    strbuf_free(&err);
    /* The stops of the batch: their intents are on disk now (or logged as refused). */
    lifecycle_term_deferred(eng);
}

/*
 * Stores one event (its JSON without id), folds old ones, and tells watchers;
 * false on failure. The fold (a DELETE) runs only once the job may hold more
 * than the limit: a job's first events, most jobs' only ones, cost an INSERT
 * each. A count that went wrong (a batch rolled back) only folds sooner, or
 * one event later.
 */
static bool record_event(struct engine *eng, struct ejob *job, int64_t time_ms, const char *json,
                         bool quiet)
{
    struct strbuf err = STRBUF_INIT;
    int64_t id = 0;
    struct config_limits lim;
    config_effective_limits(&eng->cfg, &lim);
    int keep = lim.events_per_job > 0 ? lim.events_per_job : 0;
    bool stored = store_event_add(eng->store, job->uid, time_ms, json, &id, &err) == STORE_OK;
    if (stored && job->events_stored >= 0 && job->events_stored < INT_MAX)
        job->events_stored++;
    if (stored && (job->events_stored < 0 || job->events_stored > keep)) {
        stored =
            store_events_trim(eng->store, job->uid, keep, &job->events_folded, &err) == STORE_OK;
        if (stored)
            job->events_stored = keep;
    }
    if (!stored && !quiet)
        engine_log("event for %s not recorded: %s", job->name, strbuf_str(&err));
    strbuf_free(&err);
    if (stored && eng->watcher_count) {
        json_t *e = json_loads(json, 0, NULL);
        if (e != NULL) {
            json_object_set_new(e, "id", json_integer(id));
            broadcast(eng, job->ws, json_pack("{s:s, s:o}", "type", "EVENT", "event", e));
        }
    }
    return stored;
}

/* Holds an event at pos among the job's held ones (the oldest goes when they are too many). */
static void hold_event_at(struct ejob *job, size_t pos, int64_t time_ms, const char *json)
{
    if (job->held_event_count == MAX_HELD_EVENTS) {
        engine_log("job %s: an event dropped while its saves fail: %s", job->name,
                   job->held_events[0].json);
        free(job->held_events[0].json);
        memmove(job->held_events, job->held_events + 1,
                (MAX_HELD_EVENTS - 1) * sizeof *job->held_events);
        job->held_event_count--;
        pos = pos > 0 ? pos - 1 : 0;
    }
    if (pos > job->held_event_count)
        pos = job->held_event_count;
    job->held_events =
        xreallocarray(job->held_events, job->held_event_count + 1, sizeof *job->held_events);
    memmove(job->held_events + pos + 1, job->held_events + pos,
            (job->held_event_count - pos) * sizeof *job->held_events);
    job->held_events[pos] = (struct held_event){time_ms, xstrdup(json)};
    job->held_event_count++;
}

/* Holds an event of a job whose state is not saved: it must not be told before that state. */
static void hold_event(struct ejob *job, int64_t time_ms, const char *json)
{
    hold_event_at(job, job->held_event_count, time_ms, json);
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
    ev->job = job->name;
    json_t *j = job_event_to_json(ev);
    char *s = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    if (s == NULL)
        xalloc_die();
    /* A job whose last save failed: its events wait for the state they tell of. */
    if (job->unsaved || job->held_event_count > 0) {
        hold_event(job, now, s);
    } else {
        record_event(eng, job, now, s, false);
        if (eng->batch_depth > 0) {
            /* In the batch's transaction (or refused there): kept until it commits. */
            keep_batch_event(eng, job->uid, now, s);
        }
    }
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

void stamp(char **field)
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
    enum job_state old = job->state;
    bool message_changed = (message == NULL) != (job->state_message == NULL) ||
                           (message && strcmp(message, job->state_message) != 0);
    job->state = state;
    const char *job_prev_message = job->state_message;
    job->state_message = ejob_share_text(message);
    struct jobspec *s = ejob_spec(eng, job);
    stamp(&s->update_time);
    if (state == JOB_STATE_RUNNING && old != JOB_STATE_RUNNING)
        stamp(&s->start_time);
    if (state == JOB_STATE_SUSPENDED)
        stamp(&s->suspend_time);
    if (state == JOB_STATE_SUCCEEDED || state == JOB_STATE_FAILED)
        stamp(&s->complete_time);
    engine_save(eng, job);
    engine_publish(eng, job);
    /* A waiting reason whose numbers move with free capacity is not news. */
    bool news = old != state || (message_changed && !same_but_numbers(message, job_prev_message));
    if (news) {
        struct job_event ev = {0};
        ev.kind = old != state ? EVENT_STATE : EVENT_WAITING;
        ev.state = state;
        char text[512];
        if (old != state)
            snprintf(text, sizeof text, "%s → %s%s%s", enum_name(&job_state_names, (int)old),
                     enum_name(&job_state_names, (int)state), message && *message ? ": " : "",
                     message ? message : "");
        else if (message && *message)
            snprintf(text, sizeof text, "%s", message);
        else /* the reason went: say which, not an empty "waiting" */
            snprintf(text, sizeof text, "no longer waiting: %s",
                     job_prev_message && *job_prev_message ? job_prev_message : "waiting");
        ev.message = text;
        engine_event(eng, job, &ev);
    }
    ejob_unshare_text(job_prev_message);
}

/* The job is gone from the store: tell watchers, drop it and its files. */
static void forget_job(struct engine *eng, struct ejob *job)
{
    eng->changes++; /* what a kept scheduling pass read may have changed */
    if (eng->watcher_count)
        broadcast(eng, job->ws,
                  json_pack("{s:s, s:{s:s, s:s}}", "type", "DELETED", "job", "name", job->name,
                            "uid", job->uid));
    lifecycle_forget(eng, job);
    cgroup_remove_job(eng->opt.cgroups, job->uid); /* a failed start's, a dead shim's */
    drop_job(eng, job);
    ejob_unlist(eng, job);
    for (size_t i = 0; i < eng->batch_count; i++)
        if (eng->batch[i] == job)
            eng->batch[i--] = eng->batch[--eng->batch_count];
    /* Its workers are gone: its logs, status files and directories go with it. */
    jobfiles_remove(eng->state_dir, eng->status_dir, job->uid);
    ejob_free(job);
}

void engine_remove(struct engine *eng, struct ejob *job)
{
    struct strbuf err = STRBUF_INIT;
    if (store_job_delete(eng->store, job->uid, &err) == STORE_ERROR) {
        /* Still on disk: kept (DELETING) until a retry removes it, files and all. */
        if (!job->remove_pending)
            engine_log("deleting %s: %s; retried when the disk allows", job->name,
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
        lifecycle_forget_end_files(eng, status);
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
            bool gone = store_job_delete(eng->store, job->uid, &err) != STORE_ERROR;
            strbuf_free(&err);
            if (gone) {
                engine_log("job %s: deleted after the store refused it", job->name);
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
