/*
 * session: a resolved context and the backend it opens — what every verb
 * and screen that talks to a server starts from (tui/cmd_jobs.c).
 */
#ifndef TUI_SESSION_H
#define TUI_SESSION_H

#include <stdio.h>

#include "api/backend.h"
#include "api/context.h"

struct cli_globals;

struct session {
    struct resolved_context rc;
    struct backend *b;
};

/* Resolves the context and opens its backend; prints why not to err and returns EXIT_USAGE. */
int session_open(const struct cli_globals *g, struct session *s, FILE *err);
void session_close(struct session *s);

#endif
