/*
 * metricset: the scalars of a training job kept for display — one series
 * per (run, tag), each in memory bounded by a constant however long the job
 * trains.
 *
 * A series is a row of at most max_buckets buckets over step ranges of equal
 * width (a power of two). A bucket keeps, of the points whose steps fall in
 * it, the first and the last (by step), the minimum and the maximum, and the
 * first NaN if one came. When a point falls past the last bucket, adjacent
 * buckets are merged in pairs and the width doubles, so the buckets cover
 * the whole run from its first step with between max_buckets/2 and
 * max_buckets buckets. Why this and not TensorBoard's reservoir of 1,000
 * random points: a chart that draws min/max per column never loses a spike
 * (every extreme of every bucket is kept, and a bucket is narrower than a
 * column when max_buckets/2 >= the chart's width in dots), the first and
 * last points are exact, and the result does not depend on a random draw.
 * With the default 1,024 buckets a series costs at most ~100 KB; 200
 * series (10 runs x 20 tags) at most ~20 MB.
 *
 * A step lower than the highest step already kept means the job restarted
 * from a checkpoint: as TensorBoard's purge_orphaned_data does, the points
 * at and above that step are dropped before the new one is added (the
 * bucket that straddles it keeps only its kept points below it).
 *
 * NaN and ±Inf are kept as such: ±Inf take part in min/max, NaN is kept
 * once per bucket beside them. Fed by the callers of tfevents_poll (the
 * Metrics pane, `trainjob metrics`); read by the chart through
 * metric_series_points.
 */
#ifndef API_METRICSET_H
#define API_METRICSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define METRICSET_DEFAULT_BUCKETS 1024
#define METRICSET_DEFAULT_SERIES 4096

struct metric_point {
    int64_t step;
    double wall_time;
    double value;
};

/*
 * One bucket, as metric_series_bucket shows it. Stored more compactly: the
 * wall times of min, max and nan are not kept but interpolated by step
 * between first and last (a bucket is narrower than a chart column, so the
 * difference cannot show), which keeps a bucket at 96 bytes.
 */
struct metric_bucket {
    struct metric_point first, last; /* lowest and highest step (ties: first and last to arrive) */
    struct metric_point min, max;    /* among non-NaN values; valid when has_minmax */
    struct metric_point nan;         /* the first NaN; valid when has_nan */
    bool has_minmax, has_nan;
};

struct metricset;
struct metric_series;

/*
 * A new empty set. max_buckets (rounded up to an even number >= 2; 0: the
 * default) bounds each series; max_series (0: the default) bounds how many
 * series are kept — points of further (run, tag) pairs are counted in
 * metricset_dropped and not kept.
 */
struct metricset *metricset_new(size_t max_buckets, size_t max_series);
void metricset_free(struct metricset *ms);

/* Adds one point to the series (run, tag), creating it at its first point. */
void metricset_add(struct metricset *ms, const char *run, const char *tag, int64_t step,
                   double wall_time, double value);

/* The series in the order they were created. */
size_t metricset_count(const struct metricset *ms);
const struct metric_series *metricset_at(const struct metricset *ms, size_t i);
/* The series (run, tag), or NULL. */
const struct metric_series *metricset_find(const struct metricset *ms, const char *run,
                                           const char *tag);
/* Points not kept because max_series was reached. */
uint64_t metricset_dropped(const struct metricset *ms);
/* Bytes held by the set (structures and arrays), for tests and benches. */
size_t metricset_memory(const struct metricset *ms);

const char *metric_series_run(const struct metric_series *s);
const char *metric_series_tag(const struct metric_series *s);
/* Every point ever added to this series (purged ones included). */
uint64_t metric_series_seen(const struct metric_series *s);
/* The point that arrived last (whatever its step); false before any. */
bool metric_series_last(const struct metric_series *s, struct metric_point *out);
/* Times a lower step purged kept points. */
uint64_t metric_series_purges(const struct metric_series *s);

size_t metric_series_bucket_count(const struct metric_series *s);
/* Bucket i (0 .. count-1, in step order) into out. */
void metric_series_bucket(const struct metric_series *s, size_t i, struct metric_bucket *out);

/*
 * The kept points in step order: per bucket its first, min, max, NaN and
 * last, each once (a point that is both first and min appears once), at
 * most 5 per bucket. Writes at most cap points to out and returns how many
 * there are in all (call with cap 0 to size the array).
 */
size_t metric_series_points(const struct metric_series *s, struct metric_point *out, size_t cap);

#endif
