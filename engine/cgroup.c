/*
 * cgroup: per-worker memory, CPU and process limits; see cgroup.h.
 *
 * Owns struct cgroups: the version chosen (v2, v1 or none), one `place`
 * per hierarchy workers' cgroups are made in (v2: one for all three
 * controllers; v1: one per controller), and the summary line. Files are
 * written with open/write/close of short text, as the kernel wants; every
 * path is built with snprintf into a PATH_MAX buffer and refused when it
 * does not fit. Names from jobs never reach a path unchecked: a job uid
 * and a leaf are single path components (cgroup_create refuses '/', "."
 * and "..").
 */
#include "engine/cgroup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/fileio.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

/* CFS period for the CPU limit: 100 ms, the kernel's default. */
#define CPU_PERIOD_US 100000
/* How long cgroup_kill_remove keeps killing before it gives up (10 ms steps). */
#define KILL_STEPS 200
/* The same in the engine, whose loop must not wait long (the shim has done it, mostly). */
#define ENGINE_KILL_STEPS 3
/* The largest control file read (cgroup.procs of a fork bomb: pids_max lines). */
#define READ_MAX (1 << 20)
/* Between a job and its worker in a worker cgroup's name: "<job>.<worker>-<attempt>". */
#define NAME_SEP '.'
/* A spare's name begins so: never a job's (a job has no NAME_SEP; a spare none either). */
#define SPARE_MARK '~'
/* Emptied worker cgroups kept for the next worker of the same limits (v1). */
#define SPARES_MAX 64

/* One hierarchy where workers' cgroups are made. */
struct place {
    unsigned controllers; /* CGROUP_* bits limited here */
    char *base;           /* <mount>/<engine's cgroup>/trainjob, then its e<hash>/ */
    bool engine_own;      /* base is this engine's subtree (cgroup_use_engine) */
};

/* A worker cgroup made (or taken from the spares) with its limits, in every place. */
struct made {
    char *name; /* "<job>.<leaf>", or a spare's "~<n>" */
    struct cgroup_limits lim;
};

struct cgroups {
    int version; /* 2, 1, or 0 for none */
    struct place places[3];
    size_t place_count;
    unsigned enforced;
    char *summary;
    /*
     * Under mu (launch threads create, the engine's loop removes): the worker
     * cgroups this engine made, with their limits, and its spares — emptied
     * worker cgroups renamed to "~<n>" in every place, each taken back by
     * the next worker of the same limits (cgroup v1 renames within a parent;
     * v2 does not rename).
     */
    pthread_mutex_t mu;
    struct made *live, *spares;
    size_t live_count, live_cap, spare_count;
    unsigned long next_spare;
};

static const char *const names[] = {"memory", "cpu", "pids"};
static const unsigned bits[] = {CGROUP_MEMORY, CGROUP_CPU, CGROUP_PIDS};
/* v1: the limit file the probe checks in each controller's hierarchy. */
static const char *const v1_limit_file[] = {"memory.limit_in_bytes", "cpu.cfs_quota_us",
                                            "pids.max"};
/* v2: the limit file of each controller. */
static const char *const v2_limit_file[] = {"memory.max", "cpu.max", "pids.max"};

/* ---- small file helpers --------------------------------------------------- */

/* "a/b" into buf; false when it does not fit. */
static bool join_path(char *buf, size_t size, const char *a, const char *b)
{
    int n = snprintf(buf, size, "%s/%s", a, b);
    return n > 0 && (size_t)n < size;
}

static bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* Writes text to an existing file (a control file). Returns 0, or -1 with errno. */
static int write_text(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return -1;
    size_t len = strlen(text);
    ssize_t n = write(fd, text, len);
    int saved = errno;
    close(fd);
    if (n != (ssize_t)len) {
        errno = n < 0 ? saved : EIO;
        return -1;
    }
    return 0;
}

/* The text of a small file, or NULL. */
static char *read_text(const char *path)
{
    char *data = NULL;
    size_t len;
    struct strbuf err = STRBUF_INIT;
    if (file_read_all(path, READ_MAX, &data, &len, &err) != 0) {
        free(data);
        data = NULL;
    }
    strbuf_free(&err);
    return data;
}

/* Does the control file hold exactly value (and a newline)? */
static bool holds(const char *path, const char *value)
{
    char *text = read_text(path);
    size_t len = strlen(value);
    bool same = text && strncmp(text, value, len) == 0 && strcmp(text + len, "\n") == 0;
    free(text);
    return same;
}

/* Is word one of the space-separated words of list? */
static bool has_word(const char *list, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = list; p && *p;) {
        p += strspn(p, " \t\n");
        size_t len = strcspn(p, " \t\n");
        if (len == n && strncmp(p, word, n) == 0)
            return true;
        p += len;
    }
    return false;
}

/* mkdir that accepts an existing directory. */
static int make_dir(const char *path)
{
    if (mkdir(path, 0755) == 0 || errno == EEXIST)
        return 0;
    return -1;
}

/* Does path have a ".." component? */
static bool has_dotdot(const char *path)
{
    size_t n = strlen(path);
    return strstr(path, "/../") != NULL || (n >= 3 && strcmp(path + n - 3, "/..") == 0);
}

