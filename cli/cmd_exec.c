/*
 * cmd_exec: `trainjob exec JOB [-w WORKER] [-i] [-t] [-- CMD ARGS…]`, a
 * command inside a running worker, as `kubectl exec` / `docker exec`:
 * the worker's shell when no command is given, a terminal (-t) by default
 * when stdin is one, and the command's exit status as ours. Everything
 * else is the backend's (api/backend.h backend_exec): trainjobd enters the
 * worker's sandbox, Slurm runs srun --overlap on its node, ACP says why
 * it cannot.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "api/backend.h"
#include "api/exec.h"
#include "api/session.h"
#include "cli/cli.h"
#include "cli/output.h"
#include "util/exitstatus.h"

int cmd_exec(const struct cli_globals *g, int argc, char **argv, FILE *out, FILE *err)
{
    static const char usage[] =
        "usage: trainjob exec JOB [-w WORKER] [-i] [-t|-T] [-- CMD [ARG]...]\n"
        "Runs CMD inside a running worker of JOB (default: its first running one,\n"
        "master-0 or worker-0), as kubectl exec does: on trainjobd in the worker's\n"
        "sandbox, cgroup and user; on Slurm as an overlapping step on its node (srun\n"
        "--overlap). Without CMD: the worker's shell (bash, else /bin/sh).\n"
        "  -w, --worker W   the worker to enter\n"
        "  -i, --stdin      pass stdin to CMD (without -t stdin is /dev/null)\n"
        "  -t, --tty        a terminal for CMD (the default when stdin is one)\n"
        "  -T, --no-tty     no terminal, even when stdin is one\n"
        "Exit status: CMD's; 1 when the worker cannot be entered (not running,\n"
        "not your job, the backend has no exec), 2 usage, 3 no server.\n";
    static const struct option longopts[] = {
        {"help", no_argument, NULL, 'h'},
        {"worker", required_argument, NULL, 'w'},
        {"stdin", no_argument, NULL, 'i'},
        {"tty", no_argument, NULL, 't'},
        {"no-tty", no_argument, NULL, 'T'},
        CLI_GLOBAL_OPTIONS,
        {NULL, 0, NULL, 0},
    };
    struct cli_globals local = *g;
    struct exec_request rq = {0};
    int tty = -1;
    int c;
    optind = 0;
    opterr = 0;
    while ((c = cli_next_option(argc, argv, "+hw:itT", longopts, &local)) != -1) {
        switch (c) {
        case 0:
            break;
        case 'h':
            fputs(usage, out);
            return EXIT_OK;
        case 'w':
            rq.worker = optarg;
            break;
        case 'i':
            rq.stdin_open = true;
            break;
        case 't':
            tty = 1;
            break;
        case 'T':
            tty = 0;
            break;
        default:
            return cli_bad_option("exec", "hw:itT", argv, err);
        }
    }
    /* JOB, then options again (getopt stops at the first word with "+"), then -- CMD. */
    if (optind >= argc || strcmp(argv[optind], "--") == 0) {
        fputs(usage, err);
        return EXIT_USAGE;
    }
    const char *job = argv[optind++];
    while (optind < argc && strcmp(argv[optind], "--") != 0) {
        int before = optind;
        c = cli_next_option(argc, argv, "+hw:itT", longopts, &local);
        if (c == -1 && optind == before) {
            fprintf(err,
                    "trainjob exec: '%s': put the command after --, as in "
                    "trainjob exec %s -- %s\n",
                    argv[optind], job, argv[optind]);
            return EXIT_USAGE;
        }
        if (c == 'w')
            rq.worker = optarg;
        else if (c == 'i')
            rq.stdin_open = true;
        else if (c == 't')
            tty = 1;
        else if (c == 'T')
            tty = 0;
        else if (c == 'h') {
            fputs(usage, out);
            return EXIT_OK;
        } else if (c != 0 && c != -1)
            return cli_bad_option("exec", "hw:itT", argv, err);
        if (c == -1)
            break;
    }
    if (optind < argc && strcmp(argv[optind], "--") == 0)
        optind++;
    rq.argv = (const char *const *)argv + optind;
    rq.argc = (size_t)(argc - optind);
    rq.tty = tty == -1 ? isatty(STDIN_FILENO) && isatty(STDOUT_FILENO) : tty == 1;
    if (rq.tty)
        rq.stdin_open = true;
    struct session s;
    int rc = cli_session_open(&local, &s, err);
    if (rc != EXIT_OK)
        return rc;
    fflush(out);
    fflush(err);
    struct api_error e;
    int code = 0;
    enum backend_status st = backend_exec(s.b, job, &rq, &code, &e);
    session_close(&s);
    if (st != BACKEND_OK)
        return cli_failed(err, st, &e, false);
    return code;
}
