/*
 * k8s_pytorchjob: the Kubeflow PyTorchJob manifest. See k8s_pytorchjob.h.
 */
#include "api/k8s_pytorchjob.h"

#include <stdio.h>
#include <string.h>

#include "api/exitcodes.h"
#include "api/k8s_manifest.h"

enum restart_policy { RP_ON_FAILURE, RP_EXIT_CODE, RP_NEVER, RP_COUNT };

static const char *const policy_names[RP_COUNT] = {"OnFailure", "ExitCode", "Never"};

/* Whether policy restarts a worker that exited with code c (the operator's rules). */
static bool policy_restarts(enum restart_policy p, int c)
{
    return p == RP_ON_FAILURE || (p == RP_EXIT_CODE && c >= 128);
}

/* The restart policy agreeing with t on the most exit codes (ties: the earlier). */
static enum restart_policy choose_policy(const struct k8s_fault_table *t)
{
    int agree[RP_COUNT] = {0, 0, 0};
    for (int p = 0; p < RP_COUNT; p++)
        for (int c = 1; c < 256; c++)
            if (policy_restarts((enum restart_policy)p, c) == (t->outcome[c] != FAULT_FAIL_JOB))
                agree[p]++;
    int best = 0;
    for (int p = 1; p < RP_COUNT; p++)
        if (agree[p] > agree[best])
            best = p;
    return (enum restart_policy)best;
}

/* Lines for each rule (and the default) the chosen policy does not do as written. */
static void fault_gaps(const struct jobspec *job, const struct k8s_fault_table *t,
                       enum restart_policy p, struct findings *gaps)
{
    size_t rules = job->fault_tolerance.present ? job->fault_tolerance.rule_count : 0;
    for (int r = -1; r < (int)rules; r++) {
        struct exitcode_set wrong, pod_only;
        exitcodes_clear(&wrong);
        exitcodes_clear(&pod_only);
        int first_wrong = 0;
        for (int c = 1; c < 256; c++) {
            if (t->rule[c] != r)
                continue;
            bool restarts = t->outcome[c] != FAULT_FAIL_JOB;
            if (policy_restarts(p, c) != restarts) {
                exitcodes_add(&wrong, c);
                first_wrong = first_wrong ? first_wrong : c;
            } else if (t->outcome[c] == FAULT_RESTART_JOB) {
                exitcodes_add(&pod_only, c);
            }
        }
        enum ft_action action =
            r >= 0 ? job->fault_tolerance.rules[r].action : FT_ACTION_RESTART_JOB;
        bool limited = action != FT_ACTION_FAIL_JOB && first_wrong &&
                       t->outcome[first_wrong] == FAULT_FAIL_JOB;
        char field[64];
        if (r >= 0)
            snprintf(field, sizeof field, "fault_tolerance.rules[%d]", r);
        else
            snprintf(field, sizeof field, "fault_tolerance (no rule matches)");
        struct strbuf codes = STRBUF_INIT;
        if (first_wrong) {
            exitcodes_format(&wrong, &codes);
            findings_add(
                gaps, SEVERITY_WARNING, field,
                "exit code%s %s: %s%s, but under restartPolicy %s the pod %s: a PyTorchJob "
                "has one restartPolicy per replica type, not one per exit code",
                exitcodes_count(&wrong) == 1 ? "" : "s", strbuf_str(&codes),
                fault_action_name(action), limited ? " (a failure: backoff_limit is 0)" : "",
                policy_names[p],
                policy_restarts(p, first_wrong) ? "is restarted" : "is not restarted");
        }
        if (!exitcodes_empty(&pod_only)) {
            strbuf_reset(&codes);
            exitcodes_format(&pod_only, &codes);
            findings_add(gaps, SEVERITY_WARNING, field,
                         "exit code%s %s: RESTART_JOB restarts only the failed worker's pod: the "
                         "operator never restarts every worker",
                         exitcodes_count(&pod_only) == 1 ? "" : "s", strbuf_str(&codes));
        }
        strbuf_free(&codes);
    }
}

