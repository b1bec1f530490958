/*
 * paths: where trainjob and trainjobd keep their files, by the XDG base
 * directory rules, so the client finds the engine it would start:
 *
 *   ~/.config/trainjob/config.yaml       client contexts ($TRAINJOB_CONFIG replaces the path)
 *   ~/.config/trainjob/engine.yaml       the local engine's catalogue
 *   ~/.local/state/trainjob/             drafts, client log
 *   ~/.cache/trainjob/                   what a client may lose (a Slurm server's API version)
 *   ~/.local/state/trainjob/engine/      engine.db, worker logs, status files
 *                                        (status: a link to a tmpfs, engine/rundir),
 *                                        engine.stopped after a stop on purpose
 *   $XDG_RUNTIME_DIR/trainjob/engine.sock  (else <engine state>/engine.sock)
 *   ~/.config/trainjob/keys, columns    key bindings, the jobs view's columns
 *
 * Each function returns a new string.
 */
#ifndef API_PATHS_H
#define API_PATHS_H

#include <stdbool.h>

char *paths_config_dir(void);
/*
 * name in the config directory (~/.config/trainjob/NAME); with tilde, as a
 * person reads it: "~/…" when it is below $HOME.
 */
char *paths_config_file(const char *name, bool tilde);
char *paths_state_dir(void);
/* Files the client may lose: ~/.cache/trainjob ($XDG_CACHE_HOME/trainjob). */
char *paths_cache_dir(void);
char *paths_engine_config(void);
char *paths_engine_state(void);
char *paths_engine_socket(void);
/*
 * The file a local engine stopped on purpose leaves in its state directory
 * (one line: "by NAME (uid N) at TIME"): the client does not start an engine
 * that was stopped this way until told to (`trainjob engine start`).
 */
#define PATHS_ENGINE_STOPPED "engine.stopped"
/* The client's contexts: $TRAINJOB_CONFIG when set, else <config dir>/config.yaml. */
char *paths_client_config(void);
/*
 * A path a settings file names (config.yaml's secret_key_file, token_file):
 * "~" and "~/…" under the home directory, a relative path beside the file
 * (in base_file's directory, whatever the current directory), an absolute
 * one as it is.
 */
char *paths_beside(const char *p, const char *base_file);

#endif
