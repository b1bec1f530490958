/*
 * launcher: worker starts' blocking system calls on threads of their own
 * (see launcher.h). Owns the threads, the queue of requests none has
 * taken, the list of every request not given back in submission order
 * (each marked finished once launched), the files to remove (the status
 * files of ended workers: unlinks the loop need not wait for, done when no
 * start waits), and the pipe that wakes the loop when a start is done. The threads block every
 * signal (the loop's self-pipe handlers stay on the loop's thread) and share no state with the
 * engine but these queues, under one mutex.
 */
#include "engine/launcher.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "engine/runas.h"
#include "util/fileio.h"
#include "util/loop.h"
#include "util/xalloc.h"

struct queue {
    struct launch_req *head, *tail;
};

/* The most launch threads, and the fewest where there are any. */
#define THREADS_MAX 8
#define THREADS_MIN 2

struct launcher {
    struct loop *loop;
    launcher_done_fn done;
    void *ctx;
    pthread_t threads[THREADS_MAX];
    size_t thread_count;
    bool started; /* at least one thread runs */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct queue todo;                    /* under mu: not taken by a thread */
    struct launch_req *order, *order_end; /* under mu: not given back, by submission */
    char **gone;                          /* under mu: paths to unlink, owned */
    size_t gone_count, gone_cap;          /* under mu */
    bool stop;                            /* under mu */
    int wake[2];   /* the thread writes a byte per request done; the loop reads */
    long delay_ms; /* TRAINJOBD_TEST_LAUNCH_DELAY_MS: each launch waits (tests) */
};

static void queue_put(struct queue *q, struct launch_req *r)
{
    r->next = NULL;
    if (q->tail)
        q->tail->next = r;
    else
        q->head = r;
    q->tail = r;
}

static struct launch_req *queue_take(struct queue *q)
{
    struct launch_req *r = q->head;
    if (r) {
        q->head = r->next;
        if (q->head == NULL)
            q->tail = NULL;
        r->next = NULL;
    }
    return r;
}

struct launch_req *launch_req_new(void)
{
    struct launch_req *r = xcalloc(1, sizeof *r);
    r->err = (struct strbuf)STRBUF_INIT;
    return r;
}

static void free_strings(char **v)
{
    for (size_t i = 0; v && v[i]; i++)
        free(v[i]);
    free(v);
}

void launch_req_free(struct launch_req *r)
{
    if (r == NULL)
        return;
    runner_launch_free(r->launch, false);
    free(r->uid);
    free_strings(r->mkdirs);
    free_strings(r->owned);
    free_strings(r->entries_given);
    runas_user_free(&r->spec.user);
    free(r->cg_leaf);
    free(r->refused);
    free(r->marker);
    free((char *)r->spec.shim_path);
    free((char *)r->spec.status_path);
    free((char *)r->spec.log_path);
    free((char *)r->spec.script);
    free_strings((char **)r->spec.envp);
    free((char *)r->spec.cwd);
    free((char *)r->spec.engine_lock);
    for (size_t i = 0; i < r->spec.bind_count; i++) {
        free((char *)r->spec.binds[i].host_path);
        free((char *)r->spec.binds[i].mount_path);
        free((char *)r->spec.binds[i].volume);
        free((char *)r->spec.binds[i].subdir);
    }
    free((struct runner_bind *)r->spec.binds);
    strbuf_free(&r->err);
    free(r);
}

/* Appends the request's marker line to the worker's log (a failure is only logged there). */
static void append_marker(const struct launch_req *r)
{
    if (r->marker == NULL || r->spec.log_path == NULL)
        return;
    int fd = open(r->spec.log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0)
        return;
    size_t len = strlen(r->marker);
    ssize_t n;
    do
        n = write(fd, r->marker, len);
    while (n < 0 && errno == EINTR);
    close(fd);
}

/*
 * Gives the entries directly in dir to the worker's user (never following a
 * symlink), and dir itself unless keep_dir, so a job that runs as that user
 * can write its working directory and read its SSH keys. A directory root
 * writes in again (the SSH keys, at every start) is kept root's, searchable
 * by all (0711): the user could otherwise plant a symlink there for root to
 * write through. Quiet: the worker says what it cannot use.
 */
