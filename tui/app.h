/*
 * app: what a screen of the live view may know of the app around it, and
 * all it may know — the screens (tui/jobs_view.c, tui/job_view.c) include
 * this and no other screen's header; the app (tui/monitor.c, actions.c,
 * commands.c; its own state is tui/monitor_app.h) includes no screen's.
 * tui/top.c hands the app the screens' makers. The functions keep the
 * monitor_ prefix of the app that implements them.
 *
 * The app: the live screens after submit — `trainjob` with no verb in a
 * terminal, `trainjob top`, and the job a wizard just created. One event
 * loop (keys, resize, signals, timers, the backend's transfers through
 * api/http_multi), one jobstore kept current by the feed (watch stream, or
 * polling), a stack of screens (jobs → job), the `:` command line, the
 * status line, confirm dialogs and the actions (stop, start, delete,
 * priority, clone into the wizard, save as YAML, mark a node).
 *
 * Screens are a const table of functions (struct screen_ops), as htop's
 * Panel: the app reads a key, looks it up in the keymap for the screen's
 * mode, and hands the screen the key with the action's name; the screen
 * answers with widget result bits. Screens draw only in ops->draw, which
 * the app calls once per loop turn when something is dirty.
 */
#ifndef TUI_APP_H
#define TUI_APP_H

#include <curses.h>
#include <stdbool.h>
#include <stddef.h>

#include "tui/keymap.h"
#include "widgets/widget.h"

struct backend;
struct http_multi;
struct jobstore;
struct loop;
struct monitor;
struct term;
struct worker_info;

struct screen;

struct screen_ops {
    const char *mode; /* the keymap mode: "jobs", "job" */
    /*
     * Draws into w's rectangle (y, x, h rows, wd columns). full: the
     * rectangle was cleared or moved, so everything must be written again.
     */
    void (*draw)(struct screen *s, WINDOW *w, int y, int x, int h, int wd, bool full);
    /*
     * A key; action is what the keymap binds it to in this mode (or
     * "global"), or NULL. Returns widget result bits: WIDGET_IGNORED lets
     * the app try its own (quit, help, :).
     */
    unsigned (*key)(struct screen *s, const struct widget_key *k, const char *action);
    /* The store changed (a watch message, a poll). */
    void (*changed)(struct screen *s);
    /* A short title for the top bar ("jobs", "job pt-abc"), sanitized. */
    const char *(*title)(struct screen *s);
    /*
     * What the key bar shows for this screen, as pairs: an action's name
     * (the app shows the key the keymap binds to it, so a rebinding shows)
     * or a key as written ("Space"), then a label.
     */
    size_t (*hints)(struct screen *s, const char *const **pairs);
    void (*destroy)(struct screen *s);
    /*
     * The keymap mode whose own bindings come before mode's now, or NULL
     * (optional): "logs" while the job screen's log pane has the focus.
     */
    const char *(*submode)(struct screen *s);
};

struct screen {
    const struct screen_ops *ops;
    struct monitor *app;
    bool dirty;
};

/* ---- for screens --------------------------------------------------------- */

const struct term *monitor_term(const struct monitor *m);
struct jobstore *monitor_store(struct monitor *m);
struct backend *monitor_backend(struct monitor *m);
struct http_multi *monitor_multi(struct monitor *m);
struct loop *monitor_loop(struct monitor *m);
/*
 * The contexts in view: one, but in `top --context a,b` (or after `:ctx all`),
 * where the jobs view shows every context's jobs, each row with its context.
 * The store, backend and user above are the context the screen on top works
 * in (a job screen's: its job's).
 */
size_t monitor_context_count(const struct monitor *m);
/* Context i's name as the user wrote it. */
const char *monitor_context_name(const struct monitor *m, size_t i);
struct jobstore *monitor_context_store(struct monitor *m, size_t i);
/* Who context i's backend says the caller is, or NULL. */
const char *monitor_context_user(const struct monitor *m, size_t i);
/*
 * True while context i's backend cannot be reached (or refuses): its rows are
 * what it said last. *why: the reason, raw (sanitize before drawing).
 */
