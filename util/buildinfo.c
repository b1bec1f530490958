/*
 * buildinfo: the version and the data and helper directories; see
 * buildinfo.h. The only object that includes the generated
 * $(BUILD)/gen/build_paths.h, so a new commit or PREFIX rebuilds this file
 * alone.
 */
#include "util/buildinfo.h"

#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "build_paths.h" /* $(BUILD)/gen: VERSION and PREFIX from the Makefile */
#include "util/fileio.h"
#include "util/xalloc.h"

#define SOURCE_TREE_DEPTH 3 /* build/asan/tests/test_x is three levels below the checkout */

const char *buildinfo_version(void)
{
    return TRAINJOB_VERSION;
}

static bool is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The directory of the running binary (canonical), or NULL. */
static char *self_dir(void)
{
    char *beside = file_beside_self(".");
    if (beside == NULL)
        return NULL;
    char *real = realpath(beside, NULL);
    free(beside);
    return real;
}

/* The checkout dir is above: it holds the shipped schemes and the version script. */
static char *source_tree_above(const char *dir)
{
    char *d = xstrdup(dir);
    for (int up = 1; up <= SOURCE_TREE_DEPTH; up++) {
        char *slash = strrchr(d, '/');
        if (slash == NULL || slash == d)
            break;
        *slash = '\0';
        char *theme = xasprintf("%s/themes/default.theme", d);
        char *script = xasprintf("%s/scripts/version.sh", d);
        bool found = is_file(theme) && is_file(script);
        free(theme);
        free(script);
        if (found)
            return d;
    }
    free(d);
    return NULL;
}

/* Appends path (taken) when it is a directory not yet listed (by its real path). */
static void add_dir(char ***v, size_t *n, char *path)
{
    char *real = path ? realpath(path, NULL) : NULL;
    free(path);
    if (real == NULL || !is_dir(real)) {
        free(real);
        return;
    }
    for (size_t i = 0; i < *n; i++)
        if (strcmp((*v)[i], real) == 0) {
            free(real);
            return;
        }
    *v = xreallocarray(*v, *n + 2, sizeof **v);
    (*v)[(*n)++] = real;
    (*v)[*n] = NULL;
}

char **buildinfo_data_dirs(void)
{
    char **v = xcalloc(1, sizeof *v);
    size_t n = 0;
    char *self = self_dir();
    if (self)
        add_dir(&v, &n, xasprintf("%s/../share/trainjob", self));
    add_dir(&v, &n, xstrdup(TRAINJOB_PKGDATADIR));
    if (self)
        add_dir(&v, &n, source_tree_above(self));
    free(self);
    return v;
}

char *buildinfo_helper(const char *prog)
{
    char *self = self_dir();
    char *cand[3] = {
        self ? xasprintf("%s/%s", self, prog) : NULL,
        self ? xasprintf("%s/../libexec/trainjob/%s", self, prog) : NULL,
        xasprintf("%s/%s", TRAINJOB_PKGLIBEXEC, prog),
    };
    free(self);
    char *found = NULL;
    for (size_t i = 0; i < sizeof cand / sizeof cand[0]; i++) {
        if (found == NULL && cand[i] && is_file(cand[i]) && access(cand[i], X_OK) == 0)
            found = cand[i];
        else
            free(cand[i]);
    }
    return found;
}

void buildinfo_strv_free(char **v)
{
    if (v == NULL)
        return;
    for (char **p = v; *p; p++)
        free(*p);
    free(v);
}
