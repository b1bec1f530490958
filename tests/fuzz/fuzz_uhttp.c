/*
 * fuzz_uhttp: api/uhttp reading whatever a server (or something posing as
 * one on the engine's socket) replies. The input is the reply, fed through
 * a socketpair in pieces whose sizes come from its first byte, then the
 * server closes. The exchange must end (finished, never hung), keep a
 * collected body within UHTTP_MAX_REPLY, and a 2xx stream must reach
 * on_data only in order and only with body bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "api/http.h"
#include "api/uhttp.h"

#define FUZZ_MAX_INPUT (128u << 10) /* within a socketpair's buffer with the request */

static int on_data(void *ctx, const char *data, size_t len)
{
    size_t *total = ctx;
    (void)data;
    *total += len;
    return *total > (1u << 20); /* a stream the owner stops */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > FUZZ_MAX_INPUT)
        return 0;
    size_t piece = (size_t)data[0] % 64 + 1;
    data++, size--;
    for (int stream = 0; stream < 2; stream++) {
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
            abort();
        struct http_result out;
        http_result_init(&out);
        size_t total = 0;
        struct uhttp *u =
            uhttp_start_fd(sv[0], "GET", "/x", "", NULL, 0, stream ? on_data : NULL, &total, &out);
        size_t off = 0;
        bool closed = false;
        int turns = 0;
        while (!uhttp_step(u)) {
            if (++turns > 1000000)
                abort(); /* the exchange never ends */
            char sink[4096];
            while (recv(sv[1], sink, sizeof sink, MSG_DONTWAIT) > 0)
                ;
            if (off < size) {
                size_t k = size - off < piece ? size - off : piece;
                if (send(sv[1], data + off, k, MSG_NOSIGNAL) != (ssize_t)k)
                    abort();
                off += k;
            } else if (!closed) {
                shutdown(sv[1], SHUT_WR);
                closed = true;
            }
        }
        if (out.body.len > UHTTP_MAX_REPLY || total > size)
            abort();
        if (out.transport == TRANSPORT_NONE && out.status != 0 &&
            (out.status < 200 || out.status > 599))
            abort();
        uhttp_free(u);
        close(sv[1]);
        http_result_free(&out);
    }
    return 0;
}
