#!/bin/sh
# Runs every test trainjob has and prints one summary line with the counts:
#   cmocka unit tests    $BUILD/tests/test_*  (one binary per module)
#   shell tests          tests/*.test.sh      (the CLI and the tree, as a user runs them)
#   fuzz seed replay     $BUILD/fuzz-replay/* over tests/fuzz/seeds/*
# usage: tests/run-tests.sh BUILD_DIR
#   TEST_JOBS=N         at most N at once (default below)
#   TEST_ONLY='PATTERN…' only the tests whose names match (test_slurm, slurm_*, fuzz_yaml)
#
# Independent tests run side by side, each with its output captured to a log
# of its own; the results print whole, in the order above, whatever order
# they end in (each once those before it have ended): `ok   NAME (P
# passed)`, or the test's whole log and
# `FAIL NAME (P passed, F failed)`. Then the slowest tests with their wall
# times, then the one summary line `tests: N passed, M failed`.
#
# The slowest start first, so the run does not end waiting on one that
# started late: by the wall times of the last run with this BUILD_DIR
# (BUILD_DIR/test-times), else the known slow ones (Slurm clusters, scale,
# sandbox, the full-screen suites). A shell test whose head has the line
#   # test: serial (why)
# runs alone, before the others. Each test runs in a session of its own: on
# INT or TERM the runner sends TERM to every test still running (their
# lib.sh turns it into an exit, so their EXIT traps stop what they
# started), waits for them, and exits.
set -u
build=${1:-build}
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 2
export TRAINJOB_BIN="$top/$build/trainjob"
export TRAINJOB_TOP="$top"
export TRAINJOBD_BIN="$top/$build/trainjobd"
export TRAINJOB_SHIM="$top/$build/trainjob-shim"
# Every kept scheduling pass is checked against a pass over every job (engine/schedpass.c).
export TRAINJOBD_SCHED_VERIFY=1
# Leaks inside system libraries (each one explained there) do not fail an ASan run.
export LSAN_OPTIONS="suppressions=$top/tests/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"

# How many tests run at once. Most of a shell suite's wall time is waiting —
# engines and Slurm clusters starting, polls, tmux redraws, sleeps — not CPU,
# so three times the cores plus one keeps the cores busy without starving a
# test that does compute (on 2 cores: 7; a full run of 4,195 checks took
# 3 min 20 s of wall against 4 min 17 s at 5 at once, with about a third of
# the two cores' time in use). TEST_JOBS=1 runs them one after another.
jobs=${TEST_JOBS:-}
if [ -z "$jobs" ]; then
    cores=$(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)
    jobs=$((3 * cores + 1))
fi
case $jobs in '' | *[!0-9]* | 0)
    echo "run-tests: TEST_JOBS must be a whole number from 1, not '$jobs'" >&2
    exit 2
    ;;
esac

# The known slow ones, slowest first (as measured on 2 cores), for a first
# run without $times: they start before the others, in this order.
slow_first='conformance deb install workers k8s_render scale slurm_ops slurm slurm_parity slurm_supervisor
monitor state test_slurm slurm_qos slurm_loop wizard shares client_bounds launch live
metrics_pane sched slurm_* wizard* logs metrics engine'
times="$build/test-times"

run=$(mktemp -d) || exit 2
running="" # the indexes of the tests started and not yet collected

# Each test is index i with kind_i (unit, shell, fuzz), name_i and path_i.
n=0
add() {
    if [ -n "${TEST_ONLY:-}" ]; then
        _pat=none
        set -f # patterns, matched against names, not files
        for _pat in $TEST_ONLY; do
            # shellcheck disable=SC2254 # TEST_ONLY holds patterns
            case $2 in $_pat) _pat="" && break ;; esac
        done
        set +f
        [ -z "$_pat" ] || return 0
    fi
    n=$((n + 1))
    eval "kind_$n=\$1 name_$n=\$2 path_$n=\$3"
}
for t in "$build"/tests/test_*; do
    [ -x "$t" ] || continue
    case "$t" in *.o | *.d) continue ;; esac
    add unit "$(basename "$t")" "$t"
