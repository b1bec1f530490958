/*
 * slurm_rest: the Slurm driver's requests to slurmrestd — the JWT (from
 * token_file or token_command, fetched again once when refused), the API
 * version (from /openapi/v3, once per backend, through api/slurm_shapes),
 * and slurm_rest, the one call every operation of api/slurm*.c makes;
 * transport failures and Slurm's errors worded for the user.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "api/http.h"
#include "api/slurm_priv.h"
#include "api/slurm_shapes.h"
#include "util/fileio.h"
#include "util/strbuf.h"
#include "util/utf8.h"
#include "util/xalloc.h"

#define TOKEN_MAX 16384

/* ---- the token ------------------------------------------------------------ */

/*
 * The JWT in text: the line "SLURM_JWT=<jwt>" (as scontrol token prints it)
 * wherever it is, else the first non-blank line; blanks trimmed, NULL when none.
 */
static char *token_of(const char *text, size_t len)
{
    const char *found = NULL, *found_end = NULL;
    for (int pass = 0; pass < 2 && found == NULL; pass++) {
        for (const char *p = text, *end = text + len; p < end;) {
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            const char *le = nl ? nl : end;
            const char *s = p;
            while (s < le && (*s == ' ' || *s == '\t'))
                s++;
            if (pass == 0 && (size_t)(le - s) > 10 && strncmp(s, "SLURM_JWT=", 10) == 0)
                found = s + 10;
            else if (pass == 1 && s < le && *s != '\r')
                found = s;
            if (found) {
                found_end = le;
                break;
            }
            p = le + 1;
        }
    }
    if (found == NULL)
        return NULL;
    size_t n = 0;
    while (found + n < found_end && found[n] > ' ' && found[n] < 0x7f)
        n++;
    return n ? xstrndup(found, n) : NULL;
}

