/*
 * tfevents: reads the scalars a training job writes as TensorBoard event
 * files (the protos: tests/fixtures/tensorboard/proto), incrementally, as
 * TensorBoard's data server does. Three layers, each usable alone:
 *
 *   1. tfrecord_next: the TFRecord framing over a byte buffer — uint64 length,
 *      masked CRC-32C of the length, the data, masked CRC-32C of the data.
 *      It says OK / PARTIAL (not yet: the writer is still appending) / BAD
 *      (a record whose data fails its CRC, skipped whole) / RESYNC (bytes that
 *      cannot start a record: a header whose own CRC fails; it scans on to
 *      the next header that checks) / OVERSIZED (a checked header announcing
 *      more than TFEVENTS_MAX_RECORD bytes, skipped unread).
 *   2. tfevents_decode: a small protobuf decoder of only the fields a scalar
 *      needs (Event.wall_time/step/summary; Summary.Value.tag, .metadata
 *      .plugin_data.plugin_name, .simple_value, .tensor{dtype, tensor_shape,
 *      float_val, double_val, half_val, tensor_content}); every other field
 *      is skipped by its wire type. It calls back once per Summary.Value.
 *      (A hand decoder rather than protobuf-c: about 300 lines, no generated
 *      code or library to ship, no allocation per record, and it reads a
 *      scalar straight out of the record without building the image and
 *      histogram payloads protobuf-c would unpack with it.)
 *   3. struct tfevents_dir: a log directory follower. The root holds runs
 *      (the root itself is run ".", every subdirectory at any depth that
 *      holds a file whose name contains "tfevents" is run "a/b"); a run's
 *      files are read in name order. tfevents_poll reads only what was
 *      appended since the last call, treats a partial last record as not
 *      yet written, notices new files and runs, and hands each scalar to a
 *      callback exactly once: a record is delivered whole or not at all,
 *      however the bytes arrive. A text cursor (opaque to callers) says
 *      where every file stands, so a remote follower can resume (since=),
 *      and a per-call limit lets a server page a large backlog. A hole of
 *      a sparse file (truncate -s 100G between two records) is skipped
 *      unread (SEEK_DATA), not scanned a byte at a time for a header it
 *      cannot hold: it is counted as a hole, not as damage (with where it
 *      was and how long, zeros read before it included), and its bytes
 *      count against the limit, so a poll past it returns at once. A run
 *      of zeros that ends without a hole is damage, counted once it ends.
 *
 * Everything read is hostile (a job writes these files): the walk never
 * follows a symlink, opens only regular files (never blocks on a FIFO),
 * bounds depth, runs, files, record size and tag length, and counts damage
 * instead of stopping. No curses, no curl: the CLI (`trainjob metrics`), the
 * Metrics pane and trainjobd's scalars endpoint all call this.
 */
#ifndef API_TFEVENTS_H
#define API_TFEVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct strbuf;

/* ---- 1. TFRecord framing ---- */

#define TFRECORD_HEADER 12                     /* uint64 length + uint32 masked CRC */
#define TFRECORD_OVERHEAD 16                   /* header + uint32 masked CRC of the data */
#define TFEVENTS_MAX_RECORD (8u * 1024 * 1024) /* larger records are skipped unread */

/* CRC-32C (Castagnoli) of n bytes, and TFRecord's mask of it. */
uint32_t tfevents_crc32c(const void *data, size_t n);
uint32_t tfevents_masked_crc32c(const void *data, size_t n);

enum tfrecord_status {
    TFRECORD_OK,        /* data/len is a record whose CRCs check; consumed = 16 + len */
    TFRECORD_PARTIAL,   /* not yet whole: the next step needs `need` bytes; consumed = 0 */
    TFRECORD_BAD,       /* the data fails its CRC; consumed = 16 + len (the record is skipped) */
    TFRECORD_RESYNC,    /* consumed (>= 1) bytes cannot start a record (length CRC fails) */
    TFRECORD_OVERSIZED, /* header checks but len > TFEVENTS_MAX_RECORD; skip consumed bytes
                           (16 + len, possibly more than n) without reading them */
};

struct tfrecord {
    const uint8_t *data; /* OK: the record's data inside the buffer */
    size_t len;          /* OK, BAD: the data's length */
    uint64_t consumed;   /* bytes from the buffer's start this step accounts for */
    uint64_t need;       /* PARTIAL: how many bytes from the start the next step needs */
};

