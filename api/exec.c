/*
 * exec: see exec.h. The exchange with trainjobd is one HTTP/1.1 request
 * on the engine's Unix socket that the engine answers 101 (switching the
 * connection to its exec helper) or with an ACP error; api/uhttp.c keeps a
 * connection for one exchange only, so the request is written and the
 * head read here. Then one message (api/exec_wire.h) carries the
 * command and four descriptors, and the helper answers on the last one, a
 * pipe: "exit N" or "error WHY". The connection stays open until then: its
 * close tells the helper we are gone (the command gets SIGHUP).
 */
#include "api/exec.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "api/backend.h"
#include "api/exec_wire.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#define HEAD_MAX 8192
#define BODY_MAX (64u << 10)
#define ANSWER_MAX 1024

extern char **environ;

int exec_pick_worker(const struct worker_list *wl, const char *job, const char *want,
                     const char **out, struct api_error *err)
{
    for (size_t i = 0; i < wl->count; i++) {
        const struct worker_info *w = &wl->workers[i];
        if (want && strcmp(w->name, want) != 0)
            continue;
        if (w->phase == WORKER_RUNNING) {
            *out = w->name;
            return 0;
        }
        if (want)
            return api_error_set(err, 409, "WorkerNotRunning", "worker",
                                 "worker %s is not running (%s)", want,
                                 enum_name_or(&worker_phase_names, (int)w->phase, w->phase_other));
    }
    if (want)
        return api_error_set(err, 404, "NotFound", "worker", "job '%s' has no worker '%s'", job,
                             want);
    return api_error_set(err, 409, "WorkerNotRunning", "worker", "job '%s' has no running worker%s",
                         job, wl->count ? "" : " (it has not been scheduled yet)");
}

enum backend_status exec_choose_worker(struct backend *b, const char *name, const char *want,
                                       char **out, struct api_error *err)
{
    struct worker_list wl = {0};
    enum backend_status st = backend_workers(b, name, &wl, err);
    if (st != BACKEND_OK)
        return st;
    const char *w = NULL;
    if (exec_pick_worker(&wl, name, want, &w, err) != 0)
        st = BACKEND_REJECTED;
    else
        *out = xstrdup(w);
    worker_list_free(&wl);
    return st;
}

