/*
 * actions: what the live screens do to jobs — stop and delete (confirmed
 * first), start, a new priority (asked for), clone into the wizard (run on
 * the terminal as an editor is, its job opened here after), save as YAML
 * (a path asked for), mark a node unschedulable for a job (confirmed).
 * Each request goes through the loop to the backend of the job's own
 * context (a view over several has one per context); its reply lands on
 * the status line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "api/backend.h"
#include "api/jobfile.h"
#include "tui/jobstore.h"
#include "tui/monitor_app.h"
#include "tui/term.h"
#include "util/fileio.h"
#include "util/strbuf.h"
#include "util/utf8.h"
#include "util/xalloc.h"

/* "pt-a" or "3 jobs (pt-a, pt-b, …)" for questions and messages. */
static void describe(struct monitor *m, char *buf, size_t n)
{
    struct strbuf sb = STRBUF_INIT;
    if (m->name_count == 1) {
        strbuf_adds(&sb, m->names[0]);
    } else {
        strbuf_addf(&sb, "%zu jobs (", m->name_count);
        for (size_t i = 0; i < m->name_count && i < 3; i++)
            strbuf_addf(&sb, "%s%s", i ? ", " : "", m->names[i]);
        strbuf_adds(&sb, m->name_count > 3 ? ", …)" : ")");
    }
    if (monitor_multi_view(m)) { /* which context's: "pt-a on lab" */
        bool one = true;
        for (size_t i = 1; i < m->name_count; i++)
            one &= m->name_ctx[i] == m->name_ctx[0];
        if (one)
            strbuf_addf(&sb, " on %s", monitor_context_name(m, m->name_ctx[0]));
        else
            strbuf_adds(&sb, " in several contexts");
    }
    struct strbuf clean = STRBUF_INIT;
    utf8_sanitize(&clean, sb.buf, sb.len, 0);
    snprintf(buf, n, "%s", strbuf_str(&clean));
    strbuf_free(&sb);
    strbuf_free(&clean);
}

/* " on lab" after a message about context c's job, in a view over several; else "". */
static const char *where(struct monitor_ctx *c, char *buf, size_t n)
{
    struct monitor *m = c->app;
    buf[0] = '\0';
    if (monitor_multi_view(m))
        snprintf(buf, n, " on %s", monitor_context_name(m, (size_t)(c - m->ctx)));
    return buf;
}

static void action_reply(struct monitor_ctx *c, struct backend_reply *r);

/*
 * The reply to an action (ctx: the context it went to): what happened, on
 * the status line, said in that context (a status about a job goes when
 * that context's job changes state, not a namesake's elsewhere).
 */
static void on_action_reply(void *ctx, struct backend_reply *r)
{
    struct monitor_ctx *c = ctx;
    struct monitor *m = c->app;
    size_t was = m->focus;
    m->focus = (size_t)(c - m->ctx);
    action_reply(c, r);
    /* back to the context of the screen on top (the reply may have closed one) */
    m->focus = m->depth ? m->screen_ctx[m->depth - 1] : was;
}

