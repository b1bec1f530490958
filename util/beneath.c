/*
 * beneath: see beneath.h. The only state is whether openat2 works here
 * (learnt on the first call; tests may turn it off to exercise the walk).
 */
#include "util/beneath.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/pathpart.h"
#include "util/strbuf.h"

/* -1: not tried yet; 0: the kernel (or a seccomp filter) refuses it; 1: works. */
static int have_openat2 = -1;

/* For tests: 0 forces the O_NOFOLLOW walk, -1 goes back to finding out. */
void beneath_use_openat2(int use)
{
    have_openat2 = use;
}

/* Opens the single name (no '/') below dir as a directory, never through a symlink. */
static int open_component(int dir, const char *name)
{
    if (have_openat2 != 0) {
        struct open_how how;
        memset(&how, 0, sizeof how);
        how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
        how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
        long fd = syscall(SYS_openat2, dir, name, &how, sizeof how);
        if (fd >= 0 || (errno != ENOSYS && errno != EPERM)) {
            have_openat2 = 1;
            return (int)fd;
        }
        have_openat2 = 0;
    }
    /* One component, so O_NOFOLLOW covers every symlink the lookup could meet. */
    return openat(dir, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/* Says why name below dir could not be opened (errno e), naming it when it is not all of subdir. */
static void explain(int dir, const char *name, int e, const char *shown, struct strbuf *err)
{
    struct stat st;
    const char *what = NULL;
    if (e == ELOOP || e == ENOTDIR || e == EXDEV) {
        if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
            what = "is a symlink";
        else if (e == EXDEV)
            what = "leaves the directory";
        else
            what = "is not a directory";
    }
    if (shown)
        strbuf_addf(err, what ? "%s " : "%s: ", shown);
    strbuf_adds(err, what ? what : strerror(e));
}

int beneath_open_dir(int root_fd, const char *subdir, bool create, struct strbuf *err)
{
    int cur = fcntl(root_fd, F_DUPFD_CLOEXEC, 3);
    if (cur < 0) {
        strbuf_addf(err, "%s", strerror(errno));
        return -1;
    }
    struct strbuf sofar = STRBUF_INIT;
    int failed = 0; /* the errno the caller gets back */
    const char *p = subdir ? subdir : "";
    const char *part;
    size_t len;
    while ((part = path_next_part(&p, &len))) {
        bool last = p[strspn(p, "/")] == '\0';
        strbuf_addc(&sofar, '/');
        strbuf_add(&sofar, part, len);
        /* Named in messages only when the trouble is not with the whole subdir. */
        const char *shown = last ? NULL : strbuf_str(&sofar);
        if (path_part_is_dotdot(part, len)) {
            strbuf_adds(err, "'..' is not allowed");
            failed = EINVAL;
            goto fail;
        }
        char name[NAME_MAX + 1];
        if (len > NAME_MAX) {
            explain(cur, "", ENAMETOOLONG, shown, err);
            failed = ENAMETOOLONG;
            goto fail;
        }
        memcpy(name, part, len);
        name[len] = '\0';
        int fd = open_component(cur, name);
        if (fd < 0 && errno == ENOENT && create) {
            /* mkdirat never follows a symlink in name; a racing one fails the open below. */
            if (mkdirat(cur, name, 0755) != 0 && errno != EEXIST) {
                failed = errno;
                explain(cur, name, failed, shown, err);
                goto fail;
            }
            fd = open_component(cur, name);
        }
        if (fd < 0) {
            failed = errno;
            explain(cur, name, failed, shown, err);
            goto fail;
        }
        close(cur);
        cur = fd;
    }
    strbuf_free(&sofar);
    return cur;
fail:
    close(cur);
    strbuf_free(&sofar);
    errno = failed;
    return -1;
}
