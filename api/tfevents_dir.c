/*
 * tfevents_dir: the log directory follower of tfevents.h (layer 3). It owns
 * the runs found so far, each with its event files and their offsets, the
 * per-run memory of which plugin each tag belongs to, one read buffer, and
 * the cursor entries given by tfevents_set_cursor for files not found yet.
 *
 * A poll walks the tree depth first from the root, names in byte order, one
 * directory descriptor at a time (openat with O_NOFOLLOW on one component,
 * so no symlink anywhere below the root is ever followed), and reads each
 * event file it meets from its offset to its current size while the
 * directory is open. A file's offset moves only past whole records, so a
 * record cut short by a writer is read again, whole, by a later poll. Runs
 * of simple_value records go through tfevents_decode_simple_run; the
 * record it leaves, and every other, through tfrecord_next.
 *
 * Which values are scalars (TensorBoard's rule, plus one fallback): a
 * simple_value always is; a one-element float tensor is when its tag's
 * plugin is "scalars". TF2 writers put the plugin in the metadata of a tag's
 * first value only, so the first plugin_name seen for a tag is remembered
 * for the run (bounded); a tensor value of a tag never declared (a follower
 * resumed from a cursor past the declaration) is taken as a scalar, since
 * every other plugin's tensors have more than one element or are strings.
 */
#include "api/tfevents.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/hmap.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#define READ_CHUNK (1u << 20)     /* bytes read at a time at most (unless a record is larger) */
#define MAX_DIRS_PER_SCAN 16384   /* directories one walk visits at most */
#define MAX_ENTRIES_PER_DIR 65536 /* entries of one directory looked at */
#define MAX_CURSOR_PATH 4096
#define TFEVENTS_MAX_CURSOR_TAGS 4096 /* "run!tag" entries a cursor may hold */

struct tf_file {
    char *name;      /* the file's name in its directory */
    char *path;      /* relative to the root: what the cursor names */
    uint64_t offset; /* the first byte not consumed yet */
    ino_t ino;       /* 0 until seen (a cursor entry does not know it) */
    enum {
        STRETCH_NONE,   /* at a record */
        STRETCH_ZERO,   /* scanning zeros: a hole's start, or damage (not counted yet) */
        STRETCH_DAMAGE, /* scanning a damaged stretch, counted once */
        STRETCH_HOLE,   /* past a hole, counted as one, before the next record */
    } stretch;
    uint64_t zeros_at; /* STRETCH_ZERO: the offset of its first zero byte */
    bool have_tail;
    uint8_t tail[4]; /* the 4 bytes before offset, to know a copy of this file */
};

struct tag_plugin {
    bool scalars;
    bool in_cursor; /* a non-scalar plugin's one-element float tensor came: the cursor says so */
    char tag[];
};

struct tf_run {
    char *name; /* "." or "a/b" */
    struct tf_file **files;
    size_t nfiles, cap;
    struct hmap tags; /* struct tag_plugin by tag */
    size_t ntags;
};

struct pending {     /* a cursor entry for a file or a run not found yet */
    char *path;      /* the file's path; or, with tag, the run's name */
    char *tag;       /* NULL for a file */
    uint64_t offset; /* for a file */
};

struct tfevents_dir {
    int root; /* O_PATH descriptor of the log directory */
    char *name;
    struct tf_run **runs; /* by name */
    size_t nruns, rcap;
    size_t nfiles;
    struct pending *pending; /* by path */
    size_t npending;
    bool polled;
    uint8_t *buf;
    size_t cap;
    struct tfevents_stats stats;
    /* The poll under way. */
    const struct tfevents_limit *lim;
    struct tfevents_poll_result *res;
    tfevents_scalar_fn fn;
    void *ctx;
    bool stop;
    size_t dirs_seen;
    struct tf_run *run;
    char tag[TFEVENTS_MAX_TAG + 1]; /* the current value's tag, NUL-terminated */
    char *last_hole_file;           /* stats.last_hole_file's storage */
};

