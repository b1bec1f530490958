/*
 * store: trainjobd's state in one SQLite database (see store.h).
 *
 * The connection is opened in SQLite's multi-thread mode (NOMUTEX): trainjobd
 * is single-threaded and the struct store is never shared between threads,
 * so the per-connection mutex would only cost time. Pragmas at open:
 * journal_mode=WAL (checked: a file system without shared memory support, for
 * one, refuses it and the open fails), synchronous=NORMAL (in WAL mode a
 * commit is a write(2) to the log, not an fsync: it survives the process
 * being killed, a power loss may lose the last commits), foreign_keys=ON (for
 * the events → jobs cascade; checked) and a 5 s busy timeout.
 *
 * The schema is built by migrations[], one step per version, applied in one
 * IMMEDIATE transaction at open. Every statement the engine runs per request
 * is prepared once at open and reset after each use; a callback of *_each
 * that re-enters the same iteration gets a private copy of the statement.
 *
 * Owns: the sqlite3 handle, its prepared statements, the store_begin depth and
 * the cached largest seq.
 */
#include "engine/store.h"

#include <inttypes.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/strbuf.h"
#include "util/xalloc.h"

/* The meta key under which the largest seq of a deleted job is kept. */
#define MAX_DELETED_SEQ_KEY "store.max_deleted_seq"

/*
 * migrations[n] takes the schema from version n to n + 1. Append only: never
 * edit a step that has shipped.
 *
 * Version 1: jobs by uid, (workspace, name) unique, indexed by seq for the
 * ordered load at start; events with an AUTOINCREMENT id (never reused, so a
 * watcher's "after id" stays meaningful), indexed by (uid, id), deleted with
 * their job; meta for small settings. A trigger keeps the largest deleted seq
 * in meta so that store_max_seq never goes back.
 */
static const char *const migrations[] = {
    "CREATE TABLE jobs ("
    "  uid TEXT PRIMARY KEY NOT NULL,"
    "  workspace TEXT NOT NULL,"
    "  name TEXT NOT NULL,"
    "  seq INTEGER NOT NULL,"
    "  json TEXT NOT NULL,"
    "  UNIQUE (workspace, name));"
    "CREATE INDEX jobs_by_seq ON jobs (seq);"
    "CREATE TABLE events ("
    "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  uid TEXT NOT NULL REFERENCES jobs (uid) ON DELETE CASCADE,"
    "  time_ms INTEGER NOT NULL,"
    "  json TEXT NOT NULL);"
    "CREATE INDEX events_by_job ON events (uid, id);"
    "CREATE TABLE meta (key TEXT PRIMARY KEY NOT NULL, value TEXT);"
    "CREATE TRIGGER jobs_keep_max_seq AFTER DELETE ON jobs BEGIN"
    "  INSERT INTO meta (key, value) VALUES ('" MAX_DELETED_SEQ_KEY "', OLD.seq)"
    "  ON CONFLICT (key) DO UPDATE SET value = excluded.value"
    "  WHERE CAST(value AS INTEGER) < CAST(excluded.value AS INTEGER);"
    "END;",
};

_Static_assert(sizeof migrations / sizeof migrations[0] == STORE_SCHEMA_VERSION,
               "one migration step per schema version");

enum stmt_id {
    STMT_BEGIN,
    STMT_COMMIT,
    STMT_ROLLBACK,
    STMT_JOB_INSERT,
    STMT_JOB_UPDATE,
    STMT_JOB_DELETE,
    STMT_JOBS_EACH,
    STMT_EVENT_ADD,
    STMT_EVENTS_EACH,
    STMT_EVENTS_TRIM,
    STMT_META_GET,
    STMT_META_SET,
    STMT_META_UNSET,
    STMT_COUNT
};

