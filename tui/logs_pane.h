/*
 * logs_pane: the job screen's log pane — one worker's log, or every
 * worker's interleaved by the time each line was written, with a
 * "worker-1 │ " prefix, followed live.
 *
 * The pane owns a bounded logring, a logview over it, and one log stream
 * per worker it follows: a backend_send(BACKEND_OP_LOGS, tail 1000,
 * follow) call whose pieces (on_data) are appended to the ring under the
 * stream's source id. Switching worker cancels the old calls and clears
 * the ring, so a worker's lines are never shown twice. When a stream ends
 * (the worker or job ended, the engine went away) the title says so; when
 * the store then reports the worker running again (its phase or restarts
 * changed), the pane follows it again from its tail.
 *
 * Keys: follow/pause, wrap, search (a prompt; tui/prompt), next/previous
 * match and the first error line arrive as action names from the job
 * screen; other keys go to the logview (arrows, PgUp/PgDn, g/G, Left/Right).
 * Nothing here draws outside logs_pane_draw / logs_pane_draw_prompt;
 * arriving data only sets dirty and calls the notify hook.
 */
#ifndef TUI_LOGS_PANE_H
#define TUI_LOGS_PANE_H

#include <curses.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/jobstatus.h"
#include "widgets/widget.h"

struct backend;
struct http_multi;
struct logring;
struct logring_config;
struct logview;
struct strbuf;
struct term;
struct logs_pane;

#define LOGS_PANE_TAIL 1000 /* lines of history asked for when a stream starts */

/* Called when the pane has something new to draw (lines arrived, a stream ended). */
typedef void (*logs_pane_notify_fn)(void *arg);

/* A pane with a ring of cfg's limits (NULL: the defaults), following nothing. */
struct logs_pane *logs_pane_new(const struct logring_config *cfg);
/* Cancels every stream and frees the pane. */
void logs_pane_free(struct logs_pane *p);

/* The roles to draw with (NULL: mono; held by pointer) and UTF-8 or not. */
void logs_pane_set_style(struct logs_pane *p, const struct widget_palette *pal, bool utf8);
void logs_pane_set_notify(struct logs_pane *p, logs_pane_notify_fn fn, void *arg);
/*
 * Where streams come from: job's logs on b through m. With b NULL no call
 * is made and streams wait for logs_pane_feed (tests, a backend without logs).
 */
void logs_pane_set_backend(struct logs_pane *p, struct backend *b, struct http_multi *m,
                           const char *job);

/* Follows worker alone (cancels the other streams, clears the ring). */
void logs_pane_follow_worker(struct logs_pane *p, const char *worker);
/* Follows every worker in names (cancels the other streams, clears the ring). */
void logs_pane_follow_all(struct logs_pane *p, const char *const *names, size_t n);
/*
 * The job's workers as the store has them now: ended streams whose worker
 * runs again (restarts or phase changed) follow it again; in all-workers
 * mode, workers not yet followed are added.
 */
void logs_pane_workers_changed(struct logs_pane *p, const struct worker_list *wl);

/* Whether the pane follows every worker; the worker it follows otherwise (NULL: none). */
bool logs_pane_all(const struct logs_pane *p);
const char *logs_pane_worker(const struct logs_pane *p);
/* Streams followed, and how many of them have ended. */
size_t logs_pane_streams(const struct logs_pane *p);
size_t logs_pane_ended(const struct logs_pane *p);

/*
 * The way a stream's data arrives (the on_data of its call): len bytes of
 * worker's log, cut anywhere. A worker not followed is ignored. Returns 0.
 */
int logs_pane_feed(struct logs_pane *p, const char *worker, const char *data, size_t len);
/* Without a backend: whether fed data is a framed stream with times (engine/logfollow.h). */
void logs_pane_set_frames(struct logs_pane *p, bool framed);
/* The way a stream's end arrives: why NULL when the log simply ended. */
void logs_pane_end(struct logs_pane *p, const char *worker, const char *why);

/* What the pane shows, for its title: "worker-0 · following", "all workers (3) · ended: …". */
void logs_pane_status(const struct logs_pane *p, struct strbuf *out);

/* Draws the view (its last row is the status line) in h rows at (y, x), w cells wide. */
void logs_pane_draw(struct logs_pane *p, WINDOW *win, int y, int x, int h, int w);
/* Draws the search prompt over stdscr when one is open (after everything else). */
void logs_pane_draw_prompt(struct logs_pane *p, const struct term *t);
/* Whether a search prompt is open: every key goes to it. */
bool logs_pane_prompting(const struct logs_pane *p);
/*
 * A key with the keymap's action for it (or NULL): "follow", "wrap",
 * "search", "search-next", "search-prev", "first-error"; other keys go to
 * the log view. Widget result bits.
 */
unsigned logs_pane_key(struct logs_pane *p, const struct widget_key *k, const char *action);
/* Something to draw since the last draw. */
bool logs_pane_dirty(const struct logs_pane *p);

/* The ring and view inside, for tests. */
struct logring *logs_pane_ring(struct logs_pane *p);
struct logview *logs_pane_view(struct logs_pane *p);

#endif
