/*
 * yamltree: YAML text to a jansson tree and back; see yamltree.h.
 *
 * Reading drives libyaml's event parser (not its document loader, which
 * forgets whether a scalar was plain) and builds the tree with an explicit
 * stack of open collections, so depth costs no C stack. A struct reader owns
 * everything alive during one parse: the libyaml parser, the stack, the path
 * of the node being read and the anchor table (a jansson object from anchor
 * name to the shared node). Each node's position goes into the caller's
 * docpos table as it starts.
 *
 * The cost of aliases: every frame counts the nodes and text bytes of its
 * subtree as if aliases were expanded, an anchor remembers its node's
 * count, and each alias adds the count of what it names to the total that
 * aliases add; past YAMLTREE_MAX_ALIAS_NODES or _BYTES the alias is an
 * error. Counting costs nothing per node beyond two additions, and the
 * tree still shares the aliased node: it is whoever expands it later (a
 * deep copy, a walk, json_dumps) that the bound protects.
 *
 * Writing walks the tree and feeds libyaml's emitter, which picks the quoting;
 * we only ask for quotes when a plain string would read back as another type.
 *
 * Numbers: an integer that does not fit a json_int_t (long long) is read as
 * a real holding its value, so the decoder can report "out of range" rather
 * than a type error; one too large even for a double is an error here, as
 * are .inf and .nan (jansson cannot hold them). Reals are written with the
 * fewest digits (15 to 17) that read back exactly, always with a '.' or an
 * exponent. Decimal text goes through jansson both ways, so the process
 * locale (LC_NUMERIC set by the TUI) cannot change a number.
 *
 * Called by the job file decoder (YAML and, for positions, JSON files) and
 * by the writer of job files.
 */
#include "api/yamltree.h"

#include <limits.h>
#include <regex.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "api/docpos.h"
#include "api/finding.h"
#include "util/strbuf.h"
#include "util/utf8.h"
#include "util/xalloc.h"

#define CORE_TAG "tag:yaml.org,2002:"

/* What a scalar's text resolves to. */
enum scalar_kind {
    KIND_NULL,
    KIND_BOOL,
    KIND_INT,
    KIND_FLOAT,
    KIND_INF_NAN,
    KIND_STRING,
};

/* ---- the YAML 1.2 core schema ---------------------------------------- */

static bool text_is(const char *s, size_t n, const char *word)
{
    return strlen(word) == n && memcmp(s, word, n) == 0;
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static bool is_null_text(const char *s, size_t n)
{
    return n == 0 || text_is(s, n, "~") || text_is(s, n, "null") || text_is(s, n, "Null") ||
           text_is(s, n, "NULL");
}

static bool is_true_text(const char *s, size_t n)
{
    return text_is(s, n, "true") || text_is(s, n, "True") || text_is(s, n, "TRUE");
}

static bool is_false_text(const char *s, size_t n)
{
    return text_is(s, n, "false") || text_is(s, n, "False") || text_is(s, n, "FALSE");
}

/* The base of an integer literal: 8 for 0o…, 16 for 0x…, else 10. */
static unsigned int_base(const char *s, size_t n)
{
    if (n > 2 && s[0] == '0' && s[1] == 'o')
        return 8;
    if (n > 2 && s[0] == '0' && s[1] == 'x')
        return 16;
    return 10;
}

/* [-+]?[0-9]+ | 0o[0-7]+ | 0x[0-9a-fA-F]+ */
static bool is_int_text(const char *s, size_t n)
{
    unsigned base = int_base(s, n);
    size_t i = 0;
    if (base != 10)
        i = 2;
    else if (n > 0 && (s[0] == '-' || s[0] == '+'))
        i = 1;
    if (i == n)
        return false;
    for (; i < n; i++) {
        int d = hex_value(s[i]);
        if (d < 0 || (unsigned)d >= base)
            return false;
    }
    return true;
}

/* [-+]? ( \.[0-9]+ | [0-9]+(\.[0-9]*)? ) ([eE][-+]?[0-9]+)? */
static bool is_float_text(const char *s, size_t n)
{
    size_t i = 0, digits = 0;
    if (i < n && (s[i] == '-' || s[i] == '+'))
        i++;
    if (i < n && s[i] == '.') {
        for (i++; i < n && is_digit(s[i]); i++)
            digits++;
    } else {
        for (; i < n && is_digit(s[i]); i++)
            digits++;
        if (digits > 0 && i < n && s[i] == '.')
            for (i++; i < n && is_digit(s[i]); i++)
                ;
    }
    if (digits == 0)
        return false;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '-' || s[i] == '+'))
            i++;
        size_t exp_digits = 0;
        for (; i < n && is_digit(s[i]); i++)
            exp_digits++;
        if (exp_digits == 0)
            return false;
    }
    return i == n;
}

