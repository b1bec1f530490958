/*
 * wizard_fields: the wizard's fields (tui/wizard.c owns the screen and
 * its keys). Makes each section's widgets prefilled from the job the
 * wizard opened with, refreshes the choices the catalog drives (pools of
 * the workspace, zones and specs of the pool, priorities the caller may
 * pick, log paths from the mounts) and builds the job from what the
 * fields say (wz_build_job), over a copy of the job opened with. Every
 * field is a row of the form table (api/formtab.c): its widget is made from
 * the row and what the job has at the row's path, and written back there,
 * both through the job's schema table; a row marked handled (the lists,
 * the image list, the log path) has a few lines of its own here.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/catalog.h"
#include "api/finding.h"
#include "api/formtab.h"
#include "api/jobspec.h"
#include "api/jobspec_defaults.h"
#include "api/jobspec_json.h"
#include "api/ngctag.h"
#include "api/schema.h"
#include "api/validate.h"
#include "tui/wizard.h"
#include "tui/wizard_lists.h"
#include "tui/wizard_priv.h"
#include "util/sizefmt.h"
#include "util/strbuf.h"
#include "util/xalloc.h"
#include "widgets/form.h"
#include "widgets/note.h"
#include "widgets/numberfield.h"
#include "widgets/select.h"
#include "widgets/textarea.h"
#include "widgets/textfield.h"
#include "widgets/toggle.h"

/* What a value the catalog or the form does not offer says beside it in the list. */
#define FROM_FILE "from the file; not in the catalog"

/* Adds wd as the field of the form table's row: its section, label and help. */
static size_t add_row(struct wizard *wz, struct widget *wd, const struct formtab_row *row)
{
    size_t e = form_add(wz->forms[row->section], row->label, wd,
                        row->kind == FORMTAB_NOTE ? NULL : row->help);
    form_set_wide(wz->forms[row->section], e,
                  row->kind == FORMTAB_TEXTAREA || row->kind == FORMTAB_LIST ||
                      row->kind == FORMTAB_NOTE);
    if (row->read_only)
        form_set_disabled(wz->forms[row->section], e, true, "read-only: the platform mounts it");
    if (wz->field_count < sizeof wz->fields / sizeof wz->fields[0])
        wz->fields[wz->field_count++] = (struct wz_field){row, e, wd, false};
    return e;
}

/*
 * The widget of a row, of the row's kind, holding what init has at the
 * row's path, read through the job's schema table: a number loaded outside
 * the row's range widens it (never clamped); a choice holds the job's
 * value, and wz_refresh fills its list from where its choices come from.
 */
static struct widget *row_widget(const struct wizard *wz, const struct jobspec *init,
                                 const struct formtab_row *row)
{
    struct schema_ref ref;
    bool found = init && schema_find(jobspec_schema(), (void *)init, row->path, &ref);
    const char *text = found ? schema_ref_string(&ref) : NULL;
    int64_t v = row->min;
    bool on = row->on_when_absent;
    switch (row->kind) {
    case FORMTAB_NUMBER: {
        if (found)
            schema_ref_int(&ref, &v);
        struct numberfield *nf = numberfield_new(v < row->min ? (long)v : row->min,
                                                 v > row->max ? (long)v : row->max, (long)v);
        numberfield_set_suffix(nf, row->words);
        return numberfield_widget(nf);
    }
    case FORMTAB_TOGGLE:
        if (found)
            schema_ref_bool(&ref, &on);
        return toggle_widget(toggle_new(row->words, on));
    case FORMTAB_TEXTAREA: {
        struct textarea *ta = textarea_new(text, 8, (size_t)row->max_chars);
        textarea_set_placeholder(ta, row->placeholder);
        return textarea_widget(ta);
    }
    case FORMTAB_CHOICE: {
        /* The job's value, chosen: the refresh of its choices keeps it (wz_refresh). */
        struct select_option file = {text    ? text
                                     : found ? schema_ref_enum_name(&ref)
                                             : NULL,
                                     FROM_FILE, false, NULL};
        bool has = file.label && *file.label;
        /* the VPC is typed where the catalog does not list them */
        if (row->choices != FORMTAB_VPCS ||
            (wz->cat && !(wz->cat->unknown & CATALOG_UNKNOWN_ZONES)))
            return select_widget(select_new(&file, has, has ? 0 : SELECT_NONE));
    }
        /* fall through */
    default: {
        struct textfield *tf = textfield_new(text, (size_t)row->max_chars);
        textfield_set_placeholder(tf, row->placeholder);
        return textfield_widget(tf);
    }
    }
}