static void action_reply(struct monitor_ctx *c, struct backend_reply *r)
{
    struct monitor *m = c->app;
    char on[128];
    where(c, on, sizeof on);
    if (r->status != BACKEND_OK) {
        if (on[0])
            monitor_status(m, true, "%s: %s", on + 4, r->err.message); /* "lab: why" */
        else
            monitor_status(m, true, "%s", r->err.message);
        return;
    }
    switch (r->op) {
    case BACKEND_OP_STOP:
    case BACKEND_OP_DELETE: {
        size_t done = 0, skipped = 0, missing = 0;
        const char *about = NULL; /* the message goes once this one's state moves */
        for (size_t i = 0; i < r->batch.count; i++) {
            enum batch_outcome o = r->batch.items[i].outcome;
            done += o == BATCH_DONE || o == BATCH_UNKNOWN;
            if (about == NULL && (o == BATCH_DONE || o == BATCH_UNKNOWN))
                about = r->batch.items[i].name;
            skipped += o == BATCH_SKIPPED;
            missing += o == BATCH_NOT_FOUND;
        }
        monitor_status_about(m, about, false, "%s %zu job%s%s%s%s",
                             r->op == BACKEND_OP_STOP ? "stopping" : "deleting", done,
                             done == 1 ? "" : "s", on, skipped ? " (some were not running)" : "",
                             missing ? " (some were not found)" : "");
        /* A deleted job's screen has nothing left to show: back to the list. */
        if (r->op == BACKEND_OP_DELETE)
            while (m->depth > 1)
                monitor_pop(m);
        break;
    }
    case BACKEND_OP_START:
        monitor_status_about(m, r->job.name, false, "started %s%s",
                             r->job.name ? r->job.name : "the job", on);
        break;
    case BACKEND_OP_MARK_NODE:
        monitor_status(m, false, "node marked unschedulable for %s (u lifts the mark)",
                       r->job.name ? r->job.name : "the job");
        break;
    case BACKEND_OP_UNMARK_NODE:
        monitor_status(m, false, "node unmarked for %s: it may run there again",
                       r->job.name ? r->job.name : "the job");
        break;
    case BACKEND_OP_UPDATE:
        monitor_status_about(m, r->job.name, false, "%s is now %s",
                             r->job.name ? r->job.name : "the job",
                             enum_name(&priority_names, (int)r->job.scheduling.priority));
        break;
    default:
        break;
    }
}

/* The names of m->names in context c, in order (malloc'd); their count in *n. */
static const char **names_in(struct monitor *m, size_t c, size_t *n)
{
    const char **out = xcalloc(m->name_count ? m->name_count : 1, sizeof *out);
    *n = 0;
    for (size_t i = 0; i < m->name_count; i++)
        if (m->name_ctx[i] == c)
            out[(*n)++] = m->names[i];
    return out;
}

/* op on the names, in batches, each context's to its own backend. */
static void send_batch(struct monitor *m, enum backend_op op)
{
    for (size_t c = 0; c < m->nctx; c++) {
        size_t count;
        const char **names = names_in(m, c, &count);
        for (size_t off = 0; off < count; off += BACKEND_MAX_BATCH) {
            struct backend_request rq = {.op = op};
            rq.names = names + off;
            rq.count = count - off < BACKEND_MAX_BATCH ? count - off : BACKEND_MAX_BATCH;
            backend_send(m->ctx[c].session.b, m->multi, &rq, on_action_reply, NULL, NULL,
                         &m->ctx[c]);
        }
        free(names);
    }
}

static void stop_confirmed(struct monitor *m)
{
    send_batch(m, BACKEND_OP_STOP);
}

static void delete_confirmed(struct monitor *m)
{
    send_batch(m, BACKEND_OP_DELETE);
}

static void on_priority(void *ctx, const char *text)
{
    struct monitor *m = ctx;
    char up[32];
    size_t i = 0;
    for (; text[i] && i < sizeof up - 1; i++)
        up[i] = (char)(text[i] >= 'a' && text[i] <= 'z' ? text[i] - 32 : text[i]);
    up[i] = '\0';
    int p = enum_value(&priority_names, up);
    if (p <= 0) {
        monitor_status(m, true, "priority: \"%s\" is not one of NORMAL, HIGH, HIGHEST", text);
        return;
    }
    for (size_t k = 0; k < m->name_count; k++) {
        struct backend_request rq = {.op = BACKEND_OP_UPDATE, .name = m->names[k]};
        rq.update.priority = (enum priority)p;
        struct monitor_ctx *c = &m->ctx[m->name_ctx[k]];
        backend_send(c->session.b, m->multi, &rq, on_action_reply, NULL, NULL, c);
    }
}

