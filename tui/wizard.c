/*
 * wizard: the create-task form screen; see wizard.h.
 *
 * Each field is a widget in its section's form plus the job path its
 * findings are reported under. The lists — variables, mounts, rules — are
 * one field each whose rows tui/wizard_lists.c keeps. The job is rebuilt
 * from the fields and rows (over a copy of the job the wizard opened with,
 * so parts the form does not show are kept and validated), and
 * api/validate's findings are placed on the field whose path they name, or
 * on a row's field ("env[2].key").
 * Choices the catalog drives (pools of the workspace, zones and specs of
 * the pool, priorities the caller may pick) are refreshed when the choice
 * they depend on changes; fields that do not apply are hidden.
 *
 * This file: the wizard's life, findings, validation and keys; the
 * fields and the job built from them are tui/wizard_fields.c, the screen
 * tui/wizard_draw.c, the state they share tui/wizard_priv.h.
 */
#include "tui/wizard.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/catalog.h"
#include "api/finding.h"
#include "api/formtab.h"
#include "api/jobspec.h"
#include "api/jobspec_json.h"
#include "api/ngctag.h"
#include "api/schema.h"
#include "api/validate.h"
#include "tui/keymap.h"
#include "tui/term.h"
#include "tui/wizard_lists.h"
#include "tui/wizard_priv.h"
#include "util/strbuf.h"
#include "util/xalloc.h"
#include "widgets/form.h"
#include "widgets/keybar.h"
#include "widgets/select.h"
#include "widgets/textarea.h"
#include "widgets/textfield.h"

/* The key bar: the keys the keymap binds now, so a user's rebinding shows. */
static struct keybar *make_keybar(const struct keymap *km)
{
    static const struct {
        enum keymap_action action;
        const char *label;
    } shown[] = {
        {KEYMAP_HELP, "Help"}, {KEYMAP_NONE, "Next"}, {KEYMAP_NEXT_SECTION, "Section"},
        {KEYMAP_SAVE, "Save"}, {KEYMAP_LOAD, "Load"}, {KEYMAP_SUBMIT, "Submit"},
        {KEYMAP_QUIT, "Quit"},
    };
    enum { N = sizeof shown / sizeof shown[0] };
    char keys[N][KEYMAP_KEY_NAME_MAX];
    struct keybar_item items[N];
    size_t n = 0;
    for (size_t i = 0; i < N; i++) {
        if (shown[i].action == KEYMAP_NONE) /* Tab is the form's own, not a binding */
            snprintf(keys[n], sizeof keys[n], "Tab");
        else if (!keymap_first_key(km, "wizard", shown[i].action, keys[n], sizeof keys[n]))
            continue;
        items[n] = (struct keybar_item){keys[n], shown[i].label};
        n++;
    }
    return keybar_new(items, n);
}

struct wizard *wizard_new(const struct catalog *cat, const struct jobspec *initial,
                          const char *default_workspace, const struct keymap *km)
{
    struct wizard *wz = xcalloc(1, sizeof *wz);
    wz->cat = cat;
    jobspec_init(&wz->base);
    if (initial)
        jobspec_copy(&wz->base, initial);
    jobspec_init(&wz->job);
    wz_make_fields(wz, initial, default_workspace);
    wz->km = km;
    wz->keybar = make_keybar(km);
    wz->dirty = true;
    wz->review_sel = -1;
    wizard_validate(wz);
    return wz;
}

void wizard_free(struct wizard *wz)
{
    if (wz == NULL)
        return;
    for (int s = 0; s < SECTION_COUNT; s++)
        form_free(wz->forms[s]);
    for (int i = 0; i < LIST_COUNT; i++)
        wlist_free(wz->lists[i].l); /* after the forms: their list widgets call back into it */
    free(wz->tb_other);
    free(wz->generated_name);
    keybar_free(wz->keybar);
    findings_free(&wz->findings);
    findings_free(&wz->file_findings);
    findings_free(&wz->misspelt);
    findings_free(&wz->convert);
    jobspec_free(&wz->base);
    jobspec_free(&wz->job);
    free(wz);
}

