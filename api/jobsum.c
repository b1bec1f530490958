/*
 * jobsum: trainjobd's BASIC summaries read straight into struct jobspec rows
 * by a pull parser over the reply's bytes (see jobsum.h). The parser owns
 * one scratch buffer for the string being read; decoders for the page, the
 * watch line and the summary walk the text once, keeping what a row shows
 * and checking (then dropping) the rest. Called by api/acp.c.
 */
#include "api/jobsum.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/apierror.h"
#include "api/backend.h"
#include "api/jobspec.h"
#include "util/strbuf.h"
#include "util/utf8.h"
#include "util/xalloc.h"

/* The text being read, where we are, and the first error. */
struct jp {
    const char *s;
    size_t n, pos;
    int depth;
    struct strbuf str; /* room for a string with escapes, decoded (NUL-terminated) */
    const char *sv;    /* the last string read, decoded: in the text itself when it had */
    size_t sn;         /* no escape (not NUL-terminated there), else str's bytes */
    const char *field; /* the known field being read, for errors; NULL: none */
    size_t index;      /* training_jobs[index]; SIZE_MAX: not in the list */
    bool failed;
    struct api_error *err;
};

/* Fills err once with where reading stopped; returns -1. */
static int fail(struct jp *p, const char *what)
{
    if (p->failed)
        return -1;
    p->failed = true;
    char where[96] = "";
    if (p->index != SIZE_MAX)
        snprintf(where, sizeof where, " (training_jobs[%zu]%s%s)", p->index, p->field ? "." : "",
                 p->field ? p->field : "");
    else if (p->field)
        snprintf(where, sizeof where, " (%s)", p->field);
    api_error_set(p->err, 502, "BadReply", p->field ? p->field : "", "the reply at byte %zu%s: %s",
                  p->pos, where, what);
    return -1;
}

/* Eight bytes read as one word have the first lowest (else string's word loop is left out). */
#define SWAR_LITTLE (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__)
#define SWAR_ONES 0x0101010101010101u

/* JSON's white space. */
static const bool is_ws[256] = {[' '] = 1, ['\n'] = 1, ['\t'] = 1, ['\r'] = 1};

/* White space passed over with the position in a local (through p it is stored per byte). */
static void skip_ws(struct jp *p)
{
    size_t i = p->pos, n = p->n;
    const unsigned char *s = (const unsigned char *)p->s;
    while (i < n && is_ws[s[i]])
        i++;
    p->pos = i;
}

/* The next byte after white space, or 0 at the end (never a valid token). */
static inline char peek(struct jp *p)
{
    if (p->pos < p->n && (unsigned char)p->s[p->pos] > ' ') /* compact JSON: no call */
        return p->s[p->pos];
    skip_ws(p);
    return p->pos < p->n ? p->s[p->pos] : 0;
}

static int expect(struct jp *p, char c, const char *what)
{
    if (peek(p) != c)
        return fail(p, what);
    p->pos++;
    return 0;
}

static int hex4(struct jp *p, uint32_t *v)
{
    if (p->n - p->pos < 4)
        return fail(p, "a \\u escape is cut short");
    *v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p->s[p->pos + (size_t)i];
        uint32_t d;
        if (c >= '0' && c <= '9')
            d = (uint32_t)(c - '0');
        else if (c >= 'a' && c <= 'f')
            d = (uint32_t)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            d = (uint32_t)(c - 'A' + 10);
        else
            return fail(p, "a \\u escape needs four hex digits");
        *v = *v << 4 | d;
    }
    p->pos += 4;
    return 0;
}

/* One \u escape (a surrogate pair whole) appended to p->str as UTF-8. */
static int unicode_escape(struct jp *p)
{
    uint32_t cp;
    if (hex4(p, &cp))
        return -1;
    if (cp >= 0xDC00 && cp <= 0xDFFF)
        return fail(p, "a lone low surrogate in a \\u escape");
    if (cp >= 0xD800 && cp <= 0xDBFF) {
        uint32_t lo;
        if (p->n - p->pos < 2 || p->s[p->pos] != '\\' || p->s[p->pos + 1] != 'u')
            return fail(p, "a high surrogate without its low half");
        p->pos += 2;
        if (hex4(p, &lo))
            return -1;
        if (lo < 0xDC00 || lo > 0xDFFF)
            return fail(p, "a high surrogate without its low half");
        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
    }
    if (cp == 0)
        return fail(p, "a NUL (\\u0000) in a string");
    char u[4];
    strbuf_add(&p->str, u, utf8_encode(cp, u));
    return 0;
}

