/*
 * config: trainjobd's catalogue, engine.yaml; see config.h.
 *
 * Owns struct engine_config and everything in it. The file format is the
 * struct itself, described once below as api/schema tables: config_parse is
 * yamltree → schema_decode (strict) → the semantic checks at the bottom of
 * this file, and config_write is schema_encode → yamltree_emit, so what is
 * written reads back unchanged. Probing this machine for the default
 * catalogue (sysconf, sysinfo, nvidia-smi) and the default itself are
 * config_machine.c's; roles, look-ups and the per-caller struct catalog the
 * HTTP layer serves are config_catalog.c's.
 *
 * Called by trainjobd's start-up (probe, default, parse, write) and by its
 * request handlers and scheduler (role, look-ups, catalog).
 */
#include "engine/config.h"

#include <jansson.h>
#include <limits.h>
#include <pwd.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/docpos.h"
#include "api/finding.h"
#include "api/jobspec.h"
#include "api/schema.h"
#include "api/validate.h"
#include "api/yamltree.h"
#include "engine/config_priv.h"
#include "util/fuzzy.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

/* ---- the file format, as schema tables ---------------------------------- */

/* Indexed by enum pool_type. */
static const char *const pool_type_tab[] = {"dedicated", "public", "idle"};
static const struct enum_names pool_type_names = {pool_type_tab,
                                                  sizeof pool_type_tab / sizeof pool_type_tab[0]};

static const struct field region_fields[] = {
    F_STR(struct config_region, name),
    F_STRINGS(struct config_region, zones, zone_count),
    F_STRINGS(struct config_region, vpcs, vpc_count),
};
static const struct object_type region_type = SCHEMA_ELEM(struct config_region, region_fields);

static const struct field workspace_fields[] = {
    F_STR(struct config_workspace, name),
    F_STRINGS(struct config_workspace, owners, owner_count),
    F_STRINGS(struct config_workspace, members, member_count),
    F_STRINGS(struct config_workspace, pools, pool_count),
};
static const struct object_type workspace_type =
    SCHEMA_ELEM(struct config_workspace, workspace_fields);

/* One field a line, in the order a written file shows them. */
// clang-format off
static const struct field node_fields[] = {
    F_STR(struct config_node, name),
    F_INT(struct config_node, gpus),
    F_STR(struct config_node, gpu_type),
    F_INT(struct config_node, gpu_memory_gib),
    F_INT(struct config_node, cpus),
    F_I64(struct config_node, memory_mib),
    F_FLAG(struct config_node, simulated),
    F_FLAG(struct config_node, unschedulable),
};
// clang-format on
static const struct object_type node_type = SCHEMA_ELEM(struct config_node, node_fields);

static const struct field pool_fields[] = {
    F_STR(struct config_pool, name),
    F_STR(struct config_pool, display_name),
    F_ENUMERATION_ALL(struct config_pool, type, pool_type_names),
    F_STRINGS(struct config_pool, zones, zone_count),
    F_STRINGS(struct config_pool, nodes, node_count),
    F_STRINGS(struct config_pool, specs, spec_count),
};
static const struct object_type pool_type = SCHEMA_ELEM(struct config_pool, pool_fields);

static const struct field spec_fields[] = {
    F_STR(struct config_spec, name),
    F_INT(struct config_spec, gpus),
    F_INT(struct config_spec, cpus),
    F_I64(struct config_spec, memory_mib),
};
static const struct object_type spec_type = SCHEMA_ELEM(struct config_spec, spec_fields);

static const struct field image_fields[] = {
    F_STR(struct config_image, path),
    F_STR(struct config_image, source),
    F_STR(struct config_image, description),
};
static const struct object_type image_type = SCHEMA_ELEM(struct config_image, image_fields);

static const struct field volume_fields[] = {
    F_STR(struct config_volume, id),
    F_STR(struct config_volume, display_name),
    F_STR(struct config_volume, zone),
    F_STR(struct config_volume, path),
};
static const struct object_type volume_type = SCHEMA_ELEM(struct config_volume, volume_fields);

static const struct field key_fields[] = {
    F_STR(struct config_key, access_key),
    F_STR(struct config_key, secret_key),
    F_STR(struct config_key, user),
    F_STR(struct config_key, unix_user),
};
static const struct object_type key_type = SCHEMA_ELEM(struct config_key, key_fields);

