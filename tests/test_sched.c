/*
 * test_sched: the scheduler (engine/sched.c) against ENGINE.md §Scheduling —
 * one test per rule the scheduler enforces (2–8, 9's reason, 10, 11), gang
 * placement, scoring by node index, exclusions and operator marks,
 * non-preemptible idle jobs, minimal preemption, every reason a waiting job
 * can carry, the order among equal priorities; then thousands of random
 * clusters, each decided both by the scheduler and by a slow, obvious
 * reference written here from the same rules, which must agree exactly (and
 * keep the invariants every pass must keep). Clusters are the demo's: nodes
 * sim-n1 … of 8 GPUs, 16 CPUs and 64 GiB, jobs of sim-gpu-N workers (2 CPUs
 * and 4 GiB per GPU). Node indices are 0-based: sim-n1 is node 0.
 */
/* cmocka needs these first, in this order. */
// clang-format off
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
// clang-format on

#include <stdio.h>
#include <string.h>

#include "api/jobspec.h"
#include "engine/sched.h"

#define MAX_NODES 16
#define MAX_JOBS 32
#define MAX_WORKERS 16

struct cluster {
    struct sched_node nodes[MAX_NODES];
    size_t n;
    struct sched_job jobs[MAX_JOBS];
    size_t m;
    int placement[MAX_JOBS][MAX_WORKERS];
    bool allowed[MAX_JOBS][MAX_NODES];
    bool excluded[MAX_JOBS][MAX_NODES];
    bool pool[2][MAX_NODES];
};

static const char *const node_name[MAX_NODES] = {
    "sim-n1", "sim-n2",  "sim-n3",  "sim-n4",  "sim-n5",  "sim-n6",  "sim-n7",  "sim-n8",
    "sim-n9", "sim-n10", "sim-n11", "sim-n12", "sim-n13", "sim-n14", "sim-n15", "sim-n16",
};

enum kind { STANDARD, IDLE, IDLE_PREEMPTIBLE };

/* A cluster of n demo nodes and no jobs. */
static void cluster(struct cluster *c, size_t n)
{
    memset(c, 0, sizeof *c);
    c->n = n;
    for (size_t i = 0; i < n; i++)
        c->nodes[i] = (struct sched_node){node_name[i], 8, 16, 64 * 1024, false};
}

/* A waiting job of replicas workers of `gpus` GPUs each; submitted after the ones before it. */
static struct sched_job *job(struct cluster *c, const char *name, enum kind kind,
                             enum priority prio, int replicas, int gpus)
{
    assert_true(c->m < MAX_JOBS && replicas <= MAX_WORKERS);
    size_t j = c->m++;
    struct sched_job *jb = &c->jobs[j];
    *jb = (struct sched_job){
        .name = name,
        .priority = prio,
        .idle = kind != STANDARD,
        .preemptible = kind == IDLE_PREEMPTIBLE,
        .submit_seq = j + 1,
        .replicas = replicas,
        .per_worker = {gpus, 2 * gpus, 4096 * (int64_t)gpus},
        .placement = c->placement[j],
    };
    for (int w = 0; w < MAX_WORKERS; w++)
        c->placement[j][w] = -2; /* "never written" */
    return jb;
}

/* Makes a job running with its workers on the nodes listed (one per worker). */
static void runs_on(struct sched_job *jb, const int *nodes)
{
    jb->running = true;
    for (int w = 0; w < jb->replicas; w++)
        jb->placement[w] = nodes[w];
}

/* A job that runs right away: kind, priority, one worker per listed node. */
static struct sched_job *running(struct cluster *c, const char *name, enum kind kind,
                                 enum priority prio, int replicas, int gpus, const int *nodes)
{
    struct sched_job *jb = job(c, name, kind, prio, replicas, gpus);
    runs_on(jb, nodes);
    return jb;
}

static void allow(struct cluster *c, struct sched_job *jb, const int *nodes, int count)
{
    size_t j = (size_t)(jb - c->jobs);
    for (int i = 0; i < count; i++)
        c->allowed[j][nodes[i]] = true;
    jb->allowed = c->allowed[j];
}

static void exclude(struct cluster *c, struct sched_job *jb, int node)
{
    size_t j = (size_t)(jb - c->jobs);
    c->excluded[j][node] = true;
    jb->excluded = c->excluded[j];
}

static void pass(struct cluster *c)
{
    sched_pass(c->nodes, c->n, c->jobs, c->m);
}

static void assert_placed(const struct sched_job *jb, const int *nodes)
{
    if (jb->verdict != SCHED_PLACE)
        fail_msg("%s: not placed (verdict %d, reason \"%s\")", jb->name, jb->verdict, jb->reason);
    for (int w = 0; w < jb->replicas; w++)
        if (jb->placement[w] != nodes[w])
            fail_msg("%s: worker %d on node %d, expected %d", jb->name, w, jb->placement[w],
                     nodes[w]);
    assert_string_equal(jb->reason, "");
}

static void assert_waits(const struct sched_job *jb, const char *reason)
{
    if (jb->verdict != SCHED_WAIT)
        fail_msg("%s: verdict %d, expected to wait with \"%s\"", jb->name, jb->verdict, reason);
    assert_string_equal(jb->reason, reason);
    for (int w = 0; w < jb->replicas; w++)
        assert_int_equal(jb->placement[w], -1); /* no partial placement */
}

static void assert_keeps(const struct sched_job *jb)
{
    if (jb->verdict != SCHED_KEEP)
        fail_msg("%s: verdict %d (\"%s\"), expected to keep running", jb->name, jb->verdict,
                 jb->reason);
}

static void assert_preempted(const struct sched_job *jb, const char *reason)
{
    if (jb->verdict != SCHED_PREEMPT)
        fail_msg("%s: verdict %d, expected preempted", jb->name, jb->verdict);
    assert_string_equal(jb->reason, reason);
}

#define NODES(...) ((const int[]){__VA_ARGS__})

/* ---- the numbered rules ---- */

/* Rule 2: a blocked higher standard job keeps lower ones off the nodes it waits for. */
static void test_rule2_higher_blocks_lower(void **state)
{
    struct cluster c;
    cluster(&c, 3);
    running(&c, "full", STANDARD, PRIORITY_NORMAL, 1, 8, NODES(0));
    running(&c, "half", STANDARD, PRIORITY_NORMAL, 1, 4, NODES(1));
    /* the public pool is n1 and n2; n3 belongs to another pool */
    struct sched_job *a = job(&c, "train-a", STANDARD, PRIORITY_HIGH, 1, 8);
    allow(&c, a, NODES(0, 1), 2);
    struct sched_job *b = job(&c, "train-b", STANDARD, PRIORITY_NORMAL, 1, 4);
    allow(&c, b, NODES(0, 1), 2);
    struct sched_job *other = job(&c, "other", STANDARD, PRIORITY_NORMAL, 1, 4);
    allow(&c, other, NODES(2), 1);
    struct sched_job *both = job(&c, "both", STANDARD, PRIORITY_NORMAL, 1, 4);
    allow(&c, both, NODES(1, 2), 2);
    pass(&c);

    assert_waits(a, "needs 8 GPUs, 4 free");
    assert_waits(b, "behind HIGH job train-a"); /* sim-n2's 4 free GPUs are train-a's */
    assert_placed(other, NODES(2));             /* no overlap: not held up */
    assert_placed(both, NODES(2));              /* overlap: only the nodes train-a can't use */
}

