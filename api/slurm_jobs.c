/*
 * slurm_jobs: Slurm's jobs as trainjob's — Slurm's states (and pending
 * reasons, exit codes) mapped to trainjob's, the workspace's jobs from one
 * GET /jobs matched to their job directories, and the get and list
 * operations built from both. A list reads each job directory once (its
 * mark, job.json and state.json: struct dir_facts), ahead in a thread of
 * its own while slurmrestd answers (struct prefetch). Called by the other
 * api/slurm*.c (slurm_priv.h); slurm_job_state and slurm_job_ended are in
 * slurm.h.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/finding.h"
#include "api/jobspec_json.h"
#include "api/slurm_priv.h"
#include "api/slurm_script.h"
#include "api/slurm_shapes.h"
#include "util/hmap.h"
#include "util/strbuf.h"
#include "util/timefmt.h"
#include "util/utf8.h"
#include "util/xalloc.h"

#define JOBJSON_MAX (1u << 20) /* job.json read back */

/* ---- states --------------------------------------------------------------- */

struct reason_word {
    const char *reason;
    const char *words;
};

static const struct reason_word reasons[] = {
    {"None", "waiting to be scheduled"},
    {"Resources", "waiting for free resources (nodes, GPUs, CPUs or memory)"},
    {"Priority", "waiting behind jobs of higher priority"},
    {"BeginTime", "held until its begin time"},
    {"Dependency", "waiting for a job it depends on"},
    {"JobHeldUser", "held by its user"},
    {"JobHeldAdmin", "held by an administrator"},
    {"QOSNotAllowed", "its QOS is not allowed in this partition"},
    {"InvalidQOS", "its QOS is not valid"},
    {"ReqNodeNotAvail", "a node it needs is not available (down, drained or reserved)"},
    {"PartitionNodeLimit", "it asks for more nodes than the partition allows"},
    {"PartitionDown", "the partition is down"},
    {"PartitionInactive", "the partition is inactive"},
    {"PartitionConfig", "the partition cannot hold it (GPUs, CPUs or memory per node)"},
    {"NodeDown", "a node it needs is down"},
    {"BadConstraints", "no node matches what it asks for"},
    {"Reservation", "waiting for its reservation"},
    {"Licenses", "waiting for licenses"},
    {"launch_failed_requeued_held", "its launch failed; held after a requeue"},
};

static void reason_words(const char *reason, struct strbuf *out)
{
    for (size_t i = 0; reason && i < sizeof reasons / sizeof reasons[0]; i++)
        if (strcmp(reason, reasons[i].reason) == 0) {
            strbuf_adds(out, reasons[i].words);
            return;
        }
    if (reason && strncmp(reason, "QOS", 3) == 0) {
        strbuf_adds(out, "held by a limit of its QOS (");
    } else if (reason && strncmp(reason, "Assoc", 5) == 0) {
        strbuf_adds(out, "held by a limit of its account (");
    } else {
        strbuf_adds(out, "Slurm says: ");
        utf8_sanitize(out, reason ? reason : "?", reason ? strnlen(reason, 64) : 1, 0);
        return;
    }
    utf8_sanitize(out, reason, strnlen(reason, 64), 0);
    strbuf_adds(out, ")");
}

bool slurm_is(const char *a, const char *b)
{
    return a && strcmp(a, b) == 0;
}

/* "exit code 3" / "killed by signal 9 (SIGKILL)". */
static void exit_words(const struct slurm_job *j, struct strbuf *out)
{
    if (!j->has_exit)
        return;
    if (j->exit_signal) {
        const char *name = sigabbrev_np(j->exit_signal);
        strbuf_addf(out, "killed by signal %d", j->exit_signal);
        if (name)
            strbuf_addf(out, " (SIG%s)", name);
    } else {
        strbuf_addf(out, "exit code %d", j->exit_status);
    }
}

bool slurm_job_ended(const struct slurm_job *j)
{
    static const char *const ended[] = {
        "COMPLETED", "CANCELLED", "FAILED",         "TIMEOUT",      "NODE_FAIL",    "OUT_OF_MEMORY",
        "BOOT_FAIL", "DEADLINE",  "PREEMPTED_DONE", "SPECIAL_EXIT", "LAUNCH_FAILED"};
    for (size_t i = 0; i < sizeof ended / sizeof ended[0]; i++)
        if (slurm_is(j->state, ended[i]))
            return true;
    return false;
}

