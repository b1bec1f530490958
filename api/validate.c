/*
 * validate: the create-task form's rules (trainjob-job(5)) over a
 * struct jobspec, section by section, in the order the form shows them.
 *
 * validate_job is called by the wizard (inline, on every change), by
 * `trainjob validate` and by trainjobd before it accepts a job. Each form
 * section is one static function below; rules the wizard also runs while a
 * field is being typed live in validate_field.c (the validate_* single-field
 * helpers and their check_* forms), which the section functions call so every
 * rule is written once; which section a field path belongs to is
 * validate_section.c's. Rules that need the backend's catalog run only when one
 * is given (see validate.h).
 *
 * Findings carry the field path in the API's JSON names ("roles[0].image_path")
 * and, where it helps, the byte offset of the problem inside the value.
 */
#include "api/validate.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/catalog.h"
#include "api/exitcodes.h"
#include "api/finding.h"
#include "api/jobspec.h"
#include "api/validate_priv.h"
#include "util/fuzzy.h"
#include "util/pathpart.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

/* What every section function needs: the job, the options, what earlier sections found out. */
struct check {
    const struct jobspec *job;
    const struct validate_options *opt;
    const struct catalog *cat; /* NULL: offline */
    struct findings *out;
    const char *workspace;              /* the job's or the default workspace; NULL when none */
    const struct catalog_workspace *ws; /* the workspace, when the caller is a member of it */
    const struct catalog_pool *pool;    /* the job's pool, when the catalog knows it */
    bool pool_refused;                  /* the job names a pool the catalog refused */
    bool idle;                          /* runs on idle resources (SPOT, or an idle pool) */
};

/* ---- lists of names, for "choose one of: …" ---- */

struct names {
    const char **v;
    size_t n, cap;
};

static void names_add(struct names *ns, const char *s)
{
    if (s == NULL)
        return;
    if (ns->n == ns->cap) {
        ns->cap = ns->cap ? ns->cap * 2 : 8;
        ns->v = xreallocarray(ns->v, ns->cap, sizeof *ns->v);
    }
    ns->v[ns->n++] = s;
}

static void names_join(const struct names *ns, struct strbuf *sb)
{
    for (size_t i = 0; i < ns->n; i++) {
        if (i > 0)
            strbuf_adds(sb, ", ");
        strbuf_adds(sb, ns->v[i]);
    }
}

static bool names_has(const struct names *ns, const char *s)
{
    for (size_t i = 0; i < ns->n; i++)
        if (strcmp(ns->v[i], s) == 0)
            return true;
    return false;
}

static void names_free(struct names *ns)
{
    free(ns->v);
    ns->v = NULL;
    ns->n = ns->cap = 0;
}

/* ---- 1. Basics ---- */

/* workspace_name: the job's or the default; with a catalog, one the caller belongs to. */
static void check_workspace(struct check *c)
{
    const struct jobspec *job = c->job;
    if (nonempty(job->workspace_name))
        c->workspace = job->workspace_name;
    else if (c->opt && nonempty(c->opt->workspace))
        c->workspace = c->opt->workspace;
    if (c->workspace == NULL) {
        findings_add(c->out, SEVERITY_ERROR, "workspace_name",
                     "required: the workspace to submit to");
        return;
    }
    if (c->cat == NULL || (c->cat->unknown & CATALOG_UNKNOWN_WORKSPACES))
        return;
    const struct catalog_workspace *ws = catalog_workspace(c->cat, c->workspace);
    if (ws && ws->role != MEMBER_NONE) {
        c->ws = ws;
        return;
    }
    struct names mine = {0};
    for (size_t i = 0; i < c->cat->workspace_count; i++)
        if (c->cat->workspaces[i].role != MEMBER_NONE)
            names_add(&mine, c->cat->workspaces[i].name);
    struct strbuf sb = STRBUF_INIT;
    names_join(&mine, &sb);
    if (mine.n)
        findings_add(c->out, SEVERITY_ERROR, "workspace_name", "not one of your workspaces: %s",
                     strbuf_str(&sb));
    else
        findings_add(c->out, SEVERITY_ERROR, "workspace_name",
                     "not one of your workspaces: you are not a member of any workspace");
    strbuf_free(&sb);
    names_free(&mine);
}

/* display_name, with the offset of the first character that is not allowed. */
static void check_display_name_field(struct check *c)
{
    char buf[MSG_MAX_LEN];
    int offset;
    const char *msg = check_display_name(c->job->display_name, buf, sizeof buf, &offset);
    if (msg)
        findings_add_at(c->out, SEVERITY_ERROR, "display_name", offset, "%s", msg);
}

/* name: the pattern, then uniqueness in the workspace when the caller can tell. */
static void check_name_field(struct check *c)
{
    char buf[MSG_MAX_LEN];
    int offset;
    const char *name = c->job->name;
    const char *msg = check_job_name(name, buf, sizeof buf, &offset);
    if (msg) {
        findings_add_at(c->out, SEVERITY_ERROR, "name", offset, "%s", msg);
        return;
    }
    if (name && c->opt && c->opt->name_taken && c->workspace &&
        c->opt->name_taken(c->opt->name_taken_ctx, c->workspace, name))
        findings_add(c->out, SEVERITY_ERROR, "name", "already used in workspace %s", c->workspace);
}

