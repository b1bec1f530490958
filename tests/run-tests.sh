#!/bin/sh
# Runs every test trainjob has and prints one summary line with the counts:
#   cmocka unit tests    $BUILD/tests/test_*  (one binary per module)
#   shell tests          tests/*.test.sh      (the CLI and the tree, as a user runs them)
#   fuzz seed replay     $BUILD/fuzz-replay/* over tests/fuzz/seeds/*
# usage: tests/run-tests.sh BUILD_DIR
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

passed=0
failed=0
failed_names=""
log=$(mktemp)
trap 'rm -f "$log"' EXIT

for t in "$build"/tests/test_*; do
    [ -x "$t" ] || continue
    case "$t" in *.o | *.d) continue ;; esac
    name=$(basename "$t")
    "$t" >"$log" 2>&1
    rc=$?
    p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -n 1)
    f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -n 1)
    p=${p:-0}
    f=${f:-0}
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi # crashed before its summary
    passed=$((passed + p))
    failed=$((failed + f))
    if [ "$f" -ne 0 ]; then
        cat "$log"
        failed_names="$failed_names $name"
        echo "FAIL $name ($p passed, $f failed)"
    else
        echo "ok   $name ($p passed)"
    fi
done

for t in tests/*.test.sh; do
    [ -f "$t" ] || continue
    name=$(basename "$t" .test.sh)
    sh "$t" >"$log" 2>&1
    rc=$?
    p=$(grep -c '^PASS ' "$log")
    f=$(grep -c '^FAIL ' "$log")
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
    passed=$((passed + p))
    failed=$((failed + f))
    if [ "$f" -ne 0 ]; then
        cat "$log"
        failed_names="$failed_names $name"
        echo "FAIL $name ($p passed, $f failed)"
    else
        echo "ok   $name ($p passed)"
    fi
done

for r in "$build"/fuzz-replay/fuzz_*; do
    [ -x "$r" ] || continue
    name=$(basename "$r")
    seeds="tests/fuzz/seeds/${name#fuzz_}"
    if "$r" "$seeds" >"$log" 2>&1; then
        passed=$((passed + 1))
        echo "ok   $name replay ($(ls "$seeds" | wc -l) seeds)"
    else
        cat "$log"
        failed=$((failed + 1))
        failed_names="$failed_names $name"
        echo "FAIL $name replay"
    fi
done

if [ "$failed" -ne 0 ]; then
    echo "failing:$failed_names"
fi
echo "tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
