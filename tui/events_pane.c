/*
 * events_pane: a job's events as lines; see events_pane.h.
 *
 * Owns one formatted entry per event it shows (at most EVENTS_PANE_MAX),
 * rebuilt only when the events it is given change (a hash of their ids),
 * and the scroll position: the id of the top entry, so entries arriving
 * below or merged in above (the history fetched on open) do not move what
 * the reader looks at.
 */
#include "tui/events_pane.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/strbuf.h"
#include "util/timefmt.h"
#include "util/utf8.h"
#include "util/xalloc.h"

#define KIND_CELLS 9         /* "scheduled", "preempted" */
#define MIN_MESSAGE_CELLS 12 /* narrower than this, wrapping under the message is pointless */

struct entry {
    int64_t id;
    char *text;     /* stamp, mark, kind, message: one line, sanitized */
    size_t msg_off; /* where the message starts in text */
    size_t stamp_len;
    int head_cells; /* cells before the message */
    enum events_pane_severity severity;
};

struct events_pane {
    struct entry *entries;
    size_t count;
    uint64_t hash; /* of the events last given, to skip rebuilding */
    bool have_hash;
    int64_t top_id; /* the entry at the top when not following */
    bool following, wrap, dirty, utf8;
    int last_w, last_h; /* of the last draw: key moves need them */
    const struct widget_palette *pal;
};

/* Short words for the kinds, so the message keeps the room. */
static const char *kind_word(enum job_event_kind k)
{
    switch (k) {
    case EVENT_CREATED:
        return "created";
    case EVENT_STATE:
        return "state";
    case EVENT_SCHEDULED:
        return "scheduled";
    case EVENT_WAITING:
        return "waiting";
    case EVENT_FAULT:
        return "fault";
    case EVENT_PREEMPTED:
        return "preempted";
    case EVENT_NODE_MARKED:
        return "node";
    case EVENT_STOPPED:
        return "stopped";
    case EVENT_STARTED:
        return "started";
    case EVENT_WORKER:
        return "worker";
    case EVENT_UPDATED:
        return "updated";
    case EVENT_UNSPECIFIED:
        break;
    }
    return "event";
}

enum events_pane_severity events_pane_classify(const struct job_event *e)
{
    switch (e->kind) {
    case EVENT_FAULT:
        /* The policy gave up on the job, or restarts it: error, else warning. */
        if ((e->action && strcmp(e->action, "FAIL_JOB") == 0) ||
            (e->message && strstr(e->message, "job failed")))
            return EVENTS_PANE_ERROR;
        return EVENTS_PANE_WARNING;
    case EVENT_STATE:
        return e->state == JOB_STATE_FAILED ? EVENTS_PANE_ERROR : EVENTS_PANE_INFO;
    case EVENT_PREEMPTED:
    case EVENT_NODE_MARKED:
        return EVENTS_PANE_WARNING;
    case EVENT_WORKER:
        return e->has_exit_code && e->exit_code != 0 ? EVENTS_PANE_WARNING : EVENTS_PANE_INFO;
    default:
        return EVENTS_PANE_INFO;
    }
}

static uint64_t events_hash(const struct job_event *ev, size_t n)
{
    uint64_t h = UINT64_C(14695981039346656037) ^ n;
    for (size_t i = 0; i < n; i++) {
        uint64_t v = (uint64_t)ev[i].id * 31u + (uint64_t)ev[i].kind;
        for (int b = 0; b < 8; b++)
            h = (h ^ ((v >> (b * 8)) & 0xFF)) * UINT64_C(1099511628211);
    }
    return h;
}

/* Local calendar time of an RFC 3339 stamp; false when it does not parse. */
static bool local_time(const char *rfc3339, struct tm *out)
{
    int64_t ms = rfc3339 ? time_parse_rfc3339(rfc3339) : -1;
    if (ms < 0)
        return false;
    time_t t = (time_t)(ms / 1000);
    return localtime_r(&t, out) != NULL;
}

static bool same_day(const struct tm *a, const struct tm *b)
{
    return a->tm_year == b->tm_year && a->tm_yday == b->tm_yday;
}

/* The event's own sentence, or one made from its fields when the server sent none. */
static void add_message(struct strbuf *out, const struct job_event *e)
{
    const char *m = e->message;
    struct strbuf made = STRBUF_INIT;
    if (!m || !*m) {
        if (e->kind == EVENT_STATE)
            strbuf_addf(&made, "→ %s", enum_name(&job_state_names, (int)e->state));
        else if (e->worker)
            strbuf_adds(&made, e->worker);
        m = strbuf_str(&made);
    }
    utf8_sanitize(out, m, strlen(m), 0);
    strbuf_free(&made);
}

