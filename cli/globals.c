/*
 * globals: the options every verb takes (--workspace, --context,
 * --endpoint) and the session they open. The verbs (cli/cmd_*.c) and the
 * verb table (cli/cli.c) use it; it uses api/session only.
 */
#include "cli/cli.h"

int cli_global_option(struct cli_globals *g, int c, const char *arg)
{
    switch (c) {
    case CLI_OPT_WORKSPACE:
        g->workspace = arg;
        return 1;
    case CLI_OPT_CONTEXT:
        g->context = arg;
        return 1;
    case CLI_OPT_ENDPOINT:
        g->endpoint = arg;
        return 1;
    }
    return 0;
}

struct session_target cli_target(const struct cli_globals *g)
{
    return (struct session_target){g->workspace, g->context, g->endpoint};
}

int cli_session_open(const struct cli_globals *g, struct session *s, FILE *err)
{
    struct session_target t = cli_target(g);
    return session_open(&t, s, err) == 0 ? EXIT_OK : EXIT_USAGE;
}
