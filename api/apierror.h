/*
 * apierror: an error as ACP answers it — HTTP status plus the body
 * {code, message, details:[{reason, field}]} — so a rejection from any
 * backend can be shown next to the field it names. trainjobd builds them,
 * the drivers parse them.
 */
#ifndef API_APIERROR_H
#define API_APIERROR_H

#include <jansson.h>

struct api_error {
    int status;      /* HTTP status: 400, 403, 404, 409, 413, 500, … */
    char reason[64]; /* machine-readable: "tjInvalidField", "NameTaken", … */
    char field[128]; /* the field path the error is about, or "" */
    char message[512];
};

/* Fills err; returns status so handlers can `return api_error_set(...)`. */
int api_error_set(struct api_error *err, int status, const char *reason, const char *field,
                  const char *fmt, ...) __attribute__((format(printf, 5, 6)));
json_t *api_error_to_json(const struct api_error *err);
/* Reads an error body (any shape: falls back to the raw text or the status). */
void api_error_from_body(struct api_error *err, int status, const char *body, size_t len);

#endif
