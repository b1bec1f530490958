/*
 * chart_math: the pure half of the chart widget (widgets/chart.h) — axis
 * ticks (1-2-5, powers of ten, time), labels with SI suffixes, TensorBoard's
 * smoothing and the min/max-per-pixel-column reduction. No curses: tests
 * and other views call these directly; chart.c draws with them.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "widgets/chart.h"

/* The smallest 1-2-5 step (times a power of ten) at least raw. */
static double nice_step(double raw)
{
    double mag = pow(10, floor(log10(raw)));
    double norm = raw / mag;
    double m = norm <= 1 + 1e-9 ? 1 : norm <= 2 + 1e-9 ? 2 : norm <= 5 + 1e-9 ? 5 : 10;
    return m * mag;
}

/* The next 1-2-5 step after step. */
static double next_step(double step)
{
    double mag = pow(10, floor(log10(step) + 1e-9));
    double m = step / mag;
    return m < 1.5 ? 2 * mag : m < 3.5 ? 5 * mag : 10 * mag;
}

/* Fills t with the multiples of step covering [lo, hi]; false when more than max. */
static bool fill_ticks(double lo, double hi, double step, int max_ticks, struct chart_ticks *t)
{
    double a = floor(lo / step + 1e-9), b = ceil(hi / step - 1e-9);
    if (!(b - a >= 0 && b - a + 1 <= max_ticks)) /* NaN from a zero or infinite step too */
        return false;
    t->step = step;
    t->n = (int)(b - a) + 1;
    t->lo = a * step;
    t->hi = b * step;
    for (int i = 0; i < t->n; i++) {
        double v = (a + i) * step;
        t->v[i] = fabs(v) < step * 1e-9 ? 0 : v;
    }
    return true;
}

static int clamp_ticks(int max_ticks)
{
    return max_ticks < 2 ? 2 : max_ticks > CHART_MAX_TICKS ? CHART_MAX_TICKS : max_ticks;
}

/* Two ticks at the bounds, for ranges the arithmetic cannot split. */
static void bounds_only(double lo, double hi, struct chart_ticks *t)
{
    t->lo = t->v[0] = lo;
    t->hi = t->v[1] = hi;
    t->step = 0;
    t->n = 2;
}

void chart_nice_ticks(double lo, double hi, int max_ticks, struct chart_ticks *t)
{
    max_ticks = clamp_ticks(max_ticks);
    if (!isfinite(lo) || !isfinite(hi))
        lo = 0, hi = 1;
    if (lo > hi) {
        double tmp = lo;
        lo = hi, hi = tmp;
    }
    if (hi - lo <= fmax(fabs(lo), fabs(hi)) * 1e-12) {
        double a = fabs(lo);
        if (a < DBL_MIN)
            lo = -1, hi = 1;
        else
            lo -= a * 0.05, hi += a * 0.05;
    }
    double raw = (hi - lo) / (max_ticks - 1);
    if (!isfinite(raw) || raw <= 0) {
        bounds_only(lo, hi, t);
        return;
    }
    double step = nice_step(raw);
    for (int guard = 0; guard < 8; guard++) {
        if (fill_ticks(lo, hi, step, max_ticks, t) && isfinite(t->lo) && isfinite(t->hi))
            return;
        step = next_step(step);
    }
    bounds_only(lo, hi, t);
}

void chart_log_ticks(double lo, double hi, int max_ticks, struct chart_ticks *t)
{
    max_ticks = clamp_ticks(max_ticks);
    if (!(lo > 0) || !isfinite(lo))
        lo = 1;
    if (!(hi >= lo) || !isfinite(hi))
        hi = lo;
    double a = floor(log10(lo) + 1e-9), b = ceil(log10(hi) - 1e-9);
    if (b <= a)
        b = a + 1;
    double k = ceil((b - a) / (max_ticks - 1));
    if (k < 1)
        k = 1;
    b = a + ceil((b - a) / k) * k;
    t->step = 0;
    t->n = 0;
    for (double e = a; e <= b + 1e-9 && t->n < CHART_MAX_TICKS; e += k)
        t->v[t->n++] = pow(10, e);
    t->lo = pow(10, a);
    t->hi = t->v[t->n - 1];
}

void chart_time_ticks(double lo, double hi, int max_ticks, struct chart_ticks *t)
{
    static const double steps[] = {1,     2,     5,     10,    15,     20,    30,   60,
                                   120,   300,   600,   900,   1200,   1800,  3600, 7200,
                                   10800, 21600, 43200, 86400, 172800, 604800};
    max_ticks = clamp_ticks(max_ticks);
    if (lo > hi) {
        double tmp = lo;
        lo = hi, hi = tmp;
    }
    if (!isfinite(hi - lo) || hi - lo < 1 || hi - lo > 1e15) {
        chart_nice_ticks(lo, hi, max_ticks, t); /* sub-second, garbage, or past any calendar */
        return;
    }
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++)
        if ((hi - lo) / steps[i] <= max_ticks - 1 && fill_ticks(lo, hi, steps[i], max_ticks, t))
            return;
    /* Longer than weeks: 1-2-5 days. */
    struct chart_ticks days;
    chart_nice_ticks(lo / 86400, hi / 86400, max_ticks, &days);
    double step = days.step > 0 ? days.step * 86400 : 86400;
    for (int guard = 0; guard < 8; guard++) {
        if (fill_ticks(lo, hi, step, max_ticks, t) && isfinite(t->lo) && isfinite(t->hi))
            return;
        step = next_step(step);
    }
    bounds_only(lo, hi, t);
}

