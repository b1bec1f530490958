/*
 * select: the choice widget and its popup list (see select.h).
 *
 * The select owns copies of its options, the chosen index, and while open:
 * the filter text, the indices of the options that match it (`vis`, in
 * option order), the cursor (an option index), the first visible row of
 * `vis` (`top`), and the popup window. Where the popup goes comes from the
 * anchor: the closed view's screen position and width, from its last draw
 * into a window (not a pad) or from select_set_anchor.
 *
 * Geometry of the popup (w × h):
 *   row 0          top border; ACS_UARROW near its right end when rows are
 *                  hidden above
 *   row 1          " Filter: " and the filter, or a dim hint when empty
 *   rows 2..h-2    the options, one per row: " label   detail "
 *   row h-1        bottom border; ACS_DARROW when rows are hidden below
 */
#include "widgets/select.h"

#include <stdlib.h>
#include <string.h>

#include "util/utf8.h"
#include "util/xalloc.h"

enum {
    ESC = 27,
    CTRL_H = 8,
    CTRL_U = 21,
    ASCII_DEL = 127,
    FILTER_MAX = 64, /* bytes of filter text */
    CHROME_ROWS = 3, /* two borders and the filter line */
    GAP = 2,         /* cells between a label and its detail */
    MIN_TEXT = 16,   /* the popup's text is at least this wide */
};

static const char FILTER_PROMPT[] = "Filter: ";
static const char FILTER_HINT[] = "type to filter";

struct option {
    char *label;
    char *detail; /* "" when none */
    char *reason; /* "" when none */
    bool disabled;
};

struct select {
    struct widget base; /* first: a select is a widget */
    struct option *opts;
    size_t n;
    size_t selected; /* SELECT_NONE: nothing chosen */
    const struct widget_palette *pal;
    bool utf8;
    int max_rows;

    /* The closed view's last draw, in screen coordinates. */
    int anchor_y, anchor_x, anchor_w;

    /* The popup, while open. */
    bool open;
    char filter[FILTER_MAX + 1];
    size_t filter_len;
    size_t *vis; /* options matching the filter (room for n) */
    size_t nvis;
    size_t cursor; /* an option index, or SELECT_NONE */
    size_t top;    /* first row of vis shown */
    int rows;      /* option rows the popup shows */
    WINDOW *win;   /* NULL until the first select_draw_popup after opening */
};

static const struct widget_ops select_ops;

