/*
 * test_theme: the scheme files and their loader, and the colour arithmetic.
 * Every shipped scheme loads cleanly and sets every role; default.theme and
 * the compiled-in scheme agree; parse errors name FILE:LINE and suggest a
 * near word; inherit (including a user's default.theme inheriting the
 * shipped one, and cycles); depth detection; RGB → 256 → 16 → 8 against
 * xterm's palette; resolving never hides text in its own background; job
 * states stay distinguishable without colour (mono attributes and icons).
 * Run from the repository root (the shipped schemes are read from themes/).
 */
// clang-format off
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
// clang-format on

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "themes/theme.h"
#include "util/strbuf.h"
#include "util/utf8.h"
#include "util/xalloc.h"

static const char *const shipped_dirs[] = {"themes", NULL};
static const char *const shipped[] = {"default", "light", "high-contrast", "solarized", "mono"};
#define NSHIPPED (sizeof shipped / sizeof shipped[0])

static const enum theme_depth all_depths[] = {THEME_DEPTH_MONO, THEME_DEPTH_8, THEME_DEPTH_16,
                                              THEME_DEPTH_256, THEME_DEPTH_TRUECOLOR};

static bool color_eq(struct theme_color a, struct theme_color b)
{
    if (a.kind != b.kind)
        return false;
    if (a.kind == THEME_COLOR_RGB)
        return a.r == b.r && a.g == b.g && a.b == b.b;
    if (a.kind == THEME_COLOR_INDEX)
        return a.index == b.index;
    return true;
}

static bool style_eq(struct theme_style a, struct theme_style b)
{
    return color_eq(a.fg, b.fg) && color_eq(a.bg, b.bg) && a.attrs == b.attrs &&
           a.mono_attrs == b.mono_attrs;
}

static struct theme *load_ok(const char *name)
{
    struct strbuf err = STRBUF_INIT;
    struct theme *t = NULL;
    int rc = theme_load(name, shipped_dirs, &t, &err);
    if (rc != 0)
        fail_msg("%s: %s", name, strbuf_str(&err));
    assert_string_equal(strbuf_str(&err), "");
    assert_non_null(t);
    strbuf_free(&err);
    return t;
}

/* Parses text as file and expects failure with exactly the message want. */
static void parse_fails(const char *file, const char *text, const char *want)
{
    struct strbuf err = STRBUF_INIT;
    struct theme *t = NULL;
    assert_int_equal(theme_parse(text, strlen(text), file, shipped_dirs, &t, &err), -1);
    assert_null(t);
    assert_string_equal(strbuf_str(&err), want);
    strbuf_free(&err);
}

static struct theme *parse_ok(const char *text, const char *const *dirs)
{
    struct strbuf err = STRBUF_INIT;
    struct theme *t = NULL;
    int rc = theme_parse(text, strlen(text), "t.theme", dirs, &t, &err);
    if (rc != 0)
        fail_msg("%s", strbuf_str(&err));
    strbuf_free(&err);
    return t;
}

static struct theme_color rgb(uint8_t r, uint8_t g, uint8_t b)
{
    struct theme_color c = {.kind = THEME_COLOR_RGB, .r = r, .g = g, .b = b};
    return c;
}

static struct theme_color idx(int i)
{
    struct theme_color c = {.kind = THEME_COLOR_INDEX, .index = i};
    return c;
}

/* ---- names ---- */

static void test_role_names(void **state)
{
    for (int i = 0; i < THEME_ROLE_COUNT; i++) {
        const char *name = theme_role_name((enum theme_role)i);
        assert_non_null(name);
        assert_int_equal(theme_role_from_name(name), i);
        for (int j = 0; j < i; j++)
            assert_string_not_equal(name, theme_role_name((enum theme_role)j));
    }
    assert_string_equal(theme_role_name(THEME_ROLE_STATE_RUNNING), "state_running");
    assert_string_equal(theme_role_name(THEME_ROLE_BANNER_DISCONNECTED), "banner_disconnected");
    assert_null(theme_role_name(THEME_ROLE_COUNT));
    assert_int_equal(theme_role_from_name("state_runing"), -1);
    assert_int_equal(theme_role_from_name(""), -1);
    assert_true(theme_role_is_state(THEME_ROLE_STATE_QUEUEING));
    assert_true(theme_role_is_state(THEME_ROLE_STATE_DELETING));
    assert_false(theme_role_is_state(THEME_ROLE_SECTION_WARNING));
    assert_false(theme_role_is_state(THEME_ROLE_LOG_ERROR));
}

/* ---- the shipped schemes ---- */

static void test_shipped_schemes_load(void **state)
{
    for (size_t i = 0; i < NSHIPPED; i++) {
        struct theme *t = load_ok(shipped[i]);
        assert_string_equal(theme_name(t), shipped[i]);
        for (int r = 0; r < THEME_ROLE_COUNT; r++) {
            if (!theme_role_defined(t, (enum theme_role)r))
                fail_msg("%s.theme does not set %s", shipped[i],
                         theme_role_name((enum theme_role)r));
        }
        theme_free(t);
    }
}

static void test_default_file_equals_builtin(void **state)
{
    struct theme *file = load_ok("themes/default.theme");
    struct theme *builtin = theme_builtin_default();
    assert_string_equal(theme_name(builtin), "default");
    assert_string_equal(theme_name(file), "default");
    for (int r = 0; r < THEME_ROLE_COUNT; r++) {
        if (!style_eq(theme_style_of(file, (enum theme_role)r),
                      theme_style_of(builtin, (enum theme_role)r)))
            fail_msg("default.theme and the built-in differ on %s",
                     theme_role_name((enum theme_role)r));
        assert_true(theme_role_defined(builtin, (enum theme_role)r));
    }
    /* the same down to the formatted text */
    struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;
    theme_format(file, &a);
    theme_format(builtin, &b);
    assert_string_equal(strbuf_str(&a), strbuf_str(&b));
    strbuf_free(&a);
    strbuf_free(&b);
    theme_free(file);
    theme_free(builtin);
}

