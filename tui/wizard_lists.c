/*
 * wizard_lists: the wizard's lists of variables, mounts and rules; see
 * wizard_lists.h.
 *
 * A list owns its rows; the listedit widget (owned by the form it sits
 * in) holds only the focused row and calls back here. A row is two or
 * three widgets, the field with the focus, a message per field, and what
 * the file said that the row does not show (a mount's type, zone and
 * endpoint; whether a value or mark_node_unschedulable was written), so
 * writing the rows back changes only what was edited. What differs between
 * the three lists is one const table, struct list_kind: the fields, their
 * finding names and help, and how a row is made from a job's element and
 * written back.
 *
 * Layout of a row, in the listedit's rectangle: the row's name ("rules[0]", as its path names it)
 * in a left column, then either every field on one line (a variable:
 * NAME = value) or one field per line after a field label (a mount, a
 * rule). A field's message goes on the lines under it, icon first,
 * wrapped to MESSAGE_LINES lines.
 */
#include "tui/wizard_lists.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/catalog.h"
#include "api/jobspec.h"
#include "api/jobspec_json.h"
#include "api/schema.h"
#include "api/validate.h"
#include "util/strbuf.h"
#include "util/utf8.h"
#include "util/xalloc.h"
#include "widgets/listedit.h"
#include "widgets/select.h"
#include "widgets/textfield.h"
#include "widgets/toggle.h"
#include "widgets/widget.h"

enum {
    FIELDS_MAX = 3,
    MESSAGE_LINES = 8, /* lines a field's message wraps to: its whole length at 80 columns */
    ICON_CELLS = 2,    /* "✗ " */
    ROW_GAP = 2,       /* cells after the row's name and after a field label */
};

#define NO_FIELD ((size_t)-1)

struct row {
    struct widget *wd[FIELDS_MAX];
    char *message[FIELDS_MAX]; /* sanitized; NULL: none */
    enum form_severity severity[FIELDS_MAX];
    size_t focus;
    int fy[FIELDS_MAX], fx[FIELDS_MAX], fw[FIELDS_MAX]; /* where each field was last drawn */
    /*
     * The job's element the row shows (a new row's: zeroed, its defaults
     * set), a copy: what the row does not show (a mount's type, zone and
     * endpoint, fields trainjob does not know) is written back as it was.
     */
    void *item;
};

struct wlist;

struct list_kind {
    const char *path;     /* the list's finding path */
    const char *row_name; /* rows are "rules[0]", "rules[1]"…: the path's own naming */
    const char *noun;     /* "a variable", for the hints */
    size_t max_rows;      /* 0: no limit */
    size_t nfields;
    bool one_line;                  /* every field on the row's line */
    const char *names[FIELDS_MAX];  /* each field's name in finding paths */
    const char *labels[FIELDS_MAX]; /* before each field (one field per line) */
    const char *help[FIELDS_MAX];   /* the help line while the field has the focus */
    /* Optional: help that depends on the row's values (NULL answer: help[field]). */
    const char *(*row_help)(const struct row *r, size_t field);
    /* Makes r's widgets from r->item (a new row: sets its defaults first). */
    void (*make)(struct wlist *l, struct row *r, bool new_row);
    /* Writes what r's widgets say into item, a copy of r->item. */
    void (*store)(const struct row *r, void *item);
};

struct wlist {
    const struct list_kind *kind;
    const struct object_type *type; /* of the job's elements (api/schema) */
    const struct catalog *cat;
    struct listedit *le;
    struct row **rows;
    size_t n, cap;
    size_t keep_field; /* Up/Down in a one-line row: the field the next row focuses */
    char *zone;        /* mounts: the job's zone; NULL: any */
    const struct widget_palette *pal;
    bool utf8;
    char help[512];
};

/* ---- text ---- */

static void set_text(char **dst, const char *value)
{
    free(*dst);
    *dst = value && *value ? xstrdup(value) : NULL;
}

/* A sanitized copy of outside text for the screen (NULL stays NULL). */
static char *sanitized(const char *s)
{
    if (!s)
        return NULL;
    struct strbuf sb = STRBUF_INIT;
    utf8_sanitize(&sb, s, strlen(s), 0);
    return strbuf_detach(&sb, NULL);
}

