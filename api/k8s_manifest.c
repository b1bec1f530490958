/*
 * k8s_manifest: the pieces both Kubernetes renderers build their manifest
 * from (a jansson tree, written by yamltree so that one emitter quotes every
 * string a YAML reader could misread). See k8s_manifest.h.
 */
#include "api/k8s_manifest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/yamltree.h"
#include "util/utf8.h"
#include "util/xalloc.h"

static bool is_lower_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/* Drops the trailing '-' and '.' a label cannot end with. */
static void trim_end(struct strbuf *sb, size_t start)
{
    while (sb->len > start && !is_lower_alnum(sb->buf[sb->len - 1]))
        strbuf_truncate(sb, sb->len - 1);
}

bool k8s_dns_name(const char *s, enum k8s_name_kind kind, size_t max, struct strbuf *out)
{
    size_t limit = kind == K8S_NAME_LABEL ? K8S_LABEL_MAX : K8S_SUBDOMAIN_MAX;
    if (max == 0 || max > limit)
        max = limit;
    if (s == NULL)
        s = "";
    size_t start = out->len;
    for (const char *p = s; *p; p++) {
        unsigned char c = (unsigned char)*p;
        char prev = out->len > start ? out->buf[out->len - 1] : '\0';
        char ch;
        if (c >= 'A' && c <= 'Z')
            ch = (char)(c - 'A' + 'a');
        else if (is_lower_alnum((char)c))
            ch = (char)c;
        else if (c == '.' && kind == K8S_NAME_SUBDOMAIN)
            ch = '.';
        else if ((c & 0xC0) == 0x80)
            continue; /* the rest of a multi-byte character: already one '-' */
        else
            ch = '-';
        if (ch == '-' || ch == '.') {
            /*
             * Never at the start, never beside a '.', and a run of replaced
             * characters is one '-' (a '-' of the name itself is kept).
             */
            if (prev == '\0' || prev == '.' || (ch == '.' && prev == '.'))
                continue;
            if (ch == '-' && prev == '-' && c != '-')
                continue;
        }
        if (ch == '.' && prev == '-')
            strbuf_truncate(out, out->len - 1);
        strbuf_addc(out, ch);
    }
    trim_end(out, start);
    if (kind == K8S_NAME_LABEL && out->len > start &&
        !(out->buf[start] >= 'a' && out->buf[start] <= 'z')) {
        /* A DNS-1035 label starts with a letter. */
        struct strbuf tail = STRBUF_INIT;
        strbuf_add(&tail, out->buf + start, out->len - start);
        strbuf_truncate(out, start);
        strbuf_adds(out, "tj-");
        strbuf_add(out, tail.buf, tail.len);
        strbuf_free(&tail);
    }
    if (out->len - start > max) {
        strbuf_truncate(out, start + max);
        trim_end(out, start);
    }
    if (out->len == start)
        strbuf_adds(out, max >= 8 ? "trainjob" : "tj");
    return strcmp(out->buf + start, s) != 0;
}

void k8s_quantity_mib(int64_t mib, struct strbuf *out)
{
    if (mib > 0 && mib % 1024 == 0)
        strbuf_addf(out, "%lldGi", (long long)(mib / 1024));
    else
        strbuf_addf(out, "%lldMi", (long long)mib);
}

/* N from "PREFIXN" (N a positive decimal), else 0. */
static int named_count(const char *name, const char *prefix)
{
    size_t n = strlen(prefix);
    if (name == NULL || strncmp(name, prefix, n) != 0 || name[n] < '1' || name[n] > '9')
        return 0;
    char *end;
    long v = strtol(name + n, &end, 10);
    return *end == '\0' && v <= 4096 ? (int)v : 0;
}

struct k8s_resources k8s_spec_resources(const struct jobspec *job, const struct catalog *cat)
{
    struct k8s_resources r = {0, 0, 0, false};
    const struct role *role = jobspec_worker(job);
    const char *sn = role && role->resource_spec_count ? role->resource_spec[0].name : NULL;
    if (sn == NULL)
        return r;
    const struct catalog_pool *pool =
        cat && job->resource_pool.name ? catalog_pool(cat, job->resource_pool.name) : NULL;
    const struct catalog_spec *spec = pool ? catalog_pool_spec(pool, sn) : NULL;
    if (spec) {
        r.cpus = spec->vcpus;
        r.memory_mib = spec->memory_mib;
        r.gpus = spec->devices;
        r.known = true;
    } else if ((r.gpus = named_count(sn, "gpu-")) > 0) {
        r.known = true;
    } else if ((r.cpus = named_count(sn, "cpu-")) > 0) {
        r.known = true;
    }
    return r;
}

