/*
 * test_fault: the fault-tolerance policy of ENGINE.md §Faults — every action
 * against every kind of backoff_limit, with a matching rule, no matching rule
 * and no rules; the platform default; rule order; when a node is marked;
 * exit codes of real signal deaths; exit-code meanings; the event text.
 */
// clang-format off
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
// clang-format on

#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "api/fault.h"
#include "util/utf8.h"

static struct ft_rule rule(const char *codes, enum ft_action action, bool mark)
{
    struct ft_rule r = {0};
    r.exit_codes = (char *)codes;
    r.action = action;
    r.has_mark_node_unschedulable = true;
    r.mark_node_unschedulable = mark;
    return r;
}

static struct fault_tolerance ft_with(int backoff_limit, struct ft_rule *rules, size_t n)
{
    struct fault_tolerance ft = {0};
    ft.present = true;
    ft.has_backoff_limit = true;
    ft.backoff_limit = backoff_limit;
    ft.rules = rules;
    ft.rule_count = n;
    return ft;
}

static bool is_restart(enum fault_outcome o)
{
    return o == FAULT_RESTART_JOB || o == FAULT_RESTART_POD;
}

/* The decision for one row of the matrix, with its consistency checked. */
static void check_decision(const struct fault_decision *d, int used, enum fault_outcome outcome,
                           bool limit_reached, enum ft_action action, int rule)
{
    assert_int_equal(d->outcome, outcome);
    assert_int_equal(d->limit_reached, limit_reached);
    assert_int_equal(d->action, action);
    assert_int_equal(d->rule, rule);
    assert_int_equal(d->restarts_used_after, is_restart(outcome) ? used + 1 : used);
    assert_false(d->mark_node);
    assert_true(strlen(d->text) > 0);
}

/*
 * Every action × backoff_limit -1 / 0 / N (N-1 and N used) × a matching
 * rule / a rule that does not match / no rules. Without a match the default
 * RESTART_JOB applies, whatever the rule's action.
 */
static void test_matrix(void **state)
{
    static const struct {
        enum ft_action action;
        int limit, used;
        enum fault_outcome match; /* outcome when the rule matches */
        bool match_limit;
        enum fault_outcome dflt; /* outcome of the default RESTART_JOB */
        bool dflt_limit;
    } rows[] = {
        {FT_ACTION_RESTART_JOB, -1, 0, FAULT_RESTART_JOB, false, FAULT_RESTART_JOB, false},
        {FT_ACTION_RESTART_JOB, -1, 57, FAULT_RESTART_JOB, false, FAULT_RESTART_JOB, false},
        {FT_ACTION_RESTART_JOB, 0, 0, FAULT_FAIL_JOB, true, FAULT_FAIL_JOB, true},
        {FT_ACTION_RESTART_JOB, 3, 2, FAULT_RESTART_JOB, false, FAULT_RESTART_JOB, false},
        {FT_ACTION_RESTART_JOB, 3, 3, FAULT_FAIL_JOB, true, FAULT_FAIL_JOB, true},
        {FT_ACTION_RESTART_POD, -1, 0, FAULT_RESTART_POD, false, FAULT_RESTART_JOB, false},
        {FT_ACTION_RESTART_POD, -1, 57, FAULT_RESTART_POD, false, FAULT_RESTART_JOB, false},
        {FT_ACTION_RESTART_POD, 0, 0, FAULT_FAIL_JOB, true, FAULT_FAIL_JOB, true},
        {FT_ACTION_RESTART_POD, 3, 2, FAULT_RESTART_POD, false, FAULT_RESTART_JOB, false},
        {FT_ACTION_RESTART_POD, 3, 3, FAULT_FAIL_JOB, true, FAULT_FAIL_JOB, true},
        {FT_ACTION_FAIL_JOB, -1, 0, FAULT_FAIL_JOB, false, FAULT_RESTART_JOB, false},
        {FT_ACTION_FAIL_JOB, -1, 57, FAULT_FAIL_JOB, false, FAULT_RESTART_JOB, false},
        {FT_ACTION_FAIL_JOB, 0, 0, FAULT_FAIL_JOB, false, FAULT_FAIL_JOB, true},
        {FT_ACTION_FAIL_JOB, 3, 2, FAULT_FAIL_JOB, false, FAULT_RESTART_JOB, false},
        {FT_ACTION_FAIL_JOB, 3, 3, FAULT_FAIL_JOB, false, FAULT_FAIL_JOB, true},
    };

    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        struct ft_rule rules[] = {rule("201", rows[i].action, false)};
        struct fault_tolerance with_rule = ft_with(rows[i].limit, rules, 1);
        struct fault_tolerance no_rules = ft_with(rows[i].limit, NULL, 0);
        struct fault_decision d;
        int used = rows[i].used;

        fault_decide(&with_rule, used, "worker-1", 201, &d);
        check_decision(&d, used, rows[i].match, rows[i].match_limit, rows[i].action, 0);

        fault_decide(&with_rule, used, "worker-1", 1, &d);
        check_decision(&d, used, rows[i].dflt, rows[i].dflt_limit, FT_ACTION_RESTART_JOB, -1);

        fault_decide(&no_rules, used, "worker-1", 201, &d);
        check_decision(&d, used, rows[i].dflt, rows[i].dflt_limit, FT_ACTION_RESTART_JOB, -1);
    }
}