/* The bytes that end a run of plain string text: '"', '\\' and the controls. */
static const bool ends_run[256] = {
    [0x00] = 1, [0x01] = 1, [0x02] = 1, [0x03] = 1, [0x04] = 1, [0x05] = 1, [0x06] = 1,
    [0x07] = 1, [0x08] = 1, [0x09] = 1, [0x0a] = 1, [0x0b] = 1, [0x0c] = 1, [0x0d] = 1,
    [0x0e] = 1, [0x0f] = 1, [0x10] = 1, [0x11] = 1, [0x12] = 1, [0x13] = 1, [0x14] = 1,
    [0x15] = 1, [0x16] = 1, [0x17] = 1, [0x18] = 1, [0x19] = 1, [0x1a] = 1, [0x1b] = 1,
    [0x1c] = 1, [0x1d] = 1, [0x1e] = 1, [0x1f] = 1, ['"'] = 1,  ['\\'] = 1,
};

/*
 * The bytes of w (eight of the text, the first lowest) that end a run, as
 * ends_run: the high bit of each such byte set and, below the lowest one,
 * no other (what lies above it may be set falsely, and is not read).
 */
static uint64_t run_stops(uint64_t w)
{
    const uint64_t ones = SWAR_ONES, high = 0x8080808080808080u;
    uint64_t quote = w ^ (ones * '"'), backslash = w ^ (ones * '\\');
    uint64_t zero_q = (quote - ones) & ~quote, zero_b = (backslash - ones) & ~backslash;
    uint64_t control = (w - ones * 0x20) & ~w; /* a byte below 0x20 */
    return (zero_q | zero_b | control) & high;
}

/*
 * A string into p->sv/p->sn: escapes decoded, raw bytes UTF-8 checked,
 * controls refused, at most JOBSUM_MAX_STRING bytes. A string without
 * escapes (nearly every key and value) is not copied: sv points into the
 * text; one with escapes is decoded into p->str, runs copied in one piece.
 */
static int string(struct jp *p)
{
    if (expect(p, '"', "expected a string"))
        return -1;
    size_t start = p->pos; /* after the quote */
    for (;;) {
        /* The run scanned with locals: through p the compiler reloads and stores pos per byte. */
        size_t run = p->pos, i = run, n = p->n;
        unsigned char all = 0; /* the bytes OR'ed: bit 7 says some are not ASCII */
        const unsigned char *u = (const unsigned char *)p->s;
        bool stopped = false;
        while (SWAR_LITTLE && i + 8 <= n) { /* eight bytes at a time until one ends the run */
            uint64_t stop, w;
            memcpy(&w, u + i, 8);
            if ((stop = run_stops(w)) != 0) {
                all |= (w & 0x8080808080808080u & ((stop & -stop) - 1)) ? 0x80 : 0;
                i += (size_t)__builtin_ctzll(stop) / 8;
                stopped = true;
                break;
            }
            all |= (w & 0x8080808080808080u) ? 0x80 : 0;
            i += 8;
        }
        while (!stopped && i < n && !ends_run[u[i]]) /* the last bytes, one at a time */
            all |= u[i++];
        p->pos = i;
        if ((all & 0x80) && !utf8_valid(p->s + run, i - run)) {
            p->pos = run;
            return fail(p, "a string is not UTF-8");
        }
        if (i < n && u[i] == '"' && run == start) {
            if (i - run > JOBSUM_MAX_STRING)
                return fail(p, "a string longer than 64 KiB");
            p->sv = p->s + run; /* the whole string is this run: read in place */
            p->sn = i - run;
            p->pos = i + 1;
            return 0;
        }
        if (run == start) /* not in place after all: the decoded string starts empty */
            strbuf_reset(&p->str);
        if (i > run) { /* one copy into room made once, not strbuf_add's overlap checks */
            strbuf_grow(&p->str, i - run);
            memcpy(p->str.buf + p->str.len, p->s + run, i - run);
            p->str.len += i - run;
            p->str.buf[p->str.len] = '\0';
        }
        if (p->str.len > JOBSUM_MAX_STRING)
            return fail(p, "a string longer than 64 KiB");
        if (p->pos == p->n)
            return fail(p, "a string is not ended");
        char c = p->s[p->pos];
        if (c == '"') {
            p->pos++;
            p->sv = p->str.buf;
            p->sn = p->str.len;
            return 0;
        }
        if (c != '\\')
            return fail(p, "a control character in a string");
        if (++p->pos == p->n)
            return fail(p, "a string is not ended");
        c = p->s[p->pos++];
        const char *from = "\"\\/bfnrt", *to = "\"\\/\b\f\n\r\t";
        const char *k = strchr(from, c);
        if (c == 'u') {
            if (unicode_escape(p))
                return -1;
        } else if (c != '\0' && k) {
            strbuf_addc(&p->str, to[k - from]);
        } else {
            p->pos--;
            return fail(p, "an unknown escape in a string");
        }
    }
}

