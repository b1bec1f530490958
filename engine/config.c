/*
 * config: trainjobd's catalogue, engine.yaml; see config.h.
 *
 * Owns struct engine_config and everything in it. The file format is the
 * struct itself, described once below as api/schema tables: config_parse is
 * yamltree → schema_decode (strict) → the semantic checks at the bottom of
 * this file, and config_write is schema_encode → yamltree_emit, so what is
 * written reads back unchanged. Also here: probing this machine for the
 * default catalogue (sysconf, sysinfo, nvidia-smi), roles, and the per-caller
 * struct catalog the HTTP layer serves.
 *
 * Called by trainjobd's start-up (probe, default, parse, write) and by its
 * request handlers and scheduler (role, look-ups, catalog).
 */
#include "engine/config.h"

#include <jansson.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>
#include <unistd.h>

#include "api/docpos.h"
#include "api/finding.h"
#include "api/jobspec.h"
#include "api/schema.h"
#include "api/validate.h"
#include "api/yamltree.h"
#include "util/fuzzy.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#define NVIDIA_SMI "nvidia-smi"
#define NVIDIA_SMI_ARGS " --query-gpu=name,memory.total --format=csv,noheader,nounits"
#define NVIDIA_SMI_MAX_OUTPUT (64 * 1024)
#define MAX_GPUS 1024

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
};
static const struct object_type key_type = SCHEMA_ELEM(struct config_key, key_fields);

static const struct field limits_fields[] = {
    F_INT(struct config_limits, restart_delay_ms),
    F_INT(struct config_limits, restart_delay_max_ms),
    F_INT(struct config_limits, restart_reset_after_ms),
    F_INT(struct config_limits, events_per_job),
    F_INT(struct config_limits, save_retry_ms),
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
    "#   keys        AK/SK pairs accepted on TCP, and the user each one belongs to.\n"
    "#   worker_process_limit\n"
    "#               the most processes one worker may run at once, where cgroups\n"
    "#               let trainjobd enforce it (0: the default, 4096).\n"
    "#   limits      optional: restart_delay_ms (10000), restart_delay_max_ms (300000)\n"
    "#               and restart_reset_after_ms (600000) pace a crash-looping job;\n"
    "#               events_per_job (200) bounds the events kept per job;\n"
    "#               save_retry_ms (1000) paces retries of a save the disk refused.\n"
    "\n";

/* ---- probing this machine ----------------------------------------------- */

/* Is prog an executable file in a directory of $PATH? */
static bool on_path(const char *prog)
{
    const char *path = getenv("PATH");
    if (path == NULL || *path == '\0')
        return false;
    struct strbuf candidate = STRBUF_INIT;
    bool found = false;
    for (const char *p = path; !found;) {
        const char *end = strchr(p, ':');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        strbuf_reset(&candidate);
        if (n == 0)
            strbuf_addc(&candidate, '.');
        else
            strbuf_add(&candidate, p, n);
        strbuf_addf(&candidate, "/%s", prog);
        found = access(strbuf_str(&candidate), X_OK) == 0;
        if (end == NULL)
            break;
        p = end + 1;
    }
    strbuf_free(&candidate);
    return found;
}

/* nvidia-smi's answer, or NULL when it is absent, fails or says too much. */
static char *run_nvidia_smi(void)
{
    if (!on_path(NVIDIA_SMI))
        return NULL;
    /* A wedged driver can hang nvidia-smi; start-up must not hang with it. */
    const char *cmd = on_path("timeout") ? "timeout 10 " NVIDIA_SMI NVIDIA_SMI_ARGS " 2>/dev/null"
                                         : NVIDIA_SMI NVIDIA_SMI_ARGS " 2>/dev/null";
    FILE *p = popen(cmd, "r");
    if (p == NULL)
        return NULL;
    struct strbuf out = STRBUF_INIT;
    char buf[4096];
    size_t n;
    /* Read to the end even past the limit: a writer blocked on a full pipe never exits. */
    while ((n = fread(buf, 1, sizeof buf, p)) > 0)
        if (out.len <= NVIDIA_SMI_MAX_OUTPUT)
            strbuf_add(&out, buf, n);
    int status = pclose(p);
    /* -1: someone else reaped it (a SIGCHLD handler); the output decides. */
    bool failed = status != -1 && (!WIFEXITED(status) || WEXITSTATUS(status) != 0);
    if (failed || out.len > NVIDIA_SMI_MAX_OUTPUT) {
        strbuf_free(&out);
        return NULL;
    }
    return strbuf_detach(&out, NULL);
}

static bool is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r';
}

/* Trims blanks from both ends of [*s, *s + *n). */
static void trim(const char **s, size_t *n)
{
    while (*n > 0 && is_blank(**s)) {
        (*s)++;
        (*n)--;
    }
    while (*n > 0 && is_blank((*s)[*n - 1]))
        (*n)--;
}

