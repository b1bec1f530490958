/*
 * test_slurm_script: the Slurm batch script (api/slurm_script.c) without a
 * cluster. Hostile job text (quotes, $(…), backquotes, newlines) reaches the
 * worker as written and is never run by the supervisor's shell; the script's
 * fault decisions and their words are api/fault.c's for every action,
 * limit and code; worker names and the framework variables are
 * engine/worker_env.c's; the job directory refuses unsafe names; the gaps list
 * names every form rule Slurm cannot honour. The script's functions are run by
 * /bin/sh, sourced with --tj-functions (nothing is started).
 */
// clang-format off
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
// clang-format on

#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "api/fault.h"
#include "api/slurm_priv.h"
#include "api/slurm_script.h"
#include "engine/worker_env.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

static char tmpdir[] = "/tmp/test_slurm_script.XXXXXX";

static const char *const hostile[] = {
    "it's",
    "$(touch CANARY)",
    "`touch CANARY`",
    "\"double\" and \\backslash\\",
    "line1\nline2\n",
    "'''",
    "",
    "; touch CANARY; '",
    "${IFS}$((1+1))*?[a]~",
};

static int setup(void **state)
{
    (void)state;
    if (mkdtemp(tmpdir) == NULL)
        return -1;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char *cmd = xasprintf("rm -rf '%s'", tmpdir);
    int rc = system(cmd);
    free(cmd);
    return rc == 0 ? 0 : -1;
}

static const struct slurm_site site = {"/shared/jobs", "default", NULL, NULL, 0};

/* A job with a name, a framework, replicas workers, no rules. */
static void make_job(struct jobspec *job, enum framework fw, int replicas)
{
    jobspec_init(job);
    job->framework = fw;
    job->name = xstrdup("train-1");
    struct role *r = jobspec_add_role(job);
    r->name = xstrdup(JOBSPEC_ROLE_NAME);
    r->has_total_replicas = true;
    r->total_replicas = replicas;
    r->image_path = xstrdup(SLURM_HOST_IMAGE);
    r->startup_script = xstrdup("python train.py");
}

static void add_env(struct jobspec *job, const char *key, const char *value)
{
    struct env_var *v = jobspec_add_env(job);
    v->key = xstrdup(key);
    v->value = xstrdup(value);
}

static void add_rule(struct jobspec *job, const char *codes, enum ft_action action, bool mark)
{
    job->fault_tolerance.present = true;
    struct ft_rule *r = jobspec_add_rule(job);
    r->exit_codes = codes ? xstrdup(codes) : NULL;
    r->action = action;
    r->has_mark_node_unschedulable = true;
    r->mark_node_unschedulable = mark;
}

/* Renders job (must succeed) into a file in tmpdir; returns its path (caller frees). */
static char *render_to_file(const struct jobspec *job, const struct slurm_site *s)
{
    struct strbuf script = STRBUF_INIT;
    struct api_error err = {0};
    int rc = slurm_script_render(job, s, &script, NULL, &err);
    if (rc != 0)
        fail_msg("render failed: %s: %s", err.field, err.message);
    char *path = xasprintf("%s/script.sh", tmpdir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fwrite(script.buf, 1, script.len, f), script.len);
    assert_int_equal(fclose(f), 0);
    strbuf_free(&script);
    return path;
}

/*
 * Runs /bin/sh in tmpdir: sources script with --tj-functions, then runs body;
 * stdout into out. Returns the exit status.
 */
static int run_functions(const char *script, const char *body, struct strbuf *out)
{
    char *prog = xasprintf("set -- --tj-functions; . '%s'; %s", script, body);
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        close(fds[1]);
        if (chdir(tmpdir) != 0)
            _exit(126);
        execl("/bin/sh", "sh", "-c", prog, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    char buf[4096];
    ssize_t n;
    while ((n = read(fds[0], buf, sizeof buf)) > 0)
        strbuf_add(out, buf, (size_t)n);
    close(fds[0]);
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    free(prog);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static bool canary_exists(void)
{
    char *p = xasprintf("%s/CANARY", tmpdir);
    bool yes = access(p, F_OK) == 0;
    free(p);
    return yes;
}

/* Every hostile string, quoted, reads back as itself through sh. */
static void test_quote_roundtrip(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof hostile / sizeof hostile[0]; i++) {
        struct strbuf body = STRBUF_INIT, out = STRBUF_INIT;
        strbuf_adds(&body, "printf '%s' ");
        slurm_shell_quote(&body, hostile[i]);
        char *prog = xasprintf("cd '%s' && %s", tmpdir, strbuf_str(&body));
        FILE *p = popen(prog, "r");
        assert_non_null(p);
        char buf[256];
        size_t n;
        while ((n = fread(buf, 1, sizeof buf, p)) > 0)
            strbuf_add(&out, buf, n);
        assert_int_equal(pclose(p), 0);
        assert_string_equal(strbuf_str(&out), hostile[i]);
        assert_false(canary_exists());
        free(prog);
        strbuf_free(&body);
        strbuf_free(&out);
    }
}

/*
 * Hostile values in variables and the startup script: the script parses
 * (sh -n), sourcing it runs nothing of them, and each value arrives as written.
 */
static void test_hostile_job_text(void **state)
{
    (void)state;
    struct jobspec job;
    make_job(&job, FRAMEWORK_PYTORCH_DDP, 2);
    char key[32];
    for (size_t i = 0; i < sizeof hostile / sizeof hostile[0]; i++) {
        snprintf(key, sizeof key, "V%zu", i);
        add_env(&job, key, hostile[i]);
    }
    free(job.roles[0].startup_script);
    job.roles[0].startup_script = xstrdup("echo '$(touch CANARY)'\n`touch CANARY`\n\"'\\");
    char *path = render_to_file(&job, &site);
    struct strbuf out = STRBUF_INIT;
    char *check = xasprintf("sh -n '%s'", path);
    assert_int_equal(system(check), 0);
    free(check);

    struct strbuf body = STRBUF_INIT;
    strbuf_adds(&body, "tj_user_env; printf '%s\\0' \"$TJ_SCRIPT\"");
    for (size_t i = 0; i < sizeof hostile / sizeof hostile[0]; i++)
        strbuf_addf(&body, " \"$V%zu\"", i);
    assert_int_equal(run_functions(path, strbuf_str(&body), &out), 0);
    assert_false(canary_exists());
    const char *p = out.buf;
    assert_string_equal(p, job.roles[0].startup_script);
    p += strlen(p) + 1;
    for (size_t i = 0; i < sizeof hostile / sizeof hostile[0]; i++) {
        assert_true(p < out.buf + out.len);
        assert_string_equal(p, hostile[i]);
        p += strlen(p) + 1;
    }
    strbuf_free(&body);
    strbuf_free(&out);
    free(path);
    jobspec_free(&job);
}

/* A variable name a shell would parse, or one of the supervisor's own, is refused by field. */
static void test_env_names_refused(void **state)
{
    (void)state;
    static const char *const bad[] = {"A B", "X=$(id)", "TJ_SCRIPT", "1X", "", "SLURM_NTASKS"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct jobspec job;
        make_job(&job, FRAMEWORK_MPI, 1);
        add_env(&job, "OK", "1");
        add_env(&job, bad[i], "v");
        struct strbuf script = STRBUF_INIT;
        struct api_error err = {0};
        assert_int_equal(slurm_script_render(&job, &site, &script, NULL, &err), -1);
        assert_string_equal(err.field, "env[1].key");
        assert_int_equal(err.status, 400);
        strbuf_free(&script);
        jobspec_free(&job);
    }
}

/* Job directories: only plain names under an absolute root without % or \. */
static void test_jobdir(void **state)
{
    (void)state;
    char *d = slurm_jobdir_path("/shared/jobs/", "default", "train-1.v2");
    assert_string_equal(d, "/shared/jobs/default/train-1.v2");
    free(d);
    static const char *const names[] = {"..",      ".",   "a/b", "",    "-x",
                                        ".hidden", "a b", "a%j", "a\nb"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        assert_null(slurm_jobdir_path("/shared/jobs", "default", names[i]));
        assert_null(slurm_jobdir_path("/shared/jobs", names[i], "job"));
    }
    assert_null(slurm_jobdir_path(NULL, "default", "job"));
    assert_null(slurm_jobdir_path("relative/jobs", "default", "job"));
    assert_null(slurm_jobdir_path("/shared/%u/jobs", "default", "job"));
    assert_null(slurm_jobdir_path("/shared/a\\b", "default", "job"));
    assert_null(slurm_jobdir_path("/shared/../etc", "default", "job"));

    struct jobspec job;
    make_job(&job, FRAMEWORK_MPI, 1);
    free(job.name);
    job.name = xstrdup("../../etc");
    struct strbuf script = STRBUF_INIT;
    struct api_error err = {0};
    assert_int_equal(slurm_script_render(&job, &site, &script, NULL, &err), -1);
    assert_string_equal(err.field, "name");
    strbuf_free(&script);
    jobspec_free(&job);
}

/* One fault-tolerance case: rules, backoff limit (INT32_MIN: section absent). */
struct ft_case {
    int limit;
    struct {
        const char *codes;
        enum ft_action action;
        bool mark;
    } rules[4];
    size_t n;
};

/*
 * For each case, every exit code in a sample, with several restarts used: the
 * script's tj_decide gives fault_decide's outcome, restarts, node marking and
 * event text, byte for byte.
 */
static void test_decide_agrees(void **state)
{
    (void)state;
    static const struct ft_case cases[] = {
        {INT32_MIN, {{0}}, 0},
        {0, {{0}}, 0},
        {3, {{0}}, 0},
        {-1, {{0}}, 0},
        {5,
         {{"254,255", FT_ACTION_RESTART_POD, true},
          {"200-205", FT_ACTION_RESTART_JOB, false},
          {"1", FT_ACTION_FAIL_JOB, false}},
         3},
        {2, {{" 201 ", FT_ACTION_RESTART_POD, false}, {NULL, FT_ACTION_FAIL_JOB, true}}, 2},
        {-1, {{"1-3,x", FT_ACTION_FAIL_JOB, false}, {"", FT_ACTION_RESTART_POD, true}}, 2},
        {1,
         {{"1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23", FT_ACTION_RESTART_POD,
           true},
          {"137", FT_ACTION_UNSPECIFIED, true}},
         2},
    };
    static const int codes[] = {1, 2, 3, 7, 23, 137, 139, 143, 200, 201, 205, 254, 255};
    static const int used[] = {0, 1, 2, 4, 5, 98};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        struct jobspec job;
        make_job(&job, FRAMEWORK_PYTORCH_DDP, 2);
        if (cases[c].limit != INT32_MIN) {
            job.fault_tolerance.present = true;
            job.fault_tolerance.has_backoff_limit = true;
            job.fault_tolerance.backoff_limit = cases[c].limit;
        }
        for (size_t r = 0; r < cases[c].n; r++)
            add_rule(&job, cases[c].rules[r].codes, cases[c].rules[r].action,
                     cases[c].rules[r].mark);
        char *path = render_to_file(&job, &site);
        struct strbuf body = STRBUF_INIT, out = STRBUF_INIT, want = STRBUF_INIT;
        for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
            for (size_t u = 0; u < sizeof used / sizeof used[0]; u++) {
                strbuf_addf(&body,
                            "tj_decide %d %d worker-0; printf '%%s|%%s|%%s|%%s|%%s\\n' "
                            "\"$TJ_D_OUTCOME\" \"$TJ_D_USED\" \"$TJ_D_MARK\" \"$TJ_D_RULE\" "
                            "\"$TJ_D_TEXT\"\n",
                            codes[i], used[u]);
                struct fault_decision d;
                fault_decide(&job.fault_tolerance, used[u], "worker-0", codes[i], &d);
                const char *o = d.outcome == FAULT_RESTART_POD   ? "RESTART_POD"
                                : d.outcome == FAULT_RESTART_JOB ? "RESTART_JOB"
                                                                 : "FAIL_JOB";
                strbuf_addf(&want, "%s|%d|%d|%d|%s\n", o, d.restarts_used_after, d.mark_node,
                            d.rule + 1, d.text);
            }
        }
        assert_int_equal(run_functions(path, strbuf_str(&body), &out), 0);
        assert_string_equal(strbuf_str(&out), strbuf_str(&want));
        strbuf_free(&body);
        strbuf_free(&out);
        strbuf_free(&want);
        free(path);
        jobspec_free(&job);
    }
}

