/*
 * jobfile: reading and writing job files; see jobfile.h. The only module
 * that knows a file can be YAML or JSON — everything past it sees a tree.
 */
#include "api/jobfile.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "api/finding.h"
#include "api/jobspec_json.h"
#include "api/yamltree.h"
#include "util/fileio.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

void jobfile_init(struct jobfile *jf)
{
    memset(jf, 0, sizeof *jf);
    jobspec_init(&jf->job);
}

void jobfile_free(struct jobfile *jf)
{
    jobspec_free(&jf->job);
    docpos_free(&jf->pos);
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static bool looks_like_json(const char *text, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (c == ' ' || c == '\t' || c == '\r' || c == '\n')
            continue;
        return c == '{' || c == '[';
    }
    return false;
}

/* JSON through jansson; positions from reading the same text as YAML flow style. */
static json_t *parse_json(const char *text, size_t len, struct jobfile *jf, struct findings *fs)
{
    json_error_t jerr;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &jerr);
    if (root == NULL) {
        findings_add_pos(fs, SEVERITY_ERROR, "", jerr.line > 0 ? jerr.line : 1,
                         jerr.column > 0 ? jerr.column : 1, "%s", jerr.text);
        return NULL;
    }
    struct doc_error yerr;
    json_t *shadow = yamltree_parse(text, len, &jf->pos, &yerr);
    if (shadow == NULL)
        docpos_free(&jf->pos); /* no positions rather than wrong ones */
    json_decref(shadow);
    return root;
}

enum jobfile_result jobfile_parse(const char *name, const char *text, size_t len,
                                  struct jobfile *jf, struct findings *fs)
{
    bool json = ends_with(name, ".json") || looks_like_json(text, len);
    jf->format = json ? JOBFILE_JSON : JOBFILE_YAML;
    json_t *root =
        json ? parse_json(text, len, jf, fs) : yamltree_parse_or_report(text, len, &jf->pos, fs);
    if (root == NULL)
        return JOBFILE_BAD_SYNTAX;

    struct findings decode = FINDINGS_INIT;
    int rc = jobspec_from_json(root, JOBSPEC_FILE, &jf->job, &decode);
    /* An empty file, a list, a string: no field of a job could be read at all. */
    bool a_job = json_is_object(root);
    json_decref(root);
    docpos_locate(&jf->pos, &decode);
    findings_move(fs, &decode);
    if (!a_job)
        return JOBFILE_BAD_SYNTAX;
    return rc == 0 ? JOBFILE_OK : JOBFILE_BAD_FIELDS;
}

enum jobfile_result jobfile_load(const char *path, struct jobfile *jf, struct findings *fs,
                                 struct strbuf *io_err)
{
    char *text;
    size_t len;
    if (file_read_all(path, JOBFILE_MAX_SIZE, &text, &len, io_err) != 0)
        return JOBFILE_UNREADABLE;
    enum jobfile_result rc = jobfile_parse(path, text, len, jf, fs);
    free(text);
    return rc;
}

void jobfile_write(const struct jobspec *job, enum jobfile_format format, struct strbuf *out)
{
    json_t *tree = jobspec_to_json(job);
    jobfile_write_tree(tree, format, out);
    json_decref(tree);
}

void jobfile_write_tree(const json_t *tree, enum jobfile_format format, struct strbuf *out)
{
    if (format == JOBFILE_JSON) {
        char *s = json_dumps(tree, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        if (s == NULL)
            xalloc_die(); /* the tree is well formed, so only memory can fail */
        strbuf_adds(out, s);
        strbuf_addc(out, '\n');
        free(s);
    } else {
        struct doc_error err;
        /* The tree is ours and holds only strings, integers and booleans. */
        (void)yamltree_emit(tree, out, &err);
    }
}

int jobfile_format_from_name(const char *name)
{
    if (strcmp(name, "yaml") == 0 || strcmp(name, "yml") == 0)
        return JOBFILE_YAML;
    if (strcmp(name, "json") == 0)
        return JOBFILE_JSON;
    return -1;
}
