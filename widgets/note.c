/*
 * note: read-only text in a form (widgets/note.h).
 */
#include "widgets/note.h"

#include <stdlib.h>
#include <string.h>

#include "util/strbuf.h"
#include "util/utf8.h"
#include "util/xalloc.h"

#define NOTE_MAX_LINES 6

struct note {
    struct widget base; /* first: a note is a widget */
    char *text;
};

static void note_draw(struct widget *wd, WINDOW *win, int y, int x, int w, bool focused)
{
    (void)focused;
    struct note *nt = (struct note *)wd;
    wd->dirty = false;
    widget_put_wrapped(win, y, x, w, nt->text, NOTE_MAX_LINES, true); /* readable at 80 columns */
}

static unsigned note_key(struct widget *wd, const struct widget_key *k)
{
    (void)wd;
    (void)k;
    return WIDGET_IGNORED;
}

static int note_height(const struct widget *wd, int w)
{
    const struct note *nt = (const struct note *)wd;
    return widget_wrapped_lines(nt->text, w, NOTE_MAX_LINES);
}

static void note_destroy(struct widget *wd)
{
    struct note *nt = (struct note *)wd;
    free(nt->text);
    free(nt);
}

static const struct widget_ops note_ops = {
    .kind = "note",
    .draw = note_draw,
    .key = note_key,
    .height = note_height,
    .destroy = note_destroy,
};

struct widget *note_new(const char *text)
{
    struct note *nt = xcalloc(1, sizeof *nt);
    struct strbuf clean = STRBUF_INIT;
    text = text ? text : "";
    utf8_sanitize(&clean, text, strlen(text), 0);
    nt->base.ops = &note_ops;
    nt->base.dirty = true;
    nt->base.disabled = true; /* drawn dim, skipped by the focus */
    nt->text = strbuf_detach(&clean, NULL);
    return &nt->base;
}