/* No fault_tolerance section: no restarts, so the first failure fails the job. */
static void test_absent_section(void **state)
{
    struct fault_decision d;

    fault_decide(NULL, 0, "worker-0", 1, &d);
    assert_int_equal(d.outcome, FAULT_FAIL_JOB);
    assert_true(d.limit_reached);
    assert_int_equal(d.action, FT_ACTION_RESTART_JOB);
    assert_int_equal(d.rule, -1);
    assert_false(d.mark_node);
    assert_int_equal(d.restarts_used_after, 0);
    assert_string_equal(d.text, "worker-0 exited 1 (general error): no rules, default "
                                "RESTART_JOB, but the restart limit is reached (0/0); job failed");

    /* present == false: whatever the struct holds is ignored */
    struct ft_rule rules[] = {rule("1", FT_ACTION_RESTART_POD, true)};
    struct fault_tolerance absent = ft_with(5, rules, 1);
    absent.present = false;
    fault_decide(&absent, 0, "worker-0", 1, &d);
    assert_int_equal(d.outcome, FAULT_FAIL_JOB);
    assert_true(d.limit_reached);
    assert_int_equal(d.rule, -1);
    assert_false(d.mark_node);

    /* present without backoff_limit: 0 */
    struct fault_tolerance no_limit = ft_with(5, rules, 1);
    no_limit.has_backoff_limit = false;
    fault_decide(&no_limit, 0, "worker-0", 1, &d);
    assert_int_equal(d.outcome, FAULT_FAIL_JOB);
    assert_true(d.limit_reached);
    assert_int_equal(d.rule, 0);
    assert_int_equal(d.action, FT_ACTION_RESTART_POD);
    assert_false(d.mark_node);
}

/* A rule with no exit codes (NULL or "") catches every code; an unparsable one none. */
static void test_any_code_rule(void **state)
{
    static const int codes[] = {1, 2, 137, 139, 201, 255};
    struct ft_rule empty[] = {rule("", FT_ACTION_RESTART_POD, false)};
    struct ft_rule null[] = {rule(NULL, FT_ACTION_FAIL_JOB, false)};
    struct fault_tolerance ft_empty = ft_with(2, empty, 1);
    struct fault_tolerance ft_null = ft_with(2, null, 1);
    struct fault_decision d;

    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        fault_decide(&ft_empty, 0, "worker-0", codes[i], &d);
        assert_int_equal(d.rule, 0);
        assert_int_equal(d.outcome, FAULT_RESTART_POD);
        fault_decide(&ft_null, 0, "worker-0", codes[i], &d);
        assert_int_equal(d.rule, 0);
        assert_int_equal(d.outcome, FAULT_FAIL_JOB);
    }

    /* blank and malformed lists never match: the next rule decides */
    struct ft_rule bad[] = {
        rule("  ", FT_ACTION_FAIL_JOB, false),
        rule("1,,2", FT_ACTION_FAIL_JOB, false),
        rule("0-300", FT_ACTION_FAIL_JOB, false),
        rule("1-255", FT_ACTION_RESTART_POD, false),
    };
    struct fault_tolerance ft_bad = ft_with(2, bad, 4);
    fault_decide(&ft_bad, 0, "worker-0", 1, &d);
    assert_int_equal(d.rule, 3);
    assert_int_equal(d.outcome, FAULT_RESTART_POD);

    /* exit code 0 must not be passed; if it is, only an any-code rule catches it */
    fault_decide(&ft_bad, 0, "worker-0", 0, &d);
    assert_int_equal(d.rule, -1);
    assert_int_equal(d.outcome, FAULT_RESTART_JOB);
}

