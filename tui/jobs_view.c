/*
 * jobs_view: the job table screen; see jobs_view.h. The table widget keeps
 * the view (sort, filter, cursor, marks); this screen lends it the rows —
 * the store's, or only the faulty ones — and turns actions into requests
 * to the app.
 *
 * Over several contexts (`top --context a,b`) the rows are every context's
 * store's, each row knowing its context: a CONTEXT column says which (first
 * by default; never in a view over one), every action goes to the row's
 * context, and the rows of a context whose backend is down say DISCONNECTED.
 */
#include "tui/jobs_view.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tui/app.h"
#include "tui/colconf.h"
#include "tui/jobfmt.h"
#include "tui/jobstore.h"
#include "tui/term.h"
#include "util/hmap.h"
#include "util/loop.h"
#include "util/strbuf.h"
#include "util/timefmt.h"
#include "util/utf8.h"
#include "util/xalloc.h"
#include "widgets/table.h"

enum column {
    COL_NAME,
    COL_DISPLAY,
    COL_STATE,
    COL_PRIORITY,
    COL_TYPE,
    COL_WORKERS,
    COL_DEVICES,
    COL_RESTARTS,
    COL_AGE,
    COL_DURATION,
    COL_ID,
    COL_REASON,
    COL_CONTEXT, /* in a view over several contexts only */
    /* Offered in the `C` list, not shown until chosen: */
    COL_USER,
    COL_POOL,
    COL_NODE,
    COL_SPEC,
    COL_COUNT
};

/* The columns shown with no choice made: every one before COL_USER. */
#define COL_DEFAULT_COUNT COL_USER

static const struct table_column columns[COL_COUNT] = {
    [COL_NAME] = {"NAME", 6, 40, false},     [COL_DISPLAY] = {"DISPLAY NAME", 6, 24, false},
    [COL_STATE] = {"STATE", 5, 14, false},   [COL_PRIORITY] = {"PRIORITY", 4, 8, false},
    [COL_TYPE] = {"TYPE", 4, 8, false},      [COL_WORKERS] = {"WORKERS", 3, 9, true},
    [COL_DEVICES] = {"DEVICES", 3, 7, true}, [COL_RESTARTS] = {"RESTARTS", 3, 8, true},
    [COL_AGE] = {"AGE", 3, 5, true},         [COL_DURATION] = {"TIME", 4, 6, true},
    [COL_ID] = {"JOBID", 2, 12, true},       [COL_REASON] = {"REASON", 10, 0, false},
    [COL_CONTEXT] = {"CONTEXT", 4, 16, false},
    [COL_USER] = {"USER", 4, 16, false},     [COL_POOL] = {"POOL", 4, 16, false},
    [COL_NODE] = {"NODE", 4, 16, false},     [COL_SPEC] = {"SPEC", 4, 16, false},
};

/*
 * What gives way when the room is short (table_set_keep, lowest first):
 * TYPE, DEVICES, TIME, JOBID and the chosen extras, then DISPLAY NAME and
 * RESTARTS, dropped whole (table_set_drop) so REASON shows its text whole;
 * then REASON shrinks (to 10 cells); then AGE, WORKERS and PRIORITY are
 * dropped, right to left; then CONTEXT and STATE shrink; NAME last, never
 * below the width that tells the rows shown apart (table_set_distinct).
 */
static const int keep[COL_COUNT] = {
    [COL_NAME] = 6,     [COL_DISPLAY] = 1, [COL_STATE] = 5,    [COL_PRIORITY] = 3,
    [COL_TYPE] = 0,     [COL_WORKERS] = 3, [COL_DEVICES] = 0,  [COL_RESTARTS] = 1,
    [COL_AGE] = 3,      [COL_DURATION] = 0, [COL_ID] = 0,      [COL_REASON] = 2,
    [COL_CONTEXT] = 4,  [COL_USER] = 0,    [COL_POOL] = 0,     [COL_NODE] = 0,
    [COL_SPEC] = 0,
};

/* The columns that give way whole, never cut to a stub: all but NAME, STATE, REASON, CONTEXT. */
static const bool drop[COL_COUNT] = {
    [COL_DISPLAY] = true, [COL_PRIORITY] = true, [COL_TYPE] = true, [COL_WORKERS] = true,
    [COL_DEVICES] = true, [COL_RESTARTS] = true, [COL_AGE] = true,  [COL_DURATION] = true,
    [COL_ID] = true,      [COL_USER] = true,     [COL_POOL] = true, [COL_NODE] = true,
    [COL_SPEC] = true,
};

/* The titles, for the columns file and the `C` list. */
static const char *const titles[COL_COUNT] = {
    [COL_NAME] = "NAME",       [COL_DISPLAY] = "DISPLAY NAME",
    [COL_STATE] = "STATE",     [COL_PRIORITY] = "PRIORITY",
    [COL_TYPE] = "TYPE",       [COL_WORKERS] = "WORKERS",
    [COL_DEVICES] = "DEVICES", [COL_RESTARTS] = "RESTARTS",
    [COL_AGE] = "AGE",         [COL_DURATION] = "TIME",
    [COL_ID] = "JOBID",        [COL_REASON] = "REASON",
    [COL_CONTEXT] = "CONTEXT", [COL_USER] = "USER",
    [COL_POOL] = "POOL",       [COL_NODE] = "NODE",
    [COL_SPEC] = "SPEC",
};

/*
 * JOBID holds Slurm's job id, squeue's word for it (ACP's and trainjobd's
 * ids are paths, never shown): it was titled ID, which a columns file
 * written then may still say.
 */