static const char *const stmt_sql[STMT_COUNT] = {
    [STMT_BEGIN] = "BEGIN IMMEDIATE",
    [STMT_COMMIT] = "COMMIT",
    [STMT_ROLLBACK] = "ROLLBACK",
    [STMT_JOB_INSERT] =
        "INSERT INTO jobs (uid, workspace, name, seq, json) VALUES (?1, ?2, ?3, ?4, ?5)",
    [STMT_JOB_UPDATE] = "UPDATE jobs SET json = ?2 WHERE uid = ?1",
    [STMT_JOB_DELETE] = "DELETE FROM jobs WHERE uid = ?1",
    [STMT_JOBS_EACH] = "SELECT uid, seq, json FROM jobs ORDER BY seq, uid",
    [STMT_EVENT_ADD] = "INSERT INTO events (uid, time_ms, json) VALUES (?1, ?2, ?3)",
    [STMT_EVENTS_EACH] =
        "SELECT id, time_ms, json FROM events WHERE uid = ?1 AND id > ?2 ORDER BY id",
    [STMT_EVENTS_TRIM] = "DELETE FROM events WHERE uid = ?1 AND id <= (SELECT id FROM events"
                         " WHERE uid = ?1 ORDER BY id DESC LIMIT 1 OFFSET ?2)",
    [STMT_META_GET] = "SELECT value FROM meta WHERE key = ?1",
    [STMT_META_SET] = "INSERT INTO meta (key, value) VALUES (?1, ?2)"
                      " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
    [STMT_META_UNSET] = "DELETE FROM meta WHERE key = ?1",
};

struct store {
    sqlite3 *db;
    char *path;
    sqlite3_stmt *stmt[STMT_COUNT];
    int depth;        /* store_begin nesting; 0 = autocommit */
    bool aborted;     /* a failed write rolled the current group back */
    uint64_t max_seq; /* largest seq ever inserted, deleted or not */
};

/* Appends "PATH: SQLite's message[: errno text] (what)" for the last error on db. */
static void db_message(const char *path, sqlite3 *db, struct strbuf *err, const char *what)
{
    if (err == NULL)
        return;
    strbuf_addf(err, "%s: %s", path, db ? sqlite3_errmsg(db) : "out of memory");
    if (db != NULL) {
        int primary = sqlite3_extended_errcode(db) & 0xff;
        int sys = sqlite3_system_errno(db);
        if (sys != 0 && (primary == SQLITE_CANTOPEN || primary == SQLITE_IOERR))
            strbuf_addf(err, ": %s", strerror(sys));
        if (primary == SQLITE_READONLY)
            strbuf_adds(err, "; the file and its directory must be writable");
    }
    if (what != NULL)
        strbuf_addf(err, " (%s)", what);
}

/* Appends a message of our own, prefixed with the database path. */
static void __attribute__((format(printf, 3, 4)))
store_message(const struct store *st, struct strbuf *err, const char *fmt, ...)
{
    if (err == NULL)
        return;
    strbuf_addf(err, "%s: ", st->path);
    va_list ap;
    va_start(ap, fmt);
    strbuf_vaddf(err, fmt, ap);
    va_end(ap);
}

/* Runs one of the cached no-argument statements (BEGIN/COMMIT/ROLLBACK). */
static int run_cached(struct store *st, enum stmt_id id)
{
    sqlite3_stmt *s = st->stmt[id];
    int rc = sqlite3_step(s);
    sqlite3_reset(s);
    return rc == SQLITE_ROW ? SQLITE_DONE : rc;
}

/* Ends whatever transaction SQLite still has open, ignoring errors. */
static void rollback_open_transaction(struct store *st)
{
    if (!sqlite3_get_autocommit(st->db)) {
        if (st->stmt[STMT_ROLLBACK] != NULL)
            (void)run_cached(st, STMT_ROLLBACK);
        else
            (void)sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
    }
}

/* Resets a statement for its next use and drops the caller's string bindings. */
static void stmt_done(sqlite3_stmt *s)
{
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
}

/*
 * A write failed: report it, reset s, and make sure no transaction stays
 * open. Inside a store_begin group the whole group is rolled back and
 * marked aborted (see store.h).
 */
static enum store_status write_failed(struct store *st, sqlite3_stmt *s, struct strbuf *err,
                                      const char *what)
{
    db_message(st->path, st->db, err, what);
    if (s != NULL)
        stmt_done(s);
    rollback_open_transaction(st);
    if (st->depth > 0)
        st->aborted = true;
    return STORE_ERROR;
}

