/*
 * jobspec_json: the TrainingJob schema as api/schema tables — one
 * object_type per object of the API, fields in the order the form (and a
 * written file) presents them. Decoding and encoding are schema's.
 *
 * module: jobspec — the job model's tables; jobspec.c frees, copies and
 * compares jobs through them, and they name jobspec's enums.
 */
#include "api/jobspec_json.h"

#include <stddef.h>
#include <string.h>

#include "api/finding.h"
#include "api/jobspec.h"
#include "api/schema.h"
#include "util/strbuf.h"
#include "util/utf8.h"

static const struct field spec_ref_fields[] = {
    F_STR(struct resource_spec_ref, name),
    F_OPT_INT32(struct resource_spec_ref, replicas),
    /* limits and requests are strings in the schema, numbers on some servers: kept as they came */
    F_STR(struct resource_spec_ref, description),
    F_JSON_TREE(struct resource_spec_ref, limits),
    F_JSON_TREE(struct resource_spec_ref, requests),
    F_EXTRAS(struct resource_spec_ref),
};
static const struct object_type spec_ref_type =
    SCHEMA_ELEM(struct resource_spec_ref, spec_ref_fields);

static const struct field role_fields[] = {
    F_STR(struct role, name),
    F_OPT_INT32(struct role, total_replicas),
    F_LIST(struct role, resource_spec, resource_spec_count, spec_ref_type),
    F_STR(struct role, image_path),
    F_STR(struct role, startup_script),
    F_EXTRAS(struct role),
};
static const struct object_type role_type = SCHEMA_ELEM(struct role, role_fields);

static const struct field env_fields[] = {
    F_STR(struct env_var, key),
    F_STR_OR_INT(struct env_var, value),
    F_EXTRAS(struct env_var),
};
static const struct object_type env_type = SCHEMA_ELEM(struct env_var, env_fields);

static const struct field mount_fields[] = {
    F_ENUMERATION_KEEP(struct mount, type, mount_type_names, type_other),
    F_STR(struct mount, id),
    F_STR(struct mount, subdir),
    F_STR(struct mount, mount_path),
    F_STR(struct mount, zone),
    F_STR(struct mount, endpoint),
    F_STR(struct mount, access_mode),
    F_STR(struct mount, display_name),
    F_EXTRAS(struct mount),
};
static const struct object_type mount_type = SCHEMA_ELEM(struct mount, mount_fields);

static const struct field rule_fields[] = {
    F_STR_OR_INT(struct ft_rule, exit_codes),
    F_ENUMERATION_KEEP(struct ft_rule, action, ft_action_names, action_other),
    F_OPT_BOOL(struct ft_rule, mark_node_unschedulable),
    F_EXTRAS(struct ft_rule),
};
static const struct object_type rule_type = SCHEMA_ELEM(struct ft_rule, rule_fields);

static const struct field ft_fields[] = {
    F_OPT_INT32(struct fault_tolerance, backoff_limit),
    F_LIST(struct fault_tolerance, rules, rule_count, rule_type),
    F_EXTRAS(struct fault_tolerance),
};
static const struct object_type ft_type = SCHEMA_OBJ(ft_fields);

/*
 * scheduling.scoring_strategy is an object {type: …} holding one enum; its
 * table's base is that member, so what it keeps lies at offsets from there.
 */
#define SCORING_AT(m)                                                                              \
    (offsetof(struct scheduling, m) - offsetof(struct scheduling, scoring_strategy))
static const struct field scoring_fields[] = {
    {"type", F_ENUM_KEEP, 0, SCHEMA_NO_FLAG, &scoring_strategy_names, NULL,
     SCORING_AT(scoring_strategy_other)},
    {"", F_EXTRA, SCORING_AT(scoring_extra), SCHEMA_NO_FLAG, NULL, NULL, 0},
};
static const struct object_type scoring_type = SCHEMA_OBJ(scoring_fields);

