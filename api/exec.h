/*
 * exec: a command inside a running worker (`trainjob exec`, `s` on the
 * workers pane), whichever backend runs it: the request both callers fill,
 * the choice of worker, and trainjobd's way in — the connection switched
 * by POST …/workers/{w}/exec (engine/exec.h), the command's terminal or
 * standard descriptors passed over it (api/exec_wire.h), and, with a
 * terminal, a pseudo-terminal relayed to ours (raw mode, window size)
 * until the command's status comes back. Called by the drivers' exec
 * operation (api/backend.h); the Slurm driver runs srun itself.
 */
#ifndef API_EXEC_H
#define API_EXEC_H

#include <stdbool.h>
#include <stddef.h>

#include "api/apierror.h"
#include "api/jobstatus.h"

enum backend_status;

struct exec_request {
    const char *worker;      /* NULL: the first running one (exec_pick_worker) */
    const char *const *argv; /* the command; argc 0: the worker's shell */
    size_t argc;
    bool tty;        /* a pseudo-terminal, relayed to ours (-t) */
    bool stdin_open; /* our stdin goes to the command (-i; with tty, always) */
};

/*
 * The worker to enter: want when given (404 when the job has none, 409
 * "worker X is not running (Succeeded)" when it is not running), else the
 * first running one (409 when none runs). *out points into wl.
 */
int exec_pick_worker(const struct worker_list *wl, const char *job, const char *want,
                     const char **out, struct api_error *err);

struct backend;
/*
 * The worker a driver's exec enters: backend_workers of job name, then
 * exec_pick_worker; *out a copy (free it). BACKEND_OK, or err says why.
 */
enum backend_status exec_choose_worker(struct backend *b, const char *name, const char *want,
                                       char **out, struct api_error *err);

/*
 * trainjobd: runs rq in the worker through the engine at socket_path,
 * path being the worker's …/exec. BACKEND_OK with the command's status in
 * *exit_code (128 + signal for a signal death); otherwise err says why.
 */
enum backend_status exec_upgrade(const char *socket_path, const char *path,
                                 const struct exec_request *rq, int *exit_code,
                                 struct api_error *err);

/*
 * Runs argv here with our terminal (srun --pty relays its own) and waits:
 * 0 with its status in *exit_code, or -1 with why in err (127: not found).
 */
int exec_run_here(const char *const *argv, int *exit_code, struct api_error *err);

#endif
