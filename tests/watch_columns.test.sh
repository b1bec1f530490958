# Watch output keeps its columns (issue 22): `get jobs -w` prints its header
# once, so a row must not shift the columns under it. A job is watched while
# it runs and is stopped: its worker ignores SIGTERM, so the job passes
# through SUSPENDING (the longest state) before SUSPENDED; every row of the
# watch starts its columns where the header does. The same for
# `get workers NAME -w` (Running, then Stopped/Failed).
# The engine is started here on temp dirs and a Unix socket, stopped by pid.
. "$(dirname "$0")/lib.sh"
cd "$TRAINJOB_TOP" || exit 1
. tests/engine.sh

E="--endpoint http+unix://$SOCK"
WATCH_PID=""
WWATCH_PID=""

cleanup() {
    [ -n "$WATCH_PID" ] && kill "$WATCH_PID" 2>/dev/null
    [ -n "$WWATCH_PID" ] && kill "$WWATCH_PID" 2>/dev/null
    engine_cleanup
    rm -rf "$TMP"
}

engine_config </dev/null
start_engine

: >"$TMP/watch"
"$TRAINJOB_BIN" $E get jobs -w >"$TMP/watch" 2>"$TMP/watch.err" &
WATCH_PID=$!
n=0
while ! [ -s "$TMP/watch" ] && [ $n -lt 200 ]; do sleep 0.05; n=$((n + 1)); done

submit slow "trap '' TERM; echo up; while :; do sleep 0.2; done"
check "a job whose worker ignores SIGTERM is accepted" test "$code" = 200
check "...runs" wait_for slow .state RUNNING 30
: >"$TMP/wwatch"
"$TRAINJOB_BIN" $E get workers slow -w >"$TMP/wwatch" 2>"$TMP/wwatch.err" &
WWATCH_PID=$!
n=0
while ! [ -s "$TMP/wwatch" ] && [ $n -lt 200 ]; do sleep 0.05; n=$((n + 1)); done
run "$TRAINJOB_BIN" $E stop slow
expect_rc "stop slow" 0
check "...it passes through SUSPENDING" wait_for slow .state SUSPENDING 10
check "...and ends SUSPENDED" wait_for slow .state SUSPENDED 60
n=0
while ! grep -q SUSPENDED "$TMP/watch" && [ $n -lt 200 ]; do sleep 0.05; n=$((n + 1)); done
sleep 0.5
kill "$WATCH_PID" "$WWATCH_PID" 2>/dev/null
wait "$WATCH_PID" 2>/dev/null
wait "$WWATCH_PID" 2>/dev/null
WATCH_PID=""
WWATCH_PID=""

expect_grep "get jobs -w printed the job RUNNING" "$TMP/watch" RUNNING
expect_grep "...then SUSPENDING" "$TMP/watch" SUSPENDING
expect_grep "...then SUSPENDED" "$TMP/watch" SUSPENDED
check "...the header once" test "$(grep -c '^NAME' "$TMP/watch")" = 1
cols=$(column_starts "$TMP/watch")
check "...every row's columns where the header's are (starts: $cols)" \
    test "$(echo "$cols" | wc -w)" = 1

check "get workers -w printed the worker's rows" test "$(wc -l <"$TMP/wwatch")" -ge 3
cols=$(column_starts "$TMP/wwatch")
check "...every row's columns where the header's are (starts: $cols)" \
    test "$(echo "$cols" | wc -w)" = 1

cleanup
