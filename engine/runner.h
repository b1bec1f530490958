/*
 * runner: starts a worker as a real local process through the shim, signals
 * it, and finds out how it ended — also after trainjobd itself restarted.
 *
 * runner_launch spawns `trainjob-shim` (build/trainjob-shim, beside trainjobd),
 * which puts itself in a new session so it outlives trainjobd, starts the
 * worker's startup script (inside bubblewrap when `bwrap` is installed and
 * the spec asks for a sandbox), copies its stdout and stderr into a log file
 * capped in size, waits for it and writes the exit code (128 + signal for a
 * signal death) to status_path atomically (temp file + rename). The engine
 * learns of the end by watching the status directory (inotify) or, after a
 * restart, by reading the status file; it never needs to be the parent.
 *
 * The shim is started with posix_spawn (no copy of trainjobd's page tables)
 * and is trainjobd's child until trainjobd ends; it makes itself a session
 * leader, so it outlives trainjobd, and a running and a re-adopted worker
 * look the same. A start is asynchronous: runner_launch returns at once with
 * the report pipe, which the caller watches; runner_launch_read takes the
 * shim's one line — "<shim pid> <worker pgid> <ticks>" once the worker runs (the
 * same line is in `<status_path>.pid`), or "error <message>" — and a start
 * that fails leaves nothing running and no status file. runner_start is the
 * blocking form of the same, for callers without a loop.
 *
 * At most one start per attempt: before it starts anything, the shim creates
 * `<status_path>.claim` with O_CREAT | O_EXCL (holding its pid) and gives up
 * when the file exists. trainjobd cancels a start it can no longer follow (a
 * stop before the report, a timeout, a restart that finds no pid file) by
 * creating the same file itself (runner_claim): if it wins, no worker of that
 * attempt ever runs; if it loses, the shim has it and its pid file follows.
 *
 * The startup script reaches the shim as a descriptor (a sealed anonymous
 * memory file, 0600): it is never on a command line, where `ps` shows it,
 * and no file is created for it beside the status file.
 *
 * The shim writes the status file exactly once per started worker:
 * "exit_code N\n". When the worker's main process ends, whatever it left in
 * its process group is killed (as a container's leftovers die with it).
 */
#ifndef ENGINE_RUNNER_H
#define ENGINE_RUNNER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct strbuf;

/*
 * A host directory made visible to the worker at another path. With volume
 * set, host_path is the volume's root and subdir (NULL or "" for the root)
 * is opened below it by the shim without following any symlink (created
 * when missing) — also without the sandbox, where a subdir that cannot be
 * opened so fails the start too. Otherwise no ':' in either path.
 */
struct runner_bind {
    const char *host_path;
    const char *mount_path;
    bool read_only;
    const char *volume; /* the volume's name, for messages; NULL: a plain bind */
    const char *subdir;
};

/*
 * Who the worker runs as, when trainjobd runs as root: the shim does root's
 * part (cgroups, descriptors) and then takes these groups, gid and uid for
 * good before the worker's first instruction. uid 0 is refused.
 */
struct runner_user {
    bool drop; /* false: the worker runs as trainjobd does (a personal engine) */
    uid_t uid;
    gid_t gid;
    gid_t *groups; /* supplementary groups (owned by whoever fills it) */
    size_t group_count;
};

struct runner_spec {
    const char *shim_path;   /* the shim binary */
    const char *status_path; /* written by the shim when the worker ends */
    const char *log_path;    /* stdout+stderr; rotated to log_path.1 at log_cap bytes (0: no cap) */
    size_t log_cap;
    const char
        *script; /* run by /bin/sh, given to the shim by descriptor: never on a command line */
    char *const *envp; /* the worker's whole environment, NULL-terminated (NULL: empty) */
    const char *cwd;   /* working directory (host path), or NULL */
    const struct runner_bind *binds; /* applied only inside the sandbox (volumes checked always) */
    size_t bind_count;
    bool sandbox; /* use bubblewrap when available; binds appear at mount_path */
    /* cgroup directories (engine/cgroup) the worker joins before it runs, NULL-terminated; or NULL
     */
    char *const *cgroups;
    /* the engine's lock file (engine/statelock): with cgroups, the shim removes them itself
     * when the worker ends and no engine holds it (none will record the end), or NULL */
    const char *engine_lock;
    struct runner_user user;
};

