/*
 * requests: the requests that change trainjobd's state, as the routes hand
 * them over — workspaces, creating and updating a job, batch stops and
 * deletes, starts and node marks — with the membership and permission
 * checks that queries.c and watch.c share. Called by engine/routes.c.
 */
#include "engine/engine.h"

#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/apierror.h"
#include "api/catalog.h"
#include "api/catalog_json.h"
#include "api/finding.h"
#include "api/jobspec_defaults.h"
#include "api/jobspec_json.h"
#include "api/schema.h"
#include "api/validate.h"
#include "engine/cgroup.h"
#include "engine/runas.h"
#include "engine/state.h"
#include "engine/stopmark.h"
#include "engine/store.h"
#include "util/fileio.h"
#include "util/loop.h"
#include "util/strbuf.h"
#include "util/timefmt.h"
#include "util/xalloc.h"

#define MAX_BODY (1u << 20)
#define MAX_BATCH 200

/* ---- requests ----------------------------------------------------------- */

int member_check(struct engine *eng, const char *user, const char *ws, struct api_error *err)
{
    bool exists = false;
    for (size_t i = 0; i < eng->cfg.workspace_count; i++)
        exists |= strcmp(eng->cfg.workspaces[i].name, ws) == 0;
    if (!exists)
        return api_error_set(err, 404, "WorkspaceNotFound", "workspace_name",
                             "workspace '%s' does not exist", ws);
    if (config_role(&eng->cfg, ws, user) == MEMBER_NONE)
        return api_error_set(err, 403, "PermissionDenied", "workspace_name",
                             "user '%s' is not a member of workspace '%s'", user, ws);
    return 0;
}

/*
 * A request's change the store refused: 503, and nothing was changed or done
 * (the job was written as the change would leave it before anything else).
 */
static int not_saved(struct engine *eng, struct ejob *job, const char *change, struct strbuf *why,
                     struct api_error *err)
{
    (void)ejob_spec(eng, job); /* its whole spec agrees with memory again */
    engine_log("job %s: %s refused: %s", job->name, change, strbuf_str(why));
    int rc = api_error_set(err, 503, "StoreFailed", "",
                           "job '%s': the %s could not be saved, so nothing was changed or done "
                           "(%s); retry once the engine's state directory has room",
                           job->name, change, strbuf_str(why));
    strbuf_free(why);
    return rc;
}

int find_job(struct engine *eng, const char *user, const char *ws, const char *name,
             struct ejob **out, struct api_error *err)
{
    int rc = member_check(eng, user, ws, err);
    if (rc)
        return rc;
    *out = engine_find(eng, ws, name);
    if (*out == NULL || (*out)->state == JOB_STATE_DELETED)
        return api_error_set(err, 404, "NotFound", "name",
                             "training job '%s' not found in workspace '%s'", name, ws);
    return 0;
}

int engine_find_readable(struct engine *eng, const char *user, const char *ws, const char *name,
                         struct ejob **out, struct api_error *err)
{
    return find_job(eng, user, ws, name, out, err);
}

/*
 * Who may change a job (update, stop, start, delete, markNode), the one rule
 * for all of them, as on ACP: a member changes only the jobs they created;
 * the workspace's owners and the admins change every job. Every member may
 * read every job of the workspace. Returns 0 or 403 with the rule in err.
 */
static int change_check(struct engine *eng, const char *user, const char *ws,
                        const struct ejob *job, struct api_error *err)
{
    enum member_role role = config_role(&eng->cfg, ws, user);
    if (role == MEMBER_OWNER || role == MEMBER_ADMIN)
        return 0;
    const char *creator = job->creator;
    if (creator && user && strcmp(creator, user) == 0)
        return 0;
    return api_error_set(err, 403, "PermissionDenied", "name",
                         "user '%s' may not change job '%s', created by %s: members of workspace "
                         "'%s' change only the jobs they created; its owners and admins change "
                         "all",
                         user, job->name, creator ? creator : "another user", ws);
}

/* find_job for a request that changes the job: the caller must pass change_check. */
static int find_job_to_change(struct engine *eng, const char *user, const char *ws,
                              const char *name, struct ejob **out, struct api_error *err)
{
    int rc = find_job(eng, user, ws, name, out, err);
    return rc ? rc : change_check(eng, user, ws, *out, err);
}

