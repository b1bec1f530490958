/*
 * runner: starts a worker as a real local process through the shim, signals
 * it, and finds out how it ended — also after trainjobd itself restarted.
 *
 * runner_start forks `trainjob-shim` (build/trainjob-shim, beside trainjobd),
 * which puts itself in a new session so it outlives trainjobd, starts the
 * worker's startup script (inside bubblewrap when `bwrap` is installed and
 * the spec asks for a sandbox), copies its stdout and stderr into a log file
 * capped in size, waits for it and writes the exit code (128 + signal for a
 * signal death) to status_path atomically (temp file + rename). The engine
 * learns of the end by watching the status directory (inotify) or, after a
 * restart, by reading the status file; it never needs to be the parent.
 *
 * The shim is started with a double fork: the intermediate child exits at
 * once and runner_start reaps it, so the shim is never trainjobd's child
 * (init or the nearest subreaper reaps it) and a running and a re-adopted
 * worker look the same. runner_start returns once the shim has started the
 * worker and written `<status_path>.pid` ("<shim pid> <worker pgid>"), so
 * worker_pgid is known from the start; a start that fails leaves nothing
 * running and no status file.
 *
 * The startup script goes to `<status_path>.script` (0600), which the shim
 * reads and removes: it is never on a command line, where `ps` shows it.
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

struct runner_spec {
    const char *shim_path;   /* the shim binary */
    const char *status_path; /* written by the shim when the worker ends */
    const char *log_path;    /* stdout+stderr; rotated to log_path.1 at log_cap bytes (0: no cap) */
    size_t log_cap;
    const char
        *script;       /* run by /bin/sh, from status_path.script (0600): never on a command line */
    char *const *envp; /* the worker's whole environment, NULL-terminated (NULL: empty) */
    const char *cwd;   /* working directory (host path), or NULL */
    const struct runner_bind *binds; /* applied only inside the sandbox (volumes checked always) */
    size_t bind_count;
    bool sandbox; /* use bubblewrap when available; binds appear at mount_path */
    /* cgroup directories (engine/cgroup) the worker joins before it runs, NULL-terminated; or NULL
     */
    char *const *cgroups;
};

/* What the engine keeps (and stores) to find a running worker again. */
struct runner_proc {
    pid_t shim_pid;
    pid_t worker_pgid;         /* the worker's process group; 0 until known */
    uint64_t shim_start_ticks; /* /proc/<pid>/stat start time: tells a reused pid apart */
};

/* True when bubblewrap is installed and works here (checked once). */
bool runner_sandbox_available(void);
/*
 * Starts a worker. Returns 0 with out filled (worker_pgid included), or -1
 * with a message in err (nothing left running). Blocks only while the shim
 * starts (a fork and an exec or two).
 */
int runner_start(const struct runner_spec *spec, struct runner_proc *out, struct strbuf *err);
/*
 * Sends sig to the worker. SIGKILL goes to its process group (in the
 * sandbox: bubblewrap, whose end ends the whole pid namespace). Any other
 * signal goes to the shim while it runs, which forwards SIGTERM, SIGINT and
 * SIGHUP to the worker's own processes — through the sandbox's init, so a
 * trapping worker has its grace period; to the group when the shim is gone.
 * Returns kill's answer.
 */
int runner_signal(const struct runner_proc *proc, int sig);
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
 * Reaps any exited children without blocking. runner_start already reaps its
 * own intermediate child; this is for the engine's loop, and takes every
 * exited child of the process, so call it only where nobody else waits for one.
 */
void runner_reap(void);

#endif
