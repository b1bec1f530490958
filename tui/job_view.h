/*
 * job_view: the job screen — one job, live: a summary (state with its icon
 * and colour, why it waits or failed, priority, type, pool, spec, workers
 * ready/total, restarts used/limit, age) and its state history on top;
 * below, the workers pane and a bottom area showing the events pane or
 * the logs pane. Tab moves the focus between workers, events and logs;
 * Enter on a worker follows its log, 'a' follows every worker at once;
 * 'd' shows the whole job as YAML, read-only.
 *
 * A screen as tui/app.h defines them (mode "job"). It reads the job's
 * row from the app's jobstore on every change, fetches the event history
 * once when it opens (merged into the store), and owns the log streams of
 * its logs pane; closing the screen cancels every call it started.
 */
#ifndef TUI_JOB_VIEW_H
#define TUI_JOB_VIEW_H

struct monitor;
struct screen;

/* The job screen for job_name (the app owns it once pushed). */
struct screen *job_view_new(struct monitor *m, const char *job_name);

#endif
