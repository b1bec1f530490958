/*
 * logview: the live log view widget (see logview.h).
 *
 * The view owns no log text: it reads a logring its owner appends to. It
 * owns its position (the top line's sequence number and the row within
 * that line when wrapping), the follow/pause state and the count of lines
 * that arrived while paused, the sideways scroll, the filter (one source or
 * all), the last search needle and match, and the width of the widest
 * source name seen, which sizes the prefix column.
 *
 * Layout is recomputed from the ring on every draw: following, the top is
 * the position that puts the newest shown line's last row on the last text
 * row ("the end position"); paused, the stored top is clamped to the lines
 * still held and never beyond the end position. Rows are counted at the
 * text width of the last draw, so keys move by the rows the reader saw.
 * Following, a line the worker has not finished yet (logring_partial) takes
 * the last text row until its newline makes it a line like others.
 * Units of drawing are a character and the zero-width marks after it:
 * measuring and drawing them is widgets/logtext.c.
 */
#include "widgets/logview.h"

#include <stdlib.h>
#include <string.h>

#include "util/logring.h"
#include "util/strbuf.h"
#include "util/utf8.h"
#include "util/xalloc.h"
#include "widgets/logtext.h"

enum {
    HSCROLL_STEP = 8,
    CTRL_B = 2,
    CTRL_F = 6,
    MAX_NAME_PASSES = 3, /* draws redone after the name column widened */
};

struct logview {
    struct widget base; /* first: a log view is a widget */
    const struct logring *ring;
    const struct widget_palette *pal;
    int rows;   /* rows taken, the status row included */
    int last_w; /* text width (cells) at the last draw; 0 before it */
    bool follow;
    bool wrap;
    bool utf8;
    uint64_t top;       /* top line (paused; following, as last drawn) */
    int top_row;        /* rows of the top line above the view (wrap) */
    int hscroll;        /* cells hidden left of the text (no wrap) */
    uint64_t notified;  /* newest seq logview_notify has counted */
    uint64_t new_lines; /* shown lines that arrived while paused */
    uint64_t drawn_top; /* top at the last draw */
    bool one_source;
    uint32_t source;
    logview_name_fn name_fn;
    void *name_arg;
    int name_w; /* cells of the widest name seen */
    struct strbuf name;
    struct strbuf needle; /* sanitized; empty: no search */
    uint64_t match;       /* line of the current match, 0: none */
    uint64_t marked; /* the error line `e` jumped to, shown marked until the next move; 0: none */
    enum logview_search_result search;
    struct strbuf partial; /* following: the unfinished newest line, shown last */
    uint64_t drawn_tick;   /* logring_tick at the last draw */
    uint32_t partial_source;
    bool show_partial;
};

static const struct widget_ops logview_ops;

/* ---- which lines are shown, and where the view stands ------------------ */

/* True when line seq is held and belongs to a shown source. */
static bool shown(const struct logview *v, uint64_t seq)
{
    if (seq < logring_first_seq(v->ring) || seq > logring_last_seq(v->ring))
        return false;
    return !v->one_source || logring_source(v->ring, seq) == v->source;
}

/* The first shown line at or after seq (forward) or at or before it; 0: none. */
static uint64_t shown_from(const struct logview *v, uint64_t seq, bool forward)
{
    uint64_t first = logring_first_seq(v->ring), last = logring_last_seq(v->ring);
    if (logring_count(v->ring) == 0)
        return 0;
    if (forward) {
        for (uint64_t s = seq < first ? first : seq; s <= last; s++)
            if (shown(v, s))
                return s;
    } else {
        for (uint64_t s = seq > last ? last : seq; s >= first && s > 0; s--)
            if (shown(v, s))
                return s;
    }
    return 0;
}

/* Text rows: all but the status row (which a 1-row view does without). */
static int text_rows(const struct logview *v)
{
    int rows = v->rows >= 2 ? v->rows - 1 : v->rows;
    return v->show_partial && rows >= 2 ? rows - 1 : rows;
}

