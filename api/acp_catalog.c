/*
 * acp_catalog: what SenseCore's public pages let a client list for the
 * wizard, turned into a struct catalog. Called by the acp driver (acp.c),
 * which makes the requests; this module owns the paths and the decoding.
 *
 * Sources (SenseCore ACP's REST contract, taken from third-party clients
 * that work against SenseCore, not the official pages, which were not
 * readable here — so every shape below is UNVERIFIED against a live server):
 *
 *   GET /compute/workspace/data/v1/subscriptions/{sub}/resourceGroups/{rg}
 *       /zones/{ws_zone}/workspaces/{ws}/workspaceAEC2Bindings
 *       → {aec2s: [{id: "/subscriptions/…/zones/{pool_zone}/aec2s/{name}",
 *                   name, state, vpc_id, quota_type: ALL|RESERVED|ON_DEMAND|SPOT}]}
 *   GET /compute/aec2/data/v1/subscriptions/{sub}/resourceGroups/{rg}
 *       /zones/{pool_zone}/aec2s/{pool}/resourceSpecs?page_size=&page_token=
 *       → {resource_specs: [{name, device: {number, type, memory, …},
 *                            cpu: {vcpu_allocatable, …}, memory: {allocatable}}],
 *          next_page_token}
 *
 * Both on the endpoint's host (aec2.<region>.sensecoreapi.cn). What the
 * pages do not define — zones and VPCs, volumes, images, the caller's role in
 * the workspace — is marked unknown (catalog.h), so validation leaves it to
 * the server and the wizard takes typed values, saying why.
 */
#include "api/acp_catalog.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/backend.h"
#include "api/catalog.h"
#include "api/http.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#define ACP_CATALOG_MAX_POOLS 64
#define ACP_CATALOG_MAX_SPECS 512

void acp_bindings_path(const struct backend_target *t, struct strbuf *p)
{
    strbuf_adds(p, "/compute/workspace/data/v1/subscriptions/");
    http_escape(p, t->subscription);
    strbuf_adds(p, "/resourceGroups/");
    http_escape(p, t->resource_group);
    strbuf_adds(p, "/zones/");
    http_escape(p, t->zone);
    strbuf_adds(p, "/workspaces/");
    http_escape(p, t->workspace);
    strbuf_adds(p, "/workspaceAEC2Bindings");
}

void acp_specs_path(const struct backend_target *t, const char *pool_zone, const char *pool,
                    const char *page_token, struct strbuf *p)
{
    strbuf_adds(p, "/compute/aec2/data/v1/subscriptions/");
    http_escape(p, t->subscription);
    strbuf_adds(p, "/resourceGroups/");
    http_escape(p, t->resource_group);
    strbuf_adds(p, "/zones/");
    http_escape(p, pool_zone);
    strbuf_adds(p, "/aec2s/");
    http_escape(p, pool);
    strbuf_adds(p, "/resourceSpecs?page_size=500");
    if (page_token && *page_token) {
        strbuf_adds(p, "&page_token=");
        http_escape(p, page_token);
    }
}

/* The zone segment of a binding id "/subscriptions/…/zones/{zone}/aec2s/{name}", or NULL. */
char *acp_binding_zone(const char *id)
{
    const char *z = id ? strstr(id, "/zones/") : NULL;
    if (z == NULL)
        return NULL;
    z += strlen("/zones/");
    size_t n = strcspn(z, "/");
    return n ? xstrndup(z, n) : NULL;
}

static char *dup_str(const json_t *v)
{
    const char *s = json_string_value(v);
    return s && *s ? xstrdup(s) : NULL;
}

/* An integer sent as a number or as its digits ("8"); *ok false when it is neither. */
static long long number_of(const json_t *v, bool *ok)
{
    *ok = true;
    if (json_is_integer(v))
        return (long long)json_integer_value(v);
    const char *s = json_string_value(v);
    if (s && *s) {
        char *end;
        errno = 0;
        long long n = strtoll(s, &end, 10);
        if (errno == 0 && end != s)
            return n; /* a unit after the digits is read by size_mib */
    }
    *ok = false;
    return 0;
}

