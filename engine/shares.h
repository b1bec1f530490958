/*
 * shares: what each user of a shared trainjobd holds of the resources a
 * request can keep — TCP and Unix connections, watch and log-follow
 * streams, scalar follows (each an inotify instance), and the bytes queued
 * for that user's streams. One counter per user and kind; the caller says
 * the limit at each take (limits come from engine.yaml and may change), so
 * a user at a limit is refused while nobody else notices.
 *
 * The table is owned by engine/http (one per engine) and handed to the
 * routes with each request; engine/stream charges queued bytes to it.
 * A NULL share is the engine's own user on its Unix socket: unbounded
 * here, bounded by the engine-wide limits alone.
 */
#ifndef ENGINE_SHARES_H
#define ENGINE_SHARES_H

#include <stdbool.h>
#include <stddef.h>

enum share_kind {
    SHARE_CONNECTIONS,    /* open connections whose request was signed (TCP) or peer known (Unix) */
    SHARE_STREAMS,        /* watch streams and log follows, and exec commands running */
    SHARE_SCALAR_FOLLOWS, /* scalar follows: one inotify instance each */
    SHARE_STREAM_BYTES,   /* bytes queued for the user's streams, not yet read */
    SHARE_KINDS
};

struct shares;
struct share;

struct shares *shares_new(void);
void shares_free(struct shares *t);
/* The share of user, made on first use; it lives as long as the table. */
struct share *shares_of(struct shares *t, const char *user);
/* How many users have a share (tests). */
size_t shares_count(const struct shares *t);

const char *share_user(const struct share *sh);
/* Takes n of kind unless that would pass limit; false (nothing taken) when it would. */
bool share_take(struct share *sh, enum share_kind kind, size_t n, size_t limit);
/* Gives n of kind back (never below zero). */
void share_give(struct share *sh, enum share_kind kind, size_t n);
size_t share_used(const struct share *sh, enum share_kind kind);

#endif
