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
#include "api/finding.h"
#include "util/strbuf.h"

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

/*
 * A context resolved once, for a verb that reads it before it opens the
 * backend (submit checks the file with the context's workspace, then
 * opens): one read of the config file and its token per process.
 */
struct session_context {
    int resolved;              /* context_resolve's status: 0, or -1 (why in fs, why) */
    bool taken;                /* rc moved into a session by session_open_resolved */
    struct resolved_context rc;
    struct findings fs;
    struct strbuf why;
};
/* Resolves t's context into sc (always released with session_context_free). */
void session_resolve(const struct session_target *t, struct session_context *sc);
/* The context sc resolved, or NULL when it did not resolve or a session took it. */
const struct resolved_context *session_context_of(const struct session_context *sc);
/*
 * session_open with sc resolved already: says sc's findings and failure as
 * session_open does, and on success moves sc's context into s (sc->taken).
 */
int session_open_resolved(struct session_context *sc, struct session *s, FILE *err);
void session_context_free(struct session_context *sc);

/* session_open's failure: 2, the command line's usage/I-O exit status. */
#define SESSION_FAILED 2

#endif
