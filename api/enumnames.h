/*
 * enumnames: an enum's API spellings as a table indexed by its value, and
 * the lookups both ways. Its own module so the job model (api/jobspec) and
 * the schema walker (api/schema), which use each other's names, share it
 * without using each other both ways.
 */
#ifndef API_ENUMNAMES_H
#define API_ENUMNAMES_H

#include <stddef.h>

/* One of the names in an enum's table, indexed by the enum value. */
struct enum_names {
    const char *const *names; /* names[value]; the API spelling */
    size_t count;
};

/* The API name of value, or "?" when out of range. */
const char *enum_name(const struct enum_names *e, int value);
/* The name of a kept enum: other (a value this build does not know) when set, else value's. */
const char *enum_name_or(const struct enum_names *e, int value, const char *other);
/* The value whose API name is exactly name, or -1. */
int enum_value(const struct enum_names *e, const char *name);

#endif
