/*
 * test_drafts: the draft store (api/drafts). Its list is newest first to
 * the nanosecond: drafts written within one second (a new job, then a
 * clone a moment later) keep their order, whatever their names. A run is
 * offered the drafts of its context and those that name none, finds its
 * own by its label, and lists only regular files of the user's own, with
 * head lines bounded and made safe for the terminal.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h> /* after the four headers it needs */

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/drafts.h"
#include "util/xalloc.h"

/* dir/name, a draft of label, modified at second sec and nanosecond nsec. */
static void put_draft(const char *dir, const char *name, const char *label, long nsec)
{
    char *path = xasprintf("%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "%s%s\ndisplay_name: x\n", DRAFTS_HEADER, label);
    fclose(f);
    struct timespec ts[2] = {{1767000000, nsec}, {1767000000, nsec}};
    assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
    free(path);
}

static void drafts_of_one_second_are_newest_first(void **state)
{
    (void)state;
    char dir[] = "/tmp/test_drafts.XXXXXX";
    assert_non_null(mkdtemp(dir));
    /* Names in the opposite order of the times: only the nanoseconds can tell. */
    put_draft(dir, "draft-cccccccccccccccc.yaml", "newest", 900000000);
    put_draft(dir, "draft-bbbbbbbbbbbbbbbb.yaml", "middle", 500000000);
    put_draft(dir, "draft-aaaaaaaaaaaaaaaa.yaml", "oldest", 100000000);
    struct draft_list l;
    drafts_list(dir, &l);
    assert_int_equal(l.count, 3);
    assert_string_equal(l.items[0].label, "newest");
    assert_string_equal(l.items[1].label, "middle");
    assert_string_equal(l.items[2].label, "oldest");
    for (size_t i = 0; i < l.count; i++)
        unlink(l.items[i].path);
    drafts_free(&l);
    rmdir(dir);
}

/* A fresh directory for one test's drafts (removed with its files by cleanup). */
static char *new_dir(void)
{
    char *dir = xstrdup("/tmp/test_drafts.XXXXXX");
    assert_non_null(mkdtemp(dir));
    return dir;
}

static void cleanup(char *dir)
{
    char *cmd = xasprintf("rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
    free(cmd);
    free(dir);
}

/* dir/name holding text as it is. */
static char *put_file(const char *dir, const char *name, const char *text)
{
    char *path = xasprintf("%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

/* The index of the draft labelled label in l, or -1. */
static long labelled(const struct draft_list *l, const char *label)
{
    for (size_t i = 0; i < l->count; i++)
        if (strcmp(l->items[i].label, label) == 0)
            return (long)i;
    return -1;
}

static void a_context_keeps_its_own_and_those_that_name_none(void **state)
{
    (void)state;
    char *dir = new_dir();
    free(put_file(dir, "draft-0000000000000001.yaml",
                  DRAFTS_HEADER "on lab\n" DRAFTS_CONTEXT "lab\nname: a\n"));
    free(put_file(dir, "draft-0000000000000002.yaml",
                  DRAFTS_HEADER "on prod\n" DRAFTS_CONTEXT "prod\nname: b\n"));
    free(put_file(dir, "draft-0000000000000003.yaml", DRAFTS_HEADER "from before\nname: c\n"));
    struct draft_list l;
    drafts_list(dir, &l);
    assert_int_equal(l.count, 3);
    assert_null(l.items[labelled(&l, "from before")].context);
    drafts_keep_context(&l, "lab");
    assert_int_equal(l.count, 2);
    assert_true(labelled(&l, "on lab") >= 0);
    assert_true(labelled(&l, "from before") >= 0); /* no context line: offered everywhere */
    assert_int_equal(labelled(&l, "on prod"), -1);
    drafts_free(&l);
    /* No context of our own (no session): every draft is offered. */
    drafts_list(dir, &l);
    drafts_keep_context(&l, NULL);
    assert_int_equal(l.count, 3);
    drafts_free(&l);
    cleanup(dir);
}

static void a_run_finds_the_draft_of_its_label(void **state)
{
    (void)state;
    char *dir = new_dir();
    struct jobspec job;
    jobspec_init(&job);
    job.name = xstrdup("resnet-2");
    char *label = drafts_label("resnet", NULL);
    assert_string_equal(label, "clone of resnet");
    char *path = drafts_path(dir, label, false), *again = drafts_path(dir, label, false);
    assert_string_equal(path, again); /* the same job: the same draft */
    char *own = drafts_path(dir, label, true);
    assert_string_not_equal(own, path); /* kept for later: not written over */
    struct strbuf err = STRBUF_INIT;
    assert_int_equal(drafts_write(path, label, "lab", &job, &err), 0);
    assert_int_equal(drafts_write(own, "new\njob", NULL, &job, &err), 0);
    struct draft_list l;
    drafts_list(dir, &l);
    assert_int_equal(l.count, 2);
    long i = drafts_find(&l, path);
    assert_true(i >= 0);
    assert_string_equal(l.items[i].label, label);
    assert_string_equal(l.items[i].context, "lab");
    /* A line break in a label cannot start the job's text. */
    assert_string_equal(l.items[drafts_find(&l, own)].label, "new?job");
    assert_int_equal(drafts_find(&l, NULL), 0); /* none asked for: the newest */
    assert_int_equal(drafts_find(&l, "/nowhere/draft-x.yaml"), -1);
    /* Discarded: the file goes, and the row with it. */
    assert_int_equal(drafts_discard(&l, (size_t)i, &err), 0);
    assert_int_equal(l.count, 1);
    assert_int_equal(access(path, F_OK), -1);
    assert_int_equal(drafts_find(&l, path), -1);
    /* A file already gone stays a row, and the error names it. */
    assert_int_equal(unlink(own), 0);
    assert_int_equal(drafts_discard(&l, 0, &err), -1);
    assert_int_equal(l.count, 1);
    assert_non_null(strstr(strbuf_str(&err), own));
    drafts_free(&l);
    strbuf_free(&err);
    free(own);
    free(again);
    free(path);
    free(label);
    jobspec_free(&job);
    char *edit = drafts_label(NULL, "/tmp/../tmp");
    assert_string_equal(edit, "edit of /tmp"); /* the file, made absolute */
    free(edit);
    edit = drafts_label(NULL, NULL);
    assert_string_equal(edit, "new job");
    free(edit);
    cleanup(dir);
}

static void hostile_drafts_are_skipped_or_made_safe(void **state)
{
    (void)state;
    char *dir = new_dir();
    char *real = put_file(dir, "draft-00000000000000a1.yaml", DRAFTS_HEADER "mine\nname: a\n");
    /* A symlink, even to a draft of ours, is not followed. */
    char *link = xasprintf("%s/draft-00000000000000a2.yaml", dir);
    assert_int_equal(symlink(real, link), 0);
    /* A head line longer than what is read: cut, its escapes made harmless. */
    struct strbuf text = STRBUF_INIT;
    strbuf_adds(&text, DRAFTS_HEADER "\033]2;pwned\007");
    for (int i = 0; i < 1000; i++)
        strbuf_addc(&text, 'x');
    strbuf_adds(&text, "\nname: b\n");
    free(put_file(dir, "draft-00000000000000a3.yaml", strbuf_str(&text)));
    /* A context line cut short is not taken for a context (offered everywhere). */
    strbuf_reset(&text);
    strbuf_adds(&text, DRAFTS_HEADER "long context\n" DRAFTS_CONTEXT);
    for (int i = 0; i < 1000; i++)
        strbuf_addc(&text, 'c');
    strbuf_adds(&text, "\nname: c\n");
    free(put_file(dir, "draft-00000000000000a4.yaml", strbuf_str(&text)));
    /* A file with no header: a new job. */
    free(put_file(dir, "draft.yaml", "name: d\n"));
    struct draft_list l;
    drafts_list(dir, &l);
    assert_int_equal(l.count, 4);
    for (size_t i = 0; i < l.count; i++) {
        assert_string_not_equal(l.items[i].path, link);
        assert_null(strchr(l.items[i].label, '\033'));
        assert_null(strchr(l.items[i].label, '\007'));
        assert_true(strlen(l.items[i].label) < 400); /* of the 1,000 x: what was read */
    }
    long lc = labelled(&l, "long context");
    assert_true(lc >= 0);
    assert_null(l.items[lc].context);
    assert_true(labelled(&l, "new job") >= 0);
    assert_true(labelled(&l, "mine") >= 0);
    drafts_free(&l);
    strbuf_free(&text);
    free(link);
    free(real);
    cleanup(dir);
}

/* A draft another user put in the directory is not offered (it could be any job). */
static void another_users_draft_is_not_listed(void **state)
{
    (void)state;
    if (geteuid() != 0)
        skip(); /* giving a file away takes root */
    char *dir = new_dir();
    free(put_file(dir, "draft-00000000000000b1.yaml", DRAFTS_HEADER "mine\nname: a\n"));
    char *theirs = put_file(dir, "draft-00000000000000b2.yaml", DRAFTS_HEADER "planted\nname: b\n");
    assert_int_equal(chmod(theirs, 0644), 0);
    assert_int_equal(chown(theirs, 65534, 65534), 0);
    struct draft_list l;
    drafts_list(dir, &l);
    assert_int_equal(l.count, 1);
    assert_string_equal(l.items[0].label, "mine");
    drafts_free(&l);
    free(theirs);
    cleanup(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(drafts_of_one_second_are_newest_first),
        cmocka_unit_test(a_context_keeps_its_own_and_those_that_name_none),
        cmocka_unit_test(a_run_finds_the_draft_of_its_label),
        cmocka_unit_test(hostile_drafts_are_skipped_or_made_safe),
        cmocka_unit_test(another_users_draft_is_not_listed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
