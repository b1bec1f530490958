/*
 * test_wizard: the wizard's binding between fields and the job
 * (tui/wizard_fields.c), driven by keys as a person types, without a
 * terminal. What is typed into a field, or read from a file, reaches the
 * job as it is — out of range or not — and validation says what is wrong
 * with it; text no number field can hold is an error under its field, never
 * a field silently left out (issue 11, defects 2 and 3).
 */
// clang-format off
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
// clang-format on
#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/catalog.h"
#include "api/formtab.h"
#include "api/jobspec.h"
#include "api/jobspec_defaults.h"
#include "api/jobspec_json.h"
#include "api/validate.h"
#include "tui/keymap.h"
#include "tui/wizard.h"
#include "tui/wizard_priv.h"
#include "util/xalloc.h"
#include "widgets/textfield.h"

static char **one(const char *a, size_t *n)
{
    char **v = xcalloc(1, sizeof *v);
    v[0] = xstrdup(a);
    *n = 1;
    return v;
}

/* trainjobd's default catalog, its limits stated as trainjobd states them. */
static void make_catalog(struct catalog *cat)
{
    memset(cat, 0, sizeof *cat);
    cat->workspace_count = 1;
    cat->workspaces = xcalloc(1, sizeof *cat->workspaces);
    cat->workspaces[0].name = xstrdup("default");
    cat->workspaces[0].role = MEMBER_OWNER;
    cat->workspaces[0].pools = xcalloc(2, sizeof(char *));
    cat->workspaces[0].pools[0] = xstrdup("local");
    cat->workspaces[0].pools[1] = xstrdup("local-idle");
    cat->workspaces[0].pool_count = 2;
    cat->pool_count = 2;
    cat->pools = xcalloc(2, sizeof *cat->pools);
    for (size_t i = 0; i < 2; i++) {
        struct catalog_pool *p = &cat->pools[i];
        p->name = xstrdup(i ? "local-idle" : "local");
        p->type = i ? POOL_IDLE : POOL_DEDICATED;
        if (i)
            p->zones = one("local-1z", &p->zone_count);
        p->spec_count = 1;
        p->specs = xcalloc(1, sizeof *p->specs);
        p->specs[0].name = xstrdup("cpu-1");
        p->specs[0].vcpus = 1;
        p->specs[0].memory_mib = 1024;
        p->specs[0].max_replicas = 8;
    }
    cat->image_count = 1;
    cat->images = xcalloc(1, sizeof *cat->images);
    cat->images[0].path = xstrdup("local/host");
    cat->limits = (struct catalog_limits){.present = true,
                                          .has_min_backoff_limit = true,
                                          .min_backoff_limit = -1,
                                          .has_max_backoff_limit = true,
                                          .max_backoff_limit = 99};
}

struct fixture {
    struct catalog cat;
    struct keymap *km;
    struct wizard *wz;
};

static int setup(void **state)
{
    struct fixture *fx = xcalloc(1, sizeof *fx);
    make_catalog(&fx->cat);
    fx->km = keymap_new_default();
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *fx = *state;
    wizard_free(fx->wz);
    keymap_free(fx->km);
    catalog_free(&fx->cat);
    free(fx);
    return 0;
}

static void key(struct wizard *wz, int code, bool function)
{
    struct widget_key k = {code, function, false};
    wizard_key(wz, &k);
}

/* Types text into the focused field after clearing it (Ctrl-U), then validates. */
static void retype(struct wizard *wz, const char *text)
{
    key(wz, 'U' - '@', false);
    for (const char *p = text; *p; p++)
        key(wz, (unsigned char)*p, false);
    wizard_validate(wz);
}

/* Max restarts: the first field of Fault tolerance (three sections on with PgDn). */
static void to_max_restarts(struct wizard *wz)
{
    for (int i = 0; i < 3; i++)
        key(wz, KEY_NPAGE, true);
}

/* Replicas: Resources (PgDn), then Priority → Framework → Replicas (Preemptible is hidden). */
static void to_replicas(struct wizard *wz)
{
    key(wz, KEY_NPAGE, true);
    key(wz, '\t', false);
    key(wz, '\t', false);
}

static struct jobspec ok_job(void)
{
    struct jobspec j;
    jobspec_init(&j);
    j.workspace_name = xstrdup("default");
    j.display_name = xstrdup("t1");
    j.resource_pool.present = true;
    j.resource_pool.name = xstrdup("local");
    j.framework = FRAMEWORK_PYTORCH_DDP;
    struct role *r = jobspec_add_role(&j);
    r->has_total_replicas = true;
    r->total_replicas = 1;
    role_add_spec(r)->name = xstrdup("cpu-1");
    r->image_path = xstrdup("local/host");
    r->startup_script = xstrdup("true");
    return j;
}

