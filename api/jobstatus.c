/*
 * jobstatus: workers and events as schema tables; see jobstatus.h.
 */
#include "api/jobstatus.h"

#include <stdlib.h>
#include <string.h>

#include "api/schema.h"
#include "util/strbuf.h"
#include "util/timefmt.h"

static const char *const phase_tab[] = {"PHASE_UNSPECIFIED", "Pending", "Running",
                                        "Succeeded",         "Failed",  "Terminating"};
const struct enum_names worker_phase_names = {phase_tab, sizeof phase_tab / sizeof phase_tab[0]};

static const char *const kind_tab[] = {
    "EVENT_UNSPECIFIED", "CREATED",     "STATE",   "SCHEDULED", "WAITING", "FAULT",
    "PREEMPTED",         "NODE_MARKED", "STOPPED", "STARTED",   "WORKER",  "UPDATED",
};
const struct enum_names job_event_kind_names = {kind_tab, sizeof kind_tab / sizeof kind_tab[0]};

static const struct field resources_fields[] = {
    F_STR_MAP(struct container_resources, limits),
    F_STR_MAP(struct container_resources, requests),
    F_EXTRAS(struct container_resources),
};
static const struct object_type resources_type = SCHEMA_OBJ(resources_fields);

static const struct field container_fields[] = {
    F_STR(struct worker_container, name),
    F_SECTION(struct worker_container, resources, resources_type),
    F_STR(struct worker_container, device_type),
    F_EXTRAS(struct worker_container),
};
static const struct object_type container_type =
    SCHEMA_ELEM(struct worker_container, container_fields);

static const struct field last_state_fields[] = {
    F_OPT_INT32(struct worker_last_state, exit_code),
    F_STR(struct worker_last_state, exit_reason),
    F_STR(struct worker_last_state, start_time),
    F_STR(struct worker_last_state, finish_time),
    F_OPT_INT32(struct worker_last_state, rule),
    F_STR(struct worker_last_state, action),
    F_STR(struct worker_last_state, message),
};
const struct object_type worker_last_state_type = SCHEMA_OBJ(last_state_fields);

static const struct field worker_fields[] = {
    F_STR(struct worker_info, uid),
    F_STR(struct worker_info, id),
    F_STR(struct worker_info, name),
    {"namespace", F_STRING, offsetof(struct worker_info, namespace_name), SCHEMA_NO_FLAG, NULL,
     NULL, 0},
    F_STR(struct worker_info, role),
    F_STR(struct worker_info, node_name),
    F_STR(struct worker_info, ip),
    F_STR(struct worker_info, host_ip),
    F_ENUMERATION_KEEP(struct worker_info, phase, worker_phase_names, phase_other),
    F_OPT_INT32(struct worker_info, restarts),
    F_OPT_INT32(struct worker_info, exit_code),
    F_STR(struct worker_info, exit_reason),
    F_STR(struct worker_info, devices),
    F_OPT_BOOL(struct worker_info, simulated),
    F_STR(struct worker_info, create_time),
    F_STR(struct worker_info, start_time),
    F_STR(struct worker_info, finish_time),
    F_STR(struct worker_info, update_time),
    F_LIST(struct worker_info, init_containers, init_container_count, container_type),
    F_LIST(struct worker_info, containers, container_count, container_type),
    F_STR(struct worker_info, node_spec_name),
    F_SECTION(struct worker_info, last_state, worker_last_state_type),
    F_EXTRAS(struct worker_info),
};
static const struct object_type worker_type = SCHEMA_OBJ(worker_fields);

static const struct field event_fields[] = {
    F_I64(struct job_event, id),
    F_STR(struct job_event, time),
    F_ENUMERATION(struct job_event, kind, job_event_kind_names),
    F_STR(struct job_event, job),
    F_STR(struct job_event, worker),
    F_ENUMERATION(struct job_event, state, job_state_names),
    F_OPT_INT32(struct job_event, exit_code),
    F_OPT_INT32(struct job_event, rule),
    F_STR(struct job_event, action),
    F_OPT_INT32(struct job_event, restarts_used),
    F_OPT_INT32(struct job_event, restart_limit),
    F_STR(struct job_event, node),
    F_STR(struct job_event, message),
};
static const struct object_type event_type = SCHEMA_OBJ(event_fields);

