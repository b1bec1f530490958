/*
 * bump: memory handed out in order from blocks mapped for it alone (mmap),
 * and taken back all at once: bump_reset unmaps every block but the first,
 * which it keeps for the next round (its pages past the first 64 KiB given
 * back to the system); bump_free unmaps them all.
 *
 * For what lives exactly as long as one batch of work and would otherwise be
 * spread over the malloc heap among memory that outlives it: once freed,
 * such a region of the heap is only returned where no survivor sits in it.
 * engine/record.c keeps the texts a store batch will show here (issue 14's
 * 50,000-job pass left ~16 MB of the heap pinned).
 *
 * Not thread-safe; each bump is one owner's.
 */
#ifndef UTIL_BUMP_H
#define UTIL_BUMP_H

#include <stddef.h>

struct bump_block;

struct bump {
    struct bump_block *head; /* the block being filled; NULL until the first allocation */
    size_t mapped;           /* bytes of all its blocks, for the benches and tests */
};

#define BUMP_INIT                                                                                  \
    {                                                                                              \
        NULL, 0                                                                                    \
    }

/* n bytes aligned for any object (max_align_t), valid until bump_reset; never NULL. */
void *bump_alloc(struct bump *b, size_t n);
/* A copy of n bytes at p. */
void *bump_dup(struct bump *b, const void *p, size_t n);
/*
 * Everything bump_alloc returned is gone: every block but the first is
 * unmapped, and that one is kept for the next round, so a bump reset after
 * each small batch makes no system call. Of a kept block more than 64 KiB
 * were written to, the pages past those are given back (MADV_DONTNEED).
 */
void bump_reset(struct bump *b);
/* Unmaps every block. */
void bump_free(struct bump *b);

#endif
