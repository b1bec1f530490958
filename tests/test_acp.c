/*
 * test_acp: the client's way to a backend without a server — endpoint
 * parsing (api/http), config.yaml contexts (api/context), the acp driver's
 * paths, escaping, bodies and reply decoding (api/acp, through a recording
 * transport that answers with bodies shaped like engine/routes.c's), the
 * wrappers' paging, batching and revive-once logic (api/backend), and the
 * AK/SK headers of a prepared request.
 */
// clang-format off
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
// clang-format on

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "api/acp.h"
#include "api/backend.h"
#include "api/context.h"
#include "api/finding.h"
#include "api/hmac.h"
#include "api/http.h"
#include "api/jobfile.h"
#include "api/jobspec_json.h"
#include "api/uhttp.h"
#include "api/validate.h"
#include "util/buildinfo.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#define COLL                                                                                       \
    "/compute/acp/data/v2/subscriptions/local/resourceGroups/default/zones/local-1z/workspaces/"   \
    "default/trainingJobs"

/* ---- a transport that records each call and answers from a script ------ */

#define FAKE_MAX 16

struct fake_reply {
    enum transport_error transport;
    int status;
    const char *body;
    int retry_after; /* > 0: the reply's Retry-After is retry_after - 1 seconds */
};

struct fake {
    char *method[FAKE_MAX], *path[FAKE_MAX], *body[FAKE_MAX];
    size_t calls;
    struct fake_reply replies[FAKE_MAX];
    size_t nreplies;
    size_t chunk; /* streams: feed the body in pieces this long (0: whole) */
};

static void fake_answer(struct fake *f, int status, const char *body)
{
    f->replies[f->nreplies++] = (struct fake_reply){TRANSPORT_NONE, status, body, 0};
}

static void fake_fail(struct fake *f, enum transport_error t)
{
    f->replies[f->nreplies++] = (struct fake_reply){t, 0, NULL, 0};
}

/* A reply carrying Retry-After: seconds. */
static void fake_answer_retry(struct fake *f, int status, int seconds)
{
    f->replies[f->nreplies++] = (struct fake_reply){TRANSPORT_NONE, status, NULL, seconds + 1};
}

static void fake_transport(void *ctx, const char *method, const char *path, const char *body,
                           size_t len, http_data_fn on_data, void *data_ctx,
                           struct http_result *out)
{
    struct fake *f = ctx;
    assert_true(f->calls < FAKE_MAX);
    size_t i = f->calls++;
    f->method[i] = xstrdup(method);
    f->path[i] = xstrdup(path);
    f->body[i] = body ? xstrndup(body, len) : NULL;
    /* The last scripted reply repeats. */
    const struct fake_reply *r = &f->replies[i < f->nreplies ? i : f->nreplies - 1];
    out->transport = r->transport;
    out->status = r->status;
    out->has_retry_after = r->retry_after > 0;
    out->retry_after = r->retry_after - 1;
    if (r->transport != TRANSPORT_NONE) {
        snprintf(out->message, sizeof out->message, "%s",
                 r->transport == TRANSPORT_UNREACHABLE ? "Connection refused" : "timed out");
        return;
    }
    const char *b = r->body ? r->body : "";
    size_t n = strlen(b);
    if (on_data && r->status >= 200 && r->status < 300) {
        size_t step = f->chunk ? f->chunk : (n ? n : 1);
        for (size_t off = 0; off < n; off += step)
            if (on_data(data_ctx, b + off, off + step > n ? n - off : step) != 0)
                return;
    } else {
        strbuf_add(&out->body, b, n);
    }
}

static void fake_free(struct fake *f)
{
    for (size_t i = 0; i < f->calls; i++) {
        free(f->method[i]);
        free(f->path[i]);
        free(f->body[i]);
    }
}

/* An acp backend on the fake, aimed at the local engine's names (or ws). */
static struct backend *open_fake(struct fake *f, const char *ws, bool trainjobd)
{
    struct strbuf err = STRBUF_INIT;
    struct http_client *c = http_client_new("http+unix:///tmp/none.sock", &err);
    assert_non_null(c);
    strbuf_free(&err);
    http_client_set_transport(c, fake_transport, f);
    struct backend_target t = {(char *)"local", (char *)"default", (char *)"local-1z",
                               (char *)(ws ? ws : "default")};
    return acp_backend_new(c, &t, trainjobd);
}

/* ---- endpoints ---------------------------------------------------------- */

static void endpoints_parse(void **state)
{
    (void)state;
    struct http_endpoint ep;
    struct strbuf err = STRBUF_INIT;

    assert_int_equal(http_endpoint_parse("http+unix:///run/user/1/trainjob/engine.sock", &ep, &err),
                     0);
    assert_string_equal(ep.unix_path, "/run/user/1/trainjob/engine.sock");
    assert_string_equal(ep.base_url, "http://localhost");
    assert_true(http_endpoint_is_local(&ep));
    http_endpoint_free(&ep);

    assert_int_equal(http_endpoint_parse("https://aec2.cn-sh-01.sensecoreapi.cn/", &ep, &err), 0);
    assert_null(ep.unix_path);
    assert_string_equal(ep.base_url, "https://aec2.cn-sh-01.sensecoreapi.cn");
    assert_false(http_endpoint_is_local(&ep));
    http_endpoint_free(&ep);

    assert_int_equal(http_endpoint_parse("http://127.0.0.1:7070", &ep, &err), 0);
    assert_string_equal(ep.base_url, "http://127.0.0.1:7070");
    assert_true(http_endpoint_is_local(&ep));
    http_endpoint_free(&ep);

    assert_int_equal(http_endpoint_parse("http://localhost.example.com", &ep, &err), 0);
    assert_false(http_endpoint_is_local(&ep));
    http_endpoint_free(&ep);

    static const char *const bad[] = {"",         "ftp://host",    "http+unix://relative.sock",
                                      "https://", "https:///path", "aec2.example.com"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        strbuf_reset(&err);
        assert_int_equal(http_endpoint_parse(bad[i], &ep, &err), -1);
        assert_true(err.len > 0);
    }
    strbuf_free(&err);
}

/* ---- contexts ----------------------------------------------------------- */

static const char good_config[] = "current_context: sh01\n"
                                  "contexts:\n"
                                  "  - name: laptop\n"
                                  "    workspace: mine\n"
                                  "  - name: sh01\n"
                                  "    driver: acp\n"
                                  "    endpoint: https://aec2.cn-sh-01.sensecoreapi.cn\n"
                                  "    subscription: 0197ee17-aaaa\n"
                                  "    resource_group: default\n"
                                  "    zone: cn-sh-01z\n"
                                  "    workspace: share-space-01e\n"
                                  "    access_key: AK123\n"
                                  "    secret_key_file: sh01.sk\n"
                                  "    theme: dark\n";

static void context_file_good(void **state)
{
    (void)state;
    struct context_file cf;
    struct findings fs = FINDINGS_INIT;
    assert_int_equal(context_file_parse(good_config, strlen(good_config), &cf, &fs), 0);
    assert_int_equal(fs.count, 0);
    assert_string_equal(cf.current_context, "sh01");
    assert_int_equal(cf.context_count, 2);
    assert_string_equal(cf.contexts[0].name, "laptop");
    assert_int_equal(cf.contexts[0].driver, CONTEXT_DRIVER_UNSPECIFIED);
    assert_null(cf.contexts[0].endpoint);
    assert_int_equal(cf.contexts[1].driver, CONTEXT_DRIVER_ACP);
    assert_string_equal(cf.contexts[1].zone, "cn-sh-01z");
    assert_string_equal(cf.contexts[1].secret_key_file, "sh01.sk");
    assert_string_equal(cf.contexts[1].theme, "dark");
    context_file_free(&cf);
    findings_free(&fs);
}

/* The finding at path, or NULL. */
static const struct finding *finding_at(const struct findings *fs, const char *path)
{
    for (size_t i = 0; i < fs->count; i++)
        if (strcmp(fs->items[i].path, path) == 0)
            return &fs->items[i];
    return NULL;
}

static void context_file_errors_have_positions(void **state)
{
    (void)state;
    static const char text[] = "current_context: nowhere\n"           /* 1 */
                               "contexts:\n"                          /* 2 */
                               "  - name: a\n"                        /* 3 */
                               "    endpont: https://x.example.com\n" /* 4 */
                               "  - name: a\n"                        /* 5 */
                               "    driver: kube\n"                   /* 6 */
                               "    endpoint: ftp://nope\n"           /* 7 */
                               "    secret_key_file: sk\n";           /* 8 */
    struct context_file cf;
    struct findings fs = FINDINGS_INIT;
    assert_int_equal(context_file_parse(text, strlen(text), &cf, &fs), -1);
    assert_int_equal(cf.context_count, 0);

    const struct finding *f = finding_at(&fs, "contexts[0].endpont");
    assert_non_null(f);
    assert_int_equal(f->line, 4);
    assert_int_equal(f->col, 5);
    assert_non_null(strstr(f->message, "did you mean endpoint?"));

    f = finding_at(&fs, "contexts[1].name");
    assert_non_null(f);
    assert_int_equal(f->line, 5);
    assert_non_null(strstr(f->message, "duplicate"));

    f = finding_at(&fs, "contexts[1].driver");
    assert_non_null(f);
    assert_int_equal(f->line, 6);
    assert_non_null(strstr(f->message, "acp, slurm"));

    f = finding_at(&fs, "contexts[1].endpoint");
    assert_non_null(f);
    assert_int_equal(f->line, 7);

    /* A key file without its access_key (an access_key alone may use $TRAINJOB_SECRET_KEY). */
    f = finding_at(&fs, "contexts[1].secret_key_file");
    assert_non_null(f);
    assert_int_equal(f->line, 8);
    assert_non_null(strstr(f->message, "access_key"));

    f = finding_at(&fs, "current_context");
    assert_non_null(f);
    assert_int_equal(f->line, 1);
    assert_int_equal(f->col, 18);
    findings_free(&fs);

    /* Not a mapping at all. */
    assert_int_equal(context_file_parse("- a\n", 4, &cf, &fs), -1);
    assert_int_equal(fs.items[0].line, 1);
    findings_free(&fs);
}

