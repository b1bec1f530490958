/*
 * autostart: starting the local engine on demand, the way tmux starts its
 * server. When the client's default context finds no trainjobd on its
 * socket, it runs `trainjobd --socket PATH`, which detaches and exits 0
 * once the socket listens, and then tries again (api/backend.c). An
 * endpoint given explicitly is never started.
 */
#ifndef API_AUTOSTART_H
#define API_AUTOSTART_H

struct strbuf;

/* The trainjobd to run: $TRAINJOBD_BIN, else the one beside this program, else "trainjobd". */
char *autostart_binary(void);
/* Starts trainjobd on socket_path and waits until it listens. 0, or -1 with why in err. */
int autostart_engine(const char *socket_path, struct strbuf *err);

#endif
