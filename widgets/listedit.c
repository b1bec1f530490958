/*
 * listedit: the list editor widget (see listedit.h).
 *
 * The list owns only its state: the owner's callbacks and context, the
 * focused row, the limit, the empty hint and the disabled note (both
 * sanitized copies). The rows themselves live with the owner, so every key
 * and every draw re-reads count() and clamps the focus to it — the owner may
 * add or remove rows at any time (after a confirmation dialog, a file load).
 */
#include "widgets/listedit.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "util/strbuf.h"
#include "util/utf8.h"
#include "util/xalloc.h"

struct listedit {
    struct widget base; /* first: a list editor is a widget */
    const struct listedit_ops *ops;
    void *ctx;
    size_t max_rows; /* 0: no limit */
    size_t focus;
    char *hint; /* NULL: DEFAULT_HINT */
    char *note;
    bool refused; /* an add was refused at max_rows: text keys wait (listedit_refused) */
};

#define DEFAULT_HINT "empty \xe2\x80\x94 Alt-N adds a row"
#define EDITED (WIDGET_CHANGED | WIDGET_HANDLED | WIDGET_REDRAW)
#define MOVED (WIDGET_HANDLED | WIDGET_REDRAW)

static const struct widget_ops listedit_ops;

/* A sanitized copy of outside text for the screen (NULL stays NULL). */
static char *sanitized(const char *s)
{
    if (!s)
        return NULL;
    struct strbuf sb = STRBUF_INIT;
    utf8_sanitize(&sb, s, strlen(s), 0);
    return strbuf_detach(&sb, NULL);
}

/*
 * Draws s in w cells at (y, x), blanks after it; what does not fit is cut at
 * a whole character (a mark stays with its base).
 */
static void draw_text(WINDOW *win, int y, int x, int w, const char *s)
{
    size_t n = strlen(s), cap = n + 1;
    wchar_t *buf = xreallocarray(NULL, cap, sizeof *buf);
    size_t len = 0;
    int cells = 0;

    for (size_t i = 0; i < n;) {
        uint32_t cp;
        i += utf8_decode(s + i, n - i, &cp);
        int cw = utf8_cpwidth(cp);
        if (cw < 0 || (cw == 0 && len == 0))
            continue;
        if (cells + cw > w)
            break;
        cells += cw;
        buf[len++] = (wchar_t)cp;
    }
    for (int c = 0; c < w; c++)
        mvwaddch(win, y, x + c, ' ');
    if (len > 0)
        mvwaddnwstr(win, y, x, buf, (int)len);
    free(buf);
}

static size_t row_count(const struct listedit *le)
{
    return le->ops->count(le->ctx);
}

/* Keeps the focus on a row that exists. */
static void clamp_focus(struct listedit *le)
{
    size_t n = row_count(le);
    if (le->focus >= n)
        le->focus = n > 0 ? n - 1 : 0;
}

/* Focuses row, telling the owner which way the focus came in. */
static unsigned focus_row(struct listedit *le, size_t row, bool from_below)
{
    le->focus = row;
    if (le->ops->focus_row)
        le->ops->focus_row(le->ctx, row, from_below);
    le->base.dirty = true;
    return MOVED;
}

/* The row before (dir < 0) or after; IGNORED past either end so the form moves on. */
static unsigned step(struct listedit *le, int dir)
{
    size_t n = row_count(le);
    if (dir < 0)
        return le->focus > 0 && n > 0 ? focus_row(le, le->focus - 1, true) : WIDGET_IGNORED;
    return le->focus + 1 < n ? focus_row(le, le->focus + 1, false) : WIDGET_IGNORED;
}

/* Alt-N / Insert: a row after the focused one, unless the list is full. */
static unsigned add(struct listedit *le)
{
    size_t n = row_count(le);
    if (!le->ops->add_row)
        return WIDGET_IGNORED;
    if (le->max_rows && n >= le->max_rows) {
        le->refused = true; /* what is typed next was meant for the new row: not for this one */
        le->base.dirty = true;
        return WIDGET_HANDLED | WIDGET_REDRAW;
    }
    size_t at = n == 0 ? 0 : le->focus + 1;
    le->ops->add_row(le->ctx, at);
    if (row_count(le) <= n)
        return WIDGET_HANDLED | WIDGET_REDRAW;
    focus_row(le, at < row_count(le) ? at : row_count(le) - 1, false);
    return EDITED;
}

