/*
 * test_validate: every rule of the create-task form (trainjob-job(5)) as validate_job
 * enforces it. Each test starts from a valid baseline job (every section
 * filled, as in job-example.yaml) that yields no findings offline and with the
 * test catalog, changes one thing, and checks the exact field path, severity
 * and, where it matters, offset and message. Also the image reference parser,
 * the single-field helpers and the path -> form section mapping.
 */
/* cmocka needs these first, in this order. */
// clang-format off
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
// clang-format on

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/catalog.h"
#include "api/exitcodes.h"
#include "api/finding.h"
#include "api/imageref.h"
#include "api/jobspec.h"
#include "api/validate.h"
#include "util/utf8.h"
#include "util/xalloc.h"

/* ---- building jobs ---- */

static void set(char **field, const char *value)
{
    free(*field);
    *field = value ? xstrdup(value) : NULL;
}

/* A string of n copies of unit (owned). */
static char *repeat(const char *unit, size_t n)
{
    size_t len = strlen(unit);
    char *s = xmalloc(len * n + 1);
    for (size_t i = 0; i < n; i++)
        memcpy(s + i * len, unit, len);
    s[len * n] = '\0';
    return s;
}

static void add_rule(struct jobspec *job, const char *codes, enum ft_action action)
{
    struct ft_rule *r = jobspec_add_rule(job);
    r->exit_codes = codes ? xstrdup(codes) : NULL;
    r->action = action;
}

static void add_mount(struct jobspec *job, const char *id, const char *mount_path)
{
    struct mount *m = jobspec_add_mount(job);
    m->type = MOUNT_TYPE_PV_AFS;
    m->id = id ? xstrdup(id) : NULL;
    m->mount_path = mount_path ? xstrdup(mount_path) : NULL;
}

static void add_env(struct jobspec *job, const char *key, const char *value)
{
    struct env_var *e = jobspec_add_env(job);
    e->key = key ? xstrdup(key) : NULL;
    e->value = value ? xstrdup(value) : NULL;
}

/* The full example job of trainjob-job(5), with a display name the form accepts. */
static void baseline(struct jobspec *job)
{
    jobspec_init(job);
    job->workspace_name = xstrdup("vision-team");
    job->display_name = xstrdup("ResNet50基线-v2");
    job->name = xstrdup("resnet50-baseline-v2");
    job->framework = FRAMEWORK_PYTORCH_DDP;

    job->resource_pool.present = true;
    job->resource_pool.name = xstrdup("public");
    job->resource_pool.zone = xstrdup("cn-sh-01e");
    job->resource_pool.vpc_id = xstrdup("vpc-7f3a2c");

    job->scheduling.present = true;
    job->scheduling.priority = PRIORITY_NORMAL;
    job->scheduling.quota_type = QUOTA_TYPE_RESERVED;
    job->scheduling.scoring_strategy = SCORING_MOST_ALLOCATED;

    struct role *r = jobspec_add_role(job);
    r->name = xstrdup("Worker");
    r->has_total_replicas = true;
    r->total_replicas = 2;
    role_add_spec(r)->name = xstrdup("N2lS.Ie.I60.8");
    r->image_path = xstrdup("registry.cn-sh-01.sensecore.cn/ngc/pytorch:25.06-py3");
    r->startup_script = xstrdup("cd /mnt/afs/code/resnet\ntorchrun train.py\n");

    job->fault_tolerance.present = true;
    job->fault_tolerance.has_backoff_limit = true;
    job->fault_tolerance.backoff_limit = 3;
    add_rule(job, "254,255", FT_ACTION_RESTART_POD);
    job->fault_tolerance.rules[0].has_mark_node_unschedulable = true;
    job->fault_tolerance.rules[0].mark_node_unschedulable = true;
    add_rule(job, "199,200-204,230", FT_ACTION_RESTART_JOB);
    add_rule(job, "1", FT_ACTION_FAIL_JOB);

    add_mount(job, "afs-vol-3c9e", "/mnt/afs");
    job->mount[0].subdir = xstrdup("/users/alice");

    add_env(job, "NCCL_DEBUG", "INFO");
    add_env(job, "OMP_NUM_THREADS", "8");

    job->ssh.present = true;
    job->ssh.has_auto_key_setup = true;
    job->ssh.auto_key_setup = true;
    job->ssh.config_mount_path = xstrdup(JOBSPEC_DEFAULT_SSH_PATH);

    job->tensorboard.present = true;
    job->tensorboard.log_path = xstrdup("/mnt/afs/tb/resnet50");
}

/* Drops the mounts (and TensorBoard, which needs one). */
static void drop_mounts(struct jobspec *job)
{
    for (size_t i = 0; i < job->mount_count; i++) {
        free(job->mount[i].id);
        free(job->mount[i].subdir);
        free(job->mount[i].mount_path);
        free(job->mount[i].zone);
        free(job->mount[i].endpoint);
    }
    job->mount_count = 0;
}

/* ---- the test catalog ---- */

static char **strv(size_t n, ...)
{
    va_list ap;
    char **v = xcalloc(n ? n : 1, sizeof *v);
    va_start(ap, n);
    for (size_t i = 0; i < n; i++)
        v[i] = xstrdup(va_arg(ap, const char *));
    va_end(ap);
    return v;
}

static void spec(struct catalog_spec *s, const char *name, int max_replicas)
{
    s->name = xstrdup(name);
    s->devices = 8;
    s->device_type = xstrdup("H800");
    s->device_memory_gib = 80;
    s->vcpus = 120;
    s->memory_mib = 1600 * 1024;
    s->max_replicas = max_replicas;
}

/*
 * alice owns vision-team, is a plain member of nlp-team, an admin of ops-team
 * and not in other-team. Pools: public (zones sh-01e, sh-01f, sh-01x — the last
 * unknown to the zone list), dedicated, idle (sh-01e) and unbound (in no
 * workspace of hers). Region cn-sh-01 has vpc-7f3a2c, cn-bj-01 has vpc-bj.
 */
static void make_catalog(struct catalog *cat)
{
    memset(cat, 0, sizeof *cat);
    cat->user = xstrdup("alice");

    cat->workspace_count = 4;
    cat->workspaces = xcalloc(4, sizeof *cat->workspaces);
    struct catalog_workspace *w = cat->workspaces;
    w[0].name = xstrdup("vision-team");
    w[0].role = MEMBER_OWNER;
    w[0].pools = strv(3, "public", "dedicated", "idle");
    w[0].pool_count = 3;
    w[1].name = xstrdup("nlp-team");
    w[1].role = MEMBER;
    w[1].pools = strv(2, "public", "idle");
    w[1].pool_count = 2;
    w[2].name = xstrdup("ops-team");
    w[2].role = MEMBER_ADMIN;
    w[2].pools = strv(1, "public");
    w[2].pool_count = 1;
    w[3].name = xstrdup("other-team");
    w[3].role = MEMBER_NONE;
    w[3].pools = strv(1, "public");
    w[3].pool_count = 1;

    cat->pool_count = 4;
    cat->pools = xcalloc(4, sizeof *cat->pools);
    struct catalog_pool *p = cat->pools;
    p[0].name = xstrdup("public");
    p[0].display_name = xstrdup("Public H800");
    p[0].type = POOL_PUBLIC;
    p[0].zones = strv(3, "cn-sh-01e", "cn-sh-01f", "cn-sh-01x");
    p[0].zone_count = 3;
    p[0].spec_count = 2;
    p[0].specs = xcalloc(2, sizeof *p[0].specs);
    spec(&p[0].specs[0], "N2lS.Ie.I60.8", 16);
    spec(&p[0].specs[1], "N2lS.Ie.I60.4", 32);
    p[1].name = xstrdup("dedicated");
    p[1].display_name = xstrdup("Dedicated H800");
    p[1].type = POOL_DEDICATED;
    p[1].spec_count = 1;
    p[1].specs = xcalloc(1, sizeof *p[1].specs);
    spec(&p[1].specs[0], "N2lS.Ie.I60.8", 4);
    p[2].name = xstrdup("idle");
    p[2].display_name = xstrdup("Idle H800");
    p[2].type = POOL_IDLE;
    p[2].zones = strv(1, "cn-sh-01e");
    p[2].zone_count = 1;
    p[2].spec_count = 1;
    p[2].specs = xcalloc(1, sizeof *p[2].specs);
    spec(&p[2].specs[0], "N2lS.Ie.I60.8", 8);
    p[3].name = xstrdup("unbound");
    p[3].display_name = xstrdup("Someone else's");
    p[3].type = POOL_PUBLIC;
    p[3].zones = strv(1, "cn-sh-01e");
    p[3].zone_count = 1;

    cat->zone_count = 3;
    cat->zones = xcalloc(3, sizeof *cat->zones);
    cat->zones[0].name = xstrdup("cn-sh-01e");
    cat->zones[0].region = xstrdup("cn-sh-01");
    cat->zones[1].name = xstrdup("cn-sh-01f");
    cat->zones[1].region = xstrdup("cn-sh-01");
    cat->zones[2].name = xstrdup("cn-bj-01a");
    cat->zones[2].region = xstrdup("cn-bj-01");

    cat->vpc_count = 2;
    cat->vpcs = xcalloc(2, sizeof *cat->vpcs);
    cat->vpcs[0].id = xstrdup("vpc-7f3a2c");
    cat->vpcs[0].region = xstrdup("cn-sh-01");
    cat->vpcs[1].id = xstrdup("vpc-bj");
    cat->vpcs[1].region = xstrdup("cn-bj-01");

    cat->volume_count = 3;
    cat->volumes = xcalloc(3, sizeof *cat->volumes);
    cat->volumes[0].id = xstrdup("afs-vol-3c9e");
    cat->volumes[0].display_name = xstrdup("alice's data");
    cat->volumes[0].zone = xstrdup("cn-sh-01e");
    cat->volumes[1].id = xstrdup("afs-vol-sh2");
    cat->volumes[1].display_name = xstrdup("models");
    cat->volumes[1].zone = xstrdup("cn-sh-01e");
    cat->volumes[2].id = xstrdup("afs-vol-bj");
    cat->volumes[2].display_name = xstrdup("beijing");
    cat->volumes[2].zone = xstrdup("cn-bj-01a");
}

/* ---- checking findings ---- */

static void dump(const struct findings *fs)
{
    for (size_t i = 0; i < fs->count; i++)
        print_message("  %s %s (offset %d): %s\n", severity_name(fs->items[i].severity),
                      fs->items[i].path, fs->items[i].offset, fs->items[i].message);
}

static bool matches(const struct finding *f, enum severity sev, const char *path,
                    const char *substr)
{
    return f->severity == sev && strcmp(f->path, path) == 0 &&
           (substr == NULL || strstr(f->message, substr) != NULL);
}

/* The finding of that severity, path and message part, or NULL. */
static const struct finding *find(const struct findings *fs, enum severity sev, const char *path,
                                  const char *substr)
{
    for (size_t i = 0; i < fs->count; i++)
        if (matches(&fs->items[i], sev, path, substr))
            return &fs->items[i];
    return NULL;
}

static void expect_none(const struct jobspec *job, const struct validate_options *opt)
{
    struct findings fs = FINDINGS_INIT;
    validate_job(job, opt, &fs);
    if (fs.count != 0) {
        dump(&fs);
        findings_free(&fs);
        fail_msg("expected no findings");
    }
    findings_free(&fs);
}

/*
 * Validates job and checks there is exactly one finding, with this severity,
 * path, message part (NULL: any) and offset (FINDING_AT_VALUE: any).
 */
static void expect_one_at(const struct jobspec *job, const struct validate_options *opt,
                          enum severity sev, const char *path, int offset, const char *substr)
{
    struct findings fs = FINDINGS_INIT;
    validate_job(job, opt, &fs);
    bool ok = fs.count == 1 && matches(&fs.items[0], sev, path, substr) &&
              (offset == FINDING_AT_VALUE || fs.items[0].offset == offset);
    if (!ok) {
        print_message("expected one %s on %s at %d containing \"%s\", got:\n", severity_name(sev),
                      path, offset, substr ? substr : "");
        dump(&fs);
        findings_free(&fs);
        fail();
    }
    findings_free(&fs);
}