static const struct field limits_fields[] = {
    F_INT(struct config_limits, restart_delay_ms),
    F_INT(struct config_limits, restart_delay_max_ms),
    F_INT(struct config_limits, restart_reset_after_ms),
    F_INT(struct config_limits, events_per_job),
    F_INT(struct config_limits, save_retry_ms),
    F_INT(struct config_limits, replay_per_key),
    F_INT(struct config_limits, connections_per_member),
    F_INT(struct config_limits, anonymous_connections),
    F_INT(struct config_limits, request_seconds),
    F_INT(struct config_limits, streams_per_member),
    F_INT(struct config_limits, stream_mib_per_member),
    F_INT(struct config_limits, scalar_follows_per_member),
    F_INT(struct config_limits, cgroups_per_member),
};
static const struct object_type limits_type = SCHEMA_OBJ(limits_fields);

static const struct field config_fields[] = {
    F_STR(struct engine_config, subscription),
    F_STR(struct engine_config, resource_group),
    F_STR(struct engine_config, zone),
    F_STRINGS(struct engine_config, admins, admin_count),
    F_LIST(struct engine_config, regions, region_count, region_type),
    F_LIST(struct engine_config, workspaces, workspace_count, workspace_type),
    F_LIST(struct engine_config, nodes, node_count, node_type),
    F_LIST(struct engine_config, pools, pool_count, pool_type),
    F_LIST(struct engine_config, specs, spec_count, spec_type),
    F_LIST(struct engine_config, images, image_count, image_type),
    F_LIST(struct engine_config, volumes, volume_count, volume_type),
    F_LIST(struct engine_config, keys, key_count, key_type),
    F_INT(struct engine_config, worker_process_limit),
    F_STR(struct engine_config, job_user),
    F_SECTION(struct engine_config, limits, limits_type),
};
static const struct object_type config_type = SCHEMA_OBJ(config_fields);

static const char config_header[] =
    "# engine.yaml: the catalogue of trainjobd, trainjob's local engine.\n"
    "#\n"
    "# trainjobd wrote this file on its first start, describing this machine, and\n"
    "# reads it each time it starts. Sections:\n"
    "#\n"
    "#   subscription, resource_group, zone\n"
    "#               the names in ACP paths (.../subscriptions/S/resourceGroups/G/zones/Z).\n"
    "#   admins      users with owner rights in every workspace, who alone may create\n"
    "#               workspaces. The user who runs trainjobd is always one.\n"
    "#   regions     each region's zones and VPCs. Public and idle pools offer zones\n"
    "#               that one of these regions has.\n"
    "#   workspaces  who may submit jobs where: owners (may also use HIGH and HIGHEST\n"
    "#               priority, and change every job), members (NORMAL only; they\n"
    "#               change only the jobs they created, and read all), and the pools\n"
    "#               bound to the workspace (no list: every pool).\n"
    "#   nodes       what jobs run on: GPUs (type, memory per GPU), CPUs, memory.\n"
    "#               A node with `simulated: true` is not real: its GPUs exist only\n"
    "#               for scheduling, so placement and preemption can be seen on any\n"
    "#               machine, and are labelled simulated wherever they are shown.\n"
    "#               `unschedulable: true` keeps every job off a node.\n"
    "#   pools       views over the same nodes, not partitions of them. type:\n"
    "#               dedicated or public (standard jobs, quota RESERVED) or idle\n"
    "#               (quota SPOT: the capacity standard jobs leave unused; idle jobs\n"
    "#               may be preempted). nodes: where the pool may place workers (no\n"
    "#               list: every node). specs: what it offers (no list: every spec).\n"
    "#   specs       resource specs: what one worker is given (GPUs, CPUs, memory).\n"
    "#               Where trainjobd may use cgroups, a worker is held to its spec's\n"
    "#               memory and CPUs (its log says which, at start-up).\n"
    "#   images      images jobs may name; local/host runs on this machine, no container.\n"
    "#   volumes     volumes jobs may mount, each a directory on this machine.\n"
    "#   keys        AK/SK pairs accepted on TCP, and the user each one belongs to;\n"
    "#               unix_user (optional): the Unix user that member's jobs run as\n"
    "#               when trainjobd runs as root.\n"
    "#   job_user    optional: the Unix user jobs run as, when trainjobd runs as root,\n"
    "#               for members without a Unix user of their own (default: trainjob,\n"
    "#               made as a system user when missing, else nobody). Never root.\n"
    "#   worker_process_limit\n"
    "#               the most processes one worker may run at once, where cgroups\n"
    "#               let trainjobd enforce it (0: the default, 4096).\n"
    "#   limits      optional: restart_delay_ms (10000), restart_delay_max_ms (300000)\n"
    "#               and restart_reset_after_ms (600000) pace a crash-looping job;\n"
    "#               events_per_job (200) bounds the events kept per job;\n"
    "#               save_retry_ms (1000) paces retries of a save the disk refused;\n"
    "#               cgroups_per_member (512) bounds the workers (each a cgroup) one\n"
    "#               member may have started at once.\n"
    "#               Each user's share of a team engine: replay_per_key (4096),\n"
    "#               connections_per_member (64), anonymous_connections (256),\n"
    "#               request_seconds (10), streams_per_member (32),\n"
    "#               stream_mib_per_member (64), scalar_follows_per_member (8).\n"
    "\n";

