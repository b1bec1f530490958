/*
 * worker_ends: what happens when a worker of a job ends or reports — a
 * success, a start that failed, a shim gone, or a failure the fault policy
 * (api/fault) decides on: restart the worker or the job (with crash-loop
 * back-off), mark its node unschedulable, or fail the job. Also re-adopting
 * workers after a restart of trainjobd. Called by engine.c (inotify),
 * engine/shimwatch (reports and ends) and requests.c (node marks).
 */
#include "engine/engine.h" /* the core's interface; its private half is state.h */

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/fault.h"
#include "engine/cgroup.h"
#include "engine/launcher.h"
#include "engine/state.h"
#include "util/loop.h"
#include "util/timefmt.h"
#include "util/xalloc.h"

/* ---- worker ends ------------------------------------------------------------ */

static bool all_succeeded(const struct ejob *job)
{
    for (size_t i = 0; i < job->worker_count; i++)
        if (job->workers[i].phase != WORKER_SUCCEEDED)
            return false;
    return job->worker_count > 0;
}

static bool node_excluded(const struct ejob *job, const char *node)
{
    for (size_t i = 0; i < job->excluded_count; i++)
        if (strcmp(job->excluded[i], node) == 0)
            return true;
    return false;
}

/* Whether the job's pool has a node an operator and the job's marks leave it. */
static bool node_left(struct engine *eng, const struct ejob *job)
{
    const struct config_pool *pool = config_pool(&eng->cfg, job->pool);
    for (size_t n = 0; n < eng->cfg.node_count; n++) {
        const struct config_node *c = &eng->cfg.nodes[n];
        if (!c->unschedulable && (!pool || config_pool_has_node(pool, c->name)) &&
            !node_excluded(job, c->name))
            return true;
    }
    return false;
}

/*
 * Adds node to the job's excluded list and records NODE_MARKED. Only the
 * next placement sees the list (a scheduling pass, a restart, a RESTART_POD
 * that must move): workers live on the node now are left where they are.
 * The caller saves the job, as it has more to change first.
 */
bool lifecycle_mark_node(struct engine *eng, struct ejob *job, const char *node, const char *by)
{
    bool already = node_excluded(job, node);
    if (already && by == NULL)
        return false; /* a fault rule firing again on the same node is not news */
    if (!already) {
        job->excluded =
            xreallocarray(job->excluded, job->excluded_count + 1, sizeof *job->excluded);
        job->excluded[job->excluded_count++] = xstrdup(node);
        eng->changes++; /* a kept pass read the job without it */
    }
    struct job_event ev = {0};
    ev.kind = EVENT_NODE_MARKED;
    ev.node = (char *)node;
    char text[400];
    if (by == NULL)
        snprintf(text, sizeof text, "node %s marked unschedulable for this job", node);
    else if (!already && !node_left(eng, job))
        snprintf(text, sizeof text,
                 "node %s marked unschedulable for this job by %s; no other node of pool %s can "
                 "take it: it waits until the mark is lifted (trainjob node unmark %s %s)",
                 node, by, job->pool ? job->pool : "-", job->name, node);
    else if (!already)
        snprintf(text, sizeof text, "node %s marked unschedulable for this job by %s", node, by);
    else
        snprintf(text, sizeof text,
                 "node %s was already marked unschedulable for this job; %s marked it again", node,
                 by);
    ev.message = text;
    engine_event(eng, job, &ev);
    return !already;
}

void lifecycle_unmark_node(struct engine *eng, struct ejob *job, const char *node, const char *by)
{
    for (size_t i = 0; i < job->excluded_count; i++) {
        if (strcmp(job->excluded[i], node) != 0)
            continue;
        free(job->excluded[i]);
        job->excluded[i] = job->excluded[--job->excluded_count];
        eng->changes++; /* a kept pass read the job with it */
        break;
    }
    struct job_event ev = {0};
    ev.kind = EVENT_NODE_MARKED;
    ev.node = (char *)node;
    char text[300];
    snprintf(text, sizeof text, "node %s unmarked for this job by %s: it may be placed there again",
             node, by);
    ev.message = text;
    engine_event(eng, job, &ev);
}