/*
 * Runs `trainjob new -f FILE` on the terminal, this screen suspended, as an
 * editor is run; a job it submits opens here once the feed has it.
 */
static void run_wizard(struct monitor *m, const char *file, const char *clone_of)
{
    /* In a view over several contexts: the context on top (the job's, the cursor row's). */
    struct monitor_ctx *in = monitor_cur(m);
    const char *context = in->name ? in->name : m->target.context;
    const char *endpoint = in->name ? NULL : m->target.endpoint;
    char *self = xstrdup("/proc/self/exe");
    char created[] = "/tmp/trainjob-created-XXXXXX";
    int cfd = mkstemp(created);
    if (cfd >= 0)
        close(cfd);
    const char *argv[20];
    size_t n = 0;
    argv[n++] = "trainjob";
    if (context)
        argv[n++] = "--context", argv[n++] = context;
    if (endpoint)
        argv[n++] = "--endpoint", argv[n++] = endpoint;
    argv[n++] = "--workspace";
    argv[n++] = in->session.b->target.workspace;
    argv[n++] = "new";
    if (file)
        argv[n++] = "-f", argv[n++] = file;
    if (clone_of) /* its draft is the clone's, not a new job's */
        argv[n++] = "--clone-of", argv[n++] = clone_of;
    if (cfd >= 0)
        argv[n++] = "--created-to", argv[n++] = created;
    argv[n] = NULL;
    term_suspend();
    pid_t pid = fork();
    if (pid == 0) {
        execv(self, (char *const *)argv);
        _exit(127);
    }
    int status = 0;
    if (pid > 0)
        while (waitpid(pid, &status, 0) < 0)
            ;
    term_resume();
    free(self);
    m->full = m->dirty = true;
    if (pid < 0 || !WIFEXITED(status) || WEXITSTATUS(status) == 127)
        monitor_status(m, true, "could not run the wizard");
    if (cfd >= 0) {
        struct strbuf why = STRBUF_INIT;
        char *name = NULL;
        size_t len = 0;
        if (file_read_all(created, 256, &name, &len, &why) == 0 && len > 0) {
            free(m->open_when_seen);
            m->open_when_seen = name;
            m->open_ctx = (size_t)(in - m->ctx);
            name = NULL;
            monitor_status(m, false, "job %s created", m->open_when_seen);
            monitor_feed_changed(m);
        }
        free(name);
        strbuf_free(&why);
        unlink(created);
    }
}

/* Runs `trainjob new -f FILE` (see run_wizard). */
void monitor_run_wizard(struct monitor *m, const char *file)
{
    run_wizard(m, file, NULL);
}

static void on_clone_job(void *ctx, struct backend_reply *r)
{
    struct monitor_ctx *c = ctx;
    struct monitor *m = c->app;
    if (r->status != BACKEND_OK) {
        monitor_status(m, true, "%s", r->err.message);
        return;
    }
    /* The clone is a new job: what the server filled in goes, the name too. */
    struct jobspec clone;
    jobspec_init(&clone);
    jobspec_copy_for_submit(&clone, &r->job);
    struct strbuf doc = STRBUF_INIT, err = STRBUF_INIT;
    jobfile_write(&clone, JOBFILE_YAML, &doc);
    jobspec_free(&clone);
    char path[] = "/tmp/trainjob-clone-XXXXXX.yaml";
    int fd = mkstemps(path, 5);
    if (fd < 0 || write(fd, doc.buf, doc.len) != (ssize_t)doc.len) {
        monitor_status(m, true, "cannot write the clone to %s", path);
    } else {
        size_t was = m->focus;
        m->focus = (size_t)(c - m->ctx); /* the clone goes where its job is */
        run_wizard(m, path, r->job.name);
        m->focus = was;
    }
    if (fd >= 0) {
        close(fd);
        unlink(path);
    }
    strbuf_free(&doc);
    strbuf_free(&err);
}

