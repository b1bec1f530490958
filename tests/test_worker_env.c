/*
 * test_worker_env: the environment of every framework's workers, variable by
 * variable and in order, for 2- and 3-replica jobs (TF_CONFIG read back with
 * jansson); the user's variables after the platform's; worker names; the MPI
 * hostfile; and the envv array itself.
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

#include "api/jobspec.h"
#include "engine/worker_env.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

static const char *const base[] = {"PATH=/usr/bin:/bin", "HOME=/home/u", NULL};
static const char *const hosts[] = {"10.0.0.1", "10.0.0.2", "10.0.0.3"};
static const int ports[] = {2222, 2223, 2224};
static const char *const devices[] = {"0", "1", "2,3"};

/* A job of the given framework with a name and no user variables. */
static void make_job(struct jobspec *job, enum framework fw, const char *name)
{
    jobspec_init(job);
    job->framework = fw;
    job->name = name ? xstrdup(name) : NULL;
}

static void add_env(struct jobspec *job, const char *key, const char *value)
{
    struct env_var *v = jobspec_add_env(job);
    v->key = xstrdup(key);
    v->value = xstrdup(value);
}

/* Worker index of a replicas-worker job on the three test hosts. */
static struct worker_place place_for(int index, int replicas)
{
    struct worker_place p = {0};
    p.index = index;
    p.replicas = replicas;
    p.devices = devices[index];
    p.master_addr = hosts[0];
    p.master_port = 29500;
    p.hosts = hosts;
    p.ports = ports;
    return p;
}

/* env holds exactly expected (NULL-terminated), in this order. */
static void check_env(const struct envv *env, const char *const *expected)
{
    size_t n = 0;
    while (expected[n])
        n++;
    for (size_t i = 0; i < env->n && i < n; i++)
        assert_string_equal(env->v[i], expected[i]);
    assert_int_equal(env->n, n);
    assert_null(env->v[env->n]);
}

static void test_pytorch_two_replicas(void **state)
{
    static const char *const want0[] = {"PATH=/usr/bin:/bin",
                                        "HOME=/home/u",
                                        "ECP_JOB_NAME=pt-train",
                                        "MASTER_ADDR=10.0.0.1",
                                        "MASTER_PORT=29500",
                                        "WORLD_SIZE=2",
                                        "RANK=0",
                                        "NODE_RANK=0",
                                        "LOCAL_RANK=0",
                                        "CUDA_VISIBLE_DEVICES=0",
                                        "NVIDIA_VISIBLE_DEVICES=0",
                                        "TRAINJOB_WORKER_NAME=master-0",
                                        NULL};
    static const char *const want1[] = {"PATH=/usr/bin:/bin",
                                        "HOME=/home/u",
                                        "ECP_JOB_NAME=pt-train",
                                        "MASTER_ADDR=10.0.0.1",
                                        "MASTER_PORT=29500",
                                        "WORLD_SIZE=2",
                                        "RANK=1",
                                        "NODE_RANK=1",
                                        "LOCAL_RANK=0",
                                        "CUDA_VISIBLE_DEVICES=1",
                                        "NVIDIA_VISIBLE_DEVICES=1",
                                        "TRAINJOB_WORKER_NAME=worker-0",
                                        NULL};
    struct jobspec job;
    make_job(&job, FRAMEWORK_PYTORCH_DDP, "pt-train");
    struct worker_place p0 = place_for(0, 2), p1 = place_for(1, 2);
    struct envv e0 = {0}, e1 = {0};
    worker_env_build(&job, &p0, base, &e0);
    worker_env_build(&job, &p1, base, &e1);
    check_env(&e0, want0);
    check_env(&e1, want1);
    envv_free(&e0);
    envv_free(&e1);
    jobspec_free(&job);
}

