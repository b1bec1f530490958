/*
 * worker_env: the variables a worker starts with, its name and the MPI
 * hostfile (see worker_env.h for the full list and the order).
 *
 * Owns nothing beyond the struct envv arrays it hands out. trainjobd calls
 * worker_env_build once per worker start and passes env.v to runner_start as
 * the worker's whole environment.
 */
#include "engine/worker_env.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/jobspec.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

/* The index of the entry named name (name is name_len bytes), or -1. */
static long envv_find(const struct envv *e, const char *name, size_t name_len)
{
    for (size_t i = 0; i < e->n; i++) {
        if (strncmp(e->v[i], name, name_len) == 0 && e->v[i][name_len] == '=')
            return (long)i;
    }
    return -1;
}

/* Stores an owned "NAME=value" string, replacing the entry with the same name. */
static void envv_put(struct envv *e, char *entry)
{
    const char *eq = strchr(entry, '=');
    size_t name_len = eq ? (size_t)(eq - entry) : strlen(entry);
    long at = envv_find(e, entry, name_len);
    if (at >= 0) {
        free(e->v[at]);
        e->v[at] = entry;
        return;
    }
    if (e->n + 2 > e->cap) {
        e->cap = e->cap ? e->cap * 2 : 32;
        e->v = xreallocarray(e->v, e->cap, sizeof(*e->v));
    }
    e->v[e->n++] = entry;
    e->v[e->n] = NULL;
}

void envv_set(struct envv *e, const char *name, const char *value)
{
    envv_put(e, xasprintf("%s=%s", name, value ? value : ""));
}

void envv_free(struct envv *e)
{
    for (size_t i = 0; i < e->n; i++)
        free(e->v[i]);
    free(e->v);
    e->v = NULL;
    e->n = e->cap = 0;
}

const char *envv_get(const struct envv *e, const char *name)
{
    long at = envv_find(e, name, strlen(name));
    return at >= 0 ? e->v[at] + strlen(name) + 1 : NULL;
}

/* Worker i's address: from hosts, else master_addr, else loopback. */
static const char *place_host(const struct worker_place *place, int i)
{
    if (place->hosts && place->hosts[i])
        return place->hosts[i];
    return place->master_addr ? place->master_addr : "127.0.0.1";
}

/* Worker i's port: from ports, else master_port + i. */
static int place_port(const struct worker_place *place, int i)
{
    return place->ports ? place->ports[i] : place->master_port + i;
}

/* "host:port" of workers first .. replicas-1 as a JSON array. */
static json_t *address_array(const struct worker_place *place, int first)
{
    json_t *a = json_array();
    for (int i = first; i < place->replicas; i++) {
        char *addr = xasprintf("%s:%d", place_host(place, i), place_port(place, i));
        json_array_append_new(a, json_string(addr));
        free(addr);
    }
    return a;
}

/*
 * TF_CONFIG for TensorFlow: with a parameter server (ps), worker 0 is the ps
 * and the others are workers 0…; without, every worker is a worker.
 */
static char *tf_config(const struct worker_place *place, bool with_ps)
{
    json_t *cluster = json_object();
    json_t *task = json_object();
    if (with_ps) {
        json_t *ps = json_array();
        char *addr = xasprintf("%s:%d", place_host(place, 0), place_port(place, 0));
        json_array_append_new(ps, json_string(addr));
        free(addr);
        json_object_set_new(cluster, "ps", ps);
        if (place->replicas > 1)
            json_object_set_new(cluster, "worker", address_array(place, 1));
        json_object_set_new(task, "type", json_string(place->index == 0 ? "ps" : "worker"));
        json_object_set_new(task, "index", json_integer(place->index == 0 ? 0 : place->index - 1));
    } else {
        json_object_set_new(cluster, "worker", address_array(place, 0));
        json_object_set_new(task, "type", json_string("worker"));
        json_object_set_new(task, "index", json_integer(place->index));
    }
    json_t *root = json_object();
    json_object_set_new(root, "cluster", cluster);
    json_object_set_new(root, "task", task);
    char *s = json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(root);
    if (!s)
        xalloc_die();
    char *owned = xstrdup(s);
    free(s);
    return owned;
}

/* Sets name to a decimal integer. */
static void envv_set_int(struct envv *e, const char *name, long value)
{
    char num[32];
    snprintf(num, sizeof(num), "%ld", value);
    envv_set(e, name, num);
}

void worker_env_build(const struct jobspec *job, const struct worker_place *place,
                      const char *const *base, struct envv *env)
{
    for (size_t i = 0; base && base[i]; i++) {
        if (strchr(base[i], '=') && base[i][0] != '=')
            envv_put(env, xstrdup(base[i]));
    }

    envv_set(env, "ECP_JOB_NAME", job->name ? job->name : "");

    if (framework_pytorch_style(job->framework)) {
        envv_set(env, "MASTER_ADDR", place_host(place, 0));
        envv_set_int(env, "MASTER_PORT", place->master_port);
        envv_set_int(env, "WORLD_SIZE", place->replicas);
        envv_set_int(env, "RANK", place->index);
        envv_set_int(env, "NODE_RANK", place->index);
        envv_set_int(env, "LOCAL_RANK", 0);
    } else if (job->framework == FRAMEWORK_TENSORFLOW_PS ||
               job->framework == FRAMEWORK_TENSORFLOW) {
        char *tf = tf_config(place, job->framework == FRAMEWORK_TENSORFLOW_PS);
        envv_set(env, "TF_CONFIG", tf);
        free(tf);
    } else if (job->framework == FRAMEWORK_MPI && place->hostfile) {
        envv_set(env, "TRAINJOB_HOSTFILE", place->hostfile);
        envv_set(env, "OMPI_MCA_orte_default_hostfile", place->hostfile);
    }

    const char *devices = place->devices ? place->devices : "";
    envv_set(env, "CUDA_VISIBLE_DEVICES", devices);
    envv_set(env, "NVIDIA_VISIBLE_DEVICES", devices[0] ? devices : "none");

    char name[64];
    jobspec_worker_name(job, place->index, name, sizeof(name));
    envv_set(env, "TRAINJOB_WORKER_NAME", name);
    if (place->ssh_dir)
        envv_set(env, "TRAINJOB_SSH_DIR", place->ssh_dir);

    for (size_t i = 0; i < job->env_count; i++) {
        if (job->env[i].key && job->env[i].key[0])
            envv_set(env, job->env[i].key, job->env[i].value);
    }
}

void worker_hostfile(const struct worker_place *place, int slots, struct strbuf *out)
{
    for (int i = 0; i < place->replicas; i++)
        strbuf_addf(out, "%s slots=%d\n", place_host(place, i), slots);
}
