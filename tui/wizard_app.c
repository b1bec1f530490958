/*
 * wizard_app: the program behind `trainjob new [-f FILE]` (tui_wizard_run
 * in tui/tui.h; cli/cmd_new.c parses the verb) — the create-task wizard in
 * the terminal. Fetches the catalog from the backend (starting the local engine
 * when needed), runs the one event loop (keys, resize, signals, the
 * debounced validation timer; one draw per turn, only when something
 * changed), and submits. A file opens the wizard prefilled; its errors show
 * next to their fields rather than stopping the wizard.
 *
 * Drafts: one per job being edited (a new job, a clone of X, an edit of
 * file F; api/drafts.c). Every validated change is written (temp
 * file + rename) to that job's draft in ~/.local/state/trainjob/drafts/,
 * and again on SIGHUP/SIGTERM (a dropped SSH session, a killed tmux pane)
 * before the terminal is restored. `trainjob new` offers the draft there is
 * (more than one: a list with their local times, to pick or discard);
 * `new -f F` and a clone offer only their own. A submitted job removes its
 * draft.
 *
 * Keys come from the keymap (tui/default.keys, then ~/.config/trainjob/keys;
 * a bad line there is reported on the status line and skipped). Over the
 * form at most one of these is open, and takes the keys while it is: the
 * help (F1, or ? outside a text field), the path prompt of F2 (save the
 * form as a job file) and F3 (load one, the way -f does), and the confirm
 * box before replacing a file or the form's unsaved changes.
 */
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "api/apierror.h"
#include "api/catalog.h"
#include "api/drafts.h"
#include "api/finding.h"
#include "api/http_multi.h"
#include "api/jobfile.h"
#include "api/paths.h"
#include "api/session.h"
#include "tui/help.h"
#include "tui/keymap.h"
#include "tui/prompt.h"
#include "tui/term.h"
#include "tui/tui.h"
#include "tui/wizard.h"
#include "tui/wizard_drafts.h"
#include "util/fileio.h"
#include "util/loop.h"
#include "util/strbuf.h"
#include "util/timefmt.h"
#include "util/utf8.h"
#include "util/xalloc.h"
#include "widgets/dialog.h"

#define VALIDATE_AFTER_MS 250

/* What the open prompt or confirm box is asking for. */
enum question {
    ASK_SAVE_PATH,    /* prompt: save the form where? */
    ASK_LOAD_PATH,    /* prompt: load which file? */
    ASK_OVERWRITE,    /* confirm: replace the file at pending_path? */
    ASK_DISCARD_FORM, /* confirm: load pending_path over unsaved changes? */
    ASK_WORKSPACE,    /* prompt: the name of a new workspace */
};

/* The keys of the form's own widgets: not bindings, but a user looks for them in the help. */
static const char field_keys_note[] =
    "In the form (the fields' own keys):\n"
    "  Tab, S-Tab       next / previous field (past the last one: the next section)\n"
    "  Enter            open a list; in a text field, go on to the next field\n"
    "  C-a, C-e         start / end of the text      C-k, C-u  delete to the end / start\n"
    "  C-w              delete the word before       C-y       paste what was deleted\n"
    "  M-n, Insert      add a row to a list          M-d       remove the row\n"
    "  M-Up, M-Down     move the row                 t         on Review: YAML or JSON";

struct app {
    struct loop *loop;
    struct term term;
    struct wizard *wz;
    struct backend *backend;
    struct catalog *cat; /* replaced after a new workspace */
    const char *default_workspace;
    struct keymap *km;
    char *keys_note; /* what was wrong in the user's keys file, for the help */
    bool resized, quit, confirm_quit, redraw;
    bool pasting;  /* between the terminal's paste markers */
    int paste_cut; /* lines of this paste not typed: the field takes one line (0: none) */
    uint64_t validate_timer;
    char status[256];
    struct jobspec created;
    bool submitted;
    char *draft_path;
    char *draft_label;    /* what the draft is of: "new job", "clone of X", "edit of F" */
    char *context;        /* the context's name, kept in the draft (NULL: none) */
    bool draft_kept;      /* this run wrote the draft, or resumed one (it stays until submitted) */
    char *file;           /* the job file the form last came from or went to */
    const char *clone_of; /* --clone-of: the job this one copies (its -f file is a temporary) */

