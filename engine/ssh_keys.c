/*
 * ssh_keys: see ssh_keys.h. Keys come from ssh-keygen (OpenSSH), run once
 * per job; everything else is plain files.
 */
#include "engine/ssh_keys.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/fileio.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

/* Runs ssh-keygen for an unencrypted ed25519 key at path; 0 when it worked. */
static int keygen(const char *path)
{
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        int null = open("/dev/null", O_RDWR);
        if (null >= 0) {
            dup2(null, STDIN_FILENO);
            dup2(null, STDOUT_FILENO);
            dup2(null, STDERR_FILENO);
        }
        execlp("ssh-keygen", "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "trainjob", "-f",
               path, (char *)NULL);
        _exit(127);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

int ssh_keys_prepare(const char *dir, const char *mount_path, struct strbuf *err)
{
    if (file_mkdirs(dir, 0700, err) != 0)
        return -1;
    char *key = xasprintf("%s/id_ed25519", dir);
    char *pub = xasprintf("%s/id_ed25519.pub", dir);
    char *auth = xasprintf("%s/authorized_keys", dir);
    char *conf = xasprintf("%s/config", dir);
    int rc = 0;
    struct strbuf sb = STRBUF_INIT;
    strbuf_addf(&sb,
                "# Written by trainjobd: SSH between this job's workers.\n"
                "Host *\n"
                "    IdentityFile %s/id_ed25519\n"
                "    StrictHostKeyChecking no\n"
                "    UserKnownHostsFile /dev/null\n"
                "    LogLevel ERROR\n",
                mount_path);
    if (file_write_atomic(conf, sb.buf, sb.len, 0644, err) != 0)
        rc = -1;
    if (rc == 0 && access(key, F_OK) != 0) {
        if (keygen(key) != 0) {
            strbuf_addf(err, "ssh-keygen failed or is not installed: no SSH keys for this job");
            rc = -1;
        } else {
            char *text = NULL;
            size_t len = 0;
            if (file_read_all(pub, 16384, &text, &len, err) != 0 ||
                file_write_atomic(auth, text, len, 0600, err) != 0)
                rc = -1;
            free(text);
        }
    }
    strbuf_free(&sb);
    free(key);
    free(pub);
    free(auth);
    free(conf);
    return rc;
}
