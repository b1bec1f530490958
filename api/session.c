/*
 * session: resolves a context (api/context) and opens its backend
 * (api/backend) — moved out of the CLI's verbs so the live screens
 * (tui/monitor.c, the `:ctx` command) open one the same way. See session.h.
 */
#include "api/session.h"

#include <stdlib.h>
#include <string.h>

#include "api/finding.h"
#include "util/strbuf.h"
#include "util/utf8.h"

/* Appends text from outside (a server, a file) made safe for a terminal. */
static void add_clean(struct strbuf *sb, const char *s)
{
    if (s)
        utf8_sanitize(sb, s, strlen(s), 0);
}

void session_resolve(const struct session_target *t, struct session_context *sc)
{
    memset(sc, 0, sizeof *sc);
    struct context_request req = {NULL, t->context, t->endpoint, getenv("TRAINJOB_ENDPOINT"),
                                  t->workspace};
    sc->fs = (struct findings)FINDINGS_INIT;
    sc->why = (struct strbuf)STRBUF_INIT;
    sc->resolved = context_resolve(&req, &sc->rc, &sc->fs, &sc->why);
}

const struct resolved_context *session_context_of(const struct session_context *sc)
{
    return sc->resolved == 0 && !sc->taken ? &sc->rc : NULL;
}

void session_context_free(struct session_context *sc)
{
    if (!sc->taken)
        resolved_context_free(&sc->rc);
    findings_free(&sc->fs);
    strbuf_free(&sc->why);
    memset(sc, 0, sizeof *sc);
}

int session_open_resolved(struct session_context *sc, struct session *s, FILE *err)
{
    memset(s, 0, sizeof *s);
    if (sc->taken) {
        fputs("trainjob: the context was opened already\n", err);
        return SESSION_FAILED;
    }
    /* Errors about the file, or warnings (a secret key file others may read). */
    for (size_t i = 0; i < sc->fs.count; i++) {
        const struct finding *f = &sc->fs.items[i];
        struct strbuf line = STRBUF_INIT;
        add_clean(&line, sc->rc.config_path);
        if (f->line > 0)
            strbuf_addf(&line, ":%d:%d", f->line, f->col);
        strbuf_addf(&line, ": %s: ", severity_name(f->severity));
        if (f->path[0]) {
            add_clean(&line, f->path);
            strbuf_adds(&line, ": ");
        }
        add_clean(&line, f->message);
        fprintf(err, "%s\n", strbuf_str(&line));
        strbuf_free(&line);
    }
    if (sc->resolved != 0) {
        if (sc->why.len) {
            struct strbuf line = STRBUF_INIT;
            add_clean(&line, strbuf_str(&sc->why));
            fprintf(err, "trainjob: %s\n", strbuf_str(&line));
            strbuf_free(&line);
        }
        return SESSION_FAILED;
    }
    s->rc = sc->rc;
    sc->taken = true;
    struct strbuf why = STRBUF_INIT;
    int rc = 0;
    if ((s->b = backend_open(&s->rc, &why)) == NULL) {
        struct strbuf line = STRBUF_INIT;
        add_clean(&line, strbuf_str(&why));
        fprintf(err, "trainjob: %s\n", strbuf_str(&line));
        strbuf_free(&line);
        resolved_context_free(&s->rc);
        rc = SESSION_FAILED;
    }
    strbuf_free(&why);
    return rc;
}

int session_open(const struct session_target *t, struct session *s, FILE *err)
{
    struct session_context sc;
    session_resolve(t, &sc);
    int rc = session_open_resolved(&sc, s, err);
    session_context_free(&sc);
    return rc;
}

void session_close(struct session *s)
{
    backend_free(s->b);
    resolved_context_free(&s->rc);
    memset(s, 0, sizeof *s);
}
