/*
 * term: curses start/stop, theme → colour pairs → palette, key reading.
 * The fatal hook (xalloc) and every exit path restore the terminal before
 * anything is printed.
 */
#include "tui/term.h"

#include "api/paths.h"

#include <langinfo.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "util/strbuf.h"
#include "util/xalloc.h"

static bool curses_up;

static void restore_terminal(void)
{
    if (curses_up) {
        fputs("\033[?2004l", stdout); /* bracketed paste off */
        fflush(stdout);
        endwin();
        curses_up = false;
    }
}

/* THEME_ATTR_* bits as curses attributes. */
static attr_t curses_attrs(unsigned a)
{
    attr_t r = A_NORMAL;
    if (a & THEME_ATTR_BOLD)
        r |= A_BOLD;
    if (a & THEME_ATTR_DIM)
        r |= A_DIM;
    if (a & THEME_ATTR_UNDERLINE)
        r |= A_UNDERLINE;
    if (a & THEME_ATTR_REVERSE)
        r |= A_REVERSE;
#ifdef A_ITALIC
    if (a & THEME_ATTR_ITALIC)
        r |= A_ITALIC;
#endif
    return r;
}

/* A curses colour number for a resolved colour: -1 for the terminal's own. */
static int colour_number(const struct theme_color *c)
{
    if (c->kind == THEME_COLOR_INDEX && c->index >= 0 && c->index < COLORS)
        return c->index;
    return -1;
}

static void build_palette(struct term *t)
{
    bool colour = t->depth != THEME_DEPTH_MONO && has_colors();
    if (colour) {
        start_color();
        use_default_colors();
    }
    /* Truecolor needs a direct-colour terminfo; resolve as 256 otherwise. */
    enum theme_depth depth = t->depth == THEME_DEPTH_TRUECOLOR ? THEME_DEPTH_256 : t->depth;
    for (int r = 0; r < THEME_ROLE_COUNT; r++) {
        struct theme_style s = theme_resolve(t->theme, (enum theme_role)r, depth);
        attr_t a = curses_attrs(s.attrs);
        if (colour && r + 1 < COLOR_PAIRS) {
            init_pair((short)(r + 1), (short)colour_number(&s.fg), (short)colour_number(&s.bg));
            a |= COLOR_PAIR(r + 1);
        }
        t->role[r] = a;
    }
    struct widget_palette *p = &t->palette;
    p->normal = t->role[THEME_ROLE_NORMAL];
    p->dim = t->role[THEME_ROLE_DIM];
    p->label = t->role[THEME_ROLE_FIELD_LABEL];
    p->focus = t->role[THEME_ROLE_FIELD_FOCUS];
    p->selected = t->role[THEME_ROLE_SELECTED];
    p->error = t->role[THEME_ROLE_FIELD_ERROR];
    p->warning = t->role[THEME_ROLE_FIELD_WARNING];
    p->ok = t->role[THEME_ROLE_FIELD_OK];
    p->help = t->role[THEME_ROLE_DIM];
    p->title = t->role[THEME_ROLE_TITLE];
    p->border = t->role[THEME_ROLE_BORDER];
    p->key = t->role[THEME_ROLE_KEYBAR_KEY];
}

/*
 * A scheme by name or path: the user's ~/.config/trainjob/themes, then the
 * shipped directories (theme_search_dirs: installed tree or checkout).
 */
static int load_theme(const char *name, struct theme **out, char *err, size_t errsz)
{
    char *config = paths_config_dir();
    char **dirs = theme_search_dirs(config);
    free(config);
    struct strbuf why = STRBUF_INIT;
    int rc = theme_load(name, (const char *const *)dirs, out, &why);
    if (rc != 0)
        snprintf(err, errsz, "%s", strbuf_str(&why));
    strbuf_free(&why);
    theme_strv_free(dirs);
    return rc;
}

int term_set_theme(struct term *t, const char *name, char *err, size_t errsz)
{
    struct theme *th;
    if (load_theme(name, &th, err, errsz) != 0)
        return -1;
    theme_free(t->theme);
    t->theme = th;
    build_palette(t);
    return 0;
}

