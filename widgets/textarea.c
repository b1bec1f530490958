/*
 * textarea: the multi-line text area widget (see textarea.h).
 *
 * The area owns its text as an array of lines, each a cpbuf of code points
 * without the line break; a cursor (line, index at the start of a unit); the
 * goal column in cells for vertical moves; the last kill (for Ctrl-Y, line
 * breaks kept as '\n'); the value re-encoded as UTF-8 after each change; the
 * first line shown and the horizontal scroll of the cursor's line at the last
 * draw. The owner (a form) sends it keys and draws it when dirty.
 *
 * Units and cells follow textfield: a code point of width 0 joins the unit
 * before it, CJK takes two cells; a tab takes the cells up to the next
 * multiple of TAB_CELLS, so a cell count always runs from the line start.
 * max_chars counts code points, each line break as one.
 */
#include "widgets/textarea.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/strbuf.h"
#include "util/utf8.h"
#include "util/xalloc.h"
#include "widgets/cpbuf.h"

struct textarea {
    struct widget base; /* first: a text area is a widget */
    struct cpbuf *line;
    size_t nlines; /* at least 1 */
    size_t cap_lines;
    size_t cy, cx; /* cursor: line, index at the start of a unit */
    int goal;      /* cell column Up/Down aim for; -1: the cursor's own */
    size_t max_chars;
    int visible; /* lines shown */
    size_t top;  /* first line shown */
    int hscroll; /* cells of the cursor's line hidden on the left */
    size_t hscroll_line;
    int last_w; /* text width of the last draw, 0 before the first */
    bool numbers;
    struct cpbuf kill;
    struct cpbuf placeholder;
    struct strbuf value;
};

enum {
    CTRL_A = 1,
    CTRL_B = 2,
    CTRL_D = 4,
    CTRL_E = 5,
    CTRL_F = 6,
    CTRL_H = 8,
    CTRL_K = 11,
    CTRL_N = 14,
    CTRL_P = 16,
    CTRL_U = 21,
    CTRL_W = 23,
    CTRL_Y = 25,
    ASCII_DEL = 127,
    TAB_CELLS = 8,
    MIN_MARKER_WIDTH = 4, /* room for '<', a wide character and '>' */
};

#define EDITED (WIDGET_CHANGED | WIDGET_HANDLED | WIDGET_REDRAW)
#define MOVED (WIDGET_HANDLED | WIDGET_REDRAW)

static const struct widget_ops textarea_ops;

/* Cells of the unit starting with cp when it starts at cell col. */
static int unit_cells(uint32_t cp, int col)
{
    if (cp == '\t')
        return TAB_CELLS - col % TAB_CELLS;
    return utf8_cpwidth(cp) == 2 ? 2 : 1;
}

/* Cells taken by the units before index end. */
static int cells_to(const struct cpbuf *b, size_t end)
{
    int cells = 0;
    for (size_t i = 0; i < end && i < b->len; i = cpbuf_next_unit(b, i))
        cells += unit_cells(b->cp[i], cells);
    return cells;
}

/* The unit holding cell col (a wide character's second cell: its start), or len. */
static size_t index_at_cells(const struct cpbuf *b, int col)
{
    int cells = 0;
    for (size_t i = 0; i < b->len; i = cpbuf_next_unit(b, i)) {
        cells += unit_cells(b->cp[i], cells);
        if (cells > col)
            return i;
    }
    return b->len;
}

/* Opens an empty line at index at. */
static void line_insert(struct textarea *ta, size_t at)
{
    if (ta->nlines == ta->cap_lines) {
        ta->cap_lines = ta->cap_lines ? ta->cap_lines * 2 : 8;
        ta->line = xreallocarray(ta->line, ta->cap_lines, sizeof *ta->line);
    }
    memmove(ta->line + at + 1, ta->line + at, (ta->nlines - at) * sizeof *ta->line);
    memset(&ta->line[at], 0, sizeof ta->line[at]);
    ta->nlines++;
}

/* Frees the lines [from, to) and closes the gap. */
static void line_remove(struct textarea *ta, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++)
        cpbuf_free(&ta->line[i]);
    memmove(ta->line + from, ta->line + to, (ta->nlines - to) * sizeof *ta->line);
    ta->nlines -= to - from;
}

