/*
 * hmap: a hash index of pointers — an open-addressing table of (hash,
 * item) slots, the items owned by the caller and carrying their own keys.
 * The caller hashes a key with hmap_hash / hmap_hash2 and says what equal
 * means (hmap_get's eq); an item is removed by identity. Lookups, inserts
 * and removals cost O(1) on average whatever the keys: the hash is SipHash
 * keyed at random per process, so names chosen by a hostile user cannot be
 * made to collide.
 *
 * Used by trainjobd's job table (by workspace and name, by uid) and by the
 * client's merge of list pages (by uid).
 */
#ifndef UTIL_HMAP_H
#define UTIL_HMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hmap_slot {
    uint64_t hash;
    void *item; /* NULL: empty */
};

struct hmap {
    struct hmap_slot *slots;
    size_t cap; /* a power of two, or 0 */
    size_t count;
};

#define HMAP_INIT                                                                                  \
    {                                                                                              \
        NULL, 0, 0                                                                                 \
    }

void hmap_free(struct hmap *m);

/* The keyed hash of len bytes; of two strings taken as one key (a and b both matter). */
uint64_t hmap_hash(const void *data, size_t len);
uint64_t hmap_hash2(const char *a, const char *b);
/* SipHash-1-3 of len bytes under key (hmap_hash's, with the process's random key). */
uint64_t hmap_siphash13(const uint64_t key[2], const void *data, size_t len);

/* The first item with this hash for which eq(item, key) holds, or NULL. */
void *hmap_get(const struct hmap *m, uint64_t hash, bool (*eq)(const void *item, const void *key),
               const void *key);
/* Adds item (not NULL) under hash; the caller makes sure no equal item is there. */
void hmap_put(struct hmap *m, uint64_t hash, void *item);
/* Removes this very item (found under hash); false when it is not there. */
bool hmap_remove(struct hmap *m, uint64_t hash, const void *item);

#endif
