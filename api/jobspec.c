/*
 * jobspec: ownership, copying and comparison of the job model, and the
 * enum name tables shared by every codec. See jobspec.h.
 */
#include "api/jobspec.h"

#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

#define NAMES(arr)                                                                                 \
    {                                                                                              \
        arr, sizeof arr / sizeof arr[0]                                                            \
    }

static const char *const framework_tab[] = {
    "FRAMEWORK_UNSPECIFIED",
    "PYTORCH_DDP",
    "TENSORFLOW_PS",
    "SENSEPARROTS",
    "MPI",
    "PYTORCH",
    "TENSORFLOW",
    "SENSEPARROTS_DDP",
};
static const char *const priority_tab[] = {"PRIORITY_UNSPECIFIED", "NORMAL", "HIGH", "HIGHEST"};
static const char *const quota_type_tab[] = {"JOB_QUOTA_TYPE_UNSPECIFIED", "RESERVED", "SPOT"};
static const char *const scoring_tab[] = {"SCORING_STRATEGY_TYPE_UNSPECIFIED", "MOST_ALLOCATED",
                                          "LEAST_ALLOCATED"};
static const char *const ft_action_tab[] = {"ACTION_UNSPECIFIED", "RESTART_JOB", "RESTART_POD",
                                            "FAIL_JOB"};
static const char *const mount_type_tab[] = {"MOUNT_TYPE_UNSPECIFIED", "PV_AFS", "PV_ACS",
                                             "PV_AFS_MODEL", "PV_AFS_TENSORBOARD"};
static const char *const job_state_tab[] = {
    "STATE_UNSPECIFIED", "WAITING", "INIT",       "QUEUEING",   "CREATING",
    "STARTING",          "RUNNING", "RESTARTING", "SUSPENDING", "SUSPENDED",
    "SUCCEEDED",         "FAILED",  "DELETING",   "DELETED",    "RECOVERING",
};

const struct enum_names framework_names = NAMES(framework_tab);
const struct enum_names priority_names = NAMES(priority_tab);
const struct enum_names quota_type_names = NAMES(quota_type_tab);
const struct enum_names scoring_strategy_names = NAMES(scoring_tab);
const struct enum_names ft_action_names = NAMES(ft_action_tab);
const struct enum_names mount_type_names = NAMES(mount_type_tab);
const struct enum_names job_state_names = NAMES(job_state_tab);

const char *enum_name(const struct enum_names *e, int value)
{
    if (value < 0 || (size_t)value >= e->count)
        return "?";
    return e->names[value];
}

int enum_value(const struct enum_names *e, const char *name)
{
    for (size_t i = 0; i < e->count; i++)
        if (strcmp(e->names[i], name) == 0)
            return (int)i;
    return -1;
}

void jobspec_init(struct jobspec *job)
{
    memset(job, 0, sizeof *job);
}

static void role_free(struct role *r)
{
    free(r->name);
    for (size_t i = 0; i < r->resource_spec_count; i++) {
        free(r->resource_spec[i].name);
        free(r->resource_spec[i].description);
    }
    free(r->resource_spec);
    free(r->startup_script);
    free(r->image_path);
}

void jobspec_free(struct jobspec *job)
{
    free(job->subscription_name);
    free(job->resource_group_name);
    free(job->zone);
    free(job->workspace_name);
    free(job->name);
    free(job->display_name);
    free(job->uid);
    free(job->id);
    for (size_t i = 0; i < job->role_count; i++)
        role_free(&job->roles[i]);
    free(job->roles);
    for (size_t i = 0; i < job->env_count; i++) {
        free(job->env[i].key);
        free(job->env[i].value);
    }
    free(job->env);
    for (size_t i = 0; i < job->mount_count; i++) {
        struct mount *m = &job->mount[i];
        free(m->id);
        free(m->subdir);
        free(m->mount_path);
        free(m->zone);
        free(m->endpoint);
    }
    free(job->mount);
    free(job->tensorboard.log_path);
    free(job->resource_pool.name);
    free(job->resource_pool.zone);
    free(job->resource_pool.vpc_id);
    free(job->resource_pool.display_name);
    for (size_t i = 0; i < job->fault_tolerance.rule_count; i++)
        free(job->fault_tolerance.rules[i].exit_codes);
    free(job->fault_tolerance.rules);
    free(job->ssh.config_mount_path);
    free(job->ownership.user_name);
    free(job->ownership.user_id);
    free(job->ownership.requestor_id);
    free(job->ownership.tenant_id);
    free(job->state_message);
    free(job->create_time);
    free(job->start_time);
    free(job->suspend_time);
    free(job->update_time);
    free(job->complete_time);
    free(job->delete_time);
    jobspec_init(job);
}

