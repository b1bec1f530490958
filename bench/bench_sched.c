/*
 * bench_sched: how long one scheduling pass (engine/sched.c) takes on a big
 * simulated cluster — the work trainjobd does each time the queue or the
 * capacity changes. 1,000 nodes of 8 GPUs, 64 CPUs and 512 GiB; jobs of 1–8
 * workers of 1 or 8 GPUs, standard and idle (half of those preemptible),
 * NORMAL / HIGH / HIGHEST. Prints one table row per case: the median and p99
 * time of one pass over RUNS passes, and what the pass decided.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/jobspec.h"
#include "engine/sched.h"
#include "util/xalloc.h"

#define RUNS 31
#define NODES 1000
#define NODE_GPUS 8

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static uint64_t rng = 0x2545f4914f6cdd1du;

static unsigned rnd(unsigned below)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng % below);
}

struct workload {
    struct sched_node nodes[NODES];
    bool pools[2][NODES]; /* every node; the first half */
    struct sched_job *jobs;
    int *placements;
    bool *arrays; /* per job: allowed and excluded, when jobs bring their own */
    size_t count, running;
    int64_t running_gpus;
};

/* A job of the mix: 1–8 workers of 1 or 8 GPUs (4 CPUs and 32 GiB per GPU). */
static void random_job(struct sched_job *job, int *placement, uint64_t seq, int max_gpus)
{
    unsigned prio = rnd(10);
    int gpus = rnd(2) && max_gpus >= 8 ? 8 : 1;
    unsigned kind = rnd(4); /* standard, standard, idle, idle preemptible */
    *job = (struct sched_job){
        .name = "job",
        .priority = prio < 6   ? PRIORITY_NORMAL
                    : prio < 9 ? PRIORITY_HIGH
                               : PRIORITY_HIGHEST,
        .idle = kind >= 2,
        .preemptible = kind == 3,
        .submit_seq = seq,
        .replicas = 1 + (int)rnd(8),
        .per_worker = {gpus, 4 * gpus, 32 * 1024 * (int64_t)gpus},
        .scoring = rnd(2) ? SCORING_MOST_ALLOCATED : SCORING_LEAST_ALLOCATED,
        .placement = placement,
    };
}

/* How waiting jobs name their nodes. */
enum naming {
    EVERY_NODE,  /* allowed and excluded NULL */
    SHARED_POOL, /* allowed: their pool's array, shared */
    OWN_ARRAYS,  /* allowed and excluded: arrays of their own, as engine/lifecycle.c builds them */
};

/*
 * Running jobs first, on random nodes with room, until `running` of them run
 * or running_share of the GPUs are used; then `waiting` waiting jobs.
 */
static void build(struct workload *w, size_t running, double running_share, size_t waiting,
                  int running_max_gpus, enum naming naming)
{
    int free_gpus[NODES];
    for (int i = 0; i < NODES; i++) {
        char *name = xmalloc(16);
        snprintf(name, 16, "sim-n%d", i + 1);
        w->nodes[i] = (struct sched_node){name, NODE_GPUS, 64, 512 * 1024, false};
        free_gpus[i] = NODE_GPUS;
    }
    size_t max = running + waiting;
    w->jobs = xcalloc(max, sizeof *w->jobs);
    w->placements = xcalloc(max * 8, sizeof *w->placements);
    w->count = w->running = 0;
    w->running_gpus = 0;
    uint64_t seq = 1;
    int64_t share = (int64_t)(running_share * NODES * NODE_GPUS);
    while (w->running < running && w->running_gpus < share) {
        struct sched_job *job = &w->jobs[w->count];
        int *pl = &w->placements[w->count * 8];
        random_job(job, pl, seq++, running_max_gpus);
        int placed = 0;
        for (int tries = 0; placed < job->replicas && tries < 64; tries++) {
            int k = (int)rnd(NODES);
            if (free_gpus[k] >= job->per_worker.gpus) {
                free_gpus[k] -= job->per_worker.gpus;
                pl[placed++] = k;
            }
        }
        if (placed < job->replicas) { /* give it back; try another */
            for (int i = 0; i < placed; i++)
                free_gpus[pl[i]] += job->per_worker.gpus;
            continue;
        }
        job->running = true;
        w->running_gpus += (int64_t)job->replicas * job->per_worker.gpus;
        w->count++;
        w->running++;
    }
    for (int i = 0; i < NODES; i++) {
        w->pools[0][i] = true;
        w->pools[1][i] = i < NODES / 2;
    }
    w->arrays = naming == OWN_ARRAYS ? xcalloc(waiting * 2, NODES) : NULL;
    for (size_t i = 0; i < waiting; i++, w->count++) {
        struct sched_job *job = &w->jobs[w->count];
        random_job(job, &w->placements[w->count * 8], seq++, 8);
        const bool *pool = w->pools[rnd(4) == 0];
        if (naming == SHARED_POOL) {
            job->allowed = pool;
        } else if (naming == OWN_ARRAYS) {
            bool *allowed = w->arrays + i * 2 * NODES;
            memcpy(allowed, pool, NODES);
            job->allowed = allowed;
            job->excluded = allowed + NODES; /* nothing marked */
        }
    }
}

