/*
 * monitor: the live screens' app — the loop, the screen stack, the frame
 * (title bar with the feed's state, status line, key bar), prompts,
 * confirm dialogs, help and keys; the actions are tui/actions.c, the `:`
 * command line tui/commands.c, the contexts in view (one, or several in
 * one jobs view) tui/monitor_contexts.c (they share tui/monitor_app.h). This core
 * calls neither, nor any screen, but through the monitor_parts tui/top.c
 * hands it. See app.h.
 *
 * Drawing happens in one place (draw_frame), at the end of a loop turn in
 * which something set `dirty`; callbacks from the network, timers and
 * keys only change state. While the feed is lost a one-second timer keeps
 * the "data from 12 s ago" age current; while it is live, nothing wakes
 * the process but the stream and the keyboard.
 */
#include "tui/monitor_app.h"

#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/autostart.h"
#include "api/backend.h"
#include "api/catalog.h"
#include "api/context.h"
#include "api/http_multi.h"
#include "api/session.h"
#include "tui/feed.h"
#include "tui/help.h"
#include "tui/jobstore.h"
#include "tui/keymap.h"
#include "tui/prompt.h"
#include "tui/term.h"
#include "util/loop.h"
#include "util/strbuf.h"
#include "util/timefmt.h"
#include "util/utf8.h"
#include "util/xalloc.h"
#include "widgets/dialog.h"
#include "widgets/keybar.h"

#define PAIRS_MAX 16

const struct term *monitor_term(const struct monitor *m)
{
    return &m->term;
}

struct jobstore *monitor_store(struct monitor *m)
{
    return monitor_cur(m)->store;
}

struct backend *monitor_backend(struct monitor *m)
{
    return monitor_cur(m)->session.b;
}

struct http_multi *monitor_multi(struct monitor *m)
{
    return m->multi;
}

struct loop *monitor_loop(struct monitor *m)
{
    return m->loop;
}

bool monitor_readonly(const struct monitor *m)
{
    return m->readonly;
}

bool monitor_action_allowed(const struct monitor *m, enum keymap_action a)
{
    static const enum keymap_action changes[] = {
        KEYMAP_NEW_JOB,  KEYMAP_STOP_JOB, KEYMAP_START_JOB, KEYMAP_DELETE_JOB,
        KEYMAP_PRIORITY, KEYMAP_CLONE,    KEYMAP_SAVE,      KEYMAP_MARK_NODE,
    };
    if (!m->readonly)
        return true;
    for (size_t i = 0; i < sizeof changes / sizeof changes[0]; i++)
        if (changes[i] == a)
            return false;
    return true;
}

/* help_new_for's shown: what monitor_action_allowed says. */
static bool help_shows(void *ctx, enum keymap_action a)
{
    return monitor_action_allowed(ctx, a);
}

const char *monitor_user(const struct monitor *m)
{
    return m->ctx[m->focus].catalog.user;
}

void monitor_dirty(struct monitor *m)
{
    m->dirty = true;
}

/* ---- the status line -------------------------------------------------------- */

/* The number of the screen on top (0: none yet). */
static uint64_t top_id(const struct monitor *m)
{
    return m->depth ? m->screen_ids[m->depth - 1] : 0;
}

/* Clears the status line and what it was tied to. */
static void status_clear(struct monitor *m)
{
    if (m->status[0])
        m->dirty = true;
    m->status[0] = '\0';
    m->status_error = false;
    free(m->status_about);
    m->status_about = NULL;
    if (m->status_timer && m->loop)
        loop_cancel(m->loop, m->status_timer);
    m->status_timer = 0;
}

static void on_status_expired(void *ctx)
{
    struct monitor *m = ctx;
    m->status_timer = 0;
    status_clear(m);
}

/* The state of job in the store, -1 when it is not there. */
static int job_state_of(struct monitor *m, const char *job)
{
    /* in the context the status was said in (the job's, for an action's reply) */
    size_t in = m->status_about_ctx < m->nctx ? m->status_about_ctx : m->focus;
    struct jobstore *store = m->nctx ? m->ctx[in].store : NULL;
    const struct job_row *r = store ? jobstore_find(store, job) : NULL;
    return r ? (int)r->state : -1;
}

/* A state a job only passes through on its way to the one a message is about. */
static bool passing_state(int st)
{
    return st == JOB_STATE_CREATING || st == JOB_STATE_STARTING || st == JOB_STATE_RESTARTING ||
           st == JOB_STATE_SUSPENDING || st == JOB_STATE_DELETING || st == JOB_STATE_RECOVERING;
}

/*
 * Clears a status that no longer describes what is on screen: said by a
 * screen no longer on top, or about a job that is gone or whose state moved
 * since to one it does not just pass through ("stopping 1 job" stays while
 * the job is SUSPENDING and goes once it is SUSPENDED).
 */
static void status_check(struct monitor *m)
{
    if (!m->status[0])
        return;
    if (m->status_screen && m->status_screen != top_id(m)) {
        status_clear(m);
        return;
    }
    if (m->status_about) {
        int st = job_state_of(m, m->status_about);
        if (st < 0 ? m->status_about_state >= 0 : st != m->status_about_state && !passing_state(st))
            status_clear(m);
    }
}

