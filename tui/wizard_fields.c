/*
 * wizard_fields: the wizard's fields (tui/wizard.c owns the screen and
 * its keys). Makes each section's widgets prefilled from the job the
 * wizard opened with, refreshes the choices the catalog drives (pools of
 * the workspace, zones and specs of the pool, priorities the caller may
 * pick, log paths from the mounts) and builds the job from what the
 * fields say (wz_build_job), over a copy of the job opened with.
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
#include "widgets/numberfield.h"
#include "widgets/select.h"
#include "widgets/textarea.h"
#include "widgets/textfield.h"
#include "widgets/toggle.h"

static const enum framework frameworks[] = {FRAMEWORK_PYTORCH_DDP, FRAMEWORK_TENSORFLOW_PS,
                                            FRAMEWORK_SENSEPARROTS, FRAMEWORK_MPI};

/* Adds wd as the field of the form table's row: its section, label and help. */
static size_t add_row(struct wizard *wz, struct widget *wd, const struct formtab_row *row)
{
    size_t e = form_add(wz->forms[row->section], row->label, wd, row->help);
    form_set_wide(wz->forms[row->section], e,
                  row->kind == FORMTAB_TEXTAREA || row->kind == FORMTAB_LIST);
    form_set_disabled(wz->forms[row->section], e, row->read_only,
                      row->read_only ? "read-only: the platform mounts it" : NULL);
    if (wz->field_count < sizeof wz->fields / sizeof wz->fields[0])
        wz->fields[wz->field_count++] = (struct wz_field){row->path, row, row->section, e};
    return e;
}

/* Adds wd as the field of the (first) row for path. */
static size_t add_field(struct wizard *wz, struct widget *wd, const char *path)
{
    return add_row(wz, wd, formtab_row(path));
}

/*
 * A plain row (no code of its own): its widget, of the row's kind, holding
 * what init has at the row's path, read through the job's schema table; a
 * number loaded outside the row's range widens it (never clamped).
 */
static struct widget *add_plain(struct wizard *wz, const struct jobspec *init, const char *path)
{
    const struct formtab_row *row = formtab_row(path);
    struct schema_ref ref;
    bool found = init && schema_find(jobspec_schema(), (void *)init, path, &ref);
    const char *text = found ? schema_ref_string(&ref) : NULL;
    int64_t v = row->min;
    struct widget *wd;
    if (row->kind == FORMTAB_NUMBER) {
        if (found)
            schema_ref_int(&ref, &v);
        wd = numberfield_widget(numberfield_new(v < row->min ? (long)v : row->min,
                                                v > row->max ? (long)v : row->max, (long)v));
    } else if (row->kind == FORMTAB_TEXTAREA) {
        struct textarea *ta = textarea_new(text, 8, (size_t)row->max_chars);
        textarea_set_placeholder(ta, row->placeholder);
        wd = textarea_widget(ta);
    } else {
        struct textfield *tf = textfield_new(text, (size_t)row->max_chars);
        textfield_set_placeholder(tf, row->placeholder);
        wd = textfield_widget(tf);
    }
    add_field(wz, wd, path);
    return wd;
}

const struct catalog_workspace *wz_current_workspace(const struct wizard *wz)
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
bool wz_zoned(const struct wizard *wz)
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

size_t wz_index_of(const struct select_option *o, size_t n, const char *label)
{
    for (size_t i = 0; label && i < n; i++)
        if (strcmp(o[i].label, label) == 0)
            return i;
    return SELECT_NONE;
}

/*
 * Sets sel's choices to o[0..n) (o has room for one more) and keeps the
 * value chosen: want (the file's), else the one chosen now. A value the
 * choices lack stays chosen, as a choice of its own saying so ("from the
 * file", or `before`: "chosen before; not in this pool"), and validation
 * says what is wrong with it, rather than the first choice taking its
 * place; only with nothing chosen is the first one taken.
 */
static void set_choices(struct select *sel, struct select_option *o, size_t n, const char *want,
                        const char *before)
{
    const char *cur = want ? want : select_selected_label(sel);
    char *keep = cur && *cur ? xstrdup(cur) : NULL;
    if (keep && wz_index_of(o, n, keep) == SELECT_NONE)
        o[n++] = (struct select_option){keep, want ? "from the file; not in the catalog" : before,
                                        false, NULL};
    select_set_options(sel, o, n);
    size_t at = wz_index_of(o, n, keep);
    select_set_selected(sel, at != SELECT_NONE ? at : n ? 0 : SELECT_NONE);
    free(keep);
}

