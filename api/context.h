/*
 * context: which backend the client talks to, kubeconfig style.
 *
 * ~/.config/trainjob/config.yaml lists contexts and names the current one:
 *
 *   current_context: sh01
 *   contexts:
 *     - name: sh01
 *       driver: acp                      # trainjobd | acp | slurm
 *       endpoint: https://aec2.cn-sh-01.sensecoreapi.cn
 *       subscription: 0197ee17-…
 *       resource_group: default
 *       zone: cn-sh-01z
 *       workspace: share-space-01e
 *       access_key: AK…
 *       secret_key_file: ~/.config/trainjob/sh01.sk   # the SK, alone in a file
 *       telemetry_station: ts-user-…     # ACP's worker logs (Monitor service)
 *       monitor_endpoint: https://monitor.sensecoreapi.cn   # the default
 *       theme: dark
 *
 * With no file (or no contexts in it) there is one built-in context, "local":
 * trainjobd on its socket, subscription local, resource group
 * default, zone local-1z, workspace default. A context leaving a field out
 * gets the same local default. $TRAINJOB_ENDPOINT replaces the endpoint and
 * --endpoint replaces both. Only the local engine's default socket, reached
 * without an explicit endpoint, may be started on demand.
 *
 * What kind of server an endpoint is comes from `driver:` alone, never from
 * its host: 127.0.0.1 may be an SSH tunnel to SenseCore. A context that
 * leaves driver out is trainjobd when it names no endpoint (the local
 * engine's socket) and acp when it names one; --endpoint and
 * $TRAINJOB_ENDPOINT move the context, not its driver.
 * $TRAINJOB_CONFIG names another file. A context with an access_key and no
 * secret_key_file takes the secret from $TRAINJOB_SECRET_KEY; a secret_key_file
 * others may read is a warning.
 */
#ifndef API_CONTEXT_H
#define API_CONTEXT_H

#include <stdbool.h>
#include <stddef.h>

#include "api/jobspec.h"

struct findings;
struct strbuf;

enum context_driver {
    CONTEXT_DRIVER_UNSPECIFIED, /* trainjobd without an endpoint, else acp */
    CONTEXT_DRIVER_ACP,         /* SenseCore ACP: the ACP paths only */
    CONTEXT_DRIVER_SLURM,
    CONTEXT_DRIVER_TRAINJOBD, /* the ACP paths plus trainjobd's /trainjob/v1 extras */
};

extern const struct enum_names context_driver_names; /* "acp", "slurm", "trainjobd" */

#define CONTEXT_LOCAL_NAME "local"
#define CONTEXT_LOCAL_SUBSCRIPTION "local"
#define CONTEXT_LOCAL_RESOURCE_GROUP "default"
#define CONTEXT_LOCAL_ZONE "local-1z"
#define CONTEXT_LOCAL_WORKSPACE "default"

struct context {
    char *name;
    enum context_driver driver;
    char *endpoint;
    char *subscription;
    char *resource_group;
    char *zone;
    char *workspace;
    char *access_key;
    char *secret_key_file;
    char *theme;
    char *monitor_endpoint;  /* ACP: the Monitor service (worker logs); NULL: the default */
    char *telemetry_station; /* ACP: the station logs are read from (api/acp_logs.h) */
    /* driver: slurm (api/slurm.h) */
    char *user;          /* the Slurm user the token is for */
    char *token_file;    /* a file holding the JWT (or "SLURM_JWT=<jwt>") */
    char *token_command; /* run without a shell, split on blanks; prints the JWT */
    char *jobs_dir;      /* job directories on the shared filesystem */
    char *launcher;      /* "" or absent: the node's own environment; "apptainer exec {image}" */
    struct json_t *qos;  /* NORMAL, HIGH, HIGHEST, IDLE_NORMAL, … → a QOS name */
    /*
     * The volumes a job may mount: a name (mount[].id) → the directory every
     * node sees it at ("datasets: /lustre/datasets"). Absolute, without '..',
     * ',' or ':' (a container launcher binds them as SRC:DST,…).
     */
    struct json_t *volumes;
};

struct context_file {
    char *current_context;
    struct context *contexts;
    size_t context_count;
};

/*
 * Parses a config.yaml text strictly: unknown fields, wrong types, duplicate
 * or missing names, a current_context naming no context and malformed
 * endpoints are findings with line and column. Returns 0, or -1 with cf
 * empty.
 */
int context_file_parse(const char *text, size_t len, struct context_file *cf, struct findings *fs);
void context_file_free(struct context_file *cf);
/*
 * The names of the config file's contexts (path; NULL: the client's
 * config.yaml), in order, into *names (malloc'd, each and the array); no
 * file or none in it: the built-in "local". Returns the count, or 0 with
 * why in err (the file, or FILE:LINE:COL of its first finding).
 */
size_t context_file_names(const char *path, char ***names, struct strbuf *err);
/* True when spec names several contexts: "a,b" or "all". */
bool context_spec_several(const char *spec);
/*
 * The context names spec stands for — "a,b" (each once, in order, blanks
 * around a name dropped) or "all" (context_file_names) — into *names as
 * context_file_names does. Returns the count, or 0 with why in err (an
 * empty name).
 */
size_t context_spec_names(const char *spec, char ***names, struct strbuf *err);
void context_free(struct context *ctx);

/* What the caller asks for; every member may be NULL. */
struct context_request {
    const char *config_path;  /* NULL: <config dir>/config.yaml */
    const char *context;      /* --context NAME */
    const char *endpoint;     /* --endpoint URL */
    const char *env_endpoint; /* $TRAINJOB_ENDPOINT */
    const char *workspace;    /* --workspace WS */
};

/* The context in effect, every field filled. */
struct resolved_context {
    struct context ctx;
    char *config_path;   /* the file read (or that would have been), for messages */
    bool builtin;        /* no file context: the built-in "local" */
    bool may_autostart;  /* the endpoint is the local engine's default socket, chosen implicitly */
    char *engine_socket; /* that socket's path, when may_autostart */
    char *secret_key;    /* from secret_key_file or $TRAINJOB_SECRET_KEY, or NULL */
};

/*
 * Reads the config file (a missing one is fine) and applies the request.
 * Returns 0, with warnings in fs to show (a secret key file open to
 * others); or -1 with findings about the file in fs (print them against
 * out->config_path) and/or a message in err (unknown --context, unreadable
 * secret key file, no secret for an access_key). out is always released
 * with resolved_context_free.
 */
int context_resolve(const struct context_request *req, struct resolved_context *out,
                    struct findings *fs, struct strbuf *err);
void resolved_context_free(struct resolved_context *rc);

struct stat;
/*
 * Whether a file that says what runs as the user, or as whom they act (a
 * config, a token), may be trusted with st: owned by the user (getuid) or
 * root, and writable by nobody else, but for a group that is the owner's
 * private group (named as the user, no other member). Returns 0, or -1 with
 * why: "PATH is owned by user bob (uid 1002), not by you or root" or "PATH
 * is writable by its group (mode 0664; fix with `chmod go-w PATH`)".
 */
int context_file_trusted(const char *path, const struct stat *st, struct strbuf *why);

#endif