static void missing_file_gives_the_builtin_local_context(void **state)
{
    (void)state;
    setenv("XDG_RUNTIME_DIR", "/tmp/tj-test-run", 1);
    struct context_request req = {"/nonexistent/trainjob/config.yaml", NULL, NULL, NULL, NULL};
    struct resolved_context rc;
    struct findings fs = FINDINGS_INIT;
    struct strbuf err = STRBUF_INIT;
    assert_int_equal(context_resolve(&req, &rc, &fs, &err), 0);
    assert_true(rc.builtin);
    assert_true(rc.may_autostart);
    assert_string_equal(rc.ctx.name, "local");
    assert_int_equal(rc.ctx.driver, CONTEXT_DRIVER_TRAINJOBD);
    assert_string_equal(rc.ctx.endpoint, "http+unix:///tmp/tj-test-run/trainjob/engine.sock");
    assert_string_equal(rc.engine_socket, "/tmp/tj-test-run/trainjob/engine.sock");
    assert_string_equal(rc.ctx.subscription, "local");
    assert_string_equal(rc.ctx.resource_group, "default");
    assert_string_equal(rc.ctx.zone, "local-1z");
    assert_string_equal(rc.ctx.workspace, "default");
    resolved_context_free(&rc);

    /* $TRAINJOB_ENDPOINT replaces the endpoint, --endpoint replaces both: never autostarted. */
    req.env_endpoint = "http+unix:///tmp/env.sock";
    assert_int_equal(context_resolve(&req, &rc, &fs, &err), 0);
    assert_string_equal(rc.ctx.endpoint, "http+unix:///tmp/env.sock");
    assert_false(rc.may_autostart);
    assert_string_equal(rc.ctx.zone, "local-1z");
    resolved_context_free(&rc);
    req.endpoint = "http://127.0.0.1:9999";
    req.workspace = "other";
    assert_int_equal(context_resolve(&req, &rc, &fs, &err), 0);
    assert_string_equal(rc.ctx.endpoint, "http://127.0.0.1:9999");
    assert_string_equal(rc.ctx.workspace, "other");
    assert_false(rc.may_autostart);
    assert_int_equal(rc.ctx.driver, CONTEXT_DRIVER_TRAINJOBD); /* --endpoint moves, not retypes */
    resolved_context_free(&rc);

    /* A --context that the (missing) file cannot have. */
    struct context_request named = {"/nonexistent/trainjob/config.yaml", "prod", NULL, NULL, NULL};
    assert_int_equal(context_resolve(&named, &rc, &fs, &err), -1);
    assert_non_null(strstr(strbuf_str(&err), "no context named 'prod'"));
    resolved_context_free(&rc);
    assert_int_equal(fs.count, 0);
    strbuf_free(&err);
}

/* Writes text to a new file in dir and returns its path. */
static char *write_file(const char *dir, const char *name, const char *text)
{
    char *path = xasprintf("%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

/* An access_key with no secret_key_file takes $TRAINJOB_SECRET_KEY; with neither, resolving fails.
 */
static void secret_key_from_the_environment(void **state)
{
    (void)state;
    char dir[] = "/tmp/tj-ctx-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char *cfg = write_file(dir, "config.yaml",
                           "contexts:\n- {name: ci, endpoint: https://x.example.com, "
                           "access_key: AK9}\n");
    struct context_request req = {cfg, NULL, NULL, NULL, NULL};
    struct resolved_context rc;
    struct findings fs = FINDINGS_INIT;
    struct strbuf err = STRBUF_INIT;
    unsetenv("TRAINJOB_SECRET_KEY");
    assert_int_equal(context_resolve(&req, &rc, &fs, &err), -1);
    assert_non_null(strstr(strbuf_str(&err), "TRAINJOB_SECRET_KEY"));
    assert_non_null(strstr(strbuf_str(&err), "'ci'"));
    resolved_context_free(&rc);
    strbuf_reset(&err);
    setenv("TRAINJOB_SECRET_KEY", "SK-FROM-ENV", 1);
    assert_int_equal(context_resolve(&req, &rc, &fs, &err), 0);
    assert_string_equal(rc.secret_key, "SK-FROM-ENV");
    resolved_context_free(&rc);
    /* $TRAINJOB_CONFIG is the file when the caller names none. */
    setenv("TRAINJOB_CONFIG", cfg, 1);
    req.config_path = NULL;
    assert_int_equal(context_resolve(&req, &rc, &fs, &err), 0);
    assert_string_equal(rc.config_path, cfg);
    assert_string_equal(rc.ctx.name, "ci");
    resolved_context_free(&rc);
    unsetenv("TRAINJOB_CONFIG");
    unsetenv("TRAINJOB_SECRET_KEY");
    assert_int_equal(unlink(cfg), 0);
    assert_int_equal(rmdir(dir), 0);
    free(cfg);
    findings_free(&fs);
    strbuf_free(&err);
}

static void context_file_is_chosen_and_keys_read(void **state)
{
    (void)state;
    char dir[] = "/tmp/tj-ctx-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char *cfg = write_file(dir, "config.yaml", good_config);
    char *sk = write_file(dir, "sh01.sk", "  SECRET-KEY \n");
    assert_int_equal(chmod(sk, 0600), 0);
    struct context_request req = {cfg, NULL, NULL, NULL, NULL};
    struct resolved_context rc;
    struct findings fs = FINDINGS_INIT;
    struct strbuf err = STRBUF_INIT;
    assert_int_equal(context_resolve(&req, &rc, &fs, &err), 0);
    assert_int_equal(fs.count, 0); /* a key file for its owner alone: no warning */
    assert_false(rc.builtin);
    assert_false(rc.may_autostart);
    assert_string_equal(rc.ctx.name, "sh01");
    assert_string_equal(rc.ctx.endpoint, "https://aec2.cn-sh-01.sensecoreapi.cn");
    assert_string_equal(rc.ctx.access_key, "AK123");
    assert_string_equal(rc.secret_key, "SECRET-KEY");
    resolved_context_free(&rc);

    /* A key file others may read still works, with a warning as ssh gives. */
    assert_int_equal(chmod(sk, 0644), 0);
    assert_int_equal(context_resolve(&req, &rc, &fs, &err), 0);
    assert_string_equal(rc.secret_key, "SECRET-KEY");
    assert_int_equal(fs.count, 1);
    assert_int_equal(fs.items[0].severity, SEVERITY_WARNING);
    assert_non_null(strstr(fs.items[0].message, "mode 0644"));
    findings_free(&fs);
    resolved_context_free(&rc);
    assert_int_equal(chmod(sk, 0600), 0);

    /* --context picks another; its missing fields are the local defaults, its endpoint too. */
    req.context = "laptop";
    assert_int_equal(context_resolve(&req, &rc, &fs, &err), 0);
    assert_string_equal(rc.ctx.workspace, "mine");
    assert_string_equal(rc.ctx.zone, "local-1z");
    assert_true(rc.may_autostart);
    resolved_context_free(&rc);

    /* Errors in the file come back as findings, placed. */
    char *bad = write_file(dir, "bad.yaml", "contexts:\n  - name: x\n    colour: red\n");
    req.config_path = bad;
    req.context = NULL;
    assert_int_equal(context_resolve(&req, &rc, &fs, &err), -1);
    assert_int_equal(fs.count, 1);
    assert_string_equal(fs.items[0].path, "contexts[0].colour");
    assert_int_equal(fs.items[0].line, 3);
    assert_int_equal(fs.items[0].col, 5);
    assert_string_equal(rc.config_path, bad);
    resolved_context_free(&rc);
    findings_free(&fs);

    unlink(sk);
    assert_int_equal(
        context_resolve(&(struct context_request){cfg, NULL, NULL, NULL, NULL}, &rc, &fs, &err),
        -1);
    assert_non_null(strstr(strbuf_str(&err), "secret_key_file"));
    resolved_context_free(&rc);
    unlink(cfg);
    unlink(bad);
    rmdir(dir);
    free(cfg);
    free(sk);
    free(bad);
    strbuf_free(&err);
    findings_free(&fs);
}

/*
 * Issue 12: which server an endpoint is comes from the context's driver:,
 * never from its host. A 127.0.0.1 endpoint is an SSH tunnel to SenseCore
 * as often as trainjobd on TCP.
 */
static void the_driver_comes_from_the_context_not_the_host(void **state)
{
    (void)state;
    char dir[] = "/tmp/tj-drv-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char *cfg = write_file(dir, "config.yaml",
                           "contexts:\n"
                           "  - name: tunnel\n"
                           "    endpoint: http://127.0.0.1:1\n"
                           "  - name: engine-tcp\n"
                           "    driver: trainjobd\n"
                           "    endpoint: http://127.0.0.1:1\n"
                           "  - name: laptop\n"
                           "    workspace: mine\n"
                           "  - name: remote-engine\n"
                           "    driver: trainjobd\n"
                           "    endpoint: https://gpu-box.example:8443\n");
    struct context_request req = {cfg, "tunnel", NULL, NULL, NULL};
    struct resolved_context rc;
    struct findings fs = FINDINGS_INIT;
    struct strbuf err = STRBUF_INIT;
    struct api_error e;
    struct job_event_list el;

    assert_int_equal(context_resolve(&req, &rc, &fs, &err), 0);
    assert_int_equal(rc.ctx.driver, CONTEXT_DRIVER_ACP);
    struct backend *b = backend_open(&rc, &err);
    assert_non_null(b);
    /* ACP has no events: refused before anything is sent, saying how to name trainjobd */
    assert_int_equal(backend_events(b, "x", &el, &e), BACKEND_REJECTED);
    assert_int_equal(e.status, 501);
    assert_non_null(strstr(e.message, "driver: trainjobd"));
    backend_free(b);
    resolved_context_free(&rc);

    req.context = "engine-tcp";
    assert_int_equal(context_resolve(&req, &rc, &fs, &err), 0);
    assert_int_equal(rc.ctx.driver, CONTEXT_DRIVER_TRAINJOBD);
    b = backend_open(&rc, &err);
    assert_non_null(b);
    /* trainjobd's events are asked for (and nothing answers on port 1) */
    assert_int_equal(backend_events(b, "x", &el, &e), BACKEND_UNREACHABLE);
    backend_free(b);
    resolved_context_free(&rc);

    req.context = "laptop";
    assert_int_equal(context_resolve(&req, &rc, &fs, &err), 0);
    assert_int_equal(rc.ctx.driver, CONTEXT_DRIVER_TRAINJOBD);
    assert_true(rc.may_autostart);
    resolved_context_free(&rc);

    req.context = "remote-engine";
    assert_int_equal(context_resolve(&req, &rc, &fs, &err), 0);
    assert_int_equal(rc.ctx.driver, CONTEXT_DRIVER_TRAINJOBD);
    resolved_context_free(&rc);

    assert_int_equal(fs.count, 0);
    unlink(cfg);
    rmdir(dir);
    free(cfg);
    strbuf_free(&err);
}

