/*
 * feed: keeps a jobstore current from a backend, without blocking — the
 * watch stream where the backend has one (no polling: an idle stream costs
 * nothing), else a poll of the whole list every refresh interval, whose
 * reply changes the store only when it differs. A lost stream or a failing
 * server is retried with backoff (1 s doubling to 30 s) and the feed says
 * so, with how old the data on screen is, until it recovers by itself. A
 * refusal (4xx: a workspace that does not exist) is no lost connection: the
 * feed says why and waits for feed_start.
 */
#ifndef TUI_FEED_H
#define TUI_FEED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct backend;
struct http_multi;
struct jobstore;

enum feed_state {
    FEED_CONNECTING, /* the first answer has not come */
    FEED_LIVE,       /* the watch stream has synced; changes arrive as they happen */
    FEED_POLLING,    /* the last poll answered */
    FEED_LOST,       /* the last try failed: retrying (feed_error says why) */
    FEED_REFUSED,    /* the server refused (4xx): no retry until feed_start (feed_error says why) */
};

struct feed;

/* changed(ctx) after the store changed or the feed's state did. */
struct feed *feed_new(struct backend *b, struct http_multi *m, struct jobstore *s, int refresh_ms,
                      void (*changed)(void *ctx), void *ctx);
void feed_free(struct feed *f);
/* Starts watching (or polling); again at once after a failure (a user's "refresh"). */
void feed_start(struct feed *f);

enum feed_state feed_state(const struct feed *f);
/* Why the last try failed (sanitized by the caller before drawing), or "". */
const char *feed_error(const struct feed *f);
/* A warning the backend said with the list (once), copied to buf and forgotten; false: none. */
bool feed_take_warning(struct feed *f, char *buf, size_t n);
/* When the data was last known current (loop_now_ms), 0: never. */
int64_t feed_fresh_at(const struct feed *f);
/* When the next retry or poll runs (loop_now_ms), 0: none planned. */
int64_t feed_next_try(const struct feed *f);
/* True when the backend has no watch stream and the feed polls. */
bool feed_polling(const struct feed *f);
/*
 * The wait between polls now: the refresh, or up to 4 times it once several
 * polls in a row changed nothing (kind to the server; the first change, or
 * feed_start, brings the refresh back).
 */
int feed_poll_interval_ms(const struct feed *f);

#endif
