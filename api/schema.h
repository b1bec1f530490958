/*
 * schema: table-driven mapping between C structs and jansson trees.
 *
 * A struct is described once, as an object_type listing its fields (JSON
 * name, kind, offset, presence flag); decoding, encoding, freeing and the
 * "unknown field; did you mean …?" suggestion all walk that one table. The
 * job model (jobspec_json), the engine's configuration and the catalog are
 * tables over this module, so there is one decoder in the program.
 *
 * Decoding reports every problem as a finding with its field path and goes
 * on, so a file's mistakes are all listed at once; positions are added by the
 * caller from the document's docpos table.
 */
#ifndef API_SCHEMA_H
#define API_SCHEMA_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct enum_names;
struct findings;

enum field_kind {
    F_STRING,
    F_STRING_OR_INT, /* a string, but a bare integer is taken as its digits (exit_codes: 1) */
    F_INT32,
    F_INT64,
    F_BOOL,
    F_ENUM,         /* an int holding an index into names; 0 is "unspecified" (left out) */
    F_ENUM_ALL,     /* the same, but every value is real, 0 too (a pool's DEDICATED) */
    F_OBJECT,       /* a struct embedded at offset */
    F_ARRAY,        /* elements of type at *offset, their size_t count at count_offset */
    F_STRING_ARRAY, /* char ** at offset, size_t count at count_offset */
    F_TREE,         /* a mapping kept as it is: json_t * at offset (metadata) */
    F_STRING_MAP,   /* a mapping of strings, kept as a json_t * (limits, requests) */
    F_EXTRA,        /* not a field: the json_t * mapping that keeps fields the table lacks */
    F_ENUM_KEEP,    /* an F_ENUM whose value the table lacks is kept as text (a newer
                       server's word): char * at count_offset, the enum left 0 */
};

#define SCHEMA_NO_FLAG SIZE_MAX

struct object_type;

struct field {
    const char *name;
    enum field_kind kind;
    size_t offset;
    size_t flag_offset; /* bool has_<name> (scalars) or present (objects), or SCHEMA_NO_FLAG */
    const struct enum_names *names;
    const struct object_type *type;
    size_t count_offset;
};

struct object_type {
    size_t size; /* of one element, for arrays */
    const struct field *fields;
    size_t field_count;
};

/* Table-building shorthands: T is the struct, m the member (and the JSON name). */
#define SCHEMA_OBJ(f)                                                                              \
    {                                                                                              \
        0, f, sizeof f / sizeof f[0]                                                               \
    }
#define SCHEMA_ELEM(T, f)                                                                          \
    {                                                                                              \
        sizeof(T), f, sizeof f / sizeof f[0]                                                       \
    }
#define F_STR(T, m)                                                                                \
    {                                                                                              \
#m, F_STRING, offsetof(T, m), SCHEMA_NO_FLAG, NULL, NULL, 0                                \
    }
#define F_STR_OR_INT(T, m)                                                                         \
    {                                                                                              \
#m, F_STRING_OR_INT, offsetof(T, m), SCHEMA_NO_FLAG, NULL, NULL, 0                         \
    }
#define F_OPT_INT32(T, m)                                                                          \
    {                                                                                              \
#m, F_INT32, offsetof(T, m), offsetof(T, has_##m), NULL, NULL, 0                           \
    }
#define F_INT(T, m)                                                                                \
    {                                                                                              \
#m, F_INT32, offsetof(T, m), SCHEMA_NO_FLAG, NULL, NULL, 0                                 \
    }
#define F_I64(T, m)                                                                                \
    {                                                                                              \
#m, F_INT64, offsetof(T, m), SCHEMA_NO_FLAG, NULL, NULL, 0                                 \
    }
#define F_OPT_BOOL(T, m)                                                                           \
    {                                                                                              \
#m, F_BOOL, offsetof(T, m), offsetof(T, has_##m), NULL, NULL, 0                            \
    }
#define F_FLAG(T, m)                                                                               \
    {                                                                                              \
#m, F_BOOL, offsetof(T, m), SCHEMA_NO_FLAG, NULL, NULL, 0                                  \
    }
#define F_ENUMERATION(T, m, tab)                                                                   \
    {                                                                                              \
#m, F_ENUM, offsetof(T, m), SCHEMA_NO_FLAG, &tab, NULL, 0                                  \
    }
/* An enum whose value 0 is a real choice: always written, listed among the choices. */
#define F_ENUMERATION_ALL(T, m, tab)                                                               \
    {                                                                                              \
#m, F_ENUM_ALL, offsetof(T, m), SCHEMA_NO_FLAG, &tab, NULL, 0                              \
    }
#define F_SECTION(T, m, type)                                                                      \
    {                                                                                              \
#m, F_OBJECT, offsetof(T, m), offsetof(T, m.present), NULL, &type, 0                       \
    }
#define F_LIST(T, m, cnt, type)                                                                    \
    {                                                                                              \
#m, F_ARRAY, offsetof(T, m), SCHEMA_NO_FLAG, NULL, &type, offsetof(T, cnt)                 \
    }
#define F_JSON_TREE(T, m)                                                                          \
    {                                                                                              \
#m, F_TREE, offsetof(T, m), SCHEMA_NO_FLAG, NULL, NULL, 0                                  \
    }
#define F_STR_MAP(T, m)                                                                            \
    {                                                                                              \
#m, F_STRING_MAP, offsetof(T, m), SCHEMA_NO_FLAG, NULL, NULL, 0                            \
    }
/* Where an object keeps the fields its table does not name (T's `struct json_t *extra`). */
#define F_EXTRAS(T)                                                                                \
    {                                                                                              \
        "", F_EXTRA, offsetof(T, extra), SCHEMA_NO_FLAG, NULL, NULL, 0                             \
    }