static char ascii_lower(char c)
{
    return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* Whether hay contains needle, ASCII letters compared case-insensitively. */
static bool contains_fold(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    if (n == 0)
        return true;
    for (; *hay; hay++) {
        size_t i = 0;
        while (i < n && hay[i] && ascii_lower(hay[i]) == ascii_lower(needle[i]))
            i++;
        if (i == n)
            return true;
    }
    return false;
}

/* What a row shows on the right: a disabled option's reason, else its detail. */
static const char *right_text(const struct option *o)
{
    return o->disabled && *o->reason ? o->reason : o->detail;
}

/* Index in vis of option i, or nvis when it is not shown. */
static size_t vis_pos(const struct select *s, size_t i)
{
    for (size_t p = 0; p < s->nvis; p++)
        if (s->vis[p] == i)
            return p;
    return s->nvis;
}

/* The first enabled option in vis from position p on, stepping dir (±1); nvis if none. */
static size_t find_enabled(const struct select *s, size_t p, int dir)
{
    while (p < s->nvis) {
        if (!s->opts[s->vis[p]].disabled)
            return p;
        if (dir < 0 && p == 0)
            break;
        p = dir > 0 ? p + 1 : p - 1;
    }
    return s->nvis;
}

/* Scrolls so the cursor's row is in view and no row is left empty needlessly. */
static void scroll_to_cursor(struct select *s)
{
    size_t rows = s->rows > 0 ? (size_t)s->rows : 1;
    size_t p = s->cursor == SELECT_NONE ? s->nvis : vis_pos(s, s->cursor);
    if (p < s->nvis) {
        if (p < s->top)
            s->top = p;
        else if (p >= s->top + rows)
            s->top = p - rows + 1;
    }
    if (s->nvis <= rows)
        s->top = 0;
    else if (s->top > s->nvis - rows)
        s->top = s->nvis - rows;
}

/*
 * Recomputes the options matching the filter. The cursor goes to the
 * chosen option when the filter is empty and it is shown, else to the first
 * enabled match.
 */
static void refilter(struct select *s)
{
    s->nvis = 0;
    for (size_t i = 0; i < s->n; i++)
        if (contains_fold(s->opts[i].label, s->filter) ||
            contains_fold(s->opts[i].detail, s->filter))
            s->vis[s->nvis++] = i;
    size_t p = s->nvis;
    if (s->filter_len == 0 && s->selected != SELECT_NONE)
        p = vis_pos(s, s->selected);
    if (p == s->nvis)
        p = find_enabled(s, 0, 1);
    s->cursor = p < s->nvis ? s->vis[p] : SELECT_NONE;
    s->top = 0;
    scroll_to_cursor(s);
}

/* The option rows a popup for this many options wants. */
static int wanted_rows(const struct select *s)
{
    int rows = s->n < (size_t)s->max_rows ? (int)s->n : s->max_rows;
    return rows > 0 ? rows : 1;
}

static void delete_popup(struct select *s)
{
    if (s->win)
        delwin(s->win);
    s->win = NULL;
}

/* Enter or Space on the closed view: an empty filter, the cursor on the choice. */
static unsigned open_popup(struct select *s)
{
    s->open = true;
    s->filter_len = 0;
    s->filter[0] = '\0';
    s->rows = wanted_rows(s);
    refilter(s);
    s->base.dirty = true;
    return WIDGET_ACTIVATE | WIDGET_HANDLED | WIDGET_REDRAW;
}

void select_close(struct select *s)
{
    if (!s->open)
        return;
    s->open = false;
    s->filter_len = 0;
    s->filter[0] = '\0';
    delete_popup(s);
    s->base.dirty = true;
}

/* Enter: the cursor's option becomes the choice and the popup closes. */
static unsigned pick(struct select *s)
{
    if (s->cursor == SELECT_NONE || s->opts[s->cursor].disabled)
        return WIDGET_HANDLED;
    bool changed = s->cursor != s->selected;
    s->selected = s->cursor;
    select_close(s);
    return (changed ? WIDGET_CHANGED : 0) | WIDGET_HANDLED | WIDGET_REDRAW;
}

/*
 * Moves the cursor by `by` rows of vis (negative: up), landing on an enabled
 * option: the first one at or past the target, else the nearest one between
 * the cursor and the target. Home and End pass a distance past the ends.
 */
static unsigned move_cursor(struct select *s, long by)
{
    if (s->nvis == 0)
        return WIDGET_HANDLED;
    size_t p = s->cursor == SELECT_NONE ? s->nvis : vis_pos(s, s->cursor);
    long from = p < s->nvis ? (long)p : by > 0 ? -1 : (long)s->nvis;
    long target = from + by;
    if (target < 0)
        target = 0;
    if (target >= (long)s->nvis)
        target = (long)s->nvis - 1;

    int dir = by > 0 ? 1 : -1;
    size_t q = find_enabled(s, (size_t)target, dir);
    if (q == s->nvis || (dir > 0 ? (long)q <= from : (long)q >= from))
        q = find_enabled(s, (size_t)target, -dir);
    if (q == s->nvis || (dir > 0 ? (long)q <= from : (long)q >= from))
        return WIDGET_HANDLED; /* no enabled option that way */
    s->cursor = s->vis[q];
    scroll_to_cursor(s);
    s->base.dirty = true;
    return WIDGET_HANDLED | WIDGET_REDRAW;
}

/* Adds a typed code point to the filter (cut at FILTER_MAX bytes). */
static unsigned filter_add(struct select *s, uint32_t cp)
{
    char enc[4];
    size_t n = utf8_encode(cp, enc);
    if (s->filter_len + n > FILTER_MAX)
        return WIDGET_HANDLED;
    memcpy(s->filter + s->filter_len, enc, n);
    s->filter_len += n;
    s->filter[s->filter_len] = '\0';
    refilter(s);
    s->base.dirty = true;
    return WIDGET_HANDLED | WIDGET_REDRAW;
}

/* Removes the filter's last code point, or all of it. */
static unsigned filter_remove(struct select *s, bool all)
{
    if (s->filter_len == 0)
        return WIDGET_HANDLED;
    if (all) {
        s->filter_len = 0;
    } else {
        do
            s->filter_len--;
        while (s->filter_len > 0 && ((unsigned char)s->filter[s->filter_len] & 0xC0) == 0x80);
    }
    s->filter[s->filter_len] = '\0';
    refilter(s);
    s->base.dirty = true;
    return WIDGET_HANDLED | WIDGET_REDRAW;
}

/* Code points that may go into the filter: printable, no controls. */
static bool is_typable(int code)
{
    if (code < 0x20 || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF))
        return false;
    return utf8_cpwidth((uint32_t)code) > 0;
}