static char *dup_or_null(const char *s)
{
    return s ? xstrdup(s) : NULL;
}

/* Grows *arr (of *count elements of size bytes) by one zeroed element. */
static void *append(void *arrp, size_t *count, size_t size)
{
    void **arr = arrp;
    *arr = xreallocarray(*arr, *count + 1, size);
    char *elem = (char *)*arr + *count * size;
    memset(elem, 0, size);
    (*count)++;
    return elem;
}

struct role *jobspec_add_role(struct jobspec *job)
{
    return append(&job->roles, &job->role_count, sizeof *job->roles);
}

struct env_var *jobspec_add_env(struct jobspec *job)
{
    return append(&job->env, &job->env_count, sizeof *job->env);
}

struct mount *jobspec_add_mount(struct jobspec *job)
{
    return append(&job->mount, &job->mount_count, sizeof *job->mount);
}

struct ft_rule *jobspec_add_rule(struct jobspec *job)
{
    return append(&job->fault_tolerance.rules, &job->fault_tolerance.rule_count,
                  sizeof *job->fault_tolerance.rules);
}

struct resource_spec_ref *role_add_spec(struct role *role)
{
    return append(&role->resource_spec, &role->resource_spec_count, sizeof *role->resource_spec);
}

void jobspec_copy(struct jobspec *dst, const struct jobspec *src)
{
    /* Start from a bitwise copy for the scalars, then replace every pointer. */
    *dst = *src;
    dst->subscription_name = dup_or_null(src->subscription_name);
    dst->resource_group_name = dup_or_null(src->resource_group_name);
    dst->zone = dup_or_null(src->zone);
    dst->workspace_name = dup_or_null(src->workspace_name);
    dst->name = dup_or_null(src->name);
    dst->display_name = dup_or_null(src->display_name);
    dst->uid = dup_or_null(src->uid);
    dst->id = dup_or_null(src->id);

    dst->roles = NULL;
    dst->role_count = 0;
    for (size_t i = 0; i < src->role_count; i++) {
        const struct role *s = &src->roles[i];
        struct role *d = jobspec_add_role(dst);
        *d = *s;
        d->name = dup_or_null(s->name);
        d->startup_script = dup_or_null(s->startup_script);
        d->image_path = dup_or_null(s->image_path);
        d->resource_spec = NULL;
        d->resource_spec_count = 0;
        for (size_t j = 0; j < s->resource_spec_count; j++) {
            struct resource_spec_ref *ds = role_add_spec(d);
            *ds = s->resource_spec[j];
            ds->name = dup_or_null(s->resource_spec[j].name);
            ds->description = dup_or_null(s->resource_spec[j].description);
        }
    }
    dst->env = NULL;
    dst->env_count = 0;
    for (size_t i = 0; i < src->env_count; i++) {
        struct env_var *d = jobspec_add_env(dst);
        d->key = dup_or_null(src->env[i].key);
        d->value = dup_or_null(src->env[i].value);
    }
    dst->mount = NULL;
    dst->mount_count = 0;
    for (size_t i = 0; i < src->mount_count; i++) {
        const struct mount *s = &src->mount[i];
        struct mount *d = jobspec_add_mount(dst);
        d->type = s->type;
        d->id = dup_or_null(s->id);
        d->subdir = dup_or_null(s->subdir);
        d->mount_path = dup_or_null(s->mount_path);
        d->zone = dup_or_null(s->zone);
        d->endpoint = dup_or_null(s->endpoint);
    }
    dst->tensorboard.log_path = dup_or_null(src->tensorboard.log_path);
    dst->resource_pool.name = dup_or_null(src->resource_pool.name);
    dst->resource_pool.zone = dup_or_null(src->resource_pool.zone);
    dst->resource_pool.vpc_id = dup_or_null(src->resource_pool.vpc_id);
    dst->resource_pool.display_name = dup_or_null(src->resource_pool.display_name);
    dst->fault_tolerance.rules = NULL;
    dst->fault_tolerance.rule_count = 0;
    for (size_t i = 0; i < src->fault_tolerance.rule_count; i++) {
        struct ft_rule *d = jobspec_add_rule(dst);
        *d = src->fault_tolerance.rules[i];
        d->exit_codes = dup_or_null(src->fault_tolerance.rules[i].exit_codes);
    }
    dst->ssh.config_mount_path = dup_or_null(src->ssh.config_mount_path);
    dst->ownership.user_name = dup_or_null(src->ownership.user_name);
    dst->ownership.user_id = dup_or_null(src->ownership.user_id);
    dst->ownership.requestor_id = dup_or_null(src->ownership.requestor_id);
    dst->ownership.tenant_id = dup_or_null(src->ownership.tenant_id);
    dst->state_message = dup_or_null(src->state_message);
    dst->create_time = dup_or_null(src->create_time);
    dst->start_time = dup_or_null(src->start_time);
    dst->suspend_time = dup_or_null(src->suspend_time);
    dst->update_time = dup_or_null(src->update_time);
    dst->complete_time = dup_or_null(src->complete_time);
    dst->delete_time = dup_or_null(src->delete_time);
}