/* ---- the acp driver: paths, bodies, replies ----------------------------- */

static const char job_reply[] =
    "{\"subscription_name\":\"local\",\"workspace_name\":\"default\",\"name\":\"pt-abc\","
    "\"uid\":\"u1\",\"framework\":\"PYTORCH_DDP\",\"state\":\"QUEUEING\","
    "\"state_message\":\"waiting for the scheduler\",\"restart_count\":0,\"ready_workers\":0,"
    "\"roles\":[{\"name\":\"Worker\",\"total_replicas\":2}],"
    "\"a_field_from_a_newer_server\":{\"x\":1}}";

static void create_get_update_paths(void **state)
{
    (void)state;
    struct fake f = {0};
    fake_answer(&f, 200, job_reply);
    struct backend *b = open_fake(&f, NULL, true);
    struct jobspec job, out;
    struct api_error err;
    jobspec_init(&job);
    job.name = xstrdup("pt-abc");
    job.display_name = xstrdup("基线 run");

    assert_int_equal(backend_create(b, &job, &out, &err), BACKEND_OK);
    assert_string_equal(f.method[0], "POST");
    assert_string_equal(f.path[0], COLL "?training_job_name=pt-abc");
    assert_non_null(strstr(f.body[0], "\"display_name\":\"基线 run\""));
    assert_string_equal(out.name, "pt-abc");
    assert_int_equal(out.state, JOB_STATE_QUEUEING);
    assert_string_equal(out.state_message, "waiting for the scheduler");
    jobspec_free(&out);

    assert_int_equal(backend_get(b, "pt-abc", &out, &err), BACKEND_OK);
    assert_string_equal(f.method[1], "GET");
    assert_string_equal(f.path[1], COLL "/pt-abc");
    assert_null(f.body[1]);
    jobspec_free(&out);

    struct job_update u = {"new name", PRIORITY_HIGH};
    assert_int_equal(backend_update(b, "pt-abc", &u, &out, &err), BACKEND_OK);
    assert_string_equal(f.method[2], "PATCH");
    assert_string_equal(f.path[2], COLL "/pt-abc?update_mask=display_name%2Cscheduling.priority");
    assert_string_equal(f.body[2],
                        "{\"display_name\":\"new name\",\"scheduling\":{\"priority\":\"HIGH\"}}");
    jobspec_free(&out);

    jobspec_free(&job);
    backend_free(b);
    fake_free(&f);
}

/* A reply that decoding would take more than the memory bound for is refused, not decoded. */
static void a_reply_too_large_to_decode_is_refused(void **state)
{
    (void)state;
    struct strbuf body = STRBUF_INIT;
    strbuf_adds(&body, "{\"name\": \"pt-abc\", \"labels\": [");
    for (size_t i = 0; i < (5u << 20); i++)
        strbuf_adds(&body, "0,");
    strbuf_adds(&body, "0]}");
    struct fake f = {0};
    fake_answer(&f, 200, strbuf_str(&body));
    struct backend *b = open_fake(&f, NULL, true);
    struct jobspec out;
    struct api_error err;
    assert_int_equal(backend_get(b, "pt-abc", &out, &err), BACKEND_REJECTED);
    assert_non_null(strstr(err.message, "values would take about"));
    assert_non_null(strstr(err.message, "over the 256 MiB bound"));
    jobspec_free(&out);
    backend_free(b);
    fake_free(&f);
    strbuf_free(&body);
}

/* ---- issue 12: every field of ACP's TrainingJob round-trips -------------- */

/* A fixture under tests/fixtures/acp as a tree (the tests run from the top of the tree). */
static json_t *fixture(const char *name)
{
    const char *top = getenv("TRAINJOB_TOP");
    char *path = xasprintf("%s/tests/fixtures/acp/%s", top && *top ? top : ".", name);
    json_error_t e;
    json_t *j = json_load_file(path, 0, &e);
    if (j == NULL)
        fail_msg("%s: %s", path, e.text);
    free(path);
    return j;
}

/* Prints both trees when they differ, so a failure says which field went. */
static void assert_same_tree(const json_t *want, const json_t *got)
{
    if (json_equal(want, got))
        return;
    char *a = json_dumps(want, JSON_SORT_KEYS | JSON_INDENT(1));
    char *b = json_dumps(got, JSON_SORT_KEYS | JSON_INDENT(1));
    fprintf(stderr, "want:\n%s\ngot:\n%s\n", a, b);
    free(a);
    free(b);
    fail();
}

/*
 * A whole job as ACP answers a GET (every field of the create page's schema,
 * metadata, a mount's access_mode/display_name, a spec's limits/requests, and
 * fields no schema names, at the top and nested) is read and written back
 * as the same tree; copied, it is the same job; through a YAML file, too.
 */
static void a_job_from_acp_is_written_back_whole(void **state)
{
    (void)state;
    json_t *orig = fixture("training-job-get.json");
    struct jobspec job, copy;
    jobspec_init(&job);
    struct findings fs = FINDINGS_INIT;
    assert_int_equal(jobspec_from_json(orig, JOBSPEC_LENIENT, &job, &fs), 0);
    assert_int_equal(fs.count, 0);
    assert_int_equal(job.mount[3].type, MOUNT_TYPE_PV_AFS_TENSORBOARD);
    assert_int_equal(job.scheduling.scoring_strategy, SCORING_LEAST_ALLOCATED);
    assert_int_equal(job.fault_tolerance.backoff_limit, INT32_MAX);
    assert_true(job.lme.has_current_retries);
    assert_int_equal(job.async_checkpoint.max_ckpt_rounds, 3);
    assert_string_equal(job.mount[0].access_mode, "VOLUME_ACCESS_MODE_UNSPECIFIED");

    json_t *back = jobspec_to_json(&job);
    assert_same_tree(orig, back);
    json_decref(back);

    jobspec_copy(&copy, &job);
    assert_true(jobspec_equal(&copy, &job));
    back = jobspec_to_json(&copy);
    assert_same_tree(orig, back);
    json_decref(back);
    /* a kept field counts in equality */
    json_object_set_new(copy.roles[0].extra, "working_dir", json_string("changed"));
    assert_false(jobspec_equal(&copy, &job));
    jobspec_free(&copy);

    /* `get job -o yaml` then a file read back: the same job; unknown fields are warned of */
    for (int fmt = 0; fmt < 2; fmt++) {
        struct strbuf doc = STRBUF_INIT;
        jobfile_write(&job, fmt ? JOBFILE_JSON : JOBFILE_YAML, &doc);
        struct jobfile jf;
        jobfile_init(&jf);
        assert_int_equal(jobfile_parse(fmt ? "j.json" : "j.yaml", doc.buf, doc.len, &jf, &fs),
                         JOBFILE_OK);
        for (size_t i = 0; i < fs.count; i++) {
            assert_int_equal(fs.items[i].severity, SEVERITY_WARNING);
            assert_non_null(strstr(fs.items[i].message, "kept and sent as it is"));
        }
        assert_true(finding_at(&fs, "queue_position") != NULL);
        assert_true(finding_at(&fs, "roles[0].resource_spec[0].gpu_model") != NULL);
        assert_true(jobspec_equal(&jf.job, &job));
        findings_free(&fs);
        jobfile_free(&jf);
        strbuf_free(&doc);
    }

    /* the new named fields are fields of a file, not unknown ones */
    struct jobfile jf;
    jobfile_init(&jf);
    const char *text = "display_name: x\n"
                       "async_checkpoint: {max_ckpt_rounds: 2}\n"
                       "lme: {enable_warmingup: true, max_retries: 1}\n"
                       "fine_tuning_specs: '{}'\n"
                       "barrier: {enable_ethernet_ping: false}\n"
                       "scheduling: {scoring_strategy: {type: MOST_ALLOCATED}}\n"
                       "mount: [{type: PV_AFS_MODEL, id: m, mount_path: /m}]\n";
    assert_int_equal(jobfile_parse("f.yaml", text, strlen(text), &jf, &fs), JOBFILE_OK);
    assert_int_equal(fs.count, 0);
    jobfile_free(&jf);
    /* a near miss stays an error */
    text = "display_name: x\nasync_checkpoint: {max_ckpt_round: 2}\n";
    jobfile_init(&jf);
    assert_int_equal(jobfile_parse("f.yaml", text, strlen(text), &jf, &fs), JOBFILE_BAD_FIELDS);
    assert_non_null(strstr(fs.items[0].message, "did you mean max_ckpt_rounds?"));
    jobfile_free(&jf);
    findings_free(&fs);

    jobspec_free(&job);
    json_decref(orig);
}

/*
 * What a create sends: to ACP, the job without what the server sets and
 * without trainjob's own scheduling.preemptible; to trainjobd, all of it.
 */
