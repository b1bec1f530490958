/*
 * wizard: the create-task form as a screen — a section list on the left
 * (each marked valid / errors / warnings with counts), the current
 * section's fields on the right, validated inline with the same rules as
 * `trainjob validate` and trainjobd. The catalog (workspaces, pools,
 * specs, images) comes from the backend; nothing here is a constant list.
 *
 * The wizard owns its forms and a struct jobspec it rebuilds from the
 * fields on every change; the owner (tui/cmd_new.c) runs the loop, draws
 * when dirty and submits when asked.
 */
#ifndef TUI_WIZARD_H
#define TUI_WIZARD_H

#include <stdbool.h>

#include "widgets/widget.h"

struct catalog;
struct findings;
struct jobspec;
struct term;
struct wizard;

enum wizard_action {
    WIZARD_NONE,
    WIZARD_SUBMIT, /* Ctrl-S, or Enter on the review page */
    WIZARD_QUIT,   /* Esc at the top level (the owner confirms when there are changes) */
};

/* A wizard over cat, prefilled from initial (NULL: an empty job). */
struct wizard *wizard_new(const struct catalog *cat, const struct jobspec *initial,
                          const char *default_workspace);
void wizard_free(struct wizard *wz);

/* A key; returns what the owner should do next. */
enum wizard_action wizard_key(struct wizard *wz, const struct widget_key *k);
/* Runs the debounced validation (the owner calls it from a timer). */
void wizard_validate(struct wizard *wz);
/* True when a change waits for validation. */
bool wizard_validation_pending(const struct wizard *wz);
bool wizard_dirty(const struct wizard *wz);
bool wizard_changed(const struct wizard *wz); /* edited since it opened */
/* Draws the whole screen into stdscr (one doupdate by the caller). */
void wizard_draw(struct wizard *wz, const struct term *t, const char *status);
/* The job as the fields say now. */
const struct jobspec *wizard_job(struct wizard *wz);
/* Errors in the current job (after wizard_validate). */
size_t wizard_error_count(const struct wizard *wz);
/* Puts a server's rejection next to the field it names and shows its section. */
void wizard_show_error(struct wizard *wz, const char *field, const char *message);

#endif
