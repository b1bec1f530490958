/*
 * test_keymap: key names both ways, the keys format (good lines, bad lines
 * reported at their line and column with the bad word, the good lines of a
 * bad file still applied), a user's file over the defaults (override,
 * unbind, none), the fall-back to global, and what the help screen lists.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h> /* after the four headers it needs */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tui/keymap.h"
#include "util/strbuf.h"

static struct widget_key key(const char *name)
{
    struct widget_key k;
    assert_true(keymap_key_parse(name, &k));
    return k;
}

static enum keymap_action look(const struct keymap *km, const char *mode, const char *name)
{
    struct widget_key k = key(name);
    return keymap_lookup(km, mode, &k);
}

/* The defaults with text parsed over them, as a user's file named "keys". */
static struct keymap *parsed(const char *text, struct strbuf *err, size_t *bad)
{
    struct keymap *km = keymap_new_default();
    *bad = keymap_parse(km, text, strlen(text), "keys", err);
    return km;
}

static void test_key_names(void **state)
{
    struct widget_key k = key("C-s");
    assert_int_equal(k.code, 19);
    assert_false(k.is_function);
    assert_false(k.alt);
    k = key("M-Left");
    assert_int_equal(k.code, KEY_LEFT);
    assert_true(k.is_function && k.alt);
    assert_int_equal(key("F2").code, KEY_F(2));
    assert_int_equal(key("PgDn").code, KEY_NPAGE);
    assert_int_equal(key("pagedown").code, KEY_NPAGE); /* aliases, any case */
    assert_int_equal(key("Tab").code, '\t');
    assert_int_equal(key("S-Tab").code, KEY_BTAB);
    assert_int_equal(key("?").code, '?');
    assert_int_equal(key("/").code, '/');
    assert_int_equal(key("q").code, 'q');
    assert_int_equal(key("Q").code, 'Q');
    assert_int_equal(key("Esc").code, 27);
    assert_int_equal(key("Enter").code, '\r');
    assert_int_equal(key("é").code, 0xE9);
    assert_int_equal(key("C-S").code, 19); /* Ctrl has no case */

    struct widget_key bad;
    assert_false(keymap_key_parse("F0", &bad));
    assert_false(keymap_key_parse("F25", &bad));
    assert_false(keymap_key_parse("PgDown", &bad));
    assert_false(keymap_key_parse("C-", &bad));
    assert_false(keymap_key_parse("C-1", &bad));
    assert_false(keymap_key_parse("ab", &bad));
    assert_false(keymap_key_parse("", &bad));
    assert_false(keymap_key_parse("\x01", &bad)); /* a control is no character */

    /* names round-trip, and every spelling of a key gets its one name */
    const char *names[] = {"C-s", "M-Left", "F2", "PgDn", "Tab",   "S-Tab",     "?",   "Enter",
                           "Esc", "q",      "/",  "M-x",  "Space", "Backspace", "F12", "C-l"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char buf[KEYMAP_KEY_NAME_MAX];
        k = key(names[i]);
        keymap_key_name(&k, buf, sizeof buf);
        assert_string_equal(buf, names[i]);
    }
    char buf[KEYMAP_KEY_NAME_MAX];
    keymap_key_name(&(struct widget_key){KEY_ENTER, true, false}, buf, sizeof buf);
    assert_string_equal(buf, "Enter");
    keymap_key_name(&(struct widget_key){'\n', false, false}, buf, sizeof buf);
    assert_string_equal(buf, "Enter");
    keymap_key_name(&(struct widget_key){127, false, false}, buf, sizeof buf);
    assert_string_equal(buf, "Backspace");
    keymap_key_name(&(struct widget_key){0x57FA, false, false}, buf, sizeof buf);
    assert_string_equal(buf, "基");

    assert_true(keymap_key_is_text(&(struct widget_key){'?', false, false}));
    assert_false(keymap_key_is_text(&(struct widget_key){'?', false, true}));
    assert_false(keymap_key_is_text(&(struct widget_key){19, false, false}));
    assert_false(keymap_key_is_text(&(struct widget_key){KEY_F(1), true, false}));
}

