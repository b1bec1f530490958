/*
 * slurm_submit: what the Slurm driver changes — the job's directory
 * created, its batch script and submit body built (api/slurm_script), the
 * job submitted, started again, stopped (cancelled), deleted (cancelled,
 * waited for, its directory removed); and slurm_render, the same submit
 * body for `trainjob render --target slurm`. Called through the ops table
 * (api/slurm.c).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/context.h"
#include "api/finding.h"
#include "api/jobspec_json.h"
#include "api/slurm_priv.h"
#include "api/slurm_script.h"
#include "api/slurm_shapes.h"
#include "util/fileio.h"
#include "util/strbuf.h"
#include "util/timefmt.h"
#include "util/xalloc.h"

#define DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

/* ---- submit --------------------------------------------------------------- */

/* The QOS the context maps the job's priority to, or NULL. */
static const char *qos_for(const json_t *qos, const struct jobspec *job)
{
    enum priority p = job->scheduling.priority ? job->scheduling.priority : PRIORITY_NORMAL;
    char key[32];
    snprintf(key, sizeof key, "%s%s", jobspec_is_idle(job) ? "IDLE_" : "",
             enum_name(&priority_names, (int)p));
    return json_string_value(json_object_get(qos, key));
}

/*
 * Whether the QOS job's priority maps to is one the user's Slurm association
 * does not allow (err says so, naming scheduling.priority). Without slurmdbd
 * Slurm cannot tell: the submit goes ahead and slurmctld decides.
 */
static bool qos_refused(struct backend *b, const struct jobspec *job, struct api_error *err)
{
    struct slurm *s = driver(b);
    const char *q = qos_for(s->qos, job);
    json_t *allowed = q ? slurm_assoc_qos(b) : NULL;
    bool refused = allowed && !slurm_qos_in(allowed, q);
    if (refused) {
        struct strbuf list = STRBUF_INIT;
        size_t i;
        json_t *v;
        json_array_foreach(allowed, i, v)
            strbuf_addf(&list, "%s%s", i ? "," : "", json_string_value(v));
        enum priority p = job->scheduling.priority ? job->scheduling.priority : PRIORITY_NORMAL;
        api_error_set(err, 403, "InvalidField", "scheduling.priority",
                      "%s maps to QOS %s, which the Slurm association of %s does not allow "
                      "(it allows %s)",
                      enum_name(&priority_names, (int)p), q, s->user, strbuf_str(&list));
        strbuf_free(&list);
    }
    json_decref(allowed);
    return refused;
}

/* Where and how a job is submitted: the context's part. */
struct site_conf {
    const char *jobs_dir, *workspace, *launcher;
    const json_t *qos;
    const json_t *volumes; /* the context's: name → path */
    bool idle_pool;        /* the partition requeues or cancels preempted jobs */
};

/* The submit of job: its script rendered by slurm_script_render, its resources from spec. */
static int build_submit(const struct slurm_shape *shape, const struct site_conf *c,
                        const struct jobspec *job, const struct catalog_spec *spec,
                        const char *exclude, json_t **body, struct strbuf *gaps,
                        struct api_error *err)
{
    *body = NULL;
    const struct role *r = jobspec_worker(job);
    enum priority prio = job->scheduling.priority;
    if ((prio == PRIORITY_HIGH || prio == PRIORITY_HIGHEST) && qos_for(c->qos, job) == NULL) {
        api_error_set(err, 400, "InvalidField", "scheduling.priority",
                      "%s needs a QOS: the context maps none for it (qos: {%s%s: <qos>})",
                      enum_name(&priority_names, (int)prio), jobspec_is_idle(job) ? "IDLE_" : "",
                      enum_name(&priority_names, (int)prio));
        return -1;
    }
    if (r == NULL || !r->has_total_replicas || r->total_replicas < 1) {
        api_error_set(err, 400, "InvalidField", "roles[0].total_replicas",
                      "a Slurm job needs total_replicas (one node per worker)");
        return -1;
    }
    char *dir = slurm_jobdir_path(c->jobs_dir, c->workspace, job->name ? job->name : "");
    if (dir == NULL) {
        api_error_set(err, 400, "InvalidName", "name",
                      "'%s' cannot name a job directory (letters, digits, '-', '_' and '.')",
                      job->name ? job->name : "");
        return -1;
    }
    size_t nv = json_object_size(c->volumes);
    struct slurm_volume *vols = xcalloc(nv ? nv : 1, sizeof *vols);
    struct slurm_site site = {c->jobs_dir, c->workspace, c->launcher, vols, 0};
    const char *vk;
    json_t *vv;
    json_object_foreach((json_t *)c->volumes, vk, vv)
    {
        vols[site.volume_count++] = (struct slurm_volume){vk, json_string_value(vv)};
    }
    struct strbuf script = STRBUF_INIT;
    int rendered = slurm_script_render(job, &site, &script, gaps, err);
    free(vols);
    if (rendered != 0) {
        strbuf_free(&script);
        free(dir);
        return -1;
    }
    const char **env = xcalloc(job->env_count + 2, sizeof *env);
    char **owned = xcalloc(job->env_count + 2, sizeof *owned);
    size_t ne = 0;
    bool has_path = false;
    for (size_t i = 0; i < job->env_count; i++) {
        if (job->env[i].key == NULL)
            continue;
        has_path = has_path || strcmp(job->env[i].key, "PATH") == 0;
        owned[ne] = xasprintf("%s=%s", job->env[i].key, job->env[i].value ? job->env[i].value : "");
        env[ne] = owned[ne];
        ne++;
    }
    if (!has_path) {
        owned[ne] = xstrdup("PATH=" DEFAULT_PATH); /* slurmrestd gives none: srun needs it */
        env[ne] = owned[ne];
        ne++;
    }
    char *out_file = xasprintf("%s/slurm-%%j.out", dir);
    bool marks = false;
    for (size_t i = 0; i < job->fault_tolerance.rule_count; i++)
        marks = marks || job->fault_tolerance.rules[i].mark_node_unschedulable;
    struct slurm_submit sub = {
        .name = job->name,
        .partition = job->resource_pool.name,
        .qos = qos_for(c->qos, job),
        .exclude = exclude,
        .cwd = dir,
        .standard_output = out_file,
        .nodes = r->total_replicas,
        .gpus_per_node = spec ? spec->devices : 0,
        .cpus_per_task = spec ? spec->vcpus : 0,
        .memory_mb = spec ? spec->memory_mib : 0,
        /* Idle jobs come back after preemption; marking a node needs a requeue too. */
        .requeue = jobspec_is_idle(job) || c->idle_pool || marks,
        .env = env,
        .env_count = ne,
    };
    *body = slurm_submit_body(shape, &sub, strbuf_str(&script));
    for (size_t i = 0; i < ne; i++)
        free(owned[i]);
    free(owned);
    free(env);
    free(out_file);
    strbuf_free(&script);
    free(dir);
    return 0;
}

