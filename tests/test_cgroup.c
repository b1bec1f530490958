/*
 * Tests for engine/cgroup's probe and decisions on fake cgroup trees in a
 * temporary directory (the root is a parameter): a v1 hybrid like the CI
 * machines, a delegated v2 subtree, a v2 that delegates nothing, partial
 * cases, the limits written per worker, names refused, OOM detection.
 * The real kernel side (a worker killed at its memory limit, a fork bomb
 * held at its process limit) is tests/resources.test.sh.
 */
// clang-format off
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
// clang-format on

#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/cgroup.h"
#include "util/fileio.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

struct tree {
    char root[64];
};

/* Writes text to root/rel, making the directories on the way. */
static void put(const struct tree *t, const char *rel, const char *text)
{
    char *path = xasprintf("%s/%s", t->root, rel);
    char *dir = xstrdup(path);
    *strrchr(dir, '/') = '\0';
    struct strbuf err = STRBUF_INIT;
    assert_int_equal(file_mkdirs(dir, 0755, &err), 0);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    strbuf_free(&err);
    free(dir);
    free(path);
}

/* The text of root/rel ("" when missing). */
static char *get(const struct tree *t, const char *rel)
{
    char *path = xasprintf("%s/%s", t->root, rel);
    char *data = NULL;
    size_t len;
    struct strbuf err = STRBUF_INIT;
    if (file_read_all(path, 4096, &data, &len, &err) != 0)
        data = xstrdup("");
    strbuf_free(&err);
    free(path);
    return data;
}

