/*
 * test_config: trainjobd's catalogue (engine/config.c) — the defaults
 * ENGINE.md promises (with and without --demo, with and without GPUs), the
 * engine.yaml round trip parse(write(cfg)) == cfg, every semantic check with
 * its path and line:col, nvidia-smi output, roles, and the catalogue one
 * caller sees (workspaces, pools, specs and max_replicas), through to JSON.
 */
// clang-format off
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
// clang-format on

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/catalog.h"
#include "api/catalog_json.h"
#include "api/finding.h"
#include "engine/config.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

/* ---- helpers ------------------------------------------------------------ */

/* 8 CPUs, 16 GiB, and gpus GPUs of type "NVIDIA H800" with 79 GiB each. */
static struct machine_info fake_machine(int gpus)
{
    struct machine_info mi = {8, 16384, gpus, NULL, 0};
    if (gpus > 0) {
        mi.gpu_type = xstrdup("NVIDIA H800");
        mi.gpu_memory_gib = 79;
    }
    return mi;
}

static void make_default(struct engine_config *cfg, int gpus, bool demo)
{
    struct machine_info mi = fake_machine(gpus);
    config_default(cfg, &mi, "alice", "/state", demo);
    machine_info_free(&mi);
}

/* The names of count elements of size bytes (char * at offset), joined by commas. */
static char *join_names(const void *items, size_t count, size_t size, size_t offset)
{
    struct strbuf sb = STRBUF_INIT;
    for (size_t i = 0; i < count; i++) {
        const char *s = *(char *const *)((const char *)items + i * size + offset);
        strbuf_addf(&sb, "%s%s", i ? "," : "", s ? s : "(null)");
    }
    return strbuf_detach(&sb, NULL);
}

#define NAMES(arr, cnt, member)                                                                    \
    join_names((arr), (cnt), sizeof *(arr), offsetof(__typeof__(*(arr)), member))

static void assert_names(char *joined, const char *want)
{
    if (strcmp(joined, want) != 0) {
        char msg[512];
        snprintf(msg, sizeof msg, "names: got '%s', want '%s'", joined, want);
        free(joined);
        fail_msg("%s", msg);
    }
    free(joined);
}

static void assert_strings(char *const *v, size_t n, const char *want)
{
    assert_names(join_names(v, n, sizeof *v, 0), want);
}

static void push(char ***v, size_t *n, const char *s)
{
    *v = xreallocarray(*v, *n + 1, sizeof **v);
    (*v)[(*n)++] = xstrdup(s);
}

static int parse(const char *text, struct engine_config *cfg, struct findings *fs)
{
    return config_parse("engine.yaml", text, strlen(text), cfg, fs);
}

static void dump(const struct findings *fs)
{
    for (size_t i = 0; i < fs->count; i++)
        print_message("  %s %s %d:%d %s\n", severity_name(fs->items[i].severity), fs->items[i].path,
                      fs->items[i].line, fs->items[i].col, fs->items[i].message);
}

/* The finding at path must exist with this severity, position and message part. */
static void expect_finding(const struct findings *fs, enum severity sev, const char *path, int line,
                           int col, const char *want)
{
    for (size_t i = 0; i < fs->count; i++) {
        const struct finding *f = &fs->items[i];
        if (strcmp(f->path, path) != 0)
            continue;
        if (f->severity != sev || strstr(f->message, want) == NULL ||
            (line && (f->line != line || f->col != col))) {
            dump(fs);
            fail_msg("%s: got %s %d:%d '%s', want %s %d:%d '%s'", path, severity_name(f->severity),
                     f->line, f->col, f->message, severity_name(sev), line, col, want);
        }
        return;
    }
    dump(fs);
    fail_msg("no finding at %s (want '%s')", path, want);
}

/* text must fail to parse with exactly one error, at path, line:col, saying want. */
static void expect_one_error(const char *text, const char *path, int line, int col,
                             const char *want)
{
    struct engine_config cfg;
    struct findings fs = FINDINGS_INIT;
    assert_int_equal(parse(text, &cfg, &fs), -1);
    if (fs.count != 1) {
        dump(&fs);
        fail_msg("want exactly one finding, got %zu", fs.count);
    }
    expect_finding(&fs, SEVERITY_ERROR, path, line, col, want);
    assert_null(cfg.nodes); /* a failed parse leaves cfg empty */
    findings_free(&fs);
    config_free(&cfg);
}

static void assert_same_str(const char *a, const char *b)
{
    if (a == NULL || b == NULL)
        assert_ptr_equal(a, b);
    else
        assert_string_equal(a, b);
}

static void assert_same_strings(char *const *a, size_t na, char *const *b, size_t nb)
{
    assert_int_equal(na, nb);
    for (size_t i = 0; i < na; i++)
        assert_same_str(a[i], b[i]);
}

