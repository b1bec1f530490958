/*
 * schedpass: lifecycle's scheduling passes — the input of a pass built from
 * the engine's jobs and nodes, the pure engine/sched deciding it, and its
 * decisions applied (starts, preemptions, waiting reasons). A pass that
 * changed nothing is kept, so jobs created next are decided against it
 * alone. Called through lifecycle_schedule_soon / lifecycle_schedule_added
 * (requests.c, record.c, lifecycle.c, worker_ends.c); starts go to
 * lifecycle.c's start_job.
 */
#include "engine/engine.h" /* the core's interface; its private half is state.h */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/jobspec.h"
#include "engine/sched.h"
#include "engine/state.h"
#include "util/loop.h"
#include "util/xalloc.h"

/* ---- scheduling passes -------------------------------------------------- */

/* The input of a pass over n jobs; reused from pass to pass, up to BUF_KEEP_JOBS jobs. */
#define BUF_KEEP_JOBS 4096
struct pass_buf {
    struct sched_job *sj;
    struct ejob **who;
    size_t n, cap;
    int *slots; /* every job's placement, one block */
    size_t slots_cap;
};

/*
 * What a pass that placed and preempted nothing leaves for the next (valid):
 * the jobs sched_job_kept names (running, or reserving nodes), with their
 * ejobs, and the waiting job that came last. While nothing a pass reads
 * changed (eng->changes, eng->sched_full), jobs created since are decided
 * against these alone (sched_pass_added): a POST costs the same with 50,000
 * jobs waiting as with none. Allocated at the first pass, freed at close.
 */
struct sched_keep {
    bool valid;
    uint64_t changes;  /* eng->changes when kept */
    size_t job_count;  /* eng->job_count then: jobs after it were created since */
    uint64_t next_seq; /* eng->next_seq then: every job created since has one at least as high */
    struct sched_node *nodes;
    size_t nn, np;
    bool *pool_masks;       /* (np + 1) × nn */
    struct sched_job *jobs; /* placement and excluded owned */
    struct ejob **who;
    size_t count, cap;
    bool has_last;
    struct sched_job last; /* order fields only */
    struct pass_buf buf;   /* the input of every pass */
};

/* Forgets the last pass. */
static void keep_reset(struct sched_keep *k)
{
    for (size_t i = 0; i < k->count; i++) {
        free(k->jobs[i].placement);
        free((bool *)k->jobs[i].excluded);
    }
    k->count = 0;
    free(k->nodes);
    free(k->pool_masks);
    k->nodes = NULL;
    k->pool_masks = NULL;
    k->has_last = false;
    k->valid = false;
}

static void buf_free(struct pass_buf *b)
{
    free(b->sj);
    free(b->who);
    free(b->slots);
}

/* Lets a buffer for many jobs go: 50k jobs' inputs are 12 MB, not for the engine's RSS. */
static void buf_trim(struct pass_buf *b)
{
    if (b->cap > BUF_KEEP_JOBS || b->slots_cap > 4 * BUF_KEEP_JOBS) {
        buf_free(b);
        memset(b, 0, sizeof *b);
    }
}

void lifecycle_sched_free(struct engine *eng)
{
    struct spawn_entry e;
    while (spawnq_pop(eng, &e))
        free(e.uid);
    if (eng->spawn_q) {
        free(eng->spawn_q->v);
        free(eng->spawn_q);
        eng->spawn_q = NULL;
    }
    struct sched_keep *k = eng->sched_keep;
    if (k == NULL)
        return;
    keep_reset(k);
    free(k->jobs);
    free(k->who);
    buf_free(&k->buf);
    free(k);
    eng->sched_keep = NULL;
}

/* Stamps k with what it was kept from: a later pass may use it while these hold. */
static void keep_stamp(const struct engine *eng, struct sched_keep *k)
{
    k->changes = eng->changes;
    k->job_count = eng->job_count;
    k->next_seq = eng->next_seq;
}