int engine_catalog(struct engine *eng, const char *user, json_t **reply, struct api_error *err)
{
    (void)err;
    struct catalog cat;
    memset(&cat, 0, sizeof cat);
    config_catalog(&eng->cfg, user, &cat);
    cat.resource_limits = xstrdup(cgroup_summary(eng->opt.cgroups));
    struct runner_user ignored;
    runas_member(eng->runas, &eng->cfg, user, &ignored, &cat.run_as);
    runas_user_free(&ignored);
    *reply = catalog_to_json(&cat);
    catalog_free(&cat);
    return 200;
}

static int save_config(struct engine *eng, struct api_error *err)
{
    struct strbuf out = STRBUF_INIT, io = STRBUF_INIT;
    config_write(&eng->cfg, &out);
    int rc = file_write_atomic(eng->config_path, out.buf, out.len, 0600, &io);
    if (rc != 0)
        api_error_set(err, 500, "ConfigNotSaved", "", "%s", strbuf_str(&io));
    strbuf_free(&out);
    strbuf_free(&io);
    return rc;
}

int engine_create_workspace(struct engine *eng, const char *user, const json_t *body,
                            json_t **reply, struct api_error *err)
{
    if (!config_is_admin(&eng->cfg, user))
        return api_error_set(err, 403, "PermissionDenied", "",
                             "creating a workspace is an admin's act: '%s' is not among the "
                             "admins of engine.yaml (the user who runs trainjobd always is)",
                             user);
    const char *name = json_string_value(json_object_get(body, "name"));
    char buf[160];
    const char *bad = name ? validate_job_name(name, buf, sizeof buf) : "required";
    if (bad)
        return api_error_set(err, 400, "InvalidField", "name", "workspace name: %s", bad);
    for (size_t i = 0; i < eng->cfg.workspace_count; i++)
        if (strcmp(eng->cfg.workspaces[i].name, name) == 0)
            return api_error_set(err, 409, "AlreadyExists", "name", "workspace '%s' already exists",
                                 name);
    eng->cfg.workspaces = xreallocarray(eng->cfg.workspaces, eng->cfg.workspace_count + 1,
                                        sizeof *eng->cfg.workspaces);
    struct config_workspace *ws = &eng->cfg.workspaces[eng->cfg.workspace_count++];
    memset(ws, 0, sizeof *ws);
    ws->name = xstrdup(name);
    ws->owners = xmalloc(sizeof *ws->owners);
    ws->owners[0] = xstrdup(user);
    ws->owner_count = 1;
    if (save_config(eng, err) != 0)
        return err->status;
    *reply = json_pack("{s:s, s:s}", "name", name, "role", "OWNER");
    return 200;
}

static bool name_taken(void *ctx, const char *ws, const char *name)
{
    return engine_find(ctx, ws, name) != NULL;
}

/* The first error of a validation, as the HTTP answer; every error in details. */
static int reject(const struct findings *fs, struct api_error *err)
{
    for (size_t i = 0; i < fs->count; i++) {
        const struct finding *f = &fs->items[i];
        if (f->severity != SEVERITY_ERROR)
            continue;
        bool perm = strcmp(f->path, "scheduling.priority") == 0 && strstr(f->message, "owner");
        bool ws = strcmp(f->path, "workspace_name") == 0 && strstr(f->message, "not one of");
        return api_error_set(err, perm || ws ? 403 : 400,
                             perm || ws ? "PermissionDenied" : "InvalidField", f->path, "%s: %s",
                             f->path, f->message);
    }
    return 0;
}

static void resolve_demand(struct engine *eng, struct ejob *job)
{
    const struct role *r = jobspec_worker(job->full_); /* being created: whole */
    const struct config_spec *spec =
        r && r->resource_spec_count ? config_spec(&eng->cfg, r->resource_spec[0].name) : NULL;
    if (spec) {
        job->gpus = spec->gpus;
        job->cpus = spec->cpus;
        job->memory_mib = spec->memory_mib;
    }
}

