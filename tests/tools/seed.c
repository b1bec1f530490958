/*
 * seed: the engine.yaml of a seeded engine and N jobs created in process,
 * shared by tests/tools/seedjobs, bench/bench_lists and bench/bench_engine
 * (see seed.h).
 */
#include "tests/tools/seed.h"

#include <jansson.h>
#include <pwd.h>
#include <stdio.h>
#include <unistd.h>

#include "api/apierror.h"
#include "engine/engine.h"
#include "engine/state.h"
#include "engine/store.h"
#include "util/fileio.h"
#include "util/loop.h"

const char *seed_user(void)
{
    struct passwd *pw = getpwuid(getuid());
    return pw && pw->pw_name ? pw->pw_name : "root";
}

int seed_write_config(const char *path, const char *user, bool unschedulable, struct strbuf *err)
{
    struct strbuf y = STRBUF_INIT;
    strbuf_addf(&y,
                "subscription: local\n"
                "resource_group: default\n"
                "zone: local-1z\n"
                "regions:\n"
                "- name: local-1\n"
                "  zones: [local-1z]\n"
                "  vpcs: [vpc-local]\n"
                "workspaces:\n"
                "- name: default\n"
                "  owners: [%s]\n"
                "nodes:\n"
                "- {name: n1, gpus: 0, cpus: 1000, memory_mib: 10000000%s}\n"
                "pools:\n"
                "- {name: std, type: dedicated}\n"
                "specs:\n"
                "- {name: cpu-1, gpus: 0, cpus: 1, memory_mib: 64}\n"
                "images:\n"
                "- {path: local/host}\n",
                user, unschedulable ? ", unschedulable: true" : "");
    int rc = file_write_atomic(path, y.buf, y.len, 0600, err);
    strbuf_free(&y);
    return rc ? -1 : 0;
}

void seed_job_body(struct strbuf *sb, const char *name, int replicas, const char *script)
{
    strbuf_reset(sb);
    strbuf_addf(sb,
                "{\"display_name\":\"%s\",\"framework\":\"PYTORCH_DDP\","
                "\"resource_pool\":{\"name\":\"std\"},"
                "\"roles\":[{\"total_replicas\":%d,\"resource_spec\":[{\"name\":\"cpu-1\"}],"
                "\"image_path\":\"local/host\",\"startup_script\":\"%s\"}]}",
                name, replicas, script);
}

int seed_jobs(const char *config, const char *state_dir, const char *user, const char *prefix,
              int digits, long n, struct strbuf *err)
{
    struct loop *lp = loop_new();
    struct engine_options opt = {
        .config_path = config, .state_dir = state_dir, .shim_path = "/bin/false"};
    struct engine *eng = NULL;
    struct strbuf body = STRBUF_INIT;
    int rc = -1;
    if (engine_open(&opt, lp, &eng, err) != 0)
        goto out;
    if (store_begin(eng->store, err) != STORE_OK)
        goto out;
    for (long i = 0; i < n; i++) {
        char name[64];
        snprintf(name, sizeof name, "%s-%0*ld", prefix, digits, i);
        seed_job_body(&body, name, 1, "true");
        struct api_error aerr = {0};
        json_t *reply = NULL;
        int st = engine_job_create(eng, user, "default", name, body.buf, body.len, &reply, &aerr);
        json_decref(reply);
        if (st != 200) {
            strbuf_reset(err);
            strbuf_addf(err, "creating %s: %d %s", name, st, aerr.message);
            store_rollback(eng->store);
            goto out;
        }
    }
    if (store_commit(eng->store, err) != STORE_OK)
        goto out;
    rc = 0;
out:
    engine_close(eng);
    loop_free(lp);
    strbuf_free(&body);
    return rc;
}
