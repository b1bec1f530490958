/*
 * slurm_shapes: the version table of slurmrestd's JSON and the codecs that
 * read a job and build a submit through it; see slurm_shapes.h. Called by
 * the slurm driver (api/slurm.c) and its unit tests.
 */
#include "api/slurm_shapes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/apierror.h"
#include "api/jobsum.h"
#include "api/jsonbound.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#define MAX_ALLOC 4096 /* allocated nodes read per job: more is a server looping */

const struct slurm_shape slurm_shapes[] = {
    {"v0.0.38", false, false, false, "exclude_nodes", "gres", "gpu:"},
    {"v0.0.40", true, true, true, "excluded_nodes", "tres_per_node", "gres/gpu:"},
};
const size_t slurm_shape_count = sizeof slurm_shapes / sizeof slurm_shapes[0];

const struct slurm_shape *slurm_shape_find(const char *version)
{
    for (size_t i = 0; version && i < slurm_shape_count; i++)
        if (strcmp(slurm_shapes[i].version, version) == 0)
            return &slurm_shapes[i];
    return NULL;
}

/* True when the document has a path "/slurm/<version>/ping" (with or without a trailing '/'). */
static bool offers(const json_t *paths, const char *version)
{
    char a[64], b[64];
    snprintf(a, sizeof a, "/slurm/%s/ping", version);
    snprintf(b, sizeof b, "/slurm/%s/ping/", version);
    return json_object_get(paths, a) || json_object_get(paths, b);
}

const struct slurm_shape *slurm_shape_choose(const json_t *openapi, struct strbuf *why)
{
    const json_t *paths = json_object_get(openapi, "paths");
    if (!json_is_object(paths)) {
        strbuf_adds(why, "the server's /openapi/v3 has no paths");
        return NULL;
    }
    const struct slurm_shape *pick = NULL;
    if (offers(paths, "v0.0.38"))
        pick = slurm_shape_find("v0.0.38");
    for (size_t i = slurm_shape_count; pick == NULL && i-- > 0;)
        if (offers(paths, slurm_shapes[i].version))
            pick = &slurm_shapes[i];
    if (pick)
        return pick;
    strbuf_adds(why, "the server offers no API version trainjob speaks (it speaks");
    for (size_t i = 0; i < slurm_shape_count; i++)
        strbuf_addf(why, " %s", slurm_shapes[i].version);
    strbuf_adds(why, "); it offers:");
    const char *key;
    json_t *v;
    int shown = 0;
    json_object_foreach((json_t *)paths, key, v)
    {
        const char *p = strstr(key, "/ping");
        if (strncmp(key, "/slurm/", 7) == 0 && p && shown++ < 8)
            strbuf_addf(why, " %.*s", (int)(p - key - 7) > 0 ? (int)(p - key - 7) : 0, key + 7);
    }
    if (shown == 0)
        strbuf_adds(why, " none");
    return NULL;
}

bool slurm_number(const json_t *v, int64_t *out)
{
    if (json_is_integer(v)) {
        *out = json_integer_value(v);
        return true;
    }
    if (json_is_object(v)) {
        if (!json_is_true(json_object_get(v, "set")) ||
            json_is_true(json_object_get(v, "infinite")))
            return false;
        const json_t *n = json_object_get(v, "number");
        if (!json_is_integer(n))
            return false;
        *out = json_integer_value(n);
        return true;
    }
    return false;
}

/* job_state_string()'s order: a flag wins over the base state. */
static const char *const state_flags[] = {
    "COMPLETING",   "STAGE_OUT",    "CONFIGURING", "RESIZING", "REQUEUED",      "REQUEUE_FED",
    "REQUEUE_HOLD", "SPECIAL_EXIT", "STOPPED",     "REVOKED",  "RESV_DEL_HOLD", "SIGNALING",
};

/* "gpu:2(IDX:0-1)" → "0-1"; NULL when there is no index list. */
static char *gpu_index(const char *detail)
{
    const char *p = detail ? strstr(detail, "(IDX:") : NULL;
    if (p == NULL)
        return NULL;
    p += 5;
    size_t n = strcspn(p, ")");
    if (p[n] != ')' || n == 0 || n > 256)
        return NULL;
    for (size_t i = 0; i < n; i++)
        if (!((p[i] >= '0' && p[i] <= '9') || p[i] == '-' || p[i] == ','))
            return NULL;
    return xstrndup(p, n);
}

const char *const slurm_job_fields[] = {
    "job_id",      "name",       "job_state",   "state_reason",
    "partition",   "qos",        "nodes",       "current_working_directory",
    "user_name",   "comment",    "restart_cnt", "exit_code",
    "submit_time", "start_time", "end_time",    "job_resources",
    "gres_detail", NULL,
};

