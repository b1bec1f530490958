/*
 * metrics_pane: the job screen's Metrics pane — the TensorBoard scalars a
 * job writes to its tensorboard.log_path, as a tag list and one line chart
 * per charted tag, each with a series per run (the log directory's
 * subdirectories: rank0, rank1… or train / eval), followed live.
 *
 * Data: pages of the backend's scalars op (api/scalarpage.h), asked with
 * backend_send from the event loop, one call at a time, each from the
 * previous page's cursor; their points go into a metricset (memory bounded
 * per series whatever the job's length). While the job runs and the pane is
 * shown, one push stream is held open through the loop (the scalars op with
 * follow: the engine sends a page when the job writes, engine/
 * scalarfollow.h), so a job that writes nothing wakes nothing. The stream
 * ends with the job; one that drops (an engine restart) is opened again
 * from the last page's cursor after 1 s, twice as long after each drop in
 * a row, at most 30 s. A backend without the stream (or an engine that
 * says to poll) gets the pages on a timer instead: 1 s after a page that
 * brought points, twice as long after each that brought none, at most
 * 30 s; a page cut short by its limit is followed at once. A job that is
 * not running, or a pane that is hidden, holds no stream and arms no
 * timer: a job screen left open on a finished job wakes nothing. A job
 * that stops is asked once more (its last points) unless its stream
 * brought them. A backend without the op (ACP) and a job without a log
 * path get a message saying what to do, and no more calls.
 *
 * Model: tags sorted by name, each selected or not, a filter (a substring,
 * case-insensitive, of the tag as shown) giving the visible tags and a
 * cursor over them. The charts are the selected visible tags, else the tag
 * under the cursor. Names come from the job's files: they are sanitized
 * (util/utf8) before they are shown, matched or given to the chart.
 *
 * Keys (actions from the job screen's keymap, else raw keys): Up/Down,
 * PgUp/PgDn, g/G move over the tags; Space or Enter selects one; "search"
 * (/) asks for the filter; "smooth-more"/"smooth-less" step the smoothing
 * 0 … 0.999; "log-y" toggles a log scale; "zoom-in"/"zoom-out" show the
 * last N steps (1-2-5 values) or everything; "refresh" asks now;
 * Left/Right/Home/End move the charts' cursor, which reads out each run's
 * value, and Esc hides it. Nothing draws outside metrics_pane_draw /
 * metrics_pane_draw_prompt; replies and timers set dirty and call notify.
 *
 * tui/job_view.c hosts it (it decides the layout and full screen); tests
 * feed pages with metrics_pane_feed and read the model back.
 */
#ifndef TUI_METRICS_PANE_H
#define TUI_METRICS_PANE_H

#include <curses.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/jobspec.h"
#include "widgets/widget.h"

struct api_error;
struct backend;
struct chart_point;
struct http_multi;
struct loop;
struct metrics_pane;
struct scalar_page;
struct strbuf;
struct term;

#define METRICS_POLL_MIN_MS 1000
#define METRICS_POLL_MAX_MS 30000
/*
 * Buckets per series the pane asks the engine for (?chart=): the points its
 * own metricset keeps (first, last, min, max, NaN per bucket) of each page,
 * so a 100 MB event file arrives as a few thousand points a series.
 */
#define METRICS_CHART_BUCKETS 1024

/* What the pane shows when the job has no log path. */
#define METRICS_NO_LOG_PATH                                                                        \
    "this job has no TensorBoard log path: set one in the wizard's TensorBoard section"

typedef void (*metrics_pane_notify_fn)(void *arg);

struct metrics_pane *metrics_pane_new(void);
/* Cancels the call and the timer, frees the pane. */
void metrics_pane_free(struct metrics_pane *p);

/* The terminal's roles, UTF-8 and colour depth to draw with (held by pointer). */
void metrics_pane_set_style(struct metrics_pane *p, const struct term *t);
void metrics_pane_set_notify(struct metrics_pane *p, metrics_pane_notify_fn fn, void *arg);
/*
 * Where pages come from: job's scalars on b through m, timers on lp. With
 * b NULL no call is made: pages arrive through metrics_pane_feed (tests).
 */