/* The shipped file parses without a complaint, and the compiled-in copy is it. */
static void test_defaults(void **state)
{
    struct keymap *km = keymap_new_default();
    struct strbuf err = STRBUF_INIT;
    assert_int_equal(keymap_load(km, "tui/default.keys", NULL, &err), 0);
    assert_string_equal(strbuf_str(&err), "");
    keymap_free(km);

    km = keymap_new_default();
    assert_int_equal(look(km, "wizard", "C-s"), KEYMAP_SUBMIT);
    assert_int_equal(look(km, "wizard", "PgDn"), KEYMAP_NEXT_SECTION);
    assert_int_equal(look(km, "wizard", "M-Left"), KEYMAP_PREV_SECTION);
    assert_int_equal(look(km, "wizard", "F2"), KEYMAP_SAVE);
    assert_int_equal(look(km, "wizard", "F3"), KEYMAP_LOAD);
    assert_int_equal(look(km, "wizard", "Esc"), KEYMAP_QUIT);
    assert_int_equal(look(km, "global", "F1"), KEYMAP_HELP);
    assert_int_equal(look(km, "logs", "/"), KEYMAP_SEARCH);
    assert_int_equal(look(km, "jobs", "q"), KEYMAP_QUIT);
    assert_int_equal(look(km, "wizard", "q"), KEYMAP_NONE); /* q types in the form */
    /* the other ways terminals send Enter are Enter */
    struct widget_key ke = {KEY_ENTER, true, false}, nl = {'\n', false, false};
    assert_int_equal(keymap_lookup(km, "jobs", &ke), KEYMAP_OPEN);
    assert_int_equal(keymap_lookup(km, "jobs", &nl), KEYMAP_OPEN);
    /* every action has a name and a line of help */
    for (int a = 0; a < KEYMAP_ACTION_COUNT; a++) {
        assert_non_null(keymap_action_name((enum keymap_action)a));
        assert_non_null(keymap_action_help((enum keymap_action)a));
        assert_int_equal(keymap_action_from_name(keymap_action_name((enum keymap_action)a)), a);
    }
    assert_int_equal(keymap_action_from_name("sumbit"), -1);
    for (size_t m = 0; keymap_modes[m]; m++)
        assert_non_null(keymap_mode_help(keymap_modes[m]));
    keymap_free(km);
}

static void test_parse_good(void **state)
{
    struct strbuf err = STRBUF_INIT;
    size_t bad;
    struct keymap *km = parsed("# my keys\n"
                               "\n"
                               "  bind wizard C-x submit   # trailing comment\n"
                               "bind\tjobs\tx\tquit\r\n"
                               "bind global F5 redraw",
                               &err, &bad);
    assert_int_equal(bad, 0);
    assert_string_equal(strbuf_str(&err), "");
    assert_int_equal(look(km, "wizard", "C-x"), KEYMAP_SUBMIT);
    assert_int_equal(look(km, "jobs", "x"), KEYMAP_QUIT);
    assert_int_equal(look(km, "logs", "F5"), KEYMAP_REDRAW); /* no newline at the end */
    keymap_free(km);
}

static void test_parse_bad(void **state)
{
    struct strbuf err = STRBUF_INIT;
    size_t bad;
    struct keymap *km = parsed("bind wizard C-x submit\n"
                               "bind wizard F9 sumbit\n"
                               "bnd wizard F9 submit\n"
                               "bind wizrd F9 submit\n"
                               "bind wizard PgDown submit\n"
                               "bind wizard F9\n"
                               "bind wizard F9 submit extra\n"
                               "bind jobs F9 submit\n"
                               "unbind wizard\n"
                               "bind wizard F10 load\n",
                               &err, &bad);
    assert_int_equal(bad, 8);
    const char *e = strbuf_str(&err);
    assert_non_null(strstr(e, "keys:2:16: unknown action \"sumbit\" (did you mean submit?)\n"));
    assert_non_null(strstr(e, "keys:3:1: unknown command \"bnd\" (did you mean bind?)\n"));
    assert_non_null(strstr(e, "keys:4:6: unknown mode \"wizrd\" (did you mean wizard?)\n"));
    assert_non_null(strstr(e, "keys:5:13: unknown key \"PgDown\" (did you mean PgDn?)\n"));
    assert_non_null(strstr(e, "keys:6:15: bind needs MODE KEY ACTION\n"));
    assert_non_null(strstr(e, "keys:7:23: unexpected \"extra\""));
    assert_non_null(strstr(e, "keys:8:14: action \"submit\" does nothing in mode jobs\n"));
    assert_non_null(strstr(e, "keys:9:14: unbind needs MODE KEY\n"));
    /* the good lines around the bad ones still apply; the bad ones do nothing */
    assert_int_equal(look(km, "wizard", "C-x"), KEYMAP_SUBMIT);
    assert_int_equal(look(km, "wizard", "F10"), KEYMAP_LOAD);
    assert_int_equal(look(km, "wizard", "F9"), KEYMAP_NONE);
    strbuf_free(&err);

    /* columns count characters, and words from the file are sanitized */
    const char *evil = "bind wizard 基 s\xc3\xbc\x1b[2Jbmit\n";
    bad = keymap_parse(km, evil, strlen(evil), "k", &err);
    assert_int_equal(bad, 1);
    assert_non_null(strstr(strbuf_str(&err), "k:1:15: unknown action \"s\xc3\xbc"
                                             "bmit\""));
    strbuf_free(&err);
    keymap_free(km);
}

