/*
 * bump: blocks of BLOCK_BYTES (or one of its own for a larger request), each
 * headed by the link to the one before; filled from the front. The first
 * block outlives a reset: mmap, a page fault and munmap for every small batch
 * cost the engine ~10 µs of a 150 µs create-and-pass.
 */
#include "util/bump.h"

#include <stdalign.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "util/xalloc.h"

/*
 * Under AddressSanitizer, what is not handed out (the rest of a block, all of
 * a kept block after a reset) is poisoned: a pointer kept past its batch
 * reads as a use-after-free, though the block stays mapped.
 */
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define POISON(p, n) ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

#define BLOCK_BYTES (1024 * 1024)
/* What a kept block may hold on to between rounds (a page-size multiple). */
#define KEEP_BYTES (64 * 1024)

struct bump_block {
    struct bump_block *prev;
    size_t size, used; /* used counts from the block's start, this header included */
    alignas(max_align_t) unsigned char data[];
};

static size_t align_up(size_t n)
{
    const size_t a = alignof(max_align_t);
    if (n > SIZE_MAX - a)
        xalloc_die();
    return (n + a - 1) & ~(a - 1);
}

void *bump_alloc(struct bump *b, size_t n)
{
    size_t need = align_up(n ? n : 1);
    struct bump_block *blk = b->head;
    if (blk == NULL || blk->size - blk->used < need) {
        size_t hdr = offsetof(struct bump_block, data);
        size_t size = need > BLOCK_BYTES - hdr ? align_up(hdr + need) : BLOCK_BYTES;
        void *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED)
            xalloc_die();
        blk = m;
        blk->prev = b->head;
        blk->size = size;
        blk->used = hdr;
        b->head = blk;
        b->mapped += size;
        POISON(blk->data, size - hdr);
    }
    void *p = (unsigned char *)blk + blk->used;
    blk->used += need;
    UNPOISON(p, need);
    return p;
}

void *bump_dup(struct bump *b, const void *p, size_t n)
{
    void *copy = bump_alloc(b, n);
    if (n)
        memcpy(copy, p, n);
    return copy;
}

void bump_reset(struct bump *b)
{
    while (b->head && b->head->prev) {
        struct bump_block *prev = b->head->prev;
        b->mapped -= b->head->size;
        UNPOISON(b->head->data, b->head->size - offsetof(struct bump_block, data));
        munmap(b->head, b->head->size);
        b->head = prev;
    }
    struct bump_block *first = b->head;
    if (first == NULL)
        return;
    if (first->size != BLOCK_BYTES) { /* one large request's: not kept */
        bump_free(b);
        return;
    }
    if (first->used > KEEP_BYTES)
        madvise((unsigned char *)first + KEEP_BYTES, first->size - KEEP_BYTES, MADV_DONTNEED);
    first->used = offsetof(struct bump_block, data);
    POISON(first->data, first->size - first->used);
}

void bump_free(struct bump *b)
{
    while (b->head) {
        struct bump_block *prev = b->head->prev;
        UNPOISON(b->head->data, b->head->size - offsetof(struct bump_block, data));
        munmap(b->head, b->head->size);
        b->head = prev;
    }
    b->mapped = 0;
}
