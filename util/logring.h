/*
 * logring: a bounded store of log lines — the memory behind the log view.
 * However much a job prints and for however long, the ring holds at most
 * max_bytes of text and max_lines lines; when either is full the oldest
 * lines are dropped (and counted) to make room for the newest.
 *
 * Input is raw bytes as they arrive from a worker's log stream, in chunks
 * cut anywhere (logring_append). The ring splits them on '\n', keeping an
 * unfinished last line per source until its newline arrives (or
 * logring_flush). A line longer than max_line bytes is force-split: its
 * first max_line bytes (cut at a UTF-8 character boundary) become a line
 * flagged LOGRING_SPLIT and the rest continues as a new line.
 *
 * What is stored is what may reach a terminal: each complete line is
 *   1. cut at carriage returns: a trailing '\r' ("\r\n" endings) is dropped,
 *      and of "a\rb\rc" only "c" is kept, the text a terminal would be left
 *      showing after a progress bar (tqdm) redraws itself. An unfinished
 *      line that reaches max_line while holding a '\r' drops what is before
 *      its last '\r' instead of being split, so a progress bar that never
 *      prints '\n' costs at most max_line bytes and never floods the ring;
 *   2. passed through utf8_sanitize with UTF8_KEEP_TAB: invalid UTF-8
 *      becomes U+FFFD, escape sequences (colours, titles) and other control
 *      characters are removed; tabs are kept as '\t' and the view expands
 *      them to tab stops (every 8 cells).
 * A stored line is valid UTF-8, NUL-terminated, without '\n', '\r' or any
 * control character but '\t'. Only whole lines are stored: an unfinished
 * line is not until its '\n' arrives or logring_flush finishes it, but
 * logring_partial hands out the newest one as it stands, so a view can show
 * a line a worker has not finished yet (a prompt, a progress bar).
 *
 * Every stored line gets the next sequence number (from 1, never reused,
 * not even by logring_clear) and keeps the source id it came from (the
 * worker index). Access is by sequence number in O(1): a view holds the
 * number of its top line and finds it again, or learns it was dropped.
 *
 * Memory: one text arena of max_bytes (a circular byte buffer holding each
 * line contiguously with its NUL) and one circular index of max_lines
 * entries, both allocated by logring_new; appending allocates nothing per
 * line. Besides them, the ring keeps the unfinished lines of at most
 * max_partials sources (each at most max_line bytes; when one more source
 * needs a slot, the least recently appended one is finished as a line) and
 * a scratch buffer for the sanitizer (< 6 × max_line). logring_memory
 * reports the total; it stays under
 *   max_bytes + 16 × max_lines + (max_partials + 6) × max_line + 40 × max_partials + 1 KiB
 * (about 14.4 MiB with the defaults, reached only when 64 sources each
 * hold a 64 KiB unfinished line; 10.0 MiB for ordinary logs).
 *
 * Search is case-insensitive for ASCII letters only; other bytes compare
 * exactly. Not thread-safe: the one event loop appends and the view reads.
 */
#ifndef UTIL_LOGRING_H
#define UTIL_LOGRING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct strbuf;

#define LOGRING_DEFAULT_BYTES (8u << 20)   /* 8 MiB of text */
#define LOGRING_DEFAULT_LINES (128u << 10) /* 131,072 lines (2 MiB of index) */
#define LOGRING_DEFAULT_LINE (64u << 10)   /* longest line before a force-split */
#define LOGRING_DEFAULT_PARTIALS 64u       /* sources with an unfinished line */

struct logring_config {
    size_t max_bytes;    /* text arena; 0: default. At least 4 KiB, at most 1 GiB */
    size_t max_lines;    /* index entries; 0: default. At least 16, at most max_bytes */
    size_t max_line;     /* 0: default. At least 64, at most max_bytes / 4 */
    size_t max_partials; /* 0: default. At least 1 */
};

/* Line flags. */
enum {
    LOGRING_SPLIT = 1 << 0, /* force-split at max_line: the next line of its source continues it */
};

/* A stored line, as logring_get hands it out. */
struct logring_line {
    const char *text; /* sanitized UTF-8, NUL-terminated; valid until the next append */
    size_t len;       /* bytes, without the NUL */
    uint32_t source;
    unsigned flags; /* LOGRING_* */
};

