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

void api_error_from_body(struct api_error *err, int status, const char *body, size_t len)
{
    memset(err, 0, sizeof *err);
    err->status = status;
    json_t *j = body && len ? json_loadb(body, len, 0, NULL) : NULL;
    const char *message = NULL;
    if (json_is_object(j)) {
        message = json_string_value(json_object_get(j, "message"));
        json_t *d = json_array_get(json_object_get(j, "details"), 0);
        copy(err->reason, sizeof err->reason, json_string_value(json_object_get(d, "reason")));
        copy(err->field, sizeof err->field, json_string_value(json_object_get(d, "field")));
    }
    if (message)
        copy(err->message, sizeof err->message, message);
    else if (body && len && !j)
        snprintf(err->message, sizeof err->message, "HTTP %d: %.*s", status,
                 (int)(len > 300 ? 300 : len), body);
    else
        snprintf(err->message, sizeof err->message, "HTTP %d: %s", status, status_text(status));
    json_decref(j);
}
