/*
 * config_machine: probing this machine for trainjobd's default catalogue
 * (sysconf, sysinfo, nvidia-smi) and building that default (config.h:
 * config_probe_machine, config_parse_nvidia_smi, config_default). Called by
 * trainjobd's start-up when there is no engine.yaml yet; moved out of
 * config.c unchanged.
 */
#include "engine/config.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/strbuf.h"
#include "util/xalloc.h"

#define NVIDIA_SMI "nvidia-smi"
#define NVIDIA_SMI_ARGS " --query-gpu=name,memory.total --format=csv,noheader,nounits"
#define NVIDIA_SMI_MAX_OUTPUT (64 * 1024)
#define MAX_GPUS 1024

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

    if (demo) {
        struct strbuf said = STRBUF_INIT;
        config_add_demo(cfg, &said);
        strbuf_free(&said);
    }
}

/* Whether cfg already has a node, spec or pool of that name. */
static bool has_node(const struct engine_config *cfg, const char *name)
{
    for (size_t i = 0; i < cfg->node_count; i++)
        if (strcmp(cfg->nodes[i].name, name) == 0)
            return true;
    return false;
}

static bool has_spec(const struct engine_config *cfg, const char *name)
{
    for (size_t i = 0; i < cfg->spec_count; i++)
        if (strcmp(cfg->specs[i].name, name) == 0)
            return true;
    return false;
}

static bool has_pool(const struct engine_config *cfg, const char *name)
{
    for (size_t i = 0; i < cfg->pool_count; i++)
        if (strcmp(cfg->pools[i].name, name) == 0)
            return true;
    return false;
}

/* The demo's nodes, specs and pool (config_default's demo part), each unless cfg has it. */
int config_add_demo(struct engine_config *cfg, struct strbuf *said)
{
    int added = 0;
    if (!has_pool(cfg, "sim-public")) {
        if (cfg->zone == NULL) {
            strbuf_adds(said, "no pool sim-public: the config names no zone; ");
        } else {
            add_pool(cfg, "sim-public", POOL_PUBLIC, cfg->zone);
            added++;
        }
    }
    for (int i = 1; i <= 4; i++) {
        char name[32];
        snprintf(name, sizeof name, "sim-n%d", i);
        if (has_node(cfg, name))
            continue;
        struct config_node *n = add_node(cfg, name);
        n->gpus = 8;
        n->gpu_type = xstrdup("simulated");
        n->cpus = 16;
        n->memory_mib = 65536;
        n->simulated = true;
        added++;
    }
    if (!has_spec(cfg, "sim-gpu-1")) {
        add_spec(cfg, "sim-gpu-1", 1, 2, 4096);
        added++;
    }
    if (!has_spec(cfg, "sim-gpu-8")) {
        add_spec(cfg, "sim-gpu-8", 8, 16, 8 * 4096);
        added++;
    }
    /* A pool that lists its nodes or specs, or a workspace its pools, does not get them. */
    for (size_t i = 0; i < cfg->pool_count; i++)
        if (cfg->pools[i].node_count || cfg->pools[i].spec_count)
            strbuf_addf(said,
                        "pool %s lists its nodes or specs: the simulated ones are "
                        "not in it; ",
                        cfg->pools[i].name);
    for (size_t i = 0; i < cfg->workspace_count; i++)
        if (cfg->workspaces[i].pool_count)
            strbuf_addf(said,
                        "workspace %s lists its pools: sim-public is not among "
                        "them; ",
                        cfg->workspaces[i].name);
    return added;
}