    /* at most one of these is open over the form */
    struct help *help;
    struct prompt *prompt;
    struct dialog *confirm;
    enum question asking;
    char *pending_path; /* the path the confirm box asks about */

    /* the name field's uniqueness, asked of the backend without blocking */
    struct http_multi *multi;
    struct name_check {
        char *workspace, *name; /* the last pair asked about */
        enum { NAME_ASKING, NAME_TAKEN, NAME_FREE } state;
        struct backend_call *call;
    } names;
    struct backend_call *submitting;  /* a submit the server has not answered yet */
    struct backend_call *workspacing; /* a new workspace, or the catalog after it */
    char *new_workspace;              /* its name */
};

/* Puts a message on the status line (cut to its size), for the next draw. */
static void say(struct app *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(struct app *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(a->status, sizeof a->status, fmt, ap);
    va_end(ap);
}

/* The backend's answer about a name: taken on a 200, free on anything else (never block a submit
 * on a failed check: the server has the last word). */
static void on_name_reply(void *ctx, struct backend_reply *r)
{
    struct app *a = ctx;
    a->names.call = NULL;
    a->names.state = r->status == BACKEND_OK ? NAME_TAKEN : NAME_FREE;
    if (a->names.state == NAME_TAKEN) {
        wizard_validate(a->wz);
        a->redraw = true;
    }
}

/*
 * validate's name_taken: what the backend said of this name, and a GET
 * of it sent when it is a new one (validation already waits for a pause
 * in typing, so this is debounced with it).
 */
static bool name_taken(void *ctx, const char *workspace, const char *name)
{
    struct app *a = ctx;
    struct name_check *nc = &a->names;
    if (nc->workspace && nc->name && strcmp(nc->workspace, workspace) == 0 &&
        strcmp(nc->name, name) == 0)
        return nc->state == NAME_TAKEN;
    if (a->backend == NULL || a->multi == NULL)
        return false;
    backend_call_cancel(nc->call);
    free(nc->workspace);
    free(nc->name);
    nc->workspace = xstrdup(workspace);
    nc->name = xstrdup(name);
    nc->state = NAME_ASKING;
    backend_set_workspace(a->backend, workspace);
    struct backend_request rq = {.op = BACKEND_OP_GET, .name = name};
    nc->call = backend_send(a->backend, a->multi, &rq, on_name_reply, NULL, NULL, a);
    return false;
}

/* Writes the form's job to this job's draft; a failure shows on the status line. */
static void save_draft(struct app *a)
{
    if (!wizard_changed(a->wz))
        return;
    struct strbuf err = STRBUF_INIT;
    if (drafts_write(a->draft_path, a->draft_label, a->context, wizard_job(a->wz), &err) != 0)
        say(a, "draft not saved: %.200s", strbuf_str(&err));
    else
        a->draft_kept = true;
    strbuf_free(&err);
}

enum resume_answer { RESUME_IT, DISCARD_IT, KEEP_IT };

/*
 * Asks (in a dialog) whether to resume draft d: yes resumes it, no discards
 * it, k starts afresh and keeps it for another time.
 */
static enum resume_answer ask_resume(struct app *a, const struct draft *dr)
{
    char when[64], msg[640];
    drafts_when(dr->mtime, when, sizeof when);
    snprintf(msg, sizeof msg,
             "An unfinished job (%.300s) from %s was saved.\nResume it? (No discards it;\n"
             "k starts afresh and keeps it.)",
             dr->label, when);
    struct dialog *d = dialog_new("Resume draft", msg, true);
    dialog_set_palette(d, &a->term.palette);
    enum resume_answer answer = DISCARD_IT;
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
            if (!k.is_function && !k.alt && (k.code == 'k' || k.code == 'K')) {
                answer = KEEP_IT;
                done = true;
                break;
            }
            unsigned r = dialog_widget(d)->ops->key(dialog_widget(d), &k);
            if (r & WIDGET_ACTIVATE) {
                answer = dialog_answer(d) ? RESUME_IT : DISCARD_IT;
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

/*
 * The default bindings, then the user's keys file. What is wrong in it
 * goes to the status line (the first problem) and to the help (all).
 */
static struct keymap *load_keymap(struct app *a)
{
    struct keymap *km = keymap_new_default();
    char *path = keymap_user_file(false), *shown = keymap_user_file(true);
    struct strbuf errs = STRBUF_INIT;
    size_t bad = keymap_load(km, path, shown, &errs);
    if (bad) {
        const char *e = strbuf_str(&errs);
        say(a, "%.*s%s", (int)strcspn(e, "\n"), e, bad > 1 ? " (and more: F1 lists them)" : "");
        a->keys_note = xasprintf("%s\n\nProblems in %s (those lines are skipped):\n%s",
                                 field_keys_note, shown, e);
    }
    strbuf_free(&errs);
    free(shown);
    free(path);
    return km;
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
    if (a->help) {
        help_draw(a->help, &a->term);
    } else {
        wizard_draw(a->wz, &a->term, a->status);
        if (a->clone_of) { /* the title says what the form is of, not "new job" */
            struct strbuf title = STRBUF_INIT;
            strbuf_adds(&title, " trainjob · ");
            utf8_sanitize(&title, a->draft_label, strlen(a->draft_label), 0);
            attrset(a->term.role[THEME_ROLE_TITLE]);
            widget_put_clipped(stdscr, 0, 0, COLS, strbuf_str(&title), title.len, a->term.utf8);
            strbuf_free(&title);
            wnoutrefresh(stdscr);
        }
        if (a->prompt)
            prompt_draw(a->prompt, &a->term);
        if (a->confirm) {
            dialog_set_palette(a->confirm, &a->term.palette);
            dialog_draw(a->confirm);
        }
    }
    doupdate();
    a->redraw = false;
}

/* The form anew over job (NULL: empty); the old one goes, with its validation pending. */
static void new_form(struct app *a, const struct jobspec *job)
{
    if (a->validate_timer) {
        loop_cancel(a->loop, a->validate_timer);
        a->validate_timer = 0;
    }
    wizard_free(a->wz);
    a->wz = wizard_new(a->cat, job, a->default_workspace, a->km);
    wizard_set_name_check(a->wz, name_taken, a);
    a->redraw = true;
}

/* ---- Job files: -f at the start and F3 open them the same way ---- */

/*
 * Opens the form on job (NULL: empty), what reading path found wrong (fs)
 * shown at its fields, and says so on the status line. The old form, if
 * any, goes.
 */
static void open_form(struct app *a, const struct jobspec *job, const struct findings *fs,
                      const char *path)
{
    new_form(a, job);
    const struct finding *first;
    size_t unplaced = wizard_set_file_findings(a->wz, fs, &first);
    if (fs->count == 0 && !a->status[0] && a->clone_of) /* its file is ours, not the user's */
        say(a, "a new job with the spec of %.200s: C-s submits it", a->clone_of);
    else if (fs->count == 0 && !a->status[0]) /* (a problem with the keys file says more) */
        say(a, "loaded %s", path);
    else if (first) /* what no field can show goes here, with where it is */
        say(a, "%s:%d:%d: %s%s%s%s", path, first->line, first->col, first->path,
            *first->path ? ": " : "", first->message,
            fs->count - unplaced > 0 ? " (more at the fields)"
            : unplaced > 1           ? " (more on Review)"
                                     : "");
    else if (fs->count)
        snprintf(a->status, sizeof a->status,
                 "%s: %zu problem%s reading the file, shown at the fields", path, fs->count,
                 fs->count == 1 ? "" : "s");
    free(a->file);
    a->file = a->clone_of ? NULL : xstrdup(path); /* F2 offers ./NAME.yaml for a clone */
}

/*
 * F3: the job file at path into the form, as -f opens one. A file that
 * cannot be read, or is no YAML/JSON document at all, leaves the form as
 * it is and says why.
 */
static void load_job_file(struct app *a, const char *path)
{
    struct jobfile jf;
    jobfile_init(&jf);
    struct findings fs = FINDINGS_INIT;
    struct strbuf io = STRBUF_INIT;
    enum jobfile_result rc = jobfile_load(path, &jf, &fs, &io);
    if (rc == JOBFILE_UNREADABLE) {
        say(a, "not loaded: %.200s", strbuf_str(&io));
    } else if (rc == JOBFILE_BAD_SYNTAX) {
        const struct finding *f = fs.count ? &fs.items[0] : NULL;
        say(a, "not loaded: %s:%d:%d: %s", path, f ? f->line : 0, f ? f->col : 0,
            f ? f->message : "not a job file");
    } else {
        open_form(a, &jf.job, &fs, path);
    }
    strbuf_free(&io);
    findings_free(&fs);
    jobfile_free(&jf);
}

/* Writes the form's job to path (JSON for a .json name, else YAML), atomically. */
static void save_job_file(struct app *a, const char *path)
{
    size_t n = strlen(path);
    bool json = n > 5 && strcmp(path + n - 5, ".json") == 0;
    struct strbuf doc = STRBUF_INIT, err = STRBUF_INIT;
    jobfile_write(wizard_job(a->wz), json ? JOBFILE_JSON : JOBFILE_YAML, &doc);
    if (file_write_atomic(path, doc.buf, doc.len, 0644, &err) == 0) {
        say(a, "saved to %s", path);
        wizard_set_changed(a->wz, false);
        free(a->file);
        a->file = xstrdup(path);
    } else {
        say(a, "not saved: %.200s", strbuf_str(&err));
    }
    strbuf_free(&doc);
    strbuf_free(&err);
}

/* Where F2 suggests saving: the file the form came from, else ./NAME.yaml. */
static char *suggested_path(struct app *a)
{
    if (a->file)
        return xstrdup(a->file);
    const char *name = wizard_job(a->wz)->name;
    bool usable =
        name && *name && strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789-") == strlen(name);
    return xasprintf("./%s.yaml", usable ? name : "job");
}

/* Opens the prompt for q: a path to save to or load from, or a new workspace's name. */
static void ask_prompt(struct app *a, enum question q)
{
    static const char *const what[][2] = {
        [ASK_SAVE_PATH] = {"Save the job", "as a YAML job file (.json for JSON):"},
        [ASK_LOAD_PATH] = {"Load a job", "the YAML or JSON job file to fill the form from:"},
        [ASK_WORKSPACE] = {"New workspace",
                           "its name (lowercase letters, digits, -); you become its owner:"},
    };
    char *initial = q == ASK_SAVE_PATH ? suggested_path(a) : NULL;
    a->status[0] = '\0';
    a->prompt = prompt_new(what[q][0], what[q][1], initial);
    a->asking = q;
    a->redraw = true;
    free(initial);
}

static void ask_confirm(struct app *a, enum question q, char *path)
{
    char msg[512];
    if (q == ASK_OVERWRITE)
        snprintf(msg, sizeof msg, "%s exists.\nReplace it with the form?", path);
    else
        snprintf(msg, sizeof msg,
                 "The form has changes that are not saved.\nLoad %s over them? (F2 saves them "
                 "first)",
                 path);
    a->confirm = dialog_new(q == ASK_OVERWRITE ? "Replace file" : "Discard changes", msg, false);
    a->asking = q;
    free(a->pending_path);
    a->pending_path = path;
    a->redraw = true;
}

/* The prompt was answered with path (owned now). */
static void on_path(struct app *a, char *path)
{
    struct stat st;
    if (a->asking == ASK_SAVE_PATH && stat(path, &st) == 0)
        ask_confirm(a, ASK_OVERWRITE, path);
    else if (a->asking == ASK_LOAD_PATH && wizard_changed(a->wz))
        ask_confirm(a, ASK_DISCARD_FORM, path);
    else {
        if (a->asking == ASK_SAVE_PATH)
            save_job_file(a, path);
        else
            load_job_file(a, path);
        free(path);
    }
}

/* ---- "new workspace…": created by the backend, the caller its owner ---- */

/* The form again over a->cat (a new catalog), what was typed kept, in workspace ws. */
static void reopen_in_workspace(struct app *a, const char *ws)
{
    struct jobspec job;
    jobspec_init(&job);
    jobspec_copy(&job, wizard_job(a->wz));
    free(job.workspace_name);
    job.workspace_name = xstrdup(ws);
    bool changed = wizard_changed(a->wz);
    new_form(a, &job);
    wizard_set_changed(a->wz, changed);
    jobspec_free(&job);
}

/* The catalog after a workspace was created: the form offers it, chosen. */
static void on_catalog_again(void *ctx, struct backend_reply *r)
{
    struct app *a = ctx;
    a->workspacing = NULL;
    a->redraw = true;
    if (r->status != BACKEND_OK) {
        snprintf(a->status, sizeof a->status,
                 "workspace %.60s created; the list is not updated: %.150s", a->new_workspace,
                 r->err.message);
        return;
    }
    struct catalog old = *a->cat;
    *a->cat = r->catalog; /* taken */
    memset(&r->catalog, 0, sizeof r->catalog);
    reopen_in_workspace(a, a->new_workspace);
    catalog_free(&old); /* after the wizard that pointed into it went */
    say(a, "workspace %.100s created; you are its owner", a->new_workspace);
}

/* The backend's answer to "create workspace": a refusal shows under the field. */
static void on_workspace_created(void *ctx, struct backend_reply *r)
{
    struct app *a = ctx;
    a->workspacing = NULL;
    a->redraw = true;
    if (r->status != BACKEND_OK) {
        say(a, "workspace %.60s not created: %.150s", a->new_workspace, r->err.message);
        wizard_show_error(a->wz, "workspace_name", r->err.message);
        return;
    }
    struct backend_request rq = {.op = BACKEND_OP_CATALOG};
    a->workspacing = backend_send(a->backend, a->multi, &rq, on_catalog_again, NULL, NULL, a);
}

static void create_workspace(struct app *a, const char *name)
{
    if (a->backend == NULL) {
        say(a, "no backend to create a workspace on (offline)");
        return;
    }
    if (a->workspacing) {
        say(a, "workspace %.100s: not answered yet", a->new_workspace);
        return;
    }
    free(a->new_workspace);
    a->new_workspace = xstrdup(name);
    say(a, "creating workspace %.100s…", name);
    struct backend_request rq = {.op = BACKEND_OP_CREATE_WORKSPACE, .name = name};
    a->workspacing = backend_send(a->backend, a->multi, &rq, on_workspace_created, NULL, NULL, a);
}

/* A key while the help, a prompt or a confirm box is open. */
static void overlay_key(struct app *a, const struct widget_key *k)
{
    a->redraw = true;
    if (a->help) {
        if (help_key(a->help, k)) {
            help_free(a->help);
            a->help = NULL;
            touchwin(stdscr);
        }
    } else if (a->prompt) {
        enum prompt_state st = prompt_key(a->prompt, k);
        if (st == PROMPT_OPEN)
            return;
        char *answer =
            st == PROMPT_DONE && *prompt_value(a->prompt) ? xstrdup(prompt_value(a->prompt)) : NULL;
        prompt_free(a->prompt);
        a->prompt = NULL;
        touchwin(stdscr);
        if (answer && a->asking == ASK_WORKSPACE)
            create_workspace(a, answer);
        else if (answer)
            on_path(a, paths_beside(answer, "")); /* to save to or load from: ~/ is home */
        free(answer);
    } else if (a->confirm) {
        unsigned r = dialog_widget(a->confirm)->ops->key(dialog_widget(a->confirm), k);
        if (!(r & WIDGET_ACTIVATE))
            return;
        bool yes = dialog_answer(a->confirm);
        dialog_free(a->confirm);
        a->confirm = NULL;
        touchwin(stdscr);
        if (!yes)
            say(a, "%s",
                a->asking == ASK_OVERWRITE ? "not saved" : "not loaded: the form is as it was");
        else if (a->asking == ASK_OVERWRITE)
            save_job_file(a, a->pending_path);
        else
            load_job_file(a, a->pending_path);
        free(a->pending_path);
        a->pending_path = NULL;
    }
}

/* The server's answer to a submit: the job opens, or the rejection lands on its field. */
static void on_created(void *ctx, struct backend_reply *r)
{
    struct app *a = ctx;
    a->submitting = NULL;
    a->redraw = true;
    if (r->status == BACKEND_OK) {
        a->created = r->job;
        jobspec_init(&r->job); /* taken */
        a->submitted = true;
        a->quit = true;
        return;
    }
    say(a, "rejected: %.200s", r->err.message);
    wizard_show_error(a->wz, r->err.field, r->err.message);
}

static void submit(struct app *a)
{
    wizard_validate(a->wz);
    size_t errors = wizard_error_count(a->wz);
    if (errors) {
        say(a, "%zu error%s to fix before submitting (see Review)", errors, errors == 1 ? "" : "s");
        return;
    }
    if (a->backend == NULL) {
        say(a, "no backend to submit to (offline)");
        return;
    }
    if (a->submitting) {
        snprintf(a->status, sizeof a->status,
                 "Submitting… (the last submit has not been answered)");
        return;
    }
    say(a, "Submitting…");
    const char *ws = wizard_job(a->wz)->workspace_name;
    if (ws && *ws) /* the form's workspace, not only the context's default */
        backend_set_workspace(a->backend, ws);
    /* Through the loop: keys (and a resize) are still answered while the server thinks. */
    /* The name Review showed, not another one the backend would make up. */
    struct jobspec job;
    jobspec_init(&job);
    jobspec_copy(&job, wizard_job(a->wz));
    const char *generated = wizard_generated_name(a->wz);
    if (job.name == NULL && generated)
        job.name = xstrdup(generated);
    struct backend_request rq = {.op = BACKEND_OP_CREATE, .job = &job};
    a->submitting = backend_send(a->backend, a->multi, &rq, on_created, NULL, NULL, a);
    jobspec_free(&job); /* the request holds the job as JSON */
}

/*
 * A key inside a bracketed paste: a line break is text, not Enter. A field
 * of one line takes the first line only (the rest is not typed, and the
 * status line says so) so a paste never spreads over the next fields; the
 * startup script (multi-line) takes it all, tabs kept; elsewhere a tab is
 * typed as a space.
 * Returns true when the key was used up here.
 */
static bool paste_key(struct app *a, struct widget_key *k)
{
    if (k->is_function && k->code == TERM_KEY_PASTE_BEGIN) {
        a->pasting = true;
        a->paste_cut = 0;
        return true;
    }
    if (k->is_function && k->code == TERM_KEY_PASTE_END) {
        a->pasting = false;
        if (a->paste_cut > 0)
            snprintf(a->status, sizeof a->status,
                     "pasted the first line only: this field takes one line (%d more line%s not "
                     "typed)",
                     a->paste_cut, a->paste_cut == 1 ? "" : "s");
        a->redraw = true;
        return true;
    }
    if (!a->pasting || k->is_function || k->alt)
        return false;
    bool line_break = k->code == '\r' || k->code == '\n';
    if (a->paste_cut > 0) {
        a->paste_cut += line_break;
        return true;
    }
    /* A tab stays a tab in the startup script (it keeps '\t'); a one-line field takes a space. */
    if (k->code == '\t') {
        bool text = !(a->help || a->prompt || a->confirm) && wizard_focus_multiline(a->wz);
        k->is_function = text;
        k->code = text ? WIDGET_KEY_TAB_TEXT : ' ';
    }
    if (line_break && (a->help || a->prompt || a->confirm || !wizard_focus_multiline(a->wz))) {
        a->paste_cut = 1;
        return true;
    }
    return false;
}

static void on_key(struct app *a, const struct widget_key *key)
{
    struct widget_key kk = *key, *k = &kk;
    if (paste_key(a, k))
        return;
    if (a->help || a->prompt || a->confirm) {
        overlay_key(a, k);
        return;
    }
    enum wizard_action act = wizard_key(a->wz, k);
    if (act != WIZARD_QUIT)
        a->confirm_quit = false;
    switch (act) {
    case WIZARD_SUBMIT:
        submit(a);
        break;
    case WIZARD_HELP:
        a->help = help_new(a->km, "wizard", a->keys_note ? a->keys_note : field_keys_note);
        a->redraw = true;
        break;
    case WIZARD_SAVE:
        ask_prompt(a, ASK_SAVE_PATH);
        break;
    case WIZARD_LOAD:
        ask_prompt(a, ASK_LOAD_PATH);
        break;
    case WIZARD_NEW_WORKSPACE:
        ask_prompt(a, ASK_WORKSPACE);
        break;
    case WIZARD_REDRAW:
        clearok(curscr, TRUE);
        a->redraw = true;
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
        if (a->status[0] && !a->confirm_quit)
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
            term_resize();
            a->resized = false;
            first = true;
        }
        if (first || a->redraw || wizard_dirty(a->wz) || a->status[0]) {
            draw_now(a);
            first = false;
        }
        loop_run_once(a->loop, -1);
    }
}

/*
 * This run's draft: of the job being edited (a new job is one of its own).
 * Offered first: `new` alone, every draft there is of a->context (one: yes
 * or no; more: the list); a file or a clone, only its own. Returns true
 * when one was resumed, read into draft (what validate would say of it in
 * dfs); the form is then that job's, and its draft the one written.
 */
static bool choose_draft(struct app *a, const char *file, struct jobfile *draft,
                         struct findings *dfs)
{
    char *ddir = drafts_dir();
    bool new_job = !file && !a->clone_of;
    a->draft_label = drafts_label(a->clone_of, file);
    a->draft_path = drafts_path(ddir, a->draft_label, new_job);
    struct draft_list dl;
    drafts_list(ddir, &dl);
    drafts_keep_context(&dl, a->context);
    long resume = -1, offer = drafts_find(&dl, new_job ? NULL : a->draft_path);
    if (new_job && dl.count > 1) {
        resume = drafts_pick(&a->term, &dl, a->draft_label);
    } else if (offer >= 0) {
        enum resume_answer ans = ask_resume(a, &dl.items[offer]);
        struct strbuf derr = STRBUF_INIT;
        if (ans == RESUME_IT) {
            resume = offer;
        } else if (ans == DISCARD_IT && drafts_discard(&dl, (size_t)offer, &derr) != 0) {
            say(a, "draft not discarded: %.200s", strbuf_str(&derr));
        } else if (ans == KEEP_IT && strcmp(dl.items[offer].path, a->draft_path) == 0) {
            /* Kept: this run writes a draft of its own beside it. */
            free(a->draft_path);
            a->draft_path = drafts_path(ddir, a->draft_label, true);
        }
        strbuf_free(&derr);
    }
    bool use_draft = false;
    if (resume >= 0) {
        struct strbuf io = STRBUF_INIT;
        struct draft *dr = &dl.items[resume];
        use_draft = jobfile_load(dr->path, draft, dfs, &io) != JOBFILE_UNREADABLE;
        if (use_draft) {
            free(a->draft_path);
            free(a->draft_label);
            a->draft_path = xstrdup(dr->path);
            a->draft_label = xstrdup(dr->label);
        } else {
            say(a, "draft not resumed: %.200s", strbuf_str(&io));
        }
        a->draft_kept = use_draft;
        strbuf_free(&io);
    }
    drafts_free(&dl);
    free(ddir);
    return use_draft;
}

int tui_wizard_run(const struct tui_wizard_opts *o, FILE *out, FILE *err)
{
    const char *file = o->file, *theme = o->theme, *created_to = o->created_to;
    struct app a;
    memset(&a, 0, sizeof a);
    struct jobfile jf;
    jobfile_init(&jf);
    /* Read before the terminal is taken, so an unreadable file is said plainly. */
    struct findings file_fs = FINDINGS_INIT;
    if (file) {
        struct strbuf io = STRBUF_INIT;
        enum jobfile_result rc = jobfile_load(file, &jf, &file_fs, &io);
        if (rc == JOBFILE_UNREADABLE) {
            fprintf(err, "trainjob: %s\n", strbuf_str(&io));
            strbuf_free(&io);
            findings_free(&file_fs);
            jobfile_free(&jf);
            return EXIT_USAGE;
        }
        strbuf_free(&io);
    }
    struct session s;
    struct catalog cat;
    memset(&cat, 0, sizeof cat);
    bool have_session = session_open(&o->target, &s, err) == 0;
    if (have_session) {
        struct api_error aerr;
        if (backend_catalog(s.b, &cat, &aerr) != BACKEND_OK) {
            say(&a, "offline: no catalog (%.200s)", aerr.message);
            cat.unknown = CATALOG_UNKNOWN_ALL; /* no list to check against: typed values go */
        } else if (cat.missing) {              /* why some lists are not there */
            say(&a, "%.250s", cat.missing);
        }
        a.backend = s.b;
    }
    a.km = load_keymap(&a);
    bool theme_from_config = theme == NULL && have_session && s.rc.ctx.theme;
    if (theme_from_config) /* the context's theme: */
        theme = s.rc.ctx.theme;
    char why[512];
    int started = term_start(&a.term, theme, why, sizeof why);
    if (started != 0 && theme_from_config) {
        /* A wrong theme in config.yaml must not lock a person out: the default, and say so. */
        if (!a.status[0])
            say(&a, "config.yaml theme: %.180s; using the default", why);
        started = term_start(&a.term, NULL, why, sizeof why);
    }
    if (started != 0) {
        fprintf(err, "trainjob: %s\n", why);
        if (have_session)
            session_close(&s);
        catalog_free(&cat);
        jobfile_free(&jf);
        findings_free(&file_fs);
        keymap_free(a.km);
        free(a.keys_note);
        return EXIT_USAGE;
    }
    a.loop = loop_new();
    a.multi = http_multi_new(a.loop);
    /* A draft typed against another context (another cluster) is not this one's to offer. */
    a.context = have_session && s.rc.ctx.name ? xstrdup(s.rc.ctx.name) : NULL;
    a.clone_of = o->clone_of;
    struct jobfile draft;
    jobfile_init(&draft);
    struct findings dfs = FINDINGS_INIT; /* what the draft holds that validate would say */
    bool use_draft = choose_draft(&a, file, &draft, &dfs);
    a.cat = &cat;
    a.default_workspace = have_session ? s.rc.ctx.workspace : o->target.workspace;
    if (use_draft) {
        new_form(&a, &draft.job);
        wizard_set_file_findings(a.wz, &dfs, NULL); /* a misspelt key kept is said, as from -f */
        if (file && !a.clone_of) /* F2 still offers the file the draft is an edit of */
            a.file = xstrdup(file);
    } else if (file) {
        open_form(&a, &jf.job, &file_fs, file);
    } else {
        new_form(&a, NULL);
    }
    findings_free(&file_fs);
    findings_free(&dfs);
    run(&a);
    jobfile_free(&draft);
    help_free(a.help);
    prompt_free(a.prompt);
    dialog_free(a.confirm);
    wizard_free(a.wz);
    backend_call_cancel(a.names.call);
    backend_call_cancel(a.submitting);
    backend_call_cancel(a.workspacing);
    free(a.new_workspace);
    free(a.names.workspace);
    free(a.names.name);
    http_multi_free(a.multi);
    loop_free(a.loop);
    term_stop(&a.term);
    keymap_free(a.km);
    free(a.keys_note);
    free(a.pending_path);
    free(a.file);
    int rc = EXIT_OK;
    char *open_job = NULL;
    if (a.submitted) {
        unlink(a.draft_path);
        fprintf(out, "job %s created (%s)\n", a.created.name ? a.created.name : "?",
                enum_name(&job_state_names, (int)a.created.state));
        if (created_to && a.created.name) {
            struct strbuf werr = STRBUF_INIT;
            if (file_write_atomic(created_to, a.created.name, strlen(a.created.name), 0600,
                                  &werr) != 0)
                fprintf(err, "trainjob new: %s\n", strbuf_str(&werr));
            strbuf_free(&werr);
        } else if (a.created.name) {
            open_job = xstrdup(a.created.name);
        }
        jobspec_free(&a.created);
    } else {
        fprintf(err, "trainjob new: left without submitting%s\n",
                /* only a draft of this run's: not one an earlier run left, nor none at all */
                a.draft_kept && access(a.draft_path, F_OK) == 0
                    ? "; `trainjob new` offers the draft again"
                    : "");
        rc = EXIT_INVALID;
    }
    free(a.draft_path);
    free(a.draft_label);
    free(a.context);
    if (have_session)
        session_close(&s);
    catalog_free(&cat);
    jobfile_free(&jf);
    if (open_job) {
        /* Success opens the job, live (the wizard's "what happens next"). */
        struct tui_top_opts top = {.target = o->target, .refresh_s = 5, .job = open_job};
        rc = tui_top_run(&top, err);
        free(open_job);
    }
    return rc;
}
