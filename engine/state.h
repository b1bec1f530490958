/*
 * state: trainjobd's in-memory state — struct engine, and each job with its
 * workers as the engine tracks them. Shared by engine.c (opening, the job
 * table), record.c (persistence, events), watch.c (watch streams),
 * requests.c and queries.c (the requests), lifecycle.c (starting and
 * stopping workers), schedpass.c (scheduling passes), worker_ends.c (worker
 * ends and fault decisions), shimwatch.c, ejobspec.c and scalarjobs.c. Nothing
 * outside engine/ sees these structs.
 *
 * Those files are one module, the engine core: engine.h is its interface
 * (each of them opens with it) and this header its private half. They call
 * each other freely; the modules they use (jobfiles, scalars, scalarfollow,
 * stream, store, runner, elog, …) never call back into them, which
 * scripts/check-cycles.sh -m checks.
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
#include "util/bump.h"
#include "util/hmap.h"

struct shown;
struct launch_req;
struct launcher;
struct loop;
struct store;
struct stream;
struct strbuf;

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
    int attempt;   /* numbers status files, so an old attempt's end is not taken for the new one */
    bool stopped;  /* its last end was one trainjobd asked for (a stop, a delete, a restart or
                      preemption of the job): shown as Stopped, not as a failure */
    bool live;     /* a process exists (or may): holds capacity, must be stopped */
    bool starting; /* this attempt's start is on disk; its shim has not reported yet */
    struct shimwatch *watch; /* the loop's watchers on its shim (not stored) */
    struct runner_proc proc;
    char *create_time;
    char *start_time;
    char *finish_time;
    struct worker_last_state last_state; /* its last end of its own, and the fault decision */
};

struct kill_ctx;
struct shimwatch;

/* An event of a job whose save failed: recorded and sent once the job is saved. */
struct held_event {
    int64_t time_ms;
    char *json;
};

/*
 * An event written inside a batch, kept until the batch commits (record.c).
 * Its texts are in engine.batch_event_text (one buffer for the batch: tens
 * of thousands of small copies freed at the commit would leave the heap
 * full of holes).
 */
struct batch_event {
    size_t uid, json; /* offsets of NUL-terminated texts in batch_event_text */
    int64_t time_ms;
};

/* A watch line held back until the store has what it tells. */
struct batch_line {
    char *ws;
    char *line; /* with its newline */
    int view;   /* the watchers' view it is for (enum job_view), < 0: all */
};

/*
 * The three texts a job shows (struct ejob's shown_*), packed (engine/shown).
 * A snapshot saved inside a batch lives in the batch's bump (in_batch_bump:
 * freed with it, never alone).
 */
struct snapshot {
    struct shown *job, *workers, *summary;
    bool in_batch_bump;
};

