/*
 * theme_color: see theme.h. This file owns the colour arithmetic (xterm's
 * 256-colour palette, nearest-colour mapping down to 16 and 8 colours), the
 * terminal's colour depth (names, detection) and theme_resolve, which brings
 * a theme's style down to the terminal's depth without losing contrast.
 * Called by the tui whenever it sets up colour pairs and by theme.c; moved
 * out of theme.c unchanged.
 */
#include "themes/theme.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "themes/theme_priv.h"

/* xterm's default RGB for the 16 ANSI colours. */
static const uint8_t ansi_rgb[16][3] = {
    {0, 0, 0},     {205, 0, 0},     {0, 205, 0},     {205, 205, 0},   {0, 0, 238}, {205, 0, 205},
    {0, 205, 205}, {229, 229, 229}, {127, 127, 127}, {255, 0, 0},     {0, 255, 0}, {255, 255, 0},
    {92, 92, 255}, {255, 0, 255},   {0, 255, 255},   {255, 255, 255},
};

/* The levels of xterm's 6×6×6 colour cube (entries 16–231). */
static const uint8_t cube_levels[6] = {0x00, 0x5f, 0x87, 0xaf, 0xd7, 0xff};

/* ---- colour arithmetic ---- */

/* Squared distance between two RGB colours. */
static int rgb_dist(int r1, int g1, int b1, int r2, int g2, int b2)
{
    return (r1 - r2) * (r1 - r2) + (g1 - g2) * (g1 - g2) + (b1 - b2) * (b1 - b2);
}

/* The cube level nearest v (0–5); the levels are not evenly spaced. */
static int cube_index(int v)
{
    if (v < 48)
        return 0;
    if (v < 115)
        return 1;
    return (v - 35) / 40;
}

/* xterm's palette: the 16 ANSI colours, the 6×6×6 cube, then 24 greys from 8 to 238. */
void theme_index_rgb(int index, uint8_t *r, uint8_t *g, uint8_t *b)
{
    if (index < 0 || index > 255)
        index = 0;
    if (index < 16) {
        *r = ansi_rgb[index][0];
        *g = ansi_rgb[index][1];
        *b = ansi_rgb[index][2];
    } else if (index < 232) {
        int i = index - 16;
        *r = cube_levels[i / 36];
        *g = cube_levels[(i / 6) % 6];
        *b = cube_levels[i % 6];
    } else {
        uint8_t v = (uint8_t)(8 + 10 * (index - 232));
        *r = *g = *b = v;
    }
}

/*
 * The nearest cube entry (exact per channel: the cube is a grid) or grey,
 * whichever is closer; a tie keeps the cube.
 */
int theme_rgb_to_256(uint8_t r, uint8_t g, uint8_t b)
{
    int qr = cube_index(r), qg = cube_index(g), qb = cube_index(b);
    int cube = 16 + 36 * qr + 6 * qg + qb;
    int cube_d = rgb_dist(r, g, b, cube_levels[qr], cube_levels[qg], cube_levels[qb]);
    int grey = 232, grey_d = -1;
    for (int i = 0; i < 24; i++) {
        int v = 8 + 10 * i;
        int d = rgb_dist(r, g, b, v, v, v);
        if (grey_d < 0 || d < grey_d) {
            grey_d = d;
            grey = 232 + i;
        }
    }
    return grey_d < cube_d ? grey : cube;
}

/* The ANSI grey (black, bright black, white, bright white) nearest to level v. */
static int nearest_ansi_grey(int v)
{
    static const int greys[4] = {0, 8, 7, 15};
    int best = 0;
    for (int i = 1; i < 4; i++) {
        int d = v - ansi_rgb[greys[i]][0], bd = v - ansi_rgb[greys[best]][0];
        if (d * d < bd * bd)
            best = i;
    }
    return greys[best];
}

