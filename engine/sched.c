/*
 * sched: one scheduling pass of ENGINE.md §Scheduling, as a pure function.
 *
 * trainjobd's scheduler calls sched_pass whenever capacity or the queue
 * changes (a job submitted, finished, stopped, a node marked), with every
 * node and every job that holds or wants capacity; it then stops the jobs
 * marked SCHED_PREEMPT, starts those marked SCHED_PLACE and shows the reason
 * of those that wait. See sched.h for the contract.
 *
 * Workers of one job are identical, so a gang of r workers fits a set of
 * nodes exactly when the sum over those nodes of "workers this node can take"
 * (its slots) reaches r; placement then only chooses among such nodes.
 *
 * A pass owns only scratch memory, allocated once per call:
 *   - per node: free capacity (capacity minus what running jobs hold), what
 *     running preemptible idle jobs hold there by priority (what preemption
 *     could give back), and which blocked standard job reserves the node;
 *   - the nodes sorted by free GPUs then CPUs, kept sorted as capacity
 *     changes: placing a job looks at its best few nodes, not at all of them;
 *   - for each node set the waiting jobs name (a pool's allowed array, or
 *     NULL for every node), totals of the above over the set's nodes grouped
 *     in buckets (by the level of the job reserving them; operator-marked
 *     nodes apart), and for each worker shape on the set, its slots per
 *     bucket, in free capacity and with victims freed — all kept in step
 *     with every change. A job then learns whether it fits in O(1), and only
 *     a job that fits costs a walk (to choose where its workers go);
 *   - for jobs with exclusions, or beyond the sets and shapes tracked, a
 *     small cache of fits valid until the next change of capacity.
 *
 * sched_pass_added decides jobs submitted after a pass that placed and
 * preempted nothing from that pass's running and reserving jobs alone (the
 * engine keeps those): what a request costs then depends on what it added,
 * not on how many jobs wait.
 */
#include "engine/sched.h"

#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

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
static int level(enum priority p)
{
    if (p >= PRIORITY_HIGHEST)
        return LVL_HIGHEST;
    if (p == PRIORITY_HIGH)
        return LVL_HIGH;
    return LVL_NORMAL;
}

static const char *level_name(int lvl)
{
    return enum_name(&priority_names, lvl);
}

/* What one worker of job needs; memory capped at INT32_MAX MiB so that r × d never overflows. */
static void demand_of(const struct sched_job *job, int64_t d[DIMS])
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

/* ---- node state and the bucket totals ---- */

static int bucket_of(const struct pass *ps, size_t i)
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

static void node_contrib(const struct pass *ps, size_t i, struct contrib *c)
{
    /* amounts with the victims below level q freed: reclaim[q]; reclaim[1] is what is free */
    int64_t reclaim[LVL_ANY + 1][DIMS], v[DIMS];
    bool fresh[LVL_ANY + 1] = {false};
    for (int k = 0; k < DIMS; k++) {
        v[k] = at(ps->free, i)[k];
        c->free[k] = reclaim[1][k] = max0(v[k]);
    }
    for (int l = LVL_NORMAL; l < LVL_COUNT; l++) {
        const int64_t *h = held_at(ps, l, i);
        for (int k = 0; k < DIMS; k++) {
            c->held[l][k] = h[k];
            fresh[l + 1] |= h[k] != 0;
            v[k] += h[k];
            reclaim[l + 1][k] = max0(v[k]);
        }
    }
    for (size_t s = 0; s < ps->shape_count; s++) {
        const struct shape *sh = &ps->shapes[s];
        if (!((ps->in_sets[i] >> sh->set) & 1))
            continue;
        c->slots[s][1] = slots_in(reclaim[1], sh->d, sh->inv, c->dims[s]);
        for (int q = LVL_NORMAL + 1; q <= LVL_ANY; q++)
            c->slots[s][q] =
                fresh[q] ? slots_in(reclaim[q], sh->d, sh->inv, NULL) : c->slots[s][q - 1];
    }
}

/* Adds (sign 1) or removes (sign -1) node i's contribution c to bucket b of its sets. */
static void bucket_apply(struct pass *ps, size_t i, int b, const struct contrib *c, int sign)
{
    unsigned in = ps->in_sets[i];
    for (size_t s = 0; s < ps->set_count; s++) {
        if (!((in >> s) & 1))
            continue;
        struct bucket *bk = &ps->sets[s].bucket[b];
        bk->count += sign;
        for (int k = 0; k < DIMS; k++)
            bk->free[k] += sign * c->free[k];
        for (int l = LVL_NORMAL; l < LVL_COUNT; l++)
            for (int k = 0; k < DIMS; k++)
                bk->held[l][k] += sign * c->held[l][k];
    }
    for (size_t s = 0; s < ps->shape_count; s++) {
        if (!((in >> ps->shapes[s].set) & 1))
            continue;
        struct shape_fit *sf = &ps->shapes[s].fit[b];
        sf->slots += sign * c->slots[s][1];
        for (int k = 0; k < DIMS; k++)
            sf->dim_slots[k] += sign * c->dims[s][k];
        for (int q = LVL_NORMAL + 1; q <= LVL_ANY; q++)
            sf->reclaim[q] += sign * c->slots[s][q];
    }
}