/*
 * A number token as JSON writes it, checked the way jansson reads it: an
 * integer must fit in 64 bits, a real must not overflow. *integer says
 * which; *v is the integer's value.
 */
static int number(struct jp *p, bool *integer, long long *v)
{
    skip_ws(p);
    size_t start = p->pos, i = p->pos;
    const char *s = p->s;
    bool real = false;
    if (i < p->n && s[i] == '-')
        i++;
    if (i < p->n && s[i] == '0')
        i++;
    else if (i < p->n && s[i] >= '1' && s[i] <= '9')
        while (i < p->n && s[i] >= '0' && s[i] <= '9')
            i++;
    else
        return fail(p, "expected a value");
    if (i < p->n && s[i] == '.') {
        real = true;
        if (++i == p->n || s[i] < '0' || s[i] > '9')
            return fail(p, "a number needs digits after '.'");
        while (i < p->n && s[i] >= '0' && s[i] <= '9')
            i++;
    }
    if (i < p->n && (s[i] == 'e' || s[i] == 'E')) {
        real = true;
        i++;
        if (i < p->n && (s[i] == '+' || s[i] == '-'))
            i++;
        if (i == p->n || s[i] < '0' || s[i] > '9')
            return fail(p, "a number needs digits in its exponent");
        while (i < p->n && s[i] >= '0' && s[i] <= '9')
            i++;
    }
    if (!real && i - start <= 18) { /* at most 18 characters: fits, so strtoll's value by hand */
        long long v10 = 0;
        for (size_t k = start + (s[start] == '-'); k < i; k++)
            v10 = v10 * 10 + (s[k] - '0');
        *v = s[start] == '-' ? -v10 : v10;
        *integer = true;
        p->pos = i;
        return 0;
    }
    if (i - start > 400)
        return fail(p, "a number longer than 400 characters");
    char tok[401];
    memcpy(tok, s + start, i - start);
    tok[i - start] = '\0';
    errno = 0;
    if (real) {
        double d = strtod(tok, NULL);
        if (errno == ERANGE && (d > 1.0 || d < -1.0))
            return fail(p, "a real number overflows");
    } else {
        *v = strtoll(tok, NULL, 10);
        if (errno == ERANGE)
            return fail(p, "an integer does not fit in 64 bits");
    }
    *integer = !real;
    p->pos = i;
    return 0;
}

static int literal(struct jp *p, const char *word)
{
    size_t k = strlen(word);
    if (p->n - p->pos < k || memcmp(p->s + p->pos, word, k) != 0)
        return fail(p, "expected a value");
    p->pos += k;
    return 0;
}

static int skip_value(struct jp *p);

/* '{' or '[' entered one level deeper, within JOBSUM_MAX_DEPTH. */
static int enter(struct jp *p, char c, const char *what)
{
    if (expect(p, c, what))
        return -1;
    if (++p->depth > JOBSUM_MAX_DEPTH)
        return fail(p, "nested deeper than 32 levels");
    return 0;
}

/*
 * Walks one member of an object or element of an array: returns 1 when
 * there is one to read (after its comma), 0 at the closing bracket, -1 on
 * an error. *first is the caller's, true before the first member.
 */
static int next(struct jp *p, char close, bool *first)
{
    char c = peek(p);
    if (c == close) {
        p->pos++;
        p->depth--;
        return 0;
    }
    if (!*first) {
        if (c != ',')
            return fail(p, close == '}' ? "expected ',' or '}'" : "expected ',' or ']'");
        p->pos++;
    }
    *first = false;
    return 1;
}

/* The next member's key into p->sv/p->sn, and its ':'. */
static int key(struct jp *p)
{
    if (peek(p) != '"')
        return fail(p, "expected a member name");
    if (string(p))
        return -1;
    return expect(p, ':', "expected ':' after a member name");
}

