/*
 * docpos: the table from field path to file position; see docpos.h.
 *
 * Owns an array of entries (each with its own copy of the path), filled by
 * the YAML reader (api/yamltree.c) in document order and read by whoever
 * places findings (docpos_locate, called by the file decoders and
 * `trainjob validate`). Documents are small (a job file has a few hundred
 * fields), so look-ups are a linear scan: no index to build or keep in step.
 */
#include "api/docpos.h"

#include <stdlib.h>
#include <string.h>

#include "api/finding.h"
#include "util/xalloc.h"

void docpos_add(struct docpos *pos, const char *path, int key_line, int key_col, int line, int col,
                enum docpos_style style)
{
    if (pos->count == pos->cap) {
        pos->cap = pos->cap ? pos->cap * 2 : 32;
        pos->items = xreallocarray(pos->items, pos->cap, sizeof *pos->items);
    }
    struct docpos_entry *e = &pos->items[pos->count++];
    e->path = xstrdup(path ? path : "");
    e->key_line = key_line;
    e->key_col = key_col;
    e->line = line;
    e->col = col;
    e->style = style;
}

/* The entry whose path is the first n bytes of path, or NULL. */
static const struct docpos_entry *find_prefix(const struct docpos *pos, const char *path, size_t n)
{
    for (size_t i = 0; i < pos->count; i++) {
        const struct docpos_entry *e = &pos->items[i];
        if (strncmp(e->path, path, n) == 0 && e->path[n] == '\0')
            return e;
    }
    return NULL;
}

const struct docpos_entry *docpos_find(const struct docpos *pos, const char *path)
{
    return find_prefix(pos, path, strlen(path));
}

/*
 * Walks up one level at a time: the parent of "a.b[3].c" is "a.b[3]", of
 * "a.b[3]" is "a.b", of "a" is "".
 */
const struct docpos_entry *docpos_nearest(const struct docpos *pos, const char *path)
{
    size_t n = strlen(path);
    for (;;) {
        const struct docpos_entry *e = find_prefix(pos, path, n);
        if (e || n == 0)
            return e;
        while (n > 0 && path[n - 1] != '.' && path[n - 1] != '[')
            n--;
        if (n > 0)
            n--; /* drop the separator itself */
    }
}

/* Where a finding at f->offset inside the value of e stands. */
static void place(const struct docpos_entry *e, struct finding *f)
{
    if (f->offset == FINDING_AT_KEY && e->key_line > 0) {
        f->line = e->key_line;
        f->col = e->key_col;
        return;
    }
    f->line = e->line;
    f->col = e->col;
    if (f->offset < 0)
        return;
    if (e->style == DOCPOS_PLAIN)
        f->col += f->offset;
    else if (e->style == DOCPOS_QUOTED)
        f->col += 1 + f->offset;
}

void docpos_locate(const struct docpos *pos, struct findings *fs)
{
    for (size_t i = 0; i < fs->count; i++) {
        struct finding *f = &fs->items[i];
        if (f->line != 0)
            continue;
        const struct docpos_entry *e = docpos_nearest(pos, f->path);
        if (!e)
            continue;
        if (strcmp(e->path, f->path) == 0) {
            place(e, f);
        } else {
            /* The field is absent: point at the value that should hold it. */
            f->line = e->line;
            f->col = e->col;
        }
    }
}

void docpos_free(struct docpos *pos)
{
    for (size_t i = 0; i < pos->count; i++)
        free(pos->items[i].path);
    free(pos->items);
    pos->items = NULL;
    pos->count = pos->cap = 0;
}
