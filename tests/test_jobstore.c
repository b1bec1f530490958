/*
 * test_jobstore: the monitoring screens' model — rows from watch messages
 * and polls, found by name among 10,000, events merged by id and bounded,
 * jobs gone while the stream was down swept at the next sync, versions
 * bumped only by changes, and what counts as faulty; summaries (view=BASIC)
 * that keep workers and mark them stale; 50,000 deletions in linear time.
 */
// clang-format off
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
// clang-format on

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/backend.h"
#include "tui/jobstore.h"
#include "util/xalloc.h"

static struct resource_spec_ref spec = {.name = (char *)"N2-8xA100",
                                        .has_replicas = true,
                                        .replicas = 2,
                                        .description = (char *)"8xA100-80GB"};
static struct role worker_role = {
    .name = (char *)"Worker", .resource_spec = &spec, .resource_spec_count = 1};

static struct jobspec job(const char *name, enum job_state state)
{
    struct jobspec j;
    jobspec_init(&j);
    j.name = (char *)name;
    j.uid = (char *)name;
    j.state = state;
    j.roles = &worker_role;
    j.role_count = 1;
    return j;
}

static void rows_come_from_jobs_and_are_found_by_name(void **state)
{
    (void)state;
    struct jobstore *s = jobstore_new();
    char names[10000][16];
    for (int i = 0; i < 10000; i++) {
        snprintf(names[i], sizeof names[i], "pt-%05d", i);
        struct jobspec j = job(names[i], JOB_STATE_RUNNING);
        assert_true(jobstore_put(s, &j));
    }
    assert_int_equal(jobstore_count(s), 10000);
    const struct job_row *r = jobstore_find(s, "pt-04242");
    assert_non_null(r);
    assert_string_equal(r->name, "pt-04242");
    assert_int_equal(r->total, 2);
    assert_int_equal(r->devices, 16);
    assert_string_equal(r->spec, "N2-8xA100");
    assert_null(jobstore_find(s, "pt-10000"));

    /* The same job again changes nothing; a new state does. */
    uint64_t v = jobstore_version(s);
    struct jobspec same = job("pt-04242", JOB_STATE_RUNNING);
    assert_false(jobstore_put(s, &same));
    assert_int_equal(jobstore_version(s), v);
    struct jobspec failed = job("pt-04242", JOB_STATE_FAILED);
    assert_true(jobstore_put(s, &failed));
    assert_true(jobstore_version(s) > v);
    assert_int_equal(jobstore_find(s, "pt-04242")->state, JOB_STATE_FAILED);

    /* Removal keeps the others findable. */
    assert_true(jobstore_remove(s, "pt-00000"));
    assert_null(jobstore_find(s, "pt-00000"));
    assert_non_null(jobstore_find(s, "pt-09999"));
    assert_int_equal(jobstore_count(s), 9999);
    jobstore_free(s);
}

static void watch_messages_carry_workers_and_events(void **state)
{
    (void)state;
    struct jobstore *s = jobstore_new();
    struct watch_message m;
    memset(&m, 0, sizeof m);
    m.kind = WATCH_JOB;
    m.job = job("pt-a", JOB_STATE_RUNNING);
    struct worker_info w[2];
    memset(w, 0, sizeof w);
    w[0].name = (char *)"master-0";
    w[0].phase = WORKER_RUNNING;
    w[1].name = (char *)"worker-0";
    w[1].phase = WORKER_RUNNING;
    w[1].has_exit_code = true;
    w[1].exit_code = 201;
    w[1].restarts = 1;
    m.workers.workers = w;
    m.workers.count = 2;
    assert_true(jobstore_apply(s, &m));
    const struct job_row *r = jobstore_find(s, "pt-a");
    assert_int_equal(r->workers.count, 2);
    assert_string_equal(r->workers.workers[1].name, "worker-0");
    assert_int_equal(r->workers.workers[1].exit_code, 201);
    assert_true(job_row_faulty(r));
    assert_false(jobstore_apply(s, &m)); /* nothing new */

    struct watch_message e;
    memset(&e, 0, sizeof e);
    e.kind = WATCH_EVENT;
    e.event.job = (char *)"pt-a";
    e.event.kind = EVENT_FAULT;
    e.event.message = (char *)"worker-0 exited 201";
    for (int i = 1; i <= JOBSTORE_EVENTS_PER_JOB + 50; i++) {
        e.event.id = i;
        assert_true(jobstore_apply(s, &e));
    }
    r = jobstore_find(s, "pt-a");
    assert_int_equal(r->event_count, JOBSTORE_EVENTS_PER_JOB); /* bounded */
    assert_int_equal(r->events[0].id, 51);
    assert_int_equal(r->events[r->event_count - 1].id, JOBSTORE_EVENTS_PER_JOB + 50);
    e.event.id = JOBSTORE_EVENTS_PER_JOB + 50;
    assert_false(jobstore_apply(s, &e)); /* a duplicate */

    /* An event for a job not in the store is ignored. */
    e.event.job = (char *)"pt-zzz";
    e.event.id = 9999;
    assert_false(jobstore_apply(s, &e));

    struct watch_message d;
    memset(&d, 0, sizeof d);
    d.kind = WATCH_DELETED;
    d.job.name = (char *)"pt-a";
    assert_true(jobstore_apply(s, &d));
    assert_int_equal(jobstore_count(s), 0);
    jobstore_free(s);
}

