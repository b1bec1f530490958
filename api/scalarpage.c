/*
 * scalarpage: see scalarpage.h. The encoder writes text (a page of 100,000
 * points builds no jansson tree); the decoder reads the tree jansson made.
 */
#include "api/scalarpage.h"

#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/apierror.h"
#include "api/jsonbound.h"
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

/* ---- the reply read as text, no tree ---- */

/* A cursor over a reply's text; why says what went wrong first. */
struct reader {
    const char *p, *end;
    char field[64]; /* the field a refusal names */
    bool bad;
};

static void ws(struct reader *r)
{
    while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r'))
        r->p++;
}

static bool eat(struct reader *r, char c)
{
    ws(r);
    if (r->p < r->end && *r->p == c) {
        r->p++;
        return true;
    }
    return false;
}

static unsigned hex4(const char *s)
{
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = s[i];
        unsigned d = c >= '0' && c <= '9'   ? (unsigned)(c - '0')
                     : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                     : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10)
                                            : 16u;
        if (d == 16)
            return 0x110000; /* not hex */
        v = v << 4 | d;
    }
    return v;
}

/* A JSON string into out (reset first), escapes decoded; false when it is none. */
static bool read_string(struct reader *r, struct strbuf *out)
{
    strbuf_reset(out);
    if (!eat(r, '"'))
        return false;
    for (;;) {
        const char *q = r->p;
        while (q < r->end && *q != '"' && *q != '\\' && (unsigned char)*q >= 0x20)
            q++;
        strbuf_add(out, r->p, (size_t)(q - r->p));
        r->p = q;
        if (q >= r->end || (unsigned char)*q < 0x20)
            return false;
        r->p++;
        if (*q == '"')
            break;
        if (r->p >= r->end)
            return false;
        char e = *r->p++;
        static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
        const char *k = strchr(from, e);
        if (e != 'u' && k != NULL && e != '\0') {
            strbuf_addc(out, to[k - from]);
            continue;
        }
        if (e != 'u' || r->end - r->p < 4)
            return false;
        uint32_t cp = hex4(r->p);
        r->p += 4;
        if (cp > 0xffff)
            return false;
        if (cp >= 0xd800 && cp < 0xdc00 && r->end - r->p >= 6 && r->p[0] == '\\' &&
            r->p[1] == 'u') {
            uint32_t lo = hex4(r->p + 2);
            if (lo >= 0xdc00 && lo < 0xe000) {
                cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                r->p += 6;
            }
        }
        if (cp >= 0xd800 && cp < 0xe000)
            cp = UTF8_REPLACEMENT; /* a lone surrogate */
        char u[4];
        strbuf_add(out, u, utf8_encode(cp, u));
    }
    /* as jansson reads JSON: no NUL, and UTF-8 */
    return memchr(out->buf ? out->buf : "", '\0', out->len) == NULL &&
           utf8_valid(out->buf ? out->buf : "", out->len);
}

/* Past the digits at q (none: q). */
static const char *digits(const char *q, const char *end)
{
    while (q < end && *q >= '0' && *q <= '9')
        q++;
    return q;
}

/* A JSON number's text (JSON's grammar: no leading zero, digits after '.' and 'e'): its end, or NULL. */
static const char *number_end(struct reader *r, bool *integral)
{
    ws(r);
    const char *q = r->p, *d;
    *integral = true;
    if (q < r->end && *q == '-')
        q++;
    if (q < r->end && *q == '0')
        q++;
    else if ((d = digits(q, r->end)) > q)
        q = d;
    else
        return NULL;
    if (q < r->end && *q == '.') {
        *integral = false;
        if ((d = digits(q + 1, r->end)) == q + 1)
            return NULL;
        q = d;
    }
    if (q < r->end && (*q == 'e' || *q == 'E')) {
        *integral = false;
        q++;
        if (q < r->end && (*q == '+' || *q == '-'))
            q++;
        if ((d = digits(q, r->end)) == q)
            return NULL;
        q = d;
    }
    return q;
}

/* A JSON number as a double; false when none. */
static bool read_double(struct reader *r, double *out)
{
    bool integral;
    const char *q = number_end(r, &integral);
    if (q == NULL || q - r->p >= 64)
        return false;
    char buf[64];
    memcpy(buf, r->p, (size_t)(q - r->p));
    buf[q - r->p] = '\0';
    *out = strtod(buf, NULL);
    r->p = q;
    return true;
}

