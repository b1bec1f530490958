/*
 * http: endpoints, request building and the blocking calls; see http.h.
 *
 * A struct http_client owns the parsed endpoint, the AK/SK pair and the
 * limits; it holds no connection. A Unix-socket endpoint (the local engine)
 * is spoken to by api/uhttp, so a process that only talks to its engine
 * never loads libcurl and the TLS, Kerberos and LDAP libraries it brings
 * (~8 MB resident). A TCP endpoint prepares an easy handle
 * (http_transfer_prepare) through api/curl_dl, which loads libcurl then.
 * Both map their outcome onto the four transport results the callers act
 * on. Called by the drivers (api/acp).
 */
#include "api/http.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "api/curl_dl.h"
#include "api/hmac.h"
#include "api/uhttp.h"
#include "util/buildinfo.h"
#include "util/loop.h"
#include "util/xalloc.h"

#define CONNECT_TIMEOUT_MS 10000L
#define DEFAULT_TIMEOUT_MS 60000L
#define MAX_REPLY (64u << 20) /* a reply larger than this is not one we asked for */
/* 429 and 503 are asked again, as Retry-After says: at most this many tries, this long waiting */
#define RETRY_TRIES 3
#define RETRY_BUDGET_MS 30000L
#define RETRY_DEFAULT_MS 1000L /* a 429/503 without Retry-After */

struct http_client {
    char *endpoint; /* as given */
    struct http_endpoint ep;
    char *access_key, *secret_key;
    char *extra_headers; /* "Name: value\r\n" lines added to every request (a secret) */
    long timeout_ms;
    size_t max_reply; /* 0: MAX_REPLY */
    bool data_timed;  /* a call with on_data keeps the timeout (http_client_set_data_timed) */
    http_transport_fn transport;
    void *transport_ctx;
};

void http_result_init(struct http_result *r)
{
    memset(r, 0, sizeof *r);
}

void http_result_clear(struct http_result *r)
{
    strbuf_reset(&r->body);
    r->status = 0;
    r->transport = TRANSPORT_NONE;
    r->message[0] = '\0';
    r->has_retry_after = false;
    r->retry_after = 0;
}

void http_result_free(struct http_result *r)
{
    strbuf_free(&r->body);
    memset(r, 0, sizeof *r);
}

/* ---- endpoints ---------------------------------------------------------- */

static bool starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* http+unix:///PATH → socket + http://localhost; http(s)://HOST[:PORT] → that base URL. */
int http_endpoint_parse(const char *text, struct http_endpoint *ep, struct strbuf *err)
{
    memset(ep, 0, sizeof *ep);
    if (text == NULL || *text == '\0') {
        strbuf_adds(err, "empty endpoint");
        return -1;
    }
    if (starts_with(text, "http+unix://")) {
        const char *path = text + strlen("http+unix://");
        if (path[0] != '/') {
            strbuf_addf(err,
                        "endpoint '%s': expected an absolute socket path, as in "
                        "http+unix:///run/user/1000/trainjob/engine.sock",
                        text);
            return -1;
        }
        ep->unix_path = xstrdup(path);
        ep->base_url = xstrdup("http://localhost");
        return 0;
    }
    if (!starts_with(text, "https://") && !starts_with(text, "http://")) {
        strbuf_addf(err,
                    "endpoint '%s': expected http+unix:///PATH, https://HOST[:PORT] or "
                    "http://HOST:PORT",
                    text);
        return -1;
    }
    const char *host = strstr(text, "://") + 3;
    size_t n = strlen(text);
    while (n > 0 && text[n - 1] == '/')
        n--;
    if (host[0] == '\0' || host[0] == '/' || text + n <= host || strchr(host, '?') ||
        strchr(host, '#') || strchr(host, ' ')) {
        strbuf_addf(err,
                    "endpoint '%s': expected a host, as in https://aec2.cn-sh-01.sensecoreapi.cn",
                    text);
        return -1;
    }
    ep->base_url = xstrndup(text, n);
    return 0;
}

void http_endpoint_free(struct http_endpoint *ep)
{
    free(ep->unix_path);
    free(ep->base_url);
    memset(ep, 0, sizeof *ep);
}

