/*
 * slurm_jobdir: what the Slurm driver reads back from a job's directory on
 * the shared filesystem ($jobs_dir/<workspace>/<name>, written by the
 * supervisor of api/slurm_script) — the workers (workers/<worker>.json),
 * the events (events.jsonl) and the worker logs (logs/<worker>.log, a tail
 * and a follow). Every file is hostile: bounded, symlinks refused, types
 * checked, text sanitized. Called by the other api/slurm*.c (slurm_priv.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/exitcodes.h"
#include "api/slurm_priv.h"
#include "api/slurm_script.h"
#include "api/slurm_shapes.h"
#include "util/strbuf.h"
#include "util/timefmt.h"
#include "util/utf8.h"
#include "util/xalloc.h"

#define EVENTS_MAX (256u << 10) /* the tail of events.jsonl read */
#define EVENTS_COUNT_MAX 2000   /* events kept from it */
#define EVENT_TEXT_MAX 1024     /* bytes of one event's text */
#define WORKERS_MAX 4096
#define LOG_TAIL_MAX (8u << 20) /* bytes read back for a tail */
#define FOLLOW_STATE_MS                                                                            \
    5000 /* a followed log asks Slurm whether its job ended: 12 calls a minute */

/* ---- job directories ------------------------------------------------------ */

/*
 * The job directory of name in this backend's jobs_dir and workspace, or NULL with err
 * (400, field name) saying why; slurm_jobdir_path (api/slurm_script.h) is the bare rule.
 */
char *slurm_backend_job_dir(struct backend *b, const char *name, struct api_error *err)
{
    char *d = slurm_jobdir_path(driver(b)->jobs_dir, b->target.workspace, name ? name : "");
    if (d == NULL)
        api_error_set(err, 400, "InvalidName", "name",
                      "'%s' cannot name a job directory (letters, digits, '-', '_' and '.')",
                      name ? name : "");
    else if (slurm_check_dirs(b, d, err) != 0) {
        free(d);
        d = NULL;
    }
    return d;
}

/* Opens dir (O_PATH-free: readable) refusing a symlink as its last component. */
int slurm_open_dir_nofollow(const char *dir)
{
    return open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

bool slurm_owner_ok(uid_t uid, uid_t owner)
{
    return uid == owner || uid == 0 || uid == geteuid();
}

/* fd is a directory of owner's (or root's) that nobody else may write; else closed, -1. */
static int owned_dir(int fd, uid_t owner)
{
    struct stat st;
    if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISDIR(st.st_mode) ||
                    !slurm_owner_ok(st.st_uid, owner) || (st.st_mode & 022) != 0)) {
        close(fd);
        errno = EPERM;
        return -1;
    }
    return fd;
}

int slurm_open_job_dir(const char *dir, uid_t owner)
{
    return owned_dir(slurm_open_dir_nofollow(dir), owner);
}

int slurm_open_job_dir_at(int wsfd, const char *name, uid_t owner)
{
    if (wsfd < 0 || name[0] == '\0' || strchr(name, '/') || strcmp(name, ".") == 0 ||
        strcmp(name, "..") == 0) {
        errno = EINVAL;
        return -1;
    }
    return owned_dir(openat(wsfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), owner);
}

/* sub (workers/, logs/) of the job directory dfd, checked like it. */
static int open_sub(int dfd, const char *sub, uid_t owner)
{
    return owned_dir(openat(dfd, sub, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), owner);
}

/* ---- the directories above a job's (sshd's StrictModes) ------------------- */

void slurm_user_words(uid_t uid, struct strbuf *out)
{
    struct passwd *pw = getpwuid(uid);
    if (pw)
        strbuf_addf(out, "%s", pw->pw_name);
    else
        strbuf_addf(out, "uid %u", (unsigned)uid);
}

/*
 * Whether the directory path (what, e.g. "workspace directory") may be
 * trusted with st: owned by the user or root, and writable by nobody else —
 * except a shared one (jobs_dir, a team workspace) that has the sticky bit,
 * in which only an entry's owner may rename or remove it. A workspace is
 * never writable by every user; a job directory by nobody but its owner.
 * why says what to fix.
 */