/* ---- the three kinds ---- */

static struct textfield *new_text(const char *value, const char *placeholder)
{
    struct textfield *tf = textfield_new(value, 0); /* nothing from a file is cut */
    textfield_set_placeholder(tf, placeholder);
    return tf;
}

/* env[]: NAME = value */

static void env_make(struct wlist *l, struct row *r, bool new_row)
{
    struct env_var *e = r->item;
    if (new_row) /* its value is "" until typed; a file's variable without one keeps none */
        e->value = xstrdup("");
    r->wd[0] = textfield_widget(new_text(e->key, "NAME"));
    r->wd[1] = textfield_widget(new_text(e->value, "value"));
}

static void env_store(const struct row *r, void *item)
{
    struct env_var *e = item;
    const char *value = textfield_value(textfield_from_widget(r->wd[1]));
    set_text(&e->key, textfield_value(textfield_from_widget(r->wd[0])));
    if (*value || e->value) {
        free(e->value);
        e->value = xstrdup(value);
    }
}

/* mount[]: volume, directory inside it, mount path */

/*
 * Sets sel's options to the catalog's volumes (label the id, detail "name ·
 * zone"), those outside the job's zone disabled with the reason, and want
 * (a volume the catalog does not know) last; chooses want, else keeps the
 * choice, else (a new row) the first volume that can be picked.
 */
static void volume_options(const struct wlist *l, struct select *sel, const char *want,
                           bool new_row)
{
    const struct catalog *cat = l->cat;
    size_t nv = cat ? cat->volume_count : 0;
    struct select_option *o = xcalloc(nv + 1, sizeof *o);
    char(*detail)[160] = xcalloc(nv + 1, sizeof *detail);
    char(*reason)[160] = xcalloc(nv + 1, sizeof *reason);
    size_t n = 0, at = SELECT_NONE;
    for (size_t i = 0; i < nv; i++) {
        const struct catalog_volume *v = &cat->volumes[i];
        const char *name = v->display_name ? v->display_name : v->path ? v->path : "";
        snprintf(detail[n], sizeof detail[n], "%s%s%s", name, *name && v->zone ? " \xc2\xb7 " : "",
                 v->zone ? v->zone : "");
        bool elsewhere = l->zone && v->zone && strcmp(v->zone, l->zone) != 0;
        snprintf(reason[n], sizeof reason[n], "in zone %s; the job runs in %s",
                 v->zone ? v->zone : "?", l->zone ? l->zone : "?");
        o[n] = (struct select_option){v->id, detail[n], elsewhere, elsewhere ? reason[n] : NULL};
        if (want && strcmp(v->id, want) == 0)
            at = n;
        if (new_row && at == SELECT_NONE && !elsewhere)
            at = n;
        n++;
    }
    if (want && *want && (at == SELECT_NONE || strcmp(o[at].label, want) != 0)) {
        o[n] = (struct select_option){want, "not in the catalog", false, NULL};
        at = n++;
    }
    select_set_options(sel, o, n);
    if (at != SELECT_NONE || new_row)
        select_set_selected(sel, at);
    free(o);
    free(detail);
    free(reason);
}

static void mount_make(struct wlist *l, struct row *r, bool new_row)
{
    struct mount *m = r->item;
    if (new_row)
        m->type = MOUNT_TYPE_PV_AFS;
    struct select *vol = select_new(NULL, 0, SELECT_NONE);
    select_set_utf8(vol, l->utf8);
    volume_options(l, vol, m->id, new_row);
    r->wd[0] = select_widget(vol);
    r->wd[1] = textfield_widget(new_text(m->subdir, "the whole volume"));
    r->wd[2] = textfield_widget(new_text(m->mount_path, "e.g. /mnt/afs"));
}

static void mount_store(const struct row *r, void *item)
{
    struct mount *m = item;
    set_text(&m->id, select_selected_label(select_from_widget(r->wd[0])));
    set_text(&m->subdir, textfield_value(textfield_from_widget(r->wd[1])));
    set_text(&m->mount_path, textfield_value(textfield_from_widget(r->wd[2])));
}