/* A JSON integer (int64); false when none, not whole or out of range. */
static bool read_int(struct reader *r, int64_t *out)
{
    bool integral;
    const char *q = number_end(r, &integral);
    if (q == NULL || !integral)
        return false;
    const char *c = r->p;
    bool neg = *c == '-';
    c += neg;
    uint64_t v = 0;
    for (; c < q; c++) {
        if (v > (UINT64_MAX - 9) / 10)
            return false;
        v = v * 10 + (uint64_t)(*c - '0');
    }
    if (v > (uint64_t)INT64_MAX + neg)
        return false;
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    r->p = q;
    return true;
}

/* Skips any JSON value (a member this reader does not know). */
static bool skip(struct reader *r)
{
    ws(r);
    size_t pos = 0;
    const char *base = r->p;
    if (jsonbound_skip(base, (size_t)(r->end - base), &pos, NULL) != 0)
        return false;
    r->p = base + pos;
    return true;
}

/* true / false / null: sets *b for the first two. */
static bool read_literal(struct reader *r, bool *b)
{
    ws(r);
    size_t left = (size_t)(r->end - r->p);
    if (left >= 4 && memcmp(r->p, "true", 4) == 0) {
        *b = true, r->p += 4;
        return true;
    }
    if (left >= 5 && memcmp(r->p, "false", 5) == 0) {
        *b = false, r->p += 5;
        return true;
    }
    return false;
}

/* A count of bad_records or dropped: 0 when not a non-negative integer (as the tree reader). */
static bool read_count(struct reader *r, uint64_t *out)
{
    int64_t v;
    const char *at = r->p;
    if (read_int(r, &v)) {
        *out = v > 0 ? (uint64_t)v : 0;
        return true;
    }
    r->p = at;
    *out = 0;
    return skip(r);
}

/* One element of "scalars" into p; false with r->field naming what is wrong. */
static bool read_point(struct reader *r, size_t i, struct scalar_page *p, struct strbuf *key,
                       struct strbuf *run, struct strbuf *tag)
{
    bool has_run = false, has_tag = false, has_step = false, has_value = false;
    int64_t step = 0;
    double wall = 0, value = 0;
    const char *what = NULL;
    if (!eat(r, '{')) {
        snprintf(r->field, sizeof r->field, "scalars[%zu]", i);
        return false;
    }
    if (!eat(r, '}')) {
        do {
            if (!read_string(r, key) || !eat(r, ':')) {
                what = "";
                break;
            }
            const char *k = strbuf_str(key);
            if (strcmp(k, "run") == 0) {
                has_run = read_string(r, run);
                if (!has_run && !skip(r))
                    what = "run";
            } else if (strcmp(k, "tag") == 0) {
                has_tag = read_string(r, tag);
                if (!has_tag)
                    what = "tag";
            } else if (strcmp(k, "step") == 0) {
                has_step = read_int(r, &step);
                if (!has_step)
                    what = "step";
            } else if (strcmp(k, "wall_time") == 0) {
                if (!read_double(r, &wall)) {
                    wall = 0;
                    if (!skip(r))
                        what = "wall_time";
                }
            } else if (strcmp(k, "value") == 0) {
                ws(r);
                if (r->p < r->end && *r->p == '"') {
                    has_value = read_string(r, key);
                    const char *w = strbuf_str(key);
                    if (has_value && strcmp(w, "NaN") == 0)
                        value = NAN;
                    else if (has_value && strcmp(w, "Infinity") == 0)
                        value = INFINITY;
                    else if (has_value && strcmp(w, "-Infinity") == 0)
                        value = -INFINITY;
                    else
                        has_value = false;
                } else {
                    has_value = read_double(r, &value);
                }
                if (!has_value)
                    what = "value";
            } else if (!skip(r)) {
                what = "";
            }
        } while (what == NULL && eat(r, ','));
        if (what == NULL && !eat(r, '}'))
            what = "";
    }
    if (what == NULL)
        what = !has_tag ? "tag" : !has_step ? "step" : !has_value ? "value" : NULL;
    if (what) {
        snprintf(r->field, sizeof r->field, *what ? "scalars[%zu].%s" : "scalars[%zu]%s", i, what);
        return false;
    }
    scalar_page_add(p, has_run ? strbuf_str(run) : ".", strbuf_str(tag), step, wall, value);
    return true;
}

