/*
 * logs_pane: live worker logs for the job screen; see logs_pane.h.
 *
 * Owns the ring, the view, the search prompt and the streams. A stream is
 * one worker's log call; its index in p->streams is its source id in the
 * ring, and the ring is cleared whenever the set of streams is replaced,
 * so an id never names two workers' lines. Streams are allocated one by
 * one: a call's callbacks hold a pointer to theirs.
 *
 * All workers, interleaved by time: where the backend frames its logs with
 * times (trainjobd: engine/logfollow.h T and C frames, from the shim's
 * index), each stream's complete lines wait in its queue with the time
 * their first byte was written, and merge() hands the ring the oldest
 * waiting line once no stream could still bring an older one: every other
 * stream has a line waiting, has ended, has said it is caught up (C), or
 * its last time is already later. So a finished job's workers come out
 * line by line in the order they wrote, whichever stream arrives first.
 * Live, a caught-up stream does not hold the others back: a line it writes
 * after that goes in as it arrives. Streams without times (other backends,
 * a log without a usable index) have time 0 and keep their arrival order.
 * At most MERGE_HOLD_BYTES wait: past that the oldest line goes out anyway.
 */
#include "tui/logs_pane.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "api/backend.h"
#include "api/logframes.h"
#include "tui/prompt.h"
#include "util/fileio.h"
#include "util/logring.h"
#include "util/sizefmt.h"
#include "util/strbuf.h"
#include "util/utf8.h"
#include "util/xalloc.h"
#include "widgets/logview.h"

#define MERGE_HOLD_BYTES (4u << 20)
#define MERGE_LINE_MAX (64u << 10) /* an unfinished line this long waits no more */

/* A complete line waiting to be merged. */
struct held_line {
    uint64_t ms;      /* when its first byte was written (0: not known) */
    uint64_t arrival; /* order of arrival, between equal times */
    char *text;       /* with its '\n' (none: the unfinished end of an ended stream) */
    size_t len;
};

enum stream_state {
    STREAM_FOLLOWING, /* a call is open (or, without a backend, data is fed) */
    STREAM_ENDED,
};

struct stream {
    struct logs_pane *p;
    char *worker;
    uint32_t source;
    struct backend_call *call;
    enum stream_state state;
    char *why; /* why it ended (sanitized), NULL when the log just ended */
    /* The worker as last seen while following: a change after the end means it runs again. */
    bool seen;
    int32_t seen_restarts;
    enum worker_phase seen_phase;
    bool framed; /* the call asks for frames with times */
    struct logframes lf;
    struct strbuf cur; /* all workers: the line being received */
    uint64_t cur_ms;
    struct held_line *held; /* all workers: complete lines not merged yet, oldest first */
    size_t held_head, held_count, held_alloc;
    char last; /* the last byte handed on ('\n' at first) */
};

struct logs_pane {
    struct logring *ring;
    struct logview *view;
    struct stream **streams;
    size_t count;
    bool all;          /* every worker, with prefixes */
    uint64_t arrivals; /* lines queued so far */
    size_t held_bytes; /* bytes of every stream's queue */
    bool frames;       /* without a backend: fed data is framed (tests) */
    struct prompt *prompt;
    enum { ASK_SEARCH, ASK_SAVE, ASK_OVERWRITE } asking; /* what the prompt asks */
    /* "save-log": the file, the workers whose whole logs go in it, in order, and the bytes so far.
     */
    char *save_path;
    char **save_names;
    size_t save_count, save_next;
    bool save_all;
    struct strbuf save_buf;
    bool save_too_big;
    struct backend_call *save_call;
    char *note; /* what the last save did (sanitized), until the next key */
    bool dirty;
    struct backend *b;
    struct http_multi *m;
    char *job;
    logs_pane_notify_fn notify;
    void *notify_arg;
};

static void save_reset(struct logs_pane *p);

static void tell(struct logs_pane *p)
{
    p->dirty = true;
    if (p->notify)
        p->notify(p->notify_arg);
}

static void name_source(uint32_t source, struct strbuf *out, void *arg)
{
    const struct logs_pane *p = arg;
    strbuf_adds(out, source < p->count ? p->streams[source]->worker : "?");
}