enum job_state slurm_job_state(const struct slurm_job *j, struct strbuf *msg)
{
    const char *s = j->state ? j->state : "";
    if (slurm_is(s, "PENDING") || slurm_is(s, "REQUEUED") || slurm_is(s, "REQUEUE_HOLD") ||
        slurm_is(s, "REQUEUE_FED") || slurm_is(s, "PREEMPTED")) {
        if (j->restarts > 0 || !slurm_is(s, "PENDING")) {
            strbuf_addf(msg, "preempted by a job of higher priority and requeued (run %d); ",
                        j->restarts + 1);
        }
        reason_words(j->reason, msg);
        return JOB_STATE_QUEUEING;
    }
    if (slurm_is(s, "CONFIGURING")) {
        strbuf_adds(msg, "nodes are being configured");
        return JOB_STATE_STARTING;
    }
    if (slurm_is(s, "RUNNING"))
        return JOB_STATE_RUNNING;
    if (slurm_is(s, "COMPLETING") || slurm_is(s, "STAGE_OUT") || slurm_is(s, "SIGNALING")) {
        strbuf_adds(msg, "completing: Slurm is ending the job's steps");
        return JOB_STATE_RUNNING;
    }
    if (slurm_is(s, "COMPLETED"))
        return JOB_STATE_SUCCEEDED;
    if (slurm_is(s, "CANCELLED")) {
        strbuf_adds(msg, "stopped (the Slurm job was cancelled)");
        return JOB_STATE_SUSPENDED;
    }
    if (slurm_is(s, "SUSPENDED") || slurm_is(s, "STOPPED")) {
        strbuf_adds(msg, "suspended by Slurm");
        return JOB_STATE_SUSPENDED;
    }
    static const struct reason_word failed[] = {
        {"FAILED", "failed"},
        {"TIMEOUT", "reached its time limit"},
        {"NODE_FAIL", "a node failed"},
        {"OUT_OF_MEMORY", "ran out of memory"},
        {"BOOT_FAIL", "a node failed to boot"},
        {"DEADLINE", "missed its deadline"},
        {"SPECIAL_EXIT", "ended with a special exit"},
        {"LAUNCH_FAILED", "could not be launched"},
    };
    for (size_t i = 0; i < sizeof failed / sizeof failed[0]; i++)
        if (slurm_is(s, failed[i].reason)) {
            strbuf_adds(msg, failed[i].words);
            if (j->has_exit) {
                strbuf_adds(msg, ": ");
                exit_words(j, msg);
            }
            return JOB_STATE_FAILED;
        }
    strbuf_adds(msg, "Slurm state ");
    utf8_sanitize(msg, s, strnlen(s, 64), 0);
    return JOB_STATE_UNSPECIFIED;
}

/* ---- jobs ----------------------------------------------------------------- */

void slurm_found_free(struct slurm_found *f)
{
    free(f->jobs);
    slurm_joblist_unref(f->list);
    memset(f, 0, sizeof *f);
}

/* The name of the job whose directory dir is, in the workspace; NULL when it is none of them. */
static const char *name_in(struct backend *b, const char *cwd, char **prefix_cache)
{
    if (*prefix_cache == NULL) {
        char *d = slurm_jobdir_path(driver(b)->jobs_dir, b->target.workspace, "x");
        if (d == NULL)
            return NULL;
        d[strlen(d) - 1] = '\0'; /* ".../<workspace>/" */
        *prefix_cache = d;
    }
    size_t n = strlen(*prefix_cache);
    if (cwd == NULL || strncmp(cwd, *prefix_cache, n) != 0)
        return NULL;
    const char *name = cwd + n;
    if (*name == '\0' || strchr(name, '/'))
        return NULL;
    return name;
}

/*
 * The mark of the job directory dfd: 1 with it in mark (32 hex digits), 0
 * when the directory has none (one a trainjob from before marks submitted
 * from), -1 when it is unusable (not a plain file of the user's, not a
 * mark). *created: the mark's mtime, when the job was first submitted (a
 * start submits again, so Slurm's submit time is the run's).
 */
static int mark_at(int dfd, uid_t owner, char mark[33], int64_t *created)
{
    struct strbuf sb = STRBUF_INIT;
    struct stat st;
    *created = 0;
    int rc = slurm_read_job_file_st(dfd, owner, SLURM_MARK_FILE, 64, &sb, &st);
    int out = -1;
    if (rc == 0) {
        *created = (int64_t)st.st_mtime;
        if (strspn(strbuf_str(&sb), "0123456789abcdef") == 32) {
            memcpy(mark, sb.buf, 32);
            mark[32] = '\0';
            out = 1;
        }
    } else if (rc == -1 && errno == ENOENT) {
        out = 0;
    }
    strbuf_free(&sb);
    return out;
}

char *slurm_job_mark(const char *dir, uid_t owner, bool make)
{
    char *mark = NULL;
    int dfd = slurm_open_job_dir(dir, owner);
    for (int attempt = 0; dfd >= 0 && attempt < 2; attempt++) {
        char got[33];
        int64_t created;
        int rc = mark_at(dfd, owner, got, &created);
        if (rc == 1)
            mark = xstrdup(got);
        if (rc != 0 || !make || attempt > 0)
            break;
        /* Made once per job directory, O_EXCL: calls racing for it read the same one. */
        unsigned char rnd[16];
        if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd)
            break;
        char hex[33];
        for (size_t i = 0; i < sizeof rnd; i++)
            snprintf(hex + 2 * i, 3, "%02x", rnd[i]);
        int fd = openat(dfd, SLURM_MARK_FILE, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                        0644);
        if (fd >= 0) {
            if (write(fd, hex, 32) != 32) {
                /* read back below: a short mark is no mark */
            }
            close(fd);
        }
    }
    if (dfd >= 0)
        close(dfd);
    return mark;
}

const struct slurm_job *slurm_found_job(struct backend *b, const struct slurm_found *f,
                                        const char *name)
{
    char *prefix = NULL;
    const struct slurm_job *hit = NULL;
    for (size_t i = 0; i < f->count && !hit; i++) {
        const char *n = name_in(b, f->jobs[i]->cwd, &prefix);
        if (n && strcmp(n, name) == 0)
            hit = f->jobs[i];
    }
    free(prefix);
    return hit;
}

