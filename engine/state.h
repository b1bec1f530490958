/*
 * state: trainjobd's in-memory state — struct engine, and each job with its
 * workers as the engine tracks them. Shared by engine.c (requests,
 * persistence, events, watch streams) and lifecycle.c (scheduling passes,
 * starting and stopping workers, worker ends and fault decisions). Nothing
 * outside engine/ sees these structs.
 */
#ifndef ENGINE_STATE_H
#define ENGINE_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/jobspec.h"
#include "api/jobstatus.h"
#include "engine/config.h"
#include "engine/engine.h"
#include "engine/runner.h"

struct loop;
struct store;
struct stream;

/* What a job does once every worker has stopped. */
enum after_stop {
    AFTER_STOP_NONE,
    AFTER_STOP_SUSPEND, /* user stop: SUSPENDED */
    AFTER_STOP_RESTART, /* fault RESTART_JOB: back to the queue, state RESTARTING */
    AFTER_STOP_REQUEUE, /* preempted: back to the queue, state QUEUEING */
    AFTER_STOP_FAIL,    /* fault FAIL_JOB or no restarts left: FAILED */
    AFTER_STOP_DELETE,  /* removed once stopped */
};

struct eworker {
    char *name; /* "master-0", "worker-0", … */
    char *role;
    int index;
    char *node;
    char *devices; /* "0,1", "" without devices */
    int port;
    enum worker_phase phase;
    int restarts;
    bool has_exit_code;
    int exit_code;
    int attempt; /* numbers status files, so an old attempt's end is not taken for the new one */
    bool live;   /* a process exists (or may): holds capacity, must be stopped */
    struct runner_proc proc;
    char *create_time;
    char *start_time;
    char *finish_time;
};

struct kill_ctx;

struct ejob {
    struct jobspec spec; /* the job as submitted plus its output fields */
    uint64_t seq;
    int restarts;    /* restarts used */
    char **excluded; /* nodes marked unschedulable for this job */
    size_t excluded_count;
    struct eworker *workers;
    size_t worker_count;
    enum after_stop after_stop;
    char *after_stop_reason;   /* e.g. "preempted by standard job x" */
    char *preempted_by;        /* set while a preempted job waits: part of its reason */
    uint64_t kill_timer;       /* SIGKILL after the grace period of a stop */
    struct kill_ctx *kill_ctx; /* the timer's context, freed when it is cancelled */
    /* resolved from the catalogue at create time */
    int gpus, cpus;
    int64_t memory_mib;
};

struct engine {
    struct engine_options opt;
    char *config_path;
    char *state_dir;
    char *status_dir;
    char *log_dir;
    char *shim_path;
    struct engine_config cfg;
    struct store *store;
    struct loop *loop;
    struct ejob **jobs;
    size_t job_count, job_cap;
    uint64_t next_seq;
    struct stream **watchers; /* tagged with their workspace */
    size_t watcher_count;
    struct stream **followers; /* tagged with their log file */
    size_t follower_count;
    int inotify_fd;
    int status_wd, log_wd;
    uint64_t sched_timer;
    uint64_t trim_timer; /* gives freed heap back after watchers leave */
    bool sandbox;
};

/* engine.c */
struct ejob *engine_find(struct engine *eng, const char *ws, const char *name);
struct ejob *engine_find_uid(struct engine *eng, const char *uid);
/* Writes the job to the store; logs (and returns -1) when the disk refuses. */
int engine_save(struct engine *eng, struct ejob *job);
/* Tells every watcher of the job's workspace about its current state and workers. */
void engine_publish(struct engine *eng, struct ejob *job);
/* Records an event (store + watchers); message is the sentence a person reads. */
void engine_event(struct engine *eng, struct ejob *job, struct job_event *ev);
/* Sets state (and message), stamps times, saves, publishes, records a STATE event. */
void engine_set_state(struct engine *eng, struct ejob *job, enum job_state state,
                      const char *message);
void engine_remove(struct engine *eng, struct ejob *job);

/* lifecycle.c */
/* Asks for a scheduling pass on the next loop turn (passes coalesce). */
void lifecycle_schedule_soon(struct engine *eng);
/* Starts stopping every live worker of job; `then` happens once all have ended. */
void lifecycle_stop(struct engine *eng, struct ejob *job, enum after_stop then, const char *why);
/* Cancels a stop's pending SIGKILL (before the job is freed). */
void lifecycle_cancel_kill(struct engine *eng, struct ejob *job);
/* A worker's status file appeared (or was found at start-up). */
void lifecycle_worker_ended(struct engine *eng, struct ejob *job, struct eworker *w, int exit_code);
/*
 * Marks node unschedulable for job (a fault rule's mark_node_unschedulable,
 * by == NULL, or a person's :markNode, by == the user) and records the
 * event; the next placement avoids it, live workers stay. Returns false when
 * it was marked already. The caller saves the job.
 */
bool lifecycle_mark_node(struct engine *eng, struct ejob *job, const char *node, const char *by);
/* After a restart of trainjobd: collect ends that arrived meanwhile, re-adopt the rest. */
void lifecycle_adopt(struct engine *eng, struct ejob *job);
/* The status file path of a worker's current attempt. */
char *lifecycle_status_path(struct engine *eng, const struct ejob *job, const struct eworker *w);
char *lifecycle_log_path(struct engine *eng, const struct ejob *job, const char *worker);
bool job_state_terminal(enum job_state s);
/* Does the job hold capacity (some worker may still run)? */
bool job_has_live_workers(const struct ejob *job);
void ejob_free(struct ejob *job);

#endif