/* The field showing path's findings: exact, or the nearest ancestor path. */
static const struct wz_field *field_for(const struct wizard *wz, const char *path)
{
    const struct wz_field *best = NULL;
    size_t best_len = 0;
    for (size_t i = 0; i < wz->field_count; i++) {
        size_t n = strlen(wz->fields[i].row->path);
        if (strncmp(path, wz->fields[i].row->path, n) == 0 &&
            (path[n] == '\0' || path[n] == '.' || path[n] == '[') && n > best_len) {
            best = &wz->fields[i];
            best_len = n;
        }
    }
    return best;
}

/* The widget that shows path's findings: a list's, or a field's; NULL for none. */
static struct widget *widget_for(const struct wizard *wz, const char *path)
{
    size_t row, sub;
    const struct wizard_list *wl = wz_list_claiming(wz, path, &row, &sub);
    if (wl)
        return wlist_widget(wl->l);
    const struct wz_field *fd = field_for(wz, path);
    return fd ? fd->wd : NULL;
}

/*
 * A misspelt key the file has ("backof_limit: unknown field; did you mean
 * backoff_limit?"): the path of the field meant, when a field shows it, into
 * meant (else ""). Its value is kept among the job's extras, so saving writes
 * it back; it goes when the field meant is edited (drop_file_findings).
 */
static bool misspelt(const struct wizard *wz, const struct finding *f, char *meant, size_t n)
{
    static const char said[] = "unknown field; did you mean ";
    *meant = '\0';
    if (strncmp(f->message, said, sizeof said - 1) != 0)
        return false;
    const char *name = f->message + sizeof said - 1;
    const char *dot = strrchr(f->path, '.');
    int parent = dot ? (int)(dot - f->path) + 1 : 0;
    snprintf(meant, n, "%.*s%.*s", parent, f->path, (int)strcspn(name, "?"), name);
    if (!widget_for(wz, meant))
        *meant = '\0';
    return true;
}

/* The fields the form sets itself, from other choices: no field shows them, none is lost. */
static const char *const derived_paths[] = {"roles[0].name", "scheduling.quota_type",
                                            "scheduling.preemptible", "resource_pool"};

/* Adds to out, comma-separated, the path of every value in v (at path) no shown field edits. */
static void add_unshown(const struct wizard *wz, const json_t *v, struct strbuf *path,
                        struct strbuf *out)
{
    size_t len = path->len;
    if (json_is_object(v) && json_object_size(v) > 0) {
        const char *key;
        const json_t *item;
        json_object_foreach((json_t *)v, key, item)
        {
            strbuf_addf(path, "%s%s", len ? "." : "", key);
            add_unshown(wz, item, path, out);
            strbuf_truncate(path, len);
        }
        return;
    }
    if (json_is_array(v) && json_array_size(v) > 0 && json_is_object(json_array_get(v, 0))) {
        for (size_t i = 0; i < json_array_size(v); i++) {
            strbuf_addf(path, "[%zu]", i);
            add_unshown(wz, json_array_get(v, i), path, out);
            strbuf_truncate(path, len);
        }
        return;
    }
    const char *p = strbuf_str(path);
    for (size_t i = 0; i < sizeof derived_paths / sizeof derived_paths[0]; i++)
        if (strcmp(p, derived_paths[i]) == 0)
            return;
    const struct wz_field *fd = field_for(wz, p);
    size_t row, sub;
    if ((fd && !form_hidden(wz->forms[fd->row->section], fd->entry)) ||
        wz_list_claiming(wz, p, &row, &sub))
        return;
    strbuf_addf(out, "%s%s", out->len ? ", " : "", p);
}

void wizard_kept_from_file(const struct wizard *wz, struct strbuf *out)
{
    json_t *doc = jobspec_to_json(&wz->job);
    struct strbuf path = STRBUF_INIT;
    add_unshown(wz, doc, &path, out);
    strbuf_free(&path);
    json_decref(doc);
}