static void acp_is_sent_no_output_only_nor_preemptible(void **state)
{
    (void)state;
    json_t *orig = fixture("training-job-get.json");
    struct jobspec job;
    jobspec_init(&job);
    struct findings fs = FINDINGS_INIT;
    assert_int_equal(jobspec_from_json(orig, JOBSPEC_LENIENT, &job, &fs), 0);
    job.scheduling.has_preemptible = true;
    job.scheduling.preemptible = true;

    for (int trainjobd = 0; trainjobd < 2; trainjobd++) {
        struct fake f = {0};
        fake_answer(&f, 200, job_reply);
        struct backend *b = open_fake(&f, NULL, trainjobd);
        struct jobspec out;
        struct api_error err;
        assert_int_equal(backend_create(b, &job, &out, &err), BACKEND_OK);
        json_t *sent = json_loads(f.body[0], 0, NULL);
        assert_non_null(sent);
        json_t *sched = json_object_get(sent, "scheduling");
        json_t *spec = json_array_get(
            json_object_get(json_array_get(json_object_get(sent, "roles"), 0), "resource_spec"), 0);
        json_t *m0 = json_array_get(json_object_get(sent, "mount"), 0);
        if (trainjobd) {
            assert_true(json_is_true(json_object_get(sched, "preemptible")));
        } else {
            assert_null(json_object_get(sched, "preemptible"));
            const char *gone[] = {
                "uid",         "state",        "ownership",         "metadata",
                "create_time", "root_mapping", "subscription_name", "workspace_name"};
            for (size_t i = 0; i < sizeof gone / sizeof gone[0]; i++)
                assert_null(json_object_get(sent, gone[i]));
            assert_null(json_object_get(spec, "limits"));
            assert_null(json_object_get(spec, "description"));
            assert_null(json_object_get(m0, "access_mode"));
            assert_null(json_object_get(json_object_get(sent, "lme"), "current_retries"));
            assert_null(json_object_get(json_object_get(sent, "resource_pool"), "display_name"));
        }
        /* what the user may set goes either way, fields trainjob does not know too */
        assert_string_equal(json_string_value(json_object_get(sched, "priority")), "HIGH");
        assert_int_equal(json_integer_value(json_object_get(
                             json_object_get(sent, "async_checkpoint"), "max_ckpt_rounds")),
                         3);
        assert_non_null(json_object_get(sent, "fine_tuning_specs"));
        assert_non_null(json_object_get(sent, "barrier"));
        assert_non_null(json_object_get(sent, "queue_position"));
        assert_string_equal(json_string_value(json_object_get(m0, "endpoint")),
                            "afs.cn-sh-01e.internal");
        json_decref(sent);
        jobspec_free(&out);
        backend_free(b);
        fake_free(&f);
    }
    jobspec_free(&job);
    json_decref(orig);
}

/* The node at a dotted path of a tree ("roles.0.resource_spec.1.name"), or NULL. */
static json_t *at_path(json_t *j, const char *path)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *save = NULL, *k = strtok_r(buf, ".", &save); k && j; k = strtok_r(NULL, ".", &save))
        j = json_is_array(j) ? json_array_get(j, strtoul(k, NULL, 10)) : json_object_get(j, k);
    return j;
}

static const char *str_at(json_t *j, const char *path)
{
    return json_string_value(at_path(j, path));
}

/*
 * A newer server's job: enum values this build does not know (PREEMPTED,
 * JAX, PV_BOS, RESTART_NODE, URGENT, ON_DEMAND, a scoring type and a field
 * beside it), numbers in limits, several specs with total_replicas and
 * per-spec replicas, `tensorboard: {}`. Read, it keeps them as text and
 * numbers; written (`get -o json|yaml`) and read back as a file, it is the
 * same job and validates; submitted back, the body carries every value as
 * the server said it, without per-spec replicas or output-only fields.
 */
static void a_newer_servers_job_round_trips(void **state)
{
    (void)state;
    json_t *orig = fixture("training-job-newer.json");
    struct fake f = {0};
    char *text = json_dumps(orig, JSON_COMPACT);
    fake_answer(&f, 200, text);
    fake_answer(&f, 200, job_reply);
    struct backend *b = open_fake(&f, "share-space-01e", false);
    struct jobspec job;
    struct api_error err;
    assert_int_equal(backend_get(b, "jax-4f8k2p", &job, &err), BACKEND_OK);
    assert_string_equal(enum_name_or(&job_state_names, (int)job.state, job.state_other),
                        "PREEMPTED");
    assert_string_equal(job.framework_other, "JAX");
    assert_string_equal(job.mount[0].type_other, "PV_BOS");
    assert_string_equal(job.fault_tolerance.rules[0].action_other, "RESTART_NODE");
    assert_int_equal(job.fault_tolerance.rules[1].action, FT_ACTION_RESTART_JOB);
    assert_string_equal(job.scheduling.priority_other, "URGENT");
    assert_string_equal(job.scheduling.quota_type_other, "ON_DEMAND");
    assert_string_equal(job.scheduling.scoring_strategy_other, "BALANCED");

    /* get -o json: the same tree, numbers in limits as numbers */
    json_t *back = jobspec_to_json(&job);
    assert_same_tree(orig, back);
    assert_true(json_is_integer(at_path(back, "roles.0.resource_spec.0.limits.cpu")));
    json_decref(back);

    /* get -o yaml, read back as a file: the same job, valid (warnings only) */
    struct strbuf doc = STRBUF_INIT;
    jobfile_write(&job, JOBFILE_YAML, &doc);
    struct jobfile jf;
    struct findings fs = FINDINGS_INIT;
    jobfile_init(&jf);
    assert_int_equal(jobfile_parse("j.yaml", doc.buf, doc.len, &jf, &fs), JOBFILE_OK);
    assert_true(jobspec_equal(&jf.job, &job));
    const struct finding *w = finding_at(&fs, "fault_tolerance.rules[0].action");
    assert_non_null(w);
    assert_int_equal(w->severity, SEVERITY_WARNING);
    assert_non_null(strstr(w->message, "'RESTART_NODE' is not a value trainjob knows"));
    assert_non_null(finding_at(&fs, "scheduling.scoring_strategy.weight"));
    struct validate_options opt = {0};
    struct findings checks = FINDINGS_INIT;
    validate_job(&jf.job, &opt, &checks);
    for (size_t i = 0; i < checks.count; i++) {
        if (checks.items[i].severity == SEVERITY_ERROR)
            fprintf(stderr, "error %s: %s\n", checks.items[i].path, checks.items[i].message);
        assert_int_not_equal(checks.items[i].severity, SEVERITY_ERROR);
    }
    findings_free(&checks);

    /* submitted back: what the user may set, as the server said it */
    struct jobspec out;
    assert_int_equal(backend_create(b, &jf.job, &out, &err), BACKEND_OK);
    json_t *sent = json_loads(f.body[1], 0, NULL);
    assert_non_null(sent);
    assert_string_equal(str_at(sent, "framework"), "JAX");
    assert_string_equal(str_at(sent, "mount.0.type"), "PV_BOS");
    assert_string_equal(str_at(sent, "fault_tolerance.rules.0.action"), "RESTART_NODE");
    assert_string_equal(str_at(sent, "scheduling.priority"), "URGENT");
    assert_string_equal(str_at(sent, "scheduling.quota_type"), "ON_DEMAND");
    assert_string_equal(str_at(sent, "scheduling.scoring_strategy.type"), "BALANCED");
    assert_int_equal(json_integer_value(at_path(sent, "scheduling.scoring_strategy.weight")), 3);
    assert_int_equal(json_integer_value(at_path(sent, "roles.0.total_replicas")), 4);
    assert_null(at_path(sent, "roles.0.resource_spec.0.replicas"));
    assert_null(at_path(sent, "roles.0.resource_spec.1.replicas"));
    assert_null(at_path(sent, "roles.0.resource_spec.0.limits"));
    assert_null(at_path(sent, "state"));
    assert_null(at_path(sent, "workspace_name"));
    json_decref(sent);
    jobspec_free(&out);
    jobfile_free(&jf);
    findings_free(&fs);
    strbuf_free(&doc);
    jobspec_free(&job);
    backend_free(b);
    fake_free(&f);
    free(text);
    json_decref(orig);
}

/* A job read from trainjobd and sent back (renamed) carries none of what trainjobd refuses. */
static void trainjobd_is_sent_no_output_only(void **state)
{
    (void)state;
    json_t *orig = fixture("training-job-get.json");
    struct jobspec job;
    jobspec_init(&job);
    struct findings fs = FINDINGS_INIT;
    assert_int_equal(jobspec_from_json(orig, JOBSPEC_LENIENT, &job, &fs), 0);
    struct fake f = {0};
    fake_answer(&f, 200, job_reply);
    struct backend *b = open_fake(&f, NULL, true);
    struct jobspec out;
    struct api_error err;
    assert_int_equal(backend_create(b, &job, &out, &err), BACKEND_OK);
    json_t *sent = json_loads(f.body[0], 0, NULL);
    const char *gone[] = {"uid",
                          "id",
                          "state",
                          "ownership",
                          "create_time",
                          "start_time",
                          "delete_time",
                          "root_mapping",
                          "subscription_name",
                          "zone",
                          "resource_group_name"};
    for (size_t i = 0; i < sizeof gone / sizeof gone[0]; i++) {
        if (json_object_get(sent, gone[i]))
            fprintf(stderr, "sent %s\n", gone[i]);
        assert_null(json_object_get(sent, gone[i]));
    }
    assert_null(at_path(sent, "roles.0.resource_spec.0.description"));
    assert_null(at_path(sent, "roles.0.resource_spec.0.replicas")); /* total_replicas says it */
    assert_null(at_path(sent, "resource_pool.display_name"));
    assert_string_equal(str_at(sent, "workspace_name"), "share-space-01e");
    assert_string_equal(str_at(sent, "scheduling.priority"), "HIGH");
    json_decref(sent);
    jobspec_free(&out);
    backend_free(b);
    fake_free(&f);
    jobspec_free(&job);
    json_decref(orig);
}

/*
 * ACP's batch calls answer 200 with no per-name result: a name is looked
 * up first, one that is not there is NOT_FOUND and not sent; the others
 * are "requested".
 */