/*
 * The path of our cgroup in /proc/self/cgroup for a v1 controller (ctl) or
 * for v2 (ctl NULL: the "0::" line). Returns an owned path, or NULL.
 */
static char *self_path(const char *self, const char *ctl)
{
    for (const char *line = self; line && *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        const char *c1 = memchr(line, ':', len);
        const char *c2 = c1 ? memchr(c1 + 1, ':', len - (size_t)(c1 + 1 - line)) : NULL;
        if (c2) {
            size_t list_len = (size_t)(c2 - c1 - 1);
            char *list = xstrndup(c1 + 1, list_len);
            bool match = false;
            if (ctl == NULL) {
                match = list_len == 0 && c1 - line == 1 && line[0] == '0';
            } else {
                for (char *save = NULL, *tok = strtok_r(list, ",", &save); tok;
                     tok = strtok_r(NULL, ",", &save))
                    match |= strcmp(tok, ctl) == 0;
            }
            free(list);
            if (match) {
                size_t path_len = len - (size_t)(c2 + 1 - line);
                char *path = path_len > 0 && c2[1] == '/' ? xstrndup(c2 + 1, path_len) : NULL;
                /* Outside our cgroup namespace ("/../x"): not a path under the mount. */
                if (path && has_dotdot(path)) {
                    free(path);
                    path = NULL;
                }
                return path;
            }
        }
        line = end ? end + 1 : NULL;
    }
    return NULL;
}

/* The v1 hierarchy line's controller list for ctl ("cpu,cpuacct"), owned, or NULL. */
static char *self_list(const char *self, const char *ctl)
{
    for (const char *line = self; line && *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        char *copy = xstrndup(line, len);
        char *c1 = strchr(copy, ':');
        char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (c2) {
            *c2 = '\0';
            char *list = xstrdup(c1 + 1);
            bool match = false;
            for (char *save = NULL, *tok = strtok_r(c1 + 1, ",", &save); tok;
                 tok = strtok_r(NULL, ",", &save))
                match |= strcmp(tok, ctl) == 0;
            free(copy);
            if (match)
                return list;
            free(list);
        } else {
            free(copy);
        }
        line = end ? end + 1 : NULL;
    }
    return NULL;
}

/* "<a><b>" with a single '/' between (b starts with '/'; "/" alone adds nothing). */
static char *under(const char *a, const char *b)
{
    return strcmp(b, "/") == 0 ? xstrdup(a) : xasprintf("%s%s", a, b);
}

/* ---- the probe ------------------------------------------------------------- */

/* Appends one reason to why, after a "; " when there is one already. */
static void add_reason(struct strbuf *why, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void add_reason(struct strbuf *why, const char *fmt, ...)
{
    if (why->len)
        strbuf_adds(why, "; ");
    va_list ap;
    va_start(ap, fmt);
    strbuf_vaddf(why, fmt, ap);
    va_end(ap);
}

/*
 * Creates base (trainjob/ under our cgroup) and a test child in it, and checks
 * that each limit file in files[] (n of them) is there and takes a write of
 * the matching value. Returns 0, or -1 with why.
 */
static int probe_child(const char *base, const char *const *files, const char *const *values,
                       size_t n, struct strbuf *why)
{
    if (make_dir(base) != 0) {
        strbuf_addf(why, "cannot create %s: %s", base, strerror(errno));
        return -1;
    }
    char test[PATH_MAX], file[PATH_MAX];
    snprintf(file, sizeof file, "probe-%ld", (long)getpid());
    if (!join_path(test, sizeof test, base, file)) {
        strbuf_addf(why, "%s: path too long", base);
        return -1;
    }
    if (make_dir(test) != 0) {
        strbuf_addf(why, "cannot create a cgroup in %s: %s", base, strerror(errno));
        return -1;
    }
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (!join_path(file, sizeof file, test, files[i]) || write_text(file, values[i]) != 0) {
            strbuf_addf(why, "cannot set %s in %s: %s", files[i], base,
                        errno == ENOENT ? "no such control file" : strerror(errno));
            rc = -1;
        }
    }
    rmdir(test);
    return rc;
}

