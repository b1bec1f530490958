/*
 * keymap: key bindings per mode; see keymap.h.
 *
 * The keymap owns one small array of bindings per mode, in the order they
 * were first bound (the help screen lists them in that order). A lookup is
 * a linear scan: a mode has a few dozen bindings at most. Keys are kept
 * normalised (Enter is '\r' whatever the terminal sent), so a lookup is a
 * comparison of three fields.
 *
 * The actions and modes are const tables here; the default bindings are
 * tui/default.keys, turned into a C string by the Makefile
 * ($(BUILD)/gen/default_keys.h) and parsed like the user's file.
 */
#include "tui/keymap.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "api/paths.h"
#include "default_keys.h"
#include "util/fileio.h"
#include "util/fuzzy.h"
#include "util/strbuf.h"
#include "util/utf8.h"
#include "util/xalloc.h"

enum {
    MODE_GLOBAL,
    MODE_WIZARD,
    MODE_JOBS,
    MODE_JOB,
    MODE_LOGS,
    MODE_METRICS,
    MODE_WORKERS,
    MODE_COUNT
};

#define KEYS_MAX_SIZE (256u << 10) /* a keys file larger than this is a mistake */

const char *const keymap_modes[] = {"global", "wizard",  "jobs",    "job",
                                    "logs",   "metrics", "workers", NULL};

static const char *const mode_help[MODE_COUNT] = {
    "every screen",
    "the create-task form (trainjob new)",
    "the job list",
    "one job: its workers, events, logs and metrics",
    "a worker's log",
    "a job's Metrics pane (TensorBoard curves)",
    "the job screen's Workers pane, when it has the focus",
};

/* Which modes an action means something in (bits of 1 << MODE_*). */
#define IN(m) (1u << (m))
#define EVERYWHERE (IN(MODE_COUNT) - 1)
#define MONITOR (IN(MODE_JOBS) | IN(MODE_JOB) | IN(MODE_LOGS) | IN(MODE_METRICS))

