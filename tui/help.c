/*
 * help: the key list screen; see help.h.
 *
 * The text is laid out once, when the help opens, as lines of a kind
 * (heading, binding, plain text); drawing copies the lines that are in view
 * and the key column is as wide as the widest key list. Every line is
 * sanitized when it is made, so drawing needs no care.
 */
#include "tui/help.h"

#include <stdlib.h>
#include <string.h>

#include "tui/keymap.h"
#include "tui/term.h"
#include "util/strbuf.h"
#include "util/utf8.h"
#include "util/xalloc.h"

enum line_kind { LINE_TEXT, LINE_HEADING, LINE_BINDING };

struct line {
    enum line_kind kind;
    char *keys; /* LINE_BINDING: "PgDn, M-Right" */
    char *text; /* the action and its help, the heading, or the text */
};

struct help {
    const struct keymap *km;
    char *mode;
    char *title;
    struct line *lines;
    size_t n, cap;
    int keys_w; /* cells of the widest key list */
    int top;    /* first line in view */
    int end;    /* the first line not shown whole at the last draw */
    int rows;   /* screen rows for lines at the last draw */
    int w;      /* the screen's width at the last draw (0: not drawn yet) */
};

enum { KEYS_W_MAX = 24, ACTION_W = 14, LINE_ROWS_MAX = 4 };

/* Cells for line l's text at screen width w (a binding's beside its keys). */
static int text_w(const struct help *h, const struct line *l, int w)
{
    return l->kind == LINE_BINDING ? w - 1 - (3 + h->keys_w + 2) : w - 2;
}

/* Screen rows line l takes at width w: its text wrapped, never cut at the edge. */
static int line_rows(const struct help *h, const struct line *l, int w)
{
    int tw = text_w(h, l, w);
    if (l->kind == LINE_HEADING || tw <= 0)
        return 1;
    return widget_wrapped_lines(l->text, tw, LINE_ROWS_MAX);
}

static void add_line(struct help *h, enum line_kind kind, const char *keys, const char *text)
{
    if (h->n == h->cap) {
        h->cap = h->cap ? h->cap * 2 : 32;
        h->lines = xreallocarray(h->lines, h->cap, sizeof *h->lines);
    }
    struct strbuf sb = STRBUF_INIT;
    utf8_sanitize(&sb, text, strlen(text), 0);
    h->lines[h->n++] = (struct line){kind, keys ? xstrdup(keys) : NULL, strbuf_detach(&sb, NULL)};
    if (keys) {
        int w = (int)utf8_width(keys, strlen(keys));
        if (w > h->keys_w)
            h->keys_w = w > KEYS_W_MAX ? KEYS_W_MAX : w;
    }
}

/* What a help lists: the mode, its sub-mode, and which actions the screen has now. */
struct listing {
    const char *mode, *sub;
    bool (*shown)(void *ctx, enum keymap_action a);
    void *ctx;
};

/* Keeps of keys (", "-joined names) those that sub does not take over; into out. */
static void keys_not_in(const struct keymap *km, const char *sub, const char *keys,
                        struct strbuf *out)
{
    while (*keys) {
        size_t n = strcspn(keys, ",");
        char *name = xstrndup(keys, n);
        struct widget_key k;
        if (!sub || !keymap_key_parse(name, &k) || keymap_lookup_own(km, sub, &k) == KEYMAP_NONE)
            strbuf_addf(out, "%s%s", out->len ? ", " : "", name);
        free(name);
        keys += n;
        keys += strspn(keys, ", ");
    }
}

/*
 * The bindings of which (the sub-mode, the mode, or "global") under a
 * heading: own keys, or for global those the mode takes from it; keys a
 * sub-mode (listed before) takes over are left out.
 */