/* Rules are checked in order and the first match wins. */
static void test_first_match(void **state)
{
    struct ft_rule pod_first[] = {
        rule("200-205", FT_ACTION_RESTART_POD, false),
        rule("201", FT_ACTION_FAIL_JOB, false),
        rule("", FT_ACTION_FAIL_JOB, false),
    };
    struct ft_rule fail_first[] = {
        rule("201", FT_ACTION_FAIL_JOB, false),
        rule("200-205", FT_ACTION_RESTART_POD, false),
    };
    struct fault_tolerance a = ft_with(2, pod_first, 3);
    struct fault_tolerance b = ft_with(2, fail_first, 2);
    struct fault_decision d;

    fault_decide(&a, 0, "worker-0", 201, &d);
    assert_int_equal(d.rule, 0);
    assert_int_equal(d.outcome, FAULT_RESTART_POD);
    fault_decide(&a, 0, "worker-0", 206, &d);
    assert_int_equal(d.rule, 2);
    assert_int_equal(d.outcome, FAULT_FAIL_JOB);

    fault_decide(&b, 0, "worker-0", 201, &d);
    assert_int_equal(d.rule, 0);
    assert_int_equal(d.outcome, FAULT_FAIL_JOB);
    fault_decide(&b, 0, "worker-0", 202, &d);
    assert_int_equal(d.rule, 1);
    assert_int_equal(d.outcome, FAULT_RESTART_POD);
    fault_decide(&b, 0, "worker-0", 206, &d);
    assert_int_equal(d.rule, -1);
    assert_int_equal(d.outcome, FAULT_RESTART_JOB);
}

/* mark_node: only a matching rule with exit codes and the flag, and only on a restart. */
static void test_mark_node(void **state)
{
    struct ft_rule rules[] = {
        rule("137", FT_ACTION_RESTART_JOB, true), rule("139", FT_ACTION_RESTART_POD, true),
        rule("1", FT_ACTION_FAIL_JOB, true),      rule("2", FT_ACTION_RESTART_JOB, false),
        rule("", FT_ACTION_RESTART_JOB, true),
    };
    struct fault_tolerance ft = ft_with(2, rules, 5);
    struct fault_decision d;

    fault_decide(&ft, 0, "worker-0", 137, &d);
    assert_int_equal(d.outcome, FAULT_RESTART_JOB);
    assert_true(d.mark_node);
    fault_decide(&ft, 1, "worker-0", 139, &d);
    assert_int_equal(d.outcome, FAULT_RESTART_POD);
    assert_true(d.mark_node);

    /* the job fails: nothing to mark */
    fault_decide(&ft, 2, "worker-0", 137, &d);
    assert_int_equal(d.outcome, FAULT_FAIL_JOB);
    assert_true(d.limit_reached);
    assert_false(d.mark_node);
    fault_decide(&ft, 0, "worker-0", 1, &d);
    assert_int_equal(d.outcome, FAULT_FAIL_JOB);
    assert_false(d.mark_node);

    /* flag off */
    fault_decide(&ft, 0, "worker-0", 2, &d);
    assert_int_equal(d.rule, 3);
    assert_false(d.mark_node);

    /* a rule without exit codes never marks */
    fault_decide(&ft, 0, "worker-0", 42, &d);
    assert_int_equal(d.rule, 4);
    assert_int_equal(d.outcome, FAULT_RESTART_JOB);
    assert_false(d.mark_node);

    /* no match: the default never marks */
    struct fault_tolerance only_first = ft_with(2, rules, 1);
    fault_decide(&only_first, 0, "worker-0", 42, &d);
    assert_int_equal(d.rule, -1);
    assert_false(d.mark_node);
}

