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
 *
 * The parts: this file orders the jobs, sets a pass up and runs it;
 * sched_fit.c keeps the node state, bucket totals and fits; sched_place.c
 * places (or preempts for, or explains) one waiting job. They share
 * sched_priv.h.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/sched_priv.h"
#include "util/xalloc.h"

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
        sched_bucket_account(ps, i, 1);
        ps->sorted[i] = (int)i;
    }
    qsort_r(ps->sorted, n, sizeof *ps->sorted, sched_node_key_cmp, ps);
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
        sched_schedule_one(ps, pos);
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
