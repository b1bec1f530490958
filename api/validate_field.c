/*
 * validate_field: the create-task form's single-field rules (FORM.md) and
 * the rules for paths inside a container.
 *
 * The validate_* helpers here are called by the wizard while a field is
 * being typed; the check_* forms (with the byte offset of the problem) are
 * called by the section checks of validate.c, so every rule is written
 * once. Moved out of validate.c unchanged.
 */
#include "api/validate.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "api/finding.h"
#include "api/imageref.h"
#include "api/jobspec.h"
#include "api/validate_priv.h"
#include "util/pathpart.h"
#include "util/strbuf.h"
#include "util/utf8.h"

/* ---- paths inside a container ---- */

/* Is the normalised path equal to or under the normalised base, component-wise? */
bool path_under(const char *path, const char *base)
{
    size_t len = strlen(base);
    if (strcmp(base, "/") == 0)
        return true;
    return strncmp(path, base, len) == 0 && (path[len] == '\0' || path[len] == '/');
}

/*
 * The problem with the characters of a path, or NULL: a control character
 * (a newline, an escape sequence), or an invisible format character — a
 * bidi control such as U+202E, a zero-width space or joiner, U+2060-U+2064,
 * the BOM (utf8_is_invisible_format) — which makes a path read as another
 * (in a listing, a review, a terminal) than the one the worker gets.
 */
static const char *path_chars_problem(const char *p, char *buf, size_t bufsz)
{
    size_t n = strlen(p);
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t k = utf8_decode(p + i, n - i, &cp);
        if (cp < 0x20 || cp == 0x7f)
            return "must not contain control characters";
        if (utf8_is_invisible_format(cp)) {
            snprintf(buf, bufsz,
                     "must not contain U+%04X, an invisible format character (a bidi control "
                     "or a zero-width character) that makes the path read as another",
                     (unsigned)cp);
            return buf;
        }
        i += k;
    }
    return NULL;
}

/* The problem with an absolute path inside a container or volume, or NULL. */
const char *absolute_path_problem(const char *p, char *buf, size_t bufsz)
{
    if (p[0] != '/')
        return "must be an absolute path (starting with '/')";
    if (path_has_dotdot(p))
        return "must not contain '..'";
    return path_chars_problem(p, buf, bufsz);
}

/* The system directory the normalised path is or lies under, or NULL. */
static const char *system_directory(const char *norm, char *buf, size_t bufsz)
{
    static const char *const dirs[] = {"proc", "sys",  "dev",  "etc", "usr",
                                       "bin",  "sbin", "boot", "run"};
    const char *first = norm + 1;
    size_t len = strcspn(first, "/");

    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
        if (strlen(dirs[i]) == len && memcmp(first, dirs[i], len) == 0)
            goto found;
    if (len >= 3 && memcmp(first, "lib", 3) == 0)
        goto found;
    if (len == 3 && memcmp(first, "var", 3) == 0 && strncmp(first + 3, "/run", 4) == 0 &&
        (first[7] == '\0' || first[7] == '/')) {
        len = 7;
        goto found;
    }
    return NULL;
found:
    snprintf(buf, bufsz, "/%.*s", (int)len, first);
    return buf;
}

/* ---- single-field rules (also called by the wizard while typing) ---- */

/* A printable rendering of the code point cp, whose k bytes start at s. */
static void describe_char(char *out, size_t outsz, const char *s, size_t k, uint32_t cp)
{
    if (cp < 0x80 && utf8_cpwidth(cp) > 0)
        snprintf(out, outsz, "'%c'", (char)cp);
    else if (utf8_cpwidth(cp) > 0)
        snprintf(out, outsz, "'%.*s' (U+%04X)", (int)k, s, (unsigned)cp);
    else
        snprintf(out, outsz, "U+%04X", (unsigned)cp);
}