static void acp_stop_and_delete_say_which_names_are_missing(void **state)
{
    (void)state;
    struct fake f = {0};
    fake_answer(&f, 200, job_reply); /* GET a */
    fake_answer(&f, 404,
                "{\"code\":404,\"message\":\"not found\",\"details\":[{\"reason\":\"NotFound\"}]}");
    fake_answer(&f, 200, "{}"); /* the batch: nothing per name */
    struct backend *b = open_fake(&f, NULL, false);
    const char *names[] = {"a", "ghost"};
    struct batch_result r;
    struct api_error err;
    for (int stop = 0; stop < 2; stop++) {
        f.calls = 0;
        assert_int_equal(stop ? backend_stop(b, names, 2, &r, &err)
                              : backend_delete(b, names, 2, &r, &err),
                         BACKEND_OK);
        assert_int_equal(f.calls, 3);
        assert_string_equal(f.method[0], "GET");
        assert_string_equal(f.path[0], COLL "/a");
        assert_string_equal(f.path[1], COLL "/ghost");
        assert_string_equal(f.path[2], stop ? COLL ":batchStop" : COLL ":batchDelete");
        assert_non_null(strstr(f.body[2], "\"training_job_names\":[\"a\"]"));
        assert_int_equal(r.count, 2);
        assert_string_equal(r.items[0].name, "a");
        assert_int_equal(r.items[0].outcome, BATCH_UNKNOWN);
        assert_string_equal(r.items[1].name, "ghost");
        assert_int_equal(r.items[1].outcome, BATCH_NOT_FOUND);
        batch_result_free(&r);
        fake_free(&f);
    }
    /* every name missing: no batch call at all */
    f.calls = 0;
    f.nreplies = 0;
    fake_answer(&f, 404, "{\"code\":404,\"message\":\"not found\"}");
    assert_int_equal(backend_delete(b, names + 1, 1, &r, &err), BACKEND_OK);
    assert_int_equal(f.calls, 1);
    assert_int_equal(r.items[0].outcome, BATCH_NOT_FOUND);
    batch_result_free(&r);
    fake_free(&f);
    /* another refusal of the look-up is the answer */
    f.calls = 0;
    f.nreplies = 0;
    fake_answer(&f, 403, "{\"code\":403,\"message\":\"no\"}");
    assert_int_equal(backend_delete(b, names, 1, &r, &err), BACKEND_REJECTED);
    assert_int_equal(err.status, 403);
    fake_free(&f);
    backend_free(b);
}

/*
 * 429 and 503 are asked again after the server's Retry-After, at most 3
 * tries and 30 s of waiting; then the error names the status and the tries.
 * A wait past the budget is not made. 401 names its status and the key.
 */
static void busy_replies_are_retried_and_refusals_explained(void **state)
{
    (void)state;
    struct fake f = {0};
    fake_answer_retry(&f, 503, 0);
    fake_answer(&f, 200, job_reply);
    struct backend *b = open_fake(&f, NULL, false);
    struct jobspec job;
    struct api_error err;
    assert_int_equal(backend_get(b, "pt-abc", &job, &err), BACKEND_OK);
    assert_int_equal(f.calls, 2);
    jobspec_free(&job);
    backend_free(b);
    fake_free(&f);

    memset(&f, 0, sizeof f);
    fake_answer_retry(&f, 429, 0); /* repeats */
    b = open_fake(&f, NULL, false);
    assert_int_equal(backend_get(b, "pt-abc", &job, &err), BACKEND_REJECTED);
    assert_int_equal(f.calls, 3);
    assert_int_equal(err.status, 429);
    assert_non_null(strstr(err.message, "HTTP 429"));
    assert_non_null(strstr(err.message, "after 3 tries"));
    backend_free(b);
    fake_free(&f);

    memset(&f, 0, sizeof f);
    fake_answer_retry(&f, 503, 31); /* past the budget: answered at once */
    b = open_fake(&f, NULL, false);
    assert_int_equal(backend_get(b, "pt-abc", &job, &err), BACKEND_REJECTED);
    assert_int_equal(f.calls, 1);
    assert_non_null(strstr(err.message, "HTTP 503"));
    backend_free(b);
    fake_free(&f);

    /* the header as it comes */
    struct http_result r;
    http_result_init(&r);
    http_retry_after_header("retry-after:  7 ", 16, &r);
    assert_true(r.has_retry_after);
    assert_int_equal(r.retry_after, 7);
    http_result_init(&r);
    http_retry_after_header("Retry-After: Fri, 04 Dec 2026 23:00:00 GMT", 42, &r);
    assert_false(r.has_retry_after);
    http_retry_after_header("Retry-Afterx: 3", 15, &r);
    assert_false(r.has_retry_after);

    memset(&f, 0, sizeof f);
    fake_answer(&f, 401, "{\"code\":16,\"message\":\"unauthenticated\"}");
    b = open_fake(&f, NULL, false);
    assert_int_equal(backend_get(b, "pt-abc", &job, &err), BACKEND_REJECTED);
    assert_non_null(strstr(err.message, "unauthenticated"));
    assert_non_null(strstr(err.message, "HTTP 401"));
    assert_non_null(strstr(err.message, "access_key"));
    assert_non_null(strstr(err.message, "secret_key_file"));
    backend_free(b);
    fake_free(&f);
}

/*
 * ACP's list-workers reply (its page's example, filled in): containers with
 * their limits and device type, the spec, init containers; a phase trainjob
 * does not know is shown as the server said it, not as one of five; every
 * worker is written back as it came.
 */
static void acp_workers_decode_whole(void **state)
{
    (void)state;
    json_t *page = fixture("list-workers.json");
    char *text = json_dumps(page, JSON_COMPACT);
    struct fake f = {0};
    fake_answer(&f, 200, text);
    struct backend *b = open_fake(&f, NULL, false);
    struct worker_list l;
    struct api_error err;
    assert_int_equal(backend_workers(b, "pt-7k2m9q4x", &l, &err), BACKEND_OK);
    assert_int_equal(l.count, 2);
    const struct worker_info *m = &l.workers[0], *w = &l.workers[1];
    assert_string_equal(m->node_spec_name, "N6lS.Iu.I10.8.64c1024g");
    assert_string_equal(m->namespace_name, "ws-share-space-01e");
    assert_int_equal(m->container_count, 1);
    assert_string_equal(m->containers[0].device_type, "NVIDIA-H800");
    assert_string_equal(
        json_string_value(json_object_get(m->containers[0].resources.limits, "memory")), "1024Gi");
    assert_int_equal(m->init_container_count, 1);
    assert_int_equal(m->phase, WORKER_RUNNING);
    assert_string_equal(worker_phase_text(m), "Running");
    assert_int_equal(w->phase, WORKER_PHASE_UNSPECIFIED);
    assert_string_equal(worker_phase_text(w), "ContainerCreating");
    struct strbuf dev = STRBUF_INIT;
    worker_devices_text(m, &dev);
    assert_string_equal(strbuf_str(&dev), "8 \xc3\x97 NVIDIA-H800");
    strbuf_free(&dev);

    json_t *workers = json_object_get(page, "workers");
    for (size_t i = 0; i < l.count; i++) {
        json_t *back = worker_info_to_json(&l.workers[i]);
        assert_same_tree(json_array_get(workers, i), back);
        json_decref(back);
        struct worker_info copy;
        worker_info_copy(&copy, &l.workers[i]);
        assert_true(worker_info_equal(&copy, &l.workers[i]));
        worker_info_free(&copy);
    }
    worker_list_free(&l);
    backend_free(b);
    fake_free(&f);
    free(text);
    json_decref(page);
}

/*
 * Issue 12 item 7: on ACP the catalog comes from what the public pages
 * define — the workspace's pool bindings, each pool's resource specs (paged)
 * — with ACP's limits; a list that cannot be read, or that no page defines,
 * is unknown (validation leaves it to the server) and said in missing.
 * Fixtures: tests/fixtures/acp/ (shapes from third-party clients, unverified).
 */
static void acp_catalog_from_bindings_and_specs(void **state)
{
    (void)state;
    json_t *bind = fixture("workspace-aec2-bindings.json");
    json_t *p1 = fixture("resource-specs-page1.json"), *p2 = fixture("resource-specs-page2.json");
    char *tb = json_dumps(bind, 0), *t1 = json_dumps(p1, 0), *t2 = json_dumps(p2, 0);
    struct fake f = {0};
    fake_answer(&f, 200, tb);
    fake_answer(&f, 200, t1); /* pool-h800, page 1 */
    fake_answer(&f, 200, t2); /* page 2 */
    fake_answer(&f, 200, t2); /* pool-idle */
    fake_answer(&f, 403, "{\"message\":\"no aec2.spec.list\",\"details\":[]}"); /* public */
    struct backend *b = open_fake(&f, NULL, false);
    struct catalog cat;
    struct api_error err;
    assert_int_equal(backend_catalog(b, &cat, &err), BACKEND_OK);
    assert_string_equal(f.path[0],
                        "/compute/workspace/data/v1/subscriptions/local/resourceGroups/"
                        "default/zones/local-1z/workspaces/default/workspaceAEC2Bindings");
    assert_string_equal(f.path[1],
                        "/compute/aec2/data/v1/subscriptions/local/resourceGroups/"
                        "default/zones/cn-sh-01e/aec2s/pool-h800/resourceSpecs?page_size=500");
    assert_non_null(strstr(f.path[2], "/aec2s/pool-h800/resourceSpecs?page_size=500&page_token=2"));
    assert_int_equal(f.calls, 5);

    assert_int_equal(cat.pool_count, 3);
    assert_int_equal(cat.pools[0].type, POOL_DEDICATED);
    assert_int_equal(cat.pools[1].type, POOL_IDLE);
    assert_int_equal(cat.pools[2].type, POOL_PUBLIC);
    assert_string_equal(cat.pools[1].zones[0], "cn-sh-01e");
    assert_int_equal(cat.pools[0].spec_count, 2);
    const struct catalog_spec *s = &cat.pools[0].specs[0];
    assert_string_equal(s->name, "N6lS.Iu.I10.8.64c1024g");
    assert_int_equal(s->devices, 8);
    assert_string_equal(s->device_type, "H800");
    assert_int_equal(s->device_memory_gib, 80);
    assert_int_equal(s->vcpus, 64);
    assert_int_equal(s->memory_mib, 1024 * 1024);
    assert_int_equal(cat.pools[0].specs[1].devices, 0);
    assert_int_equal(cat.pools[0].specs[1].vcpus, 2);
    assert_int_equal(cat.workspace_count, 1);
    assert_int_equal(cat.workspaces[0].pool_count, 3);
    assert_true(cat.limits.present);
    assert_int_equal(cat.limits.max_env, 10);
    assert_int_equal(cat.limits.max_backoff_limit, INT32_MAX);
    assert_true(cat.unknown & CATALOG_UNKNOWN_VOLUMES);
    assert_true(cat.unknown & CATALOG_UNKNOWN_SPECS); /* public's could not be read */
    assert_false(cat.unknown & CATALOG_UNKNOWN_POOLS);
    assert_non_null(strstr(cat.missing, "ACP lists no zones, VPCs, volumes or images"));
    assert_non_null(strstr(cat.missing, "the specs of pool public: no aec2.spec.list"));
    catalog_free(&cat);
    backend_free(b);
    fake_free(&f);

    /* the bindings cannot be read: still a catalog, with ACP's limits, saying why */
    struct fake g = {0};
    fake_answer(&g, 403, "{\"message\":\"lacks workspace.instance.get\"}");
    b = open_fake(&g, NULL, false);
    assert_int_equal(backend_catalog(b, &cat, &err), BACKEND_OK);
    assert_int_equal(cat.pool_count, 0);
    assert_true(cat.unknown & CATALOG_UNKNOWN_POOLS);
    assert_int_equal(cat.limits.max_env, 10);
    assert_non_null(strstr(cat.missing, "the workspace's pools: lacks workspace.instance.get"));
    catalog_free(&cat);
    backend_free(b);
    fake_free(&g);
    free(tb);
    free(t1);
    free(t2);
    json_decref(bind);
    json_decref(p1);
    json_decref(p2);
}

