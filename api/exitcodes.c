/*
 * exitcodes: the exit-code lists of fault-tolerance rules (FORM.md,
 * "Exit-code grammar"). Owns nothing but a 256-bit set type: parsing text into
 * a set with a positioned error, the canonical text of a set, set algebra, and
 * the check that reports which codes of a rule an earlier rule catches first.
 * Called by the job-spec validator and the form's exit-code field. Also what
 * an exit code means (137: killed), for the engine's fault events and the
 * TUI's workers pane alike.
 */
#include "api/exitcodes.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "util/strbuf.h"

/* Longest run of digits echoed back in a message; longer ones are cut. */
#define ECHO_DIGITS 24

void exitcodes_clear(struct exitcode_set *set)
{
    memset(set, 0, sizeof *set);
}

void exitcodes_add(struct exitcode_set *set, int code)
{
    if (code < 1 || code > 255)
        return;
    set->bits[code / 64] |= UINT64_C(1) << (code % 64);
}

void exitcodes_add_range(struct exitcode_set *set, int lo, int hi)
{
    if (lo < 1)
        lo = 1;
    if (hi > 255)
        hi = 255;
    for (int c = lo; c <= hi; c++)
        exitcodes_add(set, c);
}

bool exitcodes_has(const struct exitcode_set *set, int code)
{
    if (code < 1 || code > 255)
        return false;
    return (set->bits[code / 64] >> (code % 64)) & 1;
}

bool exitcodes_empty(const struct exitcode_set *set)
{
    return (set->bits[0] | set->bits[1] | set->bits[2] | set->bits[3]) == 0;
}

size_t exitcodes_count(const struct exitcode_set *set)
{
    size_t n = 0;
    for (size_t w = 0; w < 4; w++)
        for (uint64_t b = set->bits[w]; b != 0; b &= b - 1)
            n++;
    return n;
}

void exitcodes_intersect(struct exitcode_set *out, const struct exitcode_set *a,
                         const struct exitcode_set *b)
{
    for (size_t w = 0; w < 4; w++)
        out->bits[w] = a->bits[w] & b->bits[w];
}

void exitcodes_union(struct exitcode_set *out, const struct exitcode_set *a,
                     const struct exitcode_set *b)
{
    for (size_t w = 0; w < 4; w++)
        out->bits[w] = a->bits[w] | b->bits[w];
}

void exitcodes_all(struct exitcode_set *set)
{
    set->bits[0] = ~UINT64_C(0) << 1; /* code 0 is not an exit code here */
    set->bits[1] = set->bits[2] = set->bits[3] = ~UINT64_C(0);
}

/* The parser's cursor: the input, where we are, and where the error goes. */
struct parser {
    const char *s;
    size_t pos;
    struct exitcodes_error *err;
};

