/*
 * lifecycle: what happens to an accepted job — scheduling passes (through
 * the pure engine/sched), starting workers through the shim (engine/runner)
 * with the environment engine/worker_env builds, stopping them (SIGTERM,
 * then SIGKILL after the grace period), and each worker's end: success,
 * or the fault policy's decision (api/fault) applied and recorded.
 *
 * A job waits while it is QUEUEING or RESTARTING with no live worker; it
 * holds capacity while any worker is live. Stopping is asynchronous: the
 * job remembers what to do once its last worker has ended (after_stop).
 *
 * Starting is asynchronous too, and at most once per attempt: a start is
 * first recorded (attempt + 1, `starting`, saved with the job) and queued;
 * its shim is launched only on a later loop turn, once that record is
 * committed (spawn_intended, at most MAX_LAUNCHING shims in flight);
 * engine/shimwatch turns the shim's report, its silence or its death into
 * lifecycle_worker_started / lifecycle_start_failed / lifecycle_shim_gone.
 * The job is STARTING until every worker has reported, then RUNNING. A start
 * that must not happen any more (a stop, a deadline, a restart of trainjobd
 * that finds no pid file) is cancelled by taking its claim (runner_claim):
 * won, nothing of that attempt ever runs; lost, the shim has it and the stop
 * reaches the worker as soon as its report arrives.
 *
 * The scheduling passes are engine/schedpass.c's; what happens when a
 * worker ends or reports, engine/worker_ends.c's.
 */
#include "engine/engine.h" /* the core's interface; its private half is state.h */

#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "api/fault.h"
#include "api/jobspec.h"
#include "engine/cgroup.h"
#include "engine/launcher.h"
#include "engine/runas.h"
#include "engine/ssh_keys.h"
#include "engine/state.h"
#include "engine/statelock.h"
#include "engine/worker_env.h"
#include "util/fileio.h"
#include "util/loop.h"
#include "util/strbuf.h"
#include "util/timefmt.h"
#include "util/xalloc.h"

/* Where a sandboxed worker sees the files the platform writes for its job, and works. */
#define PLATFORM_MOUNT JOBSPEC_PLATFORM_DIR "/platform"
#define WORKDIR_MOUNT JOBSPEC_PLATFORM_DIR "/work"
/* Shims launched and not reported yet, at most (descriptors, and a fork storm). */
#define MAX_LAUNCHING 64
/* Time a loop turn spends handing starts to the launcher at most. */
#define SPAWN_TURN_NS 2000000

bool job_has_live_workers(const struct ejob *job)
{
    for (size_t i = 0; i < job->worker_count; i++)
        if (job->workers[i].live)
            return true;
    return false;
}

/* Is the job's crash-loop back-off still running (its restart not due yet)? */
static bool backing_off(const struct ejob *job)
{
    return job->backoff_until_ms > time_now_ms();
}

bool job_waiting(const struct ejob *job)
{
    return (job->state == JOB_STATE_QUEUEING || job->state == JOB_STATE_RESTARTING) &&
           job->after_stop == AFTER_STOP_NONE && !job_has_live_workers(job) && !backing_off(job);
}

char *lifecycle_status_path(struct engine *eng, const struct ejob *job, const struct eworker *w)
{
    return xasprintf("%s/%s.%d.%s", eng->status_dir, job->uid, w->attempt, w->name);
}

char *lifecycle_log_path(struct engine *eng, const struct ejob *job, const char *worker)
{
    return xasprintf("%s/%s.%s.log", eng->log_dir, job->uid, worker);
}

void set_time(char **field)
{
    char buf[TIMEFMT_RFC3339_LEN];
    time_rfc3339(time_now_ms(), buf);
    free(*field);
    *field = xstrdup(buf);
}

int node_index(const struct engine *eng, const char *name)
{
    for (size_t i = 0; name && i < eng->cfg.node_count; i++)
        if (strcmp(eng->cfg.nodes[i].name, name) == 0)
            return (int)i;
    return -1;
}

