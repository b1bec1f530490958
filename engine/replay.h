/*
 * replay: the signatures trainjobd has accepted on TCP while their X-Date is
 * still inside the clock window, so a captured request cannot be sent again.
 * Memory is bounded: an entry leaves when its date leaves the window, and
 * at most `cap` entries are kept; when all are live the caller is told to
 * refuse (503) rather than forget one. Called by engine/http.
 */
#ifndef ENGINE_REPLAY_H
#define ENGINE_REPLAY_H

#include <stddef.h>
#include <time.h>

struct replay;

enum replay_result {
    REPLAY_NEW,  /* first sight: remembered until `until` */
    REPLAY_SEEN, /* an exact replay */
    REPLAY_FULL, /* cap live entries: not remembered, refuse the request */
};

struct replay *replay_new(size_t cap);
void replay_free(struct replay *r);
/* Records signature (until `until`) unless seen before; expired entries are dropped on the way. */
enum replay_result replay_check(struct replay *r, const char *signature, time_t until, time_t now);
/* Live entries (for tests). */
size_t replay_count(const struct replay *r);

#endif
