/*
 * acp_logs: worker logs from SenseCore's Monitor service; see acp_logs.h for
 * the endpoint, the shapes (UNVERIFIED) and how a log is followed. A read is
 * a step machine (struct acp_logs): the acp driver (acp.c) drives it blocking
 * for `trainjob logs` (acp_logs_read, below) and on the http_multi loop for
 * the TUI's log pane, giving it the Monitor client and whether the job ended.
 */
#include "api/acp_logs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/apierror.h"
#include "api/http.h"
#include "api/jsonbound.h"
#include "util/strbuf.h"
#include "util/timefmt.h"
#include "util/utf8.h"
#include "util/xalloc.h"

#define MONITOR_PREFIX "/monitor/ts/data/v1"
/* Lines remembered at the cursor's second, so that a poll shows each line once. */
#define SEEN_MAX 20000

/* ---- the request -------------------------------------------------------- */

/* A path segment a station path may hold: letters, digits, '.', '_', '-'; not "." or "..". */
static bool segment_ok(const char *s, size_t n)
{
    if (n == 0 || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-'))
            return false;
    }
    return true;
}

int acp_logs_path(const struct backend_target *t, const char *station, struct strbuf *p,
                  struct strbuf *err)
{
    static const char *const keys[] = {"subscriptions", "resourceGroups", "zones",
                                       "telemetryStations"};
    const char *vals[4] = {t->subscription, t->resource_group, t->zone, station};
    size_t lens[4] = {0};
    char *copy = NULL;
    if (station == NULL || *station == '\0') {
        strbuf_adds(err, "no telemetry_station in the context");
        return -1;
    }
    if (station[0] == '/') {
        /* /subscriptions/S/resourceGroups/G/zones/Z/telemetryStations/N, as the console has it */
        copy = xstrdup(station);
        char *seg[9];
        size_t n = 0;
        for (char *s = copy + 1, *slash; n < 9; s = slash + 1) {
            slash = strchr(s, '/');
            seg[n++] = s;
            if (slash == NULL)
                break;
            *slash = '\0';
        }
        bool ok = n == 8;
        for (size_t i = 0; ok && i < 4; i++) {
            ok = strcmp(seg[2 * i], keys[i]) == 0;
            vals[i] = seg[2 * i + 1];
        }
        if (!ok) {
            strbuf_adds(err, "telemetry_station: a path must be "
                             "/subscriptions/S/resourceGroups/G/zones/Z/telemetryStations/NAME");
            free(copy);
            return -1;
        }
    }
    for (size_t i = 0; i < 4; i++) {
        lens[i] = vals[i] ? strlen(vals[i]) : 0;
        if (!segment_ok(vals[i] ? vals[i] : "", lens[i])) {
            strbuf_addf(err, "telemetry_station: %s '", keys[i]);
            utf8_sanitize(err, vals[i] ? vals[i] : "", lens[i], 0);
            strbuf_adds(err, "' may hold only letters, digits, '.', '_' and '-'");
            free(copy);
            return -1;
        }
    }
    strbuf_adds(p, MONITOR_PREFIX);
    for (size_t i = 0; i < 4; i++) {
        strbuf_addf(p, "/%s/", keys[i]);
        http_escape(p, vals[i]);
    }
    strbuf_adds(p, "/logStream/products/" ACP_LOGS_PRODUCT "/logs");
    free(copy);
    return 0;
}

json_t *acp_logs_body(const struct acp_logs_query *q)
{
    const struct backend_target *t = q->target;
    char start[24], end[24], offset[24];
    /* decimal strings, as the third-party clients send them (UNVERIFIED) */
    snprintf(start, sizeof start, "%lld", (long long)q->start);
    snprintf(end, sizeof end, "%lld", (long long)q->end);
    snprintf(offset, sizeof offset, "%ld", q->offset);
    char *ws = xasprintf("/subscriptions/%s/resourceGroups/%s/zones/%s/workspaces/%s",
                         t->subscription, t->resource_group, t->zone, t->workspace);
    json_t *body =
        json_pack("{s:s, s:s, s:[s], s:i, s:s, s:[{s:s, s:s}]}", "start", start, "end", end,
                  "resource_id", ws, "page_size", q->page_size, "offset", offset, "custom_filter",
                  "key", "Attributes.k8s.pod.name", "value", q->worker ? q->worker : "");
    free(ws);
    return body;
}