static int setup(void **state)
{
    struct tree *t = xcalloc(1, sizeof *t);
    snprintf(t->root, sizeof t->root, "/tmp/test_cgroup.XXXXXX");
    assert_non_null(mkdtemp(t->root));
    *state = t;
    return 0;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

static int teardown(void **state)
{
    struct tree *t = *state;
    nftw(t->root, remove_one, 16, FTW_DEPTH | FTW_PHYS);
    free(t);
    return 0;
}

/* The probe's test child under base (relative), with the control files it writes. */
static void probe_files(const struct tree *t, const char *base, const char *const *files)
{
    for (size_t i = 0; files[i]; i++) {
        char *rel = xasprintf("%s/probe-%ld/%s", base, (long)getpid(), files[i]);
        put(t, rel, "");
        free(rel);
    }
}

/* The hybrid tree's v1 hierarchies, trainjob's directory in each. */
static const char *const hybrid_tops[] = {"memory/process_api/abc/trainjob", "cpu/trainjob",
                                          "pids/trainjob"};

/* Like this machine: v1 memory, cpu, pids; memory in a sub-cgroup; an empty unified v2. */
static const char hybrid_self[] = "9:name=systemd:/\n8:pids:/\n4:memory:/process_api/abc\n"
                                  "2:cpuacct:/\n1:cpu:/\n0::/\n";

static void hybrid_tree(const struct tree *t)
{
    put(t, "unified/cgroup.controllers", "");
    put(t, "unified/cgroup.subtree_control", "");
    put(t, "memory/cgroup.procs", "");
    put(t, "memory/process_api/abc/cgroup.procs", "1\n");
    put(t, "cpu/cgroup.procs", "");
    put(t, "pids/cgroup.procs", "");
    static const char *const mem[] = {"memory.limit_in_bytes", NULL};
    static const char *const cpu[] = {"cpu.cfs_quota_us", NULL};
    static const char *const pids[] = {"pids.max", NULL};
    probe_files(t, "memory/process_api/abc/trainjob", mem);
    probe_files(t, "cpu/trainjob", cpu);
    probe_files(t, "pids/trainjob", pids);
}

static void v1_hybrid_is_enforced(void **state)
{
    struct tree *t = *state;
    hybrid_tree(t);
    struct cgroups *cg = cgroup_probe(t->root, hybrid_self);
    assert_string_equal(cgroup_summary(cg), "enforced (cgroup v1: memory, cpu, pids)");
    assert_int_equal(cgroup_enforced(cg), CGROUP_ALL);
    char *base = xasprintf("%s/memory/process_api/abc/trainjob", t->root);
    assert_string_equal(cgroup_base(cg), base);
    free(base);

    /* A worker's cgroups: one per hierarchy, with the spec's limits. */
    static const char *const leaf_files[] = {
        "memory/process_api/abc/trainjob/job1.w-1/memory.limit_in_bytes",
        "memory/process_api/abc/trainjob/job1.w-1/memory.memsw.limit_in_bytes",
        "cpu/trainjob/job1.w-1/cpu.cfs_quota_us",
        "cpu/trainjob/job1.w-1/cpu.cfs_period_us",
        "pids/trainjob/job1.w-1/pids.max",
    };
    for (size_t i = 0; i < sizeof leaf_files / sizeof leaf_files[0]; i++)
        put(t, leaf_files[i], "");
    struct cgroup_limits lim = {256, 2, 100, 0};
    char **dirs = NULL;
    struct strbuf err = STRBUF_INIT;
    assert_int_equal(cgroup_create(cg, "job1", "w-1", &lim, &dirs, &err), 0);
    assert_non_null(dirs);
    size_t n = 0;
    while (dirs[n])
        n++;
    assert_int_equal(n, 3);
    char *v = get(t, leaf_files[0]);
    assert_string_equal(v, "268435456");
    free(v);
    v = get(t, leaf_files[1]);
    assert_string_equal(v, "268435456"); /* memory + swap = memory: no swap */
    free(v);
    v = get(t, leaf_files[2]);
    assert_string_equal(v, "200000");
    free(v);
    v = get(t, leaf_files[3]);
    assert_string_equal(v, "100000");
    free(v);
    v = get(t, leaf_files[4]);
    assert_string_equal(v, "100");
    free(v);
    cgroup_dirs_free(dirs);
    strbuf_free(&err);
    cgroup_free(cg);
}

static void v1_without_pids_is_partly_enforced(void **state)
{
    struct tree *t = *state;
    hybrid_tree(t);
    static const char self[] = "4:memory:/process_api/abc\n1:cpu:/\n0::/\n";
    struct cgroups *cg = cgroup_probe(t->root, self);
    const char *s = cgroup_summary(cg);
    assert_non_null(strstr(s, "partly enforced (cgroup v1: memory, cpu; not pids: "));
    assert_int_equal(cgroup_enforced(cg), CGROUP_MEMORY | CGROUP_CPU);

    /* A kernel without swap accounting (no memory.memsw.*): the memory limit alone. */
    put(t, "memory/process_api/abc/trainjob/job1.w-1/memory.limit_in_bytes", "");
    struct cgroup_limits lim = {64, 0, 0, 0};
    char **dirs = NULL;
    struct strbuf err = STRBUF_INIT;
    assert_int_equal(cgroup_create(cg, "job1", "w-1", &lim, &dirs, &err), 0);
    char *v = get(t, "memory/process_api/abc/trainjob/job1.w-1/memory.limit_in_bytes");
    assert_string_equal(v, "67108864");
    free(v);
    char *memsw = xasprintf(
        "%s/memory/process_api/abc/trainjob/job1.w-1/memory.memsw.limit_in_bytes", t->root);
    assert_int_equal(access(memsw, F_OK), -1); /* not created by the write */
    free(memsw);
    cgroup_dirs_free(dirs);
    /* A required file that is missing still fails, naming it. */
    assert_int_equal(cgroup_create(cg, "job2", "w-1", &lim, &dirs, &err), -1);
    assert_non_null(strstr(strbuf_str(&err), "cannot set memory.limit_in_bytes to 67108864"));
    strbuf_free(&err);
    cgroup_free(cg);
}

static void v1_cgroup_outside_the_namespace_is_not_used(void **state)
{
    struct tree *t = *state;
    hybrid_tree(t);
    /* In a cgroup namespace, a cgroup outside it reads "/../x": never a path under the mount. */
    static const char self[] = "8:pids:/\n4:memory:/../process_api/abc\n1:cpu:/..\n0::/\n";
    struct cgroups *cg = cgroup_probe(t->root, self);
    assert_int_equal(cgroup_enforced(cg), CGROUP_PIDS);
    assert_non_null(strstr(cgroup_summary(cg), "partly enforced (cgroup v1: pids; not memory: "));
    cgroup_free(cg);
}

/* A v2-only machine whose cgroup for us is /user.slice/u.scope, with what it offers. */
static void v2_tree(const struct tree *t, const char *offered)
{
    put(t, "cgroup.controllers", "cpuset cpu io memory hugetlb pids rdma misc");
    put(t, "user.slice/u.scope/cgroup.controllers", offered);
    put(t, "user.slice/u.scope/cgroup.subtree_control", "");
    put(t, "user.slice/u.scope/cgroup.procs", "1\n");
    put(t, "user.slice/u.scope/trainjob/cgroup.subtree_control", "");
    static const char *const files[] = {"memory.max", "cpu.max", "pids.max", NULL};
    probe_files(t, "user.slice/u.scope/trainjob", files);
}

static const char v2_self[] = "0::/user.slice/u.scope\n";

static void v2_not_delegated_says_why(void **state)
{
    struct tree *t = *state;
    v2_tree(t, "");
    struct cgroups *cg = cgroup_probe(t->root, v2_self);
    const char *s = cgroup_summary(cg);
    assert_int_equal(cgroup_enforced(cg), 0);
    assert_null(cgroup_base(cg));
    assert_true(strncmp(s, "not enforced: ", 14) == 0);
    assert_non_null(strstr(s, "u.scope is not delegated"));
    /* A worker then runs without cgroups: nothing to join, not an error. */
    struct cgroup_limits lim = {64, 1, 40, 0};
    char **dirs = (char **)1;
    struct strbuf err = STRBUF_INIT;
    assert_int_equal(cgroup_create(cg, "job1", "w-1", &lim, &dirs, &err), 0);
    assert_null(dirs);
    strbuf_free(&err);
    cgroup_free(cg);
}

static void v2_delegated_is_enforced(void **state)
{
    struct tree *t = *state;
    v2_tree(t, "cpu memory pids");
    struct cgroups *cg = cgroup_probe(t->root, v2_self);
    assert_string_equal(cgroup_summary(cg), "enforced (cgroup v2: memory, cpu, pids)");
    /* The controllers were enabled for trainjob/ and below. */
    char *sub = get(t, "user.slice/u.scope/trainjob/cgroup.subtree_control");
    assert_non_null(strstr(sub, "+")); /* written one by one: the last one stays */
    free(sub);

    put(t, "user.slice/u.scope/trainjob/job1.w-2/memory.max", "");
    put(t, "user.slice/u.scope/trainjob/job1.w-2/memory.swap.max", "");
    put(t, "user.slice/u.scope/trainjob/job1.w-2/cpu.max", "");
    put(t, "user.slice/u.scope/trainjob/job1.w-2/pids.max", "");
    struct cgroup_limits lim = {64, 1, 40, 0};
    char **dirs = NULL;
    struct strbuf err = STRBUF_INIT;
    assert_int_equal(cgroup_create(cg, "job1", "w-2", &lim, &dirs, &err), 0);
    assert_non_null(dirs);
    assert_non_null(dirs[0]);
    assert_null(dirs[1]);
    char *want = xasprintf("%s/user.slice/u.scope/trainjob/job1.w-2", t->root);
    assert_string_equal(dirs[0], want);
    free(want);
    static const char *const files[][2] = {
        {"user.slice/u.scope/trainjob/job1.w-2/memory.max", "67108864"},
        {"user.slice/u.scope/trainjob/job1.w-2/memory.swap.max", "0"},
        {"user.slice/u.scope/trainjob/job1.w-2/cpu.max", "100000 100000"},
        {"user.slice/u.scope/trainjob/job1.w-2/pids.max", "40"},
    };
    for (size_t i = 0; i < 4; i++) {
        char *v = get(t, files[i][0]);
        assert_string_equal(v, files[i][1]);
        free(v);
    }
    cgroup_dirs_free(dirs);
    strbuf_free(&err);
    cgroup_free(cg);
}

static void v2_partial_delegation_names_what_is_missing(void **state)
{
    struct tree *t = *state;
    v2_tree(t, "memory pids");
    struct cgroups *cg = cgroup_probe(t->root, v2_self);
    const char *s = cgroup_summary(cg);
    assert_non_null(strstr(s, "partly enforced (cgroup v2: memory, pids; not cpu: not delegated"));
    assert_int_equal(cgroup_enforced(cg), CGROUP_MEMORY | CGROUP_PIDS);
    cgroup_free(cg);
}

static void nothing_mounted_is_not_enforced(void **state)
{
    struct tree *t = *state;
    struct cgroups *cg = cgroup_probe(t->root, hybrid_self);
    const char *s = cgroup_summary(cg);
    assert_true(strncmp(s, "not enforced: ", 14) == 0);
    assert_non_null(strstr(s, "no cgroup v2 hierarchy"));
    assert_non_null(strstr(s, "memory: no cgroup v1 hierarchy mounted"));
    cgroup_free(cg);
    /* Not probed at all: said too. */
    assert_true(strncmp(cgroup_summary(NULL), "not enforced: ", 14) == 0);
}

static void names_must_be_one_component(void **state)
{
    struct tree *t = *state;
    hybrid_tree(t);
    struct cgroups *cg = cgroup_probe(t->root, hybrid_self);
    struct cgroup_limits lim = {64, 1, 40, 0};
    static const char *const bad[][2] = {
        {"..", "w-1"}, {"job1", ".."}, {"a/b", "w-1"}, {"job1", "../../x"},
        {"", "w-1"},   {"job1", "."},  {"a.b", "w-1"}, /* "a.b.w-1": whose job? */
        {"~1", "w-1"},                                 /* a spare's name */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char **dirs = NULL;
        struct strbuf err = STRBUF_INIT;
        assert_int_equal(cgroup_create(cg, bad[i][0], bad[i][1], &lim, &dirs, &err), -1);
        assert_null(dirs);
        assert_non_null(strstr(strbuf_str(&err), "not a cgroup name"));
        strbuf_free(&err);
    }
    cgroup_free(cg);
}

/* Is root/rel a directory? */
static bool is_dir(const struct tree *t, const char *rel)
{
    char *path = xasprintf("%s/%s", t->root, rel);
    struct stat st;
    bool yes = stat(path, &st) == 0 && S_ISDIR(st.st_mode);
    free(path);
    return yes;
}

/* The sweep's keep: jobC's w-2 is a live worker's. */
static bool keep_w2(void *ctx, const char *job, const char *leaf)
{
    (void)ctx;
    return strcmp(job, "jobC") == 0 && strcmp(leaf, "w-2") == 0;
}

/*
 * Each engine has its own subtree, named the same on every start; at start
 * it removes what nobody is in there (an empty directory here; a file
 * stands for a process: rmdir fails as the kernel's EBUSY would), and a
 * deleted job's cgroups all go.
 */
static void an_engine_sweeps_and_removes_its_own(void **state)
{
    struct tree *t = *state;
    hybrid_tree(t);
    struct cgroups *cg = cgroup_probe(t->root, hybrid_self);
    char *name = xstrdup(cgroup_use_engine(cg, "/var/lib/trainjobd"));
    assert_int_equal(strlen(name), 17);
    assert_string_equal(cgroup_use_engine(NULL, "/var/lib/trainjobd"), name);
    assert_string_not_equal(cgroup_use_engine(NULL, "/home/alice/state"), name);
    char *base = xasprintf("%s/memory/process_api/abc/trainjob/%s", t->root, name);
    assert_string_equal(cgroup_base(cg), base);
    char *rel = xasprintf("pids/trainjob/%s", name);
    assert_true(is_dir(t, rel));

    /* jobA/w-1: an engine before the flat names made it; the others are flat. */
    char *left = xasprintf("memory/process_api/abc/trainjob/%s/jobA/w-1", name);
    char *busy = xasprintf("memory/process_api/abc/trainjob/%s/jobB.w-1/cgroup.procs", name);
    char *gone1 = xasprintf("cpu/trainjob/%s/jobC.w-1/x", name);
    char *gone2 = xasprintf("cpu/trainjob/%s/jobC.w-2/x", name);
    char *spare = xasprintf("pids/trainjob/%s/~7/x", name);
    put(t, busy, "42\n");
    put(t, gone1, "");
    put(t, gone2, "");
    put(t, spare, "");
    char *left_file = xasprintf("%s/x", left);
    put(t, left_file, "");
    const char *empties[] = {left_file, gone1, gone2, spare};
    for (size_t i = 0; i < 4; i++) {
        char *path = xasprintf("%s/%s", t->root, empties[i]);
        assert_int_equal(unlink(path), 0); /* an empty directory left */
        free(path);
    }

    /* jobA/w-1 and jobA go, jobC.w-1 and the spare; jobB.w-1 holds a "process"; jobC.w-2 is
     * kept. */
    assert_int_equal(cgroup_sweep(cg, keep_w2, NULL), 4);
    assert_false(is_dir(t, left));
    char *joba = xasprintf("memory/process_api/abc/trainjob/%s/jobA", name);
    assert_false(is_dir(t, joba));
    char *kept = xasprintf("cpu/trainjob/%s/jobC.w-2", name);
    assert_true(is_dir(t, kept)); /* a start in flight: its shim has not joined yet */
    free(kept);
    char *gone = xasprintf("cpu/trainjob/%s/jobC.w-1", name);
    assert_false(is_dir(t, gone));
    free(gone);
    char *spare_dir = xasprintf("pids/trainjob/%s/~7", name);
    assert_false(is_dir(t, spare_dir));
    free(spare_dir);
    char *jobb = xasprintf("memory/process_api/abc/trainjob/%s/jobB.w-1", name);
    assert_true(is_dir(t, jobb));

    /* A deleted job's cgroups all go: flat ones, and one an earlier engine made. */
    char *jobd = xasprintf("pids/trainjob/%s/jobD.w-1", name);
    char *jobd_file = xasprintf("%s/x", jobd);
    char *jobd_old = xasprintf("pids/trainjob/%s/jobD/w-2/x", name);
    char *jobdd = xasprintf("pids/trainjob/%s/jobDD.w-1/x", name);
    put(t, jobd_file, "");
    put(t, jobd_old, "");
    put(t, jobdd, "");
    char *path = xasprintf("%s/%s", t->root, jobd_file);
    assert_int_equal(unlink(path), 0);
    free(path);
    path = xasprintf("%s/%s", t->root, jobd_old);
    assert_int_equal(unlink(path), 0);
    free(path);
    cgroup_remove_job(cg, "jobD");
    char *jobd_dir = xasprintf("pids/trainjob/%s/jobD", name);
    assert_false(is_dir(t, jobd));
    assert_false(is_dir(t, jobd_dir));
    char *jobdd_dir = xasprintf("pids/trainjob/%s/jobDD.w-1", name);
    assert_true(is_dir(t, jobdd_dir)); /* another job's, whose name begins the same */
    cgroup_remove_job(cg, "../x");     /* not a name: nothing */

    free(joba), free(jobd_old), free(jobdd), free(jobdd_dir), free(spare);
    free(jobd), free(jobd_file), free(jobd_dir), free(jobb), free(left_file);
    free(left), free(busy), free(gone1), free(gone2), free(rel), free(base), free(name);
    cgroup_free(cg);
}

/*
 * At a clean stop an engine takes its subtree with it, in every hierarchy:
 * job directories without a worker's cgroup go, a worker still running
 * under its shim keeps its own and the subtree (a cgroup with children is
 * not removed), and the shared trainjob/ above stays. Left behind, every
 * engine's subtree is one more cgroup the kernel walks on each CPU quota write.
 */
static void an_engine_leaves_nothing_at_a_clean_stop(void **state)
{
    struct tree *t = *state;
    hybrid_tree(t);
    struct cgroups *cg = cgroup_probe(t->root, hybrid_self);
    char *name = xstrdup(cgroup_use_engine(cg, "/var/lib/trainjobd"));
    struct cgroup_limits none = {0, 0, 0, 0};
    char **dirs = NULL;
    struct strbuf err = STRBUF_INIT;
    assert_int_equal(cgroup_create(cg, "job1", "w-1", &none, &dirs, &err), 0);
    /* job1's worker runs: a file in its cgroups stands for its process (rmdir fails). */
    char *procs[3];
    for (size_t i = 0; dirs[i]; i++) {
        procs[i] = xasprintf("%s/x", dirs[i]);
        assert_int_equal(close(creat(procs[i], 0644)), 0);
    }
    cgroup_dirs_free(dirs);
    assert_int_equal(cgroup_create(cg, "job2", "w-1", &none, &dirs, &err), 0);
    cgroup_dirs_free(dirs);
    /* An earlier engine's job directory, its worker's cgroup gone. */
    char *old = xasprintf("%s/cpu/trainjob/%s/job3", t->root, name);
    assert_int_equal(mkdir(old, 0755), 0);
    const char *const *tops = hybrid_tops;
    cgroup_leave_engine(cg); /* job1.w-1 still runs */
    for (size_t i = 0; i < 3; i++) {
        char *job1 = xasprintf("%s/%s/job1.w-1", tops[i], name);
        char *job2 = xasprintf("%s/%s/job2.w-1", tops[i], name);
        assert_true(is_dir(t, job1));
        assert_false(is_dir(t, job2));
        free(job1), free(job2);
    }
    assert_false(is_dir(t, old + strlen(t->root) + 1));
    free(old);

    for (size_t i = 0; i < 3; i++) { /* its worker ended */
        assert_int_equal(unlink(procs[i]), 0);
        free(procs[i]);
    }
    cgroup_remove(cg, "job1", "w-1"); /* a spare now */
    cgroup_leave_engine(cg);
    for (size_t i = 0; i < 3; i++) {
        char *own = xasprintf("%s/%s", tops[i], name);
        assert_false(is_dir(t, own));
        assert_true(is_dir(t, tops[i]));
        free(own);
    }
    cgroup_leave_engine(NULL);
    strbuf_free(&err);
    free(name);
    cgroup_free(cg);
}

/* Does root/rel hold text (a file written so)? */
static bool holds_text(const struct tree *t, const char *rel, const char *text)
{
    char *v = get(t, rel);
    bool same = v && strcmp(v, text) == 0;
    free(v);
    return same;
}

/*
 * The limit files of worker cgroup name in each v1 hierarchy of the hybrid
 * tree (a fake tree's mkdir makes none; a rename keeps what was there).
 */
static void worker_files(const struct tree *t, const char *name)
{
    static const char *const files[] = {"memory.limit_in_bytes", "memory.memsw.limit_in_bytes",
                                        "cpu.cfs_quota_us", "cpu.cfs_period_us", "pids.max"};
    static const size_t top_of[] = {0, 0, 1, 1, 2};
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        char *rel = xasprintf("%s/%s/%s", hybrid_tops[top_of[f]], name, files[f]);
        put(t, rel, "");
        free(rel);
    }
}

