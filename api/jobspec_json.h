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

struct strbuf;

struct findings;
struct jobspec;

enum jobspec_decode_mode {
    JOBSPEC_STRICT,  /* requests to trainjobd: an unknown field is an error naming the nearest */
    JOBSPEC_LENIENT, /* server replies: unknown fields are kept as they came (jobspec.h) */
    JOBSPEC_FILE,    /* job files: a near miss is an error; other unknown fields kept, warned */
};

struct object_type;
/* The TrainingJob table (api/schema): jobspec_free, _copy and _equal walk it. */
const struct object_type *jobspec_schema(void);
/* Frees one top-level field ("mount", "env", …) and all it holds, leaving it absent. */
void jobspec_free_field(struct jobspec *job, const char *name);

/*
 * Fills job (which must be initialised) from root. Every problem becomes a
 * finding with its field path; decoding goes on past errors so a file's
 * mistakes are all reported at once. Returns 0 when no error was found.
 */
int jobspec_from_json(const json_t *root, enum jobspec_decode_mode mode, struct jobspec *job,
                      struct findings *fs);
/* A new tree holding every field that is present, in the order of the form. */
json_t *jobspec_to_json(const struct jobspec *job);
/*
 * A job as a list row needs it (trainjobd's view=BASIC lists and watch
 * streams): name, display name, uid, framework, pool, creator (ownership
 * user_name), priority, quota type
 * when idle (SPOT), the worker role's replicas and specs, backoff limit,
 * state and message, the counts trainjobd adds (faulty_workers only when
 * some are) and create_time, as compact JSON appended to out. About 400
 * bytes where the whole job is about 930.
 */
void jobspec_summary_write(const struct jobspec *job, struct strbuf *out);
/* The same summary as a tree (for callers in process). */
json_t *jobspec_summary_to_json(const struct jobspec *job);

#endif