struct ejob {
    /*
     * The whole job (as submitted plus its output fields) only while it is
     * needed: never read it here but through ejob_spec(), which decodes it
     * from the job as last saved when it was dropped. It is dropped once the
     * job is saved and nothing runs (engine_drop_specs), so a job that waits
     * or has ended costs its compact record below and its saved texts
     * (issue 14: the whole spec was ~1.6 KB of a job's ~2.2 KB).
     */
    struct jobspec *full_;
    /*
     * What lookups, lists, filters and scheduling passes read, always here.
     * state, state_message, priority and display_name are the truth: ejob_spec()
     * copies them into the whole spec; the rest never change after creation.
     */
    char *uid, *name;
    const char *ws;            /* interned (engine_intern) */
    const char *pool;          /* resource_pool.name, interned; NULL: none */
    const char *creator;       /* ownership.user_name, interned; NULL: none */
    char *display_name;        /* NULL: none, or the same as name (display_is_name) */
    const char *state_message; /* shared (ejob_share_text): most waiting jobs say the same */
    uint64_t seq;
    enum job_state state;
    enum priority priority;
    enum scoring_strategy scoring;
    int replicas;       /* how many workers it runs (replicas_of) */
    uint32_t loaded_at; /* 1 + its place in eng->spec_loaded (whole spec decoded); 0: none */
    /* resolved from the catalogue at create time */
    int gpus, cpus;
    int64_t memory_mib;
    int restarts; /* restarts used */
    /* crash-loop back-off (saved): consecutive quick failures, when the restart is due */
    int crash_loops;
    int64_t backoff_until_ms;
    char *backoff_worker;  /* a RESTART_POD waiting for its back-off; NULL: the whole job */
    char *backoff_reason;  /* "back-off 40s restarting failed worker-0 (restart 5)" */
    int64_t events_folded; /* the oldest events dropped to keep the last N (saved) */
    /* Its events in the store at most, as far as this engine knows; -1: not known (loaded). */
    int events_stored;
    char **excluded; /* nodes marked unschedulable for this job */
    size_t excluded_count;
    struct eworker *workers;
    size_t worker_count;
    enum after_stop after_stop;
    char *after_stop_reason;   /* e.g. "preempted by standard job x" */
    char *preempted_by;        /* set while a preempted job waits: part of its reason */
    uint64_t kill_timer;       /* SIGKILL after the grace period of a stop */
    struct kill_ctx *kill_ctx; /* the timer's context, freed when it is cancelled */
    /*
     * Persistence: shown_job and shown_workers are the job and its workers
     * as last saved, what GET, lists and watchers see — kept as compact JSON
     * text, deflated (engine/shown: ~1.4 KB a job as text, jansson trees ten
     * times that);
     * unsaved says memory is ahead of the store (a save failed and is
     * retried); remove_pending, that the store refused a delete.
     */
    struct shown *shown_job; /* engine/shown: deflated, tens of bytes a job */
    struct shown *shown_workers;
    struct shown *shown_summary; /* its summary (view=BASIC) as last saved */
    /*
     * Saved inside an open store batch: the texts it will show once the batch
     * commits (its whole spec may go meanwhile: decoded from these); kept
     * when the batch fails, as what memory holds until a retry saves it.
     */
    struct snapshot *pending;
    struct held_event *held_events; /* events told once the job's state is saved */
    size_t held_event_count;
    bool unsaved : 1;
    bool term_held : 1; /* a stop decided here waits for its intent to reach the disk */
    bool in_batch : 1;
    bool remove_pending : 1;
    bool idle : 1;            /* jobspec_is_idle */
    bool preemptible : 1;     /* unless it said preemptible: false */
    bool display_is_name : 1; /* display_name is the same as name */
};

struct runas;

struct engine {
    struct engine_options opt;
    char *config_path;
    char *state_dir;
    char *status_dir;
    char *log_dir;
    char *shim_path;
    struct engine_config cfg;
    struct runas *runas; /* who jobs run as (engine/runas) */
    struct store *store;
    struct loop *loop;
    char *stopped_by;   /* who asked it to stop (engine:stop), once asked: "NAME (uid N)" */
    struct ejob **jobs; /* in seq order */
    size_t job_count, job_cap;
    struct hmap by_name, by_uid; /* the jobs by (workspace, name) and by uid */
    uint64_t next_seq;
    struct stream **watchers; /* tagged with their workspace */
    size_t watcher_count;
    struct stream **followers; /* tagged with their log file */
    size_t follower_count;
    struct stream **scalar_followers; /* engine/scalarfollow.h */
    size_t scalar_follower_count;
    int inotify_fd;
    int status_wd, log_wd;
    uint64_t sched_timer;
    uint64_t spawn_timer;        /* launches queued starts on the next loop turn */
    bool spawn_wanted;           /* a queued start may be launchable now */
    struct spawn_queue *spawn_q; /* starts recorded and not launched yet (lifecycle.c) */
    struct launcher *launcher;   /* launches shims off the loop's thread */
    int launching;               /* shims started whose report is awaited (at most MAX_LAUNCHING) */
    uint64_t trim_timer;         /* gives freed heap back after watchers leave */
    bool sandbox;
    uint64_t save_timer;    /* retries unsaved jobs */
    uint64_t backoff_timer; /* the earliest crash-loop back-off that ends */
    int batch_depth;        /* engine_batch_begin nesting */
    struct ejob **batch;    /* jobs saved inside the open batch: shown once it commits */
    size_t batch_count;
    struct bump batch_snaps;        /* their pending snapshots, off the heap (record.c) */
    struct batch_line *batch_lines; /* watch lines (events) sent once the batch commits */
    size_t batch_line_count;
    struct batch_event *batch_events; /* events written in the open batch: held if it fails */
    size_t batch_event_count, batch_event_cap;
    char *batch_event_text; /* their uids and texts, one after another */
    size_t batch_event_len, batch_event_text_cap;
    char **term_after_commit; /* uids of jobs stopped in the open batch: signalled after it */
    size_t term_after_commit_count;
    /*
     * Scheduling inputs' version: every save, removal or stop of a job bumps
     * it. A kept pass (schedpass.c) serves only while it has not moved.
     */
    uint64_t changes;
    bool sched_full;               /* the next pass looks at every job */
    struct sched_keep *sched_keep; /* what the last pass left for the next; or NULL */
    /* Jobs whose whole spec is decoded (ejob_spec): dropped again once saved (record.c). */
    struct ejob **spec_loaded;
    size_t spec_loaded_count, spec_loaded_cap;
    uint64_t drop_timer;  /* drops them after the loop turn that needed them */
    struct hmap interned; /* engine_intern's texts: workspaces, pools, creators */
};