/*
 * A create body: a field this engine does not know, where the job file may
 * hold one (anything but a near miss of a known field), is kept and returned
 * as it came, as a client keeps it from a file; a value it does not know, a
 * near miss or a wrong type is refused, as strictly as before.
 */
static void decode_create_body(const json_t *root, struct jobspec *s, struct findings *fs)
{
    struct findings kept = FINDINGS_INIT;
    jobspec_from_json(root, JOBSPEC_FILE, s, &kept);
    bool only_fields = true;
    for (size_t i = 0; i < kept.count; i++)
        only_fields = only_fields && kept.items[i].severity == SEVERITY_WARNING &&
                      kept.items[i].offset == FINDING_AT_KEY;
    if (only_fields) {
        findings_move(fs, &kept);
        findings_free(&kept);
        return;
    }
    findings_free(&kept);
    jobspec_free(s);
    jobspec_init(s);
    jobspec_from_json(root, JOBSPEC_STRICT, s, fs);
}

int engine_job_create(struct engine *eng, const char *user, const char *ws, const char *name,
                      const char *body, size_t body_len, json_t **reply, struct api_error *err)
{
    int rc = member_check(eng, user, ws, err);
    if (rc)
        return rc;
    if (body_len > MAX_BODY)
        return api_error_set(err, 413, "TooLarge", "", "request body over %u bytes", MAX_BODY);
    json_error_t jerr;
    json_t *root = json_loadb(body, body_len, JSON_REJECT_DUPLICATES, &jerr);
    if (root == NULL)
        return api_error_set(err, 400, "InvalidJSON", "", "invalid JSON at line %d column %d: %s",
                             jerr.line, jerr.column, jerr.text);
    struct ejob *job = xcalloc(1, sizeof *job);
    struct jobspec *s = xmalloc(sizeof *s);
    jobspec_init(s);
    job->full_ = s; /* the compact fields are set once it is complete */
    struct findings fs = FINDINGS_INIT;
    decode_create_body(root, s, &fs);
    json_decref(root);
    if (name && *name) {
        if (s->name && strcmp(s->name, name) != 0) {
            findings_add(&fs, SEVERITY_ERROR, "name", "'%s' differs from training_job_name '%s'",
                         s->name, name);
        } else if (s->name == NULL) {
            s->name = xstrdup(name);
        }
    }
    if (s->workspace_name && strcmp(s->workspace_name, ws) != 0)
        findings_add(&fs, SEVERITY_ERROR, "workspace_name",
                     "'%s' differs from the workspace in the path, '%s'", s->workspace_name, ws);
    struct catalog cat;
    memset(&cat, 0, sizeof cat);
    config_catalog(&eng->cfg, user, &cat);
    struct validate_options vo = {&cat, ws, name_taken, eng, true, NULL};
    if (!findings_count(&fs, SEVERITY_ERROR))
        validate_job(s, &vo, &fs);
    rc = reject(&fs, err);
    if (rc == 400 && strstr(err->message, "already used"))
        err->status = rc = 409, snprintf(err->reason, sizeof err->reason, "NameTaken");
    findings_free(&fs);
    if (rc) {
        catalog_free(&cat);
        ejob_free(job);
        return rc;
    }
    if (s->workspace_name == NULL)
        s->workspace_name = xstrdup(ws);
    if (s->name == NULL) {
        do {
            free(s->name);
            s->name = jobspec_generate_name(s->framework);
        } while (engine_find(eng, ws, s->name));
    }
    jobspec_fill_defaults(s, &cat);
    catalog_free(&cat);

    char uid[40];
    char *gen = jobspec_generate_name(FRAMEWORK_UNSPECIFIED); /* "pt-" + 8 random chars */
    snprintf(uid, sizeof uid, "%016llx-%s", (unsigned long long)time_now_ms(), gen + 3);
    free(gen);
    s->uid = xstrdup(uid);
    s->id = xasprintf("/subscriptions/%s/resourceGroups/%s/zones/%s/workspaces/%s/"
                      "trainingJobs/%s",
                      engine_subscription(eng), engine_resource_group(eng), engine_zone(eng), ws,
                      s->name);
    s->subscription_name = xstrdup(engine_subscription(eng));
    s->resource_group_name = xstrdup(engine_resource_group(eng));
    s->zone = xstrdup(engine_zone(eng));
    s->ownership.present = true;
    s->ownership.user_name = xstrdup(user);
    s->ownership.user_id = xstrdup(user);
    s->state = JOB_STATE_QUEUEING;
    s->state_message = xstrdup("waiting for the scheduler");
    stamp(&s->create_time);
    stamp(&s->update_time);
    s->has_restart_count = true;
    s->has_ready_workers = true;
    job->seq = eng->next_seq++;
    resolve_demand(eng, job);
    ejob_set_hot(eng, job, s);

    derive_outputs(eng, job);
    char *spec = job_spec_text(eng, job); /* stored, then shown */
    char *rec = job_record_with(job, spec);
    struct strbuf serr = STRBUF_INIT;
    enum store_status st = store_job_insert(eng->store, s->uid, ws, s->name, job->seq, rec, &serr);
    free(rec);
    if (st != STORE_OK) {
        free(spec);
        rc = st == STORE_EXISTS ? api_error_set(err, 409, "NameTaken", "name",
                                                "name '%s' is already used in "
                                                "workspace '%s'",
                                                s->name, ws)
                                : api_error_set(err, 503, "StoreFailed", "", "job not stored: %s",
                                                strbuf_str(&serr));
        strbuf_free(&serr);
        ejob_unlist(eng, job); /* job_record listed it among the decoded specs */
        ejob_free(job);
        return rc;
    }
    strbuf_free(&serr);
    take_snapshot_with(eng, job, spec);
    free(spec);
    add_job(eng, job);
    struct job_event ev = {0};
    ev.kind = EVENT_CREATED;
    ev.state = JOB_STATE_QUEUEING;
    char text[200];
    snprintf(text, sizeof text, "created by %s", user);
    ev.message = text;
    engine_event(eng, job, &ev);
    engine_publish(eng, job);
    lifecycle_schedule_added(eng);
    *reply = job_json(job);
    return 200;
}

