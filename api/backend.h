/*
 * backend: the one interface the CLI and the TUI use to reach jobs,
 * whichever system runs them.
 *
 * A driver is a const table of functions (struct backend_ops) plus its own
 * state; struct backend adds where jobs live (subscription, resource group,
 * zone, workspace). Everything speaks the api types: struct jobspec, the
 * catalog, workers and events (api/jobstatus.h), and struct api_error for
 * every failure, so a server's rejection reaches the field it names.
 *
 * Call through the backend_* wrappers, not the table: they turn a missing
 * operation into "not supported by this backend", and when the server
 * cannot be reached and a revive hook is set (the local engine, started on
 * demand), they run the hook once and try again.
 */
#ifndef API_BACKEND_H
#define API_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/apierror.h"
#include "api/catalog.h"
#include "api/jobspec.h"
#include "api/jobstatus.h"
#include "api/scalarpage.h"

struct exec_request;
struct resolved_context;
struct strbuf;

/* How a call ended; on anything but BACKEND_OK the api_error says what. */
enum backend_status {
    BACKEND_OK = 0,
    BACKEND_REJECTED,    /* the server answered no (err->status is its HTTP status) */
    BACKEND_UNREACHABLE, /* nothing answers at the endpoint (err->status 0) */
    BACKEND_TRANSPORT,   /* timed out, cut short, TLS… (err->status 0) */
};

#define BACKEND_MAX_PAGE_SIZE 500
#define BACKEND_MAX_BATCH 200 /* names per batchStop / batchDelete call */

/* Where jobs live: the four names in every ACP path. */
struct backend_target {
    char *subscription;
    char *resource_group;
    char *zone;
    char *workspace;
};

/* A list query; NULL / 0 members are left out. */
struct list_query {
    int page_size;          /* 1..500; 0: the server's default */
    const char *page_token; /* from the previous page's next_page_token */
    const char *filter;     /* "state='RUNNING' AND name='x'" */
    const char *name;       /* name prefix */
    bool basic; /* rows only: trainjobd's summaries (view=BASIC); ACP sends whole jobs */
};

struct job_list {
    struct jobspec *jobs;
    size_t count;
    char *next_page_token; /* NULL on the last page */
    long total_size;
};

void job_list_free(struct job_list *l);

/* update: only what is set changes (ACP's update_mask). */
struct job_update {
    const char *display_name; /* NULL: unchanged */
    enum priority priority;   /* PRIORITY_UNSPECIFIED: unchanged */
};

/* What a batch stop or delete did to one name. */
enum batch_outcome {
    BATCH_DONE,    /* stopping / deleting */
    BATCH_SKIPPED, /* nothing to do: the job is not running */
    BATCH_NOT_FOUND,
    BATCH_UNKNOWN, /* the server did not say (ACP answers no per-name result) */
};

struct batch_item {
    char *name;
    enum batch_outcome outcome;
    char *result; /* the server's word: STOPPING, SKIPPED, NOT_FOUND, DELETING, … */
};

struct batch_result {
    struct batch_item *items;
    size_t count;
};

void batch_result_free(struct batch_result *r);

/* One message of a watch stream. */
enum watch_kind {
    WATCH_JOB,     /* a job as it is now, with its workers */
    WATCH_EVENT,   /* something happened to a job */
    WATCH_DELETED, /* a job is gone */
    WATCH_SYNCED,  /* every job has been sent once; changes follow */
};

struct watch_message {
    enum watch_kind kind;
    struct jobspec job;         /* WATCH_JOB; WATCH_DELETED: name and uid only */
    struct worker_list workers; /* WATCH_JOB */
    bool has_workers;           /* WATCH_JOB: workers came with it (not with a summary) */
    struct job_event event;     /* WATCH_EVENT */
};

/* Called per watch message (valid during the call); non-zero ends the watch. */
typedef int (*backend_watch_fn)(void *ctx, const struct watch_message *m);
/* Called with each piece of a log as it arrives; non-zero ends the stream. */
typedef int (*backend_data_fn)(void *ctx, const char *data, size_t len);

