/*
 * Tests for job files: the tree <-> struct mapping (jobspec_json), YAML and
 * JSON reading and writing (jobfile), positions on every finding, and the
 * round-trip law parse(write(job)) == job for every example and for a job
 * with every field set.
 */
// clang-format off
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
// clang-format on

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/finding.h"
#include "api/jobfile.h"
#include "api/jobspec.h"
#include "api/jobspec_defaults.h"
#include "api/validate.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

/* Parses text as file `name`; returns the result, findings in fs. */
static enum jobfile_result parse(const char *name, const char *text, struct jobfile *jf,
                                 struct findings *fs)
{
    jobfile_init(jf);
    return jobfile_parse(name, text, strlen(text), jf, fs);
}

/* The first finding whose path is path, or NULL. */
static const struct finding *finding_at(const struct findings *fs, const char *path)
{
    for (size_t i = 0; i < fs->count; i++)
        if (strcmp(fs->items[i].path, path) == 0)
            return &fs->items[i];
    return NULL;
}

static void assert_round_trip(const struct jobspec *job)
{
    for (int fmt = JOBFILE_YAML; fmt <= JOBFILE_JSON; fmt++) {
        struct strbuf sb = STRBUF_INIT;
        jobfile_write(job, (enum jobfile_format)fmt, &sb);
        struct jobfile back;
        struct findings fs = FINDINGS_INIT;
        enum jobfile_result rc =
            parse(fmt == JOBFILE_JSON ? "rt.json" : "rt.yaml", strbuf_str(&sb), &back, &fs);
        if (rc != JOBFILE_OK || !jobspec_equal(job, &back.job)) {
            fprintf(stderr, "round trip as %s failed:\n%s\n", fmt ? "JSON" : "YAML",
                    strbuf_str(&sb));
            for (size_t i = 0; i < fs.count; i++)
                fprintf(stderr, "  %d:%d %s: %s\n", fs.items[i].line, fs.items[i].col,
                        fs.items[i].path, fs.items[i].message);
        }
        assert_int_equal(rc, JOBFILE_OK);
        assert_true(jobspec_equal(job, &back.job));
        jobfile_free(&back);
        findings_free(&fs);
        strbuf_free(&sb);
    }
}

static void examples_round_trip(void **state)
{
    (void)state;
    DIR *dir = opendir("examples");
    assert_non_null(dir);
    struct dirent *de;
    int seen = 0;
    while ((de = readdir(dir)) != NULL) {
        if (strstr(de->d_name, ".yaml") == NULL)
            continue;
        char *path = xasprintf("examples/%s", de->d_name);
        struct jobfile jf;
        struct findings fs = FINDINGS_INIT;
        struct strbuf err = STRBUF_INIT;
        jobfile_init(&jf);
        assert_int_equal(jobfile_load(path, &jf, &fs, &err), JOBFILE_OK);
        assert_int_equal(fs.count, 0);
        assert_non_null(jf.job.display_name);
        assert_round_trip(&jf.job);
        /* And once more with every default filled, as `render` prints it. */
        jobspec_fill_defaults(&jf.job, NULL);
        assert_round_trip(&jf.job);
        jobfile_free(&jf);
        findings_free(&fs);
        strbuf_free(&err);
        free(path);
        seen++;
    }
    closedir(dir);
    assert_true(seen >= 5);
}

