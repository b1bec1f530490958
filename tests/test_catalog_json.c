/*
 * test_catalog_json: the catalog to and from JSON (api/catalog_json.c) —
 * every field survives to_json → from_json, enums are written in upper case
 * (DEDICATED too, though it is value 0), unknown fields a server adds are
 * skipped, and wrong types are findings with their path.
 */
// clang-format off
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
// clang-format on

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "api/catalog.h"
#include "api/catalog_json.h"
#include "api/finding.h"
#include "api/jobspec.h"
#include "util/xalloc.h"

static char **strings2(const char *a, const char *b, size_t *n)
{
    char **v = xcalloc(2, sizeof *v);
    v[0] = xstrdup(a);
    v[1] = xstrdup(b);
    *n = 2;
    return v;
}

/* A catalog with every field set, two of everything where it matters. */
static void make_catalog(struct catalog *cat)
{
    memset(cat, 0, sizeof *cat);
    cat->user = xstrdup("alice");

    cat->workspace_count = 2;
    cat->workspaces = xcalloc(2, sizeof *cat->workspaces);
    cat->workspaces[0].name = xstrdup("default");
    cat->workspaces[0].role = MEMBER_OWNER;
    cat->workspaces[0].pools = strings2("p-dedicated", "p-idle", &cat->workspaces[0].pool_count);
    cat->workspaces[1].name = xstrdup("team");
    cat->workspaces[1].role = MEMBER;
    cat->workspaces[1].pools = strings2("p-public", "p-idle", &cat->workspaces[1].pool_count);

    static const char *const pool_names[] = {"p-dedicated", "p-public", "p-idle"};
    cat->pool_count = 3;
    cat->pools = xcalloc(3, sizeof *cat->pools);
    for (size_t i = 0; i < 3; i++) {
        struct catalog_pool *p = &cat->pools[i];
        p->name = xstrdup(pool_names[i]);
        p->display_name = xasprintf("%s (%s)", pool_names[i], pool_type_label((enum pool_type)i));
        p->type = (enum pool_type)i;
        if (i > 0)
            p->zones = strings2("cn-sh-01a", "cn-sh-01e", &p->zone_count);
        p->spec_count = 2;
        p->specs = xcalloc(2, sizeof *p->specs);
        p->specs[0].name = xstrdup("cpu-4");
        p->specs[0].vcpus = 4;
        p->specs[0].memory_mib = 8192;
        p->specs[0].max_replicas = 100;
        p->specs[1].name = xstrdup("h800-8");
        p->specs[1].devices = 8;
        p->specs[1].device_type = xstrdup("H800");
        p->specs[1].device_memory_gib = 80;
        p->specs[1].vcpus = 128;
        p->specs[1].memory_mib = 2048LL * 1024;
        p->specs[1].simulated = i == 2;
        p->specs[1].max_replicas = 16;
    }

    cat->zone_count = 2;
    cat->zones = xcalloc(2, sizeof *cat->zones);
    cat->zones[0].name = xstrdup("cn-sh-01a");
    cat->zones[0].region = xstrdup("cn-sh-01");
    cat->zones[1].name = xstrdup("cn-sh-01e");
    cat->zones[1].region = xstrdup("cn-sh-01");
    cat->vpc_count = 1;
    cat->vpcs = xcalloc(1, sizeof *cat->vpcs);
    cat->vpcs[0].id = xstrdup("vpc-1");
    cat->vpcs[0].region = xstrdup("cn-sh-01");
    cat->volume_count = 1;
    cat->volumes = xcalloc(1, sizeof *cat->volumes);
    cat->volumes[0].id = xstrdup("afs-1");
    cat->volumes[0].display_name = xstrdup("datasets “共享”");
    cat->volumes[0].zone = xstrdup("cn-sh-01e");
    cat->image_count = 2;
    cat->images = xcalloc(2, sizeof *cat->images);
    cat->images[0].path = xstrdup("registry.example.com/ngc/pytorch:25.06-py3");
    cat->images[0].source = xstrdup("official");
    cat->images[0].description = xstrdup("release 25.06, CUDA 12.9, Python 3.12");
    cat->images[1].path = xstrdup("local/host");
    cat->images[1].source = xstrdup("host");
}

