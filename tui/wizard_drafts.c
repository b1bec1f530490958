/*
 * wizard_drafts: the wizard's drafts, one per job being edited, and the
 * list `trainjob new` opens with when there is more than one (see
 * wizard_drafts.h). tui/wizard_app.c decides which draft a run writes and
 * when the list is shown.
 *
 * A draft's directory is the user's own, but its files are read as any
 * file is: the label line is bounded and made safe for the terminal
 * (utf8_sanitize: no escape sequence in it reaches the screen), a file
 * without the header is listed as "new job", and anything that is not a
 * regular file is skipped.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/jobfile.h"
#include "api/paths.h"
#include "tui/wizard_drafts.h"
#include "util/fileio.h"
#include "util/timefmt.h"
#include "util/utf8.h"
#include "util/xalloc.h"
#include "widgets/widget.h"

#define LABEL_MAX 400 /* bytes of the label line read */

char *drafts_dir(void)
{
    char *state = paths_state_dir();
    char *d = xasprintf("%s/drafts", state);
    free(state);
    return d;
}

char *drafts_path(const char *dir, const char *label, unsigned long salt)
{
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
    char buf[LABEL_MAX + 1];
    ssize_t n = read(fd, buf, LABEL_MAX);
    size_t hl = strlen(DRAFTS_HEADER);
    *context = NULL;
    if (n <= 0 || (size_t)n < hl || memcmp(buf, DRAFTS_HEADER, hl) != 0)
        return xstrdup("new job");
    size_t len = strcspn(buf + hl, "\n");
    if (hl + len > (size_t)n)
        len = (size_t)n - hl;
    struct strbuf s = STRBUF_INIT;
    utf8_sanitize(&s, buf + hl, len, 0);
    char *label = xstrdup(*strbuf_str(&s) ? strbuf_str(&s) : "new job");
    strbuf_free(&s);
    size_t at = hl + len + 1, cl = strlen(DRAFTS_CONTEXT);
    if (at + cl <= (size_t)n && memcmp(buf + at, DRAFTS_CONTEXT, cl) == 0) {
        size_t vl = strcspn(buf + at + cl, "\n");
        if (at + cl + vl < (size_t)n) /* the whole line was read */
            *context = xstrndup(buf + at + cl, vl);
    }
    return label;
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
        if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
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
    for (size_t i = 0; i < l->count; i++) {
        free(l->items[i].path);
        free(l->items[i].label);
        free(l->items[i].context);
    }
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
        free(d->path);
        free(d->label);
        free(d->context);
    }
    l->count = kept;
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

/* One frame of the list: title, rows (sel highlighted), keys, and a line for what was said. */
static void draw_pick(struct term *t, const struct draft_list *l, size_t sel, const char *new_label,
                      const char *said)
{
    bkgdset(' ' | t->role[THEME_ROLE_NORMAL]);
    erase();
    int rows = LINES, cols = COLS;
    attrset(t->role[THEME_ROLE_TITLE]);
    widget_put_text(stdscr, 0, 1, "Unfinished jobs (drafts) — resume one?", cols - 2);
    attrset(t->role[THEME_ROLE_DIM]);
    widget_put_text(stdscr, 1, 1, "saved at (local time)     draft of", cols - 2);
    int top = 2, room = rows - 5;
    if (room < 1)
        room = 1;
    size_t first = sel >= (size_t)room ? sel - (size_t)room + 1 : 0;
    for (size_t i = first; i < l->count && (int)(i - first) < room; i++) {
        char when[64], line[600];
        drafts_when(l->items[i].mtime, when, sizeof when);
        snprintf(line, sizeof line, "%-25s %s", when, l->items[i].label);
        attrset(i == sel ? t->role[THEME_ROLE_SELECTED] : t->role[THEME_ROLE_NORMAL]);
        int y = top + (int)(i - first);
        mvhline(y, 0, ' ', cols);
        widget_put_text(stdscr, y, 1, line, cols - 2);
    }
    attrset(t->role[THEME_ROLE_MESSAGE]);
    if (said)
        widget_put_text(stdscr, rows - 2, 1, said, cols - 2);
    attrset(t->role[THEME_ROLE_DIM]);
    char keys[256];
    snprintf(keys, sizeof keys, "Enter resume   d discard   n/Esc start afresh (%s), drafts kept",
             new_label);
    widget_put_text(stdscr, rows - 1, 1, keys, cols - 2);
    attrset(A_NORMAL);
    wnoutrefresh(stdscr);
    doupdate();
}

long drafts_pick(struct term *t, struct draft_list *l, const char *new_label)
{
    size_t sel = 0;
    bool armed = false; /* d was pressed once on sel */
    char said[512] = "";
    while (l->count > 0) {
        if (sel >= l->count)
            sel = l->count - 1;
        draw_pick(t, l, sel, new_label, said[0] ? said : NULL);
        struct pollfd p = {STDIN_FILENO, POLLIN, 0};
        if (poll(&p, 1, -1) < 0)
            continue;
        if (p.revents & (POLLHUP | POLLERR | POLLNVAL))
            return -1;
        struct widget_key k;
        while (term_read_key(&k)) {
            bool was_armed = armed;
            armed = false;
            said[0] = '\0';
            if (k.is_function && k.code == KEY_RESIZE) {
                armed = was_armed;
            } else if (k.is_function && k.code == KEY_UP) {
                sel = sel ? sel - 1 : 0;
            } else if (k.is_function && k.code == KEY_DOWN) {
                sel = sel + 1 < l->count ? sel + 1 : sel;
            } else if (k.is_function && k.code == KEY_HOME) {
                sel = 0;
            } else if (k.is_function && k.code == KEY_END) {
                sel = l->count - 1;
            } else if (!k.is_function && (k.code == '\r' || k.code == '\n')) {
                return (long)sel;
            } else if (!k.is_function && !k.alt && (k.code == 'n' || k.code == 27)) {
                return -1;
            } else if (!k.is_function && !k.alt && k.code == 'd') {
                struct draft *d = &l->items[sel];
                if (!was_armed) {
                    armed = true;
                    snprintf(said, sizeof said, "d again discards the draft of %.300s", d->label);
                } else if (unlink(d->path) != 0) {
                    snprintf(said, sizeof said, "not discarded: %.200s: %s", d->path,
                             strerror(errno));
                } else {
                    snprintf(said, sizeof said, "discarded the draft of %.300s", d->label);
                    free(d->path);
                    free(d->label);
                    free(d->context);
                    memmove(d, d + 1, (l->count - sel - 1) * sizeof *d);
                    l->count--;
                }
            }
            if (l->count == 0)
                break;
            if (sel >= l->count)
                sel = l->count - 1;
        }
    }
    return -1;
}