static char *rfc3339(int64_t epoch)
{
    if (epoch <= 0)
        return NULL;
    char buf[TIMEFMT_RFC3339_LEN];
    time_rfc3339(epoch * 1000, buf);
    return xstrdup(buf);
}

/* The stored job.json of the job directory dfd (-1: none), or false. */
static bool stored_job_at(int dfd, uid_t owner, struct jobspec *out)
{
    struct strbuf sb = STRBUF_INIT;
    bool ok = false;
    if (dfd >= 0 && slurm_read_job_file_at(dfd, owner, "job.json", JOBJSON_MAX, &sb) == 0) {
        json_t *j = json_loadb(sb.buf ? sb.buf : "", sb.len, 0, NULL);
        struct findings fs = FINDINGS_INIT;
        if (json_is_object(j)) {
            jobspec_free(out);
            jobspec_init(out);
            ok = jobspec_from_json(j, JOBSPEC_LENIENT, out, &fs) == 0;
        }
        findings_free(&fs);
        json_decref(j);
    }
    strbuf_free(&sb);
    return ok;
}

/* The stored job.json of a directory, or false. */
bool slurm_stored_job(const char *dir, uid_t owner, struct jobspec *out)
{
    int dfd = slurm_open_job_dir(dir, owner);
    bool ok = stored_job_at(dfd, owner, out);
    if (dfd >= 0)
        close(dfd);
    return ok;
}

/* state.json's "restarts": the fault-tolerance restarts the supervisor used; -1 when unknown. */
static int32_t restarts_used(int dfd, uid_t owner)
{
    struct strbuf sb = STRBUF_INIT;
    int32_t n = -1;
    if (dfd >= 0 && slurm_read_job_file_at(dfd, owner, "state.json", WORKER_FILE_MAX, &sb) == 0) {
        json_t *j = json_loadb(sb.buf ? sb.buf : "", sb.len, 0, NULL);
        const json_t *v = json_object_get(j, "restarts");
        if (json_is_integer(v) && json_integer_value(v) >= 0 && json_integer_value(v) < 1000000)
            n = (int32_t)json_integer_value(v);
        json_decref(j);
    }
    strbuf_free(&sb);
    return n;
}

/* Running workers, from the records (else every allocated node of a running job). */
static int32_t ready_count(const char *dir, uid_t owner, const struct slurm_job *sj)
{
    struct worker_list w;
    memset(&w, 0, sizeof w);
    int32_t n = 0;
    if (slurm_workers_from_dir(dir, owner, &w) > 0) {
        for (size_t i = 0; i < w.count; i++)
            n += w.workers[i].phase == WORKER_RUNNING;
    } else if (slurm_is(sj->state, "RUNNING")) {
        n = (int32_t)sj->alloc_count;
    }
    worker_list_free(&w);
    return n;
}

/*
 * The priority the Slurm job has: the one the context's qos: map gives its
 * QOS (IDLE_<priority> keys for an idle job), else the job's own, else
 * NORMAL, the platform's default.
 */
static enum priority priority_of(const json_t *qos, const struct slurm_job *sj,
                                 const struct jobspec *job)
{
    const char *key;
    json_t *v;
    const char *idle = jobspec_is_idle(job) ? "IDLE_" : "";
    if (sj && sj->qos && *sj->qos)
        json_object_foreach((json_t *)qos, key, v)
        {
            size_t n = strlen(idle);
            if (!slurm_is(json_string_value(v), sj->qos) || strncmp(key, idle, n) != 0)
                continue;
            int p = enum_value(&priority_names, key + n);
            if (p > 0)
                return (enum priority)p;
        }
    return job->scheduling.priority ? job->scheduling.priority : PRIORITY_NORMAL;
}

/* What a list reads of a job directory: once, each file through the directory's descriptor. */
struct dir_facts {
    bool read;  /* facts_read made it */
    bool open;  /* opened as the user's (slurm_open_job_dir's checks) */
    int marked; /* mark_at's: 1 (mark), 0 none, -1 unusable */
    char mark[33];
    int64_t created; /* the mark's mtime; 0: none */
    bool stored;     /* job.json was read into job */
    bool taken;      /* job was moved out (make_job_from): nothing left to free */
    struct jobspec job;
    int32_t restarts; /* state.json's; -1 unknown */
};

/* The facts of the job directory dfd (-1: none); whole: job.json and state.json too. */
static void facts_read(int dfd, uid_t owner, bool whole, struct dir_facts *f)
{
    memset(f, 0, sizeof *f);
    f->read = true;
    f->marked = -1;
    f->restarts = -1;
    jobspec_init(&f->job);
    if (dfd < 0)
        return;
    f->open = true;
    f->marked = mark_at(dfd, owner, f->mark, &f->created);
    if (!whole)
        return;
    f->stored = stored_job_at(dfd, owner, &f->job);
    f->restarts = restarts_used(dfd, owner);
}

static void facts_free(struct dir_facts *f)
{
    if (!f->taken)
        jobspec_free(&f->job);
}