/*
 * The events of an update a person made: who changed the priority or the
 * display name, from what to what (was_priority UNSPECIFIED, was_display
 * NULL: not changed). A value set to what it was is no event.
 */
static void note_update(struct engine *eng, struct ejob *job, const char *user,
                        enum priority was_priority, const char *was_display)
{
    char text[600];
    struct job_event ev = {0};
    ev.kind = EVENT_UPDATED;
    ev.message = text;
    if (was_priority != PRIORITY_UNSPECIFIED && was_priority != job->priority) {
        snprintf(text, sizeof text, "priority %s → %s by %s",
                 enum_name(&priority_names, (int)was_priority),
                 enum_name(&priority_names, (int)job->priority), user);
        engine_event(eng, job, &ev);
    }
    const char *now = job->display_is_name || !job->display_name ? job->name : job->display_name;
    if (was_display && strcmp(was_display, now) != 0) {
        snprintf(text, sizeof text, "display name '%s' → '%s' by %s", was_display, now, user);
        engine_event(eng, job, &ev);
    }
}

int engine_job_update(struct engine *eng, const char *user, const char *ws, const char *name,
                      const char *update_mask, const char *body, size_t body_len, json_t **reply,
                      struct api_error *err)
{
    struct ejob *job;
    int rc = find_job_to_change(eng, user, ws, name, &job, err);
    if (rc)
        return rc;
    json_t *root = json_loadb(body, body_len, 0, NULL);
    if (!json_is_object(root)) {
        json_decref(root);
        return api_error_set(err, 400, "InvalidJSON", "", "the body must be a TrainingJob object");
    }
    struct jobspec patch;
    jobspec_init(&patch);
    struct findings fs = FINDINGS_INIT;
    jobspec_from_json(root, JOBSPEC_LENIENT, &patch, &fs);
    json_decref(root);
    bool want_name = false, want_prio = false;
    const char *m = update_mask ? update_mask : "";
    while (*m) {
        size_t n = strcspn(m, ",");
        if (n == 12 && strncmp(m, "display_name", n) == 0)
            want_name = true;
        else if (n == 19 && strncmp(m, "scheduling.priority", n) == 0)
            want_prio = true;
        else {
            rc = api_error_set(err, 400, "InvalidArgument", "update_mask",
                               "'%.*s' cannot be updated; only display_name and "
                               "scheduling.priority",
                               (int)n, m);
            goto out;
        }
        m += n + (m[n] == ',');
    }
    if (!want_name && !want_prio) {
        rc = api_error_set(err, 400, "InvalidArgument", "update_mask",
                           "name the fields to update: display_name, scheduling.priority");
        goto out;
    }
    char buf[200];
    if (want_name) {
        const char *bad = patch.display_name
                              ? validate_display_name(patch.display_name, buf, sizeof buf)
                              : "required";
        if (bad) {
            rc = api_error_set(err, 400, "InvalidField", "display_name", "display_name: %s", bad);
            goto out;
        }
    }
    if (want_prio) {
        enum priority p = patch.scheduling.priority;
        if (p == PRIORITY_UNSPECIFIED) {
            rc = api_error_set(err, 400, "InvalidField", "scheduling.priority",
                               "scheduling.priority: required: NORMAL, HIGH or HIGHEST");
            goto out;
        }
        enum member_role role = config_role(&eng->cfg, ws, user);
        if (p != PRIORITY_NORMAL && !member_role_raises_priority(role)) {
            rc = api_error_set(err, 403, "PermissionDenied", "scheduling.priority",
                               "scheduling.priority: %s needs workspace owner rights; %s is a "
                               "member of %s",
                               enum_name(&priority_names, (int)p), user, ws);
            goto out;
        }
    }
    /* Written as it will be first: a change the disk refuses is not made (503). */
    enum priority was_priority = job->priority;
    char *was_display = job->display_name;
    char *was_display_text =
        xstrdup(job->display_is_name || !job->display_name ? job->name : job->display_name);
    bool was_display_is_name = job->display_is_name;
    if (want_prio)
        job->priority = patch.scheduling.priority;
    if (want_name) {
        job->display_is_name = patch.display_name && strcmp(patch.display_name, job->name) == 0;
        job->display_name = job->display_is_name ? NULL : xstrdup(patch.display_name);
    }
    struct strbuf why = STRBUF_INIT;
    if (engine_write_record(eng, job, &why) != 0) {
        job->priority = was_priority;
        if (want_name) {
            free(job->display_name);
            job->display_name = was_display;
            job->display_is_name = was_display_is_name;
        }
        free(was_display_text);
        rc = not_saved(eng, job, "update", &why, err);
        goto out;
    }
    strbuf_free(&why);
    if (want_name)
        free(was_display);
    stamp(&ejob_spec(eng, job)->update_time);
    engine_save(eng, job);
    engine_publish(eng, job);
    note_update(eng, job, user, want_prio ? was_priority : PRIORITY_UNSPECIFIED,
                want_name ? was_display_text : NULL);
    free(was_display_text);
    if (want_prio)
        lifecycle_schedule_soon(eng);
    *reply = job_json(job);
    rc = 200;
out:
    findings_free(&fs);
    jobspec_free(&patch);
    return rc;
}

