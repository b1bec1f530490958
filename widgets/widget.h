/*
 * widget: what every widget shares — the key result bits, the const table
 * of functions a widget kind provides, and the drawing context.
 *
 * Widgets know nothing of jobs: they take strings, numbers, rows and
 * callbacks. A key goes to the focused widget first; it answers with result
 * bits and its owner (a form, a screen) decides the rest, as in htop's
 * Panel. Widgets never draw on their own: they set `dirty`, and the one
 * place that draws (the TUI's loop turn) calls draw for the dirty ones.
 *
 * Also the text helpers every widget draws with: UTF-8 cut to a number of
 * cells at whole characters, a palette role made the window's own, and
 * sanitized text clipped with an ellipsis or wrapped at spaces.
 */
#ifndef WIDGETS_WIDGET_H
#define WIDGETS_WIDGET_H

#include <curses.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What handling a key did (bits). */
enum widget_result {
    WIDGET_IGNORED = 0,         /* not this widget's key: the owner may use it */
    WIDGET_HANDLED = 1 << 0,    /* consumed */
    WIDGET_CHANGED = 1 << 1,    /* the value changed (validate, save the draft) */
    WIDGET_REDRAW = 1 << 2,     /* needs drawing */
    WIDGET_FOCUS_NEXT = 1 << 3, /* move focus on (Enter in a single-line field) */
    WIDGET_FOCUS_PREV = 1 << 4,
    WIDGET_ACTIVATE = 1 << 5, /* confirm / open (Enter on a button or select) */
    WIDGET_CANCEL = 1 << 6,   /* Esc inside the widget (close a popup) */
};

/*
 * A function key that is text, not a command: a tab inside a paste (a
 * tab-indented heredoc). A multi-line text area inserts '\t'; every other
 * widget ignores it, and the form does not move on with it as with Tab.
 */
#define WIDGET_KEY_TAB_TEXT (KEY_MAX + 0x1100)

/* A key as the loop read it: a curses key code or a Unicode code point. */
struct widget_key {
    int code; /* KEY_* from curses when is_function, else a code point */
    bool is_function;
    bool alt; /* preceded by ESC (Alt-x) */
};

/*
 * The attributes widgets draw with, filled by the TUI from the theme (as
 * curses attr_t with the colour pair or'ed in), so widgets know roles, not
 * colours. Every message also carries an icon, so it reads without colour.
 */
struct widget_palette {
    attr_t normal;
    attr_t dim;
    attr_t label;
    attr_t focus;    /* the focused field */
    attr_t selected; /* the cursor row in lists and menus */
    attr_t error;
    attr_t warning;
    attr_t ok;
    attr_t help;
    attr_t title;
    attr_t border;
    attr_t key; /* a key in the key bar */
};

/* A plain palette (bold/dim/reverse only) for tests and monochrome terminals. */
const struct widget_palette *widget_palette_mono(void);

struct widget;

struct widget_ops {
    const char *kind;
    /* Draws into win at (y, x), width w (cells); focused places the cursor. */
    void (*draw)(struct widget *wd, WINDOW *win, int y, int x, int w, bool focused);
    unsigned (*key)(struct widget *wd, const struct widget_key *k);
    /* Lines the widget takes at width w (1 for single-line fields). */
    int (*height)(const struct widget *wd, int w);
    void (*destroy)(struct widget *wd);
};

struct widget {
    const struct widget_ops *ops;
    bool dirty;
    bool disabled;
};

/* ---- Drawing text ---- */

/* Makes a palette attribute (colour pair or'ed in) the window's own. */
void widget_set_role(WINDOW *win, attr_t a);

/* Cells s[0..n) takes as widget_put_textn draws it: controls one (U+FFFD), marks none. */
int widget_text_cells(const char *s, size_t n);

/* Cells the longest whole-character prefix of s that fits in max_cells takes. */
int widget_fit_cells(const char *s, int max_cells);

/*
 * Draws s[0..n) at (y, x) in at most max_cells cells, whole characters only,
 * in the window's current attributes; returns the cells drawn. Controls
 * show as U+FFFD; a combining mark joins the character before it.
 */
int widget_put_textn(WINDOW *win, int y, int x, const char *s, size_t n, int max_cells);

/* widget_put_textn for the whole NUL-terminated utf8; returns the cells drawn. */
int widget_put_text(WINDOW *win, int y, int x, const char *utf8, int max_cells);

/* Blanks w cells from (y, x). */
void widget_blank(WINDOW *win, int y, int x, int w);

/*
 * For sanitized text (controls count no cells): bytes of the longest prefix
 * of s (n bytes) that fits in w cells, whole characters (marks stay with
 * their base); its cells through *cells when not NULL.
 */
size_t widget_fit_bytes(const char *s, size_t n, int w, int *cells);

/* Writes the n bytes of sanitized s at (y, x), uncut, controls dropped. */
void widget_put_bytes(WINDOW *win, int y, int x, const char *s, size_t n);

/* Writes s (n bytes) in w cells at (y, x), cut with "…" (or '~' without utf8) when too long. */
void widget_put_clipped(WINDOW *win, int y, int x, int w, const char *s, size_t n, bool utf8);

/*
 * One line of s (n bytes) wrapped at w cells, broken after the last space
 * that fits (else inside the word): its bytes through *len; returns where
 * the next line starts, past the spaces at the break.
 */
size_t widget_wrap_line(const char *s, size_t n, int w, size_t *len);

/* Lines s takes wrapped at w cells: 1 to max_lines. */
int widget_wrapped_lines(const char *s, int w, int max_lines);

/* Writes s wrapped at w cells from (y, x) in at most max_lines; the last takes the rest, clipped.
 */
void widget_put_wrapped(WINDOW *win, int y, int x, int w, const char *s, int max_lines, bool utf8);

#endif
