/*
 * uhttp: an HTTP/1.1 exchange over a Unix socket; see uhttp.h. Called by
 * api/http (blocking calls) and api/http_multi (the TUI's loop).
 *
 * The reply is parsed as it arrives from `in` (bytes received, `pos` of
 * them consumed): HEAD until the blank line, then the body in one of three
 * framings. Every size the server sends is parsed strictly (digits only, no
 * overflow) and bounded.
 */
#include "api/uhttp.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "util/strbuf.h"
#include "util/xalloc.h"

/*
 * A reply header line's Retry-After, when it is one in seconds (the
 * HTTP-date form is not read: the default wait applies), into out.
 */
void http_retry_after_header(const char *line, size_t n, struct http_result *out)
{
    static const char name[] = "Retry-After:";
    size_t k = sizeof name - 1;
    if (n <= k || strncasecmp(line, name, k) != 0)
        return;
    size_t i = k;
    while (i < n && (line[i] == ' ' || line[i] == '\t'))
        i++;
    long v = 0;
    size_t digits = 0;
    for (; i < n && line[i] >= '0' && line[i] <= '9' && v < 1000000; i++, digits++)
        v = v * 10 + (line[i] - '0');
    if (digits == 0)
        return;
    out->has_retry_after = true;
    out->retry_after = (int)v;
}

#define MAX_CHUNK_LINE 1024
#define UHTTP_PRESIZE (4u << 20) /* the most room a Content-Length reserves ahead */

enum uhttp_state {
    WRITING,     /* the request is going out */
    HEAD,        /* status line and headers */
    BODY_LENGTH, /* `left` bytes of Content-Length */
    CHUNK_SIZE,  /* a chunk's size line */
    CHUNK_DATA,  /* `left` bytes of a chunk */
    CHUNK_END,   /* the CRLF after a chunk */
    TRAILER,     /* trailer lines after the last chunk, up to a blank one */
    BODY_CLOSE,  /* everything until the server closes */
    FINISHED,
};

#define RECV_MIN ((size_t)64 << 10)  /* the first read of a reply */
#define RECV_MAX ((size_t)256 << 10) /* the largest */

struct uhttp {
    int fd;
    enum uhttp_state state;
    struct strbuf req;
    size_t sent;
    struct strbuf in;
    size_t pos;
    size_t piece; /* the bytes the next recv asks for: doubled while a reply fills them */
    uint64_t left;
    bool deliver; /* 2xx with on_data: the body goes there */
    http_data_fn on_data;
    void *ctx;
    struct http_result *out;
};

/* The byte cap of out's body: the client's (api/http sets it), else UHTTP_MAX_REPLY. */
static size_t max_body(const struct http_result *out)
{
    return out->max_body ? out->max_body : UHTTP_MAX_REPLY;
}

/* Ends the exchange with transport t and a message. */
static void end(struct uhttp *u, enum transport_error t, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void end(struct uhttp *u, enum transport_error t, const char *fmt, ...)
{
    u->out->transport = t;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(u->out->message, sizeof u->out->message, fmt, ap);
    va_end(ap);
    u->state = FINISHED;
    if (u->fd >= 0)
        close(u->fd);
    u->fd = -1;
}

static void build_request(struct uhttp *u, const char *method, const char *target,
                          const char *headers, const char *body, size_t len)
{
    strbuf_addf(&u->req, "%s %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n", method,
                target);
    strbuf_adds(&u->req, headers ? headers : "");
    if (strcmp(method, "GET") != 0)
        strbuf_addf(&u->req, "Content-Length: %zu\r\n", body ? len : 0);
    strbuf_adds(&u->req, "\r\n");
    if (body && len)
        strbuf_add(&u->req, body, len);
}

struct uhttp *uhttp_start_fd(int fd, const char *method, const char *target, const char *headers,
                             const char *body, size_t len, http_data_fn on_data, void *ctx,
                             struct http_result *out)
{
    struct uhttp *u = xcalloc(1, sizeof *u);
    u->fd = fd;
    u->on_data = on_data;
    u->ctx = ctx;
    u->out = out;
    u->state = WRITING;
    out->transport = TRANSPORT_NONE;
    out->status = 0;
    out->message[0] = '\0';
    build_request(u, method, target, headers, body, len);
    if (fd >= 0)
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    return u;
}

struct uhttp *uhttp_start(const char *path, const char *method, const char *target,
                          const char *headers, const char *body, size_t len, http_data_fn on_data,
                          void *ctx, struct http_result *out)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    int fd = -1, err = 0;
    if (strlen(path) >= sizeof a.sun_path) {
        err = ENAMETOOLONG;
    } else {
        memcpy(a.sun_path, path, strlen(path) + 1);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        /* A Unix connect does not wait on the network: it is done, or refused, at once. */
        if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
            err = errno;
            if (fd >= 0)
                close(fd);
            fd = -1;
        }
    }
    struct uhttp *u = uhttp_start_fd(fd, method, target, headers, body, len, on_data, ctx, out);
    if (fd < 0)
        end(u, err == ENAMETOOLONG ? TRANSPORT_OTHER : TRANSPORT_UNREACHABLE, "%s", strerror(err));
    return u;
}

