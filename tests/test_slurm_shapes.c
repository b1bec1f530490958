/*
 * test_slurm_shapes: the version table of slurmrestd's JSON (api/slurm_shapes)
 * against recorded replies — tests/fixtures/slurm/, slurmrestd 22.05.8
 * (v0.0.38) — and against the recorded v0.0.40 spec (an excerpt of
 * SlinkyProject/slurm-client's generated spec): version detection, a job
 * decoded in both shapes (raw wait status vs exit_code object, one state
 * vs a list of flags), a submit body whose every key the spec knows, and
 * values of the wrong type left out, never guessed.
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

#include "api/slurm_shapes.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

static json_t *fixture(const char *name)
{
    const char *top = getenv("TRAINJOB_TOP");
    char *path = xasprintf("%s/tests/fixtures/slurm/%s", top && *top ? top : ".", name);
    json_error_t e;
    json_t *j = json_load_file(path, 0, &e);
    if (j == NULL)
        fail_msg("%s: %s", path, e.text);
    free(path);
    return j;
}

static const struct slurm_shape *v38(void)
{
    return slurm_shape_find("v0.0.38");
}

static const struct slurm_shape *v40(void)
{
    return slurm_shape_find("v0.0.40");
}

static void detects_the_version_the_server_offers(void **state)
{
    (void)state;
    struct strbuf why = STRBUF_INIT;
    json_t *doc = fixture("openapi-22.05-paths.json");
    const struct slurm_shape *s = slurm_shape_choose(doc, &why);
    assert_non_null(s);
    assert_string_equal(s->version, "v0.0.38"); /* offered with 36 and 37: 38 is chosen */
    json_decref(doc);

    doc = fixture("openapi-v0.0.40-excerpt.json");
    s = slurm_shape_choose(doc, &why);
    assert_non_null(s);
    assert_string_equal(s->version, "v0.0.40");
    json_decref(doc);

    doc = json_pack("{s:{s:{}}}", "paths", "/slurm/v0.0.36/ping");
    assert_null(slurm_shape_choose(doc, &why));
    assert_non_null(strstr(strbuf_str(&why), "v0.0.36"));
    assert_non_null(strstr(strbuf_str(&why), "v0.0.38"));
    json_decref(doc);
    strbuf_free(&why);
}

static void decode(const struct slurm_shape *s, const char *file, struct slurm_job *j)
{
    json_t *doc = fixture(file);
    struct strbuf why = STRBUF_INIT;
    assert_int_equal(slurm_job_decode(s, json_array_get(json_object_get(doc, "jobs"), 0), j, &why),
                     0);
    strbuf_free(&why);
    json_decref(doc);
}

static void decodes_recorded_v0038_jobs(void **state)
{
    (void)state;
    struct slurm_job j;
    decode(v38(), "job-running.json", &j);
    assert_int_equal(j.id, 1);
    assert_string_equal(j.state, "RUNNING");
    assert_string_equal(j.nodes, "n[1-2]");
    assert_int_equal(j.alloc_count, 2);
    assert_string_equal(j.alloc[0].node, "n1");
    assert_string_equal(j.alloc[1].node, "n2");
    assert_string_equal(j.alloc[0].gpus, "0-1"); /* gres_detail "gpu:2(IDX:0-1)" */
    assert_true(j.submit_time > 0 && j.start_time >= j.submit_time);
    slurm_job_free(&j);

    decode(v38(), "job-failed.json", &j);
    assert_string_equal(j.state, "FAILED");
    assert_true(j.has_exit);
    assert_int_equal(j.exit_status, 3); /* 768: a raw wait status */
    assert_int_equal(j.exit_signal, 0);
    slurm_job_free(&j);

    decode(v38(), "job-preempted-requeued.json", &j);
    assert_string_equal(j.state, "PENDING");
    assert_string_equal(j.reason, "BeginTime");
    assert_int_equal(j.restarts, 1);
    slurm_job_free(&j);
}

