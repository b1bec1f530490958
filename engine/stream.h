/*
 * stream: bytes on their way to one long-lived HTTP client (a watch stream,
 * a followed log). The engine writes whenever something happens; the HTTP
 * layer reads what is pending and, when there is nothing, parks the
 * connection until the stream wakes it. Shared by both sides, so counted.
 */
#ifndef ENGINE_STREAM_H
#define ENGINE_STREAM_H

#include <stdbool.h>
#include <stddef.h>

#include "engine/shares.h"

struct stream;

struct stream *stream_new(void);
struct stream *stream_ref(struct stream *s);
void stream_unref(struct stream *s);

/* Appends data (dropped once the reader is gone) and wakes the reader. */
void stream_write(struct stream *s, const void *data, size_t len);
/* No more data will come: the reader ends the response after what is pending. */
void stream_close(struct stream *s);
/* The reader went away (client disconnected): its queue and refill are freed now; writers drop it.
 */
void stream_abandon(struct stream *s);
bool stream_abandoned(const struct stream *s);
bool stream_closed(const struct stream *s);

/*
 * A producer of more data on demand: stream_read calls refill when less
 * than STREAM_REFILL_BELOW bytes are pending, so a large snapshot (a watch
 * stream's first sync of 10,000 jobs) is written as the reader drains it,
 * never queued whole. refill writes with stream_write and calls
 * stream_set_refill(s, NULL, …) when it is done. free_ctx (may be NULL)
 * runs when the refill is replaced or the stream is freed.
 */
#define STREAM_REFILL_BELOW (64u << 10)
void stream_set_refill(struct stream *s, void (*refill)(void *ctx, struct stream *s), void *ctx,
                       void (*free_ctx)(void *ctx));
bool stream_refilling(const struct stream *s);
/* The context stream_set_refill was given (NULL without a refill). */
void *stream_refill_ctx(const struct stream *s);
/* Wakes a parked reader without writing: a refill has more to give. */
void stream_wake(struct stream *s);

/* Copies up to max pending bytes into buf; returns the count (0: none now). */
size_t stream_read(struct stream *s, char *buf, size_t max);
size_t stream_pending(const struct stream *s);
/* Bytes the queue holds allocated, read or not (what a parked reader costs). */
size_t stream_footprint(const struct stream *s);
/* Called (once per write burst) when data arrives for a parked reader. */
void stream_set_waker(struct stream *s, void (*wake)(void *ctx), void *ctx);
/* The reader parked: the next write calls the waker. */
void stream_park(struct stream *s);

/*
 * The stream is a user's: it holds one of kind in sh (the caller took it)
 * until it is abandoned or freed, and the bytes queued for it and not yet
 * read are charged to sh's SHARE_STREAM_BYTES. A write that would take the
 * user past byte_limit closes the stream after what is queued, as a write
 * past the stream's own cap does: the client is not reading, and it
 * reconnects. A NULL sh (the engine's own user) is not counted.
 */
void stream_set_share(struct stream *s, struct share *sh, enum share_kind kind, size_t byte_limit);

/* What the stream follows, for the engine's bookkeeping (a job, a log file). */
void stream_set_tag(struct stream *s, const char *tag, long long offset);
const char *stream_tag(const struct stream *s);
long long stream_offset(const struct stream *s);
void stream_set_offset(struct stream *s, long long offset);

#endif
