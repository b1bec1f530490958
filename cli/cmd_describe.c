/*
 * cmd_describe: `trainjob describe job NAME`, kubectl's describe — one
 * readable page: the spec in brief, why the job waits or failed, its state
 * history with where each change came from, its workers (state, node,
 * restarts, last exit, the fault rule that matched), each worker's last
 * state (kubectl's "Last State") and its recent events.
 * Everything from the server is sanitized; text wraps at the terminal's
 * width (80 when out is not a terminal). cli/cli.c's verb table calls it;
 * it reads through api/backend and prints through cli/output.
 */
#include <jansson.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "api/backend.h"
#include "cli/cli.h"
#include "cli/output.h"
#include "util/strbuf.h"
#include "util/timefmt.h"
#include "util/utf8.h"
#include "util/xalloc.h"

/* How many of the latest events the page shows. */
#define DESCRIBE_EVENTS 15
/* The column where a field's value starts. */
#define KEY_WIDTH 16

static const char describe_usage[] =
    "usage: trainjob describe job NAME\n"
    "One page about a job: its spec in brief, why it waits or failed, its state\n"
    "history (and who or what changed it), its workers (phase, node, restarts,\n"
    "last exit, the fault rule that matched), each worker's Last State (its last\n"
    "end of its own and the rule and action that decided) and its latest events.\n"
    "Exit status: 0 done, 1 not found or refused, 2 usage, 3 no server.\n";

/*
 * Appends prefix then text (both sanitized), wrapped at width: lines break
 * at spaces, continuation lines indented by the prefix's width; a word
 * longer than a line is cut where it must be.
 */
static void wrap(struct strbuf *page, const char *prefix, const char *text, int width)
{
    struct strbuf p = STRBUF_INIT, t = STRBUF_INIT;
    cli_clean(&p, prefix);
    cli_clean(&t, text && *text ? text : NONE);
    size_t indent = utf8_width(strbuf_str(&p), p.len);
    size_t room = width > (int)indent + 10 ? (size_t)width - indent : 10;
    strbuf_adds(page, strbuf_str(&p));
    const char *s = strbuf_str(&t);
    size_t col = 0;
    bool line_start = true;
    while (*s) {
        while (*s == ' ')
            s++;
        if (!*s)
            break;
        size_t wlen = strcspn(s, " ");
        size_t ww = utf8_width(s, wlen);
        if (!line_start && col + 1 + ww > room) {
            strbuf_addc(page, '\n');
            for (size_t i = 0; i < indent; i++)
                strbuf_addc(page, ' ');
            col = 0;
            line_start = true;
        }
        if (!line_start) {
            strbuf_addc(page, ' ');
            col++;
        }
        /* A word wider than the line: cut at code points, by width. */
        while (ww > room - col && col < room) {
            size_t take = 0, tw = 0;
            while (take < wlen) {
                uint32_t cp;
                size_t n = utf8_decode(s + take, wlen - take, &cp);
                size_t cw = utf8_width(s + take, n ? n : 1);
                if (tw + cw > room - col)
                    break;
                take += n ? n : 1;
                tw += cw;
            }
            if (take == 0)
                break;
            strbuf_add(page, s, take);
            s += take;
            wlen -= take;
            ww = utf8_width(s, wlen);
            strbuf_addc(page, '\n');
            for (size_t i = 0; i < indent; i++)
                strbuf_addc(page, ' ');
            col = 0;
        }
        strbuf_add(page, s, wlen);
        col += ww;
        s += wlen;
        line_start = false;
    }
    strbuf_addc(page, '\n');
    strbuf_free(&p);
    strbuf_free(&t);
}

/* "Key:" padded to KEY_WIDTH, then the value wrapped under itself. */
static void field(struct strbuf *page, const char *key, const char *value, int width)
{
    char prefix[64];
    snprintf(prefix, sizeof prefix, "%-*s", KEY_WIDTH, key);
    wrap(page, prefix, value, width);
}

/*
 * A command of several lines as kubectl shows a container's args: "Command:"
 * alone, then each line under it, indented, as written (sanitized; a tab to
 * the next stop of 8, so indentation reads as in the file). A command of one
 * line is a field as any other.
 */