static bool dir_trusted(const char *what, const char *path, const struct stat *st, uid_t owner,
                        bool workspace, bool job, struct strbuf *why)
{
    mode_t m = st->st_mode;
    if (!S_ISDIR(m)) {
        strbuf_addf(why, "%s %s is not a directory", what, path);
        return false;
    }
    if (!slurm_owner_ok(st->st_uid, owner)) {
        strbuf_addf(why, "%s %s is owned by ", what, path);
        slurm_user_words(st->st_uid, why);
        strbuf_adds(why, ", not by you or root: its owner could rename what it holds and put "
                         "another directory in its place; use a directory of your own or ask "
                         "for it to be owned by root");
        return false;
    }
    if (job && (m & 022)) {
        strbuf_addf(why, "%s %s is writable by others than its owner: fix with `chmod go-w %s`",
                    what, path, path);
        return false;
    }
    if (workspace && (m & 002)) {
        strbuf_addf(why, "%s %s is writable by every user: fix with `chmod o-w %s`", what, path,
                    path);
        return false;
    }
    if ((m & 022) && !(m & S_ISVTX)) {
        strbuf_addf(why,
                    "%s %s is writable by %s without the sticky bit, so another user could "
                    "rename a job directory in it and put their own in its place: fix with "
                    "`chmod +t %s` (then only a directory's owner may rename it) or `chmod %s %s`",
                    what, path, (m & 002) ? "every user" : "its group", path,
                    (m & 002) ? "go-w" : "g-w", path);
        return false;
    }
    return true;
}

/* One directory of the chain (lstat: a symlink is refused); one not made yet passes. */
static bool check_one(const char *what, const char *path, uid_t owner, bool workspace, bool job,
                      struct strbuf *why)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return errno == ENOENT;
    if (S_ISLNK(st.st_mode)) {
        strbuf_addf(why, "%s %s is a symbolic link: not followed", what, path);
        return false;
    }
    return dir_trusted(what, path, &st, owner, workspace, job, why);
}

int slurm_check_dirs(struct backend *b, const char *job_dir, struct api_error *err)
{
    struct slurm *s = driver(b);
    struct strbuf why = STRBUF_INIT;
    bool ok = true;
    /* jobs_dir and every directory above it, as resolved (a site may link /lustre). */
    char *root = realpath(s->jobs_dir, NULL);
    if (root) {
        for (char *p = root + 1;; p++) {
            if (*p != '/' && *p != '\0')
                continue;
            char keep = *p;
            *p = '\0';
            bool last = keep == '\0';
            ok = check_one(last ? "jobs_dir" : "directory", root, s->owner_uid, false, false, &why);
            *p = keep;
            if (!ok || last)
                break;
        }
        free(root);
    }
    char *ws = ok ? xasprintf("%s/%s", s->jobs_dir, b->target.workspace) : NULL;
    if (ok && strchr(b->target.workspace, '/') == NULL)
        ok = check_one("workspace directory", ws, s->owner_uid, true, false, &why);
    if (ok && job_dir)
        ok = check_one("job directory", job_dir, s->owner_uid, false, true, &why);
    free(ws);
    if (!ok)
        api_error_set(err, 403, "UnsafeDirectory", "", "context '%s': %s; it is not used",
                      s->context, strbuf_str(&why));
    strbuf_free(&why);
    return ok ? 0 : -1;
}

/*
 * Reads name below dirfd (no symlink, a regular file of owner's or root's)
 * into *out: at most max bytes, the tail when tail; -2 for another's file.
 * st_out (when not NULL) gets the open file's stat.
 */
static int read_at(int dirfd, const char *name, uid_t owner, size_t max, bool tail,
                   struct strbuf *out, struct stat *st_out)
{
    int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return -1; /* errno as openat left it: ENOENT for none */
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        errno = EINVAL; /* there, but no plain file */
        return -1;
    }
    if (!slurm_owner_ok(st.st_uid, owner)) { /* the open file's owner: no check-then-open race */
        close(fd);
        return -2;
    }
    if (st_out)
        *st_out = st;
    off_t start = 0;
    if (tail && st.st_size > (off_t)max)
        start = st.st_size - (off_t)max;
    if (start > 0 && lseek(fd, start, SEEK_SET) < 0) {
        close(fd);
        return -1;
    }
    char buf[16384];
    ssize_t n;
    off_t got = 0, size = st.st_size - start; /* what the file held when opened */
    while (out->len < max && (n = read(fd, buf, sizeof buf)) != 0) {
        if (n < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        size_t take = (size_t)n;
        if (out->len + take > max)
            take = max - out->len;
        strbuf_add(out, buf, take);
        got += n;
        if (size > 0 && got >= size) /* all of it: no read just to see the end */
            break;
    }
    close(fd);
    return 0;
}

/* A file of the job directory, bounded; -1 missing or no plain file, -2 another user's. */
int slurm_read_job_file_at(int dfd, uid_t owner, const char *name, size_t max, struct strbuf *out)
{
    return read_at(dfd, name, owner, max, false, out, NULL);
}