/* Rule 2: equal priority is not blocked; the blocker named is the highest, earliest one. */
static void test_rule2_equal_priority_and_naming(void **state)
{
    struct cluster c;
    cluster(&c, 2);
    running(&c, "r", STANDARD, PRIORITY_NORMAL, 1, 4, NODES(0));
    running(&c, "r2", STANDARD, PRIORITY_NORMAL, 1, 8, NODES(1));
    struct sched_job *a = job(&c, "train-a", STANDARD, PRIORITY_HIGH, 2, 8);
    struct sched_job *c2 = job(&c, "train-c", STANDARD, PRIORITY_HIGH, 1, 2);
    struct sched_job *x = job(&c, "train-x", STANDARD, PRIORITY_HIGHEST, 1, 8);
    struct sched_job *y = job(&c, "train-y", STANDARD, PRIORITY_HIGH, 1, 2);
    struct sched_job *b = job(&c, "train-b", STANDARD, PRIORITY_UNSPECIFIED, 1, 1);
    pass(&c);

    assert_waits(x, "needs 8 GPUs, 4 free");
    assert_waits(a, "behind HIGHEST job train-x");
    assert_waits(c2, "behind HIGHEST job train-x");
    assert_waits(y, "behind HIGHEST job train-x");
    assert_waits(b, "behind HIGHEST job train-x"); /* UNSPECIFIED is NORMAL */

    /* without train-x: train-a (HIGH) waits, train-c (HIGH, later) still fits */
    cluster(&c, 2);
    running(&c, "r", STANDARD, PRIORITY_NORMAL, 1, 4, NODES(0));
    running(&c, "r2", STANDARD, PRIORITY_NORMAL, 1, 8, NODES(1));
    a = job(&c, "train-a", STANDARD, PRIORITY_HIGH, 2, 8);
    c2 = job(&c, "train-c", STANDARD, PRIORITY_HIGH, 1, 2);
    b = job(&c, "train-b", STANDARD, PRIORITY_NORMAL, 1, 1);
    pass(&c);
    assert_waits(a, "needs 16 GPUs, 4 free");
    assert_placed(c2, NODES(0));
    assert_waits(b, "behind HIGH job train-a");
}

/* Rule 3: priority orders idle jobs too, with one kind of resource or both, but never blocks. */
static void test_rule3_idle_priority_order(void **state)
{
    struct cluster c;
    cluster(&c, 1);
    struct sched_job *low = job(&c, "idle-low", IDLE, PRIORITY_NORMAL, 1, 8);
    struct sched_job *high = job(&c, "idle-high", IDLE, PRIORITY_HIGH, 1, 8);
    pass(&c);
    assert_placed(high, NODES(0));
    assert_waits(low, "needs 8 GPUs, 0 free");

    /* both kinds: a standard job runs on sim-n1 */
    cluster(&c, 2);
    running(&c, "std", STANDARD, PRIORITY_NORMAL, 1, 8, NODES(0));
    low = job(&c, "idle-low", IDLE, PRIORITY_NORMAL, 1, 8);
    high = job(&c, "idle-high", IDLE, PRIORITY_HIGHEST, 1, 8);
    pass(&c);
    assert_placed(high, NODES(1));
    assert_waits(low, "needs 8 GPUs, 0 free");

    /* order, not blocking: a higher idle job that does not fit holds nobody up */
    cluster(&c, 1);
    struct sched_job *huge = job(&c, "idle-huge", IDLE, PRIORITY_HIGHEST, 1, 8);
    running(&c, "std", STANDARD, PRIORITY_NORMAL, 1, 4, NODES(0));
    low = job(&c, "idle-low", IDLE, PRIORITY_NORMAL, 1, 4);
    pass(&c);
    assert_waits(huge, "needs 8 GPUs, 4 free");
    assert_placed(low, NODES(0));
}

/* Rule 4: a NORMAL standard job is scheduled before a HIGHEST idle job. */
static void test_rule4_standard_before_idle(void **state)
{
    struct cluster c;
    cluster(&c, 1);
    struct sched_job *idle = job(&c, "idle-top", IDLE, PRIORITY_HIGHEST, 1, 8);
    struct sched_job *std = job(&c, "std-low", STANDARD, PRIORITY_NORMAL, 1, 8);
    pass(&c);
    assert_placed(std, NODES(0));
    assert_waits(idle, "needs 8 GPUs, 0 free");
}

/* Rule 5: running standard jobs stay, whatever waits; only idle jobs give way. */
static void test_rule5_standard_never_preempted(void **state)
{
    struct cluster c;
    cluster(&c, 2);
    struct sched_job *low = running(&c, "std-low", STANDARD, PRIORITY_NORMAL, 1, 8, NODES(0));
    struct sched_job *half = running(&c, "std-half", STANDARD, PRIORITY_NORMAL, 1, 4, NODES(1));
    struct sched_job *idle =
        running(&c, "idle-a", IDLE_PREEMPTIBLE, PRIORITY_NORMAL, 1, 4, NODES(1));
    struct sched_job *top = job(&c, "std-top", STANDARD, PRIORITY_HIGHEST, 2, 8);
    struct sched_job *top_idle = job(&c, "idle-top", IDLE, PRIORITY_HIGHEST, 1, 8);
    pass(&c);
    assert_keeps(low);
    assert_keeps(half);
    assert_keeps(idle); /* preempting it would not make room: nothing is preempted */
    assert_waits(top, "needs 16 GPUs, 0 free");
    assert_waits(top_idle, "needs 8 GPUs, 0 free");

    /* one worker: preempting the idle job is enough; the standard ones stay */
    cluster(&c, 2);
    low = running(&c, "std-low", STANDARD, PRIORITY_NORMAL, 1, 8, NODES(0));
    half = running(&c, "std-half", STANDARD, PRIORITY_NORMAL, 1, 4, NODES(1));
    idle = running(&c, "idle-a", IDLE_PREEMPTIBLE, PRIORITY_NORMAL, 1, 4, NODES(1));
    top = job(&c, "std-top", STANDARD, PRIORITY_HIGHEST, 1, 4);
    pass(&c);
    assert_keeps(low);
    assert_keeps(half);
    assert_preempted(idle, "preempted by standard job std-top");
    assert_placed(top, NODES(1));
}

/* Rule 6: idle jobs backfill past standard and idle jobs that failed to schedule. */
static void test_rule6_idle_backfills(void **state)
{
    struct cluster c;
    cluster(&c, 2);
    running(&c, "std", STANDARD, PRIORITY_NORMAL, 1, 8, NODES(0));
    struct sched_job *a = job(&c, "train-a", STANDARD, PRIORITY_HIGH, 2, 8);
    struct sched_job *b = job(&c, "train-b", STANDARD, PRIORITY_NORMAL, 1, 8);
    struct sched_job *big = job(&c, "idle-big", IDLE, PRIORITY_HIGHEST, 2, 8);
    struct sched_job *small = job(&c, "idle-small", IDLE, PRIORITY_NORMAL, 1, 8);
    pass(&c);
    assert_waits(a, "needs 16 GPUs, 8 free");
    assert_waits(b, "behind HIGH job train-a");
    assert_waits(big, "needs 16 GPUs, 8 free");
    assert_placed(small, NODES(1)); /* on the capacity train-a waits for */
}