/* A Unix socket, or 127.0.0.1 / localhost / [::1] with any port. */
bool http_endpoint_is_local(const struct http_endpoint *ep)
{
    if (ep->unix_path)
        return true;
    if (ep->base_url == NULL)
        return false;
    const char *host = strstr(ep->base_url, "://");
    host = host ? host + 3 : ep->base_url;
    static const char *const loopback[] = {"127.0.0.1", "localhost", "[::1]"};
    for (size_t i = 0; i < sizeof loopback / sizeof loopback[0]; i++) {
        size_t n = strlen(loopback[i]);
        if (strncasecmp(host, loopback[i], n) == 0 &&
            (host[n] == '\0' || host[n] == ':' || host[n] == '/'))
            return true;
    }
    return false;
}

/* ---- the client --------------------------------------------------------- */

struct http_client *http_client_new(const char *endpoint, struct strbuf *err)
{
    struct http_client *c = xcalloc(1, sizeof *c);
    if (http_endpoint_parse(endpoint, &c->ep, err) != 0) {
        free(c);
        return NULL;
    }
    c->endpoint = xstrdup(endpoint);
    c->timeout_ms = DEFAULT_TIMEOUT_MS;
    return c;
}

/* Overwrites a secret before its memory goes back to the allocator. */
static void free_secret(char *s)
{
    if (s) {
        volatile char *p = s;
        while (*p)
            *p++ = '\0';
        free(s);
    }
}

void http_client_free(struct http_client *c)
{
    if (c == NULL)
        return;
    http_endpoint_free(&c->ep);
    free(c->endpoint);
    free(c->access_key);
    free_secret(c->secret_key);
    free_secret(c->extra_headers);
    free(c);
}

void http_client_set_keys(struct http_client *c, const char *ak, const char *sk)
{
    free(c->access_key);
    free_secret(c->secret_key);
    c->access_key = ak && sk ? xstrdup(ak) : NULL;
    c->secret_key = ak && sk ? xstrdup(sk) : NULL;
}

int http_client_set_headers(struct http_client *c, const char *lines)
{
    /* One CR or LF out of place would let a value add headers of its own. */
    for (const char *p = lines; p && *p;) {
        size_t n = strcspn(p, "\r\n");
        if (n == 0 || p[n] != '\r' || p[n + 1] != '\n' || memchr(p, ':', n) == NULL)
            return -1;
        p += n + 2;
    }
    free_secret(c->extra_headers);
    c->extra_headers = lines && *lines ? xstrdup(lines) : NULL;
    return 0;
}

void http_client_set_timeout(struct http_client *c, long ms)
{
    c->timeout_ms = ms;
}

void http_client_set_max_reply(struct http_client *c, size_t bytes)
{
    c->max_reply = bytes;
}

void http_client_set_data_timed(struct http_client *c, bool timed)
{
    c->data_timed = timed;
}

long http_call_timeout(const struct http_client *c, bool on_data)
{
    return on_data && !c->data_timed ? 0 : c->timeout_ms;
}

/* The byte cap of a reply of c. */
static size_t max_reply(const struct http_client *c)
{
    return c->max_reply ? c->max_reply : MAX_REPLY;
}

void http_client_set_transport(struct http_client *c, http_transport_fn fn, void *ctx)
{
    c->transport = fn;
    c->transport_ctx = ctx;
}

const char *http_client_access_key(const struct http_client *c)
{
    return c->access_key;
}

const char *http_client_endpoint(const struct http_client *c)
{
    return c->endpoint;
}

const struct http_endpoint *http_client_parsed(const struct http_client *c)
{
    return &c->ep;
}

/* RFC 3986: unreserved characters as they are, every other byte as %XX (as curl_easy_escape). */
void http_escape(struct strbuf *out, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
            *p == '-' || *p == '.' || *p == '_' || *p == '~') {
            strbuf_add(out, p, 1);
        } else {
            char e[3] = {'%', hex[*p >> 4], hex[*p & 15]};
            strbuf_add(out, e, 3);
        }
    }
}

/*
 * The request's own headers as "Name: value\r\n" lines: what it accepts, its
 * body's type, and with AK/SK the signature over method, target and body.
 * Returns NULL, or why the request cannot be signed (no libcrypto).
 */
