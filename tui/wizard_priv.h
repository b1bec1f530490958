/*
 * wizard_priv: the wizard's state, shared by its three files only —
 * tui/wizard.c (keys, findings, validation), tui/wizard_fields.c (the
 * fields, the choices the catalog drives, the job built from them) and
 * tui/wizard_draw.c (the screen). Nothing else includes it.
 */
#ifndef TUI_WIZARD_PRIV_H
#define TUI_WIZARD_PRIV_H

#include <stdbool.h>
#include <stddef.h>

#include "api/finding.h"
#include "api/jobspec.h"
#include "api/validate.h"
#include "tui/wizard_lists.h"
#include "widgets/form.h"
#include "widgets/select.h"

struct catalog_pool;
struct formtab_row;
struct catalog_workspace;
struct keybar;
struct numberfield;
struct textfield;
struct toggle;

#define SIDEBAR_W 22
#define MAX_OPTIONS 64

/* The lists, each one entry of its section's form, indexed by enum wlist_kind. */
enum { LIST_COUNT = WLIST_RULE + 1 };

/* A field: the row it shows (its path, section), its entry in the section's form, its widget. */
struct wz_field {
    const struct formtab_row *row;
    size_t entry;
    struct widget *wd; /* owned by the form */
    bool edited;       /* typed into since the form opened */
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
    struct wz_field fields[32];
    size_t field_count;
    struct findings findings;
    struct findings file_findings; /* from the file opened, on fields not edited since */
    struct findings misspelt;      /* the file's misspelt keys (path), each the path it meant */
    struct findings convert;       /* what the fields could not put into the job (wz_build_job) */
    int errors[SECTION_COUNT], warnings[SECTION_COUNT];
    bool dirty, changed, pending, review_json;
    /* Review: the first line shown, the finding n/N chose (-1: none) and whether to bring
     * it into view; the page and line count of the last draw (for the scroll keys). */
    int review_top, review_page, review_lines;
    long review_sel;
    bool review_follow;
    char *generated_name; /* the name the job gets when Name is left empty */
    const struct keymap *km;
    struct keybar *keybar;

    /* the widgets choices and hints depend on (owned by their forms) */
    struct select *workspace, *pool, *zone, *framework, *spec;
    size_t ws_prev;    /* the workspace chosen before "new workspace…" was */
    bool ws_new_asked; /* "new workspace…" was chosen: the owner asks for a name */
    struct select *tb_mount;
    struct textfield *name, *image, *tb_dir;
    struct numberfield *replicas, *backoff;
    struct toggle *ssh, *tensorboard;
    struct select *image_pick; /* the catalog's images: choosing one fills wz->image */
    struct select *vpc_pick;   /* the catalog's VPCs (NULL: it lists none; the VPC is typed) */
    char *tb_other;            /* a log path from the file on no mount: offered as it was */

    /* the lists, each one field of its section (rows owned here, widget by the form) */
    struct wizard_list {
        struct wlist *l;
        enum form_section section;
        size_t entry;
    } lists[LIST_COUNT];
};

/* wizard_fields.c */
const struct catalog_pool *wz_current_pool(const struct wizard *wz);
/* The list showing entry of section sec, or NULL. */
struct wlist *wz_list_at(const struct wizard *wz, enum form_section sec, size_t entry);
/* The list whose row path names ("mount[1].subdir"), with the row and its field. */
const struct wizard_list *wz_list_claiming(const struct wizard *wz, const char *path, size_t *row,
                                           size_t *field);
/* Rebuilds wz->job: the base job with every field the form shows overlaid. */
void wz_build_job(struct wizard *wz);
/* Makes every section's fields, prefilled from init (NULL: an empty job). */
void wz_make_fields(struct wizard *wz, const struct jobspec *init, const char *ws_default);
void wz_refresh_list_help(struct wizard *wz);
/*
 * After a change: the lists of choices (each keeping what is chosen), the
 * hints, and each field shown or hidden as its row's condition says now.
 */
void wz_refresh(struct wizard *wz);

/* wizard.c: the paths of what the job holds that no shown field edits, comma-separated. */
struct strbuf;
void wizard_kept_from_file(const struct wizard *wz, struct strbuf *out);

/* wizard_draw.c: section_titles is the sidebar's and the section heading's */
extern const char *const wizard_section_titles[SECTION_COUNT];

#endif
