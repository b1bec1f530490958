/*
 * test_metrics_pane: the job screen's Metrics pane without a server —
 * pages fed the way the scalars call hands them: tags and runs learnt
 * from them, in name order, hostile names sanitized before they are shown
 * or matched; the filter and the selection decide the charts; series hold
 * the points as sent and stay bounded however many arrive; the follower
 * asks at once, then on a backing-off timer while the job runs and never
 * when it does not or the pane is hidden; a job without a log path and a
 * backend without scalars say so and stop asking; the keys step smoothing,
 * log scale and zoom; drawn into an off-screen terminal, the tag shows,
 * no escape reaches a cell, and the chart changes when points arrive.
 */
// clang-format off
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
// clang-format on

#include "tests/offscreen.h"

#include <curses.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/apierror.h"
#include "api/scalarpage.h"
#include "tui/keymap.h"
#include "tui/metrics_pane.h"
#include "tui/term.h"
#include "util/strbuf.h"
#include "util/xalloc.h"
#include "widgets/chart.h"

#define WIN_H 14
#define WIN_W 80

static struct offscreen term;
static WINDOW *win;

static int setup_terminal(void **state)
{
    if (offscreen_open(&term) != 0)
        return -1;
    win = newwin(WIN_H, WIN_W, 0, 0);
    return win ? 0 : -1;
}

static int teardown_terminal(void **state)
{
    offscreen_close(&term, win);
    return 0;
}

static const char evil_tag[] = "evil\033[2J\033]0;pwned\007tag";

/* A page with loss for two runs over steps [from, to), acc and the evil tag for rank0. */
static void page_of(struct scalar_page *pg, int from, int to, const char *cursor)
{
    scalar_page_init(pg);
    for (int s = from; s < to; s++) {
        scalar_page_add(pg, "rank0", "train/loss", s, 1700000000.0 + s, 1.0 / (s + 1));
        scalar_page_add(pg, "rank1", "train/loss", s, 1700000000.0 + s, 2.0 / (s + 1));
    }
    scalar_page_add(pg, "rank0", "acc", to, 1700000000.0 + to, 0.5);
    scalar_page_add(pg, "rank0", evil_tag, to, 1700000000.0 + to, NAN);
    pg->cursor = xstrdup(cursor);
    pg->log_path = xstrdup("/mnt/afs/tb");
}

static void feed(struct metrics_pane *p, int from, int to)
{
    struct scalar_page pg;
    page_of(&pg, from, to, "c");
    metrics_pane_feed(p, &pg);
    scalar_page_free(&pg);
}

static void feed_empty(struct metrics_pane *p)
{
    struct scalar_page pg;
    scalar_page_init(&pg);
    pg.cursor = xstrdup("c");
    metrics_pane_feed(p, &pg);
    scalar_page_free(&pg);
}

static void test_model_from_pages(void **state)
{
    struct metrics_pane *p = metrics_pane_new();
    feed(p, 0, 10);
    assert_int_equal(metrics_pane_all_tags(p), 3);
    assert_int_equal(metrics_pane_tag_count(p), 3);
    assert_string_equal(metrics_pane_tag(p, 0), "acc"); /* name order */
    assert_string_equal(metrics_pane_tag(p, 1), evil_tag);
    assert_string_equal(metrics_pane_tag(p, 2), "train/loss");
    assert_int_equal(metrics_pane_run_count(p), 2);
    assert_string_equal(metrics_pane_run(p, 0), "rank0");
    assert_string_equal(metrics_pane_run(p, 1), "rank1");

    struct chart_point pts[32];
    assert_int_equal(metrics_pane_points(p, "rank1", "train/loss", pts, 32), 10);
    for (int i = 0; i < 10; i++) {
        assert_true(pts[i].x == i);
        assert_true(fabs(pts[i].y - 2.0 / (i + 1)) < 1e-12);
    }
    assert_int_equal(metrics_pane_points(p, "rank1", "acc", pts, 32), 0);
    /* NaN is kept, as sent */
    assert_int_equal(metrics_pane_points(p, "rank0", evil_tag, pts, 32), 1);
    assert_true(isnan(pts[0].y));

    /* the next page's points join the same series; a new run shows up */
    feed(p, 10, 20);
    struct scalar_page pg;
    scalar_page_init(&pg);
    scalar_page_add(&pg, NULL, "acc", 3, 1700000003.0, 0.25); /* no run: the log dir itself */
    metrics_pane_feed(p, &pg);
    scalar_page_free(&pg);
    assert_int_equal(metrics_pane_points(p, "rank0", "train/loss", pts, 32), 20);
    assert_int_equal(metrics_pane_run_count(p), 3);
    assert_string_equal(metrics_pane_run(p, 0), ".");
    assert_int_equal(metrics_pane_all_tags(p), 3);
    assert_int_equal(metrics_pane_pages(p), 3);
    metrics_pane_free(p);
}

