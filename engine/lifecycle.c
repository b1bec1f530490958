/*
 * lifecycle: what happens to an accepted job — scheduling passes (through
 * the pure engine/sched), starting workers through the shim (engine/runner)
 * with the environment engine/worker_env builds, stopping them (SIGTERM,
 * then SIGKILL after the grace period), and each worker's end: success,
 * or the fault policy's decision (engine/fault) applied and recorded.
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
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "api/jobspec.h"
#include "engine/cgroup.h"
#include "engine/fault.h"
#include "engine/launcher.h"
#include "engine/sched.h"
#include "engine/ssh_keys.h"
#include "engine/state.h"
#include "engine/store.h"
#include "engine/stream.h"
#include "engine/worker_env.h"
#include "util/fileio.h"
#include "util/loop.h"
#include "util/strbuf.h"
#include "util/timefmt.h"
#include "util/xalloc.h"

void engine_end_followers(struct engine *eng, struct ejob *job);

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

static bool job_waiting(const struct ejob *job)
{
    return (job->spec.state == JOB_STATE_QUEUEING || job->spec.state == JOB_STATE_RESTARTING) &&
           job->after_stop == AFTER_STOP_NONE && !job_has_live_workers(job) && !backing_off(job);
}

char *lifecycle_status_path(struct engine *eng, const struct ejob *job, const struct eworker *w)
{
    return xasprintf("%s/%s.%d.%s", eng->status_dir, job->spec.uid, w->attempt, w->name);
}

char *lifecycle_log_path(struct engine *eng, const struct ejob *job, const char *worker)
{
    return xasprintf("%s/%s.%s.log", eng->log_dir, job->spec.uid, worker);
}

static void set_time(char **field)
{
    char buf[TIMEFMT_RFC3339_LEN];
    time_rfc3339(time_now_ms(), buf);
    free(*field);
    *field = xstrdup(buf);
}

static int node_index(const struct engine *eng, const char *name)
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
static void assign_devices(struct engine *eng, const struct ejob *placing, struct eworker *w,
                           int count)
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
static char *worker_cgroup_leaf(const struct eworker *w)
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
    size_t n = job->worker_count;
    const char **hosts = xcalloc(n, sizeof *hosts);
    int *ports = xcalloc(n, sizeof *ports);
    for (size_t i = 0; i < n; i++) {
        hosts[i] = "127.0.0.1";
        ports[i] = job->workers[i].port;
    }
    /* Files the platform gives the job (the MPI hostfile), read-only at /trainjob/platform. */
    char *platform_dir = xasprintf("%s/platform/%s", eng->state_dir, job->spec.uid);
    char *hostfile = NULL;
    if (job->spec.framework == FRAMEWORK_MPI) {
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
    const struct ssh_config *ssh = &job->spec.ssh;
    bool want_ssh = job->spec.framework == FRAMEWORK_MPI || (ssh->present && ssh->auto_key_setup);
    const char *ssh_mount =
        ssh->config_mount_path ? ssh->config_mount_path : JOBSPEC_DEFAULT_SSH_PATH;
    char *ssh_dir = NULL;
    if (want_ssh) {
        ssh_dir = xasprintf("%s/ssh/%s", eng->state_dir, job->spec.uid);
        struct strbuf why = STRBUF_INIT;
        if (ssh_keys_prepare(ssh_dir, ssh_mount, &why) != 0)
            engine_log("job %s: %s", job->spec.name, strbuf_str(&why));
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
    char *workdir = xasprintf("%s/work/%s", eng->state_dir, job->spec.uid);
    base_env(&base);
    envv_set(&base, "TRAINJOB_NODE", w->node);
    /* The engine's HOME is not inside the sandbox; the job's working directory is. */
    envv_set(&base, "HOME", eng->sandbox ? WORKDIR_MOUNT : workdir);
    worker_env_build(&job->spec, &place, (const char *const *)base.v, &env);

    /*
     * The working directory at /trainjob/work, where no mount may go; volumes
     * at their mount paths (sandbox), or named in the environment. A volume's
     * subdir is opened below its root by the shim, never by path name here:
     * a job may have planted a symlink in it (issue 10, item 1).
     */
    struct launch_req *r = launch_req_new();
    struct runner_bind *binds = xcalloc(job->spec.mount_count + 4, sizeof *binds);
    r->mkdirs = xcalloc(job->spec.mount_count + 2, sizeof *r->mkdirs);
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
    for (size_t i = 0; i < job->spec.mount_count; i++) {
        const struct mount *m = &job->spec.mount[i];
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

    const struct role *role = jobspec_worker(&job->spec);
    r->uid = xstrdup(job->spec.uid);
    r->index = (size_t)(w - job->workers);
    r->attempt = w->attempt;
    r->cg = eng->opt.cgroups;
    r->cg_leaf = worker_cgroup_leaf(w);
    /* The spec's memory and CPUs, and the engine's process limit, held by cgroups. */
    r->limits =
        (struct cgroup_limits){job->memory_mib, job->cpus, config_worker_process_limit(&eng->cfg)};
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
    };
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
    }
    free(job->workers);
    job->workers = xcalloc((size_t)replicas, sizeof *job->workers);
    job->worker_count = (size_t)replicas;
    for (int i = 0; i < replicas; i++) {
        struct eworker *w = &job->workers[i];
        char name[64];
        worker_name(&job->spec, i, name, sizeof name);
        w->name = xstrdup(name);
        size_t role_len = strcspn(name, "-");
        w->role = xstrndup(name, role_len);
        w->index = i;
        w->phase = WORKER_PENDING;
        set_time(&w->create_time);
    }
}

