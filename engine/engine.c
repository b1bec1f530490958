/*
 * engine: trainjobd's core — opening the state (configuration, store, jobs,
 * watchers), the requests the routes hand over, persistence of each job as
 * one JSON record, events and watch streams. What happens to a job once it
 * is accepted (scheduling, workers, faults) is lifecycle.c's.
 */
#include "engine/engine.h"

#include <errno.h>
#include <poll.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/finding.h"
#include "engine/cgroup.h"
#include "engine/jobfiles.h"
#include "engine/launcher.h"
#include "engine/logfollow.h"
#include "engine/runas.h"
#include "engine/rundir.h"
#include "engine/state.h"
#include "engine/store.h"
#include "engine/stream.h"
#include "util/fileio.h"
#include "util/hmap.h"
#include "util/loop.h"
#include "util/strbuf.h"
#include "util/timefmt.h"
#include "util/xalloc.h"

/* ---- the job table ---------------------------------------------------- */

/*
 * eng->jobs holds the jobs in seq order (lists and watch syncs walk it);
 * by_name and by_uid find one in O(1) whatever the count (issue 14: a
 * linear scan made a GET 3 ms at 50k jobs and every POST's name check
 * O(N)).
 */
struct name_key {
    const char *ws, *name;
};

static bool same_name(const void *item, const void *key)
{
    const struct ejob *j = item;
    const struct name_key *k = key;
    return strcmp(j->name, k->name) == 0 && strcmp(j->ws, k->ws) == 0;
}

static bool same_uid(const void *item, const void *key)
{
    return strcmp(((const struct ejob *)item)->uid, key) == 0;
}

static uint64_t uid_hash(const char *uid)
{
    return hmap_hash(uid, strlen(uid));
}

struct ejob *engine_find(struct engine *eng, const char *ws, const char *name)
{
    if (ws == NULL || name == NULL)
        return NULL;
    struct name_key k = {ws, name};
    return hmap_get(&eng->by_name, hmap_hash2(ws, name), same_name, &k);
}

struct ejob *engine_find_uid(struct engine *eng, const char *uid)
{
    if (uid == NULL)
        return NULL;
    return hmap_get(&eng->by_uid, uid_hash(uid), same_uid, uid);
}

/* Appends a job (its seq above every other's) and indexes it. */
void add_job(struct engine *eng, struct ejob *job)
{
    if (eng->job_count == eng->job_cap) {
        eng->job_cap = eng->job_cap ? eng->job_cap * 2 : 64;
        eng->jobs = xreallocarray(eng->jobs, eng->job_cap, sizeof *eng->jobs);
    }
    eng->jobs[eng->job_count++] = job;
    if (job->seq >= eng->next_seq)
        eng->next_seq = job->seq + 1;
    hmap_put(&eng->by_name, hmap_hash2(job->ws, job->name), job);
    hmap_put(&eng->by_uid, uid_hash(job->uid), job);
}