static void expect_one(const struct jobspec *job, const struct validate_options *opt,
                       enum severity sev, const char *path, const char *substr)
{
    expect_one_at(job, opt, sev, path, FINDING_AT_VALUE, substr);
}

/* Validates job; the findings must include one of that severity, path and message part. */
static void expect_has(const struct jobspec *job, const struct validate_options *opt,
                       enum severity sev, const char *path, const char *substr)
{
    struct findings fs = FINDINGS_INIT;
    validate_job(job, opt, &fs);
    if (find(&fs, sev, path, substr) == NULL) {
        print_message("expected a %s on %s containing \"%s\", got:\n", severity_name(sev), path,
                      substr ? substr : "");
        dump(&fs);
        findings_free(&fs);
        fail();
    }
    findings_free(&fs);
}

/* Options with the test catalog (cat must be made and freed by the caller). */
static struct validate_options with_catalog(const struct catalog *cat)
{
    struct validate_options opt = {0};
    opt.catalog = cat;
    return opt;
}

/* ---- the baseline ---- */

static void test_baseline_offline(void **state)
{
    struct jobspec job;
    struct validate_options opt = {0};
    baseline(&job);
    expect_none(&job, &opt);
    expect_none(&job, NULL);
    jobspec_free(&job);
}

static void test_baseline_with_catalog(void **state)
{
    struct jobspec job;
    struct catalog cat;
    baseline(&job);
    make_catalog(&cat);
    struct validate_options opt = with_catalog(&cat);
    expect_none(&job, &opt);
    opt.for_submit = true;
    expect_none(&job, &opt);
    catalog_free(&cat);
    jobspec_free(&job);
}

/* Every message: no trailing period or space, no sentence-case start. */
static void test_message_style(void **state)
{
    struct jobspec job;
    struct findings fs = FINDINGS_INIT;
    baseline(&job);
    set(&job.display_name, "-x");
    set(&job.name, "Bad");
    job.framework = FRAMEWORK_UNSPECIFIED;
    set(&job.roles[0].image_path, "Ubuntu");
    set(&job.roles[0].startup_script, " ");
    job.fault_tolerance.backoff_limit = 0;
    add_rule(&job, "1,,2", FT_ACTION_UNSPECIFIED);
    add_rule(&job, "254", FT_ACTION_FAIL_JOB);
    add_mount(&job, NULL, "/proc");
    add_env(&job, "RANK", "0");
    set(&job.tensorboard.log_path, "/tmp/tb");
    set(&job.uid, "u-1");
    validate_job(&job, NULL, &fs);
    assert_true(fs.count >= 10);
    for (size_t i = 0; i < fs.count; i++) {
        const char *m = fs.items[i].message;
        size_t len = strlen(m);
        assert_true(len > 0);
        assert_true(m[len - 1] != '.' && m[len - 1] != ' ');
        assert_false(m[0] >= 'A' && m[0] <= 'Z' && m[1] >= 'a' && m[1] <= 'z');
    }
    findings_free(&fs);
    jobspec_free(&job);
}

/* ---- 1. Basics: workspace ---- */

static void test_workspace_required(void **state)
{
    struct jobspec job;
    baseline(&job);
    set(&job.workspace_name, NULL);
    expect_one(&job, NULL, SEVERITY_ERROR, "workspace_name", "required");
    set(&job.workspace_name, "");
    expect_one(&job, NULL, SEVERITY_ERROR, "workspace_name", "required");
    jobspec_free(&job);
}

static void test_workspace_from_options(void **state)
{
    struct jobspec job;
    struct catalog cat;
    baseline(&job);
    make_catalog(&cat);
    set(&job.workspace_name, NULL);
    struct validate_options opt = {0};
    opt.workspace = "vision-team";
    expect_none(&job, &opt);
    opt.catalog = &cat;
    expect_none(&job, &opt);
    catalog_free(&cat);
    jobspec_free(&job);
}

static void test_workspace_not_yours(void **state)
{
    struct jobspec job;
    struct catalog cat;
    baseline(&job);
    make_catalog(&cat);
    struct validate_options opt = with_catalog(&cat);
    set(&job.workspace_name, "other-team"); /* listed, but alice is not in it */
    expect_one(&job, &opt, SEVERITY_ERROR, "workspace_name",
               "not one of your workspaces: vision-team, nlp-team, ops-team");
    set(&job.workspace_name, "no-such-team");
    expect_one(&job, &opt, SEVERITY_ERROR, "workspace_name", "not one of your workspaces");
    catalog_free(&cat);
    jobspec_free(&job);
}

/* ---- 1. Basics: display_name ---- */

static void test_display_name_valid(void **state)
{
    static const char *const ok[] = {"ResNet50基线-v2", "训练任务",        "a", "9", "基",
                                     "a.b:c_d-e",       "GPT-3:v1.2_final"};
    char buf[256];
    struct jobspec job;
    baseline(&job);
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        assert_null(validate_display_name(ok[i], buf, sizeof buf));
        set(&job.display_name, ok[i]);
        expect_none(&job, NULL);
    }
    jobspec_free(&job);
}

static void test_display_name_space(void **state)
{
    struct jobspec job;
    baseline(&job);
    set(&job.display_name, "ResNet50 基线");
    expect_one_at(&job, NULL, SEVERITY_ERROR, "display_name", 8,
                  "character ' ' at position 9 is not allowed; use letters, digits, Chinese "
                  "characters, '.', ':', '_' or '-'");
    jobspec_free(&job);
}

static void test_display_name_bad_char_after_cjk(void **state)
{
    struct jobspec job;
    baseline(&job);
    /* Byte offset 6 (two 3-byte characters), character position 3. */
    set(&job.display_name, "基线/v2");
    expect_one_at(&job, NULL, SEVERITY_ERROR, "display_name", 6, "'/' at position 3");
    /* A full-width comma is named with its code point. */
    set(&job.display_name, "基线，v2");
    expect_one_at(&job, NULL, SEVERITY_ERROR, "display_name", 6, "U+FF0C");
    jobspec_free(&job);
}

static void test_display_name_length(void **state)
{
    struct jobspec job;
    baseline(&job);
    char *s = repeat("基", 256);
    set(&job.display_name, s);
    expect_none(&job, NULL);
    free(s);
    s = repeat("基", 257);
    set(&job.display_name, s);
    expect_one_at(&job, NULL, SEVERITY_ERROR, "display_name", 256 * 3,
                  "at most 256 characters (found 257)");
    free(s);
    s = repeat("a", 256);
    set(&job.display_name, s);
    expect_none(&job, NULL);
    free(s);
    jobspec_free(&job);
}

static void test_display_name_first_char(void **state)
{
    struct jobspec job;
    baseline(&job);
    set(&job.display_name, "-resnet");
    expect_one_at(&job, NULL, SEVERITY_ERROR, "display_name", 0, "must start with");
    set(&job.display_name, ".x");
    expect_one_at(&job, NULL, SEVERITY_ERROR, "display_name", 0, "must start with");
    set(&job.display_name, "_x");
    expect_one_at(&job, NULL, SEVERITY_ERROR, "display_name", 0, "must start with");
    jobspec_free(&job);
}

static void test_display_name_required(void **state)
{
    struct jobspec job;
    baseline(&job);
    set(&job.display_name, NULL);
    expect_one(&job, NULL, SEVERITY_ERROR, "display_name", "required");
    set(&job.display_name, "");
    expect_one(&job, NULL, SEVERITY_ERROR, "display_name", "required");
    jobspec_free(&job);
}

static void test_display_name_invalid_utf8(void **state)
{
    struct jobspec job;
    baseline(&job);
    set(&job.display_name, "ab\xff");
    expect_one_at(&job, NULL, SEVERITY_ERROR, "display_name", 2, "invalid UTF-8");
    set(&job.display_name, "ab\xe5\x9f"); /* truncated 基 */
    expect_one_at(&job, NULL, SEVERITY_ERROR, "display_name", 2, "invalid UTF-8");
    jobspec_free(&job);
}

/* ---- 1. Basics: name ---- */

static void test_name_absent_is_fine(void **state)
{
    struct jobspec job;
    baseline(&job);
    set(&job.name, NULL);
    expect_none(&job, NULL);
    jobspec_free(&job);
}

static void test_name_empty(void **state)
{
    struct jobspec job;
    baseline(&job);
    set(&job.name, "");
    expect_one(&job, NULL, SEVERITY_ERROR, "name",
               "must not be empty (leave it out to have one generated)");
    jobspec_free(&job);
}

static void test_name_63_ok_64_rejected(void **state)
{
    struct jobspec job;
    baseline(&job);
    char *s = repeat("a", 63);
    set(&job.name, s);
    expect_none(&job, NULL);
    free(s);
    s = repeat("a", 64);
    set(&job.name, s);
    expect_one_at(&job, NULL, SEVERITY_ERROR, "name", 63, "at most 63 characters");
    free(s);
    jobspec_free(&job);
}

static void test_name_one_letter_ok(void **state)
{
    struct jobspec job;
    baseline(&job);
    set(&job.name, "a");
    expect_none(&job, NULL);
    set(&job.name, "a-1-b");
    expect_none(&job, NULL);
    jobspec_free(&job);
}

static void test_name_trailing_dash(void **state)
{
    struct jobspec job;
    baseline(&job);
    set(&job.name, "a-");
    expect_one_at(&job, NULL, SEVERITY_ERROR, "name", 1,
                  "character '-' at position 2 cannot end the name: it must end with a letter "
                  "or digit (1-63 characters");
    jobspec_free(&job);
}

static void test_name_leading_digit(void **state)
{
    struct jobspec job;
    baseline(&job);
    set(&job.name, "1a");
    expect_one_at(&job, NULL, SEVERITY_ERROR, "name", 0, "starting with a letter");
    jobspec_free(&job);
}

static void test_name_uppercase(void **state)
{
    struct jobspec job;
    baseline(&job);
    set(&job.name, "Ab");
    expect_one_at(&job, NULL, SEVERITY_ERROR, "name", 0, "lowercase");
    set(&job.name, "aB");
    expect_one_at(&job, NULL, SEVERITY_ERROR, "name", 1, "lowercase");
    set(&job.name, "a_b");
    expect_one_at(&job, NULL, SEVERITY_ERROR, "name", 1, NULL);
    jobspec_free(&job);
}

struct taken {
    int calls;
    char workspace[64];
    char name[64];
};

static bool name_taken(void *ctx, const char *workspace, const char *name)
{
    struct taken *t = ctx;
    t->calls++;
    snprintf(t->workspace, sizeof t->workspace, "%s", workspace);
    snprintf(t->name, sizeof t->name, "%s", name);
    return strcmp(name, "resnet50-baseline-v2") == 0;
}

static void test_name_taken(void **state)
{
    struct jobspec job;
    struct taken t = {0};
    struct validate_options opt = {0};
    opt.name_taken = name_taken;
    opt.name_taken_ctx = &t;
    baseline(&job);
    expect_one(&job, &opt, SEVERITY_ERROR, "name", "already used in workspace vision-team");
    assert_int_equal(t.calls, 1);
    assert_string_equal(t.workspace, "vision-team");
    assert_string_equal(t.name, "resnet50-baseline-v2");

    set(&job.name, "fresh-name");
    expect_none(&job, &opt);
    assert_int_equal(t.calls, 2);

    /* No name: nothing to check. An invalid name: not asked either. */
    set(&job.name, NULL);
    expect_none(&job, &opt);
    set(&job.name, "Bad");
    expect_one(&job, &opt, SEVERITY_ERROR, "name", NULL);
    assert_int_equal(t.calls, 2);

    /* The default workspace is the one asked about. */
    set(&job.name, "resnet50-baseline-v2");
    set(&job.workspace_name, NULL);
    opt.workspace = "nlp-team";
    expect_one(&job, &opt, SEVERITY_ERROR, "name", "already used in workspace nlp-team");
    assert_string_equal(t.workspace, "nlp-team");
    jobspec_free(&job);
}

/* ---- 1. Basics: resource pool, zone, VPC ---- */

static void test_pool_required(void **state)
{
    struct jobspec job;
    baseline(&job);
    set(&job.resource_pool.name, NULL);
    expect_one(&job, NULL, SEVERITY_ERROR, "resource_pool.name", "required");
    set(&job.resource_pool.name, "");
    expect_one(&job, NULL, SEVERITY_ERROR, "resource_pool.name", "required");
    jobspec_free(&job);
}