/* [-+]?\.(inf|Inf|INF) | \.(nan|NaN|NAN) */
static bool is_inf_nan_text(const char *s, size_t n)
{
    if (text_is(s, n, ".nan") || text_is(s, n, ".NaN") || text_is(s, n, ".NAN"))
        return true;
    if (n > 0 && (s[0] == '-' || s[0] == '+')) {
        s++;
        n--;
    }
    return text_is(s, n, ".inf") || text_is(s, n, ".Inf") || text_is(s, n, ".INF");
}

/* How a plain, untagged scalar resolves. */
static enum scalar_kind resolve_plain(const char *s, size_t n)
{
    if (is_null_text(s, n))
        return KIND_NULL;
    if (is_true_text(s, n) || is_false_text(s, n))
        return KIND_BOOL;
    if (is_int_text(s, n))
        return KIND_INT;
    if (is_float_text(s, n))
        return KIND_FLOAT;
    if (is_inf_nan_text(s, n))
        return KIND_INF_NAN;
    return KIND_STRING;
}

/*
 * Reads text matching is_float_text (or a decimal integer) as a double,
 * through jansson so the locale plays no part. Returns false when the value
 * is too large for a double.
 */
static bool decimal_value(const char *s, size_t n, double *out)
{
    struct strbuf b = STRBUF_INIT;
    size_t i = 0;
    if (i < n && (s[i] == '-' || s[i] == '+'))
        strbuf_adds(&b, s[i++] == '-' ? "-" : "");
    size_t start = i;
    while (i < n && is_digit(s[i]))
        i++;
    size_t lead = start;
    while (lead + 1 < i && s[lead] == '0') /* JSON allows no leading zeros */
        lead++;
    if (i == start)
        strbuf_addc(&b, '0');
    else
        strbuf_add(&b, s + lead, i - lead);
    strbuf_addc(&b, '.');
    size_t frac = i < n && s[i] == '.' ? ++i : i;
    while (i < n && is_digit(s[i]))
        i++;
    if (i == frac)
        strbuf_addc(&b, '0');
    else
        strbuf_add(&b, s + frac, i - frac);
    strbuf_add(&b, s + i, n - i); /* the exponent, already JSON syntax */

    json_error_t jerr;
    json_t *num = json_loadb(strbuf_str(&b), b.len, JSON_DECODE_ANY, &jerr);
    strbuf_free(&b);
    bool ok = json_is_real(num);
    if (ok)
        *out = json_real_value(num);
    json_decref(num);
    return ok;
}

/*
 * Reads text matching is_int_text. Sets *is_real when it does not fit a
 * json_int_t; returns false when it does not even fit a double.
 */
static bool int_value(const char *s, size_t n, json_int_t *iv, double *rv, bool *is_real)
{
    unsigned base = int_base(s, n);
    bool neg = false;
    size_t i = 0;
    if (base != 10)
        i = 2;
    else if (s[0] == '-' || s[0] == '+')
        neg = s[i++] == '-';
    unsigned long long limit =
        neg ? (unsigned long long)LLONG_MAX + 1 : (unsigned long long)LLONG_MAX;
    unsigned long long v = 0;
    double d = 0;
    bool overflow = false;
    for (; i < n; i++) {
        unsigned digit = (unsigned)hex_value(s[i]);
        if (!overflow && v > (limit - digit) / base)
            overflow = true;
        if (!overflow)
            v = v * base + digit;
        d = d * base + digit;
    }
    *is_real = overflow;
    if (!overflow) {
        *iv = neg ? (v == limit ? LLONG_MIN : -(json_int_t)v) : (json_int_t)v;
        return true;
    }
    if (base == 10)
        return decimal_value(s, n, rv);
    *rv = d; /* hexadecimal and octal: close enough for "out of range" */
    return d <= 1.7976931348623157e308;
}

/* ---- reading ------------------------------------------------------------ */

/* What a node costs once its aliases are expanded. */
struct cost {
    uint64_t nodes, bytes;
};

/* One open collection. */
struct frame {
    json_t *node;     /* borrowed: its parent (or reader.root) holds it */
    struct cost size; /* this node and what is in it so far, aliases expanded */
    size_t path_len;  /* this node's path is reader.path[0, path_len) */
    char *anchor;     /* registered when the node is complete */
    char *key;        /* a mapping's key waiting for its value, or NULL */
    size_t key_len;
    int key_line, key_col;
    size_t index; /* a sequence's next item */
};

struct reader {
    const char *text;
    size_t len;
    yaml_parser_t parser;
    struct frame stack[YAMLTREE_MAX_DEPTH];
    size_t depth;
    json_t *root;
    json_t *anchors;      /* anchor name -> node */
    json_t *anchor_costs; /* anchor name -> [nodes, bytes] of its node, expanded */
    struct cost aliased;  /* what aliases added so far */
    struct strbuf path;
    struct docpos *pos;
    struct doc_error *err;
    int documents;
};