struct backend;
struct backend_call;
struct http_multi;

/* ---- calls that do not block (the TUI's loop; api/http_multi.h) --------- */

enum backend_op {
    BACKEND_OP_GET,
    BACKEND_OP_LIST,
    BACKEND_OP_UPDATE,
    BACKEND_OP_WORKERS, /* one page (up to 500 workers); next_page_token for more */
    BACKEND_OP_EVENTS,
    BACKEND_OP_STOP,
    BACKEND_OP_START,
    BACKEND_OP_DELETE,
    BACKEND_OP_MARK_NODE, /* a node unschedulable for one job (trainjobd) */
    BACKEND_OP_CATALOG,   /* what the caller may choose (trainjobd) */
    BACKEND_OP_CREATE,    /* job: the reply is the job as created */
    BACKEND_OP_WATCH,     /* a stream: on_message per message */
    BACKEND_OP_LOGS,      /* a stream: on_data per piece */
    BACKEND_OP_SCALARS,   /* a page of a job's TensorBoard scalars (trainjobd); with follow,
                             a stream: on_data per piece of NDJSON (api/scalarpage.h) */
    /* a workspace named request.name, the caller its owner (trainjobd) */
    BACKEND_OP_CREATE_WORKSPACE,
    BACKEND_OP_UNMARK_NODE, /* lifts MARK_NODE's mark (trainjobd) */
};

/* What to ask; the members an op does not use are ignored. Strings are copied. */
struct backend_request {
    enum backend_op op;
    const char *name;         /* GET UPDATE WORKERS EVENTS START LOGS [UN]MARK_NODE */
    const char *const *names; /* STOP DELETE: at most BACKEND_MAX_BATCH */
    size_t count;
    struct list_query query;   /* LIST; WORKERS: page_token; WATCH: basic */
    struct job_update update;  /* UPDATE */
    const char *worker;        /* LOGS */
    const char *node;          /* MARK_NODE UNMARK_NODE */
    const struct jobspec *job; /* CREATE (backend_send keeps it as JSON) */
    char *job_json;            /* backend_send's copy of job: leave NULL */
    long tail;                 /* LOGS: the last lines (< 0: all) */
    bool follow;               /* LOGS; SCALARS: the push stream */
    bool framed;               /* LOGS with follow: P/D/S/E frames (engine/logfollow.h) */
    const char *from;          /* LOGS framed: "<inode>:<offset>" to resume at */
    bool times;                /* LOGS framed: T and C frames too (the time of each piece) */
    const char *since;         /* SCALARS: the previous page's cursor; NULL: from the start */
    size_t limit;              /* SCALARS: bytes of event files per page (0: the server's) */
    unsigned chart; /* SCALARS: only the points a chart of so many buckets per series keeps (0: all) */
};

/* How a call ended and what it brought; the callee of backend_reply_fn may take members. */
struct backend_reply {
    enum backend_op op;
    enum backend_status status;
    struct api_error err;         /* status != BACKEND_OK */
    struct jobspec job;           /* GET UPDATE START [UN]MARK_NODE CREATE */
    struct job_list list;         /* LIST */
    struct worker_list workers;   /* WORKERS */
    char *next_page_token;        /* WORKERS: NULL on the last page */
    struct job_event_list events; /* EVENTS */
    struct batch_result batch;    /* STOP DELETE */
    struct catalog catalog;       /* CATALOG */
    struct scalar_page scalars;   /* SCALARS */
    char *warning;                /* LIST: something to say once (a token file others can read) */
};

void backend_reply_init(struct backend_reply *r, enum backend_op op);
void backend_reply_free(struct backend_reply *r);

/* Called once when a call ends (for streams: when the stream ends); r is freed after. */
typedef void (*backend_reply_fn)(void *ctx, struct backend_reply *r);