void metrics_pane_set_backend(struct metrics_pane *p, struct backend *b, struct http_multi *m,
                              struct loop *lp, const char *job);
/* The job's state as the store has it now: the pane follows while it runs. */
void metrics_pane_set_job_state(struct metrics_pane *p, enum job_state st);
/* Whether the pane is on screen: a hidden pane asks nothing. */
void metrics_pane_set_visible(struct metrics_pane *p, bool visible);

/* A page as a reply brings it (its cursor is the next since=). */
void metrics_pane_feed(struct metrics_pane *p, const struct scalar_page *page);
/* A failed call's error: shown; 404 NoTensorBoard and 501 end the following. */
void metrics_pane_fail(struct metrics_pane *p, const struct api_error *err);

/* ---- the model, read by the draw and by tests ---- */

/* Visible tags (those the filter keeps), in name order, as received. */
size_t metrics_pane_tag_count(const struct metrics_pane *p);
const char *metrics_pane_tag(const struct metrics_pane *p, size_t i);
/* Every tag received, and every run. */
size_t metrics_pane_all_tags(const struct metrics_pane *p);
size_t metrics_pane_run_count(const struct metrics_pane *p);
const char *metrics_pane_run(const struct metrics_pane *p, size_t i);
/* The filter ("" keeps every tag); sets the cursor on the first visible tag. */
void metrics_pane_set_filter(struct metrics_pane *p, const char *text);
const char *metrics_pane_filter(const struct metrics_pane *p);
/* The cursor over the visible tags, moved by delta (clamped). */
size_t metrics_pane_cursor(const struct metrics_pane *p);
void metrics_pane_move(struct metrics_pane *p, long delta);
/* Selects or unselects the tag under the cursor. */
void metrics_pane_toggle(struct metrics_pane *p);
bool metrics_pane_selected(const struct metrics_pane *p, const char *tag);
/* The tags charted: the selected visible ones, else the one under the cursor. */
size_t metrics_pane_charted(const struct metrics_pane *p, const char **tags, size_t cap);
/*
 * The points of (run, tag) as the chart gets them (x = step, y = value),
 * at most cap into out; returns how many there are (0: no such series).
 */
size_t metrics_pane_points(const struct metrics_pane *p, const char *run, const char *tag,
                           struct chart_point *out, size_t cap);
/* Why nothing can be shown (no log path, no scalars op, an error), or NULL. */
const char *metrics_pane_message(const struct metrics_pane *p);
/* The timer's delay in ms if one is armed (or would be, without a loop), else -1. */
int64_t metrics_pane_poll_delay(const struct metrics_pane *p);
/* A call or stream in flight, or the next page due at once (the backlog still coming). */
bool metrics_pane_loading(const struct metrics_pane *p);
/* Pages received, and records the backend said it skipped as damaged. */
uint64_t metrics_pane_pages(const struct metrics_pane *p);
uint64_t metrics_pane_bad_records(const struct metrics_pane *p);

double metrics_pane_smoothing(const struct metrics_pane *p);
bool metrics_pane_log_y(const struct metrics_pane *p);
/* The last N steps shown (0: all). */
double metrics_pane_zoom(const struct metrics_pane *p);

/* "3 tags · 2 runs · smoothing 0.6 · following", for the pane's title. */
void metrics_pane_status(const struct metrics_pane *p, struct strbuf *out);

/* Draws the pane in h rows at (y, x), w cells wide; focused: the tag cursor shows. */
void metrics_pane_draw(struct metrics_pane *p, WINDOW *win, int y, int x, int h, int w,
                       bool focused);
/* Draws the filter prompt over stdscr when one is open. */
void metrics_pane_draw_prompt(struct metrics_pane *p, const struct term *t);
bool metrics_pane_prompting(const struct metrics_pane *p);
/* A key with its keymap action (or NULL); widget result bits. */
unsigned metrics_pane_key(struct metrics_pane *p, const struct widget_key *k, const char *action);
/* Something to draw since the last draw. */
bool metrics_pane_dirty(const struct metrics_pane *p);

#endif
