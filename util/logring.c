/*
 * logring: the bounded log line store (see logring.h).
 *
 * The ring owns two fixed allocations made once by logring_new:
 *   arena  max_bytes of text; each line is written contiguously with its
 *          NUL at `tail`. When a line does not fit before the end of the
 *          arena it goes to offset 0 and the bytes left at the end stay
 *          unused until the lines before them are dropped. Free space is
 *          the gap between `tail` and the oldest line's offset.
 *   index  max_lines entries (offset, length, source, flags), a circular
 *          array whose slot `head` holds the oldest line, numbered
 *          first_seq; line seq sits in slot (head + seq - first_seq) mod
 *          max_lines, which makes logring_get O(1).
 * Storing a line drops the oldest ones until both the index and the arena
 * have room. Unfinished lines wait in a small table of per-source buffers
 * that grow up to max_line; a scratch strbuf takes the sanitizer's output
 * for lines that are not plain ASCII. Callers: the TUI's log stream
 * callbacks (append) and widgets/logview (read).
 */
#include "util/logring.h"

#include <stdlib.h>
#include <string.h>

#include "util/strbuf.h"
#include "util/utf8.h"
#include "util/xalloc.h"

#define MIN_BYTES 4096u
#define MAX_BYTES (1u << 30)
#define MIN_LINES 16u
#define MIN_LINE 64u
#define MAX_PARTIALS 4096u

struct entry {
    uint32_t off; /* arena offset of the text */
    uint32_t len; /* bytes without the NUL */
    uint32_t source;
    uint32_t flags;
};

/* A source's unfinished line. */
struct partial {
    uint32_t source;
    bool used; /* assigned to source */
    char *buf; /* raw bytes, not yet sanitized */
    size_t len;
    size_t cap;     /* at most max_line */
    uint64_t stamp; /* tick of the last append, for reuse of the stalest */
};

struct logring {
    char *arena;
    size_t max_bytes;
    struct entry *index;
    size_t max_lines;
    size_t max_line;
    size_t max_partials;

    size_t head;        /* index slot of the oldest line */
    size_t count;       /* lines held */
    size_t tail;        /* arena offset where the next line may go */
    uint64_t first_seq; /* seq of the oldest line; the next seq when empty */
    uint64_t dropped;
    uint64_t split;

    struct partial *partials;
    uint64_t tick;
    struct strbuf scratch; /* sanitizer output */
};

/* ASCII lower case; every other byte as it is. */
static unsigned char fold(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') ? (unsigned char)(c | 0x20) : c;
}

/* Defaults filled in and every limit clamped to what the ring supports. */
static void clamp_config(const struct logring_config *in, struct logring_config *out)
{
    struct logring_config c = {0};
    if (in)
        c = *in;
    if (c.max_bytes == 0)
        c.max_bytes = LOGRING_DEFAULT_BYTES;
    if (c.max_bytes < MIN_BYTES)
        c.max_bytes = MIN_BYTES;
    if (c.max_bytes > MAX_BYTES)
        c.max_bytes = MAX_BYTES;
    if (c.max_lines == 0)
        c.max_lines = LOGRING_DEFAULT_LINES;
    if (c.max_lines < MIN_LINES)
        c.max_lines = MIN_LINES;
    if (c.max_lines > c.max_bytes) /* a line takes at least a byte: more would never fill */
        c.max_lines = c.max_bytes;
    if (c.max_line == 0)
        c.max_line = LOGRING_DEFAULT_LINE;
    if (c.max_line < MIN_LINE)
        c.max_line = MIN_LINE;
    /* Sanitizing may triple a line (a bad byte becomes U+FFFD): it must still fit. */
    if (c.max_line > c.max_bytes / 4)
        c.max_line = c.max_bytes / 4;
    if (c.max_partials == 0)
        c.max_partials = LOGRING_DEFAULT_PARTIALS;
    if (c.max_partials > MAX_PARTIALS)
        c.max_partials = MAX_PARTIALS;
    *out = c;
}

