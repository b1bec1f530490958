/*
 * Fuzz target: arbitrary bytes as a job file, once as YAML and once as JSON,
 * through decoding, every validation rule and finding placement. When a file
 * decodes cleanly, writing it and reading it back must give an equal job in
 * both formats (the round-trip law); a job that decodes at all, copied for
 * submitting (a clone), has no output-only field left; anything else aborts.
 *
 * "No output-only field left" is checked by what sets the rule apart, not by
 * the words of its message (a path or a name the file chose may say
 * "output-only" too): for_submit turns exactly the output-only findings from
 * warnings into errors, so the clone must have as many errors either way.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/finding.h"
#include "api/jobfile.h"
#include "api/validate.h"
#include "util/strbuf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_round_trip(const struct jobspec *job, enum jobfile_format fmt)
{
    struct strbuf sb = STRBUF_INIT;
    jobfile_write(job, fmt, &sb);
    struct jobfile back;
    struct findings fs = FINDINGS_INIT;
    jobfile_init(&back);
    enum jobfile_result rc = jobfile_parse(fmt == JOBFILE_JSON ? "rt.json" : "rt.yaml",
                                           strbuf_str(&sb), sb.len, &back, &fs);
    if (rc != JOBFILE_OK || !jobspec_equal(job, &back.job))
        abort();
    jobfile_free(&back);
    findings_free(&fs);
    strbuf_free(&sb);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const names[] = {"fuzz.yaml", "fuzz.json"};
    for (size_t i = 0; i < 2; i++) {
        struct jobfile jf;
        struct findings fs = FINDINGS_INIT;
        jobfile_init(&jf);
        enum jobfile_result rc = jobfile_parse(names[i], (const char *)data, size, &jf, &fs);
        if (rc != JOBFILE_BAD_SYNTAX) {
            validate_job(&jf.job, NULL, &fs);
            docpos_locate(&jf.pos, &fs);
            struct jobspec clone;
            struct findings cfs = FINDINGS_INIT;
            struct findings sfs = FINDINGS_INIT;
            struct validate_options submit = {.for_submit = true};
            jobspec_copy_for_submit(&clone, &jf.job);
            validate_job(&clone, NULL, &cfs);
            validate_job(&clone, &submit, &sfs);
            if (findings_count(&cfs, SEVERITY_ERROR) != findings_count(&sfs, SEVERITY_ERROR) ||
                cfs.count != sfs.count)
                abort();
            findings_free(&cfs);
            findings_free(&sfs);
            jobspec_free(&clone);
        }
        for (size_t k = 0; k < fs.count; k++)
            if (fs.items[k].path == NULL || fs.items[k].message == NULL)
                abort();
        if (rc == JOBFILE_OK) {
            check_round_trip(&jf.job, JOBFILE_YAML);
            check_round_trip(&jf.job, JOBFILE_JSON);
        }
        jobfile_free(&jf);
        findings_free(&fs);
    }
    return 0;
}