/* fault_tolerance.rules[]: exit codes, action, mark the node unschedulable */

static const enum ft_action rule_actions[] = {FT_ACTION_RESTART_JOB, FT_ACTION_RESTART_POD,
                                              FT_ACTION_FAIL_JOB};

static void rule_make(struct wlist *l, struct row *r, bool new_row)
{
    const struct ft_rule *fr = r->item;
    static const struct select_option actions[] = {
        {"RESTART_JOB", "every worker restarts", false, NULL},
        {"RESTART_POD", "only the failed worker restarts", false, NULL},
        {"FAIL_JOB", "stop, no restart", false, NULL},
    };
    size_t at = new_row ? 0 : SELECT_NONE; /* a new rule restarts the job, as the platform would */
    for (size_t k = 0; !new_row && k < sizeof rule_actions / sizeof rule_actions[0]; k++)
        if (fr->action == rule_actions[k])
            at = k;
    struct select *action = select_new(actions, sizeof actions / sizeof actions[0], at);
    select_set_utf8(action, l->utf8);
    r->wd[0] = textfield_widget(new_text(fr->exit_codes, "any exit code"));
    r->wd[1] = select_widget(action);
    r->wd[2] =
        toggle_widget(toggle_new("mark the node unschedulable", fr->mark_node_unschedulable));
}

/* A variable's name: which names are system variables, from the one list validation uses. */
static const char *env_help(const struct row *r, size_t field)
{
    (void)r;
    static char help[400];
    if (field != 0)
        return NULL;
    snprintf(help, sizeof help, "letters, digits and _; not a system variable: %s",
             validate_env_reserved_list());
    return help;
}

/* What the chosen action means for the job (FORM.md §4's hints). */
static const char *rule_help(const struct row *r, size_t field)
{
    static const char *const hints[] = {
        "every worker restarts: re-initialising a big job can take half an hour",
        "healthy workers keep running (a PyTorch job often fails as a whole)",
        "the job stops at once: for errors a restart cannot fix",
    };
    size_t a = select_selected(select_from_widget(r->wd[1]));
    return field == 1 && a < sizeof hints / sizeof hints[0] ? hints[a] : NULL;
}

static void rule_store(const struct row *r, void *item)
{
    struct ft_rule *fr = item;
    size_t a = select_selected(select_from_widget(r->wd[1]));
    set_text(&fr->exit_codes, textfield_value(textfield_from_widget(r->wd[0])));
    fr->action =
        a < sizeof rule_actions / sizeof rule_actions[0] ? rule_actions[a] : FT_ACTION_UNSPECIFIED;
    fr->mark_node_unschedulable = toggle_on(toggle_from_widget(r->wd[2]));
    /* written when the file wrote it, or it is on */
    fr->has_mark_node_unschedulable |= fr->mark_node_unschedulable;
}

/* clang-format off */
static const struct list_kind kinds[] = {
    [WLIST_ENV] = {
        .path = "env",
        .row_name = "env",
        .noun = "a variable",
        .max_rows = VALIDATE_MAX_ENV,
        .nfields = 2,
        .one_line = true,
        .names = {"key", "value"},
        .labels = {"name", "value"},
        .help = {NULL, /* env_help: the system variables' list */
                 "the value, as the startup script will see it"},
        .row_help = env_help,
        .make = env_make,
        .store = env_store,
    },
    [WLIST_MOUNT] = {
        .path = "mount",
        .row_name = "mount",
        .noun = "a mount",
        .max_rows = 0,
        .nfields = 3,
        .names = {"id", "subdir", "mount_path"},
        .labels = {"volume", "directory", "mount path"},
        .help = {"the volume to mount; Enter lists those of the catalog",
                 "a directory inside the volume; empty mounts all of it",
                 "where it appears in every worker, e.g. /mnt/afs"},
        .make = mount_make,
        .store = mount_store,
    },
    [WLIST_RULE] = {
        .path = "fault_tolerance.rules",
        .row_name = "rules",
        .noun = "a rule",
        .max_rows = VALIDATE_MAX_RULES,
        .nfields = 3,
        .names = {"exit_codes", "action", "mark_node_unschedulable"},
        .labels = {"exit codes", "action", "node"},
        .help = {"e.g. 1, 200-205, 199,255; empty: any; first match wins",
                 "what happens when a worker exits with one of the codes",
                 "restarts avoid the node; may wait if no other node fits"},
        .row_help = rule_help,
        .make = rule_make,
        .store = rule_store,
    },
};
/* clang-format on */