/* Text rows with the partial line's row counted in. */
static int text_rows_all(const struct logview *v)
{
    return v->rows >= 2 ? v->rows - 1 : v->rows;
}

/* Rows line seq takes at the last drawn width. */
static int line_rows(const struct logview *v, uint64_t seq)
{
    struct logring_line line;
    if (!v->wrap || !logring_get(v->ring, seq, &line))
        return 1;
    return logtext_rows(line.text, line.len, v->last_w, true);
}

struct pos {
    uint64_t seq; /* 0: nothing shown */
    int row;
};

/* a is before b. */
static bool pos_before(struct pos a, struct pos b)
{
    return a.seq < b.seq || (a.seq == b.seq && a.row < b.row);
}

/* The top that puts the newest shown line's last row on the last text row. */
static struct pos end_pos(const struct logview *v)
{
    struct pos p = {shown_from(v, UINT64_MAX, false), 0};
    int want = text_rows(v), total = 0;
    while (p.seq) {
        int n = line_rows(v, p.seq);
        if (total + n >= want) {
            p.row = total + n - want;
            return p;
        }
        total += n;
        uint64_t prev = shown_from(v, p.seq - 1, false);
        if (!prev)
            return p;
        p.seq = prev;
    }
    return p;
}

/* The paused top, moved onto a line still held and shown, and not beyond the end. */
static struct pos clamped_top(const struct logview *v)
{
    struct pos p = {v->top, v->top_row};
    if (!shown(v, p.seq)) {
        uint64_t s = shown_from(v, p.seq, true);
        if (s != p.seq)
            p.row = 0;
        p.seq = s ? s : shown_from(v, p.seq, false);
    }
    if (!p.seq)
        return (struct pos){0, 0};
    int n = line_rows(v, p.seq);
    if (p.row >= n)
        p.row = n - 1;
    struct pos end = end_pos(v);
    if (pos_before(end, p))
        p = end;
    return p;
}

/* Where the view stands now: the end when following, else the clamped top. */
static struct pos current(const struct logview *v)
{
    return v->follow ? end_pos(v) : clamped_top(v);
}

static void set_pos(struct logview *v, struct pos p)
{
    v->top = p.seq;
    v->top_row = p.row;
}

/* Stops following where the view stands now; lines from now on count as new. */
static void pause_here(struct logview *v)
{
    if (!v->follow)
        return;
    set_pos(v, end_pos(v));
    v->follow = false;
    v->new_lines = 0;
    v->notified = logring_last_seq(v->ring);
}

/* Marks the view for drawing and says so in result bits. */
static unsigned changed(struct logview *v)
{
    v->base.dirty = true;
    return WIDGET_HANDLED | WIDGET_REDRAW;
}

/* Moves the paused view down n rows, never beyond the end; false when it could not move. */
static bool scroll_down(struct logview *v, int n)
{
    struct pos p = clamped_top(v), end = end_pos(v), start = p;
    for (int i = 0; i < n && pos_before(p, end); i++) {
        if (p.row + 1 < line_rows(v, p.seq)) {
            p.row++;
        } else {
            p.seq = shown_from(v, p.seq + 1, true);
            p.row = 0;
        }
    }
    set_pos(v, p);
    return pos_before(start, p);
}

/* Moves the paused view up n rows, never before the oldest line; false when it could not move. */
static bool scroll_up(struct logview *v, int n)
{
    struct pos p = clamped_top(v), start = p;
    for (int i = 0; i < n && p.seq; i++) {
        if (p.row > 0) {
            p.row--;
            continue;
        }
        uint64_t prev = shown_from(v, p.seq - 1, false);
        if (!prev)
            break;
        p.seq = prev;
        p.row = line_rows(v, prev) - 1;
    }
    set_pos(v, p);
    return pos_before(p, start);
}

