/*
 * theme: see theme.h. This file owns the role and colour name tables, the
 * scheme parser and loader (the compiled-in default goes through the same
 * parser as the user's files, as dte does), formatting a theme back to text,
 * and where schemes live. The colour arithmetic that brings a style down to
 * the terminal's depth is theme_color.c's. Called by the tui at start-up, on
 * :theme, and whenever it sets up colour pairs; by nothing below it.
 */
#include "themes/theme.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "themes/theme_priv.h"
#include "util/buildinfo.h"
#include "util/fileio.h"
#include "util/fuzzy.h"
#include "util/strbuf.h"
#include "util/utf8.h"
#include "util/xalloc.h"

#define THEME_MAX_FILE (256 * 1024) /* a scheme is a few KiB */
#define THEME_MAX_DEPTH 8           /* inherit chain */
#define THEME_MAX_ERRORS 20         /* per load; then "too many errors" */
#define THEME_MAX_WORDS 16          /* per line */
#define THEME_MAX_NAME 64

static const char *const role_names[THEME_ROLE_COUNT] = {
    [THEME_ROLE_NORMAL] = "normal",
    [THEME_ROLE_DIM] = "dim",
    [THEME_ROLE_TITLE] = "title",
    [THEME_ROLE_HEADER] = "header",
    [THEME_ROLE_SELECTED] = "selected",
    [THEME_ROLE_MARKED] = "marked",
    [THEME_ROLE_BORDER] = "border",
    [THEME_ROLE_KEYBAR_KEY] = "keybar_key",
    [THEME_ROLE_KEYBAR_LABEL] = "keybar_label",
    [THEME_ROLE_HELP] = "help",
    [THEME_ROLE_DIALOG] = "dialog",
    [THEME_ROLE_MESSAGE] = "message",
    [THEME_ROLE_MESSAGE_ERROR] = "message_error",
    [THEME_ROLE_FIELD_LABEL] = "field_label",
    [THEME_ROLE_FIELD_VALUE] = "field_value",
    [THEME_ROLE_FIELD_FOCUS] = "field_focus",
    [THEME_ROLE_FIELD_DISABLED] = "field_disabled",
    [THEME_ROLE_FIELD_ERROR] = "field_error",
    [THEME_ROLE_FIELD_WARNING] = "field_warning",
    [THEME_ROLE_FIELD_OK] = "field_ok",
    [THEME_ROLE_SECTION_OK] = "section_ok",
    [THEME_ROLE_SECTION_ERROR] = "section_error",
    [THEME_ROLE_SECTION_WARNING] = "section_warning",
    [THEME_ROLE_STATE_QUEUEING] = "state_queueing",
    [THEME_ROLE_STATE_STARTING] = "state_starting",
    [THEME_ROLE_STATE_RUNNING] = "state_running",
    [THEME_ROLE_STATE_RESTARTING] = "state_restarting",
    [THEME_ROLE_STATE_SUSPENDING] = "state_suspending",
    [THEME_ROLE_STATE_SUSPENDED] = "state_suspended",
    [THEME_ROLE_STATE_SUCCEEDED] = "state_succeeded",
    [THEME_ROLE_STATE_FAILED] = "state_failed",
    [THEME_ROLE_STATE_DELETING] = "state_deleting",
    [THEME_ROLE_LOG_ERROR] = "log_error",
    [THEME_ROLE_LOG_WARNING] = "log_warning",
    [THEME_ROLE_LOG_MATCH] = "log_match",
    [THEME_ROLE_BANNER_DISCONNECTED] = "banner_disconnected",
    [THEME_ROLE_SIMULATED] = "simulated",
};

