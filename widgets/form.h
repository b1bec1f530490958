/*
 * form: the layout of one section of fields — an ordered list of entries,
 * each {label, widget, help, message + severity, hidden, disabled + note},
 * with keyboard focus and vertical scroll. The form holds any struct widget;
 * it knows nothing of what the fields mean.
 *
 * Layout, top to bottom per visible entry:
 *   label  widget            labels in a left column as wide as the widest
 *                            visible label (at most FORM_LABEL_MAX cells and a
 *                            third of the width), cut with "…"; the widget
 *                            takes the rest of the width, as many lines as
 *                            its ops->height says
 *          ✗ message         only while a message is set: icon and text in
 *                            the palette's error / warning / ok role, under
 *                            the widget, wrapped to at most
 *                            FORM_MESSAGE_LINES lines
 *          note              only while disabled with a note, in the dim role
 * A "wide" entry puts its label (if any) on a line of its own and gives
 * the widget the full width (a script, a list of rules). Hidden entries
 * take no room. The form sets the window's attributes before a widget
 * draws: the focus role for the focused one, dim when disabled, else
 * normal; the focused label is the label role in bold.
 * The last lines of the rectangle are the help (the focused entry's help
 * text, wrapped rather than cut: one line, up to FORM_HELP_LINES and never
 * more than half the rectangle, with ↑ / ↓ at the first line's right end
 * while there is more above / below) unless the owner turns it off and shows
 * form_help() on its own status line.
 * Icons: "✗ " error, "! " warning, "✓ " ok; with form_set_utf8(f, false)
 * "x ", "! ", "+ ", "~" for "…" and "^" / "v" for the arrows.
 *
 * Keys (form_key): the focused widget first. What it ignores:
 *   Tab, Down        the next visible, enabled entry
 *   Shift-Tab, Up    the previous one
 * A widget's WIDGET_FOCUS_NEXT / _PREV (Enter in a text field) moves the
 * same way. Past the last / first entry, Tab / Shift-Tab / a widget's bit
 * answer WIDGET_FOCUS_NEXT / _PREV | HANDLED so the owner can switch
 * sections; Down / Up there answer IGNORED. Other bits of the widget's
 * answer (CHANGED, ACTIVATE, CANCEL…) pass through to the owner. They
 * concern the entry focused when the key came: when the answer also moved
 * the focus (CHANGED|FOCUS_NEXT from a select), form_focused() is already
 * the next one, so read it before calling form_key.
 *
 * Drawing: entries are drawn into an off-screen pad as tall as the content,
 * once when the layout changes and then only the entries that are dirty (a
 * widget's `dirty`, a new message); form_draw copies the visible part into
 * the window, so curses sends only what changed. Scroll keeps the focused
 * entry (label, widget, message) in view, and when it is taller than the
 * rectangle the line with the cursor. After form_draw the window's cursor
 * is where the focused widget put it.
 *
 * Labels, help, messages and notes are sanitized copies: server text may
 * go straight to form_set_message.
 */
#ifndef WIDGETS_FORM_H
#define WIDGETS_FORM_H

#include <stdbool.h>
#include <stddef.h>

#include "widgets/widget.h"

#define FORM_NO_ENTRY ((size_t)-1)

enum {
    FORM_LABEL_MAX = 24,    /* cells of the label column at most */
    FORM_MESSAGE_LINES = 8, /* lines a message wraps to at most: its whole length at 80 columns */
    FORM_HELP_LINES = 8,    /* lines the focused entry's help wraps to at most */
};

enum form_severity {
    FORM_MESSAGE_NONE,
    FORM_MESSAGE_OK,
    FORM_MESSAGE_WARNING,
    FORM_MESSAGE_ERROR,
};

struct form;

struct form *form_new(void);
/* Frees the form and destroys every widget it holds. */
void form_free(struct form *f);

/*
 * Appends an entry showing wd (the form owns it from now on) with label and
 * help (either NULL: none). Returns its index. The first entry that can take
 * the focus gets it.
 */
size_t form_add(struct form *f, const char *label, struct widget *wd, const char *help);
size_t form_count(const struct form *f);
struct widget *form_widget_at(const struct form *f, size_t entry);

void form_set_label(struct form *f, size_t entry, const char *label);
void form_set_help(struct form *f, size_t entry, const char *help);
/* Sets the line under the field; FORM_MESSAGE_NONE or NULL text clears it. */
void form_set_message(struct form *f, size_t entry, enum form_severity severity, const char *text);
/* The entry's message severity, and its text through text (NULL: none). */
enum form_severity form_message(const struct form *f, size_t entry, const char **text);

/*
 * Hides or shows an entry. A hidden focused entry hands the focus to the
 * next entry that can take it (else the previous one).
 */
void form_set_hidden(struct form *f, size_t entry, bool hidden);
bool form_hidden(const struct form *f, size_t entry);
/*
 * Disables or enables an entry (its widget's `disabled`): drawn dim, skipped
 * by the focus, with note (NULL: none) on a dim line under it while disabled.
 * Setting the widget's flag directly works too (without a note).
 */
void form_set_disabled(struct form *f, size_t entry, bool disabled, const char *note);
/* A wide entry: label on its own line, the widget across the full width. */
void form_set_wide(struct form *f, size_t entry, bool wide);

/* Focuses entry; false (focus unchanged) when it is hidden or disabled. */
bool form_focus(struct form *f, size_t entry);
/* The focused entry, FORM_NO_ENTRY when no entry can take the focus. */
size_t form_focused(const struct form *f);
/* The focused entry's help text, NULL when it has none. */
const char *form_help(const struct form *f);

/* Reserve the rectangle's last line for the help text (default on). */
void form_set_help_line(struct form *f, bool on);
/* Whether the terminal shows UTF-8: icons and marks fall back to ASCII (default on). */
void form_set_utf8(struct form *f, bool utf8);

/* A key for the form: result bits (see above). */
unsigned form_key(struct form *f, const struct widget_key *k);

/* True when something changed since the last form_draw. */
bool form_needs_draw(const struct form *f);
/* Forget what was drawn: the next form_draw redraws every entry. */
void form_invalidate(struct form *f);
/*
 * Draws the form into win's rectangle at (y, x), h lines by w cells, with
 * the palette's roles. A new rectangle (a resize) or palette lays it out
 * again, keeping the focus and scrolling to it.
 */
void form_draw(struct form *f, WINDOW *win, int y, int x, int h, int w,
               const struct widget_palette *pal);

/* Content line shown at the top of the rectangle at the last draw. */
int form_scroll(const struct form *f);
/*
 * Where entry's widget was drawn at the last form_draw, in window
 * coordinates (to open a popup under a field): false when it is hidden or
 * scrolled out of view (its first line not shown).
 */
bool form_entry_pos(const struct form *f, size_t entry, int *y, int *x, int *w);

#endif