static const char *const former_titles[COL_COUNT] = {[COL_ID] = "ID"};

struct jobs_view {
    struct screen base;
    struct table *table;
    const struct job_row **rows; /* what the table shows: every row, or the faulty ones */
    size_t *ctx_of;              /* the context of each row (0 in a view over one) */
    size_t count, cap;
    bool multi;        /* more than one context in view */
    bool default_cols; /* no choice of columns made (no file): CONTEXT goes first */
    bool faulty_only;
    bool mine_only; /* only the rows whose creator is monitor_user */
    int64_t now_ms; /* ages are taken once per refresh or tick, so a frame is consistent */
    uint64_t tick;  /* the timer that moves now_ms when an AGE or TIME cell's text changes */
    char title[128];
    /*
     * The columns: the user's choice in order (`C`, ~/.config/trainjob/columns),
     * and what the table has now — the choice less DISPLAY NAME while it says
     * nothing NAME does not (equal or empty on every row shown). The table's
     * column i is shown[i].
     */
    size_t order[COL_COUNT], norder;
    size_t shown[COL_COUNT], nshown;
    size_t old_shown[COL_COUNT]; /* what the table was made with */
};

static struct jobs_view *view(struct screen *s)
{
    return (struct jobs_view *)s;
}

/* ---- the table's rows ------------------------------------------------------ */

static size_t src_count(void *ctx)
{
    return ((struct jobs_view *)ctx)->count;
}

/* Sanitized text of a server's string into scratch. */
static const char *clean(const char *s, char *scratch, size_t n)
{
    if (s == NULL || *s == '\0')
        return "-";
    struct strbuf sb = STRBUF_INIT;
    utf8_sanitize(&sb, s, strlen(s), 0);
    snprintf(scratch, n, "%s", strbuf_str(&sb));
    strbuf_free(&sb);
    return scratch;
}

/*
 * The nodes the job's workers are on: "n1", "n1 +2" for more; from the
 * backend's summary (trainjobd's nodes), else the workers the view has
 * seen; "-" when neither says.
 */
static const char *node_cell(const struct job_row *r, char *scratch, size_t n)
{
    if (r->nodes && *r->nodes) {
        size_t first_len = strcspn(r->nodes, ",");
        size_t more = 0;
        for (const char *p = r->nodes; *p; p++)
            more += *p == ',';
        struct strbuf sb = STRBUF_INIT;
        utf8_sanitize(&sb, r->nodes, first_len, 0);
        if (more)
            strbuf_addf(&sb, " +%zu", more);
        snprintf(scratch, n, "%s", strbuf_str(&sb));
        strbuf_free(&sb);
        return scratch;
    }
    const char *first = NULL;
    size_t more = 0;
    for (size_t i = 0; i < r->workers.count; i++) {
        const char *node = r->workers.workers[i].node_name;
        if (node == NULL || *node == '\0')
            continue;
        bool seen = first && strcmp(first, node) == 0;
        for (size_t j = 0; j < i && !seen && first; j++) {
            const char *o = r->workers.workers[j].node_name;
            seen = o && strcmp(o, node) == 0;
        }
        if (first == NULL)
            first = node;
        else if (!seen)
            more++;
    }
    if (first == NULL)
        return "-";
    struct strbuf sb = STRBUF_INIT;
    utf8_sanitize(&sb, first, strlen(first), 0);
    if (more)
        strbuf_addf(&sb, " +%zu", more);
    snprintf(scratch, n, "%s", strbuf_str(&sb));
    strbuf_free(&sb);
    return scratch;
}

/* True when row i's context is down; *why its reason. */
static bool row_down(const struct jobs_view *v, size_t i, const char **why)
{
    return v->multi && monitor_context_down(v->base.app, v->ctx_of[i], why);
}

static const char *src_cell(void *ctx, size_t i, size_t col, char *scratch, size_t n)
{
    struct jobs_view *v = ctx;
    const struct job_row *r = v->rows[i];
    bool utf8 = monitor_term(v->base.app)->utf8;
    const char *why;
    switch ((enum column)v->shown[col]) {
    case COL_CONTEXT: {
        const char *name = clean(monitor_context_name(v->base.app, v->ctx_of[i]), scratch, n);
        if (row_down(v, i, &why) && name == scratch) {
            size_t len = strlen(scratch);
            snprintf(scratch + len, n - len, " %s", utf8 ? "✗" : "x");
        }
        return name;
    }
    case COL_NAME:
        return clean(r->name, scratch, n);
    case COL_DISPLAY:
        return clean(r->display_name, scratch, n);
    case COL_STATE:
        jobfmt_state(r->state, r->state_other, utf8, scratch, n);
        return scratch;
    case COL_PRIORITY:
        if (r->priority_other && *r->priority_other) {
            jobfmt_other(r->priority_other, utf8, scratch, n);
            return scratch;
        }
        return r->priority ? enum_name(&priority_names, (int)r->priority) : "-";
    case COL_TYPE:
        return r->idle ? "idle" : "standard";
    case COL_WORKERS:
        if (r->ready < 0)
            snprintf(scratch, n, "-/%d", (int)r->total);
        else
            snprintf(scratch, n, "%d/%d", (int)r->ready, (int)r->total);
        return scratch;
    case COL_DEVICES:
        if (r->devices < 0)
            return "-";
        snprintf(scratch, n, "%d", (int)r->devices);
        return scratch;
    case COL_RESTARTS:
        jobfmt_restarts(r->restarts, r->restart_limit, utf8, scratch, n);
        return scratch;
    case COL_AGE:
        jobfmt_age(r->created_ms, v->now_ms, scratch, n);
        return scratch;
    case COL_DURATION:
        jobfmt_duration(r->started_ms, r->ended_ms, v->now_ms, scratch, n);
        return scratch;
    case COL_ID:
        return clean(r->sched_id, scratch, n);
    case COL_REASON:
        if (row_down(v, i, &why)) { /* what the row says is old: its backend is not answering */
            struct strbuf sb = STRBUF_INIT;
            strbuf_adds(&sb, "DISCONNECTED");
            if (*why) {
                strbuf_adds(&sb, " (");
                utf8_sanitize(&sb, why, strlen(why), 0);
                strbuf_adds(&sb, ")");
            }
            snprintf(scratch, n, "%s", strbuf_str(&sb));
            strbuf_free(&sb);
            return scratch;
        }
        return r->reason ? clean(r->reason, scratch, n) : "";
    case COL_USER:
        return clean(r->user, scratch, n);
    case COL_POOL:
        return clean(r->pool, scratch, n);
    case COL_SPEC:
        return clean(r->spec, scratch, n);
    case COL_NODE:
        return node_cell(r, scratch, n);
    case COL_COUNT:
        break;
    }
    return "";
}

