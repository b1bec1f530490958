/*
 * logindex: encoding and checked reading of a log's time index (see
 * logindex.h). The shim (engine/shim_log.c) encodes; engine/logfollow.c
 * reads.
 */
#include "util/logindex.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "util/xalloc.h"

void logindex_encode(const struct logindex_rec *r, unsigned char *out)
{
    for (int i = 0; i < 8; i++) {
        out[i] = (unsigned char)(r->offset >> (8 * i));
        out[8 + i] = (unsigned char)(r->ms >> (8 * i));
    }
}

void logindex_decode(const unsigned char *in, struct logindex_rec *r)
{
    r->offset = 0;
    r->ms = 0;
    for (int i = 7; i >= 0; i--) {
        r->offset = (r->offset << 8) | in[i];
        r->ms = (r->ms << 8) | in[8 + i];
    }
}

void logindex_init(struct logindex *ix)
{
    ix->recs = NULL;
    ix->count = ix->alloc = 0;
    ix->read_bytes = 0;
    ix->bad = false;
}

void logindex_free(struct logindex *ix)
{
    free(ix->recs);
    logindex_init(ix);
}

/* Keeps r when it follows the rules: offsets and times never go backwards, times are a clock's. */
static void add(struct logindex *ix, const struct logindex_rec *r)
{
    if (r->ms < LOGINDEX_MIN_MS || r->ms > LOGINDEX_MAX_MS) {
        ix->bad = true;
        return;
    }
    if (ix->count > 0) {
        const struct logindex_rec *last = &ix->recs[ix->count - 1];
        if (r->offset < last->offset || r->ms < last->ms) {
            ix->bad = true;
            return;
        }
        if (r->offset == last->offset) { /* a later time for the same byte: the later one */
            ix->recs[ix->count - 1].ms = r->ms;
            return;
        }
    }
    if (ix->count == ix->alloc) {
        ix->alloc = ix->alloc ? 2 * ix->alloc : 64;
        ix->recs = xreallocarray(ix->recs, ix->alloc, sizeof *ix->recs);
    }
    ix->recs[ix->count++] = *r;
}

void logindex_refresh(struct logindex *ix, int fd)
{
    unsigned char buf[LOGINDEX_RECORD * 256];
    while (fd >= 0 && !ix->bad && ix->read_bytes < LOGINDEX_MAX_BYTES) {
        size_t want = sizeof buf;
        if (LOGINDEX_MAX_BYTES - ix->read_bytes < want)
            want = (size_t)(LOGINDEX_MAX_BYTES - ix->read_bytes);
        ssize_t n = pread(fd, buf, want, (off_t)ix->read_bytes);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < LOGINDEX_RECORD)
            return;
        size_t whole = (size_t)n / LOGINDEX_RECORD;
        for (size_t i = 0; i < whole && !ix->bad; i++) {
            struct logindex_rec r;
            logindex_decode(buf + i * LOGINDEX_RECORD, &r);
            add(ix, &r);
        }
        ix->read_bytes += whole * LOGINDEX_RECORD;
        if ((size_t)n < want)
            return;
    }
}

bool logindex_time_at(const struct logindex *ix, uint64_t offset, uint64_t *ms, uint64_t *next)
{
    size_t lo = 0, hi = ix->count; /* the first record after offset */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ix->recs[mid].offset <= offset)
            lo = mid + 1;
        else
            hi = mid;
    }
    *next = lo < ix->count ? ix->recs[lo].offset : UINT64_MAX;
    if (lo == 0)
        return false;
    *ms = ix->recs[lo - 1].ms;
    return true;
}