static const char *request_headers(const struct http_client *c, const char *method,
                                   const char *target, const char *body, size_t len, bool stream,
                                   struct strbuf *out)
{
    strbuf_addf(out, "Accept: %s\r\n", stream ? "*/*" : "application/json");
    if (body && len)
        strbuf_adds(out, "Content-Type: application/json\r\n");
    if (c->extra_headers)
        strbuf_adds(out, c->extra_headers);
    if (c->access_key && c->secret_key) {
        /* The request line is signed as HTTP/1.1 and sent as-is, so both must hold. */
        char date[HMAC_DATE_LEN], nonce[HMAC_NONCE_LEN];
        struct hmac_signed sig;
        hmac_date(time(NULL), date);
        hmac_nonce(nonce);
        const char *why = hmac_sign_request(c->access_key, c->secret_key, method, target, body,
                                            body ? len : 0, date, nonce, &sig);
        if (why)
            return why;
        strbuf_addf(out, "X-Date: %s\r\nDigest: %s\r\nX-Nonce: %s\r\nAuthorization: %s\r\n",
                    sig.date, sig.digest, sig.nonce, sig.authorization);
    }
    return NULL;
}

struct uhttp *http_unix_start(const struct http_client *c, const char *method,
                              const char *path_and_query, const char *body, size_t len,
                              http_data_fn on_data, void *data_ctx, struct http_result *out)
{
    struct strbuf h = STRBUF_INIT;
    out->max_body = max_reply(c);
    strbuf_addf(&h, "User-Agent: trainjob/%s\r\n", buildinfo_version());
    const char *why =
        request_headers(c, method, path_and_query, body, len, on_data && !c->data_timed, &h);
    struct uhttp *u;
    if (why) {
        /* Nothing is sent unsigned: an exchange that ends at once, saying why. */
        u = uhttp_start_fd(-1, method, path_and_query, NULL, NULL, 0, on_data, data_ctx, out);
        uhttp_fail(u, TRANSPORT_OTHER, why);
    } else {
        u = uhttp_start(c->ep.unix_path, method, path_and_query, h.buf, body, len, on_data,
                        data_ctx, out);
    }
    strbuf_free(&h);
    return u;
}

/* One request over the Unix socket, waiting in poll; the timeout bounds a non-stream call. */
static void perform_unix(const struct http_client *c, const char *method, const char *path,
                         const char *body, size_t len, http_data_fn on_data, void *ctx,
                         struct http_result *out)
{
    struct uhttp *u = http_unix_start(c, method, path, body, len, on_data, ctx, out);
    long timeout = http_call_timeout(c, on_data != NULL);
    int64_t deadline = timeout > 0 ? loop_now_ms() + timeout : -1;
    while (!uhttp_step(u)) {
        int wait = -1;
        if (deadline >= 0) {
            int64_t left = deadline - loop_now_ms();
            if (left <= 0) {
                uhttp_time_out(u);
                break;
            }
            wait = left > INT32_MAX ? INT32_MAX : (int)left;
        }
        struct pollfd p = {uhttp_fd(u), uhttp_events(u), 0};
        if (poll(&p, 1, wait) < 0 && errno != EINTR) {
            uhttp_time_out(u);
            snprintf(out->message, sizeof out->message, "poll: %s", strerror(errno));
            out->transport = TRANSPORT_OTHER;
            break;
        }
    }
    uhttp_free(u);
}

/* ---- transfers ---------------------------------------------------------- */

/* libcurl's functions; only called once http_transfer_prepare has loaded it. */
#define CF (curl_dl(NULL, 0))

static long response_code(CURL *easy)
{
    long code = 0;
    CF->easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &code);
    return code;
}

/* curl's write callback: to on_data for a 2xx stream, else into the body. */
static size_t on_write(char *data, size_t size, size_t nmemb, void *userdata)
{
    struct http_transfer *t = userdata;
    size_t n = size * nmemb;
    long code = response_code(t->easy);
    if (t->on_data && code >= 200 && code < 300) {
        if (t->on_data(t->data_ctx, data, n) != 0) {
            t->stopped = true;
            return n == 0 ? 1 : 0; /* anything but n stops the transfer */
        }
        return n;
    }
    if (t->out->body.len + n > max_reply(t->client))
        return 0;
    strbuf_add(&t->out->body, data, n);
    return n;
}

/* curl's header callback: each line of the reply's head, for Retry-After. */
static size_t on_header(char *data, size_t size, size_t nmemb, void *userdata)
{
    size_t n = size * nmemb;
    http_retry_after_header(data, n, userdata);
    return n;
}