/* Every value typed into max restarts reaches the job; out of range is an error, not {}. */
static void test_backoff_typed_is_kept(void **state)
{
    struct fixture *fx = *state;
    struct jobspec j = ok_job();
    fx->wz = wizard_new(&fx->cat, &j, NULL, fx->km);
    jobspec_free(&j);
    assert_int_equal(wizard_error_count(fx->wz), 0);
    to_max_restarts(fx->wz);
    static const struct {
        const char *typed;
        int32_t want;
        bool error;
    } cases[] = {{"100", 100, true}, {"150", 150, true}, {"-2", -2, true},
                 {"99", 99, false},  {"-1", -1, false},  {"0", 0, false}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        retype(fx->wz, cases[i].typed);
        const struct jobspec *got = wizard_job(fx->wz);
        assert_true(got->fault_tolerance.has_backoff_limit);
        assert_int_equal(got->fault_tolerance.backoff_limit, cases[i].want);
        assert_int_equal(wizard_error_count(fx->wz) > 0, cases[i].error);
    }
    /* Text that spells no number: an error under the field, not a field left out unsaid. */
    retype(fx->wz, "-");
    assert_false(wizard_job(fx->wz)->fault_tolerance.has_backoff_limit);
    assert_int_equal(wizard_error_count(fx->wz), 1);
    retype(fx->wz, "");
    assert_int_equal(wizard_error_count(fx->wz), 1);
    retype(fx->wz, "99999999999"); /* a long, but no int32: never truncated */
    assert_false(wizard_job(fx->wz)->fault_tolerance.has_backoff_limit);
    assert_int_equal(wizard_error_count(fx->wz), 1);
    retype(fx->wz, "3");
    assert_int_equal(wizard_error_count(fx->wz), 0);
}

/* The same for replicas: 0 and 9 (over the spec's 8) are kept and are errors. */
static void test_replicas_typed_is_kept(void **state)
{
    struct fixture *fx = *state;
    struct jobspec j = ok_job();
    fx->wz = wizard_new(&fx->cat, &j, NULL, fx->km);
    jobspec_free(&j);
    to_replicas(fx->wz);
    retype(fx->wz, "0");
    const struct role *r = jobspec_worker(wizard_job(fx->wz));
    assert_true(r->has_total_replicas);
    assert_int_equal(r->total_replicas, 0);
    assert_true(wizard_error_count(fx->wz) > 0);
    retype(fx->wz, "5000"); /* over the field's range too: still the job's value */
    r = jobspec_worker(wizard_job(fx->wz));
    assert_int_equal(r->total_replicas, 5000);
    assert_true(wizard_error_count(fx->wz) > 0);
    retype(fx->wz, "");
    r = jobspec_worker(wizard_job(fx->wz));
    assert_false(r->has_total_replicas);
    assert_true(wizard_error_count(fx->wz) > 0);
    retype(fx->wz, "2");
    assert_int_equal(wizard_error_count(fx->wz), 0);
}

/* A file's values are shown as the file says them: never a default in their place. */
static void test_file_values_kept(void **state)
{
    struct fixture *fx = *state;
    struct jobspec j = ok_job();
    free(j.resource_pool.name);
    j.resource_pool.name = xstrdup("nopool");
    struct role *r = &j.roles[0];
    free(r->resource_spec[0].name);
    r->resource_spec[0].name = xstrdup("gpu-999");
    r->total_replicas = 0;
    j.framework = FRAMEWORK_PYTORCH;
    j.fault_tolerance.present = true;
    j.fault_tolerance.has_backoff_limit = true;
    j.fault_tolerance.backoff_limit = 150;
    fx->wz = wizard_new(&fx->cat, &j, NULL, fx->km);
    jobspec_free(&j);
    const struct jobspec *got = wizard_job(fx->wz);
    assert_string_equal(got->resource_pool.name, "nopool");
    assert_string_equal(jobspec_worker(got)->resource_spec[0].name, "gpu-999");
    assert_int_equal(jobspec_worker(got)->total_replicas, 0);
    assert_int_equal(got->framework, FRAMEWORK_PYTORCH);
    assert_int_equal(got->fault_tolerance.backoff_limit, 150);
    /* unknown pool, replicas 0, backoff over 99 (the spec is only checked in a known pool) */
    assert_true(wizard_error_count(fx->wz) >= 3);
}