/* Code points in the text, each line break counted once. */
static size_t char_count(const struct textarea *ta)
{
    size_t n = ta->nlines - 1;
    for (size_t i = 0; i < ta->nlines; i++)
        n += ta->line[i].len;
    return n;
}

/* Re-encodes the value and marks the area for drawing after an edit. */
static unsigned changed(struct textarea *ta)
{
    struct cpbuf *cur = &ta->line[ta->cy];

    strbuf_reset(&ta->value);
    for (size_t l = 0; l < ta->nlines; l++) {
        if (l > 0)
            strbuf_addc(&ta->value, '\n');
        for (size_t i = 0; i < ta->line[l].len; i++) {
            char enc[4];
            strbuf_add(&ta->value, enc, utf8_encode(ta->line[l].cp[i], enc));
        }
    }
    /* A mark that lost its base joins the unit before it. */
    while (ta->cx < cur->len && ta->cx > 0 && cpbuf_is_mark(cur->cp[ta->cx]))
        ta->cx++;
    ta->goal = -1;
    ta->base.dirty = true;
    return EDITED;
}

/* Moves the cursor; a vertical move keeps the goal column, others forget it. */
static unsigned move_to(struct textarea *ta, size_t line, size_t idx, bool vertical)
{
    if (!vertical)
        ta->goal = -1;
    if (line == ta->cy && idx == ta->cx)
        return WIDGET_HANDLED;
    ta->cy = line;
    ta->cx = idx;
    ta->base.dirty = true;
    return MOVED;
}

/* Moves the cursor to line `line`, to the cell column of the goal. */
static unsigned move_to_line(struct textarea *ta, size_t line)
{
    if (ta->goal < 0)
        ta->goal = cells_to(&ta->line[ta->cy], ta->cx);
    return move_to(ta, line, index_at_cells(&ta->line[line], ta->goal), true);
}

/*
 * Inserts src at the cursor ('\n' breaks the line), cut to whole units
 * that fit under max_chars.
 */
static unsigned insert_text(struct textarea *ta, const uint32_t *src, size_t n)
{
    if (ta->max_chars) {
        size_t have = char_count(ta);
        size_t room = have < ta->max_chars ? ta->max_chars - have : 0;
        if (n > room) {
            n = room;
            while (n > 0 && cpbuf_is_mark(src[n]))
                n--;
        }
    }
    if (n == 0)
        return WIDGET_HANDLED;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && src[j] != '\n')
            j++;
        cpbuf_insert(&ta->line[ta->cy], ta->cx, src + i, j - i);
        ta->cx += j - i;
        if (j < n) {
            /* The line break: the rest of the line goes to a new line below. */
            line_insert(ta, ta->cy + 1);
            struct cpbuf *cur = &ta->line[ta->cy];
            cpbuf_insert(&ta->line[ta->cy + 1], 0, cur->cp + ta->cx, cur->len - ta->cx);
            cur->len = ta->cx;
            ta->cy++;
            ta->cx = 0;
            j++;
        }
        i = j;
    }
    return changed(ta);
}

/*
 * Removes the text from (l1, c1) to (l2, c2), line breaks included, and keeps
 * it for Ctrl-Y when kill is set. The cursor goes to (l1, c1).
 */
static unsigned remove_span(struct textarea *ta, size_t l1, size_t c1, size_t l2, size_t c2,
                            bool kill)
{
    if (l1 == l2 && c1 >= c2)
        return WIDGET_HANDLED;
    if (kill) {
        ta->kill.len = 0;
        for (size_t l = l1; l <= l2; l++) {
            const struct cpbuf *b = &ta->line[l];
            size_t from = l == l1 ? c1 : 0, to = l == l2 ? c2 : b->len;
            if (l > l1) {
                uint32_t nl = '\n';
                cpbuf_insert(&ta->kill, ta->kill.len, &nl, 1);
            }
            cpbuf_insert(&ta->kill, ta->kill.len, b->cp + from, to - from);
        }
    }
    if (l1 == l2) {
        cpbuf_erase(&ta->line[l1], c1, c2);
    } else {
        struct cpbuf *first = &ta->line[l1], *last = &ta->line[l2];
        first->len = c1;
        cpbuf_insert(first, c1, last->cp + c2, last->len - c2);
        line_remove(ta, l1 + 1, l2 + 1);
    }
    ta->cy = l1;
    ta->cx = c1;
    return changed(ta);
}