/* A node the pool allows, not marked for the job, with room for one more worker. */
static const char *node_for_one_worker(struct engine *eng, struct ejob *job)
{
    const struct config_pool *pool = config_pool(&eng->cfg, job->pool);
    for (size_t n = 0; n < eng->cfg.node_count; n++) {
        const struct config_node *c = &eng->cfg.nodes[n];
        if (c->unschedulable || (pool && !config_pool_has_node(pool, c->name)))
            continue;
        if (node_excluded(job, c->name))
            continue;
        int gpus = 0, cpus = 0;
        int64_t mem = 0;
        for (size_t j = 0; j < eng->job_count; j++) {
            const struct ejob *o = eng->jobs[j];
            for (size_t i = 0; i < o->worker_count; i++) {
                if (o->workers[i].live && o->workers[i].node &&
                    strcmp(o->workers[i].node, c->name) == 0) {
                    gpus += o->gpus;
                    cpus += o->cpus;
                    mem += o->memory_mib;
                }
            }
        }
        if (gpus + job->gpus <= c->gpus && cpus + job->cpus <= c->cpus &&
            mem + job->memory_mib <= c->memory_mib)
            return c->name;
    }
    return NULL;
}

/* Restarts one failed worker (RESTART_POD), moving it off a node marked for the job. */
static void restart_pod(struct engine *eng, struct ejob *job, struct eworker *w, bool move,
                        const char *why)
{
    /* Marked by this rule, or earlier by a person: the pod moves. */
    if (move || (w->node && node_excluded(job, w->node))) {
        const char *node = node_for_one_worker(eng, job);
        if (node == NULL) {
            lifecycle_stop(eng, job, AFTER_STOP_RESTART, why);
            return;
        }
        free(w->node);
        w->node = xstrdup(node);
        assign_devices(eng, NULL, w, job->gpus);
    }
    /* Recorded and saved here; launched on the next turn (a failure fails the job). */
    intend_start(eng, job, w);
    engine_save(eng, job);
    engine_publish(eng, job);
}

/* "40s", "2m30s": a back-off delay as the reason shows it. */
static void format_delay(long long ms, char *out, size_t size)
{
    long long s = (ms + 999) / 1000;
    if (s >= 60 && s % 60)
        snprintf(out, size, "%lldm%llds", s / 60, s % 60);
    else if (s >= 60)
        snprintf(out, size, "%lldm", s / 60);
    else if (ms < 1000)
        snprintf(out, size, "%lldms", ms);
    else
        snprintf(out, size, "%llds", s);
}

/*
 * Counts a restart into the job's crash loop (reset by a stable run of the
 * worker) and sets when it may happen: the CrashLoopBackOff delay.
 */
static long long crash_loop_delay(struct engine *eng, struct ejob *job, const struct eworker *w,
                                  int restart)
{
    struct config_limits lim;
    config_effective_limits(&eng->cfg, &lim);
    int64_t now = time_now_ms();
    int64_t started = w->start_time ? time_parse_rfc3339(w->start_time) : -1;
    long long ran = started >= 0 && started <= now ? now - started : 0;
    job->crash_loops = fault_crash_loops(job->crash_loops, ran, lim.restart_reset_after_ms);
    long long delay =
        fault_backoff_ms(job->crash_loops, lim.restart_delay_ms, lim.restart_delay_max_ms);
    job->backoff_until_ms = delay > 0 ? now + delay : 0;
    free(job->backoff_reason);
    job->backoff_reason = NULL;
    if (delay > 0) {
        char d[32];
        format_delay(delay, d, sizeof d);
        job->backoff_reason =
            xasprintf("back-off %s restarting failed %s (restart %d)", d, w->name, restart);
    }
    return delay;
}

/* The back-off timer: restarts due pods, lets due jobs be placed, re-arms for the next. */
static void backoff_due(void *ctx)
{
    struct engine *eng = ctx;
    eng->backoff_timer = 0;
    int64_t now = time_now_ms();
    for (size_t j = 0; j < eng->job_count; j++) {
        struct ejob *job = eng->jobs[j];
        if (job->backoff_until_ms == 0 || job->backoff_until_ms > now)
            continue;
        job->backoff_until_ms = 0;
        char *worker = job->backoff_worker;
        job->backoff_worker = NULL;
        if (worker == NULL) {
            lifecycle_schedule_soon(eng); /* a RESTARTING job may be placed now */
            continue;
        }
        free(worker);
        if (job->after_stop != AFTER_STOP_NONE || job->state != JOB_STATE_RUNNING)
            continue; /* stopped meanwhile */
        engine_set_state(eng, job, job->state, NULL);
        /* Every pod whose RESTART_POD waited: in a RUNNING job, the failed ones not live. */
        for (size_t i = 0; i < job->worker_count && job->after_stop == AFTER_STOP_NONE; i++) {
            struct eworker *w = &job->workers[i];
            if (!w->live && w->phase == WORKER_FAILED)
                restart_pod(eng, job, w, false, job->backoff_reason);
        }
    }
    lifecycle_arm_backoff(eng);
}

