/*
 * metrics_pane: TensorBoard curves on the job screen; see metrics_pane.h.
 * This file: the pane's life and its following (calls, pages, timers);
 * the model is metrics_pane_model.c, drawing metrics_pane_draw.c, keys
 * metrics_pane_keys.c, their shared structs metrics_pane_priv.h.
 *
 * Owns the metricset the pages feed, the tag list (sorted, each with its
 * sanitized name and whether it is selected), the runs, the filter prompt,
 * the call in flight and the poll timer, and one chart per charted tag
 * (kept between frames, so a frame after new points only redoes the series
 * that grew). A chart's points are arrays of the pane's, rebuilt from the
 * metricset when the series saw new points: the chart holds them by pointer.
 */
#include "tui/metrics_pane.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api/backend.h"
#include "api/metricset.h"
#include "api/scalarpage.h"
#include "tui/metrics_pane_priv.h"
#include "tui/prompt.h"
#include "tui/term.h"
#include "util/loop.h"
#include "util/strbuf.h"
#include "util/utf8.h"
#include "util/xalloc.h"
#include "widgets/chart.h"

void mp_tell(struct metrics_pane *p)
{
    p->dirty = true;
    if (p->notify)
        p->notify(p->notify_arg);
}

struct metrics_pane *metrics_pane_new(void)
{
    struct metrics_pane *p = xcalloc(1, sizeof *p);
    p->ms = metricset_new(0, 0);
    p->filter = xstrdup("");
    p->smoothing = 0.6;
    p->delay = -1;
    p->interval = METRICS_POLL_MIN_MS;
    p->want_once = true; /* the first page, whatever the job's state */
    p->dirty = true;
    return p;
}

void mp_slot_reset(struct slot *sl)
{
    for (size_t i = 0; i < sl->nseries; i++)
        free(sl->series[i].pts);
    memset(sl->series, 0, sizeof sl->series);
    sl->nseries = sl->runs_seen = sl->hidden = 0;
    free(sl->tag);
    sl->tag = NULL;
    if (sl->chart)
        chart_clear(sl->chart);
}

void mp_unschedule(struct metrics_pane *p)
{
    if (p->timer && p->lp)
        loop_cancel(p->lp, p->timer);
    p->timer = 0;
    p->delay = -1;
}

/* Forgets every point (a cursor the backend refused: read again from the start). */
void mp_clear_data(struct metrics_pane *p)
{
    for (size_t i = 0; i < MAX_CHARTS; i++)
        mp_slot_reset(&p->slots[i]);
    metricset_free(p->ms);
    p->ms = metricset_new(0, 0);
    p->known_series = 0;
    for (size_t i = 0; i < p->ntags; i++) {
        free(p->tags[i].name);
        free(p->tags[i].shown);
    }
    free(p->tags);
    p->tags = NULL;
    p->ntags = p->tags_cap = 0;
    for (size_t i = 0; i < p->nruns; i++)
        free(p->runs[i]);
    free(p->runs);
    p->runs = NULL;
    p->nruns = p->runs_cap = 0;
    free(p->vis);
    p->vis = NULL;
    p->nvis = p->cursor = p->top = 0;
    free(p->since);
    p->since = NULL;
}

void metrics_pane_free(struct metrics_pane *p)
{
    if (!p)
        return;
    if (p->call)
        backend_call_cancel(p->call);
    mp_close_push(p);
    scalar_stream_free(&p->ss);
    mp_unschedule(p);
    mp_clear_data(p);
    for (size_t i = 0; i < MAX_CHARTS; i++)
        chart_free(p->slots[i].chart);
    metricset_free(p->ms);
    prompt_free(p->prompt);
    free(p->filter);
    free(p->log_path);
    free(p->message);
    free(p->job);
    free(p);
}

void metrics_pane_set_style(struct metrics_pane *p, const struct term *t)
{
    if (p->t != t)
        p->dirty = true;
    p->t = t;
}

void metrics_pane_set_notify(struct metrics_pane *p, metrics_pane_notify_fn fn, void *arg)
{
    p->notify = fn;
    p->notify_arg = arg;
}

/* ---- following --------------------------------------------------------------- */

static void on_timer(void *ctx)
{
    struct metrics_pane *p = ctx;
    p->timer = 0;
    p->delay = -1;
    mp_poll_now(p);
}

/* Does the pane follow through the engine's push stream now (rather than pages on a timer)? */
static bool pushing(const struct metrics_pane *p)
{
    return p->live && p->b && p->job && !p->no_push && !p->push_ended;
}