/* ---- devices ---------------------------------------------------------- */

/*
 * Marks in used[] (size gpus) the device indices held on node by live
 * workers and by the workers of `placing` (a job being placed: none live
 * yet) already given devices in this placement.
 */
static void devices_in_use(struct engine *eng, const char *node, const struct ejob *placing,
                           bool *used, int gpus)
{
    for (size_t j = 0; j < eng->job_count; j++) {
        struct ejob *job = eng->jobs[j];
        for (size_t i = 0; i < job->worker_count; i++) {
            struct eworker *w = &job->workers[i];
            bool holds = w->live || job == placing;
            if (!holds || !w->node || strcmp(w->node, node) != 0 || !w->devices)
                continue;
            for (const char *p = w->devices; *p;) {
                int d = atoi(p);
                if (d >= 0 && d < gpus)
                    used[d] = true;
                p += strcspn(p, ",");
                p += *p == ',';
            }
        }
    }
}

/*
 * Gives worker w `count` free device indices on its node ("" for none).
 * placing: w's job when its workers are placed together (see devices_in_use).
 */
void assign_devices(struct engine *eng, const struct ejob *placing, struct eworker *w, int count)
{
    free(w->devices);
    w->devices = NULL; /* not its own obstacle */
    int n = node_index(eng, w->node);
    int gpus = n >= 0 ? eng->cfg.nodes[n].gpus : 0;
    if (count <= 0 || gpus <= 0) {
        w->devices = xstrdup("");
        return;
    }
    bool *used = xcalloc((size_t)gpus, sizeof *used);
    devices_in_use(eng, w->node, placing, used, gpus);
    struct strbuf sb = STRBUF_INIT;
    for (int d = 0; d < gpus && count > 0; d++) {
        if (!used[d]) {
            strbuf_addf(&sb, "%s%d", sb.len ? "," : "", d);
            count--;
        }
    }
    free(used);
    w->devices = strbuf_detach(&sb, NULL);
}

static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    int port = 0;
    if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    if (fd >= 0)
        close(fd);
    return port ? port : 29500;
}

/* ---- starting workers -------------------------------------------------- */

static const char *const passed_env[] = {"PATH",    "HOME",   "LANG", "LC_ALL", "USER",
                                         "LOGNAME", "TMPDIR", "TZ",   NULL};

/* The variables trainjobd passes on from its own environment. */
static void base_env(struct envv *base)
{
    for (size_t i = 0; passed_env[i]; i++) {
        const char *v = getenv(passed_env[i]);
        if (v)
            envv_set(base, passed_env[i], v);
    }
    if (envv_get(base, "PATH") == NULL)
        envv_set(base, "PATH", "/usr/local/bin:/usr/bin:/bin");
}

/* The line a worker's log gets before each attempt: "--- <time>: worker-0 started on n1 (attempt 1)
 * ---". */
static char *log_marker(const struct eworker *w)
{
    char stamp[TIMEFMT_RFC3339_LEN];
    time_rfc3339(time_now_ms(), stamp);
    return xasprintf("--- %s: %s %s on %s (attempt %d) ---\n", stamp, w->name,
                     w->attempt > 1 ? "restarted" : "started", w->node, w->attempt);
}

/* The name of a worker attempt's cgroup under its job's: "<worker>-<attempt>". */
char *worker_cgroup_leaf(const struct eworker *w)
{
    return xasprintf("%s-%d", w->name, w->attempt);
}

/* A NULL-terminated copy of v (NULL-terminated too; NULL: an empty one). */
static char **strings_copy(char *const *v)
{
    size_t n = 0;
    while (v && v[n])
        n++;
    char **c = xcalloc(n + 1, sizeof *c);
    for (size_t i = 0; i < n; i++)
        c[i] = xstrdup(v[i]);
    return c;
}

static char *dup_or_null(const char *s)
{
    return s ? xstrdup(s) : NULL;
}