/* zone and VPC of a public or idle pool: the pool's zone, a known VPC in the zone's region. */
static void check_zone_and_vpc(struct check *c)
{
    const struct resource_pool *rp = &c->job->resource_pool;
    const struct catalog_pool *pool = c->pool;
    const char *kind = pool_type_label(pool->type);
    const char *article = pool->type == POOL_IDLE ? "an" : "a";
    struct names zones = {0};
    struct strbuf sb = STRBUF_INIT;
    for (size_t i = 0; i < pool->zone_count; i++)
        names_add(&zones, pool->zones[i]);
    names_join(&zones, &sb);

    const struct catalog_zone *zone = nonempty(rp->zone) ? catalog_zone(c->cat, rp->zone) : NULL;
    bool zones_known = !(c->cat->unknown & CATALOG_UNKNOWN_ZONES);
    if (!nonempty(rp->zone))
        findings_add(c->out, SEVERITY_ERROR, "resource_pool.zone",
                     "required for %s %s pool; choose one of: %s", article, kind, strbuf_str(&sb));
    else if (!catalog_pool_has_zone(pool, rp->zone))
        findings_add(c->out, SEVERITY_ERROR, "resource_pool.zone",
                     "'%s' is not one of the pool's zones; choose one of: %s", rp->zone,
                     strbuf_str(&sb));
    else if (zone == NULL && zones_known)
        findings_add(c->out, SEVERITY_ERROR, "resource_pool.zone", "unknown zone '%s'", rp->zone);

    if (!nonempty(rp->vpc_id)) {
        findings_add(c->out, SEVERITY_ERROR, "resource_pool.vpc_id",
                     "required for %s %s pool: the VPC the workers join", article, kind);
    } else if (zones_known) {
        const struct catalog_vpc *vpc = catalog_vpc(c->cat, rp->vpc_id);
        if (vpc == NULL)
            findings_add(c->out, SEVERITY_ERROR, "resource_pool.vpc_id", "unknown VPC '%s'",
                         rp->vpc_id);
        else if (zone && vpc->region && zone->region && strcmp(vpc->region, zone->region) != 0)
            findings_add(c->out, SEVERITY_ERROR, "resource_pool.vpc_id",
                         "VPC '%s' is in region %s, not in zone %s's region %s", rp->vpc_id,
                         vpc->region, zone->name, zone->region);
    }
    strbuf_free(&sb);
    names_free(&zones);
}

/* The pool's resource type decides quota_type and whether zone and VPC are needed. */
static void check_pool_type(struct check *c)
{
    const struct resource_pool *rp = &c->job->resource_pool;
    const struct catalog_pool *pool = c->pool;
    enum quota_type qt = c->job->scheduling.quota_type;

    switch (pool->type) {
    case POOL_IDLE:
        if (qt == QUOTA_TYPE_RESERVED)
            findings_add(c->out, SEVERITY_ERROR, "scheduling.quota_type",
                         "idle pool needs SPOT, not RESERVED ('%s' is an idle pool)", pool->name);
        if (catalog_pool_needs_zone(c->cat, pool))
            check_zone_and_vpc(c);
        break;
    case POOL_PUBLIC:
    case POOL_DEDICATED:
        if (qt == QUOTA_TYPE_SPOT)
            findings_add(c->out, SEVERITY_ERROR, "scheduling.quota_type",
                         "standard pool needs RESERVED, not SPOT ('%s' is %s)", pool->name,
                         pool_type_label(pool->type));
        if (catalog_pool_needs_zone(c->cat, pool))
            check_zone_and_vpc(c);
        break;
    }
    if (catalog_pool_needs_zone(c->cat, pool))
        return;
    /* A zone or VPC where none is needed is said to be ignored, never dropped unsaid. */
    const char *why = pool->type == POOL_DEDICATED ? "ignored for a dedicated pool"
                                                   : "ignored: this backend has no zones or VPCs";
    if (rp->zone)
        findings_add(c->out, SEVERITY_WARNING, "resource_pool.zone", "%s", why);
    if (rp->vpc_id)
        findings_add(c->out, SEVERITY_WARNING, "resource_pool.vpc_id", "%s", why);
}

/* resource_pool: required; with a catalog, one of the workspace's pools, used as its type says. */
static void check_resource_pool(struct check *c)
{
    const struct jobspec *job = c->job;
    const struct resource_pool *rp = &job->resource_pool;
    struct names choices = {0};
    struct strbuf sb = STRBUF_INIT;

    if (c->ws) {
        for (size_t i = 0; i < c->ws->pool_count; i++)
            names_add(&choices, c->ws->pools[i]);
    } else if (c->cat) {
        for (size_t i = 0; i < c->cat->pool_count; i++)
            names_add(&choices, c->cat->pools[i].name);
    }
    names_join(&choices, &sb);

    if (!rp->present || !nonempty(rp->name)) {
        if (choices.n)
            findings_add(c->out, SEVERITY_ERROR, "resource_pool.name",
                         "required: the resource pool (AI elastic cluster); choose one of: %s",
                         strbuf_str(&sb));
        else
            findings_add(c->out, SEVERITY_ERROR, "resource_pool.name",
                         "required: the resource pool (AI elastic cluster) to run on");
    } else if (c->cat && (c->cat->unknown & CATALOG_UNKNOWN_POOLS)) {
        /* the backend lists no pools: the name is the server's to check */
    } else if (c->cat) {
        /* A pool the job may not use is not used for the checks that follow either. */
        const struct catalog_pool *pool = catalog_pool(c->cat, rp->name);
        c->pool_refused = pool == NULL || (c->ws && !catalog_workspace_has_pool(c->ws, rp->name));
        if (c->pool_refused && c->ws)
            findings_add(c->out, SEVERITY_ERROR, "resource_pool.name",
                         "'%s' is not a member of the workspace's pools; choose one of: %s",
                         rp->name, choices.n ? strbuf_str(&sb) : "(none)");
        else if (c->pool_refused)
            findings_add(c->out, SEVERITY_ERROR, "resource_pool.name",
                         "unknown pool '%s'; choose one of: %s", rp->name,
                         choices.n ? strbuf_str(&sb) : "(none)");
        else
            c->pool = pool;
    }
    strbuf_free(&sb);
    names_free(&choices);

    if (c->pool) {
        check_pool_type(c);
    } else if (jobspec_is_idle(job)) {
        /* Offline, SPOT is what says the job is idle: zone and VPC are needed. */
        if (!nonempty(rp->zone))
            findings_add(c->out, SEVERITY_ERROR, "resource_pool.zone",
                         "required for idle (SPOT) jobs");
        if (!nonempty(rp->vpc_id))
            findings_add(c->out, SEVERITY_ERROR, "resource_pool.vpc_id",
                         "required for idle (SPOT) jobs");
    }
    c->idle = jobspec_is_idle(job) || (c->pool && c->pool->type == POOL_IDLE &&
                                       job->scheduling.quota_type == QUOTA_TYPE_UNSPECIFIED);
}

