/*
 * scalars: see scalars.h. One request is one follower (api/tfevents) opened
 * on the job's log directory, moved to the client's cursor, polled once
 * within the page's byte limit, and closed: nothing stays behind.
 */
#include "engine/scalars.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/apierror.h"
#include "api/jobspec.h"
#include "api/metricset.h"
#include "api/scalarpage.h"
#include "api/tfevents.h"
#include "engine/elog.h"
#include "util/beneath.h"
#include "util/pathpart.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

/*
 * What one page may grow to in memory. A record may pack many tiny values
 * (a few bytes each on disk, a hundred in JSON); past this, a page's
 * scalars are counted as dropped rather than held.
 */
#define MAX_REPLY_BYTES (32u << 20)
/*
 * What the buckets of a ?chart= page may take (about 100 bytes each): the
 * series past (this / 100 / buckets) are counted as dropped, as metricset
 * does past its max_series.
 */
#define MAX_CHART_BYTES (64u << 20)

const struct mount *scalars_mount_of(const struct jobspec *job, const char *log_path,
                                     struct strbuf *rest)
{
    /* trainjob-shim refuses mount paths inside each other: at most one holds log_path. */
    for (size_t i = 0; i < job->mount_count; i++) {
        const struct mount *m = &job->mount[i];
        if (m->mount_path && m->mount_path[0] == '/' && path_within(log_path, m->mount_path, rest))
            return m;
    }
    return NULL;
}

int scalars_open_dir(const char *root, const char *subdir, const char *rest, int *missing,
                     struct strbuf *err)
{
    *missing = 0;
    /* The volume's own directory is the operator's (engine.yaml): opened as named. */
    int root_fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (root_fd < 0) {
        *missing = errno == ENOENT;
        strbuf_addf(err, "the volume's directory %s: %s", root, strerror(errno));
        return -1;
    }
    char *below = xasprintf("%s/%s", subdir ? subdir : "", rest ? rest : "");
    struct strbuf why = STRBUF_INIT;
    int fd = beneath_open_dir(root_fd, below, false, &why);
    int cause = errno;
    close(root_fd);
    if (fd < 0) {
        /* beneath names the trouble; a missing directory is only "not written yet" */
        *missing = cause == ENOENT;
        strbuf_addf(err, "%s: %s", below, strbuf_str(&why));
    }
    strbuf_free(&why);
    free(below);
    return fd;
}

/* ?limit=BYTES: default, and at most SCALARPAGE_MAX_LIMIT; -1 when not a positive number. */
long scalars_page_limit(const char *text)
{
    if (text == NULL || *text == '\0')
        return SCALARPAGE_DEFAULT_LIMIT;
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (*end || errno || v <= 0)
        return -1;
    return v > (long)SCALARPAGE_MAX_LIMIT ? (long)SCALARPAGE_MAX_LIMIT : v;
}

/* ?chart=BUCKETS: 0 when absent (every point), -1 when not a number in [2, SCALARPAGE_MAX_CHART]. */
long scalars_chart_buckets(const char *text)
{
    if (text == NULL || *text == '\0')
        return 0;
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (*end || errno || v < 2 || v > (long)SCALARPAGE_MAX_CHART)
        return -1;
    return v;
}

/* An empty page (the directory is not there yet): the cursor stays as it was. */
void scalars_empty_page(const char *log_path, const char *since, struct strbuf *out)
{
    strbuf_adds(out, "{\"log_path\":");
    scalarpage_json_string(out, log_path, strlen(log_path));
    strbuf_adds(out, ",\"scalars\":[],\"cursor\":");
    scalarpage_json_string(out, since ? since : "", since ? strlen(since) : 0);
    strbuf_adds(out, ",\"more\":false,\"bad_records\":{\"crc\":0,\"protobuf\":0},\"dropped\":0}");
}

/* The reply under construction: points as JSON text, counted against the cap. */
struct page_out {
    struct strbuf *out;
    size_t first; /* where the scalars array starts in out */
    size_t max;   /* JSON bytes of points past which scalars are dropped */
    uint64_t sent, dropped;
    struct metricset *chart; /* ?chart=N: the points kept for a chart, sent at the end */
};

static void on_scalar(void *ctx, const struct tfevents_scalar *s)
{
    struct page_out *po = ctx;
    if (po->chart) {
        metricset_add(po->chart, s->run, s->tag, s->step, s->wall_time, s->value);
        return;
    }
    if (po->out->len - po->first > po->max) {
        po->dropped++;
        return;
    }
    if (po->sent++)
        strbuf_addc(po->out, ',');
    scalarpage_json_point(po->out, s->run, s->tag, s->step, s->wall_time, s->value);
}

/*
 * The points a chart keeps of what the page read (api/metricset: per
 * bucket its first, last, min, max and first NaN, values and steps
 * exact), series after series, within the page's cap like every page.
 * The points between them are summarised, not dropped: the client asked
 * for a chart.
 */
