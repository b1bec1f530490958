/*
 * jobspec: ownership, copying and comparison of the job model, and the
 * enum name tables shared by every codec. See jobspec.h.
 */
#include "api/jobspec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/jobspec_json.h"
#include "api/schema.h"
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

void jobspec_init(struct jobspec *job)
{
    memset(job, 0, sizeof *job);
}

/* Every field the schema table names (api/jobspec_json.c), kept fields too. */
void jobspec_free(struct jobspec *job)
{
    schema_free(jobspec_schema(), job);
    jobspec_init(job);
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

/* A field added to the table is copied and compared with no change here. */
/* Moves *from into *to (NULL left behind): what jobspec_free of the holder then frees. */
static void take(char **to, char **from)
{
    *to = *from;
    *from = NULL;
}

void jobspec_copy_for_submit(struct jobspec *dst, const struct jobspec *src)
{
    jobspec_copy(dst, src);
    /* The server's fields move into a job that is freed whole: nothing is missed or leaked. */
    struct jobspec out;
    jobspec_init(&out);
    take(&out.subscription_name, &dst->subscription_name);
    take(&out.resource_group_name, &dst->resource_group_name);
    take(&out.zone, &dst->zone);
    take(&out.name, &dst->name);
    take(&out.uid, &dst->uid);
    take(&out.id, &dst->id);
    take(&out.resource_pool.display_name, &dst->resource_pool.display_name);
    take(&out.state_message, &dst->state_message);
    take(&out.nodes, &dst->nodes);
    take(&out.state_other, &dst->state_other);
    take(&out.create_time, &dst->create_time);
    take(&out.start_time, &dst->start_time);
    take(&out.suspend_time, &dst->suspend_time);
    take(&out.update_time, &dst->update_time);
    take(&out.complete_time, &dst->complete_time);
    take(&out.delete_time, &dst->delete_time);
    out.ownership = dst->ownership;
    memset(&dst->ownership, 0, sizeof dst->ownership);
    jobspec_free(&out);
    for (size_t i = 0; i < dst->role_count; i++)
        for (size_t j = 0; j < dst->roles[i].resource_spec_count; j++) {
            free(dst->roles[i].resource_spec[j].description);
            dst->roles[i].resource_spec[j].description = NULL;
        }
    dst->state = JOB_STATE_UNSPECIFIED;
    dst->has_restart_count = false;
    dst->has_ready_workers = false;
    dst->has_faulty_workers = false;
    dst->has_root_mapping = false;
}

void jobspec_copy(struct jobspec *dst, const struct jobspec *src)
{
    jobspec_init(dst);
    schema_copy(jobspec_schema(), dst, src);
}

bool jobspec_equal(const struct jobspec *a, const struct jobspec *b)
{
    return schema_equal(jobspec_schema(), a, b);
}

const struct role *jobspec_worker(const struct jobspec *job)
{
    for (size_t i = 0; i < job->role_count; i++)
        if (job->roles[i].name == NULL || strcmp(job->roles[i].name, JOBSPEC_ROLE_NAME) == 0)
            return &job->roles[i];
    return job->role_count ? &job->roles[0] : NULL;
}

int jobspec_replicas(const struct jobspec *job)
{
    const struct role *r = jobspec_worker(job);
    if (r == NULL)
        return 1;
    if (r->has_total_replicas)
        return r->total_replicas > 0 ? r->total_replicas : 1;
    if (r->resource_spec_count && r->resource_spec[0].has_replicas)
        return r->resource_spec[0].replicas > 0 ? r->resource_spec[0].replicas : 1;
    return 1;
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

bool framework_pytorch_style(enum framework fw)
{
    return fw == FRAMEWORK_PYTORCH_DDP || fw == FRAMEWORK_PYTORCH || fw == FRAMEWORK_SENSEPARROTS ||
           fw == FRAMEWORK_SENSEPARROTS_DDP;
}

void jobspec_worker_name(const struct jobspec *job, int index, char *buf, size_t size)
{
    enum framework fw = job ? job->framework : FRAMEWORK_UNSPECIFIED;
    if (size == 0)
        return;
    if (framework_pytorch_style(fw) && index == 0)
        snprintf(buf, size, "master-0");
    else if (framework_pytorch_style(fw))
        snprintf(buf, size, "worker-%d", index - 1);
    else if (fw == FRAMEWORK_TENSORFLOW_PS && index == 0)
        snprintf(buf, size, "ps-0");
    else if (fw == FRAMEWORK_TENSORFLOW_PS)
        snprintf(buf, size, "worker-%d", index - 1);
    else
        snprintf(buf, size, "worker-%d", index);
}

const char *jobspec_scheduler_id(const struct jobspec *job)
{
    return job->id && *job->id && strchr(job->id, '/') == NULL ? job->id : NULL;
}