/* Bit f set: slurm_job_fields[f] is that many bytes long (the member compared only then). */
#define F(f) (1u << SLURM_JOB_##f)
static const uint32_t fields_by_len[32] = {
    [3] = F(QOS),
    [4] = F(NAME),
    [5] = F(NODES),
    [6] = F(ID),
    [7] = F(COMMENT),
    [8] = F(END),
    [9] = F(STATE) | F(PARTITION) | F(USER) | F(EXIT),
    [10] = F(START),
    [11] = F(RESTARTS) | F(SUBMIT) | F(GRES),
    [12] = F(REASON),
    [13] = F(RESOURCES),
    [25] = F(CWD),
};
#undef F

int slurm_job_field(const char *key, size_t key_len)
{
    for (uint32_t m = key_len < 32 ? fields_by_len[key_len] : 0; m; m &= m - 1) {
        int f = __builtin_ctz(m);
        if (slurm_job_fields[f][0] == key[0] && memcmp(slurm_job_fields[f], key, key_len) == 0)
            return f;
    }
    return -1;
}

/* A member's value span: the last one of a key wins, as in the element. */
struct span {
    const char *v;
    size_t n;
};

/* The spans of the members named in keys (NULL-terminated; at most 4) of an object's text. */
struct picked {
    const char *const *keys;
    struct span got[4];
};

static int pick_member(void *ctx, const char *key, size_t key_len, const char *value,
                       size_t value_len)
{
    struct picked *p = ctx;
    for (size_t i = 0; p->keys[i]; i++)
        if (strlen(p->keys[i]) == key_len && memcmp(p->keys[i], key, key_len) == 0)
            p->got[i] = (struct span){value, value_len};
    return 0;
}

/* Fills p->got from the object v (nothing when v is no object). */
static void pick(struct span v, struct picked *p)
{
    memset(p->got, 0, sizeof p->got);
    if (v.v == NULL || v.n == 0 || v.v[0] != '{')
        return;
    struct api_error e;
    (void)jobsum_members(v.v, v.n, pick_member, p, &e);
}

static bool is_true(struct span v)
{
    return v.n == 4 && memcmp(v.v, "true", 4) == 0;
}

/* slurm_number of a span: an integer plain or {set, infinite, number}. */
static bool number_of(struct span v, int64_t *out)
{
    long long n;
    if (v.v == NULL)
        return false;
    if (v.v[0] != '{') {
        if (!jobsum_integer(v.v, v.n, &n))
            return false;
        *out = n;
        return true;
    }
    static const char *const keys[] = {"set", "infinite", "number", NULL};
    struct picked p = {keys, {{0}}};
    pick(v, &p);
    if (!is_true(p.got[0]) || is_true(p.got[1]) || p.got[2].v == NULL ||
        !jobsum_integer(p.got[2].v, p.got[2].n, &n))
        return false;
    *out = n;
    return true;
}

static char *string_of(struct span v)
{
    char *s = NULL;
    if (v.v && v.v[0] == '"')
        (void)jobsum_string(v.v, v.n, &s);
    return s;
}

/* v0.0.40's list of words, read: the flag that wins (its index), the first word. */
struct state_words {
    size_t flag; /* index in state_flags; the count: none */
    bool at_first;
    char *first;
};

static int state_word(void *ctx, const char *elem, size_t len)
{
    struct state_words *w = ctx;
    char *s = string_of((struct span){elem, len});
    for (size_t f = 0; s && f < w->flag; f++)
        if (strcmp(s, state_flags[f]) == 0)
            w->flag = f;
    if (w->at_first)
        w->first = s;
    else
        free(s);
    w->at_first = false;
    return 0;
}

static char *state_of_words(struct span v)
{
    struct state_words w = {sizeof state_flags / sizeof state_flags[0], true, NULL};
    (void)jsonbound_elements(v.v, 0, v.n, state_word, &w);
    if (w.flag < sizeof state_flags / sizeof state_flags[0]) {
        free(w.first);
        return xstrdup(state_flags[w.flag]);
    }
    return w.first;
}

