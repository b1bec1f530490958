/*
 * runas: who a job's workers run as (see runas.h for the rule). Owns
 * struct runas; reads the password and group databases (getpwnam,
 * getgrouplist) and, once, may run useradd to make the dedicated user.
 */
#include "engine/runas.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "engine/config.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

/* The most supplementary groups a worker is given (the shim takes as many). */
#define RUNAS_GROUPS_MAX 64

struct runas {
    bool drop;               /* trainjobd runs as root */
    struct runner_user self; /* !drop: who trainjobd is */
    char *self_name;
    struct runner_user dedicated; /* drop: for members without a Unix user of their own */
    char *dedicated_name;
    char *summary;
};

/* Fills u (dropping to it) from a passwd entry, with its supplementary groups. */
static void from_passwd(const struct passwd *pw, struct runner_user *u)
{
    u->drop = true;
    u->uid = pw->pw_uid;
    u->gid = pw->pw_gid;
    int n = RUNAS_GROUPS_MAX;
    gid_t groups[RUNAS_GROUPS_MAX];
    if (getgrouplist(pw->pw_name, pw->pw_gid, groups, &n) < 0)
        n = 0; /* more than we pass on: only the primary group */
    u->groups = xcalloc((size_t)n + 1, sizeof *u->groups);
    u->group_count = 0;
    for (int i = 0; i < n; i++)
        u->groups[u->group_count++] = groups[i];
}