/* Writes all of p (EINTR retried); 0 or -1. */
static int write_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        ssize_t w = write(fd, c, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

/*
 * The request and the engine's head; 101: 0 with the connection in *fd.
 * Anything else: the status, err filled from the body.
 */
static enum backend_status request_upgrade(const char *socket_path, const char *path, int *fd,
                                           struct api_error *err)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (strlen(socket_path) >= sizeof a.sun_path) {
        api_error_set(err, 0, "Unreachable", "", "%s: the socket path is too long", socket_path);
        return BACKEND_UNREACHABLE;
    }
    memcpy(a.sun_path, socket_path, strlen(socket_path) + 1);
    int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof a) != 0) {
        api_error_set(err, 0, "Unreachable", "", "cannot reach the engine at %s: %s", socket_path,
                      strerror(errno));
        if (s >= 0)
            close(s);
        return BACKEND_UNREACHABLE;
    }
    struct strbuf rq = STRBUF_INIT;
    strbuf_addf(&rq,
                "POST %s HTTP/1.1\r\nHost: localhost\r\nConnection: Upgrade\r\nUpgrade: %s\r\n"
                "Content-Length: 0\r\n\r\n",
                path, EXEC_WIRE_UPGRADE);
    int wrc = write_all(s, rq.buf, rq.len);
    strbuf_free(&rq);
    /* The head, a byte at a time: what follows it (a body) is read after. */
    char head[HEAD_MAX + 1];
    size_t n = 0;
    while (wrc == 0 && n < HEAD_MAX) {
        ssize_t r = read(s, head + n, 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        n++;
        if (n >= 4 && memcmp(head + n - 4, "\r\n\r\n", 4) == 0)
            break;
    }
    head[n] = '\0';
    int status = 0;
    if (wrc != 0 || sscanf(head, "HTTP/1.%*d %d", &status) != 1 || !strstr(head, "\r\n\r\n")) {
        api_error_set(err, 0, "Transport", "", "the engine at %s ended the exec request",
                      socket_path);
        close(s);
        return BACKEND_TRANSPORT;
    }
    if (status == 101) {
        *fd = s;
        return BACKEND_OK;
    }
    size_t want = BODY_MAX;
    for (char *h = head; (h = strchr(h, '\n')) != NULL; h++)
        if (strncasecmp(h + 1, "Content-Length:", 15) == 0)
            want = (size_t)strtoul(h + 16, NULL, 10);
    if (want > BODY_MAX)
        want = BODY_MAX;
    char *body = xmalloc(want + 1);
    size_t got = 0;
    while (got < want) {
        ssize_t r = read(s, body + got, want - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(s);
    api_error_from_body(err, status, body, got);
    free(body);
    return BACKEND_REJECTED;
}

/* Sends the header and the four descriptors, then the strings. */
static int send_request(int s, const struct exec_request *rq, const int fds[4])
{
    struct strbuf strings = STRBUF_INIT;
    const char *term = getenv("TERM");
    uint32_t envc = 0;
    if (rq->tty && term && *term && !strchr(term, '/')) {
        strbuf_addf(&strings, "TERM=%s", term);
        strbuf_addc(&strings, '\0');
        envc = 1;
    }
    for (size_t i = 0; i < rq->argc; i++) {
        strbuf_adds(&strings, rq->argv[i]);
        strbuf_addc(&strings, '\0');
    }
    if (strings.len > EXEC_WIRE_MAX || rq->argc > EXEC_WIRE_MAX_ARGS) {
        strbuf_free(&strings);
        errno = E2BIG;
        return -1;
    }
    struct exec_wire_header h;
    memcpy(h.magic, EXEC_WIRE_MAGIC, sizeof h.magic);
    h.flags = rq->tty ? EXEC_WIRE_TTY : 0;
    h.envc = envc;
    h.argc = (uint32_t)rq->argc;
    h.len = (uint32_t)strings.len;
    char cbuf[CMSG_SPACE(4 * sizeof(int))];
    memset(cbuf, 0, sizeof cbuf);
    struct iovec iov = {&h, sizeof h};
    struct msghdr msg = {0};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = cbuf;
    msg.msg_controllen = sizeof cbuf;
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(4 * sizeof(int));
    memcpy(CMSG_DATA(c), fds, 4 * sizeof(int));
    ssize_t n;
    do
        n = sendmsg(s, &msg, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    int rc = n == (ssize_t)sizeof h && write_all(s, strings.buf, strings.len) == 0 ? 0 : -1;
    strbuf_free(&strings);
    return rc;
}

/* ---- the terminal relay -------------------------------------------------- */

static int winch_fd = -1;

static void on_winch(int sig)
{
    (void)sig;
    int saved = errno;
    if (winch_fd >= 0 && write(winch_fd, "w", 1) < 0) {
        /* full: a resize is pending already */
    }
    errno = saved;
}

/* Our window's size onto the pseudo-terminal (its foreground gets SIGWINCH). */
static void copy_size(int master)
{
    struct winsize ws;
    if (ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) == 0 || ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0)
        ioctl(master, TIOCSWINSZ, &ws);
}

/* Reads the helper's one line from answer (to EOF); the text in line. */
static void read_answer(int answer, char *line, size_t size, size_t *len)
{
    while (*len + 1 < size) {
        ssize_t r = read(answer, line + *len, size - 1 - *len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        *len += (size_t)r;
        if (memchr(line, '\n', *len))
            break;
    }
    line[*len] = '\0';
}

/* Copies what the master has to our stdout; false at its end (EIO: every slave closed). */
static bool pump_master(int master)
{
    char buf[8192];
    ssize_t r = read(master, buf, sizeof buf);
    if (r < 0 && (errno == EINTR || errno == EAGAIN))
        return true;
    if (r <= 0)
        return false;
    return write_all(STDOUT_FILENO, buf, (size_t)r) == 0;
}

/*
 * Relays our terminal and master until the helper answers, in raw mode
 * when stdin is a terminal (Ctrl-C goes to the command, not to us); the
 * terminal is put back however it ends.
 */
static void relay(int master, int answer, char *line, size_t size, size_t *len)
{
    struct termios saved;
    bool raw = tcgetattr(STDIN_FILENO, &saved) == 0;
    if (raw) {
        struct termios t = saved;
        cfmakeraw(&t);
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &t);
    }
    int wp[2] = {-1, -1};
    struct sigaction sa = {0}, old_winch;
    if (pipe2(wp, O_CLOEXEC | O_NONBLOCK) == 0) {
        winch_fd = wp[1];
        sa.sa_handler = on_winch;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGWINCH, &sa, &old_winch);
    }
    copy_size(master);
    fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK);
    bool in_open = true, master_open = true;
    for (;;) {
        struct pollfd p[4] = {{answer, POLLIN, 0},
                              {master_open ? master : -1, POLLIN, 0},
                              {in_open ? STDIN_FILENO : -1, POLLIN, 0},
                              {wp[0], POLLIN, 0}};
        if (poll(p, 4, -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if (p[1].revents)
            master_open = pump_master(master);
        if (p[2].revents) {
            char buf[4096];
            ssize_t r = read(STDIN_FILENO, buf, sizeof buf);
            if (r > 0)
                write_all(master, buf, (size_t)r);
            else if (r == 0 || errno != EINTR)
                in_open = false;
        }
        if (p[3].revents) {
            char drain[64];
            while (read(wp[0], drain, sizeof drain) > 0) {
            }
            copy_size(master);
        }
        if (p[0].revents) {
            read_answer(answer, line, size, len);
            /* What the command wrote last is still in the master: the rest of it, then done. */
            while (master_open) {
                struct pollfd m = {master, POLLIN, 0};
                if (poll(&m, 1, 100) <= 0)
                    break;
                master_open = pump_master(master);
            }
            break;
        }
    }
    if (wp[0] >= 0) {
        sigaction(SIGWINCH, &old_winch, NULL);
        winch_fd = -1;
        close(wp[0]);
        close(wp[1]);
    }
    if (raw)
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved);
}

/* A pseudo-terminal: its master in *master, its slave (for the command) returned; -1 on error. */
static int open_pty(int *master)
{
    int m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (m < 0 || grantpt(m) != 0 || unlockpt(m) != 0) {
        if (m >= 0)
            close(m);
        return -1;
    }
    const char *name = ptsname(m);
    int s = name ? open(name, O_RDWR | O_NOCTTY | O_CLOEXEC) : -1;
    if (s < 0) {
        close(m);
        return -1;
    }
    struct termios t;
    if (tcgetattr(STDIN_FILENO, &t) == 0)
        tcsetattr(s, TCSANOW, &t); /* our terminal's settings (erase key, …) in cooked form */
    *master = m;
    return s;
}

enum backend_status exec_upgrade(const char *socket_path, const char *path,
                                 const struct exec_request *rq, int *exit_code,
                                 struct api_error *err)
{
    int s = -1;
    enum backend_status st = request_upgrade(socket_path, path, &s, err);
    if (st != BACKEND_OK)
        return st;
    int fds[4] = {-1, -1, -1, -1}, answer[2] = {-1, -1}, master = -1, null_in = -1;
    if (pipe2(answer, O_CLOEXEC) != 0) {
        close(s);
        api_error_set(err, 0, "Transport", "", "pipe: %s", strerror(errno));
        return BACKEND_TRANSPORT;
    }
    if (rq->tty) {
        int slave = open_pty(&master);
        if (slave < 0) {
            close(s);
            close(answer[0]);
            close(answer[1]);
            api_error_set(err, 0, "Transport", "", "cannot open a pseudo-terminal: %s",
                          strerror(errno));
            return BACKEND_TRANSPORT;
        }
        fds[0] = fds[1] = fds[2] = slave;
    } else {
        null_in = rq->stdin_open ? -1 : open("/dev/null", O_RDONLY | O_CLOEXEC);
        fds[0] = rq->stdin_open ? STDIN_FILENO : null_in;
        fds[1] = STDOUT_FILENO;
        fds[2] = STDERR_FILENO;
    }
    fds[3] = answer[1];
    int sent = send_request(s, rq, fds);
    int saved = errno;
    /* The helper has its own copies now: ours would keep the pipe and the terminal open. */
    if (rq->tty)
        close(fds[0]);
    if (null_in >= 0)
        close(null_in);
    close(answer[1]);
    char line[ANSWER_MAX];
    size_t len = 0;
    if (sent == 0) {
        if (rq->tty)
            relay(master, answer[0], line, sizeof line, &len);
        else
            read_answer(answer[0], line, sizeof line, &len);
    }
    line[len] = '\0';
    if (master >= 0)
        close(master);
    close(answer[0]);
    close(s);
    if (sent != 0) {
        api_error_set(err, 0, "Transport", "", "cannot send the command to the engine: %s",
                      strerror(saved));
        return BACKEND_TRANSPORT;
    }
    line[strcspn(line, "\n")] = '\0';
    if (strncmp(line, "exit ", 5) == 0) {
        *exit_code = atoi(line + 5);
        return BACKEND_OK;
    }
    if (strncmp(line, "error ", 6) == 0) {
        api_error_set(err, 409, "ExecFailed", "worker", "%s", line + 6);
        return BACKEND_REJECTED;
    }
    api_error_set(err, 0, "Transport", "",
                  "the engine's exec helper ended without the command's status");
    return BACKEND_TRANSPORT;
}

int exec_run_here(const char *const *argv, int *exit_code, struct api_error *err)
{
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], NULL, NULL, (char *const *)argv, environ);
    if (rc != 0)
        return api_error_set(err, rc == ENOENT ? 127 : 126, "CannotRun", "", "%s: %s", argv[0],
                             strerror(rc)),
               -1;
    /* Ctrl-C belongs to the command (it shares our terminal); we wait for its end. */
    struct sigaction ign = {0}, old_int, old_quit;
    ign.sa_handler = SIG_IGN;
    sigemptyset(&ign.sa_mask);
    sigaction(SIGINT, &ign, &old_int);
    sigaction(SIGQUIT, &ign, &old_quit);
    int status = 0;
    pid_t w;
    do
        w = waitpid(pid, &status, 0);
    while (w < 0 && errno == EINTR);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGQUIT, &old_quit, NULL);
    if (w != pid)
        return api_error_set(err, 0, "Transport", "", "lost %s: %s", argv[0], strerror(errno)), -1;
    *exit_code = WIFEXITED(status)     ? WEXITSTATUS(status)
                 : WIFSIGNALED(status) ? 128 + WTERMSIG(status)
                                       : 1;
    return 0;
}
