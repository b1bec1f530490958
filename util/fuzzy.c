/*
 * fuzzy: edit distance on short identifiers. Inputs longer than 64 bytes are
 * never typos of our field names, so they are cut there to bound the work.
 */
#include "util/fuzzy.h"

#include <ctype.h>
#include <string.h>

#define FUZZY_MAX 64

size_t fuzzy_distance(const char *a, const char *b)
{
    size_t n = strnlen(a, FUZZY_MAX), m = strnlen(b, FUZZY_MAX);
    size_t d[FUZZY_MAX + 1][FUZZY_MAX + 1];

    for (size_t i = 0; i <= n; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= m; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= n; i++) {
        for (size_t j = 1; j <= m; j++) {
            int ca = tolower((unsigned char)a[i - 1]), cb = tolower((unsigned char)b[j - 1]);
            size_t cost = ca != cb;
            size_t best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best)
                best = d[i][j - 1] + 1;
            if (d[i - 1][j - 1] + cost < best)
                best = d[i - 1][j - 1] + cost;
            if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) &&
                tolower((unsigned char)a[i - 2]) == cb && d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    }
    return d[n][m];
}

const char *fuzzy_nearest(const char *word, const char *const *candidates, size_t n)
{
    size_t len = strnlen(word, FUZZY_MAX + 1);
    if (len > FUZZY_MAX)
        return NULL;
    /* Short words allow one edit, longer ones a third of their length. */
    size_t limit = len <= 3 ? 1 : (len / 3 > 2 ? len / 3 : 2);
    const char *best = NULL;
    size_t best_d = limit + 1;
    for (size_t i = 0; i < n; i++) {
        size_t d = fuzzy_distance(word, candidates[i]);
        if (d < best_d) {
            best_d = d;
            best = candidates[i];
        }
    }
    return best;
}
