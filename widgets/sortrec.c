/*
 * sortrec: the table's sort (widgets/table.c), apart from the table — a
 * cell read as a number (decimal, percentage or duration), the 16-byte
 * records a sort moves (an ordered number, or the folded text's 8-byte
 * prefix and its offset in an arena), and a stable merge sort over them
 * with the compare inlined, so a compare touches the arena only when two
 * prefixes are equal.
 */
#include "widgets/sortrec.h"

#include <string.h>

/* Digits at s[*i..n) as a number; false when there are none. */
static bool parse_digits(const char *s, size_t n, size_t *i, double *v)
{
    size_t start = *i;
    for (; *i < n && s[*i] >= '0' && s[*i] <= '9'; (*i)++)
        *v = *v * 10 + (s[*i] - '0');
    return *i > start;
}

/* Seconds in a duration unit (0: not a unit). */
static double duration_unit(char c)
{
    switch (c) {
    case 's':
        return 1;
    case 'm':
        return 60;
    case 'h':
        return 3600;
    case 'd':
        return 86400;
    case 'w':
        return 7 * 86400.0;
    case 'y':
        return 365 * 86400.0;
    default:
        return 0;
    }
}

/*
 * The cell as a number: a decimal with an optional sign, fraction and '%',
 * or a duration of whole-number groups with units s m h d w y, in seconds.
 * Surrounding spaces are allowed.
 */
bool sortrec_parse_number(const char *s, size_t n, double *out)
{
    while (n > 0 && s[n - 1] == ' ')
        n--;
    size_t i = 0;
    while (i < n && s[i] == ' ')
        i++;
    double sign = 1, v = 0;
    bool signed_ = false;
    if (i < n && (s[i] == '-' || s[i] == '+')) {
        sign = s[i] == '-' ? -1 : 1;
        signed_ = true;
        i++;
    }
    bool digits = parse_digits(s, n, &i, &v);
    if (i < n && s[i] == '.') {
        double scale = 0.1;
        i++;
        for (; i < n && s[i] >= '0' && s[i] <= '9'; i++, scale /= 10) {
            v += (s[i] - '0') * scale;
            digits = true;
        }
        if (!digits)
            return false;
        if (i < n && s[i] == '%')
            i++;
        *out = sign * v;
        return i == n;
    }
    if (!digits)
        return false;
    if (i == n || (s[i] == '%' && i + 1 == n)) {
        *out = sign * v;
        return true;
    }
    if (signed_)
        return false;
    double total = 0;
    for (;;) {
        double unit = i < n ? duration_unit(s[i]) : 0;
        if (unit == 0)
            return false;
        total += v * unit;
        if (++i == n)
            break;
        v = 0;
        if (!parse_digits(s, n, &i, &v))
            return false;
    }
    *out = total;
    return true;
}

static int sign_of(int r)
{
    return (r > 0) - (r < 0);
}

/*
 * Orders two records: numbers before text, then by key; equal keys by the
 * owner's compare or by the folded text — read from the arena only when
 * the prefixes are longer than 7 bytes (a shorter text ends inside its
 * prefix). Ties by row, the owner's order, in both directions.
 */
static inline int rec_cmp(const struct sortrec_ctx *c, const struct sortrec *a,
                          const struct sortrec *b)
{
    int r;
    if ((a->text == 0) != (b->text == 0))
        r = a->text == 0 ? -1 : 1;
    else if (a->key != b->key)
        r = a->key < b->key ? -1 : 1;
    else if (c->owner_cmp)
        r = sign_of(c->owner_cmp(c->owner_ctx, a->row, b->row, c->col));
    else if (a->text == 0 || (a->key & 0xff) == 0)
        r = 0;
    else
        r = sign_of(strcmp(c->arena + a->text - 1 + 8, c->arena + b->text - 1 + 8));
    if (r == 0)
        return (a->row > b->row) - (a->row < b->row);
    return c->desc ? -r : r;
}

enum { RUN = 16 }; /* runs sorted by insertion before merging */

/* Sorts a[0..n) by rec_cmp: insertion-sorted runs, then bottom-up merges through tmp. */
void sortrec_sort(const struct sortrec_ctx *c, struct sortrec *a, struct sortrec *tmp, size_t n)
{
    for (size_t lo = 0; lo < n; lo += RUN) {
        size_t hi = lo + RUN < n ? lo + RUN : n;
        for (size_t i = lo + 1; i < hi; i++) {
            struct sortrec v = a[i];
            size_t j = i;
            for (; j > lo && rec_cmp(c, &v, &a[j - 1]) < 0; j--)
                a[j] = a[j - 1];
            a[j] = v;
        }
    }
    struct sortrec *src = a, *dst = tmp;
    for (size_t width = RUN; width < n; width *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * width) {
            size_t mid = lo + width < n ? lo + width : n;
            size_t hi = lo + 2 * width < n ? lo + 2 * width : n;
            size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                dst[k++] = rec_cmp(c, &src[j], &src[i]) < 0 ? src[j++] : src[i++];
            memcpy(dst + k, src + i, (mid - i) * sizeof *src);
            k += mid - i;
            memcpy(dst + k, src + j, (hi - j) * sizeof *src);
        }
        struct sortrec *swap = src;
        src = dst;
        dst = swap;
    }
    if (src != a)
        memcpy(a, src, n * sizeof *a);
}

/* The bits of v as an unsigned number that orders as v does (-0 as 0). */
uint64_t sortrec_number_key(double v)
{
    uint64_t bits;
    if (v == 0)
        v = 0;
    memcpy(&bits, &v, sizeof bits);
    return bits >> 63 ? ~bits : bits | 1ull << 63;
}
