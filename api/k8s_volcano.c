/*
 * k8s_volcano: the Volcano Job manifest. See k8s_volcano.h.
 *
 * Volcano reads a job's policies in order and takes the first whose event or
 * exitCode matches a failed pod; exit codes may not repeat and 0 is refused.
 * So the fault rules are written as the outcome of every exit code 1..255
 * (k8s_fault_table): the outcome most codes share becomes the last policy,
 * `event: PodFailed`, and every other code an `exitCode` policy before it —
 * the same decision for each code as trainjobd makes, in at most 128
 * policies.
 */
#include "api/k8s_volcano.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "api/exitcodes.h"
#include "api/k8s_manifest.h"

#define VOLCANO_MAX_RETRY_FOREVER INT32_MAX

static const char *volcano_action(enum fault_outcome o)
{
    switch (o) {
    case FAULT_RESTART_POD:
        return "RestartPod";
    case FAULT_FAIL_JOB:
        return "TerminateJob";
    default:
        return "RestartJob";
    }
}

/* The outcome the most exit codes share (ties: the platform default's, then the lowest). */
static enum fault_outcome common_outcome(const struct k8s_fault_table *t)
{
    int count[3] = {0, 0, 0};
    int default_outcome = -1;
    for (int c = 1; c < 256; c++) {
        count[t->outcome[c]]++;
        if (t->rule[c] < 0 && default_outcome < 0)
            default_outcome = (int)t->outcome[c];
    }
    int best = default_outcome >= 0 ? default_outcome : 0;
    for (int o = 0; o < 3; o++)
        if (count[o] > count[best])
            best = o;
    return (enum fault_outcome)best;
}

static json_t *policies(const struct jobspec *job, struct findings *gaps)
{
    const struct fault_tolerance *ft = &job->fault_tolerance;
    struct k8s_fault_table t;
    k8s_fault_table(job, &t);
    enum fault_outcome common = common_outcome(&t);
    json_t *list = json_array();
    /*
     * In the order of the rules that decide them, the platform default's
     * codes last, so the manifest reads like the form.
     */
    int rules = ft->present ? (int)ft->rule_count : 0;
    bool restart_asked = false; /* a code whose rule asks for a restart */
    for (int k = 0; k <= rules; k++) {
        int r = k < rules ? k : -1;
        for (int c = 1; c < 256; c++) {
            if (t.rule[c] != r)
                continue;
            restart_asked = restart_asked || r < 0 || ft->rules[r].action != FT_ACTION_FAIL_JOB;
            if (t.outcome[c] == common)
                continue;
            json_t *p = json_object();
            json_object_set_new(p, "exitCode", json_integer(c));
            json_object_set_new(p, "action", json_string(volcano_action(t.outcome[c])));
            json_array_append_new(list, p);
        }
    }
    json_t *p = json_object();
    json_object_set_new(p, "event", json_string("PodFailed"));
    json_object_set_new(p, "action", json_string(volcano_action(common)));
    json_array_append_new(list, p);

    int limit = fault_backoff_limit(ft);
    if (limit == 0 && restart_asked)
        findings_add(gaps, SEVERITY_WARNING, "fault_tolerance.backoff_limit",
                     "0 cannot be written (Volcano reads maxRetry 0 as its default, 3): every "
                     "restart is rendered TerminateJob, which is what a limit of 0 does");
    else if (limit == -1)
        findings_add(gaps, SEVERITY_WARNING, "fault_tolerance.backoff_limit",
                     "-1 (forever) is maxRetry %d: Volcano has no unlimited retries",
                     VOLCANO_MAX_RETRY_FOREVER);
    return list;
}

/* Volcano's plugins for the framework: env and svc (hosts and task index) for all. */
static json_t *plugins(const struct jobspec *job, int replicas, struct findings *gaps)
{
    json_t *pl = json_object();
    json_object_set_new(pl, "env", json_array());
    json_object_set_new(pl, "svc", json_array());
    if (framework_pytorch_style(job->framework)) {
        /* MASTER_ADDR, MASTER_PORT, WORLD_SIZE and RANK, as trainjobd gives them. */
        json_t *a = json_array();
        json_array_append_new(a, json_string("--master=master"));
        json_array_append_new(a, json_string("--worker=worker"));
        json_array_append_new(a, json_string("--port=23456"));
        json_object_set_new(pl, "pytorch", a);
    } else if (job->framework == FRAMEWORK_TENSORFLOW_PS ||
               job->framework == FRAMEWORK_TENSORFLOW) {
        /* TF_CONFIG, as trainjobd gives it. */
        json_t *a = json_array();
        if (job->framework == FRAMEWORK_TENSORFLOW_PS)
            json_array_append_new(a, json_string("--ps=ps"));
        json_array_append_new(a, json_string("--worker=worker"));
        json_array_append_new(a, json_string("--port=2222"));
        json_object_set_new(pl, "tensorflow", a);
    } else if (job->framework == FRAMEWORK_MPI) {
        findings_add(gaps, SEVERITY_WARNING, "framework",
                     "MPI: no TRAINJOB_HOSTFILE; the svc plugin lists the %d workers in "
                     "/etc/volcano/worker.host",
                     replicas);
    }
    if (job->ssh.present && job->ssh.auto_key_setup) {
        /* Password-less SSH between the workers (MPI always asks for it). */
        json_object_set_new(pl, "ssh", json_array());
        if (job->ssh.config_mount_path && job->ssh.config_mount_path[0])
            findings_add(gaps, SEVERITY_WARNING, "ssh.config_mount_path",
                         "the ssh plugin puts the keys in /root/.ssh, not %s",
                         job->ssh.config_mount_path);
    }
    return pl;
}