/* The wizard derives quota type and preemptible as render and trainjobd do (jobspec_defaults). */
static void test_defaults_agree(void **state)
{
    struct fixture *fx = *state;
    struct jobspec j = ok_job();
    free(j.resource_pool.name);
    j.resource_pool.name = xstrdup("local-idle");
    j.resource_pool.zone = xstrdup("local-1z");
    fx->wz = wizard_new(&fx->cat, &j, NULL, fx->km);
    const struct jobspec *got = wizard_job(fx->wz);
    struct jobspec filled;
    jobspec_init(&filled);
    jobspec_copy(&filled, &j);
    jobspec_fill_defaults(&filled, &fx->cat);
    assert_int_equal(got->scheduling.quota_type, QUOTA_TYPE_SPOT);
    assert_int_equal(got->scheduling.quota_type, filled.scheduling.quota_type);
    assert_int_equal(got->scheduling.has_preemptible, filled.scheduling.has_preemptible);
    assert_int_equal(got->scheduling.preemptible, filled.scheduling.preemptible);
    jobspec_free(&filled);
    jobspec_free(&j);
    /* offline: not guessed */
    assert_int_equal(jobspec_pool_quota_type(NULL, "local-idle"), QUOTA_TYPE_UNSPECIFIED);
    assert_int_equal(jobspec_pool_quota_type(&fx->cat, "local"), QUOTA_TYPE_RESERVED);
}

/* The catalog api/slurm_catalog.c builds: partitions as pools (an idle one), no zones or VPCs. */
/* Whether the field of path is hidden now. */
static bool row_hidden(const struct wizard *wz, const char *path)
{
    for (size_t i = 0; i < wz->field_count; i++)
        if (strcmp(wz->fields[i].row->path, path) == 0)
            return form_hidden(wz->forms[wz->fields[i].row->section], wz->fields[i].entry);
    fail_msg("no field for %s", path);
    return true;
}

static void make_slurm_catalog(struct catalog *cat)
{
    make_catalog(cat);
    struct catalog_pool *idle = &cat->pools[1];
    for (size_t i = 0; i < idle->zone_count; i++)
        free(idle->zones[i]);
    free(idle->zones);
    idle->zones = NULL;
    idle->zone_count = 0;
    cat->unknown = CATALOG_UNKNOWN_VOLUMES;
    cat->zoneless = true;
}

/* Zone and VPC of an idle pool: asked on trainjobd, neither shown, checked nor written on Slurm. */
static void test_zone_and_vpc_only_where_the_backend_has_them(void **state)
{
    struct fixture *fx = *state;
    struct jobspec j = ok_job();
    free(j.resource_pool.name);
    j.resource_pool.name = xstrdup("local-idle");
    /* trainjobd: the idle pool's zone and VPC are fields, and required */
    fx->wz = wizard_new(&fx->cat, &j, NULL, fx->km);
    assert_false(row_hidden(fx->wz, "resource_pool.zone"));
    assert_false(row_hidden(fx->wz, "resource_pool.vpc_id"));
    assert_string_equal(wizard_job(fx->wz)->resource_pool.zone, "local-1z");
    wizard_validate(fx->wz);
    assert_true(wizard_error_count(fx->wz) > 0); /* no VPC in this catalog's list */
    wizard_free(fx->wz);
    fx->wz = NULL;

    /* Slurm: no zone or VPC field, none in the job, no error for their absence */
    struct catalog slurm;
    make_slurm_catalog(&slurm);
    fx->wz = wizard_new(&slurm, &j, NULL, fx->km);
    assert_true(row_hidden(fx->wz, "resource_pool.zone"));
    assert_true(row_hidden(fx->wz, "resource_pool.vpc_id"));
    wizard_validate(fx->wz);
    const struct jobspec *got = wizard_job(fx->wz);
    assert_null(got->resource_pool.zone);
    assert_null(got->resource_pool.vpc_id);
    assert_int_equal(got->scheduling.quota_type, QUOTA_TYPE_SPOT); /* still an idle pool */
    assert_int_equal(wizard_error_count(fx->wz), 0);

    /* A file's zone and VPC on Slurm: not required, and said to be ignored, never unsaid */
    j.resource_pool.zone = xstrdup("local-1z");
    j.resource_pool.vpc_id = xstrdup("vpc-1");
    j.scheduling.present = true;
    j.scheduling.quota_type = QUOTA_TYPE_SPOT;
    struct findings fs = FINDINGS_INIT;
    struct validate_options opt = {.catalog = &slurm};
    validate_job(&j, &opt, &fs);
    size_t ignored = 0, errors = 0;
    for (size_t i = 0; i < fs.count; i++) {
        if (strncmp(fs.items[i].path, "resource_pool.", 14) == 0 &&
            strstr(fs.items[i].message, "no zones or VPCs"))
            ignored += fs.items[i].severity == SEVERITY_WARNING;
        errors += fs.items[i].severity == SEVERITY_ERROR;
    }
    assert_int_equal(ignored, 2);
    assert_int_equal(errors, 0);
    findings_free(&fs);
    jobspec_free(&j);
    wizard_free(fx->wz);
    fx->wz = NULL;
    catalog_free(&slurm);
}

/*
 * A path holding a bidi control (U+202E) or a zero-width space: the wizard's
 * validation (the same rules as validate) puts the error under the field
 * that holds it, naming the code point.
 */