struct logs_pane *logs_pane_new(const struct logring_config *cfg)
{
    struct logs_pane *p = xcalloc(1, sizeof *p);
    p->ring = logring_new(cfg);
    p->view = logview_new(p->ring, 1);
    p->dirty = true;
    return p;
}

static void stop_streams(struct logs_pane *p)
{
    for (size_t i = 0; i < p->count; i++) {
        struct stream *s = p->streams[i];
        if (s->call)
            backend_call_cancel(s->call);
        free(s->worker);
        logframes_free(&s->lf);
        strbuf_free(&s->cur);
        for (size_t k = s->held_head; k < s->held_count; k++)
            free(s->held[k].text);
        free(s->held);
        free(s->why);
        free(s);
    }
    free(p->streams);
    p->streams = NULL;
    p->count = 0;
    p->held_bytes = 0;
}

void logs_pane_free(struct logs_pane *p)
{
    if (!p)
        return;
    save_reset(p);
    free(p->save_path);
    free(p->note);
    stop_streams(p);
    prompt_free(p->prompt);
    logview_free(p->view);
    logring_free(p->ring);
    free(p->job);
    free(p);
}

void logs_pane_set_style(struct logs_pane *p, const struct widget_palette *pal, bool utf8)
{
    logview_set_palette(p->view, pal);
    logview_set_utf8(p->view, utf8);
    p->dirty = true;
}

void logs_pane_set_notify(struct logs_pane *p, logs_pane_notify_fn fn, void *arg)
{
    p->notify = fn;
    p->notify_arg = arg;
}

void logs_pane_set_backend(struct logs_pane *p, struct backend *b, struct http_multi *m,
                           const char *job)
{
    p->b = b;
    p->m = m;
    free(p->job);
    p->job = job ? xstrdup(job) : NULL;
}

/* Queues one line of s (all workers) for the merge. */
static void hold_line(struct stream *s, uint64_t ms, const char *text, size_t len)
{
    if (s->held_head > 0 && s->held_head == s->held_count)
        s->held_head = s->held_count = 0;
    if (s->held_count == s->held_alloc) {
        if (s->held_head > 0) { /* slide the queue down before growing it */
            memmove(s->held, s->held + s->held_head,
                    (s->held_count - s->held_head) * sizeof *s->held);
            s->held_count -= s->held_head;
            s->held_head = 0;
        }
        if (s->held_count == s->held_alloc) {
            s->held_alloc = s->held_alloc ? 2 * s->held_alloc : 64;
            s->held = xreallocarray(s->held, s->held_alloc, sizeof *s->held);
        }
    }
    char *copy = xmalloc(len + 1);
    memcpy(copy, text, len);
    copy[len] = '\0';
    s->held[s->held_count++] = (struct held_line){ms, s->p->arrivals++, copy, len};
    s->p->held_bytes += len;
}

/* The time the next byte of s was written, as its frames said (0: not known). */
static uint64_t stream_time(const struct stream *s)
{
    return s->framed && s->lf.have_time ? s->lf.time_ms : 0;
}

/* Could stream t still bring a line older than ms? */
static bool may_bring_older(const struct stream *t, uint64_t ms)
{
    if (t->state == STREAM_ENDED || t->held_head < t->held_count || !t->framed)
        return false;
    if (t->lf.caught_up) /* live: what it writes next is newer than what was sent */
        return false;
    if (t->cur.len > 0)
        return t->cur_ms <= ms;
    return !t->lf.have_time || t->lf.time_ms <= ms;
}