/* Digits after the point that a step needs (0.2 → 1, 0.05 → 2), 0 to 6. */
static int decimals_for(double step)
{
    if (!(step > 0))
        return 0;
    double d = ceil(-log10(step) - 1e-9);
    return d < 0 ? 0 : d > 6 ? 6 : (int)d;
}

/* Digits after the point that show v to 4 significant digits, 0 to 6. */
static int decimals_sig4(double v)
{
    if (v == 0)
        return 0;
    double d = 3 - floor(log10(fabs(v)));
    return d < 0 ? 0 : d > 6 ? 6 : (int)d;
}

/* Cuts trailing zeros (and a bare point) of the number that ends buf at end. */
static void strip_zeros(char *buf, char *end)
{
    char *dot = memchr(buf, '.', (size_t)(end - buf));
    if (!dot)
        return;
    char *p = end;
    while (p > dot + 1 && p[-1] == '0')
        p--;
    if (p == dot + 1)
        p = dot;
    memmove(p, end, strlen(end) + 1);
}

/* v as mantissa e exponent: "2e-8", "1.5e-7" (denormals too: printf does the scaling). */
static void format_exp(double v, double step, char *buf, size_t n)
{
    int d = 3;
    if (step > 0) {
        d = (int)floor(log10(fabs(v))) - (int)floor(log10(step) + 1e-9);
        d = d < 0 ? 0 : d > 3 ? 3 : d;
    }
    char tmp[64];
    snprintf(tmp, sizeof tmp, "%.*e", d, v);
    char *e = strchr(tmp, 'e');
    if (!e) {
        snprintf(buf, n, "%s", tmp);
        return;
    }
    long exp10 = strtol(e + 1, NULL, 10);
    strip_zeros(tmp, e);
    e = strchr(tmp, 'e');
    *e = '\0';
    snprintf(buf, n, "%se%ld", tmp, exp10);
}

void chart_format_value(double v, double step, double magnitude, char *buf, size_t n)
{
    static const char suffix[] = " kMGTP";
    if (n == 0)
        return;
    if (isnan(v)) {
        snprintf(buf, n, "nan");
        return;
    }
    if (isinf(v)) {
        snprintf(buf, n, v > 0 ? "inf" : "-inf");
        return;
    }
    if (v == 0 || (step > 0 && fabs(v) < step * 1e-6)) {
        snprintf(buf, n, "0");
        return;
    }
    double m = magnitude > 0 ? fmax(fabs(magnitude), step) : fabs(v);
    if (m >= 1e18 || (m < 1e-3 && (step <= 0 || step < 1e-3))) {
        format_exp(v, step, buf, n);
        return;
    }
    if (m >= 1e3) {
        int k = (int)floor(log10(m) / 3 + 1e-9);
        k = k < 1 ? 1 : k > 5 ? 5 : k;
        double div = pow(1000, k), scaled = v / div;
        int d = step > 0 ? decimals_for(step / div) : decimals_sig4(scaled);
        int len = snprintf(buf, n, "%.*f", d, scaled);
        if (len > 0 && (size_t)len < n && step <= 0)
            strip_zeros(buf, buf + len);
        size_t used = strlen(buf);
        snprintf(buf + used, n - used, "%c", suffix[k]);
        return;
    }
    int d = step > 0 ? decimals_for(step) : decimals_sig4(v);
    int len = snprintf(buf, n, "%.*f", d, v);
    if (len > 0 && (size_t)len < n && step <= 0)
        strip_zeros(buf, buf + len);
}

/* Seconds as up to two units: "45s", "12m", "1h30m", "2d", "1d12h"; "1.5s" below 10 s. */
static void format_duration(double v, double step, char *buf, size_t n)
{
    const char *sign = v < 0 ? "-" : "";
    double a = fabs(v);
    if (a < 10 && (step < 1 || a != floor(a))) {
        char num[32];
        chart_format_value(a, step > 0 ? step : 0, 0, num, sizeof num);
        snprintf(buf, n, "%s%ss", sign, num);
        return;
    }
    static const struct {
        double secs;
        char unit;
    } units[] = {{86400, 'd'}, {3600, 'h'}, {60, 'm'}, {1, 's'}};
    long long rest = llround(a);
    size_t used = (size_t)snprintf(buf, n, "%s", sign);
    size_t i = 0;
    while (i < 3 && rest < (long long)units[i].secs)
        i++;
    long long q = rest / (long long)units[i].secs;
    rest -= q * (long long)units[i].secs;
    used += (size_t)snprintf(buf + used, n - used, "%lld%c", q, units[i].unit);
    if (i < 3 && used < n) {
        q = rest / (long long)units[i + 1].secs;
        if (q > 0)
            snprintf(buf + used, n - used, "%lld%c", q, units[i + 1].unit);
    }
}

