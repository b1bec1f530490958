/*
 * hmac: AK/SK signing and checking with OpenSSL's HMAC-SHA256; see hmac.h.
 */
#include "api/hmac.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdio.h>
#include <string.h>

void hmac_date(time_t t, char out[HMAC_DATE_LEN])
{
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, HMAC_DATE_LEN, "%a, %d %b %Y %H:%M:%S GMT", &tm);
}

/* base64(HMAC-SHA256(sk, "x-date: " + date)) into out (at least 64 bytes). */
static void sign(const char *sk, const char *date, char *out, size_t size)
{
    char msg[HMAC_DATE_LEN + 16];
    int n = snprintf(msg, sizeof msg, "x-date: %s", date);
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int mac_len = 0;
    HMAC(EVP_sha256(), sk, (int)strlen(sk), (const unsigned char *)msg, (size_t)(n > 0 ? n : 0),
         mac, &mac_len);
    unsigned char b64[4 * ((EVP_MAX_MD_SIZE + 2) / 3) + 1];
    EVP_EncodeBlock(b64, mac, (int)mac_len);
    snprintf(out, size, "%s", (const char *)b64);
}

void hmac_authorization(const char *ak, const char *sk, const char *date, char out[HMAC_HEADER_LEN])
{
    char sig[128];
    sign(sk, date, sig, sizeof sig);
    snprintf(out, HMAC_HEADER_LEN,
             "hmac accesskey=\"%s\", algorithm=\"hmac-sha256\", headers=\"x-date\", "
             "signature=\"%s\"",
             ak, sig);
}

/* Copies the quoted value of key="…" in s into out. */
static bool quoted(const char *s, const char *key, char *out, size_t size)
{
    char pat[32];
    snprintf(pat, sizeof pat, "%s=\"", key);
    const char *p = strstr(s, pat);
    if (p == NULL)
        return false;
    p += strlen(pat);
    const char *end = strchr(p, '"');
    if (end == NULL || (size_t)(end - p) >= size)
        return false;
    memcpy(out, p, (size_t)(end - p));
    out[end - p] = '\0';
    return true;
}

bool hmac_parse(const char *authorization, char *ak, size_t ak_size, char *signature,
                size_t sig_size)
{
    char alg[32];
    if (authorization == NULL || strncmp(authorization, "hmac ", 5) != 0)
        return false;
    if (!quoted(authorization, "accesskey", ak, ak_size) ||
        !quoted(authorization, "signature", signature, sig_size))
        return false;
    return !quoted(authorization, "algorithm", alg, sizeof alg) || strcmp(alg, "hmac-sha256") == 0;
}

const char *hmac_verify(const char *sk, const char *date, const char *signature, time_t now)
{
    if (date == NULL || *date == '\0')
        return "missing X-Date header";
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    const char *end = strptime(date, "%a, %d %b %Y %H:%M:%S GMT", &tm);
    if (end == NULL || *end != '\0')
        return "X-Date is not an RFC 1123 GMT date";
    time_t t = timegm(&tm);
    if (t < now - HMAC_MAX_SKEW_SECONDS || t > now + HMAC_MAX_SKEW_SECONDS)
        return "X-Date is more than 15 minutes off";
    char want[128];
    sign(sk, date, want, sizeof want);
    size_t n = strlen(want);
    if (signature == NULL || strlen(signature) != n || CRYPTO_memcmp(want, signature, n) != 0)
        return "bad signature";
    return NULL;
}
