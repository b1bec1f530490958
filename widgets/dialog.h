/*
 * dialog: a centred confirm box — a title on the top border, a message
 * wrapped to the box by display cells (CJK two cells wide, never split at
 * the edge), and the buttons "[ Yes ] [ No ]".
 *
 * The dialog is modal and draws in a curses window of its own, centred on
 * the screen and sized to its text: at least DIALOG_MIN_COLS and at most the
 * screen width − 4 (the whole width on a screen narrower than the minimum
 * + 4); a message too long for the screen height is cut to the lines that
 * fit. Draw it last, after the screen under it, with dialog_draw (or
 * ops->draw, which ignores the place it is given): it draws, then
 * wnoutrefresh'es its window so it lands on top at the owner's doupdate.
 * When the dialog is freed the owner redraws what it covered.
 *
 * Roles come from the palette (dialog_set_palette, widget_palette_mono()
 * until set; held by pointer, so it must outlive the dialog): `normal` for
 * the box and message, `border`, `title`, and `selected` for the focused
 * button.
 *
 * Keys (result bits):
 *   Left / Right            focus Yes / No;  Tab, Shift-Tab  the other one
 *                           (HANDLED|REDRAW, HANDLED alone if it stays)
 *   y / n (either case)     answer yes / no       ACTIVATE|HANDLED
 *   Enter                   the focused button    ACTIVATE|HANDLED
 *   Esc                     answer no             ACTIVATE|CANCEL|HANDLED
 *   anything else, and every key while disabled: IGNORED
 * After ACTIVATE, dialog_answer says what was chosen.
 */
#ifndef WIDGETS_DIALOG_H
#define WIDGETS_DIALOG_H

#include <stdbool.h>

#include "widgets/widget.h"

#define DIALOG_MIN_COLS 30

struct dialog;

/*
 * A dialog asking message (UTF-8; '\n' starts a new paragraph) under title,
 * with the focus on Yes when default_yes, else on No. Outside text goes
 * through utf8_sanitize first. Free with dialog_free or ops->destroy.
 */
struct dialog *dialog_new(const char *title, const char *message, bool default_yes);
void dialog_free(struct dialog *d);

/* The dialog as a widget (the first member), and back (NULL if not one). */
struct widget *dialog_widget(struct dialog *d);
struct dialog *dialog_from_widget(struct widget *wd);

/* True when the last answer (y/n, Enter, Esc) was Yes; false before any. */
bool dialog_answer(const struct dialog *d);
/* The roles to draw with (NULL: widget_palette_mono()); sets dirty. */
void dialog_set_palette(struct dialog *d, const struct widget_palette *pal);

/* Places, sizes and draws the dialog's window for the current screen size. */
void dialog_draw(struct dialog *d);
/* The dialog's window (NULL before the first draw), e.g. to read it back. */
WINDOW *dialog_window(const struct dialog *d);

#endif