static const struct action_def {
    const char *name;
    const char *help;
    unsigned modes;
} actions[KEYMAP_ACTION_COUNT] = {
    [KEYMAP_NONE] = {"none", "nothing (hides what global binds the key to)", EVERYWHERE},
    [KEYMAP_HELP] = {"help", "show the keys of this screen", EVERYWHERE},
    [KEYMAP_QUIT] = {"quit", "leave this screen (asks first when something would be lost)",
                     EVERYWHERE},
    [KEYMAP_REDRAW] = {"redraw", "draw the whole screen again", EVERYWHERE},
    [KEYMAP_SUBMIT] = {"submit", "send the job to the backend (Enter on Review does too)",
                       IN(MODE_WIZARD)},
    [KEYMAP_NEXT_SECTION] = {"next-section", "go to the next section", IN(MODE_WIZARD)},
    [KEYMAP_PREV_SECTION] = {"prev-section", "go to the previous section", IN(MODE_WIZARD)},
    [KEYMAP_SAVE] = {"save", "save the form (or the job) as a YAML job file",
                     IN(MODE_WIZARD) | IN(MODE_JOBS) | IN(MODE_JOB)},
    [KEYMAP_LOAD] = {"load", "fill the form from a YAML or JSON job file", IN(MODE_WIZARD)},
    [KEYMAP_OPEN] = {"open", "open the selected job or worker",
                     IN(MODE_JOBS) | IN(MODE_JOB) | IN(MODE_METRICS)},
    [KEYMAP_BACK] = {"back", "back to the screen before", MONITOR},
    [KEYMAP_NEW_JOB] = {"new-job", "create a job in the wizard", IN(MODE_JOBS) | IN(MODE_JOB)},
    [KEYMAP_FILTER] = {"filter", "show only the jobs matching a text", IN(MODE_JOBS)},
    [KEYMAP_REFRESH] = {"refresh", "ask the backend again now", MONITOR},
    [KEYMAP_STOP_JOB] = {"stop-job", "stop the job (it can be started again)",
                         IN(MODE_JOBS) | IN(MODE_JOB) | IN(MODE_WORKERS)},
    [KEYMAP_START_JOB] = {"start-job", "start a stopped job again", IN(MODE_JOBS) | IN(MODE_JOB)},
    [KEYMAP_DELETE_JOB] = {"delete-job", "delete the job, stopping its workers first",
                           IN(MODE_JOBS) | IN(MODE_JOB)},
    [KEYMAP_LOGS] = {"logs", "show the selected worker's log", IN(MODE_JOBS) | IN(MODE_JOB)},
    [KEYMAP_SEARCH] = {"search", "search the log for a text (on the Metrics pane: filter the tags)",
                       IN(MODE_JOB) | IN(MODE_LOGS) | IN(MODE_METRICS)},
    [KEYMAP_SEARCH_NEXT] = {"search-next", "the next match", IN(MODE_JOB) | IN(MODE_LOGS)},
    [KEYMAP_SEARCH_PREV] = {"search-prev", "the previous match", IN(MODE_JOB) | IN(MODE_LOGS)},
    [KEYMAP_FOLLOW] = {"follow", "follow new lines as they arrive (on / off)",
                       IN(MODE_JOB) | IN(MODE_LOGS)},
    [KEYMAP_TOP] = {"top", "go to the first line", MONITOR},
    [KEYMAP_BOTTOM] = {"bottom", "go to the last line", MONITOR},
    [KEYMAP_FAULTY_ONLY] = {"faulty-only",
                            "show only faulty jobs: failed, restarted, or a worker exited non-zero "
                            "(on / off)",
                            IN(MODE_JOBS)},
    [KEYMAP_PRIORITY] = {"priority", "change the job's priority (owners)",
                         IN(MODE_JOBS) | IN(MODE_JOB)},
    [KEYMAP_CLONE] = {"clone", "open the wizard prefilled with this job",
                      IN(MODE_JOBS) | IN(MODE_JOB)},
    [KEYMAP_MARK_NODE] = {"mark-node", "mark the selected worker's node unschedulable for this job",
                          IN(MODE_JOB)},
    [KEYMAP_START_ENGINE] = {"start-engine",
                             "start the local engine again after it was stopped on purpose",
                             IN(MODE_JOBS) | IN(MODE_JOB)},
    [KEYMAP_UNMARK_NODE] = {"unmark-node",
                            "lift the mark on the selected worker's node: the job may run there again",
                            IN(MODE_JOB)},
    [KEYMAP_COMMAND] = {"command",
                        "a command: :jobs :workers NAME :ws NAME :ctx NAME :theme NAME :q",
                        MONITOR},
    [KEYMAP_PANE_NEXT] = {"pane-next", "focus the next pane",
                          IN(MODE_JOB) | IN(MODE_LOGS) | IN(MODE_METRICS)},
    [KEYMAP_PANE_PREV] = {"pane-prev", "focus the previous pane",
                          IN(MODE_JOB) | IN(MODE_LOGS) | IN(MODE_METRICS)},
    [KEYMAP_WRAP] = {"wrap", "wrap long lines (on / off)", IN(MODE_JOB) | IN(MODE_LOGS)},
    [KEYMAP_FIRST_ERROR] = {"first-error", "jump to the first error line of the log",
                            IN(MODE_JOB) | IN(MODE_LOGS)},
    [KEYMAP_ALL_WORKERS] = {"all-workers", "the logs of every worker, interleaved",
                            IN(MODE_JOB) | IN(MODE_LOGS)},
    [KEYMAP_DESCRIBE] = {"describe", "the whole job as YAML (on / off)", IN(MODE_JOB)},
    [KEYMAP_METRICS] = {"metrics",
                        "the Metrics pane: the job's TensorBoard curves (Up/Down: tags, Space: "
                        "chart a tag, Left/Right: a cursor reading the values)",
                        IN(MODE_JOB) | IN(MODE_METRICS)},
    [KEYMAP_FULLSCREEN] = {"fullscreen",
                           "the Logs pane (when it has the focus) or the Metrics pane on the "
                           "whole screen (on / off)",
                           IN(MODE_JOB) | IN(MODE_METRICS)},
    [KEYMAP_SMOOTH_MORE] = {"smooth-more", "smooth the curves more (up to 0.999)",
                            IN(MODE_JOB) | IN(MODE_METRICS)},
    [KEYMAP_SMOOTH_LESS] = {"smooth-less", "smooth the curves less (down to 0: raw)",
                            IN(MODE_JOB) | IN(MODE_METRICS)},
    [KEYMAP_LOG_Y] = {"log-y", "a log scale for the values (on / off)",
                      IN(MODE_JOB) | IN(MODE_METRICS)},
    [KEYMAP_ZOOM_IN] = {"zoom-in", "show fewer of the last steps", IN(MODE_JOB) | IN(MODE_METRICS)},
    [KEYMAP_ZOOM_OUT] = {"zoom-out", "show more of the last steps (at last, all)",
                         IN(MODE_JOB) | IN(MODE_METRICS)},
    [KEYMAP_MINE] = {"mine", "show only the jobs you created (on / off)", IN(MODE_JOBS)},
    [KEYMAP_MARK] = {"mark", "mark the row (on / off): stop, start, delete act on every mark",
                     IN(MODE_JOBS)},
    [KEYMAP_SORT_PREV] = {"sort-prev", "sort by the column to the left", IN(MODE_JOBS)},
    [KEYMAP_SORT_NEXT] = {"sort-next", "sort by the column to the right", IN(MODE_JOBS)},
    [KEYMAP_SORT_REVERSE] = {"sort-reverse", "reverse the order of the sort", IN(MODE_JOBS)},
    [KEYMAP_CHART] = {"chart", "chart the tag under the cursor too (on / off; up to 8)",
                      IN(MODE_METRICS)},
    [KEYMAP_CURSOR_LEFT] = {"cursor-left",
                            "the charts' cursor a column left (first: at the last step); it "
                            "reads each run's value at the step",
                            IN(MODE_METRICS)},
    [KEYMAP_CURSOR_RIGHT] = {"cursor-right", "the charts' cursor a column right", IN(MODE_METRICS)},
    [KEYMAP_SAVE_LOG] = {"save-log",
                         "save the shown worker's whole log (every worker's in the all-workers "
                         "view) to a file you name",
                         IN(MODE_LOGS)},
    [KEYMAP_COPY_NAME] = {"copy-name",
                          "copy the job's name to the clipboard (OSC 52: where the terminal "
                          "allows it; tmux: set-clipboard on)",
                          IN(MODE_JOBS)},
    [KEYMAP_COLUMNS] = {"columns",
                        "choose and order the columns (Space: show/hide, K/J: move; saved in "
                        "~/.config/trainjob/columns)",
                        IN(MODE_JOBS)},
    [KEYMAP_SHELL] = {"shell",
                      "a shell in the selected worker (as trainjob exec); exit it to come back",
                      IN(MODE_WORKERS)},
};

