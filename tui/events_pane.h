/*
 * events_pane: a job's events, newest last, one entry each — the time, a
 * mark, the kind and the event's own sentence ("worker-0 exited 201: rule 1
 * (201 → RESTART_POD) matched; restarting worker-0 (restarts 1/2)").
 *
 * The pane keeps its own copy of the events it is given, formatted and
 * sanitized once (server text never reaches the terminal raw), at most
 * EVENTS_PANE_MAX of them, the newest. Faults, preemptions and marked
 * nodes are drawn in the warning role with "!", a failure in the error
 * role with "✗" ("x" in ASCII), so they read without colour too. Long
 * sentences wrap under the message column (w toggles a cut instead).
 * The view follows the newest event until the reader scrolls up, and
 * stays on the same event when more arrive.
 *
 * Keys (result bits as widget.h): Up/k Down/j, PgUp/PgDn, Home/g End/G
 * scroll (End follows again), w toggles wrap; everything else IGNORED.
 */
#ifndef TUI_EVENTS_PANE_H
#define TUI_EVENTS_PANE_H

#include <curses.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/jobstatus.h"
#include "widgets/widget.h"

#define EVENTS_PANE_MAX 1000 /* older events than the newest this many are not shown */

enum events_pane_severity {
    EVENTS_PANE_INFO,
    EVENTS_PANE_WARNING,
    EVENTS_PANE_ERROR,
};

struct events_pane;

struct events_pane *events_pane_new(void);
void events_pane_free(struct events_pane *p);

/* The roles to draw with (NULL: widget_palette_mono(); held by pointer) and UTF-8 or not. */
void events_pane_set_style(struct events_pane *p, const struct widget_palette *pal, bool utf8);
/*
 * The events to show, oldest first (a job row's). Copied; formatted again
 * only when they differ from the last call's. Times are shown in local
 * time: HH:MM:SS, with the date in front when any event is not from today.
 */
void events_pane_set_events(struct events_pane *p, const struct job_event *ev, size_t n);

/* Events held; entry i's text (time, mark, kind, message: one line) and severity. */
size_t events_pane_count(const struct events_pane *p);
const char *events_pane_text(const struct events_pane *p, size_t i);
enum events_pane_severity events_pane_severity_of(const struct events_pane *p, size_t i);
/* How one event reads: severity by kind, action and state. */
enum events_pane_severity events_pane_classify(const struct job_event *e);

void events_pane_set_wrap(struct events_pane *p, bool wrap);
bool events_pane_wrapping(const struct events_pane *p);
/* Whether the view follows the newest event. */
bool events_pane_following(const struct events_pane *p);

/* Draws h lines at (y, x), w cells wide; every line is written. */
void events_pane_draw(struct events_pane *p, WINDOW *win, int y, int x, int h, int w);
unsigned events_pane_key(struct events_pane *p, const struct widget_key *k);
/* Something to draw since the last draw. */
bool events_pane_dirty(const struct events_pane *p);

#endif
