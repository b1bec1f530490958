/*
 * sched_priv: what the parts of one scheduling pass share — the constants,
 * struct pass and its scratch structures, and the small helpers every part
 * reads (levels, demands, the node order's comparison, node checks).
 * Included only by engine/sched*.c: sched.c (the order and the pass),
 * sched_fit.c (node state, bucket totals, fits) and sched_place.c (placing
 * one waiting job: placement, reasons, preemption).
 */
#ifndef ENGINE_SCHED_PRIV_H
#define ENGINE_SCHED_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/sched.h"

/* Priority levels: UNSPECIFIED counts as NORMAL. */
enum { LVL_NONE = 0, LVL_NORMAL = 1, LVL_HIGH = 2, LVL_HIGHEST = 3, LVL_COUNT = 4 };
/* Victim class of a standard job: idle jobs of any priority (levels below 4). */
#define LVL_ANY 4
/* Nodes are totalled by the level of the job reserving them (0..3); operator-marked apart. */
#define BUCKET_UNSCHED 4
#define BUCKETS 5

/* Resource dimensions: GPUs, CPUs, memory in MiB. */
enum { DIM_GPU, DIM_CPU, DIM_MEM, DIMS };

/* A node's slots for a demand of zero: "as many as you like". */
#define SLOT_CAP ((int64_t)1 << 30)
/* Node memory is capped (1 EiB) so that totals over the nodes never overflow. */
#define MEM_CAP ((int64_t)1 << 40)

/* Which nodes a fit leaves out; F_DIMS: count dim_slots too (for reasons only). */
enum { F_EXCL = 1, F_UNSCHED = 2, F_BLOCK = 4, F_DIMS = 8 };
/* What a fit reads per node: capacity, free capacity, or free plus what victims hold. */
enum fit_src { SRC_CAP, SRC_FREE, SRC_RECLAIM };

/* A node's state byte: marked by an operator, and the level of the job reserving it. */
#define NODE_UNSCHED 1u
#define STATE_LVL(st) ((int)((st) >> 1))

/* Node sets and worker shapes tracked per bucket; more fall back to walks over the nodes. */
#define SETS_MAX 8
#define SHAPES_MAX 32
#define SHAPE_TABLE 128

/* How workers of one shape fit on one set of nodes. */
struct fit {
    int64_t slots;           /* workers that fit */
    int64_t dim_slots[DIMS]; /* workers that fit counting one dimension only (F_DIMS) */
    int64_t total[DIMS];     /* amount over the nodes counted */
    bool totals_only;        /* demand exceeds total: slots are 0, dim_slots unknown */
    int excluded;            /* allowed nodes marked unschedulable for this job */
    int first_excluded;      /* the first of them, or -1 */
    int unsched;             /* allowed nodes marked by an operator */
    int first_unsched;       /* the first of them, or -1 */
    int blocked;             /* nodes left out as reserved for a higher standard job */
    int blocker;             /* order position of the first such job, or -1 */
};

struct fit_key {
    const bool *allowed, *excluded;
    int64_t demand[DIMS];
    unsigned version; /* 0 for capacity, which never changes */
    unsigned char flags, p, q, src;
};

struct fit_entry {
    bool used;
    struct fit_key key;
    struct fit fit;
};

#define FIT_CACHE_BITS 9
#define FIT_CACHE (1u << FIT_CACHE_BITS)

/* Totals over the nodes of one bucket. */
struct bucket {
    int count;
    int64_t free[DIMS];            /* max(free, 0) per node */
    int64_t held[LVL_COUNT][DIMS]; /* held by preemptible idle jobs, by priority */
};

/* Slots of one worker shape over the nodes of one bucket. */
struct shape_fit {
    int64_t slots;                  /* in free capacity */
    int64_t dim_slots[DIMS];        /* in free capacity, one dimension alone */
    int64_t reclaim[LVL_COUNT + 1]; /* [q]: with the victims below level q freed (q = 2..4) */
};

/* A set of nodes waiting jobs may use (a pool's allowed array; NULL: every node). */
struct node_set {
    const bool *allowed;
    int unsched_count, first_unsched; /* nodes of the set marked by an operator */
    int first_blocker_at[LVL_COUNT];  /* the first job reserving a node of the set, per level */
    struct bucket bucket[BUCKETS];
};

