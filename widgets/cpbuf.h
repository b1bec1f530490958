/*
 * cpbuf: a growable array of Unicode code points, and the character units
 * and words the text widgets (textfield, textarea) edit it by.
 *
 * A unit is a base code point and the marks after it: a code point of
 * width 0 (a combining mark, a zero-width joiner) is drawn in the cell of
 * the one before it, so a cursor only stands at the start of a unit.
 * Words follow readline: letters and digits of any script.
 * cpbuf_draw_unit draws one unit into a curses window.
 */
#ifndef WIDGETS_CPBUF_H
#define WIDGETS_CPBUF_H

#include <curses.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Zero-initialized: empty. */
struct cpbuf {
    uint32_t *cp;
    size_t len;
    size_t cap;
};

/* Inserts n code points of src at index at, growing the array. */
void cpbuf_insert(struct cpbuf *b, size_t at, const uint32_t *src, size_t n);

/* Removes the code points [from, to). */
void cpbuf_erase(struct cpbuf *b, size_t from, size_t to);

/* Replaces b with the code points of a UTF-8 string (NULL: empty), at most max (0: all). */
void cpbuf_set_utf8(struct cpbuf *b, const char *s, size_t max);

/* Frees the array; b is empty after. */
void cpbuf_free(struct cpbuf *b);

/* A code point drawn in the cell of the one before it. */
bool cpbuf_is_mark(uint32_t cp);

/* Start of the unit after the one at i (len at the end). */
size_t cpbuf_next_unit(const struct cpbuf *b, size_t i);

/* Start of the unit before index i (0 at the start). */
size_t cpbuf_prev_unit(const struct cpbuf *b, size_t i);

/* Spaces that separate words, ASCII and Unicode. */
bool cpbuf_is_space(uint32_t cp);

/* Anything but cpbuf_is_space (Ctrl-W's words). */
bool cpbuf_not_space(uint32_t cp);

/* Letters and digits of any script; ASCII and CJK punctuation and spaces are not. */
bool cpbuf_is_word(uint32_t cp);

/* Code points a person may type: no C0/C1 controls, DEL, bidi controls, surrogates. */
bool cpbuf_is_insertable(int code);

/*
 * Start of the word before pos: back over units not in_word, then over
 * those that are (readline's backward-word with cpbuf_is_word,
 * unix-word-rubout with cpbuf_not_space).
 */
size_t cpbuf_word_start(const struct cpbuf *b, size_t pos, bool (*in_word)(uint32_t));

/* End of the word at or after pos (readline's forward-word). */
size_t cpbuf_word_end(const struct cpbuf *b, size_t pos);

/*
 * Draws the unit b->cp[i..end) at (y, x): its base and as many of its marks
 * as a cell holds, or the mask alone (0: none). A lone mark goes on a dotted
 * circle, a control character shows as U+FFFD.
 */
void cpbuf_draw_unit(WINDOW *win, int y, int x, const struct cpbuf *b, size_t i, size_t end,
                     uint32_t mask);

#endif