/* Keys while the popup is open; see select.h. */
static unsigned key_open(struct select *s, const struct widget_key *k)
{
    long page = s->rows > 1 ? s->rows - 1 : 1;

    if (k->alt)
        return WIDGET_IGNORED;
    if (k->is_function) {
        switch (k->code) {
        case KEY_UP:
            return move_cursor(s, -1);
        case KEY_DOWN:
            return move_cursor(s, 1);
        case KEY_PPAGE:
            return move_cursor(s, -page);
        case KEY_NPAGE:
            return move_cursor(s, page);
        case KEY_HOME:
            return move_cursor(s, -(long)s->nvis - 1);
        case KEY_END:
            return move_cursor(s, (long)s->nvis + 1);
        case KEY_ENTER:
            return pick(s);
        case KEY_BACKSPACE:
            return filter_remove(s, false);
        default:
            return WIDGET_IGNORED;
        }
    }
    switch (k->code) {
    case '\r':
    case '\n':
        return pick(s);
    case ESC:
        select_close(s);
        return WIDGET_CANCEL | WIDGET_HANDLED | WIDGET_REDRAW;
    case CTRL_H:
    case ASCII_DEL:
        return filter_remove(s, false);
    case CTRL_U:
        return filter_remove(s, true);
    default:
        break;
    }
    return is_typable(k->code) ? filter_add(s, (uint32_t)k->code) : WIDGET_IGNORED;
}

/* ops->key: Enter or Space opens; while open, the popup's keys. */
static unsigned select_key(struct widget *wd, const struct widget_key *k)
{
    struct select *s = (struct select *)wd;

    if (wd->disabled)
        return WIDGET_IGNORED;
    if (s->open)
        return key_open(s, k);
    if (k->alt)
        return WIDGET_IGNORED;
    if (k->is_function ? k->code == KEY_ENTER
                       : k->code == '\r' || k->code == '\n' || k->code == ' ')
        return open_popup(s);
    return WIDGET_IGNORED;
}

/*
 * ops->draw: the chosen label, its detail (or reason) dim after two spaces,
 * the arrow in the last cell. Records where the popup goes, unless win is
 * a pad (no screen position).
 */