/* Adds one controller's v1 hierarchy to cg when it works; otherwise says why. */
static void probe_v1(struct cgroups *cg, const char *root, const char *self, size_t c,
                     struct strbuf *why)
{
    const char *ctl = names[c];
    char *path = self_path(self, ctl);
    char *list = self_list(self, ctl);
    char *mount = NULL;
    if (path == NULL || list == NULL) {
        add_reason(why, "%s: no cgroup v1 hierarchy", ctl);
        goto out;
    }
    /* Mounted at root/<ctl> (or a symlink there), or at root/<list> ("cpu,cpuacct"). */
    char procs[PATH_MAX];
    mount = xasprintf("%s/%s", root, ctl);
    if (!join_path(procs, sizeof procs, mount, "cgroup.procs") || !exists(procs)) {
        free(mount);
        mount = xasprintf("%s/%s", root, list);
        if (!join_path(procs, sizeof procs, mount, "cgroup.procs") || !exists(procs)) {
            add_reason(why, "%s: no cgroup v1 hierarchy mounted at %s/%s", ctl, root, ctl);
            goto out;
        }
    }
    char *own = under(mount, path);
    if (!join_path(procs, sizeof procs, own, "cgroup.procs") || !exists(procs)) {
        add_reason(why, "%s: our cgroup %s is not at %s", ctl, path, own);
        free(own);
        goto out;
    }
    char *base = xasprintf("%s/trainjob", own);
    free(own);
    static const char *const test_value[] = {"-1", "-1", "max"};
    struct strbuf sub = STRBUF_INIT;
    if (probe_child(base, &v1_limit_file[c], &test_value[c], 1, &sub) != 0) {
        add_reason(why, "%s: %s", ctl, strbuf_str(&sub));
        free(base);
    } else {
        struct place *pl = &cg->places[cg->place_count++];
        pl->controllers = bits[c];
        pl->base = base;
        cg->enforced |= bits[c];
    }
    strbuf_free(&sub);
out:
    free(mount);
    free(path);
    free(list);
}

/*
 * Enables the controllers in want (names) in dir's cgroup.subtree_control, one
 * at a time; returns the CGROUP_* bits that are enabled afterwards.
 */
static unsigned enable_subtree(const char *dir, unsigned want)
{
    char file[PATH_MAX];
    if (!join_path(file, sizeof file, dir, "cgroup.subtree_control"))
        return 0;
    unsigned on = 0;
    char *now = read_text(file);
    for (size_t c = 0; c < 3; c++) {
        if (!(want & bits[c]))
            continue;
        char word[16];
        snprintf(word, sizeof word, "+%s", names[c]);
        if (has_word(now, names[c]) || write_text(file, word) == 0)
            on |= bits[c];
    }
    free(now);
    return on;
}

/*
 * The v2 path: our cgroup must offer the controllers (cgroup.controllers),
 * and we must be able to enable them below it — which the kernel allows only
 * when no process sits in our cgroup itself, so the engine first moves into
 * a leaf of its own ("trainjobd"), as a delegated service does.
 */
static void probe_v2(struct cgroups *cg, const char *root, const char *self, struct strbuf *why)
{
    char file[PATH_MAX];
    const char *mount = NULL;
    char *unified = xasprintf("%s/unified", root);
    if (join_path(file, sizeof file, root, "cgroup.controllers") && exists(file))
        mount = root;
    else if (join_path(file, sizeof file, unified, "cgroup.controllers") && exists(file))
        mount = unified;
    char *path = self_path(self, NULL);
    char *own = NULL, *base = NULL, *offered = NULL;
    if (mount == NULL || path == NULL) {
        add_reason(why, "no cgroup v2 hierarchy at %s", root);
        goto out;
    }
    own = under(mount, path);
    if (!join_path(file, sizeof file, own, "cgroup.controllers") ||
        (offered = read_text(file)) == NULL) {
        add_reason(why, "cgroup v2: our cgroup %s is not at %s", path, own);
        goto out;
    }
    unsigned want = 0;
    for (size_t c = 0; c < 3; c++)
        if (has_word(offered, names[c]))
            want |= bits[c];
    if (want == 0) {
        add_reason(why,
                   "cgroup v2: %s is not delegated (its cgroup.controllers offers none of "
                   "memory, cpu, pids)",
                   own);
        goto out;
    }
    unsigned on = enable_subtree(own, want);
    if (on != want) {
        /* Processes in our own cgroup block enabling controllers below it: move to a leaf. */
        char *leaf = xasprintf("%s/trainjobd", own);
        char pid[32];
        snprintf(pid, sizeof pid, "%ld", (long)getpid());
        if (make_dir(leaf) == 0 && join_path(file, sizeof file, leaf, "cgroup.procs") &&
            write_text(file, pid) == 0)
            on = enable_subtree(own, want);
        free(leaf);
    }
    if (on == 0) {
        add_reason(why,
                   "cgroup v2: cannot enable controllers in %s/cgroup.subtree_control "
                   "(other processes share the cgroup, or it is not ours)",
                   own);
        goto out;
    }
    base = xasprintf("%s/trainjob", own);
    if (make_dir(base) != 0) {
        add_reason(why, "cgroup v2: cannot create %s: %s", base, strerror(errno));
        goto out;
    }
    on = enable_subtree(base, on);
    const char *files[3], *values[3];
    size_t n = 0;
    static const char *const test_value[] = {"max", "max 100000", "max"};
    for (size_t c = 0; c < 3; c++) {
        if (on & bits[c]) {
            files[n] = v2_limit_file[c];
            values[n++] = test_value[c];
        }
    }
    struct strbuf sub = STRBUF_INIT;
    if (n == 0 || probe_child(base, files, values, n, &sub) != 0) {
        add_reason(why, "cgroup v2: %s", n ? strbuf_str(&sub) : "no controller could be enabled");
        strbuf_free(&sub);
        goto out;
    }
    strbuf_free(&sub);
    cg->places[0].controllers = on;
    cg->places[0].base = base;
    base = NULL;
    cg->place_count = 1;
    cg->enforced = on;
    cg->version = 2;
    if (on != want || want != CGROUP_ALL) {
        for (size_t c = 0; c < 3; c++)
            if (!(on & bits[c]))
                add_reason(why, "%s: not delegated to %s", names[c], own);
    }
out:
    free(unified);
    free(path);
    free(own);
    free(base);
    free(offered);
}