static void release(struct workload *w)
{
    for (int i = 0; i < NODES; i++)
        free((char *)w->nodes[i].name);
    free(w->jobs);
    free(w->placements);
    free(w->arrays);
}

static char notes[1024];
static size_t notes_len;

/* Times RUNS passes over the workload; prints the row, and notes what the pass decided. */
static void measure(const char *name, struct workload *w)
{
    double t[RUNS];
    sched_pass(w->nodes, NODES, w->jobs, w->count); /* warm up caches */
    for (int r = 0; r < RUNS; r++) {
        double start = now_ns();
        sched_pass(w->nodes, NODES, w->jobs, w->count);
        t[r] = now_ns() - start;
    }
    qsort(t, RUNS, sizeof t[0], cmp_double);
    double median = t[RUNS / 2], p99 = t[RUNS - 1];
    size_t placed = 0, preempted = 0;
    for (size_t i = 0; i < w->count; i++) {
        placed += w->jobs[i].verdict == SCHED_PLACE;
        preempted += w->jobs[i].verdict == SCHED_PREEMPT;
    }
    printf("| %-44s | %10.1f | %10.1f | %12.0f |\n", name, median / 1e3, p99 / 1e3, 1e9 / median);
    int len = snprintf(notes + notes_len, sizeof notes - notes_len,
                       "- %s: %zu running jobs hold %lld GPUs; %zu placed, %zu preempted\n", name,
                       w->running, (long long)w->running_gpus, placed, preempted);
    if (len > 0 && (size_t)len < sizeof notes - notes_len)
        notes_len += (size_t)len;
}

int main(void)
{
    struct workload *w = xcalloc(1, sizeof *w);

    printf("scheduling pass, %d nodes of %d GPUs; %d runs\n", NODES, NODE_GPUS, RUNS);
    printf("| %-44s | %10s | %10s | %12s |\n", "operation", "median µs", "p99 µs", "passes/s");
    printf("|%s|%s|%s|%s|\n", "----------------------------------------------", "------------",
           "------------", "--------------");

    build(w, NODES * NODE_GPUS, 0.5, 10000, 8, EVERY_NODE);
    measure("pass: 10,000 waiting, half the GPUs running", w);
    release(w);

    build(w, 1000, 1.0, 1000, 1, EVERY_NODE);
    measure("pass: 1,000 running + 1,000 waiting", w);
    release(w);

    build(w, 0, 0.0, 10000, 8, EVERY_NODE);
    measure("pass: 10,000 waiting on an empty cluster", w);
    release(w);

    build(w, NODES * NODE_GPUS, 0.5, 10000, 8, SHARED_POOL);
    measure("pass: 10,000 waiting, pools as shared arrays", w);
    release(w);

    build(w, NODES * NODE_GPUS, 0.5, 10000, 8, OWN_ARRAYS);
    measure("pass: 10,000 waiting, arrays of their own", w);
    release(w);

    fputs(notes, stdout);
    free(w);
    return 0;
}