/* Any value, checked and dropped. */
static int skip_value(struct jp *p)
{
    bool first = true, integer;
    long long v;
    int more;
    switch (peek(p)) {
    case '{':
        if (enter(p, '{', "expected an object"))
            return -1;
        while ((more = next(p, '}', &first)) == 1)
            if (key(p) || skip_value(p))
                return -1;
        return more;
    case '[':
        if (enter(p, '[', "expected an array"))
            return -1;
        while ((more = next(p, ']', &first)) == 1)
            if (skip_value(p))
                return -1;
        return more;
    case '"':
        return string(p);
    case 't':
        return literal(p, "true");
    case 'f':
        return literal(p, "false");
    case 'n':
        return literal(p, "null");
    default:
        return number(p, &integer, &v);
    }
}

/* A null value, consumed: the field is absent. */
static bool null(struct jp *p)
{
    if (peek(p) != 'n')
        return false;
    return literal(p, "null") == 0;
}

/* Names the field being read for errors; the previous name comes back for the caller. */
static const char *in_field(struct jp *p, const char *field)
{
    const char *was = p->field;
    p->field = field;
    return was;
}

/* After a field: the name before it back; -1 if reading failed. */
static int restore(struct jp *p, const char *was)
{
    p->field = was;
    return p->failed ? -1 : 0;
}

/* A string field: *dst replaced (a duplicate key's last value wins); null leaves it. */
static int str_field(struct jp *p, const char *name, char **dst)
{
    const char *was = in_field(p, name);
    if (null(p))
        return restore(p, was);
    if (peek(p) != '"')
        return fail(p, "expected a string");
    if (string(p))
        return -1;
    free(*dst);
    *dst = xstrndup(p->sv, p->sn);
    p->field = was;
    return 0;
}

/*
 * An enum field by its API name. A name this client does not know leaves it
 * unspecified and is kept as the server said it in *other (PREEMPTED), as
 * the general decoder keeps it: a row shows the server's word.
 */
static int enum_field(struct jp *p, const char *name, const struct enum_names *names, int *dst,
                      char **other)
{
    const char *was = in_field(p, name);
    if (null(p))
        return restore(p, was);
    if (peek(p) != '"')
        return fail(p, "expected a string");
    if (string(p))
        return -1;
    if (p->sv != p->str.buf) { /* enum_value reads a C string */
        strbuf_reset(&p->str);
        strbuf_add(&p->str, p->sv, p->sn);
    }
    int v = enum_value(names, p->str.buf);
    *dst = v < 0 ? 0 : v;
    free(*other);
    *other = v < 0 ? xstrndup(p->str.buf, p->str.len) : NULL;
    p->field = was;
    return 0;
}

static int int32_field(struct jp *p, const char *name, bool *has, int32_t *dst)
{
    const char *was = in_field(p, name);
    if (null(p))
        return restore(p, was);
    bool integer;
    long long v = 0;
    char c = peek(p);
    if (c != '-' && (c < '0' || c > '9'))
        return fail(p, "expected an integer");
    size_t at = p->pos;
    if (number(p, &integer, &v))
        return -1;
    if (!integer || v < INT32_MIN || v > INT32_MAX) {
        p->pos = at;
        return fail(p, "expected a 32-bit integer");
    }
    *dst = (int32_t)v;
    if (has)
        *has = true;
    p->field = was;
    return 0;
}

/* Reads an object member by member: fn decides each key (0 read, 1 skip it, -1 error). */
static int members(struct jp *p, const char *field, int (*fn)(struct jp *, void *), void *obj)
{
    const char *was = in_field(p, field);
    if (null(p) || p->failed) {
        p->field = was;
        return p->failed ? -1 : 0;
    }
    if (enter(p, '{', "expected an object"))
        return -1;
    bool first = true;
    int more;
    while ((more = next(p, '}', &first)) == 1) {
        if (key(p))
            return -1;
        int rc = fn(p, obj);
        if (rc < 0 || (rc == 1 && skip_value(p)))
            return -1;
    }
    p->field = was;
    return more;
}

static bool is(const struct jp *p, const char *k)
{
    size_t n = strlen(k);
    return p->sn == n && memcmp(p->sv, k, n) == 0;
}