/* Reads {training_job_names:[…]} (at most MAX_BATCH) into names. */
static int batch_names(const char *body, size_t len, json_t **names, struct api_error *err)
{
    json_t *root = json_loadb(body, len, 0, NULL);
    json_t *list = json_object_get(root, "training_job_names");
    if (!json_is_array(list)) {
        json_decref(root);
        return api_error_set(err, 400, "InvalidArgument", "training_job_names",
                             "expected {\"training_job_names\": [names]}");
    }
    if (json_array_size(list) > MAX_BATCH) {
        json_decref(root);
        return api_error_set(err, 400, "InvalidArgument", "training_job_names",
                             "at most %d names per call", MAX_BATCH);
    }
    *names = json_incref(list);
    json_decref(root);
    return 0;
}

/* What a :batchStop or :batchDelete does to each job it names. */
struct batch_act {
    const char *change; /* as messages name it */
    enum after_stop then;
    const char *why;  /* "stopped by", completed with the user's name */
    const char *done; /* the per-name result */
};

static const struct batch_act stop_act = {"stop", AFTER_STOP_SUSPEND, "stopped by", "STOPPING"};
static const struct batch_act delete_act = {"delete", AFTER_STOP_DELETE, "deleted by", "DELETING"};

/* Whether act changes job (a stop skips a job that has ended or is being deleted). */
static bool batch_acts_on(const struct batch_act *act, const struct ejob *job)
{
    if (act->then == AFTER_STOP_DELETE)
        return true;
    return !job_state_terminal(job->state) && job->after_stop != AFTER_STOP_DELETE;
}

