/*
 * test_ejobspec: a job trainjobd holds keeps a compact record, its whole
 * spec only while a request or a transition needs it (issue 14: engine RSS
 * at 50,000 jobs). A waiting job's spec is dropped once it is saved and
 * decoded again, byte for byte what was saved, when asked for; changes made
 * while it is dropped (a PATCH, a state change) keep every other field; an
 * unsaved job keeps its spec; a batch shows what it saved last, once it
 * ends; a reopened engine starts compact. Runs a
 * seeded engine in process (tests/tools/seed.c) on a temporary state dir.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h> /* after the four headers it needs */

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/apierror.h"
#include "api/jobspec_json.h"
#include "engine/engine.h"
#include "engine/shown.h"
#include "engine/state.h"
#include "engine/store.h"
#include "tests/tools/seed.h"
#include "util/loop.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

/* A job with more than the seed's fields: every one must survive a drop. */
static const char RICH[] =
    "{\"display_name\":\"Rich-one\",\"framework\":\"PYTORCH_DDP\","
    "\"resource_pool\":{\"name\":\"std\"},"
    "\"roles\":[{\"total_replicas\":2,\"resource_spec\":[{\"name\":\"cpu-1\"}],"
    "\"image_path\":\"local/host\",\"startup_script\":\"echo rich\"}],"
    "\"env\":[{\"key\":\"A\",\"value\":\"1\"},{\"key\":\"B\",\"value\":\"two\"}],"
    "\"fault_tolerance\":{\"backoff_limit\":2},"
    "\"barrier\":{\"enable_ethernet_ping\":true}}";

struct fixture {
    char dir[64];
    char *config, *state;
    struct loop *lp;
    struct engine *eng;
};

static void open_engine(struct fixture *f)
{
    struct engine_options opt = {
        .config_path = f->config, .state_dir = f->state, .shim_path = "/bin/false"};
    struct strbuf err = STRBUF_INIT;
    f->lp = loop_new();
    int rc = engine_open(&opt, f->lp, &f->eng, &err);
    if (rc != 0)
        fail_msg("engine_open: %s", strbuf_str(&err));
    strbuf_free(&err);
}

static void close_engine(struct fixture *f)
{
    engine_close(f->eng);
    loop_free(f->lp);
    f->eng = NULL;
    f->lp = NULL;
}