static void a_resync_sweeps_jobs_deleted_meanwhile(void **state)
{
    (void)state;
    struct jobstore *s = jobstore_new();
    jobstore_begin_sync(s);
    struct jobspec a = job("pt-a", JOB_STATE_RUNNING), b = job("pt-b", JOB_STATE_QUEUEING);
    jobstore_put(s, &a);
    jobstore_put(s, &b);
    /* The stream drops; on reconnect only pt-b is reported before SYNCED. */
    jobstore_begin_sync(s);
    struct watch_message m;
    memset(&m, 0, sizeof m);
    m.kind = WATCH_JOB;
    m.job = b;
    jobstore_apply(s, &m);
    m.kind = WATCH_SYNCED;
    assert_true(jobstore_apply(s, &m));
    assert_int_equal(jobstore_count(s), 1);
    assert_non_null(jobstore_find(s, "pt-b"));
    assert_null(jobstore_find(s, "pt-a"));

    /* A poll's list replaces everything. */
    struct jobspec list[2] = {job("pt-c", JOB_STATE_SUCCEEDED), job("pt-d", JOB_STATE_FAILED)};
    struct job_list l = {list, 2, NULL, 2};
    assert_true(jobstore_replace_all(s, &l));
    assert_int_equal(jobstore_count(s), 2);
    assert_null(jobstore_find(s, "pt-b"));
    assert_false(jobstore_replace_all(s, &l)); /* the same list: no change */
    size_t counts[JOB_STATE_COUNT];
    jobstore_count_states(s, counts);
    assert_int_equal(counts[JOB_STATE_FAILED], 1);
    assert_int_equal(counts[JOB_STATE_SUCCEEDED], 1);
    assert_true(job_row_faulty(jobstore_find(s, "pt-d")));
    assert_false(job_row_faulty(jobstore_find(s, "pt-c")));
    jobstore_free(s);
}

static void a_fetched_history_merges_in_id_order(void **state)
{
    (void)state;
    struct jobstore *s = jobstore_new();
    struct jobspec a = job("pt-a", JOB_STATE_RUNNING);
    jobstore_put(s, &a);
    struct watch_message m;
    memset(&m, 0, sizeof m);
    m.kind = WATCH_EVENT;
    m.event.job = (char *)"pt-a";
    m.event.id = 7;
    m.event.message = (char *)"live";
    jobstore_apply(s, &m);
    struct job_event_list l = {xcalloc(3, sizeof(struct job_event)), 3};
    for (int i = 0; i < 3; i++) {
        l.events[i].id = 5 + i; /* 5, 6, 7: 7 is already there */
        l.events[i].job = xstrdup("pt-a");
        l.events[i].message = xstrdup("history");
    }
    jobstore_add_events(s, "pt-a", &l);
    const struct job_row *r = jobstore_find(s, "pt-a");
    assert_int_equal(r->event_count, 3);
    assert_int_equal(r->events[0].id, 5);
    assert_int_equal(r->events[1].id, 6);
    assert_int_equal(r->events[2].id, 7);
    assert_string_equal(r->events[2].message, "live");
    jobstore_free(s);
}

/*
 * A watch of summaries (view=BASIC): a JOB message without workers keeps
 * the workers a fetch brought, marks them stale for the job screen to fetch
 * again, and counts; the server's faulty_workers count makes a row faulty
 * without its workers.
 */