/* However long the job trains, a series keeps a bounded number of points. */
static void test_series_bounded(void **state)
{
    struct metrics_pane *p = metrics_pane_new();
    for (int page = 0; page < 50; page++) {
        struct scalar_page pg;
        scalar_page_init(&pg);
        for (int s = 0; s < 4000; s++) {
            int step = page * 4000 + s;
            scalar_page_add(&pg, "rank0", "loss", step, 0, step == 123457 ? 1e9 : 1.0);
        }
        metrics_pane_feed(p, &pg);
        scalar_page_free(&pg);
    }
    size_t n = metrics_pane_points(p, "rank0", "loss", NULL, 0);
    assert_true(n > 0 && n <= 5 * 1024);
    struct chart_point *pts = xcalloc(n, sizeof *pts);
    metrics_pane_points(p, "rank0", "loss", pts, n);
    double max = 0;
    for (size_t i = 0; i < n; i++)
        max = fmax(max, pts[i].y);
    assert_true(max == 1e9); /* the spike is kept */
    assert_true(pts[n - 1].x == 199999);
    free(pts);
    metrics_pane_free(p);
}

/* Thousands of tags and runs in any order: kept sorted, each once, bounded by the set. */
static void test_many_tags(void **state)
{
    struct metrics_pane *p = metrics_pane_new();
    struct scalar_page pg;
    scalar_page_init(&pg);
    char tag[32], run[32];
    for (unsigned i = 0; i < 3000; i++) {
        unsigned k = (i * 7919u) % 3000u; /* a permutation of 0..2999 */
        snprintf(tag, sizeof tag, "t%04u", k);
        snprintf(run, sizeof run, "r%u", k % 7);
        scalar_page_add(&pg, run, tag, 1, 0, 1);
        scalar_page_add(&pg, run, tag, 2, 0, 2); /* the same series again */
    }
    metrics_pane_feed(p, &pg);
    scalar_page_free(&pg);
    assert_int_equal(metrics_pane_all_tags(p), 3000);
    assert_int_equal(metrics_pane_run_count(p), 7);
    for (size_t i = 1; i < 3000; i++)
        assert_true(strcmp(metrics_pane_tag(p, i - 1), metrics_pane_tag(p, i)) < 0);
    for (size_t i = 1; i < 7; i++)
        assert_true(strcmp(metrics_pane_run(p, i - 1), metrics_pane_run(p, i)) < 0);
    metrics_pane_move(p, 1234);
    metrics_pane_toggle(p);
    assert_true(metrics_pane_selected(p, "t1234"));
    assert_false(metrics_pane_selected(p, "t1235"));
    assert_false(metrics_pane_selected(p, "nope"));
    metrics_pane_free(p);
}