/* ---- the reply ---------------------------------------------------------- */

static void page_add(struct acp_log_page *page, int64_t ms, char *text, size_t seq)
{
    if (page->count == page->cap) {
        page->cap = page->cap ? 2 * page->cap : 64;
        page->hits = xreallocarray(page->hits, page->cap, sizeof *page->hits);
    }
    page->hits[page->count++] = (struct acp_log_hit){ms, text, seq};
}

/* total: a JSON number or a decimal string; -1 when it is neither. */
static int64_t total_of(const json_t *v)
{
    if (json_is_integer(v))
        return json_integer_value(v) >= 0 ? (int64_t)json_integer_value(v) : -1;
    const char *s = json_string_value(v);
    if (s == NULL || *s < '0' || *s > '9')
        return -1;
    errno = 0;
    char *end;
    long long n = strtoll(s, &end, 10);
    return errno || *end ? -1 : (int64_t)n;
}

int acp_logs_decode(const json_t *reply, const char *worker, struct acp_log_page *page,
                    struct strbuf *err)
{
    const json_t *hits = json_object_get(reply, "hits");
    if (!json_is_array(hits)) {
        strbuf_adds(err, "the Monitor service's reply has no hits[]");
        return -1;
    }
    const json_t *tv = json_object_get(reply, "total");
    page->total = tv ? total_of(tv) : (int64_t)json_array_size(hits);
    if (page->total < 0) {
        strbuf_adds(err, "the Monitor service's reply has a total that is not a count");
        return -1;
    }
    page->raw = json_array_size(hits);
    size_t i;
    const json_t *h;
    json_array_foreach(hits, i, h)
    {
        const json_t *attrs = json_object_get(h, "attributes");
        const char *pod = json_string_value(json_object_get(attrs, "k8s.pod.name"));
        if (worker && (pod == NULL || strcmp(pod, worker) != 0))
            continue; /* another worker's line, or one that does not say whose */
        const char *body = json_string_value(json_object_get(h, "body"));
        size_t n = body ? json_string_length(json_object_get(h, "body")) : 0;
        while (n > 0 && (body[n - 1] == '\n' || body[n - 1] == '\r'))
            n--; /* the line's own end: one '\n' is added below */
        struct strbuf text = STRBUF_INIT;
        /* a body is the job's output: escape sequences and controls never reach a terminal */
        utf8_sanitize(&text, body ? body : "", n, UTF8_KEEP_NEWLINE | UTF8_KEEP_TAB);
        strbuf_addc(&text, '\n');
        const char *lt = json_string_value(json_object_get(h, "log_time"));
        page_add(page, lt ? time_parse_rfc3339(lt) : -1, strbuf_detach(&text, NULL), i);
    }
    return 0;
}

void acp_log_page_free(struct acp_log_page *page)
{
    for (size_t i = 0; i < page->count; i++)
        free(page->hits[i].text);
    free(page->hits);
    memset(page, 0, sizeof *page);
}

/* ---- reading a window ----------------------------------------------------- */