static void format_entry(struct entry *en, const struct job_event *e, bool with_date, bool utf8)
{
    struct strbuf sb = STRBUF_INIT;
    struct tm tm;
    char stamp[32] = "--:--:--";
    if (local_time(e->time, &tm))
        strftime(stamp, sizeof stamp, with_date ? "%m-%d %H:%M:%S" : "%H:%M:%S", &tm);
    else if (with_date)
        snprintf(stamp, sizeof stamp, "--.-- --:--:--");
    en->id = e->id;
    en->severity = events_pane_classify(e);
    strbuf_adds(&sb, stamp);
    en->stamp_len = sb.len;
    const char *mark = en->severity == EVENTS_PANE_ERROR     ? (utf8 ? "✗" : "x")
                       : en->severity == EVENTS_PANE_WARNING ? "!"
                                                             : " ";
    strbuf_addf(&sb, " %s %-*s ", mark, KIND_CELLS, kind_word(e->kind));
    en->msg_off = sb.len;
    en->head_cells = (int)utf8_width(sb.buf, sb.len);
    add_message(&sb, e);
    en->text = strbuf_detach(&sb, NULL);
}

static void clear_entries(struct events_pane *p)
{
    for (size_t i = 0; i < p->count; i++)
        free(p->entries[i].text);
    free(p->entries);
    p->entries = NULL;
    p->count = 0;
}

struct events_pane *events_pane_new(void)
{
    struct events_pane *p = xcalloc(1, sizeof *p);
    p->following = true;
    p->wrap = true;
    p->dirty = true;
    p->last_w = 80;
    p->last_h = 10;
    return p;
}

void events_pane_free(struct events_pane *p)
{
    if (!p)
        return;
    clear_entries(p);
    free(p);
}

void events_pane_set_style(struct events_pane *p, const struct widget_palette *pal, bool utf8)
{
    if (p->utf8 != utf8)
        p->have_hash = false; /* the marks are in the text */
    p->pal = pal;
    p->utf8 = utf8;
    p->dirty = true;
}

void events_pane_set_events(struct events_pane *p, const struct job_event *ev, size_t n)
{
    if (n > EVENTS_PANE_MAX) {
        ev += n - EVENTS_PANE_MAX;
        n = EVENTS_PANE_MAX;
    }
    uint64_t h = events_hash(ev, n);
    if (p->have_hash && h == p->hash)
        return;
    clear_entries(p);
    struct tm now, tm;
    time_t t = (time_t)(time_now_ms() / 1000);
    localtime_r(&t, &now);
    bool with_date = false;
    for (size_t i = 0; i < n && !with_date; i++)
        with_date = local_time(ev[i].time, &tm) && !same_day(&tm, &now);
    p->entries = n ? xcalloc(n, sizeof *p->entries) : NULL;
    for (size_t i = 0; i < n; i++)
        format_entry(&p->entries[i], &ev[i], with_date, p->utf8);
    p->count = n;
    p->hash = h;
    p->have_hash = true;
    p->dirty = true;
}

size_t events_pane_count(const struct events_pane *p)
{
    return p->count;
}

const char *events_pane_text(const struct events_pane *p, size_t i)
{
    return i < p->count ? p->entries[i].text : NULL;
}

enum events_pane_severity events_pane_severity_of(const struct events_pane *p, size_t i)
{
    return i < p->count ? p->entries[i].severity : EVENTS_PANE_INFO;
}

void events_pane_set_wrap(struct events_pane *p, bool wrap)
{
    p->wrap = wrap;
    p->dirty = true;
}

bool events_pane_wrapping(const struct events_pane *p)
{
    return p->wrap;
}

bool events_pane_following(const struct events_pane *p)
{
    return p->following;
}

bool events_pane_dirty(const struct events_pane *p)
{
    return p->dirty;
}

/* Whether entries wrap under their message column at width w. */
static bool wraps_at(const struct events_pane *p, const struct entry *en, int w)
{
    return p->wrap && w - en->head_cells >= MIN_MESSAGE_CELLS;
}

/* Rows entry takes at width w. */
static int entry_rows(const struct events_pane *p, const struct entry *en, int w)
{
    if (!wraps_at(p, en, w))
        return 1;
    const char *m = en->text + en->msg_off;
    size_t n = strlen(m), len;
    int rows = 0;
    do {
        size_t next = widget_wrap_line(m, n, w - en->head_cells, &len);
        m += next;
        n -= next;
        rows++;
    } while (n > 0);
    return rows;
}

/* The top entry that shows the newest one whole in h rows (the last alone when it cannot). */
static size_t end_top(const struct events_pane *p, int w, int h)
{
    size_t top = p->count;
    int used = 0;
    while (top > 0) {
        used += entry_rows(p, &p->entries[top - 1], w);
        if (used > h && top < p->count)
            break;
        top--;
    }
    return top < p->count ? top : (p->count ? p->count - 1 : 0);
}

/* The index of the top entry now. */
static size_t top_index(const struct events_pane *p, int w, int h)
{
    size_t end = end_top(p, w, h);
    if (p->following)
        return end;
    for (size_t i = 0; i < p->count; i++)
        if (p->entries[i].id >= p->top_id)
            return i < end ? i : end;
    return end;
}

