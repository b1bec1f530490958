/*
 * context_edit: changes to a client config.yaml made in its text, so the
 * user's comments, order and layout survive (`trainjob config use-context`).
 * Called by the CLI's config verbs; the result is checked by parsing it
 * again (api/context) before anyone writes it.
 */
#ifndef API_CONTEXT_EDIT_H
#define API_CONTEXT_EDIT_H

#include <stddef.h>

struct strbuf;

/*
 * Puts `current_context: NAME` into the text: the value of an existing
 * top-level key replaced (its comment kept), else the key added as the
 * first of the top-level mapping. The new text in out. Returns 0, or -1 with
 * why in err (not a YAML mapping, the key holds a list, the edit would not
 * read back as NAME).
 */
int context_edit_set_current(const char *text, size_t len, const char *name, struct strbuf *out,
                             struct strbuf *err);

#endif