/* Icons by state, ASCII and UTF-8 (every glyph one cell, East Asian width N). */
static const char *const state_icons[][2] = {
    [THEME_ROLE_STATE_QUEUEING - THEME_ROLE_FIRST_STATE] = {".", "\u22ef"},   /* ⋯ */
    [THEME_ROLE_STATE_STARTING - THEME_ROLE_FIRST_STATE] = {"^", "\u25b9"},   /* ▹ */
    [THEME_ROLE_STATE_RUNNING - THEME_ROLE_FIRST_STATE] = {">", "\u25b8"},    /* ▸ */
    [THEME_ROLE_STATE_RESTARTING - THEME_ROLE_FIRST_STATE] = {"~", "\u21bb"}, /* ↻ */
    [THEME_ROLE_STATE_SUSPENDING - THEME_ROLE_FIRST_STATE] = {":", "\u25ab"}, /* ▫ */
    [THEME_ROLE_STATE_SUSPENDED - THEME_ROLE_FIRST_STATE] = {"=", "\u25aa"},  /* ▪ */
    [THEME_ROLE_STATE_SUCCEEDED - THEME_ROLE_FIRST_STATE] = {"+", "\u2713"},  /* ✓ */
    [THEME_ROLE_STATE_FAILED - THEME_ROLE_FIRST_STATE] = {"x", "\u2717"},     /* ✗ */
    [THEME_ROLE_STATE_DELETING - THEME_ROLE_FIRST_STATE] = {"-", "\u2298"},   /* ⊘ */
};

/* The 16 ANSI colour names, by index. */
static const char *const color_names[16] = {
    "black",      "red",           "green",       "yellow",      "blue",        "magenta",
    "cyan",       "white",         "brightblack", "brightred",   "brightgreen", "brightyellow",
    "brightblue", "brightmagenta", "brightcyan",  "brightwhite",
};

static const struct {
    const char *name;
    unsigned bit;
} attr_names[] = {
    {"bold", THEME_ATTR_BOLD},           {"dim", THEME_ATTR_DIM},
    {"underline", THEME_ATTR_UNDERLINE}, {"reverse", THEME_ATTR_REVERSE},
    {"italic", THEME_ATTR_ITALIC},       {"none", 0},
};
#define ATTR_NAME_COUNT (sizeof attr_names / sizeof attr_names[0])

/* The words that may follow a role, for "did you mean": all of them, and those after mono. */
static const char *const value_words[] = {
    "default",      "black",      "red",           "green",       "yellow",      "blue",
    "magenta",      "cyan",       "white",         "brightblack", "brightred",   "brightgreen",
    "brightyellow", "brightblue", "brightmagenta", "brightcyan",  "brightwhite", "bold",
    "dim",          "underline",  "reverse",       "italic",      "none",        "mono",
};
#define VALUE_WORD_COUNT (sizeof value_words / sizeof value_words[0])
static const char *const *const mono_words = value_words + 17; /* "bold" … "mono" */
#define MONO_WORD_COUNT (VALUE_WORD_COUNT - 17)

/*
 * The built-in scheme: themes/default.theme without its comments. Parsed by
 * the same code as every file; test_theme checks the two give the same theme.
 */
static const char builtin_default_text[] =
    "normal              default default                    mono none\n"
    "dim                 #8a8a8a default                    mono dim\n"
    "title               #87afff default bold               mono bold\n"
    "header              #d0d0d0 #303030 bold               mono bold underline\n"
    "selected            #ffffff #005f87                    mono reverse\n"
    "marked              #ffd75f default bold               mono bold\n"
    "border              #585858 default                    mono none\n"
    "keybar_key          #000000 #5fafd7 bold               mono reverse\n"
    "keybar_label        #bcbcbc #262626                    mono none\n"
    "help                #d0d0d0 default                    mono none\n"
    "dialog              #d0d0d0 #262626                    mono none\n"
    "message             #d0d0d0 default                    mono none\n"
    "message_error       #ffffff #af0000 bold               mono bold reverse\n"
    "field_label         #afafaf default                    mono none\n"
    "field_value         default default                    mono none\n"
    "field_focus         #ffffff #3a3a3a                    mono reverse\n"
    "field_disabled      #6c6c6c default                    mono dim\n"
    "field_error         #ff5f5f default bold               mono bold underline\n"
    "field_warning       #ffaf00 default                    mono underline\n"
    "field_ok            #5fd75f default                    mono none\n"
    "section_ok          #5fd75f default                    mono none\n"
    "section_error       #ff5f5f default bold               mono bold underline\n"
    "section_warning     #ffaf00 default                    mono underline\n"
    "state_queueing      #8a8a8a default                    mono dim\n"
    "state_starting      #87d7ff default                    mono dim underline\n"
    "state_running       #5fafff default bold               mono bold\n"
    "state_restarting    #ffaf00 default bold               mono bold underline\n"
    "state_suspending    #d7afff default                    mono underline\n"
    "state_suspended     #af87d7 default                    mono italic\n"
    "state_succeeded     #5fd75f default                    mono none\n"
    "state_failed        #ff5f5f default bold               mono bold reverse\n"
    "state_deleting      #6c6c6c default                    mono dim italic\n"
    "log_error           #ff5f5f default                    mono bold\n"
    "log_warning         #ffaf00 default                    mono underline\n"
    "log_match           #000000 #ffd75f                    mono reverse\n"
    "banner_disconnected #ffffff #af0000 bold               mono bold reverse\n"
    "simulated           #d7af5f default                    mono italic\n";

