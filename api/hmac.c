/*
 * hmac: AK/SK signing and checking with OpenSSL's HMAC-SHA256; see hmac.h.
 * OpenSSL is loaded on the first signature or check (api/crypto_dl), so a
 * process that signs nothing never loads it; the nonce's randomness comes
 * from the kernel (getrandom). Used by the HTTP client (api/http) and by
 * trainjobd's TCP listener.
 */
#include "api/hmac.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>

#include "api/crypto_dl.h"
#include "util/strbuf.h"

/* The library's functions, or NULL with why (naming the library) in *why. */
static const struct crypto_fns *crypto(const char **why)
{
    static char load_why[300];
    const struct crypto_fns *cf = crypto_dl(load_why, sizeof load_why);
    if (why)
        *why = cf ? NULL : load_why;
    return cf;
}

const char *hmac_load(void)
{
    const char *why;
    crypto(&why);
    return why;
}

static const char *const wire_days[7] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
static const char *const wire_months[12] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                            "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

/*
 * The date on the wire is RFC 1123 in English whatever LC_TIME says: strftime's
 * %a and %b follow the locale ("三, 01 12月 2026" under zh_CN.UTF-8), so the
 * names come from our own tables and only the digits from snprintf.
 */
void hmac_date(time_t t, char out[HMAC_DATE_LEN])
{
    struct tm tm;
    if (gmtime_r(&t, &tm) == NULL || tm.tm_wday < 0 || tm.tm_wday > 6 || tm.tm_mon < 0 ||
        tm.tm_mon > 11) {
        memset(&tm, 0, sizeof tm); /* a time gmtime cannot hold: the epoch, a Thursday */
        tm.tm_year = 70;
        tm.tm_mday = 1;
        tm.tm_wday = 4;
    }
    snprintf(out, HMAC_DATE_LEN, "%s, %02d %s %04d %02d:%02d:%02d GMT", wire_days[tm.tm_wday],
             tm.tm_mday, wire_months[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour, tm.tm_min,
             tm.tm_sec);
}

/* n decimal digits at *p into *out; advances *p. */
static bool wire_digits(const char **p, int n, int *out)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        char c = (*p)[i];
        if (c < '0' || c > '9')
            return false;
        v = v * 10 + (c - '0');
    }
    *p += n;
    *out = v;
    return true;
}

/* Which of names[0..n) is at *p (exactly three letters); advances *p. */
static int wire_name(const char **p, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (strncmp(*p, names[i], 3) == 0) {
            *p += 3;
            return i;
        }
    return -1;
}

static bool wire_char(const char **p, char c)
{
    if (**p != c)
        return false;
    (*p)++;
    return true;
}

/*
 * "Wed, 26 Jul 2023 11:36:03 GMT" into *out, in English whatever the
 * locale (strptime's %a/%b follow LC_TIME). The weekday must match the date.
 */
bool hmac_date_parse(const char *s, time_t *out)
{
    const char *p = s;
    int wday = wire_name(&p, wire_days, 7);
    int mday, mon, year, hour, min, sec;
    if (wday < 0 || !wire_char(&p, ',') || !wire_char(&p, ' ') || !wire_digits(&p, 2, &mday) ||
        !wire_char(&p, ' ') || (mon = wire_name(&p, wire_months, 12)) < 0 || !wire_char(&p, ' ') ||
        !wire_digits(&p, 4, &year) || !wire_char(&p, ' ') || !wire_digits(&p, 2, &hour) ||
        !wire_char(&p, ':') || !wire_digits(&p, 2, &min) || !wire_char(&p, ':') ||
        !wire_digits(&p, 2, &sec) || strcmp(p, " GMT") != 0)
        return false;
    if (mday < 1 || mday > 31 || hour > 23 || min > 59 || sec > 60)
        return false;
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    tm.tm_year = year - 1900;
    tm.tm_mon = mon;
    tm.tm_mday = mday;
    tm.tm_hour = hour;
    tm.tm_min = min;
    tm.tm_sec = sec;
    time_t t = timegm(&tm);
    struct tm back;
    if (gmtime_r(&t, &back) == NULL || back.tm_mday != mday || back.tm_wday != wday)
        return false; /* 31 Feb, or a weekday that is not the date's */
    *out = t;
    return true;
}

