/*
 * slurm_priv: what the parts of the Slurm driver share — the driver's state,
 * the bounds used on both sides of a file, and the helpers that cross files.
 * Included only by api/slurm*.c: slurm.c (the ops table, open/free, the calls
 * through the loop), slurm_rest.c (the token, slurmrestd requests),
 * slurm_jobdir.c (job directories: workers, events, logs), slurm_jobs.c
 * (states, jobs), slurm_catalog.c (partitions and nodes), slurm_metrics.c
 * (TensorBoard scalars) and slurm_submit.c (submit, start/stop/delete,
 * priority, render).
 */
#ifndef API_SLURM_PRIV_H
#define API_SLURM_PRIV_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "api/backend.h"
#include "api/catalog.h"
#include "api/http.h"
#include "api/jobspec.h"
#include "api/slurm.h"
#include "api/slurm_script.h"
#include "api/slurm_shapes.h"
#include "util/strbuf.h"

struct stat;

#define WORKER_FILE_MAX (64u << 10)
#define FOLLOW_POLL_MS 500
#define JOBS_FRESH_MS 1000 /* GET /jobs at most once a second */
/*
 * The byte cap of a reply from slurmrestd held whole; every such reply is
 * decoded within api/jsonbound's memory bound. A 2xx GET /jobs is not held:
 * it is cluster-wide (no filter by user in v0.0.38-40; a pending job is
 * about 3.2 KB of it) and read as it arrives (slurm_jobs_read), holding one
 * job at a time (at most SLURM_JOB_MAX bytes; a larger one is skipped) and
 * the reply's other members (at most SLURM_REST_MAX bytes together), bound
 * in time by the client's timeout, not in bytes.
 */
#define SLURM_REPLY_MAX ((size_t)256 << 20)
#define SLURM_JOB_MAX ((size_t)16 << 20)
#define SLURM_REST_MAX ((size_t)1 << 20)
/* A Slurm job is trainjob's when its comment is this followed by its job directory's mark. */
#define SLURM_MARK_PREFIX "trainjob:"
#define SLURM_MARK_FILE "mark"

/*
 * The replies of one call made on the loop. An operation of this driver is
 * written as blocking code; on the loop it is run with s->replay set, and
 * then slurm_rest never blocks: a request answered before (same method, path
 * and body) gets its recorded reply, the first one not yet made is noted in
 * method/path/body and fails, so the run is thrown away (slurm_pending). The
 * loop (api/slurm.c) makes that request through http_multi and runs the
 * operation again from the start once the reply is recorded; the last run
 * is the one whose reply is kept. An operation must therefore change nothing
 * outside its reply before its last request (or undo it when that request
 * fails, as submit removes the directory it made), and test slurm_pending
 * before a change it makes after one.
 */
struct slurm_replay_entry {
    char *key; /* "METHOD PATH\nBODY" */
    enum backend_status st;
    json_t *reply;
    struct slurm_joblist *jobs; /* a GET /jobs: the user's jobs, read as it arrived */
    struct api_error err;
    int64_t sent_ms; /* when the request was made */
};

struct slurm_replay {
    struct slurm_replay_entry *entries;
    size_t count;
    bool pending;      /* method/path/body is the request to make next */
    bool need_token;   /* token_command must run first */
    char *token_error; /* why token_command failed (the run then fails with it) */
    char *method, *path, *body;
    int delay_ms;    /* wait this long before making it (a poll repeated) */
    int64_t started; /* when the call started (time_now_ms), for deadlines across runs */
    char *made;      /* the job directory an earlier run of this create made */
    int64_t sent_ms; /* when the pending request was made */
    bool changed;    /* a change (POST, DELETE) was made: the jobs known are old */
    bool wait_only;  /* pending is no request: run again after delay_ms (slurm_wait) */
};

/*
 * The user's jobs of one GET /jobs reply (or of the list kept from one),
 * decoded as it was read, and the text of their members that a job is
 * decoded from, {"jobs":[…]} less its closing brace, which the list kept
 * for the next process is written from. Shared, counted (refs), by the
 * reply recorded on the loop, the list this process keeps for
 * JOBS_FRESH_MS and the jobs found in it (struct slurm_found).
 */
struct slurm_joblist {
    unsigned refs;
    struct slurm_job *jobs;
    size_t count, cap;
    struct strbuf text;
};

struct slurm_joblist *slurm_joblist_ref(struct slurm_joblist *l);
void slurm_joblist_unref(struct slurm_joblist *l);