/* Rule 7: a waiting standard job preempts a preemptible idle job to get capacity. */
static void test_rule7_standard_preempts_idle(void **state)
{
    struct cluster c;
    cluster(&c, 2);
    struct sched_job *std = running(&c, "std", STANDARD, PRIORITY_NORMAL, 1, 8, NODES(0));
    struct sched_job *idle =
        running(&c, "idle-a", IDLE_PREEMPTIBLE, PRIORITY_HIGHEST, 1, 8, NODES(1));
    struct sched_job *a = job(&c, "train-a", STANDARD, PRIORITY_NORMAL, 1, 8);
    pass(&c);
    assert_keeps(std);
    assert_preempted(idle, "preempted by standard job train-a");
    assert_placed(a, NODES(1));
}

/* Rule 8: a higher idle job preempts lower preemptible idle jobs, never equal or higher ones. */
static void test_rule8_idle_preempts_lower_idle(void **state)
{
    struct cluster c;
    cluster(&c, 1);
    struct sched_job *low =
        running(&c, "idle-low", IDLE_PREEMPTIBLE, PRIORITY_NORMAL, 1, 8, NODES(0));
    struct sched_job *high = job(&c, "idle-high", IDLE, PRIORITY_HIGH, 1, 8);
    pass(&c);
    assert_preempted(low, "preempted by HIGH idle job idle-high");
    assert_placed(high, NODES(0));

    cluster(&c, 1);
    struct sched_job *run =
        running(&c, "idle-run", IDLE_PREEMPTIBLE, PRIORITY_HIGH, 1, 8, NODES(0));
    struct sched_job *same = job(&c, "idle-same", IDLE, PRIORITY_HIGH, 1, 8);
    struct sched_job *lower = job(&c, "idle-lower", IDLE, PRIORITY_NORMAL, 1, 8);
    pass(&c);
    assert_keeps(run);
    assert_waits(same, "needs 8 GPUs, 0 free");
    assert_waits(lower, "needs 8 GPUs, 0 free");
}

/* Rule 9 (the scheduler's part): the preempted job's reason names who took its place. */
static void test_rule9_preempted_reason(void **state)
{
    struct cluster c;
    cluster(&c, 2);
    struct sched_job *v1 = running(&c, "idle-1", IDLE_PREEMPTIBLE, PRIORITY_NORMAL, 1, 8, NODES(0));
    struct sched_job *v2 =
        running(&c, "idle-2", IDLE_PREEMPTIBLE, PRIORITY_NORMAL, 2, 4, NODES(1, 1));
    struct sched_job *s = job(&c, "train-s", STANDARD, PRIORITY_NORMAL, 1, 8);
    struct sched_job *i = job(&c, "idle-top", IDLE, PRIORITY_HIGHEST, 1, 8);
    pass(&c);
    /* train-s takes idle-2 (the later one), idle-top then takes idle-1 */
    assert_preempted(v2, "preempted by standard job train-s");
    assert_preempted(v1, "preempted by HIGHEST idle job idle-top");
    assert_placed(s, NODES(1));
    assert_placed(i, NODES(0));
    /* a preempted job's placement is left as it was: the workers to stop */
    assert_int_equal(v2->placement[0], 1);
    assert_int_equal(v2->placement[1], 1);
    assert_int_equal(v1->placement[0], 0);
}

/* Rule 10: nodes marked for a job are never its choice; nodes marked by an operator, nobody's. */
static void test_rule10_marked_nodes(void **state)
{
    struct cluster c;
    cluster(&c, 3);
    running(&c, "std", STANDARD, PRIORITY_NORMAL, 1, 8, NODES(0));
    struct sched_job *a = job(&c, "train-a", STANDARD, PRIORITY_NORMAL, 1, 8);
    exclude(&c, a, 1);
    exclude(&c, a, 2);
    struct sched_job *b = job(&c, "train-b", STANDARD, PRIORITY_NORMAL, 1, 8);
    exclude(&c, b, 1);
    pass(&c);
    assert_waits(a, "nodes sim-n2 and 1 more marked unschedulable for this job (trainjob node unmark lifts it)");
    assert_placed(b, NODES(2)); /* packing would pick sim-n2 (lower index); it is marked */

    /* operator marks: sim-n1 is the packing choice but is chosen for none */
    cluster(&c, 2);
    c.nodes[0].unschedulable = true;
    struct sched_job *x = job(&c, "x", STANDARD, PRIORITY_NORMAL, 1, 8);
    struct sched_job *y = job(&c, "y", IDLE, PRIORITY_NORMAL, 1, 8);
    pass(&c);
    assert_placed(x, NODES(1));
    assert_waits(y, "node sim-n1 marked unschedulable by an operator");

    /* the marks of one job are not another's */
    cluster(&c, 2);
    a = job(&c, "train-a", STANDARD, PRIORITY_NORMAL, 2, 8);
    exclude(&c, a, 1);
    b = job(&c, "train-b", STANDARD, PRIORITY_NORMAL, 2, 8);
    pass(&c);
    assert_waits(a, "node sim-n2 marked unschedulable for this job (trainjob node unmark lifts it)");
    assert_placed(b, NODES(0, 1));
}

/* Rule 11: MOST_ALLOCATED (and UNSPECIFIED) packs, LEAST_ALLOCATED spreads. */
static void test_rule11_scoring(void **state)
{
    static const enum scoring_strategy strategies[] = {SCORING_UNSPECIFIED, SCORING_MOST_ALLOCATED,
                                                       SCORING_LEAST_ALLOCATED};
    /* free GPUs: sim-n1 2, sim-n2 6, sim-n3 8 */
    static const int one_expect[][1] = {{0}, {0}, {2}};
    static const int two_expect[][2] = {{1, 2}, {1, 2}, {2, 1}};
    static const int empty_expect[][2] = {{0, 0}, {0, 0}, {0, 1}};
    for (int s = 0; s < 3; s++) {
        struct cluster c;
        cluster(&c, 3);
        running(&c, "r1", STANDARD, PRIORITY_NORMAL, 1, 6, NODES(0));
        running(&c, "r2", STANDARD, PRIORITY_NORMAL, 1, 2, NODES(1));
        struct sched_job *one = job(&c, "one", STANDARD, PRIORITY_NORMAL, 1, 2);
        one->scoring = strategies[s];
        pass(&c);
        assert_placed(one, one_expect[s]);

        cluster(&c, 3);
        running(&c, "r1", STANDARD, PRIORITY_NORMAL, 1, 6, NODES(0));
        running(&c, "r2", STANDARD, PRIORITY_NORMAL, 1, 2, NODES(1));
        struct sched_job *two = job(&c, "two", STANDARD, PRIORITY_NORMAL, 2, 4);
        two->scoring = strategies[s];
        pass(&c);
        assert_placed(two, two_expect[s]);

        /* on empty nodes: packing puts both workers on one node */
        cluster(&c, 2);
        two = job(&c, "two", STANDARD, PRIORITY_NORMAL, 2, 4);
        two->scoring = strategies[s];
        pass(&c);
        assert_placed(two, empty_expect[s]);
    }
}

/* ---- placement and preemption ---- */

