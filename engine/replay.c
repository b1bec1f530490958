/*
 * replay: a chained hash set of signatures with an expiry each; see replay.h.
 * Each lookup drops the expired entries of its bucket; a full table is swept
 * whole once before it says REPLAY_FULL.
 */
#include "engine/replay.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

struct entry {
    struct entry *next;
    time_t until;
    char sig[]; /* NUL-terminated */
};

struct replay {
    struct entry **buckets;
    size_t nbuckets;
    size_t count, cap;
};

struct replay *replay_new(size_t cap)
{
    struct replay *r = xcalloc(1, sizeof *r);
    r->cap = cap ? cap : 1;
    r->nbuckets = 1;
    while (r->nbuckets < r->cap / 2 + 1)
        r->nbuckets <<= 1;
    r->buckets = xcalloc(r->nbuckets, sizeof *r->buckets);
    return r;
}

void replay_free(struct replay *r)
{
    if (r == NULL)
        return;
    for (size_t i = 0; i < r->nbuckets; i++)
        for (struct entry *e = r->buckets[i], *next; e; e = next) {
            next = e->next;
            free(e);
        }
    free(r->buckets);
    free(r);
}

/* FNV-1a. */
static size_t hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return (size_t)h;
}

/* Drops the expired entries of one bucket. */
static void sweep(struct replay *r, size_t b, time_t now)
{
    for (struct entry **p = &r->buckets[b]; *p;) {
        if ((*p)->until < now) {
            struct entry *dead = *p;
            *p = dead->next;
            free(dead);
            r->count--;
        } else {
            p = &(*p)->next;
        }
    }
}

enum replay_result replay_check(struct replay *r, const char *signature, time_t until, time_t now)
{
    size_t b = hash(signature) & (r->nbuckets - 1);
    sweep(r, b, now);
    for (struct entry *e = r->buckets[b]; e; e = e->next)
        if (strcmp(e->sig, signature) == 0)
            return REPLAY_SEEN;
    if (r->count >= r->cap)
        for (size_t i = 0; i < r->nbuckets; i++)
            sweep(r, i, now);
    if (r->count >= r->cap)
        return REPLAY_FULL;
    size_t len = strlen(signature);
    struct entry *e = xmalloc(sizeof *e + len + 1);
    memcpy(e->sig, signature, len + 1);
    e->until = until;
    e->next = r->buckets[b];
    r->buckets[b] = e;
    r->count++;
    return REPLAY_NEW;
}

size_t replay_count(const struct replay *r)
{
    return r->count;
}