static void command_field(struct strbuf *page, const char *key, const char *script, int width)
{
    size_t len = script ? strlen(script) : 0;
    while (len && script[len - 1] == '\n')
        len--;
    if (!len || !memchr(script, '\n', len)) {
        field(page, key, script, width);
        return;
    }
    struct strbuf line = STRBUF_INIT;
    strbuf_adds(page, key);
    strbuf_addc(page, '\n');
    for (const char *s = script, *end = script + len; s <= end;) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        size_t n = nl ? (size_t)(nl - s) : (size_t)(end - s);
        strbuf_reset(&line);
        utf8_sanitize(&line, s, n, UTF8_KEEP_TAB);
        strbuf_adds(page, "    ");
        size_t col = 0;
        for (size_t i = 0; i < line.len; i++) {
            if (line.buf[i] == '\t') {
                do
                    strbuf_addc(page, ' ');
                while (++col % 8);
            } else {
                strbuf_addc(page, line.buf[i]);
                col++;
            }
        }
        strbuf_addc(page, '\n');
        s += n + 1;
    }
    strbuf_free(&line);
}

/* Whether an event changed the job's state (for the history). */
static bool is_state_change(const struct job_event *ev)
{
    switch (ev->kind) {
    case EVENT_CREATED:
    case EVENT_STATE:
    case EVENT_STOPPED:
    case EVENT_STARTED:
    case EVENT_PREEMPTED:
        return true;
    default:
        return false;
    }
}

/* The fault rule that last matched a worker's exit (from the FAULT events), or 0. */
static int matched_rule(const struct job_event_list *evs, const char *worker, const char **action)
{
    int rule = 0;
    for (size_t i = 0; worker && i < evs->count; i++) {
        const struct job_event *ev = &evs->events[i];
        if (ev->kind == EVENT_FAULT && ev->has_rule && ev->worker &&
            strcmp(ev->worker, worker) == 0) {
            rule = ev->rule;
            *action = ev->action;
        }
    }
    return rule;
}

/* The latest event of kind (and, for STATE, into state), or NULL. */
static const struct job_event *last_event(const struct job_event_list *evs,
                                          enum job_event_kind kind, enum job_state state)
{
    for (size_t i = evs->count; i > 0; i--) {
        const struct job_event *ev = &evs->events[i - 1];
        if (ev->kind == kind && (kind != EVENT_STATE || ev->state == state) && ev->message &&
            *ev->message)
            return ev;
    }
    return NULL;
}

/*
 * Why the job is where it is: the server's word; else, for a finished job,
 * its end (never a back-off or wait from before); else the last fault
 * decision or wait since the job's last state change.
 */
static const char *job_reason(const struct jobspec *j, const struct job_event_list *evs)
{
    if (j->state_message && *j->state_message)
        return j->state_message;
    const struct job_event *ev = NULL;
    switch (j->state) {
    case JOB_STATE_SUCCEEDED:
        return "succeeded: every worker exited 0";
    case JOB_STATE_FAILED:
        if ((ev = last_event(evs, EVENT_FAULT, 0)) == NULL)
            ev = last_event(evs, EVENT_STATE, JOB_STATE_FAILED);
        return ev ? ev->message : NULL;
    case JOB_STATE_SUSPENDING:
    case JOB_STATE_SUSPENDED:
        ev = last_event(evs, EVENT_STOPPED, 0);
        return ev ? ev->message : NULL;
    default:
        break;
    }
    /* Only since the last state change: a back-off before the job ran again is no reason now. */
    for (size_t i = evs->count; i > 0 && evs->events[i - 1].kind != EVENT_STATE; i--)
        if (evs->events[i - 1].kind == EVENT_FAULT || evs->events[i - 1].kind == EVENT_WAITING)
            return evs->events[i - 1].message;
    return NULL;
}

