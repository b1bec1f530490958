/*
 * sched: one scheduling pass (ENGINE.md §Scheduling) as a pure function.
 *
 * Input: the nodes with their capacity, and every job that holds or wants
 * capacity — running jobs with their placement, waiting jobs with their
 * demand. Output: for each waiting job either a placement (a node for each
 * worker, all or nothing) or a human reason it waits, and the running idle
 * jobs to preempt. No I/O and no clock: the engine feeds it state and
 * applies what it returns, so every rule is a unit test.
 *
 * Order of a pass: standard jobs (quota RESERVED) first, by priority, then
 * submit order, then smaller request; a standard job that cannot be placed
 * blocks lower-priority standard jobs whose nodes overlap its own; it may
 * preempt preemptible idle jobs. Then idle jobs (SPOT), by the same order,
 * never blocked (they backfill), preempting lower-priority preemptible idle
 * jobs when that makes them fit. Running standard jobs are never preempted.
 */
#ifndef ENGINE_SCHED_H
#define ENGINE_SCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/jobspec.h"

struct sched_node {
    const char *name;
    int gpus; /* capacity */
    int cpus;
    int64_t mem_mib;
    bool unschedulable; /* marked by an operator: chosen for no job */
};

/* What one worker needs. */
struct sched_demand {
    int gpus;
    int cpus;
    int64_t mem_mib;
};

enum sched_verdict {
    SCHED_WAIT,    /* stays queued; see reason */
    SCHED_PLACE,   /* start it on placement[] */
    SCHED_PREEMPT, /* a running idle job to stop and requeue; see reason ("preempted by …") */
    SCHED_KEEP,    /* running and staying */
};

struct sched_job {
    /* in */
    const char *name;
    enum priority priority; /* UNSPECIFIED counts as NORMAL */
    bool idle;              /* quota_type SPOT */
    bool preemptible;       /* idle jobs only */
    uint64_t submit_seq;    /* submission order: smaller is earlier */
    int replicas;
    struct sched_demand per_worker;
    enum scoring_strategy scoring; /* UNSPECIFIED packs, like MOST_ALLOCATED */
    /*
     * Per node: may this job's pool use it (NULL: every node). Jobs of one
     * pool should share one array: the pass works per distinct array.
     */
    const bool *allowed;
    const bool *excluded; /* per node: marked unschedulable for this job (NULL: none) */
    bool running;         /* holds capacity at placement[] */
    int *placement; /* replicas entries: node index per worker (in when running, out when placed) */

    /*
     * out, for every job:
     *   waiting job  -> SCHED_PLACE, placement[] written, reason "";
     *                   or SCHED_WAIT, placement[] all -1, reason says why
     *                   ("needs 16 GPUs, 8 free", "behind HIGH job train-a", …);
     *   running job  -> SCHED_KEEP, reason "";
     *                   or SCHED_PREEMPT (idle and preemptible only), placement[]
     *                   untouched (the workers to stop), reason "preempted by …".
     */
    enum sched_verdict verdict;
    char reason[160]; /* why it waits, or who preempted it */
    /*
     * out, waiting jobs: it reserved nodes for itself (rule 2: a blocked
     * standard job above NORMAL) — what later jobs see changed at its turn.
     */
    bool reserved;
};

/*
 * One pass over every job. nodes and jobs are read; jobs' out fields are
 * written. Allocates scratch memory for the call only (fatal on failure, as
 * everywhere); keeps nothing between calls.
 */
void sched_pass(const struct sched_node *nodes, size_t node_count, struct sched_job *jobs,
                size_t job_count);

/*
 * Does a come before b in a pass (standard before idle, higher priority,
 * earlier submission, smaller request)? Jobs with equal keys: neither.
 */
bool sched_before(const struct sched_job *a, const struct sched_job *b);

/*
 * Which jobs a pass must be given again to decide jobs submitted after it
 * alone (sched_pass_added): those that hold capacity or reserved nodes.
 */
bool sched_job_kept(const struct sched_job *job);

/*
 * Decides waiting jobs added since a pass that placed and preempted nothing,
 * without the jobs of that pass that changed nothing: a waiting job that
 * reserved nothing leaves the state of the pass as it found it, so the jobs
 * after it decide the same without it. jobs[0, first_added) are the kept jobs
 * of that pass (sched_job_kept, nothing about them changed since), jobs
 * [first_added, job_count) the added ones; last_waiting is the waiting job of
 * that pass that came last in its order (NULL: none waited). Runs a pass over
 * jobs[] and returns true when its verdicts are those of a pass over every job:
 * no added job that changed the state (placed, reserved, caused a preemption)
 * comes before a job of that pass that still waits. On false, run sched_pass
 * over every job.
 */
bool sched_pass_added(const struct sched_node *nodes, size_t node_count, struct sched_job *jobs,
                      size_t job_count, size_t first_added, const struct sched_job *last_waiting);

#endif
