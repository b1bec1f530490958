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

int session_open(const struct session_target *t, struct session *s, FILE *err)
{
    memset(s, 0, sizeof *s);
    struct context_request req = {NULL, t->context, t->endpoint, getenv("TRAINJOB_ENDPOINT"),
                                  t->workspace};
    struct findings fs = FINDINGS_INIT;
    struct strbuf why = STRBUF_INIT;
    int rc = 0;
    int resolved = context_resolve(&req, &s->rc, &fs, &why);
    /* Errors about the file, or warnings (a secret key file others may read). */
    for (size_t i = 0; i < fs.count; i++) {
        const struct finding *f = &fs.items[i];
        struct strbuf line = STRBUF_INIT;
        add_clean(&line, s->rc.config_path);
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
    if (resolved != 0) {
        if (why.len) {
            struct strbuf line = STRBUF_INIT;
            add_clean(&line, strbuf_str(&why));
            fprintf(err, "trainjob: %s\n", strbuf_str(&line));
            strbuf_free(&line);
        }
        rc = SESSION_FAILED;
    } else if ((s->b = backend_open(&s->rc, &why)) == NULL) {
        struct strbuf line = STRBUF_INIT;
        add_clean(&line, strbuf_str(&why));
        fprintf(err, "trainjob: %s\n", strbuf_str(&line));
        strbuf_free(&line);
        rc = SESSION_FAILED;
    }
    findings_free(&fs);
    strbuf_free(&why);
    if (rc != 0)
        resolved_context_free(&s->rc);
    return rc;
}

void session_close(struct session *s)
{
    backend_free(s->b);
    resolved_context_free(&s->rc);
    memset(s, 0, sizeof *s);
}