int uhttp_fd(const struct uhttp *u)
{
    return u->fd;
}

short uhttp_events(const struct uhttp *u)
{
    return u->state == WRITING ? POLLOUT : POLLIN;
}

bool uhttp_finished(const struct uhttp *u)
{
    return u->state == FINISHED;
}

void uhttp_time_out(struct uhttp *u)
{
    if (u->state != FINISHED)
        end(u, TRANSPORT_TIMEOUT, "no complete reply in time");
}

void uhttp_fail(struct uhttp *u, enum transport_error t, const char *why)
{
    if (u->state != FINISHED)
        end(u, t, "%s", why);
}

void uhttp_free(struct uhttp *u)
{
    if (u == NULL)
        return;
    if (u->fd >= 0)
        close(u->fd);
    strbuf_free(&u->req);
    strbuf_free(&u->in);
    free(u);
}

/* Body bytes: to on_data (a 2xx stream) or into out->body. False when the exchange ended. */
static bool body_bytes(struct uhttp *u, const char *p, size_t n)
{
    if (n == 0)
        return true;
    if (u->deliver) {
        if (u->on_data(u->ctx, p, n) != 0) {
            end(u, TRANSPORT_NONE, "%s", ""); /* the owner has what it wanted */
            return false;
        }
        return true;
    }
    if (u->out->body.len + n > max_body(u->out)) {
        end(u, TRANSPORT_OTHER, "reply larger than %zu MiB", max_body(u->out) >> 20);
        return false;
    }
    strbuf_add(&u->out->body, p, n);
    return true;
}

/* A decimal (Content-Length) or hex (chunk size) number, digits only, no overflow. */
static bool parse_size(const char *s, size_t n, int base, uint64_t *out)
{
    uint64_t v = 0;
    size_t i = 0;
    for (; i < n; i++) {
        int d;
        char c = s[i];
        if (c >= '0' && c <= '9')
            d = c - '0';
        else if (base == 16 && c >= 'a' && c <= 'f')
            d = c - 'a' + 10;
        else if (base == 16 && c >= 'A' && c <= 'F')
            d = c - 'A' + 10;
        else
            break;
        if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
            return false;
        v = v * (uint64_t)base + (uint64_t)d;
    }
    if (i == 0)
        return false;
    /* Only blanks may follow a length; a chunk size may carry extensions after ';'. */
    for (; i < n; i++) {
        if (base == 16 && s[i] == ';')
            break;
        if (s[i] != ' ' && s[i] != '\t')
            return false;
    }
    *out = v;
    return true;
}

/* The value of a header line "Name: value" when its name is name (any case), else NULL. */
static const char *header_value(const char *line, size_t n, const char *name, size_t *vlen)
{
    size_t k = strlen(name);
    if (n <= k || strncasecmp(line, name, k) != 0 || line[k] != ':')
        return NULL;
    const char *v = line + k + 1, *e = line + n;
    while (v < e && (*v == ' ' || *v == '\t'))
        v++;
    while (e > v && (e[-1] == ' ' || e[-1] == '\t'))
        e--;
    *vlen = (size_t)(e - v);
    return v;
}