/* A job with every field set, and strings chosen to trip a careless writer. */
static void full_job(struct jobspec *job)
{
    jobspec_init(job);
    job->subscription_name = xstrdup("0197ee17-sub");
    job->resource_group_name = xstrdup("default");
    job->zone = xstrdup("cn-sh-01z");
    job->workspace_name = xstrdup("vision-team");
    job->name = xstrdup("resnet50-baseline-v2");
    job->display_name = xstrdup("ResNet50基线:v2");
    job->uid = xstrdup("8");
    job->id = xstrdup("/subscriptions/x/trainingJobs/resnet50");
    job->framework = FRAMEWORK_PYTORCH_DDP;
    struct role *r = jobspec_add_role(job);
    r->name = xstrdup("Worker");
    r->has_total_replicas = true;
    r->total_replicas = 2;
    struct resource_spec_ref *s = role_add_spec(r);
    s->name = xstrdup("N2lS.Ie.I60.8");
    s->description = xstrdup("8xH800");
    r->image_path = xstrdup("registry.cn-sh-01.sensecore.cn/ngc/pytorch:25.06-py3");
    r->startup_script = xstrdup("cd /mnt/afs\n  torchrun train.py # comment\n\ttabbed: yes\n");
    struct env_var *e = jobspec_add_env(job);
    e->key = xstrdup("OMP_NUM_THREADS");
    e->value = xstrdup("8");
    e = jobspec_add_env(job);
    e->key = xstrdup("FLAG");
    e->value = xstrdup("true");
    e = jobspec_add_env(job);
    e->key = xstrdup("EMPTY");
    e->value = xstrdup("");
    e = jobspec_add_env(job);
    e->key = xstrdup("SPACES");
    e->value = xstrdup("  padded  ");
    e = jobspec_add_env(job);
    e->key = xstrdup("CTRL");
    e->value = xstrdup("a\x01"
                       "b: #c -d");
    struct mount *m = jobspec_add_mount(job);
    m->type = MOUNT_TYPE_PV_AFS;
    m->id = xstrdup("afs-vol-3c9e");
    m->subdir = xstrdup("/users/alice");
    m->mount_path = xstrdup("/mnt/afs");
    m->zone = xstrdup("cn-sh-01e");
    m->endpoint = xstrdup("null");
    job->tensorboard.present = true;
    job->tensorboard.log_path = xstrdup("/mnt/afs/tb");
    job->scheduling.present = true;
    job->scheduling.priority = PRIORITY_HIGH;
    job->scheduling.quota_type = QUOTA_TYPE_SPOT;
    job->scheduling.has_preemptible = true;
    job->scheduling.preemptible = false;
    job->scheduling.scoring_strategy = SCORING_LEAST_ALLOCATED;
    job->resource_pool.present = true;
    job->resource_pool.name = xstrdup("public");
    job->resource_pool.zone = xstrdup("cn-sh-01e");
    job->resource_pool.vpc_id = xstrdup("vpc-7f3a2c");
    job->resource_pool.display_name = xstrdup("公共集群");
    job->fault_tolerance.present = true;
    job->fault_tolerance.has_backoff_limit = true;
    job->fault_tolerance.backoff_limit = -1;
    struct ft_rule *rule = jobspec_add_rule(job);
    rule->exit_codes = xstrdup("254,255");
    rule->action = FT_ACTION_RESTART_POD;
    rule->has_mark_node_unschedulable = true;
    rule->mark_node_unschedulable = true;
    rule = jobspec_add_rule(job);
    rule->exit_codes = xstrdup("1");
    rule->action = FT_ACTION_FAIL_JOB;
    job->ssh.present = true;
    job->ssh.has_auto_key_setup = true;
    job->ssh.auto_key_setup = true;
    job->ssh.config_mount_path = xstrdup(JOBSPEC_DEFAULT_SSH_PATH);
    job->barrier.present = true;
    job->barrier.has_enable_ethernet_ping = true;
    job->barrier.enable_ethernet_ping = false;
    job->ownership.present = true;
    job->ownership.user_name = xstrdup("alice");
    job->ownership.user_id = xstrdup("0x1F");
    job->state = JOB_STATE_QUEUEING;
    job->state_message = xstrdup("behind HIGH job train-a");
    job->has_root_mapping = true;
    job->root_mapping = false;
    job->has_restart_count = true;
    job->restart_count = 2;
    job->has_ready_workers = true;
    job->ready_workers = 0;
    job->create_time = xstrdup("2026-11-29T06:28:49.180Z");
    job->start_time = xstrdup("~");
}