void lifecycle_arm_backoff(struct engine *eng)
{
    int64_t first = 0;
    for (size_t j = 0; j < eng->job_count; j++) {
        int64_t t = eng->jobs[j]->backoff_until_ms;
        if (t > 0 && (first == 0 || t < first))
            first = t;
    }
    if (eng->backoff_timer)
        loop_cancel(eng->loop, eng->backoff_timer);
    eng->backoff_timer = 0;
    if (first > 0) {
        int64_t wait = first - time_now_ms();
        eng->backoff_timer = loop_add_timer(eng->loop, wait > 0 ? (int)wait : 0, backoff_due, eng);
    }
}

static void apply_fault(struct engine *eng, struct ejob *job, struct eworker *w, int exit_code)
{
    struct fault_decision d;
    const struct fault_tolerance *ft = &ejob_spec(eng, job)->fault_tolerance;
    fault_decide(ft, job->restarts, w->name, exit_code, &d);
    struct job_event ev = {0};
    ev.kind = EVENT_FAULT;
    ev.worker = w->name;
    ev.has_exit_code = true;
    ev.exit_code = exit_code;
    ev.has_rule = d.rule >= 0;
    ev.rule = d.rule + 1;
    ev.action = (char *)enum_name(&ft_action_names, (int)d.action);
    ev.has_restarts_used = true;
    ev.restarts_used = d.restarts_used_after;
    ev.has_restart_limit = true;
    ev.restart_limit = ft->present && ft->has_backoff_limit ? ft->backoff_limit : 0;
    ev.node = w->node;
    ev.message = d.text;
    engine_event(eng, job, &ev);
    /* The last state keeps the decision beside the exit (worker_end set the rest). */
    struct worker_last_state *ls = &w->last_state;
    ls->has_rule = ev.has_rule;
    ls->rule = ev.rule;
    free(ls->action);
    ls->action = xstrdup(ev.action);
    free(ls->message);
    ls->message = xstrdup(d.text);
    if (d.mark_node && w->node)
        lifecycle_mark_node(eng, job, w->node, NULL);
    job->restarts = d.restarts_used_after;
    long long delay =
        d.outcome == FAULT_FAIL_JOB ? 0 : crash_loop_delay(eng, job, w, d.restarts_used_after);
    switch (d.outcome) {
    case FAULT_FAIL_JOB:
        lifecycle_stop(eng, job, AFTER_STOP_FAIL, d.text);
        break;
    case FAULT_RESTART_JOB:
        lifecycle_stop(eng, job, AFTER_STOP_RESTART, d.text);
        break;
    case FAULT_RESTART_POD:
        w->restarts++;
        if (delay > 0) {
            /* The pod waits out its back-off; the job says so. */
            free(job->backoff_worker);
            job->backoff_worker = xstrdup(w->name);
            engine_set_state(eng, job, job->state, job->backoff_reason);
            lifecycle_arm_backoff(eng);
            break;
        }
        restart_pod(eng, job, w, d.mark_node, d.text);
        break;
    }
}

/* Is every worker's start reported? Then a STARTING job is RUNNING (returns true: saved). */
static bool maybe_running(struct engine *eng, struct ejob *job)
{
    if (job->state != JOB_STATE_STARTING || job->after_stop != AFTER_STOP_NONE)
        return false;
    for (size_t i = 0; i < job->worker_count; i++)
        if (job->workers[i].starting)
            return false;
    engine_set_state(eng, job, JOB_STATE_RUNNING, NULL);
    return true;
}

/* w runs as proc says: its start is over (no save; the caller saves). */
static void note_started(struct eworker *w, const struct runner_proc *proc)
{
    w->proc = *proc;
    w->starting = false;
    w->phase = WORKER_RUNNING;
    w->stopped = false;
    set_time(&w->start_time);
    free(w->finish_time);
    w->finish_time = NULL;
}

