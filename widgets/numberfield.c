/*
 * numberfield: the integer field widget (see numberfield.h).
 *
 * The field owns its text (ASCII: an optional '-' and digits, at most
 * NUMBERFIELD_MAX_TEXT characters), the range and the suffix. The text is
 * the state: the value is parsed from it when asked, so whatever the person
 * typed stays on screen until they change it. Edits happen at the end of
 * the text; there is no cursor to move.
 */
#include "widgets/numberfield.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

struct numberfield {
    struct widget base; /* first: a number field is a widget */
    long min, max;
    char text[NUMBERFIELD_MAX_TEXT + 1];
    size_t len;
    char *suffix; /* NULL: none */
};

enum {
    CTRL_H = 8,
    CTRL_U = 21,
    ASCII_DEL = 127,
    PAGE_STEP = 10,
};

static const struct widget_ops numberfield_ops;

/* a + b without overflow: saturates at the ends of long. */
static long add_sat(long a, long b)
{
    if (b > 0 && a > LONG_MAX - b)
        return LONG_MAX;
    if (b < 0 && a < LONG_MIN - b)
        return LONG_MIN;
    return a + b;
}

static long clamp(const struct numberfield *nf, long v)
{
    return v < nf->min ? nf->min : v > nf->max ? nf->max : v;
}

/* Parses the text: an optional '-' and at least one digit, fitting a long. */
static bool parse(const struct numberfield *nf, long *out)
{
    const char *p = nf->text;
    if (*p == '-')
        p++;
    if (*p == '\0')
        return false;
    for (const char *q = p; *q; q++)
        if (*q < '0' || *q > '9')
            return false;
    errno = 0;
    char *end;
    long v = strtol(nf->text, &end, 10);
    if (errno == ERANGE || *end != '\0')
        return false;
    *out = v;
    return true;
}

/* Replaces the text with the decimal form of v. */
static void set_text(struct numberfield *nf, long v)
{
    int n = snprintf(nf->text, sizeof nf->text, "%ld", v);
    nf->len = n < 0 ? 0 : (size_t)n;
}

/* Marks the field for drawing after an edit. */
static unsigned changed(struct numberfield *nf)
{
    nf->base.dirty = true;
    return WIDGET_CHANGED | WIDGET_HANDLED | WIDGET_REDRAW;
}

/* Steps by delta from the number the text spells (else from 0), clamped. */
static unsigned step(struct numberfield *nf, long delta)
{
    long v = 0;
    parse(nf, &v);
    v = clamp(nf, add_sat(v, delta));

    char before[sizeof nf->text];
    memcpy(before, nf->text, sizeof before);
    set_text(nf, v);
    if (strcmp(before, nf->text) == 0)
        return WIDGET_HANDLED;
    return changed(nf);
}

/* Appends a digit; a lone zero ("0", "-0") gives way to it. */
static unsigned add_digit(struct numberfield *nf, char d)
{
    if (strcmp(nf->text, "0") == 0 || strcmp(nf->text, "-0") == 0)
        nf->len--;
    else if (nf->len >= NUMBERFIELD_MAX_TEXT)
        return WIDGET_HANDLED;
    nf->text[nf->len++] = d;
    nf->text[nf->len] = '\0';
    return changed(nf);
}

/* Removes the last n characters (all of them when n is 0). */
static unsigned remove_end(struct numberfield *nf, size_t n)
{
    if (nf->len == 0)
        return WIDGET_HANDLED;
    nf->len = n == 0 || n > nf->len ? 0 : nf->len - n;
    nf->text[nf->len] = '\0';
    return changed(nf);
}

/* Curses function keys: steps, Backspace, keypad Enter. */
static unsigned key_function(struct numberfield *nf, int code)
{
    switch (code) {
    case KEY_UP:
        return step(nf, 1);
    case KEY_DOWN:
        return step(nf, -1);
    case KEY_PPAGE:
        return step(nf, PAGE_STEP);
    case KEY_NPAGE:
        return step(nf, -PAGE_STEP);
    case KEY_BACKSPACE:
        return remove_end(nf, 1);
    case KEY_ENTER:
        return WIDGET_FOCUS_NEXT | WIDGET_HANDLED;
    default:
        return WIDGET_IGNORED;
    }
}