/*
 * Hue first, then brightness. Plain RGB distance would send a pastel green
 * (#5fd75f) to bright black, since the ANSI colours are all fully saturated;
 * a theme means "green" there. Very dark colours become black and colours
 * with little chroma the nearest grey; the rest take the ANSI colour of their
 * hue sector, bright when light (or at full intensity, as #ff0000 is).
 */
int theme_rgb_to_16(uint8_t r, uint8_t g, uint8_t b)
{
    static const int by_sector[6] = {1, 3, 2, 6, 4, 5}; /* red yellow green cyan blue magenta */
    int max = r > g ? (r > b ? r : b) : (g > b ? g : b);
    int min = r < g ? (r < b ? r : b) : (g < b ? g : b);
    int chroma = max - min, light = (max + min) / 2;
    if (max < 0x50)
        return 0;
    if (chroma < 0x30)
        return nearest_ansi_grey(light);
    int hue; /* degrees, 0–359 */
    if (max == r)
        hue = 60 * (g - b) / chroma;
    else if (max == g)
        hue = 120 + 60 * (b - r) / chroma;
    else
        hue = 240 + 60 * (r - g) / chroma;
    if (hue < 0)
        hue += 360;
    int base = by_sector[((hue + 30) / 60) % 6];
    bool bright = max >= 0xf0 || light >= 0x90;
    return bright ? base + 8 : base;
}

int theme_256_to_16(int index)
{
    if (index >= 0 && index < 16)
        return index;
    uint8_t r, g, b;
    theme_index_rgb(index, &r, &g, &b);
    return theme_rgb_to_16(r, g, b);
}

int theme_16_to_8(int index, bool *bright)
{
    if (index < 0 || index > 15)
        index = 0;
    if (bright)
        *bright = index >= 8;
    return index & 7;
}

/* ---- depth ---- */

static const char *const depth_names[] = {
    [THEME_DEPTH_MONO] = "mono",
    [THEME_DEPTH_8] = "8",
    [THEME_DEPTH_16] = "16",
    [THEME_DEPTH_256] = "256",
    [THEME_DEPTH_TRUECOLOR] = "truecolor",
};

const char *theme_depth_name(enum theme_depth depth)
{
    if ((int)depth < 0 || depth > THEME_DEPTH_TRUECOLOR)
        return NULL;
    return depth_names[depth];
}

int theme_depth_parse(const char *name)
{
    for (int i = 0; i <= THEME_DEPTH_TRUECOLOR; i++)
        if (strcasecmp(name, depth_names[i]) == 0)
            return i;
    if (strcasecmp(name, "24bit") == 0)
        return THEME_DEPTH_TRUECOLOR;
    return -1;
}

/* Trusts curses for what can be shown; COLORTERM only lifts 256 to truecolor. */
enum theme_depth theme_detect_depth(const char *term, const char *colorterm, int curses_colors,
                                    const char *no_color)
{
    /* https://no-color.org: set and not empty means no colour */
    if (no_color && *no_color)
        return THEME_DEPTH_MONO;
    if (!term || !*term || strcmp(term, "dumb") == 0)
        return THEME_DEPTH_MONO;
    if (curses_colors >= (1 << 24))
        return THEME_DEPTH_TRUECOLOR; /* a direct-colour terminfo (xterm-direct) */
    if (curses_colors >= 256 && colorterm &&
        (strcasecmp(colorterm, "truecolor") == 0 || strcasecmp(colorterm, "24bit") == 0))
        return THEME_DEPTH_TRUECOLOR;
    if (curses_colors >= 256)
        return THEME_DEPTH_256;
    if (curses_colors >= 16)
        return THEME_DEPTH_16;
    if (curses_colors >= 8)
        return THEME_DEPTH_8;
    return THEME_DEPTH_MONO;
}

/* ---- resolving for a terminal ---- */

static bool color_eq(struct theme_color a, struct theme_color b)
{
    if (a.kind != b.kind)
        return false;
    if (a.kind == THEME_COLOR_RGB)
        return a.r == b.r && a.g == b.g && a.b == b.b;
    if (a.kind == THEME_COLOR_INDEX)
        return a.index == b.index;
    return true;
}

