/*
 * cmd_completion: shell completion, the way kubectl (cobra) does it. The
 * scripts `trainjob completion bash|zsh|fish` prints are thin: on each Tab
 * they run the hidden verb
 *
 *   trainjob __complete WORD... CURRENT
 *
 * with the words typed so far, and offer the lines it prints. Everything
 * else is here, in one place for the three shells: which verb, which option
 * wants a value, and the candidates — verbs (from the verb table), flags,
 * job names and workers (from the backend of the context the command line
 * names), contexts (config.yaml), workspaces (the backend's catalog), themes.
 * A line ":files" asks the shell for file names instead.
 *
 * Names from a server or a file reach an interactive shell here, so only
 * words of ordinary characters are offered (completion_word_ok): a job named
 * `$(rm -rf ~)` or one holding an escape sequence is never printed.
 */
#include <dirent.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "api/backend.h"
#include "api/catalog.h"
#include "api/context.h"
#include "api/jobspec.h"
#include "api/jobstatus.h"
#include "api/paths.h"
#include "api/session.h"
#include "cli/cli.h"
#include "util/buildinfo.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#define WORD_MAX 253 /* a DNS name: longer is no name of ours */

/*
 * Each verb's own options (the global ones go with all) and, after '|', those
 * of them that take a value (the next word). One table for the three shells:
 * -f is a file for submit and a flag (follow) for logs and metrics, -w a
 * worker for logs and exec and a flag (watch) for get.
 */
static const struct {
    const char *verb;
    const char *flags;
    const char *valued;
} verb_flags[] = {
    {"new", "-f --file --theme --created-to --clone-of",
     "-f --file --theme --created-to --clone-of"},
    {"top", "--readonly --refresh --theme --job", "--refresh --theme --job"},
    {"validate", "-q --quiet --catalog", ""},
    {"render", "-o --output --target", "-o --output --target"},
    {"submit", "-f --filename", "-f --filename"},
    {"create", "-f --filename", "-f --filename"},
    {"apply", "-f --filename", "-f --filename"},
    {"get", "-o --output --state -w --watch --no-headers --sort-by --mine --user",
     "-o --output --state --sort-by --user"},
    {"describe", "", ""},
    {"logs",
     "-w --worker -a --all-workers -f --follow -n --tail -p --previous --timestamps --since",
     "-w --worker -n --tail --since"},
    {"metrics", "-o --output -f --follow --logdir --tag", "-o --output --logdir --tag"},
    {"exec", "-w --worker -i --stdin -t --tty -T --no-tty", "-w --worker"},
    {"stop", "", ""},
    {"start", "", ""},
    {"priority", "", ""},
    {"delete", "", ""},
    {"node", "", ""},
    {"engine", "", ""},
    {"config", "-o --output", "-o --output"},
};

/* The global options that take a value, for every verb. */
static const char global_valued[] = "--workspace --context --endpoint";

static const char global_flags[] = "--workspace --context --endpoint --help";

bool completion_word_ok(const char *w)
{
    size_t n = strlen(w);
    if (n == 0 || n > WORD_MAX)
        return false;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)w[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  strchr("-_.:@+=,/%", c) != NULL;
        if (!ok || (c == '-' && i == 0))
            return false; /* a leading '-' would read as an option */
    }
    return true;
}

struct offer {
    const char *prefix; /* the word being completed */
    FILE *out;
    size_t count;
};

/* Prints w when it is safe and starts with what was typed. */
static void offer(struct offer *o, const char *w)
{
    if (w && completion_word_ok(w) && strncmp(w, o->prefix, strlen(o->prefix)) == 0) {
        fprintf(o->out, "%s\n", w);
        o->count++;
    }
}

/* Offers each blank-separated word of list (our own: flags, sub-verbs); these may start with '-'.
 */
static void offer_list(struct offer *o, const char *list)
{
    size_t plen = strlen(o->prefix);
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, " ");
        if (n >= plen && strncmp(p, o->prefix, plen) == 0) {
            fprintf(o->out, "%.*s\n", (int)n, p);
            o->count++;
        }
        p += n;
        p += strspn(p, " ");
    }
}