static void every_field_survives_a_round_trip(void **state)
{
    struct catalog cat, back;
    make_catalog(&cat);
    json_t *j = catalog_to_json(&cat);
    struct findings fs = FINDINGS_INIT;
    assert_int_equal(catalog_from_json(j, &back, &fs), 0);
    assert_int_equal(fs.count, 0);
    json_t *j2 = catalog_to_json(&back);
    assert_true(json_equal(j, j2));

    /* And field by field, not only through the tables under test. */
    assert_string_equal(back.user, "alice");
    assert_int_equal(back.workspace_count, 2);
    assert_int_equal(back.workspaces[0].role, MEMBER_OWNER);
    assert_int_equal(back.workspaces[1].role, MEMBER);
    assert_true(catalog_workspace_has_pool(&back.workspaces[1], "p-public"));
    assert_int_equal(back.pool_count, 3);
    assert_int_equal(back.pools[0].type, POOL_DEDICATED);
    assert_int_equal(back.pools[1].type, POOL_PUBLIC);
    assert_int_equal(back.pools[2].type, POOL_IDLE);
    assert_true(catalog_pool_has_zone(&back.pools[2], "cn-sh-01e"));
    const struct catalog_spec *s = catalog_pool_spec(&back.pools[2], "h800-8");
    assert_non_null(s);
    assert_int_equal(s->devices, 8);
    assert_string_equal(s->device_type, "H800");
    assert_int_equal(s->device_memory_gib, 80);
    assert_int_equal(s->vcpus, 128);
    assert_int_equal(s->memory_mib, 2048LL * 1024);
    assert_true(s->simulated);
    assert_int_equal(s->max_replicas, 16);
    assert_null(catalog_pool_spec(&back.pools[2], "cpu-4")->device_type);
    assert_string_equal(catalog_zone(&back, "cn-sh-01e")->region, "cn-sh-01");
    assert_string_equal(catalog_vpc(&back, "vpc-1")->region, "cn-sh-01");
    assert_string_equal(catalog_volume(&back, "afs-1")->display_name, "datasets “共享”");
    assert_string_equal(back.images[0].description, "release 25.06, CUDA 12.9, Python 3.12");
    assert_null(back.images[1].description);

    json_decref(j);
    json_decref(j2);
    catalog_free(&back);
    catalog_free(&cat);
}

static void enums_are_written_in_upper_case(void **state)
{
    struct catalog cat;
    make_catalog(&cat);
    json_t *j = catalog_to_json(&cat);
    json_t *pools = json_object_get(j, "pools");
    /* DEDICATED is value 0 and still written, in its place after display_name. */
    json_t *p0 = json_array_get(pools, 0);
    assert_string_equal(json_string_value(json_object_get(p0, "type")), "DEDICATED");
    const char *keys[8];
    size_t n = 0;
    const char *key;
    json_t *value;
    json_object_foreach(p0, key, value)
    {
        if (n < 8)
            keys[n++] = key;
    }
    assert_int_equal(n, 4); /* name, display_name, type, specs (no zones) */
    assert_string_equal(keys[2], "type");
    assert_string_equal(json_string_value(json_object_get(json_array_get(pools, 1), "type")),
                        "PUBLIC");
    assert_string_equal(json_string_value(json_object_get(json_array_get(pools, 2), "type")),
                        "IDLE");
    json_t *ws = json_object_get(j, "workspaces");
    assert_string_equal(json_string_value(json_object_get(json_array_get(ws, 0), "role")), "OWNER");
    assert_string_equal(json_string_value(json_object_get(json_array_get(ws, 1), "role")),
                        "MEMBER");
    assert_string_equal(enum_name(&catalog_role_names, MEMBER_ADMIN), "ADMIN");
    assert_string_equal(enum_name(&catalog_pool_type_names, POOL_IDLE), "IDLE");
    json_decref(j);
    catalog_free(&cat);
}

