/*
 * jsonbound: JSON replies decoded within a memory bound, and the spans of
 * a reply's members and array elements; see jsonbound.h. Called by the
 * Slurm driver (api/slurm_rest.c) and the ACP driver (api/acp*.c).
 */
#include "api/jsonbound.h"

#include <string.h>

#include "util/strbuf.h"

/*
 * jansson's cost, measured on glibc (a Slurm job: 24.5 KB decoded, 25.0 KB said): a node is 24-48
 * bytes plus malloc's 16, a member a hash pair with its own copy of the key, a string its text.
 */
#define VALUE_COST 72
#define MEMBER_COST 96

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
    /* Nothing is decoded yet: what it would take is known before any of it is allocated. */
    if (jsonbound_skip(buf, len, &p, &c) == 0 && jsonbound_cost(&c) > bound) {
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