done
for t in tests/*.test.sh; do
    [ -f "$t" ] || continue
    add shell "$(basename "$t" .test.sh)" "$t"
done
for r in "$build"/fuzz-replay/fuzz_*; do
    [ -x "$r" ] || continue
    add fuzz "$(basename "$r")" "$r"
done

# start I : runs test I in the background in a session of its own (setsid:
# its own process group, which the trap below can signal whole), stdin
# closed, output to $run/I.log; when it ends, $run/I.done holds its exit
# status and wall time in ms.
start() {
    _k="" _p="" _nm=""
    eval "_k=\$kind_$1 _p=\$path_$1 _nm=\$name_$1"
    (
        case $_k in
        unit) set -- "$1" "$_p" ;;
        shell) set -- "$1" sh "$_p" ;;
        fuzz) set -- "$1" "$_p" "tests/fuzz/seeds/${_nm#fuzz_}" ;;
        esac
        _i=$1
        shift
        t0=$(date +%s%N)
        # A simple command, so $! is setsid's pid, which becomes the test's
        # (not a group leader, setsid does not fork) and its process group.
        # A background job starts with INT and QUIT ignored, which everything
        # it runs would inherit (a test's `kill -INT` would do nothing): env
        # gives them back their default, as a test run in the foreground has.
        setsid env --default-signal=INT,QUIT "$@" </dev/null >"$run/$_i.log" 2>&1 &
        echo $! >"$run/$_i.pid"
        wait $!
        rc=$?
        t1=$(date +%s%N)
        echo "$rc $(((t1 - t0) / 1000000))" >"$run/$_i.tmp"
        mv "$run/$_i.tmp" "$run/$_i.done"
    ) &
    running="$running $1"
}

# stop_all : TERM to every running test's process group, then waits for them
# (their cleanups stop engines, clusters and tmux servers by pid).
stop_all() {
    trap '' INT TERM
    for _s in $running; do
        _w=0 # a test just started may not have written its pid yet
        while [ ! -s "$run/$_s.pid" ] && [ ! -e "$run/$_s.done" ] && [ $_w -lt 20 ]; do
            sleep 0.1
            _w=$((_w + 1))
        done
        [ -s "$run/$_s.pid" ] && kill -TERM "-$(cat "$run/$_s.pid")" 2>/dev/null
    done
    # Not `wait`: a ^C also ends the wrappers, which are not the tests. Up to
    # a minute for their cleanups (a Slurm cluster takes ~15 s to stop), then KILL.
    _w=0
    for _s in $running; do
        [ -s "$run/$_s.pid" ] || continue
        _pid=$(cat "$run/$_s.pid")
        while kill -0 "$_pid" 2>/dev/null && [ $_w -lt 600 ]; do
            sleep 0.1
            _w=$((_w + 1))
        done
        kill -KILL "-$_pid" 2>/dev/null
    done
    rm -rf "$run"
    echo "tests: interrupted" >&2
    exit 130
}
trap stop_all INT TERM
trap 'rm -rf "$run"' EXIT

# reap : drops the tests that ended from $running; their count in $busy.
reap() {
    _still=""
    busy=0
    for _r in $running; do
        if [ -e "$run/$_r.done" ]; then continue; fi
        _still="$_still $_r"
        busy=$((busy + 1))
    done
    running=$_still
}

# The start order: the slowest first (last run's ms, else just under 2e9
# for a known slow one, by its place in the list, and 1e9 for any other
# not timed yet), then the listing order.
: >"$run/order"
: >"$run/serial"
i=1
while [ $i -le $n ]; do
    eval "_nm=\$name_$i _k=\$kind_$i _p=\$path_$i"
    if [ "$_k" = shell ] && head -n 30 "$_p" | grep -q '^# test: serial'; then
        echo "$i" >>"$run/serial"
    else
        w=""
        [ -f "$times" ] && w=$(awk -v t="$_nm" '$2 == t { print $1; exit }' "$times")
        if [ -z "$w" ]; then
            w=1000000000 _rank=2000000000
            set -f
            for pat in $slow_first; do
                _rank=$((_rank - 1))
                # shellcheck disable=SC2254 # the list holds patterns
                case $_nm in $pat) w=$_rank && break ;; esac
            done
            set +f
        fi
        echo "$w $i" >>"$run/order"
    fi
    i=$((i + 1))
done

# flush : prints the results of the tests that ended, in the listing order,
# as far as every test before them has ended too.
passed=0
failed=0
failed_names=""
shown=1
: >"$run/walls"
flush() {
    while [ $shown -le $n ] && [ -f "$run/$shown.done" ]; do
        show "$shown"
        shown=$((shown + 1))
    done
}
# show I : test I's result line (its whole log before it when it failed); counts it.
show() {
    eval "_nm=\$name_$1 _k=\$kind_$1"
    log="$run/$1.log"
    read -r rc ms <"$run/$1.done"
    echo "$ms $_nm" >>"$run/walls"
    case $_k in
    unit)
        p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -n 1)
        f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -n 1)
        ;;
    shell)
        p=$(grep -c '^PASS ' "$log")
        f=$(grep -c '^FAIL ' "$log")
        ;;
    fuzz)
        p=1 f=0
        [ "$rc" -eq 0 ] || p=0
        ;;
    esac
    p=${p:-0}
    f=${f:-0}
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi # crashed before its summary
    passed=$((passed + p))
    failed=$((failed + f))
    if [ "$f" -ne 0 ]; then
        cat "$log"
        failed_names="$failed_names $_nm"
        if [ "$_k" = fuzz ]; then echo "FAIL $_nm replay"; else
            echo "FAIL $_nm ($p passed, $f failed)"
        fi
    elif [ "$_k" = fuzz ]; then
        echo "ok   $_nm replay ($(ls "tests/fuzz/seeds/${_nm#fuzz_}" | wc -l) seeds)"
    else
        echo "ok   $_nm ($p passed)"
    fi
}
# settle : until fewer than $1 tests run, printing what ended meanwhile
settle() {
    while reap && [ "$busy" -ge "$1" ]; do
        flush
        sleep 0.2
    done
    flush
}

# The serial ones first, each alone; then the rest, up to $jobs at once.
for i in $(cat "$run/serial"); do
    start "$i"
    settle 1
done
for i in $(sort -s -k1,1nr "$run/order" | cut -d' ' -f2); do
    settle "$jobs"
    start "$i"
done
settle 1
wait
flush

# The next run starts the slowest first; the slowest are printed.
# A run of some (TEST_ONLY) keeps the others' times from before.
[ -f "$times" ] || : >"$times"
awk 'NR == FNR { seen[$2] = 1; print; next } !($2 in seen)' "$run/walls" "$times" |
    sort -k1,1nr >"$times.tmp" && mv "$times.tmp" "$times"
echo "slowest ($jobs at once):$(sort -k1,1nr "$run/walls" | head -n 6 |
    awk '{ printf "%s %s %.0f s", (NR > 1 ? "," : ""), $2, $1 / 1000 }')"
if [ "$failed" -ne 0 ]; then
    echo "failing:$failed_names"
fi
echo "tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
