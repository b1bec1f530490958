/*
 * jobstore: what the monitoring screens show — the workspace's jobs as the
 * backend last reported them, one compact row each (the columns of the jobs
 * view, not the whole job: 10,000 jobs must fit in a few MiB), with the
 * workers the watch stream sent and the job's latest events (a bounded
 * number per job, so a dashboard left open for days does not grow).
 *
 * Fed by watch messages (jobstore_apply) or by a poll's whole list
 * (jobstore_replace_all); read by the views through jobstore_at / _find.
 * Rows keep the order they arrived in; the table sorts. Names find rows
 * through a hash index. Every change bumps the store's version and the
 * row's, so a view redraws only when something it shows changed. No
 * curses: tested and benchmarked on its own.
 */
#ifndef TUI_JOBSTORE_H
#define TUI_JOBSTORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/jobspec.h"
#include "api/jobstatus.h"

struct watch_message;
struct job_list;
struct catalog;

#define JOBSTORE_EVENTS_PER_JOB 200 /* older events are dropped */
#define JOB_STATE_COUNT (JOB_STATE_RECOVERING + 1)

#define JOB_ROW_END_UNKNOWN (-2) /* job_row.ended_ms: it ended, the backend did not say when */

struct job_row {
    uint64_t key; /* stable: a hash of the uid (else the name) */
    uint64_t version;
    char *name;
    char *display_name;
    char *uid;
    /* pool, spec, reason, user and the *_other words are shared between rows (the store's): read,
     * never free */
    char *pool;         /* resource_pool.name */
    char *spec;         /* the worker role's first resource spec ("N2-8xA100") */
    char *reason;       /* state_message: why it waits or failed */
    char *user;         /* ownership.user_name: who created it */
    char *create_time;  /* RFC 3339 */
    char *sched_id;     /* jobspec_scheduler_id: Slurm's job id; NULL for none */
    char *nodes;        /* the nodes its workers are on, "n1,n2" (trainjobd); NULL: not said */
    int64_t created_ms; /* -1: unknown */
    int64_t started_ms; /* start_time: the last time it began running; -1: never/unknown */
    int64_t ended_ms;   /* when that run ended (complete/suspend time); -1: still on */
    enum job_state state;
    enum priority priority;
    /* a state or priority this build does not know (PREEMPTED, URGENT): the server's word */
    char *state_other;    /* shared, as pool */
    char *priority_other; /* shared, as pool */
    enum framework framework;
    bool idle;              /* resource type idle (SPOT) rather than standard */
    int32_t ready;          /* workers running now; -1: not reported */
    int32_t total;          /* workers asked for */
    int32_t devices;        /* devices asked for in all (total × per-spec devices); -1: unknown */
    int32_t restarts;       /* restarts used; -1: not reported */
    int32_t restart_limit;  /* backoff_limit: -1 unlimited */
    bool has_workers;       /* workers below came with the job (a watch) */
    bool workers_stale;     /* a summary said the job changed since its workers were set */
    uint64_t summaries;     /* JOB messages without workers (summaries) for this row */
    bool events_stale;      /* a poll saw the job change: it may have events not fetched */
    int32_t faulty_workers; /* the server's count of faulty workers; -1: not reported */
    struct worker_list workers;
    struct job_event *events; /* oldest first, at most JOBSTORE_EVENTS_PER_JOB */
    size_t event_count;
    int64_t last_event_id;
    uint32_t generation; /* the connection that last reported it */
    size_t slot;         /* its place in the store's array (the store's to keep) */
};

struct jobstore;

struct jobstore *jobstore_new(void);
void jobstore_free(struct jobstore *s);

/* The rows in arrival order (the first read after removals closes their holes: not const). */
size_t jobstore_count(struct jobstore *s);
const struct job_row *jobstore_at(struct jobstore *s, size_t i);
const struct job_row *jobstore_find(const struct jobstore *s, const char *name);
/* Bumped by every change. */
uint64_t jobstore_version(const struct jobstore *s);

/*
 * A new connection: the rows reported from now on belong to it, and
 * jobstore_sweep then drops those it did not report (jobs deleted while
 * the stream was down).
 */
void jobstore_begin_sync(struct jobstore *s);
/* Drops rows not reported since jobstore_begin_sync; true when any went. */
bool jobstore_sweep(struct jobstore *s);

/* One watch message (JOB, EVENT, DELETED; SYNCED sweeps). True when something changed. */
bool jobstore_apply(struct jobstore *s, const struct watch_message *m);
/* A poll's whole list: rows not in it go. True when something changed. */
bool jobstore_replace_all(struct jobstore *s, const struct job_list *l);
/* A job as a row (inserted or updated). True when something shown changed. */
bool jobstore_put(struct jobstore *s, const struct jobspec *job);
bool jobstore_remove(struct jobstore *s, const char *name);
/* Workers of a job fetched on their own (a backend without watch); taken. */
void jobstore_set_workers(struct jobstore *s, const char *name, struct worker_list *w);
/* A job's event history (fetched when the job is opened): merged by id, taken. */
void jobstore_add_events(struct jobstore *s, const char *name, struct job_event_list *l);

/*
 * The catalog (kept, not copied; NULL: none) that says how many devices a
 * spec has, for jobs whose reply does not: every row's devices are redone.
 */
void jobstore_set_catalog(struct jobstore *s, const struct catalog *cat);

/* Counts of rows by state, for the title bar. */
void jobstore_count_states(const struct jobstore *s, size_t counts[JOB_STATE_COUNT]);

/* A faulty job: failed, or restarted at least once, or a worker with a non-zero exit. */
bool job_row_faulty(const struct job_row *r);

#endif
