/*
 * form: the layout of a section of fields (see form.h).
 *
 * The form owns its entries (sanitized label, help, message and note; the
 * widget, which it destroys), the focused entry, the layout of the last
 * draw (each entry's block of content lines and the label column), the
 * scroll, and an off-screen pad holding the whole content. Widgets draw
 * into the pad at full height — so a widget taller than the screen needs
 * no clipping of its own, and the cursor it leaves tells the form which
 * line to keep in view — and form_draw copies the visible rows into the
 * owner's window. The owner (a wizard screen) sends keys to form_key and
 * calls form_draw once per loop turn when form_needs_draw says so.
 */
#include "widgets/form.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/strbuf.h"
#include "util/utf8.h"
#include "util/xalloc.h"

struct entry {
    struct widget *wd;
    char *label, *help, *message, *note; /* sanitized; NULL: none */
    enum form_severity severity;
    bool hidden;
    bool wide;
    bool dirty;          /* label, message or note changed, or focus came or went */
    bool drawn_disabled; /* wd->disabled at the last draw */
    /* Layout of the last draw, in content lines (the pad's rows). */
    int top, height; /* the whole block; height 0 while hidden */
    int widget_y, widget_h;
};

struct form {
    struct entry *e;
    size_t n, cap;
    size_t focus; /* FORM_NO_ENTRY when nothing can take it */
    bool utf8;
    bool help_line;
    bool dirty; /* draw every entry again */
    WINDOW *pad;
    int pad_h, pad_w;
    int content_h;
    int label_w;
    int scroll;
    int cur_y, cur_x; /* where the focused widget left the pad's cursor */
    /* The last draw. */
    bool drawn;
    WINDOW *win;
    int y, x, h, w, body;
    const struct widget_palette *pal;
};

enum {
    LABEL_GAP = 2,  /* cells between the label column and the widgets */
    ICON_CELLS = 2, /* "✗ " */
};

#define MOVED (WIDGET_HANDLED | WIDGET_REDRAW)

/* A sanitized copy of text for the screen (NULL stays NULL). */
static char *sanitized(const char *s)
{
    if (!s)
        return NULL;
    struct strbuf sb = STRBUF_INIT;
    utf8_sanitize(&sb, s, strlen(s), 0);
    return strbuf_detach(&sb, NULL);
}

/* Replaces *slot with a sanitized copy of s. */
static void set_text(char **slot, const char *s)
{
    free(*slot);
    *slot = sanitized(s);
}

/* Lines the message of e takes at width w (0 without a message). */
static int message_lines(const struct entry *e, int w)
{
    if (e->severity == FORM_MESSAGE_NONE || !e->message)
        return 0;
    return widget_wrapped_lines(e->message, w - ICON_CELLS, FORM_MESSAGE_LINES);
}

static bool has_note(const struct entry *e)
{
    return e->note && e->wd->disabled;
}

/* Lines the note of e takes at width w (0 while enabled or without one). */
static int note_lines(const struct entry *e, int w)
{
    return has_note(e) ? widget_wrapped_lines(e->note, w, FORM_MESSAGE_LINES) : 0;
}

static bool focusable(const struct form *f, size_t i)
{
    return i < f->n && !f->e[i].hidden && !f->e[i].wd->disabled;
}

/*
 * The entry that has the focus once hidden and disabled ones are skipped:
 * the focused one, else the next that can take it, else the one before,
 * else (no focus yet) the first.
 */
static size_t effective_focus(const struct form *f)
{
    if (focusable(f, f->focus))
        return f->focus;
    if (f->focus < f->n) {
        for (size_t i = f->focus + 1; i < f->n; i++)
            if (focusable(f, i))
                return i;
        for (size_t i = f->focus; i-- > 0;)
            if (focusable(f, i))
                return i;
        return FORM_NO_ENTRY;
    }
    for (size_t i = 0; i < f->n; i++)
        if (focusable(f, i))
            return i;
    return FORM_NO_ENTRY;
}

/* Moves the focus to entry i (or none); the entries it leaves and enters redraw. */
static void set_focus(struct form *f, size_t i)
{
    if (i == f->focus)
        return;
    if (f->focus < f->n)
        f->e[f->focus].dirty = true;
    if (i < f->n)
        f->e[i].dirty = true;
    f->focus = i;
}

static void fix_focus(struct form *f)
{
    set_focus(f, effective_focus(f));
}

