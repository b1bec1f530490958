/*
 * numfmt: doubles as the fewest decimal digits that read back as the same
 * value, without a printf/strtod round trip for the values training logs
 * hold.
 *
 * The text is what "%.*g" prints at the smallest precision P that reads
 * back (strtod, then a cast to float when the value is a float), with P
 * at least 6 for a value that is exactly a float and 15 otherwise: 0.1f
 * prints as 0.1, 1e6 as 1e+06, 1e-5 as 1e-05, 1/3.0 as
 * 0.3333333333333333. -0 prints as -0; not finite: nan, inf, -inf (as %g).
 *
 * Most values are found with double arithmetic checked exactly (a decimal
 * of at most 15 digits times a power of ten up to 1e22 is read back
 * correctly rounded by one multiplication or division); a value outside
 * that (subnormals, huge or tiny exponents, doubles needing 16 or 17
 * digits, a scaled value too close to a rounding tie) goes the slow way
 * through snprintf and strtod, which gives the same text.
 */
#ifndef UTIL_NUMFMT_H
#define UTIL_NUMFMT_H

#include <stddef.h>

#include "util/strbuf.h"

/* Room numfmt_shortest needs (and "-1.2345678901234567e-308" fits). */
#define NUMFMT_SIZE 32

/* Writes v into buf (NUMFMT_SIZE bytes, NUL-terminated); returns the length. */
size_t numfmt_shortest(char buf[NUMFMT_SIZE], double v);
/* The same text appended to out. */
void numfmt_add(struct strbuf *out, double v);
/* Appends v in decimal ("-12"), as "%lld" prints it. */
void numfmt_add_int(struct strbuf *out, long long v);
/* The way the fast path would not take: snprintf/strtod (for tests and the fallback). */
size_t numfmt_shortest_slow(char buf[NUMFMT_SIZE], double v);

#endif