static void add_bindings(struct help *h, const struct listing *l, const char *which)
{
    bool global = strcmp(which, "global") == 0 && strcmp(l->mode, "global") != 0;
    const char *over = which == l->sub ? NULL : l->sub;
    struct strbuf heading = STRBUF_INIT;
    strbuf_addf(&heading, "%s — %s", which, keymap_mode_help(which));
    add_line(h, LINE_HEADING, NULL, strbuf_str(&heading));
    strbuf_free(&heading);
    size_t count = 0;
    for (int a = KEYMAP_NONE + 1; a < KEYMAP_ACTION_COUNT; a++) {
        if (l->shown && !l->shown(l->ctx, (enum keymap_action)a))
            continue;
        struct strbuf all = STRBUF_INIT, keys = STRBUF_INIT, text = STRBUF_INIT;
        keymap_keys_for(h->km, global ? l->mode : which, (enum keymap_action)a, !global, &all);
        keys_not_in(h->km, over, strbuf_str(&all), &keys);
        if (keys.len > 0) {
            strbuf_addf(&text, "%-*s %s", ACTION_W, keymap_action_name((enum keymap_action)a),
                        keymap_action_help((enum keymap_action)a));
            add_line(h, LINE_BINDING, strbuf_str(&keys), strbuf_str(&text));
            count++;
        }
        strbuf_free(&all);
        strbuf_free(&keys);
        strbuf_free(&text);
    }
    if (count == 0)
        add_line(h, LINE_TEXT, NULL, "  (no keys)");
    add_line(h, LINE_TEXT, NULL, "");
}

/* Each line of text (split at '\n') as a line of its own. */
static void add_text(struct help *h, const char *text)
{
    while (text && *text) {
        size_t n = strcspn(text, "\n");
        char *line = xstrndup(text, n);
        add_line(h, LINE_TEXT, NULL, line);
        free(line);
        text += n + (text[n] == '\n');
    }
}

struct help *help_new_for(const struct keymap *km, const char *mode, const char *sub,
                          const char *note, bool (*shown)(void *ctx, enum keymap_action a),
                          void *ctx)
{
    struct help *h = xcalloc(1, sizeof *h);
    h->km = km;
    h->mode = xstrdup(sub ? sub : mode);
    const char *what = keymap_mode_help(sub ? sub : mode);
    h->title = xasprintf(" Keys · %s", what ? what : mode);
    struct listing l = {mode, sub, shown, ctx};
    if (sub)
        add_bindings(h, &l, sub);
    add_bindings(h, &l, mode);
    if (strcmp(mode, "global") != 0)
        add_bindings(h, &l, "global");
    if (note && *note) {
        add_text(h, note);
        add_line(h, LINE_TEXT, NULL, "");
    }
    char *file = keymap_user_file(true);
    char *where = xasprintf("Rebind in %s: bind MODE KEY ACTION, or unbind MODE KEY", file);
    add_text(h, where);
    free(where);
    free(file);
    return h;
}

struct help *help_new(const struct keymap *km, const char *mode, const char *note)
{
    return help_new_for(km, mode, NULL, note, NULL, NULL);
}

void help_free(struct help *h)
{
    if (h == NULL)
        return;
    for (size_t i = 0; i < h->n; i++) {
        free(h->lines[i].keys);
        free(h->lines[i].text);
    }
    free(h->lines);
    free(h->mode);
    free(h->title);
    free(h);
}

/*
 * The top of the page before the one starting at top: the lines that fill
 * the rows above it, each whole (a line wraps over several rows).
 */
static long page_up(const struct help *h)
{
    int room = h->rows > 0 ? h->rows : 1;
    long t = h->top;
    while (t > 0 && room - line_rows(h, &h->lines[t - 1], h->w) >= 0)
        room -= line_rows(h, &h->lines[--t], h->w);
    return t < h->top ? t : h->top - 1;
}

/* The top of the next page: the first line the last draw did not show whole. */
static long page_down(const struct help *h)
{
    return h->end > h->top ? h->end : h->top + 1;
}

/* Scrolls to top, kept within the text: the last top shows the last line at the bottom. */
static void scroll_to(struct help *h, long top)
{
    long max = (long)h->n - (h->rows > 0 ? h->rows : 1);
    if (h->w > 0) {
        int room = h->rows > 0 ? h->rows : 1;
        max = (long)h->n;
        while (max > 0 && room - line_rows(h, &h->lines[max - 1], h->w) >= 0)
            room -= line_rows(h, &h->lines[--max], h->w);
    }
    if (top > max)
        top = max;
    if (top < 0)
        top = 0;
    h->top = (int)top;
}