static void check_basics(struct check *c)
{
    check_workspace(c);
    check_display_name_field(c);
    check_name_field(c);
    check_resource_pool(c);
}

/* ---- 2. Resources ---- */

/* scheduling: HIGH and HIGHEST are for owners and admins; preemptible only for idle jobs. */
static void check_scheduling(struct check *c)
{
    const struct scheduling *s = &c->job->scheduling;
    if ((s->priority == PRIORITY_HIGH || s->priority == PRIORITY_HIGHEST) && c->ws &&
        !catalog_ws_priority_allowed(c->ws, (int)s->priority)) {
        if (c->ws->priorities != 0 && c->ws->priorities_note)
            findings_add(c->out, SEVERITY_ERROR, "scheduling.priority", "%s is not allowed: %s",
                         enum_name(&priority_names, (int)s->priority), c->ws->priorities_note);
        else
            findings_add(c->out, SEVERITY_ERROR, "scheduling.priority",
                         "%s needs workspace owner rights; you are a %s of %s",
                         enum_name(&priority_names, (int)s->priority),
                         member_role_name(c->ws->role), c->ws->name);
    }
    /* Only where the job is known to be standard: offline, an unlisted pool may be idle. */
    bool standard = !c->idle && (s->quota_type == QUOTA_TYPE_RESERVED || c->pool != NULL);
    if (s->has_preemptible && standard)
        findings_add(c->out, SEVERITY_WARNING, "scheduling.preemptible",
                     "only idle (SPOT) jobs can be preempted; ignored");
}

/*
 * The job's specs when its pool was refused: a spec no pool of the catalog
 * has is an error now, with the pool's, not one round trip later; one some
 * pool has needs no word (the pool's error says what to change).
 */
static void check_spec_anywhere(struct check *c, const struct role *r)
{
    if (c->cat->unknown & (CATALOG_UNKNOWN_SPECS | CATALOG_UNKNOWN_POOLS))
        return;
    struct names all = {0};
    for (size_t p = 0; p < c->cat->pool_count; p++) {
        const struct catalog_pool *pool = &c->cat->pools[p];
        for (size_t i = 0; i < pool->spec_count; i++)
            if (!names_has(&all, pool->specs[i].name))
                names_add(&all, pool->specs[i].name);
    }
    struct strbuf sb = STRBUF_INIT;
    names_join(&all, &sb);
    char path[PATH_MAX_LEN];
    for (size_t i = 0; i < r->resource_spec_count; i++) {
        const char *name = r->resource_spec[i].name;
        if (!nonempty(name) || names_has(&all, name))
            continue;
        snprintf(path, sizeof path, "roles[0].resource_spec[%zu].name", i);
        findings_add(c->out, SEVERITY_ERROR, path,
                     "'%s' is not a spec of any pool; choose one of: %s", name,
                     all.n ? strbuf_str(&sb) : "(none)");
    }
    strbuf_free(&sb);
    names_free(&all);
}

/*
 * roles[0].resource_spec: one or more, named, each one of the pool's specs.
 * Several are ACP's weak heterogeneous scheduling (the server spreads
 * total_replicas over them; trainjobd and Slurm run every worker on the
 * first), so they need total_replicas. Per-spec replicas beside
 * total_replicas are what a GET reports: accepted when they add up to it,
 * and never sent (api/acp_request.c).
 */
