/*
 * fault: the fault-tolerance policy of ENGINE.md §Faults as a pure function.
 *
 * trainjobd calls fault_exit_code on a worker's wait status, then
 * fault_decide with the job's fault_tolerance section and the restarts the
 * job has used so far; it applies the decision (restart the job, restart one
 * worker, or fail the job) and records decision.text as an event. This file
 * owns no state: the rule lists are parsed on each call (at most 20 rules of
 * at most 1024 characters, once per worker death).
 */
#include "api/fault.h"

#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <sys/wait.h>

#include "api/exitcodes.h"
#include "util/strbuf.h"

/*
 * exitcode_meaning names 128 + n by Linux's signal numbers; the exit codes
 * the engine reports are 128 + this host's numbers (fault_exit_code), so a
 * port to a system that numbers signals differently must not print wrong names.
 */
_Static_assert(SIGHUP == 1 && SIGINT == 2 && SIGQUIT == 3 && SIGILL == 4 && SIGTRAP == 5 &&
                   SIGABRT == 6 && SIGBUS == 7 && SIGFPE == 8 && SIGKILL == 9 && SIGUSR1 == 10 &&
                   SIGSEGV == 11 && SIGUSR2 == 12 && SIGPIPE == 13 && SIGALRM == 14 &&
                   SIGTERM == 15 && SIGCHLD == 17 && SIGCONT == 18 && SIGSTOP == 19 &&
                   SIGTSTP == 20 && SIGTTIN == 21 && SIGTTOU == 22 && SIGURG == 23 &&
                   SIGXCPU == 24 && SIGXFSZ == 25 && SIGVTALRM == 26 && SIGPROF == 27 &&
                   SIGWINCH == 28 && SIGIO == 29 && SIGSYS == 31,
               "exitcode_meaning assumes Linux signal numbers");

/* Longest exit-code list quoted in an event; longer lists end in ",…". */
#define SHOWN_CODES_MAX 40

int fault_exit_code(int wait_status)
{
    if (WIFEXITED(wait_status))
        return WEXITSTATUS(wait_status);
    if (WIFSIGNALED(wait_status))
        return 128 + WTERMSIG(wait_status);
    return 255;
}

/* Kept for the engine's callers; the table lives in api/exitcodes, shared with the TUI. */
const char *fault_exit_meaning(int exit_code)
{
    return exitcode_meaning(exit_code);
}

bool fault_rule_has_codes(const struct ft_rule *rule)
{
    return rule->exit_codes != NULL && rule->exit_codes[0] != '\0';
}

/* Whether rule catches exit_code: an empty list catches any, an unparsable one none. */
static bool rule_matches(const struct ft_rule *rule, int exit_code)
{
    struct exitcode_set set;

    if (!fault_rule_has_codes(rule))
        return true;
    if (exitcodes_parse(rule->exit_codes, &set, NULL) != 0)
        return false;
    return exitcodes_has(&set, exit_code);
}

const char *fault_action_name(enum ft_action action)
{
    switch (action) {
    case FT_ACTION_RESTART_POD:
        return "RESTART_POD";
    case FT_ACTION_FAIL_JOB:
        return "FAIL_JOB";
    default:
        return "RESTART_JOB";
    }
}

void fault_add_rule_codes(struct strbuf *sb, const struct ft_rule *rule)
{
    if (!fault_rule_has_codes(rule)) {
        strbuf_adds(sb, "any");
        return;
    }
    const char *s = rule->exit_codes;
    size_t n = strlen(s);
    while (n > 0 && (*s == ' ' || *s == '\t'))
        s++, n--;
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    if (n <= SHOWN_CODES_MAX) {
        strbuf_add(sb, s, n);
        return;
    }
    /* A parsed list holds only digits, ',', '-' and blanks: any byte is a boundary. */
    size_t cut = SHOWN_CODES_MAX;
    while (cut > 0 && s[cut] != ',')
        cut--;
    if (cut == 0)
        cut = SHOWN_CODES_MAX;
    strbuf_add(sb, s, cut);
    strbuf_adds(sb, ",…");
}

static void add_limit(struct strbuf *sb, int backoff_limit)
{
    if (backoff_limit == -1)
        strbuf_adds(sb, "unlimited");
    else
        strbuf_addf(sb, "%d", backoff_limit);
}

/* Copies s into dst (size n > 0), cutting on a UTF-8 boundary and ending in "…" when too long. */
static void copy_text(char *dst, size_t n, const char *s, size_t len)
{
    static const char ellipsis[] = "…";

    if (len < n) {
        memcpy(dst, s, len + 1);
        return;
    }
    size_t keep = n - sizeof ellipsis; /* room for the ellipsis and the NUL */
    while (keep > 0 && ((unsigned char)s[keep] & 0xC0) == 0x80)
        keep--; /* s[keep] starts the first character left out */
    memcpy(dst, s, keep);
    memcpy(dst + keep, ellipsis, sizeof ellipsis);
}