static void vstatus(struct monitor *m, const char *about, bool error, const char *fmt, va_list ap)
    __attribute__((format(printf, 4, 0)));

static void vstatus(struct monitor *m, const char *about, bool error, const char *fmt, va_list ap)
{
    status_clear(m);
    vsnprintf(m->status, sizeof m->status, fmt, ap);
    m->status_error = error;
    m->status_screen = top_id(m);
    if (about) {
        m->status_about = xstrdup(about);
        m->status_about_ctx = m->focus;
        m->status_about_state = job_state_of(m, about);
    }
    if (m->loop && m->status[0])
        m->status_timer =
            loop_add_timer(m->loop, error ? STATUS_ERROR_MS : STATUS_INFO_MS, on_status_expired, m);
    m->dirty = true;
}

void monitor_status(struct monitor *m, bool error, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vstatus(m, NULL, error, fmt, ap);
    va_end(ap);
}

void monitor_status_about(struct monitor *m, const char *job, bool error, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vstatus(m, job, error, fmt, ap);
    va_end(ap);
}

struct screen *monitor_top(struct monitor *m)
{
    return m->depth ? m->screens[m->depth - 1] : NULL;
}

void monitor_push(struct monitor *m, struct screen *s)
{
    if (m->depth == MAX_SCREENS) {
        s->ops->destroy(s);
        return;
    }
    m->screen_ids[m->depth] = ++m->next_screen_id;
    m->screen_ctx[m->depth] = m->focus;
    m->screens[m->depth++] = s;
    m->dirty = m->full = true;
}

void monitor_pop(struct monitor *m)
{
    if (m->depth <= 1) {
        m->quit = true;
        return;
    }
    struct screen *s = m->screens[--m->depth];
    s->ops->destroy(s);
    m->focus = m->screen_ctx[m->depth - 1]; /* the context of the screen now on top */
    monitor_top(m)->ops->changed(monitor_top(m));
    m->dirty = m->full = true;
}

void monitor_open_job(struct monitor *m, const char *name)
{
    if (m->parts == NULL) {
        monitor_status(m, true, "no job screen here");
        return;
    }
    monitor_push(m, m->parts->job_screen(m, name));
}

void monitor_open_job_in(struct monitor *m, size_t ctx, const char *name)
{
    size_t was = m->focus;
    if (ctx < m->nctx)
        m->focus = ctx; /* the job screen, made and pushed now, works in ctx */
    monitor_open_job(m, name);
    if (monitor_top(m) == NULL || m->screen_ctx[m->depth - 1] != m->focus)
        m->focus = was;
}

void monitor_set_names_in(struct monitor *m, const char *const *names, const size_t *ctxs, size_t n)
{
    for (size_t i = 0; i < m->name_count; i++)
        free(m->names[i]);
    free(m->names);
    free(m->name_ctx);
    m->names = xcalloc(n ? n : 1, sizeof *m->names);
    m->name_ctx = xcalloc(n ? n : 1, sizeof *m->name_ctx);
    for (size_t i = 0; i < n; i++) {
        m->names[i] = xstrdup(names[i]);
        m->name_ctx[i] = ctxs && ctxs[i] < m->nctx ? ctxs[i] : m->focus;
    }
    m->name_count = n;
}

void monitor_set_names(struct monitor *m, const char *const *names, size_t n)
{
    monitor_set_names_in(m, names, NULL, n);
}

void monitor_ask(struct monitor *m, const char *title, const char *hint, const char *initial,
                 void (*answer)(void *ctx, const char *text), void *ctx)
{
    prompt_free(m->prompt);
    m->prompt = prompt_new(title, hint, initial);
    m->prompt_answer = answer;
    m->prompt_ctx = ctx;
    m->dirty = true;
}

void monitor_choose(struct monitor *m, const char *title, const char *hint,
                    const char *const *options, size_t n, size_t selected,
                    void (*answer)(void *ctx, const char *text), void *ctx)
{
    prompt_free(m->prompt);
    m->prompt = prompt_new_choice(title, hint, options, n, selected);
    m->prompt_answer = answer;
    m->prompt_ctx = ctx;
    m->dirty = true;
}

/* text as base64 (RFC 4648, padded) onto out. */
static void base64(struct strbuf *out, const unsigned char *s, size_t n)
{
    static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)s[i] << 16 | (i + 1 < n ? (unsigned)s[i + 1] << 8 : 0) |
                     (i + 2 < n ? s[i + 2] : 0);
        char q[4] = {abc[v >> 18 & 63], abc[v >> 12 & 63], i + 1 < n ? abc[v >> 6 & 63] : '=',
                     i + 2 < n ? abc[v & 63] : '='};
        strbuf_add(out, q, 4);
    }
}

void monitor_copy(struct monitor *m, const char *text)
{
    size_t n = strlen(text);
    if (n > 65536) {
        monitor_status(m, true, "too long to copy (%zu bytes)", n);
        return;
    }
    /* OSC 52: the terminal (or tmux with set-clipboard) puts it on the clipboard; the
     * text goes as base64, so nothing in it can reach the terminal as a sequence. */
    struct strbuf seq = STRBUF_INIT;
    strbuf_adds(&seq, "\033]52;c;");
    base64(&seq, (const unsigned char *)text, n);
    strbuf_adds(&seq, "\a");
    fwrite(seq.buf, 1, seq.len, stdout);
    fflush(stdout);
    strbuf_free(&seq);
    monitor_status(m, false, "copied %s to the clipboard (OSC 52, where the terminal allows it)",
                   text);
}

