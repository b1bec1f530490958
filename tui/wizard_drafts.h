/*
 * wizard_drafts: the wizard's drafts, one per job being edited (a new job,
 * a clone of X, an edit of file F), each a job file in
 * ~/.local/state/trainjob/drafts/ whose first line names what it is a draft
 * of ("# trainjob draft: clone of resnet") and whose second the context it
 * was typed against ("# trainjob context: lab"), so a draft of one cluster
 * is not offered under another. Listing, writing, and the list
 * `trainjob new` shows at start to pick or discard one. Called by
 * tui/wizard_app.c only.
 */
#ifndef TUI_WIZARD_DRAFTS_H
#define TUI_WIZARD_DRAFTS_H

#include <stddef.h>
#include <time.h>

#include "api/jobspec.h"
#include "tui/term.h"
#include "util/strbuf.h"

/* The first line of every draft, then the label. */
#define DRAFTS_HEADER "# trainjob draft: "
/* The second line, then the context's name (a draft from before has none). */
#define DRAFTS_CONTEXT "# trainjob context: "

struct draft {
    char *path;  /* the draft file */
    char *label; /* what it is a draft of, made safe for a terminal */
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
/*
 * The draft file of label in dir: draft-<hash of label>.yaml. A salt other
 * than 0 makes it one of its own (each new job is a job of its own).
 */
char *drafts_path(const char *dir, const char *label, unsigned long salt);
/* The drafts in dir (files draft-*.yaml and the older draft.yaml), newest first. */
void drafts_list(const char *dir, struct draft_list *out);
void drafts_free(struct draft_list *l);
/*
 * Writes job as a draft of label, typed against context (NULL: none said),
 * to path (the directory made, temp file + rename).
 */
int drafts_write(const char *path, const char *label, const char *context,
                 const struct jobspec *job, struct strbuf *err);
/* Leaves in l only the drafts of context (and those that name none). */
void drafts_keep_context(struct draft_list *l, const char *context);
/* t as local time, "2026-12-01 22:10 CET" (RFC 3339 if the zone cannot be had). */
void drafts_when(time_t t, char *buf, size_t size);
/*
 * The full-screen list of drafts: Up/Down choose, Enter resumes, d twice
 * discards (the file goes and the row with it), n or Esc starts new_label
 * without a draft. Returns the index chosen in l (as l is then), or -1.
 */
long drafts_pick(struct term *t, struct draft_list *l, const char *new_label);

#endif