/* engine.c: opening, closing and the job table */
struct ejob *engine_find(struct engine *eng, const char *ws, const char *name);
struct ejob *engine_find_uid(struct engine *eng, const char *uid);
/* Appends a job (its seq above every other's) and indexes it. */
void add_job(struct engine *eng, struct ejob *job);
/* The position of the first job with a seq above seq (eng->jobs is in seq order). */
size_t first_after(const struct engine *eng, uint64_t seq);
/* Takes job out of the table and its indexes (not freed). */
void drop_job(struct engine *eng, struct ejob *job);

/* requests.c: the requests that change state, and the checks every request makes */
/*
 * The job a request may read (every member of ws reads every job of it), or
 * 404/403 in err: the rule of GET, workers, events, logs and scalars.
 */
int engine_find_readable(struct engine *eng, const char *user, const char *ws, const char *name,
                         struct ejob **out, struct api_error *err);
/* 0 when ws exists and user is a member of it; else 404/403 in err. */
int member_check(struct engine *eng, const char *user, const char *ws, struct api_error *err);
/* engine_find_readable's lookup (0, or 404/403 in err). */
int find_job(struct engine *eng, const char *user, const char *ws, const char *name,
             struct ejob **out, struct api_error *err);

/* record.c: each job as one record in the store, events, state changes */
/*
 * Writes the job to the store; logs (and returns -1) when the disk refuses,
 * and keeps retrying: memory stays ahead of the disk meanwhile. For the
 * changes the engine makes itself (a worker ended, a pass placed a job).
 */
int engine_save(struct engine *eng, struct ejob *job);
/*
 * Writes the job's record as memory holds it now, and does nothing else:
 * no snapshot, no retry, nothing marked unsaved. 0, or -1 with the store's
 * message in err. A request writes the job as its change will leave it
 * (then puts memory back) before it acts, so that what it acknowledges is
 * on disk first and what the disk refuses is answered 503 with nothing
 * changed; inside a store_begin group, as every write of the store.
 */
int engine_write_record(struct engine *eng, struct ejob *job, struct strbuf *err);
/* Records an event (store + watchers); message is the sentence a person reads. */
void engine_event(struct engine *eng, struct ejob *job, struct job_event *ev);
/* Sets state (and message), stamps times, saves, publishes, records a STATE event. */
void engine_set_state(struct engine *eng, struct ejob *job, enum job_state state,
                      const char *message);
void engine_remove(struct engine *eng, struct ejob *job);
/*
 * Groups the saves of a scheduling pass into one store transaction; what
 * they change is shown (GET, watchers) only once it has committed.
 */