static int set_error(struct doc_error *err, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int set_error(struct doc_error *err, int line, int col, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    err->line = line;
    err->col = col;
    err->path[0] = '\0';
    return -1;
}

static int mark_line(yaml_mark_t m)
{
    return m.line < INT_MAX ? (int)m.line + 1 : INT_MAX;
}

static int mark_col(yaml_mark_t m)
{
    return m.column < INT_MAX ? (int)m.column + 1 : INT_MAX;
}

/*
 * Copies at most ~40 bytes of s into out for a message: whole characters
 * only, control characters shown as '?', "..." when cut.
 */
static void excerpt(char *out, size_t size, const char *s, size_t n)
{
    struct strbuf b = STRBUF_INIT;
    size_t i = 0;
    while (i < n && b.len < 40) {
        uint32_t cp;
        size_t k = utf8_decode(s + i, n - i, &cp);
        if (cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0))
            strbuf_addc(&b, '?');
        else
            strbuf_add(&b, s + i, k);
        i += k;
    }
    if (i < n)
        strbuf_adds(&b, "...");
    snprintf(out, size, "%s", strbuf_str(&b));
    strbuf_free(&b);
}

/* "!!int" for core tags, the tag itself for others, made printable. */
static void tag_name(char *out, size_t size, const char *tag)
{
    char shown[80];
    size_t plen = strlen(CORE_TAG);
    if (strncmp(tag, CORE_TAG, plen) == 0) {
        excerpt(shown, sizeof shown, tag + plen, strlen(tag + plen));
        snprintf(out, size, "!!%s", shown);
    } else {
        excerpt(out, size, tag, strlen(tag));
    }
}

static bool core_tag(const char *tag, const char *name)
{
    size_t plen = strlen(CORE_TAG);
    return strncmp(tag, CORE_TAG, plen) == 0 && strcmp(tag + plen, name) == 0;
}

static int unsupported_tag(struct reader *r, yaml_mark_t m, const char *tag)
{
    char shown[128];
    tag_name(shown, sizeof shown, tag);
    return set_error(r->err, mark_line(m), mark_col(m), "unsupported tag %s", shown);
}

/* The number a scalar holds (as_real: a real even for integer text), or NULL with an error. */
static json_t *number(struct reader *r, const yaml_event_t *ev, bool as_real)
{
    const char *s = (const char *)ev->data.scalar.value;
    size_t n = ev->data.scalar.length;
    json_int_t iv = 0;
    double rv = 0;
    bool is_real = true, ok;
    if (is_int_text(s, n))
        ok = int_value(s, n, &iv, &rv, &is_real);
    else
        ok = decimal_value(s, n, &rv);
    if (!ok) {
        char shown[64];
        excerpt(shown, sizeof shown, s, n);
        set_error(r->err, mark_line(ev->start_mark), mark_col(ev->start_mark),
                  "number %s is out of range", shown);
        return NULL;
    }
    if (!is_real)
        return as_real ? json_real((double)iv) : json_integer(iv);
    return json_real(rv);
}

/* Whether the text of a scalar tagged !!int/!!float/!!bool/!!null fits it. */
static bool fits_tag(const char *tag, const char *s, size_t n, const char **what)
{
    if (core_tag(tag, "int")) {
        *what = "an integer";
        return is_int_text(s, n);
    }
    if (core_tag(tag, "float")) {
        *what = "a number";
        return is_int_text(s, n) || is_float_text(s, n) || is_inf_nan_text(s, n);
    }
    if (core_tag(tag, "bool")) {
        *what = "true or false";
        return is_true_text(s, n) || is_false_text(s, n);
    }
    *what = "null";
    return is_null_text(s, n);
}

/* The kind a scalar event asks for, or -1 with an error. */
static int scalar_kind(struct reader *r, const yaml_event_t *ev)
{
    const char *s = (const char *)ev->data.scalar.value;
    size_t n = ev->data.scalar.length;
    const char *tag = (const char *)ev->data.scalar.tag;
    if (!tag)
        return ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE ? (int)resolve_plain(s, n)
                                                                : KIND_STRING;
    if (strcmp(tag, "!") == 0 || core_tag(tag, "str"))
        return KIND_STRING;
    if (!core_tag(tag, "int") && !core_tag(tag, "float") && !core_tag(tag, "bool") &&
        !core_tag(tag, "null"))
        return unsupported_tag(r, ev->start_mark, tag);
    const char *what;
    if (!fits_tag(tag, s, n, &what)) {
        char shown[64], tname[32];
        excerpt(shown, sizeof shown, s, n);
        tag_name(tname, sizeof tname, tag);
        return set_error(r->err, mark_line(ev->start_mark), mark_col(ev->start_mark),
                         "'%s' is not %s (%s)", shown, what, tname);
    }
    if (core_tag(tag, "float"))
        return is_inf_nan_text(s, n) ? KIND_INF_NAN : KIND_FLOAT;
    return core_tag(tag, "int") ? KIND_INT : core_tag(tag, "bool") ? KIND_BOOL : KIND_NULL;
}