static void test_pool_section_absent(void **state)
{
    struct jobspec job;
    baseline(&job);
    set(&job.resource_pool.name, NULL);
    set(&job.resource_pool.zone, NULL);
    set(&job.resource_pool.vpc_id, NULL);
    job.resource_pool.present = false;
    expect_one(&job, NULL, SEVERITY_ERROR, "resource_pool.name", "required");
    jobspec_free(&job);
}

static void test_offline_spot_needs_zone_and_vpc(void **state)
{
    struct jobspec job;
    struct findings fs = FINDINGS_INIT;
    baseline(&job);
    job.scheduling.quota_type = QUOTA_TYPE_SPOT;
    expect_none(&job, NULL);
    set(&job.resource_pool.zone, NULL);
    set(&job.resource_pool.vpc_id, NULL);
    validate_job(&job, NULL, &fs);
    assert_int_equal(fs.count, 2);
    assert_non_null(find(&fs, SEVERITY_ERROR, "resource_pool.zone", "required"));
    assert_non_null(find(&fs, SEVERITY_ERROR, "resource_pool.vpc_id", "required"));
    findings_free(&fs);
    jobspec_free(&job);
}

static void test_offline_reserved_needs_no_zone(void **state)
{
    struct jobspec job;
    baseline(&job);
    set(&job.resource_pool.zone, NULL);
    set(&job.resource_pool.vpc_id, NULL);
    expect_none(&job, NULL);
    jobspec_free(&job);
}

static void test_pool_not_bound(void **state)
{
    struct jobspec job;
    struct catalog cat;
    baseline(&job);
    make_catalog(&cat);
    struct validate_options opt = with_catalog(&cat);
    set(&job.resource_pool.name, "unbound");
    expect_one(&job, &opt, SEVERITY_ERROR, "resource_pool.name",
               "'unbound' is not a member of the workspace's pools; choose one of: public, "
               "dedicated, idle");
    set(&job.resource_pool.name, "nowhere");
    expect_has(&job, &opt, SEVERITY_ERROR, "resource_pool.name", "'nowhere' is not a member");
    catalog_free(&cat);
    jobspec_free(&job);
}

/* An unknown pool and an unknown spec: both said at once, not one per round trip. */
static void test_pool_and_spec_unknown(void **state)
{
    struct jobspec job;
    struct catalog cat;
    baseline(&job);
    make_catalog(&cat);
    struct validate_options opt = with_catalog(&cat);
    set(&job.resource_pool.name, "nowhere");
    set(&job.roles[0].resource_spec[0].name, "no-such-spec");
    struct findings fs = FINDINGS_INIT;
    validate_job(&job, &opt, &fs);
    if (fs.count != 2 ||
        !find(&fs, SEVERITY_ERROR, "resource_pool.name", "'nowhere' is not a member") ||
        !find(&fs, SEVERITY_ERROR, "roles[0].resource_spec[0].name",
              "'no-such-spec' is not a spec of any pool; choose one of: N2lS.Ie.I60.8, "
              "N2lS.Ie.I60.4")) {
        dump(&fs);
        findings_free(&fs);
        fail_msg("expected the pool's error and the spec's");
    }
    findings_free(&fs);
    /* a spec some pool has (even one not the workspace's): the pool's error alone */
    set(&job.roles[0].resource_spec[0].name, "N2lS.Ie.I60.4");
    expect_one(&job, &opt, SEVERITY_ERROR, "resource_pool.name", "'nowhere' is not a member");
    catalog_free(&cat);
    jobspec_free(&job);
}

static void test_idle_pool_needs_zone_and_vpc(void **state)
{
    struct jobspec job;
    struct catalog cat;
    struct findings fs = FINDINGS_INIT;
    baseline(&job);
    make_catalog(&cat);
    struct validate_options opt = with_catalog(&cat);
    set(&job.resource_pool.name, "idle");
    job.scheduling.quota_type = QUOTA_TYPE_SPOT;
    expect_none(&job, &opt);
    set(&job.resource_pool.zone, NULL);
    set(&job.resource_pool.vpc_id, NULL);
    validate_job(&job, &opt, &fs);
    assert_non_null(find(&fs, SEVERITY_ERROR, "resource_pool.zone", "required for an idle pool"));
    assert_non_null(find(&fs, SEVERITY_ERROR, "resource_pool.vpc_id", "required"));
    findings_free(&fs);
    catalog_free(&cat);
    jobspec_free(&job);
}

static void test_idle_pool_quota_type(void **state)
{
    struct jobspec job;
    struct catalog cat;
    baseline(&job);
    make_catalog(&cat);
    struct validate_options opt = with_catalog(&cat);
    set(&job.resource_pool.name, "idle");
    job.scheduling.quota_type = QUOTA_TYPE_RESERVED;
    expect_one(&job, &opt, SEVERITY_ERROR, "scheduling.quota_type", "idle pool needs SPOT");
    /* Unspecified: derived from the pool, and the job is idle (preemptible is fine). */
    job.scheduling.quota_type = QUOTA_TYPE_UNSPECIFIED;
    job.scheduling.has_preemptible = true;
    job.scheduling.preemptible = true;
    expect_none(&job, &opt);
    catalog_free(&cat);
    jobspec_free(&job);
}

static void test_standard_pool_with_spot(void **state)
{
    struct jobspec job;
    struct catalog cat;
    baseline(&job);
    make_catalog(&cat);
    struct validate_options opt = with_catalog(&cat);
    job.scheduling.quota_type = QUOTA_TYPE_SPOT;
    expect_one(&job, &opt, SEVERITY_ERROR, "scheduling.quota_type", "needs RESERVED");
    set(&job.resource_pool.name, "dedicated");
    set(&job.resource_pool.zone, NULL);
    set(&job.resource_pool.vpc_id, NULL);
    expect_one(&job, &opt, SEVERITY_ERROR, "scheduling.quota_type", "needs RESERVED");
    catalog_free(&cat);
    jobspec_free(&job);
}

static void test_public_pool_needs_zone_and_vpc(void **state)
{
    struct jobspec job;
    struct catalog cat;
    baseline(&job);
    make_catalog(&cat);
    struct validate_options opt = with_catalog(&cat);
    set(&job.resource_pool.zone, NULL);
    expect_one(&job, &opt, SEVERITY_ERROR, "resource_pool.zone",
               "choose one of: cn-sh-01e, cn-sh-01f");
    set(&job.resource_pool.zone, "cn-sh-01e");
    set(&job.resource_pool.vpc_id, NULL);
    expect_one(&job, &opt, SEVERITY_ERROR, "resource_pool.vpc_id", "required");
    catalog_free(&cat);
    jobspec_free(&job);
}

static void test_zone_not_in_pool(void **state)
{
    struct jobspec job;
    struct catalog cat;
    struct findings fs = FINDINGS_INIT;
    baseline(&job);
    make_catalog(&cat);
    struct validate_options opt = with_catalog(&cat);
    set(&job.resource_pool.zone, "cn-bj-01a");
    validate_job(&job, &opt, &fs);
    assert_non_null(find(&fs, SEVERITY_ERROR, "resource_pool.zone",
                         "'cn-bj-01a' is not one of the pool's zones"));
    findings_clear(&fs);
    /* Offered by the pool but unknown to the catalog's zones. */
    set(&job.resource_pool.zone, "cn-sh-01x");
    validate_job(&job, &opt, &fs);
    assert_non_null(find(&fs, SEVERITY_ERROR, "resource_pool.zone", "unknown zone 'cn-sh-01x'"));
    findings_free(&fs);
    catalog_free(&cat);
    jobspec_free(&job);
}

static void test_vpc_in_other_region(void **state)
{
    struct jobspec job;
    struct catalog cat;
    baseline(&job);
    make_catalog(&cat);
    struct validate_options opt = with_catalog(&cat);
    set(&job.resource_pool.vpc_id, "vpc-bj");
    expect_one(&job, &opt, SEVERITY_ERROR, "resource_pool.vpc_id",
               "'vpc-bj' is in region cn-bj-01");
    set(&job.resource_pool.vpc_id, "vpc-none");
    expect_one(&job, &opt, SEVERITY_ERROR, "resource_pool.vpc_id", "unknown VPC 'vpc-none'");
    catalog_free(&cat);
    jobspec_free(&job);
}

static void test_dedicated_pool_zone_ignored(void **state)
{
    struct jobspec job;
    struct catalog cat;
    struct findings fs = FINDINGS_INIT;
    baseline(&job);
    make_catalog(&cat);
    struct validate_options opt = with_catalog(&cat);
    set(&job.resource_pool.name, "dedicated");
    validate_job(&job, &opt, &fs);
    assert_int_equal(fs.count, 2);
    assert_non_null(
        find(&fs, SEVERITY_WARNING, "resource_pool.zone", "ignored for a dedicated pool"));
    assert_non_null(
        find(&fs, SEVERITY_WARNING, "resource_pool.vpc_id", "ignored for a dedicated pool"));
    findings_free(&fs);
    set(&job.resource_pool.zone, NULL);
    set(&job.resource_pool.vpc_id, NULL);
    expect_none(&job, &opt);
    catalog_free(&cat);
    jobspec_free(&job);
}

/* ---- 2. Resources ---- */

static void test_priority_owner_and_member(void **state)
{
    struct jobspec job;
    struct catalog cat;
    baseline(&job);
    make_catalog(&cat);
    struct validate_options opt = with_catalog(&cat);

    job.scheduling.priority = PRIORITY_HIGH; /* alice owns vision-team */
    expect_none(&job, &opt);
    job.scheduling.priority = PRIORITY_HIGHEST;
    expect_none(&job, &opt);

    set(&job.workspace_name, "ops-team"); /* admin */
    expect_none(&job, &opt);

    set(&job.workspace_name, "nlp-team"); /* plain member */
    job.scheduling.priority = PRIORITY_HIGH;
    expect_one(&job, &opt, SEVERITY_ERROR, "scheduling.priority",
               "HIGH needs workspace owner rights; you are a member of nlp-team");
    job.scheduling.priority = PRIORITY_HIGHEST;
    expect_one(&job, &opt, SEVERITY_ERROR, "scheduling.priority", "HIGHEST needs");
    job.scheduling.priority = PRIORITY_NORMAL;
    expect_none(&job, &opt);
    job.scheduling.priority = PRIORITY_UNSPECIFIED;
    expect_none(&job, &opt);

    /* Offline nobody knows the role. */
    job.scheduling.priority = PRIORITY_HIGHEST;
    expect_none(&job, NULL);
    catalog_free(&cat);
    jobspec_free(&job);
}

static void test_priority_on_idle_job(void **state)
{
    struct jobspec job;
    baseline(&job);
    job.scheduling.quota_type = QUOTA_TYPE_SPOT;
    job.scheduling.priority = PRIORITY_HIGH;
    expect_none(&job, NULL);
    jobspec_free(&job);
}

static void test_preemptible(void **state)
{
    struct jobspec job;
    baseline(&job);
    job.scheduling.has_preemptible = true;
    job.scheduling.preemptible = true;
    expect_one(&job, NULL, SEVERITY_WARNING, "scheduling.preemptible",
               "only idle (SPOT) jobs can be preempted; ignored");
    job.scheduling.quota_type = QUOTA_TYPE_SPOT;
    expect_none(&job, NULL);
    job.scheduling.preemptible = false;
    expect_none(&job, NULL);
    jobspec_free(&job);
}

static void test_framework(void **state)
{
    static const enum framework ok[] = {
        FRAMEWORK_PYTORCH_DDP, FRAMEWORK_TENSORFLOW_PS, FRAMEWORK_SENSEPARROTS,     FRAMEWORK_MPI,
        FRAMEWORK_PYTORCH,     FRAMEWORK_TENSORFLOW,    FRAMEWORK_SENSEPARROTS_DDP,
    };
    struct jobspec job;
    baseline(&job);
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        job.framework = ok[i];
        expect_none(&job, NULL);
    }
    job.framework = FRAMEWORK_UNSPECIFIED;
    expect_one(&job, NULL, SEVERITY_ERROR, "framework",
               "required: one of PYTORCH_DDP, TENSORFLOW_PS, SENSEPARROTS, MPI");
    jobspec_free(&job);
}