static void test_invisible_path_characters_shown_inline(void **state)
{
    struct fixture *fx = *state;
    struct jobspec j = ok_job();
    struct mount *m = jobspec_add_mount(&j);
    m->id = xstrdup("scratch");
    m->subdir = xstrdup("/users/\u200balice");
    m->mount_path = xstrdup("/mnt/\u202efsa");
    fx->wz = wizard_new(&fx->cat, &j, NULL, fx->km);
    jobspec_free(&j);
    wizard_validate(fx->wz);
    const struct findings *fs = &fx->wz->findings;
    bool path = false, subdir = false;
    for (size_t i = 0; i < fs->count; i++) {
        const struct finding *f = &fs->items[i];
        size_t row = 0, field = 0;
        if (f->severity != SEVERITY_ERROR ||
            wz_list_claiming(fx->wz, f->path, &row, &field) == NULL || row != 0)
            continue;
        path =
            path || (strcmp(f->path, "mount[0].mount_path") == 0 && strstr(f->message, "U+202E"));
        subdir =
            subdir || (strcmp(f->path, "mount[0].subdir") == 0 && strstr(f->message, "U+200B"));
    }
    assert_true(path);
    assert_true(subdir);
}

/* The value at a field path ("roles[0].image_path") in doc, or NULL. */
static json_t *json_at(json_t *doc, const char *path)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", path);
    json_t *v = doc;
    for (char *save = NULL, *part = strtok_r(buf, ".", &save); v && part;
         part = strtok_r(NULL, ".", &save)) {
        char *br = strchr(part, '[');
        if (br)
            *br = '\0';
        v = json_object_get(v, part);
        if (br)
            v = json_array_get(v, strtoul(br + 1, NULL, 10));
    }
    return v;
}

/*
 * Every row of the form table a person types into, reached with keys only
 * (PgDn to its section, Tab to it): what is typed is in the job, at the
 * row's path. A toggle's Space changes the value at its path.
 */
static void test_every_row_reaches_its_path(void **state)
{
    struct fixture *fx = *state;
    size_t n, walked = 0;
    const struct formtab_row *rows = formtab_rows(&n);
    for (size_t i = 0; i < n; i++) {
        const struct formtab_row *row = &rows[i];
        if (row->read_only || row->when != FORMTAB_ALWAYS ||
            (row->kind != FORMTAB_TEXT && row->kind != FORMTAB_TEXTAREA &&
             row->kind != FORMTAB_NUMBER && row->kind != FORMTAB_TOGGLE))
            continue;
        struct jobspec j = ok_job();
        wizard_free(fx->wz);
        fx->wz = wizard_new(&fx->cat, &j, NULL, fx->km);
        jobspec_free(&j);
        for (int s = 0; s < (int)row->section; s++)
            key(fx->wz, KEY_NPAGE, true);
        for (int t = 0; t < 20 && !(wizard_focused_path(fx->wz) &&
                                    strcmp(wizard_focused_path(fx->wz), row->path) == 0);
             t++)
            key(fx->wz, '\t', false);
        assert_non_null(wizard_focused_path(fx->wz));
        assert_string_equal(wizard_focused_path(fx->wz), row->path);
        json_t *before = jobspec_to_json(wizard_job(fx->wz));
        json_t *was = json_deep_copy(json_at(before, row->path));
        const char *typed = row->kind == FORMTAB_NUMBER ? "7" : "typed-7";
        if (row->kind == FORMTAB_TOGGLE)
            key(fx->wz, ' ', false);
        else
            retype(fx->wz, typed);
        json_t *after = jobspec_to_json(wizard_job(fx->wz));
        json_t *v = json_at(after, row->path);
        if (row->kind == FORMTAB_NUMBER)
            assert_int_equal(json_integer_value(v), 7);
        else if (row->kind == FORMTAB_TOGGLE)
            assert_false(json_equal(was, v) || (!was && !v));
        else if (row->kind == FORMTAB_TEXTAREA) /* typed at the cursor, in the script there was */
            assert_non_null(strstr(json_string_value(v), typed));
        else
            assert_string_equal(json_string_value(v), typed);
        json_decref(was);
        json_decref(before);
        json_decref(after);
        walked++;
    }
    assert_true(walked >= 8);
}

/* Moves the focus, with keys only, to the field of row (forward: PgDn, then Tab). */
static void go_to_row(struct wizard *wz, const struct formtab_row *row)
{
    const struct wz_field *fd = NULL;
    for (size_t i = 0; i < wz->field_count; i++)
        if (wz->fields[i].row == row)
            fd = &wz->fields[i];
    assert_non_null(fd);
    while (wz->cur < row->section)
        key(wz, KEY_NPAGE, true);
    for (int t = 0; t < 30 && form_focused(wz->forms[fd->row->section]) != fd->entry; t++)
        key(wz, '\t', false);
    assert_int_equal(form_focused(wz->forms[fd->row->section]), fd->entry);
    assert_string_equal(wizard_focused_path(wz), row->path);
}

