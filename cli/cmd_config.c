/*
 * cmd_config: `trainjob config` — the contexts of the client's config.yaml
 * ($TRAINJOB_CONFIG, else ~/.config/trainjob/config.yaml), kubectl style:
 *
 *   config get-contexts [-o name]   a table (CURRENT marks the one in effect)
 *   config current-context          the name of the context in effect
 *   config use-context NAME         makes NAME current, in the file
 *
 * use-context edits the file's text (api/context_edit), so comments and
 * layout stay, writes it atomically through a symlink to its target, keeping
 * its mode. Names from the file are sanitized before they are printed.
 * Called from the verb table (cli/cli.c).
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "api/context.h"
#include "api/context_edit.h"
#include "api/finding.h"
#include "api/paths.h"
#include "cli/cli.h"
#include "util/fileio.h"
#include "util/strbuf.h"
#include "util/utf8.h"
#include "util/xalloc.h"

#define CONFIG_MAX_SIZE (1u << 20)

static const char config_usage[] =
    "usage: trainjob config get-contexts [-o name]\n"
    "       trainjob config current-context\n"
    "       trainjob config use-context NAME\n"
    "The contexts of $TRAINJOB_CONFIG, else ~/.config/trainjob/config.yaml. The\n"
    "context in effect is --context, else current_context, else the first one,\n"
    "else the built-in 'local' (the local engine). use-context sets\n"
    "current_context in the file and keeps the rest of it as it is.\n";

/* The file's text and contexts; a missing file is no contexts. Prints why not. */
static int load(const char *path, char **text, size_t *len, struct context_file *cf, FILE *err)
{
    *text = NULL;
    *len = 0;
    memset(cf, 0, sizeof *cf);
    struct stat st;
    if (stat(path, &st) != 0 && errno == ENOENT)
        return EXIT_OK;
    struct strbuf why = STRBUF_INIT;
    struct strbuf line = STRBUF_INIT;
    struct findings fs = FINDINGS_INIT;
    int rc = EXIT_OK;
    if (file_read_regular(path, CONFIG_MAX_SIZE, text, len, &why) != 0) {
        utf8_sanitize(&line, strbuf_str(&why), why.len, 0);
        fprintf(err, "trainjob config: %s\n", strbuf_str(&line));
        rc = EXIT_USAGE;
    } else if (context_file_parse(*text, *len, cf, &fs) != 0) {
        for (size_t i = 0; i < fs.count; i++) {
            const struct finding *f = &fs.items[i];
            strbuf_reset(&line);
            strbuf_addf(&line, "%s:%d:%d: %s: %s: %s", path, f->line, f->col,
                        severity_name(f->severity), f->path, f->message);
            struct strbuf clean = STRBUF_INIT;
            utf8_sanitize(&clean, strbuf_str(&line), line.len, 0);
            fprintf(err, "%s\n", strbuf_str(&clean));
            strbuf_free(&clean);
        }
        rc = EXIT_INVALID;
    }
    if (rc != EXIT_OK) {
        free(*text);
        *text = NULL;
    }
    strbuf_free(&why);
    strbuf_free(&line);
    findings_free(&fs);
    return rc;
}

/* The name in effect: --context, current_context, the first context, or "local". */
static const char *in_effect(const struct cli_globals *g, const struct context_file *cf)
{
    if (g->context)
        return g->context;
    if (cf->current_context)
        return cf->current_context;
    return cf->context_count ? cf->contexts[0].name : CONTEXT_LOCAL_NAME;
}

/* A cell: the text sanitized (or "-"), its display width in *w. */
static char *cell(const char *s, size_t *w)
{
    struct strbuf sb = STRBUF_INIT;
    if (s && *s)
        utf8_sanitize(&sb, s, strlen(s), 0);
    else
        strbuf_adds(&sb, "-");
    *w = utf8_width(sb.buf, sb.len);
    return strbuf_detach(&sb, NULL);
}

enum { COLS = 5 };

/* Prints rows of COLS cells, each column as wide as its widest cell; frees them. */
static void print_table(char **cells, size_t rows, FILE *out)
{
    size_t width[COLS] = {0}, w;
    for (size_t r = 0; r < rows; r++)
        for (size_t c = 0; c < COLS; c++) {
            w = utf8_width(cells[r * COLS + c], strlen(cells[r * COLS + c]));
            if (w > width[c])
                width[c] = w;
        }
    for (size_t r = 0; r < rows; r++) {
        struct strbuf line = STRBUF_INIT;
        for (size_t c = 0; c < COLS; c++) {
            const char *s = cells[r * COLS + c];
            strbuf_adds(&line, s);
            if (c + 1 < COLS)
                for (w = utf8_width(s, strlen(s)); w < width[c] + 3; w++)
                    strbuf_addc(&line, ' ');
            free(cells[r * COLS + c]);
        }
        while (line.len && line.buf[line.len - 1] == ' ')
            line.buf[--line.len] = '\0';
        fprintf(out, "%s\n", strbuf_str(&line));
        strbuf_free(&line);
    }
}