/*
 * How a job Slurm no longer reports ended, by its events, when its workers'
 * records do not say (it never ran, or was ended under a running worker):
 * the last event that tells — stopped, by trainjob ("Stopped") or by Slurm
 * (the supervisor's "Stopping": a cancel or a preemption), or ended as the
 * supervisor said — unless a submit, a start or a requeue came after it
 * (JOB_STATE_UNSPECIFIED: unknown). Only the events' tail is read.
 */
static enum job_state state_by_events(const char *dir, uid_t owner, const char *name)
{
    struct job_event_list l;
    enum job_state st = JOB_STATE_UNSPECIFIED;
    slurm_events_from_dir(dir, owner, name, 8192, &l);
    for (size_t i = l.count; i-- > 0;) {
        const struct job_event *e = &l.events[i];
        if (e->kind == EVENT_STOPPED) {
            st = JOB_STATE_SUSPENDED; /* ACP's word for stopped, as a cancelled Slurm job's */
            break;
        }
        if (e->kind == EVENT_STATE &&
            (e->state == JOB_STATE_SUCCEEDED || e->state == JOB_STATE_FAILED)) {
            st = e->state;
            break;
        }
        if (e->kind == EVENT_CREATED || e->kind == EVENT_STARTED || e->kind == EVENT_PREEMPTED)
            break;
    }
    job_event_list_free(&l);
    return st;
}

/*
 * The job as trainjob shows it: job.json (when readable; taken from f)
 * plus Slurm's view of it (sj; NULL when Slurm no longer has it), from its
 * directory's facts f. Whether job.json was read.
 */
static bool make_job_from(struct backend *b, const char *name, const struct slurm_job *sj,
                          struct dir_facts *f, struct jobspec *out)
{
    uid_t owner = driver(b)->owner_uid;
    bool stored = f->stored;
    *out = f->job; /* as job.json gave it, even in part */
    jobspec_init(&f->job);
    f->stored = false;
    f->taken = true;
    int64_t created = f->created;
    /* Its path, only for what is read by path: a forgotten job's files, a running one's workers. */
    char *dir = sj ? NULL : slurm_jobdir_path(driver(b)->jobs_dir, b->target.workspace, name);
    free(out->name);
    out->name = xstrdup(name);
    free(out->workspace_name);
    out->workspace_name = xstrdup(b->target.workspace);
    free(out->uid);
    out->uid = xasprintf("slurm:%s/%s", b->target.workspace, name);
    free(out->state_message);
    out->state_message = NULL;
    out->scheduling.priority = priority_of(driver(b)->qos, sj, out);
    /* Ready workers are counted whatever the state, as trainjobd does: 0 of 2 while queued. */
    out->has_ready_workers = true;
    out->ready_workers = 0;
    if (sj == NULL) {
        /* Gone from slurmctld (MinJobAge): the supervisor's records say how it ended. */
        struct stat js;
        char *jp = dir ? xasprintf("%s/job.json", dir) : NULL;
        if (created > 0 && out->create_time == NULL)
            out->create_time = rfc3339(created);
        else if (jp && lstat(jp, &js) == 0 && out->create_time == NULL)
            out->create_time = rfc3339((int64_t)js.st_mtime); /* when it was submitted */
        free(jp);
        int32_t used_then = f->restarts;
        if (used_then >= 0) {
            out->has_restart_count = true;
            out->restart_count = used_then;
        }
        struct worker_list w;
        memset(&w, 0, sizeof w);
        size_t ok = 0, failed = 0, n = dir ? slurm_workers_from_dir(dir, owner, &w) : 0;
        for (size_t i = 0; i < n; i++) {
            ok += w.workers[i].phase == WORKER_SUCCEEDED;
            failed += w.workers[i].phase == WORKER_FAILED;
        }
        worker_list_free(&w);
        out->state = failed         ? JOB_STATE_FAILED
                     : n && ok == n ? JOB_STATE_SUCCEEDED
                                    : JOB_STATE_UNSPECIFIED;
        const char *from = "its workers' records";
        if (out->state == JOB_STATE_UNSPECIFIED && dir) {
            out->state = state_by_events(dir, owner, name);
            from = "its events";
        }
        out->state_message =
            out->state == JOB_STATE_UNSPECIFIED
                ? xstrdup("Slurm no longer reports this job (it ended more than MinJobAge ago)")
                : xasprintf("%s (from %s: Slurm no longer reports the job)",
                            out->state == JOB_STATE_SUSPENDED ? "stopped" : "ended", from);
        free(dir);
        return stored;
    }
    free(out->id);
    out->id = xasprintf("%lld", (long long)sj->id);
    if (sj->user && out->ownership.user_name == NULL) {
        out->ownership.present = true;
        out->ownership.user_name = slurm_clean(sj->user, 64);
    }
    struct strbuf msg = STRBUF_INIT;
    out->state = slurm_job_state(sj, &msg);
    if (msg.len)
        out->state_message = strbuf_detach(&msg, NULL);
    strbuf_free(&msg);
    int32_t used = f->restarts;
    out->has_restart_count = true;
    out->restart_count = used >= 0 ? used : 0;
    if (out->state == JOB_STATE_RUNNING &&
        (dir = slurm_jobdir_path(driver(b)->jobs_dir, b->target.workspace, name)) != NULL)
        out->ready_workers = ready_count(dir, owner, sj);
    free(out->create_time);
    out->create_time =
        rfc3339(created > 0 && created <= sj->submit_time ? created : sj->submit_time);
    free(out->start_time);
    out->start_time = out->state == JOB_STATE_QUEUEING ? NULL : rfc3339(sj->start_time);
    free(out->complete_time);
    out->complete_time = slurm_job_ended(sj) ? rfc3339(sj->end_time) : NULL;
    free(dir);
    return stored;
}