/* Keys with a name of their own; the first name of a code is the one printed. */
static const struct named_key {
    const char *name;
    int code;
    bool is_function;
} named_keys[] = {
    {"Enter", '\r', false},
    {"Esc", 27, false},
    {"Tab", '\t', false},
    {"S-Tab", KEY_BTAB, true},
    {"Space", ' ', false},
    {"Backspace", KEY_BACKSPACE, true},
    {"Insert", KEY_IC, true},
    {"Delete", KEY_DC, true},
    {"Home", KEY_HOME, true},
    {"End", KEY_END, true},
    {"PgUp", KEY_PPAGE, true},
    {"PgDn", KEY_NPAGE, true},
    {"Up", KEY_UP, true},
    {"Down", KEY_DOWN, true},
    {"Left", KEY_LEFT, true},
    {"Right", KEY_RIGHT, true},
    {"S-Left", KEY_SLEFT, true},
    {"S-Right", KEY_SRIGHT, true},
    {"S-Up", KEY_SR, true},
    {"S-Down", KEY_SF, true},
    /* aliases: accepted, never printed */
    {"Return", '\r', false},
    {"Escape", 27, false},
    {"BTab", KEY_BTAB, true},
    {"Ins", KEY_IC, true},
    {"Del", KEY_DC, true},
    {"PageUp", KEY_PPAGE, true},
    {"PageDown", KEY_NPAGE, true},
};
#define NAMED_KEYS (sizeof named_keys / sizeof named_keys[0])
#define FKEY_MAX 24

