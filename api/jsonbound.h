/*
 * jsonbound: a server's JSON reply decoded within a memory bound. jansson
 * spends far more memory than the text it reads (a value is a node, a
 * member a hash entry: about 75 bytes per byte of a Slurm /jobs reply), so
 * a byte cap on the transport does not bound what decoding takes. Here a
 * reply is pre-scanned (a small tokenizer honouring strings, escapes and
 * nesting, no allocation) to count its values and what they would cost,
 * and refused over the bound instead of ballooning.
 *
 * The same tokenizer finds the byte span of a top-level member and of each
 * element of an array, so a caller can look at one element cheaply and
 * decode only the elements it wants.
 *
 * A stream (jsonbound_stream) does the same for a reply fed in pieces as it
 * arrives: it keeps its state across pieces (the member it is in, nesting,
 * in a string, after a backslash) and holds only the element of the chosen
 * array being read, handed over once it closes, and the other members of
 * the top-level object, within a byte bound. Memory follows the largest
 * element, not the reply (api/slurm_rest: the user's jobs of a
 * cluster-wide GET /jobs). Used by the Slurm and ACP drivers.
 */
#ifndef API_JSONBOUND_H
#define API_JSONBOUND_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

struct strbuf;

/* The bound of one decoded reply, in bytes of memory (about). */
#define JSONBOUND_MAX ((size_t)256 << 20)

/* What a scanned text would hold once decoded. */
struct jsonbound_count {
    size_t values;  /* objects, arrays, strings, numbers, literals (keys not counted) */
    size_t members; /* object members */
    size_t text;    /* bytes of strings and keys */
};

/* The memory decoding what c counts would take, about (jansson's nodes and hash entries). */
size_t jsonbound_cost(const struct jsonbound_count *c);

/*
 * Skips the JSON value at buf[*pos] (leading white space first): returns 0
 * and moves *pos just past it, adding what it holds to c (when not NULL),
 * or -1 when the text ends inside it or a bracket does not match. It does
 * not check the grammar (json_loadb does); it only finds where values end.
 */
int jsonbound_skip(const char *buf, size_t len, size_t *pos, struct jsonbound_count *c);

/*
 * json_loadb of buf when decoding it takes at most bound bytes (0: JSONBOUND_MAX);
 * else NULL with why: "reply of N values would take about M MiB, over the L MiB
 * bound". A text that is not JSON is NULL with jansson's reason.
 */
json_t *jsonbound_loadb(const char *buf, size_t len, size_t bound, struct strbuf *why);

/*
 * The span of the value of member key of the top-level object of buf:
 * true with [*start, *end), false when buf is no object or has no such
 * member. Keys are compared as written (no escapes decoded).
 */
bool jsonbound_member(const char *buf, size_t len, const char *key, size_t *start, size_t *end);

/*
 * Calls fn with the span of each element of the array at buf[start, end)
 * in order; returns 0, fn's non-zero return, or -1 when it is no array or
 * is cut short.
 */
typedef int (*jsonbound_element_fn)(void *ctx, const char *elem, size_t len);
int jsonbound_elements(const char *buf, size_t start, size_t end, jsonbound_element_fn fn,
                       void *ctx);

/*
 * Whether member key of the object obj[0, len) is the string want; an
 * escaped string is decoded first (it is small or the element is refused).
 */
bool jsonbound_member_is(const char *obj, size_t len, const char *key, const char *want);
/* Adds the JSON text [0, len) to out without the blanks between its tokens (strings kept whole). */
void jsonbound_add_compact(struct strbuf *out, const char *text, size_t len);

/*
 * A top-level object read in pieces: each element of its member array_key
 * (which must be an array) goes to fn as it closes; one over max_element
 * bytes is read past, never held nor handed to fn. Every other member is
 * kept, as written, within max_rest bytes together (more fails the stream).
 * Keys are compared as written. Text that is no such object fails the
 * stream saying why; json_loadb checks the grammar of what is decoded.
 */
struct jsonbound_stream;
struct jsonbound_stream *jsonbound_stream_new(const char *array_key, size_t max_element,
                                              size_t max_rest, jsonbound_element_fn fn, void *ctx);
/*
 * A reader of whole elements in place: walk gets the bytes from where an
 * element starts to the end of the piece (at most max_element of them) and
 * returns how many the element took when it read it whole there (the
 * element is then done: fn is not called for it), or 0 for the stream to
 * gather it and hand it to fn as usual (cut by the piece's end, or not what
 * walk reads). Spares copying and scanning an element twice.
 */
typedef size_t (*jsonbound_walk_fn)(void *ctx, const char *data, size_t len);
void jsonbound_stream_set_walk(struct jsonbound_stream *s, jsonbound_walk_fn walk);
/* The next piece: 0, fn's non-zero return, or -1 when the stream failed (now or before). */
int jsonbound_stream_feed(struct jsonbound_stream *s, const char *data, size_t len);
/*
 * After the last piece: the other members as an object, *had_array telling
 * whether array_key was there; NULL with why when the stream failed or the
 * text ended before the object did.
 */
json_t *jsonbound_stream_end(struct jsonbound_stream *s, bool *had_array, struct strbuf *why);
void jsonbound_stream_free(struct jsonbound_stream *s);

#endif
