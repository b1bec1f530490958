/*
 * hmap: the table of hmap.h — linear probing over a power-of-two array kept
 * at most half full, removal by backward shift (no tombstones, so a table
 * that sees many removals stays as fast as a fresh one), and SipHash-1-3
 * with a key read from getrandom once per process.
 */
#include "util/hmap.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "util/le.h"
#include "util/xalloc.h"

/* ---- SipHash-1-3 (Aumasson & Bernstein), streaming ------------------------ */

struct sip {
    uint64_t v0, v1, v2, v3;
    uint64_t tail; /* bytes not yet a whole word */
    size_t len;    /* bytes taken so far */
};

static uint64_t sip_key[2];
static pthread_once_t sip_keyed = PTHREAD_ONCE_INIT;

static inline uint64_t rotl(uint64_t x, int b)
{
    return (x << b) | (x >> (64 - b));
}

static inline void sip_round(struct sip *s)
{
    s->v0 += s->v1;
    s->v1 = rotl(s->v1, 13);
    s->v1 ^= s->v0;
    s->v0 = rotl(s->v0, 32);
    s->v2 += s->v3;
    s->v3 = rotl(s->v3, 16);
    s->v3 ^= s->v2;
    s->v0 += s->v3;
    s->v3 = rotl(s->v3, 21);
    s->v3 ^= s->v0;
    s->v2 += s->v1;
    s->v1 = rotl(s->v1, 17);
    s->v1 ^= s->v2;
    s->v2 = rotl(s->v2, 32);
}

/* The process's key: random, or (no getrandom) the clock and pid, never a constant. */
static void make_key(void)
{
    if (getrandom(sip_key, sizeof sip_key, GRND_NONBLOCK) != (ssize_t)sizeof sip_key) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        sip_key[0] = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid();
        sip_key[1] = (uint64_t)ts.tv_sec * 0xc2b2ae3d27d4eb4full ^ (uintptr_t)&ts;
    }
}

/*
 * Made once, whichever thread hashes first: two threads making their own
 * would each put items where the other never looks (a Slurm list's reading
 * thread hashes the directory's names while the calling thread hashes).
 */
static const uint64_t *process_key(void)
{
    pthread_once(&sip_keyed, make_key);
    return sip_key;
}

static void sip_init(struct sip *s, const uint64_t key[2])
{
    s->v0 = 0x736f6d6570736575ull ^ key[0];
    s->v1 = 0x646f72616e646f6dull ^ key[1];
    s->v2 = 0x6c7967656e657261ull ^ key[0];
    s->v3 = 0x7465646279746573ull ^ key[1];
    s->tail = 0;
    s->len = 0;
}

static inline void sip_word(struct sip *s, uint64_t m)
{
    s->v3 ^= m;
    sip_round(s);
    s->v0 ^= m;
}

/* One byte into the word being filled. */
static inline void sip_byte(struct sip *s, unsigned char c)
{
    s->tail |= (uint64_t)c << (8 * (s->len & 7));
    if ((++s->len & 7) == 0) {
        sip_word(s, s->tail);
        s->tail = 0;
    }
}

/* Takes len more bytes: a word at a time once a word is begun on a word's boundary. */
static void sip_add(struct sip *s, const void *data, size_t len)
{
    const unsigned char *p = data;
    for (; len > 0 && (s->len & 7) != 0; len--)
        sip_byte(s, *p++);
    for (; len >= 8; p += 8, len -= 8, s->len += 8)
        sip_word(s, le_load64(p)); /* SipHash reads words little-endian */
    for (; len > 0; len--)
        sip_byte(s, *p++);
}

static uint64_t sip_end(struct sip *s)
{
    sip_word(s, s->tail | ((uint64_t)(s->len & 0xff) << 56));
    s->v2 ^= 0xff;
    sip_round(s);
    sip_round(s);
    sip_round(s);
    return s->v0 ^ s->v1 ^ s->v2 ^ s->v3;
}

uint64_t hmap_siphash13(const uint64_t key[2], const void *data, size_t len)
{
    struct sip s;
    sip_init(&s, key);
    sip_add(&s, data, len);
    return sip_end(&s);
}

uint64_t hmap_hash(const void *data, size_t len)
{
    return hmap_siphash13(process_key(), data, len);
}

uint64_t hmap_hash2(const char *a, const char *b)
{
    struct sip s;
    sip_init(&s, process_key());
    size_t la = a ? strlen(a) : 0, lb = b ? strlen(b) : 0;
    uint64_t n = la;
    sip_add(&s, &n, sizeof n); /* ("ab","c") and ("a","bc") differ */
    sip_add(&s, a, la);
    sip_add(&s, b, lb);
    return sip_end(&s);
}

/* ---- the table --------------------------------------------------------------- */

void hmap_free(struct hmap *m)
{
    free(m->slots);
    memset(m, 0, sizeof *m);
}

static void grow(struct hmap *m)
{
    size_t cap = m->cap ? m->cap * 2 : 16;
    struct hmap_slot *old = m->slots;
    size_t old_cap = m->cap;
    m->slots = xcalloc(cap, sizeof *m->slots);
    m->cap = cap;
    for (size_t i = 0; i < old_cap; i++) {
        if (old[i].item == NULL)
            continue;
        size_t at = old[i].hash & (cap - 1);
        while (m->slots[at].item)
            at = (at + 1) & (cap - 1);
        m->slots[at] = old[i];
    }
    free(old);
}

void *hmap_get(const struct hmap *m, uint64_t hash, bool (*eq)(const void *item, const void *key),
               const void *key)
{
    if (m->cap == 0)
        return NULL;
    for (size_t at = hash & (m->cap - 1);; at = (at + 1) & (m->cap - 1)) {
        const struct hmap_slot *s = &m->slots[at];
        if (s->item == NULL)
            return NULL;
        if (s->hash == hash && eq(s->item, key))
            return s->item;
    }
}

void hmap_put(struct hmap *m, uint64_t hash, void *item)
{
    if ((m->count + 1) * 2 > m->cap)
        grow(m);
    size_t at = hash & (m->cap - 1);
    while (m->slots[at].item)
        at = (at + 1) & (m->cap - 1);
    m->slots[at] = (struct hmap_slot){hash, item};
    m->count++;
}

bool hmap_remove(struct hmap *m, uint64_t hash, const void *item)
{
    if (m->cap == 0)
        return false;
    size_t mask = m->cap - 1, at = hash & mask;
    while (m->slots[at].item != item) {
        if (m->slots[at].item == NULL)
            return false;
        at = (at + 1) & mask;
    }
    /* Backward shift: pull later entries of the run into the hole when their home allows. */
    size_t hole = at;
    for (size_t next = (hole + 1) & mask; m->slots[next].item; next = (next + 1) & mask) {
        size_t home = m->slots[next].hash & mask;
        /* Movable unless home lies cyclically in (hole, next]. */
        bool stays = hole <= next ? (home > hole && home <= next) : (home > hole || home <= next);
        if (stays)
            continue;
        m->slots[hole] = m->slots[next];
        hole = next;
    }
    m->slots[hole] = (struct hmap_slot){0, NULL};
    m->count--;
    return true;
}
