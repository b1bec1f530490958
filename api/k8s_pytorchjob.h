/*
 * k8s_pytorchjob: a trainjob job as a Kubeflow PyTorchJob (kubeflow.org/v1),
 * for `trainjob render --target pytorchjob`.
 *
 * Master (1) and Worker (the rest) replica specs with a container named
 * "pytorch" (the operator's rule), gang-scheduled through
 * runPolicy.schedulingPolicy (minAvailable, the pool's queue, the priority's
 * PriorityClass), backoff_limit as runPolicy.backoffLimit. A PyTorchJob has
 * one restartPolicy per replica type, not a rule per exit code: the one
 * chosen is the one that agrees with the job's rules on the most exit codes
 * (Never: every failure fails; OnFailure: every failure restarts the pod;
 * ExitCode: 1-127 fail, 128-255 restart), and every rule it overrides is a
 * line in what the target cannot express.
 */
#ifndef API_K8S_PYTORCHJOB_H
#define API_K8S_PYTORCHJOB_H

#include "api/catalog.h"
#include "api/jobspec.h"
#include "util/strbuf.h"

/*
 * Appends the manifest for job (its defaults filled) to out. cat (may be
 * NULL) gives the spec's CPUs, memory and GPUs. Returns 0, or -1 with err set.
 */
int k8s_pytorchjob_render(const struct jobspec *job, const struct catalog *cat, struct strbuf *out,
                          struct strbuf *err);

#endif
