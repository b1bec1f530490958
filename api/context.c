/*
 * context: the client's config.yaml and the context in effect; see
 * context.h.
 *
 * The file format is struct context_file described once as api/schema
 * tables: parsing is yamltree → schema_decode (strict) → the checks below,
 * with every finding placed at its line and column through the document's
 * docpos table — the same path engine/config.c takes for engine.yaml.
 * Called by the CLI (and later the TUI) before it opens a backend.
 */
#include "api/context.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <jansson.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/docpos.h"
#include "api/finding.h"
#include "api/http.h"
#include "api/paths.h"
#include "api/schema.h"
#include "api/slurm_script.h"
#include "api/yamltree.h"
#include "util/fileio.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#define CONFIG_MAX_SIZE (1u << 20)
#define SECRET_MAX_SIZE 4096

static const char *const driver_tab[] = {"DRIVER_UNSPECIFIED", "acp", "slurm", "trainjobd"};
const struct enum_names context_driver_names = {driver_tab,
                                                sizeof driver_tab / sizeof driver_tab[0]};

// clang-format off
static const struct field context_fields[] = {
    F_STR(struct context, name),
    F_ENUMERATION(struct context, driver, context_driver_names),
    F_STR(struct context, endpoint),
    F_STR(struct context, subscription),
    F_STR(struct context, resource_group),
    F_STR(struct context, zone),
    F_STR(struct context, workspace),
    F_STR(struct context, access_key),
    F_STR(struct context, secret_key_file),
    F_STR(struct context, theme),
    F_STR(struct context, monitor_endpoint),
    F_STR(struct context, telemetry_station),
    F_STR(struct context, user),
    F_STR(struct context, token_file),
    F_STR(struct context, token_command),
    F_STR(struct context, jobs_dir),
    F_STR(struct context, launcher),
    F_STR_MAP(struct context, qos),
    F_STR_MAP(struct context, volumes),
};
// clang-format on
static const struct object_type context_type = SCHEMA_ELEM(struct context, context_fields);

static const struct field file_fields[] = {
    F_STR(struct context_file, current_context),
    F_LIST(struct context_file, contexts, context_count, context_type),
};
static const struct object_type file_type = SCHEMA_OBJ(file_fields);

void context_free(struct context *ctx)
{
    schema_free(&context_type, ctx);
    memset(ctx, 0, sizeof *ctx);
}

void context_file_free(struct context_file *cf)
{
    schema_free(&file_type, cf);
    memset(cf, 0, sizeof *cf);
}

/* The QOS map's keys: a priority, alone for standard pools, IDLE_ for idle ones. */
static const char *const qos_keys[] = {"NORMAL",      "HIGH",      "HIGHEST",
                                       "IDLE_NORMAL", "IDLE_HIGH", "IDLE_HIGHEST"};

/* volumes: {NAME: /shared/path}: plain names, paths every node can bind. */
static void check_volumes(const struct context *c, size_t i, struct findings *fs)
{
    char path[128];
    const char *key;
    json_t *v;
    json_object_foreach(c->volumes, key, v)
    {
        snprintf(path, sizeof path, "contexts[%zu].volumes.%.60s", i, key);
        if (!slurm_safe_name(key, 63)) {
            findings_add(fs, SEVERITY_ERROR, path,
                         "a volume's name is what a job's mount[].id says: up to 63 letters, "
                         "digits, '.', '_' and '-', not starting with '.' or '-'");
            continue;
        }
        const char *dir = json_string_value(v);
        const char *why = slurm_path_problem(dir, true);
        if (why == NULL && strcmp(dir, "/") == 0)
            why = "the root directory cannot be a volume: name a directory under it";
        if (why)
            findings_add(fs, SEVERITY_ERROR, path, "%s", why);
    }
}