/* ops->key: digits, sign, steps and the two deletions; see numberfield.h. */
static unsigned numberfield_key(struct widget *wd, const struct widget_key *k)
{
    struct numberfield *nf = (struct numberfield *)wd;

    if (wd->disabled || k->alt)
        return WIDGET_IGNORED;
    if (k->is_function)
        return key_function(nf, k->code);
    if (k->code >= '0' && k->code <= '9')
        return add_digit(nf, (char)k->code);
    switch (k->code) {
    case '-':
        if (nf->min < 0 && nf->len == 0) {
            nf->text[nf->len++] = '-';
            nf->text[nf->len] = '\0';
            return changed(nf);
        }
        return step(nf, -1);
    case '+':
        return step(nf, 1);
    case CTRL_H:
    case ASCII_DEL:
        return remove_end(nf, 1);
    case CTRL_U:
        return remove_end(nf, 0);
    case '\r':
    case '\n':
        return WIDGET_FOCUS_NEXT | WIDGET_HANDLED;
    default:
        return WIDGET_IGNORED;
    }
}

/*
 * ops->draw: the number (its last w cells if it is wider), then the suffix
 * dim after a space when any of it fits, blanks to the width.
 */
static void numberfield_draw(struct widget *wd, WINDOW *win, int y, int x, int w, bool focused)
{
    struct numberfield *nf = (struct numberfield *)wd;
    attr_t attrs;
    short pair;

    wd->dirty = false;
    if (w <= 0)
        return;
    wattr_get(win, &attrs, &pair, NULL);
    if (wd->disabled)
        wattr_on(win, A_DIM, NULL);
    for (int c = 0; c < w; c++)
        mvwaddch(win, y, x + c, ' ');

    int tw = (int)nf->len;
    const char *shown = nf->text;
    if (tw > w) {
        shown += tw - w;
        tw = w;
    }
    widget_put_text(win, y, x, shown, tw);
    if (nf->suffix && tw + 1 < w) {
        wattr_on(win, A_DIM, NULL);
        widget_put_text(win, y, x + tw + 1, nf->suffix, w - tw - 1);
    }
    wattr_set(win, attrs, pair, NULL);
    if (focused)
        wmove(win, y, x + (tw < w ? tw : w - 1));
}

static int numberfield_height(const struct widget *wd, int w)
{
    return 1;
}

static void numberfield_destroy(struct widget *wd)
{
    struct numberfield *nf = (struct numberfield *)wd;
    free(nf->suffix);
    free(nf);
}

static const struct widget_ops numberfield_ops = {
    .kind = "numberfield",
    .draw = numberfield_draw,
    .key = numberfield_key,
    .height = numberfield_height,
    .destroy = numberfield_destroy,
};

struct numberfield *numberfield_new(long min, long max, long initial)
{
    struct numberfield *nf = xcalloc(1, sizeof *nf);
    nf->base.ops = &numberfield_ops;
    numberfield_set_range(nf, min, max);
    numberfield_set(nf, initial);
    return nf;
}

void numberfield_free(struct numberfield *nf)
{
    if (nf)
        numberfield_destroy(&nf->base);
}

struct widget *numberfield_widget(struct numberfield *nf)
{
    return &nf->base;
}

struct numberfield *numberfield_from_widget(struct widget *wd)
{
    return wd && wd->ops == &numberfield_ops ? (struct numberfield *)wd : NULL;
}

long numberfield_value(const struct numberfield *nf, bool *ok)
{
    long v = 0;
    bool parsed = parse(nf, &v);
    if (ok)
        *ok = parsed && v >= nf->min && v <= nf->max;
    return parsed ? v : 0;
}

bool numberfield_number(const struct numberfield *nf, long *out)
{
    return parse(nf, out);
}

const char *numberfield_text(const struct numberfield *nf)
{
    return nf->text;
}

void numberfield_set(struct numberfield *nf, long value)
{
    set_text(nf, clamp(nf, value));
    nf->base.dirty = true;
}

void numberfield_set_range(struct numberfield *nf, long min, long max)
{
    nf->min = min <= max ? min : max;
    nf->max = min <= max ? max : min;
    nf->base.dirty = true;
}

void numberfield_range(const struct numberfield *nf, long *min, long *max)
{
    if (min)
        *min = nf->min;
    if (max)
        *max = nf->max;
}

void numberfield_set_suffix(struct numberfield *nf, const char *utf8)
{
    free(nf->suffix);
    nf->suffix = utf8 && *utf8 ? xstrdup(utf8) : NULL;
    nf->base.dirty = true;
}