/* Chooses by keys the first option of the focused choice matching filter: Enter, type, Enter. */
static void choose(struct wizard *wz, const char *filter)
{
    key(wz, '\n', false);
    for (const char *p = filter; *p; p++)
        key(wz, (unsigned char)*p, false);
    key(wz, '\n', false);
    wizard_validate(wz);
}

/*
 * The choice rows and the rows shown only sometimes, walked with keys only:
 * a conditional row is hidden until its condition is made true by keys (an
 * idle pool, SSH on, TensorBoard on), then shown; a choice picked by typing
 * its filter is in the job at the row's path. With the test above, every
 * row of the table but the three lists (the test below walks them) is
 * walked.
 */
static void test_every_choice_and_conditional_row(void **state)
{
    struct fixture *fx = *state;
    struct catalog *cat = &fx->cat;
    /* a zone with a region and a VPC there, a second spec, a second image */
    cat->zones = xcalloc(1, sizeof *cat->zones);
    cat->zones[0] = (struct catalog_zone){xstrdup("local-1z"), xstrdup("r1")};
    cat->zone_count = 1;
    cat->vpcs = xcalloc(1, sizeof *cat->vpcs);
    cat->vpcs[0] = (struct catalog_vpc){xstrdup("vpc-1"), xstrdup("r1")};
    cat->vpc_count = 1;
    struct catalog_pool *local = &cat->pools[0];
    local->specs = xrealloc(local->specs, 2 * sizeof *local->specs);
    local->specs[1] = local->specs[0];
    local->specs[1].name = xstrdup("cpu-2");
    local->spec_count = 2;
    cat->images = xrealloc(cat->images, 2 * sizeof *cat->images);
    memset(&cat->images[1], 0, sizeof cat->images[1]);
    cat->images[1].path = xstrdup("reg.example/a:1");
    cat->image_count = 2;

    static const struct {
        const char *label, *condition, *filter, *stored_at, *want;
    } walk[] = {
        {"Workspace", NULL, "default", NULL, "default"},
        {"Resource pool", NULL, "idle", NULL, "local-idle"},
        {"Zone", "resource_pool.name", "1z", NULL, "local-1z"},
        {"VPC", "resource_pool.name", "vpc", NULL, "vpc-1"},
        {"Priority", NULL, "HIGH", NULL, "HIGH"},
        {"Preemptible", "resource_pool.name", NULL, NULL, NULL},
        {"Framework", NULL, "MPI", NULL, "MPI"},
        {"Resource spec", NULL, "cpu-2", NULL, "cpu-2"},
        {"From catalog", NULL, "reg.ex", "roles[0].image_path", "reg.example/a:1"},
        {"SSH config", "ssh.auto_key_setup", NULL, NULL, NULL},
        {"Log path", "tensorboard", "/mnt/b", NULL, "/mnt/b"},
        {"Directory", "tensorboard", "tb/run1", NULL, "/mnt/a/tb/run1"},
    };
    size_t n, walked = 0;
    const struct formtab_row *rows = formtab_rows(&n);
    for (size_t i = 0; i < n; i++) {
        const struct formtab_row *row = &rows[i];
        if (row->kind != FORMTAB_CHOICE && row->when == FORMTAB_ALWAYS)
            continue; /* the test above walks them */
        size_t w = 0;
        while (w < sizeof walk / sizeof walk[0] && strcmp(walk[w].label, row->label) != 0)
            w++;
        assert_true(w < sizeof walk / sizeof walk[0]); /* a new row: say here how to walk it */
        struct jobspec j = ok_job();
        const char *paths[] = {"/mnt/a", "/mnt/b"};
        for (size_t m = 0; m < 2; m++) {
            struct mount *mt = jobspec_add_mount(&j);
            mt->type = MOUNT_TYPE_PV_AFS;
            mt->id = xstrdup("vol-1");
            mt->mount_path = xstrdup(paths[m]);
        }
        wizard_free(fx->wz);
        fx->wz = wizard_new(cat, &j, NULL, fx->km);
        jobspec_free(&j);
        if (walk[w].condition) { /* hidden until its condition is made true, by keys */
            assert_true(row_hidden(fx->wz, row->path));
            go_to_row(fx->wz, formtab_row(walk[w].condition));
            if (strcmp(walk[w].condition, "resource_pool.name") == 0)
                choose(fx->wz, "idle");
            else
                key(fx->wz, ' ', false);
            wizard_validate(fx->wz);
        }
        assert_false(row_hidden(fx->wz, row->path));
        const char *at = walk[w].stored_at ? walk[w].stored_at : row->path;
        json_t *before = jobspec_to_json(wizard_job(fx->wz));
        json_t *was = json_deep_copy(json_at(before, at));
        if (row->read_only) { /* shown, not edited: the platform's path (dim), unset in the job */
            assert_string_equal(row->placeholder, JOBSPEC_DEFAULT_SSH_PATH);
            assert_null(was);
            key(fx->wz, ' ', false); /* no key reaches it */
            json_t *after = jobspec_to_json(wizard_job(fx->wz));
            assert_null(json_at(after, at));
            json_decref(after);
        } else {
            go_to_row(fx->wz, row);
            if (row->kind == FORMTAB_TOGGLE)
                key(fx->wz, ' ', false);
            else if (row->kind == FORMTAB_TEXT)
                retype(fx->wz, walk[w].filter);
            else
                choose(fx->wz, walk[w].filter);
            json_t *after = jobspec_to_json(wizard_job(fx->wz));
            json_t *v = json_at(after, at);
            if (walk[w].want && !json_is_string(v))
                fail_msg("%s: nothing at %s", row->path, at);
            if (walk[w].want)
                assert_string_equal(json_string_value(v), walk[w].want);
            else
                assert_false(json_equal(was, v) || (!was && !v));
            json_decref(after);
        }
        json_decref(was);
        json_decref(before);
        walked++;
    }
    assert_int_equal(walked, sizeof walk / sizeof walk[0]);
}