/* exit_code: v0.0.40's object (return_code, signal.id) or v0.0.38's raw wait status. */
static void exit_of(struct span v, struct slurm_job *out)
{
    if (v.v == NULL)
        return;
    if (v.v[0] == '{') {
        static const char *const keys[] = {"return_code", "signal", NULL};
        static const char *const id[] = {"id", NULL};
        struct picked p = {keys, {{0}}}, sig = {id, {{0}}};
        pick(v, &p);
        pick(p.got[1], &sig);
        int64_t rc = 0, s = 0;
        bool has_rc = number_of(p.got[0], &rc), has_sig = number_of(sig.got[0], &s);
        if (!has_rc && !has_sig)
            return;
        out->has_exit = true;
        out->exit_status = has_rc ? (int)(rc & 0xff) : 0;
        out->exit_signal = has_sig ? (int)(s & 0x7f) : 0;
        return;
    }
    long long w;
    if (jobsum_integer(v.v, v.n, &w) && w >= 0 && w <= 0xffff) {
        /* The raw wait status: 768 is exit 3, 9 is SIGKILL. */
        out->has_exit = true;
        out->exit_signal = (int)(w & 0x7f);
        out->exit_status = out->exit_signal ? 0 : (int)((w >> 8) & 0xff);
    }
}

/* The spans of an array's first max elements (grown as they come: a hostile list stops at max). */
struct elems {
    struct span *at;
    size_t count, cap, max;
};

static int elem_span(void *ctx, const char *elem, size_t len)
{
    struct elems *e = ctx;
    if (e->count == e->max)
        return 1;
    if (e->count == e->cap) {
        e->cap = e->cap ? e->cap * 2 : 8;
        e->at = xreallocarray(e->at, e->cap, sizeof *e->at);
    }
    e->at[e->count++] = (struct span){elem, len};
    return 0;
}

/* The first max elements of the array v (none when v is no array); the caller frees e->at. */
static void elems_of(struct span v, size_t max, struct elems *e)
{
    memset(e, 0, sizeof *e);
    e->max = max;
    if (v.v != NULL && v.v[0] == '[')
        (void)jsonbound_elements(v.v, 0, v.n, elem_span, e);
}

/* job_resources.allocated_nodes (at most MAX_ALLOC) with gres_detail's entry of the same index. */
static void alloc_of(struct span res, struct span gres, struct slurm_job *out)
{
    static const char *const keys[] = {"allocated_nodes", NULL};
    static const char *const node_keys[] = {"nodename", "cpus_used", NULL};
    struct picked r = {keys, {{0}}};
    pick(res, &r);
    if (r.got[0].v == NULL || r.got[0].v[0] != '[')
        return;
    struct elems nodes, g;
    elems_of(r.got[0], MAX_ALLOC, &nodes);
    elems_of(gres, nodes.count, &g);
    out->alloc = xcalloc(nodes.count ? nodes.count : 1, sizeof *out->alloc);
    for (size_t i = 0; i < nodes.count; i++) {
        struct picked a = {node_keys, {{0}}};
        pick(nodes.at[i], &a);
        char *name = string_of(a.got[0]);
        if (name == NULL)
            continue;
        struct slurm_alloc *al = &out->alloc[out->alloc_count++];
        al->node = name;
        int64_t cpus = 0;
        if (number_of(a.got[1], &cpus) && cpus >= 0 && cpus < 1 << 20)
            al->cpus = (int)cpus;
        char *detail = i < g.count ? string_of(g.at[i]) : NULL;
        al->gpus = gpu_index(detail);
        free(detail);
    }
    free(nodes.at);
    free(g.at);
}

int slurm_job_decode_text(const struct slurm_shape *s, const struct slurm_job_text *t,
                          struct slurm_job *out, struct strbuf *err)
{
    (void)s; /* either version's form is read, whichever the server speaks */
    memset(out, 0, sizeof *out);
#define AT(f) ((struct span){t->value[SLURM_JOB_##f], t->len[SLURM_JOB_##f]})
    int64_t v;
    if (!number_of(AT(ID), &v) || v <= 0) {
        strbuf_adds(err, "a job without an integer job_id");
        return -1;
    }
    out->id = v;
    out->name = string_of(AT(NAME));
    struct span st = AT(STATE);
    out->state = st.v && st.v[0] == '[' ? state_of_words(st) : string_of(st);
    out->reason = string_of(AT(REASON));
    out->partition = string_of(AT(PARTITION));
    out->qos = string_of(AT(QOS));
    out->nodes = string_of(AT(NODES));
    out->cwd = string_of(AT(CWD));
    out->user = string_of(AT(USER));
    out->comment = string_of(AT(COMMENT));
    if (number_of(AT(RESTARTS), &v) && v >= 0 && v < INT32_MAX)
        out->restarts = (int32_t)v;
    exit_of(AT(EXIT), out);
    if (number_of(AT(SUBMIT), &v) && v > 0)
        out->submit_time = v;
    if (number_of(AT(START), &v) && v > 0)
        out->start_time = v;
    if (number_of(AT(END), &v) && v > 0)
        out->end_time = v;
    alloc_of(AT(RESOURCES), AT(GRES), out);
#undef AT
    return 0;
}

