/*
 * note: text in a form that is read, never edited — wrapped to the form's
 * width in at most a few lines, drawn in the window's attributes (dim, as
 * it is disabled) and skipped by the focus. The wizard's table rows of kind
 * note (who sets volume permissions, what applies when no rule matches)
 * are these.
 */
#ifndef WIDGETS_NOTE_H
#define WIDGETS_NOTE_H

#include "widgets/widget.h"

/* A note showing text (sanitized here: it may come from outside). */
struct widget *note_new(const char *text);

#endif