void engine_batch_begin(struct engine *eng);
void engine_batch_end(struct engine *eng);
/* Is everything the engine holds about job on disk (no save pending or failed)? */
bool engine_job_saved(const struct engine *eng, const struct ejob *job);
/*
 * The job's store record (JSON text), and back (NULL when it does not
 * decode; the job comes with its whole spec, the compact fields set by
 * ejob_set_hot).
 */
char *job_record(struct engine *eng, struct ejob *job);
struct ejob *job_from_record(struct engine *eng, const char *json);
/* The job's spec as compact JSON text: what its record holds as "job" and GET shows. */
char *job_spec_text(struct engine *eng, struct ejob *job);
/* job_record, with the spec's text made already (job_spec_text). */
char *job_record_with(struct ejob *job, const char *spec);
/* The output fields derived from the workers: ready workers, restarts used. */
void derive_outputs(struct engine *eng, struct ejob *job);
/* The job as it is now on disk becomes what clients see. */
void take_snapshot(struct engine *eng, struct ejob *job);
/* take_snapshot, with the spec's text made already (job_spec_text, as saved). */
void take_snapshot_with(struct engine *eng, struct ejob *job, const char *spec);
/* ejobspec.c: the whole spec on demand, shared texts */
/*
 * The whole job: the one way to read it. Decoded from the job as last saved
 * when it was dropped (the compact fields, which are the truth for state,
 * message, priority and display name, copied in). Valid until the loop turn
 * ends: a timer drops it then if the job is saved (engine_drop_specs).
 */
struct jobspec *ejob_spec(struct engine *eng, struct ejob *job);
/* Gives job its whole spec full (taken) and sets the compact fields from it. */
void ejob_set_hot(struct engine *eng, struct ejob *job, struct jobspec *full);
/* Drops the whole spec of every job saved since it was decoded (not while unsaved). */
void engine_drop_specs(struct engine *eng);
/*
 * The caller holds no pointer into job's whole spec any more: it goes now if
 * it may (a scheduling pass that re-saves thousands of waiting jobs in one
 * batch would otherwise decode all of them at once).
 */
void ejob_spec_done(struct engine *eng, struct ejob *job);
/* Takes job off the list of decoded specs (before it is freed). */
void ejob_unlist(struct engine *eng, struct ejob *job);
/* The engine's one copy of s (workspaces, pools, creators: few texts, many jobs); NULL for NULL. */
const char *engine_intern(struct engine *eng, const char *s);
/* Frees what engine_intern holds (engine_close, after the jobs). */
void engine_intern_free(struct engine *eng);
/*
 * A counted shared copy of s (NULL for NULL or ""), for texts many jobs hold
 * at once and that change (waiting reasons); each copy is released once with
 * ejob_unshare_text.
 */
const char *ejob_share_text(const char *s);
void ejob_unshare_text(const char *shared);
/* The workers as the API shows them. */
json_t *workers_json(const struct ejob *job);
/* j (taken) as compact JSON text. */
char *dump_json(json_t *j);
/* The job as last saved (GET, lists, replies): never a state the disk does not have. */
json_t *job_json(const struct ejob *job);
/* Its workers as last saved. */
json_t *saved_workers(const struct ejob *job);
/* Sets *field (freed) to the time now. */
void stamp(char **field);

/* watch.c: watch streams */
/* Tells every watcher of the job's workspace about its current state and workers. */
void engine_publish(struct engine *eng, struct ejob *job);
/* Sends line (len bytes, its '\n' included) to the watchers of ws that asked for view (< 0: all).
 */
void broadcast_line(struct engine *eng, const char *ws, int view, const char *line, size_t len);
/* Sends msg (taken) as one line to every watcher of ws (after the batch, inside one). */
void broadcast(struct engine *eng, const char *ws, json_t *msg);
/* Gives the heap's free pages back to the system on the next loop turn (after a peak). */
void engine_trim_soon(struct engine *eng);