/*
 * A spec the newly chosen pool lacks stays chosen, with validation's finding
 * under it: it is not swapped for the pool's first spec while Resources shows
 * no error (a resumed draft went from cpu-1 to gpu-1 silently this way).
 */
/* A spec's memory is said in the unit it reaches: 1000 MiB is not "0 GiB". */
static void test_spec_memory_said_whole(void **state)
{
    struct fixture *fx = *state;
    fx->cat.pools[0].specs[0].memory_mib = 1000;
    fx->cat.pools[0].specs[0].devices = 1;
    fx->cat.pools[0].specs[0].device_type = xstrdup("A100");
    fx->wz = wizard_new(&fx->cat, NULL, NULL, fx->km);
    const char *d = select_detail(fx->wz->spec, 0);
    assert_non_null(d);
    if (strstr(d, "1000 MiB") == NULL)
        fail_msg("the spec reads '%s'; want 1000 MiB in it", d);
    assert_null(strstr(d, "0 GiB"));
}

static void test_spec_kept_when_pool_lacks_it(void **state)
{
    struct fixture *fx = *state;
    struct catalog_pool *idle = &fx->cat.pools[1];
    free(idle->specs[0].name);
    idle->specs[0].name = xstrdup("gpu-1");
    idle->specs[0].devices = 1;
    struct jobspec j = ok_job();
    fx->wz = wizard_new(&fx->cat, &j, NULL, fx->km);
    jobspec_free(&j);
    for (int t = 0; t < 3; t++) /* Workspace → Display name → Name → Resource pool */
        key(fx->wz, '\t', false);
    assert_string_equal(wizard_focused_path(fx->wz), "resource_pool.name");
    key(fx->wz, '\n', false); /* open, filter, pick */
    for (const char *p = "idle"; *p; p++)
        key(fx->wz, (unsigned char)*p, false);
    key(fx->wz, '\n', false);
    wizard_validate(fx->wz);
    const struct jobspec *out = wizard_job(fx->wz);
    assert_string_equal(out->resource_pool.name, "local-idle");
    assert_string_equal(out->roles[0].resource_spec[0].name, "cpu-1");
    assert_true(wizard_error_count(fx->wz) > 0);
}

/* A second idle pool (zone local-2z) and a second workspace that lists only the dedicated pool. */
static void add_idle_pool_and_workspace(struct catalog *cat)
{
    cat->pools = xrealloc(cat->pools, 3 * sizeof *cat->pools);
    struct catalog_pool *p = &cat->pools[2];
    memset(p, 0, sizeof *p);
    p->name = xstrdup("idle-2");
    p->type = POOL_IDLE;
    p->zones = one("local-2z", &p->zone_count);
    p->specs = xcalloc(1, sizeof *p->specs);
    p->specs[0].name = xstrdup("cpu-1");
    p->spec_count = 1;
    cat->pool_count = 3;
    struct catalog_workspace *ws = &cat->workspaces[0];
    ws->pools = xrealloc(ws->pools, 3 * sizeof *ws->pools);
    ws->pools[ws->pool_count++] = xstrdup("idle-2");
    cat->workspaces = xrealloc(cat->workspaces, 2 * sizeof *cat->workspaces);
    ws = &cat->workspaces[1];
    memset(ws, 0, sizeof *ws);
    ws->name = xstrdup("other");
    ws->role = MEMBER_OWNER;
    ws->pools = one("local", &ws->pool_count);
    cat->workspace_count = 2;
}

/*
 * A zone the newly chosen pool lacks, and a pool the newly chosen workspace
 * lacks, stay chosen with validation's finding under them: neither is
 * swapped for the first of the new list while the section shows no error.
 */
