/*
 * imageref: the container image reference parser; see imageref.h.
 *
 * The grammar is docker distribution's reference grammar, narrowed to what
 * the form accepts (FORM.md §3):
 *
 *   reference  := name [ ":" tag ] [ "@" digest ]
 *   name       := [ registry "/" ] component ( "/" component )*
 *   registry   := host [ ":" port ]      the first part, when it holds '.' or ':'
 *                                        or is "localhost"
 *   host       := label ( "." label )*   label := [A-Za-z0-9] ( [A-Za-z0-9-]* [A-Za-z0-9] )?
 *   component  := alnum ( separator alnum )*      alnum := [a-z0-9]+
 *   separator  := "." | "_" | "__" | "-"+
 *   tag        := [A-Za-z0-9_] [A-Za-z0-9_.-]{0,127}
 *   digest     := "sha256:" 64 × [0-9a-f]
 *
 * Called by validate.c (roles[0].image_path) and by the wizard's image step.
 */
#include "api/imageref.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

#define DIGEST_PREFIX "sha256:"
#define DIGEST_HEX 64

struct parse_error {
    size_t offset;
    const char *msg;
};

static bool is_lower_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static bool is_alnum(char c)
{
    return is_lower_alnum(c) || (c >= 'A' && c <= 'Z');
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static int fail(struct parse_error *err, size_t offset, const char *msg)
{
    err->offset = offset;
    err->msg = msg;
    return -1;
}

/* Is s[0..n) a registry rather than the first repository component? */
static bool looks_like_registry(const char *s, size_t n)
{
    if (n == 9 && memcmp(s, "localhost", 9) == 0)
        return true;
    return memchr(s, '.', n) != NULL || memchr(s, ':', n) != NULL;
}

/* Checks the registry s[lo..hi): dot-separated host labels, then an optional ":port". */
static int parse_registry(const char *s, size_t lo, size_t hi, struct parse_error *err)
{
    const char *colon = memchr(s + lo, ':', hi - lo);
    size_t host_end = colon ? (size_t)(colon - s) : hi;

    if (host_end == lo)
        return fail(err, lo, "registry host must not be empty");
    size_t label = lo;
    for (size_t i = lo; i <= host_end; i++) {
        if (i == host_end || s[i] == '.') {
            if (i == label)
                return fail(err, i, "registry host has an empty label (two '.' in a row?)");
            if (s[label] == '-' || s[i - 1] == '-')
                return fail(err, s[label] == '-' ? label : i - 1,
                            "registry host labels must start and end with a letter or digit");
            label = i + 1;
        } else if (!is_alnum(s[i]) && s[i] != '-') {
            return fail(err, i, "registry host may contain only letters, digits, '.' and '-'");
        }
    }
    if (colon) {
        if (host_end + 1 == hi)
            return fail(err, hi, "registry port must not be empty after ':'");
        for (size_t i = host_end + 1; i < hi; i++)
            if (!is_digit(s[i]))
                return fail(err, i, "registry port must be digits");
    }
    return 0;
}

/* Checks one repository path component s[lo..hi). */
static int parse_component(const char *s, size_t lo, size_t hi, struct parse_error *err)
{
    if (lo == hi)
        return fail(err, lo, "repository has an empty path component (two '/' in a row?)");
    size_t i = lo;
    while (i < hi) {
        char c = s[i];
        if (c >= 'A' && c <= 'Z')
            return fail(err, i, "repository must be lowercase");
        if (is_lower_alnum(c)) {
            i++;
            continue;
        }
        if (c != '.' && c != '_' && c != '-')
            return fail(err, i,
                        "repository may contain only lowercase letters, digits, '.', '_', '-' "
                        "and '/'");
        /* A run of separators: ".", "_", "__" or any number of '-'. */
        size_t run = i;
        while (i < hi && (s[i] == '.' || s[i] == '_' || s[i] == '-'))
            i++;
        size_t len = i - run;
        bool dashes = strspn(s + run, "-") >= len;
        bool ok = dashes || (len == 1) || (len == 2 && s[run] == '_' && s[run + 1] == '_');
        if (run == lo)
            return fail(err, run, "repository path components must start with a letter or digit");
        if (i == hi)
            return fail(err, run, "repository path components must end with a letter or digit");
        if (!ok)
            return fail(err, run,
                        "repository separators must be a single '.', '_' or '__', or dashes");
    }
    return 0;
}

/* Checks the tag s[lo..hi) (after the ':'). */
static int parse_tag(const char *s, size_t lo, size_t hi, struct parse_error *err)
{
    if (lo == hi)
        return fail(err, lo, "tag must not be empty after ':'");
    for (size_t i = lo; i < hi; i++) {
        char c = s[i];
        if (i == lo && !is_alnum(c) && c != '_')
            return fail(err, i, "tag must start with a letter, digit or '_'");
        if (!is_alnum(c) && c != '_' && c != '.' && c != '-')
            return fail(err, i, "tag may contain only letters, digits, '_', '.' and '-'");
    }
    if (hi - lo > IMAGEREF_MAX_TAG)
        return fail(err, lo + IMAGEREF_MAX_TAG, "tag must be at most 128 characters");
    return 0;
}

/* Checks the digest s[lo..hi) (after the '@'). */
static int parse_digest(const char *s, size_t lo, size_t hi, struct parse_error *err)
{
    static const char msg[] = "digest must be 'sha256:' followed by 64 lowercase hex digits";
    size_t plen = strlen(DIGEST_PREFIX);

    if (hi - lo < plen || memcmp(s + lo, DIGEST_PREFIX, plen) != 0)
        return fail(err, lo, msg);
    for (size_t i = lo + plen; i < hi; i++)
        if (!is_digit(s[i]) && !(s[i] >= 'a' && s[i] <= 'f'))
            return fail(err, i, msg);
    if (hi - lo - plen != DIGEST_HEX)
        return fail(err, lo + plen, msg);
    return 0;
}

/* Finds the parts of s and checks each, left to right; fills out on success. */
static int parse(const char *s, struct imageref *out, struct parse_error *err)
{
    size_t n = strlen(s);
    if (n == 0)
        return fail(err, 0, "empty image reference");

    /* "@" starts the digest; the tag is after the first ':' past the last '/'. */
    const char *at = strchr(s, '@');
    size_t name_end = at ? (size_t)(at - s) : n;
    size_t last_slash = 0;
    bool has_slash = false;
    for (size_t i = 0; i < name_end; i++)
        if (s[i] == '/')
            last_slash = i, has_slash = true;
    const char *colon =
        memchr(s + (has_slash ? last_slash : 0), ':', name_end - (has_slash ? last_slash : 0));
    size_t repo_end = colon ? (size_t)(colon - s) : name_end;

    if (repo_end == 0)
        return fail(err, 0, "missing repository before ':' or '@'");

    size_t path_start = 0;
    const char *first_slash = memchr(s, '/', repo_end);
    if (first_slash && looks_like_registry(s, (size_t)(first_slash - s))) {
        if (parse_registry(s, 0, (size_t)(first_slash - s), err) < 0)
            return -1;
        path_start = (size_t)(first_slash - s) + 1;
    }
    size_t comp = path_start;
    for (size_t i = path_start; i <= repo_end; i++) {
        if (i == repo_end || s[i] == '/') {
            if (parse_component(s, comp, i, err) < 0)
                return -1;
            comp = i + 1;
        }
    }
    if (colon && parse_tag(s, repo_end + 1, name_end, err) < 0)
        return -1;
    if (at) {
        const char *at2 = strchr(at + 1, '@');
        if (at2)
            return fail(err, (size_t)(at2 - s), "only one '@' digest is allowed");
        if (parse_digest(s, name_end + 1, n, err) < 0)
            return -1;
    }

    if (path_start > 0)
        out->registry = xstrndup(s, path_start - 1);
    out->repository = xstrndup(s + path_start, repo_end - path_start);
    if (colon)
        out->tag = xstrndup(s + repo_end + 1, name_end - repo_end - 1);
    if (at)
        out->digest = xstrdup(at + 1);
    return 0;
}

int imageref_parse(const char *s, struct imageref *out, size_t *err_offset, const char **err_msg)
{
    struct parse_error err = {0, NULL};
    memset(out, 0, sizeof *out);
    if (parse(s ? s : "", out, &err) == 0)
        return 0;
    imageref_free(out);
    if (err_offset)
        *err_offset = err.offset;
    if (err_msg)
        *err_msg = err.msg;
    return -1;
}

void imageref_free(struct imageref *ref)
{
    free(ref->registry);
    free(ref->repository);
    free(ref->tag);
    free(ref->digest);
    memset(ref, 0, sizeof *ref);
}