void monitor_confirm(struct monitor *m, const char *title, const char *question, confirm_fn yes)
{
    if (m->dialog)
        dialog_free(m->dialog);
    m->dialog = dialog_new(title, question, false);
    dialog_set_palette(m->dialog, &m->term.palette);
    m->dialog_yes = yes;
    m->dirty = true;
}

/* ---- the feed and the frame ------------------------------------------------ */

static void on_age_tick(void *ctx);

/* While the data is not live, tick once a second so its age on screen stays true. */
static void plan_age_tick(struct monitor *m)
{
    bool want = false;
    for (size_t i = 0; i < m->nctx; i++) {
        enum feed_state st = feed_state(m->ctx[i].feed);
        want |= st == FEED_LOST || st == FEED_CONNECTING;
    }
    if (want && m->age_timer == 0)
        m->age_timer = loop_add_timer(m->loop, 1000, on_age_tick, m);
    if (!want && m->age_timer) {
        loop_cancel(m->loop, m->age_timer);
        m->age_timer = 0;
    }
}

static void on_age_tick(void *ctx)
{
    struct monitor *m = ctx;
    m->age_timer = 0;
    m->dirty = true;
    plan_age_tick(m);
}

/* The context whose store has the job to open once seen, or SIZE_MAX: none yet. */
static size_t open_when_seen_in(struct monitor *m)
{
    for (size_t i = 0; i < m->nctx; i++)
        if ((m->open_ctx == SIZE_MAX || m->open_ctx == i) &&
            jobstore_find(m->ctx[i].store, m->open_when_seen))
            return i;
    return SIZE_MAX;
}

void monitor_feed_changed(void *ctx)
{
    struct monitor *m = ctx;
    size_t in = m->open_when_seen ? open_when_seen_in(m) : SIZE_MAX;
    if (in != SIZE_MAX) {
        const char *name = m->open_when_seen;
        m->open_when_seen = NULL;
        while (m->depth > 1)
            monitor_pop(m);
        monitor_open_job_in(m, in, name);
        free((char *)name);
    }
    /* The screens re-read the store when the next frame is drawn: a burst of
     * watch messages (a first sync of 10,000 jobs) costs one refresh a frame. */
    char warning[256];
    for (size_t i = 0; i < m->nctx; i++)
        if (m->ctx[i].feed && feed_take_warning(m->ctx[i].feed, warning, sizeof warning)) {
            if (monitor_multi_view(m))
                monitor_status(m, true, "%s: %s", monitor_context_name(m, i), warning);
            else
                monitor_status(m, true, "%s", warning);
        }
    m->store_changed = true;
    plan_age_tick(m);
    m->dirty = true;
}

/*
 * Text of the feed's state for the title bar (buf), the same without the
 * reason (brief: for a bar too narrow for both the header and the reason,
 * which then goes to the status line), and the feed's bad news: 0 none,
 * 1 disconnected (retrying), 2 refused (not retried: an error, not a lost
 * connection).
 */
/*
 * Whether c's feed is down because its local engine was stopped on purpose:
 * then the marker's words ("by NAME (uid N) at TIME", the caller's), else NULL.
 */
static char *stopped_engine(const struct monitor_ctx *c)
{
    if (c->feed == NULL || feed_state(c->feed) != FEED_LOST || !c->session.rc.may_autostart)
        return NULL;
    return autostart_stopped_note();
}

static int feed_text(struct monitor *m, struct feed *feed, char *buf, size_t n, char *brief,
                     size_t bn)
{
    int64_t now = loop_now_ms();
    char age[16], retry[16];
    int64_t fresh = feed_fresh_at(feed);
    time_age(fresh ? now - fresh : 0, age, sizeof age);
    int64_t next = feed_next_try(feed);
    time_age(next > now ? next - now + 999 : 0, retry, sizeof retry);
    bool utf8 = m->term.utf8;
    const char *x = utf8 ? "✗" : "x";
    switch (feed_state(feed)) {
    case FEED_CONNECTING:
        snprintf(buf, n, "%s connecting…", utf8 ? "○" : "o");
        break;
    case FEED_LIVE:
        snprintf(buf, n, "%s live", utf8 ? "●" : "*");
        break;
    case FEED_POLLING:
        snprintf(buf, n, "%s every %ds%s, %s ago", utf8 ? "◔" : "~",
                 feed_poll_interval_ms(feed) / 1000,
                 feed_poll_interval_ms(feed) > m->refresh_ms ? " (nothing changed)" : "", age);
        break;
    case FEED_LOST:
    case FEED_REFUSED: {
        bool lost = feed_state(feed) == FEED_LOST;
        char *note = lost ? stopped_engine(monitor_cur(m)) : NULL;
        if (note) { /* not a failure to retry: someone stopped it */
            snprintf(brief, bn, "%s engine stopped (X: start it)", x);
            snprintf(buf, n, "%s engine stopped on purpose (%s); press X to start it", x, note);
            free(note);
            return 1;
        }
        struct strbuf why = STRBUF_INIT;
        utf8_sanitize(&why, feed_error(feed), strlen(feed_error(feed)), 0);
        if (!lost)
            snprintf(brief, bn, "%s refused (r: ask again)", x);
        else if (fresh)
            snprintf(brief, bn, "%s DISCONNECTED: data from %s ago; retry in %s", x, age, retry);
        else
            snprintf(brief, bn, "%s DISCONNECTED: retry in %s", x, retry);
        snprintf(buf, n, "%s: %s", brief, strbuf_str(&why));
        strbuf_free(&why);
        return lost ? 1 : 2;
    }
    }
    snprintf(brief, bn, "%.*s", (int)bn - 1, buf);
    return 0;
}

