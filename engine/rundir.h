/*
 * rundir: where trainjobd keeps the files that only describe running
 * workers — each shim's status, claim, pid and script files — so that
 * making and removing them costs no disk inode. They go to a private
 * directory on a memory file system (tmpfs) when the machine has one the
 * engine may use, named in the state directory by the symbolic link
 * STATE/status; else into the directory STATE/status itself, as before.
 *
 * A tmpfs is emptied by a reboot, which ends the workers too; a restarted
 * engine finds the directory again through the link and adopts the
 * workers whose files are there. The directory is shared ground on a
 * multi-user machine, so what is found there is used only when it is a
 * real directory (not a symlink) owned by the engine's user, 0700, on a
 * tmpfs; anything else is left alone and the state directory is used.
 * Each holds the link .state to its state directory, so the next engine
 * to make one removes those whose state directory is gone.
 *
 * Called by engine.c at start-up and at close.
 */
#ifndef ENGINE_RUNDIR_H
#define ENGINE_RUNDIR_H

struct strbuf;

/*
 * The directories a runtime directory may be made in, for this process
 * (a NULL-terminated static list): as root, /run and /dev/shm; as another
 * user, none. A user's tmpfs does not live as long as the user's workers
 * may: systemd-logind removes $XDG_RUNTIME_DIR, and (RemoveIPC) the user's
 * files in /dev/shm, when the user's last session ends — a training run
 * left going over a logout would lose the files its end is read from.
 * Such an engine keeps them in its state directory unless --runtime-dir
 * names a tmpfs.
 */
const char *const *rundir_bases(void);

/*
 * The directory for state_dir's worker files, made when missing (see
 * above): the target of the link state_dir/status when it is fit, else a
 * new private directory in the first base that is a tmpfs (named by the
 * engine's uid and the state directory's device and inode, and linked
 * from state_dir/status), else state_dir/status as a directory. A real
 * directory state_dir/status that holds files (a previous engine's live
 * workers) is kept as it is. Returns a new string, or NULL with what went
 * wrong in err (state_dir/status could not be made at all). note gets one
 * line saying what was chosen and, when a base was refused, why. A tmpfs
 * directory is held (a shared flock) until rundir_release, or the next
 * call: another engine's start removes one whose state directory is gone
 * only when nobody holds it.
 */
char *rundir_status_dir(const char *state_dir, const char *const *bases, struct strbuf *note,
                        struct strbuf *err);

/*
 * At a normal close: removes status_dir when it is empty and is not
 * state_dir/status itself (the link stays; the next start makes the
 * directory again), so a tmpfs keeps nothing of an engine with no worker.
 */
void rundir_release(const char *state_dir, const char *status_dir);

#endif
