/*
 * cmd_new: `trainjob new [-f FILE]` — the create-task wizard in the
 * terminal. Fetches the catalog from the backend (starting the local engine
 * when needed), runs the one event loop (keys, resize, signals, the
 * debounced validation timer; one draw per turn, only when something
 * changed), and submits. A file opens the wizard prefilled; its errors show
 * next to their fields rather than stopping the wizard.
 *
 * Drafts: every validated change is written (temp file + rename) to
 * ~/.local/state/trainjob/drafts/draft.yaml, and again on SIGHUP/SIGTERM
 * (a dropped SSH session, a killed tmux pane) before the terminal is
 * restored. The next `trainjob new` offers to resume it; a submitted job
 * removes it.
 */
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/apierror.h"
#include "api/catalog.h"
#include "api/finding.h"
#include "api/jobfile.h"
#include "api/paths.h"
#include "tui/cli.h"
#include "tui/session.h"
#include "tui/term.h"
#include "tui/wizard.h"
#include "util/fileio.h"
#include "util/loop.h"
#include "util/strbuf.h"
#include "util/timefmt.h"
#include "util/xalloc.h"
#include "widgets/dialog.h"

#define VALIDATE_AFTER_MS 250

struct app {
    struct loop *loop;
    struct term term;
    struct wizard *wz;
    struct backend *backend;
    bool resized, quit, confirm_quit;
    uint64_t validate_timer;
    char status[256];
    struct jobspec created;
    bool submitted;
    char *draft_path;
};

static char *draft_path(void)
{
    char *dir = paths_state_dir();
    char *p = xasprintf("%s/drafts/draft.yaml", dir);
    free(dir);
    return p;
}

/* Writes the form's job to the draft file; a failure shows on the status line. */
static void save_draft(struct app *a)
{
    if (!wizard_changed(a->wz))
        return;
    struct strbuf doc = STRBUF_INIT, err = STRBUF_INIT;
    jobfile_write(wizard_job(a->wz), JOBFILE_YAML, &doc);
    char *dir = xstrdup(a->draft_path);
    *strrchr(dir, '/') = '\0';
    if (file_mkdirs(dir, 0700, &err) != 0 ||
        file_write_atomic(a->draft_path, doc.buf, doc.len, 0600, &err) != 0)
        snprintf(a->status, sizeof a->status, "draft not saved: %.200s", strbuf_str(&err));
    free(dir);
    strbuf_free(&doc);
    strbuf_free(&err);
}

/* Asks (in a dialog) whether to resume the draft; true for yes. */
static bool ask_resume(struct app *a, const char *when)
{
    char msg[256];
    snprintf(msg, sizeof msg, "An unfinished job from %s was saved.\nResume it? (No discards it.)",
             when);
    struct dialog *d = dialog_new("Resume draft", msg, true);
    dialog_set_palette(d, &a->term.palette);
    bool answer = false;
    for (;;) {
        bkgdset(' ' | a->term.role[THEME_ROLE_NORMAL]);
        erase();
        wnoutrefresh(stdscr);
        dialog_draw(d);
        doupdate();
        struct pollfd p = {STDIN_FILENO, POLLIN, 0};
        if (poll(&p, 1, -1) < 0)
            continue;
        struct widget_key k;
        bool done = false;
        while (term_read_key(&k)) {
            unsigned r = dialog_widget(d)->ops->key(dialog_widget(d), &k);
            if (r & WIDGET_ACTIVATE) {
                answer = dialog_answer(d);
                done = true;
                break;
            }
        }
        if (done)
            break;
    }
    dialog_free(d);
    return answer;
}

static void on_validate_timer(void *ctx)
{
    struct app *a = ctx;
    a->validate_timer = 0;
    wizard_validate(a->wz);
    save_draft(a);
}

static void on_signal(void *ctx, int signo)
{
    struct app *a = ctx;
    if (signo == SIGWINCH)
        a->resized = true;
    else {
        save_draft(a); /* SIGTERM, SIGHUP: keep what was typed, then leave */
        a->quit = true;
    }
}