static json_t *replica(const struct jobspec *job, int replicas, enum restart_policy p,
                       const char *name, const struct k8s_resources *res)
{
    json_t *pod = json_object();
    json_t *meta = json_object();
    json_object_set_new(meta, "labels", k8s_pod_labels(name));
    json_object_set_new(pod, "metadata", meta);
    json_t *spec = json_object();
    json_t *containers = json_array();
    /* The operator finds the training container by this name. */
    json_array_append_new(containers, k8s_container(job, "pytorch", name, res));
    json_object_set_new(spec, "containers", containers);
    if (job->mount_count)
        json_object_set_new(spec, "volumes", k8s_pod_volumes(job));
    json_object_set_new(pod, "spec", spec);

    json_t *r = json_object();
    json_object_set_new(r, "replicas", json_integer(replicas));
    json_object_set_new(r, "restartPolicy", json_string(policy_names[p]));
    json_object_set_new(r, "template", pod);
    return r;
}

int k8s_pytorchjob_render(const struct jobspec *job, const struct catalog *cat, struct strbuf *out,
                          struct strbuf *err)
{
    int n = jobspec_replicas(job);
    char digits[16];
    int len = snprintf(digits, sizeof digits, "%d", n > 1 ? n - 1 : 0);
    struct findings gaps = FINDINGS_INIT;
    struct strbuf name = STRBUF_INIT, queue = STRBUF_INIT;
    /* Each pod is "<name>-worker-<index>" ("-master-0"), its host name too. */
    k8s_job_name(job, strlen("-worker-") + (size_t)len, &name, &gaps);
    struct k8s_resources res = k8s_spec_resources(job, cat);
    if (!framework_pytorch_style(job->framework))
        findings_add(
            &gaps, SEVERITY_WARNING, "framework",
            "%s is not PyTorch: the operator gives PyTorch's MASTER_ADDR, MASTER_PORT, "
            "WORLD_SIZE and RANK, not the framework's own (--target volcano has its plugin)",
            enum_name(&framework_names, (int)job->framework));

    struct k8s_fault_table t;
    k8s_fault_table(job, &t);
    enum restart_policy p = choose_policy(&t);
    fault_gaps(job, &t, p, &gaps);
    if (job->ssh.present && job->ssh.auto_key_setup)
        findings_add(&gaps, SEVERITY_WARNING, "ssh.auto_key_setup",
                     "no SSH keys are set up between the workers");
    if (job->scheduling.preemptible)
        findings_add(&gaps, SEVERITY_WARNING, "scheduling.preemptible",
                     "a PyTorchJob has no preemptible mark: the queue's policy decides");

    json_t *doc = json_object();
    json_object_set_new(doc, "apiVersion", json_string("kubeflow.org/v1"));
    json_object_set_new(doc, "kind", json_string("PyTorchJob"));
    json_object_set_new(doc, "metadata", k8s_metadata(job, strbuf_str(&name)));
    json_t *spec = json_object();
    json_t *run = json_object();
    int limit = fault_backoff_limit(&job->fault_tolerance);
    if (limit >= 0) /* none: the operator retries without limit, as -1 asks */
        json_object_set_new(run, "backoffLimit", json_integer(limit));
    json_t *sched = json_object();
    json_object_set_new(sched, "minAvailable", json_integer(n));
    k8s_queue_name(job, &queue, &gaps);
    json_object_set_new(sched, "queue", json_string(strbuf_str(&queue)));
    json_object_set_new(sched, "priorityClass",
                        json_string(k8s_priority_class(job->scheduling.priority)));
    json_object_set_new(run, "schedulingPolicy", sched);
    json_object_set_new(spec, "runPolicy", run);
    json_t *replicas = json_object();
    json_object_set_new(replicas, "Master", replica(job, 1, p, strbuf_str(&name), &res));
    if (n > 1)
        json_object_set_new(replicas, "Worker", replica(job, n - 1, p, strbuf_str(&name), &res));
    json_object_set_new(spec, "pytorchReplicaSpecs", replicas);
    json_object_set_new(doc, "spec", spec);

    k8s_common_gaps(job, &res, "PyTorchJob", &gaps);
    int rc = k8s_emit(doc, "PyTorchJob", &gaps, out, err);
    json_decref(doc);
    findings_free(&gaps);
    strbuf_free(&name);
    strbuf_free(&queue);
    return rc;
}
