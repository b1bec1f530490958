/*
 * ejobspec: a job's whole spec on demand (issue 14: trainjobd with 50,000
 * jobs in under 60 MiB). struct ejob keeps a compact record — what lookups,
 * lists, filters and scheduling passes read — and its whole struct jobspec
 * only while a request or a transition needs it: ejob_spec() decodes it from
 * the job as last saved (or as saved in an open batch), and it is dropped
 * again once the job is saved and nothing of it runs, on the next loop turn
 * (a timer) or at once where the caller says it holds no pointer into it
 * (ejob_spec_done: the scheduling pass). Texts many jobs share are kept once:
 * workspaces, pools and creators per engine (engine_intern), waiting reasons
 * counted (ejob_share_text).
 *
 * Called by record.c (saves, snapshots, loading), requests.c (creation,
 * PATCH), lifecycle.c (starts), schedpass.c, worker_ends.c (fault
 * decisions), scalars.c and engine.c (loading, closing).
 */
#include "engine/engine.h" /* the core's interface; its private half is state.h */

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "api/finding.h"
#include "api/jobspec_json.h"
#include "engine/shown.h"
#include "engine/state.h"
#include "util/hmap.h"
#include "util/loop.h"
#include "util/xalloc.h"

static void drop_specs_timer(void *ctx);

static bool same_text(const void *item, const void *key)
{
    return strcmp(item, key) == 0;
}

const char *engine_intern(struct engine *eng, const char *s)
{
    if (s == NULL)
        return NULL;
    uint64_t h = hmap_hash(s, strlen(s));
    char *have = hmap_get(&eng->interned, h, same_text, s);
    if (have == NULL) {
        have = xstrdup(s);
        hmap_put(&eng->interned, h, have);
    }
    return have;
}

void engine_intern_free(struct engine *eng)
{
    for (size_t i = 0; i < eng->interned.cap; i++)
        free(eng->interned.slots[i].item);
    hmap_free(&eng->interned);
}

/*
 * The shared texts: one counted copy per distinct text, whatever the number
 * of jobs holding it. Process-wide (jobs are freed without their engine);
 * the engine's loop is its only user.
 */
struct shared_text {
    size_t refs;
    char text[];
};
static struct hmap shared_texts;

static bool same_shared(const void *item, const void *key)
{
    return strcmp(((const struct shared_text *)item)->text, key) == 0;
}

const char *ejob_share_text(const char *s)
{
    if (s == NULL || *s == '\0')
        return NULL;
    size_t len = strlen(s);
    uint64_t h = hmap_hash(s, len);
    struct shared_text *t = hmap_get(&shared_texts, h, same_shared, s);
    if (t == NULL) {
        t = xmalloc(sizeof *t + len + 1);
        t->refs = 0;
        memcpy(t->text, s, len + 1);
        hmap_put(&shared_texts, h, t);
    }
    t->refs++;
    return t->text;
}

void ejob_unshare_text(const char *shared)
{
    if (shared == NULL)
        return;
    struct shared_text *t = (struct shared_text *)(shared - offsetof(struct shared_text, text));
    if (--t->refs > 0)
        return;
    hmap_remove(&shared_texts, hmap_hash(t->text, strlen(t->text)), t);
    free(t);
    if (shared_texts.count == 0)
        hmap_free(&shared_texts);
}

/* Replaces *field (freed) with a copy of value unless they say the same. */
static void set_text(char **field, const char *value)
{
    if ((*field == NULL && value == NULL) || (*field && value && strcmp(*field, value) == 0))
        return;
    free(*field);
    *field = value ? xstrdup(value) : NULL;
}

void ejob_set_hot(struct engine *eng, struct ejob *job, struct jobspec *full)
{
    job->full_ = full;
    set_text(&job->uid, full->uid);
    set_text(&job->name, full->name);
    job->ws = engine_intern(eng, full->workspace_name);
    job->pool = engine_intern(eng, full->resource_pool.name);
    job->creator = engine_intern(eng, full->ownership.user_name);
    job->display_is_name =
        full->display_name && full->name && strcmp(full->display_name, full->name) == 0;
    set_text(&job->display_name, job->display_is_name ? NULL : full->display_name);
    const char *message = ejob_share_text(full->state_message);
    ejob_unshare_text(job->state_message);
    job->state_message = message;
    job->state = full->state;
    job->priority = full->scheduling.priority;
    job->scoring = full->scheduling.scoring_strategy;
    job->idle = jobspec_is_idle(full);
    job->preemptible = !full->scheduling.has_preemptible || full->scheduling.preemptible;
    job->replicas = jobspec_replicas(full);
}