/*
 * The widest text an enum column can show (STATE with its icon, PRIORITY,
 * TYPE), 0 for the others: the table sizes such a column to it, so a job
 * moving to a state no row showed yet (the first SUSPENDED) changes one
 * cell, not every line's layout.
 */
static int enum_widest(enum column col, bool utf8)
{
    char buf[64];
    size_t w = 0;
    switch (col) {
    case COL_STATE:
        for (int st = 0; st < JOB_STATE_COUNT; st++) {
            jobfmt_state((enum job_state)st, NULL, utf8, buf, sizeof buf);
            size_t n = utf8_width(buf, strlen(buf));
            w = n > w ? n : w;
        }
        break;
    case COL_PRIORITY:
        for (size_t i = 1; i < priority_names.count; i++) { /* 0: unset, shown as "-" */
            const char *name = enum_name(&priority_names, (int)i);
            size_t n = utf8_width(name, strlen(name));
            w = n > w ? n : w;
        }
        break;
    case COL_TYPE:
        w = strlen("standard"); /* or "idle" */
        break;
    default:
        break;
    }
    return (int)w;
}

static attr_t src_attr(void *ctx, size_t i, size_t col)
{
    struct jobs_view *v = ctx;
    const struct term *t = monitor_term(v->base.app);
    const struct job_row *r = v->rows[i];
    col = v->shown[col];
    const char *why;
    if ((col == COL_REASON || col == COL_CONTEXT) && row_down(v, i, &why))
        return t->role[THEME_ROLE_BANNER_DISCONNECTED];
    if (col == COL_STATE)
        return t->role[jobfmt_state_role(r->state)];
    if (col == COL_RESTARTS && r->restarts > 0)
        return t->palette.warning;
    if (col == COL_REASON)
        return r->state == JOB_STATE_FAILED ? t->palette.error : t->palette.dim;
    return 0;
}

/*
 * Row i's key for the table (cursor, marks): the store's, told apart per
 * context (the same job name in two contexts is two rows); the store's own
 * in context 0, so a view over one keeps its keys.
 */
static uint64_t row_key(const struct jobs_view *v, size_t i)
{
    return v->rows[i]->key ^ (uint64_t)v->ctx_of[i] * 0x9E3779B97F4A7C15ull;
}

static uint64_t src_key(void *ctx, size_t i)
{
    return row_key(ctx, i);
}

/*
 * STATE and PRIORITY sort in the enum's order; a value this build does not
 * know (the server's word) is a value of its own, after the known ones and
 * among them by its text.
 */
static int cmp_enum(int x, const char *xo, int y, const char *yo, int count)
{
    int kx = xo && *xo ? count : x, ky = yo && *yo ? count : y;
    if (kx != ky)
        return kx - ky;
    return kx == count ? strcmp(xo, yo) : 0;
}

/* AGE sorts by creation time (the text "3m" < "2h" would too, but this is exact). */
static int src_compare(void *ctx, size_t a, size_t b, size_t col)
{
    struct jobs_view *v = ctx;
    const struct job_row *x = v->rows[a], *y = v->rows[b];
    size_t tcol = col; /* the table's */
    col = v->shown[col];
    if (col == COL_DURATION) {
        int64_t dx = jobfmt_duration_ms(x->started_ms, x->ended_ms, v->now_ms);
        int64_t dy = jobfmt_duration_ms(y->started_ms, y->ended_ms, v->now_ms);
        return dx < dy ? -1 : dx > dy ? 1 : 0;
    }
    if (col == COL_AGE) /* older first: a larger age */
        return x->created_ms < y->created_ms ? 1 : x->created_ms > y->created_ms ? -1 : 0;
    if (col == COL_STATE)
        return cmp_enum((int)x->state, x->state_other, (int)y->state, y->state_other,
                        JOB_STATE_COUNT);
    if (col == COL_PRIORITY)
        return cmp_enum((int)x->priority, x->priority_other, (int)y->priority, y->priority_other,
                        (int)priority_names.count);
    char sa[TABLE_CELL_MAX], sb[TABLE_CELL_MAX];
    const char *ta = src_cell(ctx, a, tcol, sa, sizeof sa);
    const char *tb = src_cell(ctx, b, tcol, sb, sizeof sb);
    if (col == COL_WORKERS || col == COL_DEVICES || col == COL_RESTARTS)
        return atoi(ta) - atoi(tb);
    return strcasecmp(ta, tb);
}