int slurm_read_job_file_st(int dfd, uid_t owner, const char *name, size_t max, struct strbuf *out,
                           struct stat *st)
{
    return read_at(dfd, name, owner, max, false, out, st);
}

int slurm_read_job_file(const char *dir, uid_t owner, const char *sub, const char *name, size_t max,
                        bool tail, struct strbuf *out)
{
    int dfd = slurm_open_job_dir(dir, owner);
    if (dfd < 0)
        return -1;
    int fd = dfd;
    if (sub) {
        fd = open_sub(dfd, sub, owner);
        close(dfd);
        if (fd < 0)
            return -1;
    }
    int rc = read_at(fd, name, owner, max, tail, out, NULL);
    close(fd);
    return rc;
}

/*
 * A copy of text made safe for a terminal and at most max bytes: sanitizing
 * can grow it (U+FFFD for a bad byte, "\u200b" for an invisible one), so
 * the result is cut again, at a character boundary.
 */
char *slurm_clean(const char *text, size_t max)
{
    if (text == NULL)
        return NULL;
    struct strbuf sb = STRBUF_INIT;
    utf8_sanitize(&sb, text, strnlen(text, max), 0);
    if (sb.len > max) {
        size_t len = max;
        while (len > 0 && ((unsigned char)sb.buf[len] & 0xC0) == 0x80)
            len--;
        strbuf_truncate(&sb, len);
    }
    return strbuf_detach(&sb, NULL);
}

/* ---- workers and events --------------------------------------------------- */

static char *jstr(const json_t *o, const char *key, size_t max)
{
    const json_t *v = json_object_get(o, key);
    return json_is_string(v) ? slurm_clean(json_string_value(v), max) : NULL;
}

static bool jint(const json_t *o, const char *key, int64_t lo, int64_t hi, int32_t *out)
{
    const json_t *v = json_object_get(o, key);
    if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi)
        return false;
    *out = (int32_t)json_integer_value(v);
    return true;
}

/* The record's "last" (the supervisor's tj_last), checked field by field, into ls. */
static void last_state_from_record(const json_t *r, struct worker_last_state *ls)
{
    const json_t *l = json_object_get(r, "last");
    int32_t v;
    if (!json_is_object(l) || !jint(l, "exit_code", 0, 255, &v))
        return;
    ls->present = ls->has_exit_code = true;
    ls->exit_code = v;
    const char *meaning = exitcode_meaning(v);
    ls->exit_reason = meaning && v ? xstrdup(meaning) : NULL;
    ls->start_time = jstr(l, "start_time", 40);
    ls->finish_time = jstr(l, "finish_time", 40);
    if (jint(l, "rule", 1, 1000, &v)) {
        ls->has_rule = true;
        ls->rule = v;
    }
    const char *action = json_string_value(json_object_get(l, "action"));
    if (action && enum_value(&ft_action_names, action) > 0)
        ls->action = xstrdup(action);
    ls->message = jstr(l, "message", 600);
}

/*
 * One workers/<stem>.json the supervisor wrote, checked field by field;
 * false when unusable. The record names the worker its file is named for,
 * so no file can pass for another worker or list one twice.
 */
static bool worker_from_record(const json_t *r, const char *stem, size_t stem_len,
                               struct worker_info *w)
{
    memset(w, 0, sizeof *w);
    const char *name = json_string_value(json_object_get(r, "name"));
    if (!slurm_safe_component(name) || strlen(name) != stem_len ||
        memcmp(name, stem, stem_len) != 0)
        return false;
    w->name = xstrdup(name);
    w->node_name = jstr(r, "node", 128);
    const char *phase = json_string_value(json_object_get(r, "phase"));
    int p = phase ? enum_value(&worker_phase_names, phase) : -1;
    if (p > 0)
        w->phase = (enum worker_phase)p;
    else if (phase)
        w->phase_other = slurm_clean(phase, 32);
    int32_t v;
    if (jint(r, "restarts", 0, INT32_MAX, &v)) {
        w->has_restarts = true;
        w->restarts = v;
    }
    int32_t sig = 0;
    bool has_sig = jint(r, "signal", 1, 127, &sig);
    if (jint(r, "exit_code", 0, 255, &v) || has_sig) {
        w->has_exit_code = true;
        w->exit_code = has_sig ? 128 + sig : v;
        if (has_sig) {
            const char *sn = sigabbrev_np(sig);
            w->exit_reason = xasprintf("killed (SIG%s)", sn ? sn : "?");
        }
    }
    char *rule = jstr(r, "rule", 256);
    if (rule) {
        free(w->exit_reason);
        w->exit_reason = rule;
    }
    w->start_time = jstr(r, "started", 40);
    w->finish_time = jstr(r, "ended", 40);
    w->role = xstrndup(w->name, strcspn(w->name, "-"));
    last_state_from_record(r, &w->last_state);
    return true;
}

