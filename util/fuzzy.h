/*
 * fuzzy: "did you mean …?" for unknown field names and enum values.
 */
#ifndef UTIL_FUZZY_H
#define UTIL_FUZZY_H

#include <stddef.h>

/* Optimal string alignment distance (Damerau-Levenshtein with adjacent swaps), case-insensitive. */
size_t fuzzy_distance(const char *a, const char *b);
/*
 * The candidate closest to word, or NULL when none is close enough to be a
 * plausible typo (distance at most a third of the word, at least 2 allowed).
 */
const char *fuzzy_nearest(const char *word, const char *const *candidates, size_t n);

#endif