/* An enum that keeps a value it does not know, as text in T's member `other`. */
#define F_ENUMERATION_KEEP(T, m, tab, other)                                                       \
    {                                                                                              \
#m, F_ENUM_KEEP, offsetof(T, m), SCHEMA_NO_FLAG, &tab, NULL, offsetof(T, other)            \
    }
#define F_STRINGS(T, m, cnt)                                                                       \
    {                                                                                              \
#m, F_STRING_ARRAY, offsetof(T, m), SCHEMA_NO_FLAG, NULL, NULL, offsetof(T, cnt)           \
    }

/*
 * What an unknown field is. An object whose table has F_EXTRAS keeps the
 * fields it does not name (a newer server's, written back as they came);
 * one without drops them (LENIENT) or refuses them.
 */
enum schema_mode {
    SCHEMA_STRICT, /* requests, config: an unknown field is an error naming the nearest known one */
    SCHEMA_LENIENT, /* replies from a server: unknown fields are kept where F_EXTRAS, else skipped
                     */
    SCHEMA_FILE,    /* job files: a near miss of a known field is an error ("did you mean");
                       any other unknown field is kept where F_EXTRAS, with a warning */
};

/*
 * Fills base (zeroed by the caller) from root, which must be a mapping;
 * findings get paths below `path` ("" for the document root). Returns the
 * number of errors found.
 */
int schema_decode(const json_t *root, const struct object_type *type, void *base,
                  enum schema_mode mode, const char *path, struct findings *fs);
/* The rules of a document the table cannot say; adds its findings to fs. */
typedef void schema_check_fn(const void *base, struct findings *fs);
/*
 * A YAML document (a file someone wrote) into base (zeroed by the caller):
 * parsed, decoded strictly, then check(base) when it is a mapping. Every
 * finding gets its line:col, in the order of the text, and is added to fs.
 * expected names the top level in the message when the document is not a
 * mapping ("a mapping of engine settings"); an empty document is no fields
 * when empty_ok. Returns the number of errors (then free base as its type
 * is freed).
 */
size_t schema_decode_yaml(const char *text, size_t len, const struct object_type *type,
                          void *base, schema_check_fn *check, const char *expected,
                          bool empty_ok, struct findings *fs);
/* A new mapping holding every field of base that is present, in table order. */
json_t *schema_encode(const struct object_type *type, const void *base);
/* Frees every string, array and nested allocation base owns (not base itself). */
void schema_free(const struct object_type *type, void *base);
/*
 * Fills dst (zeroed by the caller) with a deep copy of what type describes
 * in src: the same as an encode and a decode, without the JSON between.
 */
void schema_copy(const struct object_type *type, void *dst, const void *src);
/* True when a and b hold the same values for every field of type (flags too). */
bool schema_equal(const struct object_type *type, const void *a, const void *b);
/* Where a field path ("fault_tolerance.rules[2].action") leads in a struct. */
struct schema_ref {
    const struct field *field; /* the last component's field */
    void *base;                /* the struct holding it */
    size_t index;              /* the last component's [i], or SIZE_MAX */
};
/*
 * Follows path, the same paths findings carry, through type's table from
 * base; false when a component names no field or an item that is not there.
 */
bool schema_find(const struct object_type *type, void *base, const char *path,
                 struct schema_ref *ref);
/* The string a ref to an F_STRING field holds (NULL: absent, or not a string field). */
const char *schema_ref_string(const struct schema_ref *ref);
/* Sets it to a copy of value ("" or NULL: absent); false when ref is no string field. */
bool schema_ref_set_string(const struct schema_ref *ref, const char *value);
/* The integer a ref to an integer field holds, into *out; false (out untouched) when absent. */
bool schema_ref_int(const struct schema_ref *ref, int64_t *out);
/* Sets an integer field and its presence flag; false when ref is no integer field. */
bool schema_ref_set_int(const struct schema_ref *ref, bool present, int64_t value);
/* The name an enum field holds ("HIGH", or a value the table lacks as it came); NULL: unset. */
const char *schema_ref_enum_name(const struct schema_ref *ref);
/*
 * Sets an enum field by its name (NULL or "": unset); a name the table
 * lacks is kept as text where the field keeps one (F_ENUM_KEEP), else false.
 */
bool schema_ref_set_enum_name(const struct schema_ref *ref, const char *name);
/*
 * A flag field's value, or an object's presence, into *out; false when
 * absent (no flag set) or not such a field.
 */
bool schema_ref_bool(const struct schema_ref *ref, bool *out);
/* Sets a flag field (present false: absent), or an object's presence (value). */
bool schema_ref_set_bool(const struct schema_ref *ref, bool present, bool value);
/* The number of items of a list field (0: none, or not a list). */
size_t schema_ref_count(const struct schema_ref *ref);
/* Item i of a list of objects (NULL: past its end, or not such a list). */
void *schema_ref_item(const struct schema_ref *ref, size_t i);
/* A new item, zeroed, at the end of a list of objects (NULL: not such a list). */
void *schema_ref_append(const struct schema_ref *ref);
/* Makes a string, integer, flag or enum field absent (an object: not present; a list: empty). */
bool schema_ref_unset(const struct schema_ref *ref);
/*
 * Drops the field path names from the extras of the object holding it (a
 * field the file had that the table lacks); false when it was not there.
 */
bool schema_forget_extra(const struct object_type *type, void *base, const char *path);
/* "a mapping", "a string", … for messages. */
const char *schema_type_name(const json_t *v);

#endif
