/*
 * fault: the fault-tolerance policy (ENGINE.md §Faults) as a pure function.
 *
 * When a worker exits non-zero or dies, trainjobd asks fault_decide what to
 * do: match the exit code (a signal death counts as 128 + signal) against the
 * job's rules in order, first match wins; no rules or no match means
 * RESTART_JOB; the action happens only while restarts remain (backoff_limit
 * -1 = forever, 0 = never), otherwise the job fails. No I/O: the engine
 * applies the decision and records its text as an event; the Slurm
 * supervisor's script (api/slurm_script) renders the same rules with the
 * same words from these helpers.
 */
#ifndef API_FAULT_H
#define API_FAULT_H

#include <stdbool.h>

#include "api/jobspec.h"

struct strbuf;

enum fault_outcome {
    FAULT_RESTART_JOB, /* stop every worker, start the job again (state RESTARTING) */
    FAULT_RESTART_POD, /* restart only the failed worker */
    FAULT_FAIL_JOB,    /* the job ends FAILED */
};

struct fault_decision {
    enum fault_outcome outcome;
    enum ft_action action;   /* what the matching rule (or the default) asked for */
    int rule;                /* index of the matching rule, or -1 for the platform default */
    bool mark_node;          /* mark the failed worker's node unschedulable for this job */
    bool limit_reached;      /* the action was a restart, but no restarts remain */
    int restarts_used_after; /* restarts used once this decision is applied */
    char text[256];          /* the event: rule, action, restarts used / limit */
};

/* The exit code a shell reports for a process: status, or 128 + signal. */
int fault_exit_code(int wait_status);
/* exitcode_meaning (api/exitcodes.h), under the name the engine has always called. */
const char *fault_exit_meaning(int exit_code);

/* The backoff_limit fault_decide counts with: -1 (forever) or more; 0 when absent or below -1. */
int fault_backoff_limit(const struct fault_tolerance *ft);
/* Does rule name exit codes (else it catches any)? */
bool fault_rule_has_codes(const struct ft_rule *rule);
/* "RESTART_POD", "FAIL_JOB", "RESTART_JOB" (also for UNSPECIFIED). */
const char *fault_action_name(enum ft_action action);
/* Appends rule's exit codes as decisions quote them (ends trimmed, long lists cut), or "any". */
void fault_add_rule_codes(struct strbuf *sb, const struct ft_rule *rule);

/*
 * Decides what to do when `worker` exits with exit_code (1..255) after
 * restarts_used restarts of this job. ft is the job's fault_tolerance; NULL
 * or an absent section is the platform default (no rules, backoff_limit 0:
 * the job fails). Exit code 0 is not a failure and callers must not pass it;
 * if they do it is matched like any code (no rule lists 0, so a rule with
 * exit codes never catches it). A rule with an unparsable list never
 * matches. mark_node is set only when the job restarts (marking a node for a
 * failing job changes nothing) and the matching rule lists exit codes. In
 * text, rules are numbered from 1 as in the form; rule is an index from 0.
 */
void fault_decide(const struct fault_tolerance *ft, int restarts_used, const char *worker,
                  int exit_code, struct fault_decision *out);

/*
 * The crash-loop back-off (as Kubernetes' CrashLoopBackOff): the delay before
 * restart number crash_loops of a loop of quick failures. The first restart
 * is immediate, the second waits initial_ms, and each next one twice the
 * last, up to max_ms. A run of reset_after_ms or longer ends the loop: the
 * caller counts crash_loops from 1 again (fault_crash_loops).
 */
long long fault_backoff_ms(int crash_loops, long long initial_ms, long long max_ms);
/* crash_loops after a failure: 1 after a stable run (ran_ms >= reset_after_ms), else one more. */
int fault_crash_loops(int crash_loops, long long ran_ms, long long reset_after_ms);

#endif