size_t wizard_set_file_findings(struct wizard *wz, const struct findings *fs,
                                const struct finding **first)
{
    size_t unplaced = 0;
    if (first)
        *first = NULL;
    findings_clear(&wz->file_findings);
    findings_clear(&wz->misspelt);
    for (size_t i = 0; fs && i < fs->count; i++) {
        const struct finding *f = &fs->items[i];
        char meant[256];
        if (misspelt(wz, f, meant, sizeof meant)) {
            if (*meant) { /* under the field meant, in validate's words, until it is edited */
                const char *key = strrchr(f->path, '.');
                findings_add_pos(&wz->file_findings, f->severity, meant, f->line, f->col,
                                 "line %d: %s (the file says %s)", f->line, f->message,
                                 key ? key + 1 : f->path);
                findings_add(&wz->misspelt, SEVERITY_WARNING, f->path, "%s", meant);
                continue;
            }
            /* no field could correct it: left out, as the form cannot carry it */
            schema_forget_extra(jobspec_schema(), &wz->base, f->path);
        }
        if (!*f->path || !widget_for(wz, f->path)) {
            if (unplaced++ == 0 && first)
                *first = f;
            /*
             * No field shows it: listed on Review with where it is in the file.
             * About the document itself (its syntax), nothing of it was read; an
             * error on a part the form does not edit is left out of the job, as
             * the form cannot carry it (a warning here); any other is a field
             * kept as the file says it.
             */
            const char *why = !*f->path ? " (the file was not read into the form)"
                              : f->severity == SEVERITY_ERROR
                                  ? " (not in the form: left out of the job)"
                                  : "";
            findings_add_pos(&wz->file_findings, *why ? SEVERITY_WARNING : f->severity, f->path,
                             f->line, f->col, "line %d: %s%s", f->line, f->message, why);
            continue;
        }
        if (f->line > 0)
            findings_add_pos(&wz->file_findings, f->severity, f->path, f->line, f->col,
                             "line %d: %s", f->line, f->message);
        else
            findings_add(&wz->file_findings, f->severity, f->path, "%s", f->message);
    }
    wizard_validate(wz);
    return unplaced;
}

/* An edit to wd: what the file said about that field no longer applies. */
static void drop_file_findings(struct wizard *wz, const struct widget *wd)
{
    if (wz->file_findings.count == 0)
        return;
    struct findings keep = FINDINGS_INIT;
    for (size_t i = 0; i < wz->file_findings.count; i++) {
        const struct finding *f = &wz->file_findings.items[i];
        if (widget_for(wz, f->path) != wd)
            findings_add_pos(&keep, f->severity, f->path, f->line, f->col, "%s", f->message);
    }
    findings_free(&wz->file_findings);
    wz->file_findings = keep;
    /* the field meant is set now: the misspelt key is not written back */
    for (size_t i = 0; i < wz->misspelt.count; i++)
        if (widget_for(wz, wz->misspelt.items[i].message) == wd)
            schema_forget_extra(jobspec_schema(), &wz->base, wz->misspelt.items[i].path);
}

void wizard_set_changed(struct wizard *wz, bool changed)
{
    wz->changed = changed;
}

/* Under a valid NGC image: what its tag means (release, CUDA, Python, Ubuntu). */
static void explain_image_tag(struct wizard *wz)
{
    struct form *f = wz->forms[SECTION_IMAGE];
    const char *said = NULL;
    size_t e = field_for(wz, "roles[0].image_path")->entry;
    enum form_severity sev = form_message(f, e, &said);
    if (sev == FORM_MESSAGE_ERROR)
        return; /* what is wrong with it says more */
    struct strbuf sb = STRBUF_INIT;
    if (ngctag_explain(textfield_value(wz->image), &sb)) {
        if (sev == FORM_MESSAGE_WARNING && said) /* both: what the tag means, then the warning */
            strbuf_addf(&sb, " \xc2\xb7 %s", said);
        form_set_message(f, e, sev == FORM_MESSAGE_WARNING ? sev : FORM_MESSAGE_OK,
                         strbuf_str(&sb));
    }
    strbuf_free(&sb);
}

void wizard_set_name_check(struct wizard *wz,
                           bool (*taken)(void *ctx, const char *workspace, const char *name),
                           void *ctx)
{
    wz->name_taken = taken;
    wz->name_taken_ctx = ctx;
}

