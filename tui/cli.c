/*
 * cli: parses the global options, finds the verb and runs it. Verbs are a
 * table; adding one is a row here and a function in a cmd_*.c file.
 */
#include "tui/cli.h"

#include <getopt.h>
#include <string.h>

#ifndef TRAINJOB_VERSION
#define TRAINJOB_VERSION "0.1"
#endif

static const struct cli_verb verbs[] = {
    {"validate", "FILE...", "check job files against every rule of the form", cmd_validate},
    {"render", "FILE [-o yaml|json]", "print a job as it will be submitted, defaults filled",
     cmd_render},
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
        char head[64];
        snprintf(head, sizeof head, "%s %s", verbs[i].name, verbs[i].args);
        fprintf(out, "  %-30s %s\n", head, verbs[i].summary);
    }
    fputs("\n"
          "Options:\n"
          "  --workspace WS                 workspace for job files that name none\n"
          "  -h, --help                     show this help\n"
          "  --version                      show the version\n"
          "\n"
          "Job files are the SenseCore ACP TrainingJob object written as YAML or JSON;\n"
          "see examples/ and README.md. Exit status: 0 ok, 1 invalid, 2 usage or I/O error.\n",
          out);
}

int cli_main(int argc, char **argv, int is_tty, FILE *out, FILE *err)
{
    static const struct option longopts[] = {
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {"workspace", required_argument, NULL, 'w'},
        {NULL, 0, NULL, 0},
    };
    struct cli_globals g = {NULL};
    int c;

    optind = 0; /* full re-initialisation, so tests can call us repeatedly */
    opterr = 0;
    while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
        switch (c) {
        case 'h':
            cli_usage(out);
            return EXIT_OK;
        case 'V':
            fprintf(out, "trainjob %s\n", TRAINJOB_VERSION);
            return EXIT_OK;
        case 'w':
            g.workspace = optarg;
            break;
        default:
            fprintf(err, "trainjob: unknown option '%s'\n", argv[optind - 1]);
            fputs("Run 'trainjob --help' for the commands.\n", err);
            return EXIT_USAGE;
        }
    }
    if (optind >= argc) {
        /* The full-screen views come with the TUI; until then, and always
         * without a terminal, the bare command explains itself. */
        (void)is_tty;
        cli_usage(out);
        return EXIT_OK;
    }
    const char *name = argv[optind];
    for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++) {
        if (strcmp(verbs[i].name, name) == 0)
            return verbs[i].run(&g, argc - optind, argv + optind, out, err);
    }
    fprintf(err, "trainjob: unknown command '%s'\n", name);
    fputs("Run 'trainjob --help' for the commands.\n", err);
    return EXIT_USAGE;
}
