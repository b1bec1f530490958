/*
 * cmd_metrics: `trainjob metrics` — the scalars a training job writes for
 * TensorBoard, in a terminal or a script, with no TensorBoard running.
 *
 *   trainjob metrics NAME [--tag T]... [-o table|csv|json] [-f]
 *   trainjob metrics --logdir DIR [--tag T]... [-o table|csv|json] [-f]
 *
 * The scalars come from one of two sources behind one poll function: a
 * job's, page by page through the backend (trainjobd's scalars endpoint,
 * api/backend.h backend_scalars, resuming at each page's cursor), or any
 * log directory read here (api/tfevents), job or no job. `table` keeps only
 * the last point per (run, tag) (api/metricset, two buckets a series);
 * `csv` and `json` stream every point as it is read, holding none. A table
 * holds at most TABLE_MAX_SERIES series, a bound on memory against a job
 * that writes a new tag per step; points of further series are not dropped
 * unsaid: how many were left out goes to stderr, and the status is 1, so a
 * script does not take part of the table for all of it (as kubectl fails a
 * get that could not list everything). With -f
 * a job's points come pushed by the engine (backend_scalars_follow: no
 * wake-up while nothing is written) until it ends; a backend without that
 * stream, and a directory, are polled every FOLLOW_MS (a directory until
 * interrupted). Run and tag names come from the job's files: they are
 * sanitized like every other name before they reach the output.
 */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api/backend.h"
#include "api/metricset.h"
#include "api/scalarpage.h"
#include "api/session.h"
#include "api/tfevents.h"
#include "cli/cli.h"
#include "util/numfmt.h"
#include "util/sizefmt.h"
#include "util/strbuf.h"
#include "util/timefmt.h"
#include "util/utf8.h"
#include "util/xalloc.h"

#define FOLLOW_MS 1000               /* between polls with -f */
#define LOGDIR_POLL_BYTES (8u << 20) /* event-file bytes per read of --logdir */
#define MAX_TAG_PATTERNS 64
#define FOLLOW_RECONNECT_MS 60000 /* -f: how long an engine that went away is waited for */
#define POLL_LOST (-1)            /* -f: the engine did not answer this time */
/* -o table: the series kept (two buckets each; 55 MB peak with printing); more are counted */
#define TABLE_MAX_SERIES 65536
#define CSV_PAIRS 16   /* csv: series whose "run,tag" fields are kept made */
#define TAGS_LISTED 32 /* --tag matching nothing: the tags there are, said up to this many */

static const char metrics_usage[] =
    "usage: trainjob metrics NAME [--tag T]... [-o table|csv|json] [-f]\n"
    "       trainjob metrics --logdir DIR [--tag T]... [-o table|csv|json] [-f]\n"
    "Prints the TensorBoard scalars of a job (read from its tensorboard.log_path by the\n"
    "backend) or of any log directory (--logdir: read here, no job or server needed).\n"
    "  -o table     the last value of every run and tag (default); at most 65536 series:\n"
    "               past that, how many points were left out is said and the status is 1\n"
    "  -o csv       every point: run,tag,step,wall_time,value (with a header line)\n"
    "  -o json      every point as a JSON array of {run, tag, step, wall_time, value};\n"
    "               with -f one object per line (NDJSON)\n"
    "  --tag T      only tags matching T, a shell pattern where '*' also matches '/';\n"
    "               without '/' it matches the tag's last part too ('loss*' picks\n"
    "               train/loss), with '/' the whole tag ('train/*'); repeatable.\n"
    "               When no tag matches, the tags there are go to stderr, status 1\n"
    "  -f           follow: print new points as they are written, until the job ends\n"
    "               (with --logdir: until interrupted); a table prints changed rows\n"
    "Runs are the log directory itself (\".\") and its subdirectories (rank0, rank1, ...).\n"
    "Values that are not finite print as NaN, Infinity, -Infinity (JSON: as strings).\n";

enum metrics_output {
    METRICS_TABLE,
    METRICS_CSV,
    METRICS_JSON,
};

