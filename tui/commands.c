/*
 * commands: the live screens' `:` command line — :jobs, :workers NAME
 * (:job NAME), :ws NAME, :ctx NAME (or :ctx a,b / :ctx all: one view over
 * several contexts), :theme NAME, :q — as k9s has it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/backend.h"
#include "api/session.h"
#include "tui/feed.h"
#include "tui/jobstore.h"
#include "tui/monitor_app.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

static void on_command(void *ctx, const char *text)
{
    struct monitor *m = ctx;
    char verb[32] = "", arg[256] = "";
    while (*text == ' ' || *text == ':')
        text++; /* ":ws x" and "ws x" alike */
    sscanf(text, "%31s %255[^\n]", verb, arg);
    if (strcmp(verb, "q") == 0 || strcmp(verb, "quit") == 0) {
        m->quit = true;
    } else if (strcmp(verb, "jobs") == 0) {
        while (m->depth > 1)
            monitor_pop(m);
    } else if (strcmp(verb, "workers") == 0 || strcmp(verb, "job") == 0) {
        const char *name = arg;
        size_t in = m->focus; /* over several contexts: the first that has it */
        for (size_t i = 0; monitor_multi_view(m) && i < m->nctx; i++)
            if (jobstore_find(m->ctx[i].store, arg)) {
                in = i;
                break;
            }
        monitor_act_in(m, MONITOR_OPEN, &name, &in, 1);
    } else if (strcmp(verb, "ws") == 0 && *arg) {
        for (size_t i = 0; i < m->nctx; i++) /* in a view over several: in each */
            backend_set_workspace(m->ctx[i].session.b, arg);
        monitor_restart_feed(m);
        monitor_status(m, false, "workspace %s", arg);
    } else if (strcmp(verb, "ctx") == 0 && *arg) {
        /* NAME, or several at once: "a,b" or "all" (one jobs view over them). */
        struct strbuf why = STRBUF_INIT;
        if (monitor_open_contexts(m, arg, &why) != 0) {
            monitor_status(m, true, "%s", strbuf_str(&why));
            strbuf_free(&why);
            return;
        }
        strbuf_free(&why);
        free(m->context);
        m->context = xstrdup(arg);
        m->target.context = m->context;
        m->target.endpoint = NULL; /* the context's own */
        if (monitor_multi_view(m))
            monitor_status(m, false, "%zu contexts: %s", m->nctx, arg);
        else
            monitor_status(m, false, "context %s", arg);
    } else if (strcmp(verb, "theme") == 0 && *arg) {
        char err[256];
        if (term_set_theme(&m->term, arg, err, sizeof err) != 0)
            monitor_status(m, true, "%s", err); /* the loader's message names the theme */
        else
            monitor_status(m, false, "theme %s", arg);
        m->full = true;
    } else if (verb[0]) {
        monitor_status(m, true,
                       "unknown command :%s (try :jobs, :workers NAME, :ws NAME, "
                       ":ctx NAME|a,b|all, :theme NAME, :q)",
                       verb);
    }
    m->dirty = true;
}

void monitor_command_line(struct monitor *m)
{
    monitor_ask(m, "Command", ":jobs  :workers NAME  :ws NAME  :ctx NAME|a,b|all  :theme NAME  :q",
                "", on_command, m);
}