static const struct field scheduling_fields[] = {
    F_ENUMERATION_KEEP(struct scheduling, priority, priority_names, priority_other),
    F_ENUMERATION_KEEP(struct scheduling, quota_type, quota_type_names, quota_type_other),
    F_OPT_BOOL(struct scheduling, preemptible),
    {"scoring_strategy", F_OBJECT, offsetof(struct scheduling, scoring_strategy), SCHEMA_NO_FLAG,
     NULL, &scoring_type, 0},
    F_EXTRAS(struct scheduling),
};
static const struct object_type scheduling_type = SCHEMA_OBJ(scheduling_fields);

static const struct field pool_fields[] = {
    F_STR(struct resource_pool, name),   F_STR(struct resource_pool, zone),
    F_STR(struct resource_pool, vpc_id), F_STR(struct resource_pool, display_name),
    F_EXTRAS(struct resource_pool),
};
static const struct object_type pool_type = SCHEMA_OBJ(pool_fields);

static const struct field ssh_fields[] = {
    F_OPT_BOOL(struct ssh_config, auto_key_setup),
    F_STR(struct ssh_config, config_mount_path),
    F_EXTRAS(struct ssh_config),
};
static const struct object_type ssh_type = SCHEMA_OBJ(ssh_fields);

static const struct field tensorboard_fields[] = {
    F_STR(struct tensorboard, log_path),
    F_EXTRAS(struct tensorboard),
};
static const struct object_type tensorboard_type = SCHEMA_OBJ(tensorboard_fields);

static const struct field barrier_fields[] = {
    F_OPT_BOOL(struct barrier, enable_ethernet_ping),
    F_OPT_BOOL(struct barrier, enable_roce_mesh_ping),
    F_EXTRAS(struct barrier),
};
static const struct object_type barrier_type = SCHEMA_OBJ(barrier_fields);

static const struct field async_checkpoint_fields[] = {
    F_OPT_INT32(struct async_checkpoint, max_ckpt_rounds),
    F_EXTRAS(struct async_checkpoint),
};
static const struct object_type async_checkpoint_type = SCHEMA_OBJ(async_checkpoint_fields);

static const struct field lme_fields[] = {
    F_OPT_BOOL(struct lme, enable_warmingup),      F_OPT_BOOL(struct lme, enable_checker),
    F_OPT_BOOL(struct lme, enable_health_monitor), F_OPT_INT32(struct lme, max_retries),
    F_OPT_INT32(struct lme, current_retries),      F_EXTRAS(struct lme),
};
static const struct object_type lme_type = SCHEMA_OBJ(lme_fields);

static const struct field ownership_fields[] = {
    F_STR(struct ownership, user_name),
    F_STR(struct ownership, user_id),
    F_STR(struct ownership, requestor_id),
    F_STR(struct ownership, tenant_id),
    F_EXTRAS(struct ownership),
};
static const struct object_type ownership_type = SCHEMA_OBJ(ownership_fields);

