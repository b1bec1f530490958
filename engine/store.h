/*
 * store: trainjobd's durable state in SQLite (WAL mode) under --state-dir.
 *
 * The engine keeps its live state in memory and writes every change through
 * here before it answers: a job acknowledged with 2xx is on disk, and a
 * kill -9 at any moment loses nothing acknowledged. Records are JSON
 * documents the engine owns (job with its workers, events); the store knows
 * only their keys: a job's uid, its workspace and name (unique together), its
 * submission sequence number. A schema_version table drives migrations.
 *
 * Errors: every function taking err (which may be NULL) appends one line to
 * it when it returns anything but STORE_OK: "PATH: SQLite's message (what was
 * being done)". STORE_EXISTS and STORE_NOT_FOUND leave an open transaction as
 * it was. A write that returns STORE_ERROR never leaves a transaction open:
 * inside store_begin … store_commit it rolls the whole group back, and every
 * later write and commit of that group fails too, until the outermost
 * store_commit or a store_rollback ends it. So a group is applied entirely or
 * not at all.
 *
 * Durability: synchronous=NORMAL in WAL mode. A committed write survives the
 * process dying (crash, kill -9); a power loss or OS crash may lose the last
 * few commits, never corrupt the database.
 */
#ifndef ENGINE_STORE_H
#define ENGINE_STORE_H

#include <stddef.h>
#include <stdint.h>

struct store;
struct strbuf;

enum store_status {
    STORE_OK = 0,
    STORE_EXISTS = 1,    /* (workspace, name) is taken */
    STORE_NOT_FOUND = 2, /* no such uid */
    STORE_ERROR = -1,    /* see the message: disk full, read-only, corrupt… */
};

#define STORE_SCHEMA_VERSION 1

/* Opens (creating if needed) the database at path. On error, err says why. */
enum store_status store_open(const char *path, struct store **out, struct strbuf *err);
/* Closes st (NULL is fine); an unfinished store_begin group is rolled back. */
void store_close(struct store *st);

/* Groups several writes into one transaction (one fsync); nests by counting. */
enum store_status store_begin(struct store *st, struct strbuf *err);
enum store_status store_commit(struct store *st, struct strbuf *err);
/* Undoes everything since the outermost store_begin. */
void store_rollback(struct store *st);

enum store_status store_job_insert(struct store *st, const char *uid, const char *workspace,
                                   const char *name, uint64_t seq, const char *json,
                                   struct strbuf *err);
enum store_status store_job_update(struct store *st, const char *uid, const char *json,
                                   struct strbuf *err);
/* Deletes the job and its events. */
enum store_status store_job_delete(struct store *st, const char *uid, struct strbuf *err);
/* Calls fn for every job in seq order; stops early when fn returns non-zero. */
enum store_status store_jobs_each(struct store *st,
                                  int (*fn)(void *ctx, const char *uid, uint64_t seq,
                                            const char *json),
                                  void *ctx, struct strbuf *err);
/*
 * The largest seq ever stored (0 when none), so numbering continues after a
 * restart. Deleting the newest job does not lower it: a seq is never reused.
 */
uint64_t store_max_seq(struct store *st);

/* Appends an event for job uid; its id (increasing) is written to *id when id != NULL. */
enum store_status store_event_add(struct store *st, const char *uid, int64_t time_ms,
                                  const char *json, int64_t *id, struct strbuf *err);
/*
 * Keeps only the newest `keep` events of uid, deleting older ones; the count
 * deleted is added to *folded. A job's events stay bounded however long it
 * crash-loops.
 */
enum store_status store_events_trim(struct store *st, const char *uid, int keep, int64_t *folded,
                                    struct strbuf *err);
/* Calls fn for each event of uid with id > after_id, oldest first; stops early on non-zero. */
enum store_status store_events_each(struct store *st, const char *uid, int64_t after_id,
                                    int (*fn)(void *ctx, int64_t id, int64_t time_ms,
                                              const char *json),
                                    void *ctx, struct strbuf *err);

/*
 * Small key/value settings (e.g. the node marks an operator made). NULL when
 * unset (or unreadable); caller frees. Setting NULL unsets. Keys starting
 * with "store." are the store's own.
 */
char *store_meta_get(struct store *st, const char *key);
enum store_status store_meta_set(struct store *st, const char *key, const char *value,
                                 struct strbuf *err);

/*
 * For tests: caps the database at pages pages (PRAGMA max_page_count) so a
 * test can fill the "disk". SQLite never sets the cap below the current size;
 * returns the cap in effect, or -1 on error.
 */
int store_test_limit_pages(struct store *st, int pages);

#endif