void wizard_validate(struct wizard *wz)
{
    wz_build_job(wz);
    findings_clear(&wz->findings);
    /* The file's findings first: on a field they outrank what validation says of its value. */
    for (size_t i = 0; i < wz->file_findings.count; i++) {
        const struct finding *f = &wz->file_findings.items[i];
        findings_add_pos(&wz->findings, f->severity, f->path, f->line, f->col, "%s", f->message);
    }
    /* Then what a field could not put into the job: a value typed is never dropped unsaid. */
    findings_move(&wz->findings, &wz->convert);
    struct validate_options vo = {wz->cat, NULL, wz->name_taken, wz->name_taken_ctx, false, NULL};
    validate_job(&wz->job, &vo, &wz->findings);
    memset(wz->errors, 0, sizeof wz->errors);
    memset(wz->warnings, 0, sizeof wz->warnings);
    for (size_t i = 0; i < wz->field_count; i++)
        form_set_message(wz->forms[wz->fields[i].row->section], wz->fields[i].entry,
                         FORM_MESSAGE_NONE, NULL);
    for (int i = 0; i < LIST_COUNT; i++)
        wlist_clear_messages(wz->lists[i].l);
    for (size_t i = 0; i < wz->findings.count; i++) {
        const struct finding *f = &wz->findings.items[i];
        enum form_severity want =
            f->severity == SEVERITY_ERROR ? FORM_MESSAGE_ERROR : FORM_MESSAGE_WARNING;
        size_t row, sub;
        const struct wizard_list *wl = wz_list_claiming(wz, f->path, &row, &sub);
        const struct wz_field *fd = wl ? NULL : field_for(wz, f->path);
        enum form_section sec = wl ? wl->section : fd ? fd->row->section : form_section_of(f->path);
        if (f->severity == SEVERITY_ERROR)
            wz->errors[sec]++;
        else
            wz->warnings[sec]++;
        if (wl) { /* under a row: on that row's field */
            wlist_set_message(wl->l, row, sub, want, f->message);
        } else if (fd) {
            const char *old = NULL;
            enum form_severity have = form_message(wz->forms[fd->row->section], fd->entry, &old);
            if (have < want) /* an error outranks a warning on the same field */
                form_set_message(wz->forms[fd->row->section], fd->entry, want, f->message);
        }
    }
    explain_image_tag(wz);
    wz->pending = false;
    wz->dirty = true;
}

const char *wizard_generated_name(const struct wizard *wz)
{
    return *textfield_value(wz->name) ? NULL : wz->generated_name;
}

/* The widget with the focus (NULL: Review, or none). */
static struct widget *focused(const struct wizard *wz)
{
    size_t e = wz->cur == SECTION_REVIEW ? FORM_NO_ENTRY : form_focused(wz->forms[wz->cur]);
    return e != FORM_NO_ENTRY ? form_widget_at(wz->forms[wz->cur], e) : NULL;
}

bool wizard_focus_multiline(const struct wizard *wz)
{
    struct widget *wd = focused(wz);
    return wd && textarea_from_widget(wd) != NULL;
}

bool wizard_validation_pending(const struct wizard *wz)
{
    return wz->pending;
}

bool wizard_dirty(const struct wizard *wz)
{
    if (wz->dirty)
        return true;
    return wz->cur != SECTION_REVIEW && form_needs_draw(wz->forms[wz->cur]);
}

bool wizard_changed(const struct wizard *wz)
{
    return wz->changed;
}

const struct jobspec *wizard_job(struct wizard *wz)
{
    wz_build_job(wz);
    return &wz->job;
}

const char *wizard_focused_path(const struct wizard *wz)
{
    struct widget *wd = focused(wz);
    for (size_t i = 0; wd && i < wz->field_count; i++)
        if (wz->fields[i].wd == wd)
            return wz->fields[i].row->path;
    return NULL;
}

size_t wizard_error_count(const struct wizard *wz)
{
    return findings_count(&wz->findings, SEVERITY_ERROR);
}

/* Closes the popup of the current section's focused field, or of a row's select. */
static void close_popups(struct wizard *wz)
{
    struct widget *wd = focused(wz);
    struct select *sel = wd ? select_from_widget(wd) : NULL;
    if (sel && select_is_open(sel))
        select_close(sel);
    for (int i = 0; i < LIST_COUNT; i++)
        wlist_close_popups(wz->lists[i].l);
}

static void go_section(struct wizard *wz, int delta)
{
    int s = (int)wz->cur + delta;
    if (s < 0 || s >= SECTION_COUNT)
        return;
    close_popups(wz);
    wz->cur = (enum form_section)s;
    if (wz->cur == SECTION_REVIEW)
        wz->review_top = 0; /* Review opens at its top: totals and findings first */
    else
        form_invalidate(wz->forms[wz->cur]);
    wz->dirty = true;
}

