/*
 * cmd_files: the verbs that work on job files —
 * `validate` (every form rule, findings as FILE:LINE:COL: error|warning:
 * FIELD: MESSAGE; with --catalog or --context also the backend's catalog)
 * and `render` (the job as it will be submitted) — and the check submit
 * makes first (struct job_check: the file read once, checked offline, then
 * against the catalog of the backend submit then sends it to).
 */
#include <getopt.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/acp.h"
#include "api/acp_catalog.h"
#include "api/apierror.h"
#include "api/backend.h"
#include "api/catalog.h"
#include "api/context.h"
#include "api/finding.h"
#include "api/jobfile.h"
#include "api/jobspec_defaults.h"
#include "api/k8s_pytorchjob.h"
#include "api/k8s_volcano.h"
#include "api/session.h"
#include "api/slurm.h"
#include "api/validate.h"
#include "cli/cli.h"
#include "cli/output.h"
#include "util/strbuf.h"
#include "util/utf8.h"
#include "util/xalloc.h"

/* Is `ancestor` the path itself or a path above it ("a.b" above "a.b[0].c")? */
static bool path_covers(const char *ancestor, const char *path)
{
    size_t n = strlen(ancestor);
    if (strncmp(ancestor, path, n) != 0)
        return false;
    return n == 0 || path[n] == '\0' || path[n] == '.' || path[n] == '[';
}

/* A copy of f at the end of fs, with its position. */
static void add_copy(struct findings *fs, const struct finding *f)
{
    findings_add(fs, f->severity, f->path, "%s", f->message);
    fs->items[fs->count - 1].line = f->line;
    fs->items[fs->count - 1].col = f->col;
    fs->items[fs->count - 1].offset = f->offset;
}

/*
 * Adds validation findings, leaving out those on fields the decoder already
 * rejected (a wrong type would otherwise also read as "required").
 */
static void merge_validation(struct findings *fs, struct findings *checks)
{
    size_t decoded = fs->count;
    for (size_t i = 0; i < checks->count; i++) {
        struct finding *f = &checks->items[i];
        bool covered = false;
        for (size_t j = 0; j < decoded && !covered; j++)
            covered = fs->items[j].severity == SEVERITY_ERROR && fs->items[j].path[0] != '\0' &&
                      path_covers(fs->items[j].path, f->path);
        if (!covered)
            add_copy(fs, f);
    }
    findings_free(checks);
}

/* Prints one finding the way compilers do, sanitized: names and values in messages are the user's
 * text. */
static void print_finding(FILE *err, const char *file, const struct finding *f)
{
    struct strbuf sb = STRBUF_INIT;
    strbuf_adds(&sb, file);
    if (f->line > 0)
        strbuf_addf(&sb, ":%d:%d", f->line, f->col);
    strbuf_addf(&sb, ": %s: ", severity_name(f->severity));
    if (f->path[0] != '\0')
        strbuf_addf(&sb, "%s: ", f->path);
    strbuf_adds(&sb, f->message);
    struct strbuf clean = STRBUF_INIT;
    utf8_sanitize(&clean, sb.buf, sb.len, 0);
    fprintf(err, "%s\n", strbuf_str(&clean));
    strbuf_free(&clean);
    strbuf_free(&sb);
}

/*
 * The context in effect for a file verb, read from the configuration
 * without asking any server: false when none resolves (the options alone
 * then say what they can).
 */
static bool file_context(const struct cli_globals *g, struct resolved_context *rc)
{
    struct context_request req = {NULL, g->context, g->endpoint, getenv("TRAINJOB_ENDPOINT"),
                                  g->workspace};
    struct findings fs = FINDINGS_INIT;
    struct strbuf why = STRBUF_INIT;
    bool ok = context_resolve(&req, rc, &fs, &why) == 0;
    findings_free(&fs);
    strbuf_free(&why);
    return ok;
}

/* A context whose server is SenseCore ACP (not trainjobd, not Slurm). */
static bool context_is_acp(const struct context *c)
{
    return c->driver == CONTEXT_DRIVER_ACP; /* resolved: a file's unnamed driver is decided */
}