static int replicas_of(const struct ejob *job)
{
    const struct role *r = jobspec_worker(&job->spec);
    if (r == NULL)
        return 1;
    if (r->has_total_replicas)
        return r->total_replicas > 0 ? r->total_replicas : 1;
    if (r->resource_spec_count && r->resource_spec[0].has_replicas)
        return r->resource_spec[0].replicas > 0 ? r->resource_spec[0].replicas : 1;
    return 1;
}

static void intend_start(struct engine *eng, struct ejob *job, struct eworker *w);

/* Records the start of every worker of a placed job on the nodes the pass chose. */
static void start_job(struct engine *eng, struct ejob *job, const int *placement)
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
 * launches, not a walk over every job (50,000 of them at scale).
 */
struct spawn_entry {
    char *uid; /* owned by the entry */
    size_t index;
    int attempt;
};

struct spawn_queue {
    struct spawn_entry *v; /* a ring of cap entries: len of them from head */
    size_t head, len, cap;
};

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

static bool spawnq_pop(struct engine *eng, struct spawn_entry *out)
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
static void intend_start(struct engine *eng, struct ejob *job, struct eworker *w)
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
    struct spawn_entry e = {xstrdup(job->spec.uid), (size_t)(w - job->workers), w->attempt};
    spawnq_push(eng, &e);
    eng->spawn_wanted = true;
    lifecycle_spawn_more(eng);
}

/* ---- scheduling passes -------------------------------------------------- */

/* The input of a pass over n jobs; reused from pass to pass, up to BUF_KEEP_JOBS jobs. */
#define BUF_KEEP_JOBS 4096
struct pass_buf {
    struct sched_job *sj;
    struct ejob **who;
    size_t n, cap;
    int *slots; /* every job's placement, one block */
    size_t slots_cap;
};

/*
 * What a pass that placed and preempted nothing leaves for the next (valid):
 * the jobs sched_job_kept names (running, or reserving nodes), with their
 * ejobs, and the waiting job that came last. While nothing a pass reads
 * changed (eng->changes, eng->sched_full), jobs created since are decided
 * against these alone (sched_pass_added): a POST costs the same with 50,000
 * jobs waiting as with none. Allocated at the first pass, freed at close.
 */
struct sched_keep {
    bool valid;
    uint64_t changes;  /* eng->changes when kept */
    size_t job_count;  /* eng->job_count then: jobs after it were created since */
    uint64_t next_seq; /* eng->next_seq then: every job created since has one at least as high */
    struct sched_node *nodes;
    size_t nn, np;
    bool *pool_masks;       /* (np + 1) × nn */
    struct sched_job *jobs; /* placement and excluded owned */
    struct ejob **who;
    size_t count, cap;
    bool has_last;
    struct sched_job last; /* order fields only */
    struct pass_buf buf;   /* the input of every pass */
};