static bool str_eq(const char *a, const char *b)
{
    if (a == NULL || b == NULL)
        return a == b;
    return strcmp(a, b) == 0;
}

/* Optional scalars are equal when both are absent, or both present and equal. */
#define OPT_EQ(a, b, f) ((a).has_##f == (b).has_##f && (!(a).has_##f || (a).f == (b).f))

static bool role_equal(const struct role *a, const struct role *b)
{
    if (!str_eq(a->name, b->name) || !str_eq(a->startup_script, b->startup_script) ||
        !str_eq(a->image_path, b->image_path) || !OPT_EQ(*a, *b, total_replicas) ||
        a->resource_spec_count != b->resource_spec_count)
        return false;
    for (size_t i = 0; i < a->resource_spec_count; i++) {
        const struct resource_spec_ref *x = &a->resource_spec[i], *y = &b->resource_spec[i];
        if (!str_eq(x->name, y->name) || !str_eq(x->description, y->description) ||
            !OPT_EQ(*x, *y, replicas))
            return false;
    }
    return true;
}

static bool mount_equal(const struct mount *a, const struct mount *b)
{
    return a->type == b->type && str_eq(a->id, b->id) && str_eq(a->subdir, b->subdir) &&
           str_eq(a->mount_path, b->mount_path) && str_eq(a->zone, b->zone) &&
           str_eq(a->endpoint, b->endpoint);
}

static bool rule_equal(const struct ft_rule *a, const struct ft_rule *b)
{
    return str_eq(a->exit_codes, b->exit_codes) && a->action == b->action &&
           OPT_EQ(*a, *b, mark_node_unschedulable);
}

static bool sections_equal(const struct jobspec *a, const struct jobspec *b)
{
    const struct scheduling *sa = &a->scheduling, *sb = &b->scheduling;
    if (sa->present != sb->present || sa->priority != sb->priority ||
        sa->quota_type != sb->quota_type || !OPT_EQ(*sa, *sb, preemptible) ||
        sa->scoring_strategy != sb->scoring_strategy)
        return false;
    const struct resource_pool *pa = &a->resource_pool, *pb = &b->resource_pool;
    if (pa->present != pb->present || !str_eq(pa->name, pb->name) || !str_eq(pa->zone, pb->zone) ||
        !str_eq(pa->vpc_id, pb->vpc_id) || !str_eq(pa->display_name, pb->display_name))
        return false;
    const struct fault_tolerance *fa = &a->fault_tolerance, *fb = &b->fault_tolerance;
    if (fa->present != fb->present || !OPT_EQ(*fa, *fb, backoff_limit) ||
        fa->rule_count != fb->rule_count)
        return false;
    for (size_t i = 0; i < fa->rule_count; i++)
        if (!rule_equal(&fa->rules[i], &fb->rules[i]))
            return false;
    if (a->ssh.present != b->ssh.present || !OPT_EQ(a->ssh, b->ssh, auto_key_setup) ||
        !str_eq(a->ssh.config_mount_path, b->ssh.config_mount_path))
        return false;
    if (a->tensorboard.present != b->tensorboard.present ||
        !str_eq(a->tensorboard.log_path, b->tensorboard.log_path))
        return false;
    if (a->barrier.present != b->barrier.present ||
        !OPT_EQ(a->barrier, b->barrier, enable_ethernet_ping) ||
        !OPT_EQ(a->barrier, b->barrier, enable_roce_mesh_ping))
        return false;
    const struct ownership *oa = &a->ownership, *ob = &b->ownership;
    return oa->present == ob->present && str_eq(oa->user_name, ob->user_name) &&
           str_eq(oa->user_id, ob->user_id) && str_eq(oa->requestor_id, ob->requestor_id) &&
           str_eq(oa->tenant_id, ob->tenant_id);
}

