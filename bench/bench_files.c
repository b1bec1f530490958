/*
 * bench_files: how fast job files are read, checked and written — the work
 * behind `trainjob validate`, the wizard's inline checks and every request
 * trainjobd accepts. Prints one table row per operation: the median and p99
 * time of one operation over RUNS batches.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/exitcodes.h"
#include "api/finding.h"
#include "api/jobfile.h"
#include "api/validate.h"
#include "util/fileio.h"
#include "util/strbuf.h"

#define RUNS 31
#define BATCH 200

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef void (*op_fn)(const void *arg);

/* Runs op BATCH times per run, RUNS runs; prints median and p99 per operation. */
static void measure(const char *name, op_fn op, const void *arg)
{
    double t[RUNS];
    op(arg); /* warm up caches */
    for (int r = 0; r < RUNS; r++) {
        double start = now_ns();
        for (int i = 0; i < BATCH; i++)
            op(arg);
        t[r] = (now_ns() - start) / BATCH;
    }
    qsort(t, RUNS, sizeof t[0], cmp_double);
    double median = t[RUNS / 2], p99 = t[RUNS - 1];
    printf("| %-44s | %10.1f | %10.1f | %12.0f |\n", name, median / 1e3, p99 / 1e3, 1e9 / median);
}

struct text {
    const char *name;
    const char *data;
    size_t len;
};

static void op_parse(const void *arg)
{
    const struct text *t = arg;
    struct jobfile jf;
    struct findings fs = FINDINGS_INIT;
    jobfile_init(&jf);
    jobfile_parse(t->name, t->data, t->len, &jf, &fs);
    jobfile_free(&jf);
    findings_free(&fs);
}

static void op_parse_validate(const void *arg)
{
    const struct text *t = arg;
    struct jobfile jf;
    struct findings fs = FINDINGS_INIT;
    jobfile_init(&jf);
    jobfile_parse(t->name, t->data, t->len, &jf, &fs);
    validate_job(&jf.job, NULL, &fs);
    docpos_locate(&jf.pos, &fs);
    jobfile_free(&jf);
    findings_free(&fs);
}

static void op_validate(const void *arg)
{
    struct findings fs = FINDINGS_INIT;
    validate_job(arg, NULL, &fs);
    findings_free(&fs);
}

static void op_write_yaml(const void *arg)
{
    struct strbuf sb = STRBUF_INIT;
    jobfile_write(arg, JOBFILE_YAML, &sb);
    strbuf_free(&sb);
}

static void op_write_json(const void *arg)
{
    struct strbuf sb = STRBUF_INIT;
    jobfile_write(arg, JOBFILE_JSON, &sb);
    strbuf_free(&sb);
}

static void op_exitcodes(const void *arg)
{
    struct exitcode_set set;
    struct exitcodes_error err;
    exitcodes_parse(arg, &set, &err);
}

int main(void)
{
    const char *path = "examples/pytorch-ddp.yaml";
    char *yaml;
    size_t yaml_len;
    struct strbuf err = STRBUF_INIT;
    if (file_read_all(path, 1 << 20, &yaml, &yaml_len, &err) != 0) {
        fprintf(stderr, "bench_files: %s\n", strbuf_str(&err));
        return 1;
    }
    struct jobfile jf;
    struct findings fs = FINDINGS_INIT;
    jobfile_init(&jf);
    if (jobfile_parse(path, yaml, yaml_len, &jf, &fs) != JOBFILE_OK) {
        fprintf(stderr, "bench_files: %s does not parse\n", path);
        return 1;
    }
    struct strbuf json = STRBUF_INIT;
    jobfile_write(&jf.job, JOBFILE_JSON, &json);

    struct text ytext = {path, yaml, yaml_len};
    struct text jtext = {"job.json", json.buf, json.len};
    /* The longest list the form allows: 1024 characters of codes. */
    struct strbuf codes = STRBUF_INIT;
    for (int c = 1; codes.len < 1000; c += 2)
        strbuf_addf(&codes, "%s%d", codes.len ? "," : "", c % 255 + 1);

    printf("job files (%s, %zu bytes YAML, %zu bytes JSON); %d runs of %d\n", path, yaml_len,
           json.len, RUNS, BATCH);
    printf("| %-44s | %10s | %10s | %12s |\n", "operation", "median µs", "p99 µs", "ops/s");
    printf("|%s|%s|%s|%s|\n", "----------------------------------------------", "------------",
           "------------", "--------------");
    measure("parse YAML file to job", op_parse, &ytext);
    measure("parse JSON file to job", op_parse, &jtext);
    measure("parse YAML + validate + place findings", op_parse_validate, &ytext);
    measure("validate job (every offline rule)", op_validate, &jf.job);
    measure("write job as YAML", op_write_yaml, &jf.job);
    measure("write job as JSON", op_write_json, &jf.job);
    measure("parse 1000-character exit-code list", op_exitcodes, codes.buf);

    strbuf_free(&codes);
    strbuf_free(&json);
    strbuf_free(&err);
    findings_free(&fs);
    jobfile_free(&jf);
    free(yaml);
    return 0;
}
