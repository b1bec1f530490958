/*
 * metricset: bounded series per (run, tag) (see metricset.h).
 *
 * A series keeps a sorted array of non-empty buckets. Bucket k of width w
 * holds the steps base + k*w .. base + (k+1)*w - 1; k is not stored but
 * computed from the bucket's first step. A new point either falls in the
 * last bucket or starts a new one after it (steps only go up: a lower step
 * purges first); when the array is full, adjacent buckets whose k differ
 * only in the last bit merge and w doubles, until the new point fits.
 */
#include "api/metricset.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/hmap.h"
#include "util/xalloc.h"

enum { HAS_MINMAX = 1, HAS_NAN = 2 };

struct bucket { /* 96 bytes */
    int64_t first_step, last_step, min_step, max_step, nan_step;
    double first_v, last_v, min_v, max_v;
    double first_wall, last_wall;
    unsigned char flags;
};

struct metric_series {
    char *run, *tag;
    uint64_t seen, purges;
    struct metric_point last;
    bool has_last;
    int64_t base;   /* the first step of bucket index 0 */
    uint64_t width; /* steps per bucket: a power of two */
    struct bucket *b;
    size_t n, cap;
};

struct metricset {
    size_t max_buckets, max_series;
    struct metric_series **series; /* in creation order */
    size_t count, cap;
    struct hmap index; /* by (run, tag) */
    uint64_t dropped;
};

struct metricset *metricset_new(size_t max_buckets, size_t max_series)
{
    struct metricset *ms = xcalloc(1, sizeof *ms);
    if (max_buckets == 0)
        max_buckets = METRICSET_DEFAULT_BUCKETS;
    ms->max_buckets = max_buckets < 2 ? 2 : max_buckets + (max_buckets & 1);
    ms->max_series = max_series ? max_series : METRICSET_DEFAULT_SERIES;
    return ms;
}

void metricset_free(struct metricset *ms)
{
    if (ms == NULL)
        return;
    for (size_t i = 0; i < ms->count; i++) {
        free(ms->series[i]->run);
        free(ms->series[i]->tag);
        free(ms->series[i]->b);
        free(ms->series[i]);
    }
    free(ms->series);
    hmap_free(&ms->index);
    free(ms);
}

struct key {
    const char *run, *tag;
};

static bool series_eq(const void *item, const void *key)
{
    const struct metric_series *s = item;
    const struct key *k = key;
    return strcmp(s->run, k->run) == 0 && strcmp(s->tag, k->tag) == 0;
}

const struct metric_series *metricset_find(const struct metricset *ms, const char *run,
                                           const char *tag)
{
    struct key k = {run, tag};
    return hmap_get(&ms->index, hmap_hash2(run, tag), series_eq, &k);
}

/* ---- buckets ---- */

static uint64_t bucket_index(const struct metric_series *s, int64_t step)
{
    return ((uint64_t)step - (uint64_t)s->base) / s->width;
}

/* Adds a point to bucket b (whose steps are all <= step, or which is empty). */
static void bucket_add(struct bucket *b, int64_t step, double wall, double v)
{
    if (step < b->first_step) {
        b->first_step = step, b->first_v = v, b->first_wall = wall;
    }
    if (step >= b->last_step) {
        b->last_step = step, b->last_v = v, b->last_wall = wall;
    }
    if (isnan(v)) {
        if (!(b->flags & HAS_NAN)) {
            b->nan_step = step;
            b->flags |= HAS_NAN;
        }
    } else if (!(b->flags & HAS_MINMAX)) {
        b->min_step = b->max_step = step;
        b->min_v = b->max_v = v;
        b->flags |= HAS_MINMAX;
    } else if (v < b->min_v) {
        b->min_step = step, b->min_v = v;
    } else if (v > b->max_v) {
        b->max_step = step, b->max_v = v;
    }
}

static void bucket_start(struct bucket *b, int64_t step, double wall, double v)
{
    memset(b, 0, sizeof *b);
    b->first_step = b->last_step = step;
    b->first_v = b->last_v = v;
    b->first_wall = b->last_wall = wall;
    bucket_add(b, step, wall, v);
}

