/*
 * theme: semantic roles × colour schemes (STYLE.md habit 11, htop's
 * ColorElements, dte's colour files).
 *
 * Code never names a colour: it asks for a role (title, field_error,
 * state_running, …) and gets a style. A scheme maps every role to a
 * foreground and background colour (#rrggbb, a 0–255 palette index, one of
 * the 16 ANSI names, or the terminal default), colour attributes, and the
 * attributes the role shows on a terminal without colour. Schemes are text
 * files (themes/NAME.theme), the shipped ones in the same format a user
 * writes; the default scheme is also compiled in so trainjob works with no
 * files installed.
 *
 * theme_resolve expresses a style for what the terminal can show
 * (truecolor → 256 → 16 → 8 → mono). This module knows no curses: the
 * attributes are our own bits, and widgets/ and tui/ turn them into A_* and
 * colour pairs.
 */
#ifndef THEMES_THEME_H
#define THEMES_THEME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct strbuf;

/* What a piece of the screen is; the same names are the file format's. */
enum theme_role {
    THEME_ROLE_NORMAL,         /* the background everything sits on */
    THEME_ROLE_DIM,            /* secondary text: hints, timestamps, units */
    THEME_ROLE_TITLE,          /* screen and section titles */
    THEME_ROLE_HEADER,         /* table header row */
    THEME_ROLE_SELECTED,       /* the cursor row */
    THEME_ROLE_MARKED,         /* rows marked for a bulk action */
    THEME_ROLE_BORDER,         /* frames and separators */
    THEME_ROLE_KEYBAR_KEY,     /* "F2" in the key bar */
    THEME_ROLE_KEYBAR_LABEL,   /* "Save" in the key bar */
    THEME_ROLE_HELP,           /* help screen text */
    THEME_ROLE_DIALOG,         /* pop-up dialogs and menus */
    THEME_ROLE_MESSAGE,        /* the one-line message area */
    THEME_ROLE_MESSAGE_ERROR,  /* an error in the message area */
    THEME_ROLE_FIELD_LABEL,    /* form field names */
    THEME_ROLE_FIELD_VALUE,    /* form field values */
    THEME_ROLE_FIELD_FOCUS,    /* the field being edited */
    THEME_ROLE_FIELD_DISABLED, /* a field that does not apply */
    THEME_ROLE_FIELD_ERROR,    /* a field's error message or marker */
    THEME_ROLE_FIELD_WARNING,
    THEME_ROLE_FIELD_OK,
    THEME_ROLE_SECTION_OK,    /* wizard section list: complete */
    THEME_ROLE_SECTION_ERROR, /* … has errors */
    THEME_ROLE_SECTION_WARNING,
    THEME_ROLE_STATE_QUEUEING, /* job states; the tui maps WAITING/INIT here, */
    THEME_ROLE_STATE_STARTING, /* CREATING here, */
    THEME_ROLE_STATE_RUNNING,
    THEME_ROLE_STATE_RESTARTING, /* RECOVERING here, */
    THEME_ROLE_STATE_SUSPENDING,
    THEME_ROLE_STATE_SUSPENDED,
    THEME_ROLE_STATE_SUCCEEDED,
    THEME_ROLE_STATE_FAILED,
    THEME_ROLE_STATE_DELETING, /* and DELETED here */
    THEME_ROLE_LOG_ERROR,      /* error lines in logs */
    THEME_ROLE_LOG_WARNING,
    THEME_ROLE_LOG_MATCH,           /* search hits */
    THEME_ROLE_BANNER_DISCONNECTED, /* the connection is lost or the data stale */
    THEME_ROLE_SIMULATED,           /* simulated devices: not real hardware */
    THEME_ROLE_COUNT
};

#define THEME_ROLE_FIRST_STATE THEME_ROLE_STATE_QUEUEING
#define THEME_ROLE_LAST_STATE THEME_ROLE_STATE_DELETING

/* Attribute bits; the tui maps them to A_BOLD, A_DIM, … */
enum {
    THEME_ATTR_BOLD = 1u << 0,
    THEME_ATTR_DIM = 1u << 1,
    THEME_ATTR_UNDERLINE = 1u << 2,
    THEME_ATTR_REVERSE = 1u << 3,
    THEME_ATTR_ITALIC = 1u << 4,
};

enum theme_color_kind {
    THEME_COLOR_DEFAULT, /* the terminal's own (or, for a role, normal's) */
    THEME_COLOR_RGB,
    THEME_COLOR_INDEX, /* a palette index 0–255; 0–15 are the ANSI colours */
};

struct theme_color {
    enum theme_color_kind kind;
    uint8_t r, g, b; /* THEME_COLOR_RGB */
    int index;       /* THEME_COLOR_INDEX */
};

struct theme_style {
    struct theme_color fg, bg;
    unsigned attrs;      /* THEME_ATTR_* shown with colour */
    unsigned mono_attrs; /* THEME_ATTR_* shown without colour */
};

/* What a terminal can show, least first. */
enum theme_depth {
    THEME_DEPTH_MONO,
    THEME_DEPTH_8,
    THEME_DEPTH_16,
    THEME_DEPTH_256,
    THEME_DEPTH_TRUECOLOR,
};

struct theme; /* opaque: a name and one style per role */

/* "state_running" for THEME_ROLE_STATE_RUNNING; NULL out of range. */
const char *theme_role_name(enum theme_role role);
/* The role named name (exactly), or -1. */
int theme_role_from_name(const char *name);
bool theme_role_is_state(enum theme_role role);