static void send_chart(struct page_out *po)
{
    struct metric_point *pts = NULL;
    size_t cap = 0;
    for (size_t i = 0; i < metricset_count(po->chart); i++) {
        const struct metric_series *s = metricset_at(po->chart, i);
        size_t n = metric_series_points(s, NULL, 0);
        if (n > cap) {
            cap = n;
            pts = xreallocarray(pts, cap, sizeof *pts);
        }
        n = metric_series_points(s, pts, cap);
        const char *run = metric_series_run(s), *tag = metric_series_tag(s);
        for (size_t k = 0; k < n; k++) {
            if (po->out->len - po->first > po->max) {
                po->dropped++;
                continue;
            }
            if (po->sent++)
                strbuf_addc(po->out, ',');
            scalarpage_json_point(po->out, run, tag, pts[k].step, pts[k].wall_time, pts[k].value);
        }
    }
    free(pts);
}

int scalars_page(struct tfevents_dir *d, const char *log_path, uint64_t limit, unsigned chart,
                 size_t max_json, struct tfevents_stats *prev, struct strbuf *out,
                 struct scalars_page_info *info, struct strbuf *err)
{
    size_t start = out->len;
    strbuf_adds(out, "{\"log_path\":");
    scalarpage_json_string(out, log_path, strlen(log_path));
    strbuf_adds(out, ",\"scalars\":[");
    struct page_out po = {out, out->len, max_json, 0, 0, NULL};
    if (chart) {
        size_t series = MAX_CHART_BYTES / 100 / chart;
        po.chart = metricset_new(chart, series < 16 ? 16 : series);
    }
    struct tfevents_limit lim = {limit, 0};
    struct tfevents_poll_result res = {0};
    if (tfevents_poll(d, &lim, on_scalar, &po, &res, err) != 0) {
        metricset_free(po.chart);
        strbuf_truncate(out, start);
        return -1;
    }
    uint64_t read = 0; /* chart: the points read (bucketed or not kept) */
    if (po.chart) {
        for (size_t i = 0; i < metricset_count(po.chart); i++)
            read += metric_series_seen(metricset_at(po.chart, i));
        po.dropped = metricset_dropped(po.chart); /* series past the set's bound */
        read += po.dropped;
        send_chart(&po);
        metricset_free(po.chart);
    }
    struct tfevents_stats st = *tfevents_stats(d);
    strbuf_adds(out, "],\"cursor\":");
    struct strbuf cur = STRBUF_INIT;
    tfevents_cursor(d, &cur);
    scalarpage_json_string(out, cur.buf ? cur.buf : "", cur.len);
    strbuf_free(&cur);
    /* framing damage counts as crc, a good frame that is no Event (or a bad value) as protobuf */
    uint64_t crc = st.bad_crc + st.resyncs + st.oversized, proto = st.bad_proto + st.bad_values;
    if (prev) {
        crc -= prev->bad_crc + prev->resyncs + prev->oversized;
        proto -= prev->bad_proto + prev->bad_values;
        *prev = st;
    }
    strbuf_addf(out,
                ",\"more\":%s,\"bad_records\":{\"crc\":%llu,\"protobuf\":%llu},\"dropped\":%llu}",
                res.more ? "true" : "false", (unsigned long long)crc, (unsigned long long)proto,
                (unsigned long long)po.dropped);
    if (po.dropped)
        engine_log("scalars of %s: %llu scalars over the page's %zu KiB dropped", log_path,
                   (unsigned long long)po.dropped, max_json >> 10);
    info->more = res.more;
    info->bytes = res.bytes;
    info->scalars = chart ? read : po.sent + po.dropped;
    info->damaged = crc + proto;
    return 0;
}

/* The page of scalars below dir_fd from since, as JSON text into out. */
int scalars_read_page(int dir_fd, const char *log_path, const char *since, long limit,
                      unsigned chart, struct strbuf *out, struct api_error *err)
{
    struct strbuf why = STRBUF_INIT;
    struct tfevents_dir *d = tfevents_open_fd(dir_fd, log_path, &why);
    struct scalars_page_info info;
    int rc = 200;
    if (d == NULL) {
        rc = api_error_set(err, 500, "LogPathUnreadable", "tensorboard.log_path", "%s",
                           strbuf_str(&why));
    } else if (since && *since && tfevents_set_cursor(d, since, &why) != 0) {
        rc = api_error_set(err, 400, "InvalidArgument", "since", "since: %s", strbuf_str(&why));
    } else if (scalars_page(d, log_path, (uint64_t)limit, chart, MAX_REPLY_BYTES, NULL, out, &info,
                            &why) != 0) {
        rc = api_error_set(err, 500, "LogPathUnreadable", "tensorboard.log_path", "%s",
                           strbuf_str(&why));
    }
    tfevents_close(d);
    strbuf_free(&why);
    return rc;
}