/* The error of a call to the Monitor service, said as such; returns the status to give back. */
static enum backend_status monitor_error(const char *endpoint, const char *worker,
                                         const struct http_result *r, struct api_error *err)
{
    if (r->transport != TRANSPORT_NONE) {
        api_error_set(err, 0, r->transport == TRANSPORT_UNREACHABLE ? "Unreachable" : "Transport",
                      "", "cannot reach the Monitor service at %s for worker logs: %s", endpoint,
                      r->message);
        return r->transport == TRANSPORT_UNREACHABLE ? BACKEND_UNREACHABLE : BACKEND_TRANSPORT;
    }
    struct api_error e;
    api_error_from_body(&e, r->status, r->body.buf, r->body.len);
    /* the server's words (sanitized by api_error_from_body, with what to do) after whom */
    api_error_set(err, e.status, e.reason, e.field,
                  "the logs of worker %s, from the Monitor service at %s: %s", worker, endpoint,
                  e.message);
    memcpy(err->details, e.details, sizeof e.details);
    err->detail_count = e.detail_count;
    return BACKEND_REJECTED;
}

/* A page's reply (res) decoded into page. */
static enum backend_status page_of(const char *endpoint, const char *worker,
                                   const struct http_result *res, struct acp_log_page *page,
                                   struct api_error *err)
{
    if (res->transport != TRANSPORT_NONE || res->status < 200 || res->status >= 300)
        return monitor_error(endpoint, worker, res, err);
    struct strbuf why = STRBUF_INIT;
    json_t *reply = jsonbound_loadb(res->body.buf ? res->body.buf : "", res->body.len, 0, &why);
    if (reply != NULL)
        acp_logs_decode(reply, worker, page, &why);
    enum backend_status st = BACKEND_OK;
    if (why.len) {
        api_error_set(err, res->status, "BadReply", "", "the logs of worker %s, from %s: %s",
                      worker, endpoint, strbuf_str(&why));
        st = BACKEND_REJECTED;
    }
    strbuf_free(&why);
    json_decref(reply);
    return st;
}

/* Is the page newest first? Read from its first and last dated hits (-1: cannot tell). */
static int newest_first(const struct acp_log_page *pg, size_t from)
{
    int64_t first = -1, last = -1;
    for (size_t i = from; i < pg->count; i++)
        if (pg->hits[i].ms >= 0) {
            if (first < 0)
                first = pg->hits[i].ms;
            last = pg->hits[i].ms;
        }
    return first < 0 || first == last ? -1 : first > last;
}

static int hit_cmp(const void *pa, const void *pb)
{
    const struct acp_log_hit *a = pa, *b = pb;
    if (a->ms != b->ms)
        return a->ms < b->ms ? -1 : 1;
    return (a->seq > b->seq) - (a->seq < b->seq);
}

/* A line shown at the cursor's second, and whether this poll has met it again. */
struct seen {
    int64_t ms;
    char *text;
    bool met;
};

struct cursor {
    int64_t second; /* the next poll asks from here */
    struct seen *v;
    size_t n, cap;
};

static void cursor_add(struct cursor *c, int64_t ms, const char *text)
{
    if (c->n == SEEN_MAX)
        return; /* more lines in one second than remembered: a later poll may repeat some */
    if (c->n == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 64;
        c->v = xreallocarray(c->v, c->cap, sizeof *c->v);
    }
    c->v[c->n++] = (struct seen){ms, xstrdup(text), true};
}

/* Was this line shown by an earlier poll? Each shown line answers yes once per poll. */
static bool cursor_met(struct cursor *c, int64_t ms, const char *text)
{
    for (size_t i = 0; i < c->n; i++)
        if (!c->v[i].met && c->v[i].ms == ms && strcmp(c->v[i].text, text) == 0) {
            c->v[i].met = true;
            return true;
        }
    return false;
}

/*
 * Moves the cursor to the second of the newest line, forgetting lines before
 * it (undated ones are kept: every poll brings them again), and readies the
 * rest for the next poll.
 */
static void cursor_advance(struct cursor *c, int64_t newest_ms)
{
    if (newest_ms >= 0 && newest_ms / 1000 > c->second)
        c->second = newest_ms / 1000;
    size_t k = 0;
    for (size_t i = 0; i < c->n; i++) {
        if (c->v[i].ms < 0 || c->v[i].ms >= c->second * 1000) {
            c->v[i].met = false;
            c->v[k++] = c->v[i];
        } else {
            free(c->v[i].text);
        }
    }
    c->n = k;
}