/* The field of row (NULL: none). */
static const struct wz_field *field_of(const struct wizard *wz, const struct formtab_row *row)
{
    for (size_t i = 0; i < wz->field_count; i++)
        if (wz->fields[i].row == row)
            return &wz->fields[i];
    return NULL;
}

/* The widget of the (first) field of path. */
static struct widget *widget_of(const struct wizard *wz, const char *path)
{
    const struct wz_field *fd = field_of(wz, formtab_row(path));
    return fd ? fd->wd : NULL;
}

static const struct catalog_workspace *current_workspace(const struct wizard *wz)
{
    const char *ws = select_selected_label(wz->workspace);
    return ws && wz->cat ? catalog_workspace(wz->cat, ws) : NULL;
}

const struct catalog_pool *wz_current_pool(const struct wizard *wz)
{
    const char *p = select_selected_label(wz->pool);
    return p && wz->cat ? catalog_pool(wz->cat, p) : NULL;
}

/*
 * Whether the job runs in a zone: the catalog says so of its pool; for a pool
 * the catalog does not list, the job opened with does (a zone or VPC, or idle
 * quota), so a file written for another backend's zoned pool keeps both.
 */
static bool zoned(const struct wizard *wz)
{
    const struct catalog_pool *p = wz_current_pool(wz);
    if (p)
        return catalog_pool_needs_zone(wz->cat, p);
    const struct jobspec *b = &wz->base;
    const char *pool = select_selected_label(wz->pool);
    bool same_pool = pool && b->resource_pool.name && strcmp(pool, b->resource_pool.name) == 0;
    return same_pool && (b->resource_pool.zone || b->resource_pool.vpc_id ||
                         b->scheduling.quota_type == QUOTA_TYPE_SPOT);
}

/*
 * Whether the job runs on idle quota (SPOT): the quota type its pool
 * implies, as render and trainjobd derive it (jobspec_defaults), or the
 * file's for a pool the catalog does not list.
 */
static bool idle_quota(const struct wizard *wz)
{
    enum quota_type q = jobspec_pool_quota_type(wz->cat, select_selected_label(wz->pool));
    return (q != QUOTA_TYPE_UNSPECIFIED ? q : wz->base.scheduling.quota_type) == QUOTA_TYPE_SPOT;
}

static size_t index_of(const struct select_option *o, size_t n, const char *label)
{
    for (size_t i = 0; label && i < n; i++)
        if (strcmp(o[i].label, label) == 0)
            return i;
    return SELECT_NONE;
}

/*
 * Sets sel's choices to o[0..n) (o has room for one more), keeping the
 * value chosen. A value the choices lack stays chosen, as a choice of its
 * own saying so (the file's FROM_FILE, else `before`: "chosen before; not in
 * this pool"), and validation says what is wrong with it, rather than the
 * first choice taking its place; only with nothing chosen is the first one
 * taken.
 */
static void set_choices(struct select *sel, struct select_option *o, size_t n, const char *before)
{
    const char *cur = select_selected_label(sel);
    const char *said = cur ? select_detail(sel, select_selected(sel)) : NULL;
    char *keep = cur && *cur ? xstrdup(cur) : NULL;
    if (keep && index_of(o, n, keep) == SELECT_NONE)
        o[n++] = (struct select_option){
            keep, said && strcmp(said, FROM_FILE) == 0 ? FROM_FILE : before, false, NULL};
    select_set_options(sel, o, n);
    size_t at = index_of(o, n, keep);
    select_set_selected(sel, at != SELECT_NONE ? at : n ? 0 : SELECT_NONE);
    free(keep);
}

/* The framework chosen: one the form offers, or the file's own API value. */
static enum framework current_framework(const struct wizard *wz)
{
    const char *name = wz->framework ? select_selected_label(wz->framework) : NULL;
    int fw = name ? enum_value(&framework_names, name) : -1;
    return fw > 0 ? (enum framework)fw : FRAMEWORK_UNSPECIFIED;
}

/*
 * The name the job is submitted under while Name is empty, made for the
 * framework chosen (its prefix) and shown as Name's placeholder and on Review.
 */
static void refresh_generated_name(struct wizard *wz)
{
    enum framework fw = current_framework(wz);
    const char *prefix = framework_name_prefix(fw ? fw : FRAMEWORK_PYTORCH_DDP);
    if (wz->generated_name && strncmp(wz->generated_name, prefix, strlen(prefix)) == 0 &&
        wz->generated_name[strlen(prefix)] == '-')
        return;
    free(wz->generated_name);
    wz->generated_name = jobspec_generate_name(fw ? fw : FRAMEWORK_PYTORCH_DDP);
    char *ph = xasprintf("empty: generated, %s", wz->generated_name);
    textfield_set_placeholder(wz->name, ph);
    free(ph);
}