/*
 * The same for a view over several contexts, one after the other: "local ✓",
 * "lab ○" while connecting, "lab ✗ DISCONNECTED (why)" or "lab ✗ refused
 * (why)"; brief without the reasons. The worst news of them is returned.
 */
static int feeds_text(struct monitor *m, char *buf, size_t n, char *brief, size_t bn)
{
    struct strbuf full = STRBUF_INIT, shortly = STRBUF_INIT;
    bool utf8 = m->term.utf8;
    int worst = 0;
    for (size_t i = 0; i < m->nctx; i++) {
        struct feed *f = m->ctx[i].feed;
        struct strbuf name = STRBUF_INIT;
        const char *raw = monitor_context_name(m, i);
        utf8_sanitize(&name, raw, strlen(raw), 0);
        const char *sep = i ? "  " : "";
        enum feed_state st = feed_state(f);
        if (st == FEED_LOST || st == FEED_REFUSED) {
            struct strbuf why = STRBUF_INIT;
            utf8_sanitize(&why, feed_error(f), strlen(feed_error(f)), 0);
            const char *what = st == FEED_LOST ? "DISCONNECTED" : "refused";
            strbuf_addf(&full, "%s%s %s %s (%s)", sep, strbuf_str(&name), utf8 ? "✗" : "x", what,
                        strbuf_str(&why));
            strbuf_addf(&shortly, "%s%s %s %s", sep, strbuf_str(&name), utf8 ? "✗" : "x", what);
            strbuf_free(&why);
            int bad = st == FEED_LOST ? 1 : 2;
            worst = bad > worst ? bad : worst;
        } else {
            const char *mark = st == FEED_CONNECTING ? (utf8 ? "○" : "o") : (utf8 ? "✓" : "+");
            strbuf_addf(&full, "%s%s %s", sep, strbuf_str(&name), mark);
            strbuf_addf(&shortly, "%s%s %s", sep, strbuf_str(&name), mark);
        }
        strbuf_free(&name);
    }
    snprintf(buf, n, "%s", strbuf_str(&full));
    snprintf(brief, bn, "%s", strbuf_str(&shortly));
    strbuf_free(&full);
    strbuf_free(&shortly);
    return worst;
}

/* The first reason a context in view is down for (raw), or "". */
static const char *first_down_reason(const struct monitor *m)
{
    for (size_t i = 0; i < m->nctx; i++) {
        const char *why;
        if (monitor_context_down(m, i, &why) && *why)
            return why;
    }
    return "";
}

/* Sanitized text at (y, x), at most w cells, in a. */
static void put(struct monitor *m, int y, int x, int w, const char *text, attr_t a)
{
    attrset(a);
    widget_put_clipped(stdscr, y, x, w, text, strlen(text), m->term.utf8);
}

static void fill_line(int y, int w, attr_t a)
{
    attrset(a);
    mvhline(y, 0, ' ', w);
}

