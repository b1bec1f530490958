/*
 * Fuzz target: arbitrary bytes through api/jsonbound — the tokenizer, the
 * spans of a member and of an array's elements, a member compared in place,
 * and the bounded loader with a small bound. The tokenizer must never read
 * past the input; whatever jansson decodes whole it must find the end of
 * and every span it gives must lie in
 * the input. A crash, an abort or a failed check is the finding.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/jsonbound.h"
#include "util/strbuf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct spans {
    const char *buf;
    size_t len, count;
};

static int in_input(void *ctx, const char *elem, size_t len)
{
    struct spans *s = ctx;
    if (elem < s->buf || elem + len > s->buf + s->len || len == 0)
        abort();
    s->count++;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* A copy of exactly size bytes: ASan sees any read past the end. */
    char *buf = malloc(size ? size : 1);
    if (buf == NULL)
        return 0;
    memcpy(buf, data, size);
    size_t end = 0;
    int rc = jsonbound_skip(buf, size, &end, NULL);
    if (rc == 0 && end > size)
        abort();
    json_t *whole = json_loadb(buf, size, JSON_DECODE_ANY | JSON_DISABLE_EOF_CHECK, NULL);
    if (whole && rc != 0)
        abort(); /* jansson read a value whose end the tokenizer did not find */
    json_decref(whole);
    size_t s, e;
    if (jsonbound_member(buf, size, "jobs", &s, &e)) {
        if (s > e || e > size)
            abort();
        struct spans sp = {buf, size, 0};
        jsonbound_elements(buf, s, e, in_input, &sp);
    }
    (void)jsonbound_member_is(buf, size, "user_name", "alice");
    struct strbuf why = STRBUF_INIT;
    json_t *j = jsonbound_loadb(buf, size, 4096, &why);
    json_decref(j);
    strbuf_free(&why);
    free(buf);
    return 0;
}
