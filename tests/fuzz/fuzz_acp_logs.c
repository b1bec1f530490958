/*
 * fuzz_acp_logs: libFuzzer target for the decoder of SenseCore Monitor
 * log pages (api/acp_logs: acp_logs_decode; built with clang by `make fuzz`,
 * and with tests/fuzz/replay.c by `make test`). A page comes from a server
 * and its bodies from a job, so both are hostile input.
 *
 * For any input: a reply that is not an object with hits[] and a count is
 * refused with a reason; otherwise every line handed on is valid UTF-8 with
 * no escape sequence, control (but '\n' and '\t'), DEL or C1 control left,
 * ends in its one '\n', and belongs to the worker asked for; the lines are
 * no more than the hits and keep their order.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/acp_logs.h"
#include "util/strbuf.h"
#include "util/utf8.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "fuzz_acp_logs: %s:%d: check failed: %s\n", __FILE__, __LINE__,        \
                    #cond);                                                                        \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* A line is safe for a terminal: UTF-8, no ESC, C0 (but \n, \t), DEL or C1. */
static void check_line(const char *s, size_t n)
{
    CHECK(n > 0 && s[n - 1] == '\n');
    CHECK(utf8_valid(s, n));
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t k = utf8_decode(s + i, n - i, &cp);
        CHECK(cp >= 0x20 || cp == '\n' || cp == '\t');
        CHECK(cp != 0x7f && !(cp >= 0x80 && cp <= 0x9f));
        i += k;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *reply = json_loadb((const char *)data, size, JSON_DECODE_ANY, NULL);
    if (reply == NULL)
        return 0;
    /* the worker asked for: the first pod the reply names, or one it does not */
    const char *worker = "w0";
    json_t *h0 = json_array_get(json_object_get(reply, "hits"), 0);
    const char *pod =
        json_string_value(json_object_get(json_object_get(h0, "attributes"), "k8s.pod.name"));
    if (pod && size % 2 == 0)
        worker = pod;
    struct acp_log_page page = {0};
    struct strbuf err = STRBUF_INIT;
    int rc = acp_logs_decode(reply, worker, &page, &err);
    if (rc != 0) {
        CHECK(err.len > 0);
        CHECK(page.count == 0);
    } else {
        const json_t *hits = json_object_get(reply, "hits");
        CHECK(json_is_array(hits));
        CHECK(page.raw == json_array_size(hits));
        CHECK(page.count <= page.raw);
        CHECK(page.total >= 0);
        for (size_t i = 0; i < page.count; i++) {
            const struct acp_log_hit *h = &page.hits[i];
            check_line(h->text, strlen(h->text));
            CHECK(h->seq < page.raw);
            CHECK(i == 0 || h->seq > page.hits[i - 1].seq);
            const json_t *src = json_array_get(hits, h->seq);
            const char *p = json_string_value(
                json_object_get(json_object_get(src, "attributes"), "k8s.pod.name"));
            CHECK(p != NULL && strcmp(p, worker) == 0);
        }
    }
    strbuf_free(&err);
    acp_log_page_free(&page);
    json_decref(reply);
    return 0;
}
