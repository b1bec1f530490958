/*
 * config: trainjobd's catalogue — engine.yaml.
 *
 * It says who may do what (workspaces with owners and members, by user
 * name), what there is to run on (nodes with CPUs, memory and GPUs, real or
 * simulated; pools of type dedicated / public / idle over those nodes, with
 * the regions, zones and VPCs public and idle pools need; resource specs;
 * images; volumes mapped to host directories) and the AK/SK keys accepted on
 * TCP. The first start writes a default describing this machine; --demo adds
 * simulated GPU nodes. The same catalogue is served to clients as a
 * struct catalog, per caller, and drives scheduling and validation.
 */
#ifndef ENGINE_CONFIG_H
#define ENGINE_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/catalog.h"

struct findings;
struct strbuf;

struct config_node {
    char *name;
    int gpus;
    char *gpu_type;     /* "H800", "simulated", … */
    int gpu_memory_gib; /* per GPU; 0 when unknown */
    int cpus;
    int64_t memory_mib;
    bool simulated;
    bool unschedulable; /* marked by an operator */
};

struct config_spec {
    char *name;
    int gpus;
    int cpus;
    int64_t memory_mib;
};

struct config_pool {
    char *name;
    char *display_name;
    enum pool_type type;
    char **zones; /* public and idle pools */
    size_t zone_count;
    char **nodes; /* node names; none listed = every node */
    size_t node_count;
    char **specs; /* spec names offered; none listed = every spec */
    size_t spec_count;
};

struct config_region {
    char *name;
    char **zones;
    size_t zone_count;
    char **vpcs;
    size_t vpc_count;
};

struct config_workspace {
    char *name;
    char **owners;
    size_t owner_count;
    char **members;
    size_t member_count;
    char **pools; /* none listed = every pool */
    size_t pool_count;
};

struct config_volume {
    char *id;
    char *display_name;
    char *zone;
    char *path; /* host directory */
};

struct config_image {
    char *path;
    char *source;
    char *description;
};

struct config_key {
    char *access_key;
    char *secret_key;
    char *user;
    char *unix_user; /* the Unix user this member's jobs run as (trainjobd as root); NULL: none */
};

/*
 * Engine limits (engine.yaml `limits:`; 0 or absent: the default). Delays of
 * a crash loop grow as Kubernetes' CrashLoopBackOff does.
 */
struct config_limits {
    bool present;
    int restart_delay_ms;       /* the first delayed restart: 10 s */
    int restart_delay_max_ms;   /* the delay doubles up to this: 5 min */
    int restart_reset_after_ms; /* a run this long forgets the loop: 10 min */
    int events_per_job;         /* events kept per job, older ones folded: 200 */
    int save_retry_ms;          /* retrying a save the disk refused: 1 s */
    /* Per-user shares of a team engine (engine/shares): */
    int replay_per_key;            /* signed requests remembered per access key: 4096 */
    int connections_per_member;    /* open connections per user: 64 */
    int anonymous_connections;     /* TCP connections not yet signed, all loopback as one: 256 */
    int request_seconds;           /* a request's header and body arrive within: 10 s */
    int streams_per_member;        /* watch streams, log follows and execs per user: 32 */
    int stream_mib_per_member;     /* bytes queued for one user's streams: 64 MiB */
    int scalar_follows_per_member; /* scalar follows (inotify instances) per user: 8 */
    int cgroups_per_member;        /* started workers (a cgroup each) per member: 512 */
};

#define CONFIG_RESTART_DELAY_MS 10000
#define CONFIG_RESTART_DELAY_MAX_MS 300000
#define CONFIG_RESTART_RESET_AFTER_MS 600000
#define CONFIG_EVENTS_PER_JOB 200
#define CONFIG_SAVE_RETRY_MS 1000
#define CONFIG_REPLAY_PER_KEY 4096
#define CONFIG_CONNECTIONS_PER_MEMBER 64
#define CONFIG_ANONYMOUS_CONNECTIONS 256
#define CONFIG_REQUEST_SECONDS 10
#define CONFIG_STREAMS_PER_MEMBER 32
#define CONFIG_STREAM_MIB_PER_MEMBER 64
#define CONFIG_SCALAR_FOLLOWS_PER_MEMBER 8
#define CONFIG_CGROUPS_PER_MEMBER 512