/* Every PyTorch-style framework gives a 3-worker job the same variables. */
static void test_pytorch_style_three_replicas(void **state)
{
    static const enum framework fws[] = {FRAMEWORK_PYTORCH_DDP, FRAMEWORK_PYTORCH,
                                         FRAMEWORK_SENSEPARROTS, FRAMEWORK_SENSEPARROTS_DDP};
    static const char *const names[] = {"master-0", "worker-0", "worker-1"};
    for (size_t f = 0; f < sizeof(fws) / sizeof(fws[0]); f++) {
        struct jobspec job;
        make_job(&job, fws[f], "sp-job");
        for (int i = 0; i < 3; i++) {
            char rank[32], node_rank[32], cuda[64], nvidia[64], name[64];
            snprintf(rank, sizeof(rank), "RANK=%d", i);
            snprintf(node_rank, sizeof(node_rank), "NODE_RANK=%d", i);
            snprintf(cuda, sizeof(cuda), "CUDA_VISIBLE_DEVICES=%s", devices[i]);
            snprintf(nvidia, sizeof(nvidia), "NVIDIA_VISIBLE_DEVICES=%s", devices[i]);
            snprintf(name, sizeof(name), "TRAINJOB_WORKER_NAME=%s", names[i]);
            const char *const want[] = {"PATH=/usr/bin:/bin",
                                        "HOME=/home/u",
                                        "ECP_JOB_NAME=sp-job",
                                        "MASTER_ADDR=10.0.0.1",
                                        "MASTER_PORT=29500",
                                        "WORLD_SIZE=3",
                                        rank,
                                        node_rank,
                                        "LOCAL_RANK=0",
                                        cuda,
                                        nvidia,
                                        name,
                                        NULL};
            struct worker_place p = place_for(i, 3);
            struct envv e = {0};
            worker_env_build(&job, &p, base, &e);
            check_env(&e, want);
            envv_free(&e);
        }
        jobspec_free(&job);
    }
}

/* TF_CONFIG of env, parsed; checks it is compact (one line, no spaces). */
static json_t *tf_config_of(const struct envv *e)
{
    const char *s = envv_get(e, "TF_CONFIG");
    assert_non_null(s);
    assert_null(strchr(s, ' '));
    assert_null(strchr(s, '\n'));
    json_error_t jerr;
    json_t *root = json_loads(s, 0, &jerr);
    assert_non_null(root);
    return root;
}

/* The string array at cluster.<role> equals want (NULL-terminated). */
static void check_cluster(json_t *root, const char *role, const char *const *want)
{
    json_t *a = json_object_get(json_object_get(root, "cluster"), role);
    assert_true(json_is_array(a));
    size_t n = 0;
    while (want[n])
        n++;
    assert_int_equal(json_array_size(a), n);
    for (size_t i = 0; i < n; i++)
        assert_string_equal(json_string_value(json_array_get(a, i)), want[i]);
}

static void check_task(json_t *root, const char *type, int index)
{
    json_t *task = json_object_get(root, "task");
    assert_string_equal(json_string_value(json_object_get(task, "type")), type);
    assert_true(json_is_integer(json_object_get(task, "index")));
    assert_int_equal(json_integer_value(json_object_get(task, "index")), index);
    assert_int_equal(json_object_size(task), 2);
}