#define BUILTIN_FILE "<built-in default>"

/* ---- names ---- */

const char *theme_role_name(enum theme_role role)
{
    if ((int)role < 0 || role >= THEME_ROLE_COUNT)
        return NULL;
    return role_names[role];
}

int theme_role_from_name(const char *name)
{
    for (int i = 0; i < THEME_ROLE_COUNT; i++)
        if (strcmp(role_names[i], name) == 0)
            return i;
    return -1;
}

bool theme_role_is_state(enum theme_role role)
{
    return role >= THEME_ROLE_FIRST_STATE && role <= THEME_ROLE_LAST_STATE;
}

const char *theme_state_icon(enum theme_role role, bool utf8)
{
    if (!theme_role_is_state(role))
        return NULL;
    return state_icons[role - THEME_ROLE_FIRST_STATE][utf8 ? 1 : 0];
}

/* ---- the theme object ---- */

/* A theme where every role is the terminal's colours with no attributes. */
static struct theme *theme_blank(const char *name)
{
    struct theme *t = xcalloc(1, sizeof *t);
    t->name = xstrdup(name);
    return t;
}

void theme_free(struct theme *t)
{
    if (!t)
        return;
    free(t->name);
    free(t);
}

const char *theme_name(const struct theme *t)
{
    return t->name;
}

struct theme_style theme_style_of(const struct theme *t, enum theme_role role)
{
    struct theme_style none = {0};
    if ((int)role < 0 || role >= THEME_ROLE_COUNT)
        return none;
    return t->styles[role];
}

bool theme_role_defined(const struct theme *t, enum theme_role role)
{
    return (int)role >= 0 && role < THEME_ROLE_COUNT && t->defined[role];
}

static void set_name(struct theme *t, const char *name)
{
    free(t->name);
    t->name = xstrdup(name);
}

/* ---- formatting ---- */

/* A colour as the file spells it: default, #rrggbb, a name for 0–15, else the index. */
static void format_color(struct strbuf *out, struct theme_color c)
{
    switch (c.kind) {
    case THEME_COLOR_RGB:
        strbuf_addf(out, "#%02x%02x%02x", c.r, c.g, c.b);
        break;
    case THEME_COLOR_INDEX:
        if (c.index >= 0 && c.index < 16)
            strbuf_adds(out, color_names[c.index]);
        else
            strbuf_addf(out, "%d", c.index);
        break;
    case THEME_COLOR_DEFAULT:
    default:
        strbuf_adds(out, "default");
        break;
    }
}

/* Appends " bold underline" for the bits set, or " none" when asked to. */
static void format_attrs(struct strbuf *out, unsigned attrs, bool say_none)
{
    if (!attrs && say_none)
        strbuf_adds(out, " none");
    for (size_t i = 0; i < ATTR_NAME_COUNT; i++)
        if (attr_names[i].bit && (attrs & attr_names[i].bit))
            strbuf_addf(out, " %s", attr_names[i].name);
}

