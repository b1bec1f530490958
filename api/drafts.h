/*
 * drafts: the store of unfinished jobs. A draft is a job file in
 * ~/.local/state/trainjob/drafts/, one per job being edited (a new job, a
 * clone of X, an edit of file F), whose first line names what it is a
 * draft of ("# trainjob draft: clone of resnet") and whose second the
 * context it was typed against ("# trainjob context: lab"), so a draft of
 * one cluster is not offered under another. This module owns the files:
 * their names, listing them newest first, reading the two head lines,
 * writing one atomically, discarding one, and which drafts a run offers.
 * What the user is asked, and when, is the wizard's (tui/wizard_app.c,
 * tui/wizard_drafts.c).
 */
#ifndef API_DRAFTS_H
#define API_DRAFTS_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "api/jobspec.h"
#include "util/strbuf.h"

/* The first line of every draft, then the label. */
#define DRAFTS_HEADER "# trainjob draft: "
/* The second line, then the context's name (a draft from before has none). */
#define DRAFTS_CONTEXT "# trainjob context: "

struct draft {
    char *path;    /* the draft file */
    char *label;   /* what it is a draft of, made safe for a terminal */
    char *context; /* the context it was typed against, as written; NULL: not said (any) */
    time_t mtime;
    long mtime_ns; /* within the second: drafts written in one second still sort */
};
struct draft_list {
    struct draft *items; /* newest first */
    size_t count;
};

/* ~/.local/state/trainjob/drafts (the caller frees). */
char *drafts_dir(void);
/* What a draft is of: "clone of X" (clone_of), "edit of F" (file, made absolute), or "new job". */
char *drafts_label(const char *clone_of, const char *file);
/*
 * The draft file of label in dir: draft-<hash of label>.yaml. own makes it
 * one of its own, beside any other of that label (each new job is a job of
 * its own; a draft kept for later is not written over).
 */
char *drafts_path(const char *dir, const char *label, bool own);
/*
 * The drafts in dir (files draft-*.yaml and the older draft.yaml), newest
 * first. Only regular files of the caller's own are listed (no symlink,
 * no file another user put there); a label is read from at most a few
 * hundred bytes and made safe for a terminal, and a context line cut short
 * there counts as not said.
 */
void drafts_list(const char *dir, struct draft_list *out);
void drafts_free(struct draft_list *l);
/* Leaves in l only the drafts of context (and those that name none). */
void drafts_keep_context(struct draft_list *l, const char *context);
/* The index in l of the draft at path (NULL: the newest), or -1. */
long drafts_find(const struct draft_list *l, const char *path);
/* Removes the file of l's draft i, and then its row; -1 and why in err when it stays. */
int drafts_discard(struct draft_list *l, size_t i, struct strbuf *err);
/*
 * Writes job as a draft of label, typed against context (NULL: none said),
 * to path (the directory made, temp file + rename).
 */
int drafts_write(const char *path, const char *label, const char *context,
                 const struct jobspec *job, struct strbuf *err);
/* t as local time, "2026-12-01 22:10 CET" (RFC 3339 if the zone cannot be had). */
void drafts_when(time_t t, char *buf, size_t size);

#endif
