/*
 * catalog_json: the catalog as api/schema tables, one object_type per
 * struct of api/catalog.h, fields in the header's order. Decoding and
 * encoding are schema's; what a decode allocates is what catalog_free (in
 * catalog.c) releases.
 */
#include "api/catalog_json.h"

#include <stddef.h>
#include <string.h>

#include "api/catalog.h"
#include "api/finding.h"
#include "api/jobspec.h"
#include "api/schema.h"

static const char *const pool_type_tab[] = {"DEDICATED", "PUBLIC", "IDLE"};
static const char *const role_tab[] = {"NONE", "MEMBER", "OWNER", "ADMIN"};
const struct enum_names catalog_pool_type_names = {pool_type_tab,
                                                   sizeof pool_type_tab / sizeof pool_type_tab[0]};
const struct enum_names catalog_role_names = {role_tab, sizeof role_tab / sizeof role_tab[0]};

// clang-format off
static const struct field spec_fields[] = {
    F_STR(struct catalog_spec, name),
    F_INT(struct catalog_spec, devices),
    F_STR(struct catalog_spec, device_type),
    F_INT(struct catalog_spec, device_memory_gib),
    F_INT(struct catalog_spec, vcpus),
    F_I64(struct catalog_spec, memory_mib),
    F_FLAG(struct catalog_spec, simulated),
    F_INT(struct catalog_spec, max_replicas),
};
// clang-format on
static const struct object_type spec_type = SCHEMA_ELEM(struct catalog_spec, spec_fields);

static const struct field pool_fields[] = {
    F_STR(struct catalog_pool, name),
    F_STR(struct catalog_pool, display_name),
    F_ENUMERATION_ALL(struct catalog_pool, type, catalog_pool_type_names),
    F_STRINGS(struct catalog_pool, zones, zone_count),
    F_STRINGS(struct catalog_pool, nodes, node_count),
    F_LIST(struct catalog_pool, specs, spec_count, spec_type),
};
static const struct object_type pool_type = SCHEMA_ELEM(struct catalog_pool, pool_fields);

static const struct field zone_fields[] = {
    F_STR(struct catalog_zone, name),
    F_STR(struct catalog_zone, region),
};
static const struct object_type zone_type = SCHEMA_ELEM(struct catalog_zone, zone_fields);

static const struct field vpc_fields[] = {
    F_STR(struct catalog_vpc, id),
    F_STR(struct catalog_vpc, region),
};
static const struct object_type vpc_type = SCHEMA_ELEM(struct catalog_vpc, vpc_fields);

static const struct field volume_fields[] = {
    F_STR(struct catalog_volume, id),
    F_STR(struct catalog_volume, display_name),
    F_STR(struct catalog_volume, zone),
    F_STR(struct catalog_volume, path),
};
static const struct object_type volume_type = SCHEMA_ELEM(struct catalog_volume, volume_fields);

static const struct field image_fields[] = {
    F_STR(struct catalog_image, path),
    F_STR(struct catalog_image, source),
    F_STR(struct catalog_image, description),
};
static const struct object_type image_type = SCHEMA_ELEM(struct catalog_image, image_fields);

static const struct field workspace_fields[] = {
    F_STR(struct catalog_workspace, name),
    F_ENUMERATION(struct catalog_workspace, role, catalog_role_names),
    F_STRINGS(struct catalog_workspace, pools, pool_count),
};
static const struct object_type workspace_type =
    SCHEMA_ELEM(struct catalog_workspace, workspace_fields);

static const struct field limits_fields[] = {
    F_OPT_INT32(struct catalog_limits, max_env),
    F_OPT_INT32(struct catalog_limits, max_rules),
    F_OPT_INT32(struct catalog_limits, min_backoff_limit),
    F_OPT_INT32(struct catalog_limits, max_backoff_limit),
};
static const struct object_type limits_type = SCHEMA_OBJ(limits_fields);

static const struct field catalog_fields[] = {
    F_STR(struct catalog, user),
    F_LIST(struct catalog, workspaces, workspace_count, workspace_type),
    F_LIST(struct catalog, pools, pool_count, pool_type),
    F_LIST(struct catalog, zones, zone_count, zone_type),
    F_LIST(struct catalog, vpcs, vpc_count, vpc_type),
    F_LIST(struct catalog, volumes, volume_count, volume_type),
    F_LIST(struct catalog, images, image_count, image_type),
    F_STR(struct catalog, resource_limits),
    F_STR(struct catalog, run_as),
    F_STR(struct catalog, image_runtime),
    F_SECTION(struct catalog, limits, limits_type),
    F_STR(struct catalog, missing),
};
static const struct object_type catalog_type = SCHEMA_OBJ(catalog_fields);

json_t *catalog_to_json(const struct catalog *cat)
{
    return schema_encode(&catalog_type, cat);
}

int catalog_from_json(const json_t *root, struct catalog *cat, struct findings *fs)
{
    memset(cat, 0, sizeof *cat);
    if (!json_is_object(root)) {
        findings_add(fs, SEVERITY_ERROR, "", "expected the catalog as a mapping, got %s",
                     root ? schema_type_name(root) : "nothing");
        return -1;
    }
    return schema_decode(root, &catalog_type, cat, SCHEMA_LENIENT, "", fs) ? -1 : 0;
}
