/*
 * slurm_catalog: the Slurm driver's catalog — the partitions (GET
 * /partitions) as pools, the GPU shapes their nodes offer (GET /nodes,
 * from each node's gres) and, where slurmdbd runs, the priorities the
 * user's association allows (GET /slurmdb/…/associations: the QOS the
 * context maps HIGH/HIGHEST to must be in its list). Called through the ops
 * table (api/slurm.c) and by submit (api/slurm_submit.c), which picks a
 * job's spec from it and checks its QOS.
 */
#include <jansson.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "api/slurm_priv.h"
#include "api/slurm_shapes.h"
#include "util/strbuf.h"
#include "util/timefmt.h"
#include "util/xalloc.h"

/* ---- catalog -------------------------------------------------------------- */

/* GPUs in a node's gres ("gpu:8", "gpu:a100:4,shard:2"); 0 when none. */
static int gres_gpus(const char *gres, char **type)
{
    int total = 0;
    const char *p = gres;
    while (p && *p) {
        size_t n = strcspn(p, ",");
        if (n > 4 && strncmp(p, "gpu:", 4) == 0) {
            const char *last = p + n;
            while (last > p && last[-1] != ':')
                last--;
            int count = atoi(last);
            const char *t = p + 4;
            size_t tl = (size_t)(last - 1 - t);
            if (last - 1 > t && type && *type == NULL)
                *type = xstrndup(t, tl);
            if (count > 0 && count < 1 << 16)
                total += count;
        }
        p += n;
        if (*p == ',')
            p++;
    }
    return total;
}

static bool in_array(const json_t *arr, const char *word)
{
    size_t i;
    json_t *v;
    json_array_foreach(arr, i, v) if (json_is_string(v) &&
                                      strcasecmp(json_string_value(v), word) == 0) return true;
    return false;
}

static void add_spec(struct catalog_pool *pool, size_t *cap, int gpus, int vcpus, int64_t mem,
                     const char *type, int nodes)
{
    if (pool->spec_count == *cap) {
        *cap = *cap ? *cap * 2 : 8;
        pool->specs = xreallocarray(pool->specs, *cap, sizeof *pool->specs);
    }
    struct catalog_spec *s = &pool->specs[pool->spec_count++];
    memset(s, 0, sizeof *s);
    s->name = gpus ? xasprintf("gpu-%d", gpus) : xasprintf("cpu-%d", vcpus);
    s->devices = gpus;
    s->device_type = gpus ? xstrdup(type ? type : "GPU") : NULL;
    s->vcpus = vcpus > 0 ? vcpus : 1;
    s->memory_mib = mem;
    s->max_replicas = nodes;
}

/* The specs of a partition: GPUs 1, 2, 4 … up to its smallest node's, CPUs and memory in
 * proportion. */
static void partition_specs(struct catalog_pool *pool, const json_t *nodes)
{
    int min_gpus = -1, min_cpus = -1, count = 0;
    int64_t min_mem = -1;
    char *type = NULL;
    size_t i;
    json_t *n;
    json_array_foreach(nodes, i, n)
    {
        if (!in_array(json_object_get(n, "partitions"), pool->name))
            continue;
        const char *gres = json_string_value(json_object_get(n, "gres"));
        int g = gres_gpus(gres, &type);
        int64_t cpus = 0, mem = 0;
        slurm_number(json_object_get(n, "cpus"), &cpus);
        slurm_number(json_object_get(n, "real_memory"), &mem);
        if (min_gpus < 0 || g < min_gpus)
            min_gpus = g;
        if (min_cpus < 0 || cpus < min_cpus)
            min_cpus = (int)cpus;
        if (min_mem < 0 || mem < min_mem)
            min_mem = mem;
        count++;
    }
    size_t cap = 0;
    if (count == 0) {
        free(type);
        return;
    }
    if (min_gpus <= 0) {
        add_spec(pool, &cap, 0, min_cpus, min_mem, NULL, count);
    } else {
        for (int g = 1; g <= min_gpus; g *= 2)
            add_spec(pool, &cap, g, min_cpus * g / min_gpus, min_mem * g / min_gpus, type, count);
        if ((min_gpus & (min_gpus - 1)) != 0)
            add_spec(pool, &cap, min_gpus, min_cpus, min_mem, type, count);
    }
    free(type);
}