/*
 * Writes every job the batch changes with its stop intent, in one
 * transaction, before any worker is signalled: after a kill at any moment,
 * a restart finishes the stops (their workers' deaths are no faults). 0, or
 * a 503 naming the first job the disk refused, nothing written.
 */
static int batch_intents(struct engine *eng, const char *ws, json_t *names,
                         const struct batch_act *act, const char *act_why, struct api_error *err)
{
    struct strbuf why = STRBUF_INIT;
    struct ejob *refused = NULL, *first = NULL;
    bool ok = true;
    size_t i;
    json_t *v;
    json_array_foreach(names, i, v)
    {
        const char *name = json_string_value(v);
        struct ejob *job = name ? engine_find(eng, ws, name) : NULL;
        if (!ok || job == NULL || !batch_acts_on(act, job))
            continue;
        if (first == NULL) { /* a batch that changes nothing writes nothing */
            first = job;
            if (store_begin(eng->store, &why) != STORE_OK) {
                ok = false;
                continue;
            }
        }
        enum after_stop was = job->after_stop;
        char *was_reason = job->after_stop_reason;
        job->after_stop = act->then;
        job->after_stop_reason = (char *)act_why; /* only read while written */
        int rc = engine_write_record(eng, job, &why);
        job->after_stop = was;
        job->after_stop_reason = was_reason;
        if (rc != 0) {
            ok = false;
            refused = job;
        }
    }
    if (ok && first && store_commit(eng->store, &why) != STORE_OK)
        ok = false;
    if (ok) {
        strbuf_free(&why);
        return 0;
    }
    store_rollback(eng->store);
    /* A write refused names its job; a BEGIN or COMMIT refused, the first job it held. */
    return not_saved(eng, refused ? refused : first, act->change, &why, err);
}

/* :batchStop and :batchDelete: {training_job_names:[…]} → {results:[{name, result}]}. */
static int batch(struct engine *eng, const char *user, const char *ws, const char *body,
                 size_t body_len, const struct batch_act *act, json_t **reply,
                 struct api_error *err)
{
    json_t *names = NULL;
    int rc = member_check(eng, user, ws, err);
    if (rc || (rc = batch_names(body, body_len, &names, err)))
        return rc;
    size_t i;
    json_t *v;
    /* All or nothing: one job the caller may not change refuses the whole call. */
    json_array_foreach(names, i, v)
    {
        const char *name = json_string_value(v);
        struct ejob *job = name ? engine_find(eng, ws, name) : NULL;
        if (job && (rc = change_check(eng, user, ws, job, err)) != 0) {
            json_decref(names);
            return rc;
        }
    }
    /* Who asked, named in the job's events and its reason ("stopped by alice"). */
    char *why = xasprintf("%s %s", act->why, user);
    /* All or nothing on disk too: every intent is saved, or the call is refused (503). */
    if ((rc = batch_intents(eng, ws, names, act, why, err)) != 0) {
        json_decref(names);
        free(why);
        return rc;
    }
    json_t *results = json_array();
    json_array_foreach(names, i, v)
    {
        const char *name = json_string_value(v);
        struct ejob *job = name ? engine_find(eng, ws, name) : NULL;
        const char *outcome = "NOT_FOUND";
        if (job && batch_acts_on(act, job)) {
            lifecycle_stop(eng, job, act->then, why);
            outcome = act->done;
        } else if (job) {
            outcome = "SKIPPED";
        }
        json_array_append_new(results, json_pack("{s:s?, s:s}", "name", name, "result", outcome));
    }
    json_decref(names);
    free(why);
    *reply = json_pack("{s:o}", "results", results);
    return 200;
}

