/*
 * seedjobs: fills a trainjobd state directory with N waiting jobs, fast —
 * the engine opened in process (its loop never runs, so no pass and no
 * worker), every job created through engine_job_create as a POST would,
 * all inside one store transaction. For the scale tests (tests/scale.test.sh)
 * and benchmarks that need 50,000 jobs in seconds, where POSTing them one by
 * one would take minutes.
 *
 *   seedjobs CONFIG STATE_DIR COUNT [PREFIX]
 *
 * CONFIG is written when missing: one node marked unschedulable (nothing
 * ever starts), pool std, spec cpu-1, workspace default owned by the caller.
 * Jobs are named PREFIX-000000 … (PREFIX "s"). Exits 0, or 1 with why.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "tests/tools/seed.h"
#include "util/strbuf.h"

int main(int argc, char **argv)
{
    if (argc < 4 || argc > 5) {
        fprintf(stderr, "usage: seedjobs CONFIG STATE_DIR COUNT [PREFIX]\n");
        return 2;
    }
    char *end;
    long count = strtol(argv[3], &end, 10);
    if (*end || count < 0 || count > 10000000) {
        fprintf(stderr, "seedjobs: COUNT: a number of jobs, not '%s'\n", argv[3]);
        return 2;
    }
    const char *prefix = argc == 5 ? argv[4] : "s";
    const char *user = seed_user();
    struct strbuf err = STRBUF_INIT;
    int rc = 0;
    if (access(argv[1], F_OK) != 0 && seed_write_config(argv[1], user, true, &err) != 0)
        rc = 1;
    else if (seed_jobs(argv[1], argv[2], user, prefix, 6, count, &err) != 0)
        rc = 1;
    if (rc != 0)
        fprintf(stderr, "seedjobs: %s\n", strbuf_str(&err));
    strbuf_free(&err);
    return rc;
}