static void test_zone_and_pool_kept_when_catalog_lacks_them(void **state)
{
    struct fixture *fx = *state;
    add_idle_pool_and_workspace(&fx->cat);
    struct jobspec j = ok_job();
    free(j.resource_pool.name);
    j.resource_pool.name = xstrdup("local-idle");
    j.resource_pool.zone = xstrdup("local-1z");
    fx->wz = wizard_new(&fx->cat, &j, NULL, fx->km);
    jobspec_free(&j);
    go_to_row(fx->wz, formtab_row("resource_pool.name"));
    choose(fx->wz, "idle-2");
    const struct jobspec *out = wizard_job(fx->wz);
    assert_string_equal(out->resource_pool.name, "idle-2");
    assert_non_null(out->resource_pool.zone);
    assert_string_equal(out->resource_pool.zone, "local-1z");
    bool said = false;
    for (size_t i = 0; i < fx->wz->findings.count; i++)
        said = said || (strcmp(fx->wz->findings.items[i].path, "resource_pool.zone") == 0 &&
                        fx->wz->findings.items[i].severity == SEVERITY_ERROR);
    assert_true(said);

    for (int t = 0; t < 5 && strcmp(wizard_focused_path(fx->wz), "workspace_name") != 0; t++)
        key(fx->wz, KEY_BTAB, true); /* back up to the Workspace */
    choose(fx->wz, "other");
    out = wizard_job(fx->wz);
    assert_string_equal(out->workspace_name, "other");
    assert_string_equal(out->resource_pool.name, "idle-2");
    said = false;
    for (size_t i = 0; i < fx->wz->findings.count; i++)
        said = said || (strcmp(fx->wz->findings.items[i].path, "resource_pool.name") == 0 &&
                        fx->wz->findings.items[i].severity == SEVERITY_ERROR);
    assert_true(said);
}

/* Types text into the focused field, key by key (no clearing first). */
static void type(struct wizard *wz, const char *text)
{
    for (const char *p = text; *p; p++)
        key(wz, (unsigned char)*p, false);
}

/*
 * The three lists, walked with keys only: PgDn to the list's section, Tab to
 * it, Alt-N adds a row, each of its fields is typed into (Tab between them),
 * a choice picked by its filter, a toggle flipped; what was typed is in the
 * job at the row's path (env[0].key, mount[0].subdir, rules[0].action…).
 */
static void test_every_list_row_reaches_its_path(void **state)
{
    struct fixture *fx = *state;
    fx->cat.volumes = xcalloc(1, sizeof *fx->cat.volumes);
    fx->cat.volumes[0] =
        (struct catalog_volume){xstrdup("vol-1"), xstrdup("team data"), NULL, NULL};
    fx->cat.volume_count = 1;
    static const struct {
        const char *list;
        const char *typed[3]; /* each field's keys: text, "~filter" for a choice, " " a toggle */
        const char *path[3], *want[3];
    } walk[] = {
        {"env", {"MY_FLAG", "on"}, {"env[0].key", "env[0].value"}, {"MY_FLAG", "on"}},
        {"mount",
         {"~vol", "runs/a", "/mnt/x"},
         {"mount[0].id", "mount[0].subdir", "mount[0].mount_path"},
         {"vol-1", "runs/a", "/mnt/x"}},
        {"fault_tolerance.rules",
         {"201", "~POD", " "},
         {"fault_tolerance.rules[0].exit_codes", "fault_tolerance.rules[0].action",
          "fault_tolerance.rules[0].mark_node_unschedulable"},
         {"201", "RESTART_POD", NULL}},
    };
    size_t n, walked = 0;
    const struct formtab_row *rows = formtab_rows(&n);
    for (size_t i = 0; i < n; i++) {
        if (rows[i].kind != FORMTAB_LIST)
            continue;
        size_t w = 0;
        while (w < sizeof walk / sizeof walk[0] && strcmp(walk[w].list, rows[i].path) != 0)
            w++;
        assert_true(w < sizeof walk / sizeof walk[0]); /* a new list: say here how to walk it */
        struct jobspec j = ok_job();
        j.fault_tolerance.present = true; /* rules act only while restarts remain */
        j.fault_tolerance.has_backoff_limit = true;
        j.fault_tolerance.backoff_limit = 3;
        wizard_free(fx->wz);
        fx->wz = wizard_new(&fx->cat, &j, NULL, fx->km);
        jobspec_free(&j);
        go_to_row(fx->wz, &rows[i]);
        struct widget_key alt_n = {'n', false, true};
        wizard_key(fx->wz, &alt_n);
        for (size_t f = 0; f < 3 && walk[w].typed[f]; f++) {
            if (f > 0)
                key(fx->wz, '\t', false);
            if (walk[w].typed[f][0] == '~') /* a choice: open, filter, pick */
                choose(fx->wz, walk[w].typed[f] + 1);
            else
                type(fx->wz, walk[w].typed[f]);
        }
        wizard_validate(fx->wz);
        json_t *doc = jobspec_to_json(wizard_job(fx->wz));
        for (size_t f = 0; f < 3 && walk[w].path[f]; f++) {
            json_t *v = json_at(doc, walk[w].path[f]);
            if (!v)
                fail_msg("%s: nothing at %s", rows[i].path, walk[w].path[f]);
            if (walk[w].want[f])
                assert_string_equal(json_string_value(v), walk[w].want[f]);
            else
                assert_true(json_is_true(v));
        }
        json_decref(doc);
        walked++;
    }
    assert_int_equal(walked, sizeof walk / sizeof walk[0]);
}