/* Forgets the last pass. */
static void keep_reset(struct sched_keep *k)
{
    for (size_t i = 0; i < k->count; i++) {
        free(k->jobs[i].placement);
        free((bool *)k->jobs[i].excluded);
    }
    k->count = 0;
    free(k->nodes);
    free(k->pool_masks);
    k->nodes = NULL;
    k->pool_masks = NULL;
    k->has_last = false;
    k->valid = false;
}

static void buf_free(struct pass_buf *b)
{
    free(b->sj);
    free(b->who);
    free(b->slots);
}

/* Lets a buffer for many jobs go: 50k jobs' inputs are 12 MB, not for the engine's RSS. */
static void buf_trim(struct pass_buf *b)
{
    if (b->cap > BUF_KEEP_JOBS || b->slots_cap > 4 * BUF_KEEP_JOBS) {
        buf_free(b);
        memset(b, 0, sizeof *b);
    }
}

void lifecycle_sched_free(struct engine *eng)
{
    struct spawn_entry e;
    while (spawnq_pop(eng, &e))
        free(e.uid);
    if (eng->spawn_q) {
        free(eng->spawn_q->v);
        free(eng->spawn_q);
        eng->spawn_q = NULL;
    }
    struct sched_keep *k = eng->sched_keep;
    if (k == NULL)
        return;
    keep_reset(k);
    free(k->jobs);
    free(k->who);
    buf_free(&k->buf);
    free(k);
    eng->sched_keep = NULL;
}

/* Stamps k with what it was kept from: a later pass may use it while these hold. */
static void keep_stamp(const struct engine *eng, struct sched_keep *k)
{
    k->changes = eng->changes;
    k->job_count = eng->job_count;
    k->next_seq = eng->next_seq;
}

/* Keeps a copy of s (its placement copied; its exclusions handed over). */
static void keep_add(struct sched_keep *k, struct sched_job *s, struct ejob *job)
{
    if (k->count == k->cap) {
        k->cap = k->cap ? 2 * k->cap : 16;
        k->jobs = xreallocarray(k->jobs, k->cap, sizeof *k->jobs);
        k->who = xreallocarray(k->who, k->cap, sizeof *k->who);
    }
    struct sched_job *c = &k->jobs[k->count];
    *c = *s;
    size_t r = s->replicas > 0 ? (size_t)s->replicas : 1;
    c->placement = xreallocarray(NULL, r, sizeof *c->placement);
    memcpy(c->placement, s->placement, r * sizeof *c->placement);
    s->excluded = NULL;
    k->who[k->count++] = job;
}

/* Remembers s as the last waiting job if it comes after the one so far. */
static void keep_last(struct sched_keep *k, const struct sched_job *s)
{
    if (!k->has_last || sched_before(&k->last, s)) {
        k->last = *s;
        k->last.name = NULL;
        k->last.placement = NULL;
        k->last.allowed = k->last.excluded = NULL;
        k->has_last = true;
    }
}

/* The nodes and one allowed-node array per pool (shared by its jobs; the last: every node). */
static void pass_nodes(struct engine *eng, struct sched_node **nodes, bool **pool_masks)
{
    size_t nn = eng->cfg.node_count, np = eng->cfg.pool_count;
    *nodes = xcalloc(nn ? nn : 1, sizeof **nodes);
    for (size_t i = 0; i < nn; i++) {
        const struct config_node *c = &eng->cfg.nodes[i];
        (*nodes)[i] =
            (struct sched_node){c->name, c->gpus, c->cpus, c->memory_mib, c->unschedulable};
    }
    *pool_masks = xcalloc((np + 1) * (nn ? nn : 1), 1);
    for (size_t p = 0; p < np; p++)
        for (size_t i = 0; i < nn; i++)
            (*pool_masks)[p * nn + i] =
                config_pool_has_node(&eng->cfg.pools[p], eng->cfg.nodes[i].name);
    for (size_t i = 0; i < nn; i++)
        (*pool_masks)[np * nn + i] = true; /* a pool the config no longer has: every node */
}