/* make_job_from the job directory of name, read here. */
static void make_job(struct backend *b, const char *name, const struct slurm_job *sj,
                     struct jobspec *out)
{
    char *dir = slurm_jobdir_path(driver(b)->jobs_dir, b->target.workspace, name);
    int dfd = dir ? slurm_open_job_dir(dir, driver(b)->owner_uid) : -1;
    struct dir_facts f;
    facts_read(dfd, driver(b)->owner_uid, true, &f);
    if (dfd >= 0)
        close(dfd);
    make_job_from(b, name, sj, &f, out);
    facts_free(&f);
    free(dir);
}

/* The workspace's directory (where its jobs' directories are), or NULL. */
static char *workspace_dir(struct backend *b)
{
    char *d = slurm_jobdir_path(driver(b)->jobs_dir, b->target.workspace, "x");
    if (d)
        d[strlen(d) - 2] = '\0';
    return d;
}

/* The names of the directories in d (at most 100,000), unchecked. */
static size_t dir_names(const char *d, char ***out)
{
    *out = NULL;
    int fd = d ? slurm_open_dir_nofollow(d) : -1;
    if (fd < 0)
        return 0;
    DIR *dp = fdopendir(fd);
    if (dp == NULL) {
        close(fd);
        return 0;
    }
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(dp)) != NULL && n < 100000) {
        /* Whose it is is checked as it is opened (slurm_open_job_dir), if it is. */
        if (e->d_name[0] == '.' || (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN))
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            *out = xreallocarray(*out, cap, sizeof **out);
        }
        (*out)[n++] = xstrdup(e->d_name);
    }
    closedir(dp);
    return n;
}

/*
 * Whether the Slurm job j is the user's trainjob job, its directory's mark
 * being marked (mark_at's): Slurm's user is the context's (checked as the
 * reply was read) and the comment carries the directory's mark, read from a
 * directory and file of the user's. A job directory with no mark yet, from
 * a trainjob before marks, has its jobs of the user's taken as they were
 * (only Slurm's user could be checked then); the next submit from it writes
 * the mark.
 */
static bool ours(const struct slurm_job *j, int marked, const char *mark)
{
    size_t n = strlen(SLURM_MARK_PREFIX);
    bool says = j->comment != NULL && strncmp(j->comment, SLURM_MARK_PREFIX, n) == 0;
    return marked == 1 ? says && strcmp(j->comment + n, mark) == 0 : marked == 0 && !says;
}

/* hmap's equal for the names of the jobs found: an item is a slot of that array. */
static bool name_eq(const void *item, const void *key)
{
    return strcmp(*(const char *const *)item, key) == 0;
}

/*
 * The reply to GET /jobs: the one asked less than JOBS_FRESH_MS ago, else
 * asked with the update_time of the list kept (this process's or the last
 * one's, 304 when no job changed), else the whole list.
 */
static enum backend_status jobs_reply(struct backend *b, struct slurm_joblist **out,
                                      struct api_error *err)
{
    struct slurm *s = driver(b);
    int64_t now = time_now_ms();
    if (s->jobs_cache && s->jobs_at && now - s->jobs_at < JOBS_FRESH_MS) {
        *out = slurm_joblist_ref(s->jobs_cache); /* asked less than a second ago */
        return BACKEND_OK;
    }
    char path[64];
    if (s->jobs_cache == NULL && s->jobs_at == 0) /* the last process's list, to ask after */
        s->jobs_cache = slurm_kept_jobs_read(b, &s->jobs_since);
    if (s->jobs_cache)
        snprintf(path, sizeof path, "jobs?update_time=%lld", (long long)s->jobs_since);
    else
        snprintf(path, sizeof path, "jobs");
    json_t *reply = NULL;
    struct slurm_joblist *jobs = NULL;
    enum backend_status st = slurm_rest_jobs(b, path, &reply, &jobs, err);
    json_decref(reply);
    if (st != BACKEND_OK)
        return st;
    if (jobs == s->jobs_cache) { /* the same reply again, as the loop runs a call again */
        slurm_joblist_unref(jobs);
    } else if (jobs) {
        /* A full reply: what slurmctld knew when the request was made (a second's slack). */
        slurm_joblist_unref(s->jobs_cache);
        s->jobs_cache = jobs;
        s->jobs_since = s->sent_ms / 1000 - 1;
        slurm_kept_write_text(b, "jobs", &jobs->text, s->jobs_since);
    } /* else 304: no job changed since jobs_since */
    s->jobs_at = now;
    *out = slurm_joblist_ref(s->jobs_cache);
    return BACKEND_OK;
}

/* A name's Slurm jobs of the user's, before its directory's mark is read. */
struct name_group {
    const char *name; /* in the cwd of its first job */
    size_t first;     /* index in the candidates; SIZE_MAX: none */
};

