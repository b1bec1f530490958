/*
 * schema: the one decoder and encoder between C structs and jansson trees;
 * see schema.h. Callers own the tables; this module only walks them.
 */
#include "api/schema.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api/docpos.h"
#include "api/finding.h"
#include "api/enumnames.h"
#include "api/yamltree.h"
#include "util/fuzzy.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

struct decoder {
    enum schema_mode mode;
    struct findings *fs;
    struct strbuf path; /* the field being decoded */
    int errors;
};

static void error(struct decoder *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void error(struct decoder *d, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = xvasprintf(fmt, ap);
    va_end(ap);
    findings_add(d->fs, SEVERITY_ERROR, strbuf_str(&d->path), "%s", msg);
    free(msg);
    d->errors++;
}

const char *schema_type_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "a mapping";
    case JSON_ARRAY:
        return "a list";
    case JSON_STRING:
        return "a string";
    case JSON_INTEGER:
        return "an integer";
    case JSON_REAL:
        return "a number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "a boolean";
    case JSON_NULL:
        return "null";
    }
    return "?";
}

static void *at(void *base, size_t offset)
{
    return (char *)base + offset;
}

static const void *cat_(const void *base, size_t offset)
{
    return (const char *)base + offset;
}

static void set_flag(void *base, const struct field *f)
{
    if (f->flag_offset != SCHEMA_NO_FLAG)
        *(bool *)at(base, f->flag_offset) = true;
}

static void decode_object(struct decoder *d, const json_t *obj, const struct object_type *type,
                          void *base);

/* Enum values are matched exactly; a near miss is suggested. */
static void decode_enum(struct decoder *d, const json_t *v, const struct field *f, int *out)
{
    if (!json_is_string(v)) {
        error(d, "expected one of the names, got %s", schema_type_name(v));
        return;
    }
    const char *s = json_string_value(v);
    int value = enum_value(f->names, s);
    if (value >= 0) {
        *out = value;
        return;
    }
    /* An F_ENUM's 0 is "unspecified", not a choice to offer. */
    size_t first = f->kind == F_ENUM_ALL ? 0 : 1;
    struct strbuf choices = STRBUF_INIT;
    for (size_t i = first; i < f->names->count; i++)
        strbuf_addf(&choices, "%s%s", i > first ? ", " : "", f->names->names[i]);
    const char *near = fuzzy_nearest(s, (const char *const *)f->names->names, f->names->count);
    if (near)
        error(d, "unknown value '%s'; did you mean %s? (one of %s)", s, near, strbuf_str(&choices));
    else
        error(d, "unknown value '%s'; expected one of %s", s, strbuf_str(&choices));
    strbuf_free(&choices);
}

static char *decode_string(struct decoder *d, const json_t *v)
{
    char *s = xstrndup(json_string_value(v), json_string_length(v));
    if (strlen(s) != json_string_length(v))
        error(d, "must not contain NUL characters");
    return s;
}

/* The value whose name is name in any case, or -1. */
static int enum_value_nocase(const struct enum_names *e, const char *name)
{
    for (size_t i = 0; i < e->count; i++)
        if (strcasecmp(e->names[i], name) == 0)
            return (int)i;
    return -1;
}

/*
 * An enum that keeps a value its table lacks (a newer server's word, or one
 * read back from such a job): as text, the enum left 0. Replies keep it
 * silently; a file keeps it with a warning (naming the nearest known value,
 * as the server may not know it either) unless it is a known value in the
 * wrong case; a strict request refuses it.
 */