/*
 * The scheduler's view of a job that holds (live) or wants capacity, its
 * placement in slots (replicas of them: replicas_of(job)). Every field is set but the
 * reason's bytes past the first: a pass writes them.
 */
static void sched_job_of(struct engine *eng, struct ejob *job, bool live, const bool *pool_masks,
                         int replicas, int *slots, struct sched_job *s)
{
    size_t nn = eng->cfg.node_count, np = eng->cfg.pool_count;
    s->name = job->spec.name;
    s->priority = job->spec.scheduling.priority;
    s->idle = jobspec_is_idle(&job->spec);
    s->preemptible = s->idle &&
                     (!job->spec.scheduling.has_preemptible || job->spec.scheduling.preemptible) &&
                     job->after_stop == AFTER_STOP_NONE;
    s->submit_seq = job->seq;
    s->replicas = replicas;
    s->per_worker = (struct sched_demand){job->gpus, job->cpus, job->memory_mib};
    s->scoring = job->spec.scheduling.scoring_strategy;
    const struct config_pool *pool = config_pool(&eng->cfg, job->spec.resource_pool.name);
    size_t p = pool ? (size_t)(pool - eng->cfg.pools) : np;
    s->allowed = pool_masks + p * nn;
    s->excluded = NULL;
    if (job->excluded_count) { /* excluded only where marked */
        bool *excluded = xcalloc(nn ? nn : 1, 1);
        for (size_t i = 0; i < nn; i++)
            for (size_t k = 0; k < job->excluded_count; k++)
                excluded[i] |= strcmp(job->excluded[k], eng->cfg.nodes[i].name) == 0;
        s->excluded = excluded;
    }
    s->running = live;
    s->placement = slots;
    s->verdict = SCHED_WAIT;
    s->reason[0] = '\0';
    s->reserved = false;
    for (int i = 0; i < replicas; i++)
        slots[i] = -1;
    if (live) {
        for (int i = 0; i < replicas && (size_t)i < job->worker_count; i++)
            slots[i] = job->workers[i].live ? node_index(eng, job->workers[i].node) : -1;
        /* Workers already ended hold nothing: count them on no node. */
        int kept = 0;
        for (int i = 0; i < replicas; i++)
            if (slots[i] >= 0)
                slots[kept++] = slots[i];
        s->replicas = kept;
    }
}

/* Room in b for count jobs more (after its first b->n) and replicas placement slots. */
static void buf_reserve(struct pass_buf *b, size_t count, size_t replicas)
{
    if (b->n + count > b->cap) {
        b->cap = b->n + count + 64;
        b->sj = xreallocarray(b->sj, b->cap, sizeof *b->sj);
        b->who = xreallocarray(b->who, b->cap, sizeof *b->who);
    }
    if (replicas > b->slots_cap) {
        b->slots_cap = replicas + 256;
        b->slots = xreallocarray(b->slots, b->slots_cap, sizeof *b->slots);
    }
}

/*
 * Adds to b (after its first b->n, whose placements are not in b->slots)
 * the jobs among jobs[from, to) that hold or want capacity; with
 * only_waiting, it stops at the first that does not wait (returns false).
 */
static bool buf_add(struct engine *eng, struct pass_buf *b, const bool *pool_masks, size_t from,
                    size_t to, bool only_waiting)
{
    size_t first = b->n, total = 0;
    buf_reserve(b, to - from, 0);
    for (size_t j = from; j < to; j++) {
        struct ejob *job = eng->jobs[j];
        bool live = job_has_live_workers(job);
        if (only_waiting && (live || !job_waiting(job))) {
            b->n = first;
            return false;
        }
        if (!live && !job_waiting(job))
            continue;
        b->sj[b->n].running = live;
        b->sj[b->n].replicas = replicas_of(job);
        total += (size_t)b->sj[b->n].replicas;
        b->who[b->n++] = job;
    }
    buf_reserve(b, 0, total);
    for (size_t i = first, off = 0; i < b->n; i++) {
        int replicas = b->sj[i].replicas;
        sched_job_of(eng, b->who[i], b->sj[i].running, pool_masks, replicas, b->slots + off,
                     &b->sj[i]);
        off += (size_t)replicas;
    }
    return true;
}