static int setup(void **state)
{
    struct fixture *f = xcalloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/test_ejobspec.XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    f->config = xasprintf("%s/engine.yaml", f->dir);
    f->state = xasprintf("%s/state", f->dir);
    struct strbuf err = STRBUF_INIT;
    assert_int_equal(seed_write_config(f->config, seed_user(), true, &err), 0);
    strbuf_free(&err);
    open_engine(f);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    if (f->eng)
        close_engine(f);
    char *cmd = xasprintf("rm -rf '%s'", f->dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", f->dir);
    free(cmd);
    free(f->config);
    free(f->state);
    free(f);
    return 0;
}

static struct ejob *create(struct fixture *f, const char *name, const char *body)
{
    struct api_error err = {0};
    json_t *reply = NULL;
    int st =
        engine_job_create(f->eng, seed_user(), "default", name, body, strlen(body), &reply, &err);
    if (st != 200)
        fail_msg("creating %s: %d %s", name, st, err.message);
    json_decref(reply);
    return engine_find(f->eng, "default", name);
}

/* Runs the loop's due timers (the scheduling pass, then the drop) a few times. */
static void turns(struct fixture *f)
{
    for (int i = 0; i < 4; i++)
        loop_run_once(f->lp, 0);
}

/* GET's reply as compact JSON text. */
static char *get_text(struct fixture *f, const char *name)
{
    struct api_error err = {0};
    json_t *reply = NULL;
    assert_int_equal(engine_job_get(f->eng, seed_user(), "default", name, &reply, &err), 200);
    char *text = json_dumps(reply, JSON_COMPACT);
    json_decref(reply);
    return text;
}

/* How many jobs a list with filter finds. */
static size_t count_matching(struct fixture *f, const char *filter)
{
    struct job_query q = {100, NULL, filter, NULL, JOB_VIEW_BASIC};
    struct api_error err = {0};
    json_t *reply = NULL;
    assert_int_equal(engine_job_list(f->eng, seed_user(), "default", &q, &reply, &err), 200);
    size_t n = json_array_size(json_object_get(reply, "training_jobs"));
    json_decref(reply);
    return n;
}

/* A waiting job is its compact record; its spec comes back as it was saved, then goes again. */
static void test_waiting_job_drops_its_spec(void **state)
{
    struct fixture *f = *state;
    struct ejob *job = create(f, "rich", RICH);
    assert_non_null(job);
    turns(f);
    assert_null(job->full_);
    assert_int_equal(job->replicas, 2);
    assert_string_equal(job->name, "rich");
    char *saved = shown_text(job->shown_job);
    char *got = get_text(f, "rich");
    assert_string_equal(got, saved);
    /* Decoded from the saved text, encoded again: the same bytes. */
    char *again = dump_json(jobspec_to_json(ejob_spec(f->eng, job)));
    assert_non_null(job->full_);
    assert_string_equal(again, saved);
    assert_non_null(strstr(again, "\"echo rich\""));
    turns(f);
    assert_null(job->full_);
    free(again);
    free(got);
    free(saved);
}

/* A PATCH and state changes made while the spec is dropped keep every other field. */
static void test_changes_after_a_drop_keep_the_rest(void **state)
{
    struct fixture *f = *state;
    struct ejob *job = create(f, "rich", RICH);
    turns(f);
    assert_null(job->full_);
    struct api_error err = {0};
    json_t *reply = NULL;
    const char *patch = "{\"display_name\":\"Renamed\",\"scheduling\":{\"priority\":\"HIGH\"}}";
    assert_int_equal(engine_job_update(f->eng, seed_user(), "default", "rich",
                                       "display_name,scheduling.priority", patch, strlen(patch),
                                       &reply, &err),
                     200);
    assert_string_equal(json_string_value(json_object_get(reply, "display_name")), "Renamed");
    assert_int_equal(json_array_size(json_object_get(reply, "env")), 2);
    json_decref(reply);
    turns(f);
    assert_null(job->full_);
    assert_int_equal(job->priority, PRIORITY_HIGH);
    assert_int_equal(count_matching(f, "display_name='Renamed'"), 1);
    char *got = get_text(f, "rich");
    json_t *j = json_loads(got, 0, NULL);
    assert_string_equal(json_string_value(json_object_get(j, "display_name")), "Renamed");
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(j, "scheduling"), "priority")), "HIGH");
    assert_int_equal(json_array_size(json_object_get(j, "env")), 2);
    assert_true(
        json_is_true(json_object_get(json_object_get(j, "barrier"), "enable_ethernet_ping")));
    json_decref(j);
    free(got);

    /* A state change on the dropped job: the message is new, the rest is as it was. */
    engine_set_state(f->eng, job, JOB_STATE_QUEUEING, "held for the test");
    turns(f);
    got = get_text(f, "rich");
    j = json_loads(got, 0, NULL);
    assert_string_equal(json_string_value(json_object_get(j, "state_message")),
                        "held for the test");
    assert_string_equal(json_string_value(json_object_get(j, "display_name")), "Renamed");
    assert_int_equal(json_array_size(json_object_get(j, "env")), 2);
    json_decref(j);
    free(got);

    /* A display name equal to the name is found by a filter on either. */
    const char *same = "{\"display_name\":\"rich\"}";
    assert_int_equal(engine_job_update(f->eng, seed_user(), "default", "rich", "display_name", same,
                                       strlen(same), &reply, &err),
                     200);
    json_decref(reply);
    turns(f);
    assert_int_equal(count_matching(f, "display_name='rich'"), 1);
    assert_int_equal(count_matching(f, "display_name='Renamed'"), 0);
}

/* state_message of the job as GET shows it (caller frees). */
static char *shown_message(struct fixture *f, const char *name)
{
    char *got = get_text(f, name);
    json_t *j = json_loads(got, 0, NULL);
    char *msg = xstrdup(json_string_value(json_object_get(j, "state_message")));
    json_decref(j);
    free(got);
    return msg;
}

/*
 * Saved inside a batch: clients see the last committed texts until the batch
 * ends; the job's spec decodes from what it saved last (held in the batch's
 * bump, off the heap); after the batch the job shows that, and the next
 * batch fills the bump from its start again.
 */
static void test_batch_shows_what_it_saved_last(void **state)
{
    struct fixture *f = *state;
    struct ejob *a = create(f, "rich", RICH), *b = create(f, "other", RICH);
    turns(f);
    engine_set_state(f->eng, a, JOB_STATE_QUEUEING, "before the batch");
    turns(f);
    engine_batch_begin(f->eng);
    engine_set_state(f->eng, a, JOB_STATE_QUEUEING, "first in the batch");
    const struct snapshot *first = a->pending; /* the bump's first allocation */
    engine_set_state(f->eng, b, JOB_STATE_QUEUEING, "b in the batch");
    engine_set_state(f->eng, a, JOB_STATE_QUEUEING, "last in the batch");
    assert_non_null(a->pending);
    assert_true(a->pending->in_batch_bump);
    assert_true(f->eng->batch_snaps.mapped > 0);
    char *msg = shown_message(f, "rich");
    assert_string_equal(msg, "before the batch");
    free(msg);
    engine_drop_specs(f->eng);
    assert_string_equal(ejob_spec(f->eng, a)->state_message, "last in the batch");
    engine_batch_end(f->eng);
    assert_null(a->pending);
    assert_null(b->pending);
    msg = shown_message(f, "rich");
    assert_string_equal(msg, "last in the batch");
    free(msg);
    msg = shown_message(f, "other");
    assert_string_equal(msg, "b in the batch");
    free(msg);
    turns(f);
    msg = shown_message(f, "rich");
    assert_string_equal(msg, "last in the batch");
    free(msg);
    /* The next batch starts where the last one did: the bump was taken back. */
    engine_batch_begin(f->eng);
    engine_set_state(f->eng, b, JOB_STATE_QUEUEING, "b in the next batch");
    assert_ptr_equal(b->pending, first);
    engine_batch_end(f->eng);
    msg = shown_message(f, "other");
    assert_string_equal(msg, "b in the next batch");
    free(msg);
}