/* Whether the blank-separated list has word w. */
static bool list_has(const char *list, const char *w)
{
    size_t n = strlen(w);
    for (const char *p = list; *p;) {
        size_t len = strcspn(p, " ");
        if (len == n && strncmp(p, w, n) == 0)
            return true;
        p += len;
        p += strspn(p, " ");
    }
    return false;
}

/* Whether opt takes a value after verb (NULL: before any verb). */
static bool takes_value(const char *verb, const char *opt)
{
    if (list_has(global_valued, opt))
        return true;
    for (size_t i = 0; verb && i < sizeof verb_flags / sizeof verb_flags[0]; i++)
        if (strcmp(verb_flags[i].verb, verb) == 0)
            return list_has(verb_flags[i].valued, opt);
    return false;
}

/* ---- candidates from outside -------------------------------------------- */

/*
 * A session for completion: messages go nowhere (a Tab prints no errors),
 * and the local engine is never started for it: a Tab spawns no daemon.
 */
static bool open_quiet(const struct cli_globals *g, struct session *s)
{
    FILE *devnull = fopen("/dev/null", "w");
    if (devnull == NULL)
        return false;
    bool ok = cli_session_open(g, s, devnull) == EXIT_OK;
    fclose(devnull);
    if (ok)
        s->b->revive = NULL;
    return ok;
}

static int offer_job(void *ctx, struct jobspec *job)
{
    offer(ctx, job->name);
    return 0;
}

static void offer_jobs(const struct cli_globals *g, struct offer *o)
{
    struct session s;
    if (open_quiet(g, &s)) {
        struct api_error e;
        (void)backend_list_each(s.b, NULL, true, offer_job, o, NULL, &e);
        session_close(&s);
    }
}

static void offer_workers(const struct cli_globals *g, const char *job, struct offer *o)
{
    struct session s;
    if (job != NULL && open_quiet(g, &s)) {
        struct worker_list wl = {NULL, 0};
        struct api_error e;
        if (backend_workers(s.b, job, &wl, &e) == BACKEND_OK) {
            for (size_t i = 0; i < wl.count; i++)
                offer(o, wl.workers[i].name);
            worker_list_free(&wl);
        }
        session_close(&s);
    }
}

static void offer_workspaces(const struct cli_globals *g, struct offer *o)
{
    struct cli_globals quiet = *g;
    quiet.workspace = NULL; /* the one being typed is not the one to ask with */
    struct session s;
    if (open_quiet(&quiet, &s)) {
        struct catalog cat;
        memset(&cat, 0, sizeof cat);
        struct api_error e;
        if (backend_catalog(s.b, &cat, &e) == BACKEND_OK) {
            for (size_t i = 0; i < cat.workspace_count; i++)
                offer(o, cat.workspaces[i].name);
        }
        catalog_free(&cat);
        session_close(&s);
    }
}

/*
 * A context name; where several may be given (`top --context a,b`), after
 * the names typed so far ("local," offers "local,lab"), each name once.
 */
static void offer_context(struct offer *o, const char *name, bool several)
{
    const char *comma = several ? strrchr(o->prefix, ',') : NULL;
    if (comma == NULL) {
        offer(o, name);
        return;
    }
    size_t typed = (size_t)(comma - o->prefix) + 1, n = strlen(name);
    for (const char *p = o->prefix; p < comma; p += strcspn(p, ",") + 1)
        if (strncmp(p, name, n) == 0 && (p[n] == ',' || p + n == comma))
            return; /* named already */
    struct strbuf sb = STRBUF_INIT;
    strbuf_addf(&sb, "%.*s%s", (int)typed, o->prefix, name);
    offer(o, strbuf_str(&sb));
    strbuf_free(&sb);
}

/* The contexts of config.yaml; several: top's, which takes "a,b" and "all" too. */
static void offer_contexts(struct offer *o, bool several)
{
    char **names;
    struct strbuf why = STRBUF_INIT;
    size_t n = context_file_names(NULL, &names, &why);
    for (size_t i = 0; i < n; i++) {
        offer_context(o, names[i], several);
        free(names[i]);
    }
    if (n == 0) /* a file that does not parse: the built-in one still works */
        offer_context(o, CONTEXT_LOCAL_NAME, several);
    else
        free(names);
    if (several)
        offer(o, "all");
    strbuf_free(&why);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Appends the NAME of each NAME.theme in dir. */
static void add_themes(const char *dir, char ***names, size_t *n)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len <= 6 || strcmp(e->d_name + len - 6, ".theme") != 0)
            continue;
        *names = xreallocarray(*names, *n + 1, sizeof **names);
        (*names)[(*n)++] = xstrndup(e->d_name, len - 6);
    }
    closedir(d);
}