/* Frees what the jobs of b from first on own (their exclusions). */
static void buf_release(struct pass_buf *b, size_t first)
{
    for (size_t i = first; i < b->n; i++) {
        free((bool *)b->sj[i].excluded);
        b->sj[i].excluded = NULL;
    }
    b->n = 0;
}

/* Did a pass place or preempt anything? */
static bool pass_changes(const struct sched_job *sj, size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (sj[k].verdict == SCHED_PLACE || sj[k].verdict == SCHED_PREEMPT)
            return true;
    return false;
}

/* Does a waiting job show reason already (after "preempted by …; " while that holds)? */
static bool shows(const struct ejob *job, const char *reason)
{
    const char *m = job->spec.state_message;
    if (m == NULL)
        return false;
    if (job->preempted_by) {
        size_t len = strlen(job->preempted_by);
        if (strncmp(m, job->preempted_by, len) != 0 || m[len] != ';' || m[len + 1] != ' ')
            return false;
        m += len + 2;
    }
    return strcmp(m, reason) == 0;
}

/* With TRAINJOBD_SCHED_LOG set, a line per pass in the engine's log (what tests count). */
static void log_pass(const char *kind, size_t decided, size_t jobs)
{
    static int on = -1;
    if (on < 0)
        on = getenv("TRAINJOBD_SCHED_LOG") != NULL;
    if (on)
        engine_log("scheduling pass over %s: %zu of %zu jobs", kind, decided, jobs);
}

/* Applies a pass's verdicts: preempts, starts, and shows why the rest wait. */
static void apply_pass(struct engine *eng, struct sched_job *sj, struct ejob **who, size_t n)
{
    size_t nn = eng->cfg.node_count;
    /* Every change a pass makes is one transaction, shown once it has committed. */
    engine_batch_begin(eng);
    /* Nodes whose capacity a preemption frees only once its workers have stopped. */
    bool *freeing = xcalloc(nn ? nn : 1, sizeof *freeing);
    const char *victim = NULL;
    for (size_t k = 0; k < n; k++) {
        if (sj[k].verdict != SCHED_PREEMPT)
            continue;
        victim = who[k]->spec.name;
        for (size_t i = 0; i < who[k]->worker_count; i++) {
            int idx = who[k]->workers[i].live ? node_index(eng, who[k]->workers[i].node) : -1;
            if (idx >= 0)
                freeing[idx] = true;
        }
    }
    for (size_t k = 0; k < n; k++) {
        struct ejob *job = who[k];
        bool on_freeing = false;
        if (sj[k].verdict == SCHED_PLACE)
            for (int i = 0; i < sj[k].replicas; i++)
                on_freeing |= sj[k].placement[i] >= 0 && freeing[sj[k].placement[i]];
        if (on_freeing) {
            /* Start once the preempted workers are gone: the pass after they end. */
            char reason[200];
            snprintf(reason, sizeof reason, "waiting for preempted job %s to stop", victim);
            if (!job->spec.state_message || strcmp(job->spec.state_message, reason) != 0)
                engine_set_state(eng, job, job->spec.state, reason);
            continue;
        }
        switch (sj[k].verdict) {
        case SCHED_PLACE:
            start_job(eng, job, sj[k].placement);
            break;
        case SCHED_PREEMPT: {
            struct job_event ev = {0};
            ev.kind = EVENT_PREEMPTED;
            ev.message = sj[k].reason;
            engine_event(eng, job, &ev);
            lifecycle_stop(eng, job, AFTER_STOP_REQUEUE, sj[k].reason);
            break;
        }
        case SCHED_WAIT:
            if (!shows(job, sj[k].reason)) {
                /* A preempted job keeps saying so while it waits. */
                char *reason = job->preempted_by
                                   ? xasprintf("%s; %s", job->preempted_by, sj[k].reason)
                                   : xstrdup(sj[k].reason);
                engine_set_state(eng, job, job->spec.state, reason);
                free(reason);
            }
            break;
        case SCHED_KEEP:
            break;
        }
    }
    engine_batch_end(eng);
    free(freeing);
}

static struct sched_keep *keep_of(struct engine *eng)
{
    if (eng->sched_keep == NULL)
        eng->sched_keep = xcalloc(1, sizeof *eng->sched_keep);
    return eng->sched_keep;
}

