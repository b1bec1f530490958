/*
 * jobfiles: the files a job leaves under the state directory — its worker
 * logs (logs/UID.*), status and pid files (UID.* in the status directory,
 * which engine/rundir may have put on a tmpfs), and the working,
 * platform and SSH directories (work/UID, platform/UID, ssh/UID).
 * engine/record.c removes them once a deleted job's workers are gone, and
 * engine.c collects at start-up what a crash left of jobs the store no longer has.
 *
 * Nothing here follows a symbolic link: a job writes into its working
 * directory, so a link there pointing at / must cost it only the link.
 */
#ifndef ENGINE_JOBFILES_H
#define ENGINE_JOBFILES_H

#include <stdbool.h>
#include <stddef.h>

/* Is name the shape of a job uid ("0000018f2a3b4c5d-ab12cd34")? */
bool jobfiles_is_uid(const char *name, size_t len);

/*
 * Removes every file and directory of job uid under state_dir and in
 * status_dir (NULL: state_dir/status). Returns the count of entries that
 * could not be removed (logged with engine_log).
 */
size_t jobfiles_remove(const char *state_dir, const char *status_dir, const char *uid);

/*
 * Removes the files of every uid-shaped name under state_dir and in
 * status_dir (NULL: state_dir/status) for which known(ctx, uid) is false.
 * Returns the count of (directory, uid) pairs collected.
 */
size_t jobfiles_collect(const char *state_dir, const char *status_dir,
                        bool (*known)(void *ctx, const char *uid), void *ctx);

#endif
