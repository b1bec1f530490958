/*
 * imageref: container image references, `[registry[:port]/]repo[/repo…][:tag][@sha256:<hex>]`,
 * parsed with the docker distribution grammar.
 *
 * Validation (roles[0].image_path) uses it to say what is wrong and where; the
 * wizard uses the parts to show an image's registry, repository and tag.
 */
#ifndef API_IMAGEREF_H
#define API_IMAGEREF_H

#include <stddef.h>

#define IMAGEREF_MAX_TAG 128

/* The parts of a reference; each is NULL when absent. Owned: imageref_free. */
struct imageref {
    char *registry;   /* "registry.cn-sh-01.sensecore.cn", "localhost:5000" */
    char *repository; /* "ngc/pytorch": the path after the registry */
    char *tag;        /* "25.06-py3" */
    char *digest;     /* "sha256:<64 hex>" */
};

/*
 * Parses s into out. Returns 0, or -1 with *err_offset the byte offset of the
 * problem in s and *err_msg a static message (lower case, no trailing period).
 * out is left empty on error; err_offset and err_msg may be NULL.
 */
int imageref_parse(const char *s, struct imageref *out, size_t *err_offset, const char **err_msg);
void imageref_free(struct imageref *ref);

#endif
