/*
 * flags: strict parsers for trainjobd's command-line values — a loopback
 * address and port, a number of seconds, a size in bytes, a path. Each takes
 * the whole text or nothing: no trailing junk, no sign where none belongs, no
 * overflow, and a message that names the flag and says what was expected.
 *
 * Called by engine/main.c before anything is created, and by engine/http.c
 * for the --listen address it binds.
 */
#ifndef ENGINE_FLAGS_H
#define ENGINE_FLAGS_H

#include <netinet/in.h>
#include <stddef.h>

struct strbuf;

/* The longest socket or state path a flag may name (bytes). */
#define FLAGS_PATH_MAX 4000

/*
 * "127.x.y.z:PORT" (dotted quad, PORT 0–65535 where 0 is any free port, decimal without sign or
 * leading zeros): fills out (network order). Returns 0, or -1 with a message
 * naming flag in err.
 */
int flags_parse_listen(const char *flag, const char *text, struct sockaddr_in *out,
                       struct strbuf *err);
/*
 * A number of seconds with at most three decimals ("10", "0.5"), from 0 to
 * max_s: *out_ms in milliseconds. Returns 0, or -1 with a message in err.
 */
int flags_parse_seconds(const char *flag, const char *text, int max_s, int *out_ms,
                        struct strbuf *err);
/*
 * A size in bytes, with an optional binary suffix K, M or G (KiB, MiB, GiB;
 * "16M"), from min to max bytes. Returns 0, or -1 with a message in err.
 */
int flags_parse_size(const char *flag, const char *text, size_t min, size_t max, size_t *out,
                     struct strbuf *err);
/* A path: not empty, at most FLAGS_PATH_MAX bytes, no control characters. */
int flags_check_path(const char *flag, const char *text, struct strbuf *err);

#endif