int engine_jobs_stop(struct engine *eng, const char *user, const char *ws, const char *body,
                     size_t body_len, json_t **reply, struct api_error *err)
{
    return batch(eng, user, ws, body, body_len, &stop_act, reply, err);
}

int engine_jobs_delete(struct engine *eng, const char *user, const char *ws, const char *body,
                       size_t body_len, json_t **reply, struct api_error *err)
{
    return batch(eng, user, ws, body, body_len, &delete_act, reply, err);
}

int engine_job_start(struct engine *eng, const char *user, const char *ws, const char *name,
                     json_t **reply, struct api_error *err)
{
    struct ejob *job;
    int rc = find_job_to_change(eng, user, ws, name, &job, err);
    if (rc)
        return rc;
    if (job->state != JOB_STATE_SUSPENDED)
        return api_error_set(err, 409, "InvalidState", "state",
                             "job '%s' is %s; only a stopped (SUSPENDED) job can be started", name,
                             enum_name(&job_state_names, (int)job->state));
    /* Written as it will be first: a start the disk refuses is not made (503). */
    enum job_state was_state = job->state;
    int was_loops = job->crash_loops;
    int64_t was_until = job->backoff_until_ms;
    job->state = JOB_STATE_QUEUEING;
    job->crash_loops = 0;
    job->backoff_until_ms = 0;
    struct strbuf why = STRBUF_INIT;
    rc = engine_write_record(eng, job, &why);
    job->state = was_state;
    job->crash_loops = was_loops;
    job->backoff_until_ms = was_until;
    if (rc != 0)
        return not_saved(eng, job, "start", &why, err);
    strbuf_free(&why);
    for (size_t i = 0; i < job->worker_count; i++) {
        job->workers[i].phase = WORKER_PENDING;
        job->workers[i].has_exit_code = false;
    }
    /* A person starting it again ends a crash loop's back-off. */
    job->crash_loops = 0;
    job->backoff_until_ms = 0;
    free(job->backoff_worker);
    job->backoff_worker = NULL;
    struct job_event ev = {0};
    ev.kind = EVENT_STARTED;
    char text[160];
    snprintf(text, sizeof text, "started again by %s", user);
    ev.message = text;
    engine_event(eng, job, &ev);
    engine_set_state(eng, job, JOB_STATE_QUEUEING, "waiting for the scheduler");
    lifecycle_schedule_soon(eng);
    *reply = job_json(job);
    return 200;
}

/* The "node" of a :markNode body: a node of this engine's config, or a 400 naming node. */
static int marked_node(struct engine *eng, const char *body, size_t body_len, const char **node,
                       json_t **root, struct api_error *err)
{
    if (body_len > MAX_BODY)
        return api_error_set(err, 413, "TooLarge", "", "request body over %u bytes", MAX_BODY);
    *root = json_loadb(body ? body : "", body_len, 0, NULL);
    *node = json_string_value(json_object_get(*root, "node"));
    if (*node == NULL || **node == '\0')
        return api_error_set(err, 400, "InvalidArgument", "node",
                             "node: required: expected {\"node\": \"NODE\"}");
    if (config_node(&eng->cfg, *node) == NULL)
        return api_error_set(err, 400, "InvalidField", "node",
                             "node: '%s' is not a node of this engine", *node);
    return 0;
}

/* Writes job as it is with node marked for it (memory is left as it was); 0 or -1 with why. */
static int write_marked(struct engine *eng, struct ejob *job, const char *node, struct strbuf *why)
{
    for (size_t i = 0; i < job->excluded_count; i++)
        if (strcmp(job->excluded[i], node) == 0)
            return engine_write_record(eng, job, why);
    job->excluded = xreallocarray(job->excluded, job->excluded_count + 1, sizeof *job->excluded);
    job->excluded[job->excluded_count++] = (char *)node; /* only read while written */
    int rc = engine_write_record(eng, job, why);
    job->excluded_count--;
    return rc;
}

/*
 * After a node mark was added or lifted and written: the job's update time,
 * its record, its watchers, and a scheduling pass (a waiting job's reason
 * may name the node, or it may now be placed there). The reply is the job.
 */
