/*
 * test_schema: api/schema's copy and comparison, walking the same tables
 * as the codecs — a copy is deep and equal to its source, every kind of
 * field (strings, ints, enums, flags) makes two values differ, and a copy
 * says the same as an encode followed by a decode; a field path leads to
 * its field, and a file's misspelt field is kept until it is let go.
 */
// clang-format off
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
// clang-format on

#include <stdlib.h>
#include <string.h>

#include "api/finding.h"
#include "api/formtab.h"
#include "api/jobspec.h"
#include "api/jobspec_json.h"
#include "api/jobstatus.h"
#include "api/schema.h"
#include "api/validate.h"

static struct worker_info sample(void)
{
    struct worker_info w;
    memset(&w, 0, sizeof w);
    w.name = (char *)"worker-0";
    w.role = (char *)"worker";
    w.node_name = (char *)"n1";
    w.phase = WORKER_FAILED;
    w.has_restarts = true; /* trainjobd's; ACP reports none */
    w.restarts = 2;
    w.has_exit_code = true;
    w.exit_code = 137;
    w.exit_reason = (char *)"killed (SIGKILL/OOM)";
    w.has_simulated = w.simulated = true;
    return w;
}

static void a_copy_is_deep_and_equal(void **state)
{
    (void)state;
    struct worker_info src = sample();
    src.name = strdup("worker-0");
    struct worker_info copy;
    worker_info_copy(&copy, &src);
    assert_true(worker_info_equal(&copy, &src));
    assert_ptr_not_equal(copy.name, src.name);
    src.name[0] = 'W'; /* the copy has its own strings */
    assert_string_equal(copy.name, "worker-0");
    assert_false(worker_info_equal(&copy, &src));
    free(src.name);
    worker_info_free(&copy);
}

static void every_kind_of_field_counts(void **state)
{
    (void)state;
    struct worker_info a = sample(), b;
    b = a;
    assert_true(worker_info_equal(&a, &b));
    b.node_name = (char *)"n2"; /* a string */
    assert_false(worker_info_equal(&a, &b));
    b = a;
    b.node_name = NULL; /* a string against none */
    assert_false(worker_info_equal(&a, &b));
    b = a;
    b.restarts = 3; /* an int */
    assert_false(worker_info_equal(&a, &b));
    b = a;
    b.phase = WORKER_RUNNING; /* an enum */
    assert_false(worker_info_equal(&a, &b));
    b = a;
    b.has_exit_code = false; /* a presence flag */
    assert_false(worker_info_equal(&a, &b));
    b = a;
    b.simulated = false; /* a bool */
    assert_false(worker_info_equal(&a, &b));
}

static void a_copy_says_what_a_json_round_trip_says(void **state)
{
    (void)state;
    struct worker_info src = sample(), copy, decoded;
    memset(&decoded, 0, sizeof decoded);
    worker_info_copy(&copy, &src);
    json_t *j = worker_info_to_json(&src);
    struct findings fs = FINDINGS_INIT;
    assert_int_equal(worker_info_from_json(j, &decoded, &fs), 0);
    assert_true(worker_info_equal(&copy, &decoded));
    json_t *k = worker_info_to_json(&copy);
    assert_true(json_equal(j, k));
    json_decref(j);
    json_decref(k);
    findings_free(&fs);
    worker_info_free(&copy);
    worker_info_free(&decoded);

    struct job_event e, ec;
    memset(&e, 0, sizeof e);
    e.id = 7;
    e.kind = EVENT_FAULT;
    e.job = (char *)"pt-a";
    e.has_rule = true;
    e.rule = 1;
    e.message = (char *)"worker-0 exited 201";
    job_event_copy(&ec, &e);
    json_t *x = job_event_to_json(&e), *y = job_event_to_json(&ec);
    assert_true(json_equal(x, y));
    json_decref(x);
    json_decref(y);
    job_event_free(&ec);
}