void lifecycle_worker_started(struct engine *eng, struct ejob *job, struct eworker *w,
                              const struct runner_proc *proc)
{
    note_started(w, proc);
    shimwatch_follow(eng, job, w);
    if (job->after_stop != AFTER_STOP_NONE) {
        /* A stop came while it started; past the grace period (no kill timer) it is a SIGKILL. */
        runner_signal(&w->proc, job->kill_timer ? SIGTERM : SIGKILL);
        w->phase = WORKER_TERMINATING;
    }
    if (!maybe_running(eng, job)) {
        engine_save(eng, job);
        engine_publish(eng, job);
    }
}

void lifecycle_start_failed(struct engine *eng, struct ejob *job, struct eworker *w,
                            const char *why)
{
    shimwatch_drop(eng, w, false);
    w->starting = false;
    w->live = false;
    /* Nothing runs in its cgroups: the shim removed them, unless it died first. */
    char *leaf = worker_cgroup_leaf(w);
    cgroup_remove(eng->opt.cgroups, job->uid, leaf);
    free(leaf);
    char text[600];
    snprintf(text, sizeof text, "could not start %s: %s", w->name, why);
    engine_log("job %s: %s", job->name, text);
    struct job_event ev = {0};
    ev.kind = EVENT_WORKER;
    ev.worker = w->name;
    ev.node = w->node;
    ev.message = text;
    engine_event(eng, job, &ev);
    if (job->after_stop == AFTER_STOP_NONE) {
        lifecycle_stop(eng, job, AFTER_STOP_FAIL, text);
    } else if (!job_has_live_workers(job)) {
        engine_save(eng, job);
        finish_stop(eng, job);
    } else {
        engine_save(eng, job);
        engine_publish(eng, job);
    }
}

static void worker_end(struct engine *eng, struct ejob *job, struct eworker *w, int exit_code,
                       const char *why);

/*
 * w's end of its own becomes its last state (apply_fault adds the decision).
 * Ends trainjobd caused are not kept: they would hide the failure behind them.
 */
static void note_last_state(struct eworker *w, int exit_code, const char *meaning)
{
    struct worker_last_state *ls = &w->last_state;
    worker_last_state_free(ls);
    ls->present = true;
    ls->has_exit_code = true;
    ls->exit_code = exit_code;
    ls->exit_reason = meaning ? xstrdup(meaning) : NULL;
    ls->start_time = w->start_time ? xstrdup(w->start_time) : NULL;
    ls->finish_time = w->finish_time ? xstrdup(w->finish_time) : NULL;
}

/* Why trainjobd ended a job's workers, as the worker's end event says it. */
static const char *stop_cause(const struct ejob *job)
{
    switch (job->after_stop) {
    case AFTER_STOP_SUSPEND: /* "stopped by alice": the request's reason names who */
        return job->after_stop_reason ? job->after_stop_reason : "stopped by the user";
    case AFTER_STOP_RESTART:
        return "stopped: the job restarts";
    case AFTER_STOP_REQUEUE:
        return "stopped: the job was preempted";
    case AFTER_STOP_FAIL:
        return "stopped: the job failed";
    case AFTER_STOP_DELETE:
        return "stopped: the job is being deleted";
    case AFTER_STOP_NONE:
        break;
    }
    return "stopped by trainjobd";
}

void lifecycle_shim_gone(struct engine *eng, struct ejob *job, struct eworker *w)
{
    char *status = lifecycle_status_path(eng, job, w);
    int code;
    if (runner_read_status(status, &code) == 1) {
        free(status);
        lifecycle_worker_ended(eng, job, w, code);
        return;
    }
    /* Gone without a status: its worker lost its supervisor, and goes too. */
    runner_refresh(&w->proc, status);
    free(status);
    runner_kill_group(&w->proc, SIGKILL);
    char why[160];
    snprintf(why, sizeof why, "trainjob-shim (pid %ld) died; its worker was killed",
             (long)w->proc.shim_pid);
    engine_log("job %s: %s: %s", job->name, w->name, why);
    worker_end(eng, job, w, 137, why);
}

void lifecycle_worker_ended(struct engine *eng, struct ejob *job, struct eworker *w, int exit_code)
{
    worker_end(eng, job, w, exit_code, NULL);
}