static void full_job_round_trips(void **state)
{
    (void)state;
    struct jobspec job;
    full_job(&job);
    assert_round_trip(&job);

    /* jobspec_copy gives an equal, independent job. */
    struct jobspec copy;
    jobspec_copy(&copy, &job);
    assert_true(jobspec_equal(&job, &copy));
    free(copy.env[1].value);
    copy.env[1].value = xstrdup("false");
    assert_false(jobspec_equal(&job, &copy));
    jobspec_free(&copy);
    jobspec_free(&job);
}

static void absent_and_empty_differ(void **state)
{
    (void)state;
    struct jobfile a, b;
    struct findings fs = FINDINGS_INIT;
    assert_int_equal(parse("a.yaml", "display_name: x\ntensorboard: {}\n", &a, &fs), JOBFILE_OK);
    assert_int_equal(parse("b.yaml", "display_name: x\n", &b, &fs), JOBFILE_OK);
    assert_true(a.job.tensorboard.present);
    assert_false(b.job.tensorboard.present);
    assert_false(jobspec_equal(&a.job, &b.job));
    assert_round_trip(&a.job);
    jobfile_free(&a);
    jobfile_free(&b);
    findings_free(&fs);
}

static void unknown_field_suggests_and_points_at_key(void **state)
{
    (void)state;
    struct jobfile jf;
    struct findings fs = FINDINGS_INIT;
    const char *text = "display_name: x\n"
                       "scheduling:\n"
                       "  priorty: HIGH\n"
                       "colour: blue\n";
    assert_int_equal(parse("j.yaml", text, &jf, &fs), JOBFILE_BAD_FIELDS);
    const struct finding *f = finding_at(&fs, "scheduling.priorty");
    assert_non_null(f);
    assert_string_equal(f->message, "unknown field; did you mean priority?");
    assert_int_equal(f->line, 3);
    assert_int_equal(f->col, 3);
    /* no known field is near: a newer server's field, kept and sent as it is (issue 12) */
    f = finding_at(&fs, "colour");
    assert_non_null(f);
    assert_int_equal(f->severity, SEVERITY_WARNING);
    assert_string_equal(f->message, "not a field trainjob knows; kept and sent as it is");
    assert_int_equal(f->line, 4);
    assert_int_equal(f->col, 1);
    jobfile_free(&jf);
    findings_free(&fs);
}

static void wrong_types_say_what_was_expected(void **state)
{
    (void)state;
    struct jobfile jf;
    struct findings fs = FINDINGS_INIT;
    const char *text = "display_name: [a]\n"
                       "framework: 3\n"
                       "roles:\n"
                       "  - total_replicas: 2.5\n"
                       "    resource_spec: cpu-1\n"
                       "ssh:\n"
                       "  auto_key_setup: yes\n"
                       "scheduling: NORMAL\n"
                       "fault_tolerance:\n"
                       "  backoff_limit: 99999999999\n"
                       "  rules: [1]\n";
    assert_int_equal(parse("t.yaml", text, &jf, &fs), JOBFILE_BAD_FIELDS);
    struct {
        const char *path, *message;
        int line, col;
    } want[] = {
        {"display_name", "expected a string, got a list", 1, 15},
        {"framework", "expected one of the names, got an integer", 2, 12},
        {"roles[0].total_replicas", "expected a whole number, got 2.5", 4, 21},
        {"roles[0].resource_spec", "expected a list, got a string", 5, 20},
        {"ssh.auto_key_setup", "expected true or false, got the string 'yes'", 7, 19},
        {"scheduling", "expected a mapping, got a string", 8, 13},
        {"fault_tolerance.backoff_limit", "99999999999 is out of range", 10, 18},
        {"fault_tolerance.rules[0]", "expected a mapping, got an integer", 11, 11},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const struct finding *f = finding_at(&fs, want[i].path);
        if (f == NULL)
            fail_msg("no finding at %s", want[i].path);
        assert_string_equal(f->message, want[i].message);
        assert_int_equal(f->line, want[i].line);
        assert_int_equal(f->col, want[i].col);
        assert_int_equal(f->severity, SEVERITY_ERROR);
    }
    assert_int_equal(fs.count, sizeof want / sizeof want[0]);
    jobfile_free(&jf);
    findings_free(&fs);
}

