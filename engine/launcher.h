/*
 * launcher: the blocking part of a worker's start — its directories, its
 * cgroups, the marker line in its log and the shim's spawn — done on a
 * thread of its own, so trainjobd's loop never waits for it. A spawn waits
 * for the shim's exec, and cgroup directories for the kernel's cgroup lock:
 * on a loaded machine each took tens of milliseconds, and every request
 * waited behind them (issue 14).
 *
 * A request (struct launch_req) owns every byte the thread reads; the loop
 * hands it over with launcher_submit and gets it back, filled in, through
 * the done callback on the loop's thread, in submission order. The thread
 * touches no engine state: who the start was for (uid, index, attempt,
 * ticket) is only carried back for engine/shimwatch to match.
 */
#ifndef ENGINE_LAUNCHER_H
#define ENGINE_LAUNCHER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/cgroup.h"
#include "engine/runner.h"
#include "util/strbuf.h"

struct loop;

struct launch_req {
    /* who it is for, carried back untouched */
    char *uid;
    size_t index;
    int attempt;
    uint64_t ticket;
    /* what the thread does: mkdirs, cgroup_create, the log marker, runner_launch */
    char **mkdirs;        /* NULL-terminated */
    char **owned;         /* NULL-terminated: given to spec.user (a directory and what is in it) */
    char **entries_given; /* NULL-terminated: directories the engine writes in again (SSH keys);
                             they stay root's, mode 0711, only what is in them is given */
    struct cgroups *cg;
    char *cg_leaf; /* under trainjob/<uid>/ */
    char *refused; /* not launched: why (a member at its cgroup limit); NULL: launch */
    struct cgroup_limits limits;
    char *marker;            /* appended to spec.log_path before the spawn */
    struct runner_spec spec; /* every pointer owned by the request (cgroups: filled in) */
    /* what came of it */
    int rc; /* 0: launched; -1: err says why, nothing runs and the cgroups are gone */
    struct strbuf err;
    struct runner_launch *launch;
    bool cancelled;                   /* launcher_cancel: not launched when the thread gets to it */
    bool finished;                    /* launched (or refused): may be given back */
    struct launch_req *next;          /* the launcher's queue of requests not taken */
    struct launch_req *next_in_order; /* every request not given back, in submission order */
};

/* A request with nothing in it yet: the caller fills it with owned copies. */
struct launch_req *launch_req_new(void);
/* Frees a request and all it owns; an unread launch is let go without a kill. */
void launch_req_free(struct launch_req *r);

struct launcher;
typedef void (*launcher_done_fn)(void *ctx, struct launch_req *r);

/* Starts the thread; done(ctx, r) gets each request back on lp's thread (and frees it). */
struct launcher *launcher_new(struct loop *lp, launcher_done_fn done, void *ctx);
void launcher_submit(struct launcher *l, struct launch_req *r);
/*
 * Asks that r (submitted, not given back yet) not be launched: a start
 * cancelled while it waits for the thread spawns nothing. One the thread is
 * launching now goes on; its shim finds the start's claim taken.
 */
void launcher_cancel(struct launcher *l, struct launch_req *r);
/*
 * Removes path (taken) on a launch thread once no start waits for one; a
 * file already gone is no error. Without threads (or l NULL), at once.
 */
void launcher_unlink(struct launcher *l, char *path);
/*
 * Stops the threads after the request each is on, removes the files still
 * to remove, and frees what was not given back (unread launches let go
 * without a kill: their starts are on disk, and the next trainjobd adopts
 * them).
 */
void launcher_free(struct launcher *l);
/* Runs one request on the caller's thread (what the launch thread does with each). */
void launcher_run(struct launch_req *r);

#endif