/* Hands the ring every waiting line that no stream can precede any more, oldest first. */
static void merge(struct logs_pane *p)
{
    bool moved = false;
    for (;;) {
        struct stream *best = NULL;
        for (size_t i = 0; i < p->count; i++) {
            struct stream *s = p->streams[i];
            if (s->held_head == s->held_count)
                continue;
            const struct held_line *h = &s->held[s->held_head];
            const struct held_line *b = best ? &best->held[best->held_head] : NULL;
            if (!b || h->ms < b->ms || (h->ms == b->ms && h->arrival < b->arrival))
                best = s;
        }
        if (!best)
            break;
        struct held_line *h = &best->held[best->held_head];
        bool wait = false;
        for (size_t i = 0; i < p->count && !wait && p->held_bytes <= MERGE_HOLD_BYTES; i++)
            wait = p->streams[i] != best && may_bring_older(p->streams[i], h->ms);
        if (wait)
            break;
        logring_append(p->ring, best->source, h->text, h->len);
        if (h->len == 0 || h->text[h->len - 1] != '\n')
            logring_flush(p->ring, best->source);
        p->held_bytes -= h->len;
        free(h->text);
        best->held_head++;
        moved = true;
    }
    if (moved) {
        logview_notify(p->view);
        if (logview_widget(p->view)->dirty)
            tell(p);
    }
}

/* Log bytes of s as they are: to the ring (one worker), or cut into lines for the merge. */
static void piece(struct stream *s, const char *data, size_t len)
{
    if (len == 0)
        return;
    s->last = data[len - 1];
    if (!s->p->all) {
        logring_append(s->p->ring, s->source, data, len);
        return;
    }
    while (len > 0) {
        if (s->cur.len == 0)
            s->cur_ms = stream_time(s);
        const char *nl = memchr(data, '\n', len);
        size_t k = nl ? (size_t)(nl - data) + 1 : len;
        strbuf_add(&s->cur, data, k);
        data += k;
        len -= k;
        if (nl || s->cur.len >= MERGE_LINE_MAX) {
            hold_line(s, s->cur_ms, s->cur.buf, s->cur.len);
            strbuf_reset(&s->cur);
        }
    }
}

static int frame_data(void *ctx, const char *data, size_t len)
{
    piece(ctx, data, len);
    return 0;
}

/* Bytes that went by unread (an S frame), said as a line of the log. */
static int frame_skip(void *ctx, uint64_t bytes)
{
    struct stream *s = ctx;
    struct strbuf line = STRBUF_INIT;
    if (s->last != '\n')
        strbuf_addc(&line, '\n');
    strbuf_adds(&line, "… ");
    if (bytes > 0)
        sizefmt_add_whole(&line, bytes);
    else
        strbuf_adds(&line, "some output");
    strbuf_adds(&line, " skipped (the log rotated faster than it was read) …\n");
    piece(s, line.buf, line.len);
    strbuf_free(&line);
    return 0;
}

/* A piece of the stream's log, from its call. */
static int on_data(void *ctx, const char *data, size_t len)
{
    struct stream *s = ctx;
    if (s->framed) {
        if (!s->lf.broken && logframes_feed(&s->lf, data, len) && s->lf.broken) {
            static const char broken[] = "\n(the log stream could not be read: it stops here)\n";
            size_t skip = s->last == '\n'; /* its own line */
            piece(s, broken + skip, sizeof broken - 1 - skip);
        }
    } else {
        piece(s, data, len);
    }
    if (s->p->all) {
        merge(s->p);
        return 0;
    }
    logview_notify(s->p->view);
    if (logview_widget(s->p->view)->dirty)
        tell(s->p);
    return 0;
}

static void stream_ended(struct stream *s, const char *why)
{
    s->call = NULL;
    s->state = STREAM_ENDED;
    free(s->why);
    s->why = NULL;
    if (why && *why) {
        struct strbuf sb = STRBUF_INIT;
        utf8_sanitize(&sb, why, strlen(why), 0);
        s->why = strbuf_detach(&sb, NULL);
    }
    if (s->cur.len > 0) { /* a last line without '\n' */
        hold_line(s, s->cur_ms, s->cur.buf, s->cur.len);
        strbuf_reset(&s->cur);
    }
    if (s->p->all)
        merge(s->p);
    logring_flush(s->p->ring, s->source); /* a last line without '\n' */
    logview_notify(s->p->view);
    tell(s->p);
}

/* The stream's call ended: the worker's log is complete, or it failed. */
static void on_done(void *ctx, struct backend_reply *r)
{
    struct stream *s = ctx;
    stream_ended(s, r->status == BACKEND_OK ? NULL : r->err.message);
}

