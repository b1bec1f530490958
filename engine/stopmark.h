/*
 * stopmark: what a clean shutdown of trainjobd leaves behind. When the
 * engine is stopped on purpose (SIGTERM or SIGINT, or `trainjob engine
 * stop` through its socket), it writes PATHS_ENGINE_STOPPED in its state
 * directory saying who stopped it and when; a client that would start the
 * engine on demand reads it and does not (api/autostart). Any start of the
 * engine removes it. Called from engine/main.c.
 */
#ifndef ENGINE_STOPMARK_H
#define ENGINE_STOPMARK_H

#include <sys/types.h>

struct strbuf;

/* Installs the SIGTERM/SIGINT hook that notes who sent the signal (after loop_add_signal). */
void stopmark_watch_signals(void);
/* "NAME (uid N)" of whoever sent the last SIGTERM or SIGINT; NULL when none was seen. */
char *stopmark_signal_sender(void);
/* Writes "by WHO at TIME" into state_dir's marker. 0, or -1 with why in err. */
int stopmark_write(const char *state_dir, const char *who, struct strbuf *err);
/* Removes the marker: the engine is running again. */
void stopmark_clear(const char *state_dir);
/* "NAME (uid N)" for uid, or "uid N" when it has no name. */
char *stopmark_who(uid_t uid);

#endif