static void test_override_unbind(void **state)
{
    struct keymap *km = keymap_new_default();
    struct strbuf err = STRBUF_INIT;
    const char *user = "bind wizard C-g submit\n" /* a second key */
                       "bind wizard C-s save\n"   /* the default key, rebound */
                       "unbind wizard F3\n"
                       "unbind wizard F12\n" /* not bound: nothing to do, no complaint */
                       "bind wizard F1 none\n";
    assert_int_equal(keymap_parse(km, user, strlen(user), "keys", &err), 0);
    assert_int_equal(look(km, "wizard", "C-g"), KEYMAP_SUBMIT);
    assert_int_equal(look(km, "wizard", "C-s"), KEYMAP_SAVE);
    assert_int_equal(look(km, "wizard", "F3"), KEYMAP_NONE);
    assert_int_equal(look(km, "wizard", "F1"), KEYMAP_NONE); /* global's help hidden */
    assert_int_equal(look(km, "jobs", "F1"), KEYMAP_HELP);   /* elsewhere still there */

    /* what the help screen and the key bar read */
    struct strbuf sb = STRBUF_INIT;
    assert_int_equal(keymap_keys_for(km, "wizard", KEYMAP_SUBMIT, true, &sb), 1);
    assert_string_equal(strbuf_str(&sb), "C-g");
    strbuf_reset(&sb);
    assert_int_equal(keymap_keys_for(km, "wizard", KEYMAP_SAVE, true, &sb), 2);
    assert_string_equal(strbuf_str(&sb), "C-s, F2"); /* the order they were bound in */
    strbuf_reset(&sb);
    /* from global: ? still helps in the wizard, F1 no longer does */
    assert_int_equal(keymap_keys_for(km, "wizard", KEYMAP_HELP, false, &sb), 1);
    assert_string_equal(strbuf_str(&sb), "?");
    strbuf_free(&sb);
    char first[KEYMAP_KEY_NAME_MAX];
    assert_true(keymap_first_key(km, "wizard", KEYMAP_HELP, first, sizeof first));
    assert_string_equal(first, "?");
    assert_false(keymap_first_key(km, "wizard", KEYMAP_LOAD, first, sizeof first));
    keymap_free(km);
}

static void test_fallback_to_global(void **state)
{
    struct keymap *km = keymap_new_default();
    struct strbuf err = STRBUF_INIT;
    const char *user = "bind global C-t redraw\n"
                       "bind logs C-t follow\n";
    assert_int_equal(keymap_parse(km, user, strlen(user), "keys", &err), 0);
    assert_int_equal(look(km, "wizard", "C-t"), KEYMAP_REDRAW); /* from global */
    assert_int_equal(look(km, "jobs", "C-t"), KEYMAP_REDRAW);
    assert_int_equal(look(km, "logs", "C-t"), KEYMAP_FOLLOW); /* its own first */
    assert_int_equal(look(km, "nosuchmode", "C-t"), KEYMAP_NONE);
    /* unbinding a mode's own key shows global's again */
    user = "unbind logs C-t\n";
    keymap_parse(km, user, strlen(user), "keys", &err);
    assert_int_equal(look(km, "logs", "C-t"), KEYMAP_REDRAW);
    assert_string_equal(strbuf_str(&err), "");
    keymap_free(km);
}

static void test_load_file(void **state)
{
    struct keymap *km = keymap_new_default();
    struct strbuf err = STRBUF_INIT;
    /* no file of one's own is no error */
    assert_int_equal(keymap_load(km, "/nonexistent/trainjob/keys", NULL, &err), 0);
    assert_string_equal(strbuf_str(&err), "");
    char path[] = "/tmp/test-keymap-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    const char *text = "bind wizard F5 submit\nbind wizard F6 sumbit\n";
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    assert_int_equal(keymap_load(km, path, "~/.config/trainjob/keys", &err), 1);
    assert_non_null(strstr(strbuf_str(&err), "~/.config/trainjob/keys:2:16: unknown action"));
    assert_int_equal(look(km, "wizard", "F5"), KEYMAP_SUBMIT);
    unlink(path);
    strbuf_free(&err);
    /* a directory cannot be read: said so */
    assert_int_equal(keymap_load(km, "/tmp", NULL, &err), 1);
    assert_non_null(strstr(strbuf_str(&err), "/tmp"));
    strbuf_free(&err);
    /* a FIFO keys file is refused at once, never waited on (the alarm fails a hang) */
    char fifo[] = "/tmp/test-keymap-fifo-XXXXXX";
    int tmp = mkstemp(fifo);
    assert_true(tmp >= 0);
    close(tmp);
    unlink(fifo);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    alarm(5);
    assert_int_equal(keymap_load(km, fifo, NULL, &err), 1);
    alarm(0);
    assert_non_null(strstr(strbuf_str(&err), "not a regular file"));
    unlink(fifo);
    strbuf_free(&err);
    keymap_free(km);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_key_names),       cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_parse_good),      cmocka_unit_test(test_parse_bad),
        cmocka_unit_test(test_override_unbind), cmocka_unit_test(test_fallback_to_global),
        cmocka_unit_test(test_load_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
