/*
 * xalloc: allocation that never returns NULL.
 *
 * Running out of memory is fatal everywhere in trainjob. Before the process
 * dies, a hook registered by the owner of the terminal (the TUI) runs so the
 * screen is restored before the message is printed.
 */
#ifndef UTIL_XALLOC_H
#define UTIL_XALLOC_H

#include <stdarg.h>
#include <stddef.h>

void *xmalloc(size_t size);
void *xcalloc(size_t nmemb, size_t size);
void *xrealloc(void *ptr, size_t size);
/* Grows an array of nmemb elements of size bytes, checking the multiplication. */
void *xreallocarray(void *ptr, size_t nmemb, size_t size);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *xvasprintf(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

/* Runs before the process exits on allocation failure (e.g. endwin). */
void xalloc_set_fatal_hook(void (*hook)(void));
_Noreturn void xalloc_die(void);

#endif