/*
 * The framework variables the supervisor exports for each worker are the ones
 * worker_env_build gives the same worker on the same hosts and ports (the
 * device variables come from Slurm inside the step).
 */
static void test_env_agrees(void **state)
{
    (void)state;
    static const enum framework fws[] = {FRAMEWORK_PYTORCH_DDP, FRAMEWORK_TENSORFLOW_PS,
                                         FRAMEWORK_TENSORFLOW, FRAMEWORK_SENSEPARROTS,
                                         FRAMEWORK_UNSPECIFIED};
    static const char *const names[] = {
        "ECP_JOB_NAME", "MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK",
        "NODE_RANK",    "LOCAL_RANK",  "TF_CONFIG",   "USER_VAR",   "TRAINJOB_WORKER_NAME",
    };
    static const char *const hosts[] = {"10.0.0.1", "10.0.0.2", "n3.cluster"};
    static const int ports[] = {20064, 20065, 20066};
    for (size_t f = 0; f < sizeof fws / sizeof fws[0]; f++) {
        for (int replicas = 1; replicas <= 3; replicas++) {
            struct jobspec job;
            make_job(&job, fws[f], replicas);
            add_env(&job, "USER_VAR", "a 'b' $c");
            char *path = render_to_file(&job, &site);
            for (int i = 0; i < replicas; i++) {
                struct strbuf body = STRBUF_INIT, out = STRBUF_INIT;
                strbuf_addf(&body,
                            "TJ_ADDR_0=%s TJ_ADDR_1=%s TJ_ADDR_2=%s TJ_MASTER_PORT=%d; "
                            "tj_worker_env %d; ",
                            hosts[0], hosts[1], hosts[2], ports[0], i);
                for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
                    strbuf_addf(&body, "printf '%%s=%%s\\n' %s \"${%s-(unset)}\"; ", names[k],
                                names[k]);
                assert_int_equal(run_functions(path, strbuf_str(&body), &out), 0);

                struct worker_place place = {0};
                place.index = i;
                place.replicas = replicas;
                place.master_addr = hosts[0];
                place.master_port = ports[0];
                place.hosts = hosts;
                place.ports = ports;
                struct envv env = {0};
                worker_env_build(&job, &place, NULL, &env);
                struct strbuf want = STRBUF_INIT;
                for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
                    const char *v = envv_get(&env, names[k]);
                    strbuf_addf(&want, "%s=%s\n", names[k], v ? v : "(unset)");
                }
                assert_string_equal(strbuf_str(&out), strbuf_str(&want));
                envv_free(&env);
                strbuf_free(&want);
                strbuf_free(&body);
                strbuf_free(&out);
            }
            free(path);
            jobspec_free(&job);
        }
    }
}

/* The launcher template: {image} replaced and quoted as one word; none for the host image. */
static void test_launcher(void **state)
{
    (void)state;
    struct jobspec job;
    make_job(&job, FRAMEWORK_MPI, 1);
    free(job.roles[0].image_path);
    job.roles[0].image_path = xstrdup("reg.io/img:1'; touch CANARY; '");
    struct slurm_site s = {"/shared/jobs", "default", "apptainer exec  --nv {image}", NULL, 0};
    struct strbuf script = STRBUF_INIT, gaps = STRBUF_INIT;
    struct api_error err = {0};
    assert_int_equal(slurm_script_render(&job, &s, &script, &gaps, &err), 0);
    assert_non_null(strstr(strbuf_str(&script),
                           "tj-launch \"$_mk\" \"$TJ_NEED\" 'apptainer' 'exec' '--nv' "
                           "'reg.io/img:1'\\''; touch CANARY; '\\''' /bin/sh"));
    assert_null(strstr(strbuf_str(&gaps), "image_path"));
    strbuf_reset(&script);
    strbuf_reset(&gaps);

    /* no launcher: the image is a gap, the host runs the script */
    s.launcher = NULL;
    assert_int_equal(slurm_script_render(&job, &s, &script, &gaps, &err), 0);
    assert_non_null(strstr(strbuf_str(&script), "tj-launch \"$_mk\" \"$TJ_NEED\" /bin/sh"));
    assert_non_null(strstr(strbuf_str(&gaps), "roles[0].image_path: not used"));
    strbuf_reset(&script);
    strbuf_reset(&gaps);

    /* the host image never goes through the launcher */
    free(job.roles[0].image_path);
    job.roles[0].image_path = xstrdup(SLURM_HOST_IMAGE);
    s.launcher = "apptainer exec {image}";
    assert_int_equal(slurm_script_render(&job, &s, &script, &gaps, &err), 0);
    assert_non_null(strstr(strbuf_str(&script), "tj-launch \"$_mk\" \"$TJ_NEED\" /bin/sh"));
    assert_int_equal(gaps.len, 0);
    strbuf_free(&script);
    strbuf_free(&gaps);
    jobspec_free(&job);
}