/* A worker shape on a node set, with its slots per bucket. */
struct shape {
    int set;
    int64_t d[DIMS];
    double inv[DIMS];
    struct shape_fit fit[BUCKETS];
    struct fit cap[4]; /* capacity fits, by F_UNSCHED and F_DIMS: they never change */
    bool cap_known[4];
};

struct pass {
    const struct sched_node *nodes;
    size_t n;
    struct sched_job *jobs;
    size_t job_count;

    int64_t *cap;         /* n × DIMS */
    int64_t *free;        /* n × DIMS, negative if running jobs overcommit a node */
    int64_t *held;        /* n × LVL_COUNT × DIMS */
    int *blocker;         /* order position of the job reserving the node, or -1 */
    unsigned char *state; /* NODE_UNSCHED | the reserving job's level << 1 */

    struct node_set sets[SETS_MAX];
    size_t set_count;
    unsigned char *in_sets; /* per node: bit s when sets[s] has it */
    struct shape shapes[SHAPES_MAX];
    size_t shape_count;
    int shape_table[SHAPE_TABLE];
    int *set_of;   /* per waiting job with no node excluded: its node set, or -1 */
    int *shape_of; /* per waiting job without exclusions: its shape, or -1 */

    int *order; /* waiting jobs, in the order of the pass */
    size_t waiting;
    int *victims; /* running preemptible idle jobs, preferred victim first */
    size_t victim_count;
    int victims_left[LVL_COUNT];
    int *chosen;

    int *sorted; /* node indices in placement order (see key_cmp), but detached ones */
    size_t sorted_count;
    unsigned char *detached; /* changed by a preemption trial, out of totals and order */
    int *touched;            /* the detached nodes */
    size_t touched_count;
    int *cand; /* placement candidates, best first: node, and workers it can take */
    int64_t *cand_slots;
    size_t cand_count;

    unsigned version; /* bumped on every change of free, held or reservations */
    struct fit_entry *cache;
};

/* The level of a priority: UNSPECIFIED (and anything unknown below) is NORMAL. */
static inline int level(enum priority p)
{
    if (p >= PRIORITY_HIGHEST)
        return LVL_HIGHEST;
    if (p == PRIORITY_HIGH)
        return LVL_HIGH;
    return LVL_NORMAL;
}

/* What one worker of job needs; memory capped at INT32_MAX MiB so that r × d never overflows. */
static inline void demand_of(const struct sched_job *job, int64_t d[DIMS])
{
    int64_t mem = job->per_worker.mem_mib;
    d[DIM_GPU] = job->per_worker.gpus > 0 ? job->per_worker.gpus : 0;
    d[DIM_CPU] = job->per_worker.cpus > 0 ? job->per_worker.cpus : 0;
    d[DIM_MEM] = mem <= 0 ? 0 : mem < INT32_MAX ? mem : INT32_MAX;
}

static inline int64_t *at(int64_t *arr, size_t i)
{
    return arr + i * DIMS;
}

static inline int64_t *held_at(const struct pass *ps, int lvl, size_t i)
{
    return ps->held + (i * LVL_COUNT + (size_t)lvl) * DIMS;
}

static inline int64_t max0(int64_t v)
{
    return v > 0 ? v : 0;
}

/* a / d (a >= d > 0) without a division: d's reciprocal, then the exact quotient. */
static inline int64_t quot(int64_t a, int64_t d, double inv)
{
    int64_t q = (int64_t)((double)a * inv);
    if (q * d > a)
        q--;
    else if ((q + 1) * d <= a)
        q++;
    return q < SLOT_CAP ? q : SLOT_CAP;
}

static void inverse_of(const int64_t d[DIMS], double inv[DIMS])
{
    for (int k = 0; k < DIMS; k++)
        inv[k] = d[k] > 0 ? 1.0 / (double)d[k] : 0.0;
}