static void test_tensorflow_ps(void **state)
{
    static const char *const ps[] = {"10.0.0.1:2222", NULL};
    static const char *const workers3[] = {"10.0.0.2:2223", "10.0.0.3:2224", NULL};
    static const char *const workers2[] = {"10.0.0.2:2223", NULL};
    static const char *const names[] = {"ps-0", "worker-0", "worker-1"};
    struct jobspec job;
    make_job(&job, FRAMEWORK_TENSORFLOW_PS, "tf-ps");
    for (int replicas = 2; replicas <= 3; replicas++) {
        for (int i = 0; i < replicas; i++) {
            struct worker_place p = place_for(i, replicas);
            struct envv e = {0};
            worker_env_build(&job, &p, base, &e);
            char cuda[64], nvidia[64], name[64];
            snprintf(cuda, sizeof(cuda), "CUDA_VISIBLE_DEVICES=%s", devices[i]);
            snprintf(nvidia, sizeof(nvidia), "NVIDIA_VISIBLE_DEVICES=%s", devices[i]);
            snprintf(name, sizeof(name), "TRAINJOB_WORKER_NAME=%s", names[i]);
            char *tf = xasprintf("TF_CONFIG=%s", envv_get(&e, "TF_CONFIG"));
            const char *const want[] = {"PATH=/usr/bin:/bin",
                                        "HOME=/home/u",
                                        "ECP_JOB_NAME=tf-ps",
                                        tf,
                                        cuda,
                                        nvidia,
                                        name,
                                        NULL};
            check_env(&e, want);
            free(tf);

            json_t *root = tf_config_of(&e);
            assert_int_equal(json_object_size(json_object_get(root, "cluster")), 2);
            check_cluster(root, "ps", ps);
            check_cluster(root, "worker", replicas == 3 ? workers3 : workers2);
            check_task(root, i == 0 ? "ps" : "worker", i == 0 ? 0 : i - 1);
            json_decref(root);
            envv_free(&e);
        }
    }
    /* One replica: a parameter server alone, no worker list. */
    struct worker_place p = place_for(0, 1);
    struct envv e = {0};
    worker_env_build(&job, &p, base, &e);
    json_t *root = tf_config_of(&e);
    check_cluster(root, "ps", ps);
    assert_null(json_object_get(json_object_get(root, "cluster"), "worker"));
    check_task(root, "ps", 0);
    json_decref(root);
    envv_free(&e);
    jobspec_free(&job);
}

/* TensorFlow without a PS: every worker in "worker"; hosts and ports default. */
static void test_tensorflow_defaults(void **state)
{
    static const char *const workers[] = {"127.0.0.1:4000", "127.0.0.1:4001", "127.0.0.1:4002",
                                          NULL};
    struct jobspec job;
    make_job(&job, FRAMEWORK_TENSORFLOW, "tf");
    for (int i = 0; i < 3; i++) {
        struct worker_place p = {0};
        p.index = i;
        p.replicas = 3;
        p.master_port = 4000;
        struct envv e = {0};
        worker_env_build(&job, &p, NULL, &e);
        json_t *root = tf_config_of(&e);
        check_cluster(root, "worker", workers);
        assert_null(json_object_get(json_object_get(root, "cluster"), "ps"));
        check_task(root, "worker", i);
        json_decref(root);
        char name[32];
        snprintf(name, sizeof(name), "worker-%d", i);
        assert_string_equal(envv_get(&e, "TRAINJOB_WORKER_NAME"), name);
        assert_null(envv_get(&e, "MASTER_ADDR"));
        envv_free(&e);
    }
    jobspec_free(&job);
}

static void test_mpi(void **state)
{
    struct jobspec job;
    make_job(&job, FRAMEWORK_MPI, "mpi-run");
    for (int replicas = 2; replicas <= 3; replicas++) {
        for (int i = 0; i < replicas; i++) {
            struct worker_place p = place_for(i, replicas);
            p.hostfile = "/etc/mpi/hostfile";
            p.ssh_dir = "/sensecore/compute/platform/ssh/ssh_config";
            struct envv e = {0};
            worker_env_build(&job, &p, base, &e);
            char cuda[64], nvidia[64], name[64];
            snprintf(cuda, sizeof(cuda), "CUDA_VISIBLE_DEVICES=%s", devices[i]);
            snprintf(nvidia, sizeof(nvidia), "NVIDIA_VISIBLE_DEVICES=%s", devices[i]);
            snprintf(name, sizeof(name), "TRAINJOB_WORKER_NAME=worker-%d", i);
            const char *const want[] = {
                "PATH=/usr/bin:/bin",
                "HOME=/home/u",
                "ECP_JOB_NAME=mpi-run",
                "TRAINJOB_HOSTFILE=/etc/mpi/hostfile",
                "OMPI_MCA_orte_default_hostfile=/etc/mpi/hostfile",
                cuda,
                nvidia,
                name,
                "TRAINJOB_SSH_DIR=/sensecore/compute/platform/ssh/ssh_config",
                NULL};
            check_env(&e, want);
            envv_free(&e);
        }
    }
    /* Without a hostfile path there is nothing to point at. */
    struct worker_place p = place_for(0, 2);
    struct envv e = {0};
    worker_env_build(&job, &p, base, &e);
    assert_null(envv_get(&e, "TRAINJOB_HOSTFILE"));
    assert_null(envv_get(&e, "OMPI_MCA_orte_default_hostfile"));
    assert_null(envv_get(&e, "TRAINJOB_SSH_DIR"));
    envv_free(&e);
    jobspec_free(&job);
}