/*
 * On v1 an ended worker's cgroups are kept as spares: the next worker of
 * the same limits gets them renamed to its name, its limits already there
 * and not written again (the CPU quota's write walks every cpu cgroup on
 * the machine); one of other limits gets new ones; one the memory limit
 * killed in is not kept (its count would be the next worker's).
 */
static void an_ended_workers_cgroups_serve_the_next(void **state)
{
    struct tree *t = *state;
    hybrid_tree(t);
    struct cgroups *cg = cgroup_probe(t->root, hybrid_self);
    const char *const *tops = hybrid_tops;
    worker_files(t, "job1.w-1");
    worker_files(t, "job3.w-1");
    struct cgroup_limits lim = {256, 2, 100, 0}, other = {512, 1, 100, 0};
    char **dirs = NULL;
    struct strbuf err = STRBUF_INIT;
    assert_int_equal(cgroup_create(cg, "job1", "w-1", &lim, &dirs, &err), 0);
    cgroup_dirs_free(dirs);
    assert_true(holds_text(t, "cpu/trainjob/job1.w-1/cpu.cfs_quota_us", "200000"));
    put(t, "cpu/trainjob/job1.w-1/cpu.cfs_quota_us", "unwritten since");

    cgroup_remove(cg, "job1", "w-1");
    for (size_t i = 0; i < 3; i++) {
        char *gone = xasprintf("%s/job1.w-1", tops[i]);
        char *spare = xasprintf("%s/~0", tops[i]);
        assert_false(is_dir(t, gone));
        assert_true(is_dir(t, spare));
        free(gone), free(spare);
    }

    assert_int_equal(cgroup_create(cg, "job2", "w-1", &lim, &dirs, &err), 0);
    for (size_t i = 0; i < 3; i++) {
        char *want = xasprintf("%s/%s/job2.w-1", t->root, tops[i]);
        assert_string_equal(dirs[i], want);
        free(want);
        char *spare = xasprintf("%s/~0", tops[i]);
        assert_false(is_dir(t, spare));
        free(spare);
    }
    cgroup_dirs_free(dirs);
    assert_true(holds_text(t, "cpu/trainjob/job2.w-1/cpu.cfs_quota_us", "unwritten since"));
    assert_true(holds_text(t, "pids/trainjob/job2.w-1/pids.max", "100"));

    /* Other limits: no spare of them, new cgroups with those limits written. */
    assert_int_equal(cgroup_create(cg, "job3", "w-1", &other, &dirs, &err), 0);
    cgroup_dirs_free(dirs);
    assert_true(holds_text(t, "cpu/trainjob/job3.w-1/cpu.cfs_quota_us", "100000"));
    assert_true(holds_text(t, "memory/process_api/abc/trainjob/job3.w-1/memory.limit_in_bytes",
                           "536870912"));

    /* The memory limit killed in job2's: not kept (the fake tree's files keep it there). */
    put(t, "memory/process_api/abc/trainjob/job2.w-1/memory.oom_control", "oom_kill 1\n");
    cgroup_remove(cg, "job2", "w-1");
    for (size_t i = 0; i < 3; i++) {
        char *spare = xasprintf("%s/~1", tops[i]);
        char *still = xasprintf("%s/job2.w-1", tops[i]);
        assert_false(is_dir(t, spare));
        assert_true(is_dir(t, still));
        free(spare), free(still);
    }
    strbuf_free(&err);
    cgroup_free(cg);
}