void config_free(struct engine_config *cfg)
{
    free(cfg->engine_user);
    schema_free(&config_type, cfg);
    memset(cfg, 0, sizeof *cfg);
}

/* ---- reading and writing engine.yaml ------------------------------------ */

/* The header, then the struct as schema encodes it. */
void config_write(const struct engine_config *cfg, struct strbuf *out)
{
    json_t *tree = schema_encode(&config_type, cfg);
    strbuf_adds(out, config_header);
    struct doc_error err;
    /* The tree is ours and holds only strings, integers and booleans. */
    (void)yamltree_emit(tree, out, &err);
    json_decref(tree);
}

static void check_config(const struct engine_config *cfg, struct findings *fs);

static void check_config_text(const void *cfg, struct findings *fs)
{
    check_config(cfg, fs);
}

/* YAML → tree → struct (strict) → semantic checks; then every finding gets its line:col. */
int config_parse(const char *name, const char *text, size_t len, struct engine_config *cfg,
                 struct findings *fs)
{
    (void)name;
    memset(cfg, 0, sizeof *cfg);
    if (schema_decode_yaml(text, len, &config_type, cfg, check_config_text,
                           "a mapping of engine settings at the top level", false, fs) > 0) {
        config_free(cfg);
        return -1;
    }
    return 0;
}

/* ---- semantic checks ---------------------------------------------------- */

static const char *name_at(const void *items, size_t size, size_t name_offset, size_t i)
{
    return *(char *const *)((const char *)items + i * size + name_offset);
}

/*
 * Every element of list (of count elements of size bytes) must have a name
 * (the char * at name_offset), and no two the same one.
 */
static void check_names(struct findings *fs, const char *list, const char *key, const char *what,
                        const void *items, size_t count, size_t size, size_t name_offset)
{
    char path[64];
    for (size_t i = 0; i < count; i++) {
        const char *name = name_at(items, size, name_offset, i);
        snprintf(path, sizeof path, "%s[%zu].%s", list, i, key);
        if (name == NULL || *name == '\0') {
            findings_add(fs, SEVERITY_ERROR, path, "required: every %s needs a %s", what, key);
            continue;
        }
        for (size_t j = 0; j < i; j++) {
            if (str_eq(name_at(items, size, name_offset, j), name)) {
                findings_add(fs, SEVERITY_ERROR, path, "duplicate %s %s '%s' (also %s[%zu])", what,
                             key, name, list, j);
                break;
            }
        }
    }
}

/* "unknown node 'x'", with the nearest known name or the list of them. */
static void unknown_name(struct findings *fs, const char *path, const char *what, const char *name,
                         const void *items, size_t count, size_t size, size_t name_offset)
{
    const char **names = xcalloc(count ? count : 1, sizeof *names);
    struct strbuf known = STRBUF_INIT;
    size_t n = 0;
    for (size_t i = 0; i < count; i++) {
        const char *s = name_at(items, size, name_offset, i);
        if (s == NULL)
            continue;
        names[n++] = s;
        strbuf_addf(&known, "%s%s", n > 1 ? ", " : "", s);
    }
    const char *near = name ? fuzzy_nearest(name, names, n) : NULL;
    if (near)
        findings_add(fs, SEVERITY_ERROR, path, "unknown %s '%s'; did you mean %s?", what, name,
                     near);
    else if (n > 0)
        findings_add(fs, SEVERITY_ERROR, path, "unknown %s '%s' (known: %s)", what,
                     name ? name : "", strbuf_str(&known));
    else
        findings_add(fs, SEVERITY_ERROR, path, "unknown %s '%s': none is configured", what,
                     name ? name : "");
    strbuf_free(&known);
    free(names);
}