/* Keeps a copy of s (its placement copied; its exclusions handed over). */
static void keep_add(struct sched_keep *k, struct sched_job *s, struct ejob *job)
{
    if (k->count == k->cap) {
        k->cap = k->cap ? 2 * k->cap : 16;
        k->jobs = xreallocarray(k->jobs, k->cap, sizeof *k->jobs);
        k->who = xreallocarray(k->who, k->cap, sizeof *k->who);
    }
    struct sched_job *c = &k->jobs[k->count];
    *c = *s;
    size_t r = s->replicas > 0 ? (size_t)s->replicas : 1;
    c->placement = xreallocarray(NULL, r, sizeof *c->placement);
    memcpy(c->placement, s->placement, r * sizeof *c->placement);
    s->excluded = NULL;
    k->who[k->count++] = job;
}

/* Remembers s as the last waiting job if it comes after the one so far. */
static void keep_last(struct sched_keep *k, const struct sched_job *s)
{
    if (!k->has_last || sched_before(&k->last, s)) {
        k->last = *s;
        k->last.name = NULL;
        k->last.placement = NULL;
        k->last.allowed = k->last.excluded = NULL;
        k->has_last = true;
    }
}

/* The nodes and one allowed-node array per pool (shared by its jobs; the last: every node). */
static void pass_nodes(struct engine *eng, struct sched_node **nodes, bool **pool_masks)
{
    size_t nn = eng->cfg.node_count, np = eng->cfg.pool_count;
    *nodes = xcalloc(nn ? nn : 1, sizeof **nodes);
    for (size_t i = 0; i < nn; i++) {
        const struct config_node *c = &eng->cfg.nodes[i];
        (*nodes)[i] =
            (struct sched_node){c->name, c->gpus, c->cpus, c->memory_mib, c->unschedulable};
    }
    *pool_masks = xcalloc((np + 1) * (nn ? nn : 1), 1);
    for (size_t p = 0; p < np; p++)
        for (size_t i = 0; i < nn; i++)
            (*pool_masks)[p * nn + i] =
                config_pool_has_node(&eng->cfg.pools[p], eng->cfg.nodes[i].name);
    for (size_t i = 0; i < nn; i++)
        (*pool_masks)[np * nn + i] = true; /* a pool the config no longer has: every node */
}

/*
 * The scheduler's view of a job that holds (live) or wants capacity, its
 * placement in slots (replicas of them: replicas_of(job)). Every field is set but the
 * reason's bytes past the first: a pass writes them.
 */
static void sched_job_of(struct engine *eng, struct ejob *job, bool live, const bool *pool_masks,
                         int replicas, int *slots, struct sched_job *s)
{
    size_t nn = eng->cfg.node_count, np = eng->cfg.pool_count;
    s->name = job->name;
    s->priority = job->priority;
    s->idle = job->idle;
    s->preemptible = s->idle && job->preemptible && job->after_stop == AFTER_STOP_NONE;
    s->submit_seq = job->seq;
    s->replicas = replicas;
    s->per_worker = (struct sched_demand){job->gpus, job->cpus, job->memory_mib};
    s->scoring = job->scoring;
    const struct config_pool *pool = config_pool(&eng->cfg, job->pool);
    size_t p = pool ? (size_t)(pool - eng->cfg.pools) : np;
    s->allowed = pool_masks + p * nn;
    s->excluded = NULL;
    if (job->excluded_count) { /* excluded only where marked */
        bool *excluded = xcalloc(nn ? nn : 1, 1);
        for (size_t i = 0; i < nn; i++)
            for (size_t k = 0; k < job->excluded_count; k++)
                excluded[i] |= strcmp(job->excluded[k], eng->cfg.nodes[i].name) == 0;
        s->excluded = excluded;
    }
    s->running = live;
    s->placement = slots;
    s->verdict = SCHED_WAIT;
    s->reason[0] = '\0';
    s->reserved = false;
    for (int i = 0; i < replicas; i++)
        slots[i] = -1;
    if (live) {
        for (int i = 0; i < replicas && (size_t)i < job->worker_count; i++)
            slots[i] = job->workers[i].live ? node_index(eng, job->workers[i].node) : -1;
        /* Workers already ended hold nothing: count them on no node. */
        int kept = 0;
        for (int i = 0; i < replicas; i++)
            if (slots[i] >= 0)
                slots[kept++] = slots[i];
        s->replicas = kept;
    }
}

