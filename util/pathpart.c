/*
 * pathpart: see pathpart.h. Called by util/beneath.c, api/validate.c and
 * api/slurm_script.c.
 */
#include "util/pathpart.h"

#include <string.h>

#include "util/strbuf.h"

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

bool path_has_dotdot(const char *p)
{
    const char *part;
    size_t len;
    while ((part = path_next_part(&p, &len)))
        if (path_part_is_dotdot(part, len))
            return true;
    return false;
}

void path_normalise(const char *p, struct strbuf *out)
{
    strbuf_reset(out);
    const char *part;
    size_t len;
    while ((part = path_next_part(&p, &len))) {
        strbuf_addc(out, '/');
        strbuf_add(out, part, len);
    }
    if (out->len == 0)
        strbuf_addc(out, '/');
}

bool path_within(const char *path, const char *base, struct strbuf *rest)
{
    const char *p = path, *b = base;
    const char *pp, *bp;
    size_t pl, bl;
    while ((bp = path_next_part(&b, &bl))) {
        pp = path_next_part(&p, &pl);
        if (pp == NULL || pl != bl || memcmp(pp, bp, bl) != 0)
            return false;
    }
    strbuf_reset(rest);
    while ((pp = path_next_part(&p, &pl))) {
        strbuf_addc(rest, '/');
        strbuf_add(rest, pp, pl);
    }
    return true;
}