void k8s_fault_table(const struct jobspec *job, struct k8s_fault_table *t)
{
    memset(t, 0, sizeof *t);
    for (int c = 1; c < 256; c++) {
        struct fault_decision d;
        fault_decide(&job->fault_tolerance, 0, NULL, c, &d);
        t->outcome[c] = d.outcome;
        t->rule[c] = d.rule;
    }
}

void k8s_job_name(const struct jobspec *job, size_t suffix_len, struct strbuf *out,
                  struct findings *gaps)
{
    size_t max = suffix_len + 8 < K8S_LABEL_MAX ? K8S_LABEL_MAX - suffix_len : 8;
    size_t start = out->len;
    if (k8s_dns_name(job->name, K8S_NAME_LABEL, max, out))
        findings_add(
            gaps, SEVERITY_WARNING, "name",
            "'%s' is written '%s': a Kubernetes job name is lower-case letters, digits and "
            "'-', starts with a letter and, with its pods' suffix, fits %d characters",
            job->name ? job->name : "", out->buf + start, K8S_LABEL_MAX);
}

json_t *k8s_pod_labels(const char *name)
{
    json_t *labels = json_object();
    json_object_set_new(labels, "app.kubernetes.io/managed-by", json_string("trainjob"));
    json_object_set_new(labels, "trainjob/job", json_string(name));
    return labels;
}

/* Sets key to s in obj when s is given (not NULL, not empty). */
static void set_text(json_t *obj, const char *key, const char *s)
{
    if (s && s[0])
        json_object_set_new(obj, key, json_string(s));
}

json_t *k8s_metadata(const struct jobspec *job, const char *name)
{
    json_t *meta = json_object();
    json_object_set_new(meta, "name", json_string(name));
    json_object_set_new(meta, "labels", k8s_pod_labels(name));
    json_t *ann = json_object();
    set_text(ann, "trainjob/name", job->name);
    set_text(ann, "trainjob/display-name", job->display_name);
    set_text(ann, "trainjob/workspace", job->workspace_name);
    if (job->framework != FRAMEWORK_UNSPECIFIED)
        set_text(ann, "trainjob/framework", enum_name(&framework_names, (int)job->framework));
    json_object_set_new(meta, "annotations", ann);
    return meta;
}

/* The volume's name in the pod: "mount-<i>". */
static void volume_name(size_t i, char *buf, size_t size)
{
    snprintf(buf, size, "mount-%zu", i);
}

json_t *k8s_container(const struct jobspec *job, const char *container, const char *name,
                      const struct k8s_resources *res)
{
    const struct role *role = jobspec_worker(job);
    json_t *c = json_object();
    json_object_set_new(c, "name", json_string(container));
    json_object_set_new(c, "image", json_string(role && role->image_path ? role->image_path : ""));
    json_t *cmd = json_array();
    json_array_append_new(cmd, json_string("/bin/sh"));
    json_array_append_new(cmd, json_string("-c"));
    json_array_append_new(
        cmd, json_string(role && role->startup_script ? role->startup_script : "true"));
    json_object_set_new(c, "command", cmd);

    json_t *env = json_array();
    json_t *e = json_object();
    json_object_set_new(e, "name", json_string("ECP_JOB_NAME"));
    json_object_set_new(e, "value", json_string(job->name ? job->name : name));
    json_array_append_new(env, e);
    for (size_t i = 0; i < job->env_count; i++) {
        e = json_object();
        json_object_set_new(e, "name", json_string(job->env[i].key ? job->env[i].key : ""));
        json_object_set_new(e, "value", json_string(job->env[i].value ? job->env[i].value : ""));
        json_array_append_new(env, e);
    }
    json_object_set_new(c, "env", env);

    if (res->known) {
        json_t *limits = json_object();
        struct strbuf q = STRBUF_INIT;
        if (res->cpus > 0) {
            strbuf_addf(&q, "%d", res->cpus);
            json_object_set_new(limits, "cpu", json_string(strbuf_str(&q)));
        }
        if (res->memory_mib > 0) {
            strbuf_reset(&q);
            k8s_quantity_mib(res->memory_mib, &q);
            json_object_set_new(limits, "memory", json_string(strbuf_str(&q)));
        }
        if (res->gpus > 0) {
            strbuf_reset(&q);
            strbuf_addf(&q, "%d", res->gpus);
            json_object_set_new(limits, "nvidia.com/gpu", json_string(strbuf_str(&q)));
        }
        strbuf_free(&q);
        json_t *resources = json_object();
        json_object_set_new(resources, "limits", limits);
        /* Requests equal to limits: a worker gets what its spec says (Guaranteed QoS). */
        json_object_set_new(resources, "requests", json_deep_copy(limits));
        json_object_set_new(c, "resources", resources);
    }

    if (job->mount_count) {
        json_t *mounts = json_array();
        for (size_t i = 0; i < job->mount_count; i++) {
            const struct mount *m = &job->mount[i];
            char vn[32];
            volume_name(i, vn, sizeof vn);
            json_t *vm = json_object();
            json_object_set_new(vm, "name", json_string(vn));
            json_object_set_new(vm, "mountPath", json_string(m->mount_path ? m->mount_path : ""));
            /* subdir is a path inside the volume; subPath is relative. */
            const char *sub = m->subdir ? m->subdir + strspn(m->subdir, "/") : "";
            if (sub[0])
                json_object_set_new(vm, "subPath", json_string(sub));
            json_array_append_new(mounts, vm);
        }
        json_object_set_new(c, "volumeMounts", mounts);
    }
    return c;
}