static json_t *task(const struct jobspec *job, const char *tname, int replicas, const char *name,
                    const struct k8s_resources *res)
{
    json_t *pod = json_object();
    json_t *meta = json_object();
    json_object_set_new(meta, "labels", k8s_pod_labels(name));
    if (job->scheduling.preemptible) {
        json_t *ann = json_object();
        json_object_set_new(ann, "volcano.sh/preemptable", json_string("true"));
        json_object_set_new(meta, "annotations", ann);
    }
    json_object_set_new(pod, "metadata", meta);
    json_t *spec = json_object();
    /* Never: a failed container must fail its pod, or no policy ever sees it. */
    json_object_set_new(spec, "restartPolicy", json_string("Never"));
    json_t *containers = json_array();
    json_array_append_new(containers, k8s_container(job, tname, name, res));
    json_object_set_new(spec, "containers", containers);
    if (job->mount_count)
        json_object_set_new(spec, "volumes", k8s_pod_volumes(job));
    json_object_set_new(pod, "spec", spec);

    json_t *t = json_object();
    json_object_set_new(t, "name", json_string(tname));
    json_object_set_new(t, "replicas", json_integer(replicas));
    json_object_set_new(t, "template", pod);
    return t;
}

int k8s_volcano_render(const struct jobspec *job, const struct catalog *cat, struct strbuf *out,
                       struct strbuf *err)
{
    int n = jobspec_replicas(job);
    const char *first = framework_pytorch_style(job->framework)     ? "master"
                        : job->framework == FRAMEWORK_TENSORFLOW_PS ? "ps"
                                                                    : NULL;
    char digits[16];
    int len = snprintf(digits, sizeof digits, "%d", n > 1 ? n - 1 : 0);
    struct findings gaps = FINDINGS_INIT;
    struct strbuf name = STRBUF_INIT, queue = STRBUF_INIT;
    /* Each pod is "<name>-<task>-<index>", its host name too: one DNS label in all. */
    k8s_job_name(job, strlen("-worker-") + (size_t)len, &name, &gaps);
    struct k8s_resources res = k8s_spec_resources(job, cat);

    json_t *doc = json_object();
    json_object_set_new(doc, "apiVersion", json_string("batch.volcano.sh/v1alpha1"));
    json_object_set_new(doc, "kind", json_string("Job"));
    json_object_set_new(doc, "metadata", k8s_metadata(job, strbuf_str(&name)));
    json_t *spec = json_object();
    json_object_set_new(spec, "schedulerName", json_string("volcano"));
    /* Gang scheduling: a distributed job starts with all its workers or not at all. */
    json_object_set_new(spec, "minAvailable", json_integer(n));
    k8s_queue_name(job, &queue, &gaps);
    json_object_set_new(spec, "queue", json_string(strbuf_str(&queue)));
    json_object_set_new(spec, "priorityClassName",
                        json_string(k8s_priority_class(job->scheduling.priority)));
    int limit = fault_backoff_limit(&job->fault_tolerance);
    if (limit != 0)
        json_object_set_new(spec, "maxRetry",
                            json_integer(limit < 0 ? VOLCANO_MAX_RETRY_FOREVER : limit));
    json_object_set_new(spec, "policies", policies(job, &gaps));
    json_object_set_new(spec, "plugins", plugins(job, n, &gaps));
    json_t *tasks = json_array();
    if (first) {
        json_array_append_new(tasks, task(job, first, 1, strbuf_str(&name), &res));
        if (n > 1)
            json_array_append_new(tasks, task(job, "worker", n - 1, strbuf_str(&name), &res));
    } else {
        json_array_append_new(tasks, task(job, "worker", n, strbuf_str(&name), &res));
    }
    json_object_set_new(spec, "tasks", tasks);
    json_object_set_new(doc, "spec", spec);

    k8s_common_gaps(job, &res, "Volcano", &gaps);
    int rc = k8s_emit(doc, "Volcano", &gaps, out, err);
    json_decref(doc);
    findings_free(&gaps);
    strbuf_free(&name);
    strbuf_free(&queue);
    return rc;
}
