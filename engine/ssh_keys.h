/*
 * ssh_keys: the per-job SSH material for passwordless SSH between workers
 * (ssh.auto_key_setup, and always for MPI): an ed25519 key pair, an
 * authorized_keys holding its public half, and an ssh_config that uses the
 * key and skips host-key prompts between the job's own workers. Written
 * once per job into a directory the engine binds read-only at
 * ssh.config_mount_path in every worker.
 */
#ifndef ENGINE_SSH_KEYS_H
#define ENGINE_SSH_KEYS_H

struct strbuf;

/*
 * Makes sure dir holds the job's keys and config, with mount_path as the
 * directory the worker sees. Returns 0, or -1 with why in err (e.g. no
 * ssh-keygen: the config is still written, without keys).
 */
int ssh_keys_prepare(const char *dir, const char *mount_path, struct strbuf *err);

#endif