struct logring *logring_new(const struct logring_config *cfg)
{
    struct logring_config c;
    clamp_config(cfg, &c);
    struct logring *r = xcalloc(1, sizeof *r);
    r->max_bytes = c.max_bytes;
    r->max_lines = c.max_lines;
    r->max_line = c.max_line;
    r->max_partials = c.max_partials;
    r->arena = xmalloc(r->max_bytes);
    r->index = xreallocarray(NULL, r->max_lines, sizeof *r->index);
    r->partials = xcalloc(r->max_partials, sizeof *r->partials);
    r->first_seq = 1;
    return r;
}

void logring_free(struct logring *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->max_partials; i++)
        free(r->partials[i].buf);
    free(r->partials);
    strbuf_free(&r->scratch);
    free(r->index);
    free(r->arena);
    free(r);
}

void logring_limits(const struct logring *r, struct logring_config *out)
{
    out->max_bytes = r->max_bytes;
    out->max_lines = r->max_lines;
    out->max_line = r->max_line;
    out->max_partials = r->max_partials;
}

/* Forgets the oldest line. */
static void drop_oldest(struct logring *r)
{
    r->head = (r->head + 1) % r->max_lines;
    r->count--;
    r->first_seq++;
    r->dropped++;
}

/*
 * The arena offset where need bytes go, dropping the oldest lines until
 * there is room (need <= max_bytes, so an empty ring always has it).
 */
static size_t make_room(struct logring *r, size_t need)
{
    for (;;) {
        if (r->count == 0) {
            r->tail = 0;
            r->head = 0;
            return 0;
        }
        if (r->count < r->max_lines) {
            size_t h = r->index[r->head].off;
            if (r->tail > h) { /* held text is [h, tail): room after it, or from 0 */
                if (need <= r->max_bytes - r->tail)
                    return r->tail;
                if (need <= h)
                    return 0;
            } else if (need <= h - r->tail) { /* wrapped: room is [tail, h) */
                return r->tail;
            }
        }
        drop_oldest(r);
    }
}

/* Stores n bytes of finished, sanitized text as the next line. */
static void store(struct logring *r, const char *text, size_t n, uint32_t source, unsigned flags)
{
    size_t at = make_room(r, n + 1);
    memcpy(r->arena + at, text, n);
    r->arena[at + n] = '\0';
    struct entry *e = &r->index[(r->head + r->count) % r->max_lines];
    e->off = (uint32_t)at;
    e->len = (uint32_t)n;
    e->source = source;
    e->flags = flags;
    r->tail = at + n + 1;
    r->count++;
    if (flags & LOGRING_SPLIT)
        r->split++;
}

/* True when the bytes need no sanitizing: printable ASCII and tabs only. */
static bool plain_ascii(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        if ((c < 0x20 && c != '\t') || c >= 0x7F)
            return false;
    }
    return true;
}

/* Sanitizes n raw bytes (n <= max_line) and stores them as a line. */
static void store_raw(struct logring *r, const char *p, size_t n, uint32_t source, unsigned flags)
{
    if (plain_ascii(p, n)) {
        store(r, p, n, source, flags);
        return;
    }
    strbuf_reset(&r->scratch);
    utf8_sanitize(&r->scratch, p, n, UTF8_KEEP_TAB);
    store(r, strbuf_str(&r->scratch), r->scratch.len, source, flags);
}

/*
 * Where to cut p at or before offset want, c being the byte at want, so
 * that no UTF-8 character is split (want itself when the bytes are invalid).
 */
static size_t char_cut(const char *p, size_t want, unsigned char c)
{
    size_t cut = want;
    for (int back = 0; back < 3 && cut > 1 && (c & 0xC0) == 0x80; back++)
        c = (unsigned char)p[--cut];
    return (c & 0xC0) == 0x80 ? want : cut;
}