/* ---- rows ---- */

/* A row showing item (a job's element: copied), or a new row (item NULL). */
static struct row *row_new(struct wlist *l, const void *item)
{
    struct row *r = xcalloc(1, sizeof *r);
    r->item = xcalloc(1, l->type->size);
    if (item)
        schema_copy(l->type, r->item, item);
    l->kind->make(l, r, item == NULL);
    return r;
}

static void row_free(const struct wlist *l, struct row *r)
{
    for (size_t i = 0; i < FIELDS_MAX; i++) {
        if (r->wd[i])
            r->wd[i]->ops->destroy(r->wd[i]);
        free(r->message[i]);
    }
    schema_free(l->type, r->item);
    free(r->item);
    free(r);
}

/* Puts r at index at, the rows from there shifting down. */
static void insert_row(struct wlist *l, size_t at, struct row *r)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 4;
        l->rows = xreallocarray(l->rows, l->cap, sizeof *l->rows);
    }
    if (at > l->n)
        at = l->n;
    memmove(&l->rows[at + 1], &l->rows[at], (l->n - at) * sizeof *l->rows);
    l->rows[at] = r;
    l->n++;
}

/* Takes the row at index at out of the list (the caller frees or reinserts it). */
static struct row *take_row(struct wlist *l, size_t at)
{
    struct row *r = l->rows[at];
    memmove(&l->rows[at], &l->rows[at + 1], (l->n - at - 1) * sizeof *l->rows);
    l->n--;
    return r;
}

/* Where a row's fields go at width w: column and width of each, from the row's left edge. */
struct row_layout {
    int name_w; /* the row's name and its gap */
    int label_w;
    int x[FIELDS_MAX], w[FIELDS_MAX];
};

static void layout_row(const struct wlist *l, int w, struct row_layout *lo)
{
    const struct list_kind *k = l->kind;
    memset(lo, 0, sizeof *lo);
    lo->name_w = (int)strlen(k->row_name) + 4 + ROW_GAP; /* "rules[19]" */
    if (k->one_line) {
        int avail = w - lo->name_w - 3; /* " = " between the two */
        int first = avail * 2 / 5;
        lo->x[0] = lo->name_w;
        lo->w[0] = first;
        lo->x[1] = lo->name_w + first + 3;
        lo->w[1] = avail - first;
    } else {
        for (size_t i = 0; i < k->nfields; i++) {
            int c = (int)utf8_width(k->labels[i], strlen(k->labels[i]));
            lo->label_w = c > lo->label_w ? c : lo->label_w;
        }
        lo->label_w += ROW_GAP;
        for (size_t i = 0; i < k->nfields; i++) {
            lo->x[i] = lo->name_w + lo->label_w;
            lo->w[i] = w - lo->x[i];
        }
    }
    for (size_t i = 0; i < k->nfields; i++)
        lo->w[i] = lo->w[i] > 0 ? lo->w[i] : 0;
}

/* Lines field i's message takes under it (0 without one). */
static int message_lines(const struct row *r, size_t i, const struct row_layout *lo, int w)
{
    if (r->severity[i] == FORM_MESSAGE_NONE || !r->message[i])
        return 0;
    return widget_wrapped_lines(r->message[i], w - lo->x[i] - ICON_CELLS, MESSAGE_LINES);
}

/* ---- listedit callbacks ---- */

static size_t cb_count(void *ctx)
{
    struct wlist *l = ctx;
    return l->n;
}