static void check_not_negative(struct findings *fs, const char *list, size_t i, const char *key,
                               int64_t value)
{
    if (value >= 0)
        return;
    char path[64];
    snprintf(path, sizeof path, "%s[%zu].%s", list, i, key);
    findings_add(fs, SEVERITY_ERROR, path, "must not be negative (found %lld)", (long long)value);
}

static bool zone_known(const struct engine_config *cfg, const char *zone)
{
    for (size_t i = 0; i < cfg->region_count; i++)
        if (has_string(cfg->regions[i].zones, cfg->regions[i].zone_count, zone))
            return true;
    return false;
}

static void check_required(struct findings *fs, const char *path, const char *value)
{
    if (value == NULL || *value == '\0')
        findings_add(fs, SEVERITY_ERROR, path, "required");
}

/* Nodes a pool names must exist, so must its specs; zones must be a region's. */
static void check_pool(const struct engine_config *cfg, size_t i, struct findings *fs)
{
    const struct config_pool *p = &cfg->pools[i];
    char path[64];
    for (size_t j = 0; j < p->node_count; j++) {
        if (config_node(cfg, p->nodes[j]))
            continue;
        snprintf(path, sizeof path, "pools[%zu].nodes[%zu]", i, j);
        unknown_name(fs, path, "node", p->nodes[j], cfg->nodes, cfg->node_count, sizeof *cfg->nodes,
                     offsetof(struct config_node, name));
    }
    for (size_t j = 0; j < p->spec_count; j++) {
        if (config_spec(cfg, p->specs[j]))
            continue;
        snprintf(path, sizeof path, "pools[%zu].specs[%zu]", i, j);
        unknown_name(fs, path, "spec", p->specs[j], cfg->specs, cfg->spec_count, sizeof *cfg->specs,
                     offsetof(struct config_spec, name));
    }
    if (p->type != POOL_DEDICATED && p->zone_count == 0) {
        snprintf(path, sizeof path, "pools[%zu].zones", i);
        findings_add(fs, SEVERITY_ERROR, path, "required: %s pool offers at least one zone",
                     p->type == POOL_IDLE ? "an idle" : "a public");
    }
    for (size_t j = 0; j < p->zone_count; j++) {
        if (zone_known(cfg, p->zones[j]))
            continue;
        snprintf(path, sizeof path, "pools[%zu].zones[%zu]", i, j);
        findings_add(fs, SEVERITY_ERROR, path, "no region has zone '%s'",
                     p->zones[j] ? p->zones[j] : "");
    }
}

/* Pools a workspace names must exist; no owners is allowed, but worth a warning. */
static void check_workspace(const struct engine_config *cfg, size_t i, struct findings *fs)
{
    const struct config_workspace *w = &cfg->workspaces[i];
    char path[64];
    if (w->owner_count == 0) {
        snprintf(path, sizeof path, "workspaces[%zu].owners", i);
        findings_add(fs, SEVERITY_WARNING, path,
                     "no owners: only admins may use HIGH or HIGHEST priority here");
    }
    for (size_t j = 0; j < w->pool_count; j++) {
        if (config_pool(cfg, w->pools[j]))
            continue;
        snprintf(path, sizeof path, "workspaces[%zu].pools[%zu]", i, j);
        unknown_name(fs, path, "pool", w->pools[j], cfg->pools, cfg->pool_count, sizeof *cfg->pools,
                     offsetof(struct config_pool, name));
    }
}

/* A user jobs may run as: one the password database knows, and not root. */
static void check_unix_user(struct findings *fs, const char *path, const char *name)
{
    if (name == NULL)
        return;
    struct passwd *pw = getpwnam(name);
    if (pw == NULL)
        findings_add(fs, SEVERITY_ERROR, path, "no Unix user '%s' on this machine", name);
    else if (pw->pw_uid == 0)
        findings_add(fs, SEVERITY_ERROR, path,
                     "'%s' has uid 0: jobs never run as root; name an unprivileged user", name);
}