bool monitor_context_down(const struct monitor *m, size_t i, const char **why);
/* The context the app works in for what is not about a row (`n`: a new job). */
void monitor_focus_context(struct monitor *m, size_t i);
/* True in `top --readonly`: screens offer no actions. */
bool monitor_readonly(const struct monitor *m);
/*
 * Whether the screens have action a now: --readonly has none that change a
 * job or start the wizard. Key dispatch refuses the others and the help
 * leaves them out, from this one list.
 */
bool monitor_action_allowed(const struct monitor *m, enum keymap_action a);
/* Who the backend says the caller is (its catalog's user); NULL: it does not say (yet). */
const char *monitor_user(const struct monitor *m);
/*
 * A message on the status line (sanitized there); error: in the error role.
 * It belongs to the screen on top now: it goes when another screen is on top,
 * and after a few seconds (an error after longer).
 */
void monitor_status(struct monitor *m, bool error, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* As monitor_status, about job: it also goes once job's state changes or job is gone. */
void monitor_status_about(struct monitor *m, const char *job, bool error, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/*
 * Copies text to the clipboard through the terminal (OSC 52; tmux passes it
 * on with set-clipboard) and says so on the status line.
 */
void monitor_copy(struct monitor *m, const char *text);
/* Something changed: draw at the end of this loop turn. */
void monitor_dirty(struct monitor *m);
/*
 * Asks for a line of text in a prompt over the screen (title, what to type,
 * a suggestion); answer(ctx, text) on Enter, nothing on Esc.
 */
void monitor_ask(struct monitor *m, const char *title, const char *hint, const char *initial,
                 void (*answer)(void *ctx, const char *text), void *ctx);
/* The same as a list: one of options (selected first), answer(ctx, option) on Enter. */
void monitor_choose(struct monitor *m, const char *title, const char *hint,
                    const char *const *options, size_t n, size_t selected,
                    void (*answer)(void *ctx, const char *text), void *ctx);
/* Opens s over the current screen (the app owns it now) / closes the top one. */
void monitor_push(struct monitor *m, struct screen *s);
void monitor_pop(struct monitor *m);

/* What a screen can ask the app to do to jobs; destructive ones are confirmed first. */
enum monitor_action {
    MONITOR_STOP,
    MONITOR_START,
    MONITOR_DELETE,
    MONITOR_PRIORITY, /* asks for the new priority */
    MONITOR_CLONE,    /* opens the wizard prefilled with the job (one name) */
    MONITOR_SAVE,     /* asks for a path, writes the job as YAML (one name) */
    MONITOR_OPEN,     /* the job screen (one name) */
};
void monitor_act(struct monitor *m, enum monitor_action a, const char *const *names, size_t n);
/* The same, each name a job of its own context (ctxs[i]): every request goes to that backend. */
void monitor_act_in(struct monitor *m, enum monitor_action a, const char *const *names,
                    const size_t *ctxs, size_t n);
/* Marks node unschedulable for job (asks first); from the workers pane. */
void monitor_mark_node(struct monitor *m, const char *job, const char *node, bool unmark);
/* A shell in worker w of job, curses suspended until it ends (tui/shell.c); not read-only. */
void monitor_shell(struct monitor *m, const char *job, const struct worker_info *w);

/*
 * For tests and benchmarks: an app around store drawing with t (copied),
 * with no backend, loop or terminal of its own — enough for a screen's
 * draw and keys. Free with monitor_free_detached (store and t stay).
 */
struct monitor *monitor_new_detached(struct jobstore *store, const struct term *t, bool readonly);
void monitor_free_detached(struct monitor *m);
/*
 * A detached app's view over several contexts: the first (store above) is
 * named first, then add another store (kept, not freed) as context name;
 * returns its index. down: a reason for a stand-in lost feed, NULL: up.
 */
size_t monitor_detached_add_context(struct monitor *m, const char *name, struct jobstore *store);
void monitor_detached_set_down(struct monitor *m, size_t i, const char *why);

/* The program, `trainjob top` (and bare `trainjob` in a terminal), is tui_top_run in tui/tui.h. */

#endif