static const struct table_source source = {src_count, src_cell, src_attr, src_key, src_compare};

/* ---- the columns ----------------------------------------------------------- */

/*
 * A new table over v->shown, keeping what the user set on the old one: the
 * filter, the sort (by column, wherever it went; none if hidden), the cursor
 * and the marks.
 */
static void make_table(struct jobs_view *v)
{
    struct table *old = v->table;
    char *filter = NULL;
    size_t sort = TABLE_UNSORTED;
    bool desc = false;
    uint64_t *marks = NULL, cursor = 0;
    size_t nmarks = 0;
    bool has_cursor = false;
    if (old) {
        filter = xstrdup(table_filter(old));
        size_t c = table_sort_column(old, &desc);
        if (c != TABLE_UNSORTED)
            sort = v->old_shown[c];
        nmarks = table_marked(old, &marks);
        has_cursor = table_cursor_row(old, NULL, &cursor);
        table_free(old);
    }
    struct table_column cols[COL_COUNT];
    int keeps[COL_COUNT];
    size_t tsort = TABLE_UNSORTED;
    /* DISPLAY NAME chosen but left out: NAME says it, so display_name=… filters on NAME. */
    bool display_left_out = false;
    for (size_t i = 0; i < v->norder; i++)
        display_left_out |= v->order[i] == COL_DISPLAY;
    for (size_t i = 0; i < v->nshown; i++)
        display_left_out &= v->shown[i] != COL_DISPLAY;
    size_t name_col = TABLE_UNSORTED;
    for (size_t i = 0; i < v->nshown; i++) {
        cols[i] = columns[v->shown[i]];
        if (v->shown[i] == COL_NAME)
            name_col = i;
        keeps[i] = keep[v->shown[i]];
        if (v->shown[i] == sort)
            tsort = i;
    }
    v->table = table_new(&source, v, cols, v->nshown);
    table_set_keep(v->table, keeps);
    bool drops[COL_COUNT];
    for (size_t i = 0; i < v->nshown; i++)
        drops[i] = drop[v->shown[i]];
    table_set_drop(v->table, drops);
    if (name_col != TABLE_UNSORTED)
        table_set_distinct(v->table, name_col, true);
    for (size_t i = 0; i < v->nshown; i++)
        table_set_widest(v->table, i, enum_widest((enum column)v->shown[i],
                                                  monitor_term(v->base.app)->utf8));
    if (display_left_out && name_col != TABLE_UNSORTED)
        table_set_also(v->table, name_col, columns[COL_DISPLAY].title);
    const struct term *t = monitor_term(v->base.app);
    table_set_palette(v->table, &t->palette);
    table_set_utf8(v->table, t->utf8);
    table_set_empty_text(v->table, "no jobs (n: create one)");
    if (filter && *filter)
        table_set_filter(v->table, filter);
    if (tsort != TABLE_UNSORTED)
        table_set_sort(v->table, tsort, desc);
    for (size_t i = 0; i < nmarks; i++)
        table_set_marked(v->table, marks[i], true);
    if (has_cursor)
        table_set_cursor_key(v->table, cursor);
    table_widget(v->table)->dirty = true;
    memcpy(v->old_shown, v->shown, sizeof v->shown);
    free(filter);
    free(marks);
}

/* DISPLAY NAME says something only when a row shown has one other than its NAME. */
static bool display_says_something(const struct jobs_view *v)
{
    for (size_t i = 0; i < v->count; i++) {
        const struct job_row *r = v->rows[i];
        if (r->display_name && *r->display_name &&
            (r->name == NULL || strcmp(r->display_name, r->name) != 0))
            return true;
    }
    return false;
}

/* JOBID says something only when a row shown has one (Slurm's job id; ACP's is its path). */
static bool id_says_something(const struct jobs_view *v)
{
    for (size_t i = 0; i < v->count; i++)
        if (v->rows[i]->sched_id)
            return true;
    return false;
}

/*
 * The choice of columns in effect into out (room for COL_COUNT), its count:
 * the user's, or with none made, in a view over several, CONTEXT first.
 */
static size_t choice(const struct jobs_view *v, size_t *out)
{
    size_t n = 0;
    if (v->multi && v->default_cols)
        out[n++] = COL_CONTEXT;
    for (size_t i = 0; i < v->norder; i++)
        if (!(v->multi && v->default_cols && v->order[i] == COL_CONTEXT))
            out[n++] = v->order[i];
    return n;
}

/* v->shown from the choice and the rows; true when the table was made again (it changed). */
static bool place_columns(struct jobs_view *v, bool force)
{
    bool display = display_says_something(v), id = id_says_something(v);
    size_t shown[COL_COUNT], n = 0, order[COL_COUNT];
    size_t norder = choice(v, order);
    for (size_t i = 0; i < norder; i++)
        if ((order[i] != COL_DISPLAY || display) && (order[i] != COL_ID || id) &&
            (order[i] != COL_CONTEXT || v->multi))
            shown[n++] = order[i];
    if (n == 0) /* the choice was DISPLAY NAME alone: NAME says it */
        shown[n++] = COL_NAME;
    if (!force && v->table && n == v->nshown && memcmp(shown, v->shown, n * sizeof *shown) == 0)
        return false;
    memcpy(v->shown, shown, n * sizeof *shown);
    v->nshown = n;
    make_table(v);
    return true;
}