/*
 * The backend whose catalog validation checks against (validate --catalog
 * or --context, and submit): the context's catalog, and for a Slurm
 * context the context itself, for what its submit would refuse.
 */
struct online {
    struct catalog cat;
    const struct context *slurm; /* the Slurm context, or NULL */
    const char *workspace;       /* the backend's: for files that name none */
};

/* Reads path once into jf, its decoding's findings into fs: EXIT_USAGE (said) when unreadable. */
static int load_file(const char *path, struct jobfile *jf, struct findings *fs, bool *decoded,
                     FILE *err)
{
    struct strbuf io_err = STRBUF_INIT;
    enum jobfile_result rc = jobfile_load(path, jf, fs, &io_err);
    if (rc == JOBFILE_UNREADABLE)
        fprintf(err, "trainjob: %s\n", strbuf_str(&io_err));
    strbuf_free(&io_err);
    *decoded = rc != JOBFILE_BAD_SYNTAX;
    return rc == JOBFILE_UNREADABLE ? EXIT_USAGE : EXIT_OK;
}

/*
 * The findings of a loaded file into fs: its decoding's (dec, kept), then
 * — when it decoded to a job at all — every validation rule, with the
 * request's workspace (--workspace, else the context's: ctx, NULL when none
 * resolved), on an ACP context ACP's limits, and with on the backend's catalog.
 */
static void check_loaded(const struct cli_globals *g, const struct resolved_context *ctx,
                         const struct online *on, const struct jobfile *jf,
                         const struct findings *dec, bool decoded, struct findings *fs)
{
    for (size_t i = 0; i < dec->count; i++)
        add_copy(fs, &dec->items[i]);
    if (decoded) {
        struct validate_options opt = {0};
        opt.workspace = ctx ? ctx->ctx.workspace : g->workspace;
        struct catalog acp = {0};
        if (ctx && context_is_acp(&ctx->ctx)) {
            acp_catalog_limits(&acp);
            opt.limits = &acp.limits;
        }
        if (on) {
            opt.catalog = &on->cat;
            if (opt.workspace == NULL)
                opt.workspace = on->workspace;
        }
        struct findings checks = FINDINGS_INIT;
        validate_job(&jf->job, &opt, &checks);
        if (on && on->slurm)
            slurm_job_findings(&jf->job, on->slurm, &on->cat, &checks);
        docpos_locate(&jf->pos, &checks);
        merge_validation(fs, &checks);
    }
    findings_sort(fs);
}

/* Prints fs for the file at path; the file's exit status. */
static int report(const char *path, const struct findings *fs, FILE *err)
{
    for (size_t i = 0; i < fs->count; i++)
        print_finding(err, path, &fs->items[i]);
    return findings_count(fs, SEVERITY_ERROR) ? EXIT_INVALID : EXIT_OK;
}

/* Loads and checks one file offline (render): the exit status for this file. */
static int check_file(const struct cli_globals *g, const char *path, struct jobfile *jf,
                      struct findings *fs, FILE *err)
{
    struct findings dec = FINDINGS_INIT;
    bool decoded;
    int rc = load_file(path, jf, &dec, &decoded, err);
    if (rc == EXIT_OK) {
        struct resolved_context ctx;
        bool have = file_context(g, &ctx);
        check_loaded(g, have ? &ctx : NULL, NULL, jf, &dec, decoded, fs);
        if (have)
            resolved_context_free(&ctx);
        rc = report(path, fs, err);
    }
    findings_free(&dec);
    return rc;
}

/*
 * Opens the backend of the context sc resolved into s and reads its
 * catalog into on. A backend with no catalog to give (501) leaves the check
 * offline (false, exit 0; s stays open); any other failure is said, s
 * closed, and its exit status returned.
 */
