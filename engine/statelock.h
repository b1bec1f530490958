/*
 * statelock: one trainjobd per state directory. An exclusive flock on
 * <state-dir>/trainjobd.lock, held for the engine's whole life, whose file
 * says who holds it ("pid N\nsocket S\n"), so a second engine on the same
 * directory names the first and stops before it opens the store or starts
 * anything — two engines on one store would run each queued job twice.
 *
 * The lock belongs to the open file description: it survives the forks of
 * daemonizing (the surviving process keeps the descriptor) and ends when the
 * last descriptor closes, also when the engine is killed. The descriptor is
 * close-on-exec, so no worker or shim inherits it. Called by engine/main.c.
 */
#ifndef ENGINE_STATELOCK_H
#define ENGINE_STATELOCK_H

struct strbuf;

/*
 * Takes the lock of state_dir (which must exist) and writes our pid and
 * socket_path into it. Returns the lock's descriptor (keep it open), or -1
 * with a message in err: who holds it, or why the file could not be locked.
 */
int statelock_acquire(const char *state_dir, const char *socket_path, struct strbuf *err);
/* Rewrites the holder's pid and socket (after daemonizing changed the pid). */
void statelock_update(int fd, const char *socket_path);

#endif