/* Alt-D / Alt-Delete: the owner removes the focused row, now or after asking. */
static unsigned remove_focused(struct listedit *le)
{
    size_t n = row_count(le);
    if (!le->ops->remove_row)
        return WIDGET_IGNORED;
    if (n == 0)
        return WIDGET_HANDLED;
    le->ops->remove_row(le->ctx, le->focus);
    le->base.dirty = true;
    if (row_count(le) >= n)
        return WIDGET_HANDLED | WIDGET_REDRAW; /* asking first */
    clamp_focus(le);
    if (row_count(le) > 0 && le->ops->focus_row)
        le->ops->focus_row(le->ctx, le->focus, false);
    return EDITED;
}

/* Alt-Up / Alt-Down: the focused row swaps with its neighbour; the focus follows. */
static unsigned move_row(struct listedit *le, int dir)
{
    size_t n = row_count(le);
    if (!le->ops->move_row)
        return WIDGET_IGNORED;
    if (n == 0 || (dir < 0 && le->focus == 0) || (dir > 0 && le->focus + 1 >= n))
        return WIDGET_HANDLED;
    size_t to = dir < 0 ? le->focus - 1 : le->focus + 1;
    le->ops->move_row(le->ctx, le->focus, to);
    le->focus = to;
    le->base.dirty = true;
    return EDITED;
}

/* Keys the list acts on once the row ignored them. */
static unsigned list_key(struct listedit *le, const struct widget_key *k)
{
    if (k->alt && k->is_function) {
        switch (k->code) {
        case KEY_UP:
            return move_row(le, -1);
        case KEY_DOWN:
            return move_row(le, 1);
        case KEY_DC:
            return remove_focused(le);
        default:
            return WIDGET_IGNORED;
        }
    }
    if (k->alt) {
        switch (k->code) {
        case 'n':
        case 'N':
            return add(le);
        case 'd':
        case 'D':
            return remove_focused(le);
        default:
            return WIDGET_IGNORED;
        }
    }
    if (k->is_function) {
        switch (k->code) {
        case KEY_IC:
            return add(le);
        case KEY_UP:
        case KEY_BTAB:
            return step(le, -1);
        case KEY_DOWN:
            return step(le, 1);
        default:
            return WIDGET_IGNORED;
        }
    }
    return k->code == '\t' ? step(le, 1) : WIDGET_IGNORED;
}

/* ops->key: the focused row first, then the list's own keys. */
static unsigned listedit_key(struct widget *wd, const struct widget_key *k)
{
    struct listedit *le = (struct listedit *)wd;
    unsigned r = WIDGET_IGNORED;

    if (wd->disabled)
        return WIDGET_IGNORED;
    clamp_focus(le);
    if (le->refused) {
        /*
         * After a refused add, what was meant for the new row — text, Tab,
         * Enter — is held back, so it never lands in a row already there;
         * Esc, a function key or an Alt key ends the refusal (Esc is used up).
         */
        bool esc = !k->is_function && !k->alt && k->code == 27;
        if (!k->is_function && !k->alt && !esc)
            return WIDGET_HANDLED;
        le->refused = false;
        wd->dirty = true;
        if (esc)
            return WIDGET_HANDLED | WIDGET_REDRAW;
    }
    if (row_count(le) > 0 && le->ops->row_key)
        r = le->ops->row_key(le->ctx, le->focus, k);
    if (r & WIDGET_REDRAW)
        wd->dirty = true;
    if (r & (WIDGET_FOCUS_NEXT | WIDGET_FOCUS_PREV)) {
        bool next = r & WIDGET_FOCUS_NEXT;
        unsigned moved = step(le, next ? 1 : -1);
        if (moved != WIDGET_IGNORED)
            r = (r & ~(unsigned)(WIDGET_FOCUS_NEXT | WIDGET_FOCUS_PREV)) | moved;
        return r | WIDGET_HANDLED;
    }
    if (r != WIDGET_IGNORED)
        return r;
    return list_key(le, k);
}

/* Lines of row at width w. */
static int row_height(const struct listedit *le, size_t row, int w)
{
    if (!le->ops->row_height)
        return 1;
    int h = le->ops->row_height(le->ctx, row, w);
    return h > 0 ? h : 1;
}