/* A slurm context names its endpoint, user, one token source and the jobs directory. */
static void check_slurm(const struct context *c, size_t i, struct findings *fs)
{
    char path[96];
    snprintf(path, sizeof path, "contexts[%zu]", i);
    if (c->endpoint == NULL)
        findings_add(fs, SEVERITY_ERROR, path,
                     "driver slurm needs an endpoint: http://HOST:PORT or "
                     "http+unix:///path/to/slurmrestd.sock");
    if (c->user == NULL || *c->user == '\0')
        findings_add(fs, SEVERITY_ERROR, path,
                     "driver slurm needs user: the Slurm user the token is for");
    if ((c->token_file == NULL) == (c->token_command == NULL))
        findings_add(fs, SEVERITY_ERROR, path,
                     "driver slurm needs exactly one of token_file and token_command");
    if (c->jobs_dir == NULL || c->jobs_dir[0] != '/')
        findings_add(fs, SEVERITY_ERROR, path,
                     "driver slurm needs jobs_dir: an absolute path on the filesystem every node "
                     "shares");
    const char *key;
    json_t *v;
    json_object_foreach(c->qos, key, v)
    {
        bool known = false;
        for (size_t k = 0; k < sizeof qos_keys / sizeof qos_keys[0]; k++)
            known = known || strcmp(key, qos_keys[k]) == 0;
        if (!known) {
            snprintf(path, sizeof path, "contexts[%zu].qos.%.40s", i, key);
            findings_add(fs, SEVERITY_ERROR, path,
                         "not a priority: the keys are NORMAL, HIGH, HIGHEST, IDLE_NORMAL, "
                         "IDLE_HIGH and IDLE_HIGHEST");
        }
    }
}

/* Names present and unique, endpoints well formed, keys in pairs, current_context known. */
static void check_file(const struct context_file *cf, struct findings *fs)
{
    char path[96];
    for (size_t i = 0; i < cf->context_count; i++) {
        const struct context *c = &cf->contexts[i];
        snprintf(path, sizeof path, "contexts[%zu].name", i);
        if (c->name == NULL || c->name[0] == '\0') {
            snprintf(path, sizeof path, "contexts[%zu]", i);
            findings_add(fs, SEVERITY_ERROR, path, "required: every context needs a name");
        } else {
            for (size_t j = 0; j < i; j++)
                if (cf->contexts[j].name && strcmp(cf->contexts[j].name, c->name) == 0) {
                    findings_add(fs, SEVERITY_ERROR, path,
                                 "duplicate context name '%s' (also contexts[%zu])", c->name, j);
                    break;
                }
        }
        if (c->endpoint) {
            struct http_endpoint ep;
            struct strbuf why = STRBUF_INIT;
            snprintf(path, sizeof path, "contexts[%zu].endpoint", i);
            if (http_endpoint_parse(c->endpoint, &ep, &why) != 0)
                findings_add(fs, SEVERITY_ERROR, path, "%s", strbuf_str(&why));
            http_endpoint_free(&ep);
            strbuf_free(&why);
        }
        if (c->monitor_endpoint) {
            struct http_endpoint ep;
            struct strbuf why = STRBUF_INIT;
            snprintf(path, sizeof path, "contexts[%zu].monitor_endpoint", i);
            if (http_endpoint_parse(c->monitor_endpoint, &ep, &why) != 0)
                findings_add(fs, SEVERITY_ERROR, path, "%s", strbuf_str(&why));
            http_endpoint_free(&ep);
            strbuf_free(&why);
        }
        if (c->driver == CONTEXT_DRIVER_SLURM) {
            check_slurm(c, i, fs);
            check_volumes(c, i, fs);
        } else if (c->volumes) {
            snprintf(path, sizeof path, "contexts[%zu].volumes", i);
            findings_add(fs, SEVERITY_ERROR, path,
                         "only a slurm context names volumes: trainjobd's are in its "
                         "engine.yaml, ACP's are the platform's");
        }
        /* access_key alone is fine: $TRAINJOB_SECRET_KEY may hold its secret. */
        if (c->secret_key_file && c->access_key == NULL) {
            snprintf(path, sizeof path, "contexts[%zu].secret_key_file", i);
            findings_add(fs, SEVERITY_ERROR, path,
                         "a secret_key_file needs the access_key it belongs to");
        }
    }
    if (cf->current_context) {
        bool known = false;
        for (size_t i = 0; i < cf->context_count && !known; i++)
            known = cf->contexts[i].name && strcmp(cf->contexts[i].name, cf->current_context) == 0;
        if (!known)
            findings_add(fs, SEVERITY_ERROR, "current_context", "no context is named '%s'",
                         cf->current_context);
    }
}

