/*
 * top: the jobs view program (tui_top_run, tui/tui.h) — the one place that
 * knows both the app (tui/monitor.c) and its screens (tui/jobs_view.c at
 * the bottom, tui/job_view.c for a job), and hands the screens' makers to
 * the app, so the app and the screens include only tui/app.h of each other.
 */
#include "tui/job_view.h"
#include "tui/jobs_view.h"
#include "tui/monitor_app.h"
#include "tui/tui.h"

int tui_top_run(const struct tui_top_opts *o, FILE *err)
{
    return monitor_run(o, jobs_view_new, job_view_new, err);
}
