/*
 * apierror: ACP's error shape both ways; see apierror.h.
 */
#include "api/apierror.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "util/strbuf.h"
#include "util/utf8.h"

static void copy(char *dst, size_t size, const char *src)
{
    snprintf(dst, size, "%s", src ? src : "");
}

int api_error_set(struct api_error *err, int status, const char *reason, const char *field,
                  const char *fmt, ...)
{
    err->status = status;
    copy(err->reason, sizeof err->reason, reason);
    copy(err->field, sizeof err->field, field);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    return status;
}

/* A JSON string of s; text that is not UTF-8 (a message cut inside a character, say) is repaired,
 * never lost. */
static json_t *text_json(const char *s)
{
    json_t *j = json_string(s);
    if (j)
        return j;
    struct strbuf sb = STRBUF_INIT;
    utf8_sanitize(&sb, s, strlen(s), UTF8_KEEP_NEWLINE | UTF8_KEEP_TAB);
    j = json_string(strbuf_str(&sb));
    strbuf_free(&sb);
    return j ? j : json_string("");
}

json_t *api_error_to_json(const struct api_error *err)
{
    json_t *detail = json_object();
    json_object_set_new(detail, "reason", text_json(err->reason));
    if (err->field[0])
        json_object_set_new(detail, "field", text_json(err->field));
    json_t *details = json_array();
    json_array_append_new(details, detail);
    json_t *root = json_object();
    json_object_set_new(root, "code", json_integer(err->status));
    json_object_set_new(root, "message", text_json(err->message));
    json_object_set_new(root, "details", details);
    return root;
}

static const char *status_text(int status)
{
    switch (status) {
    case 400:
        return "bad request";
    case 401:
        return "not authenticated";
    case 403:
        return "not allowed";
    case 404:
        return "not found";
    case 409:
        return "conflict";
    case 413:
        return "request too large";
    case 500:
        return "server error";
    case 503:
        return "service unavailable";
    }
    return "request failed";
}

/* Reasons SenseCore is known to give (its REST contract's error reasons), and what to do. */
static const struct {
    const char *reason;
    const char *hint;
} hints[] = {
    {"tjRequiredStartupScript",
     "the Worker role needs a startup script (roles[0].startup_script): ACP does not run the "
     "image's entrypoint"},
    {"tjInvalidQuotaTypeInAec2",
     "this pool has no idle (SPOT) quota: choose a pool with idle quota, or standard resources "
     "(scheduling.quota_type RESERVED)"},
    {"wsImmutableJobEnabled",
     "this workspace does not allow restarting stopped jobs: clone the job into a new one"},
    {"MEMBER_QUOTA_EXCEEDED",
     "the workspace's quota is used up: wait for running jobs to end, stop one, or use idle "
     "(SPOT) resources"},
    {"ExpiredPodToken", "the log token expired: ask for the logs again"},
    {"ExpiredToken", "the log token expired: ask for the logs again"},
    {"PodTokenExpired", "the log token expired: ask for the logs again"},
};

const char *api_error_hint(const char *reason)
{
    for (size_t i = 0; reason && i < sizeof hints / sizeof hints[0]; i++)
        if (strcmp(hints[i].reason, reason) == 0)
            return hints[i].hint;
    return NULL;
}

/* Appends text to err->message, cut when it is full. */
void api_error_append(struct api_error *err, const char *fmt, ...)
{
    size_t n = strlen(err->message);
    if (n + 1 >= sizeof err->message)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message + n, sizeof err->message - n, fmt, ap);
    va_end(ap);
}

/* Adds one detail (when it says anything and there is room). */
static void add_detail(struct api_error *err, const char *reason, const char *field,
                       const char *message)
{
    if (err->detail_count == API_ERROR_MAX_DETAILS ||
        (reason == NULL && field == NULL && (message == NULL || *message == '\0')))
        return;
    struct api_error_detail *e = &err->details[err->detail_count++];
    copy(e->reason, sizeof e->reason, reason);
    copy(e->field, sizeof e->field, field);
    copy(e->message, sizeof e->message, message);
}

/*
 * Every entry of details[] that names a reason, a field or says something,
 * in order; a google.rpc BadRequest's field_violations one by one.
 */
static void read_details(struct api_error *err, const json_t *details)
{
    size_t i, k;
    const json_t *d, *v;
    json_array_foreach(details, i, d)
    {
        const json_t *violations = json_object_get(d, "field_violations");
        if (!json_is_array(violations))
            violations = json_object_get(d, "fieldViolations");
        json_array_foreach(violations, k, v)
            add_detail(err, json_string_value(json_object_get(d, "reason")),
                       json_string_value(json_object_get(v, "field")),
                       json_string_value(json_object_get(v, "description")));
        if (json_array_size(violations) > 0)
            continue;
        const char *message = json_string_value(json_object_get(d, "message"));
        if (message == NULL)
            message = json_string_value(json_object_get(d, "description"));
        add_detail(err, json_string_value(json_object_get(d, "reason")),
                   json_string_value(json_object_get(d, "field")), message);
    }
    if (err->detail_count) {
        copy(err->reason, sizeof err->reason, err->details[0].reason);
        copy(err->field, sizeof err->field, err->details[0].field);
    }
}

/* After the message: what each detail says, the further details, then what to do for each reason.
 */
static void explain(struct api_error *err)
{
    const struct api_error_detail *first = &err->details[0];
    if (err->detail_count && first->message[0] && strstr(err->message, first->message) == NULL)
        api_error_append(err, ": %s", first->message);
    for (size_t i = 1; i < err->detail_count; i++) {
        const struct api_error_detail *d = &err->details[i];
        api_error_append(err, "%s%s%s%s%s%s", i == 1 ? "; also: " : ", ", d->reason,
                         d->field[0] && d->reason[0] ? " at " : "", d->field,
                         d->message[0] && (d->reason[0] || d->field[0]) ? ": " : "", d->message);
    }
    for (size_t i = 0; i < err->detail_count; i++) {
        const char *hint = api_error_hint(err->details[i].reason);
        bool again = false;
        for (size_t k = 0; k < i && hint; k++)
            again = again || api_error_hint(err->details[k].reason) == hint;
        if (hint && !again)
            api_error_append(err, " (%s: %s)", err->details[i].reason, hint);
    }
    /* what the message shows goes to the screen: never half a character */
    size_t n = strlen(err->message);
    while (n > 0 && !utf8_valid(err->message, n))
        err->message[--n] = '\0';
}

void api_error_from_body(struct api_error *err, int status, const char *body, size_t len)
{
    memset(err, 0, sizeof *err);
    err->status = status;
    json_t *j = body && len ? json_loadb(body, len, 0, NULL) : NULL;
    /* google.rpc.Status, bare or wrapped as {"error": {…}} */
    const json_t *root =
        json_is_object(json_object_get(j, "error")) ? json_object_get(j, "error") : j;
    const char *message = NULL;
    if (json_is_object(root)) {
        message = json_string_value(json_object_get(root, "message"));
        read_details(err, json_object_get(root, "details"));
    }
    if (message && *message)
        copy(err->message, sizeof err->message, message);
    else if (body && len && !j)
        snprintf(err->message, sizeof err->message, "HTTP %d: %.*s", status,
                 (int)(len > 300 ? 300 : len), body);
    else if (err->reason[0])
        snprintf(err->message, sizeof err->message, "HTTP %d: %s", status, err->reason);
    else
        snprintf(err->message, sizeof err->message, "HTTP %d: %s", status, status_text(status));
    explain(err);
    json_decref(j);
}