/*
 * Makes dir (and logs/, workers/) for the job's user: when trainjob runs as
 * root, chowned to it. exclusive (create): the directory is the name's record
 * in its workspace, so it is made with mkdir's O_EXCL meaning and one that is
 * there already is "already used" (409) — one system call, whatever the
 * number of jobs, and two creates racing for a name cannot both win.
 */
static int make_job_dir(struct slurm *s, struct backend *b, const char *dir, bool exclusive,
                        struct api_error *err)
{
    struct strbuf why = STRBUF_INIT;
    char *parent = xstrdup(dir);
    *strrchr(parent, '/') = '\0';
    int rc = file_mkdirs(parent, 0755, &why);
    free(parent);
    if (rc != 0) {
        api_error_set(err, 500, "JobsDir", "", "context '%s': jobs_dir: %s", s->context,
                      strbuf_str(&why));
        strbuf_free(&why);
        return -1;
    }
    strbuf_free(&why);
    /* jobs_dir, the workspace: nobody else may rename or replace what they hold. */
    if (slurm_check_dirs(b, exclusive ? NULL : dir, err) != 0)
        return -1;
    int pfd = -1;
    {
        char *p = xstrdup(dir);
        *strrchr(p, '/') = '\0';
        pfd = slurm_open_dir_nofollow(p);
        free(p);
    }
    const char *base = strrchr(dir, '/') + 1;
    if (pfd < 0 || (mkdirat(pfd, base, 0755) != 0 && (exclusive || errno != EEXIST))) {
        if (pfd >= 0 && errno == EEXIST)
            api_error_set(err, 409, "AlreadyExists", "name", "already used in workspace %s (%s)",
                          b->target.workspace, dir);
        else
            api_error_set(err, 500, "JobsDir", "", "cannot make %s: %s", dir, strerror(errno));
        if (pfd >= 0)
            close(pfd);
        return -1;
    }
    close(pfd);
    int dfd = slurm_open_dir_nofollow(dir);
    if (dfd < 0) {
        api_error_set(err, 500, "JobsDir", "", "%s is not a directory trainjob made: %s", dir,
                      strerror(errno));
        return -1;
    }
    struct stat ds;
    if (fstat(dfd, &ds) != 0 || !slurm_owner_ok(ds.st_uid, s->owner_uid) || (ds.st_mode & 022)) {
        api_error_set(err, 403, "UnsafeDirectory", "",
                      "job directory %s is not yours alone (owner uid %u, mode %04o): not used",
                      dir, (unsigned)ds.st_uid, (unsigned)(ds.st_mode & 07777));
        close(dfd);
        return -1;
    }
    (void)mkdirat(dfd, "logs", 0755);
    (void)mkdirat(dfd, "workers", 0755);
    (void)mkdirat(dfd, "launch", 0755); /* made here, the supervisor runs no mkdir */
    struct passwd *pw = geteuid() == 0 ? getpwnam(s->user) : NULL;
    if (pw) {
        /* The job runs as the token's user and writes its events, records and logs here. */
        if (fchown(dfd, pw->pw_uid, pw->pw_gid) != 0 ||
            fchownat(dfd, "logs", pw->pw_uid, pw->pw_gid, AT_SYMLINK_NOFOLLOW) != 0 ||
            fchownat(dfd, "workers", pw->pw_uid, pw->pw_gid, AT_SYMLINK_NOFOLLOW) != 0 ||
            fchownat(dfd, "launch", pw->pw_uid, pw->pw_gid, AT_SYMLINK_NOFOLLOW) != 0) {
            api_error_set(err, 500, "JobsDir", "", "cannot give %s to user %s: %s", dir, s->user,
                          strerror(errno));
            close(dfd);
            return -1;
        }
    }
    close(dfd);
    return 0;
}

/* Appends one event of the driver's own (submit, stop) to the job's events.jsonl, as the job's user
 * owns it. */