struct engine_config {
    char *subscription;   /* "local" */
    char *resource_group; /* "default" */
    char *zone;           /* the workspace zone in ACP paths: "local-1z" */
    char **admins;        /* users with owner rights in every workspace */
    size_t admin_count;
    char *engine_user; /* who runs trainjobd: an admin always; set by the engine, not in the file */
    struct config_region *regions;
    size_t region_count;
    struct config_workspace *workspaces;
    size_t workspace_count;
    struct config_node *nodes;
    size_t node_count;
    struct config_pool *pools;
    size_t pool_count;
    struct config_spec *specs;
    size_t spec_count;
    struct config_image *images;
    size_t image_count;
    struct config_volume *volumes;
    size_t volume_count;
    struct config_key *keys;
    size_t key_count;
    int worker_process_limit; /* processes per worker (cgroup pids.max); 0: the default */
    char *job_user; /* the dedicated user jobs run as (trainjobd as root); NULL: engine/runas's */
    struct config_limits limits;
};

/* The process limit per worker when engine.yaml does not set one. */
#define CONFIG_DEFAULT_WORKER_PROCESS_LIMIT 4096

/* What the default configuration describes: this machine, found by probing. */
struct machine_info {
    int cpus;
    int64_t memory_mib;
    int gpus;
    char *gpu_type; /* from nvidia-smi, NULL without GPUs */
    int gpu_memory_gib;
};

/* Probes CPUs (sysconf), memory (sysinfo) and GPUs (nvidia-smi, when present). */
void config_probe_machine(struct machine_info *mi);
/*
 * Reads the output of `nvidia-smi --query-gpu=name,memory.total
 * --format=csv,noheader,nounits` into mi's GPU fields (type of the first GPU,
 * memory of the smallest). Anything it does not understand means no GPUs.
 * Returns the number of GPUs found.
 */
int config_parse_nvidia_smi(const char *text, struct machine_info *mi);
void machine_info_free(struct machine_info *mi);

/*
 * The default catalogue (ENGINE.md §Defaults): subscription local, group
 * default, region local-1 with zone local-1z and VPC vpc-local; workspace
 * default owned by user; pools local (dedicated) and local-idle (idle); one
 * node for this machine; spec cpu-1 and, with GPUs, gpu-1; image local/host;
 * volume scratch at <state_dir>/volumes/scratch. demo adds pool sim-public
 * (public), nodes sim-n1..sim-n4 (8 simulated GPUs, 16 CPUs, 64 GiB each) and
 * specs sim-gpu-1 / sim-gpu-8 (2 CPUs and 4 GiB per GPU).
 */
void config_default(struct engine_config *cfg, const struct machine_info *mi, const char *user,
                    const char *state_dir, bool demo);

/*
 * trainjobd --demo on any config, new or loaded: adds what config_default's
 * demo adds (pool sim-public, nodes sim-n1..sim-n4, specs sim-gpu-1 and
 * sim-gpu-8), each unless cfg already has one of that name, in memory only
 * (engine.yaml is not rewritten). Returns how many it added; said gets why a
 * part cannot be used (a pool listing its nodes, a workspace its pools).
 */
int config_add_demo(struct engine_config *cfg, struct strbuf *said);

/*
 * Parses engine.yaml text into cfg (overwritten); findings carry field paths
 * and line:col. Returns 0 (warnings allowed), or -1 on errors with cfg left
 * empty. name is the file's, for the caller's messages only.
 */
int config_parse(const char *name, const char *text, size_t len, struct engine_config *cfg,
                 struct findings *fs);
/* Appends cfg as engine.yaml (with a header comment) to out. */
void config_write(const struct engine_config *cfg, struct strbuf *out);
void config_free(struct engine_config *cfg);

/* Is user an admin: listed in admins, or the user who runs trainjobd? */
bool config_is_admin(const struct engine_config *cfg, const char *user);
/* The caller's role in workspace ws (admins are owners everywhere). */
enum member_role config_role(const struct engine_config *cfg, const char *ws, const char *user);
const struct config_node *config_node(const struct engine_config *cfg, const char *name);
const struct config_spec *config_spec(const struct engine_config *cfg, const char *name);
const struct config_pool *config_pool(const struct engine_config *cfg, const char *name);
const struct config_volume *config_volume(const struct engine_config *cfg, const char *id);
/* May pool place workers on node? */
bool config_pool_has_node(const struct config_pool *pool, const char *node);
/* cfg->limits with every absent (0) limit replaced by its default. */
void config_effective_limits(const struct engine_config *cfg, struct config_limits *out);
/* The user an AK/SK access key belongs to, or NULL. */
const struct config_key *config_key(const struct engine_config *cfg, const char *access_key);
/* worker_process_limit, or the default when it is 0. */
int config_worker_process_limit(const struct engine_config *cfg);

/*
 * The catalogue as one caller sees it: every workspace they belong to (with
 * their role), the pools bound there with their specs and, per spec, the
 * most workers of it the pool could ever hold at once (max_replicas).
 */
void config_catalog(const struct engine_config *cfg, const char *user, struct catalog *out);

#endif
