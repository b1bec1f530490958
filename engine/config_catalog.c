/*
 * config_catalog: roles and look-ups in trainjobd's catalogue (who is an
 * admin, a workspace's owner or member; a node, spec, pool, volume or key by
 * name), the catalogue one caller sees as a struct catalog (what the HTTP
 * layer serves and validate_job checks against), and the effective limits.
 * Called by trainjobd's request handlers and scheduler; moved out of
 * config.c unchanged.
 */
#include "engine/config.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/catalog.h"
#include "api/validate.h"
#include "engine/config_priv.h"
#include "util/xalloc.h"

/* ---- roles and look-ups ------------------------------------------------- */

static const struct config_workspace *find_workspace(const struct engine_config *cfg,
                                                     const char *name)
{
    for (size_t i = 0; i < cfg->workspace_count; i++)
        if (str_eq(cfg->workspaces[i].name, name))
            return &cfg->workspaces[i];
    return NULL;
}

bool config_is_admin(const struct engine_config *cfg, const char *user)
{
    return user &&
           (str_eq(cfg->engine_user, user) || has_string(cfg->admins, cfg->admin_count, user));
}

/* The strongest role user has in w: admin, owner, member, none. */
static enum member_role role_in(const struct engine_config *cfg, const struct config_workspace *w,
                                const char *user)
{
    if (config_is_admin(cfg, user))
        return MEMBER_ADMIN;
    if (has_string(w->owners, w->owner_count, user))
        return MEMBER_OWNER;
    if (has_string(w->members, w->member_count, user))
        return MEMBER;
    return MEMBER_NONE;
}

enum member_role config_role(const struct engine_config *cfg, const char *ws, const char *user)
{
    const struct config_workspace *w = find_workspace(cfg, ws);
    return w && user ? role_in(cfg, w, user) : MEMBER_NONE;
}

const struct config_node *config_node(const struct engine_config *cfg, const char *name)
{
    for (size_t i = 0; i < cfg->node_count; i++)
        if (str_eq(cfg->nodes[i].name, name))
            return &cfg->nodes[i];
    return NULL;
}

const struct config_spec *config_spec(const struct engine_config *cfg, const char *name)
{
    for (size_t i = 0; i < cfg->spec_count; i++)
        if (str_eq(cfg->specs[i].name, name))
            return &cfg->specs[i];
    return NULL;
}

const struct config_pool *config_pool(const struct engine_config *cfg, const char *name)
{
    for (size_t i = 0; i < cfg->pool_count; i++)
        if (str_eq(cfg->pools[i].name, name))
            return &cfg->pools[i];
    return NULL;
}

const struct config_volume *config_volume(const struct engine_config *cfg, const char *id)
{
    for (size_t i = 0; i < cfg->volume_count; i++)
        if (str_eq(cfg->volumes[i].id, id))
            return &cfg->volumes[i];
    return NULL;
}

bool config_pool_has_node(const struct config_pool *pool, const char *node)
{
    return pool->node_count == 0 || has_string(pool->nodes, pool->node_count, node);
}

int config_worker_process_limit(const struct engine_config *cfg)
{
    return cfg->worker_process_limit > 0 ? cfg->worker_process_limit
                                         : CONFIG_DEFAULT_WORKER_PROCESS_LIMIT;
}

const struct config_key *config_key(const struct engine_config *cfg, const char *access_key)
{
    for (size_t i = 0; i < cfg->key_count; i++)
        if (str_eq(cfg->keys[i].access_key, access_key))
            return &cfg->keys[i];
    return NULL;
}

/* ---- the catalogue one caller sees -------------------------------------- */

static char *dup_or_null(const char *s)
{
    return s ? xstrdup(s) : NULL;
}

static char **dup_strings(char *const *v, size_t n)
{
    if (n == 0)
        return NULL;
    char **out = xcalloc(n, sizeof *out);
    for (size_t i = 0; i < n; i++)
        out[i] = dup_or_null(v[i]);
    return out;
}

/* How many workers of spec fit on node at once; a spec asking for nothing fits nowhere. */
static int64_t workers_per_node(const struct config_node *n, const struct config_spec *s)
{
    int64_t fit = INT64_MAX;
    if (s->gpus > 0 && n->gpus / s->gpus < fit)
        fit = n->gpus / s->gpus;
    if (s->cpus > 0 && n->cpus / s->cpus < fit)
        fit = n->cpus / s->cpus;
    if (s->memory_mib > 0 && n->memory_mib / s->memory_mib < fit)
        fit = n->memory_mib / s->memory_mib;
    return fit == INT64_MAX || fit < 0 ? 0 : fit;
}