/*
 * A spare serves the same user's next worker only: v1's memory cgroup keeps
 * the page cache the last worker charged, so another user's worker of the
 * same limits gets cgroups of its own, and the spare stays for its user.
 */
static void a_spare_serves_its_user_only(void **state)
{
    struct tree *t = *state;
    hybrid_tree(t);
    struct cgroups *cg = cgroup_probe(t->root, hybrid_self);
    worker_files(t, "ja.w-1");
    worker_files(t, "jb.w-1"); /* jc's comes from the spare */
    struct cgroup_limits alice = {256, 2, 100, 1001}, bob = {256, 2, 100, 1002};
    char **dirs = NULL;
    struct strbuf err = STRBUF_INIT;
    assert_int_equal(cgroup_create(cg, "ja", "w-1", &alice, &dirs, &err), 0);
    cgroup_dirs_free(dirs);
    cgroup_remove(cg, "ja", "w-1");
    assert_true(is_dir(t, "cpu/trainjob/~0"));

    /* Bob's worker of the same limits: new cgroups, alice's spare left alone. */
    assert_int_equal(cgroup_create(cg, "jb", "w-1", &bob, &dirs, &err), 0);
    cgroup_dirs_free(dirs);
    assert_true(is_dir(t, "cpu/trainjob/~0"));
    assert_true(is_dir(t, "cpu/trainjob/jb.w-1"));
    assert_true(holds_text(t, "cpu/trainjob/jb.w-1/cpu.cfs_quota_us", "200000"));

    /* Alice's next worker takes it. */
    assert_int_equal(cgroup_create(cg, "jc", "w-1", &alice, &dirs, &err), 0);
    cgroup_dirs_free(dirs);
    assert_false(is_dir(t, "cpu/trainjob/~0"));
    assert_true(is_dir(t, "cpu/trainjob/jc.w-1"));
    strbuf_free(&err);
    cgroup_free(cg);
}

