/*
 * textfield: the single-line text field widget (see textfield.h).
 *
 * The field owns its text as an array of code points (a cpbuf), a cursor index into
 * it, the last kill (for Ctrl-Y), the value re-encoded as UTF-8 after each
 * change, an optional placeholder and mask, and the horizontal scroll of the
 * last draw. The owner (a form) sends it keys and draws it when dirty.
 *
 * Units: a code point of width 0 (a combining mark, a zero-width joiner) is
 * drawn in the cell of the character before it, so the cursor only ever
 * stands at the start of a unit — a base character and the marks after it —
 * and every move and deletion takes whole units. max_chars counts code
 * points. Cells follow utf8_cpwidth: CJK two cells, a control character
 * (only reachable through textfield_set) one cell drawn as U+FFFD, a lone
 * mark one cell drawn on U+25CC.
 *
 * Scrolling: `scroll` is the number of text cells hidden left of the field.
 * When the field is at least 4 cells wide, text cut off on the left shows
 * '<' in the first cell and text cut off on the right '>' in the last cell;
 * the cursor never sits on a marker. A wide character that would cross the
 * edge of the visible text is not drawn; its visible cell stays blank.
 */
#include "widgets/textfield.h"

#include <stdlib.h>
#include <string.h>

#include "util/strbuf.h"
#include "util/utf8.h"
#include "util/xalloc.h"
#include "widgets/cpbuf.h"

struct textfield {
    struct widget base; /* first: a textfield is a widget */
    struct cpbuf text;
    size_t cursor; /* index into text.cp, always at the start of a unit */
    size_t max_chars;
    struct cpbuf kill;   /* the last text Ctrl-K/U/W removed */
    struct strbuf value; /* text as UTF-8 */
    struct cpbuf placeholder;
    uint32_t mask; /* 0: show the text */
    int scroll;    /* text cells hidden left of the field at the last draw */
    int last_w;    /* width of the last draw, 0 before the first */
};

enum {
    CTRL_A = 1,
    CTRL_B = 2,
    CTRL_D = 4,
    CTRL_E = 5,
    CTRL_F = 6,
    CTRL_H = 8,
    CTRL_K = 11,
    CTRL_U = 21,
    CTRL_W = 23,
    CTRL_Y = 25,
    ASCII_DEL = 127,
    MIN_MARKER_WIDTH = 4, /* room for '<', a wide character and '>' */
};

static const struct widget_ops textfield_ops;

/* Cells of the unit starting with cp (every unit takes at least one). */
static int unit_width(uint32_t cp, uint32_t mask)
{
    int w = utf8_cpwidth(mask ? mask : cp);
    return w == 2 ? 2 : 1;
}

/* Cells taken by the units before index end. */
static int cells_to(const struct cpbuf *b, size_t end, uint32_t mask)
{
    int cells = 0;
    for (size_t i = 0; i < end && i < b->len; i = cpbuf_next_unit(b, i))
        cells += unit_width(b->cp[i], mask);
    return cells;
}

/* cpbuf_word_start in the text, but a masked secret is one word. */
static size_t word_start(const struct textfield *tf, size_t pos, bool (*in_word)(uint32_t))
{
    if (tf->mask)
        return 0; /* a secret is one word: do not reveal its shape */
    return cpbuf_word_start(&tf->text, pos, in_word);
}

/* cpbuf_word_end in the text, but a masked secret is one word. */
static size_t word_end(const struct textfield *tf, size_t pos)
{
    if (tf->mask)
        return tf->text.len;
    return cpbuf_word_end(&tf->text, pos);
}

/* Re-encodes the value and marks the field for drawing after an edit. */
static unsigned changed(struct textfield *tf)
{
    strbuf_reset(&tf->value);
    for (size_t i = 0; i < tf->text.len; i++) {
        char enc[4];
        strbuf_add(&tf->value, enc, utf8_encode(tf->text.cp[i], enc));
    }
    /* A mark that lost its base joins the unit before it. */
    while (tf->cursor < tf->text.len && tf->cursor > 0 && cpbuf_is_mark(tf->text.cp[tf->cursor]))
        tf->cursor++;
    tf->base.dirty = true;
    return WIDGET_CHANGED | WIDGET_HANDLED | WIDGET_REDRAW;
}

/* Moves the cursor; a move that goes nowhere only consumes the key. */
static unsigned move_to(struct textfield *tf, size_t pos)
{
    if (pos == tf->cursor)
        return WIDGET_HANDLED;
    tf->cursor = pos;
    tf->base.dirty = true;
    return WIDGET_HANDLED | WIDGET_REDRAW;
}

/* Inserts src at the cursor, cut to whole units that fit under max_chars. */
static unsigned insert_text(struct textfield *tf, const uint32_t *src, size_t n)
{
    size_t room = n;
    if (tf->max_chars)
        room = tf->text.len < tf->max_chars ? tf->max_chars - tf->text.len : 0;
    if (n > room) {
        n = room;
        while (n > 0 && cpbuf_is_mark(src[n]))
            n--;
    }
    if (n == 0)
        return WIDGET_HANDLED;
    cpbuf_insert(&tf->text, tf->cursor, src, n);
    tf->cursor += n;
    return changed(tf);
}

