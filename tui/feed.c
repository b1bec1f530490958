/*
 * feed: the watch stream or the poll behind the monitoring screens; see
 * feed.h. One call in flight at a time (the stream, or one page of a poll),
 * one timer (the next retry or poll).
 */
#include "tui/feed.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/backend.h"
#include "api/http_multi.h"
#include "tui/jobstore.h"
#include "util/loop.h"
#include "util/strbuf.h"
#include "util/utf8.h"
#include "util/xalloc.h"

#define BACKOFF_FIRST_MS 1000
#define BACKOFF_MAX_MS 30000
/*
 * Polling slows while nothing changes: after IDLE_POLLS unchanged polls in a
 * row each next one waits twice as long, up to IDLE_MAX_FACTOR times the
 * refresh; the first change (or feed_start) brings the refresh back.
 */
#define IDLE_POLLS 3
#define IDLE_MAX_FACTOR 4

struct feed {
    struct backend *b;
    struct http_multi *m;
    struct loop *loop;
    struct jobstore *store;
    int refresh_ms;
    int unchanged_polls; /* polls in a row that changed nothing */
    void (*changed)(void *ctx);
    void *ctx;
    struct backend_call *call;
    uint64_t timer;
    int64_t next_try;
    int backoff_ms;
    enum feed_state state;
    bool polling;
    bool synced; /* this stream has sent SYNCED */
    char error[512];
    char warning[256]; /* the backend's, until feed_take_warning */
    int64_t fresh_at;
    struct job_list pages; /* a poll's pages so far */
    size_t pages_cap;      /* room in pages.jobs (grown by doubling: O(N) for N jobs) */
};

/* Drops a poll's gathered pages. */
static void pages_free(struct feed *f)
{
    job_list_free(&f->pages);
    f->pages_cap = 0;
}

static void tell(struct feed *f)
{
    if (f->changed)
        f->changed(f->ctx);
}

static void on_timer(void *ctx);

static void plan(struct feed *f, int ms)
{
    if (f->timer)
        loop_cancel(f->loop, f->timer);
    f->timer = loop_add_timer(f->loop, ms, on_timer, f);
    f->next_try = loop_now_ms() + ms;
}

/* A try failed: say why, and try again after the backoff (doubling). */
static void failed(struct feed *f, const char *why)
{
    f->state = FEED_LOST;
    snprintf(f->error, sizeof f->error, "%s", why);
    plan(f, f->backoff_ms);
    f->backoff_ms = f->backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : f->backoff_ms * 2;
    tell(f);
}

static void poll_page(struct feed *f, const char *token);

/*
 * Whether a failed call was the server saying no to what was asked (a
 * workspace that does not exist, a token it does not accept): asking again
 * gives the same answer, so that is an error to show, not a lost connection
 * to retry. Only unreachable servers, transport failures, 5xx, 408 and 429
 * are retried.
 */
static bool refused(const struct backend_reply *r)
{
    return r->status == BACKEND_REJECTED && r->err.status >= 400 && r->err.status < 500 &&
           r->err.status != 408 && r->err.status != 429;
}

/* The server refused: say why and wait for feed_start (a key, another workspace). */
static void refuse(struct feed *f, const char *why)
{
    f->state = FEED_REFUSED;
    snprintf(f->error, sizeof f->error, "%.*s", (int)sizeof f->error - 1, why);
    f->next_try = 0;
    f->backoff_ms = BACKOFF_FIRST_MS;
    tell(f);
}

static int on_message(void *ctx, const struct watch_message *msg)
{
    struct feed *f = ctx;
    bool changed = jobstore_apply(f->store, msg);
    if (msg->kind == WATCH_SYNCED) {
        f->synced = true;
        f->state = FEED_LIVE;
        f->error[0] = '\0';
        f->backoff_ms = BACKOFF_FIRST_MS;
        changed = true;
    }
    if (f->synced)
        f->fresh_at = loop_now_ms();
    if (changed)
        tell(f);
    return 0;
}

static void on_watch_end(void *ctx, struct backend_reply *r)
{
    struct feed *f = ctx;
    f->call = NULL;
    if (r->status == BACKEND_REJECTED && r->err.status == 501) {
        f->polling = true; /* no watch here: poll */
        poll_page(f, NULL);
        return;
    }
    if (refused(r)) {
        refuse(f, r->err.message);
        return;
    }
    failed(f, r->status == BACKEND_OK ? "the server ended the watch stream" : r->err.message);
}

