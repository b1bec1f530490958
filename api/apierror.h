/*
 * apierror: an error as ACP answers it — HTTP status plus the body
 * {code, message, details:[{reason, field}]} — so a rejection from any
 * backend can be shown next to the field it names. trainjobd builds them,
 * the drivers parse them.
 */
#ifndef API_APIERROR_H
#define API_APIERROR_H

#include <jansson.h>

#define API_ERROR_MAX_DETAILS 8

/*
 * One entry of details[]: why, the field it is about, and what it says
 * (its message or description). A google.rpc BadRequest detail gives one
 * entry per field_violations[] item.
 */
struct api_error_detail {
    char reason[64];
    char field[128];
    char message[256];
};

struct api_error {
    int status;      /* HTTP status: 400, 403, 404, 409, 413, 500, … */
    char reason[64]; /* machine-readable: "tjInvalidField", "NameTaken", … (details[0]) */
    char field[128]; /* the field path the error is about, or "" */
    /*
     * The server's message; from a reply body, followed by every further
     * entry of details[] and, for a reason ACP is known to give, what to do.
     */
    char message[1024];
    struct api_error_detail details[API_ERROR_MAX_DETAILS]; /* every entry read, in order */
    size_t detail_count;
};

/* Fills err; returns status so handlers can `return api_error_set(...)`. */
int api_error_set(struct api_error *err, int status, const char *reason, const char *field,
                  const char *fmt, ...) __attribute__((format(printf, 5, 6)));
json_t *api_error_to_json(const struct api_error *err);
/* Appends printf-style text to err's message, cut when it is full. */
void api_error_append(struct api_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/*
 * Reads an error body (any shape: falls back to the raw text or the status):
 * {code, message, details:[{reason, field, message}…]} or the same inside
 * "error". Every entry of details is read (up to API_ERROR_MAX_DETAILS),
 * a google.rpc BadRequest's field_violations each as one, and the message
 * says what each one does.
 */
void api_error_from_body(struct api_error *err, int status, const char *body, size_t len);
/* What a person should do about a reason ACP is known to give, or NULL. */
const char *api_error_hint(const char *reason);

#endif
