/*
 * validate_priv: what the parts of the validator share and nothing else
 * sees — the single-field rules and the container-path helpers of
 * validate_field.c, called by the form-section checks in validate.c.
 * Included only by api/validate*.c.
 */
#ifndef API_VALIDATE_PRIV_H
#define API_VALIDATE_PRIV_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

struct strbuf;

#define PATH_MAX_LEN 96
#define MSG_MAX_LEN 320

static inline bool nonempty(const char *s)
{
    return s != NULL && s[0] != '\0';
}

static inline int offset_int(size_t offset)
{
    return offset > INT_MAX ? INT_MAX : (int)offset;
}

/* Paths inside a container (validate_field.c; path_normalise is util/pathpart's). */
bool path_under(const char *path, const char *base);
const char *absolute_path_problem(const char *p, char *buf, size_t bufsz);

/* Single-field rules with the offset of the problem (validate_field.c). */
const char *check_display_name(const char *s, char *buf, size_t bufsz, int *offset);
const char *check_job_name(const char *name, char *buf, size_t bufsz, int *offset);
const char *check_image_path(const char *image, int *offset);
const char *check_env_name(const char *key, char *buf, size_t bufsz, int *offset);
const char *check_placed_path(const char *path, char *buf, size_t bufsz);
const char *check_mount_path(const char *path, char *buf, size_t bufsz);
const char *subdir_problem(const char *p, char *buf, size_t bufsz);

#endif
