/*
 * config_priv: the small helpers the parts of trainjobd's catalogue share —
 * config.c (the file format and its checks) and config_catalog.c (roles,
 * look-ups, the per-caller catalog). Included only by engine/config*.c.
 */
#ifndef ENGINE_CONFIG_PRIV_H
#define ENGINE_CONFIG_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

static inline bool str_eq(const char *a, const char *b)
{
    return a != NULL && b != NULL && strcmp(a, b) == 0;
}

static inline bool has_string(char *const *v, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (str_eq(v[i], s))
            return true;
    return false;
}

#endif