static void cursor_free(struct cursor *c)
{
    for (size_t i = 0; i < c->n; i++)
        free(c->v[i].text);
    free(c->v);
}

/* ---- a read in steps -------------------------------------------------------- */

/*
 * A read is a series of page requests: the window since the job's creation
 * (for the tail: the first page tells the total, then the end), then, when
 * followed, a window from the cursor every poll. The caller sends each
 * request (blocking, or on the loop) and hands its reply to acp_logs_reply.
 */
struct acp_logs {
    const struct acp_monitor *m;
    char *endpoint, *worker;
    const struct backend_target *t;
    struct strbuf path;
    backend_data_fn fn;
    void *ctx;
    long tail, want; /* asked; read (at most ACP_LOGS_LINES) */
    bool follow, polling, stop;
    struct cursor cur;
    /* the window being read */
    struct acp_logs_query q;
    long wtail; /* its tail (-1: all of it) */
    int order;  /* 1: newest first; 0: oldest first; -1: not known yet */
    int pages;  /* pages read of it */
    size_t next_seq;
    struct acp_log_page all;
    bool cut; /* stopped after ACP_LOGS_MAX_PAGES pages (and the first) */
    /* following */
    bool now_ended, was_ended;
    int failed; /* polls in a row the Monitor service could not be reached */
};

/* Starts reading the hits of [start, end] (the last tail when tail >= 0). */
static void window_start(struct acp_logs *r, int64_t start, long tail)
{
    /* a minute of slack each side for clocks that differ */
    int64_t end = time_now_ms() / 1000 + 60;
    r->q = (struct acp_logs_query){r->t, r->worker, start, end, 0, ACP_LOGS_PAGE};
    r->wtail = tail;
    r->order = -1;
    r->pages = 0;
    r->next_seq = 0;
    r->cut = false;
    acp_log_page_free(&r->all);
}

/*
 * A page of the window into r->all — of the last tail only: a server that
 * sends the oldest first is asked from total - tail on; one that sends the
 * newest first, until tail are read. Sets *more when another page is to be
 * asked; when not, r->all is the window, oldest first.
 */
static void window_page(struct acp_logs *r, struct acp_log_page *pg, bool *more)
{
    long tail = r->wtail;
    int pages = r->pages++;
    if (r->order < 0)
        r->order = newest_first(pg, 0);
    size_t keep_from = 0; /* raw index of the first hit kept */
    *more = true;
    if (pages == 0 && tail >= 0 && r->order != 1 && pg->total > tail) {
        long skip = (long)(pg->total - tail); /* the oldest first: the last tail are at the end */
        if ((size_t)skip >= pg->raw) {
            acp_log_page_free(pg);
            r->q.offset = skip;
            goto next;
        }
        keep_from = (size_t)skip;
    }
    for (size_t i = 0; i < pg->count; i++) {
        if (pg->hits[i].seq < keep_from) {
            free(pg->hits[i].text);
            continue;
        }
        page_add(&r->all, pg->hits[i].ms, pg->hits[i].text, r->next_seq + pg->hits[i].seq);
    }
    r->next_seq += pg->raw;
    free(pg->hits);
    r->all.total = pg->total;
    r->q.offset += (long)pg->raw;
    if (pg->raw == 0 || r->q.offset >= pg->total)
        *more = false;
    else if (tail >= 0 && r->order == 1 && r->all.count >= (size_t)tail)
        *more = false;
next:
    if (*more && r->pages == ACP_LOGS_MAX_PAGES + 1) { /* + 1: the first, which tells the total */
        r->cut = true;
        *more = false;
    }
    if (*more)
        return;
    /* oldest first, lines of one time in the order they were logged */
    if (r->order == 1)
        for (size_t i = 0; i < r->all.count; i++)
            r->all.hits[i].seq = r->next_seq - r->all.hits[i].seq;
    qsort(r->all.hits, r->all.count, sizeof *r->all.hits, hit_cmp);
}

