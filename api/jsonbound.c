/*
 * jsonbound: JSON replies decoded within a memory bound, and the spans of
 * a reply's members and array elements; see jsonbound.h. Called by the
 * Slurm driver (api/slurm_rest.c) and the ACP driver (api/acp*.c).
 */
#include "api/jsonbound.h"

#include <stdarg.h>
#include <string.h>

#include "util/strbuf.h"
#include "util/xalloc.h"

/*
 * jansson's cost, measured on glibc (a Slurm job: 24.5 KB decoded, 25.0 KB said): a node is 24-48
 * bytes plus malloc's 16, a member a hash pair with its own copy of the key, a string its text.
 */
#define VALUE_COST 72
#define MEMBER_COST 96
/*
 * More than a byte of text can cost: a value takes at least a byte and, past the first, a
 * separator (72 for 2 bytes: [1,1]), a member its key's quotes, a colon, a value and a
 * separator (96 + 72 for 5: {"":1,"":1}), a string's byte 1; the densest text, [1] or [{}],
 * costs 48 a byte.
 */
#define COST_PER_BYTE 64

size_t jsonbound_cost(const struct jsonbound_count *c)
{
    return c->values * VALUE_COST + c->members * MEMBER_COST + c->text;
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static size_t skip_space(const char *buf, size_t len, size_t p)
{
    while (p < len && is_space(buf[p]))
        p++;
    return p;
}

/* Past the string opening at buf[p] ('"'); 0 when it is not closed. */
static size_t string_end(const char *buf, size_t len, size_t p)
{
    for (p++; p < len; p++) {
        if (buf[p] == '\\')
            p++;
        else if (buf[p] == '"')
            return p + 1;
    }
    return 0;
}

int jsonbound_skip(const char *buf, size_t len, size_t *pos, struct jsonbound_count *c)
{
    struct jsonbound_count none;
    if (c == NULL)
        c = &none;
    size_t p = *pos;
    size_t depth = 0;
    bool key_next = false; /* the string now read is a key (after '{' or ',' in an object) */
    /* Nesting is tracked by kind so "[}" is refused: a bit per level, 1 for an object. */
    unsigned char kinds[512] = {0};
    do {
        p = skip_space(buf, len, p);
        if (p >= len)
            return -1;
        char ch = buf[p];
        if (ch == '"') {
            size_t e = string_end(buf, len, p);
            if (e == 0)
                return -1;
            c->text += e - p - 2;
            if (!key_next)
                c->values++;
            key_next = false;
            p = e;
        } else if (ch == '{' || ch == '[') {
            if (depth >= sizeof kinds * 8)
                return -1; /* deeper than jansson would go */
            kinds[depth / 8] = (unsigned char)((kinds[depth / 8] & ~(1u << (depth % 8))) |
                                               ((ch == '{') << (depth % 8)));
            depth++;
            c->values++;
            key_next = ch == '{';
            p++;
        } else if (ch == '}' || ch == ']') {
            if (depth == 0)
                return -1;
            depth--;
            bool object = (kinds[depth / 8] >> (depth % 8)) & 1u;
            if (object != (ch == '}'))
                return -1;
            key_next = false;
            p++;
        } else if (ch == ':' || ch == ',') {
            if (depth == 0)
                return -1;
            if (ch == ':')
                c->members++;
            key_next = ch == ',' && ((kinds[(depth - 1) / 8] >> ((depth - 1) % 8)) & 1u);
            p++;
        } else {
            size_t s = p;
            while (p < len && !is_space(buf[p]) && memchr(",:]}[{\"", buf[p], 7) == NULL)
                p++;
            if (p == s)
                return -1;
            c->values++;
            key_next = false;
        }
    } while (depth > 0);
    *pos = p;
    return 0;
}

json_t *jsonbound_loadb(const char *buf, size_t len, size_t bound, struct strbuf *why)
{
    if (bound == 0)
        bound = JSONBOUND_MAX;
    struct jsonbound_count c = {0, 0, 0};
    size_t p = 0;
    /*
     * Nothing is decoded yet: what it would take is known before any of it is allocated. A
     * text can cost at most COST_PER_BYTE a byte (see there): one too short to reach the
     * bound is not counted, and so not read twice.
     */
    if (len < bound / COST_PER_BYTE)
        ;
    else if (jsonbound_skip(buf, len, &p, &c) == 0 && jsonbound_cost(&c) > bound) {
        strbuf_addf(why, "reply of %zu values would take about %zu MiB, over the %zu MiB bound",
                    c.values, (jsonbound_cost(&c) + (1u << 20) - 1) >> 20, bound >> 20);
        return NULL;
    }
    json_error_t jerr;
    json_t *j = json_loadb(len ? buf : "", len, 0, &jerr);
    if (j == NULL)
        strbuf_addf(why, "the reply is not JSON: %s (byte %d)", jerr.text, jerr.position);
    return j;
}

bool jsonbound_member(const char *buf, size_t len, const char *key, size_t *start, size_t *end)
{
    size_t klen = strlen(key);
    size_t p = skip_space(buf, len, 0);
    if (p >= len || buf[p] != '{')
        return false;
    p++;
    for (;;) {
        p = skip_space(buf, len, p);
        if (p >= len || buf[p] != '"')
            return false; /* '}' (no such member) or not JSON */
        size_t ke = string_end(buf, len, p);
        if (ke == 0)
            return false;
        bool match = ke - p - 2 == klen && memcmp(buf + p + 1, key, klen) == 0;
        p = skip_space(buf, len, ke);
        if (p >= len || buf[p] != ':')
            return false;
        p++;
        size_t vs = skip_space(buf, len, p);
        if (jsonbound_skip(buf, len, &p, NULL) != 0)
            return false;
        if (match) {
            *start = vs;
            *end = p;
            return true;
        }
        p = skip_space(buf, len, p);
        if (p >= len || buf[p] != ',')
            return false;
        p++;
    }
}

int jsonbound_elements(const char *buf, size_t start, size_t end, jsonbound_element_fn fn,
                       void *ctx)
{
    size_t p = skip_space(buf, end, start);
    if (p >= end || buf[p] != '[')
        return -1;
    p = skip_space(buf, end, p + 1);
    if (p < end && buf[p] == ']')
        return 0;
    for (;;) {
        size_t s = skip_space(buf, end, p);
        p = s;
        if (jsonbound_skip(buf, end, &p, NULL) != 0)
            return -1;
        int rc = fn(ctx, buf + s, p - s);
        if (rc != 0)
            return rc;
        p = skip_space(buf, end, p);
        if (p >= end)
            return -1;
        if (buf[p] == ']')
            return 0;
        if (buf[p] != ',')
            return -1;
        p++;
    }
}

bool jsonbound_member_is(const char *obj, size_t len, const char *key, const char *want)
{
    size_t s, e;
    if (!jsonbound_member(obj, len, key, &s, &e) || obj[s] != '"' || e - s < 2)
        return false;
    const char *text = obj + s + 1;
    size_t n = e - s - 2;
    if (memchr(text, '\\', n) == NULL)
        return n == strlen(want) && memcmp(text, want, n) == 0;
    /* Escaped: decoded on its own (a string costs its length: bounded by the element). */
    json_t *v = json_loadb(obj + s, e - s, JSON_DECODE_ANY, NULL);
    bool same = json_is_string(v) && strlen(want) == json_string_length(v) &&
                memcmp(json_string_value(v), want, json_string_length(v)) == 0;
    json_decref(v);
    return same;
}

void jsonbound_add_compact(struct strbuf *out, const char *text, size_t len)
{
    bool quoted = false;
    size_t from = 0; /* the start of the run not added yet */
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (quoted) {
            if (c == '\\')
                i++; /* the escaped character, whatever it is */
            else if (c == '"')
                quoted = false;
        } else if (c == '"') {
            quoted = true;
        } else if (c == ' ' || c == '\n' || c == '\r' || c == '\t') {
            strbuf_add(out, text + from, i - from);
            from = i + 1;
        }
    }
    if (from < len)
        strbuf_add(out, text + from, len - from);
}

