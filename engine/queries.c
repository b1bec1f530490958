/*
 * queries: the requests that read trainjobd's state — a job, lists (JSON
 * and text, filtered and paged), its workers, its events and a worker's log
 * (tailed or followed). Called by engine/routes.c; log followers are told
 * of a job's end by lifecycle.c through engine_end_followers.
 */
#include "engine/engine.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/apierror.h"
#include "api/jobspec_json.h"
#include "api/schema.h"
#include "engine/logfollow.h"
#include "engine/scalarfollow.h"
#include "engine/shown.h"
#include "engine/state.h"
#include "engine/store.h"
#include "engine/stream.h"
#include "util/fileio.h"
#include "util/strbuf.h"
#include "util/timefmt.h"
#include "util/xalloc.h"

int engine_job_get(struct engine *eng, const char *user, const char *ws, const char *name,
                   json_t **reply, struct api_error *err)
{
    struct ejob *job;
    int rc = find_job(eng, user, ws, name, &job, err);
    if (rc)
        return rc;
    *reply = job_json(job);
    return 200;
}

/* One term of a list filter: key='value'. */
static bool filter_matches(const struct ejob *job, const char *key, const char *value)
{
    if (strcmp(key, "name") == 0)
        return strcmp(job->name, value) == 0;
    if (strcmp(key, "display_name") == 0) {
        const char *shown = job->display_is_name ? job->name : job->display_name;
        return shown && strcmp(shown, value) == 0;
    }
    if (strcmp(key, "state") == 0)
        return strcmp(enum_name(&job_state_names, (int)job->state), value) == 0;
    if (strcmp(key, "user_name") == 0 || strcmp(key, "creator_id") == 0)
        return job->creator && strcmp(job->creator, value) == 0;
    return false;
}

/* Parses "k='v' AND k2='v2'" into pairs; returns -1 with a message on bad syntax. */
static int parse_filter(const char *filter, char keys[8][32], char values[8][256], int *count,
                        struct api_error *err)
{
    *count = 0;
    const char *p = filter;
    while (p && *p) {
        while (*p == ' ')
            p++;
        if (*p == '\0')
            break;
        if (*count == 8)
            return api_error_set(err, 400, "InvalidFilter", "filter", "at most 8 terms");
        int klen = 0, vlen = 0;
        while (p[klen] && p[klen] != '=' && p[klen] != ' ' && klen < 31)
            klen++;
        if (p[klen] != '=' || p[klen + 1] != '\'')
            return api_error_set(err, 400, "InvalidFilter", "filter",
                                 "expected key='value' at '%.40s'", p);
        memcpy(keys[*count], p, (size_t)klen);
        keys[*count][klen] = '\0';
        const char *v = p + klen + 2;
        while (v[vlen] && v[vlen] != '\'' && vlen < 255)
            vlen++;
        if (v[vlen] != '\'')
            return api_error_set(err, 400, "InvalidFilter", "filter", "unterminated value");
        memcpy(values[*count], v, (size_t)vlen);
        values[*count][vlen] = '\0';
        if (strcmp(keys[*count], "name") && strcmp(keys[*count], "state") &&
            strcmp(keys[*count], "display_name") && strcmp(keys[*count], "user_name") &&
            strcmp(keys[*count], "creator_id"))
            return api_error_set(err, 400, "InvalidFilter", "filter",
                                 "cannot filter on '%s'; use name, state, display_name or "
                                 "user_name",
                                 keys[*count]);
        (*count)++;
        p = v + vlen + 1;
        while (*p == ' ')
            p++;
        if (strncmp(p, "AND ", 4) == 0)
            p += 4;
        else if (*p)
            return api_error_set(err, 400, "InvalidFilter", "filter",
                                 "expected AND between terms at '%.40s'", p);
    }
    return 0;
}

int engine_job_view(const char *value)
{
    if (value == NULL || *value == '\0' || strcmp(value, "FULL") == 0)
        return JOB_VIEW_FULL;
    if (strcmp(value, "BASIC") == 0)
        return JOB_VIEW_BASIC;
    return -1;
}

/* Appends a job as view asks, as JSON text. */
static void job_text(const struct ejob *job, enum job_view view, struct strbuf *out)
{
    if (view == JOB_VIEW_BASIC) {
        if (job->shown_summary)
            shown_append(job->shown_summary, out); /* as last saved, like job_json */
        else if (job->full_)                       /* never saved: cannot happen once created */
            jobspec_summary_write(job->full_, out);
        return;
    }
    if (job->shown_job) {
        shown_append(job->shown_job, out);
        return;
    }
    if (job->full_ == NULL)
        return;
    char *s = dump_json(jobspec_to_json(job->full_));
    strbuf_adds(out, s);
    free(s);
}

/*
 * Where a list page starts. Our next_page_token is "k<seq>-<total>": the
 * page goes on after the job with that seq (a binary search: eng->jobs is in
 * seq order), and total_size is the first page's count, carried along — so
 * following every page of N jobs costs O(N) in all, not O(N) per page, and
 * no job is sent twice when jobs come and go between pages. A decimal page
 * number (what ACP's clients send) still works, by counting from the start.
 */
