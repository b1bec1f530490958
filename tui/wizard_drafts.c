/*
 * wizard_drafts: the list `trainjob new` opens with when there is more than
 * one draft (see wizard_drafts.h). The drafts themselves are api/drafts.c's
 * (labels there are already safe for the terminal); tui/wizard_app.c
 * decides which draft a run writes and when the list is shown.
 */
#include <poll.h>
#include <stdio.h>
#include <unistd.h>

#include "tui/wizard_drafts.h"
#include "util/strbuf.h"
#include "widgets/widget.h"

/* One frame of the list: title, rows (sel highlighted), keys, and a line for what was said. */
static void draw_pick(struct term *t, const struct draft_list *l, size_t sel, const char *new_label,
                      const char *said)
{
    bkgdset(' ' | t->role[THEME_ROLE_NORMAL]);
    erase();
    int rows = LINES, cols = COLS;
    attrset(t->role[THEME_ROLE_TITLE]);
    widget_put_text(stdscr, 0, 1, "Unfinished jobs (drafts) — resume one?", cols - 2);
    attrset(t->role[THEME_ROLE_DIM]);
    widget_put_text(stdscr, 1, 1, "saved at (local time)     draft of", cols - 2);
    int top = 2, room = rows - 5;
    if (room < 1)
        room = 1;
    size_t first = sel >= (size_t)room ? sel - (size_t)room + 1 : 0;
    for (size_t i = first; i < l->count && (int)(i - first) < room; i++) {
        char when[64], line[600];
        drafts_when(l->items[i].mtime, when, sizeof when);
        snprintf(line, sizeof line, "%-25s %s", when, l->items[i].label);
        attrset(i == sel ? t->role[THEME_ROLE_SELECTED] : t->role[THEME_ROLE_NORMAL]);
        int y = top + (int)(i - first);
        mvhline(y, 0, ' ', cols);
        widget_put_text(stdscr, y, 1, line, cols - 2);
    }
    attrset(t->role[THEME_ROLE_MESSAGE]);
    if (said)
        widget_put_text(stdscr, rows - 2, 1, said, cols - 2);
    attrset(t->role[THEME_ROLE_DIM]);
    char keys[256];
    snprintf(keys, sizeof keys, "Enter resume   d discard   n/Esc start afresh (%s), drafts kept",
             new_label);
    widget_put_text(stdscr, rows - 1, 1, keys, cols - 2);
    attrset(A_NORMAL);
    wnoutrefresh(stdscr);
    doupdate();
}

long drafts_pick(struct term *t, struct draft_list *l, const char *new_label)
{
    size_t sel = 0;
    bool armed = false; /* d was pressed once on sel */
    char said[512] = "";
    while (l->count > 0) {
        if (sel >= l->count)
            sel = l->count - 1;
        draw_pick(t, l, sel, new_label, said[0] ? said : NULL);
        struct pollfd p = {STDIN_FILENO, POLLIN, 0};
        if (poll(&p, 1, -1) < 0)
            continue;
        if (p.revents & (POLLHUP | POLLERR | POLLNVAL))
            return -1;
        struct widget_key k;
        while (term_read_key(&k)) {
            bool was_armed = armed;
            armed = false;
            said[0] = '\0';
            if (k.is_function && k.code == KEY_RESIZE) {
                armed = was_armed;
            } else if (k.is_function && k.code == KEY_UP) {
                sel = sel ? sel - 1 : 0;
            } else if (k.is_function && k.code == KEY_DOWN) {
                sel = sel + 1 < l->count ? sel + 1 : sel;
            } else if (k.is_function && k.code == KEY_HOME) {
                sel = 0;
            } else if (k.is_function && k.code == KEY_END) {
                sel = l->count - 1;
            } else if (!k.is_function && (k.code == '\r' || k.code == '\n')) {
                return (long)sel;
            } else if (!k.is_function && !k.alt && (k.code == 'n' || k.code == 27)) {
                return -1;
            } else if (!k.is_function && !k.alt && k.code == 'd') {
                struct strbuf err = STRBUF_INIT;
                armed = !was_armed;
                snprintf(said, sizeof said, "%s the draft of %.300s",
                         armed ? "d again discards" : "discarded", l->items[sel].label);
                if (was_armed && drafts_discard(l, sel, &err) != 0)
                    snprintf(said, sizeof said, "not discarded: %.300s", strbuf_str(&err));
                strbuf_free(&err);
            }
            if (l->count == 0)
                break;
            if (sel >= l->count)
                sel = l->count - 1;
        }
    }
    return -1;
}