/*
 * A list's reading of the workspace's job directories: the names in the
 * directory, and each one's facts — read ahead while slurmrestd renders
 * /jobs (0.1 s for 1,000 jobs) when the list waits for it, by a thread of
 * its own (which lists the directory too, so the request is not held back
 * by it) and, once the calling thread has its reply, by both (each takes
 * the next directory not taken); else as they are asked for. The names are
 * the calling thread's once listed (prefetch_listed), facts once the
 * reading thread has ended (prefetch_wait).
 */
struct prefetch {
    char *dir; /* the workspace's directory, to list */
    char **names;
    size_t count;
    struct dir_facts *facts; /* facts[i]: names[i]'s; .read false until read */
    struct hmap by_name;     /* of &names[i] */
    int wsfd;
    uid_t owner;
    atomic_size_t next; /* the next directory to read ahead */
    atomic_bool stop;   /* a list that failed reads no more */
    pthread_mutex_t lock;
    pthread_cond_t listed_cond;
    bool listed; /* names, count, facts, by_name and wsfd are set (under lock) */
    pthread_t thread;
    bool running;
};

/* Lists the workspace's directories: names, count, room for their facts, wsfd. */
static void prefetch_list(struct prefetch *p)
{
    p->count = dir_names(p->dir, &p->names);
    p->facts = xcalloc(p->count ? p->count : 1, sizeof *p->facts);
    for (size_t i = 0; i < p->count; i++)
        hmap_put(&p->by_name, hmap_hash(p->names[i], strlen(p->names[i])), &p->names[i]);
    p->wsfd = p->dir ? slurm_open_dir_nofollow(p->dir) : -1;
    pthread_mutex_lock(&p->lock);
    p->listed = true;
    pthread_cond_broadcast(&p->listed_cond);
    pthread_mutex_unlock(&p->lock);
}

/* Waits until the directories are listed (by the reading thread, if it lists them). */
static void prefetch_listed(struct prefetch *p)
{
    pthread_mutex_lock(&p->lock);
    while (!p->listed)
        pthread_cond_wait(&p->listed_cond, &p->lock);
    pthread_mutex_unlock(&p->lock);
}

/* Reads the directories not taken yet, one at a time (once listed). */
static void prefetch_take(struct prefetch *p)
{
    size_t i;
    while (!atomic_load(&p->stop) && (i = atomic_fetch_add(&p->next, 1)) < p->count) {
        int dfd = slurm_open_job_dir_at(p->wsfd, p->names[i], p->owner);
        facts_read(dfd, p->owner, true, &p->facts[i]);
        if (dfd >= 0)
            close(dfd);
    }
}

static void *prefetch_run(void *arg)
{
    prefetch_list(arg);
    prefetch_take(arg);
    return NULL;
}

/*
 * Starts a list's reading: ahead, a thread lists the workspace's
 * directories and reads them (here when no thread starts); else they are
 * listed here and read as asked for.
 */
static void prefetch_start(struct backend *b, struct prefetch *p, bool ahead)
{
    memset(p, 0, sizeof *p);
    atomic_init(&p->next, 0);
    atomic_init(&p->stop, false);
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->listed_cond, NULL);
    p->by_name = (struct hmap)HMAP_INIT;
    p->wsfd = -1;
    p->owner = driver(b)->owner_uid;
    p->dir = workspace_dir(b);
    p->running = ahead && pthread_create(&p->thread, NULL, prefetch_run, p) == 0;
    if (p->running)
        return;
    prefetch_list(p);
    if (ahead)
        prefetch_take(p);
}

/* Reads what is left with the reading thread, then waits for it: p's facts are the caller's. */
static void prefetch_wait(struct prefetch *p)
{
    if (p->running) {
        prefetch_listed(p);
        prefetch_take(p);
        pthread_join(p->thread, NULL);
        p->running = false;
    }
}

/* The facts of the directory names[i], read now when they were not ahead. */
static struct dir_facts *prefetch_facts(struct prefetch *p, size_t i)
{
    prefetch_wait(p);
    if (!p->facts[i].read) {
        int dfd = slurm_open_job_dir_at(p->wsfd, p->names[i], p->owner);
        facts_read(dfd, p->owner, true, &p->facts[i]);
        if (dfd >= 0)
            close(dfd);
    }
    return &p->facts[i];
}

/* The facts of name's directory, or NULL when it was not there when listed. */
static struct dir_facts *prefetch_get(struct prefetch *p, const char *name)
{
    prefetch_listed(p);
    char **slot = hmap_get(&p->by_name, hmap_hash(name, strlen(name)), name_eq, name);
    return slot ? prefetch_facts(p, (size_t)(slot - p->names)) : NULL;
}

static void prefetch_free(struct prefetch *p)
{
    atomic_store(&p->stop, true); /* a list that failed reads no more */
    prefetch_wait(p);
    for (size_t i = 0; i < p->count; i++) {
        facts_free(&p->facts[i]);
        free(p->names[i]);
    }
    free(p->facts);
    free(p->names);
    hmap_free(&p->by_name);
    if (p->wsfd >= 0)
        close(p->wsfd);
    free(p->dir);
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->listed_cond);
}

