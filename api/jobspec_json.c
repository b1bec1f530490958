/*
 * jobspec_json: the TrainingJob schema as api/schema tables — one
 * object_type per object of the API, fields in the order the form (and a
 * written file) presents them. Decoding and encoding are schema's.
 */
#include "api/jobspec_json.h"

#include <stddef.h>

#include "api/finding.h"
#include "api/jobspec.h"
#include "api/schema.h"

static const struct field spec_ref_fields[] = {
    F_STR(struct resource_spec_ref, name),
    F_OPT_INT32(struct resource_spec_ref, replicas),
    F_STR(struct resource_spec_ref, description),
};
static const struct object_type spec_ref_type =
    SCHEMA_ELEM(struct resource_spec_ref, spec_ref_fields);

static const struct field role_fields[] = {
    F_STR(struct role, name),
    F_OPT_INT32(struct role, total_replicas),
    F_LIST(struct role, resource_spec, resource_spec_count, spec_ref_type),
    F_STR(struct role, image_path),
    F_STR(struct role, startup_script),
};
static const struct object_type role_type = SCHEMA_ELEM(struct role, role_fields);

static const struct field env_fields[] = {
    F_STR(struct env_var, key),
    F_STR_OR_INT(struct env_var, value),
};
static const struct object_type env_type = SCHEMA_ELEM(struct env_var, env_fields);

static const struct field mount_fields[] = {
    F_ENUMERATION(struct mount, type, mount_type_names),
    F_STR(struct mount, id),
    F_STR(struct mount, subdir),
    F_STR(struct mount, mount_path),
    F_STR(struct mount, zone),
    F_STR(struct mount, endpoint),
};
static const struct object_type mount_type = SCHEMA_ELEM(struct mount, mount_fields);

static const struct field rule_fields[] = {
    F_STR_OR_INT(struct ft_rule, exit_codes),
    F_ENUMERATION(struct ft_rule, action, ft_action_names),
    F_OPT_BOOL(struct ft_rule, mark_node_unschedulable),
};
static const struct object_type rule_type = SCHEMA_ELEM(struct ft_rule, rule_fields);

static const struct field ft_fields[] = {
    F_OPT_INT32(struct fault_tolerance, backoff_limit),
    F_LIST(struct fault_tolerance, rules, rule_count, rule_type),
};
static const struct object_type ft_type = SCHEMA_OBJ(ft_fields);

/* scheduling.scoring_strategy is an object {type: …} holding one enum. */
static const struct field scoring_fields[] = {
    {"type", F_ENUM, 0, SCHEMA_NO_FLAG, &scoring_strategy_names, NULL, 0},
};
static const struct object_type scoring_type = SCHEMA_OBJ(scoring_fields);

static const struct field scheduling_fields[] = {
    F_ENUMERATION(struct scheduling, priority, priority_names),
    F_ENUMERATION(struct scheduling, quota_type, quota_type_names),
    F_OPT_BOOL(struct scheduling, preemptible),
    {"scoring_strategy", F_OBJECT, offsetof(struct scheduling, scoring_strategy), SCHEMA_NO_FLAG,
     NULL, &scoring_type, 0},
};
static const struct object_type scheduling_type = SCHEMA_OBJ(scheduling_fields);

static const struct field pool_fields[] = {
    F_STR(struct resource_pool, name),
    F_STR(struct resource_pool, zone),
    F_STR(struct resource_pool, vpc_id),
    F_STR(struct resource_pool, display_name),
};
static const struct object_type pool_type = SCHEMA_OBJ(pool_fields);

static const struct field ssh_fields[] = {
    F_OPT_BOOL(struct ssh_config, auto_key_setup),
    F_STR(struct ssh_config, config_mount_path),
};
static const struct object_type ssh_type = SCHEMA_OBJ(ssh_fields);

static const struct field tensorboard_fields[] = {
    F_STR(struct tensorboard, log_path),
};
static const struct object_type tensorboard_type = SCHEMA_OBJ(tensorboard_fields);

static const struct field barrier_fields[] = {
    F_OPT_BOOL(struct barrier, enable_ethernet_ping),
    F_OPT_BOOL(struct barrier, enable_roce_mesh_ping),
};
static const struct object_type barrier_type = SCHEMA_OBJ(barrier_fields);

static const struct field ownership_fields[] = {
    F_STR(struct ownership, user_name),
    F_STR(struct ownership, user_id),
    F_STR(struct ownership, requestor_id),
    F_STR(struct ownership, tenant_id),
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
    F_ENUMERATION(struct jobspec, framework, framework_names),
    F_SECTION(struct jobspec, resource_pool, pool_type),
    F_SECTION(struct jobspec, scheduling, scheduling_type),
    F_LIST(struct jobspec, roles, role_count, role_type),
    F_SECTION(struct jobspec, fault_tolerance, ft_type),
    F_LIST(struct jobspec, mount, mount_count, mount_type),
    F_LIST(struct jobspec, env, env_count, env_type),
    F_SECTION(struct jobspec, ssh, ssh_type),
    F_SECTION(struct jobspec, tensorboard, tensorboard_type),
    F_SECTION(struct jobspec, barrier, barrier_type),
    F_SECTION(struct jobspec, ownership, ownership_type),
    F_ENUMERATION(struct jobspec, state, job_state_names),
    F_STR(struct jobspec, state_message),
    F_OPT_INT32(struct jobspec, restart_count),
    F_OPT_INT32(struct jobspec, ready_workers),
    F_OPT_BOOL(struct jobspec, root_mapping),
    F_STR(struct jobspec, create_time),
    F_STR(struct jobspec, start_time),
    F_STR(struct jobspec, suspend_time),
    F_STR(struct jobspec, update_time),
    F_STR(struct jobspec, complete_time),
    F_STR(struct jobspec, delete_time),
};
static const struct object_type job_type = SCHEMA_OBJ(job_fields);

int jobspec_from_json(const json_t *root, enum jobspec_decode_mode mode, struct jobspec *job,
                      struct findings *fs)
{
    if (!json_is_object(root)) {
        findings_add(fs, SEVERITY_ERROR, "",
                     "expected a mapping of job fields at the top level, got %s",
                     root ? schema_type_name(root) : "nothing");
        return -1;
    }
    enum schema_mode m = mode == JOBSPEC_STRICT ? SCHEMA_STRICT : SCHEMA_LENIENT;
    return schema_decode(root, &job_type, job, m, "", fs) ? -1 : 0;
}

json_t *jobspec_to_json(const struct jobspec *job)
{
    return schema_encode(&job_type, job);
}
