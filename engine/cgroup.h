/*
 * cgroup: holds each worker to its resource spec — memory, CPU and a
 * process limit — with Linux control groups, where the machine lets
 * trainjobd use them, and says plainly where it does not.
 *
 * One interface over both kinds of cgroup:
 *   v2 (preferred): a delegated subtree of the unified hierarchy whose
 *      cgroup.controllers offers memory, cpu and pids; limits are
 *      memory.max, memory.swap.max = 0, cpu.max and pids.max, and
 *      cgroup.kill ends what is left;
 *   v1: writable memory, cpu and pids hierarchies (a "hybrid" machine);
 *      limits are memory.limit_in_bytes (and memory.memsw.limit_in_bytes,
 *      so no swap, where the kernel has it), cpu.cfs_quota_us / period and
 *      pids.max.
 *
 * cgroup_probe runs once at engine start: it reads which cgroup the engine
 * is in (the text of /proc/self/cgroup), creates `trainjob/` under it and a
 * test child there, and keeps the answer; the engine then moves to its own
 * subtree trainjob/e<hash>/ (cgroup_use_engine) and removes the empty
 * cgroups an earlier run left there (cgroup_sweep). Per worker the engine
 * calls cgroup_create for `<job uid>.<worker>-<attempt>` there (one directory
 * per v1 hierarchy, one in v2) with the spec's limits; the shim's forked
 * child writes itself into each directory before it execs the worker
 * (cgroup_join), and after the worker ends the shim kills what is
 * left (cgroup_kill_empty). The engine removes the directories when it
 * records the end (cgroup_remove; the shim, when the engine was stopped
 * while the worker ran) — on v1 it keeps up to 64 emptied ones
 * as spares, renamed "~<n>", and the next worker of the same limits gets
 * one renamed to its name, limits already written: a worker start makes no
 * cgroup and writes no limit then, and a worker's end removes none.
 *
 * The cgroup root ("/sys/fs/cgroup") is a parameter, so tests run the probe
 * on a fake tree in a temporary directory. Called by engine/main.c (probe),
 * engine/launcher.c (create), engine/worker_ends.c (remove) and
 * engine/shim.c (join, kill).
 */
#ifndef ENGINE_CGROUP_H
#define ENGINE_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct strbuf;

/* The controllers trainjobd limits, as bits. */
enum {
    CGROUP_MEMORY = 1,
    CGROUP_CPU = 2,
    CGROUP_PIDS = 4,
    CGROUP_ALL = 7,
};

/*
 * What a worker may use; 0 in a field means no limit there. user: whose
 * worker it is — a spare (v1) serves only the same user's next worker, as
 * the memory cgroup keeps the page cache its last worker charged.
 */
struct cgroup_limits {
    int64_t memory_mib;
    int cpus;
    int pids;
    uid_t user;
};

/* What the probe found: opaque, owned by whoever probed. */
struct cgroups;

/*
 * Probes the hierarchies under root (normally /sys/fs/cgroup) for the
 * cgroups named in self (the text of /proc/self/cgroup; NULL: read it).
 * Never fails: what cannot be used is said by cgroup_summary.
 */
struct cgroups *cgroup_probe(const char *root, const char *self);
void cgroup_free(struct cgroups *cg);
/*
 * One line for the log, the catalog and the wizard: "enforced (cgroup v1:
 * memory, cpu, pids)", "partly enforced (cgroup v2: memory, pids; not cpu:
 * …)", or "not enforced: <why>". NULL cg: not probed.
 */
const char *cgroup_summary(const struct cgroups *cg);
/* The CGROUP_* bits enforced (0: none, or cg NULL). */
unsigned cgroup_enforced(const struct cgroups *cg);
/* Where workers' cgroups go: "<hierarchy>/<engine's cgroup>/trainjob[/<engine>]" (the first). */
const char *cgroup_base(const struct cgroups *cg);
/*
 * Moves where workers' cgroups go to trainjob/<engine>/, one subtree per
 * engine (engines may share the cgroup they run in), and returns that
 * name: "e" and 16 hex digits of a hash of key (the state directory, so
 * the same engine finds its subtree again after a restart). Quiet: a
 * subtree that cannot be made leaves the cgroups where they were.
 */
const char *cgroup_use_engine(struct cgroups *cg, const char *key);
/*
 * At a clean stop, once no start is in flight: removes this engine's subtree
 * and its job directories that hold no worker's cgroup. Workers that keep
 * running under their shims keep theirs, and the subtree with them (the
 * kernel refuses to remove a cgroup with children). Without it every engine
 * that ever ran (each test's, each state directory's) leaves a cgroup per
 * hierarchy behind, and the kernel walks all of them on every worker's CPU
 * quota write.
 */
void cgroup_leave_engine(struct cgroups *cg);
/*
 * Removes every cgroup under this engine's subtree that no process is in
 * (the kernel refuses to remove the others) and that keep(ctx, job, leaf)
 * does not claim — a start in flight, whose shim has not joined yet: what
 * a killed engine or a killed shim left. Returns how many it removed.
 */
size_t cgroup_sweep(struct cgroups *cg, bool (*keep)(void *ctx, const char *job, const char *leaf),
                    void *ctx);

/*
 * Creates job.leaf under the engine's subtree with lim, in every hierarchy
 * used (a spare of the same limits renamed, where there is one); job has no
 * '.' and does not begin with '~'. Sets *dirs to a NULL-terminated array of
 * the directories the worker joins (owned: cgroup_dirs_free), NULL when
 * nothing is enforced. Returns 0, or -1 with a message in err (nothing left
 * behind). Safe from several threads at once.
 */
int cgroup_create(struct cgroups *cg, const char *job, const char *leaf,
                  const struct cgroup_limits *lim, char ***dirs, struct strbuf *err);
/* Kills what is left in job.leaf and removes it, or keeps it as a spare (v1). Quiet. */
void cgroup_remove(struct cgroups *cg, const char *job, const char *leaf);
/* Kills what is left in every cgroup of job and removes them (a deleted job). Quiet. */
void cgroup_remove_job(struct cgroups *cg, const char *job);
void cgroup_dirs_free(char **dirs);

/*
 * In the worker's process, before exec (one thread): moves the calling
 * process into dir — on v1 by "0" in dir/tasks (that thread alone, which
 * needs none of the kernel's machine-wide fork lock), on v2 its pid in
 * dir/cgroup.procs. Returns 0, or -1 with errno set. Allocates nothing
 * (safe after fork).
 */
int cgroup_join(const char *dir);
/*
 * Ends every process in dir (cgroup.kill where there is one, else SIGKILL
 * to each pid listed, until none is left or about two seconds passed), then
 * removes dir. Returns true when dir is gone.
 */
bool cgroup_kill_remove(const char *dir);
/*
 * For a shim whose engine has stopped, once it removed its worker's cgroup
 * dir: removes the directory dir was in when that is an engine's subtree
 * (cgroup_use_engine's name) and empty — the last worker of a stopped engine
 * takes the subtree with it. Call with the state directory's lock held
 * shared (statelock_share_idle), so no engine is making a cgroup there.
 * Returns true when it removed it.
 */
bool cgroup_remove_engine_dir(const char *dir);
/* The same, leaving dir for the engine. Returns true when no process is left in it. */
bool cgroup_kill_empty(const char *dir);
/* Has the kernel's OOM killer killed a process in dir (its memory limit)? */
bool cgroup_oom_killed(const char *dir);

#endif