/* w has ended with exit_code (why: what ended it, when trainjobd knows better than the code). */
static void worker_end(struct engine *eng, struct ejob *job, struct eworker *w, int exit_code,
                       const char *why)
{
    /* It holds nothing now: a kept pass is stale, and what it held may start a waiting job
     * even while the job's other workers run. */
    eng->changes++;
    lifecycle_schedule_soon(eng);
    char *status = lifecycle_status_path(eng, job, w);
    shimwatch_drop(eng, w, false);
    if (w->starting) {
        /* Ended before its report was read: it did start. */
        struct runner_proc proc = w->proc;
        runner_read_pidfile(status, &proc);
        note_started(w, &proc);
        maybe_running(eng, job);
    }
    /* The shim removed the attempt's cgroup, unless it died; first, as what follows may
     * start the next attempt or free the job. */
    char *leaf = worker_cgroup_leaf(w);
    cgroup_remove(eng->opt.cgroups, job->uid, leaf);
    free(leaf);
    char uid[64];
    snprintf(uid, sizeof uid, "%s", job->uid);
    w->live = false;
    w->has_exit_code = true;
    w->exit_code = exit_code;
    w->phase = exit_code == 0 ? WORKER_SUCCEEDED : WORKER_FAILED;
    /* An end we asked for (the job stops, restarts, is preempted or deleted) is no failure. */
    w->stopped = exit_code != 0 && job->after_stop != AFTER_STOP_NONE;
    set_time(&w->finish_time);
    const char *meaning = why ? why : fault_exit_meaning(exit_code);
    if (!w->stopped)
        note_last_state(w, exit_code, meaning);
    struct job_event ev = {0};
    ev.kind = EVENT_WORKER;
    ev.worker = w->name;
    ev.has_exit_code = !w->stopped;
    ev.exit_code = exit_code;
    ev.node = w->node;
    char text[300];
    if (w->stopped)
        snprintf(text, sizeof text, "%s %s (exit %d)", w->name, stop_cause(job), exit_code);
    else
        snprintf(text, sizeof text, "%s exited %d%s%s%s", w->name, exit_code, meaning ? " (" : "",
                 meaning ? meaning : "", meaning ? ")" : "");
    ev.message = text;
    engine_event(eng, job, &ev);

    if (job->after_stop != AFTER_STOP_NONE) {
        /* Ends we caused are not faults. */
        engine_save(eng, job);
        if (!job_has_live_workers(job))
            finish_stop(eng, job);
        else
            engine_publish(eng, job);
    } else if (exit_code == 0) {
        if (all_succeeded(job)) {
            engine_set_state(eng, job, JOB_STATE_SUCCEEDED, NULL);
            engine_end_followers(eng, job);
            lifecycle_schedule_soon(eng);
        } else {
            engine_save(eng, job);
            engine_publish(eng, job);
        }
    } else {
        apply_fault(eng, job, w, exit_code);
    }
    /*
     * Once the end is on disk the status file has done its work (else a retry
     * removes it). The job may be gone: a delete finished with this end.
     */
    struct ejob *still = engine_find_uid(eng, uid);
    if (still == NULL || engine_job_saved(eng, still))
        lifecycle_forget_end_files(eng, status);
    free(status);
}

void lifecycle_forget_end_files(struct engine *eng, const char *status)
{
    /* Off the loop's thread: the end is on disk, nothing reads these again. */
    launcher_unlink(eng->launcher, xstrdup(status));
    launcher_unlink(eng->launcher, xasprintf("%s.pid", status));
    launcher_unlink(eng->launcher, xasprintf("%s.claim", status));
    /* the shim's, if it was killed */
    launcher_unlink(eng->launcher, xasprintf("%s.script", status));
}

/*
 * After a restart, a start that was recorded but whose report trainjobd
 * never took. Its pid file says the shim started it (adopted below as any
 * running worker: returns false). Without one, the claim decides: won, no
 * shim ever ran this attempt and none will — the next attempt is recorded
 * (unless the job is stopping); lost, a shim has it and its pid file, its
 * death or the deadline follows (shimwatch_await).
 */
static bool adopt_start(struct engine *eng, struct ejob *job, struct eworker *w)
{
    char *status = lifecycle_status_path(eng, job, w);
    struct runner_proc proc;
    bool done = true;
    if (runner_read_pidfile(status, &proc) == 0) {
        note_started(w, &proc);
        done = false;
    } else if (runner_claim(status) != 0 || runner_claim_owner(status) < 0) {
        /* Won now, or by an earlier trainjobd that cancelled this start and died before saying so.
         */
        engine_log("job %s: %s: attempt %d never started%s", job->name, w->name, w->attempt,
                   job->after_stop == AFTER_STOP_NONE ? "; starting it again" : "");
        char *leaf = worker_cgroup_leaf(w); /* made for it before the engine went */
        cgroup_remove(eng->opt.cgroups, job->uid, leaf);
        free(leaf);
        w->starting = false;
        w->live = false;
        if (job->after_stop == AFTER_STOP_NONE)
            intend_start(eng, job, w);
    } else {
        pid_t owner = runner_claim_owner(status);
        engine_log("job %s: %s: a shim holds attempt %d (pid %ld); waiting for its report",
                   job->name, w->name, w->attempt, (long)owner);
        shimwatch_await(eng, job, w, owner);
    }
    free(status);
    return done;
}

