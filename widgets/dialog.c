/*
 * dialog: the confirm box (see dialog.h).
 *
 * The dialog owns copies of its title and message, the message wrapped
 * into lines (byte ranges of the message) for the text width of the last
 * layout, which button has the focus, the answer, and its curses window,
 * made again when the screen size changes its place or size.
 *
 * Wrapping is greedy by display cells. A line may break at a space (the
 * spaces at the break are dropped), before or after a wide (CJK) character,
 * except before closing punctuation (，。、！？ and the closing brackets) and
 * after opening brackets; a run with no break opportunity is cut at the
 * width. A wide character never crosses the edge: it starts the next line.
 */
#include "widgets/dialog.h"

#include <stdlib.h>
#include <string.h>

#include "util/utf8.h"
#include "util/xalloc.h"

struct line {
    size_t off, len; /* bytes of the message */
};

struct dialog {
    struct widget base; /* first: a dialog is a widget */
    char *title;
    char *message;
    struct line *lines;
    size_t nlines, cap;
    int wrapped_for; /* text width the lines are wrapped for; 0: none yet */
    bool focus_yes;
    bool answer;
    const struct widget_palette *pal;
    WINDOW *win;
};

enum {
    ESC = 27,
    PAD = 2,          /* border and a blank on each side of the text */
    CHROME_ROWS = 4,  /* top border, blank, buttons, bottom border */
    SCREEN_MARGIN = 4 /* columns left free around the box */
};

static const char YES[] = "[ Yes ]", NO[] = "[ No ]";

static const struct widget_ops dialog_ops;

/* Cells a code point takes as drawn: controls show as one U+FFFD. */
static int cp_cells(uint32_t cp)
{
    int w = utf8_cpwidth(cp);
    return w < 0 ? 1 : w;
}

/* CJK punctuation a line must not start with. */
static bool no_line_start(uint32_t cp)
{
    static const uint32_t set[] = {0x3001, 0x3002, 0xFF0C, 0xFF0E, 0xFF1A, 0xFF1B,
                                   0xFF01, 0xFF1F, 0xFF09, 0x300D, 0x300F, 0x3011,
                                   0x300B, 0x3009, 0x30FC, 0x2026, 0xFF5E};
    for (size_t i = 0; i < sizeof set / sizeof *set; i++)
        if (set[i] == cp)
            return true;
    return false;
}

/* CJK opening brackets a line must not end with. */
static bool no_line_end(uint32_t cp)
{
    return cp == 0xFF08 || cp == 0x300C || cp == 0x300E || cp == 0x3010 || cp == 0x300A ||
           cp == 0x3008;
}

/* Adds the line message[off..end), its trailing spaces dropped. */
static void add_line(struct dialog *d, size_t off, size_t end)
{
    while (end > off && d->message[end - 1] == ' ')
        end--;
    if (d->nlines == d->cap) {
        d->cap = d->cap ? d->cap * 2 : 8;
        d->lines = xreallocarray(d->lines, d->cap, sizeof *d->lines);
    }
    d->lines[d->nlines].off = off;
    d->lines[d->nlines].len = end - off;
    d->nlines++;
}

/* Wraps the paragraph message[start..stop) to width cells (see the top). */
static void wrap_paragraph(struct dialog *d, size_t start, size_t stop, int width)
{
    const char *s = d->message;
    size_t line = start;              /* where the current line starts */
    size_t brk_end = 0, brk_next = 0; /* the last break: line end, next line start */
    bool have_brk = false, prev_wide = false, prev_opener = false, continued = false;
    int cells = 0;

    for (size_t i = start; i < stop;) {
        uint32_t cp;
        size_t l = utf8_decode(s + i, stop - i, &cp);
        int cw = cp_cells(cp);

        if (cp == ' ' && continued && i == line) {
            line = i + l; /* a wrapped line starts after the spaces */
            i += l;
            continue;
        }
        if (cp == ' ') {
            have_brk = true;
            brk_end = i;
            brk_next = i + l;
        } else if (cw > 0 && i > line && (cw == 2 || prev_wide) && !no_line_start(cp) &&
                   !prev_opener) {
            have_brk = true;
            brk_end = brk_next = i;
        }
        if (cells + cw > width && cells > 0) {
            if (have_brk) {
                add_line(d, line, brk_end);
                line = brk_next;
            } else {
                add_line(d, line, i);
                line = i;
            }
            have_brk = false;
            continued = true;
            if (line > i) { /* the break is this space: go on after it */
                i = line;
                cells = 0;
                continue;
            }
            cells = widget_text_cells(s + line, i - line);
            continue; /* the same character again, on the new line */
        }
        cells += cw;
        if (cw > 0) {
            prev_wide = cw == 2;
            prev_opener = no_line_end(cp);
        }
        i += l;
    }
    add_line(d, line, stop);
}