/* Focus to the next (dir > 0) or previous entry that can take it; false at the end. */
static bool move_focus(struct form *f, int dir)
{
    fix_focus(f);
    if (f->focus == FORM_NO_ENTRY)
        return false;
    for (size_t i = f->focus; dir > 0 ? i + 1 < f->n : i > 0;) {
        i = dir > 0 ? i + 1 : i - 1;
        if (focusable(f, i)) {
            set_focus(f, i);
            return true;
        }
    }
    return false;
}

/* Column where the widgets of entries that are not wide start. */
static int field_x(const struct form *f)
{
    return f->label_w > 0 ? f->label_w + LABEL_GAP : 0;
}

/*
 * Lays the visible entries out at width w: the label column, then each
 * entry's block. Sets *changed when anything moved since the last layout.
 */
static void layout(struct form *f, int w, bool *changed)
{
    int lw = 0, cap = w / 3 < FORM_LABEL_MAX ? w / 3 : FORM_LABEL_MAX;
    for (size_t i = 0; i < f->n; i++) {
        const struct entry *e = &f->e[i];
        if (!e->hidden && !e->wide && e->label) {
            int c = 0;
            widget_fit_bytes(e->label, strlen(e->label), INT32_MAX, &c);
            lw = c > lw ? c : lw;
        }
    }
    lw = lw < cap ? lw : cap;
    if (lw != f->label_w)
        *changed = true;
    f->label_w = lw;

    int fx = field_x(f), line = 0;
    for (size_t i = 0; i < f->n; i++) {
        struct entry *e = &f->e[i];
        int top = line, wy = line, wh = 0, h = 0;
        if (!e->hidden) {
            int ww = e->wide ? w : w - fx;
            wy = line + (e->wide && e->label ? 1 : 0);
            wh = e->wd->ops->height(e->wd, ww);
            wh = wh > 0 ? wh : 1;
            h = wy - line + wh + message_lines(e, ww) + note_lines(e, ww);
        }
        if (top != e->top || h != e->height || wy != e->widget_y || wh != e->widget_h)
            *changed = true;
        e->top = top;
        e->height = h;
        e->widget_y = wy;
        e->widget_h = wh;
        line += h;
    }
    f->content_h = line;
}

/* The palette role and icon of a message severity. */
static attr_t severity_attr(const struct widget_palette *pal, enum form_severity s)
{
    switch (s) {
    case FORM_MESSAGE_ERROR:
        return pal->error;
    case FORM_MESSAGE_WARNING:
        return pal->warning;
    default:
        return pal->ok;
    }
}

static const char *severity_icon(const struct form *f, enum form_severity s)
{
    switch (s) {
    case FORM_MESSAGE_ERROR:
        return f->utf8 ? "\xe2\x9c\x97 " : "x ";
    case FORM_MESSAGE_WARNING:
        return "! ";
    default:
        return f->utf8 ? "\xe2\x9c\x93 " : "+ ";
    }
}

/* The message of e from pad row y at column x, w cells: icon, then the wrapped text. */
static void draw_message(struct form *f, const struct entry *e, int y, int x, int w,
                         const struct widget_palette *pal)
{
    const char *icon = severity_icon(f, e->severity);

    wattrset(f->pad, (int)severity_attr(pal, e->severity));
    widget_put_clipped(f->pad, y, x, w, icon, strlen(icon), f->utf8);
    widget_put_wrapped(f->pad, y, x + ICON_CELLS, w - ICON_CELLS, e->message, FORM_MESSAGE_LINES,
                       f->utf8);
}

/*
 * Draws entry i's block into the pad: label, widget (in the focus role when
 * focused, dim when disabled), message and note. The focused widget's
 * cursor is kept for form_draw.
 */