struct logring;

/* A ring with cfg's limits (NULL: every default). Free with logring_free. */
struct logring *logring_new(const struct logring_config *cfg);
void logring_free(struct logring *r);

/* The limits in effect (defaults filled in, values clamped). */
void logring_limits(const struct logring *r, struct logring_config *out);

/*
 * Adds len raw bytes of source's stream: every line they complete is
 * sanitized and stored, oldest lines dropped as needed; bytes after the
 * last '\n' wait for the rest of their line.
 */
void logring_append(struct logring *r, uint32_t source, const char *data, size_t len);
/* Stores source's unfinished line, if any, as a line (its stream ended). */
void logring_flush(struct logring *r, uint32_t source);
/* Drops every line and unfinished line; sequence numbers go on from where they were. */
void logring_clear(struct logring *r);

/*
 * Sequence numbers: first is the oldest line held, last the newest; with no
 * line held first == last + 1 (last is 0 before anything was stored).
 */
uint64_t logring_first_seq(const struct logring *r);
uint64_t logring_last_seq(const struct logring *r);
/*
 * The newest unfinished line (of source, or of any source when any), as it
 * would be stored now: cut at its last '\r', sanitized, without a trailing
 * incomplete UTF-8 character. Written to out (reset first) with its source
 * in *from; false when there is none or it is empty.
 */
bool logring_partial(const struct logring *r, bool any, uint32_t source, struct strbuf *out,
                     uint32_t *from);
/* Counts appends (and flushes): a view that shows the unfinished line redraws when it moves. */
uint64_t logring_tick(const struct logring *r);
/* Lines held now. */
size_t logring_count(const struct logring *r);
/* Lines dropped to make room, since the ring was made (logring_clear does not count). */
uint64_t logring_dropped(const struct logring *r);
/* Lines stored with LOGRING_SPLIT since the ring was made. */
uint64_t logring_split_count(const struct logring *r);

/* Line seq into *out (O(1)); false when it was dropped or is not written yet. */
bool logring_get(const struct logring *r, uint64_t seq, struct logring_line *out);
/* The text of line seq, NULL when it was dropped or is not written yet. */
const char *logring_text(const struct logring *r, uint64_t seq);
/* The source of line seq (UINT32_MAX when the line is not held), for filtering without the text. */
uint32_t logring_source(const struct logring *r, uint64_t seq);

/*
 * Arena bytes taken by the lines held, NULs and the unused tail before a
 * wrap included: never more than max_bytes.
 */
size_t logring_bytes_used(const struct logring *r);
/* Heap bytes the ring holds in all: arena, index, unfinished lines, scratch. */
size_t logring_memory(const struct logring *r);

/*
 * The first line at or after from_seq (forward) or at or before it (back)
 * that contains needle, case-insensitively; from_seq is clamped to the
 * lines held. 0 when none does or needle is empty.
 */
uint64_t logring_find(const struct logring *r, uint64_t from_seq, const char *needle, bool forward);

/* Decides whether a line is the one looked for. */
typedef bool (*logring_pred)(const struct logring_line *line, void *arg);

/*
 * The first line at or after from_seq (forward) or at or before it (back)
 * for which pred holds; 0 when none does.
 */
uint64_t logring_next_match(const struct logring *r, uint64_t from_seq, logring_pred pred,
                            void *arg, bool forward);
/*
 * The oldest line held for which pred holds (NULL: logring_is_error_line),
 * 0 when none does. Lines already dropped are not searched.
 */
uint64_t logring_first_match(const struct logring *r, logring_pred pred, void *arg);

/*
 * The default "error line" predicate: the line contains, in any case, one
 * of "error", "traceback", "exception", "fatal", "panic", "segmentation
 * fault", "core dumped", "out of memory", "oom-kill", "nccl warn" or
 * "killed by signal". It errs towards a false positive ("0 errors") rather
 * than missing a failure: the key that uses it is for triage.
 */
bool logring_is_error_line(const struct logring_line *line, void *arg);

/*
 * Where needle (nlen bytes, > 0) first occurs in text[0..len), comparing
 * ASCII letters case-insensitively; len when it does not. The log view
 * uses it to highlight matches the way logring_find finds them.
 */
size_t logring_match_at(const char *text, size_t len, const char *needle, size_t nlen);

#endif