static bool is_ascii_alnum(uint32_t cp)
{
    return (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') || (cp >= '0' && cp <= '9');
}

/* display_name: 1-256 code points, CJK/letters/digits first, then also . : _ - */
const char *check_display_name(const char *s, char *buf, size_t bufsz, int *offset)
{
    *offset = FINDING_AT_VALUE;
    if (!nonempty(s))
        return "required: 1-256 characters: letters, digits, Chinese characters, '.', ':', '_' "
               "or '-'";
    size_t n = strlen(s), i = 0, count = 0, over = 0;
    while (i < n) {
        uint32_t cp;
        size_t k = utf8_decode(s + i, n - i, &cp);
        if (cp == UTF8_REPLACEMENT && k == 1) {
            *offset = offset_int(i);
            snprintf(buf, bufsz, "invalid UTF-8 at position %zu", count + 1);
            return buf;
        }
        bool ok = utf8_is_cjk(cp) || is_ascii_alnum(cp);
        if (!ok && count > 0)
            ok = cp == '.' || cp == ':' || cp == '_' || cp == '-';
        if (!ok) {
            char what[48];
            describe_char(what, sizeof what, s + i, k, cp);
            *offset = offset_int(i);
            if (count == 0)
                snprintf(buf, bufsz, "must start with a letter, digit or Chinese character, not %s",
                         what);
            else
                snprintf(buf, bufsz,
                         "character %s at position %zu is not allowed; use letters, digits, "
                         "Chinese characters, '.', ':', '_' or '-'",
                         what, count + 1);
            return buf;
        }
        if (count == VALIDATE_MAX_DISPLAY_NAME)
            over = i;
        count++;
        i += k;
    }
    if (count > VALIDATE_MAX_DISPLAY_NAME) {
        *offset = offset_int(over);
        snprintf(buf, bufsz, "must be at most %d characters (found %zu)", VALIDATE_MAX_DISPLAY_NAME,
                 count);
        return buf;
    }
    return NULL;
}

/* name: absent is fine (generated); else ^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$ */
const char *check_job_name(const char *name, char *buf, size_t bufsz, int *offset)
{
    static const char pattern[] = "1-63 characters: lowercase letters, digits and '-', "
                                  "starting with a letter and ending with a letter or digit";
    *offset = FINDING_AT_VALUE;
    if (name == NULL)
        return NULL;
    if (name[0] == '\0')
        return "must not be empty (leave it out to have one generated)";
    size_t n = strlen(name);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)name[i];
        bool allowed = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
        const char *rule = NULL;
        if (!allowed)
            rule = c >= 'A' && c <= 'Z' ? "is not allowed: letters must be lowercase"
                                        : "is not allowed: lowercase letters, digits and '-' only";
        else if (i == 0 && !(c >= 'a' && c <= 'z'))
            rule = "cannot start the name: it must start with a lowercase letter";
        else if (i == n - 1 && c == '-')
            rule = "cannot end the name: it must end with a letter or digit";
        if (rule) {
            *offset = offset_int(i);
            char what[16];
            if (c >= 0x20 && c < 0x7f)
                snprintf(what, sizeof what, "'%c'", c);
            else
                snprintf(what, sizeof what, "byte 0x%02x", c);
            snprintf(buf, bufsz, "character %s at position %zu %s (%s)", what, i + 1, rule,
                     pattern);
            return buf;
        }
    }
    if (n > VALIDATE_MAX_NAME) {
        *offset = VALIDATE_MAX_NAME;
        snprintf(buf, bufsz, "must be at most %d characters (found %zu)", VALIDATE_MAX_NAME, n);
        return buf;
    }
    return NULL;
}

/* roles[0].image_path: required, a valid image reference (imageref.h). */
const char *check_image_path(const char *image, int *offset)
{
    *offset = FINDING_AT_VALUE;
    if (!nonempty(image))
        return "required: an image reference such as registry.example.com/team/image:tag";
    struct imageref ref;
    size_t at = 0;
    const char *msg = NULL;
    if (imageref_parse(image, &ref, &at, &msg) < 0) {
        *offset = offset_int(at);
        return msg;
    }
    imageref_free(&ref);
    return NULL;
}

/*
 * System variables (FORM.md §6): the names the platform sets in every
 * worker, and those the process environment and the dynamic linker own
 * (a job setting PATH, HOME or LD_PRELOAD breaks the image or the shim
 * rather than configuring the job). One list: the check and the message
 * that names it (validate_env_reserved_list).
 */
static const char *const reserved_names[] = {
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "PWD",
    "HOSTNAME",
    "ECP_JOB_NAME",
    "MASTER_ADDR",
    "MASTER_PORT",
    "WORLD_SIZE",
    "RANK",
    "LOCAL_RANK",
    "NODE_RANK",
    "TF_CONFIG",
    "CUDA_VISIBLE_DEVICES",
    "NVIDIA_VISIBLE_DEVICES",
};
static const char *const reserved_prefixes[] = {"LD_", "SENSECORE_", "TRAINJOB_", "KUBERNETES_",
                                                "VC_", "SLURM_",     "OMPI_",     "PMIX_"};

const char *validate_env_reserved_list(void)
{
    static char list[512];
    if (list[0] == '\0') {
        struct strbuf sb = STRBUF_INIT;
        for (size_t i = 0; i < sizeof reserved_names / sizeof reserved_names[0]; i++)
            strbuf_addf(&sb, "%s%s", i ? ", " : "", reserved_names[i]);
        for (size_t i = 0; i < sizeof reserved_prefixes / sizeof reserved_prefixes[0]; i++)
            strbuf_addf(&sb, ", %s*", reserved_prefixes[i]);
        snprintf(list, sizeof list, "%s", strbuf_str(&sb));
        strbuf_free(&sb);
    }
    return list;
}

/* The reserved name or prefix key is, or NULL. */
static const char *env_name_reserved(const char *key)
{
    for (size_t i = 0; i < sizeof reserved_names / sizeof reserved_names[0]; i++)
        if (strcmp(key, reserved_names[i]) == 0)
            return reserved_names[i];
    for (size_t i = 0; i < sizeof reserved_prefixes / sizeof reserved_prefixes[0]; i++)
        if (strncmp(key, reserved_prefixes[i], strlen(reserved_prefixes[i])) == 0)
            return reserved_prefixes[i];
    return NULL;
}

