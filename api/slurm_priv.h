/*
 * slurm_priv: what the parts of the Slurm driver share — the driver's state,
 * the bounds used on both sides of a file, and the helpers that cross files.
 * Included only by api/slurm*.c: slurm.c (the ops table, open/free, the calls
 * through the loop), slurm_rest.c (the token, slurmrestd requests),
 * slurm_jobdir.c (job directories: workers, events, logs), slurm_jobs.c
 * (states, jobs), slurm_catalog.c (partitions and nodes) and slurm_submit.c
 * (submit, start/stop/delete, render).
 */
#ifndef API_SLURM_PRIV_H
#define API_SLURM_PRIV_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/backend.h"
#include "api/catalog.h"
#include "api/http.h"
#include "api/jobspec.h"
#include "api/slurm.h"
#include "api/slurm_shapes.h"
#include "util/strbuf.h"

#define WORKER_FILE_MAX (64u << 10)
#define FOLLOW_POLL_MS 500

struct slurm {
    struct http_client *client;
    const struct slurm_shape *shape; /* NULL until /openapi/v3 was read */
    char *context;
    char *user;
    char *token_file;
    char *token_command;
    char *token; /* the one in use */
    char *jobs_dir;
    char *launcher;
    json_t *qos;
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

/* ---- slurm_jobdir.c: job directories, workers, events, logs ---------------- */

/* "$jobs_dir/<workspace>/<name>", or NULL (err says why) for a name unsafe as a path component. */
char *slurm_job_dir(struct backend *b, const char *name, struct api_error *err);
/* Opens dir (O_PATH-free: readable) refusing a symlink as its last component. */
int slurm_open_dir_nofollow(const char *dir);
/* A file of the job directory, bounded; -1 when it is missing or not a plain file. */
int slurm_read_job_file(const char *dir, const char *sub, const char *name, size_t max, bool tail,
                        struct strbuf *out);
/* A copy of text made safe for a terminal and at most max bytes. */
char *slurm_clean(const char *text, size_t max);
/* A safe worker name: what a file name of workers/ or logs/ may be. */
bool slurm_safe_component(const char *s);
/* workers/<worker>.json of a job directory; 0 when there are none. */
size_t slurm_workers_from_dir(const char *dir, struct worker_list *out);
enum backend_status slurm_workers(struct backend *b, const char *name, struct worker_list *out,
                                  struct api_error *err);
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
enum backend_status slurm_logs(struct backend *b, const char *name, const char *worker, long tail,
                               bool follow, backend_data_fn fn, void *ctx, struct api_error *err);

/* ---- slurm_jobs.c: states, jobs ------------------------------------------- */

/* a and b are the same string (a may be NULL). */
bool slurm_is(const char *a, const char *b);

/* Slurm's jobs of the workspace, newest first per name; from one GET /jobs. */
struct slurm_found {
    struct slurm_job *jobs;
    size_t count;
};

void slurm_found_free(struct slurm_found *f);
/* GET /jobs: the workspace's jobs, the newest Slurm job per name. */
enum backend_status slurm_fetch_jobs(struct backend *b, struct slurm_found *out,
                                     struct api_error *err);
/* The Slurm job of f whose job directory is name's (the newest: f is newest first), or NULL. */
const struct slurm_job *slurm_found_job(struct backend *b, const struct slurm_found *f,
                                        const char *name);
/* The stored job.json of a directory, or false. */
bool slurm_stored_job(const char *dir, struct jobspec *out);
enum backend_status slurm_get(struct backend *b, const char *name, struct jobspec *out,
                              struct api_error *err);
enum backend_status slurm_list(struct backend *b, const struct list_query *q, struct job_list *out,
                               struct api_error *err);

/* ---- slurm_catalog.c: partitions and nodes --------------------------------- */

enum backend_status slurm_catalog(struct backend *b, struct catalog *out, struct api_error *err);
/* The QOS the user's Slurm association allows (a JSON array), or NULL: no slurmdbd, no list. */
json_t *slurm_assoc_qos(struct backend *b);
/* Whether qos is one of list's strings. */
bool slurm_qos_in(const json_t *list, const char *qos);

/* ---- slurm_submit.c: submit, start, stop, delete, render ------------------- */

enum backend_status slurm_create(struct backend *b, const struct jobspec *job, struct jobspec *out,
                                 struct api_error *err);
enum backend_status slurm_start(struct backend *b, const char *name, struct jobspec *out,
                                struct api_error *err);
enum backend_status slurm_stop(struct backend *b, const char *const *names, size_t n,
                               struct batch_result *out, struct api_error *err);
enum backend_status slurm_delete(struct backend *b, const char *const *names, size_t n,
                                 struct batch_result *out, struct api_error *err);

#endif
