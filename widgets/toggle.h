/*
 * toggle: an on/off field drawn as "[x] label" / "[ ] label".
 *
 * Drawing follows textfield: the toggle is drawn in the window's current
 * attributes (the owner picks the role with wattr_set), with A_DIM added
 * while disabled. Focused, the cursor stands on the mark inside the
 * brackets.
 *
 * Keys (result bits): Space or Enter (' ', '\r', '\n', KEY_ENTER) flips the
 * value (CHANGED|HANDLED|REDRAW). Everything else, and every key while
 * disabled: IGNORED.
 */
#ifndef WIDGETS_TOGGLE_H
#define WIDGETS_TOGGLE_H

#include <stdbool.h>

#include "widgets/widget.h"

struct toggle;

/* A toggle showing label (NULL: none) after its box. */
struct toggle *toggle_new(const char *label, bool on);
void toggle_free(struct toggle *tg);

/* The toggle as a widget (the first member), and back (NULL if not one). */
struct widget *toggle_widget(struct toggle *tg);
struct toggle *toggle_from_widget(struct widget *wd);

bool toggle_on(const struct toggle *tg);
/* Sets the value (sets dirty when it changes). */
void toggle_set(struct toggle *tg, bool on);
void toggle_set_label(struct toggle *tg, const char *label);

#endif