static void append_event(struct slurm *s, const char *dir, const char *reason, const char *message)
{
    int dfd = slurm_open_dir_nofollow(dir);
    if (dfd < 0)
        return;
    int fd =
        openat(dfd, "events.jsonl", O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    close(dfd);
    if (fd < 0)
        return;
    struct stat st;
    struct passwd *pw = geteuid() == 0 ? getpwnam(s->user) : NULL;
    if (pw && fstat(fd, &st) == 0 && st.st_uid == 0) {
        /* The supervisor appends to it as that user; failing, its events go to its log only. */
        int owned = fchown(fd, pw->pw_uid, pw->pw_gid);
        (void)owned; /* a (void) cast alone does not quiet warn_unused_result */
    }
    char now[TIMEFMT_RFC3339_LEN];
    time_rfc3339(time_now_ms(), now);
    json_t *e = json_pack("{s:s, s:s, s:s, s:s}", "time", now, "type", "Normal", "reason", reason,
                          "message", message);
    char *line = json_dumps(e, JSON_COMPACT);
    struct strbuf sb = STRBUF_INIT;
    strbuf_adds(&sb, line);
    strbuf_addc(&sb, '\n');
    if (write(fd, sb.buf, sb.len) < 0) {
        /* best effort: the job's own history, not its state */
    }
    strbuf_free(&sb);
    free(line);
    json_decref(e);
    close(fd);
}

/* The pool and spec a job names, from the cluster's catalog; NULL spec with why in err. */
static const struct catalog_spec *job_spec(const struct catalog *cat, const struct jobspec *job,
                                           struct api_error *err)
{
    const char *pool_name = job->resource_pool.name;
    const struct catalog_pool *pool = pool_name ? catalog_pool(cat, pool_name) : NULL;
    struct strbuf names = STRBUF_INIT;
    if (pool == NULL) {
        for (size_t i = 0; i < cat->pool_count; i++)
            strbuf_addf(&names, "%s%s", i ? ", " : "", cat->pools[i].name);
        api_error_set(err, 400, "InvalidField", "resource_pool.name",
                      "%s%s%s: the pools are the cluster's partitions: %s",
                      pool_name ? "no partition '" : "required", pool_name ? pool_name : "",
                      pool_name ? "'" : "", strbuf_str(&names));
        strbuf_free(&names);
        return NULL;
    }
    const struct role *r = jobspec_worker(job);
    const char *spec_name = r && r->resource_spec_count ? r->resource_spec[0].name : NULL;
    const struct catalog_spec *spec = spec_name ? catalog_pool_spec(pool, spec_name) : NULL;
    if (spec == NULL) {
        for (size_t i = 0; i < pool->spec_count; i++)
            strbuf_addf(&names, "%s%s", i ? ", " : "", pool->specs[i].name);
        api_error_set(err, 400, "InvalidField", "roles[0].resource_spec[0].name",
                      "%s%s%s in partition %s: choose one of: %s",
                      spec_name ? "no resource spec '" : "required", spec_name ? spec_name : "",
                      spec_name ? "'" : "", pool->name, strbuf_str(&names));
    }
    strbuf_free(&names);
    return spec;
}

/*
 * The nodes the supervisor marked unschedulable for this job (state.json's
 * "marked"), as "n1,n3" for exclude_nodes; NULL when none. A name that is
 * not a plain node name is skipped: the file is the job's to write.
 */
static char *marked_nodes(const char *dir, uid_t owner)
{
    struct strbuf sb = STRBUF_INIT, out = STRBUF_INIT;
    if (slurm_read_job_file(dir, owner, NULL, "state.json", WORKER_FILE_MAX, false, &sb) == 0) {
        json_t *j = json_loadb(sb.buf ? sb.buf : "", sb.len, 0, NULL);
        size_t i;
        json_t *v;
        json_array_foreach(json_object_get(j, "marked"), i, v)
        {
            const char *n = json_string_value(v);
            if (i < 64 && slurm_safe_component(n))
                strbuf_addf(&out, "%s%s", out.len ? "," : "", n);
        }
        json_decref(j);
    }
    strbuf_free(&sb);
    if (out.len == 0) {
        strbuf_free(&out);
        return NULL;
    }
    return strbuf_detach(&out, NULL);
}

static int remove_at(int parent, const char *name, int depth);

/*
 * Writes job as dir's job.json (replacing it at once); -1 with err. A job
 * directory this call just made is not synced to disk either (its entry
 * in the workspace is not), so there job.json is written without fsync:
 * two of a submit's ~15 ms here, for nothing a crash would keep. One
 * replacing a job's earlier job.json (start, an update) is synced.
 */
static int write_job_json(const char *dir, const struct jobspec *job, bool fresh_dir,
                          struct api_error *err)
{
    json_t *j = jobspec_to_json(job);
    char *text = json_dumps(j, JSON_INDENT(2));
    char *path = xasprintf("%s/job.json", dir);
    struct strbuf why = STRBUF_INIT;
    int rc = fresh_dir ? file_write_atomic_nosync(path, text, strlen(text), 0644, &why)
                       : file_write_atomic(path, text, strlen(text), 0644, &why);
    if (rc != 0)
        api_error_set(err, 500, "JobsDir", "", "%s", strbuf_str(&why));
    strbuf_free(&why);
    free(path);
    free(text);
    json_decref(j);
    return rc;
}
static enum backend_status cancel(struct backend *b, int64_t id, struct api_error *err);

/*
 * After slurmrestd answered a submit with an error: slurmctld may have
 * queued the job all the same (22.05 answers 2068 when the partition's
 * nodes are drained, and the job waits in the queue). Cancels the user's
 * Slurm jobs that carry this submit's mark (comment), so a failed submit
 * leaves no job nobody sees. 0 when none is left (*cancelled: how many
 * were); -1 when one may be (the lookup or a cancel failed, why says it).
 */
static int cancel_strays(struct backend *b, const char *mark, int *cancelled, struct strbuf *why)
{
    struct slurm *s = driver(b);
    *cancelled = 0;
    json_t *reply = NULL;
    struct api_error e;
    memset(&e, 0, sizeof e);
    if (slurm_rest(b, "GET", "jobs", NULL, &reply, &e) != BACKEND_OK) {
        strbuf_addf(why, "whether Slurm queued it anyway could not be checked (%s)", e.message);
        return -1;
    }
    char *comment = xasprintf("%s%s", SLURM_MARK_PREFIX, mark);
    int rc = 0;
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(reply, "jobs"), i, v)
    {
        struct slurm_job j;
        struct strbuf bad = STRBUF_INIT;
        int dec = slurm_job_decode(s->shape, v, &j, &bad);
        strbuf_free(&bad);
        if (dec != 0)
            continue;
        if (slurm_is(j.user, s->user) && slurm_is(j.comment, comment) && !slurm_job_ended(&j)) {
            if (cancel(b, j.id, &e) == BACKEND_OK) {
                (*cancelled)++;
            } else if (!slurm_pending(b)) {
                strbuf_addf(why, "Slurm queued it anyway as job %lld and cancelling it failed (%s)",
                            (long long)j.id, e.message);
                rc = -1;
            }
        }
        slurm_job_free(&j);
    }
    free(comment);
    json_decref(reply);
    return rc;
}