/*
 * The schemes --theme takes: the built-in default, the user's
 * (<config>/themes) and the shipped ones (themes/ of each data directory,
 * as the theme loader searches them), each name once.
 */
static void offer_themes(struct offer *o)
{
    char **names = xcalloc(1, sizeof *names);
    size_t n = 0;
    names[n++] = xstrdup("default");
    char *config = paths_config_dir();
    char *user = xasprintf("%s/themes", config);
    add_themes(user, &names, &n);
    free(user);
    free(config);
    char **data = buildinfo_data_dirs();
    for (char **d = data; *d; d++) {
        char *dir = xasprintf("%s/themes", *d);
        add_themes(dir, &names, &n);
        free(dir);
    }
    buildinfo_strv_free(data);
    qsort(names, n, sizeof *names, cmp_str);
    for (size_t i = 0; i < n; i++)
        if (i == 0 || strcmp(names[i], names[i - 1]) != 0)
            offer(o, names[i]);
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

/* get's --sort-by fields: those of the kind typed (get workers: last-state...), every kind's
 * when none is, each once; the lists are cmd_get's own. */
static void offer_sort_fields(const char *kind, struct offer *o)
{
    const char *const *one = get_sort_fields(kind);
    if (one) {
        for (size_t i = 0; one[i]; i++)
            offer(o, one[i]);
        return;
    }
    static const char *const kinds[] = {"jobs", "workers", "events"};
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
        const char *const *f = get_sort_fields(kinds[k]);
        for (size_t i = 0; f[i]; i++) {
            bool seen = false;
            for (size_t e = 0; e < k && !seen; e++)
                for (const char *const *p = get_sort_fields(kinds[e]); *p && !seen; p++)
                    seen = strcmp(*p, f[i]) == 0;
            if (!seen)
                offer(o, f[i]);
        }
    }
}

/* ---- what the command line asks for ------------------------------------- */

/* The value of option opt (the word before the one being completed). */
static void offer_value(const struct cli_globals *g, const char *verb, const char *opt,
                        const char *first_arg, struct offer *o)
{
    if (strcmp(opt, "--context") == 0)
        offer_contexts(o, strcmp(verb, "top") == 0);
    else if (strcmp(opt, "--workspace") == 0)
        offer_workspaces(g, o);
    else if (strcmp(opt, "--theme") == 0)
        offer_themes(o);
    else if (strcmp(opt, "--job") == 0)
        offer_jobs(g, o);
    else if (strcmp(opt, "--state") == 0)
        for (size_t i = 1; i < job_state_names.count; i++)
            offer(o, job_state_names.names[i]);
    else if (strcmp(opt, "-o") == 0 || strcmp(opt, "--output") == 0)
        offer_list(o, strcmp(verb, "get") == 0       ? "wide json yaml name"
                      : strcmp(verb, "config") == 0  ? "name"
                      : strcmp(verb, "metrics") == 0 ? "table csv json"
                                                     : "yaml json");
    else if (strcmp(opt, "--sort-by") == 0)
        offer_sort_fields(first_arg, o);
    else if (strcmp(opt, "--logdir") == 0)
        fputs(":files\n", o->out);
    else if (strcmp(opt, "--target") == 0 && strcmp(verb, "render") == 0)
        offer_list(o, "slurm volcano pytorchjob");
    else if ((strcmp(opt, "-w") == 0 || strcmp(opt, "--worker") == 0) &&
             (strcmp(verb, "logs") == 0 || strcmp(verb, "exec") == 0))
        offer_workers(g, first_arg, o);
    else if (strcmp(opt, "-f") == 0 || strcmp(opt, "--file") == 0 || strcmp(opt, "--filename") == 0)
        fputs(":files\n", o->out);
}