/* Pauses with line seq at the top (or as near as the end allows). */
static void jump_to(struct logview *v, uint64_t seq)
{
    pause_here(v);
    v->top = seq;
    v->top_row = 0;
    set_pos(v, clamped_top(v));
}

/* ---- search ------------------------------------------------------------ */

/* The next shown line containing the needle from seq on (inclusive); 0: none. */
static uint64_t find_shown(const struct logview *v, uint64_t seq, bool forward)
{
    const char *nd = strbuf_str(&v->needle);
    for (;;) {
        uint64_t s = logring_find(v->ring, seq, nd, forward);
        if (!s || shown(v, s))
            return s;
        if (!forward && s == 1)
            return 0;
        seq = forward ? s + 1 : s - 1;
    }
}

/* Searches from seq (inclusive), wrapping around once; jumps to what it finds. */
static enum logview_search_result search_from(struct logview *v, uint64_t seq, bool forward)
{
    uint64_t s = find_shown(v, seq, forward);
    enum logview_search_result res = LOGVIEW_SEARCH_FOUND;
    if (!s) {
        s = find_shown(v, forward ? 0 : UINT64_MAX, forward);
        if (s && (forward ? s >= seq : s <= seq))
            s = 0;
        res = LOGVIEW_SEARCH_WRAPPED;
    }
    if (!s) {
        v->match = 0;
        v->search = LOGVIEW_SEARCH_NOT_FOUND;
        v->base.dirty = true;
        return v->search;
    }
    v->match = s;
    v->search = res;
    jump_to(v, s);
    v->base.dirty = true;
    return res;
}

enum logview_search_result logview_search(struct logview *v, const char *needle, bool forward)
{
    v->marked = 0;
    strbuf_reset(&v->needle);
    if (needle)
        utf8_sanitize(&v->needle, needle, strlen(needle), 0);
    v->match = 0;
    v->base.dirty = true;
    if (v->needle.len == 0) {
        v->search = LOGVIEW_SEARCH_NONE;
        return v->search;
    }
    struct pos p = current(v);
    return search_from(v, p.seq ? p.seq : logring_first_seq(v->ring), forward);
}

enum logview_search_result logview_search_next(struct logview *v, bool forward)
{
    v->marked = 0;
    if (v->needle.len == 0)
        return LOGVIEW_SEARCH_NONE;
    uint64_t from;
    if (v->match && shown(v, v->match)) {
        from = forward ? v->match + 1 : v->match - 1;
    } else {
        struct pos p = current(v);
        from = p.seq ? p.seq : logring_first_seq(v->ring);
    }
    return search_from(v, from, forward);
}

/* Predicate for e: an error line of a shown source. */
static bool shown_error(const struct logring_line *line, void *arg)
{
    const struct logview *v = arg;
    if (v->one_source && line->source != v->source)
        return false;
    return logring_is_error_line(line, NULL);
}

bool logview_first_error(struct logview *v)
{
    uint64_t s = logring_first_match(v->ring, shown_error, v);
    if (!s)
        return false;
    jump_to(v, s);
    v->marked = s;
    v->base.dirty = true;
    return true;
}

/* ---- keys -------------------------------------------------------------- */

/* The widest shown line on screen now, in cells, for the sideways scroll. */
static int widest_on_screen(const struct logview *v)
{
    struct pos p = current(v);
    int widest = 0;
    struct logring_line line;
    for (int r = 0; r < text_rows(v) && p.seq; r++) {
        if (logring_get(v->ring, p.seq, &line)) {
            int c = logtext_cells(line.text, line.len);
            if (c > widest)
                widest = c;
        }
        p.seq = shown_from(v, p.seq + 1, true);
    }
    return widest;
}

/* Up, PgUp, Home: pause, then move. */
static unsigned key_up(struct logview *v, int n)
{
    bool was_following = v->follow;
    pause_here(v);
    if (scroll_up(v, n) || was_following)
        return changed(v);
    return WIDGET_HANDLED;
}