static int text_member(void *ctx, const char *key, size_t key_len, const char *value,
                       size_t value_len)
{
    struct slurm_job_text *t = ctx;
    int f = slurm_job_field(key, key_len);
    if (f >= 0) {
        t->value[f] = value;
        t->len[f] = value_len;
    }
    return 0;
}

int slurm_job_decode_element(const struct slurm_shape *s, const char *text, size_t len,
                             struct slurm_job *out, struct strbuf *err)
{
    struct slurm_job_text t;
    memset(&t, 0, sizeof t);
    struct api_error e;
    if (jobsum_members(text, len, text_member, &t, &e) != 0) {
        memset(out, 0, sizeof *out);
        strbuf_adds(err, e.message);
        return -1;
    }
    return slurm_job_decode_text(s, &t, out, err);
}

int slurm_job_decode(const struct slurm_shape *s, const json_t *j, struct slurm_job *out,
                     struct strbuf *err)
{
    /* One decoder: a job of a reply held as a tree (a submit's checks) is read from its text. */
    char *text = json_is_object(j) ? json_dumps(j, JSON_COMPACT) : NULL;
    if (text == NULL) {
        memset(out, 0, sizeof *out);
        strbuf_adds(err, "a job without an integer job_id");
        return -1;
    }
    int rc = slurm_job_decode_element(s, text, strlen(text), out, err);
    free(text);
    return rc;
}

void slurm_job_free(struct slurm_job *j)
{
    free(j->name);
    free(j->state);
    free(j->reason);
    free(j->partition);
    free(j->qos);
    free(j->nodes);
    free(j->cwd);
    free(j->user);
    free(j->comment);
    for (size_t i = 0; i < j->alloc_count; i++) {
        free(j->alloc[i].node);
        free(j->alloc[i].gpus);
    }
    free(j->alloc);
    memset(j, 0, sizeof *j);
}

/* A number as the version writes it on submit. */
static json_t *number(const struct slurm_shape *s, int64_t n)
{
    if (!s->numbers_wrapped)
        return json_integer(n);
    json_t *o = json_object();
    json_object_set_new(o, "set", json_true());
    json_object_set_new(o, "infinite", json_false());
    json_object_set_new(o, "number", json_integer(n));
    return o;
}

json_t *slurm_submit_body(const struct slurm_shape *s, const struct slurm_submit *sub,
                          const char *script)
{
    json_t *job = json_object();
    if (sub->name)
        json_object_set_new(job, "name", json_string(sub->name));
    if (sub->partition)
        json_object_set_new(job, "partition", json_string(sub->partition));
    if (sub->qos && *sub->qos)
        json_object_set_new(job, "qos", json_string(sub->qos));
    if (s->nodes_string) {
        char n[16];
        snprintf(n, sizeof n, "%d", sub->nodes);
        json_object_set_new(job, "nodes", json_string(n));
    } else {
        json_object_set_new(job, "nodes", json_integer(sub->nodes));
    }
    json_object_set_new(job, "tasks_per_node", json_integer(1));
    if (sub->gpus_per_node > 0) {
        char g[32];
        snprintf(g, sizeof g, "%s%d", s->gpus_prefix, sub->gpus_per_node);
        json_object_set_new(job, s->gpus_key, json_string(g));
    }
    if (sub->cpus_per_task > 0)
        json_object_set_new(job, "cpus_per_task", json_integer(sub->cpus_per_task));
    if (sub->memory_mb > 0)
        json_object_set_new(job, "memory_per_node", number(s, sub->memory_mb));
    json_object_set_new(job, "requeue", json_boolean(sub->requeue));
    if (sub->exclude && *sub->exclude)
        json_object_set_new(job, s->exclude_key, json_string(sub->exclude));
    if (sub->cwd)
        json_object_set_new(job, "current_working_directory", json_string(sub->cwd));
    if (sub->comment)
        json_object_set_new(job, "comment", json_string(sub->comment));
    if (sub->standard_output)
        json_object_set_new(job, "standard_output", json_string(sub->standard_output));
    if (sub->standard_error)
        json_object_set_new(job, "standard_error", json_string(sub->standard_error));
    json_t *env = s->env_list ? json_array() : json_object();
    for (size_t i = 0; i < sub->env_count; i++) {
        const char *kv = sub->env[i];
        const char *eq = strchr(kv, '=');
        if (eq == NULL || eq == kv)
            continue;
        if (s->env_list) {
            json_array_append_new(env, json_string(kv));
        } else {
            char *k = xstrndup(kv, (size_t)(eq - kv));
            json_object_set_new(env, k, json_string(eq + 1));
            free(k);
        }
    }
    json_object_set_new(job, "environment", env);
    return json_pack("{s:s, s:o}", "script", script ? script : "", "job", job);
}
