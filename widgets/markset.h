/*
 * markset: a set of 64-bit keys (the table's marks). Zeroed is empty; see
 * markset.c.
 */
#ifndef WIDGETS_MARKSET_H
#define WIDGETS_MARKSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct markset {
    uint64_t *key;
    unsigned char *used;
    size_t cap, n; /* n keys in cap slots */
};

bool markset_has(const struct markset *m, uint64_t key);
/* Adds key (no-op when present). */
void markset_add(struct markset *m, uint64_t key);
/* Removes key (no-op when absent). */
void markset_del(struct markset *m, uint64_t key);
void markset_free(struct markset *m);

#endif