static int cb_row_height(void *ctx, size_t row, int w)
{
    struct wlist *l = ctx;
    const struct row *r = l->rows[row];
    struct row_layout lo;
    layout_row(l, w, &lo);
    int h = l->kind->one_line ? 1 : (int)l->kind->nfields;
    for (size_t i = 0; i < l->kind->nfields; i++)
        h += message_lines(r, i, &lo, w);
    return h;
}

static void draw_message(const struct wlist *l, const struct row *r, size_t i, WINDOW *win, int y,
                         int x, int w)
{
    const struct widget_palette *pal = l->pal ? l->pal : widget_palette_mono();
    const char *icon;
    attr_t a;
    switch (r->severity[i]) {
    case FORM_MESSAGE_ERROR:
        icon = l->utf8 ? "\xe2\x9c\x97 " : "x ";
        a = pal->error;
        break;
    case FORM_MESSAGE_WARNING:
        icon = "! ";
        a = pal->warning;
        break;
    default:
        icon = l->utf8 ? "\xe2\x9c\x93 " : "+ ";
        a = pal->ok;
        break;
    }
    wattrset(win, (int)a);
    widget_put_clipped(win, y, x, w, icon, strlen(icon), l->utf8);
    widget_put_wrapped(win, y, x + ICON_CELLS, w - ICON_CELLS, r->message[i], MESSAGE_LINES,
                       l->utf8);
}

/*
 * Draws row: its name, each field (the focused one in the focus role, all
 * dim while the list is disabled) and the messages under them; the cursor
 * is left in the focused field.
 */
static void cb_draw_row(void *ctx, size_t row, WINDOW *win, int y, int x, int w, bool focused)
{
    struct wlist *l = ctx;
    const struct list_kind *k = l->kind;
    const struct widget_palette *pal = l->pal ? l->pal : widget_palette_mono();
    struct row *r = l->rows[row];
    bool off = listedit_widget(l->le)->disabled;
    struct row_layout lo;
    int cy = -1, cx = -1, line = y;
    char name[32];

    layout_row(l, w, &lo);
    wattrset(win, (int)(off ? pal->dim : focused ? pal->label | A_BOLD : pal->label));
    snprintf(name, sizeof name, "%s[%zu]", k->row_name, row);
    widget_put_clipped(win, y, x, lo.name_w - 1, name, strlen(name), l->utf8);
    for (size_t i = 0; i < k->nfields; i++) {
        bool here = focused && i == r->focus;
        int fy = k->one_line ? y : line;
        if (k->one_line && i == 1) {
            wattrset(win, (int)pal->dim);
            widget_put_clipped(win, y, x + lo.x[0] + lo.w[0], 3, " = ", 3, l->utf8);
        } else if (!k->one_line) {
            wattrset(win, (int)(off ? pal->dim : here ? pal->label | A_BOLD : pal->dim));
            widget_put_clipped(win, fy, x + lo.name_w, lo.label_w - ROW_GAP, k->labels[i],
                               strlen(k->labels[i]), l->utf8);
        }
        r->fy[i] = fy;
        r->fx[i] = x + lo.x[i];
        r->fw[i] = lo.w[i];
        if (lo.w[i] > 0) {
            wattrset(win, (int)(off ? pal->dim : here ? pal->focus : pal->normal));
            wmove(win, fy, x + lo.x[i]);
            r->wd[i]->ops->draw(r->wd[i], win, fy, x + lo.x[i], lo.w[i], here);
            if (here)
                getyx(win, cy, cx);
        }
        /* its message under it (a one-line row's: under the row, each field's in turn) */
        if (!k->one_line || i == 0)
            line++;
        if (message_lines(r, i, &lo, w)) {
            draw_message(l, r, i, win, line, x + lo.x[i], w - lo.x[i]);
            line += message_lines(r, i, &lo, w);
        }
    }
    if (cy >= 0)
        wmove(win, cy, cx);
}

/* Focus to the next (dir > 0) or previous field of r; false past either end. */
static bool move_field(const struct wlist *l, struct row *r, int dir)
{
    if (dir > 0 && r->focus + 1 < l->kind->nfields) {
        r->focus++;
        return true;
    }
    if (dir < 0 && r->focus > 0) {
        r->focus--;
        return true;
    }
    return false;
}