/* Refuses a write in a group an earlier failure already rolled back. */
static bool refuse_if_aborted(struct store *st, struct strbuf *err)
{
    if (!st->aborted)
        return false;
    store_message(st, err, "an earlier write of this transaction failed and it was rolled back");
    return true;
}

/* Runs sql (no rows wanted); on failure appends the message and returns false. */
static bool exec_sql(const char *path, sqlite3 *db, const char *sql, struct strbuf *err,
                     const char *what)
{
    if (sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK)
        return true;
    db_message(path, db, err, what);
    return false;
}

/* Runs a one-row query and stores its first column as an integer (0 if NULL). */
static bool query_int(const char *path, sqlite3 *db, const char *sql, int64_t *out,
                      struct strbuf *err, const char *what)
{
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK) {
        db_message(path, db, err, what);
        return false;
    }
    int rc = sqlite3_step(s);
    if (rc != SQLITE_ROW) {
        if (rc == SQLITE_DONE && err != NULL)
            strbuf_addf(err, "%s: no answer (%s)", path, what);
        else
            db_message(path, db, err, what);
        sqlite3_finalize(s);
        return false;
    }
    *out = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    return true;
}

/* Switches to WAL and checks that SQLite really did. */
static bool set_wal(const char *path, sqlite3 *db, struct strbuf *err)
{
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(db, "PRAGMA journal_mode=WAL", -1, &s, NULL) != SQLITE_OK) {
        db_message(path, db, err, "setting journal_mode=WAL");
        return false;
    }
    int rc = sqlite3_step(s);
    if (rc != SQLITE_ROW) {
        db_message(path, db, err, "setting journal_mode=WAL");
        sqlite3_finalize(s);
        return false;
    }
    const char *mode = (const char *)sqlite3_column_text(s, 0);
    bool ok = mode != NULL && strcmp(mode, "wal") == 0;
    if (!ok)
        strbuf_addf(err,
                    "%s: SQLite kept journal_mode '%s' instead of 'wal' (a file system without "
                    "shared memory or locking?)",
                    path, mode ? mode : "?");
    sqlite3_finalize(s);
    return ok;
}

/* The schema version stored in db: 0 for a database without one yet, -1 on error. */
static int64_t read_version(const char *path, sqlite3 *db, struct strbuf *err)
{
    int64_t has_table = 0, version = 0;
    if (!query_int(
            path, db,
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'",
            &has_table, err, "reading the schema version"))
        return -1;
    if (has_table && !query_int(path, db, "SELECT max(version) FROM schema_version", &version, err,
                                "reading the schema version"))
        return -1;
    if (version < 0) {
        strbuf_addf(err, "%s: schema version %" PRId64 " is not valid", path, version);
        return -1;
    }
    return version;
}

/* Refuses a database made by a newer trainjobd. */
static bool version_known(const char *path, int64_t version, struct strbuf *err)
{
    if (version <= STORE_SCHEMA_VERSION)
        return true;
    strbuf_addf(
        err, "%s is schema version %" PRId64 "; this trainjobd knows up to %d; upgrade trainjobd",
        path, version, STORE_SCHEMA_VERSION);
    return false;
}

/* Brings the schema up to STORE_SCHEMA_VERSION, all steps in one transaction. */
static bool migrate(const char *path, sqlite3 *db, struct strbuf *err)
{
    int64_t version = read_version(path, db, err);
    if (version < 0 || !version_known(path, version, err))
        return false;
    if (version == STORE_SCHEMA_VERSION)
        return true;

    if (!exec_sql(path, db, "BEGIN IMMEDIATE", err, "starting the schema migration"))
        return false;
    /* Another process may have migrated while we waited for the lock. */
    version = read_version(path, db, err);
    if (version < 0 || !version_known(path, version, err))
        goto fail;
    if (!exec_sql(path, db, "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)",
                  err, "creating schema_version"))
        goto fail;
    for (int64_t v = version; v < STORE_SCHEMA_VERSION; v++) {
        char what[64];
        snprintf(what, sizeof what, "migrating schema %" PRId64 " to %" PRId64, v, v + 1);
        if (!exec_sql(path, db, migrations[v], err, what))
            goto fail;
    }
    char sql[128];
    snprintf(sql, sizeof sql,
             "DELETE FROM schema_version; INSERT INTO schema_version (version) VALUES (%d)",
             STORE_SCHEMA_VERSION);
    if (!exec_sql(path, db, sql, err, "recording the schema version") ||
        !exec_sql(path, db, "COMMIT", err, "committing the schema migration"))
        goto fail;
    return true;
fail:
    if (!sqlite3_get_autocommit(db))
        (void)sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    return false;
}