/* A job file's document, decoded as files are (JOBSPEC_FILE). */
static void decode_file(const char *text, struct jobspec *job, struct findings *fs)
{
    json_error_t err;
    json_t *root = json_loads(text, 0, &err);
    assert_non_null(root);
    jobspec_init(job);
    jobspec_from_json(root, JOBSPEC_FILE, job, fs);
    json_decref(root);
}

/* The paths findings carry lead to their field, through sections and list items. */
static void a_path_leads_to_its_field(void **state)
{
    (void)state;
    struct jobspec j;
    struct findings fs = FINDINGS_INIT;
    decode_file("{\"fault_tolerance\": {\"backoff_limit\": 3, \"rules\": [{\"exit_codes\": \"1\"},"
                " {\"exit_codes\": \"2\"}]}}",
                &j, &fs);
    struct schema_ref ref;
    assert_true(schema_find(jobspec_schema(), &j, "fault_tolerance.backoff_limit", &ref));
    assert_string_equal(ref.field->name, "backoff_limit");
    assert_ptr_equal(ref.base, &j.fault_tolerance);
    assert_true(schema_find(jobspec_schema(), &j, "fault_tolerance.rules[1].exit_codes", &ref));
    assert_ptr_equal(ref.base, &j.fault_tolerance.rules[1]);
    assert_true(schema_find(jobspec_schema(), &j, "fault_tolerance.rules[1]", &ref));
    assert_int_equal(ref.index, 1);
    /* an item that is not there, a name no table has, a malformed index */
    assert_false(schema_find(jobspec_schema(), &j, "fault_tolerance.rules[2].exit_codes", &ref));
    assert_false(schema_find(jobspec_schema(), &j, "fault_tolerance.backof_limit", &ref));
    assert_false(schema_find(jobspec_schema(), &j, "fault_tolerance.rules[x].action", &ref));
    assert_false(schema_find(jobspec_schema(), &j, "", &ref));
    jobspec_free(&j);
    findings_free(&fs);
}

/*
 * A misspelt field in a file is an error, and is kept, so a form that opens
 * the file and saves it writes it back; it goes when let go by its path.
 */
static void a_misspelt_field_is_kept_until_let_go(void **state)
{
    (void)state;
    struct jobspec j;
    struct findings fs = FINDINGS_INIT;
    decode_file("{\"fault_tolerance\": {\"backof_limit\": 3}}", &j, &fs);
    assert_int_equal(fs.count, 1);
    assert_int_equal(fs.items[0].severity, SEVERITY_ERROR);
    assert_string_equal(fs.items[0].message, "unknown field; did you mean backoff_limit?");
    json_t *out = jobspec_to_json(&j);
    json_t *ft = json_object_get(out, "fault_tolerance");
    assert_int_equal(json_integer_value(json_object_get(ft, "backof_limit")), 3);
    json_decref(out);
    assert_true(schema_forget_extra(jobspec_schema(), &j, "fault_tolerance.backof_limit"));
    assert_false(schema_forget_extra(jobspec_schema(), &j, "fault_tolerance.backof_limit"));
    out = jobspec_to_json(&j);
    assert_null(json_object_get(json_object_get(out, "fault_tolerance"), "backof_limit"));
    json_decref(out);
    jobspec_free(&j);
    findings_free(&fs);
}

/*
 * Every row of the form table edits a field of the job's schema (the chooser
 * that fills the image reference aside), in the section validation files
 * that path under, and no two rows edit one path.
 */
