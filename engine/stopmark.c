/*
 * stopmark: the marker of an engine stopped on purpose; see stopmark.h.
 *
 * The loop's own handler (util/loop) turns a signal into a byte on its
 * self-pipe and forgets the sender; the hook here runs first, keeps the
 * sender's uid from siginfo, then hands the signal on to that handler.
 */
#include "engine/stopmark.h"

#include <errno.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/paths.h"
#include "util/fileio.h"
#include "util/strbuf.h"
#include "util/timefmt.h"
#include "util/xalloc.h"

static volatile sig_atomic_t sender_seen;
static volatile sig_atomic_t sender_uid;
static struct sigaction loop_term, loop_int;

static void on_stop_signal(int signo, siginfo_t *si, void *uc)
{
    if (si) {
        sender_uid = (sig_atomic_t)si->si_uid;
        sender_seen = 1;
    }
    const struct sigaction *next = signo == SIGTERM ? &loop_term : &loop_int;
    if (next->sa_flags & SA_SIGINFO)
        next->sa_sigaction(signo, si, uc);
    else if (next->sa_handler != SIG_DFL && next->sa_handler != SIG_IGN)
        next->sa_handler(signo);
}

void stopmark_watch_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_stop_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, &loop_term);
    sigaction(SIGINT, &sa, &loop_int);
}

char *stopmark_who(uid_t uid)
{
    struct passwd *pw = getpwuid(uid);
    if (pw && pw->pw_name)
        return xasprintf("%s (uid %ld)", pw->pw_name, (long)uid);
    return xasprintf("uid %ld", (long)uid);
}

char *stopmark_signal_sender(void)
{
    return sender_seen ? stopmark_who((uid_t)sender_uid) : NULL;
}

int stopmark_write(const char *state_dir, const char *who, struct strbuf *err)
{
    char when[TIMEFMT_RFC3339_LEN];
    time_rfc3339(time_now_ms(), when);
    char *path = xasprintf("%s/%s", state_dir, PATHS_ENGINE_STOPPED);
    char *line = xasprintf("by %s at %s\n", who, when);
    int rc = file_write_atomic(path, line, strlen(line), 0644, err);
    free(line);
    free(path);
    return rc;
}

void stopmark_clear(const char *state_dir)
{
    char *path = xasprintf("%s/%s", state_dir, PATHS_ENGINE_STOPPED);
    if (unlink(path) != 0 && errno != ENOENT)
        fprintf(stderr, "trainjobd: removing %s: %s\n", path, strerror(errno));
    free(path);
}