/* When an age counted from since (unix ms) next shows another text: "12s" a second on, "3m" a
 * minute on (the unit time_age shows it in). */
static int64_t age_changes_at(int64_t since, int64_t now)
{
    int64_t d = now > since ? now - since : 0;
    int64_t unit = d < 60000 ? 1000 : d < 3600000 ? 60000 : d < 86400000 ? 3600000 : 86400000;
    return since + (d / unit + 1) * unit;
}

/*
 * The tick: the ages move on; the table writes only the lines whose text
 * changed. The next tick is armed when the view is drawn: the rows may be
 * stale here (the store changes before the frame rebuilds them), and a view
 * under the job screen need not tick.
 */
static void on_tick(void *ctx)
{
    struct jobs_view *v = ctx;
    v->tick = 0;
    v->now_ms = time_now_ms();
    v->base.dirty = true;
    monitor_dirty(v->base.app);
}

/*
 * Arms the tick for the first moment an AGE or a running TIME cell of the
 * rows changes its text (a row a day old waits an hour, not a second), but
 * no sooner than the next whole second of the clock: rows made at different
 * instants of a second then move together, one wake-up a second at most
 * (10,000 jobs made over a few seconds woke `top` ~75 times a second, each
 * row's second at its own instant). An age is thus shown up to a second
 * late, as `watch -n 1` would. No rows that age, no timer.
 */
static void arm_tick(struct jobs_view *v)
{
    struct loop *lp = v->base.app ? monitor_loop(v->base.app) : NULL;
    if (lp == NULL)
        return;
    if (v->tick)
        loop_cancel(lp, v->tick);
    v->tick = 0;
    int64_t now = v->now_ms, first = INT64_MAX;
    for (size_t i = 0; i < v->count; i++) {
        const struct job_row *r = v->rows[i];
        if (r->created_ms >= 0) {
            int64_t t = age_changes_at(r->created_ms, now);
            first = t < first ? t : first;
        }
        if (r->started_ms >= 0 && r->ended_ms == -1) {
            int64_t t = age_changes_at(r->started_ms, now);
            first = t < first ? t : first;
        }
    }
    if (first == INT64_MAX)
        return;
    int64_t next_second = (now / 1000 + 1) * 1000;
    if (first < next_second)
        first = next_second;
    v->tick = loop_add_timer(lp, first - now + 1, on_tick, v);
}

/* The rows the table shows, from the store (every context's, in a view over several). */
static void rebuild(struct jobs_view *v)
{
    struct monitor *m = v->base.app;
    size_t nctx = monitor_context_count(m);
    v->multi = nctx > 1;
    size_t n = 0;
    for (size_t c = 0; c < nctx; c++)
        n += jobstore_count(v->multi ? monitor_context_store(m, c) : monitor_store(m));
    if (n > v->cap) {
        v->cap = n;
        v->rows = xreallocarray(v->rows, v->cap, sizeof *v->rows);
        v->ctx_of = xreallocarray(v->ctx_of, v->cap, sizeof *v->ctx_of);
    }
    v->count = 0;
    for (size_t c = 0; c < nctx; c++) {
        struct jobstore *s = v->multi ? monitor_context_store(m, c) : monitor_store(m);
        const char *me = v->multi ? monitor_context_user(m, c) : monitor_user(m);
        size_t rows = jobstore_count(s);
        for (size_t i = 0; i < rows; i++) {
            const struct job_row *r = jobstore_at(s, i);
            if (v->faulty_only && !job_row_faulty(r))
                continue;
            if (v->mine_only && (me == NULL || r->user == NULL || strcmp(r->user, me) != 0))
                continue;
            v->ctx_of[v->count] = v->multi ? c : 0;
            v->rows[v->count++] = r;
        }
    }
    v->now_ms = time_now_ms();
    if (!place_columns(v, false))
        table_refresh(v->table);
    v->base.dirty = true;
    arm_tick(v);
}

/* ---- the screen ------------------------------------------------------------ */

static void jv_draw(struct screen *s, WINDOW *w, int y, int x, int h, int wd, bool full)
{
    struct jobs_view *v = view(s);
    if (full)
        table_invalidate(v->table);
    if (v->tick == 0) { /* ticked, or back on top: the ages as of now, and the next tick */
        v->now_ms = time_now_ms();
        arm_tick(v);
    }
    table_set_height(v->table, h);
    struct widget *tw = table_widget(v->table);
    tw->ops->draw(tw, w, y, x, wd, true);
}

/* A row of the view as the marks index holds it: its place, found by its table key. */
struct keyed_row {
    uint64_t key;
    size_t i;
};

static bool same_key(const void *item, const void *key)
{
    return ((const struct keyed_row *)item)->key == *(const uint64_t *)key;
}

/*
 * The names to act on, with their contexts (ctxs): the marked rows, else the
 * cursor's. Returns the count; *out and *ctxs are malloc'd. The marks (row
 * keys) find their rows through a hash index of the rows: with 50,000
 * marked, one scan of the rows per mark was O(N^2).
 */