static void a_signal_death_is_decoded_from_the_wait_status(void **state)
{
    (void)state;
    struct strbuf why = STRBUF_INIT;
    struct slurm_job j;
    json_t *o = json_pack("{s:i, s:s, s:i}", "job_id", 7, "job_state", "FAILED", "exit_code", 9);
    assert_int_equal(slurm_job_decode(v38(), o, &j, &why), 0);
    assert_int_equal(j.exit_signal, 9);
    assert_int_equal(j.exit_status, 0);
    slurm_job_free(&j);
    json_decref(o);
    strbuf_free(&why);
}

static void decodes_the_v0040_shape(void **state)
{
    (void)state;
    /* As the recorded v0.0.40 spec has it: lists of states, exit_code an object, numbers wrapped.
     */
    const char *text =
        "{\"job_id\": 12, \"name\": \"x\", \"job_state\": [\"PENDING\", \"REQUEUED\"],"
        " \"state_reason\": \"BeginTime\", \"restart_cnt\": 2,"
        " \"exit_code\": {\"status\": [\"ERROR\"], \"return_code\": {\"set\": true, \"infinite\":"
        " false, \"number\": 3}, \"signal\": {\"id\": {\"set\": false, \"number\": 0}}},"
        " \"submit_time\": {\"set\": true, \"infinite\": false, \"number\": 1700000000},"
        " \"start_time\": {\"set\": false, \"number\": 0},"
        " \"current_working_directory\": \"/jobs/default/x\","
        " \"job_resources\": {\"nodes\": \"n[1-2]\", \"allocated_nodes\": [{\"nodename\": \"n1\","
        " \"cpus_used\": 2}]}, \"gres_detail\": [\"gpu:1(IDX:3)\"]}";
    json_t *o = json_loads(text, 0, NULL);
    struct strbuf why = STRBUF_INIT;
    struct slurm_job j;
    assert_int_equal(slurm_job_decode(v40(), o, &j, &why), 0);
    assert_string_equal(j.state, "REQUEUED"); /* the flag wins, as job_state_string() orders them */
    assert_true(j.has_exit);
    assert_int_equal(j.exit_status, 3);
    assert_int_equal(j.exit_signal, 0);
    assert_int_equal(j.submit_time, 1700000000);
    assert_int_equal(j.start_time, 0); /* set: false is no time */
    assert_int_equal(j.restarts, 2);
    assert_int_equal(j.alloc_count, 1);
    assert_string_equal(j.alloc[0].gpus, "3");
    assert_int_equal(j.alloc[0].cpus, 2);
    slurm_job_free(&j);
    json_decref(o);

    /* The spec says so too: job_state is an array, exit_code an object with return_code. */
    json_t *spec = fixture("openapi-v0.0.40-excerpt.json");
    json_t *info = json_object_get(spec, "job_info");
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(info, "job_state"), "type")), "array");
    assert_non_null(json_object_get(
        json_object_get(json_object_get(spec, "exit_code"), "properties"), "return_code"));
    json_decref(spec);
    strbuf_free(&why);
}

static void wrong_types_are_left_out(void **state)
{
    (void)state;
    struct strbuf why = STRBUF_INIT;
    struct slurm_job j;
    json_t *o = json_pack("{s:s}", "job_id", "12");
    assert_int_equal(slurm_job_decode(v38(), o, &j, &why), -1);
    json_decref(o);
    o = json_loads("{\"job_id\": 5, \"job_state\": 3, \"restart_cnt\": -4, \"exit_code\": 99999,"
                   " \"name\": [\"x\"], \"gres_detail\": [\"gpu:2(IDX:\\u001b[2J)\"],"
                   " \"job_resources\": {\"allocated_nodes\": [{\"nodename\": 7},"
                   " {\"nodename\": \"n2\", \"cpus_used\": \"8\"}]}}",
                   0, NULL);
    assert_non_null(o);
    assert_int_equal(slurm_job_decode(v38(), o, &j, &why), 0);
    assert_null(j.state);
    assert_null(j.name);
    assert_int_equal(j.restarts, 0);
    assert_false(j.has_exit);
    assert_int_equal(j.alloc_count, 1); /* the node without a string name is skipped */
    assert_string_equal(j.alloc[0].node, "n2");
    assert_int_equal(j.alloc[0].cpus, 0);
    assert_null(j.alloc[0].gpus); /* gres_detail[1] does not exist; [0] was not an index list */
    slurm_job_free(&j);
    json_decref(o);
    strbuf_free(&why);
}

