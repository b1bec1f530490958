/*
 * statelock: one trainjobd per state directory. An exclusive flock on
 * <state-dir>/trainjobd.lock, held for the engine's whole life, whose file
 * says who holds it ("pid N\nsocket S\n"), so a second engine on the same
 * directory names the first and stops before it opens the store or starts
 * anything — two engines on one store would run each queued job twice.
 *
 * The lock is a POSIX record lock (fcntl F_SETLK), which belongs to the
 * process, not to the descriptor: a child that has a copy of the descriptor
 * (one forked, or spawned, and not yet at its exec) does not hold it, so it
 * ends exactly when the engine does, also when the engine is killed, and a
 * restart right after a kill -9 finds it free. (An flock would live on in
 * such a child until its exec.) For the same reason the lock does not cross
 * the forks of daemonizing: the detached process takes it over from the one
 * it came from (statelock_take_over). The descriptor is close-on-exec.
 * A record lock also ends when its process closes any descriptor of the
 * file: nothing else in trainjobd opens trainjobd.lock.
 * Called by engine/main.c.
 */
#ifndef ENGINE_STATELOCK_H
#define ENGINE_STATELOCK_H

#include <stdbool.h>
#include <sys/types.h>

struct strbuf;

/*
 * Takes the lock of state_dir (which must exist) and writes our pid and
 * socket_path into it; waits while only shims hold it shared (1 s at most).
 * Returns the lock's descriptor (keep it open), or -1 with a message in
 * err: who holds it, or why the file could not be locked.
 */
int statelock_acquire(const char *state_dir, const char *socket_path, struct strbuf *err);
/* <state_dir>/trainjobd.lock, the lock's file (to free). */
char *statelock_path(const char *state_dir);
/*
 * For a worker's shim that outlives its engine (engine/shim.c): when no
 * engine holds the lock of the file at path, takes a shared lock on it. An
 * engine starting on that state directory meanwhile waits for it (1 s at
 * most), so what the shim removes under it is not something a new engine is
 * making. Returns the descriptor (close it to let go), or -1 with errno set:
 * EAGAIN or EACCES when an engine holds the lock, ENOENT when there is no
 * lock file (the state directory is gone), else why it could not be opened.
 */
int statelock_share_idle(const char *path);
/* Rewrites the holder's pid and socket. */
void statelock_update(int fd, const char *socket_path);
/*
 * In a process forked (at any depth) from the holder: takes the lock on fd
 * (the holder's descriptor, inherited) once process from, which must close
 * it, has let it go (2 s at most), and names this process in it. Returns 0,
 * or -1 with a message in err (another engine took it, or from still holds it).
 */
int statelock_take_over(int fd, pid_t from, const char *state_dir, const char *socket_path,
                        struct strbuf *err);

#endif