static void on_save_job(void *ctx, struct backend_reply *r)
{
    struct monitor_ctx *c = ctx;
    struct monitor *m = c->app;
    if (r->status != BACKEND_OK) {
        monitor_status(m, true, "%s", r->err.message);
        return;
    }
    struct strbuf doc = STRBUF_INIT, err = STRBUF_INIT;
    jobfile_write(&r->job, JOBFILE_YAML, &doc);
    if (file_write_atomic(m->arg, doc.buf, doc.len, 0644, &err) != 0)
        monitor_status(m, true, "not saved: %s", strbuf_str(&err));
    else
        monitor_status(m, false, "saved %s to %s", r->job.name, m->arg);
    strbuf_free(&doc);
    strbuf_free(&err);
}

static void on_save_path(void *ctx, const char *text)
{
    struct monitor *m = ctx;
    if (*text == '\0')
        return;
    free(m->arg);
    m->arg = xstrdup(text);
    struct backend_request rq = {.op = BACKEND_OP_GET, .name = m->names[0]};
    struct monitor_ctx *c = &m->ctx[m->name_ctx[0]];
    backend_send(c->session.b, m->multi, &rq, on_save_job, NULL, NULL, c);
}

void monitor_act(struct monitor *m, enum monitor_action a, const char *const *names, size_t n)
{
    monitor_act_in(m, a, names, NULL, n);
}

void monitor_act_in(struct monitor *m, enum monitor_action a, const char *const *names,
                    const size_t *ctxs, size_t n)
{
    if (n == 0)
        return;
    if (m->readonly && a != MONITOR_OPEN) {
        monitor_status(m, true, "read-only: no actions here");
        return;
    }
    monitor_set_names_in(m, names, ctxs, n);
    struct monitor_ctx *first = &m->ctx[m->name_ctx[0]]; /* where a one-job action goes */
    m->pending = a;
    char who[256], q[400];
    describe(m, who, sizeof who);
    switch (a) {
    case MONITOR_STOP:
        snprintf(q, sizeof q, "Stop %s? Running workers are ended.", who);
        monitor_confirm(m, "Stop", q, stop_confirmed);
        break;
    case MONITOR_DELETE:
        snprintf(q, sizeof q, "Delete %s? This cannot be undone.", who);
        monitor_confirm(m, "Delete", q, delete_confirmed);
        break;
    case MONITOR_START:
        for (size_t i = 0; i < n; i++) {
            struct backend_request rq = {.op = BACKEND_OP_START, .name = names[i]};
            struct monitor_ctx *c = &m->ctx[m->name_ctx[i]];
            backend_send(c->session.b, m->multi, &rq, on_action_reply, NULL, NULL, c);
        }
        break;
    case MONITOR_PRIORITY: {
        /* Exactly the priorities the first job's backend takes from this user there, as a list. */
        const char *ws = first->session.b->target.workspace;
        const struct catalog *cat = &first->catalog;
        bool loaded = cat->workspace_count > 0 || cat->unknown;
        const char *offer[3];
        size_t k = 0, sel = 0;
        const struct job_row *row = jobstore_find(first->store, names[0]);
        for (int p = 1; p <= 3; p++) {
            if (loaded && !catalog_priority_allowed(cat, ws, p))
                continue;
            if (row && (int)row->priority == p)
                sel = k;
            offer[k++] = enum_name(&priority_names, p);
        }
        char hint[300];
        const struct catalog_workspace *cw = loaded ? catalog_workspace(cat, ws) : NULL;
        if (k < 3 && cw)
            catalog_priority_refusal(cw, hint, sizeof hint); /* the backend's reason */
        else if (k < 3)
            snprintf(hint, sizeof hint, "HIGH and HIGHEST need owner rights in %s",
                     ws ? ws : "this workspace");
        else
            snprintf(hint, sizeof hint, "a waiting higher-priority job holds back lower ones");
        snprintf(q, sizeof q, "New priority of %s", who);
        monitor_choose(m, q, hint, offer, k, sel, on_priority, m);
        break;
    }
    case MONITOR_CLONE: {
        struct backend_request rq = {.op = BACKEND_OP_GET, .name = names[0]};
        backend_send(first->session.b, m->multi, &rq, on_clone_job, NULL, NULL, first);
        monitor_status(m, false, "fetching %s to clone it…", who);
        break;
    }
    case MONITOR_SAVE: {
        char initial[300];
        snprintf(initial, sizeof initial, "./%s.yaml", names[0]);
        monitor_ask(m, "Save the job as YAML", "a path", initial, on_save_path, m);
        break;
    }
    case MONITOR_OPEN:
        if (jobstore_find(first->store, names[0]) == NULL) {
            monitor_status(m, true, "no job named %s here", who);
            break;
        }
        monitor_open_job_in(m, m->name_ctx[0], names[0]);
        break;
    }
}

