/*
 * replay: the signatures trainjobd has accepted on TCP while their X-Date is
 * still inside the clock window, so a captured request cannot be sent again.
 * Each access key has its own share of the table: at most `per_key` live
 * entries, so one member who floods signed requests fills only their own
 * share and nobody else notices. An entry leaves when its date leaves the
 * window; when all of a key's entries are live the caller is told to refuse
 * (429) rather than forget one. Only requests whose signature passed are
 * recorded. Called by engine/http.
 */
#ifndef ENGINE_REPLAY_H
#define ENGINE_REPLAY_H

#include <stddef.h>
#include <time.h>

struct replay;

enum replay_result {
    REPLAY_NEW,  /* first sight: remembered until `until` */
    REPLAY_SEEN, /* an exact replay */
    REPLAY_FULL, /* the key's share is all live: not remembered, refuse the request */
};

struct replay *replay_new(size_t per_key);
void replay_free(struct replay *r);
/*
 * Records signature for key (until `until`) unless seen before; expired
 * entries of key are dropped on the way.
 */
enum replay_result replay_check(struct replay *r, const char *key, const char *signature,
                                time_t until, time_t now);
/* Live entries in all (tests) and of one key. */
size_t replay_count(const struct replay *r);
size_t replay_key_count(const struct replay *r, const char *key);
/* The entries one key may hold. */
size_t replay_per_key(const struct replay *r);
/* When a full key's first entry leaves (known after REPLAY_FULL), else 0. */
time_t replay_key_frees_at(const struct replay *r, const char *key);

#endif
