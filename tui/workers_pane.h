/*
 * workers_pane: a job's workers (pods) as a table — name, role, node,
 * phase, restarts, the last exit code with what it means ("137 killed
 * (SIGKILL/OOM)"), devices and age — for the job screen's triage.
 *
 * The pane reads the worker list it is given (the job row's, held by
 * pointer: set it again whenever the store changes) through a
 * widgets/table, which redraws only the lines that changed, so a job with
 * thousands of workers costs a screenful per frame. Server text is
 * sanitized before it reaches a cell. An exit code other than 0 and a
 * failed phase are drawn in the error role, restarts in the warning role;
 * each also reads without colour (the number, the phase's word).
 */
#ifndef TUI_WORKERS_PANE_H
#define TUI_WORKERS_PANE_H

#include <curses.h>
#include <stdbool.h>
#include <stdint.h>

#include "api/jobstatus.h"
#include "widgets/widget.h"

struct table;
struct workers_pane;

/* The columns, in order. */
enum workers_column {
    WORKERS_COL_NAME,
    WORKERS_COL_ROLE,
    WORKERS_COL_NODE,
    WORKERS_COL_PHASE,
    WORKERS_COL_RESTARTS,
    WORKERS_COL_EXIT,
    WORKERS_COL_DEVICES,
    WORKERS_COL_AGE,
    WORKERS_COL_COUNT
};

struct workers_pane *workers_pane_new(void);
void workers_pane_free(struct workers_pane *p);

/* The roles to draw with (NULL: widget_palette_mono(); held by pointer) and UTF-8 or not. */
void workers_pane_set_style(struct workers_pane *p, const struct widget_palette *pal, bool utf8);
/*
 * The workers to show (NULL: none), held by pointer until the next call,
 * and the time ages are counted to. The cursor stays on its worker.
 */
void workers_pane_set_workers(struct workers_pane *p, const struct worker_list *wl, int64_t now_ms);

/* The time ages are counted to, without re-reading the rows. */
void workers_pane_set_now(struct workers_pane *p, int64_t now_ms);

/* Draws the header and the rows in h lines at (y, x), w cells wide. */
void workers_pane_draw(struct workers_pane *p, WINDOW *win, int y, int x, int h, int w,
                       bool focused);
/* Makes the next draw write every line (something else wrote over the pane). */
void workers_pane_invalidate(struct workers_pane *p);
/* A key for the table (moves, sort): widget result bits; Enter answers ACTIVATE. */
unsigned workers_pane_key(struct workers_pane *p, const struct widget_key *k);

/* The worker under the cursor, NULL when there is none. */
const struct worker_info *workers_pane_selected(const struct workers_pane *p);
/* Puts the cursor on the worker named name; false when there is none. */
bool workers_pane_select(struct workers_pane *p, const char *name);

/* The text of a worker's exit cell ("137 killed (SIGKILL/OOM)", "-"), sanitized, into buf. */
void workers_pane_exit_text(const struct worker_info *w, char *buf, size_t size);

/*
 * A worker's last state in full, for the pane's title ("exit 1
 * (RESTART_JOB, default rule) 40s ago", aged to now_ms), else its exit as
 * workers_pane_exit_text says it; sanitized, into buf. The LAST STATE cell
 * has the same with the bare age ("… 40s").
 */
void workers_pane_last_text(const struct worker_info *w, int64_t now_ms, char *buf, size_t size);

/* The table inside, for tests. */
struct table *workers_pane_table(struct workers_pane *p);

#endif