/* Runs a child that ends as `how` says and returns its wait status. */
static int child_status(int how)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct rlimit no_core = {0, 0};
        struct sigaction dfl;
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        setrlimit(RLIMIT_CORE, &no_core);
        if (how > 0) {
            /* the default action, even under a sanitizer that catches SIGSEGV */
            sigaction(how, &dfl, NULL);
            raise(how);
        }
        _exit(-how);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return status;
}

/* Real deaths: a signal counts as 128 + signal and matches rules by that code. */
static void test_signal_deaths(void **state)
{
    int killed = fault_exit_code(child_status(SIGKILL));
    int segv = fault_exit_code(child_status(SIGSEGV));
    int exited = fault_exit_code(child_status(-201));

    assert_int_equal(killed, 137);
    assert_int_equal(segv, 139);
    assert_int_equal(exited, 201);
    assert_int_equal(fault_exit_code(child_status(-0)), 0);

    struct ft_rule rules[] = {
        rule("137", FT_ACTION_RESTART_POD, false),
        rule("128-159", FT_ACTION_FAIL_JOB, false),
        rule("201", FT_ACTION_RESTART_JOB, false),
    };
    struct fault_tolerance ft = ft_with(-1, rules, 3);
    struct fault_decision d;

    fault_decide(&ft, 0, "worker-0", killed, &d);
    assert_int_equal(d.rule, 0);
    assert_int_equal(d.outcome, FAULT_RESTART_POD);
    fault_decide(&ft, 0, "worker-0", segv, &d);
    assert_int_equal(d.rule, 1);
    assert_int_equal(d.outcome, FAULT_FAIL_JOB);
    fault_decide(&ft, 0, "worker-0", exited, &d);
    assert_int_equal(d.rule, 2);
    assert_int_equal(d.outcome, FAULT_RESTART_JOB);
}

/* A status that is neither an exit nor a signal death (a stopped child) is 255. */
static void test_exit_code_other(void **state)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        raise(SIGSTOP);
        _exit(0);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, WUNTRACED), pid);
    assert_true(WIFSTOPPED(status));
    assert_int_equal(fault_exit_code(status), 255);
    kill(pid, SIGKILL);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_int_equal(fault_exit_code(status), 137);
}

static void test_exit_meanings(void **state)
{
    assert_null(fault_exit_meaning(0));
    assert_string_equal(fault_exit_meaning(1), "general error");
    assert_string_equal(fault_exit_meaning(2), "misuse of shell builtin");
    assert_null(fault_exit_meaning(3));
    assert_null(fault_exit_meaning(125));
    assert_string_equal(fault_exit_meaning(126), "command not executable");
    assert_string_equal(fault_exit_meaning(127), "command not found");
    assert_null(fault_exit_meaning(128));
    assert_string_equal(fault_exit_meaning(129), "killed by signal 1 (SIGHUP)");
    assert_string_equal(fault_exit_meaning(130), "killed by signal 2 (SIGINT)");
    assert_string_equal(fault_exit_meaning(134), "aborted (SIGABRT)");
    assert_string_equal(fault_exit_meaning(135), "bus error (SIGBUS)");
    assert_string_equal(fault_exit_meaning(136), "floating-point exception (SIGFPE)");
    assert_string_equal(fault_exit_meaning(137), "killed (SIGKILL/OOM)");
    assert_string_equal(fault_exit_meaning(138), "killed by signal 10 (SIGUSR1)");
    assert_string_equal(fault_exit_meaning(139), "segfault (SIGSEGV)");
    assert_string_equal(fault_exit_meaning(141), "broken pipe (SIGPIPE)");
    assert_string_equal(fault_exit_meaning(143), "terminated (SIGTERM)");
    assert_string_equal(fault_exit_meaning(159), "killed by signal 31 (SIGSYS)");
    assert_null(fault_exit_meaning(160));
    assert_null(fault_exit_meaning(201));
    assert_null(fault_exit_meaning(255));
    assert_null(fault_exit_meaning(-1));
    assert_null(fault_exit_meaning(100000));

    /* every code 129..159 names its signal */
    for (int code = 129; code <= 159; code++) {
        const char *m = fault_exit_meaning(code);
        assert_non_null(m);
        assert_non_null(strstr(m, "(SIG"));
    }
}

