/*
 * test_k8s: the pure pieces of the Kubernetes renderers (api/k8s_manifest.c)
 * — DNS names made from job, pool and volume names, memory quantities, a
 * spec's resources from the catalog or its own name, the per-exit-code
 * fault table both renderers write their rules from — and the Volcano
 * policies and PyTorchJob restart policy those give (api/k8s_volcano.c,
 * api/k8s_pytorchjob.c), read back through yamltree.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h> /* after the four headers it needs */

#include <stdlib.h>
#include <string.h>

#include "api/k8s_manifest.h"
#include "api/k8s_pytorchjob.h"
#include "api/k8s_volcano.h"
#include "api/yamltree.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

static void expect_name(const char *in, enum k8s_name_kind kind, size_t max, const char *want,
                        bool changed)
{
    struct strbuf sb = STRBUF_INIT;
    strbuf_adds(&sb, "prefix:"); /* appends, leaving what is there */
    bool got = k8s_dns_name(in, kind, max, &sb);
    if (strcmp(strbuf_str(&sb) + 7, want) != 0 || got != changed)
        fail_msg("'%s': got '%s' (changed %d), want '%s' (changed %d)", in ? in : "(null)",
                 strbuf_str(&sb) + 7, got, want, changed);
    assert_memory_equal(sb.buf, "prefix:", 7);
    strbuf_free(&sb);
}