static int cmp_worker(const void *a, const void *b)
{
    const struct worker_info *x = a, *y = b;
    return strcmp(x->name, y->name);
}

/* workers/<worker>.json of a job directory; 0 when there are none. */
size_t slurm_workers_from_dir(const char *dir, uid_t owner, struct worker_list *out)
{
    int dfd = slurm_open_job_dir(dir, owner);
    if (dfd < 0)
        return 0;
    int wfd = open_sub(dfd, "workers", owner);
    close(dfd);
    if (wfd < 0)
        return 0;
    DIR *dp = fdopendir(wfd);
    if (dp == NULL) {
        close(wfd);
        return 0;
    }
    size_t cap = 0;
    struct dirent *e;
    int seen = 0;
    while ((e = readdir(dp)) != NULL && seen++ < WORKERS_MAX * 2 && out->count < WORKERS_MAX) {
        size_t n = strlen(e->d_name);
        if (e->d_name[0] == '.' || n < 6 || strcmp(e->d_name + n - 5, ".json") != 0)
            continue;
        struct strbuf sb = STRBUF_INIT;
        if (read_at(dirfd(dp), e->d_name, owner, WORKER_FILE_MAX, false, &sb, NULL) == 0) {
            json_t *j = json_loadb(sb.buf ? sb.buf : "", sb.len, 0, NULL);
            struct worker_info w;
            if (json_is_object(j) && worker_from_record(j, e->d_name, n - 5, &w)) {
                if (out->count == cap) {
                    cap = cap ? cap * 2 : 8;
                    out->workers = xreallocarray(out->workers, cap, sizeof *out->workers);
                }
                out->workers[out->count++] = w;
            }
            json_decref(j);
        }
        strbuf_free(&sb);
    }
    closedir(dp);
    if (out->count > 1)
        qsort(out->workers, out->count, sizeof *out->workers, cmp_worker);
    return out->count;
}

/* A worker's phase when only Slurm's view of the whole job is known. */
static enum worker_phase phase_of(const struct slurm_job *sj)
{
    if (slurm_is(sj->state, "RUNNING") || slurm_is(sj->state, "COMPLETING"))
        return WORKER_RUNNING;
    if (slurm_is(sj->state, "COMPLETED"))
        return WORKER_SUCCEEDED;
    if (slurm_is(sj->state, "CANCELLED"))
        return WORKER_TERMINATING;
    return slurm_job_ended(sj) ? WORKER_FAILED : WORKER_PENDING;
}

static bool has_worker(const struct worker_list *l, const char *name)
{
    for (size_t i = 0; i < l->count; i++)
        if (strcmp(l->workers[i].name, name) == 0)
            return true;
    return false;
}

/*
 * What Slurm's allocation adds to the records of a job (sj) not ended, or
 * of one that left none: each node's GPUs, and a worker for every node whose
 * worker has no record yet — the job's steps start one by one, and a job
 * of 2 must not show 1 meanwhile. Such a worker is PENDING while the job
 * runs (its step is starting), else as Slurm says the whole job is.
 */
static void add_allocation(struct worker_list *out, const struct slurm_job *sj, const char *dir,
                           uid_t owner)
{
    for (size_t i = 0; i < out->count; i++)
        for (size_t k = 0; k < sj->alloc_count && !out->workers[i].devices; k++)
            if (out->workers[i].node_name && sj->alloc[k].gpus &&
                strcmp(out->workers[i].node_name, sj->alloc[k].node) == 0)
                out->workers[i].devices = xstrdup(sj->alloc[k].gpus);
    if (sj->alloc_count == 0 || out->count >= WORKERS_MAX)
        return;
    struct jobspec job;
    jobspec_init(&job);
    slurm_stored_job(dir, owner, &job);
    bool recorded = out->count > 0;
    out->workers = xreallocarray(out->workers, out->count + sj->alloc_count, sizeof *out->workers);
    for (size_t i = 0; i < sj->alloc_count && out->count < WORKERS_MAX; i++) {
        char nm[32];
        jobspec_worker_name(&job, (int)i, nm, sizeof nm);
        if (has_worker(out, nm))
            continue;
        struct worker_info *w = &out->workers[out->count++];
        memset(w, 0, sizeof *w);
        w->name = xstrdup(nm);
        w->role = xstrndup(nm, strcspn(nm, "-"));
        w->node_name = xstrdup(sj->alloc[i].node);
        w->phase = recorded && slurm_is(sj->state, "RUNNING") ? WORKER_PENDING : phase_of(sj);
        w->devices = sj->alloc[i].gpus ? xstrdup(sj->alloc[i].gpus) : NULL;
    }
    jobspec_free(&job);
    if (out->count > 1)
        qsort(out->workers, out->count, sizeof *out->workers, cmp_worker);
}