/* The framework chosen: one of the four the form offers, or the file's own API value. */
static enum framework current_framework(const struct wizard *wz)
{
    size_t fw = select_selected(wz->framework);
    return fw < 4 ? frameworks[fw] : fw == 4 ? wz->file_framework : FRAMEWORK_UNSPECIFIED;
}

/*
 * The name the job is submitted under while Name is empty, made for the
 * framework chosen (its prefix) and shown as Name's placeholder and on Review.
 */
void wz_refresh_generated_name(struct wizard *wz)
{
    const char *prefix =
        framework_name_prefix(wz->framework ? current_framework(wz) : FRAMEWORK_PYTORCH_DDP);
    if (wz->generated_name && strncmp(wz->generated_name, prefix, strlen(prefix)) == 0 &&
        wz->generated_name[strlen(prefix)] == '-')
        return;
    free(wz->generated_name);
    wz->generated_name =
        jobspec_generate_name(wz->framework ? current_framework(wz) : FRAMEWORK_PYTORCH_DDP);
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
void wz_refresh_image_pick(struct wizard *wz)
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
    select_set_selected(wz->image_pick, wz_index_of(o, k, textfield_value(wz->image)));
    free(detail);
    free(o);
}

/* The VPCs of the chosen zone's region; keeps want (NULL: the choice there is, else the file's). */
void wz_refresh_vpcs(struct wizard *wz, const char *want)
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
    if (!want && !select_selected_label(wz->vpc_pick) && *textfield_value(wz->vpc))
        want = textfield_value(wz->vpc); /* the file's, the first time */
    set_choices(wz->vpc_pick, o, n, want, "chosen before; not in this zone's region");
}

/* Whether the rows shown when w are shown now. */
static bool shown_when(const struct wizard *wz, enum formtab_when w)
{
    const struct catalog_pool *p = wz_current_pool(wz);
    switch (w) {
    case FORMTAB_ZONED:
        return wz_zoned(wz);
    case FORMTAB_IDLE:
        return p && p->type == POOL_IDLE;
    case FORMTAB_SSH: /* always for MPI */
        return toggle_on(wz->ssh) || current_framework(wz) == FRAMEWORK_MPI;
    case FORMTAB_TENSORBOARD:
        return toggle_on(wz->tensorboard);
    default:
        return true;
    }
}

void wz_refresh_shown(struct wizard *wz)
{
    for (size_t i = 0; i < wz->field_count; i++) {
        const struct wz_field *fd = &wz->fields[i];
        form_set_hidden(wz->forms[fd->section], fd->entry, !shown_when(wz, fd->row->when));
    }
}

/* The pools of the chosen workspace, each with its resource type. */
void wz_refresh_pools(struct wizard *wz, const char *want)
{
    struct select_option o[MAX_OPTIONS + 1];
    size_t n = 0;
    const struct catalog_workspace *ws = wz_current_workspace(wz);
    for (size_t i = 0; wz->cat && i < wz->cat->pool_count && n < MAX_OPTIONS; i++) {
        const struct catalog_pool *p = &wz->cat->pools[i];
        if (ws && !catalog_workspace_has_pool(ws, p->name))
            continue;
        o[n++] = (struct select_option){p->name, pool_type_label(p->type), false, NULL};
    }
    set_choices(wz->pool, o, n, want, "chosen before; not in this workspace");
}

/* Priorities: HIGH and HIGHEST shown disabled, with the reason, for members. */
void wz_refresh_priorities(struct wizard *wz)
{
    const struct catalog_workspace *ws = wz_current_workspace(wz);
    bool high = ws == NULL || catalog_ws_priority_allowed(ws, 2);
    bool highest = ws == NULL || catalog_ws_priority_allowed(ws, 3);
    static char reason[200];
    if (ws)
        catalog_priority_refusal(ws, reason, sizeof reason);
    struct select_option o[] = {
        {"NORMAL", "default", false, NULL},
        {"HIGH", NULL, !high, reason},
        {"HIGHEST", NULL, !highest, reason},
    };
    size_t sel = select_selected(wz->priority);
    select_set_options(wz->priority, o, 3);
    bool keep = sel == 0 || (sel == 1 && high) || (sel == 2 && highest);
    select_set_selected(wz->priority, sel != SELECT_NONE && keep ? sel : 0);
}