static void start_call(struct logs_pane *p, struct stream *s)
{
    s->state = STREAM_FOLLOWING;
    free(s->why);
    s->why = NULL;
    /* Frames with times where the backend has them: the workers are merged by time. */
    s->framed = p->b ? p->b->ops->logs_framed != NULL : p->frames;
    logframes_free(&s->lf);
    logframes_init(&s->lf, frame_data, frame_skip, s);
    if (!p->b || !p->job)
        return;
    struct backend_request rq = {
        .op = BACKEND_OP_LOGS,
        .name = p->job,
        .worker = s->worker,
        .tail = LOGS_PANE_TAIL,
        .follow = true,
        .framed = s->framed,
        .times = s->framed,
    };
    s->call = backend_send(p->b, p->m, &rq, on_done, NULL, on_data, s);
}

static void add_stream(struct logs_pane *p, const char *worker)
{
    struct stream *s = xcalloc(1, sizeof *s);
    s->p = p;
    s->worker = xstrdup(worker);
    s->source = (uint32_t)p->count;
    s->cur = (struct strbuf)STRBUF_INIT;
    s->last = '\n';
    logframes_init(&s->lf, frame_data, frame_skip, s);
    p->streams = xreallocarray(p->streams, p->count + 1, sizeof *p->streams);
    p->streams[p->count++] = s;
    start_call(p, s);
}

static struct stream *stream_named(const struct logs_pane *p, const char *worker)
{
    for (size_t i = 0; worker && i < p->count; i++)
        if (strcmp(p->streams[i]->worker, worker) == 0)
            return p->streams[i];
    return NULL;
}

/* Replaces the streams with those of names, from an empty ring. */
static void follow(struct logs_pane *p, const char *const *names, size_t n, bool all)
{
    stop_streams(p);
    logring_clear(p->ring);
    p->all = all;
    for (size_t i = 0; i < n; i++)
        if (names[i] && !stream_named(p, names[i]))
            add_stream(p, names[i]);
    if (all) {
        logview_set_names(p->view, name_source, p);
        logview_show_all(p->view);
    } else {
        logview_set_names(p->view, NULL, NULL);
        logview_show_source(p->view, 0);
    }
    logview_set_follow(p->view, true);
    logview_notify(p->view);
    tell(p);
}

void logs_pane_follow_worker(struct logs_pane *p, const char *worker)
{
    follow(p, &worker, 1, false);
}

void logs_pane_follow_all(struct logs_pane *p, const char *const *names, size_t n)
{
    follow(p, names, n, true);
}

/* Starts every stream again from its tail (a resume: the ring starts empty, no line twice). */
static void refollow(struct logs_pane *p)
{
    size_t n = p->count;
    const char **names = xcalloc(n ? n : 1, sizeof *names);
    for (size_t i = 0; i < n; i++)
        names[i] = xstrdup(p->streams[i]->worker);
    follow(p, names, n, p->all);
    for (size_t i = 0; i < n; i++)
        free((char *)names[i]);
    free(names);
}

static const struct worker_info *find_worker(const struct worker_list *wl, const char *name)
{
    for (size_t i = 0; wl && i < wl->count; i++)
        if (wl->workers[i].name && strcmp(wl->workers[i].name, name) == 0)
            return &wl->workers[i];
    return NULL;
}

/* Whether worker w runs again since stream s ended. */
static bool runs_again(const struct stream *s, const struct worker_info *w)
{
    if (!s->seen)
        return w->phase == WORKER_RUNNING;
    return w->restarts != s->seen_restarts ||
           (w->phase != s->seen_phase && w->phase == WORKER_RUNNING);
}

void logs_pane_workers_changed(struct logs_pane *p, const struct worker_list *wl)
{
    bool resume = false;
    for (size_t i = 0; i < p->count; i++) {
        struct stream *s = p->streams[i];
        const struct worker_info *w = find_worker(wl, s->worker);
        if (!w)
            continue;
        if (s->state == STREAM_ENDED) {
            resume |= runs_again(s, w);
            continue;
        }
        s->seen = true;
        s->seen_restarts = w->restarts;
        s->seen_phase = w->phase;
    }
    if (resume) {
        refollow(p);
        return;
    }
    /* Workers that appeared since (a job scheduled after the pane opened). */
    for (size_t i = 0; p->all && wl && i < wl->count; i++) {
        const char *name = wl->workers[i].name;
        if (name && *name && !stream_named(p, name)) {
            add_stream(p, name);
            tell(p);
        }
    }
}

