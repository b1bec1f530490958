/*
 * toggle: the on/off widget (see toggle.h). It owns its value and a copy of
 * its label; the owner (a form) sends it keys and draws it when dirty.
 */
#include "widgets/toggle.h"

#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

struct toggle {
    struct widget base; /* first: a toggle is a widget */
    bool on;
    char *label; /* NULL: none */
};

static const struct widget_ops toggle_ops;

/* ops->key: Space and Enter flip the value. */
static unsigned toggle_key(struct widget *wd, const struct widget_key *k)
{
    struct toggle *tg = (struct toggle *)wd;
    bool flip = k->is_function ? k->code == KEY_ENTER
                               : k->code == ' ' || k->code == '\r' || k->code == '\n';

    if (wd->disabled || k->alt || !flip)
        return WIDGET_IGNORED;
    tg->on = !tg->on;
    wd->dirty = true;
    return WIDGET_CHANGED | WIDGET_HANDLED | WIDGET_REDRAW;
}

/* ops->draw: the box, a space and as much of the label as fits, blanks to w. */
static void toggle_draw(struct widget *wd, WINDOW *win, int y, int x, int w, bool focused)
{
    struct toggle *tg = (struct toggle *)wd;
    const char box[] = {'[', tg->on ? 'x' : ' ', ']', '\0'};
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
    widget_put_text(win, y, x, box, w);
    if (tg->label && w > 4)
        widget_put_text(win, y, x + 4, tg->label, w - 4);
    wattr_set(win, attrs, pair, NULL);
    if (focused)
        wmove(win, y, x + (w > 1 ? 1 : 0));
}

static int toggle_height(const struct widget *wd, int w)
{
    return 1;
}

static void toggle_destroy(struct widget *wd)
{
    struct toggle *tg = (struct toggle *)wd;
    free(tg->label);
    free(tg);
}

static const struct widget_ops toggle_ops = {
    .kind = "toggle",
    .draw = toggle_draw,
    .key = toggle_key,
    .height = toggle_height,
    .destroy = toggle_destroy,
};

struct toggle *toggle_new(const char *label, bool on)
{
    struct toggle *tg = xcalloc(1, sizeof *tg);
    tg->base.ops = &toggle_ops;
    tg->base.dirty = true;
    tg->on = on;
    toggle_set_label(tg, label);
    return tg;
}

void toggle_free(struct toggle *tg)
{
    if (tg)
        toggle_destroy(&tg->base);
}

struct widget *toggle_widget(struct toggle *tg)
{
    return &tg->base;
}

struct toggle *toggle_from_widget(struct widget *wd)
{
    return wd && wd->ops == &toggle_ops ? (struct toggle *)wd : NULL;
}

bool toggle_on(const struct toggle *tg)
{
    return tg->on;
}

void toggle_set(struct toggle *tg, bool on)
{
    if (tg->on != on)
        tg->base.dirty = true;
    tg->on = on;
}

void toggle_set_label(struct toggle *tg, const char *label)
{
    free(tg->label);
    tg->label = label && *label ? xstrdup(label) : NULL;
    tg->base.dirty = true;
}
