/*
 * jobspec: the job model — SenseCore ACP's TrainingJob as a C struct.
 *
 * Every other part of trainjob speaks this one type: the files users write,
 * validation, the wizard, every backend driver and the local engine. Field
 * names follow the ACP JSON names (snake_case); enums are the API's upper-case
 * values. A struct jobspec owns all its memory; jobspec_free releases it.
 *
 * Absent and empty are different things in a file and must survive a round
 * trip: strings are NULL when absent, optional objects carry `present`, and
 * optional scalars carry a `has_` flag.
 *
 * A job read from a server and written back is the same job: every field of
 * ACP's TrainingJob has a member, and each object keeps the fields trainjob
 * does not know in `extra` (a jansson mapping, NULL when none), written back
 * as they came. scheduling.preemptible is trainjob's own (trainjobd, Slurm)
 * and never sent to ACP (api/acp.c).
 */
#ifndef API_JOBSPEC_H
#define API_JOBSPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/enumnames.h" /* struct enum_names, enum_name, enum_value */

struct json_t; /* jansson's json_t: the fields kept as they came */

enum framework {
    FRAMEWORK_UNSPECIFIED,
    FRAMEWORK_PYTORCH_DDP,
    FRAMEWORK_TENSORFLOW_PS,
    FRAMEWORK_SENSEPARROTS,
    FRAMEWORK_MPI,
    FRAMEWORK_PYTORCH,
    FRAMEWORK_TENSORFLOW,
    FRAMEWORK_SENSEPARROTS_DDP,
};

enum priority {
    PRIORITY_UNSPECIFIED,
    PRIORITY_NORMAL,
    PRIORITY_HIGH,
    PRIORITY_HIGHEST,
};

/* RESERVED = standard resources, SPOT = idle resources. */
enum quota_type {
    QUOTA_TYPE_UNSPECIFIED,
    QUOTA_TYPE_RESERVED,
    QUOTA_TYPE_SPOT,
};

enum scoring_strategy {
    SCORING_UNSPECIFIED,
    SCORING_MOST_ALLOCATED,
    SCORING_LEAST_ALLOCATED,
};

enum ft_action {
    FT_ACTION_UNSPECIFIED,
    FT_ACTION_RESTART_JOB,
    FT_ACTION_RESTART_POD,
    FT_ACTION_FAIL_JOB,
};

enum mount_type {
    MOUNT_TYPE_UNSPECIFIED,
    MOUNT_TYPE_PV_AFS,
    MOUNT_TYPE_PV_ACS,
    MOUNT_TYPE_PV_AFS_MODEL,
    MOUNT_TYPE_PV_AFS_TENSORBOARD,
};

enum job_state {
    JOB_STATE_UNSPECIFIED,
    JOB_STATE_WAITING,
    JOB_STATE_INIT,
    JOB_STATE_QUEUEING,
    JOB_STATE_CREATING,
    JOB_STATE_STARTING,
    JOB_STATE_RUNNING,
    JOB_STATE_RESTARTING,
    JOB_STATE_SUSPENDING,
    JOB_STATE_SUSPENDED,
    JOB_STATE_SUCCEEDED,
    JOB_STATE_FAILED,
    JOB_STATE_DELETING,
    JOB_STATE_DELETED,
    JOB_STATE_RECOVERING,
};

extern const struct enum_names framework_names;
extern const struct enum_names priority_names;
extern const struct enum_names quota_type_names;
extern const struct enum_names scoring_strategy_names;
extern const struct enum_names ft_action_names;
extern const struct enum_names mount_type_names;
extern const struct enum_names job_state_names;

/* roles[].resource_spec[] */
struct resource_spec_ref {
    char *name;
    bool has_replicas; /* per-spec replicas: rejected together with total_replicas */
    int32_t replicas;
    char *description;       /* output only, e.g. "1xA100-80GB" */
    struct json_t *limits;   /* output only: {cpu, memory, device} as strings */
    struct json_t *requests; /* output only: the same keys */
    struct json_t *extra;
};

/* roles[]: ACP has one role, named "Worker". */
struct role {
    char *name;
    struct resource_spec_ref *resource_spec;
    size_t resource_spec_count;
    bool has_total_replicas;
    int32_t total_replicas;
    char *startup_script;
    char *image_path;
    struct json_t *extra;
};

