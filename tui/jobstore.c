/*
 * jobstore: the rows of the monitoring screens; see jobstore.h. Rows are
 * separately allocated (pointers stay put while the array grows, so a view
 * may hold one across a turn) and found by name through a hash index
 * (util/hmap). A removed row leaves a hole that the next read of the array
 * (jobstore_count, jobstore_at) closes in one pass: deleting 50,000 jobs one
 * watch message at a time costs O(N) in all, not a scan and a rebuilt index
 * each.
 */
#include "tui/jobstore.h"

#include <stdlib.h>
#include <string.h>

#include "api/backend.h"
#include "api/catalog.h"
#include "util/hmap.h"
#include "util/timefmt.h"
#include "util/xalloc.h"

struct jobstore {
    struct job_row **rows; /* in arrival order; NULL: removed (a hole until tidy) */
    size_t count, cap;     /* count includes the holes */
    size_t holes;
    struct hmap index;  /* name → row */
    struct hmap shared; /* text many rows hold (pool, spec, reason) → struct shared_text */
    uint64_t version;
    uint32_t generation;
    const struct catalog *catalog;
};

static uint64_t hash_text(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; s && *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ull;
    }
    return h;
}

static uint64_t name_hash(const char *name)
{
    return hmap_hash(name, strlen(name));
}

static bool same_name(const void *item, const void *key)
{
    return strcmp(((const struct job_row *)item)->name, key) == 0;
}

static struct job_row *row_named(const struct jobstore *s, const char *name)
{
    return name ? hmap_get(&s->index, name_hash(name), same_name, name) : NULL;
}

/* Closes the holes removed rows left, keeping the order; each row learns its new slot. */
static void tidy(struct jobstore *s)
{
    if (s->holes == 0)
        return;
    size_t out = 0;
    for (size_t i = 0; i < s->count; i++) {
        if (s->rows[i] == NULL)
            continue;
        s->rows[i]->slot = out;
        s->rows[out++] = s->rows[i];
    }
    s->count = out;
    s->holes = 0;
}

static void row_free(struct jobstore *s, struct job_row *r);

/* Takes r out of the index and the array (a hole) and frees it. */
static void drop(struct jobstore *s, struct job_row *r)
{
    hmap_remove(&s->index, name_hash(r->name), r);
    s->rows[r->slot] = NULL;
    s->holes++;
    row_free(s, r);
}

struct jobstore *jobstore_new(void)
{
    return xcalloc(1, sizeof(struct jobstore));
}

/*
 * Text most rows repeat — a pool, a spec, a waiting reason — is kept once,
 * counted: 50,000 rows of "waiting for the scheduler" hold one copy (issue
 * 14: trainjob top over 50,000 jobs must stay under 40 MiB). A text no row
 * holds any more is freed, so distinct reasons do not pile up.
 */
struct shared_text {
    size_t refs;
    char text[];
};

static struct shared_text *shared_of(const char *text)
{
    return (struct shared_text *)(void *)(text - offsetof(struct shared_text, text));
}

static bool same_text(const void *item, const void *key)
{
    return strcmp(((const struct shared_text *)item)->text, key) == 0;
}

static char *share(struct jobstore *s, const char *text)
{
    size_t n = strlen(text);
    uint64_t h = hmap_hash(text, n);
    struct shared_text *t = hmap_get(&s->shared, h, same_text, text);
    if (t == NULL) {
        t = xmalloc(sizeof *t + n + 1);
        t->refs = 0;
        memcpy(t->text, text, n + 1);
        hmap_put(&s->shared, h, t);
    }
    t->refs++;
    return t->text;
}

static void unshare(struct jobstore *s, char *text)
{
    if (text == NULL)
        return;
    struct shared_text *t = shared_of(text);
    if (--t->refs > 0)
        return;
    hmap_remove(&s->shared, hmap_hash(text, strlen(text)), t);
    free(t);
}

