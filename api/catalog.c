/*
 * catalog: ownership and look-ups over the backend's catalog; see catalog.h.
 */
#include "api/catalog.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void free_strings(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

void catalog_free(struct catalog *cat)
{
    free(cat->user);
    free(cat->resource_limits);
    free(cat->run_as);
    free(cat->image_runtime);
    free(cat->missing);
    for (size_t i = 0; i < cat->workspace_count; i++) {
        free(cat->workspaces[i].name);
        free(cat->workspaces[i].priorities_note);
        free_strings(cat->workspaces[i].pools, cat->workspaces[i].pool_count);
    }
    free(cat->workspaces);
    for (size_t i = 0; i < cat->pool_count; i++) {
        struct catalog_pool *p = &cat->pools[i];
        free(p->name);
        free(p->display_name);
        free_strings(p->zones, p->zone_count);
        free_strings(p->nodes, p->node_count);
        for (size_t j = 0; j < p->spec_count; j++) {
            free(p->specs[j].name);
            free(p->specs[j].device_type);
        }
        free(p->specs);
    }
    free(cat->pools);
    for (size_t i = 0; i < cat->zone_count; i++) {
        free(cat->zones[i].name);
        free(cat->zones[i].region);
    }
    free(cat->zones);
    for (size_t i = 0; i < cat->vpc_count; i++) {
        free(cat->vpcs[i].id);
        free(cat->vpcs[i].region);
    }
    free(cat->vpcs);
    for (size_t i = 0; i < cat->volume_count; i++) {
        free(cat->volumes[i].id);
        free(cat->volumes[i].display_name);
        free(cat->volumes[i].zone);
        free(cat->volumes[i].path);
    }
    free(cat->volumes);
    for (size_t i = 0; i < cat->image_count; i++) {
        free(cat->images[i].path);
        free(cat->images[i].source);
        free(cat->images[i].description);
    }
    free(cat->images);
    memset(cat, 0, sizeof *cat);
}

static bool eq(const char *a, const char *b)
{
    return a != NULL && b != NULL && strcmp(a, b) == 0;
}

const struct catalog_workspace *catalog_workspace(const struct catalog *cat, const char *name)
{
    for (size_t i = 0; i < cat->workspace_count; i++)
        if (eq(cat->workspaces[i].name, name))
            return &cat->workspaces[i];
    return NULL;
}

const struct catalog_pool *catalog_pool(const struct catalog *cat, const char *name)
{
    for (size_t i = 0; i < cat->pool_count; i++)
        if (eq(cat->pools[i].name, name))
            return &cat->pools[i];
    return NULL;
}

const struct catalog_spec *catalog_pool_spec(const struct catalog_pool *pool, const char *name)
{
    for (size_t i = 0; i < pool->spec_count; i++)
        if (eq(pool->specs[i].name, name))
            return &pool->specs[i];
    return NULL;
}

const struct catalog_zone *catalog_zone(const struct catalog *cat, const char *name)
{
    for (size_t i = 0; i < cat->zone_count; i++)
        if (eq(cat->zones[i].name, name))
            return &cat->zones[i];
    return NULL;
}

const struct catalog_vpc *catalog_vpc(const struct catalog *cat, const char *id)
{
    for (size_t i = 0; i < cat->vpc_count; i++)
        if (eq(cat->vpcs[i].id, id))
            return &cat->vpcs[i];
    return NULL;
}

const struct catalog_volume *catalog_volume(const struct catalog *cat, const char *id)
{
    for (size_t i = 0; i < cat->volume_count; i++)
        if (eq(cat->volumes[i].id, id))
            return &cat->volumes[i];
    return NULL;
}

const struct catalog_image *catalog_image(const struct catalog *cat, const char *path)
{
    for (size_t i = 0; path && i < cat->image_count; i++)
        if (eq(cat->images[i].path, path))
            return &cat->images[i];
    return NULL;
}

bool catalog_workspace_has_pool(const struct catalog_workspace *ws, const char *pool)
{
    for (size_t i = 0; i < ws->pool_count; i++)
        if (eq(ws->pools[i], pool))
            return true;
    return false;
}

bool catalog_pool_has_zone(const struct catalog_pool *pool, const char *zone)
{
    for (size_t i = 0; i < pool->zone_count; i++)
        if (eq(pool->zones[i], zone))
            return true;
    return false;
}

bool catalog_pool_needs_zone(const struct catalog *cat, const struct catalog_pool *pool)
{
    return pool && pool->type != POOL_DEDICATED && !(cat && cat->zoneless);
}

const char *pool_type_label(enum pool_type type)
{
    switch (type) {
    case POOL_DEDICATED:
        return "standard – dedicated";
    case POOL_PUBLIC:
        return "standard – public";
    case POOL_IDLE:
        return "idle";
    }
    return "?";
}

const char *member_role_name(enum member_role role)
{
    switch (role) {
    case MEMBER_NONE:
        return "not a member";
    case MEMBER:
        return "member";
    case MEMBER_OWNER:
        return "owner";
    case MEMBER_ADMIN:
        return "admin";
    }
    return "?";
}

bool member_role_raises_priority(enum member_role role)
{
    return role == MEMBER_OWNER || role == MEMBER_ADMIN;
}

bool catalog_priority_allowed(const struct catalog *cat, const char *ws, int priority)
{
    if (priority == 1) /* NORMAL: anyone who may change the job */
        return true;
    if (priority < 1 || priority > 3)
        return false;
    if (cat->unknown & CATALOG_UNKNOWN_WORKSPACES)
        return true; /* the backend cannot say: it decides when asked */
    const struct catalog_workspace *w = ws ? catalog_workspace(cat, ws) : NULL;
    return w && catalog_ws_priority_allowed(w, priority);
}

bool catalog_ws_priority_allowed(const struct catalog_workspace *ws, int priority)
{
    if (priority < 1 || priority > 3)
        return false;
    if (ws->priorities != 0)
        return (ws->priorities & (1u << priority)) != 0;
    return priority == 1 || member_role_raises_priority(ws->role);
}

void catalog_priority_refusal(const struct catalog_workspace *ws, char *buf, size_t size)
{
    if (ws->priorities != 0 && ws->priorities_note)
        snprintf(buf, size, "%s", ws->priorities_note);
    else
        snprintf(buf, size, "owners only; you are a %s of %s", member_role_name(ws->role),
                 ws->name ? ws->name : "this workspace");
}