/*
 * A state's icon, so states read without colour: ASCII (">", "x", "+", …) or
 * one-cell UTF-8 ("▸", "✗", "✓", …; no East Asian ambiguous-width glyphs).
 * NULL for a role that is not a state. Pairwise distinct in each set.
 */
const char *theme_state_icon(enum theme_role role, bool utf8);

/* The compiled-in default scheme (the same as themes/default.theme). */
struct theme *theme_builtin_default(void);

/*
 * Loads a scheme. name_or_path holding a '/' or ending in ".theme" is a
 * file; otherwise it is a name looked up as DIR/NAME.theme in search_dirs
 * (NULL-terminated, first match wins; NULL for none). "default" and its alias
 * "dark" fall back to the built-in scheme when no file has them. Returns 0,
 * or -1 with every problem in err, one "FILE:LINE: message" a line.
 */
int theme_load(const char *name_or_path, const char *const *search_dirs, struct theme **out,
               struct strbuf *err);
/*
 * Parses scheme text (len bytes, need not be NUL-terminated) as if read from
 * file; search_dirs serve an `inherit` line. Returns 0 or -1 as theme_load.
 */
int theme_parse(const char *text, size_t len, const char *file, const char *const *search_dirs,
                struct theme **out, struct strbuf *err);
void theme_free(struct theme *t);

/* The scheme's name: "default", or a file's name without ".theme". */
const char *theme_name(const struct theme *t);
/* The style as written (no downgrade, "default" colours left as they are). */
struct theme_style theme_style_of(const struct theme *t, enum theme_role role);
/*
 * Whether the scheme or the scheme it inherits set role (a file without
 * `inherit` starts from the built-in scheme, whose roles count as unset).
 */
bool theme_role_defined(const struct theme *t, enum theme_role role);
/* Appends t in the file format: one line per role, everything spelled out. */
void theme_format(const struct theme *t, struct strbuf *out);

/*
 * The style of role for a terminal of the given depth.
 *   - A role's "default" colour is normal's.
 *   - Colours come back as THEME_COLOR_DEFAULT or, at 8/16/256, a palette
 *     index below 8/16/256; truecolor keeps RGB and explicit indices.
 *   - RGB → 256: the nearest cube entry or grey. → 16: by hue, then light or
 *     dark (theme_rgb_to_16). 16 → 8: a bright foreground becomes its dark
 *     colour, plus bold where another role uses that dark colour; grey
 *     becomes dim white (dim black under `background light`).
 *   - At 8/16, a foreground that lands on its own background (the terminal's
 *     own taken as black, or white under `background light`), or a colour set
 *     apart from normal's that merges into it, is shown the mono way: normal's
 *     colours (for a clash) plus the role's mono attributes.
 *   - THEME_DEPTH_MONO: no colours, attrs = mono_attrs.
 */
struct theme_style theme_resolve(const struct theme *t, enum theme_role role,
                                 enum theme_depth depth);

/*
 * The depth to use, from the environment and what curses reports
 * (COLORS, or < 8 without colour support):
 *   NO_COLOR set and not empty, TERM unset/empty/"dumb"  → mono
 *   COLORTERM truecolor/24bit with ≥ 256 colours, or a direct-colour
 *   terminfo (≥ 2^24 colours)                            → truecolor
 *   otherwise ≥ 256 → 256, ≥ 16 → 16, ≥ 8 → 8, else mono
 */
enum theme_depth theme_detect_depth(const char *term, const char *colorterm, int curses_colors,
                                    const char *no_color);
/* "mono", "8", "16", "256", "truecolor" (parse also takes "24bit"); -1 if unknown. */
const char *theme_depth_name(enum theme_depth depth);
int theme_depth_parse(const char *name);

/* Colour arithmetic on xterm's palette, public for tests and for the tui. */
/* The nearest of palette entries 16–255 (6×6×6 cube or 24 greys). */
int theme_rgb_to_256(uint8_t r, uint8_t g, uint8_t b);
/*
 * The ANSI colour 0–15 for an RGB colour: by hue, then light or dark (plain
 * RGB distance would make pastel colours grey); dark → black, grey → the
 * nearest of the four ANSI greys.
 */
int theme_rgb_to_16(uint8_t r, uint8_t g, uint8_t b);
/* theme_rgb_to_16 of palette entry index (0–15 map to themselves). */
int theme_256_to_16(int index);
/* 0–7 for an ANSI colour 0–15; *bright says whether it was 8–15. */
int theme_16_to_8(int index, bool *bright);
/* The RGB xterm shows for palette entry index 0–255. */
void theme_index_rgb(int index, uint8_t *r, uint8_t *g, uint8_t *b);

/*
 * Where schemes are looked up: CONFIG_DIR/themes (the user's, e.g.
 * ~/.config/trainjob/themes; skipped when config_dir is NULL), then the
 * shipped directories: themes/ in each of buildinfo_data_dirs (the installed
 * tree, wherever it was moved, and the checkout of a build directory).
 * NULL-terminated; free with theme_strv_free.
 */
char **theme_search_dirs(const char *config_dir);
/*
 * The scheme names found in search_dirs plus "default", sorted and unique
 * (for :theme completion and "did you mean"). Free with theme_strv_free.
 */
char **theme_list(const char *const *search_dirs, size_t *count);
/* Frees a NULL-terminated array of strings from theme_search_dirs or theme_list. */
void theme_strv_free(char **v);

#endif
