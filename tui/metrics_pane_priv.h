/*
 * metrics_pane_priv: what the files of the Metrics pane share — its
 * structs and the functions one file calls in another. metrics_pane.c
 * (life and following), metrics_pane_model.c (tags, runs, filter, points),
 * metrics_pane_draw.c (drawing) and metrics_pane_keys.c (keys) include it;
 * nothing else does.
 */
#ifndef TUI_METRICS_PANE_PRIV_H
#define TUI_METRICS_PANE_PRIV_H

#include "api/scalarpage.h"
#include "tui/metrics_pane.h"
#include "widgets/chart.h"

#define MAX_CHARTS 8       /* charts shown at once */
#define MIN_CHART_ROWS 8   /* a header and a chart of 7 rows */
#define NAME_SHOWN_MAX 256 /* bytes of a name kept to show */

struct tag {
    char *name;  /* as the job wrote it */
    char *shown; /* sanitized, cut */
    bool selected;
};

/* A run's series in a chart, and the points the chart holds by pointer. */
struct charted_series {
    const struct metric_series *s;
    uint64_t seen; /* metric_series_seen when pts were built */
    struct chart_point *pts;
    size_t n, cap;
};

struct slot {
    struct chart *chart;
    char *tag; /* NULL: unused */
    struct charted_series series[CHART_MAX_SERIES];
    size_t nseries;
    size_t runs_seen; /* p->nruns when series were last added */
    size_t hidden;    /* runs with this tag beyond CHART_MAX_SERIES */
};

struct metrics_pane {
    struct metricset *ms;
    size_t known_series; /* series of ms already in tags / runs */
    struct tag *tags;
    size_t ntags, tags_cap;
    char **runs;
    size_t nruns, runs_cap;
    size_t *vis; /* indexes of the tags the filter keeps */
    size_t nvis, cursor, top;
    char *filter;
    struct prompt *prompt;
    struct slot slots[MAX_CHARTS];
    double smoothing, zoom;
    bool log_y;
    int list_rows; /* of the last draw, for paging */
    /* what the backend said */
    char *log_path;
    char *message; /* why nothing shows, or the last error */
    bool stopped;  /* no log path / no scalars op / job gone: no more calls */
    uint64_t pages, bad;
    /* following */
    struct backend *b;
    struct http_multi *m;
    struct loop *lp;
    char *job;
    struct backend_call *call;
    struct backend_call *push; /* the engine's push stream, while the job runs */
    struct scalar_stream ss;   /* its partial line */
    bool no_push;              /* the backend has no stream (or said to poll): timers */
    bool push_ended;           /* the stream said the job ended: not reopened until it runs */
    bool retry;                /* the stream dropped: reopened after interval (backoff) */
    uint64_t timer;
    int64_t delay; /* of the armed timer, -1: none */
    char *since;
    int64_t interval;
    bool live, visible, more, want_once;
    /* drawing */
    const struct term *t;
    bool dirty;
    metrics_pane_notify_fn notify;
    void *notify_arg;
};

/* metrics_pane.c */
void mp_tell(struct metrics_pane *p);
void mp_slot_reset(struct slot *sl);
void mp_clear_data(struct metrics_pane *p);
void mp_poll_now(struct metrics_pane *p);
void mp_plan(struct metrics_pane *p);
void mp_unschedule(struct metrics_pane *p);
void mp_close_push(struct metrics_pane *p);
/* metrics_pane_model.c */
const char *mp_cursor_tag(const struct metrics_pane *p);
void mp_refilter(struct metrics_pane *p, const char *keep);
void mp_learn_series(struct metrics_pane *p);
size_t mp_build_points(const struct metric_series *s, struct chart_point **pts, size_t *cap);

#endif