/* The value of a scalar event: a new reference, or NULL with an error. */
static json_t *scalar_value(struct reader *r, const yaml_event_t *ev)
{
    const char *s = (const char *)ev->data.scalar.value;
    size_t n = ev->data.scalar.length;
    json_t *v = NULL;
    switch (scalar_kind(r, ev)) {
    case KIND_NULL:
        return json_null();
    case KIND_BOOL:
        return json_boolean(is_true_text(s, n));
    case KIND_INT:
        return number(r, ev, false);
    case KIND_FLOAT:
        return number(r, ev, true);
    case KIND_INF_NAN:
        set_error(r->err, mark_line(ev->start_mark), mark_col(ev->start_mark),
                  "infinite and NaN numbers are not supported");
        return NULL;
    case KIND_STRING:
        v = json_stringn(s, n);
        if (!v)
            set_error(r->err, mark_line(ev->start_mark), mark_col(ev->start_mark),
                      "text is not valid UTF-8");
        return v;
    default:
        return NULL; /* the error is set */
    }
}

static enum docpos_style scalar_style(yaml_scalar_style_t style)
{
    switch (style) {
    case YAML_SINGLE_QUOTED_SCALAR_STYLE:
    case YAML_DOUBLE_QUOTED_SCALAR_STYLE:
        return DOCPOS_QUOTED;
    case YAML_LITERAL_SCALAR_STYLE:
    case YAML_FOLDED_SCALAR_STYLE:
        return DOCPOS_BLOCK;
    default:
        return DOCPOS_PLAIN;
    }
}

static struct frame *top(struct reader *r)
{
    return r->depth ? &r->stack[r->depth - 1] : NULL;
}

/* True when the next node of the open mapping is a key. */
static bool at_key(struct reader *r)
{
    struct frame *f = top(r);
    return f && json_is_object(f->node) && !f->key;
}

/*
 * Puts value (a reference we give away) in its place: the root, the pending
 * key of the open mapping, or the end of the open sequence. Leaves r->path
 * at the value's path and records its position.
 */
static int attach(struct reader *r, json_t *value, yaml_mark_t mark, enum docpos_style style)
{
    struct frame *f = top(r);
    int key_line = 0, key_col = 0;
    if (!f) {
        r->root = value;
    } else if (json_is_object(f->node)) {
        if (f->path_len)
            strbuf_addc(&r->path, '.');
        strbuf_add(&r->path, f->key, f->key_len);
        key_line = f->key_line;
        key_col = f->key_col;
        int rc = json_object_setn_new(f->node, f->key, f->key_len, value);
        free(f->key);
        f->key = NULL;
        if (rc != 0)
            return set_error(r->err, key_line, key_col, "key is not valid UTF-8");
    } else {
        strbuf_addf(&r->path, "[%zu]", f->index++);
        json_array_append_new(f->node, value);
    }
    if (r->pos)
        docpos_add(r->pos, strbuf_str(&r->path), key_line, key_col, mark_line(mark), mark_col(mark),
                   style);
    return 0;
}

static void restore_path(struct reader *r)
{
    struct frame *f = top(r);
    strbuf_truncate(&r->path, f ? f->path_len : 0);
}

/* Adds c to the open collection's size (the root has none to add to). */
static void count(struct reader *r, struct cost c)
{
    struct frame *f = top(r);
    if (f) {
        f->size.nodes += c.nodes;
        f->size.bytes += c.bytes;
    }
}

static void add_anchor(struct reader *r, const char *anchor, json_t *value, struct cost c)
{
    if (anchor == NULL)
        return;
    json_object_set(r->anchors, anchor, value);
    json_t *pair = json_pack("[II]", (json_int_t)c.nodes, (json_int_t)c.bytes);
    if (pair == NULL)
        xalloc_die();
    json_object_set_new(r->anchor_costs, anchor, pair);
}

/* A scalar in key position: remembered as text until its value arrives. */
static int read_key(struct reader *r, const yaml_event_t *ev)
{
    struct frame *f = top(r);
    const char *s = (const char *)ev->data.scalar.value;
    size_t n = ev->data.scalar.length;
    if (ev->data.scalar.tag) { /* only to check the tag and that the text fits it */
        json_t *v = scalar_value(r, ev);
        if (!v)
            return -1;
        json_decref(v);
    }
    if (memchr(s, '\0', n)) /* jansson's look-ups and json_equal stop at a NUL */
        return set_error(r->err, mark_line(ev->start_mark), mark_col(ev->start_mark),
                         "mapping keys must not contain NUL characters");
    if (json_object_getn(f->node, s, n)) {
        char shown[64];
        excerpt(shown, sizeof shown, s, n);
        return set_error(r->err, mark_line(ev->start_mark), mark_col(ev->start_mark),
                         "duplicate key '%s'", shown);
    }
    json_t *text = json_stringn(s, n);
    if (!text)
        return set_error(r->err, mark_line(ev->start_mark), mark_col(ev->start_mark),
                         "key is not valid UTF-8");
    struct cost c = {1, n};
    count(r, c);
    /* an anchored key is its text */
    add_anchor(r, (const char *)ev->data.scalar.anchor, text, c);
    json_decref(text);
    f->key = xmalloc(n + 1);
    memcpy(f->key, s, n);
    f->key[n] = '\0';
    f->key_len = n;
    f->key_line = mark_line(ev->start_mark);
    f->key_col = mark_col(ev->start_mark);
    return 0;
}

