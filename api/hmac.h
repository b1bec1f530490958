/*
 * hmac: SenseCore's AK/SK request signature. The client signs each request
 * with its secret key; trainjobd's TCP listener checks it:
 *
 *   X-Date: <RFC 1123 GMT date>
 *   Authorization: hmac accesskey="<AK>", algorithm="hmac-sha256",
 *                  headers="x-date", signature="<base64(HMAC-SHA256(SK, "x-date: " + date))>"
 */
#ifndef API_HMAC_H
#define API_HMAC_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#define HMAC_DATE_LEN 64
#define HMAC_HEADER_LEN 512
#define HMAC_MAX_SKEW_SECONDS (15 * 60)

/* "Wed, 26 Jul 2023 11:36:03 GMT" for t. */
void hmac_date(time_t t, char out[HMAC_DATE_LEN]);
/* The Authorization header value for date, signed with ak/sk. */
void hmac_authorization(const char *ak, const char *sk, const char *date,
                        char out[HMAC_HEADER_LEN]);
/* Pulls accesskey and signature out of an Authorization value; false when malformed. */
bool hmac_parse(const char *authorization, char *ak, size_t ak_size, char *signature,
                size_t sig_size);
/*
 * Checks a request's X-Date and Authorization against sk at time now.
 * Returns NULL when good, else why not ("stale X-Date", "bad signature", …).
 */
const char *hmac_verify(const char *sk, const char *date, const char *signature, time_t now);

#endif
