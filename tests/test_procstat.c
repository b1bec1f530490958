/*
 * test_procstat: util/procstat over real processes — the fields a saved pid
 * is checked by, and CPU time (self and waited-for children), also when the
 * command name holds ") (" and spaces, as a hostile process may choose; and
 * another process's CPU to finer than stat's 10 ms ticks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h> /* after the four headers it needs */

#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/procstat.h"

/* Spins on the CPU for about ms of its own time. */
static void burn(double ms)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
    volatile unsigned long x = 0;
    do {
        for (int i = 0; i < 100000; i++)
            x += (unsigned long)i;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    } while ((double)(t.tv_sec - t0.tv_sec) * 1e3 + (double)(t.tv_nsec - t0.tv_nsec) / 1e6 < ms);
}

static void reads_itself_and_its_children(void **state)
{
    (void)state;
    char old[17] = {0};
    prctl(PR_GET_NAME, old);
    prctl(PR_SET_NAME, "x) S 1 2 (y z"); /* a name that mimics the fields after it */
    struct procstat ps;
    assert_int_equal(procstat_read(getpid(), &ps), 0);
    assert_int_equal(ps.ppid, getppid());
    assert_int_equal(ps.pgrp, getpgrp());
    assert_true(ps.start_ticks > 0);

    double self0, kids0, self1, kids1;
    assert_int_equal(procstat_cpu_ms(getpid(), &self0, &kids0), 0);
    burn(80);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        burn(80);
        _exit(0);
    }
    assert_int_equal(waitpid(pid, NULL, 0), pid);
    assert_int_equal(procstat_cpu_ms(getpid(), &self1, &kids1), 0);
    assert_true(self1 - self0 >= 50); /* 80 ms, in 10 ms ticks */
    assert_true(kids1 - kids0 >= 50);
    assert_true(self1 < 1e7 && kids1 < 1e7); /* the right fields, not a time after boot */
    prctl(PR_SET_NAME, old);
}

/* Another process's CPU is read to the µs: a 3 ms burn is not 0 or 10 ms. */
static void reads_another_process_finer_than_a_tick(void **state)
{
    (void)state;
    int ready[2], done[2];
    assert_int_equal(pipe(ready), 0);
    assert_int_equal(pipe(done), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        char c = 0;
        burn(3);
        if (write(ready[1], &c, 1) != 1 || read(done[0], &c, 1) < 0)
            _exit(1);
        _exit(0);
    }
    char c;
    assert_int_equal(read(ready[0], &c, 1), 1);
    double ms = -1;
    assert_int_equal(procstat_cpu_ms(pid, &ms, NULL), 0);
    assert_int_equal(write(done[1], &c, 1), 1);
    assert_int_equal(waitpid(pid, NULL, 0), pid);
    close(ready[0]), close(ready[1]), close(done[0]), close(done[1]);
    if (ms < 3 || ms >= 9.5)
        fail_msg("a 3 ms burn read as %.3f ms", ms);
}

static void no_such_process(void **state)
{
    (void)state;
    struct procstat ps;
    double ms;
    assert_int_equal(procstat_read(0, &ps), -1);
    assert_int_equal(procstat_cpu_ms(-1, &ms, NULL), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reads_itself_and_its_children),
        cmocka_unit_test(reads_another_process_finer_than_a_tick),
        cmocka_unit_test(no_such_process),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
