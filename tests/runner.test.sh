# The test harness itself (issue 23): tests/run-tests.sh runs suites side by
# side, prints each one's result whole and in the listing order with the one
# summary line, runs a `# test: serial` suite alone, starts the slowest of
# the last run first, and on TERM stops what it started; tests/lib.sh's
# free_port never hands out a range twice while its suite runs, and tj_users
# adds users from several suites at once without one failing on the lock of
# /etc/passwd. The runner runs here on a tree of fake suites in $TMP, which
# meet through files in $SYNC (every wait bounded).
. "$(dirname "$0")/lib.sh"
cd "$TRAINJOB_TOP" || exit 1

# mktree DIR : a tree with a copy of the runner and an empty build
mktree() {
    mkdir -p "$1/tests" "$1/build/tests"
    cp tests/run-tests.sh "$1/tests/"
}
# suite DIR NAME BODY [HEAD] : tests/NAME.test.sh in DIR's tree: HEAD (a
# marker comment), then what marks it running in $SYNC (run.NAME, removed
# when it ends) and notes its start in $SYNC/starts, then BODY. In it,
# others_running: whether any other suite is running now.
suite() {
    {
        [ -n "${4:-}" ] && echo "$4"
        echo "me=$2"
        cat <<'EOF'
others_running() { ls "$SYNC" | grep '^run\.' | grep -qv "^run\.$me\$"; }
echo "$me" >>"$SYNC/starts"
touch "$SYNC/run.$me"
trap 'rm -f "$SYNC/run.$me"' EXIT
EOF
        echo "$3"
    } >"$1/tests/$2.test.sh"
}

export SYNC="$TMP/sync"
# The runs here choose their own (this suite may be run by a run that was given some).
unset TEST_ONLY TEST_JOBS

# --- side by side, results whole and in order, one summary line -------------
T=$TMP/a
mktree "$T"
mkdir -p "$SYNC"
# Three that each wait (up to 10 s) until all three are running: they pass only side by side.
for p in p1 p2 p3; do
    suite "$T" $p 'n=0
while [ "$(ls "$SYNC" | grep -c "^up\.")" -lt 3 ] && [ $n -lt 100 ]; do
    touch "$SYNC/up.$me"; sleep 0.1; n=$((n + 1))
done
touch "$SYNC/up.$me"
if [ $n -lt 100 ]; then echo "PASS $me met the others"; else echo "FAIL $me ran alone"; fi
echo "PASS $me line 2"'
done
suite "$T" f 'echo "PASS f one"
echo "some output of f"
echo "FAIL f two: broken"'
suite "$T" s 'if others_running; then echo "FAIL s ran beside $(ls "$SYNC" | grep "^run\.")"; else echo "PASS s alone"; fi
sleep 0.5
if others_running; then echo "FAIL s joined by $(ls "$SYNC" | grep "^run\.")"; else echo "PASS s still alone"; fi' \
    '# test: serial (checks that it runs alone)'
printf '#!/bin/sh\necho "[  PASSED  ] 2 test(s)."\n' >"$T/build/tests/test_fake"
chmod +x "$T/build/tests/test_fake"

TEST_JOBS=3 sh "$T/tests/run-tests.sh" build >"$TMP/a.out" 2>"$TMP/a.err"
rc=$?
grep -v '^slowest' "$TMP/a.out" >"$TMP/a.lines"
cat >"$TMP/a.want" <<'EOF'
ok   test_fake (2 passed)
PASS f one
some output of f
FAIL f two: broken
FAIL f (1 passed, 1 failed)
ok   p1 (2 passed)
ok   p2 (2 passed)
ok   p3 (2 passed)
ok   s (2 passed)
failing: f
tests: 11 passed, 1 failed
EOF
if diff "$TMP/a.want" "$TMP/a.lines" >"$TMP/a.diff"; then
    pass "three suites that need each other pass side by side; results whole, in order, one summary"
else
    fail "three suites that need each other pass side by side; results whole, in order, one summary" \
        "$(cat "$TMP/a.diff" "$TMP/a.err")"
fi
if [ "$rc" -eq 1 ]; then pass "...and a failure fails the run"; else fail "...and a failure fails the run" "exit $rc"; fi
if [ "$(head -n 1 "$SYNC/starts")" = s ]; then pass "the serial suite ran first, alone"; else
    fail "the serial suite ran first, alone" "starts: $(cat "$SYNC/starts")"
fi
if grep -q '^slowest (3 at once): [a-z0-9_]* [0-9]* s' "$TMP/a.out"; then pass "the slowest suites are listed with their wall times"; else
    fail "the slowest suites are listed with their wall times" "$(cat "$TMP/a.out")"
fi
if [ "$(sed -n '$p' "$TMP/a.out")" = "tests: 11 passed, 1 failed" ]; then pass "the summary line is the last"; else
    fail "the summary line is the last" "$(tail -n 2 "$TMP/a.out")"
fi

# --- TEST_JOBS=1: one at a time; the slowest of the last run first -----------
T=$TMP/b
rm -rf "$SYNC" && mkdir -p "$SYNC"
mktree "$T"
for q in a_quick b_quick; do
    suite "$T" $q 'if others_running; then echo "FAIL $me beside others"; else echo "PASS $me alone"; fi'
done
# z_slow, last of the first run, finds the results of the two before it printed already (RUN_OUT).
suite "$T" z_slow 'sleep 1.5
if [ -z "${RUN_OUT:-}" ] || grep -q "^ok   b_quick" "$RUN_OUT"; then echo "PASS z_slow"; else echo "FAIL z_slow: nothing printed yet"; fi'
RUN_OUT=$TMP/b1.out TEST_JOBS=1 sh "$T/tests/run-tests.sh" build >"$TMP/b1.out" 2>&1
rc1=$?
: >"$SYNC/starts"
TEST_JOBS=1 sh "$T/tests/run-tests.sh" build >"$TMP/b2.out" 2>&1
rc2=$?
if [ "$rc1" -eq 0 ] && [ "$rc2" -eq 0 ] && grep -q '^tests: 3 passed, 0 failed$' "$TMP/b2.out"; then
    pass "TEST_JOBS=1 runs them one at a time; each result prints once the ones before it ended"
