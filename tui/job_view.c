/*
 * job_view: the job screen; see job_view.h.
 *
 * Owns the four panes (workers, events, logs, metrics), which pane has the
 * focus, which of events / logs / metrics the bottom area shows and whether
 * the Metrics pane takes the whole screen, the calls it started
 * (the event history, the workers of a backend without watch, the job for
 * "describe") and the describe text. The job itself is the store's row,
 * looked up by name whenever the screen is used (a hash lookup) and fed
 * to the panes only when its version moved, so a store change elsewhere
 * costs nothing here.
 *
 * Layout, top to bottom: the summary (3–4 lines and the state history),
 * the workers pane (a title line and the table), the bottom pane (a title
 * line and the events or the log). The focused pane's title is drawn in
 * the selected role and starts with a marker, so it shows without colour.
 */
#include "tui/job_view.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/backend.h"
#include "api/jobfile.h"
#include "tui/app.h"
#include "tui/events_pane.h"
#include "tui/jobfmt.h"
#include "tui/jobstore.h"
#include "tui/logs_pane.h"
#include "tui/metrics_pane.h"
#include "tui/term.h"
#include "tui/workers_pane.h"
#include "util/logring.h"
#include "util/strbuf.h"
#include "util/timefmt.h"
#include "util/utf8.h"
#include "util/xalloc.h"

enum pane { PANE_WORKERS, PANE_EVENTS, PANE_LOGS, PANE_METRICS, PANE_COUNT };

struct job_view {
    struct screen base; /* first: the app holds a struct screen * */
    char *name;
    char *title;               /* "job NAME", sanitized */
    const struct job_row *row; /* the store's, as last looked up; NULL: gone */
    uint64_t row_version;
    struct workers_pane *workers;
    struct events_pane *events;
    struct logs_pane *logs;
    struct metrics_pane *metrics;
    enum pane focus;
    enum pane bottom; /* PANE_EVENTS, PANE_LOGS or PANE_METRICS */
    bool full;        /* the bottom pane (Logs or Metrics) takes the whole screen */
    bool logs_opened; /* the logs pane follows something */
    bool covered;     /* the table was written over (describe, the prompt) last frame */
    struct backend_call *events_call, *workers_call, *get_call;
    uint64_t summaries_asked; /* the row's summaries count when its workers were asked for */
    /* "describe": the job as YAML, one sanitized line each. */
    bool describing;
    char **doc;
    size_t doc_count, doc_top;
    int doc_rows;     /* of the last draw, for paging */
    char *doc_status; /* "fetching…", or why it failed */
};

static struct job_view *view_of(struct screen *s)
{
    return (struct job_view *)s;
}

/* Something to draw: the app draws this screen at the end of the loop turn. */
static void mark_dirty(struct job_view *v)
{
    v->base.dirty = true;
    monitor_dirty(v->base.app);
}

static void fetch_workers(struct job_view *v);
static void fetch_events(struct job_view *v);

/* Looks the row up again; feeds the panes when it changed. */
static void refresh_row(struct job_view *v)
{
    const struct job_row *r = jobstore_find(monitor_store(v->base.app), v->name);
    if (r == v->row && (!r || r->version == v->row_version))
        return;
    v->row = r;
    v->row_version = r ? r->version : 0;
    workers_pane_set_workers(v->workers, r ? &r->workers : NULL, time_now_ms());
    events_pane_set_events(v->events, r ? r->events : NULL, r ? r->event_count : 0);
    if (r)
        logs_pane_workers_changed(v->logs, &r->workers);
    metrics_pane_set_job_state(v->metrics, r ? r->state : JOB_STATE_DELETED);
    v->base.dirty = true;
    if (r && r->workers_stale)
        fetch_workers(v);
    if (r && r->events_stale)
        fetch_events(v);
}

static void on_pane_news(void *arg)
{
    mark_dirty(arg);
}

/* What the bottom area shows; only a shown Metrics pane asks for pages. */
static void set_bottom(struct job_view *v, enum pane p)
{
    if (p != v->bottom)
        v->full = false; /* full screen is the pane's, not the place's */
    v->bottom = p;
    metrics_pane_set_visible(v->metrics, p == PANE_METRICS);
}

static void show_metrics(struct job_view *v)
{
    set_bottom(v, PANE_METRICS);
    v->focus = PANE_METRICS;
}

/* ---- calls ------------------------------------------------------------------ */

static void on_events(void *ctx, struct backend_reply *r)
{
    struct job_view *v = ctx;
    v->events_call = NULL;
    if (r->status == BACKEND_OK)
        jobstore_add_events(monitor_store(v->base.app), v->name, &r->events);
    else if (r->err.status != 501) /* a backend without events: the watch's are all there is */
        monitor_status(v->base.app, true, "events of %s: %s", v->name, r->err.message);
    refresh_row(v);
    mark_dirty(v);
}