/* set_text for a shared field; true when the text differs. */
static bool set_shared(struct jobstore *s, char **dst, const char *src)
{
    if ((*dst == NULL && src == NULL) || (*dst && src && strcmp(*dst, src) == 0))
        return false;
    unshare(s, *dst);
    *dst = src ? share(s, src) : NULL;
    return true;
}

static void row_free(struct jobstore *s, struct job_row *r)
{
    free(r->name);
    free(r->display_name);
    free(r->uid);
    unshare(s, r->pool);
    unshare(s, r->spec);
    unshare(s, r->reason);
    unshare(s, r->user);
    unshare(s, r->state_other);
    unshare(s, r->priority_other);
    free(r->create_time);
    free(r->sched_id);
    free(r->nodes);
    worker_list_free(&r->workers);
    for (size_t i = 0; i < r->event_count; i++)
        job_event_free(&r->events[i]);
    free(r->events);
    free(r);
}

void jobstore_free(struct jobstore *s)
{
    if (s == NULL)
        return;
    for (size_t i = 0; i < s->count; i++)
        if (s->rows[i])
            row_free(s, s->rows[i]);
    free(s->rows);
    hmap_free(&s->index);
    hmap_free(&s->shared);
    free(s);
}

size_t jobstore_count(struct jobstore *s)
{
    tidy(s);
    return s->count;
}

const struct job_row *jobstore_at(struct jobstore *s, size_t i)
{
    tidy(s);
    return i < s->count ? s->rows[i] : NULL;
}

const struct job_row *jobstore_find(const struct jobstore *s, const char *name)
{
    return row_named(s, name);
}

uint64_t jobstore_version(const struct jobstore *s)
{
    return s->version;
}

void jobstore_begin_sync(struct jobstore *s)
{
    s->generation++;
}

/* Keeps the rows for which keep() holds, in order; true when any went. */
static bool remove_where(struct jobstore *s, bool (*keep)(const struct job_row *, const void *),
                         const void *arg)
{
    bool gone = false;
    for (size_t i = 0; i < s->count; i++) {
        if (s->rows[i] && !keep(s->rows[i], arg)) {
            drop(s, s->rows[i]);
            gone = true;
        }
    }
    tidy(s);
    if (gone)
        s->version++;
    return gone;
}

static bool reported_now(const struct job_row *r, const void *arg)
{
    return r->generation == *(const uint32_t *)arg;
}

bool jobstore_sweep(struct jobstore *s)
{
    return remove_where(s, reported_now, &s->generation);
}

bool jobstore_remove(struct jobstore *s, const char *name)
{
    struct job_row *r = row_named(s, name);
    if (r == NULL)
        return false;
    drop(s, r);
    s->version++;
    return true;
}

/* ---- a job as a row ------------------------------------------------------ */

/* Replaces *dst with a copy of src; true when the text differs. */
static bool set_text(char **dst, const char *src)
{
    if ((*dst == NULL && src == NULL) || (*dst && src && strcmp(*dst, src) == 0))
        return false;
    free(*dst);
    *dst = src ? xstrdup(src) : NULL;
    return true;
}

#define SET(field, value)                                                                          \
    do {                                                                                           \
        if ((field) != (value)) {                                                                  \
            (field) = (value);                                                                     \
            changed = true;                                                                        \
        }                                                                                          \
    } while (0)

/* Workers a job asks for: the worker role's total, or its per-spec replicas. */
static int32_t total_workers(const struct role *w)
{
    if (w == NULL)
        return 0;
    if (w->has_total_replicas)
        return w->total_replicas;
    int32_t n = 0;
    for (size_t i = 0; i < w->resource_spec_count; i++)
        n += w->resource_spec[i].has_replicas ? w->resource_spec[i].replicas : 0;
    return n;
}

