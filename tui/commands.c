/*
 * commands: the live screens' `:` command line — :jobs, :workers NAME
 * (:job NAME), :ws NAME, :ctx NAME, :theme NAME, :q — as k9s has it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/backend.h"
#include "api/session.h"
#include "tui/feed.h"
#include "tui/monitor_app.h"
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
        monitor_act(m, MONITOR_OPEN, &name, 1);
    } else if (strcmp(verb, "ws") == 0 && *arg) {
        backend_set_workspace(m->session.b, arg);
        monitor_restart_feed(m);
        monitor_status(m, false, "workspace %s", arg);
    } else if (strcmp(verb, "ctx") == 0 && *arg) {
        struct session_target t = m->target;
        t.context = arg;
        t.endpoint = NULL;
        struct session s;
        char *why = NULL;
        size_t why_len = 0;
        FILE *err = open_memstream(&why, &why_len);
        int rc = session_open(&t, &s, err ? err : stderr);
        if (err)
            fclose(err);
        if (rc != 0) {
            /* session_open said why, as the CLI would print it: its first line. */
            const char *reason = why ? why : "";
            monitor_status(m, true, "context %s: cannot open it: %.*s", arg,
                           (int)strcspn(reason, "\n"), reason);
            free(why);
            return;
        }
        free(why);
        feed_free(m->feed);
        m->feed = NULL;
        session_close(&m->session);
        m->session = s;
        free(m->context);
        m->context = xstrdup(arg);
        m->target.context = m->context;
        m->target.endpoint = NULL; /* the context's own */
        monitor_restart_feed(m);
        monitor_status(m, false, "context %s", arg);
    } else if (strcmp(verb, "theme") == 0 && *arg) {
        char err[256];
        if (term_set_theme(&m->term, arg, err, sizeof err) != 0)
            monitor_status(m, true, "theme: %s", err);
        else
            monitor_status(m, false, "theme %s", arg);
        m->full = true;
    } else if (verb[0]) {
        monitor_status(m, true,
                       "unknown command :%s (try :jobs, :workers NAME, :ws NAME, "
                       ":ctx NAME, :theme NAME, :q)",
                       verb);
    }
    m->dirty = true;
}

void monitor_command_line(struct monitor *m)
{
    monitor_ask(m, "Command", ":jobs  :workers NAME  :ws NAME  :ctx NAME  :theme NAME  :q", "",
                on_command, m);
}
