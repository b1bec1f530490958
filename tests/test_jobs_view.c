/*
 * test_jobs_view: the jobs screen drawn off-screen over a jobstore — the
 * columns a person triages by (state with its icon, workers ready/total,
 * restarts used/limit, the reason), names and reasons from a server
 * stripped of escape sequences, the faulty-only toggle and the filter, and
 * the actions reaching the app only outside read-only mode; DISPLAY NAME
 * only while it says something NAME does not; DURATION; the user's columns
 * file (chosen, ordered, a bad one named by file:line) and the `C` list;
 * a view over several contexts (CONTEXT, the same name twice, actions to
 * the row's context, DISCONNECTED on a down context's rows only).
 * A state or priority this build does not know shows as the server said it
 * (cleaned, bounded), filters and sorts as a value of its own.
 * STATE as wide as its longest name, so the first SUSPENDED moves nothing.
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
#include <sys/stat.h>
#include <unistd.h>

#include "api/backend.h"
#include "tests/offscreen.h"
#include "tui/app.h"
#include "tui/jobfmt.h"
#include "tui/jobs_view.h"
#include "tui/jobstore.h"
#include "tui/monitor_app.h"
#include "tui/term.h"
#include "util/timefmt.h"

static struct offscreen os;

static char confdir[64];

static int setup(void **state)
{
    (void)state;
    /* The user's columns file is read from here: never the real one. */
    snprintf(confdir, sizeof confdir, "/tmp/tj-jobs-view-%ld", (long)getpid());
    mkdir(confdir, 0700);
    char sub[96];
    snprintf(sub, sizeof sub, "%s/trainjob", confdir);
    mkdir(sub, 0700);
    setenv("XDG_CONFIG_HOME", confdir, 1);
    if (offscreen_open(&os) != 0)
        return -1;
    resizeterm(30, 200); /* room for every column, the reason too */
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    offscreen_close(&os, NULL);
    char path[128];
    snprintf(path, sizeof path, "%s/trainjob/columns", confdir);
    unlink(path);
    snprintf(path, sizeof path, "%s/trainjob", confdir);
    rmdir(path);
    rmdir(confdir);
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

/* The header line (the first) of the drawn screen, into buf. */
static void header(struct screen *v, char *buf, size_t size)
{
    draw(v);
    wchar_t line[512];
    mvwinnwstr(stdscr, 0, 0, line, COLS < 511 ? COLS : 511);
    snprintf(buf, size, "%ls", line);
}

static struct monitor *detached(struct jobstore *s, struct term *t)
{
    memset(t, 0, sizeof *t);
    t->utf8 = true;
    t->palette = *widget_palette_mono();
    return monitor_new_detached(s, t, false);
}