/* ---- a reply read in pieces ------------------------------------------------- */

/* Where a stream is in its top-level object. */
enum stream_state {
    SS_OPEN,          /* before '{' */
    SS_KEY_OR_CLOSE,  /* after '{': a key or '}' */
    SS_KEY_FIRST,     /* after ',': a key */
    SS_KEY,           /* inside a key */
    SS_COLON,         /* after a key */
    SS_VALUE,         /* after ':' */
    SS_MEMBER,        /* inside the value of another member */
    SS_ELEM_OR_CLOSE, /* after the array's '[' */
    SS_ELEM_FIRST,    /* after ',' in the array */
    SS_ELEM,          /* inside an element */
    SS_ELEM_NEXT,     /* after an element: ',' or ']' */
    SS_NEXT,          /* after a member: ',' or '}' */
    SS_DONE,          /* after '}' */
    SS_FAILED,
};

#define STREAM_KEY_MAX 256 /* the longest top-level key */
#define STREAM_DEPTH_MAX 4096

struct jsonbound_stream {
    char *array_key;
    size_t max_element, max_rest;
    jsonbound_element_fn fn;
    jsonbound_walk_fn walk; /* NULL: every element gathered for fn */
    void *ctx;
    enum stream_state st;
    /* The value being read (an element or another member's). */
    bool in_string, escape, scalar;
    size_t depth;
    unsigned char kinds[STREAM_DEPTH_MAX / 8]; /* a bit per level, 1 for an object */
    bool elem_over; /* the element being read is over max_element: skipped */
    bool key_escape;
    struct strbuf key;  /* the key being read, as written */
    struct strbuf elem; /* the element being read */
    struct strbuf rest; /* "{" and the other members */
    bool had_array;
    struct strbuf why;
};