static void test_roles_none(void **state)
{
    struct jobspec job;
    baseline(&job);
    /* Move the role out so the job has none. */
    struct role *roles = job.roles;
    size_t n = job.role_count;
    job.roles = NULL;
    job.role_count = 0;
    expect_one(&job, NULL, SEVERITY_ERROR, "roles", "required");
    job.roles = roles;
    job.role_count = n;
    jobspec_free(&job);
}

static void test_roles_two(void **state)
{
    struct jobspec job;
    baseline(&job);
    struct role *r = jobspec_add_role(&job);
    r->name = xstrdup("Worker");
    expect_one(&job, NULL, SEVERITY_ERROR, "roles[1]", "only one role is supported");
    jobspec_free(&job);
}

static void test_role_name(void **state)
{
    struct jobspec job;
    baseline(&job);
    set(&job.roles[0].name, NULL);
    expect_none(&job, NULL);
    set(&job.roles[0].name, "Master");
    expect_one(&job, NULL, SEVERITY_ERROR, "roles[0].name", "Worker");
    set(&job.roles[0].name, "worker");
    expect_one(&job, NULL, SEVERITY_ERROR, "roles[0].name", NULL);
    jobspec_free(&job);
}

static void test_total_replicas(void **state)
{
    struct jobspec job;
    baseline(&job);
    job.roles[0].total_replicas = 1;
    expect_none(&job, NULL);
    job.roles[0].total_replicas = 0;
    expect_one(&job, NULL, SEVERITY_ERROR, "roles[0].total_replicas", "at least 1");
    job.roles[0].total_replicas = -3;
    expect_one(&job, NULL, SEVERITY_ERROR, "roles[0].total_replicas", "at least 1");
    job.roles[0].has_total_replicas = false;
    expect_one(&job, NULL, SEVERITY_ERROR, "roles[0].total_replicas", "required");
    jobspec_free(&job);
}

static void test_replicas_both_ways(void **state)
{
    struct jobspec job;
    baseline(&job);
    job.roles[0].resource_spec[0].has_replicas = true;
    job.roles[0].resource_spec[0].replicas = 3;
    expect_one(&job, NULL, SEVERITY_ERROR, "roles[0].resource_spec[0].replicas",
               "set either total_replicas or per-spec replicas, not both");
    /* Both, adding up, as a GET reports them: a job read back validates. */
    job.roles[0].resource_spec[0].replicas = 2;
    expect_none(&job, NULL);
    /* Per-spec replicas alone stand for the total. */
    job.roles[0].has_total_replicas = false;
    expect_none(&job, NULL);
    job.roles[0].resource_spec[0].replicas = 0;
    expect_one(&job, NULL, SEVERITY_ERROR, "roles[0].resource_spec[0].replicas", "at least 1");
    jobspec_free(&job);
}

static void test_replicas_over_pool_max(void **state)
{
    struct jobspec job;
    struct catalog cat;
    baseline(&job);
    make_catalog(&cat);
    struct validate_options opt = with_catalog(&cat);
    job.roles[0].total_replicas = 16;
    expect_none(&job, &opt);
    job.roles[0].total_replicas = 17;
    expect_one(&job, &opt, SEVERITY_ERROR, "roles[0].total_replicas",
               "the pool can hold at most 16 workers of spec N2lS.Ie.I60.8");
    expect_none(&job, NULL); /* offline nobody knows */
    catalog_free(&cat);
    jobspec_free(&job);
}

static void test_resource_spec_count(void **state)
{
    struct jobspec job;
    baseline(&job);
    role_add_spec(&job.roles[0])->name = xstrdup("N2lS.Ie.I60.4");
    /* ACP's weak heterogeneous form: several specs and total_replicas. */
    expect_one(&job, NULL, SEVERITY_WARNING, "roles[0].resource_spec[1]",
               "ACP spreads the 2 workers over them");
    job.roles[0].has_total_replicas = false;
    job.roles[0].resource_spec[0].has_replicas = true;
    job.roles[0].resource_spec[0].replicas = 2;
    expect_one(&job, NULL, SEVERITY_ERROR, "roles[0].resource_spec[1]",
               "several specs need total_replicas");
    job.roles[0].has_total_replicas = true;
    job.roles[0].resource_spec[0].has_replicas = false;
    free(job.roles[0].resource_spec[0].name);
    free(job.roles[0].resource_spec[1].name);
    job.roles[0].resource_spec_count = 0;
    expect_one(&job, NULL, SEVERITY_ERROR, "roles[0].resource_spec", "required");
    jobspec_free(&job);
}

static void test_resource_spec_name(void **state)
{
    struct jobspec job;
    struct catalog cat;
    baseline(&job);
    make_catalog(&cat);
    struct validate_options opt = with_catalog(&cat);
    set(&job.roles[0].resource_spec[0].name, NULL);
    expect_one(&job, NULL, SEVERITY_ERROR, "roles[0].resource_spec[0].name", "required");
    expect_one(&job, &opt, SEVERITY_ERROR, "roles[0].resource_spec[0].name",
               "choose one of: N2lS.Ie.I60.8, N2lS.Ie.I60.4");
    catalog_free(&cat);
    jobspec_free(&job);
}

static void test_resource_spec_not_in_pool(void **state)
{
    struct jobspec job;
    struct catalog cat;
    baseline(&job);
    make_catalog(&cat);
    struct validate_options opt = with_catalog(&cat);
    set(&job.roles[0].resource_spec[0].name, "N2lS.Ie.I6.8");
    expect_one(&job, &opt, SEVERITY_ERROR, "roles[0].resource_spec[0].name",
               "'N2lS.Ie.I6.8' is not one of the pool's specs (did you mean 'N2lS.Ie.I60.8'?); "
               "choose one of: N2lS.Ie.I60.8, N2lS.Ie.I60.4");
    set(&job.roles[0].resource_spec[0].name, "cpu-only");
    expect_one(&job, &opt, SEVERITY_ERROR, "roles[0].resource_spec[0].name",
               "'cpu-only' is not one of the pool's specs; choose one of");
    expect_none(&job, NULL);
    catalog_free(&cat);
    jobspec_free(&job);
}

/* ---- 3. Image ---- */

static const char digest64[] = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

static void test_image_valid(void **state)
{
    char ref_digest[128];
    snprintf(ref_digest, sizeof ref_digest, "a/b@sha256:%s", digest64);
    char ref_tag_digest[160];
    snprintf(ref_tag_digest, sizeof ref_tag_digest, "registry.io/a/b:v1@sha256:%s", digest64);
    char *tag128 = repeat("t", 128);
    char ref_tag128[160];
    snprintf(ref_tag128, sizeof ref_tag128, "a:%s", tag128);
    const char *const ok[] = {
        "registry.cn-sh-01.sensecore.cn/ngc/pytorch:25.06-py3",
        "ubuntu",
        "localhost:5000/a/b:tag",
        ref_digest,
        ref_tag_digest,
        "local/host",
        "localhost/x",
        "x/a_b__c.d-e---f/g:Tag_1.0-rc",
        "docker.io/library/ubuntu:22.04",
        "10.0.0.1:443/team/img:_x",
        ref_tag128,
    };
    char buf[256];
    struct jobspec job;
    baseline(&job);
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        const char *msg = validate_image_path(ok[i], buf, sizeof buf);
        if (msg)
            fail_msg("%s: %s", ok[i], msg);
        set(&job.roles[0].image_path, ok[i]);
        expect_none(&job, NULL);
    }
    free(tag128);
    jobspec_free(&job);
}

static void expect_image_error(const char *ref, int offset, const char *substr)
{
    struct jobspec job;
    baseline(&job);
    set(&job.roles[0].image_path, ref);
    expect_one_at(&job, NULL, SEVERITY_ERROR, "roles[0].image_path", offset, substr);
    jobspec_free(&job);
}

static void test_image_uppercase(void **state)
{
    expect_image_error("Ubuntu", 0, "repository must be lowercase");
    expect_image_error("team/myImage", 7, "repository must be lowercase");
}

static void test_image_empty_tag(void **state)
{
    expect_image_error("a:", 2, "tag must not be empty");
}

static void test_image_two_colons(void **state)
{
    expect_image_error("a:b:c", 3, "tag may contain only");
}

static void test_image_long_tag(void **state)
{
    char *tag = repeat("t", 129);
    char ref[160];
    snprintf(ref, sizeof ref, "a:%s", tag);
    expect_image_error(ref, 2 + 128, "at most 128");
    free(tag);
}

static void test_image_bad_tag_start(void **state)
{
    expect_image_error("a:.x", 2, "tag must start with");
    expect_image_error("a:-x", 2, "tag must start with");
}

static void test_image_short_digest(void **state)
{
    expect_image_error("a@sha256:abc", 9, "digest must be 'sha256:' followed by 64");
    expect_image_error("a@md5:abc", 2, "digest must be");
    char ref[128];
    snprintf(ref, sizeof ref, "a@sha256:%.63sA", digest64); /* uppercase hex */
    expect_image_error(ref, 9 + 63, "lowercase hex");
}

static void test_image_empty(void **state)
{
    expect_image_error("", FINDING_AT_VALUE, "required");
    expect_image_error(NULL, FINDING_AT_VALUE, "required");
}

static void test_image_empty_component(void **state)
{
    expect_image_error("a//b", 2, "empty path component");
    expect_image_error("/a", 0, "empty path component");
    expect_image_error("registry.io/", 12, "empty path component");
}

static void test_image_bad_separators(void **state)
{
    expect_image_error("a/-b", 2, "start with a letter or digit");
    expect_image_error("a/b-", 3, "end with a letter or digit");
    expect_image_error("a/b..c", 3, "separators");
    expect_image_error("a/b___c", 3, "separators");
    expect_image_error("a/b c", 3, "may contain only");
}

static void test_image_bad_registry(void **state)
{
    expect_image_error("reg_istry.io/a", 3, "registry host may contain only");
    expect_image_error("localhost:50a0/a", 12, "port must be digits");
    expect_image_error("-reg.io/a", 0, "registry host labels");
    expect_image_error(":5000/a", 0, "registry host must not be empty");
}

static void test_imageref_parts(void **state)
{
    struct imageref ref;
    size_t off = 99;
    const char *msg = NULL;

    assert_int_equal(
        imageref_parse("registry.cn-sh-01.sensecore.cn/ngc/pytorch:25.06-py3", &ref, &off, &msg),
        0);
    assert_string_equal(ref.registry, "registry.cn-sh-01.sensecore.cn");
    assert_string_equal(ref.repository, "ngc/pytorch");
    assert_string_equal(ref.tag, "25.06-py3");
    assert_null(ref.digest);
    imageref_free(&ref);

    assert_int_equal(imageref_parse("ubuntu", &ref, NULL, NULL), 0);
    assert_null(ref.registry);
    assert_string_equal(ref.repository, "ubuntu");
    assert_null(ref.tag);
    imageref_free(&ref);

    assert_int_equal(imageref_parse("localhost:5000/a/b:tag", &ref, NULL, NULL), 0);
    assert_string_equal(ref.registry, "localhost:5000");
    assert_string_equal(ref.repository, "a/b");
    assert_string_equal(ref.tag, "tag");
    imageref_free(&ref);

    assert_int_equal(imageref_parse("local/host", &ref, NULL, NULL), 0);
    assert_null(ref.registry);
    assert_string_equal(ref.repository, "local/host");
    imageref_free(&ref);

    char s[128];
    snprintf(s, sizeof s, "a/b@sha256:%s", digest64);
    assert_int_equal(imageref_parse(s, &ref, NULL, NULL), 0);
    assert_string_equal(ref.repository, "a/b");
    assert_null(ref.tag);
    assert_memory_equal(ref.digest, "sha256:", 7);
    assert_string_equal(ref.digest + 7, digest64);
    imageref_free(&ref);

    assert_int_equal(imageref_parse("a:b:c", &ref, &off, &msg), -1);
    assert_int_equal(off, 3);
    assert_non_null(msg);
    assert_null(ref.repository);
}