/* Every field of a and b, one by one (not through the schema tables under test). */
static void assert_config_equal(const struct engine_config *a, const struct engine_config *b)
{
    assert_same_str(a->subscription, b->subscription);
    assert_same_str(a->resource_group, b->resource_group);
    assert_same_str(a->zone, b->zone);
    assert_same_strings(a->admins, a->admin_count, b->admins, b->admin_count);
    assert_int_equal(a->region_count, b->region_count);
    for (size_t i = 0; i < a->region_count; i++) {
        const struct config_region *x = &a->regions[i], *y = &b->regions[i];
        assert_same_str(x->name, y->name);
        assert_same_strings(x->zones, x->zone_count, y->zones, y->zone_count);
        assert_same_strings(x->vpcs, x->vpc_count, y->vpcs, y->vpc_count);
    }
    assert_int_equal(a->workspace_count, b->workspace_count);
    for (size_t i = 0; i < a->workspace_count; i++) {
        const struct config_workspace *x = &a->workspaces[i], *y = &b->workspaces[i];
        assert_same_str(x->name, y->name);
        assert_same_strings(x->owners, x->owner_count, y->owners, y->owner_count);
        assert_same_strings(x->members, x->member_count, y->members, y->member_count);
        assert_same_strings(x->pools, x->pool_count, y->pools, y->pool_count);
    }
    assert_int_equal(a->node_count, b->node_count);
    for (size_t i = 0; i < a->node_count; i++) {
        const struct config_node *x = &a->nodes[i], *y = &b->nodes[i];
        assert_same_str(x->name, y->name);
        assert_int_equal(x->gpus, y->gpus);
        assert_same_str(x->gpu_type, y->gpu_type);
        assert_int_equal(x->gpu_memory_gib, y->gpu_memory_gib);
        assert_int_equal(x->cpus, y->cpus);
        assert_int_equal(x->memory_mib, y->memory_mib);
        assert_int_equal(x->simulated, y->simulated);
        assert_int_equal(x->unschedulable, y->unschedulable);
    }
    assert_int_equal(a->pool_count, b->pool_count);
    for (size_t i = 0; i < a->pool_count; i++) {
        const struct config_pool *x = &a->pools[i], *y = &b->pools[i];
        assert_same_str(x->name, y->name);
        assert_same_str(x->display_name, y->display_name);
        assert_int_equal(x->type, y->type);
        assert_same_strings(x->zones, x->zone_count, y->zones, y->zone_count);
        assert_same_strings(x->nodes, x->node_count, y->nodes, y->node_count);
        assert_same_strings(x->specs, x->spec_count, y->specs, y->spec_count);
    }
    assert_int_equal(a->spec_count, b->spec_count);
    for (size_t i = 0; i < a->spec_count; i++) {
        const struct config_spec *x = &a->specs[i], *y = &b->specs[i];
        assert_same_str(x->name, y->name);
        assert_int_equal(x->gpus, y->gpus);
        assert_int_equal(x->cpus, y->cpus);
        assert_int_equal(x->memory_mib, y->memory_mib);
    }
    assert_int_equal(a->image_count, b->image_count);
    for (size_t i = 0; i < a->image_count; i++) {
        assert_same_str(a->images[i].path, b->images[i].path);
        assert_same_str(a->images[i].source, b->images[i].source);
        assert_same_str(a->images[i].description, b->images[i].description);
    }
    assert_int_equal(a->volume_count, b->volume_count);
    for (size_t i = 0; i < a->volume_count; i++) {
        assert_same_str(a->volumes[i].id, b->volumes[i].id);
        assert_same_str(a->volumes[i].display_name, b->volumes[i].display_name);
        assert_same_str(a->volumes[i].zone, b->volumes[i].zone);
        assert_same_str(a->volumes[i].path, b->volumes[i].path);
    }
    assert_int_equal(a->key_count, b->key_count);
    for (size_t i = 0; i < a->key_count; i++) {
        assert_same_str(a->keys[i].access_key, b->keys[i].access_key);
        assert_same_str(a->keys[i].secret_key, b->keys[i].secret_key);
        assert_same_str(a->keys[i].user, b->keys[i].user);
    }
}

/* write → parse must give cfg back, with no finding at all, and write the same text again. */
static void assert_round_trip(const struct engine_config *cfg)
{
    struct strbuf text = STRBUF_INIT, again = STRBUF_INIT;
    config_write(cfg, &text);
    struct engine_config back;
    struct findings fs = FINDINGS_INIT;
    int rc = parse(strbuf_str(&text), &back, &fs);
    if (rc != 0 || fs.count != 0) {
        dump(&fs);
        fail_msg("the written file does not read back cleanly:\n%s", strbuf_str(&text));
    }
    assert_config_equal(cfg, &back);
    config_write(&back, &again);
    assert_string_equal(strbuf_str(&text), strbuf_str(&again));
    config_free(&back);
    strbuf_free(&text);
    strbuf_free(&again);
}

/* ---- the defaults ENGINE.md promises ------------------------------------ */

static void default_catalogue_is_what_engine_md_promises(void **state)
{
    struct engine_config cfg;
    make_default(&cfg, 0, false);
    assert_string_equal(cfg.subscription, "local");
    assert_string_equal(cfg.resource_group, "default");
    assert_string_equal(cfg.zone, "local-1z");
    assert_int_equal(cfg.admin_count, 0);
    assert_names(NAMES(cfg.regions, cfg.region_count, name), "local-1");
    assert_strings(cfg.regions[0].zones, cfg.regions[0].zone_count, "local-1z");
    assert_strings(cfg.regions[0].vpcs, cfg.regions[0].vpc_count, "vpc-local");

    assert_names(NAMES(cfg.workspaces, cfg.workspace_count, name), "default");
    assert_strings(cfg.workspaces[0].owners, cfg.workspaces[0].owner_count, "alice");
    assert_int_equal(cfg.workspaces[0].member_count, 0);
    assert_int_equal(cfg.workspaces[0].pool_count, 0); /* every pool */

    assert_names(NAMES(cfg.pools, cfg.pool_count, name), "local,local-idle");
    assert_int_equal(cfg.pools[0].type, POOL_DEDICATED);
    assert_string_equal(cfg.pools[0].display_name, "local (standard – dedicated)");
    assert_int_equal(cfg.pools[0].zone_count, 0);
    assert_int_equal(cfg.pools[1].type, POOL_IDLE);
    assert_strings(cfg.pools[1].zones, cfg.pools[1].zone_count, "local-1z");
    for (size_t i = 0; i < cfg.pool_count; i++) {
        assert_int_equal(cfg.pools[i].node_count, 0); /* every node */
        assert_int_equal(cfg.pools[i].spec_count, 0); /* every spec */
    }

    assert_names(NAMES(cfg.nodes, cfg.node_count, name), "local");
    assert_int_equal(cfg.nodes[0].cpus, 8);
    assert_int_equal(cfg.nodes[0].memory_mib, 16384);
    assert_int_equal(cfg.nodes[0].gpus, 0);
    assert_null(cfg.nodes[0].gpu_type);
    assert_false(cfg.nodes[0].simulated);
    assert_false(cfg.nodes[0].unschedulable);

    assert_names(NAMES(cfg.specs, cfg.spec_count, name), "cpu-1");
    assert_int_equal(cfg.specs[0].cpus, 1);
    assert_int_equal(cfg.specs[0].memory_mib, 1024);
    assert_int_equal(cfg.specs[0].gpus, 0);

    assert_names(NAMES(cfg.images, cfg.image_count, path), "local/host");
    assert_string_equal(cfg.images[0].source, "host");
    assert_string_equal(cfg.images[0].description, "run on this machine, no container");

    assert_names(NAMES(cfg.volumes, cfg.volume_count, id), "scratch");
    assert_string_equal(cfg.volumes[0].zone, "local-1z");
    assert_string_equal(cfg.volumes[0].path, "/state/volumes/scratch");
    assert_int_equal(cfg.key_count, 0);
    config_free(&cfg);
}