/* Each "Name: value\r\n" line of lines onto t's header list. */
static void add_headers(struct http_transfer *t, const char *lines)
{
    for (const char *p = lines; *p;) {
        size_t n = strcspn(p, "\r\n");
        char *h = xstrndup(p, n);
        struct curl_slist *l = CF->slist_append(t->headers, h);
        free(h);
        if (l == NULL)
            xalloc_die();
        t->headers = l;
        p += n;
        p += strspn(p, "\r\n");
    }
}

/* URL, method and body, timeouts, socket, headers (signed with AK/SK when set). */
int http_transfer_prepare(struct http_transfer *t, const struct http_client *c, const char *method,
                          const char *path_and_query, const char *body, size_t len,
                          http_data_fn on_data, void *data_ctx, struct http_result *out)
{
    memset(t, 0, sizeof *t);
    t->client = c;
    t->out = out;
    out->max_body = max_reply(c);
    t->on_data = on_data;
    t->data_ctx = data_ctx;
    t->url = xasprintf("%s%s", c->ep.base_url, path_and_query);
    /* Signed first: without libcrypto that is what to say, not libcurl's failure to load it. */
    struct strbuf h = STRBUF_INIT;
    const char *target = strchr(strstr(t->url, "://") + 3, '/');
    const char *why =
        request_headers(c, method, target ? target : "/", body, len, on_data && !c->data_timed, &h);
    if (why) {
        strbuf_free(&h);
        out->transport = TRANSPORT_OTHER;
        snprintf(out->message, sizeof out->message, "%s", why);
        return -1;
    }
    const struct curl_fns *cf = curl_dl(out->message, sizeof out->message);
    if (cf == NULL) {
        strbuf_free(&h);
        out->transport = TRANSPORT_OTHER;
        return -1;
    }
    t->easy = cf->easy_init();
    if (t->easy == NULL) {
        strbuf_free(&h);
        out->transport = TRANSPORT_OTHER;
        snprintf(out->message, sizeof out->message, "cannot start a transfer (curl_easy_init)");
        return -1;
    }
    CURL *e = t->easy;
    cf->easy_setopt(e, CURLOPT_URL, t->url);
    cf->easy_setopt(e, CURLOPT_ERRORBUFFER, t->errbuf);
    cf->easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    cf->easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, CONNECT_TIMEOUT_MS);
    cf->easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
    char agent[96];
    snprintf(agent, sizeof agent, "trainjob/%s", buildinfo_version());
    cf->easy_setopt(e, CURLOPT_USERAGENT, agent); /* curl keeps its own copy */
    cf->easy_setopt(e, CURLOPT_WRITEFUNCTION, on_write);
    cf->easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
    cf->easy_setopt(e, CURLOPT_HEADERDATA, out);
    cf->easy_setopt(e, CURLOPT_WRITEDATA, t);
    if (http_call_timeout(c, on_data != NULL) > 0)
        cf->easy_setopt(e, CURLOPT_TIMEOUT_MS, http_call_timeout(c, on_data != NULL));
    if (c->ep.unix_path)
        cf->easy_setopt(e, CURLOPT_UNIX_SOCKET_PATH, c->ep.unix_path);
    if (http_endpoint_is_local(&c->ep))
        cf->easy_setopt(e, CURLOPT_PROXY, ""); /* never through a proxy to this machine */

    if (strcmp(method, "GET") == 0) {
        cf->easy_setopt(e, CURLOPT_HTTPGET, 1L);
    } else {
        cf->easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)(body ? len : 0));
        cf->easy_setopt(e, CURLOPT_COPYPOSTFIELDS, body ? body : "");
        if (strcmp(method, "POST") != 0)
            cf->easy_setopt(e, CURLOPT_CUSTOMREQUEST, method);
    }
    strbuf_adds(&h, "Expect:\r\n"); /* no 100-continue round trip */
    add_headers(t, h.buf);
    strbuf_free(&h);
    if (c->access_key && c->secret_key) {
        cf->easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
        cf->easy_setopt(e, CURLOPT_PATH_AS_IS, 1L);
    }
    cf->easy_setopt(e, CURLOPT_HTTPHEADER, t->headers);
    return 0;
}