static void on_workers(void *ctx, struct backend_reply *r)
{
    struct job_view *v = ctx;
    v->workers_call = NULL;
    if (r->status == BACKEND_OK)
        jobstore_set_workers(monitor_store(v->base.app), v->name, &r->workers);
    refresh_row(v);
    /* Summaries came while the call was out: the workers may have moved on since. */
    if (r->status == BACKEND_OK && v->row && v->row->summaries != v->summaries_asked)
        fetch_workers(v);
    mark_dirty(v);
}

/* Asks for the job's events (merged into the store by id); one call at a time. */
static void fetch_events(struct job_view *v)
{
    if (v->events_call)
        return;
    struct backend_request rq = {.op = BACKEND_OP_EVENTS, .name = v->name};
    v->events_call = backend_send(monitor_backend(v->base.app), monitor_multi(v->base.app), &rq,
                                  on_events, NULL, NULL, v);
}

/*
 * Asks for the job's workers: a watch of summaries (view=BASIC) leaves them
 * out, so the screen that shows them asks when it opens and again after each
 * change the stream reports. One call at a time.
 */
static void fetch_workers(struct job_view *v)
{
    if (v->workers_call)
        return;
    v->summaries_asked = v->row ? v->row->summaries : 0;
    struct backend_request wq = {.op = BACKEND_OP_WORKERS, .name = v->name};
    v->workers_call = backend_send(monitor_backend(v->base.app), monitor_multi(v->base.app), &wq,
                                   on_workers, NULL, NULL, v);
}

static void free_doc(struct job_view *v)
{
    for (size_t i = 0; i < v->doc_count; i++)
        free(v->doc[i]);
    free(v->doc);
    v->doc = NULL;
    v->doc_count = v->doc_top = 0;
    free(v->doc_status);
    v->doc_status = NULL;
}

/* The job arrived for "describe": its YAML, sanitized, one line each. */
static void on_job(void *ctx, struct backend_reply *r)
{
    struct job_view *v = ctx;
    v->get_call = NULL;
    free_doc(v);
    if (r->status != BACKEND_OK) {
        struct strbuf why = STRBUF_INIT;
        strbuf_addf(&why, "cannot fetch %s: %s", v->name, r->err.message);
        v->doc_status = strbuf_detach(&why, NULL);
        mark_dirty(v);
        return;
    }
    struct strbuf yaml = STRBUF_INIT, clean = STRBUF_INIT;
    jobfile_write(&r->job, JOBFILE_YAML, &yaml);
    utf8_sanitize(&clean, strbuf_str(&yaml), yaml.len, UTF8_KEEP_NEWLINE);
    const char *line = strbuf_str(&clean);
    while (*line) {
        size_t n = strcspn(line, "\n");
        v->doc = xreallocarray(v->doc, v->doc_count + 1, sizeof *v->doc);
        v->doc[v->doc_count++] = xstrndup(line, n);
        line += n + (line[n] == '\n');
    }
    strbuf_free(&yaml);
    strbuf_free(&clean);
    mark_dirty(v);
}

static void describe(struct job_view *v)
{
    v->describing = true;
    if (v->get_call)
        return;
    free_doc(v);
    v->doc_status = xstrdup("fetching the job…");
    struct backend_request rq = {.op = BACKEND_OP_GET, .name = v->name};
    v->get_call = backend_send(monitor_backend(v->base.app), monitor_multi(v->base.app), &rq,
                               on_job, NULL, NULL, v);
}

/* ---- the logs pane ------------------------------------------------------------ */

static void show_logs(struct job_view *v)
{
    set_bottom(v, PANE_LOGS);
    v->focus = PANE_LOGS;
}

/* Follows the worker under the cursor (the first when none is selected yet). */
static void open_worker_logs(struct job_view *v)
{
    const struct worker_info *w = workers_pane_selected(v->workers);
    if (!w || !w->name) {
        monitor_status(v->base.app, true, "%s has no workers yet", v->name);
        return;
    }
    if (logs_pane_all(v->logs) || !logs_pane_worker(v->logs) ||
        strcmp(logs_pane_worker(v->logs), w->name) != 0 || !v->logs_opened)
        logs_pane_follow_worker(v->logs, w->name);
    v->logs_opened = true;
    show_logs(v);
}

static void open_all_logs(struct job_view *v)
{
    const struct worker_list *wl = v->row ? &v->row->workers : NULL;
    if (!wl || wl->count == 0) {
        monitor_status(v->base.app, true, "%s has no workers yet", v->name);
        return;
    }
    const char **names = xcalloc(wl->count, sizeof *names);
    for (size_t i = 0; i < wl->count; i++)
        names[i] = wl->workers[i].name;
    logs_pane_follow_all(v->logs, names, wl->count);
    free(names);
    v->logs_opened = true;
    show_logs(v);
}

/* The cursor moved to another worker while one worker's log is followed: follow the new one. */
static void follow_selection(struct job_view *v)
{
    const struct worker_info *w = workers_pane_selected(v->workers);
    const char *cur = logs_pane_worker(v->logs);
    if (v->logs_opened && cur && w && w->name && strcmp(cur, w->name) != 0)
        logs_pane_follow_worker(v->logs, w->name);
}

/* ---- summary ------------------------------------------------------------------ */