static void decode_enum_keep(struct decoder *d, const json_t *v, const struct field *f, void *base)
{
    char **other = at(base, f->count_offset);
    int value = json_is_string(v) ? enum_value(f->names, json_string_value(v)) : -1;
    free(*other);
    *other = NULL;
    *(int *)at(base, f->offset) = value >= 0 ? value : 0;
    if (value >= 0)
        return;
    if (!json_is_string(v) || d->mode == SCHEMA_STRICT ||
        (d->mode == SCHEMA_FILE && enum_value_nocase(f->names, json_string_value(v)) >= 0)) {
        decode_enum(d, v, f, at(base, f->offset)); /* a known value in the wrong case: a typo */
        return;
    }
    *other = decode_string(d, v); /* shown and written back as the server said it */
    if (d->mode != SCHEMA_FILE)
        return;
    const char *near = fuzzy_nearest(*other, (const char *const *)f->names->names, f->names->count);
    if (near)
        findings_add(
            d->fs, SEVERITY_WARNING, strbuf_str(&d->path),
            "'%s' is not a value trainjob knows (did you mean %s?); kept and sent as it is", *other,
            near);
    else
        findings_add(d->fs, SEVERITY_WARNING, strbuf_str(&d->path),
                     "'%s' is not a value trainjob knows; kept and sent as it is", *other);
}

static void decode_array(struct decoder *d, const json_t *v, const struct field *f, void *base)
{
    if (!json_is_array(v)) {
        error(d, "expected a list, got %s", schema_type_name(v));
        return;
    }
    size_t n = json_array_size(v);
    size_t elem = f->kind == F_STRING_ARRAY ? sizeof(char *) : f->type->size;
    void **items = at(base, f->offset);
    size_t *count = at(base, f->count_offset);
    size_t path_len = d->path.len;
    *items = xcalloc(n ? n : 1, elem);
    *count = n;
    for (size_t i = 0; i < n; i++) {
        const json_t *item = json_array_get(v, i);
        strbuf_addf(&d->path, "[%zu]", i);
        char *slot = (char *)*items + i * elem;
        if (f->kind == F_STRING_ARRAY && json_is_string(item))
            *(char **)slot = decode_string(d, item);
        else if (f->kind == F_STRING_ARRAY)
            error(d, "expected a string, got %s", schema_type_name(item));
        else if (json_is_object(item))
            decode_object(d, item, f->type, slot);
        else
            error(d, "expected a mapping, got %s", schema_type_name(item));
        strbuf_truncate(&d->path, path_len);
    }
}

static void decode_integer(struct decoder *d, const json_t *v, const struct field *f, void *base)
{
    if (json_is_integer(v)) {
        json_int_t n = json_integer_value(v);
        if (f->kind == F_INT32 && (n < INT32_MIN || n > INT32_MAX)) {
            error(d, "%lld is out of range", (long long)n);
            return;
        }
        if (f->kind == F_INT32)
            *(int32_t *)at(base, f->offset) = (int32_t)n;
        else
            *(int64_t *)at(base, f->offset) = n;
        set_flag(base, f);
    } else if (json_is_real(v)) {
        error(d, "expected a whole number, got %g", json_real_value(v));
    } else {
        error(d, "expected an integer, got %s", schema_type_name(v));
    }
}

/* A mapping kept whole (F_STRING_MAP: its values must be strings). */
static void decode_tree(struct decoder *d, const json_t *v, const struct field *f, void *base)
{
    if (!json_is_object(v)) {
        error(d, "expected a mapping, got %s", schema_type_name(v));
        return;
    }
    if (f->kind == F_STRING_MAP) {
        const char *key;
        json_t *value;
        json_object_foreach((json_t *)v, key, value)
        {
            if (!json_is_string(value)) {
                error(d, "%s: expected a string, got %s", key, schema_type_name(value));
                return;
            }
        }
    }
    json_t **slot = at(base, f->offset);
    json_decref(*slot);
    *slot = json_deep_copy(v);
}

