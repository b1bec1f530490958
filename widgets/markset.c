/*
 * markset: a set of 64-bit keys — the table's marked rows, by row key
 * (widgets/table.c). Open addressing with linear probing in a power-of-two
 * array kept at most half full; deleting shifts back the keys that probed
 * past the hole (no tombstones), so lookups stay short however many marks
 * come and go.
 */
#include "widgets/markset.h"

#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

static size_t mark_hash(uint64_t key, size_t cap)
{
    return (size_t)((key * 0x9E3779B97F4A7C15ull) >> 17) & (cap - 1);
}

/* The slot holding key, or the empty slot where it would go. */
static size_t mark_slot(const struct markset *m, uint64_t key)
{
    size_t i = mark_hash(key, m->cap);
    while (m->used[i] && m->key[i] != key)
        i = (i + 1) & (m->cap - 1);
    return i;
}

/* Whether key is in the set. */
bool markset_has(const struct markset *m, uint64_t key)
{
    return m->n > 0 && m->used[mark_slot(m, key)];
}

/* Doubles the capacity (16 at first) and puts every key back. */
static void markset_grow(struct markset *m)
{
    struct markset old = *m;
    m->cap = old.cap ? old.cap * 2 : 16;
    m->key = xreallocarray(NULL, m->cap, sizeof *m->key);
    m->used = xcalloc(m->cap, 1);
    m->n = 0;
    for (size_t i = 0; i < old.cap; i++)
        if (old.used[i])
            markset_add(m, old.key[i]);
    free(old.key);
    free(old.used);
}

/* Adds key (no-op when present), growing the set past half full. */
void markset_add(struct markset *m, uint64_t key)
{
    if ((m->n + 1) * 2 > m->cap)
        markset_grow(m);
    size_t i = mark_slot(m, key);
    if (!m->used[i]) {
        m->used[i] = 1;
        m->key[i] = key;
        m->n++;
    }
}

/* Removes key, shifting back the keys after it that probed past its slot. */
void markset_del(struct markset *m, uint64_t key)
{
    if (m->n == 0)
        return;
    size_t i = mark_slot(m, key), mask = m->cap - 1;
    if (!m->used[i])
        return;
    m->used[i] = 0;
    m->n--;
    for (size_t j = (i + 1) & mask; m->used[j]; j = (j + 1) & mask) {
        size_t home = mark_hash(m->key[j], m->cap);
        /* j's key may move to the hole at i unless its home lies in (i, j]. */
        if (((j - home) & mask) >= ((j - i) & mask)) {
            m->key[i] = m->key[j];
            m->used[i] = 1;
            m->used[j] = 0;
            i = j;
        }
    }
}

/* Empties the set and frees its memory. */
void markset_free(struct markset *m)
{
    free(m->key);
    free(m->used);
    memset(m, 0, sizeof *m);
}