static void summaries_keep_workers_and_mark_them_stale(void **state)
{
    (void)state;
    struct jobstore *s = jobstore_new();
    struct watch_message m;
    memset(&m, 0, sizeof m);
    m.kind = WATCH_JOB;
    m.job = job("pt-s", JOB_STATE_RUNNING);
    assert_true(jobstore_apply(s, &m)); /* a summary: a new row, no workers */
    const struct job_row *r = jobstore_find(s, "pt-s");
    assert_false(r->has_workers);
    assert_false(r->workers_stale); /* none to be stale: the screen fetches on opening */
    assert_int_equal(r->summaries, 1);
    assert_false(job_row_faulty(r));

    struct worker_info w;
    memset(&w, 0, sizeof w);
    w.name = (char *)"worker-0";
    w.phase = WORKER_RUNNING;
    struct worker_list wl = {xcalloc(1, sizeof w), 1};
    worker_info_copy(&wl.workers[0], &w);
    jobstore_set_workers(s, "pt-s", &wl); /* the job screen's fetch */
    assert_true(r->has_workers);

    uint64_t v = r->version;
    assert_true(jobstore_apply(s, &m)); /* the same summary again: the job changed somewhere */
    assert_true(r->workers_stale);
    assert_true(r->version > v);
    assert_int_equal(r->workers.count, 1); /* kept */
    assert_int_equal(r->summaries, 2);

    struct worker_list again = {xcalloc(1, sizeof w), 1};
    worker_info_copy(&again.workers[0], &w);
    jobstore_set_workers(s, "pt-s", &again);
    assert_false(r->workers_stale);

    m.job.has_faulty_workers = true;
    m.job.faulty_workers = 1;
    assert_true(jobstore_apply(s, &m));
    assert_true(job_row_faulty(r));
    jobstore_free(s);
}

/*
 * A polled backend (Slurm) lists jobs without workers or events: a poll
 * that sees the job change marks the workers a fetch brought stale and the
 * events worth fetching again, so the job screen left open does not keep
 * workers Running after the job ended; an unchanged poll marks nothing.
 */
static void a_poll_that_sees_a_change_marks_workers_and_events_stale(void **state)
{
    (void)state;
    struct jobstore *s = jobstore_new();
    struct jobspec list[1] = {job("pt-p", JOB_STATE_RUNNING)};
    struct job_list l = {list, 1, NULL, 1};
    assert_true(jobstore_replace_all(s, &l));
    const struct job_row *r = jobstore_find(s, "pt-p");
    struct worker_info w;
    memset(&w, 0, sizeof w);
    w.name = (char *)"worker-0";
    w.phase = WORKER_RUNNING;
    struct worker_list wl = {xcalloc(1, sizeof w), 1};
    worker_info_copy(&wl.workers[0], &w);
    jobstore_set_workers(s, "pt-p", &wl); /* the job screen's fetch */
    struct job_event_list none = {NULL, 0};
    jobstore_add_events(s, "pt-p", &none); /* and its history */
    assert_false(r->workers_stale);
    assert_false(r->events_stale);
    assert_false(jobstore_replace_all(s, &l)); /* the same list */
    assert_false(r->workers_stale);
    assert_false(r->events_stale);
    uint64_t summaries = r->summaries;

    list[0].state = JOB_STATE_SUCCEEDED;
    assert_true(jobstore_replace_all(s, &l));
    assert_true(r->workers_stale);
    assert_true(r->events_stale);
    assert_true(r->summaries > summaries); /* a fetch out meanwhile is made again */
    jobstore_free(s);
}

/*
 * A worker trainjobd stopped (phase "Stopped", exit 143) ended as asked:
 * its job is not faulty for it; a worker that failed with 143 is.
 */
static void a_stopped_worker_is_not_faulty(void **state)
{
    (void)state;
    struct jobstore *s = jobstore_new();
    struct watch_message m;
    memset(&m, 0, sizeof m);
    m.kind = WATCH_JOB;
    m.job = job("pt-stop", JOB_STATE_SUSPENDED);
    assert_true(jobstore_apply(s, &m));
    const struct job_row *r = jobstore_find(s, "pt-stop");
    struct worker_info w;
    memset(&w, 0, sizeof w);
    w.name = (char *)"master-0";
    w.phase_other = (char *)"Stopped";
    w.has_exit_code = true;
    w.exit_code = 143;
    w.exit_reason = (char *)"stopped";
    struct worker_list wl = {xcalloc(1, sizeof w), 1};
    worker_info_copy(&wl.workers[0], &w);
    jobstore_set_workers(s, "pt-stop", &wl);
    assert_true(worker_info_stopped(&w));
    assert_false(job_row_faulty(r));
    w.phase_other = NULL;
    w.phase = WORKER_SUCCEEDED; /* exited 143 by itself: a failure */
    struct worker_list failed = {xcalloc(1, sizeof w), 1};
    worker_info_copy(&failed.workers[0], &w);
    jobstore_set_workers(s, "pt-stop", &failed);
    assert_false(worker_info_stopped(&w));
    assert_true(job_row_faulty(r));
    jobstore_free(s);
}