static void test_default_without_files(void **state)
{
    /* no directory at all: default and dark are the built-in, others unknown */
    struct strbuf err = STRBUF_INIT;
    struct theme *t = NULL, *builtin = theme_builtin_default();
    assert_int_equal(theme_load("default", NULL, &t, &err), 0);
    assert_string_equal(theme_name(t), "default");
    assert_true(
        style_eq(theme_style_of(t, THEME_ROLE_TITLE), theme_style_of(builtin, THEME_ROLE_TITLE)));
    theme_free(t);
    assert_int_equal(theme_load("dark", NULL, &t, &err), 0);
    assert_string_equal(theme_name(t), "dark");
    assert_true(style_eq(theme_style_of(t, THEME_ROLE_STATE_FAILED),
                         theme_style_of(builtin, THEME_ROLE_STATE_FAILED)));
    theme_free(t);
    t = NULL;
    assert_int_equal(theme_load("light", NULL, &t, &err), -1);
    assert_null(t);
    assert_string_equal(strbuf_str(&err), "theme: unknown scheme 'light'; schemes: default");
    strbuf_free(&err);
    theme_free(builtin);
}

static void test_load_by_path_and_errors(void **state)
{
    struct theme *t = load_ok("themes/light.theme");
    assert_string_equal(theme_name(t), "light");
    theme_free(t);

    struct strbuf err = STRBUF_INIT;
    t = NULL;
    assert_int_equal(theme_load("themes/nosuch.theme", shipped_dirs, &t, &err), -1);
    assert_null(t);
    assert_string_equal(strbuf_str(&err), "themes/nosuch.theme: No such file or directory");

    strbuf_reset(&err);
    assert_int_equal(theme_load("solarised", shipped_dirs, &t, &err), -1);
    assert_string_equal(strbuf_str(&err),
                        "theme: unknown scheme 'solarised' (did you mean solarized?); schemes: "
                        "default, high-contrast, light, mono, solarized");

    strbuf_reset(&err);
    assert_int_equal(theme_load("bad name!", shipped_dirs, &t, &err), -1);
    assert_string_equal(strbuf_str(&err),
                        "theme: bad scheme name 'bad name!': letters, digits, '_', '-', '.'");
    strbuf_reset(&err); /* a name from a config file reaches the screen only sanitized */
    assert_int_equal(theme_load("\x1b]0;title\x07x", shipped_dirs, &t, &err), -1);
    assert_string_equal(strbuf_str(&err),
                        "theme: bad scheme name 'x': letters, digits, '_', '-', '.'");
    strbuf_reset(&err);
    assert_int_equal(theme_load(".hidden", shipped_dirs, &t, &err), -1);
    assert_non_null(strstr(strbuf_str(&err), "bad scheme name"));
    strbuf_free(&err);
}

/* ---- the file format ---- */

static void test_parse_grammar(void **state)
{
    struct theme *t = parse_ok("# a comment\n"
                               "\n"
                               "   # an indented comment\n"
                               "title #FF5f00 black bold underline mono reverse # trailing\r\n"
                               "header 123 default\n"
                               "\tborder\tbrightwhite  italic dim\n"
                               "help none\n"
                               "dim default 255 mono\n"
                               "marked red mono none\n"
                               "normal default default\n"
                               "title  brightred                # the later line wins\n",
                               NULL);
    assert_string_equal(theme_name(t), "t");

    struct theme_style s = theme_style_of(t, THEME_ROLE_TITLE);
    assert_true(color_eq(s.fg, idx(9)));
    assert_int_equal(s.bg.kind, THEME_COLOR_DEFAULT);
    assert_int_equal(s.attrs, 0);
    /* no mono on the later line: the earlier line's (the base's) stays */
    assert_int_equal(s.mono_attrs, THEME_ATTR_REVERSE);

    s = theme_style_of(t, THEME_ROLE_HEADER);
    assert_true(color_eq(s.fg, idx(123)));
    assert_int_equal(s.bg.kind, THEME_COLOR_DEFAULT);
    assert_int_equal(s.attrs, 0);
    /* not given: the built-in's mono attributes */
    struct theme *builtin = theme_builtin_default();
    assert_int_equal(s.mono_attrs, theme_style_of(builtin, THEME_ROLE_HEADER).mono_attrs);

    s = theme_style_of(t, THEME_ROLE_BORDER);
    assert_true(color_eq(s.fg, idx(15)));
    assert_int_equal(s.attrs, THEME_ATTR_ITALIC | THEME_ATTR_DIM);

    s = theme_style_of(t, THEME_ROLE_HELP); /* attributes only: both colours default */
    assert_int_equal(s.fg.kind, THEME_COLOR_DEFAULT);
    assert_int_equal(s.bg.kind, THEME_COLOR_DEFAULT);
    assert_int_equal(s.attrs, 0);

    s = theme_style_of(t, THEME_ROLE_DIM); /* a bare mono clears the mono attributes */
    assert_true(color_eq(s.bg, idx(255)));
    assert_int_equal(s.mono_attrs, 0);
    assert_int_equal(theme_style_of(t, THEME_ROLE_MARKED).mono_attrs, 0);

    /* a file without inherit starts from the built-in; only its own lines count as set */
    assert_true(theme_role_defined(t, THEME_ROLE_TITLE));
    assert_false(theme_role_defined(t, THEME_ROLE_STATE_RUNNING));
    assert_true(style_eq(theme_style_of(t, THEME_ROLE_STATE_RUNNING),
                         theme_style_of(builtin, THEME_ROLE_STATE_RUNNING)));

    /* the first colour of an RGB word */
    theme_free(t);
    t = parse_ok("title #FF5f00 black bold underline mono reverse\n", NULL);
    s = theme_style_of(t, THEME_ROLE_TITLE);
    assert_true(color_eq(s.fg, rgb(0xff, 0x5f, 0x00)));
    assert_true(color_eq(s.bg, idx(0)));
    assert_int_equal(s.attrs, THEME_ATTR_BOLD | THEME_ATTR_UNDERLINE);
    assert_int_equal(s.mono_attrs, THEME_ATTR_REVERSE);
    theme_free(t);

    /* empty text: the built-in, nothing set */
    t = parse_ok("", NULL);
    assert_false(theme_role_defined(t, THEME_ROLE_NORMAL));
    assert_true(
        style_eq(theme_style_of(t, THEME_ROLE_TITLE), theme_style_of(builtin, THEME_ROLE_TITLE)));
    theme_free(t);
    theme_free(builtin);
}

