/*
 * widget: what every widget shares — the key result bits, the const table
 * of functions a widget kind provides, and the drawing context.
 *
 * Widgets know nothing of jobs: they take strings, numbers, rows and
 * callbacks. A key goes to the focused widget first; it answers with result
 * bits and its owner (a form, a screen) decides the rest, as in htop's
 * Panel. Widgets never draw on their own: they set `dirty`, and the one
 * place that draws (the TUI's loop turn) calls draw for the dirty ones.
 */
#ifndef WIDGETS_WIDGET_H
#define WIDGETS_WIDGET_H

#include <curses.h>
#include <stdbool.h>
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

#endif