static void select_draw(struct widget *wd, WINDOW *win, int y, int x, int w, bool focused)
{
    struct select *s = (struct select *)wd;
    attr_t attrs;
    short pair;

    wd->dirty = false;
    if (!is_pad(win))
        select_set_anchor(s, getbegy(win) + y, getbegx(win) + x, w);
    if (w <= 0)
        return;
    wattr_get(win, &attrs, &pair, NULL);
    if (wd->disabled)
        wattr_on(win, A_DIM, NULL);
    for (int c = 0; c < w; c++)
        mvwaddch(win, y, x + c, ' ');

    int text_w = w >= 3 ? w - 2 : w;
    if (s->selected != SELECT_NONE) {
        const struct option *o = &s->opts[s->selected];
        int used = widget_put_text(win, y, x, o->label, text_w);
        const char *right = right_text(o);
        if (*right && used + GAP < text_w) {
            wattr_on(win, A_DIM, NULL);
            widget_put_text(win, y, x + used + GAP, right, text_w - used - GAP);
            wattr_off(win, A_DIM, NULL);
        }
    }
    if (w >= 3) {
        if (wd->disabled)
            wattr_on(win, A_DIM, NULL);
        widget_put_text(win, y, x + w - 1, s->utf8 ? "\xe2\x96\xbe" : "v", 1);
    }
    wattr_set(win, attrs, pair, NULL);
    if (focused)
        wmove(win, y, x);
}

/* The popup's width: the closed view's, or its widest row, within the screen. */
static int popup_width(const struct select *s, int cols)
{
    int text = MIN_TEXT;
    int prompt = widget_text_cells(FILTER_PROMPT, strlen(FILTER_PROMPT)) +
                 widget_text_cells(FILTER_HINT, strlen(FILTER_HINT));
    if (prompt > text)
        text = prompt;
    for (size_t i = 0; i < s->n; i++) {
        const struct option *o = &s->opts[i];
        const char *right = right_text(o);
        int rw = widget_text_cells(right, strlen(right));
        int row = widget_text_cells(o->label, strlen(o->label)) + (rw ? GAP + rw : 0);
        if (row > text)
            text = row;
    }
    int w = text + 4; /* borders and a blank on each side */
    if (w < s->anchor_w)
        w = s->anchor_w;
    return w > cols ? cols : w;
}

/*
 * Where the popup goes for a screen of lines × cols: below the closed view
 * when it fits, else above, else on the larger side with fewer rows.
 */
static void place_popup(struct select *s, int lines, int cols, int *py, int *px, int *ph, int *pw)
{
    int rows = wanted_rows(s);
    int h = rows + CHROME_ROWS;
    int below = lines - (s->anchor_y + 1), above = s->anchor_y;
    int y;

    if (h <= below) {
        y = s->anchor_y + 1;
    } else if (h <= above) {
        y = s->anchor_y - h;
    } else {
        int room = below >= above ? below : above;
        h = room >= CHROME_ROWS + 1 ? room : CHROME_ROWS + 1;
        if (h > lines)
            h = lines;
        y = below >= above ? s->anchor_y + 1 : s->anchor_y - h;
        if (y + h > lines)
            y = lines - h;
        if (y < 0)
            y = 0;
    }
    int w = popup_width(s, cols);
    int x = s->anchor_x;
    if (x + w > cols)
        x = cols - w;
    *py = y;
    *px = x < 0 ? 0 : x;
    *ph = h;
    *pw = w;
}

/* Draws row r (0-based) of the list: option vis[top + r], or a note when none. */
static void draw_row(struct select *s, int r, int w)
{
    WINDOW *win = s->win;
    int y = 2 + r, tw = w - 4;
    size_t p = s->top + (size_t)r;

    if (p >= s->nvis) {
        if (r == 0) {
            widget_set_role(win, s->pal->dim);
            widget_put_text(win, y, 2, s->n == 0 ? "nothing to choose" : "no match", tw);
        }
        return;
    }
    const struct option *o = &s->opts[s->vis[p]];
    bool cur = s->vis[p] == s->cursor;
    attr_t base = cur ? s->pal->selected : o->disabled ? s->pal->dim : s->pal->normal;

    widget_set_role(win, base);
    for (int c = 1; c < w - 1; c++)
        mvwaddch(win, y, c, ' ');
    int used = widget_put_text(win, y, 2, o->label, tw);
    const char *right = right_text(o);
    int room = tw - used - GAP;
    if (*right && room > 0) {
        int rw = widget_fit_cells(right, room);
        widget_set_role(win, cur ? s->pal->selected | A_DIM : s->pal->dim);
        widget_put_text(win, y, 2 + tw - rw, right, rw);
    }
}

