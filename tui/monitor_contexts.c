/*
 * monitor_contexts: the contexts the live screens are over — one, or
 * several in one jobs view (`top --context a,b`, `:ctx all`): each with its
 * session, store, feed and catalog (struct monitor_ctx, tui/monitor_app.h),
 * what "a,b" and "all" name, opening their sessions all or none, ending
 * one, and what screens may ask of them (tui/app.h). Part of the app beside
 * tui/monitor.c, which uses it; it uses nothing of the core (starting a
 * context's feed is the core's: its replies come to the core).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/backend.h"
#include "api/catalog.h"
#include "api/context.h"
#include "api/session.h"
#include "tui/feed.h"
#include "tui/jobstore.h"
#include "tui/monitor_app.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

size_t monitor_context_count(const struct monitor *m)
{
    return m->nctx;
}

const char *monitor_context_name(const struct monitor *m, size_t i)
{
    const struct monitor_ctx *c = &m->ctx[i];
    if (c->name)
        return c->name;
    return c->session.rc.ctx.name ? c->session.rc.ctx.name : "";
}

struct jobstore *monitor_context_store(struct monitor *m, size_t i)
{
    return m->ctx[i].store;
}

const char *monitor_context_user(const struct monitor *m, size_t i)
{
    return m->ctx[i].catalog.user;
}

bool monitor_context_down(const struct monitor *m, size_t i, const char **why)
{
    const struct monitor_ctx *c = &m->ctx[i];
    if (c->feed == NULL) {
        *why = c->detached_down ? c->detached_down : "";
        return c->detached_down != NULL;
    }
    enum feed_state st = feed_state(c->feed);
    *why = feed_error(c->feed);
    return st == FEED_LOST || st == FEED_REFUSED;
}

void monitor_focus_context(struct monitor *m, size_t i)
{
    if (i < m->nctx) {
        m->focus = i;
        if (m->depth)
            m->screen_ctx[m->depth - 1] = i;
    }
}

/* Ends context c: its feed, store, catalog and session. */
void monitor_ctx_end(struct monitor_ctx *c)
{
    if (c->catalog_call) /* a call must end before its backend is freed */
        backend_call_cancel(c->catalog_call);
    feed_free(c->feed);
    jobstore_free(c->store);
    catalog_free(&c->catalog);
    session_close(&c->session);
    free(c->name);
    free(c->detached_down);
    memset(c, 0, sizeof *c);
}

size_t monitor_context_list(const char *spec, char **names, struct strbuf *err)
{
    char **all;
    size_t n = context_spec_names(spec, &all, err);
    if (n > MONITOR_MAX_CONTEXTS) {
        strbuf_addf(err, "--context: %zu contexts; one view shows %d at most", n,
                    MONITOR_MAX_CONTEXTS);
        for (size_t i = 0; i < n; i++)
            free(all[i]);
        n = 0;
    }
    for (size_t i = 0; i < n; i++)
        names[i] = all[i];
    free(all);
    return n;
}

/*
 * Opens a session for each context spec names into fresh (zeroed, room for
 * MONITOR_MAX_CONTEXTS); the count, or 0 with why in err and nothing open.
 */
size_t monitor_open_sessions(const struct monitor *m, const char *spec, struct monitor_ctx *fresh,
                             struct strbuf *err)
{
    char *names[MONITOR_MAX_CONTEXTS];
    size_t n = monitor_context_list(spec, names, err);
    if (n == 0)
        return 0;
    size_t opened = 0;
    for (; opened < n; opened++) {
        struct session_target t = m->target;
        t.context = names[opened];
        t.endpoint = NULL; /* each context's own */
        char *why = NULL;
        size_t why_len = 0;
        FILE *f = open_memstream(&why, &why_len);
        int rc = session_open(&t, &fresh[opened].session, f ? f : stderr);
        if (f)
            fclose(f);
        if (rc != 0) {
            /* session_open said why, as the CLI would print it: its first line. */
            const char *reason = why ? why : "";
            strbuf_addf(err, "context %s: cannot open it: %.*s", names[opened],
                        (int)strcspn(reason, "\n"), reason);
            free(why);
            break;
        }
        free(why);
        fresh[opened].name = names[opened];
        names[opened] = NULL;
    }
    if (opened < n) {
        for (size_t i = 0; i < opened; i++)
            monitor_ctx_end(&fresh[i]);
        for (size_t i = 0; i < n; i++)
            free(names[i]);
        return 0;
    }
    return n;
}

size_t monitor_detached_add_context(struct monitor *m, const char *name, struct jobstore *store)
{
    size_t i = store == m->ctx[0].store ? 0 : m->nctx;
    if (i == MONITOR_MAX_CONTEXTS)
        return 0;
    if (i == m->nctx)
        m->nctx++;
    m->ctx[i].app = m;
    m->ctx[i].store = store;
    free(m->ctx[i].name);
    m->ctx[i].name = xstrdup(name);
    return i;
}

void monitor_detached_set_down(struct monitor *m, size_t i, const char *why)
{
    free(m->ctx[i].detached_down);
    m->ctx[i].detached_down = why ? xstrdup(why) : NULL;
}