struct binding {
    struct widget_key key;
    enum keymap_action action;
};

struct mode_map {
    struct binding *b;
    size_t n, cap;
};

struct keymap {
    struct mode_map modes[MODE_COUNT];
};

static int mode_index(const char *mode)
{
    for (int i = 0; mode && i < MODE_COUNT; i++)
        if (strcmp(keymap_modes[i], mode) == 0)
            return i;
    return -1;
}

/* ---- Key names ---- */

/* k as keymap stores and looks it up: one code for every way a terminal sends a key. */
static struct widget_key normalise(const struct widget_key *k)
{
    struct widget_key n = *k;
    if (n.is_function && n.code == KEY_ENTER)
        n = (struct widget_key){'\r', false, n.alt};
    else if (!n.is_function && n.code == '\n')
        n.code = '\r';
    else if (!n.is_function && n.code == 127)
        n = (struct widget_key){KEY_BACKSPACE, true, n.alt};
    return n;
}

static bool same_key(const struct widget_key *a, const struct widget_key *b)
{
    return a->code == b->code && a->is_function == b->is_function && a->alt == b->alt;
}

/* A key name without the "M-" prefix. */
static bool parse_plain_key(const char *name, struct widget_key *k)
{
    size_t len = strlen(name);
    for (size_t i = 0; i < NAMED_KEYS; i++)
        if (strcasecmp(name, named_keys[i].name) == 0) {
            *k = (struct widget_key){named_keys[i].code, named_keys[i].is_function, false};
            return true;
        }
    if ((name[0] == 'F' || name[0] == 'f') && len >= 2 && len <= 3 &&
        isdigit((unsigned char)name[1])) {
        char *end;
        long n = strtol(name + 1, &end, 10);
        if (*end == '\0' && n >= 1 && n <= FKEY_MAX && name[1] != '0') {
            *k = (struct widget_key){KEY_F((int)n), true, false};
            return true;
        }
        return false;
    }
    if ((name[0] == 'C' || name[0] == 'c') && name[1] == '-' && len == 3) {
        unsigned char c = (unsigned char)name[2];
        if (isalpha(c) || strchr("@[\\]^_", c)) { /* the codes 0–31 a keyboard can type */
            *k = (struct widget_key){toupper(c) & 0x1f, false, false};
            return true;
        }
        return false;
    }
    uint32_t cp;
    size_t used = len ? utf8_decode(name, len, &cp) : 0;
    if (used != len || len == 0 || cp == UTF8_REPLACEMENT || utf8_cpwidth(cp) <= 0)
        return false;
    *k = (struct widget_key){(int)cp, false, false};
    return true;
}

bool keymap_key_parse(const char *name, struct widget_key *k)
{
    bool alt = false;
    if ((name[0] == 'M' || name[0] == 'm') && name[1] == '-' && name[2] != '\0') {
        alt = true;
        name += 2;
    }
    if (!parse_plain_key(name, k))
        return false;
    k->alt = alt;
    *k = normalise(k);
    return true;
}

void keymap_key_name(const struct widget_key *key, char *buf, size_t size)
{
    struct widget_key k = normalise(key);
    const char *alt = k.alt ? "M-" : "";
    for (size_t i = 0; i < NAMED_KEYS; i++)
        if (named_keys[i].code == k.code && named_keys[i].is_function == k.is_function) {
            snprintf(buf, size, "%s%s", alt, named_keys[i].name);
            return;
        }
    if (k.is_function && k.code >= KEY_F(1) && k.code <= KEY_F(FKEY_MAX)) {
        snprintf(buf, size, "%sF%d", alt, k.code - KEY_F0);
    } else if (k.is_function) {
        const char *kn = keyname(k.code);
        snprintf(buf, size, "%s%s", alt, kn ? kn : "?");
    } else if (k.code >= 0 && k.code < 32) {
        snprintf(buf, size, "%sC-%c", alt,
                 k.code >= 1 && k.code <= 26 ? 'a' + k.code - 1 : '@' + k.code);
    } else {
        char ch[5] = "";
        ch[utf8_encode((uint32_t)k.code, ch)] = '\0';
        snprintf(buf, size, "%s%s", alt, ch);
    }
}

