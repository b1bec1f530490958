/*
 * engine: trainjobd's core — every job's life from create to delete.
 *
 * It owns the configuration (engine/config), the durable store
 * (engine/store), the jobs in memory, and the loop's watchers for worker
 * ends and log growth. Requests (from engine/routes) call the engine_*
 * functions below, which validate with the client's own rules, write
 * through to the store before answering, and ask for a scheduling pass;
 * a pass (engine/sched) places waiting jobs, preempts idle ones and starts
 * workers (engine/runner). When a worker ends, the fault policy
 * (api/fault) decides, and every decision becomes an event. Watch
 * streams hear every change.
 *
 * Every handler returns an HTTP status; on success *reply holds the JSON
 * body (a new reference), on failure err says what and where.
 */
#ifndef ENGINE_ENGINE_H
#define ENGINE_ENGINE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "engine/elog.h" /* engine_log, for every user of the engine */

struct api_error;
struct cgroups;
struct loop;
struct stream;
struct strbuf;

struct engine_options {
    const char *config_path; /* engine.yaml; written with defaults when missing */
    const char *state_dir;   /* engine.db, logs, status files, volumes */
    const char *shim_path;   /* the trainjob-shim binary */
    bool demo;               /* add simulated GPU nodes to a new config */
    int grace_ms;            /* SIGTERM to SIGKILL when stopping workers */
    size_t log_cap;          /* bytes per worker log before it rotates */
    struct cgroups *cgroups; /* per-worker limits (engine/cgroup), probed by the caller; or NULL */
    int start_timeout_ms;    /* a shim's report of a start (0: RUNNER_REPORT_TIMEOUT_MS) */
    const char *runtime_dir; /* where worker status files go if a tmpfs (NULL: rundir_bases) */
};

struct engine;

int engine_open(const struct engine_options *opt, struct loop *lp, struct engine **out,
                struct strbuf *err);
/* Stops watching; workers keep running under their shims. */
void engine_close(struct engine *eng);

/* What the engine says about itself in `trainjobd` logs and the catalog. */
const char *engine_subscription(const struct engine *eng);
const char *engine_resource_group(const struct engine *eng);
const char *engine_zone(const struct engine *eng);
/* The user an AK/SK access key belongs to (NULL if unknown), and its secret. */
const char *engine_key_user(const struct engine *eng, const char *access_key, const char **secret);


/* GET /trainjob/v1/engine: who runs this engine, its pid and state directory. */
int engine_about(struct engine *eng, json_t **reply, struct api_error *err);
/*
 * POST /trainjob/v1/engine:stop: the engine's own user (no one else) stops
 * it, as SIGTERM would, once the reply is on its way; engine_stopped_by says
 * who asked.
 */
int engine_stop_request(struct engine *eng, const char *user, json_t **reply,
                        struct api_error *err);
const char *engine_stopped_by(const struct engine *eng);
int engine_catalog(struct engine *eng, const char *user, json_t **reply, struct api_error *err);
int engine_create_workspace(struct engine *eng, const char *user, const json_t *body,
                            json_t **reply, struct api_error *err);

int engine_job_create(struct engine *eng, const char *user, const char *ws, const char *name,
                      const char *body, size_t body_len, json_t **reply, struct api_error *err);
int engine_job_get(struct engine *eng, const char *user, const char *ws, const char *name,
                   json_t **reply, struct api_error *err);

/* How much of a job a list or a watch sends (?view=BASIC|FULL, after AIP-157). */
enum job_view {
    JOB_VIEW_FULL,  /* the whole job (and a watch: its workers) */
    JOB_VIEW_BASIC, /* jobspec_summary_to_json: what a list row shows */
};
/* The view a ?view= value names; -1 for a value that names none. */
int engine_job_view(const char *value);

struct job_query {
    int page_size; /* 1..500; 0 = default 10 */
    /* NULL or "": the first page; a next_page_token; or a decimal page number (ACP) */
    const char *page_token;
    const char *filter; /* name='…' AND state='…' AND display_name='…' AND user_name='…' */
    const char *name;   /* name prefix */
    enum job_view view;
};
int engine_job_list(struct engine *eng, const char *user, const char *ws, const struct job_query *q,
                    json_t **reply, struct api_error *err);
/* The same reply as JSON text appended to out (what the route sends: no tree built). */
int engine_job_list_text(struct engine *eng, const char *user, const char *ws,
                         const struct job_query *q, struct strbuf *out, struct api_error *err);
int engine_job_update(struct engine *eng, const char *user, const char *ws, const char *name,
                      const char *update_mask, const char *body, size_t body_len, json_t **reply,
                      struct api_error *err);
int engine_jobs_stop(struct engine *eng, const char *user, const char *ws, const char *body,
                     size_t body_len, json_t **reply, struct api_error *err);
int engine_jobs_delete(struct engine *eng, const char *user, const char *ws, const char *body,
                       size_t body_len, json_t **reply, struct api_error *err);
int engine_job_start(struct engine *eng, const char *user, const char *ws, const char *name,
                     json_t **reply, struct api_error *err);
/*
 * :markNode {"node": N}: keeps the job off node N from its next placement on
 * (a restart, a RESTART_POD that must move, a start after a stop), as a fault
 * rule's mark_node_unschedulable would; workers running there now stay.
 */
int engine_job_mark_node(struct engine *eng, const char *user, const char *ws, const char *name,
                         const char *body, size_t body_len, json_t **reply, struct api_error *err);
/*
 * :unmarkNode {"node": N}: lifts a mark a person or a fault rule put on node N
 * for the job, so its next placement may use N again; a 400 when N is not
 * marked for it.
 */
int engine_job_unmark_node(struct engine *eng, const char *user, const char *ws, const char *name,
                           const char *body, size_t body_len, json_t **reply, struct api_error *err);
int engine_job_workers(struct engine *eng, const char *user, const char *ws, const char *name,
                       json_t **reply, struct api_error *err);
int engine_job_events(struct engine *eng, const char *user, const char *ws, const char *name,
                      json_t **reply, struct api_error *err);
/*
 * The last `tail` lines of a worker's log (all when tail < 0) into out; with
 * follow, *follow_stream then carries what the worker writes next.
 */
/* GET …/workers/{worker}/logs: its query (see engine/logfollow.h for framed and from). */
struct worker_log_query {
    const char *worker;
    long tail;        /* the last lines (< 0: all) */
    bool follow;      /* then what is written next, until the worker ends */
    bool framed;      /* follow: P/D/S/E frames, so a client can resume */
    const char *from; /* framed: "<inode>:<offset>" to resume at, or NULL */
    bool times;       /* framed: T and C frames too (see engine/logfollow.h) */
};
int engine_worker_log(struct engine *eng, const char *user, const char *ws, const char *name,
                      const struct worker_log_query *lq, struct strbuf *out,
                      struct stream **follow_stream, struct api_error *err);
/* A stream of one JSON event per line for every change in ws (all jobs first). */
int engine_watch(struct engine *eng, const char *user, const char *ws, struct stream **out,
                 struct api_error *err);
/* engine_watch with its JOB messages in view (BASIC: summaries, without workers). */
int engine_watch_view(struct engine *eng, const char *user, const char *ws, enum job_view view,
                      struct stream **out, struct api_error *err);
/*
 * Drops the watch streams whose client went away (the HTTP layer calls it as
 * each streamed response ends) and logs "watch: N watchers" when any went.
 */
void engine_prune_watchers(struct engine *eng);

#endif