/* A spec as pool offers it: the device type and capacity of the nodes it spans. */
static void catalog_spec_of(const struct engine_config *cfg, const struct config_pool *pool,
                            const struct config_spec *s, struct catalog_spec *out)
{
    out->name = xstrdup(s->name);
    out->devices = s->gpus;
    out->vcpus = s->cpus;
    out->memory_mib = s->memory_mib;
    int64_t total = 0;
    for (size_t i = 0; i < cfg->node_count; i++) {
        const struct config_node *n = &cfg->nodes[i];
        if (!config_pool_has_node(pool, n->name))
            continue;
        if (s->gpus > 0 && n->gpus > 0) {
            if (out->device_type == NULL && n->gpu_type != NULL) {
                out->device_type = xstrdup(n->gpu_type);
                out->device_memory_gib = n->gpu_memory_gib;
            }
            out->simulated = out->simulated || n->simulated;
        }
        if (!n->unschedulable)
            total += workers_per_node(n, s);
    }
    out->max_replicas = total > INT_MAX ? INT_MAX : (int)total;
}

/* A pool with the specs it offers (its list, or every spec), in config order. */
static void catalog_pool_of(const struct engine_config *cfg, const struct config_pool *p,
                            struct catalog_pool *out)
{
    out->name = xstrdup(p->name);
    out->display_name = dup_or_null(p->display_name);
    out->type = p->type;
    out->zones = dup_strings(p->zones, p->zone_count);
    out->zone_count = p->zone_count;
    out->nodes = xcalloc(cfg->node_count ? cfg->node_count : 1, sizeof *out->nodes);
    for (size_t i = 0; i < cfg->node_count; i++)
        if (!cfg->nodes[i].unschedulable && config_pool_has_node(p, cfg->nodes[i].name))
            out->nodes[out->node_count++] = xstrdup(cfg->nodes[i].name);
    out->specs = xcalloc(cfg->spec_count ? cfg->spec_count : 1, sizeof *out->specs);
    for (size_t i = 0; i < cfg->spec_count; i++) {
        const struct config_spec *s = &cfg->specs[i];
        if (p->spec_count == 0 || has_string(p->specs, p->spec_count, s->name))
            catalog_spec_of(cfg, p, s, &out->specs[out->spec_count++]);
    }
}

/* The caller's workspaces; bound[i] is set for each pool bound to one of them. */
static void catalog_workspaces(const struct engine_config *cfg, const char *user,
                               struct catalog *out, bool *bound)
{
    out->workspaces =
        xcalloc(cfg->workspace_count ? cfg->workspace_count : 1, sizeof *out->workspaces);
    for (size_t i = 0; i < cfg->workspace_count; i++) {
        const struct config_workspace *w = &cfg->workspaces[i];
        enum member_role role = user ? role_in(cfg, w, user) : MEMBER_NONE;
        if (role == MEMBER_NONE)
            continue;
        struct catalog_workspace *cw = &out->workspaces[out->workspace_count++];
        cw->name = xstrdup(w->name);
        cw->role = role;
        cw->pools = xcalloc(cfg->pool_count ? cfg->pool_count : 1, sizeof *cw->pools);
        for (size_t j = 0; j < cfg->pool_count; j++) {
            const char *pool = cfg->pools[j].name;
            if (w->pool_count > 0 && !has_string(w->pools, w->pool_count, pool))
                continue;
            cw->pools[cw->pool_count++] = xstrdup(pool);
            bound[j] = true;
        }
    }
}