/* The spec in brief and the reason. */
static void describe_spec(struct strbuf *page, const struct jobspec *j,
                          const struct job_event_list *evs, int width)
{
    struct strbuf v = STRBUF_INIT;
    field(page, "Name:", j->name, width);
    if (j->display_name && (!j->name || strcmp(j->display_name, j->name) != 0))
        field(page, "Display name:", j->display_name, width);
    field(page, "Workspace:", j->workspace_name, width);
    if (jobspec_scheduler_id(j))
        field(page, "ID:", jobspec_scheduler_id(j), width);
    char when[TIMEFMT_RFC3339_LEN];
    time_shown(j->create_time, when);
    strbuf_adds(&v, j->create_time ? when : NONE);
    if (j->ownership.user_name)
        strbuf_addf(&v, " by %s", j->ownership.user_name);
    field(page, "Created:", strbuf_str(&v), width);
    field(page, "State:", enum_name_or(&job_state_names, (int)j->state, j->state_other), width);

    const char *why = job_reason(j, evs);
    if (why && *why)
        field(page, j->state == JOB_STATE_FAILED ? "Failed because:" : "Reason:", why, width);

    field(page, "Framework:", enum_name_or(&framework_names, (int)j->framework, j->framework_other),
          width);
    strbuf_reset(&v);
    strbuf_addf(&v, "%s, %s", j->resource_pool.name ? j->resource_pool.name : NONE,
                jobspec_is_idle(j) ? "idle (SPOT)" : "standard (RESERVED)");
    if (j->scheduling.has_preemptible)
        strbuf_addf(&v, ", %spreemptible", j->scheduling.preemptible ? "" : "not ");
    field(page, "Pool:", strbuf_str(&v), width);
    field(page, "Priority:",
          j->scheduling.priority || j->scheduling.priority_other
              ? enum_name_or(&priority_names, (int)j->scheduling.priority,
                             j->scheduling.priority_other)
              : NONE,
          width);
    const struct role *r = jobspec_worker(j);
    if (r) {
        strbuf_reset(&v);
        int total = r->has_total_replicas ? r->total_replicas : 0;
        strbuf_addf(&v, "%d × %s", total,
                    r->resource_spec_count && r->resource_spec[0].name ? r->resource_spec[0].name
                                                                       : NONE);
        if (j->has_ready_workers)
            strbuf_addf(&v, " (%d ready)", (int)j->ready_workers);
        field(page, "Workers:", strbuf_str(&v), width);
        field(page, "Image:", r->image_path, width);
        command_field(page, "Command:", r->startup_script, width);
    }
    strbuf_reset(&v);
    int32_t lim = j->fault_tolerance.has_backoff_limit ? j->fault_tolerance.backoff_limit : 0;
    if (j->has_restart_count)
        strbuf_addf(&v, "%d used of ", (int)j->restart_count);
    if (lim < 0)
        strbuf_adds(&v, "unlimited");
    else
        strbuf_addf(&v, "%d", (int)lim);
    field(page, "Restarts:", strbuf_str(&v), width);
    for (size_t i = 0; i < j->fault_tolerance.rule_count; i++) {
        const struct ft_rule *fr = &j->fault_tolerance.rules[i];
        char key[48];
        snprintf(key, sizeof key, "Fault rule %zu:", i + 1);
        strbuf_reset(&v);
        strbuf_addf(&v, "exit %s → %s%s",
                    fr->exit_codes && *fr->exit_codes ? fr->exit_codes : "any",
                    enum_name_or(&ft_action_names, (int)fr->action, fr->action_other),
                    fr->has_mark_node_unschedulable && fr->mark_node_unschedulable
                        ? ", node marked unschedulable"
                        : "");
        field(page, key, strbuf_str(&v), width);
    }
    strbuf_free(&v);
}

/*
 * What the job's record says of its state beyond the state itself — the
 * conditions a server may add to a job ({type, status, reason, message,
 * last_transition_time}: kept among its unknown fields), one line each.
 */
static void describe_conditions(struct strbuf *page, const struct jobspec *j, int width)
{
    const json_t *conds = json_object_get(j->extra, "conditions");
    if (!json_is_array(conds) || json_array_size(conds) == 0)
        return;
    strbuf_adds(page, "\nConditions:\n");
    size_t i;
    const json_t *cnd;
    json_array_foreach(conds, i, cnd)
    {
        static const char *const keys[] = {"last_transition_time", "type", "status", "reason"};
        struct strbuf prefix = STRBUF_INIT;
        strbuf_adds(&prefix, " ");
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
            const char *v = json_string_value(json_object_get(cnd, keys[k]));
            strbuf_addf(&prefix, " %s", v && *v ? v : NONE);
        }
        strbuf_adds(&prefix, "  ");
        const char *msg = json_string_value(json_object_get(cnd, "message"));
        wrap(page, strbuf_str(&prefix), msg ? msg : "", width);
        strbuf_free(&prefix);
    }
}

/* The state history: every event that changed the state, with its message (who or what). */
static void describe_history(struct strbuf *page, const struct job_event_list *evs, int width)
{
    strbuf_adds(page, "\nState history:\n");
    size_t shown = 0;
    for (size_t i = 0; i < evs->count; i++) {
        const struct job_event *ev = &evs->events[i];
        if (!is_state_change(ev))
            continue;
        struct strbuf prefix = STRBUF_INIT;
        char when[TIMEFMT_RFC3339_LEN];
        time_shown(ev->time, when);
        strbuf_addf(&prefix, "  %-20s  %-10s  ", ev->time ? when : NONE,
                    ev->kind == EVENT_CREATED ? "CREATED"
                    : ev->state               ? enum_name(&job_state_names, (int)ev->state)
                                              : enum_name(&job_event_kind_names, (int)ev->kind));
        wrap(page, strbuf_str(&prefix), ev->message, width);
        strbuf_free(&prefix);
        shown++;
    }
    if (shown == 0)
        strbuf_adds(page, "  (none recorded)\n");
}

