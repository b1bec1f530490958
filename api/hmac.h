/*
 * hmac: SenseCore's AK/SK request signature, in the form of Kong's hmac-auth
 * (what SenseCore's gateway is). The client signs each request with its
 * secret key; trainjobd's TCP listener checks it:
 *
 *   X-Date: <RFC 1123 GMT date>
 *   Digest: SHA-256=<base64(SHA-256(body))>
 *   X-Nonce: <random hex, so two identical requests never share a signature>
 *   Authorization: hmac accesskey="<AK>", algorithm="hmac-sha256",
 *                  headers="x-date request-line digest x-nonce",
 *                  signature="<base64(HMAC-SHA256(SK, signing string))>"
 *
 * The signing string is Kong's: for each name in headers=, in order and
 * joined by "\n", "request-line" stands for "METHOD TARGET HTTP/1.1" (the
 * target as sent, path and query) and any other name for "name: value".
 * SenseCore's documented minimum, headers="x-date", is the same rule with one
 * name. Kong's `username=` is accepted for `accesskey=`.
 *
 * The hashes are OpenSSL's, from libcrypto.so.3 loaded on the first call
 * that needs them (api/crypto_dl): without it nothing is signed or accepted,
 * and the functions below say so.
 */
#ifndef API_HMAC_H
#define API_HMAC_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

struct strbuf;

#define HMAC_DATE_LEN 64
#define HMAC_DIGEST_LEN 100
#define HMAC_NONCE_LEN 33
#define HMAC_HEADER_LEN 640
/* How far X-Date may be from the server's clock either way (Kong's default clock_skew). */
#define HMAC_MAX_SKEW_SECONDS (5 * 60)
/* What the client signs. */
#define HMAC_SIGNED_HEADERS "x-date request-line digest x-nonce"

/*
 * Loads libcrypto if no call did yet: NULL when signing and checking work,
 * else why not, naming the library and the package that has it.
 */
const char *hmac_load(void);

/* "Wed, 26 Jul 2023 11:36:03 GMT" for t, in English whatever the locale. */
void hmac_date(time_t t, char out[HMAC_DATE_LEN]);
/* The time hmac_date wrote as s (English names, any locale); false when s is not one. */
bool hmac_date_parse(const char *s, time_t *out);
/*
 * "SHA-256=<base64(SHA-256(body))>", the Digest header for a body (len 0: the
 * empty body); false (out "") when libcrypto is missing (hmac_load says why).
 */
bool hmac_digest(const void *body, size_t len, char out[HMAC_DIGEST_LEN]);
/* 32 random hex digits (from getrandom: no libcrypto needed). */
void hmac_nonce(char out[HMAC_NONCE_LEN]);

/* What a signed request carries besides its body. */
struct hmac_signed {
    char date[HMAC_DATE_LEN];
    char digest[HMAC_DIGEST_LEN];
    char nonce[HMAC_NONCE_LEN];
    char authorization[HMAC_HEADER_LEN];
};

/*
 * Signs METHOD TARGET (path and query, exactly as sent over HTTP/1.1) with
 * the body, at date with nonce (both as hmac_date / hmac_nonce make them),
 * filling every header of out. Returns NULL, or why it could not sign
 * (libcrypto missing: hmac_load's message).
 */
const char *hmac_sign_request(const char *ak, const char *sk, const char *method,
                              const char *target, const void *body, size_t body_len,
                              const char *date, const char *nonce, struct hmac_signed *out);

/* An Authorization header, parsed. */
struct hmac_auth {
    char access_key[128];
    char headers[256]; /* the signed names, lower case, space-separated */
    char signature[128];
};

/* Parses an Authorization value; false when it is not a well-formed hmac-sha256 one. */
bool hmac_parse(const char *authorization, struct hmac_auth *out);

/* A request header's value by (case-insensitive) name, or NULL. */
typedef const char *(*hmac_header_fn)(void *ctx, const char *name);

/* Appends the signing string for the names in headers to out (Kong's rule above). */
void hmac_signing_string(const char *headers, const char *request_line, hmac_header_fn header,
                         void *ctx, struct strbuf *out);

/*
 * Checks a parsed Authorization against sk at time now: every name in
 * required (space-separated) is among the signed ones, the signed X-Date
 * (or Date) is within HMAC_MAX_SKEW_SECONDS, and the signature matches.
 * request_line is "METHOD TARGET HTTP/x.y" as received. Returns NULL when
 * good, else why not (also hmac_load's message without libcrypto);
 * *date_out (may be NULL) gets the signed date.
 */
const char *hmac_verify(const struct hmac_auth *auth, const char *sk, const char *request_line,
                        hmac_header_fn header, void *ctx, const char *required, time_t now,
                        time_t *date_out);

/* Does a Digest header value match body? (Never without libcrypto.) */
bool hmac_digest_matches(const char *digest, const void *body, size_t len);

#endif