/* What the engine keeps (and stores) to find a running worker again. */
struct runner_proc {
    pid_t shim_pid;
    pid_t worker_pgid;           /* the worker's process group; 0 until known */
    uint64_t shim_start_ticks;   /* /proc/<pid>/stat start time: tells a reused pid apart */
    uint64_t worker_start_ticks; /* the group leader's, as its shim saw it; 0: not recorded */
};

/* True when bubblewrap is installed and works here (checked once). */
bool runner_sandbox_available(void);
/*
 * The bubblewrap the shim runs: the first `bwrap` on trainjobd's own PATH
 * (found once), never one a job's environment names.
 */
const char *runner_bwrap_path(void);
/* How long a start may take before trainjobd gives up on the shim (its default). */
#define RUNNER_REPORT_TIMEOUT_MS 30000

struct runner_launch;
/*
 * Starts the shim for spec and returns at once: 0 with *out (the report
 * pipe still to read), or -1 with a message in err (nothing started).
 */
int runner_launch(const struct runner_spec *spec, struct runner_launch **out, struct strbuf *err);
/* The report pipe (non-blocking) for the caller's loop, and the shim's pid. */
int runner_launch_fd(const struct runner_launch *l);
pid_t runner_launch_pid(const struct runner_launch *l);
/*
 * Reads what the shim reported so far: 0 while its line is incomplete, 1
 * when the worker runs (out filled, worker_pgid included), -1 when the start
 * failed (why in err; the shim started nothing).
 */
int runner_launch_read(struct runner_launch *l, struct runner_proc *out, struct strbuf *err);
/* Forgets a launch; with kill_shim, SIGKILLs the shim first (a cancelled or hung start). */
void runner_launch_free(struct runner_launch *l, bool kill_shim);
/*
 * Starts a worker and waits (at most RUNNER_REPORT_TIMEOUT_MS) for the report.
 * Returns 0 with out filled, or -1 with a message in err (nothing left running).
 */
int runner_start(const struct runner_spec *spec, struct runner_proc *out, struct strbuf *err);
/*
 * Takes the claim of status_path's attempt for trainjobd: 1 when it won (no
 * shim will start that worker), 0 when a shim holds it, -1 on another error
 * (no shim can claim it either).
 */
int runner_claim(const char *status_path);
/* Who holds the claim: a shim's pid, -1 for trainjobd itself, 0 when unknown (none, or not written
 * yet). */
pid_t runner_claim_owner(const char *status_path);
/*
 * Reads `<status_path>.pid` into out (shim pid, worker pgid, and the shim's
 * start time when it still runs). Returns 0, or -1 when there is none.
 */
int runner_read_pidfile(const char *status_path, struct runner_proc *out);
/* pidfd_open(2) and pidfd_send_signal(2); -1 with errno ENOSYS where the kernel has none. */
int runner_pidfd_open(pid_t pid);
int runner_pidfd_signal(int pidfd, int sig);
/*
 * Sends sig to the worker. SIGKILL goes to its process group (in the
 * sandbox: bubblewrap, whose end ends the whole pid namespace). Any other
 * signal goes to the shim while it runs, which forwards SIGTERM, SIGINT and
 * SIGHUP to the worker's own processes — through the sandbox's init, so a
 * trapping worker has its grace period; to the group when the shim is gone.
 * Returns kill's answer.
 */
int runner_signal(const struct runner_proc *proc, int sig);
/*
 * Sends sig to the worker's process group, but only while that number is
 * still the worker's: a leader that is alive must have the start time its
 * shim recorded (or, unrecorded, be the child of our shim, still running).
 * A saved number may since belong to a stranger: process numbers are
 * reused. Returns kill's answer; -1 with ESRCH when the group is not ours.
 */
int runner_kill_group(const struct runner_proc *proc, int sig);
/* Is this shim still running (same pid and start time, and not a zombie)? */
bool runner_alive(const struct runner_proc *proc);
/*
 * Reads the exit code the shim wrote. Returns 1 and sets *exit_code when
 * the worker has ended, 0 when no status is there yet, -1 on a damaged file.
 */
int runner_read_status(const char *status_path, int *exit_code);
/*
 * Fills proc->worker_pgid from the shim's pid file beside status_path
 * (`<status_path>.pid`), once written and when it names proc->shim_pid.
 * Does nothing when status_path is NULL.
 */
void runner_refresh(struct runner_proc *proc, const char *status_path);
/*
 * Reaps any exited children without blocking (the shims a loop started, and
 * those reparented to a subreaper). It takes every exited child of the
 * process, so call it only where nobody else waits for one.
 */
void runner_reap(void);

#endif