/* Gang placement: 3 workers of 8 GPUs on 2 free nodes wait, with no worker placed. */
static void test_gang_all_or_nothing(void **state)
{
    struct cluster c;
    cluster(&c, 3);
    running(&c, "std", STANDARD, PRIORITY_NORMAL, 1, 8, NODES(0));
    struct sched_job *gang = job(&c, "gang", STANDARD, PRIORITY_NORMAL, 3, 8);
    struct sched_job *after = job(&c, "after", STANDARD, PRIORITY_NORMAL, 2, 8);
    pass(&c);
    assert_waits(gang, "needs 24 GPUs, 16 free");
    assert_placed(after, NODES(1, 2)); /* the gang took nothing */
}

/* A running idle job that is not preemptible is never preempted. */
static void test_non_preemptible_idle_stays(void **state)
{
    struct cluster c;
    cluster(&c, 1);
    struct sched_job *idle = running(&c, "idle", IDLE, PRIORITY_NORMAL, 1, 8, NODES(0));
    struct sched_job *std = job(&c, "std", STANDARD, PRIORITY_HIGHEST, 1, 8);
    struct sched_job *top = job(&c, "idle-top", IDLE, PRIORITY_HIGHEST, 1, 8);
    pass(&c);
    assert_keeps(idle);
    assert_waits(std, "needs 8 GPUs, 0 free");
    assert_waits(top, "needs 8 GPUs, 0 free");
}

/* Only as many victims as needed: lowest priority first, then the latest submitted. */
static void test_minimal_preemption(void **state)
{
    struct cluster c;
    cluster(&c, 4);
    struct sched_job *v1 = running(&c, "idle-1", IDLE_PREEMPTIBLE, PRIORITY_NORMAL, 1, 8, NODES(0));
    struct sched_job *v2 = running(&c, "idle-2", IDLE_PREEMPTIBLE, PRIORITY_NORMAL, 1, 8, NODES(1));
    struct sched_job *v3 = running(&c, "idle-3", IDLE_PREEMPTIBLE, PRIORITY_HIGH, 1, 8, NODES(2));
    struct sched_job *v4 = running(&c, "idle-4", IDLE_PREEMPTIBLE, PRIORITY_NORMAL, 1, 8, NODES(3));
    struct sched_job *a = job(&c, "train-a", STANDARD, PRIORITY_NORMAL, 2, 8);
    pass(&c);
    /* NORMAL before HIGH; among NORMAL, idle-4 then idle-2 (latest first) */
    assert_preempted(v4, "preempted by standard job train-a");
    assert_preempted(v2, "preempted by standard job train-a");
    assert_keeps(v1);
    assert_keeps(v3);
    assert_placed(a, NODES(1, 3));

    /* the first victim in order turns out useless once a later one is taken: it stays */
    cluster(&c, 2);
    running(&c, "std", STANDARD, PRIORITY_NORMAL, 1, 6, NODES(0));
    struct sched_job *whole =
        running(&c, "whole", IDLE_PREEMPTIBLE, PRIORITY_NORMAL, 1, 8, NODES(1));
    struct sched_job *small =
        running(&c, "small", IDLE_PREEMPTIBLE, PRIORITY_NORMAL, 1, 2, NODES(0));
    a = job(&c, "train-a", STANDARD, PRIORITY_NORMAL, 1, 8);
    pass(&c);
    assert_keeps(small);
    assert_preempted(whole, "preempted by standard job train-a");
    assert_placed(a, NODES(1));

    /* a victim on nodes the job may not use is no help: the other one goes */
    cluster(&c, 2);
    struct sched_job *off = running(&c, "off", IDLE_PREEMPTIBLE, PRIORITY_NORMAL, 1, 8, NODES(0));
    struct sched_job *on = running(&c, "on", IDLE_PREEMPTIBLE, PRIORITY_HIGH, 1, 8, NODES(1));
    a = job(&c, "train-a", STANDARD, PRIORITY_NORMAL, 1, 8);
    exclude(&c, a, 0);
    pass(&c);
    assert_keeps(off);
    assert_preempted(on, "preempted by standard job train-a");
    assert_placed(a, NODES(1));
}

/* When even every victim would not make room, nothing is preempted. */
static void test_no_useless_preemption(void **state)
{
    struct cluster c;
    cluster(&c, 2);
    running(&c, "std", STANDARD, PRIORITY_NORMAL, 1, 8, NODES(0));
    struct sched_job *idle = running(&c, "idle", IDLE_PREEMPTIBLE, PRIORITY_NORMAL, 1, 4, NODES(1));
    struct sched_job *a = job(&c, "train-a", STANDARD, PRIORITY_NORMAL, 2, 8);
    pass(&c);
    assert_keeps(idle);
    assert_waits(a, "needs 16 GPUs, 4 free");
}

/* ---- reasons ---- */

