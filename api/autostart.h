/*
 * autostart: starting the local engine on demand, the way tmux starts its
 * server. When the client's default context finds no trainjobd on its
 * socket, it runs `trainjobd --socket PATH`, which detaches and exits 0
 * once the socket listens, and then tries again (api/backend.c). An
 * endpoint given explicitly is never started, nor an engine its user
 * stopped on purpose (`trainjob engine stop`, a SIGTERM): that one waits
 * for `trainjob engine start`.
 */
#ifndef API_AUTOSTART_H
#define API_AUTOSTART_H

#include <stdbool.h>

struct strbuf;

/* The trainjobd to run: $TRAINJOBD_BIN, else the one beside this program, else "trainjobd". */
char *autostart_binary(void);
/*
 * Whether the local engine was stopped on purpose (its state directory holds
 * PATHS_ENGINE_STOPPED): then why says by whom and when, and how to start
 * it. An engine stopped so is not started on demand.
 */
bool autostart_stopped(struct strbuf *why);
/* The marker's own words ("by NAME (uid N) at TIME", sanitized), or NULL when not stopped so. */
char *autostart_stopped_note(void);
/* Starts trainjobd on socket_path and waits until it listens. 0, or -1 with why in err. */
int autostart_engine(const char *socket_path, struct strbuf *err);

#endif
