/*
 * widget: what all widgets share; see widget.h.
 */
#include "widgets/widget.h"

const struct widget_palette *widget_palette_mono(void)
{
    static const struct widget_palette mono = {
        .normal = A_NORMAL,
        .dim = A_DIM,
        .label = A_NORMAL,
        .focus = A_UNDERLINE,
        .selected = A_REVERSE,
        .error = A_BOLD,
        .warning = A_UNDERLINE,
        .ok = A_NORMAL,
        .help = A_DIM,
        .title = A_BOLD,
        .border = A_NORMAL,
        .key = A_REVERSE,
    };
    return &mono;
}
