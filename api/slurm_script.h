/*
 * slurm_script: the batch script of a trainjob job on Slurm, and the job
 * directory it keeps on the shared filesystem.
 *
 * The batch script is the job's supervisor (POSIX sh, run by Slurm on the
 * first node of the allocation): it runs a one-worker job in the batch step
 * itself (no launcher of srun options) and starts one `srun` step per worker
 * of a larger job, with the framework variables trainjobd gives
 * (engine/worker_env.h), waits for them, and when a worker fails applies
 * the job's fault rules exactly as trainjobd does (ENGINE.md §Faults,
 * api/fault.c): first match wins, else
 * RESTART_JOB; RESTART_POD reruns that worker's step only; RESTART_JOB ends and
 * reruns every step; FAIL_JOB ends the job; backoff_limit counted across
 * requeues in state.json; mark_node_unschedulable requeues the job away from
 * the node. Its exit status is the job's outcome (the failing worker's code).
 *
 * Everything taken from the job (names, the startup script, variables, the
 * image) is single-quoted in the script: no job text is ever parsed by a shell.
 *
 * The job directory "$jobs_dir/<workspace>/<job-name>/" (written by the job's
 * own user, so hostile to its readers):
 *   job.json               the job as submitted (written by the driver)
 *   events.jsonl           one JSON object per line, appended by the supervisor:
 *                          {"time","type":"Normal|Warning","reason","kind","message",
 *                           "worker"?, "exit_code"?, "rule"?, "action"?,
 *                           "restarts_used"?, "restart_limit"?, "node"?}
 *                          kind is api/jobstatus.h's job_event_kind name
 *   workers/<name>.json    {"name","index","node","phase","restarts","exit_code",
 *                           "signal","rule","started","ended"}, rewritten in one
 *                          write (a reader may find it empty for a moment, never torn)
 *   logs/<name>.log        the worker's stdout and stderr, appended across restarts
 *   state.json             {"restarts","marked":[nodes],"runs","slurm_job_id"}, replaced
 *                          atomically once it exists
 *   launch/<name>.*        the worker's start, exit and why it could not start
 *   hostfile               the MPI hostfile ("addr slots=1" per worker), MPI jobs only
 *
 * Called by the Slurm driver (api/slurm*.c) to submit and by `trainjob render
 * --target slurm`; api/ only (engine/ is not used: tests/test_slurm_script.c
 * checks that the names, variables and fault decisions agree with trainjobd's).
 */
#ifndef API_SLURM_SCRIPT_H
#define API_SLURM_SCRIPT_H

#include <stdbool.h>
#include <stddef.h>

#include "api/apierror.h"
#include "api/catalog.h"
#include "api/jobspec.h"
#include "util/strbuf.h"

/* A volume of the context: a name (mount[].id) and the directory every node sees. */
struct slurm_volume {
    const char *name;
    const char *path;
};

struct slurm_site {       /* from the context and the catalog */
    const char *jobs_dir; /* shared filesystem root for job directories */
    const char *workspace;
    /*
     * NULL/"" = host; else a template with {image} and {mounts}, e.g.
     * "apptainer exec --bind {mounts} {image}", the program each worker's
     * step runs its command through. A template starting with '-' is srun
     * options instead (Pyxis: "--container-image={image}
     * --container-mounts={mounts}"). {mounts} is one word,
     * SRC:DST[,SRC:DST…]: the job directory at its own path, then each of
     * the job's mounts (the form apptainer's --bind and Pyxis'
     * --container-mounts take).
     */
    const char *launcher;
    const struct slurm_volume *volumes;
    size_t volume_count;
};

/* The image that means "the node's own environment, no container". */
#define SLURM_HOST_IMAGE CATALOG_HOST_IMAGE

/*
 * The batch script for job: a POSIX sh supervisor that runs one srun step per
 * worker and applies the job's fault rules; gaps (may be NULL) gets one line
 * per form rule Slurm cannot honour as written. Returns 0, or -1 with err set
 * (status 400, the field named) when the job cannot be run as written.
 *
 * Mounts: mount[i].id names one of site's volumes, and the directory mounted
 * is its path joined with mount[i].subdir. A worker run through the launcher
 * gets it bound at mount_path ({mounts}); a worker in the node's own
 * environment sees the shared filesystem as it is, so its mount_path must be
 * that directory. Anything else is refused, naming the field: a job that
 * would read its data at a path nothing put there never starts.
 */
int slurm_script_render(const struct jobspec *job, const struct slurm_site *site,
                        struct strbuf *script, struct strbuf *gaps, struct api_error *err);

/*
 * "$jobs_dir/<workspace>/<name>" from the three parts given (caller frees); NULL, with no
 * reason, when a part is not a safe path component. The driver's slurm_backend_job_dir
 * is the same path for its backend's context and workspace, with the reason in an api_error.
 */
char *slurm_jobdir_path(const char *jobs_dir, const char *workspace, const char *name);

/*
 * Whether s is a name that is safe as one path component, a shell word and a
 * Slurm name: 1 to max of [A-Za-z0-9._-], not starting with '.' or '-'.
 */
bool slurm_safe_name(const char *s, size_t max);

/*
 * Why path cannot name a directory on the nodes as written, or NULL: it is
 * absolute, with no control character and no '..' component; bound (a
 * container launcher's SRC:DST,…): no ',' or ':' either.
 */
const char *slurm_path_problem(const char *path, bool bound);

/* Appends s to out as one single-quoted shell word ('\'' for each quote). */
void slurm_shell_quote(struct strbuf *out, const char *s);

#endif