/* "pool image · NGC · release 24.05, CUDA 12.4" for a catalog image. */
static void image_detail(const struct catalog_image *im, char *buf, size_t n)
{
    const char *src = im->source ? im->source : "";
    const char *kind = strcmp(src, "official") == 0      ? "pool image"
                       : strcmp(src, "dev-machine") == 0 ? "dev-machine image"
                       : strcmp(src, "private") == 0     ? "private image"
                       : *src                            ? src
                                                         : "image";
    bool ngc = im->path && strncmp(im->path, "nvcr.io/", 8) == 0;
    struct strbuf tag = STRBUF_INIT;
    if (!im->description && im->path)
        ngctag_explain(im->path, &tag);
    const char *what = im->description ? im->description : tag.len ? strbuf_str(&tag) : NULL;
    snprintf(buf, n, "%s%s%s%s", kind, ngc ? " \xc2\xb7 NGC" : "", what ? " \xc2\xb7 " : "",
             what ? what : "");
    strbuf_free(&tag);
}

/* The catalog's images as choices; the one the reference names is chosen (none: typed). */
static void refresh_image_pick(struct wizard *wz)
{
    size_t n = wz->cat ? wz->cat->image_count : 0;
    struct select_option *o = xcalloc(n + 1, sizeof *o);
    char(*detail)[200] = xcalloc(n + 1, sizeof *detail);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const struct catalog_image *im = &wz->cat->images[i];
        if (!im->path)
            continue;
        image_detail(im, detail[k], sizeof detail[k]);
        o[k] = (struct select_option){im->path, detail[k], false, NULL};
        k++;
    }
    select_set_options(wz->image_pick, o, k);
    select_set_selected(wz->image_pick, index_of(o, k, textfield_value(wz->image)));
    free(detail);
    free(o);
}

/* The VPCs of the chosen zone's region. */
static void refresh_vpcs(struct wizard *wz)
{
    if (!wz->vpc_pick)
        return;
    const char *zname = select_selected_label(wz->zone);
    const struct catalog_zone *z = zname && wz->cat ? catalog_zone(wz->cat, zname) : NULL;
    struct select_option o[MAX_OPTIONS + 1];
    size_t n = 0;
    for (size_t i = 0; z && z->region && i < wz->cat->vpc_count && n < MAX_OPTIONS; i++) {
        const struct catalog_vpc *v = &wz->cat->vpcs[i];
        if (v->id && v->region && strcmp(v->region, z->region) == 0)
            o[n++] = (struct select_option){v->id, v->region, false, NULL};
    }
    set_choices(wz->vpc_pick, o, n, "chosen before; not in this zone's region");
}

/* Whether the rows shown when w are shown now. */
static bool shown_when(const struct wizard *wz, enum formtab_when w)
{
    switch (w) {
    case FORMTAB_ZONED:
        return zoned(wz);
    case FORMTAB_IDLE:
        return idle_quota(wz);
    case FORMTAB_SSH: /* always for MPI */
        return toggle_on(wz->ssh) || current_framework(wz) == FRAMEWORK_MPI;
    case FORMTAB_TENSORBOARD:
        return toggle_on(wz->tensorboard);
    default:
        return true;
    }
}

static void refresh_shown(struct wizard *wz)
{
    for (size_t i = 0; i < wz->field_count; i++) {
        const struct wz_field *fd = &wz->fields[i];
        form_set_hidden(wz->forms[fd->row->section], fd->entry, !shown_when(wz, fd->row->when));
    }
}

/* The pools of the chosen workspace, each with its resource type. */
static void refresh_pools(struct wizard *wz)
{
    struct select_option o[MAX_OPTIONS + 1];
    size_t n = 0;
    const struct catalog_workspace *ws = current_workspace(wz);
    for (size_t i = 0; wz->cat && i < wz->cat->pool_count && n < MAX_OPTIONS; i++) {
        const struct catalog_pool *p = &wz->cat->pools[i];
        if (ws && !catalog_workspace_has_pool(ws, p->name))
            continue;
        o[n++] = (struct select_option){p->name, pool_type_label(p->type), false, NULL};
    }
    set_choices(wz->pool, o, n, "chosen before; not in this workspace");
}

/*
 * An enum row's choices: the values its row offers, named as the schema
 * names them (priorities the caller's role may not pick disabled, with the
 * reason); a value the form does not offer (the file's) stays, as set_choices
 * keeps it.
 */