static void send_mark(struct monitor *m, enum backend_op op)
{
    struct backend_request rq = {.op = op, .name = m->names[0], .node = m->arg};
    struct monitor_ctx *c = &m->ctx[m->name_ctx[0]];
    backend_send(c->session.b, m->multi, &rq, on_action_reply, NULL, NULL, c);
}

static void mark_confirmed(struct monitor *m)
{
    send_mark(m, BACKEND_OP_MARK_NODE);
}

static void unmark_confirmed(struct monitor *m)
{
    send_mark(m, BACKEND_OP_UNMARK_NODE);
}

/*
 * Whether node is the only one of the job's pool that may take it, as the
 * catalog lists the pool's nodes (trainjobd); *pool is then the pool's name.
 * False when the backend lists none.
 */
static bool only_node(struct monitor *m, const char *job, const char *node, const char **pool)
{
    const struct monitor_ctx *c = &m->ctx[m->name_ctx[0]];
    const struct job_row *r = jobstore_find(c->store, job);
    const struct catalog_pool *p = r && r->pool ? catalog_pool(&c->catalog, r->pool) : NULL;
    if (p == NULL || p->node_count == 0)
        return false;
    for (size_t i = 0; i < p->node_count; i++)
        if (strcmp(p->nodes[i], node) != 0)
            return false;
    *pool = p->name;
    return true;
}

void monitor_mark_node(struct monitor *m, const char *job, const char *node, bool unmark)
{
    if (m->readonly) {
        monitor_status(m, true, "read-only: no actions here");
        return;
    }
    if (node == NULL || *node == '\0') {
        monitor_status(m, true, "this worker is on no node yet");
        return;
    }
    monitor_set_names(m, &job, 1);
    free(m->arg);
    m->arg = xstrdup(node);
    char who[256], q[600];
    describe(m, who, sizeof who);
    struct strbuf n = STRBUF_INIT;
    utf8_sanitize(&n, node, strlen(node), 0);
    const char *pool = NULL;
    if (unmark)
        snprintf(q, sizeof q, "Lift the mark on node %s for %s? It may be placed there again.",
                 strbuf_str(&n), who);
    else if (only_node(m, job, node, &pool)) {
        struct strbuf pn = STRBUF_INIT;
        utf8_sanitize(&pn, pool, strlen(pool), 0);
        snprintf(q, sizeof q,
                 "%s is the only node of pool %s: the job will wait until the mark is lifted "
                 "(u). Mark it unschedulable for %s?",
                 strbuf_str(&n), strbuf_str(&pn), who);
        strbuf_free(&pn);
    } else
        snprintf(q, sizeof q,
                 "Mark node %s unschedulable for %s? Its next placement avoids it; with no "
                 "other node in its pool it waits until u (unmark) lifts the mark.",
                 strbuf_str(&n), who);
    strbuf_free(&n);
    if (unmark)
        monitor_confirm(m, "Unmark node", q, unmark_confirmed);
    else
        monitor_confirm(m, "Mark node", q, mark_confirmed);
}