static void check_file_text(const void *cf, struct findings *fs)
{
    check_file(cf, fs);
}

/* YAML → tree → struct (strict) → checks; every finding gets its line:col. */
int context_file_parse(const char *text, size_t len, struct context_file *cf, struct findings *fs)
{
    memset(cf, 0, sizeof *cf);
    /* an empty file is no contexts */
    if (schema_decode_yaml(text, len, &file_type, cf, check_file_text,
                           "a mapping with contexts and current_context", true, fs) > 0) {
        context_file_free(cf);
        return -1;
    }
    return 0;
}

/* ---- resolving ---------------------------------------------------------- */

static char *dup_or(const char *s, const char *fallback)
{
    return xstrdup(s && *s ? s : fallback);
}

/*
 * Warns, as ssh does for a private key, when the secret key file is open to
 * other users (any group or other permission bit); one they own or may
 * write is refused by read_secret.
 */
static void check_secret_mode(const struct context *c, const char *path, struct findings *fs)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return; /* reading it says why */
    if (st.st_mode & 077)
        findings_add(fs, SEVERITY_WARNING, "secret_key_file",
                     "context '%s': %s is accessible by others (mode %04o): anyone who can "
                     "read it can sign requests as you; run chmod 600 %s",
                     c->name, path, (unsigned)(st.st_mode & 07777), path);
}

/* The secret key: the file's first line, without surrounding blanks. */
static int read_secret(const struct context *c, char **out, struct findings *fs, struct strbuf *err)
{
    const char *path = c->secret_key_file;
    check_secret_mode(c, path, fs);
    char *data = NULL;
    size_t len = 0;
    struct strbuf io = STRBUF_INIT;
    struct stat st;
    int rc = file_read_regular_stat(path, SECRET_MAX_SIZE, &data, &len, &st, &io);
    if (rc != 0) {
        strbuf_addf(err, "context '%s': secret_key_file: %s", c->name, strbuf_str(&io));
    } else if (context_file_trusted(path, &st, &io) != 0) {
        /* Another user's key, or one they may replace, would sign every request as them. */
        strbuf_addf(err,
                    "context '%s': secret_key_file %s: whoever can write it chooses as whom "
                    "you act; refused",
                    c->name, strbuf_str(&io));
        rc = -1;
    } else {
        size_t start = strspn(data, " \t\r\n");
        size_t n = strcspn(data + start, "\r\n");
        while (n > 0 && (data[start + n - 1] == ' ' || data[start + n - 1] == '\t'))
            n--;
        if (n == 0) {
            strbuf_addf(err, "context '%s': secret_key_file %s is empty", c->name, path);
            rc = -1;
        } else {
            *out = xstrndup(data + start, n);
        }
        memset(data, 0, len);
    }
    free(data);
    strbuf_free(&io);
    return rc;
}

/*
 * token_file must be there to be read (slurm_rest reads it, and again when
 * a token is refused): a missing or unreadable one is a mistake in the
 * config file, said now naming the context, the field and the path, not
 * later as slurmrestd refusing to authenticate. A symlink or a FIFO opens
 * here (without following, without waiting) and is refused by the reader,
 * which says why.
 */
static int check_token_file(const struct context *c, struct strbuf *err)
{
    int fd = open(c->token_file, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW);
    if (fd < 0 && errno != ELOOP) {
        strbuf_addf(err, "context '%s': token_file %s: %s", c->name, c->token_file,
                    strerror(errno));
        return -1;
    }
    if (fd >= 0)
        close(fd);
    return 0;
}