static void test_hostfile(void **state)
{
    struct strbuf sb = STRBUF_INIT;
    struct worker_place p = place_for(0, 3);
    worker_hostfile(&p, 8, &sb);
    assert_string_equal(strbuf_str(&sb), "10.0.0.1 slots=8\n10.0.0.2 slots=8\n10.0.0.3 slots=8\n");
    strbuf_reset(&sb);
    p = place_for(1, 2);
    worker_hostfile(&p, 1, &sb);
    assert_string_equal(strbuf_str(&sb), "10.0.0.1 slots=1\n10.0.0.2 slots=1\n");
    strbuf_reset(&sb);
    /* Locally every worker is on the master's address. */
    struct worker_place local = {0};
    local.replicas = 2;
    local.master_addr = "127.0.0.1";
    worker_hostfile(&local, 2, &sb);
    assert_string_equal(strbuf_str(&sb), "127.0.0.1 slots=2\n127.0.0.1 slots=2\n");
    strbuf_free(&sb);
}

/* The user's variables come last and replace the engine's base ones. */
static void test_user_env_last(void **state)
{
    struct jobspec job;
    make_job(&job, FRAMEWORK_PYTORCH_DDP, "pt-user");
    add_env(&job, "FOO", "bar");
    add_env(&job, "PATH", "/opt/bin");
    add_env(&job, "EMPTY", "");
    struct worker_place p = place_for(1, 2);
    struct envv e = {0};
    worker_env_build(&job, &p, base, &e);
    static const char *const want[] = {"PATH=/opt/bin",
                                       "HOME=/home/u",
                                       "ECP_JOB_NAME=pt-user",
                                       "MASTER_ADDR=10.0.0.1",
                                       "MASTER_PORT=29500",
                                       "WORLD_SIZE=2",
                                       "RANK=1",
                                       "NODE_RANK=1",
                                       "LOCAL_RANK=0",
                                       "CUDA_VISIBLE_DEVICES=1",
                                       "NVIDIA_VISIBLE_DEVICES=1",
                                       "TRAINJOB_WORKER_NAME=worker-0",
                                       "FOO=bar",
                                       "EMPTY=",
                                       NULL};
    check_env(&e, want);
    envv_free(&e);
    jobspec_free(&job);
}

/* The platform's variables replace inherited ones (a stray CUDA_VISIBLE_DEVICES). */
static void test_platform_over_base(void **state)
{
    static const char *const inherited[] = {
        "CUDA_VISIBLE_DEVICES=0,1,2,3", "RANK=7", "junk", "=x", "LANG=C.UTF-8", NULL};
    struct jobspec job;
    make_job(&job, FRAMEWORK_SENSEPARROTS_DDP, NULL);
    struct worker_place p = place_for(0, 2);
    p.devices = "";
    struct envv e = {0};
    worker_env_build(&job, &p, inherited, &e);
    static const char *const want[] = {"CUDA_VISIBLE_DEVICES=",
                                       "RANK=0",
                                       "LANG=C.UTF-8",
                                       "ECP_JOB_NAME=",
                                       "MASTER_ADDR=10.0.0.1",
                                       "MASTER_PORT=29500",
                                       "WORLD_SIZE=2",
                                       "NODE_RANK=0",
                                       "LOCAL_RANK=0",
                                       "NVIDIA_VISIBLE_DEVICES=none",
                                       "TRAINJOB_WORKER_NAME=master-0",
                                       NULL};
    check_env(&e, want);
    envv_free(&e);

    /* No devices at all (NULL) reads the same as "". */
    p.devices = NULL;
    worker_env_build(&job, &p, NULL, &e);
    assert_string_equal(envv_get(&e, "CUDA_VISIBLE_DEVICES"), "");
    assert_string_equal(envv_get(&e, "NVIDIA_VISIBLE_DEVICES"), "none");
    envv_free(&e);
    jobspec_free(&job);
}