struct env_var {
    char *key;
    char *value;
    struct json_t *extra;
};

/* mount[]: an AFS (or ACS) volume mounted into every worker. */
struct mount {
    enum mount_type type;
    char *type_other; /* a type this build does not know (PV_BOS): kept as text, type left 0 */
    char *id;
    char *subdir;
    char *mount_path;
    char *zone;
    char *endpoint;
    char *access_mode;  /* seen in replies: VOLUME_ACCESS_MODE_UNSPECIFIED, … (kept as text) */
    char *display_name; /* seen in replies */
    struct json_t *extra;
};

/* fault_tolerance.rules[] */
struct ft_rule {
    char *exit_codes; /* NULL or "": any exit code */
    enum ft_action action;
    char *action_other; /* an action this build does not know (RESTART_NODE), kept as text */
    bool has_mark_node_unschedulable;
    bool mark_node_unschedulable;
    struct json_t *extra;
};

struct fault_tolerance {
    bool present;
    bool has_backoff_limit;
    int32_t backoff_limit; /* -1 … 99; 0 never restart, -1 forever */
    struct ft_rule *rules;
    size_t rule_count;
    struct json_t *extra;
};

struct scheduling {
    bool present;
    enum priority priority;
    char *priority_other; /* values this build does not know (URGENT, ON_DEMAND), kept as text */
    enum quota_type quota_type;
    char *quota_type_other;
    bool has_preemptible;
    bool preemptible; /* idle (SPOT) jobs only; trainjob's own, never sent to ACP */
    enum scoring_strategy scoring_strategy;
    char *scoring_strategy_other;
    struct json_t *scoring_extra; /* scoring_strategy's fields trainjob does not know */
    struct json_t *extra;
};

struct resource_pool {
    bool present;
    char *name;
    char *zone;
    char *vpc_id;
    char *display_name; /* output only */
    struct json_t *extra;
};

struct ssh_config {
    bool present;
    bool has_auto_key_setup;
    bool auto_key_setup;
    char *config_mount_path;
    struct json_t *extra;
};

struct tensorboard {
    bool present;
    char *log_path;
    struct json_t *extra;
};

/* barrier: an init step checking that workers can reach each other. */
struct barrier {
    bool present;
    bool has_enable_ethernet_ping;
    bool enable_ethernet_ping;
    bool has_enable_roce_mesh_ping;
    bool enable_roce_mesh_ping;
    struct json_t *extra;
};

/* async_checkpoint [beta]: on when max_ckpt_rounds is set. */
struct async_checkpoint {
    bool present;
    bool has_max_ckpt_rounds;
    int32_t max_ckpt_rounds;
    struct json_t *extra;
};

/* lme [beta, deprecated for fault_tolerance]: environment checks and retries. */
struct lme {
    bool present;
    bool has_enable_warmingup;
    bool enable_warmingup; /* diagnose the environment before the run */
    bool has_enable_checker;
    bool enable_checker; /* … and after it */
    bool has_enable_health_monitor;
    bool enable_health_monitor;
    bool has_max_retries;
    int32_t max_retries;
    bool has_current_retries;
    int32_t current_retries; /* output only */
    struct json_t *extra;
};

/* ownership: output only. */
struct ownership {
    bool present;
    char *user_name;
    char *user_id;
    char *requestor_id;
    char *tenant_id;
    struct json_t *extra;
};

struct jobspec {
    /* where the job lives */
    char *subscription_name;   /* output only */
    char *resource_group_name; /* output only */
    char *zone;                /* output only: the workspace zone */
    char *workspace_name;      /* in files: the workspace to submit to */

    /* identity */
    char *name; /* optional: generated when absent */
    char *display_name;
    char *uid; /* output only */
    char *id;  /* output only */

    enum framework framework;
    char *framework_other; /* a framework this build does not know (JAX), kept as text */
    struct role *roles;
    size_t role_count;
    struct env_var *env;
    size_t env_count;
    struct mount *mount;
    size_t mount_count;
    struct tensorboard tensorboard;
    struct scheduling scheduling;
    struct resource_pool resource_pool;
    struct fault_tolerance fault_tolerance;
    struct ssh_config ssh;
    struct barrier barrier;
    struct async_checkpoint async_checkpoint;
    struct lme lme;
    char *fine_tuning_specs; /* [beta] a JSON text, kept as a string */
    struct json_t *metadata; /* seen in replies ({labels: …}); kept as it came */