static void default_with_gpus_adds_gpu_1(void **state)
{
    struct engine_config cfg;
    make_default(&cfg, 2, false);
    assert_names(NAMES(cfg.specs, cfg.spec_count, name), "cpu-1,gpu-1");
    const struct config_spec *g = config_spec(&cfg, "gpu-1");
    assert_int_equal(g->gpus, 1);
    assert_int_equal(g->cpus, 4);          /* 8 CPUs / 2 GPUs */
    assert_int_equal(g->memory_mib, 8192); /* 16 GiB / 2 GPUs */
    const struct config_node *n = config_node(&cfg, "local");
    assert_int_equal(n->gpus, 2);
    assert_string_equal(n->gpu_type, "NVIDIA H800");
    assert_int_equal(n->gpu_memory_gib, 79);
    assert_false(n->simulated);
    config_free(&cfg);

    /* More GPUs than CPUs still gives each worker a CPU. */
    struct machine_info mi = {2, 4096, 8, xstrdup("A100"), 80};
    config_default(&cfg, &mi, "alice", "/state/", false);
    assert_int_equal(config_spec(&cfg, "gpu-1")->cpus, 1);
    assert_int_equal(config_spec(&cfg, "gpu-1")->memory_mib, 512);
    assert_string_equal(cfg.volumes[0].path, "/state/volumes/scratch");
    machine_info_free(&mi);
    config_free(&cfg);
}

static void demo_adds_simulated_nodes_pool_and_specs(void **state)
{
    struct engine_config cfg;
    make_default(&cfg, 0, true);
    assert_names(NAMES(cfg.pools, cfg.pool_count, name), "local,local-idle,sim-public");
    const struct config_pool *pub = config_pool(&cfg, "sim-public");
    assert_int_equal(pub->type, POOL_PUBLIC);
    assert_strings(pub->zones, pub->zone_count, "local-1z");
    assert_names(NAMES(cfg.nodes, cfg.node_count, name), "local,sim-n1,sim-n2,sim-n3,sim-n4");
    for (size_t i = 1; i < cfg.node_count; i++) {
        assert_int_equal(cfg.nodes[i].gpus, 8);
        assert_string_equal(cfg.nodes[i].gpu_type, "simulated");
        assert_int_equal(cfg.nodes[i].cpus, 16);
        assert_int_equal(cfg.nodes[i].memory_mib, 65536);
        assert_true(cfg.nodes[i].simulated);
    }
    /* In the demo every pool spans every node. */
    for (size_t p = 0; p < cfg.pool_count; p++)
        for (size_t n = 0; n < cfg.node_count; n++)
            assert_true(config_pool_has_node(&cfg.pools[p], cfg.nodes[n].name));
    assert_names(NAMES(cfg.specs, cfg.spec_count, name), "cpu-1,sim-gpu-1,sim-gpu-8");
    const struct config_spec *s1 = config_spec(&cfg, "sim-gpu-1");
    const struct config_spec *s8 = config_spec(&cfg, "sim-gpu-8");
    assert_int_equal(s1->gpus, 1);
    assert_int_equal(s1->cpus, 2);
    assert_int_equal(s1->memory_mib, 4096);
    assert_int_equal(s8->gpus, 8);
    assert_int_equal(s8->cpus, 16);
    assert_int_equal(s8->memory_mib, 32768);
    config_free(&cfg);

    make_default(&cfg, 2, true);
    assert_names(NAMES(cfg.specs, cfg.spec_count, name), "cpu-1,gpu-1,sim-gpu-1,sim-gpu-8");
    config_free(&cfg);
}

static void lookups_find_by_name(void **state)
{
    struct engine_config cfg;
    make_default(&cfg, 0, true);
    assert_non_null(config_node(&cfg, "sim-n3"));
    assert_null(config_node(&cfg, "sim-n5"));
    assert_null(config_node(&cfg, NULL));
    assert_non_null(config_pool(&cfg, "local-idle"));
    assert_non_null(config_volume(&cfg, "scratch"));
    assert_null(config_spec(&cfg, "gpu-1"));
    assert_null(config_key(&cfg, "AK1"));
    cfg.keys = xcalloc(1, sizeof *cfg.keys);
    cfg.key_count = 1;
    cfg.keys[0].access_key = xstrdup("AK1");
    cfg.keys[0].secret_key = xstrdup("SK1");
    cfg.keys[0].user = xstrdup("bob");
    assert_string_equal(config_key(&cfg, "AK1")->user, "bob");

    struct config_pool *p = &cfg.pools[0];
    push(&p->nodes, &p->node_count, "sim-n1");
    assert_true(config_pool_has_node(p, "sim-n1"));
    assert_false(config_pool_has_node(p, "sim-n2"));
    config_free(&cfg);
}