/* Local "HH:MM:SS" of an RFC 3339 stamp ("--:--:--" when it does not parse). */
static void clock_of(const char *rfc3339, char *buf, size_t size)
{
    int64_t ms = rfc3339 ? time_parse_rfc3339(rfc3339) : -1;
    time_t t = (time_t)(ms / 1000);
    struct tm tm;
    if (ms < 0 || !localtime_r(&t, &tm) || strftime(buf, size, "%H:%M:%S", &tm) == 0)
        snprintf(buf, size, "--:--:--");
}

/*
 * The row's state changes, oldest first, as "12:03:04 QUEUEING → RUNNING" lines,
 * each followed by where it came from when the event says ("stopped by the
 * user", "preempted by …", a fault decision…).
 */
static size_t state_history(const struct job_row *r, bool utf8, char ***out)
{
    char **lines = NULL;
    size_t n = 0;
    enum job_state prev = JOB_STATE_UNSPECIFIED;
    for (size_t i = 0; r && i < r->event_count; i++) {
        const struct job_event *e = &r->events[i];
        if (e->kind != EVENT_STATE)
            continue;
        char clock[16];
        clock_of(e->time, clock, sizeof clock);
        const char *arrow = utf8 ? "→" : "->";
        lines = xreallocarray(lines, n + 1, sizeof *lines);
        /* A state event reads "A → B" or "A → B: why" (trainjobd, Slurm): the why, if any. */
        const char *why = e->message ? strstr(e->message, ": ") : NULL;
        why = why && why[2] ? why + 2 : NULL;
        const char *to = enum_name(&job_state_names, (int)e->state);
        if (prev == JOB_STATE_UNSPECIFIED && e->message) {
            /* The first change seen: where it came from is the message's "A → …". */
            size_t fl = strcspn(e->message, " ");
            char from[32];
            if (fl < sizeof from && strncmp(e->message + fl, " → ", strlen(" → ")) == 0) {
                memcpy(from, e->message, fl);
                from[fl] = '\0';
                int f = enum_value(&job_state_names, from);
                prev = f > 0 ? (enum job_state)f : prev;
            }
        }
        if (prev == JOB_STATE_UNSPECIFIED)
            lines[n++] =
                xasprintf("%s %s %s%s%s", clock, arrow, to, why ? "  " : "", why ? why : "");
        else
            lines[n++] = xasprintf("%s %s %s %s%s%s", clock, enum_name(&job_state_names, (int)prev),
                                   arrow, to, why ? "  " : "", why ? why : "");
        prev = e->state;
    }
    *out = lines;
    return n;
}

static void free_lines(char **lines, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(lines[i]);
    free(lines);
}

/* Outside text at (y, x) in w cells, sanitized and cut, in attribute a; returns the cells. */
static int put_clean(WINDOW *win, int y, int x, int w, const char *s, attr_t a, bool utf8)
{
    if (w <= 0)
        return 0;
    struct strbuf sb = STRBUF_INIT;
    utf8_sanitize(&sb, s ? s : "", s ? strlen(s) : 0, 0);
    widget_set_role(win, a);
    int cells = (int)utf8_width(strbuf_str(&sb), sb.len);
    widget_put_clipped(win, y, x, w, strbuf_str(&sb), sb.len, utf8);
    strbuf_free(&sb);
    return cells < w ? cells : w;
}

/* Lines the summary takes: three, the reason, and up to max_history state changes. */
static int summary_lines(const struct job_view *v, size_t history, int max_history)
{
    int n = 3;
    if (v->row && v->row->reason && *v->row->reason)
        n++;
    return n + (int)(history < (size_t)max_history ? history : (size_t)max_history);
}

