/*
 * sortrec: the records a table sort moves, and the sort (see sortrec.c).
 */
#ifndef WIDGETS_SORTREC_H
#define WIDGETS_SORTREC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * A view row's sort key, read once per sort; 16 bytes, so the sort moves
 * records, not pointers to them.
 */
struct sortrec {
    uint64_t key; /* a number's bits made to order as unsigned, or the first
                     8 bytes of the folded text, big-endian */
    uint32_t row;
    uint32_t text; /* 0: a number; else 1 + the folded text's offset in the arena */
};

/* How records compare in one sort. */
struct sortrec_ctx {
    const char *arena; /* the folded texts records point into */
    bool desc;
    /* Set: equal keys go to the owner's compare of rows a, b in column col. */
    int (*owner_cmp)(void *ctx, size_t a, size_t b, size_t col);
    void *owner_ctx;
    size_t col;
};

/*
 * The cell as a number: a decimal with an optional sign, fraction and '%',
 * or a duration of whole-number groups with units s m h d w y, in seconds.
 * Surrounding spaces are allowed.
 */
bool sortrec_parse_number(const char *s, size_t n, double *out);
/* The bits of v as an unsigned number that orders as v does (-0 as 0). */
uint64_t sortrec_number_key(double v);
/*
 * Sorts a[0..n) (tmp: room for n more): numbers before text, then by key;
 * equal keys by the owner's compare or the folded text; ties by row.
 */
void sortrec_sort(const struct sortrec_ctx *c, struct sortrec *a, struct sortrec *tmp, size_t n);

#endif
