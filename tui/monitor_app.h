/*
 * monitor_app: the live screens' app state, shared by its parts —
 * tui/monitor.c (the loop, the screens, the frame, keys), tui/actions.c
 * (what is done to jobs, with confirms and prompts), tui/commands.c (the
 * `:` command line) and tui/monitor_contexts.c (the contexts in view) —
 * and tui/top.c, which plugs the screens, the
 * actions and the command line into the core (struct monitor_parts), so
 * actions and commands use the core and the core uses neither. Not for
 * screens: they use tui/app.h.
 */
#ifndef TUI_MONITOR_APP_H
#define TUI_MONITOR_APP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/catalog.h"
#include "api/session.h"
#include "tui/app.h"
#include "tui/term.h"
#include "tui/tui.h"

struct strbuf;

#define MAX_SCREENS 8
#define FRAME_MIN_MS 33       /* ~30 frames a second at most, but for keys */
#define STATUS_INFO_MS 8000   /* an information on the status line goes after this */
#define STATUS_ERROR_MS 30000 /* an error, after this */

struct dialog;
struct feed;
struct help;
struct keymap;
struct prompt;

typedef void (*confirm_fn)(struct monitor *m);

#define MONITOR_MAX_CONTEXTS 16 /* `top --context a,b,…`: contexts in one view at most */

/*
 * One context in view: its backend, the jobs its feed keeps and its catalog.
 * A single-context top has one; `top --context a,b` (or `:ctx all`) one per
 * name, each fed on the same loop. Kept in place in struct monitor, so a
 * reply in flight always finds its context (app: back to the monitor).
 */
struct monitor_ctx {
    struct monitor *app;
    char *name; /* the context's name as asked for; NULL: the one the target resolves to */
    struct session session;
    struct jobstore *store;
    struct feed *feed;      /* NULL in a detached app */
    struct catalog catalog; /* for the devices of a spec; empty where the backend has none */
    struct backend_call *catalog_call; /* asking for it; ended with the context */
    char *detached_down;               /* a detached app's stand-in for a lost feed (tests): why */
};

/*
 * What the program composing the app (tui/top.c) plugs into it: the screens,
 * and the app's key actions that live beside tui/monitor.c, so the core
 * calls them without including or linking to them.
 */
struct monitor_parts {
    struct screen *(*first)(struct monitor *m);                            /* at the bottom */
    struct screen *(*job_screen)(struct monitor *m, const char *job_name); /* Enter on a job */
    void (*new_job)(struct monitor *m, const char *file); /* `n`: the wizard (tui/actions.c) */
    void (*command_line)(struct monitor *m);              /* `:` (tui/commands.c) */
};

struct monitor {
    struct loop *loop;
    struct http_multi *multi;
    struct term term;
    struct session_target target;      /* as given, then what :ctx chose */
    char *context;                     /* the string :ctx set target.context to */
    const struct monitor_parts *parts; /* NULL in a detached app */
    /*
     * The contexts in view (one but in a view over several) and the one the
     * screen on top works in: a job screen's is its job's, remembered per
     * screen in screen_ctx and back when the screen above is closed.
     */
    struct monitor_ctx ctx[MONITOR_MAX_CONTEXTS];
    size_t nctx;
    size_t focus;
    size_t screen_ctx[MAX_SCREENS];
    struct keymap *keys;
    struct screen *screens[MAX_SCREENS];
    size_t depth;
    bool readonly;
    int refresh_ms;
    bool dirty, full, quit, resized;
    bool now;              /* draw this turn (a key was handled) */
    bool store_changed;    /* the screens re-read the store before the next frame */
    int64_t last_frame_ms; /* loop_now_ms of the last frame */
    uint64_t frame_timer;  /* the next frame, when one is held back */
    /*
     * The status line belongs to the screen and moment it was said: it shows
     * only while the screen that said it is on top (status_screen, a number
     * from screen_ids; 0: said before any screen), goes after STATUS_INFO_MS
     * or STATUS_ERROR_MS, and a status about a job goes when that job's state
     * changes or it leaves the store ("stopping 1 job" once it stopped).
     */
    char status[512];
    bool status_error;
    uint64_t status_screen;
    uint64_t status_timer;
    char *status_about;      /* the job the status describes, or NULL */
    int status_about_state;  /* its state when said; -1: not in the store */
    size_t status_about_ctx; /* the context it is in (the focus when said) */
    uint64_t screen_ids[MAX_SCREENS];
    uint64_t next_screen_id;
    uint64_t age_timer;
    /* at most one of these is open over the screens */
    struct prompt *prompt;
    void (*prompt_answer)(void *ctx, const char *text);
    void *prompt_ctx;
    struct dialog *dialog;
    confirm_fn dialog_yes;
    struct help *help;
    /* what a confirmed or asked-for action works on: names, each in its context */
    enum monitor_action pending;
    char **names;
    size_t *name_ctx;
    size_t name_count;
    char *arg;            /* the save path, the node to mark */
    char *open_when_seen; /* a job to open once the feed has it (--job, a wizard's submit) */
    size_t open_ctx;      /* ... in this context; SIZE_MAX: in whichever has it first */
};