static void draw_entry(struct form *f, size_t i, const struct widget_palette *pal)
{
    struct entry *e = &f->e[i];
    bool focused = i == f->focus, disabled = e->wd->disabled;
    int w = f->pad_w, fx = field_x(f);
    int wx = e->wide ? 0 : fx, ww = e->wide ? w : w - fx;

    wattrset(f->pad, (int)pal->normal);
    for (int r = 0; r < e->height; r++)
        widget_blank(f->pad, e->top + r, 0, w);
    e->dirty = false;
    e->drawn_disabled = disabled;
    if (e->height == 0)
        return;

    attr_t la = disabled ? pal->dim : focused ? pal->label | A_BOLD : pal->label;
    wattrset(f->pad, (int)la);
    if (e->label && e->wide)
        widget_put_clipped(f->pad, e->top, 0, w, e->label, strlen(e->label), f->utf8);
    else if (e->label)
        widget_put_clipped(f->pad, e->widget_y, 0, f->label_w, e->label, strlen(e->label), f->utf8);

    wattrset(f->pad, (int)(disabled ? pal->dim : focused ? pal->focus : pal->normal));
    wmove(f->pad, e->widget_y, wx);
    e->wd->ops->draw(e->wd, f->pad, e->widget_y, wx, ww, focused);
    if (focused) {
        getyx(f->pad, f->cur_y, f->cur_x);
        if (f->cur_y < e->widget_y || f->cur_y >= e->widget_y + e->widget_h)
            f->cur_y = e->widget_y, f->cur_x = wx; /* the widget put it nowhere useful */
    }

    int y = e->widget_y + e->widget_h;
    if (e->severity != FORM_MESSAGE_NONE && e->message) {
        draw_message(f, e, y, wx, ww, pal);
        y += message_lines(e, ww);
    }
    if (has_note(e)) {
        wattrset(f->pad, (int)pal->dim);
        widget_put_wrapped(f->pad, y, wx, ww, e->note, FORM_MESSAGE_LINES, f->utf8);
    }
    wattrset(f->pad, (int)pal->normal);
}

/* An entry whose drawing is out of date: its own changes or its widget's. */
static bool entry_dirty(const struct entry *e)
{
    return !e->hidden && (e->dirty || e->wd->dirty || e->wd->disabled != e->drawn_disabled);
}

/*
 * The scroll that keeps the focused entry's block in view in body lines,
 * or, when it is taller, as much of it as fits with the cursor's line.
 */
static int scroll_to_focus(const struct form *f, int body)
{
    int s = f->scroll, max = f->content_h > body ? f->content_h - body : 0;
    if (f->focus < f->n) {
        const struct entry *e = &f->e[f->focus];
        int top = e->top, bottom = e->top + e->height;
        if (e->height <= body) {
            s = top < s ? top : s;
            s = bottom > s + body ? bottom - body : s;
        } else {
            s = s < top ? top : s;
            s = s > bottom - body ? bottom - body : s;
            s = f->cur_y < s ? f->cur_y : s;
            s = f->cur_y >= s + body ? f->cur_y - body + 1 : s;
        }
    }
    return s < 0 ? 0 : s > max ? max : s;
}

/* Rows the help takes at width w: the focused entry's help wrapped, 1 to FORM_HELP_LINES. */
static int help_rows(const struct form *f, int w)
{
    const char *help = form_help(f);
    int arrows = w >= 4 ? 3 : 0;
    return help && w - arrows > 0 ? widget_wrapped_lines(help, w - arrows, FORM_HELP_LINES) : 1;
}

/*
 * The help lines: the focused entry's help, wrapped over rows rows (never cut
 * silently at the screen's edge), and arrows on the first while there is more
 * above / below.
 */
static void draw_help(struct form *f, WINDOW *win, int y, int x, int w, int rows,
                      const struct widget_palette *pal)
{
    const char *help = form_help(f);
    int arrows = w >= 4 ? 2 : 0;
    bool above = f->scroll > 0, below = f->scroll + f->body < f->content_h;

    wattrset(win, (int)pal->help);
    for (int r = 0; r < rows; r++)
        widget_blank(win, y + r, x, w);
    if (help)
        widget_put_wrapped(win, y, x, w - (arrows ? arrows + 1 : 0), help, rows, f->utf8);
    if (!arrows)
        return;
    if (above)
        widget_put_bytes(win, y, x + w - 2, f->utf8 ? "\xe2\x86\x91" : "^", f->utf8 ? 3 : 1);
    if (below)
        widget_put_bytes(win, y, x + w - 1, f->utf8 ? "\xe2\x86\x93" : "v", f->utf8 ? 3 : 1);
}

/* Makes the pad at least h rows by w cells; a new pad needs every entry drawn. */
static bool ensure_pad(struct form *f, int h, int w)
{
    if (f->pad && f->pad_w == w && f->pad_h >= h)
        return false;
    if (f->pad)
        delwin(f->pad);
    f->pad = newpad(h, w);
    if (!f->pad)
        xalloc_die();
    f->pad_h = h;
    f->pad_w = w;
    return true;
}

