/*
 * flags: strict parsers for trainjobd's command-line values; see flags.h.
 *
 * Nothing here trusts the C library's lenient number parsers alone: each
 * value is checked character by character first (digits where digits
 * belong, the end where it should end), then converted with a range check.
 * Messages quote the value with anything unprintable shown as '?', so a flag
 * cannot put escape sequences into the terminal or the log.
 */
#include "engine/flags.h"

#include <arpa/inet.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "util/strbuf.h"

/* The longest value echoed back in a message. */
#define ECHO_MAX 80

/* Appends 'text' quoted, printable ASCII only, cut at ECHO_MAX bytes. */
static void add_quoted(struct strbuf *err, const char *text)
{
    strbuf_addc(err, '\'');
    size_t i = 0;
    for (; text[i] && i < ECHO_MAX; i++) {
        unsigned char c = (unsigned char)text[i];
        strbuf_addc(err, c >= 0x20 && c < 0x7f ? (char)c : '?');
    }
    strbuf_adds(err, text[i] ? "…'" : "'");
}

/* "--flag 'text': why" */
static int refuse(struct strbuf *err, const char *flag, const char *text, const char *why)
{
    strbuf_addf(err, "%s ", flag);
    add_quoted(err, text);
    strbuf_addf(err, ": %s", why);
    return -1;
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Reads 1–max_digits decimal digits without a leading zero (unless the number is 0). */
static bool read_decimal(const char **p, int max_digits, uint64_t *out)
{
    const char *s = *p;
    int n = 0;
    uint64_t v = 0;
    while (is_digit(s[n])) {
        if (n == max_digits)
            return false;
        v = v * 10 + (uint64_t)(s[n] - '0');
        n++;
    }
    if (n == 0 || (n > 1 && s[0] == '0'))
        return false;
    *p = s + n;
    *out = v;
    return true;
}

int flags_parse_listen(const char *flag, const char *text, struct sockaddr_in *out,
                       struct strbuf *err)
{
    static const char want[] = "expected a loopback address and port, 127.x.x.x:PORT";
    const char *colon = strrchr(text, ':');
    if (colon == NULL || colon == text || (size_t)(colon - text) > 15)
        return refuse(err, flag, text, want);
    char host[16];
    memcpy(host, text, (size_t)(colon - text));
    host[colon - text] = '\0';
    /* Four dotted decimals, each 0–255, nothing else. */
    const char *p = host;
    for (int part = 0; part < 4; part++) {
        uint64_t octet;
        if (!read_decimal(&p, 3, &octet) || octet > 255)
            return refuse(err, flag, text, want);
        if (part < 3 && *p++ != '.')
            return refuse(err, flag, text, want);
    }
    if (*p != '\0')
        return refuse(err, flag, text, want);
    memset(out, 0, sizeof *out);
    out->sin_family = AF_INET;
    if (inet_pton(AF_INET, host, &out->sin_addr) != 1)
        return refuse(err, flag, text, want);
    if ((ntohl(out->sin_addr.s_addr) >> 24) != 127)
        return refuse(err, flag, text,
                      "only a loopback address (127.x.x.x) may listen: TCP clients are not "
                      "checked by their user");
    const char *port_text = colon + 1;
    uint64_t port;
    if (!read_decimal(&port_text, 5, &port) || *port_text != '\0')
        return refuse(err, flag, text, "expected a port number 0–65535 after the ':'");
    if (port > 65535)
        return refuse(err, flag, text, "the port must be 0–65535 (0: any free port)");
    out->sin_port = htons((uint16_t)port);
    return 0;
}

int flags_parse_seconds(const char *flag, const char *text, int max_s, int *out_ms,
                        struct strbuf *err)
{
    const char *p = text;
    uint64_t whole;
    if (!read_decimal(&p, 9, &whole))
        return refuse(err, flag, text, "expected a number of seconds, such as 10 or 0.5");
    uint64_t ms = whole * 1000;
    if (*p == '.') {
        p++;
        uint64_t scale = 100;
        int digits = 0;
        while (is_digit(*p)) {
            if (++digits > 3)
                return refuse(err, flag, text, "at most three decimals (milliseconds)");
            ms += (uint64_t)(*p - '0') * scale;
            scale /= 10;
            p++;
        }
        if (digits == 0)
            return refuse(err, flag, text, "expected digits after the '.'");
    }
    if (*p != '\0')
        return refuse(err, flag, text, "expected a number of seconds, such as 10 or 0.5");
    if (ms > (uint64_t)max_s * 1000) {
        char why[80];
        snprintf(why, sizeof why, "at most %d seconds", max_s);
        return refuse(err, flag, text, why);
    }
    *out_ms = (int)ms;
    return 0;
}

int flags_parse_size(const char *flag, const char *text, size_t min, size_t max, size_t *out,
                     struct strbuf *err)
{
    static const char want[] = "expected a size in bytes, optionally with K, M or G (16M)";
    const char *p = text;
    uint64_t n;
    if (!read_decimal(&p, 19, &n))
        return refuse(err, flag, text, want);
    unsigned shift = 0;
    if (*p == 'K' || *p == 'k')
        shift = 10, p++;
    else if (*p == 'M' || *p == 'm')
        shift = 20, p++;
    else if (*p == 'G' || *p == 'g')
        shift = 30, p++;
    if (*p != '\0')
        return refuse(err, flag, text, want);
    if (n > (UINT64_MAX >> shift) || (n << shift) > max || (n << shift) < min) {
        char why[120];
        snprintf(why, sizeof why, "must be from %zu to %zu bytes", min, max);
        return refuse(err, flag, text, why);
    }
    *out = (size_t)(n << shift);
    return 0;
}

int flags_check_path(const char *flag, const char *text, struct strbuf *err)
{
    if (*text == '\0')
        return refuse(err, flag, text, "expected a path, got nothing");
    size_t len = strlen(text);
    if (len > FLAGS_PATH_MAX)
        return refuse(err, flag, text, "the path is too long");
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)text[i] < 0x20 || text[i] == 0x7f)
            return refuse(err, flag, text, "a path with control characters");
    return 0;
}
