/*
 * shell: `s` on the job screen's Workers pane — a shell in the selected
 * worker, as `trainjob exec JOB -w WORKER` gives one (api/backend.h
 * backend_exec, the same call). Curses steps aside (def_prog_mode, endwin),
 * the shell runs in the foreground with the terminal as it was before
 * trainjob started, and however it ends (exit, a crash, Ctrl-C, the worker
 * ending under it) the screen comes back whole (reset_prog_mode, a full
 * redraw, the size read again) with the exit status in the status line.
 * What the shell prints is the terminal's business: curses is not up then.
 */
#include <curses.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "api/backend.h"
#include "api/exec.h"
#include "tui/monitor_app.h"

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
    def_prog_mode();
    endwin();
    printf("trainjob: a shell in %s/%s; exit it to come back.\n", job, w->name);
    fflush(stdout);
    int code = 0;
    struct api_error e;
    memset(&e, 0, sizeof e);
    enum backend_status st = backend_exec(monitor_backend(m), job, &rq, &code, &e);
    reset_prog_mode();
    /* The window may have changed size meanwhile (its SIGWINCH went to the shell). */
    struct winsize ws;
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 && ws.ws_col > 0 &&
        (ws.ws_row != LINES || ws.ws_col != COLS))
        resizeterm(ws.ws_row, ws.ws_col);
    refresh(); /* curses takes the terminal back (its alternate screen too) */
    /*
     * The keypad's mode, which the shell's readline turned off on its way
     * out: sent now, not at curses' next read (the next key, already sent
     * in the other mode, would read as Esc [ B).
     */
    char *smkx = tigetstr("smkx");
    if (smkx && smkx != (char *)-1) {
        putp(smkx);
        fflush(stdout);
    }
    clearok(curscr, TRUE);
    m->full = m->dirty = true;
    if (st != BACKEND_OK)
        monitor_status(m, true, "shell in %s: %s", w->name, e.message);
    else
        monitor_status(m, code != 0, "shell in %s/%s exited %d", job, w->name, code);
}
