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

/* Fills every absent field that has a default. cat may be NULL (offline). */
void jobspec_fill_defaults(struct jobspec *job, const struct catalog *cat);
/* A new name for a job of framework fw: "pt-" + 8 random [a-z0-9]. */
char *jobspec_generate_name(enum framework fw);

#endif