    /* output only: status */
    struct ownership ownership;
    enum job_state state;
    char *state_other;   /* a state this build does not know (PREEMPTED), kept as text */
    char *state_message; /* why a job waits or failed (trainjobd; absent on ACP) */
    bool has_restart_count;
    int32_t restart_count; /* restarts used (trainjobd) */
    bool has_ready_workers;
    int32_t ready_workers; /* workers running now (trainjobd) */
    bool has_faulty_workers;
    int32_t faulty_workers; /* workers that failed, restarted or exited non-zero (trainjobd) */
    char *nodes;            /* the nodes its live workers are on, "n1,n2" (trainjobd) */
    bool has_root_mapping;
    bool root_mapping;
    char *create_time;
    char *start_time;
    char *suspend_time;
    char *update_time;
    char *complete_time;
    char *delete_time;

    struct json_t *extra; /* fields of a newer server, kept as they came */
};

#define JOBSPEC_ROLE_NAME "Worker"
#define JOBSPEC_DEFAULT_SSH_PATH "/sensecore/compute/acp/ssh/ssh_config"
/*
 * Where trainjobd's sandbox keeps what the platform gives a worker: its
 * working directory (PLATFORM_DIR "/work", also $HOME), read-only job files
 * (PLATFORM_DIR "/platform": the MPI hostfile), its startup script and init.
 * No mount path may be there (api/validate.c), so no mount can hide them.
 */
#define JOBSPEC_PLATFORM_DIR "/trainjob"

void jobspec_init(struct jobspec *job);
void jobspec_free(struct jobspec *job);
/* A deep copy of src into dst (dst is overwritten, not freed). */
void jobspec_copy(struct jobspec *dst, const struct jobspec *src);
/*
 * A new job made from a fetched one (clone): a deep copy of src into dst
 * without what the server sets (state, times, counts, ownership, uid, id,
 * the location fields, spec descriptions — every field api/validate calls
 * output-only) and without its name, which belongs to the old job.
 */
void jobspec_copy_for_submit(struct jobspec *dst, const struct jobspec *src);
/* Deep equality of every field, absent-vs-empty included. */
bool jobspec_equal(const struct jobspec *a, const struct jobspec *b);

/* Appends a zeroed element and returns it. */
struct role *jobspec_add_role(struct jobspec *job);
struct env_var *jobspec_add_env(struct jobspec *job);
struct mount *jobspec_add_mount(struct jobspec *job);
struct ft_rule *jobspec_add_rule(struct jobspec *job);
struct resource_spec_ref *role_add_spec(struct role *role);

/* The single Worker role, or NULL when the job has none. */
const struct role *jobspec_worker(const struct jobspec *job);
/*
 * The workers the job runs: the worker role's total_replicas, else its
 * first resource spec's replicas (validation's rule); at least 1.
 */
int jobspec_replicas(const struct jobspec *job);
/* True when the job runs on idle resources (quota_type SPOT). */
bool jobspec_is_idle(const struct jobspec *job);
/* A job name's prefix for the framework: "pt", "tf", "sp", "mpi". */
const char *framework_name_prefix(enum framework fw);
/* A human name: "PyTorch DDP", "TensorFlow PS", … */
const char *framework_label(enum framework fw);
/* PyTorch-style jobs: a master, workers, and the MASTER_ADDR family of variables. */
bool framework_pytorch_style(enum framework fw);
/*
 * Worker index's name, as ACP shows it and every backend names it:
 *   PyTorch, PyTorch DDP, SenseParrots, SenseParrots DDP:
 *       index 0 "master-0" (also for a single worker), then "worker-0", "worker-1", …
 *   TensorFlow PS: index 0 "ps-0", then "worker-0", …
 *   MPI, TensorFlow and anything else: "worker-<index>".
 */
void jobspec_worker_name(const struct jobspec *job, int index, char *buf, size_t size);
/*
 * The id the job's own scheduler knows it by, for an ID column: Slurm's job
 * id ("4012"); NULL where the id is only the job's resource path (ACP,
 * trainjobd: ".../trainingJobs/NAME", which says no more than its name).
 */
const char *jobspec_scheduler_id(const struct jobspec *job);

#endif
