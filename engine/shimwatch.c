/*
 * shimwatch: the loop's eyes on each worker's shim — the report pipe of a
 * start in flight and its deadline, the pid file a shim of an earlier
 * trainjobd still owes, and the shim's end: a pidfd (the shim is not always
 * our child), or a look every second where the kernel gives no pidfd or the
 * descriptors run out. Each outcome goes to worker_ends.c
 * (lifecycle_worker_started, lifecycle_start_failed, lifecycle_shim_gone),
 * which decides what it means for the job; nothing here blocks.
 *
 * Owns one struct shimwatch per watched worker (eworker.watch), created by
 * shimwatch_launch, shimwatch_await or shimwatch_follow and freed by
 * shimwatch_drop; lifecycle_forget drops a job's watches before the job is
 * freed, so a watch's job and worker pointers stay valid while it lives.
 * A callback into worker_ends.c is always the last thing a handler does: it
 * may drop the watch, or free the job.
 */
#include "engine/engine.h" /* the core's interface; its private half is state.h */

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/launcher.h"
#include "engine/state.h"
#include "util/loop.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

/* How often a shim without a pidfd is looked at. */
#define CHECK_MS 1000

struct shimwatch {
    struct engine *eng;
    struct ejob *job;
    size_t index;                 /* the worker: job->workers[index] */
    struct runner_launch *launch; /* a start whose report is awaited */
    bool pending;                 /* its launch is with engine/launcher, not back yet */
    struct launch_req *req;       /* that launch's request, while pending */
    uint64_t ticket;              /* which launch request is this watch's (pending) */
    bool awaiting;                /* a shim of an earlier trainjobd holds the claim */
    pid_t pid;                    /* the shim */
    int pidfd;                    /* -1: none */
    uint64_t timer;               /* the start's deadline, or the next look without a pidfd */
};

static struct eworker *watched(struct shimwatch *sw)
{
    return &sw->job->workers[sw->index];
}

static int timeout_ms(const struct engine *eng)
{
    return eng->opt.start_timeout_ms > 0 ? eng->opt.start_timeout_ms : RUNNER_REPORT_TIMEOUT_MS;
}

/* Closes the pidfd, the report pipe and the timer; kill_shim SIGKILLs the shim first. */
static void release(struct shimwatch *sw, bool kill_shim)
{
    struct loop *lp = sw->eng->loop;
    if (sw->timer)
        loop_cancel(lp, sw->timer);
    sw->timer = 0;
    /* Only through a pidfd: a bare pid may name another process by now. */
    if (kill_shim && sw->pidfd >= 0)
        runner_pidfd_signal(sw->pidfd, SIGKILL);
    if (sw->pidfd >= 0) {
        loop_remove_fd(lp, sw->pidfd);
        close(sw->pidfd);
        sw->pidfd = -1;
    }
    if (sw->launch || sw->pending) {
        if (sw->launch) {
            loop_remove_fd(lp, runner_launch_fd(sw->launch));
            runner_launch_free(sw->launch, kill_shim);
        }
        if (sw->pending)
            launcher_cancel(sw->eng->launcher, sw->req); /* it comes back to no one */
        sw->launch = NULL;
        sw->pending = false;
        sw->req = NULL;
        if (sw->eng->launching > 0)
            sw->eng->launching--;
        lifecycle_spawn_more(sw->eng);
    }
    sw->awaiting = false;
}

void shimwatch_drop(struct engine *eng, struct eworker *w, bool kill_shim)
{
    (void)eng;
    struct shimwatch *sw = w->watch;
    if (sw == NULL)
        return;
    release(sw, kill_shim);
    free(sw);
    w->watch = NULL;
}

bool shimwatch_starting(const struct eworker *w)
{
    return w->watch && (w->watch->launch || w->watch->pending || w->watch->awaiting);
}

/* The watch of worker w, new or emptied. */
static struct shimwatch *watch_for(struct engine *eng, struct ejob *job, struct eworker *w)
{
    if (w->watch) {
        release(w->watch, false);
    } else {
        w->watch = xcalloc(1, sizeof *w->watch);
        w->watch->pidfd = -1;
    }
    struct shimwatch *sw = w->watch;
    sw->eng = eng;
    sw->job = job;
    sw->index = (size_t)(w - job->workers);
    return sw;
}

