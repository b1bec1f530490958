/*
 * catalog: what a backend offers a job — the caller's workspaces and role in
 * each, the pools (AI elastic clusters) with their resource type, regions,
 * zones and VPCs, resource specs, images and volumes.
 *
 * The wizard builds its choices from it, and validation takes it as an
 * argument so the same rules run in the client and in trainjobd. Every array
 * is owned; catalog_free releases all of it.
 */
#ifndef API_CATALOG_H
#define API_CATALOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum pool_type {
    POOL_DEDICATED, /* standard – dedicated: quota_type RESERVED */
    POOL_PUBLIC,    /* standard – public: RESERVED, needs zone and VPC */
    POOL_IDLE,      /* idle: quota_type SPOT, needs zone and VPC */
};

enum member_role {
    MEMBER_NONE, /* not in the workspace */
    MEMBER,
    MEMBER_OWNER,
    MEMBER_ADMIN,
};

/* The priority rule, one place for trainjobd, validation, the wizard and the CLI: HIGH and
 * HIGHEST are for a workspace's owners and admins. */
bool member_role_raises_priority(enum member_role role);

struct catalog_spec {
    char *name;
    int devices;       /* GPUs (or other accelerators) per worker; 0 = CPU only */
    char *device_type; /* "H800", "A100-80GB", … */
    int device_memory_gib;
    int vcpus;
    int64_t memory_mib;
    bool simulated;   /* a demo device that does not exist */
    int max_replicas; /* workers of this spec the pool could ever hold at once */
};

struct catalog_pool {
    char *name;
    char *display_name;
    enum pool_type type;
    char **zones; /* zones the pool offers (public and idle pools) */
    size_t zone_count;
    /*
     * The nodes that may take its jobs (trainjobd: its schedulable nodes);
     * none: the backend does not say.
     */
    char **nodes;
    size_t node_count;
    struct catalog_spec *specs;
    size_t spec_count;
};

struct catalog_zone {
    char *name;   /* "cn-sh-01e" */
    char *region; /* "cn-sh-01" */
};

struct catalog_vpc {
    char *id;
    char *region;
};

struct catalog_volume {
    char *id;
    char *display_name;
    char *zone;
    /*
     * Slurm: the directory every node sees the volume at, where a worker in
     * the node's own environment (CATALOG_HOST_IMAGE) must mount it; NULL:
     * the backend mounts it at any mount path.
     */
    char *path;
};

/* The image that means "the node's own environment, no container" (trainjobd, Slurm). */
#define CATALOG_HOST_IMAGE "local/host"

struct catalog_image {
    char *path;
    char *source;      /* "official", "dev-machine", "private" */
    char *description; /* e.g. NGC tag meaning: "release 25.06, CUDA 12.9, Python 3.12" */
};

struct catalog_workspace {
    char *name;
    enum member_role role; /* the caller's role here */
    char **pools;          /* names of the pools bound to this workspace */
    size_t pool_count;
    /*
     * Set where the backend says exactly which priorities the caller may
     * set here (Slurm: the QOS its association allows): bit (1u << p) for
     * each enum priority p allowed, and priorities_note says why the others
     * are not. 0: the role decides (member_role_raises_priority).
     */
    unsigned priorities;
    char *priorities_note;
};

/*
 * Limits the backend states for a job's fields, where they differ from the
 * console's (validate_form_limits has those): ACP's API takes at most 10
 * environment variables and any int32 backoff_limit, its console 20 and
 * -1 … 99. A limit the backend states is enforced; without one the console's
 * applies as a warning, since the backend may take more.
 */
struct catalog_limits {
    bool present;
    bool has_max_env;
    int32_t max_env;
    bool has_max_rules;
    int32_t max_rules;
    bool has_min_backoff_limit;
    int32_t min_backoff_limit;
    bool has_max_backoff_limit;
    int32_t max_backoff_limit;
};

/*
 * Lists a backend cannot give (ACP publishes no zone, VPC, volume or image
 * list, nor the caller's role). An unknown list is not an empty one: rules
 * that need it do not run, and the wizard takes typed values there.
 */