bool hmac_digest(const void *body, size_t len, char out[HMAC_DIGEST_LEN])
{
    const struct crypto_fns *cf = crypto(NULL);
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int md_len = 0;
    out[0] = '\0';
    if (cf == NULL ||
        cf->evp_digest(len ? body : "", len, md, &md_len, cf->evp_sha256(), NULL) != 1)
        return false;
    char b64[4 * ((EVP_MAX_MD_SIZE + 2) / 3) + 1];
    cf->encode_block((unsigned char *)b64, md, (int)md_len);
    snprintf(out, HMAC_DIGEST_LEN, "SHA-256=%s", b64);
    return true;
}

void hmac_nonce(char out[HMAC_NONCE_LEN])
{
    unsigned char r[16];
    if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r) {
        /* No randomness: a nonce from the clock and address still differs per request. */
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        snprintf(out, HMAC_NONCE_LEN, "%016llx%016llx", (unsigned long long)ts.tv_sec,
                 (unsigned long long)ts.tv_nsec ^ (unsigned long long)(size_t)out);
        return;
    }
    for (size_t i = 0; i < sizeof r; i++)
        snprintf(out + 2 * i, 3, "%02x", r[i]);
}

/* base64(HMAC-SHA256(sk, msg)) into out (at least 64 bytes), with cf loaded. */
static void sign(const struct crypto_fns *cf, const char *sk, const char *msg, size_t len,
                 char out[64])
{
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int mac_len = 0;
    out[0] = '\0';
    if (cf->hmac(cf->evp_sha256(), sk, (int)strlen(sk), (const unsigned char *)msg, len, mac,
                 &mac_len) != NULL)
        cf->encode_block((unsigned char *)out, mac, (int)mac_len);
}

/* The next space-separated name of list at *p into out; false at the end. */
static bool next_name(const char **p, char *out, size_t size)
{
    const char *s = *p;
    while (*s == ' ')
        s++;
    if (*s == '\0')
        return false;
    size_t n = strcspn(s, " ");
    snprintf(out, size, "%.*s", (int)n, s);
    *p = s + n;
    return true;
}

static bool has_name(const char *list, const char *name)
{
    char n[64];
    for (const char *p = list; next_name(&p, n, sizeof n);)
        if (strcasecmp(n, name) == 0)
            return true;
    return false;
}

void hmac_signing_string(const char *headers, const char *request_line, hmac_header_fn header,
                         void *ctx, struct strbuf *out)
{
    char name[64];
    bool first = true;
    for (const char *p = headers; next_name(&p, name, sizeof name); first = false) {
        if (!first)
            strbuf_addc(out, '\n');
        const char *v = strcmp(name, "request-line") == 0 ? NULL : header(ctx, name);
        if (strcmp(name, "request-line") == 0)
            strbuf_adds(out, request_line);
        else if (v)
            strbuf_addf(out, "%s: %s", name, v);
        else
            strbuf_addf(out, "%s:", name); /* Kong signs an absent header as "name:" */
    }
}

struct client_headers {
    const struct hmac_signed *s;
};

static const char *client_header(void *ctx, const char *name)
{
    const struct hmac_signed *s = ((struct client_headers *)ctx)->s;
    if (strcmp(name, "x-date") == 0)
        return s->date;
    if (strcmp(name, "digest") == 0)
        return s->digest;
    if (strcmp(name, "x-nonce") == 0)
        return s->nonce;
    return NULL;
}

const char *hmac_sign_request(const char *ak, const char *sk, const char *method,
                              const char *target, const void *body, size_t body_len,
                              const char *date, const char *nonce, struct hmac_signed *out)
{
    memset(out, 0, sizeof *out);
    const char *why;
    const struct crypto_fns *cf = crypto(&why);
    if (cf == NULL)
        return why;
    snprintf(out->date, sizeof out->date, "%s", date);
    snprintf(out->nonce, sizeof out->nonce, "%s", nonce);
    if (!hmac_digest(body, body_len, out->digest))
        return "SHA-256 of the request body failed (EVP_Digest)";
    struct strbuf line = STRBUF_INIT, msg = STRBUF_INIT;
    strbuf_addf(&line, "%s %s HTTP/1.1", method, target);
    struct client_headers ch = {out};
    hmac_signing_string(HMAC_SIGNED_HEADERS, strbuf_str(&line), client_header, &ch, &msg);
    char sig[64];
    sign(cf, sk, strbuf_str(&msg), msg.len, sig);
    snprintf(out->authorization, sizeof out->authorization,
             "hmac accesskey=\"%s\", algorithm=\"hmac-sha256\", headers=\"%s\", signature=\"%s\"",
             ak, HMAC_SIGNED_HEADERS, sig);
    strbuf_free(&line);
    strbuf_free(&msg);
    return sig[0] ? NULL : "HMAC-SHA256 of the request failed (HMAC)";
}