/* Removes [from, to) and keeps it for Ctrl-Y when kill is set. */
static unsigned remove_text(struct textfield *tf, size_t from, size_t to, bool kill)
{
    if (from >= to)
        return WIDGET_HANDLED;
    if (kill) {
        tf->kill.len = 0;
        cpbuf_insert(&tf->kill, 0, tf->text.cp + from, to - from);
    }
    cpbuf_erase(&tf->text, from, to);
    tf->cursor = from;
    return changed(tf);
}

/* Alt-<key>: word moves; any other Alt combination belongs to the owner. */
static unsigned key_alt(struct textfield *tf, int code)
{
    switch (code) {
    case 'b':
    case 'B':
        return move_to(tf, word_start(tf, tf->cursor, cpbuf_is_word));
    case 'f':
    case 'F':
        return move_to(tf, word_end(tf, tf->cursor));
    default:
        return WIDGET_IGNORED;
    }
}

/* Curses function keys: arrows, Home/End, Backspace, Delete, keypad Enter. */
static unsigned key_function(struct textfield *tf, int code)
{
    const struct cpbuf *b = &tf->text;
    switch (code) {
    case KEY_LEFT:
        return move_to(tf, cpbuf_prev_unit(b, tf->cursor));
    case KEY_RIGHT:
        return move_to(tf, cpbuf_next_unit(b, tf->cursor));
    case KEY_HOME:
        return move_to(tf, 0);
    case KEY_END:
        return move_to(tf, b->len);
    case KEY_BACKSPACE:
        return remove_text(tf, cpbuf_prev_unit(b, tf->cursor), tf->cursor, false);
    case KEY_DC:
        return remove_text(tf, tf->cursor, cpbuf_next_unit(b, tf->cursor), false);
    case KEY_ENTER:
        return WIDGET_FOCUS_NEXT | WIDGET_HANDLED;
    default:
        return WIDGET_IGNORED;
    }
}

/* ops->key: editing and motion keys, then printable code points. */
static unsigned textfield_key(struct widget *wd, const struct widget_key *k)
{
    struct textfield *tf = (struct textfield *)wd;
    const struct cpbuf *b = &tf->text;

    if (wd->disabled)
        return WIDGET_IGNORED;
    if (k->alt)
        return k->is_function ? WIDGET_IGNORED : key_alt(tf, k->code);
    if (k->is_function)
        return key_function(tf, k->code);

    switch (k->code) {
    case CTRL_A:
        return move_to(tf, 0);
    case CTRL_E:
        return move_to(tf, b->len);
    case CTRL_B:
        return move_to(tf, cpbuf_prev_unit(b, tf->cursor));
    case CTRL_F:
        return move_to(tf, cpbuf_next_unit(b, tf->cursor));
    case CTRL_H:
    case ASCII_DEL:
        return remove_text(tf, cpbuf_prev_unit(b, tf->cursor), tf->cursor, false);
    case CTRL_D:
        return remove_text(tf, tf->cursor, cpbuf_next_unit(b, tf->cursor), false);
    case CTRL_K:
        return remove_text(tf, tf->cursor, b->len, true);
    case CTRL_U:
        return remove_text(tf, 0, tf->cursor, true);
    case CTRL_W:
        return remove_text(tf, word_start(tf, tf->cursor, cpbuf_not_space), tf->cursor, true);
    case CTRL_Y:
        return insert_text(tf, tf->kill.cp, tf->kill.len);
    case '\r':
    case '\n':
        return WIDGET_FOCUS_NEXT | WIDGET_HANDLED;
    default:
        break;
    }
    if (!cpbuf_is_insertable(k->code))
        return WIDGET_IGNORED;
    uint32_t cp = (uint32_t)k->code;
    return insert_text(tf, &cp, 1);
}

/*
 * The scroll that keeps the cursor's unit in view in w cells, moving as
 * little as possible from the previous scroll: text cells hidden on the
 * left, with the markers' cells left out of the room for the cursor.
 */
static int scroll_for(const struct textfield *tf, int w, int scroll)
{
    const struct cpbuf *b = &tf->text;
    bool markers = w >= MIN_MARKER_WIDTH;
    int cx = cells_to(b, tf->cursor, tf->mask);
    int cw = tf->cursor < b->len ? unit_width(b->cp[tf->cursor], tf->mask) : 1;
    int total = cells_to(b, b->len, tf->mask);

    if (cw > w)
        cw = w;
    /* Text got shorter: show as much as fits, the cell after the end included. */
    if (scroll > 0 && total + 1 < scroll + w)
        scroll = total + 1 > w ? total + 1 - w : 0;
    if (cx < scroll + (markers && scroll > 0)) {
        scroll = cx;
        if (markers && scroll > 0)
            scroll--; /* the cursor goes right of the '<' */
    }
    int right = markers && total > scroll + w;
    if (cx + cw > scroll + w - right) {
        scroll = cx + cw - w;
        if (markers && total > scroll + w)
            scroll++; /* the cursor goes left of the '>' */
    }
    return scroll;
}