static void refresh_enum(struct wizard *wz, const struct formtab_row *row)
{
    struct schema_ref ref;
    struct select *sel = select_from_widget(widget_of(wz, row->path));
    if (!sel || !schema_find(jobspec_schema(), &wz->job, row->path, &ref))
        return;
    const struct catalog_workspace *ws = current_workspace(wz);
    static char reason[200];
    if (ws)
        catalog_priority_refusal(ws, reason, sizeof reason);
    struct select_option o[16];
    size_t n = 0;
    for (const int *v = row->offered; *v && n < 15; v++) {
        bool refused =
            row->choices == FORMTAB_PRIORITIES && ws && !catalog_ws_priority_allowed(ws, *v);
        const char *note = row->choices == FORMTAB_FRAMEWORKS ? framework_label(*v)
                           : *v == PRIORITY_NORMAL            ? "default"
                                                              : NULL;
        o[n++] = (struct select_option){enum_name(ref.field->names, *v), note, refused,
                                        refused ? reason : NULL};
    }
    set_choices(sel, o, n, "not offered here");
}

/* Zones and specs of the chosen pool. */
static void refresh_pool_choices(struct wizard *wz)
{
    const struct catalog_pool *p = wz_current_pool(wz);
    struct select_option o[MAX_OPTIONS + 1];
    static char details[MAX_OPTIONS][96];
    size_t n = 0;
    static char regions[MAX_OPTIONS][96];
    for (size_t i = 0; p && i < p->zone_count && n < MAX_OPTIONS; i++) {
        /* Each zone shows its region (the catalog's zones say which). */
        const struct catalog_zone *z = wz->cat ? catalog_zone(wz->cat, p->zones[i]) : NULL;
        snprintf(regions[n], sizeof regions[n], "region %s", z && z->region ? z->region : "?");
        o[n] = (struct select_option){p->zones[i], regions[n], false, NULL};
        n++;
    }
    set_choices(wz->zone, o, n, "chosen before; not in this pool");

    n = 0;
    for (size_t i = 0; p && i < p->spec_count && n < MAX_OPTIONS; i++) {
        const struct catalog_spec *s = &p->specs[i];
        struct strbuf mem = STRBUF_INIT; /* 1000 MiB says so, not "0 GiB" */
        sizefmt_add_mib(&mem, (long long)s->memory_mib);
        if (s->devices > 0)
            snprintf(details[n], sizeof details[n], "%d× %s · %d vCPU · %s", s->devices,
                     s->device_type ? s->device_type : "GPU", s->vcpus, strbuf_str(&mem));
        else
            snprintf(details[n], sizeof details[n], "no device · %d vCPU · %s", s->vcpus,
                     strbuf_str(&mem));
        strbuf_free(&mem);
        o[n] = (struct select_option){s->name, details[n], false, NULL};
        n++;
    }
    set_choices(wz->spec, o, n, "chosen before; not in this pool");
}

/* What the replica count means for the framework, and the devices it adds up to. */
static void refresh_replica_hint(struct wizard *wz)
{
    bool ok;
    long n = numberfield_value(wz->replicas, &ok);
    enum framework fw = current_framework(wz);
    char buf[160];
    if (!ok)
        n = 1;
    if (fw == FRAMEWORK_TENSORFLOW_PS || fw == FRAMEWORK_TENSORFLOW)
        snprintf(buf, sizeof buf, "workers: 1 parameter server + %ld", n > 1 ? n - 1 : 0);
    else if (fw != FRAMEWORK_MPI)
        snprintf(buf, sizeof buf, n > 1 ? "workers: 1 master + %ld" : "worker: 1 master", n - 1);
    else
        snprintf(buf, sizeof buf, "MPI ranks");
    numberfield_set_suffix(wz->replicas, buf);
    const struct catalog_pool *p = wz_current_pool(wz);
    const char *sname = select_selected_label(wz->spec);
    const struct catalog_spec *s = p && sname ? catalog_pool_spec(p, sname) : NULL;
    if (s) {
        /* Whether the backend holds a worker to the spec (trainjobd says; ACP does not). */
        const char *limits = wz->cat ? wz->cat->resource_limits : NULL;
        char help[300];
        snprintf(help, sizeof help, "total: %ld × %d = %ld device%s%s%s%.200s", n, s->devices,
                 n * s->devices, n * s->devices == 1 ? "" : "s", s->simulated ? " (simulated)" : "",
                 limits ? " · limits " : "", limits ? limits : "");
        form_set_help(wz->forms[SECTION_RESOURCES],
                      field_of(wz, formtab_row("roles[0].resource_spec[0].name"))->entry, help);
    }
}