/*
 * Launches the recorded start of one worker on its node: what needs the
 * job is decided here, and engine/launcher does the rest (directories,
 * cgroups, the log marker, the shim's spawn) off the loop's thread; its
 * outcome comes back through shimwatch.
 */
static void start_worker(struct engine *eng, struct ejob *job, struct eworker *w)
{
    const struct jobspec *spec = ejob_spec(eng, job);
    size_t n = job->worker_count;
    const char **hosts = xcalloc(n, sizeof *hosts);
    int *ports = xcalloc(n, sizeof *ports);
    for (size_t i = 0; i < n; i++) {
        hosts[i] = "127.0.0.1";
        ports[i] = job->workers[i].port;
    }
    /* Files the platform gives the job (the MPI hostfile), read-only at /trainjob/platform. */
    char *platform_dir = xasprintf("%s/platform/%s", eng->state_dir, job->uid);
    char *hostfile = NULL;
    if (spec->framework == FRAMEWORK_MPI) {
        struct worker_place all = {0, (int)n, "", "127.0.0.1", ports[0], hosts, ports, NULL, NULL};
        struct strbuf hf = STRBUF_INIT, ignored = STRBUF_INIT;
        worker_hostfile(&all, 1, &hf);
        char *path = xasprintf("%s/hostfile", platform_dir);
        if (file_mkdirs(platform_dir, 0755, &ignored) == 0)
            file_write_atomic(path, hf.buf ? hf.buf : "", hf.len, 0644, &ignored);
        hostfile = eng->sandbox ? xstrdup(PLATFORM_MOUNT "/hostfile") : xstrdup(path);
        free(path);
        strbuf_free(&hf);
        strbuf_free(&ignored);
    }
    /* Passwordless SSH between workers: keys bound read-only at config_mount_path. */
    const struct ssh_config *ssh = &spec->ssh;
    bool want_ssh = spec->framework == FRAMEWORK_MPI || (ssh->present && ssh->auto_key_setup);
    const char *ssh_mount =
        ssh->config_mount_path ? ssh->config_mount_path : JOBSPEC_DEFAULT_SSH_PATH;
    char *ssh_dir = NULL;
    if (want_ssh) {
        ssh_dir = xasprintf("%s/ssh/%s", eng->state_dir, job->uid);
        struct strbuf why = STRBUF_INIT;
        if (ssh_keys_prepare(ssh_dir, ssh_mount, &why) != 0)
            engine_log("job %s: %s", job->name, strbuf_str(&why));
        strbuf_free(&why);
    }
    struct worker_place place = {w->index,
                                 (int)n,
                                 w->devices,
                                 "127.0.0.1",
                                 job->workers[0].port,
                                 hosts,
                                 ports,
                                 hostfile,
                                 want_ssh ? (eng->sandbox ? ssh_mount : ssh_dir) : NULL};
    struct envv base = {0}, env = {0};
    char *workdir = xasprintf("%s/work/%s", eng->state_dir, job->uid);
    base_env(&base);
    envv_set(&base, "TRAINJOB_NODE", w->node);
    /* The engine's HOME is not inside the sandbox; the job's working directory is. */
    envv_set(&base, "HOME", eng->sandbox ? WORKDIR_MOUNT : workdir);
    worker_env_build(spec, &place, (const char *const *)base.v, &env);

    /*
     * The working directory at /trainjob/work, where no mount may go; volumes
     * at their mount paths (sandbox), or named in the environment. A volume's
     * subdir is opened below its root by the shim, never by path name here:
     * a job may have planted a symlink in it (issue 10, item 1).
     */
    struct launch_req *r = launch_req_new();
    struct runner_bind *binds = xcalloc(spec->mount_count + 4, sizeof *binds);
    r->mkdirs = xcalloc(spec->mount_count + 2, sizeof *r->mkdirs);
    size_t nb = 0, nd = 0;
    binds[nb++] =
        (struct runner_bind){.host_path = xstrdup(workdir), .mount_path = xstrdup(WORKDIR_MOUNT)};
    if (ssh_dir)
        binds[nb++] = (struct runner_bind){
            .host_path = xstrdup(ssh_dir), .mount_path = xstrdup(ssh_mount), .read_only = true};
    if (hostfile)
        binds[nb++] = (struct runner_bind){.host_path = xstrdup(platform_dir),
                                           .mount_path = xstrdup(PLATFORM_MOUNT),
                                           .read_only = true};
    size_t fixed = nb; /* binds before the volumes */
    for (size_t i = 0; i < spec->mount_count; i++) {
        const struct mount *m = &spec->mount[i];
        const struct config_volume *vol = config_volume(&eng->cfg, m->id);
        if (vol == NULL || vol->path == NULL || m->mount_path == NULL)
            continue;
        size_t slot = nb - fixed;
        /* The volume itself is the operator's (engine.yaml); below it, the shim creates. */
        r->mkdirs[nd++] = xstrdup(vol->path);
        binds[nb] = (struct runner_bind){.host_path = xstrdup(vol->path),
                                         .mount_path = xstrdup(m->mount_path),
                                         .volume = xstrdup(m->id),
                                         .subdir = dup_or_null(m->subdir)};
        if (!eng->sandbox) {
            char name[32];
            snprintf(name, sizeof name, "TRAINJOB_MOUNT_%zu", slot);
            char *val = xasprintf("%s=%s%s", m->mount_path, vol->path, m->subdir ? m->subdir : "");
            envv_set(&env, name, val);
            free(val);
        }
        nb++;
    }
    r->mkdirs[nd++] = xstrdup(workdir);

    const struct role *role = jobspec_worker(spec);
    r->uid = xstrdup(job->uid);
    r->index = (size_t)(w - job->workers);
    r->attempt = w->attempt;
    r->cg = eng->opt.cgroups;
    r->cg_leaf = worker_cgroup_leaf(w);
    r->refused = lifecycle_cgroup_refusal(eng, job);
    /* The spec's memory and CPUs, and the engine's process limit, held by cgroups. */
    r->limits =
        (struct cgroup_limits){.memory_mib = job->memory_mib,
                               .cpus = job->cpus,
                               .pids = config_worker_process_limit(&eng->cfg)};
    r->marker = log_marker(w);
    r->spec = (struct runner_spec){
        .shim_path = xstrdup(eng->shim_path),
        .status_path = lifecycle_status_path(eng, job, w),
        .log_path = lifecycle_log_path(eng, job, w->name),
        .log_cap = eng->opt.log_cap,
        .script = xstrdup(role && role->startup_script ? role->startup_script : "true"),
        .envp = strings_copy(env.v),
        .cwd = xstrdup(workdir),
        .binds = binds,
        .bind_count = nb,
        .sandbox = eng->sandbox,
        .engine_lock = statelock_path(eng->opt.state_dir),
    };
    /*
     * Never root: the job's user (engine/runas) owns its working directory
     * and its SSH keys; the SSH directory stays root's, who writes it again
     * at every start.
     */
    runas_member(eng->runas, &eng->cfg, job->creator, &r->spec.user, NULL);
    r->limits.user = r->spec.user.uid; /* a spare cgroup serves the same user only */
    r->owned = xcalloc(2, sizeof *r->owned);
    r->owned[0] = xstrdup(workdir);
    if (ssh_dir) {
        r->entries_given = xcalloc(2, sizeof *r->entries_given);
        r->entries_given[0] = xstrdup(ssh_dir);
    }
    /* Returns at once: the launch, and then the shim's report, come back through shimwatch. */
    shimwatch_launch(eng, job, w, r);
    free(workdir);
    free(ssh_dir);
    free(platform_dir);
    envv_free(&base);
    envv_free(&env);
    free(hostfile);
    free(hosts);
    free(ports);
}