struct page_start {
    size_t from; /* the first position of eng->jobs to look at */
    size_t skip; /* matching jobs to pass over first (a page number) */
    long total;  /* carried total_size; -1: count it */
};

static int page_start(struct engine *eng, const char *token, int size, struct page_start *ps,
                      struct api_error *err)
{
    memset(ps, 0, sizeof *ps);
    ps->total = -1;
    if (token == NULL || *token == '\0')
        return 0;
    char *end;
    if (token[0] == 'k' && token[1] >= '0' && token[1] <= '9') {
        errno = 0;
        unsigned long long seq = strtoull(token + 1, &end, 10);
        if (errno == 0 && *end == '-' && end[1] >= '0' && end[1] <= '9') {
            long total = strtol(end + 1, &end, 10);
            if (errno == 0 && *end == '\0' && total >= 0) {
                ps->from = first_after(eng, (uint64_t)seq);
                ps->total = total;
                return 0;
            }
        }
    } else {
        long page = strtol(token, &end, 10);
        if (*end == '\0' && page >= 1 && page <= LONG_MAX / 500) {
            ps->skip = (size_t)(page - 1) * (size_t)size;
            return 0;
        }
    }
    return api_error_set(err, 400, "InvalidArgument", "page_token",
                         "'%.40s' is not a page token of this server", token);
}

int engine_job_list_text(struct engine *eng, const char *user, const char *ws,
                         const struct job_query *q, struct strbuf *out, struct api_error *err)
{
    int rc = member_check(eng, user, ws, err);
    if (rc)
        return rc;
    int size = q->page_size;
    if (size < 0)
        return api_error_set(err, 400, "InvalidArgument", "page_size", "must not be negative");
    if (size == 0)
        size = 10;
    if (size > 500)
        size = 500;
    struct page_start ps;
    if ((rc = page_start(eng, q->page_token, size, &ps, err)) != 0)
        return rc;
    char keys[8][32], values[8][256];
    int terms;
    if ((rc = parse_filter(q->filter, keys, values, &terms, err)) != 0)
        return rc;
    size_t prefix = q->name ? strlen(q->name) : 0;
    strbuf_adds(out, "{\"training_jobs\":[");
    size_t matched = 0, sent = 0;
    uint64_t last_seq = 0;
    bool more = false;
    for (size_t i = ps.from; i < eng->job_count; i++) {
        struct ejob *job = eng->jobs[i];
        if (strcmp(job->ws, ws) != 0 || job->state == JOB_STATE_DELETED)
            continue;
        if (prefix && strncmp(job->name, q->name, prefix) != 0)
            continue;
        bool ok = true;
        for (int t = 0; t < terms && ok; t++)
            ok = filter_matches(job, keys[t], values[t]);
        if (!ok)
            continue;
        matched++;
        if (matched <= ps.skip)
            continue;
        if (sent == (size_t)size) {
            more = true;
            if (ps.total >= 0)
                break; /* the total is known: no need to count the rest */
            continue;
        }
        if (sent)
            strbuf_addc(out, ',');
        job_text(job, q->view, out);
        last_seq = job->seq;
        sent++;
    }
    long total = ps.total >= 0 ? ps.total : (long)matched;
    char next[48] = "";
    if (more)
        snprintf(next, sizeof next, "k%llu-%ld", (unsigned long long)last_seq, total);
    strbuf_addf(out, "],\"next_page_token\":\"%s\",\"total_size\":%ld}", next, total);
    return 200;
}

int engine_job_list(struct engine *eng, const char *user, const char *ws, const struct job_query *q,
                    json_t **reply, struct api_error *err)
{
    struct strbuf text = STRBUF_INIT;
    int rc = engine_job_list_text(eng, user, ws, q, &text, err);
    if (rc == 200) {
        *reply = json_loadb(text.buf, text.len, 0, NULL);
        if (*reply == NULL)
            rc = api_error_set(err, 500, "Internal", "", "the list could not be built");
    }
    strbuf_free(&text);
    return rc;
}

int engine_job_workers(struct engine *eng, const char *user, const char *ws, const char *name,
                       json_t **reply, struct api_error *err)
{
    struct ejob *job;
    int rc = find_job(eng, user, ws, name, &job, err);
    if (rc)
        return rc;
    json_t *workers = saved_workers(job); /* as last saved, like the job */
    *reply = json_pack("{s:o, s:s, s:I}", "workers", workers, "next_page_token", "", "total_size",
                       (json_int_t)json_array_size(workers));
    return 200;
}

/* n with thousands separators: 1234567 → "1,234,567". */
static void format_thousands(int64_t n, char *out, size_t size)
{
    char digits[24];
    int len = snprintf(digits, sizeof digits, "%lld", (long long)(n < 0 ? 0 : n));
    size_t o = 0;
    for (int i = 0; i < len && o + 2 < size; i++) {
        if (i > 0 && (len - i) % 3 == 0)
            out[o++] = ',';
        out[o++] = digits[i];
    }
    out[o] = '\0';
}