static void draw_summary(struct job_view *v, const struct term *t, WINDOW *win, int y, int x, int w,
                         char **history, size_t nhist, int hist_rows)
{
    const struct widget_palette *pal = &t->palette;
    const struct job_row *r = v->row;
    for (int i = 0; i < summary_lines(v, nhist, hist_rows); i++) {
        widget_set_role(win, pal->normal);
        widget_blank(win, y + i, x, w);
    }
    if (!r) {
        put_clean(win, y, x + 1, w - 2, "this job is no longer in the workspace (deleted?)",
                  pal->error, t->utf8);
        return;
    }
    char buf[512];
    /* Line 1: state (icon + word, in the state's role), name, display name. */
    jobfmt_state(r->state, r->state_other, t->utf8, buf, sizeof buf);
    int cx = x + 1;
    cx += put_clean(win, y, cx, w - 2, buf, t->role[jobfmt_state_role(r->state)] | A_BOLD, t->utf8);
    cx += 2;
    cx += put_clean(win, y, cx, x + w - 1 - cx, r->name, pal->title, t->utf8);
    if (r->display_name && *r->display_name && strcmp(r->display_name, r->name) != 0) {
        snprintf(buf, sizeof buf, "  \"%s\"", r->display_name);
        put_clean(win, y, cx, x + w - 1 - cx, buf, pal->normal, t->utf8);
    }
    /* Line 2: priority (the server's word for one this build does not know), type, pool, spec. */
    char prio[4 * JOBFMT_OTHER_WIDTH + 8];
    if (r->priority_other && *r->priority_other)
        jobfmt_other(r->priority_other, t->utf8, prio, sizeof prio);
    else
        snprintf(prio, sizeof prio, "%s",
                 r->priority ? enum_name(&priority_names, (int)r->priority) : "-");
    snprintf(buf, sizeof buf, "priority %s · %s · pool %s · spec %s", prio,
             r->idle ? "idle (SPOT)" : "standard", r->pool && *r->pool ? r->pool : "-",
             r->spec && *r->spec ? r->spec : "-");
    put_clean(win, y + 1, x + 1, w - 2, buf, pal->normal, t->utf8);
    /* Line 3: workers, restarts, devices, age. */
    char ready[32], restarts[32], age[16], devices[32] = "";
    if (r->ready < 0)
        snprintf(ready, sizeof ready, "-/%d", (int)r->total);
    else
        snprintf(ready, sizeof ready, "%d/%d", (int)r->ready, (int)r->total);
    jobfmt_restarts(r->restarts, r->restart_limit, t->utf8, restarts, sizeof restarts);
    jobfmt_age(r->created_ms, time_now_ms(), age, sizeof age);
    if (r->devices > 0)
        snprintf(devices, sizeof devices, " · devices %d", (int)r->devices);
    snprintf(buf, sizeof buf, "workers %s ready · restarts %s%s · age %s", ready, restarts, devices,
             age);
    put_clean(win, y + 2, x + 1, w - 2, buf, r->restarts > 0 ? pal->warning : pal->normal, t->utf8);
    int line = 3;
    if (r->reason && *r->reason) {
        bool failed = r->state == JOB_STATE_FAILED;
        snprintf(buf, sizeof buf, "%s %s: %s", failed ? (t->utf8 ? "✗" : "x") : "!",
                 failed ? "failed" : "why", r->reason);
        put_clean(win, y + line++, x + 1, w - 2, buf, failed ? pal->error : pal->warning, t->utf8);
    }
    /* The latest state changes, newest last. */
    size_t shown = nhist < (size_t)hist_rows ? nhist : (size_t)hist_rows;
    for (size_t i = nhist - shown; i < nhist; i++) {
        int lx = x + 1;
        lx += put_clean(win, y + line, lx, w - 2, i == nhist - shown ? "history " : "        ",
                        pal->dim, t->utf8);
        put_clean(win, y + line++, lx, x + w - 1 - lx, history[i], pal->normal, t->utf8);
    }
}

/* A pane's title line: a marker and the selected role when focused. */
static void draw_title(const struct term *t, WINDOW *win, int y, int x, int w, bool focused,
                       const char *text)
{
    attr_t a = focused ? t->palette.selected : t->palette.title;
    widget_set_role(win, a);
    widget_blank(win, y, x, w);
    char buf[600];
    snprintf(buf, sizeof buf, "%s %s", focused ? (t->utf8 ? "▶" : ">") : " ", text);
    put_clean(win, y, x, w, buf, a, t->utf8);
}

/* The describe text in h lines: a title, then the YAML from doc_top. */
static void draw_describe(struct job_view *v, const struct term *t, WINDOW *win, int y, int x,
                          int h, int w)
{
    char title[300];
    snprintf(title, sizeof title, "%s as YAML (read-only) · Esc closes", v->name);
    draw_title(t, win, y, x, w, true, title);
    v->doc_rows = h - 1;
    if (v->doc_count && v->doc_top + (size_t)v->doc_rows > v->doc_count)
        v->doc_top = v->doc_count > (size_t)v->doc_rows ? v->doc_count - (size_t)v->doc_rows : 0;
    for (int i = 1; i < h; i++) {
        widget_set_role(win, t->palette.normal);
        widget_blank(win, y + i, x, w);
        size_t line = v->doc_top + (size_t)(i - 1);
        if (i == 1 && v->doc_status)
            put_clean(win, y + i, x + 1, w - 2, v->doc_status, t->palette.dim, t->utf8);
        else if (line < v->doc_count)
            put_clean(win, y + i, x + 1, w - 2, v->doc[line], t->palette.normal, t->utf8);
    }
}

