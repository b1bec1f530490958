/*
 * pathpart: the one rule for the components of a '/'-separated path —
 * empty components (repeated or trailing slashes) and "." are no
 * components at all; everything else, ".." included, is one. Callers
 * decide what a ".." means.
 *
 * api/validate.c normalises and checks a job's paths with it, api/slurm_script.c
 * the volumes it binds, and util/beneath.c walks a volume's subdir with it,
 * so what is checked is what is walked.
 */
#ifndef UTIL_PATHPART_H
#define UTIL_PATHPART_H

#include <stdbool.h>
#include <stddef.h>

/*
 * The next component at or after *p: its start, its length in *len, and *p
 * moved just past it; NULL (and *p at the end) when there is none left.
 */
const char *path_next_part(const char **p, size_t *len);

/* Whether a component is "..". */
static inline bool path_part_is_dotdot(const char *part, size_t len)
{
    return len == 2 && part[0] == '.' && part[1] == '.';
}

/* Whether any component of p is "..". */
bool path_has_dotdot(const char *p);

struct strbuf;

/*
 * The canonical absolute form of p into out (reset first): each component
 * after one '/', no empty or "." ones, no trailing '/'; "/" for none.
 */
void path_normalise(const char *p, struct strbuf *out);

/*
 * Whether path is made of base's components and then possibly more (both
 * read by path_next_part's rule); rest gets the more as "/c/d" ("" for none).
 */
bool path_within(const char *path, const char *base, struct strbuf *rest);

#endif
