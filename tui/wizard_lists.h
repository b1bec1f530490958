/*
 * wizard_lists: the wizard's three lists — environment variables (env[]),
 * data mounts (mount[]) and fault-tolerance rules (fault_tolerance.rules[]).
 * Each is a widgets/listedit whose rows are small sub-forms this module
 * owns: two or three widgets (text fields, a select, a toggle), the field
 * with the focus, and the message validation put on each field.
 *
 * The wizard (tui/wizard.c) adds the list's widget to a section's form,
 * writes the rows into the job it validates (wlist_store), places findings
 * under a row ("env[2].key") on that row's field (wlist_claim +
 * wlist_set_message), and anchors the popup of a row's open select.
 *
 * Keys inside a row: the focused field first; Tab / Shift-Tab (and, in
 * rows laid out one field per line, Down / Up) move between the row's
 * fields, then on to the next / previous row; what the fields ignore goes
 * to the list (Alt-N / Insert adds, Alt-D / Alt-Delete removes, Alt-Up /
 * Alt-Down moves the row).
 */
#ifndef TUI_WIZARD_LISTS_H
#define TUI_WIZARD_LISTS_H

#include <stdbool.h>
#include <stddef.h>

#include "widgets/form.h"
#include "widgets/widget.h"

struct catalog;
struct jobspec;
struct select;
struct wlist;

enum wlist_kind {
    WLIST_ENV,   /* env[]: name = value */
    WLIST_MOUNT, /* mount[]: volume, directory, mount path */
    WLIST_RULE,  /* fault_tolerance.rules[]: exit codes, action, mark node */
};

/* The kind of list whose finding path is path ("mount"); false for none. */
bool wlist_kind_of(const char *path, enum wlist_kind *kind);
/*
 * A list of kind prefilled from init's elements (init NULL: empty); cat
 * gives the volumes a mount row chooses from (NULL: none). The list's
 * widget goes to a form, which destroys it; wlist_free frees the rows.
 */
struct wlist *wlist_new(enum wlist_kind kind, const struct catalog *cat,
                        const struct jobspec *init);
void wlist_free(struct wlist *l);

struct widget *wlist_widget(struct wlist *l);
/* The finding path of the list as a whole: "env", "mount", "fault_tolerance.rules". */
const char *wlist_path(const struct wlist *l);
size_t wlist_count(const struct wlist *l);

/* Replaces job's elements of the list's kind with what the rows say. */
void wlist_store(const struct wlist *l, struct jobspec *job);

/*
 * True when path names a row of this list ("mount[1].mount_path",
 * "env[0]"): the row and its field through *row and *field (the row's first
 * field when the path names none of them).
 */
bool wlist_claim(const struct wlist *l, const char *path, size_t *row, size_t *field);
void wlist_clear_messages(struct wlist *l);
/* Shows text under field of row, unless the field already shows something more severe. */
void wlist_set_message(struct wlist *l, size_t row, size_t field, enum form_severity severity,
                       const char *text);

/* Focuses field of row (a finding's place, a server's rejection). */
void wlist_focus(struct wlist *l, size_t row, size_t field);
/* The form's focus came to the list: the first row's first field, or from below the last's last. */
void wlist_enter(struct wlist *l, bool from_below);
/* Identifies the focused row and field: it changes when the focus moves inside the list. */
size_t wlist_focus_id(const struct wlist *l);
/* The help for the focused field, with the list's keys. */
const char *wlist_help(struct wlist *l);

/* The focused row's select when its popup is open, with where it was drawn (form pad). */
struct select *wlist_open_select(struct wlist *l, int *y, int *x, int *w);
/* Closes any open popup in the list. */
void wlist_close_popups(struct wlist *l);
/* The roles rows draw with (held by pointer) and whether the terminal shows UTF-8. */
void wlist_set_palette(struct wlist *l, const struct widget_palette *pal, bool utf8);

/* Mount rows: the typed mount path and the chosen volume (NULL: none). */
const char *wlist_mount_path(const struct wlist *l, size_t row);
const char *wlist_mount_volume(const struct wlist *l, size_t row);
/* Mount rows: volumes outside zone (NULL: any zone) are offered disabled, with the reason. */
void wlist_set_zone(struct wlist *l, const char *zone);

#endif