json_t *slurm_assoc_qos(struct backend *b)
{
    struct slurm *s = driver(b);
    if (s->shape == NULL || s->user == NULL || !slurm_safe_component(s->user))
        return NULL;
    char *path = xasprintf("/slurmdb/%s/associations?user=%s", s->shape->version, s->user);
    json_t *reply = NULL;
    struct api_error e;
    /* Without slurmdbd the path is a 404: Slurm cannot tell, so the context's map decides. */
    enum backend_status st = slurm_rest(b, "GET", path, NULL, &reply, &e);
    free(path);
    if (st != BACKEND_OK)
        return NULL;
    json_t *out = json_array();
    size_t i, k;
    json_t *a, *q;
    json_array_foreach(json_object_get(reply, "associations"), i, a)
    {
        const char *user = json_string_value(json_object_get(a, "user"));
        if (user == NULL || strcmp(user, s->user) != 0)
            continue;
        json_array_foreach(json_object_get(a, "qos"), k, q)
        {
            if (json_is_string(q) && slurm_safe_component(json_string_value(q)) &&
                !slurm_qos_in(out, json_string_value(q)))
                json_array_append(out, q);
        }
    }
    json_decref(reply);
    if (json_array_size(out) == 0) { /* no list: inherited or unlimited, Slurm decides */
        json_decref(out);
        return NULL;
    }
    return out;
}

bool slurm_qos_in(const json_t *list, const char *qos)
{
    size_t i;
    json_t *q;
    json_array_foreach(list, i, q) if (json_is_string(q) &&
                                       strcmp(json_string_value(q), qos) == 0) return true;
    return false;
}

/*
 * The priorities offered: NORMAL always; HIGH (HIGHEST) when the context's
 * qos: maps it, standard or IDLE_, and, where slurmdbd answers (allowed is
 * not NULL), the user's association allows that QOS. note (NULL when every
 * one is offered) says which are not and why; submit would refuse them.
 */
static unsigned qos_priorities(const json_t *map, const json_t *allowed, const char *user,
                               const char *context, char **note)
{
    unsigned mask = 1u << PRIORITY_NORMAL;
    struct strbuf why = STRBUF_INIT;
    static const char *const names[] = {NULL, "NORMAL", "HIGH", "HIGHEST"};
    for (int p = PRIORITY_HIGH; p <= PRIORITY_HIGHEST; p++) {
        char idle[32];
        snprintf(idle, sizeof idle, "IDLE_%s", names[p]);
        const char *std_q = json_string_value(json_object_get(map, names[p]));
        const char *idle_q = json_string_value(json_object_get(map, idle));
        bool ok = allowed ? (std_q && slurm_qos_in(allowed, std_q)) ||
                                (idle_q && slurm_qos_in(allowed, idle_q))
                          : std_q || idle_q;
        if (ok) {
            mask |= 1u << p;
            continue;
        }
        strbuf_addf(&why, "%s%s", why.len ? (allowed ? ", " : " and ") : "", names[p]);
        if (allowed && (std_q || idle_q))
            strbuf_addf(&why, " (QOS %s%s%s)", std_q ? std_q : "", std_q && idle_q ? "/" : "",
                        idle_q ? idle_q : "");
        else if (allowed)
            strbuf_adds(&why, " (the context maps no QOS)");
    }
    if (why.len && allowed) {
        struct strbuf list = STRBUF_INIT;
        size_t i;
        json_t *q;
        json_array_foreach(allowed, i, q)
            strbuf_addf(&list, "%s%s", i ? "," : "", json_string_value(q));
        *note = xasprintf("the Slurm association of %s allows QOS %s, not %s", user,
                          strbuf_str(&list), strbuf_str(&why));
        strbuf_free(&list);
    } else if (why.len) {
        *note =
            xasprintf("the context '%s' maps no QOS for %s: add qos: {%s: <qos>} to it", context,
                      strbuf_str(&why), mask & (1u << PRIORITY_HIGH) ? "HIGHEST" : "HIGH");
    }
    strbuf_free(&why);
    return mask;
}

