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
 */
#include "tui/wizard.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/catalog.h"
#include "api/finding.h"
#include "api/jobfile.h"
#include "api/jobspec.h"
#include "api/ngctag.h"
#include "api/validate.h"
#include "tui/keymap.h"
#include "tui/term.h"
#include "tui/wizard_lists.h"
#include "util/strbuf.h"
#include "util/utf8.h"
#include "util/xalloc.h"
#include "widgets/form.h"
#include "widgets/keybar.h"
#include "widgets/numberfield.h"
#include "widgets/select.h"
#include "widgets/textarea.h"
#include "widgets/textfield.h"
#include "widgets/toggle.h"

#define SIDEBAR_W 22
#define MAX_OPTIONS 64

/* The lists, each one entry of its section's form. */
enum { LIST_ENV, LIST_MOUNTS, LIST_RULES, LIST_COUNT };

struct field {
    const char *path; /* the finding path shown under this field */
    enum form_section section;
    size_t entry;
};

struct wizard {
    /* validation's question "is this name used already?" (cmd_new asks the backend) */
    bool (*name_taken)(void *ctx, const char *workspace, const char *name);
    void *name_taken_ctx;
    const struct catalog *cat;
    struct jobspec base; /* the job opened with: what the form does not edit is kept */
    struct jobspec job;
    struct form *forms[SECTION_COUNT];
    enum form_section cur;
    struct field fields[32];
    size_t field_count;
    struct findings findings;
    struct findings file_findings; /* from the file opened, on fields not edited since */
    int errors[SECTION_COUNT], warnings[SECTION_COUNT];
    bool dirty, changed, pending, review_json;
    const struct keymap *km;
    struct keybar *keybar;

    /* the widgets the binding reads (owned by their forms) */
    struct select *workspace, *pool, *zone, *priority, *framework, *spec;
    struct select *tb_mount;
    struct textfield *display_name, *name, *vpc, *image, *tb_dir;
    struct numberfield *replicas, *backoff;
    struct toggle *preemptible, *ssh, *tensorboard;
    struct textarea *script;
    size_t e_zone, e_vpc, e_preemptible, e_tb_mount, e_tb_dir, e_spec, e_rules, e_image;
    char *tb_other; /* a log path from the file on no mount: offered as it was */

    /* the lists, each one field of its section (rows owned here, widget by the form) */
    struct wizard_list {
        struct wlist *l;
        enum form_section section;
        size_t entry;
    } lists[LIST_COUNT];
};

static const char *const section_titles[SECTION_COUNT] = {
    "Basics", "Resources",   "Image",       "Fault tolerance",
    "Data",   "Environment", "TensorBoard", "Review",
};

static const enum framework frameworks[] = {FRAMEWORK_PYTORCH_DDP, FRAMEWORK_TENSORFLOW_PS,
                                            FRAMEWORK_SENSEPARROTS, FRAMEWORK_MPI};

/* Adds widget wd as a field of section sec reporting findings under path. */
static size_t add_field(struct wizard *wz, enum form_section sec, const char *label,
                        struct widget *wd, const char *path, const char *help)
{
    size_t e = form_add(wz->forms[sec], label, wd, help);
    if (wz->field_count < sizeof wz->fields / sizeof wz->fields[0])
        wz->fields[wz->field_count++] = (struct field){path, sec, e};
    return e;
}

static const struct catalog_workspace *current_workspace(const struct wizard *wz)
{
    const char *ws = select_selected_label(wz->workspace);
    return ws && wz->cat ? catalog_workspace(wz->cat, ws) : NULL;
}

static const struct catalog_pool *current_pool(const struct wizard *wz)
{
    const char *p = select_selected_label(wz->pool);
    return p && wz->cat ? catalog_pool(wz->cat, p) : NULL;
}

static size_t index_of(const struct select_option *o, size_t n, const char *label)
{
    for (size_t i = 0; label && i < n; i++)
        if (strcmp(o[i].label, label) == 0)
            return i;
    return SELECT_NONE;
}

/* The pools of the chosen workspace, each with its resource type. */
static void refresh_pools(struct wizard *wz, const char *want)
{
    struct select_option o[MAX_OPTIONS];
    size_t n = 0;
    const struct catalog_workspace *ws = current_workspace(wz);
    for (size_t i = 0; wz->cat && i < wz->cat->pool_count && n < MAX_OPTIONS; i++) {
        const struct catalog_pool *p = &wz->cat->pools[i];
        if (ws && !catalog_workspace_has_pool(ws, p->name))
            continue;
        o[n++] = (struct select_option){p->name, pool_type_label(p->type), false, NULL};
    }
    const char *keep = want ? want : select_selected_label(wz->pool);
    char *copy = keep ? xstrdup(keep) : NULL;
    select_set_options(wz->pool, o, n);
    size_t at = index_of(o, n, copy);
    select_set_selected(wz->pool, at != SELECT_NONE ? at : 0);
    free(copy);
}