bool hmac_parse(const char *authorization, struct hmac_auth *out)
{
    memset(out, 0, sizeof *out);
    if (authorization == NULL || strncasecmp(authorization, "hmac ", 5) != 0)
        return false;
    bool alg_ok = true;
    const char *p = authorization + 5;
    for (;;) {
        while (*p == ' ' || *p == ',')
            p++;
        if (*p == '\0')
            break;
        size_t klen = strcspn(p, "=");
        if (p[klen] != '=' || p[klen + 1] != '"')
            return false;
        const char *v = p + klen + 2;
        const char *end = strchr(v, '"');
        if (end == NULL)
            return false;
        size_t vlen = (size_t)(end - v);
        char *dst = NULL;
        size_t size = 0;
        if ((klen == 9 && strncmp(p, "accesskey", 9) == 0) ||
            (klen == 8 && strncmp(p, "username", 8) == 0)) {
            dst = out->access_key;
            size = sizeof out->access_key;
        } else if (klen == 9 && strncmp(p, "signature", 9) == 0) {
            dst = out->signature;
            size = sizeof out->signature;
        } else if (klen == 7 && strncmp(p, "headers", 7) == 0) {
            dst = out->headers;
            size = sizeof out->headers;
        } else if (klen == 9 && strncmp(p, "algorithm", 9) == 0) {
            alg_ok = vlen == 11 && strncmp(v, "hmac-sha256", 11) == 0;
        }
        if (dst) {
            if (vlen >= size)
                return false;
            memcpy(dst, v, vlen);
            dst[vlen] = '\0';
        }
        p = end + 1;
    }
    for (char *c = out->headers; *c; c++)
        if (*c >= 'A' && *c <= 'Z')
            *c = (char)(*c - 'A' + 'a');
    if (out->headers[0] == '\0')
        snprintf(out->headers, sizeof out->headers, "x-date"); /* SenseCore's minimum */
    return alg_ok && out->access_key[0] && out->signature[0];
}

const char *hmac_verify(const struct hmac_auth *auth, const char *sk, const char *request_line,
                        hmac_header_fn header, void *ctx, const char *required, time_t now,
                        time_t *date_out)
{
    const char *why;
    const struct crypto_fns *cf = crypto(&why);
    if (cf == NULL)
        return why;
    char name[64];
    for (const char *p = required ? required : ""; next_name(&p, name, sizeof name);)
        if (!has_name(auth->headers, name))
            return strcmp(name, "request-line") == 0
                       ? "the signature must cover the request line (headers=\"… request-line …\")"
                   : strcmp(name, "digest") == 0
                       ? "the signature must cover the body's digest (headers=\"… digest …\")"
                   : strcmp(name, "x-date") == 0
                       ? "the signature must cover x-date"
                       : "the signature does not cover a header this server requires";
    const char *date_name = has_name(auth->headers, "x-date") ? "x-date"
                            : has_name(auth->headers, "date") ? "date"
                                                              : NULL;
    if (date_name == NULL)
        return "the signature must cover x-date";
    const char *date = header(ctx, date_name);
    if (date == NULL || *date == '\0')
        return "missing X-Date header";
    time_t t;
    if (!hmac_date_parse(date, &t))
        return "X-Date is not an RFC 1123 GMT date";
    if (t < now - HMAC_MAX_SKEW_SECONDS || t > now + HMAC_MAX_SKEW_SECONDS)
        return "X-Date is more than 5 minutes off";
    if (date_out)
        *date_out = t;
    struct strbuf msg = STRBUF_INIT;
    hmac_signing_string(auth->headers, request_line, header, ctx, &msg);
    char want[64];
    sign(cf, sk, strbuf_str(&msg), msg.len, want);
    strbuf_free(&msg);
    size_t n = strlen(want);
    if (n == 0 || strlen(auth->signature) != n || cf->memcmp(want, auth->signature, n) != 0)
        return "bad signature";
    return NULL;
}

bool hmac_digest_matches(const char *digest, const void *body, size_t len)
{
    char want[HMAC_DIGEST_LEN];
    if (!hmac_digest(body, len, want))
        return false;
    if (digest == NULL || strncasecmp(digest, "SHA-256=", 8) != 0)
        return false;
    size_t n = strlen(want);
    return strlen(digest) == n && crypto(NULL)->memcmp(want + 8, digest + 8, n - 8) == 0;
}