/* Redraws the whole screen now (before a blocking call, so the state shows). */
static void draw_now(struct app *a)
{
    wizard_draw(a->wz, &a->term, a->status);
    doupdate();
}

static void submit(struct app *a)
{
    wizard_validate(a->wz);
    size_t errors = wizard_error_count(a->wz);
    if (errors) {
        snprintf(a->status, sizeof a->status, "%zu error%s to fix before submitting (see Review)",
                 errors, errors == 1 ? "" : "s");
        return;
    }
    if (a->backend == NULL) {
        snprintf(a->status, sizeof a->status, "no backend to submit to (offline)");
        return;
    }
    snprintf(a->status, sizeof a->status, "Submitting…");
    draw_now(a);
    struct api_error err;
    jobspec_init(&a->created);
    if (backend_create(a->backend, wizard_job(a->wz), &a->created, &err) == BACKEND_OK) {
        a->submitted = true;
        a->quit = true;
        return;
    }
    jobspec_free(&a->created);
    snprintf(a->status, sizeof a->status, "rejected: %.200s", err.message);
    wizard_show_error(a->wz, err.field, err.message);
}

static void on_key(struct app *a, const struct widget_key *k)
{
    enum wizard_action act = wizard_key(a->wz, k);
    if (act != WIZARD_QUIT)
        a->confirm_quit = false;
    switch (act) {
    case WIZARD_SUBMIT:
        submit(a);
        break;
    case WIZARD_QUIT:
        if (!wizard_changed(a->wz) || a->confirm_quit) {
            save_draft(a);
            a->quit = true;
        } else {
            a->confirm_quit = true;
            snprintf(a->status, sizeof a->status,
                     "Leave without submitting? Esc again leaves (the draft is kept)");
        }
        break;
    case WIZARD_NONE:
        if (a->status[0] && !a->confirm_quit && k->code != 19)
            a->status[0] = '\0';
        break;
    }
    if (wizard_validation_pending(a->wz)) {
        if (a->validate_timer)
            loop_cancel(a->loop, a->validate_timer);
        a->validate_timer = loop_add_timer(a->loop, VALIDATE_AFTER_MS, on_validate_timer, a);
    }
}

static void on_stdin(void *ctx, int fd, short revents)
{
    struct app *a = ctx;
    (void)fd;
    if (revents & (POLLHUP | POLLERR | POLLNVAL)) {
        /* The terminal went away (SSH dropped): keep the draft and leave. */
        save_draft(a);
        a->quit = true;
        return;
    }
    struct widget_key k;
    while (!a->quit && term_read_key(&k)) {
        if (k.is_function && k.code == KEY_RESIZE)
            a->resized = true;
        else
            on_key(a, &k);
    }
}

/* The loop: wait, handle, draw once if anything changed. */
static void run(struct app *a)
{
    loop_add_fd(a->loop, STDIN_FILENO, POLLIN, on_stdin, a);
    loop_add_signal(a->loop, SIGWINCH, on_signal, a);
    loop_add_signal(a->loop, SIGTERM, on_signal, a);
    loop_add_signal(a->loop, SIGHUP, on_signal, a);
    bool first = true;
    while (!a->quit) {
        if (a->resized) {
            endwin();
            refresh();
            a->resized = false;
            first = true;
        }
        if (first || wizard_dirty(a->wz) || a->status[0]) {
            draw_now(a);
            first = false;
        }
        loop_run_once(a->loop, -1);
    }
}