static void test_parse_errors(void **state)
{
    parse_fails("my.theme", "# comment\n\nstate_runing #ff0000\n",
                "my.theme:3: unknown role 'state_runing' (did you mean state_running?)");
    parse_fails("my.theme", "zzzzzz red\n", "my.theme:1: unknown role 'zzzzzz'");
    parse_fails("my.theme", "title #ff5f5 default\n",
                "my.theme:1: title: bad colour '#ff5f5': want #rrggbb");
    parse_fails("my.theme", "title #gg0000\n",
                "my.theme:1: title: bad colour '#gg0000': want #rrggbb");
    parse_fails("my.theme", "title 256\n",
                "my.theme:1: title: bad colour '256': palette index out of range 0..255");
    parse_fails("my.theme", "title 12a\n",
                "my.theme:1: title: bad colour '12a': want a palette index 0..255");
    parse_fails("my.theme", "title gren\n",
                "my.theme:1: title: unknown colour or attribute 'gren' (did you mean green?)");
    parse_fails("my.theme", "title red blod\n",
                "my.theme:1: title: unknown colour or attribute 'blod' (did you mean bold?)");
    parse_fails("my.theme", "title red mono undreline\n",
                "my.theme:1: title: unknown attribute 'undreline' after mono (did you mean "
                "underline?)");
    parse_fails("my.theme", "title red mono red\n",
                "my.theme:1: title: colour 'red' after mono: only attributes go there");
    parse_fails("my.theme", "title bold red\n",
                "my.theme:1: title: colour 'red' after attributes: colours come first");
    parse_fails("my.theme", "title red blue green\n",
                "my.theme:1: title: third colour 'green': a role takes FG and BG only");
    parse_fails("my.theme", "title red mono bold mono\n", "my.theme:1: title: 'mono' given twice");
    parse_fails("my.theme", "title\n", "my.theme:1: title: give colours or attributes (or none)");
    parse_fails("my.theme", "background grey\n", "my.theme:1: background takes dark or light");
    parse_fails("my.theme", "title red\ninherit light\n",
                "my.theme:2: inherit must come before any role");
    parse_fails("my.theme", "inherit\n", "my.theme:1: inherit takes one scheme name");
    parse_fails("my.theme", "inherit ../x\n",
                "my.theme:1: bad scheme name '../x': letters, digits, '_', '-', '.'");
    parse_fails(
        "my.theme",
        "inherit aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n",
        "my.theme:1: bad scheme name 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa…': letters, "
        "digits, '_', '-', '.'");
    parse_fails("my.theme", "inherit lihgt\n",
                "my.theme:1: unknown scheme 'lihgt' (did you mean light?); schemes: default, "
                "high-contrast, light, mono, solarized");
    parse_fails("my.theme",
                "title #ff0000 #00ff00 #0000ff #ffffff #000000 red red red red red "
                "red red red red red red red\n",
                "my.theme:1: more than 16 words");

    /* every bad line is reported, each with its own line; the word is shown safely */
    parse_fails("my.theme", "title red\nstate_runing red\nheader bule\nnormal \x1b[31mx\n",
                "my.theme:2: unknown role 'state_runing' (did you mean state_running?)\n"
                "my.theme:3: header: unknown colour or attribute 'bule' (did you mean blue?)\n"
                "my.theme:4: normal: unknown colour or attribute 'x'");
}

static void test_error_cap(void **state)
{
    struct strbuf text = STRBUF_INIT, err = STRBUF_INIT;
    for (int i = 0; i < 30; i++)
        strbuf_adds(&text, "nosuchrole red\n");
    struct theme *t = NULL;
    assert_int_equal(theme_parse(text.buf, text.len, "x.theme", NULL, &t, &err), -1);
    const char *s = strbuf_str(&err);
    size_t lines = 1;
    for (const char *p = s; *p; p++)
        lines += *p == '\n';
    assert_int_equal(lines, 21);
    assert_non_null(strstr(s, "x.theme:20: unknown role"));
    assert_null(strstr(s, "x.theme:21:"));
    assert_non_null(strstr(s, "\nx.theme: too many errors"));
    strbuf_free(&text);
    strbuf_free(&err);
}

/* ---- inherit ---- */

static void write_file(const char *dir, const char *name, const char *text)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void remove_file(const char *dir, const char *name)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    unlink(path);
}