/* Renders job on s, expecting a refusal naming field with a message holding words. */
static void expect_refused(const struct jobspec *job, const struct slurm_site *s, const char *field,
                           const char *words)
{
    struct strbuf script = STRBUF_INIT, gaps = STRBUF_INIT;
    struct api_error err = {0};
    assert_int_equal(slurm_script_render(job, s, &script, &gaps, &err), -1);
    assert_int_equal(err.status, 400);
    if (strcmp(err.field, field) != 0 || strstr(err.message, words) == NULL)
        fail_msg("want %s \"%s\", got %s: %s", field, words, err.field, err.message);
    strbuf_free(&script);
    strbuf_free(&gaps);
}

/*
 * Volumes are the context's: a worker in the node's own environment reads a
 * volume where the nodes see it, so its mount path must be that directory; a
 * worker run through the launcher gets each mount bound by {mounts}. Anything
 * else is refused, naming the field — never a job reading an empty /data.
 */
static void test_mounts(void **state)
{
    (void)state;
    static const struct slurm_volume vols[] = {{"datasets", "/lustre/ds/"},
                                               {"ckpt", "/lustre/./ck"}};
    struct slurm_site s = {"/shared/jobs", "default", NULL, vols, 2};
    struct jobspec job;
    make_job(&job, FRAMEWORK_PYTORCH_DDP, 2);
    struct mount *m = jobspec_add_mount(&job);
    m->type = MOUNT_TYPE_PV_AFS;
    m->id = xstrdup("datasets");
    m->subdir = xstrdup("/imagenet");
    m->mount_path = xstrdup("/lustre/ds//imagenet/");
    struct strbuf script = STRBUF_INIT, gaps = STRBUF_INIT;
    struct api_error err = {0};
    /* host: in place (spelled with extra slashes) is the mount */
    assert_int_equal(slurm_script_render(&job, &s, &script, &gaps, &err), 0);
    assert_int_equal(gaps.len, 0);
    assert_non_null(strstr(strbuf_str(&script), "tj-launch \"$_mk\" \"$TJ_NEED\" /bin/sh"));

    /* host: anywhere else nothing would put it */
    free(m->mount_path);
    m->mount_path = xstrdup("/data");
    expect_refused(&job, &s, "mount[0].mount_path", "is at /lustre/ds/imagenet");
    /* a launcher in the context is the way out, said so */
    s.launcher = "apptainer exec --bind {mounts} {image}";
    expect_refused(&job, &s, "mount[0].mount_path", "the context's launcher");

    /* through the launcher: the job directory, then each mount, as one word */
    free(job.roles[0].image_path);
    job.roles[0].image_path = xstrdup("reg.io/pytorch:24.01");
    struct mount *m2 = jobspec_add_mount(&job);
    m = &job.mount[0]; /* the list may have moved */
    m2->id = xstrdup("ckpt");
    m2->mount_path = xstrdup("/ckpt");
    assert_int_equal(slurm_script_render(&job, &s, &script, &gaps, &err), 0);
    assert_non_null(strstr(strbuf_str(&script),
                           "'apptainer' 'exec' '--bind' '/shared/jobs/default/train-1:"
                           "/shared/jobs/default/train-1,/lustre/ds/imagenet:/data,"
                           "/lustre/ck:/ckpt' 'reg.io/pytorch:24.01' /bin/sh"));
    assert_int_equal(gaps.len, 0);

    /* a launcher that cannot bind them */
    s.launcher = "apptainer exec {image}";
    expect_refused(&job, &s, "mount[0]", "has no {mounts}");
    /* Pyxis: srun options, before the step's wrapper */
    s.launcher = "--container-image={image} --container-mounts={mounts}";
    strbuf_reset(&script);
    assert_int_equal(slurm_script_render(&job, &s, &script, &gaps, &err), 0);
    assert_non_null(strstr(strbuf_str(&script),
                           "\"$TJ_SRUN\" \"$@\" '--container-image=reg.io/pytorch:24.01' "
                           "'--container-mounts=/shared/jobs/default/train-1:/shared/jobs/"
                           "default/train-1,/lustre/ds/imagenet:/data,/lustre/ck:/ckpt' "
                           "/bin/sh -c \"$TJ_LAUNCH\" tj-launch \"$_mk\" \"$TJ_NEED\" /bin/sh -c"));

    /* what a bind cannot carry, and what is no directory */
    free(m2->mount_path);
    m2->mount_path = xstrdup("/ck:pt");
    expect_refused(&job, &s, "mount[1].mount_path", "',' and ':'");
    free(m2->mount_path);
    m2->mount_path = xstrdup("/ckpt");
    free(m->subdir);
    m->subdir = xstrdup("/imagenet/../../etc");
    expect_refused(&job, &s, "mount[0].subdir", "'..'");
    free(m->subdir);
    m->subdir = NULL;

    /* volumes the context does not name */
    free(m2->id);
    m2->id = xstrdup("scratch");
    expect_refused(&job, &s, "mount[1].id", "its volumes: datasets, ckpt");
    s.volume_count = 0;
    expect_refused(&job, &s, "mount[0].id", "the context names no volumes");

    /* srun options without {mounts}: the wrapper in the container could not write its records */
    s.launcher = "--container-image={image}";
    expect_refused(&job, &s, "roles[0].image_path", "add --container-mounts={mounts}");
    s.launcher = "--container-image={image} --container-mounts={mounts}";

    /* no mounts: {mounts} still binds the job directory (the MPI hostfile is there) */
    jobspec_free(&job);
    make_job(&job, FRAMEWORK_MPI, 2);
    free(job.roles[0].image_path);
    job.roles[0].image_path = xstrdup("reg.io/mpi:1");
    strbuf_reset(&script);
    assert_int_equal(slurm_script_render(&job, &s, &script, &gaps, &err), 0);
    assert_non_null(strstr(strbuf_str(&script), "'--container-mounts=/shared/jobs/default/train-1:"
                                                "/shared/jobs/default/train-1' /bin/sh"));
    strbuf_free(&script);
    strbuf_free(&gaps);
    jobspec_free(&job);
}

/* Every form rule Slurm cannot honour is one line; a plain job has none. */
static void test_gaps(void **state)
{
    (void)state;
    struct jobspec job;
    make_job(&job, FRAMEWORK_PYTORCH_DDP, 2);
    add_rule(&job, "254", FT_ACTION_RESTART_POD, false);
    struct strbuf script = STRBUF_INIT, gaps = STRBUF_INIT;
    struct api_error err = {0};
    assert_int_equal(slurm_script_render(&job, &site, &script, &gaps, &err), 0);
    assert_int_equal(gaps.len, 0);

    job.scheduling.present = true;
    job.scheduling.scoring_strategy = SCORING_MOST_ALLOCATED;
    job.resource_pool.present = true;
    job.resource_pool.vpc_id = xstrdup("vpc-1");
    /* a mount of a context volume, where the node sees it: honoured, no gap */
    struct mount *m = jobspec_add_mount(&job);
    m->type = MOUNT_TYPE_PV_AFS;
    m->id = xstrdup("afs-1");
    m->mount_path = xstrdup("/data");
    static const struct slurm_volume vols[] = {{"afs-1", "/data"}};
    struct slurm_site with = site;
    with.volumes = vols;
    with.volume_count = 1;
    add_rule(&job, "250", FT_ACTION_RESTART_POD, true);
    job.ssh.present = true;
    job.ssh.has_auto_key_setup = true;
    job.ssh.auto_key_setup = true;
    add_env(&job, "SRUN_CPUS_PER_TASK", "99");
    add_env(&job, "NCCL_DEBUG", "INFO");
    strbuf_reset(&script);
    assert_int_equal(slurm_script_render(&job, &with, &script, &gaps, &err), 0);
    const char *g = strbuf_str(&gaps);
    static const char *const want[] = {
        "scheduling.scoring_strategy: MOST_ALLOCATED is not applied",
        "resource_pool.vpc_id: ignored",
        "fault_tolerance.rules[1]: RESTART_POD with mark_node_unschedulable requeues the whole job",
        "ssh.auto_key_setup: no keys are set up",
        "env[0].key: SRUN_CPUS_PER_TASK is also read by the supervisor's srun",
    };
    size_t lines = 0;
    for (const char *p = g; *p; p++)
        lines += *p == '\n';
    assert_int_equal(lines, sizeof want / sizeof want[0]);
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        if (strstr(g, want[i]) == NULL)
            fail_msg("no gap \"%s\" in:\n%s", want[i], g);
    strbuf_free(&script);
    strbuf_free(&gaps);
    jobspec_free(&job);
}