/* ---- lookups ---- */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Index of the first run whose name is >= name. */
static size_t run_slot(const struct tfevents_dir *d, const char *name)
{
    size_t lo = 0, hi = d->nruns;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(d->runs[mid]->name, name) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void take_declarations(struct tfevents_dir *d, struct tf_run *r);

static bool tag_eq(const void *item, const void *key)
{
    return strcmp(((const struct tag_plugin *)item)->tag, key) == 0;
}

/* The run named name, created when new; NULL when TFEVENTS_MAX_RUNS are known. */
static struct tf_run *run_get(struct tfevents_dir *d, const char *name)
{
    size_t i = run_slot(d, name);
    if (i < d->nruns && strcmp(d->runs[i]->name, name) == 0)
        return d->runs[i];
    if (d->nruns >= TFEVENTS_MAX_RUNS)
        return NULL;
    if (d->nruns == d->rcap) {
        d->rcap = d->rcap ? d->rcap * 2 : 8;
        d->runs = xreallocarray(d->runs, d->rcap, sizeof *d->runs);
    }
    struct tf_run *r = xcalloc(1, sizeof *r);
    r->name = xstrdup(name);
    memmove(d->runs + i + 1, d->runs + i, (d->nruns - i) * sizeof *d->runs);
    d->runs[i] = r;
    d->nruns++;
    d->stats.runs = d->nruns;
    take_declarations(d, r);
    return r;
}

static size_t pending_slot(const struct tfevents_dir *d, const char *path)
{
    size_t lo = 0, hi = d->npending;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(d->pending[mid].path, path) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Gives new run r the "run!tag" declarations a cursor held for it. */
static void take_declarations(struct tfevents_dir *d, struct tf_run *r)
{
    size_t p = pending_slot(d, r->name);
    while (p < d->npending && strcmp(d->pending[p].path, r->name) == 0) {
        struct pending *e = &d->pending[p];
        if (e->tag == NULL) {
            p++;
            continue;
        }
        size_t len = strlen(e->tag);
        uint64_t h = hmap_hash(e->tag, len);
        if (r->ntags < TFEVENTS_MAX_TAGS && hmap_get(&r->tags, h, tag_eq, e->tag) == NULL) {
            struct tag_plugin *tp = xmalloc(sizeof *tp + len + 1);
            memcpy(tp->tag, e->tag, len + 1);
            tp->scalars = false;
            tp->in_cursor = true;
            hmap_put(&r->tags, h, tp);
            r->ntags++;
        }
        free(e->path);
        free(e->tag);
        memmove(e, e + 1, (d->npending - p - 1) * sizeof *e);
        d->npending--;
    }
}

/* The file name in run r, created when new (taking a cursor's offset); NULL past the limit. */
static struct tf_file *file_get(struct tfevents_dir *d, struct tf_run *r, const char *name)
{
    size_t lo = 0, hi = r->nfiles;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(r->files[mid]->name, name);
        if (c == 0)
            return r->files[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (d->nfiles >= TFEVENTS_MAX_FILES)
        return NULL;
    if (r->nfiles == r->cap) {
        r->cap = r->cap ? r->cap * 2 : 4;
        r->files = xreallocarray(r->files, r->cap, sizeof *r->files);
    }
    struct tf_file *f = xcalloc(1, sizeof *f);
    f->name = xstrdup(name);
    f->path = strcmp(r->name, ".") == 0 ? xstrdup(name) : xasprintf("%s/%s", r->name, name);
    size_t p = pending_slot(d, f->path);
    if (p < d->npending && strcmp(d->pending[p].path, f->path) == 0 && d->pending[p].tag == NULL) {
        f->offset = d->pending[p].offset;
        free(d->pending[p].path);
        memmove(d->pending + p, d->pending + p + 1, (d->npending - p - 1) * sizeof *d->pending);
        d->npending--;
    }
    memmove(r->files + lo + 1, r->files + lo, (r->nfiles - lo) * sizeof *r->files);
    r->files[lo] = f;
    r->nfiles++;
    d->nfiles++;
    d->stats.files = d->nfiles;
    return f;
}

/* ---- delivering values ---- */

/* Whether v (of the current run) is a scalar, remembering the plugin its tag declares. */
static bool is_scalar(struct tfevents_dir *d, const struct tfevents_value *v, const char *tag)
{
    if (v->plugin == NULL && v->kind != TFEVENTS_TENSOR)
        return v->kind == TFEVENTS_SIMPLE; /* nothing to remember or look up */
    struct tf_run *r = d->run;
    uint64_t h = hmap_hash(tag, v->tag_len);
    struct tag_plugin *tp = hmap_get(&r->tags, h, tag_eq, tag);
    if (tp == NULL && v->plugin != NULL && r->ntags < TFEVENTS_MAX_TAGS) {
        tp = xmalloc(sizeof *tp + v->tag_len + 1);
        memcpy(tp->tag, tag, v->tag_len + 1);
        tp->scalars = v->plugin_len == 7 && memcmp(v->plugin, "scalars", 7) == 0;
        tp->in_cursor = false;
        hmap_put(&r->tags, h, tp);
        r->ntags++;
    }
    switch (v->kind) {
    case TFEVENTS_SIMPLE:
        return true;
    case TFEVENTS_TENSOR:
        if (tp != NULL) {
            tp->in_cursor = !tp->scalars;
            return tp->scalars;
        }
        return v->plugin == NULL || (v->plugin_len == 7 && memcmp(v->plugin, "scalars", 7) == 0);
    default:
        return false;
    }
}

/*
 * Copies a tag of n <= TFEVENTS_MAX_TAG bytes. Most tags are 4 to 16 bytes:
 * two overlapping moves of 4 or 8 bytes, where memcpy of a length known only
 * now is a call and a branch on the size for every scalar.
 */
static inline void copy_tag(char *dst, const char *src, size_t n)
{
    if (n >= 8 && n <= 16) {
        memcpy(dst, src, 8);
        memcpy(dst + n - 8, src + n - 8, 8);
    } else if (n >= 4 && n < 8) {
        memcpy(dst, src, 4);
        memcpy(dst + n - 4, src + n - 4, 4);
    } else {
        memcpy(dst, src, n);
    }
}

static int on_value(void *ctx, const struct tfevents_value *v)
{
    struct tfevents_dir *d = ctx;
    copy_tag(d->tag, v->tag, v->tag_len);
    d->tag[v->tag_len] = '\0';
    const char *tag = d->tag;
    if (!is_scalar(d, v, tag)) {
        d->stats.other_values++;
        return 0;
    }
    struct tfevents_scalar s = {d->run->name, tag, v->step, v->wall_time, v->value};
    d->stats.scalars++;
    d->res->scalars++;
    if (d->fn)
        d->fn(d->ctx, &s);
    return 0;
}

/* ---- reading one file ---- */

static bool limit_reached(const struct tfevents_dir *d)
{
    const struct tfevents_limit *lim = d->lim;
    if (lim == NULL)
        return false;
    return (lim->max_bytes && d->res->bytes >= lim->max_bytes) ||
           (lim->max_records && d->res->records >= lim->max_records);
}

/* What is left of a limit of lim (0: none) once used is spent; limit_reached says it is not. */
static uint64_t left_of(uint64_t lim, uint64_t used)
{
    return lim ? lim - used : 0;
}

/* Moves f past n bytes of what it has read. */
static void consume(struct tfevents_dir *d, struct tf_file *f, uint64_t n)
{
    f->offset += n;
    d->stats.bytes += n;
    d->res->bytes += n;
}

/*
 * Whether the file open as fd, which replaced f's file under the same name
 * (a new inode), is a copy of it grown further (rsync without --inplace, a
 * copy tool): its bytes just before f's offset are those f saw last. Four
 * bytes suffice: they are the CRC of the record that ends there.
 */
static bool same_content(int fd, const struct tf_file *f, uint64_t size)
{
    uint8_t tail[4];
    return f->have_tail && size >= f->offset && f->offset >= 4 &&
           pread(fd, tail, 4, (off_t)(f->offset - 4)) == 4 && memcmp(tail, f->tail, 4) == 0;
}

/*
 * Counts n bytes at p (file offset at) that no record starts in. A damaged
 * stretch counts once; zeros count once it is known they were no hole's
 * start (see skip_hole), and after a hole only bytes that are not zeros do.
 */
static void scanned_past(struct tfevents_dir *d, struct tf_file *f, const uint8_t *p, uint64_t n,
                         uint64_t at)
{
    bool zeros = true;
    for (uint64_t i = 0; i < n && zeros; i++)
        zeros = p[i] == 0;
    if (zeros && f->stretch == STRETCH_NONE) {
        f->stretch = STRETCH_ZERO;
        f->zeros_at = at;
    } else if (!zeros && f->stretch != STRETCH_DAMAGE) {
        d->stats.resyncs++;
        f->stretch = STRETCH_DAMAGE;
    }
    d->stats.resync_bytes += n;
}

/* Notes the hole [start, end) of file f: the last one, and one more unless it goes on. */
static void note_hole(struct tfevents_dir *d, const struct tf_file *f, uint64_t start, uint64_t end,
                      bool another)
{
    if (another) {
        d->stats.holes++;
        if (d->last_hole_file == NULL || strcmp(d->last_hole_file, f->path) != 0) {
            free(d->last_hole_file);
            d->last_hole_file = xstrdup(f->path);
            d->stats.last_hole_file = d->last_hole_file;
        }
    }
    d->stats.last_hole_at = start;
    d->stats.last_hole_len = end - start;
}

/*
 * A record at offset at ends the zeros of file fd that f was scanning: damage
 * when they were written, a hole when they were not (one too small for
 * skip_hole, say a copy's); fewer zeros than a header in a hole are the end
 * of one skipped before, when reading resumed from a cursor: nothing new.
 */
static void zeros_end(struct tfevents_dir *d, struct tf_file *f, int fd, uint64_t at)
{
    if (lseek(fd, (off_t)f->zeros_at, SEEK_HOLE) != (off_t)f->zeros_at)
        d->stats.resyncs++;
    else if (at - f->zeros_at >= TFRECORD_HEADER)
        note_hole(d, f, f->zeros_at, at, true);
}

/*
 * Skips the hole (if any) of file fd at the read position base + len, when
 * the unconsumed bytes buf[pos..len) are zeros: a hole reads as zeros, and
 * a header is never 12 zero bytes (the masked CRC of a zero length is not
 * zero), so no record can start before the last TFRECORD_HEADER - 1 bytes
 * of the hole. Moves f's offset there, counted as a hole (not damage), and
 * returns true; false when there is no hole to skip (or SEEK_DATA is not
 * supported: the bytes are then read and scanned as before).
 */
static bool skip_hole(struct tfevents_dir *d, struct tf_file *f, int fd, uint64_t size,
                      uint64_t base, size_t pos, size_t len)
{
    for (size_t i = pos; i < len; i++)
        if (d->buf[i] != 0)
            return false;
    uint64_t at = base + len;
    off_t data = lseek(fd, (off_t)at, SEEK_DATA);
    uint64_t next;
    if (data >= 0)
        next = (uint64_t)data < size ? (uint64_t)data : size;
    else if (errno == ENXIO)
        next = size; /* a hole to the end of the file */
    else
        return false;
    if (next < at + TFRECORD_HEADER)
        return false;
    uint64_t skipped = next - (TFRECORD_HEADER - 1) - (base + pos);
    /* Zeros read just before it are the hole's start, not damage. */
    uint64_t start = f->stretch == STRETCH_ZERO ? f->zeros_at : base + pos;
    bool same_hole = f->stretch == STRETCH_HOLE && d->last_hole_file &&
                     strcmp(d->last_hole_file, f->path) == 0; /* read in two steps */
    note_hole(d, f, same_hole ? d->stats.last_hole_at : start, next, !same_hole);
    f->stretch = STRETCH_HOLE;
    d->stats.resync_bytes += skipped;
    d->stats.hole_bytes += skipped;
    consume(d, f, skipped);
    return true;
}

/* Reads and decodes file f (of run r, in directory dirfd) from its offset to its size now. */
static void read_file(struct tfevents_dir *d, struct tf_run *r, struct tf_file *f, int dirfd)
{
    struct stat st;
    if (fstatat(dirfd, f->name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
        return;
    if (st.st_ino == f->ino && (uint64_t)st.st_size == f->offset)
        return; /* nothing new: the common case costs one fstatat */
    int fd = openat(dirfd, f->name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return;
    }
    uint64_t size = (uint64_t)st.st_size;
    bool replaced = f->ino != 0 && st.st_ino != f->ino && !same_content(fd, f, size);
    if (replaced || size < f->offset) {
        /* Truncated, or another file now: read it from the start. */
        d->stats.truncated++;
        f->offset = 0;
        f->stretch = STRETCH_NONE;
        f->have_tail = false;
    }
    f->ino = st.st_ino;
    uint64_t base = f->offset; /* the file offset of buf[0] */
    uint64_t base_at_start = base;
    size_t len = 0, pos = 0;
    d->run = r;
    while (base + pos < size && !d->stop) {
        if (limit_reached(d)) {
            d->stop = true;
            d->res->more = true;
            break;
        }
        if (f->stretch == STRETCH_NONE && len - pos >= TFRECORD_OVERHEAD) {
            /* The common records in bulk; tfrecord_next reads the first one it leaves. */
            uint64_t records = left_of(d->lim ? d->lim->max_records : 0, d->res->records);
            uint64_t bytes = left_of(d->lim ? d->lim->max_bytes : 0, d->res->bytes), taken;
            uint64_t used = tfevents_decode_simple_run(d->buf + pos, len - pos, records, bytes,
                                                       on_value, d, &taken);
            if (taken > 0) {
                d->res->records += taken;
                d->stats.records += taken;
                consume(d, f, used);
                pos += (size_t)used;
                continue;
            }
        }
        struct tfrecord rec;
        const uint8_t *at = d->buf ? d->buf + pos : (const uint8_t *)"";
        enum tfrecord_status st2 = tfrecord_next(at, len - pos, &rec);
        if (st2 == TFRECORD_PARTIAL) {
            if (base + pos + rec.need > size)
                break; /* not yet written */
            if (skip_hole(d, f, fd, size, base, pos, len)) {
                base = f->offset;
                len = pos = 0;
                continue;
            }
            if (len > pos)
                memmove(d->buf, d->buf + pos, len - pos);
            base += pos;
            len -= pos;
            pos = 0;
            /* A chunk, or the whole record, or what the file has left if less (small logs). */
            uint64_t rest = (size - base + 0xffff) & ~(uint64_t)0xffff;
            size_t want = rest < READ_CHUNK ? (size_t)rest : READ_CHUNK;
            if (want < rec.need)
                want = (size_t)rec.need;
            if (want > d->cap) {
                d->buf = xrealloc(d->buf, want);
                d->cap = want;
            }
            uint64_t left = size - (base + len);
            size_t room = d->cap - len;
            ssize_t n =
                pread(fd, d->buf + len, left < room ? (size_t)left : room, (off_t)(base + len));
            if (n <= 0)
                break; /* the file shrank under us, or an I/O error: try again next poll */
            len += (size_t)n;
            continue;
        }
        d->res->records++;
        if (st2 == TFRECORD_RESYNC) {
            scanned_past(d, f, at, rec.consumed, base + pos);
            d->res->records--; /* garbage is no record */
        } else {
            if (f->stretch == STRETCH_ZERO)
                zeros_end(d, f, fd, base + pos);
            f->stretch = STRETCH_NONE;
        }
        if (st2 == TFRECORD_OVERSIZED) {
            if (base + pos + rec.consumed > size) {
                d->res->records--;
                break; /* skip it once it is all there */
            }
            d->stats.oversized++;
            consume(d, f, rec.consumed);
            base = f->offset;
            len = pos = 0;
            continue;
        }
        if (st2 == TFRECORD_BAD)
            d->stats.bad_crc++;
        if (st2 == TFRECORD_OK) {
            uint64_t bad = 0;
            d->stats.records++;
            if (tfevents_decode(rec.data, rec.len, on_value, d, &bad) == TFEVENTS_DECODE_BAD)
                d->stats.bad_proto++;
            d->stats.bad_values += bad;
        }
        consume(d, f, rec.consumed);
        pos += (size_t)rec.consumed;
    }
    if (f->offset >= 4 && f->offset != base_at_start)
        f->have_tail = pread(fd, f->tail, 4, (off_t)(f->offset - 4)) == 4;
    close(fd);
    if (d->cap > READ_CHUNK) { /* a large record came by: give the memory back */
        free(d->buf);
        d->buf = NULL;
        d->cap = 0;
    }
}

/* ---- walking the tree ---- */

struct entries {
    char **names;
    size_t n, cap;
};

static void entries_add(struct entries *e, const char *name)
{
    if (e->n == e->cap) {
        e->cap = e->cap ? e->cap * 2 : 16;
        e->names = xreallocarray(e->names, e->cap, sizeof *e->names);
    }
    e->names[e->n++] = xstrdup(name);
}

static void entries_free(struct entries *e)
{
    for (size_t i = 0; i < e->n; i++)
        free(e->names[i]);
    free(e->names);
}

/* Visits the open directory fd (relative path rel, "" for the root) and below it. */
static void walk(struct tfevents_dir *d, int fd, struct strbuf *rel, int depth)
{
    DIR *dir = fdopendir(fd);
    if (dir == NULL) {
        close(fd);
        return;
    }
    struct entries files = {0}, subdirs = {0};
    struct dirent *e;
    size_t seen = 0;
    while ((e = readdir(dir)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (++seen > MAX_ENTRIES_PER_DIR) {
            d->stats.skipped_entries++;
            break;
        }
        unsigned char type = e->d_type;
        if (type == DT_UNKNOWN) {
            struct stat st;
            if (fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
                continue;
            type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISREG(st.st_mode) ? DT_REG : DT_LNK;
        }
        bool events = strstr(e->d_name, "tfevents") != NULL;
        if (type == DT_DIR)
            entries_add(&subdirs, e->d_name);
        else if (type == DT_REG && events)
            entries_add(&files, e->d_name);
        else if (events)
            d->stats.skipped_entries++; /* a symlink, a FIFO, a device named like an event file */
    }
    if (files.n)
        qsort(files.names, files.n, sizeof *files.names, cmp_str);
    if (subdirs.n)
        qsort(subdirs.names, subdirs.n, sizeof *subdirs.names, cmp_str);

    if (files.n) {
        struct tf_run *r = run_get(d, rel->len ? strbuf_str(rel) : ".");
        for (size_t i = 0; i < files.n && !d->stop; i++) {
            struct tf_file *f = r ? file_get(d, r, files.names[i]) : NULL;
            if (f == NULL)
                d->stats.skipped_entries++;
            else
                read_file(d, r, f, fd);
        }
    }
    size_t keep = rel->len;
    for (size_t i = 0; i < subdirs.n && !d->stop; i++) {
        if (depth + 1 > TFEVENTS_MAX_DEPTH || d->dirs_seen >= MAX_DIRS_PER_SCAN) {
            d->stats.skipped_entries++;
            continue;
        }
        int sub = openat(fd, subdirs.names[i],
                         O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (sub < 0)
            continue;
        d->dirs_seen++;
        if (keep)
            strbuf_addc(rel, '/');
        strbuf_adds(rel, subdirs.names[i]);
        walk(d, sub, rel, depth + 1);
        strbuf_truncate(rel, keep);
    }
    entries_free(&files);
    entries_free(&subdirs);
    closedir(dir);
}

/* ---- the public API ---- */

struct tfevents_dir *tfevents_open_fd(int dirfd, const char *name, struct strbuf *err)
{
    int fd = openat(dirfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        strbuf_addf(err, "%s: %s", name, strerror(errno));
        return NULL;
    }
    struct tfevents_dir *d = xcalloc(1, sizeof *d);
    d->root = fd;
    d->name = xstrdup(name);
    return d;
}

struct tfevents_dir *tfevents_open(const char *path, struct strbuf *err)
{
    int fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        strbuf_addf(err, "%s: %s", path, strerror(errno));
        return NULL;
    }
    struct tfevents_dir *d = tfevents_open_fd(fd, path, err);
    close(fd);
    return d;
}

void tfevents_close(struct tfevents_dir *d)
{
    if (d == NULL)
        return;
    for (size_t i = 0; i < d->nruns; i++) {
        struct tf_run *r = d->runs[i];
        for (size_t j = 0; j < r->nfiles; j++) {
            free(r->files[j]->name);
            free(r->files[j]->path);
            free(r->files[j]);
        }
        for (size_t k = 0; k < r->tags.cap; k++)
            free(r->tags.slots[k].item);
        hmap_free(&r->tags);
        free(r->files);
        free(r->name);
        free(r);
    }
    for (size_t i = 0; i < d->npending; i++) {
        free(d->pending[i].path);
        free(d->pending[i].tag);
    }
    free(d->pending);
    free(d->runs);
    free(d->buf);
    free(d->name);
    free(d->last_hole_file);
    close(d->root);
    free(d);
}

int tfevents_poll(struct tfevents_dir *d, const struct tfevents_limit *lim, tfevents_scalar_fn fn,
                  void *ctx, struct tfevents_poll_result *res, struct strbuf *err)
{
    struct tfevents_poll_result local;
    if (res == NULL)
        res = &local;
    memset(res, 0, sizeof *res);
    d->polled = true;
    int fd = openat(d->root, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        strbuf_addf(err, "%s: %s", d->name, strerror(errno));
        return -1;
    }
    d->lim = lim;
    d->res = res;
    d->fn = fn;
    d->ctx = ctx;
    d->stop = false;
    d->dirs_seen = 0;
    struct strbuf rel = STRBUF_INIT;
    walk(d, fd, &rel, 0);
    strbuf_free(&rel);
    d->res = NULL;
    d->lim = NULL;
    return 0;
}

const struct tfevents_stats *tfevents_stats(const struct tfevents_dir *d)
{
    return &d->stats;
}

size_t tfevents_run_count(const struct tfevents_dir *d)
{
    return d->nruns;
}

const char *tfevents_run_name(const struct tfevents_dir *d, size_t i)
{
    return i < d->nruns ? d->runs[i]->name : NULL;
}

/* ---- the cursor ----
 *
 * "path:offset" per file read (path relative to the root), and "run!tag" per
 * tag a non-scalar plugin declared for one-element float tensors (so a reader
 * resumed past the declaration still skips them), comma-separated, in byte
 * order. Bytes other than [A-Za-z0-9._/+-] are %XX, so ',', ':' and '!' only
 * ever separate.
 */

/* Bytes a cursor keeps as they are; every other byte is %XX. */
static bool plain(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-' || c == '/' || c == '+';
}

static void escaped(struct strbuf *out, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (plain(*p)) {
            strbuf_addc(out, (char)*p);
        } else {
            strbuf_addc(out, '%');
            strbuf_addc(out, hex[*p >> 4]);
            strbuf_addc(out, hex[*p & 15]);
        }
    }
}

struct centry {
    const char *a, *b; /* path and NULL (with offset), or run and tag */
    uint64_t offset;
};

static int centry_cmp(const void *x, const void *y)
{
    const struct centry *p = x, *q = y;
    int c = (p->b != NULL) - (q->b != NULL);
    if (c == 0)
        c = strcmp(p->a, q->a);
    if (c == 0 && p->b)
        c = strcmp(p->b, q->b);
    return c;
}

void tfevents_cursor(const struct tfevents_dir *d, struct strbuf *out)
{
    struct centry *e = NULL;
    size_t n = 0, cap = 0;
#define CENTRY_ADD(A, B, O)                                                                        \
    do {                                                                                           \
        if (n == cap) {                                                                            \
            cap = cap ? cap * 2 : 64;                                                              \
            e = xreallocarray(e, cap, sizeof *e);                                                  \
        }                                                                                          \
        e[n++] = (struct centry){(A), (B), (O)};                                                   \
    } while (0)
    for (size_t i = 0; i < d->nruns; i++) {
        const struct tf_run *r = d->runs[i];
        for (size_t j = 0; j < r->nfiles; j++)
            if (r->files[j]->offset > 0)
                CENTRY_ADD(r->files[j]->path, NULL, r->files[j]->offset);
        for (size_t k = 0; k < r->tags.cap; k++) {
            const struct tag_plugin *tp = r->tags.slots[k].item;
            if (tp && tp->in_cursor)
                CENTRY_ADD(r->name, tp->tag, 0);
        }
    }
    for (size_t i = 0; i < d->npending; i++)
        CENTRY_ADD(d->pending[i].path, d->pending[i].tag, d->pending[i].offset);
#undef CENTRY_ADD
    if (n > 1)
        qsort(e, n, sizeof *e, centry_cmp);
    size_t start = out->len;
    for (size_t i = 0; i < n; i++) {
        if (out->len > start)
            strbuf_addc(out, ',');
        escaped(out, e[i].a);
        if (e[i].b) {
            strbuf_addc(out, '!');
            escaped(out, e[i].b);
        } else {
            strbuf_addf(out, ":%" PRIu64, e[i].offset);
        }
    }
    free(e);
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

/* Whether path is relative, with no empty, "." or ".." component ("." alone: allow_dot). */
static bool path_ok(const char *path, bool allow_dot)
{
    const char *p = path;
    if (allow_dot && strcmp(path, ".") == 0)
        return true;
    if (*p == '\0')
        return false;
    for (;;) {
        const char *slash = strchr(p, '/');
        size_t n = slash ? (size_t)(slash - p) : strlen(p);
        if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
            return false;
        if (!slash)
            return true;
        p = slash + 1;
    }
}

/* Unescapes s[*i..n) up to a byte of stop (or the end) into out; NULL, or what is wrong. */
static const char *unescape(const char *s, size_t n, size_t *i, const char *stop,
                            struct strbuf *out)
{
    for (; *i < n && !strchr(stop, s[*i]); (*i)++) {
        if (out->len >= MAX_CURSOR_PATH)
            return "name too long";
        if (s[*i] == '%') {
            int hi = *i + 2 < n ? hexval(s[*i + 1]) : -1, lo = hi >= 0 ? hexval(s[*i + 2]) : -1;
            if (lo < 0 || (hi == 0 && lo == 0))
                return "bad %-escape";
            strbuf_addc(out, (char)(hi * 16 + lo));
            *i += 2;
        } else if (plain((unsigned char)s[*i])) {
            strbuf_addc(out, s[*i]);
        } else {
            return "unexpected character";
        }
    }
    return NULL;
}

/* Parses one entry of s[0..n) into e; NULL on success, else what is wrong. */
static const char *parse_entry(const char *s, size_t n, struct pending *e)
{
    struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;
    size_t i = 0;
    uint64_t off = 0;
    const char *why = unescape(s, n, &i, ":!", &a);
    if (why == NULL && i == n)
        why = "missing ':offset'";
    if (why == NULL && s[i] == '!') {
        i++;
        why = unescape(s, n, &i, "", &b);
        if (why == NULL && !path_ok(strbuf_str(&a), true))
            why = "not a run";
        if (why == NULL && (b.len == 0 || b.len > TFEVENTS_MAX_TAG))
            why = "bad tag";
    } else if (why == NULL) {
        size_t digits = 0;
        if (!path_ok(strbuf_str(&a), false))
            why = "not a relative path";
        for (i++; why == NULL && i < n; i++, digits++) {
            if (s[i] < '0' || s[i] > '9' || off > (UINT64_C(1) << 62))
                why = "bad offset";
            else
                off = off * 10 + (uint64_t)(s[i] - '0');
        }
        if (why == NULL && digits == 0)
            why = "bad offset";
    }
    if (why != NULL) {
        strbuf_free(&a);
        strbuf_free(&b);
        return why;
    }
    e->path = strbuf_detach(&a, NULL);
    e->tag = b.len ? strbuf_detach(&b, NULL) : NULL;
    strbuf_free(&b);
    e->offset = off;
    return NULL;
}

static int by_path(const void *a, const void *b)
{
    const struct pending *p = a, *q = b;
    int c = strcmp(p->path, q->path);
    if (c == 0)
        c = (p->tag != NULL) - (q->tag != NULL);
    if (c == 0 && p->tag)
        c = strcmp(p->tag, q->tag);
    return c;
}

int tfevents_set_cursor(struct tfevents_dir *d, const char *cursor, struct strbuf *err)
{
    if (d->polled || d->npending) {
        strbuf_adds(err, "cursor: set only once, before the first poll");
        return -1;
    }
    struct pending *list = NULL;
    size_t n = 0, cap = 0;
    const char *why = NULL;
    const char *s = cursor;
    while (*s && why == NULL) {
        const char *comma = strchr(s, ',');
        size_t len = comma ? (size_t)(comma - s) : strlen(s);
        if (n >= TFEVENTS_MAX_FILES + TFEVENTS_MAX_CURSOR_TAGS) {
            why = "too many entries";
            break;
        }
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            list = xreallocarray(list, cap, sizeof *list);
        }
        why = parse_entry(s, len, &list[n]);
        if (why == NULL)
            n++;
        s += len + (comma ? 1 : 0);
        if (comma && *s == '\0')
            why = "empty entry";
    }
    if (why == NULL && n > 1) {
        qsort(list, n, sizeof *list, by_path);
        for (size_t i = 1; i < n && why == NULL; i++)
            if (by_path(&list[i - 1], &list[i]) == 0 ||
                (!list[i].tag && !list[i - 1].tag && strcmp(list[i - 1].path, list[i].path) == 0))
                why = "an entry given twice";
    }
    if (why != NULL) {
        strbuf_addf(err, "cursor: entry %zu: %s", n + 1, why);
        for (size_t i = 0; i < n; i++) {
            free(list[i].path);
            free(list[i].tag);
        }
        free(list);
        return -1;
    }
    d->pending = list;
    d->npending = n;
    return 0;
}