/* Writes every role in full, so the output parses back to the same theme. */
void theme_format(const struct theme *t, struct strbuf *out)
{
    strbuf_addf(out, "# %s\n", t->name);
    if (t->light)
        strbuf_adds(out, "background light\n");
    for (int i = 0; i < THEME_ROLE_COUNT; i++) {
        const struct theme_style *s = &t->styles[i];
        strbuf_adds(out, role_names[i]);
        strbuf_addc(out, ' ');
        format_color(out, s->fg);
        strbuf_addc(out, ' ');
        format_color(out, s->bg);
        format_attrs(out, s->attrs, false);
        strbuf_adds(out, " mono");
        format_attrs(out, s->mono_attrs, true);
        strbuf_addc(out, '\n');
    }
}

/* ---- parsing ---- */

struct loader {
    const char *const *dirs;
    const char *chain[THEME_MAX_DEPTH]; /* files being read, outermost first */
    size_t depth;
    struct strbuf *err;
    int errors;
};

/* Starts one error message "FILE:LINE: " (or "FILE: " for line 0); false past the cap. */
static bool error_at(struct loader *ld, const char *file, unsigned line)
{
    if (ld->errors == THEME_MAX_ERRORS) {
        if (ld->err->len)
            strbuf_addc(ld->err, '\n');
        strbuf_addf(ld->err, "%s: too many errors", file);
    }
    if (ld->errors++ >= THEME_MAX_ERRORS)
        return false;
    if (ld->err->len)
        strbuf_addc(ld->err, '\n');
    if (line)
        strbuf_addf(ld->err, "%s:%u: ", file, line);
    else
        strbuf_addf(ld->err, "%s: ", file);
    return true;
}

/* Appends a word from the file, bounded and made safe for a terminal. */
static void add_word(struct strbuf *out, struct strview w)
{
    size_t n = w.n > 40 ? 40 : w.n;
    strbuf_addc(out, '\'');
    utf8_sanitize(out, w.p, n, 0);
    if (n < w.n)
        strbuf_adds(out, "…");
    strbuf_addc(out, '\'');
}