static void create_workers(struct engine *eng, struct ejob *job, int replicas)
{
    if ((int)job->worker_count == replicas)
        return;
    for (size_t i = 0; i < job->worker_count; i++) {
        struct eworker *w = &job->workers[i];
        shimwatch_drop(eng, w, false);
        free(w->name), free(w->role), free(w->node), free(w->devices);
        free(w->create_time), free(w->start_time), free(w->finish_time);
        worker_last_state_free(&w->last_state);
    }
    free(job->workers);
    job->workers = xcalloc((size_t)replicas, sizeof *job->workers);
    job->worker_count = (size_t)replicas;
    const struct jobspec *spec = ejob_spec(eng, job);
    for (int i = 0; i < replicas; i++) {
        struct eworker *w = &job->workers[i];
        char name[64];
        jobspec_worker_name(spec, i, name, sizeof name);
        w->name = xstrdup(name);
        size_t role_len = strcspn(name, "-");
        w->role = xstrndup(name, role_len);
        w->index = i;
        w->phase = WORKER_PENDING;
        set_time(&w->create_time);
    }
}

int replicas_of(const struct ejob *job)
{
    return job->replicas; /* set from the spec when the job was created or loaded */
}

/* Records the start of every worker of a placed job on the nodes the pass chose. */
void start_job(struct engine *eng, struct ejob *job, const int *placement)
{
    free(job->preempted_by);
    job->preempted_by = NULL;
    int replicas = replicas_of(job);
    create_workers(eng, job, replicas);
    struct strbuf where = STRBUF_INIT;
    for (int i = 0; i < replicas; i++) {
        struct eworker *w = &job->workers[i];
        free(w->node);
        w->node = xstrdup(eng->cfg.nodes[placement[i]].name);
        w->port = free_port();
        free(w->devices); /* the last placement's: not held any more */
        w->devices = NULL;
    }
    for (int i = 0; i < replicas; i++) {
        struct eworker *w = &job->workers[i];
        assign_devices(eng, job, w, job->gpus);
        strbuf_addf(&where, "%s%s on %s", i ? ", " : "", w->name, w->node);
    }
    /* The starts are recorded with the state (one save); the shims follow once it is committed. */
    for (int i = 0; i < replicas; i++)
        intend_start(eng, job, &job->workers[i]);
    engine_set_state(eng, job, JOB_STATE_STARTING, NULL);
    struct job_event ev = {0};
    ev.kind = EVENT_SCHEDULED;
    char *text = xasprintf("placed: %s", strbuf_str(&where));
    ev.message = text;
    engine_event(eng, job, &ev);
    free(text);
    strbuf_free(&where);
}