/* Priorities: HIGH and HIGHEST shown disabled, with the reason, for members. */
static void refresh_priorities(struct wizard *wz)
{
    const struct catalog_workspace *ws = current_workspace(wz);
    bool owner = ws == NULL || ws->role == MEMBER_OWNER || ws->role == MEMBER_ADMIN;
    static char reason[160];
    snprintf(reason, sizeof reason, "owners only; you are a %s of %s",
             ws ? member_role_name(ws->role) : "member", ws ? ws->name : "this workspace");
    struct select_option o[] = {
        {"NORMAL", "default", false, NULL},
        {"HIGH", NULL, !owner, reason},
        {"HIGHEST", NULL, !owner, reason},
    };
    size_t sel = select_selected(wz->priority);
    select_set_options(wz->priority, o, 3);
    select_set_selected(wz->priority, sel != SELECT_NONE && (owner || sel == 0) ? sel : 0);
}

/* Zones and specs of the chosen pool; zone, VPC and preemptible only where they apply. */
static void refresh_pool_fields(struct wizard *wz, const char *want_zone, const char *want_spec)
{
    const struct catalog_pool *p = current_pool(wz);
    struct select_option o[MAX_OPTIONS];
    static char details[MAX_OPTIONS][96];
    size_t n = 0;
    for (size_t i = 0; p && i < p->zone_count && n < MAX_OPTIONS; i++)
        o[n++] = (struct select_option){p->zones[i], NULL, false, NULL};
    char *keep = xstrdup(want_zone ? want_zone : (select_selected_label(wz->zone) ?: ""));
    select_set_options(wz->zone, o, n);
    size_t at = index_of(o, n, keep);
    select_set_selected(wz->zone, at != SELECT_NONE ? at : 0);
    free(keep);

    n = 0;
    for (size_t i = 0; p && i < p->spec_count && n < MAX_OPTIONS; i++) {
        const struct catalog_spec *s = &p->specs[i];
        if (s->devices > 0)
            snprintf(details[n], sizeof details[n], "%d× %s · %d vCPU · %lld GiB", s->devices,
                     s->device_type ? s->device_type : "GPU", s->vcpus,
                     (long long)(s->memory_mib / 1024));
        else
            snprintf(details[n], sizeof details[n], "no device · %d vCPU · %lld MiB", s->vcpus,
                     (long long)s->memory_mib);
        o[n] = (struct select_option){s->name, details[n], false, NULL};
        n++;
    }
    keep = xstrdup(want_spec ? want_spec : (select_selected_label(wz->spec) ?: ""));
    select_set_options(wz->spec, o, n);
    at = index_of(o, n, keep);
    select_set_selected(wz->spec, at != SELECT_NONE ? at : 0);
    free(keep);

    bool needs_zone = p && p->type != POOL_DEDICATED;
    form_set_hidden(wz->forms[SECTION_BASICS], wz->e_zone, !needs_zone);
    form_set_hidden(wz->forms[SECTION_BASICS], wz->e_vpc, !needs_zone);
    form_set_hidden(wz->forms[SECTION_RESOURCES], wz->e_preemptible, !(p && p->type == POOL_IDLE));
}