/*
 * The shim's child joins a v1 cgroup by writing "0" to its tasks file: the
 * calling thread alone, for which the kernel takes no lock that every fork,
 * exec and exit on the machine waits on (its pid in cgroup.procs takes
 * one). Where there is no tasks file (v2), its pid goes to cgroup.procs.
 */
static void a_worker_joins_v1_by_its_thread(void **state)
{
    struct tree *t = *state;
    put(t, "v1/w/tasks", "");
    put(t, "v1/w/cgroup.procs", "");
    put(t, "v2/w/cgroup.procs", "");
    char *v1 = xasprintf("%s/v1/w", t->root), *v2 = xasprintf("%s/v2/w", t->root);
    char *gone = xasprintf("%s/nosuch", t->root);
    assert_int_equal(cgroup_join(v1), 0);
    char *tasks = get(t, "v1/w/tasks"), *procs = get(t, "v1/w/cgroup.procs");
    assert_string_equal(tasks, "0");
    assert_string_equal(procs, "");
    free(tasks), free(procs);
    assert_int_equal(cgroup_join(v2), 0);
    char pid[32];
    snprintf(pid, sizeof pid, "%ld", (long)getpid());
    procs = get(t, "v2/w/cgroup.procs");
    assert_string_equal(procs, pid);
    free(procs);
    assert_int_equal(cgroup_join(gone), -1);
    free(v1), free(v2), free(gone);
}