static void pane_title(struct job_view *v, enum pane p, char *buf, size_t size)
{
    const struct job_row *r = v->row;
    switch (p) {
    case PANE_WORKERS: {
        /* The cursor's worker's last state in full: at 80 columns its cell is cut. */
        const struct worker_info *sel = workers_pane_selected(v->workers);
        if (sel && sel->last_state.present) {
            char last[200], name[64];
            workers_pane_last_text(sel, time_now_ms(), last, sizeof last);
            struct strbuf sb = STRBUF_INIT;
            utf8_sanitize(&sb, sel->name ? sel->name : "", sel->name ? strlen(sel->name) : 0, 0);
            snprintf(name, sizeof name, "%s", strbuf_str(&sb));
            strbuf_free(&sb);
            snprintf(buf, size, "Workers %zu · %s last: %s", r ? r->workers.count : 0, name, last);
            return;
        }
        snprintf(buf, size, "Workers %zu%s", r ? r->workers.count : 0,
                 v->focus == PANE_WORKERS ? " · Enter: logs · a: all workers" : "");
        return;
    }
    case PANE_EVENTS:
        snprintf(buf, size, "Events %zu%s", events_pane_count(v->events),
                 events_pane_following(v->events) ? "" : " · scrolled (End: newest)");
        return;
    case PANE_LOGS: {
        struct strbuf sb = STRBUF_INIT;
        logs_pane_status(v->logs, &sb);
        snprintf(buf, size, "Logs %s%s", strbuf_str(&sb), v->full ? " · z: back" : "");
        strbuf_free(&sb);
        return;
    }
    case PANE_METRICS: {
        struct strbuf sb = STRBUF_INIT;
        metrics_pane_status(v->metrics, &sb);
        snprintf(buf, size, "Metrics %s%s", strbuf_str(&sb), v->full ? " · z: back" : "");
        strbuf_free(&sb);
        return;
    }
    case PANE_COUNT:
        break;
    }
    buf[0] = '\0';
}

/* After the panes: a prompt over them (search, filter), which covers the table. */
static void finish_draw(struct job_view *v, const struct term *t, WINDOW *win)
{
    bool prompting = logs_pane_prompting(v->logs) || metrics_pane_prompting(v->metrics);
    v->covered = v->describing || prompting;
    if (prompting) {
        wnoutrefresh(win);
        logs_pane_draw_prompt(v->logs, t);
        metrics_pane_draw_prompt(v->metrics, t);
    }
}

static void job_draw(struct screen *s, WINDOW *win, int y, int x, int h, int w, bool full)
{
    struct job_view *v = view_of(s);
    const struct term *t = monitor_term(s->app);
    refresh_row(v);
    workers_pane_set_style(v->workers, &t->palette, t->utf8);
    events_pane_set_style(v->events, &t->palette, t->utf8);
    logs_pane_set_style(v->logs, &t->palette, t->utf8);
    metrics_pane_set_style(v->metrics, t);
    if (full || v->covered)
        workers_pane_invalidate(v->workers);         /* something wrote over the table's cells */
    workers_pane_set_now(v->workers, time_now_ms()); /* ages move on between store changes */

    char title[700];
    if (v->full && (v->bottom == PANE_METRICS || v->bottom == PANE_LOGS) && !v->describing) {
        /* The pane alone: its title, then the charts or the log on every other row. */
        pane_title(v, v->bottom, title, sizeof title);
        draw_title(t, win, y, x, w, true, title);
        if (v->bottom == PANE_LOGS)
            logs_pane_draw(v->logs, win, y + 1, x, h - 1, w);
        else
            metrics_pane_draw(v->metrics, win, y + 1, x, h - 1, w, v->focus == PANE_METRICS);
        finish_draw(v, t, win);
        v->covered = true; /* the table's cells were written over */
        return;
    }
    char **history = NULL;
    size_t nhist = state_history(v->row, t->utf8, &history);
    /* Room first for the panes: at 80x24 one state change, more on a taller terminal. */
    int hist_rows = h >= 40 ? 6 : h >= 30 ? 3 : h >= 18 ? 1 : 0;
    int top = summary_lines(v, nhist, hist_rows);
    if (h - top < 7) { /* too short: the summary gives way to the panes */
        hist_rows = 0;
        top = summary_lines(v, 0, 0);
    }
    if (top > h)
        top = h;
    draw_summary(v, t, win, y, x, w, history, nhist, hist_rows);
    free_lines(history, nhist);

    int rest = h - top, py = y + top;
    if (v->describing) {
        draw_describe(v, t, win, py, x, rest, w);
    } else if (rest >= 2) {
        /* Workers: a title, the header and the rows, up to two fifths of the room. */
        size_t nworkers = v->row ? v->row->workers.count : 0;
        int wh = rest * 2 / 5, want = (int)(nworkers < 1000 ? nworkers : 1000) + 2;
        if (want < wh)
            wh = want;
        if (wh < 3)
            wh = rest < 3 ? rest : 3;
        pane_title(v, PANE_WORKERS, title, sizeof title);
        draw_title(t, win, py, x, w, v->focus == PANE_WORKERS, title);
        if (wh > 1)
            workers_pane_draw(v->workers, win, py + 1, x, wh - 1, w, v->focus == PANE_WORKERS);
        int by = py + wh, bh = h - top - wh;
        if (bh > 0) {
            pane_title(v, v->bottom, title, sizeof title);
            draw_title(t, win, by, x, w, v->focus == v->bottom, title);
            if (v->bottom == PANE_LOGS)
                logs_pane_draw(v->logs, win, by + 1, x, bh - 1, w);
            else if (v->bottom == PANE_METRICS)
                metrics_pane_draw(v->metrics, win, by + 1, x, bh - 1, w, v->focus == PANE_METRICS);
            else
                events_pane_draw(v->events, win, by + 1, x, bh - 1, w);
        }
    }
    finish_draw(v, t, win);
}

/* ---- keys ------------------------------------------------------------------------ */

