/*
 * metricset: bounded series per (run, tag) (see metricset.h). Skeleton: the
 * API compiles; the bodies follow.
 */
#include "api/metricset.h"

#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

struct metricset {
    uint64_t dropped;
};

struct metricset *metricset_new(size_t max_buckets, size_t max_series)
{
    (void)max_buckets;
    (void)max_series;
    return xcalloc(1, sizeof(struct metricset));
}

void metricset_free(struct metricset *ms)
{
    free(ms);
}

void metricset_add(struct metricset *ms, const char *run, const char *tag, int64_t step,
                   double wall_time, double value)
{
    (void)run;
    (void)tag;
    (void)step;
    (void)wall_time;
    (void)value;
    ms->dropped++;
}

size_t metricset_count(const struct metricset *ms)
{
    (void)ms;
    return 0;
}

const struct metric_series *metricset_at(const struct metricset *ms, size_t i)
{
    (void)ms;
    (void)i;
    return NULL;
}

const struct metric_series *metricset_find(const struct metricset *ms, const char *run,
                                           const char *tag)
{
    (void)ms;
    (void)run;
    (void)tag;
    return NULL;
}

uint64_t metricset_dropped(const struct metricset *ms)
{
    return ms->dropped;
}

size_t metricset_memory(const struct metricset *ms)
{
    return sizeof *ms;
}

const char *metric_series_run(const struct metric_series *s)
{
    (void)s;
    return "";
}

const char *metric_series_tag(const struct metric_series *s)
{
    (void)s;
    return "";
}

uint64_t metric_series_seen(const struct metric_series *s)
{
    (void)s;
    return 0;
}

bool metric_series_last(const struct metric_series *s, struct metric_point *out)
{
    (void)s;
    (void)out;
    return false;
}

uint64_t metric_series_purges(const struct metric_series *s)
{
    (void)s;
    return 0;
}

size_t metric_series_bucket_count(const struct metric_series *s)
{
    (void)s;
    return 0;
}

void metric_series_bucket(const struct metric_series *s, size_t i, struct metric_bucket *out)
{
    (void)s;
    (void)i;
    memset(out, 0, sizeof *out);
}

size_t metric_series_points(const struct metric_series *s, struct metric_point *out, size_t cap)
{
    (void)s;
    (void)out;
    (void)cap;
    return 0;
}
