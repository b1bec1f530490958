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

#include "tui/keymap.h"
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
/*
 * The same for a screen whose focused part has a sub-mode of its own (sub,
 * NULL: none; "logs" on the Logs pane): sub's bindings first, then mode's
 * and global's that sub leaves alone, so a key is listed once, for what it
 * does there. shown (NULL: all) says which actions the screen has now (a
 * --readonly screen has no stop-job); the others are left out. The key
 * bar and the key dispatch read the same keymap and the same shown.
 */
struct help *help_new_for(const struct keymap *km, const char *mode, const char *sub,
                          const char *note, bool (*shown)(void *ctx, enum keymap_action a),
                          void *ctx);
void help_free(struct help *h);

/* A key while the help is open; true when it closed the help (free it then). */
bool help_key(struct help *h, const struct widget_key *k);
/* Draws the help over the whole of stdscr (one doupdate by the caller). */
void help_draw(struct help *h, const struct term *t);

#endif