static void test_filter_and_selection(void **state)
{
    struct metrics_pane *p = metrics_pane_new();
    feed(p, 0, 5);
    const char *tags[8];
    /* nothing selected: the tag under the cursor is charted */
    assert_int_equal(metrics_pane_charted(p, tags, 8), 1);
    assert_string_equal(tags[0], "acc");
    metrics_pane_move(p, 2);
    assert_int_equal(metrics_pane_charted(p, tags, 8), 1);
    assert_string_equal(tags[0], "train/loss");
    metrics_pane_move(p, 5); /* clamped */
    assert_int_equal(metrics_pane_cursor(p), 2);

    /* the filter matches the tag as shown (sanitized), without case */
    metrics_pane_set_filter(p, "LOSS");
    assert_int_equal(metrics_pane_tag_count(p), 1);
    assert_string_equal(metrics_pane_tag(p, 0), "train/loss");
    metrics_pane_set_filter(p, "2J");
    assert_int_equal(metrics_pane_tag_count(p), 0); /* the escape is not part of the name shown */
    assert_int_equal(metrics_pane_charted(p, tags, 8), 0);
    metrics_pane_set_filter(p, "evil");
    assert_int_equal(metrics_pane_tag_count(p), 1);
    metrics_pane_set_filter(p, "");
    assert_int_equal(metrics_pane_tag_count(p), 3);
    /* a pattern is as `metrics --tag` takes it: loss* is a tag's last part */
    metrics_pane_set_filter(p, "loss*");
    assert_int_equal(metrics_pane_tag_count(p), 1);
    assert_string_equal(metrics_pane_tag(p, 0), "train/loss");
    metrics_pane_set_filter(p, "train/*");
    assert_int_equal(metrics_pane_tag_count(p), 1);
    metrics_pane_set_filter(p, "rain*"); /* not text inside a tag: no match */
    assert_int_equal(metrics_pane_tag_count(p), 0);
    metrics_pane_set_filter(p, "");

    /* selected tags are charted, in name order, while the filter keeps them */
    metrics_pane_move(p, -10);
    metrics_pane_toggle(p); /* acc */
    metrics_pane_move(p, 2);
    metrics_pane_toggle(p); /* train/loss */
    assert_true(metrics_pane_selected(p, "acc"));
    assert_false(metrics_pane_selected(p, evil_tag));
    assert_int_equal(metrics_pane_charted(p, tags, 8), 2);
    assert_string_equal(tags[0], "acc");
    assert_string_equal(tags[1], "train/loss");
    metrics_pane_set_filter(p, "train");
    assert_int_equal(metrics_pane_charted(p, tags, 8), 1);
    assert_string_equal(tags[0], "train/loss");
    metrics_pane_set_filter(p, "");
    metrics_pane_move(p, -10);
    metrics_pane_toggle(p); /* acc off */
    assert_int_equal(metrics_pane_charted(p, tags, 8), 1);

    /* a new tag keeps the cursor on its tag */
    metrics_pane_move(p, 2);
    assert_string_equal(metrics_pane_tag(p, metrics_pane_cursor(p)), "train/loss");
    struct scalar_page pg;
    scalar_page_init(&pg);
    scalar_page_add(&pg, "rank0", "a-first", 1, 0, 1);
    metrics_pane_feed(p, &pg);
    scalar_page_free(&pg);
    assert_string_equal(metrics_pane_tag(p, metrics_pane_cursor(p)), "train/loss");
    metrics_pane_free(p);
}