/* One line "NAME, MEMORY_MIB": false unless both parts are well formed. */
static bool parse_gpu_line(const char *line, size_t n, const char **name, size_t *name_len,
                           int64_t *mib)
{
    const char *comma = memchr(line, ',', n);
    if (comma == NULL)
        return false;
    *name = line;
    *name_len = (size_t)(comma - line);
    trim(name, name_len);
    const char *num = comma + 1;
    size_t num_len = n - (size_t)(num - line);
    trim(&num, &num_len);
    if (*name_len == 0 || num_len == 0 || num_len > 9)
        return false;
    for (size_t i = 0; i < *name_len; i++)
        if ((*name)[i] < 0x20 || (*name)[i] > 0x7e)
            return false; /* GPU names are printable ASCII; anything else is not a name */
    int64_t v = 0;
    for (size_t i = 0; i < num_len; i++) {
        if (num[i] < '0' || num[i] > '9')
            return false; /* also "[N/A]" and a third column */
        v = v * 10 + (num[i] - '0');
    }
    *mib = v;
    return v > 0;
}

/* Line by line; one line it does not understand voids the whole answer. */
int config_parse_nvidia_smi(const char *text, struct machine_info *mi)
{
    free(mi->gpu_type);
    mi->gpu_type = NULL;
    mi->gpus = 0;
    mi->gpu_memory_gib = 0;

    int gpus = 0;
    char *type = NULL;
    int64_t min_mib = 0;
    for (const char *p = text; *p != '\0';) {
        const char *eol = strchr(p, '\n');
        size_t n = eol ? (size_t)(eol - p) : strlen(p);
        const char *line = p;
        p += eol ? n + 1 : n;
        trim(&line, &n);
        if (n == 0)
            continue;
        const char *name;
        size_t name_len;
        int64_t mib;
        if (!parse_gpu_line(line, n, &name, &name_len, &mib) || gpus == MAX_GPUS) {
            free(type);
            return 0;
        }
        if (type == NULL)
            type = xstrndup(name, name_len);
        if (gpus == 0 || mib < min_mib)
            min_mib = mib;
        gpus++;
    }
    if (gpus == 0)
        return 0;
    mi->gpus = gpus;
    mi->gpu_type = type;
    mi->gpu_memory_gib = (int)(min_mib / 1024);
    return gpus;
}

/* Fields it cannot learn stay 0, except CPUs: a machine has at least one. */
void config_probe_machine(struct machine_info *mi)
{
    memset(mi, 0, sizeof *mi);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    mi->cpus = cpus > 0 && cpus < INT_MAX ? (int)cpus : 1;
    struct sysinfo si;
    if (sysinfo(&si) == 0)
        mi->memory_mib = (int64_t)((unsigned long long)si.totalram * si.mem_unit / (1024 * 1024));
    char *smi = run_nvidia_smi();
    if (smi != NULL) {
        config_parse_nvidia_smi(smi, mi);
        free(smi);
    }
}

void machine_info_free(struct machine_info *mi)
{
    free(mi->gpu_type);
    memset(mi, 0, sizeof *mi);
}

/* ---- the default catalogue ---------------------------------------------- */

static void add_string(char ***v, size_t *n, const char *s)
{
    *v = xreallocarray(*v, *n + 1, sizeof **v);
    (*v)[(*n)++] = xstrdup(s);
}

static struct config_node *add_node(struct engine_config *cfg, const char *name)
{
    cfg->nodes = xreallocarray(cfg->nodes, cfg->node_count + 1, sizeof *cfg->nodes);
    struct config_node *n = &cfg->nodes[cfg->node_count++];
    memset(n, 0, sizeof *n);
    n->name = xstrdup(name);
    return n;
}

static void add_spec(struct engine_config *cfg, const char *name, int gpus, int cpus,
                     int64_t memory_mib)
{
    cfg->specs = xreallocarray(cfg->specs, cfg->spec_count + 1, sizeof *cfg->specs);
    struct config_spec *s = &cfg->specs[cfg->spec_count++];
    memset(s, 0, sizeof *s);
    s->name = xstrdup(name);
    s->gpus = gpus;
    s->cpus = cpus;
    s->memory_mib = memory_mib;
}

/* A pool over every node and spec, named "<name> (<type label>)" for people. */
static void add_pool(struct engine_config *cfg, const char *name, enum pool_type type,
                     const char *zone)
{
    cfg->pools = xreallocarray(cfg->pools, cfg->pool_count + 1, sizeof *cfg->pools);
    struct config_pool *p = &cfg->pools[cfg->pool_count++];
    memset(p, 0, sizeof *p);
    p->name = xstrdup(name);
    p->display_name = xasprintf("%s (%s)", name, pool_type_label(type));
    p->type = type;
    if (zone)
        add_string(&p->zones, &p->zone_count, zone);
}