static void test_startup_script(void **state)
{
    struct jobspec job;
    baseline(&job);
    set(&job.roles[0].startup_script, "python train.py");
    expect_none(&job, NULL);
    set(&job.roles[0].startup_script, NULL);
    expect_one(&job, NULL, SEVERITY_ERROR, "roles[0].startup_script", "required");
    set(&job.roles[0].startup_script, "");
    expect_one(&job, NULL, SEVERITY_ERROR, "roles[0].startup_script", "required");
    set(&job.roles[0].startup_script, "  \n\t \r\n");
    expect_one(&job, NULL, SEVERITY_ERROR, "roles[0].startup_script", "must not be blank");
    jobspec_free(&job);
}

/* ---- 4. Fault tolerance ---- */

static void test_backoff_limit(void **state)
{
    struct jobspec job;
    baseline(&job);
    job.fault_tolerance.backoff_limit = -1;
    expect_none(&job, NULL);
    job.fault_tolerance.backoff_limit = 99;
    expect_none(&job, NULL);
    /* the console's range, the backend stating none: a warning (issue 12: a job fetched from
     * ACP, whose API takes any int32, still loads) */
    job.fault_tolerance.backoff_limit = -2;
    expect_one(&job, NULL, SEVERITY_WARNING, "fault_tolerance.backoff_limit", "-1");
    job.fault_tolerance.backoff_limit = 100;
    expect_one(&job, NULL, SEVERITY_WARNING, "fault_tolerance.backoff_limit", "99");
    /* a range the backend states is enforced: trainjobd's console one, ACP's int32 */
    struct catalog cat;
    make_catalog(&cat);
    cat.limits = (struct catalog_limits){.present = true,
                                         .has_min_backoff_limit = true,
                                         .min_backoff_limit = -1,
                                         .has_max_backoff_limit = true,
                                         .max_backoff_limit = 99};
    struct validate_options opt = with_catalog(&cat);
    expect_one(&job, &opt, SEVERITY_ERROR, "fault_tolerance.backoff_limit", "on this backend");
    cat.limits.max_backoff_limit = INT32_MAX;
    job.fault_tolerance.backoff_limit = INT32_MAX;
    expect_none(&job, &opt);
    job.fault_tolerance.backoff_limit = -2;
    expect_one(&job, &opt, SEVERITY_ERROR, "fault_tolerance.backoff_limit", "2147483647");
    catalog_free(&cat);
    jobspec_free(&job);
}

static void test_ft_absent_not_checked(void **state)
{
    struct jobspec job;
    baseline(&job);
    for (size_t i = 0; i < job.fault_tolerance.rule_count; i++)
        free(job.fault_tolerance.rules[i].exit_codes);
    job.fault_tolerance.rule_count = 0;
    job.fault_tolerance.present = false;
    job.fault_tolerance.backoff_limit = 500;
    expect_none(&job, NULL);
    /* Rules without the section flag are still checked. */
    job.fault_tolerance.backoff_limit = 3;
    add_rule(&job, "0", FT_ACTION_FAIL_JOB);
    expect_one(&job, NULL, SEVERITY_ERROR, "fault_tolerance.rules[0].exit_codes", NULL);
    jobspec_free(&job);
}

static void test_rules_at_most_20(void **state)
{
    struct jobspec job;
    char codes[16];
    baseline(&job);
    for (int c = 10; job.fault_tolerance.rule_count < 20; c++) {
        snprintf(codes, sizeof codes, "%d", c);
        add_rule(&job, codes, FT_ACTION_RESTART_JOB);
    }
    expect_none(&job, NULL);
    add_rule(&job, "100", FT_ACTION_RESTART_JOB);
    expect_one(&job, NULL, SEVERITY_WARNING, "fault_tolerance.rules", "at most 20");
    struct catalog cat;
    make_catalog(&cat);
    cat.limits = (struct catalog_limits){.present = true, .has_max_rules = true, .max_rules = 20};
    struct validate_options opt = with_catalog(&cat);
    expect_one(&job, &opt, SEVERITY_ERROR, "fault_tolerance.rules", "at most 20 rules on this");
    catalog_free(&cat);
    jobspec_free(&job);
}

static void test_rule_bad_exit_codes(void **state)
{
    static const char *const bad[] = {"1,,2", "0", "256", "205-200", "1-", "-1", "a", "1, 2x"};
    struct jobspec job;
    baseline(&job);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct exitcode_set codes;
        struct exitcodes_error err = {0};
        assert_int_equal(exitcodes_parse(bad[i], &codes, &err), -1);
        set(&job.fault_tolerance.rules[1].exit_codes, bad[i]);
        expect_one_at(&job, NULL, SEVERITY_ERROR, "fault_tolerance.rules[1].exit_codes",
                      (int)err.offset, err.message);
    }
    /* The offset is the parser's position of the problem, not the whole value. */
    set(&job.fault_tolerance.rules[1].exit_codes, "1,,2");
    expect_one_at(&job, NULL, SEVERITY_ERROR, "fault_tolerance.rules[1].exit_codes", 2, NULL);
    jobspec_free(&job);
}

static void test_rule_action_required(void **state)
{
    struct jobspec job;
    baseline(&job);
    job.fault_tolerance.rules[2].action = FT_ACTION_UNSPECIFIED;
    expect_one(&job, NULL, SEVERITY_ERROR, "fault_tolerance.rules[2].action",
               "required: RESTART_JOB, RESTART_POD or FAIL_JOB");
    jobspec_free(&job);
}

static void test_rule_any_code(void **state)
{
    struct jobspec job;
    baseline(&job);
    add_rule(&job, NULL, FT_ACTION_FAIL_JOB); /* the fallback: fine, no shadowing noise */
    expect_none(&job, NULL);
    set(&job.fault_tolerance.rules[3].exit_codes, "");
    expect_none(&job, NULL);
    job.fault_tolerance.rules[3].has_mark_node_unschedulable = true;
    job.fault_tolerance.rules[3].mark_node_unschedulable = true;
    expect_one(&job, NULL, SEVERITY_WARNING, "fault_tolerance.rules[3].mark_node_unschedulable",
               "only acts when the rule lists exit codes");
    jobspec_free(&job);
}

static void test_rules_with_backoff_zero(void **state)
{
    struct jobspec job;
    baseline(&job);
    job.fault_tolerance.backoff_limit = 0;
    expect_one(&job, NULL, SEVERITY_WARNING, "fault_tolerance.rules",
               "these rules have no effect while max restarts (backoff_limit) is 0");
    job.fault_tolerance.has_backoff_limit = false; /* default: not 0 */
    expect_none(&job, NULL);
    jobspec_free(&job);
}

static void test_rule_shadowed(void **state)
{
    struct jobspec job;
    baseline(&job);
    for (size_t i = 0; i < job.fault_tolerance.rule_count; i++)
        free(job.fault_tolerance.rules[i].exit_codes);
    job.fault_tolerance.rule_count = 0;
    add_rule(&job, "201,230", FT_ACTION_RESTART_JOB);
    add_rule(&job, "201,202", FT_ACTION_FAIL_JOB);
    expect_one(&job, NULL, SEVERITY_WARNING, "fault_tolerance.rules[1].exit_codes", NULL);
    struct findings fs = FINDINGS_INIT;
    validate_job(&job, NULL, &fs);
    assert_string_equal(fs.items[0].message, "201 is shadowed by rules[0]");
    findings_free(&fs);

    /* Several codes, several earlier rules. */
    add_rule(&job, "200-205,230", FT_ACTION_RESTART_POD);
    validate_job(&job, NULL, &fs);
    assert_int_equal(fs.count, 3);
    assert_non_null(find(&fs, SEVERITY_WARNING, "fault_tolerance.rules[2].exit_codes",
                         "201,230 are shadowed by rules[0]"));
    assert_non_null(find(&fs, SEVERITY_WARNING, "fault_tolerance.rules[2].exit_codes",
                         "202 is shadowed by rules[1]"));
    findings_free(&fs);
    jobspec_free(&job);
}

static void test_rule_never_matches(void **state)
{
    struct jobspec job;
    baseline(&job);
    add_rule(&job, "254", FT_ACTION_FAIL_JOB);
    expect_one(&job, NULL, SEVERITY_WARNING, "fault_tolerance.rules[3].exit_codes",
               "never matches: every code is caught by earlier rules");
    /* Caught by two earlier rules: still one finding. */
    set(&job.fault_tolerance.rules[3].exit_codes, "1,254");
    expect_one(&job, NULL, SEVERITY_WARNING, "fault_tolerance.rules[3].exit_codes",
               "never matches");
    jobspec_free(&job);
}

static void test_rule_after_any_code_never_matches(void **state)
{
    struct jobspec job;
    baseline(&job);
    set(&job.fault_tolerance.rules[0].exit_codes, NULL);
    job.fault_tolerance.rules[0].mark_node_unschedulable = false;
    struct findings fs = FINDINGS_INIT;
    validate_job(&job, NULL, &fs);
    assert_int_equal(fs.count, 2);
    assert_non_null(
        find(&fs, SEVERITY_WARNING, "fault_tolerance.rules[1].exit_codes", "never matches"));
    assert_non_null(
        find(&fs, SEVERITY_WARNING, "fault_tolerance.rules[2].exit_codes", "never matches"));
    findings_free(&fs);
    jobspec_free(&job);
}

static void test_shadowing_skips_invalid_rules(void **state)
{
    struct jobspec job;
    baseline(&job);
    set(&job.fault_tolerance.rules[0].exit_codes, "254,999");
    set(&job.fault_tolerance.rules[2].exit_codes, "254");
    /* Rule 1 is in error; rule 3 is not reported as shadowed by it. */
    expect_one(&job, NULL, SEVERITY_ERROR, "fault_tolerance.rules[0].exit_codes", NULL);
    jobspec_free(&job);
}

/* ---- 5. Data ---- */

static void test_no_mounts(void **state)
{
    struct jobspec job;
    baseline(&job);
    drop_mounts(&job);
    job.tensorboard.present = false;
    expect_none(&job, NULL);
    jobspec_free(&job);
}

static void test_mount_id_required(void **state)
{
    struct jobspec job;
    baseline(&job);
    set(&job.mount[0].id, NULL);
    expect_one(&job, NULL, SEVERITY_ERROR, "mount[0].id", "required");
    jobspec_free(&job);
}

static void test_mount_type_default(void **state)
{
    struct jobspec job;
    baseline(&job);
    job.mount[0].type = MOUNT_TYPE_UNSPECIFIED;
    expect_none(&job, NULL);
    jobspec_free(&job);
}

static void test_mount_subdir(void **state)
{
    struct jobspec job;
    baseline(&job);
    set(&job.mount[0].subdir, NULL);
    expect_none(&job, NULL);
    set(&job.mount[0].subdir, "");
    expect_none(&job, NULL);
    set(&job.mount[0].subdir, "users/alice");
    expect_one(&job, NULL, SEVERITY_ERROR, "mount[0].subdir", "absolute");
    set(&job.mount[0].subdir, "/users/../bob");
    expect_one(&job, NULL, SEVERITY_ERROR, "mount[0].subdir", "'..'");
    set(&job.mount[0].subdir, "/users/..x");
    expect_none(&job, NULL);
    set(&job.mount[0].subdir, "/users/alice/");
    expect_none(&job, NULL);
    set(&job.mount[0].subdir, "/users//alice");
    expect_one(&job, NULL, SEVERITY_ERROR, "mount[0].subdir", "empty component ('//')");
    set(&job.mount[0].subdir, "//users");
    expect_one(&job, NULL, SEVERITY_ERROR, "mount[0].subdir", "empty component");
    set(&job.mount[0].subdir, "/users/./alice");
    expect_one(&job, NULL, SEVERITY_ERROR, "mount[0].subdir", "'.' component");
    set(&job.mount[0].subdir, "/users/a\nb");
    expect_one(&job, NULL, SEVERITY_ERROR, "mount[0].subdir", "control characters");
    jobspec_free(&job);
}

static void expect_mount_path_error(const char *path, const char *substr)
{
    struct jobspec job;
    baseline(&job);
    job.tensorboard.present = false;
    set(&job.mount[0].mount_path, path);
    expect_one(&job, NULL, SEVERITY_ERROR, "mount[0].mount_path", substr);
    jobspec_free(&job);
}

static void test_mount_path_required(void **state)
{
    expect_mount_path_error(NULL, "required");
    expect_mount_path_error("", "required");
}