static int get_contexts(const struct cli_globals *g, const struct context_file *cf, bool names,
                        FILE *out)
{
    const char *cur = in_effect(g, cf);
    size_t n = cf->context_count ? cf->context_count : 1;
    char **cells = xcalloc((n + 1) * COLS, sizeof *cells);
    size_t w;
    const char *head[COLS] = {"CURRENT", "NAME", "DRIVER", "ENDPOINT", "WORKSPACE"};
    for (size_t c = 0; c < COLS; c++)
        cells[c] = xstrdup(head[c]);
    for (size_t i = 0; i < n; i++) {
        const struct context *c = cf->context_count ? &cf->contexts[i] : NULL;
        const char *name = c ? c->name : CONTEXT_LOCAL_NAME;
        char **row = cells + (i + 1) * COLS;
        row[0] = xstrdup(strcmp(name, cur) == 0 ? "*" : "");
        row[1] = cell(name, &w);
        row[2] = cell(c && c->driver != CONTEXT_DRIVER_UNSPECIFIED
                          ? enum_name(&context_driver_names, (int)c->driver)
                          : "acp",
                      &w);
        row[3] = cell(c && c->endpoint ? c->endpoint : "(local engine)", &w);
        row[4] = cell(c && c->workspace ? c->workspace : CONTEXT_LOCAL_WORKSPACE, &w);
    }
    if (names) {
        for (size_t i = 1; i <= n; i++)
            fprintf(out, "%s\n", cells[i * COLS + 1]);
        for (size_t i = 0; i < (n + 1) * COLS; i++)
            free(cells[i]);
    } else {
        print_table(cells, n + 1, out);
    }
    free(cells);
    return EXIT_OK;
}

/* Writes text over path (through a symlink to its target), keeping the file's mode. */
static int write_back(const char *path, const struct strbuf *text, FILE *err)
{
    char *target = realpath(path, NULL);
    struct stat st;
    mode_t mode = target && stat(target, &st) == 0 ? st.st_mode & 07777 : 0600;
    struct strbuf why = STRBUF_INIT;
    int rc = file_write_atomic(target ? target : path, text->buf, text->len, mode, &why);
    if (rc != 0) {
        struct strbuf line = STRBUF_INIT;
        utf8_sanitize(&line, strbuf_str(&why), why.len, 0);
        fprintf(err, "trainjob config: %s\n", strbuf_str(&line));
        strbuf_free(&line);
    }
    strbuf_free(&why);
    free(target);
    return rc == 0 ? EXIT_OK : EXIT_USAGE;
}

static int use_context(const char *path, const char *text, size_t len,
                       const struct context_file *cf, const char *name, FILE *out, FILE *err)
{
    struct strbuf clean = STRBUF_INIT;
    utf8_sanitize(&clean, name, strlen(name), 0);
    bool known = false;
    for (size_t i = 0; i < cf->context_count && !known; i++)
        known = strcmp(cf->contexts[i].name, name) == 0;
    int rc = EXIT_OK;
    if (!known) {
        fprintf(err, "trainjob config: no context named '%s' in %s", strbuf_str(&clean), path);
        if (cf->context_count == 0)
            fputs(" (it has no contexts: add one under contexts:)", err);
        fputc('\n', err);
        rc = EXIT_INVALID;
    } else {
        struct strbuf edited = STRBUF_INIT;
        struct strbuf why = STRBUF_INIT;
        if (context_edit_set_current(text, len, name, &edited, &why) != 0) {
            struct strbuf line = STRBUF_INIT;
            utf8_sanitize(&line, strbuf_str(&why), why.len, 0);
            fprintf(err, "trainjob config: %s: %s; nothing written\n", path, strbuf_str(&line));
            strbuf_free(&line);
            rc = EXIT_INVALID;
        } else if ((rc = write_back(path, &edited, err)) == EXIT_OK) {
            fprintf(out, "Switched to context \"%s\".\n", strbuf_str(&clean));
        }
        strbuf_free(&edited);
        strbuf_free(&why);
    }
    strbuf_free(&clean);
    return rc;
}

/* `config SUBCOMMAND`: get-contexts, current-context, use-context NAME. */
int cmd_config(const struct cli_globals *g, int argc, char **argv, FILE *out, FILE *err)
{
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"help", no_argument, NULL, 'h'},
        CLI_GLOBAL_OPTIONS,
        {NULL, 0, NULL, 0},
    };
    struct cli_globals local = *g;
    const char *output = NULL;
    int c;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
        if (c == 'o') {
            output = optarg;
        } else if (c == 'h') {
            fputs(config_usage, out);
            return EXIT_OK;
        } else if (!cli_global_option(&local, c, optarg)) {
            fprintf(err, "trainjob config: unknown option, or one missing its value: '%s'\n",
                    argv[optind - 1]);
            fputs(config_usage, err);
            return EXIT_USAGE;
        }
    }
    const char *sub = optind < argc ? argv[optind] : NULL;
    int nargs = argc - optind - 1;
    bool names = output && strcmp(output, "name") == 0;
    if (sub == NULL || (output && !names) ||
        !((strcmp(sub, "get-contexts") == 0 && nargs == 0) ||
          (strcmp(sub, "current-context") == 0 && nargs == 0 && !output) ||
          (strcmp(sub, "use-context") == 0 && nargs == 1 && !output))) {
        fputs(config_usage, err);
        return EXIT_USAGE;
    }

    char *path = paths_client_config();
    char *text;
    size_t len;
    struct context_file cf;
    int rc = load(path, &text, &len, &cf, err);
    if (rc == EXIT_OK) {
        if (strcmp(sub, "get-contexts") == 0) {
            rc = get_contexts(&local, &cf, names, out);
        } else if (strcmp(sub, "current-context") == 0) {
            struct strbuf clean = STRBUF_INIT;
            const char *name = in_effect(&local, &cf);
            utf8_sanitize(&clean, name, strlen(name), 0);
            fprintf(out, "%s\n", strbuf_str(&clean));
            strbuf_free(&clean);
        } else {
            rc = use_context(path, text ? text : "", len, &cf, argv[optind + 1], out, err);
        }
        context_file_free(&cf);
    }
    free(text);
    free(path);
    return rc;
}