/* Draws entry en at (y, x) in at most rows rows (its end cut when fewer); returns the rows drawn.
 */
static int draw_entry(const struct events_pane *p, const struct entry *en, WINDOW *win, int y,
                      int x, int w, int rows)
{
    const struct widget_palette *pal = p->pal ? p->pal : widget_palette_mono();
    attr_t role = en->severity == EVENTS_PANE_ERROR     ? pal->error
                  : en->severity == EVENTS_PANE_WARNING ? pal->warning
                                                        : pal->normal;
    widget_set_role(win, pal->normal);
    widget_blank(win, y, x, w);
    widget_set_role(win, pal->dim);
    if (w <= (int)en->stamp_len) { /* too narrow for more than the time */
        widget_put_clipped(win, y, x, w, en->text, en->stamp_len, p->utf8);
        return 1;
    }
    widget_put_bytes(win, y, x, en->text, en->stamp_len);
    widget_set_role(win, role);
    const char *m = en->text + en->msg_off;
    size_t n = strlen(m);
    if (!wraps_at(p, en, w)) {
        /* The head, then the message cut at the edge. */
        size_t head = en->msg_off - en->stamp_len;
        int cells = (int)en->stamp_len;
        widget_put_clipped(win, y, x + cells, w - cells, en->text + en->stamp_len, head + n,
                           p->utf8);
        return 1;
    }
    widget_put_bytes(win, y, x + (int)en->stamp_len, en->text + en->stamp_len,
                     en->msg_off - en->stamp_len);
    int mw = w - en->head_cells, drawn = 0;
    do {
        size_t len, next = widget_wrap_line(m, n, mw, &len);
        if (drawn > 0) {
            widget_set_role(win, pal->normal);
            widget_blank(win, y + drawn, x, w);
            widget_set_role(win, role);
        }
        widget_put_bytes(win, y + drawn, x + en->head_cells, m, len);
        m += next;
        n -= next;
        drawn++;
    } while (n > 0 && drawn < rows);
    return drawn;
}

void events_pane_draw(struct events_pane *p, WINDOW *win, int y, int x, int h, int w)
{
    const struct widget_palette *pal = p->pal ? p->pal : widget_palette_mono();
    p->last_w = w;
    p->last_h = h;
    int row = 0;
    if (p->count == 0 && h > 0) {
        widget_set_role(win, pal->normal);
        widget_blank(win, y, x, w);
        widget_set_role(win, pal->dim);
        widget_put_text(win, y, x, "no events yet", w);
        row = 1;
    }
    for (size_t i = p->count ? top_index(p, w, h) : 0; i < p->count && row < h; i++)
        row += draw_entry(p, &p->entries[i], win, y + row, x, w, h - row);
    widget_set_role(win, pal->normal);
    for (; row < h; row++)
        widget_blank(win, y + row, x, w);
    p->dirty = false;
}

/* Puts entry i at the top (not following), or follows when i reaches the end's top. */
static unsigned scroll_to(struct events_pane *p, size_t i)
{
    size_t end = end_top(p, p->last_w, p->last_h);
    size_t cur = top_index(p, p->last_w, p->last_h);
    bool follow = i >= end;
    if (follow)
        i = end;
    if (i == cur && follow == p->following)
        return WIDGET_HANDLED;
    p->following = follow;
    p->top_id = p->count ? p->entries[i].id : 0;
    p->dirty = true;
    return WIDGET_HANDLED | WIDGET_REDRAW;
}

unsigned events_pane_key(struct events_pane *p, const struct widget_key *k)
{
    if (k->alt)
        return WIDGET_IGNORED;
    size_t cur = top_index(p, p->last_w, p->last_h);
    size_t page = p->last_h > 1 ? (size_t)p->last_h - 1 : 1;
    int c = k->code;
    if (k->is_function) {
        switch (c) {
        case KEY_UP:
            return scroll_to(p, cur ? cur - 1 : 0);
        case KEY_DOWN:
            return scroll_to(p, cur + 1);
        case KEY_PPAGE:
            return scroll_to(p, cur > page ? cur - page : 0);
        case KEY_NPAGE:
            return scroll_to(p, cur + page);
        case KEY_HOME:
            return scroll_to(p, 0);
        case KEY_END:
            return scroll_to(p, p->count);
        default:
            return WIDGET_IGNORED;
        }
    }
    switch (c) {
    case 'k':
        return scroll_to(p, cur ? cur - 1 : 0);
    case 'j':
        return scroll_to(p, cur + 1);
    case 'g':
        return scroll_to(p, 0);
    case 'G':
        return scroll_to(p, p->count);
    case 'w':
        events_pane_set_wrap(p, !p->wrap);
        return WIDGET_HANDLED | WIDGET_REDRAW;
    default:
        return WIDGET_IGNORED;
    }
}
