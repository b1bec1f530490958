/*
 * scalars: GET /trainjob/v1/workspaces/{ws}/trainingJobs/{name}/scalars —
 * a page of the scalars a job wrote to its TensorBoard log directory (the
 * reply's shape: api/scalarpage.h).
 *
 * The job names its log directory as a path inside the worker
 * (tensorboard.log_path, on one of its volumes' mount paths). The engine
 * maps it to the host the way the worker got it — the volume's directory
 * from engine.yaml, the mount's subdir, then the rest of the path — and
 * opens it with util/beneath, the rule trainjob-shim binds volumes with: no
 * symlink is followed and no ".." taken, so a job that plants a symlink at
 * its log path (or above it, inside the volume) cannot make the engine read
 * outside the volume. Event files are then read below that descriptor
 * (api/tfevents), from the client's cursor, a bounded number of bytes per
 * request: the engine keeps nothing per client between pages. With
 * follow=true the reply is instead a stream of pages pushed as the job
 * writes (engine/scalarfollow.h), which holds the directory while it lasts.
 *
 * routes.c calls engine_job_scalars, which is the engine core's
 * (scalarjobs.c: it looks the job up); the access rule is the logs' (every
 * member of the workspace may read every job's). The rest here reads a
 * directory and knows no job, so the core and scalarfollow.c use it and it
 * uses neither.
 */
#ifndef ENGINE_SCALARS_H
#define ENGINE_SCALARS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct api_error;
struct engine;
struct jobspec;
struct mount;
struct strbuf;
struct stream;

struct scalars_query {
    const char *since; /* the cursor of the previous page, NULL or "" from the start */
    const char *limit; /* bytes of event files to read at most (text, as received), or NULL */
    bool follow;       /* a stream of pages (engine/scalarfollow.h) instead of one */
    const char *chart; /* buckets per series: the points a chart keeps, not every one; or NULL */
};

/*
 * The page as JSON text into out; 200, or a status with err saying why.
 * With sq->follow, *follow_stream then carries the pages (out stays empty).
 */
int engine_job_scalars(struct engine *eng, const char *user, const char *ws, const char *name,
                       const struct scalars_query *sq, struct strbuf *out,
                       struct stream **follow_stream, struct api_error *err);

struct tfevents_dir;
struct tfevents_stats;

/* ?limit=BYTES: the default when absent, at most SCALARPAGE_MAX_LIMIT; -1 when not above 0. */
long scalars_page_limit(const char *text);
/* ?chart=BUCKETS: 0 when absent (every point), -1 when not in [2, SCALARPAGE_MAX_CHART]. */
long scalars_chart_buckets(const char *text);
/* An empty page (the directory is not there yet): the cursor stays as it was. */
void scalars_empty_page(const char *log_path, const char *since, struct strbuf *out);
/* The page of scalars below dir_fd from since, as JSON text into out; 200 or err's status. */
int scalars_read_page(int dir_fd, const char *log_path, const char *since, long limit,
                      unsigned chart, struct strbuf *out, struct api_error *err);

/* What scalars_page read. */
struct scalars_page_info {
    bool more;        /* stopped at the limit */
    uint64_t bytes;   /* of event files consumed */
    uint64_t scalars; /* read (sent or dropped) */
    uint64_t damaged; /* bad records reported in the page */
};

/*
 * Appends one page (the JSON object of api/scalarpage.h, no newline) read
 * from d, at most limit bytes of event files and max_json bytes of points
 * (the rest counted as dropped). chart > 0: only the points a chart of
 * that many buckets per series keeps (api/metricset), series after series. prev (may be NULL) holds the damage already
 * reported: the page reports what is new and prev is brought up to date.
 * 0, or -1 with err when the directory cannot be read (out as it was).
 */
int scalars_page(struct tfevents_dir *d, const char *log_path, uint64_t limit, unsigned chart,
                 size_t max_json, struct tfevents_stats *prev, struct strbuf *out,
                 struct scalars_page_info *info, struct strbuf *err);

/*
 * The mount of job whose mount_path holds log_path (equal to or above it,
 * component by component; "." and repeated slashes are no components), and
 * the part of log_path below it into rest ("" or "/a/b"). NULL when none does.
 */
const struct mount *scalars_mount_of(const struct jobspec *job, const char *log_path,
                                     struct strbuf *rest);

/*
 * Opens the host directory behind log_path: root (the volume's directory),
 * then subdir + rest below it through util/beneath. Returns an O_PATH
 * descriptor, or -1 with err saying why; *missing is set when the only
 * trouble is that the directory does not exist (yet).
 */
int scalars_open_dir(const char *root, const char *subdir, const char *rest, int *missing,
                     struct strbuf *err);

#endif
