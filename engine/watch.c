/*
 * watch: trainjobd's watch streams — the JOB, EVENT and DELETED lines sent
 * to the watchers of a workspace, a new watcher's first sync written as it
 * drains, and pruning the watchers that left. Called by the routes
 * (engine_watch*), record.c (broadcasts of saves and events) and lifecycle.c
 * (engine_publish).
 */
#include "engine/engine.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/jobspec_json.h"
#include "engine/shown.h"
#include "engine/state.h"
#include "engine/stream.h"
#include "util/loop.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

/* ---- watch streams and events ----------------------------------------- */

/* The view a watch stream asked for: kept as its stream offset, which a watch does not use. */
static enum job_view watcher_view(const struct stream *s)
{
    return stream_offset(s) == JOB_VIEW_BASIC ? JOB_VIEW_BASIC : JOB_VIEW_FULL;
}

/* Does a watcher of ws want its JOB messages in view? */
static bool watched_in(const struct engine *eng, const char *ws, enum job_view view)
{
    for (size_t i = 0; i < eng->watcher_count; i++)
        if (watcher_view(eng->watchers[i]) == view && strcmp(stream_tag(eng->watchers[i]), ws) == 0)
            return true;
    return false;
}

/* Sends line (len bytes, its '\n' included) to the watchers of ws that asked for view (< 0: all).
 */
void broadcast_line(struct engine *eng, const char *ws, int view, const char *line, size_t len)
{
    engine_prune_watchers(eng);
    for (size_t i = 0; i < eng->watcher_count; i++) {
        struct stream *s = eng->watchers[i];
        if (strcmp(stream_tag(s), ws) == 0 && (view < 0 || (int)watcher_view(s) == view))
            stream_write(s, line, len);
    }
}

/*
 * Sends msg (taken) as one line to the watchers of ws that asked for view
 * (< 0: all of them); inside a batch it waits for the commit (it may tell of
 * what is saved there).
 */
static void broadcast_view(struct engine *eng, const char *ws, int view, json_t *msg)
{
    char *text = json_dumps(msg, JSON_COMPACT);
    json_decref(msg);
    if (text == NULL)
        xalloc_die();
    char *line = xasprintf("%s\n", text);
    free(text);
    if (eng->batch_depth > 0) {
        eng->batch_lines =
            xreallocarray(eng->batch_lines, eng->batch_line_count + 1, sizeof *eng->batch_lines);
        eng->batch_lines[eng->batch_line_count++] = (struct batch_line){xstrdup(ws), line, view};
        return;
    }
    broadcast_line(eng, ws, view, line, strlen(line));
    free(line);
}

void broadcast(struct engine *eng, const char *ws, json_t *msg)
{
    broadcast_view(eng, ws, -1, msg);
}

/*
 * Appends a watch stream's JOB line for the job as last saved: the whole job
 * with its workers, or its summary alone.
 */
static void job_message(const struct ejob *job, enum job_view view, struct strbuf *out)
{
    if (view == JOB_VIEW_BASIC) {
        strbuf_adds(out, "{\"type\":\"JOB\",\"job\":");
        shown_append(job->shown_summary, out);
        strbuf_adds(out, "}\n");
        return;
    }
    /* Spliced from the saved texts: no JSON is built or parsed per message. */
    strbuf_adds(out, "{\"type\":\"JOB\",\"job\":");
    if (job->shown_job)
        shown_append(job->shown_job, out);
    else
        strbuf_adds(out, "{}");
    strbuf_adds(out, ",\"workers\":");
    if (job->shown_workers)
        shown_append(job->shown_workers, out);
    else
        strbuf_adds(out, "[]");
    strbuf_adds(out, "}\n");
}

/* Watchers hear the job as saved; a job whose save failed or waits for its batch is not sent. */
void engine_publish(struct engine *eng, struct ejob *job)
{
    if (eng->watcher_count == 0 || !engine_job_saved(eng, job) || job->shown_job == NULL)
        return;
    for (int v = JOB_VIEW_FULL; v <= JOB_VIEW_BASIC; v++) {
        if (!watched_in(eng, job->ws, (enum job_view)v))
            continue;
        struct strbuf line = STRBUF_INIT;
        job_message(job, (enum job_view)v, &line);
        broadcast_line(eng, job->ws, v, line.buf, line.len);
        strbuf_free(&line);
    }
}