/* Wraps the message to width cells, one paragraph per '\n'. */
static void wrap(struct dialog *d, int width)
{
    size_t n = strlen(d->message);
    d->nlines = 0;
    for (size_t start = 0;;) {
        const char *nl = memchr(d->message + start, '\n', n - start);
        size_t stop = nl ? (size_t)(nl - d->message) : n;
        wrap_paragraph(d, start, stop, width);
        if (!nl)
            break;
        start = stop + 1;
    }
    d->wrapped_for = width;
}

/* The widest paragraph, unwrapped. */
static int widest_paragraph(const struct dialog *d)
{
    const char *s = d->message;
    int widest = 0;
    for (;;) {
        const char *nl = strchr(s, '\n');
        size_t n = nl ? (size_t)(nl - s) : strlen(s);
        int w = widget_text_cells(s, n);
        if (w > widest)
            widest = w;
        if (!nl)
            return widest;
        s = nl + 1;
    }
}

/* The box's width for a screen cols wide: sized to the text, within limits. */
static int box_width(const struct dialog *d, int cols)
{
    int buttons = (int)(sizeof YES - 1 + 1 + sizeof NO - 1);
    int want = widest_paragraph(d);
    int title = widget_text_cells(d->title, strlen(d->title)) + 4; /* "─ title ─" */
    if (title > want)
        want = title;
    if (buttons > want)
        want = buttons;
    want += 2 * PAD;
    int max = cols - SCREEN_MARGIN >= DIALOG_MIN_COLS ? cols - SCREEN_MARGIN : cols;
    if (want < DIALOG_MIN_COLS)
        want = DIALOG_MIN_COLS;
    return want > max ? max : want;
}

/* Draws a button, in `selected` when it has the focus. */
static void draw_button(struct dialog *d, int y, int x, const char *label, bool focused)
{
    widget_set_role(d->win, focused ? d->pal->selected : d->pal->normal);
    widget_put_textn(d->win, y, x, label, strlen(label), (int)strlen(label));
}

void dialog_draw(struct dialog *d)
{
    int cols = COLS, rows = LINES;
    int w = box_width(d, cols);
    if (w < 2 * PAD + 1)
        return; /* no room for a single cell of text */
    if (d->wrapped_for != w - 2 * PAD)
        wrap(d, w - 2 * PAD);
    int max_lines = rows - 2 - CHROME_ROWS;
    int shown = (int)d->nlines;
    if (shown > max_lines)
        shown = max_lines > 1 ? max_lines : 1;
    int h = shown + CHROME_ROWS;
    if (h > rows)
        h = rows;
    int y = (rows - h) / 2, x = (cols - w) / 2;

    if (d->win && (getmaxy(d->win) != h || getmaxx(d->win) != w || getbegy(d->win) != y ||
                   getbegx(d->win) != x)) {
        delwin(d->win);
        d->win = NULL;
    }
    if (!d->win)
        d->win = newwin(h, w, y, x);
    if (!d->win)
        return;
    d->base.dirty = false;

    widget_set_role(d->win, d->pal->normal);
    for (int r = 0; r < h; r++)
        for (int c = 0; c < w; c++)
            mvwaddch(d->win, r, c, ' ');
    chtype b = d->pal->border;
    wborder(d->win, ACS_VLINE | b, ACS_VLINE | b, ACS_HLINE | b, ACS_HLINE | b, ACS_ULCORNER | b,
            ACS_URCORNER | b, ACS_LLCORNER | b, ACS_LRCORNER | b);
    if (*d->title && w > 6) {
        widget_set_role(d->win, d->pal->title);
        mvwaddch(d->win, 0, 2, ' ');
        int used = widget_put_textn(d->win, 0, 3, d->title, strlen(d->title), w - 6);
        mvwaddch(d->win, 0, 3 + used, ' ');
    }
    widget_set_role(d->win, d->pal->normal);
    for (int i = 0; i < shown; i++) {
        const struct line *ln = &d->lines[i];
        widget_put_textn(d->win, 1 + i, PAD, d->message + ln->off, ln->len, w - 2 * PAD);
    }

    int yes_w = (int)sizeof YES - 1, no_w = (int)sizeof NO - 1;
    int bx = (w - (yes_w + 1 + no_w)) / 2, by = h - 2;
    if (bx < 1)
        bx = 1;
    draw_button(d, by, bx, YES, d->focus_yes);
    draw_button(d, by, bx + yes_w + 1, NO, !d->focus_yes);
    wmove(d->win, by, d->focus_yes ? bx + 2 : bx + yes_w + 3);
    touchwin(d->win);
    wnoutrefresh(d->win);
}