/*
 * A framework the schema does not name (a newer server's word) is shown as
 * the file says it, chosen, with a finding under it, and sent as it came;
 * the form's own choices are the schema's names for the values it offers.
 */
static void test_unknown_framework_shown_and_kept(void **state)
{
    struct fixture *fx = *state;
    struct jobspec j = ok_job();
    j.framework = FRAMEWORK_UNSPECIFIED;
    j.framework_other = xstrdup("JAX_SPMD");
    fx->wz = wizard_new(&fx->cat, &j, NULL, fx->km);
    jobspec_free(&j);
    assert_string_equal(select_selected_label(fx->wz->framework), "JAX_SPMD");
    assert_string_equal(select_detail(fx->wz->framework, select_selected(fx->wz->framework)),
                        "from the file; not in the catalog");
    assert_string_equal(select_detail(fx->wz->framework, 0), "PyTorch DDP");
    const struct jobspec *out = wizard_job(fx->wz);
    assert_non_null(out->framework_other);
    assert_string_equal(out->framework_other, "JAX_SPMD");
    bool said = false;
    for (size_t i = 0; i < fx->wz->findings.count; i++)
        said = said || (strcmp(fx->wz->findings.items[i].path, "framework") == 0 &&
                        strstr(fx->wz->findings.items[i].message, "JAX_SPMD"));
    assert_true(said);
}

/*
 * HIGH chosen, then a workspace where the caller is a member: HIGH stays
 * chosen (shown disabled in the list) with validation's finding under
 * Priority, rather than NORMAL taking its place unsaid.
 */
static void test_priority_kept_in_a_workspace_that_refuses_it(void **state)
{
    struct fixture *fx = *state;
    add_idle_pool_and_workspace(&fx->cat);
    fx->cat.workspaces[1].role = MEMBER;
    struct jobspec j = ok_job();
    fx->wz = wizard_new(&fx->cat, &j, NULL, fx->km);
    jobspec_free(&j);
    go_to_row(fx->wz, formtab_row("scheduling.priority"));
    choose(fx->wz, "HIGH");
    assert_int_equal(wizard_job(fx->wz)->scheduling.priority, PRIORITY_HIGH);
    key(fx->wz, KEY_PPAGE, true); /* back to Basics, its Workspace */
    for (int t = 0; t < 5 && strcmp(wizard_focused_path(fx->wz), "workspace_name") != 0; t++)
        key(fx->wz, KEY_BTAB, true);
    choose(fx->wz, "other");
    assert_string_equal(wizard_job(fx->wz)->workspace_name, "other");
    assert_int_equal(wizard_job(fx->wz)->scheduling.priority, PRIORITY_HIGH);
    bool said = false;
    for (size_t i = 0; i < fx->wz->findings.count; i++)
        said = said || (strcmp(fx->wz->findings.items[i].path, "scheduling.priority") == 0 &&
                        fx->wz->findings.items[i].severity == SEVERITY_ERROR);
    assert_true(said);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_backoff_typed_is_kept, setup, teardown),
        cmocka_unit_test_setup_teardown(test_replicas_typed_is_kept, setup, teardown),
        cmocka_unit_test_setup_teardown(test_file_values_kept, setup, teardown),
        cmocka_unit_test_setup_teardown(test_defaults_agree, setup, teardown),
        cmocka_unit_test_setup_teardown(test_zone_and_vpc_only_where_the_backend_has_them, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_invisible_path_characters_shown_inline, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_every_row_reaches_its_path, setup, teardown),
        cmocka_unit_test_setup_teardown(test_spec_memory_said_whole, setup, teardown),
        cmocka_unit_test_setup_teardown(test_spec_kept_when_pool_lacks_it, setup, teardown),
        cmocka_unit_test_setup_teardown(test_every_choice_and_conditional_row, setup, teardown),
        cmocka_unit_test_setup_teardown(test_zone_and_pool_kept_when_catalog_lacks_them, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_every_list_row_reaches_its_path, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unknown_framework_shown_and_kept, setup, teardown),
        cmocka_unit_test_setup_teardown(test_priority_kept_in_a_workspace_that_refuses_it, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