static size_t chosen(struct jobs_view *v, const char ***out, size_t **ctxs)
{
    uint64_t *keys = NULL;
    size_t n = table_marked(v->table, &keys);
    const char **names = xcalloc(n ? n : 1, sizeof *names);
    size_t *in = xcalloc(n ? n : 1, sizeof *in);
    size_t k = 0;
    struct hmap by_key = HMAP_INIT;
    struct keyed_row *kr = xcalloc(n && v->count ? v->count : 1, sizeof *kr);
    for (size_t j = 0; n && j < v->count; j++) {
        kr[j] = (struct keyed_row){row_key(v, j), j};
        hmap_put(&by_key, hmap_hash(&kr[j].key, sizeof kr[j].key), &kr[j]);
    }
    for (size_t i = 0; i < n; i++) {
        const struct keyed_row *r =
            hmap_get(&by_key, hmap_hash(&keys[i], sizeof keys[i]), same_key, &keys[i]);
        if (r) {
            in[k] = v->ctx_of[r->i];
            names[k++] = v->rows[r->i]->name;
        }
    }
    hmap_free(&by_key);
    free(kr);
    free(keys);
    if (k == 0) {
        size_t row;
        uint64_t key;
        if (table_cursor_row(v->table, &row, &key)) {
            in[k] = v->ctx_of[row];
            names[k++] = v->rows[row]->name;
        }
    }
    *out = names;
    *ctxs = in;
    return k;
}

static void act(struct jobs_view *v, enum monitor_action a, bool many)
{
    const char **names;
    size_t *ctxs;
    size_t n = chosen(v, &names, &ctxs);
    if (n == 0)
        monitor_status(v->base.app, true, "no job here");
    else if (v->multi)
        monitor_act_in(v->base.app, a, names, ctxs, many ? n : 1);
    else
        monitor_act(v->base.app, a, names, many ? n : 1);
    free(names);
    free(ctxs);
}

static void on_filter(void *ctx, const char *text)
{
    struct jobs_view *v = ctx;
    table_set_filter(v->table, text);
    v->base.dirty = true;
}

/* ---- `C`: the columns list ------------------------------------------------- */

/*
 * A screen over the jobs view listing every column, shown ones first in their
 * order: Space shows/hides the cursor's, K / J move it up / down, Enter keeps
 * the choice (and saves it to the columns file), Esc or q leaves it as it was.
 */
struct colpick {
    struct screen base;
    struct jobs_view *v;
    size_t order[COL_COUNT]; /* every column */
    bool on[COL_COUNT];      /* by place in order */
    size_t cur;
};

static void cp_draw(struct screen *s, WINDOW *w, int y, int x, int h, int wd, bool full)
{
    struct colpick *p = (struct colpick *)s;
    const struct term *t = monitor_term(s->app);
    (void)full;
    for (int r = 0; r < h; r++) {
        wmove(w, y + r, x);
        for (int c = 0; c < wd; c++)
            waddch(w, ' ');
    }
    if (h < 1)
        return;
    wattrset(w, t->palette.title);
    mvwaddnstr(w, y, x, "Columns of the jobs view, top to bottom = left to right", wd);
    for (size_t i = 0; i < COL_COUNT && (int)i + 2 < h; i++) {
        char line[64];
        snprintf(line, sizeof line, " [%c] %s", p->on[i] ? 'x' : ' ', titles[p->order[i]]);
        wattrset(w, i == p->cur ? t->palette.selected
                    : p->on[i]  ? t->palette.normal
                                : t->palette.dim);
        mvwaddnstr(w, y + 2 + (int)i, x, line, wd);
    }
    wattrset(w, t->palette.dim);
    if (COL_COUNT + 3 < (size_t)h)
        mvwaddnstr(w, y + COL_COUNT + 3, x,
                   "Space: show/hide  K/J: move up/down  Enter: keep and save  Esc: cancel", wd);
    wattrset(w, t->palette.normal);
    s->dirty = false;
}

/*
 * Keeps the choice: the jobs view's columns, and the user's file. What
 * happened goes in msg (said once the list is closed: a status belongs to
 * the screen on top); true when it is an error.
 */
static bool cp_keep(struct colpick *p, char *msg, size_t size)
{
    struct jobs_view *v = p->v;
    size_t n = 0;
    for (size_t i = 0; i < COL_COUNT; i++)
        if (p->on[i])
            v->order[n++] = p->order[i];
    v->norder = n;
    v->default_cols = false; /* the choice is the user's now, CONTEXT's place too */
    place_columns(v, true);
    char *path = colconf_user_file(false);
    struct strbuf err = STRBUF_INIT;
    bool bad = colconf_save(path, titles, v->order, v->norder, &err) != 0;
    if (bad) {
        snprintf(msg, size, "columns not saved: %s", strbuf_str(&err));
    } else {
        char *shown = colconf_user_file(true);
        snprintf(msg, size, "columns saved to %s", shown);
        free(shown);
    }
    strbuf_free(&err);
    free(path);
    return bad;
}