/* Down, PgDn: nothing to do while following. */
static unsigned key_down(struct logview *v, int n)
{
    if (v->follow)
        return WIDGET_HANDLED;
    return scroll_down(v, n) ? changed(v) : WIDGET_HANDLED;
}

static unsigned key_home(struct logview *v)
{
    struct pos before = current(v);
    bool was_following = v->follow;
    pause_here(v);
    set_pos(v, (struct pos){shown_from(v, 0, true), 0});
    struct pos after = clamped_top(v);
    if (!was_following && before.seq == after.seq && before.row == after.row)
        return WIDGET_HANDLED;
    return changed(v);
}

/* Left/Right: the sideways scroll (nothing to do while wrapping). */
static unsigned key_sideways(struct logview *v, int dir)
{
    if (v->wrap)
        return WIDGET_HANDLED;
    int h = v->hscroll;
    if (dir < 0) {
        h = h > HSCROLL_STEP ? h - HSCROLL_STEP : 0;
    } else {
        int room = widest_on_screen(v) - v->last_w;
        if (room > h)
            h = h + HSCROLL_STEP < room ? h + HSCROLL_STEP : room;
    }
    if (h == v->hscroll)
        return WIDGET_HANDLED;
    v->hscroll = h;
    return changed(v);
}

/* Result of a search key: a move redraws; nothing more to find only consumes the key. */
static unsigned search_key(struct logview *v, bool forward)
{
    if (v->needle.len == 0)
        return WIDGET_HANDLED;
    logview_search_next(v, forward);
    return changed(v); /* the status line says what happened */
}

static unsigned key_function(struct logview *v, int code)
{
    int page = text_rows(v);
    switch (code) {
    case KEY_UP:
        return key_up(v, 1);
    case KEY_DOWN:
        return key_down(v, 1);
    case KEY_PPAGE:
        return key_up(v, page);
    case KEY_NPAGE:
        return key_down(v, page);
    case KEY_HOME:
        return key_home(v);
    case KEY_END:
        if (v->follow)
            return WIDGET_HANDLED;
        logview_set_follow(v, true);
        return changed(v);
    case KEY_LEFT:
        return key_sideways(v, -1);
    case KEY_RIGHT:
        return key_sideways(v, 1);
    default:
        return WIDGET_IGNORED;
    }
}

/* ops->key: see the table in logview.h. */
static unsigned logview_key(struct widget *wd, const struct widget_key *k)
{
    struct logview *v = (struct logview *)wd;
    if (v->marked) { /* any key moves on from the error line */
        v->marked = 0;
        v->base.dirty = true;
    }
    if (wd->disabled || k->alt)
        return WIDGET_IGNORED;
    if (k->is_function)
        return key_function(v, k->code);
    switch (k->code) {
    case 'f':
    case 'F':
    case ' ':
    case 'p':
        logview_set_follow(v, !v->follow);
        return changed(v);
    case 'k':
        return key_function(v, KEY_UP);
    case 'j':
        return key_function(v, KEY_DOWN);
    case CTRL_B:
        return key_function(v, KEY_PPAGE);
    case CTRL_F:
        return key_function(v, KEY_NPAGE);
    case 'g':
        return key_function(v, KEY_HOME);
    case 'G':
        return key_function(v, KEY_END);
    case 'w':
        logview_set_wrap(v, !v->wrap);
        return changed(v);
    case 'n':
        return search_key(v, true);
    case 'N':
        return search_key(v, false);
    case 'e':
        return logview_first_error(v) ? changed(v) : WIDGET_HANDLED;
    default:
        return WIDGET_IGNORED;
    }
}

/* ---- drawing ----------------------------------------------------------- */

/* Cells of the name column (0: no prefix), at most a third of width w. */
static int name_cells(const struct logview *v, int w)
{
    if (!v->name_fn || v->one_source || w / 3 < 4)
        return 0;
    int n = v->name_w < 1 ? 1 : v->name_w;
    return n < w / 3 ? n : w / 3;
}

