/*
 * drafts: the draft store (see drafts.h).
 *
 * A draft's directory is the user's own, but its files are read as any
 * file is: only regular files the user owns are listed, the label line is
 * bounded and made safe for the terminal (utf8_sanitize: no escape
 * sequence in it reaches the screen), and a file without the header is
 * listed as "new job".
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "api/drafts.h"
#include "api/jobfile.h"
#include "api/paths.h"
#include "util/fileio.h"
#include "util/timefmt.h"
#include "util/utf8.h"
#include "util/xalloc.h"

#define LABEL_MAX 400 /* bytes of the label line read */

char *drafts_dir(void)
{
    char *state = paths_state_dir();
    char *d = xasprintf("%s/drafts", state);
    free(state);
    return d;
}

char *drafts_label(const char *clone_of, const char *file)
{
    if (clone_of)
        return xasprintf("clone of %s", clone_of);
    if (file == NULL)
        return xstrdup("new job");
    char *real = realpath(file, NULL);
    char *label = xasprintf("edit of %s", real ? real : file);
    free(real);
    return label;
}

char *drafts_path(const char *dir, const char *label, bool own)
{
    unsigned long salt = own ? ((unsigned long)time(NULL) << 20) ^ (unsigned long)getpid() : 0;
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (const unsigned char *p = (const unsigned char *)label; *p; p++)
        h = (h ^ *p) * 1099511628211ULL;
    for (int i = 0; i < 8 && salt; i++, salt >>= 8)
        h = (h ^ (salt & 0xff)) * 1099511628211ULL;
    return xasprintf("%s/draft-%016llx.yaml", dir, (unsigned long long)h);
}

/*
 * The label on the draft's first line, safe to show ("new job" when there
 * is none), and the context on its second (NULL when not said).
 */
static char *read_label(int fd, char **context)
{
    char buf[LABEL_MAX];
    ssize_t n = read(fd, buf, sizeof buf); /* not a string: searched within n only */
    size_t hl = strlen(DRAFTS_HEADER);
    *context = NULL;
    if (n <= 0 || (size_t)n < hl || memcmp(buf, DRAFTS_HEADER, hl) != 0)
        return xstrdup("new job");
    const char *end = memchr(buf + hl, '\n', (size_t)n - hl);
    size_t len = end ? (size_t)(end - buf) - hl : (size_t)n - hl;
    struct strbuf s = STRBUF_INIT;
    utf8_sanitize(&s, buf + hl, len, 0);
    char *label = xstrdup(*strbuf_str(&s) ? strbuf_str(&s) : "new job");
    strbuf_free(&s);
    size_t at = hl + len + 1, cl = strlen(DRAFTS_CONTEXT);
    if (at + cl <= (size_t)n && memcmp(buf + at, DRAFTS_CONTEXT, cl) == 0) {
        const char *v = buf + at + cl;
        end = memchr(v, '\n', (size_t)n - at - cl);
        if (end) /* the whole line was read */
            *context = xstrndup(v, (size_t)(end - v));
    }
    return label;
}

/* Frees what d holds (the row itself is the list's). */
static void draft_clear(struct draft *d)
{
    free(d->path);
    free(d->label);
    free(d->context);
}

static int by_newest(const void *a, const void *b)
{
    const struct draft *x = a, *y = b;
    if (x->mtime != y->mtime)
        return x->mtime < y->mtime ? 1 : -1;
    if (x->mtime_ns != y->mtime_ns)
        return x->mtime_ns < y->mtime_ns ? 1 : -1;
    return strcmp(x->path, y->path);
}

void drafts_list(const char *dir, struct draft_list *out)
{
    memset(out, 0, sizeof *out);
    DIR *d = opendir(dir);
    if (d == NULL)
        return;
    size_t cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && out->count < 1000) {
        size_t n = strlen(e->d_name);
        bool ours = strcmp(e->d_name, "draft.yaml") == 0 ||
                    (strncmp(e->d_name, "draft-", 6) == 0 && n > 11 &&
                     strcmp(e->d_name + n - 5, ".yaml") == 0);
        if (!ours)
            continue;
        char *path = xasprintf("%s/%s", dir, e->d_name);
        int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
            if (fd >= 0)
                close(fd);
            free(path);
            continue;
        }
        if (out->count == cap) {
            cap = cap ? cap * 2 : 8;
            out->items = xrealloc(out->items, cap * sizeof *out->items);
        }
        char *context;
        char *label = read_label(fd, &context);
        out->items[out->count++] = (struct draft){.path = path,
                                                  .label = label,
                                                  .context = context,
                                                  .mtime = st.st_mtim.tv_sec,
                                                  .mtime_ns = st.st_mtim.tv_nsec};
        close(fd);
    }
    closedir(d);
    if (out->count > 1)
        qsort(out->items, out->count, sizeof *out->items, by_newest);
}

void drafts_free(struct draft_list *l)
{
    for (size_t i = 0; i < l->count; i++)
        draft_clear(&l->items[i]);
    free(l->items);
    memset(l, 0, sizeof *l);
}

void drafts_keep_context(struct draft_list *l, const char *context)
{
    size_t kept = 0;
    for (size_t i = 0; i < l->count; i++) {
        struct draft *d = &l->items[i];
        if (d->context == NULL || context == NULL || strcmp(d->context, context) == 0) {
            l->items[kept++] = *d;
            continue;
        }
        draft_clear(d);
    }
    l->count = kept;
}

long drafts_find(const struct draft_list *l, const char *path)
{
    for (size_t i = 0; i < l->count; i++)
        if (path == NULL || strcmp(l->items[i].path, path) == 0)
            return (long)i;
    return -1;
}

int drafts_discard(struct draft_list *l, size_t i, struct strbuf *err)
{
    struct draft *d = &l->items[i];
    if (unlink(d->path) != 0) {
        strbuf_addf(err, "%s: %s", d->path, strerror(errno));
        return -1;
    }
    draft_clear(d);
    memmove(d, d + 1, (l->count - i - 1) * sizeof *d);
    l->count--;
    return 0;
}

/* A header line: prefix, then text on one line (a line break would start the job's text). */
static void header_line(struct strbuf *doc, const char *prefix, const char *text)
{
    strbuf_adds(doc, prefix);
    for (const char *p = text; *p; p++)
        strbuf_addc(doc, *p == '\n' || *p == '\r' ? '?' : *p);
    strbuf_addc(doc, '\n');
}

int drafts_write(const char *path, const char *label, const char *context,
                 const struct jobspec *job, struct strbuf *err)
{
    struct strbuf doc = STRBUF_INIT;
    header_line(&doc, DRAFTS_HEADER, label);
    if (context)
        header_line(&doc, DRAFTS_CONTEXT, context);
    jobfile_write(job, JOBFILE_YAML, &doc);
    char *dir = xstrdup(path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    int rc = (slash && file_mkdirs(dir, 0700, err) != 0) ||
                     file_write_atomic(path, doc.buf, doc.len, 0600, err) != 0
                 ? -1
                 : 0;
    free(dir);
    strbuf_free(&doc);
    return rc;
}

void drafts_when(time_t t, char *buf, size_t size)
{
    struct tm tm;
    if (localtime_r(&t, &tm) == NULL || strftime(buf, size, "%Y-%m-%d %H:%M %Z", &tm) == 0) {
        char iso[TIMEFMT_RFC3339_LEN];
        time_rfc3339((int64_t)t * 1000, iso);
        snprintf(buf, size, "%s", iso);
    }
}