/* Appends " (did you mean X?)" when a candidate is close to w. */
static void add_suggestion(struct strbuf *out, struct strview w, const char *const *cands, size_t n)
{
    char word[THEME_MAX_NAME + 1];
    if (w.n > THEME_MAX_NAME)
        return;
    memcpy(word, w.p, w.n);
    word[w.n] = '\0';
    const char *near = fuzzy_nearest(word, cands, n);
    if (near)
        strbuf_addf(out, " (did you mean %s?)", near);
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

enum word_kind { WORD_OTHER, WORD_COLOR, WORD_BAD_COLOR };

/* Reads a colour word; WORD_BAD_COLOR (reason in *why) for a wrong one. */
static enum word_kind parse_color(struct strview w, struct theme_color *c, const char **why)
{
    memset(c, 0, sizeof *c);
    if (strview_eq(w, "default")) {
        c->kind = THEME_COLOR_DEFAULT;
        return WORD_COLOR;
    }
    if (w.n && w.p[0] == '#') {
        int v[6];
        bool ok = w.n == 7;
        for (size_t i = 0; ok && i < 6; i++)
            ok = (v[i] = hex_digit(w.p[i + 1])) >= 0;
        if (!ok) {
            *why = "want #rrggbb";
            return WORD_BAD_COLOR;
        }
        c->kind = THEME_COLOR_RGB;
        c->r = (uint8_t)(v[0] * 16 + v[1]);
        c->g = (uint8_t)(v[2] * 16 + v[3]);
        c->b = (uint8_t)(v[4] * 16 + v[5]);
        return WORD_COLOR;
    }
    if (w.n && w.p[0] >= '0' && w.p[0] <= '9') {
        int value = 0;
        for (size_t i = 0; i < w.n; i++) {
            if (w.p[i] < '0' || w.p[i] > '9') {
                *why = "want a palette index 0..255";
                return WORD_BAD_COLOR;
            }
            if (value <= 255)
                value = value * 10 + (w.p[i] - '0');
        }
        if (value > 255) {
            *why = "palette index out of range 0..255";
            return WORD_BAD_COLOR;
        }
        c->kind = THEME_COLOR_INDEX;
        c->index = value;
        return WORD_COLOR;
    }
    for (int i = 0; i < 16; i++) {
        if (strview_eq(w, color_names[i])) {
            c->kind = THEME_COLOR_INDEX;
            c->index = i;
            return WORD_COLOR;
        }
    }
    return WORD_OTHER;
}

static bool parse_attr(struct strview w, unsigned *bit)
{
    for (size_t i = 0; i < ATTR_NAME_COUNT; i++) {
        if (strview_eq(w, attr_names[i].name)) {
            *bit = attr_names[i].bit;
            return true;
        }
    }
    return false;
}

/*
 * Splits a line into words. A '#' starts a comment at the start of the line
 * or when a blank or the line's end follows it; otherwise it starts a colour.
 * Returns the word count, or THEME_MAX_WORDS + 1 when there are too many.
 */
static size_t split_words(const char *p, size_t n, struct strview *words)
{
    size_t count = 0, i = 0;
    for (;;) {
        while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\r'))
            i++;
        if (i == n)
            break;
        if (p[i] == '#' &&
            (count == 0 || i + 1 == n || p[i + 1] == ' ' || p[i + 1] == '\t' || p[i + 1] == '\r'))
            break;
        size_t start = i;
        while (i < n && p[i] != ' ' && p[i] != '\t' && p[i] != '\r')
            i++;
        if (count == THEME_MAX_WORDS)
            return THEME_MAX_WORDS + 1;
        words[count].p = p + start;
        words[count].n = i - start;
        count++;
    }
    return count;
}

/* Parses "ROLE [FG [BG]] [ATTR…] [mono ATTR…]" into t; false (with an error) on a bad word. */
static bool parse_role_line(struct loader *ld, struct theme *t, const struct strview *words,
                            size_t n, const char *file, unsigned line)
{
    char name[THEME_MAX_NAME + 1] = "";
    if (words[0].n <= THEME_MAX_NAME) {
        memcpy(name, words[0].p, words[0].n);
        name[words[0].n] = '\0';
    }
    int role = theme_role_from_name(name);
    if (role < 0) {
        if (error_at(ld, file, line)) {
            strbuf_adds(ld->err, "unknown role ");
            add_word(ld->err, words[0]);
            add_suggestion(ld->err, words[0], role_names, THEME_ROLE_COUNT);
        }
        return false;
    }
    if (n == 1) {
        if (error_at(ld, file, line))
            strbuf_addf(ld->err, "%s: give colours or attributes (or none)", name);
        return false;
    }

    struct theme_style s = {0};
    s.mono_attrs = t->styles[role].mono_attrs; /* kept unless the line says mono */
    size_t ncolors = 0;
    bool mono = false, seen_attr = false;
    for (size_t i = 1; i < n; i++) {
        struct strview w = words[i];
        unsigned bit;
        struct theme_color c;
        const char *why = "";
        if (strview_eq(w, "mono")) {
            if (mono) {
                if (error_at(ld, file, line))
                    strbuf_addf(ld->err, "%s: 'mono' given twice", name);
                return false;
            }
            mono = true;
            s.mono_attrs = 0;
            continue;
        }
        if (parse_attr(w, &bit)) {
            if (mono)
                s.mono_attrs |= bit;
            else
                s.attrs |= bit;
            seen_attr = true;
            continue;
        }
        enum word_kind k = parse_color(w, &c, &why);
        if (k == WORD_COLOR && !mono && !seen_attr && ncolors < 2) {
            if (ncolors++ == 0)
                s.fg = c;
            else
                s.bg = c;
            continue;
        }
        if (!error_at(ld, file, line))
            return false;
        strbuf_addf(ld->err, "%s: ", name);
        if (k == WORD_COLOR && mono) {
            strbuf_adds(ld->err, "colour ");
            add_word(ld->err, w);
            strbuf_adds(ld->err, " after mono: only attributes go there");
        } else if (k == WORD_COLOR && seen_attr) {
            strbuf_adds(ld->err, "colour ");
            add_word(ld->err, w);
            strbuf_adds(ld->err, " after attributes: colours come first");
        } else if (k == WORD_COLOR) {
            strbuf_adds(ld->err, "third colour ");
            add_word(ld->err, w);
            strbuf_adds(ld->err, ": a role takes FG and BG only");
        } else if (k == WORD_BAD_COLOR) {
            strbuf_adds(ld->err, "bad colour ");
            add_word(ld->err, w);
            strbuf_addf(ld->err, ": %s", why);
        } else if (mono) {
            strbuf_adds(ld->err, "unknown attribute ");
            add_word(ld->err, w);
            strbuf_adds(ld->err, " after mono");
            add_suggestion(ld->err, w, mono_words, MONO_WORD_COUNT);
        } else {
            strbuf_adds(ld->err, "unknown colour or attribute ");
            add_word(ld->err, w);
            add_suggestion(ld->err, w, value_words, VALUE_WORD_COUNT);
        }
        return false;
    }
    t->styles[role] = s;
    t->defined[role] = true;
    return true;
}

static int load_named(struct loader *ld, const char *name, struct theme **out, const char *file,
                      unsigned line);

/*
 * Parses text on top of a base: the `inherit` one, else the built-in (or
 * blank for the built-in itself).
 */
static int parse_text(struct loader *ld, const char *text, size_t len, const char *file,
                      const char *name, bool builtin, struct theme **out)
{
    struct theme *t = NULL;
    bool light = false, have_background = false;
    int errors_before = ld->errors;
    unsigned line = 0;
    size_t pos = 0;
    while (pos < len) {
        const char *eol = memchr(text + pos, '\n', len - pos);
        size_t n = eol ? (size_t)(eol - (text + pos)) : len - pos;
        const char *p = text + pos;
        pos += n + (eol ? 1 : 0);
        line++;

        struct strview words[THEME_MAX_WORDS];
        size_t count = split_words(p, n, words);
        if (count == 0)
            continue;
        if (count > THEME_MAX_WORDS) {
            if (error_at(ld, file, line))
                strbuf_addf(ld->err, "more than %d words", THEME_MAX_WORDS);
            continue;
        }
        if (strview_eq(words[0], "inherit")) {
            if (t) {
                if (error_at(ld, file, line))
                    strbuf_adds(ld->err, "inherit must come before any role");
                continue;
            }
            if (count != 2) {
                if (error_at(ld, file, line))
                    strbuf_adds(ld->err, "inherit takes one scheme name");
                continue;
            }
            char base[THEME_MAX_NAME + 2];
            size_t bn = words[1].n > THEME_MAX_NAME ? THEME_MAX_NAME + 1 : words[1].n;
            memcpy(base, words[1].p, bn); /* one byte too many makes it an invalid name */
            base[bn] = '\0';
            if (load_named(ld, base, &t, file, line) < 0)
                t = theme_blank(name); /* keep reading: report this file's errors too */
            continue;
        }
        if (strview_eq(words[0], "background")) {
            if (count != 2 || !(strview_eq(words[1], "dark") || strview_eq(words[1], "light"))) {
                if (error_at(ld, file, line))
                    strbuf_adds(ld->err, "background takes dark or light");
                continue;
            }
            have_background = true;
            light = strview_eq(words[1], "light");
            continue;
        }
        if (!t) {
            t = builtin ? theme_blank(name) : theme_builtin_default();
            memset(t->defined, 0, sizeof t->defined); /* only this file's lines count */
        }
        parse_role_line(ld, t, words, count, file, line);
    }
    if (!t) {
        t = builtin ? theme_blank(name) : theme_builtin_default();
        memset(t->defined, 0, sizeof t->defined);
    }
    if (have_background)
        t->light = light;
    set_name(t, name);
    if (ld->errors != errors_before) {
        theme_free(t);
        return -1;
    }
    *out = t;
    return 0;
}

/* Reads and parses one scheme file, tracking the inherit chain. */
static int load_path(struct loader *ld, const char *path, const char *name, struct theme **out)
{
    if (ld->depth == THEME_MAX_DEPTH) {
        if (error_at(ld, path, 0))
            strbuf_addf(ld->err, "inherit chain longer than %d schemes", THEME_MAX_DEPTH);
        return -1;
    }
    char *data = NULL;
    size_t len = 0;
    struct strbuf why = STRBUF_INIT;
    if (file_read_all(path, THEME_MAX_FILE, &data, &len, &why) < 0) {
        if (ld->errors++ < THEME_MAX_ERRORS) {
            if (ld->err->len)
                strbuf_addc(ld->err, '\n');
            strbuf_adds(ld->err, strbuf_str(&why));
        }
        strbuf_free(&why);
        return -1;
    }
    strbuf_free(&why);
    ld->chain[ld->depth++] = path;
    int rc = parse_text(ld, data, len, path, name, false, out);
    ld->depth--;
    free(data);
    return rc;
}

static bool in_chain(const struct loader *ld, const char *path)
{
    for (size_t i = 0; i < ld->depth; i++)
        if (strcmp(ld->chain[i], path) == 0)
            return true;
    return false;
}

/* A scheme name: letters, digits, '_', '-', '.', not starting with '.'; no path in it. */
static bool valid_name(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n > THEME_MAX_NAME || name[0] == '.')
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || c == '.'))
            return false;
    }
    return true;
}

