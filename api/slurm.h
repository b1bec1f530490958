/*
 * slurm: the driver for a Slurm cluster through slurmrestd (struct
 * backend_ops; api/acp.c is its sibling). backend_open (api/backend.c)
 * opens it for a context with `driver: slurm`.
 *
 * One trainjob job is one Slurm job whose working directory is the job's
 * directory on the shared filesystem, $jobs_dir/<workspace>/<name>
 * (api/slurm_script.h): that is how a Slurm job is known as a trainjob job,
 * and where job.json (the job as submitted), events.jsonl, workers/<worker>.json
 * and logs/<worker>.log live. Everything in that directory is written by
 * the job's own code and is read as hostile: sizes bounded, types checked,
 * text sanitized, no symlink followed.
 *
 * Authentication is slurmrestd's JWT: X-SLURM-USER-NAME and
 * X-SLURM-USER-TOKEN. The token comes from token_file, or from
 * token_command, which is split on blanks and run without a shell; it is
 * run again once when the server refuses the token (slurmrestd 22.05
 * answers HTTP 500 "Unspecified error" for a wrong or expired token, 401
 * for a missing one). A refusal that persists is "authentication failed",
 * naming the context.
 */
#ifndef API_SLURM_H
#define API_SLURM_H

#include <stdbool.h>

#include "api/backend.h"
#include "api/jobspec.h"

struct backend_driver;
struct context;
struct http_client;
struct slurm_job;
struct strbuf;

/* The driver api/drivers.c opens slurm contexts with (slurm_backend_new). */
extern const struct backend_driver slurm_driver;

/* A backend for the slurm context c on client (taken); NULL with why in err. */
struct backend *slurm_backend_new(struct http_client *client, const struct context *c,
                                  struct strbuf *err);

/*
 * How long delete waits for a cancelled job to leave Slurm's running states
 * before it keeps the job directory and says so (SLURM_DELETE_WAIT_MS; tests
 * shorten it).
 */
#define SLURM_DELETE_WAIT_MS 10000
void slurm_backend_set_delete_wait(struct backend *b, int ms);

/*
 * The trainjob state of a Slurm job, with the reason in words in msg:
 * PENDING → QUEUEING (why it waits; "preempted …" after a requeue),
 * RUNNING/COMPLETING → RUNNING, COMPLETED → SUCCEEDED, FAILED, TIMEOUT,
 * NODE_FAIL, OUT_OF_MEMORY … → FAILED with the decoded exit code,
 * CANCELLED → SUSPENDED (stopped).
 */
enum job_state slurm_job_state(const struct slurm_job *j, struct strbuf *msg);
/* True when Slurm is done with the job (no state it can leave on its own). */
bool slurm_job_ended(const struct slurm_job *j);

/*
 * `trainjob render --target slurm`: the REST request (method, path, JSON
 * body with the batch script) the context's driver would send to create
 * job, then the rules Slurm cannot honour as written, one per line, into
 * out. version: "v0.0.38" when NULL; cat: the cluster's catalog, for the
 * spec's CPUs and memory (NULL: offline, the GPUs its name says only). Returns 0, or -1 with
 * why in err.
 */
int slurm_render(const struct jobspec *job, const struct context *c, const char *version,
                 const struct catalog *cat, struct strbuf *out, struct strbuf *err);
/*
 * What a submit of job through context c would refuse on the cluster's
 * side, beyond the form's rules and the catalog's (api/validate): the QOS
 * a priority needs, every mount as the nodes would see it, the launcher.
 * Each refusal is a finding on its field, one per field; a field out
 * already has an error on is left to that error. cat: the cluster's
 * catalog, or NULL.
 */
struct findings;
void slurm_job_findings(const struct jobspec *job, const struct context *c,
                        const struct catalog *cat, struct findings *out);

#endif