/* Two decodings of one job are the same, field by field. */
static void assert_same_job(const struct slurm_job *a, const struct slurm_job *b, const char *what)
{
#define SAME_STR(f)                                                                                \
    do {                                                                                           \
        if ((a->f == NULL) != (b->f == NULL) || (a->f && strcmp(a->f, b->f) != 0))                 \
            fail_msg("%s: " #f " differs: %s / %s", what, a->f ? a->f : "(none)",                  \
                     b->f ? b->f : "(none)");                                                      \
    } while (0)
#define SAME_NUM(f)                                                                                \
    do {                                                                                           \
        if (a->f != b->f)                                                                          \
            fail_msg("%s: " #f " differs: %lld / %lld", what, (long long)a->f, (long long)b->f);   \
    } while (0)
    SAME_NUM(id);
    SAME_STR(name);
    SAME_STR(state);
    SAME_STR(reason);
    SAME_STR(partition);
    SAME_STR(qos);
    SAME_STR(nodes);
    SAME_STR(cwd);
    SAME_STR(user);
    SAME_STR(comment);
    SAME_NUM(restarts);
    SAME_NUM(has_exit);
    SAME_NUM(exit_status);
    SAME_NUM(exit_signal);
    SAME_NUM(submit_time);
    SAME_NUM(start_time);
    SAME_NUM(end_time);
    SAME_NUM(alloc_count);
    if ((a->alloc == NULL) != (b->alloc == NULL))
        fail_msg("%s: one has an alloc list, the other none", what);
    for (size_t i = 0; i < a->alloc_count; i++) {
        SAME_STR(alloc[i].node);
        SAME_STR(alloc[i].gpus);
        SAME_NUM(alloc[i].cpus);
    }
#undef SAME_STR
#undef SAME_NUM
}

/*
 * An element decoded from jansson's tree of its text (as a reply about one
 * job is; the listing's tree decoder before it) and from the text itself
 * (slurm_job_decode_element, as the listing reads it): the same job, or no
 * job by both.
 */
static void decodes_alike(const char *text)
{
    struct strbuf why = STRBUF_INIT;
    struct slurm_job a, b;
    json_t *j = json_loads(text, 0, NULL);
    int ra = j ? slurm_job_decode(v38(), j, &a, &why) : -1;
    int rb = slurm_job_decode_element(v38(), text, strlen(text), &b, &why);
    if (ra != rb)
        fail_msg("%s: decoded %d from the tree, %d from the text", text, ra, rb);
    if (ra == 0) {
        assert_same_job(&a, &b, text);
        slurm_job_free(&a);
    }
    if (rb == 0)
        slurm_job_free(&b);
    json_decref(j);
    strbuf_free(&why);
}

/* Every member a job is decoded from is found by its name, and nothing else is. */
static void the_fields_a_job_is_decoded_from_are_found_by_name(void **state)
{
    (void)state;
    size_t n = 0;
    for (; slurm_job_fields[n]; n++)
        assert_int_equal(slurm_job_field(slurm_job_fields[n], strlen(slurm_job_fields[n])), (int)n);
    assert_int_equal(n, SLURM_JOB_FIELD_COUNT);
    static const char *const others[] = {"",           "job",          "job_idx", "Name",
                                         "names",      "user_namE",    "qos_id",  "end_timE",
                                         "exit_codes", "array_job_id", "node",    NULL};
    for (size_t i = 0; others[i]; i++)
        assert_int_equal(slurm_job_field(others[i], strlen(others[i])), -1);
}

static void the_text_decoder_reads_what_the_tree_decoder_read(void **state)
{
    (void)state;
    static const char *const texts[] = {
        /* plain, both versions' forms */
        "{\"job_id\": 5, \"name\": \"a\", \"job_state\": \"RUNNING\", \"user_name\": \"u\"}",
        "{\"job_id\": {\"set\": true, \"infinite\": false, \"number\": 9}, \"job_state\":"
        " [\"RUNNING\", \"COMPLETING\"], \"exit_code\": {\"return_code\": {\"set\": true,"
        " \"number\": 2}, \"signal\": {\"id\": {\"set\": true, \"number\": 15}}}}",
        "{\"job_id\": 1, \"job_state\": [\"PENDING\", \"REQUEUE_HOLD\", \"REQUEUED\"]}",
        "{\"job_id\": 1, \"job_state\": [7, \"PENDING\"]}",
        "{\"job_id\": 1, \"job_state\": [\"X\\u0041\"]}",
        "{\"job_id\": 1, \"job_state\": []}",
        "{\"job_id\": 1, \"job_state\": [\"COMPL\\u0045TING\", \"RUNNING\"]}",
        /* no job */
        "{\"job_id\": 0}",
        "{\"job_id\": -3}",
        "{\"job_id\": \"12\"}",
        "{\"job_id\": 1.0}",
        "{\"job_id\": 1e3}",
        "{\"job_id\": {\"set\": false, \"number\": 4}}",
        "{\"job_id\": {\"set\": true, \"infinite\": true, \"number\": 4}}",
        "{\"job_id\": {\"set\": true, \"number\": \"4\"}}",
        "{\"name\": \"x\"}",
        "[1, 2]",
        "\"job\"",
        "{}",
        /* truncated members: not JSON, no job by either */
        "{\"job_id\": 5, \"name\": \"a",
        "{\"job_id\": 5, \"name\": ",
        "{\"job_id\": 5, \"exit_code\": {\"return_code\": 3",
        "{\"job_id\": 5,",
        "{\"job_id\": 5 \"name\": \"x\"}",
        /* wrong types: left out */
        "{\"job_id\": 5, \"job_state\": 3, \"restart_cnt\": -4, \"exit_code\": 99999,"
        " \"name\": [\"x\"], \"gres_detail\": [\"gpu:2(IDX:\\u001b[2J)\"], \"job_resources\":"
        " {\"allocated_nodes\": [{\"nodename\": 7}, {\"nodename\": \"n2\", \"cpus_used\": "
        "\"8\"}]}}",
        "{\"job_id\": 5, \"partition\": null, \"qos\": true, \"nodes\": {}, \"comment\": 1,"
        " \"submit_time\": \"1\", \"start_time\": -5, \"end_time\": 1.5, \"exit_code\": -1}",
        "{\"job_id\": 5, \"exit_code\": 768.0}",
        "{\"job_id\": 5, \"exit_code\": {\"return_code\": 4}}",
        "{\"job_id\": 5, \"exit_code\": {\"signal\": 9}}",
        "{\"job_id\": 5, \"exit_code\": {\"signal\": {\"id\": 9}, \"return_code\": \"x\"}}",
        "{\"job_id\": 5, \"exit_code\": [768]}",
        "{\"job_id\": 5, \"job_resources\": [], \"gres_detail\": {}}",
        "{\"job_id\": 5, \"job_resources\": {\"allocated_nodes\": {}}}",
        "{\"job_id\": 5, \"job_resources\": {\"allocated_nodes\": []}}",
        "{\"job_id\": 5, \"job_resources\": {\"allocated_nodes\": [\"n1\", null,"
        " {\"nodename\": \"n3\", \"cpus_used\": {\"set\": true, \"number\": 4}}]},"
        " \"gres_detail\": [\"gpu:1(IDX:0)\", \"gpu:1(IDX:1)\", \"gpu:2(IDX:2-3)\"]}",
        "{\"job_id\": 5, \"job_resources\": {\"allocated_nodes\": [{\"nodename\": \"n1\","
        " \"cpus_used\": 2097152}]}, \"gres_detail\": \"gpu:1(IDX:0)\"}",
        "{\"job_id\": 5, \"restart_cnt\": 2147483647, \"submit_time\": 0}",
        "{\"job_id\": 5, \"restart_cnt\": 2147483646}",
        /* huge numbers */
        "{\"job_id\": 9223372036854775807, \"restart_cnt\": 9223372036854775807,"
        " \"submit_time\": -9223372036854775808, \"exit_code\": 65535}",
        "{\"job_id\": 5, \"end_time\": 99999999999999999999}",
        "{\"job_id\": 5, \"end_time\": 1e400}",
        "{\"job_id\": 5, \"end_time\": 12345678901234567890123}",
        "{\"job_id\": 123456789012345678, \"start_time\": 1234567890123456789}",
        "{\"job_id\": 5, \"exit_code\": {\"return_code\": {\"set\": true, \"number\":"
        " 9223372036854775807}, \"signal\": {\"id\": {\"set\": true, \"number\": -1}}}}",
        /* escapes in strings */
        "{\"job_id\": 5, \"name\": \"a\\\"b\\\\c\\/d\\n\\t\\u00e9\\ud83d\\ude00\", \"comment\":"
        " \"trainjob:\\u0061bc\", \"current_working_directory\": \"/jobs/w/\\u0078\"}",
        "{\"job_id\": 5, \"name\": \"\\u0000\"}",
        "{\"job_id\": 5, \"name\": \"\\ud800\"}",
        "{\"job_id\": 5, \"name\": \"\\q\"}",
        "{\"job_id\": 5, \"name\": \"\xc3\x28\"}",
        "{\"job_id\": 5, \"name\": \"caf\xc3\xa9\"}",
        "{\"job\\u005fid\": 6, \"n\\u0061me\": \"esc-key\"}",
        /* duplicate keys: the last wins, a wrong type too */
        "{\"job_id\": 5, \"name\": \"a\", \"name\": \"b\"}",
        "{\"job_id\": 5, \"name\": \"a\", \"name\": 7}",
        "{\"job_id\": \"x\", \"job_id\": 8}",
        "{\"job_id\": 8, \"job_id\": \"x\"}",
        "{\"job_id\": 5, \"exit_code\": {\"return_code\": 1, \"return_code\": {\"set\": true,"
        " \"number\": 6}, \"signal\": {\"id\": 3, \"id\": {\"set\": true, \"number\": 9}}}}",
        "{\"job_id\": 5, \"job_resources\": {\"allocated_nodes\": [{\"nodename\": \"a\","
        " \"nodename\": \"b\", \"cpus_used\": 1, \"cpus_used\": 2}]}, \"gres_detail\": [],"
        " \"gres_detail\": [\"gpu:1(IDX:7)\"]}",
        "{\"job_id\": {\"set\": true, \"set\": false, \"number\": 3}}",
        "{\"job_id\": {\"set\": false, \"set\": true, \"number\": 3, \"number\": 4}}",
        /* white space */
        " \n{ \"job_id\" :\t5 , \"job_state\" : [ \"PENDING\" , \"REQUEUED\" ] ,"
        " \"exit_code\" : { \"return_code\" : { \"set\" : true , \"number\" : 1 } } } \n",
        /* deep and long */
        "{\"job_id\": 5, \"job_resources\": {\"x\": [[[[[[[[[[[[]]]]]]]]]]]]}}",
        NULL,
    };
    for (size_t i = 0; texts[i]; i++)
        decodes_alike(texts[i]);
    /* The recorded replies' jobs. */
    static const char *const files[] = {
        "job-running.json",
        "job-failed.json",
        "job-completed.json",
        "job-preempted-requeued.json",
        "jobs.json",
        "job-pending-qos-not-allowed.json",
        NULL,
    };
    for (size_t f = 0; files[f]; f++) {
        json_t *doc = fixture(files[f]);
        size_t i;
        json_t *v;
        json_array_foreach(json_object_get(doc, "jobs"), i, v)
        {
            char *text = json_dumps(v, JSON_INDENT(2));
            decodes_alike(text);
            free(text);
        }
        json_decref(doc);
    }
}

static const char *const env[] = {"PATH=/usr/bin:/bin", "LR=3e-4", "=bad", "NOEQUALS"};

static struct slurm_submit submit_of(void)
{
    struct slurm_submit s = {
        .name = "ddp",
        .partition = "idle",
        .qos = "idle_normal",
        .exclude = "n3",
        .cwd = "/jobs/default/ddp",
        .standard_output = "/jobs/default/ddp/slurm-%j.out",
        .nodes = 2,
        .gpus_per_node = 2,
        .cpus_per_task = 4,
        .memory_mb = 2000,
        .requeue = true,
        .env = env,
        .env_count = 4,
    };
    return s;
}

static void submit_body_v0038(void **state)
{
    (void)state;
    struct slurm_submit s = submit_of();
    json_t *b = slurm_submit_body(v38(), &s, "#!/bin/sh\ntrue\n");
    json_t *job = json_object_get(b, "job");
    assert_string_equal(json_string_value(json_object_get(b, "script")), "#!/bin/sh\ntrue\n");
    assert_true(json_is_integer(json_object_get(job, "nodes"))); /* [2,2] is silently ignored */
    assert_int_equal(json_integer_value(json_object_get(job, "nodes")), 2);
    assert_int_equal(json_integer_value(json_object_get(job, "tasks_per_node")), 1);
    assert_string_equal(json_string_value(json_object_get(job, "gres")), "gpu:2");
    assert_string_equal(json_string_value(json_object_get(job, "exclude_nodes")), "n3");
    assert_true(json_is_true(json_object_get(job, "requeue")));
    assert_int_equal(json_integer_value(json_object_get(job, "memory_per_node")), 2000);
    json_t *e = json_object_get(job, "environment");
    assert_true(json_is_object(e));
    assert_string_equal(json_string_value(json_object_get(e, "PATH")), "/usr/bin:/bin");
    assert_string_equal(json_string_value(json_object_get(e, "LR")), "3e-4");
    assert_int_equal(json_object_size(e), 2); /* "=bad" and "NOEQUALS" are no variables */
    json_decref(b);
}

static void submit_body_v0040_uses_only_keys_of_the_spec(void **state)
{
    (void)state;
    struct slurm_submit s = submit_of();
    json_t *b = slurm_submit_body(v40(), &s, "#!/bin/sh\n");
    json_t *job = json_object_get(b, "job");
    json_t *spec = fixture("openapi-v0.0.40-excerpt.json");
    json_t *props = json_object_get(spec, "job_desc_msg");
    const char *key;
    json_t *v;
    json_object_foreach(job, key, v)
    {
        if (json_object_get(props, key) == NULL)
            fail_msg("v0.0.40 submit key '%s' is not in the recorded spec", key);
    }
    json_t *e = json_object_get(job, "environment");
    assert_true(json_is_array(e));
    assert_int_equal(json_array_size(e), 2);
    assert_string_equal(json_string_value(json_array_get(e, 1)), "LR=3e-4");
    assert_string_equal(json_string_value(json_object_get(job, "nodes")), "2");
    assert_string_equal(json_string_value(json_object_get(job, "tres_per_node")), "gres/gpu:2");
    assert_string_equal(json_string_value(json_object_get(job, "excluded_nodes")), "n3");
    int64_t mem = 0;
    assert_true(json_is_object(json_object_get(job, "memory_per_node")));
    assert_true(slurm_number(json_object_get(job, "memory_per_node"), &mem));
    assert_int_equal(mem, 2000);
    json_decref(spec);
    json_decref(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(detects_the_version_the_server_offers),
        cmocka_unit_test(decodes_recorded_v0038_jobs),
        cmocka_unit_test(a_signal_death_is_decoded_from_the_wait_status),
        cmocka_unit_test(decodes_the_v0040_shape),
        cmocka_unit_test(wrong_types_are_left_out),
        cmocka_unit_test(the_fields_a_job_is_decoded_from_are_found_by_name),
        cmocka_unit_test(the_text_decoder_reads_what_the_tree_decoder_read),
        cmocka_unit_test(submit_body_v0038),
        cmocka_unit_test(submit_body_v0040_uses_only_keys_of_the_spec),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