/* Every form of reason a waiting job carries. */
static void test_reasons(void **state)
{
    struct cluster c;

    /* short of free capacity in total */
    cluster(&c, 2);
    running(&c, "std", STANDARD, PRIORITY_NORMAL, 1, 8, NODES(0));
    assert_non_null(job(&c, "a", STANDARD, PRIORITY_NORMAL, 2, 8));
    pass(&c);
    assert_waits(&c.jobs[1], "needs 16 GPUs, 8 free");

    /* fragmentation: 16 GPUs free, but 4 per node */
    cluster(&c, 4);
    for (int i = 0; i < 4; i++)
        running(&c, "r", STANDARD, PRIORITY_NORMAL, 1, 4, (const int[]){i});
    struct sched_job *frag = job(&c, "frag", STANDARD, PRIORITY_NORMAL, 2, 8);
    pass(&c);
    assert_waits(frag, "needs 2 workers of 8 GPUs; no node has 8 GPUs free");

    /* fragmentation: room for some workers only */
    cluster(&c, 5);
    for (int i = 1; i < 5; i++)
        running(&c, "r", STANDARD, PRIORITY_NORMAL, 1, 4, (const int[]){i});
    frag = job(&c, "frag", STANDARD, PRIORITY_NORMAL, 3, 8);
    pass(&c);
    assert_waits(frag, "needs 3 workers of 8 GPUs; free capacity fits 1");

    /* larger than the pool: in total, and per worker */
    cluster(&c, 4);
    struct sched_job *huge = job(&c, "huge", STANDARD, PRIORITY_HIGH, 5, 8);
    struct sched_job *wide = job(&c, "wide", STANDARD, PRIORITY_HIGH, 1, 16);
    struct sched_job *fits = job(&c, "fits", STANDARD, PRIORITY_NORMAL, 1, 8);
    pass(&c);
    assert_waits(huge, "needs more than the pool has: 40 GPUs, pool has 32");
    assert_waits(wide, "needs more than the pool has: 1 worker of 16 GPUs; no node has 16 GPUs");
    assert_placed(fits, NODES(0)); /* a job that can never run holds nobody up */

    /* the pool is the nodes the job may use */
    cluster(&c, 4);
    struct sched_job *pooled = job(&c, "pooled", STANDARD, PRIORITY_NORMAL, 3, 8);
    allow(&c, pooled, NODES(0, 1), 2);
    pass(&c);
    assert_waits(pooled, "needs more than the pool has: 24 GPUs, pool has 16");

    /* marked for this job, now (the only node with room) */
    cluster(&c, 2);
    running(&c, "std", STANDARD, PRIORITY_NORMAL, 1, 8, NODES(0));
    struct sched_job *marked = job(&c, "marked", STANDARD, PRIORITY_NORMAL, 1, 8);
    exclude(&c, marked, 1);
    pass(&c);
    assert_waits(marked, "node sim-n2 marked unschedulable for this job (trainjob node unmark lifts it)");

    /* marked by an operator, now */
    cluster(&c, 2);
    running(&c, "std", STANDARD, PRIORITY_NORMAL, 1, 8, NODES(0));
    c.nodes[1].unschedulable = true;
    struct sched_job *op = job(&c, "op", STANDARD, PRIORITY_NORMAL, 1, 8);
    pass(&c);
    assert_waits(op, "node sim-n2 marked unschedulable by an operator");

    /* CPU and memory when no GPU is asked for */
    cluster(&c, 1);
    struct sched_job *cpu_hog = running(&c, "hog", STANDARD, PRIORITY_NORMAL, 1, 0, NODES(0));
    cpu_hog->per_worker.cpus = 14;
    cpu_hog->per_worker.mem_mib = 60 * 1024;
    struct sched_job *cpu = job(&c, "cpu", STANDARD, PRIORITY_NORMAL, 1, 0);
    cpu->per_worker.cpus = 4;
    struct sched_job *mem = job(&c, "mem", STANDARD, PRIORITY_NORMAL, 1, 0);
    mem->per_worker.mem_mib = 8 * 1024;
    struct sched_job *mib = job(&c, "mib", STANDARD, PRIORITY_NORMAL, 1, 0);
    mib->per_worker.mem_mib = 5000;
    pass(&c);
    assert_waits(cpu, "needs 4 CPUs, 2 free");
    assert_waits(mem, "needs 8 GiB memory, 4 GiB free");
    assert_waits(mib, "needs 5000 MiB memory, 4 GiB free");

    /* CPU fragmentation */
    cluster(&c, 2);
    for (int i = 0; i < 2; i++) {
        struct sched_job *r = running(&c, "r", STANDARD, PRIORITY_NORMAL, 1, 0, (const int[]){i});
        r->per_worker.cpus = 14;
    }
    cpu = job(&c, "cpu", STANDARD, PRIORITY_NORMAL, 1, 0);
    cpu->per_worker.cpus = 4;
    pass(&c);
    assert_waits(cpu, "needs 1 worker of 4 CPUs; no node has 4 CPUs free");

    /* no workers */
    cluster(&c, 1);
    struct sched_job *none = job(&c, "none", STANDARD, PRIORITY_NORMAL, 0, 8);
    pass(&c);
    assert_int_equal(none->verdict, SCHED_WAIT);
    assert_string_equal(none->reason, "has no workers to place");

    /* no nodes at all */
    cluster(&c, 0);
    struct sched_job *alone = job(&c, "alone", IDLE, PRIORITY_NORMAL, 1, 1);
    pass(&c);
    assert_waits(alone, "needs more than the pool has: 1 GPU, pool has 0");
}

/* Equal priority: earlier submission first, then the smaller request (GPUs, then CPUs). */
static void test_equal_priority_order(void **state)
{
    struct cluster c;
    cluster(&c, 1);
    struct sched_job *late = job(&c, "late", STANDARD, PRIORITY_NORMAL, 1, 8);
    struct sched_job *early = job(&c, "early", STANDARD, PRIORITY_NORMAL, 1, 8);
    late->submit_seq = 20;
    early->submit_seq = 10;
    pass(&c);
    assert_placed(early, NODES(0));
    assert_waits(late, "needs 8 GPUs, 0 free");

    cluster(&c, 1);
    struct sched_job *big = job(&c, "big", STANDARD, PRIORITY_NORMAL, 1, 8);
    struct sched_job *small = job(&c, "small", STANDARD, PRIORITY_NORMAL, 2, 2);
    big->submit_seq = small->submit_seq = 7;
    pass(&c);
    assert_placed(small, NODES(0, 0));
    assert_waits(big, "needs 8 GPUs, 4 free");

    cluster(&c, 1);
    struct sched_job *cpu_heavy = job(&c, "cpu-heavy", STANDARD, PRIORITY_NORMAL, 1, 4);
    struct sched_job *cpu_light = job(&c, "cpu-light", STANDARD, PRIORITY_NORMAL, 1, 4);
    cpu_heavy->per_worker.cpus = 14;
    cpu_light->per_worker.cpus = 4;
    cpu_heavy->submit_seq = cpu_light->submit_seq = 3;
    pass(&c);
    assert_placed(cpu_light, NODES(0));
    assert_waits(cpu_heavy, "needs 14 CPUs, 12 free");
}

/* ---- against a slow, obvious scheduler, over random clusters ---- */

/*
 * The same rules written the obvious way: each worker on the best node by a
 * walk over every node, victims freed whole and one at a time, no totals,
 * caches or node order. The fast one must decide exactly the same.
 */
struct ref {
    int64_t free[MAX_NODES][3];
    int blocker_lvl[MAX_NODES];
    bool preempted[MAX_JOBS];
};

static int ref_level(enum priority p)
{
    return p >= PRIORITY_HIGHEST ? 3 : p == PRIORITY_HIGH ? 2 : 1;
}

static void ref_demand(const struct sched_job *jb, int64_t d[3])
{
    d[0] = jb->per_worker.gpus > 0 ? jb->per_worker.gpus : 0;
    d[1] = jb->per_worker.cpus > 0 ? jb->per_worker.cpus : 0;
    d[2] = jb->per_worker.mem_mib > 0 ? jb->per_worker.mem_mib : 0;
}

static bool ref_usable(const struct cluster *c, const struct sched_job *jb, size_t i)
{
    return (!jb->allowed || jb->allowed[i]) && !(jb->excluded && jb->excluded[i]) &&
           !c->nodes[i].unschedulable;
}

static bool ref_eligible(const struct cluster *c, const struct ref *rf, const struct sched_job *jb,
                         size_t i)
{
    return ref_usable(c, jb, i) && (jb->idle || rf->blocker_lvl[i] <= ref_level(jb->priority));
}

static bool ref_takes(const int64_t f[3], const int64_t d[3])
{
    for (int k = 0; k < 3; k++)
        if (d[k] > 0 && f[k] < d[k])
            return false;
    return true;
}

/* Places every worker on the best eligible node, one at a time; false (nothing changed) if one does
 * not fit. */
static bool ref_place(const struct cluster *c, struct ref *rf, const struct sched_job *jb, int *out)
{
    int64_t d[3], saved[MAX_NODES][3];
    ref_demand(jb, d);
    memcpy(saved, rf->free, sizeof saved);
    bool spread = jb->scoring == SCORING_LEAST_ALLOCATED;
    for (int w = 0; w < jb->replicas; w++) {
        int best = -1;
        for (size_t i = 0; i < c->n; i++) {
            if (!ref_eligible(c, rf, jb, i) || !ref_takes(rf->free[i], d))
                continue;
            if (best < 0) {
                best = (int)i;
                continue;
            }
            const int64_t *a = rf->free[i], *b = rf->free[best];
            bool better = a[0] != b[0]   ? (spread ? a[0] > b[0] : a[0] < b[0])
                          : a[1] != b[1] ? (spread ? a[1] > b[1] : a[1] < b[1])
                                         : false;
            if (better)
                best = (int)i;
        }
        if (best < 0) {
            memcpy(rf->free, saved, sizeof saved);
            return false;
        }
        out[w] = best;
        for (int k = 0; k < 3; k++)
            rf->free[best][k] -= d[k];
    }
    return true;
}