static void draw_frame(struct monitor *m)
{
    int h = LINES, w = COLS;
    if (m->full) {
        erase();
        for (size_t i = 0; i < m->depth; i++)
            m->screens[i]->dirty = true;
    }
    struct screen *s = monitor_top(m);
    /* Title bar: where, what, and how current; the feed's state never writes over the rest. */
    char feed[1200], brief[600];
    bool multi = monitor_multi_view(m);
    int bad = multi ? feeds_text(m, feed, sizeof feed, brief, sizeof brief)
                    : feed_text(m, monitor_cur(m)->feed, feed, sizeof feed, brief, sizeof brief);
    attr_t bar = m->term.role[THEME_ROLE_TITLE];
    fill_line(0, w, bar);
    struct strbuf where = STRBUF_INIT;
    struct backend *b = monitor_cur(m)->session.b;
    const char *ws = b->target.workspace;
    if (multi && m->depth > 1) { /* a job screen: the context its job is in */
        const char *cn = monitor_context_name(m, m->focus);
        utf8_sanitize(&where, cn, strlen(cn), 0);
        strbuf_adds(&where, "/");
    }
    if (!multi || m->depth > 1) {
        utf8_sanitize(&where, ws ? ws : "", ws ? strlen(ws) : 0, 0);
        /* Which backend, when it is not the ACP family (trainjobd, SenseCore): "default · slurm".
         */
        if (strcmp(b->ops->name, "acp") != 0)
            strbuf_addf(&where, " · %s", b->ops->name);
    } else {
        strbuf_addf(&where, "%zu contexts", m->nctx);
    }
    char left[700];
    snprintf(left, sizeof left, " trainjob %s%s  %s  ", m->readonly ? "top " : "",
             strbuf_str(&where), s->ops->title(s));
    strbuf_free(&where);
    int lw = (int)utf8_width(left, strlen(left));
    const char *feed_shown = feed;
    int fw = (int)utf8_width(feed, strlen(feed));
    bool reason_below = false;
    if (lw + fw + 1 > w && bad) { /* the reason goes to the status line */
        feed_shown = brief;
        fw = (int)utf8_width(brief, strlen(brief));
        reason_below = true;
    }
    int fx = w - fw - 1 > 0 ? w - fw - 1 : 0;
    if (fx > 0)
        put(m, 0, 0, fx, left, bar);
    put(m, 0, fx, w - fx, feed_shown,
        bad == 1   ? m->term.role[THEME_ROLE_BANNER_DISCONNECTED]
        : bad == 2 ? m->term.role[THEME_ROLE_MESSAGE_ERROR]
                   : bar);
    /* The screen. */
    if (s->dirty || m->full) {
        s->ops->draw(s, stdscr, 1, 0, h - 3, w, m->full);
        s->dirty = false;
    }
    /* Status line and key bar. */
    fill_line(h - 2, w, m->term.palette.normal);
    status_check(m);
    const char *status = m->status;
    bool status_error = m->status_error;
    const char *hint = NULL; /* kept whole at the end of the status line */
    char *note = NULL;
    struct strbuf stopped = STRBUF_INIT;
    /*
     * What did not fit in the title bar, after a passing note ("workspace
     * nosuch: workspace 'nosuch' does not exist"), never over an error.
     */
    if ((!status[0] || !status_error) && reason_below) {
        if (status[0])
            strbuf_addf(&stopped, "%s: ", status);
        if (!multi && (note = stopped_engine(monitor_cur(m))) != NULL) {
            strbuf_addf(&stopped, "engine stopped on purpose (%s)", note);
            hint = "press X to start it";
        } else {
            const char *why = multi ? first_down_reason(m) : feed_error(monitor_cur(m)->feed);
            strbuf_adds(&stopped, why);
            if (!multi && feed_state(monitor_cur(m)->feed) == FEED_REFUSED)
                hint = "(r: ask again)";
        }
        status = strbuf_str(&stopped);
        status_error = true;
    }
    if (status[0] && hint) { /* the reason first, cut where it must, then the hint */
        struct strbuf st = STRBUF_INIT;
        utf8_sanitize(&st, status, strlen(status), 0);
        int hw = (int)utf8_width(hint, strlen(hint));
        int sw = (int)utf8_width(strbuf_str(&st), st.len);
        int room = w - 2 - hw - 1;
        if (room < 1) {
            put(m, h - 2, 1, w - 2, hint, m->term.role[THEME_ROLE_MESSAGE_ERROR]);
        } else {
            int rw = sw < room ? sw : room;
            put(m, h - 2, 1, rw, strbuf_str(&st), m->term.role[THEME_ROLE_MESSAGE_ERROR]);
            put(m, h - 2, 1 + rw + 1, w - 2 - rw - 1, hint, m->term.role[THEME_ROLE_MESSAGE_ERROR]);
        }
        strbuf_free(&st);
    } else if (status[0]) {
        struct strbuf st = STRBUF_INIT;
        utf8_sanitize(&st, status, strlen(status), 0);
        put(m, h - 2, 1, w - 2, strbuf_str(&st),
            status_error ? m->term.role[THEME_ROLE_MESSAGE_ERROR]
                         : m->term.role[THEME_ROLE_MESSAGE]);
        strbuf_free(&st);
    }
    free(note);
    strbuf_free(&stopped);
    const char *const *pairs = NULL;
    size_t np = s->ops->hints(s, &pairs);
    struct keybar_item items[PAIRS_MAX];
    char keyname[PAIRS_MAX][KEYMAP_KEY_NAME_MAX];
    if (np > PAIRS_MAX)
        np = PAIRS_MAX;
    const char *sub = s->ops->submode ? s->ops->submode(s) : NULL;
    size_t shown = 0;
    for (size_t i = 0; i < np; i++) {
        int a = keymap_action_from_name(pairs[2 * i]);
        const char *key = pairs[2 * i];
        if (a > 0) {
            /* The sub-mode's own key first (its bindings come first), then the mode's. */
            struct strbuf own = STRBUF_INIT;
            bool in_sub = sub && keymap_keys_for(m->keys, sub, (enum keymap_action)a, true, &own);
            if (in_sub)
                snprintf(keyname[i], sizeof keyname[i], "%.*s", (int)strcspn(strbuf_str(&own), ","),
                         strbuf_str(&own));
            strbuf_free(&own);
            if (!in_sub && !keymap_first_key(m->keys, s->ops->mode, (enum keymap_action)a,
                                             keyname[i], sizeof keyname[i]))
                continue; /* unbound: nothing to show */
            key = keyname[i];
        }
        items[shown++] = (struct keybar_item){key, pairs[2 * i + 1]};
    }
    np = shown;
    struct keybar *kb = keybar_new(items, np);
    keybar_set_palette(kb, &m->term.palette);
    fill_line(h - 1, w, m->term.palette.normal);
    struct widget *kw = keybar_widget(kb);
    kw->ops->draw(kw, stdscr, h - 1, 0, w, false);
    keybar_free(kb);
    attrset(A_NORMAL);
    wnoutrefresh(stdscr);
    if (m->dialog)
        dialog_draw(m->dialog);
    if (m->prompt)
        prompt_draw(m->prompt, &m->term);
    if (m->help)
        help_draw(m->help, &m->term);
    curs_set(m->prompt ? 1 : 0);
    doupdate();
    m->dirty = m->full = false;
}

