/*
 * validate: every rule of the create-task form (trainjob-job(5)), as
 * one function over a struct jobspec that returns a list of findings.
 *
 * The same code runs in three places: inline in the wizard, in
 * `trainjob validate`, and in trainjobd before it accepts a job. Rules that
 * need the backend's catalog (workspace membership, pool type, zone and VPC,
 * spec, volume, owner-only priority) run only when a catalog is given; name
 * uniqueness runs only when a name_taken callback is given. Everything else
 * runs offline.
 */
#ifndef API_VALIDATE_H
#define API_VALIDATE_H

#include <stdbool.h>
#include <stddef.h>

struct catalog;
struct findings;
struct jobspec;

/* The form's sections, in order; each field path belongs to one. */
enum form_section {
    SECTION_BASICS,
    SECTION_RESOURCES,
    SECTION_IMAGE,
    SECTION_FAULT_TOLERANCE,
    SECTION_DATA,
    SECTION_ENVIRONMENT,
    SECTION_TENSORBOARD,
    SECTION_REVIEW, /* findings about the document as a whole, output-only fields */
    SECTION_COUNT,
};

struct validate_options {
    const struct catalog *catalog; /* NULL: offline */
    const char *workspace;         /* used when the job names none (the context's default) */
    /* Is name already used in workspace? NULL: not checked. */
    bool (*name_taken)(void *ctx, const char *workspace, const char *name);
    void *name_taken_ctx;
    bool for_submit; /* output-only fields present are errors rather than warnings */
    /* The backend's limits when no catalog is at hand (an ACP context offline); NULL: none. */
    const struct catalog_limits *limits;
};

#define VALIDATE_MAX_RULES 20
#define VALIDATE_MAX_ENV 20
#define VALIDATE_MAX_DISPLAY_NAME 256
#define VALIDATE_MAX_NAME 63
#define VALIDATE_MAX_ENV_NAME 256
#define VALIDATE_MAX_ENV_VALUE 4096
#define VALIDATE_MIN_BACKOFF (-1)
#define VALIDATE_MAX_BACKOFF 99

/* The limits a job is held to, and whether the backend stated them (else the console's). */
struct form_limits {
    int max_env, max_rules;
    int min_backoff, max_backoff;
    bool env_stated, rules_stated, backoff_stated;
};

/* The console's limits (VALIDATE_MAX_*), each replaced by the catalog's where it states one. */
void validate_form_limits(const struct catalog *cat, struct form_limits *out);

/* Appends every finding about job to out. opt may be NULL (offline). */
void validate_job(const struct jobspec *job, const struct validate_options *opt,
                  struct findings *out);

/* The section a field path belongs to ("fault_tolerance.rules[1].action" -> FAULT_TOLERANCE). */
enum form_section form_section_of(const char *path);
/* "Basics", "Resources", … */
const char *form_section_title(enum form_section section);

/* Single-field checks the wizard runs while typing. Each returns NULL when the
 * value is fine, else a message (static storage or written to buf). */
const char *validate_job_name(const char *name, char *buf, size_t bufsz);
const char *validate_display_name(const char *display_name, char *buf, size_t bufsz);
const char *validate_image_path(const char *image, char *buf, size_t bufsz);
const char *validate_env_name(const char *key, char *buf, size_t bufsz);
/* The system variables env[] may not set, as the form shows them: "PATH, HOME, …, LD_*, …". */
const char *validate_env_reserved_list(void);
const char *validate_mount_path(const char *path, char *buf, size_t bufsz);

#endif
