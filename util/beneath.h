/*
 * beneath: opens a directory below another one without ever leaving it —
 * no symlink is followed (not even one that points back inside), no ".."
 * is taken, and missing directories are created below the same descriptor
 * rather than by path name.
 *
 * trainjob-shim uses it to resolve a volume's subdirectory right before
 * bubblewrap binds it: what the worker gets is the descriptor this returns,
 * so a symlink a job plants in a shared volume cannot send another job's
 * mount out of the volume, and nothing can swap a path between the check
 * and the bind (there is no second lookup by name).
 */
#ifndef UTIL_BENEATH_H
#define UTIL_BENEATH_H

#include <stdbool.h>

struct strbuf;

/*
 * Opens subdir ("/a/b", "a/b"; "" or "/" is root_fd's directory itself)
 * below the directory root_fd, one component at a time, each with openat2
 * (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS; an
 * O_NOFOLLOW walk where the kernel has no openat2). With create, a missing
 * component is made with mkdirat (mode 0755 less the umask) below its
 * parent's descriptor. Returns an O_PATH | O_DIRECTORY | O_CLOEXEC
 * descriptor, or -1 with what was wrong in err, naming the component when
 * it is not subdir itself: "is a symlink", "/a/b is not a directory",
 * "'..' is not allowed", "/a: No such file or directory"; errno is then
 * the cause (ENOENT: a component is missing — not made yet, not refused).
 */
int beneath_open_dir(int root_fd, const char *subdir, bool create, struct strbuf *err);
/* For tests: 0 makes beneath_open_dir take the O_NOFOLLOW walk; -1 lets it find out again. */
void beneath_use_openat2(int use);

#endif
