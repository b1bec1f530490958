/*
 * timefmt: see timefmt.h.
 */
#include "util/timefmt.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

int64_t time_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* unix_ms as RFC 3339 in UTC, with its milliseconds or to the second. */
static void format_utc(int64_t unix_ms, bool with_ms, char buf[TIMEFMT_RFC3339_LEN])
{
    time_t secs = (time_t)(unix_ms / 1000);
    struct tm tm;
    gmtime_r(&secs, &tm);
    int n = snprintf(buf, TIMEFMT_RFC3339_LEN, "%04d-%02d-%02dT%02d:%02d:%02d", tm.tm_year + 1900,
                     tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
    if (n > 0 && n < TIMEFMT_RFC3339_LEN - 6) {
        if (with_ms)
            snprintf(buf + n, (size_t)(TIMEFMT_RFC3339_LEN - n), ".%03dZ", (int)(unix_ms % 1000));
        else
            snprintf(buf + n, (size_t)(TIMEFMT_RFC3339_LEN - n), "Z");
    }
}

void time_rfc3339(int64_t unix_ms, char buf[TIMEFMT_RFC3339_LEN])
{
    format_utc(unix_ms, true, buf);
}

void time_shown(const char *rfc3339, char buf[TIMEFMT_RFC3339_LEN])
{
    int64_t ms = time_parse_rfc3339(rfc3339);
    if (ms < 0) {
        snprintf(buf, TIMEFMT_RFC3339_LEN, "%s", rfc3339 ? rfc3339 : "");
        return;
    }
    format_utc(ms, false, buf);
}

/*
 * "YYYY-MM-DDTHH:MM:SS" with every digit in place, read without sscanf
 * (issue 14: sscanf was 7 % of `get jobs` over 50k rows); false for any
 * other shape, which sscanf then reads as before.
 */
static bool canonical_time(const char *s, struct tm *tm)
{
    static const char shape[] = "dddd-dd-ddTdd:dd:dd";
    for (size_t i = 0; i < sizeof shape - 1; i++)
        if (shape[i] == 'd' ? s[i] < '0' || s[i] > '9' : s[i] != shape[i])
            return false;
#define D2(i) ((s[i] - '0') * 10 + (s[(i) + 1] - '0'))
    tm->tm_year = D2(0) * 100 + D2(2);
    tm->tm_mon = D2(5);
    tm->tm_mday = D2(8);
    tm->tm_hour = D2(11);
    tm->tm_min = D2(14);
    tm->tm_sec = D2(17);
#undef D2
    return true;
}

/*
 * Days from 1970-01-01 to a proleptic Gregorian date (month 1-12; the day
 * may run past the month, as timegm allows): H. Hinnant's days_from_civil,
 * a few dozen instructions where timegm takes ~600 (issue 14: a row's age).
 */
static int64_t days_from_civil(int64_t y, int m, int64_t d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

int64_t time_parse_rfc3339(const char *s)
{
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    int ms = 0, n = 19;
    if (s == NULL)
        return -1;
    if (!canonical_time(s, &tm) &&
        sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
               &tm.tm_min, &tm.tm_sec, &n) != 6)
        return -1;
    const char *p = s + n;
    if (*p == '.') {
        int digits = 0;
        for (p++; *p >= '0' && *p <= '9'; p++, digits++)
            if (digits < 3)
                ms = ms * 10 + (*p - '0');
        for (; digits < 3; digits++)
            ms *= 10;
    }
    long offset = 0;
    if (*p == '+' || *p == '-') {
        int hh, mm;
        if (sscanf(p + 1, "%2d:%2d", &hh, &mm) != 2)
            return -1;
        offset = (hh * 60L + mm) * 60L * (*p == '-' ? -1 : 1);
    } else if (*p != 'Z' && *p != 'z') {
        return -1;
    }
    int64_t t;
    if (tm.tm_mon >= 1 && tm.tm_mon <= 12) {
        t = days_from_civil(tm.tm_year, tm.tm_mon, tm.tm_mday) * 86400 + tm.tm_hour * 3600L +
            tm.tm_min * 60L + tm.tm_sec;
    } else { /* a month out of range: timegm's own normalization */
        tm.tm_year -= 1900;
        tm.tm_mon -= 1;
        t = (int64_t)timegm(&tm);
    }
    return (t - offset) * 1000 + ms;
}

void time_age(int64_t ms, char *buf, size_t size)
{
    int64_t s = ms / 1000;
    if (s < 0)
        s = 0;
    int64_t v;
    char unit;
    if (s < 60)
        v = s, unit = 's';
    else if (s < 3600)
        v = s / 60, unit = 'm';
    else if (s < 86400)
        v = s / 3600, unit = 'h';
    else if (s < 365 * 86400)
        v = s / 86400, unit = 'd';
    else
        v = s / (365 * 86400), unit = 'y';
    /* digits by hand, cut to size as snprintf would: one per row of a 50,000-job list */
    char text[24];
    size_t n = sizeof text - 1;
    text[n] = '\0';
    text[--n] = unit;
    do
        text[--n] = (char)('0' + v % 10);
    while ((v /= 10) != 0);
    if (size == 0)
        return;
    size_t len = sizeof text - 1 - n;
    if (len > size - 1)
        len = size - 1;
    memcpy(buf, text + n, len);
    buf[len] = '\0';
}