static bool is(const char *action, const char *name)
{
    return action && strcmp(action, name) == 0;
}

static void cycle_focus(struct job_view *v, int step)
{
    v->full = false; /* another pane: the whole screen is not the one shown */
    v->focus = (enum pane)(((int)v->focus + step + PANE_COUNT) % PANE_COUNT);
    if (v->focus == PANE_EVENTS || v->focus == PANE_LOGS || v->focus == PANE_METRICS)
        set_bottom(v, v->focus);
    if (v->focus == PANE_LOGS && !v->logs_opened && workers_pane_selected(v->workers))
        open_worker_logs(v);
}

/* A function key as the letter the describe text scrolls with ('b' / ' ': a page), or 0. */
static int scroll_letter(const struct widget_key *k)
{
    if (!k->is_function)
        return k->alt ? 0 : k->code;
    switch (k->code) {
    case KEY_UP:
        return 'k';
    case KEY_DOWN:
        return 'j';
    case KEY_HOME:
        return 'g';
    case KEY_END:
        return 'G';
    case KEY_PPAGE:
        return 'b';
    case KEY_NPAGE:
        return ' ';
    default:
        return 0;
    }
}

/* Keys while the YAML is shown: scroll, close; the rest goes to the app. */
static unsigned describe_key(struct job_view *v, const struct widget_key *k, const char *action)
{
    const unsigned moved = WIDGET_HANDLED | WIDGET_REDRAW;
    size_t page = v->doc_rows > 1 ? (size_t)v->doc_rows - 1 : 1;
    if (is(action, "back") || is(action, "describe") || (!k->is_function && k->code == 27)) {
        v->describing = false;
        if (v->get_call) {
            backend_call_cancel(v->get_call);
            v->get_call = NULL;
        }
        return moved;
    }
    switch (scroll_letter(k)) {
    case 'k':
        v->doc_top -= v->doc_top > 0;
        return moved;
    case 'j':
        v->doc_top++; /* clamped when drawn */
        return moved;
    case 'b':
        v->doc_top = v->doc_top > page ? v->doc_top - page : 0;
        return moved;
    case ' ':
        v->doc_top += page;
        return moved;
    case 'g':
        v->doc_top = 0;
        return moved;
    case 'G':
        v->doc_top = v->doc_count;
        return moved;
    default:
        return WIDGET_IGNORED;
    }
}

/* An action on the job itself (not while read-only: the app says so). */
static bool job_action(struct job_view *v, const char *action)
{
    static const struct {
        const char *name, *alias;
        enum monitor_action a;
    } acts[] = {
        {"stop", "stop-job", MONITOR_STOP},       {"start", "start-job", MONITOR_START},
        {"delete", "delete-job", MONITOR_DELETE}, {"priority", NULL, MONITOR_PRIORITY},
        {"clone", NULL, MONITOR_CLONE},           {"save", NULL, MONITOR_SAVE},
    };
    for (size_t i = 0; i < sizeof acts / sizeof acts[0]; i++) {
        if (!is(action, acts[i].name) && !(acts[i].alias && is(action, acts[i].alias)))
            continue;
        if (monitor_readonly(v->base.app)) {
            monitor_status(v->base.app, true, "read-only: no actions here");
            return true;
        }
        const char *names[] = {v->name};
        monitor_act(v->base.app, acts[i].a, names, 1);
        return true;
    }
    if (is(action, "shell")) {
        monitor_shell(v->base.app, v->name, workers_pane_selected(v->workers));
        return true;
    }
    if (is(action, "mark-node") || is(action, "unmark-node")) {
        const struct worker_info *w = workers_pane_selected(v->workers);
        if (!w)
            monitor_status(v->base.app, true, "no worker selected");
        else /* it checks read-only */
            monitor_mark_node(v->base.app, v->name, w->node_name, is(action, "unmark-node"));
        return true;
    }
    return false;
}

/* A key the keymap did not claim: to the focused pane. */
static unsigned pane_key(struct job_view *v, const struct widget_key *k)
{
    switch (v->focus) {
    case PANE_WORKERS: {
        unsigned r = workers_pane_key(v->workers, k);
        if (r & WIDGET_ACTIVATE)
            open_worker_logs(v);
        else if (r & WIDGET_REDRAW)
            follow_selection(v);
        return r;
    }
    case PANE_EVENTS:
        return events_pane_key(v->events, k);
    case PANE_LOGS:
        return logs_pane_key(v->logs, k, NULL);
    case PANE_METRICS:
        return metrics_pane_key(v->metrics, k, NULL);
    case PANE_COUNT:
        break;
    }
    return WIDGET_IGNORED;
}

/* The Metrics pane's own actions, from any pane: they show it first (full screen: the Logs
 * pane's when it has the focus). */