static void test_inherit(void **state)
{
    char dir[] = "/tmp/test_theme.XXXXXX";
    assert_non_null(mkdtemp(dir));
    const char *const dirs[] = {dir, "themes", NULL};
    write_file(dir, "mine.theme",
               "# mine: light, with a red running state\n"
               "inherit light\n"
               "state_running red default bold\n");
    write_file(dir, "default.theme",
               "inherit default\n" /* the shipped one, not itself */
               "title brightred\n");
    write_file(dir, "loop-a.theme", "inherit loop-b\n");
    write_file(dir, "loop-b.theme", "inherit loop-a\n");
    write_file(dir, "broken.theme", "inherit light\ntitle blod\n");
    write_file(dir, "bad-base.theme", "inherit broken\n");

    struct strbuf err = STRBUF_INIT;
    struct theme *t = NULL, *light = load_ok("light");
    assert_int_equal(theme_load("mine", dirs, &t, &err), 0);
    assert_string_equal(theme_name(t), "mine");
    struct theme_style s = theme_style_of(t, THEME_ROLE_STATE_RUNNING);
    assert_true(color_eq(s.fg, idx(1)));
    assert_int_equal(s.attrs, THEME_ATTR_BOLD);
    /* mono not given: light's stays */
    assert_int_equal(s.mono_attrs, theme_style_of(light, THEME_ROLE_STATE_RUNNING).mono_attrs);
    for (int r = 0; r < THEME_ROLE_COUNT; r++) {
        assert_true(theme_role_defined(t, (enum theme_role)r)); /* light sets them all */
        if (r != THEME_ROLE_STATE_RUNNING)
            assert_true(style_eq(theme_style_of(t, (enum theme_role)r),
                                 theme_style_of(light, (enum theme_role)r)));
    }
    theme_free(t);

    /* the user's default.theme inherits the shipped default.theme */
    struct theme *shipped_default = load_ok("default");
    assert_int_equal(theme_load("default", dirs, &t, &err), 0);
    assert_true(color_eq(theme_style_of(t, THEME_ROLE_TITLE).fg, idx(9)));
    assert_true(style_eq(theme_style_of(t, THEME_ROLE_HEADER),
                         theme_style_of(shipped_default, THEME_ROLE_HEADER)));
    theme_free(t);
    /* … and with no shipped file, the built-in */
    const char *const only_user[] = {dir, NULL};
    assert_int_equal(theme_load("default", only_user, &t, &err), 0);
    assert_true(color_eq(theme_style_of(t, THEME_ROLE_TITLE).fg, idx(9)));
    assert_true(style_eq(theme_style_of(t, THEME_ROLE_HEADER),
                         theme_style_of(shipped_default, THEME_ROLE_HEADER)));
    theme_free(t);
    assert_string_equal(strbuf_str(&err), "");

    /* a cycle */
    t = NULL;
    assert_int_equal(theme_load("loop-a", dirs, &t, &err), -1);
    assert_null(t);
    char want[512];
    snprintf(want, sizeof want,
             "%s/loop-b.theme:1: inherit cycle: %s/loop-a.theme -> %s/loop-b.theme -> loop-a", dir,
             dir, dir);
    assert_string_equal(strbuf_str(&err), want);

    /* an error in the base names the base's file */
    strbuf_reset(&err);
    assert_int_equal(theme_load("bad-base", dirs, &t, &err), -1);
    snprintf(want, sizeof want,
             "%s/broken.theme:2: title: unknown colour or attribute 'blod' (did you mean bold?)",
             dir);
    assert_string_equal(strbuf_str(&err), want);

    /* listing sees the user's schemes and the shipped ones, once each */
    size_t n = 0;
    char **names = theme_list(dirs, &n);
    const char *const want_names[] = {"bad-base", "broken",   "default", "high-contrast",
                                      "light",    "loop-a",   "loop-b",  "mine",
                                      "mono",     "solarized"};
    assert_int_equal(n, sizeof want_names / sizeof want_names[0]);
    for (size_t i = 0; i < n; i++)
        assert_string_equal(names[i], want_names[i]);
    assert_null(names[n]);
    theme_strv_free(names);

    strbuf_free(&err);
    theme_free(light);
    theme_free(shipped_default);
    const char *files[] = {"mine.theme",   "default.theme", "loop-a.theme",
                           "loop-b.theme", "broken.theme",  "bad-base.theme"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
        remove_file(dir, files[i]);
    assert_int_equal(rmdir(dir), 0);
}

static void test_search_dirs(void **state)
{
    /* The user's first; then the checkout above this test binary (build/tests/), by its
     * absolute path: never the current directory. */
    char **d = theme_search_dirs("/home/u/.config/trainjob");
    assert_string_equal(d[0], "/home/u/.config/trainjob/themes");
    assert_non_null(d[1]);
    bool has_shipped = false;
    for (size_t i = 1; d[i]; i++) {
        assert_true(d[i][0] == '/');
        char *f = xasprintf("%s/solarized.theme", d[i]);
        has_shipped = has_shipped || access(f, R_OK) == 0;
        free(f);
    }
    assert_true(has_shipped);
    theme_strv_free(d);
    d = theme_search_dirs(NULL);
    assert_non_null(d[0]);
    assert_true(d[0][0] == '/');
    theme_strv_free(d);
}

/* ---- format ---- */

static void test_format_round_trip(void **state)
{
    for (size_t i = 0; i < NSHIPPED; i++) {
        struct theme *t = load_ok(shipped[i]);
        struct strbuf text = STRBUF_INIT;
        theme_format(t, &text);
        struct theme *back = parse_ok(strbuf_str(&text), NULL);
        for (int r = 0; r < THEME_ROLE_COUNT; r++) {
            assert_true(theme_role_defined(back, (enum theme_role)r));
            if (!style_eq(theme_style_of(t, (enum theme_role)r),
                          theme_style_of(back, (enum theme_role)r)))
                fail_msg("%s: %s does not survive format", shipped[i],
                         theme_role_name((enum theme_role)r));
        }
        /* light's `background light` survives too: its dim text resolves the same */
        for (size_t d = 0; d < sizeof all_depths / sizeof all_depths[0]; d++)
            for (int r = 0; r < THEME_ROLE_COUNT; r++)
                assert_true(style_eq(theme_resolve(t, (enum theme_role)r, all_depths[d]),
                                     theme_resolve(back, (enum theme_role)r, all_depths[d])));
        strbuf_free(&text);
        theme_free(t);
        theme_free(back);
    }
    struct theme *t = parse_ok("title 42 brightcyan\n", NULL);
    struct strbuf text = STRBUF_INIT;
    theme_format(t, &text);
    assert_non_null(strstr(strbuf_str(&text), "\ntitle 42 brightcyan mono bold\n"));
    assert_non_null(strstr(strbuf_str(&text), "\nnormal default default mono none\n"));
    assert_non_null(strstr(strbuf_str(&text), "\nstate_failed #ff5f5f default bold mono bold "
                                              "reverse\n"));
    strbuf_free(&text);
    theme_free(t);
}

/* ---- depth ---- */

static void test_detect_depth(void **state)
{
    static const struct {
        const char *term, *colorterm;
        int colors;
        const char *no_color;
        enum theme_depth want;
    } cases[] = {
        {"xterm-256color", "truecolor", 256, NULL, THEME_DEPTH_TRUECOLOR},
        {"xterm-256color", "24bit", 256, NULL, THEME_DEPTH_TRUECOLOR},
        {"xterm-256color", "TrueColor", 256, "", THEME_DEPTH_TRUECOLOR}, /* empty NO_COLOR */
        {"xterm-256color", "truecolor", 256, "1", THEME_DEPTH_MONO},
        {"xterm-256color", NULL, 256, "anything", THEME_DEPTH_MONO},
        {"xterm-256color", NULL, 256, NULL, THEME_DEPTH_256},
        {"xterm-256color", "yes", 256, NULL, THEME_DEPTH_256},
        {"tmux-256color", "", 256, NULL, THEME_DEPTH_256},
        {"xterm-direct", NULL, 16777216, NULL, THEME_DEPTH_TRUECOLOR},
        {"screen", "truecolor", 8, NULL, THEME_DEPTH_8}, /* curses cannot show more */
        {"xterm-16color", NULL, 16, NULL, THEME_DEPTH_16},
        {"rxvt", NULL, 88, NULL, THEME_DEPTH_16},
        {"xterm", NULL, 8, NULL, THEME_DEPTH_8},
        {"linux", NULL, 8, NULL, THEME_DEPTH_8},
        {"vt100", NULL, -1, NULL, THEME_DEPTH_MONO}, /* no colour support */
        {"vt220", NULL, 0, NULL, THEME_DEPTH_MONO},
        {"weird", NULL, 2, NULL, THEME_DEPTH_MONO},
        {"dumb", NULL, 256, NULL, THEME_DEPTH_MONO},
        {"", NULL, 256, NULL, THEME_DEPTH_MONO},
        {NULL, NULL, 256, NULL, THEME_DEPTH_MONO},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        enum theme_depth got = theme_detect_depth(cases[i].term, cases[i].colorterm,
                                                  cases[i].colors, cases[i].no_color);
        if (got != cases[i].want)
            fail_msg("case %zu (%s, %s, %d): got %s, want %s", i,
                     cases[i].term ? cases[i].term : "NULL",
                     cases[i].colorterm ? cases[i].colorterm : "NULL", cases[i].colors,
                     theme_depth_name(got), theme_depth_name(cases[i].want));
    }
}

static void test_depth_names(void **state)
{
    for (size_t i = 0; i < sizeof all_depths / sizeof all_depths[0]; i++)
        assert_int_equal(theme_depth_parse(theme_depth_name(all_depths[i])), all_depths[i]);
    assert_string_equal(theme_depth_name(THEME_DEPTH_256), "256");
    assert_int_equal(theme_depth_parse("24bit"), THEME_DEPTH_TRUECOLOR);
    assert_int_equal(theme_depth_parse("TRUECOLOR"), THEME_DEPTH_TRUECOLOR);
    assert_int_equal(theme_depth_parse("88"), -1);
}

/* ---- colour arithmetic ---- */

static void test_rgb_to_256(void **state)
{
    assert_int_equal(theme_rgb_to_256(0x00, 0x00, 0x00), 16);
    assert_int_equal(theme_rgb_to_256(0xff, 0xff, 0xff), 231);
    /* 128 grey: grey 244 is (128,128,128) exactly; the nearest cube entry, 102, is (135,135,135) */
    assert_int_equal(theme_rgb_to_256(0x80, 0x80, 0x80), 244);
    assert_int_equal(theme_rgb_to_256(0x7f, 0x7f, 0x7f), 244);
    assert_int_equal(theme_rgb_to_256(0xff, 0x00, 0x00), 196);
    assert_int_equal(theme_rgb_to_256(0xff, 0x5f, 0x5f), 203);
    assert_int_equal(theme_rgb_to_256(0x5f, 0x87, 0xaf), 67);
    assert_int_equal(theme_rgb_to_256(0x87, 0x87, 0x87), 102); /* an exact cube grey */
    assert_int_equal(theme_rgb_to_256(0x08, 0x08, 0x08), 232);
    assert_int_equal(theme_rgb_to_256(0xee, 0xee, 0xee), 255);
    assert_int_equal(theme_rgb_to_256(0x03, 0x03, 0x03), 16); /* black is nearer than grey 8 */
    assert_int_equal(theme_rgb_to_256(0x05, 0x05, 0x05), 232);
    /* solarized base03 (0,43,54): cube 17 (0,0,95) is at 43²+41² = 3530, grey 28 (234) at
     * 28²+15²+26² = 1685, grey 38 (235) at 38²+5²+16² = 1725 */
    assert_int_equal(theme_rgb_to_256(0x00, 0x2b, 0x36), 234);
    /* the cube's uneven first step: 47 → level 0, 48 → level 1 (95) */
    assert_int_equal(theme_rgb_to_256(47, 0, 255), 21);
    assert_int_equal(theme_rgb_to_256(48, 0, 255), 57);
    /* (47,0,0) is nearer grey 18 (29²+18²+18²) than black (47²) */
    assert_int_equal(theme_rgb_to_256(47, 0, 0), 233);
    /* every palette entry from 16 up maps back to itself */
    for (int i = 16; i < 256; i++) {
        uint8_t r, g, b;
        theme_index_rgb(i, &r, &g, &b);
        assert_int_equal(theme_rgb_to_256(r, g, b), i);
    }
}

/* Brute force over the whole palette entries 16–255: the nearest really is the nearest. */
static void test_rgb_to_256_is_nearest(void **state)
{
    for (int r = 0; r < 256; r += 5) {
        for (int g = 0; g < 256; g += 7) {
            for (int b = 0; b < 256; b += 11) {
                int got = theme_rgb_to_256((uint8_t)r, (uint8_t)g, (uint8_t)b);
                uint8_t pr, pg, pb;
                theme_index_rgb(got, &pr, &pg, &pb);
                int got_d = (r - pr) * (r - pr) + (g - pg) * (g - pg) + (b - pb) * (b - pb);
                for (int i = 16; i < 256; i++) {
                    theme_index_rgb(i, &pr, &pg, &pb);
                    int d = (r - pr) * (r - pr) + (g - pg) * (g - pg) + (b - pb) * (b - pb);
                    if (d < got_d)
                        fail_msg("(%d,%d,%d): got %d at %d, %d is at %d", r, g, b, got, got_d, i,
                                 d);
                }
            }
        }
    }
}

static void test_256_to_16(void **state)
{
    for (int i = 0; i < 16; i++)
        assert_int_equal(theme_256_to_16(i), i);
    assert_int_equal(theme_256_to_16(16), 0);   /* black */
    assert_int_equal(theme_256_to_16(231), 15); /* white */
    assert_int_equal(theme_256_to_16(196), 9);  /* (255,0,0) bright red */
    assert_int_equal(theme_256_to_16(160), 1);  /* (215,0,0): nearer red 205 than 255 */
    assert_int_equal(theme_256_to_16(46), 10);  /* (0,255,0) */
    assert_int_equal(theme_256_to_16(21), 12);  /* (0,0,255): full intensity, bright blue */
    assert_int_equal(theme_256_to_16(19), 4);   /* (0,0,175) */
    assert_int_equal(theme_256_to_16(244), 8);  /* grey 128 → bright black 127 */
    assert_int_equal(theme_256_to_16(254), 7);  /* grey 228 → white 229 */
    assert_int_equal(theme_256_to_16(232), 0);  /* grey 8 → black */
    assert_int_equal(theme_256_to_16(226), 11); /* (255,255,0) */
    assert_int_equal(theme_256_to_16(203), 9);  /* (255,95,95) */
    assert_int_equal(theme_rgb_to_16(0xff, 0x5f, 0x5f), 9);
    assert_int_equal(theme_rgb_to_16(0, 0, 0), 0);
    /* hue first: a pastel green is green, not the grey RGB distance would pick */
    assert_int_equal(theme_rgb_to_16(0x5f, 0xd7, 0x5f), 10);
    assert_int_equal(theme_rgb_to_16(0x00, 0x87, 0x00), 2);
    assert_int_equal(theme_rgb_to_16(0xff, 0xaf, 0x00), 11); /* orange → bright yellow */
    assert_int_equal(theme_rgb_to_16(0xaf, 0x5f, 0x00), 3);  /* brown → yellow */
    assert_int_equal(theme_rgb_to_16(0x87, 0xd7, 0xff), 14); /* sky blue → bright cyan */
    assert_int_equal(theme_rgb_to_16(0xd7, 0xaf, 0xff), 13); /* lavender → bright magenta */
    assert_int_equal(theme_rgb_to_16(0x07, 0x36, 0x42), 0);  /* very dark → black */
    assert_int_equal(theme_rgb_to_16(0x58, 0x6e, 0x75), 8);  /* greyish → bright black */
    assert_int_equal(theme_rgb_to_16(0xd0, 0xd0, 0xd0), 7);
    assert_int_equal(theme_rgb_to_16(0xf8, 0xf8, 0xf8), 15);
    /* xterm's own 16 colours map to themselves */
    for (int i = 0; i < 16; i++) {
        uint8_t r, g, b;
        theme_index_rgb(i, &r, &g, &b);
        assert_int_equal(theme_rgb_to_16(r, g, b), i);
    }
    for (int i = 0; i < 256; i++) {
        int c = theme_256_to_16(i);
        assert_in_range(c, 0, 15);
    }
}

static void test_16_to_8(void **state)
{
    bool bright;
    for (int i = 0; i < 8; i++) {
        assert_int_equal(theme_16_to_8(i, &bright), i);
        assert_false(bright);
        assert_int_equal(theme_16_to_8(i + 8, &bright), i);
        assert_true(bright);
    }
    assert_int_equal(theme_16_to_8(9, NULL), 1);
}

static void test_index_rgb(void **state)
{
    uint8_t r, g, b;
    theme_index_rgb(1, &r, &g, &b);
    assert_true(r == 205 && g == 0 && b == 0);
    theme_index_rgb(16, &r, &g, &b);
    assert_true(r == 0 && g == 0 && b == 0);
    theme_index_rgb(67, &r, &g, &b);
    assert_true(r == 0x5f && g == 0x87 && b == 0xaf);
    theme_index_rgb(231, &r, &g, &b);
    assert_true(r == 255 && g == 255 && b == 255);
    theme_index_rgb(232, &r, &g, &b);
    assert_true(r == 8 && g == 8 && b == 8);
    theme_index_rgb(255, &r, &g, &b);
    assert_true(r == 238 && g == 238 && b == 238);
}

/* ---- resolve ---- */

static void test_resolve_depths(void **state)
{
    struct theme *t = theme_builtin_default();
    /* state_failed: #ff5f5f default bold, mono bold reverse */
    struct theme_style s = theme_resolve(t, THEME_ROLE_STATE_FAILED, THEME_DEPTH_TRUECOLOR);
    assert_true(color_eq(s.fg, rgb(0xff, 0x5f, 0x5f)));
    assert_int_equal(s.bg.kind, THEME_COLOR_DEFAULT);
    assert_int_equal(s.attrs, THEME_ATTR_BOLD);
    s = theme_resolve(t, THEME_ROLE_STATE_FAILED, THEME_DEPTH_256);
    assert_true(color_eq(s.fg, idx(203)));
    s = theme_resolve(t, THEME_ROLE_STATE_FAILED, THEME_DEPTH_16);
    assert_true(color_eq(s.fg, idx(9)));
    assert_int_equal(s.attrs, THEME_ATTR_BOLD);
    s = theme_resolve(t, THEME_ROLE_STATE_FAILED, THEME_DEPTH_8);
    assert_true(color_eq(s.fg, idx(1)));
    assert_int_equal(s.attrs, THEME_ATTR_BOLD);
    s = theme_resolve(t, THEME_ROLE_STATE_FAILED, THEME_DEPTH_MONO);
    assert_int_equal(s.fg.kind, THEME_COLOR_DEFAULT);
    assert_int_equal(s.bg.kind, THEME_COLOR_DEFAULT);
    assert_int_equal(s.attrs, THEME_ATTR_BOLD | THEME_ATTR_REVERSE);

    /* state_succeeded #5fd75f: 16 → bright green; 8 → green, no bold: no role is plain green */
    s = theme_resolve(t, THEME_ROLE_STATE_SUCCEEDED, THEME_DEPTH_16);
    assert_true(color_eq(s.fg, idx(10)));
    assert_int_equal(s.attrs, 0);
    s = theme_resolve(t, THEME_ROLE_STATE_SUCCEEDED, THEME_DEPTH_8);
    assert_true(color_eq(s.fg, idx(2)));
    assert_int_equal(s.attrs, 0);
    /* grey at 8 colours: dim white on the dark background */
    s = theme_resolve(t, THEME_ROLE_STATE_QUEUEING, THEME_DEPTH_8);
    assert_true(color_eq(s.fg, idx(7)));
    assert_int_equal(s.attrs, THEME_ATTR_DIM);
    theme_free(t);

    /* at 8 colours bold keeps bright green apart from a green another role uses */
    t = parse_ok("field_ok green\nstate_succeeded brightgreen\nstate_failed brightred\n"
                 "dim brightblack default bold\n",
                 NULL);
    s = theme_resolve(t, THEME_ROLE_STATE_SUCCEEDED, THEME_DEPTH_8);
    assert_true(color_eq(s.fg, idx(2)));
    assert_int_equal(s.attrs, THEME_ATTR_BOLD);
    s = theme_resolve(t, THEME_ROLE_FIELD_OK, THEME_DEPTH_8);
    assert_true(color_eq(s.fg, idx(2)));
    assert_int_equal(s.attrs, 0);
    s = theme_resolve(t, THEME_ROLE_STATE_SUCCEEDED, THEME_DEPTH_16);
    assert_true(color_eq(s.fg, idx(10)));
    assert_int_equal(s.attrs, 0);
    /* a grey that is bold stays bold, not bold and dim */
    s = theme_resolve(t, THEME_ROLE_DIM, THEME_DEPTH_8);
    assert_true(color_eq(s.fg, idx(7)));
    assert_int_equal(s.attrs, THEME_ATTR_BOLD);
    theme_free(t);

    /* explicit palette indices stay at truecolor; "default" takes normal's colour */
    t = parse_ok("normal #102030 #000080\nstate_running 33 default\nhelp default 9\n", NULL);
    s = theme_resolve(t, THEME_ROLE_STATE_RUNNING, THEME_DEPTH_TRUECOLOR);
    assert_true(color_eq(s.fg, idx(33)));
    assert_true(color_eq(s.bg, rgb(0, 0, 0x80)));
    s = theme_resolve(t, THEME_ROLE_STATE_RUNNING, THEME_DEPTH_256);
    assert_true(color_eq(s.fg, idx(33)));
    assert_true(color_eq(s.bg, idx(theme_rgb_to_256(0, 0, 0x80))));
    s = theme_resolve(t, THEME_ROLE_HELP, THEME_DEPTH_TRUECOLOR);
    assert_true(color_eq(s.fg, rgb(0x10, 0x20, 0x30)));
    assert_true(color_eq(s.bg, idx(9)));
    s = theme_resolve(t, THEME_ROLE_HELP, THEME_DEPTH_8);
    assert_true(color_eq(s.bg, idx(1))); /* a bright background just loses its brightness */
    theme_free(t);
}

static void test_resolve_collisions(void **state)
{
    /* a dark grey on the (dark) terminal background: black at 16 colours; shown the mono way */
    struct theme *t = parse_ok("normal default default\n"
                               "dim #303030 default mono dim\n"
                               "selected #000000 #303030 mono reverse\n"
                               "header #000000 #000000 bold mono bold\n",
                               NULL);
    struct theme_style s = theme_resolve(t, THEME_ROLE_DIM, THEME_DEPTH_16);
    assert_int_equal(s.fg.kind, THEME_COLOR_DEFAULT);
    assert_int_equal(s.bg.kind, THEME_COLOR_DEFAULT);
    assert_int_equal(s.attrs, THEME_ATTR_DIM);
    s = theme_resolve(t, THEME_ROLE_DIM, THEME_DEPTH_256); /* still grey 236 here */
    assert_true(color_eq(s.fg, idx(236)));
    assert_int_equal(s.attrs, 0);
    s = theme_resolve(t, THEME_ROLE_SELECTED, THEME_DEPTH_8);
    assert_int_equal(s.fg.kind, THEME_COLOR_DEFAULT);
    assert_int_equal(s.attrs, THEME_ATTR_REVERSE);
    /* the scheme said the same colour twice: left alone */
    s = theme_resolve(t, THEME_ROLE_HEADER, THEME_DEPTH_16);
    assert_true(color_eq(s.fg, idx(0)) && color_eq(s.bg, idx(0)));
    theme_free(t);

    /* a light background: a near-white foreground is what vanishes */
    t = parse_ok("background light\ndim #f8f8f8 default mono dim\ntitle #000000 default\n", NULL);
    s = theme_resolve(t, THEME_ROLE_DIM, THEME_DEPTH_16);
    assert_int_equal(s.fg.kind, THEME_COLOR_DEFAULT);
    assert_int_equal(s.attrs, THEME_ATTR_DIM);
    s = theme_resolve(t, THEME_ROLE_TITLE, THEME_DEPTH_16);
    assert_true(color_eq(s.fg, idx(0)));
    theme_free(t);

    /* solarized's normal: grey on black at 16, dim white on black at 8 */
    t = parse_ok("normal #839496 #002b36\n", NULL);
    s = theme_resolve(t, THEME_ROLE_NORMAL, THEME_DEPTH_16);
    assert_true(color_eq(s.fg, idx(8)) && color_eq(s.bg, idx(0)));
    s = theme_resolve(t, THEME_ROLE_NORMAL, THEME_DEPTH_8);
    assert_true(color_eq(s.fg, idx(7)) && color_eq(s.bg, idx(0)));
    assert_int_equal(s.attrs, THEME_ATTR_DIM);
    /* a role with default colours is exactly normal, dim included */
    s = theme_resolve(t, THEME_ROLE_FIELD_VALUE, THEME_DEPTH_8);
    assert_true(color_eq(s.fg, idx(7)) && color_eq(s.bg, idx(0)));
    assert_int_equal(s.attrs, THEME_ATTR_DIM);
    theme_free(t);

    /* normal itself lost in its background: white (or black on a light one) */
    t = parse_ok("normal #303030 #000000\n", NULL);
    s = theme_resolve(t, THEME_ROLE_NORMAL, THEME_DEPTH_16);
    assert_true(color_eq(s.fg, idx(15)) && color_eq(s.bg, idx(0)));
    s = theme_resolve(t, THEME_ROLE_NORMAL, THEME_DEPTH_8);
    assert_true(color_eq(s.fg, idx(7)) && color_eq(s.bg, idx(0)));
    s = theme_resolve(t, THEME_ROLE_NORMAL, THEME_DEPTH_256);
    assert_true(color_eq(s.fg, idx(236)) && color_eq(s.bg, idx(16)));
    theme_free(t);
    t = parse_ok("normal #f8f8f8 #ffffff\n", NULL);
    s = theme_resolve(t, THEME_ROLE_NORMAL, THEME_DEPTH_16);
    assert_true(color_eq(s.fg, idx(0)) && color_eq(s.bg, idx(15)));
    theme_free(t);

    /* a background merged into normal's: the mono attributes mark the role */
    t = parse_ok("normal #839496 #002b36\nheader #93a1a1 #073642 bold mono bold underline\n", NULL);
    s = theme_resolve(t, THEME_ROLE_HEADER, THEME_DEPTH_16);
    assert_true(color_eq(s.bg, idx(0)));
    assert_int_equal(s.attrs, THEME_ATTR_BOLD | THEME_ATTR_UNDERLINE);
    s = theme_resolve(t, THEME_ROLE_HEADER, THEME_DEPTH_256);
    assert_int_equal(s.attrs, THEME_ATTR_BOLD);
    theme_free(t);
}

/* The background text in style s stands on, as an index, or -1 when unknown. */
static int effective_bg(struct theme_style s, bool light, enum theme_depth d)
{
    if (s.bg.kind == THEME_COLOR_INDEX)
        return s.bg.index;
    if (d != THEME_DEPTH_8 && d != THEME_DEPTH_16)
        return -1;
    return light ? (d == THEME_DEPTH_8 ? 7 : 15) : 0;
}

/* No role of a shipped scheme is written in its own background at 8 or 16 colours. */
static void test_no_invisible_text(void **state)
{
    for (size_t i = 0; i < NSHIPPED; i++) {
        struct theme *t = load_ok(shipped[i]);
        bool light = strcmp(shipped[i], "light") == 0;
        for (size_t d = 1; d < 3; d++) {
            for (int r = 0; r < THEME_ROLE_COUNT; r++) {
                struct theme_style s = theme_resolve(t, (enum theme_role)r, all_depths[d]);
                if (s.fg.kind == THEME_COLOR_INDEX) {
                    assert_in_range(s.fg.index, 0, all_depths[d] == THEME_DEPTH_8 ? 7 : 15);
                    if (s.fg.index == effective_bg(s, light, all_depths[d]))
                        fail_msg("%s: %s invisible at %s colours", shipped[i],
                                 theme_role_name((enum theme_role)r),
                                 theme_depth_name(all_depths[d]));
                }
                if (s.bg.kind == THEME_COLOR_INDEX)
                    assert_in_range(s.bg.index, 0, all_depths[d] == THEME_DEPTH_8 ? 7 : 15);
            }
        }
        theme_free(t);
    }
}

/* The cursor row, marked rows and search hits stand out from normal text at every depth. */
static void test_highlights_visible(void **state)
{
    const enum theme_role roles[] = {THEME_ROLE_SELECTED, THEME_ROLE_LOG_MATCH,
                                     THEME_ROLE_BANNER_DISCONNECTED, THEME_ROLE_FIELD_FOCUS,
                                     THEME_ROLE_MARKED};
    for (size_t i = 0; i < NSHIPPED; i++) {
        struct theme *t = load_ok(shipped[i]);
        for (size_t d = 0; d < sizeof all_depths / sizeof all_depths[0]; d++) {
            struct theme_style n = theme_resolve(t, THEME_ROLE_NORMAL, all_depths[d]);
            for (size_t r = 0; r < sizeof roles / sizeof roles[0]; r++) {
                struct theme_style s = theme_resolve(t, roles[r], all_depths[d]);
                if (style_eq(s, n) ||
                    (color_eq(s.fg, n.fg) && color_eq(s.bg, n.bg) && s.attrs == n.attrs))
                    fail_msg("%s: %s looks like normal at %s", shipped[i],
                             theme_role_name(roles[r]), theme_depth_name(all_depths[d]));
            }
        }
        theme_free(t);
    }
}

/* ---- states without colour ---- */

static void test_states_distinct_in_mono(void **state)
{
    for (size_t i = 0; i < NSHIPPED; i++) {
        struct theme *t = load_ok(shipped[i]);
        for (int a = THEME_ROLE_FIRST_STATE; a <= THEME_ROLE_LAST_STATE; a++) {
            for (int b = THEME_ROLE_FIRST_STATE; b < a; b++) {
                struct theme_style sa = theme_resolve(t, (enum theme_role)a, THEME_DEPTH_MONO);
                struct theme_style sb = theme_resolve(t, (enum theme_role)b, THEME_DEPTH_MONO);
                if (sa.attrs == sb.attrs)
                    fail_msg("%s: %s and %s look alike without colour", shipped[i],
                             theme_role_name((enum theme_role)a),
                             theme_role_name((enum theme_role)b));
            }
        }
        theme_free(t);
    }
    /* mono.theme looks the same on a colour terminal */
    struct theme *t = load_ok("mono");
    for (int r = 0; r < THEME_ROLE_COUNT; r++) {
        for (size_t d = 0; d < sizeof all_depths / sizeof all_depths[0]; d++) {
            struct theme_style s = theme_resolve(t, (enum theme_role)r, all_depths[d]);
            assert_int_equal(s.fg.kind, THEME_COLOR_DEFAULT);
            assert_int_equal(s.bg.kind, THEME_COLOR_DEFAULT);
            assert_int_equal(s.attrs, theme_style_of(t, (enum theme_role)r).mono_attrs);
        }
    }
    theme_free(t);
}

static void test_state_icons(void **state)
{
    for (int u = 0; u < 2; u++) {
        for (int a = THEME_ROLE_FIRST_STATE; a <= THEME_ROLE_LAST_STATE; a++) {
            const char *ia = theme_state_icon((enum theme_role)a, u);
            assert_non_null(ia);
            assert_true(utf8_valid(ia, strlen(ia)));
            assert_int_equal(utf8_width(ia, strlen(ia)), 1); /* one cell, CJK locales too */
            if (!u) {
                assert_int_equal(strlen(ia), 1);
                assert_true(ia[0] > ' ' && ia[0] < 0x7f);
            }
            for (int b = THEME_ROLE_FIRST_STATE; b < a; b++)
                assert_string_not_equal(ia, theme_state_icon((enum theme_role)b, u));
        }
        assert_null(theme_state_icon(THEME_ROLE_NORMAL, u));
        assert_null(theme_state_icon(THEME_ROLE_LOG_ERROR, u));
        assert_null(theme_state_icon(THEME_ROLE_COUNT, u));
    }
    assert_string_equal(theme_state_icon(THEME_ROLE_STATE_RUNNING, false), ">");
    assert_string_equal(theme_state_icon(THEME_ROLE_STATE_FAILED, false), "x");
    assert_string_equal(theme_state_icon(THEME_ROLE_STATE_SUCCEEDED, false), "+");
    assert_string_equal(theme_state_icon(THEME_ROLE_STATE_FAILED, true), "\u2717");
    assert_string_equal(theme_state_icon(THEME_ROLE_STATE_SUCCEEDED, true), "\u2713");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_role_names),
        cmocka_unit_test(test_shipped_schemes_load),
        cmocka_unit_test(test_default_file_equals_builtin),
        cmocka_unit_test(test_default_without_files),
        cmocka_unit_test(test_load_by_path_and_errors),
        cmocka_unit_test(test_parse_grammar),
        cmocka_unit_test(test_parse_errors),
        cmocka_unit_test(test_error_cap),
        cmocka_unit_test(test_inherit),
        cmocka_unit_test(test_search_dirs),
        cmocka_unit_test(test_format_round_trip),
        cmocka_unit_test(test_detect_depth),
        cmocka_unit_test(test_depth_names),
        cmocka_unit_test(test_rgb_to_256),
        cmocka_unit_test(test_rgb_to_256_is_nearest),
        cmocka_unit_test(test_256_to_16),
        cmocka_unit_test(test_16_to_8),
        cmocka_unit_test(test_index_rgb),
        cmocka_unit_test(test_resolve_depths),
        cmocka_unit_test(test_resolve_collisions),
        cmocka_unit_test(test_no_invisible_text),
        cmocka_unit_test(test_highlights_visible),
        cmocka_unit_test(test_states_distinct_in_mono),
        cmocka_unit_test(test_state_icons),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