/*
 * The job directory is written by the job's user: a state.json or worker record
 * with shell text, several matches or bad node names gives defaults, runs nothing.
 */
static void test_hostile_state(void **state)
{
    (void)state;
    struct jobspec job;
    make_job(&job, FRAMEWORK_PYTORCH_DDP, 1);
    char *path = render_to_file(&job, &site);
    char *jd = xasprintf("%s/jd", tmpdir);
    char *cmd =
        xasprintf("mkdir -p '%s/workers' && cd '%s' && "
                  "printf '%%s\\n' '{\"restarts\":1,\"runs\":2,' '\"restarts\":2,\"marked\":"
                  "[\"n1\",\"$(touch CANARY)\",\"a b\",\";x\",\"n-2.x\"]}' >state.json && "
                  "printf '%%s\\n' '{\"restarts\":3,' '\"restarts\":4,' >workers/master-0.json",
                  jd, jd);
    assert_int_equal(system(cmd), 0);
    struct strbuf body = STRBUF_INIT, out = STRBUF_INIT;
    strbuf_addf(&body,
                "TJ_JOBDIR='%s'; tj_load_state; printf '%%s|%%s|%%s' \"$TJ_RESTARTS\" "
                "\"$TJ_MARKED\" \"$TJ_RUNS\"",
                jd);
    assert_int_equal(run_functions(path, strbuf_str(&body), &out), 0);
    assert_string_equal(strbuf_str(&out), "0|n1 n-2.x|2");
    assert_false(canary_exists());
    strbuf_free(&body);
    strbuf_free(&out);
    free(cmd);
    free(jd);
    free(path);
    jobspec_free(&job);
}

/*
 * A worker's last state (issue 22): the supervisor keeps its last end of its
 * own and the fault decision in its record, "last", and reads it back after a
 * requeue; the driver's reader turns it into worker_info.last_state.
 */
static void test_last_state(void **state)
{
    (void)state;
    struct jobspec job;
    make_job(&job, FRAMEWORK_PYTORCH_DDP, 2);
    add_rule(&job, "201", FT_ACTION_RESTART_POD, false);
    job.fault_tolerance.has_backoff_limit = true;
    job.fault_tolerance.backoff_limit = 3;
    char *path = render_to_file(&job, &site);
    char *jd = xasprintf("%s/last", tmpdir);
    char *cmd = xasprintf("mkdir -p '%s/workers'", jd);
    assert_int_equal(system(cmd), 0);
    struct strbuf body = STRBUF_INIT, out = STRBUF_INIT;
    strbuf_addf(&body,
                "TJ_JOBDIR='%s'; TJ_NODE_1=n2 TJ_PHASE_1=Failed TJ_RESTARTS_1=0 TJ_EXIT_1=201 "
                "TJ_SIG_1= TJ_STARTED_1=2026-01-01T00:00:00Z TJ_ENDED_1=2026-01-01T00:00:05Z "
                "TJ_ATTEMPT_1=1 TJ_LAST_1=; tj_decide 201 0 worker-0; "
                "TJ_RULE_1=$TJ_D_RULEDESC; tj_last 1 201 decided; tj_record 1; "
                "TJ_PHASE_1=Running TJ_EXIT_1= TJ_ATTEMPT_1=2; tj_record 1; "
                "tj_read_last \"$TJ_JOBDIR/workers/worker-0.json\"; printf '%%s' \"$TJ_R\"",
                jd);
    assert_int_equal(run_functions(path, strbuf_str(&body), &out), 0);
    /* Read back as a requeued supervisor does: the whole object. */
    json_t *last = json_loads(strbuf_str(&out), 0, NULL);
    assert_non_null(last);
    assert_int_equal(json_integer_value(json_object_get(last, "exit_code")), 201);
    assert_int_equal(json_integer_value(json_object_get(last, "rule")), 1);
    assert_string_equal(json_string_value(json_object_get(last, "action")), "RESTART_POD");
    json_decref(last);
    /* As the driver reads it, running again. */
    struct worker_list wl = {0};
    assert_int_equal(slurm_workers_from_dir(jd, getuid(), &wl), 1);
    const struct worker_last_state *ls = &wl.workers[0].last_state;
    assert_true(ls->present);
    assert_string_equal(worker_phase_text(&wl.workers[0]), "Running");
    assert_int_equal(ls->exit_code, 201);
    assert_true(ls->has_rule);
    assert_int_equal(ls->rule, 1);
    assert_string_equal(ls->action, "RESTART_POD");
    assert_string_equal(ls->finish_time, "2026-01-01T00:00:05Z");
    assert_non_null(strstr(ls->message, "restarting worker-0"));
    worker_list_free(&wl);
    strbuf_free(&body);
    strbuf_free(&out);
    free(cmd);
    free(jd);
    free(path);
    jobspec_free(&job);
}

/* Every event line is one JSON object, whatever the message holds. */
static void test_event_json(void **state)
{
    (void)state;
    struct jobspec job;
    make_job(&job, FRAMEWORK_PYTORCH_DDP, 1);
    char *path = render_to_file(&job, &site);
    char *jd = xasprintf("%s/ev", tmpdir);
    char *cmd = xasprintf("mkdir -p '%s'", jd);
    assert_int_equal(system(cmd), 0);
    struct strbuf body = STRBUF_INIT, out = STRBUF_INIT;
    strbuf_addf(&body,
                "TJ_JOBDIR='%s'; tj_event Warning Test FAULT 'worker-0' "
                "\"$(printf 'a \"q\" \\\\b\\tt\\nnext\\001\\033[31m €')\" '\"exit_code\":3' "
                "2>/dev/null; cat \"$TJ_JOBDIR/events.jsonl\"",
                jd);
    assert_int_equal(run_functions(path, strbuf_str(&body), &out), 0);
    json_error_t jerr;
    json_t *e = json_loads(strbuf_str(&out), 0, &jerr);
    if (e == NULL)
        fail_msg("not JSON (%s): %s", jerr.text, strbuf_str(&out));
    assert_string_equal(json_string_value(json_object_get(e, "message")),
                        "a \"q\" \\b\tt\nnext[31m €");
    assert_string_equal(json_string_value(json_object_get(e, "type")), "Warning");
    assert_string_equal(json_string_value(json_object_get(e, "kind")), "FAULT");
    assert_string_equal(json_string_value(json_object_get(e, "worker")), "worker-0");
    assert_int_equal(json_integer_value(json_object_get(e, "exit_code")), 3);
    assert_int_equal(out.buf[out.len - 1], '\n');
    assert_null(memchr(out.buf, '\n', out.len - 1)); /* one line */
    json_decref(e);
    strbuf_free(&body);
    strbuf_free(&out);
    free(cmd);
    free(jd);
    free(path);
    jobspec_free(&job);
}

/*
 * How a step ended, told apart (tj_outcome over the step wrapper's records):
 * the wrapper records a missing launcher (.fail), the start and the exit; no
 * exit record means the step was killed under it — srun may then say 0, and
 * it counts as 137; no start record with srun failing is srun's own error.
 * The worker in the batch step has only the checks' record.
 */