/* Decodes one field's value; null leaves the field absent. */
static void decode_field(struct decoder *d, const json_t *v, const struct field *f, void *base)
{
    if (json_is_null(v))
        return;
    switch (f->kind) {
    case F_STRING:
    case F_STRING_OR_INT:
        if (json_is_string(v)) {
            *(char **)at(base, f->offset) = decode_string(d, v);
        } else if (f->kind == F_STRING_OR_INT && json_is_integer(v)) {
            *(char **)at(base, f->offset) = xasprintf("%lld", (long long)json_integer_value(v));
        } else {
            error(d, "expected a string, got %s", schema_type_name(v));
        }
        break;
    case F_INT32:
    case F_INT64:
        decode_integer(d, v, f, base);
        break;
    case F_BOOL:
        if (json_is_boolean(v)) {
            *(bool *)at(base, f->offset) = json_is_true(v);
            set_flag(base, f);
        } else if (json_is_string(v)) {
            error(d, "expected true or false, got the string '%s'", json_string_value(v));
        } else {
            error(d, "expected true or false, got %s", schema_type_name(v));
        }
        break;
    case F_ENUM:
    case F_ENUM_ALL:
        decode_enum(d, v, f, at(base, f->offset));
        break;
    case F_ENUM_KEEP:
        decode_enum_keep(d, v, f, base);
        break;
    case F_OBJECT:
        if (json_is_object(v)) {
            set_flag(base, f);
            decode_object(d, v, f->type, at(base, f->offset));
        } else {
            error(d, "expected a mapping, got %s", schema_type_name(v));
        }
        break;
    case F_ARRAY:
    case F_STRING_ARRAY:
        decode_array(d, v, f, base);
        break;
    case F_TREE:
    case F_STRING_MAP:
        decode_tree(d, v, f, base);
        break;
    case F_EXTRA:
        break;
    }
}

static const struct field *find_field(const struct object_type *type, const char *name)
{
    for (size_t i = 0; i < type->field_count; i++)
        if (type->fields[i].kind != F_EXTRA && strcmp(type->fields[i].name, name) == 0)
            return &type->fields[i];
    return NULL;
}

/* The F_EXTRAS slot of type, or NULL when it has none. */
static const struct field *extras_field(const struct object_type *type)
{
    for (size_t i = 0; i < type->field_count; i++)
        if (type->fields[i].kind == F_EXTRA)
            return &type->fields[i];
    return NULL;
}

/* Keeps key: value among base's extras. */
static void keep_extra(const struct field *x, void *base, const char *key, const json_t *value)
{
    json_t **slot = at(base, x->offset);
    if (*slot == NULL)
        *slot = json_object();
    json_object_set_new(*slot, key, json_deep_copy(value));
}

/*
 * A field the table does not name: refused, or (SCHEMA_FILE, in an object
 * that keeps extras, and not a near miss of a known field) kept with a warning.
 */
static void unknown_field(struct decoder *d, const struct object_type *type, void *base,
                          const char *key, const json_t *value)
{
    const char *names[64];
    size_t n = 0;
    for (size_t i = 0; i < type->field_count && n < 64; i++)
        if (type->fields[i].kind != F_EXTRA)
            names[n++] = type->fields[i].name;
    const char *near = fuzzy_nearest(key, names, n);
    const char *path = strbuf_str(&d->path);
    const struct field *x = extras_field(type);
    if (d->mode == SCHEMA_FILE && near == NULL && x != NULL) {
        keep_extra(x, base, key, value);
        findings_add_at(d->fs, SEVERITY_WARNING, path, FINDING_AT_KEY,
                        "not a field trainjob knows; kept and sent as it is");
        return;
    }
    /* A near miss in a file is an error, but what the file says is kept: a form that
     * opens it and saves it again writes it back for its author to correct. */
    if (d->mode == SCHEMA_FILE && x != NULL)
        keep_extra(x, base, key, value);
    if (near)
        findings_add_at(d->fs, SEVERITY_ERROR, path, FINDING_AT_KEY,
                        "unknown field; did you mean %s?", near);
    else
        findings_add_at(d->fs, SEVERITY_ERROR, path, FINDING_AT_KEY, "unknown field");
    d->errors++;
}

static void decode_object(struct decoder *d, const json_t *obj, const struct object_type *type,
                          void *base)
{
    const char *key;
    json_t *value;
    size_t path_len = d->path.len;

    json_object_foreach((json_t *)obj, key, value)
    {
        if (path_len > 0)
            strbuf_addc(&d->path, '.');
        strbuf_adds(&d->path, key);
        const struct field *f = find_field(type, key);
        const struct field *x = f ? NULL : extras_field(type);
        if (f != NULL)
            decode_field(d, value, f, base);
        else if (d->mode == SCHEMA_LENIENT && x != NULL)
            keep_extra(x, base, key, value); /* a newer server's field: written back as it came */
        else if (d->mode != SCHEMA_LENIENT)
            unknown_field(d, type, base, key, value);
        strbuf_truncate(&d->path, path_len);
    }
}