/* The follower's timer: at once, then backing off while the job runs; never otherwise. */
static void test_follow_timer(void **state)
{
    struct metrics_pane *p = metrics_pane_new();
    metrics_pane_set_job_state(p, JOB_STATE_RUNNING);
    assert_int_equal(metrics_pane_poll_delay(p), -1); /* hidden: asks nothing */
    metrics_pane_set_visible(p, true);
    assert_int_equal(metrics_pane_poll_delay(p), 0); /* shown: at once */
    feed(p, 0, 3);
    assert_int_equal(metrics_pane_poll_delay(p), METRICS_POLL_MIN_MS);
    int64_t want = METRICS_POLL_MIN_MS;
    for (int i = 0; i < 8; i++) {
        feed_empty(p);
        want = want * 2 > METRICS_POLL_MAX_MS ? METRICS_POLL_MAX_MS : want * 2;
        assert_int_equal(metrics_pane_poll_delay(p), want);
    }
    assert_int_equal(metrics_pane_poll_delay(p), METRICS_POLL_MAX_MS);
    feed(p, 3, 4); /* something new: quick again */
    assert_int_equal(metrics_pane_poll_delay(p), METRICS_POLL_MIN_MS);

    /* a page cut short by its limit: the rest at once */
    struct scalar_page pg;
    page_of(&pg, 4, 5, "c2");
    pg.more = true;
    metrics_pane_feed(p, &pg);
    scalar_page_free(&pg);
    assert_int_equal(metrics_pane_poll_delay(p), 0);
    feed(p, 5, 6);

    /* store changes while the timer is armed do not push it away */
    metrics_pane_set_job_state(p, JOB_STATE_RUNNING);
    assert_int_equal(metrics_pane_poll_delay(p), METRICS_POLL_MIN_MS);

    /* the job ends: one last page, then no timer at all */
    metrics_pane_set_job_state(p, JOB_STATE_SUCCEEDED);
    assert_int_equal(metrics_pane_poll_delay(p), 0);
    feed_empty(p);
    assert_int_equal(metrics_pane_poll_delay(p), -1);
    metrics_pane_set_job_state(p, JOB_STATE_SUCCEEDED);
    assert_int_equal(metrics_pane_poll_delay(p), -1);

    /* running again, then hidden: the timer goes with the pane */
    metrics_pane_set_job_state(p, JOB_STATE_RUNNING);
    feed_empty(p);
    assert_true(metrics_pane_poll_delay(p) > 0);
    metrics_pane_set_visible(p, false);
    assert_int_equal(metrics_pane_poll_delay(p), -1);
    metrics_pane_set_visible(p, true);
    assert_int_equal(metrics_pane_poll_delay(p), 0); /* what was written meanwhile */

    /* other errors: shown, retried with back-off while the job runs */
    struct api_error err = {.status = 500};
    snprintf(err.message, sizeof err.message, "disk on fire");
    metrics_pane_fail(p, &err);
    assert_non_null(strstr(metrics_pane_message(p), "disk on fire"));
    assert_true(metrics_pane_poll_delay(p) >= METRICS_POLL_MIN_MS);
    feed(p, 6, 7);
    assert_null(metrics_pane_message(p)); /* a good page clears it */
    metrics_pane_free(p);
}

static void test_messages_stop_following(void **state)
{
    struct metrics_pane *p = metrics_pane_new();
    metrics_pane_set_job_state(p, JOB_STATE_RUNNING);
    metrics_pane_set_visible(p, true);
    struct api_error err = {.status = 404};
    snprintf(err.reason, sizeof err.reason, "NoTensorBoard");
    snprintf(err.message, sizeof err.message, "job 'x' has no TensorBoard log path");
    metrics_pane_fail(p, &err);
    assert_string_equal(metrics_pane_message(p), METRICS_NO_LOG_PATH);
    assert_int_equal(metrics_pane_poll_delay(p), -1);
    metrics_pane_set_visible(p, false);
    metrics_pane_set_visible(p, true);
    assert_int_equal(metrics_pane_poll_delay(p), -1); /* never again */
    metrics_pane_free(p);

    p = metrics_pane_new();
    metrics_pane_set_visible(p, true);
    struct api_error un = {.status = 501};
    snprintf(un.reason, sizeof un.reason, "Unsupported");
    metrics_pane_fail(p, &un);
    assert_non_null(strstr(metrics_pane_message(p), "--logdir"));
    assert_int_equal(metrics_pane_poll_delay(p), -1);
    metrics_pane_free(p);

    /* a cursor the backend refuses: everything is read again from the start */
    p = metrics_pane_new();
    metrics_pane_set_visible(p, true);
    feed(p, 0, 4);
    struct api_error since = {.status = 400};
    snprintf(since.field, sizeof since.field, "since");
    metrics_pane_fail(p, &since);
    assert_int_equal(metrics_pane_all_tags(p), 0);
    assert_int_equal(metrics_pane_poll_delay(p), 0);
    metrics_pane_free(p);
}