static unsigned cp_key(struct screen *s, const struct widget_key *k, const char *action)
{
    struct colpick *p = (struct colpick *)s;
    struct monitor *m = s->app;
    (void)action;
    size_t c = p->cur;
    if (k->alt)
        return WIDGET_IGNORED;
    if (k->is_function) {
        if (k->code == KEY_UP && c > 0)
            p->cur--;
        else if (k->code == KEY_DOWN && c + 1 < COL_COUNT)
            p->cur++;
        else if (k->code == KEY_HOME)
            p->cur = 0;
        else if (k->code == KEY_END)
            p->cur = COL_COUNT - 1;
        else if (k->code == KEY_ENTER)
            goto keep;
        else
            return WIDGET_HANDLED;
        s->dirty = true;
        return WIDGET_HANDLED | WIDGET_REDRAW;
    }
    switch (k->code) {
    case ' ': {
        size_t on = 0;
        for (size_t i = 0; i < COL_COUNT; i++)
            on += p->on[i];
        if (p->on[c] && on == 1) {
            monitor_status(m, true, "one column at least");
            return WIDGET_HANDLED;
        }
        p->on[c] = !p->on[c];
        break;
    }
    case 'K':
    case 'J': {
        size_t d = k->code == 'K' ? c - 1 : c + 1;
        if ((k->code == 'K' && c == 0) || d >= COL_COUNT)
            return WIDGET_HANDLED;
        size_t o = p->order[c];
        bool b = p->on[c];
        p->order[c] = p->order[d], p->on[c] = p->on[d];
        p->order[d] = o, p->on[d] = b;
        p->cur = d;
        break;
    }
    case 'k':
        if (c > 0)
            p->cur--;
        break;
    case 'j':
        if (c + 1 < COL_COUNT)
            p->cur++;
        break;
    case '\r':
    case '\n':
        goto keep;
    case 27:
    case 'q':
        monitor_pop(m);
        return WIDGET_HANDLED | WIDGET_REDRAW;
    default:
        return WIDGET_HANDLED;
    }
    s->dirty = true;
    return WIDGET_HANDLED | WIDGET_REDRAW;
keep : {
    char msg[600];
    bool bad = cp_keep(p, msg, sizeof msg);
    monitor_pop(m); /* frees p */
    monitor_status(m, bad, "%s", msg);
    return WIDGET_HANDLED | WIDGET_REDRAW;
}
}

static void cp_changed(struct screen *s)
{
    (void)s;
}

static const char *cp_title(struct screen *s)
{
    (void)s;
    return "columns";
}

static size_t cp_hints(struct screen *s, const char *const **pairs)
{
    static const char *const h[] = {"Space", "show/hide", "K/J", "move",
                                    "Enter", "keep",      "Esc", "cancel"};
    (void)s;
    *pairs = h;
    return sizeof h / sizeof h[0] / 2;
}

static void cp_destroy(struct screen *s)
{
    free(s);
}

static const struct screen_ops colpick_ops = {
    .mode = "columns",
    .draw = cp_draw,
    .key = cp_key,
    .changed = cp_changed,
    .title = cp_title,
    .hints = cp_hints,
    .destroy = cp_destroy,
};

/* Opens the columns list over v. */
static void colpick_open(struct jobs_view *v)
{
    struct colpick *p = xcalloc(1, sizeof *p);
    p->base.ops = &colpick_ops;
    p->base.app = v->base.app;
    p->base.dirty = true;
    p->v = v;
    bool listed[COL_COUNT] = {false};
    size_t n = 0, order[COL_COUNT];
    size_t norder = choice(v, order);
    for (size_t i = 0; i < norder; i++) {
        p->order[n] = order[i];
        p->on[n++] = true;
        listed[order[i]] = true;
    }
    for (size_t c = 0; c < COL_COUNT; c++)
        if (!listed[c])
            p->order[n++] = c;
    monitor_push(v->base.app, &p->base);
}

static unsigned jv_key(struct screen *s, const struct widget_key *k, const char *action)
{
    struct jobs_view *v = view(s);
    struct monitor *m = s->app;
    bool ro = monitor_readonly(m);
    if (action) {
        if (strcmp(action, "open") == 0) {
            act(v, MONITOR_OPEN, false);
            return WIDGET_HANDLED;
        }
        if (strcmp(action, "filter") == 0) {
            monitor_ask(m, "Filter jobs", "text, or terms like state=FAILED (empty: all)",
                        table_filter(v->table), on_filter, v);
            return WIDGET_HANDLED;
        }
        if (strcmp(action, "copy-name") == 0) { /* the name alone: what a CLI takes */
            size_t row;
            uint64_t key;
            if (table_cursor_row(v->table, &row, &key))
                monitor_copy(m, v->rows[row]->name);
            else
                monitor_status(m, true, "no job here");
            return WIDGET_HANDLED;
        }
        if (strcmp(action, "columns") == 0) {
            colpick_open(v);
            return WIDGET_HANDLED | WIDGET_REDRAW;
        }
        if (strcmp(action, "new-job") == 0 && v->multi) {
            /* A new job goes to the cursor row's context; the app runs the wizard. */
            size_t row;
            uint64_t key;
            if (table_cursor_row(v->table, &row, &key))
                monitor_focus_context(m, v->ctx_of[row]);
            return WIDGET_IGNORED;
        }
        if (strcmp(action, "mine") == 0) {
            const char *me = monitor_user(m);
            for (size_t c = 0; v->multi && me == NULL && c < monitor_context_count(m); c++)
                me = monitor_context_user(m, c);
            if (me == NULL && !v->mine_only) {
                monitor_status(m, true, "this backend does not say who you are: no \"mine\"");
                return WIDGET_HANDLED;
            }
            v->mine_only = !v->mine_only;
            rebuild(v);
            if (v->mine_only)
                monitor_status(m, false, "showing the jobs %s created only", me);
            else
                monitor_status(m, false, "showing every user's jobs");
            return WIDGET_HANDLED | WIDGET_REDRAW;
        }
        if (strcmp(action, "faulty-only") == 0) {
            v->faulty_only = !v->faulty_only;
            rebuild(v);
            monitor_status(m, false,
                           v->faulty_only ? "showing faulty jobs only" : "showing all jobs");
            return WIDGET_HANDLED | WIDGET_REDRAW;
        }
        /* The table's own keys, bound by name (default.keys): the key it knows them by. */
        static const struct {
            const char *name;
            struct widget_key key;
        } table_keys[] = {
            {"mark", {.code = ' '}},      {"sort-prev", {.code = '<'}},
            {"sort-next", {.code = '>'}}, {"sort-reverse", {.code = KEY_F(6), .is_function = true}},
            {"top", {.code = 'g'}},       {"bottom", {.code = 'G'}},
        };
        for (size_t i = 0; i < sizeof table_keys / sizeof table_keys[0]; i++)
            if (strcmp(action, table_keys[i].name) == 0) {
                k = &table_keys[i].key;
                break;
            }
        static const struct {
            const char *name;
            enum monitor_action a;
            bool many;
        } acts[] = {
            {"stop-job", MONITOR_STOP, true},     {"start-job", MONITOR_START, true},
            {"delete-job", MONITOR_DELETE, true}, {"priority", MONITOR_PRIORITY, true},
            {"clone", MONITOR_CLONE, false},      {"save", MONITOR_SAVE, false},
        };
        for (size_t i = 0; i < sizeof acts / sizeof acts[0]; i++) {
            if (strcmp(action, acts[i].name) != 0)
                continue;
            if (ro) {
                monitor_status(m, true, "read-only: no actions here");
                return WIDGET_HANDLED;
            }
            act(v, acts[i].a, acts[i].many);
            return WIDGET_HANDLED;
        }
    }
    struct widget *tw = table_widget(v->table);
    unsigned r = tw->ops->key(tw, k);
    if (r & WIDGET_ACTIVATE)
        act(v, MONITOR_OPEN, false);
    if (r & WIDGET_REDRAW)
        s->dirty = true;
    return r;
}