/* Where points come from and where they go; one per run of the verb. */
struct metrics {
    /* source: a job through a backend, or a directory read here */
    struct session *s;
    const char *name;
    char *cursor; /* the job's: where the next page starts */
    char *log_path;
    struct tfevents_dir *dir;
    /* filter and output */
    const char *tags[MAX_TAG_PATTERNS];
    size_t tag_count;
    bool tag_matched;              /* --tag: a point matched */
    char *other_tags[TAGS_LISTED]; /* --tag, none matched yet: tags that did not */
    size_t other_count;
    bool other_more;  /* more tags than other_tags holds */
    bool told_no_tag; /* -f: said once that no tag matches yet */
    enum metrics_output output;
    bool follow;
    FILE *out, *err;
    bool tty;
    struct metricset *last; /* table: the last point of each series */
    uint64_t *shown;        /* table: each series' point count when its row was printed */
    size_t shown_cap;
    bool table_shown; /* the header is out: -f prints only rows that changed */
    size_t width[5];  /* table: its columns' widths, which only grow (-f keeps them aligned) */
    uint64_t printed; /* points printed (csv, json) */
    uint64_t bad_crc, bad_protobuf, dropped, told_bad;
    uint64_t told_holes;    /* --logdir: holes of sparse files said so far */
    uint64_t told_left_out; /* table: points of series past TABLE_MAX_SERIES, said so far */
    int64_t away_since;     /* -f: when the engine stopped answering (0: it answers) */
    bool started;           /* the first read worked: -f may wait out an engine that went away */
    struct strbuf line, scratch; /* reused */
    /* csv: "run,tag" of the last series met (rows of a few series repeat them) */
    struct csv_pair {
        char *run, *tag;
        struct strbuf fields;
    } csv_pairs[CSV_PAIRS];
    size_t csv_next; /* the pair replaced next */
    size_t csv_hint; /* the pair after the last one met: tags come round in turn */
};

static void pause_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* Appends a name from a job's files, made safe for a terminal (controls and escapes gone). */
static void add_clean(struct strbuf *sb, const char *s)
{
    if (s)
        utf8_sanitize(sb, s, strlen(s), 0);
}

/* "trainjob: MESSAGE" with the server's message sanitized; 1 if it said no, else 2. */
static int failed(FILE *err, enum backend_status st, const struct api_error *e)
{
    struct strbuf sb = STRBUF_INIT;
    strbuf_adds(&sb, "trainjob: ");
    add_clean(&sb, e->message);
    fprintf(err, "%s\n", strbuf_str(&sb));
    strbuf_free(&sb);
    return st == BACKEND_REJECTED ? EXIT_INVALID : EXIT_USAGE;
}

/* Keeps a tag that no --tag matched, to list while none has (at most TAGS_LISTED). */
static void note_other_tag(struct metrics *m, const char *tag)
{
    for (size_t i = 0; i < m->other_count; i++)
        if (strcmp(m->other_tags[i], tag) == 0)
            return;
    if (m->other_count == TAGS_LISTED)
        m->other_more = true;
    else
        m->other_tags[m->other_count++] = xstrdup(tag);
}

/* Does a --tag pattern pick this tag (api/scalarpage_tag_match)? All do without --tag. */
static bool tag_wanted(struct metrics *m, const char *tag)
{
    if (m->tag_count == 0)
        return true;
    for (size_t i = 0; i < m->tag_count; i++)
        if (scalarpage_tag_match(m->tags[i], tag)) {
            m->tag_matched = true;
            return true;
        }
    if (!m->tag_matched)
        note_other_tag(m, tag);
    return false;
}