/* A size as MiB: a number of bytes, or "1024Gi" / "80G" / "512Mi" (Kubernetes quantities). */
static long long size_mib(const json_t *v)
{
    if (json_is_integer(v))
        return (long long)(json_integer_value(v) / (1024 * 1024));
    const char *s = json_string_value(v);
    if (s == NULL)
        return 0;
    char *end;
    errno = 0;
    long long n = strtoll(s, &end, 10);
    if (errno || end == s || n < 0 || n > (1LL << 40))
        return 0;
    if (strcmp(end, "Gi") == 0 || strcmp(end, "G") == 0 || strcmp(end, "GB") == 0)
        return n * 1024;
    if (strcmp(end, "Ti") == 0 || strcmp(end, "T") == 0)
        return n * 1024 * 1024;
    if (strcmp(end, "Mi") == 0 || strcmp(end, "M") == 0 || strcmp(end, "MB") == 0)
        return n;
    return *end == '\0' ? n / (1024 * 1024) : 0;
}

int acp_catalog_add_bindings(const json_t *reply, struct catalog *cat, struct strbuf *err)
{
    json_t *list = json_object_get(reply, "aec2s");
    if (!json_is_array(list)) {
        strbuf_adds(err, "the bindings reply has no aec2s list");
        return -1;
    }
    size_t n = json_array_size(list);
    if (n > ACP_CATALOG_MAX_POOLS)
        n = ACP_CATALOG_MAX_POOLS;
    cat->pools = xreallocarray(cat->pools, cat->pool_count + n + 1, sizeof *cat->pools);
    for (size_t i = 0; i < n; i++) {
        const json_t *b = json_array_get(list, i);
        char *name = dup_str(json_object_get(b, "name"));
        if (name == NULL)
            continue;
        struct catalog_pool *p = &cat->pools[cat->pool_count++];
        memset(p, 0, sizeof *p);
        p->name = name;
        p->display_name = dup_str(json_object_get(b, "display_name"));
        const char *quota = json_string_value(json_object_get(b, "quota_type"));
        /* SPOT is idle capacity; the public cluster is named "public" (the CLI's word) */
        p->type = quota && strcmp(quota, "SPOT") == 0 ? POOL_IDLE
                  : strcmp(name, "public") == 0       ? POOL_PUBLIC
                                                      : POOL_DEDICATED;
        char *zone = acp_binding_zone(json_string_value(json_object_get(b, "id")));
        if (zone) {
            p->zones = xcalloc(1, sizeof *p->zones);
            p->zones[0] = zone;
            p->zone_count = 1;
        }
    }
    return 0;
}

int acp_catalog_add_specs(const json_t *reply, struct catalog_pool *pool, struct strbuf *err)
{
    json_t *list = json_object_get(reply, "resource_specs");
    if (!json_is_array(list)) {
        strbuf_adds(err, "the resource specs reply has no resource_specs list");
        return -1;
    }
    size_t n = json_array_size(list);
    if (pool->spec_count + n > ACP_CATALOG_MAX_SPECS)
        n = pool->spec_count < ACP_CATALOG_MAX_SPECS ? ACP_CATALOG_MAX_SPECS - pool->spec_count : 0;
    pool->specs = xreallocarray(pool->specs, pool->spec_count + n + 1, sizeof *pool->specs);
    for (size_t i = 0; i < n; i++) {
        const json_t *r = json_array_get(list, i);
        char *name = dup_str(json_object_get(r, "name"));
        if (name == NULL)
            continue;
        struct catalog_spec *s = &pool->specs[pool->spec_count++];
        memset(s, 0, sizeof *s);
        s->name = name;
        const json_t *dev = json_object_get(r, "device");
        bool ok;
        long long d = number_of(json_object_get(dev, "number"), &ok);
        s->devices = ok && d > 0 && d < 1024 ? (int)d : 0;
        s->device_type = dup_str(json_object_get(dev, "type"));
        long long mem = size_mib(json_object_get(dev, "memory"));
        s->device_memory_gib = mem > 0 && mem / 1024 < 1 << 20 ? (int)(mem / 1024) : 0;
        long long v =
            number_of(json_object_get(json_object_get(r, "cpu"), "vcpu_allocatable"), &ok);
        s->vcpus = ok && v > 0 && v < 1 << 20 ? (int)v : 0;
        s->memory_mib = size_mib(json_object_get(json_object_get(r, "memory"), "allocatable"));
        /* max_replicas 0: the pages give no capacity; the server checks the count */
    }
    return 0;
}

void acp_catalog_limits(struct catalog *cat)
{
    /* the API pages: at most 10 env vars, backoff_limit -1 … int32 max, at most 20 rules */
    cat->limits = (struct catalog_limits){.present = true,
                                          .has_max_env = true,
                                          .max_env = 10,
                                          .has_max_rules = true,
                                          .max_rules = 20,
                                          .has_min_backoff_limit = true,
                                          .min_backoff_limit = -1,
                                          .has_max_backoff_limit = true,
                                          .max_backoff_limit = INT32_MAX};
}