static void check_resource_specs(struct check *c, const struct role *r)
{
    char path[PATH_MAX_LEN];
    struct names specs = {0};
    struct strbuf sb = STRBUF_INIT;
    if (c->pool) {
        for (size_t i = 0; i < c->pool->spec_count; i++)
            names_add(&specs, c->pool->specs[i].name);
        names_join(&specs, &sb);
    } else if (c->pool_refused) {
        /* The pool's error is said already; a spec no pool has is said with it. */
        check_spec_anywhere(c, r);
    }

    if (r->resource_spec_count == 0) {
        if (specs.n)
            findings_add(c->out, SEVERITY_ERROR, "roles[0].resource_spec",
                         "required: one resource spec; choose one of: %s", strbuf_str(&sb));
        else
            findings_add(c->out, SEVERITY_ERROR, "roles[0].resource_spec",
                         "required: one resource spec");
    } else if (r->resource_spec_count > 1 && !r->has_total_replicas) {
        findings_add(c->out, SEVERITY_ERROR, "roles[0].resource_spec[1]",
                     "several specs need total_replicas (the server spreads the workers over "
                     "them); per-spec counts alone are not supported");
    } else if (r->resource_spec_count > 1) {
        findings_add(c->out, SEVERITY_WARNING, "roles[0].resource_spec[1]",
                     "several specs: ACP spreads the %d workers over them; trainjobd and Slurm "
                     "run every worker on the first",
                     (int)r->total_replicas);
    }
    int64_t per_spec = 0;
    bool all_counted = r->resource_spec_count > 0;
    for (size_t i = 0; i < r->resource_spec_count; i++) {
        per_spec += r->resource_spec[i].has_replicas ? r->resource_spec[i].replicas : 0;
        all_counted = all_counted && r->resource_spec[i].has_replicas;
    }
    bool counts_agree = all_counted && per_spec == r->total_replicas;

    for (size_t i = 0; i < r->resource_spec_count; i++) {
        const struct resource_spec_ref *spec = &r->resource_spec[i];
        snprintf(path, sizeof path, "roles[0].resource_spec[%zu].name", i);
        if (!nonempty(spec->name)) {
            if (specs.n)
                findings_add(c->out, SEVERITY_ERROR, path, "required; choose one of: %s",
                             strbuf_str(&sb));
            else
                findings_add(c->out, SEVERITY_ERROR, path, "required: the resource spec name");
        } else if (c->pool && !(c->cat->unknown & CATALOG_UNKNOWN_SPECS) &&
                   catalog_pool_spec(c->pool, spec->name) == NULL) {
            const char *near = fuzzy_nearest(spec->name, specs.v, specs.n);
            if (near)
                findings_add(c->out, SEVERITY_ERROR, path,
                             "'%s' is not one of the pool's specs (did you mean '%s'?); choose "
                             "one of: %s",
                             spec->name, near, strbuf_str(&sb));
            else
                findings_add(c->out, SEVERITY_ERROR, path,
                             "'%s' is not one of the pool's specs; choose one of: %s", spec->name,
                             specs.n ? strbuf_str(&sb) : "(none)");
        }
        if (spec->has_replicas && r->has_total_replicas && !counts_agree) {
            snprintf(path, sizeof path, "roles[0].resource_spec[%zu].replicas", i);
            findings_add(c->out, SEVERITY_ERROR, path,
                         "set either total_replicas or per-spec replicas, not both (as a job read "
                         "back may: every spec's, adding up to total_replicas %d)",
                         (int)r->total_replicas);
        }
    }
    strbuf_free(&sb);
    names_free(&specs);
}

/* roles[0].total_replicas (or the one spec's replicas): at least 1, at most what the pool holds. */
static void check_replicas(struct check *c, const struct role *r)
{
    const char *path = "roles[0].total_replicas";
    int32_t replicas;
    if (r->has_total_replicas) {
        replicas = r->total_replicas;
    } else if (r->resource_spec_count > 0 && r->resource_spec[0].has_replicas) {
        path = "roles[0].resource_spec[0].replicas";
        replicas = r->resource_spec[0].replicas;
    } else {
        findings_add(c->out, SEVERITY_ERROR, path, "required: the number of workers, 1 or more");
        return;
    }
    if (replicas < 1) {
        findings_add(c->out, SEVERITY_ERROR, path, "must be at least 1 (found %d)", (int)replicas);
        return;
    }
    if (c->pool == NULL || r->resource_spec_count == 0 || r->resource_spec[0].name == NULL)
        return;
    const struct catalog_spec *spec = catalog_pool_spec(c->pool, r->resource_spec[0].name);
    if (spec && spec->max_replicas > 0 && replicas > spec->max_replicas)
        findings_add(c->out, SEVERITY_ERROR, path,
                     "the pool can hold at most %d workers of spec %s (found %d)",
                     spec->max_replicas, spec->name, (int)replicas);
}

/* roles: one role, Worker, with its spec and replicas. */
static void check_roles(struct check *c)
{
    const struct jobspec *job = c->job;
    if (job->role_count == 0) {
        findings_add(c->out, SEVERITY_ERROR, "roles",
                     "required: one role named Worker with replicas, resource spec, image and "
                     "startup script");
        return;
    }
    if (job->role_count > 1)
        findings_add(c->out, SEVERITY_ERROR, "roles[1]", "only one role is supported (Worker)");
    const struct role *r = &job->roles[0];
    if (r->name && strcmp(r->name, JOBSPEC_ROLE_NAME) != 0)
        findings_add(c->out, SEVERITY_ERROR, "roles[0].name",
                     "must be Worker, the only role (or left out)");
    check_replicas(c, r);
    check_resource_specs(c, r);
}

static void check_resources(struct check *c)
{
    check_scheduling(c);
    if (c->job->framework == FRAMEWORK_UNSPECIFIED && c->job->framework_other == NULL)
        findings_add(c->out, SEVERITY_ERROR, "framework",
                     "required: one of PYTORCH_DDP, TENSORFLOW_PS, SENSEPARROTS, MPI");
    check_roles(c);
}

/* ---- 3. Image ---- */

static bool blank(const char *s)
{
    return s[strspn(s, " \t\r\n\v\f")] == '\0';
}