struct slurm {
    struct http_client *client;
    struct slurm_replay *replay; /* set while an operation runs for the loop */
    char *warning;               /* said once: a token_file readable by others */
    bool warned;
    /*
     * GET /jobs, incremental: the last full reply, the update_time to ask
     * with next (slurmctld answers 304 when no job changed since), and when
     * it was last asked — within JOBS_FRESH_MS the reply is used again, so
     * a refresh of a job screen (get, workers, list) is one call.
     */
    struct slurm_joblist *jobs_cache;
    int64_t jobs_since; /* seconds, slurmctld's clock (the request's start, less 1 s) */
    int64_t jobs_at;    /* time_now_ms of the last GET /jobs; 0: ask again */
    int64_t sent_ms;    /* when the request whose reply slurm_rest returned last was made */
    const struct slurm_shape *shape; /* NULL until /openapi/v3 (or its cache) was read */
    /*
     * The shape came from the user's cache of this endpoint's version and no
     * reply has confirmed it yet: a 404 or another Slurm release (the
     * server's identity, shape_release) drops the cache and asks /openapi/v3.
     */
    bool shape_cached;
    bool shape_saved; /* the version read here is in the cache */
    char *shape_release;
    /*
     * The call on the loop that is reading /openapi/v3, while it does: the
     * others wait for its answer rather than ask for the same 200 KB.
     */
    const struct slurm_replay *shape_asker;
    char *context;
    char *user;
    uid_t owner_uid; /* the user's uid here (else ours): whose job directories and files we trust */
    char *token_file;
    char *token_command;
    char *token; /* the one in use */
    char *jobs_dir;
    char *launcher;
    json_t *qos;
    json_t *volumes; /* the context's: name → the directory every node sees */
    int delete_wait_ms;
};

static inline struct slurm *driver(struct backend *b)
{
    return b->driver;
}

/* ---- slurm_rest.c: the token, REST ---------------------------------------- */

/*
 * One request: path is absolute ("/openapi/v3") or under the API version
 * ("jobs" → "/slurm/v0.0.38/jobs"). A refused token is fetched again once
 * (token_command) and the request repeated. *reply gets the JSON of a 2xx
 * reply; errors a Slurm reply carries with a 2xx status are failures too.
 */
enum backend_status slurm_rest(struct backend *b, const char *method, const char *path,
                               const json_t *body, json_t **reply, struct api_error *err);
/*
 * GET path, a listing of jobs ("jobs?update_time=…"): the same, the user's
 * jobs in *jobs rather than in the reply's "jobs" (no tree of them is
 * made); *jobs is NULL when slurmctld answered 304 (*reply is then null).
 */
enum backend_status slurm_rest_jobs(struct backend *b, const char *path, json_t **reply,
                                    struct slurm_joblist **jobs, struct api_error *err);
/*
 * A reply of kind ("jobs", "catalog") kept by the last process in the
 * user's cache (slurm_rest.c says which files are trusted) and the time it
 * stands for; NULL when there is none to trust. _write keeps doc's members.
 */
json_t *slurm_kept_read(struct backend *b, const char *kind, int64_t *since);
void slurm_kept_write(struct backend *b, const char *kind, const json_t *doc, int64_t since);
/*
 * The same, doc given as text: an object's opening brace and members
 * ({"jobs":[…]), to which the envelope's members and the closing brace are
 * added while it is written (text is as it was after).
 */
void slurm_kept_write_text(struct backend *b, const char *kind, struct strbuf *text, int64_t since);
/* The kept "jobs" read back as a GET /jobs reply is read (the user's jobs decoded), or NULL. */
struct slurm_joblist *slurm_kept_jobs_read(struct backend *b, int64_t *since);
/* Sets s->shape, as a request under the version would: from the cache or /openapi/v3. */
enum backend_status slurm_ensure_shape(struct backend *b, struct api_error *err);

/*
 * A GET /jobs reply read as it arrives, slurm_jobs_read_data being the
 * request's on_data: only the job being read is held and the user's jobs
 * decoded. NULL for any other request (whose reply is held whole).
 */
struct slurm_jobs_read;
struct slurm_jobs_read *slurm_jobs_read_new(struct backend *b, const char *method,
                                            const char *path);
int slurm_jobs_read_data(void *ctx, const char *data, size_t len);
void slurm_jobs_read_free(struct slurm_jobs_read *jr);
/*
 * The result of a request to decode (slurm_rest's rules), jr its reader
 * (or NULL); *jobs: the user's jobs of a GET /jobs (else NULL); *refused:
 * the token was refused.
 */
enum backend_status slurm_rest_decode(struct backend *b, const char *method, const char *path,
                                      struct http_result *r, struct slurm_jobs_read *jr,
                                      json_t **reply, struct slurm_joblist **jobs, bool *refused,
                                      struct api_error *err);