/* lifecycle.c (starts, stops), schedpass.c (passes), worker_ends.c (ends, adoption) */
/*
 * Asks for a scheduling pass over every job on the next loop turn (passes
 * coalesce: one per turn, however many asked). Whatever changes what a pass
 * reads (a job's state, workers, priority, exclusions, a stop) asks for one.
 */
void lifecycle_schedule_soon(struct engine *eng);
/* The same after jobs were only added (created): the pass may decide them alone. */
void lifecycle_schedule_added(struct engine *eng);
/* Frees what the last pass kept and the spawn queue (engine_close). */
void lifecycle_sched_free(struct engine *eng);
/* Starts stopping every live worker of job; `then` happens once all have ended. */
void lifecycle_stop(struct engine *eng, struct ejob *job, enum after_stop then, const char *why);
/* Cancels a stop's pending SIGKILL (before the job is freed). */
void lifecycle_cancel_kill(struct engine *eng, struct ejob *job);
/* A worker's status file appeared (or was found at start-up). */
void lifecycle_worker_ended(struct engine *eng, struct ejob *job, struct eworker *w, int exit_code);
/*
 * Removes an ended attempt's status file and its .pid, .claim and .script,
 * once its end is saved: on engine/launcher's threads, not the loop's.
 */
void lifecycle_forget_end_files(struct engine *eng, const char *status);
/*
 * Marks node unschedulable for job (a fault rule's mark_node_unschedulable,
 * by == NULL, or a person's :markNode, by == the user) and records the
 * event; the next placement avoids it, live workers stay. Returns false when
 * it was marked already. The caller saves the job.
 */
bool lifecycle_mark_node(struct engine *eng, struct ejob *job, const char *node, const char *by);
/* Lifts node's mark for job (a person's :unmarkNode, by == the user) and records the event. */
void lifecycle_unmark_node(struct engine *eng, struct ejob *job, const char *node, const char *by);
/* Arms the back-off timer for the earliest job whose crash-loop back-off has not ended. */
void lifecycle_arm_backoff(struct engine *eng);
/*
 * Sends the SIGTERMs of the stops made inside the batch that has just ended
 * (engine_batch_end), once their intents were committed with it; a stop
 * whose intent the disk refused is held (lifecycle_stop_saved).
 */
void lifecycle_term_deferred(struct engine *eng);
/*
 * The job was saved: a stop held because its intent could not be saved
 * signals its workers now (and arms its SIGKILL). Called by engine_save.
 */
void lifecycle_stop_saved(struct engine *eng, struct ejob *job);
/*
 * After a restart of trainjobd: collect ends that arrived meanwhile, re-adopt
 * the rest. False when that finished a delete: the job is freed and gone.
 */
bool lifecycle_adopt(struct engine *eng, struct ejob *job);
/* Drops the loop's watchers on a job's shims, before the job is freed. */
void lifecycle_forget(struct engine *eng, struct ejob *job);
/* A worker's shim reported that it runs (or its pid file said so). */
void lifecycle_worker_started(struct engine *eng, struct ejob *job, struct eworker *w,
                              const struct runner_proc *proc);
/* A worker's start failed (why: the shim's words or the timeout); nothing of it runs. */
void lifecycle_start_failed(struct engine *eng, struct ejob *job, struct eworker *w,
                            const char *why);
/* A running worker's shim is gone: its status file, or the worker is lost (137). */
void lifecycle_shim_gone(struct engine *eng, struct ejob *job, struct eworker *w);
/* A launch ended: starts waiting for a free slot may go now. */
void lifecycle_spawn_more(struct engine *eng);

/*
 * lifecycle.c's helpers that its other halves call: schedpass.c (the
 * scheduling passes) and worker_ends.c (worker ends and fault decisions).
 */