/*
 * A key for row: its focused field first; then Tab / Shift-Tab (and Down /
 * Up between lines of a row) move between the row's fields. What is left
 * goes back to the list as IGNORED: the list moves to the neighbour row,
 * or acts on it (Alt-N, Alt-D, Alt-Up…).
 */
static unsigned cb_row_key(void *ctx, size_t row, const struct widget_key *k)
{
    struct wlist *l = ctx;
    struct row *r = l->rows[row];
    struct widget *wd = r->wd[r->focus];
    struct select *sel = select_from_widget(wd);
    bool was_open = sel && select_is_open(sel);

    l->keep_field = NO_FIELD;
    unsigned res = wd->ops->key(wd, k);
    if (res & WIDGET_REDRAW)
        wd->dirty = true;
    if (res & (WIDGET_FOCUS_NEXT | WIDGET_FOCUS_PREV)) {
        if (!move_field(l, r, res & WIDGET_FOCUS_NEXT ? 1 : -1))
            return res; /* past the row's last field: the list moves on */
        return (res & ~(unsigned)(WIDGET_FOCUS_NEXT | WIDGET_FOCUS_PREV)) | WIDGET_HANDLED |
               WIDGET_REDRAW;
    }
    if (res != WIDGET_IGNORED)
        return res;
    if (was_open) { /* a key the popup ignores closes it, then does what it does */
        select_close(sel);
        listedit_changed(l->le);
    }
    bool plain = !k->alt;
    bool next = plain && (k->is_function ? k->code == KEY_DOWN : k->code == '\t');
    bool prev = plain && k->is_function && (k->code == KEY_UP || k->code == KEY_BTAB);
    bool vertical = plain && k->is_function && (k->code == KEY_UP || k->code == KEY_DOWN);
    if (vertical && l->kind->one_line) {
        l->keep_field = r->focus; /* the row above / below keeps the column */
        return WIDGET_IGNORED;
    }
    if ((next || prev) && move_field(l, r, next ? 1 : -1)) {
        listedit_changed(l->le);
        return WIDGET_HANDLED | WIDGET_REDRAW;
    }
    return WIDGET_IGNORED;
}

static void cb_add_row(void *ctx, size_t at)
{
    struct wlist *l = ctx;
    insert_row(l, at, row_new(l, NULL));
}

static void cb_remove_row(void *ctx, size_t row)
{
    struct wlist *l = ctx;
    if (row < l->n)
        row_free(l, take_row(l, row));
}

static void cb_move_row(void *ctx, size_t from, size_t to)
{
    struct wlist *l = ctx;
    if (from < l->n && to < l->n)
        insert_row(l, to, take_row(l, from));
}

static void cb_focus_row(void *ctx, size_t row, bool from_below)
{
    struct wlist *l = ctx;
    struct row *r = l->rows[row];
    size_t last = l->kind->nfields - 1;
    if (l->keep_field != NO_FIELD)
        r->focus = l->keep_field < last ? l->keep_field : last;
    else
        r->focus = from_below ? last : 0;
    l->keep_field = NO_FIELD;
}

static const struct listedit_ops row_ops = {
    .count = cb_count,
    .row_height = cb_row_height,
    .draw_row = cb_draw_row,
    .row_key = cb_row_key,
    .add_row = cb_add_row,
    .remove_row = cb_remove_row,
    .move_row = cb_move_row,
    .focus_row = cb_focus_row,
};

/* ---- the list ---- */

bool wlist_kind_of(const char *path, enum wlist_kind *kind)
{
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (strcmp(kinds[i].path, path) == 0) {
            *kind = (enum wlist_kind)i;
            return true;
        }
    return false;
}