static struct theme_color index_color(int index)
{
    struct theme_color c = {.kind = THEME_COLOR_INDEX, .index = index};
    return c;
}

static bool low_depth(enum theme_depth depth)
{
    return depth == THEME_DEPTH_8 || depth == THEME_DEPTH_16;
}

/* c as one of the 16 ANSI colours. */
static int to_16(struct theme_color c)
{
    if (c.kind == THEME_COLOR_RGB)
        return theme_rgb_to_16(c.r, c.g, c.b);
    return theme_256_to_16(c.index < 0 || c.index > 255 ? 0 : c.index);
}

/* c for depth, as a background: at 8 colours a bright one just loses its brightness. */
static struct theme_color down_bg(struct theme_color c, enum theme_depth depth)
{
    if (c.kind == THEME_COLOR_DEFAULT || depth == THEME_DEPTH_TRUECOLOR)
        return c;
    if (depth == THEME_DEPTH_256)
        return c.kind == THEME_COLOR_RGB ? index_color(theme_rgb_to_256(c.r, c.g, c.b)) : c;
    int i16 = to_16(c);
    return index_color(depth == THEME_DEPTH_16 ? i16 : theme_16_to_8(i16, NULL));
}

/*
 * The index a background shows as at 8/16 colours; the terminal's own is
 * taken as black, or white under `background light`.
 */
static int bg_index(const struct theme *t, struct theme_color bg, enum theme_depth depth)
{
    if (bg.kind == THEME_COLOR_INDEX)
        return bg.index;
    if (!t->light)
        return 0;
    return depth == THEME_DEPTH_8 ? 7 : 15;
}

/* Whether palette entry index is dark (Rec. 601 luma below half). */
static bool index_is_dark(int index)
{
    uint8_t r, g, b;
    theme_index_rgb(index, &r, &g, &b);
    return 299 * r + 587 * g + 114 * b < 128000;
}

/* The foreground of role r at 16 colours ("default" taken from normal), for needs_bold. */
static int fg_16(const struct theme *t, int r)
{
    struct theme_color c = t->styles[r].fg;
    if (c.kind == THEME_COLOR_DEFAULT)
        c = t->styles[THEME_ROLE_NORMAL].fg;
    return c.kind == THEME_COLOR_DEFAULT ? -1 : to_16(c);
}

/*
 * Whether some role's foreground is the dark colour base at 16 colours, so a
 * bright one needs bold at 8 to stay apart.
 */
static bool needs_bold(const struct theme *t, int base)
{
    for (int r = 0; r < THEME_ROLE_COUNT; r++)
        if (fg_16(t, r) == base)
            return true;
    return false;
}

/*
 * c for depth, as a foreground over bg. At 8 colours a bright colour becomes
 * its dark one, plus bold where another role uses that dark one; bright black
 * (grey) becomes dim white over a dark background, dim black over a light one.
 * *extra gets the attribute that stands in.
 */
static struct theme_color down_fg(const struct theme *t, struct theme_color c,
                                  enum theme_depth depth, struct theme_color bg, unsigned *extra)
{
    *extra = 0;
    if (depth != THEME_DEPTH_8 || c.kind == THEME_COLOR_DEFAULT)
        return down_bg(c, depth);
    int i16 = to_16(c);
    if (i16 == 8) {
        *extra = THEME_ATTR_DIM;
        return index_color(index_is_dark(bg_index(t, bg, depth)) ? 7 : 0);
    }
    if (i16 > 8 && needs_bold(t, i16 - 8))
        *extra = THEME_ATTR_BOLD;
    return index_color(i16 & 7);
}

/* Whether fg would vanish into bg: the same index at 8 or 16 colours. */
static bool collides(const struct theme *t, struct theme_color fg, struct theme_color bg,
                     enum theme_depth depth)
{
    return low_depth(depth) && fg.kind == THEME_COLOR_INDEX && fg.index == bg_index(t, bg, depth);
}