enum backend_status slurm_workers(struct backend *b, const char *name, struct worker_list *out,
                                  struct api_error *err)
{
    memset(out, 0, sizeof *out);
    char *dir = slurm_backend_job_dir(b, name, err);
    if (dir == NULL)
        return BACKEND_REJECTED;
    struct slurm_found f;
    enum backend_status st = slurm_fetch_jobs(b, &f, err);
    if (st != BACKEND_OK) {
        free(dir);
        return st;
    }
    const struct slurm_job *sj = slurm_found_job(b, &f, name);
    struct stat s;
    if (sj == NULL && lstat(dir, &s) != 0) { /* neither Slurm nor the jobs directory has it */
        api_error_set(err, 404, "NotFound", "name", "no job '%s' in workspace %s", name,
                      b->target.workspace);
        st = BACKEND_REJECTED;
    } else {
        bool recorded = slurm_workers_from_dir(dir, driver(b)->owner_uid, out) > 0;
        if (sj && (!recorded || !slurm_job_ended(sj)))
            add_allocation(out, sj, dir, driver(b)->owner_uid);
    }
    slurm_found_free(&f);
    free(dir);
    return st;
}

struct event_kind {
    const char *reason;
    enum job_event_kind kind;
};

/* The supervisor's reasons (worded as trainjobd's) to event kinds. */
static const struct event_kind event_kinds[] = {
    {"Created", EVENT_CREATED},        {"Submitted", EVENT_CREATED},
    {"Scheduled", EVENT_SCHEDULED},    {"Started", EVENT_STARTED},
    {"Preempted", EVENT_PREEMPTED},    {"Requeued", EVENT_PREEMPTED},
    {"NodeMarked", EVENT_NODE_MARKED}, {"Stopped", EVENT_STOPPED},
    {"WorkerStarted", EVENT_WORKER},   {"WorkerExited", EVENT_WORKER},
    {"WorkerSucceeded", EVENT_WORKER}, {"WorkerFailed", EVENT_FAULT},
    {"RestartPod", EVENT_FAULT},       {"RestartJob", EVENT_FAULT},
    {"FailJob", EVENT_FAULT},          {"BackoffLimitExceeded", EVENT_FAULT},
    {"Succeeded", EVENT_STATE},        {"Failed", EVENT_STATE},
    {"Running", EVENT_STATE},
};

/* The state a state event of the supervisor's moves the job to, by its reason. */
static const struct {
    const char *reason;
    enum job_state state;
} event_states[] = {
    {"Running", JOB_STATE_RUNNING},
    {"Succeeded", JOB_STATE_SUCCEEDED},
    {"Failed", JOB_STATE_FAILED},
};

/* One line of events.jsonl to an event; false when it is not an object of strings. */
static bool event_from_line(const char *line, size_t len, const char *job, struct job_event *e)
{
    memset(e, 0, sizeof *e);
    json_t *j = json_loadb(line, len, 0, NULL);
    if (!json_is_object(j)) {
        json_decref(j);
        return false;
    }
    const char *reason = json_string_value(json_object_get(j, "reason"));
    const char *message = json_string_value(json_object_get(j, "message"));
    const char *type = json_string_value(json_object_get(j, "type"));
    if (reason == NULL && message == NULL) {
        json_decref(j);
        return false;
    }
    e->job = xstrdup(job);
    e->time = jstr(j, "time", 40);
    e->worker = jstr(j, "worker", 128);
    e->node = jstr(j, "node", 128);
    /* The supervisor names the kind (api/jobstatus.h's names); else it comes from the reason. */
    const char *kind = json_string_value(json_object_get(j, "kind"));
    int k = kind ? enum_value(&job_event_kind_names, kind) : -1;
    if (k > 0)
        e->kind = (enum job_event_kind)k;
    for (size_t i = 0; k <= 0 && reason && i < sizeof event_kinds / sizeof event_kinds[0]; i++)
        if (strcmp(reason, event_kinds[i].reason) == 0)
            e->kind = event_kinds[i].kind;
    if (e->kind == EVENT_UNSPECIFIED && type && strcmp(type, "Warning") == 0)
        e->kind = EVENT_FAULT;
    /* A state change says the state it reached ("state"), else its reason does. */
    const char *state = json_string_value(json_object_get(j, "state"));
    int sv = state ? enum_value(&job_state_names, state) : -1;
    if (sv > 0)
        e->state = (enum job_state)sv;
    for (size_t i = 0; sv <= 0 && e->kind == EVENT_STATE && reason &&
                       i < sizeof event_states / sizeof event_states[0];
         i++)
        if (strcmp(reason, event_states[i].reason) == 0)
            e->state = event_states[i].state;
    int32_t v;
    if (jint(j, "exit_code", 0, 255, &v)) {
        e->has_exit_code = true;
        e->exit_code = v;
    }
    if (jint(j, "restarts_used", 0, INT32_MAX, &v)) {
        e->has_restarts_used = true;
        e->restarts_used = v;
    }
    if (jint(j, "restart_limit", -1, INT32_MAX, &v)) {
        e->has_restart_limit = true;
        e->restart_limit = v;
    }
    if (jint(j, "rule", 1, 1000, &v)) {
        e->has_rule = true;
        e->rule = v;
    }
    e->action = jstr(j, "action", 32);
    e->message = message ? slurm_clean(message, EVENT_TEXT_MAX) : slurm_clean(reason, 64);
    json_decref(j);
    return true;
}