/* The position of the first job with a seq above seq (eng->jobs is in seq order). */
size_t first_after(const struct engine *eng, uint64_t seq)
{
    size_t lo = 0, hi = eng->job_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (eng->jobs[mid]->seq <= seq)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Takes job out of the table and its indexes (not freed). */
void drop_job(struct engine *eng, struct ejob *job)
{
    hmap_remove(&eng->by_name, hmap_hash2(job->ws, job->name), job);
    hmap_remove(&eng->by_uid, uid_hash(job->uid), job);
    size_t i = first_after(eng, job->seq - 1);
    if (i >= eng->job_count || eng->jobs[i] != job) /* not in seq order after all: look */
        for (i = 0; i < eng->job_count && eng->jobs[i] != job; i++)
            ;
    if (i < eng->job_count) {
        memmove(&eng->jobs[i], &eng->jobs[i + 1], (eng->job_count - i - 1) * sizeof job);
        eng->job_count--;
    }
}

/* ---- inotify: worker ends and log growth ------------------------------ */

/*
 * Status files are named <uid>.<attempt>.<worker> (see lifecycle_status_path);
 * their .pid companion matters to a start a shim of an earlier trainjobd owes.
 */
static void status_file_appeared(struct engine *eng, const char *fname, char **ended)
{
    char uid[64];
    int attempt;
    int n = 0;
    if (sscanf(fname, "%63[^.].%d.%n", uid, &attempt, &n) != 2 || n == 0)
        return;
    const char *worker = fname + n;
    if (strstr(worker, ".tmp"))
        return;
    size_t len = strlen(worker);
    bool pidfile = len > 4 && strcmp(worker + len - 4, ".pid") == 0;
    if (pidfile)
        len -= 4;
    else if (strchr(worker, '.'))
        return;
    struct ejob *job = engine_find_uid(eng, uid);
    if (job == NULL)
        return;
    for (size_t i = 0; i < job->worker_count; i++) {
        struct eworker *w = &job->workers[i];
        if (strncmp(w->name, worker, len) != 0 || w->name[len] != '\0' || w->attempt != attempt ||
            !w->live)
            continue;
        if (pidfile) {
            if (w->starting)
                shimwatch_pidfile(eng, job, w);
            return;
        }
        char *path = lifecycle_status_path(eng, job, w);
        int code;
        int rc = runner_read_status(path, &code);
        if (rc == 1) {
            lifecycle_worker_ended(eng, job, w, code);
            *ended = path; /* its files go once the end is on disk (on_inotify) */
        } else {
            free(path);
        }
        return;
    }
}

/* A worker log changed: its followers read on (a rotation counted when FILE.1 appeared). */
static void poke_followers(struct engine *eng, const char *fname, bool rotated)
{
    for (size_t i = 0; i < eng->follower_count;) {
        struct stream *s = eng->followers[i];
        if (stream_abandoned(s) || stream_closed(s)) {
            stream_unref(s);
            eng->followers[i] = eng->followers[--eng->follower_count];
            continue;
        }
        if (logfollow_matches(s, fname)) {
            if (rotated)
                logfollow_rotated(s);
            logfollow_poke(s, false);
        }
        i++;
    }
}

/* An end read in this wave of events: its status path and its job's uid. */
struct wave_end {
    char uid[64];
    char *status;
};

/*
 * The status directory's and the log directory's events. Every worker end
 * read in one wave of events is saved in one transaction (a store batch, as
 * a scheduling pass's changes are), so 50 jobs ending together cost one
 * commit, not 50; each end's status files are removed once it has committed.
 */
static void on_inotify(void *ctx, int fd, short revents)
{
    struct engine *eng = ctx;
    char buf[8192] __attribute__((aligned(__alignof__(struct inotify_event))));
    (void)revents;
    struct wave_end *ends = NULL;
    size_t end_count = 0;
    bool batching = false;
    for (;;) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n <= 0)
            break;
        for (char *p = buf; p < buf + n;) {
            struct inotify_event *ev = (struct inotify_event *)p;
            if (ev->len > 0) {
                if (ev->wd == eng->status_wd) {
                    if (!batching)
                        engine_batch_begin(eng);
                    batching = true;
                    char *ended = NULL;
                    status_file_appeared(eng, ev->name, &ended);
                    if (ended) { /* the name parsed: its uid is the part before the dot */
                        ends = xreallocarray(ends, end_count + 1, sizeof *ends);
                        snprintf(ends[end_count].uid, sizeof ends[0].uid, "%.*s",
                                 (int)strcspn(ev->name, "."), ev->name);
                        ends[end_count++].status = ended;
                    }
                } else if (ev->wd == eng->log_wd)
                    poke_followers(eng, ev->name, (ev->mask & IN_MOVED_TO) != 0);
            }
            p += sizeof *ev + ev->len;
        }
    }
    if (batching)
        engine_batch_end(eng);
    for (size_t i = 0; i < end_count; i++) {
        /* Not on disk (the store refused it): retry_saves removes them once it is. */
        struct ejob *job = engine_find_uid(eng, ends[i].uid);
        if (job == NULL || engine_job_saved(eng, job))
            lifecycle_forget_end_files(eng, ends[i].status);
        free(ends[i].status);
    }
    free(ends);
}

/* ---- opening ----------------------------------------------------------- */

static char *current_user(void)
{
    struct passwd *pw = getpwuid(getuid());
    if (pw && pw->pw_name)
        return xstrdup(pw->pw_name);
    return xasprintf("uid%ld", (long)getuid());
}

/*
 * Reads engine.yaml, or writes the default. What to log of it goes to
 * later, a line each: the log's first line says who jobs run as, which
 * needs the configuration.
 */