/*
 * Arms the timer for what comes next: while the job runs on a backend
 * with the push stream, only to open it (at once, or after the backoff
 * when it dropped); otherwise, as pages are polled: at once for a page cut short or one
 * wanted (first, last, asked for), the interval while the job runs, nothing
 * otherwise. A timer already armed for the interval is left alone, so a
 * burst of store changes does not push the next page away.
 */
void mp_plan(struct metrics_pane *p)
{
    int64_t want = -1;
    if ((p->stopped || !p->visible) && p->push)
        mp_close_push(p); /* a hidden pane asks nothing */
    if (!p->stopped && p->visible && !p->call && !p->push) {
        if (pushing(p))
            want = p->retry ? p->interval : 0; /* open the stream (again) */
        else if (p->more || p->want_once)
            want = 0;
        else if (p->live)
            want = p->interval;
    }
    if (want < 0) {
        mp_unschedule(p);
        return;
    }
    if (p->delay >= 0 && (want != 0 || p->delay == 0))
        return;
    mp_unschedule(p);
    p->delay = want;
    if (p->lp)
        p->timer = loop_add_timer(p->lp, want, on_timer, p);
}

static void on_reply(void *ctx, struct backend_reply *r)
{
    struct metrics_pane *p = ctx;
    p->call = NULL;
    if (r->status == BACKEND_OK)
        metrics_pane_feed(p, &r->scalars);
    else
        metrics_pane_fail(p, &r->err);
}

/* Ends the stream; its decoder is left alone (this may run inside its own callback). */
void mp_close_push(struct metrics_pane *p)
{
    if (p->push)
        backend_call_cancel(p->push);
    p->push = NULL;
}

/* A page the engine pushed: as a polled one, and the connection is good. */
static int on_push_page(void *ctx, struct scalar_page *page)
{
    struct metrics_pane *p = ctx;
    p->retry = false;
    metrics_pane_feed(p, page);
    p->interval = METRICS_POLL_MIN_MS; /* the backoff of the next drop starts afresh */
    return 0;
}

static int on_push_data(void *ctx, const char *data, size_t len)
{
    struct metrics_pane *p = ctx;
    struct api_error err;
    memset(&err, 0, sizeof err);
    if (scalar_stream_feed(&p->ss, data, len, on_push_page, p, &err) == 0)
        return p->push == NULL; /* closed by what a page did: stop */
    /* not a stream of pages: said, and the pane polls from here on */
    p->no_push = true;
    metrics_pane_fail(p, &err);
    return 1;
}

/*
 * The stream ended. Its last line says why ("ended": nothing more until
 * the job runs again; "watch_limit", "error": poll instead); a backend
 * without it (501, an older engine) is polled; a drop (the engine
 * restarted) is reconnected after a backoff, from the cursor, so no point
 * comes twice or goes missing.
 */
static void on_push_done(void *ctx, struct backend_reply *r)
{
    struct metrics_pane *p = ctx;
    p->push = NULL;
    if (r->status == BACKEND_OK && !p->ss.end && p->ss.line.len > 0) {
        /* one page with no newline: an engine without the stream answered as to a poll */
        struct api_error e;
        memset(&e, 0, sizeof e);
        p->no_push = true; /* first: the page's plan must not open another stream */
        scalar_stream_feed(&p->ss, "\n", 1, on_push_page, p, &e);
    }
    const char *end = p->ss.end;
    if (end && strcmp(end, "ended") == 0) {
        p->push_ended = true;
        p->want_once = false;
        mp_plan(p);
    } else if (end || p->no_push) {
        p->no_push = true;
        mp_plan(p);
    } else if (r->status == BACKEND_REJECTED &&
               (r->err.status == 501 || r->err.status == 405 || r->err.status == 503 ||
                (r->err.status == 400 && strcmp(r->err.field, "since") != 0))) {
        p->no_push = true;
        mp_plan(p);
    } else if (r->status == BACKEND_REJECTED) {
        metrics_pane_fail(p, &r->err); /* gone, no log path, a cursor to drop */
    } else {
        struct api_error err = r->err;
        if (r->status == BACKEND_OK)
            api_error_set(&err, 0, "Closed", "", "the engine closed the stream");
        p->retry = true;
        metrics_pane_fail(p, &err); /* said, and the backoff doubled */
    }
    scalar_stream_free(&p->ss);
}