static int online_open(struct session_context *sc, struct session *s, struct online *on,
                       bool *have, FILE *err)
{
    *have = false;
    memset(on, 0, sizeof *on);
    if (session_open_resolved(sc, s, err) != 0)
        return EXIT_USAGE;
    struct api_error e;
    enum backend_status st = backend_catalog(s->b, &on->cat, &e);
    if (st == BACKEND_REJECTED && e.status == 501)
        return EXIT_OK;
    if (st != BACKEND_OK) {
        fputs("trainjob validate: the catalog to check against: ", err);
        int rc = cli_failed(err, st, &e, false);
        session_close(s);
        return rc;
    }
    on->slurm = s->rc.ctx.driver == CONTEXT_DRIVER_SLURM ? &s->rc.ctx : NULL;
    on->workspace = s->b->target.workspace;
    *have = true;
    return EXIT_OK;
}

static const char validate_usage[] =
    "usage: trainjob validate [-q] [--catalog] [--context NAME] [--workspace WS] FILE...\n"
    "Checks each job file against every rule of the create-task form; with --catalog\n"
    "(or --context NAME) also against that backend's catalog — its pools, specs,\n"
    "volumes and priorities — and, on Slurm, what the cluster would refuse (a\n"
    "priority's QOS, mount paths as the nodes see them), every error at once.\n"
    "Findings go to stderr as FILE:LINE:COL: error|warning: FIELD: MESSAGE.\n"
    "Exit status: 0 all valid (warnings allowed), 1 some file invalid,\n"
    "2 usage or I/O error, 3 the backend asked for its catalog cannot be reached.\n";

struct job_check {
    const struct cli_globals *g;
    bool catalog;       /* check against the backend's catalog too */
    bool before_submit; /* a file with errors of its own reaches no server */
    bool opened;        /* s is open (have: with a catalog in on) */
    bool have;
    bool open_failed; /* the backend or its catalog could not be had: said once */
    bool resolved;    /* ctx read: the config file and the token once a process */
    struct session_context ctx;
    struct session s;
    struct online on;
};

/* The context in effect: the session's once open, else the one read once for all files. */
static const struct resolved_context *check_context(struct job_check *jc)
{
    if (jc->opened)
        return &jc->s.rc;
    if (!jc->resolved) {
        struct session_target t = cli_target(jc->g);
        session_resolve(&t, &jc->ctx);
        jc->resolved = true;
    }
    return session_context_of(&jc->ctx);
}

struct job_check *job_check_new(const struct cli_globals *g, bool catalog, bool before_submit)
{
    struct job_check *jc = xcalloc(1, sizeof *jc);
    jc->g = g;
    jc->catalog = catalog;
    jc->before_submit = before_submit;
    return jc;
}

void job_check_free(struct job_check *jc)
{
    if (jc == NULL)
        return;
    if (jc->have)
        catalog_free(&jc->on.cat);
    if (jc->opened)
        session_close(&jc->s);
    if (jc->resolved)
        session_context_free(&jc->ctx);
    free(jc);
}

struct session *job_check_session(struct job_check *jc)
{
    return jc->opened ? &jc->s : NULL;
}

int job_check_file(struct job_check *jc, const char *path, struct jobfile *jf, struct findings *fs,
                   FILE *err)
{
    struct findings dec = FINDINGS_INIT;
    bool decoded;
    int rc = load_file(path, jf, &dec, &decoded, err);
    if (rc != EXIT_OK)
        goto out;
    if (!jc->catalog || jc->before_submit) {
        check_loaded(jc->g, check_context(jc), NULL, jf, &dec, decoded, fs);
        if (!jc->catalog || findings_count(fs, SEVERITY_ERROR)) {
            rc = report(path, fs, err); /* offline, or with errors of its own: no server */
            goto out;
        }
        findings_clear(fs);
    }
    if (!jc->opened) {
        (void)check_context(jc);
        if ((rc = online_open(&jc->ctx, &jc->s, &jc->on, &jc->have, err)) != EXIT_OK) {
            jc->open_failed = true;
            goto out;
        }
        jc->opened = true;
    }
    check_loaded(jc->g, check_context(jc), jc->have ? &jc->on : NULL, jf, &dec, decoded, fs);
    rc = report(path, fs, err);
out:
    findings_free(&dec);
    return rc;
}