static void assert_text(const struct fault_tolerance *ft, int used, const char *worker, int code,
                        const char *want)
{
    struct fault_decision d;
    fault_decide(ft, used, worker, code, &d);
    assert_string_equal(d.text, want);
}

/* The event text of each kind of decision, exactly. */
static void test_event_text(void **state)
{
    struct ft_rule rules[] = {
        rule("201", FT_ACTION_RESTART_POD, false),
        rule("137", FT_ACTION_RESTART_JOB, true),
        rule(" 1, 3 ", FT_ACTION_FAIL_JOB, false),
        rule("", FT_ACTION_RESTART_JOB, false),
    };
    struct fault_tolerance two = ft_with(2, rules, 3);
    struct fault_tolerance forever = ft_with(-1, rules, 1);
    struct fault_tolerance any = ft_with(1, rules + 3, 1);

    assert_text(&two, 0, "worker-1", 201,
                "worker-1 exited 201: rule 1 (201 → RESTART_POD) matched; restarting worker-1 "
                "(restarts 1/2)");
    assert_text(&forever, 2, "worker-0", 137,
                "worker-0 exited 137 (killed (SIGKILL/OOM)): no rule matched, default "
                "RESTART_JOB; restarting the job (restarts 3/unlimited)");
    assert_text(&two, 1, "worker-1", 1,
                "worker-1 exited 1 (general error): rule 3 (1, 3 → FAIL_JOB) matched; job failed "
                "(restarts 1/2)");
    assert_text(&two, 2, "worker-0", 201,
                "worker-0 exited 201: rule 1 (201 → RESTART_POD) matched, but the restart limit "
                "is reached (2/2); job failed");
    assert_text(&two, 1, "worker-3", 137,
                "worker-3 exited 137 (killed (SIGKILL/OOM)): rule 2 (137 → RESTART_JOB) matched; "
                "restarting the job (restarts 2/2); node marked unschedulable for this job");
    assert_text(&any, 0, "worker-0", 139,
                "worker-0 exited 139 (segfault (SIGSEGV)): rule 1 (any → RESTART_JOB) matched; "
                "restarting the job (restarts 1/1)");
    assert_text(&two, 0, "worker-2", 42,
                "worker-2 exited 42: no rule matched, default RESTART_JOB; restarting the job "
                "(restarts 1/2)");
    struct fault_tolerance none = ft_with(5, NULL, 0);
    assert_text(&none, 4, "worker-0", 2,
                "worker-0 exited 2 (misuse of shell builtin): no rules, default RESTART_JOB; "
                "restarting the job (restarts 5/5)");
}

/* Long exit-code lists are cut at a comma; an over-long event ends in "…" on a UTF-8 boundary. */
static void test_event_text_bounds(void **state)
{
    struct ft_rule rules[] = {
        rule("1,3,5,7,9,11,13,15,17,19,21,23,25,27,29,31,33,35,37,39,41,43", FT_ACTION_RESTART_POD,
             false),
    };
    struct fault_tolerance ft = ft_with(2, rules, 1);

    assert_text(&ft, 0, "worker-0", 43,
                "worker-0 exited 43: rule 1 (1,3,5,7,9,11,13,15,17,19,21,23,25,27,29,…"
                " → RESTART_POD) matched; restarting worker-0 (restarts 1/2)");

    /* a worker name too long for the buffer, made of two-byte characters */
    char worker[402];
    worker[0] = 'x';
    for (size_t i = 0; i < 200; i++)
        memcpy(worker + 1 + 2 * i, "é", 2);
    worker[401] = '\0';
    for (int shift = 0; shift < 2; shift++) {
        struct fault_decision d;
        fault_decide(&ft, 0, worker + shift, 43, &d);
        size_t n = strlen(d.text);
        assert_true(n < sizeof d.text);
        assert_true(n >= sizeof d.text - 5);
        assert_true(utf8_valid(d.text, n));
        assert_string_equal(d.text + n - strlen("…"), "…");
        assert_int_equal(d.outcome, FAULT_RESTART_POD);
    }
}

