/*
 * session: a resolved context and the backend it opens — what every verb
 * (cli/) and screen (tui/) that talks to a server starts from. The target
 * is what the user chose (--workspace, --context, --endpoint); api/context
 * resolves it against the config file and $TRAINJOB_ENDPOINT.
 */
#ifndef API_SESSION_H
#define API_SESSION_H

#include <stdio.h>

#include "api/backend.h"
#include "api/context.h"

/* The server and workspace asked for; NULL fields: the config's (or the local engine). */
struct session_target {
    const char *workspace; /* --workspace: the default for files that name none */
    const char *context;   /* --context NAME: a context of ~/.config/trainjob/config.yaml */
    const char *endpoint;  /* --endpoint URL: talk to this server (never started on demand) */
};

struct session {
    struct resolved_context rc;
    struct backend *b;
};

/*
 * Resolves the context and opens its backend. On failure prints why to err
 * (sanitized, naming the config file position) and returns SESSION_FAILED.
 */
int session_open(const struct session_target *t, struct session *s, FILE *err);
void session_close(struct session *s);

/* session_open's failure: 2, the command line's usage/I-O exit status. */
#define SESSION_FAILED 2

#endif
