/*
 * context_edit: see context_edit.h. libyaml's events give the byte offsets
 * of the top-level mapping and of current_context's value; the edit splices
 * the new scalar there and nothing else. The spliced text is parsed again
 * with context_file_parse, which must read NAME back, so a text the splice
 * would get wrong (an odd layout, a name YAML reads otherwise) is refused
 * instead of written.
 */
#include "api/context_edit.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#include "api/context.h"
#include "api/finding.h"
#include "util/strbuf.h"

/* Where the splice goes, from the events of the document's top level. */
struct spot {
    bool mapping;       /* the document is a mapping */
    bool flow;          /* { … } rather than a block */
    size_t map_start;   /* offset of the mapping ('{' or its first key) */
    size_t map_column;  /* its column, for a new block key */
    bool found;         /* current_context is a key */
    bool scalar;        /* and its value is a scalar */
    size_t key_end;     /* offset after the key */
    size_t value_start; /* the value's span */
    size_t value_end;
};

/* Walks the events: depth 1 is the top mapping, whose keys and values alternate. */
static int locate(const char *text, size_t len, struct spot *sp, struct strbuf *err)
{
    yaml_parser_t p;
    if (!yaml_parser_initialize(&p)) {
        strbuf_adds(err, "out of memory");
        return -1;
    }
    yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
    memset(sp, 0, sizeof *sp);
    int depth = 0, rc = 0;
    bool at_key = true, want_value = false, done = false;
    while (!done) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&p, &ev)) {
            strbuf_addf(err, "line %zu: %s", (size_t)p.problem_mark.line + 1,
                        p.problem ? p.problem : "not YAML");
            rc = -1;
            break;
        }
        bool top = depth == 1;
        switch (ev.type) {
        case YAML_MAPPING_START_EVENT:
        case YAML_SEQUENCE_START_EVENT:
            if (depth == 0 && ev.type == YAML_MAPPING_START_EVENT && !sp->mapping) {
                sp->mapping = true;
                sp->flow = ev.data.mapping_start.style == YAML_FLOW_MAPPING_STYLE;
                sp->map_start = ev.start_mark.index;
                sp->map_column = ev.start_mark.column;
            } else if (top && want_value) {
                want_value = false; /* current_context: [a list] */
            }
            if (top)
                at_key = !at_key;
            depth++;
            break;
        case YAML_MAPPING_END_EVENT:
        case YAML_SEQUENCE_END_EVENT:
            depth--;
            break;
        case YAML_SCALAR_EVENT:
        case YAML_ALIAS_EVENT:
            if (top && at_key && ev.type == YAML_SCALAR_EVENT &&
                strcmp((const char *)ev.data.scalar.value, "current_context") == 0) {
                sp->found = true;
                sp->key_end = ev.end_mark.index;
                want_value = true;
            } else if (top && !at_key && want_value) {
                sp->scalar = ev.type == YAML_SCALAR_EVENT;
                sp->value_start = ev.start_mark.index;
                sp->value_end = ev.end_mark.index;
                if (sp->scalar && ev.data.scalar.length == 0 &&
                    ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE)
                    sp->value_start = sp->value_end = sp->key_end; /* `current_context:` */
                want_value = false;
            }
            if (top)
                at_key = !at_key;
            break;
        case YAML_DOCUMENT_END_EVENT:
            done = true; /* the first document is the file */
            break;
        case YAML_STREAM_END_EVENT:
            done = true;
            break;
        default:
            break;
        }
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&p);
    return rc;
}

/* NAME as YAML: plain when nothing could read it otherwise, else JSON-quoted (valid YAML). */
static void add_scalar(struct strbuf *sb, const char *name)
{
    bool plain = name[0] != '\0' &&
                 strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", name[0]) != NULL;
    for (const char *c = name; plain && *c; c++)
        plain = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
                *c == '-' || *c == '_' || *c == '.';
    static const char *const words[] = {"true", "false", "yes", "no", "on",
                                        "off",  "null",  "y",   "n"};
    for (size_t i = 0; plain && i < sizeof words / sizeof words[0]; i++)
        plain = strcasecmp(name, words[i]) != 0;
    if (plain) {
        strbuf_adds(sb, name);
        return;
    }
    json_t *s = json_string(name);
    char *q = s ? json_dumps(s, JSON_ENCODE_ANY) : NULL;
    strbuf_adds(sb, q ? q : "\"\"");
    free(q);
    json_decref(s);
}

int context_edit_set_current(const char *text, size_t len, const char *name, struct strbuf *out,
                             struct strbuf *err)
{
    struct spot sp;
    if (locate(text, len, &sp, err) != 0)
        return -1;
    if (!sp.mapping) {
        strbuf_adds(err, "expected a mapping with contexts and current_context");
        return -1;
    }
    if (sp.found && !sp.scalar) {
        strbuf_adds(err, "current_context holds no single name");
        return -1;
    }
    strbuf_reset(out);
    if (sp.found && sp.value_start == sp.value_end) {
        /* `current_context:` with nothing after the colon: the colon and blanks become ": NAME". */
        size_t i = sp.key_end;
        while (i < len && (text[i] == ' ' || text[i] == '\t'))
            i++;
        if (i >= len || text[i] != ':') {
            strbuf_adds(err, "cannot find current_context's colon");
            return -1;
        }
        strbuf_add(out, text, sp.key_end);
        strbuf_adds(out, ": ");
        add_scalar(out, name);
        strbuf_add(out, text + i + 1, len - i - 1);
    } else if (sp.found) {
        strbuf_add(out, text, sp.value_start);
        add_scalar(out, name);
        strbuf_add(out, text + sp.value_end, len - sp.value_end);
    } else if (sp.flow) {
        strbuf_add(out, text, sp.map_start + 1);
        strbuf_adds(out, "current_context: ");
        add_scalar(out, name);
        strbuf_adds(out, ", ");
        strbuf_add(out, text + sp.map_start + 1, len - sp.map_start - 1);
    } else {
        strbuf_add(out, text, sp.map_start);
        strbuf_adds(out, "current_context: ");
        add_scalar(out, name);
        strbuf_addc(out, '\n');
        for (size_t i = 0; i < sp.map_column; i++)
            strbuf_addc(out, ' ');
        strbuf_add(out, text + sp.map_start, len - sp.map_start);
    }

    /* The result must be a valid file that names NAME: else nothing is written. */
    struct context_file cf;
    struct findings fs = FINDINGS_INIT;
    int rc = context_file_parse(strbuf_str(out), out->len, &cf, &fs);
    bool same = rc == 0 && cf.current_context && strcmp(cf.current_context, name) == 0;
    if (!same) {
        strbuf_adds(err, "the edited file would not read back as current_context: ");
        strbuf_adds(err, name);
        if (fs.count)
            strbuf_addf(err, " (%s: %s)", fs.items[0].path, fs.items[0].message);
    }
    if (rc == 0)
        context_file_free(&cf);
    findings_free(&fs);
    return same ? 0 : -1;
}