/*
 * Parses the record at the start of buf[0..n). Never reads past n. RESYNC
 * scans forward only over positions that have a whole header available, so
 * the result does not depend on how the bytes were cut into reads.
 */
enum tfrecord_status tfrecord_next(const uint8_t *buf, size_t n, struct tfrecord *rec);

/* Appends one framed record holding data to out (writers in tests, tools and benches). */
void tfrecord_write(struct strbuf *out, const void *data, size_t len);
/*
 * Appends one framed Event holding one simple_value scalar, as PyTorch's
 * SummaryWriter writes it (the tests', tools' and benches' writer).
 */
void tfevents_write_simple(struct strbuf *out, int64_t step, double wall_time, const char *tag,
                           float value);

/* ---- 2. Event decoding ---- */

#define TFEVENTS_MAX_TAG 1024 /* longer tags are counted as bad values */

enum tfevents_kind {
    TFEVENTS_SIMPLE, /* Summary.Value.simple_value (TF1, PyTorch, tensorboardX) */
    TFEVENTS_TENSOR, /* a one-element DT_FLOAT/DT_DOUBLE/DT_HALF/DT_BFLOAT16 tensor (TF2) */
    TFEVENTS_OTHER,  /* anything else: an image, a histogram, a text, a larger tensor... */
};

/* One Summary.Value as decoded; strings point into the record and are not NUL-terminated. */
struct tfevents_value {
    const char *tag; /* valid UTF-8, no NUL, at most TFEVENTS_MAX_TAG bytes */
    size_t tag_len;
    const char *plugin; /* metadata.plugin_data.plugin_name; NULL when the value has none */
    size_t plugin_len;
    enum tfevents_kind kind;
    double value; /* SIMPLE and TENSOR: the number, NaN and ±Inf as written */
    int64_t step; /* the Event's */
    double wall_time;
};

/* Called per Summary.Value; a non-zero return stops the decoding of this record. */
typedef int (*tfevents_value_fn)(void *ctx, const struct tfevents_value *v);

enum tfevents_decode_status {
    TFEVENTS_DECODE_OK,      /* decoded (values handed on, maybe none: a file_version, a graph) */
    TFEVENTS_DECODE_BAD,     /* not a well-formed Event: nothing was handed on */
    TFEVENTS_DECODE_STOPPED, /* the callback returned non-zero */
};

/*
 * Decodes one Event (a record's data). The whole record is checked before
 * the first value is handed on, so a malformed record delivers nothing.
 * *bad_values (when not NULL) gets the number of Summary.Values skipped as
 * malformed inside an otherwise good Event (a tag that is not UTF-8 or too
 * long, a tensor whose content does not match its dtype).
 */
enum tfevents_decode_status tfevents_decode(const uint8_t *data, size_t len, tfevents_value_fn fn,
                                            void *ctx, uint64_t *bad_values);
/*
 * The bulk of a PyTorch or TF1 event file, record after record: takes the
 * records at the start of buf[0..n) while each is whole, both its CRCs
 * check and its Event is one simple_value in the layout those writers give
 * it (see decode_simple_fast), and hands each value to fn. Takes at most
 * max_records records and none once max_bytes are consumed (0: no limit);
 * stops after a record whose fn returned non-zero. Returns the bytes taken
 * (whole records) and their count in *records. The first record it leaves
 * (partial, damaged, oversized, another kind of Event) is the caller's to
 * read with tfrecord_next and tfevents_decode: what the two deliver is what
 * they would have delivered for the records taken here.
 */
size_t tfevents_decode_simple_run(const uint8_t *buf, size_t n, uint64_t max_records,
                                  uint64_t max_bytes, tfevents_value_fn fn, void *ctx,
                                  uint64_t *records);
/*
 * For tests and fuzzing: false makes tfevents_decode skip its fast path for
 * simple_value events and tfevents_decode_simple_run take nothing.
 */
void tfevents_decode_fast_path(bool on);

/* ---- 3. Log directory follower ---- */

/* A scalar as the follower hands it on; run and tag are NUL-terminated, valid for the call. */
struct tfevents_scalar {
    const char *run; /* "." for the root, else the relative path "rank0", "a/b" */
    const char *tag;
    int64_t step;
    double wall_time;
    double value;
};

/* Called per scalar, in file order; the follower has already counted it as delivered. */
typedef void (*tfevents_scalar_fn)(void *ctx, const struct tfevents_scalar *s);