static void enum_typo_is_suggested(void **state)
{
    (void)state;
    struct jobfile jf;
    struct findings fs = FINDINGS_INIT;
    assert_int_equal(parse("e.yaml", "framework: pytorch_ddp\n", &jf, &fs), JOBFILE_BAD_FIELDS);
    const struct finding *f = finding_at(&fs, "framework");
    assert_non_null(f);
    assert_non_null(strstr(f->message, "did you mean PYTORCH_DDP?"));
    jobfile_free(&jf);
    findings_free(&fs);
}

static void integers_accepted_where_lists_of_codes_go(void **state)
{
    (void)state;
    struct jobfile jf;
    struct findings fs = FINDINGS_INIT;
    const char *text = "fault_tolerance:\n  rules:\n    - exit_codes: 137\n"
                       "env:\n  - key: N\n    value: 8\n";
    assert_int_equal(parse("i.yaml", text, &jf, &fs), JOBFILE_OK);
    assert_string_equal(jf.job.fault_tolerance.rules[0].exit_codes, "137");
    assert_string_equal(jf.job.env[0].value, "8");
    jobfile_free(&jf);
    findings_free(&fs);
}

static void null_means_absent(void **state)
{
    (void)state;
    struct jobfile jf;
    struct findings fs = FINDINGS_INIT;
    assert_int_equal(parse("n.yaml", "name: ~\ndisplay_name: x\ntensorboard: null\n", &jf, &fs),
                     JOBFILE_OK);
    assert_null(jf.job.name);
    assert_false(jf.job.tensorboard.present);
    jobfile_free(&jf);
    findings_free(&fs);
}

static void broken_yaml_has_line_and_column(void **state)
{
    (void)state;
    struct jobfile jf;
    struct findings fs = FINDINGS_INIT;
    const char *text = "display_name: x\n"
                       "roles:\n"
                       "  - name: Worker\n"
                       "    image_path: \"unterminated\n";
    assert_int_equal(parse("b.yaml", text, &jf, &fs), JOBFILE_BAD_SYNTAX);
    assert_int_equal(fs.count, 1);
    assert_int_equal(fs.items[0].severity, SEVERITY_ERROR);
    assert_true(fs.items[0].line >= 4);
    assert_true(fs.items[0].col >= 1);
    jobfile_free(&jf);
    findings_free(&fs);

    fs = (struct findings)FINDINGS_INIT;
    assert_int_equal(parse("d.yaml", "a: 1\nb: 2\na: 3\n", &jf, &fs), JOBFILE_BAD_SYNTAX);
    assert_int_equal(fs.items[0].line, 3);
    assert_int_equal(fs.items[0].col, 1);
    jobfile_free(&jf);
    findings_free(&fs);
}

/*
 * Nine levels of ten aliases in metadata (10^9 nodes once expanded; the
 * decoder deep-copies metadata): every reader of a job file (validate,
 * render, submit, new -f, the wizard's F3 all come through jobfile_load) is
 * refused at the alias that goes over, with its path and line:col.
 */
static void alias_bomb_is_refused_at_the_alias(void **state)
{
    (void)state;
    struct strbuf doc = STRBUF_INIT;
    strbuf_adds(&doc, "display_name: x\nmetadata:\n  x0: &a0 \"lol\"\n");
    for (int level = 1; level <= 9; level++) {
        strbuf_addf(&doc, "  x%d: &a%d [", level, level);
        for (int i = 0; i < 10; i++)
            strbuf_addf(&doc, "%s*a%d", i ? ", " : "", level - 1);
        strbuf_adds(&doc, "]\n");
    }
    struct jobfile jf;
    struct findings fs = FINDINGS_INIT;
    assert_int_equal(parse("bomb.yaml", strbuf_str(&doc), &jf, &fs), JOBFILE_BAD_SYNTAX);
    assert_int_equal(fs.count, 1);
    assert_int_equal(fs.items[0].severity, SEVERITY_ERROR);
    assert_string_equal(fs.items[0].path, "metadata.x5[7]");
    assert_int_equal(fs.items[0].line, 8);
    assert_int_equal(fs.items[0].col, 47);
    assert_non_null(strstr(fs.items[0].message, "aliases expand to more than 100000 nodes"));
    jobfile_free(&jf);
    findings_free(&fs);
    strbuf_free(&doc);
}