/* Copies src into dst, every missing field given its local default. */
static void fill(struct context *dst, const struct context *src)
{
    dst->name = dup_or(src ? src->name : NULL, CONTEXT_LOCAL_NAME);
    /* Left out: the local engine when the context names no endpoint (its socket), else ACP. */
    dst->driver = src && src->driver != CONTEXT_DRIVER_UNSPECIFIED ? src->driver
                  : src && src->endpoint                           ? CONTEXT_DRIVER_ACP
                                                                   : CONTEXT_DRIVER_TRAINJOBD;
    dst->endpoint = src && src->endpoint ? xstrdup(src->endpoint) : NULL;
    dst->subscription = dup_or(src ? src->subscription : NULL, CONTEXT_LOCAL_SUBSCRIPTION);
    dst->resource_group = dup_or(src ? src->resource_group : NULL, CONTEXT_LOCAL_RESOURCE_GROUP);
    dst->zone = dup_or(src ? src->zone : NULL, CONTEXT_LOCAL_ZONE);
    dst->workspace = dup_or(src ? src->workspace : NULL, CONTEXT_LOCAL_WORKSPACE);
    dst->access_key = src && src->access_key ? xstrdup(src->access_key) : NULL;
    dst->secret_key_file = src && src->secret_key_file ? xstrdup(src->secret_key_file) : NULL;
    dst->theme = src && src->theme ? xstrdup(src->theme) : NULL;
    dst->monitor_endpoint = src && src->monitor_endpoint ? xstrdup(src->monitor_endpoint) : NULL;
    dst->telemetry_station = src && src->telemetry_station ? xstrdup(src->telemetry_station) : NULL;
    dst->user = src && src->user ? xstrdup(src->user) : NULL;
    dst->token_file = src && src->token_file ? xstrdup(src->token_file) : NULL;
    dst->token_command = src && src->token_command ? xstrdup(src->token_command) : NULL;
    dst->jobs_dir = src && src->jobs_dir ? xstrdup(src->jobs_dir) : NULL;
    dst->launcher = src && src->launcher ? xstrdup(src->launcher) : NULL;
    dst->qos = src && src->qos ? json_deep_copy(src->qos) : NULL;
    dst->volumes = src && src->volumes ? json_deep_copy(src->volumes) : NULL;
}

/*
 * Whether the group of st is its owner's own (a user private group, umask
 * 002's systems): named as the user, nobody else listed in it.
 */
static bool private_group(const struct stat *st)
{
    struct passwd *pw = getpwuid(st->st_uid);
    if (pw == NULL || pw->pw_gid != st->st_gid)
        return false;
    char *user = xstrdup(pw->pw_name); /* getgrgid may reuse getpwuid's storage */
    struct group *gr = getgrgid(st->st_gid);
    bool own = gr && strcmp(gr->gr_name, user) == 0;
    for (char **m = own ? gr->gr_mem : NULL; m && *m; m++)
        own = own && strcmp(*m, user) == 0;
    free(user);
    return own;
}

int context_file_trusted(const char *path, const struct stat *st, struct strbuf *why)
{
    if (st->st_uid != getuid() && st->st_uid != 0) {
        struct passwd *pw = getpwuid(st->st_uid);
        strbuf_addf(why, "%s is owned by %s%s (uid %u), not by you or root", path,
                    pw ? "user " : "another user", pw ? pw->pw_name : "", (unsigned)st->st_uid);
        return -1;
    }
    if ((st->st_mode & 002) || ((st->st_mode & 020) && !private_group(st))) {
        strbuf_addf(why, "%s is writable by %s (mode %04o; fix with `chmod go-w %s`)", path,
                    (st->st_mode & 002) ? "every user" : "its group",
                    (unsigned)(st->st_mode & 07777), path);
        return -1;
    }
    return 0;
}

