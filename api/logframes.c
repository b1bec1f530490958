/*
 * logframes: parsing a framed log stream (see logframes.h). Headers are one
 * short line each; anything longer than a header can be, or not one of the
 * six kinds, marks the stream broken rather than guessing.
 */
#include "api/logframes.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_HEAD 64

void logframes_init(struct logframes *lf, logframes_data_fn data, logframes_skip_fn skip, void *ctx)
{
    memset(lf, 0, sizeof *lf);
    lf->head = (struct strbuf)STRBUF_INIT;
    lf->data = data;
    lf->skip = skip;
    lf->ctx = ctx;
}

void logframes_free(struct logframes *lf)
{
    strbuf_free(&lf->head);
}

void logframes_reset_stream(struct logframes *lf)
{
    strbuf_reset(&lf->head);
    lf->data_left = 0;
}

/* Reads an unsigned decimal number that ends the string (or, with sep, is followed by it). */
static bool number(const char **p, uintmax_t *out, char sep)
{
    char *end;
    if (**p < '0' || **p > '9')
        return false;
    errno = 0;
    *out = strtoumax(*p, &end, 10);
    if (errno || *end != sep)
        return false;
    *p = sep ? end + 1 : end;
    return true;
}

/* One header line (without its newline). */
static int header(struct logframes *lf, const char *h)
{
    uintmax_t a, b;
    const char *p = h + 2;
    if (h[0] == 'E' && h[1] == '\0') {
        lf->ended = true;
        return 0;
    }
    if (h[0] == 'C' && h[1] == '\0') {
        lf->caught_up = true;
        return 0;
    }
    if (h[0] == '\0' || h[1] != ' ') {
        lf->broken = true;
        return 1;
    }
    switch (h[0]) {
    case 'P':
        if (!number(&p, &a, ' ') || !number(&p, &b, '\0'))
            break;
        lf->inode = a;
        lf->offset = b;
        lf->have_position = true;
        return 0;
    case 'T':
        if (!number(&p, &a, '\0'))
            break;
        lf->time_ms = (uint64_t)a;
        lf->have_time = true;
        return 0;
    case 'D':
        if (!number(&p, &a, '\0'))
            break;
        lf->data_left = a;
        lf->caught_up = false;
        return 0;
    case 'S':
        if (!number(&p, &a, '\0'))
            break;
        return lf->skip ? lf->skip(lf->ctx, a) : 0;
    }
    lf->broken = true;
    return 1;
}

int logframes_feed(struct logframes *lf, const char *p, size_t n)
{
    lf->received += n;
    while (n > 0 && !lf->broken) {
        if (lf->data_left > 0) {
            size_t k = n < lf->data_left ? n : (size_t)lf->data_left;
            lf->data_left -= k;
            lf->offset += k;
            int rc = lf->data ? lf->data(lf->ctx, p, k) : 0;
            p += k;
            n -= k;
            if (rc)
                return rc;
            continue;
        }
        const char *nl = memchr(p, '\n', n);
        size_t k = nl ? (size_t)(nl - p) : n;
        if (lf->head.len + k > MAX_HEAD) {
            lf->broken = true;
            return 1;
        }
        strbuf_add(&lf->head, p, k);
        p += k;
        n -= k;
        if (nl == NULL)
            break;
        p++, n--;
        int rc = header(lf, strbuf_str(&lf->head));
        strbuf_reset(&lf->head);
        if (rc)
            return rc;
    }
    return lf->broken ? 1 : 0;
}

bool logframes_cursor(const struct logframes *lf, char *buf, size_t size)
{
    if (!lf->have_position)
        return false;
    snprintf(buf, size, "%ju:%ju", lf->inode, lf->offset);
    return true;
}
