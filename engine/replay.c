/*
 * replay: signatures in a hash index by (key, signature) (util/hmap, keyed
 * SipHash), each also on its key's list in the order it came; see replay.h.
 * Dates are roughly in order, so each check drops the expired entries at the
 * head of its key's list; a full key's list is swept whole at most once a
 * second (an attacker at the limit costs O(1) a request, not O(per_key)).
 */
#include "engine/replay.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/hmap.h"
#include "util/xalloc.h"

struct key_share;

struct entry {
    struct key_share *ks;
    struct entry *prev, *next; /* on ks's list, oldest first */
    uint64_t hash;
    time_t until;
    char sig[]; /* NUL-terminated */
};

struct key_share {
    char *key;
    size_t count;
    struct entry *head, *tail;
    time_t swept;    /* when the whole list was last swept (full) */
    time_t frees_at; /* the earliest `until` that sweep found */
};

struct replay {
    struct hmap entries; /* by (key, signature) */
    struct hmap keys;    /* key_share by key */
    struct key_share **all;
    size_t key_count;
    size_t per_key, count;
};

struct replay *replay_new(size_t per_key)
{
    struct replay *r = xcalloc(1, sizeof *r);
    r->entries = (struct hmap)HMAP_INIT;
    r->keys = (struct hmap)HMAP_INIT;
    r->per_key = per_key ? per_key : 1;
    return r;
}

void replay_free(struct replay *r)
{
    if (r == NULL)
        return;
    for (size_t i = 0; i < r->key_count; i++) {
        for (struct entry *e = r->all[i]->head, *next; e; e = next) {
            next = e->next;
            free(e);
        }
        free(r->all[i]->key);
        free(r->all[i]);
    }
    free(r->all);
    hmap_free(&r->entries);
    hmap_free(&r->keys);
    free(r);
}

static bool same_key(const void *item, const void *key)
{
    return strcmp(((const struct key_share *)item)->key, key) == 0;
}

static struct key_share *find_key(const struct replay *r, const char *key)
{
    return hmap_get(&r->keys, hmap_hash(key, strlen(key)), same_key, key);
}

static struct key_share *key_of(struct replay *r, const char *key)
{
    struct key_share *ks = find_key(r, key);
    if (ks)
        return ks;
    ks = xcalloc(1, sizeof *ks);
    ks->key = xstrdup(key);
    r->all = xreallocarray(r->all, r->key_count + 1, sizeof *r->all);
    r->all[r->key_count++] = ks;
    hmap_put(&r->keys, hmap_hash(key, strlen(key)), ks);
    return ks;
}

struct lookup {
    const struct key_share *ks;
    const char *sig;
};

static bool same_entry(const void *item, const void *key)
{
    const struct entry *e = item;
    const struct lookup *l = key;
    return e->ks == l->ks && strcmp(e->sig, l->sig) == 0;
}

static void drop(struct replay *r, struct entry *e)
{
    struct key_share *ks = e->ks;
    hmap_remove(&r->entries, e->hash, e);
    if (e->prev)
        e->prev->next = e->next;
    else
        ks->head = e->next;
    if (e->next)
        e->next->prev = e->prev;
    else
        ks->tail = e->prev;
    ks->count--;
    r->count--;
    free(e);
}

/* Drops every expired entry of ks and notes when the next one will go. */
static void sweep_key(struct replay *r, struct key_share *ks, time_t now)
{
    ks->swept = now;
    ks->frees_at = 0;
    for (struct entry *e = ks->head, *next; e; e = next) {
        next = e->next;
        if (e->until < now)
            drop(r, e);
        else if (ks->frees_at == 0 || e->until < ks->frees_at)
            ks->frees_at = e->until;
    }
}

enum replay_result replay_check(struct replay *r, const char *key, const char *signature,
                                time_t until, time_t now)
{
    struct key_share *ks = key_of(r, key);
    while (ks->head && ks->head->until < now)
        drop(r, ks->head);
    uint64_t h = hmap_hash2(key, signature);
    struct lookup l = {ks, signature};
    struct entry *e = hmap_get(&r->entries, h, same_entry, &l);
    if (e && e->until >= now)
        return REPLAY_SEEN;
    if (e)
        drop(r, e);
    if (ks->count >= r->per_key && ks->swept != now)
        sweep_key(r, ks, now);
    if (ks->count >= r->per_key)
        return REPLAY_FULL;
    size_t len = strlen(signature);
    e = xcalloc(1, sizeof *e + len + 1);
    memcpy(e->sig, signature, len + 1);
    e->ks = ks;
    e->hash = h;
    e->until = until;
    e->prev = ks->tail;
    if (ks->tail)
        ks->tail->next = e;
    else
        ks->head = e;
    ks->tail = e;
    ks->count++;
    r->count++;
    hmap_put(&r->entries, h, e);
    return REPLAY_NEW;
}

size_t replay_count(const struct replay *r)
{
    return r->count;
}

size_t replay_key_count(const struct replay *r, const char *key)
{
    const struct key_share *ks = find_key(r, key);
    return ks ? ks->count : 0;
}

size_t replay_per_key(const struct replay *r)
{
    return r->per_key;
}

time_t replay_key_frees_at(const struct replay *r, const char *key)
{
    const struct key_share *ks = find_key(r, key);
    return ks && ks->count >= r->per_key ? ks->frees_at : 0;
}