static unsigned act(struct metrics_pane *p, const char *action)
{
    struct widget_key none = {0};
    return metrics_pane_key(p, &none, action);
}

static void test_keys(void **state)
{
    struct metrics_pane *p = metrics_pane_new();
    feed(p, 0, 1001);
    assert_true(metrics_pane_smoothing(p) == 0.6);
    act(p, "smooth-more");
    assert_true(fabs(metrics_pane_smoothing(p) - 0.7) < 1e-9);
    for (int i = 0; i < 20; i++)
        act(p, "smooth-more");
    assert_true(metrics_pane_smoothing(p) == CHART_MAX_SMOOTHING);
    for (int i = 0; i < 20; i++)
        act(p, "smooth-less");
    assert_true(metrics_pane_smoothing(p) == 0);

    assert_false(metrics_pane_log_y(p));
    act(p, "log-y");
    assert_true(metrics_pane_log_y(p));

    /* zoom: the cursor's tag is acc (one point); chart train/loss, steps 0..1000 */
    metrics_pane_move(p, 2);
    assert_true(metrics_pane_zoom(p) == 0);
    act(p, "zoom-in");
    assert_true(metrics_pane_zoom(p) == 500);
    act(p, "zoom-in");
    assert_true(metrics_pane_zoom(p) == 200);
    act(p, "zoom-out");
    assert_true(metrics_pane_zoom(p) == 500);
    act(p, "zoom-out");
    assert_true(metrics_pane_zoom(p) == 0); /* 1000 covers it all */

    /* Space selects; / asks for the filter, Enter applies it */
    struct widget_key space = {' ', false, false};
    metrics_pane_key(p, &space, NULL);
    assert_true(metrics_pane_selected(p, "train/loss"));
    metrics_pane_key(p, &(struct widget_key){0}, "search");
    assert_true(metrics_pane_prompting(p));
    const char *typed = "acc";
    for (const char *c = typed; *c; c++)
        metrics_pane_key(p, &(struct widget_key){*c, false, false}, NULL);
    metrics_pane_key(p, &(struct widget_key){'\r', false, false}, NULL);
    assert_false(metrics_pane_prompting(p));
    assert_string_equal(metrics_pane_filter(p), "acc");
    assert_int_equal(metrics_pane_tag_count(p), 1);

    struct strbuf st = STRBUF_INIT;
    metrics_pane_status(p, &st);
    assert_non_null(strstr(strbuf_str(&st), "3 tags (1 shown)"));
    assert_non_null(strstr(strbuf_str(&st), "log y"));
    strbuf_free(&st);
    metrics_pane_free(p);
}

/* The whole window as text, rows joined by '\n'. */
static char *screen_text(void)
{
    struct strbuf sb = STRBUF_INIT;
    for (int y = 0; y < WIN_H; y++) {
        char *row = offscreen_text(win, y, 0, WIN_W);
        assert_non_null(row);
        strbuf_adds(&sb, row);
        strbuf_addc(&sb, '\n');
        free(row);
    }
    return strbuf_detach(&sb, NULL);
}

