/*
 * k8s_volcano: a trainjob job as a Volcano Job (batch.volcano.sh/v1alpha1),
 * for `trainjob render --target volcano`.
 *
 * Tasks by framework (PyTorch-style: master + worker; TensorFlow PS: ps +
 * worker; else worker), gang-scheduled (minAvailable = every worker) by
 * schedulerName volcano in the pool's queue with the priority's
 * PriorityClass; the fault rules as job policies read the way trainjobd reads
 * them (api/fault.c): first match wins, else RESTART_JOB; RESTART_POD is
 * RestartPod, RESTART_JOB RestartJob, FAIL_JOB TerminateJob (the job ends
 * and cannot be resumed, as a failed trainjob job; AbortJob would leave it
 * resumable); backoff_limit is maxRetry. Then, as YAML comments, one line per
 * field Volcano cannot express.
 */
#ifndef API_K8S_VOLCANO_H
#define API_K8S_VOLCANO_H

#include "api/catalog.h"
#include "api/jobspec.h"
#include "util/strbuf.h"

/*
 * Appends the manifest for job (its defaults filled) to out. cat (may be
 * NULL) gives the spec's CPUs, memory and GPUs. Returns 0, or -1 with err set.
 */
int k8s_volcano_render(const struct jobspec *job, const struct catalog *cat, struct strbuf *out,
                       struct strbuf *err);

#endif