bool lifecycle_adopt(struct engine *eng, struct ejob *job)
{
    bool backing_off_before = job->backoff_until_ms > 0; /* read now: job may be freed below */
    char uid[64];
    snprintf(uid, sizeof uid, "%s", job->uid);
    for (size_t i = 0; i < job->worker_count; i++) {
        struct eworker *w = &job->workers[i];
        if (!w->live)
            continue;
        if (w->starting && adopt_start(eng, job, w))
            continue;
        char *status = lifecycle_status_path(eng, job, w);
        int code;
        int rc = runner_read_status(status, &code);
        if (rc == 1) {
            free(status);
            lifecycle_worker_ended(eng, job, w, code);
        } else {
            runner_refresh(&w->proc, status);
            free(status);
            if (runner_alive(&w->proc))
                shimwatch_follow(eng, job, w);
            else
                lifecycle_shim_gone(eng, job,
                                    w); /* its status, or lost: the machine restarted, or a kill */
        }
        if (engine_find_uid(eng, uid) == NULL)
            return false; /* that end finished a delete: the job is gone */
    }
    bool starting = false;
    for (size_t i = 0; i < job->worker_count; i++)
        starting |= job->workers[i].live && job->workers[i].starting;
    if (job->after_stop != AFTER_STOP_NONE) {
        if (!job_has_live_workers(job))
            finish_stop(eng, job);
        else
            lifecycle_stop(eng, job, job->after_stop, job->after_stop_reason);
        if (engine_find_uid(eng, uid) == NULL)
            return false; /* a delete finished */
    } else if (starting) {
        /* Saves the starts recorded again before they are launched (a pod restart keeps RUNNING).
         */
        if (job->state != JOB_STATE_STARTING && job->state != JOB_STATE_RUNNING)
            engine_set_state(eng, job, JOB_STATE_STARTING, NULL);
        else
            engine_save(eng, job);
    } else if (job_has_live_workers(job) && job->state != JOB_STATE_RUNNING) {
        engine_set_state(eng, job, JOB_STATE_RUNNING, NULL);
    }
    if (backing_off_before)
        lifecycle_arm_backoff(eng); /* a back-off that was running when trainjobd stopped */
    return true;
}

bool lifecycle_cgroup_live(void *ctx, const char *job_uid, const char *leaf)
{
    struct ejob *job = engine_find_uid(ctx, job_uid);
    for (size_t i = 0; job && i < job->worker_count; i++) {
        const struct eworker *w = &job->workers[i];
        char *mine = worker_cgroup_leaf(w);
        bool same = w->live && strcmp(mine, leaf) == 0;
        free(mine);
        if (same)
            return true;
    }
    return false;
}

char *lifecycle_cgroup_refusal(struct engine *eng, const struct ejob *job)
{
    if (cgroup_enforced(eng->opt.cgroups) == 0)
        return NULL;
    struct config_limits lim;
    config_effective_limits(&eng->cfg, &lim);
    size_t held = 0; /* job->creator is interned: one pointer per member */
    for (size_t j = 0; j < eng->job_count; j++) {
        const struct ejob *o = eng->jobs[j];
        if (o->creator != job->creator)
            continue;
        for (size_t i = 0; i < o->worker_count; i++)
            held += o->workers[i].live;
    }
    /* The worker asking is live already. */
    if (held <= (size_t)lim.cgroups_per_member)
        return NULL;
    return xasprintf("%s holds %zu workers' cgroups, the most one member may "
                     "(limits.cgroups_per_member: %d)",
                     job->creator ? job->creator : "this member", held - 1, lim.cgroups_per_member);
}

void lifecycle_forget(struct engine *eng, struct ejob *job)
{
    for (size_t i = 0; i < job->worker_count; i++)
        shimwatch_drop(eng, &job->workers[i], false);
}