static void names_and_query_values_are_escaped(void **state)
{
    (void)state;
    struct fake f = {0};
    fake_answer(&f, 200, "{\"training_jobs\":[],\"next_page_token\":\"\",\"total_size\":0}");
    struct backend *b = open_fake(&f, "my ws/ä", true);
    struct list_query q = {500, "2", "state='RUNNING' AND name='a&b'", "pt-", false};
    struct job_list l;
    struct api_error err;
    assert_int_equal(backend_list(b, &q, &l, &err), BACKEND_OK);
    assert_string_equal(f.path[0],
                        "/compute/acp/data/v2/subscriptions/local/resourceGroups/default/zones/"
                        "local-1z/workspaces/my%20ws%2F%C3%A4/trainingJobs?page_size=500&"
                        "page_token=2&filter=state%3D%27RUNNING%27%20AND%20name%3D%27a%26b%27&"
                        "name=pt-");
    job_list_free(&l);

    struct jobspec out;
    fake_answer(&f, 200, job_reply);
    assert_int_equal(backend_get(b, "a/b?c", &out, &err), BACKEND_OK);
    assert_non_null(strstr(f.path[1], "/trainingJobs/a%2Fb%3Fc"));
    jobspec_free(&out);
    backend_free(b);
    fake_free(&f);
}

static void list_decodes_and_follows_pages(void **state)
{
    (void)state;
    struct fake f = {0};
    fake_answer(&f, 200,
                "{\"training_jobs\":[{\"name\":\"a\",\"uid\":\"u-a\",\"state\":\"RUNNING\"},"
                "{\"name\":\"b\",\"uid\":\"u-b\",\"state\":\"SOME_NEW_STATE\"}],"
                "\"next_page_token\":\"2\",\"total_size\":3}");
    /* Page 2 repeats b (records shift between pages) and adds c. */
    fake_answer(&f, 200,
                "{\"training_jobs\":[{\"name\":\"b\",\"uid\":\"u-b\"},"
                "{\"name\":\"c\",\"uid\":\"u-c\",\"state\":\"SUCCEEDED\"}],"
                "\"next_page_token\":\"\",\"total_size\":3}");
    struct backend *b = open_fake(&f, NULL, true);
    struct job_list l;
    struct api_error err;
    assert_int_equal(backend_list_all(b, "state='RUNNING'", false, &l, &err), BACKEND_OK);
    assert_int_equal(f.calls, 2);
    assert_string_equal(f.path[0], COLL "?page_size=500&filter=state%3D%27RUNNING%27");
    assert_string_equal(f.path[1], COLL "?page_size=500&page_token=2&filter=state%3D%27RUNNING%27");
    assert_int_equal(l.count, 3);
    assert_string_equal(l.jobs[0].name, "a");
    assert_int_equal(l.jobs[0].state, JOB_STATE_RUNNING);
    assert_string_equal(l.jobs[1].name, "b");
    assert_int_equal(l.jobs[1].state, JOB_STATE_UNSPECIFIED); /* unknown value: lenient */
    assert_string_equal(l.jobs[2].name, "c");
    assert_int_equal(l.total_size, 3);
    assert_null(l.next_page_token);
    job_list_free(&l);
    backend_free(b);
    fake_free(&f);
}

/* Rows only: trainjobd is asked for view=BASIC summaries; real ACP, which has no such view, is not.
 */
static void summaries_are_asked_of_trainjobd_only(void **state)
{
    (void)state;
    static const char empty[] = "{\"training_jobs\":[],\"next_page_token\":\"\",\"total_size\":0}";
    struct job_list l;
    struct api_error err;
    struct fake f = {0};
    fake_answer(&f, 200, empty);
    struct backend *b = open_fake(&f, NULL, true);
    assert_int_equal(backend_list_all(b, NULL, true, &l, &err), BACKEND_OK);
    assert_string_equal(f.path[0], COLL "?page_size=500&view=BASIC");
    job_list_free(&l);
    backend_free(b);
    fake_free(&f);

    struct fake g = {0};
    fake_answer(&g, 200, empty);
    b = open_fake(&g, NULL, false);
    assert_int_equal(backend_list_all(b, NULL, true, &l, &err), BACKEND_OK);
    assert_string_equal(g.path[0], COLL "?page_size=500");
    job_list_free(&l);
    backend_free(b);
    fake_free(&g);
}

/* A merge of many pages keeps each uid once, whatever the count (a hash index, not a scan). */
static void list_all_keeps_each_uid_once_over_many_pages(void **state)
{
    (void)state;
    struct fake f = {0};
    struct strbuf pages[4] = {STRBUF_INIT, STRBUF_INIT, STRBUF_INIT, STRBUF_INIT};
    for (int p = 0; p < 4; p++) { /* the fake keeps the pointer: one buffer a page */
        struct strbuf *pg = &pages[p];
        strbuf_adds(pg, "{\"training_jobs\":[");
        /* Each page repeats the last 100 of the one before (jobs shifting between pages). */
        for (int i = p * 400; i < p * 400 + 500; i++)
            strbuf_addf(pg, "%s{\"name\":\"j%d\",\"uid\":\"u%d\"}", i > p * 400 ? "," : "", i, i);
        strbuf_addf(pg, "],\"next_page_token\":\"%s\",\"total_size\":1700}", p < 3 ? "n" : "");
        fake_answer(&f, 200, strbuf_str(pg));
    }
    struct backend *b = open_fake(&f, NULL, true);
    struct job_list l;
    struct api_error err;
    assert_int_equal(backend_list_all(b, NULL, false, &l, &err), BACKEND_OK);
    assert_int_equal(l.count, 1700);
    for (size_t i = 0; i < l.count; i++) {
        char want[32];
        snprintf(want, sizeof want, "u%zu", i);
        assert_string_equal(l.jobs[i].uid, want);
    }
    job_list_free(&l);
    backend_free(b);
    fake_free(&f);
    for (int p = 0; p < 4; p++)
        strbuf_free(&pages[p]);
}

static void workers_and_events_decode(void **state)
{
    (void)state;
    struct fake f = {0};
    fake_answer(&f, 200,
                "{\"workers\":[{\"uid\":\"u1-master-0\",\"name\":\"master-0\",\"role\":\"master\","
                "\"node_name\":\"sim-n1\",\"ip\":\"127.0.0.1\",\"host_ip\":\"127.0.0.1\","
                "\"phase\":\"Failed\",\"restarts\":2,\"exit_code\":137,"
                "\"exit_reason\":\"killed (SIGKILL/OOM)\",\"devices\":\"0,1\",\"simulated\":true,"
                "\"create_time\":\"2026-11-29T16:06:37.581Z\",\"new_field\":[1]},"
                "{\"name\":\"worker-0\",\"phase\":\"Succeeded\",\"exit_code\":0}],"
                "\"next_page_token\":\"\",\"total_size\":2}");
    fake_answer(&f, 200,
                "{\"events\":[{\"id\":1,\"time\":\"2026-11-29T16:06:37.575Z\",\"kind\":\"CREATED\","
                "\"job\":\"pt-abc\",\"state\":\"QUEUEING\",\"message\":\"created by root\"},"
                "{\"id\":4,\"time\":\"2026-11-29T16:06:40.645Z\",\"kind\":\"FAULT\","
                "\"job\":\"pt-abc\",\"worker\":\"master-0\",\"exit_code\":137,\"rule\":1,"
                "\"action\":\"RESTART_POD\",\"restarts_used\":1,\"restart_limit\":-1,"
                "\"node\":\"sim-n1\",\"message\":\"master-0 exited 137\"}]}");
    struct backend *b = open_fake(&f, NULL, true);
    struct worker_list wl;
    struct api_error err;
    assert_int_equal(backend_workers(b, "pt-abc", &wl, &err), BACKEND_OK);
    assert_string_equal(f.path[0], COLL "/pt-abc/workers?page_size=500");
    assert_int_equal(wl.count, 2);
    const struct worker_info *w = &wl.workers[0];
    assert_string_equal(w->name, "master-0");
    assert_string_equal(w->node_name, "sim-n1");
    assert_int_equal(w->phase, WORKER_FAILED);
    assert_int_equal(w->restarts, 2);
    assert_true(w->has_exit_code);
    assert_int_equal(w->exit_code, 137);
    assert_string_equal(w->exit_reason, "killed (SIGKILL/OOM)");
    assert_string_equal(w->devices, "0,1");
    assert_true(w->simulated);
    assert_true(wl.workers[1].has_exit_code);
    assert_int_equal(wl.workers[1].exit_code, 0);
    worker_list_free(&wl);

    struct job_event_list el;
    assert_int_equal(backend_events(b, "pt-abc", &el, &err), BACKEND_OK);
    assert_string_equal(f.path[1], "/trainjob/v1/workspaces/default/trainingJobs/pt-abc/events");
    assert_int_equal(el.count, 2);
    assert_int_equal(el.events[0].kind, EVENT_CREATED);
    assert_string_equal(el.events[0].message, "created by root");
    assert_int_equal(el.events[1].kind, EVENT_FAULT);
    assert_int_equal(el.events[1].exit_code, 137);
    assert_int_equal(el.events[1].rule, 1);
    assert_int_equal(el.events[1].restart_limit, -1);
    job_event_list_free(&el);
    backend_free(b);
    fake_free(&f);
}