/* ---- the contexts' feeds (the rest of them: tui/monitor_contexts.c) ---------- */

static void on_catalog(void *ctx, struct backend_reply *r)
{
    struct monitor_ctx *c = ctx;
    c->catalog_call = NULL;
    if (r->status != BACKEND_OK || c->store == NULL)
        return; /* devices then show "-": nothing else needs it */
    catalog_free(&c->catalog);
    c->catalog = r->catalog;
    memset(&r->catalog, 0, sizeof r->catalog);
    jobstore_set_catalog(c->store, &c->catalog);
    monitor_feed_changed(c->app);
}

static void fetch_catalog(struct monitor_ctx *c)
{
    struct backend_request rq = {.op = BACKEND_OP_CATALOG};
    if (c->catalog_call) /* a new feed asks again: the answer to the old question is moot */
        backend_call_cancel(c->catalog_call);
    c->catalog_call = backend_send(c->session.b, c->app->multi, &rq, on_catalog, NULL, NULL, c);
}

/* Context c's store and feed, new, and its catalog asked for. */
void monitor_ctx_start(struct monitor *m, struct monitor_ctx *c)
{
    c->app = m;
    feed_free(c->feed);
    jobstore_free(c->store);
    c->store = jobstore_new();
    c->feed = feed_new(c->session.b, m->multi, c->store, m->refresh_ms, monitor_feed_changed, m);
    feed_start(c->feed);
    fetch_catalog(c);
}

void monitor_restart_feed(struct monitor *m)
{
    while (m->depth > 1)
        monitor_pop(m);
    for (size_t i = 0; i < m->nctx; i++)
        monitor_ctx_start(m, &m->ctx[i]);
    monitor_feed_changed(m);
}

int monitor_open_contexts(struct monitor *m, const char *spec, struct strbuf *err)
{
    struct monitor_ctx fresh[MONITOR_MAX_CONTEXTS];
    memset(fresh, 0, sizeof fresh);
    size_t n = monitor_open_sessions(m, spec, fresh, err);
    if (n == 0)
        return -1;
    while (m->depth > 1)
        monitor_pop(m);
    for (size_t i = 0; i < m->nctx; i++)
        monitor_ctx_end(&m->ctx[i]);
    memcpy(m->ctx, fresh, n * sizeof *fresh);
    m->nctx = n;
    m->focus = 0;
    if (m->depth)
        m->screen_ctx[0] = 0;
    for (size_t i = 0; i < n; i++)
        m->ctx[i].app = m;
    monitor_restart_feed(m);
    return 0;
}

/* ---- frames ------------------------------------------------------------------ */

/*
 * Screens re-read the store (and drop what they held of rows since gone)
 * before they are drawn or given a key: never between.
 */
static void refresh_screens(struct monitor *m)
{
    if (!m->store_changed)
        return;
    m->store_changed = false;
    for (size_t i = 0; i < m->depth; i++)
        m->screens[i]->ops->changed(m->screens[i]);
    status_check(m); /* a status about a job whose state moved */
}

static void on_frame_due(void *ctx)
{
    struct monitor *m = ctx;
    m->frame_timer = 0;
}

/*
 * Draws what is dirty: at once after a key, else at most every
 * FRAME_MIN_MS, so a log streaming 10,000 lines a second repaints ~30
 * times a second rather than once per piece that arrives.
 */
static void frame(struct monitor *m)
{
    int64_t now = loop_now_ms();
    int64_t due = m->last_frame_ms + FRAME_MIN_MS;
    if (!m->now && !m->full && now < due) {
        if (m->frame_timer == 0)
            m->frame_timer = loop_add_timer(m->loop, due - now, on_frame_due, m);
        return;
    }
    if (m->frame_timer) {
        loop_cancel(m->loop, m->frame_timer);
        m->frame_timer = 0;
    }
    refresh_screens(m);
    draw_frame(m);
    m->now = false;
    m->last_frame_ms = now;
}

/* ---- keys ------------------------------------------------------------------- */

/*
 * X: starts the local engine of each context whose feed is down because it
 * was stopped on purpose (it clears the marker itself), then asks again.
 */
static void start_stopped_engines(struct monitor *m)
{
    size_t started = 0, failed = 0;
    for (size_t i = 0; i < m->nctx; i++) {
        struct monitor_ctx *c = &m->ctx[i];
        char *note = stopped_engine(c);
        if (note == NULL || c->session.rc.engine_socket == NULL) {
            free(note);
            continue;
        }
        free(note);
        struct strbuf why = STRBUF_INIT;
        if (autostart_engine(c->session.rc.engine_socket, &why) == 0) {
            started++;
            feed_start(c->feed);
        } else {
            failed++;
            monitor_status(m, true, "starting the engine: %s", strbuf_str(&why));
        }
        strbuf_free(&why);
    }
    if (started && !failed)
        monitor_status(m, false, "started the local engine");
    else if (!started && !failed)
        monitor_status(m, true, "no local engine here was stopped on purpose");
}