/*
 * Finds NAME.theme in the search dirs, skipping files already being read (so
 * ~/.config/trainjob/themes/default.theme may `inherit default` and get the
 * shipped one). Returns a new path, or NULL; *skipped says one was skipped.
 */
static char *find_file(const struct loader *ld, const char *name, bool *skipped)
{
    *skipped = false;
    for (const char *const *d = ld->dirs; d && *d; d++) {
        char *path = xasprintf("%s/%s.theme", *d, name);
        struct stat st;
        if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
            if (!in_chain(ld, path))
                return path;
            *skipped = true;
        }
        free(path);
    }
    return NULL;
}

/* Loads a scheme by name for theme_load or an inherit line at file:line (line 0: none). */
static int load_named(struct loader *ld, const char *name, struct theme **out, const char *file,
                      unsigned line)
{
    if (!valid_name(name)) {
        if (error_at(ld, file, line)) {
            strbuf_adds(ld->err, "bad scheme name ");
            add_word(ld->err, strview_from(name));
            strbuf_adds(ld->err, ": letters, digits, '_', '-', '.'");
        }
        return -1;
    }
    bool skipped;
    char *path = find_file(ld, name, &skipped);
    if (path) {
        int rc = load_path(ld, path, name, out);
        free(path);
        return rc;
    }
    if (strcmp(name, "default") == 0 || strcmp(name, "dark") == 0) {
        *out = theme_builtin_default();
        set_name(*out, name);
        return 0;
    }
    if (!error_at(ld, file, line))
        return -1;
    if (skipped) {
        strbuf_adds(ld->err, "inherit cycle:");
        for (size_t i = 0; i < ld->depth; i++)
            strbuf_addf(ld->err, " %s ->", ld->chain[i]);
        strbuf_addf(ld->err, " %s", name);
        return -1;
    }
    size_t count = 0;
    char **names = theme_list(ld->dirs, &count);
    strbuf_addf(ld->err, "unknown scheme '%s'", name);
    const char *near = fuzzy_nearest(name, (const char *const *)names, count);
    if (near)
        strbuf_addf(ld->err, " (did you mean %s?)", near);
    strbuf_adds(ld->err, "; schemes:");
    for (size_t i = 0; i < count; i++)
        strbuf_addf(ld->err, "%s %s", i ? "," : "", names[i]);
    theme_strv_free(names);
    return -1;
}