/* Devices per worker from a spec's description ("8xA100-80GB" → 8), or -1. */
static int32_t spec_devices(const struct resource_spec_ref *spec)
{
    const char *d = spec ? spec->description : NULL;
    if (d == NULL)
        return -1;
    char *end;
    long n = strtol(d, &end, 10);
    return end != d && (*end == 'x' || *end == 'X') && n >= 0 && n < 100000 ? (int32_t)n : -1;
}

/* Devices per worker of a row's spec from the catalog, or -1. */
static int32_t catalog_devices(const struct catalog *cat, const struct job_row *r)
{
    const struct catalog_pool *pool = cat && r->pool ? catalog_pool(cat, r->pool) : NULL;
    const struct catalog_spec *spec = pool && r->spec ? catalog_pool_spec(pool, r->spec) : NULL;
    return spec ? spec->devices : -1;
}

/*
 * When the job's last run ended: its complete time (succeeded, failed) or
 * suspend time (suspended), its last update in any other state but RUNNING
 * (queued again, restarting, stopping, deleted); -1 while it runs (or never ran); JOB_ROW_END_UNKNOWN when it ended at a time not told. A
 * stamp older than the start is of an earlier run, not this one's end.
 */
static int64_t run_end_ms(const struct jobspec *job, int64_t started)
{
    if (started < 0)
        return -1;
    const char *end = NULL;
    switch (job->state) {
    case JOB_STATE_SUCCEEDED:
    case JOB_STATE_FAILED:
        end = job->complete_time;
        break;
    case JOB_STATE_SUSPENDED:
        end = job->suspend_time;
        break;
    case JOB_STATE_DELETING:
    case JOB_STATE_DELETED:
        end = job->update_time;
        break;
    case JOB_STATE_RUNNING:
        return -1;
    default:
        /* Back in the queue, restarting, stopping: the run ended when the state last
         * changed (TIME is running time; it stops while the job does not run). */
        end = job->update_time;
        break;
    }
    int64_t ms = end ? time_parse_rfc3339(end) : -1;
    return ms >= started ? ms : JOB_ROW_END_UNKNOWN;
}

/* Fills r from job; true when anything the views show changed. */
static bool row_set(struct jobstore *s, struct job_row *r, const struct jobspec *job)
{
    bool changed = false;
    changed |= set_text(&r->name, job->name);
    changed |= set_text(&r->display_name, job->display_name);
    changed |= set_text(&r->uid, job->uid);
    changed |= set_shared(s, &r->pool, job->resource_pool.name);
    changed |= set_shared(s, &r->user, job->ownership.user_name);
    changed |= set_shared(s, &r->reason, job->state_message);
    changed |= set_shared(s, &r->state_other, job->state_other);
    changed |= set_shared(s, &r->priority_other, job->scheduling.priority_other);
    changed |= set_text(&r->create_time, job->create_time);
    changed |= set_text(&r->sched_id, jobspec_scheduler_id(job));
    changed |= set_text(&r->nodes, job->nodes);
    const struct role *w = jobspec_worker(job);
    const struct resource_spec_ref *spec =
        w && w->resource_spec_count ? &w->resource_spec[0] : NULL;
    changed |= set_shared(s, &r->spec, spec ? spec->name : NULL);
    SET(r->created_ms, job->create_time ? time_parse_rfc3339(job->create_time) : -1);
    SET(r->started_ms, job->start_time ? time_parse_rfc3339(job->start_time) : -1);
    SET(r->ended_ms, run_end_ms(job, r->started_ms));
    SET(r->state, job->state);
    SET(r->priority, job->scheduling.priority);
    SET(r->framework, job->framework);
    SET(r->idle, jobspec_is_idle(job));
    SET(r->ready, job->has_ready_workers ? job->ready_workers : -1);
    int32_t total = total_workers(w);
    SET(r->total, total);
    int32_t per = spec_devices(spec);
    if (per < 0)
        per = catalog_devices(s->catalog, r);
    SET(r->devices, per < 0 ? -1 : per * total);
    SET(r->restarts, job->has_restart_count ? job->restart_count : -1);
    SET(r->faulty_workers, job->has_faulty_workers ? job->faulty_workers : -1);
    SET(r->restart_limit,
        job->fault_tolerance.has_backoff_limit ? job->fault_tolerance.backoff_limit : 0);
    r->key = hash_text(r->uid ? r->uid : r->name);
    return changed;
}