/* roles[0].image_path and roles[0].startup_script. */
static void check_image(struct check *c)
{
    if (c->job->role_count == 0)
        return;
    const struct role *r = &c->job->roles[0];
    int offset;
    const char *msg = check_image_path(r->image_path, &offset);
    if (msg)
        findings_add_at(c->out, SEVERITY_ERROR, "roles[0].image_path", offset, "%s", msg);
    else if (c->cat && c->cat->image_runtime && strcmp(c->cat->image_runtime, "host") == 0 &&
             !catalog_image(c->cat, r->image_path))
        findings_add(c->out, SEVERITY_WARNING, "roles[0].image_path",
                     "no container runtime on this backend: the job runs on the host, the "
                     "image is never pulled; its images: %s",
                     c->cat->image_count ? c->cat->images[0].path : "local/host");
    if (!nonempty(r->startup_script))
        findings_add(c->out, SEVERITY_ERROR, "roles[0].startup_script",
                     "required: the command every worker runs");
    else if (blank(r->startup_script))
        findings_add(c->out, SEVERITY_ERROR, "roles[0].startup_script", "must not be blank");
}

/* ---- 4. Fault tolerance ---- */

/* Maps exitcodes_shadowing's indexes (rules that parsed) back to rule numbers. */
struct shadow_ctx {
    struct check *c;
    const size_t *rule_of; /* index in the shadowing input -> index in rules[] */
    const bool *any_code;  /* by input index: the rule lists no codes */
    bool *reported;        /* by input index: "never matches" already said */
};

static void on_shadow(void *vctx, size_t rule, size_t earlier, const struct exitcode_set *overlap,
                      bool whole)
{
    struct shadow_ctx *s = vctx;
    size_t i = s->rule_of[rule], j = s->rule_of[earlier];
    char path[PATH_MAX_LEN];
    snprintf(path, sizeof path, "fault_tolerance.rules[%zu].exit_codes", i);
    if (whole) {
        if (!s->reported[rule])
            findings_add(s->c->out, SEVERITY_WARNING, path,
                         "never matches: every code is caught by earlier rules");
        s->reported[rule] = true;
        return;
    }
    /* A rule for any code is the fallback after the others: overlap is its purpose. */
    if (s->any_code[rule])
        return;
    struct strbuf codes = STRBUF_INIT;
    exitcodes_format(overlap, &codes);
    /* (the path names this rule; the earlier one is named the same way: rules[0]) */
    findings_add(s->c->out, SEVERITY_WARNING, path, "%s %s shadowed by rules[%zu]",
                 strbuf_str(&codes), exitcodes_count(overlap) == 1 ? "is" : "are", j);
    strbuf_free(&codes);
}

void validate_form_limits(const struct catalog *cat, struct form_limits *out)
{
    const struct catalog_limits *l = cat && cat->limits.present ? &cat->limits : NULL;
    out->env_stated = l && l->has_max_env;
    out->max_env = out->env_stated ? l->max_env : VALIDATE_MAX_ENV;
    out->rules_stated = l && l->has_max_rules;
    out->max_rules = out->rules_stated ? l->max_rules : VALIDATE_MAX_RULES;
    out->backoff_stated = l && (l->has_min_backoff_limit || l->has_max_backoff_limit);
    out->min_backoff = l && l->has_min_backoff_limit ? l->min_backoff_limit : VALIDATE_MIN_BACKOFF;
    out->max_backoff = l && l->has_max_backoff_limit ? l->max_backoff_limit : VALIDATE_MAX_BACKOFF;
}

/* The limits a check holds the job to: the catalog's, else the backend's the caller named. */
static void check_limits(const struct check *c, struct form_limits *out)
{
    if (c->cat == NULL && c->opt && c->opt->limits) {
        struct catalog only = {0};
        only.limits = *c->opt->limits;
        validate_form_limits(&only, out);
        return;
    }
    validate_form_limits(c->cat, out);
}

/*
 * A limit the backend states is enforced (it refuses more); the console's,
 * applied when the backend states none, is a warning: a job fetched from a
 * backend that takes more (ACP's API: any int32 backoff_limit) still loads.
 */
static enum severity limit_severity(bool stated)
{
    return stated ? SEVERITY_ERROR : SEVERITY_WARNING;
}

static const char *limit_whose(bool stated)
{
    return stated ? " on this backend" : " in the console (the backend may take more)";
}

/* fault_tolerance.rules[]: each rule's codes and action, then which rules hide which. */
static void check_ft_rules(struct check *c)
{
    const struct fault_tolerance *ft = &c->job->fault_tolerance;
    size_t n = ft->rule_count;
    char path[PATH_MAX_LEN];

    struct form_limits lim;
    check_limits(c, &lim);
    if (n > (size_t)lim.max_rules)
        findings_add(c->out, limit_severity(lim.rules_stated), "fault_tolerance.rules",
                     "at most %d rules%s (found %zu)", lim.max_rules, limit_whose(lim.rules_stated),
                     n);
    if (n > 0 && ft->has_backoff_limit && ft->backoff_limit == 0)
        findings_add(c->out, SEVERITY_WARNING, "fault_tolerance.rules",
                     "these rules have no effect while max restarts (backoff_limit) is 0");

    struct exitcode_set *sets = xcalloc(n ? n : 1, sizeof *sets);
    size_t *rule_of = xcalloc(n ? n : 1, sizeof *rule_of);
    bool *any_code = xcalloc(n ? n : 1, sizeof *any_code);
    bool *reported = xcalloc(n ? n : 1, sizeof *reported);
    size_t parsed = 0;

    for (size_t i = 0; i < n; i++) {
        const struct ft_rule *rule = &ft->rules[i];
        bool any = !nonempty(rule->exit_codes);
        struct exitcodes_error err;

        snprintf(path, sizeof path, "fault_tolerance.rules[%zu].exit_codes", i);
        if (any) {
            exitcodes_all(&sets[parsed]);
            any_code[parsed] = true;
            rule_of[parsed++] = i;
        } else if (exitcodes_parse(rule->exit_codes, &sets[parsed], &err) < 0) {
            findings_add_at(c->out, SEVERITY_ERROR, path, offset_int(err.offset), "%s",
                            err.message);
        } else {
            rule_of[parsed++] = i;
        }
        if (rule->action == FT_ACTION_UNSPECIFIED && rule->action_other == NULL) {
            snprintf(path, sizeof path, "fault_tolerance.rules[%zu].action", i);
            findings_add(c->out, SEVERITY_ERROR, path,
                         "required: RESTART_JOB, RESTART_POD or FAIL_JOB");
        }
        if (rule->has_mark_node_unschedulable && rule->mark_node_unschedulable && any) {
            snprintf(path, sizeof path, "fault_tolerance.rules[%zu].mark_node_unschedulable", i);
            findings_add(c->out, SEVERITY_WARNING, path,
                         "only acts when the rule lists exit codes");
        }
    }

    struct shadow_ctx sctx = {c, rule_of, any_code, reported};
    exitcodes_shadowing(sets, parsed, on_shadow, &sctx);
    free(sets);
    free(rule_of);
    free(any_code);
    free(reported);
}