static bool has_theme_suffix(const char *s, size_t n)
{
    return n > 6 && memcmp(s + n - 6, ".theme", 6) == 0;
}

/* The name a scheme file gives its scheme: the base name without ".theme". */
static char *name_of_file(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = strlen(base);
    return xstrndup(base, has_theme_suffix(base, n) ? n - 6 : n);
}

/* Parses the compiled-in text on a blank theme. */
struct theme *theme_builtin_default(void)
{
    struct strbuf err = STRBUF_INIT;
    struct loader ld = {.err = &err};
    struct theme *t = NULL;
    /* Cannot fail: test_theme parses the same text and checks it has no errors. */
    if (parse_text(&ld, builtin_default_text, sizeof builtin_default_text - 1, BUILTIN_FILE,
                   "default", true, &t) < 0)
        t = theme_blank("default");
    strbuf_free(&err);
    return t;
}

/* Parses text as the file named file; `inherit` lines may not name file itself. */
int theme_parse(const char *text, size_t len, const char *file, const char *const *search_dirs,
                struct theme **out, struct strbuf *err)
{
    struct loader ld = {.dirs = search_dirs, .err = err};
    char *name = name_of_file(file);
    ld.chain[ld.depth++] = file;
    int rc = parse_text(&ld, text, len, file, name, false, out);
    free(name);
    return rc;
}