/* Room in b for count jobs more (after its first b->n) and replicas placement slots. */
static void buf_reserve(struct pass_buf *b, size_t count, size_t replicas)
{
    if (b->n + count > b->cap) {
        b->cap = b->n + count + 64;
        b->sj = xreallocarray(b->sj, b->cap, sizeof *b->sj);
        b->who = xreallocarray(b->who, b->cap, sizeof *b->who);
    }
    if (replicas > b->slots_cap) {
        b->slots_cap = replicas + 256;
        b->slots = xreallocarray(b->slots, b->slots_cap, sizeof *b->slots);
    }
}

/*
 * Adds to b (after its first b->n, whose placements are not in b->slots)
 * the jobs among jobs[from, to) that hold or want capacity; with
 * only_waiting, it stops at the first that does not wait (returns false).
 */
static bool buf_add(struct engine *eng, struct pass_buf *b, const bool *pool_masks, size_t from,
                    size_t to, bool only_waiting)
{
    size_t first = b->n, total = 0;
    buf_reserve(b, to - from, 0);
    for (size_t j = from; j < to; j++) {
        struct ejob *job = eng->jobs[j];
        bool live = job_has_live_workers(job);
        if (only_waiting && (live || !job_waiting(job))) {
            b->n = first;
            return false;
        }
        if (!live && !job_waiting(job))
            continue;
        b->sj[b->n].running = live;
        b->sj[b->n].replicas = replicas_of(job);
        total += (size_t)b->sj[b->n].replicas;
        b->who[b->n++] = job;
    }
    buf_reserve(b, 0, total);
    for (size_t i = first, off = 0; i < b->n; i++) {
        int replicas = b->sj[i].replicas;
        sched_job_of(eng, b->who[i], b->sj[i].running, pool_masks, replicas, b->slots + off,
                     &b->sj[i]);
        off += (size_t)replicas;
    }
    return true;
}

/* Frees what the jobs of b from first on own (their exclusions). */
static void buf_release(struct pass_buf *b, size_t first)
{
    for (size_t i = first; i < b->n; i++) {
        free((bool *)b->sj[i].excluded);
        b->sj[i].excluded = NULL;
    }
    b->n = 0;
}

/* Did a pass place or preempt anything? */
static bool pass_changes(const struct sched_job *sj, size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (sj[k].verdict == SCHED_PLACE || sj[k].verdict == SCHED_PREEMPT)
            return true;
    return false;
}

/* Does a waiting job show reason already (after "preempted by …; " while that holds)? */
bool shows(const struct ejob *job, const char *reason)
{
    const char *m = job->state_message;
    if (m == NULL)
        return false;
    if (job->preempted_by) {
        size_t len = strlen(job->preempted_by);
        if (strncmp(m, job->preempted_by, len) != 0 || m[len] != ';' || m[len + 1] != ' ')
            return false;
        m += len + 2;
    }
    return strcmp(m, reason) == 0;
}

/* With TRAINJOBD_SCHED_LOG set, a line per pass in the engine's log (what tests count). */
static void log_pass(const char *kind, size_t decided, size_t jobs)
{
    static int on = -1;
    if (on < 0)
        on = getenv("TRAINJOBD_SCHED_LOG") != NULL;
    if (on)
        engine_log("scheduling pass over %s: %zu of %zu jobs", kind, decided, jobs);
}

