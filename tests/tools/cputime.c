/*
 * cputime: runs a command and prints the CPU time it used (user + system,
 * its children included) in ms on stderr's last line as "cpu_ms N", and
 * before it the largest resident set of the command or a child in KiB as
 * "maxrss_kb N" (getrusage's ru_maxrss: the peak, which a sample of
 * /proc after the fact would miss). For the
 * scale tests, whose ratios must not move with how busy the machine is (wall
 * time does; CPU time much less). Its exit status is the command's.
 *
 *   cputime CMD [ARG…]
 */
#include <stdio.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: cputime CMD [ARG...]\n");
        return 2;
    }
    pid_t pid = fork();
    if (pid < 0) {
        perror("cputime: fork");
        return 2;
    }
    if (pid == 0) {
        execvp(argv[1], argv + 1);
        perror("cputime: exec");
        _exit(127);
    }
    int status = 0;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) != pid) {
        perror("cputime: wait");
        return 2;
    }
    long ms = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000L +
              (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1000L;
    fprintf(stderr, "maxrss_kb %ld\ncpu_ms %ld\n", ru.ru_maxrss, ms);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