void select_draw_popup(struct select *s)
{
    if (!s->open)
        return;
    int y, x, h, w;
    place_popup(s, LINES, COLS, &y, &x, &h, &w);
    if (w < 5 || h < CHROME_ROWS + 1)
        return; /* no room for the popup */
    if (s->win && (getbegy(s->win) != y || getbegx(s->win) != x || getmaxy(s->win) != h ||
                   getmaxx(s->win) != w))
        delete_popup(s);
    if (!s->win)
        s->win = newwin(h, w, y, x);
    if (!s->win)
        return;
    s->rows = h - CHROME_ROWS;
    scroll_to_cursor(s);
    s->base.dirty = false;

    WINDOW *win = s->win;
    widget_set_role(win, s->pal->normal);
    for (int r = 0; r < h; r++)
        for (int c = 0; c < w; c++)
            mvwaddch(win, r, c, ' ');
    chtype b = s->pal->border;
    wborder(win, ACS_VLINE | b, ACS_VLINE | b, ACS_HLINE | b, ACS_HLINE | b, ACS_ULCORNER | b,
            ACS_URCORNER | b, ACS_LLCORNER | b, ACS_LRCORNER | b);
    if (s->top > 0)
        mvwaddch(win, 0, w - 3, ACS_UARROW | b);
    if (s->top + (size_t)s->rows < s->nvis)
        mvwaddch(win, h - 1, w - 3, ACS_DARROW | b);

    int tw = w - 4;
    widget_set_role(win, s->pal->label);
    int used = widget_put_text(win, 1, 2, FILTER_PROMPT, tw);
    if (s->filter_len == 0) {
        widget_set_role(win, s->pal->dim);
        widget_put_text(win, 1, 2 + used, FILTER_HINT, tw - used);
    } else {
        widget_set_role(win, s->pal->normal);
        used += widget_put_text(win, 1, 2 + used, s->filter, tw - used);
    }
    for (int r = 0; r < s->rows; r++)
        draw_row(s, r, w);
    widget_set_role(win, s->pal->normal);
    wmove(
        win, 1,
        2 + (s->filter_len == 0 ? widget_text_cells(FILTER_PROMPT, strlen(FILTER_PROMPT)) : used));
    touchwin(win);
    wnoutrefresh(win);
}

static int select_height(const struct widget *wd, int w)
{
    return 1;
}

/* Frees the options and the filter's index array. */
static void free_options(struct select *s)
{
    for (size_t i = 0; i < s->n; i++) {
        free(s->opts[i].label);
        free(s->opts[i].detail);
        free(s->opts[i].reason);
    }
    free(s->opts);
    free(s->vis);
    s->opts = NULL;
    s->vis = NULL;
    s->n = s->nvis = 0;
}

static void select_destroy(struct widget *wd)
{
    struct select *s = (struct select *)wd;
    delete_popup(s);
    free_options(s);
    free(s);
}

static const struct widget_ops select_ops = {
    .kind = "select",
    .draw = select_draw,
    .key = select_key,
    .height = select_height,
    .destroy = select_destroy,
};