/* The summary line from what was found; why says what is missing. */
static void summarize(struct cgroups *cg, const char *why)
{
    struct strbuf sb = STRBUF_INIT;
    if (cg->enforced == 0) {
        strbuf_addf(&sb, "not enforced: %s", why && *why ? why : "no usable cgroup");
    } else {
        strbuf_addf(&sb,
                    "%s (cgroup v%d: ", cg->enforced == CGROUP_ALL ? "enforced" : "partly enforced",
                    cg->version);
        const char *sep = "";
        for (size_t c = 0; c < 3; c++) {
            if (cg->enforced & bits[c]) {
                strbuf_addf(&sb, "%s%s", sep, names[c]);
                sep = ", ";
            }
        }
        if (cg->enforced != CGROUP_ALL && why && *why)
            strbuf_addf(&sb, "; not %s", why);
        strbuf_adds(&sb, ")");
    }
    cg->summary = strbuf_detach(&sb, NULL);
}

struct cgroups *cgroup_probe(const char *root, const char *self)
{
    struct cgroups *cg = xcalloc(1, sizeof *cg);
    pthread_mutex_init(&cg->mu, NULL);
    char *own_self = NULL;
    if (self == NULL)
        self = own_self = read_text("/proc/self/cgroup");
    if (self == NULL) {
        cg->summary = xstrdup("not enforced: cannot read /proc/self/cgroup");
        return cg;
    }
    struct strbuf why2 = STRBUF_INIT, why1 = STRBUF_INIT;
    probe_v2(cg, root, self, &why2);
    if (cg->enforced != CGROUP_ALL) {
        /* v1, where v2 gives less: a hybrid machine keeps its controllers there. */
        struct cgroups v1 = {0};
        for (size_t c = 0; c < 3; c++)
            probe_v1(&v1, root, self, c, &why1);
        int n1 = __builtin_popcount(v1.enforced), n2 = __builtin_popcount(cg->enforced);
        if (n1 > n2) {
            for (size_t i = 0; i < cg->place_count; i++)
                free(cg->places[i].base);
            memcpy(cg->places, v1.places, sizeof cg->places);
            cg->place_count = v1.place_count;
            cg->enforced = v1.enforced;
            cg->version = 1;
        } else {
            for (size_t i = 0; i < v1.place_count; i++)
                free(v1.places[i].base);
        }
    }
    if (cg->version == 1) {
        summarize(cg, strbuf_str(&why1));
    } else if (cg->version == 2) {
        summarize(cg, strbuf_str(&why2));
    } else {
        struct strbuf both = STRBUF_INIT;
        strbuf_addf(&both, "%s; %s", strbuf_str(&why2), strbuf_str(&why1));
        summarize(cg, strbuf_str(&both));
        strbuf_free(&both);
    }
    strbuf_free(&why1);
    strbuf_free(&why2);
    free(own_self);
    return cg;
}

void cgroup_free(struct cgroups *cg)
{
    if (cg == NULL)
        return;
    for (size_t i = 0; i < cg->place_count; i++)
        free(cg->places[i].base);
    for (size_t i = 0; i < cg->live_count; i++)
        free(cg->live[i].name);
    for (size_t i = 0; i < cg->spare_count; i++)
        free(cg->spares[i].name);
    free(cg->live);
    free(cg->spares);
    pthread_mutex_destroy(&cg->mu);
    free(cg->summary);
    free(cg);
}

const char *cgroup_summary(const struct cgroups *cg)
{
    return cg ? cg->summary : "not enforced: cgroups were not probed";
}

unsigned cgroup_enforced(const struct cgroups *cg)
{
    return cg ? cg->enforced : 0;
}

const char *cgroup_base(const struct cgroups *cg)
{
    return cg && cg->place_count ? cg->places[0].base : NULL;
}

/* A name that is one path component: not empty, ".", "..", and no '/'. */
static bool component_ok(const char *s)
{
    return s && *s && strcmp(s, ".") != 0 && strcmp(s, "..") != 0 && !strchr(s, '/') &&
           strlen(s) < 200;
}

/* A job's name in a worker cgroup's: one component without NAME_SEP, not a spare's. */
static bool job_ok(const char *s)
{
    return component_ok(s) && !strchr(s, NAME_SEP) && s[0] != SPARE_MARK;
}