/* Last '\r' in p[0..n), or NULL. */
static const char *last_cr(const char *p, size_t n)
{
    while (n > 0) {
        if (p[--n] == '\r')
            return p + n;
    }
    return NULL;
}

/*
 * Stores a complete raw line: carriage returns resolved (see logring.h),
 * then split into pieces of at most max_line bytes.
 */
static void commit_line(struct logring *r, const char *p, size_t n, uint32_t source)
{
    while (n > 0 && p[n - 1] == '\r')
        n--;
    const char *cr = last_cr(p, n);
    if (cr) {
        n -= (size_t)(cr + 1 - p);
        p = cr + 1;
    }
    while (n > r->max_line) {
        size_t cut = char_cut(p, r->max_line, (unsigned char)p[r->max_line]);
        store_raw(r, p, cut, source, LOGRING_SPLIT);
        p += cut;
        n -= cut;
    }
    store_raw(r, p, n, source, 0);
}

uint64_t logring_tick(const struct logring *r)
{
    return r->tick;
}

bool logring_partial(const struct logring *r, bool any, uint32_t source, struct strbuf *out,
                     uint32_t *from)
{
    const struct partial *best = NULL;
    for (size_t i = 0; i < r->max_partials; i++) {
        const struct partial *p = &r->partials[i];
        if (p->used && p->len > 0 && (any || p->source == source) &&
            (best == NULL || p->stamp > best->stamp))
            best = p;
    }
    strbuf_reset(out);
    if (best == NULL)
        return false;
    const char *s = best->buf;
    size_t n = best->len;
    while (n > 0 && s[n - 1] == '\r')
        n--;
    const char *cr = last_cr(s, n);
    if (cr) {
        n -= (size_t)(cr + 1 - s);
        s = cr + 1;
    }
    /* A character cut by the read ends the line for now: wait for its other bytes. */
    for (size_t k = 1; k <= 3 && k <= n; k++) {
        unsigned char c = (unsigned char)s[n - k];
        if ((c & 0xc0) == 0x80)
            continue;
        size_t need = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
        if (need > k)
            n -= k;
        break;
    }
    utf8_sanitize(out, s, n, UTF8_KEEP_TAB);
    *from = best->source;
    return out->len > 0;
}

/* The slot holding source's unfinished line, or NULL. */
static struct partial *find_partial(struct logring *r, uint32_t source)
{
    for (size_t i = 0; i < r->max_partials; i++) {
        if (r->partials[i].used && r->partials[i].source == source)
            return &r->partials[i];
    }
    return NULL;
}

/*
 * A slot for source: a free one, else one whose line is empty, else the
 * stalest, whose unfinished line is stored first.
 */
static struct partial *take_partial(struct logring *r, uint32_t source)
{
    struct partial *best = NULL;
    for (size_t i = 0; i < r->max_partials; i++) {
        struct partial *p = &r->partials[i];
        if (!p->used) {
            best = p;
            break;
        }
        if (!best || (p->len == 0 && best->len != 0) ||
            ((p->len == 0) == (best->len == 0) && p->stamp < best->stamp))
            best = p;
    }
    if (best->used && best->len > 0)
        commit_line(r, best->buf, best->len, best->source);
    best->used = true;
    best->source = source;
    best->len = 0;
    return best;
}

/* Makes room for want bytes in slot p, never beyond max_line. */
static void partial_reserve(struct logring *r, struct partial *p, size_t want)
{
    if (want <= p->cap)
        return;
    size_t cap = p->cap ? p->cap : 256;
    while (cap < want)
        cap *= 2;
    if (cap > r->max_line)
        cap = r->max_line;
    p->buf = xrealloc(p->buf, cap);
    p->cap = cap;
}

/*
 * Adds n raw bytes to an unfinished line. At max_line the line drops what
 * precedes its last '\r' (a progress bar redrawing itself) or, with no
 * '\r', has its first max_line bytes stored as a split line.
 */