int cmd_validate(const struct cli_globals *g, int argc, char **argv, FILE *out, FILE *err)
{
    enum { OPT_CATALOG = 0x200 };
    static const struct option longopts[] = {
        {"quiet", no_argument, NULL, 'q'},
        {"catalog", no_argument, NULL, OPT_CATALOG},
        {"help", no_argument, NULL, 'h'},
        CLI_GLOBAL_OPTIONS,
        {NULL, 0, NULL, 0},
    };
    struct cli_globals local = *g;
    bool quiet = false, catalog = false;
    int c;
    optind = 0;
    opterr = 0;
    while ((c = cli_next_option(argc, argv, "qh", longopts, &local)) != -1) {
        switch (c) {
        case 0:
            break;
        case 'q':
            quiet = true;
            break;
        case OPT_CATALOG:
            catalog = true;
            break;
        case 'h':
            fputs(validate_usage, out);
            return EXIT_OK;
        default:
            return cli_bad_option("validate", "qh", argv, err);
        }
    }
    if (optind >= argc) {
        fputs(validate_usage, err);
        return EXIT_USAGE;
    }
    /* A context named is a backend to check against, as --catalog asks of the current one. */
    struct job_check *jc = job_check_new(&local, catalog || local.context, false);
    int worst = EXIT_OK;
    for (int i = optind; i < argc; i++) {
        struct jobfile jf;
        struct findings fs = FINDINGS_INIT;
        jobfile_init(&jf);
        int rc = job_check_file(jc, argv[i], &jf, &fs, err);
        if (rc == EXIT_OK && !quiet) {
            size_t warnings = findings_count(&fs, SEVERITY_WARNING);
            if (warnings)
                fprintf(out, "%s: valid, %zu warning%s\n", argv[i], warnings,
                        warnings == 1 ? "" : "s");
            else
                fprintf(out, "%s: valid\n", argv[i]);
        }
        if (rc > worst)
            worst = rc;
        findings_free(&fs);
        jobfile_free(&jf);
        if (jc->open_failed)
            break; /* the catalog could not be read: said once, not per file */
    }
    job_check_free(jc);
    return worst;
}

/*
 * The catalog of the context's backend when one answers — the one the
 * engine and the wizard fill defaults from. Never starts the local engine
 * (render is a file verb): with none running, false and render stays offline.
 */
static bool render_catalog(const struct cli_globals *g, struct catalog *cat)
{
    memset(cat, 0, sizeof *cat);
    FILE *quiet = fopen("/dev/null", "w");
    if (quiet == NULL)
        return false;
    struct session s;
    bool ok = false;
    if (cli_session_open(g, &s, quiet) == EXIT_OK) {
        s.b->revive = NULL; /* asked, not started */
        struct api_error e;
        ok = backend_catalog(s.b, cat, &e) == BACKEND_OK;
        if (!ok)
            catalog_free(cat);
        session_close(&s);
    }
    fclose(quiet);
    return ok;
}

/*
 * The slurm driver's request for job: with the context in effect when it is
 * a slurm one (its jobs_dir, user, qos map and launcher), else placeholders.
 */
