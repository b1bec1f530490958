/*
 * output: the printing every verb shares (cli/cmd_*.c) — sanitized text,
 * tables, JSON/YAML trees, errors and their exit status — and the option
 * parsing around getopt_long. Uses api/ (errors, YAML) and util/ only.
 */
#include "cli/output.h"

#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "api/yamltree.h"
#include "util/timefmt.h"
#include "util/utf8.h"
#include "util/xalloc.h"

void cli_clean(struct strbuf *sb, const char *s)
{
    if (s)
        utf8_sanitize(sb, s, strlen(s), 0);
}

/* Prints "trainjob: [FIELD: ]MESSAGE", sanitized: the message is the server's. */
static void print_error(FILE *err, const struct api_error *e, bool with_field)
{
    struct strbuf sb = STRBUF_INIT;
    strbuf_adds(&sb, "trainjob: ");
    size_t flen = strlen(e->field);
    bool has_prefix = flen && strncmp(e->message, e->field, flen) == 0 && e->message[flen] == ':';
    if (with_field && flen && !has_prefix) {
        cli_clean(&sb, e->field);
        strbuf_adds(&sb, ": ");
    }
    cli_clean(&sb, e->message);
    fprintf(err, "%s\n", strbuf_str(&sb));
    strbuf_free(&sb);
}

int cli_failed(FILE *err, enum backend_status st, const struct api_error *e, bool with_field)
{
    print_error(err, e, with_field);
    return st == BACKEND_REJECTED ? EXIT_INVALID : EXIT_UNREACHABLE;
}

void cli_table_row(struct cli_table *t, const char *const *cells)
{
    if (t->rows == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 64;
        t->at = xreallocarray(t->at, t->cap * t->cols, sizeof *t->at);
        t->cells_w = xreallocarray(t->cells_w, t->cap * t->cols, sizeof *t->cells_w);
    }
    for (size_t c = 0; c < t->cols; c++) {
        size_t i = t->rows * t->cols + c, from = t->text.len;
        cli_clean(&t->text, cells[c] && *cells[c] ? cells[c] : NONE);
        size_t w = utf8_width(t->text.buf + from, t->text.len - from);
        t->at[i] = from;
        t->cells_w[i] = w > UINT32_MAX ? UINT32_MAX : (uint32_t)w;
        strbuf_add(&t->text, "", 1); /* the cell's NUL: the next starts after it */
    }
    t->rows++;
}

/* Empties t's rows (their text too), keeping its room and widths. */
static void table_clear(struct cli_table *t)
{
    t->rows = 0;
    strbuf_reset(&t->text);
}

void cli_table_print(struct cli_table *t, FILE *out, size_t skip, bool keep)
{
    if (t->width == NULL)
        t->width = xcalloc(t->cols, sizeof *t->width);
    for (size_t r = 0; r < t->rows; r++)
        for (size_t c = 0; c < t->cols; c++)
            if (t->cells_w[r * t->cols + c] > t->width[c])
                t->width[c] = t->cells_w[r * t->cols + c];
    struct strbuf line = STRBUF_INIT; /* one line at a time, its room reused */
    for (size_t r = skip; out && r < t->rows; r++) {
        strbuf_reset(&line);
        for (size_t c = 0; c < t->cols; c++) {
            size_t i = r * t->cols + c;
            strbuf_adds(&line, t->text.buf + t->at[i]);
            if (c + 1 < t->cols) {
                size_t pad = t->width[c] + 3 - t->cells_w[i];
                strbuf_grow(&line, pad);
                memset(line.buf + line.len, ' ', pad);
                line.len += pad;
                line.buf[line.len] = '\0';
            }
        }
        while (line.len && line.buf[line.len - 1] == ' ')
            strbuf_truncate(&line, line.len - 1);
        strbuf_addc(&line, '\n');
        fwrite(line.buf, 1, line.len, out);
    }
    strbuf_free(&line);
    if (out)
        fflush(out);
    table_clear(t);
    if (!keep)
        cli_table_free(t);
}

void cli_table_least(struct cli_table *t, size_t col, size_t width)
{
    if (t->width == NULL)
        t->width = xcalloc(t->cols, sizeof *t->width);
    if (col < t->cols && t->width[col] < width)
        t->width[col] = width;
}

size_t cli_enum_width(const struct enum_names *e)
{
    size_t w = 0;
    for (size_t i = 1; i < e->count; i++) /* 0: unspecified, shown as "-" */
        if (e->names[i] && strlen(e->names[i]) > w)
            w = strlen(e->names[i]);
    return w;
}

void cli_table_free(struct cli_table *t)
{
    strbuf_free(&t->text);
    free(t->at);
    free(t->cells_w);
    free(t->width);
    size_t cols = t->cols;
    memset(t, 0, sizeof *t);
    t->cols = cols;
}

