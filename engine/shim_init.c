/*
 * shim_init: `trainjob-shim --init`, the sandbox's pid 1 (bound at
 * /trainjob/init; see shim.c's top comment). shim.c's main calls
 * shim_init_main when the first argument is --init.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/shim_priv.h"

/* ---- --init: pid 1 inside the sandbox ---------------------------------- */

/* Only there so that pid 1 is sure to receive these from the host; sigwaitinfo takes them. */
static void on_init_signal(int sig)
{
    (void)sig;
}

/*
 * The sandbox's pid 1: closes every descriptor it inherited, starts PROGRAM
 * in a process group of its own, forwards SIGTERM, SIGINT and SIGHUP to that
 * group, reaps every orphan, and exits with PROGRAM's status (128 + signal
 * for a signal death) — which ends the pid namespace and all left in it.
 */
int shim_init_main(int argc, char **argv)
{
    int ready = -1;
    int first = 2;
    if (argc > 3 && strcmp(argv[2], "--ready-fd") == 0) {
        ready = atoi(argv[3]);
        first = 4;
    }
    struct shim_user user = {0};
    if (argc > first + 1 && strcmp(argv[first], "--user") == 0) {
        if (!shim_parse_user(argv[first + 1], &user)) {
            dprintf(STDERR_FILENO, "trainjob-shim: init: --user needs UID:GID[:GID,...]\n");
            return EXIT_CANNOT_RUN;
        }
        first += 2;
    }
    if (argc < first + 2 || strcmp(argv[first], "--") != 0) {
        dprintf(STDERR_FILENO,
                "usage: trainjob-shim --init [--ready-fd N] [--user UID:GID[:GID,...]] "
                "-- PROGRAM [ARG]...\n");
        return EXIT_CANNOT_RUN;
    }
    /*
     * The worker's user, for good, before anything of the job runs: the
     * mounts are made, root's part is over. A failure here sends no ready
     * byte, so the shim says the worker could not start.
     */
    char why[256];
    if (user.drop && shim_drop_privileges(&user, why, sizeof why) != 0) {
        dprintf(STDERR_FILENO, "trainjob-shim: init: %s\n", why);
        return EXIT_CANNOT_RUN;
    }
    char **prog = argv + first + 1;
    static const int sigs[] = {SIGTERM, SIGINT, SIGHUP, SIGCHLD};
    sigset_t set;
    sigemptyset(&set);
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_init_signal;
    for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
        sigaddset(&set, sigs[i]);
        sigaction(sigs[i], &sa, NULL);
    }
    sigprocmask(SIG_BLOCK, &set, NULL);
    /* Signals are taken now: the shim may forward them (its SIGIO, see on_signal). */
    if (ready > 2 && write(ready, "r", 1) != 1) {
        /* the shim is gone or gave up waiting: nothing to tell */
    }
    if (close_range(3, ~0U, 0) != 0) {
        for (int fd = 3; fd < 65536; fd++)
            close(fd);
    }
    pid_t child = fork();
    if (child < 0) {
        dprintf(STDERR_FILENO, "trainjob-shim: init: fork: %s\n", strerror(errno));
        return EXIT_CANNOT_RUN;
    }
    if (child == 0) {
        setpgid(0, 0);
        for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
            signal(sigs[i], SIG_DFL);
        sigprocmask(SIG_UNBLOCK, &set, NULL);
        execv(prog[0], prog);
        dprintf(STDERR_FILENO, "trainjob-shim: cannot run %s: %s\n", prog[0], strerror(errno));
        _exit(EXIT_CANNOT_RUN);
    }
    setpgid(child, child); /* also done by the child: whichever runs first */
    for (;;) {
        int sig = sigwaitinfo(&set, NULL);
        if (sig < 0)
            continue;
        if (sig != SIGCHLD) {
            if (kill(-child, sig) != 0)
                kill(child, sig);
            continue;
        }
        int st;
        pid_t p;
        while ((p = waitpid(-1, &st, WNOHANG)) > 0 || (p < 0 && errno == EINTR)) {
            if (p != child)
                continue;
            if (WIFEXITED(st))
                return WEXITSTATUS(st);
            return WIFSIGNALED(st) ? 128 + WTERMSIG(st) : 255;
        }
    }
}
