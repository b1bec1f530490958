/*
 * cmd_engine: `trainjob engine status|stop|start` — the local engine
 * (trainjobd) the default context starts on demand. stop asks the engine,
 * as its own user, to stop (anyone else is refused) and waits until it has;
 * an engine stopped so is not started on demand again (api/autostart) until
 * `engine start`. status says whether it runs, and who stopped it when not.
 */
#include <getopt.h>
#include <jansson.h>
#include <string.h>
#include <time.h>

#include "api/autostart.h"
#include "api/backend.h"
#include "api/session.h"
#include "cli/cli.h"
#include "cli/output.h"
#include "util/exitstatus.h"
#include "util/procstat.h"
#include "util/strbuf.h"

static const char engine_usage[] =
    "usage: trainjob engine status|stop|start\n"
    "The local engine (trainjobd) of the context, which trainjob starts on demand.\n"
    "status  whether it runs (its user, pid, state directory), else who stopped it\n"
    "stop    stops it, as its user (no one else may), and waits until it has; it\n"
    "        is then not started on demand (nor by an open `trainjob top`) until\n"
    "start   starts it again (the default context's engine only).\n"
    "Workers keep running while the engine is down. Exit 0 done (also when it\n"
    "already was); 1 refused; 3 not running (status) or cannot be reached.\n";

/* Whether endpoint is a Unix socket, so the engine runs on this machine. */
static bool is_unix_endpoint(const char *endpoint)
{
    return endpoint != NULL && strncmp(endpoint, "http+unix://", strlen("http+unix://")) == 0;
}

/* Prints "trainjobd running: user U, pid P, state S" from the engine's answer. */
static void say_running(FILE *out, const json_t *about)
{
    struct strbuf line = STRBUF_INIT;
    strbuf_adds(&line, "trainjobd running: user ");
    cli_clean(&line, json_string_value(json_object_get(about, "user")));
    strbuf_addf(&line, ", pid %lld, state ",
                (long long)json_integer_value(json_object_get(about, "pid")));
    cli_clean(&line, json_string_value(json_object_get(about, "state_dir")));
    fprintf(out, "%s\n", strbuf_str(&line));
    strbuf_free(&line);
}

/* Says why no engine answers: stopped on purpose (local) or not running. */
static int say_down(const struct session *s, const struct api_error *e, FILE *out, FILE *err)
{
    struct strbuf why = STRBUF_INIT;
    int rc = EXIT_UNREACHABLE;
    if (s->rc.may_autostart && autostart_stopped(&why)) {
        fprintf(out, "trainjobd stopped: %s\n", strbuf_str(&why));
    } else if (s->rc.may_autostart) {
        fputs("trainjobd not running (trainjob starts it on demand)\n", out);
    } else {
        rc = cli_failed(err, BACKEND_UNREACHABLE, e, false);
    }
    strbuf_free(&why);
    return rc;
}

/*
 * Waits (at most 15 s) until the engine no longer answers and, when it is
 * on this machine (a Unix socket), until its process has ended too: it
 * closes its socket before it lets its store and cgroups go, and a
 * `trainjob engine start` right after must not find the old one still
 * holding the state directory. The pid is told from a later process of
 * the same number by its start time.
 */
static bool wait_gone(struct backend *b, bool local, pid_t pid)
{
    struct procstat first;
    bool watch_pid = local && pid > 0 && procstat_read(pid, &first) == 0;
    bool answers = true;
    struct timespec start, now_t;
    clock_gettime(CLOCK_MONOTONIC, &start);
    do {
        if (answers) {
            json_t *about = NULL;
            struct api_error e;
            enum backend_status st = backend_engine(b, NULL, &about, &e);
            json_decref(about);
            answers = st != BACKEND_UNREACHABLE;
        }
        if (!answers) {
            struct procstat now;
            if (!watch_pid || procstat_read(pid, &now) != 0 || now.state == 'Z' ||
                now.state == 'X' || now.start_ticks != first.start_ticks)
                return true;
        }
        nanosleep(&(struct timespec){0, answers ? 100000000 : 10000000}, NULL);
        clock_gettime(CLOCK_MONOTONIC, &now_t);
    } while (now_t.tv_sec - start.tv_sec < 15);
    return false;
}

int cmd_engine(const struct cli_globals *g, int argc, char **argv, FILE *out, FILE *err)
{
    struct cli_globals local = *g;
    int rc = cli_plain_options("engine", engine_usage, argc, argv, &local, out, err);
    if (rc >= 0)
        return rc;
    const char *verb = optind < argc ? argv[optind] : "";
    if (argc - optind != 1 ||
        (strcmp(verb, "status") != 0 && strcmp(verb, "stop") != 0 && strcmp(verb, "start") != 0)) {
        fputs(engine_usage, err);
        return EXIT_USAGE;
    }
    struct session s;
    rc = cli_session_open(&local, &s, err);
    if (rc != EXIT_OK)
        return rc;
    json_t *about = NULL;
    struct api_error e;
    enum backend_status st = backend_engine(s.b, NULL, &about, &e);
    if (st == BACKEND_OK) {
        if (strcmp(verb, "stop") == 0) {
            json_t *reply = NULL;
            st = backend_engine(s.b, "stop", &reply, &e);
            if (st != BACKEND_OK) {
                rc = cli_failed(err, st, &e, false);
            } else if (!wait_gone(s.b, is_unix_endpoint(s.rc.ctx.endpoint),
                                  (pid_t)json_integer_value(json_object_get(about, "pid")))) {
                fputs("trainjob engine: asked to stop, trainjobd has not ended after 15 s\n", err);
                rc = EXIT_INVALID;
            } else {
                struct strbuf line = STRBUF_INIT;
                strbuf_adds(&line, "trainjobd stopped by ");
                cli_clean(&line, json_string_value(json_object_get(reply, "stopped_by")));
                strbuf_adds(&line, "; workers keep running; `trainjob engine start` starts it");
                fprintf(out, "%s\n", strbuf_str(&line));
                strbuf_free(&line);
            }
            json_decref(reply);
        } else {
            say_running(out, about);
        }
    } else if (st != BACKEND_UNREACHABLE) {
        rc = cli_failed(err, st, &e, false);
    } else if (strcmp(verb, "stop") == 0) {
        fputs("trainjobd is not running\n", out);
    } else if (strcmp(verb, "status") == 0) {
        rc = say_down(&s, &e, out, err);
    } else if (!s.rc.may_autostart || s.rc.engine_socket == NULL) {
        fputs("trainjob engine start: only the default context's local engine is started here;\n"
              "start the engine this context names where it runs\n",
              err);
        rc = EXIT_INVALID;
    } else {
        struct strbuf why = STRBUF_INIT;
        if (autostart_engine(s.rc.engine_socket, &why) != 0) {
            fprintf(err, "trainjob engine start: %s\n", strbuf_str(&why));
            rc = EXIT_UNREACHABLE;
        } else {
            json_decref(about);
            about = NULL;
            if (backend_engine(s.b, NULL, &about, &e) == BACKEND_OK)
                say_running(out, about);
            else
                fputs("trainjobd started\n", out);
        }
        strbuf_free(&why);
    }
    json_decref(about);
    session_close(&s);
    return rc;
}