struct backend_ops {
    const char *name; /* "acp", "slurm" */
    enum backend_status (*catalog)(struct backend *b, struct catalog *out, struct api_error *err);
    enum backend_status (*create)(struct backend *b, const struct jobspec *job, struct jobspec *out,
                                  struct api_error *err);
    enum backend_status (*get)(struct backend *b, const char *name, struct jobspec *out,
                               struct api_error *err);
    enum backend_status (*list)(struct backend *b, const struct list_query *q, struct job_list *out,
                                struct api_error *err);
    enum backend_status (*update)(struct backend *b, const char *name, const struct job_update *u,
                                  struct jobspec *out, struct api_error *err);
    enum backend_status (*workers)(struct backend *b, const char *name, struct worker_list *out,
                                   struct api_error *err);
    enum backend_status (*events)(struct backend *b, const char *name, struct job_event_list *out,
                                  struct api_error *err);
    /* The last tail lines (all when tail < 0); with follow, then what is written next. */
    enum backend_status (*logs)(struct backend *b, const char *name, const char *worker, long tail,
                                bool follow, backend_data_fn fn, void *ctx, struct api_error *err);
    /*
     * Follows a log in frames (trainjobd: engine/logfollow.h), from the last
     * tail lines, or resuming at from ("<inode>:<offset>"); NULL when the
     * server cannot.
     */
    enum backend_status (*logs_framed)(struct backend *b, const char *name, const char *worker,
                                       long tail, const char *from, backend_data_fn fn, void *ctx,
                                       struct api_error *err);
    enum backend_status (*stop)(struct backend *b, const char *const *names, size_t n,
                                struct batch_result *out, struct api_error *err);
    enum backend_status (*start)(struct backend *b, const char *name, struct jobspec *out,
                                 struct api_error *err);
    enum backend_status (*remove)(struct backend *b, const char *const *names, size_t n,
                                  struct batch_result *out, struct api_error *err);
    /*
     * Marks node unschedulable for job name (its next placement avoids it),
     * or with unmark lifts that mark; out is the job as it is now. NULL: the
     * backend has no such mark.
     */
    enum backend_status (*mark_node)(struct backend *b, const char *name, const char *node,
                                     bool unmark, struct jobspec *out, struct api_error *err);
    /*
     * The server itself (trainjobd): verb NULL asks who runs it and where
     * ({"user", "pid", "state_dir"}), "stop" asks it to stop, as its owner.
     * *out is the reply (the caller's). NULL: the backend is no such server.
     */
    enum backend_status (*engine)(struct backend *b, const char *verb, json_t **out,
                                  struct api_error *err);
    enum backend_status (*watch)(struct backend *b, backend_watch_fn fn, void *ctx,
                                 struct api_error *err);
    /*
     * A page of the scalars job name wrote to its tensorboard.log_path, after
     * since (a cursor from an earlier page; NULL: from the start), reading at
     * most limit bytes of event files (0: the server's default). NULL (and
     * the acp driver on ACP): the backend cannot read them; use --logdir.
     */
    enum backend_status (*scalars)(struct backend *b, const char *name, const char *since,
                                   size_t limit, struct scalar_page *out, struct api_error *err);
    /*
     * Follows the scalars of job name (trainjobd: GET …/scalars?follow=true,
     * from since): the NDJSON stream's bytes to fn as they arrive (decode
     * with api/scalarpage's scalar_stream), until the engine ends it. NULL
     * (and the acp driver on ACP): the backend cannot; poll with scalars.
     */
    enum backend_status (*scalars_follow)(struct backend *b, const char *name, const char *since,
                                          backend_data_fn fn, void *ctx, struct api_error *err);
    /*
     * Starts call->rq on m without blocking; when it ends the driver fills
     * call->reply and calls backend_call_done, and on the way hands stream
     * data to backend_call_message / backend_call_data. A request it
     * cannot make ends the same way (from the loop, never inside send).
     */
    void (*send)(struct backend *b, struct http_multi *m, struct backend_call *call);
    /*
     * Runs rq's command inside a running worker of job name (rq->worker,
     * else the first running one: api/exec.h exec_choose_worker), with our
     * terminal or standard descriptors, and waits: BACKEND_OK with its
     * status in *exit_code. Blocks: the TUI calls it with curses suspended.
     * A backend that has no exec says why in its own (ACP).
     */
    enum backend_status (*exec)(struct backend *b, const char *name,
                                const struct exec_request *rq, int *exit_code,
                                struct api_error *err);
    void (*free)(struct backend *b);
};