/*
 * The config file decides what runs as the user (token_command), where
 * their token is sent (endpoint) and which files are theirs; so, as ssh
 * does for its config, one that another user owns or may write is not used
 * (st is the file as it was read).
 */
static int check_config_owner(const char *path, const struct stat *st, struct strbuf *err)
{
    struct strbuf why = STRBUF_INIT;
    int rc = context_file_trusted(path, st, &why);
    if (rc != 0)
        strbuf_addf(err,
                    "%s: whoever can write it could make trainjob run their command as you "
                    "(token_command) or send your token to their server; not used",
                    strbuf_str(&why));
    strbuf_free(&why);
    return rc;
}

/* File, then --context / current_context / first / built-in, then workspace and endpoint overrides.
 */
int context_resolve(const struct context_request *req, struct resolved_context *out,
                    struct findings *fs, struct strbuf *err)
{
    memset(out, 0, sizeof *out);
    out->config_path = req->config_path ? xstrdup(req->config_path) : paths_client_config();

    struct context_file cf;
    memset(&cf, 0, sizeof cf);
    char *text = NULL;
    size_t len = 0;
    struct strbuf io = STRBUF_INIT;
    struct stat st;
    bool exists = stat(out->config_path, &st) == 0 || errno != ENOENT;
    if (exists &&
        file_read_regular_stat(out->config_path, CONFIG_MAX_SIZE, &text, &len, &st, &io) != 0) {
        strbuf_adds(err, strbuf_str(&io));
        strbuf_free(&io);
        return -1;
    } else if (exists && check_config_owner(out->config_path, &st, err) != 0) {
        free(text);
        strbuf_free(&io);
        return -1;
    } else if (exists && context_file_parse(text, len, &cf, fs) != 0) {
        free(text);
        strbuf_free(&io);
        return -1;
    }
    free(text);
    strbuf_free(&io);

    /* --context, else current_context, else the first context, else the built-in one. */
    const struct context *chosen = NULL;
    const char *want = req->context ? req->context : cf.current_context;
    if (want) {
        for (size_t i = 0; i < cf.context_count && !chosen; i++)
            if (strcmp(cf.contexts[i].name, want) == 0)
                chosen = &cf.contexts[i];
        if (chosen == NULL && !(cf.context_count == 0 && strcmp(want, CONTEXT_LOCAL_NAME) == 0)) {
            strbuf_addf(err, "no context named '%s' in %s", want, out->config_path);
            if (cf.context_count) {
                strbuf_adds(err, " (contexts:");
                for (size_t i = 0; i < cf.context_count; i++)
                    strbuf_addf(err, " %s", cf.contexts[i].name);
                strbuf_adds(err, ")");
            } else {
                strbuf_addf(err, "; only the built-in context '%s' exists", CONTEXT_LOCAL_NAME);
            }
            context_file_free(&cf);
            return -1;
        }
    } else if (cf.context_count) {
        chosen = &cf.contexts[0];
    }
    out->builtin = chosen == NULL;
    fill(&out->ctx, chosen);
    context_file_free(&cf);

    if (req->workspace && *req->workspace) {
        free(out->ctx.workspace);
        out->ctx.workspace = xstrdup(req->workspace);
    }
    const char *explicit_endpoint = req->endpoint && *req->endpoint           ? req->endpoint
                                    : req->env_endpoint && *req->env_endpoint ? req->env_endpoint
                                                                              : NULL;
    if (explicit_endpoint) {
        free(out->ctx.endpoint);
        out->ctx.endpoint = xstrdup(explicit_endpoint);
    } else if (out->ctx.endpoint == NULL) {
        out->engine_socket = paths_engine_socket();
        out->ctx.endpoint = xasprintf("http+unix://%s", out->engine_socket);
        out->may_autostart = true;
    }
    /* Paths the file names are beside it (or under ~), wherever trainjob runs. */
    char **named[] = {&out->ctx.secret_key_file, &out->ctx.token_file};
    for (size_t i = 0; i < sizeof named / sizeof named[0]; i++) {
        if (*named[i]) {
            char *p = paths_beside(*named[i], out->config_path);
            free(*named[i]);
            *named[i] = p;
        }
    }
    if (out->ctx.driver == CONTEXT_DRIVER_SLURM && out->ctx.token_file &&
        check_token_file(&out->ctx, err) != 0)
        return -1;
    if (out->ctx.access_key && out->ctx.secret_key_file) {
        if (read_secret(&out->ctx, &out->secret_key, fs, err) != 0)
            return -1;
    } else if (out->ctx.access_key) {
        /* No file: the secret from the environment (CI, a shell that holds it). */
        const char *env = getenv("TRAINJOB_SECRET_KEY");
        if (env == NULL || *env == '\0') {
            strbuf_addf(err,
                        "context '%s' has an access_key but no secret: give secret_key_file, "
                        "or set $TRAINJOB_SECRET_KEY",
                        out->ctx.name);
            return -1;
        }
        out->secret_key = xstrdup(env);
    }
    return 0;
}