static void test_dns_names(void **state)
{
    (void)state;
    expect_name("resnet50-ddp", K8S_NAME_LABEL, 0, "resnet50-ddp", false);
    expect_name("a--b", K8S_NAME_LABEL, 0, "a--b", false); /* a label may hold "--" */
    expect_name("GPU_Pool A", K8S_NAME_LABEL, 0, "gpu-pool-a", true);
    expect_name("__x__", K8S_NAME_LABEL, 0, "x", true);
    expect_name("2024-run", K8S_NAME_LABEL, 0, "tj-2024-run", true);
    expect_name("池-a", K8S_NAME_LABEL, 0, "a", true);
    expect_name("训练池", K8S_NAME_LABEL, 0, "trainjob", true);
    expect_name("", K8S_NAME_LABEL, 0, "trainjob", true);
    expect_name(NULL, K8S_NAME_LABEL, 0, "trainjob", true);
    expect_name("a.b", K8S_NAME_LABEL, 0, "a-b", true);
    /* subdomains keep their dots, with a letter or digit on each side */
    expect_name("Team_Data.v2", K8S_NAME_SUBDOMAIN, 0, "team-data.v2", true);
    expect_name("data-.-x..y.", K8S_NAME_SUBDOMAIN, 0, "data.x.y", true);
    expect_name("9data", K8S_NAME_SUBDOMAIN, 0, "9data", false);
    /* cut to the limit, never ending in '-' */
    expect_name("abcdefgh-jkl", K8S_NAME_LABEL, 9, "abcdefgh", true);
    char long_name[100];
    memset(long_name, 'a', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = '\0';
    struct strbuf sb = STRBUF_INIT;
    assert_true(k8s_dns_name(long_name, K8S_NAME_LABEL, 500, &sb));
    assert_int_equal(sb.len, K8S_LABEL_MAX);
    strbuf_free(&sb);
}

static void test_quantities(void **state)
{
    (void)state;
    static const struct {
        int64_t mib;
        const char *want;
    } table[] = {
        {1024, "1Gi"}, {65536, "64Gi"}, {1536, "1536Mi"}, {1, "1Mi"}, {0, "0Mi"},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        struct strbuf sb = STRBUF_INIT;
        k8s_quantity_mib(table[i].mib, &sb);
        assert_string_equal(strbuf_str(&sb), table[i].want);
        strbuf_free(&sb);
    }
}

/* A job of framework with n workers on spec, pool "p". */
static void make_job(struct jobspec *job, enum framework fw, int n, const char *spec)
{
    jobspec_init(job);
    job->name = xstrdup("job");
    job->framework = fw;
    job->resource_pool.present = true;
    job->resource_pool.name = xstrdup("p");
    struct role *r = jobspec_add_role(job);
    r->name = xstrdup("Worker");
    r->has_total_replicas = true;
    r->total_replicas = n;
    r->image_path = xstrdup("registry.example/img:1");
    r->startup_script = xstrdup("python train.py");
    role_add_spec(r)->name = xstrdup(spec);
}

static void test_resources(void **state)
{
    (void)state;
    struct jobspec job;
    make_job(&job, FRAMEWORK_PYTORCH_DDP, 2, "gpu-4");
    struct k8s_resources r = k8s_spec_resources(&job, NULL);
    assert_true(r.known);
    assert_int_equal(r.gpus, 4);
    assert_int_equal(r.cpus, 0);

    /* the catalog's spec wins over what the name says */
    struct catalog cat;
    memset(&cat, 0, sizeof cat);
    struct catalog_spec spec = {
        .name = (char *)"gpu-4", .devices = 8, .vcpus = 96, .memory_mib = 1024 * 1024};
    struct catalog_pool pool = {.name = (char *)"p", .specs = &spec, .spec_count = 1};
    cat.pools = &pool;
    cat.pool_count = 1;
    r = k8s_spec_resources(&job, &cat);
    assert_true(r.known);
    assert_int_equal(r.gpus, 8);
    assert_int_equal(r.cpus, 96);
    assert_int_equal(r.memory_mib, 1024 * 1024);
    jobspec_free(&job);

    make_job(&job, FRAMEWORK_MPI, 2, "cpu-16");
    r = k8s_spec_resources(&job, NULL);
    assert_true(r.known);
    assert_int_equal(r.cpus, 16);
    assert_int_equal(r.gpus, 0);
    jobspec_free(&job);

    make_job(&job, FRAMEWORK_MPI, 2, "N2lS.Ie.I60.2");
    r = k8s_spec_resources(&job, NULL);
    assert_false(r.known);
    jobspec_free(&job);
    make_job(&job, FRAMEWORK_MPI, 2, "gpu-4x");
    assert_false(k8s_spec_resources(&job, NULL).known);
    jobspec_free(&job);
}

static struct ft_rule *add_rule(struct jobspec *job, const char *codes, enum ft_action a)
{
    job->fault_tolerance.present = true;
    struct ft_rule *r = jobspec_add_rule(job);
    r->exit_codes = codes ? xstrdup(codes) : NULL;
    r->action = a;
    return r;
}

static void test_fault_table(void **state)
{
    (void)state;
    struct jobspec job;
    make_job(&job, FRAMEWORK_PYTORCH_DDP, 2, "gpu-1");
    add_rule(&job, "254,255", FT_ACTION_RESTART_POD);
    add_rule(&job, "200-205,254", FT_ACTION_RESTART_JOB); /* 254 is rule 0's: first match */
    add_rule(&job, "1", FT_ACTION_FAIL_JOB);
    job.fault_tolerance.has_backoff_limit = true;
    job.fault_tolerance.backoff_limit = 3;
    struct k8s_fault_table t;
    k8s_fault_table(&job, &t);
    assert_int_equal(t.rule[254], 0);
    assert_int_equal(t.outcome[254], FAULT_RESTART_POD);
    assert_int_equal(t.rule[200], 1);
    assert_int_equal(t.outcome[205], FAULT_RESTART_JOB);
    assert_int_equal(t.rule[1], 2);
    assert_int_equal(t.outcome[1], FAULT_FAIL_JOB);
    assert_int_equal(t.rule[2], -1); /* the platform default: RESTART_JOB */
    assert_int_equal(t.outcome[2], FAULT_RESTART_JOB);

    /* backoff_limit 0: no restart remains, every failure fails the job */
    job.fault_tolerance.backoff_limit = 0;
    k8s_fault_table(&job, &t);
    for (int c = 1; c < 256; c++)
        assert_int_equal(t.outcome[c], FAULT_FAIL_JOB);
    jobspec_free(&job);
}

/* The manifest render gives, read back as a tree (the comments after it dropped). */
static json_t *rendered(const struct jobspec *job, bool volcano, struct strbuf *text)
{
    struct strbuf err = STRBUF_INIT;
    int rc = volcano ? k8s_volcano_render(job, NULL, text, &err)
                     : k8s_pytorchjob_render(job, NULL, text, &err);
    if (rc != 0)
        fail_msg("render: %s", strbuf_str(&err));
    strbuf_free(&err);
    struct doc_error de;
    json_t *doc = yamltree_parse(text->buf, text->len, NULL, &de);
    if (doc == NULL)
        fail_msg("%d:%d: %s\n%s", de.line, de.col, de.message, strbuf_str(text));
    return doc;
}

static void test_volcano_policies(void **state)
{
    (void)state;
    struct jobspec job;
    make_job(&job, FRAMEWORK_PYTORCH_DDP, 3, "gpu-2");
    add_rule(&job, "254,255", FT_ACTION_RESTART_POD)->mark_node_unschedulable = true;
    add_rule(&job, "1", FT_ACTION_FAIL_JOB);
    job.fault_tolerance.has_backoff_limit = true;
    job.fault_tolerance.backoff_limit = 4;
    struct strbuf text = STRBUF_INIT;
    json_t *doc = rendered(&job, true, &text);
    json_t *spec = json_object_get(doc, "spec");
    assert_int_equal(json_integer_value(json_object_get(spec, "maxRetry")), 4);
    assert_int_equal(json_integer_value(json_object_get(spec, "minAvailable")), 3);
    assert_string_equal(json_string_value(json_object_get(spec, "queue")), "p");
    json_t *pol = json_object_get(spec, "policies");
    assert_int_equal(json_array_size(pol), 4);
    const char *want[][2] = {
        {"254", "RestartPod"}, {"255", "RestartPod"}, {"1", "TerminateJob"}, {NULL, "RestartJob"}};
    for (size_t i = 0; i < 4; i++) {
        json_t *p = json_array_get(pol, i);
        assert_string_equal(json_string_value(json_object_get(p, "action")), want[i][1]);
        if (want[i][0])
            assert_int_equal(json_integer_value(json_object_get(p, "exitCode")), atoi(want[i][0]));
        else
            assert_string_equal(json_string_value(json_object_get(p, "event")), "PodFailed");
    }
    json_t *tasks = json_object_get(spec, "tasks");
    assert_int_equal(json_array_size(tasks), 2);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(tasks, 1), "replicas")), 2);
    assert_non_null(strstr(text.buf, "# fault_tolerance.rules[0].mark_node_unschedulable: "));
    assert_non_null(strstr(text.buf, "nvidia.com/gpu: '2'"));
    json_decref(doc);
    strbuf_free(&text);

    /* backoff_limit 0 and the platform's rule: one policy, the job ends on any failure */
    jobspec_free(&job);
    make_job(&job, FRAMEWORK_MPI, 2, "cpu-1");
    add_rule(&job, "1-255", FT_ACTION_RESTART_JOB);
    job.fault_tolerance.has_backoff_limit = true;
    job.fault_tolerance.backoff_limit = 0;
    text = (struct strbuf)STRBUF_INIT;
    doc = rendered(&job, true, &text);
    spec = json_object_get(doc, "spec");
    assert_null(json_object_get(spec, "maxRetry"));
    pol = json_object_get(spec, "policies");
    assert_int_equal(json_array_size(pol), 1);
    assert_string_equal(json_string_value(json_object_get(json_array_get(pol, 0), "action")),
                        "TerminateJob");
    assert_non_null(strstr(text.buf, "# fault_tolerance.backoff_limit: 0 cannot be written"));
    json_decref(doc);
    strbuf_free(&text);
    jobspec_free(&job);
}

