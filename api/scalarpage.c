/*
 * scalarpage: see scalarpage.h. The encoder writes text (a page of 100,000
 * points builds no jansson tree); the decoder reads the tree jansson made.
 */
#include "api/scalarpage.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/apierror.h"
#include "util/numfmt.h"
#include "util/strbuf.h"
#include "util/utf8.h"
#include "util/xalloc.h"

void scalar_page_init(struct scalar_page *p)
{
    memset(p, 0, sizeof *p);
}

void scalar_page_free(struct scalar_page *p)
{
    for (size_t i = 0; i < p->count; i++) {
        free(p->points[i].run);
        free(p->points[i].tag);
    }
    free(p->points);
    free(p->log_path);
    free(p->cursor);
    scalar_page_init(p);
}

void scalar_page_add(struct scalar_page *p, const char *run, const char *tag, int64_t step,
                     double wall_time, double value)
{
    if (p->count == p->cap) {
        p->cap = p->cap ? p->cap * 2 : 64;
        p->points = xreallocarray(p->points, p->cap, sizeof *p->points);
    }
    p->points[p->count++] = (struct scalar_point){xstrdup(run ? run : "."), xstrdup(tag ? tag : ""),
                                                  step, wall_time, value};
}

void scalarpage_json_string(struct strbuf *out, const char *s, size_t n)
{
    strbuf_addc(out, '"');
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t k = utf8_decode(s + i, n - i, &cp);
        if (cp == '"' || cp == '\\') {
            strbuf_addc(out, '\\');
            strbuf_addc(out, (char)cp);
        } else if (cp < 0x20 || cp == 0x7f) {
            strbuf_addf(out, "\\u%04x", (unsigned)cp);
        } else if (cp == UTF8_REPLACEMENT) {
            strbuf_adds(out, "\xef\xbf\xbd"); /* bad bytes, or a real U+FFFD */
        } else {
            strbuf_add(out, s + i, k);
        }
        i += k;
    }
    strbuf_addc(out, '"');
}

void scalarpage_json_value(struct strbuf *out, double v)
{
    if (isnan(v))
        strbuf_adds(out, "\"NaN\"");
    else if (isinf(v))
        strbuf_adds(out, v > 0 ? "\"Infinity\"" : "\"-Infinity\"");
    else
        numfmt_add(out, v); /* the fewest digits that read back (as a float when one) */
}

void scalarpage_json_wall_time(struct strbuf *out, double t)
{
    if (!isfinite(t) || fabs(t) > 9e9) { /* past the year 2255: nothing a writer sends */
        strbuf_adds(out, "0");
        return;
    }
    /* whole microseconds in integers: float printing is the slow part of a page */
    long long us = llround(t * 1e6);
    unsigned long long a = (unsigned long long)(us < 0 ? -us : us);
    unsigned frac = (unsigned)(a % 1000000u);
    if (us < 0)
        strbuf_addc(out, '-');
    numfmt_add_int(out, (long long)(a / 1000000u));
    if (frac == 0)
        return;
    char digits[7] = {'.'};
    int n = 6;
    for (int i = 6; i >= 1; i--, frac /= 10)
        digits[i] = (char)('0' + frac % 10);
    while (digits[n] == '0') /* trailing zeros say nothing */
        n--;
    strbuf_add(out, digits, (size_t)n + 1);
}

void scalarpage_json_point(struct strbuf *out, const char *run, const char *tag, int64_t step,
                           double wall_time, double value)
{
    strbuf_adds(out, "{\"run\":");
    scalarpage_json_string(out, run ? run : ".", run ? strlen(run) : 1);
    strbuf_adds(out, ",\"tag\":");
    scalarpage_json_string(out, tag ? tag : "", tag ? strlen(tag) : 0);
    strbuf_adds(out, ",\"step\":");
    numfmt_add_int(out, (long long)step);
    strbuf_adds(out, ",\"wall_time\":");
    scalarpage_json_wall_time(out, wall_time);
    strbuf_adds(out, ",\"value\":");
    scalarpage_json_value(out, value);
    strbuf_addc(out, '}');
}

void scalar_page_to_json(const struct scalar_page *p, struct strbuf *out)
{
    strbuf_addc(out, '{');
    if (p->log_path) {
        strbuf_adds(out, "\"log_path\":");
        scalarpage_json_string(out, p->log_path, strlen(p->log_path));
        strbuf_addc(out, ',');
    }
    strbuf_adds(out, "\"cursor\":");
    scalarpage_json_string(out, p->cursor ? p->cursor : "", p->cursor ? strlen(p->cursor) : 0);
    strbuf_addf(out,
                ",\"more\":%s,\"bad_records\":{\"crc\":%llu,\"protobuf\":%llu},\"dropped\":%llu,"
                "\"scalars\":[",
                p->more ? "true" : "false", (unsigned long long)p->bad_crc,
                (unsigned long long)p->bad_protobuf, (unsigned long long)p->dropped);
    for (size_t i = 0; i < p->count; i++) {
        const struct scalar_point *pt = &p->points[i];
        if (i)
            strbuf_addc(out, ',');
        scalarpage_json_point(out, pt->run, pt->tag, pt->step, pt->wall_time, pt->value);
    }
    strbuf_adds(out, "]}");
}