/* ---- engine.yaml: write and read back ----------------------------------- */

static void written_defaults_read_back_equal(void **state)
{
    for (int gpus = 0; gpus <= 2; gpus += 2) {
        for (int demo = 0; demo <= 1; demo++) {
            struct engine_config cfg;
            make_default(&cfg, gpus, demo);
            assert_round_trip(&cfg);
            config_free(&cfg);
        }
    }
}

static void written_file_explains_itself(void **state)
{
    struct engine_config cfg;
    make_default(&cfg, 0, true);
    struct strbuf text = STRBUF_INIT;
    config_write(&cfg, &text);
    const char *s = strbuf_str(&text);
    assert_true(strncmp(s, "# engine.yaml", 13) == 0);
    assert_non_null(strstr(s, "views over the same nodes"));
    assert_non_null(strstr(s, "`simulated: true` is not real"));
    /* Every pool's type is written, dedicated too, after its display name. */
    assert_non_null(strstr(s, "- name: local\n  display_name: local (standard – dedicated)\n"
                              "  type: dedicated\n"));
    assert_non_null(strstr(s, "type: idle\n"));
    assert_non_null(strstr(s, "type: public\n"));
    assert_non_null(strstr(s, "- name: sim-n1\n  gpus: 8\n  gpu_type: simulated\n"));
    strbuf_free(&text);
    config_free(&cfg);
}

static void every_field_reads_back_equal(void **state)
{
    struct engine_config cfg;
    make_default(&cfg, 2, true);
    push(&cfg.admins, &cfg.admin_count, "root");
    struct config_workspace *w = &cfg.workspaces[0];
    push(&w->members, &w->member_count, "bob");
    push(&w->members, &w->member_count, "carol");
    push(&w->pools, &w->pool_count, "local");
    push(&w->pools, &w->pool_count, "sim-public");
    struct config_pool *p = &cfg.pools[2];
    push(&p->nodes, &p->node_count, "sim-n1");
    push(&p->nodes, &p->node_count, "sim-n2");
    push(&p->specs, &p->spec_count, "sim-gpu-8");
    push(&cfg.regions[0].zones, &cfg.regions[0].zone_count, "local-2z");
    cfg.nodes[3].unschedulable = true;
    cfg.keys = xcalloc(1, sizeof *cfg.keys);
    cfg.key_count = 1;
    cfg.keys[0].access_key = xstrdup("AK1");
    cfg.keys[0].secret_key = xstrdup("00123"); /* would read back as a number unquoted */
    cfg.keys[0].user = xstrdup("bob");
    free(cfg.images[0].description);
    cfg.images[0].description = xstrdup("line one\nline two: yes");
    assert_round_trip(&cfg);
    config_free(&cfg);
}

/* ---- engine.yaml: findings with paths and positions --------------------- */

/* Lines 1-7 of every document below. */
#define HEAD                                                                                       \
    "subscription: s\n"                                                                            \
    "resource_group: g\n"                                                                          \
    "zone: z1\n"                                                                                   \
    "regions:\n"                                                                                   \
    "  - name: r1\n"                                                                               \
    "    zones: [z1]\n"                                                                            \
    "    vpcs: [v1]\n"

static void minimal_file_parses(void **state)
{
    struct engine_config cfg;
    struct findings fs = FINDINGS_INIT;
    assert_int_equal(parse(HEAD "workspaces:\n  - name: w\n    owners: [alice]\n"
                                "pools:\n  - name: p\n",
                           &cfg, &fs),
                     0);
    assert_int_equal(fs.count, 0);
    assert_int_equal(cfg.pools[0].type, POOL_DEDICATED); /* type may be left out */
    assert_int_equal(config_role(&cfg, "w", "alice"), MEMBER_OWNER);
    config_free(&cfg);
    findings_free(&fs);
}

static void unknown_field_suggests_the_nearest(void **state)
{
    expect_one_error(HEAD "nodes:\n  - name: n1\n    cpu: 4\n", "nodes[0].cpu", 10, 5,
                     "unknown field; did you mean cpus?");
    expect_one_error(HEAD "pool:\n  - name: p\n", "pool", 8, 1, "did you mean pools?");
}

static void bad_pool_type_lists_every_type(void **state)
{
    expect_one_error(HEAD "pools:\n  - name: p1\n    type: dedicatd\n", "pools[0].type", 10, 11,
                     "unknown value 'dedicatd'; did you mean dedicated? (one of dedicated, "
                     "public, idle)");
    expect_one_error(HEAD "pools:\n  - name: p1\n    type: shared\n", "pools[0].type", 10, 11,
                     "unknown value 'shared'; expected one of dedicated, public, idle");
    expect_one_error(HEAD "pools:\n  - name: p1\n    type: 3\n", "pools[0].type", 10, 11,
                     "expected one of the names, got an integer");
}

static void pool_naming_an_unknown_node(void **state)
{
    expect_one_error(HEAD "nodes:\n  - name: n1\n  - name: gpu-a\n"
                          "pools:\n  - name: p1\n    nodes: [n1, gpu-b]\n",
                     "pools[0].nodes[1]", 13, 17, "unknown node 'gpu-b'; did you mean gpu-a?");
    expect_one_error(HEAD "nodes:\n  - name: n1\npools:\n  - name: p1\n    nodes: [zzzzzz]\n",
                     "pools[0].nodes[0]", 12, 13, "unknown node 'zzzzzz' (known: n1)");
    expect_one_error(HEAD "specs:\n  - name: s1\npools:\n  - name: p1\n    specs:\n      - s2\n",
                     "pools[0].specs[0]", 13, 9, "unknown spec 's2'");
}