static void check_fault_tolerance(struct check *c)
{
    const struct fault_tolerance *ft = &c->job->fault_tolerance;
    if (!ft->present && ft->rule_count == 0)
        return;
    struct form_limits lim;
    check_limits(c, &lim);
    if (ft->has_backoff_limit &&
        (ft->backoff_limit < lim.min_backoff || ft->backoff_limit > lim.max_backoff))
        findings_add(c->out, limit_severity(lim.backoff_stated), "fault_tolerance.backoff_limit",
                     "must be %d … %d%s (0 never restarts, -1 restarts forever; found %d)",
                     lim.min_backoff, lim.max_backoff, limit_whose(lim.backoff_stated),
                     (int)ft->backoff_limit);
    check_ft_rules(c);
}

/* ---- 5. Data ---- */

/* mount[i].id: required; with a catalog, a known volume in the job's zone. */
static void check_volume(struct check *c, size_t i, const struct mount *m)
{
    char path[PATH_MAX_LEN];
    snprintf(path, sizeof path, "mount[%zu].id", i);
    if (!nonempty(m->id)) {
        findings_add(c->out, SEVERITY_ERROR, path, "required: the volume to mount");
        return;
    }
    if (c->cat == NULL || (c->cat->unknown & CATALOG_UNKNOWN_VOLUMES))
        return;
    /* The job's zone is the pool's; a dedicated pool without one is not compared. */
    const char *zone = nonempty(c->job->resource_pool.zone) ? c->job->resource_pool.zone : NULL;
    const struct catalog_volume *vol = catalog_volume(c->cat, m->id);
    if (vol == NULL) {
        struct names ids = {0};
        struct strbuf sb = STRBUF_INIT;
        for (size_t k = 0; k < c->cat->volume_count; k++) {
            const struct catalog_volume *v = &c->cat->volumes[k];
            if (zone == NULL || (v->zone && strcmp(v->zone, zone) == 0))
                names_add(&ids, v->id);
        }
        names_join(&ids, &sb);
        if (ids.n)
            findings_add(c->out, SEVERITY_ERROR, path, "unknown volume '%s'; choose one of: %s",
                         m->id, strbuf_str(&sb));
        else if (c->cat->volume_count == 0)
            findings_add(c->out, SEVERITY_ERROR, path,
                         "unknown volume '%s': this backend offers no volumes", m->id);
        else
            findings_add(c->out, SEVERITY_ERROR, path, "unknown volume '%s'", m->id);
        strbuf_free(&sb);
        names_free(&ids);
    } else if (zone && vol->zone && strcmp(vol->zone, zone) != 0) {
        findings_add(c->out, SEVERITY_ERROR, path,
                     "volume '%s' is in zone %s, not in the job's zone %s", m->id, vol->zone, zone);
    }
}

/*
 * A volume the nodes see at a path (catalog_volume.path: Slurm) is mounted
 * nowhere else for a worker in the node's own environment (the host image):
 * its mount path must be that directory. Through a container launcher it
 * may go anywhere; api/slurm_script.c decides that at submit.
 */
static void check_in_place(struct check *c, size_t i, const struct mount *m, const char *dst)
{
    const struct role *r = c->job->role_count ? &c->job->roles[0] : NULL;
    if (c->cat == NULL || r == NULL || !nonempty(r->image_path) ||
        strcmp(r->image_path, CATALOG_HOST_IMAGE) != 0 || !nonempty(m->id))
        return;
    const struct catalog_volume *vol = catalog_volume(c->cat, m->id);
    if (vol == NULL || !nonempty(vol->path))
        return;
    struct strbuf src = STRBUF_INIT, sub = STRBUF_INIT;
    strbuf_adds(&sub, vol->path);
    if (nonempty(m->subdir))
        strbuf_addf(&sub, "/%s", m->subdir);
    path_normalise(strbuf_str(&sub), &src);
    char path[PATH_MAX_LEN];
    snprintf(path, sizeof path, "mount[%zu].mount_path", i);
    if (strcmp(strbuf_str(&src), dst) != 0)
        findings_add(c->out, SEVERITY_ERROR, path,
                     "the workers run in the node's own environment (%s), where volume '%s' is "
                     "at %s: mount it there, or choose an image the context's launcher runs",
                     CATALOG_HOST_IMAGE, m->id, strbuf_str(&src));
    strbuf_free(&src);
    strbuf_free(&sub);
}

/* Will the job's SSH directory be mounted in its workers (as engine/lifecycle.c decides)? */
static bool ssh_mounted(const struct jobspec *job)
{
    return job->framework == FRAMEWORK_MPI || (job->ssh.present && job->ssh.auto_key_setup);
}