/*
 * The spawn queue: every recorded start (intend_start) in the order it was
 * recorded, launched by spawn_intended on later loop turns. An entry names
 * its worker by job uid, index and attempt, so a job freed or a start
 * cancelled meanwhile is simply skipped; a loop turn costs what it
 * launches, not a walk over every job (50,000 of them at scale). Its
 * entry and ring (struct spawn_entry, struct spawn_queue) are in
 * engine/state.h: lifecycle_sched_free (schedpass.c) drains it at close.
 */
static void spawnq_push(struct engine *eng, const struct spawn_entry *e)
{
    struct spawn_queue *q = eng->spawn_q;
    if (q == NULL)
        q = eng->spawn_q = xcalloc(1, sizeof *q);
    if (q->len == q->cap) {
        size_t cap = q->cap ? 2 * q->cap : 64;
        struct spawn_entry *v = xreallocarray(NULL, cap, sizeof *v);
        for (size_t i = 0; i < q->len; i++)
            v[i] = q->v[(q->head + i) % q->cap];
        free(q->v);
        q->v = v;
        q->cap = cap;
        q->head = 0;
    }
    q->v[(q->head + q->len++) % q->cap] = *e;
}

bool spawnq_pop(struct engine *eng, struct spawn_entry *out)
{
    struct spawn_queue *q = eng->spawn_q;
    if (q == NULL || q->len == 0)
        return false;
    *out = q->v[q->head];
    q->head = (q->head + 1) % q->cap;
    q->len--;
    return true;
}