static const struct field job_fields[] = {
    F_STR(struct jobspec, subscription_name),
    F_STR(struct jobspec, resource_group_name),
    F_STR(struct jobspec, zone),
    F_STR(struct jobspec, workspace_name),
    F_STR(struct jobspec, display_name),
    F_STR(struct jobspec, name),
    F_STR(struct jobspec, uid),
    F_STR(struct jobspec, id),
    F_ENUMERATION_KEEP(struct jobspec, framework, framework_names, framework_other),
    F_SECTION(struct jobspec, resource_pool, pool_type),
    F_SECTION(struct jobspec, scheduling, scheduling_type),
    F_LIST(struct jobspec, roles, role_count, role_type),
    F_SECTION(struct jobspec, fault_tolerance, ft_type),
    F_LIST(struct jobspec, mount, mount_count, mount_type),
    F_LIST(struct jobspec, env, env_count, env_type),
    F_SECTION(struct jobspec, ssh, ssh_type),
    F_SECTION(struct jobspec, tensorboard, tensorboard_type),
    F_SECTION(struct jobspec, barrier, barrier_type),
    F_SECTION(struct jobspec, async_checkpoint, async_checkpoint_type),
    F_SECTION(struct jobspec, lme, lme_type),
    F_STR(struct jobspec, fine_tuning_specs),
    F_JSON_TREE(struct jobspec, metadata),
    F_SECTION(struct jobspec, ownership, ownership_type),
    F_ENUMERATION_KEEP(struct jobspec, state, job_state_names, state_other),
    F_STR(struct jobspec, state_message),
    F_OPT_INT32(struct jobspec, restart_count),
    F_OPT_INT32(struct jobspec, ready_workers),
    F_OPT_INT32(struct jobspec, faulty_workers),
    F_STR(struct jobspec, nodes),
    F_OPT_BOOL(struct jobspec, root_mapping),
    F_STR(struct jobspec, create_time),
    F_STR(struct jobspec, start_time),
    F_STR(struct jobspec, suspend_time),
    F_STR(struct jobspec, update_time),
    F_STR(struct jobspec, complete_time),
    F_STR(struct jobspec, delete_time),
    F_EXTRAS(struct jobspec),
};
static const struct object_type job_type = SCHEMA_OBJ(job_fields);

const struct object_type *jobspec_schema(void)
{
    return &job_type;
}

void jobspec_free_field(struct jobspec *job, const char *name)
{
    for (size_t i = 0; i < job_type.field_count; i++)
        if (strcmp(job_fields[i].name, name) == 0) {
            const struct object_type one = {0, &job_fields[i], 1};
            schema_free(&one, job);
        }
}

int jobspec_from_json(const json_t *root, enum jobspec_decode_mode mode, struct jobspec *job,
                      struct findings *fs)
{
    if (!json_is_object(root)) {
        findings_add(fs, SEVERITY_ERROR, "",
                     "expected a mapping of job fields at the top level, got %s",
                     root ? schema_type_name(root) : "nothing");
        return -1;
    }
    enum schema_mode m = mode == JOBSPEC_STRICT ? SCHEMA_STRICT
                         : mode == JOBSPEC_FILE ? SCHEMA_FILE
                                                : SCHEMA_LENIENT;
    return schema_decode(root, &job_type, job, m, "", fs) ? -1 : 0;
}

json_t *jobspec_to_json(const struct jobspec *job)
{
    return schema_encode(&job_type, job);
}

/* ---- the summary, written as text ------------------------------------------ */

/* Appends s as a JSON string; text that is not UTF-8 is written as "" (never invalid JSON). */
static void put_string(struct strbuf *out, const char *s)
{
    size_t n = strlen(s);
    strbuf_addc(out, '"');
    if (!utf8_valid(s, n)) {
        strbuf_addc(out, '"');
        return;
    }
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\' && c != 0x7f)
            continue;
        strbuf_add(out, s + run, i - run);
        if (c == '"' || c == '\\')
            strbuf_addf(out, "\\%c", c);
        else
            strbuf_addf(out, "\\u%04x", c);
        run = i + 1;
    }
    strbuf_add(out, s + run, n - run);
    strbuf_addc(out, '"');
}

/* ,"key":"value" — nothing for a NULL value; *first says whether a comma goes before. */
static void put_str(struct strbuf *out, bool *first, const char *key, const char *value)
{
    if (value == NULL)
        return;
    strbuf_adds(out, *first ? "\"" : ",\"");
    strbuf_adds(out, key);
    strbuf_adds(out, "\":");
    put_string(out, value);
    *first = false;
}

static void put_int(struct strbuf *out, bool *first, const char *key, long long value)
{
    strbuf_addf(out, "%s\"%s\":%lld", *first ? "" : ",", key, value);
    *first = false;
}

/*
 * The summary a list row needs (issue 14: a whole job is ~930 bytes of JSON
 * for a ~83-byte row), written straight to text: building it as a jansson
 * tree and dumping that cost ~19 µs a job, most of it in malloc.
 */