/*
 * A state event whose sentence does not say the change ("job succeeded:
 * every worker exited 0") says it as trainjobd's do: "RUNNING → SUCCEEDED:
 * every worker exited 0", from the state the events before it reached
 * (from, JOB_STATE_UNSPECIFIED when unknown: "→ SUCCEEDED: …"), so a history
 * ends in the job's final state.
 */
static void name_state_changes(struct job_event_list *l, enum job_state from)
{
    static const char *const said[] = {"job succeeded: ", "job failed: "};
    for (size_t i = 0; i < l->count; i++) {
        struct job_event *e = &l->events[i];
        if (e->kind != EVENT_STATE || e->state == JOB_STATE_UNSPECIFIED)
            continue;
        if (e->state != from && e->message && strstr(e->message, "→") == NULL) {
            const char *m = e->message;
            for (size_t k = 0; k < sizeof said / sizeof said[0]; k++)
                if (strncmp(m, said[k], strlen(said[k])) == 0)
                    m += strlen(said[k]);
            char *text = xasprintf(
                "%s%s→ %s%s%s", from ? enum_name(&job_state_names, (int)from) : "", from ? " " : "",
                enum_name(&job_state_names, (int)e->state), *m ? ": " : "", m);
            free(e->message);
            e->message = text;
        }
        from = e->state;
    }
}

/*
 * The events of buf, a run of events.jsonl's lines: a line without its
 * newline (still being written) is left out, and so is the first line when
 * cut (buf starts inside it). Lines that are not events are skipped; the
 * newest EVENTS_COUNT_MAX are kept, read from the end so a file of many
 * small lines costs what the kept ones cost.
 */
size_t slurm_events_parse(const char *buf, size_t len, bool cut, const char *job,
                          struct job_event_list *out)
{
    memset(out, 0, sizeof *out);
    const char *end = buf + len;
    while (end > buf && end[-1] != '\n')
        end--; /* the unfinished last line */
    size_t cap = 0;
    while (end > buf && out->count < EVENTS_COUNT_MAX) {
        const char *stop = end - 1; /* this line's newline */
        const char *start = stop;
        while (start > buf && start[-1] != '\n')
            start--;
        end = start;
        if (start == buf && cut)
            break;
        struct job_event e;
        if (!event_from_line(start, (size_t)(stop - start), job, &e))
            continue;
        if (out->count == cap) {
            cap = cap ? cap * 2 : 32;
            out->events = xreallocarray(out->events, cap, sizeof *out->events);
        }
        out->events[out->count++] = e;
    }
    for (size_t i = 0; i < out->count / 2; i++) { /* oldest first */
        struct job_event t = out->events[i];
        out->events[i] = out->events[out->count - 1 - i];
        out->events[out->count - 1 - i] = t;
    }
    for (size_t i = 0; i < out->count; i++)
        out->events[i].id = (int64_t)i + 1;
    name_state_changes(out, cut ? JOB_STATE_UNSPECIFIED : JOB_STATE_QUEUEING);
    return out->count;
}

/*
 * The events of dir's events.jsonl from its last max bytes. One byte before
 * them is read too: the first line is whole exactly when that byte is a
 * newline (or there is none), whatever the file's size.
 */