static size_t spawnq_len(const struct engine *eng)
{
    return eng->spawn_q ? eng->spawn_q->len : 0;
}

/* The worker an entry names, while its start is still recorded and not launched; else NULL. */
static struct eworker *spawn_target(struct engine *eng, const struct spawn_entry *e,
                                    struct ejob **job)
{
    *job = engine_find_uid(eng, e->uid);
    if (*job == NULL || e->index >= (*job)->worker_count)
        return NULL;
    struct eworker *w = &(*job)->workers[e->index];
    return w->starting && !w->watch && w->attempt == e->attempt ? w : NULL;
}

/* Nanoseconds on the monotonic clock: a turn's launches stop at SPAWN_TURN_NS. */
static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/*
 * Hands queued starts to engine/launcher for at most SPAWN_TURN_NS of a loop
 * turn (a start of a worker among thousands builds a large environment:
 * requests are answered between turns), with at most MAX_LAUNCHING in flight. A start
 * whose job is not on disk yet (a refused save) waits in the queue: it goes
 * once a save succeeds (retry_saves) — never before its record is on disk.
 */
static void spawn_intended(void *ctx)
{
    struct engine *eng = ctx;
    eng->spawn_timer = 0;
    eng->spawn_wanted = false;
    int64_t t0 = mono_ns();
    size_t todo = spawnq_len(eng); /* entries put back go round once per turn */
    struct spawn_entry e;
    while (todo > 0) {
        if (eng->launching >= MAX_LAUNCHING) {
            eng->spawn_wanted = true; /* the next report frees a slot (lifecycle_spawn_more) */
            return;
        }
        if (mono_ns() - t0 >= SPAWN_TURN_NS) {
            eng->spawn_wanted = true;
            lifecycle_spawn_more(eng); /* the next turn, after the requests waiting now */
            return;
        }
        todo--;
        spawnq_pop(eng, &e);
        struct ejob *job;
        struct eworker *w = spawn_target(eng, &e, &job);
        if (w != NULL && !engine_job_saved(eng, job)) {
            spawnq_push(eng, &e); /* a save is retried: it comes back then */
            continue;
        }
        if (w != NULL) /* else cancelled, launched, or its job is gone */
            start_worker(eng, job, w);
        free(e.uid);
    }
}

void lifecycle_spawn_more(struct engine *eng)
{
    if (eng->spawn_wanted && eng->spawn_timer == 0 && spawnq_len(eng) > 0)
        eng->spawn_timer = loop_add_timer(eng->loop, 0, spawn_intended, eng);
}

/*
 * Records that w starts its next attempt. Nothing is launched now: the
 * caller saves the job, and spawn_intended launches on a later loop turn,
 * after that save is committed — so a trainjobd killed at any point finds
 * the attempt on disk before any shim could have started it.
 */
void intend_start(struct engine *eng, struct ejob *job, struct eworker *w)
{
    shimwatch_drop(eng, w, false);
    w->attempt++;
    w->starting = true;
    w->live = true;
    w->phase = WORKER_PENDING;
    w->has_exit_code = false;
    memset(&w->proc, 0, sizeof w->proc);
    free(w->finish_time);
    w->finish_time = NULL;
    struct spawn_entry e = {xstrdup(job->uid), (size_t)(w - job->workers), w->attempt};
    spawnq_push(eng, &e);
    eng->spawn_wanted = true;
    lifecycle_spawn_more(eng);
}

/* ---- stopping ------------------------------------------------------------ */