static int load_config(struct engine *eng, struct strbuf *err, struct strbuf *later)
{
    char *text = NULL;
    size_t len = 0;
    struct strbuf io = STRBUF_INIT;
    if (access(eng->config_path, F_OK) != 0) {
        struct machine_info mi;
        config_probe_machine(&mi);
        char *user = current_user();
        config_default(&eng->cfg, &mi, user, eng->state_dir, eng->opt.demo);
        free(user);
        machine_info_free(&mi);
        struct strbuf out = STRBUF_INIT;
        config_write(&eng->cfg, &out);
        char *dir = xstrdup(eng->config_path);
        char *slash = strrchr(dir, '/');
        if (slash && slash != dir)
            *slash = '\0';
        int rc = (slash ? file_mkdirs(dir, 0700, err) : 0) ||
                 file_write_atomic(eng->config_path, out.buf, out.len, 0600, err);
        free(dir);
        strbuf_free(&out);
        if (rc == 0)
            strbuf_addf(later, "wrote a default configuration to %s%s\n", eng->config_path,
                        eng->opt.demo ? " (with simulated demo nodes)" : "");
        return rc ? -1 : 0;
    }
    if (file_read_regular(eng->config_path, 4u << 20, &text, &len, &io) != 0) {
        strbuf_addf(err, "%s", strbuf_str(&io));
        strbuf_free(&io);
        return -1;
    }
    struct findings fs = FINDINGS_INIT;
    int rc = config_parse(eng->config_path, text, len, &eng->cfg, &fs);
    for (size_t i = 0; i < fs.count; i++) {
        const struct finding *f = &fs.items[i];
        if (rc != 0 && f->severity != SEVERITY_ERROR)
            continue;
        strbuf_addf(err, "%s%s:%d:%d: %s: %s%s%s", err->len ? "\n" : "", eng->config_path, f->line,
                    f->col, severity_name(f->severity), f->path, f->path[0] ? ": " : "",
                    f->message);
    }
    if (rc == 0 && err->len) {
        strbuf_addf(later, "%s\n", strbuf_str(err));
        strbuf_reset(err);
    }
    if (rc == 0 && eng->opt.demo) { /* --demo on a config that exists: added, and said */
        struct strbuf said = STRBUF_INIT;
        int added = config_add_demo(&eng->cfg, &said);
        strbuf_addf(later, "--demo: %s %s%s%s\n",
                    added ? "added simulated nodes sim-n1..sim-n4, specs sim-gpu-1 and sim-gpu-8 "
                            "and pool sim-public to"
                          : "the simulated demo nodes are already in",
                    eng->config_path, said.len ? "; " : "", strbuf_str(&said));
        strbuf_free(&said);
    }
    findings_free(&fs);
    free(text);
    strbuf_free(&io);
    return rc;
}

/* Loading the store: the engine, and the uids of records it could not read (files kept). */
struct load_ctx {
    struct engine *eng;
    char **skipped;
    size_t skipped_count;
};

static int load_job(void *ctx, const char *uid, uint64_t seq, const char *json)
{
    struct load_ctx *lc = ctx;
    struct engine *eng = lc->eng;
    struct ejob *job = job_from_record(eng, json);
    if (job == NULL) {
        engine_log("job %s: unreadable record, skipped", uid);
        lc->skipped = xreallocarray(lc->skipped, lc->skipped_count + 1, sizeof *lc->skipped);
        lc->skipped[lc->skipped_count++] = xstrdup(uid);
        return 0;
    }
    job->seq = seq;
    derive_outputs(eng, job);
    take_snapshot(eng, job); /* it is what the disk holds */
    add_job(eng, job);
    engine_drop_specs(eng); /* the job as saved says it all: its whole spec goes at once */
    return 0;
}

/* Does the store have a job uid (read or not)? */
static bool uid_in_store(void *ctx, const char *uid)
{
    struct load_ctx *lc = ctx;
    if (engine_find_uid(lc->eng, uid) != NULL)
        return true;
    for (size_t i = 0; i < lc->skipped_count; i++)
        if (strcmp(lc->skipped[i], uid) == 0)
            return true;
    return false;
}