size_t slurm_events_from_dir(const char *dir, uid_t owner, const char *job, size_t max,
                             struct job_event_list *out)
{
    memset(out, 0, sizeof *out);
    struct strbuf sb = STRBUF_INIT;
    if (slurm_read_job_file(dir, owner, NULL, "events.jsonl", max + 1, true, &sb) != 0) {
        strbuf_free(&sb);
        return 0;
    }
    const char *p = sb.buf ? sb.buf : "";
    size_t len = sb.len;
    bool cut = false;
    if (len > max) { /* the byte before the tail */
        cut = p[0] != '\n';
        p++;
        len--;
    }
    slurm_events_parse(p, len, cut, job, out);
    strbuf_free(&sb);
    return out->count;
}

enum backend_status slurm_events(struct backend *b, const char *name, struct job_event_list *out,
                                 struct api_error *err)
{
    memset(out, 0, sizeof *out);
    char *dir = slurm_backend_job_dir(b, name, err);
    if (dir == NULL)
        return BACKEND_REJECTED;
    struct stat s;
    if (lstat(dir, &s) != 0) {
        free(dir);
        api_error_set(err, 404, "NotFound", "name", "no job '%s' in workspace %s", name,
                      b->target.workspace);
        return BACKEND_REJECTED;
    }
    slurm_events_from_dir(dir, driver(b)->owner_uid, name, EVENTS_MAX, out);
    free(dir);
    return BACKEND_OK;
}

/* ---- logs ----------------------------------------------------------------- */

/*
 * Where the last tail lines of a log of size bytes start (all of its last
 * LOG_TAIL_MAX bytes when tail < 0): read backwards from the end in
 * blocks, only as far as the lines go, so a tail of 100 lines of a 1 GiB
 * log reads one block. A final newline ends the last line, it starts none.
 */
static off_t tail_start(int fd, off_t size, long tail)
{
    off_t floor = size > (off_t)LOG_TAIL_MAX ? size - (off_t)LOG_TAIL_MAX : 0;
    if (tail < 0)
        return floor;
    if (tail == 0)
        return size;
    char buf[65536];
    long lines = 0;
    for (off_t end = size; end > floor;) {
        size_t n = end - floor > (off_t)sizeof buf ? sizeof buf : (size_t)(end - floor);
        off_t at = end - (off_t)n;
        if (pread(fd, buf, n, at) != (ssize_t)n)
            return floor;
        size_t i = n;
        if (end == size && buf[i - 1] == '\n')
            i--;
        for (; i > 0; i--)
            if (buf[i - 1] == '\n' && ++lines == tail)
                return at + (off_t)i;
        end = at;
    }
    return floor;
}

