/*
 * catalog_json: the catalog (api/catalog.h) to and from a jansson tree — the
 * body of the catalog reply trainjobd sends and the acp driver reads.
 *
 * Field names are the struct's, snake_case; enums are upper case: pool types
 * DEDICATED / PUBLIC / IDLE, roles NONE / MEMBER / OWNER / ADMIN. Reading is
 * lenient (a server may add fields), writing gives every field that is set.
 */
#ifndef API_CATALOG_JSON_H
#define API_CATALOG_JSON_H

#include <jansson.h>

struct catalog;
struct enum_names;
struct findings;

/* Indexed by enum pool_type and enum member_role. */
extern const struct enum_names catalog_pool_type_names;
extern const struct enum_names catalog_role_names;

/* A new tree holding the whole catalog. */
json_t *catalog_to_json(const struct catalog *cat);
/*
 * Fills cat (overwritten) from root, skipping unknown fields. Problems become
 * findings with their field path. Returns 0, or -1 on errors; cat holds what
 * could be read either way and is released with catalog_free.
 */
int catalog_from_json(const json_t *root, struct catalog *cat, struct findings *fs);

#endif