static int mark_changed(struct engine *eng, struct ejob *job, json_t **reply)
{
    stamp(&ejob_spec(eng, job)->update_time);
    engine_save(eng, job);
    engine_publish(eng, job);
    lifecycle_schedule_soon(eng);
    *reply = job_json(job);
    return 200;
}

int engine_job_mark_node(struct engine *eng, const char *user, const char *ws, const char *name,
                         const char *body, size_t body_len, json_t **reply, struct api_error *err)
{
    struct ejob *job;
    json_t *root = NULL;
    const char *node = NULL;
    int rc = find_job_to_change(eng, user, ws, name, &job, err);
    if (rc == 0)
        rc = marked_node(eng, body, body_len, &node, &root, err);
    struct strbuf why = STRBUF_INIT;
    if (rc == 0 && write_marked(eng, job, node, &why) != 0)
        rc = not_saved(eng, job, "node mark", &why, err);
    strbuf_free(&why);
    if (rc == 0) {
        lifecycle_mark_node(eng, job, node, user);
        rc = mark_changed(eng, job, reply);
    }
    json_decref(root);
    return rc;
}

/* Writes job as it is without node in its marks (memory is left as it was); 0 or -1 with why. */
static int write_unmarked(struct engine *eng, struct ejob *job, size_t at, struct strbuf *why)
{
    char *node = job->excluded[at];
    job->excluded[at] = job->excluded[job->excluded_count - 1];
    job->excluded_count--;
    int rc = engine_write_record(eng, job, why);
    job->excluded_count++;
    job->excluded[job->excluded_count - 1] = job->excluded[at];
    job->excluded[at] = node;
    return rc;
}

int engine_job_unmark_node(struct engine *eng, const char *user, const char *ws, const char *name,
                           const char *body, size_t body_len, json_t **reply, struct api_error *err)
{
    struct ejob *job;
    json_t *root = NULL;
    const char *node = NULL;
    size_t at = 0;
    int rc = find_job_to_change(eng, user, ws, name, &job, err);
    if (rc == 0)
        rc = marked_node(eng, body, body_len, &node, &root, err);
    if (rc == 0) {
        while (at < job->excluded_count && strcmp(job->excluded[at], node) != 0)
            at++;
        if (at == job->excluded_count)
            rc =
                api_error_set(err, 400, "InvalidField", "node",
                              "node: '%s' is not marked unschedulable for job %s", node, job->name);
    }
    struct strbuf why = STRBUF_INIT;
    if (rc == 0 && write_unmarked(eng, job, at, &why) != 0)
        rc = not_saved(eng, job, "node unmark", &why, err);
    strbuf_free(&why);
    if (rc == 0) {
        lifecycle_unmark_node(eng, job, node, user);
        rc = mark_changed(eng, job, reply);
    }
    json_decref(root);
    return rc;
}

/* ---- the engine itself -------------------------------------------------- */

int engine_about(struct engine *eng, json_t **reply, struct api_error *err)
{
    (void)err;
    *reply = json_pack("{s:s,s:I,s:s}", "user", eng->cfg.engine_user, "pid", (json_int_t)getpid(),
                       "state_dir", eng->state_dir);
    return 200;
}

static void stop_now(void *ctx)
{
    loop_stop(ctx);
}

int engine_stop_request(struct engine *eng, const char *user, json_t **reply, struct api_error *err)
{
    if (strcmp(user, eng->cfg.engine_user) != 0)
        return api_error_set(err, 403, "PermissionDenied", "",
                             "only %s, who runs this engine, may stop it (you are %s)",
                             eng->cfg.engine_user, user);
    if (eng->stopped_by == NULL) {
        struct passwd *pw = getpwnam(user);
        eng->stopped_by = pw ? stopmark_who(pw->pw_uid) : xstrdup(user);
        engine_log("stop asked by %s", eng->stopped_by);
        /* A moment for the reply to leave before the server goes. */
        loop_add_timer(eng->loop, 200, stop_now, eng->loop);
    }
    *reply = json_pack("{s:s,s:s}", "state", "STOPPING", "stopped_by", eng->stopped_by);
    return 200;
}

const char *engine_stopped_by(const struct engine *eng)
{
    return eng ? eng->stopped_by : NULL;
}