/* A job found, with its directory's facts (whole when a list asked: fn may take its job.json). */
typedef void (*found_fn)(void *ctx, const char *name, const struct slurm_job *j,
                         struct dir_facts *f);

/*
 * GET /jobs: the workspace's jobs, the newest Slurm job per name (one hash
 * lookup each) that is the user's by its directory's mark. Each name's
 * directory is read once: ahead by pf when a list asked (fn then called on
 * each job found, in out's order), else here, relative to the workspace's.
 */
static enum backend_status fetch_jobs(struct backend *b, struct slurm_found *out,
                                      struct prefetch *pf, found_fn fn, void *ctx,
                                      struct api_error *err)
{
    memset(out, 0, sizeof *out);
    struct slurm *s = driver(b);
    struct slurm_joblist *list = NULL;
    enum backend_status st = jobs_reply(b, &list, err);
    if (st != BACKEND_OK)
        return st;
    size_t cap = list ? list->count : 0;
    const struct slurm_job **cand = xcalloc(cap ? cap : 1, sizeof *cand);
    size_t *next = xcalloc(cap ? cap : 1, sizeof *next); /* the next candidate of the same name */
    struct name_group *groups = xcalloc(cap ? cap : 1, sizeof *groups);
    const char **names = xcalloc(cap ? cap : 1, sizeof *names); /* groups[k].name, hashed */
    size_t nc = 0, ng = 0;
    struct hmap by_name = HMAP_INIT;
    char *prefix = NULL;
    for (size_t i = 0; i < cap; i++) {
        const struct slurm_job *j = &list->jobs[i];
        const char *name = name_in(b, j->cwd, &prefix);
        if (name == NULL || !slurm_is(j->user, s->user))
            continue;
        cand[nc] = j;
        uint64_t h = hmap_hash(name, strlen(name));
        const char **seen = hmap_get(&by_name, h, name_eq, name);
        size_t g = seen ? (size_t)(seen - names) : ng++;
        if (seen == NULL) {
            names[g] = name;
            groups[g].name = name;
            groups[g].first = SIZE_MAX;
            hmap_put(&by_name, h, &names[g]);
        }
        next[nc] = groups[g].first;
        groups[g].first = nc++;
    }
    hmap_free(&by_name);
    out->jobs = xcalloc(ng ? ng : 1, sizeof *out->jobs);
    out->list = list;
    int wsfd = -1;
    for (size_t g = 0; g < ng; g++) {
        struct dir_facts own, *f = pf ? prefetch_get(pf, groups[g].name) : NULL;
        if (f == NULL) { /* not a list's, or a directory made since it was read */
            if (wsfd < 0 && prefix)
                wsfd = slurm_open_dir_nofollow(prefix);
            int dfd = slurm_open_job_dir_at(wsfd, groups[g].name, s->owner_uid);
            facts_read(dfd, s->owner_uid, pf != NULL, &own);
            if (dfd >= 0)
                close(dfd);
            f = &own;
        }
        /* A deleted job's directory is gone (Slurm keeps its end for MinJobAge): none is ours. */
        size_t best = SIZE_MAX;
        for (size_t c = groups[g].first; c != SIZE_MAX; c = next[c])
            if (f->open && ours(cand[c], f->marked, f->mark) &&
                (best == SIZE_MAX || cand[c]->id > cand[best]->id))
                best = c;
        if (best != SIZE_MAX) {
            out->jobs[out->count] = cand[best];
            if (fn)
                fn(ctx, groups[g].name, cand[best], f);
            out->count++;
        }
        if (f == &own)
            facts_free(&own);
    }
    if (wsfd >= 0)
        close(wsfd);
    free(cand);
    free(next);
    free(groups);
    free(names);
    free(prefix);
    return BACKEND_OK;
}

enum backend_status slurm_fetch_jobs(struct backend *b, struct slurm_found *out,
                                     struct api_error *err)
{
    return fetch_jobs(b, out, NULL, NULL, NULL, err);
}

enum backend_status slurm_get(struct backend *b, const char *name, struct jobspec *out,
                              struct api_error *err)
{
    jobspec_init(out);
    char *dir = slurm_backend_job_dir(b, name, err);
    if (dir == NULL)
        return BACKEND_REJECTED;
    struct slurm_found f;
    enum backend_status st = slurm_fetch_jobs(b, &f, err);
    if (st == BACKEND_OK) {
        const struct slurm_job *sj = slurm_found_job(b, &f, name);
        struct stat s;
        if (sj == NULL && lstat(dir, &s) != 0) {
            api_error_set(err, 404, "NotFound", "name", "no job '%s' in workspace %s", name,
                          b->target.workspace);
            st = BACKEND_REJECTED;
        } else {
            make_job(b, name, sj, out);
        }
    }
    slurm_found_free(&f);
    free(dir);
    return st;
}

/* A list filter's terms, as `get jobs` writes them: state='X' AND user_name='Y'. */
struct list_filter {
    char *state, *user;
};

static void list_filter_free(struct list_filter *f)
{
    free(f->state);
    free(f->user);
}

