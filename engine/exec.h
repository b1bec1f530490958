/*
 * exec: `trainjob exec` on trainjobd — a command inside a running worker.
 *
 * POST /trainjob/v1/workspaces/{ws}/trainingJobs/{name}/workers/{w}/exec,
 * with `Connection: Upgrade` and `Upgrade: trainjob-exec`, on the Unix
 * socket only (the client's terminal and pipes travel as descriptors,
 * SCM_RIGHTS). routes.c asks engine_worker_exec whether the caller may and
 * what to enter; http.c switches the connection (101) and hands it to
 * engine_exec_spawn, which starts `trainjob-shim --exec` with it
 * (engine/shim_exec.c does the rest) and forgets it: the engine's loop never
 * waits on a command, and runner_reap collects the helper.
 */
#ifndef ENGINE_EXEC_H
#define ENGINE_EXEC_H

#include <stdint.h>
#include <sys/types.h>

struct api_error;
struct engine;
struct share;
struct strbuf;

/* What to enter: the worker's process-group leader, as its shim recorded it. */
struct exec_plan {
    char *shim_path;
    char *job;
    char *worker;
    char *user;
    pid_t leader;
    uint64_t leader_ticks;
    /* The caller's share, holding one of SHARE_STREAMS until the helper ends (NULL: none). */
    struct share *share;
};

/*
 * May user run a command in worker of job name? Only the job's creator
 * may (a shell runs as the worker's user, with its files and credentials),
 * and only while the worker runs. 0 with *out, or 403/404/409 in err.
 */
int engine_worker_exec(struct engine *eng, const char *user, const char *ws, const char *name,
                       const char *worker, struct exec_plan **out, struct api_error *err);
/*
 * Starts the helper with sock (the switched connection, duplicated) as its
 * fd 3; its pid in *pid. 0, or -1 with why in err.
 */
int engine_exec_spawn(const struct exec_plan *p, int sock, pid_t *pid, struct strbuf *err);
/* Frees p, giving back the share it still holds. */
void engine_exec_plan_free(struct exec_plan *p);

#endif