static void test_draw(void **state)
{
    struct metrics_pane *p = metrics_pane_new();
    metrics_pane_set_style(p, NULL);
    werase(win);
    metrics_pane_draw(p, win, 0, 0, WIN_H, WIN_W, true);
    char *before = screen_text();
    assert_non_null(strstr(before, "asking the backend"));
    free(before);

    feed(p, 0, 50);
    metrics_pane_move(p, 2); /* train/loss */
    werase(win);
    metrics_pane_draw(p, win, 0, 0, WIN_H, WIN_W, true);
    char *one = screen_text();
    assert_non_null(strstr(one, "Tags 3"));
    assert_non_null(strstr(one, "train/loss"));
    assert_non_null(strstr(one, "rank0")); /* the legend */
    assert_non_null(strstr(one, "rank1"));
    assert_non_null(strstr(one, "eviltag")); /* the escapes removed whole */
    assert_null(strchr(one, '\033'));
    assert_null(strchr(one, '\007'));
    assert_false(metrics_pane_dirty(p));

    /* more points: the chart changes */
    feed(p, 50, 400);
    assert_true(metrics_pane_dirty(p));
    werase(win);
    metrics_pane_draw(p, win, 0, 0, WIN_H, WIN_W, true);
    char *two = screen_text();
    assert_string_not_equal(one, two);

    /* the cursor reads out values; Esc (back) hides it, then lets back through */
    struct widget_key left = {KEY_LEFT, true, false}, esc = {27, false, false};
    assert_int_not_equal(metrics_pane_key(p, &left, NULL), WIDGET_IGNORED);
    assert_int_not_equal(metrics_pane_key(p, &esc, "back"), WIDGET_IGNORED);
    assert_int_equal(metrics_pane_key(p, &esc, "back"), WIDGET_IGNORED);

    /* a message in place of the charts */
    struct api_error err = {.status = 404};
    snprintf(err.reason, sizeof err.reason, "NoTensorBoard");
    metrics_pane_fail(p, &err);
    werase(win);
    metrics_pane_draw(p, win, 0, 0, WIN_H, WIN_W, true);
    char *three = screen_text();
    assert_non_null(strstr(three, "no TensorBoard log path"));
    free(one);
    free(two);
    free(three);
    metrics_pane_free(p);
}

/* Without colour (NO_COLOR, a mono theme) runs are told apart by markers; without UTF-8, ASCII. */
static void test_mono_ascii(void **state)
{
    struct term t = {.depth = THEME_DEPTH_MONO, .utf8 = false, .palette = *widget_palette_mono()};
    struct metrics_pane *p = metrics_pane_new();
    metrics_pane_set_style(p, &t);
    feed(p, 0, 50);
    metrics_pane_move(p, 2); /* train/loss: rank0 and rank1 */
    werase(win);
    metrics_pane_draw(p, win, 0, 0, WIN_H, WIN_W, true);
    char *text = screen_text();
    assert_non_null(strstr(text, "* rank0"));
    assert_non_null(strstr(text, "+ rank1"));
    for (const char *c = text; *c; c++)
        assert_true((unsigned char)*c < 0x80); /* no braille, no box drawing */
    free(text);
    metrics_pane_free(p);
}

/* The pane's keys are bound in the job screen's mode by default (so help and key bar list them). */
static void test_default_keys(void **state)
{
    struct keymap *km = keymap_new_default();
    static const struct {
        const char *key;
        enum keymap_action action;
    } want[] = {
        {"M", KEYMAP_METRICS},     {"z", KEYMAP_FULLSCREEN}, {"]", KEYMAP_SMOOTH_MORE},
        {"[", KEYMAP_SMOOTH_LESS}, {"L", KEYMAP_LOG_Y},      {"+", KEYMAP_ZOOM_IN},
        {"-", KEYMAP_ZOOM_OUT},    {"/", KEYMAP_SEARCH},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        struct widget_key k;
        assert_true(keymap_key_parse(want[i].key, &k));
        assert_int_equal(keymap_lookup(km, "job", &k), want[i].action);
    }
    keymap_free(km);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_model_from_pages),
        cmocka_unit_test(test_series_bounded),
        cmocka_unit_test(test_many_tags),
        cmocka_unit_test(test_filter_and_selection),
        cmocka_unit_test(test_follow_timer),
        cmocka_unit_test(test_messages_stop_following),
        cmocka_unit_test(test_keys),
        cmocka_unit_test(test_draw),
        cmocka_unit_test(test_mono_ascii),
        cmocka_unit_test(test_default_keys),
    };
    return cmocka_run_group_tests(tests, setup_terminal, teardown_terminal);
}
