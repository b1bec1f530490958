/*
 * sched_fit: a scheduling pass's view of the nodes — each node's free and
 * reclaimable capacity, its place in the node order, the bucket totals per
 * node set and shape kept in step with every change — and fits: whether a
 * job's workers fit on its nodes, read from the buckets, the fit cache or a
 * walk over the nodes. Called by sched.c (setting up a pass) and
 * sched_place.c (placing, preempting, explaining); see sched.c's comment
 * for the design.
 */
#include <string.h>

#include "engine/sched_priv.h"

/* ---- node state and the bucket totals ---- */

void sched_node_contrib(const struct pass *ps, size_t i, struct contrib *c)
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
void sched_bucket_apply(struct pass *ps, size_t i, int b, const struct contrib *c, int sign)
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
void sched_bucket_account(struct pass *ps, size_t i, int sign)
{
    struct contrib c;
    sched_node_contrib(ps, i, &c);
    sched_bucket_apply(ps, i, bucket_of(ps, i), &c, sign);
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
int sched_node_key_cmp(const void *a, const void *b, void *arg)
{
    const struct pass *ps = arg;
    const int *ia = a, *ib = b;
    size_t i = (size_t)*ia;
    const int64_t *f = ps->free + i * DIMS;
    return key_cmp(ps, f[DIM_GPU], f[DIM_CPU], i, (size_t)*ib);
}

/* Takes count workers of demand d from node i's free capacity (a negative count gives back). */
void sched_node_use(struct pass *ps, size_t i, const int64_t d[DIMS], int64_t count)
{
    sched_bucket_account(ps, i, -1);
    order_remove(ps, i);
    for (int k = 0; k < DIMS; k++)
        at(ps->free, i)[k] -= count * d[k];
    order_insert(ps, i);
    sched_bucket_account(ps, i, 1);
}

/*
 * A preemption trial frees and takes back victims' workers many times over:
 * the nodes it changes leave the totals and the order on the first change
 * and come back once, when the trial is over (sched_nodes_attach).
 */
void sched_node_detach(struct pass *ps, size_t i)
{
    if (ps->detached[i])
        return;
    ps->detached[i] = 1;
    sched_bucket_account(ps, i, -1);
    order_remove(ps, i);
    ps->touched[ps->touched_count++] = (int)i;
}

/* Ends a preemption trial: the nodes it changed rejoin the totals and the order. */
void sched_nodes_attach(struct pass *ps)
{
    for (size_t t = 0; t < ps->touched_count; t++) {
        size_t i = (size_t)ps->touched[t];
        order_insert(ps, i);
        sched_bucket_account(ps, i, 1);
        ps->detached[i] = 0;
    }
    ps->touched_count = 0;
    ps->version++;
}

/* ---- fits ---- */

/* Counts how workers of demand d fit on job's nodes, reading src, leaving out what flags say. */
void sched_scan(const struct pass *ps, const struct sched_job *job, const int64_t d[DIMS],
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
void sched_fit_get(struct pass *ps, const struct sched_job *job, const int64_t d[DIMS],
                   unsigned flags, int p, int q, enum fit_src src, struct fit *f)
{
    size_t j = (size_t)(job - ps->jobs);
    int set = ps->set_of[j];
    int shape = set >= 0 ? ps->shape_of[j] : -1;
    if (src == SRC_CAP && shape >= 0) { /* capacity never changes: once per shape */
        struct shape *sh = &ps->shapes[shape];
        int v = ((flags & F_UNSCHED) ? 1 : 0) | ((flags & F_DIMS) ? 2 : 0);
        if (!sh->cap_known[v]) {
            sched_scan(ps, job, d, flags, p, q, src, &sh->cap[v]);
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
    sched_scan(ps, job, d, flags, p, q, src, f);
    e->used = true;
    e->key = key;
    e->fit = *f;
}