static void every_form_row_is_a_schema_path(void **state)
{
    (void)state;
    struct jobspec j;
    struct findings fs = FINDINGS_INIT;
    decode_file("{\"roles\": [{\"resource_spec\": [{\"name\": \"x\"}]}]}", &j, &fs);
    size_t n;
    const struct formtab_row *rows = formtab_rows(&n);
    assert_true(n >= 20);
    for (size_t i = 0; i < n; i++) {
        struct schema_ref ref;
        if (rows[i].choices == FORMTAB_IMAGES || rows[i].kind == FORMTAB_NOTE)
            continue;
        if (!schema_find(jobspec_schema(), &j, rows[i].path, &ref))
            fail_msg("row %s: %s is no path of the job", rows[i].label, rows[i].path);
        assert_int_equal(form_section_of(rows[i].path), rows[i].section);
        /* found by its path: first, or after the rows before it with the same path (Directory
         * after Log path: two fields make up the log path) */
        const struct formtab_row *r = formtab_row(rows[i].path);
        while (r && r != &rows[i])
            r = formtab_row_next(r, rows[i].path);
        assert_ptr_equal(r, &rows[i]);
    }
    jobspec_free(&j);
    findings_free(&fs);
}

/*
 * What the form reads and writes through a path: an enum by its name (a
 * name the table lacks kept as text where the field keeps one), a flag and
 * an object's presence, and a list's items counted, cleared and added.
 */
static void a_ref_reads_and_writes_each_kind(void **state)
{
    (void)state;
    struct jobspec j;
    struct findings fs = FINDINGS_INIT;
    decode_file("{\"framework\": \"JAX\", \"scheduling\": {\"priority\": \"HIGH\"},"
                " \"env\": [{\"key\": \"A\"}, {\"key\": \"B\"}]}",
                &j, &fs);
    struct schema_ref r;
    bool b = true;
    assert_true(schema_find(jobspec_schema(), &j, "scheduling.priority", &r));
    assert_string_equal(schema_ref_enum_name(&r), "HIGH");
    assert_true(schema_ref_set_enum_name(&r, "HIGHEST"));
    assert_int_equal(j.scheduling.priority, PRIORITY_HIGHEST);
    assert_true(schema_find(jobspec_schema(), &j, "framework", &r));
    assert_string_equal(schema_ref_enum_name(&r), "JAX");
    assert_true(schema_ref_set_enum_name(&r, "MPI"));
    assert_int_equal(j.framework, FRAMEWORK_MPI);
    assert_null(j.framework_other);
    assert_true(schema_ref_set_enum_name(&r, "JAX_SPMD")); /* kept as the text it is */
    assert_string_equal(j.framework_other, "JAX_SPMD");
    assert_true(schema_find(jobspec_schema(), &j, "ssh.auto_key_setup", &r));
    assert_false(schema_ref_bool(&r, &b)); /* absent */
    assert_true(schema_ref_set_bool(&r, true, false));
    assert_true(schema_ref_bool(&r, &b));
    assert_false(b);
    assert_true(schema_find(jobspec_schema(), &j, "tensorboard", &r));
    assert_true(schema_ref_set_bool(&r, true, true));
    assert_true(j.tensorboard.present);
    assert_true(schema_ref_unset(&r));
    assert_false(j.tensorboard.present);
    assert_true(schema_find(jobspec_schema(), &j, "env", &r));
    assert_int_equal(schema_ref_count(&r), 2);
    assert_string_equal(((struct env_var *)schema_ref_item(&r, 1))->key, "B");
    assert_null(schema_ref_item(&r, 2));
    assert_true(schema_ref_unset(&r));
    assert_int_equal(j.env_count, 0);
    struct env_var *e = schema_ref_append(&r);
    assert_non_null(e);
    assert_null(e->key);
    assert_int_equal(j.env_count, 1);
    jobspec_free(&j);
    findings_free(&fs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_copy_is_deep_and_equal),
        cmocka_unit_test(every_kind_of_field_counts),
        cmocka_unit_test(a_copy_says_what_a_json_round_trip_says),
        cmocka_unit_test(a_path_leads_to_its_field),
        cmocka_unit_test(a_misspelt_field_is_kept_until_let_go),
        cmocka_unit_test(every_form_row_is_a_schema_path),
        cmocka_unit_test(a_ref_reads_and_writes_each_kind),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