/* Moves the focus to yes or no. */
static unsigned focus(struct dialog *d, bool yes)
{
    if (d->focus_yes == yes)
        return WIDGET_HANDLED;
    d->focus_yes = yes;
    d->base.dirty = true;
    return WIDGET_HANDLED | WIDGET_REDRAW;
}

/* Records the answer; the owner closes the dialog on ACTIVATE. */
static unsigned answer(struct dialog *d, bool yes)
{
    d->answer = yes;
    return WIDGET_ACTIVATE | WIDGET_HANDLED;
}

/* ops->key: focus moves, y/n shortcuts, Enter and Esc; see dialog.h. */
static unsigned dialog_key(struct widget *wd, const struct widget_key *k)
{
    struct dialog *d = (struct dialog *)wd;

    if (wd->disabled || k->alt)
        return WIDGET_IGNORED;
    if (k->is_function) {
        switch (k->code) {
        case KEY_LEFT:
            return focus(d, true);
        case KEY_RIGHT:
            return focus(d, false);
        case KEY_BTAB:
            return focus(d, !d->focus_yes);
        case KEY_ENTER:
            return answer(d, d->focus_yes);
        default:
            return WIDGET_IGNORED;
        }
    }
    switch (k->code) {
    case '\t':
        return focus(d, !d->focus_yes);
    case 'y':
    case 'Y':
        return answer(d, true);
    case 'n':
    case 'N':
        return answer(d, false);
    case '\r':
    case '\n':
        return answer(d, d->focus_yes);
    case ESC:
        return answer(d, false) | WIDGET_CANCEL;
    default:
        return WIDGET_IGNORED;
    }
}

/* ops->draw: a modal box centres itself on the screen; the place is ignored. */
static void dialog_widget_draw(struct widget *wd, WINDOW *win, int y, int x, int w, bool focused)
{
    dialog_draw((struct dialog *)wd);
}

/* ops->height: the rows the box takes (it does not flow in a form). */
static int dialog_height(const struct widget *wd, int w)
{
    const struct dialog *d = (const struct dialog *)wd;
    return d->win ? getmaxy(d->win) : 0;
}

static void dialog_destroy(struct widget *wd)
{
    struct dialog *d = (struct dialog *)wd;
    if (d->win)
        delwin(d->win);
    free(d->title);
    free(d->message);
    free(d->lines);
    free(d);
}

static const struct widget_ops dialog_ops = {
    .kind = "dialog",
    .draw = dialog_widget_draw,
    .key = dialog_key,
    .height = dialog_height,
    .destroy = dialog_destroy,
};

struct dialog *dialog_new(const char *title, const char *message, bool default_yes)
{
    struct dialog *d = xcalloc(1, sizeof *d);
    d->base.ops = &dialog_ops;
    d->base.dirty = true;
    d->title = xstrdup(title ? title : "");
    d->message = xstrdup(message ? message : "");
    d->focus_yes = default_yes;
    d->pal = widget_palette_mono();
    return d;
}

void dialog_free(struct dialog *d)
{
    if (d)
        dialog_destroy(&d->base);
}

struct widget *dialog_widget(struct dialog *d)
{
    return &d->base;
}

struct dialog *dialog_from_widget(struct widget *wd)
{
    return wd && wd->ops == &dialog_ops ? (struct dialog *)wd : NULL;
}

bool dialog_answer(const struct dialog *d)
{
    return d->answer;
}

void dialog_set_palette(struct dialog *d, const struct widget_palette *pal)
{
    d->pal = pal ? pal : widget_palette_mono();
    d->base.dirty = true;
}

WINDOW *dialog_window(const struct dialog *d)
{
    return d->win;
}