const char *cgroup_use_engine(struct cgroups *cg, const char *key)
{
    static char name[24];
    uint64_t h = 14695981039346656037ULL; /* FNV-1a: the same on every start */
    for (const unsigned char *p = (const unsigned char *)key; p && *p; p++)
        h = (h ^ *p) * 1099511628211ULL;
    snprintf(name, sizeof name, "e%016llx", (unsigned long long)h);
    for (size_t i = 0; cg && i < cg->place_count; i++) {
        struct place *pl = &cg->places[i];
        char *sub = xasprintf("%s/%s", pl->base, name);
        if (make_dir(sub) != 0 ||
            (cg->version == 2 && enable_subtree(sub, pl->controllers) != pl->controllers)) {
            rmdir(sub);
            free(sub);
            continue;
        }
        free(pl->base);
        pl->base = sub;
        pl->engine_own = true;
    }
    return name;
}

struct sweep {
    bool (*keep)(void *ctx, const char *job, const char *leaf);
    void *ctx;
};

/*
 * Removes the empty cgroup directories below dir (depth levels down: a
 * job's, then its workers'), then dir unless it is the base (job NULL) or
 * kept. In the base, a name with NAME_SEP is a worker's cgroup itself
 * ("<job>.<leaf>") and a spare's name begins with SPARE_MARK; any other
 * directory there is a job's, as an engine before the flat names made them.
 */
static size_t sweep_dir(const struct sweep *sw, const char *dir, const char *job, int depth)
{
    size_t removed = 0;
    DIR *d = depth > 0 ? opendir(dir) : NULL;
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        if (e->d_type != DT_DIR || !component_ok(e->d_name))
            continue;
        char sub[PATH_MAX];
        if (!join_path(sub, sizeof sub, dir, e->d_name))
            continue;
        const char *sep = job ? NULL : strchr(e->d_name, NAME_SEP);
        if (sep || (job == NULL && e->d_name[0] == SPARE_MARK)) {
            char name[256];
            snprintf(name, sizeof name, "%.*s", sep ? (int)(sep - e->d_name) : 0, e->d_name);
            bool kept = sep && sw->keep && sw->keep(sw->ctx, name, sep + 1);
            if (!kept && rmdir(sub) == 0)
                removed++;
            continue;
        }
        removed += sweep_dir(sw, sub, job ? job : e->d_name, depth - 1);
    }
    if (d)
        closedir(d);
    const char *leaf = strrchr(dir, '/');
    bool kept = job && depth == 0 && sw->keep && sw->keep(sw->ctx, job, leaf ? leaf + 1 : dir);
    if (job && !kept && rmdir(dir) == 0)
        removed++;
    return removed;
}

/* Forgets the spares (their directories are the sweep's to remove). */
static void drop_spares(struct cgroups *cg)
{
    pthread_mutex_lock(&cg->mu);
    for (size_t i = 0; i < cg->spare_count; i++)
        free(cg->spares[i].name);
    cg->spare_count = 0;
    pthread_mutex_unlock(&cg->mu);
}

void cgroup_leave_engine(struct cgroups *cg)
{
    struct sweep sw = {NULL, NULL};
    if (cg)
        drop_spares(cg);
    for (size_t i = 0; cg && i < cg->place_count; i++) {
        if (!cg->places[i].engine_own)
            continue;
        /* Job directories without a worker's cgroup (the kernel refuses the others). */
        sweep_dir(&sw, cg->places[i].base, NULL, 1);
        rmdir(cg->places[i].base);
    }
}

size_t cgroup_sweep(struct cgroups *cg, bool (*keep)(void *ctx, const char *job, const char *leaf),
                    void *ctx)
{
    struct sweep sw = {keep, ctx};
    size_t removed = 0;
    if (cg)
        drop_spares(cg);
    for (size_t i = 0; cg && i < cg->place_count; i++)
        removed += sweep_dir(&sw, cg->places[i].base, NULL, 2); /* <job>/<worker>-<attempt> */
    return removed;
}

/* ---- per worker ------------------------------------------------------------- */

static bool kill_remove(const char *dir, int steps);
static bool empty_of_processes(const char *dir, int steps, bool v1);