static void test_pytorchjob_restart_policy(void **state)
{
    (void)state;
    static const struct {
        const char *codes;
        enum ft_action action;
        int backoff;
        const char *want;
    } table[] = {
        {"1-255", FT_ACTION_RESTART_JOB, 3, "OnFailure"},
        {"1-255", FT_ACTION_RESTART_JOB, 0, "Never"},
        {"1-255", FT_ACTION_FAIL_JOB, 5, "Never"},
        {"1-127", FT_ACTION_FAIL_JOB, 5, "ExitCode"}, /* 128-255 restart by default */
        {"1", FT_ACTION_FAIL_JOB, 5, "OnFailure"},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        struct jobspec job;
        make_job(&job, FRAMEWORK_PYTORCH_DDP, 1, "gpu-1");
        add_rule(&job, table[i].codes, table[i].action);
        job.fault_tolerance.has_backoff_limit = true;
        job.fault_tolerance.backoff_limit = table[i].backoff;
        struct strbuf text = STRBUF_INIT;
        json_t *doc = rendered(&job, false, &text);
        json_t *specs = json_object_get(json_object_get(doc, "spec"), "pytorchReplicaSpecs");
        json_t *master = json_object_get(specs, "Master");
        assert_null(json_object_get(specs, "Worker")); /* one worker: the master alone */
        const char *got = json_string_value(json_object_get(master, "restartPolicy"));
        if (strcmp(got, table[i].want) != 0)
            fail_msg("%s %d backoff %d: %s, want %s", table[i].codes, table[i].action,
                     table[i].backoff, got, table[i].want);
        json_t *c = json_array_get(
            json_object_get(json_object_get(json_object_get(master, "template"), "spec"),
                            "containers"),
            0);
        assert_string_equal(json_string_value(json_object_get(c, "name")), "pytorch");
        json_decref(doc);
        strbuf_free(&text);
        jobspec_free(&job);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dns_names),        cmocka_unit_test(test_quantities),
        cmocka_unit_test(test_resources),        cmocka_unit_test(test_fault_table),
        cmocka_unit_test(test_volcano_policies), cmocka_unit_test(test_pytorchjob_restart_policy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