static void error_bodies_become_api_errors(void **state)
{
    (void)state;
    struct fake f = {0};
    fake_answer(&f, 409,
                "{\"code\":409,\"message\":\"name: already used in workspace default\","
                "\"details\":[{\"reason\":\"NameTaken\",\"field\":\"name\"}]}");
    fake_answer(&f, 404,
                "{\"code\":404,\"message\":\"training job 'x' not found in workspace "
                "'default'\",\"details\":[{\"reason\":\"NotFound\",\"field\":\"name\"}]}");
    fake_answer(&f, 502, "<html>bad gateway</html>");
    fake_answer(&f, 200, "not json");
    struct backend *b = open_fake(&f, NULL, true);
    struct jobspec job, out;
    struct api_error err;
    jobspec_init(&job);
    job.name = xstrdup("x");
    assert_int_equal(backend_create(b, &job, &out, &err), BACKEND_REJECTED);
    assert_int_equal(err.status, 409);
    assert_string_equal(err.reason, "NameTaken");
    assert_string_equal(err.field, "name");
    assert_string_equal(err.message, "name: already used in workspace default");

    assert_int_equal(backend_get(b, "x", &out, &err), BACKEND_REJECTED);
    assert_int_equal(err.status, 404);
    assert_string_equal(err.reason, "NotFound");

    assert_int_equal(backend_get(b, "x", &out, &err), BACKEND_REJECTED);
    assert_int_equal(err.status, 502);
    assert_non_null(strstr(err.message, "bad gateway"));

    assert_int_equal(backend_get(b, "x", &out, &err), BACKEND_REJECTED);
    assert_string_equal(err.reason, "BadReply");

    /* a detail's message and google.rpc's field_violations are shown, not dropped */
    fake_answer(&f, 400,
                "{\"code\":3,\"message\":\"invalid job\",\"details\":["
                "{\"reason\":\"tjInvalidField\",\"field\":\"env\",\"message\":\"at most 10\"},"
                "{\"@type\":\"type.googleapis.com/google.rpc.BadRequest\",\"field_violations\":["
                "{\"field\":\"roles[0].image_path\",\"description\":\"image not found\"}]}]}");
    assert_int_equal(backend_get(b, "x", &out, &err), BACKEND_REJECTED);
    assert_string_equal(err.field, "env");
    assert_int_equal(err.detail_count, 2);
    assert_string_equal(err.details[1].field, "roles[0].image_path");
    assert_non_null(strstr(err.message, "invalid job: at most 10"));
    assert_non_null(strstr(err.message, "roles[0].image_path: image not found"));
    jobspec_free(&job);
    backend_free(b);
    fake_free(&f);
}

static void batch_stop_delete_and_start(void **state)
{
    (void)state;
    struct fake f = {0};
    fake_answer(
        &f, 200,
        "{\"results\":[{\"name\":\"b\",\"result\":\"NOT_FOUND\"},"
        "{\"name\":\"a\",\"result\":\"STOPPING\"},{\"name\":\"c\",\"result\":\"SKIPPED\"}]}");
    fake_answer(&f, 200, "{\"results\":[{\"name\":\"a\",\"result\":\"DELETING\"}]}");
    fake_answer(&f, 200, job_reply);
    struct backend *b = open_fake(&f, NULL, true);
    const char *names[] = {"a", "b", "c"};
    struct batch_result r;
    struct api_error err;
    assert_int_equal(backend_stop(b, names, 3, &r, &err), BACKEND_OK);
    assert_string_equal(f.method[0], "POST");
    assert_string_equal(f.path[0], COLL ":batchStop");
    assert_non_null(strstr(f.body[0], "\"training_job_names\":[\"a\",\"b\",\"c\"]"));
    assert_non_null(strstr(f.body[0], "\"zone\":\"local-1z\""));
    assert_int_equal(r.count, 3);
    assert_int_equal(r.items[0].outcome, BATCH_DONE);
    assert_string_equal(r.items[0].result, "STOPPING");
    assert_int_equal(r.items[1].outcome, BATCH_NOT_FOUND);
    assert_int_equal(r.items[2].outcome, BATCH_SKIPPED);
    batch_result_free(&r);

    assert_int_equal(backend_delete(b, names, 2, &r, &err), BACKEND_OK);
    assert_string_equal(f.path[1], COLL ":batchDelete");
    assert_int_equal(r.items[0].outcome, BATCH_DONE);
    assert_int_equal(r.items[1].outcome, BATCH_UNKNOWN); /* not in the reply */
    batch_result_free(&r);

    struct jobspec out;
    assert_int_equal(backend_start(b, "pt-abc", &out, &err), BACKEND_OK);
    assert_string_equal(f.method[2], "POST");
    assert_string_equal(f.path[2], "/trainjob/v1/workspaces/default/trainingJobs/pt-abc:start");
    jobspec_free(&out);
    backend_free(b);
    fake_free(&f);
}

static void batches_are_split_at_200_names(void **state)
{
    (void)state;
    struct fake f = {0};
    fake_answer(&f, 200, "{}");
    struct backend *b = open_fake(&f, NULL, true);
    char **names = xcalloc(450, sizeof *names);
    for (int i = 0; i < 450; i++)
        names[i] = xasprintf("job-%d", i);
    struct batch_result r;
    struct api_error err;
    assert_int_equal(backend_delete(b, (const char *const *)names, 450, &r, &err), BACKEND_OK);
    assert_int_equal(f.calls, 3);
    assert_non_null(strstr(f.body[1], "\"job-200\""));
    assert_null(strstr(f.body[1], "\"job-199\""));
    assert_non_null(strstr(f.body[2], "\"job-449\""));
    assert_int_equal(r.count, 450);
    assert_string_equal(r.items[449].name, "job-449");
    batch_result_free(&r);
    for (int i = 0; i < 450; i++)
        free(names[i]);
    free(names);
    backend_free(b);
    fake_free(&f);
}

/* Collects a log stream. */
static int collect(void *ctx, const char *data, size_t len)
{
    strbuf_add(ctx, data, len);
    return 0;
}

static void logs_stream_with_tail_and_follow(void **state)
{
    (void)state;
    struct fake f = {0};
    f.chunk = 3;
    fake_answer(&f, 200, "rank 0 of 2\nepoch 1\n");
    fake_answer(&f, 404,
                "{\"code\":404,\"message\":\"job 'pt-abc' has no worker 'w-9'\",\"details\":"
                "[{\"reason\":\"NotFound\",\"field\":\"worker\"}]}");
    struct backend *b = open_fake(&f, NULL, true);
    struct strbuf got = STRBUF_INIT;
    struct api_error err;
    assert_int_equal(backend_logs(b, "pt-abc", "master-0", 100, true, collect, &got, &err),
                     BACKEND_OK);
    assert_string_equal(
        f.path[0],
        "/trainjob/v1/workspaces/default/trainingJobs/pt-abc/workers/master-0/logs?tail=100&"
        "follow=true");
    assert_string_equal(strbuf_str(&got), "rank 0 of 2\nepoch 1\n");
    strbuf_reset(&got);
    assert_int_equal(backend_logs(b, "pt-abc", "w-9", -1, false, collect, &got, &err),
                     BACKEND_REJECTED);
    assert_string_equal(f.path[1],
                        "/trainjob/v1/workspaces/default/trainingJobs/pt-abc/workers/w-9/logs");
    assert_int_equal(got.len, 0);
    assert_string_equal(err.field, "worker");
    strbuf_free(&got);
    backend_free(b);
    fake_free(&f);
}

struct watched {
    int jobs, events, deleted, synced;
    char last_job[32], last_worker[32], deleted_name[32], event_message[64];
};

static int on_watch(void *ctx, const struct watch_message *m)
{
    struct watched *w = ctx;
    switch (m->kind) {
    case WATCH_JOB:
        w->jobs++;
        snprintf(w->last_job, sizeof w->last_job, "%s", m->job.name ? m->job.name : "");
        if (m->workers.count)
            snprintf(w->last_worker, sizeof w->last_worker, "%s", m->workers.workers[0].name);
        break;
    case WATCH_EVENT:
        w->events++;
        snprintf(w->event_message, sizeof w->event_message, "%s",
                 m->event.message ? m->event.message : "");
        break;
    case WATCH_DELETED:
        w->deleted++;
        snprintf(w->deleted_name, sizeof w->deleted_name, "%s", m->job.name);
        break;
    case WATCH_SYNCED:
        w->synced++;
        break;
    }
    return 0;
}

static void watch_splits_ndjson_across_chunks(void **state)
{
    (void)state;
    struct fake f = {0};
    f.chunk = 7; /* lines arrive cut anywhere */
    fake_answer(
        &f, 200,
        "{\"type\":\"JOB\",\"job\":{\"name\":\"pt-a\",\"state\":\"RUNNING\"},\"workers\":"
        "[{\"name\":\"master-0\",\"phase\":\"Running\"}]}\n"
        "{\"type\":\"SYNCED\"}\n"
        "{\"type\":\"SOMETHING_NEW\"}\n"
        "{\"type\":\"EVENT\",\"event\":{\"id\":9,\"kind\":\"STATE\",\"message\":\"RUNNING → "
        "SUCCEEDED\"}}\n"
        "{\"type\":\"DELETED\",\"job\":{\"name\":\"pt-a\",\"uid\":\"u1\"}}");
    struct backend *b = open_fake(&f, NULL, true);
    struct watched w = {0};
    struct api_error err;
    assert_int_equal(backend_watch(b, on_watch, &w, &err), BACKEND_OK);
    assert_string_equal(f.path[0], COLL "?watch=true");
    assert_int_equal(w.jobs, 1);
    assert_string_equal(w.last_job, "pt-a");
    assert_string_equal(w.last_worker, "master-0");
    assert_int_equal(w.synced, 1);
    assert_int_equal(w.events, 1);
    assert_string_equal(w.event_message, "RUNNING → SUCCEEDED");
    assert_int_equal(w.deleted, 1); /* the last line had no '\n' */
    assert_string_equal(w.deleted_name, "pt-a");
    backend_free(b);
    fake_free(&f);
}