static void give_to(const char *dir, const struct runner_user *u, bool keep_dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return;
    if ((keep_dir ? fchmod(fd, 0711) : fchown(fd, u->uid, u->gid)) != 0) {
        close(fd);
        return;
    }
    DIR *d = fdopendir(fd);
    if (d == NULL) {
        close(fd);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
            int owned = fchownat(dirfd(d), e->d_name, u->uid, u->gid, AT_SYMLINK_NOFOLLOW);
            (void)owned; /* best effort, as the loop's comment says; (void) alone does not
                            quiet warn_unused_result */
        }
    closedir(d);
}

void launcher_run(struct launch_req *r)
{
    for (size_t i = 0; r->mkdirs && r->mkdirs[i]; i++) {
        /* Mostly there, or only the last component missing: one mkdir, not one per
         * component (each takes its directory's lock, which other launches wait on). */
        struct stat st;
        if (mkdir(r->mkdirs[i], 0755) == 0 ||
            (errno == EEXIST && stat(r->mkdirs[i], &st) == 0 && S_ISDIR(st.st_mode)))
            continue;
        struct strbuf ignored = STRBUF_INIT; /* the shim says what it cannot use */
        file_mkdirs(r->mkdirs[i], 0755, &ignored);
        strbuf_free(&ignored);
    }
    for (size_t i = 0; r->spec.user.drop && r->owned && r->owned[i]; i++)
        give_to(r->owned[i], &r->spec.user, false);
    for (size_t i = 0; r->spec.user.drop && r->entries_given && r->entries_given[i]; i++)
        give_to(r->entries_given[i], &r->spec.user, true);
    if (r->refused) {
        r->rc = -1;
        strbuf_adds(&r->err, r->refused);
        return;
    }
    char **dirs = NULL;
    r->rc = cgroup_create(r->cg, r->uid, r->cg_leaf, &r->limits, &dirs, &r->err);
    append_marker(r);
    if (r->rc == 0) {
        r->spec.cgroups = dirs;
        r->rc = runner_launch(&r->spec, &r->launch, &r->err);
        r->spec.cgroups = NULL;
        if (r->rc != 0)
            cgroup_remove(r->cg, r->uid, r->cg_leaf);
    }
    cgroup_dirs_free(dirs);
}

/* Under mu: r joins the end of the submission order. */
static void order_put(struct launcher *l, struct launch_req *r)
{
    r->next_in_order = NULL;
    if (l->order_end)
        l->order_end->next_in_order = r;
    else
        l->order = r;
    l->order_end = r;
}

/* Unlinks each of paths[0, n) (a file already gone is fine) and frees them. */
static void unlink_all(char **paths, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        (void)unlink(paths[i]);
        free(paths[i]);
    }
    free(paths);
}

static void *thread_main(void *arg)
{
    struct launcher *l = arg;
    pthread_mutex_lock(&l->mu);
    for (;;) {
        while (!l->stop && l->todo.head == NULL && l->gone_count == 0)
            pthread_cond_wait(&l->cv, &l->mu);
        if (l->stop)
            break;
        if (l->todo.head == NULL) {
            /* No start waits: the removals asked for so far, all at once. */
            char **gone = l->gone;
            size_t n = l->gone_count;
            l->gone = NULL;
            l->gone_count = l->gone_cap = 0;
            pthread_mutex_unlock(&l->mu);
            unlink_all(gone, n);
            pthread_mutex_lock(&l->mu);
            continue;
        }
        struct launch_req *r = queue_take(&l->todo);
        pthread_mutex_unlock(&l->mu);
        if (l->delay_ms > 0) {
            /* A slow exec on a loaded machine, made certain for tests/launch.test.sh. */
            struct timespec ts = {l->delay_ms / 1000, (l->delay_ms % 1000) * 1000000L};
            while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
                ;
        }
        pthread_mutex_lock(&l->mu);
        bool cancelled = r->cancelled;
        pthread_mutex_unlock(&l->mu);
        if (cancelled) {
            r->rc = -1;
            strbuf_adds(&r->err, "start cancelled before its launch");
        } else {
            launcher_run(r);
        }
        pthread_mutex_lock(&l->mu);
        r->finished = true;
        char byte = 1;
        /* A full pipe already says there is work; the loop drains the queue, not the bytes. */
        if (write(l->wake[1], &byte, 1) < 0 && errno != EAGAIN)
            fprintf(stderr, "trainjobd: launcher: %s\n", strerror(errno));
    }
    pthread_mutex_unlock(&l->mu);
    return NULL;
}

/*
 * The loop's side: gives back every request done, in submission order —
 * those finished behind one still launching wait for it.
 */
