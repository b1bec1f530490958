/*
 * yamltree: YAML text to and from the jansson tree the JSON codec uses, so
 * there is one mapping from tree to job (api/jobspec_json.c), not two.
 *
 * Reading resolves plain scalars with the YAML 1.2 core schema (null, true/
 * false, integers, floats, else string); quoted scalars are strings. Anchors
 * and aliases work (an alias shares the anchored node, so alias bombs cost
 * nothing); duplicate keys, non-scalar keys, unknown tags, more than one
 * document and nesting deeper than YAMLTREE_MAX_DEPTH are errors with the
 * line and column. Positions of every node go into a docpos table.
 *
 * Writing emits block style, quoting any string that would read back as
 * another type — also under YAML 1.1 (yes/no/on/off, "<<", "=", 0777, 1_000),
 * which PyYAML and kubectl still read — and multi-line strings as literal
 * blocks, so that parse(emit(tree)) equals tree.
 */
#ifndef API_YAMLTREE_H
#define API_YAMLTREE_H

#include <jansson.h>
#include <stddef.h>

struct docpos;
struct findings;
struct strbuf;

#define YAMLTREE_MAX_DEPTH 64
#define YAMLTREE_MAX_ALIAS_NODES 100000       /* nodes aliases may add, once expanded */
#define YAMLTREE_MAX_ALIAS_BYTES (4ull << 20) /* text (scalars, keys) aliases may add */

struct doc_error {
    int line, col;  /* 1-based; 0 when unknown */
    char path[128]; /* the node's path (a.b[2]) when the error is about one, else "" */
    char message[256];
};

/*
 * Parses len bytes of text. Returns a new reference to the root (an empty
 * document gives json null), or NULL with err filled. pos may be NULL.
 */
json_t *yamltree_parse(const char *text, size_t len, struct docpos *pos, struct doc_error *err);
/* As yamltree_parse, with a syntax error reported as a finding at its line:col. */
json_t *yamltree_parse_or_report(const char *text, size_t len, struct docpos *pos,
                                 struct findings *fs);
/* Appends root as a YAML document to out. Returns 0, or -1 with err filled. */
int yamltree_emit(const json_t *root, struct strbuf *out, struct doc_error *err);

#endif