static int spec_member(struct jp *p, void *obj)
{
    struct resource_spec_ref *r = obj;
    if (is(p, "name"))
        return str_field(p, "roles.resource_spec.name", &r->name);
    if (is(p, "description"))
        return str_field(p, "roles.resource_spec.description", &r->description);
    if (is(p, "replicas"))
        return int32_field(p, "roles.resource_spec.replicas", &r->has_replicas, &r->replicas);
    return 1;
}

/* A list of objects, each read by fn into a new element from add. */
static int list(struct jp *p, const char *field, void *(*add)(void *), void *owner,
                int (*fn)(struct jp *, void *))
{
    const char *was = in_field(p, field);
    if (null(p) || p->failed) {
        p->field = was;
        return p->failed ? -1 : 0;
    }
    if (enter(p, '[', "expected a list"))
        return -1;
    bool first = true;
    int more;
    size_t count = 0;
    while ((more = next(p, ']', &first)) == 1) {
        if (++count > JOBSUM_MAX_ITEMS)
            return fail(p, "a list of more than 64 items");
        if (members(p, field, fn, add(owner)))
            return -1;
    }
    p->field = was;
    return more;
}

static void *add_spec(void *role)
{
    return role_add_spec(role);
}

static int role_member(struct jp *p, void *obj)
{
    struct role *r = obj;
    if (is(p, "name"))
        return str_field(p, "roles.name", &r->name);
    if (is(p, "total_replicas"))
        return int32_field(p, "roles.total_replicas", &r->has_total_replicas, &r->total_replicas);
    if (is(p, "resource_spec")) {
        if (r->resource_spec_count) /* a repeated key must not grow the list past its bound */
            return fail(p, "resource_spec given twice");
        return list(p, "roles.resource_spec", add_spec, r, spec_member);
    }
    return 1;
}

static void *add_role(void *job)
{
    return jobspec_add_role(job);
}

static int pool_member(struct jp *p, void *obj)
{
    struct resource_pool *rp = obj;
    rp->present = true;
    if (is(p, "name"))
        return str_field(p, "resource_pool.name", &rp->name);
    return 1;
}

static int scheduling_member(struct jp *p, void *obj)
{
    struct scheduling *s = obj;
    int v;
    if (is(p, "priority")) {
        v = (int)s->priority;
        int rc = enum_field(p, "scheduling.priority", &priority_names, &v, &s->priority_other);
        s->priority = (enum priority)v;
        return rc;
    }
    if (is(p, "quota_type")) {
        v = (int)s->quota_type;
        int rc =
            enum_field(p, "scheduling.quota_type", &quota_type_names, &v, &s->quota_type_other);
        s->quota_type = (enum quota_type)v;
        return rc;
    }
    return 1;
}

static int ft_member(struct jp *p, void *obj)
{
    struct fault_tolerance *ft = obj;
    if (is(p, "backoff_limit"))
        return int32_field(p, "fault_tolerance.backoff_limit", &ft->has_backoff_limit,
                           &ft->backoff_limit);
    return 1;
}

static int ownership_member(struct jp *p, void *obj)
{
    struct ownership *o = obj;
    if (is(p, "user_name"))
        return str_field(p, "ownership.user_name", &o->user_name);
    return 1;
}