/*
 * Draws the prefix of a row at (y, x): source's name padded to nw cells
 * (logtext_blank on a wrapped row) and the bar. Returns true when the name was
 * wider than the column and the column may still widen.
 */
static bool draw_prefix(struct logview *v, WINDOW *win, int y, int x, int nw, int w,
                        uint32_t source, bool first_row)
{
    bool wider = false;
    logtext_use_role(win, v->pal->label);
    logtext_blank(win, y, x, nw);
    if (first_row) {
        strbuf_reset(&v->name);
        v->name_fn(source, &v->name, v->name_arg);
        int cells = (int)utf8_width(v->name.buf ? v->name.buf : "", v->name.len);
        if (cells > v->name_w) {
            wider = nw < w / 3;
            v->name_w = cells;
        }
        logtext_put(win, y, x, nw, strbuf_str(&v->name), v->name.len);
    }
    logtext_use_role(win, v->pal->border);
    logtext_blank(win, y, x + nw, 3);
    if (v->utf8)
        logtext_put(win, y, x + nw + 1, 1, "\xe2\x94\x82", 3);
    else
        mvwaddch(win, y, x + nw + 1, '|');
    return wider;
}

/*
 * Draws the text rows from the current position; returns true when a name
 * turned out wider than the column, so the caller draws again.
 */
static bool draw_lines(struct logview *v, WINDOW *win, int y, int x, int w)
{
    int nw = name_cells(v, w), pw = nw ? nw + 3 : 0, tw = w - pw;
    int r = 0;
    bool wider = false;

    v->last_w = tw;
    v->drawn_tick = logring_tick(v->ring);
    /* Following, the newest unfinished line is shown below the others. */
    v->show_partial =
        v->follow &&
        logring_partial(v->ring, !v->one_source, v->source, &v->partial, &v->partial_source) &&
        (!v->one_source || v->partial_source == v->source);
    int rows = text_rows(v);
    struct pos p = current(v);
    set_pos(v, p);
    v->drawn_top = p.seq;
    for (uint64_t seq = p.seq; seq && r < rows; seq = shown_from(v, seq + 1, true)) {
        struct logring_line line;
        struct logtext_highlight hl;
        if (!logring_get(v->ring, seq, &line))
            break;
        logtext_highlight_init(&hl, line.text, line.len, &v->needle);
        size_t from = 0;
        for (int lr = 0; r < rows; lr++) {
            size_t to = v->wrap ? logtext_row_end(line.text, line.len, from, tw) : line.len;
            if (seq != p.seq || lr >= p.row) {
                if (pw && draw_prefix(v, win, y + r, x, nw, w, line.source, lr == 0))
                    wider = true;
                logtext_draw_row(v->pal, win, y + r, x + pw, tw, line.text, from, to,
                                 v->wrap ? 0 : v->hscroll, &hl);
                if (seq == v->marked) /* the error line `e` found: the whole row stands out */
                    mvwchgat(win, y + r, x + pw, tw, v->pal->selected,
                             PAIR_NUMBER(v->pal->selected), NULL);
                r++;
            }
            from = to;
            if (from >= line.len)
                break;
        }
    }
    if (v->show_partial && rows < text_rows_all(v)) {
        struct logtext_highlight hl;
        logtext_highlight_init(&hl, v->partial.buf, v->partial.len, &v->needle);
        logtext_use_role(win, v->pal->normal);
        for (; r < rows; r++)
            logtext_blank(win, y + r, x, w);
        if (pw && draw_prefix(v, win, y + r, x, nw, w, v->partial_source, true))
            wider = true;
        /* The end of an unfinished line is what changes: without wrap, show its last cells. */
        int cells = logtext_cells(v->partial.buf, v->partial.len);
        int skip = v->wrap ? 0 : (cells > tw ? cells - tw : 0);
        size_t from = 0;
        if (v->wrap) /* its last row, when it wraps */
            for (size_t to;
                 (to = logtext_row_end(v->partial.buf, v->partial.len, from, tw)) < v->partial.len;)
                from = to;
        logtext_draw_row(v->pal, win, y + r, x + pw, tw, v->partial.buf, from, v->partial.len, skip,
                         &hl);
        r++;
    }
    logtext_use_role(win, v->pal->normal);
    for (; r < rows; r++)
        logtext_blank(win, y + r, x, w);
    return wider;
}

