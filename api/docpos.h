/*
 * docpos: where each field of a parsed document stands in its file.
 *
 * The decoders work on a jansson tree, which has no positions; the YAML
 * reader records, beside the tree, a table from field path
 * ("roles[0].image_path", "" for the root) to the line and column of the key
 * and of the value. Findings are placed by looking their path up here,
 * falling back to the nearest ancestor that is in the file.
 */
#ifndef API_DOCPOS_H
#define API_DOCPOS_H

#include <stddef.h>

struct findings;

enum docpos_style {
    DOCPOS_PLAIN,  /* value text starts at col */
    DOCPOS_QUOTED, /* one quote character, then the value text */
    DOCPOS_BLOCK,  /* literal/folded block, or a collection: no column inside */
};

struct docpos_entry {
    char *path;
    int key_line, key_col; /* the key of a mapping entry (0 for the root and sequence items) */
    int line, col;         /* start of the value, 1-based */
    enum docpos_style style;
};

struct docpos {
    struct docpos_entry *items;
    size_t count;
    size_t cap;
};

#define DOCPOS_INIT                                                                                \
    {                                                                                              \
        NULL, 0, 0                                                                                 \
    }

void docpos_add(struct docpos *pos, const char *path, int key_line, int key_col, int line, int col,
                enum docpos_style style);
/* The entry for exactly path, or NULL. */
const struct docpos_entry *docpos_find(const struct docpos *pos, const char *path);
/* The entry for path or its nearest ancestor in the table, or NULL. */
const struct docpos_entry *docpos_nearest(const struct docpos *pos, const char *path);
/*
 * Gives every finding without a position the position of its field: the
 * value (moved by the finding's offset inside single-line scalars), or the
 * key for findings at FINDING_AT_KEY.
 */
void docpos_locate(const struct docpos *pos, struct findings *fs);
void docpos_free(struct docpos *pos);

#endif
