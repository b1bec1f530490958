/*
 * select: a one-line choice that opens a popup list with type-ahead
 * filtering.
 *
 * Closed, it shows the chosen option's label, its detail dim (or, for a
 * disabled choice, the reason it is disabled), and "▾" in its last cell ("v"
 * after select_set_utf8(s, false)). Like textfield it draws in the window's current
 * attributes (the owner picks the role with wattr_set), with A_DIM added for
 * the detail and while the widget is disabled.
 *
 * Open, it shows a popup in a curses window of its own (newwin), as wide as
 * the closed view or as its widest option, below the closed view when it
 * fits, else above, else on the larger side with fewer rows; at most
 * max_rows options (select_set_max_rows, default SELECT_DEFAULT_ROWS) with
 * scrolling and ACS arrows on the border when options are hidden. Its first
 * row is the filter: typed text narrows the list to the options whose label
 * or detail contains it (ASCII letters case-insensitive). Each row shows the
 * label, and on the right, dim, the detail — or for a disabled option the
 * reason (its detail when it has no reason). The cursor moves over enabled
 * options only. The popup draws with the palette (select_set_palette,
 * widget_palette_mono() until set; held by pointer, it must outlive the
 * select): `normal`, `border`, `label` (the filter prompt), `dim`,
 * `selected` (the cursor row).
 *
 * Drawing order: the popup must be on top. When the select is dirty the
 * owner calls ops->draw for the closed view, and, while select_is_open,
 * select_draw_popup after everything else on the screen has been
 * wnoutrefresh'ed: it draws and wnoutrefresh'es the popup window, to land
 * on top at the owner's doupdate. When the popup closes its window is
 * deleted; the REDRAW bit then means the owner must repaint (touchwin) what
 * it covered.
 *
 * Where the popup goes: next to the closed view, whose screen position the
 * last ops->draw into a window records. A closed view drawn into a pad (a
 * form draws its entries into one) has no screen position: the owner then
 * says where the view is on the screen with select_set_anchor (e.g. from
 * form_entry_pos plus the window's getbegy/getbegx) before drawing the popup.
 *
 * Keys, closed (result bits):
 *   Enter, Space            open the popup     ACTIVATE|HANDLED|REDRAW
 *   anything else, and every key while disabled: IGNORED
 * Keys, open:
 *   printable (Space too)   add to the filter             HANDLED|REDRAW
 *   Backspace / Ctrl-U      remove a character / clear it  HANDLED|REDRAW
 *   Up Down PgUp PgDn Home End  move over enabled options  HANDLED|REDRAW
 *                           (HANDLED alone when the cursor cannot move)
 *   Enter                   pick the cursor's option and close:
 *                           CHANGED|HANDLED|REDRAW, without CHANGED when it
 *                           was already the choice; HANDLED alone (still
 *                           open) when no option is under the cursor
 *   Esc                     close, choice unchanged   CANCEL|HANDLED|REDRAW
 *   anything else (Tab, Alt-x, F-keys): IGNORED — an owner that moves the
 *   focus on such a key closes the popup first (select_close).
 * Option text is drawn as given: outside text goes through utf8_sanitize.
 */
#ifndef WIDGETS_SELECT_H
#define WIDGETS_SELECT_H

#include <stdbool.h>
#include <stddef.h>

#include "widgets/widget.h"

#define SELECT_NONE ((size_t)-1)
#define SELECT_DEFAULT_ROWS 8

struct select_option {
    const char *label;  /* what is chosen, e.g. "N6lS.Iu.I80.8" */
    const char *detail; /* shown dim on the right, e.g. "8× H800 · 120 vCPU"; NULL: none */
    bool disabled;      /* shown but cannot be picked */
    const char *reason; /* why it is disabled, e.g. "owners only"; NULL: none */
};

struct select;

/*
 * A select over a copy of options[0..n), with option `selected` chosen
 * (SELECT_NONE, or any index out of range: none). Free with select_free or
 * widget->ops->destroy.
 */
struct select *select_new(const struct select_option *options, size_t n, size_t selected);
void select_free(struct select *s);

/* The select as a widget (the first member), and back (NULL if not one). */
struct widget *select_widget(struct select *s);
struct select *select_from_widget(struct widget *wd);

/* The chosen option's index (SELECT_NONE: none) and label (NULL: none). */
size_t select_selected(const struct select *s);
const char *select_selected_label(const struct select *s);
/* Option i's detail, as the list shows it beside the label ("" none; NULL: no such option). */
const char *select_detail(const struct select *s, size_t i);
/* Chooses option i, disabled or not (SELECT_NONE or out of range: none); sets dirty. */
void select_set_selected(struct select *s, size_t i);
size_t select_count(const struct select *s);

/*
 * Replaces the options with a copy of options[0..n). The choice stays on
 * the option with the same label when there is one (disabled or not), else
 * becomes SELECT_NONE; an open popup keeps its filter and, by label, its
 * cursor. Sets dirty.
 */
void select_set_options(struct select *s, const struct select_option *options, size_t n);

bool select_is_open(const struct select *s);
/* Closes the popup without changing the choice (and deletes its window). */
void select_close(struct select *s);
/* Places and draws the popup (if open) and wnoutrefresh'es it; see the top. */
void select_draw_popup(struct select *s);
/* The popup's window while it is open and drawn, else NULL. */
WINDOW *select_popup_window(const struct select *s);
/* The popup's filter text ("" when closed) and the option under its cursor. */
const char *select_filter(const struct select *s);
size_t select_cursor(const struct select *s);

/* The roles the popup draws with (NULL: widget_palette_mono()); sets dirty. */
void select_set_palette(struct select *s, const struct widget_palette *pal);
/* Whether the terminal shows UTF-8 (default true); false draws "v" for "▾". */
void select_set_utf8(struct select *s, bool utf8);
/*
 * Where the closed view is, in screen coordinates (row, column, width), for
 * the popup; replaced by the next ops->draw into a window that is not a pad.
 */
void select_set_anchor(struct select *s, int y, int x, int w);
/* The most option rows the popup shows (at least 1). */
void select_set_max_rows(struct select *s, int rows);

#endif
