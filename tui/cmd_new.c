/*
 * cmd_new: `trainjob new [-f FILE]` — the create-task wizard in the
 * terminal. Fetches the catalog from the backend (starting the local engine
 * when needed), runs the one event loop (keys, resize, signals, the
 * debounced validation timer; one draw per turn, only when something
 * changed), and submits. A file opens the wizard prefilled; its errors show
 * next to their fields rather than stopping the wizard.
 */
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/apierror.h"
#include "api/catalog.h"
#include "api/finding.h"
#include "api/jobfile.h"
#include "tui/cli.h"
#include "tui/session.h"
#include "tui/term.h"
#include "tui/wizard.h"
#include "util/loop.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

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
};

static void on_validate_timer(void *ctx)
{
    struct app *a = ctx;
    a->validate_timer = 0;
    wizard_validate(a->wz);
}

static void on_signal(void *ctx, int signo)
{
    struct app *a = ctx;
    if (signo == SIGWINCH)
        a->resized = true;
    else
        a->quit = true; /* SIGTERM, SIGHUP: leave, restoring the terminal */
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
            a->quit = true;
        } else {
            a->confirm_quit = true;
            snprintf(a->status, sizeof a->status,
                     "Leave without submitting? Esc again leaves; any other key stays");
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
    (void)revents;
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
    a.wz = wizard_new(&cat, file ? &jf.job : NULL,
                      have_session ? s.rc.ctx.workspace : g->workspace);
    run(&a);
    wizard_free(a.wz);
    loop_free(a.loop);
    term_stop(&a.term);
    int rc = EXIT_OK;
    if (a.submitted) {
        fprintf(out, "job %s created (%s)\n", a.created.name ? a.created.name : "?",
                enum_name(&job_state_names, (int)a.created.state));
        jobspec_free(&a.created);
    } else {
        fputs("trainjob new: left without submitting\n", err);
        rc = EXIT_INVALID;
    }
    if (have_session)
        session_close(&s);
    catalog_free(&cat);
    jobfile_free(&jf);
    return rc;
}