static struct job_row *insert(struct jobstore *s)
{
    if (s->count == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 64;
        s->rows = xreallocarray(s->rows, s->cap, sizeof *s->rows);
    }
    struct job_row *r = xcalloc(1, sizeof *r);
    r->slot = s->count;
    s->rows[s->count++] = r;
    return r;
}

/* The row of job (made when new); *fresh says whether it was. */
static struct job_row *row_for(struct jobstore *s, const struct jobspec *job, bool *fresh)
{
    struct job_row *r = row_named(s, job->name);
    *fresh = r == NULL;
    if (r)
        return r;
    r = insert(s);
    r->name = xstrdup(job->name);
    hmap_put(&s->index, name_hash(r->name), r);
    return r;
}

bool jobstore_put(struct jobstore *s, const struct jobspec *job)
{
    if (job->name == NULL || *job->name == '\0')
        return false;
    bool fresh;
    struct job_row *r = row_for(s, job, &fresh);
    r->generation = s->generation;
    bool changed = row_set(s, r, job) || fresh;
    if (changed) {
        r->version++;
        s->version++;
    }
    return changed;
}

static bool workers_equal(const struct worker_list *a, const struct worker_list *b)
{
    if (a->count != b->count)
        return false;
    for (size_t i = 0; i < a->count; i++)
        if (!worker_info_equal(&a->workers[i], &b->workers[i]))
            return false;
    return true;
}

/* Replaces r's workers with copies of w; true when they differ. */
static bool set_workers(struct job_row *r, const struct worker_list *w)
{
    if (r->has_workers && workers_equal(&r->workers, w))
        return false;
    worker_list_free(&r->workers);
    r->workers.workers = xcalloc(w->count ? w->count : 1, sizeof *r->workers.workers);
    for (size_t i = 0; i < w->count; i++)
        worker_info_copy(&r->workers.workers[i], &w->workers[i]);
    r->workers.count = w->count;
    r->has_workers = true;
    return true;
}

/* Appends a copy of e unless it is already there (by id); drops the oldest past the bound. */
static bool add_event(struct job_row *r, const struct job_event *e)
{
    if (e->id != 0 && e->id <= r->last_event_id) {
        for (size_t i = 0; i < r->event_count; i++)
            if (r->events[i].id == e->id)
                return false;
    }
    if (r->event_count == JOBSTORE_EVENTS_PER_JOB) {
        job_event_free(&r->events[0]);
        memmove(&r->events[0], &r->events[1], (r->event_count - 1) * sizeof *r->events);
        r->event_count--;
    }
    if (r->events == NULL)
        r->events = xcalloc(JOBSTORE_EVENTS_PER_JOB, sizeof *r->events);
    /* Kept in id order: a history fetched after live events slots in before them. */
    size_t at = r->event_count;
    while (at > 0 && e->id != 0 && r->events[at - 1].id > e->id)
        at--;
    memmove(&r->events[at + 1], &r->events[at], (r->event_count - at) * sizeof *r->events);
    job_event_copy(&r->events[at], e);
    r->event_count++;
    if (e->id > r->last_event_id)
        r->last_event_id = e->id;
    return true;
}