/* A pass over every job; keeps what the next needs when it placed and preempted nothing. */
static void full_pass(struct engine *eng)
{
    struct sched_keep *k = keep_of(eng);
    struct pass_buf *b = &k->buf;
    keep_reset(k);
    eng->sched_full = false;
    pass_nodes(eng, &k->nodes, &k->pool_masks);
    b->n = 0;
    buf_add(eng, b, k->pool_masks, 0, eng->job_count, false);
    sched_pass(k->nodes, eng->cfg.node_count, b->sj, b->n);
    log_pass("every job", b->n, eng->job_count);
    apply_pass(eng, b->sj, b->who, b->n);
    if (!pass_changes(b->sj, b->n) && !eng->sched_full) {
        k->nn = eng->cfg.node_count;
        k->np = eng->cfg.pool_count;
        for (size_t i = 0; i < b->n; i++) {
            if (!b->sj[i].running)
                keep_last(k, &b->sj[i]);
            if (sched_job_kept(&b->sj[i]))
                keep_add(k, &b->sj[i], b->who[i]);
        }
        keep_stamp(eng, k);
        k->valid = true;
    }
    buf_release(b, 0);
    buf_trim(b);
    if (!k->valid)
        keep_reset(k);
}

/*
 * Checks a pass over added jobs against a pass over every job
 * (TRAINJOBD_SCHED_VERIFY=1, as the engine tests run): the same verdicts
 * and reasons for the jobs it decided, the reason shown now for the others.
 * Aborts on a difference: a change that did not bump eng->changes.
 */
static void verify_added(struct engine *eng, const struct sched_job *got, struct ejob **got_who,
                         size_t got_n)
{
    struct sched_node *nodes;
    bool *pool_masks;
    struct pass_buf all = {0};
    pass_nodes(eng, &nodes, &pool_masks);
    buf_add(eng, &all, pool_masks, 0, eng->job_count, false);
    sched_pass(nodes, eng->cfg.node_count, all.sj, all.n);
    for (size_t i = 0; i < all.n; i++) {
        const struct sched_job *want = &all.sj[i], *mine = NULL;
        for (size_t g = 0; g < got_n && !mine; g++)
            if (got_who[g] == all.who[i])
                mine = &got[g];
        bool same;
        if (mine) {
            same = mine->verdict == want->verdict && strcmp(mine->reason, want->reason) == 0;
            for (int w = 0; same && want->verdict == SCHED_PLACE && w < want->replicas; w++)
                same = mine->placement[w] == want->placement[w];
        } else {
            same = want->verdict == (want->running ? SCHED_KEEP : SCHED_WAIT) &&
                   (want->running || shows(all.who[i], want->reason));
        }
        if (!same) {
            engine_log("scheduler: a pass over added jobs is not a pass over every job: %s: %d "
                       "\"%s\", over every job %d \"%s\"",
                       all.who[i]->spec.name, mine ? (int)mine->verdict : -1,
                       mine ? mine->reason : all.who[i]->spec.state_message, (int)want->verdict,
                       want->reason);
            abort();
        }
    }
    buf_release(&all, 0);
    buf_free(&all);
    free(nodes);
    free(pool_masks);
}

/*
 * A pass over the kept jobs and those created since alone; false (and
 * nothing done) when a pass over every job is needed: something else
 * changed, or an added job changes what jobs left out would see.
 */
