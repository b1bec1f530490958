/*
 * colconf: the jobs view's columns file — parse, format, load, save (see
 * colconf.h). Called by tui/jobs_view.c; tested by tests/test_colconf.c.
 */
#include "tui/colconf.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "api/paths.h"
#include "util/fileio.h"
#include "util/strbuf.h"
#include "util/utf8.h"
#include "util/xalloc.h"

#define LINE_MAX_BYTES 64 /* longer than any title */

/* Title a as b ignoring case, spaces, '_' and '-'. */
static bool same_title(const char *a, size_t alen, const char *b)
{
    size_t i = 0;
    for (;;) {
        while (i < alen && (a[i] == ' ' || a[i] == '_' || a[i] == '-' || a[i] == '\t'))
            i++;
        while (*b == ' ' || *b == '_' || *b == '-')
            b++;
        if (i == alen || *b == '\0')
            return i == alen && *b == '\0';
        if (tolower((unsigned char)a[i]) != tolower((unsigned char)*b))
            return false;
        i++, b++;
    }
}

/* One bad line: "FILE:LINE: why", the line's text sanitized. */
static int bad(struct strbuf *err, const char *file, size_t line, const char *why, const char *s,
               size_t n)
{
    strbuf_addf(err, "%s:%zu: %s", file, line, why);
    if (s) {
        strbuf_adds(err, " '");
        utf8_sanitize(err, s, n > LINE_MAX_BYTES ? LINE_MAX_BYTES : n, 0);
        strbuf_adds(err, "'");
    }
    return -1;
}

int colconf_parse(const char *text, size_t len, const char *file, const char *const *titles,
                  const char *const *former, size_t n, size_t *order, size_t *count,
                  struct strbuf *err)
{
    *count = 0;
    if (len > COLCONF_MAX_BYTES)
        return bad(err, file, 1, "file too large for a columns file", NULL, 0);
    bool *seen = xcalloc(n ? n : 1, sizeof *seen);
    size_t line = 0, at = 0;
    int rc = 0;
    while (at < len && rc == 0) {
        const char *s = text + at;
        const char *nl = memchr(s, '\n', len - at);
        size_t l = nl ? (size_t)(nl - s) : len - at;
        at += l + (nl ? 1 : 0);
        line++;
        while (l && (s[l - 1] == '\r' || s[l - 1] == ' ' || s[l - 1] == '\t'))
            l--;
        while (l && (*s == ' ' || *s == '\t'))
            s++, l--;
        if (l == 0 || *s == '#')
            continue;
        if (l > LINE_MAX_BYTES || memchr(s, '\0', l)) {
            rc = bad(err, file, line, "not a column title:", s, l);
            break;
        }
        size_t c = 0;
        while (c < n && !same_title(s, l, titles[c]) &&
               !(former && former[c] && same_title(s, l, former[c])))
            c++;
        if (c == n) {
            bad(err, file, line, "unknown column", s, l);
            strbuf_adds(err, " (columns:");
            for (size_t k = 0; k < n; k++)
                strbuf_addf(err, "%s %s", k ? "," : "", titles[k]);
            strbuf_adds(err, ")");
            rc = -1;
        } else if (seen[c]) {
            rc = bad(err, file, line, "column listed twice:", s, l);
        } else {
            seen[c] = true;
            order[(*count)++] = c;
        }
    }
    if (rc == 0 && *count == 0)
        rc = bad(err, file, line ? line : 1, "no column listed (list at least one)", NULL, 0);
    free(seen);
    return rc;
}

void colconf_format(struct strbuf *out, const char *const *titles, const size_t *order,
                    size_t count)
{
    strbuf_adds(out, "# trainjob: the jobs view's columns, in order (C in the jobs view).\n"
                     "# A column not listed is hidden.\n");
    for (size_t i = 0; i < count; i++)
        strbuf_addf(out, "%s\n", titles[order[i]]);
}

char *colconf_user_file(bool tilde)
{
    return paths_config_file("columns", tilde);
}

int colconf_load(const char *path, const char *const *titles, const char *const *former, size_t n,
                 size_t *order, size_t *count, struct strbuf *err)
{
    struct stat st;
    if (stat(path, &st) != 0 && errno == ENOENT)
        return 0;
    char *text = NULL;
    size_t len = 0;
    /* A FIFO or a device would block the start, or never end: refused when opened. */
    if (file_read_regular(path, COLCONF_MAX_BYTES, &text, &len, err) != 0)
        return -1;
    int rc = colconf_parse(text, len, path, titles, former, n, order, count, err);
    free(text);
    return rc == 0 ? 1 : -1;
}

int colconf_save(const char *path, const char *const *titles, const size_t *order, size_t count,
                 struct strbuf *err)
{
    char *dir = xstrdup(path);
    char *slash = strrchr(dir, '/');
    int rc = 0;
    if (slash && slash != dir) {
        *slash = '\0';
        rc = file_mkdirs(dir, 0700, err);
    }
    free(dir);
    if (rc != 0)
        return -1;
    struct strbuf sb = STRBUF_INIT;
    colconf_format(&sb, titles, order, count);
    rc = file_write_atomic(path, strbuf_str(&sb), sb.len, 0644, err);
    strbuf_free(&sb);
    return rc;
}