int schema_decode(const json_t *root, const struct object_type *type, void *base,
                  enum schema_mode mode, const char *path, struct findings *fs)
{
    struct decoder d = {mode, fs, STRBUF_INIT, 0};
    strbuf_adds(&d.path, path);
    if (json_is_object(root))
        decode_object(&d, root, type, base);
    else
        error(&d, "expected a mapping, got %s", root ? schema_type_name(root) : "nothing");
    strbuf_free(&d.path);
    return d.errors;
}

static void encode_field(json_t *obj, const struct field *f, const void *base)
{
    const void *p = cat_(base, f->offset);
    if (f->flag_offset != SCHEMA_NO_FLAG && !*(const bool *)cat_(base, f->flag_offset))
        return;
    switch (f->kind) {
    case F_STRING:
    case F_STRING_OR_INT:
        if (*(char *const *)p)
            json_object_set_new(obj, f->name, json_string(*(char *const *)p));
        break;
    case F_INT32:
        json_object_set_new(obj, f->name, json_integer(*(const int32_t *)p));
        break;
    case F_INT64:
        json_object_set_new(obj, f->name, json_integer(*(const int64_t *)p));
        break;
    case F_BOOL:
        json_object_set_new(obj, f->name, json_boolean(*(const bool *)p));
        break;
    case F_ENUM: {
        /* Value 0 is each enum's "unspecified": written as absent. Enums
         * whose 0 is meaningful have a flag. */
        int v = *(const int *)p;
        if (v != 0 || f->flag_offset != SCHEMA_NO_FLAG)
            json_object_set_new(obj, f->name, json_string(enum_name(f->names, v)));
        break;
    }
    case F_ENUM_ALL:
        json_object_set_new(obj, f->name, json_string(enum_name(f->names, *(const int *)p)));
        break;
    case F_ENUM_KEEP: {
        const char *other = *(char *const *)cat_(base, f->count_offset);
        int v = *(const int *)p;
        if (other)
            json_object_set_new(obj, f->name, json_string(other));
        else if (v != 0)
            json_object_set_new(obj, f->name, json_string(enum_name(f->names, v)));
        break;
    }
    case F_OBJECT: {
        json_t *sub = schema_encode(f->type, p);
        /* Objects without a presence flag are written only when non-empty. */
        if (f->flag_offset != SCHEMA_NO_FLAG || json_object_size(sub) > 0)
            json_object_set_new(obj, f->name, sub);
        else
            json_decref(sub);
        break;
    }
    case F_ARRAY:
    case F_STRING_ARRAY: {
        size_t n = *(const size_t *)cat_(base, f->count_offset);
        const char *items = *(char *const *)p;
        if (n == 0)
            break;
        json_t *arr = json_array();
        for (size_t i = 0; i < n; i++) {
            if (f->kind == F_STRING_ARRAY)
                json_array_append_new(arr, json_string(((char *const *)items)[i]));
            else
                json_array_append_new(arr, schema_encode(f->type, items + i * f->type->size));
        }
        json_object_set_new(obj, f->name, arr);
        break;
    }
    case F_TREE:
    case F_STRING_MAP:
        if (*(json_t *const *)p)
            json_object_set_new(obj, f->name, json_deep_copy(*(json_t *const *)p));
        break;
    case F_EXTRA:
        break; /* after every named field: schema_encode */
    }
}

json_t *schema_encode(const struct object_type *type, const void *base)
{
    json_t *obj = json_object();
    for (size_t i = 0; i < type->field_count; i++)
        encode_field(obj, &type->fields[i], base);
    const struct field *x = extras_field(type);
    json_t *extra = x ? *(json_t *const *)cat_(base, x->offset) : NULL;
    const char *key;
    json_t *value;
    json_object_foreach(extra, key, value)
    {
        if (json_object_get(obj, key) == NULL) /* a named field wins */
            json_object_set_new(obj, key, json_deep_copy(value));
    }
    return obj;
}