static int collect_event(void *ctx, int64_t id, int64_t time_ms, const char *json)
{
    (void)id;
    (void)time_ms;
    json_t *e = json_loads(json, 0, NULL);
    if (e) {
        json_object_set_new(e, "id", json_integer(id));
        json_array_append_new(ctx, e);
    }
    return 0;
}

int engine_job_events(struct engine *eng, const char *user, const char *ws, const char *name,
                      json_t **reply, struct api_error *err)
{
    struct ejob *job;
    int rc = find_job(eng, user, ws, name, &job, err);
    if (rc)
        return rc;
    json_t *arr = json_array();
    if (job->events_folded > 0) {
        /* The events kept are the newest; say how many older ones were folded. */
        struct config_limits lim;
        config_effective_limits(&eng->cfg, &lim);
        char count[32], text[160];
        format_thousands(job->events_folded, count, sizeof count);
        snprintf(text, sizeof text, "… %s earlier event%s folded (the newest %d are kept)", count,
                 job->events_folded == 1 ? "" : "s", lim.events_per_job);
        struct job_event note = {0};
        note.kind = EVENT_UNSPECIFIED;
        note.job = job->name;
        note.message = text;
        json_array_append_new(arr, job_event_to_json(&note));
    }
    struct strbuf serr = STRBUF_INIT;
    if (store_events_each(eng->store, job->uid, 0, collect_event, arr, &serr) != STORE_OK) {
        json_decref(arr);
        rc = api_error_set(err, 500, "StoreFailed", "", "%s", strbuf_str(&serr));
        strbuf_free(&serr);
        return rc;
    }
    strbuf_free(&serr);
    *reply = json_pack("{s:o}", "events", arr);
    return 200;
}

/* Appends the last `tail` lines of the file at path (all when tail < 0). */
static void tail_file(const char *path, long tail, struct strbuf *out)
{
    char *data;
    size_t len;
    struct strbuf io = STRBUF_INIT;
    if (file_read_all(path, SIZE_MAX / 2, &data, &len, &io) != 0) {
        strbuf_free(&io);
        return;
    }
    strbuf_free(&io);
    size_t start = 0;
    if (tail >= 0) {
        long lines = 0;
        size_t i = len;
        if (i > 0 && data[i - 1] == '\n')
            i--;
        while (i > 0) {
            if (data[i - 1] == '\n' && ++lines == tail + (tail == 0))
                break;
            i--;
        }
        start = tail == 0 ? len : i;
    }
    strbuf_add(out, data + start, len - start);
    free(data);
}

int engine_worker_log(struct engine *eng, const char *user, const char *ws, const char *name,
                      const struct worker_log_query *lq, struct strbuf *out,
                      struct stream **follow_stream, struct api_error *err)
{
    struct ejob *job;
    int rc = find_job(eng, user, ws, name, &job, err);
    if (rc)
        return rc;
    const char *worker = lq->worker;
    bool known = false;
    for (size_t i = 0; i < job->worker_count; i++)
        known |= strcmp(job->workers[i].name, worker) == 0;
    if (!known)
        return api_error_set(err, 404, "NotFound", "worker", "job '%s' has no worker '%s'%s", name,
                             worker, job->worker_count ? "" : " (it has not been scheduled yet)");
    char *path = lifecycle_log_path(eng, job, worker);
    if (!lq->follow) {
        if (lq->tail < 0) { /* the whole log: its rotated generation first */
            char *rotated = xasprintf("%s.1", path);
            tail_file(rotated, -1, out);
            free(rotated);
        }
        tail_file(path, lq->tail, out);
        free(path);
        return 200;
    }
    /* Following: read as the client drains, to the end once the worker has ended. */
    struct logfollow_start how = {
        path, lq->tail, lq->framed, lq->from, eng->opt.log_cap, true, lq->framed && lq->times};
    struct strbuf why = STRBUF_INIT;
    struct stream *s = logfollow_open(&how, &why);
    free(path);
    if (s == NULL) {
        rc = api_error_set(err, 500, "LogUnreadable", "worker", "%s", strbuf_str(&why));
        strbuf_free(&why);
        return rc;
    }
    strbuf_free(&why);
    if (job_state_terminal(job->state))
        logfollow_poke(s, true);
    eng->followers = xreallocarray(eng->followers, eng->follower_count + 1, sizeof *eng->followers);
    eng->followers[eng->follower_count++] = stream_ref(s);
    *follow_stream = s;
    return 200;
}

/* Tells the log followers of a job that will write no more: they end at the log's end. */
void engine_end_followers(struct engine *eng, struct ejob *job)
{
    char prefix[128];
    snprintf(prefix, sizeof prefix, "%s.", job->uid);
    for (size_t i = 0; i < eng->follower_count; i++)
        if (logfollow_matches_job(eng->followers[i], prefix))
            logfollow_poke(eng->followers[i], true);
    for (size_t i = 0; i < eng->scalar_follower_count; i++)
        if (scalarfollow_of(eng->scalar_followers[i], job->uid))
            scalarfollow_job_ended(eng->scalar_followers[i]);
}