/* Status line and headers in head (n bytes, without the blank line); false when malformed. */
static bool parse_head(struct uhttp *u, const char *head, size_t n)
{
    const char *eol = memmem(head, n, "\r\n", 2);
    size_t first = eol ? (size_t)(eol - head) : n;
    if (first < 12 || strncmp(head, "HTTP/1.", 7) != 0 || head[8] != ' ' || head[9] < '1' ||
        head[9] > '5' || head[10] < '0' || head[10] > '9' || head[11] < '0' || head[11] > '9' ||
        (first > 12 && head[12] != ' ')) {
        end(u, TRANSPORT_OTHER, "not an HTTP/1.x reply");
        return false;
    }
    int status = (head[9] - '0') * 100 + (head[10] - '0') * 10 + (head[11] - '0');
    bool chunked = false, has_length = false;
    uint64_t length = 0;
    for (const char *p = eol ? eol + 2 : head + n; p < head + n;) {
        const char *e = memmem(p, (size_t)(head + n - p), "\r\n", 2);
        size_t len = e ? (size_t)(e - p) : (size_t)(head + n - p);
        size_t vlen;
        const char *v;
        if ((v = header_value(p, len, "Content-Length", &vlen)) != NULL) {
            uint64_t l;
            if (!parse_size(v, vlen, 10, &l) || (has_length && l != length)) {
                end(u, TRANSPORT_OTHER, "reply with a bad Content-Length");
                return false;
            }
            has_length = true;
            length = l;
        } else if (header_value(p, len, "Retry-After", &vlen) != NULL) {
            http_retry_after_header(p, len, u->out);
        } else if ((v = header_value(p, len, "Transfer-Encoding", &vlen)) != NULL) {
            if (vlen == 7 && strncasecmp(v, "chunked", 7) == 0) {
                chunked = true;
            } else {
                end(u, TRANSPORT_OTHER, "reply in a transfer coding other than chunked");
                return false;
            }
        }
        p += len + 2;
    }
    if (status < 200) { /* an interim reply (100 Continue): the real one follows */
        u->state = HEAD;
        return true;
    }
    u->out->status = status;
    u->deliver = u->on_data && status >= 200 && status < 300;
    if (chunked) {
        u->state = CHUNK_SIZE;
    } else if (has_length) {
        u->left = length;
        u->state = BODY_LENGTH;
        if (!u->deliver && length > max_body(u->out)) {
            end(u, TRANSPORT_OTHER, "reply larger than %zu MiB", max_body(u->out) >> 20);
            return false;
        }
        /* room once, not by doubling (a list page is ~225 KB); what a server claims is capped */
        if (!u->deliver)
            strbuf_grow(&u->out->body, (size_t)(length < UHTTP_PRESIZE ? length : UHTTP_PRESIZE));
    } else {
        u->state = status == 204 || status == 304 ? FINISHED : BODY_CLOSE;
    }
    if (u->state == BODY_LENGTH && length == 0)
        u->state = FINISHED;
    return true;
}

