/*
 * test_context_edit: `trainjob config use-context` edits config.yaml in its
 * text (api/context_edit): every layout a person writes keeps its comments
 * and reads back with the new current_context; names YAML would read as
 * something else are quoted; texts the splice cannot handle are refused
 * rather than written. And completion_word_ok, which keeps hostile names
 * from a server out of a shell's completion list; and the context lists
 * `top --context a,b` and `get jobs --context all` take (context_spec_names).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h> /* after the four headers it needs */

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/context.h"
#include "api/context_edit.h"
#include "api/finding.h"
#include "cli/cli.h"
#include "util/strbuf.h"

/* Sets name in text; checks it reads back and that keep (if any) survived. Returns the text. */
static char *edit_ok(const char *text, const char *name, const char *keep)
{
    struct strbuf out = STRBUF_INIT, err = STRBUF_INIT;
    int rc = context_edit_set_current(text, strlen(text), name, &out, &err);
    if (rc != 0)
        fail_msg("edit refused: %s\n--- text:\n%s", strbuf_str(&err), text);
    struct context_file cf;
    struct findings fs = FINDINGS_INIT;
    assert_int_equal(context_file_parse(strbuf_str(&out), out.len, &cf, &fs), 0);
    assert_non_null(cf.current_context);
    assert_string_equal(cf.current_context, name);
    if (keep)
        assert_non_null(strstr(strbuf_str(&out), keep));
    context_file_free(&cf);
    findings_free(&fs);
    strbuf_free(&err);
    return strbuf_detach(&out, NULL);
}

static void edit_refused(const char *text, const char *name, const char *why)
{
    struct strbuf out = STRBUF_INIT, err = STRBUF_INIT;
    assert_int_equal(context_edit_set_current(text, strlen(text), name, &out, &err), -1);
    assert_non_null(strstr(strbuf_str(&err), why));
    strbuf_free(&out);
    strbuf_free(&err);
}

static void test_replace_keeps_comments(void **state)
{
    const char *t = "# top comment\n"
                    "current_context: a   # the one I use\n"
                    "contexts:\n"
                    "  - name: a\n"
                    "  - name: b # second\n";
    char *s = edit_ok(t, "b", "# the one I use");
    assert_string_equal(s, "# top comment\n"
                           "current_context: b   # the one I use\n"
                           "contexts:\n"
                           "  - name: a\n"
                           "  - name: b # second\n");
    free(s);
    /* A quoted value is replaced quotes and all. */
    s = edit_ok("current_context: \"a\"\ncontexts: [{name: a}, {name: b}]\n", "b", NULL);
    assert_string_equal(s, "current_context: b\ncontexts: [{name: a}, {name: b}]\n");
    free(s);
}

static void test_insert(void **state)
{
    char *s = edit_ok("# mine\ncontexts:\n- name: a\n- name: b\n", "b", "# mine\n");
    assert_string_equal(s, "# mine\ncurrent_context: b\ncontexts:\n- name: a\n- name: b\n");
    free(s);
    s = edit_ok("---\ncontexts:\n- name: a\n", "a", "---\n");
    free(s);
    s = edit_ok("{contexts: [{name: a}]}\n", "a", NULL);
    free(s);
    /* A key after the contexts, and one with nothing after the colon. */
    s = edit_ok("contexts:\n- name: a\n- name: b\ncurrent_context: a\n", "b", NULL);
    free(s);
    s = edit_ok("current_context:\ncontexts:\n- name: a\n", "a", NULL);
    free(s);
    s = edit_ok("current_context:    # pick one\ncontexts:\n- name: a\n", "a", "# pick one");
    free(s);
}

static void test_names_that_need_quotes(void **state)
{
    const char *t = "contexts:\n"
                    "- name: \"yes\"\n- name: \"1.5\"\n- name: \"a: b # c\"\n"
                    "- name: \"-x\"\n- name: \"q\\\"uote\"\n- name: \"null\"\n- name: \"日本\"\n";
    const char *names[] = {"yes", "1.5", "a: b # c", "-x", "q\"uote", "null", "日本"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        free(edit_ok(t, names[i], NULL));
}

static void test_refused(void **state)
{
    edit_refused("- a\n- b\n", "a", "mapping");
    edit_refused("current_context: [a]\ncontexts: [{name: a}]\n", "a", "no single name");
    edit_refused("contexts: [{name: a}\n", "a", "line");
    /* The result must validate: a file that is wrong elsewhere is not written. */
    edit_refused("contexts:\n- name: a\n  bogus: 1\n", "a", "read back");
}

static void test_completion_words(void **state)
{
    assert_true(completion_word_ok("resnet50-ddp"));
    assert_true(completion_word_ok("master-0"));
    assert_true(completion_word_ok("share-space-01e"));
    assert_false(completion_word_ok(""));
    assert_false(completion_word_ok("-rf"));
    assert_false(completion_word_ok("$(reboot)"));
    assert_false(completion_word_ok("a;b"));
    assert_false(completion_word_ok("a b"));
    assert_false(completion_word_ok("a\nb"));
    assert_false(completion_word_ok("\x1b]0;pwned\x07"));
    assert_false(completion_word_ok("`id`"));
    char big[300];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    assert_false(completion_word_ok(big));
}

/* The names of a context list, joined with '|' ("" after an error), freed. */
static void spec_is(const char *spec, const char *want)
{
    char **names = NULL;
    struct strbuf err = STRBUF_INIT, got = STRBUF_INIT;
    size_t n = context_spec_names(spec, &names, &err);
    for (size_t i = 0; i < n; i++) {
        strbuf_addf(&got, "%s%s", i ? "|" : "", names[i]);
        free(names[i]);
    }
    free(names);
    if (n == 0)
        assert_true(err.len > 0); /* a failure says why */
    assert_string_equal(strbuf_str(&got), want);
    strbuf_free(&err);
    strbuf_free(&got);
}

/*
 * "a,b": each name once, in order, blanks around a name dropped; an empty
 * name is an error; "all": every context of the config file, "local"
 * without one.
 */
static void test_context_lists(void **state)
{
    (void)state;
    assert_true(context_spec_several("a,b"));
    assert_true(context_spec_several("all"));
    assert_false(context_spec_several("lab"));
    assert_false(context_spec_several(NULL));
    spec_is("local,lab", "local|lab");
    spec_is(" local , lab,local", "local|lab");
    spec_is("lab", "lab");
    spec_is("local,,lab", "");
    spec_is("local,", "");
    char dir[] = "/tmp/tj-ctxlist-XXXXXX", path[64];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/config.yaml", dir);
    setenv("TRAINJOB_CONFIG", path, 1);
    spec_is("all", "local"); /* no file: the built-in context */
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("contexts:\n- name: lab\n  driver: trainjobd\n- name: sh01\n  driver: acp\n"
          "  endpoint: https://acp.example\n",
          f);
    fclose(f);
    spec_is("all", "lab|sh01");
    f = fopen(path, "w");
    assert_non_null(f);
    fputs("contexts: [\n", f);
    fclose(f);
    spec_is("all", ""); /* a broken file: an error naming it, not "local" */
    unlink(path);
    rmdir(dir);
    unsetenv("TRAINJOB_CONFIG");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_replace_keeps_comments), cmocka_unit_test(test_insert),
        cmocka_unit_test(test_names_that_need_quotes), cmocka_unit_test(test_refused),
        cmocka_unit_test(test_completion_words),       cmocka_unit_test(test_context_lists),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