bool scalarpage_value_from_json(const json_t *v, double *out)
{
    if (json_is_number(v)) {
        *out = json_number_value(v);
        return true;
    }
    const char *s = json_string_value(v);
    if (s == NULL)
        return false;
    if (strcmp(s, "NaN") == 0)
        *out = NAN;
    else if (strcmp(s, "Infinity") == 0)
        *out = INFINITY;
    else if (strcmp(s, "-Infinity") == 0)
        *out = -INFINITY;
    else
        return false;
    return true;
}

/* A count of bad_records, 0 when absent or not a non-negative integer. */
static uint64_t count_of(const json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_integer(v) && json_integer_value(v) > 0 ? (uint64_t)json_integer_value(v) : 0;
}

int scalar_page_from_json(const json_t *j, struct scalar_page *p, struct api_error *err)
{
    if (!json_is_object(j)) {
        api_error_set(err, 502, "BadReply", "", "the scalars reply is not a JSON object");
        return -1;
    }
    const char *s = json_string_value(json_object_get(j, "log_path"));
    p->log_path = s ? xstrdup(s) : NULL;
    s = json_string_value(json_object_get(j, "cursor"));
    p->cursor = s ? xstrdup(s) : NULL;
    p->more = json_is_true(json_object_get(j, "more"));
    json_t *bad = json_object_get(j, "bad_records");
    p->bad_crc = count_of(bad, "crc");
    p->bad_protobuf = count_of(bad, "protobuf");
    p->dropped = count_of(j, "dropped");
    json_t *arr = json_object_get(j, "scalars");
    if (arr != NULL && !json_is_array(arr)) {
        api_error_set(err, 502, "BadReply", "scalars", "scalars: not an array");
        return -1;
    }
    size_t i;
    json_t *o;
    json_array_foreach(arr, i, o)
    {
        const char *run = json_string_value(json_object_get(o, "run"));
        const char *tag = json_string_value(json_object_get(o, "tag"));
        json_t *step = json_object_get(o, "step");
        json_t *wall = json_object_get(o, "wall_time");
        double value;
        const char *what = NULL;
        if (tag == NULL)
            what = "tag";
        else if (!json_is_integer(step))
            what = "step";
        else if (!scalarpage_value_from_json(json_object_get(o, "value"), &value))
            what = "value";
        if (what) {
            char field[64];
            snprintf(field, sizeof field, "scalars[%zu].%s", i, what);
            api_error_set(err, 502, "BadReply", field, "%s: missing or not valid", field);
            return -1;
        }
        scalar_page_add(p, run ? run : ".", tag, (int64_t)json_integer_value(step),
                        json_is_number(wall) ? json_number_value(wall) : 0, value);
    }
    return 0;
}

/* ---- the follow stream ---- */

void scalar_stream_init(struct scalar_stream *ss, size_t max_line)
{
    memset(ss, 0, sizeof *ss);
    ss->max_line = max_line ? max_line : SCALARSTREAM_MAX_LINE;
}

void scalar_stream_free(struct scalar_stream *ss)
{
    strbuf_free(&ss->line);
    free(ss->end);
    free(ss->message);
    ss->end = ss->message = NULL;
}

/* One line of the stream: a page to fn, or the last line kept. */
static int stream_line(struct scalar_stream *ss, const char *text, size_t len, scalar_page_fn fn,
                       void *ctx, struct api_error *err)
{
    json_error_t je;
    json_t *j = json_loadb(text, len, 0, &je);
    if (!json_is_object(j)) {
        json_decref(j);
        api_error_set(err, 502, "BadReply", "",
                      "a line of the scalars stream is not a JSON object");
        return -1;
    }
    const char *end = json_string_value(json_object_get(j, "end"));
    if (end) {
        const char *msg = json_string_value(json_object_get(j, "message"));
        free(ss->end);
        free(ss->message);
        ss->end = xstrdup(end);
        ss->message = xstrdup(msg ? msg : "");
        json_decref(j);
        return 0;
    }
    struct scalar_page p;
    scalar_page_init(&p);
    int rc = scalar_page_from_json(j, &p, err);
    json_decref(j);
    if (rc == 0) {
        ss->pages++;
        rc = fn(ctx, &p);
    }
    scalar_page_free(&p);
    return rc;
}

int scalar_stream_feed(struct scalar_stream *ss, const char *data, size_t len, scalar_page_fn fn,
                       void *ctx, struct api_error *err)
{
    int rc = 0;
    while (len > 0 && rc == 0) {
        if (ss->end) { /* nothing may follow the last line */
            api_error_set(err, 502, "BadReply", "", "the scalars stream went on after its end");
            return -1;
        }
        const char *nl = memchr(data, '\n', len);
        size_t n = nl ? (size_t)(nl - data) : len;
        if (ss->line.len + n > ss->max_line) {
            api_error_set(err, 502, "BadReply", "",
                          "a line of the scalars stream is over %zu bytes", ss->max_line);
            return -1;
        }
        strbuf_add(&ss->line, data, n);
        data += n;
        len -= n;
        if (nl == NULL)
            break;
        data++;
        len--;
        if (ss->line.len > 0)
            rc = stream_line(ss, ss->line.buf, ss->line.len, fn, ctx, err);
        strbuf_reset(&ss->line);
    }
    return rc;
}