static void on_key(struct monitor *m, const struct widget_key *k)
{
    refresh_screens(m);
    m->dirty = true;
    m->now = true; /* what a key changed shows at once */
    if (m->help) {
        if (help_key(m->help, k)) {
            help_free(m->help);
            m->help = NULL;
            m->full = true;
        }
        return;
    }
    if (m->prompt) {
        enum prompt_state st = prompt_key(m->prompt, k);
        if (st == PROMPT_OPEN)
            return;
        struct prompt *p = m->prompt;
        m->prompt = NULL;
        m->full = true;
        if (st == PROMPT_DONE) {
            char *text = xstrdup(prompt_value(p));
            prompt_free(p);
            m->prompt_answer(m->prompt_ctx, text);
            free(text);
        } else {
            prompt_free(p);
        }
        return;
    }
    if (m->dialog) {
        struct widget *dw = dialog_widget(m->dialog);
        unsigned r = dw->ops->key(dw, k);
        if (r & (WIDGET_ACTIVATE | WIDGET_CANCEL)) {
            bool yes = (r & WIDGET_ACTIVATE) && dialog_answer(m->dialog);
            dialog_free(m->dialog);
            m->dialog = NULL;
            m->full = true;
            if (yes)
                m->dialog_yes(m);
        }
        return;
    }
    struct screen *s = monitor_top(m);
    /* The screen's sub-mode (its log pane) first, by its own bindings alone. */
    const char *sub = s->ops->submode ? s->ops->submode(s) : NULL;
    enum keymap_action a = sub ? keymap_lookup_own(m->keys, sub, k) : KEYMAP_NONE;
    if (a == KEYMAP_NONE)
        a = keymap_lookup(m->keys, s->ops->mode, k);
    if (!monitor_action_allowed(m, a)) {
        monitor_status(m, true, "read-only: no actions here");
        return;
    }
    const char *name = a == KEYMAP_NONE ? NULL : keymap_action_name(a);
    unsigned r = s->ops->key(s, k, name);
    if (r != WIDGET_IGNORED)
        return;
    switch (a) {
    case KEYMAP_QUIT:
        m->quit = true;
        break;
    case KEYMAP_BACK:
        monitor_pop(m);
        break;
    case KEYMAP_HELP: {
        m->help = help_new_for(m->keys, s->ops->mode, sub, NULL, help_shows, m);
        break;
    }
    case KEYMAP_REDRAW:
        clearok(curscr, TRUE);
        m->full = true;
        break;
    case KEYMAP_REFRESH:
        for (size_t i = 0; i < m->nctx; i++)
            feed_start(m->ctx[i].feed);
        monitor_status(m, false, "refreshing");
        break;
    case KEYMAP_START_ENGINE:
        start_stopped_engines(m);
        break;
    case KEYMAP_NEW_JOB:
        if (m->readonly)
            monitor_status(m, true, "read-only: no actions here");
        else
            m->parts->new_job(m, NULL);
        break;
    case KEYMAP_COMMAND:
        m->parts->command_line(m);
        break;
    default:
        break;
    }
}

static void on_stdin(void *ctx, int fd, short revents)
{
    struct monitor *m = ctx;
    (void)fd;
    if (revents & (POLLHUP | POLLERR | POLLNVAL)) {
        m->quit = true; /* the terminal went away */
        return;
    }
    struct widget_key k;
    while (!m->quit && term_read_key(&k)) {
        if (k.is_function && k.code == KEY_RESIZE) {
            m->resized = true;
            continue;
        }
        on_key(m, &k);
    }
}

static void on_signal(void *ctx, int signo)
{
    struct monitor *m = ctx;
    if (signo == SIGWINCH)
        m->resized = true;
    else
        m->quit = true;
}

struct monitor *monitor_new_detached(struct jobstore *store, const struct term *t, bool readonly)
{
    struct monitor *m = xcalloc(1, sizeof *m);
    m->ctx[0].app = m;
    m->ctx[0].store = store;
    m->nctx = 1;
    m->term = *t;
    m->readonly = readonly;
    return m;
}

void monitor_free_detached(struct monitor *m)
{
    if (m == NULL)
        return;
    while (m->depth) {
        struct screen *s = m->screens[--m->depth];
        s->ops->destroy(s);
    }
    prompt_free(m->prompt);
    if (m->dialog)
        dialog_free(m->dialog);
    monitor_set_names(m, NULL, 0);
    free(m->names);
    free(m->name_ctx);
    free(m->status_about);
    free(m->arg);
    free(m->open_when_seen);
    for (size_t i = 0; i < m->nctx; i++) { /* the stores are the caller's */
        free(m->ctx[i].name);
        free(m->ctx[i].detached_down);
    }
    free(m);
}

/* ---- the program ------------------------------------------------------------ */