bool help_key(struct help *h, const struct widget_key *k)
{
    if (!k->alt && ((!k->is_function && (k->code == 27 || k->code == 'q')) ||
                    (k->is_function && k->code == KEY_F(1))))
        return true;
    if (keymap_lookup(h->km, h->mode, k) == KEYMAP_HELP)
        return true;
    if (k->alt)
        return false;
    if (k->is_function) {
        switch (k->code) {
        case KEY_UP:
            scroll_to(h, h->top - 1);
            break;
        case KEY_DOWN:
            scroll_to(h, h->top + 1);
            break;
        case KEY_PPAGE:
            scroll_to(h, page_up(h));
            break;
        case KEY_NPAGE:
            scroll_to(h, page_down(h));
            break;
        case KEY_HOME:
            scroll_to(h, 0);
            break;
        case KEY_END:
            scroll_to(h, (long)h->n);
            break;
        }
    } else if (k->code == 'k') {
        scroll_to(h, h->top - 1);
    } else if (k->code == 'j') {
        scroll_to(h, h->top + 1);
    } else if (k->code == ' ') {
        scroll_to(h, page_down(h));
    }
    return false;
}

/* Draws line l from row y over rows rows, its text wrapped. */
static void draw_line(const struct help *h, const struct line *l, const struct term *t, int y,
                      int w, int rows)
{
    if (l->kind == LINE_HEADING) {
        attrset(t->role[THEME_ROLE_TITLE]);
        widget_put_clipped(stdscr, y, 1, w - 2, l->text, strlen(l->text), t->utf8);
        return;
    }
    if (l->kind == LINE_TEXT) {
        attrset(t->role[THEME_ROLE_HELP]);
        widget_put_wrapped(stdscr, y, 1, w - 2, l->text, rows, t->utf8);
        return;
    }
    int x = 3;
    attrset(t->role[THEME_ROLE_KEYBAR_KEY]);
    widget_put_clipped(stdscr, y, x, h->keys_w, l->keys, strlen(l->keys), t->utf8);
    x += h->keys_w + 2;
    attrset(t->role[THEME_ROLE_HELP]);
    if (x < w - 1)
        widget_put_wrapped(stdscr, y, x, w - 1 - x, l->text, rows, t->utf8);
}

void help_draw(struct help *h, const struct term *t)
{
    int lines = LINES, w = COLS;
    bkgdset(' ' | t->role[THEME_ROLE_NORMAL]);
    erase();
    attrset(t->role[THEME_ROLE_TITLE]);
    widget_put_clipped(stdscr, 0, 0, w, h->title, strlen(h->title), t->utf8);
    h->rows = lines - 3 > 0 ? lines - 3 : 1; /* title, a blank, the bottom line */
    h->w = w;
    scroll_to(h, h->top);
    int y = 2, end = 2 + h->rows;
    size_t last = (size_t)h->top;
    h->end = h->top;
    for (; last < h->n && y < end; last++) {
        int r = line_rows(h, &h->lines[last], w);
        if (r <= end - y)
            h->end = (int)last + 1;
        else
            r = end - y;
        draw_line(h, &h->lines[last], t, y, w, r);
        y += r;
    }
    char foot[160] = " Esc, q or F1 closes";
    if (h->top > 0 || (size_t)h->end < h->n) { /* it scrolls: say so, and where we are */
        size_t len = strlen(foot);
        snprintf(foot + len, sizeof foot - len,
                 " · Up/Down, PgUp/PgDn scroll · lines %d-%d of %zu", h->top + 1, h->end,
                 h->n);
    }
    attrset(t->role[THEME_ROLE_KEYBAR_LABEL]);
    widget_blank(stdscr, lines - 1, 0, w);
    widget_put_clipped(stdscr, lines - 1, 0, w, foot, strlen(foot), t->utf8);
    curs_set(0);
    wnoutrefresh(stdscr);
}
