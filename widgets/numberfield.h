/*
 * numberfield: an integer field with a range [min, max] — typed digits, a
 * leading '-' when min < 0, steps with Up/Down and +/-, and an optional unit
 * shown dim after the number ("8 workers").
 *
 * Text that is not (yet) a number in range is kept as typed ("-", "150" for
 * a range −1 … 99), so the owner can say what is wrong next to the field;
 * numberfield_value says whether the text is a valid value. Steps always
 * land in range.
 *
 * Drawing follows textfield: the number is drawn in the window's current
 * attributes (the owner picks the role with wattr_set), the suffix with
 * A_DIM added, everything with A_DIM added while the widget is disabled.
 * Focused, the cursor stands after the number (editing is at the end only).
 *
 * Keys (result bits):
 *   digits                 append (CHANGED|HANDLED|REDRAW); a lone "0" or
 *                          "-0" is replaced by the digit; HANDLED alone at
 *                          NUMBERFIELD_MAX_TEXT characters
 *   '-'                    when min < 0 and the text is empty: starts a
 *                          negative number; otherwise steps down by 1
 *   '+', Up / '-', Down    step by 1; PgUp / PgDn step by 10
 *                          (CHANGED|HANDLED|REDRAW, or HANDLED alone when
 *                          the text already shows the clamped result). A
 *                          step starts from the number the text spells, out
 *                          of range or not, else from 0, and is clamped.
 *   Backspace (KEY_BACKSPACE, 127, Ctrl-H) removes the last character;
 *   Ctrl-U clears (CHANGED|HANDLED|REDRAW; HANDLED alone on empty text)
 *   Enter ('\r', '\n', KEY_ENTER)  FOCUS_NEXT|HANDLED
 *   anything else, and every key while disabled: IGNORED
 */
#ifndef WIDGETS_NUMBERFIELD_H
#define WIDGETS_NUMBERFIELD_H

#include <stdbool.h>

#include "widgets/widget.h"

/* Characters the text may hold: enough for any long with its sign. */
#define NUMBERFIELD_MAX_TEXT 20

struct numberfield;

/*
 * A field for [min, max] (swapped if given the wrong way round) showing
 * initial clamped to the range. Free with numberfield_free or
 * widget->ops->destroy.
 */
struct numberfield *numberfield_new(long min, long max, long initial);
void numberfield_free(struct numberfield *nf);

/* The field as a widget (the first member), and back (NULL if not one). */
struct widget *numberfield_widget(struct numberfield *nf);
struct numberfield *numberfield_from_widget(struct widget *wd);

/*
 * The number the text spells, out of range or not (0 when it spells none).
 * *ok (if ok is not NULL) is true when the text is a number in [min, max].
 */
long numberfield_value(const struct numberfield *nf, bool *ok);
/*
 * Whether the text spells a number (in range or not: the owner says what
 * is wrong with it), and which through *out; false for "", "-" and a
 * number no long holds.
 */
bool numberfield_number(const struct numberfield *nf, long *out);
/* The text as typed; valid until the next change. */
const char *numberfield_text(const struct numberfield *nf);
/* Shows value clamped to the range; sets dirty. */
void numberfield_set(struct numberfield *nf, long value);
/* A new range (swapped if reversed); the text is kept, its validity may change. */
void numberfield_set_range(struct numberfield *nf, long min, long max);
void numberfield_range(const struct numberfield *nf, long *min, long *max);
/* A unit shown dim after the number, e.g. "workers" (NULL: none). */
void numberfield_set_suffix(struct numberfield *nf, const char *utf8);

#endif