json_t *k8s_pod_volumes(const struct jobspec *job)
{
    json_t *vols = json_array();
    for (size_t i = 0; i < job->mount_count; i++) {
        char vn[32];
        volume_name(i, vn, sizeof vn);
        struct strbuf claim = STRBUF_INIT;
        k8s_dns_name(job->mount[i].id, K8S_NAME_SUBDOMAIN, 0, &claim);
        json_t *pvc = json_object();
        json_object_set_new(pvc, "claimName", json_string(strbuf_str(&claim)));
        json_t *v = json_object();
        json_object_set_new(v, "name", json_string(vn));
        json_object_set_new(v, "persistentVolumeClaim", pvc);
        json_array_append_new(vols, v);
        strbuf_free(&claim);
    }
    return vols;
}

const char *k8s_priority_class(enum priority p)
{
    switch (p) {
    case PRIORITY_HIGH:
        return "trainjob-high";
    case PRIORITY_HIGHEST:
        return "trainjob-highest";
    default:
        return "trainjob-normal";
    }
}

void k8s_queue_name(const struct jobspec *job, struct strbuf *out, struct findings *gaps)
{
    const char *pool = job->resource_pool.name;
    size_t start = out->len;
    if (pool == NULL || pool[0] == '\0') {
        strbuf_adds(out, "default");
        return;
    }
    if (k8s_dns_name(pool, K8S_NAME_LABEL, 0, out))
        findings_add(gaps, SEVERITY_WARNING, "resource_pool.name",
                     "the pool '%s' is the queue '%s': a queue name is a DNS label", pool,
                     out->buf + start);
}