static int read_scalar(struct reader *r, const yaml_event_t *ev)
{
    if (at_key(r))
        return read_key(r, ev);
    json_t *v = scalar_value(r, ev);
    if (!v)
        return -1;
    struct cost c = {1, ev->data.scalar.length};
    add_anchor(r, (const char *)ev->data.scalar.anchor, v, c);
    count(r, c);
    int rc = attach(r, v, ev->start_mark, scalar_style(ev->data.scalar.style));
    restore_path(r);
    return rc;
}

static int read_alias(struct reader *r, const yaml_event_t *ev)
{
    const char *name = (const char *)ev->data.alias.anchor;
    yaml_mark_t m = ev->start_mark;
    if (at_key(r))
        return set_error(r->err, mark_line(m), mark_col(m), "mapping keys must be plain strings");
    json_t *v = json_object_get(r->anchors, name);
    if (!v) {
        char shown[64];
        excerpt(shown, sizeof shown, name, strlen(name));
        for (size_t i = 0; i < r->depth; i++)
            if (r->stack[i].anchor && strcmp(r->stack[i].anchor, name) == 0)
                return set_error(r->err, mark_line(m), mark_col(m),
                                 "alias *%s refers to a node that contains it", shown);
        return set_error(r->err, mark_line(m), mark_col(m), "undefined alias *%s", shown);
    }
    json_t *pair = json_object_get(r->anchor_costs, name);
    struct cost c = {(uint64_t)json_integer_value(json_array_get(pair, 0)),
                     (uint64_t)json_integer_value(json_array_get(pair, 1))};
    count(r, c);
    r->aliased.nodes += c.nodes;
    r->aliased.bytes += c.bytes;
    int rc = attach(r, json_incref(v), m, DOCPOS_BLOCK);
    if (rc == 0 && (r->aliased.nodes > YAMLTREE_MAX_ALIAS_NODES ||
                    r->aliased.bytes > YAMLTREE_MAX_ALIAS_BYTES)) {
        if (r->aliased.nodes > YAMLTREE_MAX_ALIAS_NODES)
            rc = set_error(r->err, mark_line(m), mark_col(m),
                           "aliases expand to more than %d nodes (the limit of a document)",
                           YAMLTREE_MAX_ALIAS_NODES);
        else
            rc = set_error(r->err, mark_line(m), mark_col(m),
                           "aliases expand to more than %llu MiB of text (the limit of a document)",
                           YAMLTREE_MAX_ALIAS_BYTES >> 20);
        snprintf(r->err->path, sizeof r->err->path, "%s", strbuf_str(&r->path));
    }
    restore_path(r);
    return rc;
}

static int read_collection_start(struct reader *r, const yaml_event_t *ev)
{
    bool mapping = ev->type == YAML_MAPPING_START_EVENT;
    const char *tag =
        (const char *)(mapping ? ev->data.mapping_start.tag : ev->data.sequence_start.tag);
    const char *anchor =
        (const char *)(mapping ? ev->data.mapping_start.anchor : ev->data.sequence_start.anchor);
    yaml_mark_t m = ev->start_mark;
    if (at_key(r))
        return set_error(r->err, mark_line(m), mark_col(m), "mapping keys must be plain strings");
    if (r->depth == YAMLTREE_MAX_DEPTH)
        return set_error(r->err, mark_line(m), mark_col(m), "nesting deeper than %d levels",
                         YAMLTREE_MAX_DEPTH);
    if (tag && strcmp(tag, "!") != 0 && !core_tag(tag, mapping ? "map" : "seq"))
        return unsupported_tag(r, m, tag);
    json_t *node = mapping ? json_object() : json_array();
    if (!node)
        xalloc_die();
    if (attach(r, node, m, DOCPOS_BLOCK) != 0)
        return -1;
    struct frame *f = &r->stack[r->depth++];
    memset(f, 0, sizeof *f);
    f->node = node;
    f->size = (struct cost){1, 0};
    f->path_len = r->path.len;
    if (anchor) {
        /* Until the node is complete, an alias to this name is to an ancestor. */
        json_object_del(r->anchors, anchor);
        f->anchor = xstrdup(anchor);
    }
    return 0;
}

static void read_collection_end(struct reader *r)
{
    struct frame *f = &r->stack[--r->depth];
    add_anchor(r, f->anchor, f->node, f->size);
    count(r, f->size);
    free(f->anchor);
    free(f->key);
    restore_path(r);
}

