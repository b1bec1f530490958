/*
 * formtab: the create-task form as data — one row per field the wizard
 * shows: its section, label, help, the schema path it edits (the paths
 * findings carry), the kind of widget, where its choices come from and when
 * it is shown. tui/wizard_fields.c builds its sections from these rows and
 * reads and writes each row's value through api/schema by its path; the
 * rows marked handled (the lists, the image list, the log path) have a few
 * lines there that say what they edit by the same path. No curses here: the
 * table is knowledge about the job's fields, beside the schema and
 * validation that share its paths (doc/form.md says how they fit).
 */
#ifndef API_FORMTAB_H
#define API_FORMTAB_H

#include <stdbool.h>
#include <stddef.h>

#include "api/validate.h"

enum formtab_kind {
    FORMTAB_TEXT,     /* one line of text */
    FORMTAB_TEXTAREA, /* several lines */
    FORMTAB_NUMBER,   /* a whole number, kept as typed (range is validation's) */
    FORMTAB_TOGGLE,   /* on / off */
    FORMTAB_CHOICE,   /* one of a list (choices below) */
    FORMTAB_LIST,     /* rows of fields: env, mounts, rules (tui/wizard_lists.c) */
    FORMTAB_NOTE,     /* text in the section (its help), no field: path "" */
};

/* Where a choice field's choices come from. */
enum formtab_choices {
    FORMTAB_NO_CHOICES,
    FORMTAB_WORKSPACES,  /* the caller's workspaces, and "new workspace…" */
    FORMTAB_POOLS,       /* the workspace's pools */
    FORMTAB_ZONES,       /* the pool's zones */
    FORMTAB_VPCS,        /* the VPCs of the zone's region */
    FORMTAB_PRIORITIES,  /* the enum's values in .offered; owner-only ones disabled for members */
    FORMTAB_FRAMEWORKS,  /* the enum's values in .offered: the four the console offers */
    FORMTAB_SPECS,       /* the pool's resource specs */
    FORMTAB_IMAGES,      /* the catalog's images */
    FORMTAB_MOUNT_PATHS, /* the mount paths typed in Data */
};

/* When a row is shown. */
enum formtab_when {
    FORMTAB_ALWAYS,
    FORMTAB_ZONED, /* standard – public and idle pools (and a file's unlisted zoned pool) */
    FORMTAB_IDLE,  /* idle (SPOT) jobs only: an idle pool's, or a file's for an unlisted pool */
    FORMTAB_SSH,   /* while passwordless SSH is on (always for MPI) */
    FORMTAB_TENSORBOARD, /* while TensorBoard is enabled */
};

struct formtab_row {
    enum form_section section;
    const char *label;
    const char *path; /* the schema path it edits, as findings name it */
    enum formtab_kind kind;
    enum formtab_choices choices;
    enum formtab_when when;
    const char *help;
    int max_chars;  /* text: the longest value the field takes (0: no limit) */
    bool handled;   /* its value goes into the job by code of its own; else by path only */
    bool read_only; /* shown, not edited (nor written) */
    /* a number's Up/Down range (widened to a value loaded; absent: min), the text shown while
     * empty, what a toggle says beside it or a number after it */
    long min, max;
    const char *placeholder, *words;
    bool on_when_absent;    /* a toggle: what the job means without the value */
    bool unset_until_typed; /* a number the job opened without stays out until typed in */
    const int *offered;     /* an enum choice: the values offered, ending in 0 */
};

/* Every row, in the order the form shows them; *n is their count. */
const struct formtab_row *formtab_rows(size_t *n);
/* The row that edits path exactly (the first, where two fields make up one value), or NULL. */
const struct formtab_row *formtab_row(const char *path);
/* The next row after `after` that edits path (Directory after Log path), or NULL. */
const struct formtab_row *formtab_row_next(const struct formtab_row *after, const char *path);

#endif
