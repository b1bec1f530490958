/*
 * loop: poll(2)-based event loop; see loop.h. Timers live in a small array
 * kept sorted by deadline (a process has few), fds in a parallel pollfd
 * array rebuilt only when registrations change.
 */
#include "util/loop.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util/xalloc.h"

struct fd_watch {
    int fd;
    short events;
    loop_fd_fn fn;
    void *ctx;
};

struct timer {
    uint64_t id;
    int64_t deadline;
    loop_timer_fn fn;
    void *ctx;
};

struct sig_watch {
    int signo;
    loop_signal_fn fn;
    void *ctx;
};

struct loop {
    struct fd_watch *fds;
    size_t fd_count, fd_cap;
    struct timer *timers;
    size_t timer_count, timer_cap;
    uint64_t next_timer_id;
    struct sig_watch *sigs;
    size_t sig_count;
    int sig_pipe[2];
    bool stop;
};

/* The self-pipe's write end, for the async-signal-safe handler. */
static volatile sig_atomic_t signal_write_fd = -1;

static void on_signal(int signo)
{
    int saved = errno;
    unsigned char b = (unsigned char)signo;
    if (signal_write_fd >= 0) {
        ssize_t rc = write(signal_write_fd, &b, 1);
        (void)rc;
    }
    errno = saved;
}

int64_t loop_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void dispatch_signals(void *ctx, int fd, short revents)
{
    struct loop *lp = ctx;
    unsigned char buf[64];
    (void)revents;
    for (;;) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n <= 0)
            break;
        for (ssize_t i = 0; i < n; i++)
            for (size_t k = 0; k < lp->sig_count; k++)
                if (lp->sigs[k].signo == buf[i])
                    lp->sigs[k].fn(lp->sigs[k].ctx, buf[i]);
    }
}

struct loop *loop_new(void)
{
    struct loop *lp = xcalloc(1, sizeof *lp);
    lp->next_timer_id = 1;
    if (pipe2(lp->sig_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
        xalloc_die();
    return lp;
}

void loop_free(struct loop *lp)
{
    if (lp == NULL)
        return;
    for (size_t i = 0; i < lp->sig_count; i++)
        signal(lp->sigs[i].signo, SIG_DFL);
    if (signal_write_fd == lp->sig_pipe[1])
        signal_write_fd = -1;
    close(lp->sig_pipe[0]);
    close(lp->sig_pipe[1]);
    free(lp->fds);
    free(lp->timers);
    free(lp->sigs);
    free(lp);
}

void loop_add_fd(struct loop *lp, int fd, short events, loop_fd_fn fn, void *ctx)
{
    loop_remove_fd(lp, fd);
    if (lp->fd_count == lp->fd_cap) {
        lp->fd_cap = lp->fd_cap ? lp->fd_cap * 2 : 8;
        lp->fds = xreallocarray(lp->fds, lp->fd_cap, sizeof *lp->fds);
    }
    lp->fds[lp->fd_count++] = (struct fd_watch){fd, events, fn, ctx};
}

void loop_set_events(struct loop *lp, int fd, short events)
{
    for (size_t i = 0; i < lp->fd_count; i++)
        if (lp->fds[i].fd == fd)
            lp->fds[i].events = events;
}

void loop_remove_fd(struct loop *lp, int fd)
{
    for (size_t i = 0; i < lp->fd_count; i++) {
        if (lp->fds[i].fd == fd) {
            memmove(&lp->fds[i], &lp->fds[i + 1], (lp->fd_count - i - 1) * sizeof *lp->fds);
            lp->fd_count--;
            return;
        }
    }
}

uint64_t loop_add_timer(struct loop *lp, int64_t ms, loop_timer_fn fn, void *ctx)
{
    if (lp->timer_count == lp->timer_cap) {
        lp->timer_cap = lp->timer_cap ? lp->timer_cap * 2 : 8;
        lp->timers = xreallocarray(lp->timers, lp->timer_cap, sizeof *lp->timers);
    }
    struct timer t = {lp->next_timer_id++, loop_now_ms() + (ms > 0 ? ms : 0), fn, ctx};
    /* Keep the array sorted by deadline; equal deadlines fire in order added. */
    size_t i = lp->timer_count;
    while (i > 0 && lp->timers[i - 1].deadline > t.deadline) {
        lp->timers[i] = lp->timers[i - 1];
        i--;
    }
    lp->timers[i] = t;
    lp->timer_count++;
    return t.id;
}

void loop_cancel(struct loop *lp, uint64_t id)
{
    for (size_t i = 0; i < lp->timer_count; i++) {
        if (lp->timers[i].id == id) {
            memmove(&lp->timers[i], &lp->timers[i + 1],
                    (lp->timer_count - i - 1) * sizeof *lp->timers);
            lp->timer_count--;
            return;
        }
    }
}

void loop_add_signal(struct loop *lp, int signo, loop_signal_fn fn, void *ctx)
{
    lp->sigs = xreallocarray(lp->sigs, lp->sig_count + 1, sizeof *lp->sigs);
    lp->sigs[lp->sig_count++] = (struct sig_watch){signo, fn, ctx};
    if (signal_write_fd != lp->sig_pipe[1]) {
        signal_write_fd = lp->sig_pipe[1];
        loop_add_fd(lp, lp->sig_pipe[0], POLLIN, dispatch_signals, lp);
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(signo, &sa, NULL);
}

/* Runs every timer whose deadline has passed; timers added meanwhile wait a turn. */
static void run_timers(struct loop *lp)
{
    int64_t now = loop_now_ms();
    uint64_t last_id = lp->next_timer_id;
    while (lp->timer_count > 0 && lp->timers[0].deadline <= now && lp->timers[0].id < last_id) {
        struct timer t = lp->timers[0];
        memmove(&lp->timers[0], &lp->timers[1], (lp->timer_count - 1) * sizeof *lp->timers);
        lp->timer_count--;
        t.fn(t.ctx);
    }
}

void loop_run_once(struct loop *lp, int max_ms)
{
    int timeout = max_ms;
    if (lp->timer_count > 0) {
        int64_t wait = lp->timers[0].deadline - loop_now_ms();
        if (wait < 0)
            wait = 0;
        if (timeout < 0 || wait < timeout)
            timeout = wait > 1 << 30 ? 1 << 30 : (int)wait;
    }
    size_t n = lp->fd_count;
    struct pollfd *pfd = xcalloc(n ? n : 1, sizeof *pfd);
    for (size_t i = 0; i < n; i++) {
        pfd[i].fd = lp->fds[i].fd;
        pfd[i].events = lp->fds[i].events;
    }
    int rc = poll(pfd, (nfds_t)n, timeout);
    if (rc > 0) {
        for (size_t i = 0; i < n && !lp->stop; i++) {
            if (pfd[i].revents == 0)
                continue;
            /* A callback may have removed this fd (or others): look it up again. */
            for (size_t k = 0; k < lp->fd_count; k++) {
                if (lp->fds[k].fd == pfd[i].fd) {
                    lp->fds[k].fn(lp->fds[k].ctx, pfd[i].fd, pfd[i].revents);
                    break;
                }
            }
        }
    }
    free(pfd);
    if (!lp->stop)
        run_timers(lp);
}

void loop_run(struct loop *lp)
{
    while (!lp->stop)
        loop_run_once(lp, -1);
}

void loop_stop(struct loop *lp)
{
    lp->stop = true;
}

bool loop_stopped(const struct loop *lp)
{
    return lp->stop;
}