static void on_wake(void *ctx, int fd, short revents)
{
    (void)revents;
    struct launcher *l = ctx;
    char buf[256];
    while (read(fd, buf, sizeof buf) > 0)
        ;
    struct queue got = {NULL, NULL};
    pthread_mutex_lock(&l->mu);
    while (l->order && l->order->finished) {
        struct launch_req *r = l->order;
        l->order = r->next_in_order;
        if (l->order == NULL)
            l->order_end = NULL;
        r->next_in_order = NULL;
        queue_put(&got, r);
    }
    pthread_mutex_unlock(&l->mu);
    struct launch_req *r;
    while ((r = queue_take(&got)) != NULL)
        l->done(l->ctx, r);
}

/* Twice the CPUs, within THREADS_MIN..THREADS_MAX. */
static size_t thread_count(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN) * 2;
    if (n < THREADS_MIN)
        return THREADS_MIN;
    return n > THREADS_MAX ? THREADS_MAX : (size_t)n;
}

struct launcher *launcher_new(struct loop *lp, launcher_done_fn done, void *ctx)
{
    struct launcher *l = xcalloc(1, sizeof *l);
    l->loop = lp;
    l->done = done;
    l->ctx = ctx;
    l->wake[0] = l->wake[1] = -1;
    const char *delay = getenv("TRAINJOBD_TEST_LAUNCH_DELAY_MS");
    l->delay_ms = delay ? strtol(delay, NULL, 10) : 0;
    if (l->delay_ms > 60000 || l->delay_ms < 0)
        l->delay_ms = 0;
    pthread_mutex_init(&l->mu, NULL);
    pthread_cond_init(&l->cv, NULL);
    if (pipe2(l->wake, O_CLOEXEC | O_NONBLOCK) != 0) {
        /* No pipe: every start runs on the loop's thread (launcher_submit). */
        l->wake[0] = l->wake[1] = -1;
        return l;
    }
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old); /* the threads inherit it: no signal lands there */
    size_t want = thread_count();
    while (l->thread_count < want &&
           pthread_create(&l->threads[l->thread_count], NULL, thread_main, l) == 0)
        l->thread_count++;
    l->started = l->thread_count > 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (l->started)
        loop_add_fd(lp, l->wake[0], POLLIN, on_wake, l);
    return l;
}

void launcher_submit(struct launcher *l, struct launch_req *r)
{
    if (!l->started) {
        launcher_run(r); /* no thread: the start blocks the loop, as it did before */
        l->done(l->ctx, r);
        return;
    }
    r->finished = false;
    pthread_mutex_lock(&l->mu);
    queue_put(&l->todo, r);
    order_put(l, r);
    pthread_cond_signal(&l->cv);
    pthread_mutex_unlock(&l->mu);
}

void launcher_unlink(struct launcher *l, char *path)
{
    if (l == NULL || !l->started) {
        (void)unlink(path);
        free(path);
        return;
    }
    pthread_mutex_lock(&l->mu);
    if (l->gone_count == l->gone_cap) {
        l->gone_cap = l->gone_cap ? l->gone_cap * 2 : 16;
        l->gone = xreallocarray(l->gone, l->gone_cap, sizeof *l->gone);
    }
    l->gone[l->gone_count++] = path;
    if (l->gone_count == 1) /* more: a thread is on its way already */
        pthread_cond_signal(&l->cv);
    pthread_mutex_unlock(&l->mu);
}

void launcher_cancel(struct launcher *l, struct launch_req *r)
{
    if (l->started)
        pthread_mutex_lock(&l->mu);
    r->cancelled = true;
    if (l->started)
        pthread_mutex_unlock(&l->mu);
}

void launcher_free(struct launcher *l)
{
    if (l == NULL)
        return;
    if (l->started) {
        pthread_mutex_lock(&l->mu);
        l->stop = true;
        pthread_cond_broadcast(&l->cv);
        pthread_mutex_unlock(&l->mu);
        for (size_t i = 0; i < l->thread_count; i++)
            pthread_join(l->threads[i], NULL);
        loop_remove_fd(l->loop, l->wake[0]);
    }
    unlink_all(l->gone, l->gone_count); /* asked for before the stop: done now */
    /* Every request not given back is in the order list, taken by a thread or not. */
    while (l->order) {
        struct launch_req *r = l->order;
        l->order = r->next_in_order;
        launch_req_free(r);
    }
    if (l->wake[0] >= 0)
        close(l->wake[0]);
    if (l->wake[1] >= 0)
        close(l->wake[1]);
    pthread_mutex_destroy(&l->mu);
    pthread_cond_destroy(&l->cv);
    free(l);
}