static int render_slurm(const struct cli_globals *g, const struct jobspec *job, struct strbuf *sb,
                        FILE *err)
{
    struct context_request req = {NULL, g->context, NULL, NULL, g->workspace};
    struct resolved_context rc;
    struct findings fs = FINDINGS_INIT;
    struct strbuf why = STRBUF_INIT;
    bool have = context_resolve(&req, &rc, &fs, &why) == 0 && rc.ctx.driver == CONTEXT_DRIVER_SLURM;
    strbuf_reset(&why);
    /* The cluster's catalog gives the spec's CPUs and memory; without it, only its GPUs. */
    struct catalog cat;
    memset(&cat, 0, sizeof cat);
    bool asked = false;
    struct backend *b = have ? backend_open(&rc, &why) : NULL;
    struct api_error e;
    if (b && backend_catalog(b, &cat, &e) == BACKEND_OK)
        asked = true;
    else if (have) {
        struct strbuf line = STRBUF_INIT;
        const char *m = b ? e.message : strbuf_str(&why);
        utf8_sanitize(&line, m, strlen(m), 0);
        fprintf(err,
                "trainjob render: the cluster was not asked (%s): CPUs and memory are left "
                "to it\n",
                strbuf_str(&line));
        strbuf_free(&line);
    }
    backend_free(b);
    strbuf_reset(&why);
    int out = EXIT_OK;
    if (slurm_render(job, have ? &rc.ctx : NULL, NULL, asked ? &cat : NULL, sb, &why) != 0) {
        struct strbuf line = STRBUF_INIT;
        utf8_sanitize(&line, strbuf_str(&why), why.len, 0);
        fprintf(err, "trainjob render: %s\n", strbuf_str(&line));
        strbuf_free(&line);
        out = EXIT_USAGE;
    }
    catalog_free(&cat);
    findings_free(&fs);
    resolved_context_free(&rc);
    strbuf_free(&why);
    return out;
}

/*
 * On an ACP context: the body `submit` sends (api/acp.h's acp_create_body,
 * the function the driver sends with), after what submit does first — the
 * workspace chosen, a generated name when the file has none. Nothing is
 * filled that the server fills: ACP's defaults are its own. 1 when the
 * file names another workspace than the one chosen; 2 when no context.
 */
static int render_acp(const struct resolved_context *ctx, struct jobspec *job,
                      enum jobfile_format format, struct strbuf *sb, FILE *err)
{
    struct strbuf why = STRBUF_INIT;
    struct backend *b = backend_open(ctx, &why);
    int status = EXIT_OK;
    if (b == NULL) {
        fprintf(err, "trainjob render: %s\n", strbuf_str(&why));
        status = EXIT_USAGE;
    } else if (backend_job_workspace(b, job, &why) != 0) {
        fprintf(err, "trainjob render: %s\n", strbuf_str(&why));
        status = EXIT_INVALID;
    } else {
        if (job->name == NULL) {
            job->name = jobspec_generate_name(job->framework);
            fputs("trainjob render: the name is generated here; submit generates its own\n", err);
        }
        json_t *body = acp_create_body(job, false);
        jobfile_write_tree(body, format, sb);
        json_decref(body);
    }
    backend_free(b);
    strbuf_free(&why);
    return status;
}

/* A Kubernetes manifest for job (Volcano or PyTorchJob), the catalog giving the spec's size. */
static int render_k8s(const struct jobspec *job, const struct catalog *cat, bool volcano,
                      struct strbuf *sb, FILE *err)
{
    struct strbuf why = STRBUF_INIT;
    int rc = volcano ? k8s_volcano_render(job, cat, sb, &why)
                     : k8s_pytorchjob_render(job, cat, sb, &why);
    if (rc != 0) {
        struct strbuf line = STRBUF_INIT;
        utf8_sanitize(&line, strbuf_str(&why), why.len, 0);
        fprintf(err, "trainjob render: %s\n", strbuf_str(&line));
        strbuf_free(&line);
    }
    strbuf_free(&why);
    return rc == 0 ? EXIT_OK : EXIT_USAGE;
}