static void duplicate_names(void **state)
{
    expect_one_error(HEAD "nodes:\n  - name: n1\n  - name: n1\n", "nodes[1].name", 10, 11,
                     "duplicate node name 'n1' (also nodes[0])");
    expect_one_error(HEAD "pools:\n  - name: p\n  - name: q\n  - name: p\n", "pools[2].name", 11,
                     11, "duplicate pool name 'p' (also pools[0])");
    expect_one_error(HEAD "specs: [{name: s}, {name: s}]\n", "specs[1].name", 8, 27,
                     "duplicate spec name 's'");
    expect_one_error(HEAD "workspaces:\n  - {name: w, owners: [a]}\n  - {name: w, owners: [a]}\n",
                     "workspaces[1].name", 10, 12, "duplicate workspace name 'w'");
    expect_one_error(HEAD "volumes:\n  - {id: v, path: /a}\n  - {id: v, path: /b}\n",
                     "volumes[1].id", 10, 10, "duplicate volume id 'v'");
}

static void zones_of_public_and_idle_pools(void **state)
{
    /* Absent zones: placed at the pool, the nearest thing in the file. */
    expect_one_error(HEAD "pools:\n  - name: p\n    type: public\n", "pools[0].zones", 9, 5,
                     "required: a public pool offers at least one zone");
    expect_one_error(HEAD "pools:\n  - name: p\n    type: idle\n    zones: []\n", "pools[0].zones",
                     11, 12, "required: an idle pool offers at least one zone");
    expect_one_error(HEAD "pools:\n  - name: p\n    type: idle\n    zones: [z1, z9]\n",
                     "pools[0].zones[1]", 11, 17, "no region has zone 'z9'");
}

static void numbers_must_not_be_negative(void **state)
{
    expect_one_error(HEAD "nodes:\n  - name: n\n    cpus: -4\n", "nodes[0].cpus", 10, 11,
                     "must not be negative (found -4)");
    expect_one_error(HEAD "specs:\n  - name: s\n    memory_mib: -1\n", "specs[0].memory_mib", 10,
                     17, "must not be negative");
    expect_one_error(HEAD "nodes:\n  - name: n\n    cpus: many\n", "nodes[0].cpus", 10, 11,
                     "expected an integer, got a string");
}

static void workspace_references_and_owners(void **state)
{
    expect_one_error(HEAD "pools: [{name: p}]\nworkspaces:\n  - name: w\n    owners: [a]\n"
                          "    pools: [p, q]\n",
                     "workspaces[0].pools[1]", 12, 16, "unknown pool 'q'");

    /* No owners is only a warning. */
    struct engine_config cfg;
    struct findings fs = FINDINGS_INIT;
    assert_int_equal(parse(HEAD "workspaces:\n  - name: w\n    members: [bob]\n", &cfg, &fs), 0);
    assert_int_equal(fs.count, 1);
    expect_finding(&fs, SEVERITY_WARNING, "workspaces[0].owners", 9, 5, "no owners");
    assert_int_equal(config_role(&cfg, "w", "bob"), MEMBER);
    findings_free(&fs);
    config_free(&cfg);
}

static void volume_path_must_be_absolute(void **state)
{
    expect_one_error(HEAD "volumes:\n  - id: v\n    path: data/v\n", "volumes[0].path", 10, 11,
                     "must be an absolute path (found 'data/v')");
    expect_one_error(HEAD "volumes:\n  - id: v\n", "volumes[0].path", 9, 5, "required");
}

/* Jobs never run as root: job_user and keys[].unix_user name a real user, not uid 0. */
static void run_as_users_must_exist_and_not_be_root(void **state)
{
    (void)state;
    expect_one_error(HEAD "job_user: root\n", "job_user", 8, 11,
                     "'root' has uid 0: jobs never run as root");
    expect_one_error(HEAD "job_user: no-such-user-zq\n", "job_user", 8, 11,
                     "no Unix user 'no-such-user-zq' on this machine");
    expect_one_error(HEAD "keys:\n  - access_key: a\n    secret_key: s\n    user: u\n"
                          "    unix_user: root\n",
                     "keys[0].unix_user", 12, 16, "has uid 0");
    struct engine_config cfg;
    struct findings fs = FINDINGS_INIT;
    assert_int_equal(parse(HEAD "job_user: nobody\nkeys:\n  - access_key: a\n    secret_key: s\n"
                                "    user: u\n    unix_user: nobody\n",
                           &cfg, &fs),
                     0);
    assert_string_equal(cfg.job_user, "nobody");
    assert_string_equal(cfg.keys[0].unix_user, "nobody");
    findings_free(&fs);
    config_free(&cfg);
}

static void required_names_and_settings(void **state)
{
    struct engine_config cfg;
    struct findings fs = FINDINGS_INIT;
    assert_int_equal(parse("nodes:\n  - cpus: 1\nkeys:\n  - access_key: AK\n", &cfg, &fs), -1);
    expect_finding(&fs, SEVERITY_ERROR, "subscription", 1, 1, "required");
    expect_finding(&fs, SEVERITY_ERROR, "resource_group", 1, 1, "required");
    expect_finding(&fs, SEVERITY_ERROR, "zone", 1, 1, "required");
    expect_finding(&fs, SEVERITY_ERROR, "nodes[0].name", 2, 5, "required: every node needs a name");
    expect_finding(&fs, SEVERITY_ERROR, "keys[0].secret_key", 4, 5, "required");
    expect_finding(&fs, SEVERITY_ERROR, "keys[0].user", 4, 5, "required");
    assert_int_equal(fs.count, 6);
    findings_free(&fs);
    config_free(&cfg);
}