void chart_format_x(enum chart_x_kind kind, double v, double step, char *buf, size_t n)
{
    if (n == 0)
        return;
    if (!isfinite(v)) {
        chart_format_value(v, 0, 0, buf, n);
        return;
    }
    if (kind == CHART_X_WALL && fabs(v) < 1e15) {
        time_t tt = (time_t)floor(v);
        struct tm tm;
        if (localtime_r(&tt, &tm)) {
            size_t k = step < 60      ? strftime(buf, n, "%H:%M:%S", &tm)
                       : step < 86400 ? strftime(buf, n, "%H:%M", &tm)
                                      : strftime(buf, n, "%m-%d", &tm);
            if (k > 0)
                return;
        }
    }
    if (kind == CHART_X_RELATIVE) {
        format_duration(v, step, buf, n);
        return;
    }
    /* A step: exact in a readout, SI on the axis ("1.5k"). */
    if (step <= 0 && v == floor(v) && fabs(v) < 1e15) {
        snprintf(buf, n, "%.0f", v);
        return;
    }
    chart_format_value(v, step, 0, buf, n);
    if (step > 0) {
        char *end = buf + strlen(buf);
        char *num_end = end;
        if (num_end > buf && (num_end[-1] < '0' || num_end[-1] > '9'))
            num_end--;
        if (!strchr(buf, 'e'))
            strip_zeros(buf, num_end);
    }
}

void chart_smooth(const double *y, size_t n, double w, double *out)
{
    w = !(w > 0) ? 0 : w > CHART_MAX_SMOOTHING ? CHART_MAX_SMOOTHING : w;
    double last = 0, wk = 1;
    for (size_t i = 0; i < n; i++) {
        double v = y[i];
        if (!isfinite(v)) {
            out[i] = v;
            continue;
        }
        last = last * w + (1 - w) * v;
        wk *= w;
        out[i] = last / (1 - wk);
    }
}

/* Adds the value v of a point at x to col; *gap says an undrawable value came last. */
static inline bool column_add(struct chart_column *col, double x, double v, bool log_y, bool *gap)
{
    if (isfinite(v) && (!log_y || v > 0)) {
        if (!(col->flags & CHART_COL_DATA)) {
            col->min = col->max = col->first = v;
            col->flags |= CHART_COL_DATA | (*gap ? CHART_COL_GAP : 0);
        } else {
            if (v < col->min)
                col->min = v;
            if (v > col->max)
                col->max = v;
        }
        col->last = v;
        col->last_x = x;
        *gap = false;
        return true;
    }
    col->flags |= isnan(v) ? CHART_COL_NAN : v > 0 ? CHART_COL_POS_INF : CHART_COL_BELOW;
    *gap = true;
    return false;
}

void chart_reduce_points(struct chart_reduce *r, const struct chart_point *pts, size_t from,
                         size_t n)
{
    if (r->ncols == 0 || !(r->x1 >= r->x0))
        return;
    double scale = r->x1 > r->x0 ? (double)r->ncols / (r->x1 - r->x0) : 0;
    double w = r->weight, last = r->ema.last, wk = r->ema.wk;
    for (size_t i = from; i < n; i++) {
        double x = pts[i].x, y = pts[i].y, sv = y;
        if (!isfinite(x))
            continue;
        if (isfinite(y)) {
            last = last * w + (1 - w) * y;
            wk *= w;
            sv = last / (1 - wk);
        }
        if (x < r->x0 || x > r->x1)
            continue;
        double p = (x - r->x0) * scale;
        size_t c = !(p >= 0) ? 0 : p >= (double)r->ncols ? r->ncols - 1 : (size_t)p;
        if (!column_add(&r->raw[c], x, y, r->log_y, &r->raw_gap))
            r->hidden++;
        if (r->smo)
            column_add(&r->smo[c], x, sv, r->log_y, &r->smo_gap);
    }
    r->ema.last = last;
    r->ema.wk = wk;
}

size_t chart_downsample(const struct chart_point *pts, size_t n, double x0, double x1, size_t ncols,
                        bool log_y, struct chart_column *cols)
{
    memset(cols, 0, ncols * sizeof *cols);
    struct chart_reduce r = {
        .x0 = x0, .x1 = x1, .ncols = ncols, .log_y = log_y, .raw = cols, .ema = CHART_EMA_INIT};
    chart_reduce_points(&r, pts, 0, n);
    return r.hidden;
}