void finish_stop(struct engine *eng, struct ejob *job)
{
    lifecycle_cancel_kill(eng, job);
    enum after_stop then = job->after_stop;
    char *why = job->after_stop_reason;
    job->after_stop = AFTER_STOP_NONE;
    job->after_stop_reason = NULL;
    switch (then) {
    case AFTER_STOP_SUSPEND:
        engine_set_state(eng, job, JOB_STATE_SUSPENDED, why);
        break;
    case AFTER_STOP_RESTART:
        /* In a crash loop the reason says how long the restart waits. */
        engine_set_state(eng, job, JOB_STATE_RESTARTING,
                         backing_off(job) && job->backoff_reason ? job->backoff_reason : why);
        lifecycle_arm_backoff(eng);
        break;
    case AFTER_STOP_REQUEUE:
        free(job->preempted_by);
        job->preempted_by = why ? xstrdup(why) : NULL;
        engine_set_state(eng, job, JOB_STATE_QUEUEING, why);
        break;
    case AFTER_STOP_FAIL:
        engine_set_state(eng, job, JOB_STATE_FAILED, why);
        break;
    case AFTER_STOP_DELETE:
        engine_end_followers(eng, job);
        free(why);
        engine_remove(eng, job);
        lifecycle_schedule_soon(eng);
        return;
    case AFTER_STOP_NONE:
        break;
    }
    free(why);
    if (job_state_terminal(job->state))
        engine_end_followers(eng, job);
    lifecycle_schedule_soon(eng);
}

static void kill_remaining(void *ctx);

struct kill_ctx {
    struct engine *eng;
    char uid[64];
};

void lifecycle_cancel_kill(struct engine *eng, struct ejob *job)
{
    if (job->kill_timer == 0)
        return;
    loop_cancel(eng->loop, job->kill_timer);
    free(job->kill_ctx);
    job->kill_timer = 0;
    job->kill_ctx = NULL;
}

static void kill_remaining(void *ctx)
{
    struct kill_ctx *k = ctx;
    struct ejob *job = engine_find_uid(k->eng, k->uid);
    if (job) {
        job->kill_timer = 0;
        job->kill_ctx = NULL;
        /* A start still in flight gets its SIGKILL with its report (lifecycle_worker_started). */
        for (size_t i = 0; i < job->worker_count; i++)
            if (job->workers[i].live && !job->workers[i].starting) {
                runner_refresh(&job->workers[i].proc, NULL);
                runner_signal(&job->workers[i].proc, SIGKILL);
            }
    }
    free(k);
}

/*
 * A start that must not happen any more: taking its claim first means no
 * worker of that attempt will run (the worker is no longer live); a shim
 * that took it first has the worker, which is stopped when it reports.
 */
static void cancel_start(struct engine *eng, struct ejob *job, struct eworker *w)
{
    char *status = lifecycle_status_path(eng, job, w);
    int won = runner_claim(status);
    free(status);
    if (won == 0)
        return;
    shimwatch_drop(eng, w, true);
    w->starting = false;
    w->live = false;
}

/* SIGTERM to the job's started live workers, once its stop's intent has been saved. */
static void term_workers(struct engine *eng, struct ejob *job)
{
    for (size_t i = 0; i < job->worker_count; i++) {
        struct eworker *w = &job->workers[i];
        if (!w->live || w->starting)
            continue;
        char *status = lifecycle_status_path(eng, job, w);
        runner_refresh(&w->proc, status);
        free(status);
        runner_signal(&w->proc, SIGTERM);
    }
}

/* SIGTERM now, SIGKILL after the grace period: the stop's intent is on disk. */
static void signal_stop(struct engine *eng, struct ejob *job)
{
    job->term_held = false;
    term_workers(eng, job);
    if (job->kill_timer == 0) {
        struct kill_ctx *k = xcalloc(1, sizeof *k);
        k->eng = eng;
        snprintf(k->uid, sizeof k->uid, "%s", job->uid);
        job->kill_timer = loop_add_timer(eng->loop, eng->opt.grace_ms, kill_remaining, k);
        job->kill_ctx = k;
    }
}

/*
 * A stop trainjobd decided (a fault rule, a preemption) whose intent the
 * disk refused: its workers keep running, untouched, until a save of the
 * job gets through (the save retry, or any later save). Signalled now, a
 * crash before the intent is saved would leave a restart taking their deaths
 * for faults (a RESTART_JOB ending FAILED, a preempted job failing).
 */
