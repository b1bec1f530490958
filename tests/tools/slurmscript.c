/*
 * slurmscript: prints the Slurm batch script (api/slurm_script.c) of a job
 * file, for tests/slurm_supervisor.test.sh, which sbatches it on the cluster
 * that tests/slurm/cluster.sh starts.
 *
 * usage: slurmscript JOBFILE JOBS_DIR WORKSPACE [LAUNCHER]
 *   prints the script on stdout and the gaps (one line per form rule Slurm
 *   cannot honour) on stderr. Exit status 0, or 1 with a message.
 */
#include <stdio.h>

#include "api/finding.h"
#include "api/jobfile.h"
#include "api/slurm_script.h"
#include "util/strbuf.h"

int main(int argc, char **argv)
{
    if (argc < 4 || argc > 5) {
        fprintf(stderr, "usage: slurmscript JOBFILE JOBS_DIR WORKSPACE [LAUNCHER]\n");
        return 1;
    }
    struct jobfile jf;
    struct findings fs = {0};
    struct strbuf io = STRBUF_INIT, script = STRBUF_INIT, gaps = STRBUF_INIT;
    jobfile_init(&jf);
    int rc = 1;
    if (jobfile_load(argv[1], &jf, &fs, &io) != JOBFILE_OK) {
        fprintf(stderr, "slurmscript: %s: cannot read the job file %s\n", argv[1], strbuf_str(&io));
        goto out;
    }
    struct slurm_site site = {argv[2], argv[3], argc == 5 ? argv[4] : NULL, NULL, 0};
    struct api_error err = {0};
    if (slurm_script_render(&jf.job, &site, &script, &gaps, &err) != 0) {
        fprintf(stderr, "slurmscript: %s: %s\n", err.field, err.message);
        goto out;
    }
    fputs(strbuf_str(&script), stdout);
    fputs(strbuf_str(&gaps), stderr);
    rc = 0;
out:
    findings_free(&fs);
    strbuf_free(&io);
    strbuf_free(&script);
    strbuf_free(&gaps);
    jobfile_free(&jf);
    return rc;
}
