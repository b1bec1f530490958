/*
 * textfield: a single-line text field — UTF-8 in and out, edited by whole
 * characters (a base character and the combining marks after it move and
 * delete together), CJK characters two cells wide, emacs keys, horizontal
 * scroll that keeps the cursor in view, a dim placeholder when empty and an
 * optional mask for secrets.
 *
 * The field is a widget (widgets/widget.h): its owner passes keys to
 * ops->key, reads the result bits, and calls ops->draw when `dirty` is set.
 * It draws in the window's current attributes (the owner picks the theme
 * role with wattr_set before drawing), adding A_DIM when disabled and for
 * the placeholder. Text given to textfield_set is drawn as given: outside
 * text goes through utf8_sanitize first. Typed control characters are
 * refused.
 *
 * Keys (result bits): printable code points insert (CHANGED|HANDLED|REDRAW;
 * HANDLED alone when max_chars is reached). Moves, HANDLED|REDRAW (HANDLED
 * alone when the cursor cannot move): Left/Right, Ctrl-B/F, Home/End,
 * Ctrl-A/E, Alt-B/F (words of letters and digits). Edits: Backspace
 * (KEY_BACKSPACE, 127, Ctrl-H), Delete (KEY_DC, Ctrl-D), Ctrl-K (kill to the
 * end), Ctrl-U (kill to the start), Ctrl-W (kill back to a space), Ctrl-Y
 * (yank the last kill, cut to what fits). Enter ('\r', '\n', KEY_ENTER):
 * FOCUS_NEXT|HANDLED. Everything else, Tab included, and every key while
 * the widget is disabled: IGNORED. With a mask, word moves and Ctrl-W go to
 * the ends of the text, so they do not reveal the secret's shape.
 */
#ifndef WIDGETS_TEXTFIELD_H
#define WIDGETS_TEXTFIELD_H

#include <stddef.h>
#include <stdint.h>

#include "widgets/widget.h"

struct textfield;

/*
 * A field holding initial (NULL for empty), at most max_chars code points
 * (0: no limit). Longer initial text is cut at max_chars. The cursor starts
 * at the end. Free with textfield_free or widget->ops->destroy.
 */
struct textfield *textfield_new(const char *initial, size_t max_chars);
void textfield_free(struct textfield *tf);

/* The field as a widget (the first member), and back (NULL if not a field). */
struct widget *textfield_widget(struct textfield *tf);
struct textfield *textfield_from_widget(struct widget *wd);

/* The value as UTF-8; valid until the next change to the field. */
const char *textfield_value(const struct textfield *tf);
/* Replaces the value (cut at max_chars), cursor at the end; sets dirty. */
void textfield_set(struct textfield *tf, const char *utf8);

/* Text shown dim while the value is empty (NULL: none). */
void textfield_set_placeholder(struct textfield *tf, const char *utf8);
/*
 * Draws every character as mask (e.g. '*'), one mask per character; 0 shows
 * the text. The value is unchanged.
 */
void textfield_set_mask(struct textfield *tf, uint32_t mask);

/*
 * The cursor's cell column relative to the field's left edge, after the
 * horizontal scroll for the width of the last draw (unscrolled before the
 * first draw).
 */
int textfield_cursor_col(const struct textfield *tf);

#endif