/* What the replica count means for the framework, and the devices it adds up to. */
static void refresh_replica_hint(struct wizard *wz)
{
    bool ok;
    long n = numberfield_value(wz->replicas, &ok);
    size_t fw = select_selected(wz->framework);
    char buf[160];
    if (!ok)
        n = 1;
    if (fw == 0 || fw == 2)
        snprintf(buf, sizeof buf, n > 1 ? "workers: 1 master + %ld" : "worker: 1 master", n - 1);
    else if (fw == 1)
        snprintf(buf, sizeof buf, "workers: 1 parameter server + %ld", n > 1 ? n - 1 : 0);
    else
        snprintf(buf, sizeof buf, "MPI ranks");
    numberfield_set_suffix(wz->replicas, buf);
    const struct catalog_pool *p = current_pool(wz);
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
static struct wlist *list_at(const struct wizard *wz, enum form_section sec, size_t entry)
{
    for (int i = 0; i < LIST_COUNT; i++)
        if (wz->lists[i].l && wz->lists[i].section == sec && wz->lists[i].entry == entry)
            return wz->lists[i].l;
    return NULL;
}

/* The list whose row path names ("mount[1].subdir"), with the row and its field. */
static const struct wizard_list *list_claiming(const struct wizard *wz, const char *path,
                                               size_t *row, size_t *field)
{
    for (int i = 0; i < LIST_COUNT; i++)
        if (wz->lists[i].l && wlist_claim(wz->lists[i].l, path, row, field))
            return &wz->lists[i];
    return NULL;
}

/* Adds list which of kind to section sec, its rows from init. */
static void add_list(struct wizard *wz, int which, enum wlist_kind kind, enum form_section sec,
                     const char *label, const struct jobspec *init)
{
    struct wizard_list *wl = &wz->lists[which];
    wl->l = wlist_new(kind, wz->cat, init);
    wl->section = sec;
    wl->entry = add_field(wz, sec, label, wlist_widget(wl->l), wlist_path(wl->l), NULL);
    form_set_wide(wz->forms[sec], wl->entry, true);
    form_set_help(wz->forms[sec], wl->entry, wlist_help(wl->l));
}

/* The help line of each list: its focused field's, when it changed. */
static void refresh_list_help(struct wizard *wz)
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
static void refresh_rules_state(struct wizard *wz)
{
    bool ok;
    long b = numberfield_value(wz->backoff, &ok);
    bool off = ok && b == 0;
    if (wlist_widget(wz->lists[LIST_RULES].l)->disabled != off)
        form_set_disabled(wz->forms[SECTION_FAULT_TOLERANCE], wz->e_rules, off,
                          off ? "no effect while max restarts is 0" : NULL);
}

/* Volumes outside the job's zone (a public or idle pool's) are offered disabled. */
static void refresh_volume_zone(struct wizard *wz)
{
    const struct catalog_pool *p = current_pool(wz);
    bool zoned = p && p->type != POOL_DEDICATED;
    wlist_set_zone(wz->lists[LIST_MOUNTS].l, zoned ? select_selected_label(wz->zone) : NULL);
}

/*
 * The log path's choices: every mount path typed in Data, and a path from
 * the file that is on none. Keeps want (NULL: the choice there is; when a
 * mount path is being edited, the one in its place).
 */
static void refresh_tb_paths(struct wizard *wz, const char *want)
{
    const struct wlist *mounts = wz->lists[LIST_MOUNTS].l;
    size_t n = wlist_count(mounts), k = 0;
    struct select_option *o = xcalloc(n + 1, sizeof *o);
    char(*detail)[160] = xcalloc(n + 1, sizeof *detail);
    for (size_t i = 0; i < n; i++) {
        const char *path = wlist_mount_path(mounts, i), *vol = wlist_mount_volume(mounts, i);
        if (!path || !*path || index_of(o, k, path) != SELECT_NONE)
            continue;
        snprintf(detail[k], sizeof detail[k], "mount %zu%s%s", i + 1, vol ? " \xc2\xb7 " : "",
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

/* Rebuilds wz->job: the base job with every field the form shows overlaid. */
static void build_job(struct wizard *wz)
{
    jobspec_free(&wz->job);
    jobspec_copy(&wz->job, &wz->base);
    struct jobspec *j = &wz->job;
    set_str(&j->workspace_name, select_selected_label(wz->workspace));
    set_str(&j->display_name, textfield_value(wz->display_name));
    set_str(&j->name, textfield_value(wz->name));
    j->resource_pool.present = true;
    set_str(&j->resource_pool.name, select_selected_label(wz->pool));
    const struct catalog_pool *p = current_pool(wz);
    bool zoned = p && p->type != POOL_DEDICATED;
    set_str(&j->resource_pool.zone, zoned ? select_selected_label(wz->zone) : NULL);
    set_str(&j->resource_pool.vpc_id, zoned ? textfield_value(wz->vpc) : NULL);
    j->scheduling.present = true;
    j->scheduling.priority = (enum priority)(select_selected(wz->priority) + 1);
    j->scheduling.quota_type =
        p ? (p->type == POOL_IDLE ? QUOTA_TYPE_SPOT : QUOTA_TYPE_RESERVED) : QUOTA_TYPE_UNSPECIFIED;
    j->scheduling.has_preemptible = p && p->type == POOL_IDLE;
    j->scheduling.preemptible = toggle_on(wz->preemptible);
    size_t fw = select_selected(wz->framework);
    j->framework = fw < 4 ? frameworks[fw] : FRAMEWORK_UNSPECIFIED;
    struct role *r = j->role_count ? &j->roles[0] : jobspec_add_role(j);
    set_str(&r->name, JOBSPEC_ROLE_NAME);
    bool ok;
    long n = numberfield_value(wz->replicas, &ok);
    r->has_total_replicas = ok;
    r->total_replicas = ok ? (int32_t)n : 0;
    if (r->resource_spec_count == 0)
        role_add_spec(r);
    set_str(&r->resource_spec[0].name, select_selected_label(wz->spec));
    set_str(&r->image_path, textfield_value(wz->image));
    set_str(&r->startup_script, textarea_value(wz->script));
    j->fault_tolerance.present = true;
    long b = numberfield_value(wz->backoff, &ok);
    j->fault_tolerance.has_backoff_limit = ok;
    j->fault_tolerance.backoff_limit = ok ? (int32_t)b : 0;
    if (toggle_on(wz->ssh) || j->ssh.present) {
        j->ssh.present = true;
        j->ssh.has_auto_key_setup = true;
        j->ssh.auto_key_setup = toggle_on(wz->ssh);
    }
    for (int i = 0; i < LIST_COUNT; i++)
        wlist_store(wz->lists[i].l, j);
    j->tensorboard.present = toggle_on(wz->tensorboard);
    if (j->tensorboard.present)
        set_log_path(wz, j);
    else
        set_str(&j->tensorboard.log_path, NULL);
}

static void make_fields(struct wizard *wz, const struct jobspec *init, const char *ws_default)
{
    for (int s = 0; s < SECTION_COUNT; s++)
        wz->forms[s] = form_new();
    const struct catalog *cat = wz->cat;
    const struct role *r = init ? jobspec_worker(init) : NULL;

    /* Basics */
    struct select_option o[MAX_OPTIONS];
    size_t n = 0;
    for (size_t i = 0; cat && i < cat->workspace_count && n < MAX_OPTIONS; i++)
        if (cat->workspaces[i].role != MEMBER_NONE)
            o[n++] = (struct select_option){cat->workspaces[i].name,
                                            member_role_name(cat->workspaces[i].role), false, NULL};
    const char *want_ws = init && init->workspace_name ? init->workspace_name : ws_default;
    size_t at = index_of(o, n, want_ws);
    wz->workspace = select_new(o, n, at != SELECT_NONE ? at : 0);
    add_field(wz, SECTION_BASICS, "Workspace", select_widget(wz->workspace), "workspace_name",
              "the workspace the job belongs to; Enter opens the list, type to filter");
    wz->display_name = textfield_new(init ? init->display_name : NULL, 256);
    add_field(wz, SECTION_BASICS, "Display name", textfield_widget(wz->display_name),
              "display_name", "1-256: Chinese characters, letters, digits, . : _ -");
    wz->name = textfield_new(init ? init->name : NULL, 63);
    textfield_set_placeholder(wz->name, "generated when empty");
    add_field(wz, SECTION_BASICS, "Name", textfield_widget(wz->name), "name",
              "optional: lowercase letters, digits and -, unique in the workspace");
    wz->pool = select_new(NULL, 0, SELECT_NONE);
    add_field(wz, SECTION_BASICS, "Resource pool", select_widget(wz->pool), "resource_pool.name",
              "the AI elastic cluster: standard (dedicated or public) or idle");
    wz->zone = select_new(NULL, 0, SELECT_NONE);
    wz->e_zone = add_field(wz, SECTION_BASICS, "Zone", select_widget(wz->zone),
                           "resource_pool.zone", "public and idle pools run in a zone");
    wz->vpc = textfield_new(init ? init->resource_pool.vpc_id : NULL, 128);
    wz->e_vpc = add_field(wz, SECTION_BASICS, "VPC", textfield_widget(wz->vpc),
                          "resource_pool.vpc_id", "the VPC in the zone's region");

    /* Resources */
    wz->priority = select_new(NULL, 0, SELECT_NONE);
    add_field(wz, SECTION_RESOURCES, "Priority", select_widget(wz->priority), "scheduling.priority",
              "a waiting higher-priority job holds back lower ones");
    wz->preemptible = toggle_new("may be preempted", !init || !init->scheduling.has_preemptible ||
                                                         init->scheduling.preemptible);
    wz->e_preemptible = add_field(wz, SECTION_RESOURCES, "Preemptible",
                                  toggle_widget(wz->preemptible), "scheduling.preemptible",
                                  "idle jobs only: standard jobs may take the capacity back");
    struct select_option fo[4];
    size_t fsel = 0;
    for (size_t i = 0; i < 4; i++) {
        fo[i] =
            (struct select_option){framework_label(frameworks[i]),
                                   enum_name(&framework_names, (int)frameworks[i]), false, NULL};
        if (init && init->framework == frameworks[i])
            fsel = i;
    }
    wz->framework = select_new(fo, 4, fsel);
    add_field(wz, SECTION_RESOURCES, "Framework", select_widget(wz->framework), "framework",
              "how workers are started and find each other");
    wz->replicas = numberfield_new(1, 4096, r && r->has_total_replicas ? r->total_replicas : 1);
    add_field(wz, SECTION_RESOURCES, "Replicas", numberfield_widget(wz->replicas),
              "roles[0].total_replicas", "Up/Down change it");
    wz->spec = select_new(NULL, 0, SELECT_NONE);
    wz->e_spec = add_field(wz, SECTION_RESOURCES, "Resource spec", select_widget(wz->spec),
                           "roles[0].resource_spec[0].name", "what one worker gets");

    /* Image */
    const char *image = r && r->image_path        ? r->image_path
                        : cat && cat->image_count ? cat->images[0].path
                                                  : NULL;
    wz->image = textfield_new(image, 1024);
    wz->e_image =
        add_field(wz, SECTION_IMAGE, "Image", textfield_widget(wz->image), "roles[0].image_path",
                  "[registry[:port]/]repo[:tag][@sha256:…]; local/host runs on the machine itself");
    wz->script = textarea_new(r ? r->startup_script : NULL, 8, 0);
    textarea_set_placeholder(wz->script, "the commands every worker runs");
    size_t e = add_field(wz, SECTION_IMAGE, "Startup script", textarea_widget(wz->script),
                         "roles[0].startup_script", "runs with sh -c in every worker");
    form_set_wide(wz->forms[SECTION_IMAGE], e, true);

    /* Fault tolerance */
    const struct fault_tolerance *ft = init ? &init->fault_tolerance : NULL;
    /* The backend's range (ACP: any int32), widened to a loaded job's value: never clamped. */
    struct form_limits lim;
    validate_form_limits(cat, &lim);
    long b0 = ft && ft->has_backoff_limit ? ft->backoff_limit : 0;
    wz->backoff = numberfield_new(b0 < lim.min_backoff ? b0 : lim.min_backoff,
                                  b0 > lim.max_backoff ? b0 : lim.max_backoff, b0);
    numberfield_set_suffix(wz->backoff, "restarts (0 never, -1 forever)");
    add_field(wz, SECTION_FAULT_TOLERANCE, "Max restarts", numberfield_widget(wz->backoff),
              "fault_tolerance.backoff_limit",
              "RESTART_JOB restarts every worker; on big jobs re-initialising takes long");
    add_list(wz, LIST_RULES, WLIST_RULE, SECTION_FAULT_TOLERANCE, "Rules (first match wins)", init);
    wz->e_rules = wz->lists[LIST_RULES].entry;

    /* Data */
    size_t note =
        form_add(wz->forms[SECTION_DATA], NULL,
                 wlist_note_new("POSIX permissions of a volume are set by the tenant admin"), NULL);
    form_set_wide(wz->forms[SECTION_DATA], note, true);
    add_list(wz, LIST_MOUNTS, WLIST_MOUNT, SECTION_DATA, "AFS volumes", init);

    /* Environment */
    add_list(wz, LIST_ENV, WLIST_ENV, SECTION_ENVIRONMENT, "Variables", init);
    wz->ssh = toggle_new("passwordless SSH between workers",
                         init && init->ssh.has_auto_key_setup && init->ssh.auto_key_setup);
    add_field(wz, SECTION_ENVIRONMENT, "SSH", toggle_widget(wz->ssh), "ssh.auto_key_setup",
              "keys appear read-only at the SSH config path; always on for MPI");

    /* TensorBoard */
    wz->tensorboard = toggle_new("enabled", init && init->tensorboard.present);
    add_field(wz, SECTION_TENSORBOARD, "TensorBoard", toggle_widget(wz->tensorboard), "tensorboard",
              "logs go on a mounted volume; curves show live in `trainjob top` (M on the job)");
    const char *tb_base, *tb_dir;
    split_log_path(wz, init ? init->tensorboard.log_path : NULL, &tb_base, &tb_dir);
    wz->tb_mount = select_new(NULL, 0, SELECT_NONE);
    refresh_tb_paths(wz, tb_base);
    wz->e_tb_mount = add_field(wz, SECTION_TENSORBOARD, "Log path", select_widget(wz->tb_mount),
                               "tensorboard.log_path", NULL);
    refresh_tb_help(wz);
    wz->tb_dir = textfield_new(tb_dir, 0);
    textfield_set_placeholder(wz->tb_dir, "the mount path itself");
    wz->e_tb_dir =
        form_add(wz->forms[SECTION_TENSORBOARD], "Directory", textfield_widget(wz->tb_dir),
                 "optional: a directory under the mount path, e.g. tb/run1");

    refresh_pools(wz, init && init->resource_pool.name ? init->resource_pool.name : NULL);
    refresh_priorities(wz);
    if (init && init->scheduling.priority > PRIORITY_NORMAL)
        select_set_selected(wz->priority, (size_t)init->scheduling.priority - 1);
    const char *want_spec = r && r->resource_spec_count ? r->resource_spec[0].name : NULL;
    refresh_pool_fields(wz, init ? init->resource_pool.zone : NULL, want_spec);
    refresh_replica_hint(wz);
    refresh_rules_state(wz);
    refresh_volume_zone(wz);
    form_set_hidden(wz->forms[SECTION_TENSORBOARD], wz->e_tb_mount, !toggle_on(wz->tensorboard));
    form_set_hidden(wz->forms[SECTION_TENSORBOARD], wz->e_tb_dir, !toggle_on(wz->tensorboard));
}

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
    make_fields(wz, initial, default_workspace);
    wz->km = km;
    wz->keybar = make_keybar(km);
    wz->dirty = true;
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
    keybar_free(wz->keybar);
    findings_free(&wz->findings);
    findings_free(&wz->file_findings);
    jobspec_free(&wz->base);
    jobspec_free(&wz->job);
    free(wz);
}

/* The field showing path's findings: exact, or the nearest ancestor path. */
static const struct field *field_for(const struct wizard *wz, const char *path)
{
    const struct field *best = NULL;
    size_t best_len = 0;
    for (size_t i = 0; i < wz->field_count; i++) {
        size_t n = strlen(wz->fields[i].path);
        if (strncmp(path, wz->fields[i].path, n) == 0 &&
            (path[n] == '\0' || path[n] == '.' || path[n] == '[') && n >= best_len) {
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
    const struct wizard_list *wl = list_claiming(wz, path, &row, &sub);
    if (wl)
        return wlist_widget(wl->l);
    const struct field *fd = field_for(wz, path);
    return fd ? form_widget_at(wz->forms[fd->section], fd->entry) : NULL;
}

size_t wizard_set_file_findings(struct wizard *wz, const struct findings *fs,
                                const struct finding **first)
{
    size_t unplaced = 0;
    if (first)
        *first = NULL;
    findings_clear(&wz->file_findings);
    for (size_t i = 0; fs && i < fs->count; i++) {
        const struct finding *f = &fs->items[i];
        if (!*f->path || !widget_for(wz, f->path)) {
            if (unplaced++ == 0 && first)
                *first = f;
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
}

void wizard_set_unchanged(struct wizard *wz)
{
    wz->changed = false;
}

/* Under a valid NGC image: what its tag means (release, CUDA, Python, Ubuntu). */
static void explain_image_tag(struct wizard *wz)
{
    struct form *f = wz->forms[SECTION_IMAGE];
    if (form_message(f, wz->e_image, NULL) != FORM_MESSAGE_NONE)
        return; /* an error or a warning says more */
    struct strbuf sb = STRBUF_INIT;
    if (ngctag_explain(textfield_value(wz->image), &sb))
        form_set_message(f, wz->e_image, FORM_MESSAGE_OK, strbuf_str(&sb));
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
    build_job(wz);
    findings_clear(&wz->findings);
    /* The file's findings first: on a field they outrank what validation says of its value. */
    for (size_t i = 0; i < wz->file_findings.count; i++) {
        const struct finding *f = &wz->file_findings.items[i];
        findings_add_pos(&wz->findings, f->severity, f->path, f->line, f->col, "%s", f->message);
    }
    struct validate_options vo = {wz->cat, NULL, wz->name_taken, wz->name_taken_ctx, false};
    validate_job(&wz->job, &vo, &wz->findings);
    memset(wz->errors, 0, sizeof wz->errors);
    memset(wz->warnings, 0, sizeof wz->warnings);
    for (size_t i = 0; i < wz->field_count; i++)
        form_set_message(wz->forms[wz->fields[i].section], wz->fields[i].entry, FORM_MESSAGE_NONE,
                         NULL);
    for (int i = 0; i < LIST_COUNT; i++)
        wlist_clear_messages(wz->lists[i].l);
    for (size_t i = 0; i < wz->findings.count; i++) {
        const struct finding *f = &wz->findings.items[i];
        enum form_severity want =
            f->severity == SEVERITY_ERROR ? FORM_MESSAGE_ERROR : FORM_MESSAGE_WARNING;
        size_t row, sub;
        const struct wizard_list *wl = list_claiming(wz, f->path, &row, &sub);
        if (wl) { /* under a row: on that row's field */
            if (f->severity == SEVERITY_ERROR)
                wz->errors[wl->section]++;
            else
                wz->warnings[wl->section]++;
            wlist_set_message(wl->l, row, sub, want, f->message);
            continue;
        }
        enum form_section sec = form_section_of(f->path);
        const struct field *fd = field_for(wz, f->path);
        if (fd)
            sec = fd->section;
        if (f->severity == SEVERITY_ERROR)
            wz->errors[sec]++;
        else
            wz->warnings[sec]++;
        if (fd) {
            const char *old = NULL;
            enum form_severity have = form_message(wz->forms[fd->section], fd->entry, &old);
            if (have < want) /* an error outranks a warning on the same field */
                form_set_message(wz->forms[fd->section], fd->entry, want, f->message);
        }
    }
    explain_image_tag(wz);
    wz->pending = false;
    wz->dirty = true;
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
    build_job(wz);
    return &wz->job;
}

size_t wizard_error_count(const struct wizard *wz)
{
    return findings_count(&wz->findings, SEVERITY_ERROR);
}

/* Closes the popup of the current section's focused field, or of a row's select. */
static void close_popups(struct wizard *wz)
{
    struct widget *wd =
        wz->cur != SECTION_REVIEW && form_focused(wz->forms[wz->cur]) != FORM_NO_ENTRY
            ? form_widget_at(wz->forms[wz->cur], form_focused(wz->forms[wz->cur]))
            : NULL;
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
    if (wz->cur != SECTION_REVIEW)
        form_invalidate(wz->forms[wz->cur]);
    wz->dirty = true;
}

void wizard_show_error(struct wizard *wz, const char *field, const char *message)
{
    size_t row, sub;
    const struct wizard_list *wl = field && *field ? list_claiming(wz, field, &row, &sub) : NULL;
    if (wl) {
        close_popups(wz);
        wlist_set_message(wl->l, row, sub, FORM_MESSAGE_ERROR, message);
        wz->cur = wl->section;
        form_focus(wz->forms[wl->section], wl->entry);
        wlist_focus(wl->l, row, sub);
        refresh_list_help(wz);
        form_invalidate(wz->forms[wl->section]);
        wz->dirty = true;
        return;
    }
    const struct field *fd = field && *field ? field_for(wz, field) : NULL;
    if (fd) {
        close_popups(wz);
        form_set_message(wz->forms[fd->section], fd->entry, FORM_MESSAGE_ERROR, message);
        wz->cur = fd->section;
        form_focus(wz->forms[fd->section], fd->entry);
        form_invalidate(wz->forms[fd->section]);
    }
    wz->dirty = true;
}

/* A choice changed: refresh what depends on it. */
static void on_changed(struct wizard *wz, struct widget *wd)
{
    if (wd == select_widget(wz->workspace)) {
        refresh_pools(wz, NULL);
        refresh_priorities(wz);
        refresh_pool_fields(wz, NULL, NULL);
    } else if (wd == select_widget(wz->pool)) {
        refresh_pool_fields(wz, NULL, NULL);
    } else if (wd == toggle_widget(wz->tensorboard)) {
        form_set_hidden(wz->forms[SECTION_TENSORBOARD], wz->e_tb_mount,
                        !toggle_on(wz->tensorboard));
        form_set_hidden(wz->forms[SECTION_TENSORBOARD], wz->e_tb_dir, !toggle_on(wz->tensorboard));
    } else if (wd == wlist_widget(wz->lists[LIST_MOUNTS].l)) {
        refresh_tb_paths(wz, NULL);
        refresh_tb_help(wz);
    } else if (wd == numberfield_widget(wz->backoff)) {
        refresh_rules_state(wz);
    }
    refresh_volume_zone(wz);
    refresh_replica_hint(wz);
    drop_file_findings(wz, wd);
    wz->changed = true;
    wz->pending = true;
    wz->dirty = true;
}

/* Keys on the review page: Enter submits, t toggles YAML / JSON, Tab and Shift-Tab leave. */
static unsigned review_key(struct wizard *wz, const struct widget_key *k, enum wizard_action *out)
{
    if (k->alt)
        return WIDGET_IGNORED;
    if (k->is_function ? k->code == KEY_ENTER : (k->code == '\r' || k->code == '\n')) {
        *out = WIZARD_SUBMIT;
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
    struct wlist *list = list_at(wz, wz->cur, before);
    size_t row_before = list ? wlist_focus_id(list) : 0;
    unsigned r = form_key(f, k);
    if (r & WIDGET_CHANGED) /* the field the key went to, even if focus moved on */
        on_changed(wz, form_widget_at(f, before));
    if (r & WIDGET_REDRAW)
        wz->dirty = true;
    size_t after = form_focused(f);
    struct wlist *entered = after != before ? list_at(wz, wz->cur, after) : NULL;
    if (entered) /* into a list: its first field from above, its last from below */
        wlist_enter(entered, after < before);
    if ((r & WIDGET_FOCUS_NEXT) && after == before)
        go_section(wz, 1);
    else if ((r & WIDGET_FOCUS_PREV) && after == before)
        go_section(wz, -1);
    else if ((after != before || (list && wlist_focus_id(list) != row_before)) && wz->pending)
        wizard_validate(wz); /* leaving a field (a row's too) validates at once */
    refresh_list_help(wz);
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
    bool field_first = keymap_key_is_text(k) || (!k->is_function && !k->alt && k->code == 27);
    if (a != KEYMAP_NONE && !field_first)
        return act(wz, a);
    enum wizard_action out = WIZARD_NONE;
    unsigned r = wz->cur == SECTION_REVIEW ? review_key(wz, k, &out) : field_key(wz, k);
    if (!(r & WIDGET_HANDLED) && a != KEYMAP_NONE)
        return act(wz, a);
    return out;
}

static void draw_sections(struct wizard *wz, const struct term *t, int h)
{
    attrset(t->role[THEME_ROLE_TITLE]);
    mvaddstr(0, 0, " trainjob · new job");
    for (int s = 0; s < SECTION_COUNT && s + 2 < h; s++) {
        const char *mark = t->utf8 ? "✓" : "+";
        enum theme_role role = THEME_ROLE_SECTION_OK;
        char count[16] = "";
        if (wz->errors[s]) {
            mark = t->utf8 ? "✗" : "x";
            role = THEME_ROLE_SECTION_ERROR;
            snprintf(count, sizeof count, " %d", wz->errors[s]);
        } else if (wz->warnings[s]) {
            mark = "!";
            role = THEME_ROLE_SECTION_WARNING;
            snprintf(count, sizeof count, " %d", wz->warnings[s]);
        }
        int y = 2 + s;
        attrset(s == (int)wz->cur ? t->role[THEME_ROLE_SELECTED] : t->role[THEME_ROLE_NORMAL]);
        mvprintw(y, 0, " %-*s", SIDEBAR_W - 2, "");
        attron(t->role[role]);
        mvprintw(y, 1, "%s", mark);
        attroff(t->role[role]);
        printw(" %s%s", section_titles[s], count);
    }
    attrset(t->role[THEME_ROLE_BORDER]);
    mvvline(1, SIDEBAR_W - 1, t->utf8 ? ACS_VLINE : '|', h - 2);
}

/* The review page: totals, every finding, and the exact job that will be sent. */
static void draw_review(struct wizard *wz, const struct term *t, int y, int x, int h, int w)
{
    build_job(wz);
    const struct role *r = jobspec_worker(&wz->job);
    const struct catalog_pool *p = current_pool(wz);
    const struct catalog_spec *s = p && r && r->resource_spec_count && r->resource_spec[0].name
                                       ? catalog_pool_spec(p, r->resource_spec[0].name)
                                       : NULL;
    int workers = r && r->has_total_replicas ? r->total_replicas : 0;
    attrset(t->role[THEME_ROLE_TITLE]);
    mvprintw(y++, x, "Review: %d worker%s, %d device%s · %zu error%s, %zu warning%s", workers,
             workers == 1 ? "" : "s", s ? workers * s->devices : 0,
             s && workers * s->devices == 1 ? "" : "s", wizard_error_count(wz),
             wizard_error_count(wz) == 1 ? "" : "s",
             findings_count(&wz->findings, SEVERITY_WARNING),
             findings_count(&wz->findings, SEVERITY_WARNING) == 1 ? "" : "s");
    for (size_t i = 0; i < wz->findings.count && y < h - 2; i++) {
        const struct finding *f = &wz->findings.items[i];
        struct strbuf sb = STRBUF_INIT;
        strbuf_addf(&sb, "%s %s: %s", f->severity == SEVERITY_ERROR ? (t->utf8 ? "✗" : "x") : "!",
                    f->path, f->message);
        struct strbuf clean = STRBUF_INIT;
        utf8_sanitize(&clean, sb.buf, sb.len, 0);
        attrset(f->severity == SEVERITY_ERROR ? t->role[THEME_ROLE_FIELD_ERROR]
                                              : t->role[THEME_ROLE_FIELD_WARNING]);
        mvaddnstr(y++, x, strbuf_str(&clean), w);
        strbuf_free(&clean);
        strbuf_free(&sb);
    }
    y++;
    attrset(t->role[THEME_ROLE_DIM]);
    mvprintw(y++, x,
             "The job as it will be sent (%s; t toggles):", wz->review_json ? "JSON" : "YAML");
    struct strbuf doc = STRBUF_INIT;
    jobfile_write(&wz->job, wz->review_json ? JOBFILE_JSON : JOBFILE_YAML, &doc);
    struct strbuf clean = STRBUF_INIT;
    utf8_sanitize(&clean, doc.buf ? doc.buf : "", doc.len, UTF8_KEEP_NEWLINE);
    attrset(t->role[THEME_ROLE_NORMAL]);
    const char *line = strbuf_str(&clean);
    while (*line && y < h) {
        size_t n = strcspn(line, "\n");
        mvaddnstr(y++, x, line, (int)n < w ? (int)n : w);
        line += n + (line[n] == '\n');
    }
    strbuf_free(&clean);
    strbuf_free(&doc);
}

void wizard_draw(struct wizard *wz, const struct term *t, const char *status)
{
    int h = LINES, w = COLS;
    bkgdset(' ' | t->role[THEME_ROLE_NORMAL]);
    erase();
    draw_sections(wz, t, h - 1);
    int fx = SIDEBAR_W + 1, fw = w - fx - 1;
    struct select *open = NULL;
    if (wz->cur == SECTION_REVIEW) {
        draw_review(wz, t, 1, fx, h - 2, fw);
    } else {
        struct form *f = wz->forms[wz->cur];
        form_set_utf8(f, t->utf8);
        for (int i = 0; i < LIST_COUNT; i++)
            wlist_set_palette(wz->lists[i].l, &t->palette, t->utf8);
        attrset(t->role[THEME_ROLE_TITLE]);
        mvaddstr(1, fx, section_titles[wz->cur]);
        form_draw(f, stdscr, 2, fx, h - 4, fw, &t->palette);
        size_t e = form_focused(f);
        struct widget *wd = e != FORM_NO_ENTRY ? form_widget_at(f, e) : NULL;
        struct wlist *list = wd ? list_at(wz, wz->cur, e) : NULL;
        int ay, ax, aw;
        if (list) { /* a row's select: where its row drew it in the form's pad */
            open = wlist_open_select(list, &ay, &ax, &aw);
            if (open)
                select_set_anchor(open, 2 + ay - form_scroll(f), fx + ax, aw);
        } else {
            open = wd ? select_from_widget(wd) : NULL;
            if (open && !select_is_open(open))
                open = NULL;
            if (open && form_entry_pos(f, e, &ay, &ax, &aw))
                select_set_anchor(open, ay, ax, aw); /* the form draws through a pad */
        }
    }
    int cy, cx;
    getyx(stdscr, cy, cx);
    if (status && *status) { /* it may quote a file or a server: sanitized */
        struct strbuf clean = STRBUF_INIT;
        utf8_sanitize(&clean, status, strlen(status), 0);
        attrset(t->role[THEME_ROLE_MESSAGE]);
        widget_put_clipped(stdscr, h - 2, fx, fw, clean.buf ? clean.buf : "", clean.len, t->utf8);
        strbuf_free(&clean);
    }
    keybar_set_palette(wz->keybar, &t->palette);
    attrset(t->role[THEME_ROLE_NORMAL]);
    keybar_widget(wz->keybar)->ops->draw(keybar_widget(wz->keybar), stdscr, h - 1, 0, w, false);
    move(cy, cx);
    curs_set(wz->cur == SECTION_REVIEW ? 0 : 1);
    wnoutrefresh(stdscr);
    if (open) {
        select_set_palette(open, &t->palette);
        select_draw_popup(open);
    }
    wz->dirty = false;
}