/* mount[]: volume, directory inside it, and a unique, safe mount path inside no other. */
static void check_data(struct check *c)
{
    const struct jobspec *job = c->job;
    char path[PATH_MAX_LEN];
    char buf[MSG_MAX_LEN];
    struct strbuf *norm = xcalloc(job->mount_count ? job->mount_count : 1, sizeof *norm);
    bool *usable = xcalloc(job->mount_count ? job->mount_count : 1, sizeof *usable);

    for (size_t i = 0; i < job->mount_count; i++) {
        const struct mount *m = &job->mount[i];
        check_volume(c, i, m);

        if (nonempty(m->subdir)) {
            const char *problem = subdir_problem(m->subdir, buf, sizeof buf);
            snprintf(path, sizeof path, "mount[%zu].subdir", i);
            if (problem)
                findings_add(c->out, SEVERITY_ERROR, path, "%s", problem);
        }

        snprintf(path, sizeof path, "mount[%zu].mount_path", i);
        const char *msg = check_mount_path(m->mount_path, buf, sizeof buf);
        if (msg) {
            findings_add(c->out, SEVERITY_ERROR, path, "%s", msg);
            continue;
        }
        path_normalise(m->mount_path, &norm[i]);
        usable[i] = true;
        const char *here = strbuf_str(&norm[i]);
        check_in_place(c, i, m, here);
        for (size_t j = 0; j < i; j++) {
            const char *there = strbuf_str(&norm[j]);
            if (!usable[j])
                continue;
            if (strcmp(here, there) == 0) {
                findings_add(c->out, SEVERITY_ERROR, path, "same mount path as mount[%zu]", j);
                break;
            }
            /* The inner one would be made through what the outer holds (a job's symlinks). */
            if (path_under(here, there) || path_under(there, here)) {
                findings_add(c->out, SEVERITY_ERROR, path,
                             "%s mount[%zu].mount_path %s; one mount may not lie inside another",
                             path_under(here, there) ? "lies inside" : "would hide", j, there);
                break;
            }
        }
        /* The SSH directory where the job did not choose it: the mount must make way. */
        if (ssh_mounted(job) && !job->ssh.config_mount_path) {
            const char *ssh = JOBSPEC_DEFAULT_SSH_PATH;
            if (strcmp(here, ssh) == 0)
                findings_add(c->out, SEVERITY_ERROR, path,
                             "same path as the SSH config directory (ssh.config_mount_path)");
            else if (path_under(here, ssh) || path_under(ssh, here))
                findings_add(c->out, SEVERITY_ERROR, path,
                             "%s the SSH config directory %s (ssh.config_mount_path); "
                             "one mount may not lie inside another",
                             path_under(here, ssh) ? "lies inside" : "would hide", ssh);
        }
    }
    for (size_t i = 0; i < job->mount_count; i++)
        strbuf_free(&norm[i]);
    free(norm);
    free(usable);
}

/* ---- 6. Environment ---- */

/* env[]: at most 20 (or the backend's limit) unique, well-formed names the platform does not set;
 * bounded values. */
static void check_env(struct check *c)
{
    const struct jobspec *job = c->job;
    char path[PATH_MAX_LEN];
    char buf[MSG_MAX_LEN];

    struct form_limits lim;
    check_limits(c, &lim);
    if (job->env_count > (size_t)lim.max_env)
        findings_add(c->out, limit_severity(lim.env_stated), "env",
                     "at most %d variables%s (found %zu)", lim.max_env, limit_whose(lim.env_stated),
                     job->env_count);
    for (size_t i = 0; i < job->env_count; i++) {
        const struct env_var *e = &job->env[i];
        int offset;
        snprintf(path, sizeof path, "env[%zu].key", i);
        const char *msg = check_env_name(e->key, buf, sizeof buf, &offset);
        if (msg) {
            findings_add_at(c->out, SEVERITY_ERROR, path, offset, "%s", msg);
        } else {
            for (size_t j = 0; j < i; j++) {
                if (job->env[j].key && strcmp(job->env[j].key, e->key) == 0) {
                    findings_add(c->out, SEVERITY_ERROR, path, "same name as env[%zu]", j);
                    break;
                }
            }
        }
        size_t len = e->value ? strlen(e->value) : 0;
        if (len > VALIDATE_MAX_ENV_VALUE) {
            snprintf(path, sizeof path, "env[%zu].value", i);
            findings_add(c->out, SEVERITY_ERROR, path, "must be at most %d bytes (found %zu)",
                         VALIDATE_MAX_ENV_VALUE, len);
        }
    }
}

/*
 * ssh: always on for MPI; the config path, when given, follows the rule of
 * every placed path and, when it is mounted, lies inside no volume's nor
 * holds one.
 */