/* Inputs validation would reject still give a sane decision. */
static void test_robustness(void **state)
{
    struct ft_rule rules[] = {rule("5", FT_ACTION_UNSPECIFIED, false)};
    struct fault_tolerance ft = ft_with(3, rules, 1);
    struct fault_decision d;

    /* UNSPECIFIED acts as RESTART_JOB */
    fault_decide(&ft, 0, "worker-0", 5, &d);
    assert_int_equal(d.rule, 0);
    assert_int_equal(d.action, FT_ACTION_RESTART_JOB);
    assert_int_equal(d.outcome, FAULT_RESTART_JOB);

    /* a negative restart count counts as 0 */
    fault_decide(&ft, -4, "worker-0", 5, &d);
    assert_int_equal(d.outcome, FAULT_RESTART_JOB);
    assert_int_equal(d.restarts_used_after, 1);

    /* backoff_limit below -1 never restarts */
    struct fault_tolerance low = ft_with(-7, rules, 1);
    fault_decide(&low, 0, "worker-0", 5, &d);
    assert_int_equal(d.outcome, FAULT_FAIL_JOB);
    assert_true(d.limit_reached);

    /* no worker name */
    fault_decide(&ft, 0, NULL, 5, &d);
    assert_string_equal(d.text, "worker exited 5: rule 1 (5 → RESTART_JOB) matched; restarting "
                                "the job (restarts 1/3)");

    /* the restart count never overflows */
    struct fault_tolerance forever = ft_with(-1, rules, 1);
    fault_decide(&forever, INT32_MAX, "worker-0", 5, &d);
    assert_int_equal(d.outcome, FAULT_RESTART_JOB);
    assert_int_equal(d.restarts_used_after, INT32_MAX);
}

/* CrashLoopBackOff: immediate, then 10 s doubling to 5 min, never overflowing. */
static void test_backoff_delays(void **state)
{
    (void)state;
    const long long want[] = {0, 0, 10000, 20000, 40000, 80000, 160000, 300000, 300000};
    for (int n = 0; n < (int)(sizeof want / sizeof want[0]); n++)
        assert_int_equal(fault_backoff_ms(n, 10000, 300000), want[n]);
    assert_int_equal(fault_backoff_ms(INT32_MAX, 10000, 300000), 300000);
    assert_int_equal(fault_backoff_ms(-5, 10000, 300000), 0);
    /* small settings, as the tests use them */
    assert_int_equal(fault_backoff_ms(3, 100, 250), 200);
    assert_int_equal(fault_backoff_ms(4, 100, 250), 250);
    /* a max below the first delay is the first delay */
    assert_int_equal(fault_backoff_ms(5, 100, 10), 100);
    assert_int_equal(fault_backoff_ms(5, 0, 300000), 0);
}

/* A stable run resets the loop; quick failures grow it, without overflow. */
static void test_crash_loops(void **state)
{
    (void)state;
    assert_int_equal(fault_crash_loops(0, 5, 600000), 1);
    assert_int_equal(fault_crash_loops(1, 5, 600000), 2);
    assert_int_equal(fault_crash_loops(7, 599999, 600000), 8);
    assert_int_equal(fault_crash_loops(7, 600000, 600000), 1);
    assert_int_equal(fault_crash_loops(INT32_MAX, 5, 600000), INT32_MAX);
    assert_int_equal(fault_crash_loops(-3, 5, 600000), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_backoff_delays),  cmocka_unit_test(test_crash_loops),
        cmocka_unit_test(test_matrix),          cmocka_unit_test(test_absent_section),
        cmocka_unit_test(test_any_code_rule),   cmocka_unit_test(test_first_match),
        cmocka_unit_test(test_mark_node),       cmocka_unit_test(test_signal_deaths),
        cmocka_unit_test(test_exit_code_other), cmocka_unit_test(test_exit_meanings),
        cmocka_unit_test(test_event_text),      cmocka_unit_test(test_event_text_bounds),
        cmocka_unit_test(test_robustness),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