int term_start(struct term *t, const char *theme_name, char *err, size_t errsz)
{
    memset(t, 0, sizeof *t);
    if (theme_name) {
        if (load_theme(theme_name, &t->theme, err, errsz) != 0)
            return -1;
    } else {
        t->theme = theme_builtin_default();
    }
    const char *cs = nl_langinfo(CODESET);
    t->utf8 = cs && strcmp(cs, "UTF-8") == 0;
    xalloc_set_fatal_hook(restore_terminal);
    if (initscr() == NULL) {
        snprintf(err, errsz, "cannot start the terminal (TERM=%s)",
                 getenv("TERM") ? getenv("TERM") : "");
        return -1;
    }
    curses_up = true;
    cbreak();
    noecho();
    /* Ctrl-S submits and Ctrl-Q is free: no XON/XOFF flow control while we run
     * (curses restores the saved modes at endwin). */
    struct termios tio;
    if (tcgetattr(STDIN_FILENO, &tio) == 0) {
        tio.c_iflag &= ~(tcflag_t)(IXON | IXOFF);
        tcsetattr(STDIN_FILENO, TCSANOW, &tio);
        def_prog_mode(); /* so a resize (endwin + refresh) keeps it off */
    }
    nonl();
    keypad(stdscr, TRUE);
    nodelay(stdscr, TRUE);
    /* A frame goes out whole, in one write: with typeahead on, curses polls
     * the keyboard and flushes before every changed line (a tick of the ages
     * was ~40 writes and polls, each waking whoever reads the terminal). Our
     * frames are small; a key waits for the frame, not the reverse. */
    typeahead(-1);
    /* Bracketed paste: the terminal marks a paste; its markers read as two keys of ours. */
    define_key("\033[200~", TERM_KEY_PASTE_BEGIN);
    define_key("\033[201~", TERM_KEY_PASTE_END);
    fputs("\033[?2004h", stdout);
    fflush(stdout);
    set_escdelay(25);
    /* COLORS is known only once colour is started: without this every
     * terminal read as monochrome. NO_COLOR still wins in the detection. */
    const char *no_color = getenv("NO_COLOR");
    if (has_colors() && !(no_color && *no_color))
        start_color();
    t->depth = theme_detect_depth(getenv("TERM"), getenv("COLORTERM"), has_colors() ? COLORS : 0,
                                  no_color);
    build_palette(t);
    return 0;
}

/*
 * The keypad's application mode, sent now: ncurses would send it only at
 * its next read, after the key that woke that read already came in the
 * other mode (an arrow as Esc [ B).
 */
static void keypad_now(void)
{
    keypad(stdscr, TRUE);
    char *smkx = tigetstr("smkx");
    if (smkx && smkx != (char *)-1)
        putp(smkx);
    fflush(stdout);
}

/* Curses takes the terminal's size now, if it changed. */
static void size_now(void)
{
    struct winsize ws;
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 && ws.ws_col > 0 &&
        (ws.ws_row != LINES || ws.ws_col != COLS))
        resizeterm(ws.ws_row, ws.ws_col);
}

void term_resize(void)
{
    if (!curses_up)
        return;
    size_now(); /* no endwin: that would drop the keypad mode */
    keypad_now();
    clearok(curscr, TRUE);
}

void term_suspend(void)
{
    if (!curses_up)
        return;
    fputs("\033[?2004l", stdout); /* the other program's pastes are its own */
    fflush(stdout);
    def_prog_mode();
    endwin();
}

void term_resume(void)
{
    if (!curses_up)
        return;
    reset_prog_mode();
    size_now(); /* its SIGWINCH went to the other program */
    refresh();  /* curses takes the terminal back (its alternate screen too) */
    keypad_now();
    fputs("\033[?2004h", stdout);
    fflush(stdout);
    clearok(curscr, TRUE);
}

void term_stop(struct term *t)
{
    restore_terminal();
    if (t->theme) {
        theme_free(t->theme);
        t->theme = NULL;
    }
}

/*
 * Alt with an arrow or Delete arrives from most terminals as a key of its
 * own (kUP3, kDN3, kLFT3, kRIT3, kDC3 in terminfo): read as the arrow with alt.
 */
static struct widget_key alt_key(const struct widget_key *k)
{
    static const struct {
        const char *name;
        int code;
    } map[] = {{"kUP3", KEY_UP},
               {"kDN3", KEY_DOWN},
               {"kLFT3", KEY_LEFT},
               {"kRIT3", KEY_RIGHT},
               {"kDC3", KEY_DC}};
    struct widget_key out = *k;
    const char *name = k->is_function && !k->alt && k->code > KEY_MAX ? keyname(k->code) : NULL;
    for (size_t i = 0; name && i < sizeof map / sizeof map[0]; i++)
        if (strcmp(name, map[i].name) == 0) {
            out.code = map[i].code;
            out.alt = true;
        }
    return out;
}

bool term_read_key(struct widget_key *k)
{
    wint_t ch;
    int rc = wget_wch(stdscr, &ch);
    if (rc == ERR)
        return false;
    memset(k, 0, sizeof *k);
    if (rc == OK && ch == 27) {
        /* ESC: Alt-x when another key came with it, else Escape itself. */
        wint_t next;
        int rc2 = wget_wch(stdscr, &next);
        if (rc2 != ERR && !(rc2 == OK && next == 27)) {
            k->alt = true;
            k->code = (int)next;
            k->is_function = rc2 == KEY_CODE_YES;
            return true;
        }
    }
    k->code = (int)ch;
    k->is_function = rc == KEY_CODE_YES;
    *k = alt_key(k);
    return true;
}