static void broken_json_has_line_and_column(void **state)
{
    (void)state;
    struct jobfile jf;
    struct findings fs = FINDINGS_INIT;
    assert_int_equal(parse("b.json", "{\n  \"display_name\": \"x\",\n  oops\n}\n", &jf, &fs),
                     JOBFILE_BAD_SYNTAX);
    assert_int_equal(fs.count, 1);
    assert_int_equal(fs.items[0].line, 3);
    assert_true(fs.items[0].col >= 3);
    jobfile_free(&jf);
    findings_free(&fs);

    /* Duplicate keys are rejected in JSON too. */
    fs = (struct findings)FINDINGS_INIT;
    assert_int_equal(parse("d.json", "{\"name\": \"a\", \"name\": \"b\"}", &jf, &fs),
                     JOBFILE_BAD_SYNTAX);
    jobfile_free(&jf);
    findings_free(&fs);
}

static void top_level_must_be_a_mapping(void **state)
{
    (void)state;
    const char *texts[] = {"", "- a\n- b\n", "just a string\n", "[1]", "42\n"};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        struct jobfile jf;
        struct findings fs = FINDINGS_INIT;
        /* no job at all: a failed read (the wizard keeps its form as it is) */
        assert_int_equal(parse("x.yaml", texts[i], &jf, &fs), JOBFILE_BAD_SYNTAX);
        assert_int_equal(fs.count, 1);
        assert_non_null(strstr(fs.items[0].message, "expected a mapping of job fields"));
        jobfile_free(&jf);
        findings_free(&fs);
    }
}

static void utf8_display_names_survive(void **state)
{
    (void)state;
    const char *yaml = "display_name: 视觉-基线.v2\n";
    const char *json = "{\"display_name\": \"\\u89c6\\u89c9-\\u57fa\\u7ebf.v2\"}";
    struct jobfile a, b;
    struct findings fs = FINDINGS_INIT;
    assert_int_equal(parse("a.yaml", yaml, &a, &fs), JOBFILE_OK);
    assert_int_equal(parse("b.json", json, &b, &fs), JOBFILE_OK);
    assert_string_equal(a.job.display_name, "视觉-基线.v2");
    assert_string_equal(b.job.display_name, "视觉-基线.v2");
    assert_round_trip(&a.job);

    struct strbuf sb = STRBUF_INIT;
    jobfile_write(&a.job, JOBFILE_JSON, &sb);
    assert_non_null(strstr(strbuf_str(&sb), "视觉-基线.v2")); /* written as UTF-8, not escaped */
    strbuf_reset(&sb);
    jobfile_write(&a.job, JOBFILE_YAML, &sb);
    assert_non_null(strstr(strbuf_str(&sb), "display_name: 视觉-基线.v2"));
    strbuf_free(&sb);
    jobfile_free(&a);
    jobfile_free(&b);
    findings_free(&fs);
}

static void invalid_utf8_is_an_error_not_a_crash(void **state)
{
    (void)state;
    struct jobfile jf;
    struct findings fs = FINDINGS_INIT;
    assert_int_equal(parse("u.yaml", "display_name: \xff\xfe\n", &jf, &fs), JOBFILE_BAD_SYNTAX);
    assert_int_equal(fs.count, 1);
    jobfile_free(&jf);
    findings_free(&fs);
    fs = (struct findings)FINDINGS_INIT;
    assert_int_equal(parse("u.json", "{\"display_name\": \"\xc3\x28\"}", &jf, &fs),
                     JOBFILE_BAD_SYNTAX);
    jobfile_free(&jf);
    findings_free(&fs);
}

