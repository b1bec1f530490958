/*
 * test_slurm: the slurm driver (api/slurm) without a cluster — through a
 * transport that answers with recorded slurmrestd 22.05.8 replies
 * (tests/fixtures/slurm/) and a job directory in a temp dir: Slurm states
 * to trainjob states, a refused token ("authentication failed", the
 * token_command run again once), jobs known by their job directory, and
 * hostile job-directory files (a huge events.jsonl, wrong types, escape
 * sequences, symlinks) bounded, checked and sanitized.
 */
// clang-format off
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
// clang-format on

#include <fcntl.h>
#include <jansson.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "api/backend.h"
#include "api/context.h"
#include "api/finding.h"
#include "api/http.h"
#include "api/http_multi.h"
#include "api/slurm.h"
#include "api/slurm_priv.h"
#include "api/slurm_shapes.h"
#include "api/tfevents.h"
#include "api/validate.h"
#include "util/loop.h"
#include "util/strbuf.h"
#include "util/timefmt.h"
#include "util/xalloc.h"

static char *fixture_text(const char *name)
{
    const char *top = getenv("TRAINJOB_TOP");
    char *path = xasprintf("%s/tests/fixtures/slurm/%s", top && *top ? top : ".", name);
    json_t *j = json_load_file(path, 0, NULL);
    if (j == NULL)
        fail_msg("%s: not JSON", path);
    free(path);
    char *t = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    return t;
}

/* A file's text as it is (the caller frees). */
static char *fixture_text_at(const char *path)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    struct strbuf sb = STRBUF_INIT;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        strbuf_add(&sb, buf, n);
    fclose(f);
    return strbuf_detach(&sb, NULL);
}

/* ---- a transport answering from a script --------------------------------- */

#define FAKE_MAX 32

struct fake {
    char *path[FAKE_MAX];
    size_t calls;
    int status[FAKE_MAX];
    char *body[FAKE_MAX];
    size_t n;
};

static void fake_answer(struct fake *f, int status, char *body)
{
    f->status[f->n] = status;
    f->body[f->n++] = body;
}

/*
 * Where a fake's reply goes, as a real transport sends it (api/http,
 * api/uhttp): a 2xx to on_data, when the call has one, in pieces of
 * changing sizes (as a socket gives them); anything else into out->body
 * within the client's byte cap, past which the call fails.
 */
struct fake_sink {
    struct http_result *out;
    http_data_fn on_data;
    void *data_ctx;
    size_t piece;
    bool stopped;
};

static void fake_sink_start(struct fake_sink *k, struct http_result *out, int status,
                            http_data_fn on_data, void *data_ctx)
{
    out->transport = TRANSPORT_NONE;
    out->status = status;
    k->out = out;
    k->on_data = status >= 200 && status < 300 ? on_data : NULL;
    k->data_ctx = data_ctx;
    k->piece = 1;
    k->stopped = false;
}

static void fake_send(struct fake_sink *k, const char *text, size_t len)
{
    if (k->stopped)
        return;
    if (k->on_data == NULL) {
        size_t cap = k->out->max_body ? k->out->max_body : (64u << 20);
        if (k->out->body.len + len > cap) {
            k->stopped = true;
            k->out->transport = TRANSPORT_OTHER;
            snprintf(k->out->message, sizeof k->out->message, "reply larger than %zu MiB",
                     cap >> 20);
            return;
        }
        strbuf_add(&k->out->body, text, len);
        return;
    }
    for (size_t at = 0; at < len;) {
        size_t n = len - at < k->piece ? len - at : k->piece;
        if (k->on_data(k->data_ctx, text + at, n) != 0) {
            k->stopped = true;
            return;
        }
        at += n;
        k->piece = k->piece * 7 % 65521 + 1;
    }
}

static void fake_reply(struct http_result *out, int status, const char *text, http_data_fn on_data,
                       void *data_ctx)
{
    struct fake_sink k;
    fake_sink_start(&k, out, status, on_data, data_ctx);
    fake_send(&k, text, strlen(text));
}

static void fake_transport(void *ctx, const char *method, const char *path, const char *body,
                           size_t len, http_data_fn on_data, void *data_ctx,
                           struct http_result *out)
{
    (void)method, (void)body, (void)len;
    struct fake *f = ctx;
    assert_true(f->calls < FAKE_MAX);
    size_t i = f->calls++;
    f->path[i] = xstrdup(path);
    size_t k = i < f->n ? i : f->n - 1;
    fake_reply(out, f->status[k], f->body[k], on_data, data_ctx);
}

static void fake_free(struct fake *f)
{
    for (size_t i = 0; i < f->calls; i++)
        free(f->path[i]);
    for (size_t i = 0; i < f->n; i++)
        free(f->body[i]);
}

static char tmpdir[64];
static char token_file[128];
/* Where no cache can be made: tests without setup learn the version each time. */
#define NO_CACHE "/proc/trainjob-test-no-cache"
/* Set by the tests of the version cache; the others' scripts start with /openapi/v3. */
static bool keep_version_cache;
/* Set by the tests of the kept lists: the next fake is the same cluster. */
static bool keep_lists;

static int setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/test_slurm.XXXXXX");
    assert_non_null(mkdtemp(tmpdir));
    snprintf(token_file, sizeof token_file, "%s/token", tmpdir);
    /* the API version's cache: each test's own, empty at its start */
    char *cache = xasprintf("%s/cache", tmpdir);
    setenv("XDG_CACHE_HOME", cache, 1);
    free(cache);
    FILE *f = fopen(token_file, "w");
    fputs("SLURM_JWT=eyJ.good.token\n", f);
    fclose(f);
    chmod(token_file, 0600);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char *cmd = xasprintf("rm -rf '%s'", tmpdir);
    assert_int_equal(system(cmd), 0);
    free(cmd);
    setenv("XDG_CACHE_HOME", NO_CACHE, 1);
    keep_version_cache = false;
    keep_lists = false;
    return 0;
}

static json_t *fake_qos;     /* the context's qos: map, when a test sets one */
static json_t *fake_volumes; /* the context's volumes: map, when a test sets one */

static struct backend *open_fake_with(struct fake *f, const char *token_command,
                                      http_transport_fn transport)
{
    slurm_catalog_forget(); /* each fake is another cluster */
    if (!keep_version_cache) {
        char *cmd = xasprintf("rm -rf '%s/cache'", tmpdir);
        assert_int_equal(system(cmd), 0);
        free(cmd);
    } else if (!keep_lists) { /* the version kept, but not another cluster's jobs or catalog */
        char *cmd =
            xasprintf("rm -f '%s/cache/trainjob/'slurm-jobs-* '%s/cache/trainjob/'slurm-catalog-*",
                      tmpdir, tmpdir);
        assert_int_equal(system(cmd), 0);
        free(cmd);
    }
    struct strbuf err = STRBUF_INIT;
    struct http_client *c = http_client_new("http://127.0.0.1:1", &err);
    http_client_set_transport(c, transport, f);
    struct context ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.name = (char *)"lab";
    ctx.driver = CONTEXT_DRIVER_SLURM;
    ctx.subscription = (char *)"local";
    ctx.resource_group = (char *)"default";
    ctx.zone = (char *)"local-1z";
    ctx.workspace = (char *)"default";
    ctx.user = (char *)"trainjob";
    ctx.token_file = token_command ? NULL : token_file;
    ctx.token_command = (char *)token_command;
    ctx.jobs_dir = tmpdir;
    ctx.qos = fake_qos;
    ctx.volumes = fake_volumes;
    struct backend *b = slurm_backend_new(c, &ctx, &err);
    assert_non_null(b);
    strbuf_free(&err);
    return b;
}

static struct backend *open_fake(struct fake *f, const char *token_command)
{
    return open_fake_with(f, token_command, fake_transport);
}

/* The mark the tests' job directories carry, and the comment their Slurm jobs have. */
#define TEST_MARK "0123456789abcdef0123456789abcdef"

/* dir's mark file, as a submit writes it. */
static void put_mark(const char *dir)
{
    char *p = xasprintf("%s/mark", dir);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(TEST_MARK, f);
    fclose(f);
    free(p);
}

/* A /jobs reply holding the sample's job, moved into the directory of job name. */
static char *jobs_reply(const char *sample, const char *name, int id)
{
    char *t = fixture_text(sample);
    json_t *doc = json_loads(t, 0, NULL);
    free(t);
    json_t *j = json_array_get(json_object_get(doc, "jobs"), 0);
    char *dir = xasprintf("%s/default/%s", tmpdir, name);
    json_object_set_new(j, "current_working_directory", json_string(dir));
    json_object_set_new(j, "job_id", json_integer(id));
    json_object_set_new(j, "comment", json_string("trainjob:" TEST_MARK));
    free(dir);
    t = json_dumps(doc, JSON_COMPACT);
    json_decref(doc);
    return t;
}

/* The first two answers most tests need: the version, then a /jobs with job name running. */
static void fake_job_running(struct fake *f, const char *name, int id)
{
    fake_answer(f, 200, fixture_text("openapi-22.05-paths.json"));
    fake_answer(f, 200, jobs_reply("job-running.json", name, id));
}