/* Merges b (all of whose steps are >= a's) into a. */
static void bucket_merge(struct bucket *a, const struct bucket *b)
{
    a->last_step = b->last_step, a->last_v = b->last_v, a->last_wall = b->last_wall;
    if (!(a->flags & HAS_NAN) && (b->flags & HAS_NAN)) {
        a->nan_step = b->nan_step;
        a->flags |= HAS_NAN;
    }
    if (!(b->flags & HAS_MINMAX))
        return;
    if (!(a->flags & HAS_MINMAX)) {
        a->min_step = b->min_step, a->min_v = b->min_v;
        a->max_step = b->max_step, a->max_v = b->max_v;
        a->flags |= HAS_MINMAX;
        return;
    }
    if (b->min_v < a->min_v)
        a->min_step = b->min_step, a->min_v = b->min_v;
    if (b->max_v > a->max_v)
        a->max_step = b->max_step, a->max_v = b->max_v;
}

/* Doubles the width, merging buckets that now share an index. */
static void series_coarsen(struct metric_series *s)
{
    s->width *= 2;
    size_t out = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (out > 0 &&
            bucket_index(s, s->b[out - 1].first_step) == bucket_index(s, s->b[i].first_step))
            bucket_merge(&s->b[out - 1], &s->b[i]);
        else
            s->b[out++] = s->b[i];
    }
    s->n = out;
}

/* The wall time of step inside b, interpolated between its first and last points. */
static double bucket_wall(const struct bucket *b, int64_t step)
{
    if (b->last_step == b->first_step)
        return b->first_wall;
    double t =
        ((double)step - (double)b->first_step) / ((double)b->last_step - (double)b->first_step);
    return b->first_wall + (b->last_wall - b->first_wall) * t;
}

/* Up to 5 points of b in step order, each once; returns how many. */
static size_t bucket_points(const struct bucket *b, struct metric_point *p)
{
    struct metric_point c[5];
    size_t n = 0;
    c[n++] = (struct metric_point){b->first_step, b->first_wall, b->first_v};
    if (b->flags & HAS_MINMAX) {
        c[n++] = (struct metric_point){b->min_step, bucket_wall(b, b->min_step), b->min_v};
        c[n++] = (struct metric_point){b->max_step, bucket_wall(b, b->max_step), b->max_v};
    }
    if (b->flags & HAS_NAN)
        c[n++] = (struct metric_point){b->nan_step, bucket_wall(b, b->nan_step), NAN};
    c[n++] = (struct metric_point){b->last_step, b->last_wall, b->last_v};
    /* Stable insertion sort by step: first stays first, last stays last among equals. */
    for (size_t i = 1; i < n; i++) {
        struct metric_point x = c[i];
        size_t k = i;
        while (k > 0 && c[k - 1].step > x.step) {
            c[k] = c[k - 1];
            k--;
        }
        c[k] = x;
    }
    size_t out = 0;
    for (size_t i = 0; i < n; i++) {
        bool dup = false;
        for (size_t k = 0; k < out && !dup; k++)
            dup = p[k].step == c[i].step &&
                  (p[k].value == c[i].value || (isnan(p[k].value) && isnan(c[i].value)));
        if (!dup)
            p[out++] = c[i];
    }
    return out;
}

/* Drops every kept point at or above step (a restart from a checkpoint). */
static void series_purge(struct metric_series *s, int64_t step)
{
    size_t lo = 0, hi = s->n; /* the first bucket whose first step is >= step */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->b[mid].first_step < step)
            lo = mid + 1;
        else
            hi = mid;
    }
    s->n = lo;
    s->purges++;
    if (lo == 0)
        return;
    /* Rebuild the straddling bucket from its kept points below step. */
    struct bucket *b = &s->b[lo - 1];
    struct metric_point p[5];
    size_t n = bucket_points(b, p);
    struct bucket nb;
    bool started = false;
    for (size_t i = 0; i < n; i++) {
        if (p[i].step >= step)
            continue;
        if (!started)
            bucket_start(&nb, p[i].step, p[i].wall_time, p[i].value);
        else
            bucket_add(&nb, p[i].step, p[i].wall_time, p[i].value);
        started = true;
    }
    *b = nb; /* first_step < step, so at least one point was kept */
}