/* The context the screen on top works in. */
static inline struct monitor_ctx *monitor_cur(struct monitor *m)
{
    return &m->ctx[m->focus];
}
/* True when more than one context is in view. */
static inline bool monitor_multi_view(const struct monitor *m)
{
    return m->nctx > 1;
}

/* tui/monitor.c */
/* Runs the jobs view made of parts until the user quits (tui_top_run). */
int monitor_run(const struct tui_top_opts *o, const struct monitor_parts *parts, FILE *err);
/* Pushes the job screen for name (parts->job_screen), or says there is none. */
void monitor_open_job(struct monitor *m, const char *name);
/* The same for a job of context ctx (the job screen then works in it). */
void monitor_open_job_in(struct monitor *m, size_t ctx, const char *name);
/* The names an action works on, copied (NULL, 0: none), in the context on top. */
void monitor_set_names(struct monitor *m, const char *const *names, size_t n);
/* The same, each in its own context (ctxs[i]; NULL: the context on top). */
void monitor_set_names_in(struct monitor *m, const char *const *names, const size_t *ctxs,
                          size_t n);
/* The screen on top. */
struct screen *monitor_top(struct monitor *m);
/* A yes/no box; yes(m) when answered yes. */
void monitor_confirm(struct monitor *m, const char *title, const char *question, confirm_fn yes);
/* The store or the feed changed: screens refresh, a job waiting to be opened opens. */
void monitor_feed_changed(void *ctx);
/* A new store and feed for each context in view (another workspace or context). */
void monitor_restart_feed(struct monitor *m);
/* Context c's store and feed, new and started, its catalog asked for (replies: from the loop). */
void monitor_ctx_start(struct monitor *m, struct monitor_ctx *c);
/*
 * Opens the contexts of spec (see monitor_context_list) in place of those in
 * view, with their feeds; on failure keeps those in view and says why in err.
 */
int monitor_open_contexts(struct monitor *m, const char *spec, struct strbuf *err);

/* tui/monitor_contexts.c: what the core uses of the contexts, using nothing of the core */
/* Ends context c: its feed, store, catalog and session. */
void monitor_ctx_end(struct monitor_ctx *c);
/*
 * Opens a session for each context spec names into fresh (zeroed, room for
 * MONITOR_MAX_CONTEXTS); the count, or 0 with why in err and nothing open.
 */
size_t monitor_open_sessions(const struct monitor *m, const char *spec, struct monitor_ctx *fresh,
                             struct strbuf *err);
/*
 * The context names spec stands for — "a,b" (each once, in order) or "all"
 * (every context of the config file; "local" without one) — as malloc'd
 * strings into names (room for MONITOR_MAX_CONTEXTS). Returns the count, or 0
 * with why in err (an empty name, too many).
 */
size_t monitor_context_list(const char *spec, char **names, struct strbuf *err);

/* tui/actions.c */
/* Runs the wizard on the terminal (prefilled from file when not NULL). */
void monitor_run_wizard(struct monitor *m, const char *file);

/* tui/commands.c */
/* Asks for a `:` command and does it. */
void monitor_command_line(struct monitor *m);

#endif