/* ops->height: the note line, then the rows (or the hint line). */
static int listedit_height(const struct widget *wd, int w)
{
    const struct listedit *le = (const struct listedit *)wd;
    size_t n = row_count(le);
    int h = wd->disabled && le->note ? 1 : 0;
    if (n == 0)
        return h + 1;
    for (size_t i = 0; i < n; i++)
        h += row_height(le, i, w);
    return h;
}

/* ops->draw: the note, the rows through draw_row (or the hint), the cursor in the focused row. */
static void listedit_draw(struct widget *wd, WINDOW *win, int y, int x, int w, bool focused)
{
    struct listedit *le = (struct listedit *)wd;
    size_t n = row_count(le);
    attr_t attrs;
    short pair;
    int cy = y, cx = x;

    wd->dirty = false;
    if (w <= 0)
        return;
    clamp_focus(le);
    focused = focused && !wd->disabled;
    wattr_get(win, &attrs, &pair, NULL);
    if (wd->disabled && le->note) {
        wattr_on(win, A_DIM, NULL);
        draw_text(win, y++, x, w, le->note);
        wattr_set(win, attrs, pair, NULL);
    }
    if (n == 0) {
        wattr_on(win, A_DIM, NULL);
        draw_text(win, y, x, w, le->hint ? le->hint : DEFAULT_HINT);
        cy = y;
    }
    for (size_t i = 0; i < n; i++) {
        int h = row_height(le, i, w);
        bool here = focused && i == le->focus;
        wattr_set(win, attrs, pair, NULL);
        if (wd->disabled)
            wattr_on(win, A_DIM, NULL);
        wmove(win, y, x);
        le->ops->draw_row(le->ctx, i, win, y, x, w, here);
        if (here)
            getyx(win, cy, cx);
        if (i == le->focus && (cy < y || cy >= y + h))
            cy = y, cx = x; /* the row left the cursor outside itself */
        y += h;
    }
    wattr_set(win, attrs, pair, NULL);
    if (focused)
        wmove(win, cy, cx);
}

/* ops->destroy: frees the list, not the owner's rows. */
static void listedit_destroy(struct widget *wd)
{
    struct listedit *le = (struct listedit *)wd;
    free(le->hint);
    free(le->note);
    free(le);
}

static const struct widget_ops listedit_ops = {
    .kind = "listedit",
    .draw = listedit_draw,
    .key = listedit_key,
    .height = listedit_height,
    .destroy = listedit_destroy,
};

struct listedit *listedit_new(const struct listedit_ops *ops, void *ctx, size_t max_rows)
{
    struct listedit *le = xcalloc(1, sizeof *le);
    le->base.ops = &listedit_ops;
    le->base.dirty = true;
    le->ops = ops;
    le->ctx = ctx;
    le->max_rows = max_rows;
    return le;
}

void listedit_free(struct listedit *le)
{
    if (le)
        listedit_destroy(&le->base);
}

struct widget *listedit_widget(struct listedit *le)
{
    return &le->base;
}

struct listedit *listedit_from_widget(struct widget *wd)
{
    return wd && wd->ops == &listedit_ops ? (struct listedit *)wd : NULL;
}

size_t listedit_focused(const struct listedit *le)
{
    size_t n = row_count(le);
    return le->focus < n ? le->focus : (n > 0 ? n - 1 : 0);
}

void listedit_set_focus(struct listedit *le, size_t row)
{
    le->focus = row;
    clamp_focus(le);
    le->base.dirty = true;
}

void listedit_changed(struct listedit *le)
{
    clamp_focus(le);
    le->base.dirty = true;
}

bool listedit_refused(const struct listedit *le)
{
    return le->refused;
}

bool listedit_at_limit(const struct listedit *le)
{
    return le->max_rows && row_count(le) >= le->max_rows;
}

void listedit_set_empty_hint(struct listedit *le, const char *utf8)
{
    free(le->hint);
    le->hint = sanitized(utf8);
    le->base.dirty = true;
}

void listedit_set_note(struct listedit *le, const char *utf8)
{
    free(le->note);
    le->note = sanitized(utf8);
    le->base.dirty = true;
}
