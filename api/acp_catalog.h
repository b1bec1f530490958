/*
 * acp_catalog: the catalog SenseCore's public pages define (workspace–pool
 * bindings, each pool's resource specs) and ACP's stated limits, as paths
 * and decoders for the acp driver (api/acp.c). Shapes are from third-party
 * clients and unverified against a live server; see acp_catalog.c.
 */
#ifndef API_ACP_CATALOG_H
#define API_ACP_CATALOG_H

#include <jansson.h>

struct backend_target;
struct catalog;
struct catalog_pool;
struct strbuf;

/* …/workspaces/{ws}/workspaceAEC2Bindings of the workspace service. */
void acp_bindings_path(const struct backend_target *t, struct strbuf *p);
/* …/zones/{pool_zone}/aec2s/{pool}/resourceSpecs?page_size=500[&page_token=] */
void acp_specs_path(const struct backend_target *t, const char *pool_zone, const char *pool,
                    const char *page_token, struct strbuf *p);
/* The zone in a binding's id (".../zones/cn-sh-01e/aec2s/x" → "cn-sh-01e"), or NULL. */
char *acp_binding_zone(const char *id);

/* The bindings reply's pools appended to cat->pools; -1 with why when it is not one. */
int acp_catalog_add_bindings(const json_t *reply, struct catalog *cat, struct strbuf *err);
/* One page of a pool's resource specs appended to it; -1 with why when it is not one. */
int acp_catalog_add_specs(const json_t *reply, struct catalog_pool *pool, struct strbuf *err);
/* ACP's API limits: at most 10 env vars, backoff_limit -1 … int32 max, at most 20 rules. */
void acp_catalog_limits(struct catalog *cat);

#endif
