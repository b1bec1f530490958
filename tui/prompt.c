/*
 * prompt: the one-line question box; see prompt.h. It owns a textfield and
 * copies of its title and hint, and draws straight into stdscr: it is
 * drawn last, after the screen under it, in one doupdate.
 */
#include "tui/prompt.h"

#include <stdlib.h>
#include <string.h>

#include "tui/term.h"
#include "util/strbuf.h"
#include "util/utf8.h"
#include "util/xalloc.h"
#include "widgets/textfield.h"

struct prompt {
    struct textfield *field; /* NULL in a choice */
    char *title, *hint;      /* sanitized */
    char **options;          /* a choice: one of these (sanitized), by arrows or first letter */
    size_t option_count, selected;
};

enum { BOX_W_MAX = 76, BOX_H = 6 };

static char *sanitized(const char *s)
{
    struct strbuf sb = STRBUF_INIT;
    utf8_sanitize(&sb, s ? s : "", s ? strlen(s) : 0, 0);
    return strbuf_detach(&sb, NULL);
}

struct prompt *prompt_new(const char *title, const char *hint, const char *initial)
{
    struct prompt *p = xcalloc(1, sizeof *p);
    char *clean = sanitized(title);
    p->title = xasprintf(" %s ", clean); /* a blank either side on the border */
    free(clean);
    p->hint = sanitized(hint);
    char *init = sanitized(initial);
    p->field = textfield_new(init, 4096);
    free(init);
    return p;
}

struct prompt *prompt_new_choice(const char *title, const char *hint, const char *const *options,
                                 size_t n, size_t selected)
{
    struct prompt *p = xcalloc(1, sizeof *p);
    char *clean = sanitized(title);
    p->title = xasprintf(" %s ", clean);
    free(clean);
    p->hint = sanitized(hint);
    p->options = xcalloc(n ? n : 1, sizeof *p->options);
    for (size_t i = 0; i < n; i++)
        p->options[i] = sanitized(options[i]);
    p->option_count = n;
    p->selected = selected < n ? selected : 0;
    return p;
}

/* A key in a choice: arrows (and j/k) move, a letter goes to the next option starting with it. */
static enum prompt_state choice_key(struct prompt *p, const struct widget_key *k)
{
    if (p->option_count == 0)
        return PROMPT_CANCELED;
    if (k->is_function) {
        if (k->code == KEY_UP && p->selected > 0)
            p->selected--;
        else if (k->code == KEY_DOWN && p->selected + 1 < p->option_count)
            p->selected++;
        else if (k->code == KEY_HOME)
            p->selected = 0;
        else if (k->code == KEY_END)
            p->selected = p->option_count - 1;
        else if (k->code == KEY_ENTER)
            return PROMPT_DONE;
        return PROMPT_OPEN;
    }
    if (k->code == '\r' || k->code == '\n')
        return PROMPT_DONE;
    if (k->alt)
        return PROMPT_OPEN;
    if (k->code == 'k' && p->selected > 0) {
        p->selected--;
        return PROMPT_OPEN;
    }
    if (k->code == 'j' && p->selected + 1 < p->option_count) {
        p->selected++;
        return PROMPT_OPEN;
    }
    int c = k->code >= 'a' && k->code <= 'z' ? k->code - 32 : k->code;
    for (size_t step = 1; step <= p->option_count; step++) {
        size_t i = (p->selected + step) % p->option_count;
        int first = (unsigned char)p->options[i][0];
        if ((first >= 'a' && first <= 'z' ? first - 32 : first) == c) {
            p->selected = i;
            break;
        }
    }
    return PROMPT_OPEN;
}

/* A box over the screen's middle, h rows high: blank, bordered, titled. */
static void draw_box(struct prompt *p, const struct term *t, int y, int x, int w, int h)
{
    attrset(t->role[THEME_ROLE_DIALOG]);
    for (int i = 0; i < h; i++)
        widget_blank(stdscr, y + i, x, w);
    attrset(t->role[THEME_ROLE_BORDER]);
    mvwhline(stdscr, y, x + 1, ACS_HLINE, w - 2);
    mvwhline(stdscr, y + h - 1, x + 1, ACS_HLINE, w - 2);
    mvwvline(stdscr, y + 1, x, ACS_VLINE, h - 2);
    mvwvline(stdscr, y + 1, x + w - 1, ACS_VLINE, h - 2);
    mvwaddch(stdscr, y, x, ACS_ULCORNER);
    mvwaddch(stdscr, y, x + w - 1, ACS_URCORNER);
    mvwaddch(stdscr, y + h - 1, x, ACS_LLCORNER);
    mvwaddch(stdscr, y + h - 1, x + w - 1, ACS_LRCORNER);
    attrset(t->role[THEME_ROLE_TITLE]);
    widget_put_clipped(stdscr, y, x + 2, w - 4, p->title, strlen(p->title), t->utf8);
}