/* Alt-<key>: word moves and the ends of the text; other Alt keys belong to the owner. */
static unsigned key_alt(struct textarea *ta, int code)
{
    const struct cpbuf *b = &ta->line[ta->cy];
    switch (code) {
    case 'b':
    case 'B':
        return move_to(ta, ta->cy, cpbuf_word_start(b, ta->cx, cpbuf_is_word), false);
    case 'f':
    case 'F':
        return move_to(ta, ta->cy, cpbuf_word_end(b, ta->cx), false);
    case '<':
        return move_to(ta, 0, 0, false);
    case '>':
        return move_to(ta, ta->nlines - 1, ta->line[ta->nlines - 1].len, false);
    default:
        return WIDGET_IGNORED;
    }
}

/* Up (dir < 0) or down by n lines; IGNORED at the first / last line. */
static unsigned key_vertical(struct textarea *ta, int dir, size_t n)
{
    if (dir < 0) {
        if (ta->cy == 0)
            return WIDGET_IGNORED;
        return move_to_line(ta, ta->cy > n ? ta->cy - n : 0);
    }
    if (ta->cy + 1 >= ta->nlines)
        return WIDGET_IGNORED;
    size_t last = ta->nlines - 1;
    return move_to_line(ta, last - ta->cy > n ? ta->cy + n : last);
}

/* Left one unit, onto the end of the line above at a line start. */
static unsigned key_left(struct textarea *ta)
{
    if (ta->cx > 0)
        return move_to(ta, ta->cy, cpbuf_prev_unit(&ta->line[ta->cy], ta->cx), false);
    if (ta->cy > 0)
        return move_to(ta, ta->cy - 1, ta->line[ta->cy - 1].len, false);
    return move_to(ta, 0, 0, false);
}

/* Right one unit, onto the start of the line below at a line end. */
static unsigned key_right(struct textarea *ta)
{
    const struct cpbuf *b = &ta->line[ta->cy];
    if (ta->cx < b->len)
        return move_to(ta, ta->cy, cpbuf_next_unit(b, ta->cx), false);
    if (ta->cy + 1 < ta->nlines)
        return move_to(ta, ta->cy + 1, 0, false);
    return move_to(ta, ta->cy, ta->cx, false);
}

/* Backspace: the unit before the cursor, or the line break above. */
static unsigned key_backspace(struct textarea *ta)
{
    if (ta->cx > 0)
        return remove_span(ta, ta->cy, cpbuf_prev_unit(&ta->line[ta->cy], ta->cx), ta->cy, ta->cx,
                           false);
    if (ta->cy > 0)
        return remove_span(ta, ta->cy - 1, ta->line[ta->cy - 1].len, ta->cy, 0, false);
    return WIDGET_HANDLED;
}

/* Delete (or Ctrl-K when kill is set): the unit / rest of line at the cursor, or the break. */
static unsigned key_delete(struct textarea *ta, bool kill)
{
    const struct cpbuf *b = &ta->line[ta->cy];
    if (ta->cx < b->len)
        return remove_span(ta, ta->cy, ta->cx, ta->cy, kill ? b->len : cpbuf_next_unit(b, ta->cx),
                           kill);
    if (ta->cy + 1 < ta->nlines)
        return remove_span(ta, ta->cy, ta->cx, ta->cy + 1, 0, kill);
    return WIDGET_HANDLED;
}

