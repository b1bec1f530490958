/*
 * fileio: whole-file reads with a size cap and atomic writes (temp file in
 * the same directory, fsync, rename), so a reader never sees half a file and
 * a crash never leaves one.
 */
#ifndef UTIL_FILEIO_H
#define UTIL_FILEIO_H

#include <stddef.h>
#include <sys/types.h>

struct strbuf;

/*
 * Reads path ("-" is standard input) into a NUL-terminated buffer of at most
 * max bytes. Returns 0, or -1 with a message naming the file in err.
 */
int file_read_all(const char *path, size_t max, char **data, size_t *len, struct strbuf *err);
/*
 * file_read_all for a settings file: refuses at once what is not a regular
 * file (a FIFO would block the start, a device never end), "-" included.
 */
int file_read_regular(const char *path, size_t max, char **data, size_t *len, struct strbuf *err);
/*
 * file_read_regular that also gives the file's status as read (the open
 * file's, so an owner checked there is the owner of what was read).
 */
struct stat;
int file_read_regular_stat(const char *path, size_t max, char **data, size_t *len, struct stat *st,
                           struct strbuf *err);
/* Replaces path with data atomically. Returns 0, or -1 with a message in err. */
int file_write_atomic(const char *path, const void *data, size_t len, mode_t mode,
                      struct strbuf *err);
/*
 * file_write_atomic without the fsyncs: a reader still sees the old file or
 * the new one, never part of it, but a crash of the machine may lose it. For
 * files that only describe running processes (a shim's pid file), which such
 * a crash ends as well.
 */
int file_write_atomic_nosync(const char *path, const void *data, size_t len, mode_t mode,
                             struct strbuf *err);
/* The path of name in the directory of the running binary, or NULL if unknown. */
char *file_beside_self(const char *name);
/* mkdir -p with the given mode for each created component. Returns 0 or -1. */
int file_mkdirs(const char *path, mode_t mode, struct strbuf *err);

#endif