/* A field changed: what depends on it follows (wz_refresh); the file's word on it goes. */
static void on_changed(struct wizard *wz, struct widget *wd)
{
    const char *image = select_selected_label(wz->image_pick);
    if (wd == select_widget(wz->image_pick) && image) /* a catalog image fills the reference */
        textfield_set(wz->image, image);
    for (size_t i = 0; i < wz->field_count; i++) /* typed into: what it holds goes into the job */
        if (wz->fields[i].wd == wd)
            wz->fields[i].edited = true;
    wz_refresh(wz);
    drop_file_findings(wz, wd);
    wz->changed = true;
    wz->pending = true;
    wz->dirty = true;
}

/*
 * Shows the field path names and gives it the focus (a row's field for a
 * row's path), with message under it as an error when one is given.
 */
static void focus_path(struct wizard *wz, const char *path, const char *message)
{
    size_t row, sub;
    const struct wizard_list *wl = wz_list_claiming(wz, path, &row, &sub);
    const struct wz_field *fd = wl ? NULL : field_for(wz, path);
    enum form_section sec = wl ? wl->section : fd ? fd->row->section : form_section_of(path);
    if (sec == SECTION_REVIEW || (message && !wl && !fd))
        return;
    close_popups(wz);
    wz->cur = sec;
    if (wl) {
        if (message)
            wlist_set_message(wl->l, row, sub, FORM_MESSAGE_ERROR, message);
        form_focus(wz->forms[sec], wl->entry);
        wlist_focus(wl->l, row, sub);
        wz_refresh_list_help(wz);
    } else if (fd) {
        if (message)
            form_set_message(wz->forms[sec], fd->entry, FORM_MESSAGE_ERROR, message);
        form_focus(wz->forms[sec], fd->entry);
    }
    form_invalidate(wz->forms[sec]);
    wz->dirty = true;
}

void wizard_show_error(struct wizard *wz, const char *field, const char *message)
{
    if (field && *field)
        focus_path(wz, field, message);
    wz->dirty = true;
}

/* The keys Review takes before the keymap: it scrolls with them (PgUp/PgDn too). */
static bool review_scroll_key(const struct widget_key *k)
{
    return k->is_function && !k->alt &&
           (k->code == KEY_UP || k->code == KEY_DOWN || k->code == KEY_PPAGE ||
            k->code == KEY_NPAGE || k->code == KEY_HOME || k->code == KEY_END);
}

/*
 * Keys on the review page: the arrows, PgUp/PgDn, Home/End scroll; n / N
 * choose the next / previous finding and Enter goes to its field (Enter
 * never submits: Ctrl-S does); t toggles YAML / JSON; Tab and Shift-Tab leave.
 */
static unsigned review_key(struct wizard *wz, const struct widget_key *k, enum wizard_action *out)
{
    (void)out;
    if (k->alt)
        return WIDGET_IGNORED;
    int page = wz->review_page > 1 ? wz->review_page : 1;
    if (k->is_function && k->code == KEY_PPAGE && wz->review_top == 0) {
        go_section(wz, -1); /* at the top, PgUp goes back as it does everywhere else */
        return WIDGET_HANDLED;
    }
    if (review_scroll_key(k)) {
        switch (k->code) {
        case KEY_UP:
            wz->review_top--;
            break;
        case KEY_DOWN:
            wz->review_top++;
            break;
        case KEY_PPAGE:
            wz->review_top -= page - 1 > 0 ? page - 1 : 1;
            break;
        case KEY_NPAGE:
            wz->review_top += page - 1 > 0 ? page - 1 : 1;
            break;
        case KEY_HOME:
            wz->review_top = 0;
            break;
        default: /* End: the draw clamps it to the last page */
            wz->review_top = wz->review_lines;
            break;
        }
        if (wz->review_top < 0)
            wz->review_top = 0;
        if (wz->review_top > wz->review_lines)
            wz->review_top = wz->review_lines;
        wz->dirty = true;
        return WIDGET_HANDLED;
    }
    if (!k->is_function && (k->code == 'n' || k->code == 'N')) {
        long n = (long)wz->findings.count;
        if (n > 0) {
            long sel = wz->review_sel + (k->code == 'n' ? 1 : -1);
            wz->review_sel = sel < 0 ? n - 1 : sel >= n ? 0 : sel;
            wz->review_follow = true;
            wz->dirty = true;
        }
        return WIDGET_HANDLED;
    }
    if (k->is_function ? k->code == KEY_ENTER : (k->code == '\r' || k->code == '\n')) {
        if (wz->review_sel >= 0 && (size_t)wz->review_sel < wz->findings.count)
            focus_path(wz, wz->findings.items[wz->review_sel].path, NULL);
        return WIDGET_HANDLED;
    }
    if (!k->is_function && k->code == 't') {
        wz->review_json = !wz->review_json;
        wz->dirty = true;
        return WIDGET_HANDLED;
    }
    if ((k->is_function && k->code == KEY_BTAB) || (!k->is_function && k->code == '\t')) {
        go_section(wz, k->code == '\t' ? 0 : -1);
        return WIDGET_HANDLED;
    }
    return WIDGET_IGNORED;
}