/* Byte offset of the index-th character (libyaml counts a CRLF as two). */
static size_t char_offset(const char *text, size_t len, size_t index)
{
    size_t i = 0;
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0)
        i = 3; /* libyaml does not count the byte order mark */
    for (; index > 0 && i < len; index--) {
        uint32_t cp;
        i += utf8_decode(text + i, len - i, &cp);
    }
    return i;
}

/* Line and column (1-based) of byte offset off, for reader errors. */
static void offset_position(const char *text, size_t len, size_t off, int *line, int *col)
{
    size_t start = 0;
    int l = 1;
    if (off > len)
        off = len;
    for (size_t i = 0; i < off; i++) {
        if (text[i] == '\n' || (text[i] == '\r' && (i + 1 >= len || text[i + 1] != '\n'))) {
            l++;
            start = i + 1;
        }
    }
    *line = l;
    size_t c = utf8_count(text + start, off - start) + 1;
    *col = c < INT_MAX ? (int)c : INT_MAX;
}

/* Offset of the first invalid UTF-8 sequence, if there is one before limit; else limit. */
static size_t first_invalid_utf8(const char *text, size_t len, size_t limit)
{
    for (size_t i = 0; i < len && i < limit;) {
        uint32_t cp;
        size_t k = utf8_decode(text + i, len - i, &cp);
        if (cp == UTF8_REPLACEMENT && (k != 3 || memcmp(text + i, "\xEF\xBF\xBD", 3) != 0))
            return i;
        i += k;
    }
    return limit;
}

/* Turns libyaml's error into r->err. */
static int parser_error(struct reader *r)
{
    yaml_parser_t *p = &r->parser;
    const char *problem = p->problem ? p->problem : "syntax error";
    if (p->error == YAML_MEMORY_ERROR)
        xalloc_die();
    if (p->error == YAML_READER_ERROR) {
        int line, col;
        if (strstr(problem, "UTF-8") || strstr(problem, "Unicode")) {
            /* libyaml may point at a bad trailing byte: show the sequence's start */
            offset_position(r->text, r->len, first_invalid_utf8(r->text, r->len, p->problem_offset),
                            &line, &col);
            return set_error(r->err, line, col, "invalid UTF-8 (%s)", problem);
        }
        offset_position(r->text, r->len, p->problem_offset, &line, &col);
        return set_error(r->err, line, col, "%s", problem);
    }
    int line = mark_line(p->problem_mark), col = mark_col(p->problem_mark);
    size_t at = char_offset(r->text, r->len, p->problem_mark.index);
    if (strcmp(problem, "found character that cannot start any token") == 0 && at < r->len &&
        r->text[at] == '\t')
        return set_error(r->err, line, col,
                         "found a tab character where an indentation space is expected");
    const char *context = p->context;
    if (context && strcmp(context, "while scanning for the next token") != 0 &&
        (p->context_mark.line != p->problem_mark.line ||
         p->context_mark.column != p->problem_mark.column))
        return set_error(r->err, line, col, "%s (%s started at line %d, column %d)", problem,
                         context, mark_line(p->context_mark), mark_col(p->context_mark));
    return set_error(r->err, line, col, "%s", problem);
}

/* Handles one event; sets *done at the end of the stream. */
static int read_event(struct reader *r, const yaml_event_t *ev, bool *done)
{
    switch (ev->type) {
    case YAML_DOCUMENT_START_EVENT:
        if (++r->documents > 1)
            return set_error(r->err, mark_line(ev->start_mark), mark_col(ev->start_mark),
                             "only one document is allowed");
        return 0;
    case YAML_STREAM_END_EVENT:
        *done = true;
        return 0;
    case YAML_SCALAR_EVENT:
        return read_scalar(r, ev);
    case YAML_ALIAS_EVENT:
        return read_alias(r, ev);
    case YAML_SEQUENCE_START_EVENT:
    case YAML_MAPPING_START_EVENT:
        return read_collection_start(r, ev);
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT:
        if (r->depth > 0)
            read_collection_end(r);
        return 0;
    default:
        return 0;
    }
}