/* Applies a pass's verdicts: preempts, starts, and shows why the rest wait. */
static void apply_pass(struct engine *eng, struct sched_job *sj, struct ejob **who, size_t n)
{
    size_t nn = eng->cfg.node_count;
    /* Every change a pass makes is one transaction, shown once it has committed. */
    engine_batch_begin(eng);
    /* Nodes whose capacity a preemption frees only once its workers have stopped. */
    bool *freeing = xcalloc(nn ? nn : 1, sizeof *freeing);
    const char *victim = NULL;
    for (size_t k = 0; k < n; k++) {
        if (sj[k].verdict != SCHED_PREEMPT)
            continue;
        victim = who[k]->name;
        for (size_t i = 0; i < who[k]->worker_count; i++) {
            int idx = who[k]->workers[i].live ? node_index(eng, who[k]->workers[i].node) : -1;
            if (idx >= 0)
                freeing[idx] = true;
        }
    }
    for (size_t k = 0; k < n; k++) {
        struct ejob *job = who[k];
        bool on_freeing = false;
        if (sj[k].verdict == SCHED_PLACE)
            for (int i = 0; i < sj[k].replicas; i++)
                on_freeing |= sj[k].placement[i] >= 0 && freeing[sj[k].placement[i]];
        if (on_freeing) {
            /* Start once the preempted workers are gone: the pass after they end. */
            char reason[200];
            snprintf(reason, sizeof reason, "waiting for preempted job %s to stop", victim);
            if (!job->state_message || strcmp(job->state_message, reason) != 0)
                engine_set_state(eng, job, job->state, reason);
            ejob_spec_done(eng, job); /* it waits: its record is all the pass needs */
            continue;
        }
        switch (sj[k].verdict) {
        case SCHED_PLACE:
            start_job(eng, job, sj[k].placement);
            break;
        case SCHED_PREEMPT: {
            struct job_event ev = {0};
            ev.kind = EVENT_PREEMPTED;
            ev.message = sj[k].reason;
            engine_event(eng, job, &ev);
            lifecycle_stop(eng, job, AFTER_STOP_REQUEUE, sj[k].reason);
            break;
        }
        case SCHED_WAIT:
            if (!shows(job, sj[k].reason)) {
                /* A preempted job keeps saying so while it waits. */
                char *reason = job->preempted_by
                                   ? xasprintf("%s; %s", job->preempted_by, sj[k].reason)
                                   : xstrdup(sj[k].reason);
                engine_set_state(eng, job, job->state, reason);
                free(reason);
                ejob_spec_done(eng, job); /* it waits: its record is all the pass needs */
            }
            break;
        case SCHED_KEEP:
            break;
        }
    }
    engine_batch_end(eng);
    free(freeing);
}

static struct sched_keep *keep_of(struct engine *eng)
{
    if (eng->sched_keep == NULL)
        eng->sched_keep = xcalloc(1, sizeof *eng->sched_keep);
    return eng->sched_keep;
}

/* A pass over every job; keeps what the next needs when it placed and preempted nothing. */
static void full_pass(struct engine *eng)
{
    struct sched_keep *k = keep_of(eng);
    struct pass_buf *b = &k->buf;
    keep_reset(k);
    eng->sched_full = false;
    pass_nodes(eng, &k->nodes, &k->pool_masks);
    b->n = 0;
    buf_add(eng, b, k->pool_masks, 0, eng->job_count, false);
    sched_pass(k->nodes, eng->cfg.node_count, b->sj, b->n);
    log_pass("every job", b->n, eng->job_count);
    apply_pass(eng, b->sj, b->who, b->n);
    if (!pass_changes(b->sj, b->n) && !eng->sched_full) {
        k->nn = eng->cfg.node_count;
        k->np = eng->cfg.pool_count;
        for (size_t i = 0; i < b->n; i++) {
            if (!b->sj[i].running)
                keep_last(k, &b->sj[i]);
            if (sched_job_kept(&b->sj[i]))
                keep_add(k, &b->sj[i], b->who[i]);
        }
        keep_stamp(eng, k);
        k->valid = true;
    }
    buf_release(b, 0);
    buf_trim(b);
    if (!k->valid)
        keep_reset(k);
}

/*
 * Checks a pass over added jobs against a pass over every job
 * (TRAINJOBD_SCHED_VERIFY=1, as the engine tests run): the same verdicts
 * and reasons for the jobs it decided, the reason shown now for the others.
 * Aborts on a difference: a change that did not bump eng->changes.
 */