static void hold_stop(struct engine *eng, struct ejob *job)
{
    if (job->term_held)
        return;
    job->term_held = true;
    engine_log("job %s: its stop waits until the disk takes its intent (%s); its workers keep "
               "running until then",
               job->name, job->after_stop_reason ? job->after_stop_reason : "no reason");
    struct job_event ev = {.kind = EVENT_WAITING, .state = job->state};
    ev.message = "the stop waits: the state directory's disk refused to save it; the workers "
                 "are stopped once it is saved";
    engine_event(eng, job, &ev);
}

void lifecycle_stop_saved(struct engine *eng, struct ejob *job)
{
    if (!job->term_held || job->in_batch)
        return;
    if (job->after_stop == AFTER_STOP_NONE) {
        job->term_held = false;
        return;
    }
    engine_log("job %s: its stop is saved; stopping its workers now", job->name);
    signal_stop(eng, job);
}

void lifecycle_term_deferred(struct engine *eng)
{
    char **uids = eng->term_after_commit;
    size_t count = eng->term_after_commit_count;
    eng->term_after_commit = NULL;
    eng->term_after_commit_count = 0;
    for (size_t i = 0; i < count; i++) {
        struct ejob *job = engine_find_uid(eng, uids[i]);
        if (job && job->after_stop != AFTER_STOP_NONE) {
            if (job->unsaved)
                hold_stop(eng, job);
            else
                signal_stop(eng, job);
        }
        free(uids[i]);
    }
    free(uids);
}

void lifecycle_stop(struct engine *eng, struct ejob *job, enum after_stop then, const char *why)
{
    /* A delete outranks whatever stop was under way; anything else outranks nothing. */
    if (job->after_stop == AFTER_STOP_DELETE && then != AFTER_STOP_DELETE)
        return;
    job->after_stop = then;
    eng->changes++; /* no longer preemptible, soon holding nothing: a kept pass is stale */
    char *copy = why ? xstrdup(why) : NULL; /* why may be the old reason itself */
    free(job->after_stop_reason);
    job->after_stop_reason = copy;
    for (size_t i = 0; i < job->worker_count; i++)
        if (job->workers[i].live && job->workers[i].starting)
            cancel_start(eng, job, &job->workers[i]);
    if (!job_has_live_workers(job)) {
        finish_stop(eng, job);
        return;
    }
    /*
     * The intent goes to disk before any signal (a request's was written
     * already): a trainjobd killed from here on finds the stop on restart and
     * finishes it, instead of taking the workers' deaths for faults.
     */
    bool was_held = job->term_held;
    bool saved = engine_save(eng, job) == 0;
    for (size_t i = 0; i < job->worker_count; i++)
        if (job->workers[i].live) /* a start in flight: stopped once its shim reports */
            job->workers[i].phase = WORKER_TERMINATING;
    if (eng->batch_depth > 0) {
        /* Saved in the open batch: on disk only once it commits, signalled then. */
        eng->term_after_commit =
            xreallocarray(eng->term_after_commit, eng->term_after_commit_count + 1, sizeof(char *));
        eng->term_after_commit[eng->term_after_commit_count++] = xstrdup(job->uid);
    } else if (saved) {
        if (!was_held) /* else the save just signalled them (lifecycle_stop_saved) */
            signal_stop(eng, job);
    } else {
        hold_stop(eng, job); /* signalled by the save that gets through */
    }
    enum job_state state = job->state;
    if (then == AFTER_STOP_SUSPEND)
        state = JOB_STATE_SUSPENDING;
    else if (then == AFTER_STOP_DELETE)
        state = JOB_STATE_DELETING;
    else if (then == AFTER_STOP_RESTART)
        state = JOB_STATE_RESTARTING;
    if (state != job->state) {
        engine_set_state(eng, job, state, why);
    } else {
        /* Same state (a preemption or failure under way): the event already told why. */
        engine_save(eng, job);
        engine_publish(eng, job);
    }
}