/* The "authentication failed" error naming the context, endpoint, user and what to check. */
enum backend_status slurm_auth_failed(struct backend *b, const char *detail, struct api_error *err);
/* Records the reply to the pending request of rp (reply and jobs are taken). */
void slurm_replay_store(struct slurm_replay *rp, enum backend_status st, json_t *reply,
                        struct slurm_joblist *jobs, const struct api_error *err);
void slurm_replay_free(struct slurm_replay *rp);
/* True while the operation runs for the loop and a request of it is not answered yet. */
bool slurm_pending(struct backend *b);
/* On the loop: make no request, run the operation again after delay_ms. */
void slurm_wait(struct backend *b, int delay_ms);
/* A call ends: it no longer reads /openapi/v3 for the others. */
void slurm_replay_gone(struct backend *b, const struct slurm_replay *rp);
/* On the loop: forget the reply to this GET and make it again after delay_ms (a wait). */
void slurm_rest_again(struct backend *b, const char *method, const char *path, int delay_ms);
/* A warning to show once (caller frees), or NULL. */
char *slurm_take_warning(struct backend *b);

/*
 * token_command on the loop: a child whose stdout is a loop fd, killed with
 * its process group after 10 s. done gets 0 (the token is in use, headers
 * set) or -1 and why; it is always called from the loop, never from inside
 * slurm_token_start. slurm_token_cancel (not after done) kills the child.
 */
struct loop;
struct slurm_token_run;
typedef void (*slurm_token_fn)(void *ctx, int rc, const char *why);
struct slurm_token_run *slurm_token_start(struct backend *b, struct loop *lp, slurm_token_fn done,
                                          void *ctx);
void slurm_token_cancel(struct slurm_token_run *t);

/* ---- slurm_jobdir.c: job directories, workers, events, logs ---------------- */

/*
 * The job directory of name in this backend's jobs_dir and workspace, or NULL with err
 * (400, field name) saying why; slurm_jobdir_path (api/slurm_script.h) is the bare rule.
 */
char *slurm_backend_job_dir(struct backend *b, const char *name, struct api_error *err);
/* Opens dir (O_PATH-free: readable) refusing a symlink as its last component. */
int slurm_open_dir_nofollow(const char *dir);
/* Whether a file or directory of uid is trusted as the user's (owner), root's or ours. */
bool slurm_owner_ok(uid_t uid, uid_t owner);
/* Opens a job directory: no symlink, owner's (slurm_owner_ok), writable by nobody else; else -1. */
int slurm_open_job_dir(const char *dir, uid_t owner);
/* The same, for the entry name (no '/') of the workspace directory wsfd. */
int slurm_open_job_dir_at(int wsfd, const char *name, uid_t owner);
/*
 * The directories a job's lies in, checked the way sshd's StrictModes checks
 * ~/.ssh: jobs_dir and those above it, the workspace's and (when not NULL
 * and present) job_dir. 0, or -1 with err (403) naming the directory and
 * what to fix.
 */
int slurm_check_dirs(struct backend *b, const char *job_dir, struct api_error *err);
/*
 * A file of the job directory, bounded; -1 when it is missing or not a
 * plain file, -2 when it is another user's (its open descriptor's owner).
 */
int slurm_read_job_file(const char *dir, uid_t owner, const char *sub, const char *name, size_t max,
                        bool tail, struct strbuf *out);
/* The same, from the job directory dfd (slurm_open_job_dir's) already open. */
int slurm_read_job_file_at(int dfd, uid_t owner, const char *name, size_t max, struct strbuf *out);
/* The same with the open file's stat in *st; -1 with errno ENOENT when there is none. */
int slurm_read_job_file_st(int dfd, uid_t owner, const char *name, size_t max, struct strbuf *out,
                           struct stat *st);
/* A copy of text made safe for a terminal and at most max bytes. */
char *slurm_clean(const char *text, size_t max);
/* A safe name from the cluster or a job directory (a worker, partition, QOS, user). */
static inline bool slurm_safe_component(const char *s)
{
    return slurm_safe_name(s, 128);
}
/* workers/<worker>.json of a job directory; 0 when there are none. */
size_t slurm_workers_from_dir(const char *dir, uid_t owner, struct worker_list *out);
enum backend_status slurm_workers(struct backend *b, const char *name, struct worker_list *out,
                                  struct api_error *err);
/* The user a uid is, for a message ("uid 1002" when it has no name). */
void slurm_user_words(uid_t uid, struct strbuf *out);
/* The events of a run of events.jsonl's lines (cut: buf starts inside its first line). */
size_t slurm_events_parse(const char *buf, size_t len, bool cut, const char *job,
                          struct job_event_list *out);
/* The events of dir's events.jsonl, read from its last max bytes. */
size_t slurm_events_from_dir(const char *dir, uid_t owner, const char *job, size_t max,
                             struct job_event_list *out);
