/*
 * jobspec_json: the job model to and from a jansson tree — the one mapping
 * between the struct and a document, shared by JSON files, YAML files (read
 * into the same tree by yamltree) and every HTTP body.
 *
 * The mapping is a table of fields per object (name, kind, where it lives in
 * the struct), so decoding, encoding and "did you mean …?" suggestions come
 * from one description of the schema.
 */
#ifndef API_JOBSPEC_JSON_H
#define API_JOBSPEC_JSON_H

#include <jansson.h>

struct findings;
struct jobspec;

enum jobspec_decode_mode {
    JOBSPEC_STRICT,  /* files: an unknown field is an error naming the nearest known one */
    JOBSPEC_LENIENT, /* server replies: unknown fields are skipped */
};

/*
 * Fills job (which must be initialised) from root. Every problem becomes a
 * finding with its field path; decoding goes on past errors so a file's
 * mistakes are all reported at once. Returns 0 when no error was found.
 */
int jobspec_from_json(const json_t *root, enum jobspec_decode_mode mode, struct jobspec *job,
                      struct findings *fs);
/* A new tree holding every field that is present, in the order of the form. */
json_t *jobspec_to_json(const struct jobspec *job);

#endif