static void test_mount_path_root(void **state)
{
    expect_mount_path_error("/", "must not be '/'");
    expect_mount_path_error("//", "must not be '/'");
    expect_mount_path_error("/./", "must not be '/'");
}

static void test_mount_path_relative(void **state)
{
    expect_mount_path_error("mnt/afs", "absolute");
    expect_mount_path_error("./afs", "absolute");
}

static void test_mount_path_dotdot(void **state)
{
    expect_mount_path_error("/mnt/../afs", "'..'");
    expect_mount_path_error("/mnt/afs/..", "'..'");
}

/*
 * Bidi controls and zero-width characters (Unicode Cf) in a path make it read
 * as another: refused in mount_path, subdir and tensorboard.log_path, the
 * message naming the code point (the field is the finding's path).
 */
static void test_paths_invisible_format(void **state)
{
    static const char *const chars[] = {
        "\u200b", "\u200c", "\u200d", "\u200e", "\u200f", "\u202a", "\u202b", "\u202c", "\u202d",
        "\u202e", "\u2060", "\u2061", "\u2064", "\u2066", "\u2067", "\u2069", "\ufeff",
    };
    for (size_t i = 0; i < sizeof chars / sizeof chars[0]; i++) {
        uint32_t cp;
        utf8_decode(chars[i], strlen(chars[i]), &cp);
        char code[16], path[64];
        snprintf(code, sizeof code, "U+%04X", (unsigned)cp);
        snprintf(path, sizeof path, "/mnt/a%sfs", chars[i]);
        expect_mount_path_error(path, code);

        struct jobspec job;
        baseline(&job);
        snprintf(path, sizeof path, "/users/%salice", chars[i]);
        set(&job.mount[0].subdir, path);
        expect_one(&job, NULL, SEVERITY_ERROR, "mount[0].subdir", code);
        set(&job.mount[0].subdir, NULL);
        snprintf(path, sizeof path, "/mnt/afs/tb%s", chars[i]);
        set(&job.tensorboard.log_path, path);
        expect_one(&job, NULL, SEVERITY_ERROR, "tensorboard.log_path", code);
        jobspec_free(&job);
    }
    /* Other characters outside ASCII are fine. */
    struct jobspec job;
    baseline(&job);
    set(&job.mount[0].subdir, "/users/阿丽丝/café");
    set(&job.tensorboard.log_path, "/mnt/afs/日志");
    expect_none(&job, NULL);
    /* and a control character in log_path is refused as in the others */
    set(&job.tensorboard.log_path, "/mnt/afs/a\033[2Jb");
    expect_one(&job, NULL, SEVERITY_ERROR, "tensorboard.log_path", "control characters");
    jobspec_free(&job);
    (void)state;
}

static void test_mount_path_system_dirs(void **state)
{
    static const char *const bad[] = {
        "/proc", "/proc/x", "/sys",     "/dev",       "/etc",     "/etc/",   "/usr/local",
        "/bin",  "/sbin",   "/lib",     "/lib64",     "/lib32/x", "/libx32", "/boot",
        "/run",  "/run/a",  "/var/run", "/var/run/x", "//usr",    "/./etc",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        expect_mount_path_error(bad[i], "system directory");
    expect_mount_path_error("/lib64", "/lib64 is a system directory");
    expect_mount_path_error("/etc/", "/etc is a system directory");
    expect_mount_path_error("/var/run", "/var/run is a system directory");
    expect_mount_path_error("/var/run/x", "lies under the system directory /var/run");
    expect_mount_path_error("/usr/local", "lies under the system directory /usr");
}

static void test_mount_path_near_system_dirs_ok(void **state)
{
    static const char *const ok[] = {"/mnt/afs", "/data",    "/var/data",        "/var/runner",
                                     "/runtime", "/usrdata", "/home/alice/proc", "/mnt/afs/"};
    char buf[256];
    struct jobspec job;
    baseline(&job);
    job.tensorboard.present = false;
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        assert_null(validate_mount_path(ok[i], buf, sizeof buf));
        set(&job.mount[0].mount_path, ok[i]);
        expect_none(&job, NULL);
    }
    jobspec_free(&job);
}

static void test_mount_path_duplicates(void **state)
{
    static const char *const same[] = {"/mnt/afs", "/mnt/afs/", "/mnt//afs", "/mnt/./afs/"};
    struct jobspec job;
    baseline(&job);
    add_mount(&job, "afs-vol-sh2", "/mnt/models");
    expect_none(&job, NULL);
    for (size_t i = 0; i < sizeof same / sizeof same[0]; i++) {
        set(&job.mount[1].mount_path, same[i]);
        expect_one(&job, NULL, SEVERITY_ERROR, "mount[1].mount_path",
                   "same mount path as mount[0]");
    }
    /* A prefix that is not a component is another path. */
    set(&job.mount[1].mount_path, "/mnt/afs2");
    expect_none(&job, NULL);
    jobspec_free(&job);
}

static void test_mount_volume_catalog(void **state)
{
    struct jobspec job;
    struct catalog cat;
    baseline(&job);
    make_catalog(&cat);
    struct validate_options opt = with_catalog(&cat);
    set(&job.mount[0].id, "afs-vol-none");
    expect_one(&job, &opt, SEVERITY_ERROR, "mount[0].id",
               "unknown volume 'afs-vol-none'; choose one of: afs-vol-3c9e, afs-vol-sh2");
    expect_none(&job, NULL);
    set(&job.mount[0].id, "afs-vol-bj");
    expect_one(&job, &opt, SEVERITY_ERROR, "mount[0].id",
               "volume 'afs-vol-bj' is in zone cn-bj-01a, not in the job's zone cn-sh-01e");
    /* A dedicated pool without a zone: the volume's zone is not compared. */
    set(&job.resource_pool.name, "dedicated");
    set(&job.resource_pool.zone, NULL);
    set(&job.resource_pool.vpc_id, NULL);
    expect_none(&job, &opt);
    catalog_free(&cat);
    jobspec_free(&job);
}

/* ---- 6. Environment ---- */

static void expect_env_key_error(const char *key, int offset, const char *substr)
{
    struct jobspec job;
    baseline(&job);
    set(&job.env[1].key, key);
    expect_one_at(&job, NULL, SEVERITY_ERROR, "env[1].key", offset, substr);
    jobspec_free(&job);
}

static void test_env_reserved_names(void **state)
{
    static const char *const reserved[] = {
        "PATH",
        "HOME",
        "USER",
        "SHELL",
        "ECP_JOB_NAME",
        "MASTER_ADDR",
        "MASTER_PORT",
        "WORLD_SIZE",
        "RANK",
        "LOCAL_RANK",
        "NODE_RANK",
        "TF_CONFIG",
        "CUDA_VISIBLE_DEVICES",
        "NVIDIA_VISIBLE_DEVICES",
    };
    for (size_t i = 0; i < sizeof reserved / sizeof reserved[0]; i++)
        expect_env_key_error(reserved[i], FINDING_AT_VALUE,
                             "is a system variable: set by the platform");
}

static void test_env_reserved_prefixes(void **state)
{
    static const char *const reserved[] = {
        "SENSECORE_REGION", "TRAINJOB_ID",  "KUBERNETES_SERVICE_HOST",
        "VC_TASK_INDEX",    "SLURM_JOB_ID", "OMPI_COMM_WORLD_RANK",
        "PMIX_RANK",        "SENSECORE_",   "LD_LIBRARY_PATH",
        "LD_PRELOAD",
    };
    for (size_t i = 0; i < sizeof reserved / sizeof reserved[0]; i++)
        expect_env_key_error(reserved[i], FINDING_AT_VALUE,
                             "are system variables: set by the platform");
}

static void test_env_near_reserved_ok(void **state)
{
    static const char *const ok[] = {
        "RANKS", "MY_RANK", "VC", "VCX_A", "rank", "SLURM", "_x", "a1", "Cuda_Visible_Devices"};
    char buf[256];
    struct jobspec job;
    baseline(&job);
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        assert_null(validate_env_name(ok[i], buf, sizeof buf));
        set(&job.env[1].key, ok[i]);
        expect_none(&job, NULL);
    }
    jobspec_free(&job);
}

static void test_env_bad_name(void **state)
{
    expect_env_key_error("1X", 0, "not starting with a digit");
    expect_env_key_error("A-B", 1, NULL);
    expect_env_key_error("A B", 1, NULL);
    expect_env_key_error("", FINDING_AT_VALUE, "required");
    expect_env_key_error(NULL, FINDING_AT_VALUE, "required");
}

static void test_env_name_length(void **state)
{
    char *s = repeat("A", 256);
    struct jobspec job;
    baseline(&job);
    set(&job.env[1].key, s);
    expect_none(&job, NULL);
    jobspec_free(&job);
    free(s);
    s = repeat("A", 257);
    expect_env_key_error(s, 256, "at most 256 characters");
    free(s);
}

static void test_env_at_most_20(void **state)
{
    char key[16];
    struct jobspec job;
    baseline(&job);
    while (job.env_count < 20) {
        snprintf(key, sizeof key, "VAR_%zu", job.env_count);
        add_env(&job, key, "x");
    }
    expect_none(&job, NULL);
    add_env(&job, "VAR_21", "x");
    expect_one(&job, NULL, SEVERITY_WARNING, "env", "at most 20 variables in the console");
    /* ACP's API states 10: an error there, and 10 is fine */
    struct catalog cat;
    make_catalog(&cat);
    cat.limits = (struct catalog_limits){.present = true, .has_max_env = true, .max_env = 10};
    struct validate_options opt = with_catalog(&cat);
    expect_one(&job, &opt, SEVERITY_ERROR, "env", "at most 10 variables on this backend");
    job.env_count = 10;
    expect_none(&job, &opt);
    job.env_count = 21;
    catalog_free(&cat);
    jobspec_free(&job);
}

static void test_env_duplicate(void **state)
{
    struct jobspec job;
    baseline(&job);
    add_env(&job, "NCCL_DEBUG", "WARN");
    expect_one(&job, NULL, SEVERITY_ERROR, "env[2].key", "same name as env[0]");
    jobspec_free(&job);
}

static void test_env_value_size(void **state)
{
    struct jobspec job;
    baseline(&job);
    char *v = repeat("v", 4096);
    set(&job.env[0].value, v);
    expect_none(&job, NULL);
    free(v);
    v = repeat("v", 4097);
    set(&job.env[0].value, v);
    expect_one(&job, NULL, SEVERITY_ERROR, "env[0].value", "at most 4096 bytes");
    free(v);
    set(&job.env[0].value, NULL);
    expect_none(&job, NULL);
    set(&job.env[0].value, "");
    expect_none(&job, NULL);
    jobspec_free(&job);
}

static void test_ssh_mpi(void **state)
{
    struct jobspec job;
    baseline(&job);
    job.ssh.auto_key_setup = false;
    expect_none(&job, NULL);
    job.framework = FRAMEWORK_MPI;
    expect_one(&job, NULL, SEVERITY_WARNING, "ssh.auto_key_setup",
               "MPI jobs always set up SSH; ignored");
    job.ssh.has_auto_key_setup = false;
    expect_none(&job, NULL);
    jobspec_free(&job);
}

static void test_ssh_config_mount_path(void **state)
{
    struct jobspec job;
    baseline(&job);
    set(&job.ssh.config_mount_path, NULL);
    expect_none(&job, NULL);
    set(&job.ssh.config_mount_path, "/sensecore/compute/acp/ssh/ssh_config/");
    expect_none(&job, NULL);
    set(&job.ssh.config_mount_path, "ssh_config");
    expect_one(&job, NULL, SEVERITY_ERROR, "ssh.config_mount_path", "absolute");
    set(&job.ssh.config_mount_path, "/a/../etc/ssh");
    expect_one(&job, NULL, SEVERITY_ERROR, "ssh.config_mount_path", "'..'");
    jobspec_free(&job);
}

/* The message of the only finding, which must be on path (owned). */
static char *only_message(const struct jobspec *job, const char *path)
{
    struct findings fs = FINDINGS_INIT;
    validate_job(job, NULL, &fs);
    if (fs.count != 1 || strcmp(fs.items[0].path, path) != 0) {
        print_message("expected one finding on %s, got:\n", path);
        dump(&fs);
        findings_free(&fs);
        fail();
    }
    char *msg = xstrdup(fs.items[0].message);
    findings_free(&fs);
    return msg;
}