static void test_outcome(void **state)
{
    (void)state;
    struct jobspec job;
    make_job(&job, FRAMEWORK_PYTORCH_DDP, 2); /* workers in srun steps */
    char *path = render_to_file(&job, &site);
    struct strbuf out = STRBUF_INIT;
    const char *body =
        "TJ_RUN=$(pwd)/oc; rm -rf oc; mkdir oc; m=oc/w;"
        /* the wrapper: a launcher not on the node, then a worker exiting 3 */
        "sh -c \"$TJ_LAUNCH\" tj-launch $m '' tj-no-such-prog x 2>/dev/null; echo \"fail=$?\";"
        "tj_outcome 0 1 $m 127; echo \"$TJ_O_KIND $TJ_O_RC $(cat oc/why.0.1)\"; rm -f $m.fail "
        "$m.start $m.exit;"
        "sh -c \"$TJ_LAUNCH\" tj-launch $m '' /etc/passwd 2>/dev/null; tj_outcome 0 1 $m 127;"
        "echo \"$TJ_O_KIND $(cat oc/why.0.1)\"; rm -f $m.fail $m.start $m.exit;"
        /* a volume's directory missing on the node: never started, the directory named */
        "sh -c \"$TJ_LAUNCH\" tj-launch $m \"$(pwd)/oc\n/no/such/vol*\" /bin/sh -c 'echo ran > "
        "oc/ran' 2>/dev/null;"
        "tj_outcome 0 1 $m 127; [ -e oc/ran ] && echo ran;"
        "echo \"$TJ_O_KIND $(cat oc/why.0.1)\"; rm -f $m.fail $m.start $m.exit;"
        "sh -c \"$TJ_LAUNCH\" tj-launch $m \"$(pwd)/oc\" /bin/sh -c 'exit 3'; echo \"rc=$? $(cat "
        "$m.exit)\";"
        "tj_outcome 0 2 $m 3; echo \"$TJ_O_KIND $TJ_O_RC\";"
        /* srun said 0 but the worker never recorded its end: cancelled under it */
        "rm -f $m.exit; tj_outcome 0 3 $m 0; echo \"$TJ_O_KIND $TJ_O_RC\";"
        "tj_outcome 0 4 $m 143; echo \"$TJ_O_KIND $TJ_O_RC\";"
        /* Slurm cancelled the step after the wrapper saw the worker die: still killed */
        "echo 0 > $m.exit; printf 'srun: Job step aborted: Waiting up to 7 seconds for job step "
        "to finish.\\n' > oc/srun.0.5; tj_outcome 0 5 $m 0; echo \"$TJ_O_KIND $TJ_O_RC\";"
        "echo 137 > $m.exit; tj_outcome 0 5 $m 137; echo \"$TJ_O_KIND $TJ_O_RC\";"
        /* the record is the worker's own code, whatever srun says */
        "echo 201 > $m.exit; tj_outcome 0 50 $m 0; echo \"$TJ_O_KIND $TJ_O_RC\";"
        "echo 'x; 9' > $m.exit; tj_outcome 0 6 $m 0; echo \"$TJ_O_KIND $TJ_O_RC\";"
        /* no start: srun's own error, or a cancel before the worker started */
        "rm -f $m.fail $m.start $m.exit; printf 'srun: error: n1: task 0: Exited with exit code "
        "1\\n"
        "srun: error: Unable to create step for job 7: More processors requested than "
        "permitted\\n' > oc/srun.0.7; tj_outcome 0 7 $m 1; echo \"$TJ_O_KIND $TJ_O_RC $(cat "
        "oc/why.0.7)\";"
        ": > oc/srun.0.8; tj_outcome 0 8 $m 2; echo \"$TJ_O_KIND $TJ_O_RC $(cat oc/why.0.8)\";"
        "tj_outcome 0 9 $m 0; echo \"$TJ_O_KIND $TJ_O_RC\"";
    assert_int_equal(run_functions(path, body, &out), 0);
    assert_string_equal(strbuf_str(&out),
                        "fail=127\n"
                        "nostart 127 tj-no-such-prog: not found on the node\n"
                        "nostart /etc/passwd: not an executable file on the node\n"
                        "nostart /no/such/vol*: not a directory (a volume of the job) on the node\n"
                        "rc=3 3\n"
                        "exit 3\n"
                        "killed 137\n"
                        "killed 143\n"
                        "killed 137\n"
                        "killed 137\n"
                        "exit 201\n"
                        "killed 137\n"
                        "nostart 1 Unable to create step for job 7: More processors requested "
                        "than permitted\n"
                        "nostart 2 srun exited 2 before the worker ran\n"
                        "killed 137\n");
    strbuf_free(&out);
    free(path);
    jobspec_free(&job);

    /* The worker in the batch step (TJ_LOCAL) has no start or exit record: its
     * subshell's status is the worker's, 0 included; only failed checks say nostart. */
    make_job(&job, FRAMEWORK_PYTORCH_DDP, 1);
    path = render_to_file(&job, &site);
    body = "TJ_RUN=$(pwd)/oc; rm -rf oc; mkdir oc; m=oc/w; TJ_LOCAL=1;"
           "tj_outcome 0 1 $m 0; echo \"$TJ_O_KIND $TJ_O_RC\";"
           "tj_outcome 0 2 $m 143; echo \"$TJ_O_KIND $TJ_O_RC\";"
           "sh -c \"$TJ_CHECK\" tj-check $m '' tj-no-such-prog 2>/dev/null;"
           "tj_outcome 0 3 $m 127; echo \"$TJ_O_KIND $TJ_O_RC $(cat oc/why.0.3)\"";
    assert_int_equal(run_functions(path, body, &out), 0);
    assert_string_equal(strbuf_str(&out), "exit 0\n"
                                          "exit 143\n"
                                          "nostart 127 tj-no-such-prog: not found on the node\n");
    strbuf_free(&out);
    free(path);
    jobspec_free(&job);
}

/*
 * The supervisor's clock: tj_utc formats seconds as date(1) does, across
 * leap days and centuries; tj_clock reads the time with one date(1) for as
 * many readings as it takes, and agrees with this process's clock.
 */
static void test_clock(void **state)
{
    (void)state;
    static const long long at[] = {0,          59,         86399,      951782399,   951782400,
                                   951868800,  1709251199, 1709251200, 1735689599,  4107542399,
                                   4107542400, 4102444800, 1764903600, 253402300799};
    struct jobspec job;
    make_job(&job, FRAMEWORK_PYTORCH_DDP, 1);
    char *path = render_to_file(&job, &site);
    struct strbuf body = STRBUF_INIT, out = STRBUF_INIT, want = STRBUF_INIT;
    for (size_t i = 0; i < sizeof at / sizeof *at; i++) {
        time_t t = (time_t)at[i];
        struct tm tm;
        char buf[64];
        assert_non_null(gmtime_r(&t, &tm));
        assert_true(strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm) > 0);
        strbuf_addf(&want, "%s\n", buf);
        strbuf_addf(&body, "TJ_S=%lld; tj_utc; echo \"$TJ_T\"; ", at[i]);
    }
    assert_int_equal(run_functions(path, strbuf_str(&body), &out), 0);
    assert_string_equal(strbuf_str(&out), strbuf_str(&want));

    /* three readings, a date(1) that logs each start */
    char *bin = xasprintf("%s/clockbin", tmpdir);
    char *cmd = xasprintf("mkdir -p '%s' && printf '#!/bin/sh\\necho date >> \"%s/dates\"\\n"
                          "exec /bin/date \"$@\"\\n' > '%s/date' && chmod 755 '%s/date' && "
                          "rm -f '%s/dates'",
                          bin, bin, bin, bin, bin);
    assert_int_equal(system(cmd), 0);
    free(cmd);
    strbuf_reset(&body);
    strbuf_reset(&out);
    strbuf_addf(&body,
                "PATH='%s'; tj_clock; a=$TJ_S; tj_clock; tj_clock; "
                "echo \"$a $TJ_S $TJ_T\"",
                bin);
    /* the precise clock: time(2) is the tick's, up to a tick behind */
    struct timespec t0, t1;
    assert_int_equal(clock_gettime(CLOCK_REALTIME, &t0), 0);
    assert_int_equal(run_functions(path, strbuf_str(&body), &out), 0);
    assert_int_equal(clock_gettime(CLOCK_REALTIME, &t1), 0);
    long long a = -1, s = -1;
    char t[64] = "";
    if (sscanf(strbuf_str(&out), "%lld %lld %63s", &a, &s, t) != 3)
        fail_msg("tj_clock printed: %s", strbuf_str(&out));
    /* the base is the epoch in hundredths and /proc/uptime moves it on in hundredths:
     * a reading is never a second off, and ahead of the time by a hundredth at most */
    long long before = (long long)t0.tv_sec, after = (long long)t1.tv_sec;
    if (t1.tv_nsec >= 990000000L)
        after++;
    if (!(a >= before && a <= s && s <= after))
        fail_msg("readings %lld and %lld, not within %lld.%09ld and %lld.%09ld", a, s,
                 (long long)t0.tv_sec, t0.tv_nsec, (long long)t1.tv_sec, t1.tv_nsec);
    time_t st = (time_t)s;
    struct tm tm;
    char buf[64];
    assert_non_null(gmtime_r(&st, &tm));
    assert_true(strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm) > 0);
    assert_string_equal(t, buf);
    char *log = xasprintf("%s/dates", bin);
    FILE *f = fopen(log, "r");
    assert_non_null(f);
    int n = 0;
    char line[32];
    while (fgets(line, sizeof line, f))
        n++;
    fclose(f);
    assert_int_equal(n, 1);
    free(log);
    free(bin);
    strbuf_free(&body);
    strbuf_free(&out);
    strbuf_free(&want);
    free(path);
    jobspec_free(&job);
}

