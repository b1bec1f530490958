/*
 * enumnames: see enumnames.h. A linear search: the tables are a few names.
 */
#include "api/enumnames.h"

#include <string.h>

const char *enum_name(const struct enum_names *e, int value)
{
    if (value < 0 || (size_t)value >= e->count)
        return "?";
    return e->names[value];
}

const char *enum_name_or(const struct enum_names *e, int value, const char *other)
{
    return other ? other : enum_name(e, value);
}

int enum_value(const struct enum_names *e, const char *name)
{
    for (size_t i = 0; i < e->count; i++)
        if (strcmp(e->names[i], name) == 0)
            return (int)i;
    return -1;
}