/*
 * GET /partitions and /nodes as this process last read them from an
 * endpoint: `trainjob submit` checks the job against the catalog and the
 * driver then builds the request from it, one read for both within
 * JOBS_FRESH_MS (never on the loop, which reads afresh). Across processes
 * the members the catalog reads are kept in the user's cache
 * (slurm_kept_read) for CATALOG_KEEP_S: submits in a row read the
 * partitions' and nodes' shapes once, not twice a job (sbatch reads
 * neither). They are configuration (GPUs, CPUs, memory, which partitions
 * a node is in), not state: a change shows within CATALOG_KEEP_S.
 */
#define CATALOG_KEEP_S 10

static const char *const part_fields[] = {"name", "preemption_mode", NULL};
static const char *const node_fields[] = {"partitions", "gres", "cpus", "real_memory", NULL};

/* The objects of arr with only the members named in fields. */
static json_t *pruned(const json_t *arr, const char *const *fields)
{
    json_t *out = json_array();
    size_t i;
    json_t *v;
    json_array_foreach(arr, i, v)
    {
        json_t *o = json_object();
        for (const char *const *f = fields; *f; f++) {
            json_t *m = json_object_get(v, *f);
            if (m)
                json_object_set(o, *f, m);
        }
        json_array_append_new(out, o);
    }
    return out;
}

/* The partitions and nodes an earlier process kept, when read within CATALOG_KEEP_S. */
static bool kept_catalog(struct backend *b, json_t **parts, json_t **nodes)
{
    int64_t at = 0, now = time_now_ms() / 1000;
    json_t *doc = slurm_kept_read(b, "catalog", &at);
    json_t *pa = json_object_get(doc, "partitions"), *na = json_object_get(doc, "nodes");
    bool ok =
        doc && at <= now && now - at < CATALOG_KEEP_S && json_is_array(pa) && json_is_array(na);
    if (ok) {
        *parts = json_pack("{s:O}", "partitions", pa);
        *nodes = json_pack("{s:O}", "nodes", na);
    }
    json_decref(doc);
    return ok;
}

/* Keeps what the catalog reads of parts and nodes for the next process. */
static void keep_catalog(struct backend *b, const json_t *parts, const json_t *nodes)
{
    json_t *doc = json_object();
    json_object_set_new(doc, "partitions",
                        pruned(json_object_get(parts, "partitions"), part_fields));
    json_object_set_new(doc, "nodes", pruned(json_object_get(nodes, "nodes"), node_fields));
    slurm_kept_write(b, "catalog", doc, time_now_ms() / 1000);
    json_decref(doc);
}
static struct {
    char *endpoint;
    json_t *parts, *nodes;
    int64_t at;
} memo;

void slurm_catalog_forget(void)
{
    json_decref(memo.parts);
    json_decref(memo.nodes);
    free(memo.endpoint);
    memset(&memo, 0, sizeof memo);
}