void jobspec_summary_write(const struct jobspec *job, struct strbuf *out)
{
    bool first = true;
    strbuf_addc(out, '{');
    put_str(out, &first, "name", job->name);
    put_str(out, &first, "display_name", job->display_name);
    put_str(out, &first, "uid", job->uid);
    if (job->framework != FRAMEWORK_UNSPECIFIED)
        put_str(out, &first, "framework", enum_name(&framework_names, (int)job->framework));
    if (job->resource_pool.name) {
        strbuf_adds(out, first ? "\"resource_pool\":{" : ",\"resource_pool\":{");
        bool in = true;
        put_str(out, &in, "name", job->resource_pool.name);
        strbuf_addc(out, '}');
        first = false;
    }
    if (job->ownership.user_name) { /* who created it: the live view's "mine" */
        strbuf_adds(out, first ? "\"ownership\":{" : ",\"ownership\":{");
        bool in = true;
        put_str(out, &in, "user_name", job->ownership.user_name);
        strbuf_addc(out, '}');
        first = false;
    }
    strbuf_adds(out, first ? "\"scheduling\":{" : ",\"scheduling\":{");
    first = false;
    bool in = true;
    if (job->scheduling.priority != PRIORITY_UNSPECIFIED)
        put_str(out, &in, "priority", enum_name(&priority_names, (int)job->scheduling.priority));
    if (job->scheduling.quota_type == QUOTA_TYPE_SPOT) /* the row tells idle from the rest */
        put_str(out, &in, "quota_type",
                enum_name(&quota_type_names, (int)job->scheduling.quota_type));
    strbuf_addc(out, '}');
    const struct role *w = jobspec_worker(job);
    if (w) {
        strbuf_adds(out, ",\"roles\":[{");
        in = true;
        put_str(out, &in, "name", w->name);
        if (w->has_total_replicas)
            put_int(out, &in, "total_replicas", w->total_replicas);
        strbuf_adds(out, in ? "\"resource_spec\":[" : ",\"resource_spec\":[");
        for (size_t i = 0; i < w->resource_spec_count; i++) {
            const struct resource_spec_ref *r = &w->resource_spec[i];
            bool s = true;
            strbuf_adds(out, i ? ",{" : "{");
            put_str(out, &s, "name", r->name);
            if (r->has_replicas)
                put_int(out, &s, "replicas", r->replicas);
            if (i == 0)
                put_str(out, &s, "description", r->description);
            strbuf_addc(out, '}');
        }
        strbuf_adds(out, "]}]");
    }
    if (job->fault_tolerance.has_backoff_limit) {
        strbuf_adds(out, ",\"fault_tolerance\":{");
        in = true;
        put_int(out, &in, "backoff_limit", job->fault_tolerance.backoff_limit);
        strbuf_addc(out, '}');
    }
    put_str(out, &first, "state", enum_name(&job_state_names, (int)job->state));
    put_str(out, &first, "state_message", job->state_message);
    if (job->has_restart_count)
        put_int(out, &first, "restart_count", job->restart_count);
    if (job->has_ready_workers)
        put_int(out, &first, "ready_workers", job->ready_workers);
    if (job->has_faulty_workers && job->faulty_workers) /* absent: none */
        put_int(out, &first, "faulty_workers", job->faulty_workers);
    put_str(out, &first, "nodes", job->nodes); /* the jobs view's NODE */
    put_str(out, &first, "create_time", job->create_time);
    /* the jobs view's DURATION: the last start, and when that run ended */
    put_str(out, &first, "start_time", job->start_time);
    put_str(out, &first, "suspend_time", job->suspend_time);
    put_str(out, &first, "complete_time", job->complete_time);
    strbuf_addc(out, '}');
}

json_t *jobspec_summary_to_json(const struct jobspec *job)
{
    struct strbuf text = STRBUF_INIT;
    jobspec_summary_write(job, &text);
    json_t *j = json_loadb(text.buf, text.len, 0, NULL);
    strbuf_free(&text);
    return j ? j : json_object();
}