void resolved_context_free(struct resolved_context *rc)
{
    context_free(&rc->ctx);
    free(rc->config_path);
    free(rc->engine_socket);
    if (rc->secret_key) {
        memset(rc->secret_key, 0, strlen(rc->secret_key));
        free(rc->secret_key);
    }
    memset(rc, 0, sizeof *rc);
}

size_t context_file_names(const char *path, char ***names, struct strbuf *err)
{
    char *own = path ? NULL : paths_client_config();
    const char *file = path ? path : own;
    *names = NULL;
    size_t n = 0;
    struct stat st;
    char *text = NULL;
    size_t len = 0;
    struct context_file cf;
    memset(&cf, 0, sizeof cf);
    struct findings fs = FINDINGS_INIT;
    if (stat(file, &st) != 0 && errno == ENOENT) {
        /* no file: the built-in context */
    } else if (file_read_regular(file, CONFIG_MAX_SIZE, &text, &len, err) != 0) {
        goto done;
    } else if (context_file_parse(text, len, &cf, &fs) != 0) {
        const struct finding *f = fs.count ? &fs.items[0] : NULL;
        strbuf_addf(err, "%s:%d:%d: %s", file, f ? f->line : 1, f ? f->col : 1,
                    f ? f->message : "not a config file");
        goto done;
    }
    *names = xcalloc(cf.context_count ? cf.context_count : 1, sizeof **names);
    for (size_t i = 0; i < cf.context_count; i++)
        (*names)[n++] = xstrdup(cf.contexts[i].name);
    if (n == 0)
        (*names)[n++] = xstrdup(CONTEXT_LOCAL_NAME);
done:
    context_file_free(&cf);
    findings_free(&fs);
    free(text);
    free(own);
    return n;
}

bool context_spec_several(const char *spec)
{
    return spec && (strchr(spec, ',') != NULL || strcmp(spec, "all") == 0);
}

size_t context_spec_names(const char *spec, char ***names, struct strbuf *err)
{
    if (strcmp(spec, "all") == 0)
        return context_file_names(NULL, names, err);
    size_t n = 0, cap = 1;
    for (const char *c = spec; *c; c++)
        cap += *c == ',';
    char **out = xcalloc(cap, sizeof *out);
    const char *p = spec;
    for (;;) {
        size_t len = strcspn(p, ",");
        while (len && p[len - 1] == ' ')
            len--;
        while (len && *p == ' ')
            p++, len--;
        if (len == 0) {
            strbuf_addf(err, "--context: an empty name in \"%s\"", spec);
            for (size_t i = 0; i < n; i++)
                free(out[i]);
            free(out);
            *names = NULL;
            return 0;
        }
        bool seen = false;
        for (size_t i = 0; i < n; i++)
            seen |= strlen(out[i]) == len && strncmp(out[i], p, len) == 0;
        if (!seen)
            out[n++] = xstrndup(p, len);
        p += strcspn(p, ",");
        if (*p == '\0')
            break;
        p++;
    }
    *names = out;
    return n;
}