/*
 * 50,000 rows deleted one watch message at a time, the view reading the
 * array between bursts: each removal used to scan the rows and rebuild the
 * index (minutes in all); now a hole, closed at the next read.
 */
static void deleting_50k_rows_one_by_one_is_linear(void **state)
{
    (void)state;
    enum { N = 50000 };
    struct jobstore *s = jobstore_new();
    static char names[N][16];
    for (int i = 0; i < N; i++) {
        snprintf(names[i], sizeof names[i], "pt-%05d", i);
        struct jobspec j = job(names[i], JOB_STATE_RUNNING);
        jobstore_put(s, &j);
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    struct watch_message d;
    memset(&d, 0, sizeof d);
    d.kind = WATCH_DELETED;
    for (int i = 0; i < N; i += 2) { /* every other: holes between survivors */
        d.job.name = names[i];
        assert_true(jobstore_apply(s, &d));
        if (i % 1000 == 0)
            assert_int_equal(jobstore_count(s), (size_t)(N - i / 2 - 1));
    }
    assert_int_equal(jobstore_count(s), N / 2);
    for (size_t i = 0; i < N / 2; i++) /* order kept, every survivor found */
        assert_string_equal(jobstore_at(s, i)->name, names[2 * i + 1]);
    assert_non_null(jobstore_find(s, "pt-49999"));
    assert_null(jobstore_find(s, "pt-49998"));
    for (int i = 1; i < N; i += 2) {
        d.job.name = names[i];
        assert_true(jobstore_apply(s, &d));
    }
    assert_int_equal(jobstore_count(s), 0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double s_taken = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    assert_true(s_taken < 5.0); /* ~10 ms; the old scan-and-rebuild took minutes */
    jobstore_free(s);
}

/* Rows share their pool, spec and reason text; a change or a removal lets go of it, once. */
static void rows_share_repeated_text(void **state)
{
    (void)state;
    struct jobstore *s = jobstore_new();
    const char *names[] = {"pt-1", "pt-2", "pt-3"};
    for (int i = 0; i < 3; i++) {
        struct jobspec j = job(names[i], JOB_STATE_QUEUEING);
        j.state_message = (char *)"waiting for the scheduler";
        j.resource_pool.name = (char *)"std";
        jobstore_put(s, &j);
    }
    const struct job_row *a = jobstore_find(s, "pt-1"), *b = jobstore_find(s, "pt-2");
    assert_ptr_equal(a->reason, b->reason); /* one copy */
    assert_ptr_equal(a->pool, b->pool);
    assert_ptr_equal(a->spec, b->spec);
    struct jobspec j = job("pt-2", JOB_STATE_QUEUEING);
    j.state_message = (char *)"needs 16 GPUs, 8 free";
    j.resource_pool.name = (char *)"std";
    assert_true(jobstore_put(s, &j));
    assert_string_equal(b->reason, "needs 16 GPUs, 8 free");
    assert_string_equal(a->reason, "waiting for the scheduler");
    assert_true(jobstore_remove(s, "pt-1"));
    assert_true(jobstore_remove(s, "pt-2")); /* its own reason goes with it */
    const struct job_row *c = jobstore_find(s, "pt-3");
    assert_string_equal(c->reason, "waiting for the scheduler");
    assert_string_equal(c->pool, "std");
    jobstore_free(s); /* valgrind / ASan: nothing left, nothing freed twice */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rows_come_from_jobs_and_are_found_by_name),
        cmocka_unit_test(watch_messages_carry_workers_and_events),
        cmocka_unit_test(a_resync_sweeps_jobs_deleted_meanwhile),
        cmocka_unit_test(a_fetched_history_merges_in_id_order),
        cmocka_unit_test(summaries_keep_workers_and_mark_them_stale),
        cmocka_unit_test(a_poll_that_sees_a_change_marks_workers_and_events_stale),
        cmocka_unit_test(a_stopped_worker_is_not_faulty),
        cmocka_unit_test(deleting_50k_rows_one_by_one_is_linear),
        cmocka_unit_test(rows_share_repeated_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