/* Appends text to err's message, as far as it fits. */
static void error_append(struct api_error *err, const char *text)
{
    size_t n = strlen(err->message);
    snprintf(err->message + n, sizeof err->message - n, "%s", text);
}

/*
 * Submits job (create, or start = the stored job again): its directory,
 * job.json, the rendered script, POST job/submit. A name with a Slurm job
 * still alive is refused; create also refuses a name whose directory exists.
 */
static enum backend_status submit(struct backend *b, const struct jobspec *job, bool fresh,
                                  struct jobspec *out, struct api_error *err)
{
    struct slurm *s = driver(b);
    jobspec_init(out);
    char *dir = slurm_backend_job_dir(b, job->name, err);
    if (dir == NULL)
        return BACKEND_REJECTED;
    enum backend_status st = BACKEND_OK;
    if (!fresh) {
        /* A start must not run a job twice: its Slurm job must have ended. */
        struct slurm_found f;
        st = slurm_fetch_jobs(b, &f, err);
        if (st != BACKEND_OK) {
            free(dir);
            return st;
        }
        const struct slurm_job *alive = slurm_found_job(b, &f, job->name);
        if (alive && !slurm_job_ended(alive)) {
            api_error_set(err, 409, "AlreadyExists", "name",
                          "job '%s' is still %s as Slurm job %lld", job->name,
                          alive->state ? alive->state : "?", (long long)alive->id);
            st = BACKEND_REJECTED;
        }
        slurm_found_free(&f);
    }
    struct catalog cat;
    memset(&cat, 0, sizeof cat);
    const struct catalog_spec *spec = NULL;
    if (st == BACKEND_OK && (st = slurm_catalog(b, &cat, err)) == BACKEND_OK &&
        (spec = job_spec(&cat, job, err)) == NULL)
        st = BACKEND_REJECTED;
    if (st == BACKEND_OK && qos_refused(b, job, err))
        st = BACKEND_REJECTED;
    json_t *body = NULL;
    struct site_conf site = {s->jobs_dir, b->target.workspace, s->launcher,
                             s->qos,      s->volumes,          false};
    const struct catalog_pool *pool =
        catalog_pool(&cat, job->resource_pool.name ? job->resource_pool.name : "");
    site.idle_pool = pool && pool->type == POOL_IDLE;
    /* A start keeps away from the nodes the job marked (the supervisor's state.json). */
    char *exclude = fresh ? NULL : marked_nodes(dir, s->owner_uid);
    if (st == BACKEND_OK &&
        build_submit(s->shape, &site, job, spec, exclude, &body, NULL, err) != 0)
        st = BACKEND_REJECTED;
    free(exclude);
    bool made = false; /* this call made the directory (create: nothing was there) */
    /* On the loop, an earlier run of this call made it and its POST is in flight. */
    bool ours = fresh && s->replay && s->replay->made && strcmp(s->replay->made, dir) == 0;
    if (st == BACKEND_OK && make_job_dir(s, b, dir, fresh && !ours, err) != 0)
        st = BACKEND_REJECTED;
    else if (st == BACKEND_OK)
        made = fresh;
    if (st == BACKEND_OK && write_job_json(dir, job, made, err) != 0)
        st = BACKEND_REJECTED;
    char *mark = NULL;
    if (st == BACKEND_OK) {
        /* The directory's mark in the Slurm job's comment: how its jobs are known as ours. */
        mark = slurm_job_mark(dir, s->owner_uid, true);
        if (mark == NULL) {
            api_error_set(err, 500, "JobsDir", "", "cannot write the mark of %s/%s", dir,
                          SLURM_MARK_FILE);
            st = BACKEND_REJECTED;
        } else {
            char *comment = xasprintf("%s%s", SLURM_MARK_PREFIX, mark);
            json_object_set_new(json_object_get(body, "job"), "comment", json_string(comment));
            free(comment);
        }
    }
    json_t *reply = NULL;
    if (st == BACKEND_OK)
        st = slurm_rest(b, "POST", "job/submit", body, &reply, err);
    if (st != BACKEND_OK && strstr(err->message, "Invalid qos") != NULL)
        snprintf(err->field, sizeof err->field, "scheduling.priority"); /* 2066: the QOS */
    if (st == BACKEND_OK) {
        int64_t id = 0;
        slurm_number(json_object_get(reply, "job_id"), &id);
        jobspec_copy(out, job);
        free(out->id);
        out->id = xasprintf("%lld", (long long)id);
        free(out->uid);
        out->uid = xasprintf("slurm:%s/%s", b->target.workspace, job->name);
        out->state = JOB_STATE_QUEUEING;
        char *m = xasprintf("submitted as Slurm job %lld to partition %s: %d node(s), %s each",
                            (long long)id, job->resource_pool.name,
                            jobspec_worker(job)->total_replicas, spec->name);
        append_event(s, dir, fresh ? "Submitted" : "Started", m);
        free(m);
    } else if (made) {
        /* Refused: a job Slurm queued all the same is cancelled before the directory goes. */
        struct strbuf why = STRBUF_INIT;
        int cancelled = 0;
        int left = mark && !slurm_pending(b) ? cancel_strays(b, mark, &cancelled, &why) : 0;
        if (slurm_pending(b)) {
            /* A request is being made on the loop: the directory stays, this call's. */
            free(s->replay->made);
            s->replay->made = xstrdup(dir);
            made = false;
        } else if (left != 0) {
            /* It may be queued: its directory stays, so get shows it and delete removes it. */
            char *m = xasprintf("; %s: its directory %s is kept: `trainjob delete %s` removes "
                                "both",
                                strbuf_str(&why), dir, job->name);
            error_append(err, m);
            free(m);
            made = false;
        } else if (cancelled > 0) {
            error_append(err, " (Slurm had queued it anyway: cancelled, nothing is left)");
        }
        strbuf_free(&why);
    }
    if (made && st != BACKEND_OK) {
        /* Nothing was submitted: the directory this call made goes again, so the name is free. */
        char *slash = strrchr(dir, '/');
        *slash = '\0';
        int pfd = slurm_open_dir_nofollow(dir);
        if (pfd >= 0) {
            (void)remove_at(pfd, slash + 1, 0);
            close(pfd);
        }
    }
    free(mark);
    json_decref(reply);
    json_decref(body);
    catalog_free(&cat);
    free(dir);
    return st;
}