/* curl's result to one of the four transport outcomes, with a message saying why. */
void http_transfer_finish(struct http_transfer *t, CURLcode rc)
{
    struct http_result *out = t->out;
    const struct http_client *c = t->client;
    out->status = (int)response_code(t->easy);
    const char *detail = t->errbuf[0] ? t->errbuf : CF->easy_strerror(rc);
    switch (rc) {
    case CURLE_OK:
        out->transport = TRANSPORT_NONE;
        return;
    case CURLE_WRITE_ERROR:
        if (t->stopped) {
            out->transport = TRANSPORT_NONE;
            return;
        }
        out->transport = TRANSPORT_OTHER;
        snprintf(out->message, sizeof out->message, "%s: reply larger than %zu MiB", c->endpoint,
                 max_reply(c) >> 20);
        return;
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY: {
        out->transport = TRANSPORT_UNREACHABLE;
        long os_errno = 0;
        CF->easy_getinfo(t->easy, CURLINFO_OS_ERRNO, &os_errno);
        /* For a socket, curl's own text names "localhost port 80"; errno says it better. */
        if (c->ep.unix_path && os_errno != 0)
            detail = strerror((int)os_errno);
        break;
    }
    case CURLE_OPERATION_TIMEDOUT:
        out->transport = TRANSPORT_TIMEOUT;
        break;
    default:
        out->transport = TRANSPORT_OTHER;
        break;
    }
    snprintf(out->message, sizeof out->message, "%s", detail);
}

void http_transfer_cleanup(struct http_transfer *t)
{
    if (t->easy)
        CF->easy_cleanup(t->easy);
    if (t->headers)
        CF->slist_free_all(t->headers);
    free(t->url);
    memset(t, 0, sizeof *t);
}

bool http_client_faked(const struct http_client *c)
{
    return c->transport != NULL;
}

bool http_transport_run(const struct http_client *c, const char *method, const char *path,
                        const char *body, size_t len, http_data_fn on_data, void *ctx,
                        struct http_result *out)
{
    if (c->transport == NULL)
        return false;
    out->max_body = max_reply(c); /* the cap a real transport would hold the reply to */
    c->transport(c->transport_ctx, method, path, body, len, on_data, ctx, out);
    return true;
}

/* Prepares, performs and maps one request; the shared body of both calls. */
static int perform(struct http_client *c, const char *method, const char *path, const char *body,
                   size_t len, http_data_fn on_data, void *ctx, struct http_result *out)
{
    http_result_clear(out);
    if (http_transport_run(c, method, path, body, len, on_data, ctx, out))
        return out->transport == TRANSPORT_NONE ? 0 : -1;
    if (c->ep.unix_path) {
        perform_unix(c, method, path, body, len, on_data, ctx, out);
        return out->transport == TRANSPORT_NONE ? 0 : -1;
    }
    struct http_transfer t;
    if (http_transfer_prepare(&t, c, method, path, body, len, on_data, ctx, out) != 0) {
        http_transfer_cleanup(&t);
        return -1;
    }
    CURLcode rc = CF->easy_perform(t.easy);
    http_transfer_finish(&t, rc);
    http_transfer_cleanup(&t);
    return out->transport == TRANSPORT_NONE ? 0 : -1;
}

/*
 * The one rule for 429 Too Many Requests and 503 Unavailable (the server
 * did not take the request), for the blocking call and the loop's
 * (api/http_multi): see http.h.
 */
long http_retry_wait_ms(const struct http_result *out, long waited_ms)
{
    if (out->transport != TRANSPORT_NONE || (out->status != 429 && out->status != 503) ||
        out->tries >= RETRY_TRIES)
        return -1;
    long ms = out->has_retry_after ? (long)out->retry_after * 1000L : RETRY_DEFAULT_MS;
    return waited_ms + ms <= RETRY_BUDGET_MS ? ms : -1;
}

/* Sleeps ms; false when a signal cut it short (Ctrl-C with a handler: the call ends). */
static bool retry_sleep(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    return nanosleep(&ts, NULL) == 0;
}

int http_call(struct http_client *c, const char *method, const char *path_and_query,
              const char *body, size_t len, struct http_result *out)
{
    long waited = 0, wait;
    int rc;
    out->tries = 0;
    for (;;) {
        rc = perform(c, method, path_and_query, body, len, NULL, NULL, out);
        out->tries++;
        if ((wait = http_retry_wait_ms(out, waited)) < 0 || !retry_sleep(wait))
            return rc;
        waited += wait;
    }
}

int http_stream(struct http_client *c, const char *path_and_query, http_data_fn on_data, void *ctx,
                struct http_result *out)
{
    return perform(c, "GET", path_and_query, NULL, 0, on_data, ctx, out);
}