int engine_open(const struct engine_options *opt, struct loop *lp, struct engine **out,
                struct strbuf *err)
{
    struct engine *eng = xcalloc(1, sizeof *eng);
    eng->opt = *opt;
    eng->loop = lp;
    eng->inotify_fd = -1;
    eng->config_path = xstrdup(opt->config_path);
    eng->state_dir = xstrdup(opt->state_dir);
    eng->shim_path = xstrdup(opt->shim_path);
    eng->log_dir = xasprintf("%s/logs", opt->state_dir);
    eng->next_seq = 1;
    if (eng->opt.grace_ms <= 0)
        eng->opt.grace_ms = 10000;
    if (eng->opt.log_cap == 0)
        eng->opt.log_cap = 16u << 20;
    if (eng->opt.start_timeout_ms <= 0)
        eng->opt.start_timeout_ms = RUNNER_REPORT_TIMEOUT_MS;
    /* A pidfd per running shim and a pipe per start in flight: room beyond the default 1024. */
    struct rlimit nofile;
    if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
        nofile.rlim_cur = nofile.rlim_max;
        setrlimit(RLIMIT_NOFILE, &nofile);
    }

    if (file_mkdirs(eng->log_dir, 0700, err) != 0)
        goto fail;
    /* Status, claim and pid files: on a tmpfs where one may be used (engine/rundir). */
    struct strbuf where = STRBUF_INIT;
    const char *const given[] = {opt->runtime_dir, NULL};
    eng->status_dir =
        rundir_status_dir(opt->state_dir, opt->runtime_dir ? given : rundir_bases(), &where, err);
    if (eng->status_dir == NULL) {
        strbuf_free(&where);
        goto fail;
    }
    struct strbuf said = STRBUF_INIT;
    if (load_config(eng, err, &said) != 0) {
        strbuf_free(&said);
        strbuf_free(&where);
        goto fail;
    }
    eng->cfg.engine_user = current_user(); /* the Unix socket's owner: an admin always */
    /* The first things said: who jobs run as, and what holds them to their specs. */
    eng->runas = runas_setup(&eng->cfg);
    engine_log("%s", runas_summary(eng->runas));
    /* Its own subtree of cgroups (what a killed engine or shim left there goes, below). */
    cgroup_use_engine(opt->cgroups, eng->state_dir);
    engine_log("resource limits: %s%s%s", cgroup_summary(opt->cgroups),
               cgroup_base(opt->cgroups) ? "; workers' cgroups under " : "",
               cgroup_base(opt->cgroups) ? cgroup_base(opt->cgroups) : "");
    for (char *line = said.buf, *nl; line && *line; line = nl + 1) {
        nl = strchr(line, '\n');
        if (nl == NULL)
            break;
        *nl = '\0';
        engine_log("%s", line);
    }
    strbuf_free(&said);
    engine_log("%s", strbuf_str(&where));
    strbuf_free(&where);
    for (size_t i = 0; i < eng->cfg.volume_count; i++) {
        struct strbuf ignored = STRBUF_INIT;
        const char *path = eng->cfg.volumes[i].path;
        bool existed = path && access(path, F_OK) == 0;
        if (path && file_mkdirs(path, 0755, &ignored))
            engine_log("volume %s: %s", eng->cfg.volumes[i].id, strbuf_str(&ignored));
        else if (path && !existed && geteuid() == 0)
            chmod(path, 01777); /* jobs run as many users: each may write, none remove another's */
        strbuf_free(&ignored);
    }
    char *db = xasprintf("%s/engine.db", opt->state_dir);
    enum store_status st = store_open(db, &eng->store, err);
    free(db);
    if (st != STORE_OK)
        goto fail;
    struct load_ctx lc = {eng, NULL, 0};
    bool loaded = store_jobs_each(eng->store, load_job, &lc, err) == STORE_OK;
    /* What a crash left of deleted jobs (files of uids the store does not have). */
    if (loaded)
        jobfiles_collect(eng->state_dir, eng->status_dir, uid_in_store, &lc);
    for (size_t i = 0; i < lc.skipped_count; i++)
        free(lc.skipped[i]);
    free(lc.skipped);
    if (!loaded)
        goto fail;
    uint64_t max = store_max_seq(eng->store);
    if (max >= eng->next_seq)
        eng->next_seq = max + 1;

    eng->inotify_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (eng->inotify_fd < 0) {
        strbuf_addf(err, "inotify: %s", strerror(errno));
        goto fail;
    }
    eng->status_wd = inotify_add_watch(eng->inotify_fd, eng->status_dir, IN_MOVED_TO);
    eng->log_wd =
        inotify_add_watch(eng->inotify_fd, eng->log_dir, IN_MODIFY | IN_CREATE | IN_MOVED_TO);
    if (eng->status_wd < 0 || eng->log_wd < 0) {
        strbuf_addf(err, "inotify on %s: %s", eng->state_dir, strerror(errno));
        goto fail;
    }
    loop_add_fd(lp, eng->inotify_fd, POLLIN, on_inotify, eng);
    eng->sandbox = runner_sandbox_available();
    if (!eng->sandbox)
        engine_log("bubblewrap not available: workers run without a sandbox; volumes and "
                   "the SSH directory are passed as TRAINJOB_MOUNT_* variables");
    eng->launcher = launcher_new(lp, shimwatch_launched, eng);

    for (size_t i = 0; i < eng->job_count;)
        if (lifecycle_adopt(eng, eng->jobs[i]))
            i++; /* else a delete it finished took the job away: slot i holds the next one */
    /* Adopted: a live worker's cgroups stay (its shim may not have joined them yet). */
    size_t swept = cgroup_sweep(opt->cgroups, lifecycle_cgroup_live, eng);
    if (swept)
        engine_log("removed %zu empty cgroups left by an earlier run", swept);
    lifecycle_schedule_soon(eng);
    *out = eng;
    return 0;