static bool ref_fits(const struct cluster *c, struct ref *rf, const struct sched_job *jb)
{
    int scratch[MAX_WORKERS];
    int64_t saved[MAX_NODES][3];
    memcpy(saved, rf->free, sizeof saved);
    bool ok = ref_place(c, rf, jb, scratch);
    memcpy(rf->free, saved, sizeof saved);
    return ok;
}

/* Frees (sign 1) or takes back (sign -1) every worker of running job v. */
static void ref_free(struct ref *rf, const struct sched_job *v, int sign)
{
    int64_t d[3];
    ref_demand(v, d);
    for (int w = 0; w < v->replicas; w++)
        for (int k = 0; k < 3; k++)
            rf->free[v->placement[w]][k] += sign * d[k];
}

/* Would the job fit its usable nodes with nothing running? */
static bool ref_ever_fits(const struct cluster *c, const struct sched_job *jb)
{
    struct ref empty = {0};
    for (size_t i = 0; i < c->n; i++) {
        empty.free[i][0] = c->nodes[i].gpus;
        empty.free[i][1] = c->nodes[i].cpus;
        empty.free[i][2] = c->nodes[i].mem_mib;
    }
    return ref_fits(c, &empty, jb);
}

struct ref_result {
    enum sched_verdict verdict[MAX_JOBS];
    int placement[MAX_JOBS][MAX_WORKERS];
    int by[MAX_JOBS];      /* who preempted it */
    bool behind[MAX_JOBS]; /* waits with a usable node reserved by a higher job */
};

static int ref_cmp_order(const struct cluster *c, size_t a, size_t b)
{
    const struct sched_job *x = &c->jobs[a], *y = &c->jobs[b];
    if (x->idle != y->idle)
        return x->idle ? 1 : -1;
    if (ref_level(x->priority) != ref_level(y->priority))
        return ref_level(x->priority) > ref_level(y->priority) ? -1 : 1;
    if (x->submit_seq != y->submit_seq)
        return x->submit_seq < y->submit_seq ? -1 : 1;
    int64_t xg = (int64_t)x->replicas * x->per_worker.gpus,
            yg = (int64_t)y->replicas * y->per_worker.gpus;
    if (xg != yg)
        return xg < yg ? -1 : 1;
    int64_t xc = (int64_t)x->replicas * x->per_worker.cpus,
            yc = (int64_t)y->replicas * y->per_worker.cpus;
    if (xc != yc)
        return xc < yc ? -1 : 1;
    return a < b ? -1 : 1;
}

static void reference_pass(const struct cluster *c, struct ref_result *res)
{
    struct ref rf = {0};
    size_t order[MAX_JOBS], count = 0, victims[MAX_JOBS], vcount = 0;
    for (size_t i = 0; i < c->n; i++) {
        rf.free[i][0] = c->nodes[i].gpus;
        rf.free[i][1] = c->nodes[i].cpus;
        rf.free[i][2] = c->nodes[i].mem_mib;
    }
    for (size_t j = 0; j < c->m; j++) {
        const struct sched_job *jb = &c->jobs[j];
        res->verdict[j] = jb->running ? SCHED_KEEP : SCHED_WAIT;
        res->by[j] = -1;
        res->behind[j] = false;
        if (!jb->running) {
            order[count++] = j;
            continue;
        }
        ref_free(&rf, jb, -1);
        if (jb->idle && jb->preemptible)
            victims[vcount++] = j;
    }
    /* insertion sorts: few jobs */
    for (size_t i = 1; i < count; i++)
        for (size_t k = i; k > 0 && ref_cmp_order(c, order[k - 1], order[k]) > 0; k--) {
            size_t t = order[k];
            order[k] = order[k - 1];
            order[k - 1] = t;
        }
    for (size_t i = 1; i < vcount; i++)
        for (size_t k = i; k > 0; k--) {
            const struct sched_job *x = &c->jobs[victims[k - 1]], *y = &c->jobs[victims[k]];
            int lx = ref_level(x->priority), ly = ref_level(y->priority);
            bool after = lx != ly                         ? lx > ly
                         : x->submit_seq != y->submit_seq ? x->submit_seq < y->submit_seq
                                                          : victims[k - 1] > victims[k];
            if (!after)
                break;
            size_t t = victims[k];
            victims[k] = victims[k - 1];
            victims[k - 1] = t;
        }

    for (size_t o = 0; o < count; o++) {
        size_t j = order[o];
        const struct sched_job *jb = &c->jobs[j];
        int p = ref_level(jb->priority);
        if (jb->replicas < 1)
            continue;
        if (ref_place(c, &rf, jb, res->placement[j])) {
            res->verdict[j] = SCHED_PLACE;
            continue;
        }
        /* preemption: free victims in order until it fits, then give back the unneeded */
        size_t chosen[MAX_JOBS], nchosen = 0;
        bool fits = false;
        for (size_t v = 0; v < vcount && !fits; v++) {
            const struct sched_job *vj = &c->jobs[victims[v]];
            if (rf.preempted[victims[v]] || (jb->idle && ref_level(vj->priority) >= p))
                continue;
            bool helps = false;
            for (int w = 0; w < vj->replicas; w++)
                helps |= ref_eligible(c, &rf, jb, (size_t)vj->placement[w]);
            if (!helps)
                continue;
            ref_free(&rf, vj, 1);
            chosen[nchosen++] = victims[v];
            fits = ref_fits(c, &rf, jb);
        }
        if (!fits) {
            for (size_t v = 0; v < nchosen; v++)
                ref_free(&rf, &c->jobs[chosen[v]], -1);
            nchosen = 0;
        }
        for (size_t v = nchosen > 0 ? nchosen - 1 : 0; fits && v-- > 0;) {
            ref_free(&rf, &c->jobs[chosen[v]], -1);
            if (ref_fits(c, &rf, jb))
                chosen[v] = SIZE_MAX;
            else
                ref_free(&rf, &c->jobs[chosen[v]], 1);
        }
        if (fits) {
            for (size_t v = 0; v < nchosen; v++) {
                if (chosen[v] == SIZE_MAX)
                    continue;
                rf.preempted[chosen[v]] = true;
                res->verdict[chosen[v]] = SCHED_PREEMPT;
                res->by[chosen[v]] = (int)j;
            }
            assert_true(ref_place(c, &rf, jb, res->placement[j]));
            res->verdict[j] = SCHED_PLACE;
            continue;
        }
        bool ever = ref_ever_fits(c, jb);
        for (size_t i = 0; i < c->n && !jb->idle && ever; i++)
            if (ref_usable(c, jb, i) && rf.blocker_lvl[i] > p)
                res->behind[j] = true;
        if (!jb->idle && ever && p > 1)
            for (size_t i = 0; i < c->n; i++)
                if (ref_usable(c, jb, i) && rf.blocker_lvl[i] == 0)
                    rf.blocker_lvl[i] = p;
    }
}

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static unsigned rnd(unsigned below)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (unsigned)(rng_state % below);
}

