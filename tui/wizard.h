/*
 * wizard: the create-task form as a screen — a section list on the left
 * (each marked valid / errors / warnings with counts), the current
 * section's fields on the right, validated inline with the same rules as
 * `trainjob validate` and trainjobd. The catalog (workspaces, pools,
 * specs, images) comes from the backend; nothing here is a constant list.
 *
 * The wizard owns its forms and a struct jobspec it rebuilds from the
 * fields on every change; the owner (tui/wizard_app.c) runs the loop, draws
 * when dirty and submits when asked.
 */
#ifndef TUI_WIZARD_H
#define TUI_WIZARD_H

#include <stdbool.h>

#include "widgets/widget.h"

struct catalog;
struct finding;
struct findings;
struct jobspec;
struct keymap;
struct term;
struct wizard;

/* What the owner does after a key; the keys are the keymap's "wizard" mode. */
enum wizard_action {
    WIZARD_NONE,
    WIZARD_SUBMIT, /* submit, or Enter on the review page */
    WIZARD_QUIT,   /* the owner confirms when there are changes */
    WIZARD_HELP,
    WIZARD_SAVE,
    WIZARD_LOAD,
    WIZARD_REDRAW,
    WIZARD_NEW_WORKSPACE, /* "new workspace…" chosen: ask for a name, create it */
};

/*
 * A wizard over cat, prefilled from initial (NULL: an empty job), its keys
 * from km (held by pointer: it must outlive the wizard).
 */
struct wizard *wizard_new(const struct catalog *cat, const struct jobspec *initial,
                          const char *default_workspace, const struct keymap *km);
void wizard_free(struct wizard *wz);

/*
 * A key; returns what the owner should do next. A key the keymap binds in
 * "wizard" (or global) acts before the focused field sees it, except a
 * character and Esc: those go to the field first ('?' types itself in a
 * text field, Esc closes an open list) and act only when it ignores them.
 */
enum wizard_action wizard_key(struct wizard *wz, const struct widget_key *k);
/* Runs the debounced validation (the owner calls it from a timer). */
void wizard_validate(struct wizard *wz);
/*
 * How validation asks whether a name is already used in a workspace
 * (api/validate.h's name_taken): the caller answers from what it knows and
 * may ask the backend meanwhile, then validate again. NULL: never checked.
 */
void wizard_set_name_check(struct wizard *wz,
                           bool (*taken)(void *ctx, const char *workspace, const char *name),
                           void *ctx);
/* True when a change waits for validation. */
bool wizard_validation_pending(const struct wizard *wz);
bool wizard_dirty(const struct wizard *wz);
bool wizard_changed(const struct wizard *wz); /* edited since it opened */
/* Draws the whole screen into stdscr (one doupdate by the caller). */
void wizard_draw(struct wizard *wz, const struct term *t, const char *status);
/*
 * The name the job is submitted under while Name is empty (shown as its
 * placeholder and on Review, so the person knows it before submitting);
 * NULL when a name is typed.
 */
const char *wizard_generated_name(const struct wizard *wz);
/* True when the focused field takes more than one line (the startup script). */
bool wizard_focus_multiline(const struct wizard *wz);
/* The job as the fields say now. */
const struct jobspec *wizard_job(struct wizard *wz);
/* The path of the field that has the focus (as findings name it), or NULL (Review, a note). */
const char *wizard_focused_path(const struct wizard *wz);
/* Errors in the current job (after wizard_validate). */
size_t wizard_error_count(const struct wizard *wz);
/*
 * What reading the job file the form was opened with found wrong (a value
 * of the wrong type, …): each finding on a field is shown under it, "line
 * N: …", counted in its section and listed on Review, until that field is
 * edited. Findings no field shows (an unknown field) are listed on Review
 * with their line, as warnings: the form leaves them out of the job.
 * Returns how many findings no field shows, the first of them through
 * *first (NULL: not wanted).
 */
size_t wizard_set_file_findings(struct wizard *wz, const struct findings *fs,
                                const struct finding **first);
/*
 * Whether the form has edits to keep: false once saved to a file (until the
 * next edit), true when it carries an earlier wizard's (over a new catalog).
 */
void wizard_set_changed(struct wizard *wz, bool changed);
/* Puts a server's rejection next to the field it names and shows its section. */
void wizard_show_error(struct wizard *wz, const char *field, const char *message);

/* The last entry of the workspace list: create one (WIZARD_NEW_WORKSPACE). */
#define WIZARD_NEW_WORKSPACE_LABEL "new workspace…"

#endif