int cmd_render(const struct cli_globals *g, int argc, char **argv, FILE *out, FILE *err)
{
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"target", required_argument, NULL, 't'},
        {"workspace", required_argument, NULL, 'w'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct cli_globals local = *g;
    enum jobfile_format format = JOBFILE_YAML;
    enum { TARGET_NONE, TARGET_SLURM, TARGET_VOLCANO, TARGET_PYTORCHJOB } target = TARGET_NONE;
    int c;
    optind = 0;
    while ((c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'o': {
            int f = jobfile_format_from_name(optarg);
            if (f < 0) {
                fprintf(err, "trainjob render: -o takes yaml or json, not '%s'\n", optarg);
                return EXIT_USAGE;
            }
            format = (enum jobfile_format)f;
            break;
        }
        case 't':
            if (strcmp(optarg, "slurm") == 0)
                target = TARGET_SLURM;
            else if (strcmp(optarg, "volcano") == 0)
                target = TARGET_VOLCANO;
            else if (strcmp(optarg, "pytorchjob") == 0)
                target = TARGET_PYTORCHJOB;
            else {
                fprintf(err,
                        "trainjob render: --target takes slurm, volcano or pytorchjob, not '%s'\n",
                        optarg);
                return EXIT_USAGE;
            }
            break;
        case 'w':
            local.workspace = optarg;
            break;
        case 'h':
            fputs("usage: trainjob render FILE [-o yaml|json] [--target slurm|volcano|pytorchjob]\n"
                  "On an ACP context, prints the body submit sends: the job without the\n"
                  "fields the server sets, its defaults left to ACP. Elsewhere,\n"
                  "prints the job with every default filled in: a generated name, the\n"
                  "default fault-tolerance policy, priority, quota type and SSH path.\n"
                  "The quota type comes from the catalog of the backend that answers\n"
                  "(none is started for this); offline it is left to the backend.\n"
                  "--target slurm prints instead the exact REST request and batch script\n"
                  "the slurm driver would send (with the current context's jobs_dir, user,\n"
                  "qos, launcher and volumes), then every rule Slurm cannot honour as written.\n"
                  "--target volcano prints a Volcano Job (batch.volcano.sh/v1alpha1), --target\n"
                  "pytorchjob a Kubeflow PyTorchJob (kubeflow.org/v1), for kubectl apply -f;\n"
                  "after it, as YAML comments, one line per field the target cannot express.\n",
                  out);
            return EXIT_OK;
        default:
            fprintf(err, "trainjob render: unknown option '%s'\n", argv[optind - 1]);
            return EXIT_USAGE;
        }
    }
    if (argc - optind != 1) {
        fputs("usage: trainjob render FILE [-o yaml|json] [--target slurm|volcano|pytorchjob]\n",
              err);
        return EXIT_USAGE;
    }
    const char *path = argv[optind];
    struct jobfile jf;
    struct findings fs = FINDINGS_INIT;
    jobfile_init(&jf);
    int rc = check_file(&local, path, &jf, &fs, err);
    struct resolved_context ctx;
    bool have_ctx = rc == EXIT_OK && target == TARGET_NONE && file_context(&local, &ctx);
    if (have_ctx && context_is_acp(&ctx.ctx)) {
        struct strbuf sb = STRBUF_INIT;
        rc = render_acp(&ctx, &jf.job, format, &sb, err);
        fputs(strbuf_str(&sb), out);
        strbuf_free(&sb);
    } else if (rc == EXIT_OK) {
        if (jf.job.workspace_name == NULL && local.workspace != NULL)
            jf.job.workspace_name = xstrdup(local.workspace);
        struct catalog cat;
        bool have_cat = render_catalog(&local, &cat);
        if (!have_cat && jf.job.scheduling.quota_type == QUOTA_TYPE_UNSPECIFIED)
            fputs("trainjob render: no backend answered: quota_type (and so preemptible) is left "
                  "for the backend to derive from the pool's type\n",
                  err);
        jobspec_fill_defaults(&jf.job, have_cat ? &cat : NULL);
        struct strbuf sb = STRBUF_INIT;
        if (target == TARGET_SLURM)
            rc = render_slurm(&local, &jf.job, &sb, err);
        else if (target == TARGET_VOLCANO || target == TARGET_PYTORCHJOB)
            rc = render_k8s(&jf.job, have_cat ? &cat : NULL, target == TARGET_VOLCANO, &sb, err);
        else
            jobfile_write(&jf.job, format, &sb);
        if (have_cat)
            catalog_free(&cat);
        fputs(strbuf_str(&sb), out);
        strbuf_free(&sb);
    }
    if (have_ctx)
        resolved_context_free(&ctx);
    findings_free(&fs);
    jobfile_free(&jf);
    return rc;
}