/* A member of the summary (jobspec_summary_write's fields) into the row. */
static int job_member(struct jp *p, void *obj)
{
    struct jobspec *j = obj;
    const char *k = p->sn ? p->sv : ""; /* its first byte picks the case */
    int v, rc;
    switch (k[0]) {
    case 'c':
        if (is(p, "create_time"))
            return str_field(p, "create_time", &j->create_time);
        if (is(p, "complete_time"))
            return str_field(p, "complete_time", &j->complete_time);
        break;
    case 'd':
        if (is(p, "display_name"))
            return str_field(p, "display_name", &j->display_name);
        break;
    case 'f':
        if (is(p, "framework")) {
            v = (int)j->framework;
            rc = enum_field(p, "framework", &framework_names, &v, &j->framework_other);
            j->framework = (enum framework)v;
            return rc;
        }
        if (is(p, "fault_tolerance")) {
            j->fault_tolerance.present = true;
            return members(p, "fault_tolerance", ft_member, &j->fault_tolerance);
        }
        if (is(p, "faulty_workers"))
            return int32_field(p, "faulty_workers", &j->has_faulty_workers, &j->faulty_workers);
        break;
    case 'n':
        if (is(p, "name"))
            return str_field(p, "name", &j->name);
        if (is(p, "nodes"))
            return str_field(p, "nodes", &j->nodes);
        break;
    case 'o':
        if (is(p, "ownership")) {
            j->ownership.present = true;
            return members(p, "ownership", ownership_member, &j->ownership);
        }
        break;
    case 'r':
        if (is(p, "resource_pool")) {
            j->resource_pool.present = true;
            return members(p, "resource_pool", pool_member, &j->resource_pool);
        }
        if (is(p, "roles")) {
            if (j->role_count) /* a repeated key must not grow the list past its bound */
                return fail(p, "roles given twice");
            return list(p, "roles", add_role, j, role_member);
        }
        if (is(p, "restart_count"))
            return int32_field(p, "restart_count", &j->has_restart_count, &j->restart_count);
        if (is(p, "ready_workers"))
            return int32_field(p, "ready_workers", &j->has_ready_workers, &j->ready_workers);
        break;
    case 's':
        if (is(p, "state")) {
            v = (int)j->state;
            rc = enum_field(p, "state", &job_state_names, &v, &j->state_other);
            j->state = (enum job_state)v;
            return rc;
        }
        if (is(p, "state_message"))
            return str_field(p, "state_message", &j->state_message);
        if (is(p, "start_time"))
            return str_field(p, "start_time", &j->start_time);
        if (is(p, "suspend_time"))
            return str_field(p, "suspend_time", &j->suspend_time);
        if (is(p, "scheduling")) {
            j->scheduling.present = true;
            return members(p, "scheduling", scheduling_member, &j->scheduling);
        }
        break;
    case 'u':
        if (is(p, "uid"))
            return str_field(p, "uid", &j->uid);
        break;
    default:
        break;
    }
    return 1;
}

/* Only white space may follow the value. */
static int end(struct jp *p)
{
    if (p->failed)
        return -1;
    skip_ws(p);
    if (p->pos < p->n) /* a NUL byte too: peek's 0 is not the end */
        return fail(p, "text after the end of the reply");
    return 0;
}

static void jp_init(struct jp *p, const char *text, size_t len, struct api_error *err)
{
    memset(p, 0, sizeof *p);
    p->s = text ? text : "";
    p->n = text ? len : 0;
    p->str = (struct strbuf)STRBUF_INIT; /* grown by the first escape: most texts have none */
    p->index = SIZE_MAX;
    p->err = err;
}

struct page {
    struct job_list *out;
    size_t cap;
    bool has_total;
};

/* training_jobs: each summary into a new row (grown by doubling). */
static int page_jobs(struct jp *p, struct page *pg)
{
    struct job_list *l = pg->out;
    if (null(p) || p->failed)
        return p->failed ? -1 : 0;
    p->field = "training_jobs";
    if (enter(p, '[', "expected a list"))
        return -1;
    bool first = true;
    int more;
    while ((more = next(p, ']', &first)) == 1) {
        if (l->count == JOBSUM_MAX_ROWS)
            return fail(p, "a page of more than 5000 jobs");
        if (l->count == pg->cap) {
            pg->cap = pg->cap ? pg->cap * 2 : 64;
            l->jobs = xreallocarray(l->jobs, pg->cap, sizeof *l->jobs);
        }
        struct jobspec *j = &l->jobs[l->count++];
        jobspec_init(j);
        p->index = l->count - 1;
        if (members(p, NULL, job_member, j))
            return -1;
    }
    p->index = SIZE_MAX;
    p->field = NULL;
    return more;
}

static int page_member(struct jp *p, void *obj)
{
    struct page *pg = obj;
    if (is(p, "training_jobs"))
        return page_jobs(p, pg);
    if (is(p, "next_page_token"))
        return str_field(p, "next_page_token", &pg->out->next_page_token);
    if (is(p, "total_size")) {
        int32_t v;
        bool has = false;
        if (int32_field(p, "total_size", &has, &v))
            return -1;
        if (has) {
            pg->out->total_size = v;
            pg->has_total = true;
        }
        return 0;
    }
    return 1;
}

