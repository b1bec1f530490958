/*
 * seedjobs: fills a trainjobd state directory with N waiting jobs, fast —
 * the engine opened in process (its loop never runs, so no pass and no
 * worker), every job created through engine_job_create as a POST would,
 * all inside one store transaction. For the scale tests (tests/scale.test.sh)
 * and benchmarks that need 50,000 jobs in seconds, where POSTing them one by
 * one would take minutes.
 *
 *   seedjobs CONFIG STATE_DIR COUNT [PREFIX]
 *
 * CONFIG is written when missing: one node marked unschedulable (nothing
 * ever starts), pool std, spec cpu-1, workspace default owned by the caller.
 * Jobs are named PREFIX-000000 … (PREFIX "s"). Exits 0, or 1 with why.
 */
#include <errno.h>
#include <jansson.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/apierror.h"
#include "engine/engine.h"
#include "engine/state.h"
#include "engine/store.h"
#include "util/fileio.h"
#include "util/loop.h"
#include "util/strbuf.h"

static int write_config(const char *path, const char *user)
{
    if (access(path, F_OK) == 0)
        return 0;
    struct strbuf y = STRBUF_INIT, err = STRBUF_INIT;
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
                "- {name: n1, gpus: 0, cpus: 1000, memory_mib: 10000000, unschedulable: true}\n"
                "pools:\n"
                "- {name: std, type: dedicated}\n"
                "specs:\n"
                "- {name: cpu-1, gpus: 0, cpus: 1, memory_mib: 1}\n"
                "images:\n"
                "- {path: local/host}\n",
                user);
    int rc = file_write_atomic(path, y.buf, y.len, 0600, &err);
    if (rc != 0)
        fprintf(stderr, "seedjobs: %s\n", strbuf_str(&err));
    strbuf_free(&y);
    strbuf_free(&err);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 4 || argc > 5) {
        fprintf(stderr, "usage: seedjobs CONFIG STATE_DIR COUNT [PREFIX]\n");
        return 2;
    }
    char *end;
    long count = strtol(argv[3], &end, 10);
    if (*end || count < 0 || count > 10000000) {
        fprintf(stderr, "seedjobs: COUNT: a number of jobs, not '%s'\n", argv[3]);
        return 2;
    }
    const char *prefix = argc == 5 ? argv[4] : "s";
    struct passwd *pw = getpwuid(getuid());
    const char *user = pw && pw->pw_name ? pw->pw_name : "root";
    if (write_config(argv[1], user) != 0)
        return 1;
    struct loop *lp = loop_new();
    struct engine_options opt = {
        .config_path = argv[1], .state_dir = argv[2], .shim_path = "/bin/false"};
    struct engine *eng = NULL;
    struct strbuf err = STRBUF_INIT, body = STRBUF_INIT;
    int rc = 1;
    if (engine_open(&opt, lp, &eng, &err) != 0) {
        fprintf(stderr, "seedjobs: opening the engine: %s\n", strbuf_str(&err));
        goto out;
    }
    if (store_begin(eng->store, &err) != STORE_OK) {
        fprintf(stderr, "seedjobs: %s\n", strbuf_str(&err));
        goto out;
    }
    for (long i = 0; i < count; i++) {
        char name[64];
        snprintf(name, sizeof name, "%s-%06ld", prefix, i);
        strbuf_reset(&body);
        strbuf_addf(&body,
                    "{\"display_name\":\"%s\",\"framework\":\"PYTORCH_DDP\","
                    "\"resource_pool\":{\"name\":\"std\"},"
                    "\"roles\":[{\"total_replicas\":1,\"resource_spec\":[{\"name\":\"cpu-1\"}],"
                    "\"image_path\":\"local/host\",\"startup_script\":\"true\"}]}",
                    name);
        struct api_error aerr = {0};
        json_t *reply = NULL;
        int st = engine_job_create(eng, user, "default", name, body.buf, body.len, &reply, &aerr);
        json_decref(reply);
        if (st != 200) {
            fprintf(stderr, "seedjobs: creating %s: %d %s\n", name, st, aerr.message);
            store_rollback(eng->store);
            goto out;
        }
    }
    if (store_commit(eng->store, &err) != STORE_OK) {
        fprintf(stderr, "seedjobs: %s\n", strbuf_str(&err));
        goto out;
    }
    rc = 0;
out:
    engine_close(eng);
    loop_free(lp);
    strbuf_free(&err);
    strbuf_free(&body);
    return rc;
}
