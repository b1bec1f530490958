/*
 * fuzz_slurm_jobdir: the Slurm driver reading a job directory
 * (api/slurm_jobdir.c, api/slurm_jobs.c), whose files the job's user writes
 * and may forge. The input's first byte picks the file, the next two the
 * tail's size; the rest is the file's bytes, written to a private temporary
 * job directory and read back through the driver's own functions.
 *   events.jsonl: every event's text is UTF-8 with no control character
 *     (C0, DEL, C1) and within its bound, numbers within their ranges, at
 *     most 2000 events, ids 1..n; the file read whole gives exactly what
 *     slurm_events_parse gives for its bytes, and read as a tail of any size
 *     gives the newest events of the whole, never a broken first line.
 *   workers/worker-0.json: at most one worker, named worker-0, its text
 *     clean and bounded, its exit code a wait status's 0..255.
 *   job.json: read as the driver reads a stored job (no crash, no leak).
 * A failed check aborts, as under libFuzzer; tests/fuzz/replay.c replays the
 * seeds in `make test`.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/jobspec.h"
#include "api/jobstatus.h"
#include "api/slurm_priv.h"
#include "util/utf8.h"
#include "util/xalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "fuzz_slurm_jobdir: %s:%d: check failed: %s\n", __FILE__, __LINE__,    \
                    #cond);                                                                        \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

#define EVENT_TEXT_MAX 1024 /* as api/slurm_jobdir.c */
#define EVENTS_COUNT_MAX 2000

static char *dir; /* the job directory, made once */

static void remove_dir(void)
{
    const char *files[] = {"events.jsonl", "workers/worker-0.json", "job.json"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char *p = xasprintf("%s/%s", dir, files[i]);
        unlink(p);
        free(p);
    }
    char *w = xasprintf("%s/workers", dir);
    rmdir(w);
    free(w);
    rmdir(dir);
    free(dir);
}

static void make_dir(void)
{
    if (dir)
        return;
    const char *tmp = getenv("TMPDIR");
    dir = xasprintf("%s/fuzz_slurm_jobdir.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    CHECK(mkdtemp(dir) != NULL);
    char *w = xasprintf("%s/workers", dir);
    CHECK(mkdir(w, 0700) == 0);
    free(w);
    atexit(remove_dir);
}

static void write_file(const char *name, const uint8_t *data, size_t size)
{
    char *p = xasprintf("%s/%s", dir, name);
    FILE *f = fopen(p, "wb");
    CHECK(f != NULL);
    CHECK(size == 0 || fwrite(data, 1, size, f) == size);
    CHECK(fclose(f) == 0);
    free(p);
}

/* Text the caller may print: bounded, valid UTF-8, no C0, DEL or C1 control. */
static void check_text(const char *s, size_t max)
{
    if (s == NULL)
        return;
    size_t n = strlen(s);
    CHECK(n <= max);
    CHECK(utf8_valid(s, n));
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        CHECK(c >= 0x20 && c != 0x7f);
        if (c == 0xc2 && i + 1 < n)
            CHECK((unsigned char)s[i + 1] < 0x80 || (unsigned char)s[i + 1] > 0x9f);
    }
}

static bool same_text(const char *a, const char *b)
{
    return (a == NULL && b == NULL) || (a && b && strcmp(a, b) == 0);
}

static bool same_event(const struct job_event *a, const struct job_event *b)
{
    return a->kind == b->kind && a->state == b->state && a->has_exit_code == b->has_exit_code &&
           a->exit_code == b->exit_code && a->has_rule == b->has_rule && a->rule == b->rule &&
           a->has_restarts_used == b->has_restarts_used && a->restarts_used == b->restarts_used &&
           a->has_restart_limit == b->has_restart_limit && a->restart_limit == b->restart_limit &&
           same_text(a->time, b->time) && same_text(a->job, b->job) &&
           same_text(a->worker, b->worker) && same_text(a->node, b->node) &&
           same_text(a->action, b->action) && same_text(a->message, b->message);
}

