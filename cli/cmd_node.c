/*
 * cmd_node: `trainjob node mark|unmark JOB NODE` — a person keeps one job
 * off a node (as a fault rule's mark_node_unschedulable does) or lifts that
 * mark so the job may be placed there again. The local engine keeps these
 * marks; other backends say they have none. Exit 0 when the job has (or no
 * longer has) the mark, 1 when the server refuses (no such job or node, a
 * node not marked), 2 usage, 3 no server.
 */
#include <getopt.h>
#include <string.h>

#include "api/backend.h"
#include "api/session.h"
#include "cli/cli.h"
#include "cli/output.h"
#include "util/exitstatus.h"
#include "util/strbuf.h"

static const char node_usage[] =
    "usage: trainjob node mark|unmark JOB NODE\n"
    "mark keeps job JOB off node NODE from its next placement on (a restart, a\n"
    "start after a stop); workers running there now stay. unmark lifts the mark,\n"
    "one a person or a fault rule (mark_node_unschedulable) put there, so a job\n"
    "that waits with \"node NODE marked unschedulable for this job\" may run there\n"
    "again. The job screen does the same with m and u on the workers pane.\n"
    "Exit 0 done; 1 refused (no such job or node, NODE not marked); 3 no server.\n";

int cmd_node(const struct cli_globals *g, int argc, char **argv, FILE *out, FILE *err)
{
    struct cli_globals local = *g;
    int rc = cli_plain_options("node", node_usage, argc, argv, &local, out, err);
    if (rc >= 0)
        return rc;
    if (argc - optind != 3 ||
        (strcmp(argv[optind], "mark") != 0 && strcmp(argv[optind], "unmark") != 0)) {
        fputs(node_usage, err);
        return EXIT_USAGE;
    }
    bool unmark = strcmp(argv[optind], "unmark") == 0;
    const char *name = argv[optind + 1], *node = argv[optind + 2];
    struct session s;
    rc = cli_session_open(&local, &s, err);
    if (rc != EXIT_OK)
        return rc;
    struct jobspec job;
    struct api_error e;
    enum backend_status st = backend_mark_node(s.b, name, node, unmark, &job, &e);
    if (st != BACKEND_OK) {
        rc = cli_failed(err, st, &e, true);
    } else {
        struct strbuf line = STRBUF_INIT;
        strbuf_adds(&line, "node ");
        cli_clean(&line, node);
        strbuf_adds(&line, unmark ? " unmarked for job " : " marked unschedulable for job ");
        cli_clean(&line, job.name ? job.name : name);
        fprintf(out, "%s\n", strbuf_str(&line));
        strbuf_free(&line);
        jobspec_free(&job);
    }
    session_close(&s);
    return rc;
}