bool logs_pane_all(const struct logs_pane *p)
{
    return p->all;
}

const char *logs_pane_worker(const struct logs_pane *p)
{
    return !p->all && p->count ? p->streams[0]->worker : NULL;
}

size_t logs_pane_streams(const struct logs_pane *p)
{
    return p->count;
}

size_t logs_pane_ended(const struct logs_pane *p)
{
    size_t n = 0;
    for (size_t i = 0; i < p->count; i++)
        n += p->streams[i]->state == STREAM_ENDED;
    return n;
}

int logs_pane_feed(struct logs_pane *p, const char *worker, const char *data, size_t len)
{
    struct stream *s = stream_named(p, worker);
    return s ? on_data(s, data, len) : 0;
}

void logs_pane_end(struct logs_pane *p, const char *worker, const char *why)
{
    struct stream *s = stream_named(p, worker);
    if (s) {
        if (s->call)
            backend_call_cancel(s->call);
        stream_ended(s, why);
    }
}

void logs_pane_status(const struct logs_pane *p, struct strbuf *out)
{
    if (p->count == 0) {
        strbuf_adds(out, "no worker selected");
        return;
    }
    struct strbuf name = STRBUF_INIT;
    if (p->all)
        strbuf_addf(&name, "all workers (%zu)", p->count);
    else
        utf8_sanitize(&name, p->streams[0]->worker, strlen(p->streams[0]->worker), 0);
    strbuf_add(out, name.buf ? name.buf : "", name.len);
    strbuf_free(&name);
    size_t ended = logs_pane_ended(p);
    const struct stream *last = NULL;
    for (size_t i = 0; i < p->count; i++)
        if (p->streams[i]->state == STREAM_ENDED && (!last || p->streams[i]->why))
            last = p->streams[i];
    if (ended == p->count) {
        strbuf_adds(out, " · ended");
        if (last && last->why)
            strbuf_addf(out, ": %s", last->why);
        strbuf_adds(out, " (f follows again)");
    } else if (ended > 0) {
        strbuf_addf(out, " · %zu ended", ended);
    }
    if (ended < p->count)
        strbuf_adds(out, logview_following(p->view) ? " · following" : " · paused");
    if (p->note)
        strbuf_addf(out, " · %s", p->note);
}

void logs_pane_draw(struct logs_pane *p, WINDOW *win, int y, int x, int h, int w)
{
    struct widget *wd = logview_widget(p->view);
    logview_set_rows(p->view, h > 0 ? h : 1);
    if (h > 0)
        wd->ops->draw(wd, win, y, x, w, false);
    p->dirty = false;
}

void logs_pane_draw_prompt(struct logs_pane *p, const struct term *t)
{
    if (p->prompt)
        prompt_draw(p->prompt, t);
}

bool logs_pane_prompting(const struct logs_pane *p)
{
    return p->prompt != NULL;
}

bool logs_pane_dirty(const struct logs_pane *p)
{
    return p->dirty || logview_widget(p->view)->dirty;
}

/* ---- save-log: the whole log to a file ------------------------------------------ */

#define SAVE_MAX ((size_t)1 << 30) /* a log bigger than this is not held in memory to save */