/* Replaces the options with copies; indices into the old ones become invalid. */
static void copy_options(struct select *s, const struct select_option *options, size_t n)
{
    free_options(s);
    if (n == 0)
        return;
    s->opts = xreallocarray(NULL, n, sizeof *s->opts);
    s->vis = xreallocarray(NULL, n, sizeof *s->vis);
    for (size_t i = 0; i < n; i++) {
        const struct select_option *o = &options[i];
        s->opts[i].label = xstrdup(o->label ? o->label : "");
        s->opts[i].detail = xstrdup(o->detail ? o->detail : "");
        s->opts[i].reason = xstrdup(o->reason ? o->reason : "");
        s->opts[i].disabled = o->disabled;
    }
    s->n = n;
}

/* Index of the option labelled label, or SELECT_NONE. */
static size_t find_label(const struct select *s, const char *label)
{
    for (size_t i = 0; label && i < s->n; i++)
        if (strcmp(s->opts[i].label, label) == 0)
            return i;
    return SELECT_NONE;
}

struct select *select_new(const struct select_option *options, size_t n, size_t selected)
{
    struct select *s = xcalloc(1, sizeof *s);
    s->base.ops = &select_ops;
    s->base.dirty = true;
    s->pal = widget_palette_mono();
    s->max_rows = SELECT_DEFAULT_ROWS;
    s->utf8 = true;
    s->cursor = SELECT_NONE;
    copy_options(s, options, n);
    s->selected = selected < n ? selected : SELECT_NONE;
    return s;
}

void select_free(struct select *s)
{
    if (s)
        select_destroy(&s->base);
}

struct widget *select_widget(struct select *s)
{
    return &s->base;
}

struct select *select_from_widget(struct widget *wd)
{
    return wd && wd->ops == &select_ops ? (struct select *)wd : NULL;
}

size_t select_selected(const struct select *s)
{
    return s->selected;
}

const char *select_selected_label(const struct select *s)
{
    return s->selected == SELECT_NONE ? NULL : s->opts[s->selected].label;
}

const char *select_detail(const struct select *s, size_t i)
{
    return i < s->n ? s->opts[i].detail : NULL;
}

void select_set_selected(struct select *s, size_t i)
{
    s->selected = i < s->n ? i : SELECT_NONE;
    s->base.dirty = true;
}

size_t select_count(const struct select *s)
{
    return s->n;
}

void select_set_options(struct select *s, const struct select_option *options, size_t n)
{
    char *chosen = s->selected == SELECT_NONE ? NULL : xstrdup(s->opts[s->selected].label);
    char *under = s->cursor == SELECT_NONE ? NULL : xstrdup(s->opts[s->cursor].label);

    copy_options(s, options, n);
    s->selected = find_label(s, chosen);
    if (s->open) {
        refilter(s);
        size_t c = find_label(s, under);
        if (c != SELECT_NONE && vis_pos(s, c) < s->nvis) {
            s->cursor = c;
            scroll_to_cursor(s);
        }
    } else {
        s->cursor = SELECT_NONE;
    }
    free(chosen);
    free(under);
    s->base.dirty = true;
}

bool select_is_open(const struct select *s)
{
    return s->open;
}

WINDOW *select_popup_window(const struct select *s)
{
    return s->open ? s->win : NULL;
}

const char *select_filter(const struct select *s)
{
    return s->filter;
}

size_t select_cursor(const struct select *s)
{
    return s->open ? s->cursor : SELECT_NONE;
}

void select_set_palette(struct select *s, const struct widget_palette *pal)
{
    s->pal = pal ? pal : widget_palette_mono();
    s->base.dirty = true;
}

void select_set_utf8(struct select *s, bool utf8)
{
    s->utf8 = utf8;
    s->base.dirty = true;
}

void select_set_anchor(struct select *s, int y, int x, int w)
{
    s->anchor_y = y;
    s->anchor_x = x;
    s->anchor_w = w;
    if (s->open)
        s->base.dirty = true;
}

void select_set_max_rows(struct select *s, int rows)
{
    s->max_rows = rows > 0 ? rows : 1;
    s->base.dirty = true;
}