void mp_poll_now(struct metrics_pane *p)
{
    mp_unschedule(p);
    if (p->call || p->push || p->stopped || !p->b || !p->job)
        return;
    if (pushing(p)) {
        scalar_stream_free(&p->ss);
        scalar_stream_init(&p->ss, 0);
        struct backend_request rq = {.op = BACKEND_OP_SCALARS,
                                     .name = p->job,
                                     .since = p->since,
                                     .follow = true,
                                     .chart = METRICS_CHART_BUCKETS};
        p->push = backend_send(p->b, p->m, &rq, on_push_done, NULL, on_push_data, p);
        return;
    }
    /* the points the charts keep, in the largest pages: the engine leaves out the rest */
    struct backend_request rq = {.op = BACKEND_OP_SCALARS,
                                 .name = p->job,
                                 .since = p->since,
                                 .limit = SCALARPAGE_MAX_LIMIT,
                                 .chart = METRICS_CHART_BUCKETS};
    p->call = backend_send(p->b, p->m, &rq, on_reply, NULL, NULL, p);
}

void metrics_pane_set_backend(struct metrics_pane *p, struct backend *b, struct http_multi *m,
                              struct loop *lp, const char *job)
{
    if (p->call)
        backend_call_cancel(p->call);
    p->call = NULL;
    mp_close_push(p);
    mp_unschedule(p);
    p->b = b;
    p->m = m;
    p->lp = lp;
    free(p->job);
    p->job = job ? xstrdup(job) : NULL;
    mp_plan(p);
}

/* States in which workers may be writing event files. */
static bool state_live(enum job_state st)
{
    switch (st) {
    case JOB_STATE_CREATING:
    case JOB_STATE_STARTING:
    case JOB_STATE_RUNNING:
    case JOB_STATE_RESTARTING:
    case JOB_STATE_RECOVERING:
    case JOB_STATE_SUSPENDING:
        return true;
    default:
        return false;
    }
}

void metrics_pane_set_job_state(struct metrics_pane *p, enum job_state st)
{
    bool live = state_live(st);
    if (live != p->live) {
        p->want_once = true; /* started: look now; ended: its last points */
        p->interval = METRICS_POLL_MIN_MS;
        p->live = live;
        p->push_ended = p->retry = false;
        if (!live && p->push)
            p->want_once = false; /* the stream brings the last points, then its end */
        p->dirty = true;
    }
    mp_plan(p);
}

void metrics_pane_set_visible(struct metrics_pane *p, bool visible)
{
    if (visible && !p->visible)
        p->want_once = true; /* shown again: what was written meanwhile */
    p->visible = visible;
    mp_plan(p);
}

void metrics_pane_feed(struct metrics_pane *p, const struct scalar_page *page)
{
    mp_unschedule(p); /* a page ends the wait for it */
    p->pages++;
    p->bad += page->bad_crc + page->bad_protobuf;
    if (page->cursor) {
        free(p->since);
        p->since = xstrdup(page->cursor);
    }
    if (page->log_path && (!p->log_path || strcmp(p->log_path, page->log_path) != 0)) {
        free(p->log_path);
        p->log_path = xstrdup(page->log_path);
    }
    for (size_t i = 0; i < page->count; i++) {
        const struct scalar_point *pt = &page->points[i];
        if (!pt->tag)
            continue;
        metricset_add(p->ms, pt->run && *pt->run ? pt->run : ".", pt->tag, pt->step, pt->wall_time,
                      pt->value);
    }
    mp_learn_series(p);
    if (!p->stopped) {
        free(p->message);
        p->message = NULL;
    }
    p->more = page->more;
    if (page->count > 0)
        p->interval = METRICS_POLL_MIN_MS;
    else if ((p->interval *= 2) > METRICS_POLL_MAX_MS)
        p->interval = METRICS_POLL_MAX_MS;
    p->want_once = false;
    mp_tell(p);
    mp_plan(p);
}

void metrics_pane_fail(struct metrics_pane *p, const struct api_error *err)
{
    mp_unschedule(p);
    free(p->message);
    p->more = false;
    p->want_once = false;
    if (err->status == 404 && strcmp(err->reason, "NoTensorBoard") == 0) {
        p->message = xstrdup(METRICS_NO_LOG_PATH);
        p->stopped = true;
    } else if (err->status == 501) {
        p->message = xstrdup("this backend does not serve TensorBoard scalars: `trainjob metrics "
                             "--logdir DIR` reads a directory where the job's event files are "
                             "mounted");
        p->stopped = true;
    } else if (err->status == 400 && strcmp(err->field, "since") == 0) {
        mp_clear_data(p); /* the cursor is no longer good: read from the start */
        p->message = xasprintf("reading the scalars again: %s", err->message);
        p->want_once = true;
    } else {
        p->message = xasprintf("scalars: %s", err->message);
        p->stopped = err->status == 404; /* the job is gone */
        if ((p->interval *= 2) > METRICS_POLL_MAX_MS)
            p->interval = METRICS_POLL_MAX_MS;
    }
    mp_tell(p);
    mp_plan(p);
}