/* The workers as a table, with the fault rule that matched each one's last exit. */
static void describe_workers(struct strbuf *page, const struct worker_list *wl,
                             const struct job_event_list *evs, FILE *out)
{
    strbuf_adds(page, "\nWorkers:\n");
    if (wl->count == 0) {
        strbuf_adds(page, "  (none: the job has not been scheduled)\n");
        return;
    }
    fputs(strbuf_str(page), out);
    strbuf_reset(page);
    struct cli_table t = {.cols = 7};
    const char *head[] = {"  NAME", "PHASE", "NODE", "RESTARTS", "EXIT", "RULE", "HELD DEVICES"};
    cli_table_row(&t, head);
    for (size_t i = 0; i < wl->count; i++) {
        const struct worker_info *w = &wl->workers[i];
        char restarts[16], exit_code[160], rule[64];
        char *name = xasprintf("  %s", w->name ? w->name : NONE);
        snprintf(restarts, sizeof restarts, "%d", (int)w->restarts);
        if (!w->has_exit_code)
            snprintf(exit_code, sizeof exit_code, NONE);
        else
            snprintf(exit_code, sizeof exit_code, "%d%s%s", (int)w->exit_code,
                     w->exit_reason && *w->exit_reason ? " " : "",
                     w->exit_reason ? w->exit_reason : "");
        const char *action = NULL;
        int r = matched_rule(evs, w->name, &action);
        if (r)
            snprintf(rule, sizeof rule, "%d %s", r, action ? action : "");
        else
            snprintf(rule, sizeof rule, NONE);
        struct strbuf dev = STRBUF_INIT;
        worker_devices_text(w, &dev);
        const char *row[] = {name, worker_phase_text(w), w->node_name, restarts, exit_code,
                             rule, strbuf_str(&dev)};
        cli_table_row(&t, row);
        strbuf_free(&dev);
        free(name);
    }
    cli_table_print(&t, out, 0, false);
}

/* "    Key:" padded to the value column of a worker's block, then the value wrapped. */
static void sub_field(struct strbuf *page, const char *key, const char *value, int width)
{
    char prefix[64];
    snprintf(prefix, sizeof prefix, "    %-*s", KEY_WIDTH - 2, key);
    wrap(page, prefix, value, width);
}

/*
 * Each worker's last state, as kubectl describe pod's "Last State": its last
 * end of its own (exit and meaning, when) and what the fault policy did.
 */
static void describe_last_states(struct strbuf *page, const struct worker_list *wl, int width)
{
    bool any = false;
    for (size_t i = 0; i < wl->count; i++)
        any |= wl->workers[i].last_state.present;
    if (!any)
        return;
    strbuf_adds(page, "\nLast State:\n");
    int64_t now = time_now_ms();
    struct strbuf v = STRBUF_INIT;
    for (size_t i = 0; i < wl->count; i++) {
        const struct worker_info *w = &wl->workers[i];
        const struct worker_last_state *ls = &w->last_state;
        if (!ls->present)
            continue;
        char prefix[64];
        snprintf(prefix, sizeof prefix, "  %s:  ", w->name ? w->name : NONE);
        strbuf_reset(&v);
        strbuf_adds(&v, "Terminated");
        if (ls->has_exit_code)
            strbuf_addf(&v, ", exit %d", (int)ls->exit_code);
        if (ls->exit_reason && *ls->exit_reason)
            strbuf_addf(&v, " (%s)", ls->exit_reason);
        wrap(page, prefix, strbuf_str(&v), width);
        char when[TIMEFMT_RFC3339_LEN];
        if (ls->start_time) {
            time_shown(ls->start_time, when);
            sub_field(page, "Started:", when, width);
        }
        if (ls->finish_time) {
            time_shown(ls->finish_time, when);
            strbuf_reset(&v);
            strbuf_adds(&v, when);
            int64_t t = time_parse_rfc3339(ls->finish_time);
            if (t >= 0) {
                char age[24];
                time_age(now - t, age, sizeof age);
                strbuf_addf(&v, " (%s ago)", age);
            }
            sub_field(page, "Finished:", strbuf_str(&v), width);
        }
        if (ls->action && *ls->action) {
            strbuf_reset(&v);
            if (ls->has_rule)
                strbuf_addf(&v, "rule %d → %s", (int)ls->rule, ls->action);
            else
                strbuf_addf(&v, "default rule (none matched) → %s", ls->action);
            sub_field(page, "Rule:", strbuf_str(&v), width);
        }
        if (ls->message && *ls->message)
            sub_field(page, "Decision:", ls->message, width);
    }
    strbuf_free(&v);
}