/* Runs token_command (split on blanks, no shell) and takes the token from its stdout. */
static int run_token_command(struct slurm *s, struct strbuf *why)
{
    char *copy = xstrdup(s->token_command);
    char *argv[32];
    int argc = 0;
    for (char *tok = strtok(copy, " \t"); tok && argc < 31; tok = strtok(NULL, " \t"))
        argv[argc++] = tok;
    argv[argc] = NULL;
    if (argc == 0) {
        strbuf_adds(why, "token_command is empty");
        free(copy);
        return -1;
    }
    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC) != 0) {
        strbuf_addf(why, "token_command: pipe: %s", strerror(errno));
        free(copy);
        return -1;
    }
    pid_t pid = fork();
    if (pid == 0) {
        /* Its stderr would land on top's screen: it goes nowhere (run it yourself to see it). */
        dup2(pfd[1], 1);
        int null = open("/dev/null", O_RDWR);
        if (null >= 0) {
            dup2(null, 0);
            dup2(null, 2);
        }
        execvp(argv[0], argv);
        _exit(127);
    }
    close(pfd[1]);
    struct strbuf outb = STRBUF_INIT;
    if (pid > 0) {
        char buf[4096];
        ssize_t n;
        while ((n = read(pfd[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
            if (n > 0 && outb.len < TOKEN_MAX)
                strbuf_add(&outb, buf, (size_t)n);
    }
    close(pfd[0]);
    int status = 0;
    int rc = -1;
    if (pid < 0) {
        strbuf_addf(why, "token_command: fork: %s", strerror(errno));
    } else if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        strbuf_addf(why, "token_command '%s' failed (%s %d; run it yourself to see why)", argv[0],
                    WIFEXITED(status) ? "exit" : "signal",
                    WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
    } else {
        char *t = token_of(outb.buf ? outb.buf : "", outb.len);
        if (t == NULL) {
            strbuf_addf(why, "token_command '%s' printed no token", argv[0]);
        } else {
            free(s->token);
            s->token = t;
            rc = 0;
        }
    }
    if (outb.buf)
        memset(outb.buf, 0, outb.len);
    strbuf_free(&outb);
    free(copy);
    return rc;
}

static int read_token_file(struct slurm *s, struct strbuf *why)
{
    char *data = NULL;
    size_t len = 0;
    struct strbuf io = STRBUF_INIT;
    int rc = -1;
    if (file_read_all(s->token_file, TOKEN_MAX, &data, &len, &io) != 0) {
        strbuf_addf(why, "token_file: %s", strbuf_str(&io));
    } else {
        char *t = token_of(data, len);
        if (t == NULL) {
            strbuf_addf(why, "token_file %s holds no token", s->token_file);
        } else {
            free(s->token);
            s->token = t;
            rc = 0;
        }
        memset(data, 0, len);
    }
    free(data);
    strbuf_free(&io);
    return rc;
}

/* Gets a token (again when fresh) and puts the two headers on the client. */
static int load_token(struct slurm *s, bool fresh, struct strbuf *why)
{
    if (s->token && !fresh)
        return 0;
    int rc = s->token_command ? run_token_command(s, why) : read_token_file(s, why);
    if (rc != 0)
        return -1;
    char *lines =
        xasprintf("X-SLURM-USER-NAME: %s\r\nX-SLURM-USER-TOKEN: %s\r\n", s->user, s->token);
    rc = http_client_set_headers(s->client, lines);
    memset(lines, 0, strlen(lines));
    free(lines);
    if (rc != 0)
        strbuf_adds(why, "the user or the token holds a control character");
    return rc;
}

/* ---- REST ----------------------------------------------------------------- */

static enum backend_status transport_error(const struct backend *b, const struct http_result *r,
                                           struct api_error *err)
{
    switch (r->transport) {
    case TRANSPORT_UNREACHABLE:
        api_error_set(err, 0, "Unreachable", "", "cannot reach slurmrestd at %s: %s", b->endpoint,
                      r->message);
        return BACKEND_UNREACHABLE;
    case TRANSPORT_TIMEOUT:
        api_error_set(err, 0, "Timeout", "", "slurmrestd at %s did not answer in time: %s",
                      b->endpoint, r->message);
        return BACKEND_TRANSPORT;
    default:
        api_error_set(err, 0, "Transport", "", "talking to slurmrestd at %s: %s", b->endpoint,
                      r->message);
        return BACKEND_TRANSPORT;
    }
}

/*
 * True when a reply is slurmrestd refusing the token: 401, or (22.05) 500
 * whose every error is the bare "Unspecified error" (-1) a rejected JWT
 * gives; a real Slurm rejection carries its own error number.
 */
static bool auth_refused(int status, const json_t *reply)
{
    if (status == 401)
        return true;
    if (status != 500 || !json_is_object(reply))
        return false;
    const json_t *errs = json_object_get(reply, "errors");
    if (!json_is_array(errs) || json_array_size(errs) == 0)
        return false;
    size_t i;
    json_t *e;
    json_array_foreach(errs, i, e)
    {
        json_int_t n = -2;
        const json_t *num = json_object_get(e, "error_number");
        if (num == NULL)
            num = json_object_get(e, "errno");
        if (json_is_integer(num))
            n = json_integer_value(num);
        if (n != -1)
            return false;
    }
    return true;
}

/* The first error of a Slurm reply, sanitized: "2014: Requested node configuration is not
 * available". */
static void slurm_error_text(const json_t *reply, const char *raw, size_t rawlen,
                             struct strbuf *out)
{
    const json_t *errs = json_object_get(reply, "errors");
    const json_t *e = json_array_get(errs, 0);
    if (json_is_object(e)) {
        const json_t *num = json_object_get(e, "error_number");
        if (num == NULL)
            num = json_object_get(e, "error_code");
        const char *text = json_string_value(json_object_get(e, "error"));
        const char *desc = json_string_value(json_object_get(e, "description"));
        if (json_is_integer(num))
            strbuf_addf(out, "error %lld: ", (long long)json_integer_value(num));
        if (text)
            utf8_sanitize(out, text, strlen(text), 0);
        if (desc && *desc) {
            strbuf_adds(out, " (");
            utf8_sanitize(out, desc, strlen(desc), 0);
            strbuf_adds(out, ")");
        }
        return;
    }
    size_t n = rawlen > 300 ? 300 : rawlen;
    if (n)
        utf8_sanitize(out, raw, n, 0);
    else
        strbuf_adds(out, "no reason given");
}

static enum backend_status auth_failed(struct backend *b, const char *detail, struct api_error *err)
{
    struct slurm *s = driver(b);
    api_error_set(err, 401, "Unauthenticated", "",
                  "context '%s': authentication failed at %s: slurmrestd refused the token for "
                  "user '%s'%s%s; check %s (mint one with `scontrol token username=%s`)",
                  s->context, b->endpoint, s->user, detail && *detail ? ": " : "",
                  detail ? detail : "", s->token_command ? "token_command" : "token_file", s->user);
    return BACKEND_REJECTED;
}

/* The API version to speak, from /openapi/v3 the first time (once per backend). */
static enum backend_status ensure_shape(struct backend *b, struct api_error *err)
{
    struct slurm *s = driver(b);
    if (s->shape)
        return BACKEND_OK;
    json_t *doc = NULL;
    enum backend_status st = slurm_rest(b, "GET", "/openapi/v3", NULL, &doc, err);
    if (st != BACKEND_OK)
        return st;
    struct strbuf why = STRBUF_INIT;
    s->shape = slurm_shape_choose(doc, &why);
    json_decref(doc);
    if (s->shape == NULL) {
        api_error_set(err, 501, "Unsupported", "", "context '%s': %s", s->context,
                      strbuf_str(&why));
        st = BACKEND_REJECTED;
    }
    strbuf_free(&why);
    return st;
}

enum backend_status slurm_rest(struct backend *b, const char *method, const char *path,
                               const json_t *body, json_t **reply, struct api_error *err)
{
    struct slurm *s = driver(b);
    *reply = NULL;
    struct strbuf why = STRBUF_INIT;
    if (load_token(s, false, &why) != 0) {
        enum backend_status st = auth_failed(b, strbuf_str(&why), err);
        strbuf_free(&why);
        return st;
    }
    if (path[0] != '/') {
        enum backend_status st = ensure_shape(b, err);
        if (st != BACKEND_OK) {
            strbuf_free(&why);
            return st;
        }
    }
    struct strbuf p = STRBUF_INIT;
    if (path[0] == '/')
        strbuf_adds(&p, path);
    else
        strbuf_addf(&p, "/slurm/%s/%s", s->shape->version, path);
    char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    enum backend_status st = BACKEND_OK;
    for (int attempt = 0;; attempt++) {
        struct http_result r;
        http_result_init(&r);
        http_call(s->client, method, strbuf_str(&p), text, text ? strlen(text) : 0, &r);
        if (r.transport != TRANSPORT_NONE) {
            st = transport_error(b, &r, err);
            http_result_free(&r);
            break;
        }
        json_t *j = json_loadb(r.body.buf ? r.body.buf : "", r.body.len, 0, NULL);
        if (auth_refused(r.status, j)) {
            json_decref(j);
            http_result_free(&r);
            strbuf_reset(&why);
            if (attempt == 0 && s->token_command && load_token(s, true, &why) == 0)
                continue;
            st = auth_failed(b, strbuf_str(&why), err);
            break;
        }
        const json_t *errs = json_object_get(j, "errors");
        bool slurm_err = json_is_array(errs) && json_array_size(errs) > 0;
        if (r.status < 200 || r.status >= 300 || j == NULL || slurm_err) {
            struct strbuf m = STRBUF_INIT;
            slurm_error_text(j, r.body.buf, r.body.len, &m);
            int status = r.status >= 200 && r.status < 300 ? 500 : r.status;
            api_error_set(err, status, "SlurmError", "", "slurmrestd %s %s: %s", method,
                          strbuf_str(&p), strbuf_str(&m));
            strbuf_free(&m);
            json_decref(j);
            st = BACKEND_REJECTED;
        } else {
            *reply = j;
        }
        http_result_free(&r);
        break;
    }
    free(text);
    strbuf_free(&p);
    strbuf_free(&why);
    return st;
}