/* What to do with a database trainjobd will not start on. */
#define DAMAGED_ADVICE                                                                             \
    "trainjobd will not start on it, as that would forget every job it held: restore it from "     \
    "a backup, or move it aside (with its -wal and -shm files) to start an empty engine"

/*
 * Refuses a database file that exists but is empty: SQLite would take it for
 * a new database and the engine would start with no jobs. trainjobd writes
 * the header the moment it creates the file, so an empty one was truncated.
 */
static bool refuse_empty_file(const char *path, struct strbuf *err)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > 0)
        return false;
    strbuf_addf(err,
                "%s is empty (0 bytes), though trainjobd wrote it before (a full disk or a "
                "crash truncated it?); " DAMAGED_ADVICE,
                path);
    return true;
}

/* Checks the file's structure (PRAGMA quick_check) before trusting what it says. */
static bool check_intact(const char *path, sqlite3 *db, struct strbuf *err)
{
    sqlite3_stmt *s = NULL;
    const char *verdict = NULL;
    bool ok = false;
    if (sqlite3_prepare_v2(db, "PRAGMA quick_check(1)", -1, &s, NULL) == SQLITE_OK &&
        sqlite3_step(s) == SQLITE_ROW) {
        verdict = (const char *)sqlite3_column_text(s, 0);
        ok = verdict != NULL && strcmp(verdict, "ok") == 0;
    }
    if (!ok) {
        if (verdict != NULL)
            strbuf_addf(err, "%s is damaged (%s); " DAMAGED_ADVICE, path, verdict);
        else
            strbuf_addf(err, "%s is damaged or not a trainjobd database (%s); " DAMAGED_ADVICE,
                        path, sqlite3_errmsg(db));
    }
    sqlite3_finalize(s);
    return ok;
}

/* Sets the connection up: pragmas, schema, statements, cached max seq. */
static bool store_setup(struct store *st, struct strbuf *err)
{
    sqlite3 *db = st->db;
    const char *path = st->path;
    sqlite3_extended_result_codes(db, 1);
    sqlite3_busy_timeout(db, 5000);
    if (!check_intact(path, db, err))
        return false;
    if (sqlite3_db_readonly(db, "main") == 1) {
        strbuf_addf(err, "%s: the database file is read-only; trainjobd needs to write it", path);
        return false;
    }
    if (!set_wal(path, db, err) ||
        !exec_sql(path, db, "PRAGMA synchronous=NORMAL", err, "setting synchronous=NORMAL") ||
        !exec_sql(path, db, "PRAGMA foreign_keys=ON", err, "setting foreign_keys=ON"))
        return false;
    int64_t fk = 0;
    if (!query_int(path, db, "PRAGMA foreign_keys", &fk, err, "reading foreign_keys"))
        return false;
    if (fk != 1) {
        strbuf_addf(err, "%s: this SQLite does not enforce foreign keys", path);
        return false;
    }
    if (!migrate(path, db, err))
        return false;
    for (int i = 0; i < STMT_COUNT; i++) {
        if (sqlite3_prepare_v3(db, stmt_sql[i], -1, SQLITE_PREPARE_PERSISTENT, &st->stmt[i],
                               NULL) != SQLITE_OK) {
            db_message(path, db, err, "preparing statements");
            return false;
        }
    }
    int64_t max_seq = 0;
    if (!query_int(
            path, db,
            "SELECT max(coalesce((SELECT max(seq) FROM jobs), 0),"
            " coalesce((SELECT CAST(value AS INTEGER) FROM meta WHERE key = '" MAX_DELETED_SEQ_KEY
            "'), 0))",
            &max_seq, err, "reading the largest seq"))
        return false;
    st->max_seq = max_seq > 0 ? (uint64_t)max_seq : 0;
    return true;
}

