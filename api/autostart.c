/*
 * autostart: finding and running trainjobd; see autostart.h.
 *
 * fork + exec + waitpid, nothing else: trainjobd detaches by itself (its
 * first process exits 0 only once the socket listens), so waiting for our
 * child is waiting for the engine to be ready. The child gets no stdin or
 * stdout of ours and none of our other descriptors; its stderr comes back
 * through a pipe, so a failure to start is said in the caller's error and
 * never written over a full-screen program.
 */
#include "api/autostart.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "api/paths.h"
#include "util/fileio.h"
#include "util/strbuf.h"
#include "util/utf8.h"
#include "util/xalloc.h"

#define ENGINE_NAME "trainjobd"

/* $TRAINJOBD_BIN, else trainjobd beside /proc/self/exe, else "trainjobd" from $PATH. */
char *autostart_binary(void)
{
    const char *env = getenv("TRAINJOBD_BIN");
    if (env && *env)
        return xstrdup(env);
    char *beside = file_beside_self(ENGINE_NAME);
    if (beside && access(beside, X_OK) == 0)
        return beside;
    free(beside);
    return xstrdup(ENGINE_NAME);
}

/* In the child: stdin and stdout to /dev/null, every descriptor above 2 closed. */
static void child_fds(void)
{
    int null = open("/dev/null", O_RDWR);
    if (null >= 0) {
        dup2(null, STDIN_FILENO);
        dup2(null, STDOUT_FILENO);
        if (null > STDERR_FILENO)
            close(null);
    }
    long max = sysconf(_SC_OPEN_MAX);
    if (max < 0 || max > 65536)
        max = 65536;
    for (int fd = STDERR_FILENO + 1; fd < (int)max; fd++)
        close(fd);
}

/*
 * Appends what the engine wrote on stderr before it exited (its first line,
 * without its "trainjobd: " prefix, made safe for a terminal) as ": WORDS".
 * False when it wrote nothing.
 */
static bool add_engine_words(int fd, struct strbuf *err)
{
    char buf[1024];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf - 1)) < 0 && errno == EINTR)
        ;
    if (n <= 0)
        return false;
    buf[n] = '\0';
    const char *line = buf;
    if (strncmp(line, ENGINE_NAME ": ", sizeof ENGINE_NAME + 1) == 0)
        line += sizeof ENGINE_NAME + 1;
    size_t len = strcspn(line, "\n");
    if (len == 0)
        return false;
    strbuf_adds(err, ": ");
    utf8_sanitize(err, line, len, 0);
    return true;
}

char *autostart_stopped_note(void)
{
    char *state = paths_engine_state();
    char *path = xasprintf("%s/%s", state, PATHS_ENGINE_STOPPED);
    char *text = NULL;
    size_t len = 0;
    struct strbuf ignored = STRBUF_INIT;
    char *note = NULL;
    if (file_read_regular(path, 4096, &text, &len, &ignored) == 0) {
        struct strbuf sb = STRBUF_INIT;
        utf8_sanitize(&sb, text, strcspn(text, "\n"), 0);
        note = strbuf_detach(&sb, NULL);
    }
    strbuf_free(&ignored);
    free(text);
    free(path);
    free(state);
    return note;
}

bool autostart_stopped(struct strbuf *why)
{
    char *note = autostart_stopped_note();
    if (note)
        strbuf_addf(why,
                    "the local engine was stopped on purpose (%s); `trainjob engine start` starts "
                    "it again",
                    note);
    free(note);
    return note != NULL;
}

/* Runs `trainjobd --socket PATH` and waits for its first process, which exits once listening. */
int autostart_engine(const char *socket_path, struct strbuf *err)
{
    char *bin = autostart_binary();
    /*
     * The engine's stderr comes to us, not to the terminal: a full-screen
     * program is drawing there, and a second client's start that finds the
     * engine already running must not write over it. The write end is
     * non-blocking, so an engine that says a lot loses words, never waits.
     */
    int said[2];
    if (pipe2(said, O_CLOEXEC | O_NONBLOCK) != 0) {
        strbuf_addf(err, "cannot start %s: pipe: %s", bin, strerror(errno));
        free(bin);
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        strbuf_addf(err, "cannot start %s: fork: %s", bin, strerror(errno));
        close(said[0]);
        close(said[1]);
        free(bin);
        return -1;
    }
    if (pid == 0) {
        dup2(said[1], STDERR_FILENO);
        child_fds();
        signal(SIGPIPE, SIG_DFL);
        char *const argv[] = {bin, (char *)"--socket", (char *)socket_path, NULL};
        if (strchr(bin, '/'))
            execv(bin, argv);
        else
            execvp(bin, argv);
        _exit(127);
    }
    close(said[1]);
    int status = 0;
    pid_t got;
    while ((got = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
        ;
    int rc = 0;
    if (got < 0) {
        strbuf_addf(err, "waiting for %s: %s", bin, strerror(errno));
        rc = -1;
    } else if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
        strbuf_addf(err, "cannot run %s (set TRAINJOBD_BIN to the engine binary)", bin);
        rc = -1;
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        if (WIFEXITED(status))
            strbuf_addf(err, "%s exited %d", bin, WEXITSTATUS(status));
        else
            strbuf_addf(err, "%s died of signal %d", bin, WTERMSIG(status));
        if (!add_engine_words(said[0], err)) {
            char *state = paths_engine_state();
            strbuf_addf(err, "; see %s/trainjobd.log", state);
            free(state);
        }
        rc = -1;
    }
    close(said[0]);
    free(bin);
    return rc;
}