/* Draws one status-line piece at column *col in role a, clipped to w. */
static void status_piece(WINDOW *win, int y, int x, int w, int *col, attr_t a, const char *s)
{
    logtext_use_role(win, a);
    *col += logtext_put(win, y, x + *col, w - *col, s, strlen(s));
}

/* The status row: mode, new lines, search; "wrap" at the right. */
static void draw_status(struct logview *v, WINDOW *win, int y, int x, int w)
{
    const struct widget_palette *pal = v->pal;
    struct strbuf sb = STRBUF_INIT;
    int col = 0;

    logtext_use_role(win, pal->dim);
    logtext_blank(win, y, x, w);
    status_piece(win, y, x, w, &col, pal->label, v->follow ? "FOLLOW" : "PAUSED");
    if (!v->follow && v->new_lines > 0) {
        strbuf_addf(&sb, "  %llu new line%s", (unsigned long long)v->new_lines,
                    v->new_lines == 1 ? "" : "s");
        status_piece(win, y, x, w, &col, pal->warning, strbuf_str(&sb));
    }
    if (v->needle.len > 0) {
        strbuf_reset(&sb);
        strbuf_addf(&sb, "  /%s", strbuf_str(&v->needle));
        status_piece(win, y, x, w, &col, pal->normal, strbuf_str(&sb));
        if (v->search == LOGVIEW_SEARCH_NOT_FOUND)
            status_piece(win, y, x, w, &col, pal->error, ": not found");
        else if (v->search == LOGVIEW_SEARCH_WRAPPED)
            status_piece(win, y, x, w, &col, pal->dim, " (wrapped)");
    }
    if (v->wrap && w - col >= 6) {
        int c = w - 4;
        status_piece(win, y, x, w, &c, pal->dim, "wrap");
    }
    strbuf_free(&sb);
}

/* ops->draw: the text rows, then the status row. */
static void logview_draw(struct widget *wd, WINDOW *win, int y, int x, int w, bool focused)
{
    struct logview *v = (struct logview *)wd;
    attr_t attrs;
    short pair;

    wd->dirty = false;
    if (w <= 0)
        return;
    wattr_get(win, &attrs, &pair, NULL);
    for (int pass = 0; pass < MAX_NAME_PASSES; pass++) {
        if (!draw_lines(v, win, y, x, w))
            break;
    }
    if (v->rows >= 2)
        draw_status(v, win, y + v->rows - 1, x, w);
    wattr_set(win, attrs, pair, NULL);
    if (focused)
        wmove(win, y + v->rows - 1, x);
}

/* ops->height: the rows set by the owner, whatever the width. */
static int logview_height(const struct widget *wd, int w)
{
    return ((const struct logview *)wd)->rows;
}

/* ops->destroy: frees the view (not the ring). */
static void logview_destroy(struct widget *wd)
{
    struct logview *v = (struct logview *)wd;
    strbuf_free(&v->name);
    strbuf_free(&v->needle);
    strbuf_free(&v->partial);
    free(v);
}

static const struct widget_ops logview_ops = {
    .kind = "logview",
    .draw = logview_draw,
    .key = logview_key,
    .height = logview_height,
    .destroy = logview_destroy,
};

/* ---- the rest of the interface ----------------------------------------- */

struct logview *logview_new(const struct logring *ring, int rows)
{
    struct logview *v = xcalloc(1, sizeof *v);
    v->base.ops = &logview_ops;
    v->base.dirty = true;
    v->ring = ring;
    v->pal = widget_palette_mono();
    v->rows = rows < 1 ? 1 : rows;
    v->follow = true;
    v->utf8 = true;
    v->notified = logring_last_seq(ring);
    return v;
}

