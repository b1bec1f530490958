/*
 * fdgrab: takes a copy of the descriptor process PID has open on PATH
 * (pidfd_getfd: the same open file description, as a child PID forked and
 * that has not reached its exec yet holds it), touches READY, and keeps it
 * until killed. For daemon.test.sh: a state lock must not outlive its
 * engine in such a copy. Needs ptrace rights over PID (root; Linux 5.6).
 *
 *   fdgrab PID PATH READY
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: fdgrab PID PATH READY\n");
        return 2;
    }
    long pid = strtol(argv[1], NULL, 10);
    int pidfd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
    if (pidfd < 0) {
        fprintf(stderr, "fdgrab: pidfd_open %ld: %s\n", pid, strerror(errno));
        return 1;
    }
    int got = -1;
    for (int fd = 0; fd < 4096 && got < 0; fd++) {
        char link[64], target[PATH_MAX];
        snprintf(link, sizeof link, "/proc/%ld/fd/%d", pid, fd);
        ssize_t n = readlink(link, target, sizeof target - 1);
        if (n < 0)
            continue;
        target[n] = '\0';
        if (strcmp(target, argv[2]) == 0)
            got = (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
    }
    if (got < 0) {
        fprintf(stderr, "fdgrab: no descriptor of %ld on %s to copy\n", pid, argv[2]);
        return 1;
    }
    int r = open(argv[3], O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    if (r < 0) {
        fprintf(stderr, "fdgrab: %s: %s\n", argv[3], strerror(errno));
        return 1;
    }
    close(r);
    for (;;)
        pause();
}