struct wlist *wlist_new(enum wlist_kind kind, const struct catalog *cat, const struct jobspec *init)
{
    struct wlist *l = xcalloc(1, sizeof *l);
    l->kind = &kinds[kind];
    l->cat = cat;
    l->utf8 = true;
    l->keep_field = NO_FIELD;
    /* env and rules: as many rows as the backend takes (validate_form_limits) */
    struct form_limits lim;
    validate_form_limits(cat, &lim);
    size_t max_rows = kind == WLIST_ENV    ? (size_t)lim.max_env
                      : kind == WLIST_RULE ? (size_t)lim.max_rules
                                           : l->kind->max_rows;
    l->le = listedit_new(&row_ops, l, max_rows);
    char hint[96];
    snprintf(hint, sizeof hint, "none \xe2\x80\x94 Alt-N or Insert adds %s", l->kind->noun);
    listedit_set_empty_hint(l->le, hint);
    struct jobspec probe; /* the type of the job's elements, and init's, by the list's path */
    struct schema_ref ref;
    jobspec_init(&probe);
    schema_find(jobspec_schema(), init ? (void *)init : &probe, l->kind->path, &ref);
    l->type = ref.field->type;
    for (size_t i = 0; init && i < schema_ref_count(&ref); i++)
        insert_row(l, l->n, row_new(l, schema_ref_item(&ref, i)));
    return l;
}

void wlist_free(struct wlist *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->n; i++)
        row_free(l, l->rows[i]);
    free(l->rows);
    free(l->zone);
    free(l);
}

struct widget *wlist_widget(struct wlist *l)
{
    return listedit_widget(l->le);
}

const char *wlist_path(const struct wlist *l)
{
    return l->kind->path;
}

size_t wlist_count(const struct wlist *l)
{
    return l->n;
}

void wlist_store(const struct wlist *l, struct jobspec *job)
{
    struct schema_ref ref;
    if (!schema_find(jobspec_schema(), job, l->kind->path, &ref))
        return;
    schema_ref_unset(&ref);
    for (size_t i = 0; i < l->n; i++) { /* each a copy of the element shown, edited */
        void *item = schema_ref_append(&ref);
        schema_copy(l->type, item, l->rows[i]->item);
        l->kind->store(l->rows[i], item);
    }
}

bool wlist_claim(const struct wlist *l, const char *path, size_t *row, size_t *field)
{
    size_t plen = strlen(l->kind->path);
    if (strncmp(path, l->kind->path, plen) != 0 || path[plen] != '[' || path[plen + 1] < '0' ||
        path[plen + 1] > '9')
        return false;
    char *end;
    unsigned long long i = strtoull(path + plen + 1, &end, 10);
    if (*end != ']' || i >= l->n)
        return false;
    const char *rest = end + 1;
    *row = (size_t)i;
    *field = 0;
    if (*rest == '.') {
        rest++;
        for (size_t f = 0; f < l->kind->nfields; f++) {
            size_t n = strlen(l->kind->names[f]);
            if (strncmp(rest, l->kind->names[f], n) == 0 &&
                (rest[n] == '\0' || rest[n] == '.' || rest[n] == '['))
                *field = f;
        }
    }
    return true;
}

void wlist_clear_messages(struct wlist *l)
{
    bool had = false;
    for (size_t i = 0; i < l->n; i++) {
        struct row *r = l->rows[i];
        for (size_t f = 0; f < FIELDS_MAX; f++) {
            had = had || r->message[f];
            free(r->message[f]);
            r->message[f] = NULL;
            r->severity[f] = FORM_MESSAGE_NONE;
        }
    }
    if (had)
        listedit_changed(l->le);
}

void wlist_set_message(struct wlist *l, size_t row, size_t field, enum form_severity severity,
                       const char *text)
{
    if (row >= l->n || field >= l->kind->nfields || !text)
        return;
    struct row *r = l->rows[row];
    if (r->severity[field] >= severity) /* an error outranks a warning; the first one stays */
        return;
    free(r->message[field]);
    r->message[field] = sanitized(text);
    r->severity[field] = severity;
    listedit_changed(l->le);
}

void wlist_focus(struct wlist *l, size_t row, size_t field)
{
    if (row >= l->n)
        return;
    listedit_set_focus(l->le, row);
    l->rows[row]->focus = field < l->kind->nfields ? field : 0;
}