static bool metrics_action(struct job_view *v, const char *action)
{
    if (is(action, "metrics")) {
        show_metrics(v);
        return true;
    }
    if (is(action, "fullscreen") && v->bottom == PANE_LOGS && v->focus == PANE_LOGS) {
        v->full = !v->full; /* the log pane it is on */
        return true;
    }
    if (is(action, "fullscreen")) {
        bool full = !(v->full && v->bottom == PANE_METRICS);
        show_metrics(v);
        v->full = full;
        return true;
    }
    if (is(action, "smooth-more") || is(action, "smooth-less") || is(action, "log-y") ||
        is(action, "zoom-in") || is(action, "zoom-out")) {
        show_metrics(v);
        struct widget_key none = {0};
        metrics_pane_key(v->metrics, &none, action);
        return true;
    }
    return false;
}

static unsigned key_of(struct job_view *v, const struct widget_key *k, const char *action)
{
    const unsigned moved = WIDGET_HANDLED | WIDGET_REDRAW;
    if (logs_pane_prompting(v->logs))
        return logs_pane_key(v->logs, k, NULL);
    if (metrics_pane_prompting(v->metrics))
        return metrics_pane_key(v->metrics, k, NULL);
    if (v->describing)
        return describe_key(v, k, action);
    bool tab = !action && !k->alt && !k->is_function && k->code == '\t';
    bool btab = !action && k->is_function && k->code == KEY_BTAB;
    if (is(action, "pane-next") || tab) {
        cycle_focus(v, 1);
        return moved;
    }
    if (is(action, "pane-prev") || btab) {
        cycle_focus(v, -1);
        return moved;
    }
    if (is(action, "describe")) {
        describe(v);
        return moved;
    }
    if (metrics_action(v, action))
        return moved;
    if (v->focus == PANE_METRICS &&
        (is(action, "search") || is(action, "refresh") || is(action, "open") || is(action, "top") ||
         is(action, "bottom") || is(action, "chart") || is(action, "cursor-left") ||
         is(action, "cursor-right")))
        return metrics_pane_key(v->metrics, k, action);
    if (is(action, "all-workers")) {
        open_all_logs(v);
        return moved;
    }
    if (is(action, "logs") || (is(action, "open") && v->focus == PANE_WORKERS)) {
        open_worker_logs(v);
        return moved;
    }
    if (is(action, "wrap") && v->focus == PANE_EVENTS) {
        events_pane_set_wrap(v->events, !events_pane_wrapping(v->events));
        return moved;
    }
    if (is(action, "follow") || is(action, "wrap") || is(action, "search") ||
        is(action, "search-next") || is(action, "search-prev") || is(action, "first-error") ||
        is(action, "save-log")) {
        bool opened_now = !v->logs_opened;
        if (opened_now)
            open_worker_logs(v);
        if (!v->logs_opened)
            return WIDGET_HANDLED;
        show_logs(v);
        if (opened_now && is(action, "follow"))
            return moved; /* it follows already: toggling would pause it at once */
        return logs_pane_key(v->logs, k, action) | WIDGET_REDRAW;
    }
    if (job_action(v, action))
        return moved;
    if (is(action, "top") || is(action, "bottom")) { /* whatever key: as Home / End */
        struct widget_key edge = {.code = is(action, "top") ? KEY_HOME : KEY_END,
                                  .is_function = true};
        return pane_key(v, &edge);
    }
    return pane_key(v, k);
}

static unsigned job_key(struct screen *s, const struct widget_key *k, const char *action)
{
    struct job_view *v = view_of(s);
    refresh_row(v);
    if (is(action, "back") && !v->describing && !logs_pane_prompting(v->logs) &&
        !metrics_pane_prompting(v->metrics)) {
        if (v->focus == PANE_METRICS && metrics_pane_key(v->metrics, k, action) != WIDGET_IGNORED) {
            s->dirty = true; /* the charts' cursor hidden */
            return WIDGET_HANDLED | WIDGET_REDRAW;
        }
        if (v->full) { /* out of full screen first */
            v->full = false;
            s->dirty = true;
            return WIDGET_HANDLED | WIDGET_REDRAW;
        }
        if (v->focus != PANE_WORKERS) {
            /* Out of the log (or events) first, as out of a log screen; the streams go on. */
            v->focus = PANE_WORKERS;
            set_bottom(v, PANE_EVENTS);
            s->dirty = true;
            return WIDGET_HANDLED | WIDGET_REDRAW;
        }
        monitor_pop(s->app); /* frees v: nothing after this */
        return WIDGET_HANDLED;
    }
    unsigned r = key_of(v, k, action);
    if (r & WIDGET_REDRAW || logs_pane_dirty(v->logs) || events_pane_dirty(v->events) ||
        metrics_pane_dirty(v->metrics))
        s->dirty = true;
    return r;
}

/* ---- the rest of the screen ------------------------------------------------------ */

static void job_changed(struct screen *s)
{
    refresh_row(view_of(s));
}

static const char *job_title(struct screen *s)
{
    return view_of(s)->title;
}