/* env[].key: required, ^[A-Za-z_][A-Za-z0-9_]*$, at most 256, not set by the platform. */
const char *check_env_name(const char *key, char *buf, size_t bufsz, int *offset)
{
    *offset = FINDING_AT_VALUE;
    if (!nonempty(key))
        return "required: a name such as NCCL_DEBUG";
    size_t n = strlen(key);
    for (size_t i = 0; i < n; i++) {
        char c = key[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
                  (i > 0 && c >= '0' && c <= '9');
        if (!ok) {
            *offset = offset_int(i);
            return "must be letters, digits and '_', not starting with a digit "
                   "([A-Za-z_][A-Za-z0-9_]*)";
        }
    }
    if (n > VALIDATE_MAX_ENV_NAME) {
        *offset = VALIDATE_MAX_ENV_NAME;
        snprintf(buf, bufsz, "must be at most %d characters (found %zu)", VALIDATE_MAX_ENV_NAME, n);
        return buf;
    }
    const char *reserved = env_name_reserved(key);
    if (reserved) {
        if (reserved[strlen(reserved) - 1] != '_') /* a name; the prefixes end in '_' */
            snprintf(buf, bufsz,
                     "%s is a system variable: set by the platform, the image or the loader; "
                     "choose another name",
                     key);
        else
            snprintf(buf, bufsz,
                     "names starting %s are system variables: set by the platform, the image or "
                     "the loader; choose another name",
                     reserved);
        return buf;
    }
    return NULL;
}

/*
 * The one rule for every path a job places in a worker (a volume's
 * mount_path, ssh.config_mount_path): absolute, no "..", not "/", not a
 * system directory nor under one, not the platform's JOBSPEC_PLATFORM_DIR
 * (the working directory, the hostfile, the script) nor under it — a mount
 * there would hide what the worker needs to run. NULL when fine.
 */
const char *check_placed_path(const char *path, char *buf, size_t bufsz)
{
    const char *problem = absolute_path_problem(path, buf, bufsz);
    if (problem)
        return problem;
    if (strchr(path, ':'))
        return "must not contain ':' (as in Kubernetes)";
    struct strbuf norm = STRBUF_INIT;
    path_normalise(path, &norm);
    const char *n = strbuf_str(&norm);
    const char *msg = NULL;
    char dir[PATH_MAX_LEN];
    if (strcmp(n, "/") == 0) {
        msg = "must not be '/'; choose a directory such as /mnt/afs";
    } else if (system_directory(n, dir, sizeof dir)) {
        if (strcmp(n, dir) == 0)
            snprintf(buf, bufsz, "%s is a system directory; choose another path, e.g. /mnt/afs",
                     dir);
        else
            snprintf(buf, bufsz,
                     "lies under the system directory %s; choose another path, e.g. /mnt/afs", dir);
        msg = buf;
    } else if (path_under(n, JOBSPEC_PLATFORM_DIR)) {
        const char *what = "reserved for the platform (the job's working directory and files); "
                           "choose another path, e.g. /mnt/afs";
        if (strcmp(n, JOBSPEC_PLATFORM_DIR) == 0)
            snprintf(buf, bufsz, "%s is %s", JOBSPEC_PLATFORM_DIR, what);
        else
            snprintf(buf, bufsz, "lies under %s, %s", JOBSPEC_PLATFORM_DIR, what);
        msg = buf;
    }
    strbuf_free(&norm);
    return msg;
}

/* mount[].mount_path: required, then the rule for every placed path. */
const char *check_mount_path(const char *path, char *buf, size_t bufsz)
{
    if (!nonempty(path))
        return "required: where the volume appears in every worker, e.g. /mnt/afs";
    return check_placed_path(path, buf, bufsz);
}

/* mount[].subdir: a directory inside the volume, written plainly: absolute, no "..", ".", "//". */
const char *subdir_problem(const char *p, char *buf, size_t bufsz)
{
    const char *problem = absolute_path_problem(p, buf, bufsz);
    if (problem)
        return problem;
    for (const char *q = p + 1; *q;) {
        size_t len = strcspn(q, "/");
        if (len == 0)
            return "must not contain an empty component ('//')";
        if (len == 1 && q[0] == '.')
            return "must not contain a '.' component";
        q += len;
        q += *q == '/';
    }
    return NULL;
}

const char *validate_job_name(const char *name, char *buf, size_t bufsz)
{
    int offset;
    return check_job_name(name, buf, bufsz, &offset);
}

const char *validate_display_name(const char *display_name, char *buf, size_t bufsz)
{
    int offset;
    return check_display_name(display_name, buf, bufsz, &offset);
}

const char *validate_image_path(const char *image, char *buf, size_t bufsz)
{
    int offset;
    (void)buf;
    (void)bufsz;
    return check_image_path(image, &offset);
}

const char *validate_env_name(const char *key, char *buf, size_t bufsz)
{
    int offset;
    return check_env_name(key, buf, bufsz, &offset);
}

const char *validate_mount_path(const char *path, char *buf, size_t bufsz)
{
    return check_mount_path(path, buf, bufsz);
}
