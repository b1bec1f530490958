/*
 * listedit: a list editor — rows the user adds, removes and reorders, each
 * row a small sub-form (an environment variable, a mount, a fault-tolerance
 * rule) that the OWNER keeps, draws and edits through callbacks. The widget
 * knows only how many rows there are, which one has the focus, and the
 * keys that change the list.
 *
 * Keys go first to the focused row (row_key); the list acts on what the
 * row ignores:
 *   Alt-N, Insert (KEY_IC)       add a row after the focused one (the first
 *                                row of an empty list); refused, HANDLED
 *                                alone, at max_rows (listedit_at_limit tells
 *                                the owner, who may show why); after a
 *                                refusal, text, Tab and Enter are held back
 *                                (HANDLED, nothing typed) until Esc (used
 *                                up), a function key or an Alt key, so what
 *                                was meant for the new row never lands in
 *                                an old one (listedit_refused)
 *   Alt-D, Alt-Delete            remove the focused row (the owner may ask
 *                                first: the list re-reads count())
 *   Alt-Up, Alt-Down             move the focused row up / down
 *   Up/Down, Tab/Shift-Tab       the row before / after; IGNORED on the
 *                                first / last row so the form moves on
 * A row answering WIDGET_FOCUS_NEXT / _PREV (Enter, or Tab past its last
 * field) moves the list to the next / previous row; from the last / first
 * row the bit goes up to the form. Alt-Up is {KEY_UP, alt}: the TUI's key
 * reader maps the terminal's kUP3/kDN3/kDC3 to Alt-Up/Alt-Down/Alt-Delete.
 * Edits to the list answer CHANGED|HANDLED|REDRAW; a row's REDRAW sets the
 * list dirty. Every key while disabled is IGNORED.
 *
 * Drawing: rows one under the other, each as tall as row_height says (the
 * owner draws the row's number, "rule 1", and its fields); an empty list
 * draws its hint ("no variables — Alt-N adds one") dim; a disabled list
 * draws dim, rows unfocused, with its note on a line above the rows. It
 * draws in the window's current attributes; the owner's draw_row may set
 * its own. When focused, the cursor is left where the focused row put it
 * (at the row's start if it put it nowhere else).
 */
#ifndef WIDGETS_LISTEDIT_H
#define WIDGETS_LISTEDIT_H

#include <stdbool.h>
#include <stddef.h>

#include "widgets/widget.h"

/* The owner's rows. Only count and draw_row are required. */
struct listedit_ops {
    size_t (*count)(void *ctx);
    /* Lines row takes at width w (NULL: 1 each). */
    int (*row_height)(void *ctx, size_t row, int w);
    void (*draw_row)(void *ctx, size_t row, WINDOW *win, int y, int x, int w, bool focused);
    /* A key for the focused row: result bits (NULL: rows take no keys). */
    unsigned (*row_key)(void *ctx, size_t row, const struct widget_key *k);
    /* Adds a row at index at (NULL: no adding). */
    void (*add_row)(void *ctx, size_t at);
    /* Removes row, now or after asking (NULL: no removing). */
    void (*remove_row)(void *ctx, size_t row);
    /* Moves the row at from to index to, the others shifting (NULL: no moving). */
    void (*move_row)(void *ctx, size_t from, size_t to);
    /*
     * Optional: the focus entered row from the row above (from_below false:
     * focus its first field) or from below (its last field).
     */
    void (*focus_row)(void *ctx, size_t row, bool from_below);
};

struct listedit;

/*
 * A list over the owner's rows (ops is kept, not copied) holding at most
 * max_rows rows (0: no limit). Free with listedit_free or
 * widget->ops->destroy; neither touches the owner's rows.
 */
struct listedit *listedit_new(const struct listedit_ops *ops, void *ctx, size_t max_rows);
void listedit_free(struct listedit *le);

/* The list as a widget (the first member), and back (NULL if not a list). */
struct widget *listedit_widget(struct listedit *le);
struct listedit *listedit_from_widget(struct widget *wd);

/* The focused row (0 when the list is empty). */
size_t listedit_focused(const struct listedit *le);
/* Focuses row (clamped to the rows there are); sets dirty. */
void listedit_set_focus(struct listedit *le, size_t row);
/* The owner changed its rows outside a key (a confirmed removal): re-read, redraw. */
void listedit_changed(struct listedit *le);
/* True when the list holds max_rows rows: adding is refused. */
bool listedit_at_limit(const struct listedit *le);
/* An add was refused at max_rows and no key other than text has come since. */
bool listedit_refused(const struct listedit *le);

/* The dim line an empty list shows (NULL: the default hint). */
void listedit_set_empty_hint(struct listedit *le, const char *utf8);
/* The dim line above the rows while the list is disabled (NULL: none). */
void listedit_set_note(struct listedit *le, const char *utf8);

#endif