static void oom_kills_are_found(void **state)
{
    struct tree *t = *state;
    put(t, "a/memory.events", "low 0\nhigh 0\nmax 12\noom 1\noom_kill 1\noom_group_kill 0\n");
    put(t, "b/memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n");
    put(t, "c/memory.oom_control", "oom_kill_disable 1\nunder_oom 0\noom_kill 0\n");
    put(t, "d/memory.events", "oom 0\noom_kill 0\n");
    char *a = xasprintf("%s/a", t->root), *b = xasprintf("%s/b", t->root);
    char *c = xasprintf("%s/c", t->root), *d = xasprintf("%s/d", t->root);
    char *e = xasprintf("%s/nosuch", t->root);
    assert_true(cgroup_oom_killed(a));
    assert_true(cgroup_oom_killed(b));
    assert_false(cgroup_oom_killed(c));
    assert_false(cgroup_oom_killed(d));
    assert_false(cgroup_oom_killed(e));
    free(a), free(b), free(c), free(d), free(e);
}

/* A stopped engine's last worker takes the engine's empty subtree with it, and nothing else. */
static void a_last_worker_removes_its_engines_subtree(void **state)
{
    struct tree *t = *state;
    char *eng = xasprintf("%s/trainjob/e0123456789abcdef", t->root);
    char *other = xasprintf("%s/trainjob/e0123456789abcdeX", t->root);
    char *busy = xasprintf("%s/trainjob/efedcba9876543210", t->root);
    put(t, "trainjob/e0123456789abcdef/.keep", "");
    put(t, "trainjob/e0123456789abcdeX/.keep", "");
    put(t, "trainjob/efedcba9876543210/1000.other-0-1/cgroup.procs", "");
    char *f = xasprintf("%s/.keep", eng);
    unlink(f);
    free(f);
    f = xasprintf("%s/.keep", other);
    unlink(f);
    free(f);
    char *w = xasprintf("%s/1000.job-master-0-1", eng); /* removed already by the shim */
    assert_true(cgroup_remove_engine_dir(w));
    assert_int_not_equal(access(eng, F_OK), 0);
    free(w);
    w = xasprintf("%s/1000.job-master-0-1", other); /* not an engine's name */
    assert_false(cgroup_remove_engine_dir(w));
    assert_int_equal(access(other, F_OK), 0);
    free(w);
    w = xasprintf("%s/1000.job-master-0-1", busy); /* another worker still in it */
    assert_false(cgroup_remove_engine_dir(w));
    assert_int_equal(access(busy, F_OK), 0);
    free(w);
    w = xasprintf("%s/trainjob/1000.job-master-0-1",
                  t->root); /* no engine subtree: trainjob/ stays */
    assert_false(cgroup_remove_engine_dir(w));
    free(w);
    w = xasprintf("%s/trainjob", t->root);
    assert_int_equal(access(w, F_OK), 0);
    free(w);
    free(eng), free(other), free(busy);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(v1_hybrid_is_enforced, setup, teardown),
        cmocka_unit_test_setup_teardown(v1_without_pids_is_partly_enforced, setup, teardown),
        cmocka_unit_test_setup_teardown(v1_cgroup_outside_the_namespace_is_not_used, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(v2_not_delegated_says_why, setup, teardown),
        cmocka_unit_test_setup_teardown(v2_delegated_is_enforced, setup, teardown),
        cmocka_unit_test_setup_teardown(v2_partial_delegation_names_what_is_missing, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(nothing_mounted_is_not_enforced, setup, teardown),
        cmocka_unit_test_setup_teardown(names_must_be_one_component, setup, teardown),
        cmocka_unit_test_setup_teardown(an_engine_sweeps_and_removes_its_own, setup, teardown),
        cmocka_unit_test_setup_teardown(an_engine_leaves_nothing_at_a_clean_stop, setup, teardown),
        cmocka_unit_test_setup_teardown(an_ended_workers_cgroups_serve_the_next, setup, teardown),
        cmocka_unit_test_setup_teardown(a_spare_serves_its_user_only, setup, teardown),
        cmocka_unit_test_setup_teardown(a_worker_joins_v1_by_its_thread, setup, teardown),
        cmocka_unit_test_setup_teardown(oom_kills_are_found, setup, teardown),
        cmocka_unit_test_setup_teardown(a_last_worker_removes_its_engines_subtree, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