/* What the schema cannot say: names, references between sections, ranges. */
static void check_config(const struct engine_config *cfg, struct findings *fs)
{
    check_required(fs, "subscription", cfg->subscription);
    check_required(fs, "resource_group", cfg->resource_group);
    check_required(fs, "zone", cfg->zone);
    check_names(fs, "regions", "name", "region", cfg->regions, cfg->region_count,
                sizeof *cfg->regions, offsetof(struct config_region, name));
    check_names(fs, "workspaces", "name", "workspace", cfg->workspaces, cfg->workspace_count,
                sizeof *cfg->workspaces, offsetof(struct config_workspace, name));
    check_names(fs, "nodes", "name", "node", cfg->nodes, cfg->node_count, sizeof *cfg->nodes,
                offsetof(struct config_node, name));
    check_names(fs, "pools", "name", "pool", cfg->pools, cfg->pool_count, sizeof *cfg->pools,
                offsetof(struct config_pool, name));
    check_names(fs, "specs", "name", "spec", cfg->specs, cfg->spec_count, sizeof *cfg->specs,
                offsetof(struct config_spec, name));
    check_names(fs, "images", "path", "image", cfg->images, cfg->image_count, sizeof *cfg->images,
                offsetof(struct config_image, path));
    check_names(fs, "volumes", "id", "volume", cfg->volumes, cfg->volume_count,
                sizeof *cfg->volumes, offsetof(struct config_volume, id));
    check_names(fs, "keys", "access_key", "key", cfg->keys, cfg->key_count, sizeof *cfg->keys,
                offsetof(struct config_key, access_key));

    for (size_t i = 0; i < cfg->node_count; i++) {
        const struct config_node *n = &cfg->nodes[i];
        check_not_negative(fs, "nodes", i, "gpus", n->gpus);
        check_not_negative(fs, "nodes", i, "gpu_memory_gib", n->gpu_memory_gib);
        check_not_negative(fs, "nodes", i, "cpus", n->cpus);
        check_not_negative(fs, "nodes", i, "memory_mib", n->memory_mib);
    }
    for (size_t i = 0; i < cfg->spec_count; i++) {
        const struct config_spec *s = &cfg->specs[i];
        check_not_negative(fs, "specs", i, "gpus", s->gpus);
        check_not_negative(fs, "specs", i, "cpus", s->cpus);
        check_not_negative(fs, "specs", i, "memory_mib", s->memory_mib);
    }
    const struct config_limits *l = &cfg->limits;
    const struct {
        const char *name;
        int value;
    } limits[] = {{"restart_delay_ms", l->restart_delay_ms},
                  {"restart_delay_max_ms", l->restart_delay_max_ms},
                  {"restart_reset_after_ms", l->restart_reset_after_ms},
                  {"events_per_job", l->events_per_job},
                  {"save_retry_ms", l->save_retry_ms},
                  {"replay_per_key", l->replay_per_key},
                  {"connections_per_member", l->connections_per_member},
                  {"anonymous_connections", l->anonymous_connections},
                  {"request_seconds", l->request_seconds},
                  {"streams_per_member", l->streams_per_member},
                  {"stream_mib_per_member", l->stream_mib_per_member},
                  {"scalar_follows_per_member", l->scalar_follows_per_member},
                  {"cgroups_per_member", l->cgroups_per_member}};
    for (size_t i = 0; i < sizeof limits / sizeof limits[0]; i++)
        if (limits[i].value < 0)
            findings_add(fs, SEVERITY_ERROR, "limits", "%s: must not be negative (0: the default)",
                         limits[i].name);
    for (size_t i = 0; i < cfg->pool_count; i++)
        check_pool(cfg, i, fs);
    for (size_t i = 0; i < cfg->workspace_count; i++)
        check_workspace(cfg, i, fs);
    for (size_t i = 0; i < cfg->volume_count; i++) {
        const char *p = cfg->volumes[i].path;
        char path[64];
        snprintf(path, sizeof path, "volumes[%zu].path", i);
        if (p == NULL)
            findings_add(fs, SEVERITY_ERROR, path, "required: the directory on this machine");
        else if (p[0] != '/')
            findings_add(fs, SEVERITY_ERROR, path, "must be an absolute path (found '%s')", p);
    }
    if (cfg->worker_process_limit < 0 || cfg->worker_process_limit == 1)
        findings_add(fs, SEVERITY_ERROR, "worker_process_limit",
                     "must be 0 (the default, %d) or at least 2: the worker's shell and what it "
                     "runs (found %d)",
                     CONFIG_DEFAULT_WORKER_PROCESS_LIMIT, cfg->worker_process_limit);
    for (size_t i = 0; i < cfg->key_count; i++) {
        char path[64];
        snprintf(path, sizeof path, "keys[%zu].secret_key", i);
        check_required(fs, path, cfg->keys[i].secret_key);
        snprintf(path, sizeof path, "keys[%zu].user", i);
        check_required(fs, path, cfg->keys[i].user);
        snprintf(path, sizeof path, "keys[%zu].unix_user", i);
        check_unix_user(fs, path, cfg->keys[i].unix_user);
    }
    check_unix_user(fs, "job_user", cfg->job_user);
}