/*
 * A watch stream's first sync, written as the client drains it: the jobs
 * of the workspace in seq order (eng->jobs is kept in that order), each as
 * it is when its line is written, then SYNCED. A job created meanwhile has
 * a higher seq and is sent too; one deleted meanwhile is simply not found.
 */
struct watch_sync {
    struct engine *eng;
    char *ws;
    enum job_view view;
    struct strbuf line; /* one JOB line, reused */
    uint64_t last_seq;  /* the jobs up to this one are sent */
};

#define SYNC_BATCH_BYTES (256u << 10)

static void sync_free(void *ctx)
{
    struct watch_sync *ws = ctx;
    strbuf_free(&ws->line);
    free(ws->ws);
    free(ws);
}

static void sync_refill(void *ctx, struct stream *s)
{
    struct watch_sync *sync = ctx;
    struct engine *eng = sync->eng;
    /* The first job after last_seq: a binary search, the array being in seq order. */
    size_t lo = 0, hi = eng->job_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (eng->jobs[mid]->seq <= sync->last_seq)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t written = 0;
    for (size_t i = lo; i < eng->job_count && written < SYNC_BATCH_BYTES; i++) {
        struct ejob *job = eng->jobs[i];
        sync->last_seq = job->seq;
        if (strcmp(job->ws, sync->ws) != 0)
            continue;
        if (job->shown_job == NULL)
            continue;
        strbuf_reset(&sync->line);
        job_message(job, sync->view, &sync->line);
        stream_write(s, sync->line.buf, sync->line.len);
        written += sync->line.len;
    }
    if (written < SYNC_BATCH_BYTES) {
        stream_write(s, "{\"type\":\"SYNCED\"}\n", 18);
        stream_set_refill(s, NULL, NULL, NULL); /* frees sync: nothing after this */
    }
}

/*
 * A first sync grows each watcher's buffers to a few hundred KB; freed, that
 * memory stays in the heap (glibc returns only its top). Once per loop turn in
 * which watchers left, the free pages go back to the system.
 */
static void trim_heap(void *ctx)
{
    struct engine *eng = ctx;
    eng->trim_timer = 0;
    malloc_trim(0);
}

void engine_prune_watchers(struct engine *eng)
{
    size_t before = eng->watcher_count;
    for (size_t i = 0; i < eng->watcher_count;) {
        struct stream *s = eng->watchers[i];
        if (stream_abandoned(s) || stream_closed(s)) {
            stream_unref(s);
            eng->watchers[i] = eng->watchers[--eng->watcher_count];
            continue;
        }
        i++;
    }
    if (eng->watcher_count == before)
        return;
    engine_log("watch: %zu watchers", eng->watcher_count);
    engine_trim_soon(eng);
}

void engine_trim_soon(struct engine *eng)
{
    if (eng->trim_timer == 0 && eng->loop)
        eng->trim_timer = loop_add_timer(eng->loop, 0, trim_heap, eng);
}

int engine_watch(struct engine *eng, const char *user, const char *ws, struct stream **out,
                 struct api_error *err)
{
    return engine_watch_view(eng, user, ws, JOB_VIEW_FULL, out, err);
}

int engine_watch_view(struct engine *eng, const char *user, const char *ws, enum job_view view,
                      struct stream **out, struct api_error *err)
{
    int rc = member_check(eng, user, ws, err);
    if (rc)
        return rc;
    struct stream *s = stream_new();
    stream_set_tag(s, ws, view); /* a watcher's offset is its view (see watcher_view) */
    struct watch_sync *sync = xcalloc(1, sizeof *sync);
    sync->eng = eng;
    sync->ws = xstrdup(ws);
    sync->view = view;
    stream_set_refill(s, sync_refill, sync, sync_free);
    eng->watchers = xreallocarray(eng->watchers, eng->watcher_count + 1, sizeof *eng->watchers);
    eng->watchers[eng->watcher_count++] = stream_ref(s);
    *out = s;
    return 200;
}