static void broken_documents(void **state)
{
    struct engine_config cfg;
    struct findings fs = FINDINGS_INIT;
    assert_int_equal(parse("nodes: [\n", &cfg, &fs), -1);
    assert_int_equal(fs.count, 1);
    assert_true(fs.items[0].line >= 1);
    assert_string_equal(fs.items[0].path, "");
    findings_free(&fs);
    config_free(&cfg);

    expect_one_error("- a\n- b\n", "", 0, 0, "expected a mapping of engine settings");
    expect_one_error("", "", 0, 0, "got null");
}

static void every_error_is_reported_at_once(void **state)
{
    struct engine_config cfg;
    struct findings fs = FINDINGS_INIT;
    assert_int_equal(parse(HEAD "nodes:\n  - name: n1\n    gpu: 1\n  - name: n1\n"
                                "pools:\n  - name: p\n    type: publik\n    nodes: [n2]\n",
                           &cfg, &fs),
                     -1);
    expect_finding(&fs, SEVERITY_ERROR, "nodes[0].gpu", 10, 5, "did you mean gpus?");
    expect_finding(&fs, SEVERITY_ERROR, "nodes[1].name", 11, 11, "duplicate");
    expect_finding(&fs, SEVERITY_ERROR, "pools[0].type", 14, 11, "did you mean public?");
    expect_finding(&fs, SEVERITY_ERROR, "pools[0].nodes[0]", 15, 13, "unknown node 'n2'");
    assert_int_equal(fs.count, 4);
    findings_free(&fs);
    config_free(&cfg);
}

/* ---- probing the machine ------------------------------------------------ */

static void nvidia_smi_output_is_read(void **state)
{
    struct machine_info mi = {8, 16384, 0, NULL, 0};
    assert_int_equal(config_parse_nvidia_smi("NVIDIA H800, 81559\nNVIDIA H800, 81559\n", &mi), 2);
    assert_int_equal(mi.gpus, 2);
    assert_string_equal(mi.gpu_type, "NVIDIA H800");
    assert_int_equal(mi.gpu_memory_gib, 79);
    assert_int_equal(mi.cpus, 8); /* untouched */

    /* CRLF, blank lines, no final newline; the smallest memory counts. */
    assert_int_equal(config_parse_nvidia_smi("\nA100-SXM4-80GB , 81920\r\nA100, 40960", &mi), 2);
    assert_string_equal(mi.gpu_type, "A100-SXM4-80GB");
    assert_int_equal(mi.gpu_memory_gib, 40);
    machine_info_free(&mi);
}

static void nvidia_smi_garbage_means_no_gpus(void **state)
{
    static const char *const garbage[] = {
        "",
        "\n\n",
        "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n",
        "NVIDIA H800, [N/A]\n",
        "NVIDIA H800\n",
        ", 81559\n",
        "NVIDIA H800, 81559, 535.104\n",
        "NVIDIA H800, 0\n",
        "NVIDIA H800, -5\n",
        "NVIDIA H800, 99999999999999999999\n",
        "NVIDIA H800, 81559\ngarbage\n",
        "NVIDIA\x1b[31m H800, 81559\n",
        "NVIDIA H800 \xe2\x80\x93 SXM, 81559\n",
    };
    for (size_t i = 0; i < sizeof garbage / sizeof garbage[0]; i++) {
        struct machine_info mi = {8, 16384, 3, xstrdup("stale"), 7};
        assert_int_equal(config_parse_nvidia_smi(garbage[i], &mi), 0);
        assert_int_equal(mi.gpus, 0);
        assert_null(mi.gpu_type);
        assert_int_equal(mi.gpu_memory_gib, 0);
        machine_info_free(&mi);
    }
}

static void probing_this_machine(void **state)
{
    struct machine_info mi;
    config_probe_machine(&mi);
    assert_true(mi.cpus >= 1);
    assert_true(mi.memory_mib > 0);
    assert_true(mi.gpus >= 0);
    if (mi.gpus == 0)
        assert_null(mi.gpu_type);
    machine_info_free(&mi);

    /* Without nvidia-smi on PATH: no GPUs, and no crash. */
    char *path = xstrdup(getenv("PATH") ? getenv("PATH") : "");
    setenv("PATH", "/nonexistent", 1);
    config_probe_machine(&mi);
    assert_int_equal(mi.gpus, 0);
    machine_info_free(&mi);
    setenv("PATH", path, 1);
    free(path);
}

/* Puts a fake nvidia-smi running script on PATH, probes, and restores PATH. */
static void probe_with_fake_nvidia_smi(const char *script, struct machine_info *mi)
{
    char dir[] = "/tmp/test_config.XXXXXX";
    assert_non_null(mkdtemp(dir));
    char file[64];
    snprintf(file, sizeof file, "%s/nvidia-smi", dir);
    FILE *f = fopen(file, "w");
    assert_non_null(f);
    fprintf(f, "#!/bin/sh\n%s\n", script);
    fclose(f);
    assert_int_equal(chmod(file, 0755), 0);

    char *saved = xstrdup(getenv("PATH") ? getenv("PATH") : "");
    char *path = xasprintf("%s:/usr/bin:/bin", dir);
    setenv("PATH", path, 1);
    config_probe_machine(mi);
    setenv("PATH", saved, 1);
    free(path);
    free(saved);
    unlink(file);
    rmdir(dir);
}