/* Opens and sets up a connection; err is never NULL here. */
static enum store_status open_store(const char *path, struct store **out, struct strbuf *err)
{
    *out = NULL;
    if (refuse_empty_file(path, err))
        return STORE_ERROR;
    struct store *st = xcalloc(1, sizeof *st);
    st->path = xstrdup(path);
    int rc = sqlite3_open_v2(
        path, &st->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) {
        if (st->db == NULL)
            xalloc_die(); /* SQLite could not allocate its handle */
        db_message(path, st->db, err, "opening");
        store_close(st);
        return STORE_ERROR;
    }
    if (!store_setup(st, err)) {
        store_close(st);
        return STORE_ERROR;
    }
    *out = st;
    return STORE_OK;
}

enum store_status store_open(const char *path, struct store **out, struct strbuf *err)
{
    struct strbuf scratch = STRBUF_INIT; /* when the caller wants no message */
    enum store_status status = open_store(path, out, err != NULL ? err : &scratch);
    strbuf_free(&scratch);
    return status;
}

void store_close(struct store *st)
{
    if (st == NULL)
        return;
    if (st->db != NULL) {
        rollback_open_transaction(st);
        for (int i = 0; i < STMT_COUNT; i++)
            sqlite3_finalize(st->stmt[i]);
        sqlite3_close_v2(st->db);
    }
    free(st->path);
    free(st);
}

enum store_status store_begin(struct store *st, struct strbuf *err)
{
    if (refuse_if_aborted(st, err))
        return STORE_ERROR;
    if (st->depth == 0) {
        if (run_cached(st, STMT_BEGIN) != SQLITE_DONE) {
            db_message(st->path, st->db, err, "beginning a transaction");
            rollback_open_transaction(st);
            return STORE_ERROR;
        }
    }
    st->depth++;
    return STORE_OK;
}

/* Only the outermost commit writes; a failed COMMIT is rolled back, not left open. */
enum store_status store_commit(struct store *st, struct strbuf *err)
{
    if (st->depth == 0) {
        store_message(st, err, "store_commit without store_begin");
        return STORE_ERROR;
    }
    st->depth--;
    if (st->aborted) {
        if (st->depth == 0)
            st->aborted = false;
        store_message(st, err,
                      "transaction not committed: an earlier write failed and it was rolled back");
        return STORE_ERROR;
    }
    if (st->depth > 0)
        return STORE_OK;
    if (run_cached(st, STMT_COMMIT) != SQLITE_DONE) {
        db_message(st->path, st->db, err, "committing");
        rollback_open_transaction(st);
        return STORE_ERROR;
    }
    return STORE_OK;
}

void store_rollback(struct store *st)
{
    rollback_open_transaction(st);
    st->depth = 0;
    st->aborted = false;
}

enum store_status store_job_insert(struct store *st, const char *uid, const char *workspace,
                                   const char *name, uint64_t seq, const char *json,
                                   struct strbuf *err)
{
    if (refuse_if_aborted(st, err))
        return STORE_ERROR;
    if (seq > INT64_MAX) {
        store_message(st, err, "job %s: seq %" PRIu64 " is too large", uid ? uid : "?", seq);
        return STORE_ERROR;
    }
    sqlite3_stmt *s = st->stmt[STMT_JOB_INSERT];
    if (sqlite3_bind_text(s, 1, uid, -1, SQLITE_STATIC) != SQLITE_OK ||
        sqlite3_bind_text(s, 2, workspace, -1, SQLITE_STATIC) != SQLITE_OK ||
        sqlite3_bind_text(s, 3, name, -1, SQLITE_STATIC) != SQLITE_OK ||
        sqlite3_bind_int64(s, 4, (sqlite3_int64)seq) != SQLITE_OK ||
        sqlite3_bind_text(s, 5, json, -1, SQLITE_STATIC) != SQLITE_OK)
        return write_failed(st, s, err, "inserting a job");
    if (sqlite3_step(s) == SQLITE_DONE) {
        stmt_done(s);
        if (seq > st->max_seq)
            st->max_seq = seq;
        return STORE_OK;
    }
    if (sqlite3_extended_errcode(st->db) == SQLITE_CONSTRAINT_UNIQUE) {
        stmt_done(s);
        store_message(st, err, "workspace %s already has a job named %s", workspace, name);
        return STORE_EXISTS;
    }
    return write_failed(st, s, err, "inserting a job");
}