fail:
    engine_close(eng);
    return -1;
}

void engine_close(struct engine *eng)
{
    if (eng == NULL)
        return;
    if (eng->inotify_fd >= 0) {
        loop_remove_fd(eng->loop, eng->inotify_fd);
        close(eng->inotify_fd);
    }
    free(eng->stopped_by);
    eng->stopped_by = NULL;
    if (eng->save_timer)
        loop_cancel(eng->loop, eng->save_timer);
    eng->save_timer = 0;
    if (eng->backoff_timer)
        loop_cancel(eng->loop, eng->backoff_timer);
    /* A last try for what the disk refused; what still fails is in the log. */
    for (size_t i = 0; eng->store && i < eng->job_count; i++) {
        struct ejob *job = eng->jobs[i];
        if (!job->unsaved)
            continue;
        char *rec = job_record(eng, job);
        if (store_job_update(eng->store, job->uid, rec, NULL) != STORE_OK)
            engine_log("job %s: not saved at exit; after a restart it is as last saved", job->name);
        free(rec);
    }
    /* Workers keep running under their shims; starts in flight report to the next trainjobd. */
    launcher_free(eng->launcher);
    eng->launcher = NULL;
    eng->spawn_wanted = false;
    rundir_release(eng->state_dir, eng->status_dir);
    lifecycle_sched_free(eng);
    if (eng->trim_timer)
        loop_cancel(eng->loop, eng->trim_timer);
    for (size_t i = 0; i < eng->job_count; i++) {
        lifecycle_forget(eng, eng->jobs[i]);
        lifecycle_cancel_kill(eng, eng->jobs[i]);
        ejob_free(eng->jobs[i]);
    }
    if (eng->sched_timer)
        loop_cancel(eng->loop, eng->sched_timer);
    if (eng->spawn_timer)
        loop_cancel(eng->loop, eng->spawn_timer);
    if (eng->drop_timer)
        loop_cancel(eng->loop, eng->drop_timer);
    free(eng->spec_loaded);
    bump_free(&eng->batch_snaps); /* after the jobs whose pending snapshots were in it */
    for (size_t i = 0; i < eng->term_after_commit_count; i++)
        free(eng->term_after_commit[i]);
    free(eng->term_after_commit);
    engine_intern_free(eng); /* after the jobs that pointed at its texts */
    free(eng->jobs);
    hmap_free(&eng->by_name);
    hmap_free(&eng->by_uid);
    for (size_t i = 0; i < eng->watcher_count; i++) {
        stream_close(eng->watchers[i]);
        stream_unref(eng->watchers[i]);
    }
    free(eng->watchers);
    for (size_t i = 0; i < eng->follower_count; i++) {
        stream_close(eng->followers[i]);
        stream_unref(eng->followers[i]);
    }
    free(eng->followers);
    for (size_t i = 0; i < eng->scalar_follower_count; i++) {
        stream_close(eng->scalar_followers[i]);
        stream_set_refill(eng->scalar_followers[i], NULL, NULL,
                          NULL); /* its inotify, off the loop */
        stream_unref(eng->scalar_followers[i]);
    }
    free(eng->scalar_followers);
    if (eng->store)
        store_close(eng->store);
    config_free(&eng->cfg);
    runas_free(eng->runas);
    free(eng->config_path);
    free(eng->state_dir);
    free(eng->shim_path);
    free(eng->status_dir);
    free(eng->log_dir);
    free(eng);
}

const char *engine_subscription(const struct engine *eng)
{
    return eng->cfg.subscription ? eng->cfg.subscription : "local";
}

const char *engine_resource_group(const struct engine *eng)
{
    return eng->cfg.resource_group ? eng->cfg.resource_group : "default";
}

const char *engine_zone(const struct engine *eng)
{
    return eng->cfg.zone ? eng->cfg.zone : "local-1z";
}

const char *engine_key_user(const struct engine *eng, const char *access_key, const char **secret)
{
    const struct config_key *k = config_key(&eng->cfg, access_key);
    if (k == NULL)
        return NULL;
    *secret = k->secret_key;
    return k->user;
}
