/*
 * workers_pane: the job screen's table of workers; see workers_pane.h.
 *
 * The pane owns a table and a scratch strbuf for sanitizing; the rows are
 * the store's (a struct worker_list it holds by pointer). Cells are made
 * on demand, only for the rows on the screen, so 1,000 workers cost what
 * 20 do.
 */
#include "tui/workers_pane.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/exitcodes.h"
#include "tui/jobfmt.h"
#include "util/strbuf.h"
#include "util/timefmt.h"
#include "util/utf8.h"
#include "util/xalloc.h"
#include "widgets/table.h"

struct workers_pane {
    struct table *table;
    const struct worker_list *workers; /* the store's; NULL: none */
    int64_t now_ms;
    const struct widget_palette *pal;
    bool utf8;
};

static const struct table_column columns[WORKERS_COL_COUNT] = {
    [WORKERS_COL_NAME] = {"NAME", 6, 24, false},
    [WORKERS_COL_ROLE] = {"ROLE", 4, 6, false},
    [WORKERS_COL_NODE] = {"NODE", 4, 18, false},
    [WORKERS_COL_PHASE] = {"PHASE", 5, 11, false},
    [WORKERS_COL_RESTARTS] = {"RESTARTS", 3, 8, true},
    /* its last end of its own and the fault decision, else (ACP) the exit it reports */
    [WORKERS_COL_EXIT] = {"LAST STATE", 4, 0, false},
    /* which devices a worker holds now ("0,1"): not DEVICES, the count a job asks for */
    [WORKERS_COL_DEVICES] = {"HELD DEVICES", 3, 14, false},
    [WORKERS_COL_AGE] = {"AGE", 3, 5, true},
};

/* Writes outside text into buf (size > 0) made safe for the terminal, cut at a whole character. */
static void clean_into(char *buf, size_t size, const char *s)
{
    struct strbuf sb = STRBUF_INIT;
    utf8_sanitize(&sb, s ? s : "", s ? strlen(s) : 0, 0);
    size_t n = sb.len < size ? sb.len : size - 1;
    while (n > 0 && n < sb.len && ((unsigned char)sb.buf[n] & 0xC0) == 0x80)
        n--; /* sb.buf[n] would start the part cut off */
    if (n > 0)
        memcpy(buf, sb.buf, n);
    buf[n] = '\0';
    strbuf_free(&sb);
}

void workers_pane_exit_text(const struct worker_info *w, char *buf, size_t size)
{
    if (!w->has_exit_code) {
        snprintf(buf, size, "-");
        return;
    }
    /* The server's word first (it may know more: "OOMKilled"); else ours. */
    const char *meaning =
        w->exit_reason && *w->exit_reason ? w->exit_reason : exitcode_meaning(w->exit_code);
    char raw[256];
    if (meaning && w->exit_code != 0)
        snprintf(raw, sizeof raw, "%d %s", (int)w->exit_code, meaning);
    else
        snprintf(raw, sizeof raw, "%d", (int)w->exit_code);
    clean_into(buf, size, raw);
}

/* compact: the cell's form, "… 5s" (the pane's title has "… 5s ago"). */
static void last_text(const struct worker_info *w, int64_t now_ms, bool compact, char *buf,
                      size_t size)
{
    if (!w->last_state.present) {
        workers_pane_exit_text(w, buf, size);
        return;
    }
    struct strbuf raw = STRBUF_INIT;
    worker_last_state_text(&w->last_state, now_ms, compact, &raw);
    clean_into(buf, size, raw.len ? strbuf_str(&raw) : "-");
    strbuf_free(&raw);
}

void workers_pane_last_text(const struct worker_info *w, int64_t now_ms, char *buf, size_t size)
{
    last_text(w, now_ms, false, buf, size);
}

static const struct worker_info *worker_at(const struct workers_pane *p, size_t row)
{
    return p->workers && row < p->workers->count ? &p->workers->workers[row] : NULL;
}

/* When the worker started (else was created), in unix ms; -1 when neither parses. */
static int64_t worker_since(const struct worker_info *w)
{
    int64_t t = w->start_time ? time_parse_rfc3339(w->start_time) : -1;
    return t >= 0 ? t : (w->create_time ? time_parse_rfc3339(w->create_time) : -1);
}

static size_t src_count(void *ctx)
{
    const struct workers_pane *p = ctx;
    return p->workers ? p->workers->count : 0;
}