static void check_ssh(struct check *c)
{
    const struct jobspec *job = c->job;
    const struct ssh_config *ssh = &job->ssh;
    const char *field = "ssh.config_mount_path";
    if (job->framework == FRAMEWORK_MPI && ssh->has_auto_key_setup && !ssh->auto_key_setup)
        findings_add(c->out, SEVERITY_WARNING, "ssh.auto_key_setup",
                     "MPI jobs always set up SSH; ignored");
    if (!ssh->config_mount_path)
        return;
    char buf[MSG_MAX_LEN];
    const char *problem = check_placed_path(ssh->config_mount_path, buf, sizeof buf);
    if (problem) {
        findings_add(c->out, SEVERITY_ERROR, field, "%s", problem);
        return;
    }
    if (!ssh_mounted(job))
        return;
    struct strbuf here = STRBUF_INIT, there = STRBUF_INIT;
    path_normalise(ssh->config_mount_path, &here);
    for (size_t i = 0; i < job->mount_count; i++) {
        const char *m = job->mount[i].mount_path;
        if (!nonempty(m) || check_placed_path(m, buf, sizeof buf))
            continue; /* its own finding says what is wrong */
        path_normalise(m, &there);
        const char *h = strbuf_str(&here), *t = strbuf_str(&there);
        if (strcmp(h, t) == 0) {
            findings_add(c->out, SEVERITY_ERROR, field, "same path as mount[%zu].mount_path", i);
            break;
        }
        if (path_under(h, t) || path_under(t, h)) {
            findings_add(c->out, SEVERITY_ERROR, field,
                         "%s mount[%zu].mount_path %s; one mount may not lie inside another",
                         path_under(h, t) ? "lies inside" : "would hide", i, t);
            break;
        }
    }
    strbuf_free(&here);
    strbuf_free(&there);
}

static void check_environment(struct check *c)
{
    check_env(c);
    check_ssh(c);
}

/* ---- 7. TensorBoard ---- */

/*
 * tensorboard.log_path: on one of the mounted volumes. The path is the
 * switch (ACP's schema): `tensorboard: {}` or an empty log_path is
 * TensorBoard off, as is no tensorboard at all.
 */
static void check_tensorboard(struct check *c)
{
    const struct jobspec *job = c->job;
    const char *log_path = job->tensorboard.log_path;
    const char *path = "tensorboard.log_path";
    if (!job->tensorboard.present || log_path == NULL || *log_path == '\0')
        return;
    char buf[256];
    const char *problem = absolute_path_problem(log_path, buf, sizeof buf);
    if (problem) {
        findings_add(c->out, SEVERITY_ERROR, path, "%s", problem);
        return;
    }

    struct strbuf lp = STRBUF_INIT, mp = STRBUF_INIT;
    struct names mounts = {0};
    bool on_mount = false;
    path_normalise(log_path, &lp);
    for (size_t i = 0; i < job->mount_count; i++) {
        const char *m = job->mount[i].mount_path;
        if (!nonempty(m) || m[0] != '/')
            continue;
        names_add(&mounts, m);
        path_normalise(m, &mp);
        if (path_under(strbuf_str(&lp), strbuf_str(&mp)))
            on_mount = true;
    }
    if (mounts.n == 0) {
        findings_add(c->out, SEVERITY_ERROR, path,
                     "must be on a mounted volume, but no volumes are mounted; add one in Data");
    } else if (!on_mount) {
        struct strbuf sb = STRBUF_INIT;
        names_join(&mounts, &sb);
        findings_add(c->out, SEVERITY_ERROR, path,
                     "must be on a mounted volume: equal to or under one of: %s", strbuf_str(&sb));
        strbuf_free(&sb);
    }
    strbuf_free(&lp);
    strbuf_free(&mp);
    names_free(&mounts);
}

/* ---- 8. Review: fields the server sets ---- */

/* A field the server sets: a warning, or an error when the job is about to be submitted. */
static void output_only(struct check *c, bool set, const char *path)
{
    if (!set)
        return;
    if (c->opt && c->opt->for_submit)
        findings_add(c->out, SEVERITY_ERROR, path, "output-only; remove it before submitting");
    else
        findings_add(c->out, SEVERITY_WARNING, path, "output-only; ignored on submit");
}

/* One finding per output-only field that is set (SECTION_REVIEW). */
static void check_output_only(struct check *c)
{
    const struct jobspec *job = c->job;
    char path[PATH_MAX_LEN];

    output_only(c, job->subscription_name != NULL, "subscription_name");
    output_only(c, job->resource_group_name != NULL, "resource_group_name");
    output_only(c, job->zone != NULL, "zone");
    output_only(c, job->uid != NULL, "uid");
    output_only(c, job->id != NULL, "id");
    output_only(c, job->resource_pool.display_name != NULL, "resource_pool.display_name");
    for (size_t i = 0; i < job->role_count; i++) {
        for (size_t j = 0; j < job->roles[i].resource_spec_count; j++) {
            snprintf(path, sizeof path, "roles[%zu].resource_spec[%zu].description", i, j);
            output_only(c, job->roles[i].resource_spec[j].description != NULL, path);
        }
    }
    output_only(c, job->ownership.present, "ownership");
    output_only(c, job->state != JOB_STATE_UNSPECIFIED, "state");
    output_only(c, job->state_message != NULL, "state_message");
    output_only(c, job->has_root_mapping, "root_mapping");
    output_only(c, job->has_restart_count, "restart_count");
    output_only(c, job->has_ready_workers, "ready_workers");
    output_only(c, job->nodes != NULL, "nodes");
    output_only(c, job->create_time != NULL, "create_time");
    output_only(c, job->start_time != NULL, "start_time");
    output_only(c, job->suspend_time != NULL, "suspend_time");
    output_only(c, job->update_time != NULL, "update_time");
    output_only(c, job->complete_time != NULL, "complete_time");
    output_only(c, job->delete_time != NULL, "delete_time");
}

void validate_job(const struct jobspec *job, const struct validate_options *opt,
                  struct findings *out)
{
    struct check c = {0};
    c.job = job;
    c.opt = opt;
    c.cat = opt ? opt->catalog : NULL;
    c.out = out;

    check_basics(&c);
    check_resources(&c);
    check_image(&c);
    check_fault_tolerance(&c);
    check_data(&c);
    check_environment(&c);
    check_tensorboard(&c);
    check_output_only(&c);
}