/* Zones and specs of the chosen pool. */
void wz_refresh_pool_fields(struct wizard *wz, const char *want_zone, const char *want_spec)
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
    set_choices(wz->zone, o, n, want_zone, "chosen before; not in this pool");

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
    set_choices(wz->spec, o, n, want_spec, "chosen before; not in this pool");

    wz_refresh_vpcs(wz, NULL);
}

/* What the replica count means for the framework, and the devices it adds up to. */
void wz_refresh_replica_hint(struct wizard *wz)
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
        form_set_help(wz->forms[SECTION_RESOURCES], wz->e_spec, help);
    }
}

static char *dup_or_null(const char *s)
{
    return s && *s ? xstrdup(s) : NULL;
}

static void set_str(char **dst, const char *value)
{
    free(*dst);
    *dst = dup_or_null(value);
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

/* Adds list which of kind, its rows from init, as its row of the form table. */
static void add_list(struct wizard *wz, int which, enum wlist_kind kind, const struct jobspec *init)
{
    struct wizard_list *wl = &wz->lists[which];
    wl->l = wlist_new(kind, wz->cat, init);
    wl->section = formtab_row(wlist_path(wl->l))->section;
    wl->entry = add_field(wz, wlist_widget(wl->l), wlist_path(wl->l));
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

/* Rules are greyed while max restarts is 0: they could never act. */
void wz_refresh_rules_state(struct wizard *wz)
{
    bool ok;
    long b = numberfield_value(wz->backoff, &ok);
    bool off = ok && b == 0;
    if (wlist_widget(wz->lists[LIST_RULES].l)->disabled != off)
        form_set_disabled(wz->forms[SECTION_FAULT_TOLERANCE], wz->e_rules, off,
                          off ? "no effect while max restarts is 0" : NULL);
}

/* Volumes outside the job's zone (a public or idle pool's) are offered disabled. */
void wz_refresh_volume_zone(struct wizard *wz)
{
    bool zoned = wz_zoned(wz);
    wlist_set_zone(wz->lists[LIST_MOUNTS].l, zoned ? select_selected_label(wz->zone) : NULL);
}

/*
 * The log path's choices: every mount path typed in Data, and a path from
 * the file that is on none. Keeps want (NULL: the choice there is; when a
 * mount path is being edited, the one in its place).
 */
void wz_refresh_tb_paths(struct wizard *wz, const char *want)
{
    const struct wlist *mounts = wz->lists[LIST_MOUNTS].l;
    size_t n = wlist_count(mounts), k = 0;
    struct select_option *o = xcalloc(n + 1, sizeof *o);
    char(*detail)[160] = xcalloc(n + 1, sizeof *detail);
    for (size_t i = 0; i < n; i++) {
        const char *path = wlist_mount_path(mounts, i), *vol = wlist_mount_volume(mounts, i);
        if (!path || !*path || wz_index_of(o, k, path) != SELECT_NONE)
            continue;
        snprintf(detail[k], sizeof detail[k], "mount[%zu]%s%s", i, vol ? " \xc2\xb7 " : "",
                 vol ? vol : "");
        o[k] = (struct select_option){path, detail[k], false, NULL};
        k++;
    }
    if (wz->tb_other && wz_index_of(o, k, wz->tb_other) == SELECT_NONE)
        o[k++] = (struct select_option){wz->tb_other, "from the file; on no mount", false, NULL};
    size_t prev = select_selected(wz->tb_mount);
    const char *cur = want ? want : select_selected_label(wz->tb_mount);
    char *keep = cur ? xstrdup(cur) : NULL;
    select_set_options(wz->tb_mount, o, k);
    size_t at = wz_index_of(o, k, keep);
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
void wz_refresh_tb_help(struct wizard *wz)
{
    form_set_help(wz->forms[SECTION_TENSORBOARD], wz->e_tb_mount,
                  select_count(wz->tb_mount)
                      ? "one of the mount paths in Data: logs must be written to AFS"
                      : "no volume is mounted yet: add one in Data, its mount path shows here");
}

/* The log path: the chosen mount path, and the directory under it when one is typed. */
static void set_log_path(struct wizard *wz, struct jobspec *j)
{
    const char *base = select_selected_label(wz->tb_mount);
    const char *dir = textfield_value(wz->tb_dir);
    while (*dir == '/')
        dir++;
    if (!base || !*base) {
        set_str(&j->tensorboard.log_path, NULL);
        return;
    }
    struct strbuf sb = STRBUF_INIT;
    strbuf_adds(&sb, base);
    if (*dir) {
        if (base[strlen(base) - 1] != '/')
            strbuf_addc(&sb, '/');
        strbuf_adds(&sb, dir);
    }
    free(j->tensorboard.log_path);
    j->tensorboard.log_path = strbuf_detach(&sb, NULL);
}

/*
 * Splits a log path from a file into the mount path it lies under (the
 * longest, *base) and the directory below it (*dir); a path on no mount
 * is kept whole in wz->tb_other.
 */
static void split_log_path(struct wizard *wz, const char *log, const char **base, const char **dir)
{
    const struct wlist *mounts = wz->lists[LIST_MOUNTS].l;
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

/*
 * The rows of the form table whose value needs no code of its own: each
 * one's value, read from its widget (a choice's label, the text, the
 * number), written into j at the row's path through the job's schema
 * table; a row not shown now (a zone for a zoneless pool) leaves it out.
 */
static void store_plain_rows(struct wizard *wz, struct jobspec *j)
{
    for (size_t i = 0; i < wz->field_count; i++) {
        const struct formtab_row *row = wz->fields[i].row;
        struct schema_ref ref;
        if (row->handled || !schema_find(jobspec_schema(), j, row->path, &ref))
            continue;
        struct widget *wd = form_widget_at(wz->forms[row->section], wz->fields[i].entry);
        struct numberfield *nf = numberfield_from_widget(wd);
        int32_t v = 0;
        if (!shown_when(wz, row->when))
            schema_ref_set_string(&ref, NULL);
        else if (select_from_widget(wd))
            schema_ref_set_string(&ref, select_selected_label(select_from_widget(wd)));
        else if (textfield_from_widget(wd))
            schema_ref_set_string(&ref, textfield_value(textfield_from_widget(wd)));
        else if (textarea_from_widget(wd))
            schema_ref_set_string(&ref, textarea_value(textarea_from_widget(wd)));
        else if (nf && number_into(wz, nf, row->path, &v))
            schema_ref_set_int(&ref, true, v);
        else if (nf) /* not a number: left out, its finding says why */
            schema_ref_set_int(&ref, false, 0);
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
    j->scheduling.priority = (enum priority)(select_selected(wz->priority) + 1);
    /* The quota type the pool implies, as render and trainjobd derive it (jobspec_defaults). */
    enum quota_type q = jobspec_pool_quota_type(wz->cat, select_selected_label(wz->pool));
    if (q != QUOTA_TYPE_UNSPECIFIED) /* else the file's, for a pool the catalog does not list */
        j->scheduling.quota_type = q;
    j->scheduling.has_preemptible = j->scheduling.quota_type == QUOTA_TYPE_SPOT;
    j->scheduling.preemptible = toggle_on(wz->preemptible);
    j->framework = current_framework(wz);
    if (j->framework != FRAMEWORK_UNSPECIFIED && select_selected(wz->framework) == 4)
        findings_add(&wz->convert, SEVERITY_WARNING, "framework",
                     "%s from the file is an API value the form does not offer; the form's "
                     "choices are PyTorch DDP, TensorFlow PS, SenseParrots and MPI",
                     enum_name(&framework_names, (int)j->framework));
    struct role *r = j->role_count ? &j->roles[0] : jobspec_add_role(j);
    set_str(&r->name, JOBSPEC_ROLE_NAME);
    if (r->resource_spec_count == 0)
        role_add_spec(r);
    store_plain_rows(wz, j);
    /* A job opened without max restarts keeps it unset until the field is typed in: the
     * platform's default policy applies then (jobspec_defaults), which a 0 written would end. */
    if (!wz->base.fault_tolerance.has_backoff_limit && !wz->backoff_typed)
        j->fault_tolerance.has_backoff_limit = false;
    else
        j->fault_tolerance.has_backoff_limit = number_into(
            wz, wz->backoff, "fault_tolerance.backoff_limit", &j->fault_tolerance.backoff_limit);
    if (toggle_on(wz->ssh) || j->ssh.present) {
        j->ssh.present = true;
        j->ssh.has_auto_key_setup = true;
        j->ssh.auto_key_setup = toggle_on(wz->ssh);
    }
    for (int i = 0; i < LIST_COUNT; i++)
        wlist_store(wz->lists[i].l, j);
    j->fault_tolerance.present = j->fault_tolerance.has_backoff_limit ||
                                 j->fault_tolerance.rule_count || j->fault_tolerance.extra;
    j->tensorboard.present = toggle_on(wz->tensorboard);
    if (j->tensorboard.present)
        set_log_path(wz, j);
    else
        set_str(&j->tensorboard.log_path, NULL);
}

void wz_make_fields(struct wizard *wz, const struct jobspec *init, const char *ws_default)
{
    for (int s = 0; s < SECTION_COUNT; s++)
        wz->forms[s] = form_new();
    const struct catalog *cat = wz->cat;
    const struct role *r = init ? jobspec_worker(init) : NULL;

    /* Basics */
    struct select_option o[MAX_OPTIONS + 2];
    size_t n = 0;
    for (size_t i = 0; cat && i < cat->workspace_count && n < MAX_OPTIONS; i++)
        if (cat->workspaces[i].role != MEMBER_NONE)
            o[n++] = (struct select_option){cat->workspaces[i].name,
                                            member_role_name(cat->workspaces[i].role), false, NULL};
    const char *want_ws = init && init->workspace_name ? init->workspace_name : ws_default;
    size_t at = wz_index_of(o, n, want_ws);
    if (init && init->workspace_name && *want_ws && at == SELECT_NONE)
        o[at = n++] = (struct select_option){want_ws, "from the file; not in the catalog", false, NULL};
    if (cat && n > 0) /* the backend says whether the caller may */
        o[n++] = (struct select_option){WIZARD_NEW_WORKSPACE_LABEL, "you its owner", false, NULL};
    wz->ws_prev = at != SELECT_NONE ? at : 0;
    wz->workspace = select_new(o, n, wz->ws_prev);
    add_field(wz, select_widget(wz->workspace), "workspace_name");
    add_plain(wz, init, "display_name");
    wz->name = textfield_from_widget(add_plain(wz, init, "name"));
    wz_refresh_generated_name(wz);
    wz->pool = select_new(NULL, 0, SELECT_NONE);
    add_field(wz, select_widget(wz->pool), "resource_pool.name");
    wz->zone = select_new(NULL, 0, SELECT_NONE);
    add_field(wz, select_widget(wz->zone), "resource_pool.zone");
    wz->vpc = textfield_new(init ? init->resource_pool.vpc_id : NULL, 128);
    if (cat && !(cat->unknown & CATALOG_UNKNOWN_ZONES)) {
        /* The catalog lists the VPCs: one of those in the zone's region (the file's is kept). */
        wz->vpc_pick = select_new(NULL, 0, SELECT_NONE);
        add_field(wz, select_widget(wz->vpc_pick), "resource_pool.vpc_id");
    } else {
        add_field(wz, textfield_widget(wz->vpc), "resource_pool.vpc_id");
    }

    /* Resources */
    wz->priority = select_new(NULL, 0, SELECT_NONE);
    add_field(wz, select_widget(wz->priority), "scheduling.priority");
    wz->preemptible = toggle_new("may be preempted", !init || !init->scheduling.has_preemptible ||
                                                         init->scheduling.preemptible);
    add_field(wz, toggle_widget(wz->preemptible), "scheduling.preemptible");
    struct select_option fo[5];
    size_t fsel = 0, fn = 4;
    for (size_t i = 0; i < 4; i++) {
        fo[i] =
            (struct select_option){framework_label(frameworks[i]),
                                   enum_name(&framework_names, (int)frameworks[i]), false, NULL};
        if (init && init->framework == frameworks[i])
            fsel = i;
    }
    if (init && init->framework != FRAMEWORK_UNSPECIFIED && fsel == 0 &&
        init->framework != frameworks[0]) { /* PYTORCH, …: kept as the file says */
        wz->file_framework = init->framework;
        fo[4] =
            (struct select_option){framework_label(init->framework),
                                   enum_name(&framework_names, (int)init->framework), false, NULL};
        fsel = fn++;
    }
    wz->framework = select_new(fo, fn, fsel);
    wz_refresh_generated_name(wz);
    add_field(wz, select_widget(wz->framework), "framework");
    wz->replicas = numberfield_from_widget(add_plain(wz, init, "roles[0].total_replicas"));
    wz->spec = select_new(NULL, 0, SELECT_NONE);
    wz->e_spec = add_field(wz, select_widget(wz->spec), "roles[0].resource_spec[0].name");

    /* Image */
    const char *image = r && r->image_path        ? r->image_path
                        : cat && cat->image_count ? cat->images[0].path
                                                  : NULL;
    /* The catalog's images by source, NGC ones marked; choosing one fills the reference below. */
    wz->image_pick = select_new(NULL, 0, SELECT_NONE);
    wz->e_image_pick = add_field(wz, select_widget(wz->image_pick), "image_source");
    wz->image = textfield_new(image, 1024);
    wz->e_image = add_field(wz, textfield_widget(wz->image), "roles[0].image_path");
    wz_refresh_image_pick(wz);
    add_plain(wz, init, "roles[0].startup_script");

    /* Fault tolerance */
    const struct fault_tolerance *ft = init ? &init->fault_tolerance : NULL;
    /* The backend's range (ACP: any int32), widened to a loaded job's value: never clamped. */
    struct form_limits lim;
    validate_form_limits(cat, &lim);
    long b0 = ft && ft->has_backoff_limit ? ft->backoff_limit : 0;
    wz->backoff = numberfield_new(b0 < lim.min_backoff ? b0 : lim.min_backoff,
                                  b0 > lim.max_backoff ? b0 : lim.max_backoff, b0);
    numberfield_set_suffix(wz->backoff, "restarts (0 never, -1 forever)");
    add_field(wz, numberfield_widget(wz->backoff), "fault_tolerance.backoff_limit");
    add_list(wz, LIST_RULES, WLIST_RULE, init);
    size_t ft_note = form_add(
        wz->forms[SECTION_FAULT_TOLERANCE], NULL,
        wlist_note_new("When no rule matches, or there are none, the platform default applies: "
                       "restart the whole job while restarts remain. Marking a node "
                       "unschedulable is anti-affinity; affinity (staying on the same nodes) is "
                       "not offered by the platform."),
        NULL);
    form_set_wide(wz->forms[SECTION_FAULT_TOLERANCE], ft_note, true);
    wz->e_rules = wz->lists[LIST_RULES].entry;

    /* Data */
    size_t note =
        form_add(wz->forms[SECTION_DATA], NULL,
                 wlist_note_new("POSIX permissions of a volume are set by the tenant admin"), NULL);
    form_set_wide(wz->forms[SECTION_DATA], note, true);
    add_list(wz, LIST_MOUNTS, WLIST_MOUNT, init);

    /* Environment */
    add_list(wz, LIST_ENV, WLIST_ENV, init);
    wz->ssh = toggle_new("passwordless SSH between workers",
                         init && init->ssh.has_auto_key_setup && init->ssh.auto_key_setup);
    add_field(wz, toggle_widget(wz->ssh), "ssh.auto_key_setup");
    /* Where the keys and ssh_config appear: shown, not edited (a volume over it is a finding). */
    wz->ssh_path = textfield_new(init && init->ssh.config_mount_path ? init->ssh.config_mount_path
                                                                     : JOBSPEC_DEFAULT_SSH_PATH,
                                 0);
    add_field(wz, textfield_widget(wz->ssh_path), "ssh.config_mount_path");

    /* TensorBoard */
    wz->tensorboard = toggle_new("enabled", init && init->tensorboard.present);
    add_field(wz, toggle_widget(wz->tensorboard), "tensorboard");
    const char *tb_base, *tb_dir;
    split_log_path(wz, init ? init->tensorboard.log_path : NULL, &tb_base, &tb_dir);
    wz->tb_mount = select_new(NULL, 0, SELECT_NONE);
    wz_refresh_tb_paths(wz, tb_base);
    wz->e_tb_mount = add_field(wz, select_widget(wz->tb_mount), "tensorboard.log_path");
    wz_refresh_tb_help(wz);
    /* the directory under it: the log path's second row */
    const struct formtab_row *dir_row =
        formtab_row_next(formtab_row("tensorboard.log_path"), "tensorboard.log_path");
    wz->tb_dir = textfield_new(tb_dir, (size_t)dir_row->max_chars);
    textfield_set_placeholder(wz->tb_dir, dir_row->placeholder);
    add_row(wz, textfield_widget(wz->tb_dir), dir_row);

    wz_refresh_pools(wz, init && init->resource_pool.name ? init->resource_pool.name : NULL);
    wz_refresh_priorities(wz);
    if (init && init->scheduling.priority > PRIORITY_NORMAL)
        select_set_selected(wz->priority, (size_t)init->scheduling.priority - 1);
    const char *want_spec = r && r->resource_spec_count ? r->resource_spec[0].name : NULL;
    wz_refresh_pool_fields(wz, init ? init->resource_pool.zone : NULL, want_spec);
    wz_refresh_replica_hint(wz);
    wz_refresh_rules_state(wz);
    wz_refresh_volume_zone(wz);
    wz_refresh_shown(wz);
}