/* Curses function keys: arrows, pages, Home/End, Backspace, Delete, keypad Enter. */
static unsigned key_function(struct textarea *ta, int code)
{
    size_t page = ta->visible > 1 ? (size_t)ta->visible : 1;
    uint32_t nl = '\n';

    switch (code) {
    case KEY_LEFT:
        return key_left(ta);
    case KEY_RIGHT:
        return key_right(ta);
    case KEY_UP:
        return key_vertical(ta, -1, 1);
    case KEY_DOWN:
        return key_vertical(ta, 1, 1);
    case KEY_PPAGE:
        return key_vertical(ta, -1, page);
    case KEY_NPAGE:
        return key_vertical(ta, 1, page);
    case KEY_HOME:
        return move_to(ta, ta->cy, 0, false);
    case KEY_END:
        return move_to(ta, ta->cy, ta->line[ta->cy].len, false);
    case KEY_BACKSPACE:
        return key_backspace(ta);
    case KEY_DC:
        return key_delete(ta, false);
    case KEY_ENTER:
        return insert_text(ta, &nl, 1);
    default:
        return WIDGET_IGNORED;
    }
}

/* ops->key: editing and motion keys, then printable code points. */
static unsigned textarea_key(struct widget *wd, const struct widget_key *k)
{
    struct textarea *ta = (struct textarea *)wd;
    const struct cpbuf *b = &ta->line[ta->cy];
    uint32_t nl = '\n';

    if (wd->disabled)
        return WIDGET_IGNORED;
    if (k->alt)
        return k->is_function ? WIDGET_IGNORED : key_alt(ta, k->code);
    /* A pasted tab is the text's own (a tab-indented heredoc, <<-EOF); a typed Tab moves on. */
    if (k->is_function && k->code == WIDGET_KEY_TAB_TEXT) {
        uint32_t tab = '\t';
        return insert_text(ta, &tab, 1);
    }
    if (k->is_function)
        return key_function(ta, k->code);

    switch (k->code) {
    case CTRL_A:
        return move_to(ta, ta->cy, 0, false);
    case CTRL_E:
        return move_to(ta, ta->cy, b->len, false);
    case CTRL_B:
        return key_left(ta);
    case CTRL_F:
        return key_right(ta);
    case CTRL_P:
        return key_vertical(ta, -1, 1);
    case CTRL_N:
        return key_vertical(ta, 1, 1);
    case CTRL_H:
    case ASCII_DEL:
        return key_backspace(ta);
    case CTRL_D:
        return key_delete(ta, false);
    case CTRL_K:
        return key_delete(ta, true);
    case CTRL_U:
        return remove_span(ta, ta->cy, 0, ta->cy, ta->cx, true);
    case CTRL_W:
        return remove_span(ta, ta->cy, cpbuf_word_start(b, ta->cx, cpbuf_not_space), ta->cy, ta->cx,
                           true);
    case CTRL_Y:
        return insert_text(ta, ta->kill.cp, ta->kill.len);
    case '\r':
    case '\n':
        return insert_text(ta, &nl, 1);
    default:
        break;
    }
    if (!cpbuf_is_insertable(k->code))
        return WIDGET_IGNORED;
    uint32_t cp = (uint32_t)k->code;
    return insert_text(ta, &cp, 1);
}

/*
 * The scroll that keeps the cursor's unit of line b in view in w cells,
 * moving as little as possible from the previous scroll (textfield's rule:
 * the markers' cells are left out of the room for the cursor).
 */
static int scroll_for(const struct cpbuf *b, size_t cursor, int w, int scroll)
{
    bool markers = w >= MIN_MARKER_WIDTH;
    int cx = cells_to(b, cursor);
    int cw = cursor < b->len ? unit_cells(b->cp[cursor], cx) : 1;
    int total = cells_to(b, b->len);

    if (cw > w)
        cw = w;
    if (scroll > 0 && total + 1 < scroll + w)
        scroll = total + 1 > w ? total + 1 - w : 0;
    if (cx < scroll + (markers && scroll > 0)) {
        scroll = cx;
        if (markers && scroll > 0)
            scroll--;
    }
    int right = markers && total > scroll + w;
    if (cx + cw > scroll + w - right) {
        scroll = cx + cw - w;
        if (markers && total > scroll + w)
            scroll++;
    }
    return scroll;
}

/*
 * Draws the units of b from index from to the first '\n' (or the end), from
 * text cell scroll on, in w cells at (y, x): '<' / '>' in the edge cells
 * when text is cut off there (w >= MIN_MARKER_WIDTH), blanks where a wide
 * character or a tab would cross an edge.
 */