enum backend_status slurm_catalog(struct backend *b, struct catalog *out, struct api_error *err)
{
    memset(out, 0, sizeof *out);
    struct slurm *s = driver(b);
    json_t *parts, *nodes;
    int64_t now = time_now_ms();
    bool memo_fresh = memo.parts && now - memo.at < JOBS_FRESH_MS &&
                      strcmp(memo.endpoint, b->endpoint ? b->endpoint : "") == 0;
    if (s->replay == NULL && (memo_fresh || kept_catalog(b, &parts, &nodes))) {
        enum backend_status st = slurm_ensure_shape(b, err); /* the submit's request needs it */
        if (st != BACKEND_OK) {
            if (!memo_fresh) {
                json_decref(parts);
                json_decref(nodes);
            }
            return st;
        }
        if (memo_fresh) {
            parts = json_incref(memo.parts);
            nodes = json_incref(memo.nodes);
        }
    } else {
        enum backend_status st = slurm_rest(b, "GET", "partitions", NULL, &parts, err);
        if (st != BACKEND_OK)
            return st;
        st = slurm_rest(b, "GET", "nodes", NULL, &nodes, err);
        if (st != BACKEND_OK) {
            json_decref(parts);
            return st;
        }
        if (s->replay == NULL) {
            json_decref(memo.parts);
            json_decref(memo.nodes);
            free(memo.endpoint);
            memo.parts = json_incref(parts);
            memo.nodes = json_incref(nodes);
            memo.endpoint = xstrdup(b->endpoint ? b->endpoint : "");
            memo.at = now;
            keep_catalog(b, parts, nodes);
        }
    }
    out->user = xstrdup(s->user);
    const json_t *pa = json_object_get(parts, "partitions");
    const json_t *na = json_object_get(nodes, "nodes");
    size_t np = json_is_array(pa) ? json_array_size(pa) : 0;
    out->pools = xcalloc(np ? np : 1, sizeof *out->pools);
    out->workspaces = xcalloc(1, sizeof *out->workspaces);
    out->workspace_count = 1;
    struct catalog_workspace *ws = &out->workspaces[0];
    ws->name = xstrdup(b->target.workspace);
    /* HIGH and HIGHEST are offered when the context maps them to a QOS: Slurm has no other. */
    bool high = false;
    const char *qk;
    json_t *qv;
    json_object_foreach(s->qos, qk, qv) high = high || strstr(qk, "HIGH") != NULL;
    ws->role = high ? MEMBER_OWNER : MEMBER;
    /* With slurmdbd, only those the user's association allows. */
    json_t *allowed = high ? slurm_assoc_qos(b) : NULL;
    ws->priorities = qos_priorities(s->qos, allowed, s->user, s->context, &ws->priorities_note);
    json_decref(allowed);
    ws->pools = xcalloc(np ? np : 1, sizeof *ws->pools);
    size_t i;
    json_t *p;
    json_array_foreach(pa, i, p)
    {
        const char *name = json_string_value(json_object_get(p, "name"));
        if (name == NULL || !slurm_safe_component(name))
            continue;
        struct catalog_pool *pool = &out->pools[out->pool_count++];
        pool->name = xstrdup(name);
        const json_t *pm = json_object_get(p, "preemption_mode");
        bool idle = in_array(pm, "requeue") || in_array(pm, "cancel") ||
                    (json_is_string(pm) && (strcasestr(json_string_value(pm), "requeue") ||
                                            strcasestr(json_string_value(pm), "cancel")));
        pool->type = idle ? POOL_IDLE : POOL_DEDICATED;
        pool->display_name = xasprintf("Slurm partition %s", name);
        partition_specs(pool, na);
        ws->pools[ws->pool_count++] = xstrdup(name);
    }
    out->images = xcalloc(1, sizeof *out->images);
    out->image_count = 1;
    out->images[0].path = xstrdup(CATALOG_HOST_IMAGE);
    out->images[0].source = xstrdup("official");
    out->images[0].description =
        xstrdup(s->launcher && *s->launcher
                    ? "the node's own environment (or any image, through the context's launcher)"
                    : "the node's own environment");
    out->resource_limits = xstrdup("enforced by Slurm (cons_tres: CPUs, memory, GPUs per node)");
    /* Volumes are the context's: a name, and the directory every node sees it at. */
    size_t nv = json_object_size(s->volumes);
    out->volumes = xcalloc(nv ? nv : 1, sizeof *out->volumes);
    const char *vk;
    json_t *vv;
    json_object_foreach(s->volumes, vk, vv)
    {
        struct catalog_volume *v = &out->volumes[out->volume_count++];
        v->id = xstrdup(vk);
        v->path = xstrdup(json_string_value(vv) ? json_string_value(vv) : "");
    }
    out->zoneless = true; /* partitions are nodes: no zone or VPC to ask for */
    json_decref(parts);
    json_decref(nodes);
    return BACKEND_OK;
}