/* A key for the current section's form; what it did, and what follows from it. */
static unsigned field_key(struct wizard *wz, const struct widget_key *k)
{
    struct form *f = wz->forms[wz->cur];
    size_t before = form_focused(f);
    struct wlist *list = wz_list_at(wz, wz->cur, before);
    size_t row_before = list ? wlist_focus_id(list) : 0;
    unsigned r = form_key(f, k);
    if ((r & WIDGET_CHANGED) && form_widget_at(f, before) == select_widget(wz->workspace)) {
        const char *ws = select_selected_label(wz->workspace);
        if (ws && strcmp(ws, WIZARD_NEW_WORKSPACE_LABEL) == 0) {
            /* not a workspace: the one before stays chosen until the new one exists */
            select_set_selected(wz->workspace, wz->ws_prev);
            wz->ws_new_asked = true;
            r = (r & ~(unsigned)WIDGET_CHANGED) | WIDGET_REDRAW;
        } else {
            wz->ws_prev = select_selected(wz->workspace);
        }
    }
    if (r & WIDGET_CHANGED) /* the field the key went to, even if focus moved on */
        on_changed(wz, form_widget_at(f, before));
    if (r & WIDGET_REDRAW)
        wz->dirty = true;
    size_t after = form_focused(f);
    struct wlist *entered = after != before ? wz_list_at(wz, wz->cur, after) : NULL;
    if (entered) /* into a list: its first field from above, its last from below */
        wlist_enter(entered, after < before);
    if ((r & WIDGET_FOCUS_NEXT) && after == before)
        go_section(wz, 1);
    else if ((r & WIDGET_FOCUS_PREV) && after == before)
        go_section(wz, -1);
    else if ((after != before || (list && wlist_focus_id(list) != row_before)) && wz->pending)
        wizard_validate(wz); /* leaving a field (a row's too) validates at once */
    wz_refresh_list_help(wz);
    return r;
}

/* Does a keymap action: the wizard's own here, the rest is the owner's. */
static enum wizard_action act(struct wizard *wz, enum keymap_action a)
{
    switch (a) {
    case KEYMAP_NEXT_SECTION:
    case KEYMAP_PREV_SECTION:
        go_section(wz, a == KEYMAP_NEXT_SECTION ? 1 : -1);
        return WIZARD_NONE;
    case KEYMAP_SUBMIT:
        return WIZARD_SUBMIT;
    case KEYMAP_QUIT:
        return WIZARD_QUIT;
    case KEYMAP_HELP:
        return WIZARD_HELP;
    case KEYMAP_SAVE:
        return WIZARD_SAVE;
    case KEYMAP_LOAD:
        return WIZARD_LOAD;
    case KEYMAP_REDRAW:
        wz->dirty = true;
        return WIZARD_REDRAW;
    default: /* another screen's action: nothing here */
        return WIZARD_NONE;
    }
}

enum wizard_action wizard_key(struct wizard *wz, const struct widget_key *k)
{
    enum keymap_action a = keymap_lookup(wz->km, "wizard", k);
    bool field_first = keymap_key_is_text(k) || (!k->is_function && !k->alt && k->code == 27) ||
                       (wz->cur == SECTION_REVIEW && review_scroll_key(k));
    if (a != KEYMAP_NONE && !field_first)
        return act(wz, a);
    enum wizard_action out = WIZARD_NONE;
    unsigned r = wz->cur == SECTION_REVIEW ? review_key(wz, k, &out) : field_key(wz, k);
    if (wz->ws_new_asked) {
        wz->ws_new_asked = false;
        return WIZARD_NEW_WORKSPACE;
    }
    if (!(r & WIDGET_HANDLED) && a != KEYMAP_NONE)
        return act(wz, a);
    return out;
}