static void partial_add(struct logring *r, struct partial *p, const char *d, size_t n)
{
    while (n > 0) {
        size_t room = r->max_line - p->len;
        size_t take = n < room ? n : room;
        partial_reserve(r, p, p->len + take);
        memcpy(p->buf + p->len, d, take);
        p->len += take;
        d += take;
        n -= take;
        if (n == 0)
            break;
        const char *cr = last_cr(p->buf, p->len - 1); /* a final '\r' may be a "\r\n" */
        size_t keep_from;
        if (cr) {
            keep_from = (size_t)(cr + 1 - p->buf);
        } else {
            keep_from = char_cut(p->buf, p->len, (unsigned char)d[0]);
            store_raw(r, p->buf, keep_from, p->source, LOGRING_SPLIT);
        }
        memmove(p->buf, p->buf + keep_from, p->len - keep_from);
        p->len -= keep_from;
    }
}

void logring_append(struct logring *r, uint32_t source, const char *data, size_t len)
{
    struct partial *p = find_partial(r, source);
    size_t i = 0;

    r->tick++;
    if (p)
        p->stamp = r->tick;
    while (i < len) {
        const char *nl = memchr(data + i, '\n', len - i);
        if (!nl) {
            if (!p) {
                p = take_partial(r, source);
                p->stamp = r->tick;
            }
            partial_add(r, p, data + i, len - i);
            break;
        }
        size_t n = (size_t)(nl - (data + i));
        if (p && p->len > 0) {
            partial_add(r, p, data + i, n);
            commit_line(r, p->buf, p->len, source);
            p->len = 0;
        } else {
            commit_line(r, data + i, n, source);
        }
        i += n + 1;
    }
}

void logring_flush(struct logring *r, uint32_t source)
{
    struct partial *p = find_partial(r, source);
    if (!p || p->len == 0)
        return;
    commit_line(r, p->buf, p->len, source);
    p->len = 0;
}

void logring_clear(struct logring *r)
{
    r->first_seq += r->count;
    r->count = 0;
    r->head = 0;
    r->tail = 0;
    for (size_t i = 0; i < r->max_partials; i++)
        r->partials[i].len = 0;
}

uint64_t logring_first_seq(const struct logring *r)
{
    return r->first_seq;
}

uint64_t logring_last_seq(const struct logring *r)
{
    return r->first_seq + r->count - 1;
}

size_t logring_count(const struct logring *r)
{
    return r->count;
}

uint64_t logring_dropped(const struct logring *r)
{
    return r->dropped;
}

uint64_t logring_split_count(const struct logring *r)
{
    return r->split;
}

/* The index entry of line seq, or NULL when it is not held. */
static const struct entry *entry_of(const struct logring *r, uint64_t seq)
{
    if (seq < r->first_seq || seq - r->first_seq >= r->count)
        return NULL;
    return &r->index[(r->head + (size_t)(seq - r->first_seq)) % r->max_lines];
}

bool logring_get(const struct logring *r, uint64_t seq, struct logring_line *out)
{
    const struct entry *e = entry_of(r, seq);
    if (!e)
        return false;
    out->text = r->arena + e->off;
    out->len = e->len;
    out->source = e->source;
    out->flags = e->flags;
    return true;
}

const char *logring_text(const struct logring *r, uint64_t seq)
{
    const struct entry *e = entry_of(r, seq);
    return e ? r->arena + e->off : NULL;
}

uint32_t logring_source(const struct logring *r, uint64_t seq)
{
    const struct entry *e = entry_of(r, seq);
    return e ? e->source : UINT32_MAX;
}

size_t logring_bytes_used(const struct logring *r)
{
    if (r->count == 0)
        return 0;
    size_t h = r->index[r->head].off;
    return r->tail > h ? r->tail - h : r->max_bytes - h + r->tail;
}

size_t logring_memory(const struct logring *r)
{
    size_t total = sizeof *r + r->max_bytes + r->max_lines * sizeof *r->index +
                   r->max_partials * sizeof *r->partials + r->scratch.cap;
    for (size_t i = 0; i < r->max_partials; i++)
        total += r->partials[i].cap;
    return total;
}