/* Parses filter into f; -1 with err set for a term the driver does not know. */
static int list_filter_parse(const char *filter, struct list_filter *f, struct api_error *err)
{
    memset(f, 0, sizeof f[0]);
    const char *p = filter ? filter : "";
    while (*p) {
        while (*p == ' ')
            p++;
        if (strncmp(p, "AND ", 4) == 0) {
            p += 4;
            continue;
        }
        char **slot = strncmp(p, "state='", 7) == 0        ? &f->state
                      : strncmp(p, "user_name='", 11) == 0 ? &f->user
                                                           : NULL;
        const char *v = slot ? strchr(p, '\'') + 1 : NULL;
        const char *end = v ? strchr(v, '\'') : NULL;
        if (slot == NULL || end == NULL) {
            api_error_set(err, 400, "InvalidFilter", "filter",
                          "the slurm driver filters by state='…' and user_name='…' only");
            list_filter_free(f);
            return -1;
        }
        free(*slot);
        *slot = xstrndup(v, (size_t)(end - v));
        p = end + 1;
    }
    return 0;
}

static bool list_filter_match(const struct list_filter *f, const struct jobspec *j)
{
    if (f->state && strcmp(enum_name(&job_state_names, (int)j->state), f->state) != 0)
        return false;
    if (f->user && (j->ownership.user_name == NULL || strcmp(j->ownership.user_name, f->user) != 0))
        return false;
    return true;
}

/* slurm_list's jobs as Slurm's are found. */
struct list_fill {
    struct backend *b;
    const struct list_query *q;
    struct job_list *out;
    size_t cap;
    const struct prefetch *pf; /* listed before the first job is made */
};

/*
 * Room for one more job in lf's list: first for one a directory listed (the
 * most a list holds, but for a directory made meanwhile), so it is not
 * grown (and copied) 10 times over on the way to 1,000.
 */
static struct jobspec *list_slot(struct list_fill *lf)
{
    if (lf->out->count == lf->cap) {
        lf->cap = lf->cap ? lf->cap * 2 : lf->pf->count > 64 ? lf->pf->count : 64;
        lf->out->jobs = xreallocarray(lf->out->jobs, lf->cap, sizeof *lf->out->jobs);
    }
    return &lf->out->jobs[lf->out->count];
}

/* A job Slurm has, made from its directory's facts (found_fn). */
static void list_found(void *ctx, const char *name, const struct slurm_job *j, struct dir_facts *f)
{
    struct list_fill *lf = ctx;
    if (lf->q && lf->q->name && strncmp(name, lf->q->name, strlen(lf->q->name)) != 0)
        return;
    make_job_from(lf->b, name, j, f, list_slot(lf));
    lf->out->count++;
}

enum backend_status slurm_list(struct backend *b, const struct list_query *q, struct job_list *out,
                               struct api_error *err)
{
    memset(out, 0, sizeof *out);
    struct list_filter lf;
    if (list_filter_parse(q ? q->filter : NULL, &lf, err) != 0)
        return BACKEND_REJECTED;
    if (slurm_check_dirs(b, NULL, err) != 0) {
        list_filter_free(&lf);
        return BACKEND_REJECTED;
    }
    /* The job directories are read while slurmrestd answers (on the loop it answers later). */
    struct prefetch pf;
    prefetch_start(b, &pf, driver(b)->replay == NULL);
    struct slurm_found f;
    struct list_fill fill = {b, q, out, 0, &pf};
    enum backend_status st = fetch_jobs(b, &f, &pf, list_found, &fill, err);
    if (st != BACKEND_OK) {
        for (size_t i = 0; i < out->count; i++)
            jobspec_free(&out->jobs[i]);
        free(out->jobs);
        memset(out, 0, sizeof *out);
        prefetch_free(&pf);
        list_filter_free(&lf);
        return st;
    }
    char *prefix = NULL;
    /* The names Slurm has a job for, hashed: the directories are looked up there, not scanned. */
    const char **found = xcalloc(f.count ? f.count : 1, sizeof *found);
    struct hmap by_name = HMAP_INIT;
    for (size_t i = 0; i < f.count; i++) {
        const char *name = name_in(b, f.jobs[i]->cwd, &prefix);
        found[i] = name;
        hmap_put(&by_name, hmap_hash(name, strlen(name)), &found[i]);
    }
    prefetch_wait(&pf); /* the directories listed and read: the names are this thread's */
    for (size_t i = 0; i < pf.count; i++) {
        const char *name = pf.names[i];
        if (hmap_get(&by_name, hmap_hash(name, strlen(name)), name_eq, name) != NULL ||
            (q && q->name && strncmp(name, q->name, strlen(q->name)) != 0))
            continue;
        /* Only directories of the user's (not another's in a shared workspace) that trainjob
         * made: they hold a job.json. */
        struct dir_facts *df = prefetch_facts(&pf, i);
        if (!df->open || !df->stored)
            continue;
        make_job_from(b, name, NULL, df, list_slot(&fill));
        out->count++;
    }
    hmap_free(&by_name);
    free(found);
    free(prefix);
    prefetch_free(&pf);
    slurm_found_free(&f);
    size_t kept = 0;
    for (size_t i = 0; i < out->count; i++) {
        if (list_filter_match(&lf, &out->jobs[i]))
            out->jobs[kept++] = out->jobs[i];
        else
            jobspec_free(&out->jobs[i]);
    }
    out->count = kept;
    list_filter_free(&lf);
    out->total_size = (long)out->count;
    return BACKEND_OK;
}
