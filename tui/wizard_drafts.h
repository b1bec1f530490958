/*
 * wizard_drafts: the list of drafts (api/drafts.h) `trainjob new` shows at
 * start to pick one or discard some. Called by tui/wizard_app.c only.
 */
#ifndef TUI_WIZARD_DRAFTS_H
#define TUI_WIZARD_DRAFTS_H

#include "api/drafts.h"
#include "tui/term.h"

/*
 * The full-screen list of drafts: Up/Down choose, Enter resumes, d twice
 * discards (the file goes and the row with it), n or Esc starts new_label
 * without a draft. Returns the index chosen in l (as l is then), or -1.
 */
long drafts_pick(struct term *t, struct draft_list *l, const char *new_label);

#endif
