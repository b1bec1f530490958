/*
 * k8s_manifest: what the Kubernetes renderers (api/k8s_volcano.c,
 * api/k8s_pytorchjob.c) share — names made DNS-safe, resource quantities
 * from a resource spec, the worker container and its volumes, the labels
 * naming trainjob, what no Kubernetes target can express, and the manifest
 * written as YAML with those lines after it as comments. What a target
 * cannot express is kept as findings (a warning naming the field each), the
 * shape validation reports in.
 *
 * Pure: the job (with its defaults filled) and, when a backend answered, its
 * catalog in; text out. No I/O, no kube API: `trainjob render --target
 * volcano|pytorchjob` prints what a user then gives to `kubectl apply -f`.
 */
#ifndef API_K8S_MANIFEST_H
#define API_K8S_MANIFEST_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/catalog.h"
#include "api/fault.h"
#include "api/finding.h"
#include "api/jobspec.h"
#include "util/strbuf.h"

#define K8S_LABEL_MAX 63      /* a DNS-1123 / DNS-1035 label */
#define K8S_SUBDOMAIN_MAX 253 /* a DNS-1123 subdomain */

enum k8s_name_kind {
    K8S_NAME_LABEL,     /* DNS-1035 label: [a-z]([-a-z0-9]*[a-z0-9])? (job, queue, volume names) */
    K8S_NAME_SUBDOMAIN, /* DNS-1123 subdomain: labels of [a-z0-9-] joined by '.' (claim names) */
};

/*
 * Appends to out a name of kind made from s, at most max (<= the kind's
 * limit) characters: letters lower-cased, '-' kept, every other character
 * (a run of them, a multi-byte UTF-8 character counting as one) turned into
 * one '-', '-' and '.' trimmed where a label cannot start or end (a name may
 * hold "--", no label may start or end with '-'); a label that would start
 * with a digit gets "tj-" in front; nothing left gives "trainjob". Returns
 * whether the name differs from s.
 */
bool k8s_dns_name(const char *s, enum k8s_name_kind kind, size_t max, struct strbuf *out);

/* Appends a memory quantity: "64Gi" when mib is a whole number of GiB, else "1536Mi". */
void k8s_quantity_mib(int64_t mib, struct strbuf *out);

/* What one worker holds, as far as it is known (0 = not known / none). */
struct k8s_resources {
    int cpus;
    int64_t memory_mib;
    int gpus;
    bool known; /* from the catalog or the spec's own name */
};

/*
 * The worker's resources: the catalog's spec (pool + name) when the catalog
 * has it, else what trainjob's own spec names say ("gpu-N": N GPUs, "cpu-N":
 * N CPUs), else nothing known.
 */
struct k8s_resources k8s_spec_resources(const struct jobspec *job, const struct catalog *cat);

/*
 * The manifest's names: the job's name made a DNS-1035 label short enough
 * that "<name>-<longest role>-<last index>" (each pod's host name) is still a
 * label. Appends to out; a finding in gaps says what changed, if anything.
 */
void k8s_job_name(const struct jobspec *job, size_t suffix_len, struct strbuf *out,
                  struct findings *gaps);

/* metadata: name, labels naming trainjob and the job, annotations with the job's own words. */
json_t *k8s_metadata(const struct jobspec *job, const char *name);
/* The labels on every pod: the same as the manifest's. */
json_t *k8s_pod_labels(const char *name);

/*
 * The worker container: named container, the role's image, /bin/sh -c
 * startup_script, ECP_JOB_NAME (the job's own name, else name) then the
 * user's env, resources (limits = requests), one volumeMount per mount.
 */
json_t *k8s_container(const struct jobspec *job, const char *container, const char *name,
                      const struct k8s_resources *res);
/* The pod's volumes: one PersistentVolumeClaim per mount, claimName from mount[].id. */
json_t *k8s_pod_volumes(const struct jobspec *job);

/* The PriorityClass a priority is rendered as ("trainjob-high"); the cluster must have it. */
const char *k8s_priority_class(enum priority p);
/* The queue the pool is rendered as (appends a DNS label); a finding in gaps when changed. */
void k8s_queue_name(const struct jobspec *job, struct strbuf *out, struct findings *gaps);

/*
 * What the job's fault rules do with each exit code 1..255 of a worker's
 * first failure (fault_decide, so trainjobd's reading, backoff_limit 0 making
 * every restart a failure): outcome[c] and the rule that decided (-1: the
 * platform default). Index 0 is unused.
 */
struct k8s_fault_table {
    enum fault_outcome outcome[256];
    int rule[256];
};
void k8s_fault_table(const struct jobspec *job, struct k8s_fault_table *t);

/*
 * Findings for what neither Kubernetes target expresses: pool zone and VPC,
 * scoring strategy, volume types, zones and endpoints, the host image,
 * TensorBoard, barrier, async checkpoint, LME, fine-tuning specs, marking a
 * node, the workspace, unknown resources. target names the kind ("Volcano").
 */
void k8s_common_gaps(const struct jobspec *job, const struct k8s_resources *res, const char *target,
                     struct findings *gaps);

/*
 * Appends doc as YAML to out, then "# what TARGET cannot express:" and each
 * of gaps as a comment "# FIELD: MESSAGE" ("# (nothing …)" when none). Returns 0, or -1
 * with err set (text that is not UTF-8).
 */
int k8s_emit(const json_t *doc, const char *target, const struct findings *gaps, struct strbuf *out,
             struct strbuf *err);

#endif
