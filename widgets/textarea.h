/*
 * textarea: a multi-line text area (a startup script) — UTF-8 in and out,
 * a fixed number of visible lines with vertical scroll that keeps the cursor
 * in view, horizontal scroll of the cursor's line (other lines show their
 * start, with '>' where they are cut off), an optional dim gutter of line
 * numbers and a dim placeholder when empty.
 *
 * Like textfield, text is edited by whole characters (a base character and
 * its combining marks), CJK characters take two cells, a tab from
 * textarea_set is drawn as spaces up to the next multiple of 8 cells, and
 * other control characters (reachable only through textarea_set; outside
 * text goes through utf8_sanitize with UTF8_KEEP_NEWLINE|UTF8_KEEP_TAB
 * first) show as U+FFFD. The area draws in the window's current attributes
 * (the owner's theme role), adding A_DIM for the gutter, the placeholder and
 * while disabled.
 *
 * Keys (result bits as in textfield: edits CHANGED|HANDLED|REDRAW, moves
 * HANDLED|REDRAW, HANDLED alone when nothing happens):
 *   printable code points insert; Enter ('\r', '\n', KEY_ENTER) splits the
 *   line;
 *   Left/Right, Ctrl-B/F move by character and cross line ends;
 *   Up/Down, Ctrl-P/N move by line keeping the column in cells (the column
 *   reached by the last sideways move); PgUp/PgDn move by the visible
 *   height. On the first line Up/Ctrl-P/PgUp, and on the last line
 *   Down/Ctrl-N/PgDn, are IGNORED so the form moves focus;
 *   Home/End, Ctrl-A/E: start / end of the line; Alt-< / Alt->: start / end
 *   of the text; Alt-B/F: words within the line;
 *   Backspace (KEY_BACKSPACE, 127, Ctrl-H) joins with the line above at a
 *   line start; Delete (KEY_DC, Ctrl-D) joins with the line below at a line
 *   end; Ctrl-K kills to the end of the line, or the line break when at the
 *   end; Ctrl-U kills to the start of the line; Ctrl-W kills back to a
 *   space; Ctrl-Y yanks the last kill (line breaks included);
 *   Tab and Shift-Tab (KEY_BTAB) are IGNORED: they move between fields.
 * Every other key, and every key while disabled, is IGNORED.
 */
#ifndef WIDGETS_TEXTAREA_H
#define WIDGETS_TEXTAREA_H

#include <stdbool.h>
#include <stddef.h>

#include "widgets/widget.h"

struct textarea;

/*
 * An area holding initial (NULL for empty; "\r\n" is read as a line break)
 * that shows `lines` lines (at least 1) and holds at most max_chars code
 * points, line breaks included (0: no limit). The cursor starts at the top
 * of the text. Free with textarea_free or widget->ops->destroy.
 */
struct textarea *textarea_new(const char *initial, int lines, size_t max_chars);
void textarea_free(struct textarea *ta);

/* The area as a widget (the first member), and back (NULL if not an area). */
struct widget *textarea_widget(struct textarea *ta);
struct textarea *textarea_from_widget(struct widget *wd);

/* The value as UTF-8, lines joined by '\n'; valid until the next change. */
const char *textarea_value(const struct textarea *ta);
/* Replaces the value (cut at max_chars), cursor at the top; sets dirty. */
void textarea_set(struct textarea *ta, const char *utf8);

/* Text shown dim while the value is empty ('\n' breaks lines; NULL: none). */
void textarea_set_placeholder(struct textarea *ta, const char *utf8);
/* Shows a dim gutter of line numbers left of the text. */
void textarea_set_line_numbers(struct textarea *ta, bool on);

/* Number of lines of text (at least 1). */
size_t textarea_line_count(const struct textarea *ta);
/*
 * The cursor: its line (from 0) and its cell column in that line, before
 * any scroll. Either pointer may be NULL.
 */
void textarea_cursor(const struct textarea *ta, size_t *line, int *col);
/* The first line shown at the last draw. */
size_t textarea_top(const struct textarea *ta);

#endif