/*
 * Draws the text of b from text cell scroll on, in w cells at (y, x): '<' /
 * '>' in the edge cells when left / right are set, and blanks where a wide
 * character would cross the edge of the cells between them.
 */
static void draw_text(WINDOW *win, int y, int x, int w, const struct cpbuf *b, uint32_t mask,
                      int scroll, bool left, bool right)
{
    int lo = left ? 1 : 0, hi = right ? w - 1 : w;
    int p = 0;

    for (int c = 0; c < w; c++)
        mvwaddch(win, y, x + c, ' ');
    for (size_t i = 0; i < b->len;) {
        size_t end = cpbuf_next_unit(b, i);
        int uw = unit_width(b->cp[i], mask);
        int start = p - scroll;
        if (start >= hi)
            break;
        if (start >= lo && start + uw <= hi)
            cpbuf_draw_unit(win, y, x + start, b, i, end, mask);
        p += uw;
        i = end;
    }
    if (left)
        mvwaddch(win, y, x, '<');
    if (right)
        mvwaddch(win, y, x + w - 1, '>');
}

/* ops->draw: the text (or the dim placeholder), then the cursor when focused. */
static void textfield_draw(struct widget *wd, WINDOW *win, int y, int x, int w, bool focused)
{
    struct textfield *tf = (struct textfield *)wd;
    attr_t attrs;
    short pair;

    wd->dirty = false;
    if (w <= 0)
        return;
    wattr_get(win, &attrs, &pair, NULL);
    if (wd->disabled)
        wattr_on(win, A_DIM, NULL);

    int col = 0;
    if (tf->text.len == 0 && tf->placeholder.len > 0) {
        tf->scroll = 0;
        wattr_on(win, A_DIM, NULL);
        draw_text(win, y, x, w, &tf->placeholder, 0, 0, false, false);
    } else {
        int total = cells_to(&tf->text, tf->text.len, tf->mask);
        bool markers = w >= MIN_MARKER_WIDTH;
        tf->scroll = scroll_for(tf, w, tf->scroll);
        col = cells_to(&tf->text, tf->cursor, tf->mask) - tf->scroll;
        draw_text(win, y, x, w, &tf->text, tf->mask, tf->scroll, markers && tf->scroll > 0,
                  markers && total > tf->scroll + w);
    }
    tf->last_w = w;
    wattr_set(win, attrs, pair, NULL);
    if (focused)
        wmove(win, y, x + col);
}

static int textfield_height(const struct widget *wd, int w)
{
    return 1;
}

/* ops->destroy: frees the field and everything it owns. */
static void textfield_destroy(struct widget *wd)
{
    struct textfield *tf = (struct textfield *)wd;
    cpbuf_free(&tf->text);
    cpbuf_free(&tf->kill);
    cpbuf_free(&tf->placeholder);
    strbuf_free(&tf->value);
    free(tf);
}

static const struct widget_ops textfield_ops = {
    .kind = "textfield",
    .draw = textfield_draw,
    .key = textfield_key,
    .height = textfield_height,
    .destroy = textfield_destroy,
};

struct textfield *textfield_new(const char *initial, size_t max_chars)
{
    struct textfield *tf = xcalloc(1, sizeof *tf);
    tf->base.ops = &textfield_ops;
    tf->max_chars = max_chars;
    textfield_set(tf, initial);
    return tf;
}

void textfield_free(struct textfield *tf)
{
    if (tf)
        textfield_destroy(&tf->base);
}

struct widget *textfield_widget(struct textfield *tf)
{
    return &tf->base;
}

struct textfield *textfield_from_widget(struct widget *wd)
{
    return wd && wd->ops == &textfield_ops ? (struct textfield *)wd : NULL;
}

const char *textfield_value(const struct textfield *tf)
{
    return strbuf_str(&tf->value);
}

void textfield_set(struct textfield *tf, const char *utf8)
{
    cpbuf_set_utf8(&tf->text, utf8, tf->max_chars);
    tf->cursor = tf->text.len;
    changed(tf);
}

void textfield_set_placeholder(struct textfield *tf, const char *utf8)
{
    cpbuf_set_utf8(&tf->placeholder, utf8, 0);
    tf->base.dirty = true;
}

void textfield_set_mask(struct textfield *tf, uint32_t mask)
{
    if (mask != 0 && (mask > 0x10FFFF || utf8_cpwidth(mask) <= 0))
        mask = '*'; /* not a printable character */
    tf->mask = mask;
    tf->base.dirty = true;
}

int textfield_cursor_col(const struct textfield *tf)
{
    int cx = cells_to(&tf->text, tf->cursor, tf->mask);
    if (tf->last_w <= 0)
        return cx;
    return cx - scroll_for(tf, tf->last_w, tf->scroll);
}