static bool added_pass(struct engine *eng)
{
    struct sched_keep *k = eng->sched_keep;
    if (k == NULL || !k->valid || eng->sched_full || k->changes != eng->changes ||
        eng->job_count < k->job_count || k->nn != eng->cfg.node_count ||
        k->np != eng->cfg.pool_count)
        return false;
    for (size_t j = k->job_count; j < eng->job_count; j++)
        if (eng->jobs[j]->seq < k->next_seq) /* not created since: something else moved */
            return false;
    struct pass_buf *b = &k->buf;
    size_t kept = k->count;
    b->n = 0;
    buf_reserve(b, kept, 0);
    if (kept > 0) {
        memcpy(b->sj, k->jobs, kept * sizeof *b->sj);
        memcpy(b->who, k->who, kept * sizeof *b->who);
    }
    b->n = kept;
    bool ok = buf_add(eng, b, k->pool_masks, k->job_count, eng->job_count, true) &&
              sched_pass_added(k->nodes, k->nn, b->sj, b->n, kept, k->has_last ? &k->last : NULL);
    if (ok) {
        if (getenv("TRAINJOBD_SCHED_VERIFY"))
            verify_added(eng, b->sj, b->who, b->n);
        log_pass("added jobs", b->n, eng->job_count);
        apply_pass(eng, b->sj, b->who, b->n);
    }
    if (ok && !pass_changes(b->sj, b->n) && !eng->sched_full) {
        for (size_t i = kept; i < b->n; i++) {
            keep_last(k, &b->sj[i]);
            if (sched_job_kept(&b->sj[i]))
                keep_add(k, &b->sj[i], b->who[i]);
        }
        keep_stamp(eng, k);
    } else if (ok) {
        k->valid = false; /* it placed or preempted: the next pass looks at every job */
    }
    /* the copies of kept jobs own nothing; added jobs' exclusions went to the keep or go */
    for (size_t i = 0; i < kept && i < b->n; i++)
        b->sj[i].excluded = NULL;
    buf_release(b, 0);
    buf_trim(b);
    if (!k->valid)
        keep_reset(k);
    return ok;
}

static void run_pass(void *ctx)
{
    struct engine *eng = ctx;
    eng->sched_timer = 0;
    if (!added_pass(eng))
        full_pass(eng);
}

void lifecycle_schedule_soon(struct engine *eng)
{
    eng->sched_full = true;
    lifecycle_schedule_added(eng);
}

void lifecycle_schedule_added(struct engine *eng)
{
    if (eng->sched_timer == 0)
        eng->sched_timer = loop_add_timer(eng->loop, 0, run_pass, eng);
}

/* ---- stopping ------------------------------------------------------------ */

static void finish_stop(struct engine *eng, struct ejob *job)
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
    if (job_state_terminal(job->spec.state))
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
    for (size_t i = 0; i < job->worker_count; i++) {
        struct eworker *w = &job->workers[i];
        if (w->live && w->starting)
            w->phase = WORKER_TERMINATING; /* the shim holds the claim: stopped once it reports */
        if (!w->live || w->starting)
            continue;
        char *status = lifecycle_status_path(eng, job, w);
        runner_refresh(&w->proc, status);
        free(status);
        runner_signal(&w->proc, SIGTERM);
        w->phase = WORKER_TERMINATING;
    }
    if (job->kill_timer == 0) {
        struct kill_ctx *k = xcalloc(1, sizeof *k);
        k->eng = eng;
        snprintf(k->uid, sizeof k->uid, "%s", job->spec.uid);
        job->kill_timer = loop_add_timer(eng->loop, eng->opt.grace_ms, kill_remaining, k);
        job->kill_ctx = k;
    }
    enum job_state state = job->spec.state;
    if (then == AFTER_STOP_SUSPEND)
        state = JOB_STATE_SUSPENDING;
    else if (then == AFTER_STOP_DELETE)
        state = JOB_STATE_DELETING;
    else if (then == AFTER_STOP_RESTART)
        state = JOB_STATE_RESTARTING;
    if (state != job->spec.state) {
        engine_set_state(eng, job, state, why);
    } else {
        /* Same state (a preemption or failure under way): the event already told why. */
        engine_save(eng, job);
        engine_publish(eng, job);
    }
}

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
    char text[300];
    if (by == NULL)
        snprintf(text, sizeof text, "node %s marked unschedulable for this job", node);
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

