/*
 * keymap: key bindings as data — per mode, a key maps to a named action
 * (STYLE.md habit 5, dte's binding files). The defaults are the text file
 * tui/default.keys, compiled in; the user's ~/.config/trainjob/keys is read
 * after it by the same parser, so a user overrides a default by binding the
 * key again, or removes one with unbind.
 *
 * The format, one command a line; '#' starts a comment line, and a word
 * starting with '#' after a complete command starts a trailing comment:
 *
 *   bind MODE KEY ACTION      KEY in MODE does ACTION (replaces what it did)
 *   unbind MODE KEY           KEY in MODE does nothing of its own again
 *                             (what "global" binds it to applies)
 *
 * Modes: global (every screen), wizard, jobs, job, logs, metrics. A key a mode does
 * not bind falls back to global; `bind MODE KEY none` stops that.
 * Keys: a character ("q", "?", "/"), "C-x" (Ctrl), "M-x" (Alt, also "M-Left"
 * and other named keys), F1 … F12, Enter, Esc, Tab, S-Tab, Space, Backspace,
 * Insert, Delete, Home, End, PgUp, PgDn, Up, Down, Left, Right, S-Left,
 * S-Right, S-Up, S-Down.
 *
 * Screens ask keymap_lookup for the action of a key in their mode and do it;
 * keys a widget edits with (Ctrl-A/E/K/U/W in a text field) are not here:
 * they stay inside the widgets. The help screen (tui/help.c) and key bars
 * list what the keymap says, so a user's rebinding shows there too.
 */
#ifndef TUI_KEYMAP_H
#define TUI_KEYMAP_H

#include <stdbool.h>
#include <stddef.h>

#include "widgets/widget.h"

struct strbuf;

/* What a key can do. Adding one is a row in keymap.c's action table. */
enum keymap_action {
    KEYMAP_NONE, /* nothing: also what `bind MODE KEY none` binds */
    /* everywhere */
    KEYMAP_HELP,
    KEYMAP_QUIT,
    KEYMAP_REDRAW,
    /* the create-task wizard */
    KEYMAP_SUBMIT,
    KEYMAP_NEXT_SECTION,
    KEYMAP_PREV_SECTION,
    KEYMAP_SAVE,
    KEYMAP_LOAD,
    /* the monitoring screens: job list, one job, a worker's log */
    KEYMAP_OPEN,
    KEYMAP_BACK,
    KEYMAP_NEW_JOB,
    KEYMAP_FILTER,
    KEYMAP_REFRESH,
    KEYMAP_STOP_JOB,
    KEYMAP_START_JOB,
    KEYMAP_DELETE_JOB,
    KEYMAP_LOGS,
    KEYMAP_SEARCH,
    KEYMAP_SEARCH_NEXT,
    KEYMAP_SEARCH_PREV,
    KEYMAP_FOLLOW,
    KEYMAP_TOP,
    KEYMAP_BOTTOM,
    KEYMAP_FAULTY_ONLY,
    KEYMAP_PRIORITY,
    KEYMAP_CLONE,
    KEYMAP_MARK_NODE,
    KEYMAP_UNMARK_NODE,
    KEYMAP_START_ENGINE,
    KEYMAP_COMMAND,
    KEYMAP_PANE_NEXT,
    KEYMAP_PANE_PREV,
    KEYMAP_WRAP,
    KEYMAP_FIRST_ERROR,
    KEYMAP_ALL_WORKERS,
    KEYMAP_DESCRIBE,
    /* the Metrics pane of a job */
    KEYMAP_METRICS,
    KEYMAP_FULLSCREEN,
    KEYMAP_SMOOTH_MORE,
    KEYMAP_SMOOTH_LESS,
    KEYMAP_LOG_Y,
    KEYMAP_ZOOM_IN,
    KEYMAP_ZOOM_OUT,
    KEYMAP_COPY_NAME,
    KEYMAP_COLUMNS,
    KEYMAP_MINE,
    KEYMAP_SAVE_LOG,
    /* the job list's table */
    KEYMAP_MARK,
    KEYMAP_SORT_PREV,
    KEYMAP_SORT_NEXT,
    KEYMAP_SORT_REVERSE,
    /* the Metrics pane's own (mode "metrics") */
    KEYMAP_CHART,
    KEYMAP_CURSOR_LEFT,
    KEYMAP_CURSOR_RIGHT,
    /* the Workers pane of a job */
    KEYMAP_SHELL,
    KEYMAP_ACTION_COUNT
};