/* Workspaces and their pools per caller; zones, VPCs, volumes and images for all. */
void config_catalog(const struct engine_config *cfg, const char *user, struct catalog *out)
{
    memset(out, 0, sizeof *out);
    out->user = dup_or_null(user);
    /* trainjobd holds jobs to the console's limits (FORM.md), and says so */
    out->limits = (struct catalog_limits){.present = true,
                                          .has_max_env = true,
                                          .max_env = VALIDATE_MAX_ENV,
                                          .has_max_rules = true,
                                          .max_rules = VALIDATE_MAX_RULES,
                                          .has_min_backoff_limit = true,
                                          .min_backoff_limit = VALIDATE_MIN_BACKOFF,
                                          .has_max_backoff_limit = true,
                                          .max_backoff_limit = VALIDATE_MAX_BACKOFF};

    bool *bound = xcalloc(cfg->pool_count ? cfg->pool_count : 1, sizeof *bound);
    catalog_workspaces(cfg, user, out, bound);
    out->pools = xcalloc(cfg->pool_count ? cfg->pool_count : 1, sizeof *out->pools);
    for (size_t i = 0; i < cfg->pool_count; i++)
        if (bound[i])
            catalog_pool_of(cfg, &cfg->pools[i], &out->pools[out->pool_count++]);
    free(bound);

    size_t zones = 0, vpcs = 0;
    for (size_t i = 0; i < cfg->region_count; i++) {
        zones += cfg->regions[i].zone_count;
        vpcs += cfg->regions[i].vpc_count;
    }
    out->zones = xcalloc(zones ? zones : 1, sizeof *out->zones);
    out->vpcs = xcalloc(vpcs ? vpcs : 1, sizeof *out->vpcs);
    for (size_t i = 0; i < cfg->region_count; i++) {
        const struct config_region *r = &cfg->regions[i];
        for (size_t j = 0; j < r->zone_count; j++) {
            out->zones[out->zone_count].name = dup_or_null(r->zones[j]);
            out->zones[out->zone_count++].region = dup_or_null(r->name);
        }
        for (size_t j = 0; j < r->vpc_count; j++) {
            out->vpcs[out->vpc_count].id = dup_or_null(r->vpcs[j]);
            out->vpcs[out->vpc_count++].region = dup_or_null(r->name);
        }
    }

    out->volumes = xcalloc(cfg->volume_count ? cfg->volume_count : 1, sizeof *out->volumes);
    out->volume_count = cfg->volume_count;
    for (size_t i = 0; i < cfg->volume_count; i++) {
        out->volumes[i].id = dup_or_null(cfg->volumes[i].id);
        out->volumes[i].display_name = dup_or_null(cfg->volumes[i].display_name);
        out->volumes[i].zone = dup_or_null(cfg->volumes[i].zone);
    }
    out->images = xcalloc(cfg->image_count ? cfg->image_count : 1, sizeof *out->images);
    out->image_count = cfg->image_count;
    for (size_t i = 0; i < cfg->image_count; i++) {
        out->images[i].path = dup_or_null(cfg->images[i].path);
        out->images[i].source = dup_or_null(cfg->images[i].source);
        out->images[i].description = dup_or_null(cfg->images[i].description);
    }
    out->image_runtime = xstrdup("host"); /* no container runtime: jobs run on the machine */
}

/* A limit from engine.yaml, or its default when absent or 0. */
static int limit_or(int value, int fallback)
{
    return value > 0 ? value : fallback;
}

void config_effective_limits(const struct engine_config *cfg, struct config_limits *out)
{
    const struct config_limits *l = &cfg->limits;
    out->present = true;
    out->restart_delay_ms = limit_or(l->restart_delay_ms, CONFIG_RESTART_DELAY_MS);
    out->restart_delay_max_ms = limit_or(l->restart_delay_max_ms, CONFIG_RESTART_DELAY_MAX_MS);
    out->restart_reset_after_ms =
        limit_or(l->restart_reset_after_ms, CONFIG_RESTART_RESET_AFTER_MS);
    out->events_per_job = limit_or(l->events_per_job, CONFIG_EVENTS_PER_JOB);
    out->save_retry_ms = limit_or(l->save_retry_ms, CONFIG_SAVE_RETRY_MS);
    out->replay_per_key = limit_or(l->replay_per_key, CONFIG_REPLAY_PER_KEY);
    out->connections_per_member =
        limit_or(l->connections_per_member, CONFIG_CONNECTIONS_PER_MEMBER);
    out->anonymous_connections = limit_or(l->anonymous_connections, CONFIG_ANONYMOUS_CONNECTIONS);
    out->request_seconds = limit_or(l->request_seconds, CONFIG_REQUEST_SECONDS);
    out->streams_per_member = limit_or(l->streams_per_member, CONFIG_STREAMS_PER_MEMBER);
    out->stream_mib_per_member = limit_or(l->stream_mib_per_member, CONFIG_STREAM_MIB_PER_MEMBER);
    out->scalar_follows_per_member =
        limit_or(l->scalar_follows_per_member, CONFIG_SCALAR_FOLLOWS_PER_MEMBER);
    out->cgroups_per_member = limit_or(l->cgroups_per_member, CONFIG_CGROUPS_PER_MEMBER);
}