/* The list showing entry of section sec, or NULL. */
struct wlist *wz_list_at(const struct wizard *wz, enum form_section sec, size_t entry)
{
    for (int i = 0; i < LIST_COUNT; i++)
        if (wz->lists[i].l && wz->lists[i].section == sec && wz->lists[i].entry == entry)
            return wz->lists[i].l;
    return NULL;
}

/* The list whose row path names ("mount[1].subdir"), with the row and its field. */
const struct wizard_list *wz_list_claiming(const struct wizard *wz, const char *path, size_t *row,
                                           size_t *field)
{
    for (int i = 0; i < LIST_COUNT; i++)
        if (wz->lists[i].l && wlist_claim(wz->lists[i].l, path, row, field))
            return &wz->lists[i];
    return NULL;
}

/* Adds the list of kind, its rows from init, as its row of the form table. */
static void add_list(struct wizard *wz, enum wlist_kind kind, const struct jobspec *init)
{
    struct wizard_list *wl = &wz->lists[kind];
    wl->l = wlist_new(kind, wz->cat, init);
    wl->section = formtab_row(wlist_path(wl->l))->section;
    wl->entry = add_row(wz, wlist_widget(wl->l), formtab_row(wlist_path(wl->l)));
    form_set_help(wz->forms[wl->section], wl->entry, wlist_help(wl->l));
}

/* The help line of each list: its focused field's, when it changed. */
void wz_refresh_list_help(struct wizard *wz)
{
    for (int i = 0; i < LIST_COUNT; i++) {
        struct wizard_list *wl = &wz->lists[i];
        struct form *f = wz->forms[wl->section];
        if (form_focused(f) != wl->entry)
            continue;
        const char *help = wlist_help(wl->l), *now = form_help(f);
        if (!now || strcmp(now, help) != 0)
            form_set_help(f, wl->entry, help);
    }
}

/*
 * Rules are greyed while max restarts is 0: they could never act. Rules there
 * are get validation's warning saying so; only an empty list gets the note.
 */
static void refresh_rules_state(struct wizard *wz)
{
    bool ok;
    long b = numberfield_value(wz->backoff, &ok);
    bool off = ok && b == 0;
    bool empty = wlist_count(wz->lists[WLIST_RULE].l) == 0;
    if (wlist_widget(wz->lists[WLIST_RULE].l)->disabled != off)
        form_set_disabled(wz->forms[SECTION_FAULT_TOLERANCE], wz->lists[WLIST_RULE].entry, off,
                          off && empty ? "no effect while max restarts is 0" : NULL);
}

/* Volumes outside the job's zone (a public or idle pool's) are offered disabled. */
static void refresh_volume_zone(struct wizard *wz)
{
    wlist_set_zone(wz->lists[WLIST_MOUNT].l, zoned(wz) ? select_selected_label(wz->zone) : NULL);
}

/*
 * The log path's choices: every mount path typed in Data, and a path from
 * the file that is on none. Keeps want (NULL: the choice there is; when a
 * mount path is being edited, the one in its place).
 */
static void refresh_tb_paths(struct wizard *wz, const char *want)
{
    const struct wlist *mounts = wz->lists[WLIST_MOUNT].l;
    size_t n = wlist_count(mounts), k = 0;
    struct select_option *o = xcalloc(n + 1, sizeof *o);
    char(*detail)[160] = xcalloc(n + 1, sizeof *detail);
    for (size_t i = 0; i < n; i++) {
        const char *path = wlist_mount_path(mounts, i), *vol = wlist_mount_volume(mounts, i);
        if (!path || !*path || index_of(o, k, path) != SELECT_NONE)
            continue;
        snprintf(detail[k], sizeof detail[k], "mount[%zu]%s%s", i, vol ? " \xc2\xb7 " : "",
                 vol ? vol : "");
        o[k] = (struct select_option){path, detail[k], false, NULL};
        k++;
    }
    if (wz->tb_other && index_of(o, k, wz->tb_other) == SELECT_NONE)
        o[k++] = (struct select_option){wz->tb_other, "from the file; on no mount", false, NULL};
    size_t prev = select_selected(wz->tb_mount);
    const char *cur = want ? want : select_selected_label(wz->tb_mount);
    char *keep = cur ? xstrdup(cur) : NULL;
    select_set_options(wz->tb_mount, o, k);
    size_t at = index_of(o, k, keep);
    if (at == SELECT_NONE && !want && prev != SELECT_NONE && prev < k)
        at = prev;
    if (at == SELECT_NONE && !want && k > 0)
        at = 0;
    select_set_selected(wz->tb_mount, at);
    free(keep);
    free(detail);
    free(o);
}

