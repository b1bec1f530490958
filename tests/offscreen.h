/*
 * offscreen: the off-screen terminal every widget test draws into —
 * newterm on /dev/null under C.UTF-8 (wide characters need a UTF-8
 * locale), the terminfo size whatever LINES/COLUMNS say (80x24 for
 * xterm-256color), and a clean teardown so LeakSanitizer stays quiet.
 * Header-only: each test binary links the library and its own test file.
 */
#ifndef TESTS_OFFSCREEN_H
#define TESTS_OFFSCREEN_H

#include <curses.h>
#include <locale.h>
#include <stdint.h>
#include <stdio.h>

#include "util/strbuf.h"
#include "util/utf8.h"

struct offscreen {
    SCREEN *screen;
    FILE *out, *in;
};

/* Starts the terminal; 0, or -1 when it cannot (the test group then fails). */
static inline int offscreen_open(struct offscreen *o)
{
    if (!setlocale(LC_ALL, "C.UTF-8"))
        return -1;
    o->out = fopen("/dev/null", "w");
    o->in = fopen("/dev/null", "r");
    if (!o->out || !o->in)
        return -1;
    use_env(FALSE);
    o->screen = newterm("xterm-256color", o->out, o->in);
    return o->screen ? 0 : -1;
}

/* Deletes win (may be NULL) and ends the terminal. */
static inline void offscreen_close(struct offscreen *o, WINDOW *win)
{
    if (win)
        delwin(win);
    endwin();
    delscreen(o->screen);
    fclose(o->out);
    fclose(o->in);
}

/*
 * The text of w cells of win's row y from column x, as UTF-8, trailing
 * blanks cut, a two-cell character read once; malloc'd. NULL when a cell
 * cannot be read.
 */
static inline char *offscreen_text(WINDOW *win, int y, int x, int w)
{
    struct strbuf sb = STRBUF_INIT;
    for (int c = x; c < x + w; c++) {
        cchar_t cc;
        wchar_t wch[CCHARW_MAX + 1] = {0};
        attr_t a;
        short pair;
        char enc[4];
        if (mvwin_wch(win, y, c, &cc) != OK || getcchar(&cc, wch, &a, &pair, NULL) != OK) {
            strbuf_free(&sb);
            return NULL;
        }
        for (size_t i = 0; wch[i]; i++)
            strbuf_add(&sb, enc, utf8_encode((uint32_t)wch[i], enc));
        if (utf8_cpwidth((uint32_t)wch[0]) == 2)
            c++;
    }
    while (sb.len > 0 && sb.buf[sb.len - 1] == ' ')
        strbuf_truncate(&sb, sb.len - 1);
    return strbuf_detach(&sb, NULL);
}

/* The attributes of cell (y, x) of win (A_INVIS when it cannot be read). */
static inline attr_t offscreen_attr(WINDOW *win, int y, int x)
{
    cchar_t cc;
    wchar_t wch[CCHARW_MAX + 1] = {0};
    attr_t a = A_INVIS;
    short pair;
    if (mvwin_wch(win, y, x, &cc) != OK || getcchar(&cc, wch, &a, &pair, NULL) != OK)
        return A_INVIS;
    return a;
}

#endif