enum backend_status slurm_create(struct backend *b, const struct jobspec *job, struct jobspec *out,
                                 struct api_error *err)
{
    if (job->name == NULL || *job->name == '\0') {
        jobspec_init(out);
        api_error_set(err, 400, "InvalidField", "name", "a Slurm job needs a name");
        return BACKEND_REJECTED;
    }
    struct jobspec j;
    jobspec_copy(&j, job);
    free(j.workspace_name);
    j.workspace_name = xstrdup(b->target.workspace);
    enum backend_status st = submit(b, &j, true, out, err);
    jobspec_free(&j);
    return st;
}

enum backend_status slurm_start(struct backend *b, const char *name, struct jobspec *out,
                                struct api_error *err)
{
    jobspec_init(out);
    char *dir = slurm_backend_job_dir(b, name, err);
    if (dir == NULL)
        return BACKEND_REJECTED;
    struct jobspec job;
    jobspec_init(&job);
    enum backend_status st = BACKEND_OK;
    struct strbuf probe = STRBUF_INIT;
    int owned = slurm_read_job_file(dir, driver(b)->owner_uid, NULL, "job.json", 1, false, &probe);
    strbuf_free(&probe);
    if (owned == -2) {
        /* Never submitted: it would run another user's script as this one. */
        api_error_set(err, 403, "UnsafeDirectory", "name",
                      "job '%s': %s/job.json is not yours (another user wrote it): not submitted",
                      name, dir);
        st = BACKEND_REJECTED;
    } else if (!slurm_stored_job(dir, driver(b)->owner_uid, &job)) {
        api_error_set(err, 404, "NotFound", "name",
                      "no job '%s' in workspace %s (no readable job.json in %s)", name,
                      b->target.workspace, dir);
        st = BACKEND_REJECTED;
    } else {
        free(job.name);
        job.name = xstrdup(name); /* the directory's, whatever the file says */
        st = submit(b, &job, false, out, err);
    }
    jobspec_free(&job);
    free(dir);
    return st;
}

static void batch_add(struct batch_result *out, const char *name, enum batch_outcome o,
                      const char *word)
{
    out->items = xreallocarray(out->items, out->count + 1, sizeof *out->items);
    out->items[out->count].name = xstrdup(name);
    out->items[out->count].outcome = o;
    out->items[out->count].result = xstrdup(word);
    out->count++;
}

/* DELETE job/<id>: Slurm's scancel — SIGTERM to every step, KillWait, then SIGKILL. */
static enum backend_status cancel(struct backend *b, int64_t id, struct api_error *err)
{
    char path[64];
    snprintf(path, sizeof path, "job/%lld", (long long)id);
    json_t *reply;
    enum backend_status st = slurm_rest(b, "DELETE", path, NULL, &reply, err);
    json_decref(reply);
    return st;
}