static void yaml_and_json_of_one_job_are_equal(void **state)
{
    (void)state;
    const char *yaml = "display_name: demo\n"
                       "framework: MPI\n"
                       "roles:\n"
                       "  - total_replicas: 4\n"
                       "    resource_spec: [{name: cpu-1}]\n"
                       "fault_tolerance: {backoff_limit: -1, rules: [{exit_codes: \"1-3\", "
                       "action: RESTART_POD, mark_node_unschedulable: true}]}\n";
    const char *json =
        "{\"display_name\":\"demo\",\"framework\":\"MPI\","
        "\"roles\":[{\"total_replicas\":4,\"resource_spec\":[{\"name\":\"cpu-1\"}]}],"
        "\"fault_tolerance\":{\"backoff_limit\":-1,\"rules\":[{\"exit_codes\":\"1-3\","
        "\"action\":\"RESTART_POD\",\"mark_node_unschedulable\":true}]}}";
    struct jobfile a, b;
    struct findings fs = FINDINGS_INIT;
    assert_int_equal(parse("a.yaml", yaml, &a, &fs), JOBFILE_OK);
    assert_int_equal(parse("b.json", json, &b, &fs), JOBFILE_OK);
    assert_int_equal(b.format, JOBFILE_JSON);
    assert_true(jobspec_equal(&a.job, &b.job));
    assert_int_equal(a.job.fault_tolerance.backoff_limit, -1);
    assert_true(a.job.fault_tolerance.rules[0].mark_node_unschedulable);
    jobfile_free(&a);
    jobfile_free(&b);
    findings_free(&fs);
}

static void defaults_fill_what_is_absent(void **state)
{
    (void)state;
    struct jobfile jf;
    struct findings fs = FINDINGS_INIT;
    const char *text = "display_name: d\nframework: TENSORFLOW_PS\n"
                       "roles: [{total_replicas: 1}]\n"
                       "scheduling: {quota_type: SPOT}\n"
                       "mount: [{id: v, mount_path: /m}]\n";
    assert_int_equal(parse("d.yaml", text, &jf, &fs), JOBFILE_OK);
    jobspec_fill_defaults(&jf.job, NULL);
    struct jobspec *j = &jf.job;
    assert_non_null(j->name);
    assert_int_equal(strlen(j->name), 3 + JOBSPEC_GENERATED_SUFFIX_LEN);
    assert_memory_equal(j->name, "tf-", 3);
    assert_string_equal(j->roles[0].name, "Worker");
    assert_int_equal(j->mount[0].type, MOUNT_TYPE_PV_AFS);
    assert_int_equal(j->scheduling.priority, PRIORITY_NORMAL);
    assert_true(j->scheduling.has_preemptible && j->scheduling.preemptible);
    assert_true(j->fault_tolerance.present);
    assert_int_equal(j->fault_tolerance.backoff_limit, 0);
    assert_int_equal(j->fault_tolerance.rule_count, 1);
    assert_string_equal(j->fault_tolerance.rules[0].exit_codes, "1-255");
    assert_int_equal(j->fault_tolerance.rules[0].action, FT_ACTION_RESTART_JOB);
    assert_false(j->ssh.present);

    /* An explicit name is kept; exit codes become canonical. */
    char *again = jobspec_generate_name(FRAMEWORK_MPI);
    assert_memory_equal(again, "mpi-", 4);
    free(again);
    jobfile_free(&jf);
    findings_free(&fs);

    fs = (struct findings)FINDINGS_INIT;
    assert_int_equal(parse("c.yaml",
                           "name: keep-me\nframework: MPI\nfault_tolerance: {rules: "
                           "[{exit_codes: \"3, 1,2 ,7\", action: FAIL_JOB}]}\n",
                           &jf, &fs),
                     JOBFILE_OK);
    jobspec_fill_defaults(&jf.job, NULL);
    assert_string_equal(jf.job.name, "keep-me");
    assert_string_equal(jf.job.fault_tolerance.rules[0].exit_codes, "1-3,7");
    assert_true(jf.job.ssh.auto_key_setup);
    assert_string_equal(jf.job.ssh.config_mount_path, JOBSPEC_DEFAULT_SSH_PATH);
    jobfile_free(&jf);
    findings_free(&fs);
}

