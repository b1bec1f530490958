/*
 * jobfmt: a job's facts as the screens write them; see jobfmt.h.
 */
#include "tui/jobfmt.h"

#include <stdio.h>
#include <string.h>

#include "util/strbuf.h"
#include "util/timefmt.h"
#include "util/utf8.h"

enum theme_role jobfmt_state_role(enum job_state s)
{
    switch (s) {
    case JOB_STATE_UNSPECIFIED:
    case JOB_STATE_WAITING:
    case JOB_STATE_INIT:
    case JOB_STATE_QUEUEING:
        return THEME_ROLE_STATE_QUEUEING;
    case JOB_STATE_CREATING:
    case JOB_STATE_STARTING:
        return THEME_ROLE_STATE_STARTING;
    case JOB_STATE_RUNNING:
        return THEME_ROLE_STATE_RUNNING;
    case JOB_STATE_RESTARTING:
    case JOB_STATE_RECOVERING:
        return THEME_ROLE_STATE_RESTARTING;
    case JOB_STATE_SUSPENDING:
        return THEME_ROLE_STATE_SUSPENDING;
    case JOB_STATE_SUSPENDED:
        return THEME_ROLE_STATE_SUSPENDED;
    case JOB_STATE_SUCCEEDED:
        return THEME_ROLE_STATE_SUCCEEDED;
    case JOB_STATE_FAILED:
        return THEME_ROLE_STATE_FAILED;
    case JOB_STATE_DELETING:
    case JOB_STATE_DELETED:
        return THEME_ROLE_STATE_DELETING;
    }
    return THEME_ROLE_STATE_QUEUEING;
}

void jobfmt_other(const char *other, bool utf8, char *buf, size_t size)
{
    struct strbuf sb = STRBUF_INIT;
    utf8_sanitize(&sb, other, strlen(other), 0);
    const char *s = strbuf_str(&sb);
    size_t i = 0, width = 0, before_mark = 0; /* before_mark: what fits beside the "…" */
    while (i < sb.len) {
        uint32_t cp;
        size_t k = utf8_decode(s + i, sb.len - i, &cp);
        int w = utf8_cpwidth(cp);
        width += w > 0 ? (size_t)w : 0;
        if (width > JOBFMT_OTHER_WIDTH)
            break;
        i += k;
        if (width <= JOBFMT_OTHER_WIDTH - 1)
            before_mark = i;
    }
    if (i < sb.len)
        snprintf(buf, size, "%.*s%s", (int)before_mark, s, utf8 ? "…" : "~");
    else
        snprintf(buf, size, "%s", s);
    strbuf_free(&sb);
}

void jobfmt_state(enum job_state s, const char *other, bool utf8, char *buf, size_t size)
{
    if (other && *other) {
        char word[4 * JOBFMT_OTHER_WIDTH + 8];
        jobfmt_other(other, utf8, word, sizeof word);
        snprintf(buf, size, "? %s", word);
        return;
    }
    snprintf(buf, size, "%s %s", theme_state_icon(jobfmt_state_role(s), utf8),
             s == JOB_STATE_UNSPECIFIED ? "-" : enum_name(&job_state_names, (int)s));
}

void jobfmt_age(int64_t since_ms, int64_t now_ms, char *buf, size_t size)
{
    if (since_ms < 0) {
        snprintf(buf, size, "-");
        return;
    }
    time_age(now_ms > since_ms ? now_ms - since_ms : 0, buf, size);
}

int64_t jobfmt_duration_ms(int64_t started_ms, int64_t ended_ms, int64_t now_ms)
{
    if (started_ms < 0 || ended_ms < -1) /* never started, or ended at a time not told */
        return -1;
    int64_t end = ended_ms >= 0 ? ended_ms : now_ms;
    return end > started_ms ? end - started_ms : 0;
}

void jobfmt_duration(int64_t started_ms, int64_t ended_ms, int64_t now_ms, char *buf, size_t size)
{
    int64_t d = jobfmt_duration_ms(started_ms, ended_ms, now_ms);
    if (d < 0)
        snprintf(buf, size, "-");
    else
        time_age(d, buf, size);
}

void jobfmt_restarts(int32_t used, int32_t limit, bool utf8, char *buf, size_t size)
{
    char lim[16];
    if (limit < 0)
        snprintf(lim, sizeof lim, "%s", utf8 ? "∞" : "inf");
    else
        snprintf(lim, sizeof lim, "%d", (int)limit);
    if (used < 0)
        snprintf(buf, size, "-/%s", lim);
    else
        snprintf(buf, size, "%d/%s", (int)used, lim);
}