/* The first window to fn: its last want lines, and a note when earlier ones were cut. */
static void show_first(struct acp_logs *r)
{
    struct acp_log_page *all = &r->all;
    size_t from = all->count > (size_t)r->want ? all->count - (size_t)r->want : 0;
    bool capped = r->tail < 0 || r->tail > ACP_LOGS_LINES; /* asked for more than is read */
    if (capped && (r->cut || all->total > r->want)) {
        char note[160];
        snprintf(note, sizeof note, "… earlier lines are not shown: at most %d are read …\n",
                 ACP_LOGS_LINES);
        r->stop = r->fn(r->ctx, note, strlen(note)) != 0;
    }
    int64_t newest = -1;
    for (size_t i = 0; i < all->count; i++)
        if (all->hits[i].ms > newest)
            newest = all->hits[i].ms;
    if (newest >= 0 && newest / 1000 > r->cur.second)
        r->cur.second = newest / 1000;
    for (size_t i = 0; i < all->count && !r->stop; i++) {
        if (all->hits[i].ms < 0 || all->hits[i].ms >= r->cur.second * 1000)
            cursor_add(&r->cur, all->hits[i].ms, all->hits[i].text);
        if (i >= from)
            r->stop = r->fn(r->ctx, all->hits[i].text, strlen(all->hits[i].text)) != 0;
    }
    cursor_advance(&r->cur, -1);
}

/* A poll's window to fn: the lines not shown yet. Returns how many were shown. */
static size_t show_new(struct acp_logs *r)
{
    size_t shown = 0;
    int64_t newest = -1;
    for (size_t i = 0; i < r->all.count && !r->stop; i++) {
        const struct acp_log_hit *h = &r->all.hits[i];
        if (h->ms >= 0 && h->ms < r->cur.second * 1000)
            continue; /* before the cursor: shown already */
        if (cursor_met(&r->cur, h->ms, h->text))
            continue;
        cursor_add(&r->cur, h->ms, h->text);
        if (h->ms > newest)
            newest = h->ms;
        r->stop = r->fn(r->ctx, h->text, strlen(h->text)) != 0;
        shown++;
    }
    cursor_advance(&r->cur, newest);
    return shown;
}

enum backend_status acp_logs_begin(struct acp_logs **out, const struct acp_monitor *m,
                                   const char *endpoint, const struct backend_target *t,
                                   const char *worker, long tail, bool follow, int64_t since_s,
                                   backend_data_fn fn, void *ctx, struct api_error *err)
{
    *out = NULL;
    struct strbuf path = STRBUF_INIT, why = STRBUF_INIT;
    if (acp_logs_path(t, m->station, &path, &why) != 0) {
        api_error_set(err, 400, "NoTelemetryStation", "telemetry_station",
                      "worker logs on ACP are read from the Monitor service (%s): %s. Set "
                      "telemetry_station: in the context, your personal station's name "
                      "(ts-user-<your IAM id>) or the /subscriptions/…/telemetryStations/NAME "
                      "path the console's log page uses",
                      endpoint, strbuf_str(&why));
        strbuf_free(&path);
        strbuf_free(&why);
        return BACKEND_REJECTED;
    }
    strbuf_free(&why);
    struct acp_logs *r = xcalloc(1, sizeof *r);
    /* at most ACP_LOGS_LINES lines are read at once: of a longer log, its last ones */
    long want = tail >= 0 && tail < ACP_LOGS_LINES ? tail : ACP_LOGS_LINES;
    *r = (struct acp_logs){.m = m,
                           .endpoint = xstrdup(endpoint),
                           .worker = worker ? xstrdup(worker) : NULL,
                           .t = t,
                           .path = path,
                           .fn = fn,
                           .ctx = ctx,
                           .tail = tail,
                           .want = want,
                           .follow = follow,
                           .cur = {since_s, NULL, 0, 0}};
    window_start(r, since_s, r->want);
    *out = r;
    return BACKEND_OK;
}