json_t *yamltree_parse(const char *text, size_t len, struct docpos *pos, struct doc_error *err)
{
    struct doc_error scratch;
    struct reader r;
    memset(&r, 0, sizeof r);
    r.text = text ? text : "";
    r.len = text ? len : 0;
    r.pos = pos;
    r.err = err ? err : &scratch;
    r.err->line = r.err->col = 0;
    r.err->path[0] = r.err->message[0] = '\0';
    r.anchors = json_object();
    r.anchor_costs = json_object();
    if (!r.anchors || !r.anchor_costs || !yaml_parser_initialize(&r.parser))
        xalloc_die();
    yaml_parser_set_input_string(&r.parser, (const unsigned char *)r.text, r.len);
    size_t pos_start = pos ? pos->count : 0;

    int rc = 0;
    /* libyaml would decode UTF-16 after its byte order mark; files must be UTF-8 */
    if (r.len >= 2 && (memcmp(r.text, "\xFF\xFE", 2) == 0 || memcmp(r.text, "\xFE\xFF", 2) == 0))
        rc = set_error(r.err, 1, 1, "text is UTF-16; only UTF-8 is supported");
    bool done = false;
    while (!done && rc == 0) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&r.parser, &ev)) {
            rc = parser_error(&r);
            break;
        }
        rc = read_event(&r, &ev, &done);
        yaml_event_delete(&ev);
    }

    while (r.depth > 0) {
        struct frame *f = &r.stack[--r.depth];
        free(f->anchor);
        free(f->key);
    }
    json_decref(r.anchors);
    json_decref(r.anchor_costs);
    strbuf_free(&r.path);
    yaml_parser_delete(&r.parser);
    if (rc != 0) {
        json_decref(r.root);
        if (pos) { /* leave the table as it was */
            for (size_t i = pos_start; i < pos->count; i++)
                free(pos->items[i].path);
            pos->count = pos_start;
        }
        return NULL;
    }
    return r.root ? r.root : json_null();
}

/* ---- writing ------------------------------------------------------------ */

static int write_to_strbuf(void *data, unsigned char *buffer, size_t size)
{
    strbuf_add(data, buffer, size);
    return 1;
}

/* Sends ev (which the emitter then owns); initialized says whether making it worked. */
static int emit(yaml_emitter_t *em, yaml_event_t *ev, int initialized, struct doc_error *err)
{
    if (!initialized)
        return set_error(err, 0, 0, "text is not valid UTF-8");
    if (!yaml_emitter_emit(em, ev)) {
        if (em->error == YAML_MEMORY_ERROR)
            xalloc_die();
        return set_error(err, 0, 0, "%s", em->problem ? em->problem : "cannot write YAML");
    }
    return 0;
}

static int emit_plain(yaml_emitter_t *em, const char *text, struct doc_error *err)
{
    yaml_event_t ev;
    int ok = yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)text, (int)strlen(text),
                                          1, 1, YAML_PLAIN_SCALAR_STYLE);
    return emit(em, &ev, ok, err);
}

/*
 * Whether a YAML 1.1 reader (PyYAML, the go-yaml kubectl uses) would read the
 * plain text s as something other than a string where the 1.2 core schema we
 * read with does not: its booleans (y, yes, on, off … in three spellings),
 * the merge key "<<", the value key "=", its integers (0b101, 0777, 1_000,
 * sexagesimal 1:30), floats (1_0.5, 1:30.5) and timestamps (2024-01-02…).
 * The patterns are YAML 1.1's resolvers as PyYAML writes them; a timestamp is
 * judged by its date alone (an extra pair of quotes costs nothing).
 */
static bool yaml11_misread(const char *s, size_t n)
{
    static const char pattern[] =
        "^([-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+"
        "|[-+]?[1-9][0-9_]*(:[0-5]?[0-9])+"
        "|[-+]?[0-9][0-9_]*\\.[0-9_]*([eE][-+][0-9]+)?|\\.[0-9][0-9_]*([eE][-+][0-9]+)?"
        "|[-+]?[0-9][0-9_]*(:[0-5]?[0-9])+\\.[0-9_]*|[-+]?\\.(inf|Inf|INF)|\\.(nan|NaN|NAN)"
        "|[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}([Tt \t].*)?"
        "|y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE"
        "|on|On|ON|off|Off|OFF|~|null|Null|NULL|<<|=)$";
    static regex_t re;
    static int compiled; /* 0 not yet, 1 ready, -1 failed */
    if (compiled == 0)
        compiled = regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB) == 0 ? 1 : -1;
    if (compiled < 0 || n == 0 || n > 64 || memchr(s, '\0', n))
        return false;
    char text[65];
    memcpy(text, s, n);
    text[n] = '\0';
    return regexec(&re, text, 0, NULL, 0) == 0;
}

/* A string: quoted when plain text would read back as another type, in YAML 1.2 or 1.1. */
static int emit_string(yaml_emitter_t *em, const char *s, size_t n, struct doc_error *err)
{
    if (n > INT_MAX)
        return set_error(err, 0, 0, "string too long");
    bool quote = resolve_plain(s, n) != KIND_STRING || yaml11_misread(s, n);
    yaml_scalar_style_t style =
        memchr(s, '\n', n) ? YAML_LITERAL_SCALAR_STYLE : YAML_ANY_SCALAR_STYLE;
    yaml_event_t ev;
    int ok =
        yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)s, (int)n, !quote, 1, style);
    return emit(em, &ev, ok, err);
}

