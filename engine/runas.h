/*
 * runas: which Unix user a job's workers run as. A job never runs as root.
 *
 * A personal trainjobd (not root) runs every job as the user who runs it,
 * as it always did: nothing changes hands. A trainjobd that runs as root
 * runs each job as
 *   - the Unix user its key maps it to (engine.yaml keys[].unix_user), for
 *     a member named by a TCP key;
 *   - else, for a member of no key (who came through the Unix socket, where
 *     the member is the peer's own user), that Unix user;
 *   - else (a key without unix_user, a name without a passwd entry, or a
 *     user whose uid is 0) the dedicated user: engine.yaml job_user, or
 *     `trainjob` — made with useradd as a system user when missing — or,
 *     where it cannot be made, `nobody`.
 * Decided again at each start from the config then loaded.
 *
 * Owns struct runas (what runas_setup found once at engine start: whether
 * to drop at all, the dedicated user, the line the log and catalog show).
 * Called by engine.c (setup, the log line), lifecycle.c (each start) and
 * requests.c (the catalog's run_as for the caller).
 */
#ifndef ENGINE_RUNAS_H
#define ENGINE_RUNAS_H

#include <stdbool.h>

#include "engine/runner.h"

struct engine_config;
struct strbuf;
struct runas;

/* The user `trainjobd` creates and runs jobs as when job_user is not set. */
#define RUNAS_DEFAULT_USER "trainjob"
/* The user it falls back to when that user cannot be had. */
#define RUNAS_FALLBACK_USER "nobody"

/*
 * Decides, for the effective uid of this process and cfg, who jobs run as.
 * Never fails: a dedicated user that cannot be made falls back, and says so
 * in runas_summary.
 */
struct runas *runas_setup(const struct engine_config *cfg);
void runas_free(struct runas *ra);
/* One line for the engine's first log line: "jobs run as …". */
const char *runas_summary(const struct runas *ra);
/*
 * Fills *out with who member's jobs run as (groups owned: runas_user_free)
 * and, when name is not NULL, a text for people ("tj-alice (uid 1001)").
 */
void runas_member(const struct runas *ra, const struct engine_config *cfg, const char *member,
                  struct runner_user *out, char **name);
void runas_user_free(struct runner_user *u);

#endif
