/*
 * strbuf: an owned, growable, always NUL-terminated byte buffer, and
 * strview: a bounded view into someone else's bytes.
 *
 * Every string built at run time in trainjob goes through strbuf_addf and
 * friends; nothing uses sprintf/strcpy/strcat.
 */
#ifndef UTIL_STRBUF_H
#define UTIL_STRBUF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

struct strbuf {
    char *buf; /* NULL until the first add; use strbuf_str() to read */
    size_t len;
    size_t cap;
};

#define STRBUF_INIT                                                                                \
    {                                                                                              \
        NULL, 0, 0                                                                                 \
    }

void strbuf_add(struct strbuf *sb, const void *data, size_t n);
void strbuf_adds(struct strbuf *sb, const char *s);
void strbuf_addc(struct strbuf *sb, char c);
void strbuf_addf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));
/* Makes room for at least n more bytes. */
void strbuf_grow(struct strbuf *sb, size_t n);
void strbuf_truncate(struct strbuf *sb, size_t len);
void strbuf_reset(struct strbuf *sb);
void strbuf_free(struct strbuf *sb);
/* The contents, "" when empty; valid until the next change. */
const char *strbuf_str(const struct strbuf *sb);
/* Hands the bytes to the caller (never NULL) and leaves sb empty. */
char *strbuf_detach(struct strbuf *sb, size_t *len);

struct strview {
    const char *p;
    size_t n;
};

struct strview strview_from(const char *s);
bool strview_eq(struct strview v, const char *s);

#endif