/* Writes each limit of lim that this place controls into dir. */
static int set_limits(const struct cgroups *cg, const struct place *pl, const char *dir,
                      const struct cgroup_limits *lim, struct strbuf *err)
{
    struct {
        unsigned bit;
        const char *file;
        char value[64];
        bool optional;
        bool unless_set; /* not written when the file holds the value already */
    } w[5];
    size_t n = 0;
    if ((pl->controllers & CGROUP_MEMORY) && lim->memory_mib > 0) {
        long long bytes = (long long)lim->memory_mib * 1024 * 1024;
        w[n].bit = CGROUP_MEMORY, w[n].optional = false, w[n].unless_set = false;
        w[n].file = cg->version == 2 ? "memory.max" : "memory.limit_in_bytes";
        snprintf(w[n++].value, sizeof w[0].value, "%lld", bytes);
        /* No swap: the limit is the memory the spec gives. */
        w[n].bit = CGROUP_MEMORY, w[n].optional = true, w[n].unless_set = false;
        w[n].file = cg->version == 2 ? "memory.swap.max" : "memory.memsw.limit_in_bytes";
        snprintf(w[n++].value, sizeof w[0].value, "%lld", cg->version == 2 ? 0 : bytes);
    }
    if ((pl->controllers & CGROUP_CPU) && lim->cpus > 0) {
        long long quota = (long long)lim->cpus * CPU_PERIOD_US;
        w[n].bit = CGROUP_CPU, w[n].optional = false, w[n].unless_set = false;
        if (cg->version == 2) {
            w[n].file = "cpu.max";
            snprintf(w[n++].value, sizeof w[0].value, "%lld %d", quota, CPU_PERIOD_US);
        } else {
            /*
             * The kernel's default period for a new cgroup: writing it again
             * would cost what the quota's write costs (each checks the bandwidth
             * of every cpu cgroup on the machine), for nothing.
             */
            w[n].file = "cpu.cfs_period_us", w[n].unless_set = true;
            snprintf(w[n++].value, sizeof w[0].value, "%d", CPU_PERIOD_US);
            w[n].bit = CGROUP_CPU, w[n].optional = false, w[n].unless_set = false;
            w[n].file = "cpu.cfs_quota_us";
            snprintf(w[n++].value, sizeof w[0].value, "%lld", quota);
        }
    }
    if ((pl->controllers & CGROUP_PIDS) && lim->pids > 0) {
        w[n].bit = CGROUP_PIDS, w[n].optional = false, w[n].unless_set = false;
        w[n].file = "pids.max";
        snprintf(w[n++].value, sizeof w[0].value, "%d", lim->pids);
    }
    for (size_t i = 0; i < n; i++) {
        char file[PATH_MAX];
        if (!join_path(file, sizeof file, dir, w[i].file))
            continue;
        if (w[i].unless_set && holds(file, w[i].value))
            continue;
        if (write_text(file, w[i].value) != 0) {
            /* An optional file the kernel does not offer (no swap accounting): the open
             * says so, without a stat of its own before every worker's write. */
            if (w[i].optional && errno == ENOENT)
                continue;
            strbuf_addf(err, "cgroup: cannot set %s to %s in %s: %s", w[i].file, w[i].value, dir,
                        strerror(errno));
            return -1;
        }
    }
    return 0;
}

void cgroup_dirs_free(char **dirs)
{
    for (size_t i = 0; dirs && dirs[i]; i++)
        free(dirs[i]);
    free(dirs);
}

static bool same_limits(const struct cgroup_limits *a, const struct cgroup_limits *b)
{
    return a->memory_mib == b->memory_mib && a->cpus == b->cpus && a->pids == b->pids &&
           a->user == b->user;
}

/* Under mu: records name (owned) as a worker cgroup made with lim. */
static void live_add(struct cgroups *cg, char *name, const struct cgroup_limits *lim)
{
    if (cg->live_count == cg->live_cap) {
        cg->live_cap = cg->live_cap ? cg->live_cap * 2 : 16;
        cg->live = xreallocarray(cg->live, cg->live_cap, sizeof *cg->live);
    }
    cg->live[cg->live_count++] = (struct made){name, *lim};
}

/* Under mu: takes the record of name out (true, with its limits in *lim), or false. */
static bool live_take(struct cgroups *cg, const char *name, struct cgroup_limits *lim)
{
    for (size_t i = 0; i < cg->live_count; i++) {
        if (strcmp(cg->live[i].name, name) == 0) {
            *lim = cg->live[i].lim;
            free(cg->live[i].name);
            cg->live[i] = cg->live[--cg->live_count];
            return true;
        }
    }
    return false;
}

/* Takes a spare of lim out of the pool: its name (owned), or NULL when there is none. */
static char *spare_take(struct cgroups *cg, const struct cgroup_limits *lim)
{
    char *name = NULL;
    pthread_mutex_lock(&cg->mu);
    for (size_t i = cg->spare_count; i-- > 0;) {
        if (same_limits(&cg->spares[i].lim, lim)) {
            name = cg->spares[i].name;
            cg->spares[i] = cg->spares[--cg->spare_count];
            break;
        }
    }
    pthread_mutex_unlock(&cg->mu);
    return name;
}

/*
 * Makes the worker cgroup name in one place: a spare's directory renamed
 * (its limits are lim already), else a new directory with lim written.
 */
static int make_worker_dir(const struct cgroups *cg, const struct place *pl, const char *dir,
                           const char *spare, const struct cgroup_limits *lim, struct strbuf *err)
{
    if (spare) {
        char *from = xasprintf("%s/%s", pl->base, spare);
        int moved = rename(from, dir);
        if (moved != 0)
            rmdir(from); /* gone meanwhile, or a name taken: a new directory instead */
        free(from);
        if (moved == 0)
            return 0;
    }
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        strbuf_addf(err, "cgroup: cannot create %s: %s", dir, strerror(errno));
        return -1;
    }
    return set_limits(cg, pl, dir, lim, err);
}