static void probing_runs_nvidia_smi_from_path(void **state)
{
    struct machine_info mi;
    probe_with_fake_nvidia_smi("printf 'NVIDIA H800, 81559\\nNVIDIA H800, 81559\\n'", &mi);
    assert_int_equal(mi.gpus, 2);
    assert_string_equal(mi.gpu_type, "NVIDIA H800");
    assert_int_equal(mi.gpu_memory_gib, 79);
    machine_info_free(&mi);

    /* A failing nvidia-smi (no driver) means no GPUs, whatever it printed. */
    probe_with_fake_nvidia_smi("echo 'NVIDIA H800, 81559'; exit 9", &mi);
    assert_int_equal(mi.gpus, 0);
    assert_null(mi.gpu_type);
    machine_info_free(&mi);
}

/* ---- roles and the catalogue a caller sees ------------------------------ */

/* The demo with alice owning default, bob a member of team (bound to sim-public), root admin. */
static void make_teams(struct engine_config *cfg)
{
    make_default(cfg, 0, true);
    push(&cfg->admins, &cfg->admin_count, "root");
    cfg->workspaces = xreallocarray(cfg->workspaces, 2, sizeof *cfg->workspaces);
    cfg->workspace_count = 2;
    struct config_workspace *team = &cfg->workspaces[1];
    memset(team, 0, sizeof *team);
    team->name = xstrdup("team");
    push(&team->owners, &team->owner_count, "carol");
    push(&team->members, &team->member_count, "bob");
    push(&team->pools, &team->pool_count, "sim-public");
}

static void roles(void **state)
{
    struct engine_config cfg;
    make_teams(&cfg);
    assert_int_equal(config_role(&cfg, "default", "alice"), MEMBER_OWNER);
    assert_int_equal(config_role(&cfg, "team", "alice"), MEMBER_NONE);
    assert_int_equal(config_role(&cfg, "team", "carol"), MEMBER_OWNER);
    assert_int_equal(config_role(&cfg, "team", "bob"), MEMBER);
    assert_int_equal(config_role(&cfg, "default", "bob"), MEMBER_NONE);
    assert_int_equal(config_role(&cfg, "default", "root"), MEMBER_ADMIN);
    assert_int_equal(config_role(&cfg, "team", "root"), MEMBER_ADMIN);
    assert_int_equal(config_role(&cfg, "default", "mallory"), MEMBER_NONE);
    assert_int_equal(config_role(&cfg, "nowhere", "root"), MEMBER_NONE);
    assert_int_equal(config_role(&cfg, "default", NULL), MEMBER_NONE);
    config_free(&cfg);
}

static const struct catalog_spec *spec_in(const struct catalog *cat, const char *pool,
                                          const char *spec)
{
    const struct catalog_pool *p = catalog_pool(cat, pool);
    assert_non_null(p);
    const struct catalog_spec *s = catalog_pool_spec(p, spec);
    assert_non_null(s);
    return s;
}

static void catalog_of_an_owner(void **state)
{
    struct engine_config cfg;
    make_teams(&cfg);
    struct catalog cat;
    config_catalog(&cfg, "alice", &cat);
    assert_string_equal(cat.user, "alice");
    assert_names(NAMES(cat.workspaces, cat.workspace_count, name), "default");
    assert_int_equal(cat.workspaces[0].role, MEMBER_OWNER);
    assert_strings(cat.workspaces[0].pools, cat.workspaces[0].pool_count,
                   "local,local-idle,sim-public");
    assert_names(NAMES(cat.pools, cat.pool_count, name), "local,local-idle,sim-public");
    assert_int_equal(cat.pools[0].type, POOL_DEDICATED);
    assert_string_equal(cat.pools[0].display_name, "local (standard – dedicated)");
    assert_int_equal(cat.pools[1].type, POOL_IDLE);
    assert_strings(cat.pools[1].zones, cat.pools[1].zone_count, "local-1z");
    assert_int_equal(cat.pools[2].type, POOL_PUBLIC);
    assert_names(NAMES(cat.pools[2].specs, cat.pools[2].spec_count, name),
                 "cpu-1,sim-gpu-1,sim-gpu-8");

    const struct catalog_spec *s8 = spec_in(&cat, "sim-public", "sim-gpu-8");
    assert_int_equal(s8->devices, 8);
    assert_string_equal(s8->device_type, "simulated");
    assert_true(s8->simulated);
    assert_int_equal(s8->vcpus, 16);
    assert_int_equal(s8->memory_mib, 32768);
    assert_int_equal(s8->max_replicas, 4); /* one per node */
    const struct catalog_spec *s1 = spec_in(&cat, "sim-public", "sim-gpu-1");
    assert_int_equal(s1->devices, 1);
    assert_int_equal(s1->max_replicas, 32); /* 8 per node: GPUs run out first */
    const struct catalog_spec *c1 = spec_in(&cat, "sim-public", "cpu-1");
    assert_int_equal(c1->devices, 0);
    assert_null(c1->device_type);
    assert_false(c1->simulated);
    assert_int_equal(c1->max_replicas, 8 + 4 * 16); /* this machine's 8 CPUs and 16 per sim node */
    assert_int_equal(spec_in(&cat, "local-idle", "sim-gpu-8")->max_replicas, 4);

    assert_names(NAMES(cat.zones, cat.zone_count, name), "local-1z");
    assert_string_equal(cat.zones[0].region, "local-1");
    assert_names(NAMES(cat.vpcs, cat.vpc_count, id), "vpc-local");
    assert_string_equal(cat.vpcs[0].region, "local-1");
    assert_names(NAMES(cat.volumes, cat.volume_count, id), "scratch");
    assert_string_equal(cat.volumes[0].zone, "local-1z");
    assert_names(NAMES(cat.images, cat.image_count, path), "local/host");
    assert_string_equal(cat.images[0].source, "host");
    catalog_free(&cat);
    config_free(&cfg);
}