int scalar_page_from_text(const char *text, size_t len, struct scalar_page *p,
                          struct api_error *err)
{
    struct reader r = {text, text + len, "", false};
    struct strbuf key = STRBUF_INIT, run = STRBUF_INIT, tag = STRBUF_INIT, str = STRBUF_INIT;
    bool ok = eat(&r, '{');
    if (!ok) {
        api_error_set(err, 502, "BadReply", "", "the scalars reply is not a JSON object");
        return -1;
    }
    if (!eat(&r, '}')) {
        do {
            ok = read_string(&r, &key) && eat(&r, ':');
            if (!ok)
                break;
            const char *k = strbuf_str(&key);
            if (strcmp(k, "log_path") == 0 || strcmp(k, "cursor") == 0) {
                char **to = k[0] == 'l' ? &p->log_path : &p->cursor;
                ws(&r);
                if (r.p < r.end && *r.p == '"') {
                    ok = read_string(&r, &str);
                    free(*to);
                    *to = ok ? xstrdup(strbuf_str(&str)) : NULL;
                } else {
                    ok = skip(&r);
                }
            } else if (strcmp(k, "more") == 0) {
                bool b = false;
                p->more = read_literal(&r, &b) ? b : (skip(&r), false);
            } else if (strcmp(k, "dropped") == 0) {
                ok = read_count(&r, &p->dropped);
            } else if (strcmp(k, "bad_records") == 0) {
                ws(&r);
                if (r.p < r.end && *r.p == '{') {
                    eat(&r, '{');
                    if (!eat(&r, '}')) {
                        do {
                            ok = read_string(&r, &key) && eat(&r, ':');
                            if (ok && strcmp(strbuf_str(&key), "crc") == 0)
                                ok = read_count(&r, &p->bad_crc);
                            else if (ok && strcmp(strbuf_str(&key), "protobuf") == 0)
                                ok = read_count(&r, &p->bad_protobuf);
                            else if (ok)
                                ok = skip(&r);
                        } while (ok && eat(&r, ','));
                        ok = ok && eat(&r, '}');
                    }
                } else {
                    ok = skip(&r);
                }
            } else if (strcmp(k, "scalars") == 0) {
                for (size_t i = 0; i < p->count; i++) { /* a second "scalars": the last counts */
                    free(p->points[i].run);
                    free(p->points[i].tag);
                }
                p->count = 0;
                if (!eat(&r, '[')) {
                    snprintf(r.field, sizeof r.field, "scalars");
                    api_error_set(err, 502, "BadReply", "scalars", "scalars: not an array");
                    r.bad = true;
                    ok = false;
                } else if (!eat(&r, ']')) {
                    size_t i = 0;
                    do {
                        ok = read_point(&r, i++, p, &key, &run, &tag);
                    } while (ok && eat(&r, ','));
                    ok = ok && eat(&r, ']');
                    if (!ok && !r.field[0])
                        snprintf(r.field, sizeof r.field, "scalars");
                }
            } else {
                ok = skip(&r);
            }
        } while (ok && eat(&r, ','));
        ok = ok && eat(&r, '}');
    }
    ws(&r);
    ok = ok && r.p == r.end;
    strbuf_free(&key);
    strbuf_free(&run);
    strbuf_free(&tag);
    strbuf_free(&str);
    if (ok)
        return 0;
    if (!r.bad) {
        if (r.field[0])
            api_error_set(err, 502, "BadReply", r.field, "%s: missing or not valid", r.field);
        else
            api_error_set(err, 502, "BadReply", "",
                          "the scalars reply is not valid JSON (at byte %zu)",
                          (size_t)(r.p - text));
    }
    return -1;
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
    /* A page (the engine starts it with its log_path) read as text; the last line as a tree. */
    static const char page_start[] = "{\"log_path\":";
    if (len >= sizeof page_start - 1 && memcmp(text, page_start, sizeof page_start - 1) == 0) {
        struct scalar_page p;
        scalar_page_init(&p);
        int rc = scalar_page_from_text(text, len, &p, err);
        if (rc == 0) {
            ss->pages++;
            rc = fn(ctx, &p);
        }
        scalar_page_free(&p);
        return rc;
    }
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

bool scalarpage_tag_match(const char *pattern, const char *tag)
{
    if (strchr(pattern, '/') == NULL) {
        const char *last = strrchr(tag, '/');
        tag = last ? last + 1 : tag;
    }
    return strcmp(pattern, tag) == 0 || fnmatch(pattern, tag, 0) == 0;
}
