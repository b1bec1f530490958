/*
 * top: the jobs view program (tui_top_run, tui/tui.h) — the one place that
 * knows both the app's core (tui/monitor.c) and what plugs into it: its
 * screens (tui/jobs_view.c at the bottom, tui/job_view.c for a job), the
 * wizard and the `:` command line (tui/actions.c, tui/commands.c). The
 * screens include only tui/app.h of the app, and the core none of them.
 */
#include "tui/job_view.h"
#include "tui/jobs_view.h"
#include "tui/monitor_app.h"
#include "tui/tui.h"

static const struct monitor_parts top_parts = {
    .first = jobs_view_new,
    .job_screen = job_view_new,
    .new_job = monitor_run_wizard,
    .command_line = monitor_command_line,
};

int tui_top_run(const struct tui_top_opts *o, FILE *err)
{
    return monitor_run(o, &top_parts, err);
}