/* Runs an UPDATE or DELETE keyed by uid (?1), with json as ?2 when not NULL. */
static enum store_status job_change(struct store *st, enum stmt_id id, const char *uid,
                                    const char *json, struct strbuf *err, const char *what)
{
    if (refuse_if_aborted(st, err))
        return STORE_ERROR;
    sqlite3_stmt *s = st->stmt[id];
    if (sqlite3_bind_text(s, 1, uid, -1, SQLITE_STATIC) != SQLITE_OK ||
        (id == STMT_JOB_UPDATE && sqlite3_bind_text(s, 2, json, -1, SQLITE_STATIC) != SQLITE_OK))
        return write_failed(st, s, err, what);
    if (sqlite3_step(s) != SQLITE_DONE)
        return write_failed(st, s, err, what);
    stmt_done(s);
    if (sqlite3_changes(st->db) == 0) {
        store_message(st, err, "no job with uid %s", uid ? uid : "(null)");
        return STORE_NOT_FOUND;
    }
    return STORE_OK;
}

enum store_status store_job_update(struct store *st, const char *uid, const char *json,
                                   struct strbuf *err)
{
    return job_change(st, STMT_JOB_UPDATE, uid, json, err, "updating a job");
}

enum store_status store_job_delete(struct store *st, const char *uid, struct strbuf *err)
{
    return job_change(st, STMT_JOB_DELETE, uid, NULL, err, "deleting a job");
}

/*
 * The cached statement id, or, when a callback is still stepping it (an
 * *_each called from inside its own callback), a private copy that the
 * caller finalizes. NULL on error, with the message in err.
 */
static sqlite3_stmt *stmt_for_iteration(struct store *st, enum stmt_id id, bool *fresh,
                                        struct strbuf *err, const char *what)
{
    *fresh = false;
    if (!sqlite3_stmt_busy(st->stmt[id]))
        return st->stmt[id];
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(st->db, stmt_sql[id], -1, &s, NULL) != SQLITE_OK) {
        db_message(st->path, st->db, err, what);
        return NULL;
    }
    *fresh = true;
    return s;
}

/* Resets or finalizes an iteration statement from stmt_for_iteration. */
static void iteration_done(sqlite3_stmt *s, bool fresh)
{
    if (fresh)
        sqlite3_finalize(s);
    else
        stmt_done(s);
}

enum store_status store_jobs_each(struct store *st,
                                  int (*fn)(void *ctx, const char *uid, uint64_t seq,
                                            const char *json),
                                  void *ctx, struct strbuf *err)
{
    const char *what = "reading jobs";
    bool fresh;
    sqlite3_stmt *s = stmt_for_iteration(st, STMT_JOBS_EACH, &fresh, err, what);
    if (s == NULL)
        return STORE_ERROR;
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        const char *uid = (const char *)sqlite3_column_text(s, 0);
        int64_t seq = sqlite3_column_int64(s, 1);
        const char *json = (const char *)sqlite3_column_text(s, 2);
        if (fn(ctx, uid ? uid : "", seq > 0 ? (uint64_t)seq : 0, json ? json : "") != 0) {
            rc = SQLITE_DONE;
            break;
        }
    }
    if (rc != SQLITE_DONE) {
        db_message(st->path, st->db, err, what);
        iteration_done(s, fresh);
        return STORE_ERROR;
    }
    iteration_done(s, fresh);
    return STORE_OK;
}

uint64_t store_max_seq(struct store *st)
{
    return st->max_seq;
}

enum store_status store_event_add(struct store *st, const char *uid, int64_t time_ms,
                                  const char *json, int64_t *id, struct strbuf *err)
{
    const char *what = "adding an event";
    if (refuse_if_aborted(st, err))
        return STORE_ERROR;
    sqlite3_stmt *s = st->stmt[STMT_EVENT_ADD];
    if (sqlite3_bind_text(s, 1, uid, -1, SQLITE_STATIC) != SQLITE_OK ||
        sqlite3_bind_int64(s, 2, time_ms) != SQLITE_OK ||
        sqlite3_bind_text(s, 3, json, -1, SQLITE_STATIC) != SQLITE_OK)
        return write_failed(st, s, err, what);
    if (sqlite3_step(s) == SQLITE_DONE) {
        stmt_done(s);
        if (id != NULL)
            *id = sqlite3_last_insert_rowid(st->db);
        return STORE_OK;
    }
    if (sqlite3_extended_errcode(st->db) == SQLITE_CONSTRAINT_FOREIGNKEY) {
        stmt_done(s);
        store_message(st, err, "no job with uid %s", uid ? uid : "(null)");
        return STORE_NOT_FOUND;
    }
    return write_failed(st, s, err, what);
}