void schema_free(const struct object_type *type, void *base)
{
    for (size_t i = 0; i < type->field_count; i++) {
        const struct field *f = &type->fields[i];
        void *p = at(base, f->offset);
        switch (f->kind) {
        case F_STRING:
        case F_STRING_OR_INT:
            free(*(char **)p);
            *(char **)p = NULL;
            break;
        case F_OBJECT:
            schema_free(f->type, p);
            break;
        case F_ARRAY:
        case F_STRING_ARRAY: {
            size_t *count = at(base, f->count_offset);
            char *items = *(char **)p;
            for (size_t k = 0; items && k < *count; k++) {
                if (f->kind == F_STRING_ARRAY)
                    free(((char **)items)[k]);
                else
                    schema_free(f->type, items + k * f->type->size);
            }
            free(items);
            *(char **)p = NULL;
            *count = 0;
            break;
        }
        case F_TREE:
        case F_STRING_MAP:
        case F_EXTRA:
            json_decref(*(json_t **)p);
            *(json_t **)p = NULL;
            break;
        case F_ENUM_KEEP:
            free(*(char **)at(base, f->count_offset));
            *(char **)at(base, f->count_offset) = NULL;
            break;
        default:
            break;
        }
    }
}

static char *dup_string(const char *s)
{
    return s ? xstrdup(s) : NULL;
}

void schema_copy(const struct object_type *type, void *dst, const void *src)
{
    for (size_t i = 0; i < type->field_count; i++) {
        const struct field *f = &type->fields[i];
        void *d = at(dst, f->offset);
        const void *s = cat_(src, f->offset);
        if (f->flag_offset != SCHEMA_NO_FLAG)
            *(bool *)at(dst, f->flag_offset) = *(const bool *)cat_(src, f->flag_offset);
        switch (f->kind) {
        case F_STRING:
        case F_STRING_OR_INT:
            *(char **)d = dup_string(*(char *const *)s);
            break;
        case F_INT32:
            *(int32_t *)d = *(const int32_t *)s;
            break;
        case F_INT64:
            *(int64_t *)d = *(const int64_t *)s;
            break;
        case F_BOOL:
            *(bool *)d = *(const bool *)s;
            break;
        case F_ENUM:
        case F_ENUM_ALL:
            *(int *)d = *(const int *)s;
            break;
        case F_ENUM_KEEP:
            *(int *)d = *(const int *)s;
            *(char **)at(dst, f->count_offset) =
                dup_string(*(char *const *)cat_(src, f->count_offset));
            break;
        case F_OBJECT:
            schema_copy(f->type, d, s);
            break;
        case F_ARRAY:
        case F_STRING_ARRAY: {
            size_t n = *(const size_t *)cat_(src, f->count_offset);
            size_t size = f->kind == F_ARRAY ? f->type->size : sizeof(char *);
            const char *from = *(char *const *)s;
            char *to = n ? xcalloc(n, size) : NULL;
            for (size_t k = 0; k < n; k++) {
                if (f->kind == F_STRING_ARRAY)
                    ((char **)to)[k] = dup_string(((char *const *)from)[k]);
                else
                    schema_copy(f->type, to + k * size, from + k * size);
            }
            *(char **)d = to;
            *(size_t *)at(dst, f->count_offset) = n;
            break;
        }
        case F_TREE:
        case F_STRING_MAP:
        case F_EXTRA:
            *(json_t **)d = *(json_t *const *)s ? json_deep_copy(*(json_t *const *)s) : NULL;
            break;
        }
    }
}

/* Two sets of kept fields are the same when equal, none being the empty set. */
static bool same_tree(const json_t *a, const json_t *b)
{
    if (a == NULL || b == NULL)
        return json_object_size(a ? a : b) == 0 && (a == NULL || json_is_object(a)) &&
               (b == NULL || json_is_object(b));
    return json_equal((json_t *)a, (json_t *)b);
}