enum backend_status slurm_events(struct backend *b, const char *name, struct job_event_list *out,
                                 struct api_error *err);

/* A worker's log being read (its tail, then what is added); stepped by slurm_log_step. */
struct slurm_log_follow;
/* Frees a slurm_log_follow (a void * for backend_call's driver_free). */
void slurm_log_follow_free(void *p);
struct slurm_log_follow *slurm_log_follow_new(struct backend *b, const char *name,
                                              const char *worker, long tail, bool follow,
                                              struct api_error *err);
/* One step of a log being read: true when it ended (*st says how). */
bool slurm_log_step(struct slurm_log_follow *f, backend_data_fn fn, void *ctx,
                    enum backend_status *st, struct api_error *err);
/* The state is asked by the caller (the loop), not by slurm_log_step. */
void slurm_log_on_loop(struct slurm_log_follow *f);
/* On the loop: true (once) when it is time to ask the job's state; *name is the job. */
bool slurm_log_wants_state(struct slurm_log_follow *f, const char **name);
/* The job's state, as asked: an ended job's follow ends after a few quiet steps. */
void slurm_log_job_state(struct slurm_log_follow *f, enum job_state state);
enum backend_status slurm_logs(struct backend *b, const char *name, const char *worker, long tail,
                               bool follow, backend_data_fn fn, void *ctx, struct api_error *err);

/* ---- slurm_jobs.c: states, jobs ------------------------------------------- */

/* a and b are the same string (a may be NULL). */
bool slurm_is(const char *a, const char *b);

/*
 * Slurm's jobs of the workspace, newest first per name; from one GET /jobs.
 * A Slurm job is one of them only when Slurm's user is the context's, its
 * comment carries its job directory's mark and that directory is the user's:
 * another user's job (or one without the mark) run in a job directory with
 * sbatch --chdir is never taken for the job.
 */
struct slurm_found {
    const struct slurm_job **jobs; /* in list */
    size_t count;
    struct slurm_joblist *list;
};

void slurm_found_free(struct slurm_found *f);
/* GET /jobs: the workspace's jobs, the newest Slurm job per name. */
enum backend_status slurm_fetch_jobs(struct backend *b, struct slurm_found *out,
                                     struct api_error *err);
/* The Slurm job of f whose job directory is name's (the newest: f is newest first), or NULL. */
const struct slurm_job *slurm_found_job(struct backend *b, const struct slurm_found *f,
                                        const char *name);
/* The stored job.json of a directory (the owner's), or false. */
bool slurm_stored_job(const char *dir, uid_t owner, struct jobspec *out);
/* The job directory's mark (read, or made when make), or NULL. */
char *slurm_job_mark(const char *dir, uid_t owner, bool make);
enum backend_status slurm_get(struct backend *b, const char *name, struct jobspec *out,
                              struct api_error *err);
enum backend_status slurm_list(struct backend *b, const struct list_query *q, struct job_list *out,
                               struct api_error *err);

/* ---- slurm_catalog.c: partitions and nodes --------------------------------- */

enum backend_status slurm_catalog(struct backend *b, struct catalog *out, struct api_error *err);
/*
 * Forgets the partitions and nodes this process read last (slurm_catalog
 * uses them again for JOBS_FRESH_MS, as `trainjob submit` checks and then
 * sends a job): for a caller that knows the cluster changed.
 */
void slurm_catalog_forget(void);
/* The QOS the user's Slurm association allows (a JSON array), or NULL: no slurmdbd, no list. */
json_t *slurm_assoc_qos(struct backend *b);
/* Whether qos is one of list's strings. */
bool slurm_qos_in(const json_t *list, const char *qos);

/* ---- slurm_metrics.c: TensorBoard scalars from the job's log directory ------- */

/* A page of job name's scalars after since (api/backend.h backend_ops.scalars). */
enum backend_status slurm_scalars(struct backend *b, const char *name, const char *since,
                                  size_t limit, struct scalar_page *out, struct api_error *err);

/* ---- slurm_submit.c: submit, start, stop, delete, render ------------------- */

enum backend_status slurm_create(struct backend *b, const struct jobspec *job, struct jobspec *out,
                                 struct api_error *err);
enum backend_status slurm_start(struct backend *b, const char *name, struct jobspec *out,
                                struct api_error *err);
/* A new priority (the context's QOS for it, on a pending Slurm job) or display name. */
enum backend_status slurm_update(struct backend *b, const char *name, const struct job_update *u,
                                 struct jobspec *out, struct api_error *err);
enum backend_status slurm_stop(struct backend *b, const char *const *names, size_t n,
                               struct batch_result *out, struct api_error *err);
enum backend_status slurm_delete(struct backend *b, const char *const *names, size_t n,
                                 struct batch_result *out, struct api_error *err);

#endif
