/*
 * cputime: runs a command and prints the CPU time it used (user + system,
 * its children included) in ms on stderr's last line as "cpu_ms N", the
 * same in µs on the line before as "cpu_us N", and before them the largest
 * resident set of the command or a child in KiB as "maxrss_kb N"
 * (getrusage's ru_maxrss: the peak, which a sample of /proc after the fact
 * would miss). For the scale tests, whose ratios must not move with how busy
 * the machine is (wall time does; CPU time much less). Its exit status is
 * the command's.
 *
 * With --pid, it runs nothing: it prints on stdout the CPU time a running
 * process has used so far, in microseconds, from the process's own CPU clock
 * (clock_getcpuclockid: every thread's, the ended ones too, to the
 * nanosecond). /proc/PID/stat counts in clock ticks of 10 ms, coarser than
 * the difference the scale test measures.
 *
 *   cputime CMD [ARG…]
 *   cputime --pid PID
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* print_process_us: PID's CPU time so far in µs on stdout; 0, or 2 on error */
static int print_process_us(const char *arg)
{
    char *end;
    errno = 0;
    long pid = strtol(arg, &end, 10);
    if (errno || end == arg || *end || pid <= 0) {
        fprintf(stderr, "cputime: --pid: not a process id: %s\n", arg);
        return 2;
    }
    clockid_t clock;
    int err = clock_getcpuclockid((pid_t)pid, &clock);
    if (err) {
        fprintf(stderr, "cputime: process %ld: %s\n", pid, strerror(err));
        return 2;
    }
    struct timespec ts;
    if (clock_gettime(clock, &ts) != 0) {
        fprintf(stderr, "cputime: process %ld: %s\n", pid, strerror(errno));
        return 2;
    }
    printf("%lld\n", (long long)ts.tv_sec * 1000000LL + ts.tv_nsec / 1000);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--pid") == 0)
        return print_process_us(argv[2]);
    if (argc < 2) {
        fprintf(stderr, "usage: cputime CMD [ARG...] | cputime --pid PID\n");
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
    long long us = (long long)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000LL +
                   ru.ru_utime.tv_usec + ru.ru_stime.tv_usec;
    fprintf(stderr, "maxrss_kb %ld\ncpu_us %lld\ncpu_ms %lld\n", ru.ru_maxrss, us, us / 1000);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