static void draw_line(WINDOW *win, int y, int x, int w, const struct cpbuf *b, size_t from,
                      int scroll)
{
    bool markers = w >= MIN_MARKER_WIDTH;
    size_t end = from;
    int total = 0;

    while (end < b->len && b->cp[end] != '\n') {
        total += unit_cells(b->cp[end], total);
        end = cpbuf_next_unit(b, end);
    }
    bool left = markers && scroll > 0, right = markers && total > scroll + w;
    int lo = left ? 1 : 0, hi = right ? w - 1 : w;
    int p = 0;

    for (int c = 0; c < w; c++)
        mvwaddch(win, y, x + c, ' ');
    for (size_t i = from; i < end;) {
        size_t next = cpbuf_next_unit(b, i);
        int uw = unit_cells(b->cp[i], p);
        int start = p - scroll;
        if (start >= hi)
            break;
        if (start >= lo && start + uw <= hi && b->cp[i] != '\t')
            cpbuf_draw_unit(win, y, x + start, b, i, next, 0);
        p += uw;
        i = next;
    }
    if (left)
        mvwaddch(win, y, x, '<');
    if (right)
        mvwaddch(win, y, x + w - 1, '>');
}

/* Decimal digits of n. */
static int digits(size_t n)
{
    int d = 1;
    while (n >= 10) {
        n /= 10;
        d++;
    }
    return d;
}

/* Keeps the cursor's line inside the visible lines, with no blank lines below the text. */
static void scroll_vertical(struct textarea *ta)
{
    size_t vis = (size_t)ta->visible;
    if (ta->cy < ta->top)
        ta->top = ta->cy;
    if (ta->cy >= ta->top + vis)
        ta->top = ta->cy - vis + 1;
    if (ta->top + vis > ta->nlines)
        ta->top = ta->nlines > vis ? ta->nlines - vis : 0;
}

/* The gutter of line numbers: cells, or 0 when off or when it leaves no room for text. */
static int gutter_width(const struct textarea *ta, int w)
{
    if (!ta->numbers)
        return 0;
    int d = digits(ta->nlines);
    int g = (d < 2 ? 2 : d) + 1;
    return w - g >= 1 ? g : 0;
}

/* The placeholder, dim, line by line from the top. */
static void draw_placeholder(struct textarea *ta, WINDOW *win, int y, int x, int w)
{
    const struct cpbuf *b = &ta->placeholder;
    size_t i = 0;
    bool more = true;

    for (int row = 0; row < ta->visible; row++) {
        if (!more) {
            for (int c = 0; c < w; c++)
                mvwaddch(win, y + row, x + c, ' ');
            continue;
        }
        draw_line(win, y + row, x, w, b, i, 0);
        while (i < b->len && b->cp[i] != '\n')
            i++;
        more = i < b->len;
        i++;
    }
}

/* ops->draw: the visible lines with their gutter, then the cursor when focused. */
static void textarea_draw(struct widget *wd, WINDOW *win, int y, int x, int w, bool focused)
{
    struct textarea *ta = (struct textarea *)wd;
    const struct cpbuf *cur = &ta->line[ta->cy];
    attr_t attrs;
    short pair;

    wd->dirty = false;
    if (w <= 0)
        return;
    wattr_get(win, &attrs, &pair, NULL);
    if (wd->disabled)
        wattr_on(win, A_DIM, NULL);

    int g = gutter_width(ta, w), tw = w - g;
    scroll_vertical(ta);
    if (ta->hscroll_line != ta->cy) {
        ta->hscroll_line = ta->cy;
        ta->hscroll = 0;
    }
    ta->hscroll = scroll_for(cur, ta->cx, tw, ta->hscroll);
    ta->last_w = tw;

    for (int row = 0; row < ta->visible; row++) {
        size_t li = ta->top + (size_t)row;
        if (g > 0) {
            attr_t a;
            short p;
            wattr_get(win, &a, &p, NULL);
            wattr_on(win, A_DIM, NULL);
            for (int c = 0; c < g; c++)
                mvwaddch(win, y + row, x + c, ' ');
            if (li < ta->nlines) {
                size_t n = li + 1;
                for (int c = g - 2; c >= 0 && n > 0; c--, n /= 10)
                    mvwaddch(win, y + row, x + c, (chtype)('0' + n % 10));
            }
            wattr_set(win, a, p, NULL);
        }
        if (li < ta->nlines)
            draw_line(win, y + row, x + g, tw, &ta->line[li], 0, li == ta->cy ? ta->hscroll : 0);
        else
            for (int c = 0; c < tw; c++)
                mvwaddch(win, y + row, x + g + c, ' ');
    }
    if (ta->nlines == 1 && ta->line[0].len == 0 && ta->placeholder.len > 0) {
        wattr_on(win, A_DIM, NULL);
        draw_placeholder(ta, win, y, x + g, tw);
    }
    wattr_set(win, attrs, pair, NULL);
    if (focused)
        wmove(win, y + (int)(ta->cy - ta->top), x + g + cells_to(cur, ta->cx) - ta->hscroll);
}