/* Writes the event a person reads: worker, exit code, the rule, what was done, restarts. */
static void describe(struct fault_decision *d, const struct fault_tolerance *ft, int backoff_limit,
                     int restarts_used, const char *worker, int exit_code)
{
    struct strbuf sb = STRBUF_INIT;
    const char *meaning = fault_exit_meaning(exit_code);

    strbuf_addf(&sb, "%s exited %d", worker, exit_code);
    if (meaning != NULL)
        strbuf_addf(&sb, " (%s)", meaning);

    if (d->rule >= 0) {
        strbuf_addf(&sb, ": rule %d (", d->rule + 1);
        fault_add_rule_codes(&sb, &ft->rules[d->rule]);
        strbuf_addf(&sb, " → %s) matched", fault_action_name(d->action));
    } else if (ft != NULL && ft->rule_count > 0) {
        strbuf_adds(&sb, ": no rule matched, default RESTART_JOB");
    } else {
        strbuf_adds(&sb, ": no rules, default RESTART_JOB");
    }

    if (d->limit_reached) {
        strbuf_addf(&sb, ", but the restart limit is reached (%d/%d); job failed", restarts_used,
                    backoff_limit);
    } else {
        if (d->outcome == FAULT_RESTART_POD)
            strbuf_addf(&sb, "; restarting %s", worker);
        else if (d->outcome == FAULT_RESTART_JOB)
            strbuf_adds(&sb, "; restarting the job");
        else
            strbuf_adds(&sb, "; job failed");
        strbuf_addf(&sb, " (restarts %d/", d->restarts_used_after);
        add_limit(&sb, backoff_limit);
        strbuf_addc(&sb, ')');
    }
    if (d->mark_node)
        strbuf_adds(&sb, "; node marked unschedulable for this job");

    copy_text(d->text, sizeof d->text, strbuf_str(&sb), sb.len);
    strbuf_free(&sb);
}

/*
 * An absent section (or ft NULL) is the platform default: no rules and
 * backoff_limit 0, so a failure fails the job. A backoff_limit below -1
 * counts as 0. A rule with action UNSPECIFIED acts as RESTART_JOB (validation
 * rejects such rules before submit). A node is marked only when the job will
 * restart: marking it for a job that is failing changes nothing.
 */
int fault_backoff_limit(const struct fault_tolerance *ft)
{
    if (ft != NULL && ft->present && ft->has_backoff_limit && ft->backoff_limit >= -1)
        return ft->backoff_limit;
    return 0;
}

void fault_decide(const struct fault_tolerance *ft, int restarts_used, const char *worker,
                  int exit_code, struct fault_decision *out)
{
    int backoff_limit = fault_backoff_limit(ft);

    if (ft != NULL && !ft->present)
        ft = NULL;
    if (restarts_used < 0)
        restarts_used = 0;
    if (worker == NULL)
        worker = "worker";

    memset(out, 0, sizeof *out);
    out->rule = -1;
    out->action = FT_ACTION_RESTART_JOB;
    for (size_t i = 0; ft != NULL && i < ft->rule_count; i++) {
        if (rule_matches(&ft->rules[i], exit_code)) {
            out->rule = (int)i;
            if (ft->rules[i].action != FT_ACTION_UNSPECIFIED)
                out->action = ft->rules[i].action;
            break;
        }
    }

    out->restarts_used_after = restarts_used;
    if (out->action == FT_ACTION_FAIL_JOB) {
        out->outcome = FAULT_FAIL_JOB;
    } else if (backoff_limit == -1 || restarts_used < backoff_limit) {
        out->outcome = out->action == FT_ACTION_RESTART_POD ? FAULT_RESTART_POD : FAULT_RESTART_JOB;
        out->restarts_used_after = restarts_used < INT_MAX ? restarts_used + 1 : INT_MAX;
        if (out->rule >= 0) {
            const struct ft_rule *rule = &ft->rules[out->rule];
            out->mark_node = fault_rule_has_codes(rule) && rule->mark_node_unschedulable;
        }
    } else {
        out->outcome = FAULT_FAIL_JOB;
        out->limit_reached = true;
    }

    describe(out, ft, backoff_limit, restarts_used, worker, exit_code);
}

long long fault_backoff_ms(int crash_loops, long long initial_ms, long long max_ms)
{
    if (crash_loops <= 1 || initial_ms <= 0)
        return 0;
    if (max_ms < initial_ms)
        max_ms = initial_ms;
    long long delay = initial_ms;
    for (int i = 2; i < crash_loops && delay < max_ms; i++)
        delay *= 2; /* stops at max_ms long before it could overflow */
    return delay < max_ms ? delay : max_ms;
}

int fault_crash_loops(int crash_loops, long long ran_ms, long long reset_after_ms)
{
    if (ran_ms >= reset_after_ms || crash_loops < 0)
        return 1;
    return crash_loops < 1000000 ? crash_loops + 1 : crash_loops;
}
