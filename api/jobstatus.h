/*
 * jobstatus: what a backend reports about a running job beyond the job
 * itself — its workers (pods) and its events (state changes, scheduling,
 * preemptions, every fault decision). Shared by trainjobd, which produces
 * them, and the drivers and views, which read them. JSON codecs are schema
 * tables, lenient on read (servers may add fields).
 */
#ifndef API_JOBSTATUS_H
#define API_JOBSTATUS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/jobspec.h"

struct findings;
struct object_type;
struct strbuf;

enum worker_phase {
    WORKER_PHASE_UNSPECIFIED,
    WORKER_PENDING,
    WORKER_RUNNING,
    WORKER_SUCCEEDED,
    WORKER_FAILED,
    WORKER_TERMINATING,
};

extern const struct enum_names worker_phase_names; /* "Pending", "Running", … */

/* A container's resources: maps of strings keyed cpu, memory, device (ACP). */
struct container_resources {
    bool present;
    json_t *limits;
    json_t *requests;
    json_t *extra;
};

/* containers[] and init_containers[] of an ACP worker. */
struct worker_container {
    char *name;
    struct container_resources resources;
    char *device_type; /* containers only, e.g. "NVIDIA-H800" */
    json_t *extra;
};

/*
 * A worker's last end of its own, kept beside its current phase (kubectl's
 * "Last State"): a restarted worker still says why it went. Ends its engine
 * caused (a stop, a restart or preemption of the whole job) do not replace
 * it: they would hide the failure that caused them. With an action the fault
 * policy decided on the end; a rule absent then means the default rule.
 * trainjobd and the Slurm supervisor keep one; ACP's workers carry none.
 */
struct worker_last_state {
    bool present;
    bool has_exit_code;
    int32_t exit_code; /* 128 + signal for a signal death */
    char *exit_reason; /* the exit code's meaning: "killed (SIGKILL/OOM)", … */
    char *start_time;  /* when that run started */
    char *finish_time; /* when it ended */
    bool has_rule;
    int32_t rule;   /* 1-based, as people count them */
    char *action;   /* RESTART_JOB, RESTART_POD, FAIL_JOB: what the policy asked for */
    char *message;  /* the decision in one sentence, as its FAULT event says it */
};

/* Its schema (api/schema.h), for records that keep one (trainjobd's workers). */
extern const struct object_type worker_last_state_type;

/*
 * One worker (pod), as ACP's list-workers reply carries it plus what triage
 * needs (trainjobd's role, restarts, exit, devices). A phase trainjob does
 * not know is kept in phase_other and shown as the server said it.
 */
struct worker_info {
    char *uid;
    char *id;
    char *name;           /* "master-0", "worker-0", … */
    char *namespace_name; /* ACP's "namespace" */
    char *role;           /* "master", "worker", "ps" */
    char *node_name;
    char *ip;
    char *host_ip;
    enum worker_phase phase;
    char *phase_other; /* a phase not in worker_phase_names, as the server said it */
    bool has_restarts; /* trainjobd's; ACP reports none */
    int32_t restarts;
    bool has_exit_code;
    int32_t exit_code; /* the last exit: 128 + signal for a signal death */
    char *exit_reason; /* "killed (SIGKILL/OOM)", … */
    char *devices;     /* "0,1" */
    bool has_simulated;
    bool simulated; /* on a simulated node: the devices are not real (trainjobd) */
    char *create_time;
    char *start_time;
    char *finish_time;
    char *update_time;
    struct worker_container *init_containers;
    size_t init_container_count;
    struct worker_container *containers;
    size_t container_count;
    char *node_spec_name; /* the resource spec the worker runs on */
    struct worker_last_state last_state;
    json_t *extra;        /* fields trainjob does not know, written back as they came */
};

struct worker_list {
    struct worker_info *workers;
    size_t count;
};

enum job_event_kind {
    EVENT_UNSPECIFIED,
    EVENT_CREATED,
    EVENT_STATE,     /* the job changed state */
    EVENT_SCHEDULED, /* placed on nodes */
    EVENT_WAITING,   /* why it waits changed */
    EVENT_FAULT,     /* a worker failed and the fault policy decided */
    EVENT_PREEMPTED,
    EVENT_NODE_MARKED,
    EVENT_STOPPED,
    EVENT_STARTED,
    EVENT_WORKER,  /* a worker started or ended */
    EVENT_UPDATED, /* a person changed the job: its priority or display name, and who */
};

extern const struct enum_names job_event_kind_names;

struct job_event {
    int64_t id;
    char *time; /* RFC 3339 */
    enum job_event_kind kind;
    char *job;
    char *worker;
    enum job_state state;
    bool has_exit_code;
    int32_t exit_code;
    bool has_rule;
    int32_t rule; /* 1-based, as people count them */
    char *action; /* RESTART_JOB, RESTART_POD, FAIL_JOB */
    bool has_restarts_used;
    int32_t restarts_used;
    bool has_restart_limit;
    int32_t restart_limit; /* -1: unlimited */
    char *node;
    char *message; /* the whole story in one sentence */
};

struct job_event_list {
    struct job_event *events;
    size_t count;
};

/* The phase as it should be shown: the server's own word for one trainjob does not know. */
const char *worker_phase_text(const struct worker_info *w);
/*
 * Whether the worker's last end was one its engine asked for (a stop, a
 * delete, a restart or preemption of the job: trainjobd's phase "Stopped"),
 * not a failure: not counted as faulty, not shown in red.
 */
bool worker_info_stopped(const struct worker_info *w);
/*
 * The worker's devices, for a table: trainjobd's slice ("0,1"), else what
 * ACP's containers ask for ("8 × NVIDIA-H800": limits.device summed, with
 * the device_type); simulated ones say so. Appends nothing when none.
 */
void worker_devices_text(const struct worker_info *w, struct strbuf *out);
/*
 * The last state in one short line, for a table: "exit 1 (RESTART_JOB,
 * default rule) 40s ago", "exit 201 (RESTART_POD, rule 1) 2m ago", "exit 0
 * 5s ago"; the age counted to now_ms. compact: the age alone ("2m"), for
 * a cell under a title that says what it is. Appends nothing without one.
 */
void worker_last_state_text(const struct worker_last_state *ls, int64_t now_ms, bool compact,
                            struct strbuf *out);

void worker_last_state_free(struct worker_last_state *ls);

json_t *worker_info_to_json(const struct worker_info *w);
int worker_info_from_json(const json_t *j, struct worker_info *w, struct findings *fs);
void worker_info_free(struct worker_info *w);
/* A deep copy of src into dst (overwritten, not freed); equal: every field the same. */
void worker_info_copy(struct worker_info *dst, const struct worker_info *src);
bool worker_info_equal(const struct worker_info *a, const struct worker_info *b);
void worker_list_free(struct worker_list *l);

json_t *job_event_to_json(const struct job_event *e);
int job_event_from_json(const json_t *j, struct job_event *e, struct findings *fs);
void job_event_free(struct job_event *e);
void job_event_copy(struct job_event *dst, const struct job_event *src);
void job_event_list_free(struct job_event_list *l);

#endif