/* How random clusters vary beyond the usual: the pass tracks up to 8 node sets and 32 shapes. */
enum variety { USUAL, MANY_SHAPES, MANY_SETS, COPIES };

/* A random cluster: nodes of a few sizes, running jobs where they fit, waiting jobs of all kinds.
 */
static void random_cluster(struct cluster *c, enum variety variety)
{
    static const char *const names[MAX_JOBS] = {
        "j0",  "j1",  "j2",  "j3",  "j4",  "j5",  "j6",  "j7",  "j8",  "j9",  "j10",
        "j11", "j12", "j13", "j14", "j15", "j16", "j17", "j18", "j19", "j20", "j21",
        "j22", "j23", "j24", "j25", "j26", "j27", "j28", "j29", "j30", "j31",
    };
    static const int gpu_choice[] = {0, 1, 2, 4, 8};
    cluster(c, 1 + rnd(MAX_NODES));
    for (size_t i = 0; i < c->n; i++) {
        c->nodes[i].unschedulable = rnd(8) == 0;
        if (rnd(4) == 0) {
            c->nodes[i].gpus = (int)rnd(9);
            c->nodes[i].cpus = 4 + (int)rnd(29);
        }
    }
    for (size_t i = 0; i < c->n; i++) { /* two shared pools, as the engine passes them */
        c->pool[0][i] = rnd(3) != 0;
        c->pool[1][i] = rnd(2) != 0;
    }
    int64_t used[MAX_NODES][3] = {{0}};
    size_t count = 4 + rnd(MAX_JOBS - 4);
    for (size_t j = 0; j < count; j++) {
        struct sched_job *jb = job(c, names[j], (enum kind)rnd(3), (enum priority)rnd(4),
                                   1 + (int)rnd(6), gpu_choice[rnd(5)]);
        jb->submit_seq = rnd(12);
        jb->scoring = (enum scoring_strategy)rnd(3);
        if (variety == MANY_SHAPES)
            jb->per_worker.cpus = 1 + (int)rnd(12);
        if (rnd(4) == 0)
            exclude(c, jb, (int)rnd((unsigned)c->n));
        unsigned pool = rnd(6);
        if (variety == MANY_SETS) { /* a node set of its own */
            for (size_t i = 0; i < c->n; i++)
                c->allowed[j][i] = rnd(4) != 0;
            jb->allowed = c->allowed[j];
        } else if (variety == COPIES) { /* as schedpass.c builds them: arrays of its own */
            for (size_t i = 0; i < c->n; i++)
                c->allowed[j][i] = pool < 2 ? c->pool[pool][i] : true;
            jb->allowed = c->allowed[j];
            jb->excluded = c->excluded[j];
        } else if (pool < 2) {
            jb->allowed = c->pool[pool];
        }
        if (rnd(2) == 0)
            continue; /* waiting */
        int nodes[MAX_WORKERS];
        bool ok = true;
        for (int w = 0; w < jb->replicas && ok; w++) {
            int k = (int)rnd((unsigned)c->n);
            nodes[w] = k;
            ok = used[k][0] + jb->per_worker.gpus <= c->nodes[k].gpus &&
                 used[k][1] + jb->per_worker.cpus <= c->nodes[k].cpus &&
                 used[k][2] + jb->per_worker.mem_mib <= c->nodes[k].mem_mib;
            if (ok) {
                used[k][0] += jb->per_worker.gpus;
                used[k][1] += jb->per_worker.cpus;
                used[k][2] += jb->per_worker.mem_mib;
            }
        }
        if (ok) /* otherwise it waits; what its first workers took stays out of reach */
            runs_on(jb, nodes);
    }
}

/* What every pass must keep, whatever the input. */
static void check_invariants(const struct cluster *c)
{
    for (size_t j = 0; j < c->m; j++) {
        const struct sched_job *jb = &c->jobs[j];
        if (jb->running) {
            assert_true(jb->verdict == SCHED_KEEP || jb->verdict == SCHED_PREEMPT);
            if (jb->verdict == SCHED_PREEMPT) {
                assert_true(jb->idle && jb->preemptible); /* rule 5; non-preemptible */
                assert_true(strncmp(jb->reason, "preempted by ", 13) == 0);
            }
            continue;
        }
        assert_true(jb->verdict == SCHED_WAIT || jb->verdict == SCHED_PLACE);
        if (jb->verdict == SCHED_WAIT)
            assert_true(jb->reason[0] != '\0');
        for (int w = 0; w < jb->replicas && jb->verdict == SCHED_PLACE; w++) {
            int k = jb->placement[w];
            assert_true(k >= 0 && (size_t)k < c->n);
            assert_false(c->nodes[k].unschedulable);       /* rule 10 */
            assert_false(jb->excluded && jb->excluded[k]); /* rule 10 */
            assert_false(jb->allowed && !jb->allowed[k]);
        }
    }
}

/* Random passes decide exactly what the reference decides, keep the invariants, and repeat. */
static void check_against_reference(enum variety variety)
{
    for (int round = 0; round < 3000; round++) {
        struct cluster c;
        struct ref_result want;
        random_cluster(&c, variety);
        reference_pass(&c, &want);
        pass(&c);
        check_invariants(&c);
        for (size_t j = 0; j < c.m; j++) {
            const struct sched_job *jb = &c.jobs[j];
            if (jb->verdict != want.verdict[j])
                fail_msg("round %d, %s: verdict %d, reference %d (\"%s\")", round, jb->name,
                         jb->verdict, want.verdict[j], jb->reason);
            if (jb->verdict == SCHED_PLACE)
                assert_memory_equal(jb->placement, want.placement[j],
                                    (size_t)jb->replicas * sizeof(int));
            if (jb->verdict == SCHED_PREEMPT) {
                const struct sched_job *by = &c.jobs[want.by[j]];
                char expect[160];
                if (by->idle)
                    snprintf(expect, sizeof expect, "preempted by %s idle job %s",
                             enum_name(&priority_names, ref_level(by->priority)), by->name);
                else
                    snprintf(expect, sizeof expect, "preempted by standard job %s", by->name);
                assert_string_equal(jb->reason, expect);
            }
            if (jb->verdict == SCHED_WAIT && jb->replicas > 0 &&
                want.behind[j] != (strncmp(jb->reason, "behind ", 7) == 0))
                fail_msg("round %d, %s: \"%s\", reference %s behind", round, jb->name, jb->reason,
                         want.behind[j] ? "is" : "is not");
        }
        /* the same input, the same answer */
        struct sched_job first[MAX_JOBS];
        int first_placement[MAX_JOBS][MAX_WORKERS];
        memcpy(first, c.jobs, sizeof first);
        memcpy(first_placement, c.placement, sizeof first_placement);
        pass(&c);
        for (size_t j = 0; j < c.m; j++) {
            assert_int_equal(first[j].verdict, c.jobs[j].verdict);
            assert_string_equal(first[j].reason, c.jobs[j].reason);
        }
        assert_memory_equal(first_placement, c.placement, sizeof first_placement);
    }
}

static void test_random_against_reference(void **state)
{
    check_against_reference(USUAL);
}

/*
 * More worker shapes, or node sets, than the pass tracks: the other paths
 * decide the same. And every job with arrays of its own, equal in content
 * (exclusions with no node marked), as the engine passes them.
 */
