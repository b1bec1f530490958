/*
 * tui: the full-screen programs, one entry point each — all that cli/ may
 * know of tui/. The verbs parse the command line (cli/cmd_new.c,
 * cli/cmd_top.c), check for a terminal, and hand over here; each program
 * owns the terminal and its event loop until it returns an exit status
 * (util/exitstatus.h).
 */
#ifndef TUI_TUI_H
#define TUI_TUI_H

#include <stdbool.h>
#include <stdio.h>

#include "api/session.h"
#include "util/exitstatus.h"

/* `trainjob top` (and bare `trainjob` in a terminal): the live jobs view. */
struct tui_top_opts {
    struct session_target target;
    bool readonly;     /* no actions, only looking */
    int refresh_s;     /* polling period where the backend cannot stream */
    const char *theme; /* NULL: the context's, else the default */
    const char *job;   /* open this job's screen as soon as it is seen */
};
/* Runs the jobs view (tui/top.c) until the user quits; errors before it starts go to err. */
int tui_top_run(const struct tui_top_opts *o, FILE *err);

/* `trainjob new`: the create-task wizard. */
struct tui_wizard_opts {
    struct session_target target;
    const char *file;       /* prefill from this job file; NULL: empty (or the draft) */
    const char *theme;      /* NULL: the context's, else the default */
    const char *created_to; /* write a created job's name here instead of opening it */
    const char *clone_of;   /* the job the file is a clone of (its draft is "clone of X") */
};
/*
 * Runs the wizard (tui/wizard_app.c); a submitted job then opens in the
 * jobs view unless created_to is set. "job NAME created" goes to out.
 */
int tui_wizard_run(const struct tui_wizard_opts *o, FILE *out, FILE *err);

#endif