enum store_status store_events_trim(struct store *st, const char *uid, int keep, int64_t *folded,
                                    struct strbuf *err)
{
    const char *what = "folding old events";
    if (refuse_if_aborted(st, err))
        return STORE_ERROR;
    sqlite3_stmt *s = st->stmt[STMT_EVENTS_TRIM];
    if (sqlite3_bind_text(s, 1, uid, -1, SQLITE_STATIC) != SQLITE_OK ||
        sqlite3_bind_int(s, 2, keep > 0 ? keep : 0) != SQLITE_OK)
        return write_failed(st, s, err, what);
    if (sqlite3_step(s) != SQLITE_DONE)
        return write_failed(st, s, err, what);
    stmt_done(s);
    *folded += sqlite3_changes(st->db);
    return STORE_OK;
}

enum store_status store_events_each(struct store *st, const char *uid, int64_t after_id,
                                    int (*fn)(void *ctx, int64_t id, int64_t time_ms,
                                              const char *json),
                                    void *ctx, struct strbuf *err)
{
    const char *what = "reading events";
    bool fresh;
    sqlite3_stmt *s = stmt_for_iteration(st, STMT_EVENTS_EACH, &fresh, err, what);
    if (s == NULL)
        return STORE_ERROR;
    int rc = sqlite3_bind_text(s, 1, uid, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(s, 2, after_id);
    if (rc == SQLITE_OK) {
        while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
            const char *json = (const char *)sqlite3_column_text(s, 2);
            if (fn(ctx, sqlite3_column_int64(s, 0), sqlite3_column_int64(s, 1), json ? json : "") !=
                0) {
                rc = SQLITE_DONE;
                break;
            }
        }
    }
    if (rc != SQLITE_DONE) {
        db_message(st->path, st->db, err, what);
        iteration_done(s, fresh);
        return STORE_ERROR;
    }
    iteration_done(s, fresh);
    return STORE_OK;
}

char *store_meta_get(struct store *st, const char *key)
{
    sqlite3_stmt *s = st->stmt[STMT_META_GET];
    char *value = NULL;
    if (sqlite3_bind_text(s, 1, key, -1, SQLITE_STATIC) == SQLITE_OK &&
        sqlite3_step(s) == SQLITE_ROW) {
        const char *v = (const char *)sqlite3_column_text(s, 0);
        if (v != NULL)
            value = xstrdup(v);
    }
    stmt_done(s);
    return value;
}

enum store_status store_meta_set(struct store *st, const char *key, const char *value,
                                 struct strbuf *err)
{
    const char *what = "setting a meta value";
    if (refuse_if_aborted(st, err))
        return STORE_ERROR;
    sqlite3_stmt *s = st->stmt[value != NULL ? STMT_META_SET : STMT_META_UNSET];
    if (sqlite3_bind_text(s, 1, key, -1, SQLITE_STATIC) != SQLITE_OK ||
        (value != NULL && sqlite3_bind_text(s, 2, value, -1, SQLITE_STATIC) != SQLITE_OK))
        return write_failed(st, s, err, what);
    if (sqlite3_step(s) != SQLITE_DONE)
        return write_failed(st, s, err, what);
    stmt_done(s);
    return STORE_OK;
}

int store_test_limit_pages(struct store *st, int pages)
{
    char sql[64];
    snprintf(sql, sizeof sql, "PRAGMA max_page_count=%d", pages);
    int64_t cap = -1;
    if (!query_int(st->path, st->db, sql, &cap, NULL, "limiting pages"))
        return -1;
    return cap > INT32_MAX ? INT32_MAX : (int)cap;
}
