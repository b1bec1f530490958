/*
 * finding: an append-only list of findings; see finding.h.
 */
#include "api/finding.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

static struct finding *add(struct findings *fs, enum severity sev, const char *path,
                           const char *fmt, va_list ap)
{
    if (fs->count == fs->cap) {
        fs->cap = fs->cap ? fs->cap * 2 : 8;
        fs->items = xreallocarray(fs->items, fs->cap, sizeof *fs->items);
    }
    struct finding *f = &fs->items[fs->count++];
    f->severity = sev;
    f->path = xstrdup(path ? path : "");
    f->message = xvasprintf(fmt, ap);
    f->line = f->col = 0;
    f->offset = FINDING_AT_VALUE;
    return f;
}

void findings_add(struct findings *fs, enum severity sev, const char *path, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    add(fs, sev, path, fmt, ap);
    va_end(ap);
}

void findings_add_at(struct findings *fs, enum severity sev, const char *path, int offset,
                     const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    add(fs, sev, path, fmt, ap)->offset = offset;
    va_end(ap);
}

void findings_add_pos(struct findings *fs, enum severity sev, const char *path, int line, int col,
                      const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    struct finding *f = add(fs, sev, path, fmt, ap);
    va_end(ap);
    f->line = line;
    f->col = col;
}

size_t findings_count(const struct findings *fs, enum severity sev)
{
    size_t n = 0;
    for (size_t i = 0; i < fs->count; i++)
        n += fs->items[i].severity == sev;
    return n;
}

int findings_has_error_under(const struct findings *fs, const char *path)
{
    size_t len = strlen(path);
    for (size_t i = 0; i < fs->count; i++) {
        const struct finding *f = &fs->items[i];
        if (f->severity != SEVERITY_ERROR || strncmp(f->path, path, len) != 0)
            continue;
        char next = f->path[len];
        if (len == 0 || next == '\0' || next == '.' || next == '[')
            return 1;
    }
    return 0;
}

void findings_move(struct findings *dst, struct findings *src)
{
    for (size_t i = 0; i < src->count; i++) {
        if (dst->count == dst->cap) {
            dst->cap = dst->cap ? dst->cap * 2 : 8;
            dst->items = xreallocarray(dst->items, dst->cap, sizeof *dst->items);
        }
        dst->items[dst->count++] = src->items[i];
    }
    free(src->items);
    src->items = NULL;
    src->count = src->cap = 0;
}

static int before(const struct finding *a, const struct finding *b)
{
    /* Findings without a position keep their place after positioned ones. */
    int la = a->line ? a->line : 1 << 30, lb = b->line ? b->line : 1 << 30;
    if (la != lb)
        return la < lb;
    return a->col < b->col;
}

void findings_sort(struct findings *fs)
{
    /* Insertion sort: stable, and lists are short. */
    for (size_t i = 1; i < fs->count; i++) {
        struct finding f = fs->items[i];
        size_t j = i;
        while (j > 0 && before(&f, &fs->items[j - 1])) {
            fs->items[j] = fs->items[j - 1];
            j--;
        }
        fs->items[j] = f;
    }
}

void findings_clear(struct findings *fs)
{
    for (size_t i = 0; i < fs->count; i++) {
        free(fs->items[i].path);
        free(fs->items[i].message);
    }
    fs->count = 0;
}

void findings_free(struct findings *fs)
{
    findings_clear(fs);
    free(fs->items);
    fs->items = NULL;
    fs->cap = 0;
}

const char *severity_name(enum severity sev)
{
    return sev == SEVERITY_ERROR ? "error" : "warning";
}