/* The shortest text (15 to 17 digits) that reads back as exactly v. */
static char *real_text(double v)
{
    json_t *real = json_real(v);
    char *best = NULL;
    for (int prec = 15; prec <= 17 && real; prec++) {
        free(best);
        best = json_dumps(real, JSON_ENCODE_ANY | JSON_REAL_PRECISION(prec));
        json_t *back = best ? json_loads(best, JSON_DECODE_ANY, NULL) : NULL;
        bool exact = json_is_real(back) && json_real_value(back) == v;
        json_decref(back);
        if (exact)
            break;
    }
    json_decref(real);
    return best;
}

static int emit_node(yaml_emitter_t *em, const json_t *node, int depth, struct doc_error *err)
{
    yaml_event_t ev;
    char num[32];
    switch (json_typeof(node)) {
    case JSON_OBJECT: {
        if (depth >= YAMLTREE_MAX_DEPTH)
            return set_error(err, 0, 0, "nesting deeper than %d levels", YAMLTREE_MAX_DEPTH);
        yaml_mapping_style_t style =
            json_object_size(node) ? YAML_BLOCK_MAPPING_STYLE : YAML_FLOW_MAPPING_STYLE;
        if (emit(em, &ev, yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, style), err))
            return -1;
        const char *key;
        size_t key_len;
        json_t *value;
        json_object_keylen_foreach((json_t *)node, key, key_len, value)
        {
            if (memchr(key, '\0', key_len))
                return set_error(err, 0, 0, "mapping keys must not contain NUL characters");
            if (emit_string(em, key, key_len, err) || emit_node(em, value, depth + 1, err))
                return -1;
        }
        return emit(em, &ev, yaml_mapping_end_event_initialize(&ev), err);
    }
    case JSON_ARRAY: {
        if (depth >= YAMLTREE_MAX_DEPTH)
            return set_error(err, 0, 0, "nesting deeper than %d levels", YAMLTREE_MAX_DEPTH);
        yaml_sequence_style_t style =
            json_array_size(node) ? YAML_BLOCK_SEQUENCE_STYLE : YAML_FLOW_SEQUENCE_STYLE;
        if (emit(em, &ev, yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, style), err))
            return -1;
        size_t i;
        json_t *value;
        json_array_foreach(node, i, value)
        {
            if (emit_node(em, value, depth + 1, err))
                return -1;
        }
        return emit(em, &ev, yaml_sequence_end_event_initialize(&ev), err);
    }
    case JSON_STRING:
        return emit_string(em, json_string_value(node), json_string_length(node), err);
    case JSON_INTEGER:
        snprintf(num, sizeof num, "%" JSON_INTEGER_FORMAT, json_integer_value(node));
        return emit_plain(em, num, err);
    case JSON_REAL: {
        char *text = real_text(json_real_value(node));
        if (!text)
            return set_error(err, 0, 0, "infinite and NaN numbers are not supported");
        int rc = emit_plain(em, text, err);
        free(text);
        return rc;
    }
    case JSON_TRUE:
        return emit_plain(em, "true", err);
    case JSON_FALSE:
        return emit_plain(em, "false", err);
    default:
        return emit_plain(em, "null", err);
    }
}

int yamltree_emit(const json_t *root, struct strbuf *out, struct doc_error *err)
{
    struct doc_error scratch;
    if (!err)
        err = &scratch;
    err->line = err->col = 0;
    err->message[0] = '\0';
    if (!root)
        return set_error(err, 0, 0, "no document to write");

    yaml_emitter_t em;
    if (!yaml_emitter_initialize(&em))
        xalloc_die();
    yaml_emitter_set_output(&em, write_to_strbuf, out);
    yaml_emitter_set_encoding(&em, YAML_UTF8_ENCODING);
    yaml_emitter_set_unicode(&em, 1);
    yaml_emitter_set_width(&em, -1);
    yaml_emitter_set_indent(&em, 2);
    yaml_emitter_set_break(&em, YAML_LN_BREAK);

    size_t start = out->len;
    yaml_event_t ev;
    int rc = emit(&em, &ev, yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING), err);
    if (!rc)
        rc = emit(&em, &ev, yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1), err);
    if (!rc)
        rc = emit_node(&em, root, 0, err);
    if (!rc)
        rc = emit(&em, &ev, yaml_document_end_event_initialize(&ev, 1), err);
    if (!rc)
        rc = emit(&em, &ev, yaml_stream_end_event_initialize(&ev), err);
    if (!rc && !yaml_emitter_flush(&em))
        rc = set_error(err, 0, 0, "cannot write YAML");
    yaml_emitter_delete(&em);
    if (rc)
        strbuf_truncate(out, start);
    return rc ? -1 : 0;
}

json_t *yamltree_parse_or_report(const char *text, size_t len, struct docpos *pos,
                                 struct findings *fs)
{
    struct doc_error err;
    json_t *root = yamltree_parse(text, len, pos, &err);
    if (root == NULL)
        findings_add_pos(fs, SEVERITY_ERROR, err.path, err.line > 0 ? err.line : 1,
                         err.col > 0 ? err.col : 1, "%s", err.message);
    return root;
}