enum backend_status slurm_stop(struct backend *b, const char *const *names, size_t n,
                               struct batch_result *out, struct api_error *err)
{
    memset(out, 0, sizeof *out);
    struct slurm_found f;
    enum backend_status st = slurm_fetch_jobs(b, &f, err);
    int64_t *ids = xcalloc(n ? n : 1, sizeof *ids); /* cancelled here: its event to write */
    for (size_t i = 0; st == BACKEND_OK && i < n; i++) {
        const struct slurm_job *sj = slurm_found_job(b, &f, names[i]);
        if (sj == NULL)
            batch_add(out, names[i], BATCH_NOT_FOUND, "NOT_FOUND");
        else if (slurm_job_ended(sj))
            batch_add(out, names[i], BATCH_SKIPPED, "SKIPPED");
        else if ((st = cancel(b, sj->id, err)) == BACKEND_OK) {
            batch_add(out, names[i], BATCH_DONE, "STOPPING");
            ids[i] = sj->id;
        }
    }
    /* Events once every cancel is answered: a run thrown away on the loop writes none. */
    for (size_t i = 0; i < n && !slurm_pending(b); i++) {
        if (ids[i] == 0)
            continue;
        char *dir = slurm_jobdir_path(driver(b)->jobs_dir, b->target.workspace, names[i]);
        char *m = xasprintf("stop: Slurm job %lld cancelled (SIGTERM to every step, SIGKILL "
                            "after the cluster's KillWait)",
                            (long long)ids[i]);
        if (dir)
            append_event(driver(b), dir, "Stopped", m);
        free(m);
        free(dir);
    }
    free(ids);
    slurm_found_free(&f);
    return st;
}