struct backend {
    const struct backend_ops *ops;
    void *driver; /* the driver's state */
    struct backend_target target;
    char *endpoint;      /* for messages */
    char *engine_socket; /* the local engine's socket, when it is started on demand */
    /* Run once when the server is unreachable (the local engine: start it); 0 = done. */
    int (*revive)(void *ctx, struct strbuf *err);
    void *revive_ctx;
    bool revived;
    char *revive_error; /* why reviving failed, for the next unreachable error */
};

/* A backend with ops and driver state, aimed at target (copied). */
struct backend *backend_new(const struct backend_ops *ops, void *driver,
                            const struct backend_target *target, const char *endpoint);
void backend_free(struct backend *b);
/* Points later calls at another workspace. */
void backend_set_workspace(struct backend *b, const char *workspace);

/*
 * The workspace a job goes to is the one the caller chose (context or
 * --workspace, in b's target), as kubectl's namespace: a job naming none
 * gets it; a job naming another is refused (-1, why in err), never a switch.
 */
int backend_job_workspace(const struct backend *b, struct jobspec *job, struct strbuf *err);

/* Opens the driver the context names (api/drivers.c, the driver table). NULL with why in err. */
struct backend *backend_open(const struct resolved_context *rc, struct strbuf *err);

enum backend_status backend_catalog(struct backend *b, struct catalog *out, struct api_error *err);
enum backend_status backend_create(struct backend *b, const struct jobspec *job,
                                   struct jobspec *out, struct api_error *err);
enum backend_status backend_get(struct backend *b, const char *name, struct jobspec *out,
                                struct api_error *err);
enum backend_status backend_list(struct backend *b, const struct list_query *q,
                                 struct job_list *out, struct api_error *err);
/*
 * Every page of a query (page_size 500), jobs seen twice kept once (by uid,
 * through a hash index: O(N) in all). basic: the summaries a row needs,
 * where the server has them (list_query.basic).
 */
enum backend_status backend_list_all(struct backend *b, const char *filter, bool basic,
                                     struct job_list *out, struct api_error *err);
/* A job of backend_list_each: the callee's to take (leaving it jobspec_init'd) or to leave. */
typedef int (*backend_job_fn)(void *ctx, struct jobspec *job);
/*
 * backend_list_all one job at a time: fn gets each job once (non-zero stops),
 * a page is freed once handed on; *total (may be NULL) is the server's total_size.
 */
enum backend_status backend_list_each(struct backend *b, const char *filter, bool basic,
                                      backend_job_fn fn, void *ctx, long *total,
                                      struct api_error *err);
enum backend_status backend_update(struct backend *b, const char *name, const struct job_update *u,
                                   struct jobspec *out, struct api_error *err);
enum backend_status backend_workers(struct backend *b, const char *name, struct worker_list *out,
                                    struct api_error *err);
enum backend_status backend_events(struct backend *b, const char *name, struct job_event_list *out,
                                   struct api_error *err);
enum backend_status backend_logs(struct backend *b, const char *name, const char *worker, long tail,
                                 bool follow, backend_data_fn fn, void *ctx, struct api_error *err);
/* Follows a log in frames (see backend_ops.logs_framed); BACKEND_REJECTED when unsupported. */
enum backend_status backend_logs_framed(struct backend *b, const char *name, const char *worker,
                                        long tail, const char *from, backend_data_fn fn, void *ctx,
                                        struct api_error *err);
/* Stops or deletes any number of jobs, BACKEND_MAX_BATCH names per call. */
enum backend_status backend_stop(struct backend *b, const char *const *names, size_t n,
                                 struct batch_result *out, struct api_error *err);
enum backend_status backend_start(struct backend *b, const char *name, struct jobspec *out,
                                  struct api_error *err);
enum backend_status backend_delete(struct backend *b, const char *const *names, size_t n,
                                   struct batch_result *out, struct api_error *err);