/* The lines of the file at path, into out (a small file). */
static void read_small(const char *path, struct strbuf *out)
{
    strbuf_reset(out);
    FILE *f = fopen(path, "r");
    char buf[512];
    size_t n;
    while (f && (n = fread(buf, 1, sizeof buf, f)) > 0)
        strbuf_add(out, buf, n);
    if (f)
        fclose(f);
}

/* tj_clock once in a new sh (a job's supervisor of its own) with clk's environment; its TJ_S. */
static long long clock_job(const char *script, const char *env)
{
    struct strbuf body = STRBUF_INIT, out = STRBUF_INIT;
    strbuf_addf(&body, "%s tj_clock; echo \"$TJ_S\"", env);
    assert_int_equal(run_functions(script, strbuf_str(&body), &out), 0);
    long long s = atoll(strbuf_str(&out));
    strbuf_free(&body);
    strbuf_free(&out);
    return s;
}

/*
 * The next job of a user on a node takes the clock's base the last one took
 * (base in TMPDIR's trainjob-clock.UID, a directory of the user's own, mode
 * 700) and starts no date(1), when it is from this boot and less than an
 * hour old. A base of another boot, or malformed, is taken anew; a directory
 * there that is a link or another user's is not used and nothing is written
 * through or into it; without SLURM_JOB_UID nothing is kept.
 */
static void test_clock_kept(void **state)
{
    (void)state;
    struct jobspec job;
    make_job(&job, FRAMEWORK_PYTORCH_DDP, 1);
    char *path = render_to_file(&job, &site);
    char *bin = xasprintf("%s/keptbin", tmpdir), *clk = xasprintf("%s/keptclk", tmpdir);
    char *cmd = xasprintf("mkdir -p '%s' '%s' && printf '#!/bin/sh\\necho date >> \"%s/dates\"\\n"
                          "exec /bin/date \"$@\"\\n' > '%s/date' && chmod 755 '%s/date'",
                          bin, clk, bin, bin, bin);
    assert_int_equal(system(cmd), 0);
    free(cmd);
    char *dates = xasprintf("%s/dates", bin),
         *dir = xasprintf("%s/trainjob-clock.%u", clk, (unsigned)geteuid());
    char *kept = xasprintf("%s/base", dir);
    char *env = xasprintf("PATH='%s:/usr/bin:/bin'; TMPDIR='%s'; SLURM_JOB_UID=%u;", bin, clk,
                          (unsigned)geteuid());
    struct strbuf text = STRBUF_INIT, boot = STRBUF_INIT;
    read_small("/proc/sys/kernel/random/boot_id", &boot);
    assert_true(boot.len > 1);
    boot.buf[--boot.len] = '\0'; /* its newline */

    /* the first job: one date(1), the base kept as "BOOT B0 U0" */
    time_t before = time(NULL);
    long long s = clock_job(path, env);
    assert_true(s >= (long long)before && s <= (long long)time(NULL));
    read_small(dates, &text);
    assert_string_equal(strbuf_str(&text), "date\n");
    read_small(kept, &text);
    assert_true(strncmp(strbuf_str(&text), strbuf_str(&boot), boot.len) == 0);
    long long b0 = 0, u0 = 0;
    assert_int_equal(sscanf(strbuf_str(&text) + boot.len, " %lld %lld", &b0, &u0), 2);
    assert_true(b0 / 100 >= (long long)before - 1 && b0 / 100 <= (long long)time(NULL));
    struct stat st;
    assert_int_equal(lstat(dir, &st), 0);
    assert_true(S_ISDIR(st.st_mode) && (st.st_mode & 07777) == 0700 && st.st_uid == geteuid());

    /* the next two jobs: no date(1), the same clock */
    for (int i = 0; i < 2; i++) {
        before = time(NULL);
        s = clock_job(path, env);
        assert_true(s >= (long long)before - 1 && s <= (long long)time(NULL));
    }
    read_small(dates, &text);
    assert_string_equal(strbuf_str(&text), "date\n");

    /* another boot's base, or one of an uptime still to come: a date(1), kept anew */
    static const struct {
        bool this_boot;
        const char *rest;
    } stale[] = {{false, "100 100"},
                 {true, "100 99999999999"},
                 {true, "100"},
                 {true, "1x0 100"},
                 {true, "100 100 100"}};
    for (size_t i = 0; i < sizeof stale / sizeof *stale; i++) {
        FILE *f = fopen(kept, "w");
        assert_non_null(f);
        fprintf(f, "%s %s\n",
                stale[i].this_boot ? strbuf_str(&boot) : "0f0f0f0f-0000-4000-8000-000000000000",
                stale[i].rest);
        assert_int_equal(fclose(f), 0);
        s = clock_job(path, env);
        assert_true(s >= (long long)before - 1 && s <= (long long)time(NULL));
        read_small(kept, &text);
        if (strncmp(strbuf_str(&text), strbuf_str(&boot), boot.len) != 0 ||
            sscanf(strbuf_str(&text) + boot.len, " %lld %lld", &b0, &u0) != 2 || b0 < 100000)
            fail_msg("stale base %zu was not replaced: %s", i, strbuf_str(&text));
    }
    read_small(dates, &text);
    assert_string_equal(strbuf_str(&text), "date\ndate\ndate\ndate\ndate\ndate\n");

    /* a base older than the hour, when this machine has been up that long */
    char uptime[64] = "";
    FILE *up = fopen("/proc/uptime", "r");
    if (up && fgets(uptime, sizeof uptime, up) && atoll(uptime) > 3700) {
        FILE *f = fopen(kept, "w");
        assert_non_null(f);
        fprintf(f, "%s %lld %lld\n", strbuf_str(&boot), b0 - 370000, (atoll(uptime) - 3700) * 100);
        assert_int_equal(fclose(f), 0);
        clock_job(path, env);
        read_small(dates, &text);
        assert_string_equal(strbuf_str(&text), "date\ndate\ndate\ndate\ndate\ndate\ndate\n");
    }
    if (up)
        fclose(up);
    assert_int_equal(truncate(dates, 0), 0);

    /* a link there, to a directory of the user's holding a good base: not
       used, nothing written through it */
    char *victim = xasprintf("%s/victim", tmpdir), *vbase = xasprintf("%s/victim/base", tmpdir);
    assert_int_equal(rename(dir, victim), 0);
    assert_int_equal(symlink(victim, dir), 0);
    read_small(vbase, &text);
    char *was = xstrdup(strbuf_str(&text));
    clock_job(path, env);
    clock_job(path, env);
    read_small(dates, &text);
    assert_string_equal(strbuf_str(&text), "date\ndate\n");
    read_small(vbase, &text);
    assert_string_equal(strbuf_str(&text), was);
    assert_int_equal(unlink(dir), 0);
    free(was);

    /* another user's directory (as root: chowned to nobody, others may write
       in it) with a good base: not used, left as it is */
    if (geteuid() == 0) {
        assert_int_equal(rename(victim, dir), 0);
        assert_int_equal(chown(dir, 65534, 65534), 0);
        assert_int_equal(chmod(dir, 0777), 0);
        assert_int_equal(chown(kept, 65534, 65534), 0);
        read_small(kept, &text);
        was = xstrdup(strbuf_str(&text));
        assert_int_equal(truncate(dates, 0), 0);
        clock_job(path, env);
        read_small(dates, &text);
        assert_string_equal(strbuf_str(&text), "date\n");
        read_small(kept, &text);
        assert_string_equal(strbuf_str(&text), was);
        assert_int_equal(stat(kept, &st), 0);
        assert_int_equal(st.st_uid, 65534);
        assert_int_equal(unlink(kept), 0);
        assert_int_equal(rmdir(dir), 0);
        free(was);
    } else {
        assert_int_equal(unlink(vbase), 0);
        assert_int_equal(rmdir(victim), 0);
    }

    /* no SLURM_JOB_UID: a date(1) each job, nothing kept */
    assert_int_equal(truncate(dates, 0), 0);
    char *plain = xasprintf("PATH='%s:/usr/bin:/bin'; TMPDIR='%s';", bin, clk);
    clock_job(path, plain);
    clock_job(path, plain);
    read_small(dates, &text);
    assert_string_equal(strbuf_str(&text), "date\ndate\n");
    assert_int_equal(access(dir, F_OK), -1);

    free(plain);
    free(vbase);
    free(victim);
    free(dir);
    strbuf_free(&text);
    strbuf_free(&boot);
    free(env);
    free(kept);
    free(dates);
    free(clk);
    free(bin);
    free(path);
    jobspec_free(&job);
}

