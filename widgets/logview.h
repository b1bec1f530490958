/*
 * logview: a live view of a logring — the lines of one source (a worker)
 * or of all of them interleaved, each then prefixed with its source's name
 * ("worker-1 │ "), following the end as lines arrive or paused where the
 * reader left it, with search, wrap and a jump to the first error line.
 *
 * The view reads the ring and does not own it; the ring must outlive it.
 * Its position is a sequence number (the top line) and a row within that
 * line, so appending lines does not move a paused view; when the top line
 * is dropped from the ring the view moves to the oldest line held.
 *
 * Layout: the widget takes `rows` rows (logview_new, logview_set_rows). The
 * last row is a status line when rows >= 2: "FOLLOW" or "PAUSED", then
 * "N new lines" (the palette's warning role) while paused and lines of the
 * shown sources have arrived since the pause, then the search: "/needle"
 * or "/needle: not found" (error role) or "/needle (wrapped)", and "wrap"
 * at the right when wrapping. The other rows are log lines:
 *   - without wrap, one row per line, cut at the right edge, scrolled
 *     sideways with Left/Right (8 cells a press);
 *   - with wrap, a line takes as many rows as it needs at the width of the
 *     text, cut by display cells (CJK two cells; a wide character that
 *     does not fit in a row's last cell moves whole to the next row);
 *   - tabs go to the next multiple of 8 cells of the row; a combining mark
 *     shares its base's cell;
 *   - with a name callback and all sources shown, each line starts with the
 *     source's name padded to the widest name seen so far (at most a third
 *     of the width) and " │ " ("| " without UTF-8), in the label and border
 *     roles; wrapped rows carry a blank name and the bar.
 * Every occurrence of the search needle on screen (ASCII case-insensitive,
 * as logring_find) is drawn in the palette's selected role.
 *
 * Keys (result bits: HANDLED|REDRAW when the view changed, HANDLED alone
 * when the key had nothing to do, e.g. Down at the end):
 *   f, F, Space, p   toggle follow / pause. Following jumps to the end.
 *   Up, k / Down, j  one row; PgUp, Ctrl-B / PgDn, Ctrl-F  one page
 *   Home, g          the oldest line held;  End, G  the end, and follow
 *   Left / Right     scroll sideways (no wrap)
 *   w                toggle wrap
 *   n / N            next / previous match of the last search
 *   e                the first error line held (logring_is_error_line), its row
 *                    drawn in the selected role until the next key or search
 * Any move away from the end (Up, PgUp, Home, n, N, e) pauses. Everything
 * else, '/' included, is IGNORED: the owner reads the needle in a prompt of
 * its own and calls logview_search.
 *
 * Drawing: the view never draws by itself. After appending to the ring the
 * owner calls logview_notify, which sets `dirty` only when the picture
 * changed: following and a shown line arrived, paused and the "new lines"
 * count changed, or the top line was dropped. The owner then draws dirty
 * views at most ~30 times a second (a frame timer in its loop), so a job
 * printing 10,000 lines a second costs 30 redraws, not 10,000.
 */
#ifndef WIDGETS_LOGVIEW_H
#define WIDGETS_LOGVIEW_H

#include <stdbool.h>
#include <stdint.h>

#include "widgets/widget.h"

struct logring;
struct strbuf;

/* Appends the name of source (a worker index) to out, e.g. "worker-1". */
typedef void (*logview_name_fn)(uint32_t source, struct strbuf *out, void *arg);

/* What the last search found. */
enum logview_search_result {
    LOGVIEW_SEARCH_NONE, /* no search yet */
    LOGVIEW_SEARCH_FOUND,
    LOGVIEW_SEARCH_WRAPPED, /* found after wrapping past the end (or start) */
    LOGVIEW_SEARCH_NOT_FOUND,
};

struct logview;

/*
 * A view of ring, `rows` rows high (at least 1), following, no wrap, every
 * source shown, no names. Free with logview_free or ops->destroy.
 */
struct logview *logview_new(const struct logring *ring, int rows);
void logview_free(struct logview *v);

/* The view as a widget (the first member), and back (NULL if not one). */
struct widget *logview_widget(struct logview *v);
struct logview *logview_from_widget(struct widget *wd);

/* The rows the view takes (a pane resize); sets dirty. */
void logview_set_rows(struct logview *v, int rows);
/* The roles to draw with (NULL: widget_palette_mono()); held by pointer; sets dirty. */
void logview_set_palette(struct logview *v, const struct widget_palette *pal);
/* Draws the bar as '|' instead of U+2502 (a terminal without UTF-8); sets dirty. */
void logview_set_utf8(struct logview *v, bool utf8);
/* Names sources for the prefix (NULL: no prefix); sets dirty. */
void logview_set_names(struct logview *v, logview_name_fn fn, void *arg);
/* Shows only source's lines (no prefix then); sets dirty. */
void logview_show_source(struct logview *v, uint32_t source);
/* Shows every source, interleaved in arrival order; sets dirty. */
void logview_show_all(struct logview *v);

/* Call after appending to the ring: dirty only if the picture changed (see above). */
void logview_notify(struct logview *v);

/* Follow (true) or pause (false), as the f key does; sets dirty on a change. */
void logview_set_follow(struct logview *v, bool follow);
bool logview_following(const struct logview *v);
/* Wrap long lines (true) or cut them; sets dirty on a change. */
void logview_set_wrap(struct logview *v, bool wrap);
bool logview_wrapping(const struct logview *v);

/*
 * Searches for needle (a copy is kept for n/N and highlighting) from the
 * top line shown, forward or back, wrapping around the ring once; a match
 * becomes the top line (or comes as near the top as the end allows) and
 * pauses the view. An empty or NULL needle clears the search. Sets dirty.
 */
enum logview_search_result logview_search(struct logview *v, const char *needle, bool forward);
/* The next (forward) or previous match of the last search, as n / N. */
enum logview_search_result logview_search_next(struct logview *v, bool forward);
/* The line e marked (0: none), for tests. */
uint64_t logview_marked(const struct logview *v);
/* Jumps to the first error line held, as e, and marks it until the next move; false (and
 * no move) when there is none. */
bool logview_first_error(struct logview *v);

/* Lines of the shown sources that arrived while paused (0 while following). */
uint64_t logview_new_lines(const struct logview *v);
/* The sequence number of the top line shown at the last draw (0 before it, or empty). */
uint64_t logview_top_seq(const struct logview *v);

#endif