/* ENGINE.md §Defaults, field by field; pools list no nodes or specs, so they span all. */
void config_default(struct engine_config *cfg, const struct machine_info *mi, const char *user,
                    const char *state_dir, bool demo)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->subscription = xstrdup("local");
    cfg->resource_group = xstrdup("default");
    cfg->zone = xstrdup("local-1z");

    cfg->regions = xcalloc(1, sizeof *cfg->regions);
    cfg->region_count = 1;
    cfg->regions[0].name = xstrdup("local-1");
    add_string(&cfg->regions[0].zones, &cfg->regions[0].zone_count, "local-1z");
    add_string(&cfg->regions[0].vpcs, &cfg->regions[0].vpc_count, "vpc-local");

    cfg->workspaces = xcalloc(1, sizeof *cfg->workspaces);
    cfg->workspace_count = 1;
    cfg->workspaces[0].name = xstrdup("default");
    add_string(&cfg->workspaces[0].owners, &cfg->workspaces[0].owner_count, user);

    struct config_node *local = add_node(cfg, "local");
    local->cpus = mi->cpus;
    local->memory_mib = mi->memory_mib;
    if (mi->gpus > 0) {
        local->gpus = mi->gpus;
        local->gpu_type = mi->gpu_type ? xstrdup(mi->gpu_type) : NULL;
        local->gpu_memory_gib = mi->gpu_memory_gib;
    }

    add_pool(cfg, "local", POOL_DEDICATED, NULL);
    add_pool(cfg, "local-idle", POOL_IDLE, "local-1z");

    add_spec(cfg, "cpu-1", 0, 1, 1024);
    cfg->worker_process_limit = CONFIG_DEFAULT_WORKER_PROCESS_LIMIT;
    if (mi->gpus > 0) {
        int cpus = mi->cpus / mi->gpus;
        add_spec(cfg, "gpu-1", 1, cpus > 1 ? cpus : 1, mi->memory_mib / mi->gpus);
    }

    cfg->images = xcalloc(1, sizeof *cfg->images);
    cfg->image_count = 1;
    cfg->images[0].path = xstrdup("local/host");
    cfg->images[0].source = xstrdup("host");
    cfg->images[0].description = xstrdup("run on this machine, no container");

    size_t dir_len = strlen(state_dir);
    while (dir_len > 1 && state_dir[dir_len - 1] == '/')
        dir_len--;
    cfg->volumes = xcalloc(1, sizeof *cfg->volumes);
    cfg->volume_count = 1;
    cfg->volumes[0].id = xstrdup("scratch");
    cfg->volumes[0].display_name = xstrdup("scratch");
    cfg->volumes[0].zone = xstrdup("local-1z");
    cfg->volumes[0].path = xasprintf("%.*s%svolumes/scratch", (int)dir_len, state_dir,
                                     dir_len > 0 && state_dir[dir_len - 1] == '/' ? "" : "/");

    if (!demo)
        return;
    add_pool(cfg, "sim-public", POOL_PUBLIC, "local-1z");
    for (int i = 1; i <= 4; i++) {
        char name[32];
        snprintf(name, sizeof name, "sim-n%d", i);
        struct config_node *n = add_node(cfg, name);
        n->gpus = 8;
        n->gpu_type = xstrdup("simulated");
        n->cpus = 16;
        n->memory_mib = 65536;
        n->simulated = true;
    }
    add_spec(cfg, "sim-gpu-1", 1, 2, 4096);
    add_spec(cfg, "sim-gpu-8", 8, 16, 8 * 4096);
}

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

/* YAML → tree → struct (strict) → semantic checks; then every finding gets its line:col. */
int config_parse(const char *name, const char *text, size_t len, struct engine_config *cfg,
                 struct findings *fs)
{
    (void)name;
    memset(cfg, 0, sizeof *cfg);
    struct docpos pos = DOCPOS_INIT;
    json_t *root = yamltree_parse_or_report(text, len, &pos, fs);
    if (root == NULL) {
        docpos_free(&pos);
        return -1;
    }
    struct findings found = FINDINGS_INIT;
    if (json_is_object(root)) {
        schema_decode(root, &config_type, cfg, SCHEMA_STRICT, "", &found);
        check_config(cfg, &found);
    } else {
        findings_add(&found, SEVERITY_ERROR, "",
                     "expected a mapping of engine settings at the top level, got %s",
                     schema_type_name(root));
    }
    json_decref(root);
    docpos_locate(&pos, &found);
    docpos_free(&pos);
    size_t errors = findings_count(&found, SEVERITY_ERROR);
    findings_move(fs, &found);
    if (errors > 0) {
        config_free(cfg);
        return -1;
    }
    return 0;
}

/* ---- semantic checks ---------------------------------------------------- */

static bool str_eq(const char *a, const char *b)
{
    return a != NULL && b != NULL && strcmp(a, b) == 0;
}

static bool has_string(char *const *v, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (str_eq(v[i], s))
            return true;
    return false;
}

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
                  {"save_retry_ms", l->save_retry_ms}};
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
    }
}

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
}
