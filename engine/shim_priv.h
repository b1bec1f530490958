/*
 * shim_priv: what the parts of trainjob-shim share — its constants, its
 * arguments, the log, the argument vector given to bubblewrap, and the
 * functions one part calls in another. Included only by engine/shim*.c:
 * shim.c (arguments, starting and supervising the worker, main),
 * shim_sandbox.c (bubblewrap's command line and the mount checks),
 * shim_log.c (the capped log and the status file), shim_init.c (--init,
 * pid 1 in the sandbox) and shim_exec.c (--exec, a command in a running
 * worker). The shim is a binary of its own: these files are
 * linked into trainjob-shim only (see the Makefile), never into the library.
 */
#ifndef ENGINE_SHIM_PRIV_H
#define ENGINE_SHIM_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* How long to keep copying output after the worker ended, for escaped writers. */
#define DRAIN_MS 1000
/* The exit code of a worker that could not be started (as the shell's "not found"). */
#define EXIT_CANNOT_RUN 127
/* Where the sandbox has the platform's files (api/validate.h VALIDATE_PLATFORM_DIR). */
#define SANDBOX_INIT "/trainjob/init"
#define SANDBOX_SCRIPT "/trainjob/startup.sh"
/* The most of a startup script the shim passes on (the API allows far less). */
#define SCRIPT_MAX (1 << 20)
/* How long the shim waits for bubblewrap to say which pid the sandbox's init has. */
#define INFO_TIMEOUT_MS 30000
/* The most of bubblewrap's own message a "could not start" quotes. */
#define SETUP_MESSAGE_MAX 400
/* The most supplementary groups --user takes. */
#define GROUPS_MAX 64

/* A --bind (src a host path) or a --volume (src its root, subdir below it, opened into fd). */
struct shim_bind {
    char *src;
    char *dst;
    bool read_only;
    char *volume; /* NULL for a --bind */
    char *subdir;
    int fd; /* the opened source (a volume's subdir, or src), inherited by bwrap; -1 otherwise */
};

/* --user: who the worker runs as, when the shim runs as root (drop false: as the shim). */
struct shim_user {
    bool drop;
    uid_t uid;
    gid_t gid;
    gid_t groups[GROUPS_MAX];
    size_t group_count;
};

struct shim_args {
    const char *status;
    const char *log;
    size_t log_cap;
    const char *cwd;
    bool sandbox;
    struct shim_bind *binds;
    size_t bind_count;
    const char **cgroups; /* directories the worker joins */
    size_t cgroup_count;
    const char *engine_lock; /* --engine-lock: trainjobd's lock file, or NULL */
    const char *script_file; /* --script-file: the script by name (removed once read) */
    int script_in;           /* --script-fd: the script as the runner's descriptor (-1: by name) */
    const char *bwrap; /* --bwrap: the program run as bubblewrap ("/usr/bin/bwrap" by default) */
    struct shim_user user;
    const char *user_arg; /* --user's text, passed on to the sandbox's init */
    int cwd_fd;           /* the working directory, opened before the drop (-1: none) */
    /* Inherited by bwrap only (not close-on-exec; closed by the shim once it started): */
    int script_fd; /* the script file, copied into the sandbox */
    int exe_fd;    /* this binary, the sandbox's init */
    int info_w;    /* bwrap --info-fd: the host pid of the sandbox's pid 1 */
    int info_r;
    int ready_w; /* the init writes one byte once it takes signals */
    int ready_r;
    /* Run as root for another user: per entry of /etc the sandbox shows, the
     * opened file bwrap copies in (--file), or -1 where it binds the path. */
    int *etc_fds;
    size_t etc_count;
};

/* The log file and its rotation. */
struct shim_log {
    const char *path;
    char *rotated; /* path + ".1" */
    int fd;        /* -1 when it could not be reopened: output is dropped */
    size_t size;
    size_t cap; /* 0: no cap */
    /* The time index FILE.idx (see engine/logindex.h): one record per chunk copied. */
    int idx_fd;
    size_t idx_size;
    long long idx_last_ms; /* the time of the last record: a record only when it moves */
};

/* A growing NULL-terminated argument vector (owned strings). */
struct argv_buf {
    char **v;
    size_t n, cap;
};

/* shim.c: gives up before the worker started: one "error …" line for runner_start, exit 1 */
_Noreturn void shim_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* shim.c: --user's UID:GID[:G1,G2,...]; false when it is not that, or UID is 0. */
bool shim_parse_user(const char *text, struct shim_user *u);
/*
 * shim.c: becomes u for good (groups, gid, uid, each checked; then root
 * must be out of reach; no_new_privs). Returns 0, or -1 with why. Allocates
 * nothing (safe after fork).
 */
int shim_drop_privileges(const struct shim_user *u, char *why, size_t size);
/* shim.c: takes on (set) or gives back (!set) the worker's user for file access checks. */
void shim_act_as(const struct shim_user *u, bool set);

/* shim_sandbox.c */
void shim_worker_argv(const struct shim_args *a, struct argv_buf *av);
void shim_check_mount_paths(const struct shim_args *a);
void shim_resolve_volumes(struct shim_args *a);
void shim_open_binds(struct shim_args *a);
void shim_open_etc(struct shim_args *a);

/* shim_log.c */
bool shim_log_open(struct shim_log *lg, bool truncate);
void shim_write_all(int fd, const char *p, size_t n);
void shim_log_write(struct shim_log *lg, const char *p, size_t n);
bool shim_write_status(const char *path, const char *line, size_t len, struct shim_log *lg);

/* shim_init.c: main of trainjob-shim --init */
int shim_init_main(int argc, char **argv);
/* shim_exec.c: main of trainjob-shim --exec (a command inside a running worker) */
int shim_exec_main(int argc, char **argv);

#endif
