/*
 * tfwrite: appends TensorBoard scalars to an event file, as PyTorch's
 * SummaryWriter writes them (one simple_value Event per tag and step, each a
 * framed TFRecord), for the shell tests and for a job's startup script that
 * must write event files while it runs (tests/metrics.test.sh).
 *
 * usage: tfwrite FILE FIRST COUNT TAG...
 *   appends steps FIRST .. FIRST+COUNT-1; tag number i (from 0) at step s
 *   has the value 1/(1+s) + i as a float32 and wall_time 1.7e9 + s. Each
 *   step is one write(2), so a follower never sees half a step unless it
 *   reads during that write. Exit status 0, or 1 with a message.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/tfevents.h"
#include "util/strbuf.h"

/* Parses a decimal long long from s, all of it; false when s is not one. */
static bool number(const char *s, long long *out)
{
    char *end;
    errno = 0;
    *out = strtoll(s, &end, 10);
    return errno == 0 && end != s && *end == '\0';
}

int main(int argc, char **argv)
{
    long long first, count;
    if (argc < 5 || !number(argv[2], &first) || !number(argv[3], &count) || count < 0) {
        fprintf(stderr, "usage: tfwrite FILE FIRST COUNT TAG...\n");
        return 1;
    }
    int fd = open(argv[1], O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) {
        fprintf(stderr, "tfwrite: %s: %s\n", argv[1], strerror(errno));
        return 1;
    }
    struct strbuf sb = STRBUF_INIT;
    for (long long s = first; s < first + count; s++) {
        strbuf_reset(&sb);
        for (int i = 4; i < argc; i++)
            tfevents_write_simple(&sb, s, 1.7e9 + (double)s, argv[i],
                                  (float)(1.0 / (1.0 + (double)s) + (i - 4)));
        if (write(fd, sb.buf, sb.len) != (ssize_t)sb.len) {
            fprintf(stderr, "tfwrite: %s: %s\n", argv[1], strerror(errno));
            return 1;
        }
    }
    strbuf_free(&sb);
    close(fd);
    return 0;
}