struct jsonbound_stream *jsonbound_stream_new(const char *array_key, size_t max_element,
                                              size_t max_rest, jsonbound_element_fn fn, void *ctx)
{
    struct jsonbound_stream *s = xcalloc(1, sizeof *s);
    s->array_key = xstrdup(array_key);
    s->max_element = max_element;
    s->max_rest = max_rest;
    s->fn = fn;
    s->ctx = ctx;
    s->key = (struct strbuf)STRBUF_INIT;
    s->elem = (struct strbuf)STRBUF_INIT;
    s->rest = (struct strbuf)STRBUF_INIT;
    s->why = (struct strbuf)STRBUF_INIT;
    strbuf_addc(&s->rest, '{');
    return s;
}

void jsonbound_stream_set_walk(struct jsonbound_stream *s, jsonbound_walk_fn walk)
{
    s->walk = walk;
}

void jsonbound_stream_free(struct jsonbound_stream *s)
{
    if (s == NULL)
        return;
    free(s->array_key);
    strbuf_free(&s->key);
    strbuf_free(&s->elem);
    strbuf_free(&s->rest);
    strbuf_free(&s->why);
    free(s);
}

static int stream_fail(struct jsonbound_stream *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The stream fails saying why; -1. */
static int stream_fail(struct jsonbound_stream *s, const char *fmt, ...)
{
    s->st = SS_FAILED;
    strbuf_reset(&s->why);
    va_list ap;
    va_start(ap, fmt);
    strbuf_vaddf(&s->why, fmt, ap);
    va_end(ap);
    return -1;
}

enum { VALUE_MORE, VALUE_DONE, VALUE_DONE_BEFORE, VALUE_BAD };

static void value_begin(struct jsonbound_stream *s)
{
    s->in_string = s->escape = s->scalar = false;
    s->depth = 0;
}

/* One byte of a value: more to come, it closed with this byte, it closed before it, or bad. */
static int value_byte(struct jsonbound_stream *s, char ch)
{
    if (s->in_string) {
        if (s->escape)
            s->escape = false;
        else if (ch == '\\')
            s->escape = true;
        else if (ch == '"') {
            s->in_string = false;
            return s->depth == 0 ? VALUE_DONE : VALUE_MORE;
        }
        return VALUE_MORE;
    }
    if (s->scalar)
        return is_space(ch) || memchr(",:]}[{\"", ch, 7) ? VALUE_DONE_BEFORE : VALUE_MORE;
    switch (ch) {
    case '"':
        s->in_string = true;
        return VALUE_MORE;
    case '{':
    case '[':
        if (s->depth >= STREAM_DEPTH_MAX)
            return VALUE_BAD;
        s->kinds[s->depth / 8] =
            (unsigned char)((s->kinds[s->depth / 8] & ~(1u << (s->depth % 8))) |
                            ((ch == '{') << (s->depth % 8)));
        s->depth++;
        return VALUE_MORE;
    case '}':
    case ']': {
        if (s->depth == 0)
            return VALUE_BAD;
        s->depth--;
        bool object = (s->kinds[s->depth / 8] >> (s->depth % 8)) & 1u;
        if (object != (ch == '}'))
            return VALUE_BAD;
        return s->depth == 0 ? VALUE_DONE : VALUE_MORE;
    }
    default:
        if (s->depth == 0) {
            if (ch == ',' || ch == ':')
                return VALUE_BAD;
            s->scalar = true;
        }
        return VALUE_MORE;
    }
}

/* The bytes a scan inside brackets stops at: in a string (1) and outside one (2). */
static const unsigned char scan_stop[256] = {
    ['"'] = 3, ['\\'] = 1, ['{'] = 2, ['['] = 2, ['}'] = 2, [']'] = 2,
};

/*
 * The bytes of a value inside its brackets, as value_byte reads them, with the state in
 * locals and the text between quotes and brackets passed over a table lookup a byte: where
 * it stopped. It stops at the end of the piece and leaves to value_byte what is not plain:
 * the bracket that closes the value or does not match, one past the nesting bound, and an
 * escape whose byte is in the next piece.
 */
static size_t value_inside(struct jsonbound_stream *s, const char *data, size_t len, size_t p)
{
    const unsigned char *u = (const unsigned char *)data;
    bool in_string = s->in_string;
    size_t depth = s->depth;
    while (p < len) {
        unsigned char mask = in_string ? 1 : 2;
        while (p < len && !(scan_stop[u[p]] & mask))
            p++;
        if (p == len)
            break;
        unsigned char c = u[p];
        if (in_string) {
            if (c == '"')
                in_string = false;
            else if (p + 1 < len)
                p++; /* the escaped byte, whatever it is */
            else
                break;
        } else if (c == '"') {
            in_string = true;
        } else if (c == '{' || c == '[') {
            if (depth >= STREAM_DEPTH_MAX)
                break;
            s->kinds[depth / 8] = (unsigned char)((s->kinds[depth / 8] & ~(1u << (depth % 8))) |
                                                  ((c == '{') << (depth % 8)));
            depth++;
        } else {
            bool object = (s->kinds[(depth - 1) / 8] >> ((depth - 1) % 8)) & 1u;
            if (depth == 1 || object != (c == '}'))
                break;
            depth--;
        }
        p++;
    }
    s->in_string = in_string;
    s->depth = depth;
    return p;
}

/*
 * Reads the value going on at data[*i]: appends what belongs to it to into
 * (within max bytes) and moves *i past it. 1 when it closed, 0 when the
 * piece ended first, -1 when it is bad or too long (s failed). An element
 * (into is s->elem) too long is not kept but read to its end (elem_over).
 */
static int value_run(struct jsonbound_stream *s, const char *data, size_t len, size_t *i,
                     struct strbuf *into, size_t max, const char *what)
{
    size_t from = *i, p = *i;
    int rc = VALUE_MORE;
    while (p < len && rc == VALUE_MORE) {
        if (!s->scalar && !s->escape && s->depth > 0)
            p = value_inside(s, data, len, p);
        if (p == len)
            break;
        /* The bytes value_byte would pass over unchanged, passed over here. */
        if (s->in_string && !s->escape) {
            while (p < len && data[p] != '"' && data[p] != '\\')
                p++;
        } else if (!s->in_string && !s->scalar && s->depth > 0) {
            while (p < len && data[p] != '"' && data[p] != '{' && data[p] != '[' &&
                   data[p] != '}' && data[p] != ']')
                p++;
        }
        if (p == len)
            break;
        rc = value_byte(s, data[p]);
        if (rc != VALUE_DONE_BEFORE)
            p++;
    }
    if (rc == VALUE_BAD)
        return stream_fail(s, "%s: brackets that do not match", what);
    if (into == &s->elem && (s->elem_over || into->len + (p - from) > max)) {
        s->elem_over = true;
        strbuf_reset(into);
    } else if (into->len + (p - from) > max) {
        return stream_fail(s, "%s: over the bound of %zu KiB", what, max >> 10);
    } else {
        strbuf_add(into, data + from, p - from);
    }
    *i = p;
    return rc == VALUE_MORE ? 0 : 1;
}

int jsonbound_stream_feed(struct jsonbound_stream *s, const char *data, size_t len)
{
    size_t i = 0;
    while (i < len) {
        if (s->st == SS_FAILED)
            return -1;
        char ch = data[i];
        bool space = is_space(ch);
        switch (s->st) {
        case SS_OPEN:
            if (!space && ch != '{')
                return stream_fail(s, "the reply is not a JSON object");
            i++;
            if (ch == '{')
                s->st = SS_KEY_OR_CLOSE;
            break;
        case SS_KEY_OR_CLOSE:
        case SS_KEY_FIRST:
            if (ch == '}' && s->st == SS_KEY_OR_CLOSE)
                s->st = SS_DONE;
            else if (ch == '"') {
                strbuf_reset(&s->key);
                s->key_escape = false;
                s->st = SS_KEY;
            } else if (!space)
                return stream_fail(s, "the reply: a key expected");
            i++;
            break;
        case SS_KEY:
            if (s->key_escape)
                s->key_escape = false;
            else if (ch == '\\')
                s->key_escape = true;
            else if (ch == '"') {
                s->st = SS_COLON;
                i++;
                break;
            }
            if (s->key.len >= STREAM_KEY_MAX)
                return stream_fail(s, "the reply: a key over %d bytes", STREAM_KEY_MAX);
            strbuf_addc(&s->key, ch);
            i++;
            break;
        case SS_COLON:
            if (ch != ':' && !space)
                return stream_fail(s, "the reply: ':' expected after a key");
            i++;
            if (ch == ':')
                s->st = SS_VALUE;
            break;
        case SS_VALUE:
            if (space) {
                i++;
            } else if (strcmp(strbuf_str(&s->key), s->array_key) == 0) {
                if (ch != '[' || s->had_array)
                    return stream_fail(s, "\"%s\" is not one array", s->array_key);
                s->had_array = true;
                s->st = SS_ELEM_OR_CLOSE;
                i++;
            } else {
                size_t need = s->key.len + 4;
                if (s->rest.len + need > s->max_rest)
                    return stream_fail(s, "%s: over the bound of %zu KiB",
                                       "the reply's members besides the array", s->max_rest >> 10);
                if (s->rest.len > 1)
                    strbuf_addc(&s->rest, ',');
                strbuf_addc(&s->rest, '"');
                strbuf_add(&s->rest, s->key.buf, s->key.len);
                strbuf_adds(&s->rest, "\":");
                value_begin(s);
                s->st = SS_MEMBER;
            }
            break;
        case SS_MEMBER: {
            int rc = value_run(s, data, len, &i, &s->rest, s->max_rest,
                               "the reply's members besides the array");
            if (rc < 0)
                return -1;
            if (rc == 1)
                s->st = SS_NEXT;
            break;
        }
        case SS_ELEM_OR_CLOSE:
        case SS_ELEM_FIRST:
            if (space) {
                i++;
            } else if (ch == ']' && s->st == SS_ELEM_OR_CLOSE) {
                s->st = SS_NEXT;
                i++;
            } else {
                size_t took = 0;
                if (s->walk) /* read in place when it is whole in this piece */
                    took = s->walk(s->ctx, data + i,
                                   len - i < s->max_element ? len - i : s->max_element);
                if (took > 0 && took <= len - i) {
                    i += took;
                    s->st = SS_ELEM_NEXT;
                    break;
                }
                strbuf_reset(&s->elem);
                s->elem_over = false;
                value_begin(s);
                s->st = SS_ELEM;
            }
            break;
        case SS_ELEM: {
            int rc = value_run(s, data, len, &i, &s->elem, s->max_element, "an element");
            if (rc < 0)
                return -1;
            if (rc == 1) {
                s->st = SS_ELEM_NEXT;
                int frc = s->elem_over ? 0 : s->fn(s->ctx, s->elem.buf, s->elem.len);
                strbuf_reset(&s->elem);
                s->elem_over = false;
                if (frc != 0)
                    return frc;
            }
            break;
        }
        case SS_ELEM_NEXT:
            if (ch == ',')
                s->st = SS_ELEM_FIRST;
            else if (ch == ']')
                s->st = SS_NEXT;
            else if (!space)
                return stream_fail(s, "\"%s\": ',' or ']' expected after an element", s->array_key);
            i++;
            break;
        case SS_NEXT:
            if (ch == ',')
                s->st = SS_KEY_FIRST;
            else if (ch == '}')
                s->st = SS_DONE;
            else if (!space)
                return stream_fail(s, "the reply: ',' or '}' expected after a member");
            i++;
            break;
        case SS_DONE:
            if (!space)
                return stream_fail(s, "the reply: text after its end");
            i++;
            break;
        case SS_FAILED:
            return -1;
        }
    }
    return s->st == SS_FAILED ? -1 : 0;
}

json_t *jsonbound_stream_end(struct jsonbound_stream *s, bool *had_array, struct strbuf *why)
{
    *had_array = s->had_array;
    if (s->st == SS_FAILED) {
        strbuf_add(why, s->why.buf, s->why.len);
        return NULL;
    }
    if (s->st != SS_DONE) {
        strbuf_adds(why, "the reply ends before its object does");
        return NULL;
    }
    strbuf_addc(&s->rest, '}');
    json_t *j = jsonbound_loadb(s->rest.buf, s->rest.len, 0, why);
    strbuf_truncate(&s->rest, s->rest.len - 1);
    return j;
}
