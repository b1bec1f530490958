/*
 * http: trainjobd's HTTP server on libmicrohttpd, driven by the engine's one
 * poll loop (MHD's epoll descriptor is registered there; nothing runs in a
 * thread of MHD's). It listens on a Unix socket (mode 0600; the caller is
 * the peer's uid, SO_PEERCRED) and optionally on loopback TCP, where every
 * request must carry a valid AK/SK signature over its request line and body,
 * used once. Requests go to engine/routes; long-lived answers (watch, log
 * follow) park their connection until the engine writes to their stream.
 */
#ifndef ENGINE_HTTP_H
#define ENGINE_HTTP_H

struct engine;
struct loop;
struct strbuf;
struct http_server;

/*
 * Starts listening. socket_path is required; listen ("127.0.0.1:PORT", port 0
 * for any free one) may be NULL. Returns NULL with a message in err.
 */
struct http_server *http_server_start(struct engine *eng, struct loop *lp, const char *socket_path,
                                      const char *listen, struct strbuf *err);
/* The TCP address as bound ("127.0.0.1:PORT", the real port for :0), or NULL. */
const char *http_server_tcp_address(const struct http_server *srv);
void http_server_stop(struct http_server *srv);

#endif
