/*
 * shown: the texts clients see of a job as last saved (the job, its workers,
 * its summary), kept deflated in memory (issue 14: as plain JSON they were
 * ~1.4 KB of trainjobd's ~3.2 KB a job; deflated against a dictionary they
 * are tens of bytes). Each kind of text has its own dictionary — the first
 * text of that kind packed in this process, at most 2 KB — so the jobs of
 * one engine, which share most of their fields, pack to what differs.
 *
 * Called by engine/record.c (take_snapshot: packing), queries.c and
 * watch.c (unpacking into replies). Single-threaded: the engine's loop only.
 */
#ifndef ENGINE_SHOWN_H
#define ENGINE_SHOWN_H

#include <stddef.h>

struct strbuf;

enum shown_kind {
    SHOWN_JOB,
    SHOWN_WORKERS,
    SHOWN_SUMMARY,
};

struct shown; /* one packed text (malloc'd; free with free) */

/* text (len bytes, no NUL needed) packed; never NULL. */
struct shown *shown_pack(enum shown_kind kind, const char *text, size_t len);
/* Appends the text s holds to out (nothing for NULL). */
void shown_append(const struct shown *s, struct strbuf *out);
/* The text s holds, NUL-terminated (caller frees); NULL for NULL. */
char *shown_text(const struct shown *s);
/* Bytes s takes in memory (its header included), for the benches. */
size_t shown_size(const struct shown *s);

#endif
