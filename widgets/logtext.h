/*
 * logtext: a log line in terminal cells — how the log view
 * (widgets/logview.c) measures, wraps and draws one line. See logtext.c.
 */
#ifndef WIDGETS_LOGTEXT_H
#define WIDGETS_LOGTEXT_H

#include <curses.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "widgets/widget.h"

struct strbuf;

#define LOGTEXT_TAB_CELLS 8

/* Draws in a palette role (its colour pair included). */
void logtext_use_role(WINDOW *win, attr_t a);

/* Where the wrapped row of w cells starting at byte from of s ends. */
size_t logtext_row_end(const char *s, size_t len, size_t from, int w);
/* Rows line s takes at text width w (1 without wrap). */
int logtext_rows(const char *s, size_t len, int w, bool wrap);
/* Cells a whole line takes unwrapped. */
int logtext_cells(const char *s, size_t len);

/* Draws s at (y, x) clipped to w cells; returns the cells used. */
int logtext_put(WINDOW *win, int y, int x, int w, const char *s, size_t len);
/* Blanks w cells at (y, x). */
void logtext_blank(WINDOW *win, int y, int x, int w);

/* Search matches in one line, found lazily as the drawing moves right. */
struct logtext_highlight {
    const char *s;
    size_t len;
    const char *needle;
    size_t nlen;
    size_t start, end; /* the current match [start, end); start == len: none left */
};
/* The matches of needle nd (empty: none) in line s. */
void logtext_highlight_init(struct logtext_highlight *h, const char *s, size_t len,
                            const struct strbuf *nd);

/*
 * Draws the units of s[from, to) in w cells at (y, x), skipping the first
 * `skip` cells of text (the sideways scroll); matches (hl) in pal's
 * selected role, the rest in its normal role. Cells no unit covers are
 * blanked, each cell written once.
 */
void logtext_draw_row(const struct widget_palette *pal, WINDOW *win, int y, int x, int w,
                      const char *s, size_t from, size_t to, int skip,
                      struct logtext_highlight *hl);

#endif
