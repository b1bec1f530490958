/*
 * slurm_shapes: the JSON of slurmrestd that differs between API versions,
 * in one table, so the driver (api/slurm.c) speaks one neutral shape.
 *
 * v0.0.38 (Slurm 22.05, Debian 12; what the tests run) and v0.0.40 (from the
 * published spec; an excerpt is tests/fixtures/slurm/openapi-v0.0.40-excerpt.json):
 *   - a job's environment: a mapping {"K":"V"} (38) or a list ["K=V"] (40);
 *   - exit_code: the raw wait status (38: 768 = exit 3) or an object
 *     {status:[…], return_code:{set,number}, signal:{id:{set,number}}} (40);
 *   - job_state: one string (38) or a list of the base state and its flags (40);
 *   - numbers: plain (38) or {set, infinite, number} (40);
 *   - nodes on submit: an integer (38; the documented array form is silently
 *     ignored by 22.05) or a string (40); excluded nodes "exclude_nodes" (38)
 *     or "excluded_nodes" (40); GPUs per node as "gres" (38) or
 *     "tres_per_node" (40).
 * Decoding is lenient about fields it does not need and strict about types
 * of the ones it does: a value of the wrong type is left out, never guessed.
 */
#ifndef API_SLURM_SHAPES_H
#define API_SLURM_SHAPES_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct strbuf;

struct slurm_shape {
    const char *version;     /* "v0.0.38": the path segment */
    bool env_list;           /* environment as ["K=V"] */
    bool numbers_wrapped;    /* {set, infinite, number} on submit */
    bool nodes_string;       /* submit "nodes": "2" */
    const char *exclude_key; /* "exclude_nodes" / "excluded_nodes" */
    const char *gpus_key;    /* "gres" / "tres_per_node" */
    const char *gpus_prefix; /* "gpu:" / "gres/gpu:", then the count */
};

/* The versions the driver speaks, best first; NULL-terminated by count. */
extern const struct slurm_shape slurm_shapes[];
extern const size_t slurm_shape_count;
/* The shape of version ("v0.0.38"), or NULL. */
const struct slurm_shape *slurm_shape_find(const char *version);
/*
 * The shape to use for a server from its /openapi/v3 document: v0.0.38 when
 * it offers it (what the tests run), else the newest it offers that the
 * table has; NULL with the versions it offers in why.
 */
const struct slurm_shape *slurm_shape_choose(const json_t *openapi, struct strbuf *why);

/* One allocated node of a job. */
struct slurm_alloc {
    char *node;
    char *gpus; /* "0-1" from gres_detail "gpu:2(IDX:0-1)", or NULL */
    int cpus;
};

/* A job as the driver needs it, whatever the version. */
struct slurm_job {
    int64_t id;
    char *name;
    char *state;  /* the base state or the flag that wins (COMPLETING, REQUEUED, …) */
    char *reason; /* state_reason: "None", "Resources", "BeginTime", … */
    char *partition;
    char *qos;
    char *nodes; /* "n[1-2]" */
    char *cwd;   /* current_working_directory: the job directory */
    char *user;
    char *comment;    /* trainjob's mark (SLURM_MARK_PREFIX + the job directory's mark) */
    int32_t restarts; /* restart_cnt: preemptions and requeues */
    bool has_exit;
    int exit_status;                           /* WEXITSTATUS */
    int exit_signal;                           /* WTERMSIG, 0 when it exited */
    int64_t submit_time, start_time, end_time; /* epoch s; 0 unknown */
    struct slurm_alloc *alloc;
    size_t alloc_count;
};

void slurm_job_free(struct slurm_job *j);
/*
 * The members of a /jobs element slurm_job_decode reads (in any version),
 * NULL-terminated: a listing keeps these and drops the rest unread.
 */
extern const char *const slurm_job_fields[];
/* slurm_job_fields' indices. */
enum slurm_job_field {
    SLURM_JOB_ID,
    SLURM_JOB_NAME,
    SLURM_JOB_STATE,
    SLURM_JOB_REASON,
    SLURM_JOB_PARTITION,
    SLURM_JOB_QOS,
    SLURM_JOB_NODES,
    SLURM_JOB_CWD,
    SLURM_JOB_USER,
    SLURM_JOB_COMMENT,
    SLURM_JOB_RESTARTS,
    SLURM_JOB_EXIT,
    SLURM_JOB_SUBMIT,
    SLURM_JOB_START,
    SLURM_JOB_END,
    SLURM_JOB_RESOURCES,
    SLURM_JOB_GRES,
    SLURM_JOB_FIELD_COUNT
};
/* The index in slurm_job_fields of the member key (key_len bytes, decoded), or -1. */
int slurm_job_field(const char *key, size_t key_len);
/*
 * The members of one /jobs element a job is decoded from, as written:
 * spans into the element's text, the last of a repeated member (as a
 * decoder keeping the last value of a key has it); value NULL: absent.
 */
struct slurm_job_text {
    const char *value[SLURM_JOB_FIELD_COUNT];
    size_t len[SLURM_JOB_FIELD_COUNT];
};
/*
 * Decodes the members of t, spans of JSON text already checked (by
 * api/jobsum's walk of the element), without a tree. Returns 0, or -1 with
 * why in err when it is not a job (no integer job_id).
 */
int slurm_job_decode_text(const struct slurm_shape *s, const struct slurm_job_text *t,
                          struct slurm_job *out, struct strbuf *err);
/* The element text[0, len) walked (checked whole) and decoded by slurm_job_decode_text. */
int slurm_job_decode_element(const struct slurm_shape *s, const char *text, size_t len,
                             struct slurm_job *out, struct strbuf *err);
/*
 * Decodes one element of .jobs[] held as a tree (a reply about one job),
 * through its text and slurm_job_decode_text: one decoder for both. Returns
 * 0, or -1 with why in err when it is not a job (no object, no integer
 * job_id).
 */
int slurm_job_decode(const struct slurm_shape *s, const json_t *j, struct slurm_job *out,
                     struct strbuf *err);

/* What a submit asks for, version-free. */
struct slurm_submit {
    const char *name;
    const char *partition;
    const char *qos;     /* NULL: the partition's default */
    const char *exclude; /* "n1,n3" or NULL */
    const char *cwd;
    const char *comment; /* NULL: none */
    const char *standard_output;
    const char *standard_error;
    int nodes;
    int gpus_per_node;
    int cpus_per_task; /* 0: Slurm's default */
    int64_t memory_mb; /* per node; 0: Slurm's default */
    bool requeue;
    const char *const *env; /* "K=V" */
    size_t env_count;
};

/* The body of POST /slurm/<version>/job/submit: {"script", "job": {…}}. */
json_t *slurm_submit_body(const struct slurm_shape *s, const struct slurm_submit *sub,
                          const char *script);

/* An integer field plain or {set, infinite, number}; false when absent, unset or not a number. */
bool slurm_number(const json_t *v, int64_t *out);

#endif