/* A positional argument: args[0..nargs) are the verb's arguments typed before it. */
static void offer_argument(const struct cli_globals *g, const char *verb, char **args, size_t nargs,
                           struct offer *o)
{
    if (strcmp(verb, "get") == 0) {
        if (nargs == 0)
            offer_list(o, "jobs job workers events catalog");
        else if (nargs == 1 && strcmp(args[0], "jobs") != 0)
            offer_jobs(g, o);
    } else if (strcmp(verb, "logs") == 0 || strcmp(verb, "exec") == 0) {
        if (nargs == 0)
            offer_jobs(g, o);
    } else if (strcmp(verb, "stop") == 0 || strcmp(verb, "delete") == 0 ||
               strcmp(verb, "start") == 0) {
        offer_jobs(g, o);
    } else if (strcmp(verb, "describe") == 0 || strcmp(verb, "metrics") == 0 ||
               strcmp(verb, "priority") == 0) {
        if (strcmp(verb, "describe") == 0 && nargs == 0)
            offer_list(o, "job");
        else if (nargs == (strcmp(verb, "describe") == 0 ? 1u : 0u))
            offer_jobs(g, o);
        else if (strcmp(verb, "priority") == 0 && nargs == 1)
            offer_list(o, "NORMAL HIGH HIGHEST");
    } else if (strcmp(verb, "validate") == 0 || strcmp(verb, "render") == 0 ||
               strcmp(verb, "submit") == 0 || strcmp(verb, "create") == 0 ||
               strcmp(verb, "apply") == 0) {
        fputs(":files\n", o->out);
    } else if (strcmp(verb, "node") == 0) {
        if (nargs == 0)
            offer_list(o, "mark unmark");
        else if (nargs == 1)
            offer_jobs(g, o);
    } else if (strcmp(verb, "engine") == 0) {
        if (nargs == 0)
            offer_list(o, "status stop start");
    } else if (strcmp(verb, "config") == 0) {
        if (nargs == 0)
            offer_list(o, "get-contexts current-context use-context");
        else if (nargs == 1 && strcmp(args[0], "use-context") == 0)
            offer_contexts(o, false);
    } else if (strcmp(verb, "completion") == 0) {
        if (nargs == 0)
            offer_list(o, "bash zsh fish");
    }
}

/* `__complete WORD... CURRENT`: the candidates for CURRENT, one a line. */
int cmd_complete(const struct cli_globals *g, int argc, char **argv, FILE *out, FILE *err)
{
    if (argc < 2) {
        fputs("usage: trainjob __complete WORD... CURRENT\n", err);
        return EXIT_USAGE;
    }
    struct cli_globals cg = *g;
    const char *verb = NULL;
    char **args = xcalloc((size_t)argc, sizeof *args);
    size_t nargs = 0;
    int last = argc - 1;        /* the word being completed */
    const char *pending = NULL; /* an option whose value is the next word */
    for (int i = 1; i < last; i++) {
        const char *w = argv[i];
        if (pending) {
            if (strcmp(pending, "--context") == 0)
                cg.context = w;
            else if (strcmp(pending, "--endpoint") == 0)
                cg.endpoint = w;
            else if (strcmp(pending, "--workspace") == 0)
                cg.workspace = w;
            pending = NULL;
        } else if (w[0] == '-' && w[1] != '\0') {
            const char *eq = strchr(w, '=');
            if (eq && strncmp(w, "--context=", 10) == 0)
                cg.context = eq + 1;
            else if (eq && strncmp(w, "--endpoint=", 11) == 0)
                cg.endpoint = eq + 1;
            else if (eq && strncmp(w, "--workspace=", 12) == 0)
                cg.workspace = eq + 1;
            else if (eq == NULL && takes_value(verb, w))
                pending = w;
        } else if (verb == NULL) {
            verb = w;
        } else {
            args[nargs++] = argv[i];
        }
    }
    struct offer o = {argv[last], out, 0};
    if (pending) {
        offer_value(&cg, verb ? verb : "", pending, nargs ? args[0] : NULL, &o);
    } else if (argv[last][0] == '-') {
        for (size_t i = 0; verb && i < sizeof verb_flags / sizeof verb_flags[0]; i++)
            if (strcmp(verb_flags[i].verb, verb) == 0)
                offer_list(&o, verb_flags[i].flags);
        offer_list(&o, global_flags);
        if (verb == NULL)
            offer_list(&o, "--version");
    } else if (verb == NULL) {
        for (size_t i = 0; i < g->verb_count; i++)
            if (g->verbs[i].name[0] != '_')
                offer(&o, g->verbs[i].name);
    } else {
        offer_argument(&cg, verb, args, nargs, &o);
    }
    free(args);
    return EXIT_OK;
}

