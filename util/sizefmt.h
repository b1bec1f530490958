/*
 * sizefmt: byte counts for people ("1000 MiB", "1.5 GiB", "64 bytes"), in
 * the largest binary unit the amount reaches, never in exponent form.
 */
#ifndef UTIL_SIZEFMT_H
#define UTIL_SIZEFMT_H

#include <stdint.h>

#include "util/strbuf.h"

/* Room every size text needs ("1023 bytes", "16 EiB"). */
#define SIZEFMT_SIZE 24

/*
 * Up to three significant digits: "1.5 GiB", "12 MiB", "1000 MiB" (a value
 * that rounds up to 1024 of a unit is said in the next one: "1 GiB").
 */
void sizefmt_add(struct strbuf *out, uint64_t bytes);
/* Whole units, rounded to nearest ("3 MiB"), for amounts that are estimates. */
void sizefmt_add_whole(struct strbuf *out, uint64_t bytes);
/* sizefmt_add's text in buf (SIZEFMT_SIZE bytes); returns buf. */
const char *sizefmt(char buf[SIZEFMT_SIZE], uint64_t bytes);
/* Mebibytes (the unit memory is counted in by specs) as sizefmt_add says them. */
void sizefmt_add_mib(struct strbuf *out, long long mib);

#endif
