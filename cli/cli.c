/*
 * cli: parses the global options, finds the verb and runs it. Verbs are a
 * table; adding one is a row here and a function in a cmd_*.c file.
 */
#include "cli/cli.h"

#include <getopt.h>
#include <string.h>

#include "cli/output.h"
#include "util/buildinfo.h"
#include "util/fuzzy.h"
#include "util/strbuf.h"

static const struct cli_verb verbs[] = {
    {"new", "[-f FILE]", "open the create-task wizard (prefilled from a job file)", cmd_new},
    {"top", "[--readonly] [--refresh S] [--theme T]",
     "the live jobs view: jobs, workers, logs, events, actions", cmd_top},
    {"validate", "FILE...", "check job files against every rule of the form", cmd_validate},
    {"render", "FILE [-o yaml|json] [--target slurm]",
     "print a job as it will be submitted, defaults filled", cmd_render},
    {"submit", "-f FILE", "validate a job file, then create the job", cmd_submit},
    {"create", "-f FILE", "the same as submit (as kubectl users type it)", cmd_submit},
    {"apply", "-f FILE", "submit; for a job that exists, say what would change (no update)",
     cmd_apply},
    {"get", "KIND [NAME] [-w]", "jobs, job NAME, workers|events NAME, catalog", cmd_get},
    {"describe", "job NAME", "one page: a job's spec, history, workers, events", cmd_describe},
    {"logs", "NAME [-w W|-a] [-f] [-p]",
     "print or follow a worker's log (-a: all, -p: previous attempt)", cmd_logs},
    {"metrics", "NAME [-o FMT] [-f]", "a job's TensorBoard scalars (--logdir DIR: any directory's)",
     cmd_metrics},
    {"exec", "NAME [-w W] [-- CMD]",
     "run a command (default: a shell) inside a running worker", cmd_exec},
    {"stop", "NAME...", "stop jobs (SUSPENDED; they can be started again)", cmd_stop},
    {"start", "NAME...", "start stopped jobs again", cmd_start},
    {"priority", "NAME LEVEL", "a job's new priority: NORMAL, HIGH or HIGHEST", cmd_priority},
    {"delete", "NAME...", "delete jobs, stopping their workers first", cmd_delete},
    {"node", "mark|unmark JOB NODE", "keep a job off a node, or lift that mark", cmd_node},
    {"engine", "status|stop|start", "the local engine: is it running, stop it, start it",
     cmd_engine},
    {"config", "SUBCOMMAND [NAME]", "contexts: get-contexts, current-context, use-context NAME",
     cmd_config},
    {"completion", "bash|zsh|fish", "print the shell completion script", cmd_completion},
    {"__complete", "WORD... CURRENT", "(hidden) completion candidates, for the scripts",
     cmd_complete},
};

void cli_usage(FILE *out)
{
    fputs("usage: trainjob [OPTIONS] COMMAND [ARGS]\n"
          "\n"
          "Create distributed training jobs in a full-screen form and follow them live.\n"
          "\n"
          "Commands:\n",
          out);
    for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++) {
        if (verbs[i].name[0] == '_')
            continue; /* for scripts, not people */
        char head[64];
        snprintf(head, sizeof head, "%s %s", verbs[i].name, verbs[i].args);
        fprintf(out, "  %-30s %s\n", head, verbs[i].summary);
    }
    fputs("\n"
          "Options (before or after the command):\n"
          "  --workspace WS                 workspace to use (and for job files that name none)\n"
          "  --context NAME                 a context of ~/.config/trainjob/config.yaml\n"
          "                                 ($TRAINJOB_CONFIG names another file)\n"
          "  --endpoint URL                 the server: http+unix:///PATH, https://HOST[:PORT]\n"
          "                                 (default: $TRAINJOB_ENDPOINT, the context's, or the\n"
          "                                 local engine, trainjobd, started when needed)\n"
          "  -h, --help                     show this help\n"
          "  --version                      show the version\n"
          "\n"
          "Job files are the SenseCore ACP TrainingJob object written as YAML or JSON;\n"
          "see trainjob-job(5) and examples/.\n"
          "\n"
          "Exit status, for every command:\n"
          "  0  done: the job is in the state asked for, also when it already was\n"
          "     (stop of a stopped job, start of a running one), as kubectl does\n"
          "  1  refused: an invalid job file, or the server said no (not found,\n"
          "     a state the job cannot leave that way, no rights)\n"
          "  2  usage: a bad option or argument, an unreadable file or config\n"
          "  3  the server cannot be reached (or the connection broke)\n",
          out);
}

int cli_main(int argc, char **argv, int is_tty, FILE *out, FILE *err)
{
    static const struct option longopts[] = {
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        CLI_GLOBAL_OPTIONS,
        {NULL, 0, NULL, 0},
    };
    struct cli_globals g = {NULL, NULL, NULL, verbs, sizeof verbs / sizeof verbs[0]};
    int c;

    optind = 0; /* full re-initialisation, so tests can call us repeatedly */
    opterr = 0;
    while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
        switch (c) {
        case 'h':
            cli_usage(out);
            return EXIT_OK;
        case 'V':
            fprintf(out, "trainjob %s\n", buildinfo_version());
            return EXIT_OK;
        default:
            if (cli_global_option(&g, c, optarg))
                break;
            fprintf(err, "trainjob: unknown option '%s'\n", argv[optind - 1]);
            fputs("Run 'trainjob --help' for the commands.\n", err);
            return EXIT_USAGE;
        }
    }
    if (optind >= argc) {
        /* In a terminal the bare command opens the jobs view (`n` there
         * opens the wizard); without one it explains itself instead of
         * starting curses. */
        if (is_tty)
            return cli_top_default(&g, err);
        cli_usage(out);
        return EXIT_OK;
    }
    const char *name = argv[optind];
    for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++) {
        if (strcmp(verbs[i].name, name) == 0)
            return verbs[i].run(&g, argc - optind, argv + optind, out, err);
    }
    const char *names[sizeof verbs / sizeof verbs[0]];
    size_t n = 0;
    for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
        if (verbs[i].name[0] != '_')
            names[n++] = verbs[i].name;
    const char *near = fuzzy_nearest(name, names, n);
    struct strbuf line = STRBUF_INIT;
    strbuf_adds(&line, "trainjob: unknown command '");
    cli_clean(&line, name);
    strbuf_adds(&line, "'");
    if (near)
        strbuf_addf(&line, " (did you mean %s?)", near);
    fprintf(err, "%s\n", strbuf_str(&line));
    strbuf_free(&line);
    fputs("Run 'trainjob --help' for the commands.\n", err);
    return EXIT_USAGE;
}