/* The latest events, each wrapped under its message column. */
static void describe_events(struct strbuf *page, const struct job_event_list *evs, int width)
{
    size_t from = evs->count > DESCRIBE_EVENTS ? evs->count - DESCRIBE_EVENTS : 0;
    if (from)
        strbuf_addf(page, "\nEvents (the last %d of %zu; `trainjob get events NAME` has all):\n",
                    DESCRIBE_EVENTS, evs->count);
    else
        strbuf_adds(page, "\nEvents:\n");
    if (evs->count == 0)
        strbuf_adds(page, "  (none)\n");
    for (size_t i = from; i < evs->count; i++) {
        const struct job_event *ev = &evs->events[i];
        struct strbuf prefix = STRBUF_INIT;
        char when[TIMEFMT_RFC3339_LEN];
        time_shown(ev->time, when);
        strbuf_addf(&prefix, "  %-20s  %-10s  ", ev->time ? when : NONE,
                    ev->kind ? enum_name(&job_event_kind_names, (int)ev->kind) : NONE);
        wrap(page, strbuf_str(&prefix), ev->message, width);
        strbuf_free(&prefix);
    }
}

/* `describe job NAME`: the job, its workers and its events on one page. */
int cmd_describe(const struct cli_globals *g, int argc, char **argv, FILE *out, FILE *err)
{
    struct cli_globals local = *g;
    int rc = cli_plain_options("describe", describe_usage, argc, argv, &local, out, err);
    if (rc >= 0)
        return rc;
    if (argc - optind != 2 ||
        (strcmp(argv[optind], "job") != 0 && strcmp(argv[optind], "jobs") != 0)) {
        if (argc - optind >= 1 && strcmp(argv[optind], "job") != 0 &&
            strcmp(argv[optind], "jobs") != 0) {
            struct strbuf sb = STRBUF_INIT;
            cli_clean(&sb, argv[optind]);
            fprintf(err, "trainjob describe: cannot describe '%s'; try: describe job NAME\n",
                    strbuf_str(&sb));
            strbuf_free(&sb);
        }
        fputs(describe_usage, err);
        return EXIT_USAGE;
    }
    const char *name = argv[optind + 1];
    struct session s;
    if ((rc = cli_session_open(&local, &s, err)) != EXIT_OK)
        return rc;
    struct jobspec job;
    struct worker_list wl = {0};
    struct job_event_list evs = {0};
    struct api_error e;
    enum backend_status st = backend_get(s.b, name, &job, &e);
    if (st != BACKEND_OK) {
        rc = cli_failed(err, st, &e, false);
        session_close(&s);
        return rc;
    }
    /* A backend without events (ACP) still has the job and its workers: shown, and said so. */
    bool no_events = false;
    if ((st = backend_workers(s.b, name, &wl, &e)) == BACKEND_OK &&
        (st = backend_events(s.b, name, &evs, &e)) != BACKEND_OK && e.status == 501) {
        no_events = true;
        st = BACKEND_OK;
    }
    if (st != BACKEND_OK) {
        rc = cli_failed(err, st, &e, false);
    } else {
        int width = cli_text_width(out);
        struct strbuf page = STRBUF_INIT;
        describe_spec(&page, &job, &evs, width);
        describe_conditions(&page, &job, width);
        if (!no_events)
            describe_history(&page, &evs, width);
        describe_workers(&page, &wl, &evs, out);
        describe_last_states(&page, &wl, width);
        if (no_events)
            strbuf_addf(&page,
                        "\nEvents: not served by this backend (%s): no state history or "
                        "events to show\n",
                        s.b->ops->name);
        else
            describe_events(&page, &evs, width);
        fputs(strbuf_str(&page), out);
        strbuf_free(&page);
    }
    worker_list_free(&wl);
    job_event_list_free(&evs);
    jobspec_free(&job);
    session_close(&s);
    return rc;
}