static void real_acp_lacks_the_trainjobd_extras(void **state)
{
    (void)state;
    struct fake f = {0};
    fake_answer(&f, 200, "{}");
    struct backend *b = open_fake(&f, NULL, false);
    struct api_error err;
    struct catalog cat;
    struct job_event_list el;
    struct jobspec job;
    struct strbuf got = STRBUF_INIT;
    struct watched w = {0};
    (void)cat; /* the catalog is ACP's own now: acp_catalog_from_bindings_and_specs */
    assert_int_equal(backend_events(b, "x", &el, &err), BACKEND_REJECTED);
    assert_int_equal(err.status, 501);
    assert_non_null(strstr(err.message, "not supported by this backend"));
    assert_int_equal(backend_logs(b, "x", "master-0", -1, false, collect, &got, &err),
                     BACKEND_REJECTED);
    assert_int_equal(backend_start(b, "x", &job, &err), BACKEND_REJECTED);
    assert_int_equal(backend_watch(b, on_watch, &w, &err), BACKEND_REJECTED);
    assert_int_equal(f.calls, 0); /* none of them went out */
    strbuf_free(&got);
    backend_free(b);
    fake_free(&f);
}

/* ---- transport failures and reviving the local engine ------------------ */

static int revive_calls;
static int revive_result;

static int fake_revive(void *ctx, struct strbuf *err)
{
    (void)ctx;
    revive_calls++;
    if (revive_result != 0)
        strbuf_adds(err, "trainjobd exited 1");
    return revive_result;
}

static void unreachable_is_revived_once(void **state)
{
    (void)state;
    struct fake f = {0};
    fake_fail(&f, TRANSPORT_UNREACHABLE);
    fake_answer(&f, 200, job_reply);
    struct backend *b = open_fake(&f, NULL, true);
    b->revive = fake_revive;
    revive_calls = 0;
    revive_result = 0;
    struct jobspec out;
    struct api_error err;
    assert_int_equal(backend_get(b, "pt-abc", &out, &err), BACKEND_OK);
    assert_int_equal(revive_calls, 1);
    assert_int_equal(f.calls, 2);
    jobspec_free(&out);
    backend_free(b);
    fake_free(&f);

    /* Reviving fails and the server stays away: one retry, then the error says both. */
    struct fake g = {0};
    fake_fail(&g, TRANSPORT_UNREACHABLE);
    b = open_fake(&g, NULL, true);
    b->revive = fake_revive;
    revive_calls = 0;
    revive_result = -1;
    assert_int_equal(backend_get(b, "pt-abc", &out, &err), BACKEND_UNREACHABLE);
    assert_int_equal(revive_calls, 1);
    assert_int_equal(g.calls, 2);
    assert_int_equal(err.status, 0);
    assert_non_null(strstr(err.message, "cannot reach http+unix:///tmp/none.sock"));
    assert_non_null(strstr(err.message, "trainjobd exited 1"));
    /* Never revived twice. */
    assert_int_equal(backend_get(b, "pt-abc", &out, &err), BACKEND_UNREACHABLE);
    assert_int_equal(revive_calls, 1);
    backend_free(b);
    fake_free(&g);

    /* A timeout is not "unreachable": no revive. */
    struct fake h = {0};
    fake_fail(&h, TRANSPORT_TIMEOUT);
    b = open_fake(&h, NULL, true);
    b->revive = fake_revive;
    revive_calls = 0;
    assert_int_equal(backend_get(b, "pt-abc", &out, &err), BACKEND_TRANSPORT);
    assert_int_equal(revive_calls, 0);
    backend_free(b);
    fake_free(&h);
}

static void a_missing_socket_is_unreachable(void **state)
{
    (void)state;
    struct strbuf e = STRBUF_INIT;
    struct http_client *c = http_client_new("http+unix:///nonexistent/trainjob.sock", &e);
    assert_non_null(c);
    struct http_result r;
    http_result_init(&r);
    assert_int_equal(http_call(c, "GET", "/trainjob/v1/catalog", NULL, 0, &r), -1);
    assert_int_equal(r.transport, TRANSPORT_UNREACHABLE);
    assert_string_equal(r.message, "No such file or directory");
    http_result_free(&r);
    http_client_free(c);
    strbuf_free(&e);
}

/* ---- request preparation ------------------------------------------------ */

/* The value of header name in t's list, or NULL. */
static const char *header(const struct http_transfer *t, const char *name)
{
    size_t n = strlen(name);
    for (const struct curl_slist *h = t->headers; h; h = h->next)
        if (strncmp(h->data, name, n) == 0 && h->data[n] == ':')
            return h->data + n + 2;
    return NULL;
}

/* header() by the lower-case name the signature lists, for hmac_verify. */
static const char *signed_header(void *ctx, const char *name)
{
    static const char *const names[][2] = {
        {"x-date", "X-Date"}, {"digest", "Digest"}, {"x-nonce", "X-Nonce"}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(name, names[i][0]) == 0)
            return header(ctx, names[i][1]);
    return NULL;
}

static void prepared_requests_are_signed_with_keys(void **state)
{
    (void)state;
    struct strbuf e = STRBUF_INIT;
    struct http_client *c = http_client_new("http://127.0.0.1:7070/", &e);
    assert_non_null(c);
    struct http_result r;
    http_result_init(&r);
    struct http_transfer t;

    assert_int_equal(
        http_transfer_prepare(&t, c, "GET", COLL "?page_size=500", NULL, 0, NULL, NULL, &r), 0);
    assert_string_equal(t.url, "http://127.0.0.1:7070" COLL "?page_size=500");
    assert_null(header(&t, "X-Date"));
    assert_null(header(&t, "Authorization"));
    assert_string_equal(header(&t, "Accept"), "application/json");
    assert_null(header(&t, "Content-Type"));
    http_transfer_cleanup(&t);

    http_client_set_keys(c, "AK-test", "SK-test");
    assert_int_equal(
        http_transfer_prepare(&t, c, "POST", COLL "?training_job_name=x", "{}", 2, NULL, NULL, &r),
        0);
    const char *date = header(&t, "X-Date");
    const char *auth = header(&t, "Authorization");
    assert_non_null(date);
    assert_non_null(auth);
    assert_string_equal(header(&t, "Content-Type"), "application/json");
    assert_non_null(strstr(auth, "hmac accesskey=\"AK-test\", algorithm=\"hmac-sha256\", "
                                 "headers=\"x-date request-line digest x-nonce\", signature=\""));
    /* The signature is what the engine's check accepts for this request, body and secret. */
    struct hmac_auth a;
    assert_true(hmac_parse(auth, &a));
    assert_string_equal(a.access_key, "AK-test");
    assert_true(hmac_digest_matches(header(&t, "Digest"), "{}", 2));
    assert_non_null(header(&t, "X-Nonce"));
    const char *line = "POST " COLL "?training_job_name=x HTTP/1.1";
    assert_null(hmac_verify(&a, "SK-test", line, signed_header, &t, "x-date request-line digest",
                            time(NULL), NULL));
    assert_non_null(hmac_verify(&a, "SK-other", line, signed_header, &t, "", time(NULL), NULL));
    http_transfer_cleanup(&t);

    /* Keys off again. */
    http_client_set_keys(c, NULL, NULL);
    assert_int_equal(http_transfer_prepare(&t, c, "DELETE", COLL "/x", NULL, 0, NULL, NULL, &r), 0);
    assert_null(header(&t, "Authorization"));
    http_transfer_cleanup(&t);

    http_result_free(&r);
    http_client_free(c);
    strbuf_free(&e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(endpoints_parse),
        cmocka_unit_test(context_file_good),
        cmocka_unit_test(context_file_errors_have_positions),
        cmocka_unit_test(missing_file_gives_the_builtin_local_context),
        cmocka_unit_test(context_file_is_chosen_and_keys_read),
        cmocka_unit_test(secret_key_from_the_environment),
        cmocka_unit_test(create_get_update_paths),
        cmocka_unit_test(a_reply_too_large_to_decode_is_refused),
        cmocka_unit_test(names_and_query_values_are_escaped),
        cmocka_unit_test(list_decodes_and_follows_pages),
        cmocka_unit_test(summaries_are_asked_of_trainjobd_only),
        cmocka_unit_test(list_all_keeps_each_uid_once_over_many_pages),
        cmocka_unit_test(workers_and_events_decode),
        cmocka_unit_test(error_bodies_become_api_errors),
        cmocka_unit_test(batch_stop_delete_and_start),
        cmocka_unit_test(batches_are_split_at_200_names),
        cmocka_unit_test(logs_stream_with_tail_and_follow),
        cmocka_unit_test(watch_splits_ndjson_across_chunks),
        cmocka_unit_test(real_acp_lacks_the_trainjobd_extras),
        cmocka_unit_test(a_job_from_acp_is_written_back_whole),
        cmocka_unit_test(acp_is_sent_no_output_only_nor_preemptible),
        cmocka_unit_test(a_newer_servers_job_round_trips),
        cmocka_unit_test(trainjobd_is_sent_no_output_only),
        cmocka_unit_test(acp_stop_and_delete_say_which_names_are_missing),
        cmocka_unit_test(busy_replies_are_retried_and_refusals_explained),
        cmocka_unit_test(acp_workers_decode_whole),
        cmocka_unit_test(acp_catalog_from_bindings_and_specs),
        cmocka_unit_test(the_driver_comes_from_the_context_not_the_host),
        cmocka_unit_test(unreachable_is_revived_once),
        cmocka_unit_test(a_missing_socket_is_unreachable),
        cmocka_unit_test(prepared_requests_are_signed_with_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
