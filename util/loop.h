/*
 * loop: the one blocking wait of a process — poll(2) over registered file
 * descriptors, with timers and signals folded in.
 *
 * Callbacks run on the loop's thread and never sleep; the timeout of each
 * wait is the earliest timer, so an idle process makes no system calls
 * between events. Signals are delivered through a self-pipe: the handler
 * only writes a byte, the loop calls the registered callback in order.
 * Used by trainjobd and by the TUI.
 */
#ifndef UTIL_LOOP_H
#define UTIL_LOOP_H

#include <stdbool.h>
#include <stdint.h>

struct loop;

typedef void (*loop_fd_fn)(void *ctx, int fd, short revents);
typedef void (*loop_timer_fn)(void *ctx);
typedef void (*loop_signal_fn)(void *ctx, int signo);

struct loop *loop_new(void);
void loop_free(struct loop *lp);

/* Watches fd for events (POLLIN, POLLOUT); one registration per fd. */
void loop_add_fd(struct loop *lp, int fd, short events, loop_fd_fn fn, void *ctx);
void loop_set_events(struct loop *lp, int fd, short events);
void loop_remove_fd(struct loop *lp, int fd);

/* Calls fn once, after ms milliseconds. Returns an id for loop_cancel (never 0). */
uint64_t loop_add_timer(struct loop *lp, int64_t ms, loop_timer_fn fn, void *ctx);
void loop_cancel(struct loop *lp, uint64_t id);

/* Routes signo to fn through the self-pipe (installs a handler with SA_RESTART). */
void loop_add_signal(struct loop *lp, int signo, loop_signal_fn fn, void *ctx);

/* Milliseconds on the monotonic clock. */
int64_t loop_now_ms(void);

/* One wait and dispatch; max_ms bounds the wait (-1: until something happens). */
void loop_run_once(struct loop *lp, int max_ms);
/* Runs until loop_stop. */
void loop_run(struct loop *lp);
void loop_stop(struct loop *lp);
bool loop_stopped(const struct loop *lp);

#endif