/* The log path's help says where its choices come from, or that there are none yet. */
static void refresh_tb_help(struct wizard *wz)
{
    form_set_help(wz->forms[SECTION_TENSORBOARD],
                  field_of(wz, formtab_row("tensorboard.log_path"))->entry,
                  select_count(wz->tb_mount)
                      ? "one of the mount paths in Data: logs must be written to AFS"
                      : "no volume is mounted yet: add one in Data, its mount path shows here");
}

/*
 * tensorboard.log_path while TensorBoard is on: the chosen mount path, and
 * the directory under it when one is typed.
 */
static void store_log_path(struct wizard *wz, struct jobspec *j)
{
    const char *base = select_selected_label(wz->tb_mount);
    const char *dir = textfield_value(wz->tb_dir);
    struct strbuf sb = STRBUF_INIT;
    struct schema_ref ref;
    while (*dir == '/')
        dir++;
    if (j->tensorboard.present && base && *base) {
        strbuf_adds(&sb, base);
        if (*dir && base[strlen(base) - 1] != '/')
            strbuf_addc(&sb, '/');
        strbuf_adds(&sb, dir);
    }
    if (schema_find(jobspec_schema(), j, "tensorboard.log_path", &ref))
        schema_ref_set_string(&ref, strbuf_str(&sb));
    strbuf_free(&sb);
}

/*
 * Splits a log path from a file into the mount path it lies under (the
 * longest, *base) and the directory below it (*dir); a path on no mount
 * is kept whole in wz->tb_other.
 */
static void split_log_path(struct wizard *wz, const char *log, const char **base, const char **dir)
{
    const struct wlist *mounts = wz->lists[WLIST_MOUNT].l;
    size_t best = 0;
    *base = NULL;
    *dir = NULL;
    if (!log || !*log)
        return;
    for (size_t i = 0; i < wlist_count(mounts); i++) {
        const char *m = wlist_mount_path(mounts, i);
        size_t n = m ? strlen(m) : 0;
        if (n > best && strncmp(log, m, n) == 0 &&
            (log[n] == '\0' || log[n] == '/' || m[n - 1] == '/')) {
            best = n;
            *base = m;
            *dir = log + n + (log[n] == '/');
        }
    }
    if (!*base) {
        wz->tb_other = xstrdup(log);
        *base = wz->tb_other;
    }
}

/*
 * A number field into *dst: the number as typed, in range or not (range is
 * validation's to judge, the same as for a file). Text that spells no int32
 * ("", "-", a number too large) is not dropped silently: it is a finding on
 * path in wz->convert, and false leaves the field out of the job.
 */
static bool number_into(struct wizard *wz, const struct numberfield *nf, const char *path,
                        int32_t *dst)
{
    long v;
    const char *text = numberfield_text(nf);
    if (!numberfield_number(nf, &v)) {
        if (*text == '\0' || strcmp(text, "-") == 0)
            findings_add(&wz->convert, SEVERITY_ERROR, path, "required: a whole number");
        else
            findings_add(&wz->convert, SEVERITY_ERROR, path, "%s is not a whole number", text);
        return false;
    }
    if (v < INT32_MIN || v > INT32_MAX) {
        findings_add(&wz->convert, SEVERITY_ERROR, path, "%s is out of range (at most %d digits)",
                     text, 10);
        return false;
    }
    *dst = (int32_t)v;
    return true;
}

/* Marks the objects holding path present ("ssh" for ssh.auto_key_setup): a value set in them. */
static void present_parents(struct jobspec *j, const char *path)
{
    char prefix[128];
    struct schema_ref ref;
    for (const char *dot = strchr(path, '.'); dot; dot = strchr(dot + 1, '.')) {
        snprintf(prefix, sizeof prefix, "%.*s", (int)(dot - path), path);
        if (schema_find(jobspec_schema(), j, prefix, &ref))
            schema_ref_set_bool(&ref, true, true);
    }
}

/* An enum's value the row does not offer (the file's): kept, and said to be kept. */
static void say_not_offered(struct wizard *wz, const struct formtab_row *row,
                            const struct schema_ref *ref, const char *name)
{
    struct strbuf offered = STRBUF_INIT;
    bool found = false;
    for (const int *v = row->offered; *v; v++) {
        const char *one = enum_name(ref->field->names, *v);
        found = found || strcmp(one, name) == 0;
        strbuf_addf(&offered, "%s%s", offered.len ? ", " : "", one);
    }
    if (!found)
        findings_add(&wz->convert, SEVERITY_WARNING, row->path,
                     "%s from the file is an API value the form does not offer; the form's "
                     "choices are %s",
                     name, strbuf_str(&offered));
    strbuf_free(&offered);
}