bool jobspec_equal(const struct jobspec *a, const struct jobspec *b)
{
    if (!str_eq(a->subscription_name, b->subscription_name) ||
        !str_eq(a->resource_group_name, b->resource_group_name) || !str_eq(a->zone, b->zone) ||
        !str_eq(a->workspace_name, b->workspace_name) || !str_eq(a->name, b->name) ||
        !str_eq(a->display_name, b->display_name) || !str_eq(a->uid, b->uid) ||
        !str_eq(a->id, b->id) || a->framework != b->framework || a->state != b->state ||
        !str_eq(a->state_message, b->state_message) || !OPT_EQ(*a, *b, root_mapping) ||
        !OPT_EQ(*a, *b, restart_count) || !OPT_EQ(*a, *b, ready_workers) ||
        !str_eq(a->create_time, b->create_time) || !str_eq(a->start_time, b->start_time) ||
        !str_eq(a->suspend_time, b->suspend_time) || !str_eq(a->update_time, b->update_time) ||
        !str_eq(a->complete_time, b->complete_time) || !str_eq(a->delete_time, b->delete_time))
        return false;
    if (a->role_count != b->role_count || a->env_count != b->env_count ||
        a->mount_count != b->mount_count)
        return false;
    for (size_t i = 0; i < a->role_count; i++)
        if (!role_equal(&a->roles[i], &b->roles[i]))
            return false;
    for (size_t i = 0; i < a->env_count; i++)
        if (!str_eq(a->env[i].key, b->env[i].key) || !str_eq(a->env[i].value, b->env[i].value))
            return false;
    for (size_t i = 0; i < a->mount_count; i++)
        if (!mount_equal(&a->mount[i], &b->mount[i]))
            return false;
    return sections_equal(a, b);
}

const struct role *jobspec_worker(const struct jobspec *job)
{
    for (size_t i = 0; i < job->role_count; i++)
        if (job->roles[i].name == NULL || strcmp(job->roles[i].name, JOBSPEC_ROLE_NAME) == 0)
            return &job->roles[i];
    return job->role_count ? &job->roles[0] : NULL;
}

bool jobspec_is_idle(const struct jobspec *job)
{
    return job->scheduling.quota_type == QUOTA_TYPE_SPOT;
}

const char *framework_name_prefix(enum framework fw)
{
    switch (fw) {
    case FRAMEWORK_TENSORFLOW_PS:
    case FRAMEWORK_TENSORFLOW:
        return "tf";
    case FRAMEWORK_SENSEPARROTS:
    case FRAMEWORK_SENSEPARROTS_DDP:
        return "sp";
    case FRAMEWORK_MPI:
        return "mpi";
    default:
        return "pt";
    }
}

const char *framework_label(enum framework fw)
{
    switch (fw) {
    case FRAMEWORK_PYTORCH_DDP:
        return "PyTorch DDP";
    case FRAMEWORK_TENSORFLOW_PS:
        return "TensorFlow PS";
    case FRAMEWORK_SENSEPARROTS:
        return "SenseParrots";
    case FRAMEWORK_MPI:
        return "MPI";
    case FRAMEWORK_PYTORCH:
        return "PyTorch";
    case FRAMEWORK_TENSORFLOW:
        return "TensorFlow";
    case FRAMEWORK_SENSEPARROTS_DDP:
        return "SenseParrots DDP";
    case FRAMEWORK_UNSPECIFIED:
        break;
    }
    return "unspecified";
}