/*
 * Issue 10, item 4: ssh.config_mount_path took /proc and /etc that
 * mount_path refused. Every path a job places in a worker follows one rule,
 * with the same words; /trainjob (working directory, hostfile, script) is
 * the platform's.
 */
static void test_placed_paths_one_rule(void **state)
{
    static const struct {
        const char *path, *why;
    } bad[] = {
        {"/proc", "/proc is a system directory"},
        {"/etc", "/etc is a system directory"},
        {"/etc/ssh", "lies under the system directory /etc"},
        {"/proc/self/root", "lies under the system directory /proc"},
        {"/sys", "system directory"},
        {"/dev/shm", "lies under the system directory /dev"},
        {"/usr/local", "lies under the system directory /usr"},
        {"/", "must not be '/'"},
        {"//", "must not be '/'"},
        {"relative/ssh", "absolute"},
        {"/a/../etc", "'..'"},
        {"/trainjob", "/trainjob is reserved for the platform"},
        {"/trainjob/", "/trainjob is reserved for the platform"},
        {"/trainjob/work", "lies under /trainjob, reserved for the platform"},
        {"/trainjob/platform/x", "lies under /trainjob, reserved for the platform"},
        {"/mnt/a:b", "must not contain ':'"},
        {"/mnt/a\nb", "control characters"},
        {"/mnt/\033[2Jx", "control characters"},
    };
    struct jobspec job;
    baseline(&job);
    job.tensorboard.present = false;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        set(&job.mount[0].mount_path, bad[i].path);
        char *as_mount = only_message(&job, "mount[0].mount_path");
        set(&job.mount[0].mount_path, "/mnt/afs");
        set(&job.ssh.config_mount_path, bad[i].path);
        char *as_ssh = only_message(&job, "ssh.config_mount_path");
        set(&job.ssh.config_mount_path, JOBSPEC_DEFAULT_SSH_PATH);
        if (strstr(as_mount, bad[i].why) == NULL)
            fail_msg("%s: \"%s\" does not say \"%s\"", bad[i].path, as_mount, bad[i].why);
        assert_string_equal(as_ssh, as_mount);
        free(as_mount);
        free(as_ssh);
    }
    /* Near misses are fine for both. */
    static const char *const ok[] = {"/trainjobs", "/mnt/trainjob", "/data/etc"};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        set(&job.ssh.config_mount_path, ok[i]);
        expect_none(&job, NULL);
    }
    jobspec_free(&job);
}

/* /tmp and $HOME-like paths are fine: the working directory is at /trainjob/work. */
static void test_mount_path_tmp_ok(void **state)
{
    static const char *const ok[] = {"/tmp", "/tmp/data", "/root", "/home/alice"};
    struct jobspec job;
    baseline(&job);
    job.tensorboard.present = false;
    char buf[256];
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        assert_null(validate_mount_path(ok[i], buf, sizeof buf));
        set(&job.mount[0].mount_path, ok[i]);
        expect_none(&job, NULL);
    }
    jobspec_free(&job);
}

/* A mount inside another is refused: bwrap would make it through what the outer one holds. */
static void test_mount_paths_nested(void **state)
{
    struct jobspec job;
    baseline(&job);
    add_mount(&job, "afs-vol-sh2", "/mnt/afs/models");
    expect_one(&job, NULL, SEVERITY_ERROR, "mount[1].mount_path",
               "lies inside mount[0].mount_path /mnt/afs; one mount may not lie inside another");
    set(&job.mount[1].mount_path, "/mnt/");
    expect_one(&job, NULL, SEVERITY_ERROR, "mount[1].mount_path",
               "would hide mount[0].mount_path /mnt/afs");
    set(&job.mount[1].mount_path, "/mnt/afs-models");
    expect_none(&job, NULL);
    jobspec_free(&job);
}

/* Nor may a mount hide the SSH directory, or the SSH directory lie inside a mount. */
static void test_ssh_path_conflicts(void **state)
{
    struct jobspec job;
    baseline(&job);
    set(&job.ssh.config_mount_path, "/mnt/afs/.ssh");
    expect_one(&job, NULL, SEVERITY_ERROR, "ssh.config_mount_path",
               "lies inside mount[0].mount_path /mnt/afs; one mount may not lie inside another");
    set(&job.ssh.config_mount_path, "/mnt");
    expect_one(&job, NULL, SEVERITY_ERROR, "ssh.config_mount_path",
               "would hide mount[0].mount_path /mnt/afs");
    set(&job.ssh.config_mount_path, "/mnt/afs/");
    expect_one(&job, NULL, SEVERITY_ERROR, "ssh.config_mount_path",
               "same path as mount[0].mount_path");
    /* Not mounted (no SSH set up, not MPI): only the path's own rule applies. */
    job.ssh.auto_key_setup = false;
    set(&job.ssh.config_mount_path, "/mnt/afs/.ssh");
    expect_none(&job, NULL);
    set(&job.ssh.config_mount_path, "/etc/ssh");
    expect_one(&job, NULL, SEVERITY_ERROR, "ssh.config_mount_path", "system directory");

    /* The default path, when SSH is set up without one: the mount is what must move. */
    job.ssh.auto_key_setup = true;
    set(&job.ssh.config_mount_path, NULL);
    job.tensorboard.present = false;
    set(&job.mount[0].mount_path, "/sensecore");
    expect_one(&job, NULL, SEVERITY_ERROR, "mount[0].mount_path",
               "would hide the SSH config directory " JOBSPEC_DEFAULT_SSH_PATH
               " (ssh.config_mount_path)");
    set(&job.mount[0].mount_path, JOBSPEC_DEFAULT_SSH_PATH "/keys");
    expect_one(&job, NULL, SEVERITY_ERROR, "mount[0].mount_path",
               "lies inside the SSH config directory");
    set(&job.mount[0].mount_path, JOBSPEC_DEFAULT_SSH_PATH "/");
    expect_one(&job, NULL, SEVERITY_ERROR, "mount[0].mount_path",
               "same path as the SSH config directory (ssh.config_mount_path)");
    /* MPI always mounts it, even with ssh absent. */
    job.ssh.present = false;
    expect_none(&job, NULL);
    job.framework = FRAMEWORK_MPI;
    expect_has(&job, NULL, SEVERITY_ERROR, "mount[0].mount_path",
               "same path as the SSH config directory");
    jobspec_free(&job);
}

/* ---- 7. TensorBoard ---- */

static void test_tensorboard_on_mount(void **state)
{
    static const char *const ok[] = {"/mnt/afs", "/mnt/afs/", "/mnt/afs/tb/x", "/mnt//afs/tb"};
    struct jobspec job;
    baseline(&job);
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        set(&job.tensorboard.log_path, ok[i]);
        expect_none(&job, NULL);
    }
    set(&job.mount[0].mount_path, "/mnt/afs/"); /* trailing slash on the mount side */
    set(&job.tensorboard.log_path, "/mnt/afs/tb");
    expect_none(&job, NULL);
    jobspec_free(&job);
}

static void test_tensorboard_not_on_mount(void **state)
{
    struct jobspec job;
    baseline(&job);
    add_mount(&job, "afs-vol-sh2", "/mnt/models");
    set(&job.tensorboard.log_path, "/mnt/afs2");
    expect_one(&job, NULL, SEVERITY_ERROR, "tensorboard.log_path",
               "must be on a mounted volume: equal to or under one of: /mnt/afs, /mnt/models");
    set(&job.tensorboard.log_path, "/tmp/tb");
    expect_one(&job, NULL, SEVERITY_ERROR, "tensorboard.log_path", "mounted volume");
    set(&job.tensorboard.log_path, "/mnt");
    expect_one(&job, NULL, SEVERITY_ERROR, "tensorboard.log_path", "mounted volume");
    jobspec_free(&job);
}

static void test_tensorboard_no_mounts(void **state)
{
    struct jobspec job;
    baseline(&job);
    drop_mounts(&job);
    expect_one(&job, NULL, SEVERITY_ERROR, "tensorboard.log_path",
               "no volumes are mounted; add one in Data");
    jobspec_free(&job);
}

static void test_tensorboard_log_path(void **state)
{
    struct jobspec job;
    baseline(&job);
    /* `tensorboard: {}` and an empty log_path are TensorBoard off (ACP's schema: the path is the
     * switch), not a missing field. */
    set(&job.tensorboard.log_path, NULL);
    expect_none(&job, NULL);
    set(&job.tensorboard.log_path, "");
    expect_none(&job, NULL);
    set(&job.tensorboard.log_path, "tb/run1");
    expect_one(&job, NULL, SEVERITY_ERROR, "tensorboard.log_path", "absolute");
    set(&job.tensorboard.log_path, "/mnt/afs/../tb");
    expect_one(&job, NULL, SEVERITY_ERROR, "tensorboard.log_path", "'..'");
    job.tensorboard.present = false;
    expect_none(&job, NULL);
    jobspec_free(&job);
}

/* ---- 8. Output-only fields ---- */

static void set_output_only(struct jobspec *job)
{
    set(&job->subscription_name, "sub");
    set(&job->resource_group_name, "rg");
    set(&job->zone, "cn-sh-01e");
    set(&job->uid, "u-1");
    set(&job->id, "id-1");
    set(&job->resource_pool.display_name, "Public H800");
    set(&job->roles[0].resource_spec[0].description, "8xH800");
    job->ownership.present = true;
    job->state = JOB_STATE_RUNNING;
    set(&job->state_message, "running");
    job->has_root_mapping = true;
    set(&job->create_time, "2025-01-01T00:00:00Z");
    set(&job->start_time, "2025-01-01T00:00:00Z");
    set(&job->suspend_time, "2025-01-01T00:00:00Z");
    set(&job->update_time, "2025-01-01T00:00:00Z");
    set(&job->complete_time, "2025-01-01T00:00:00Z");
    set(&job->delete_time, "2025-01-01T00:00:00Z");
}

static const char *const output_only_paths[] = {
    "subscription_name",
    "resource_group_name",
    "zone",
    "uid",
    "id",
    "resource_pool.display_name",
    "roles[0].resource_spec[0].description",
    "ownership",
    "state",
    "state_message",
    "root_mapping",
    "create_time",
    "start_time",
    "suspend_time",
    "update_time",
    "complete_time",
    "delete_time",
};

static void test_output_only_warnings(void **state)
{
    struct jobspec job;
    struct findings fs = FINDINGS_INIT;
    size_t n = sizeof output_only_paths / sizeof output_only_paths[0];
    baseline(&job);
    set_output_only(&job);
    validate_job(&job, NULL, &fs);
    assert_int_equal(fs.count, n);
    assert_int_equal(findings_count(&fs, SEVERITY_WARNING), n);
    for (size_t i = 0; i < n; i++) {
        const struct finding *f =
            find(&fs, SEVERITY_WARNING, output_only_paths[i], "output-only; ignored on submit");
        if (f == NULL)
            fail_msg("no warning on %s", output_only_paths[i]);
        assert_int_equal(form_section_of(f->path), SECTION_REVIEW);
    }
    findings_free(&fs);
    jobspec_free(&job);
}

static void test_output_only_errors_for_submit(void **state)
{
    struct jobspec job;
    struct findings fs = FINDINGS_INIT;
    struct validate_options opt = {0};
    size_t n = sizeof output_only_paths / sizeof output_only_paths[0];
    opt.for_submit = true;
    baseline(&job);
    set_output_only(&job);
    validate_job(&job, &opt, &fs);
    assert_int_equal(fs.count, n);
    assert_int_equal(findings_count(&fs, SEVERITY_ERROR), n);
    for (size_t i = 0; i < n; i++)
        if (find(&fs, SEVERITY_ERROR, output_only_paths[i], "output-only") == NULL)
            fail_msg("no error on %s", output_only_paths[i]);
    findings_free(&fs);
    jobspec_free(&job);
}

/* ---- sections and helpers ---- */