void wlist_enter(struct wlist *l, bool from_below)
{
    if (l->n == 0)
        return;
    wlist_focus(l, from_below ? l->n - 1 : 0, from_below ? l->kind->nfields - 1 : 0);
}

size_t wlist_focus_id(const struct wlist *l)
{
    if (l->n == 0)
        return (size_t)-1;
    size_t row = listedit_focused(l->le);
    return row * FIELDS_MAX + l->rows[row]->focus;
}

const char *wlist_help(struct wlist *l)
{
    const char *keys =
        l->utf8 ? "Alt-N add \xc2\xb7 Alt-D remove \xc2\xb7 Alt-\xe2\x86\x91\xe2\x86\x93 move"
                : "Alt-N add, Alt-D remove, Alt-Up/Down move";
    if (l->n == 0) {
        snprintf(l->help, sizeof l->help, "Alt-N or Insert adds %s", l->kind->noun);
        return l->help;
    }
    if (listedit_refused(l->le)) {
        snprintf(l->help, sizeof l->help,
                 "full: at most %zu rows here (the backend's limit); none was added, and "
                 "typing is held until Esc",
                 l->n);
        return l->help;
    }
    const struct row *r = l->rows[listedit_focused(l->le)];
    const char *help = l->kind->row_help ? l->kind->row_help(r, r->focus) : NULL;
    snprintf(l->help, sizeof l->help, "%s%s%s", help ? help : l->kind->help[r->focus],
             l->utf8 ? " \xc2\xb7 " : "; ", keys);
    return l->help;
}

struct select *wlist_open_select(struct wlist *l, int *y, int *x, int *w)
{
    if (l->n == 0)
        return NULL;
    struct row *r = l->rows[listedit_focused(l->le)];
    struct select *sel = select_from_widget(r->wd[r->focus]);
    if (!sel || !select_is_open(sel))
        return NULL;
    *y = r->fy[r->focus];
    *x = r->fx[r->focus];
    *w = r->fw[r->focus];
    return sel;
}

void wlist_close_popups(struct wlist *l)
{
    for (size_t i = 0; i < l->n; i++)
        for (size_t f = 0; f < l->kind->nfields; f++) {
            struct select *sel = select_from_widget(l->rows[i]->wd[f]);
            if (sel && select_is_open(sel)) {
                select_close(sel);
                listedit_changed(l->le);
            }
        }
}

void wlist_set_palette(struct wlist *l, const struct widget_palette *pal, bool utf8)
{
    if (l->pal == pal && l->utf8 == utf8)
        return;
    l->pal = pal;
    l->utf8 = utf8;
    for (size_t i = 0; i < l->n; i++)
        for (size_t f = 0; f < l->kind->nfields; f++) {
            struct select *sel = select_from_widget(l->rows[i]->wd[f]);
            if (sel)
                select_set_utf8(sel, utf8);
        }
    listedit_changed(l->le);
}

const char *wlist_mount_path(const struct wlist *l, size_t row)
{
    if (l->kind != &kinds[WLIST_MOUNT] || row >= l->n)
        return NULL;
    return textfield_value(textfield_from_widget(l->rows[row]->wd[2]));
}

const char *wlist_mount_volume(const struct wlist *l, size_t row)
{
    if (l->kind != &kinds[WLIST_MOUNT] || row >= l->n)
        return NULL;
    return select_selected_label(select_from_widget(l->rows[row]->wd[0]));
}

void wlist_set_zone(struct wlist *l, const char *zone)
{
    if (l->kind != &kinds[WLIST_MOUNT])
        return;
    if (zone && !*zone)
        zone = NULL;
    if ((!zone && !l->zone) || (zone && l->zone && strcmp(zone, l->zone) == 0))
        return;
    free(l->zone);
    l->zone = zone ? xstrdup(zone) : NULL;
    for (size_t i = 0; i < l->n; i++) {
        struct select *vol = select_from_widget(l->rows[i]->wd[0]);
        const char *chosen = select_selected_label(vol);
        char *want = chosen ? xstrdup(chosen) : NULL;
        volume_options(l, vol, want, false);
        free(want);
    }
    listedit_changed(l->le);
}
