/*
 * fuzz_yaml: libFuzzer target for the YAML reader and writer (api/yamltree.c,
 * api/docpos.c). Any bytes: the parse must not crash or leak, and must give
 * either a tree or an error with a message. A tree must place every finding
 * and must survive the round trip: emitting it cannot fail, and reading the
 * output back gives an equal tree (reals included: they are written with
 * enough digits to read back exactly). Trees that aliases make huge when
 * expanded (alias bombs) skip the round trip, which would expand them.
 *
 * Built by `make fuzz` with libFuzzer, and by `make check-tests` with
 * tests/fuzz/replay.c to replay tests/fuzz/seeds/yaml/.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/docpos.h"
#include "api/finding.h"
#include "api/yamltree.h"
#include "util/strbuf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_EXPANDED_NODES 100000

/* Nodes in tree with shared nodes counted each time; stops past budget. */
static size_t expanded_nodes(const json_t *node, size_t budget)
{
    size_t n = 1;
    if (json_is_object(node)) {
        const char *key;
        json_t *value;
        json_object_foreach((json_t *)node, key, value)
        {
            if (n > budget)
                break;
            n += expanded_nodes(value, budget - n);
        }
    } else if (json_is_array(node)) {
        size_t i;
        json_t *value;
        json_array_foreach(node, i, value)
        {
            if (n > budget)
                break;
            n += expanded_nodes(value, budget - n);
        }
    }
    return n;
}

/*
 * Every entry has a position, and with the root in the table any finding
 * (at an entry, under one, or nowhere in the file) gets placed.
 */
static void check_positions(const struct docpos *pos)
{
    struct findings fs = FINDINGS_INIT;
    for (size_t i = 0; i < pos->count; i++) {
        const struct docpos_entry *e = &pos->items[i];
        if (e->line < 1 || e->col < 1 || e->key_line < 0 || e->key_col < 0)
            abort();
        findings_add_at(&fs, SEVERITY_ERROR, e->path, (int)(i % 4) - 2, "here");
        findings_add(&fs, SEVERITY_ERROR, e->path, "below %s", "here");
    }
    findings_add(&fs, SEVERITY_ERROR, "no.such[3].field", "absent");
    docpos_locate(pos, &fs);
    for (size_t i = 0; i < fs.count && pos->count > 0; i++)
        if (fs.items[i].line < 1 || fs.items[i].col < 1)
            abort();
    findings_free(&fs);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct docpos pos = DOCPOS_INIT;
    struct doc_error err;
    json_t *tree = yamltree_parse((const char *)data, size, &pos, &err);
    if (!tree) {
        if (err.message[0] == '\0' || pos.count != 0)
            abort();
        docpos_free(&pos);
        return 0;
    }
    if (pos.count > 0 && pos.items[0].path[0] != '\0')
        abort(); /* the root comes first */
    check_positions(&pos);
    docpos_free(&pos);

    if (expanded_nodes(tree, MAX_EXPANDED_NODES) <= MAX_EXPANDED_NODES) {
        struct strbuf out = STRBUF_INIT;
        if (yamltree_emit(tree, &out, &err) != 0)
            abort();
        json_t *back = yamltree_parse(out.buf ? out.buf : "", out.len, NULL, &err);
        if (!back || !json_equal(tree, back))
            abort();
        json_decref(back);
        strbuf_free(&out);
    }
    json_decref(tree);
    return 0;
}