const char *acp_logs_request_path(const struct acp_logs *r)
{
    return strbuf_str(&r->path);
}

char *acp_logs_request_body(const struct acp_logs *r)
{
    json_t *body = acp_logs_body(&r->q);
    char *text = json_dumps(body, JSON_COMPACT);
    json_decref(body);
    return text;
}

enum acp_logs_next acp_logs_reply(struct acp_logs *r, const struct http_result *res,
                                  enum backend_status *st, struct api_error *err)
{
    struct acp_log_page pg = {0};
    *st = page_of(r->endpoint, r->worker, res, &pg, err);
    if (*st != BACKEND_OK) {
        acp_log_page_free(&pg);
        if (r->polling && (*st == BACKEND_UNREACHABLE || *st == BACKEND_TRANSPORT) &&
            r->failed++ < ACP_LOGS_RETRIES) {
            *st = BACKEND_OK; /* a network blip: the next poll asks again */
            return ACP_LOGS_POLL;
        }
        return ACP_LOGS_END;
    }
    bool more;
    window_page(r, &pg, &more);
    if (more)
        return ACP_LOGS_ASK;
    if (!r->polling) {
        show_first(r);
        r->polling = true;
    } else {
        r->failed = 0;
        /* after the job ended, one more poll that brings nothing ends it */
        if (show_new(r) == 0 && r->was_ended)
            return ACP_LOGS_END;
        r->was_ended = r->now_ended;
    }
    acp_log_page_free(&r->all);
    return r->follow && !r->stop ? ACP_LOGS_POLL : ACP_LOGS_END;
}

void acp_logs_poll(struct acp_logs *r, bool ended)
{
    r->now_ended = ended;
    window_start(r, r->cur.second, -1);
}

long acp_logs_poll_ms(const struct acp_logs *r)
{
    return r->m->poll_ms;
}

void acp_logs_free(struct acp_logs *r)
{
    if (r == NULL)
        return;
    acp_log_page_free(&r->all);
    cursor_free(&r->cur);
    strbuf_free(&r->path);
    free(r->endpoint);
    free(r->worker);
    free(r);
}

static void pause_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

enum backend_status acp_logs_read(const struct acp_monitor *m, const char *endpoint,
                                  const struct backend_target *t, const char *worker, long tail,
                                  bool follow, int64_t since_s, bool (*ended)(void *ctx),
                                  void *ended_ctx, backend_data_fn fn, void *ctx,
                                  struct api_error *err)
{
    struct acp_logs *r;
    enum backend_status st =
        acp_logs_begin(&r, m, endpoint, t, worker, tail, follow, since_s, fn, ctx, err);
    for (enum acp_logs_next next = ACP_LOGS_ASK; st == BACKEND_OK && next != ACP_LOGS_END;) {
        char *body = acp_logs_request_body(r);
        struct http_result res;
        http_result_init(&res);
        http_call(m->client, "POST", acp_logs_request_path(r), body, strlen(body), &res);
        free(body);
        next = acp_logs_reply(r, &res, &st, err);
        http_result_free(&res);
        if (next == ACP_LOGS_POLL) {
            pause_ms(m->poll_ms);
            acp_logs_poll(r, ended && ended(ended_ctx));
        }
    }
    acp_logs_free(r);
    return st;
}

int64_t acp_logs_since(const char *create_time)
{
    int64_t created = create_time ? time_parse_rfc3339(create_time) : -1;
    return created >= 0 ? created / 1000 - 60 : time_now_ms() / 1000 - 7 * 86400;
}