/* The actions worth a place in the key bar; the app shows the key each is bound to. */
static size_t job_hints(struct screen *s, const char *const **pairs)
{
    static const char *const rw[] = {
        "pane-next", "pane",     "open",     "logs",   "all-workers", "all logs",
        "follow",    "follow",   "search",   "search", "first-error", "error",
        "describe",  "describe", "stop-job", "stop",   "mark-node",   "mark node",
        "metrics",   "metrics",  "back",     "back",
    };
    static const char *const ro[] = {
        "pane-next", "pane",     "open",    "logs",    "all-workers", "all logs",
        "follow",    "follow",   "search",  "search",  "first-error", "error",
        "describe",  "describe", "metrics", "metrics", "back",        "back",
    };
    /* On the Metrics pane: its own keys (the same with or without actions). */
    static const char *const metrics[] = {
        "search",      "filter", "chart",     "chart",   "fullscreen", "full",     "smooth-more",
        "smooth",      "log-y",  "log y",     "zoom-in", "zoom",       "zoom-out", "unzoom",
        "cursor-left", "cursor", "pane-next", "pane",    "back",       "back",
    };
    /* On the Logs pane: the log's keys (the same with or without actions). */
    static const char *const logs[] = {
        "fullscreen",  "full",     "first-error", "error",  "save-log", "save",
        "search",      "search",   "follow",      "follow", "wrap",     "wrap",
        "all-workers", "all logs", "pane-next",   "pane",   "back",     "back",
    };
    if (view_of(s)->focus == PANE_METRICS) {
        *pairs = metrics;
        return sizeof metrics / sizeof metrics[0] / 2;
    }
    if (view_of(s)->focus == PANE_LOGS) {
        *pairs = logs;
        return sizeof logs / sizeof logs[0] / 2;
    }
    /* On the Workers pane s is the shell's: the job stops from another pane. */
    static const char *const workers[] = {
        "pane-next",   "pane",     "open",     "logs",     "shell",     "shell",
        "all-workers", "all logs", "follow",   "follow",   "search",    "search",
        "first-error", "error",    "describe", "describe", "mark-node", "mark node",
        "metrics",     "metrics",  "back",     "back",
    };
    bool readonly = monitor_readonly(s->app);
    if (!readonly && view_of(s)->focus == PANE_WORKERS && !view_of(s)->describing) {
        *pairs = workers;
        return sizeof workers / sizeof workers[0] / 2;
    }
    *pairs = readonly ? ro : rw;
    return (readonly ? sizeof ro : sizeof rw) / sizeof rw[0] / 2;
}

static void job_destroy(struct screen *s)
{
    struct job_view *v = view_of(s);
    if (v->events_call)
        backend_call_cancel(v->events_call);
    if (v->workers_call)
        backend_call_cancel(v->workers_call);
    if (v->get_call)
        backend_call_cancel(v->get_call);
    metrics_pane_free(v->metrics);
    logs_pane_free(v->logs);
    events_pane_free(v->events);
    workers_pane_free(v->workers);
    free_doc(v);
    free(v->title);
    free(v->name);
    free(v);
}

/*
 * The focused pane's keys first: "logs" (S saves the log there),
 * "metrics", "workers" (s: a shell; not read-only).
 */
static const char *job_submode(struct screen *s)
{
    const struct job_view *v = view_of(s);
    if (v->describing)
        return NULL;
    if (v->focus == PANE_WORKERS && !monitor_readonly(s->app))
        return "workers";
    return v->focus == PANE_LOGS ? "logs" : v->focus == PANE_METRICS ? "metrics" : NULL;
}

static const struct screen_ops job_ops = {
    .mode = "job",
    .draw = job_draw,
    .key = job_key,
    .changed = job_changed,
    .title = job_title,
    .hints = job_hints,
    .destroy = job_destroy,
    .submode = job_submode,
};

struct screen *job_view_new(struct monitor *m, const char *job_name)
{
    struct job_view *v = xcalloc(1, sizeof *v);
    v->base.ops = &job_ops;
    v->base.app = m;
    v->base.dirty = true;
    v->name = xstrdup(job_name);
    struct strbuf title = STRBUF_INIT;
    strbuf_adds(&title, "job ");
    utf8_sanitize(&title, job_name, strlen(job_name), 0);
    v->title = strbuf_detach(&title, NULL);
    v->workers = workers_pane_new();
    v->events = events_pane_new();
    /* 4 MiB of text (~40,000 lines) is plenty to triage with and keeps a
     * dashboard's job screen well inside what the jobs view itself needs. */
    static const struct logring_config ring = {4u << 20, 64u << 10, 0, 0};
    v->logs = logs_pane_new(&ring);
    v->focus = PANE_WORKERS;
    v->bottom = PANE_EVENTS;
    struct backend *b = monitor_backend(m);
    logs_pane_set_backend(v->logs, b, monitor_multi(m), job_name);
    logs_pane_set_notify(v->logs, on_pane_news, v);
    v->metrics = metrics_pane_new();
    metrics_pane_set_backend(v->metrics, b, monitor_multi(m), monitor_loop(m), job_name);
    metrics_pane_set_notify(v->metrics, on_pane_news, v);
    refresh_row(v);

    /* The history the watch stream did not send: merged into the store by id. */
    fetch_events(v);
    if (v->row && !v->row->has_workers) /* a poll, or a watch of summaries: ask for them */
        fetch_workers(v);
    return &v->base;
}