/* Parses what `in` holds past pos; false when more bytes are needed (or it ended). */
static bool parse_some(struct uhttp *u)
{
    size_t avail = u->in.len - u->pos;
    if (avail == 0)
        return false; /* every state needs at least a byte to move on */
    const char *p = u->in.buf + u->pos;
    switch (u->state) {
    case HEAD: {
        const char *e = memmem(p, avail, "\r\n\r\n", 4);
        if (e == NULL) {
            if (avail > UHTTP_MAX_HEAD)
                end(u, TRANSPORT_OTHER, "reply headers over %u KiB", UHTTP_MAX_HEAD >> 10);
            return false;
        }
        size_t n = (size_t)(e - p);
        u->pos += n + 4;
        return parse_head(u, p, n);
    }
    case BODY_LENGTH: {
        size_t n = avail < u->left ? avail : (size_t)u->left;
        if (n == 0)
            return false;
        u->pos += n;
        u->left -= n;
        if (!body_bytes(u, p, n))
            return false;
        if (u->left == 0)
            u->state = FINISHED;
        return true;
    }
    case CHUNK_SIZE: {
        const char *e = memmem(p, avail, "\r\n", 2);
        if (e == NULL) {
            if (avail > MAX_CHUNK_LINE)
                end(u, TRANSPORT_OTHER, "reply with a chunk size line over %d bytes",
                    MAX_CHUNK_LINE);
            return false;
        }
        size_t n = (size_t)(e - p);
        uint64_t size;
        if (!parse_size(p, n, 16, &size)) {
            end(u, TRANSPORT_OTHER, "reply with a bad chunk size");
            return false;
        }
        u->pos += n + 2;
        u->left = size;
        u->state = size == 0 ? TRAILER : CHUNK_DATA;
        return true;
    }
    case CHUNK_DATA: {
        size_t n = avail < u->left ? avail : (size_t)u->left;
        if (n == 0)
            return false;
        u->pos += n;
        u->left -= n;
        if (!body_bytes(u, p, n))
            return false;
        if (u->left == 0)
            u->state = CHUNK_END;
        return true;
    }
    case CHUNK_END:
        if (avail < 2)
            return false;
        if (p[0] != '\r' || p[1] != '\n') {
            end(u, TRANSPORT_OTHER, "reply with a chunk not ended by CRLF");
            return false;
        }
        u->pos += 2;
        u->state = CHUNK_SIZE;
        return true;
    case TRAILER: {
        const char *e = memmem(p, avail, "\r\n", 2);
        if (e == NULL) {
            if (avail > UHTTP_MAX_HEAD)
                end(u, TRANSPORT_OTHER, "reply trailer over %u KiB", UHTTP_MAX_HEAD >> 10);
            return false;
        }
        u->pos += (size_t)(e - p) + 2;
        if (e == p)
            u->state = FINISHED;
        return true;
    }
    case BODY_CLOSE:
        if (avail == 0)
            return false;
        u->pos += avail;
        return body_bytes(u, p, avail);
    case WRITING:
    case FINISHED:
        return false;
    }
    return false;
}

/* Drops the consumed bytes of `in` once they are at least half of it. */
static void compact(struct uhttp *u)
{
    if (u->pos > 0 && u->pos * 2 >= u->in.len) {
        memmove(u->in.buf, u->in.buf + u->pos, u->in.len - u->pos);
        strbuf_truncate(&u->in, u->in.len - u->pos);
        u->pos = 0;
    }
}

static void step_write(struct uhttp *u)
{
    while (u->sent < u->req.len) {
        ssize_t n =
            send(u->fd, u->req.buf + u->sent, u->req.len - u->sent, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            u->sent += (size_t)n;
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
            return;
        if (n < 0 && (errno == EPIPE || errno == ECONNRESET))
            break; /* the server answered early (a refusal) and closed: read that answer */
        end(u, TRANSPORT_OTHER, "sending the request: %s", strerror(errno));
        return;
    }
    u->state = HEAD;
}

bool uhttp_step(struct uhttp *u)
{
    if (u->state == WRITING)
        step_write(u);
    while (u->state != WRITING && u->state != FINISHED) {
        while (u->state != FINISHED && parse_some(u))
            ;
        if (u->state == FINISHED)
            break;
        compact(u);
        /*
         * Read into `in` itself, in pieces that grow while a long reply fills them (to
         * RECV_MAX): each read that frees the server's send buffer wakes it to write more, and
         * on a busy machine it takes this CPU to do so, so a reply of megabytes is read in
         * fewer, larger reads.
         */
        if (u->piece == 0)
            u->piece = RECV_MIN;
        strbuf_grow(&u->in, u->piece);
        ssize_t n = recv(u->fd, u->in.buf + u->in.len, u->piece, MSG_DONTWAIT);
        if (n > 0) {
            u->in.len += (size_t)n;
            u->in.buf[u->in.len] = '\0';
            if ((size_t)n == u->piece && u->piece < RECV_MAX)
                u->piece *= 2;
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
            break;
        if (n == 0 && u->state == BODY_CLOSE) {
            u->state = FINISHED;
            break;
        }
        if (n == 0)
            end(u, TRANSPORT_OTHER,
                u->state == HEAD && u->in.len == u->pos
                    ? "the server closed the connection without a reply"
                    : "the reply was cut short");
        else
            end(u, TRANSPORT_OTHER, "reading the reply: %s", strerror(errno));
    }
    if (u->state == FINISHED && u->fd >= 0) {
        close(u->fd);
        u->fd = -1;
    }
    return u->state == FINISHED;
}
