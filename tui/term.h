/*
 * term: the terminal while curses owns it — start and stop (the terminal is
 * restored on every exit path, fatal ones included), the theme turned into
 * colour pairs and a widget palette, and keys read as widget_keys.
 */
#ifndef TUI_TERM_H
#define TUI_TERM_H

#include <stdbool.h>

#include "themes/theme.h"
#include "widgets/widget.h"

struct term {
    struct theme *theme;
    enum theme_depth depth;
    bool utf8;
    attr_t role[THEME_ROLE_COUNT]; /* each role as curses attributes with its pair */
    struct widget_palette palette;
};

/* Starts curses on the terminal with the named theme (NULL: built-in). */
int term_start(struct term *t, const char *theme_name, char *err, size_t errsz);
/* Switches to the named scheme (a name or a path); -1 with why in err, the old kept. */
int term_set_theme(struct term *t, const char *name, char *err, size_t errsz);
/*
 * After SIGWINCH: curses takes the new size and the screen is redrawn
 * whole; the keypad stays in the mode whose keys curses reads.
 */
void term_resize(void);
/*
 * Curses steps aside for another program on the terminal (a shell in a
 * worker, the wizard) and takes it back after: whatever that program left,
 * term_resume brings back the size, the keypad mode, bracketed paste and a
 * whole screen at the next refresh.
 */
void term_suspend(void);
void term_resume(void);
/* Leaves curses and restores the terminal (safe to call twice). */
void term_stop(struct term *t);
/*
 * Reads one pending key without waiting; false when none is pending. Alt-x
 * (ESC then x in one burst) becomes k->alt, and so do Alt-arrows and
 * Alt-Delete, which terminals send as keys of their own (kUP3, kDC3, …).
 */
bool term_read_key(struct widget_key *k);
/*
 * Bracketed paste (turned on by term_start, off by term_stop): a paste
 * arrives between these two function keys, so a screen can keep a pasted
 * line break from acting as Enter. Far above the codes curses gives the
 * terminal's own extended keys.
 */
#define TERM_KEY_PASTE_BEGIN (KEY_MAX + 0x1000)
#define TERM_KEY_PASTE_END (KEY_MAX + 0x1001)

#endif
