/*
 * jobfile: job files as users write them, in YAML or JSON, both ways.
 *
 * Reading goes text -> jansson tree (jansson for JSON, yamltree for YAML)
 * -> struct jobspec (jobspec_json), keeping beside it the position of every
 * field so each finding can say FILE:LINE:COL. Writing goes the other way and
 * round-trips exactly: parsing what was written gives an equal job.
 */
#ifndef API_JOBFILE_H
#define API_JOBFILE_H

#include <jansson.h>
#include <stddef.h>

#include "api/docpos.h"
#include "api/jobspec.h"

struct findings;
struct strbuf;

enum jobfile_format {
    JOBFILE_YAML,
    JOBFILE_JSON,
};

#define JOBFILE_MAX_SIZE (4u << 20) /* a job file larger than this is a mistake */

struct jobfile {
    struct jobspec job;
    struct docpos pos; /* where each field stands in the text */
    enum jobfile_format format;
};

void jobfile_init(struct jobfile *jf);
void jobfile_free(struct jobfile *jf);

enum jobfile_result {
    JOBFILE_OK = 0,
    JOBFILE_BAD_FIELDS = -1, /* a document, but some fields were rejected; jf->job has the rest */
    JOBFILE_BAD_SYNTAX = -2, /* not a YAML/JSON document, or not a mapping (an empty file) */
    JOBFILE_UNREADABLE = -3, /* the file could not be read */
};

/*
 * Parses len bytes of text. name is the file's name (its extension picks the
 * format: .json is JSON, anything else is read as YAML unless it starts with
 * '{'). Findings (syntax errors, unknown fields, wrong types) get their line
 * and column.
 */
enum jobfile_result jobfile_parse(const char *name, const char *text, size_t len,
                                  struct jobfile *jf, struct findings *fs);
/* Reads and parses path ("-" for standard input); io_err says why it could not be read. */
enum jobfile_result jobfile_load(const char *path, struct jobfile *jf, struct findings *fs,
                                 struct strbuf *io_err);
/* Appends job to out as a YAML or JSON document. */
void jobfile_write(const struct jobspec *job, enum jobfile_format format, struct strbuf *out);
/* A job already as a tree (the body a backend is sent) written the same way. */
void jobfile_write_tree(const json_t *tree, enum jobfile_format format, struct strbuf *out);
/* "yaml" / "json" to a format; returns -1 for anything else. */
int jobfile_format_from_name(const char *name);

#endif
