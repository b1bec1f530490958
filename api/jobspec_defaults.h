/*
 * jobspec_defaults: what the platform fills in when a field is left out, so
 * `trainjob render` shows the job exactly as it will run: a generated name,
 * the default fault-tolerance policy, NORMAL priority, the quota type the
 * pool implies, the default SSH config path, PV_AFS mounts, and exit-code
 * lists in canonical form.
 */
#ifndef API_JOBSPEC_DEFAULTS_H
#define API_JOBSPEC_DEFAULTS_H

#include "api/jobspec.h"

struct catalog;

#define JOBSPEC_GENERATED_SUFFIX_LEN 8

/*
 * Fills every absent field that has a default, from cat — the same catalog
 * the backend holds, so `trainjob render`, the wizard and trainjobd agree.
 * cat may be NULL (offline): what only the catalog knows (the quota type a
 * pool implies, and so whether preemptible defaults to true) stays unset.
 */
void jobspec_fill_defaults(struct jobspec *job, const struct catalog *cat);
/*
 * The quota type a pool implies: SPOT for an idle pool, RESERVED for a
 * standard one; UNSPECIFIED when cat is NULL or does not list the pool.
 */
enum quota_type jobspec_pool_quota_type(const struct catalog *cat, const char *pool_name);
/* A new name for a job of framework fw: "pt-" + 8 random [a-z0-9]. */
char *jobspec_generate_name(enum framework fw);

#endif