int jobsum_page(const char *text, size_t len, struct job_list *out, struct api_error *err)
{
    memset(out, 0, sizeof *out);
    struct jp p;
    jp_init(&p, text, len, err);
    struct page pg = {out, 0, false};
    int rc = 0;
    if (peek(&p) != '{')
        rc = fail(&p, "expected the list page as an object");
    else if (members(&p, NULL, page_member, &pg) || end(&p))
        rc = -1;
    strbuf_free(&p.str);
    if (rc) {
        job_list_free(out);
        memset(out, 0, sizeof *out);
        return -1;
    }
    if (out->next_page_token && *out->next_page_token == '\0') {
        free(out->next_page_token);
        out->next_page_token = NULL;
    }
    if (!pg.has_total)
        out->total_size = (long)out->count;
    if (out->jobs == NULL)
        out->jobs = xcalloc(1, sizeof *out->jobs);
    return 0;
}

/* What a watch line is, as its members are read. */
struct line {
    struct jobspec *job;
    bool job_seen;
    bool other; /* a type other than JOB, or a member a summary line has not */
};

static int line_member(struct jp *p, void *obj)
{
    struct line *l = obj;
    if (is(p, "type")) {
        if (peek(p) != '"')
            return fail(p, "expected the type as a string");
        if (string(p))
            return -1;
        l->other |= !is(p, "JOB");
        return 0;
    }
    if (is(p, "job") && !l->other) {
        if (peek(p) != '{') {
            l->other = true;
            return 1;
        }
        l->job_seen = true;
        return members(p, "job", job_member, l->job);
    }
    l->other = true; /* workers, event, …: the general decoder's */
    return 1;
}

int jobsum_watch_line(const char *text, size_t len, struct jobspec *job, struct api_error *err)
{
    jobspec_init(job);
    struct jp p;
    jp_init(&p, text, len, err);
    struct line l = {job, false, false};
    int rc;
    if (peek(&p) != '{')
        rc = fail(&p, "expected a watch message as an object");
    else
        rc = members(&p, NULL, line_member, &l) || end(&p) ? -1 : 0;
    strbuf_free(&p.str);
    if (rc)
        return -1;
    return l.job_seen && !l.other ? 1 : 0;
}

/* The members of the object at p's position to fn (see jobsum_members): 0, fn's return or -1. */
static int walk_members(struct jp *p, jobsum_member_fn fn, void *ctx)
{
    char key_copy[JOBSUM_MAX_KEY + 1]; /* the key, kept while its value is read over p->str */
    int rc = 0, more = 0;
    bool first = true;
    if (enter(p, '{', "expected an object"))
        return -1;
    while (rc == 0 && (more = next(p, '}', &first)) == 1) {
        if (key(p))
            return -1;
        size_t key_len = p->sn;
        if (key_len <= JOBSUM_MAX_KEY) {
            memcpy(key_copy, p->sv, key_len);
            key_copy[key_len] = '\0';
        }
        size_t start = (peek(p), p->pos);
        if (skip_value(p))
            return -1;
        if (key_len <= JOBSUM_MAX_KEY)
            rc = fn(ctx, key_copy, key_len, p->s + start, p->pos - start);
    }
    return rc ? rc : more < 0 ? -1 : 0;
}

int jobsum_members(const char *text, size_t len, jobsum_member_fn fn, void *ctx,
                   struct api_error *err)
{
    struct jp p;
    jp_init(&p, text, len, err);
    int rc = walk_members(&p, fn, ctx);
    if (rc == 0 && end(&p))
        rc = -1;
    strbuf_free(&p.str);
    return rc;
}

size_t jobsum_members_head(const char *text, size_t len, jobsum_member_fn fn, void *ctx)
{
    struct api_error spare;
    struct jp p;
    jp_init(&p, text, len, &spare);
    size_t took = walk_members(&p, fn, ctx) == 0 ? p.pos : 0;
    strbuf_free(&p.str);
    return took;
}

bool jobsum_string(const char *text, size_t len, char **out)
{
    struct api_error spare;
    struct jp p;
    jp_init(&p, text, len, &spare);
    bool ok = peek(&p) == '"' && string(&p) == 0 && end(&p) == 0;
    *out = ok ? xstrndup(p.sv, p.sn) : NULL;
    strbuf_free(&p.str);
    return ok;
}

bool jobsum_integer(const char *text, size_t len, long long *out)
{
    struct api_error spare;
    struct jp p;
    jp_init(&p, text, len, &spare);
    char c = peek(&p);
    bool integer = false;
    long long v = 0;
    bool ok = (c == '-' || (c >= '0' && c <= '9')) && number(&p, &integer, &v) == 0 && integer &&
              end(&p) == 0;
    *out = ok ? v : 0;
    return ok;
}