static json_t *load(const char *text)
{
    json_error_t err;
    json_t *j = json_loads(text, 0, &err);
    if (j == NULL)
        fail_msg("bad test JSON: %s", err.text);
    return j;
}

static void unknown_fields_from_a_server_are_skipped(void **state)
{
    json_t *j = load("{\"user\": \"bob\", \"api_version\": 3,"
                     " \"workspaces\": [{\"name\": \"w\", \"role\": \"ADMIN\", \"quota\": {}}],"
                     " \"pools\": [{\"name\": \"p\", \"labels\": [\"x\"],"
                     "   \"specs\": [{\"name\": \"s\", \"devices\": 1, \"price\": 1.5}]}]}");
    struct catalog cat;
    struct findings fs = FINDINGS_INIT;
    assert_int_equal(catalog_from_json(j, &cat, &fs), 0);
    assert_int_equal(fs.count, 0);
    assert_string_equal(cat.user, "bob");
    assert_int_equal(cat.workspaces[0].role, MEMBER_ADMIN);
    assert_int_equal(cat.pools[0].type, POOL_DEDICATED); /* absent: dedicated */
    assert_int_equal(cat.pools[0].specs[0].devices, 1);
    assert_int_equal(cat.zone_count, 0);
    json_decref(j);
    catalog_free(&cat);
}

static void wrong_types_are_findings_with_paths(void **state)
{
    json_t *j = load("{\"workspaces\": [{\"name\": \"w\", \"role\": \"BOSS\"}],"
                     " \"pools\": [{\"name\": \"p\", \"type\": \"SPOT\","
                     "   \"specs\": [{\"name\": \"s\", \"devices\": \"eight\"}]}],"
                     " \"zones\": 3}");
    struct catalog cat;
    struct findings fs = FINDINGS_INIT;
    assert_int_equal(catalog_from_json(j, &cat, &fs), -1);
    assert_int_equal(fs.count, 4);
    assert_string_equal(fs.items[0].path, "workspaces[0].role");
    assert_non_null(strstr(fs.items[0].message, "BOSS"));
    assert_string_equal(fs.items[1].path, "pools[0].type");
    assert_string_equal(fs.items[2].path, "pools[0].specs[0].devices");
    assert_string_equal(fs.items[3].path, "zones");
    /* What could be read is there, and is freed like any catalog. */
    assert_string_equal(cat.pools[0].specs[0].name, "s");
    json_decref(j);
    catalog_free(&cat);
    findings_free(&fs);

    json_t *arr = json_array();
    assert_int_equal(catalog_from_json(arr, &cat, &fs), -1);
    assert_int_equal(fs.count, 1);
    assert_string_equal(fs.items[0].path, "");
    assert_non_null(strstr(fs.items[0].message, "got a list"));
    json_decref(arr);
    catalog_free(&cat);
    findings_free(&fs);

    assert_int_equal(catalog_from_json(NULL, &cat, &fs), -1);
    catalog_free(&cat);
    findings_free(&fs);
}

static void empty_catalog_is_an_empty_mapping(void **state)
{
    struct catalog cat;
    memset(&cat, 0, sizeof cat);
    json_t *j = catalog_to_json(&cat);
    assert_int_equal(json_object_size(j), 0);
    struct catalog back;
    struct findings fs = FINDINGS_INIT;
    assert_int_equal(catalog_from_json(j, &back, &fs), 0);
    assert_null(back.user);
    assert_int_equal(back.pool_count, 0);
    json_decref(j);
    catalog_free(&back);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_field_survives_a_round_trip),
        cmocka_unit_test(enums_are_written_in_upper_case),
        cmocka_unit_test(unknown_fields_from_a_server_are_skipped),
        cmocka_unit_test(wrong_types_are_findings_with_paths),
        cmocka_unit_test(empty_catalog_is_an_empty_mapping),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