/* Adds (sign 1) or removes (sign -1) node i's state from its bucket's totals and shape fits. */
static void bucket_account(struct pass *ps, size_t i, int sign)
{
    struct contrib c;
    node_contrib(ps, i, &c);
    bucket_apply(ps, i, bucket_of(ps, i), &c, sign);
}

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
static int64_t node_slots(const struct pass *ps, size_t i, const int64_t d[DIMS],
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
static int key_cmp(const struct pass *ps, int64_t g, int64_t c, size_t i, size_t j)
{
    const int64_t *f = ps->free + j * DIMS;
    if (g != f[DIM_GPU])
        return g < f[DIM_GPU] ? -1 : 1;
    if (c != f[DIM_CPU])
        return c < f[DIM_CPU] ? -1 : 1;
    return (i > j) - (i < j);
}

/* The first position in sorted[lo, hi) whose node does not come before (g, c, i). */
static size_t lower_bound(const struct pass *ps, size_t lo, size_t hi, int64_t g, int64_t c,
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

/* Takes node i out of the order (before its free capacity changes)... */
static void order_remove(struct pass *ps, size_t i)
{
    const int64_t *f = at(ps->free, i);
    size_t pos = lower_bound(ps, 0, ps->sorted_count, f[DIM_GPU], f[DIM_CPU], i);
    ps->sorted_count--;
    memmove(ps->sorted + pos, ps->sorted + pos + 1, (ps->sorted_count - pos) * sizeof *ps->sorted);
}

/* ...and puts it back where its new free capacity goes. */
static void order_insert(struct pass *ps, size_t i)
{
    const int64_t *f = at(ps->free, i);
    size_t pos = lower_bound(ps, 0, ps->sorted_count, f[DIM_GPU], f[DIM_CPU], i);
    memmove(ps->sorted + pos + 1, ps->sorted + pos, (ps->sorted_count - pos) * sizeof *ps->sorted);
    ps->sorted[pos] = (int)i;
    ps->sorted_count++;
}

/* qsort_r's comparison for the first sorting of the node order. */
static int node_key_cmp(const void *a, const void *b, void *arg)
{
    const struct pass *ps = arg;
    const int *ia = a, *ib = b;
    size_t i = (size_t)*ia;
    const int64_t *f = ps->free + i * DIMS;
    return key_cmp(ps, f[DIM_GPU], f[DIM_CPU], i, (size_t)*ib);
}

/* Takes count workers of demand d from node i's free capacity (a negative count gives back). */
static void node_use(struct pass *ps, size_t i, const int64_t d[DIMS], int64_t count)
{
    bucket_account(ps, i, -1);
    order_remove(ps, i);
    for (int k = 0; k < DIMS; k++)
        at(ps->free, i)[k] -= count * d[k];
    order_insert(ps, i);
    bucket_account(ps, i, 1);
}

/*
 * A preemption trial frees and takes back victims' workers many times over:
 * the nodes it changes leave the totals and the order on the first change
 * and come back once, when the trial is over (nodes_attach).
 */
static void node_detach(struct pass *ps, size_t i)
{
    if (ps->detached[i])
        return;
    ps->detached[i] = 1;
    bucket_account(ps, i, -1);
    order_remove(ps, i);
    ps->touched[ps->touched_count++] = (int)i;
}

/* Ends a preemption trial: the nodes it changed rejoin the totals and the order. */
static void nodes_attach(struct pass *ps)
{
    for (size_t t = 0; t < ps->touched_count; t++) {
        size_t i = (size_t)ps->touched[t];
        order_insert(ps, i);
        bucket_account(ps, i, 1);
        ps->detached[i] = 0;
    }
    ps->touched_count = 0;
    ps->version++;
}

/* ---- fits ---- */

/* Counts how workers of demand d fit on job's nodes, reading src, leaving out what flags say. */
static void scan(const struct pass *ps, const struct sched_job *job, const int64_t d[DIMS],
                 unsigned flags, int p, int q, enum fit_src src, struct fit *f)
{
    const int64_t *amounts = src == SRC_CAP ? ps->cap : ps->free;
    double inv[DIMS];
    inverse_of(d, inv);
    memset(f, 0, sizeof *f);
    f->first_excluded = f->first_unsched = f->blocker = -1;
    for (size_t i = 0; i < ps->n; i++) {
        if (job->allowed && !job->allowed[i])
            continue;
        unsigned st = ps->state[i];
        if (job->excluded && job->excluded[i]) {
            if (f->excluded++ == 0)
                f->first_excluded = (int)i;
            if (flags & F_EXCL)
                continue;
        }
        if (st & NODE_UNSCHED) {
            if (f->unsched++ == 0)
                f->first_unsched = (int)i;
            if (flags & F_UNSCHED)
                continue;
        }
        if ((flags & F_BLOCK) && STATE_LVL(st) > p) {
            if (f->blocked++ == 0 || ps->blocker[i] < f->blocker)
                f->blocker = ps->blocker[i];
            continue;
        }
        int64_t a[DIMS], dims[DIMS];
        for (int k = 0; k < DIMS; k++) {
            int64_t v = amounts[i * DIMS + (size_t)k];
            if (src == SRC_RECLAIM)
                for (int l = LVL_NORMAL; l < q; l++)
                    v += held_at(ps, l, i)[k];
            a[k] = max0(v);
            f->total[k] += a[k];
        }
        f->slots += slots_in(a, d, inv, dims);
        if (flags & F_DIMS)
            for (int k = 0; k < DIMS; k++)
                f->dim_slots[k] += dims[k];
    }
}

/* Does the total demand of r workers of d exceed total in some dimension? */
static bool short_of(const int64_t d[DIMS], int r, const int64_t total[DIMS])
{
    for (int k = 0; k < DIMS; k++)
        if (d[k] * r > total[k])
            return true;
    return false;
}

/*
 * For a job on a tracked node set, from the set's bucket totals: with its
 * shape tracked too (shape >= 0), the exact fit; otherwise the totals only.
 * Returns whether f is the answer: exact, or short of the totals (then it
 * cannot fit).
 */
static bool fit_from_buckets(const struct pass *ps, const struct sched_job *job, int set, int shape,
                             const int64_t d[DIMS], unsigned flags, int p, int q, enum fit_src src,
                             struct fit *f)
{
    const struct node_set *ns = &ps->sets[set];
    memset(f, 0, sizeof *f);
    f->first_excluded = f->blocker = -1;
    f->unsched = ns->unsched_count;
    f->first_unsched = ns->first_unsched;
    for (int b = 0; b < BUCKETS; b++) {
        const struct bucket *bk = &ns->bucket[b];
        if (b == BUCKET_UNSCHED && (flags & F_UNSCHED))
            continue;
        if (b != BUCKET_UNSCHED && (flags & F_BLOCK) && b > p) {
            if (bk->count > 0) /* the highest level reserved first: its first job wins */
                f->blocker = ns->first_blocker_at[b];
            f->blocked += bk->count;
            continue;
        }
        for (int k = 0; k < DIMS; k++) {
            f->total[k] += bk->free[k];
            if (src == SRC_RECLAIM)
                for (int l = LVL_NORMAL; l < q; l++)
                    f->total[k] += bk->held[l][k];
        }
        if (shape < 0)
            continue;
        const struct shape_fit *sf = &ps->shapes[shape].fit[b];
        f->slots += src == SRC_RECLAIM ? sf->reclaim[q] : sf->slots;
        for (int k = 0; k < DIMS; k++)
            f->dim_slots[k] += sf->dim_slots[k];
    }
    if (shape >= 0)
        return true;
    f->totals_only = true;
    return short_of(d, job->replicas, f->total);
}

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15u + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdu;
}

/* The cache key of a fit; what flags make irrelevant is zeroed so that more fits match. */
static void key_of(const struct pass *ps, const struct sched_job *job, const int64_t d[DIMS],
                   unsigned flags, int p, int q, enum fit_src src, struct fit_key *key)
{
    memset(key, 0, sizeof *key);
    key->allowed = job->allowed;
    key->excluded = job->excluded;
    memcpy(key->demand, d, sizeof key->demand);
    key->version = src == SRC_CAP ? 0 : ps->version;
    key->flags = (unsigned char)flags;
    key->p = (unsigned char)((flags & F_BLOCK) ? p : 0);
    key->q = (unsigned char)(src == SRC_RECLAIM ? q : 0);
    key->src = (unsigned char)src;
}

static bool key_eq(const struct fit_key *a, const struct fit_key *b)
{
    return a->allowed == b->allowed && a->excluded == b->excluded && a->demand[0] == b->demand[0] &&
           a->demand[1] == b->demand[1] && a->demand[2] == b->demand[2] &&
           a->version == b->version && a->flags == b->flags && a->p == b->p && a->q == b->q &&
           a->src == b->src;
}

/* The cache entry for key k: direct-mapped, a collision just replaces. */
static struct fit_entry *cache_slot(struct pass *ps, const struct fit_key *k)
{
    uint64_t h = mix(0, (uint64_t)(uintptr_t)k->allowed);
    h = mix(h, (uint64_t)(uintptr_t)k->excluded);
    for (int i = 0; i < DIMS; i++)
        h = mix(h, (uint64_t)k->demand[i]);
    h = mix(h, k->version);
    h = mix(h, (uint64_t)k->flags | (uint64_t)k->p << 8 | (uint64_t)k->q << 16 |
                   (uint64_t)k->src << 24);
    return &ps->cache[h >> (64 - FIT_CACHE_BITS)];
}

/* The fit of job's shape on its nodes: from the buckets, the cache, or a walk over the nodes. */
static void fit_get(struct pass *ps, const struct sched_job *job, const int64_t d[DIMS],
                    unsigned flags, int p, int q, enum fit_src src, struct fit *f)
{
    size_t j = (size_t)(job - ps->jobs);
    int set = ps->set_of[j];
    int shape = set >= 0 ? ps->shape_of[j] : -1;
    if (src == SRC_CAP && shape >= 0) { /* capacity never changes: once per shape */
        struct shape *sh = &ps->shapes[shape];
        int v = ((flags & F_UNSCHED) ? 1 : 0) | ((flags & F_DIMS) ? 2 : 0);
        if (!sh->cap_known[v]) {
            scan(ps, job, d, flags, p, q, src, &sh->cap[v]);
            sh->cap_known[v] = true;
        }
        *f = sh->cap[v];
        return;
    }
    if (src != SRC_CAP && set >= 0 && fit_from_buckets(ps, job, set, shape, d, flags, p, q, src, f))
        return;
    struct fit_key key;
    key_of(ps, job, d, flags, p, q, src, &key);
    struct fit_entry *e = cache_slot(ps, &key);
    if (e->used && key_eq(&e->key, &key)) {
        *f = e->fit;
        return;
    }
    scan(ps, job, d, flags, p, q, src, f);
    e->used = true;
    e->key = key;
    e->fit = *f;
}

/* ---- placement ---- */

/* Is node a a better choice than node b: packing, fewer free GPUs then CPUs; spreading, more. */
static bool better(const struct pass *ps, int a, int b, bool spread)
{
    const int64_t *fa = ps->free + (size_t)a * DIMS, *fb = ps->free + (size_t)b * DIMS;
    for (int k = DIM_GPU; k <= DIM_CPU; k++)
        if (fa[k] != fb[k])
            return spread ? fa[k] > fb[k] : fa[k] < fb[k];
    return a < b;
}

/* Lists node i as a candidate if the job may use it and it takes a worker; returns how many. */
static int64_t consider(struct pass *ps, const struct sched_job *job, const int64_t d[DIMS],
                        const double inv[DIMS], unsigned flags, int p, size_t i)
{
    if (!node_ok(ps, job, flags, p, i))
        return 0;
    int64_t s = node_slots(ps, i, d, inv);
    if (s == 0)
        return 0;
    if (s > job->replicas)
        s = job->replicas;
    ps->cand[ps->cand_count] = (int)i;
    ps->cand_slots[ps->cand_count++] = s;
    return s;
}

/*
 * Lists, best first by the job's scoring strategy, the nodes that take at
 * least one worker — only the best min(replicas, nodes) of them: packing
 * fills the best node, then the next; spreading puts each worker on the
 * best node left, and a node outside that many never beats the best unused
 * one among them. Walks the node order from its best end, and stops there.
 * Returns the workers the listed nodes take (each counted up to replicas):
 * at least replicas when the job fits.
 */
static int64_t collect(struct pass *ps, const struct sched_job *job, const int64_t d[DIMS],
                       unsigned flags, int p)
{
    const int64_t r = job->replicas;
    const size_t keep = (size_t)r < ps->n ? (size_t)r : ps->n;
    double inv[DIMS];
    int64_t total = 0;

    inverse_of(d, inv);
    ps->cand_count = 0;
    if (job->scoring != SCORING_LEAST_ALLOCATED) {
        /* packing: forwards from the first node with the GPUs a worker needs */
        size_t pos = lower_bound(ps, 0, ps->sorted_count, d[DIM_GPU] > 0 ? d[DIM_GPU] : INT64_MIN,
                                 INT64_MIN, 0);
        for (; pos < ps->sorted_count && ps->cand_count < keep; pos++)
            total += consider(ps, job, d, inv, flags, p, (size_t)ps->sorted[pos]);
        return total;
    }
    /* spreading: backwards by runs of equal free GPUs and CPUs, each run by index */
    for (size_t hi = ps->sorted_count; hi > 0 && ps->cand_count < keep;) {
        const int64_t *f = at(ps->free, (size_t)ps->sorted[hi - 1]);
        if (d[DIM_GPU] > 0 && f[DIM_GPU] < d[DIM_GPU])
            break;
        size_t lo = lower_bound(ps, 0, hi, f[DIM_GPU], f[DIM_CPU], 0);
        for (size_t pos = lo; pos < hi && ps->cand_count < keep; pos++)
            total += consider(ps, job, d, inv, flags, p, (size_t)ps->sorted[pos]);
        hi = lo;
    }
    return total;
}

/* Puts the workers on the listed candidates, each on the best one left, taking their capacity. */
static void place_on_candidates(struct pass *ps, struct sched_job *job, const int64_t d[DIMS])
{
    bool spread = job->scoring == SCORING_LEAST_ALLOCATED;
    int w = 0;
    while (w < job->replicas) {
        size_t best = SIZE_MAX;
        for (size_t c = 0; c < ps->cand_count; c++)
            if (ps->cand_slots[c] > 0 &&
                (best == SIZE_MAX || better(ps, ps->cand[c], ps->cand[best], spread)))
                best = c;
        if (best == SIZE_MAX)
            break; /* cannot happen: the candidates take every worker */
        /* packing keeps choosing the node it just used (it only gets fuller): fill it */
        int64_t take = spread ? 1 : ps->cand_slots[best];
        if (take > job->replicas - w)
            take = job->replicas - w;
        for (int64_t t = 0; t < take; t++)
            job->placement[w++] = ps->cand[best];
        ps->cand_slots[best] -= take;
        node_use(ps, (size_t)ps->cand[best], d, take);
    }
    job->verdict = SCHED_PLACE;
    job->reason[0] = '\0';
    ps->version++;
}

/* Places the job in free capacity if it fits; otherwise f says how it falls short. */
static bool place_free(struct pass *ps, struct sched_job *job, const int64_t d[DIMS],
                       unsigned flags, int p, struct fit *f)
{
    fit_get(ps, job, d, flags, p, 0, SRC_FREE, f);
    if (f->slots < job->replicas || collect(ps, job, d, flags, p) < job->replicas)
        return false;
    place_on_candidates(ps, job, d);
    return true;
}

/* ---- reasons ---- */

/* A reason being written into a job's buffer: appends stop at its end. */
struct text {
    char *buf;
    size_t size, len;
};

static struct text text_of(struct sched_job *job)
{
    job->reason[0] = '\0';
    return (struct text){job->reason, sizeof job->reason, 0};
}

static void put(struct text *t, const char *s)
{
    while (*s && t->len + 1 < t->size)
        t->buf[t->len++] = *s++;
    t->buf[t->len] = '\0';
}

static void put_int(struct text *t, int64_t v)
{
    char digits[24];
    size_t n = 0;
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    do
        digits[n++] = (char)('0' + u % 10);
    while ((u /= 10) > 0);
    if (v < 0)
        digits[n++] = '-';
    while (n > 0 && t->len + 1 < t->size)
        t->buf[t->len++] = digits[--n];
    t->buf[t->len] = '\0';
}

/* "8 GPUs", "1 CPU", "64 GiB memory"; bare: "8", "1", "64 GiB". */
static void put_amount(struct text *t, int dim, int64_t v, bool bare)
{
    if (dim == DIM_MEM) {
        put_int(t, v % 1024 == 0 ? v / 1024 : v);
        put(t, v % 1024 == 0 ? " GiB" : " MiB");
        if (!bare)
            put(t, " memory");
        return;
    }
    put_int(t, v);
    if (!bare) {
        put(t, dim == DIM_GPU ? " GPU" : " CPU");
        put(t, v == 1 ? "" : "s");
    }
}

/* "2 workers of 8 GPUs": in dimension dim alone, or every dimension asked for (dim -1). */
static void put_workers(struct text *t, int r, const int64_t d[DIMS], int dim)
{
    bool any = false;
    put_int(t, r);
    put(t, r == 1 ? " worker of " : " workers of ");
    for (int k = 0; k < DIMS; k++) {
        if ((dim >= 0 && k != dim) || (dim < 0 && d[k] == 0))
            continue;
        put(t, any ? " + " : "");
        put_amount(t, k, d[k], false);
        any = true;
    }
    if (!any)
        put(t, "no resources");
}

/* The first dimension where r workers of d need more than total, or -1. */
static int short_dim(const int64_t d[DIMS], int r, const int64_t total[DIMS])
{
    for (int k = 0; k < DIMS; k++)
        if (d[k] * r > total[k])
            return k;
    return -1;
}

/* The one dimension that alone keeps fewer than r workers from fitting, or -1. */
static int binding_dim(const int64_t d[DIMS], int r, const struct fit *f)
{
    for (int k = 0; k < DIMS; k++)
        if (d[k] > 0 && f->dim_slots[k] < r)
            return k;
    return -1;
}

/* "preempted by standard job train-a", "preempted by HIGH idle job idle-b" */
static void preempted_reason(struct sched_job *victim, const struct sched_job *by)
{
    struct text t = text_of(victim);
    put(&t, "preempted by ");
    if (by->idle) {
        put(&t, level_name(level(by->priority)));
        put(&t, " idle job ");
    } else {
        put(&t, "standard job ");
    }
    put(&t, by->name);
}

/* "behind HIGH job train-a" */
static void behind_reason(struct sched_job *job, const struct sched_job *blocker)
{
    struct text t = text_of(job);
    put(&t, "behind ");
    put(&t, level_name(level(blocker->priority)));
    put(&t, " job ");
    put(&t, blocker->name);
}

/* "node sim-n2 marked unschedulable for this job" (or by an operator) */
static void marked_reason(const struct pass *ps, struct sched_job *job, const struct fit *pool,
                          bool by_job)
{
    int node = by_job ? pool->first_excluded : pool->first_unsched;
    int count = by_job ? pool->excluded : pool->unsched;
    struct text t = text_of(job);
    if (node < 0) {
        put(&t, "no usable node");
        return;
    }
    put(&t, count > 1 ? "nodes " : "node ");
    put(&t, ps->nodes[node].name);
    if (count > 1) {
        put(&t, " and ");
        put_int(&t, count - 1);
        put(&t, " more");
    }
    put(&t, by_job ? " marked unschedulable for this job" : " marked unschedulable by an operator");
}

/*
 * "needs 16 GPUs, 8 free", or fragmented: "needs 2 workers of 8 GPUs; no node
 * has 8 GPUs free" / "…; free capacity fits 1". With pool: the same against
 * the capacity of the job's pool ("needs more than the pool has: 40 GPUs,
 * pool has 32").
 */
static void shortage_reason(struct sched_job *job, const int64_t d[DIMS], const struct fit *f,
                            bool pool)
{
    int r = job->replicas;
    int k = short_dim(d, r, f->total);
    struct text t = text_of(job);
    put(&t, pool ? "needs more than the pool has: " : "needs ");
    if (k >= 0) {
        put_amount(&t, k, d[k] * r, false);
        put(&t, pool ? ", pool has " : ", ");
        put_amount(&t, k, f->total[k], true);
        put(&t, pool ? "" : " free");
        return;
    }
    int b = binding_dim(d, r, f);
    put_workers(&t, r, d, b);
    if (f->slots == 0) {
        put(&t, "; no node has ");
        if (b >= 0)
            put_amount(&t, b, d[b], false);
        else
            put(&t, "that much");
        put(&t, pool ? "" : " free");
    } else {
        put(&t, pool ? "; the pool fits " : "; free capacity fits ");
        put_int(&t, f->slots);
    }
}

/* ---- preemption ---- */

/* Does victim v hold capacity on a node the job could use? */
static bool victim_helps(const struct pass *ps, const struct sched_job *v,
                         const struct sched_job *job, unsigned flags, int p)
{
    for (int w = 0; w < v->replicas; w++) {
        int k = v->placement[w];
        if (k >= 0 && (size_t)k < ps->n && node_ok(ps, job, flags, p, (size_t)k))
            return true;
    }
    return false;
}

/*
 * Frees (sign 1) or takes back (sign -1) victim v's workers: those on nodes
 * the job could use (usable) or those on the other nodes, detaching them.
 * Returns the change in the workers of demand d that the job's nodes take.
 */
static int64_t victim_release(struct pass *ps, const struct sched_job *v,
                              const struct sched_job *job, const int64_t d[DIMS], unsigned flags,
                              int p, int sign, bool usable)
{
    int64_t vd[DIMS], delta = 0;
    double inv[DIMS];
    demand_of(v, vd);
    inverse_of(d, inv);
    int lvl = level(v->priority);
    for (int w = 0; w < v->replicas; w++) {
        int k = v->placement[w];
        if (k < 0 || (size_t)k >= ps->n || node_ok(ps, job, flags, p, (size_t)k) != usable)
            continue;
        int64_t before = usable ? node_slots(ps, (size_t)k, d, inv) : 0;
        node_detach(ps, (size_t)k);
        for (int x = 0; x < DIMS; x++) {
            at(ps->free, (size_t)k)[x] += sign * vd[x];
            held_at(ps, lvl, (size_t)k)[x] -= sign * vd[x];
        }
        if (usable)
            delta += node_slots(ps, (size_t)k, d, inv) - before;
    }
    return delta;
}

/*
 * Rules 7 and 8: places a waiting job that does not fit in free capacity by
 * preempting running preemptible idle jobs below level q, fewest needed:
 * victims are taken in order (lowest priority, then latest submitted) until
 * the job fits, then every one that turns out unnecessary is given back,
 * latest taken first. Preempts nothing when even every victim is not enough.
 */
static bool place_preempting(struct pass *ps, struct sched_job *job, const int64_t d[DIMS],
                             unsigned flags, int p, int q)
{
    int left = 0;
    for (int l = LVL_NORMAL; l < q && l < LVL_COUNT; l++)
        left += ps->victims_left[l];
    if (left == 0)
        return false;
    struct fit f;
    fit_get(ps, job, d, flags, p, q, SRC_RECLAIM, &f);
    if (f.slots < job->replicas)
        return false;

    fit_get(ps, job, d, flags, p, 0, SRC_FREE, &f);
    if (f.totals_only) /* short in total: count the slots there are */
        scan(ps, job, d, flags, p, 0, SRC_FREE, &f);
    int64_t have = f.slots;
    size_t chosen = 0;
    for (size_t i = 0; i < ps->victim_count && have < job->replicas; i++) {
        struct sched_job *v = &ps->jobs[ps->victims[i]];
        if (v->verdict == SCHED_PREEMPT || level(v->priority) >= q ||
            !victim_helps(ps, v, job, flags, p))
            continue;
        have += victim_release(ps, v, job, d, flags, p, 1, true);
        ps->chosen[chosen++] = ps->victims[i];
    }
    for (size_t i = chosen > 0 ? chosen - 1 : 0; i-- > 0 && have >= job->replicas;) {
        struct sched_job *v = &ps->jobs[ps->chosen[i]];
        int64_t delta = victim_release(ps, v, job, d, flags, p, -1, true);
        if (have + delta >= job->replicas) {
            have += delta;
            ps->chosen[i] = -1;
        } else {
            victim_release(ps, v, job, d, flags, p, 1, true);
        }
    }
    nodes_attach(ps);
    if (have < job->replicas || collect(ps, job, d, flags, p) < job->replicas) {
        /* cannot happen after the reclaim fit; undo all the same */
        for (size_t i = 0; i < chosen; i++)
            if (ps->chosen[i] >= 0)
                victim_release(ps, &ps->jobs[ps->chosen[i]], job, d, flags, p, -1, true);
        nodes_attach(ps);
        return false;
    }
    /* Commit: the victims stop everywhere, not only on this job's nodes. */
    for (size_t i = 0; i < chosen; i++) {
        if (ps->chosen[i] < 0)
            continue;
        struct sched_job *v = &ps->jobs[ps->chosen[i]];
        victim_release(ps, v, job, d, flags, p, 1, false);
        v->verdict = SCHED_PREEMPT;
        ps->victims_left[level(v->priority)]--;
        preempted_reason(v, job);
    }
    nodes_attach(ps);
    place_on_candidates(ps, job, d);
    return true;
}

/*
 * Writes why a job that could not be placed waits, the most specific reason
 * first: larger than its pool; kept off by marked nodes even on an empty
 * cluster; behind a higher standard job; kept off by marked nodes now; short
 * of free capacity in total; fragmented. Returns whether it can ever fit
 * (only such a standard job reserves nodes: one that can never run must not
 * hold up the jobs below it).
 */
static bool explain(struct pass *ps, struct sched_job *job, const int64_t d[DIMS], unsigned flags,
                    int p, const struct fit *f)
{
    int r = job->replicas;
    struct fit pool, usable, alt;
    fit_get(ps, job, d, 0, 0, 0, SRC_CAP, &pool);
    if (pool.slots < r) {
        if (short_dim(d, r, pool.total) < 0) /* per node, not in total: which dimension? */
            fit_get(ps, job, d, F_DIMS, 0, 0, SRC_CAP, &pool);
        shortage_reason(job, d, &pool, true);
        return false;
    }
    fit_get(ps, job, d, F_EXCL | F_UNSCHED, 0, 0, SRC_CAP, &usable);
    if (usable.slots < r) {
        bool by_job = pool.excluded > 0;
        if (by_job && pool.unsched > 0) { /* both: blame what lifting alone would cure */
            fit_get(ps, job, d, F_UNSCHED, 0, 0, SRC_CAP, &alt);
            by_job = alt.slots >= r;
        }
        marked_reason(ps, job, &pool, by_job);
        return false;
    }
    if (f->blocked > 0 && f->blocker >= 0) {
        behind_reason(job, &ps->jobs[ps->order[f->blocker]]);
        return true;
    }
    if (pool.excluded > 0) {
        fit_get(ps, job, d, flags & ~(unsigned)F_EXCL, p, 0, SRC_FREE, &alt);
        if (alt.slots >= r) {
            marked_reason(ps, job, &pool, true);
            return true;
        }
    }
    if (pool.unsched > 0) {
        fit_get(ps, job, d, flags & ~(unsigned)(F_EXCL | F_UNSCHED), p, 0, SRC_FREE, &alt);
        if (alt.slots >= r) {
            marked_reason(ps, job, &pool, false);
            return true;
        }
    }
    if (short_dim(d, r, f->total) < 0) { /* fragmented: which dimension? */
        fit_get(ps, job, d, flags | F_DIMS, p, 0, SRC_FREE, &alt);
        shortage_reason(job, d, &alt, false);
    } else {
        shortage_reason(job, d, f, false);
    }
    return true;
}

/* Marks the nodes a blocked standard job could use as reserved for it (rule 2). */
static void reserve_nodes(struct pass *ps, size_t pos)
{
    const struct sched_job *job = &ps->jobs[ps->order[pos]];
    int lvl = level(job->priority);
    int set = ps->set_of[ps->order[pos]];
    if (lvl <= LVL_NORMAL || (set >= 0 && ps->sets[set].bucket[0].count == 0))
        return; /* nothing ranks below NORMAL; or each of its nodes is reserved already */
    bool marked = false;
    for (size_t i = 0; i < ps->n; i++) {
        if (ps->blocker[i] >= 0 || !node_ok(ps, job, F_EXCL | F_UNSCHED, 0, i))
            continue;
        struct contrib c; /* the node moves to another bucket, unchanged */
        node_contrib(ps, i, &c);
        bucket_apply(ps, i, bucket_of(ps, i), &c, -1);
        ps->blocker[i] = (int)pos;
        ps->state[i] = (unsigned char)(ps->state[i] | (unsigned)lvl << 1);
        bucket_apply(ps, i, bucket_of(ps, i), &c, 1);
        for (size_t s = 0; s < ps->set_count; s++)
            if (((ps->in_sets[i] >> s) & 1) && ps->sets[s].first_blocker_at[lvl] < 0)
                ps->sets[s].first_blocker_at[lvl] = (int)pos;
        marked = true;
    }
    if (marked) {
        ps->version++;
        ps->jobs[ps->order[pos]].reserved = true;
    }
}

/* Schedules the waiting job at position pos of the order. */
static void schedule_one(struct pass *ps, size_t pos)
{
    struct sched_job *job = &ps->jobs[ps->order[pos]];
    int p = level(job->priority);
    unsigned flags = F_EXCL | F_UNSCHED | (job->idle ? 0u : (unsigned)F_BLOCK);
    int64_t d[DIMS];
    struct fit f;

    if (job->replicas < 1 || !job->placement) {
        struct text t = text_of(job);
        put(&t, job->replicas < 1 ? "has no workers to place" : "no placement buffer");
        return;
    }
    demand_of(job, d);
    if (place_free(ps, job, d, flags, p, &f))
        return;
    /* rule 7: standard jobs may preempt idle ones; rule 8: idle jobs, lower idle ones */
    if (place_preempting(ps, job, d, flags, p, job->idle ? p : LVL_ANY))
        return;
    for (int w = 0; w < job->replicas; w++)
        job->placement[w] = -1;
    if (explain(ps, job, d, flags, p, &f) && !job->idle)
        reserve_nodes(ps, pos);
}

/* ---- the pass ---- */

struct order_key {
    uint64_t seq;
    int64_t gpus, cpus;
    int idx;
    unsigned char idle, lvl;
};

/*
 * The order of a pass (rules 2, 3 and 4). Waiting jobs are taken
 *   1. standard (RESERVED) before idle (SPOT) — rule 4;
 *   2. higher priority first (UNSPECIFIED counts as NORMAL) — rules 2 and 3;
 *   3. then earlier submission (smaller submit_seq);
 *   4. then the smaller total request: replicas × GPUs, then replicas × CPUs;
 *   5. then the index in jobs[], so that the order is total and a pass is
 *      reproducible.
 */
static int order_cmp(const void *pa, const void *pb)
{
    const struct order_key *a = pa, *b = pb;
    if (a->idle != b->idle)
        return a->idle < b->idle ? -1 : 1;
    if (a->lvl != b->lvl)
        return a->lvl > b->lvl ? -1 : 1;
    if (a->seq != b->seq)
        return a->seq < b->seq ? -1 : 1;
    if (a->gpus != b->gpus)
        return a->gpus < b->gpus ? -1 : 1;
    if (a->cpus != b->cpus)
        return a->cpus < b->cpus ? -1 : 1;
    return (a->idx > b->idx) - (a->idx < b->idx);
}

/* Victims: lowest priority first, then the most recently submitted, then index. */
static int victim_cmp(const void *pa, const void *pb)
{
    const struct order_key *a = pa, *b = pb;
    if (a->lvl != b->lvl)
        return a->lvl < b->lvl ? -1 : 1;
    if (a->seq != b->seq)
        return a->seq > b->seq ? -1 : 1;
    return (a->idx > b->idx) - (a->idx < b->idx);
}

static void key_for(const struct sched_job *job, size_t idx, struct order_key *k)
{
    k->seq = job->submit_seq;
    k->gpus = (int64_t)job->replicas * job->per_worker.gpus;
    k->cpus = (int64_t)job->replicas * job->per_worker.cpus;
    k->idx = (int)idx;
    k->idle = job->idle;
    k->lvl = (unsigned char)level(job->priority);
}

/* The class of a waiting job, 0 first: standard before idle, then by level. */
static int order_class(const struct order_key *k)
{
    return (k->idle ? LVL_COUNT : 0) + (LVL_HIGHEST - k->lvl);
}

/*
 * Fills ps->order from the waiting jobs' keys: a counting sort by class, then
 * each class by the rest of order_cmp — which costs only a check when jobs[]
 * comes in submission order, as the engine's store keeps it. tmp holds as many keys.
 */
static void order_waiting(struct pass *ps, const struct order_key *keys, struct order_key *tmp)
{
    size_t start[2 * LVL_COUNT + 1] = {0};
    for (size_t i = 0; i < ps->waiting; i++)
        start[order_class(&keys[i]) + 1]++;
    for (int c = 0; c < 2 * LVL_COUNT; c++)
        start[c + 1] += start[c];
    size_t fill[2 * LVL_COUNT];
    memcpy(fill, start, sizeof fill);
    for (size_t i = 0; i < ps->waiting; i++)
        tmp[fill[order_class(&keys[i])]++] = keys[i];
    for (int c = 0; c < 2 * LVL_COUNT; c++) {
        struct order_key *run = tmp + start[c];
        size_t len = start[c + 1] - start[c];
        for (size_t i = 1; i < len; i++) {
            if (order_cmp(&run[i - 1], &run[i]) > 0) {
                qsort(run, len, sizeof *run, order_cmp);
                break;
            }
        }
    }
    for (size_t i = 0; i < ps->waiting; i++)
        ps->order[i] = tmp[i].idx;
}

/* Does a per-node array mark any of the n nodes? (NULL marks none.) */
static bool marks_any(const bool *marks, size_t n)
{
    return marks && n > 0 && memchr(marks, true, n) != NULL;
}

/*
 * The index of the node set `allowed`, added when new; -1 when SETS_MAX are
 * taken. An array with the same contents as a known one is the same set, so
 * that jobs of a pool share it even when each brings its own copy.
 */
static int set_index(struct pass *ps, const bool *allowed)
{
    for (size_t s = 0; s < ps->set_count; s++)
        if (ps->sets[s].allowed == allowed)
            return (int)s;
    for (size_t s = 0; s < ps->set_count; s++)
        if (allowed && ps->sets[s].allowed && memcmp(ps->sets[s].allowed, allowed, ps->n) == 0)
            return (int)s;
    if (ps->set_count == SETS_MAX)
        return -1;
    struct node_set *ns = &ps->sets[ps->set_count];
    ns->allowed = allowed;
    ns->first_unsched = -1;
    for (int l = 0; l < LVL_COUNT; l++)
        ns->first_blocker_at[l] = -1;
    return (int)ps->set_count++;
}

/* The index of the shape d on node set `set`, added when new; -1 when SHAPES_MAX are taken. */
static int shape_index(struct pass *ps, int set, const int64_t d[DIMS])
{
    uint64_t h =
        mix(mix(mix(mix(0, (uint64_t)set), (uint64_t)d[0]), (uint64_t)d[1]), (uint64_t)d[2]);
    for (size_t probe = 0; probe < SHAPE_TABLE; probe++) {
        int *slot = &ps->shape_table[(h + probe) % SHAPE_TABLE];
        if (*slot < 0) {
            if (ps->shape_count == SHAPES_MAX)
                return -1;
            *slot = (int)ps->shape_count++;
            struct shape *sh = &ps->shapes[*slot];
            sh->set = set;
            memcpy(sh->d, d, sizeof sh->d);
            inverse_of(d, sh->inv);
            return *slot;
        }
        const struct shape *sh = &ps->shapes[*slot];
        if (sh->set == set && memcmp(sh->d, d, sizeof sh->d) == 0)
            return *slot;
    }
    return -1;
}

/* Free and held capacity, the shapes, and both orders, from the nodes and the running jobs. */
static void pass_init(struct pass *ps, struct order_key *keys)
{
    size_t n = ps->n;
    for (size_t i = 0; i < SHAPE_TABLE; i++)
        ps->shape_table[i] = -1;
    for (size_t i = 0; i < n; i++) {
        int64_t *c = at(ps->cap, i);
        c[DIM_GPU] = max0(ps->nodes[i].gpus);
        c[DIM_CPU] = max0(ps->nodes[i].cpus);
        c[DIM_MEM] = ps->nodes[i].mem_mib < MEM_CAP ? max0(ps->nodes[i].mem_mib) : MEM_CAP;
        memcpy(at(ps->free, i), c, DIMS * sizeof *c);
        ps->blocker[i] = -1;
        if (ps->nodes[i].unschedulable)
            ps->state[i] = NODE_UNSCHED;
    }
    for (size_t j = 0; j < ps->job_count; j++) {
        struct sched_job *job = &ps->jobs[j];
        int64_t d[DIMS];
        demand_of(job, d);
        job->reason[0] = '\0';
        job->reserved = false;
        ps->set_of[j] = ps->shape_of[j] = -1;
        if (!job->running) {
            job->verdict = SCHED_WAIT;
            key_for(job, j, &keys[ps->waiting++]);
            if (!marks_any(job->excluded, n) && (ps->set_of[j] = set_index(ps, job->allowed)) >= 0)
                ps->shape_of[j] = shape_index(ps, ps->set_of[j], d);
            continue;
        }
        job->verdict = SCHED_KEEP;
        if (!job->placement)
            continue;
        bool victim = job->idle && job->preemptible;
        int lvl = level(job->priority);
        for (int w = 0; w < job->replicas; w++) {
            int k = job->placement[w];
            if (k < 0 || (size_t)k >= n)
                continue;
            for (int x = 0; x < DIMS; x++) {
                at(ps->free, (size_t)k)[x] -= d[x];
                if (victim)
                    held_at(ps, lvl, (size_t)k)[x] += d[x];
            }
        }
        if (victim) {
            key_for(job, j, &keys[ps->job_count - 1 - ps->victim_count++]);
            ps->victims_left[lvl]++;
        }
    }
    for (size_t i = 0; i < n; i++) {
        for (size_t s = 0; s < ps->set_count; s++) {
            struct node_set *ns = &ps->sets[s];
            if (ns->allowed && !ns->allowed[i])
                continue;
            ps->in_sets[i] = (unsigned char)(ps->in_sets[i] | 1u << s);
            if (ps->nodes[i].unschedulable && ns->unsched_count++ == 0)
                ns->first_unsched = (int)i;
        }
        bucket_account(ps, i, 1);
        ps->sorted[i] = (int)i;
    }
    qsort_r(ps->sorted, n, sizeof *ps->sorted, node_key_cmp, ps);
    ps->sorted_count = n;

    order_waiting(ps, keys, keys + ps->job_count);
    struct order_key *vk = keys + ps->job_count - ps->victim_count;
    qsort(vk, ps->victim_count, sizeof *vk, victim_cmp);
    for (size_t i = 0; i < ps->victim_count; i++)
        ps->victims[i] = vk[i].idx;
}

void sched_pass(const struct sched_node *nodes, size_t node_count, struct sched_job *jobs,
                size_t job_count)
{
    size_t n = node_count, m = job_count;
    /* One block of scratch, widest elements first. */
    size_t i64 = n * DIMS * (2 + LVL_COUNT) + n;
    size_t ints = n + m * 5 + n * 3;
    size_t bytes = sizeof(struct pass) + FIT_CACHE * sizeof(struct fit_entry) +
                   2 * m * sizeof(struct order_key) + i64 * sizeof(int64_t) + ints * sizeof(int) +
                   3 * n;
    char *scratch = xcalloc(1, bytes), *p = scratch;
    struct pass *ps = (struct pass *)(void *)p;
    p += sizeof *ps;
    ps->cache = (struct fit_entry *)(void *)p;
    p += FIT_CACHE * sizeof *ps->cache;
    struct order_key *keys = (struct order_key *)(void *)p;
    p += 2 * m * sizeof *keys;
    ps->cap = (int64_t *)(void *)p;
    ps->free = ps->cap + n * DIMS;
    ps->held = ps->free + n * DIMS;
    ps->cand_slots = ps->held + n * LVL_COUNT * DIMS;
    p += i64 * sizeof(int64_t);
    ps->blocker = (int *)(void *)p;
    ps->order = ps->blocker + n;
    ps->victims = ps->order + m;
    ps->chosen = ps->victims + m;
    ps->shape_of = ps->chosen + m;
    ps->set_of = ps->shape_of + m;
    ps->sorted = ps->set_of + m;
    ps->touched = ps->sorted + n;
    ps->cand = ps->touched + n;
    p += ints * sizeof(int);
    ps->state = (unsigned char *)p;
    ps->detached = ps->state + n;
    ps->in_sets = ps->detached + n;

    ps->nodes = nodes;
    ps->n = n;
    ps->jobs = jobs;
    ps->job_count = m;
    ps->version = 1;

    pass_init(ps, keys);
    for (size_t pos = 0; pos < ps->waiting; pos++) {
        if (pos + 2 < ps->waiting) { /* the order jumps around jobs[]: fetch ahead */
            const struct sched_job *next = &jobs[ps->order[pos + 2]];
            __builtin_prefetch(next);
            __builtin_prefetch(next->reason);
        }
        schedule_one(ps, pos);
    }
    free(scratch);
}

bool sched_before(const struct sched_job *a, const struct sched_job *b)
{
    struct order_key ka, kb;
    key_for(a, 0, &ka);
    key_for(b, 0, &kb);
    return order_cmp(&ka, &kb) < 0;
}

bool sched_job_kept(const struct sched_job *job)
{
    return job->running || job->reserved;
}

/*
 * Why the answer is exact: in a pass, a job's verdict depends only on the
 * state (free and held capacity, reservations, victims) its turn finds, and
 * a waiting job that reserved nothing leaves that state as it found it. So
 * the jobs left out — waiting ones of the last pass that changed nothing —
 * change nothing for anyone, and the kept and added jobs find at their turns
 * what they would among every job; but for one thing: an added job that
 * changes the state changes it for the left-out jobs after it too.
 */
bool sched_pass_added(const struct sched_node *nodes, size_t node_count, struct sched_job *jobs,
                      size_t job_count, size_t first_added, const struct sched_job *last_waiting)
{
    sched_pass(nodes, node_count, jobs, job_count);
    bool preempted = false;
    for (size_t j = 0; j < first_added && j < job_count; j++)
        preempted |= jobs[j].verdict == SCHED_PREEMPT;
    for (size_t j = first_added; j < job_count; j++) {
        const struct sched_job *job = &jobs[j];
        bool changed = preempted || job->verdict != SCHED_WAIT || job->reserved;
        if (changed && last_waiting && !sched_before(last_waiting, job))
            return false;
    }
    return true;
}
