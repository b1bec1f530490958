/*
 * theme_priv: struct theme, shared by the two halves of the theme module —
 * theme.c (names, parsing, loading, formatting) and theme_color.c (colour
 * arithmetic, terminal depth, resolving a style for a terminal). Included
 * only by themes/theme*.c; everyone else sees struct theme as opaque.
 */
#ifndef THEMES_THEME_PRIV_H
#define THEMES_THEME_PRIV_H

#include <stdbool.h>

#include "themes/theme.h"

struct theme {
    char *name;
    bool light; /* `background light`: the terminal's default background is light */
    struct theme_style styles[THEME_ROLE_COUNT];
    bool defined[THEME_ROLE_COUNT];
};

#endif