static const char *src_cell(void *ctx, size_t row, size_t col, char *scratch, size_t n)
{
    struct workers_pane *p = ctx;
    const struct worker_info *w = worker_at(p, row);
    if (!w)
        return "";
    switch ((enum workers_column)col) {
    case WORKERS_COL_NAME:
        clean_into(scratch, n, w->name);
        return scratch;
    case WORKERS_COL_ROLE:
        clean_into(scratch, n, w->role && *w->role ? w->role : "-");
        return scratch;
    case WORKERS_COL_NODE:
        clean_into(scratch, n, w->node_name && *w->node_name ? w->node_name : "-");
        return scratch;
    case WORKERS_COL_PHASE: /* a phase trainjob does not know, as the server said it */
        clean_into(scratch, n, worker_phase_text(w));
        return scratch;
    case WORKERS_COL_RESTARTS:
        snprintf(scratch, n, "%d", (int)w->restarts);
        return scratch;
    case WORKERS_COL_EXIT:
        last_text(w, p->now_ms, true, scratch, n); /* at 80 columns "ago" was cut to "a…" */
        return scratch;
    case WORKERS_COL_DEVICES: {
        /* Simulated devices say so in words: the colour alone would not. ACP's: from limits. */
        struct strbuf raw = STRBUF_INIT;
        worker_devices_text(w, &raw);
        clean_into(scratch, n, raw.len ? strbuf_str(&raw) : "-");
        strbuf_free(&raw);
        return scratch;
    }
    case WORKERS_COL_AGE:
        jobfmt_age(worker_since(w), p->now_ms, scratch, n);
        return scratch;
    case WORKERS_COL_COUNT:
        break;
    }
    return "";
}

static attr_t src_attr(void *ctx, size_t row, size_t col)
{
    const struct workers_pane *p = ctx;
    const struct worker_info *w = worker_at(p, row);
    const struct widget_palette *pal = p->pal ? p->pal : widget_palette_mono();
    if (!w)
        return 0;
    /* A worker trainjobd stopped (its phase "Stopped") ended as asked: no error. */
    bool stopped = worker_info_stopped(w);
    if (col == WORKERS_COL_EXIT && w->has_exit_code && w->exit_code != 0 && !stopped)
        return pal->error;
    /* running again after a failure: the failure is news, not an error now */
    if (col == WORKERS_COL_EXIT && w->last_state.present && w->last_state.exit_code != 0)
        return pal->warning;
    if (col == WORKERS_COL_PHASE && w->phase == WORKER_FAILED)
        return pal->error;
    if (col == WORKERS_COL_RESTARTS && w->restarts > 0)
        return pal->warning;
    return 0;
}

/* FNV-1a of the worker's name (unique within a job), so the cursor stays on its worker. */
static uint64_t src_key(void *ctx, size_t row)
{
    const struct worker_info *w = worker_at(ctx, row);
    if (!w || !w->name || !*w->name)
        return (uint64_t)row + 1; /* a server that names no worker: its place, then */
    uint64_t h = UINT64_C(14695981039346656037);
    for (const char *s = w->name; *s; s++)
        h = (h ^ (unsigned char)*s) * UINT64_C(1099511628211);
    return h;
}

static const struct table_source source = {
    .count = src_count,
    .cell = src_cell,
    .cell_attr = src_attr,
    .row_key = src_key,
};

struct workers_pane *workers_pane_new(void)
{
    struct workers_pane *p = xcalloc(1, sizeof *p);
    p->table = table_new(&source, p, columns, WORKERS_COL_COUNT);
    /* At 80 columns a "-" under HELD DEVICES and a 0 under RESTARTS give LAST STATE their room. */
    table_set_short_title(p->table, WORKERS_COL_DEVICES, "HELD");
    table_set_short_title(p->table, WORKERS_COL_RESTARTS, "RST");
    table_set_empty_text(p->table, "no workers yet");
    return p;
}

void workers_pane_free(struct workers_pane *p)
{
    if (!p)
        return;
    table_free(p->table);
    free(p);
}

void workers_pane_set_style(struct workers_pane *p, const struct widget_palette *pal, bool utf8)
{
    p->pal = pal;
    p->utf8 = utf8;
    table_set_palette(p->table, pal);
    table_set_utf8(p->table, utf8);
}

void workers_pane_set_workers(struct workers_pane *p, const struct worker_list *wl, int64_t now_ms)
{
    p->workers = wl;
    p->now_ms = now_ms;
    table_refresh(p->table);
}

void workers_pane_set_now(struct workers_pane *p, int64_t now_ms)
{
    p->now_ms = now_ms;
}

void workers_pane_draw(struct workers_pane *p, WINDOW *win, int y, int x, int h, int w,
                       bool focused)
{
    struct widget *wd = table_widget(p->table);
    table_set_height(p->table, h);
    wd->ops->draw(wd, win, y, x, w, focused);
}

void workers_pane_invalidate(struct workers_pane *p)
{
    table_invalidate(p->table);
}

unsigned workers_pane_key(struct workers_pane *p, const struct widget_key *k)
{
    struct widget *wd = table_widget(p->table);
    return wd->ops->key(wd, k);
}

const struct worker_info *workers_pane_selected(const struct workers_pane *p)
{
    size_t row;
    if (!table_cursor_row(p->table, &row, NULL))
        return NULL;
    return worker_at(p, row);
}

bool workers_pane_select(struct workers_pane *p, const char *name)
{
    for (size_t i = 0; p->workers && i < p->workers->count; i++)
        if (p->workers->workers[i].name && strcmp(p->workers->workers[i].name, name) == 0)
            return table_set_cursor_key(p->table, src_key(p, i));
    return false;
}

struct table *workers_pane_table(struct workers_pane *p)
{
    return p->table;
}
