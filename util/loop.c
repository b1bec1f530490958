/*
 * loop: the event loop; see loop.h. Timers live in a small array kept
 * sorted by deadline (a process has few). Fds are watched with epoll(7),
 * registered once and changed only when a caller changes them, so a wait
 * costs the fds that are ready, not every fd watched: trainjobd watches a
 * descriptor per live worker, and poll(2) over all of them at each of a
 * worker start's several loop turns was a tenth of the engine's CPU. The
 * watches are a table indexed by fd. An fd epoll refuses (a regular file,
 * /dev/null: EPERM) is what poll(2) calls always ready: it is called back
 * at every turn with the events it asked for, and the wait does not block.
 */
#include "util/loop.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "util/xalloc.h"

/* Events waited for at most at once; more ready stay ready for the next turn. */
#define WAIT_MAX 256

struct fd_watch {
    bool used;
    bool always; /* epoll refused it: ready at every turn, as poll(2) says */
    short events;
    short revents_always; /* what poll(2) answers for it: POLLNVAL when not open */
    uint32_t gen;         /* which registration of this fd an epoll event belongs to */
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
    int epfd;
    struct fd_watch *fds; /* indexed by fd */
    size_t fd_slots;
    size_t always_count; /* watches with .always */
    uint32_t next_gen;
    struct epoll_event *ready;
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
    lp->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (lp->epfd < 0 || pipe2(lp->sig_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
        xalloc_die(); /* out of descriptors or kernel memory: nothing works without a loop */
    lp->ready = xcalloc(WAIT_MAX, sizeof *lp->ready);
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
    close(lp->epfd);
    free(lp->ready);
    free(lp->fds);
    free(lp->timers);
    free(lp->sigs);
    free(lp);
}

/* The epoll event for the watch of fd: poll's bits are epoll's on Linux. */
static struct epoll_event watch_event(const struct fd_watch *w, int fd)
{
    struct epoll_event ev;
    memset(&ev, 0, sizeof ev);
    ev.events = (uint32_t)(unsigned short)w->events;
    ev.data.u64 = (uint64_t)w->gen << 32 | (uint32_t)fd;
    return ev;
}

void loop_add_fd(struct loop *lp, int fd, short events, loop_fd_fn fn, void *ctx)
{
    if (fd < 0)
        return;
    loop_remove_fd(lp, fd);
    if ((size_t)fd >= lp->fd_slots) {
        size_t slots = lp->fd_slots ? lp->fd_slots : 16;
        while (slots <= (size_t)fd)
            slots *= 2;
        lp->fds = xreallocarray(lp->fds, slots, sizeof *lp->fds);
        memset(lp->fds + lp->fd_slots, 0, (slots - lp->fd_slots) * sizeof *lp->fds);
        lp->fd_slots = slots;
    }
    struct fd_watch *w = &lp->fds[fd];
    *w = (struct fd_watch){
        .used = true, .events = events, .gen = ++lp->next_gen, .fn = fn, .ctx = ctx};
    struct epoll_event ev = watch_event(w, fd);
    if (epoll_ctl(lp->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
        /* Not pollable by epoll (EPERM: a regular file), or not open (EBADF), which
         * poll(2) would answer at once (POLLNVAL): called back at every turn. */
        w->always = true;
        w->revents_always = errno == EBADF ? POLLNVAL : 0;
        lp->always_count++;
    }
}

void loop_set_events(struct loop *lp, int fd, short events)
{
    if (fd < 0 || (size_t)fd >= lp->fd_slots || !lp->fds[fd].used)
        return;
    struct fd_watch *w = &lp->fds[fd];
    w->events = events;
    if (!w->always) {
        struct epoll_event ev = watch_event(w, fd);
        epoll_ctl(lp->epfd, EPOLL_CTL_MOD, fd, &ev);
    }
}

void loop_remove_fd(struct loop *lp, int fd)
{
    if (fd < 0 || (size_t)fd >= lp->fd_slots || !lp->fds[fd].used)
        return;
    struct fd_watch *w = &lp->fds[fd];
    if (w->always)
        lp->always_count--;
    else
        epoll_ctl(lp->epfd, EPOLL_CTL_DEL, fd, NULL); /* fails only once fd was closed: gone */
    memset(w, 0, sizeof *w);
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

/* Calls back the watches epoll refused, each with the events it asked for. */
static void run_always(struct loop *lp)
{
    for (size_t fd = 0; fd < lp->fd_slots && lp->always_count > 0 && !lp->stop; fd++) {
        struct fd_watch *w = &lp->fds[fd];
        if (!w->used || !w->always)
            continue;
        short revents = w->revents_always
                            ? w->revents_always
                            : (short)(w->events & (POLLIN | POLLOUT | POLLRDNORM | POLLWRNORM));
        if (revents != 0)
            w->fn(w->ctx, (int)fd, revents);
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
    if (lp->always_count > 0)
        timeout = 0;
    int n = epoll_wait(lp->epfd, lp->ready, WAIT_MAX, timeout);
    /* Only a signal ends a wait early; anything else (EBADF, EINVAL: the epoll fd
     * closed or clobbered) is a bug, and every caller would go round again at
     * once, for ever, at a whole CPU: better a core than a spinning daemon. */
    if (n < 0 && errno != EINTR)
        abort();
    for (int i = 0; i < n && !lp->stop; i++) {
        int fd = (int)(uint32_t)lp->ready[i].data.u64;
        uint32_t gen = (uint32_t)(lp->ready[i].data.u64 >> 32);
        /* A callback may have removed this fd, or removed it and watched another file
         * under its number, since the wait: only its registration then is called. */
        if ((size_t)fd >= lp->fd_slots || !lp->fds[fd].used || lp->fds[fd].gen != gen)
            continue;
        struct fd_watch *w = &lp->fds[fd];
        w->fn(w->ctx, fd, (short)(lp->ready[i].events & 0xffff));
    }
    if (!lp->stop)
        run_always(lp);
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