/*
 * A field's value, read from its widget (a choice's label, the text, the
 * number, the toggle), written into j at its row's path through the job's
 * schema table. A row not shown now (a zone for a zoneless pool) leaves it
 * out; a number the job opened without, not typed in since, stays out (the
 * platform's default applies then), and so does a toggle left at what its
 * absence means.
 */
static void store_field(struct wizard *wz, const struct wz_field *fd, struct jobspec *j)
{
    const struct formtab_row *row = fd->row;
    struct schema_ref ref, had;
    if (!schema_find(jobspec_schema(), j, row->path, &ref))
        return;
    bool was = schema_find(jobspec_schema(), &wz->base, row->path, &had);
    struct widget *wd = fd->wd;
    struct select *sel = select_from_widget(wd);
    struct numberfield *nf = numberfield_from_widget(wd);
    struct toggle *tg = toggle_from_widget(wd);
    const char *text = sel                         ? select_selected_label(sel)
                       : textfield_from_widget(wd) ? textfield_value(textfield_from_widget(wd))
                       : textarea_from_widget(wd)  ? textarea_value(textarea_from_widget(wd))
                                                   : NULL;
    int32_t v = 0;
    bool on = tg && toggle_on(tg), b;
    if (!shown_when(wz, row->when)) {
        schema_ref_unset(&ref);
    } else if (tg) {
        bool keep = on || row->on_when_absent || (was && schema_ref_bool(&had, &b));
        schema_ref_set_bool(&ref, keep, on);
        if (keep && on)
            present_parents(j, row->path);
    } else if (nf) {
        int64_t old;
        bool unset = row->unset_until_typed && !fd->edited && !(was && schema_ref_int(&had, &old));
        bool number = !unset && number_into(wz, nf, row->path, &v);
        schema_ref_set_int(&ref, number, v); /* not a number: left out, its finding says why */
    } else if (row->offered) {
        schema_ref_set_enum_name(&ref, text);
        if (text)
            say_not_offered(wz, row, &ref, text);
    } else if (schema_ref_set_string(&ref, text) && text && *text) {
        present_parents(j, row->path);
    }
}

/*
 * Rebuilds wz->job: the base job with every field the form shows overlaid.
 * What a field could not convert is in wz->convert (validation shows it).
 */
void wz_build_job(struct wizard *wz)
{
    findings_clear(&wz->convert);
    jobspec_free(&wz->job);
    jobspec_copy(&wz->job, &wz->base);
    struct jobspec *j = &wz->job;
    j->resource_pool.present = true;
    j->scheduling.present = true;
    /* The quota type the pool implies, as render and trainjobd derive it (jobspec_defaults). */
    enum quota_type q = jobspec_pool_quota_type(wz->cat, select_selected_label(wz->pool));
    if (q != QUOTA_TYPE_UNSPECIFIED) /* else the file's, for a pool the catalog does not list */
        j->scheduling.quota_type = q;
    struct role *r = j->role_count ? &j->roles[0] : jobspec_add_role(j);
    free(r->name);
    r->name = xstrdup(JOBSPEC_ROLE_NAME);
    if (r->resource_spec_count == 0)
        role_add_spec(r);
    for (size_t i = 0; i < wz->field_count; i++)
        if (!wz->fields[i].row->handled && !wz->fields[i].row->read_only)
            store_field(wz, &wz->fields[i], j);
    for (int i = 0; i < LIST_COUNT; i++)
        wlist_store(wz->lists[i].l, j);
    j->fault_tolerance.present = j->fault_tolerance.has_backoff_limit ||
                                 j->fault_tolerance.rule_count || j->fault_tolerance.extra;
    store_log_path(wz, j);
}

/*
 * After any change: every list of choices again from what it depends on
 * (pools of the workspace, priorities the caller may pick there, zones and
 * specs of the pool, VPCs of the zone's region, images, log paths from the
 * mounts), each keeping what is chosen; then the hints, and each field
 * shown or hidden as its row's condition says.
 */
void wz_refresh(struct wizard *wz)
{
    refresh_pools(wz);
    refresh_enum(wz, formtab_row("scheduling.priority"));
    refresh_pool_choices(wz);
    if (wz->vpc_pick)
        refresh_vpcs(wz);
    refresh_image_pick(wz);
    refresh_tb_paths(wz, NULL);
    refresh_tb_help(wz);
    refresh_generated_name(wz);
    refresh_replica_hint(wz);
    refresh_rules_state(wz);
    refresh_volume_zone(wz);
    refresh_shown(wz);
}