size_t logring_match_at(const char *text, size_t len, const char *needle, size_t nlen)
{
    if (nlen == 0 || nlen > len)
        return len;
    const unsigned char *t = (const unsigned char *)text, *nd = (const unsigned char *)needle;
    unsigned char first = fold(nd[0]);
    for (size_t i = 0; i + nlen <= len; i++) {
        if (fold(t[i]) != first)
            continue;
        size_t k = 1;
        while (k < nlen && fold(t[i + k]) == fold(nd[k]))
            k++;
        if (k == nlen)
            return i;
    }
    return len;
}

/* Where a scan from from_seq the way asked starts (clamped); false: nothing to scan. */
static bool scan_range(const struct logring *r, uint64_t from_seq, bool forward, uint64_t *start)
{
    if (r->count == 0)
        return false;
    uint64_t first = r->first_seq, last = logring_last_seq(r);
    if (forward) {
        if (from_seq > last)
            return false;
        *start = from_seq < first ? first : from_seq;
    } else {
        if (from_seq < first)
            return false;
        *start = from_seq > last ? last : from_seq;
    }
    return true;
}

uint64_t logring_next_match(const struct logring *r, uint64_t from_seq, logring_pred pred,
                            void *arg, bool forward)
{
    uint64_t seq;
    struct logring_line line;
    if (!scan_range(r, from_seq, forward, &seq))
        return 0;
    while (logring_get(r, seq, &line)) {
        if (pred(&line, arg))
            return seq;
        seq = forward ? seq + 1 : seq - 1;
    }
    return 0;
}

struct needle {
    const char *p;
    size_t n;
};

/* Predicate for logring_find: the line contains the needle. */
static bool contains_needle(const struct logring_line *line, void *arg)
{
    const struct needle *nd = arg;
    return logring_match_at(line->text, line->len, nd->p, nd->n) < line->len;
}

uint64_t logring_find(const struct logring *r, uint64_t from_seq, const char *needle, bool forward)
{
    struct needle nd = {needle, needle ? strlen(needle) : 0};
    if (nd.n == 0)
        return 0;
    return logring_next_match(r, from_seq, contains_needle, &nd, forward);
}

uint64_t logring_first_match(const struct logring *r, logring_pred pred, void *arg)
{
    return logring_next_match(r, r->first_seq, pred ? pred : logring_is_error_line, arg, true);
}

bool logring_is_error_line(const struct logring_line *line, void *arg)
{
    /* Lower case; starts[letter] has a bit for each marker beginning with it. */
    static const char *const markers[] = {
        "core dumped", "error",    "exception",     "fatal", "killed by signal",
        "nccl warn",   "oom-kill", "out of memory", "panic", "segmentation fault",
        "traceback",
    };
    static const uint16_t starts[26] = {
        ['c' - 'a'] = 1u << 0, ['e' - 'a'] = 3u << 1, ['f' - 'a'] = 1u << 3,
        ['k' - 'a'] = 1u << 4, ['n' - 'a'] = 1u << 5, ['o' - 'a'] = 3u << 6,
        ['p' - 'a'] = 1u << 8, ['s' - 'a'] = 1u << 9, ['t' - 'a'] = 1u << 10,
    };
    const unsigned char *t = (const unsigned char *)line->text;
    for (size_t i = 0; i < line->len; i++) {
        unsigned char c = fold(t[i]);
        unsigned bits = c >= 'a' && c <= 'z' ? starts[c - 'a'] : 0;
        for (size_t m = 0; bits; m++, bits >>= 1) {
            if (!(bits & 1))
                continue;
            const char *mk = markers[m];
            size_t k = 1;
            while (mk[k] && i + k < line->len && fold(t[i + k]) == (unsigned char)mk[k])
                k++;
            if (!mk[k])
                return true;
        }
    }
    return false;
}
