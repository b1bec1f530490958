/*
 * strbuf: growable buffer with printf-style appends. Allocation failure is
 * fatal (see xalloc), so no function here fails.
 */
#include "util/strbuf.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

void strbuf_grow(struct strbuf *sb, size_t n)
{
    if (sb->cap - sb->len > n)
        return;
    if (n > SIZE_MAX - 1 - sb->len)
        xalloc_die();
    size_t want = sb->len + n + 1;
    size_t cap = sb->cap ? sb->cap : 64;
    while (cap < want) {
        if (cap > ((size_t)-1) / 2)
            xalloc_die();
        cap *= 2;
    }
    sb->buf = xrealloc(sb->buf, cap);
    sb->cap = cap;
    sb->buf[sb->len] = '\0'; /* a fresh buffer must read as "" too */
}

/* data may point into sb itself (appending a copy of its own contents). */
void strbuf_add(struct strbuf *sb, const void *data, size_t n)
{
    uintptr_t d = (uintptr_t)data, b = (uintptr_t)sb->buf;
    if (sb->buf != NULL && d >= b && d < b + sb->cap) {
        size_t off = (size_t)(d - b);
        strbuf_grow(sb, n);
        data = sb->buf + off;
    } else {
        strbuf_grow(sb, n);
    }
    if (n)
        memmove(sb->buf + sb->len, data, n);
    sb->len += n;
    sb->buf[sb->len] = '\0';
}

void strbuf_adds(struct strbuf *sb, const char *s)
{
    strbuf_add(sb, s, strlen(s));
}

void strbuf_addc(struct strbuf *sb, char c)
{
    strbuf_add(sb, &c, 1);
}

void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap)
{
    va_list copy;
    va_copy(copy, ap);
    int n = vsnprintf(NULL, 0, fmt, copy);
    va_end(copy);
    if (n <= 0)
        return;
    strbuf_grow(sb, (size_t)n);
    vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
    sb->len += (size_t)n;
}

void strbuf_addf(struct strbuf *sb, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    strbuf_vaddf(sb, fmt, ap);
    va_end(ap);
}

void strbuf_truncate(struct strbuf *sb, size_t len)
{
    if (len < sb->len) {
        sb->len = len;
        sb->buf[len] = '\0';
    }
}

void strbuf_reset(struct strbuf *sb)
{
    strbuf_truncate(sb, 0);
}

void strbuf_free(struct strbuf *sb)
{
    free(sb->buf);
    sb->buf = NULL;
    sb->len = sb->cap = 0;
}

const char *strbuf_str(const struct strbuf *sb)
{
    return sb->buf ? sb->buf : "";
}

char *strbuf_detach(struct strbuf *sb, size_t *len)
{
    if (sb->buf == NULL)
        strbuf_grow(sb, 0), sb->buf[0] = '\0';
    char *p = sb->buf;
    if (len)
        *len = sb->len;
    sb->buf = NULL;
    sb->len = sb->cap = 0;
    return p;
}

struct strview strview_from(const char *s)
{
    struct strview v = {s, s ? strlen(s) : 0};
    return v;
}

bool strview_eq(struct strview v, const char *s)
{
    size_t n = strlen(s);
    return v.n == n && (n == 0 || memcmp(v.p, s, n) == 0);
}