/*
 * What a job sends, Slurm stores and the node's sh parses: the supervisor's
 * body without its own comment lines or indentation, so a one-worker job's
 * script stays under 28 KB (34 KB with them).
 */
static void test_script_size(void **state)
{
    (void)state;
    struct jobspec job;
    make_job(&job, FRAMEWORK_PYTORCH_DDP, 1);
    struct strbuf script = STRBUF_INIT;
    struct api_error err = {0};
    assert_int_equal(slurm_script_render(&job, &site, &script, NULL, &err), 0);
    if (script.len >= 28000)
        fail_msg("a one-worker job's script is %zu bytes", script.len);
    const char *body = strstr(strbuf_str(&script), "\n# the supervisor: the same for every job");
    assert_non_null(body);
    for (const char *p = strchr(body + 1, '\n'); p && p[1]; p = strchr(p + 1, '\n')) {
        const char *q = p + 1;
        if (*q == '#' || (*q == '\t' && q[strspn(q, "\t")] == '#'))
            fail_msg("a comment line in the body: %.60s", q);
    }
    strbuf_free(&script);
    jobspec_free(&job);
}

/*
 * The programs the supervisor starts for a job whose workers succeed, run
 * outside Slurm with every program on PATH a stub that logs its name (srun's
 * runs the step's command here, scontrol's knows nodes n1 and n2): a
 * one-worker job starts its worker in the batch step (setsid, no srun, no
 * scontrol: it is its own master, 127.0.0.1, as on trainjobd), and neither
 * job runs a text helper (sed, awk, tr, head, cat, …) or a mv, rm or mkdir;
 * date once for the clock's base, scontrol once for all nodes of two.
 */
static const char *const stubbed[] = {
    "date", "scontrol", "setsid", "srun", "mv",  "mkdir",  "sed",    "awk",    "tr",      "head",
    "cat",  "rm",       "grep",   "tail", "cut", "mktemp", "mkfifo", "squeue", "scancel", "sleep"};

/* How many times NAME is a line of the calls log. */
static int calls_of(const char *log, const char *name)
{
    int n = 0;
    size_t len = strlen(name);
    for (const char *p = log; *p;) {
        const char *nl = strchr(p, '\n');
        size_t l = nl ? (size_t)(nl - p) : strlen(p);
        if (l == len && strncmp(p, name, len) == 0)
            n++;
        p += l + (nl ? 1 : 0);
    }
    return n;
}

/* Runs job's script as Slurm would, the stubs first on PATH; the calls log into calls. */
static void run_supervised(const struct jobspec *job, const char *nodes, struct strbuf *calls)
{
    char *root = xasprintf("%s/steady", tmpdir);
    char *jobs = xasprintf("%s/jobs", root);
    struct slurm_site s = {jobs, "default", NULL, NULL, 0};
    char *cmd = xasprintf("rm -rf '%s' && mkdir -p '%s/bin' '%s/default/train-1/logs' "
                          "'%s/default/train-1/workers' '%s/default/train-1/launch'",
                          root, root, jobs, jobs, jobs);
    assert_int_equal(system(cmd), 0);
    free(cmd);
    for (size_t i = 0; i < sizeof stubbed / sizeof *stubbed; i++) {
        const char *n = stubbed[i];
        char *path = xasprintf("%s/bin/%s", root, n);
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fprintf(f, "#!/bin/sh\necho %s >> '%s/calls.log'\n", n, root);
        if (strcmp(n, "scontrol") == 0)
            fputs("case \"$*\" in\n"
                  "'show hostnames'*) printf 'n1\\nn2\\n' ;;\n"
                  "'show node -o'*) printf 'NodeName=n1 Arch=x NodeAddr=10.0.0.1 State=IDLE\\n"
                  "NodeName=n2 Arch=x NodeAddr=10.0.0.2 State=IDLE\\n' ;;\n"
                  "*) exit 1 ;;\nesac\n",
                  f);
        else if (strcmp(n, "srun") == 0)
            fputs("o=/dev/null\nwhile [ $# -gt 0 ]; do case $1 in\n"
                  "-w) shift 2 ;; --output=*) o=${1#--output=}; shift ;; -*) shift ;;\n"
                  "*) break ;; esac; done\nexec \"$@\" >> \"$o\" 2>&1\n",
                  f);
        else
            fprintf(f, "PATH=/usr/bin:/bin exec %s \"$@\"\n", n);
        assert_int_equal(fclose(f), 0);
        assert_int_equal(chmod(path, 0755), 0);
        free(path);
    }
    char *script = render_to_file(job, &s);
    cmd = xasprintf("cd '%s' && env -i PATH='%s/bin' SLURM_JOB_ID=42 SLURM_JOB_NODELIST='%s' "
                    "/bin/sh '%s' 2>'%s/stderr'",
                    root, root, nodes, script, root);
    int rc = system(cmd);
    free(cmd);
    char *log = xasprintf("%s/calls.log", root);
    FILE *f = fopen(log, "r");
    char buf[4096];
    size_t n;
    while (f && (n = fread(buf, 1, sizeof buf, f)) > 0)
        strbuf_add(calls, buf, n);
    if (f)
        fclose(f);
    if (rc != 0)
        fail_msg("the supervisor exited %d; calls: %s", rc, strbuf_str(calls));
    cmd = xasprintf("grep -q '\"reason\":\"Succeeded\"' '%s/default/train-1/events.jsonl'", jobs);
    assert_int_equal(system(cmd), 0);
    free(cmd);
    free(log);
    free(script);
    free(jobs);
    free(root);
}

static void test_steady_helpers(void **state)
{
    (void)state;
    static const char *const never[] = {"srun",   "mv",     "mkdir",  "sed",     "awk",  "tr",
                                        "head",   "cat",    "rm",     "grep",    "tail", "cut",
                                        "mktemp", "mkfifo", "squeue", "scancel", "sleep"};
    struct jobspec job;
    make_job(&job, FRAMEWORK_PYTORCH_DDP, 1);
    free(job.roles[0].startup_script);
    job.roles[0].startup_script = xstrdup("echo \"rank=$RANK addr=$MASTER_ADDR\"");
    struct strbuf calls = STRBUF_INIT;
    run_supervised(&job, "n1", &calls);
    const char *c = strbuf_str(&calls);
    for (size_t i = 0; i < sizeof never / sizeof *never; i++)
        if (calls_of(c, never[i]) != 0)
            fail_msg("a one-worker job ran %s: %s", never[i], c);
    assert_int_equal(calls_of(c, "setsid"), 1);
    assert_int_equal(calls_of(c, "scontrol"), 0); /* its own master: 127.0.0.1 */
    assert_int_equal(calls_of(c, "date"), 1);     /* the clock's base: /proc/uptime after */
    char *cmd = xasprintf("grep -qx 'rank=0 addr=127.0.0.1' "
                          "'%s/steady/jobs/default/train-1/logs/master-0.log'",
                          tmpdir);
    assert_int_equal(system(cmd), 0);
    free(cmd);
    strbuf_free(&calls);
    jobspec_free(&job);

    /* two workers: a srun step each, the fifo's temp dir, no text helpers */
    make_job(&job, FRAMEWORK_PYTORCH_DDP, 2);
    free(job.roles[0].startup_script);
    job.roles[0].startup_script = xstrdup("true");
    run_supervised(&job, "n[1-2]", &calls);
    c = strbuf_str(&calls);
    for (size_t i = 1; i < 12; i++) /* mv … cut */
        if (calls_of(c, never[i]) != 0 && strcmp(never[i], "rm") != 0)
            fail_msg("a two-worker job ran %s: %s", never[i], c);
    assert_int_equal(calls_of(c, "srun"), 2);
    assert_int_equal(calls_of(c, "setsid"), 0);
    assert_true(calls_of(c, "scontrol") <= 2); /* the hostnames of n[1-2], the nodes */
    assert_true(calls_of(c, "rm") <= 1);       /* the temp dir, at the end */
    assert_int_equal(calls_of(c, "date"), 1);  /* the clock's base, whatever the workers */
    strbuf_free(&calls);
    jobspec_free(&job);
}

