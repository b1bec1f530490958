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

#include "api/apierror.h"
#include "api/catalog.h"
#include "api/jobspec.h"
#include "api/jobstatus.h"

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
    struct job_event event;     /* WATCH_EVENT */
};

/* Called per watch message (valid during the call); non-zero ends the watch. */
typedef int (*backend_watch_fn)(void *ctx, const struct watch_message *m);
/* Called with each piece of a log as it arrives; non-zero ends the stream. */
typedef int (*backend_data_fn)(void *ctx, const char *data, size_t len);

struct backend;

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
    enum backend_status (*stop)(struct backend *b, const char *const *names, size_t n,
                                struct batch_result *out, struct api_error *err);
    enum backend_status (*start)(struct backend *b, const char *name, struct jobspec *out,
                                 struct api_error *err);
    enum backend_status (*remove)(struct backend *b, const char *const *names, size_t n,
                                  struct batch_result *out, struct api_error *err);
    enum backend_status (*watch)(struct backend *b, backend_watch_fn fn, void *ctx,
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

/* Opens the driver the context names. NULL with why in err. */
struct backend *backend_open(const struct resolved_context *rc, struct strbuf *err);

enum backend_status backend_catalog(struct backend *b, struct catalog *out, struct api_error *err);
enum backend_status backend_create(struct backend *b, const struct jobspec *job,
                                   struct jobspec *out, struct api_error *err);
enum backend_status backend_get(struct backend *b, const char *name, struct jobspec *out,
                                struct api_error *err);
enum backend_status backend_list(struct backend *b, const struct list_query *q,
                                 struct job_list *out, struct api_error *err);
/* Every page of a query (page_size 500), jobs seen twice kept once (by uid). */
enum backend_status backend_list_all(struct backend *b, const char *filter, struct job_list *out,
                                     struct api_error *err);
enum backend_status backend_update(struct backend *b, const char *name, const struct job_update *u,
                                   struct jobspec *out, struct api_error *err);
enum backend_status backend_workers(struct backend *b, const char *name, struct worker_list *out,
                                    struct api_error *err);
enum backend_status backend_events(struct backend *b, const char *name, struct job_event_list *out,
                                   struct api_error *err);
enum backend_status backend_logs(struct backend *b, const char *name, const char *worker, long tail,
                                 bool follow, backend_data_fn fn, void *ctx, struct api_error *err);
/* Stops or deletes any number of jobs, BACKEND_MAX_BATCH names per call. */
enum backend_status backend_stop(struct backend *b, const char *const *names, size_t n,
                                 struct batch_result *out, struct api_error *err);
enum backend_status backend_start(struct backend *b, const char *name, struct jobspec *out,
                                  struct api_error *err);
enum backend_status backend_delete(struct backend *b, const char *const *names, size_t n,
                                   struct batch_result *out, struct api_error *err);
enum backend_status backend_watch(struct backend *b, backend_watch_fn fn, void *ctx,
                                  struct api_error *err);

/* Fills err for an operation the driver does not have (status 501, reason Unsupported). */
enum backend_status backend_unsupported(const struct backend *b, const char *what,
                                        struct api_error *err);
/* The server word of a batch result to an outcome ("NOT_FOUND" → BATCH_NOT_FOUND). */
enum batch_outcome batch_outcome_from(const char *result);

#endif