void metricset_add(struct metricset *ms, const char *run, const char *tag, int64_t step,
                   double wall_time, double value)
{
    struct key k = {run, tag};
    uint64_t h = hmap_hash2(run, tag);
    struct metric_series *s = hmap_get(&ms->index, h, series_eq, &k);
    if (s == NULL) {
        if (ms->count >= ms->max_series) {
            ms->dropped++;
            return;
        }
        s = xcalloc(1, sizeof *s);
        s->run = xstrdup(run);
        s->tag = xstrdup(tag);
        if (ms->count == ms->cap) {
            ms->cap = ms->cap ? ms->cap * 2 : 16;
            ms->series = xreallocarray(ms->series, ms->cap, sizeof *ms->series);
        }
        ms->series[ms->count++] = s;
        hmap_put(&ms->index, h, s);
    }
    s->seen++;
    s->last = (struct metric_point){step, wall_time, value};
    s->has_last = true;
    if (s->n > 0 && step < s->b[s->n - 1].last_step)
        series_purge(s, step);
    if (s->n == 0) {
        s->base = step;
        s->width = 1;
    }
    uint64_t idx = bucket_index(s, step);
    while (s->n > 0 && bucket_index(s, s->b[s->n - 1].first_step) != idx &&
           s->n >= ms->max_buckets && s->width < (UINT64_C(1) << 63)) {
        series_coarsen(s);
        idx = bucket_index(s, step);
    }
    if (s->n > 0 && bucket_index(s, s->b[s->n - 1].first_step) == idx) {
        bucket_add(&s->b[s->n - 1], step, wall_time, value);
        return;
    }
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 8;
        if (s->cap > ms->max_buckets)
            s->cap = ms->max_buckets;
        s->b = xreallocarray(s->b, s->cap, sizeof *s->b);
    }
    bucket_start(&s->b[s->n++], step, wall_time, value);
}

/* ---- reading ---- */

size_t metricset_count(const struct metricset *ms)
{
    return ms->count;
}

const struct metric_series *metricset_at(const struct metricset *ms, size_t i)
{
    return i < ms->count ? ms->series[i] : NULL;
}

uint64_t metricset_dropped(const struct metricset *ms)
{
    return ms->dropped;
}

size_t metricset_memory(const struct metricset *ms)
{
    size_t bytes =
        sizeof *ms + ms->cap * sizeof *ms->series + ms->index.cap * sizeof(struct hmap_slot);
    for (size_t i = 0; i < ms->count; i++) {
        const struct metric_series *s = ms->series[i];
        bytes += sizeof *s + strlen(s->run) + 1 + strlen(s->tag) + 1 + s->cap * sizeof *s->b;
    }
    return bytes;
}

const char *metric_series_run(const struct metric_series *s)
{
    return s->run;
}

const char *metric_series_tag(const struct metric_series *s)
{
    return s->tag;
}

uint64_t metric_series_seen(const struct metric_series *s)
{
    return s->seen;
}

bool metric_series_last(const struct metric_series *s, struct metric_point *out)
{
    if (s->has_last)
        *out = s->last;
    return s->has_last;
}

uint64_t metric_series_purges(const struct metric_series *s)
{
    return s->purges;
}

size_t metric_series_bucket_count(const struct metric_series *s)
{
    return s->n;
}

void metric_series_bucket(const struct metric_series *s, size_t i, struct metric_bucket *out)
{
    memset(out, 0, sizeof *out);
    if (i >= s->n)
        return;
    const struct bucket *b = &s->b[i];
    out->first = (struct metric_point){b->first_step, b->first_wall, b->first_v};
    out->last = (struct metric_point){b->last_step, b->last_wall, b->last_v};
    out->has_minmax = (b->flags & HAS_MINMAX) != 0;
    out->has_nan = (b->flags & HAS_NAN) != 0;
    if (out->has_minmax) {
        out->min = (struct metric_point){b->min_step, bucket_wall(b, b->min_step), b->min_v};
        out->max = (struct metric_point){b->max_step, bucket_wall(b, b->max_step), b->max_v};
    }
    if (out->has_nan)
        out->nan = (struct metric_point){b->nan_step, bucket_wall(b, b->nan_step), NAN};
}

size_t metric_series_points(const struct metric_series *s, struct metric_point *out, size_t cap)
{
    size_t total = 0;
    struct metric_point p[5];
    for (size_t i = 0; i < s->n; i++) {
        size_t n = bucket_points(&s->b[i], p);
        for (size_t k = 0; k < n; k++, total++)
            if (total < cap)
                out[total] = p[k];
    }
    return total;
}