/* Runs useradd for the dedicated user; quiet. True when it exited 0. */
static bool make_system_user(const char *name)
{
    pid_t pid = fork();
    if (pid < 0)
        return false;
    if (pid == 0) {
        int nul = open("/dev/null", 2);
        if (nul >= 0) {
            dup2(nul, 0);
            dup2(nul, 1);
            dup2(nul, 2);
        }
        static char *const env[] = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", NULL};
        char *argv[] = {"useradd",      "--system", "--no-create-home",  "--home-dir",
                        "/nonexistent", "--shell",  "/usr/sbin/nologin", "--user-group",
                        (char *)name,   NULL};
        execve("/usr/sbin/useradd", argv, env);
        execve("/sbin/useradd", argv, env);
        _exit(127);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return false;
    return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

/* The dedicated user: job_user (checked at config load), or trainjob (made), or nobody. */
static void find_dedicated(struct runas *ra, const struct engine_config *cfg, struct strbuf *note)
{
    const char *want = cfg->job_user ? cfg->job_user : RUNAS_DEFAULT_USER;
    struct passwd *pw = getpwnam(want);
    /*
     * Engines starting together on a fresh machine all try: useradd then
     * fails on the locked /etc/passwd, or because another just made the
     * user. Look again after each try, and try a few times.
     */
    for (int tries = 0; pw == NULL && cfg->job_user == NULL && tries < 5; tries++) {
        bool made = make_system_user(want);
        pw = getpwnam(want);
        if (pw && made)
            strbuf_addf(note, "; made system user %s", want);
        if (pw == NULL)
            nanosleep(&(struct timespec){.tv_nsec = 200 * 1000 * 1000}, NULL);
    }
    if (pw == NULL || pw->pw_uid == 0) {
        strbuf_addf(note, "; %s %s, so %s", want, pw ? "has uid 0" : "could not be made",
                    RUNAS_FALLBACK_USER);
        pw = getpwnam(RUNAS_FALLBACK_USER);
    }
    if (pw && pw->pw_uid != 0) {
        from_passwd(pw, &ra->dedicated);
        ra->dedicated_name = xstrdup(pw->pw_name);
        return;
    }
    /* No passwd entry at all: the overflow ids, which own nothing. */
    ra->dedicated = (struct runner_user){.drop = true, .uid = 65534, .gid = 65534};
    ra->dedicated.groups = xcalloc(1, sizeof *ra->dedicated.groups);
    ra->dedicated_name = xstrdup("uid 65534");
}

struct runas *runas_setup(const struct engine_config *cfg)
{
    struct runas *ra = xcalloc(1, sizeof *ra);
    struct strbuf sb = STRBUF_INIT;
    if (geteuid() != 0) {
        struct passwd *pw = getpwuid(geteuid());
        ra->self = (struct runner_user){.drop = false, .uid = geteuid(), .gid = getegid()};
        ra->self_name = pw ? xstrdup(pw->pw_name) : xasprintf("uid%ld", (long)geteuid());
        strbuf_addf(&sb, "jobs run as %s (uid %ld), who runs trainjobd", ra->self_name,
                    (long)ra->self.uid);
        ra->summary = strbuf_detach(&sb, NULL);
        return ra;
    }
    ra->drop = true;
    struct strbuf note = STRBUF_INIT;
    find_dedicated(ra, cfg, &note);
    strbuf_addf(&sb,
                "jobs run as each member's own Unix user (the Unix socket's peer, or a key's "
                "unix_user), else as %s (uid %ld); never as root%s",
                ra->dedicated_name, (long)ra->dedicated.uid, strbuf_str(&note));
    strbuf_free(&note);
    ra->summary = strbuf_detach(&sb, NULL);
    return ra;
}

void runas_free(struct runas *ra)
{
    if (ra == NULL)
        return;
    free(ra->self_name);
    free(ra->dedicated.groups);
    free(ra->dedicated_name);
    free(ra->summary);
    free(ra);
}

const char *runas_summary(const struct runas *ra)
{
    return ra ? ra->summary : "jobs run as trainjobd does";
}

void runas_user_free(struct runner_user *u)
{
    free(u->groups);
    u->groups = NULL;
    u->group_count = 0;
}

/* A copy of u (its own groups). */
static void copy_user(const struct runner_user *u, struct runner_user *out)
{
    *out = *u;
    out->groups = xcalloc(u->group_count + 1, sizeof *out->groups);
    if (u->group_count)
        memcpy(out->groups, u->groups, u->group_count * sizeof *u->groups);
}

/*
 * The Unix user a member is, by the rule in runas.h: NULL for the
 * dedicated user. why says which part of the rule decided.
 */
static struct passwd *member_passwd(const struct engine_config *cfg, const char *member,
                                    const char **why)
{
    bool keyed = false;
    for (size_t i = 0; member && i < cfg->key_count; i++) {
        const struct config_key *k = &cfg->keys[i];
        if (k->user == NULL || strcmp(k->user, member) != 0)
            continue;
        keyed = true;
        if (k->unix_user) {
            *why = "its key's unix_user";
            return getpwnam(k->unix_user);
        }
    }
    if (keyed) {
        *why = "a key without unix_user";
        return NULL;
    }
    *why = "its own Unix user";
    return member ? getpwnam(member) : NULL;
}

void runas_member(const struct runas *ra, const struct engine_config *cfg, const char *member,
                  struct runner_user *out, char **name)
{
    if (ra == NULL || !ra->drop) {
        if (ra)
            copy_user(&ra->self, out);
        else
            *out = (struct runner_user){.drop = false, .uid = geteuid(), .gid = getegid()};
        if (name)
            *name =
                xasprintf("%s (uid %ld)", ra ? ra->self_name : "trainjobd's user", (long)out->uid);
        return;
    }
    const char *why = NULL;
    struct passwd *pw = member_passwd(cfg, member, &why);
    if (pw && pw->pw_uid != 0) {
        from_passwd(pw, out);
        if (name)
            *name = xasprintf("%s (uid %ld), %s", pw->pw_name, (long)pw->pw_uid, why);
        return;
    }
    copy_user(&ra->dedicated, out);
    if (name)
        *name =
            xasprintf("%s (uid %ld), the dedicated user: %s", ra->dedicated_name, (long)out->uid,
                      pw                                      ? "never root"
                      : strcmp(why, "its own Unix user") == 0 ? "no Unix user of that name"
                                                              : why);
}