/* Adds the attribute a downgrade stands in with, unless it fights one the style has. */
static unsigned add_extra(unsigned attrs, unsigned extra)
{
    if ((extra == THEME_ATTR_DIM && (attrs & THEME_ATTR_BOLD)) ||
        (extra == THEME_ATTR_BOLD && (attrs & THEME_ATTR_DIM)))
        return attrs;
    return attrs | extra;
}

/* The normal role at depth; a foreground lost in its background becomes black or white. */
static struct theme_style resolve_normal(const struct theme *t, enum theme_depth depth,
                                         unsigned *extra)
{
    struct theme_style s = t->styles[THEME_ROLE_NORMAL];
    struct theme_color bg = down_bg(s.bg, depth);
    struct theme_color fg = down_fg(t, s.fg, depth, bg, extra);
    if (!color_eq(s.fg, s.bg) && collides(t, fg, bg, depth)) {
        bool dark = index_is_dark(bg_index(t, bg, depth));
        fg = index_color(dark ? (depth == THEME_DEPTH_8 ? 7 : 15) : 0);
        *extra = 0;
    }
    s.fg = fg;
    s.bg = bg;
    s.attrs = add_extra(s.attrs, *extra);
    return s;
}

/* See theme.h: normal first, then the role against it. */
struct theme_style theme_resolve(const struct theme *t, enum theme_role role,
                                 enum theme_depth depth)
{
    if ((int)role < 0 || role >= THEME_ROLE_COUNT)
        role = THEME_ROLE_NORMAL;
    struct theme_style s = t->styles[role];
    if (depth == THEME_DEPTH_MONO) {
        struct theme_style m = {.attrs = s.mono_attrs, .mono_attrs = s.mono_attrs};
        return m;
    }
    unsigned normal_extra, extra;
    struct theme_style normal = resolve_normal(t, depth, &normal_extra);
    if (role == THEME_ROLE_NORMAL)
        return normal;

    /* A role's "default" is normal's colour: as written when comparing, as resolved when shown. */
    const struct theme_style *n = &t->styles[THEME_ROLE_NORMAL];
    struct theme_color fg0 = s.fg.kind == THEME_COLOR_DEFAULT ? n->fg : s.fg;
    struct theme_color bg0 = s.bg.kind == THEME_COLOR_DEFAULT ? n->bg : s.bg;
    struct theme_color bg = s.bg.kind == THEME_COLOR_DEFAULT ? normal.bg : down_bg(s.bg, depth);
    struct theme_color fg;
    if (s.fg.kind == THEME_COLOR_DEFAULT && s.bg.kind == THEME_COLOR_DEFAULT) {
        fg = normal.fg;
        extra = normal_extra;
    } else {
        fg = down_fg(t, fg0, depth, bg, &extra);
    }

    if (!color_eq(fg0, bg0) && collides(t, fg, bg, depth)) {
        /* Colour cannot show this role here: show it the way a monochrome terminal would. */
        s.fg = normal.fg;
        s.bg = normal.bg;
        s.attrs |= s.mono_attrs;
        return s;
    }
    /*
     * A colour the scheme set apart from normal's that merged into it here
     * (solarized's two dark blues are both black at 16 colours): the mono
     * attributes mark the role instead.
     */
    if (low_depth(depth) &&
        ((s.bg.kind != THEME_COLOR_DEFAULT && !color_eq(s.bg, n->bg) &&
          bg_index(t, bg, depth) == bg_index(t, normal.bg, depth)) ||
         (s.fg.kind != THEME_COLOR_DEFAULT && !color_eq(s.fg, n->fg) && color_eq(fg, normal.fg))))
        s.attrs |= s.mono_attrs;
    s.fg = fg;
    s.bg = bg;
    s.attrs = add_extra(s.attrs, extra);
    return s;
}