static void jv_changed(struct screen *s)
{
    rebuild(view(s));
}

static const char *jv_title(struct screen *s)
{
    struct jobs_view *v = view(s);
    struct monitor *m = s->app;
    size_t counts[JOB_STATE_COUNT] = {0}, jobs = 0;
    for (size_t c = 0; c < monitor_context_count(m); c++) {
        struct jobstore *st = v->multi ? monitor_context_store(m, c) : monitor_store(m);
        size_t one[JOB_STATE_COUNT];
        jobstore_count_states(st, one);
        for (size_t k = 0; k < JOB_STATE_COUNT; k++)
            counts[k] += one[k];
        jobs += jobstore_count(st);
        if (!v->multi)
            break;
    }
    const char *f = table_filter(v->table);
    /* The cursor's row of the rows shown first: a dashboard never hides how many there are. */
    size_t shown = table_view_count(v->table);
    snprintf(v->title, sizeof v->title,
             "%zu/%zu  jobs %zu  running %zu  waiting %zu  failed %zu%s%s%s%s",
             shown ? table_cursor_pos(v->table) + 1 : 0, shown, jobs, counts[JOB_STATE_RUNNING],
             counts[JOB_STATE_QUEUEING] + counts[JOB_STATE_WAITING] + counts[JOB_STATE_INIT],
             counts[JOB_STATE_FAILED], v->faulty_only ? "  [faulty only]" : "",
             v->mine_only ? "  [mine]" : "", f && *f ? "  /" : "", f && *f ? f : "");
    return v->title;
}

static size_t jv_hints(struct screen *s, const char *const **pairs)
{
    /* Actions by name: the app shows the key the keymap binds (a user's rebinding too). */
    static const char *const rw[] = {
        "open",     "open", "filter",    "filter",  "faulty-only", "faulty", "mark",  "mark",
        "stop-job", "stop", "start-job", "start",   "delete-job",  "delete", "clone", "clone",
        "help",     "help", "command",   "command", "quit",        "quit"};
    static const char *const ro[] = {"open",        "open",   "filter",    "filter",
                                     "faulty-only", "faulty", "sort-next", "sort",
                                     "help",        "help",   "quit",      "quit"};
    bool readonly = monitor_readonly(s->app);
    *pairs = readonly ? ro : rw;
    return (readonly ? sizeof ro : sizeof rw) / sizeof(char *) / 2;
}

static void jv_destroy(struct screen *s)
{
    struct jobs_view *v = view(s);
    if (v->tick) /* armed only on a loop: the app is still there */
        loop_cancel(monitor_loop(s->app), v->tick);
    table_free(v->table);
    free(v->rows);
    free(v->ctx_of);
    free(v);
}

static const struct screen_ops jobs_view_ops = {
    .mode = "jobs",
    .draw = jv_draw,
    .key = jv_key,
    .changed = jv_changed,
    .title = jv_title,
    .hints = jv_hints,
    .destroy = jv_destroy,
};

struct screen *jobs_view_new(struct monitor *m)
{
    struct jobs_view *v = xcalloc(1, sizeof *v);
    v->base.ops = &jobs_view_ops;
    v->base.app = m;
    for (size_t c = 0; c < COL_DEFAULT_COUNT; c++)
        v->order[c] = c;
    v->norder = COL_DEFAULT_COUNT;
    v->default_cols = true;
    /* The user's columns; a bad file is said (file:line) and the defaults kept. */
    char *path = colconf_user_file(false);
    struct strbuf err = STRBUF_INIT;
    size_t order[COL_COUNT], n = 0;
    int rc = colconf_load(path, titles, former_titles, COL_COUNT, order, &n, &err);
    if (rc > 0) {
        memcpy(v->order, order, n * sizeof *order);
        v->norder = n;
        v->default_cols = false;
    } else if (rc < 0) {
        monitor_status(m, true, "%s (the default columns are shown)", strbuf_str(&err));
    }
    strbuf_free(&err);
    free(path);
    rebuild(v);
    return &v->base;
}