/* What has been read and what was wrong, since tfevents_open (never reset). */
struct tfevents_stats {
    uint64_t runs, files;       /* now known */
    uint64_t bytes;             /* consumed from event files */
    uint64_t records;           /* well-framed records decoded */
    uint64_t scalars;           /* delivered */
    uint64_t bad_crc;           /* records whose data failed its CRC (skipped) */
    uint64_t resyncs;           /* damaged headers scanned past (once per damaged stretch) */
    uint64_t resync_bytes;      /* bytes scanned past (holes included) */
    uint64_t hole_bytes;        /* of which skipped unread: holes of a sparse file */
    uint64_t holes;             /* holes of a sparse file passed (not damage) */
    uint64_t last_hole_at;      /* the last hole: its first zero byte's file offset, */
    uint64_t last_hole_len;     /* its length up to the data after it, */
    const char *last_hole_file; /* and its file (relative to the root; owned by the follower) */
    uint64_t oversized;         /* records over TFEVENTS_MAX_RECORD (skipped) */
    uint64_t bad_proto;         /* records with good CRCs that were not an Event */
    uint64_t bad_values;        /* malformed Summary.Values in good Events */
    uint64_t other_values;      /* non-scalar values (other plugins), skipped */
    uint64_t truncated;         /* files that shrank below their offset (read again from 0) */
    uint64_t skipped_entries; /* symlinks, non-regular files, dirs past the depth or count limits */
};

/* Limits on one tfevents_poll; 0 means no limit. At least one record is read per call. */
struct tfevents_limit {
    uint64_t max_bytes;
    uint64_t max_records;
};

/* Bounds on what one follower takes on; what is beyond them is counted in skipped_entries. */
#define TFEVENTS_MAX_DEPTH 16   /* directory levels below the root */
#define TFEVENTS_MAX_RUNS 1024  /* directories holding event files */
#define TFEVENTS_MAX_FILES 8192 /* event files over all runs */
#define TFEVENTS_MAX_TAGS 65536 /* tags whose plugin is remembered, per run */

struct tfevents_dir;

/*
 * Follows the log directory at path, as the caller names it (a symlink in
 * path itself is followed: the caller chose it; nothing below it ever is).
 * NULL with a message naming the path in err on failure.
 */
struct tfevents_dir *tfevents_open(const char *path, struct strbuf *err);
/*
 * Follows the directory dirfd (e.g. an O_PATH descriptor util/beneath gave
 * trainjobd for a job's log path); dirfd is duplicated, the caller keeps its
 * own. name is what messages call it.
 */
struct tfevents_dir *tfevents_open_fd(int dirfd, const char *name, struct strbuf *err);
void tfevents_close(struct tfevents_dir *d);

/*
 * Resumes from a cursor made by tfevents_cursor (before the first poll).
 * Files it names are read from the offset it gives once they are found;
 * files it does not name are read from the start. -1 with a message when
 * the text is not a cursor (nothing is changed then).
 */
int tfevents_set_cursor(struct tfevents_dir *d, const char *cursor, struct strbuf *err);
/*
 * Appends the cursor of what has been delivered so far: printable ASCII
 * without spaces (a caller putting it in a URL still escapes '%' and ',').
 * It names each file's offset and the tags other plugins declared for
 * one-element tensors, so a reader resumed from it skips what this one did.
 */
void tfevents_cursor(const struct tfevents_dir *d, struct strbuf *out);

struct tfevents_poll_result {
    uint64_t bytes;   /* consumed by this call */
    uint64_t records; /* records consumed (good, bad or skipped) */
    uint64_t scalars; /* handed on by this call */
    bool more;        /* stopped by the limit: poll again (may find nothing left) */
};

/*
 * Rescans the tree for new runs and files, then reads what each file gained
 * since the last call, in run and file name order, handing each scalar to
 * fn. Stops at a record boundary when lim (may be NULL) is reached. Returns
 * 0, or -1 with a message in err when the root itself cannot be read (damage
 * inside files and unreadable entries are counted in the stats instead).
 */
int tfevents_poll(struct tfevents_dir *d, const struct tfevents_limit *lim, tfevents_scalar_fn fn,
                  void *ctx, struct tfevents_poll_result *res, struct strbuf *err);

const struct tfevents_stats *tfevents_stats(const struct tfevents_dir *d);

/* The runs found so far, in name order (valid until the next poll). */
size_t tfevents_run_count(const struct tfevents_dir *d);
const char *tfevents_run_name(const struct tfevents_dir *d, size_t i);

#endif