/* A node the pool allows, not marked for the job, with room for one more worker. */
static const char *node_for_one_worker(struct engine *eng, struct ejob *job)
{
    const struct config_pool *pool = config_pool(&eng->cfg, job->spec.resource_pool.name);
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
        if (job->after_stop != AFTER_STOP_NONE || job->spec.state != JOB_STATE_RUNNING)
            continue; /* stopped meanwhile */
        engine_set_state(eng, job, job->spec.state, NULL);
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
    const struct fault_tolerance *ft = &job->spec.fault_tolerance;
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
            engine_set_state(eng, job, job->spec.state, job->backoff_reason);
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
    if (job->spec.state != JOB_STATE_STARTING || job->after_stop != AFTER_STOP_NONE)
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
    char text[600];
    snprintf(text, sizeof text, "could not start %s: %s", w->name, why);
    engine_log("job %s: %s", job->spec.name, text);
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
    if (w->proc.worker_pgid > 0)
        kill(-w->proc.worker_pgid, SIGKILL);
    char why[160];
    snprintf(why, sizeof why, "trainjob-shim (pid %ld) died; its worker was killed",
             (long)w->proc.shim_pid);
    engine_log("job %s: %s: %s", job->spec.name, w->name, why);
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
    cgroup_remove(eng->opt.cgroups, job->spec.uid, leaf);
    free(leaf);
    char uid[64];
    snprintf(uid, sizeof uid, "%s", job->spec.uid);
    w->live = false;
    w->has_exit_code = true;
    w->exit_code = exit_code;
    w->phase = exit_code == 0 ? WORKER_SUCCEEDED : WORKER_FAILED;
    set_time(&w->finish_time);
    struct job_event ev = {0};
    ev.kind = EVENT_WORKER;
    ev.worker = w->name;
    ev.has_exit_code = true;
    ev.exit_code = exit_code;
    ev.node = w->node;
    const char *meaning = why ? why : fault_exit_meaning(exit_code);
    char text[300];
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
    if (still == NULL || engine_job_saved(eng, still)) {
        unlink(status);
        char *pid = xasprintf("%s.pid", status);
        unlink(pid);
        free(pid);
        char *claim = xasprintf("%s.claim", status);
        unlink(claim);
        free(claim);
        char *script = xasprintf("%s.script", status); /* the shim's, if it was killed */
        unlink(script);
        free(script);
    }
    free(status);
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
        engine_log("job %s: %s: attempt %d never started%s", job->spec.name, w->name, w->attempt,
                   job->after_stop == AFTER_STOP_NONE ? "; starting it again" : "");
        w->starting = false;
        w->live = false;
        if (job->after_stop == AFTER_STOP_NONE)
            intend_start(eng, job, w);
    } else {
        pid_t owner = runner_claim_owner(status);
        engine_log("job %s: %s: a shim holds attempt %d (pid %ld); waiting for its report",
                   job->spec.name, w->name, w->attempt, (long)owner);
        shimwatch_await(eng, job, w, owner);
    }
    free(status);
    return done;
}

void lifecycle_adopt(struct engine *eng, struct ejob *job)
{
    bool backing_off_before = job->backoff_until_ms > 0; /* read now: job may be freed below */
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
            continue;
        }
        runner_refresh(&w->proc, status);
        free(status);
        if (runner_alive(&w->proc))
            shimwatch_follow(eng, job, w);
        else
            lifecycle_shim_gone(eng, job,
                                w); /* its status, or lost: the machine restarted, or a kill */
    }
    bool starting = false;
    for (size_t i = 0; i < job->worker_count; i++)
        starting |= job->workers[i].live && job->workers[i].starting;
    if (job->after_stop != AFTER_STOP_NONE) {
        if (!job_has_live_workers(job))
            finish_stop(eng, job);
        else
            lifecycle_stop(eng, job, job->after_stop, job->after_stop_reason);
    } else if (starting) {
        /* Saves the starts recorded again before they are launched (a pod restart keeps RUNNING).
         */
        if (job->spec.state != JOB_STATE_STARTING && job->spec.state != JOB_STATE_RUNNING)
            engine_set_state(eng, job, JOB_STATE_STARTING, NULL);
        else
            engine_save(eng, job);
    } else if (job_has_live_workers(job) && job->spec.state != JOB_STATE_RUNNING) {
        engine_set_state(eng, job, JOB_STATE_RUNNING, NULL);
    }
    if (backing_off_before)
        lifecycle_arm_backoff(eng); /* a back-off that was running when trainjobd stopped */
}

void lifecycle_forget(struct engine *eng, struct ejob *job)
{
    for (size_t i = 0; i < job->worker_count; i++)
        shimwatch_drop(eng, &job->workers[i], false);
}
