/*
 * finding: what validation and the file decoders report — an error or a
 * warning about one field, named by its path (`fault_tolerance.rules[2].exit_codes`),
 * with a message a person understands and, when the job came from a file,
 * the line and column.
 */
#ifndef API_FINDING_H
#define API_FINDING_H

#include <stddef.h>

struct docpos;

enum severity {
    SEVERITY_ERROR,
    SEVERITY_WARNING,
};

struct finding {
    enum severity severity;
    char *path;    /* field path; "" for the whole document */
    char *message; /* no trailing period, no field name */
    int line;      /* 1-based; 0 when unknown */
    int col;       /* 1-based; 0 when unknown */
    int offset;    /* byte offset inside the field's value, or FINDING_AT_* */
};

#define FINDING_AT_VALUE (-1) /* the field's value as a whole */
#define FINDING_AT_KEY (-2)   /* the field's key (unknown or duplicate field) */

struct findings {
    struct finding *items;
    size_t count;
    size_t cap;
};

#define FINDINGS_INIT                                                                              \
    {                                                                                              \
        NULL, 0, 0                                                                                 \
    }

void findings_add(struct findings *fs, enum severity sev, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* As findings_add, pointing at byte `offset` inside the field's value. */
void findings_add_at(struct findings *fs, enum severity sev, const char *path, int offset,
                     const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* As findings_add, at a known file position. */
void findings_add_pos(struct findings *fs, enum severity sev, const char *path, int line, int col,
                      const char *fmt, ...) __attribute__((format(printf, 6, 7)));
size_t findings_count(const struct findings *fs, enum severity sev);
/* True when some error finding's path is path or lies under it. */
int findings_has_error_under(const struct findings *fs, const char *path);
/* Moves every finding of src to the end of dst. */
void findings_move(struct findings *dst, struct findings *src);
/* Orders by line, column, then the order they were found in (stable). */
void findings_sort(struct findings *fs);
void findings_clear(struct findings *fs);
void findings_free(struct findings *fs);
const char *severity_name(enum severity sev);

#endif