struct keymap; /* opaque: the bindings of every mode */

/* The defaults (tui/default.keys) alone. */
struct keymap *keymap_new_default(void);
void keymap_free(struct keymap *km);

/*
 * Applies text (len bytes, need not be NUL-terminated) over km, as if read
 * from file. A bad line is skipped and reported in err as
 * "FILE:LINE:COL: message", one a line, naming the bad word (with "did you
 * mean …?" when one is close); the good lines still apply. Returns the
 * number of bad lines.
 */
size_t keymap_parse(struct keymap *km, const char *text, size_t len, const char *file,
                    struct strbuf *err);
/*
 * keymap_parse over the file at path, reported as display (NULL: path). A
 * missing file is no error (0); one that cannot be read is one, in err.
 */
size_t keymap_load(struct keymap *km, const char *path, const char *display, struct strbuf *err);

/*
 * The user's keys file: $XDG_CONFIG_HOME/trainjob/keys (~/.config/... by
 * default); with tilde, a leading $HOME written "~", to show.
 */
char *keymap_user_file(bool tilde);

/*
 * What k does in mode: mode's own binding, else global's. KEYMAP_NONE for
 * nothing, and for a mode keymap does not know.
 */
enum keymap_action keymap_lookup(const struct keymap *km, const char *mode,
                                 const struct widget_key *k);
/* What k does by mode's own binding alone (global's not asked); KEYMAP_NONE for none. */
enum keymap_action keymap_lookup_own(const struct keymap *km, const char *mode,
                                     const struct widget_key *k);

/*
 * Appends to out the keys that do action in mode, joined by ", ": those of
 * mode's own bindings when own, else those mode takes from global (global
 * keys mode binds to something else are left out). Returns how many.
 */
size_t keymap_keys_for(const struct keymap *km, const char *mode, enum keymap_action action,
                       bool own, struct strbuf *out);
/* The first key that does action in mode (its own, then global's) into buf; false if none. */
bool keymap_first_key(const struct keymap *km, const char *mode, enum keymap_action action,
                      char *buf, size_t size);

/* "submit"; NULL out of range. */
const char *keymap_action_name(enum keymap_action action);
/* The one line the help screen shows for the action. */
const char *keymap_action_help(enum keymap_action action);
/* The action named name, or -1. */
int keymap_action_from_name(const char *name);

/* The modes, in the order help screens list them; NULL-terminated. */
extern const char *const keymap_modes[];
/* A line saying what mode is ("the create-task form"); NULL for an unknown mode. */
const char *keymap_mode_help(const char *mode);

/* Parses a key name ("C-s", "M-Left", "?", "F2"); false when it names no key. */
bool keymap_key_parse(const char *name, struct widget_key *k);
/*
 * The name of k as the file writes it, into buf (at least KEYMAP_KEY_NAME_MAX
 * bytes); keys that are the same to keymap_lookup get the same name
 * ('\n' and KEY_ENTER are Enter, 127 and KEY_BACKSPACE are Backspace).
 */
#define KEYMAP_KEY_NAME_MAX 24
void keymap_key_name(const struct widget_key *k, char *buf, size_t size);
/* True for a key that types a character into a text field (no Ctrl, no Alt). */
bool keymap_key_is_text(const struct widget_key *k);

#endif