/* Removes name below parent and all it holds, never following a symlink; 0 when gone. */
static int remove_at(int parent, const char *name, int depth)
{
    if (unlinkat(parent, name, 0) == 0 || errno == ENOENT)
        return 0;
    if ((errno != EISDIR && errno != EPERM) || depth > 64)
        return -1;
    int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return -1;
    DIR *dp = fdopendir(fd);
    if (dp == NULL) {
        close(fd);
        return -1;
    }
    int rc = 0;
    struct dirent *e;
    while ((e = readdir(dp)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            rc |= remove_at(dirfd(dp), e->d_name, depth + 1);
    closedir(dp);
    if (unlinkat(parent, name, AT_REMOVEDIR) != 0 && errno != ENOENT)
        rc = -1;
    return rc;
}

/*
 * Waits (at most the driver's delete_wait_ms) for a cancelled job to leave
 * Slurm's running states, so its supervisor is gone before its directory is
 * removed and nothing of it is written there after. Returns whether it did
 * (or Slurm no longer knows it); false also while a request is pending on
 * the loop, which the caller tells by slurm_pending.
 */
static bool wait_ended(struct backend *b, int64_t id)
{
    char path[64];
    snprintf(path, sizeof path, "job/%lld", (long long)id);
    const struct slurm_replay *rp = driver(b)->replay;
    int64_t deadline = (rp ? rp->started : time_now_ms()) + driver(b)->delete_wait_ms;
    while (time_now_ms() < deadline) {
        json_t *reply;
        struct api_error e;
        enum backend_status st = slurm_rest(b, "GET", path, NULL, &reply, &e);
        if (st == BACKEND_REJECTED && e.status == 404)
            return true; /* purged: long ended */
        if (st != BACKEND_OK)
            return false;
        struct slurm_job j;
        struct strbuf why = STRBUF_INIT;
        bool ended = true;
        if (slurm_job_decode(driver(b)->shape, json_array_get(json_object_get(reply, "jobs"), 0),
                             &j, &why) == 0) {
            ended = slurm_job_ended(&j);
            slurm_job_free(&j);
        }
        strbuf_free(&why);
        json_decref(reply);
        if (ended)
            return true;
        if (rp) {
            /* On the loop: the same GET again in 200 ms, this run thrown away meanwhile. */
            slurm_rest_again(b, "GET", path, 200);
            return false;
        }
        poll(NULL, 0, 200);
    }
    return false;
}

enum backend_status slurm_delete(struct backend *b, const char *const *names, size_t n,
                                 struct batch_result *out, struct api_error *err)
{
    memset(out, 0, sizeof *out);
    struct slurm_found f;
    enum backend_status st = slurm_fetch_jobs(b, &f, err);
    for (size_t i = 0; st == BACKEND_OK && i < n; i++) {
        char *dir = slurm_backend_job_dir(b, names[i], err);
        if (dir == NULL && err->status == 403) {
            st = BACKEND_REJECTED; /* an unsafe directory: said, never removed */
            break;
        }
        if (dir == NULL) {
            batch_add(out, names[i], BATCH_NOT_FOUND, "NOT_FOUND");
            continue;
        }
        const struct slurm_job *sj = slurm_found_job(b, &f, names[i]);
        if (sj && !slurm_job_ended(sj) && (st = cancel(b, sj->id, err)) == BACKEND_OK &&
            !wait_ended(b, sj->id)) {
            if (slurm_pending(b)) { /* on the loop, still waiting: nothing is removed yet */
                api_error_set(err, 0, "Pending", "", "waiting for slurmrestd");
                st = BACKEND_TRANSPORT;
            } else {
                /* Removing it now would leave a running supervisor writing nowhere, unseen. */
                api_error_set(err, 409, "NotEnded", "",
                              "job '%s': Slurm job %lld was cancelled but has not ended after "
                              "%d s; its directory is kept while it ends: run delete again",
                              names[i], (long long)sj->id, driver(b)->delete_wait_ms / 1000);
                st = BACKEND_REJECTED;
            }
        }
        struct stat s;
        if (st == BACKEND_OK && sj == NULL && lstat(dir, &s) != 0) {
            batch_add(out, names[i], BATCH_NOT_FOUND, "NOT_FOUND");
        } else if (st == BACKEND_OK) {
            char *slash = strrchr(dir, '/');
            *slash = '\0';
            int pfd = slurm_open_dir_nofollow(dir);
            if (pfd >= 0 && remove_at(pfd, slash + 1, 0) == 0) {
                batch_add(out, names[i], BATCH_DONE, "DELETING");
            } else {
                api_error_set(err, 500, "JobsDir", "", "cannot remove %s/%s: %s", dir, slash + 1,
                              strerror(errno));
                st = BACKEND_REJECTED;
            }
            if (pfd >= 0)
                close(pfd);
        }
        free(dir);
    }
    slurm_found_free(&f);
    return st;
}

/* ---- update: priority (the QOS), display name ------------------------------- */

/*
 * A new priority is the QOS the context's qos: map gives it (IDLE_ keys for
 * an idle job), set on the job's Slurm job with slurmrestd's job update
 * (POST job/<id> {"qos": …}, the same body in v0.0.38 and v0.0.40); NORMAL
 * with no QOS mapped is the association's default QOS (Slurm takes an
 * empty name as the default). Slurm changes the QOS of a pending job; of
 * one that runs it refuses for anyone but an operator: then the message
 * says so and the job runs on as it was (no resubmission: that would
 * restart every worker without asking). job.json takes the new priority
 * once Slurm took it, so the job shows it and a later start submits with
 * it; a job with no live Slurm job only has job.json changed.
 */
enum backend_status slurm_update(struct backend *b, const char *name, const struct job_update *u,
                                 struct jobspec *out, struct api_error *err)
{
    struct slurm *s = driver(b);
    jobspec_init(out);
    char *dir = slurm_backend_job_dir(b, name, err);
    if (dir == NULL)
        return BACKEND_REJECTED;
    struct jobspec job;
    jobspec_init(&job);
    enum backend_status st = BACKEND_OK;
    if (!slurm_stored_job(dir, s->owner_uid, &job)) {
        api_error_set(err, 404, "NotFound", "name",
                      "no job '%s' in workspace %s (no readable job.json in %s)", name,
                      b->target.workspace, dir);
        st = BACKEND_REJECTED;
    }
    enum priority was = job.scheduling.priority ? job.scheduling.priority : PRIORITY_NORMAL;
    bool reprioritise =
        st == BACKEND_OK && u->priority != PRIORITY_UNSPECIFIED && u->priority != was;
    const char *qos = NULL;
    int64_t slurm_id = 0;
    if (reprioritise) {
        job.scheduling.present = true;
        job.scheduling.priority = u->priority;
        qos = qos_for(s->qos, &job);
        if (qos == NULL && u->priority != PRIORITY_NORMAL) {
            api_error_set(err, 400, "InvalidField", "scheduling.priority",
                          "%s needs a QOS: the context '%s' maps none for it (qos: {%s%s: <qos>})",
                          enum_name(&priority_names, (int)u->priority), s->context,
                          jobspec_is_idle(&job) ? "IDLE_" : "",
                          enum_name(&priority_names, (int)u->priority));
            st = BACKEND_REJECTED;
        } else if (qos_refused(b, &job, err)) {
            st = BACKEND_REJECTED;
        }
    }
    if (reprioritise && st == BACKEND_OK) {
        struct slurm_found f;
        st = slurm_fetch_jobs(b, &f, err);
        const struct slurm_job *sj = st == BACKEND_OK ? slurm_found_job(b, &f, name) : NULL;
        if (sj && !slurm_job_ended(sj)) {
            char path[64];
            snprintf(path, sizeof path, "job/%lld", (long long)sj->id);
            json_t *body = json_pack("{s:s}", "qos", qos ? qos : "");
            json_t *reply = NULL;
            slurm_id = sj->id;
            st = slurm_rest(b, "POST", path, body, &reply, err);
            json_decref(reply);
            json_decref(body);
            if (st == BACKEND_REJECTED && !slurm_is(sj->state, "PENDING")) {
                char *m = slurm_clean(err->message, 300);
                api_error_set(err, 409, "InvalidState", "scheduling.priority",
                              "job '%s' is %s as Slurm job %lld: Slurm changes the QOS of a "
                              "pending job only (%s). It runs on at %s; stop and start it to "
                              "run at %s (its workers start over)",
                              name, sj->state ? sj->state : "?", (long long)sj->id, m,
                              enum_name(&priority_names, (int)was),
                              enum_name(&priority_names, (int)u->priority));
                free(m);
            } else if (st == BACKEND_REJECTED) {
                snprintf(err->field, sizeof err->field, "scheduling.priority");
            }
        }
        slurm_found_free(&f);
    }
    bool rename = st == BACKEND_OK && u->display_name != NULL;
    if (rename) {
        free(job.display_name);
        job.display_name = xstrdup(u->display_name);
    }
    /* Written once every request is answered: a run thrown away on the loop changes nothing. */
    if (st == BACKEND_OK && (reprioritise || rename) && !slurm_pending(b)) {
        if (write_job_json(dir, &job, false, err) != 0)
            st = BACKEND_REJECTED;
        else if (reprioritise) {
            char *m = slurm_id ? xasprintf("priority %s: Slurm job %lld now has QOS %s",
                                           enum_name(&priority_names, (int)u->priority),
                                           (long long)slurm_id, qos && *qos ? qos : "(the default)")
                               : xasprintf("priority %s: from the next start",
                                           enum_name(&priority_names, (int)u->priority));
            append_event(s, dir, "PriorityChanged", m);
            free(m);
        }
    }
    if (st == BACKEND_OK) {
        jobspec_copy(out, &job);
        free(out->name);
        out->name = xstrdup(name);
        if (slurm_id) {
            free(out->id);
            out->id = xasprintf("%lld", (long long)slurm_id);
        }
    }
    jobspec_free(&job);
    free(dir);
    return st;
}

/* ---- checks before a submit -------------------------------------------------- */

/* The site of context c (or placeholders), as render and the checks build it. */
static void site_of(const struct jobspec *job, const struct context *c, const struct catalog *cat,
                    struct site_conf *site, struct catalog_spec *spec)
{
    const char *jobs_dir = c && c->jobs_dir ? c->jobs_dir : "/shared/trainjob/jobs";
    const char *workspace = job->workspace_name ? job->workspace_name
                            : c && c->workspace ? c->workspace
                                                : "default";
    *site = (struct site_conf){
        jobs_dir, workspace, c ? c->launcher : NULL, c ? c->qos : NULL, c ? c->volumes : NULL,
        false};
    /* The spec as its name says ("gpu-2": 2 GPUs); CPUs and memory come from the cluster. */
    memset(spec, 0, sizeof *spec);
    const struct role *r = jobspec_worker(job);
    const char *sn = r && r->resource_spec_count ? r->resource_spec[0].name : NULL;
    const struct catalog_pool *pool =
        cat && job->resource_pool.name ? catalog_pool(cat, job->resource_pool.name) : NULL;
    const struct catalog_spec *known = pool && sn ? catalog_pool_spec(pool, sn) : NULL;
    if (known)
        *spec = *known;
    else if (sn && strncmp(sn, "gpu-", 4) == 0)
        spec->devices = atoi(sn + 4);
    if (pool)
        site->idle_pool = pool->type == POOL_IDLE;
}

/* One refusal of build_submit as a finding, unless its field has an error already. */
static void add_refusal(struct findings *out, const struct api_error *e, const char *field)
{
    if (findings_has_error_under(out, field))
        return;
    findings_add(out, SEVERITY_ERROR, field, "%s", e->message);
}

void slurm_job_findings(const struct jobspec *job, const struct context *c,
                        const struct catalog *cat, struct findings *out)
{
    const struct slurm_shape *shape = slurm_shape_find("v0.0.38");
    struct site_conf site;
    struct catalog_spec spec;
    site_of(job, c, cat, &site, &spec);
    /*
     * The submit stops at its first refusal: it is asked once without the
     * mounts, then once per mount alone, so every mount's trouble is said.
     */
    struct jobspec j;
    jobspec_copy(&j, job);
    struct mount *mounts = j.mount;
    size_t n = j.mount_count;
    struct api_error e;
    json_t *body = NULL;
    j.mount = NULL;
    j.mount_count = 0;
    char first[sizeof e.field] = "";
    if (build_submit(shape, &site, &j, &spec, NULL, &body, NULL, &e) != 0) {
        snprintf(first, sizeof first, "%s", e.field);
        add_refusal(out, &e, e.field);
    }
    json_decref(body);
    /* What the first run said is said: the mounts' runs are let past it to the mounts. */
    j.scheduling.priority = PRIORITY_UNSPECIFIED;
    struct role *r = (struct role *)jobspec_worker(&j);
    if (r && (!r->has_total_replicas || r->total_replicas < 1)) {
        r->has_total_replicas = true;
        r->total_replicas = 1;
    }
    char *dir = slurm_jobdir_path(site.jobs_dir, site.workspace, j.name ? j.name : "");
    if (dir == NULL) {
        free(j.name);
        j.name = xstrdup("job");
    }
    free(dir);
    for (size_t i = 0; i < n; i++) {
        j.mount = &mounts[i];
        j.mount_count = 1;
        body = NULL;
        if (build_submit(shape, &site, &j, &spec, NULL, &body, NULL, &e) == 0 ||
            strcmp(e.field, first) == 0) {
            json_decref(body);
            continue; /* fine, or the same refusal as without it */
        }
        char field[sizeof e.field + 32];
        if (strncmp(e.field, "mount[0]", 8) == 0)
            snprintf(field, sizeof field, "mount[%zu]%.100s", i, e.field + 8);
        else
            snprintf(field, sizeof field, "%.127s", e.field);
        add_refusal(out, &e, field);
    }
    j.mount = mounts;
    j.mount_count = n;
    jobspec_free(&j);
}

/* ---- render ----------------------------------------------------------------- */

int slurm_render(const struct jobspec *job, const struct context *c, const char *version,
                 const struct catalog *cat, struct strbuf *out, struct strbuf *err)
{
    const struct slurm_shape *shape = slurm_shape_find(version ? version : "v0.0.38");
    if (shape == NULL) {
        strbuf_addf(err, "no Slurm API version '%s' (trainjob speaks v0.0.38 and v0.0.40)",
                    version);
        return -1;
    }
    struct site_conf site;
    struct catalog_spec spec;
    site_of(job, c, cat, &site, &spec);
    struct strbuf gaps = STRBUF_INIT;
    struct api_error e;
    json_t *body = NULL;
    if (build_submit(shape, &site, job, &spec, NULL, &body, &gaps, &e) != 0) {
        strbuf_addf(err, "%s%s%s", e.field[0] ? e.field : "", e.field[0] ? ": " : "", e.message);
        strbuf_free(&gaps);
        return -1;
    }
    char *text = json_dumps(body, JSON_INDENT(2));
    strbuf_addf(out, "POST /slurm/%s/job/submit\n", shape->version);
    strbuf_addf(out, "X-SLURM-USER-NAME: %s\nX-SLURM-USER-TOKEN: <the context's token>\n\n",
                c && c->user ? c->user : "<user>");
    strbuf_adds(out, text);
    strbuf_adds(out, "\n\n# the batch script (the \"script\" above):\n");
    strbuf_adds(out, json_string_value(json_object_get(body, "script")));
    strbuf_adds(out, "\n# what Slurm cannot honour as written:\n");
    if (gaps.len == 0)
        strbuf_adds(out, "(nothing: every rule of the job is honoured)\n");
    else
        strbuf_add(out, gaps.buf, gaps.len);
    free(text);
    json_decref(body);
    strbuf_free(&gaps);
    return 0;
}