static void write_columns(const char *text)
{
    char path[128];
    snprintf(path, sizeof path, "%s/trainjob/columns", confdir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* DISPLAY NAME goes while every row's equals its NAME (or is empty), and comes back. */
static void display_name_only_when_it_says_something(void **state)
{
    (void)state;
    struct jobstore *s = jobstore_new();
    put(s, "train-a", "train-a", JOB_STATE_RUNNING, NULL, 0);
    put(s, "train-b", NULL, JOB_STATE_FAILED, "exit 1", 0);
    struct term t;
    struct monitor *m = detached(s, &t);
    struct screen *v = jobs_view_new(m);
    char h[16384];
    header(v, h, sizeof h);
    assert_non_null(strstr(h, "NAME"));
    assert_null(strstr(h, "DISPLAY NAME"));
    /* The cursor and a mark survive the columns changing under them. */
    struct widget_key down = {.code = KEY_DOWN, .is_function = true}, sp = {.code = ' '};
    v->ops->key(v, &down, NULL);
    v->ops->key(v, &sp, NULL);
    put(s, "train-c", "resnet on A100", JOB_STATE_QUEUEING, NULL, 0);
    v->ops->changed(v);
    header(v, h, sizeof h);
    assert_non_null(strstr(h, "DISPLAY NAME"));
    char text[16384];
    screen_text(text, sizeof text);
    assert_non_null(strstr(text, "resnet on A100"));
    assert_non_null(strstr(v->ops->title(v), "2/3"));
    assert_non_null(strstr(text, "* train-b"));
    v->ops->destroy(v);
    monitor_free_detached(m);
    jobstore_free(s);
}

/*
 * ID (the scheduler's job id: Slurm's) shows while a row has one; a
 * trainjobd or ACP id, only the job's resource path, is none.
 */
static void id_only_while_a_job_has_a_scheduler_id(void **state)
{
    (void)state;
    struct jobstore *s = jobstore_new();
    put(s, "train-a", NULL, JOB_STATE_RUNNING, NULL, 0);
    struct jobspec j;
    jobspec_init(&j);
    j.name = (char *)"train-p";
    j.uid = (char *)"train-p";
    j.id = (char *)"/subscriptions/local/resourceGroups/default/zones/z/workspaces/default/"
                   "trainingJobs/train-p";
    j.state = JOB_STATE_RUNNING;
    j.roles = &role;
    j.role_count = 1;
    jobstore_put(s, &j);
    struct term t;
    struct monitor *m = detached(s, &t);
    struct screen *v = jobs_view_new(m);
    char h[16384];
    header(v, h, sizeof h);
    assert_null(strstr(h, " JOBID "));
    j.name = (char *)"slurm-job";
    j.uid = (char *)"slurm-job";
    j.id = (char *)"4012";
    jobstore_put(s, &j);
    v->ops->changed(v);
    header(v, h, sizeof h);
    assert_non_null(strstr(h, " JOBID ")); /* squeue's title for Slurm's job id */
    char text[16384];
    screen_text(text, sizeof text);
    assert_non_null(strstr(text, "4012"));
    assert_null(strstr(text, "trainingJobs"));
    v->ops->destroy(v);
    monitor_free_detached(m);
    jobstore_free(s);
}

/*
 * With DISPLAY NAME left out (it says nothing NAME does not), a
 * `display_name=` term filters on NAME, which stands in for it, instead of
 * matching nothing.
 */
static void display_name_filter_while_left_out(void **state)
{
    (void)state;
    struct jobstore *s = jobstore_new();
    put(s, "train-a", "train-a", JOB_STATE_RUNNING, NULL, 0);
    put(s, "train-b", NULL, JOB_STATE_FAILED, "exit 1", 0);
    struct term t;
    struct monitor *m = detached(s, &t);
    struct screen *v = jobs_view_new(m);
    char h[16384];
    header(v, h, sizeof h);
    assert_null(strstr(h, "DISPLAY NAME"));
    v->ops->key(v, NULL, "filter");
    assert_non_null(m->prompt_answer);
    m->prompt_answer(m->prompt_ctx, "display_name=train-a");
    assert_true(strncmp(v->ops->title(v), "1/1 ", 4) == 0);
    char text[16384];
    draw(v);
    screen_text(text, sizeof text);
    assert_non_null(strstr(text, "train-a"));
    assert_null(strstr(text, "train-b"));
    /* Once DISPLAY NAME is shown, the term names that column again. */
    put(s, "train-c", "resnet", JOB_STATE_QUEUEING, NULL, 0);
    v->ops->changed(v);
    header(v, h, sizeof h);
    assert_non_null(strstr(h, "DISPLAY NAME"));
    assert_true(strncmp(v->ops->title(v), "1/1 ", 4) == 0);
    v->ops->destroy(v);
    monitor_free_detached(m);
    jobstore_free(s);
}

/* A job whose state and priority this build does not know: the server's words. */
static void put_other(struct jobstore *s, const char *name, const char *state, const char *priority)
{
    struct jobspec j;
    jobspec_init(&j);
    j.name = (char *)name;
    j.uid = (char *)name;
    j.state_other = (char *)state;
    j.scheduling.priority_other = (char *)priority;
    j.roles = &role;
    j.role_count = 1;
    jobstore_put(s, &j);
}

/* Where on the screen text a row's name is (SIZE_MAX: not shown). */
static size_t at(const char *text, const char *name)
{
    const char *p = strstr(text, name);
    return p ? (size_t)(p - text) : SIZE_MAX;
}

static void unknown_states_as_the_server_said_them(void **state)
{
    (void)state;
    struct jobstore *s = jobstore_new();
    put(s, "train-a", NULL, JOB_STATE_RUNNING, NULL, 0);
    put(s, "train-c", NULL, JOB_STATE_QUEUEING, NULL, 0);
    put_other(s, "train-p", "PREEMPTED", "URGENT");
    put_other(s, "train-q", "ABANDONED", NULL);
    put_other(s, "train-x", "EVIL\033]0;pwned\007\033[31mSTATE_THAT_GOES_ON_AND_ON_AND_ON_FOREVER",
              "\033[2JSOON");
    struct term t;
    struct monitor *m = detached(s, &t);
    struct screen *v = jobs_view_new(m);
    char text[16384];
    draw(v);
    screen_text(text, sizeof text);
    assert_non_null(strstr(text, "? PREEMPTED"));
    assert_non_null(strstr(text, "URGENT"));
    assert_non_null(strstr(text, "? ABANDONED"));
    assert_null(strstr(text, "\033"));
    assert_null(strstr(text, "pwned"));
    assert_non_null(strstr(text, "SOON"));
    assert_non_null(strstr(text, "? EVILSTATE_")); /* cleaned, and cut to the column */
    assert_null(strstr(text, "FOREVER"));
    /* The word itself is bounded wherever it is shown. */
    char cell[256];
    jobfmt_state(JOB_STATE_UNSPECIFIED, "EVIL\033[31mSTATE_THAT_GOES_ON_AND_ON_AND_ON_FOREVER",
                 true, cell, sizeof cell);
    assert_string_equal(cell, "? EVILSTATE_THAT_GOES_ON_…" /* 23 cells and the mark */);
    jobfmt_state(JOB_STATE_UNSPECIFIED, "PREEMPTED", false, cell, sizeof cell);
    assert_string_equal(cell, "? PREEMPTED");

    /* Sorted by STATE: the known ones in their order, then the others by their word. */
    struct widget_key gt = {.code = '>'};
    v->ops->key(v, &gt, NULL); /* NAME */
    v->ops->key(v, &gt, NULL); /* STATE */
    draw(v);
    screen_text(text, sizeof text);
    assert_true(at(text, "train-c") < at(text, "train-a")); /* QUEUEING before RUNNING */
    assert_true(at(text, "train-a") < at(text, "train-q")); /* the known before the others */
    assert_true(at(text, "train-q") < at(text, "train-x")); /* ABANDONED, EVIL…, PREEMPTED */
    assert_true(at(text, "train-x") < at(text, "train-p"));

    /* Filtered on it: a value of its own, not "-" and not another's. */
    v->ops->key(v, NULL, "filter");
    assert_non_null(m->prompt_answer);
    m->prompt_answer(m->prompt_ctx, "state=PREEMPTED");
    draw(v);
    screen_text(text, sizeof text);
    if (strncmp(v->ops->title(v), "1/1 ", 4) != 0 || !strstr(v->ops->title(v), "jobs 5"))
        fail_msg("title: %s", v->ops->title(v));
    assert_non_null(strstr(text, "train-p"));
    assert_null(strstr(text, "train-q"));
    assert_null(strstr(text, "train-a"));
    v->ops->destroy(v);
    monitor_free_detached(m);
    jobstore_free(s);
}

/* DURATION: from the last start to the end, or to now while it runs; "-" never started. */
static void duration_is_the_time_running(void **state)
{
    (void)state;
    struct jobstore *s = jobstore_new();
    int64_t now = time_now_ms();
    char start[TIMEFMT_RFC3339_LEN], end[TIMEFMT_RFC3339_LEN], created[TIMEFMT_RFC3339_LEN];
    time_rfc3339(now - 3 * 86400000LL, created);
    time_rfc3339(now - 2 * 3600000LL - 60000, start);
    time_rfc3339(now - 2 * 3600000LL - 60000 + 7 * 60000, end);
    struct jobspec j;
    jobspec_init(&j);
    j.name = j.uid = (char *)"ran";
    j.state = JOB_STATE_FAILED;
    j.roles = &role;
    j.role_count = 1;
    j.create_time = created;
    j.start_time = start;
    j.complete_time = end;
    jobstore_put(s, &j);
    j.name = j.uid = (char *)"runs";
    j.state = JOB_STATE_RUNNING;
    j.complete_time = NULL;
    jobstore_put(s, &j);
    j.name = j.uid = (char *)"waits";
    j.state = JOB_STATE_QUEUEING;
    j.start_time = NULL;
    jobstore_put(s, &j);
    struct term t;
    struct monitor *m = detached(s, &t);
    struct screen *v = jobs_view_new(m);
    char text[16384];
    draw(v);
    screen_text(text, sizeof text);
    assert_non_null(strstr(text, "TIME"));
    char *line = strstr(text, "ran ");
    assert_non_null(line);
    *strchr(line, '\n') = '\0';
    assert_non_null(strstr(line, "3d"));  /* AGE */
    assert_non_null(strstr(line, " 7m")); /* DURATION: start to complete */
    line = strstr(line + strlen(line) + 1, "runs ");
    assert_non_null(line);
    *strchr(line, '\n') = '\0';
    assert_non_null(strstr(line, " 2h")); /* to now */
    line = strstr(line + strlen(line) + 1, "waits ");
    assert_non_null(line);
    *strchr(line, '\n') = '\0';
    assert_non_null(strstr(line, " - "));
    v->ops->destroy(v);
    monitor_free_detached(m);
    jobstore_free(s);
}

/*
 * TIME is running time: back in the queue after a 17 s run, it says 17s, not
 * the 8 minutes since the run started (issue 22).
 */
static void time_stops_while_not_running(void **state)
{
    (void)state;
    struct jobstore *s = jobstore_new();
    int64_t now = time_now_ms();
    char start[TIMEFMT_RFC3339_LEN], update[TIMEFMT_RFC3339_LEN], created[TIMEFMT_RFC3339_LEN];
    time_rfc3339(now - 9 * 60000LL, created);
    time_rfc3339(now - 8 * 60000LL - 17000, start);
    time_rfc3339(now - 8 * 60000LL, update);
    struct jobspec j;
    jobspec_init(&j);
    j.name = j.uid = (char *)"requeued";
    j.state = JOB_STATE_QUEUEING;
    j.roles = &role;
    j.role_count = 1;
    j.create_time = created;
    j.start_time = start;
    j.update_time = update;
    jobstore_put(s, &j);
    j.name = j.uid = (char *)"restarting";
    j.state = JOB_STATE_RESTARTING;
    jobstore_put(s, &j);
    struct term t;
    struct monitor *m = detached(s, &t);
    struct screen *v = jobs_view_new(m);
    char text[16384];
    draw(v);
    screen_text(text, sizeof text);
    for (int k = 0; k < 2; k++) {
        char *line = strstr(text, k == 0 ? "requeued " : "restarting ");
        assert_non_null(line);
        char *nl = strchr(line, '\n');
        char keep = *nl;
        *nl = '\0';
        assert_non_null(strstr(line, " 9m"));  /* AGE */
        assert_non_null(strstr(line, " 17s")); /* TIME: the run, not since its start */
        assert_null(strstr(line, " 8m"));
        *nl = keep;
    }
    v->ops->destroy(v);
    monitor_free_detached(m);
    jobstore_free(s);
}

/* The columns file: chosen and ordered; a bad one is named by file:line, defaults kept. */
static void columns_file_chooses_and_orders(void **state)
{
    (void)state;
    struct jobstore *s = jobstore_new();
    put(s, "train-a", "resnet", JOB_STATE_RUNNING, NULL, 0);
    struct term t;
    struct monitor *m = detached(s, &t);
    write_columns("# mine\nstate\n\n  name  \nreason\n");
    struct screen *v = jobs_view_new(m);
    char h[16384];
    header(v, h, sizeof h);
    char *st = strstr(h, "STATE"), *nm = strstr(h, "NAME");
    assert_non_null(st);
    assert_non_null(nm);
    assert_true(st < nm);
    assert_null(strstr(h, "PRIORITY"));
    assert_null(strstr(h, "WORKERS"));

    /* C: the list; J moves STATE down (after NAME), Space hides REASON, Enter keeps and saves. */
    struct widget_key c = {.code = 'C'}, J = {.code = 'J'},
                      down = {.code = KEY_DOWN, .is_function = true}, sp = {.code = ' '},
                      enter = {.code = '\r'};
    v->ops->key(v, &c, "columns");
    assert_int_equal(m->depth, 1);
    struct screen *p = m->screens[0];
    p->ops->key(p, &J, NULL);
    p->ops->key(p, &down, NULL); /* REASON */
    p->ops->key(p, &sp, NULL);
    p->ops->key(p, &enter, NULL);
    header(v, h, sizeof h);
    st = strstr(h, "STATE"), nm = strstr(h, "NAME");
    assert_non_null(st);
    assert_non_null(nm);
    assert_true(nm < st);
    assert_null(strstr(h, "REASON"));
    char path[128], buf[512];
    snprintf(path, sizeof path, "%s/trainjob/columns", confdir);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    assert_non_null(strstr(buf, "\nNAME\nSTATE\n"));
    assert_null(strstr(buf, "REASON"));
    v->ops->destroy(v);
    monitor_free_detached(m);

    /* A bad file: the message names file:line, the defaults are shown. */
    m = detached(s, &t);
    write_columns("name\nstate\nno such column\n");
    v = jobs_view_new(m);
    assert_non_null(strstr(m->status, "trainjob/columns:3: unknown column 'no such column'"));
    header(v, h, sizeof h);
    assert_non_null(strstr(h, "PRIORITY"));
    v->ops->destroy(v);
    monitor_free_detached(m);
    unlink(path);
    jobstore_free(s);
}

/* The line of text holding a and, after it, b; NULL: none. */
static const char *line_with(const char *text, const char *a, const char *b, char *line, size_t n)
{
    for (const char *p = text; *p;) {
        size_t len = strcspn(p, "\n");
        snprintf(line, n, "%.*s", (int)len, p);
        const char *x = strstr(line, a);
        if (x && strstr(x + strlen(a), b))
            return line;
        p += len + (p[len] == '\n');
    }
    return NULL;
}

/*
 * Two contexts in one view: every row of both stores, the same job name in
 * each a row of its own, a CONTEXT column saying which, counted together;
 * an action on a row names that row's context; a context that is down says
 * DISCONNECTED on its rows only. With one context the view is as it was:
 * no CONTEXT column, though the `C` list offers it.
 */
static void several_contexts_in_one_view(void **state)
{
    (void)state;
    struct jobstore *a = jobstore_new(), *b = jobstore_new();
    put(a, "same", NULL, JOB_STATE_RUNNING, NULL, 0);
    put(a, "only-local", NULL, JOB_STATE_RUNNING, NULL, 0);
    put(b, "same", NULL, JOB_STATE_QUEUEING, "waits for lab", 0);
    put(b, "only-lab", NULL, JOB_STATE_FAILED, "exit 1", 0);
    struct term t;
    struct monitor *m = detached(a, &t);

    /* One context: no CONTEXT column. */
    struct screen *v = jobs_view_new(m);
    char h[16384], text[16384], line[1024];
    header(v, h, sizeof h);
    assert_null(strstr(h, "CONTEXT"));
    assert_non_null(strstr(v->ops->title(v), "jobs 2"));
    v->ops->destroy(v);

    assert_int_equal(monitor_detached_add_context(m, "local", a), 0);
    assert_int_equal(monitor_detached_add_context(m, "lab", b), 1);
    v = jobs_view_new(m);
    header(v, h, sizeof h);
    assert_non_null(strstr(h, "CONTEXT"));
    assert_true(strstr(h, "CONTEXT") < strstr(h, "NAME")); /* first, by default */
    draw(v);
    screen_text(text, sizeof text);
    assert_non_null(line_with(text, "local", "only-local", line, sizeof line));
    assert_non_null(line_with(text, "lab", "only-lab", line, sizeof line));
    assert_non_null(line_with(text, "local", "same", line, sizeof line));
    assert_non_null(line_with(text, "lab", "same", line, sizeof line));
    assert_non_null(strstr(line, "waits for lab"));
    assert_non_null(strstr(v->ops->title(v), "jobs 4"));
    assert_null(strstr(text, "DISCONNECTED"));

    /* `s` on lab's "same" stops it on lab; on local's, on local. */
    v->ops->key(v, NULL, "filter");
    m->prompt_answer(m->prompt_ctx, "context=lab same");
    assert_true(strncmp(v->ops->title(v), "1/1 ", 4) == 0);
    v->ops->key(v, NULL, "stop-job");
    assert_int_equal(m->pending, MONITOR_STOP);
    assert_int_equal(m->name_count, 1);
    assert_string_equal(m->names[0], "same");
    assert_int_equal(m->name_ctx[0], 1);
    v->ops->key(v, NULL, "filter");
    m->prompt_answer(m->prompt_ctx, "context=local same");
    v->ops->key(v, NULL, "stop-job");
    assert_int_equal(m->name_ctx[0], 0);

    /* Both rows named "same" marked: two jobs, one in each context. */
    v->ops->key(v, NULL, "filter");
    m->prompt_answer(m->prompt_ctx, "name=same");
    assert_true(strncmp(v->ops->title(v), "1/2 ", 4) == 0);
    struct widget_key down = {.code = KEY_DOWN, .is_function = true}, sp = {.code = ' '};
    v->ops->key(v, &sp, NULL);
    v->ops->key(v, &down, NULL);
    v->ops->key(v, &sp, NULL);
    v->ops->key(v, NULL, "delete-job");
    assert_int_equal(m->pending, MONITOR_DELETE);
    assert_int_equal(m->name_count, 2);
    assert_int_not_equal(m->name_ctx[0], m->name_ctx[1]);

    /* lab down: its rows say so, local's do not. */
    v->ops->key(v, NULL, "filter");
    m->prompt_answer(m->prompt_ctx, "");
    monitor_detached_set_down(m, 1, "connection refused");
    v->ops->changed(v);
    draw(v);
    screen_text(text, sizeof text);
    assert_non_null(
        line_with(text, "only-lab", "DISCONNECTED (connection refused)", line, sizeof line));
    assert_null(line_with(text, "only-local", "DISCONNECTED", line, sizeof line));
    assert_non_null(line_with(text, "local", "same", line, sizeof line));
    assert_null(strstr(line, "DISCONNECTED"));
    monitor_detached_set_down(m, 1, NULL);
    v->ops->changed(v);
    draw(v);
    screen_text(text, sizeof text);
    assert_null(strstr(text, "DISCONNECTED"));

    /* The `C` list offers CONTEXT, first while it is shown by default. */
    v->ops->key(v, NULL, "columns");
    struct screen *cp = monitor_top(m);
    assert_ptr_not_equal(cp, v);
    cp->ops->draw(cp, stdscr, 0, 0, LINES, COLS, true);
    screen_text(text, sizeof text);
    assert_non_null(strstr(text, "[x] CONTEXT"));
    assert_true(strstr(text, "[x] CONTEXT") < strstr(text, "[x] NAME"));
    monitor_free_detached(m); /* the columns list with it */
    v->ops->destroy(v);
    jobstore_free(a);
    jobstore_free(b);
}

/*
 * STATE is as wide as its longest name from the first frame: the first job
 * to be SUSPENDED (wider than RUNNING) moves no column to its right, so
 * the frame rewrites that one row, not the table. At 80 columns the state
 * still shows whole.
 */
static void state_column_sized_to_its_longest_name(void **state)
{
    (void)state;
    struct jobstore *s = jobstore_new();
    put(s, "train-a", NULL, JOB_STATE_RUNNING, NULL, 0);
    put(s, "train-b", NULL, JOB_STATE_RUNNING, NULL, 0);
    struct term t;
    struct monitor *m = detached(s, &t);
    struct screen *v = jobs_view_new(m);
    char before[16384], after[16384];
    header(v, before, sizeof before);
    const char *prio = strstr(before, "PRIORITY");
    assert_non_null(prio);
    put(s, "train-b", NULL, JOB_STATE_SUSPENDED, NULL, 0);
    header(v, after, sizeof after);
    assert_non_null(strstr(after, "PRIORITY"));
    assert_int_equal(strstr(after, "PRIORITY") - after, prio - before);
    char text[16384];
    screen_text(text, sizeof text);
    assert_non_null(strstr(text, "SUSPENDED"));

    resizeterm(24, 80);
    draw(v);
    screen_text(text, sizeof text);
    assert_non_null(strstr(text, "SUSPENDED"));
    assert_non_null(strstr(text, "RUNNING"));
    resizeterm(30, 200);
    v->ops->destroy(v);
    monitor_free_detached(m);
    jobstore_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rows_say_what_a_person_triages_by),
        cmocka_unit_test(display_name_only_when_it_says_something),
        cmocka_unit_test(id_only_while_a_job_has_a_scheduler_id),
        cmocka_unit_test(display_name_filter_while_left_out),
        cmocka_unit_test(duration_is_the_time_running),
        cmocka_unit_test(time_stops_while_not_running),
        cmocka_unit_test(unknown_states_as_the_server_said_them),
        cmocka_unit_test(columns_file_chooses_and_orders),
        cmocka_unit_test(several_contexts_in_one_view),
        cmocka_unit_test(state_column_sized_to_its_longest_name),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