void cli_age(const char *since, char *buf, size_t size)
{
    int64_t t = since ? time_parse_rfc3339(since) : -1;
    if (t < 0) {
        snprintf(buf, size, NONE);
        return;
    }
    int64_t d = time_now_ms() - t;
    time_age(d < 0 ? 0 : d, buf, size);
}

int cli_output_from(const char *s)
{
    if (strcmp(s, "wide") == 0)
        return OUTPUT_WIDE;
    if (strcmp(s, "json") == 0)
        return OUTPUT_JSON;
    if (strcmp(s, "yaml") == 0 || strcmp(s, "yml") == 0)
        return OUTPUT_YAML;
    if (strcmp(s, "name") == 0)
        return OUTPUT_NAME;
    return -1;
}

void cli_sanitize_tree(json_t *tree)
{
    if (json_is_string(tree)) {
        struct strbuf clean = STRBUF_INIT;
        utf8_sanitize(&clean, json_string_value(tree), json_string_length(tree),
                      UTF8_KEEP_NEWLINE | UTF8_KEEP_TAB);
        json_string_setn(tree, clean.buf ? clean.buf : "", clean.len);
        strbuf_free(&clean);
    } else if (json_is_array(tree)) {
        size_t i;
        json_t *v;
        json_array_foreach(tree, i, v) cli_sanitize_tree(v);
    } else if (json_is_object(tree)) {
        const char *k;
        json_t *v;
        json_object_foreach(tree, k, v) cli_sanitize_tree(v);
    }
}

/* Whether key names a time: "time", "create_time", "start_time", … */
static bool time_key(const char *key)
{
    size_t n = strlen(key);
    return strcmp(key, "time") == 0 || (n > 5 && strcmp(key + n - 5, "_time") == 0);
}

void cli_times_shown(json_t *tree)
{
    const char *k;
    json_t *v;
    size_t i;
    if (json_is_array(tree)) {
        json_array_foreach(tree, i, v) cli_times_shown(v);
        return;
    }
    json_object_foreach(tree, k, v)
    {
        if (json_is_string(v) && time_key(k)) {
            char buf[TIMEFMT_RFC3339_LEN];
            time_shown(json_string_value(v), buf);
            json_string_set(v, buf);
        } else {
            cli_times_shown(v);
        }
    }
}

/* The server's data into a pipe or file (times in one form), sanitized strings on a terminal. */
void cli_print_tree(json_t *tree, enum output o, FILE *out)
{
    cli_times_shown(tree);
    if (isatty(fileno(out)))
        cli_sanitize_tree(tree);
    struct strbuf sb = STRBUF_INIT;
    if (o == OUTPUT_JSON) {
        char *s = json_dumps(tree, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        if (s == NULL)
            xalloc_die();
        strbuf_adds(&sb, s);
        strbuf_addc(&sb, '\n');
        free(s);
    } else {
        struct doc_error derr;
        (void)yamltree_emit(tree, &sb, &derr);
    }
    fputs(strbuf_str(&sb), out);
    fflush(out);
    strbuf_free(&sb);
    json_decref(tree);
}

int cli_next_option(int argc, char **argv, const char *shortopts, const struct option *longopts,
                    struct cli_globals *g)
{
    int c = getopt_long(argc, argv, shortopts, longopts, NULL);
    if (c != -1 && cli_global_option(g, c, optarg))
        return 0;
    return c;
}

int cli_bad_option(const char *verb, const char *shortopts, char **argv, FILE *err)
{
    const char *arg = argv[optind - 1];
    bool is_long = strncmp(arg, "--", 2) == 0;
    const char *p = !is_long && optopt > 0 && optopt < 0x100 ? strchr(shortopts, optopt) : NULL;
    if (is_long)
        fprintf(err, "trainjob %s: unknown option, or one missing its value: '%s'\n", verb, arg);
    else if (p && p[1] == ':')
        fprintf(err, "trainjob %s: option '-%c' needs a value\n", verb, optopt);
    else
        fprintf(err, "trainjob %s: unknown option '-%c'\n", verb, optopt ? optopt : '?');
    fprintf(err, "Run 'trainjob %s --help' for its options.\n", verb);
    return EXIT_USAGE;
}

int cli_plain_options(const char *verb, const char *usage, int argc, char **argv,
                      struct cli_globals *g, FILE *out, FILE *err)
{
    static const struct option longopts[] = {
        {"help", no_argument, NULL, 'h'},
        CLI_GLOBAL_OPTIONS,
        {NULL, 0, NULL, 0},
    };
    int c;
    optind = 0;
    opterr = 0;
    while ((c = cli_next_option(argc, argv, "h", longopts, g)) != -1) {
        if (c == 'h') {
            fputs(usage, out);
            return EXIT_OK;
        }
        if (c != 0)
            return cli_bad_option(verb, "h", argv, err);
    }
    return -1;
}

int cli_text_width(FILE *out)
{
    struct winsize ws;
    if (isatty(fileno(out)) && ioctl(fileno(out), TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20)
        return ws.ws_col;
    return 80;
}