/* A start recorded and not launched yet: its worker by job uid, index and attempt. */
struct spawn_entry {
    char *uid; /* owned by the entry */
    size_t index;
    int attempt;
};
/* The spawn queue (see lifecycle.c). */
struct spawn_queue {
    struct spawn_entry *v; /* a ring of cap entries: len of them from head */
    size_t head, len, cap;
};
/* Does the job wait for a place (queued or restarting, nothing live, no back-off running)? */
bool job_waiting(const struct ejob *job);
/* Sets *field (freed) to the time now. */
void set_time(char **field);
/* The index of node name in the configuration, -1 when it has none. */
int node_index(const struct engine *eng, const char *name);
/*
 * Gives worker w `count` free device indices on its node ("" for none).
 * placing: w's job when its workers are placed together (see devices_in_use).
 */
void assign_devices(struct engine *eng, const struct ejob *placing, struct eworker *w, int count);
/* The name of a worker attempt's cgroup under its job's: "<worker>-<attempt>". */
char *worker_cgroup_leaf(const struct eworker *w);
/*
 * Why a new worker of job may not have a cgroup (its member holds the most
 * limits.cgroups_per_member allows, counting live workers), or NULL. Owned.
 */
char *lifecycle_cgroup_refusal(struct engine *eng, const struct ejob *job);
/* Is leaf ("<worker>-<attempt>") of job uid a live worker's cgroup? (ctx: the engine) */
bool lifecycle_cgroup_live(void *ctx, const char *job_uid, const char *leaf);
/* How many workers the job runs. */
int replicas_of(const struct ejob *job);
/* Records the start of every worker of a placed job on the nodes the pass chose. */
void start_job(struct engine *eng, struct ejob *job, const int *placement);
/* Takes the oldest entry of the spawn queue; false when it is empty. */
bool spawnq_pop(struct engine *eng, struct spawn_entry *out);
/* Records the start of w's next attempt (saved by the caller) and queues its launch. */
void intend_start(struct engine *eng, struct ejob *job, struct eworker *w);
/* Every worker has stopped: does what the stop was for (job->after_stop). */
void finish_stop(struct engine *eng, struct ejob *job);
/* schedpass.c: does a waiting job show reason already (after "preempted by …; ")? */
bool shows(const struct ejob *job, const char *reason);
/* queries.c: tells the log followers of a job that will write no more. */
void engine_end_followers(struct engine *eng, struct ejob *job);
/* scalars.c: drops the scalar followers whose client left or whose stream ended. */
void engine_prune_scalar_followers(struct engine *eng);

/* shimwatch.c: the loop's watchers on each worker's shim (see shimwatch.c) */
/*
 * Hands w's start to engine/launcher (r: owned copies) and watches it: its
 * report, its deadline and its shim's end once the launch is back.
 */
void shimwatch_launch(struct engine *eng, struct ejob *job, struct eworker *w,
                      struct launch_req *r);
/* engine/launcher's done callback (ctx: the engine): a launch is back. */
void shimwatch_launched(void *ctx, struct launch_req *r);
/* After a restart: a shim (owner, 0 when unknown) holds w's claim; await its pid file. */
void shimwatch_await(struct engine *eng, struct ejob *job, struct eworker *w, pid_t owner);
/* The pid file of w's attempt appeared (inotify). */
void shimwatch_pidfile(struct engine *eng, struct ejob *job, struct eworker *w);
/* Watches the end of w's running shim (w->proc). */
void shimwatch_follow(struct engine *eng, struct ejob *job, struct eworker *w);
/* Stops watching w (SIGKILL to its shim first with kill_shim). */
void shimwatch_drop(struct engine *eng, struct eworker *w, bool kill_shim);
/* Is a start of w in flight (a report or a pid file awaited)? */
bool shimwatch_starting(const struct eworker *w);
/* The status file path of a worker's current attempt. */
char *lifecycle_status_path(struct engine *eng, const struct ejob *job, const struct eworker *w);
char *lifecycle_log_path(struct engine *eng, const struct ejob *job, const char *worker);
bool job_state_terminal(enum job_state s);
/* Does the job hold capacity (some worker may still run)? */
bool job_has_live_workers(const struct ejob *job);
void ejob_free(struct ejob *job);

#endif