bool keymap_key_is_text(const struct widget_key *k)
{
    return !k->is_function && !k->alt && k->code >= 32 && k->code != 127;
}

/* ---- Actions and modes ---- */

const char *keymap_action_name(enum keymap_action action)
{
    return (unsigned)action < KEYMAP_ACTION_COUNT ? actions[action].name : NULL;
}

const char *keymap_action_help(enum keymap_action action)
{
    return (unsigned)action < KEYMAP_ACTION_COUNT ? actions[action].help : NULL;
}

int keymap_action_from_name(const char *name)
{
    for (int i = 0; i < KEYMAP_ACTION_COUNT; i++)
        if (strcmp(actions[i].name, name) == 0)
            return i;
    return -1;
}

const char *keymap_mode_help(const char *mode)
{
    int m = mode_index(mode);
    return m < 0 ? NULL : mode_help[m];
}

/* ---- The bindings ---- */

static struct binding *find(const struct mode_map *mm, const struct widget_key *k)
{
    for (size_t i = 0; i < mm->n; i++)
        if (same_key(&mm->b[i].key, k))
            return &mm->b[i];
    return NULL;
}

/* Binds k (normalised) in mm, in place when it was bound already (its place in the list kept). */
static void bind(struct mode_map *mm, const struct widget_key *k, enum keymap_action a)
{
    struct binding *b = find(mm, k);
    if (b == NULL) {
        if (mm->n == mm->cap) {
            mm->cap = mm->cap ? mm->cap * 2 : 16;
            mm->b = xreallocarray(mm->b, mm->cap, sizeof *mm->b);
        }
        b = &mm->b[mm->n++];
        b->key = *k;
    }
    b->action = a;
}

static void unbind(struct mode_map *mm, const struct widget_key *k)
{
    struct binding *b = find(mm, k);
    if (b == NULL)
        return;
    size_t i = (size_t)(b - mm->b);
    memmove(b, b + 1, (mm->n - i - 1) * sizeof *b);
    mm->n--;
}

enum keymap_action keymap_lookup(const struct keymap *km, const char *mode,
                                 const struct widget_key *k)
{
    int m = mode_index(mode);
    if (m < 0)
        return KEYMAP_NONE;
    struct widget_key n = normalise(k);
    const struct binding *b = find(&km->modes[m], &n);
    if (b == NULL && m != MODE_GLOBAL)
        b = find(&km->modes[MODE_GLOBAL], &n);
    return b ? b->action : KEYMAP_NONE;
}

enum keymap_action keymap_lookup_own(const struct keymap *km, const char *mode,
                                     const struct widget_key *k)
{
    int m = mode_index(mode);
    if (m < 0)
        return KEYMAP_NONE;
    struct widget_key n = normalise(k);
    const struct binding *b = find(&km->modes[m], &n);
    return b ? b->action : KEYMAP_NONE;
}

size_t keymap_keys_for(const struct keymap *km, const char *mode, enum keymap_action action,
                       bool own, struct strbuf *out)
{
    int m = mode_index(mode);
    if (m < 0 || action == KEYMAP_NONE || (!own && m == MODE_GLOBAL))
        return 0;
    const struct mode_map *mm = &km->modes[own ? m : MODE_GLOBAL];
    size_t count = 0;
    for (size_t i = 0; i < mm->n; i++) {
        if (mm->b[i].action != action || (!own && find(&km->modes[m], &mm->b[i].key)))
            continue;
        char name[KEYMAP_KEY_NAME_MAX];
        keymap_key_name(&mm->b[i].key, name, sizeof name);
        strbuf_addf(out, "%s%s", count ? ", " : "", name);
        count++;
    }
    return count;
}

