/*
 * prompt: a one-line question in a box over the screen — a title, a line
 * saying what to type, and a text field prefilled with a suggestion ("Save
 * as: ./resnet50-ddp.yaml"). Enter answers with the field's text, Esc
 * cancels; the field keeps its own editing keys (Ctrl-A/E/K/U/W, …).
 *
 * The owner passes the keys while the prompt is open and draws it after
 * the screen under it.
 */
#ifndef TUI_PROMPT_H
#define TUI_PROMPT_H

#include "widgets/widget.h"

struct term;
struct prompt;

enum prompt_state {
    PROMPT_OPEN,
    PROMPT_DONE,     /* Enter: prompt_value is the answer */
    PROMPT_CANCELED, /* Esc */
};

/* A prompt under title asking for hint, the field holding initial (NULL: empty). */
struct prompt *prompt_new(const char *title, const char *hint, const char *initial);
/*
 * A choice under title: hint, then the n options one a line, selected marked;
 * arrows (j/k, Home/End, a first letter) move, Enter answers with the option
 * (prompt_value), Esc cancels.
 */
struct prompt *prompt_new_choice(const char *title, const char *hint, const char *const *options,
                                 size_t n, size_t selected);
void prompt_free(struct prompt *p);

enum prompt_state prompt_key(struct prompt *p, const struct widget_key *k);
/* The text typed (valid until the next key). */
const char *prompt_value(const struct prompt *p);
/* Draws the box centred on stdscr, the cursor in the field (the caller doupdates). */
void prompt_draw(struct prompt *p, const struct term *t);

#endif