/* The log's descriptor: logs/<worker>.log below the job directory, no symlink followed. */
static int open_log(const char *dir, uid_t owner, const char *worker)
{
    int dfd = slurm_open_job_dir(dir, owner);
    if (dfd < 0)
        return -1;
    int lfd = open_sub(dfd, "logs", owner);
    close(dfd);
    if (lfd < 0)
        return -1;
    char *file = xasprintf("%s.log", worker);
    int fd = openat(lfd, file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    free(file);
    close(lfd);
    struct stat st;
    if (fd >= 0 &&
        (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || !slurm_owner_ok(st.st_uid, owner))) {
        close(fd);
        fd = -1;
    }
    return fd;
}

/* A worker's log being read: opened when it appears, its tail first, then what is added. */
struct slurm_log_follow {
    struct backend *b;
    char *name, *worker, *dir;
    long tail;
    bool follow;
    int fd;                /* -1 until the log exists */
    int64_t open_deadline; /* a follow waits this long for the log to appear */
    int64_t next_state;    /* when to ask Slurm again whether the job ended */
    int quiet_after_end;   /* -1 while the job runs; then quiet steps since it ended */
    off_t end;             /* not followed: the log's size when it was opened, read to there */
    bool on_loop;          /* the state is asked by the caller (slurm_log_wants_state) */
    bool want_state;       /* on the loop: time to ask whether the job ended */
};

void slurm_log_on_loop(struct slurm_log_follow *f)
{
    f->on_loop = true;
}

bool slurm_log_wants_state(struct slurm_log_follow *f, const char **name)
{
    bool w = f->want_state;
    f->want_state = false;
    *name = f->name;
    return w;
}

void slurm_log_job_state(struct slurm_log_follow *f, enum job_state state)
{
    if (f->quiet_after_end < 0 && (state == JOB_STATE_SUCCEEDED || state == JOB_STATE_FAILED ||
                                   state == JOB_STATE_SUSPENDED || state == JOB_STATE_UNSPECIFIED))
        f->quiet_after_end = 0;
}

void slurm_log_follow_free(void *p)
{
    struct slurm_log_follow *f = p;
    if (f == NULL)
        return;
    if (f->fd >= 0)
        close(f->fd);
    free(f->name);
    free(f->worker);
    free(f->dir);
    free(f);
}

struct slurm_log_follow *slurm_log_follow_new(struct backend *b, const char *name,
                                              const char *worker, long tail, bool follow,
                                              struct api_error *err)
{
    if (!slurm_safe_component(worker)) {
        api_error_set(err, 400, "InvalidWorker", "worker", "'%s' is not a worker name",
                      worker ? worker : "");
        return NULL;
    }
    char *dir = slurm_backend_job_dir(b, name, err);
    if (dir == NULL)
        return NULL;
    struct slurm_log_follow *f = xcalloc(1, sizeof *f);
    f->b = b;
    f->name = xstrdup(name);
    f->worker = xstrdup(worker);
    f->dir = dir;
    f->tail = tail;
    f->follow = follow;
    f->fd = -1;
    f->open_deadline = time_now_ms() + 60000;
    f->next_state = time_now_ms() + FOLLOW_STATE_MS;
    f->quiet_after_end = -1;
    return f;
}

/*
 * One step of reading a log: open it (handing on its last tail lines), hand
 * on what was added, and every FOLLOW_STATE_MS ask Slurm whether the job
 * ended; a follow ends a few quiet steps after the job did. Returns true
 * when the stream is over (*st says how), false to step again after
 * FOLLOW_POLL_MS. Shared by the blocking call and the TUI's timer.
 */
bool slurm_log_step(struct slurm_log_follow *f, backend_data_fn fn, void *ctx,
                    enum backend_status *st, struct api_error *err)
{
    *st = BACKEND_OK;
    char buf[65536];
    ssize_t n;
    if (f->fd < 0) {
        f->fd = open_log(f->dir, driver(f->b)->owner_uid, f->worker);
        if (f->fd < 0) {
            if (f->follow && time_now_ms() <= f->open_deadline)
                return false;
            api_error_set(err, 404, "NotFound", "worker", "no log of worker '%s' of job '%s' yet",
                          f->worker, f->name);
            *st = BACKEND_REJECTED;
            return true;
        }
        /* The tail is read forward from where it starts, as what is added: bounded per step. */
        struct stat s;
        f->end = fstat(f->fd, &s) == 0 ? s.st_size : 0;
        off_t start = tail_start(f->fd, f->end, f->tail);
        if (lseek(f->fd, start, SEEK_SET) != start) {
            api_error_set(err, 500, "Log", "worker", "cannot read the log of worker '%s': %s",
                          f->worker, strerror(errno));
            *st = BACKEND_REJECTED;
            return true;
        }
    }
    /* Bounded: on the loop a step reads at most 4 MiB (a long tail, or a log written faster
     * than read, yields the loop); the CLI reads on without waiting while there is more. */
    bool ended = false; /* read to the end there is for now */
    for (int i = 0; i < (f->on_loop ? 64 : 1 << 14) && !ended; i++) {
        size_t want = sizeof buf;
        off_t at = f->follow ? 0 : lseek(f->fd, 0, SEEK_CUR);
        if (!f->follow && at >= f->end)
            return true;
        if (!f->follow && f->end - at < (off_t)want)
            want = (size_t)(f->end - at);
        n = read(f->fd, buf, want);
        if (n < 0 && errno == EINTR)
            continue;
        ended = n <= 0;
        if (!ended && fn(ctx, buf, (size_t)n))
            return true;
    }
    if (!f->follow)
        return ended; /* not followed: read on in the next step while the bound cut it */
    if (f->quiet_after_end >= 0 && f->quiet_after_end++ >= 2)
        return true; /* the job ended and its log stayed quiet */
    if (f->quiet_after_end < 0 && time_now_ms() >= f->next_state) {
        f->next_state = time_now_ms() + FOLLOW_STATE_MS;
        if (f->on_loop) {
            f->want_state = true; /* asked by the caller through the loop, never here */
            return false;
        }
        struct jobspec j;
        struct api_error e;
        if (slurm_get(f->b, f->name, &j, &e) == BACKEND_OK)
            slurm_log_job_state(f, j.state);
        jobspec_free(&j);
    }
    return false;
}

enum backend_status slurm_logs(struct backend *b, const char *name, const char *worker, long tail,
                               bool follow, backend_data_fn fn, void *ctx, struct api_error *err)
{
    struct slurm_log_follow *f = slurm_log_follow_new(b, name, worker, tail, follow, err);
    if (f == NULL)
        return BACKEND_REJECTED;
    enum backend_status st;
    while (!slurm_log_step(f, fn, ctx, &st, err))
        poll(NULL, 0, FOLLOW_POLL_MS);
    slurm_log_follow_free(f);
    return st;
}