static void set_note(struct logs_pane *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* What the last save did, for the title (sanitized: paths and errors are outside text). */
static void set_note(struct logs_pane *p, const char *fmt, ...)
{
    struct strbuf raw = STRBUF_INIT, clean = STRBUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    strbuf_vaddf(&raw, fmt, ap);
    va_end(ap);
    utf8_sanitize(&clean, strbuf_str(&raw), raw.len, 0);
    free(p->note);
    p->note = strbuf_detach(&clean, NULL);
    strbuf_free(&raw);
    tell(p);
}

static void save_reset(struct logs_pane *p)
{
    if (p->save_call)
        backend_call_cancel(p->save_call);
    p->save_call = NULL;
    for (size_t i = 0; i < p->save_count; i++)
        free(p->save_names[i]);
    free(p->save_names);
    p->save_names = NULL;
    p->save_count = p->save_next = 0;
    strbuf_free(&p->save_buf);
    p->save_too_big = false;
}

/* Appends name to out as a file-name piece: letters, digits, '.', '-', '_'; others as '_'. */
static void add_file_piece(struct strbuf *out, const char *name)
{
    for (const char *c = name ? name : ""; *c; c++) {
        bool ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
                  (*c >= '0' && *c <= '9') || *c == '.' || *c == '-' || *c == '_';
        strbuf_addc(out, ok ? *c : '_');
    }
}

/* Why path cannot name the file to save to, or NULL: empty, too long, a control byte. */
static const char *bad_file_name(const char *path)
{
    if (!*path)
        return "no file named";
    if (strlen(path) > 4095)
        return "the file name is longer than 4095 bytes";
    for (const unsigned char *c = (const unsigned char *)path; *c; c++)
        if (*c < 0x20 || *c == 0x7f)
            return "the file name holds a control character";
    return NULL;
}

static void save_fetch_next(struct logs_pane *p);

static int on_save_data(void *ctx, const char *data, size_t len)
{
    struct logs_pane *p = ctx;
    if (p->save_too_big || p->save_buf.len + len > SAVE_MAX) {
        p->save_too_big = true;
        return 0;
    }
    strbuf_add(&p->save_buf, data, len);
    return 0;
}

static void on_save_done(void *ctx, struct backend_reply *r)
{
    struct logs_pane *p = ctx;
    p->save_call = NULL;
    if (r->status != BACKEND_OK) {
        set_note(p, "not saved to %s: %s", p->save_path, r->err.message);
        save_reset(p);
        return;
    }
    p->save_next++;
    save_fetch_next(p);
}

/* Asks for the next worker's whole log; after the last, writes the file in one step. */
static void save_fetch_next(struct logs_pane *p)
{
    if (p->save_too_big) {
        set_note(p, "not saved to %s: %s", p->save_path, "the log is over 1 GiB");
        save_reset(p);
        return;
    }
    if (p->save_next < p->save_count) {
        const char *w = p->save_names[p->save_next];
        if (p->save_all) /* which worker's bytes follow, as tail(1) heads files */
            strbuf_addf(&p->save_buf, "%s==> %s <==\n", p->save_next ? "\n" : "", w);
        struct backend_request rq = {
            .op = BACKEND_OP_LOGS, .name = p->job, .worker = w, .tail = -1, .follow = false};
        p->save_call = backend_send(p->b, p->m, &rq, on_save_done, NULL, on_save_data, p);
        return;
    }
    struct strbuf err = STRBUF_INIT;
    char bytes[64];
    snprintf(bytes, sizeof bytes, "%zu bytes", p->save_buf.len);
    if (file_write_atomic(p->save_path, p->save_buf.buf ? p->save_buf.buf : "", p->save_buf.len,
                          0644, &err) == 0)
        set_note(p, "saved to %s (%s)", p->save_path, bytes);
    else
        set_note(p, "not saved to %s: %s", p->save_path, strbuf_str(&err));
    strbuf_free(&err);
    save_reset(p);
}

/* Saves the followed workers' whole logs to path (asked for and checked). */
static void save_start(struct logs_pane *p, const char *path)
{
    save_reset(p);
    free(p->save_path);
    p->save_path = xstrdup(path);
    if (!p->b || !p->job || p->count == 0) {
        set_note(p, "not saved to %s: %s", path, "no log to save");
        return;
    }
    p->save_all = p->all;
    p->save_names = xcalloc(p->count, sizeof *p->save_names);
    for (size_t i = 0; i < p->count; i++)
        p->save_names[p->save_count++] = xstrdup(p->streams[i]->worker);
    set_note(p, "saving to %s…", path);
    save_fetch_next(p);
}

/* "save-log": asks for the file, ./JOB-WORKER.log (./JOB-all.log) at first. */
static void save_ask(struct logs_pane *p)
{
    struct strbuf def = STRBUF_INIT;
    strbuf_adds(&def, "./");
    add_file_piece(&def, p->job ? p->job : "job");
    strbuf_addc(&def, '-');
    add_file_piece(&def, p->all || p->count == 0 ? "all" : p->streams[0]->worker);
    strbuf_adds(&def, ".log");
    p->prompt =
        prompt_new("Save the whole log",
                   p->all ? "File to write every worker's log to:" : "File to write the log to:",
                   strbuf_str(&def));
    p->asking = ASK_SAVE;
    strbuf_free(&def);
}

/* An answer to the save prompts: checked, then asked again before a file is replaced. */
static void save_answer(struct logs_pane *p, const char *path)
{
    const char *bad = bad_file_name(path);
    if (bad) {
        set_note(p, "not saved: %s", bad);
        return;
    }
    struct stat st;
    bool confirmed = p->asking == ASK_OVERWRITE && p->save_path && strcmp(p->save_path, path) == 0;
    if (!confirmed && lstat(path, &st) == 0) {
        free(p->save_path);
        p->save_path = xstrdup(path);
        struct strbuf hint = STRBUF_INIT;
        strbuf_adds(&hint, "It exists. Enter replaces it, Esc keeps it:");
        p->prompt = prompt_new("Replace the file?", strbuf_str(&hint), path);
        p->asking = ASK_OVERWRITE;
        strbuf_free(&hint);
        return;
    }
    save_start(p, path);
}

/*
 * A key while a prompt is open: Enter searches forward (the search prompt) or
 * saves (the file prompts), Esc closes it.
 */
static unsigned prompt_key_in(struct logs_pane *p, const struct widget_key *k)
{
    enum prompt_state st = prompt_key(p->prompt, k);
    if (st == PROMPT_DONE && p->asking == ASK_SEARCH)
        logview_search(p->view, prompt_value(p->prompt), true);
    if (st != PROMPT_OPEN) {
        char *answer = st == PROMPT_DONE ? xstrdup(prompt_value(p->prompt)) : NULL;
        prompt_free(p->prompt);
        p->prompt = NULL;
        if (answer && p->asking != ASK_SEARCH)
            save_answer(p, answer); /* may ask again */
        else if (st == PROMPT_CANCELED && p->asking == ASK_OVERWRITE)
            set_note(p, "not replaced: %s", p->save_path);
        free(answer);
    }
    p->dirty = true;
    return WIDGET_HANDLED | WIDGET_REDRAW;
}

unsigned logs_pane_key(struct logs_pane *p, const struct widget_key *k, const char *action)
{
    const unsigned moved = WIDGET_HANDLED | WIDGET_REDRAW;
    if (p->note && !p->save_call) { /* said once: the next key moves on */
        free(p->note);
        p->note = NULL;
    }
    if (p->prompt)
        return prompt_key_in(p, k);
    if (action && strcmp(action, "save-log") == 0) {
        if (p->save_call)
            return moved; /* one save at a time: the title says it is saving */
        save_ask(p);
        p->dirty = true;
        return moved;
    }
    if (action && strcmp(action, "follow") == 0) {
        if (p->count && logs_pane_ended(p) == p->count) {
            refollow(p); /* everything ended: f asks again */
            return moved;
        }
        logview_set_follow(p->view, !logview_following(p->view));
        return moved;
    }
    if (action && strcmp(action, "wrap") == 0) {
        logview_set_wrap(p->view, !logview_wrapping(p->view));
        return moved;
    }
    if (action && strcmp(action, "search") == 0) {
        p->prompt = prompt_new("Search the log", "Text to find (case-insensitive):", NULL);
        p->asking = ASK_SEARCH;
        p->dirty = true;
        return moved;
    }
    if (action && strcmp(action, "search-next") == 0) {
        logview_search_next(p->view, true);
        return moved;
    }
    if (action && strcmp(action, "search-prev") == 0) {
        logview_search_next(p->view, false);
        return moved;
    }
    if (action && strcmp(action, "first-error") == 0) {
        logview_first_error(p->view);
        return moved;
    }
    struct widget *wd = logview_widget(p->view);
    return wd->ops->key(wd, k);
}

struct logring *logs_pane_ring(struct logs_pane *p)
{
    return p->ring;
}

struct logview *logs_pane_view(struct logs_pane *p)
{
    return p->view;
}

void logs_pane_set_frames(struct logs_pane *p, bool framed)
{
    p->frames = framed;
}