int cgroup_create(struct cgroups *cg, const char *job, const char *leaf,
                  const struct cgroup_limits *lim, char ***dirs, struct strbuf *err)
{
    *dirs = NULL;
    if (cg == NULL || cg->place_count == 0)
        return 0;
    if (!job_ok(job) || !component_ok(leaf)) {
        strbuf_addf(err, "cgroup: '%s/%s' is not a cgroup name", job ? job : "", leaf ? leaf : "");
        return -1;
    }
    char *name = xasprintf("%s%c%s", job, NAME_SEP, leaf);
    char *spare = cg->version == 1 ? spare_take(cg, lim) : NULL;
    char **out = xcalloc(cg->place_count + 1, sizeof *out);
    for (size_t i = 0; i < cg->place_count; i++) {
        const struct place *pl = &cg->places[i];
        out[i] = xasprintf("%s/%s", pl->base, name);
        if (make_worker_dir(cg, pl, out[i], spare, lim, err) != 0) {
            for (size_t j = 0; j <= i; j++)
                kill_remove(out[j], ENGINE_KILL_STEPS);
            for (size_t j = i + 1; spare && j < cg->place_count; j++) {
                char *left = xasprintf("%s/%s", cg->places[j].base, spare);
                rmdir(left);
                free(left);
            }
            cgroup_dirs_free(out);
            free(spare);
            free(name);
            return -1;
        }
    }
    free(spare);
    pthread_mutex_lock(&cg->mu);
    live_add(cg, name, lim);
    pthread_mutex_unlock(&cg->mu);
    *dirs = out;
    return 0;
}

static bool oom_counted(const char *dir, const char *file);

/*
 * Ends what is left in the worker cgroup name and removes it from every
 * place — or, on v1, when the engine made it, nothing is left in it, no
 * process of it was killed by the memory limit (the next worker's end would
 * read that count) and the pool has room, keeps it as a spare for the next
 * worker of the same limits: a rename in each place instead of a rmdir
 * now and a mkdir and the limits' writes then (the CPU quota's write
 * walks every cpu cgroup on the machine).
 */
static void remove_worker(struct cgroups *cg, const char *name)
{
    struct cgroup_limits lim;
    pthread_mutex_lock(&cg->mu);
    bool made = live_take(cg, name, &lim);
    bool room = cg->spare_count < SPARES_MAX;
    char spare[32];
    snprintf(spare, sizeof spare, "%c%lu", SPARE_MARK, cg->next_spare++);
    pthread_mutex_unlock(&cg->mu);
    bool keep = made && room && cg->version == 1;
    size_t renamed = 0;
    for (size_t i = 0; i < cg->place_count; i++) {
        char *dir = xasprintf("%s/%s", cg->places[i].base, name);
        if (keep && (!empty_of_processes(dir, ENGINE_KILL_STEPS, true) ||
                     ((cg->places[i].controllers & CGROUP_MEMORY) &&
                      oom_counted(dir, cg->version == 1 ? "memory.oom_control" : "memory.events"))))
            keep = false;
        if (keep) {
            char *to = xasprintf("%s/%s", cg->places[i].base, spare);
            keep = rename(dir, to) == 0;
            renamed += keep;
            free(to);
        }
        if (!keep)
            kill_remove(dir, ENGINE_KILL_STEPS);
        free(dir);
    }
    if (keep) {
        pthread_mutex_lock(&cg->mu);
        keep = cg->spare_count < SPARES_MAX; /* another thread may have filled it meanwhile */
        if (keep) {
            if (cg->spares == NULL)
                cg->spares = xcalloc(SPARES_MAX, sizeof *cg->spares);
            cg->spares[cg->spare_count++] = (struct made){xstrdup(spare), lim};
        }
        pthread_mutex_unlock(&cg->mu);
        if (keep)
            return;
    }
    for (size_t i = 0; i < renamed; i++) { /* a place refused, or the pool is full: not kept */
        char *to = xasprintf("%s/%s", cg->places[i].base, spare);
        rmdir(to);
        free(to);
    }
}

void cgroup_remove(struct cgroups *cg, const char *job, const char *leaf)
{
    if (cg == NULL || !job_ok(job) || !component_ok(leaf))
        return;
    char *name = xasprintf("%s%c%s", job, NAME_SEP, leaf);
    remove_worker(cg, name);
    free(name);
}

void cgroup_remove_job(struct cgroups *cg, const char *job)
{
    if (cg == NULL || !job_ok(job))
        return;
    size_t len = strlen(job);
    for (size_t i = 0; i < cg->place_count; i++) {
        /* Its workers' cgroups, "<job>.<leaf>" in the base. */
        DIR *d = opendir(cg->places[i].base);
        struct dirent *e;
        while (d && (e = readdir(d)) != NULL) {
            if (e->d_type != DT_DIR || strncmp(e->d_name, job, len) != 0 ||
                e->d_name[len] != NAME_SEP)
                continue;
            char *dir = xasprintf("%s/%s", cg->places[i].base, e->d_name);
            kill_remove(dir, ENGINE_KILL_STEPS);
            free(dir);
            if (i == 0) {
                struct cgroup_limits lim;
                pthread_mutex_lock(&cg->mu);
                live_take(cg, e->d_name, &lim);
                pthread_mutex_unlock(&cg->mu);
            }
        }
        if (d)
            closedir(d);
        /* And a job directory an engine before the flat names made. */
        char *dir = xasprintf("%s/%s", cg->places[i].base, job);
        d = opendir(dir);
        while (d && (e = readdir(d)) != NULL) {
            if (e->d_type != DT_DIR || !component_ok(e->d_name))
                continue;
            char *leaf = xasprintf("%s/%s", dir, e->d_name);
            kill_remove(leaf, ENGINE_KILL_STEPS);
            free(leaf);
        }
        if (d)
            closedir(d);
        rmdir(dir);
        free(dir);
    }
}