bool jobstore_apply(struct jobstore *s, const struct watch_message *m)
{
    struct job_row *r;
    bool changed = false;
    switch (m->kind) {
    case WATCH_JOB:
        changed = jobstore_put(s, &m->job);
        r = row_named(s, m->job.name);
        if (r == NULL)
            break;
        if (m->has_workers || m->workers.count > 0) {
            if (set_workers(r, &m->workers)) {
                r->version++;
                changed = true;
            }
        } else {
            /*
             * A summary (view=BASIC): the server sends one only when the job
             * changed, perhaps in its workers, which a summary leaves out. The
             * job screen, the one place that shows them, fetches them again.
             */
            r->summaries++;
            if (r->has_workers && !r->workers_stale) {
                r->workers_stale = true;
                r->version++;
                changed = true;
            }
        }
        break;
    case WATCH_EVENT:
        r = row_named(s, m->event.job);
        if (r && add_event(r, &m->event)) {
            r->version++;
            changed = true;
        }
        break;
    case WATCH_DELETED:
        changed = jobstore_remove(s, m->job.name);
        break;
    case WATCH_SYNCED:
        changed = jobstore_sweep(s);
        break;
    }
    if (changed)
        s->version++;
    return changed;
}

bool jobstore_replace_all(struct jobstore *s, const struct job_list *l)
{
    jobstore_begin_sync(s);
    bool changed = false;
    for (size_t i = 0; i < l->count; i++) {
        if (!jobstore_put(s, &l->jobs[i]))
            continue;
        changed = true;
        /*
         * A polled backend sends no workers and no events: a job that changed
         * may have both anew, so the job screen, the one place that shows
         * them, fetches them again (as after a watch's summary).
         */
        struct job_row *r = row_named(s, l->jobs[i].name);
        if (r == NULL)
            continue;
        r->summaries++;
        r->events_stale = true;
        if (r->has_workers)
            r->workers_stale = true;
    }
    changed |= jobstore_sweep(s);
    return changed;
}

void jobstore_set_workers(struct jobstore *s, const char *name, struct worker_list *w)
{
    struct job_row *r = row_named(s, name);
    if (r && r->workers_stale) {
        r->workers_stale = false;
        r->version++;
        s->version++;
    }
    if (r && set_workers(r, w)) {
        r->version++;
        s->version++;
    }
    worker_list_free(w);
}

void jobstore_add_events(struct jobstore *s, const char *name, struct job_event_list *l)
{
    struct job_row *r = row_named(s, name);
    bool changed = false;
    if (r)
        r->events_stale = false;
    for (size_t i = 0; r && i < l->count; i++)
        changed |= add_event(r, &l->events[i]);
    if (changed) {
        r->version++;
        s->version++;
    }
    job_event_list_free(l);
}

void jobstore_set_catalog(struct jobstore *s, const struct catalog *cat)
{
    s->catalog = cat;
    for (size_t i = 0; i < s->count; i++) {
        struct job_row *r = s->rows[i];
        if (r == NULL)
            continue;
        int32_t per = catalog_devices(cat, r);
        int32_t devices = per < 0 ? -1 : per * r->total;
        if (devices != r->devices && per >= 0) {
            r->devices = devices;
            r->version++;
            s->version++;
        }
    }
}

void jobstore_count_states(const struct jobstore *s, size_t counts[JOB_STATE_COUNT])
{
    memset(counts, 0, JOB_STATE_COUNT * sizeof *counts);
    for (size_t i = 0; i < s->count; i++)
        if (s->rows[i] && (size_t)s->rows[i]->state < JOB_STATE_COUNT)
            counts[s->rows[i]->state]++;
}

bool job_row_faulty(const struct job_row *r)
{
    if (r->state == JOB_STATE_FAILED || r->restarts > 0)
        return true;
    if (r->faulty_workers > 0) /* a summary's count: the workers themselves may not be here */
        return true;
    for (size_t i = 0; i < r->workers.count; i++) {
        const struct worker_info *w = &r->workers.workers[i];
        bool failed_exit = w->has_exit_code && w->exit_code != 0 && !worker_info_stopped(w);
        if (failed_exit || w->restarts > 0 || w->phase == WORKER_FAILED)
            return true;
    }
    return false;
}
