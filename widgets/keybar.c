/*
 * keybar: the key bar widget (see keybar.h). It owns copies of its pairs
 * and a pointer to the palette; the owner (a screen) draws it on the bottom
 * line when dirty, after a resize, or when the mode changes its pairs.
 */
#include "widgets/keybar.h"

#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

struct pair {
    char *key;
    char *label; /* "" when the key stands alone */
};

struct keybar {
    struct widget base; /* first: a key bar is a widget */
    struct pair *pairs;
    size_t n;
    const struct widget_palette *pal;
};

enum { GAP = 2 }; /* cells between two pairs */

static const struct widget_ops keybar_ops;

/* Cells of pair p: the key, and a space and the label when it has one. */
static int pair_cells(const struct pair *p)
{
    int cells = widget_text_cells(p->key, strlen(p->key));
    if (*p->label)
        cells += 1 + widget_text_cells(p->label, strlen(p->label));
    return cells;
}

size_t keybar_fit(const struct keybar *kb, int w)
{
    int used = 0;
    for (size_t i = 0; i < kb->n; i++) {
        used += (i > 0 ? GAP : 0) + pair_cells(&kb->pairs[i]);
        if (used > w)
            return i;
    }
    return kb->n;
}

static unsigned keybar_key(struct widget *wd, const struct widget_key *k)
{
    return WIDGET_IGNORED;
}

/* ops->draw: the line in `normal`, then the pairs that fit whole. */
static void keybar_draw(struct widget *wd, WINDOW *win, int y, int x, int w, bool focused)
{
    struct keybar *kb = (struct keybar *)wd;
    attr_t attrs;
    short pair;

    wd->dirty = false;
    if (w <= 0)
        return;
    wattr_get(win, &attrs, &pair, NULL);
    widget_set_role(win, kb->pal->normal);
    for (int c = 0; c < w; c++)
        mvwaddch(win, y, x + c, ' ');

    size_t fit = keybar_fit(kb, w);
    int col = 0;
    for (size_t i = 0; i < fit; i++) {
        const struct pair *p = &kb->pairs[i];
        if (i > 0)
            col += GAP;
        widget_set_role(win, kb->pal->key);
        col += widget_put_text(win, y, x + col, p->key, w - col);
        if (*p->label) {
            widget_set_role(win, kb->pal->normal);
            col += 1 + widget_put_text(win, y, x + col + 1, p->label, w - col - 1);
        }
    }
    wattr_set(win, attrs, pair, NULL);
}

static int keybar_height(const struct widget *wd, int w)
{
    return 1;
}

/* Frees the copied pairs. */
static void free_pairs(struct keybar *kb)
{
    for (size_t i = 0; i < kb->n; i++) {
        free(kb->pairs[i].key);
        free(kb->pairs[i].label);
    }
    free(kb->pairs);
    kb->pairs = NULL;
    kb->n = 0;
}

static void keybar_destroy(struct widget *wd)
{
    struct keybar *kb = (struct keybar *)wd;
    free_pairs(kb);
    free(kb);
}

static const struct widget_ops keybar_ops = {
    .kind = "keybar",
    .draw = keybar_draw,
    .key = keybar_key,
    .height = keybar_height,
    .destroy = keybar_destroy,
};

struct keybar *keybar_new(const struct keybar_item *items, size_t n)
{
    struct keybar *kb = xcalloc(1, sizeof *kb);
    kb->base.ops = &keybar_ops;
    kb->pal = widget_palette_mono();
    keybar_set_items(kb, items, n);
    return kb;
}

void keybar_free(struct keybar *kb)
{
    if (kb)
        keybar_destroy(&kb->base);
}

struct widget *keybar_widget(struct keybar *kb)
{
    return &kb->base;
}

struct keybar *keybar_from_widget(struct widget *wd)
{
    return wd && wd->ops == &keybar_ops ? (struct keybar *)wd : NULL;
}

void keybar_set_items(struct keybar *kb, const struct keybar_item *items, size_t n)
{
    free_pairs(kb);
    kb->pairs = n ? xreallocarray(NULL, n, sizeof *kb->pairs) : NULL;
    for (size_t i = 0; i < n; i++) {
        kb->pairs[i].key = xstrdup(items[i].key ? items[i].key : "");
        kb->pairs[i].label = xstrdup(items[i].label ? items[i].label : "");
    }
    kb->n = n;
    kb->base.dirty = true;
}

void keybar_set_palette(struct keybar *kb, const struct widget_palette *pal)
{
    kb->pal = pal ? pal : widget_palette_mono();
    kb->base.dirty = true;
}
