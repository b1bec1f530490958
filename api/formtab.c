/*
 * formtab: the rows of the create-task form (api/formtab.h). Adding a field
 * the console adds is one row here, its path in the job's schema table
 * (api/jobspec_json.c) and its rule in api/validate*.c.
 */
#include "api/formtab.h"

#include <string.h>

#include "api/jobspec.h"

/* After read-only, a plain row's widget may say more: .min, .max, .placeholder. */
#define ROW(sec, label_, path_, kind_, choices_, when_, help_, max_, handled_, ...)                \
    {                                                                                              \
        .section = SECTION_##sec, .label = label_, .path = path_, .kind = FORMTAB_##kind_,         \
        .choices = FORMTAB_##choices_, .when = FORMTAB_##when_, .help = help_, .max_chars = max_,  \
        .handled = handled_, .read_only = __VA_ARGS__                                              \
    }

static const int priorities[] = {PRIORITY_NORMAL, PRIORITY_HIGH, PRIORITY_HIGHEST, 0};
static const int frameworks[] = {FRAMEWORK_PYTORCH_DDP, FRAMEWORK_TENSORFLOW_PS,
                                 FRAMEWORK_SENSEPARROTS, FRAMEWORK_MPI, 0};

static const struct formtab_row rows[] = {
    ROW(BASICS, "Workspace", "workspace_name", CHOICE, WORKSPACES, ALWAYS,
        "the workspace the job belongs to; Enter opens the list, type to filter", 0, false, false),
    ROW(BASICS, "Display name", "display_name", TEXT, NO_CHOICES, ALWAYS,
        "1-256: Chinese characters, letters, digits, . : _ -", 256, false, false),
    ROW(BASICS, "Name", "name", TEXT, NO_CHOICES, ALWAYS,
        "optional: lowercase letters, digits and -, unique in the workspace", 63, false, false),
    ROW(BASICS, "Resource pool", "resource_pool.name", CHOICE, POOLS, ALWAYS,
        "the AI elastic cluster: standard (dedicated or public) or idle", 0, false, false),
    ROW(BASICS, "Zone", "resource_pool.zone", CHOICE, ZONES, ZONED,
        "public and idle pools run in a zone", 0, false, false),
    ROW(BASICS, "VPC", "resource_pool.vpc_id", CHOICE, VPCS, ZONED, "a VPC of the zone's region",
        128, false, false),
    ROW(RESOURCES, "Priority", "scheduling.priority", CHOICE, PRIORITIES, ALWAYS,
        "a waiting higher-priority job holds back lower ones", 0, false, false,
        .offered = priorities),
    ROW(RESOURCES, "Preemptible", "scheduling.preemptible", TOGGLE, NO_CHOICES, IDLE,
        "idle jobs only: standard jobs may take the capacity back", 0, false, false,
        .words = "may be preempted", .on_when_absent = true),
    ROW(RESOURCES, "Framework", "framework", CHOICE, FRAMEWORKS, ALWAYS,
        "how workers are started and find each other", 0, false, false, .offered = frameworks),
    ROW(RESOURCES, "Replicas", "roles[0].total_replicas", NUMBER, NO_CHOICES, ALWAYS,
        "Up/Down change it", 0, false, false, .min = 1, .max = 4096),
    ROW(RESOURCES, "Resource spec", "roles[0].resource_spec[0].name", CHOICE, SPECS, ALWAYS,
        "what one worker gets", 0, false, false),
    ROW(IMAGE, "From catalog", "image_source", CHOICE, IMAGES, ALWAYS,
        "pool (built-in), dev-machine and private images; Enter lists them, type to filter", 0,
        true, false),
    ROW(IMAGE, "Image", "roles[0].image_path", TEXT, NO_CHOICES, ALWAYS,
        "[registry[:port]/]repo[:tag][@sha256:…]; local/host runs on the machine itself", 1024,
        false, false),
    ROW(IMAGE, "Startup script", "roles[0].startup_script", TEXTAREA, NO_CHOICES, ALWAYS,
        "runs with sh -c in every worker", 0, false, false,
        .placeholder = "the commands every worker runs"),
    ROW(FAULT_TOLERANCE, "Max restarts", "fault_tolerance.backoff_limit", NUMBER, NO_CHOICES,
        ALWAYS, "RESTART_JOB restarts every worker; on big jobs re-initialising takes long", 0,
        false, false, .words = "restarts (0 never, -1 forever)", .unset_until_typed = true),
    ROW(FAULT_TOLERANCE, "Rules (first match wins)", "fault_tolerance.rules", LIST, NO_CHOICES,
        ALWAYS, NULL, 0, true, false),
    ROW(FAULT_TOLERANCE, NULL, "", NOTE, NO_CHOICES, ALWAYS,
        "When no rule matches, or there are none, the platform default applies: restart the "
        "whole job while restarts remain. Marking a node unschedulable is anti-affinity; "
        "affinity (staying on the same nodes) is not offered by the platform.",
        0, true, false),
    ROW(DATA, NULL, "", NOTE, NO_CHOICES, ALWAYS,
        "POSIX permissions of a volume are set by the tenant admin", 0, true, false),
    ROW(DATA, "AFS volumes", "mount", LIST, NO_CHOICES, ALWAYS, NULL, 0, true, false),
    ROW(ENVIRONMENT, "Variables", "env", LIST, NO_CHOICES, ALWAYS, NULL, 0, true, false),
    ROW(ENVIRONMENT, "SSH", "ssh.auto_key_setup", TOGGLE, NO_CHOICES, ALWAYS,
        "keys appear read-only at the SSH config path; always on for MPI", 0, false, false,
        .words = "passwordless SSH between workers"),
    ROW(ENVIRONMENT, "SSH config", "ssh.config_mount_path", TEXT, NO_CHOICES, SSH,
        "read-only in every worker: copy the files elsewhere to edit them", 0, false, true,
        .placeholder = JOBSPEC_DEFAULT_SSH_PATH),
    ROW(TENSORBOARD, "TensorBoard", "tensorboard", TOGGLE, NO_CHOICES, ALWAYS,
        "logs go on a mounted volume; curves show live in `trainjob top` (M on the job)", 0, false,
        false, .words = "enabled"),
    ROW(TENSORBOARD, "Log path", "tensorboard.log_path", CHOICE, MOUNT_PATHS, TENSORBOARD, NULL, 0,
        true, false),
    ROW(TENSORBOARD, "Directory", "tensorboard.log_path", TEXT, NO_CHOICES, TENSORBOARD,
        "optional: a directory under the mount path, e.g. tb/run1", 0, true, false,
        .placeholder = "the mount path itself"),
};

const struct formtab_row *formtab_rows(size_t *n)
{
    *n = sizeof rows / sizeof rows[0];
    return rows;
}

/* The first row from `from` on that edits path, or NULL. */
static const struct formtab_row *row_from(const struct formtab_row *from, const char *path)
{
    for (const struct formtab_row *r = from; r < rows + sizeof rows / sizeof rows[0]; r++)
        if (strcmp(r->path, path) == 0)
            return r;
    return NULL;
}

const struct formtab_row *formtab_row(const char *path)
{
    return row_from(rows, path);
}

const struct formtab_row *formtab_row_next(const struct formtab_row *after, const char *path)
{
    return row_from(after + 1, path);
}
