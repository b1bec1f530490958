/*
 * cmd_new: the verb `trainjob new [-f FILE] [--theme NAME] [--created-to
 * FILE]` — its options and the terminal check; the wizard itself is tui/'s
 * (tui_wizard_run, tui/wizard_app.c). trainjob top runs this verb (as a
 * child, with --created-to) to clone a job or make a new one.
 */
#include <getopt.h>
#include <unistd.h>

#include "cli/cli.h"
#include "tui/tui.h"

int cmd_new(const struct cli_globals *g, int argc, char **argv, FILE *out, FILE *err)
{
    static const struct option longopts[] = {
        {"file", required_argument, NULL, 'f'},
        {"theme", required_argument, NULL, 'T'},
        {"created-to", required_argument, NULL, 'C'},
        {"clone-of", required_argument, NULL, 'K'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct tui_wizard_opts o = {.target = cli_target(g)};
    int c;
    optind = 0;
    while ((c = getopt_long(argc, argv, "f:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'f':
            o.file = optarg;
            break;
        case 'T':
            o.theme = optarg;
            break;
        case 'K':
            o.clone_of = optarg;
            break;
        case 'C':
            o.created_to = optarg;
            break;
        case 'h':
            fputs("usage: trainjob new [-f FILE] [--theme NAME] [--created-to FILE] [--clone-of "
                  "JOB]\n"
                  "Opens the create-task wizard; with -f, prefilled from a job file. A\n"
                  "submitted job then opens in the live job view; with --created-to its\n"
                  "name is written to FILE instead (trainjob top runs the wizard so).\n"
                  "Each job being edited keeps a draft (new job, edit of FILE, clone of\n"
                  "JOB); `new` alone lists them with their times to resume or discard.\n",
                  out);
            return EXIT_OK;
        default:
            fprintf(err, "trainjob new: unknown option '%s'\n", argv[optind - 1]);
            return EXIT_USAGE;
        }
    }
    if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
        fputs("trainjob new: needs a terminal (use `trainjob submit -f FILE` in scripts)\n", err);
        return EXIT_USAGE;
    }
    return tui_wizard_run(&o, out, err);
}
