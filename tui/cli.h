/*
 * cli: the command line — global options, the verb table, help. main()
 * hands it argv; every verb writes to the streams it is given so tests can
 * run verbs in-process.
 *
 * Exit status, for every verb: 0 success, 1 the input is invalid (or the
 * operation failed), 2 usage or I/O errors.
 */
#ifndef TUI_CLI_H
#define TUI_CLI_H

#include <stdio.h>

enum {
    EXIT_OK = 0,
    EXIT_INVALID = 1,
    EXIT_USAGE = 2,
};

/* Options that every verb accepts before or after its name. */
struct cli_globals {
    const char *workspace; /* --workspace: the default for files that name none */
};

struct cli_verb {
    const char *name;
    const char *args;    /* for the usage line */
    const char *summary; /* one line for --help */
    int (*run)(const struct cli_globals *g, int argc, char **argv, FILE *out, FILE *err);
};

/* Runs trainjob with argv; is_tty says whether stdin and stdout are terminals. */
int cli_main(int argc, char **argv, int is_tty, FILE *out, FILE *err);
void cli_usage(FILE *out);

/* The verbs over job files (tui/cmd_files.c). */
int cmd_validate(const struct cli_globals *g, int argc, char **argv, FILE *out, FILE *err);
int cmd_render(const struct cli_globals *g, int argc, char **argv, FILE *out, FILE *err);

#endif