int cmd_new(const struct cli_globals *g, int argc, char **argv, FILE *out, FILE *err)
{
    static const struct option longopts[] = {
        {"file", required_argument, NULL, 'f'},
        {"theme", required_argument, NULL, 'T'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *file = NULL, *theme = NULL;
    int c;
    optind = 0;
    while ((c = getopt_long(argc, argv, "f:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'f':
            file = optarg;
            break;
        case 'T':
            theme = optarg;
            break;
        case 'h':
            fputs("usage: trainjob new [-f FILE] [--theme NAME]\n"
                  "Opens the create-task wizard; with -f, prefilled from a job file.\n",
                  out);
            return EXIT_OK;
        default:
            fprintf(err, "trainjob new: unknown option '%s'\n", argv[optind - 1]);
            return EXIT_USAGE;
        }
    }
    if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
        fputs("trainjob new: needs a terminal (use `trainjob submit -f FILE` in scripts)\n", err);
        return EXIT_USAGE;
    }
    struct app a;
    memset(&a, 0, sizeof a);
    struct jobfile jf;
    jobfile_init(&jf);
    if (file) {
        struct findings fs = FINDINGS_INIT;
        struct strbuf io = STRBUF_INIT;
        enum jobfile_result rc = jobfile_load(file, &jf, &fs, &io);
        if (rc == JOBFILE_UNREADABLE) {
            fprintf(err, "trainjob: %s\n", strbuf_str(&io));
            strbuf_free(&io);
            findings_free(&fs);
            jobfile_free(&jf);
            return EXIT_USAGE;
        }
        if (fs.count)
            snprintf(a.status, sizeof a.status,
                     "%s: %zu problem%s reading the file; the form shows what it could", file,
                     fs.count, fs.count == 1 ? "" : "s");
        strbuf_free(&io);
        findings_free(&fs);
    }
    struct session s;
    struct catalog cat;
    memset(&cat, 0, sizeof cat);
    bool have_session = session_open(g, &s, err) == EXIT_OK;
    if (have_session) {
        struct api_error aerr;
        if (backend_catalog(s.b, &cat, &aerr) != BACKEND_OK)
            snprintf(a.status, sizeof a.status, "offline: no catalog (%.200s)", aerr.message);
        a.backend = s.b;
    }
    char why[512];
    if (term_start(&a.term, theme, why, sizeof why) != 0) {
        fprintf(err, "trainjob: %s\n", why);
        if (have_session)
            session_close(&s);
        catalog_free(&cat);
        jobfile_free(&jf);
        return EXIT_USAGE;
    }
    a.loop = loop_new();
    a.draft_path = draft_path();
    /* Without a file, an unfinished draft is offered first. */
    struct jobfile draft;
    jobfile_init(&draft);
    bool use_draft = false;
    struct stat st;
    if (!file && stat(a.draft_path, &st) == 0) {
        char when[TIMEFMT_RFC3339_LEN];
        time_rfc3339((int64_t)st.st_mtime * 1000, when);
        struct findings dfs = FINDINGS_INIT;
        struct strbuf io = STRBUF_INIT;
        if (ask_resume(&a, when))
            use_draft = jobfile_load(a.draft_path, &draft, &dfs, &io) != JOBFILE_UNREADABLE;
        else
            unlink(a.draft_path);
        findings_free(&dfs);
        strbuf_free(&io);
    }
    const struct jobspec *initial = file ? &jf.job : use_draft ? &draft.job : NULL;
    a.wz = wizard_new(&cat, initial, have_session ? s.rc.ctx.workspace : g->workspace);
    run(&a);
    jobfile_free(&draft);
    wizard_free(a.wz);
    loop_free(a.loop);
    term_stop(&a.term);
    int rc = EXIT_OK;
    if (a.submitted) {
        unlink(a.draft_path);
        fprintf(out, "job %s created (%s)\n", a.created.name ? a.created.name : "?",
                enum_name(&job_state_names, (int)a.created.state));
        jobspec_free(&a.created);
    } else {
        fprintf(err, "trainjob new: left without submitting%s\n",
                access(a.draft_path, F_OK) == 0 ? "; `trainjob new` offers the draft again" : "");
        rc = EXIT_INVALID;
    }
    free(a.draft_path);
    if (have_session)
        session_close(&s);
    catalog_free(&cat);
    jobfile_free(&jf);
    return rc;
}
