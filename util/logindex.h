/*
 * logindex: the time index beside a worker log. trainjob-shim writes, into
 * FILE.idx, one 16-byte record (offset, wall-clock ms; little-endian u64s)
 * each time it copies a chunk of output whose time differs from the last
 * record's: "the bytes from this offset of FILE were copied at this time".
 * On rotation FILE.idx becomes FILE.1.idx with its log. trainjobd's
 * logfollow reads it to send the time of each piece of a log (T frames),
 * and the job screen interleaves the workers' lines by it.
 *
 * The index is written by the shim outside the sandbox, but a worker that
 * runs without one (no bubblewrap) has the engine's uid and could write it:
 * the reader treats it as hostile — it reads at most LOGINDEX_MAX_BYTES,
 * stops at the first record whose offset or time goes backwards or whose
 * time is absurd, and a log without a usable index has no times (its
 * pieces keep their arrival order), never a wrong read.
 */
#ifndef UTIL_LOGINDEX_H
#define UTIL_LOGINDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LOGINDEX_RECORD 16
/* At most this much index per log generation (65,536 records): the shim stops recording there. */
#define LOGINDEX_MAX_BYTES (1u << 20)
/* Index the shim may write before it is held to 1/16 of its log's size. */
#define LOGINDEX_BUDGET (64u << 10)
/* Times before 2001 or after 2200 are not a clock's: the index is not trusted past them. */
#define LOGINDEX_MIN_MS 978307200000ull
#define LOGINDEX_MAX_MS 7258118400000ull

struct logindex_rec {
    uint64_t offset;
    uint64_t ms;
};

/* Encodes one record into out (LOGINDEX_RECORD bytes). */
void logindex_encode(const struct logindex_rec *r, unsigned char *out);
/* Decodes one record. */
void logindex_decode(const unsigned char *in, struct logindex_rec *r);

/* The records read so far of one index file, checked. */
struct logindex {
    struct logindex_rec *recs;
    size_t count, alloc;
    uint64_t read_bytes; /* bytes of the file consumed (whole records) */
    bool bad;            /* a record broke the rules: nothing after it is used */
};

void logindex_init(struct logindex *ix);
void logindex_free(struct logindex *ix);
/* Reads the records added to the file on fd since the last call (pread; fd < 0: none). */
void logindex_refresh(struct logindex *ix, int fd);
/*
 * The time of the byte at offset (the last record at or before it) into
 * *ms, and in *next the offset of the next record after it (UINT64_MAX:
 * none yet); false when no record covers offset.
 */
bool logindex_time_at(const struct logindex *ix, uint64_t offset, uint64_t *ms, uint64_t *next);

#endif