/*
 * Asks the local engine about itself or to stop (see backend_ops.engine).
 * Never starts an engine that is not running: BACKEND_UNREACHABLE says so.
 */
enum backend_status backend_engine(struct backend *b, const char *verb, json_t **out,
                                   struct api_error *err);
/* Marks node unschedulable for job name, or lifts the mark (see backend_ops.mark_node). */
enum backend_status backend_mark_node(struct backend *b, const char *name, const char *node,
                                      bool unmark, struct jobspec *out, struct api_error *err);
enum backend_status backend_watch(struct backend *b, backend_watch_fn fn, void *ctx,
                                  struct api_error *err);
/*
 * A page of a job's TensorBoard scalars (see backend_ops.scalars; out is
 * scalar_page_init'd here). A backend that cannot read them says so, and
 * that `trainjob metrics --logdir DIR` can.
 */
enum backend_status backend_scalars(struct backend *b, const char *name, const char *since,
                                    size_t limit, struct scalar_page *out, struct api_error *err);
/*
 * Follows a job's scalars as the engine pushes them (see
 * backend_ops.scalars_follow); BACKEND_REJECTED (501) when the backend
 * cannot, and the caller polls backend_scalars instead.
 */
enum backend_status backend_scalars_follow(struct backend *b, const char *name, const char *since,
                                           backend_data_fn fn, void *ctx, struct api_error *err);
/*
 * `trainjob exec` and `s` on the workers pane: rq's command in a worker of
 * job name — rq->worker, else the first running one (a finished one is
 * refused saying its phase) — with the command's exit status in
 * *exit_code when it ran (BACKEND_OK).
 */
enum backend_status backend_exec(struct backend *b, const char *name,
                                 const struct exec_request *rq, int *exit_code,
                                 struct api_error *err);
/* The error of a backend that does not serve scalars (status 501, reason Unsupported). */
enum backend_status backend_no_scalars(const struct backend *b, struct api_error *err);

/*
 * Starts rq without blocking; fn gets the reply from m's loop, never from
 * inside this call. For BACKEND_OP_WATCH on_message gets each message and
 * for BACKEND_OP_LOGS on_data each piece, until the stream ends (fn) or the
 * call is cancelled. A call that finds the local engine gone revives it
 * once, as the blocking calls do. The call belongs to the backend until fn
 * returns or backend_call_cancel; it must end before the backend is freed.
 */
struct backend_call *backend_send(struct backend *b, struct http_multi *m,
                                  const struct backend_request *rq, backend_reply_fn fn,
                                  backend_watch_fn on_message, backend_data_fn on_data, void *ctx);
/* Ends a call; fn is not called. Safe from inside the call's own callbacks. */
void backend_call_cancel(struct backend_call *c);

/* ---- for drivers ---- */

struct backend_call {
    struct backend *b;
    struct http_multi *m;
    struct backend_request rq; /* the caller's, with its strings copied */
    struct backend_reply reply;
    backend_reply_fn fn;
    backend_watch_fn on_message;
    backend_data_fn on_data;
    void *ctx;
    struct http_request *http; /* the transfer in flight, cancelled with the call */
    void *driver_data;         /* the driver's per-call state (a stream's partial line) */
    void (*driver_free)(void *driver_data);
    bool in_callback, cancelled, revived;
    uint64_t timer; /* a call ended without a transfer */
};

/* The driver's end of a call: reply filled (status, err, data); frees the call. */
void backend_call_done(struct backend_call *c);
/* Hands a stream's message / data to the caller; non-zero: stop the stream. */
int backend_call_message(struct backend_call *c, const struct watch_message *m);
int backend_call_data(struct backend_call *c, const char *data, size_t len);

/* Fills err for an operation the driver does not have (status 501, reason Unsupported). */
enum backend_status backend_unsupported(const struct backend *b, const char *what,
                                        struct api_error *err);
/* The server word of a batch result to an outcome ("NOT_FOUND" → BATCH_NOT_FOUND). */
enum batch_outcome batch_outcome_from(const char *result);

#endif