static int by_string(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * --tag matched none of the tags read: says so on stderr with the patterns
 * and the tags there are (sorted, sanitized). True when it did.
 */
static bool tell_no_tag(struct metrics *m, const char *when)
{
    if (m->tag_count == 0 || m->tag_matched || m->other_count == 0)
        return false;
    qsort(m->other_tags, m->other_count, sizeof *m->other_tags, by_string);
    struct strbuf line = STRBUF_INIT;
    strbuf_adds(&line, "trainjob metrics: no tag matches --tag ");
    for (size_t i = 0; i < m->tag_count; i++) {
        strbuf_adds(&line, i ? ", '" : "'");
        add_clean(&line, m->tags[i]);
        strbuf_addc(&line, '\'');
    }
    strbuf_addf(&line, "%s; the tags %s: ", when, *when ? "so far" : "are");
    for (size_t i = 0; i < m->other_count; i++) {
        if (i)
            strbuf_adds(&line, ", ");
        add_clean(&line, m->other_tags[i]);
    }
    if (m->other_more)
        strbuf_adds(&line, ", …");
    fprintf(m->err, "%s\n", strbuf_str(&line));
    strbuf_free(&line);
    return true;
}

/* A value as text: the shortest that reads back, or NaN / Infinity / -Infinity. */
static void add_value(struct strbuf *sb, double v)
{
    if (isnan(v) || isinf(v)) {
        strbuf_adds(sb, isnan(v) ? "NaN" : v > 0 ? "Infinity" : "-Infinity");
        return;
    }
    scalarpage_json_value(sb, v); /* a plain number when finite */
}

/* A CSV field (RFC 4180): sanitized, quoted when it holds a comma, a quote or a space. */
static void add_csv_field(struct strbuf *sb, struct strbuf *scratch, const char *s)
{
    strbuf_reset(scratch);
    add_clean(scratch, s);
    const char *c = strbuf_str(scratch);
    if (*c && strpbrk(c, ",\" ") == NULL) {
        strbuf_adds(sb, c);
        return;
    }
    strbuf_addc(sb, '"');
    for (; *c; c++) {
        if (*c == '"')
            strbuf_addc(sb, '"');
        strbuf_addc(sb, *c);
    }
    strbuf_addc(sb, '"');
}

/* The CSV fields "run,tag", made once for each of the last CSV_PAIRS series met. */
static void add_csv_pair(struct metrics *m, struct strbuf *sb, const char *run, const char *tag)
{
    run = run ? run : "";
    tag = tag ? tag : "";
    struct csv_pair *c = NULL;
    for (size_t k = 0; k < CSV_PAIRS && c == NULL; k++) {
        struct csv_pair *p = &m->csv_pairs[(m->csv_hint + k) % CSV_PAIRS];
        if (p->run && strcmp(p->tag, tag) == 0 && strcmp(p->run, run) == 0)
            c = p;
    }
    if (c == NULL) {
        c = &m->csv_pairs[m->csv_next];
        m->csv_next = (m->csv_next + 1) % CSV_PAIRS;
        free(c->run);
        free(c->tag);
        c->run = xstrdup(run);
        c->tag = xstrdup(tag);
        strbuf_reset(&c->fields);
        add_csv_field(&c->fields, &m->scratch, run);
        strbuf_addc(&c->fields, ',');
        add_csv_field(&c->fields, &m->scratch, tag);
    }
    m->csv_hint = (size_t)(c - m->csv_pairs + 1) % CSV_PAIRS;
    strbuf_add(sb, c->fields.buf, c->fields.len);
}

/* One point out: a CSV row or a JSON object (table: into the set of last values). */
static void emit(struct metrics *m, const char *run, const char *tag, int64_t step,
                 double wall_time, double value)
{
    if (!tag_wanted(m, tag))
        return;
    struct strbuf *l = &m->line;
    strbuf_reset(l);
    switch (m->output) {
    case METRICS_TABLE:
        metricset_add(m->last, run, tag, step, wall_time, value);
        return;
    case METRICS_CSV:
        add_csv_pair(m, l, run, tag);
        strbuf_addc(l, ',');
        numfmt_add_int(l, (long long)step);
        strbuf_addc(l, ',');
        scalarpage_json_wall_time(l, wall_time);
        strbuf_addc(l, ',');
        add_value(l, value);
        break;
    case METRICS_JSON: {
        /* exact names into a pipe (JSON escapes them); sanitized ones to a terminal */
        struct strbuf r = STRBUF_INIT, t = STRBUF_INIT;
        if (m->tty) {
            add_clean(&r, run);
            add_clean(&t, tag);
        }
        if (!m->follow)
            strbuf_adds(l, m->printed ? ",\n  " : "  ");
        scalarpage_json_point(l, m->tty ? strbuf_str(&r) : run, m->tty ? strbuf_str(&t) : tag, step,
                              wall_time, value);
        strbuf_free(&r);
        strbuf_free(&t);
        if (!m->follow) {
            fwrite(l->buf, 1, l->len, m->out);
            m->printed++;
            return;
        }
        break;
    }
    }
    strbuf_addc(l, '\n');
    fwrite_unlocked(l->buf, 1, l->len, m->out); /* one thread: a row is no place for a lock */
    m->printed++;
}

static void on_dir_scalar(void *ctx, const struct tfevents_scalar *s)
{
    emit(ctx, s->run, s->tag, s->step, s->wall_time, s->value);
}

/*
 * A failed page: with -f, an engine that does not answer (restarting, a
 * connection cut) is said once and tried again for FOLLOW_RECONNECT_MS
 * (POLL_LOST); anything else, or longer, ends the command.
 */
static int lost(struct metrics *m, enum backend_status st, const struct api_error *e)
{
    if (!m->follow || !m->started || st == BACKEND_REJECTED)
        return failed(m->err, st, e);
    int64_t now = time_now_ms();
    if (m->away_since == 0) {
        m->away_since = now;
        struct strbuf line = STRBUF_INIT;
        add_clean(&line, e->message);
        fprintf(m->err, "trainjob metrics: lost the engine: %s; reconnecting\n", strbuf_str(&line));
        strbuf_free(&line);
    } else if (now - m->away_since > FOLLOW_RECONNECT_MS) {
        return failed(m->err, st, e);
    }
    return POLL_LOST;
}

/* A page from the backend: its points printed, its counts kept, its cursor taken. */
static void take_page(struct metrics *m, struct scalar_page *page)
{
    m->away_since = 0;
    for (size_t i = 0; i < page->count; i++) {
        const struct scalar_point *p = &page->points[i];
        emit(m, p->run, p->tag, p->step, p->wall_time, p->value);
    }
    m->bad_crc += page->bad_crc;
    m->bad_protobuf += page->bad_protobuf;
    m->dropped += page->dropped;
    if (page->log_path && m->log_path == NULL)
        m->log_path = xstrdup(page->log_path);
    if (page->cursor) {
        free(m->cursor);
        m->cursor = page->cursor;
        page->cursor = NULL;
    }
}

/* Reads what is new: every page the backend has, or the directory to its end. */
static int poll_once(struct metrics *m)
{
    if (m->dir) {
        struct tfevents_limit lim = {LOGDIR_POLL_BYTES, 0};
        struct tfevents_poll_result res;
        struct strbuf why = STRBUF_INIT;
        do {
            memset(&res, 0, sizeof res);
            if (tfevents_poll(m->dir, &lim, on_dir_scalar, m, &res, &why) != 0) {
                struct strbuf line = STRBUF_INIT;
                add_clean(&line, strbuf_str(&why));
                fprintf(m->err, "trainjob metrics: %s\n", strbuf_str(&line));
                strbuf_free(&line);
                strbuf_free(&why);
                return EXIT_USAGE;
            }
        } while (res.more);
        strbuf_free(&why);
        const struct tfevents_stats *st = tfevents_stats(m->dir);
        m->bad_crc = st->bad_crc + st->resyncs + st->oversized;
        m->bad_protobuf = st->bad_proto + st->bad_values;
        return EXIT_OK;
    }
    for (;;) {
        struct scalar_page page;
        struct api_error e;
        memset(&e, 0, sizeof e);
        enum backend_status st = backend_scalars(m->s->b, m->name, m->cursor, 0, &page, &e);
        if (st != BACKEND_OK) {
            scalar_page_free(&page);
            return lost(m, st, &e);
        }
        /* a server that says "more" without moving on is not followed round in circles */
        bool more = page.more && page.cursor &&
                    (page.count > 0 || m->cursor == NULL || strcmp(page.cursor, m->cursor) != 0);
        take_page(m, &page);
        scalar_page_free(&page);
        if (!more)
            return EXIT_OK;
    }
}

static int by_run_and_tag(const void *a, const void *b)
{
    const struct metric_series *x = *(const struct metric_series *const *)a;
    const struct metric_series *y = *(const struct metric_series *const *)b;
    int c = strcmp(metric_series_run(x), metric_series_run(y));
    return c ? c : strcmp(metric_series_tag(x), metric_series_tag(y));
}

/*
 * Prints the table of last values: whole the first time, then (-f) only the
 * rows of series that got points since, without the header, in columns as
 * wide as before or wider (never narrower), so rows that follow line up.
 */
static void print_table(struct metrics *m)
{
    size_t n = metricset_count(m->last);
    if (n > m->shown_cap) {
        m->shown = xreallocarray(m->shown, n, sizeof *m->shown);
        memset(m->shown + m->shown_cap, 0, (n - m->shown_cap) * sizeof *m->shown);
        m->shown_cap = n;
    }
    bool only_changed = m->table_shown;
    const struct metric_series **rows = xcalloc(n ? n : 1, sizeof *rows);
    size_t count = 0;
    for (size_t i = 0; i < n; i++) {
        const struct metric_series *sr = metricset_at(m->last, i);
        if (!only_changed || metric_series_seen(sr) != m->shown[i])
            rows[count++] = sr;
        m->shown[i] = metric_series_seen(sr);
    }
    if (count == 0 && only_changed) {
        free(rows);
        return;
    }
    m->table_shown = true;
    qsort(rows, count, sizeof *rows, by_run_and_tag);
    /* cells: RUN TAG STEP VALUE POINTS, columns as wide as their widest cell */
    enum { COLS = 5 };
    char **cells = xcalloc((count + 1) * COLS, sizeof *cells);
    const char *head[COLS] = {"RUN", "TAG", "STEP", "VALUE", "POINTS"};
    for (size_t c = 0; c < COLS; c++)
        cells[c] = xstrdup(head[c]);
    for (size_t r = 0; r < count; r++) {
        struct metric_point last = {0, 0, 0};
        metric_series_last(rows[r], &last);
        struct strbuf sb = STRBUF_INIT;
        char **row = cells + (r + 1) * COLS;
        add_clean(&sb, metric_series_run(rows[r]));
        row[0] = strbuf_detach(&sb, NULL);
        add_clean(&sb, metric_series_tag(rows[r]));
        row[1] = strbuf_detach(&sb, NULL);
        row[2] = xasprintf("%lld", (long long)last.step);
        add_value(&sb, last.value);
        row[3] = strbuf_detach(&sb, NULL);
        row[4] = xasprintf("%llu", (unsigned long long)metric_series_seen(rows[r]));
    }
    /* a number's column starts wide enough for most, so -f rarely needs to widen it */
    static const size_t least[COLS] = {0, 0, 8, 12, 8};
    size_t *width = m->width;
    for (size_t c = 0; c < COLS; c++)
        if (width[c] < least[c])
            width[c] = least[c];
    for (size_t r = 0; r <= count; r++)
        for (size_t c = 0; c < COLS; c++) {
            const char *s = cells[r * COLS + c];
            size_t w = utf8_width(s, strlen(s));
            if (w > width[c])
                width[c] = w;
        }
    for (size_t r = only_changed ? 1 : 0; r <= count; r++) {
        struct strbuf *l = &m->line;
        strbuf_reset(l);
        for (size_t c = 0; c < COLS; c++) {
            const char *s = cells[r * COLS + c];
            strbuf_adds(l, s);
            if (c + 1 < COLS)
                for (size_t w = utf8_width(s, strlen(s)); w < width[c] + 3; w++)
                    strbuf_addc(l, ' ');
        }
        fprintf(m->out, "%s\n", strbuf_str(l));
    }
    for (size_t i = 0; i < (count + 1) * COLS; i++)
        free(cells[i]);
    free(cells);
    free(rows);
}

/*
 * --logdir: says once (and again when there are more) that holes of sparse
 * files were passed: no record was lost there, nothing was damaged.
 */
static void tell_holes(struct metrics *m)
{
    const struct tfevents_stats *st = m->dir ? tfevents_stats(m->dir) : NULL;
    if (st == NULL || st->holes <= m->told_holes)
        return;
    struct strbuf line = STRBUF_INIT;
    if (st->holes == 1)
        strbuf_adds(&line, "trainjob metrics: skipped a hole of ");
    else
        strbuf_addf(&line, "trainjob metrics: skipped %llu holes, the last of ",
                    (unsigned long long)st->holes);
    sizefmt_add(&line, st->last_hole_len);
    strbuf_addf(&line, " at offset %llu in ", (unsigned long long)st->last_hole_at);
    add_clean(&line, m->log_path);
    strbuf_addc(&line, '/');
    add_clean(&line, st->last_hole_file);
    strbuf_adds(&line, " (a sparse file: nothing was written there, no record was lost)");
    fprintf(m->err, "%s\n", strbuf_str(&line));
    strbuf_free(&line);
    m->told_holes = st->holes;
}

/* Says once (and again when it grows) how many records were skipped as damaged. */
static void tell_damage(struct metrics *m)
{
    tell_holes(m);
    uint64_t bad = m->bad_crc + m->bad_protobuf;
    if (bad > m->told_bad) {
        fprintf(m->err,
                "trainjob metrics: skipped %llu damaged record%s (%llu failed their CRC, %llu "
                "were not TensorBoard events)\n",
                (unsigned long long)bad, bad == 1 ? "" : "s", (unsigned long long)m->bad_crc,
                (unsigned long long)m->bad_protobuf);
        m->told_bad = bad;
    }
    if (m->dropped) {
        fprintf(m->err, "trainjob metrics: the server left out %llu scalars (a page too large)\n",
                (unsigned long long)m->dropped);
        m->dropped = 0;
    }
    uint64_t left_out = m->last ? metricset_dropped(m->last) : 0;
    if (left_out > m->told_left_out) {
        fprintf(m->err,
                "trainjob metrics: a table shows at most %d series (run, tag); %llu point%s of "
                "further series were left out: narrow it with --tag, or use -o csv for every "
                "point\n",
                TABLE_MAX_SERIES, (unsigned long long)left_out, left_out == 1 ? "" : "s");
        m->told_left_out = left_out;
    }
}

/* Has the job ended (nothing more will be written)? Errors count as ended, with a message. */
static bool job_ended(struct metrics *m, int *rc)
{
    struct jobspec job;
    struct api_error e;
    memset(&e, 0, sizeof e);
    enum backend_status st = backend_get(m->s->b, m->name, &job, &e);
    bool ended = true;
    if (st != BACKEND_OK && st != BACKEND_REJECTED) {
        ended = false; /* not answering: the next page says so, and tries again */
    } else if (st != BACKEND_OK) {
        *rc = failed(m->err, st, &e); /* gone (deleted) or no longer ours to read */
    } else {
        switch (job.state) {
        case JOB_STATE_SUCCEEDED:
        case JOB_STATE_FAILED:
        case JOB_STATE_SUSPENDED:
        case JOB_STATE_DELETING:
        case JOB_STATE_DELETED:
            break;
        default:
            ended = false;
        }
    }
    jobspec_free(&job);
    return ended;
}

/* How one push stream (backend_scalars_follow) ended. */
enum push_end {
    PUSH_ENDED,  /* the job ended and everything was printed */
    PUSH_LOST,   /* the engine went away: connect again (said once) */
    PUSH_POLL,   /* the backend has no stream for this: poll from here on */
    PUSH_FAILED, /* *rc says why */
};

struct push {
    struct metrics *m;
    struct scalar_stream ss;
    struct api_error err; /* a line that was not a page */
    bool bad;
};

/* A page pushed by the engine: printed at once. */
static int on_push_page(void *ctx, struct scalar_page *page)
{
    struct metrics *m = ctx;
    take_page(m, page);
    if (m->output == METRICS_TABLE && metricset_count(m->last) > 0)
        print_table(m);
    fflush(m->out);
    tell_damage(m);
    if (!m->told_no_tag)
        m->told_no_tag = tell_no_tag(m, " yet");
    return ferror(m->out) ? 1 : 0;
}

static int on_push_data(void *ctx, const char *data, size_t len)
{
    struct push *p = ctx;
    int rc = scalar_stream_feed(&p->ss, data, len, on_push_page, p->m, &p->err);
    p->bad |= rc < 0;
    return rc != 0;
}

/*
 * -f on a job: one stream of pages pushed by the engine as the job writes,
 * from the cursor, so nothing wakes this process while nothing is written.
 */
static enum push_end push(struct metrics *m, int *rc)
{
    struct push p = {.m = m};
    scalar_stream_init(&p.ss, 0);
    struct api_error e;
    memset(&e, 0, sizeof e);
    enum backend_status st =
        backend_scalars_follow(m->s->b, m->name, m->cursor, on_push_data, &p, &e);
    enum push_end end;
    if (st == BACKEND_OK && !p.ss.end && !p.bad && p.ss.line.len > 0) {
        /* one page with no newline: an engine without the stream answered as to a poll */
        p.bad = scalar_stream_feed(&p.ss, "\n", 1, on_push_page, m, &p.err) < 0;
        end = PUSH_POLL;
    } else if (p.ss.end) {
        /* "ended"; or "watch_limit", "error": the engine says to poll */
        end = strcmp(p.ss.end, "ended") == 0 ? PUSH_ENDED : PUSH_POLL;
    } else if (p.bad) {
        struct strbuf line = STRBUF_INIT;
        add_clean(&line, p.err.message);
        fprintf(m->err, "trainjob metrics: %s; polling instead\n", strbuf_str(&line));
        strbuf_free(&line);
        end = PUSH_POLL;
    } else if (ferror(m->out)) {
        end = PUSH_FAILED;
    } else if (st == BACKEND_REJECTED &&
               (e.status == 501 || e.status == 400 || e.status == 405 || e.status == 503)) {
        end = PUSH_POLL; /* no stream here (an older engine, ACP), or too many followers */
    } else if (st == BACKEND_REJECTED) {
        *rc = failed(m->err, st, &e);
        end = PUSH_FAILED;
    } else {
        if (st == BACKEND_OK) { /* cut before its last line: the engine went away */
            api_error_set(&e, 0, "Closed", "", "the stream ended before its last line");
            st = BACKEND_TRANSPORT;
        }
        int l = lost(m, st, &e);
        end = l == POLL_LOST ? PUSH_LOST : PUSH_FAILED;
        if (l != POLL_LOST)
            *rc = l;
    }
    scalar_stream_free(&p.ss);
    return end;
}

/* Reads, prints, and with -f goes on until the job ends (or forever for a directory). */
static int run(struct metrics *m)
{
    if (m->output == METRICS_CSV)
        fputs("run,tag,step,wall_time,value\n", m->out);
    if (m->output == METRICS_JSON && !m->follow)
        fputs("[\n", m->out);
    int rc = poll_once(m);
    if (rc != EXIT_OK)
        return rc;
    m->started = true;
    bool no_tag = false;
    if (m->follow)
        m->told_no_tag = tell_no_tag(m, " yet");
    else
        no_tag = tell_no_tag(m, "");
    if (m->output == METRICS_TABLE) {
        if (metricset_count(m->last) == 0 && !m->follow && !no_tag) {
            struct strbuf line = STRBUF_INIT;
            add_clean(&line, m->log_path);
            fprintf(m->err, "trainjob metrics: no scalars%s%s yet\n", m->log_path ? " in " : "",
                    strbuf_str(&line));
            strbuf_free(&line);
        } else if (metricset_count(m->last) > 0) {
            print_table(m);
        }
    }
    if (m->output == METRICS_JSON && !m->follow)
        fputs(m->printed ? "\n]\n" : "]\n", m->out);
    fflush(m->out);
    tell_damage(m);
    if (no_tag)
        return ferror(m->out) ? EXIT_USAGE : EXIT_INVALID;
    bool polling = m->dir != NULL;
    while (m->follow && rc == EXIT_OK) {
        if (!polling) {
            enum push_end end = push(m, &rc);
            if (end == PUSH_ENDED || end == PUSH_FAILED)
                break;
            if (end == PUSH_LOST)
                pause_ms(FOLLOW_MS);
            polling = end == PUSH_POLL;
            continue;
        }
        /* the state first: a job that ends between the two polls still has its last points read */
        bool ended = m->dir == NULL && job_ended(m, &rc);
        if (rc != EXIT_OK)
            break;
        pause_ms(ended ? 0 : FOLLOW_MS);
        int prc = poll_once(m);
        if (prc == POLL_LOST)
            continue;
        if (prc != EXIT_OK)
            return prc;
        if (m->output == METRICS_TABLE && metricset_count(m->last) > 0)
            print_table(m);
        fflush(m->out);
        tell_damage(m);
        if (!m->told_no_tag)
            m->told_no_tag = tell_no_tag(m, " yet");
        if (ended || ferror(m->out))
            break;
    }
    if (rc == EXIT_OK && m->told_left_out > 0)
        rc = EXIT_INVALID; /* said above: the table is not all there is */
    return ferror(m->out) ? EXIT_USAGE : rc;
}

/* Opens the --logdir source (the user's own path: a symlink given here is theirs to follow). */
static int open_logdir(struct metrics *m, const char *dir)
{
    int e = 0;
    char *real = realpath(dir, NULL);
    if (real == NULL)
        e = errno;
    struct strbuf why = STRBUF_INIT;
    m->dir = real ? tfevents_open(real, &why) : NULL;
    if (m->dir == NULL) {
        struct strbuf line = STRBUF_INIT;
        if (real) { /* tfevents names the directory */
            add_clean(&line, strbuf_str(&why));
        } else {
            add_clean(&line, dir);
            strbuf_addf(&line, ": %s", strerror(e));
        }
        fprintf(m->err, "trainjob metrics: --logdir %s\n", strbuf_str(&line));
        strbuf_free(&line);
    }
    m->log_path = real;
    strbuf_free(&why);
    return m->dir ? EXIT_OK : EXIT_USAGE;
}

int cmd_metrics(const struct cli_globals *g, int argc, char **argv, FILE *out, FILE *err)
{
    enum { OPT_LOGDIR = 0x200, OPT_TAG };
    static const struct option longopts[] = {
        {"logdir", required_argument, NULL, OPT_LOGDIR},
        {"tag", required_argument, NULL, OPT_TAG},
        {"output", required_argument, NULL, 'o'},
        {"follow", no_argument, NULL, 'f'},
        {"help", no_argument, NULL, 'h'},
        CLI_GLOBAL_OPTIONS,
        {NULL, 0, NULL, 0},
    };
    struct cli_globals local = *g;
    struct metrics m;
    memset(&m, 0, sizeof m);
    m.out = out;
    m.err = err;
    m.tty = isatty(fileno(out)) != 0;
    const char *logdir = NULL;
    int c;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "o:fh", longopts, NULL)) != -1) {
        if (cli_global_option(&local, c, optarg))
            continue;
        if (c == OPT_LOGDIR) {
            logdir = optarg;
        } else if (c == OPT_TAG) {
            if (m.tag_count == MAX_TAG_PATTERNS) {
                fprintf(err, "trainjob metrics: at most %d --tag patterns\n", MAX_TAG_PATTERNS);
                return EXIT_USAGE;
            }
            m.tags[m.tag_count++] = optarg;
        } else if (c == 'o') {
            if (strcmp(optarg, "table") == 0)
                m.output = METRICS_TABLE;
            else if (strcmp(optarg, "csv") == 0)
                m.output = METRICS_CSV;
            else if (strcmp(optarg, "json") == 0)
                m.output = METRICS_JSON;
            else {
                fprintf(err, "trainjob metrics: -o takes table, csv or json, not '%s'\n", optarg);
                return EXIT_USAGE;
            }
        } else if (c == 'f') {
            m.follow = true;
        } else if (c == 'h') {
            fputs(metrics_usage, out);
            return EXIT_OK;
        } else {
            fprintf(err, "trainjob metrics: unknown option, or one missing its value: '%s'\n",
                    argv[optind - 1]);
            fputs("Run 'trainjob metrics --help' for its options.\n", err);
            return EXIT_USAGE;
        }
    }
    int names = argc - optind;
    if ((logdir == NULL && names != 1) || (logdir && names != 0)) {
        fputs(logdir ? "trainjob metrics: give a job NAME or --logdir DIR, not both\n"
                     : "trainjob metrics: which job? (or --logdir DIR)\n",
              err);
        fputs(metrics_usage, err);
        return EXIT_USAGE;
    }
    if (m.output == METRICS_TABLE)
        m.last = metricset_new(2, TABLE_MAX_SERIES); /* the last point is all a table shows */
    struct session s;
    int rc;
    if (logdir) {
        rc = open_logdir(&m, logdir);
    } else {
        m.name = argv[optind];
        rc = cli_session_open(&local, &s, err);
        if (rc == EXIT_OK)
            m.s = &s;
    }
    if (rc == EXIT_OK)
        rc = run(&m);
    if (m.s)
        session_close(m.s);
    tfevents_close(m.dir);
    metricset_free(m.last);
    free(m.shown);
    free(m.cursor);
    free(m.log_path);
    strbuf_free(&m.line);
    strbuf_free(&m.scratch);
    for (size_t i = 0; i < m.other_count; i++)
        free(m.other_tags[i]);
    for (size_t i = 0; i < CSV_PAIRS; i++) {
        free(m.csv_pairs[i].run);
        free(m.csv_pairs[i].tag);
        strbuf_free(&m.csv_pairs[i].fields);
    }
    return rc;
}