enum catalog_unknown {
    CATALOG_UNKNOWN_WORKSPACES = 1 << 0, /* which workspaces the caller is in, and as what */
    CATALOG_UNKNOWN_POOLS = 1 << 1,
    CATALOG_UNKNOWN_SPECS = 1 << 2,
    CATALOG_UNKNOWN_ZONES = 1 << 3, /* zones and VPCs */
    CATALOG_UNKNOWN_VOLUMES = 1 << 4,
    CATALOG_UNKNOWN_IMAGES = 1 << 5,
    CATALOG_UNKNOWN_ALL = (1 << 6) - 1, /* no catalog at all */
};

struct catalog {
    char *user; /* the caller, as the backend knows them */
    struct catalog_workspace *workspaces;
    size_t workspace_count;
    struct catalog_pool *pools;
    size_t pool_count;
    struct catalog_zone *zones;
    size_t zone_count;
    struct catalog_vpc *vpcs;
    size_t vpc_count;
    struct catalog_volume *volumes;
    size_t volume_count;
    struct catalog_image *images;
    size_t image_count;
    /*
     * Whether a worker is held to its resource spec, in the backend's words:
     * trainjobd says "enforced (cgroup v1: memory, cpu, pids)" or "not
     * enforced: <why>"; NULL when the backend does not say (ACP enforces).
     */
    char *resource_limits;
    /*
     * Who the caller's jobs run as, in the backend's words: trainjobd says
     * "tj-alice (uid 1001), its own Unix user" (never root); NULL when the
     * backend does not say.
     */
    char *run_as;
    /*
     * How the backend runs an image: "host" (trainjobd — no container
     * runtime: every job runs on the machine itself, and an image that is
     * not one of the catalog's is never pulled); NULL: it pulls and runs
     * the image (ACP).
     */
    char *image_runtime;
    struct catalog_limits limits;
    int unknown; /* enum catalog_unknown bits: lists the backend cannot give (not in JSON) */
    /*
     * The backend has no zones or VPCs at all (Slurm: a partition is its
     * nodes): not an unknown list but no such thing, so no pool needs them;
     * the wizard does not ask them and validation does not require them.
     */
    bool zoneless;
    /*
     * Why a list the wizard offers is missing, in the backend's words ("ACP:
     * resource specs could not be read: …"); NULL when nothing is missing.
     */
    char *missing;
};

void catalog_free(struct catalog *cat);

const struct catalog_workspace *catalog_workspace(const struct catalog *cat, const char *name);
const struct catalog_pool *catalog_pool(const struct catalog *cat, const char *name);
const struct catalog_spec *catalog_pool_spec(const struct catalog_pool *pool, const char *name);
const struct catalog_zone *catalog_zone(const struct catalog *cat, const char *name);
const struct catalog_vpc *catalog_vpc(const struct catalog *cat, const char *id);
const struct catalog_volume *catalog_volume(const struct catalog *cat, const char *id);
const struct catalog_image *catalog_image(const struct catalog *cat, const char *path);
bool catalog_workspace_has_pool(const struct catalog_workspace *ws, const char *pool);
bool catalog_pool_has_zone(const struct catalog_pool *pool, const char *zone);
/*
 * Whether a job in pool needs a zone and a VPC: a public or idle pool does,
 * unless the backend has none (cat->zoneless). The one rule for validation
 * and the wizard.
 */
bool catalog_pool_needs_zone(const struct catalog *cat, const struct catalog_pool *pool);
/* "standard – dedicated", "standard – public", "idle" */
const char *pool_type_label(enum pool_type type);
/* "owner", "member", … */
const char *member_role_name(enum member_role role);
/*
 * Whether the caller may give a job in workspace ws the priority (enum
 * priority of api/jobspec.h: 1 NORMAL, 2 HIGH, 3 HIGHEST): HIGH and HIGHEST
 * need owner or admin rights, as trainjobd checks an update; a catalog that
 * cannot tell the caller's role (ACP) allows every one (the server decides).
 */
bool catalog_priority_allowed(const struct catalog *cat, const char *ws, int priority);
/* The same rule for one workspace (never NULL): its priorities mask, else its role. */
bool catalog_ws_priority_allowed(const struct catalog_workspace *ws, int priority);
/* Why a raised priority is not offered in ws, in words (e.g. "owners only; you are a member of X").
 */
void catalog_priority_refusal(const struct catalog_workspace *ws, char *buf, size_t size);

#endif