static void verify_added(struct engine *eng, const struct sched_job *got, struct ejob **got_who,
                         size_t got_n)
{
    struct sched_node *nodes;
    bool *pool_masks;
    struct pass_buf all = {0};
    pass_nodes(eng, &nodes, &pool_masks);
    buf_add(eng, &all, pool_masks, 0, eng->job_count, false);
    sched_pass(nodes, eng->cfg.node_count, all.sj, all.n);
    for (size_t i = 0; i < all.n; i++) {
        const struct sched_job *want = &all.sj[i], *mine = NULL;
        for (size_t g = 0; g < got_n && !mine; g++)
            if (got_who[g] == all.who[i])
                mine = &got[g];
        bool same;
        if (mine) {
            same = mine->verdict == want->verdict && strcmp(mine->reason, want->reason) == 0;
            for (int w = 0; same && want->verdict == SCHED_PLACE && w < want->replicas; w++)
                same = mine->placement[w] == want->placement[w];
        } else {
            same = want->verdict == (want->running ? SCHED_KEEP : SCHED_WAIT) &&
                   (want->running || shows(all.who[i], want->reason));
        }
        if (!same) {
            engine_log("scheduler: a pass over added jobs is not a pass over every job: %s: %d "
                       "\"%s\", over every job %d \"%s\"",
                       all.who[i]->name, mine ? (int)mine->verdict : -1,
                       mine ? mine->reason : all.who[i]->state_message, (int)want->verdict,
                       want->reason);
            abort();
        }
    }
    buf_release(&all, 0);
    buf_free(&all);
    free(nodes);
    free(pool_masks);
}

/*
 * A pass over the kept jobs and those created since alone; false (and
 * nothing done) when a pass over every job is needed: something else
 * changed, or an added job changes what jobs left out would see.
 */
static bool added_pass(struct engine *eng)
{
    struct sched_keep *k = eng->sched_keep;
    if (k == NULL || !k->valid || eng->sched_full || k->changes != eng->changes ||
        eng->job_count < k->job_count || k->nn != eng->cfg.node_count ||
        k->np != eng->cfg.pool_count)
        return false;
    for (size_t j = k->job_count; j < eng->job_count; j++)
        if (eng->jobs[j]->seq < k->next_seq) /* not created since: something else moved */
            return false;
    struct pass_buf *b = &k->buf;
    size_t kept = k->count;
    b->n = 0;
    buf_reserve(b, kept, 0);
    if (kept > 0) {
        memcpy(b->sj, k->jobs, kept * sizeof *b->sj);
        memcpy(b->who, k->who, kept * sizeof *b->who);
    }
    b->n = kept;
    bool ok = buf_add(eng, b, k->pool_masks, k->job_count, eng->job_count, true) &&
              sched_pass_added(k->nodes, k->nn, b->sj, b->n, kept, k->has_last ? &k->last : NULL);
    if (ok) {
        if (getenv("TRAINJOBD_SCHED_VERIFY"))
            verify_added(eng, b->sj, b->who, b->n);
        log_pass("added jobs", b->n, eng->job_count);
        apply_pass(eng, b->sj, b->who, b->n);
    }
    if (ok && !pass_changes(b->sj, b->n) && !eng->sched_full) {
        for (size_t i = kept; i < b->n; i++) {
            keep_last(k, &b->sj[i]);
            if (sched_job_kept(&b->sj[i]))
                keep_add(k, &b->sj[i], b->who[i]);
        }
        keep_stamp(eng, k);
    } else if (ok) {
        k->valid = false; /* it placed or preempted: the next pass looks at every job */
    }
    /* the copies of kept jobs own nothing; added jobs' exclusions went to the keep or go */
    for (size_t i = 0; i < kept && i < b->n; i++)
        b->sj[i].excluded = NULL;
    buf_release(b, 0);
    buf_trim(b);
    if (!k->valid)
        keep_reset(k);
    return ok;
}

static void run_pass(void *ctx)
{
    struct engine *eng = ctx;
    eng->sched_timer = 0;
    if (!added_pass(eng))
        full_pass(eng);
}

void lifecycle_schedule_soon(struct engine *eng)
{
    eng->sched_full = true;
    lifecycle_schedule_added(eng);
}

void lifecycle_schedule_added(struct engine *eng)
{
    if (eng->sched_timer == 0)
        eng->sched_timer = loop_add_timer(eng->loop, 0, run_pass, eng);
}
