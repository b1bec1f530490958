/*
 * output: how every verb of cli/ prints — sanitized text, tables, the
 * API's JSON or YAML, errors with the exit status they mean — and how a
 * verb parses its options. cli/cmd_*.c use it; it uses api/ and util/.
 */
#ifndef CLI_OUTPUT_H
#define CLI_OUTPUT_H

#include <getopt.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "api/backend.h"
#include "cli/cli.h"
#include "util/strbuf.h"

/* An unlimited restart budget (backoff_limit -1) in tables: ASCII, so scripts can match it. */
#define RESTARTS_UNLIMITED "inf"
#define NONE "-"

/* Appends text from outside (a server, a file) made safe for a terminal. */
void cli_clean(struct strbuf *sb, const char *s);
/*
 * Prints a failed call and gives its exit status: 1 when the server said no
 * (refused, not found, wrong state), 3 when it could not be reached.
 */
int cli_failed(FILE *err, enum backend_status st, const struct api_error *e, bool with_field);

/*
 * A table of sanitized cells, printed with columns as wide as their widest
 * cell. The cells live in one text (each NUL-ended) with an offset and a
 * width per cell: a row costs its bytes, not a malloc per cell (issue 14:
 * 50,000 rows were ~43 MiB as 400,000 small strings).
 */
struct cli_table {
    size_t cols;
    struct strbuf text; /* every cell's sanitized text, NUL-ended */
    size_t *at;         /* rows × cols: where each cell starts in text */
    uint32_t *cells_w;  /* rows × cols: each cell's width in terminal cells */
    size_t rows;
    size_t cap;    /* rows there is room for: doubled, so 50,000 rows are not 50,000 reallocs */
    size_t *width; /* after cli_table_print with keep: the widths, for rows that come later */
};

/* Adds a row of t->cols cells (NULL or "" print as "-"). */
void cli_table_row(struct cli_table *t, const char *const *cells);
/*
 * Prints (unless out is NULL) the rows from skip on, three spaces between
 * columns, the last unpadded; frees the rows. keep: the widths stay for
 * later rows (a watch), else everything is freed.
 */
void cli_table_print(struct cli_table *t, FILE *out, size_t skip, bool keep);
/*
 * Makes column col at least width cells wide from now on: a watch sizes a
 * column for every value it may take, so a later row does not shift it.
 */
void cli_table_least(struct cli_table *t, size_t col, size_t width);
/* The width of an enum's widest name but its unspecified one (0): the width of a column of them. */
size_t cli_enum_width(const struct enum_names *e);
void cli_table_free(struct cli_table *t);

/* "3m" since an RFC 3339 time, or "-". */
void cli_age(const char *since, char *buf, size_t size);

enum output {
    OUTPUT_TABLE,
    OUTPUT_WIDE,
    OUTPUT_JSON,
    OUTPUT_YAML,
    OUTPUT_NAME, /* KIND/NAME lines, as kubectl's -o name */
};

/* -o's value; -1 for an unknown one. */
int cli_output_from(const char *s);
/* Makes every string in tree safe for a terminal, in place (newlines and tabs kept). */
void cli_sanitize_tree(json_t *tree);
/*
 * Every time in tree (a string under "time" or a key ending in "_time") in
 * the one form times are printed in (time_shown, util/timefmt.h), in place.
 */
void cli_times_shown(json_t *tree);
/* Prints a tree (which it frees) as indented JSON or YAML, its times as cli_times_shown
 * makes them; sanitized on a terminal. */
void cli_print_tree(json_t *tree, enum output o, FILE *out);

/*
 * Parses a verb's options: its own (short, plus long rows before the global
 * ones) and the global options. Returns the option character to handle,
 * 0 when a global one was taken, or -1 at the end; '?' for a bad option.
 */
int cli_next_option(int argc, char **argv, const char *shortopts, const struct option *longopts,
                    struct cli_globals *g);
/* The message every verb gives for an option it does not take (or one missing its value). */
int cli_bad_option(const char *verb, const char *shortopts, char **argv, FILE *err);
/*
 * The options of a verb that takes none of its own: -h/--help (usage to out)
 * and the global ones into *g. Returns -1 to go on with the operands from
 * optind, else the exit status (EXIT_OK after help, EXIT_USAGE for a bad option).
 */
int cli_plain_options(const char *verb, const char *usage, int argc, char **argv,
                      struct cli_globals *g, FILE *out, FILE *err);

/* The width to wrap text at: the terminal's when out is one, else 80. */
int cli_text_width(FILE *out);

#endif
