/*
 * exitcodes: the fault-tolerance rule's exit-code list (FORM.md grammar).
 *
 *   list  := item ( "," item )*
 *   item  := code | code "-" code        (first <= second)
 *   code  := decimal integer 1 … 255     (no sign, no leading "+")
 *
 * Spaces around items and around "-" are allowed; the whole string is at most
 * 1024 characters. Parsing yields a set of codes 1..255 and, on error, the
 * byte offset of the first error with a message. Formatting is canonical:
 * ascending, any run of two or more consecutive codes joined with "-"
 * ("1,2,3,7" -> "1-3,7", "1,2" -> "1-2"), so that parse(format(set)) == set.
 */
#ifndef API_EXITCODES_H
#define API_EXITCODES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct strbuf;

#define EXITCODES_MAX_LEN 1024

/* Bit c is set when exit code c (1..255) is in the set; bit 0 is never set. */
struct exitcode_set {
    uint64_t bits[4];
};

struct exitcodes_error {
    size_t offset;     /* byte offset of the first error in the input */
    char message[128]; /* e.g. "256 is out of range 1-255" */
};

/*
 * Parses s. Returns 0 and fills set, or -1 and fills err (when not NULL),
 * leaving set untouched. An empty or blank string is an error ("empty list"):
 * callers decide what empty means.
 */
int exitcodes_parse(const char *s, struct exitcode_set *set, struct exitcodes_error *err);
/* Canonical text of set appended to out ("" for an empty set). */
void exitcodes_format(const struct exitcode_set *set, struct strbuf *out);

void exitcodes_clear(struct exitcode_set *set);
/* Codes outside 1..255 are ignored; ranges are clipped to 1..255. */
void exitcodes_add(struct exitcode_set *set, int code);
void exitcodes_add_range(struct exitcode_set *set, int lo, int hi);
bool exitcodes_has(const struct exitcode_set *set, int code);
bool exitcodes_empty(const struct exitcode_set *set);
size_t exitcodes_count(const struct exitcode_set *set);
/* out = a ∩ b */
void exitcodes_intersect(struct exitcode_set *out, const struct exitcode_set *a,
                         const struct exitcode_set *b);
/* out = a ∪ b */
void exitcodes_union(struct exitcode_set *out, const struct exitcode_set *a,
                     const struct exitcode_set *b);
/* Every code 1..255. */
void exitcodes_all(struct exitcode_set *set);

/*
 * The shadowing check between rules, checked in order (first match wins).
 * For each rule i and each earlier rule j, calls fn with the codes of rule i
 * that rule j catches first (codes already caught before j are attributed to
 * the earlier rule), i.e. (rule i ∩ rule j) minus the union of rules 0..j-1;
 * empty overlaps are skipped. `whole` is true, on every call for rule i, when
 * rule i can never match at all (it is a subset of the union of rules 0..i-1).
 * A rule matching any exit code is passed as the full set.
 */
typedef void (*exitcodes_shadow_fn)(void *ctx, size_t rule, size_t earlier,
                                    const struct exitcode_set *overlap, bool whole);
void exitcodes_shadowing(const struct exitcode_set *rules, size_t n, exitcodes_shadow_fn fn,
                         void *ctx);

/*
 * A short meaning of an exit code as a shell reports it (128 + n for a
 * death by signal n): "general error", "killed (SIGKILL/OOM)", "segfault
 * (SIGSEGV)", "killed by signal 2 (SIGINT)" (129 … 159), … or NULL for 0
 * and codes with no common meaning (a program's own, like 201).
 */
const char *exitcode_meaning(int exit_code);

#endif