/* The choice: the hint (wrapped to two lines at most), then one option a line. */
static void choice_draw(struct prompt *p, const struct term *t)
{
    int w = COLS - 4 < BOX_W_MAX ? COLS - 4 : BOX_W_MAX;
    if (w < 20)
        w = COLS;
    int h = (int)p->option_count + 5;
    if (h > LINES)
        h = LINES;
    int y = (LINES - h) / 2, x = (COLS - w) / 2;
    if (y < 0)
        y = 0;
    draw_box(p, t, y, x, w, h);
    attrset(t->role[THEME_ROLE_DIALOG]);
    widget_put_clipped(stdscr, y + 1, x + 2, w - 4, p->hint, strlen(p->hint), t->utf8);
    for (size_t i = 0; i < p->option_count && (int)i + 3 < h - 1; i++) {
        bool sel = i == p->selected;
        attrset(sel ? t->role[THEME_ROLE_FIELD_FOCUS] : t->role[THEME_ROLE_DIALOG]);
        char *line = xasprintf("%s %s", sel ? (t->utf8 ? "▶" : ">") : " ", p->options[i]);
        widget_put_clipped(stdscr, y + 2 + (int)i, x + 2, w - 4, line, strlen(line), t->utf8);
        free(line);
    }
    static const char keys[] = "↑↓ choose · Enter OK · Esc cancel";
    static const char keys_ascii[] = "Up/Down choose - Enter OK - Esc cancel";
    attrset(t->role[THEME_ROLE_DIM]);
    const char *k = t->utf8 ? keys : keys_ascii;
    widget_put_clipped(stdscr, y + h - 2, x + 2, w - 4, k, strlen(k), t->utf8);
    curs_set(0);
    wnoutrefresh(stdscr);
}

void prompt_free(struct prompt *p)
{
    if (p == NULL)
        return;
    for (size_t i = 0; i < p->option_count; i++)
        free(p->options[i]);
    free(p->options);
    textfield_free(p->field);
    free(p->title);
    free(p->hint);
    free(p);
}

enum prompt_state prompt_key(struct prompt *p, const struct widget_key *k)
{
    if (!k->is_function && !k->alt && k->code == 27)
        return PROMPT_CANCELED;
    if (p->options)
        return choice_key(p, k);
    struct widget *wd = textfield_widget(p->field);
    unsigned r = wd->ops->key(wd, k);
    return (r & WIDGET_FOCUS_NEXT) ? PROMPT_DONE : PROMPT_OPEN;
}

const char *prompt_value(const struct prompt *p)
{
    if (p->options)
        return p->option_count ? p->options[p->selected] : "";
    return textfield_value(p->field);
}

void prompt_draw(struct prompt *p, const struct term *t)
{
    if (p->options) {
        choice_draw(p, t);
        return;
    }
    int w = COLS - 4 < BOX_W_MAX ? COLS - 4 : BOX_W_MAX;
    if (w < 20)
        w = COLS;
    int y = (LINES - BOX_H) / 2, x = (COLS - w) / 2;
    if (y < 0)
        y = 0;
    draw_box(p, t, y, x, w, BOX_H);
    attrset(t->role[THEME_ROLE_DIALOG]);
    widget_put_clipped(stdscr, y + 1, x + 2, w - 4, p->hint, strlen(p->hint), t->utf8);
    static const char keys[] = "Enter OK · Esc cancel";
    attrset(t->role[THEME_ROLE_DIM]);
    widget_put_clipped(stdscr, y + 4, x + 2, w - 4, keys, strlen(keys), t->utf8);
    attrset(t->role[THEME_ROLE_FIELD_FOCUS]);
    struct widget *wd = textfield_widget(p->field);
    wd->ops->draw(wd, stdscr, y + 3, x + 2, w - 4, true);
    curs_set(1);
    wnoutrefresh(stdscr);
}
