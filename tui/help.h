/*
 * help: the full-screen list of keys a screen has — every binding of its
 * keymap mode, then those it takes from "global", each with its action's
 * name (what a user writes in ~/.config/trainjob/keys) and its one line of
 * help. Generated from the keymap, so a user's rebinding shows.
 *
 * Any screen opens it with its mode ("wizard", "jobs", …), passes it the
 * keys while it is open, and draws it instead of itself. It scrolls when it
 * is taller than the screen (Up/Down, PgUp/PgDn, Space, Home/End) and closes
 * on Esc, q, F1 or whatever opens the help in that mode.
 */
#ifndef TUI_HELP_H
#define TUI_HELP_H

#include <stdbool.h>

#include "widgets/widget.h"

struct keymap;
struct term;
struct help;

/*
 * The help for mode over km (read now: later rebinding does not show).
 * note (NULL: none) is more text shown after the bindings, '\n' between
 * lines: keys a screen's widgets have of their own, problems in the user's
 * keys file. It is sanitized here.
 */
struct help *help_new(const struct keymap *km, const char *mode, const char *note);
void help_free(struct help *h);

/* A key while the help is open; true when it closed the help (free it then). */
bool help_key(struct help *h, const struct widget_key *k);
/* Draws the help over the whole of stdscr (one doupdate by the caller). */
void help_draw(struct help *h, const struct term *t);

#endif