/* How many workers of demand d fit in amounts a (>= 0); dims gets each dimension's own count. */
static inline int64_t slots_in(const int64_t a[DIMS], const int64_t d[DIMS], const double inv[DIMS],
                               int64_t dims[DIMS])
{
    int64_t s = SLOT_CAP;
    for (int k = 0; k < DIMS; k++) {
        int64_t t = d[k] == 0 ? SLOT_CAP : a[k] < d[k] ? 0 : quot(a[k], d[k], inv[k]);
        if (dims)
            dims[k] = t;
        if (t < s)
            s = t;
    }
    return s;
}

static inline int bucket_of(const struct pass *ps, size_t i)
{
    return (ps->state[i] & NODE_UNSCHED) ? BUCKET_UNSCHED : STATE_LVL(ps->state[i]);
}

/* What node i adds to its buckets: its amounts and, per shape on a set it is in, its slots. */
struct contrib {
    int64_t free[DIMS];
    int64_t held[LVL_COUNT][DIMS];
    int64_t slots[SHAPES_MAX][LVL_ANY + 1]; /* [1]: in free capacity; [q]: victims below q freed */
    int64_t dims[SHAPES_MAX][DIMS];
};

/* May job use node i, leaving out what flags say (reservations by levels above p)? */
static inline bool node_ok(const struct pass *ps, const struct sched_job *job, unsigned flags,
                           int p, size_t i)
{
    if (job->allowed && !job->allowed[i])
        return false;
    if ((flags & F_EXCL) && job->excluded && job->excluded[i])
        return false;
    if ((flags & F_UNSCHED) && (ps->state[i] & NODE_UNSCHED))
        return false;
    if ((flags & F_BLOCK) && STATE_LVL(ps->state[i]) > p)
        return false;
    return true;
}

/* Workers of demand d that node i's free capacity takes now. */
static inline int64_t node_slots(const struct pass *ps, size_t i, const int64_t d[DIMS],
                                 const double inv[DIMS])
{
    int64_t a[DIMS];
    for (int k = 0; k < DIMS; k++)
        a[k] = max0(ps->free[i * DIMS + (size_t)k]);
    return slots_in(a, d, inv, NULL);
}

/*
 * The placement order of the nodes: by free GPUs, then free CPUs, then index
 * (packing takes it forwards; spreading backwards, lowest index first among
 * equals). Kept sorted as capacity changes, so that placing a job looks at
 * the few best nodes instead of all of them.
 */
static inline int key_cmp(const struct pass *ps, int64_t g, int64_t c, size_t i, size_t j)
{
    const int64_t *f = ps->free + j * DIMS;
    if (g != f[DIM_GPU])
        return g < f[DIM_GPU] ? -1 : 1;
    if (c != f[DIM_CPU])
        return c < f[DIM_CPU] ? -1 : 1;
    return (i > j) - (i < j);
}

/* The first position in sorted[lo, hi) whose node does not come before (g, c, i). */
static inline size_t lower_bound(const struct pass *ps, size_t lo, size_t hi, int64_t g, int64_t c,
                                 size_t i)
{
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (key_cmp(ps, g, c, i, (size_t)ps->sorted[mid]) > 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static inline uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15u + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdu;
}

/* sched_fit.c: node state and the bucket totals */
void sched_node_contrib(const struct pass *ps, size_t i, struct contrib *c);
void sched_bucket_apply(struct pass *ps, size_t i, int b, const struct contrib *c, int sign);
void sched_bucket_account(struct pass *ps, size_t i, int sign);
int sched_node_key_cmp(const void *a, const void *b, void *arg);
void sched_node_use(struct pass *ps, size_t i, const int64_t d[DIMS], int64_t count);
void sched_node_detach(struct pass *ps, size_t i);
void sched_nodes_attach(struct pass *ps);
/* sched_fit.c: fits */
void sched_scan(const struct pass *ps, const struct sched_job *job, const int64_t d[DIMS],
                unsigned flags, int p, int q, enum fit_src src, struct fit *f);
void sched_fit_get(struct pass *ps, const struct sched_job *job, const int64_t d[DIMS],
                   unsigned flags, int p, int q, enum fit_src src, struct fit *f);

/* sched_place.c: schedules the waiting job at position pos of the order */
void sched_schedule_one(struct pass *ps, size_t pos);

#endif