void logview_free(struct logview *v)
{
    if (v)
        logview_destroy(&v->base);
}

struct widget *logview_widget(struct logview *v)
{
    return &v->base;
}

struct logview *logview_from_widget(struct widget *wd)
{
    return wd && wd->ops == &logview_ops ? (struct logview *)wd : NULL;
}

void logview_set_rows(struct logview *v, int rows)
{
    v->rows = rows < 1 ? 1 : rows;
    v->base.dirty = true;
}

void logview_set_palette(struct logview *v, const struct widget_palette *pal)
{
    v->pal = pal ? pal : widget_palette_mono();
    v->base.dirty = true;
}

void logview_set_utf8(struct logview *v, bool utf8)
{
    v->utf8 = utf8;
    v->base.dirty = true;
}

void logview_set_names(struct logview *v, logview_name_fn fn, void *arg)
{
    v->name_fn = fn;
    v->name_arg = arg;
    v->name_w = 0;
    v->base.dirty = true;
}

/* Applies a new filter: the position stays on the nearest shown line; counts restart. */
static void set_filter(struct logview *v, bool one, uint32_t source)
{
    v->marked = 0;
    v->one_source = one;
    v->source = source;
    v->top_row = 0;
    v->new_lines = 0;
    v->notified = logring_last_seq(v->ring);
    v->match = 0;
    v->base.dirty = true;
}

void logview_show_source(struct logview *v, uint32_t source)
{
    set_filter(v, true, source);
}

void logview_show_all(struct logview *v)
{
    set_filter(v, false, 0);
}

void logview_notify(struct logview *v)
{
    uint64_t first = logring_first_seq(v->ring), last = logring_last_seq(v->ring);
    uint64_t from = v->notified + 1 > first ? v->notified + 1 : first, n = 0;

    if (last >= from) {
        if (!v->one_source) {
            n = last - from + 1;
        } else {
            for (uint64_t s = from; s <= last; s++)
                n += logring_source(v->ring, s) == v->source;
        }
    }
    v->notified = last > v->notified ? last : v->notified;
    if (n > 0 && !v->follow)
        v->new_lines += n;
    if (n > 0 || (v->drawn_top && v->drawn_top < first))
        v->base.dirty = true;
    /* Following, an unfinished line that grew (or was finished) is news too. */
    if (v->follow && logring_tick(v->ring) != v->drawn_tick) {
        struct strbuf now = STRBUF_INIT;
        uint32_t src;
        bool has = logring_partial(v->ring, !v->one_source, v->source, &now, &src) &&
                   (!v->one_source || src == v->source);
        if (has != v->show_partial ||
            (has && (now.len != v->partial.len || memcmp(now.buf, v->partial.buf, now.len) != 0)))
            v->base.dirty = true;
        strbuf_free(&now);
    }
}

void logview_set_follow(struct logview *v, bool follow)
{
    if (follow)
        v->marked = 0; /* following moves on from the error line */
    if (follow == v->follow)
        return;
    if (!follow) {
        pause_here(v);
    } else {
        v->follow = true;
        v->new_lines = 0;
        v->notified = logring_last_seq(v->ring);
    }
    v->base.dirty = true;
}

bool logview_following(const struct logview *v)
{
    return v->follow;
}

void logview_set_wrap(struct logview *v, bool wrap)
{
    if (wrap == v->wrap)
        return;
    v->wrap = wrap;
    v->top_row = 0;
    v->hscroll = 0;
    v->base.dirty = true;
}

bool logview_wrapping(const struct logview *v)
{
    return v->wrap;
}

uint64_t logview_new_lines(const struct logview *v)
{
    return v->new_lines;
}

uint64_t logview_top_seq(const struct logview *v)
{
    return v->drawn_top;
}

uint64_t logview_marked(const struct logview *v)
{
    return v->marked;
}
