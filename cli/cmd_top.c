/*
 * cmd_top: the verb `trainjob top` (and bare `trainjob` in a terminal) —
 * its options and the terminal check; the jobs view itself is tui/'s
 * (tui_top_run, tui/top.c). `--context a,b` (or `all`) goes through as it
 * was written: the jobs view opens each context named.
 */
#include <getopt.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#include "api/context.h"
#include "cli/cli.h"
#include "tui/tui.h"

static const char top_usage[] =
    "usage: trainjob top [--context NAME|A,B,…|all] [--workspace WS] [--readonly]\n"
    "                    [--refresh SECONDS] [--theme NAME] [--job NAME]\n"
    "The live jobs view; --job opens that job's screen as soon as it is seen.\n"
    "--context a,b (or all: every context of config.yaml) shows the jobs of\n"
    "several contexts in one view, with a CONTEXT column; an action on a row goes\n"
    "to that job's own context, and a context that cannot be reached says\n"
    "DISCONNECTED on its rows only while the others keep updating.\n";

/* The jobs view with its options read: in a terminal only, on g's target. */
static int top_run(const struct cli_globals *g, struct tui_top_opts *o, FILE *err)
{
    if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
        fputs("trainjob top: needs a terminal (use `trainjob get jobs` in scripts)\n", err);
        return EXIT_USAGE;
    }
    if (context_spec_several(g->context) && g->endpoint) {
        fprintf(err, "trainjob top: --endpoint names one server; --context %s names several\n",
                g->context);
        return EXIT_USAGE;
    }
    o->target = cli_target(g);
    return tui_top_run(o, err);
}

int cmd_top(const struct cli_globals *g, int argc, char **argv, FILE *out, FILE *err)
{
    struct cli_globals local = *g;
    struct tui_top_opts o = {.refresh_s = 5};
    enum { OPT_READONLY = 0x200, OPT_REFRESH, OPT_THEME, OPT_JOB };
    static const struct option opts[] = {
        {"workspace", required_argument, NULL, CLI_OPT_WORKSPACE},
        {"context", required_argument, NULL, CLI_OPT_CONTEXT},
        {"endpoint", required_argument, NULL, CLI_OPT_ENDPOINT},
        {"readonly", no_argument, NULL, OPT_READONLY},
        {"refresh", required_argument, NULL, OPT_REFRESH},
        {"theme", required_argument, NULL, OPT_THEME},
        {"job", required_argument, NULL, OPT_JOB},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case OPT_READONLY:
            o.readonly = true;
            break;
        case OPT_REFRESH: {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (*end || v < 1 || v > 3600) {
                fprintf(err, "trainjob top: --refresh: \"%s\" is not 1..3600 seconds\n", optarg);
                return EXIT_USAGE;
            }
            o.refresh_s = (int)v;
            break;
        }
        case OPT_THEME:
            o.theme = optarg;
            break;
        case OPT_JOB:
            o.job = optarg;
            break;
        case 'h':
            fputs(top_usage, out);
            return 0;
        default:
            if (cli_global_option(&local, c, optarg))
                break;
            fprintf(err, "trainjob top: unknown option %s\n%s", argv[optind - 1], top_usage);
            return EXIT_USAGE;
        }
    }
    if (optind < argc) {
        fprintf(err, "trainjob top: unexpected argument \"%s\"\n%s", argv[optind], top_usage);
        return EXIT_USAGE;
    }

    return top_run(&local, &o, err);
}

int cli_top_default(const struct cli_globals *g, FILE *err)
{
    struct tui_top_opts o = {.refresh_s = 5};
    return top_run(g, &o, err);
}
