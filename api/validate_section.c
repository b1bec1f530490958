/*
 * validate_section: which form section a finding's field path belongs to,
 * and each section's title. Called by the wizard (to jump to a finding) and
 * by `trainjob validate` (to group findings). Moved out of validate.c
 * unchanged.
 */
#include "api/validate.h"

#include <stdbool.h>
#include <string.h>

/* Does path start with the component word, followed by the end, '.' or '['? */
static bool first_is(const char *path, const char *word, const char **rest)
{
    size_t len = strlen(word);
    if (strncmp(path, word, len) != 0)
        return false;
    char next = path[len];
    if (next != '\0' && next != '.' && next != '[')
        return false;
    *rest = path + len;
    return true;
}

/* roles…: image fields to Image, output-only descriptions to Review, the rest to Resources. */
static enum form_section roles_section(const char *rest)
{
    if (rest[0] == '[') {
        const char *close = strchr(rest, ']');
        rest = close ? close + 1 : "";
    }
    const char *r2;
    if (rest[0] == '.' &&
        (first_is(rest + 1, "image_path", &r2) || first_is(rest + 1, "startup_script", &r2)))
        return SECTION_IMAGE;
    if (rest[0] == '.' && first_is(rest + 1, "resource_spec", &r2)) {
        size_t len = strlen(r2);
        static const char desc[] = ".description";
        if (len >= sizeof desc - 1 && strcmp(r2 + len - (sizeof desc - 1), desc) == 0)
            return SECTION_REVIEW;
    }
    return SECTION_RESOURCES;
}

enum form_section form_section_of(const char *path)
{
    const char *rest;
    if (path == NULL)
        return SECTION_REVIEW;
    if (first_is(path, "workspace_name", &rest) || first_is(path, "display_name", &rest) ||
        first_is(path, "name", &rest))
        return SECTION_BASICS;
    if (first_is(path, "resource_pool", &rest))
        return strcmp(rest, ".display_name") == 0 ? SECTION_REVIEW : SECTION_BASICS;
    if (first_is(path, "scheduling", &rest))
        return strcmp(rest, ".quota_type") == 0 ? SECTION_BASICS : SECTION_RESOURCES;
    if (first_is(path, "framework", &rest))
        return SECTION_RESOURCES;
    if (first_is(path, "roles", &rest))
        return roles_section(rest);
    if (first_is(path, "fault_tolerance", &rest))
        return SECTION_FAULT_TOLERANCE;
    if (first_is(path, "mount", &rest))
        return SECTION_DATA;
    if (first_is(path, "env", &rest) || first_is(path, "ssh", &rest))
        return SECTION_ENVIRONMENT;
    if (first_is(path, "tensorboard", &rest))
        return SECTION_TENSORBOARD;
    return SECTION_REVIEW;
}

const char *form_section_title(enum form_section section)
{
    switch (section) {
    case SECTION_BASICS:
        return "Basics";
    case SECTION_RESOURCES:
        return "Resources";
    case SECTION_IMAGE:
        return "Image";
    case SECTION_FAULT_TOLERANCE:
        return "Fault tolerance";
    case SECTION_DATA:
        return "Data";
    case SECTION_ENVIRONMENT:
        return "Environment";
    case SECTION_TENSORBOARD:
        return "TensorBoard";
    case SECTION_REVIEW:
    case SECTION_COUNT:
        break;
    }
    return "Review";
}