static void on_page(void *ctx, struct backend_reply *r)
{
    struct feed *f = ctx;
    f->call = NULL;
    if (r->status != BACKEND_OK) {
        pages_free(f);
        if (refused(r))
            refuse(f, r->err.message);
        else
            failed(f, r->err.message);
        return;
    }
    /* Gather the pages' jobs, then replace the store's rows in one go. */
    struct job_list *l = &r->list;
    size_t n = f->pages.count + l->count;
    if (n > f->pages_cap) {
        while (f->pages_cap < n)
            f->pages_cap = f->pages_cap ? f->pages_cap * 2 : 512;
        f->pages.jobs = xreallocarray(f->pages.jobs, f->pages_cap, sizeof *f->pages.jobs);
    }
    memcpy(f->pages.jobs + f->pages.count, l->jobs, l->count * sizeof *l->jobs);
    f->pages.count = n;
    free(l->jobs);
    l->jobs = NULL;
    l->count = 0;
    if (l->next_page_token && f->pages.count < 1000000) {
        poll_page(f, l->next_page_token);
        return;
    }
    if (r->warning) { /* said once by the driver: the screen's status line shows it */
        struct strbuf w = STRBUF_INIT;
        utf8_sanitize(&w, r->warning, strlen(r->warning), 0);
        snprintf(f->warning, sizeof f->warning, "%s", strbuf_str(&w));
        strbuf_free(&w);
    }
    bool changed = jobstore_replace_all(f->store, &f->pages) || f->warning[0];
    pages_free(f);
    enum feed_state was = f->state;
    f->state = FEED_POLLING;
    f->error[0] = '\0';
    f->fresh_at = loop_now_ms();
    f->backoff_ms = BACKOFF_FIRST_MS;
    f->unchanged_polls = changed || was != FEED_POLLING ? 0 : f->unchanged_polls + 1;
    plan(f, feed_poll_interval_ms(f));
    if (changed || was != FEED_POLLING)
        tell(f);
}

static void poll_page(struct feed *f, const char *token)
{
    struct backend_request rq = {.op = BACKEND_OP_LIST};
    rq.query.page_size = BACKEND_MAX_PAGE_SIZE;
    rq.query.page_token = token;
    rq.query.basic = true; /* rows only; the job screen asks for the rest */
    f->call = backend_send(f->b, f->m, &rq, on_page, NULL, NULL, f);
}

static void begin(struct feed *f);

static void on_timer(void *ctx)
{
    struct feed *f = ctx;
    f->timer = 0;
    f->next_try = 0;
    begin(f);
}

void feed_start(struct feed *f)
{
    f->unchanged_polls = 0; /* asked for: at the refresh again */
    begin(f);
}

/* A watch, or a poll's first page, now. */
static void begin(struct feed *f)
{
    if (f->call)
        backend_call_cancel(f->call);
    f->call = NULL;
    if (f->timer)
        loop_cancel(f->loop, f->timer);
    f->timer = 0;
    f->next_try = 0;
    pages_free(f);
    if (f->polling) {
        poll_page(f, NULL);
        return;
    }
    f->synced = false;
    jobstore_begin_sync(f->store);
    struct backend_request rq = {.op = BACKEND_OP_WATCH};
    rq.query.basic = true; /* summaries: the job screen fetches the workers it shows */
    f->call = backend_send(f->b, f->m, &rq, on_watch_end, on_message, NULL, f);
}

struct feed *feed_new(struct backend *b, struct http_multi *m, struct jobstore *s, int refresh_ms,
                      void (*changed)(void *ctx), void *ctx)
{
    struct feed *f = xcalloc(1, sizeof *f);
    f->b = b;
    f->m = m;
    f->loop = http_multi_loop(m);
    f->store = s;
    f->refresh_ms = refresh_ms > 0 ? refresh_ms : 5000;
    f->changed = changed;
    f->ctx = ctx;
    f->backoff_ms = BACKOFF_FIRST_MS;
    f->state = FEED_CONNECTING;
    return f;
}

void feed_free(struct feed *f)
{
    if (f == NULL)
        return;
    if (f->call)
        backend_call_cancel(f->call);
    if (f->timer)
        loop_cancel(f->loop, f->timer);
    pages_free(f);
    free(f);
}

enum feed_state feed_state(const struct feed *f)
{
    return f->state;
}

bool feed_take_warning(struct feed *f, char *buf, size_t n)
{
    if (f->warning[0] == '\0')
        return false;
    snprintf(buf, n, "%s", f->warning);
    f->warning[0] = '\0';
    return true;
}

const char *feed_error(const struct feed *f)
{
    return f->error;
}

int64_t feed_fresh_at(const struct feed *f)
{
    return f->fresh_at;
}

int64_t feed_next_try(const struct feed *f)
{
    return f->next_try;
}

bool feed_polling(const struct feed *f)
{
    return f->polling;
}

int feed_poll_interval_ms(const struct feed *f)
{
    if (f->unchanged_polls < IDLE_POLLS)
        return f->refresh_ms;
    int factor = 1;
    for (int i = IDLE_POLLS; i <= f->unchanged_polls && factor < IDLE_MAX_FACTOR; i++)
        factor *= 2;
    return f->refresh_ms * factor;
}