/* A path is read as it is; a name goes through the search dirs and the built-in. */
int theme_load(const char *name_or_path, const char *const *search_dirs, struct theme **out,
               struct strbuf *err)
{
    struct loader ld = {.dirs = search_dirs, .err = err};
    if (!strchr(name_or_path, '/') && !has_theme_suffix(name_or_path, strlen(name_or_path)))
        return load_named(&ld, name_or_path, out, "theme", 0);
    char *name = name_of_file(name_or_path);
    int rc = load_path(&ld, name_or_path, name, out);
    free(name);
    return rc;
}

/* ---- where schemes live ---- */

void theme_strv_free(char **dirs)
{
    if (!dirs)
        return;
    for (char **d = dirs; *d; d++)
        free(*d);
    free(dirs);
}

/*
 * The user's directory first, so a user scheme hides a shipped one of the
 * same name; then themes/ of each data directory (util/buildinfo: installed,
 * moved or the checkout), never the current directory.
 */
char **theme_search_dirs(const char *config_dir)
{
    char **data = buildinfo_data_dirs();
    size_t count = 0;
    while (data[count])
        count++;
    char **dirs = xcalloc(count + 2, sizeof *dirs);
    size_t n = 0;
    if (config_dir && *config_dir)
        dirs[n++] = xasprintf("%s/themes", config_dir);
    for (size_t i = 0; i < count; i++)
        dirs[n++] = xasprintf("%s/themes", data[i]);
    buildinfo_strv_free(data);
    return dirs;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Reads each directory's *.theme names; "default" is always there (built in). */
char **theme_list(const char *const *search_dirs, size_t *count)
{
    size_t n = 0, cap = 8;
    char **names = xreallocarray(NULL, cap, sizeof *names);
    names[n++] = xstrdup("default");
    for (const char *const *d = search_dirs; d && *d; d++) {
        DIR *dir = opendir(*d);
        if (!dir)
            continue;
        struct dirent *e;
        while ((e = readdir(dir)) != NULL) {
            size_t len = strlen(e->d_name);
            if (!has_theme_suffix(e->d_name, len))
                continue;
            char *name = xstrndup(e->d_name, len - 6);
            if (!valid_name(name)) {
                free(name);
                continue;
            }
            if (n + 1 >= cap) {
                cap *= 2;
                names = xreallocarray(names, cap, sizeof *names);
            }
            names[n++] = name;
        }
        closedir(dir);
    }
    qsort(names, n, sizeof *names, cmp_str);
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        if (kept && strcmp(names[kept - 1], names[i]) == 0)
            free(names[i]);
        else
            names[kept++] = names[i];
    }
    names[kept] = NULL;
    *count = kept;
    return names;
}
