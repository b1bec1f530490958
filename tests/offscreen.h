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
#include <stdio.h>

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

#endif