/* ---- the scripts -------------------------------------------------------- */

static const char bash_script[] =
    "# bash completion for trainjob (trainjob completion bash)\n"
    "_trainjob() {\n"
    "    local cur=${COMP_WORDS[COMP_CWORD]} IFS=$'\\n' out\n"
    "    out=$(\"${COMP_WORDS[0]}\" __complete \"${COMP_WORDS[@]:1:COMP_CWORD-1}\" \"$cur\" "
    "2>/dev/null) || return\n"
    "    if [[ $out == :files* ]]; then\n"
    "        COMPREPLY=($(compgen -f -- \"$cur\"))\n"
    "        compopt -o filenames 2>/dev/null\n"
    "    else\n"
    "        COMPREPLY=($out)\n"
    "    fi\n"
    "}\n"
    "complete -F _trainjob trainjob\n";

static const char zsh_script[] = "#compdef trainjob\n"
                                 "# zsh completion for trainjob (trainjob completion zsh)\n"
                                 "_trainjob() {\n"
                                 "    local -a lines\n"
                                 "    lines=(\"${(@f)$(${words[1]} __complete "
                                 "\"${(@)words[2,CURRENT-1]}\" \"${words[CURRENT]}\" "
                                 "2>/dev/null)}\")\n"
                                 "    if [[ ${lines[1]} == :files ]]; then\n"
                                 "        _files\n"
                                 "    elif (( ${#lines} )) && [[ -n ${lines[1]} ]]; then\n"
                                 "        compadd -Q -- \"${lines[@]}\"\n"
                                 "    fi\n"
                                 "}\n"
                                 "if [[ $zsh_eval_context[-1] == loadautofunc ]]; then\n"
                                 "    _trainjob \"$@\"\n"
                                 "else\n"
                                 "    compdef _trainjob trainjob\n"
                                 "fi\n";

static const char fish_script[] =
    "# fish completion for trainjob (trainjob completion fish)\n"
    "function __trainjob_complete\n"
    "    set -l words (commandline -opc)\n"
    "    set -l cur (commandline -ct)\n"
    "    set -l out ($words[1] __complete $words[2..-1] \"$cur\" 2>/dev/null)\n"
    "    if test \"$out[1]\" = :files\n"
    "        __fish_complete_path \"$cur\"\n"
    "    else\n"
    "        printf '%s\\n' $out\n"
    "    end\n"
    "end\n"
    "complete -c trainjob -f -a '(__trainjob_complete)'\n";

static const char completion_usage[] =
    "usage: trainjob completion bash|zsh|fish\n"
    "Prints the shell's completion script: verbs, options, job and worker names,\n"
    "contexts and workspaces (asked of the backend on each Tab). For example:\n"
    "  source <(trainjob completion bash)              # in ~/.bashrc\n"
    "  trainjob completion zsh > \"${fpath[1]}/_trainjob\"\n"
    "  trainjob completion fish > ~/.config/fish/completions/trainjob.fish\n"
    "`make install` puts them where each shell looks.\n";

/* `completion SHELL`: prints the script. */
int cmd_completion(const struct cli_globals *g, int argc, char **argv, FILE *out, FILE *err)
{
    if (argc == 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
        fputs(completion_usage, out);
        return EXIT_OK;
    }
    const char *script = NULL;
    if (argc == 2 && strcmp(argv[1], "bash") == 0)
        script = bash_script;
    else if (argc == 2 && strcmp(argv[1], "zsh") == 0)
        script = zsh_script;
    else if (argc == 2 && strcmp(argv[1], "fish") == 0)
        script = fish_script;
    if (script == NULL) {
        fputs(completion_usage, err);
        return EXIT_USAGE;
    }
    fputs(script, out);
    return EXIT_OK;
}