void k8s_common_gaps(const struct jobspec *job, const struct k8s_resources *res, const char *target,
                     struct findings *gaps)
{
    const struct role *role = jobspec_worker(job);
    const char *image = role ? role->image_path : NULL;
    if (job->workspace_name && job->workspace_name[0])
        findings_add(gaps, SEVERITY_WARNING, "workspace_name",
                     "'%s' is no namespace: kept as an annotation; choose one with kubectl -n",
                     job->workspace_name);
    if (job->resource_pool.zone && job->resource_pool.zone[0])
        findings_add(gaps, SEVERITY_WARNING, "resource_pool.zone",
                     "ignored: %s places pods by the queue; pin a zone with a node selector",
                     target);
    if (job->resource_pool.vpc_id && job->resource_pool.vpc_id[0])
        findings_add(gaps, SEVERITY_WARNING, "resource_pool.vpc_id",
                     "ignored: a Kubernetes cluster has no VPC per job");
    if (job->scheduling.scoring_strategy != SCORING_UNSPECIFIED)
        findings_add(gaps, SEVERITY_WARNING, "scheduling.scoring_strategy",
                     "%s is not applied: placement is the scheduler's configuration, not the job's",
                     enum_name(&scoring_strategy_names, (int)job->scheduling.scoring_strategy));
    if (job->scheduling.priority != PRIORITY_UNSPECIFIED)
        findings_add(gaps, SEVERITY_WARNING, "scheduling.priority",
                     "%s is the PriorityClass %s, which the cluster must define",
                     enum_name(&priority_names, (int)job->scheduling.priority),
                     k8s_priority_class(job->scheduling.priority));
    if (image == NULL || image[0] == '\0' || strcmp(image, CATALOG_HOST_IMAGE) == 0)
        findings_add(gaps, SEVERITY_WARNING, "roles[0].image_path",
                     "'%s' is no container image (the node's own environment exists only on "
                     "trainjobd and Slurm): set an image before applying",
                     image ? image : "");
    if (!res->known)
        findings_add(gaps, SEVERITY_WARNING, "roles[0].resource_spec[0].name",
                     "'%s' is not in the catalog of any backend that answered: no cpu, memory or "
                     "nvidia.com/gpu is requested",
                     role && role->resource_spec_count && role->resource_spec[0].name
                         ? role->resource_spec[0].name
                         : "");
    for (size_t i = 0; i < job->mount_count; i++) {
        const struct mount *m = &job->mount[i];
        char field[64];
        snprintf(field, sizeof field, "mount[%zu].type", i);
        findings_add(
            gaps, SEVERITY_WARNING, field,
            "%s is no Kubernetes volume type: mounted from the PersistentVolumeClaim named by "
            "its id; the claim's storage class decides the storage",
            enum_name(&mount_type_names, (int)m->type));
        struct strbuf claim = STRBUF_INIT;
        if (k8s_dns_name(m->id, K8S_NAME_SUBDOMAIN, 0, &claim)) {
            snprintf(field, sizeof field, "mount[%zu].id", i);
            findings_add(gaps, SEVERITY_WARNING, field,
                         "'%s' is the claim '%s': a claim name is a DNS subdomain",
                         m->id ? m->id : "", strbuf_str(&claim));
        }
        strbuf_free(&claim);
        if ((m->zone && m->zone[0]) || (m->endpoint && m->endpoint[0])) {
            snprintf(field, sizeof field, "mount[%zu].zone", i);
            findings_add(gaps, SEVERITY_WARNING, field,
                         "the volume's zone and endpoint are the claim's business: ignored");
        }
    }
    if (job->tensorboard.present && job->tensorboard.log_path && job->tensorboard.log_path[0])
        findings_add(gaps, SEVERITY_WARNING, "tensorboard.log_path",
                     "no TensorBoard is started by %s: the logs stay in %s for one you run", target,
                     job->tensorboard.log_path);
    if (job->barrier.present &&
        ((job->barrier.has_enable_ethernet_ping && job->barrier.enable_ethernet_ping) ||
         (job->barrier.has_enable_roce_mesh_ping && job->barrier.enable_roce_mesh_ping)))
        findings_add(gaps, SEVERITY_WARNING, "barrier",
                     "no ping checks run before the workers start");
    if (job->async_checkpoint.present && job->async_checkpoint.has_max_ckpt_rounds)
        findings_add(gaps, SEVERITY_WARNING, "async_checkpoint", "not provided by %s: ignored",
                     target);
    if (job->lme.present)
        findings_add(gaps, SEVERITY_WARNING, "lme",
                     "not provided by %s: ignored (fault_tolerance rules are rendered)", target);
    if (job->fine_tuning_specs && job->fine_tuning_specs[0])
        findings_add(gaps, SEVERITY_WARNING, "fine_tuning_specs", "not provided by %s: ignored",
                     target);
    const struct fault_tolerance *ft = &job->fault_tolerance;
    for (size_t i = 0; ft->present && i < ft->rule_count; i++) {
        if (!ft->rules[i].mark_node_unschedulable)
            continue;
        char field[80];
        snprintf(field, sizeof field, "fault_tolerance.rules[%zu].mark_node_unschedulable", i);
        findings_add(gaps, SEVERITY_WARNING, field,
                     "%s cannot keep a job's pods off the node it failed on", target);
    }
}

int k8s_emit(const json_t *doc, const char *target, const struct findings *gaps, struct strbuf *out,
             struct strbuf *err)
{
    struct doc_error de;
    if (yamltree_emit(doc, out, &de) != 0) {
        strbuf_addf(err, "the %s manifest cannot be written: %s", target, de.message);
        return -1;
    }
    strbuf_addf(out, "# what %s cannot express:\n", target);
    if (gaps->count == 0) {
        strbuf_adds(out, "# (nothing: every rule of the job is expressed)\n");
        return 0;
    }
    /* One comment line per gap: no character of the job's text may end the comment. */
    for (size_t i = 0; i < gaps->count; i++) {
        const struct finding *f = &gaps->items[i];
        strbuf_adds(out, "# ");
        utf8_sanitize(out, f->path, strlen(f->path), 0);
        strbuf_adds(out, ": ");
        utf8_sanitize(out, f->message, strlen(f->message), 0);
        strbuf_addc(out, '\n');
    }
    return 0;
}
