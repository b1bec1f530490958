/*
 * shell: `s` on the job screen's Workers pane — a shell in the selected
 * worker, as `trainjob exec JOB -w WORKER` gives one (api/backend.h
 * backend_exec, the same call). Curses steps aside (term_suspend),
 * the shell runs in the foreground with the terminal as it was before
 * trainjob started, and however it ends (exit, a crash, Ctrl-C, the worker
 * ending under it) the screen comes back whole (term_resume: the size
 * read again, the keypad mode, a full redraw) with the exit status in the
 * status line.
 * What the shell prints is the terminal's business: curses is not up then.
 */
#include <stdio.h>
#include <string.h>

#include "api/backend.h"
#include "api/exec.h"
#include "tui/monitor_app.h"
#include "tui/term.h"

void monitor_shell(struct monitor *m, const char *job, const struct worker_info *w)
{
    if (m->readonly) {
        monitor_status(m, true, "read-only: no shell here");
        return;
    }
    if (w == NULL || w->name == NULL) {
        monitor_status(m, true, "no worker selected");
        return;
    }
    if (w->phase != WORKER_RUNNING) {
        monitor_status(m, true, "worker %s is not running (%s)", w->name,
                       enum_name_or(&worker_phase_names, (int)w->phase, w->phase_other));
        return;
    }
    struct exec_request rq = {.worker = w->name, .tty = true, .stdin_open = true};
    term_suspend();
    printf("trainjob: a shell in %s/%s; exit it to come back.\n", job, w->name);
    fflush(stdout);
    int code = 0;
    struct api_error e;
    memset(&e, 0, sizeof e);
    enum backend_status st = backend_exec(monitor_backend(m), job, &rq, &code, &e);
    term_resume();
    m->full = m->dirty = true;
    if (st != BACKEND_OK)
        monitor_status(m, true, "shell in %s: %s", w->name, e.message);
    else
        monitor_status(m, code != 0, "shell in %s/%s exited %d", job, w->name, code);
}