static void test_form_section_of(void **state)
{
    static const struct {
        const char *path;
        enum form_section section;
    } cases[] = {
        {"workspace_name", SECTION_BASICS},
        {"display_name", SECTION_BASICS},
        {"name", SECTION_BASICS},
        {"resource_pool.name", SECTION_BASICS},
        {"resource_pool.zone", SECTION_BASICS},
        {"resource_pool.vpc_id", SECTION_BASICS},
        {"resource_pool", SECTION_BASICS},
        {"scheduling.quota_type", SECTION_BASICS},
        {"scheduling.priority", SECTION_RESOURCES},
        {"scheduling.preemptible", SECTION_RESOURCES},
        {"scheduling.scoring_strategy.type", SECTION_RESOURCES},
        {"framework", SECTION_RESOURCES},
        {"roles", SECTION_RESOURCES},
        {"roles[1]", SECTION_RESOURCES},
        {"roles[0].name", SECTION_RESOURCES},
        {"roles[0].total_replicas", SECTION_RESOURCES},
        {"roles[0].resource_spec", SECTION_RESOURCES},
        {"roles[0].resource_spec[0].name", SECTION_RESOURCES},
        {"roles[0].resource_spec[1]", SECTION_RESOURCES},
        {"roles[0].resource_spec[0].replicas", SECTION_RESOURCES},
        {"roles[0].image_path", SECTION_IMAGE},
        {"roles[0].startup_script", SECTION_IMAGE},
        {"fault_tolerance", SECTION_FAULT_TOLERANCE},
        {"fault_tolerance.backoff_limit", SECTION_FAULT_TOLERANCE},
        {"fault_tolerance.rules[2].exit_codes", SECTION_FAULT_TOLERANCE},
        {"mount", SECTION_DATA},
        {"mount[1].mount_path", SECTION_DATA},
        {"env", SECTION_ENVIRONMENT},
        {"env[3].key", SECTION_ENVIRONMENT},
        {"ssh.config_mount_path", SECTION_ENVIRONMENT},
        {"tensorboard.log_path", SECTION_TENSORBOARD},
        {"uid", SECTION_REVIEW},
        {"state", SECTION_REVIEW},
        {"", SECTION_REVIEW},
        {"names", SECTION_REVIEW},
        {"environment", SECTION_REVIEW},
        {"mounts", SECTION_REVIEW},
        {"resource_pool.display_name", SECTION_REVIEW},
        {"roles[0].resource_spec[0].description", SECTION_REVIEW},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (form_section_of(cases[i].path) != cases[i].section)
            fail_msg("%s: section %d, want %d", cases[i].path, form_section_of(cases[i].path),
                     cases[i].section);
}

static void test_form_section_title(void **state)
{
    assert_string_equal(form_section_title(SECTION_BASICS), "Basics");
    assert_string_equal(form_section_title(SECTION_RESOURCES), "Resources");
    assert_string_equal(form_section_title(SECTION_IMAGE), "Image");
    assert_string_equal(form_section_title(SECTION_FAULT_TOLERANCE), "Fault tolerance");
    assert_string_equal(form_section_title(SECTION_DATA), "Data");
    assert_string_equal(form_section_title(SECTION_ENVIRONMENT), "Environment");
    assert_string_equal(form_section_title(SECTION_TENSORBOARD), "TensorBoard");
    assert_string_equal(form_section_title(SECTION_REVIEW), "Review");
}

/* Every finding of a job with many errors lands in the section its field is shown in. */
static void test_findings_map_to_sections(void **state)
{
    struct jobspec job;
    struct findings fs = FINDINGS_INIT;
    baseline(&job);
    set(&job.name, "Bad");
    job.scheduling.quota_type = QUOTA_TYPE_SPOT;
    set(&job.resource_pool.zone, NULL);
    job.framework = FRAMEWORK_UNSPECIFIED;
    set(&job.roles[0].image_path, "Bad");
    job.fault_tolerance.backoff_limit = 500;
    set(&job.mount[0].mount_path, "/etc");
    add_env(&job, "RANK", "1");
    validate_job(&job, NULL, &fs);
    static const struct {
        const char *path;
        enum form_section section;
    } want[] = {
        {"name", SECTION_BASICS},
        {"resource_pool.zone", SECTION_BASICS},
        {"framework", SECTION_RESOURCES},
        {"roles[0].image_path", SECTION_IMAGE},
        {"fault_tolerance.backoff_limit", SECTION_FAULT_TOLERANCE},
        {"mount[0].mount_path", SECTION_DATA},
        {"env[2].key", SECTION_ENVIRONMENT},
        {"tensorboard.log_path", SECTION_TENSORBOARD},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const struct finding *f = find(&fs, SEVERITY_ERROR, want[i].path, NULL);
        if (f == NULL) /* backoff_limit beyond the console's range, offline: a warning */
            f = find(&fs, SEVERITY_WARNING, want[i].path, NULL);
        if (f == NULL) {
            dump(&fs);
            fail_msg("no error on %s", want[i].path);
        }
        assert_int_equal(form_section_of(f->path), want[i].section);
    }
    /* Findings come in form order. */
    for (size_t i = 1; i < fs.count; i++)
        assert_true(form_section_of(fs.items[i - 1].path) <= form_section_of(fs.items[i].path));
    findings_free(&fs);
    jobspec_free(&job);
}

static void test_single_field_helpers(void **state)
{
    char buf[256];
    assert_null(validate_job_name(NULL, buf, sizeof buf));
    assert_null(validate_job_name("pt-a1b2c3d4", buf, sizeof buf));
    assert_non_null(validate_job_name("", buf, sizeof buf));
    assert_non_null(validate_job_name("pt_1", buf, sizeof buf));
    assert_non_null(validate_display_name(NULL, buf, sizeof buf));
    assert_non_null(validate_display_name("a b", buf, sizeof buf));
    assert_null(validate_image_path("ubuntu:22.04", buf, sizeof buf));
    assert_non_null(validate_image_path("Ubuntu", buf, sizeof buf));
    assert_non_null(validate_env_name("RANK", buf, sizeof buf));
    assert_null(validate_env_name("NCCL_DEBUG", buf, sizeof buf));
    assert_non_null(validate_mount_path("/sys/fs", buf, sizeof buf));
    assert_null(validate_mount_path("/mnt/afs", buf, sizeof buf));
    /* A small buffer truncates, never overflows. */
    char tiny[8];
    const char *msg = validate_mount_path("/usr/share", tiny, sizeof tiny);
    assert_non_null(msg);
    assert_true(strlen(msg) < sizeof tiny);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_baseline_offline),
        cmocka_unit_test(test_baseline_with_catalog),
        cmocka_unit_test(test_message_style),
        cmocka_unit_test(test_workspace_required),
        cmocka_unit_test(test_workspace_from_options),
        cmocka_unit_test(test_workspace_not_yours),
        cmocka_unit_test(test_display_name_valid),
        cmocka_unit_test(test_display_name_space),
        cmocka_unit_test(test_display_name_bad_char_after_cjk),
        cmocka_unit_test(test_display_name_length),
        cmocka_unit_test(test_display_name_first_char),
        cmocka_unit_test(test_display_name_required),
        cmocka_unit_test(test_display_name_invalid_utf8),
        cmocka_unit_test(test_name_absent_is_fine),
        cmocka_unit_test(test_name_empty),
        cmocka_unit_test(test_name_63_ok_64_rejected),
        cmocka_unit_test(test_name_one_letter_ok),
        cmocka_unit_test(test_name_trailing_dash),
        cmocka_unit_test(test_name_leading_digit),
        cmocka_unit_test(test_name_uppercase),
        cmocka_unit_test(test_name_taken),
        cmocka_unit_test(test_pool_required),
        cmocka_unit_test(test_pool_section_absent),
        cmocka_unit_test(test_offline_spot_needs_zone_and_vpc),
        cmocka_unit_test(test_offline_reserved_needs_no_zone),
        cmocka_unit_test(test_pool_not_bound),
        cmocka_unit_test(test_pool_and_spec_unknown),
        cmocka_unit_test(test_idle_pool_needs_zone_and_vpc),
        cmocka_unit_test(test_idle_pool_quota_type),
        cmocka_unit_test(test_standard_pool_with_spot),
        cmocka_unit_test(test_public_pool_needs_zone_and_vpc),
        cmocka_unit_test(test_zone_not_in_pool),
        cmocka_unit_test(test_vpc_in_other_region),
        cmocka_unit_test(test_dedicated_pool_zone_ignored),
        cmocka_unit_test(test_priority_owner_and_member),
        cmocka_unit_test(test_priority_on_idle_job),
        cmocka_unit_test(test_preemptible),
        cmocka_unit_test(test_framework),
        cmocka_unit_test(test_roles_none),
        cmocka_unit_test(test_roles_two),
        cmocka_unit_test(test_role_name),
        cmocka_unit_test(test_total_replicas),
        cmocka_unit_test(test_replicas_both_ways),
        cmocka_unit_test(test_replicas_over_pool_max),
        cmocka_unit_test(test_resource_spec_count),
        cmocka_unit_test(test_resource_spec_name),
        cmocka_unit_test(test_resource_spec_not_in_pool),
        cmocka_unit_test(test_image_valid),
        cmocka_unit_test(test_image_uppercase),
        cmocka_unit_test(test_image_empty_tag),
        cmocka_unit_test(test_image_two_colons),
        cmocka_unit_test(test_image_long_tag),
        cmocka_unit_test(test_image_bad_tag_start),
        cmocka_unit_test(test_image_short_digest),
        cmocka_unit_test(test_image_empty),
        cmocka_unit_test(test_image_empty_component),
        cmocka_unit_test(test_image_bad_separators),
        cmocka_unit_test(test_image_bad_registry),
        cmocka_unit_test(test_imageref_parts),
        cmocka_unit_test(test_startup_script),
        cmocka_unit_test(test_backoff_limit),
        cmocka_unit_test(test_ft_absent_not_checked),
        cmocka_unit_test(test_rules_at_most_20),
        cmocka_unit_test(test_rule_bad_exit_codes),
        cmocka_unit_test(test_rule_action_required),
        cmocka_unit_test(test_rule_any_code),
        cmocka_unit_test(test_rules_with_backoff_zero),
        cmocka_unit_test(test_rule_shadowed),
        cmocka_unit_test(test_rule_never_matches),
        cmocka_unit_test(test_rule_after_any_code_never_matches),
        cmocka_unit_test(test_shadowing_skips_invalid_rules),
        cmocka_unit_test(test_no_mounts),
        cmocka_unit_test(test_mount_id_required),
        cmocka_unit_test(test_mount_type_default),
        cmocka_unit_test(test_mount_subdir),
        cmocka_unit_test(test_mount_path_required),
        cmocka_unit_test(test_mount_path_root),
        cmocka_unit_test(test_mount_path_relative),
        cmocka_unit_test(test_mount_path_dotdot),
        cmocka_unit_test(test_paths_invisible_format),
        cmocka_unit_test(test_mount_path_system_dirs),
        cmocka_unit_test(test_mount_path_near_system_dirs_ok),
        cmocka_unit_test(test_mount_path_duplicates),
        cmocka_unit_test(test_mount_volume_catalog),
        cmocka_unit_test(test_env_reserved_names),
        cmocka_unit_test(test_env_reserved_prefixes),
        cmocka_unit_test(test_env_near_reserved_ok),
        cmocka_unit_test(test_env_bad_name),
        cmocka_unit_test(test_env_name_length),
        cmocka_unit_test(test_env_at_most_20),
        cmocka_unit_test(test_env_duplicate),
        cmocka_unit_test(test_env_value_size),
        cmocka_unit_test(test_ssh_mpi),
        cmocka_unit_test(test_ssh_config_mount_path),
        cmocka_unit_test(test_placed_paths_one_rule),
        cmocka_unit_test(test_mount_path_tmp_ok),
        cmocka_unit_test(test_mount_paths_nested),
        cmocka_unit_test(test_ssh_path_conflicts),
        cmocka_unit_test(test_tensorboard_on_mount),
        cmocka_unit_test(test_tensorboard_not_on_mount),
        cmocka_unit_test(test_tensorboard_no_mounts),
        cmocka_unit_test(test_tensorboard_log_path),
        cmocka_unit_test(test_output_only_warnings),
        cmocka_unit_test(test_output_only_errors_for_submit),
        cmocka_unit_test(test_form_section_of),
        cmocka_unit_test(test_form_section_title),
        cmocka_unit_test(test_findings_map_to_sections),
        cmocka_unit_test(test_single_field_helpers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