static bool same_string(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

bool schema_equal(const struct object_type *type, const void *a, const void *b)
{
    for (size_t i = 0; i < type->field_count; i++) {
        const struct field *f = &type->fields[i];
        const void *x = cat_(a, f->offset), *y = cat_(b, f->offset);
        if (f->flag_offset != SCHEMA_NO_FLAG &&
            *(const bool *)cat_(a, f->flag_offset) != *(const bool *)cat_(b, f->flag_offset))
            return false;
        switch (f->kind) {
        case F_STRING:
        case F_STRING_OR_INT:
            if (!same_string(*(char *const *)x, *(char *const *)y))
                return false;
            break;
        case F_INT32:
            if (*(const int32_t *)x != *(const int32_t *)y)
                return false;
            break;
        case F_INT64:
            if (*(const int64_t *)x != *(const int64_t *)y)
                return false;
            break;
        case F_BOOL:
            if (*(const bool *)x != *(const bool *)y)
                return false;
            break;
        case F_ENUM:
        case F_ENUM_ALL:
            if (*(const int *)x != *(const int *)y)
                return false;
            break;
        case F_ENUM_KEEP:
            if (*(const int *)x != *(const int *)y ||
                !same_string(*(char *const *)cat_(a, f->count_offset),
                             *(char *const *)cat_(b, f->count_offset)))
                return false;
            break;
        case F_OBJECT:
            if (!schema_equal(f->type, x, y))
                return false;
            break;
        case F_ARRAY:
        case F_STRING_ARRAY: {
            size_t n = *(const size_t *)cat_(a, f->count_offset);
            if (n != *(const size_t *)cat_(b, f->count_offset))
                return false;
            size_t size = f->kind == F_ARRAY ? f->type->size : sizeof(char *);
            const char *p = *(char *const *)x, *q = *(char *const *)y;
            for (size_t k = 0; k < n; k++) {
                bool same = f->kind == F_STRING_ARRAY
                                ? same_string(((char *const *)p)[k], ((char *const *)q)[k])
                                : schema_equal(f->type, p + k * size, q + k * size);
                if (!same)
                    return false;
            }
            break;
        }
        case F_TREE:
        case F_STRING_MAP:
            if (!json_equal(*(json_t *const *)x, *(json_t *const *)y) &&
                (*(json_t *const *)x || *(json_t *const *)y))
                return false; /* absent and {} differ, as for every field */
            break;
        case F_EXTRA:
            if (!same_tree(*(json_t *const *)x, *(json_t *const *)y))
                return false;
            break;
        }
    }
    return true;
}

/* The field named by one path component (name, or name[i]) of type, in base. */
static bool find_step(const struct object_type *type, void *base, const char *name, size_t len,
                      struct schema_ref *ref)
{
    const char *bracket = memchr(name, '[', len);
    size_t key_len = bracket ? (size_t)(bracket - name) : len;
    for (size_t i = 0; i < type->field_count; i++) {
        const struct field *f = &type->fields[i];
        if (f->kind == F_EXTRA || strlen(f->name) != key_len || memcmp(f->name, name, key_len))
            continue;
        ref->field = f;
        ref->base = base;
        ref->index = SIZE_MAX;
        if (bracket) {
            char *end;
            unsigned long long n = strtoull(bracket + 1, &end, 10);
            if (f->kind != F_ARRAY || end == bracket + 1 || *end != ']' ||
                (size_t)(end + 1 - name) != len)
                return false;
            ref->index = (size_t)n;
        }
        return true;
    }
    return false;
}

bool schema_find(const struct object_type *type, void *base, const char *path,
                 struct schema_ref *ref)
{
    const char *p = path;
    for (;;) {
        size_t len = strcspn(p, ".");
        if (len == 0 || !find_step(type, base, p, len, ref))
            return false;
        if (p[len] == '\0')
            return true;
        const struct field *f = ref->field;
        if (f->kind == F_OBJECT) {
            base = at(base, f->offset);
        } else if (f->kind == F_ARRAY && ref->index != SIZE_MAX) {
            size_t count = *(const size_t *)at(base, f->count_offset);
            if (ref->index >= count)
                return false;
            base = *(char **)at(base, f->offset) + ref->index * f->type->size;
        } else {
            return false;
        }
        type = f->type;
        p += len + 1;
    }
}

bool schema_forget_extra(const struct object_type *type, void *base, const char *path)
{
    const char *dot = strrchr(path, '.');
    const char *key = dot ? dot + 1 : path;
    if (dot) {
        char *parent = xstrndup(path, (size_t)(dot - path));
        struct schema_ref ref;
        bool found = schema_find(type, base, parent, &ref);
        free(parent);
        if (!found)
            return false;
        const struct field *f = ref.field;
        if (f->kind == F_OBJECT)
            base = at(ref.base, f->offset);
        else if (f->kind == F_ARRAY && ref.index != SIZE_MAX &&
                 ref.index < *(const size_t *)at(ref.base, f->count_offset))
            base = *(char **)at(ref.base, f->offset) + ref.index * f->type->size;
        else
            return false;
        type = f->type;
    }
    const struct field *x = extras_field(type);
    json_t **slot = x ? at(base, x->offset) : NULL;
    if (!slot || !*slot || json_object_del(*slot, key) != 0)
        return false;
    if (json_object_size(*slot) == 0) {
        json_decref(*slot);
        *slot = NULL;
    }
    return true;
}

const char *schema_ref_string(const struct schema_ref *ref)
{
    const struct field *f = ref->field;
    if ((f->kind != F_STRING && f->kind != F_STRING_OR_INT) || ref->index != SIZE_MAX)
        return NULL;
    return *(char *const *)cat_(ref->base, f->offset);
}

bool schema_ref_set_string(const struct schema_ref *ref, const char *value)
{
    const struct field *f = ref->field;
    if ((f->kind != F_STRING && f->kind != F_STRING_OR_INT) || ref->index != SIZE_MAX)
        return false;
    char **slot = at(ref->base, f->offset);
    free(*slot);
    *slot = value && *value ? xstrdup(value) : NULL;
    return true;
}

bool schema_ref_int(const struct schema_ref *ref, int64_t *out)
{
    const struct field *f = ref->field;
    if ((f->kind != F_INT32 && f->kind != F_INT64) || ref->index != SIZE_MAX ||
        (f->flag_offset != SCHEMA_NO_FLAG && !*(const bool *)cat_(ref->base, f->flag_offset)))
        return false;
    *out = f->kind == F_INT32 ? *(const int32_t *)cat_(ref->base, f->offset)
                              : *(const int64_t *)cat_(ref->base, f->offset);
    return true;
}

bool schema_ref_set_int(const struct schema_ref *ref, bool present, int64_t value)
{
    const struct field *f = ref->field;
    if ((f->kind != F_INT32 && f->kind != F_INT64) || ref->index != SIZE_MAX)
        return false;
    if (f->kind == F_INT32)
        *(int32_t *)at(ref->base, f->offset) = present ? (int32_t)value : 0;
    else
        *(int64_t *)at(ref->base, f->offset) = present ? value : 0;
    if (f->flag_offset != SCHEMA_NO_FLAG)
        *(bool *)at(ref->base, f->flag_offset) = present;
    return true;
}

static bool is_enum(const struct field *f)
{
    return f->kind == F_ENUM || f->kind == F_ENUM_ALL || f->kind == F_ENUM_KEEP;
}

const char *schema_ref_enum_name(const struct schema_ref *ref)
{
    const struct field *f = ref->field;
    if (!is_enum(f) || ref->index != SIZE_MAX)
        return NULL;
    const char *other =
        f->kind == F_ENUM_KEEP ? *(char *const *)cat_(ref->base, f->count_offset) : NULL;
    int v = *(const int *)cat_(ref->base, f->offset);
    return other ? other : v != 0 || f->kind == F_ENUM_ALL ? enum_name(f->names, v) : NULL;
}

bool schema_ref_set_enum_name(const struct schema_ref *ref, const char *name)
{
    const struct field *f = ref->field;
    if (!is_enum(f) || ref->index != SIZE_MAX)
        return false;
    int v = name && *name ? enum_value(f->names, name) : 0;
    if (v < 0 && f->kind != F_ENUM_KEEP)
        return false;
    *(int *)at(ref->base, f->offset) = v < 0 ? 0 : v;
    if (f->kind == F_ENUM_KEEP) { /* a name the table lacks is kept as text */
        char **other = at(ref->base, f->count_offset);
        free(*other);
        *other = v < 0 ? xstrdup(name) : NULL;
    }
    return true;
}

bool schema_ref_bool(const struct schema_ref *ref, bool *out)
{
    const struct field *f = ref->field;
    bool flag = f->flag_offset != SCHEMA_NO_FLAG;
    if ((f->kind != F_BOOL && (f->kind != F_OBJECT || !flag)) || ref->index != SIZE_MAX ||
        (flag && !*(const bool *)cat_(ref->base, f->flag_offset)))
        return false;
    *out = f->kind == F_OBJECT || *(const bool *)cat_(ref->base, f->offset);
    return true;
}

bool schema_ref_set_bool(const struct schema_ref *ref, bool present, bool value)
{
    const struct field *f = ref->field;
    bool flag = f->flag_offset != SCHEMA_NO_FLAG;
    if ((f->kind != F_BOOL && (f->kind != F_OBJECT || !flag)) || ref->index != SIZE_MAX)
        return false;
    if (f->kind == F_BOOL)
        *(bool *)at(ref->base, f->offset) = present && value;
    if (flag)
        *(bool *)at(ref->base, f->flag_offset) = present && (f->kind == F_BOOL || value);
    return true;
}

size_t schema_ref_count(const struct schema_ref *ref)
{
    const struct field *f = ref->field;
    if ((f->kind != F_ARRAY && f->kind != F_STRING_ARRAY) || ref->index != SIZE_MAX)
        return 0;
    return *(const size_t *)cat_(ref->base, f->count_offset);
}

void *schema_ref_item(const struct schema_ref *ref, size_t i)
{
    const struct field *f = ref->field;
    if (f->kind != F_ARRAY || i >= schema_ref_count(ref))
        return NULL;
    return *(char **)at(ref->base, f->offset) + i * f->type->size;
}

void *schema_ref_append(const struct schema_ref *ref)
{
    const struct field *f = ref->field;
    if (f->kind != F_ARRAY || ref->index != SIZE_MAX)
        return NULL;
    size_t *count = at(ref->base, f->count_offset);
    char **items = at(ref->base, f->offset);
    *items = xreallocarray(*items, *count + 1, f->type->size);
    memset(*items + *count * f->type->size, 0, f->type->size);
    return *items + (*count)++ * f->type->size;
}

bool schema_ref_unset(const struct schema_ref *ref)
{
    if ((ref->field->kind == F_ARRAY || ref->field->kind == F_STRING_ARRAY) &&
        ref->index == SIZE_MAX) {
        const struct object_type one = {0, ref->field, 1};
        schema_free(&one, ref->base);
        return true;
    }
    return schema_ref_set_string(ref, NULL) || schema_ref_set_int(ref, false, 0) ||
           schema_ref_set_bool(ref, false, false) || schema_ref_set_enum_name(ref, NULL);
}

size_t schema_decode_yaml(const char *text, size_t len, const struct object_type *type,
                          void *base, schema_check_fn *check, const char *expected,
                          bool empty_ok, struct findings *fs)
{
    struct docpos pos = DOCPOS_INIT;
    struct findings found = FINDINGS_INIT;
    json_t *root = yamltree_parse_or_report(text, len, &pos, &found);
    if (json_is_object(root)) {
        schema_decode(root, type, base, SCHEMA_STRICT, "", &found);
        check(base, &found);
    } else if (root != NULL && !(empty_ok && json_is_null(root))) {
        findings_add(&found, SEVERITY_ERROR, "", "expected %s, got %s", expected,
                     schema_type_name(root));
    }
    json_decref(root);
    docpos_locate(&pos, &found);
    docpos_free(&pos);
    size_t errors = findings_count(&found, SEVERITY_ERROR);
    findings_sort(&found);
    findings_move(fs, &found);
    return errors;
}
