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
    struct textfield *field;
    char *title, *hint; /* sanitized */
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

void prompt_free(struct prompt *p)
{
    if (p == NULL)
        return;
    textfield_free(p->field);
    free(p->title);
    free(p->hint);
    free(p);
}

enum prompt_state prompt_key(struct prompt *p, const struct widget_key *k)
{
    if (!k->is_function && !k->alt && k->code == 27)
        return PROMPT_CANCELED;
    struct widget *wd = textfield_widget(p->field);
    unsigned r = wd->ops->key(wd, k);
    return (r & WIDGET_FOCUS_NEXT) ? PROMPT_DONE : PROMPT_OPEN;
}

const char *prompt_value(const struct prompt *p)
{
    return textfield_value(p->field);
}

void prompt_draw(struct prompt *p, const struct term *t)
{
    int w = COLS - 4 < BOX_W_MAX ? COLS - 4 : BOX_W_MAX;
    if (w < 20)
        w = COLS;
    int y = (LINES - BOX_H) / 2, x = (COLS - w) / 2;
    if (y < 0)
        y = 0;
    attrset(t->role[THEME_ROLE_DIALOG]);
    for (int i = 0; i < BOX_H; i++)
        widget_blank(stdscr, y + i, x, w);
    attrset(t->role[THEME_ROLE_BORDER]);
    mvwhline(stdscr, y, x + 1, ACS_HLINE, w - 2);
    mvwhline(stdscr, y + BOX_H - 1, x + 1, ACS_HLINE, w - 2);
    mvwvline(stdscr, y + 1, x, ACS_VLINE, BOX_H - 2);
    mvwvline(stdscr, y + 1, x + w - 1, ACS_VLINE, BOX_H - 2);
    mvwaddch(stdscr, y, x, ACS_ULCORNER);
    mvwaddch(stdscr, y, x + w - 1, ACS_URCORNER);
    mvwaddch(stdscr, y + BOX_H - 1, x, ACS_LLCORNER);
    mvwaddch(stdscr, y + BOX_H - 1, x + w - 1, ACS_LRCORNER);
    attrset(t->role[THEME_ROLE_TITLE]);
    widget_put_clipped(stdscr, y, x + 2, w - 4, p->title, strlen(p->title), t->utf8);
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