/* ---- in the shim ------------------------------------------------------------ */

int cgroup_join(const char *dir)
{
    char file[PATH_MAX], pid[32];
    /*
     * v1: "0" into tasks moves the calling thread alone — the whole of a
     * process that has one — and the kernel then takes no global lock
     * (cgroup.procs, or a pid, takes cgroup_threadgroup_rwsem for writing,
     * which every fork, exec and exit on the machine waits on).
     */
    if (!join_path(file, sizeof file, dir, "tasks")) {
        errno = ENAMETOOLONG;
        return -1;
    }
    if (write_text(file, "0") == 0)
        return 0;
    if (errno != ENOENT)
        return -1;
    if (!join_path(file, sizeof file, dir, "cgroup.procs")) {
        errno = ENAMETOOLONG;
        return -1;
    }
    snprintf(pid, sizeof pid, "%ld", (long)getpid());
    return write_text(file, pid);
}

/* SIGKILLs every pid listed in dir/cgroup.procs; returns how many were listed. */
static size_t kill_listed(const char *dir)
{
    char file[PATH_MAX];
    if (!join_path(file, sizeof file, dir, "cgroup.procs"))
        return 0;
    char *text = read_text(file);
    size_t n = 0;
    for (char *p = text; p && *p;) {
        char *end;
        long pid = strtol(p, &end, 10);
        if (end == p)
            break;
        if (pid > 1) {
            kill((pid_t)pid, SIGKILL);
            n++;
        }
        p = end + strspn(end, "\n");
    }
    free(text);
    return n;
}

/*
 * Kills what is in dir until nothing is listed there (true), trying at most
 * steps times, 10 ms apart (false: something is left, or dir is gone). v1:
 * known to be a v1 cgroup, which has no cgroup.kill to look for.
 */
static bool empty_of_processes(const char *dir, int steps, bool v1)
{
    if (!exists(dir))
        return false;
    char file[PATH_MAX];
    if (!v1 && join_path(file, sizeof file, dir, "cgroup.kill") && exists(file))
        (void)write_text(file, "1");
    const struct timespec step = {0, 10 * 1000 * 1000};
    for (int i = 0; i < steps; i++) {
        if (kill_listed(dir) == 0)
            return true;
        if (i + 1 < steps)
            nanosleep(&step, NULL);
    }
    return false;
}

/* cgroup_kill_remove, trying at most steps times (10 ms apart). */
static bool kill_remove(const char *dir, int steps)
{
    if (!exists(dir))
        return true;
    char file[PATH_MAX];
    if (join_path(file, sizeof file, dir, "cgroup.kill") && exists(file))
        (void)write_text(file, "1");
    const struct timespec step = {0, 10 * 1000 * 1000};
    for (int i = 0; i < steps; i++) {
        if (kill_listed(dir) == 0 && (rmdir(dir) == 0 || errno == ENOENT))
            break;
        if (i + 1 < steps)
            nanosleep(&step, NULL);
    }
    return !exists(dir);
}

bool cgroup_kill_remove(const char *dir)
{
    return kill_remove(dir, KILL_STEPS);
}

/* Is name an engine's subtree's, "e" and 16 lowercase hex digits (cgroup_use_engine)? */
static bool engine_dir_name(const char *name, size_t len)
{
    return len == 17 && name[0] == 'e' && strspn(name + 1, "0123456789abcdef") >= 16;
}

bool cgroup_remove_engine_dir(const char *dir)
{
    char parent[PATH_MAX];
    const char *slash = strrchr(dir, '/');
    if (!slash || slash == dir || (size_t)(slash - dir) >= sizeof parent)
        return false;
    memcpy(parent, dir, (size_t)(slash - dir));
    parent[slash - dir] = '\0';
    const char *name = strrchr(parent, '/');
    name = name ? name + 1 : parent;
    return engine_dir_name(name, strlen(name)) && rmdir(parent) == 0;
}

bool cgroup_kill_empty(const char *dir)
{
    return empty_of_processes(dir, KILL_STEPS, false);
}

/* Does dir's file (memory.events on v2, memory.oom_control on v1) count an OOM kill? */
static bool oom_counted(const char *dir, const char *file)
{
    char path[PATH_MAX];
    if (!join_path(path, sizeof path, dir, file))
        return false;
    char *text = read_text(path);
    for (const char *p = text; p && (p = strstr(p, "oom_kill ")) != NULL; p += 9) {
        /* The word alone at a line's start: not "oom_kill_disable". */
        if (p == text || p[-1] == '\n') {
            long n = strtol(p + 9, NULL, 10);
            free(text);
            return n > 0;
        }
    }
    free(text);
    return false;
}

bool cgroup_oom_killed(const char *dir)
{
    return oom_counted(dir, "memory.events") || oom_counted(dir, "memory.oom_control");
}