bool keymap_first_key(const struct keymap *km, const char *mode, enum keymap_action action,
                      char *buf, size_t size)
{
    struct strbuf sb = STRBUF_INIT;
    if (keymap_keys_for(km, mode, action, true, &sb) == 0)
        keymap_keys_for(km, mode, action, false, &sb);
    const char *s = strbuf_str(&sb);
    size_t n = strcspn(s, ",");
    bool found = n > 0;
    snprintf(buf, size, "%.*s", (int)n, s);
    strbuf_free(&sb);
    return found;
}

/* ---- The text format ---- */

struct word {
    const char *p;
    size_t n;
    int col; /* 1-based, in characters */
};

/* Where a parse is: the file, the line, and the errors so far. */
struct parser {
    const char *file;
    int line;
    struct strbuf *err;
};

static size_t bad(struct parser *ps, int col, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Reports a problem at column col of the line and returns 1: one bad line. */
static size_t bad(struct parser *ps, int col, const char *fmt, ...)
{
    if (ps->err == NULL)
        return 1;
    strbuf_addf(ps->err, "%s:%d:%d: ", ps->file, ps->line, col);
    va_list ap;
    va_start(ap, fmt);
    strbuf_vaddf(ps->err, fmt, ap);
    va_end(ap);
    strbuf_addc(ps->err, '\n');
    return 1;
}

/* " (did you mean X?)" for word among candidates, or "" when none is close. */
static void suggest(char *buf, size_t size, const char *word, const char *const *cands, size_t n)
{
    const char *near = fuzzy_nearest(word, cands, n);
    if (near)
        snprintf(buf, size, " (did you mean %s?)", near);
    else
        buf[0] = '\0';
}

/* The word as a C string, sanitized for a status line. */
static char *word_str(const struct word *w)
{
    struct strbuf sb = STRBUF_INIT;
    utf8_sanitize(&sb, w->p, w->n < 64 ? w->n : 64, 0);
    return strbuf_detach(&sb, NULL);
}

static size_t bad_mode(struct parser *ps, const struct word *w)
{
    char *s = word_str(w), hint[96];
    suggest(hint, sizeof hint, s, keymap_modes, MODE_COUNT);
    if (!hint[0])
        snprintf(hint, sizeof hint, " (modes: global, wizard, jobs, job, logs)");
    bad(ps, w->col, "unknown mode \"%s\"%s", s, hint);
    free(s);
    return 1;
}

static size_t bad_key(struct parser *ps, const struct word *w)
{
    const char *names[NAMED_KEYS];
    for (size_t i = 0; i < NAMED_KEYS; i++)
        names[i] = named_keys[i].name;
    char *s = word_str(w), hint[96];
    suggest(hint, sizeof hint, s, names, NAMED_KEYS);
    bad(ps, w->col, "unknown key \"%s\"%s", s, hint);
    free(s);
    return 1;
}

static size_t bad_action(struct parser *ps, const struct word *w)
{
    const char *names[KEYMAP_ACTION_COUNT];
    for (size_t i = 0; i < KEYMAP_ACTION_COUNT; i++)
        names[i] = actions[i].name;
    char *s = word_str(w), hint[96];
    suggest(hint, sizeof hint, s, names, KEYMAP_ACTION_COUNT);
    bad(ps, w->col, "unknown action \"%s\"%s", s, hint);
    free(s);
    return 1;
}

/* Splits line[0..n) into at most max words at blanks; returns how many (max + 1: more). */
static size_t split(const char *line, size_t n, struct word *w, size_t max)
{
    size_t count = 0, i = 0;
    while (i < n) {
        while (i < n && (line[i] == ' ' || line[i] == '\t'))
            i++;
        if (i == n)
            break;
        size_t start = i;
        while (i < n && line[i] != ' ' && line[i] != '\t')
            i++;
        if (count == max)
            return max + 1;
        w[count++] = (struct word){line + start, i - start, (int)utf8_count(line, start) + 1};
    }
    return count;
}

/* One line: a command, a comment or nothing. Returns 1 when it was bad (and skipped). */
static size_t parse_line(struct keymap *km, struct parser *ps, const char *line, size_t n)
{
    struct word w[5];
    size_t count = split(line, n, w, 5);
    if (count == 0 || w[0].p[0] == '#')
        return 0;
    char cmd[16], mode[16], key[64], act[64];
    snprintf(cmd, sizeof cmd, "%.*s", (int)w[0].n, w[0].p);
    bool is_bind = strcmp(cmd, "bind") == 0, is_unbind = strcmp(cmd, "unbind") == 0;
    if (!is_bind && !is_unbind) {
        static const char *const cmds[] = {"bind", "unbind"};
        char *s = word_str(&w[0]), hint[96];
        suggest(hint, sizeof hint, s, cmds, 2);
        bad(ps, w[0].col, "unknown command \"%s\"%s", s, hint);
        free(s);
        return 1;
    }
    size_t want = is_bind ? 4 : 3;
    int end_col = (int)utf8_count(line, n) + 1;
    if (count < want)
        return bad(ps, end_col, "%s",
                   is_bind ? "bind needs MODE KEY ACTION" : "unbind needs MODE KEY");
    if (count > want && w[want].p[0] != '#') {
        char *s = word_str(&w[want]);
        bad(ps, w[want].col, "unexpected \"%s\" after the %s (a comment starts with #)", s,
            is_bind ? "action" : "key");
        free(s);
        return 1;
    }
    snprintf(mode, sizeof mode, "%.*s", (int)w[1].n, w[1].p);
    int m = w[1].n < sizeof mode ? mode_index(mode) : -1;
    if (m < 0)
        return bad_mode(ps, &w[1]);
    struct widget_key k;
    snprintf(key, sizeof key, "%.*s", (int)w[2].n, w[2].p);
    if (w[2].n >= sizeof key || !keymap_key_parse(key, &k))
        return bad_key(ps, &w[2]);
    if (is_unbind) {
        unbind(&km->modes[m], &k);
        return 0;
    }
    snprintf(act, sizeof act, "%.*s", (int)w[3].n, w[3].p);
    int a = w[3].n < sizeof act ? keymap_action_from_name(act) : -1;
    if (a < 0)
        return bad_action(ps, &w[3]);
    if (!(actions[a].modes & IN(m)))
        return bad(ps, w[3].col, "action \"%s\" does nothing in mode %s", act, mode);
    bind(&km->modes[m], &k, (enum keymap_action)a);
    return 0;
}

size_t keymap_parse(struct keymap *km, const char *text, size_t len, const char *file,
                    struct strbuf *err)
{
    struct parser ps = {file, 0, err};
    size_t bad_lines = 0;
    for (size_t i = 0; i < len;) {
        const char *nl = memchr(text + i, '\n', len - i);
        size_t end = nl ? (size_t)(nl - text) : len, n = end - i;
        if (n > 0 && text[i + n - 1] == '\r')
            n--;
        ps.line++;
        bad_lines += parse_line(km, &ps, text + i, n);
        i = end + 1;
    }
    return bad_lines;
}

size_t keymap_load(struct keymap *km, const char *path, const char *display, struct strbuf *err)
{
    char *text;
    size_t len;
    struct stat st;
    if (stat(path, &st) != 0 && errno == ENOENT)
        return 0; /* no keys of one's own: the defaults */
    struct strbuf why = STRBUF_INIT;
    if (file_read_regular(path, KEYS_MAX_SIZE, &text, &len, &why) != 0) {
        strbuf_addf(err, "%s\n", strbuf_str(&why));
        strbuf_free(&why);
        return 1;
    }
    strbuf_free(&why);
    size_t bad_lines = keymap_parse(km, text, len, display ? display : path, err);
    free(text);
    return bad_lines;
}

char *keymap_user_file(bool tilde)
{
    return paths_config_file("keys", tilde);
}

struct keymap *keymap_new_default(void)
{
    struct keymap *km = xcalloc(1, sizeof *km);
    /* The defaults are ours: test_keymap checks they parse without a complaint. */
    keymap_parse(km, default_keys_text, sizeof default_keys_text - 1, "default.keys", NULL);
    return km;
}

void keymap_free(struct keymap *km)
{
    if (km == NULL)
        return;
    for (int m = 0; m < MODE_COUNT; m++)
        free(km->modes[m].b);
    free(km);
}