static void check_events(const struct job_event_list *l)
{
    CHECK(l->count <= EVENTS_COUNT_MAX);
    for (size_t i = 0; i < l->count; i++) {
        const struct job_event *e = &l->events[i];
        CHECK(e->id == (int64_t)i + 1);
        CHECK(e->job && strcmp(e->job, "fz") == 0);
        CHECK(e->message != NULL);
        check_text(e->message, EVENT_TEXT_MAX);
        check_text(e->time, 40);
        check_text(e->worker, 128);
        check_text(e->node, 128);
        check_text(e->action, 32);
        CHECK(!e->has_exit_code || (e->exit_code >= 0 && e->exit_code <= 255));
        CHECK(!e->has_rule || (e->rule >= 1 && e->rule <= 1000));
        CHECK(!e->has_restarts_used || e->restarts_used >= 0);
        CHECK(!e->has_restart_limit || e->restart_limit >= -1);
    }
}

/* Events in the lines that start at or after byte start, each line read on its own. */
static size_t events_from(const uint8_t *data, size_t size, size_t start)
{
    size_t n = 0;
    for (size_t at = 0; at < size;) {
        const uint8_t *nl = memchr(data + at, '\n', size - at);
        if (nl == NULL)
            break;
        size_t len = (size_t)(nl - (data + at)) + 1;
        if (at >= start) {
            struct job_event_list one;
            n += slurm_events_parse((const char *)data + at, len, false, "fz", &one);
            job_event_list_free(&one);
        }
        at += len;
    }
    return n;
}

static void fuzz_events(const uint8_t *data, size_t size, size_t max)
{
    write_file("events.jsonl", data, size);
    struct job_event_list whole, file, tail;
    slurm_events_parse((const char *)data, size, false, "fz", &whole);
    check_events(&whole);
    /* Read whole from the file: the same events. */
    slurm_events_from_dir(dir, geteuid(), "fz", size + 1, &file);
    CHECK(file.count == whole.count);
    for (size_t i = 0; i < whole.count; i++)
        CHECK(same_event(&file.events[i], &whole.events[i]));
    /* Read as a tail: the newest events of the whole, whatever the cut. */
    slurm_events_from_dir(dir, geteuid(), "fz", max, &tail);
    check_events(&tail);
    CHECK(tail.count <= whole.count);
    for (size_t i = 0; i < tail.count; i++)
        CHECK(same_event(&tail.events[i], &whole.events[whole.count - tail.count + i]));
    /* It holds every event whose whole line it holds: a line that starts the tail exactly is
     * kept, one cut by it is not. */
    size_t start = size > max ? size - max : 0;
    size_t expect = events_from(data, size, start);
    CHECK(tail.count == (expect < EVENTS_COUNT_MAX ? expect : EVENTS_COUNT_MAX));
    job_event_list_free(&whole);
    job_event_list_free(&file);
    job_event_list_free(&tail);
}

static void fuzz_worker(const uint8_t *data, size_t size)
{
    write_file("workers/worker-0.json", data, size);
    struct worker_list l;
    memset(&l, 0, sizeof l);
    slurm_workers_from_dir(dir, geteuid(), &l);
    CHECK(l.count <= 1);
    for (size_t i = 0; i < l.count; i++) {
        const struct worker_info *w = &l.workers[i];
        CHECK(w->name && strcmp(w->name, "worker-0") == 0);
        check_text(w->node_name, 128);
        check_text(w->phase_other, 32);
        check_text(w->exit_reason, 256);
        check_text(w->start_time, 40);
        check_text(w->finish_time, 40);
        CHECK(!w->has_exit_code || (w->exit_code >= 0 && w->exit_code <= 255));
        CHECK(!w->has_restarts || w->restarts >= 0);
    }
    worker_list_free(&l);
    char *p = xasprintf("%s/workers/worker-0.json", dir);
    unlink(p);
    free(p);
}

static void fuzz_job(const uint8_t *data, size_t size)
{
    write_file("job.json", data, size);
    struct jobspec j;
    jobspec_init(&j);
    slurm_stored_job(dir, geteuid(), &j);
    jobspec_free(&j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3)
        return 0;
    make_dir();
    size_t max = ((size_t)data[1] << 8 | data[2]);
    const uint8_t *body = data + 3;
    size_t len = size - 3;
    switch (data[0] % 3) {
    case 0:
        fuzz_events(body, len, max);
        break;
    case 1:
        fuzz_worker(body, len);
        break;
    default:
        fuzz_job(body, len);
        break;
    }
    return 0;
}