else
    fail "TEST_JOBS=1 runs them one at a time; each result prints once the ones before it ended" \
        "exit $rc1, $rc2: $(cat "$TMP/b1.out" "$TMP/b2.out")"
fi
if [ "$(head -n 1 "$SYNC/starts")" = z_slow ] && [ "$(sed -n '1p' "$T/build/test-times" | cut -d' ' -f2)" = z_slow ]; then
    pass "the next run starts the slowest of the last one first"
else
    fail "the next run starts the slowest of the last one first" "starts: $(cat "$SYNC/starts"); times: $(cat "$T/build/test-times" 2>&1)"
fi
# A run of some keeps the times of the others for the next full run.
TEST_ONLY=a_quick TEST_JOBS=1 sh "$T/tests/run-tests.sh" build >"$TMP/b3.out" 2>&1
if grep -q '^slowest (1 at once): a_quick [0-9]* s$' "$TMP/b3.out" &&
    [ "$(cut -d' ' -f2 "$T/build/test-times" | sort | tr '\n' ' ')" = "a_quick b_quick z_slow " ] &&
    [ "$(sed -n '1p' "$T/build/test-times" | cut -d' ' -f2)" = z_slow ]; then
    pass "TEST_ONLY runs some and keeps the others' times"
else
    fail "TEST_ONLY runs some and keeps the others' times" "$(cat "$TMP/b3.out" "$T/build/test-times")"
fi
run env TEST_JOBS=0 sh "$T/tests/run-tests.sh" build
expect_rc "TEST_JOBS=0 is refused" 2
expect_grep "...saying what it wants" "$TMP/err" "TEST_JOBS must be a whole number from 1, not '0'"

# --- TERM: the suites running are stopped, through their EXIT traps ------------
T=$TMP/c
rm -rf "$SYNC" && mkdir -p "$SYNC"
mktree "$T"
suite "$T" hang 'trap "exit 143" TERM
trap "rm -f \"\$SYNC/run.\$me\"; touch \"\$SYNC/cleaned\"" EXIT
sleep 300 &
echo $! >"$SYNC/sleeper"
wait'
sh "$T/tests/run-tests.sh" build >"$TMP/c.out" 2>&1 &
RUNNER=$!
n=0
while [ ! -s "$SYNC/sleeper" ] && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done
kill -TERM "$RUNNER"
n=0
while kill -0 "$RUNNER" 2>/dev/null && [ $n -lt 200 ]; do sleep 0.1; n=$((n + 1)); done
wait "$RUNNER"
rc=$?
SLEEPER=$(cat "$SYNC/sleeper" 2>/dev/null)
if [ -n "$SLEEPER" ] && [ "$rc" -eq 130 ] && ! kill -0 "$SLEEPER" 2>/dev/null; then
    pass "TERM stops the runner and what its suites started"
else
    fail "TERM stops the runner and what its suites started" "exit $rc, sleeper ${SLEEPER:-none}: $(cat "$TMP/c.out")"
    [ -n "$SLEEPER" ] && kill "$SLEEPER" 2>/dev/null
fi
check_cleaned() { [ -e "$SYNC/cleaned" ]; }
if check_cleaned; then pass "...after the suite's EXIT trap ran"; else fail "...after the suite's EXIT trap ran"; fi

# --- free_port: a range picked is not picked again while the suite runs -------
# Two picks before anything binds (a Slurm cluster takes seconds to bind its
# 110 ports): the pid that seeds the pick is the same, so only the
# reservation keeps them apart.
A=$(free_port 110)
B=$(free_port 110)
C=$(free_port)
if [ -n "$A" ] && [ -n "$B" ] && [ -n "$C" ] && [ $((A + 110)) -le "$B" -o $((B + 110)) -le "$A" ] &&
    [ "$C" -lt "$A" -o "$C" -ge $((A + 110)) ] && [ "$C" -lt "$B" -o "$C" -ge $((B + 110)) ]; then
    pass "free_port never hands out a range twice while its suite runs ($A, $B, $C)"
else
    fail "free_port never hands out a range twice while its suite runs" "$A, $B, $C"
fi

# --- tj_users from several suites at once ---------------------------------------
if [ "$(id -u)" -ne 0 ]; then
    echo "SKIP tj_users at once (needs root)"
else
    # Users of this check's own, removed after: the real tj-alice and tj-bob stay as they are.
    TJ_ALICE=tjr$$a TJ_BOB=tjr$$b TJ_TEAM=tjr$$t
    for k in 1 2 3 4; do
        (tj_users && touch "$TMP/users.$k") >"$TMP/users.$k.log" 2>&1 &
    done
    wait
    made=$(ls "$TMP" | grep -c '^users\.[0-9]$')
    if [ "$made" -eq 4 ] && id "$TJ_ALICE" >/dev/null 2>&1 && id "$TJ_BOB" >/dev/null 2>&1; then
        pass "tj_users from four suites at once: each has its users"
    else
        fail "tj_users from four suites at once: each has its users" \
            "$made of 4: $(cat "$TMP"/users.*.log)"
    fi
    userdel -r "$TJ_ALICE" >/dev/null 2>&1
    userdel -r "$TJ_BOB" >/dev/null 2>&1
    groupdel "$TJ_TEAM" >/dev/null 2>&1
fi
