/*
 * seed: a seeded engine for tests/tools/seedjobs (the shell tests' jobs) and
 * the benchmarks bench/bench_lists and bench/bench_engine — the engine.yaml
 * they share and N jobs created in process through engine_job_create, as a
 * POST would, with the engine's loop never run (no pass, no worker). Linked
 * into those programs by the Makefile; not a tool itself.
 */
#ifndef TRAINJOB_TESTS_TOOLS_SEED_H
#define TRAINJOB_TESTS_TOOLS_SEED_H

#include <stdbool.h>

#include "util/strbuf.h"

/* The caller's login name, or "root" when it has none. */
const char *seed_user(void);

/* Writes engine.yaml at path: workspace default owned by user, one node n1
 * (cpus 1000, memory 10,000,000 MiB, no GPUs; unschedulable when asked, so
 * nothing ever starts), pool std, spec cpu-1, image local/host. 0, or -1 with
 * why in err. */
int seed_write_config(const char *path, const char *user, bool unschedulable, struct strbuf *err);

/* Resets sb to a job body like tests/engine.test.sh's `job`: one PyTorch DDP
 * role of replicas on cpu-1 running script (JSON-safe text). */
void seed_job_body(struct strbuf *sb, const char *name, int replicas, const char *script);

/* Opens the engine on config and state_dir in process and creates n jobs
 * (one replica running "true") named PREFIX-NNN… with digits digits, owned by
 * user in workspace default, all in one store transaction. 0, or -1 with why
 * in err (nothing of the transaction kept). */
int seed_jobs(const char *config, const char *state_dir, const char *user, const char *prefix,
              int digits, long n, struct strbuf *err);

#endif