/*
 * A one-worker job's worker is the supervisor's own child, no wrapper or
 * second sh between them: the subshell that checks and records its start
 * becomes setsid and then the worker's sh (two programs for the worker,
 * where a wrapper sh, a step sh and the worker's sh were three more), in a
 * session and process group of its own; the supervisor records its exit.
 */
static void test_local_worker_chain(void **state)
{
    (void)state;
    struct jobspec job;
    make_job(&job, FRAMEWORK_PYTORCH_DDP, 1);
    free(job.roles[0].startup_script);
    job.roles[0].startup_script = xstrdup("read -r s < /proc/$$/stat; s=${s##*) }; set -- $s\n"
                                          "echo \"ppid=$2 pgrp=$3 sid=$4 pid=$$\" > chain\n"
                                          "tr '\\0' ' ' < /proc/$PPID/cmdline > parent\nexit 3");
    add_rule(&job, "3", FT_ACTION_FAIL_JOB, false);
    char *root = xasprintf("%s/steady", tmpdir);
    char *jobdir = xasprintf("%s/jobs/default/train-1", root);
    /* the job fails (exit 3, FAIL_JOB): run_supervised's check is for a success */
    char *script = xasprintf("%s/script.sh", tmpdir);
    struct slurm_site s = {NULL, "default", NULL, NULL, 0};
    char *jobs = xasprintf("%s/jobs", root);
    s.jobs_dir = jobs;
    char *cmd = xasprintf("rm -rf '%s' && mkdir -p '%s/logs' '%s/workers' '%s/launch'", root,
                          jobdir, jobdir, jobdir);
    assert_int_equal(system(cmd), 0);
    free(cmd);
    free(render_to_file(&job, &s));
    cmd = xasprintf("cd '%s' && env -i PATH=/usr/bin:/bin SLURM_JOB_ID=42 SLURM_JOB_NODELIST=n1 "
                    "/bin/sh '%s' 2>/dev/null",
                    jobdir, script);
    int rc = system(cmd);
    free(cmd);
    assert_true(WIFEXITED(rc));
    assert_int_equal(WEXITSTATUS(rc), 3);
    char *p = xasprintf("%s/chain", jobdir);
    FILE *f = fopen(p, "r");
    assert_non_null(f);
    long ppid = -1, pgrp = -2, sid = -3, pid = -4;
    assert_int_equal(fscanf(f, "ppid=%ld pgrp=%ld sid=%ld pid=%ld", &ppid, &pgrp, &sid, &pid), 4);
    fclose(f);
    free(p);
    /* its own session and process group: the supervisor's stop signals all of it */
    assert_int_equal(pgrp, pid);
    assert_int_equal(sid, pid);
    /* its parent runs the batch script itself */
    p = xasprintf("%s/parent", jobdir);
    f = fopen(p, "r");
    assert_non_null(f);
    char buf[4096];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    free(p);
    char *want = xasprintf("/bin/sh %s ", script);
    if (strcmp(buf, want) != 0)
        fail_msg("the worker's parent is '%s', not the supervisor ('%s')", buf, want);
    free(want);
    /* the exit is the subshell's that became the worker, in the worker's record and
     * decided by the rules; no start or exit record on the shared directory and no
     * hostfile but for MPI, as on trainjobd (three files fewer a job) */
    cmd = xasprintf("test ! -e '%s/hostfile' && test -z \"$(ls -A '%s/launch')\" && grep -q "
                    "'\"phase\":\"Failed\",\"restarts\":0,\"exit_code\":3,' "
                    "'%s/workers/master-0.json' && grep -q 'master-0 exited 3: rule 1 (3 → "
                    "FAIL_JOB) matched; job failed' '%s/events.jsonl'",
                    jobdir, jobdir, jobdir, jobdir);
    assert_int_equal(system(cmd), 0);
    free(cmd);
    free(jobs);
    free(script);
    free(jobdir);
    free(root);
    jobspec_free(&job);
}

/*
 * Stopping a one-worker job (the supervisor's TERM): TERM to the worker's
 * process group, and once the worker itself has ended, SIGKILL at once to
 * what is left of its group (here a child that ignores TERM), not after the
 * whole grace; the supervisor exits 143.
 */
static void test_local_stop(void **state)
{
    (void)state;
    struct jobspec job;
    make_job(&job, FRAMEWORK_PYTORCH_DDP, 1);
    free(job.roles[0].startup_script);
    job.roles[0].startup_script = xstrdup("(trap '' TERM; exec sleep 300) &\n"
                                          "echo $! > kid\necho started\nexec sleep 301");
    char *root = xasprintf("%s/stop", tmpdir);
    char *jobs = xasprintf("%s/jobs", root);
    char *jobdir = xasprintf("%s/default/train-1", jobs);
    struct slurm_site s = {jobs, "default", NULL, NULL, 0};
    char *cmd = xasprintf("rm -rf '%s' && mkdir -p '%s/logs' '%s/workers' '%s/launch'", root,
                          jobdir, jobdir, jobdir);
    assert_int_equal(system(cmd), 0);
    free(cmd);
    char *script = render_to_file(&job, &s);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        char *const env[] = {"PATH=/usr/bin:/bin", "SLURM_JOB_ID=42", "SLURM_JOB_NODELIST=n1",
                             NULL};
        int null = open("/dev/null", O_WRONLY);
        if (chdir(jobdir) != 0 || null < 0 || dup2(null, 2) < 0)
            _exit(126);
        execle("/bin/sh", "sh", script, (char *)NULL, env);
        _exit(127);
    }
    char *log = xasprintf("%s/logs/master-0.log", jobdir);
    char *kidfile = xasprintf("%s/kid", jobdir);
    bool started = false;
    for (int i = 0; i < 200 && !started; i++) {
        struct strbuf text = STRBUF_INIT;
        FILE *f = fopen(log, "r");
        char buf[512];
        size_t n;
        while (f && (n = fread(buf, 1, sizeof buf, f)) > 0)
            strbuf_add(&text, buf, n);
        if (f)
            fclose(f);
        started = strstr(strbuf_str(&text), "\nstarted\n") != NULL && access(kidfile, F_OK) == 0;
        strbuf_free(&text);
        if (!started)
            usleep(50000);
    }
    assert_true(started);
    long kid = -1;
    FILE *f = fopen(kidfile, "r");
    assert_non_null(f);
    assert_int_equal(fscanf(f, "%ld", &kid), 1);
    fclose(f);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    assert_int_equal(kill(pid, SIGTERM), 0);
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 143);
    /* well inside the 10 s grace: the worker ended at once, its child was killed */
    if (secs >= 8)
        fail_msg("the stop took %.1f s: the supervisor waited out the grace", secs);
    bool gone = false;
    for (int i = 0; i < 100 && !gone; i++) {
        gone = kill((pid_t)kid, 0) != 0;
        if (!gone)
            usleep(20000);
    }
    if (!gone) {
        kill((pid_t)kid, SIGKILL);
        fail_msg("the worker's child %ld outlived the stop", kid);
    }
    cmd = xasprintf("grep -q '\"reason\":\"Stopping\"' '%s/events.jsonl'", jobdir);
    assert_int_equal(system(cmd), 0);
    free(cmd);
    free(kidfile);
    free(log);
    free(script);
    free(jobdir);
    free(jobs);
    free(root);
    jobspec_free(&job);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quote_roundtrip),
        cmocka_unit_test(test_hostile_job_text),
        cmocka_unit_test(test_env_names_refused),
        cmocka_unit_test(test_jobdir),
        cmocka_unit_test(test_decide_agrees),
        cmocka_unit_test(test_env_agrees),
        cmocka_unit_test(test_launcher),
        cmocka_unit_test(test_gaps),
        cmocka_unit_test(test_hostile_state),
        cmocka_unit_test(test_event_json),
        cmocka_unit_test(test_outcome),
        cmocka_unit_test(test_mounts),
        cmocka_unit_test(test_steady_helpers),
        cmocka_unit_test(test_last_state),
        cmocka_unit_test(test_clock),
        cmocka_unit_test(test_clock_kept),
        cmocka_unit_test(test_script_size),
        cmocka_unit_test(test_local_worker_chain),
        cmocka_unit_test(test_local_stop),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
