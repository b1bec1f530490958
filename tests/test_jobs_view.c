/*
 * test_jobs_view: the jobs screen drawn off-screen over a jobstore — the
 * columns a person triages by (state with its icon, workers ready/total,
 * restarts used/limit, the reason), names and reasons from a server
 * stripped of escape sequences, the faulty-only toggle and the filter, and
 * the actions reaching the app only outside read-only mode.
 */
// clang-format off
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
// clang-format on

#include <string.h>

#include "api/backend.h"
#include "tests/offscreen.h"
#include "tui/app.h"
#include "tui/jobs_view.h"
#include "tui/jobstore.h"
#include "tui/term.h"

static struct offscreen os;

static int setup(void **state)
{
    (void)state;
    if (offscreen_open(&os) != 0)
        return -1;
    resizeterm(30, 200); /* room for every column, the reason too */
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    offscreen_close(&os, NULL);
    return 0;
}

/* The screen's text, one line per row, into buf. */
static void screen_text(char *buf, size_t size)
{
    size_t off = 0;
    buf[0] = '\0';
    for (int y = 0; y < LINES && off + COLS * 4 + 2 < size; y++) {
        wchar_t line[512];
        mvwinnwstr(stdscr, y, 0, line, COLS < 511 ? COLS : 511);
        off += (size_t)snprintf(buf + off, size - off, "%ls\n", line);
    }
}

static struct resource_spec_ref spec = {
    .name = (char *)"gpu-1", .has_replicas = true, .replicas = 2, .description = (char *)"1xA100"};
static struct role role = {
    .name = (char *)"Worker", .resource_spec = &spec, .resource_spec_count = 1};

static void put(struct jobstore *s, const char *name, const char *display, enum job_state st,
                const char *reason, int restarts)
{
    struct jobspec j;
    jobspec_init(&j);
    j.name = (char *)name;
    j.uid = (char *)name;
    j.display_name = (char *)display;
    j.state = st;
    j.state_message = (char *)reason;
    j.roles = &role;
    j.role_count = 1;
    j.has_ready_workers = true;
    j.ready_workers = st == JOB_STATE_RUNNING ? 2 : 0;
    j.has_restart_count = true;
    j.restart_count = restarts;
    j.fault_tolerance.has_backoff_limit = true;
    j.fault_tolerance.backoff_limit = 2;
    jobstore_put(s, &j);
}

static void draw(struct screen *v)
{
    werase(stdscr);
    v->ops->draw(v, stdscr, 0, 0, LINES, COLS, true);
}

static void rows_say_what_a_person_triages_by(void **state)
{
    (void)state;
    struct jobstore *s = jobstore_new();
    put(s, "train-a", "resnet", JOB_STATE_RUNNING, NULL, 0);
    put(s, "train-b", "evil\033]0;pwned\007\033[2Jname", JOB_STATE_FAILED,
        "worker-0 exited 201\033[31m: rule 1", 2);
    put(s, "train-c", "waits", JOB_STATE_QUEUEING, "needs 16 GPUs, 8 free", 0);
    struct term t;
    memset(&t, 0, sizeof t);
    t.utf8 = true;
    t.palette = *widget_palette_mono();
    struct monitor *m = monitor_new_detached(s, &t, false);
    struct screen *v = jobs_view_new(m);
    draw(v);
    char text[16384];
    screen_text(text, sizeof text);
    assert_non_null(strstr(text, "NAME"));
    assert_non_null(strstr(text, "▸ RUNNING"));
    assert_non_null(strstr(text, "✗ FAILED"));
    assert_non_null(strstr(text, "2/2")); /* workers ready/total, and restarts 2/2 */
    assert_non_null(strstr(text, "needs 16 GPUs, 8 free"));
    /* Escape sequences are gone; the text around them stays. */
    assert_non_null(strstr(text, "evil"));
    assert_null(strstr(text, "\033"));
    assert_null(strstr(text, "]0;pwned"));
    assert_non_null(strstr(text, "exited 201: rule 1"));
    /* The title counts the states. */
    assert_non_null(strstr(v->ops->title(v), "jobs 3"));
    assert_non_null(strstr(v->ops->title(v), "failed 1"));

    /* Faulty only: the failed job alone. */
    struct widget_key f = {.code = 'f'};
    v->ops->key(v, &f, "faulty-only");
    draw(v);
    screen_text(text, sizeof text);
    assert_non_null(strstr(text, "train-b"));
    assert_null(strstr(text, "train-a"));
    assert_null(strstr(text, "train-c"));
    v->ops->key(v, &f, "faulty-only");
    draw(v);
    screen_text(text, sizeof text);
    assert_non_null(strstr(text, "train-a"));

    v->ops->destroy(v);
    monitor_free_detached(m);
    jobstore_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rows_say_what_a_person_triages_by),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