void form_draw(struct form *f, WINDOW *win, int y, int x, int h, int w,
               const struct widget_palette *pal)
{
    attr_t attrs;
    short pair;

    if (!win || y < 0 || x < 0)
        return;
    h = h < getmaxy(win) - y ? h : getmaxy(win) - y;
    w = w < getmaxx(win) - x ? w : getmaxx(win) - x;
    if (h <= 0 || w <= 0)
        return;
    wattr_get(win, &attrs, &pair, NULL);
    fix_focus(f);

    bool full = f->dirty || !f->drawn || win != f->win || y != f->y || x != f->x || h != f->h ||
                w != f->w || pal != f->pal;
    /* The help wraps, but never takes more than half the form (one line at least). */
    int rows = f->help_line ? help_rows(f, w) : 0;
    if (rows > h / 2)
        rows = h / 2 > 0 ? h / 2 : 1;
    if (rows >= h)
        rows = 0;
    int body = h - rows;
    layout(f, w, &full);
    int ph = f->content_h > body ? f->content_h : body;
    if (ensure_pad(f, ph, w))
        full = true;

    if (full)
        werase(f->pad);
    for (size_t i = 0; i < f->n; i++)
        if (i != f->focus && !f->e[i].hidden && (full || entry_dirty(&f->e[i])))
            draw_entry(f, i, pal);
    if (f->focus < f->n && (full || entry_dirty(&f->e[f->focus])))
        draw_entry(f, f->focus, pal); /* last: it places the cursor */

    f->scroll = scroll_to_focus(f, body);
    f->body = body;
    copywin(f->pad, win, f->scroll, 0, y, x, y + body - 1, x + w - 1, FALSE);
    if (rows > 0)
        draw_help(f, win, y + body, x, w, rows, pal);

    f->drawn = true;
    f->dirty = false;
    f->win = win;
    f->y = y, f->x = x, f->h = h, f->w = w;
    f->pal = pal;
    wattr_set(win, attrs, pair, NULL);
    if (f->focus < f->n && f->cur_y >= f->scroll && f->cur_y < f->scroll + body)
        wmove(win, y + f->cur_y - f->scroll, x + f->cur_x);
}

unsigned form_key(struct form *f, const struct widget_key *k)
{
    fix_focus(f);
    bool tab = !k->is_function && !k->alt && k->code == '\t';
    bool btab = k->is_function && !k->alt && k->code == KEY_BTAB;
    unsigned r = WIDGET_IGNORED;

    if (f->focus < f->n) {
        struct widget *wd = f->e[f->focus].wd;
        r = wd->ops->key(wd, k);
        if (r & WIDGET_REDRAW)
            wd->dirty = true;
    }
    if (r & (WIDGET_FOCUS_NEXT | WIDGET_FOCUS_PREV)) {
        if (move_focus(f, r & WIDGET_FOCUS_NEXT ? 1 : -1))
            r = (r & ~(unsigned)(WIDGET_FOCUS_NEXT | WIDGET_FOCUS_PREV)) | MOVED;
        return r | WIDGET_HANDLED;
    }
    if (r != WIDGET_IGNORED)
        return r;
    if (tab)
        return move_focus(f, 1) ? MOVED : WIDGET_FOCUS_NEXT | WIDGET_HANDLED;
    if (btab)
        return move_focus(f, -1) ? MOVED : WIDGET_FOCUS_PREV | WIDGET_HANDLED;
    if (k->is_function && !k->alt && (k->code == KEY_DOWN || k->code == KEY_UP))
        return move_focus(f, k->code == KEY_DOWN ? 1 : -1) ? MOVED : WIDGET_IGNORED;
    return WIDGET_IGNORED;
}

struct form *form_new(void)
{
    struct form *f = xcalloc(1, sizeof *f);
    f->focus = FORM_NO_ENTRY;
    f->utf8 = true;
    f->help_line = true;
    f->dirty = true;
    return f;
}

void form_free(struct form *f)
{
    if (!f)
        return;
    for (size_t i = 0; i < f->n; i++) {
        struct entry *e = &f->e[i];
        e->wd->ops->destroy(e->wd);
        free(e->label);
        free(e->help);
        free(e->message);
        free(e->note);
    }
    free(f->e);
    if (f->pad)
        delwin(f->pad);
    free(f);
}

