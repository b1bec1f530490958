/*
 * keybar: the bottom line of key/label pairs, "F1 Help  F2 Save  ^S Submit
 * Esc Quit", built from a data array the owner keeps per screen or mode
 * (key bindings are data; the same table can feed the help screen).
 *
 * Keys are drawn in the palette's `key` role, labels and the rest of the
 * line in `normal`. A line too narrow for every pair drops whole pairs from
 * the end: never half a label, never a key without its label. The bar takes
 * no keys (ops->key always answers IGNORED).
 *
 * The palette (keybar_set_palette, widget_palette_mono() until set) is held
 * by pointer: it must outlive the bar, and a theme change made in place in
 * the pointed-to palette shows at the next draw.
 */
#ifndef WIDGETS_KEYBAR_H
#define WIDGETS_KEYBAR_H

#include <stddef.h>

#include "widgets/widget.h"

/* One pair: the key as shown ("F2", "^S", "Esc") and what it does. */
struct keybar_item {
    const char *key;
    const char *label; /* NULL or "": the key alone */
};

struct keybar;

/* A bar showing a copy of items[0..n). Free with keybar_free or ops->destroy. */
struct keybar *keybar_new(const struct keybar_item *items, size_t n);
void keybar_free(struct keybar *kb);

/* The bar as a widget (the first member), and back (NULL if not one). */
struct widget *keybar_widget(struct keybar *kb);
struct keybar *keybar_from_widget(struct widget *wd);

/* Replaces the pairs (a copy is kept); sets dirty. */
void keybar_set_items(struct keybar *kb, const struct keybar_item *items, size_t n);
/* The roles to draw with (NULL: widget_palette_mono()); sets dirty. */
void keybar_set_palette(struct keybar *kb, const struct widget_palette *pal);
/* How many pairs, from the first, fit in w cells. */
size_t keybar_fit(const struct keybar *kb, int w);

#endif
