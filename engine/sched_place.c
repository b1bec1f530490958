/*
 * sched_place: one waiting job in a scheduling pass (sched_schedule_one,
 * called by sched.c's pass in order) — placement in free capacity, then
 * preemption of idle jobs (ENGINE.md §Scheduling rules 7 and 8), and
 * otherwise the reason it waits and the nodes it reserves. Reads and
 * changes the nodes through sched_fit.c.
 */
#include <string.h>

#include "engine/sched_priv.h"

static const char *level_name(int lvl)
{
    return enum_name(&priority_names, lvl);
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
        sched_node_use(ps, (size_t)ps->cand[best], d, take);
    }
    job->verdict = SCHED_PLACE;
    job->reason[0] = '\0';
    ps->version++;
}

/* Places the job in free capacity if it fits; otherwise f says how it falls short. */
static bool place_free(struct pass *ps, struct sched_job *job, const int64_t d[DIMS],
                       unsigned flags, int p, struct fit *f)
{
    sched_fit_get(ps, job, d, flags, p, 0, SRC_FREE, f);
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

/*
 * "node sim-n2 marked unschedulable for this job (trainjob node unmark lifts
 * it)", or by an operator
 */
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
    if (by_job)
        put(&t, " (trainjob node unmark lifts it)");
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
        sched_node_detach(ps, (size_t)k);
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
    sched_fit_get(ps, job, d, flags, p, q, SRC_RECLAIM, &f);
    if (f.slots < job->replicas)
        return false;

    sched_fit_get(ps, job, d, flags, p, 0, SRC_FREE, &f);
    if (f.totals_only) /* short in total: count the slots there are */
        sched_scan(ps, job, d, flags, p, 0, SRC_FREE, &f);
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
    sched_nodes_attach(ps);
    if (have < job->replicas || collect(ps, job, d, flags, p) < job->replicas) {
        /* cannot happen after the reclaim fit; undo all the same */
        for (size_t i = 0; i < chosen; i++)
            if (ps->chosen[i] >= 0)
                victim_release(ps, &ps->jobs[ps->chosen[i]], job, d, flags, p, -1, true);
        sched_nodes_attach(ps);
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
    sched_nodes_attach(ps);
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
    sched_fit_get(ps, job, d, 0, 0, 0, SRC_CAP, &pool);
    if (pool.slots < r) {
        if (short_dim(d, r, pool.total) < 0) /* per node, not in total: which dimension? */
            sched_fit_get(ps, job, d, F_DIMS, 0, 0, SRC_CAP, &pool);
        shortage_reason(job, d, &pool, true);
        return false;
    }
    sched_fit_get(ps, job, d, F_EXCL | F_UNSCHED, 0, 0, SRC_CAP, &usable);
    if (usable.slots < r) {
        bool by_job = pool.excluded > 0;
        if (by_job && pool.unsched > 0) { /* both: blame what lifting alone would cure */
            sched_fit_get(ps, job, d, F_UNSCHED, 0, 0, SRC_CAP, &alt);
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
        sched_fit_get(ps, job, d, flags & ~(unsigned)F_EXCL, p, 0, SRC_FREE, &alt);
        if (alt.slots >= r) {
            marked_reason(ps, job, &pool, true);
            return true;
        }
    }
    if (pool.unsched > 0) {
        sched_fit_get(ps, job, d, flags & ~(unsigned)(F_EXCL | F_UNSCHED), p, 0, SRC_FREE, &alt);
        if (alt.slots >= r) {
            marked_reason(ps, job, &pool, false);
            return true;
        }
    }
    if (short_dim(d, r, f->total) < 0) { /* fragmented: which dimension? */
        sched_fit_get(ps, job, d, flags | F_DIMS, p, 0, SRC_FREE, &alt);
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
        sched_node_contrib(ps, i, &c);
        sched_bucket_apply(ps, i, bucket_of(ps, i), &c, -1);
        ps->blocker[i] = (int)pos;
        ps->state[i] = (unsigned char)(ps->state[i] | (unsigned)lvl << 1);
        sched_bucket_apply(ps, i, bucket_of(ps, i), &c, 1);
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
void sched_schedule_one(struct pass *ps, size_t pos)
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