static int fail(struct parser *p, size_t offset, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Records the first error at offset and returns -1. */
static int fail(struct parser *p, size_t offset, const char *fmt, ...)
{
    if (p->err != NULL) {
        va_list ap;
        va_start(ap, fmt);
        p->err->offset = offset;
        vsnprintf(p->err->message, sizeof p->err->message, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static void skip_blanks(struct parser *p)
{
    while (p->s[p->pos] == ' ' || p->s[p->pos] == '\t')
        p->pos++;
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/*
 * Reads one code at the cursor into *code. Digits are counted without ever
 * multiplying past 255, so an arbitrarily long number cannot overflow.
 */
static int parse_code(struct parser *p, int *code)
{
    size_t start = p->pos;
    const char *s = p->s;

    if (!is_digit(s[start])) {
        if (s[start] == ',' || s[start] == '\0')
            return fail(p, start, "empty item");
        return fail(p, start, "expected a number");
    }
    int value = 0;
    size_t end = start;
    while (is_digit(s[end])) {
        if (value <= 255)
            value = value * 10 + (s[end] - '0');
        end++;
    }
    size_t ndigits = end - start;
    if (s[start] == '0' && ndigits > 1)
        return fail(p, start, "leading zero");
    if (value < 1 || value > 255) {
        if (ndigits > ECHO_DIGITS)
            return fail(p, start, "%.*s... is out of range 1-255", ECHO_DIGITS, s + start);
        return fail(p, start, "%.*s is out of range 1-255", (int)ndigits, s + start);
    }
    p->pos = end;
    *code = value;
    return 0;
}

/* item := code | code "-" code, with blanks around the item and the dash. */
static int parse_item(struct parser *p, struct exitcode_set *set)
{
    skip_blanks(p);
    size_t start = p->pos;
    int lo, hi;

    if (parse_code(p, &lo) != 0)
        return -1;
    skip_blanks(p);
    if (p->s[p->pos] != '-') {
        exitcodes_add(set, lo);
        return 0;
    }
    p->pos++;
    skip_blanks(p);
    if (!is_digit(p->s[p->pos]))
        return fail(p, p->pos, "expected a number");
    if (parse_code(p, &hi) != 0)
        return -1;
    if (hi < lo)
        return fail(p, start, "range %d-%d is reversed", lo, hi);
    exitcodes_add_range(set, lo, hi);
    skip_blanks(p);
    return 0;
}

int exitcodes_parse(const char *s, struct exitcode_set *set, struct exitcodes_error *err)
{
    struct parser p = {s, 0, err};
    struct exitcode_set result;

    exitcodes_clear(&result);
    if (strnlen(s, EXITCODES_MAX_LEN + 1) > EXITCODES_MAX_LEN)
        return fail(&p, EXITCODES_MAX_LEN, "list longer than %d characters", EXITCODES_MAX_LEN);
    skip_blanks(&p);
    if (s[p.pos] == '\0')
        return fail(&p, 0, "empty list");
    p.pos = 0;
    for (;;) {
        if (parse_item(&p, &result) != 0)
            return -1;
        if (s[p.pos] == '\0')
            break;
        if (s[p.pos] != ',')
            return fail(&p, p.pos, "expected \",\" between items");
        p.pos++;
    }
    *set = result;
    return 0;
}

void exitcodes_format(const struct exitcode_set *set, struct strbuf *out)
{
    bool first = true;
    int c = 1;

    while (c <= 255) {
        if (!exitcodes_has(set, c)) {
            c++;
            continue;
        }
        int end = c;
        while (end < 255 && exitcodes_has(set, end + 1))
            end++;
        if (!first)
            strbuf_addc(out, ',');
        if (end > c)
            strbuf_addf(out, "%d-%d", c, end);
        else
            strbuf_addf(out, "%d", c);
        first = false;
        c = end + 1;
    }
}

static bool is_subset(const struct exitcode_set *a, const struct exitcode_set *b)
{
    for (size_t w = 0; w < 4; w++)
        if ((a->bits[w] & ~b->bits[w]) != 0)
            return false;
    return true;
}

/*
 * For each rule i and each earlier rule j, reports the codes of i that j is
 * the first to catch: (rules[i] ∩ rules[j]) minus everything before j.
 */
void exitcodes_shadowing(const struct exitcode_set *rules, size_t n, exitcodes_shadow_fn fn,
                         void *ctx)
{
    for (size_t i = 1; i < n; i++) {
        struct exitcode_set before_i;
        exitcodes_clear(&before_i);
        for (size_t j = 0; j < i; j++)
            exitcodes_union(&before_i, &before_i, &rules[j]);
        bool whole = is_subset(&rules[i], &before_i);

        struct exitcode_set before_j;
        exitcodes_clear(&before_j);
        for (size_t j = 0; j < i; j++) {
            struct exitcode_set overlap;
            exitcodes_intersect(&overlap, &rules[i], &rules[j]);
            for (size_t w = 0; w < 4; w++)
                overlap.bits[w] &= ~before_j.bits[w];
            if (!exitcodes_empty(&overlap))
                fn(ctx, i, j, &overlap, whole);
            exitcodes_union(&before_j, &before_j, &rules[j]);
        }
    }
}

/*
 * The meanings of 128 + n, indexed by the signal number n. The numbers are
 * Linux's: workers run on Linux (trainjobd, Slurm nodes, ACP) wherever the
 * client that reads their exit codes runs. api/fault.c asserts that the
 * engine's own host numbers signals this way.
 */
static const char *const signal_meaning[] = {
    [1] = "killed by signal 1 (SIGHUP)",
    [2] = "killed by signal 2 (SIGINT)",
    [3] = "killed by signal 3 (SIGQUIT)",
    [4] = "killed by signal 4 (SIGILL)",
    [5] = "killed by signal 5 (SIGTRAP)",
    [6] = "aborted (SIGABRT)",
    [7] = "bus error (SIGBUS)",
    [8] = "floating-point exception (SIGFPE)",
    [9] = "killed (SIGKILL/OOM)",
    [10] = "killed by signal 10 (SIGUSR1)",
    [11] = "segfault (SIGSEGV)",
    [12] = "killed by signal 12 (SIGUSR2)",
    [13] = "broken pipe (SIGPIPE)",
    [14] = "killed by signal 14 (SIGALRM)",
    [15] = "terminated (SIGTERM)",
    [16] = "killed by signal 16 (SIGSTKFLT)",
    [17] = "killed by signal 17 (SIGCHLD)",
    [18] = "killed by signal 18 (SIGCONT)",
    [19] = "killed by signal 19 (SIGSTOP)",
    [20] = "killed by signal 20 (SIGTSTP)",
    [21] = "killed by signal 21 (SIGTTIN)",
    [22] = "killed by signal 22 (SIGTTOU)",
    [23] = "killed by signal 23 (SIGURG)",
    [24] = "killed by signal 24 (SIGXCPU)",
    [25] = "killed by signal 25 (SIGXFSZ)",
    [26] = "killed by signal 26 (SIGVTALRM)",
    [27] = "killed by signal 27 (SIGPROF)",
    [28] = "killed by signal 28 (SIGWINCH)",
    [29] = "killed by signal 29 (SIGIO)",
    [30] = "killed by signal 30 (SIGPWR)",
    [31] = "killed by signal 31 (SIGSYS)",
};

const char *exitcode_meaning(int exit_code)
{
    switch (exit_code) {
    case 1:
        return "general error";
    case 2:
        return "misuse of shell builtin";
    case 126:
        return "command not executable";
    case 127:
        return "command not found";
    default:
        break;
    }
    int sig = exit_code - 128;
    if (sig > 0 && (size_t)sig < sizeof signal_meaning / sizeof signal_meaning[0])
        return signal_meaning[sig];
    return NULL;
}