static void catalog_of_a_member_admin_and_stranger(void **state)
{
    struct engine_config cfg;
    make_teams(&cfg);
    struct catalog cat;

    config_catalog(&cfg, "bob", &cat);
    assert_names(NAMES(cat.workspaces, cat.workspace_count, name), "team");
    assert_int_equal(cat.workspaces[0].role, MEMBER);
    assert_strings(cat.workspaces[0].pools, cat.workspaces[0].pool_count, "sim-public");
    assert_names(NAMES(cat.pools, cat.pool_count, name), "sim-public");
    catalog_free(&cat);

    config_catalog(&cfg, "root", &cat);
    assert_names(NAMES(cat.workspaces, cat.workspace_count, name), "default,team");
    assert_int_equal(cat.workspaces[0].role, MEMBER_ADMIN);
    assert_int_equal(cat.workspaces[1].role, MEMBER_ADMIN);
    assert_names(NAMES(cat.pools, cat.pool_count, name), "local,local-idle,sim-public");
    catalog_free(&cat);

    config_catalog(&cfg, "mallory", &cat);
    assert_string_equal(cat.user, "mallory");
    assert_int_equal(cat.workspace_count, 0);
    assert_int_equal(cat.pool_count, 0);
    catalog_free(&cat);
    config_free(&cfg);
}

static void max_replicas_follows_the_nodes_a_pool_spans(void **state)
{
    struct engine_config cfg;
    make_default(&cfg, 0, true);
    struct config_pool *pub = &cfg.pools[2];
    push(&pub->nodes, &pub->node_count, "sim-n1");
    push(&pub->nodes, &pub->node_count, "sim-n2");
    push(&pub->specs, &pub->spec_count, "sim-gpu-1");
    cfg.nodes[2].unschedulable = true; /* sim-n2: chosen for no job */
    struct catalog cat;
    config_catalog(&cfg, "alice", &cat);
    assert_names(NAMES(catalog_pool(&cat, "sim-public")->specs,
                       catalog_pool(&cat, "sim-public")->spec_count, name),
                 "sim-gpu-1");
    assert_int_equal(spec_in(&cat, "sim-public", "sim-gpu-1")->max_replicas, 8);
    assert_int_equal(spec_in(&cat, "local", "sim-gpu-1")->max_replicas, 24);
    assert_int_equal(spec_in(&cat, "local", "sim-gpu-8")->max_replicas, 3);
    catalog_free(&cat);
    config_free(&cfg);

    /* A real GPU: its type and memory, not simulated; memory can be what runs out. */
    make_default(&cfg, 2, false);
    config_catalog(&cfg, "alice", &cat);
    const struct catalog_spec *g = spec_in(&cat, "local", "gpu-1");
    assert_int_equal(g->devices, 1);
    assert_string_equal(g->device_type, "NVIDIA H800");
    assert_int_equal(g->device_memory_gib, 79);
    assert_false(g->simulated);
    assert_int_equal(g->max_replicas, 2);
    catalog_free(&cat);
    cfg.specs[0].memory_mib = 6000; /* cpu-1: 16384 / 6000 = 2, fewer than 8 CPUs */
    config_catalog(&cfg, "alice", &cat);
    assert_int_equal(spec_in(&cat, "local", "cpu-1")->max_replicas, 2);
    catalog_free(&cat);
    config_free(&cfg);
}

static void catalog_survives_json(void **state)
{
    struct engine_config cfg;
    make_teams(&cfg);
    struct catalog cat, back;
    config_catalog(&cfg, "alice", &cat);
    json_t *j = catalog_to_json(&cat);
    struct findings fs = FINDINGS_INIT;
    assert_int_equal(catalog_from_json(j, &back, &fs), 0);
    assert_int_equal(fs.count, 0);
    json_t *j2 = catalog_to_json(&back);
    assert_true(json_equal(j, j2));
    json_decref(j);
    json_decref(j2);
    catalog_free(&back);
    catalog_free(&cat);
    config_free(&cfg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(default_catalogue_is_what_engine_md_promises),
        cmocka_unit_test(default_with_gpus_adds_gpu_1),
        cmocka_unit_test(demo_adds_simulated_nodes_pool_and_specs),
        cmocka_unit_test(lookups_find_by_name),
        cmocka_unit_test(written_defaults_read_back_equal),
        cmocka_unit_test(written_file_explains_itself),
        cmocka_unit_test(every_field_reads_back_equal),
        cmocka_unit_test(minimal_file_parses),
        cmocka_unit_test(unknown_field_suggests_the_nearest),
        cmocka_unit_test(bad_pool_type_lists_every_type),
        cmocka_unit_test(pool_naming_an_unknown_node),
        cmocka_unit_test(duplicate_names),
        cmocka_unit_test(zones_of_public_and_idle_pools),
        cmocka_unit_test(numbers_must_not_be_negative),
        cmocka_unit_test(workspace_references_and_owners),
        cmocka_unit_test(volume_path_must_be_absolute),
        cmocka_unit_test(run_as_users_must_exist_and_not_be_root),
        cmocka_unit_test(required_names_and_settings),
        cmocka_unit_test(broken_documents),
        cmocka_unit_test(every_error_is_reported_at_once),
        cmocka_unit_test(nvidia_smi_output_is_read),
        cmocka_unit_test(nvidia_smi_garbage_means_no_gpus),
        cmocka_unit_test(probing_this_machine),
        cmocka_unit_test(probing_runs_nvidia_smi_from_path),
        cmocka_unit_test(roles),
        cmocka_unit_test(catalog_of_an_owner),
        cmocka_unit_test(catalog_of_a_member_admin_and_stranger),
        cmocka_unit_test(max_replicas_follows_the_nodes_a_pool_spans),
        cmocka_unit_test(catalog_survives_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