const char *worker_phase_text(const struct worker_info *w)
{
    if (w->phase_other && *w->phase_other)
        return w->phase_other;
    return w->phase == WORKER_PHASE_UNSPECIFIED ? "-"
                                                : enum_name(&worker_phase_names, (int)w->phase);
}

bool worker_info_stopped(const struct worker_info *w)
{
    return w->phase_other && strcmp(w->phase_other, "Stopped") == 0;
}

void worker_devices_text(const struct worker_info *w, struct strbuf *out)
{
    if (w->devices && *w->devices) {
        strbuf_addf(out, "%s%s", w->devices, w->simulated ? " (simulated)" : "");
        return;
    }
    long long total = 0;
    const char *type = NULL;
    for (size_t i = 0; i < w->container_count; i++) {
        const struct worker_container *c = &w->containers[i];
        const char *n = json_string_value(json_object_get(c->resources.limits, "device"));
        char *end;
        long long v = n ? strtoll(n, &end, 10) : 0;
        if (n && *n && *end == '\0' && v > 0 && v < 1000000)
            total += v;
        if (c->device_type && *c->device_type && type == NULL)
            type = c->device_type;
    }
    if (total > 0 && type)
        strbuf_addf(out, "%lld \xc3\x97 %s", total, type);
    else if (total > 0)
        strbuf_addf(out, "%lld", total);
}

void worker_last_state_text(const struct worker_last_state *ls, int64_t now_ms, bool compact,
                            struct strbuf *out)
{
    if (!ls->present)
        return;
    size_t start = out->len;
    if (ls->has_exit_code)
        strbuf_addf(out, "exit %d", (int)ls->exit_code);
    if (ls->action && *ls->action) {
        strbuf_adds(out, out->len > start ? " (" : "(");
        strbuf_adds(out, ls->action);
        if (ls->has_rule)
            strbuf_addf(out, ", rule %d)", (int)ls->rule);
        else
            strbuf_adds(out, ", default rule)");
    }
    int64_t ended = ls->finish_time ? time_parse_rfc3339(ls->finish_time) : -1;
    if (ended >= 0) {
        char age[24];
        time_age(now_ms - ended, age, sizeof age);
        strbuf_addf(out, "%s%s%s", out->len > start ? " " : "", age, compact ? "" : " ago");
    }
}

void worker_last_state_free(struct worker_last_state *ls)
{
    schema_free(&worker_last_state_type, ls);
    memset(ls, 0, sizeof *ls);
}

json_t *worker_info_to_json(const struct worker_info *w)
{
    return schema_encode(&worker_type, w);
}

int worker_info_from_json(const json_t *j, struct worker_info *w, struct findings *fs)
{
    return schema_decode(j, &worker_type, w, SCHEMA_LENIENT, "", fs) ? -1 : 0;
}

void worker_info_free(struct worker_info *w)
{
    schema_free(&worker_type, w);
}

void worker_info_copy(struct worker_info *dst, const struct worker_info *src)
{
    memset(dst, 0, sizeof *dst);
    schema_copy(&worker_type, dst, src);
}

bool worker_info_equal(const struct worker_info *a, const struct worker_info *b)
{
    return schema_equal(&worker_type, a, b);
}

void worker_list_free(struct worker_list *l)
{
    for (size_t i = 0; i < l->count; i++)
        worker_info_free(&l->workers[i]);
    free(l->workers);
    memset(l, 0, sizeof *l);
}

json_t *job_event_to_json(const struct job_event *e)
{
    return schema_encode(&event_type, e);
}

int job_event_from_json(const json_t *j, struct job_event *e, struct findings *fs)
{
    return schema_decode(j, &event_type, e, SCHEMA_LENIENT, "", fs) ? -1 : 0;
}

void job_event_free(struct job_event *e)
{
    schema_free(&event_type, e);
}

void job_event_copy(struct job_event *dst, const struct job_event *src)
{
    memset(dst, 0, sizeof *dst);
    schema_copy(&event_type, dst, src);
}

void job_event_list_free(struct job_event_list *l)
{
    for (size_t i = 0; i < l->count; i++)
        job_event_free(&l->events[i]);
    free(l->events);
    memset(l, 0, sizeof *l);
}
