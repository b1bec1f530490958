/*
 * scalarpage: one page of a job's TensorBoard scalars as trainjobd's
 * scalars endpoint sends it, and the JSON codec both ends share.
 *
 *   GET /trainjob/v1/workspaces/{ws}/trainingJobs/{name}/scalars
 *       ?since=CURSOR   resume after what an earlier page delivered ("" or
 *                       absent: from the start of every event file)
 *       &limit=BYTES    read at most about this many bytes of event files
 *                       (default SCALARPAGE_DEFAULT_LIMIT, at most
 *                       SCALARPAGE_MAX_LIMIT)
 *       &chart=BUCKETS  send only the points a chart keeps of what the page
 *                       read: per series at most BUCKETS buckets of equal
 *                       step ranges (2 .. SCALARPAGE_MAX_CHART), each
 *                       giving its first, last, minimum, maximum and first
 *                       NaN (api/metricset); values and steps exact, the
 *                       minimum's and maximum's wall time interpolated.
 *                       Series past a memory bound (64 MiB of buckets:
 *                       655 series at 1,024 buckets) count as dropped.
 *                       The Metrics pane asks for this; `metrics` and
 *                       exports ask for every point.
 *
 *   200 {"log_path": "/mnt/afs/tb",          the job's tensorboard.log_path
 *        "cursor": "…",                      since= for the next page (opaque)
 *        "more": false,                      true: the limit cut this page short
 *        "bad_records": {"crc": 0, "protobuf": 0},   skipped in this page
 *        "dropped": 0,                       scalars over the page's memory cap
 *        "scalars": [{"run": "rank0", "tag": "loss", "step": 10,
 *                     "wall_time": 1700000000.25, "value": 0.5}, …]}
 *
 * JSON has no NaN or infinity: like protobuf's JSON mapping, a value that is
 * not finite is sent as the string "NaN", "Infinity" or "-Infinity"; every
 * other value is a number, printed with the fewest digits that read back
 * the same (as a float when the value is one: TensorBoard's simple_value
 * is a float, so 0.1 prints as 0.1, not 0.10000000149011612). Run and tag
 * come from the job's files: the encoder makes them valid UTF-8 (U+FFFD
 * for bad bytes) and JSON-escapes controls; whoever prints them must still
 * sanitize them (util/utf8_sanitize).
 *
 * engine/scalars.c encodes, api/acp.c decodes, cmd_metrics and the Metrics
 * pane read the result.
 */
#ifndef API_SCALARPAGE_H
#define API_SCALARPAGE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/strbuf.h"

struct strbuf;
struct api_error;

/*
 * Bytes of event files per page: about 6,000 scalars, 25 ms of the engine's
 * loop (a MiB took ~110 ms on a busy 2-core box, the loop blocked as long).
 */
#define SCALARPAGE_DEFAULT_LIMIT (256u << 10)
#define SCALARPAGE_MAX_LIMIT (8u << 20)
/* ?chart=: at most this many buckets per series. */
#define SCALARPAGE_MAX_CHART 4096u

struct scalar_point {
    char *run; /* "." for the log directory itself, else its path below it */
    char *tag;
    int64_t step;
    double wall_time; /* seconds since the epoch */
    double value;     /* NaN and ±Inf kept as such */
};

struct scalar_page {
    char *log_path; /* the job's tensorboard.log_path (NULL when the server did not say) */
    char *cursor;   /* since= for the next page; NULL when the server sent none */
    bool more;      /* the page stopped at its limit: more is there already */
    uint64_t bad_crc, bad_protobuf; /* records skipped in this page */
    uint64_t dropped; /* scalars read but not sent: a page over the server's memory cap */
    struct scalar_point *points;
    size_t count, cap;
};

void scalar_page_init(struct scalar_page *p);
void scalar_page_free(struct scalar_page *p);
/* Appends a point (run and tag copied). */
void scalar_page_add(struct scalar_page *p, const char *run, const char *tag, int64_t step,
                     double wall_time, double value);

/* Appends s to out as a JSON string: quoted, escaped, bad UTF-8 made U+FFFD. */
void scalarpage_json_string(struct strbuf *out, const char *s, size_t n);
/* Appends v as a JSON value: a number, or "NaN" / "Infinity" / "-Infinity". */
void scalarpage_json_value(struct strbuf *out, double v);
/*
 * Appends a wall time (seconds) to the microsecond, trailing zeros dropped
 * (1700000000.25; %.17g would print 1700000000.2500002); 0 when not finite
 * or past 9e9 seconds.
 */
void scalarpage_json_wall_time(struct strbuf *out, double t);
/* Appends one point as the JSON object of the reply's "scalars" array. */
void scalarpage_json_point(struct strbuf *out, const char *run, const char *tag, int64_t step,
                           double wall_time, double value);
/* The whole reply as JSON text (what the endpoint sends). */
void scalar_page_to_json(const struct scalar_page *p, struct strbuf *out);
/*
 * Reads a reply into p (scalar_page_init'd). Lenient with what it does not
 * know; a point without a tag or a step, or a value that is neither a
 * number nor one of the three words, is refused with err naming it
 * ("scalars[3].value"). Returns 0 or -1.
 */
int scalar_page_from_json(const json_t *j, struct scalar_page *p, struct api_error *err);
/*
 * The same from the reply's text, read as it goes (no jansson tree: a page
 * of 100,000 points costs its points, not a node per value), and stricter
 * about the text: it must be one JSON object and nothing after it.
 */
int scalar_page_from_text(const char *text, size_t len, struct scalar_page *p,
                          struct api_error *err);
/* The value of a reply's "value": a number, or one of the three words; false otherwise. */
bool scalarpage_value_from_json(const json_t *v, double *out);

/*
 * Does a tag pattern (`metrics --tag`, the Metrics pane's filter) pick this
 * tag? TensorBoard tags are paths (train/loss). A pattern without '/' is a
 * shell pattern (fnmatch) for the tag's last part: 'loss*' picks train/loss
 * and loss, not loss_dir/lr. One with '/' is for the whole tag, and its '*'
 * also matches '/': train/ and a '*' picks train/loss and train/a/b.
 */
bool scalarpage_tag_match(const char *pattern, const char *tag);

/*
 * The follow stream (GET …/scalars?follow=true, engine/scalarfollow.h):
 * NDJSON, one page a line, then a last line {"end": REASON, "message": …}
 * ("ended": the job ended and all it wrote was sent; "watch_limit" or
 * "error": poll with since= instead). scalar_stream_feed splits what
 * arrives into lines (at most max_line bytes each: the engine caps a page's
 * points at 2 MiB), hands each page to fn (valid for the call; non-zero
 * stops) and keeps the last line's reason in end. -1 with err on a line
 * that is no JSON object or no page, or too long, or on data after the end.
 */
#define SCALARSTREAM_MAX_LINE (16u << 20)

struct scalar_stream {
    struct strbuf line; /* a line not yet ended by its newline */
    size_t max_line;
    uint64_t pages; /* decoded so far */
    char *end;      /* the last line's reason, once it came (NULL before) */
    char *message;
};

typedef int (*scalar_page_fn)(void *ctx, struct scalar_page *p);

/* max_line 0: SCALARSTREAM_MAX_LINE. */
void scalar_stream_init(struct scalar_stream *ss, size_t max_line);
void scalar_stream_free(struct scalar_stream *ss);
int scalar_stream_feed(struct scalar_stream *ss, const char *data, size_t len, scalar_page_fn fn,
                       void *ctx, struct api_error *err);

#endif