/* ops->height: the fixed number of visible lines, whatever the width. */
static int textarea_height(const struct widget *wd, int w)
{
    return ((const struct textarea *)wd)->visible;
}

/* ops->destroy: frees the area and everything it owns. */
static void textarea_destroy(struct widget *wd)
{
    struct textarea *ta = (struct textarea *)wd;
    for (size_t i = 0; i < ta->nlines; i++)
        cpbuf_free(&ta->line[i]);
    free(ta->line);
    cpbuf_free(&ta->kill);
    cpbuf_free(&ta->placeholder);
    strbuf_free(&ta->value);
    free(ta);
}

static const struct widget_ops textarea_ops = {
    .kind = "textarea",
    .draw = textarea_draw,
    .key = textarea_key,
    .height = textarea_height,
    .destroy = textarea_destroy,
};

struct textarea *textarea_new(const char *initial, int lines, size_t max_chars)
{
    struct textarea *ta = xcalloc(1, sizeof *ta);
    ta->base.ops = &textarea_ops;
    ta->visible = lines > 0 ? lines : 1;
    ta->max_chars = max_chars;
    line_insert(ta, 0);
    textarea_set(ta, initial);
    return ta;
}

void textarea_free(struct textarea *ta)
{
    if (ta)
        textarea_destroy(&ta->base);
}

struct widget *textarea_widget(struct textarea *ta)
{
    return &ta->base;
}

struct textarea *textarea_from_widget(struct widget *wd)
{
    return wd && wd->ops == &textarea_ops ? (struct textarea *)wd : NULL;
}

const char *textarea_value(const struct textarea *ta)
{
    return strbuf_str(&ta->value);
}

/* Replaces the text: "\r\n" and '\n' break lines; cut at max_chars code points. */
void textarea_set(struct textarea *ta, const char *utf8)
{
    struct cpbuf all = {0};
    cpbuf_set_utf8(&all, utf8, 0);
    for (size_t i = 0; i + 1 < all.len; i++)
        if (all.cp[i] == '\r' && all.cp[i + 1] == '\n')
            cpbuf_erase(&all, i, i + 1);

    line_remove(ta, 1, ta->nlines);
    ta->line[0].len = 0;
    ta->cy = ta->cx = 0;
    ta->top = 0;
    ta->hscroll = 0;
    insert_text(ta, all.cp, all.len);
    cpbuf_free(&all);
    ta->cy = ta->cx = 0;
    changed(ta);
}

void textarea_set_placeholder(struct textarea *ta, const char *utf8)
{
    cpbuf_set_utf8(&ta->placeholder, utf8, 0);
    ta->base.dirty = true;
}

void textarea_set_line_numbers(struct textarea *ta, bool on)
{
    ta->numbers = on;
    ta->base.dirty = true;
}

size_t textarea_line_count(const struct textarea *ta)
{
    return ta->nlines;
}

void textarea_cursor(const struct textarea *ta, size_t *line, int *col)
{
    if (line)
        *line = ta->cy;
    if (col)
        *col = cells_to(&ta->line[ta->cy], ta->cx);
}

size_t textarea_top(const struct textarea *ta)
{
    return ta->top;
}