static void test_random_many_shapes_and_sets(void **state)
{
    check_against_reference(MANY_SHAPES);
    check_against_reference(MANY_SETS);
    check_against_reference(COPIES);
}

/* ---- passes over added jobs only (sched_pass_added) ---- */

static const char *const seq_name[MAX_JOBS] = {
    "a0",  "a1",  "a2",  "a3",  "a4",  "a5",  "a6",  "a7",  "a8",  "a9",  "a10",
    "a11", "a12", "a13", "a14", "a15", "a16", "a17", "a18", "a19", "a20", "a21",
    "a22", "a23", "a24", "a25", "a26", "a27", "a28", "a29", "a30", "a31",
};

/* What the engine does with a pass's verdicts: placed jobs run, preempted ones wait again. */
static bool apply_verdicts(struct cluster *c)
{
    bool changed = false;
    for (size_t j = 0; j < c->m; j++) {
        struct sched_job *jb = &c->jobs[j];
        if (jb->verdict == SCHED_PLACE) {
            jb->running = true;
            changed = true;
        } else if (jb->verdict == SCHED_PREEMPT) {
            jb->running = false;
            changed = true;
        }
    }
    return changed;
}

/* A job submitted now: after every other, of a random kind, priority, pool and size. */
static void add_random_job(struct cluster *c, enum variety variety)
{
    static const int gpu_choice[] = {0, 1, 2, 4, 8};
    size_t j = c->m;
    uint64_t seq = 0;
    for (size_t k = 0; k < c->m; k++)
        seq = c->jobs[k].submit_seq > seq ? c->jobs[k].submit_seq : seq;
    struct sched_job *jb = job(c, seq_name[j], (enum kind)rnd(3), (enum priority)rnd(4),
                               1 + (int)rnd(6), gpu_choice[rnd(5)]);
    jb->submit_seq = seq + 1;
    jb->scoring = (enum scoring_strategy)rnd(3);
    if (variety == MANY_SHAPES)
        jb->per_worker.cpus = 1 + (int)rnd(12);
    if (rnd(4) == 0)
        exclude(c, jb, (int)rnd((unsigned)c->n));
    unsigned pool = rnd(6);
    if (variety == MANY_SETS) {
        for (size_t i = 0; i < c->n; i++)
            c->allowed[j][i] = rnd(4) != 0;
        jb->allowed = c->allowed[j];
    } else if (pool < 2) {
        jb->allowed = c->pool[pool];
    }
}

/*
 * Sequences of submissions to random clusters: after each, a pass over the
 * kept and added jobs alone (sched_pass_added), whenever it says it is
 * exact, decides every job it was given as a pass over every job does,
 * and the jobs it left out keep what the pass before gave them.
 */
static int check_added_against_full(enum variety variety)
{
    int exact = 0;
    for (int round = 0; round < 1500; round++) {
        struct cluster c;
        random_cluster(&c, variety);
        for (size_t j = 0; j < c.m; j++)
            c.jobs[j].name = seq_name[j];
        int settle = 0;
        do
            pass(&c);
        while (apply_verdicts(&c) && ++settle < 8);
        if (settle == 8)
            continue;
        while (c.m < MAX_JOBS) {
            /* the pass before placed and preempted nothing: keep what sched_job_kept says */
            struct sched_job before[MAX_JOBS];
            memcpy(before, c.jobs, sizeof before);
            const struct sched_job *last = NULL;
            for (size_t j = 0; j < c.m; j++)
                if (!c.jobs[j].running && (last == NULL || sched_before(last, &before[j])))
                    last = &before[j];
            size_t from = c.m, added = 1 + rnd(3);
            for (size_t k = 0; k < added && c.m < MAX_JOBS; k++)
                add_random_job(&c, variety);

            struct sched_job part[MAX_JOBS];
            int part_placement[MAX_JOBS][MAX_WORKERS];
            size_t of[MAX_JOBS], count = 0;
            for (size_t j = 0; j < c.m; j++) {
                if (j < from && !sched_job_kept(&c.jobs[j]))
                    continue;
                part[count] = c.jobs[j];
                memcpy(part_placement[count], c.placement[j], sizeof part_placement[count]);
                part[count].placement = part_placement[count];
                of[count++] = j;
            }
            size_t first_added = 0;
            while (first_added < count && of[first_added] < from)
                first_added++;
            bool ok = sched_pass_added(c.nodes, c.n, part, count, first_added, last);
            pass(&c);
            check_invariants(&c);
            if (ok) {
                exact++;
                for (size_t k = 0; k < count; k++) {
                    const struct sched_job *got = &part[k], *want = &c.jobs[of[k]];
                    if (got->verdict != want->verdict || strcmp(got->reason, want->reason) != 0 ||
                        got->reserved != want->reserved)
                        fail_msg("round %d, %s: alone %d \"%s\", among all %d \"%s\"", round,
                                 want->name, got->verdict, got->reason, want->verdict,
                                 want->reason);
                    if (got->verdict == SCHED_PLACE)
                        assert_memory_equal(got->placement, want->placement,
                                            (size_t)got->replicas * sizeof(int));
                }
                for (size_t j = 0; j < from; j++) {
                    if (sched_job_kept(&before[j]))
                        continue;
                    if (c.jobs[j].verdict != SCHED_WAIT ||
                        strcmp(c.jobs[j].reason, before[j].reason) != 0)
                        fail_msg("round %d, %s left out: was \"%s\", now %d \"%s\"", round,
                                 c.jobs[j].name, before[j].reason, c.jobs[j].verdict,
                                 c.jobs[j].reason);
                }
            }
            if (apply_verdicts(&c)) { /* the engine passes over every job next */
                settle = 0;
                do
                    pass(&c);
                while (apply_verdicts(&c) && ++settle < 8);
                if (settle == 8)
                    break;
            }
        }
    }
    return exact;
}

static void test_added_jobs_alone_decide_as_all(void **state)
{
    (void)state;
    int exact = check_added_against_full(USUAL);
    exact += check_added_against_full(MANY_SHAPES);
    exact += check_added_against_full(MANY_SETS);
    /* most submissions are decided alone: the comparison is not vacuous */
    assert_true(exact > 1500);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rule2_higher_blocks_lower),
        cmocka_unit_test(test_rule2_equal_priority_and_naming),
        cmocka_unit_test(test_rule3_idle_priority_order),
        cmocka_unit_test(test_rule4_standard_before_idle),
        cmocka_unit_test(test_rule5_standard_never_preempted),
        cmocka_unit_test(test_rule6_idle_backfills),
        cmocka_unit_test(test_rule7_standard_preempts_idle),
        cmocka_unit_test(test_rule8_idle_preempts_lower_idle),
        cmocka_unit_test(test_rule9_preempted_reason),
        cmocka_unit_test(test_rule10_marked_nodes),
        cmocka_unit_test(test_rule11_scoring),
        cmocka_unit_test(test_gang_all_or_nothing),
        cmocka_unit_test(test_non_preemptible_idle_stays),
        cmocka_unit_test(test_minimal_preemption),
        cmocka_unit_test(test_no_useless_preemption),
        cmocka_unit_test(test_reasons),
        cmocka_unit_test(test_equal_priority_order),
        cmocka_unit_test(test_random_against_reference),
        cmocka_unit_test(test_random_many_shapes_and_sets),
        cmocka_unit_test(test_added_jobs_alone_decide_as_all),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