/*
 * A clone (issue 11 defect 9): a fetched job with every output-only field
 * set gives a copy for submitting with none of them, so validation finds no
 * "output-only" — the wizard opened on a clone shows no such warning.
 */
static void copy_for_submit_drops_output_only(void **state)
{
    (void)state;
    const char *text = "subscription_name: local\nresource_group_name: default\nzone: local-1z\n"
                       "workspace_name: default\nname: old-job\ndisplay_name: old\nuid: u-1\n"
                       "id: i-1\nframework: PYTORCH_DDP\n"
                       "resource_pool: {name: local, display_name: Local}\n"
                       "roles:\n- name: Worker\n  total_replicas: 1\n"
                       "  resource_spec: [{name: cpu-1, description: 1 CPU}]\n"
                       "  image_path: local/host\n  startup_script: 'true'\n"
                       "ownership: {user_name: alice}\nstate: FAILED\nstate_message: boom\n"
                       "restart_count: 2\nready_workers: 0\nfaulty_workers: 1\n"
                       "root_mapping: true\ncreate_time: '2026-01-01T00:00:00Z'\n"
                       "start_time: '2026-01-01T00:00:01Z'\nsuspend_time: '2026-01-01T00:00:02Z'\n"
                       "update_time: '2026-01-01T00:00:03Z'\n"
                       "complete_time: '2026-01-01T00:00:04Z'\n"
                       "delete_time: '2026-01-01T00:00:05Z'\n";
    struct jobfile jf;
    struct findings fs = FINDINGS_INIT;
    assert_int_equal(parse("f.yaml", text, &jf, &fs), JOBFILE_OK);
    struct findings before = FINDINGS_INIT, after = FINDINGS_INIT;
    validate_job(&jf.job, NULL, &before);
    size_t outputs = 0;
    for (size_t i = 0; i < before.count; i++)
        outputs += strstr(before.items[i].message, "output-only") != NULL;
    assert_true(outputs >= 18); /* every one of them was seen */
    struct jobspec clone;
    jobspec_copy_for_submit(&clone, &jf.job);
    validate_job(&clone, NULL, &after);
    for (size_t i = 0; i < after.count; i++)
        if (strstr(after.items[i].message, "output-only"))
            fail_msg("%s: %s", after.items[i].path, after.items[i].message);
    assert_null(clone.name); /* the old job's name stays the old job's */
    assert_string_equal(clone.display_name, "old");
    assert_int_equal(clone.has_faulty_workers, false);
    jobspec_free(&clone);
    findings_free(&before);
    findings_free(&after);
    findings_free(&fs);
    jobfile_free(&jf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(examples_round_trip),
        cmocka_unit_test(full_job_round_trips),
        cmocka_unit_test(absent_and_empty_differ),
        cmocka_unit_test(unknown_field_suggests_and_points_at_key),
        cmocka_unit_test(wrong_types_say_what_was_expected),
        cmocka_unit_test(enum_typo_is_suggested),
        cmocka_unit_test(integers_accepted_where_lists_of_codes_go),
        cmocka_unit_test(null_means_absent),
        cmocka_unit_test(broken_yaml_has_line_and_column),
        cmocka_unit_test(alias_bomb_is_refused_at_the_alias),
        cmocka_unit_test(broken_json_has_line_and_column),
        cmocka_unit_test(top_level_must_be_a_mapping),
        cmocka_unit_test(utf8_display_names_survive),
        cmocka_unit_test(invalid_utf8_is_an_error_not_a_crash),
        cmocka_unit_test(yaml_and_json_of_one_job_are_equal),
        cmocka_unit_test(defaults_fill_what_is_absent),
        cmocka_unit_test(copy_for_submit_drops_output_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