/* The compact fields that change (they are the truth) into the whole spec. */
static void sync_full(struct ejob *job)
{
    struct jobspec *s = job->full_;
    s->state = job->state;
    set_text(&s->state_message, job->state_message);
    s->scheduling.priority = job->priority;
    set_text(&s->display_name, job->display_is_name ? job->name : job->display_name);
}

struct jobspec *ejob_spec(struct engine *eng, struct ejob *job)
{
    if (job->full_ == NULL) {
        struct jobspec *s = xmalloc(sizeof *s);
        jobspec_init(s);
        /* What memory holds: saved in an open (or failed) batch, else as last saved. */
        char *text = shown_text(job->pending ? job->pending->job : job->shown_job);
        json_t *saved = text ? json_loads(text, 0, NULL) : NULL;
        free(text);
        struct findings fs = FINDINGS_INIT;
        if (saved)
            jobspec_from_json(saved, JOBSPEC_LENIENT, s, &fs);
        findings_free(&fs);
        json_decref(saved);
        if (s->uid == NULL) /* never saved: what the compact record knows */
            s->uid = xstrdup(job->uid);
        if (s->name == NULL)
            s->name = xstrdup(job->name);
        if (s->workspace_name == NULL)
            s->workspace_name = xstrdup(job->ws);
        job->full_ = s;
    }
    if (job->loaded_at == 0) {
        if (eng->spec_loaded_count == eng->spec_loaded_cap) {
            eng->spec_loaded_cap = eng->spec_loaded_cap ? eng->spec_loaded_cap * 2 : 16;
            eng->spec_loaded =
                xreallocarray(eng->spec_loaded, eng->spec_loaded_cap, sizeof *eng->spec_loaded);
        }
        eng->spec_loaded[eng->spec_loaded_count++] = job;
        job->loaded_at = (uint32_t)eng->spec_loaded_count;
    }
    /* Looked at again after this turn (a running job's is kept until it has ended and is saved). */
    if (eng->drop_timer == 0 && eng->loop)
        eng->drop_timer = loop_add_timer(eng->loop, 0, drop_specs_timer, eng);
    sync_full(job);
    return job->full_;
}

/* May job's whole spec go (the job as last saved says all of it)? */
static bool spec_droppable(const struct ejob *job)
{
    if (job->unsaved || job_has_live_workers(job))
        return false;
    return job->in_batch ? job->pending != NULL : job->shown_job != NULL;
}

static void drop_spec(struct ejob *job)
{
    jobspec_free(job->full_);
    free(job->full_);
    job->full_ = NULL;
}

void ejob_spec_done(struct engine *eng, struct ejob *job)
{
    if (job->full_ && spec_droppable(job)) {
        drop_spec(job);
        ejob_unlist(eng, job);
    }
}

void engine_drop_specs(struct engine *eng)
{
    size_t kept = 0;
    for (size_t i = 0; i < eng->spec_loaded_count; i++) {
        struct ejob *job = eng->spec_loaded[i];
        if (!spec_droppable(job)) {
            eng->spec_loaded[kept++] = job; /* a retry or its end drops it later */
            job->loaded_at = (uint32_t)kept;
            continue;
        }
        drop_spec(job);
        job->loaded_at = 0;
    }
    eng->spec_loaded_count = kept;
}

static void drop_specs_timer(void *ctx)
{
    struct engine *eng = ctx;
    eng->drop_timer = 0;
    /*
     * A pass is due this turn (a POST asked for one): it will read the specs
     * a create just decoded (the new job's reason), so they go after it —
     * the pass's timer is always 0 ms, and it clears it when it runs.
     */
    if (eng->sched_timer != 0) {
        eng->drop_timer = loop_add_timer(eng->loop, 0, drop_specs_timer, eng);
        return;
    }
    engine_drop_specs(eng);
}

void ejob_unlist(struct engine *eng, struct ejob *job)
{
    if (job->loaded_at == 0)
        return;
    /* O(1): a pass drops thousands one by one (ejob_spec_done). */
    size_t i = job->loaded_at - 1;
    struct ejob *last = eng->spec_loaded[--eng->spec_loaded_count];
    eng->spec_loaded[i] = last;
    last->loaded_at = (uint32_t)(i + 1);
    job->loaded_at = 0;
}