size_t form_add(struct form *f, const char *label, struct widget *wd, const char *help)
{
    if (f->n == f->cap) {
        f->cap = f->cap ? f->cap * 2 : 8;
        f->e = xreallocarray(f->e, f->cap, sizeof *f->e);
    }
    struct entry *e = &f->e[f->n];
    memset(e, 0, sizeof *e);
    e->wd = wd;
    e->label = sanitized(label);
    e->help = sanitized(help);
    e->dirty = true;
    f->n++;
    fix_focus(f);
    return f->n - 1;
}

size_t form_count(const struct form *f)
{
    return f->n;
}

struct widget *form_widget_at(const struct form *f, size_t entry)
{
    return entry < f->n ? f->e[entry].wd : NULL;
}

void form_set_label(struct form *f, size_t entry, const char *label)
{
    if (entry >= f->n)
        return;
    set_text(&f->e[entry].label, label);
    f->e[entry].dirty = true;
}

void form_set_help(struct form *f, size_t entry, const char *help)
{
    if (entry >= f->n)
        return;
    set_text(&f->e[entry].help, help);
    f->e[entry].dirty = true;
}

void form_set_message(struct form *f, size_t entry, enum form_severity severity, const char *text)
{
    if (entry >= f->n)
        return;
    struct entry *e = &f->e[entry];
    char *msg = severity == FORM_MESSAGE_NONE ? NULL : sanitized(text);
    if (!msg)
        severity = FORM_MESSAGE_NONE;
    if (severity == e->severity && (!msg || (e->message && strcmp(e->message, msg) == 0))) {
        free(msg); /* the same message again: nothing to draw */
        return;
    }
    free(e->message);
    e->message = msg;
    e->severity = severity;
    e->dirty = true;
}

enum form_severity form_message(const struct form *f, size_t entry, const char **text)
{
    const struct entry *e = entry < f->n ? &f->e[entry] : NULL;
    if (text)
        *text = e ? e->message : NULL;
    return e ? e->severity : FORM_MESSAGE_NONE;
}

void form_set_hidden(struct form *f, size_t entry, bool hidden)
{
    if (entry >= f->n || f->e[entry].hidden == hidden)
        return;
    f->e[entry].hidden = hidden;
    f->e[entry].dirty = true;
    fix_focus(f);
}

bool form_hidden(const struct form *f, size_t entry)
{
    return entry < f->n && f->e[entry].hidden;
}

void form_set_disabled(struct form *f, size_t entry, bool disabled, const char *note)
{
    if (entry >= f->n)
        return;
    struct entry *e = &f->e[entry];
    e->wd->disabled = disabled;
    e->wd->dirty = true;
    set_text(&e->note, note);
    e->dirty = true;
    fix_focus(f);
}

void form_set_wide(struct form *f, size_t entry, bool wide)
{
    if (entry >= f->n)
        return;
    f->e[entry].wide = wide;
    f->e[entry].dirty = true;
}

bool form_focus(struct form *f, size_t entry)
{
    if (!focusable(f, entry))
        return false;
    set_focus(f, entry);
    return true;
}

size_t form_focused(const struct form *f)
{
    return effective_focus(f);
}

const char *form_help(const struct form *f)
{
    size_t i = effective_focus(f);
    return i < f->n ? f->e[i].help : NULL;
}

void form_set_help_line(struct form *f, bool on)
{
    if (f->help_line == on)
        return;
    f->help_line = on;
    f->dirty = true;
}

void form_set_utf8(struct form *f, bool utf8)
{
    if (f->utf8 == utf8)
        return;
    f->utf8 = utf8;
    f->dirty = true;
}

bool form_needs_draw(const struct form *f)
{
    if (f->dirty || !f->drawn || effective_focus(f) != f->focus)
        return true;
    for (size_t i = 0; i < f->n; i++)
        if (entry_dirty(&f->e[i]))
            return true;
    return false;
}

void form_invalidate(struct form *f)
{
    f->dirty = true;
}

int form_scroll(const struct form *f)
{
    return f->scroll;
}

bool form_entry_pos(const struct form *f, size_t entry, int *y, int *x, int *w)
{
    if (!f->drawn || entry >= f->n || f->e[entry].hidden)
        return false;
    const struct entry *e = &f->e[entry];
    int row = e->widget_y - f->scroll, fx = e->wide ? 0 : field_x(f);
    if (row < 0 || row >= f->body)
        return false;
    if (y)
        *y = f->y + row;
    if (x)
        *x = f->x + fx;
    if (w)
        *w = e->wide ? f->w : f->w - fx;
    return true;
}
