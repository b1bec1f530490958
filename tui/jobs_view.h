/*
 * jobs_view: the default monitoring screen — a table of the workspace's
 * jobs (name, display name, state with icon and colour, priority, type,
 * workers ready/total, devices, restarts used/limit, age, and why a job
 * waits or failed), sortable by any column, filtered with `/` (text, or
 * state=FAILED-style terms), a faulty-only toggle, and marks for acting
 * on many jobs at once.
 */
#ifndef TUI_JOBS_VIEW_H
#define TUI_JOBS_VIEW_H

struct monitor;
struct screen;

struct screen *jobs_view_new(struct monitor *m);

#endif