/* Memory ahead of the store: the spec stays until the job is saved. */
static void test_unsaved_job_keeps_its_spec(void **state)
{
    struct fixture *f = *state;
    struct ejob *job = create(f, "rich", RICH);
    turns(f);
    ejob_spec(f->eng, job);
    job->unsaved = true;
    engine_drop_specs(f->eng);
    assert_non_null(job->full_);
    job->unsaved = false;
    engine_drop_specs(f->eng);
    assert_null(job->full_);
}

/* Jobs share one copy of their workspace, pool and creator; a reopened engine starts compact. */
static void test_reopened_engine_is_compact(void **state)
{
    struct fixture *f = *state;
    struct ejob *a = create(f, "rich", RICH);
    struct strbuf body = STRBUF_INIT;
    seed_job_body(&body, "plain", 1, "true");
    struct ejob *b = create(f, "plain", body.buf);
    strbuf_free(&body);
    turns(f);
    assert_ptr_equal(a->ws, b->ws);
    assert_ptr_equal(a->pool, b->pool);
    assert_ptr_equal(a->creator, b->creator);
    char *before = get_text(f, "rich");
    close_engine(f);
    open_engine(f);
    a = engine_find(f->eng, "default", "rich");
    assert_non_null(a);
    assert_null(a->full_);
    char *after = get_text(f, "rich");
    assert_string_equal(after, before);
    assert_int_equal(count_matching(f, "user_name='"
                                       "nobody-else"
                                       "'"),
                     0);
    char filter[128];
    snprintf(filter, sizeof filter, "user_name='%s'", seed_user());
    assert_int_equal(count_matching(f, filter), 2);
    free(before);
    free(after);
}

/* A create the store refuses leaves nothing behind on the list of decoded specs. */
static void test_refused_create_is_not_listed(void **state)
{
    struct fixture *f = *state;
    struct strbuf serr = STRBUF_INIT;
    /* A record of that name the engine could not read: only the store knows the name. */
    assert_int_equal(store_job_insert(f->eng->store, "0000-unreadable", "default", "taken", 1,
                                      "{not json", &serr),
                     STORE_OK);
    strbuf_free(&serr);
    struct api_error err = {0};
    json_t *reply = NULL;
    assert_int_equal(engine_job_create(f->eng, seed_user(), "default", "taken", RICH, strlen(RICH),
                                       &reply, &err),
                     409);
    assert_int_equal(f->eng->spec_loaded_count, 0);
    turns(f); /* the drop timer walks the list: nothing freed is on it */
    assert_null(engine_find(f->eng, "default", "taken"));
}

/* Specs dropped one by one (as a pass does) leave the list consistent: each listed job at its
 * place. */
static void test_drops_one_by_one_keep_the_list(void **state)
{
    struct fixture *f = *state;
    struct ejob *jobs[5];
    struct strbuf body = STRBUF_INIT;
    for (int i = 0; i < 5; i++) {
        char name[16];
        snprintf(name, sizeof name, "j-%d", i);
        seed_job_body(&body, name, 1, "true");
        jobs[i] = create(f, name, body.buf);
    }
    strbuf_free(&body);
    turns(f);
    for (int i = 0; i < 5; i++)
        ejob_spec(f->eng, jobs[i]);
    assert_int_equal(f->eng->spec_loaded_count, 5);
    ejob_spec_done(f->eng, jobs[1]);
    ejob_spec_done(f->eng, jobs[0]);
    assert_int_equal(f->eng->spec_loaded_count, 3);
    assert_null(jobs[0]->full_);
    assert_null(jobs[1]->full_);
    for (size_t i = 0; i < f->eng->spec_loaded_count; i++)
        assert_int_equal(f->eng->spec_loaded[i]->loaded_at, i + 1);
    for (int i = 2; i < 5; i++)
        assert_ptr_equal(f->eng->spec_loaded[jobs[i]->loaded_at - 1], jobs[i]);
    turns(f);
    assert_int_equal(f->eng->spec_loaded_count, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_waiting_job_drops_its_spec, setup, teardown),
        cmocka_unit_test_setup_teardown(test_changes_after_a_drop_keep_the_rest, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unsaved_job_keeps_its_spec, setup, teardown),
        cmocka_unit_test_setup_teardown(test_batch_shows_what_it_saved_last, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reopened_engine_is_compact, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refused_create_is_not_listed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_drops_one_by_one_keep_the_list, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