/* The answers of a catalog: the version, the partitions, the nodes. */
static void fake_catalog(struct fake *f)
{
    fake_answer(f, 200, fixture_text("openapi-22.05-paths.json"));
    fake_answer(f, 200, fixture_text("partitions.json"));
    fake_answer(f, 200, fixture_text("nodes.json"));
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* A token_command: sh running a script of text in tmpdir ("sh PATH"; caller frees). */
static char *script_command(const char *name, char *text)
{
    char *path = xasprintf("%s/%s", tmpdir, name);
    write_file(path, text);
    char *cmd = xasprintf("sh %s", path);
    free(path);
    free(text);
    return cmd;
}

/* ---- states ---------------------------------------------------------------- */

static enum job_state state_of(const char *sample, struct strbuf *msg)
{
    char *t = fixture_text(sample);
    json_t *doc = json_loads(t, 0, NULL);
    free(t);
    struct slurm_job j;
    struct strbuf why = STRBUF_INIT;
    assert_int_equal(slurm_job_decode(slurm_shape_find("v0.0.38"),
                                      json_array_get(json_object_get(doc, "jobs"), 0), &j, &why),
                     0);
    strbuf_reset(msg);
    enum job_state st = slurm_job_state(&j, msg);
    slurm_job_free(&j);
    json_decref(doc);
    strbuf_free(&why);
    return st;
}

static void slurm_states_map_to_trainjob_states(void **state)
{
    (void)state;
    struct strbuf msg = STRBUF_INIT;
    assert_int_equal(state_of("job-running.json", &msg), JOB_STATE_RUNNING);
    assert_int_equal(state_of("job-completed.json", &msg), JOB_STATE_SUCCEEDED);
    assert_int_equal(state_of("job-failed.json", &msg), JOB_STATE_FAILED);
    assert_non_null(strstr(strbuf_str(&msg), "exit code 3")); /* 768 decoded */
    assert_int_equal(state_of("job-pending-qos-not-allowed.json", &msg), JOB_STATE_QUEUEING);
    assert_non_null(strstr(strbuf_str(&msg), "QOS is not allowed"));
    assert_int_equal(state_of("job-preempted-requeued.json", &msg), JOB_STATE_QUEUEING);
    assert_non_null(strstr(strbuf_str(&msg), "preempted"));

    struct slurm_job j;
    memset(&j, 0, sizeof j);
    j.state = (char *)"CANCELLED";
    strbuf_reset(&msg);
    assert_int_equal(slurm_job_state(&j, &msg), JOB_STATE_SUSPENDED);
    j.state = (char *)"OUT_OF_MEMORY";
    j.has_exit = true;
    j.exit_signal = 9;
    strbuf_reset(&msg);
    assert_int_equal(slurm_job_state(&j, &msg), JOB_STATE_FAILED);
    assert_non_null(strstr(strbuf_str(&msg), "signal 9 (SIGKILL)"));
    j.state = (char *)"PENDING";
    j.reason = (char *)"\x1b]0;pwned\x07Resources";
    strbuf_reset(&msg);
    assert_int_equal(slurm_job_state(&j, &msg), JOB_STATE_QUEUEING);
    assert_null(strchr(strbuf_str(&msg), '\x1b')); /* a reason we do not know is sanitized */
    strbuf_free(&msg);
}

/* ---- the API version, cached per endpoint ----------------------------------- */

/* The cache file of the tests' endpoint (there is one in the directory, or none). */
static char *version_cache_file(void)
{
    char *dir = xasprintf("%s/cache/trainjob", tmpdir);
    char *cmd = xasprintf("ls '%s'/slurm-api-*.json 2>/dev/null | head -n 1", dir);
    FILE *p = popen(cmd, "r");
    char line[512] = "";
    if (p) {
        if (fgets(line, sizeof line, p) == NULL)
            line[0] = '\0';
        pclose(p);
    }
    line[strcspn(line, "\n")] = '\0';
    free(cmd);
    free(dir);
    return line[0] ? xstrdup(line) : NULL;
}

/* One listing through a new backend; the paths it asked, space-separated. */
static char *list_paths(struct fake *f)
{
    struct backend *b = open_fake(f, NULL);
    struct job_list l;
    struct api_error e;
    enum backend_status st = backend_list(b, NULL, &l, &e);
    if (st != BACKEND_OK)
        fail_msg("list: %s", e.message);
    job_list_free(&l);
    backend_free(b);
    struct strbuf paths = STRBUF_INIT;
    for (size_t i = 0; i < f->calls; i++)
        strbuf_addf(&paths, "%s%s", i ? " " : "", f->path[i]);
    return strbuf_detach(&paths, NULL);
}

/*
 * A process learns the API version from /openapi/v3 (219 KB on 22.05) and
 * keeps it in the user's cache with the server's release; the next one asks
 * only for what it needs.
 */
static void the_api_version_is_learnt_once_per_endpoint(void **state)
{
    (void)state;
    keep_version_cache = true;
    struct fake f = {0};
    fake_answer(&f, 200, fixture_text("openapi-22.05-paths.json"));
    fake_answer(&f, 200, fixture_text("jobs.json"));
    char *paths = list_paths(&f);
    assert_string_equal(paths, "/openapi/v3 /slurm/v0.0.38/jobs");
    free(paths);
    fake_free(&f);
    char *file = version_cache_file();
    assert_non_null(file);
    struct stat st;
    assert_int_equal(lstat(file, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    char *text = fixture_text_at(file);
    assert_non_null(strstr(text, "\"version\":\"v0.0.38\""));
    assert_non_null(strstr(text, "\"release\":\"22.05.8\""));
    free(text);

    struct fake g = {0};
    fake_answer(&g, 200, fixture_text("jobs.json"));
    paths = list_paths(&g);
    assert_string_equal(paths, "/slurm/v0.0.38/jobs");
    free(paths);
    fake_free(&g);
    free(file);
}

/*
 * The server changed under the cache: a 404 for the cached version's path,
 * or a GET failing with another release, drops it; the version is asked
 * again and the request repeated, once. A reply of another release that
 * succeeded stands and is what the cache then says.
 */
static void a_changed_server_is_asked_its_version_again(void **state)
{
    (void)state;
    keep_version_cache = true;
    char *dir = xasprintf("%s/cache/trainjob", tmpdir);
    struct fake f = {0};
    fake_answer(&f, 200, fixture_text("openapi-22.05-paths.json"));
    fake_answer(&f, 200, fixture_text("jobs.json"));
    free(list_paths(&f));
    fake_free(&f);
    char *file = version_cache_file();
    assert_non_null(file);

    /* a cache of v0.0.40 (as if from a newer server): 22.05 says 404 */
    char *cmd = xasprintf("sed -i 's/v0.0.38/v0.0.40/' '%s'", file);
    assert_int_equal(system(cmd), 0);
    free(cmd);
    struct fake g = {0};
    fake_answer(&g, 404, xstrdup("Unable to find requested URL"));
    fake_answer(&g, 200, fixture_text("openapi-22.05-paths.json"));
    fake_answer(&g, 200, fixture_text("jobs.json"));
    char *paths = list_paths(&g);
    assert_string_equal(paths, "/slurm/v0.0.40/jobs /openapi/v3 /slurm/v0.0.38/jobs");
    free(paths);
    fake_free(&g);
    char *text = fixture_text_at(file);
    assert_non_null(strstr(text, "\"version\":\"v0.0.38\""));
    free(text);

    /* another release fails a GET: the version is asked again, the GET repeated */
    cmd = xasprintf("sed -i 's/22.05.8/21.08.1/' '%s'", file);
    assert_int_equal(system(cmd), 0);
    free(cmd);
    struct fake h = {0};
    fake_answer(&h, 500,
                xstrdup("{\"meta\":{\"Slurm\":{\"release\":\"22.05.8\"}},\"errors\":[{"
                        "\"error\":\"Unable to parse query\",\"error_number\":9001}]}"));
    fake_answer(&h, 200, fixture_text("openapi-22.05-paths.json"));
    fake_answer(&h, 200, fixture_text("jobs.json"));
    paths = list_paths(&h);
    assert_string_equal(paths, "/slurm/v0.0.38/jobs /openapi/v3 /slurm/v0.0.38/jobs");
    free(paths);
    fake_free(&h);
    text = fixture_text_at(file);
    assert_non_null(strstr(text, "\"release\":\"22.05.8\""));
    free(text);

    /* another release answers a request: it stands (never sent twice), the cache says it */
    cmd = xasprintf("sed -i 's/22.05.8/21.08.1/' '%s'", file);
    assert_int_equal(system(cmd), 0);
    free(cmd);
    struct fake k = {0};
    fake_answer(&k, 200, fixture_text("jobs.json"));
    paths = list_paths(&k);
    assert_string_equal(paths, "/slurm/v0.0.38/jobs");
    free(paths);
    fake_free(&k);
    text = fixture_text_at(file);
    assert_non_null(strstr(text, "\"release\":\"22.05.8\""));
    free(text);
    free(file);
    free(dir);
}

/*
 * A cache file the user does not own alone — another user's, one others
 * may write, a symlink — is not read: it would choose the paths we call.
 */
static void a_planted_version_cache_is_not_used(void **state)
{
    (void)state;
    keep_version_cache = true;
    struct fake f = {0};
    fake_answer(&f, 200, fixture_text("openapi-22.05-paths.json"));
    fake_answer(&f, 200, fixture_text("jobs.json"));
    free(list_paths(&f));
    fake_free(&f);
    char *file = version_cache_file();
    assert_non_null(file);
    char *real = xasprintf("%s.real", file);
    for (int i = 0; i < 4; i++) {
        char *cmd = xasprintf("rm -f '%s' '%s' && printf '%%s' "
                              "'{\"endpoint\":\"http://127.0.0.1:1\",\"version\":\"v0.0.38\","
                              "\"release\":\"22.05.8\"}' > '%s' && chmod 0600 '%s' && chmod 0700 "
                              "\"$(dirname '%s')\"",
                              file, real, file, file, file);
        assert_int_equal(system(cmd), 0);
        free(cmd);
        char *how = i == 0   ? xasprintf("chmod 0644 '%s'", file)
                    : i == 1 ? xasprintf("chown 65534 '%s'", file)
                    : i == 2 ? xasprintf("mv '%s' '%s' && ln -s '%s' '%s'", file, real, real, file)
                             : xasprintf("chmod 0777 \"$(dirname '%s')\"", file);
        assert_int_equal(system(how), 0);
        struct fake g = {0};
        fake_answer(&g, 200, fixture_text("openapi-22.05-paths.json"));
        fake_answer(&g, 200, fixture_text("jobs.json"));
        char *paths = list_paths(&g);
        if (strcmp(paths, "/openapi/v3 /slurm/v0.0.38/jobs") != 0)
            fail_msg("after `%s` the cache was used: %s", how, paths);
        free(paths);
        free(how);
        fake_free(&g);
    }
    free(real);
    free(file);
}

static void mkjobdir(const char *name);
static void small_job(struct jobspec *job, const char *name);

/* One listing through a new backend: "name STATE" of its jobs, and the paths it asked. */
static char *list_rows(struct fake *f, char **paths)
{
    struct backend *b = open_fake(f, NULL);
    struct job_list l;
    struct api_error e;
    if (backend_list(b, NULL, &l, &e) != BACKEND_OK)
        fail_msg("list: %s", e.message);
    struct strbuf rows = STRBUF_INIT, p = STRBUF_INIT;
    for (size_t i = 0; i < l.count; i++)
        strbuf_addf(&rows, "%s %s;", l.jobs[i].name,
                    enum_name(&job_state_names, (int)l.jobs[i].state));
    job_list_free(&l);
    backend_free(b);
    for (size_t i = 0; i < f->calls; i++)
        strbuf_addf(&p, "%s%s", i ? " " : "", f->path[i]);
    *paths = strbuf_detach(&p, NULL);
    return strbuf_detach(&rows, NULL);
}

/*
 * The last list is kept in the user's cache (0600) with the update_time to
 * ask after: the next process's GET /jobs carries it, and a 304 lists the
 * kept jobs. A kept list the user does not own alone is not read.
 */
static void the_last_list_is_kept_for_the_next_process(void **state)
{
    (void)state;
    keep_version_cache = keep_lists = true;
    mkjobdir("kept");
    struct fake f = {0};
    fake_job_running(&f, "kept", 4242);
    char *paths, *rows = list_rows(&f, &paths);
    assert_string_equal(paths, "/openapi/v3 /slurm/v0.0.38/jobs");
    assert_string_equal(rows, "kept RUNNING;");
    free(paths);
    fake_free(&f);
    char *cmd = xasprintf("ls %s/cache/trainjob/slurm-jobs-*.json", tmpdir);
    FILE *ls = popen(cmd, "r");
    char file[512] = "";
    assert_non_null(fgets(file, sizeof file, ls));
    pclose(ls);
    free(cmd);
    file[strcspn(file, "\n")] = '\0';
    struct stat st;
    assert_int_equal(lstat(file, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);

    struct fake g = {0};
    fake_answer(&g, 304, xstrdup(""));
    char *again = list_rows(&g, &paths);
    assert_int_equal(strncmp(paths, "/slurm/v0.0.38/jobs?update_time=", 32), 0);
    assert_string_equal(again, rows);
    free(again);
    free(paths);
    fake_free(&g);

    /* another user's file in its place: not believed, the whole list asked */
    cmd = xasprintf("chown 65534 '%s'", file);
    assert_int_equal(system(cmd), 0);
    free(cmd);
    struct fake h = {0};
    fake_answer(&h, 200, jobs_reply("job-running.json", "kept", 4242));
    again = list_rows(&h, &paths);
    assert_string_equal(paths, "/slurm/v0.0.38/jobs");
    free(again);
    free(paths);
    fake_free(&h);
    free(rows);
}

/*
 * Submits in a row read the partitions and nodes once: the next process
 * (within seconds) takes them from the user's cache, and sends the submit
 * only; a planted file (not the user's alone) is not used.
 */
static void submits_in_a_row_read_the_catalog_once(void **state)
{
    (void)state;
    keep_version_cache = keep_lists = true;
    char *ws = xasprintf("%s/default", tmpdir);
    assert_int_equal(mkdir(ws, 0755), 0);
    free(ws);
    const char *names[] = {"first", "second", "third"};
    for (int i = 0; i < 3; i++) {
        struct fake f = {0};
        if (i == 0)
            fake_catalog(&f);
        else if (i == 2) { /* the kept catalog made another user's */
            char *cmd = xasprintf("chown 65534 %s/cache/trainjob/slurm-catalog-*.json", tmpdir);
            assert_int_equal(system(cmd), 0);
            free(cmd);
            fake_answer(&f, 200, fixture_text("partitions.json"));
            fake_answer(&f, 200, fixture_text("nodes.json"));
        }
        fake_answer(&f, 200, xstrdup("{\"errors\": [], \"job_id\": 77}"));
        slurm_catalog_forget(); /* a new process */
        struct backend *b = open_fake(&f, NULL);
        struct jobspec job, out;
        small_job(&job, names[i]);
        struct api_error e;
        if (backend_create(b, &job, &out, &e) != BACKEND_OK)
            fail_msg("%s: %s", names[i], e.message);
        struct strbuf p = STRBUF_INIT;
        for (size_t k = 0; k < f.calls; k++)
            strbuf_addf(&p, "%s%s", k ? " " : "", f.path[k]);
        assert_string_equal(strbuf_str(&p),
                            i == 0   ? "/openapi/v3 /slurm/v0.0.38/partitions /slurm/v0.0.38/nodes "
                                       "/slurm/v0.0.38/job/submit"
                            : i == 1 ? "/slurm/v0.0.38/job/submit"
                                     : "/slurm/v0.0.38/partitions /slurm/v0.0.38/nodes "
                                       "/slurm/v0.0.38/job/submit");
        strbuf_free(&p);
        jobspec_free(&out);
        jobspec_free(&job);
        backend_free(b);
        fake_free(&f);
    }
}

/* ---- authentication --------------------------------------------------------- */

static void a_refused_token_is_authentication_failed(void **state)
{
    (void)state;
    struct fake f = {0};
    fake_answer(&f, 200, fixture_text("openapi-22.05-paths.json"));
    fake_answer(&f, 500, fixture_text("error-bad-token.json"));
    struct backend *b = open_fake(&f, NULL);
    struct job_list l;
    struct api_error e;
    assert_int_equal(backend_list(b, NULL, &l, &e), BACKEND_REJECTED);
    assert_non_null(strstr(e.message, "authentication failed"));
    assert_non_null(strstr(e.message, "context 'lab'"));
    assert_non_null(strstr(e.message, "token_file"));
    assert_int_equal(f.calls, 2); /* a token file is not read again */
    assert_string_equal(f.path[1], "/slurm/v0.0.38/jobs");
    backend_free(b);
    fake_free(&f);
}

static void an_expired_token_is_fetched_again_once(void **state)
{
    (void)state;
    char *count = xasprintf("%s/runs", tmpdir);
    char *cmd = script_command(
        "tok.sh", xasprintf("echo x >> '%s'\necho SLURM_JWT=eyJ.fresh.token\n", count));

    struct fake f = {0};
    fake_answer(&f, 200, fixture_text("openapi-22.05-paths.json"));
    fake_answer(&f, 500, fixture_text("error-bad-token.json"));
    fake_answer(&f, 200, xstrdup("{\"errors\": [], \"jobs\": []}"));
    struct backend *b = open_fake(&f, cmd);
    struct job_list l;
    struct api_error e;
    assert_int_equal(backend_list(b, NULL, &l, &e), BACKEND_OK);
    assert_int_equal(l.count, 0);
    job_list_free(&l);
    assert_int_equal(f.calls, 3);
    struct stat st;
    assert_int_equal(stat(count, &st), 0);
    assert_int_equal(st.st_size, 4); /* run twice: at first use, and after the refusal */
    backend_free(b);
    fake_free(&f);

    /* Refused again after the fresh token: failed, not a loop. */
    struct fake g = {0};
    fake_answer(&g, 200, fixture_text("openapi-22.05-paths.json"));
    fake_answer(&g, 500, fixture_text("error-bad-token.json"));
    b = open_fake(&g, cmd);
    assert_int_equal(backend_list(b, NULL, &l, &e), BACKEND_REJECTED);
    assert_non_null(strstr(e.message, "authentication failed"));
    assert_int_equal(g.calls, 3);
    backend_free(b);
    fake_free(&g);

    /* A real Slurm rejection (its own error number) is not an authentication failure. */
    struct fake h = {0};
    fake_answer(&h, 200, fixture_text("openapi-22.05-paths.json"));
    fake_answer(&h, 500, fixture_text("submit-error-qos-not-allowed.json"));
    b = open_fake(&h, NULL);
    assert_int_equal(backend_list(b, NULL, &l, &e), BACKEND_REJECTED);
    assert_null(strstr(e.message, "authentication failed"));
    assert_non_null(strstr(e.message, "2066"));
    backend_free(b);
    fake_free(&h);
    free(cmd);
    free(count);
}

/* ---- jobs by their directory ---------------------------------------------- */

/* default/NAME under the test's jobs directory, empty; returns its path (caller frees). */
static char *empty_job_dir(const char *name)
{
    char *ws = xasprintf("%s/default", tmpdir);
    char *dir = xasprintf("%s/%s", ws, name);
    mkdir(ws, 0755);
    assert_int_equal(mkdir(dir, 0755), 0);
    put_mark(dir);
    free(ws);
    return dir;
}

static void mkjobdir(const char *name)
{
    char *d = xasprintf("%s/default", tmpdir);
    mkdir(d, 0755);
    free(d);
    d = xasprintf("%s/default/%s", tmpdir, name);
    mkdir(d, 0755);
    put_mark(d);
    char *p = xasprintf("%s/job.json", d);
    FILE *f = fopen(p, "w");
    fprintf(f,
            "{\"name\": \"%s\", \"display_name\": \"shown\", \"framework\": \"PYTORCH_DDP\","
            " \"roles\": [{\"name\": \"Worker\", \"total_replicas\": 2}]}",
            name);
    fclose(f);
    free(p);
    free(d);
}

static void jobs_are_known_by_their_directory(void **state)
{
    (void)state;
    mkjobdir("ddp");
    struct fake f = {0};
    fake_answer(&f, 200, fixture_text("openapi-22.05-paths.json"));
    /* One job of ours, one elsewhere: only ours is listed, and get finds it. */
    char *ours = jobs_reply("job-running.json", "ddp", 4);
    json_t *doc = json_loads(ours, 0, NULL);
    free(ours);
    json_t *other = json_deep_copy(json_array_get(json_object_get(doc, "jobs"), 0));
    json_object_set_new(other, "current_working_directory", json_string("/home/x"));
    json_array_append_new(json_object_get(doc, "jobs"), other);
    fake_answer(&f, 200, json_dumps(doc, JSON_COMPACT));
    json_decref(doc);
    struct backend *b = open_fake(&f, NULL);
    struct job_list l;
    struct api_error e;
    assert_int_equal(backend_list(b, NULL, &l, &e), BACKEND_OK);
    assert_int_equal(l.count, 1);
    assert_string_equal(l.jobs[0].name, "ddp");
    assert_string_equal(l.jobs[0].display_name, "shown"); /* from job.json */
    assert_string_equal(l.jobs[0].id, "4");
    assert_int_equal(l.jobs[0].state, JOB_STATE_RUNNING);
    job_list_free(&l);
    assert_int_equal(f.calls, 2); /* the version once, then one GET /jobs per list */
    struct list_query q = {0};
    q.filter = "state='RUNNING' AND user_name='trainjob'";
    assert_int_equal(backend_list(b, &q, &l, &e), BACKEND_OK);
    assert_int_equal(l.count, 1);
    job_list_free(&l);
    q.filter = "state='SUCCEEDED'";
    assert_int_equal(backend_list(b, &q, &l, &e), BACKEND_OK);
    assert_int_equal(l.count, 0);
    job_list_free(&l);
    q.filter = "priority='HIGH'";
    assert_int_equal(backend_list(b, &q, &l, &e), BACKEND_REJECTED);
    assert_int_equal(e.status, 400);

    struct worker_list w;
    assert_int_equal(backend_workers(b, "ddp", &w, &e), BACKEND_OK);
    assert_int_equal(w.count, 2); /* from the allocation: no records yet */
    assert_string_equal(w.workers[0].name, "master-0");
    assert_string_equal(w.workers[0].node_name, "n1");
    assert_string_equal(w.workers[1].name, "worker-0");
    assert_string_equal(w.workers[1].devices, "0-1");
    worker_list_free(&w);
    /* Steps start one by one: with master-0's record only, worker-0 still shows, starting. */
    char *wd = xasprintf("%s/default/ddp/workers", tmpdir);
    char *rec = xasprintf("%s/master-0.json", wd);
    mkdir(wd, 0755);
    write_file(rec, "{\"name\": \"master-0\", \"index\": 0, \"node\": \"n1\", "
                    "\"phase\": \"Running\", \"restarts\": 0}");
    assert_int_equal(backend_workers(b, "ddp", &w, &e), BACKEND_OK);
    assert_int_equal(w.count, 2);
    assert_string_equal(w.workers[0].name, "master-0");
    assert_int_equal(w.workers[0].phase, WORKER_RUNNING);
    assert_string_equal(w.workers[1].name, "worker-0");
    assert_string_equal(w.workers[1].node_name, "n2");
    assert_int_equal(w.workers[1].phase, WORKER_PENDING);
    worker_list_free(&w);
    free(rec);
    free(wd);

    struct jobspec j;
    assert_int_equal(backend_get(b, "../etc", &j, &e), BACKEND_REJECTED);
    assert_int_equal(e.status, 400);
    jobspec_free(&j);
    assert_int_equal(backend_get(b, "nope", &j, &e), BACKEND_REJECTED);
    assert_int_equal(e.status, 404);
    jobspec_free(&j);
    /* the workers of a job neither Slurm nor the jobs directory has: not found, named */
    assert_int_equal(backend_workers(b, "nope", &w, &e), BACKEND_REJECTED);
    assert_int_equal(e.status, 404);
    assert_non_null(strstr(e.message, "'nope'"));
    worker_list_free(&w);
    backend_free(b);
    fake_free(&f);
}

/*
 * The supervisor's state events say the state they reach ("state", else
 * their reason): the history reads QUEUEING → RUNNING → SUCCEEDED, never
 * → STATE_UNSPECIFIED.
 */
static void state_events_name_the_state_they_reach(void **state)
{
    (void)state;
    const char *lines =
        "{\"time\":\"2026-01-01T00:00:00Z\",\"type\":\"Normal\",\"reason\":\"Submitted\","
        "\"message\":\"submitted as Slurm job 4\"}\n"
        "{\"time\":\"2026-01-01T00:00:01Z\",\"type\":\"Normal\",\"reason\":\"Running\","
        "\"kind\":\"STATE\",\"message\":\"QUEUEING → RUNNING\",\"state\":\"RUNNING\"}\n"
        "{\"time\":\"2026-01-01T00:00:02Z\",\"type\":\"Normal\",\"reason\":\"Succeeded\","
        "\"kind\":\"STATE\",\"message\":\"job succeeded: every worker exited 0\"}\n"
        "{\"time\":\"2026-01-01T00:00:03Z\",\"type\":\"Warning\",\"reason\":\"Failed\","
        "\"kind\":\"STATE\",\"message\":\"job failed: master-0 exited 3\"}\n"
        "{\"time\":\"2026-01-01T00:00:04Z\",\"type\":\"Normal\",\"reason\":\"Running\","
        "\"kind\":\"STATE\",\"message\":\"x\",\"state\":\"NOT_A_STATE\"}\n";
    struct job_event_list l;
    assert_int_equal(slurm_events_parse(lines, strlen(lines), false, "ddp", &l), 5);
    assert_int_equal(l.events[0].kind, EVENT_CREATED);
    assert_int_equal(l.events[1].kind, EVENT_STATE);
    assert_int_equal(l.events[1].state, JOB_STATE_RUNNING);
    assert_int_equal(l.events[2].state, JOB_STATE_SUCCEEDED);
    assert_int_equal(l.events[3].state, JOB_STATE_FAILED);
    assert_int_equal(l.events[4].state, JOB_STATE_RUNNING); /* an unknown "state": the reason's */
    /* each change is said as trainjobd says it, the history ending in the final state */
    assert_string_equal(l.events[1].message, "QUEUEING → RUNNING");
    assert_string_equal(l.events[2].message, "RUNNING → SUCCEEDED: every worker exited 0");
    assert_string_equal(l.events[3].message, "SUCCEEDED → FAILED: master-0 exited 3");
    job_event_list_free(&l);
    /* read from inside the file (cut): the state before the first change is not known */
    const char *tail = "{\"reason\":\"Submitted\",\"message\":\"x\"}\n"
                       "{\"reason\":\"Succeeded\",\"kind\":\"STATE\","
                       "\"message\":\"job succeeded: every worker exited 0\"}\n";
    assert_int_equal(slurm_events_parse(tail, strlen(tail), true, "ddp", &l), 1);
    assert_string_equal(l.events[0].message, "→ SUCCEEDED: every worker exited 0");
    job_event_list_free(&l);
}

/*
 * A job as the list shows it, as trainjobd's: ready workers 0 of 2 while it
 * waits (not unknown), the priority its QOS stands for in the context's qos:
 * map (NORMAL when no key names it), its creation from the directory's mark
 * (a start submits again: Slurm's submit time is the run's), its Slurm id.
 */
static void a_listed_job_has_ready_workers_priority_and_its_creation(void **state)
{
    (void)state;
    fake_qos = json_pack("{s:s, s:s}", "HIGH", "high", "IDLE_HIGH", "idle_high");
    mkjobdir("wait");
    char *mark = xasprintf("%s/default/wait/mark", tmpdir);
    struct timespec made[2] = {{1795900000, 0}, {1795900000, 0}};
    assert_int_equal(utimensat(AT_FDCWD, mark, made, 0), 0);
    free(mark);
    char *t = jobs_reply("job-pending-qos-not-allowed.json", "wait", 9);
    json_t *doc = json_loads(t, 0, NULL);
    free(t);
    json_object_set_new(json_array_get(json_object_get(doc, "jobs"), 0), "qos",
                        json_string("high"));
    struct fake f = {0};
    fake_answer(&f, 200, fixture_text("openapi-22.05-paths.json"));
    fake_answer(&f, 200, json_dumps(doc, JSON_COMPACT));
    struct backend *b = open_fake(&f, NULL);
    struct job_list l;
    struct api_error e;
    assert_int_equal(backend_list(b, NULL, &l, &e), BACKEND_OK);
    assert_int_equal(l.count, 1);
    assert_int_equal(l.jobs[0].state, JOB_STATE_QUEUEING);
    assert_true(l.jobs[0].has_ready_workers);
    assert_int_equal(l.jobs[0].ready_workers, 0);
    assert_int_equal(l.jobs[0].scheduling.priority, PRIORITY_HIGH);
    assert_int_equal(time_parse_rfc3339(l.jobs[0].create_time), 1795900000000LL);
    assert_string_equal(jobspec_scheduler_id(&l.jobs[0]), "9");
    job_list_free(&l);

    /* A QOS the map does not name: the job's own priority, else NORMAL. */
    json_object_set_new(json_array_get(json_object_get(doc, "jobs"), 0), "qos",
                        json_string("normal"));
    driver(b)->jobs_at = 0;
    fake_answer(&f, 200, json_dumps(doc, JSON_COMPACT));
    assert_int_equal(backend_list(b, NULL, &l, &e), BACKEND_OK);
    assert_int_equal(l.count, 1);
    assert_int_equal(l.jobs[0].scheduling.priority, PRIORITY_NORMAL);
    job_list_free(&l);
    json_decref(doc);
    json_decref(fake_qos);
    fake_qos = NULL;
    backend_free(b);
    fake_free(&f);
}

/*
 * A job Slurm no longer reports (MinJobAge) whose workers' records do not say
 * how it ended: its events do. Stopped with trainjob stop while it waited, or
 * by Slurm under a running worker (the supervisor's Stopping): stopped, as a
 * cancelled Slurm job is (SUSPENDED); started again after a stop, or only
 * ever submitted: unknown, as before.
 */
static void a_forgotten_job_ends_as_its_events_say(void **state)
{
    (void)state;
    static const char *const sub =
        "{\"time\":\"2026-01-01T00:00:00Z\",\"type\":\"Normal\",\"reason\":\"Submitted\","
        "\"message\":\"submitted as Slurm job 7\"}\n";
    static const char *const stop =
        "{\"time\":\"2026-01-01T00:01:00Z\",\"type\":\"Normal\",\"reason\":\"Stopped\","
        "\"message\":\"stopped by alice: Slurm job 7 cancelled\"}\n";
    static const char *const stopping =
        "{\"time\":\"2026-01-01T00:02:00Z\",\"type\":\"Normal\",\"reason\":\"Stopping\","
        "\"kind\":\"STOPPED\",\"message\":\"the job was stopped by Slurm\"}\n";
    static const char *const again =
        "{\"time\":\"2026-01-01T00:03:00Z\",\"type\":\"Normal\",\"reason\":\"Started\","
        "\"message\":\"started again as Slurm job 8\"}\n";
    const struct {
        const char *name;
        const char *events[3];
        bool running_worker;
    } jobs[] = {
        {"stopped", {sub, stop, NULL}, false},
        {"killed", {sub, stopping, NULL}, true},
        {"again", {sub, stop, again}, false},
        {"lost", {sub, NULL, NULL}, false},
    };
    for (size_t i = 0; i < sizeof jobs / sizeof jobs[0]; i++) {
        mkjobdir(jobs[i].name);
        struct strbuf ev = STRBUF_INIT;
        for (size_t k = 0; k < 3 && jobs[i].events[k]; k++)
            strbuf_adds(&ev, jobs[i].events[k]);
        char *p = xasprintf("%s/default/%s/events.jsonl", tmpdir, jobs[i].name);
        write_file(p, strbuf_str(&ev));
        free(p);
        strbuf_free(&ev);
        if (jobs[i].running_worker) {
            p = xasprintf("%s/default/%s/workers", tmpdir, jobs[i].name);
            mkdir(p, 0755);
            free(p);
            p = xasprintf("%s/default/%s/workers/master-0.json", tmpdir, jobs[i].name);
            write_file(p, "{\"name\":\"master-0\",\"index\":0,\"node\":\"n1\",\"phase\":"
                          "\"Running\",\"restarts\":0,\"exit_code\":null,\"signal\":null,"
                          "\"rule\":null,\"started\":\"2026-01-01T00:01:30Z\",\"ended\":null,"
                          "\"attempt\":1}\n");
            free(p);
        }
    }
    char *t = fixture_text("job-running.json");
    json_t *doc = json_loads(t, 0, NULL);
    free(t);
    json_object_set_new(doc, "jobs", json_array()); /* Slurm has forgotten them all */
    struct fake f = {0};
    fake_answer(&f, 200, fixture_text("openapi-22.05-paths.json"));
    fake_answer(&f, 200, json_dumps(doc, JSON_COMPACT));
    json_decref(doc);
    char *paths = NULL, *rows = list_rows(&f, &paths);
    /* (in the directory's order) */
    static const char *const want[] = {"again STATE_UNSPECIFIED;", "killed SUSPENDED;",
                                       "lost STATE_UNSPECIFIED;", "stopped SUSPENDED;"};
    size_t len = 0;
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        if (strstr(rows, want[i]) == NULL)
            fail_msg("no '%s' in: %s", want[i], rows);
        len += strlen(want[i]);
    }
    assert_int_equal(strlen(rows), len);
    free(rows);
    free(paths);
    fake_free(&f);

    /* and says where that came from */
    struct fake f2 = {0};
    fake_answer(&f2, 200, fixture_text("openapi-22.05-paths.json"));
    fake_answer(&f2, 200, xstrdup("{\"jobs\":[]}"));
    struct backend *b = open_fake(&f2, NULL);
    struct jobspec job;
    struct api_error e;
    assert_int_equal(backend_get(b, "stopped", &job, &e), BACKEND_OK);
    assert_int_equal(job.state, JOB_STATE_SUSPENDED);
    assert_string_equal(job.state_message,
                        "stopped (from its events: Slurm no longer reports the job)");
    jobspec_free(&job);
    backend_free(b);
    fake_free(&f2);
}

/* ---- hostile job directories ---------------------------------------------- */

static void hostile_events_are_bounded_checked_and_sanitized(void **state)
{
    (void)state;
    mkjobdir("evil");
    char *p = xasprintf("%s/default/evil/events.jsonl", tmpdir);
    FILE *f = fopen(p, "w");
    /* 40 MB of events: only the tail is read, at most 2000 kept. */
    for (int i = 0; i < 200000; i++)
        fprintf(f,
                "{\"time\":\"2026-01-01T00:00:00Z\",\"type\":\"Normal\",\"reason\":\"Started\","
                "\"message\":\"line %d %0150d\"}\n",
                i, 0);
    fputs("not json\n", f);
    fputs("[1,2,3]\n", f);
    fputs("{\"reason\": 5, \"message\": {\"x\": 1}}\n", f);
    fputs("{\"reason\":\"RestartPod\",\"message\":\"\\u001b[2J\\u001b]0;title\\u0007cleared "
          "\\u200b\",\"worker\":\"\\u001b[31mw\",\"exit_code\":\"201\",\"rule\":1}\n",
          f);
    fclose(f);
    free(p);
    struct fake f2 = {0};
    fake_answer(&f2, 200, xstrdup("{}"));
    struct backend *b = open_fake(&f2, NULL);
    struct job_event_list ev;
    struct api_error e;
    assert_int_equal(backend_events(b, "evil", &ev, &e), BACKEND_OK);
    assert_true(ev.count > 100 && ev.count <= 2000);
    const struct job_event *last = &ev.events[ev.count - 1];
    assert_int_equal(last->kind, EVENT_FAULT);
    assert_null(strchr(last->message, '\x1b'));
    assert_null(strchr(last->message, '\x07'));
    assert_non_null(strstr(last->message, "cleared"));
    assert_non_null(strstr(last->message, "\\u200b")); /* invisible characters shown */
    assert_null(strchr(last->worker, '\x1b'));
    assert_false(last->has_exit_code); /* "201" is a string, not an exit code */
    assert_true(last->has_rule);
    job_event_list_free(&ev);
    backend_free(b);
    fake_free(&f2);
}

static void hostile_worker_records_and_symlinks(void **state)
{
    (void)state;
    mkjobdir("w");
    char *d = xasprintf("%s/default/w/workers", tmpdir);
    mkdir(d, 0755);
    char *p = xasprintf("%s/master-0.json", d);
    write_file(p, "{\"name\":\"master-0\",\"index\":0,\"node\":\"n1\\u001b[2J\",\"phase\":"
                  "\"Failed\",\"restarts\":2,\"exit_code\":201,\"signal\":null,\"rule\":"
                  "\"rule 1: exit 201 -> RESTART_POD\"}");
    free(p);
    p = xasprintf("%s/worker-0.json", d);
    write_file(p, "{\"name\":\"../../etc\",\"phase\":\"Running\"}"); /* no worker name */
    free(p);
    p = xasprintf("%s/worker-1.json", d);
    write_file(p, "{\"name\":\"worker-1\",\"restarts\":\"many\",\"exit_code\":999,"
                  "\"phase\":\"Exploded\"}");
    free(p);
    p = xasprintf("%s/worker-2.json", d);
    assert_int_equal(symlink("/etc/passwd", p), 0); /* never followed */
    free(p);
    free(d);
    /* logs/ as a symlink out of the job directory: no log is read through it. */
    d = xasprintf("%s/default/w/logs", tmpdir);
    assert_int_equal(symlink("/etc", d), 0);
    free(d);

    struct fake f = {0};
    fake_job_running(&f, "w", 9);
    struct backend *b = open_fake(&f, NULL);
    struct worker_list w;
    struct api_error e;
    assert_int_equal(backend_workers(b, "w", &w, &e), BACKEND_OK);
    /* worker-0's record names no worker: the allocation's worker-0 stands for it */
    assert_int_equal(w.count, 3);
    assert_string_equal(w.workers[0].name, "master-0");
    assert_null(strchr(w.workers[0].node_name, '\x1b'));
    assert_int_equal(w.workers[0].phase, WORKER_FAILED);
    assert_int_equal(w.workers[0].restarts, 2);
    assert_int_equal(w.workers[0].exit_code, 201);
    assert_non_null(strstr(w.workers[0].exit_reason, "RESTART_POD"));
    assert_string_equal(w.workers[1].name, "worker-0");
    assert_int_equal(w.workers[1].phase, WORKER_PENDING);
    assert_string_equal(w.workers[2].name, "worker-1");
    assert_false(w.workers[2].has_restarts);
    assert_false(w.workers[2].has_exit_code);
    assert_string_equal(w.workers[2].phase_other, "Exploded");
    worker_list_free(&w);

    struct strbuf sink = STRBUF_INIT;
    assert_int_equal(backend_logs(b, "w", "passwd", -1, false, NULL, &sink, &e), BACKEND_REJECTED);
    assert_int_equal(e.status, 404);
    assert_int_equal(backend_logs(b, "w", "../x", -1, false, NULL, &sink, &e), BACKEND_REJECTED);
    assert_int_equal(e.status, 400);
    strbuf_free(&sink);
    backend_free(b);
    fake_free(&f);
}

static void a_job_json_symlink_is_not_followed(void **state)
{
    (void)state;
    mkjobdir("s");
    char *secret = xasprintf("%s/secret.json", tmpdir);
    write_file(secret, "{\"name\": \"s\", \"display_name\": \"LEAKED\"}");
    char *p = xasprintf("%s/default/s/job.json", tmpdir);
    unlink(p);
    assert_int_equal(symlink(secret, p), 0);
    struct fake f = {0};
    fake_job_running(&f, "s", 3);
    struct backend *b = open_fake(&f, NULL);
    struct jobspec j;
    struct api_error e;
    assert_int_equal(backend_get(b, "s", &j, &e), BACKEND_OK);
    assert_string_equal(j.name, "s");
    assert_null(j.display_name); /* the file behind the symlink was not read */
    jobspec_free(&j);
    backend_free(b);
    fake_free(&f);
    free(p);
    free(secret);
}

static void a_refused_submit_leaves_no_directory(void **state)
{
    (void)state;
    struct fake f = {0};
    fake_catalog(&f);
    fake_answer(&f, 500,
                xstrdup("{\"errors\": [{\"error_number\": 2014, \"error\": \"Requested node "
                        "configuration is not available\"}]}"));
    fake_answer(&f, 200, xstrdup("{\"errors\": [], \"jobs\": []}")); /* nothing queued */
    struct backend *b = open_fake(&f, NULL);
    struct jobspec job, out;
    jobspec_init(&job);
    job.name = xstrdup("big");
    job.resource_pool.present = true;
    job.resource_pool.name = xstrdup("standard");
    struct role *r = jobspec_add_role(&job);
    r->name = xstrdup("Worker");
    r->has_total_replicas = true;
    r->total_replicas = 4;
    r->startup_script = xstrdup("true");
    role_add_spec(r)->name = xstrdup("gpu-8");
    struct api_error e;
    assert_int_equal(backend_create(b, &job, &out, &e), BACKEND_REJECTED);
    assert_non_null(strstr(e.message, "2014"));
    assert_string_equal(f.path[3], "/slurm/v0.0.38/job/submit");
    assert_string_equal(f.path[4], "/slurm/v0.0.38/jobs"); /* was it queued all the same? */
    char *dir = xasprintf("%s/default/big", tmpdir);
    struct stat st;
    assert_int_equal(lstat(dir, &st), -1); /* the name is free again */
    free(dir);
    jobspec_free(&out);
    jobspec_free(&job);
    backend_free(b);
    fake_free(&f);
}

/* A job for create: 1 replica of gpu-1 in the standard partition. */
static void small_job(struct jobspec *job, const char *name)
{
    jobspec_init(job);
    job->name = xstrdup(name);
    job->resource_pool.present = true;
    job->resource_pool.name = xstrdup("standard");
    struct role *r = jobspec_add_role(job);
    r->name = xstrdup("Worker");
    r->has_total_replicas = true;
    r->total_replicas = 1;
    r->startup_script = xstrdup("true");
    role_add_spec(r)->name = xstrdup("gpu-1");
}

/* create checks the name by its job directory (mkdir, O_EXCL): never a list of every job. */
static void create_checks_the_name_by_its_directory(void **state)
{
    (void)state;
    char *ws = xasprintf("%s/default", tmpdir);
    char *taken = xasprintf("%s/default/taken", tmpdir);
    assert_int_equal(mkdir(ws, 0755), 0);
    assert_int_equal(mkdir(taken, 0755), 0);
    struct fake f = {0};
    fake_catalog(&f);
    /* within a second the catalog is not read again: the next call is the submit */
    fake_answer(&f, 200, xstrdup("{\"errors\": [], \"job_id\": 77}"));
    struct backend *b = open_fake(&f, NULL);
    struct jobspec job, out;
    small_job(&job, "taken");
    struct api_error e;
    assert_int_equal(backend_create(b, &job, &out, &e), BACKEND_REJECTED);
    assert_int_equal(e.status, 409);
    assert_non_null(strstr(e.message, "already used in workspace default"));
    for (size_t i = 0; i < f.calls; i++) /* no GET /jobs, no submit */
        assert_null(strstr(f.path[i], "/jobs"));
    assert_int_equal(f.calls, 3);
    jobspec_free(&out);
    jobspec_free(&job);
    /* A free name: made, submitted. */
    small_job(&job, "fresh");
    enum backend_status cst = backend_create(b, &job, &out, &e);
    if (cst != BACKEND_OK)
        fail_msg("%s", e.message);
    assert_string_equal(out.id, "77");
    assert_int_equal(f.calls, 4);
    assert_string_equal(f.path[f.calls - 1], "/slurm/v0.0.38/job/submit");
    char *made = xasprintf("%s/default/fresh/job.json", tmpdir);
    struct stat st;
    assert_int_equal(lstat(made, &st), 0);
    free(made);
    jobspec_free(&out);
    jobspec_free(&job);
    backend_free(b);
    fake_free(&f);
    free(ws);
    free(taken);
}

/* GET /jobs is incremental: once a second at most, then ?update_time= (304: nothing changed). */
static void lists_ask_only_what_changed(void **state)
{
    (void)state;
    char *dir = empty_job_dir("s");
    struct fake f = {0};
    fake_job_running(&f, "s", 3);
    fake_answer(&f, 304, xstrdup(""));
    struct backend *b = open_fake(&f, NULL);
    struct job_list l;
    struct api_error e;
    assert_int_equal(backend_list(b, NULL, &l, &e), BACKEND_OK);
    assert_int_equal(l.count, 1);
    job_list_free(&l);
    assert_int_equal(f.calls, 2);
    assert_string_equal(f.path[1], "/slurm/v0.0.38/jobs");
    /* A job screen's refresh (get, list) within the second: no call. */
    struct jobspec j;
    assert_int_equal(backend_get(b, "s", &j, &e), BACKEND_OK);
    jobspec_free(&j);
    assert_int_equal(backend_list(b, NULL, &l, &e), BACKEND_OK);
    job_list_free(&l);
    assert_int_equal(f.calls, 2);
    usleep(1100 * 1000);
    /* Later: only what changed since the last full reply; 304 keeps the jobs known. */
    assert_int_equal(backend_list(b, NULL, &l, &e), BACKEND_OK);
    assert_int_equal(f.calls, 3);
    assert_non_null(strstr(f.path[2], "/slurm/v0.0.38/jobs?update_time="));
    long long since = atoll(strchr(f.path[2], '=') + 1);
    long long now = time_now_ms() / 1000;
    assert_true(since >= now - 5 && since < now);
    assert_int_equal(l.count, 1);
    assert_string_equal(l.jobs[0].name, "s");
    job_list_free(&l);
    backend_free(b);
    fake_free(&f);
    free(dir);
}

struct batch_on_loop {
    bool done;
    enum backend_status st;
    char result[64];
    char message[1024];
};

static void batch_reply(void *ctx, struct backend_reply *r)
{
    struct batch_on_loop *o = ctx;
    o->done = true;
    o->st = r->status;
    snprintf(o->message, sizeof o->message, "%s", r->err.message);
    if (r->batch.count)
        snprintf(o->result, sizeof o->result, "%s", r->batch.items[0].result);
}

static void send_on_loop(struct backend *b, enum backend_op op, const char *name,
                         struct batch_on_loop *o)
{
    struct loop *lp = loop_new();
    struct http_multi *m = http_multi_new(lp);
    const char *names[] = {name};
    struct backend_request rq = {.op = op, .names = names, .count = 1};
    backend_send(b, m, &rq, batch_reply, NULL, NULL, o);
    int64_t deadline = time_now_ms() + 20000;
    while (!o->done && time_now_ms() < deadline)
        loop_run_once(lp, 100);
    assert_true(o->done);
    http_multi_free(m);
    loop_free(lp);
}

/* stop and delete on the loop: each request made once, one event naming who stopped, a wait on
 * the loop's timer. */
static void stop_and_delete_on_the_loop(void **state)
{
    (void)state;
    char *dir = empty_job_dir("s");
    char *events = xasprintf("%s/default/s/events.jsonl", tmpdir);
    struct fake f = {0};
    fake_job_running(&f, "s", 3);
    fake_answer(&f, 200, xstrdup("{\"errors\": []}"));
    struct backend *b = open_fake(&f, NULL);
    struct batch_on_loop o = {0};
    send_on_loop(b, BACKEND_OP_STOP, "s", &o);
    assert_int_equal(o.st, BACKEND_OK);
    assert_string_equal(o.result, "STOPPING");
    assert_int_equal(f.calls, 3);
    assert_string_equal(f.path[2], "/slurm/v0.0.38/job/3");
    /* The event is written once, though the stop ran three times on the loop. */
    FILE *fp = fopen(events, "r");
    assert_non_null(fp);
    char line[1024];
    int stopped = 0, by_me = 0;
    /* It names who asked: the user this process runs as. */
    struct passwd *pw = getpwuid(getuid());
    assert_non_null(pw);
    char *said = xasprintf("\"stopped by %s: Slurm job 3 cancelled", pw->pw_name);
    while (fgets(line, sizeof line, fp)) {
        stopped += strstr(line, "\"Stopped\"") != NULL;
        by_me += strstr(line, said) != NULL;
    }
    fclose(fp);
    free(said);
    assert_int_equal(stopped, 1);
    assert_int_equal(by_me, 1);
    backend_free(b);
    fake_free(&f);

    /* delete: cancel, then GET job/3 until it ended (200 ms apart on the loop), then the dir. */
    struct fake g = {0};
    fake_job_running(&g, "s", 3);
    fake_answer(&g, 200, xstrdup("{\"errors\": []}"));
    fake_answer(&g, 200, jobs_reply("job-running.json", "s", 3));
    fake_answer(&g, 200, jobs_reply("job-running.json", "s", 3));
    fake_answer(&g, 200, jobs_reply("job-completed.json", "s", 3));
    b = open_fake(&g, NULL);
    struct batch_on_loop d = {0};
    int64_t t0 = time_now_ms();
    send_on_loop(b, BACKEND_OP_DELETE, "s", &d);
    assert_int_equal(d.st, BACKEND_OK);
    assert_string_equal(d.result, "DELETING");
    assert_true(time_now_ms() - t0 >= 400); /* two waits of 200 ms */
    assert_string_equal(g.path[2], "/slurm/v0.0.38/job/3");
    size_t gets = 0;
    for (size_t i = 3; i < g.calls; i++)
        gets += strcmp(g.path[i], "/slurm/v0.0.38/job/3") == 0;
    assert_int_equal(gets, 3);
    struct stat st;
    assert_int_equal(lstat(dir, &st), -1);
    backend_free(b);
    fake_free(&g);
    free(events);
    free(dir);
}

/*
 * A cancelled job still running after the wait keeps its directory: removing
 * it would leave its supervisor writing nowhere, a job no list shows. A job
 * slurmctld no longer knows (error 2017, with HTTP 500) has ended.
 */
static void delete_keeps_a_job_that_has_not_ended(void **state)
{
    (void)state;
    char *dir = empty_job_dir("s");
    struct fake f = {0};
    fake_job_running(&f, "s", 3);
    fake_answer(&f, 200, xstrdup("{\"errors\": []}"));
    fake_answer(&f, 200, jobs_reply("job-running.json", "s", 3)); /* and so on */
    struct backend *b = open_fake(&f, NULL);
    slurm_backend_set_delete_wait(b, 1000);
    const char *names[] = {"s"};
    struct batch_result r;
    struct api_error e;
    assert_int_equal(backend_delete(b, names, 1, &r, &e), BACKEND_REJECTED);
    assert_int_equal(e.status, 409);
    assert_non_null(strstr(e.message, "Slurm job 3 was cancelled but has not ended after 1 s"));
    assert_non_null(strstr(e.message, "run delete again"));
    struct stat st;
    assert_int_equal(lstat(dir, &st), 0);
    assert_true(f.calls >= 5); /* it did ask again meanwhile */
    backend_free(b);
    fake_free(&f);

    struct fake g = {0};
    fake_job_running(&g, "s", 3);
    fake_answer(&g, 200, xstrdup("{\"errors\": []}"));
    fake_answer(&g, 500,
                xstrdup("{\"errors\": [{\"description\": \"Unable to find JobId=3\", "
                        "\"error_number\": 2017, \"error\": \"Invalid job id specified\"}], "
                        "\"jobs\": []}"));
    b = open_fake(&g, NULL);
    assert_int_equal(backend_delete(b, names, 1, &r, &e), BACKEND_OK);
    assert_int_equal(r.count, 1);
    assert_string_equal(r.items[0].result, "DELETING");
    batch_result_free(&r);
    assert_int_equal(lstat(dir, &st), -1);
    assert_int_equal(g.calls, 4);
    backend_free(b);
    fake_free(&g);
    free(dir);
}

/* Runs stderr into a file during one list; returns what was written. */
static char *list_stderr(struct backend *b, enum backend_status *st, struct api_error *e)
{
    char *path = xasprintf("%s/stderr", tmpdir);
    fflush(stderr);
    int saved = dup(2);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(fd, 2);
    close(fd);
    struct job_list l;
    *st = backend_list(b, NULL, &l, e);
    if (*st == BACKEND_OK)
        job_list_free(&l);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    FILE *fp = fopen(path, "r");
    char buf[2048] = "";
    size_t n = fread(buf, 1, sizeof buf - 1, fp);
    buf[n] = '\0';
    fclose(fp);
    free(path);
    return xstrdup(buf);
}

/* token_file: a symlink or a FIFO is refused naming the file; readable by others is warned once. */
static void token_file_is_checked_like_a_key(void **state)
{
    (void)state;
    struct fake f = {0};
    fake_answer(&f, 200, fixture_text("openapi-22.05-paths.json"));
    fake_answer(&f, 200, xstrdup("{\"errors\": [], \"jobs\": []}"));
    enum backend_status st;
    struct api_error e;

    chmod(token_file, 0644);
    struct backend *b = open_fake(&f, NULL);
    char *said = list_stderr(b, &st, &e);
    assert_int_equal(st, BACKEND_OK);
    assert_non_null(strstr(said, token_file));
    assert_non_null(strstr(said, "mode 0644"));
    free(said);
    backend_free(b);
    b = open_fake(&f, NULL); /* a new backend reads it again: warned again, once */
    said = list_stderr(b, &st, &e);
    char *again = list_stderr(b, &st, &e);
    assert_non_null(strstr(said, "readable by others"));
    assert_string_equal(again, ""); /* the token is in use: not read, not said again */
    free(said);
    free(again);
    backend_free(b);

    /* A symlink to a good file is refused, naming the file. */
    char *real = xasprintf("%s/real-token", tmpdir);
    assert_int_equal(rename(token_file, real), 0);
    chmod(real, 0600);
    assert_int_equal(symlink(real, token_file), 0);
    b = open_fake(&f, NULL);
    said = list_stderr(b, &st, &e);
    assert_int_equal(st, BACKEND_REJECTED);
    assert_non_null(strstr(e.message, "is a symlink; refused"));
    assert_non_null(strstr(e.message, token_file));
    free(said);
    backend_free(b);

    /* A FIFO (a read would block) is refused, naming the file. */
    unlink(token_file);
    assert_int_equal(mkfifo(token_file, 0600), 0);
    b = open_fake(&f, NULL);
    said = list_stderr(b, &st, &e);
    assert_int_equal(st, BACKEND_REJECTED);
    assert_non_null(strstr(e.message, "is not a regular file; refused"));
    free(said);
    backend_free(b);
    free(real);
    fake_free(&f);
}

/* A hanging token_command is killed after 10 s, with its group; the error names it. */
static void a_hanging_token_command_times_out(void **state)
{
    (void)state;
    char *pidfile = xasprintf("%s/child.pid", tmpdir);
    /* The command starts a grandchild in its group: both must go. */
    char *cmd = script_command("hang.sh",
                               xasprintf("sleep 60 &\necho $! > '%s'\nexec sleep 60\n", pidfile));
    struct fake f = {0};
    fake_answer(&f, 200, fixture_text("openapi-22.05-paths.json"));
    struct backend *b = open_fake(&f, cmd);
    struct job_list l;
    struct api_error e;
    int64_t t0 = time_now_ms();
    assert_int_equal(backend_list(b, NULL, &l, &e), BACKEND_REJECTED);
    int64_t took = time_now_ms() - t0;
    assert_true(took >= 9500 && took < 20000);
    assert_non_null(strstr(e.message, "timed out after 10 s"));
    assert_non_null(strstr(e.message, "context 'lab'"));
    assert_non_null(strstr(e.message, cmd));
    assert_int_equal(f.calls, 0); /* nothing was sent without a token */
    FILE *pf = fopen(pidfile, "r");
    assert_non_null(pf);
    long gpid = 0;
    assert_int_equal(fscanf(pf, "%ld", &gpid), 1);
    fclose(pf);
    /* The grandchild was killed with the group (it is not ours to reap: init's). */
    int gone = 0;
    for (int i = 0; i < 100 && !gone; i++) {
        char *proc = xasprintf("/proc/%ld/stat", gpid);
        FILE *sp = fopen(proc, "r");
        free(proc);
        if (sp == NULL) {
            gone = 1;
            break;
        }
        char buf[512] = "";
        size_t n = fread(buf, 1, sizeof buf - 1, sp);
        fclose(sp);
        buf[n] = '\0';
        const char *rp = strrchr(buf, ')');
        gone = rp && (rp[2] == 'Z' || rp[2] == 'X');
        if (!gone)
            usleep(20000);
    }
    assert_true(gone);
    backend_free(b);
    fake_free(&f);
    free(cmd);
    free(pidfile);
}

/* ---- calls on the loop -------------------------------------------------------- */

struct on_loop {
    bool done;
    int ticks; /* a 20 ms timer that kept firing while the call was out */
    enum backend_status st;
    char message[1024];
    size_t count;
    int64_t at;
};

static void loop_reply(void *ctx, struct backend_reply *r)
{
    struct on_loop *o = ctx;
    o->done = true;
    o->st = r->status;
    o->at = time_now_ms();
    snprintf(o->message, sizeof o->message, "%s", r->err.message);
    o->count = r->list.count;
}

struct ticker {
    struct loop *lp;
    struct on_loop *o;
};

static void tick(void *ctx)
{
    struct ticker *t = ctx;
    if (t->o->done)
        return;
    t->o->ticks++;
    loop_add_timer(t->lp, 20, tick, t);
}

static void run_list_on_loop(struct backend *b, struct on_loop *o)
{
    struct loop *lp = loop_new();
    struct http_multi *m = http_multi_new(lp);
    struct backend_request rq = {.op = BACKEND_OP_LIST};
    struct ticker t = {lp, o};
    loop_add_timer(lp, 20, tick, &t);
    backend_send(b, m, &rq, loop_reply, NULL, NULL, o);
    int64_t deadline = time_now_ms() + 30000;
    while (!o->done && time_now_ms() < deadline)
        loop_run_once(lp, 100);
    assert_true(o->done);
    loop_run_once(lp, 30); /* the ticker's last timer */
    http_multi_free(m);
    loop_free(lp);
}

/* A transport answering by path, whatever the order: the version, jobs, partitions, nodes. */
static void by_path_transport(void *ctx, const char *method, const char *path, const char *body,
                              size_t len, http_data_fn on_data, void *data_ctx,
                              struct http_result *out)
{
    (void)method, (void)body, (void)len;
    struct fake *f = ctx;
    assert_true(f->calls < FAKE_MAX);
    f->path[f->calls++] = xstrdup(path);
    static const char *const files[][2] = {{"/openapi/v3", "openapi-22.05-paths.json"},
                                           {"/slurm/v0.0.38/partitions", "partitions.json"},
                                           {"/slurm/v0.0.38/nodes", "nodes.json"}};
    out->transport = TRANSPORT_NONE;
    out->status = 200;
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
        if (strncmp(path, files[i][0], strlen(files[i][0])) == 0) {
            char *t = fixture_text(files[i][1]);
            strbuf_adds(&out->body, t);
            free(t);
            return;
        }
    char *t = jobs_reply("job-running.json", "s", 3);
    fake_reply(out, 200, t, on_data, data_ctx);
    free(t);
}

/*
 * top's first calls start together: the version (/openapi/v3, 219 KB from
 * slurmrestd 22.05) is read by one of them, the others wait for it.
 */
static void the_version_is_read_once_by_calls_on_the_loop(void **state)
{
    (void)state;
    char *dir = empty_job_dir("s");
    struct fake f = {0};
    struct backend *b = open_fake_with(&f, NULL, by_path_transport);
    struct loop *lp = loop_new();
    struct http_multi *m = http_multi_new(lp);
    struct on_loop o[3] = {{0}};
    struct backend_request list = {.op = BACKEND_OP_LIST}, cat = {.op = BACKEND_OP_CATALOG},
                           get = {.op = BACKEND_OP_GET, .name = "s"};
    backend_send(b, m, &list, loop_reply, NULL, NULL, &o[0]);
    backend_send(b, m, &cat, loop_reply, NULL, NULL, &o[1]);
    backend_send(b, m, &get, loop_reply, NULL, NULL, &o[2]);
    int64_t deadline = time_now_ms() + 20000;
    while (!(o[0].done && o[1].done && o[2].done) && time_now_ms() < deadline)
        loop_run_once(lp, 100);
    for (int i = 0; i < 3; i++) {
        assert_true(o[i].done);
        if (o[i].st != BACKEND_OK)
            fail_msg("call %d: %s", i, o[i].message);
    }
    assert_int_equal(o[0].count, 1);
    size_t versions = 0;
    for (size_t i = 0; i < f.calls; i++)
        versions += strcmp(f.path[i], "/openapi/v3") == 0;
    assert_int_equal(versions, 1);
    http_multi_free(m);
    loop_free(lp);
    backend_free(b);
    fake_free(&f);
    free(dir);
}

/* A list on the loop: the token command runs as a watched child, a refusal fetches it again. */
static void a_list_on_the_loop_refreshes_the_token(void **state)
{
    (void)state;
    char *count = xasprintf("%s/runs", tmpdir);
    char *cmd = script_command(
        "tok.sh", xasprintf("echo x >> '%s'\nsleep 0.3\necho SLURM_JWT=eyJ.fresh.token\n", count));
    struct fake f = {0};
    fake_answer(&f, 200, fixture_text("openapi-22.05-paths.json"));
    fake_answer(&f, 500, fixture_text("error-bad-token.json"));
    fake_answer(&f, 200, jobs_reply("job-running.json", "s", 3));
    struct backend *b = open_fake(&f, cmd);
    char *dir = empty_job_dir("s");
    struct on_loop o = {0};
    int64_t t0 = time_now_ms();
    run_list_on_loop(b, &o);
    assert_int_equal(o.st, BACKEND_OK);
    assert_int_equal(o.count, 1);
    assert_int_equal(f.calls, 3);
    struct stat st;
    assert_int_equal(stat(count, &st), 0);
    assert_int_equal(st.st_size, 4); /* run twice: at first use, and after the refusal */
    /* Two runs of 0.3 s: the loop kept turning meanwhile (a blocking run would give ~0 ticks). */
    assert_true(o.at - t0 >= 600);
    assert_true(o.ticks >= 10);
    backend_free(b);
    fake_free(&f);
    free(dir);
    free(cmd);
    free(count);
}

/* A hanging token_command on the loop: the loop keeps turning, the call fails after 10 s. */
static void a_hanging_token_command_does_not_block_the_loop(void **state)
{
    (void)state;
    struct fake f = {0};
    fake_answer(&f, 200, fixture_text("openapi-22.05-paths.json"));
    struct backend *b = open_fake(&f, "sleep 60");
    struct on_loop o = {0};
    int64_t t0 = time_now_ms();
    run_list_on_loop(b, &o);
    assert_int_equal(o.st, BACKEND_REJECTED);
    assert_non_null(strstr(o.message, "timed out after 10 s"));
    assert_non_null(strstr(o.message, "'sleep 60'"));
    assert_true(o.at - t0 >= 9500);
    assert_true(o.ticks >= 100); /* 20 ms ticks for 10 s, even under load */
    assert_int_equal(f.calls, 0);
    /* The child was reaped: no zombie is left to this process. */
    assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
    backend_free(b);
    fake_free(&f);
}

static int collect(void *ctx, const char *data, size_t len)
{
    strbuf_add(ctx, data, len);
    return 0;
}

static void logs_tail_the_worker_file(void **state)
{
    (void)state;
    mkjobdir("l");
    char *d = xasprintf("%s/default/l/logs", tmpdir);
    mkdir(d, 0755);
    char *p = xasprintf("%s/worker-0.log", d);
    write_file(p, "one\ntwo\nthree\n");
    struct fake f = {0};
    fake_answer(&f, 200, xstrdup("{}"));
    struct backend *b = open_fake(&f, NULL);
    struct strbuf out = STRBUF_INIT;
    struct api_error e;
    assert_int_equal(backend_logs(b, "l", "worker-0", 2, false, collect, &out, &e), BACKEND_OK);
    assert_string_equal(strbuf_str(&out), "two\nthree\n");
    strbuf_reset(&out);
    assert_int_equal(backend_logs(b, "l", "worker-0", -1, false, collect, &out, &e), BACKEND_OK);
    assert_string_equal(strbuf_str(&out), "one\ntwo\nthree\n");

    /* 12 MiB: a tail of lines is the last lines, all of it the last 8 MiB */
    FILE *fp = fopen(p, "w");
    for (int i = 0; i < (12 << 20) / 16; i++)
        fprintf(fp, "line %010d\n", i); /* 16 bytes */
    fclose(fp);
    strbuf_reset(&out);
    assert_int_equal(backend_logs(b, "l", "worker-0", 2, false, collect, &out, &e), BACKEND_OK);
    assert_string_equal(strbuf_str(&out), "line 0000786430\nline 0000786431\n");
    strbuf_reset(&out);
    assert_int_equal(backend_logs(b, "l", "worker-0", -1, false, collect, &out, &e), BACKEND_OK);
    assert_int_equal(out.len, 8u << 20);
    assert_memory_equal(out.buf, "line 0000262144\n", 16);

    /* on top's loop a step reads at most 4 MiB: the 8 MiB tail comes in two steps */
    struct slurm_log_follow *lf = slurm_log_follow_new(b, "l", "worker-0", -1, true, &e);
    assert_non_null(lf);
    slurm_log_on_loop(lf);
    enum backend_status st;
    strbuf_reset(&out);
    assert_false(slurm_log_step(lf, collect, &out, &st, &e));
    assert_int_equal(out.len, 4u << 20);
    assert_false(slurm_log_step(lf, collect, &out, &st, &e));
    assert_int_equal(out.len, 8u << 20);
    assert_false(slurm_log_step(lf, collect, &out, &st, &e)); /* nothing new: still following */
    assert_int_equal(out.len, 8u << 20);
    slurm_log_follow_free(lf);
    strbuf_free(&out);
    backend_free(b);
    fake_free(&f);
    free(p);
    free(d);
}

static void render_prints_the_request_the_script_and_the_gaps(void **state)
{
    (void)state;
    struct jobspec job;
    jobspec_init(&job);
    job.name = xstrdup("r1");
    job.workspace_name = xstrdup("default");
    job.framework = FRAMEWORK_PYTORCH_DDP;
    job.resource_pool.present = true;
    job.resource_pool.name = xstrdup("standard");
    job.resource_pool.vpc_id = xstrdup("vpc-1");
    job.scheduling.present = true;
    job.scheduling.scoring_strategy = SCORING_MOST_ALLOCATED;
    struct role *r = jobspec_add_role(&job);
    r->name = xstrdup("Worker");
    r->has_total_replicas = true;
    r->total_replicas = 2;
    r->startup_script = xstrdup("echo hi");
    struct resource_spec_ref *s = role_add_spec(r);
    s->name = xstrdup("gpu-2");
    struct context c;
    memset(&c, 0, sizeof c);
    c.name = (char *)"lab";
    c.user = (char *)"trainjob";
    c.jobs_dir = (char *)"/shared/jobs";
    struct strbuf out = STRBUF_INIT, err = STRBUF_INIT;
    assert_int_equal(slurm_render(&job, &c, NULL, NULL, &out, &err), 0);
    const char *t = strbuf_str(&out);
    assert_non_null(strstr(t, "POST /slurm/v0.0.38/job/submit"));
    assert_non_null(strstr(t, "\"nodes\": 2"));
    assert_non_null(strstr(t, "\"gres\": \"gpu:2\""));
    assert_non_null(strstr(t, "\"current_working_directory\": \"/shared/jobs/default/r1\""));
    assert_non_null(strstr(t, "\"PATH\""));
    assert_non_null(strstr(t, "scoring_strategy"));
    assert_non_null(strstr(t, "vpc_id"));
    /* HIGH with no QOS for it would run as NORMAL: refused, naming the field and the fix. */
    job.scheduling.priority = PRIORITY_HIGH;
    strbuf_reset(&out);
    assert_int_equal(slurm_render(&job, &c, NULL, NULL, &out, &err), -1);
    assert_non_null(strstr(strbuf_str(&err), "scheduling.priority"));
    c.qos = json_pack("{s:s}", "HIGH", "high");
    strbuf_reset(&err);
    assert_int_equal(slurm_render(&job, &c, NULL, NULL, &out, &err), 0);
    assert_non_null(strstr(strbuf_str(&out), "\"qos\": \"high\""));
    json_decref(c.qos);
    strbuf_free(&out);
    strbuf_free(&err);
    jobspec_free(&job);
}

/* ---- the context -------------------------------------------------------------- */

static int parse(const char *yaml, struct context_file *cf, struct findings *fs)
{
    return context_file_parse(yaml, strlen(yaml), cf, fs);
}

static void a_slurm_context_names_what_the_driver_needs(void **state)
{
    (void)state;
    struct context_file cf;
    struct findings fs = FINDINGS_INIT;
    assert_int_equal(parse("contexts:\n"
                           "  - name: lab\n"
                           "    driver: slurm\n"
                           "    endpoint: http+unix:///run/slurmrestd.sock\n"
                           "    user: alice\n"
                           "    token_command: scontrol token lifespan=3600\n"
                           "    jobs_dir: /shared/jobs\n"
                           "    launcher: apptainer exec {image}\n"
                           "    qos: {NORMAL: normal, IDLE_HIGH: idle_high}\n"
                           "    volumes: {datasets: /lustre/datasets, ckpt.v2: /lustre/ckpt/}\n",
                           &cf, &fs),
                     0);
    assert_string_equal(json_string_value(json_object_get(cf.contexts[0].volumes, "ckpt.v2")),
                        "/lustre/ckpt/");
    assert_string_equal(cf.contexts[0].user, "alice");
    assert_string_equal(cf.contexts[0].jobs_dir, "/shared/jobs");
    assert_string_equal(json_string_value(json_object_get(cf.contexts[0].qos, "IDLE_HIGH")),
                        "idle_high");
    context_file_free(&cf);
    findings_free(&fs);

    /* No user, both token sources, a relative jobs_dir, a QOS key that is no priority. */
    assert_int_equal(parse("contexts:\n"
                           "  - name: lab\n"
                           "    driver: slurm\n"
                           "    endpoint: http://127.0.0.1:6820\n"
                           "    token_file: t\n"
                           "    token_command: scontrol token\n"
                           "    jobs_dir: jobs\n"
                           "    qos: {URGENT: high}\n"
                           "    volumes:\n"
                           "      rel: data\n"
                           "      up: /lustre/../etc\n"
                           "      comma: /lustre/a,b\n"
                           "      root: /\n"
                           "      ../x: /lustre/x\n"
                           "  - name: local2\n"
                           "    driver: trainjobd\n"
                           "    volumes: {data: /data}\n",
                           &cf, &fs),
                     -1);
    bool user = false, token = false, dir = false, qos = false;
    int vol = 0;
    for (size_t i = 0; i < fs.count; i++) {
        const char *m = fs.items[i].message, *p = fs.items[i].path;
        user = user || strstr(m, "needs user");
        token = token || strstr(m, "exactly one of token_file and token_command");
        dir = dir || strstr(m, "jobs_dir");
        qos = qos || strstr(p, "qos.URGENT");
        vol += strcmp(p, "contexts[0].volumes.rel") == 0 && strstr(m, "not an absolute path");
        vol += strcmp(p, "contexts[0].volumes.up") == 0 && strstr(m, "'..'");
        vol += strcmp(p, "contexts[0].volumes.comma") == 0 && strstr(m, "',' and ':'");
        vol += strcmp(p, "contexts[0].volumes.root") == 0 && strstr(m, "root directory");
        vol += strcmp(p, "contexts[0].volumes.../x") == 0 && strstr(m, "mount[].id");
        vol += strcmp(p, "contexts[1].volumes") == 0 && strstr(m, "only a slurm context");
        /* placed at the line of the value */
        if (strcmp(p, "contexts[0].volumes.comma") == 0)
            assert_int_equal(fs.items[i].line, 12);
    }
    assert_true(user && token && dir && qos);
    assert_int_equal(vol, 6);
    findings_free(&fs);
}

/*
 * HIGH and HIGHEST are offered only where the user's Slurm association allows
 * the QOS the context maps them to (slurmdbd's associations); without slurmdbd
 * (a 404) the context's map decides, as before.
 */
static void priorities_follow_the_association(void **state)
{
    (void)state;
    fake_qos = json_pack("{s:s, s:s, s:s, s:s}", "HIGH", "high", "HIGHEST", "highest", "IDLE_HIGH",
                         "idle_high", "IDLE_HIGHEST", "idle_highest");
    struct fake f = {0};
    fake_catalog(&f);
    fake_answer(&f, 200,
                xstrdup("{\"errors\": [], \"associations\": ["
                        "{\"user\": \"someone\", \"qos\": [\"highest\"]},"
                        "{\"user\": \"trainjob\", \"qos\": [\"normal\", \"high\", "
                        "\"idle_normal\", \"$(touch x)\"]}]}"));
    struct backend *b = open_fake(&f, NULL);
    struct catalog cat;
    struct api_error e;
    assert_int_equal(backend_catalog(b, &cat, &e), BACKEND_OK);
    assert_string_equal(f.path[3], "/slurmdb/v0.0.38/associations?user=trainjob");
    assert_true(catalog_priority_allowed(&cat, "default", 1));
    assert_true(catalog_priority_allowed(&cat, "default", 2));
    assert_false(catalog_priority_allowed(&cat, "default", 3)); /* another user's QOS */
    const struct catalog_workspace *ws = catalog_workspace(&cat, "default");
    assert_non_null(strstr(ws->priorities_note, "allows QOS normal,high,idle_normal, not HIGHEST"));
    assert_null(strstr(ws->priorities_note, "touch"));
    /* validation names the field */
    struct jobspec job;
    jobspec_init(&job);
    job.scheduling.priority = PRIORITY_HIGHEST;
    struct validate_options opt = {0};
    opt.catalog = &cat;
    opt.workspace = "default";
    struct findings fs = FINDINGS_INIT;
    validate_job(&job, &opt, &fs);
    bool named = false;
    for (size_t i = 0; i < fs.count; i++)
        named = named || (strcmp(fs.items[i].path, "scheduling.priority") == 0 &&
                          strstr(fs.items[i].message, "HIGHEST is not allowed") != NULL);
    assert_true(named);
    findings_free(&fs);
    jobspec_free(&job);
    catalog_free(&cat);
    backend_free(b);
    fake_free(&f);

    /* no slurmdbd: the map decides */
    struct fake g = {0};
    fake_catalog(&g);
    fake_answer(&g, 404, xstrdup("Unable to find requested URL"));
    b = open_fake(&g, NULL);
    assert_int_equal(backend_catalog(b, &cat, &e), BACKEND_OK);
    assert_true(catalog_priority_allowed(&cat, "default", 3));
    catalog_free(&cat);
    backend_free(b);
    fake_free(&g);
    json_decref(fake_qos);

    /* no slurmdbd, HIGH mapped alone: HIGHEST is not offered, and the reason is the map */
    fake_qos = json_pack("{s:s}", "HIGH", "high");
    struct fake h = {0};
    fake_catalog(&h);
    fake_answer(&h, 404, xstrdup("Unable to find requested URL"));
    b = open_fake(&h, NULL);
    assert_int_equal(backend_catalog(b, &cat, &e), BACKEND_OK);
    assert_true(catalog_priority_allowed(&cat, "default", 2));
    assert_false(catalog_priority_allowed(&cat, "default", 3));
    jobspec_init(&job);
    job.scheduling.priority = PRIORITY_HIGHEST;
    validate_job(&job, &opt, &fs);
    named = false;
    for (size_t i = 0; i < fs.count; i++)
        named =
            named || (strcmp(fs.items[i].path, "scheduling.priority") == 0 &&
                      strstr(fs.items[i].message, "the context 'lab' maps no QOS for HIGHEST") &&
                      !strstr(fs.items[i].message, "owner"));
    assert_true(named);
    findings_free(&fs);
    jobspec_free(&job);
    catalog_free(&cat);
    backend_free(b);
    fake_free(&h);
    json_decref(fake_qos);
    fake_qos = NULL;

    /* no qos: at all: NORMAL only, said as the map's, never as owner rights */
    struct fake k = {0};
    fake_catalog(&k);
    b = open_fake(&k, NULL);
    assert_int_equal(backend_catalog(b, &cat, &e), BACKEND_OK);
    assert_int_equal(k.calls, 3); /* no association asked: nothing to allow */
    assert_false(catalog_priority_allowed(&cat, "default", 2));
    ws = catalog_workspace(&cat, "default");
    char why[300];
    catalog_priority_refusal(ws, why, sizeof why);
    assert_non_null(strstr(why, "maps no QOS for HIGH and HIGHEST"));
    catalog_free(&cat);
    backend_free(b);
    fake_free(&k);
}

/*
 * Volumes are the context's: the catalog lists them with the directory the
 * nodes see, and validation holds a worker in the node's own environment to
 * that directory, naming the field, as submit does.
 */
static void volumes_are_the_contexts(void **state)
{
    (void)state;
    fake_volumes = json_pack("{s:s, s:s}", "datasets", "/lustre/ds", "ckpt", "/lustre/ckpt");
    struct fake f = {0};
    fake_catalog(&f);
    struct backend *b = open_fake(&f, NULL);
    struct catalog cat;
    struct api_error e;
    assert_int_equal(backend_catalog(b, &cat, &e), BACKEND_OK);
    assert_int_equal(cat.unknown & CATALOG_UNKNOWN_VOLUMES, 0);
    assert_int_equal(cat.volume_count, 2);
    const struct catalog_volume *v = catalog_volume(&cat, "datasets");
    assert_non_null(v);
    assert_string_equal(v->path, "/lustre/ds");
    assert_null(v->zone);

    struct jobspec job;
    jobspec_init(&job);
    struct role *r = jobspec_add_role(&job);
    r->image_path = xstrdup(CATALOG_HOST_IMAGE);
    struct mount *m = jobspec_add_mount(&job);
    m->id = xstrdup("datasets");
    m->subdir = xstrdup("/imagenet/");
    m->mount_path = xstrdup("/data");
    struct validate_options opt = {0};
    opt.catalog = &cat;
    opt.workspace = "default";
    struct findings fs = FINDINGS_INIT;
    validate_job(&job, &opt, &fs);
    const struct finding *at = NULL;
    for (size_t i = 0; i < fs.count; i++)
        if (strncmp(fs.items[i].path, "mount[0]", 8) == 0)
            at = &fs.items[i];
    assert_non_null(at);
    assert_string_equal(at->path, "mount[0].mount_path");
    assert_non_null(strstr(at->message, "volume 'datasets' is at /lustre/ds/imagenet"));
    findings_free(&fs);

    /* there, it is the mount; through an image the launcher runs, anywhere */
    for (int pass = 0; pass < 2; pass++) {
        free(m->mount_path);
        m->mount_path = xstrdup(pass == 0 ? "/lustre/ds/imagenet" : "/data");
        if (pass == 1) {
            free(r->image_path);
            r->image_path = xstrdup("registry.example/pytorch:24.01");
        }
        validate_job(&job, &opt, &fs);
        for (size_t i = 0; i < fs.count; i++)
            if (strncmp(fs.items[i].path, "mount[0]", 8) == 0)
                fail_msg("pass %d: %s: %s", pass, fs.items[i].path, fs.items[i].message);
        findings_free(&fs);
    }

    /* a volume the context does not name */
    free(m->id);
    m->id = xstrdup("scratch");
    validate_job(&job, &opt, &fs);
    bool named = false;
    for (size_t i = 0; i < fs.count; i++)
        named = named || (strcmp(fs.items[i].path, "mount[0].id") == 0 &&
                          strstr(fs.items[i].message, "unknown volume 'scratch'; choose one of") &&
                          strstr(fs.items[i].message, "datasets"));
    assert_true(named);
    findings_free(&fs);
    jobspec_free(&job);
    catalog_free(&cat);
    backend_free(b);
    fake_free(&f);
    json_decref(fake_volumes);
    fake_volumes = NULL;
}

/* ---- whose jobs and directories (issue 20) ------------------------------------- */

/* The first job of sample as an element, in job directory name, with id, user and comment. */
static json_t *job_elem(const char *sample, const char *name, int id, const char *user,
                        const char *comment)
{
    char *t = jobs_reply(sample, name, id);
    json_t *doc = json_loads(t, 0, NULL);
    free(t);
    json_t *j = json_incref(json_array_get(json_object_get(doc, "jobs"), 0));
    json_decref(doc);
    json_object_set_new(j, "user_name", json_string(user));
    if (comment)
        json_object_set_new(j, "comment", json_string(comment));
    return j;
}

static bool called(const struct fake *f, const char *path)
{
    for (size_t i = 0; i < f->calls; i++)
        if (strstr(f->path[i], path))
            return true;
    return false;
}

/*
 * sbatch --chdir=<the job's directory> as another user, or a job of the
 * user's without trainjob's mark: neither is the job. It stays as its own
 * Slurm job left it (SUCCEEDED), and stop cancels nothing of theirs.
 */
static void foreign_slurm_jobs_in_a_job_directory_are_ignored(void **state)
{
    (void)state;
    mkjobdir("ddp");
    json_t *doc = json_pack("{s:[], s:[]}", "errors", "jobs");
    json_t *jobs = json_object_get(doc, "jobs");
    json_array_append_new(jobs, job_elem("job-completed.json", "ddp", 4, "trainjob", NULL));
    json_array_append_new(jobs, job_elem("job-running.json", "ddp", 9, "nobody", ""));
    json_array_append_new(
        jobs, job_elem("job-running.json", "ddp", 10, "trainjob", "trainjob:" TEST_MARK "0"));
    json_array_append_new(jobs, job_elem("job-running.json", "ddp", 11, "trainjob", NULL));
    json_object_set_new(json_array_get(jobs, 3), "comment", json_null()); /* no comment */
    struct fake f = {0};
    fake_answer(&f, 200, fixture_text("openapi-22.05-paths.json"));
    fake_answer(&f, 200, json_dumps(doc, JSON_COMPACT));
    json_decref(doc);
    struct backend *b = open_fake(&f, NULL);
    struct job_list l;
    struct api_error e;
    assert_int_equal(backend_list(b, NULL, &l, &e), BACKEND_OK);
    assert_int_equal(l.count, 1);
    assert_string_equal(l.jobs[0].id, "4");
    assert_int_equal(l.jobs[0].state, JOB_STATE_SUCCEEDED);
    job_list_free(&l);
    struct batch_result r;
    const char *names[] = {"ddp"};
    assert_int_equal(backend_stop(b, names, 1, &r, &e), BACKEND_OK);
    assert_int_equal(r.items[0].outcome, BATCH_SKIPPED); /* ended: nothing to cancel */
    batch_result_free(&r);
    assert_false(called(&f, "job/9"));
    assert_false(called(&f, "job/10"));
    assert_false(called(&f, "job/11"));
    backend_free(b);
    fake_free(&f);
}

/*
 * A job directory from a trainjob before marks (no mark file): the user's
 * own Slurm job there is the job, as it was; another user's is still not.
 */
static void a_job_directory_from_before_marks_keeps_its_job(void **state)
{
    (void)state;
    mkjobdir("old");
    char *m = xasprintf("%s/default/old/mark", tmpdir);
    assert_int_equal(unlink(m), 0);
    json_t *doc = json_pack("{s:[], s:[]}", "errors", "jobs");
    json_t *jobs = json_object_get(doc, "jobs");
    json_array_append_new(jobs, job_elem("job-completed.json", "old", 4, "trainjob", NULL));
    json_object_set_new(json_array_get(jobs, 0), "comment", json_null());
    json_array_append_new(jobs, job_elem("job-running.json", "old", 9, "nobody", ""));
    struct fake f = {0};
    fake_answer(&f, 200, fixture_text("openapi-22.05-paths.json"));
    fake_answer(&f, 200, json_dumps(doc, JSON_COMPACT));
    json_decref(doc);
    struct backend *b = open_fake(&f, NULL);
    struct job_list l;
    struct api_error e;
    assert_int_equal(backend_list(b, NULL, &l, &e), BACKEND_OK);
    assert_int_equal(l.count, 1);
    assert_string_equal(l.jobs[0].id, "4");
    assert_int_equal(l.jobs[0].state, JOB_STATE_SUCCEEDED);
    job_list_free(&l);
    backend_free(b);
    fake_free(&f);
    free(m);
}

/* A job.json another user wrote (or put in place) is never submitted as this user. */
static void a_job_json_of_another_user_is_never_submitted(void **state)
{
    (void)state;
    mkjobdir("vic");
    char *p = xasprintf("%s/default/vic/job.json", tmpdir);
    assert_int_equal(chown(p, 4242, 4242), 0);
    struct fake f = {0};
    fake_catalog(&f);
    fake_answer(&f, 200, xstrdup("{\"errors\": [], \"jobs\": []}"));
    fake_answer(&f, 200, fixture_text("submit-response.json"));
    struct backend *b = open_fake(&f, NULL);
    struct jobspec out;
    struct api_error e;
    assert_int_equal(backend_start(b, "vic", &out, &e), BACKEND_REJECTED);
    assert_int_equal(e.status, 403);
    assert_non_null(strstr(e.message, "job.json is not yours"));
    assert_false(called(&f, "job/submit"));
    jobspec_free(&out);
    /* Nor is anything of a job directory of another user's used. */
    char *d = xasprintf("%s/default/vic", tmpdir);
    assert_int_equal(chown(p, 0, 0), 0);
    assert_int_equal(chown(d, 4242, 4242), 0);
    assert_int_equal(backend_start(b, "vic", &out, &e), BACKEND_REJECTED);
    assert_int_equal(e.status, 403);
    assert_non_null(strstr(e.message, "job directory"));
    assert_non_null(strstr(e.message, "is owned by uid 4242"));
    assert_false(called(&f, "job/submit"));
    jobspec_free(&out);
    backend_free(b);
    fake_free(&f);
    free(d);
    free(p);
}

/* A workspace in which another user could swap a job directory is refused, saying what to fix. */
static void a_workspace_others_could_swap_in_is_refused(void **state)
{
    (void)state;
    mkjobdir("ddp");
    char *ws = xasprintf("%s/default", tmpdir);
    struct fake f = {0};
    fake_answer(&f, 200, fixture_text("openapi-22.05-paths.json"));
    fake_answer(&f, 200, jobs_reply("job-running.json", "ddp", 4));
    struct backend *b = open_fake(&f, NULL);
    struct job_list l;
    struct api_error e;
    assert_int_equal(chmod(ws, 02775), 0); /* group-writable, set-gid, no sticky bit */
    assert_int_equal(backend_list(b, NULL, &l, &e), BACKEND_REJECTED);
    assert_int_equal(e.status, 403);
    char *want = xasprintf("workspace directory %s is writable by its group without the sticky "
                           "bit",
                           ws);
    assert_non_null(strstr(e.message, want));
    free(want);
    want = xasprintf("`chmod +t %s`", ws);
    assert_non_null(strstr(e.message, want));
    free(want);
    struct jobspec j;
    assert_int_equal(backend_get(b, "ddp", &j, &e), BACKEND_REJECTED);
    assert_int_equal(e.status, 403);
    jobspec_free(&j);
    assert_int_equal(chmod(ws, 0757), 0); /* writable by every user */
    assert_int_equal(backend_list(b, NULL, &l, &e), BACKEND_REJECTED);
    want = xasprintf("`chmod o-w %s`", ws);
    assert_non_null(strstr(e.message, want));
    free(want);
    /* A group workspace with the sticky bit: only a directory's owner may rename it. */
    assert_int_equal(chmod(ws, 03770), 0);
    assert_int_equal(backend_list(b, NULL, &l, &e), BACKEND_OK);
    assert_int_equal(l.count, 1);
    job_list_free(&l);
    /* A job directory others may write is not used either. */
    char *d = xasprintf("%s/ddp", ws);
    assert_int_equal(chmod(d, 0775), 0);
    assert_int_equal(backend_get(b, "ddp", &j, &e), BACKEND_REJECTED);
    want = xasprintf("`chmod go-w %s`", d);
    assert_non_null(strstr(e.message, want));
    free(want);
    jobspec_free(&j);
    chmod(d, 0755);
    chmod(ws, 0755);
    backend_free(b);
    fake_free(&f);
    free(d);
    free(ws);
}

/* jansson's allocations, counted while a test asks (json_set_alloc_funcs). */
static size_t json_allocs;
static void *counting_malloc(size_t n)
{
    json_allocs++;
    return malloc(n);
}

/* A GET /jobs reply of n running jobs of the user's, named j0…, ids from 1000. */
static char *many_jobs_reply(int n)
{
    struct strbuf body = STRBUF_INIT;
    strbuf_adds(&body,
                "{\"meta\": {\"plugin\": {\"type\": \"openapi/v0.0.38\"}, \"Slurm\":"
                " {\"release\": \"22.05.8\"}}, \"errors\": [], \"warnings\": [], \"jobs\": [");
    for (int i = 0; i < n; i++) {
        char name[16];
        snprintf(name, sizeof name, "j%d", i);
        json_t *j = job_elem("job-running.json", name, 1000 + i, "trainjob", NULL);
        char *t = json_dumps(j, JSON_INDENT(2)); /* as slurmrestd writes it */
        strbuf_adds(&body, t);
        strbuf_adds(&body, i + 1 < n ? "," : "]}");
        free(t);
        json_decref(j);
    }
    return strbuf_detach(&body, NULL);
}

/*
 * The user's jobs of a GET /jobs, and of the list kept for the next
 * process, are decoded as they are read, without a tree of each: a list
 * of 400 running jobs of the user's (3 of them with a job directory) makes
 * fewer jansson values than it has jobs, and lists the same 3 jobs cold,
 * from the kept list (a 304) and after it (the whole reply again).
 */
static void the_users_jobs_are_decoded_without_a_tree_each(void **state)
{
    (void)state;
    enum { N = 400 };
    for (int i = 0; i < 3; i++) {
        char name[16];
        snprintf(name, sizeof name, "j%d", i);
        mkjobdir(name);
    }
    struct fake f = {0};
    fake_answer(&f, 200, fixture_text("openapi-22.05-paths.json"));
    fake_answer(&f, 200, many_jobs_reply(N));
    struct backend *b = open_fake(&f, NULL); /* learns the version, keeps the list */
    struct job_list l;
    struct api_error e;
    assert_int_equal(backend_list(b, NULL, &l, &e), BACKEND_OK);
    assert_int_equal(l.count, 3);
    job_list_free(&l);
    backend_free(b);
    fake_free(&f);

    keep_version_cache = true;
    keep_lists = true;
    const char *how[] = {"304, from the kept list", "the whole reply again"};
    for (int k = 0; k < 2; k++) {
        struct fake g = {0};
        if (k == 0)
            fake_answer(&g, 304, xstrdup(""));
        else
            fake_answer(&g, 200, many_jobs_reply(N));
        b = open_fake(&g, NULL);
        json_allocs = 0;
        json_set_alloc_funcs(counting_malloc, free);
        enum backend_status st = backend_list(b, NULL, &l, &e);
        json_set_alloc_funcs(malloc, free);
        if (st != BACKEND_OK)
            fail_msg("%s: %s", how[k], e.message);
        assert_int_equal(g.calls, 1);
        assert_non_null(strstr(g.path[0], "jobs?update_time="));
        if (l.count != 3 || json_allocs >= N)
            fail_msg("%s: %zu jobs listed, %zu jansson allocations for %d jobs", how[k], l.count,
                     json_allocs, N);
        for (size_t i = 0; i < l.count; i++)
            assert_non_null(l.jobs[i].id); /* Slurm's job, not only the directory's */
        job_list_free(&l);
        backend_free(b);
        fake_free(&g);
    }
}

/*
 * A cluster of 50,000 jobs of other users and 3 of ours: the 3 are listed,
 * and memory grows by under a quarter of the reply's bytes (it is read as
 * it arrives, one job held at a time), let alone what decoding every job
 * would take. In a child, whose address space is capped (without ASan) so
 * a decoder that balloons fails instead of eating the machine.
 */
static void fifty_thousand_jobs_of_others_list_ours_in_bounded_memory(void **state)
{
    (void)state;
    json_t *mine[3];
    for (int i = 0; i < 3; i++) {
        char name[16];
        snprintf(name, sizeof name, "m%d", i);
        mkjobdir(name);
        mine[i] = job_elem("job-running.json", name, 100000 + i, "trainjob", NULL);
    }
    /* Another user's pending job, trimmed to about 600 bytes of many small values. */
    json_t *other = job_elem("job-running.json", "x", 1, "someone", "");
    json_t *small = json_object();
    const char *key;
    json_t *v;
    int kept = 0;
    json_object_foreach(other, key, v)
    {
        if ((json_is_integer(v) || json_is_boolean(v) || json_is_string(v)) && kept++ < 40)
            json_object_set(small, key, v);
    }
    json_decref(other);
    struct strbuf body = STRBUF_INIT;
    strbuf_adds(&body, "{\"errors\": [], \"jobs\": [");
    for (int i = 0; i < 50000; i++) {
        json_object_set_new(small, "job_id", json_integer(i + 1));
        json_object_set_new(small, "user_name", json_string(i % 2 ? "someone" : "other"));
        char *t = json_dumps(small, JSON_COMPACT);
        strbuf_adds(&body, t);
        strbuf_addc(&body, ',');
        free(t);
        if (i % 20000 == 0) {
            t = json_dumps(mine[i / 20000], JSON_COMPACT);
            strbuf_adds(&body, t);
            strbuf_addc(&body, ',');
            free(t);
        }
    }
    json_decref(small);
    for (int i = 0; i < 3; i++)
        json_decref(mine[i]);
    strbuf_truncate(&body, body.len - 1);
    strbuf_adds(&body, "]}");
    size_t body_len = body.len;
    assert_true(body_len > (20u << 20));

    struct fake f = {0};
    fake_answer(&f, 200, fixture_text("openapi-22.05-paths.json"));
    fake_answer(&f, 200, strbuf_detach(&body, NULL));
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
#if !defined(__SANITIZE_ADDRESS__)
        struct rlimit as;
        FILE *statm = fopen("/proc/self/statm", "r");
        unsigned long pages = 0;
        if (statm && fscanf(statm, "%lu", &pages) == 1) {
            as.rlim_cur = as.rlim_max = pages * 4096 + 3 * body_len + (256u << 20);
            setrlimit(RLIMIT_AS, &as);
        }
        if (statm)
            fclose(statm);
#endif
        struct rusage before, after;
        getrusage(RUSAGE_SELF, &before);
        struct backend *b = open_fake(&f, NULL);
        struct job_list l;
        struct api_error e;
        enum backend_status st = backend_list(b, NULL, &l, &e);
        getrusage(RUSAGE_SELF, &after);
        long grew = (after.ru_maxrss - before.ru_maxrss) * 1024L;
        fprintf(stderr, "a reply of %zu bytes: grew %ld KiB\n", body_len, grew >> 10);
        if (st != BACKEND_OK || l.count != 3)
            _exit(1);
        _exit(grew > (long)body_len / 4 ? 2 : 0);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    fake_free(&f);
}

/*
 * A cluster whose GET /jobs is over the old 256 MiB byte cap: other users'
 * pending jobs (3.2 KB each, as slurmrestd gives them) around 3 of ours,
 * made as they are sent and never held by the fake.
 */
struct big_cluster {
    char *other; /* one job of another user, as text */
    char *mine[3];
    size_t others;
    size_t sent; /* bytes of the last reply */
};

static void big_cluster_transport(void *ctx, const char *method, const char *path, const char *body,
                                  size_t len, http_data_fn on_data, void *data_ctx,
                                  struct http_result *out)
{
    (void)method, (void)body, (void)len;
    struct big_cluster *bc = ctx;
    if (strncmp(path, "/openapi/v3", 11) == 0) {
        char *t = fixture_text("openapi-22.05-paths.json");
        fake_reply(out, 200, t, on_data, data_ctx);
        free(t);
        return;
    }
    struct fake_sink k;
    fake_sink_start(&k, out, 200, on_data, data_ctx);
    const char *head = "{\"meta\": {\"plugin\": {\"type\": \"openapi/v0.0.38\"}}, "
                       "\"errors\": [], \"warnings\": [], \"jobs\": [";
    fake_send(&k, head, strlen(head));
    bc->sent = strlen(head);
    size_t olen = strlen(bc->other);
    for (size_t i = 0; i < bc->others && !k.stopped; i++) {
        if (i % (bc->others / 3) == 0 && i / (bc->others / 3) < 3) {
            const char *m = bc->mine[i / (bc->others / 3)];
            fake_send(&k, m, strlen(m));
            fake_send(&k, ",", 1);
            bc->sent += strlen(m) + 1;
        }
        fake_send(&k, bc->other, olen);
        fake_send(&k, i + 1 < bc->others ? "," : "]}", i + 1 < bc->others ? 1 : 2);
        bc->sent += olen + 1;
    }
}

/*
 * A reply of 300 MB, over the byte cap a reply held whole has (256 MiB),
 * lists ours, from the CLI and on top's loop, and the process grows by a
 * few MiB, not by the reply.
 */
static void a_jobs_reply_over_the_byte_cap_lists_ours(void **state)
{
    (void)state;
    struct big_cluster bc = {0};
    for (int i = 0; i < 3; i++) {
        char name[16];
        snprintf(name, sizeof name, "b%d", i);
        mkjobdir(name);
        json_t *j = job_elem("job-running.json", name, 200000 + i, "trainjob", NULL);
        bc.mine[i] = json_dumps(j, JSON_COMPACT);
        json_decref(j);
    }
    json_t *other = job_elem("job-running.json", "x", 1, "someone", "");
    json_object_set_new(other, "job_state", json_string("PENDING"));
    json_object_set_new(other, "command", json_string("/home/someone/run.sh"));
    char *t = json_dumps(other, JSON_COMPACT);
    json_decref(other);
    /* Padded to a pending job's 3.2 KB with a field of the job's that nobody reads. */
    struct strbuf pad = STRBUF_INIT;
    strbuf_add(&pad, t, strlen(t) - 1);
    strbuf_adds(&pad, ",\"extra\": \"");
    while (pad.len < 3200)
        strbuf_adds(&pad, "pad ");
    strbuf_adds(&pad, "\"}");
    free(t);
    bc.other = strbuf_detach(&pad, NULL);
    bc.others = (300u << 20) / strlen(bc.other);

    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct rusage before, after;
        getrusage(RUSAGE_SELF, &before);
        struct strbuf err = STRBUF_INIT;
        struct http_client *c = http_client_new("http://127.0.0.1:1", &err);
        http_client_set_transport(c, big_cluster_transport, &bc);
        struct context ctx;
        memset(&ctx, 0, sizeof ctx);
        ctx.name = (char *)"lab";
        ctx.driver = CONTEXT_DRIVER_SLURM;
        ctx.user = (char *)"trainjob";
        ctx.token_file = token_file;
        ctx.jobs_dir = tmpdir;
        ctx.subscription = (char *)"local";
        ctx.resource_group = (char *)"default";
        ctx.zone = (char *)"local-1z";
        ctx.workspace = (char *)"default";
        struct backend *b = slurm_backend_new(c, &ctx, &err);
        struct job_list l;
        struct api_error e;
        enum backend_status st = backend_list(b, NULL, &l, &e);
        if (st != BACKEND_OK || l.count != 3 || bc.sent <= (256u << 20)) {
            fprintf(stderr, "the CLI's list: %d jobs, %s\n", (int)l.count, e.message);
            _exit(1);
        }
        job_list_free(&l);
        backend_free(b);
        c = http_client_new("http://127.0.0.1:1", &err);
        http_client_set_transport(c, big_cluster_transport, &bc);
        b = slurm_backend_new(c, &ctx, &err);
        struct on_loop o;
        memset(&o, 0, sizeof o);
        run_list_on_loop(b, &o);
        if (o.st != BACKEND_OK || o.count != 3) {
            fprintf(stderr, "the loop's list: %zu jobs, %s\n", o.count, o.message);
            _exit(1);
        }
        backend_free(b);
        getrusage(RUSAGE_SELF, &after);
        long grew = (after.ru_maxrss - before.ru_maxrss) * 1024L;
        fprintf(stderr, "a reply of %zu bytes, twice: grew %ld KiB\n", bc.sent, grew >> 10);
        _exit(grew > (32L << 20) ? 2 : 0);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    free(bc.other);
    for (int i = 0; i < 3; i++)
        free(bc.mine[i]);
}

/*
 * Another user's job of 20 MB (a comment as long as their cluster allows),
 * over the 16 MiB one job may take, is read past: ours are still listed,
 * and a reply cut short after it is not a listing.
 */
static void another_users_huge_job_does_not_hide_ours(void **state)
{
    (void)state;
    mkjobdir("h0");
    json_t *mine = job_elem("job-running.json", "h0", 300000, "trainjob", NULL);
    json_t *huge = job_elem("job-running.json", "x", 2, "someone", NULL);
    char *pad = xmalloc(20u << 20);
    memset(pad, 'z', (20u << 20) - 1);
    pad[(20u << 20) - 1] = '\0';
    json_object_set_new(huge, "comment", json_string(pad));
    free(pad);
    char *m = json_dumps(mine, JSON_COMPACT), *h = json_dumps(huge, JSON_COMPACT);
    json_decref(mine);
    json_decref(huge);
    struct fake f = {0}, cut = {0};
    fake_answer(&f, 200, fixture_text("openapi-22.05-paths.json"));
    fake_answer(&f, 200, xasprintf("{\"errors\": [], \"jobs\": [%s, %s]}", h, m));
    fake_answer(&cut, 200, fixture_text("openapi-22.05-paths.json"));
    fake_answer(&cut, 200, xasprintf("{\"errors\": [], \"jobs\": [%s, %s", h, m));
    free(m);
    free(h);
    struct backend *b = open_fake(&f, NULL);
    struct job_list l;
    struct api_error e;
    assert_int_equal(backend_list(b, NULL, &l, &e), BACKEND_OK);
    assert_int_equal(l.count, 1);
    assert_string_equal(l.jobs[0].name, "h0");
    job_list_free(&l);
    backend_free(b);
    b = open_fake(&cut, NULL);
    assert_int_not_equal(backend_list(b, NULL, &l, &e), BACKEND_OK);
    assert_non_null(strstr(e.message, "the reply ends before its object does"));
    backend_free(b);
    fake_free(&f);
    fake_free(&cut);
}

/* Any other reply that would take more memory than the bound is refused, saying so. */
static void a_reply_too_large_to_decode_is_refused(void **state)
{
    (void)state;
    struct strbuf body = STRBUF_INIT;
    strbuf_adds(&body, "{\"partitions\": [");
    for (size_t i = 0; i < (5u << 20); i++)
        strbuf_adds(&body, "0,");
    strbuf_adds(&body, "0]}");
    struct fake f = {0};
    fake_answer(&f, 200, fixture_text("openapi-22.05-paths.json"));
    fake_answer(&f, 200, strbuf_detach(&body, NULL));
    struct backend *b = open_fake(&f, NULL);
    struct catalog cat;
    struct api_error e;
    memset(&cat, 0, sizeof cat);
    assert_int_not_equal(backend_catalog(b, &cat, &e), BACKEND_OK);
    assert_non_null(strstr(e.message, "values would take about"));
    assert_non_null(strstr(e.message, "over the 256 MiB bound"));
    catalog_free(&cat);
    backend_free(b);
    fake_free(&f);
}

/* ---- a fake that answers by method and path ------------------------------------ */

/* One answer of a routed fake: the first route whose method and path match. */
struct route {
    const char *method;
    const char *path; /* a substring of the request's path */
    int status;
    char *(*body)(void); /* made per request (it may read the job directory) */
};

struct routed {
    const struct route *routes;
    size_t n;
    char *calls[FAKE_MAX]; /* "METHOD PATH BODY" */
    size_t count;
};

static void routed_transport(void *ctx, const char *method, const char *path, const char *body,
                             size_t len, http_data_fn on_data, void *data_ctx,
                             struct http_result *out)
{
    struct routed *r = ctx;
    assert_true(r->count < FAKE_MAX);
    r->calls[r->count++] = xasprintf("%s %s %.*s", method, path, (int)len, body ? body : "");
    for (size_t i = 0; i < r->n; i++) {
        if (strcmp(r->routes[i].method, method) == 0 && strstr(path, r->routes[i].path)) {
            char *text = r->routes[i].body();
            fake_reply(out, r->routes[i].status, text, on_data, data_ctx);
            free(text);
            return;
        }
    }
    fail_msg("no route for %s %s", method, path);
}

static void routed_free(struct routed *r)
{
    for (size_t i = 0; i < r->count; i++)
        free(r->calls[i]);
}

/* The call starting with prefix ("DELETE /slurm/v0.0.38/job/41"), or NULL. */
static const char *routed_call(const struct routed *r, const char *prefix)
{
    for (size_t i = 0; i < r->count; i++)
        if (strncmp(r->calls[i], prefix, strlen(prefix)) == 0)
            return r->calls[i];
    return NULL;
}

static char *body_openapi(void)
{
    return fixture_text("openapi-22.05-paths.json");
}
static char *body_partitions(void)
{
    return fixture_text("partitions.json");
}
static char *body_nodes(void)
{
    return fixture_text("nodes.json");
}
static char *body_ok(void)
{
    return xstrdup("{\"errors\": []}");
}
static char *body_2068(void)
{
    return xstrdup("{\"errors\": [{\"error_number\": 2068, \"error\": \"Requested node "
                   "configuration is not available\"}]}");
}

/* job-running.json as Slurm job id of the job directory of name, in state, with comment. */
static char *slurm_job_reply(const char *name, int id, const char *state, const char *comment)
{
    char *t = fixture_text("job-running.json");
    json_t *doc = json_loads(t, 0, NULL);
    free(t);
    json_t *j = json_array_get(json_object_get(doc, "jobs"), 0);
    char *dir = xasprintf("%s/default/%s", tmpdir, name);
    json_object_set_new(j, "current_working_directory", json_string(dir));
    json_object_set_new(j, "job_id", json_integer(id));
    json_object_set_new(j, "job_state", json_string(state));
    json_object_set_new(j, "comment", json_string(comment));
    free(dir);
    t = json_dumps(doc, JSON_COMPACT);
    json_decref(doc);
    return t;
}

/* The /jobs of a Slurm that queued the refused submit of "lost": its comment is its mark. */
static char *body_queued_anyway(void)
{
    char *p = xasprintf("%s/default/lost/mark", tmpdir);
    char mark[33] = "";
    FILE *f = fopen(p, "r");
    free(p);
    if (f) {
        if (fgets(mark, sizeof mark, f) == NULL)
            mark[0] = '\0';
        fclose(f);
    }
    char *comment = xasprintf("trainjob:%s", mark);
    char *t = slurm_job_reply("lost", 41, "PENDING", comment);
    free(comment);
    return t;
}

/*
 * slurmrestd 22.05 answers a submit to drained nodes with error 2068 and
 * queues the job all the same: the job carrying the submit's mark is
 * cancelled and the directory removed, so nothing is left; when Slurm
 * cannot be asked, the directory stays and the message says so.
 */
static void a_refused_submit_slurm_queued_anyway_is_cancelled(void **state)
{
    (void)state;
    const struct route routes[] = {
        {"GET", "/openapi/v3", 200, body_openapi}, {"GET", "/partitions", 200, body_partitions},
        {"GET", "/nodes", 200, body_nodes},        {"POST", "/job/submit", 500, body_2068},
        {"GET", "/jobs", 200, body_queued_anyway}, {"DELETE", "/job/41", 200, body_ok},
    };
    struct routed r = {routes, sizeof routes / sizeof routes[0], {0}, 0};
    struct backend *b = open_fake_with((struct fake *)&r, NULL, routed_transport);
    struct jobspec job, out;
    small_job(&job, "lost");
    struct api_error e;
    assert_int_equal(backend_create(b, &job, &out, &e), BACKEND_REJECTED);
    assert_non_null(strstr(e.message, "2068"));
    assert_non_null(strstr(e.message, "queued it anyway: cancelled"));
    assert_non_null(routed_call(&r, "DELETE /slurm/v0.0.38/job/41"));
    char *dir = xasprintf("%s/default/lost", tmpdir);
    struct stat st;
    assert_int_equal(lstat(dir, &st), -1);
    jobspec_free(&out);
    backend_free(b);
    routed_free(&r);

    /* Slurm cannot be asked whether it queued it: the directory stays, and delete is named. */
    const struct route blind[] = {
        {"GET", "/openapi/v3", 200, body_openapi}, {"GET", "/partitions", 200, body_partitions},
        {"GET", "/nodes", 200, body_nodes},        {"POST", "/job/submit", 500, body_2068},
        {"GET", "/jobs", 500, body_2068},
    };
    struct routed r2 = {blind, sizeof blind / sizeof blind[0], {0}, 0};
    b = open_fake_with((struct fake *)&r2, NULL, routed_transport);
    assert_int_equal(backend_create(b, &job, &out, &e), BACKEND_REJECTED);
    assert_non_null(strstr(e.message, "could not be checked"));
    assert_non_null(strstr(e.message, "trainjob delete lost"));
    assert_int_equal(lstat(dir, &st), 0);
    free(dir);
    jobspec_free(&out);
    jobspec_free(&job);
    backend_free(b);
    routed_free(&r2);
}

/* Slurm's job 7 of job "p": pending, or running. */
static char *body_p_pending(void)
{
    return slurm_job_reply("p", 7, "PENDING", "trainjob:" TEST_MARK);
}
static char *body_p_running(void)
{
    return slurm_job_reply("p", 7, "RUNNING", "trainjob:" TEST_MARK);
}
static char *body_not_pending(void)
{
    return xstrdup("{\"errors\": [{\"error_number\": 2021, \"error\": \"Job is no longer "
                   "pending execution\"}]}");
}

/*
 * A new priority is the context's QOS for it, set on the pending Slurm job
 * (POST job/<id> {"qos"}) and kept in job.json, so the job shows it; a
 * priority the map lacks is refused naming it; a running job whose QOS
 * Slurm will not change is refused saying so, job.json unchanged.
 */
static void a_priority_change_sets_the_qos(void **state)
{
    (void)state;
    fake_qos = json_pack("{s:s, s:s}", "NORMAL", "normal", "HIGH", "high");
    mkjobdir("p");
    const struct route routes[] = {
        {"GET", "/openapi/v3", 200, body_openapi},
        {"GET", "/slurmdb/", 404, body_ok}, /* no slurmdbd: the map decides */
        {"GET", "/jobs", 200, body_p_pending},
        {"POST", "/job/7", 200, body_ok},
    };
    struct routed r = {routes, sizeof routes / sizeof routes[0], {0}, 0};
    struct backend *b = open_fake_with((struct fake *)&r, NULL, routed_transport);
    struct job_update u = {.priority = PRIORITY_HIGH};
    struct jobspec out;
    struct api_error e;
    if (backend_update(b, "p", &u, &out, &e) != BACKEND_OK)
        fail_msg("%s", e.message);
    assert_int_equal(out.scheduling.priority, PRIORITY_HIGH);
    const char *post = routed_call(&r, "POST /slurm/v0.0.38/job/7");
    assert_non_null(post);
    assert_non_null(strstr(post, "{\"qos\":\"high\"}"));
    jobspec_free(&out);
    struct jobspec got;
    assert_int_equal(backend_get(b, "p", &got, &e), BACKEND_OK);
    assert_int_equal(got.scheduling.priority, PRIORITY_HIGH); /* what the job then shows */
    jobspec_free(&got);
    /* HIGHEST: no QOS in the map */
    u.priority = PRIORITY_HIGHEST;
    assert_int_equal(backend_update(b, "p", &u, &out, &e), BACKEND_REJECTED);
    assert_string_equal(e.field, "scheduling.priority");
    assert_non_null(strstr(e.message, "qos: {HIGHEST: <qos>}"));
    backend_free(b);
    routed_free(&r);

    const struct route running[] = {
        {"GET", "/openapi/v3", 200, body_openapi},
        {"GET", "/slurmdb/", 404, body_ok},
        {"GET", "/jobs", 200, body_p_running},
        {"POST", "/job/7", 500, body_not_pending},
    };
    struct routed r2 = {running, sizeof running / sizeof running[0], {0}, 0};
    b = open_fake_with((struct fake *)&r2, NULL, routed_transport);
    u.priority = PRIORITY_NORMAL;
    assert_int_equal(backend_update(b, "p", &u, &out, &e), BACKEND_REJECTED);
    assert_int_equal(e.status, 409);
    assert_non_null(strstr(e.message, "pending job only"));
    assert_non_null(strstr(e.message, "runs on at HIGH"));
    assert_int_equal(backend_get(b, "p", &got, &e), BACKEND_OK);
    assert_int_equal(got.scheduling.priority, PRIORITY_HIGH); /* unchanged */
    jobspec_free(&got);
    backend_free(b);
    routed_free(&r2);
    json_decref(fake_qos);
    fake_qos = NULL;
}

/* Writes events to path: one scalar tag=step:value per pair. */
static void write_events(const char *path, const char *tag, int steps)
{
    struct strbuf sb = STRBUF_INIT;
    for (int i = 1; i <= steps; i++)
        tfevents_write_simple(&sb, i, 1700000000.0 + i, tag, (float)i / 2);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fwrite(sb.buf, 1, sb.len, f);
    fclose(f);
    strbuf_free(&sb);
}

/* job.json of job name: tensorboard.log_path lp, the volume logs mounted at mp. */
static void tb_job(const char *name, const char *mp, const char *lp)
{
    mkjobdir(name);
    char *p = xasprintf("%s/default/%s/job.json", tmpdir, name);
    FILE *f = fopen(p, "w");
    fprintf(f,
            "{\"name\": \"%s\", \"framework\": \"PYTORCH\", \"roles\": [{\"name\": \"Worker\", "
            "\"total_replicas\": 1}], \"mount\": [{\"type\": \"PV_AFS\", \"id\": \"logs\", "
            "\"subdir\": \"/team\", \"mount_path\": \"%s\"}], \"tensorboard\": {\"log_path\": "
            "\"%s\"}}",
            name, mp, lp);
    fclose(f);
    free(p);
}

/*
 * A Slurm job's scalars come from its log path, resolved through its mount
 * to the context's volume on this node (subdir included), page by page from
 * a cursor; a log path turned into a symlink, or a log directory others may
 * write, is refused and nothing of it read.
 */
static void scalars_come_from_the_log_dir_on_the_volume(void **state)
{
    (void)state;
    char *vol = xasprintf("%s/vol", tmpdir);
    char *tb = xasprintf("%s/vol/team/tb", tmpdir);
    char *run0 = xasprintf("%s/vol/team/tb/rank0", tmpdir);
    assert_int_equal(mkdir(vol, 0755), 0);
    char *team = xasprintf("%s/vol/team", tmpdir);
    assert_int_equal(mkdir(team, 0755), 0);
    assert_int_equal(mkdir(tb, 0755), 0);
    assert_int_equal(mkdir(run0, 0755), 0);
    char *ev = xasprintf("%s/events.out.tfevents.1.n", run0);
    write_events(ev, "loss", 3);
    fake_volumes = json_pack("{s:s}", "logs", vol);
    tb_job("t", "/mnt/logs", "/mnt/logs/tb");
    struct fake f = {0};
    fake_answer(&f, 200, fixture_text("openapi-22.05-paths.json"));
    struct backend *b = open_fake(&f, NULL);
    struct scalar_page page;
    struct api_error e;
    if (backend_scalars(b, "t", NULL, 0, &page, &e) != BACKEND_OK)
        fail_msg("%s", e.message);
    assert_int_equal(page.count, 3);
    assert_string_equal(page.points[0].run, "rank0");
    assert_string_equal(page.points[0].tag, "loss");
    assert_string_equal(page.log_path, "/mnt/logs/tb");
    assert_non_null(page.cursor);
    /* From the cursor: only what was written since. */
    char *since = xstrdup(page.cursor);
    scalar_page_free(&page);
    char *ev2 = xasprintf("%s/events.out.tfevents.2.n", run0);
    write_events(ev2, "acc", 1);
    assert_int_equal(backend_scalars(b, "t", since, 0, &page, &e), BACKEND_OK);
    assert_int_equal(page.count, 1);
    assert_string_equal(page.points[0].tag, "acc");
    scalar_page_free(&page);
    free(since);

    /* Not written yet: an empty page, no error. */
    tb_job("later", "/mnt/logs", "/mnt/logs/later");
    assert_int_equal(backend_scalars(b, "later", NULL, 0, &page, &e), BACKEND_OK);
    assert_int_equal(page.count, 0);
    scalar_page_free(&page);

    /* A symlink where the log directory should be: refused, never followed. */
    char *other = xasprintf("%s/theirs", tmpdir);
    assert_int_equal(mkdir(other, 0755), 0);
    char *oev = xasprintf("%s/events.out.tfevents.1.n", other);
    write_events(oev, "secret", 1);
    char *link = xasprintf("%s/vol/team/linked", tmpdir);
    assert_int_equal(symlink(other, link), 0);
    tb_job("l", "/mnt/logs", "/mnt/logs/linked");
    assert_int_equal(backend_scalars(b, "l", NULL, 0, &page, &e), BACKEND_REJECTED);
    assert_int_equal(e.status, 403);
    assert_non_null(strstr(e.message, "symlink"));
    assert_int_equal(page.count, 0);
    scalar_page_free(&page);

    /* A log directory anyone may write: whoever did could have planted its files. */
    assert_int_equal(chmod(tb, 0777), 0);
    assert_int_equal(backend_scalars(b, "t", NULL, 0, &page, &e), BACKEND_REJECTED);
    assert_int_equal(e.status, 403);
    assert_non_null(strstr(e.message, "mode 0777"));
    scalar_page_free(&page);

    /* No log path: said as the engine says it. */
    mkjobdir("none");
    assert_int_equal(backend_scalars(b, "none", NULL, 0, &page, &e), BACKEND_REJECTED);
    assert_int_equal(e.status, 404);
    assert_string_equal(e.reason, "NoTensorBoard");
    scalar_page_free(&page);

    backend_free(b);
    fake_free(&f);
    json_decref(fake_volumes);
    fake_volumes = NULL;
    free(vol);
    free(team);
    free(tb);
    free(run0);
    free(ev);
    free(ev2);
    free(other);
    free(oev);
    free(link);
}

/*
 * validate --context on Slurm: what a submit would refuse, every mount's
 * trouble said at once (the submit itself stops at the first).
 */
static void the_submit_checks_say_every_mount(void **state)
{
    (void)state;
    struct context ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.name = (char *)"lab";
    ctx.driver = CONTEXT_DRIVER_SLURM;
    ctx.jobs_dir = tmpdir;
    ctx.workspace = (char *)"default";
    ctx.volumes = json_pack("{s:s, s:s}", "a", "/shared/a", "b", "/shared/b");
    struct jobspec job;
    small_job(&job, "m");
    struct mount *m = jobspec_add_mount(&job);
    m->id = xstrdup("a");
    m->mount_path = xstrdup("/mnt/a");
    m = jobspec_add_mount(&job);
    m->id = xstrdup("b");
    m->mount_path = xstrdup("/mnt/b");
    job.scheduling.present = true;
    job.scheduling.priority = PRIORITY_HIGH;
    struct findings fs = FINDINGS_INIT;
    slurm_job_findings(&job, &ctx, NULL, &fs);
    bool prio = false, m0 = false, m1 = false;
    for (size_t i = 0; i < fs.count; i++) {
        prio |= strcmp(fs.items[i].path, "scheduling.priority") == 0;
        m0 |= strcmp(fs.items[i].path, "mount[0].mount_path") == 0;
        m1 |= strcmp(fs.items[i].path, "mount[1].mount_path") == 0;
    }
    assert_true(prio);
    assert_true(m0);
    assert_true(m1);
    assert_int_equal(fs.count, 3);
    findings_free(&fs);
    jobspec_free(&job);
    json_decref(ctx.volumes);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(slurm_states_map_to_trainjob_states),
        cmocka_unit_test(a_slurm_context_names_what_the_driver_needs),
        cmocka_unit_test_setup_teardown(the_api_version_is_learnt_once_per_endpoint, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(a_changed_server_is_asked_its_version_again, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(a_planted_version_cache_is_not_used, setup, teardown),
        cmocka_unit_test_setup_teardown(the_last_list_is_kept_for_the_next_process, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(submits_in_a_row_read_the_catalog_once, setup, teardown),
        cmocka_unit_test_setup_teardown(a_refused_token_is_authentication_failed, setup, teardown),
        cmocka_unit_test_setup_teardown(an_expired_token_is_fetched_again_once, setup, teardown),
        cmocka_unit_test_setup_teardown(jobs_are_known_by_their_directory, setup, teardown),
        cmocka_unit_test(state_events_name_the_state_they_reach),
        cmocka_unit_test_setup_teardown(a_forgotten_job_ends_as_its_events_say, setup, teardown),
        cmocka_unit_test_setup_teardown(a_listed_job_has_ready_workers_priority_and_its_creation,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(hostile_events_are_bounded_checked_and_sanitized, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(hostile_worker_records_and_symlinks, setup, teardown),
        cmocka_unit_test_setup_teardown(logs_tail_the_worker_file, setup, teardown),
        cmocka_unit_test_setup_teardown(a_job_json_symlink_is_not_followed, setup, teardown),
        cmocka_unit_test_setup_teardown(a_refused_submit_leaves_no_directory, setup, teardown),
        cmocka_unit_test_setup_teardown(create_checks_the_name_by_its_directory, setup, teardown),
        cmocka_unit_test_setup_teardown(token_file_is_checked_like_a_key, setup, teardown),
        cmocka_unit_test_setup_teardown(lists_ask_only_what_changed, setup, teardown),
        cmocka_unit_test_setup_teardown(stop_and_delete_on_the_loop, setup, teardown),
        cmocka_unit_test_setup_teardown(a_hanging_token_command_times_out, setup, teardown),
        cmocka_unit_test_setup_teardown(a_list_on_the_loop_refreshes_the_token, setup, teardown),
        cmocka_unit_test_setup_teardown(a_hanging_token_command_does_not_block_the_loop, setup,
                                        teardown),
        cmocka_unit_test(render_prints_the_request_the_script_and_the_gaps),
        cmocka_unit_test_setup_teardown(priorities_follow_the_association, setup, teardown),
        cmocka_unit_test_setup_teardown(volumes_are_the_contexts, setup, teardown),
        cmocka_unit_test_setup_teardown(delete_keeps_a_job_that_has_not_ended, setup, teardown),
        cmocka_unit_test_setup_teardown(foreign_slurm_jobs_in_a_job_directory_are_ignored, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(a_job_directory_from_before_marks_keeps_its_job, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(a_job_json_of_another_user_is_never_submitted, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(a_workspace_others_could_swap_in_is_refused, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(a_jobs_reply_over_the_byte_cap_lists_ours, setup, teardown),
        cmocka_unit_test_setup_teardown(another_users_huge_job_does_not_hide_ours, setup, teardown),
        cmocka_unit_test_setup_teardown(fifty_thousand_jobs_of_others_list_ours_in_bounded_memory,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(a_reply_too_large_to_decode_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(the_users_jobs_are_decoded_without_a_tree_each, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(the_version_is_read_once_by_calls_on_the_loop, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(a_refused_submit_slurm_queued_anyway_is_cancelled, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(a_priority_change_sets_the_qos, setup, teardown),
        cmocka_unit_test_setup_teardown(scalars_come_from_the_log_dir_on_the_volume, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(the_submit_checks_say_every_mount, setup, teardown),
    };
    setenv("XDG_CACHE_HOME", NO_CACHE, 1);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
