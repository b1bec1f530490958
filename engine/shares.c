/*
 * shares: per-user counters in a hash index by user name (util/hmap, keyed
 * SipHash, so chosen names cannot collide); see shares.h.
 */
#include "engine/shares.h"

#include <stdlib.h>
#include <string.h>

#include "util/hmap.h"
#include "util/xalloc.h"

struct share {
    char *user;
    size_t used[SHARE_KINDS];
};

struct shares {
    struct hmap by_user;
    struct share **all;
    size_t count;
};

struct shares *shares_new(void)
{
    struct shares *t = xcalloc(1, sizeof *t);
    t->by_user = (struct hmap)HMAP_INIT;
    return t;
}

void shares_free(struct shares *t)
{
    if (t == NULL)
        return;
    for (size_t i = 0; i < t->count; i++) {
        free(t->all[i]->user);
        free(t->all[i]);
    }
    free(t->all);
    hmap_free(&t->by_user);
    free(t);
}

static bool same_user(const void *item, const void *key)
{
    return strcmp(((const struct share *)item)->user, key) == 0;
}

struct share *shares_of(struct shares *t, const char *user)
{
    uint64_t h = hmap_hash(user, strlen(user));
    struct share *sh = hmap_get(&t->by_user, h, same_user, user);
    if (sh)
        return sh;
    sh = xcalloc(1, sizeof *sh);
    sh->user = xstrdup(user);
    t->all = xreallocarray(t->all, t->count + 1, sizeof *t->all);
    t->all[t->count++] = sh;
    hmap_put(&t->by_user, h, sh);
    return sh;
}

size_t shares_count(const struct shares *t)
{
    return t->count;
}

const char *share_user(const struct share *sh)
{
    return sh ? sh->user : "";
}

bool share_take(struct share *sh, enum share_kind kind, size_t n, size_t limit)
{
    if (sh == NULL)
        return true;
    if (sh->used[kind] > limit || n > limit - sh->used[kind])
        return false;
    sh->used[kind] += n;
    return true;
}

void share_give(struct share *sh, enum share_kind kind, size_t n)
{
    if (sh == NULL)
        return;
    sh->used[kind] = n > sh->used[kind] ? 0 : sh->used[kind] - n;
}

size_t share_used(const struct share *sh, enum share_kind kind)
{
    return sh ? sh->used[kind] : 0;
}
