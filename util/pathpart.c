/*
 * pathpart: see pathpart.h. Called by util/beneath.c and api/validate.c.
 */
#include "util/pathpart.h"

#include <string.h>

const char *path_next_part(const char **p, size_t *len)
{
    const char *s = *p;
    for (;;) {
        s += strspn(s, "/");
        size_t n = strcspn(s, "/");
        if (n == 0) {
            *p = s;
            return NULL;
        }
        if (!(n == 1 && s[0] == '.')) {
            *p = s + n;
            *len = n;
            return s;
        }
        s += n;
    }
}