/* The select of path's (first) field. */
static struct select *select_of(const struct wizard *wz, const char *path)
{
    return select_from_widget(widget_of(wz, path));
}

/*
 * Makes a field for every row of the form table, prefilled from init, then
 * fills the choices the catalog drives, keeping what init says.
 */
void wz_make_fields(struct wizard *wz, const struct jobspec *init, const char *ws_default)
{
    for (int s = 0; s < SECTION_COUNT; s++)
        wz->forms[s] = form_new();
    const struct catalog *cat = wz->cat;
    const struct role *r = init ? jobspec_worker(init) : NULL;
    size_t nrows;
    const struct formtab_row *rows = formtab_rows(&nrows);
    for (size_t i = 0; i < nrows; i++) {
        enum wlist_kind kind;
        if (rows[i].kind == FORMTAB_NOTE)
            add_row(wz, note_new(rows[i].help), &rows[i]);
        else if (wlist_kind_of(rows[i].path, &kind))
            add_list(wz, kind, init);
        else
            add_row(wz, row_widget(wz, init, &rows[i]), &rows[i]);
    }
    wz->workspace = select_of(wz, "workspace_name");
    wz->name = textfield_from_widget(widget_of(wz, "name"));
    wz->pool = select_of(wz, "resource_pool.name");
    wz->zone = select_of(wz, "resource_pool.zone");
    wz->vpc_pick = select_of(wz, "resource_pool.vpc_id");
    wz->framework = select_of(wz, "framework");
    wz->replicas = numberfield_from_widget(widget_of(wz, "roles[0].total_replicas"));
    wz->spec = select_of(wz, "roles[0].resource_spec[0].name");
    wz->image_pick = select_of(wz, "image_source");
    wz->image = textfield_from_widget(widget_of(wz, "roles[0].image_path"));
    wz->backoff = numberfield_from_widget(widget_of(wz, "fault_tolerance.backoff_limit"));
    wz->ssh = toggle_from_widget(widget_of(wz, "ssh.auto_key_setup"));
    wz->tensorboard = toggle_from_widget(widget_of(wz, "tensorboard"));
    wz->tb_mount = select_of(wz, "tensorboard.log_path");
    const struct wz_field *dir =
        field_of(wz, formtab_row_next(formtab_row("tensorboard.log_path"), "tensorboard.log_path"));
    wz->tb_dir = textfield_from_widget(dir->wd);

    /* Workspace: the caller's (the file's kept, else the default chosen), "new workspace…" */
    if (!select_selected_label(wz->workspace) && ws_default)
        select_set_options(wz->workspace, &(struct select_option){ws_default, NULL, false, NULL},
                           1);
    struct select_option o[MAX_OPTIONS + 2];
    size_t n = 0;
    for (size_t i = 0; cat && i < cat->workspace_count && n < MAX_OPTIONS; i++)
        if (cat->workspaces[i].role != MEMBER_NONE)
            o[n++] = (struct select_option){cat->workspaces[i].name,
                                            member_role_name(cat->workspaces[i].role), false, NULL};
    if (cat && n > 0) /* the backend says whether the caller may */
        o[n++] = (struct select_option){WIZARD_NEW_WORKSPACE_LABEL, "you its owner", false, NULL};
    set_choices(wz->workspace, o, n, "not one of yours");
    wz->ws_prev = select_selected(wz->workspace);
    refresh_enum(wz, formtab_row("framework"));

    /* Image: a new job's is the catalog's first */
    if (!r && cat && cat->image_count)
        textfield_set(wz->image, cat->images[0].path);
    /* Max restarts: Up/Down within the backend's range (ACP: any int32), widened to the job's */
    struct form_limits lim;
    long b = 0;
    numberfield_number(wz->backoff, &b);
    validate_form_limits(cat, &lim);
    numberfield_set_range(wz->backoff, b < lim.min_backoff ? b : lim.min_backoff,
                          b > lim.max_backoff ? b : lim.max_backoff);

    /* TensorBoard: the log path as a mount path from Data and the directory under it */
    const char *tb_base, *tb_dir;
    split_log_path(wz, init ? init->tensorboard.log_path : NULL, &tb_base, &tb_dir);
    textfield_set(wz->tb_dir, tb_dir ? tb_dir : "");
    refresh_tb_paths(wz, tb_base);
    wz_refresh(wz);
}
