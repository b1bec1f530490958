/*
 * jobspec_defaults: the platform's defaults, applied in one place so the
 * client's render and the engine agree. See jobspec_defaults.h.
 */
#include "api/jobspec_defaults.h"

#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "api/catalog.h"
#include "api/exitcodes.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

char *jobspec_generate_name(enum framework fw)
{
    static const char alphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    unsigned char rnd[JOBSPEC_GENERATED_SUFFIX_LEN];
    if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd) {
        /* No entropy source: time and pid still make clashes unlikely. */
        unsigned long seed = (unsigned long)time(NULL) ^ ((unsigned long)getpid() << 16);
        for (size_t i = 0; i < sizeof rnd; i++) {
            seed = seed * 6364136223846793005UL + 1442695040888963407UL;
            rnd[i] = (unsigned char)(seed >> 33);
        }
    }
    struct strbuf sb = STRBUF_INIT;
    strbuf_addf(&sb, "%s-", framework_name_prefix(fw));
    for (size_t i = 0; i < sizeof rnd; i++)
        strbuf_addc(&sb, alphabet[rnd[i] % (sizeof alphabet - 1)]);
    return strbuf_detach(&sb, NULL);
}

/* Rewrites each parsable exit-code list in canonical form ("1,2,3" -> "1-3"). */
static void canonical_exit_codes(struct fault_tolerance *ft)
{
    for (size_t i = 0; i < ft->rule_count; i++) {
        struct ft_rule *r = &ft->rules[i];
        struct exitcode_set set;
        struct exitcodes_error err;
        if (r->exit_codes == NULL || r->exit_codes[0] == '\0' ||
            exitcodes_parse(r->exit_codes, &set, &err) != 0)
            continue;
        struct strbuf sb = STRBUF_INIT;
        exitcodes_format(&set, &sb);
        free(r->exit_codes);
        r->exit_codes = strbuf_detach(&sb, NULL);
    }
}

static void fill_fault_tolerance(struct jobspec *job)
{
    struct fault_tolerance *ft = &job->fault_tolerance;
    if (!ft->present) {
        /* The platform's default: no restarts, any failure restarts the job. */
        ft->present = true;
        struct ft_rule *r = jobspec_add_rule(job);
        r->exit_codes = xstrdup("1-255");
        r->action = FT_ACTION_RESTART_JOB;
    }
    if (!ft->has_backoff_limit) {
        ft->has_backoff_limit = true;
        ft->backoff_limit = 0;
    }
    for (size_t i = 0; i < ft->rule_count; i++) {
        struct ft_rule *r = &ft->rules[i];
        if (!r->has_mark_node_unschedulable) {
            r->has_mark_node_unschedulable = true;
            r->mark_node_unschedulable = false;
        }
    }
    canonical_exit_codes(ft);
}

enum quota_type jobspec_pool_quota_type(const struct catalog *cat, const char *pool_name)
{
    const struct catalog_pool *pool = cat && pool_name ? catalog_pool(cat, pool_name) : NULL;
    if (pool == NULL)
        return QUOTA_TYPE_UNSPECIFIED; /* offline, or a pool it does not list: not ours to guess */
    return pool->type == POOL_IDLE ? QUOTA_TYPE_SPOT : QUOTA_TYPE_RESERVED;
}

static void fill_scheduling(struct jobspec *job, const struct catalog *cat)
{
    struct scheduling *s = &job->scheduling;
    s->present = true;
    /* a value this build does not know (kept as text) is the user's choice, not a gap */
    if (s->priority == PRIORITY_UNSPECIFIED && s->priority_other == NULL)
        s->priority = PRIORITY_NORMAL;
    if (s->quota_type == QUOTA_TYPE_UNSPECIFIED && s->quota_type_other == NULL)
        s->quota_type = jobspec_pool_quota_type(cat, job->resource_pool.name);
    if (s->quota_type == QUOTA_TYPE_SPOT && !s->has_preemptible) {
        s->has_preemptible = true;
        s->preemptible = true;
    }
}

static void fill_ssh(struct jobspec *job)
{
    struct ssh_config *ssh = &job->ssh;
    if (job->framework == FRAMEWORK_MPI) {
        /* MPI always sets up SSH between workers. */
        ssh->present = true;
        ssh->has_auto_key_setup = true;
        ssh->auto_key_setup = true;
    }
    if (ssh->present && !ssh->has_auto_key_setup) {
        ssh->has_auto_key_setup = true;
        ssh->auto_key_setup = false;
    }
    if (ssh->present && ssh->auto_key_setup && ssh->config_mount_path == NULL)
        ssh->config_mount_path = xstrdup(JOBSPEC_DEFAULT_SSH_PATH);
}

void jobspec_fill_defaults(struct jobspec *job, const struct catalog *cat)
{
    if (job->name == NULL)
        job->name = jobspec_generate_name(job->framework);
    for (size_t i = 0; i < job->role_count; i++)
        if (job->roles[i].name == NULL)
            job->roles[i].name = xstrdup(JOBSPEC_ROLE_NAME);
    for (size_t i = 0; i < job->mount_count; i++)
        if (job->mount[i].type == MOUNT_TYPE_UNSPECIFIED && job->mount[i].type_other == NULL)
            job->mount[i].type = MOUNT_TYPE_PV_AFS;
    fill_scheduling(job, cat);
    fill_fault_tolerance(job);
    fill_ssh(job);
}