/* Is the pidfd really readable now (the loop may call with another fd's revents)? */
static bool pidfd_ready(int fd)
{
    struct pollfd p = {fd, POLLIN, 0};
    return poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

/* The worker runs: hand over to lifecycle with what the shim (or its pid file) said. */
static void started(struct shimwatch *sw, const struct runner_proc *proc)
{
    struct engine *eng = sw->eng;
    struct ejob *job = sw->job;
    struct eworker *w = watched(sw);
    release(sw, false);
    /*
     * One store transaction for what a start changes (the worker, the job
     * RUNNING, their events), as for a wave of ends: three commits apiece
     * were a third of the loop's store time.
     */
    engine_batch_begin(eng);
    lifecycle_worker_started(eng, job, w, proc);
    engine_batch_end(eng);
}

/* The start failed and nothing runs (killed when kill_shim): hand over to lifecycle. */
static void failed(struct shimwatch *sw, const char *why, bool kill_shim)
{
    struct engine *eng = sw->eng;
    struct ejob *job = sw->job;
    struct eworker *w = watched(sw);
    shimwatch_drop(eng, w, kill_shim);
    lifecycle_start_failed(eng, job, w, why);
}

/* The pid file of w's attempt, when it names the shim we expect (any, when pid is 0). */
static bool read_pidfile(struct shimwatch *sw, struct runner_proc *proc)
{
    struct eworker *w = watched(sw);
    char *status = lifecycle_status_path(sw->eng, sw->job, w);
    bool ok = runner_read_pidfile(status, proc) == 0 && (sw->pid <= 0 || proc->shim_pid == sw->pid);
    free(status);
    return ok;
}

static void on_report(void *ctx, int fd, short revents)
{
    (void)fd;
    (void)revents;
    struct shimwatch *sw = ctx;
    struct runner_proc proc;
    struct strbuf err = STRBUF_INIT;
    int rc = runner_launch_read(sw->launch, &proc, &err);
    if (rc == 1) {
        started(sw, &proc);
    } else if (rc < 0) {
        /* The shim said why, or died first: a worker it forked has its pid file, and dies. */
        struct runner_proc orphan;
        if (read_pidfile(sw, &orphan))
            runner_kill_group(&orphan, SIGKILL);
        failed(sw, strbuf_str(&err), false);
    }
    strbuf_free(&err);
}

static void on_pidfd(void *ctx, int fd, short revents);
static void on_check(void *ctx);

/* Watches the shim's end: a pidfd when there is one, else a look every CHECK_MS. */
static void watch_end(struct shimwatch *sw, int pidfd)
{
    sw->pidfd = pidfd;
    if (pidfd >= 0)
        loop_add_fd(sw->eng->loop, pidfd, POLLIN, on_pidfd, sw);
}

/* Deadline of a start (the report, or an earlier trainjobd's shim's pid file). */
static void on_deadline(void *ctx)
{
    struct shimwatch *sw = ctx;
    sw->timer = 0;
    struct eworker *w = watched(sw);
    struct runner_proc proc;
    if (read_pidfile(sw, &proc)) {
        /* It did start; only the report was late. */
        started(sw, &proc);
        return;
    }
    /* Nothing runs yet: take the claim so nothing will (or, lost, kill the shim that has it). */
    char *status = lifecycle_status_path(sw->eng, sw->job, w);
    int won = runner_claim(status);
    free(status);
    if (won == 0 && read_pidfile(sw, &proc)) {
        started(sw, &proc);
        return;
    }
    /* Only our own launch is killed: an earlier trainjobd's shim pid may name another process now.
     */
    bool ours = sw->launch != NULL;
    char why[200];
    snprintf(why, sizeof why, "trainjob-shim (pid %ld) did not report within %d s%s", (long)sw->pid,
             timeout_ms(sw->eng) / 1000, ours ? "; killed" : "");
    failed(sw, why, ours);
}

void shimwatch_launch(struct engine *eng, struct ejob *job, struct eworker *w, struct launch_req *r)
{
    static uint64_t tickets;
    struct shimwatch *sw = watch_for(eng, job, w);
    sw->pending = true;
    sw->pid = 0;
    sw->ticket = r->ticket = ++tickets;
    sw->req = r;
    eng->launching++;
    /* No deadline yet: starts queue for the thread one by one, and each shim gets its own. */
    launcher_submit(eng->launcher, r);
}

/*
 * A launch is back from engine/launcher. Its watch, still pending, follows
 * the shim from here: its report, its end. A watch dropped meanwhile (its
 * claim taken, its job gone, or started by the pid file at the deadline) lets
 * the launch go: a shim that finds the claim taken starts nothing, and the
 * attempt's cgroups go unless that attempt's worker is live.
 */
void shimwatch_launched(void *ctx, struct launch_req *r)
{
    struct engine *eng = ctx;
    struct ejob *job = engine_find_uid(eng, r->uid);
    struct eworker *w = job && r->index < job->worker_count ? &job->workers[r->index] : NULL;
    struct shimwatch *sw = w ? w->watch : NULL;
    if (sw == NULL || !sw->pending || sw->ticket != r->ticket) {
        bool runs = w && w->live && w->attempt == r->attempt;
        if (r->rc == 0 && !runs)
            cgroup_remove(r->cg, r->uid, r->cg_leaf);
        launch_req_free(r);
        return;
    }
    if (r->rc != 0) {
        failed(sw, strbuf_str(&r->err), false);
        launch_req_free(r);
        return;
    }
    sw->pending = false; /* still counted in eng->launching: the launch is */
    sw->req = NULL;
    sw->launch = r->launch;
    r->launch = NULL;
    sw->pid = runner_launch_pid(sw->launch);
    loop_add_fd(eng->loop, runner_launch_fd(sw->launch), POLLIN, on_report, sw);
    /*
     * Our child. One that ended at once may be reaped already (engine/main.c's
     * SIGCHLD): its pid is reused only after the kernel's pids have gone
     * round, and its report pipe has told all by then.
     */
    watch_end(sw, runner_pidfd_open(sw->pid));
    sw->timer = loop_add_timer(eng->loop, timeout_ms(eng), on_deadline, sw);
    launch_req_free(r);
}

static void on_owner_gone(void *ctx);

void shimwatch_await(struct engine *eng, struct ejob *job, struct eworker *w, pid_t owner)
{
    struct shimwatch *sw = watch_for(eng, job, w);
    sw->awaiting = true;
    sw->pid = owner > 0 ? owner : 0;
    int pidfd = owner > 0 ? runner_pidfd_open(owner) : -1;
    watch_end(sw, pidfd);
    if (owner > 0 && pidfd < 0 && errno == ESRCH)
        sw->timer = loop_add_timer(eng->loop, 0, on_owner_gone, sw); /* gone already */
    else
        sw->timer = loop_add_timer(eng->loop, timeout_ms(eng), on_deadline, sw);
}

void shimwatch_pidfile(struct engine *eng, struct ejob *job, struct eworker *w)
{
    (void)eng;
    (void)job;
    struct shimwatch *sw = w->watch;
    struct runner_proc proc;
    /* A launch learns from its pipe; only a shim of an earlier trainjobd is awaited here. */
    if (sw && sw->awaiting && read_pidfile(sw, &proc))
        started(sw, &proc);
}

void shimwatch_follow(struct engine *eng, struct ejob *job, struct eworker *w)
{
    struct shimwatch *sw = watch_for(eng, job, w);
    sw->pid = w->proc.shim_pid;
    int pidfd = runner_pidfd_open(sw->pid);
    /* Opened after the look at its start time: a pid reused since is not taken for the shim. */
    if (pidfd >= 0 && !runner_alive(&w->proc)) {
        close(pidfd);
        pidfd = -1;
    }
    watch_end(sw, pidfd);
    if (pidfd < 0)
        sw->timer = loop_add_timer(eng->loop, 0, on_check, sw);
}

/* The shim is gone: lifecycle decides (its status file, or a lost worker). */
static void gone(struct shimwatch *sw)
{
    struct engine *eng = sw->eng;
    struct ejob *job = sw->job;
    struct eworker *w = watched(sw);
    shimwatch_drop(eng, w, false);
    lifecycle_shim_gone(eng, job, w);
}

static void on_check(void *ctx)
{
    struct shimwatch *sw = ctx;
    sw->timer = 0;
    if (runner_alive(&watched(sw)->proc))
        sw->timer = loop_add_timer(sw->eng->loop, CHECK_MS, on_check, sw);
    else
        gone(sw);
}

/* The shim that holds an awaited claim has ended: it started the worker (pid file), or not. */
static void owner_gone(struct shimwatch *sw)
{
    struct runner_proc proc;
    if (read_pidfile(sw, &proc)) {
        started(sw, &proc);
        return;
    }
    char why[160];
    snprintf(why, sizeof why, "trainjob-shim (pid %ld) died before it started the worker",
             (long)sw->pid);
    failed(sw, why, false);
}

static void on_owner_gone(void *ctx)
{
    struct shimwatch *sw = ctx;
    sw->timer = 0;
    owner_gone(sw);
}

static void on_pidfd(void *ctx, int fd, short revents)
{
    (void)revents;
    struct shimwatch *sw = ctx;
    if (!pidfd_ready(fd))
        return;
    if (sw->launch) {
        /* Dead before its report was read: the pipe holds the line, or its EOF. */
        loop_remove_fd(sw->eng->loop, fd);
        close(fd);
        sw->pidfd = -1;
        on_report(sw, runner_launch_fd(sw->launch), POLLIN);
        return;
    }
    if (sw->awaiting) {
        owner_gone(sw);
        return;
    }
    gone(sw);
}