static void test_names(void **state)
{
    static const struct {
        enum framework fw;
        const char *names[3];
    } cases[] = {
        {FRAMEWORK_PYTORCH_DDP, {"master-0", "worker-0", "worker-1"}},
        {FRAMEWORK_PYTORCH, {"master-0", "worker-0", "worker-1"}},
        {FRAMEWORK_SENSEPARROTS, {"master-0", "worker-0", "worker-1"}},
        {FRAMEWORK_SENSEPARROTS_DDP, {"master-0", "worker-0", "worker-1"}},
        {FRAMEWORK_TENSORFLOW_PS, {"ps-0", "worker-0", "worker-1"}},
        {FRAMEWORK_TENSORFLOW, {"worker-0", "worker-1", "worker-2"}},
        {FRAMEWORK_MPI, {"worker-0", "worker-1", "worker-2"}},
        {FRAMEWORK_UNSPECIFIED, {"worker-0", "worker-1", "worker-2"}},
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        struct jobspec job;
        make_job(&job, cases[c].fw, "n");
        for (int i = 0; i < 3; i++) {
            char buf[32];
            jobspec_worker_name(&job, i, buf, sizeof(buf));
            assert_string_equal(buf, cases[c].names[i]);
        }
        jobspec_free(&job);
    }
    /* A single PyTorch worker is still the master; a short buffer truncates. */
    struct jobspec job;
    make_job(&job, FRAMEWORK_PYTORCH_DDP, "n");
    char buf[32];
    jobspec_worker_name(&job, 0, buf, sizeof(buf));
    assert_string_equal(buf, "master-0");
    char small[5];
    jobspec_worker_name(&job, 12, small, sizeof(small));
    assert_string_equal(small, "work");
    jobspec_worker_name(&job, 12, small, 0);
    jobspec_worker_name(NULL, 4, buf, sizeof(buf));
    assert_string_equal(buf, "worker-4");
    jobspec_free(&job);
}

static void test_envv(void **state)
{
    struct envv e = {0};
    assert_null(envv_get(&e, "A"));
    envv_set(&e, "NODE_RANK", "1");
    envv_set(&e, "RANK_X", "2");
    assert_null(envv_get(&e, "RANK")); /* no match on a prefix or a suffix */
    envv_set(&e, "RANK", "3");
    assert_string_equal(envv_get(&e, "RANK"), "3");
    envv_set(&e, "NODE_RANK", "4"); /* replaced in place */
    envv_set(&e, "NULLVAL", NULL);
    assert_int_equal(e.n, 4);
    assert_string_equal(e.v[0], "NODE_RANK=4");
    assert_string_equal(e.v[3], "NULLVAL=");
    assert_null(e.v[4]);
    /* Many entries grow the array and keep it NULL-terminated. */
    for (int i = 0; i < 100; i++) {
        char name[16];
        snprintf(name, sizeof(name), "V%d", i);
        envv_set(&e, name, name);
    }
    assert_int_equal(e.n, 104);
    assert_string_equal(envv_get(&e, "V99"), "V99");
    assert_null(e.v[104]);
    envv_free(&e);
    assert_null(e.v);
    assert_int_equal(e.n, 0);
    envv_free(&e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pytorch_two_replicas),
        cmocka_unit_test(test_pytorch_style_three_replicas),
        cmocka_unit_test(test_tensorflow_ps),
        cmocka_unit_test(test_tensorflow_defaults),
        cmocka_unit_test(test_mpi),
        cmocka_unit_test(test_hostfile),
        cmocka_unit_test(test_user_env_last),
        cmocka_unit_test(test_platform_over_base),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_envv),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
