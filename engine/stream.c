/*
 * stream: a refcounted byte queue between the engine (writer) and one HTTP
 * connection (reader); see stream.h. The queue is capped so a stalled client
 * cannot make the engine grow without bound: past the cap, the stream is
 * closed after what is queued and the client reconnects. The same holds
 * for the bytes queued for all of one user's streams (engine/shares).
 */
#include "engine/stream.h"

#include <stdlib.h>
#include <string.h>

#include "util/strbuf.h"
#include "util/xalloc.h"

#define STREAM_MAX_PENDING (8u << 20)
/* A drained buffer larger than this is given back rather than kept for the next write. */
#define STREAM_KEEP_CAPACITY (16u << 10)

struct stream {
    int refs;
    struct strbuf buf;
    size_t head; /* bytes of buf already read */
    bool closed, abandoned, parked;
    void (*wake)(void *ctx);
    void *wake_ctx;
    char *tag;
    long long offset;
    void (*refill)(void *ctx, struct stream *s);
    void *refill_ctx;
    void (*refill_free)(void *ctx);
    struct share *share; /* whose stream it is (NULL: not counted) */
    enum share_kind share_kind;
    size_t byte_limit; /* the user's queued bytes at most */
    size_t charged;    /* bytes charged to share: what is pending */
};

/* Gives back what the stream holds of its user's share: its count and its queued bytes. */
static void release_share(struct stream *s)
{
    if (s->share == NULL)
        return;
    share_give(s->share, SHARE_STREAM_BYTES, s->charged);
    share_give(s->share, s->share_kind, 1);
    s->share = NULL;
    s->charged = 0;
}

void stream_set_share(struct stream *s, struct share *sh, enum share_kind kind, size_t byte_limit)
{
    release_share(s);
    if (sh == NULL)
        return;
    s->share = sh;
    s->share_kind = kind;
    s->byte_limit = byte_limit;
    s->charged = stream_pending(s);
    share_take(sh, SHARE_STREAM_BYTES, s->charged, (size_t)-1);
}

struct stream *stream_new(void)
{
    struct stream *s = xcalloc(1, sizeof *s);
    s->refs = 1;
    return s;
}

struct stream *stream_ref(struct stream *s)
{
    s->refs++;
    return s;
}

void stream_unref(struct stream *s)
{
    if (s == NULL || --s->refs > 0)
        return;
    stream_set_refill(s, NULL, NULL, NULL);
    release_share(s);
    strbuf_free(&s->buf);
    free(s->tag);
    free(s);
}

static void wake(struct stream *s)
{
    if (s->parked && s->wake) {
        s->parked = false;
        s->wake(s->wake_ctx);
    }
}

void stream_write(struct stream *s, const void *data, size_t len)
{
    if (s->abandoned || s->closed)
        return;
    if (stream_pending(s) + len > STREAM_MAX_PENDING ||
        (s->share && !share_take(s->share, SHARE_STREAM_BYTES, len, s->byte_limit))) {
        s->closed = true; /* the client is not reading; it will reconnect */
    } else {
        if (s->share)
            s->charged += len;
        if (s->head > 0 && s->head == s->buf.len) {
            strbuf_reset(&s->buf);
            s->head = 0;
        }
        strbuf_add(&s->buf, data, len);
    }
    wake(s);
}

void stream_close(struct stream *s)
{
    s->closed = true;
    wake(s);
}

/*
 * What was queued and a first sync still to come are freed at once: a watcher
 * that left must not hold its buffer until the engine next writes to it.
 */
void stream_abandon(struct stream *s)
{
    s->abandoned = true;
    s->wake = NULL;
    stream_set_refill(s, NULL, NULL, NULL);
    release_share(s);
    strbuf_free(&s->buf);
    s->head = 0;
}

bool stream_abandoned(const struct stream *s)
{
    return s->abandoned;
}

bool stream_closed(const struct stream *s)
{
    return s->closed;
}

size_t stream_pending(const struct stream *s)
{
    return s->buf.len - s->head;
}

size_t stream_footprint(const struct stream *s)
{
    return s->buf.cap;
}

void stream_set_refill(struct stream *s, void (*refill)(void *ctx, struct stream *s), void *ctx,
                       void (*free_ctx)(void *ctx))
{
    void (*old_free)(void *) = s->refill_free;
    void *old_ctx = s->refill_ctx;
    s->refill = refill;
    s->refill_ctx = ctx;
    s->refill_free = free_ctx;
    if (old_free)
        old_free(old_ctx); /* last: it may be the caller's own context */
}

bool stream_refilling(const struct stream *s)
{
    return s->refill != NULL;
}

void *stream_refill_ctx(const struct stream *s)
{
    return s->refill ? s->refill_ctx : NULL;
}

void stream_wake(struct stream *s)
{
    wake(s);
}

size_t stream_read(struct stream *s, char *buf, size_t max)
{
    if (s->refill && !s->closed && !s->abandoned && stream_pending(s) < STREAM_REFILL_BELOW)
        s->refill(s->refill_ctx, s);
    size_t n = stream_pending(s);
    if (n > max)
        n = max;
    if (n) {
        memcpy(buf, s->buf.buf + s->head, n);
        s->head += n;
        if (s->share) {
            share_give(s->share, SHARE_STREAM_BYTES, n);
            s->charged -= n;
        }
    }
    if (s->head == s->buf.len && s->head > 0) {
        /* Drained: a parked reader keeps no more than a small buffer (a first sync grew it). */
        if (s->buf.cap > STREAM_KEEP_CAPACITY)
            strbuf_free(&s->buf);
        else
            strbuf_reset(&s->buf);
        s->head = 0;
    } else if (s->head >= STREAM_KEEP_CAPACITY && s->head * 2 >= s->buf.len) {
        /*
         * A refilling stream (a first sync) is never drained between refills:
         * drop what was read, or the buffer grows to the whole sync. Moving
         * at most as much as was read keeps this amortised O(1) a byte.
         */
        size_t left = s->buf.len - s->head;
        memmove(s->buf.buf, s->buf.buf + s->head, left);
        strbuf_truncate(&s->buf, left);
        s->head = 0;
    }
    return n;
}

void stream_set_waker(struct stream *s, void (*fn)(void *ctx), void *ctx)
{
    s->wake = fn;
    s->wake_ctx = ctx;
}

void stream_park(struct stream *s)
{
    s->parked = true;
}

void stream_set_tag(struct stream *s, const char *tag, long long offset)
{
    free(s->tag);
    s->tag = xstrdup(tag);
    s->offset = offset;
}

const char *stream_tag(const struct stream *s)
{
    return s->tag ? s->tag : "";
}

long long stream_offset(const struct stream *s)
{
    return s->offset;
}

void stream_set_offset(struct stream *s, long long offset)
{
    s->offset = offset;
}
