/*
 * cli: the command line — global options, the verb table, help. main()
 * hands it argv; every verb writes to the streams it is given so tests can
 * run verbs in-process.
 *
 * Exit status, for every verb (util/exitstatus.h): 0 done, also when the
 * job already was in the state asked for; 1 refused (invalid input, not
 * found, wrong state); 2 usage or I/O errors; 3 the server cannot be reached.
 */
#ifndef CLI_CLI_H
#define CLI_CLI_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "api/session.h"
#include "util/exitstatus.h"

/* Options that every verb accepts before or after its name. */
struct cli_verb;

struct cli_globals {
    const char *workspace; /* --workspace: the default for files that name none */
    const char *context;   /* --context NAME: a context of ~/.config/trainjob/config.yaml */
    const char *endpoint;  /* --endpoint URL: talk to this server (never started on demand) */
    const struct cli_verb *verbs; /* the verb table, for a verb that lists verbs (completion) */
    size_t verb_count;
};

/* getopt_long codes of the global options, beyond any short option character. */
enum {
    CLI_OPT_WORKSPACE = 0x100,
    CLI_OPT_CONTEXT,
    CLI_OPT_ENDPOINT,
};

/* The global options as getopt_long rows, for a verb's own option table. */
// clang-format off
#define CLI_GLOBAL_OPTIONS \
    {"workspace", required_argument, NULL, CLI_OPT_WORKSPACE}, \
    {"context", required_argument, NULL, CLI_OPT_CONTEXT}, \
    {"endpoint", required_argument, NULL, CLI_OPT_ENDPOINT}
// clang-format on

/* Takes a global option getopt_long returned; false when c is not one (cli/globals.c). */
int cli_global_option(struct cli_globals *g, int c, const char *arg);
/* The server and workspace the global options name, for api/session and tui/tui.h. */
struct session_target cli_target(const struct cli_globals *g);
/* session_open on the global options' target; EXIT_USAGE (said on err) when it fails. */
int cli_session_open(const struct cli_globals *g, struct session *s, FILE *err);

struct cli_verb {
    const char *name;
    const char *args;    /* for the usage line */
    const char *summary; /* one line for --help */
    int (*run)(const struct cli_globals *g, int argc, char **argv, FILE *out, FILE *err);
};

/* Runs trainjob with argv; is_tty says whether stdin and stdout are terminals. */
int cli_main(int argc, char **argv, int is_tty, FILE *out, FILE *err);
void cli_usage(FILE *out);

/* The verbs over job files (cli/cmd_files.c). */
struct findings;
struct jobfile;
/*
 * How validate and submit check a job file: read once ("-": standard
 * input), checked against every rule of the form and, with catalog, the
 * catalog of the context's backend (every error at once). before_submit: a
 * file with errors of its own is said without asking any server. The
 * backend's session, opened at the first file that needs it, stays open
 * for the caller (submit creates the job through it).
 */
struct job_check;
struct job_check *job_check_new(const struct cli_globals *g, bool catalog, bool before_submit);
/*
 * Checks the file at path: jf (initialised by the caller) gets the job
 * read, fs its findings, printed to err as FILE:LINE:COL. Returns EXIT_OK,
 * EXIT_INVALID, EXIT_USAGE (unreadable, said), or the exit status of a
 * backend whose catalog could not be read (said).
 */
int job_check_file(struct job_check *jc, const char *path, struct jobfile *jf, struct findings *fs,
                   FILE *err);
/* The session the catalog was asked through; NULL before a file needed it. */
struct session *job_check_session(struct job_check *jc);
void job_check_free(struct job_check *jc);
int cmd_validate(const struct cli_globals *g, int argc, char **argv, FILE *out, FILE *err);
int cmd_render(const struct cli_globals *g, int argc, char **argv, FILE *out, FILE *err);

/* The live jobs view (cli/cmd_top.c; the screens are tui/'s). */
int cmd_top(const struct cli_globals *g, int argc, char **argv, FILE *out, FILE *err);
/* The bare `trainjob` in a terminal: the jobs view with top's defaults, no argv built. */
int cli_top_default(const struct cli_globals *g, FILE *err);
/* The create-task wizard (cli/cmd_new.c; the wizard is tui/'s). */
int cmd_new(const struct cli_globals *g, int argc, char **argv, FILE *out, FILE *err);

/* The verbs over a backend's jobs (cli/cmd_jobs.c). */
int cmd_submit(const struct cli_globals *g, int argc, char **argv, FILE *out, FILE *err);
int cmd_apply(const struct cli_globals *g, int argc, char **argv, FILE *out, FILE *err);
/* get (cli/cmd_get.c) and describe (cli/cmd_describe.c). */
int cmd_get(const struct cli_globals *g, int argc, char **argv, FILE *out, FILE *err);
/* get's --sort-by fields for kind ("jobs", "workers", "events", singular too), NULL-ended;
 * NULL for a kind that has none. */
const char *const *get_sort_fields(const char *kind);
int cmd_describe(const struct cli_globals *g, int argc, char **argv, FILE *out, FILE *err);
int cmd_logs(const struct cli_globals *g, int argc, char **argv, FILE *out, FILE *err);
/* A command inside a running worker (cli/cmd_exec.c). */
int cmd_exec(const struct cli_globals *g, int argc, char **argv, FILE *out, FILE *err);
int cmd_stop(const struct cli_globals *g, int argc, char **argv, FILE *out, FILE *err);
int cmd_start(const struct cli_globals *g, int argc, char **argv, FILE *out, FILE *err);
int cmd_priority(const struct cli_globals *g, int argc, char **argv, FILE *out, FILE *err);
int cmd_delete(const struct cli_globals *g, int argc, char **argv, FILE *out, FILE *err);
/* Marks a node unschedulable for a job, or lifts the mark (cli/cmd_node.c). */
int cmd_node(const struct cli_globals *g, int argc, char **argv, FILE *out, FILE *err);
/* The local engine: status, stop, start (cli/cmd_engine.c). */
int cmd_engine(const struct cli_globals *g, int argc, char **argv, FILE *out, FILE *err);
/* TensorBoard scalars of a job or a log directory (cli/cmd_metrics.c). */
int cmd_metrics(const struct cli_globals *g, int argc, char **argv, FILE *out, FILE *err);

/* The contexts of config.yaml (cli/cmd_config.c). */
int cmd_config(const struct cli_globals *g, int argc, char **argv, FILE *out, FILE *err);

/* Shell completion: the scripts and the hidden verb they run (cli/cmd_completion.c). */
int cmd_completion(const struct cli_globals *g, int argc, char **argv, FILE *out, FILE *err);
int cmd_complete(const struct cli_globals *g, int argc, char **argv, FILE *out, FILE *err);
/* Whether a name from outside may be offered to a shell: ordinary characters, no leading '-'. */
bool completion_word_ok(const char *w);

#endif