int monitor_run(const struct tui_top_opts *o, const struct monitor_parts *parts, FILE *err)
{
    bool readonly = o->readonly;
    int refresh_s = o->refresh_s > 0 ? o->refresh_s : 5;
    const char *theme = o->theme;
    const char *job = o->job;
    struct monitor m;
    memset(&m, 0, sizeof m);
    m.target = o->target;
    m.parts = parts;
    m.readonly = readonly;
    m.refresh_ms = refresh_s * 1000;
    m.open_ctx = SIZE_MAX;
    if (context_spec_several(m.target.context)) {
        /* `--context a,b` or `all`: every context on this loop, each with its own feed. */
        struct strbuf why = STRBUF_INIT;
        m.nctx = monitor_open_sessions(&m, m.target.context, m.ctx, &why);
        if (m.nctx == 0) {
            struct strbuf clean = STRBUF_INIT;
            utf8_sanitize(&clean, strbuf_str(&why), why.len, 0);
            fprintf(err, "trainjob top: %s\n", strbuf_str(&clean));
            strbuf_free(&clean);
            strbuf_free(&why);
            return EXIT_USAGE;
        }
        strbuf_free(&why);
    } else {
        if (session_open(&m.target, &m.ctx[0].session, err) != 0)
            return EXIT_USAGE;
        m.nctx = 1;
    }
    for (size_t i = 0; i < m.nctx; i++)
        m.ctx[i].app = &m;
    /* The config's theme, unless --theme names one. */
    const char *ctx_theme = m.ctx[0].session.rc.ctx.theme;
    bool theme_from_config = theme == NULL && ctx_theme;
    if (theme_from_config)
        theme = ctx_theme;
    m.keys = keymap_new_default();
    struct strbuf kerr = STRBUF_INIT;
    char *kpath = keymap_user_file(false), *kshown = keymap_user_file(true);
    keymap_load(m.keys, kpath, kshown, &kerr);
    free(kpath);
    free(kshown);
    char why[256], theme_why[300] = "";
    int started = term_start(&m.term, theme, why, sizeof why);
    if (started != 0 && theme_from_config) {
        /* A wrong theme in config.yaml must not lock a person out: the default, and say so. */
        snprintf(theme_why, sizeof theme_why, "config.yaml theme: %s; using the default", why);
        started = term_start(&m.term, NULL, why, sizeof why);
    }
    if (started != 0) {
        fprintf(err, "trainjob top: %s\n", why);
        keymap_free(m.keys);
        for (size_t i = 0; i < m.nctx; i++)
            monitor_ctx_end(&m.ctx[i]);
        strbuf_free(&kerr);
        return 1;
    }
    if (kerr.len)
        monitor_status(&m, true, "%.*s", (int)strcspn(strbuf_str(&kerr), "\n"), strbuf_str(&kerr));
    else if (theme_why[0])
        monitor_status(&m, true, "%s", theme_why);
    strbuf_free(&kerr);
    m.loop = loop_new();
    if (m.status[0]) /* said before the loop was there: it goes like any other */
        m.status_timer = loop_add_timer(m.loop, STATUS_ERROR_MS, on_status_expired, &m);
    m.multi = http_multi_new(m.loop);
    for (size_t i = 0; i < m.nctx; i++) /* the replies come from the loop, below */
        monitor_ctx_start(&m, &m.ctx[i]);
    monitor_push(&m, parts->first(&m));
    if (job)
        m.open_when_seen = xstrdup(job);
    loop_add_fd(m.loop, STDIN_FILENO, POLLIN, on_stdin, &m);
    loop_add_signal(m.loop, SIGWINCH, on_signal, &m);
    loop_add_signal(m.loop, SIGTERM, on_signal, &m);
    loop_add_signal(m.loop, SIGHUP, on_signal, &m);
    loop_add_signal(m.loop, SIGINT, on_signal, &m);
    plan_age_tick(&m);
    m.dirty = m.full = true;
    while (!m.quit) {
        if (m.resized) {
            m.resized = false;
            term_resize();
            m.full = m.dirty = true;
        }
        if (m.dirty)
            frame(&m);
        loop_run_once(m.loop, -1);
    }
    if (m.frame_timer)
        loop_cancel(m.loop, m.frame_timer);
    while (m.depth) {
        struct screen *s = m.screens[--m.depth];
        s->ops->destroy(s);
    }
    prompt_free(m.prompt);
    if (m.dialog)
        dialog_free(m.dialog);
    help_free(m.help);
    for (size_t i = 0; i < m.nctx; i++) { /* what runs on the loop ends before it */
        feed_free(m.ctx[i].feed);
        m.ctx[i].feed = NULL;
        if (m.ctx[i].catalog_call)
            backend_call_cancel(m.ctx[i].catalog_call);
        m.ctx[i].catalog_call = NULL;
    }
    http_multi_free(m.multi);
    for (size_t i = 0; i < m.nctx; i++) {
        jobstore_free(m.ctx[i].store);
        m.ctx[i].store = NULL;
        catalog_free(&m.ctx[i].catalog);
    }
    loop_free(m.loop);
    term_stop(&m.term);
    keymap_free(m.keys);
    monitor_set_names(&m, NULL, 0);
    free(m.names);
    free(m.name_ctx);
    free(m.arg);
    free(m.open_when_seen);
    free(m.context);
    free(m.status_about);
    for (size_t i = 0; i < m.nctx; i++)
        monitor_ctx_end(&m.ctx[i]);
    return 0;
}
