/*
 * xalloc: allocation wrappers that end the process on failure, after giving
 * the terminal owner a chance to restore the screen.
 */
#include "util/xalloc.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void (*fatal_hook)(void);

void xalloc_set_fatal_hook(void (*hook)(void))
{
    fatal_hook = hook;
}

_Noreturn void xalloc_die(void)
{
    static const char msg[] = "trainjob: out of memory\n";

    if (fatal_hook != NULL) {
        void (*hook)(void) = fatal_hook;
        fatal_hook = NULL;
        hook();
    }
    /* write(2) needs no allocation, unlike stdio in the worst case. */
    ssize_t rc = write(STDERR_FILENO, msg, sizeof msg - 1);
    (void)rc;
    abort();
}

void *xmalloc(size_t size)
{
    void *p = malloc(size ? size : 1);
    if (p == NULL)
        xalloc_die();
    return p;
}

void *xcalloc(size_t nmemb, size_t size)
{
    void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);
    if (p == NULL)
        xalloc_die();
    return p;
}

void *xrealloc(void *ptr, size_t size)
{
    void *p = realloc(ptr, size ? size : 1);
    if (p == NULL)
        xalloc_die();
    return p;
}

void *xreallocarray(void *ptr, size_t nmemb, size_t size)
{
    if (size != 0 && nmemb > SIZE_MAX / size)
        xalloc_die();
    return xrealloc(ptr, nmemb * size);
}

char *xstrdup(const char *s)
{
    return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
    size_t len = strnlen(s, n);
    char *p = xmalloc(len + 1);
    memcpy(p, s, len);
    p[len] = '\0';
    return p;
}

char *xvasprintf(const char *fmt, va_list ap)
{
    va_list copy;
    va_copy(copy, ap);
    int n = vsnprintf(NULL, 0, fmt, copy);
    va_end(copy);
    if (n < 0)
        xalloc_die();
    char *p = xmalloc((size_t)n + 1);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    return p;
}

char *xasprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *p = xvasprintf(fmt, ap);
    va_end(ap);
    return p;
}
