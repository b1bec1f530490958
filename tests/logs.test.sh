# `trainjob logs -f` against a real trainjobd (issue 10 #20): a worker that
# writes ~20 MB as fast as it can (the log rotates at 16 MiB) is followed to
# its last line, byte for byte; a reader slower than a 60 MB flood is told
# how much went by unread, and what it got plus that is what was written;
# and a follow survives a kill -9 and restart of the engine, continuing
# where it was without a line twice or one lost.
# The engine is started here on temp dirs and stopped by pid.
. "$(dirname "$0")/lib.sh"
cd "$TRAINJOB_TOP" || exit 1
. tests/engine.sh
TUI_ENGINE=none # the engine is this test's own (tests/engine.sh, above)
. tests/tui.sh

FOLLOW_PID=""
MON_PID=""
E="--endpoint http+unix://$SOCK"

cleanup() {
    [ -n "$FOLLOW_PID" ] && kill "$FOLLOW_PID" 2>/dev/null
    [ -n "$MON_PID" ] && kill "$MON_PID" 2>/dev/null
    tui_cleanup
    engine_cleanup
    rm -rf "$TMP"
}

engine_config </dev/null

wait_exit() { # PID SECONDS: waits for a background job; its status in $rc
    n=0
    timed_out=""
    while kill -0 "$1" 2>/dev/null && [ $n -lt $(( $2 * 10 )) ]; do sleep 0.1; n=$((n + 1)); done
    if kill -0 "$1" 2>/dev/null; then timed_out=1; kill "$1"; fi
    wait "$1" 2>/dev/null
    rc=$?
    [ -z "$timed_out" ] || rc=124
}

start_engine

# ---- a fast 20 MB log, followed to its last line -------------------------------

# The worker waits to be told (a file in its own directory: the sandbox has its own /tmp).
submit fast 'while [ ! -e go ]; do sleep 0.05; done
yes "0123456789 abcdefghijklmnopqrstuvwxyz the quick brown fox, as fast as it can" | head -c 20000000
echo
echo LAST-LINE-OF-FAST'
wait_for fast .state RUNNING || fail "fast runs" "$(field fast .state)"
UID_FAST=$(field fast .uid)
"$TRAINJOB_BIN" $E logs fast -f >"$TMP/fast.out" 2>"$TMP/fast.err" &
FOLLOW_PID=$!
sleep 0.5
touch "$STATE/work/$UID_FAST/go"
wait_exit "$FOLLOW_PID" 60
FOLLOW_PID=""
if [ "$rc" -eq 0 ]; then pass "logs -f ends when the job does (exit 0)"; else
    fail "logs -f ends when the job does (exit 0)" "exit $rc: $(head -c 300 "$TMP/fast.err")"
fi
expect_grep "the last line arrives" "$TMP/fast.out" "LAST-LINE-OF-FAST"
LOG="$STATE/logs/$UID_FAST.master-0.log"
check_rotated() { test -f "$LOG.1"; }
if check_rotated; then pass "the log rotated on the way (16 MiB cap)"; else fail "the log rotated on the way (16 MiB cap)"; fi
got=$(wc -c <"$TMP/fast.out")
want=$(cat "$LOG.1" "$LOG" | wc -c)
if cat "$LOG.1" "$LOG" | cmp -s - "$TMP/fast.out"; then
    pass "every byte arrives, in order ($got bytes)"
else
    fail "every byte arrives, in order" "got $got bytes, the log holds $want"
fi

"$TRAINJOB_BIN" $E logs fast >"$TMP/fast.all" 2>"$TMP/fast.err"
if cat "$LOG.1" "$LOG" | cmp -s - "$TMP/fast.all"; then
    pass "logs without -f: the whole log, both generations"
else
    fail "logs without -f: the whole log, both generations" "$(wc -c <"$TMP/fast.all") bytes"
fi
"$TRAINJOB_BIN" $E logs fast -f >"$TMP/fast.again" 2>"$TMP/fast.err"
if cat "$LOG.1" "$LOG" | cmp -s - "$TMP/fast.again"; then
    pass "logs -f of an ended job: the whole log, then it ends"
else
    fail "logs -f of an ended job: the whole log, then it ends" "$(wc -c <"$TMP/fast.again") bytes"
fi

# ---- a reader slower than the log: what went by unread is said, with its size ---

# 60 MB through a 16 MiB rotation read at 8 MB/s: the log rotates past the reader.
submit flood 'while [ ! -e go ]; do sleep 0.05; done
yes "a line of a log that floods its reader, written as fast as it can be" | head -c 60000000
echo
echo LAST-LINE-OF-FLOOD'
wait_for flood .state RUNNING || fail "flood runs"
UID_FLOOD=$(field flood .uid)
curl -s -N --limit-rate 8M --unix-socket "$SOCK" -o "$TMP/flood.out" \
    "http://x$JOBS/flood/workers/master-0/logs?follow=true" &
FOLLOW_PID=$!
sleep 0.5
touch "$STATE/work/$UID_FLOOD/go"
wait_exit "$FOLLOW_PID" 90
FOLLOW_PID=""
expect_grep "a slow reader still gets the last line" "$TMP/flood.out" "LAST-LINE-OF-FLOOD"
# What arrived plus what it was told it missed is what the worker wrote.
marker_re='^… [0-9]* MiB skipped (the log rotated faster than it was read) …$'
skipped_mib=$(grep -a "$marker_re" "$TMP/flood.out" | awk '{ s += $2 } END { print s + 0 }')
markers=$(grep -a "$marker_re" "$TMP/flood.out" | wc -c)
nmarkers=$(grep -ac "$marker_re" "$TMP/flood.out")
got=$(( $(wc -c <"$TMP/flood.out") - markers ))
first=$(head -n 1 "$TMP/flood.out" | wc -c)
want=$(( first + 60000000 + 1 + 19 ))
# A marker goes on a line of its own: a newline may come before it (one per marker).
extra=$(( got + skipped_mib * 1048576 - want ))
if [ "$extra" -ge 0 ] && [ "$extra" -le "$nmarkers" ]; then
    pass "bytes received + bytes said skipped = bytes written ($got + $skipped_mib MiB, $nmarkers marker(s))"
else
    fail "bytes received + bytes said skipped = bytes written" "$got + $skipped_mib MiB - $want = $extra"
fi
if [ "$skipped_mib" -gt 0 ]; then pass "the reader was told what it missed ($skipped_mib MiB)"; else
    pass "the reader kept up this time: nothing skipped (marker not needed)"
fi

# ---- the engine restarts during logs -f: it reconnects and continues -----------

submit slow 'while [ ! -e go ]; do sleep 0.05; done
i=0
while [ $i -lt 80 ]; do echo "slow line $i"; i=$((i + 1)); sleep 0.05; done
echo LAST-LINE-OF-SLOW'
wait_for slow .state RUNNING || fail "slow runs"
UID_SLOW=$(field slow .uid)
"$TRAINJOB_BIN" $E logs slow -f >"$TMP/slow.out" 2>"$TMP/slow.err" &
FOLLOW_PID=$!
sleep 0.3
touch "$STATE/work/$UID_SLOW/go"
sleep 1
stop_engine KILL
sleep 0.7
start_engine
wait_exit "$FOLLOW_PID" 30
FOLLOW_PID=""
if [ "$rc" -eq 0 ]; then pass "logs -f survives an engine restart (exit 0)"; else
    fail "logs -f survives an engine restart (exit 0)" "exit $rc: $(head -c 300 "$TMP/slow.err")"
fi
expect_grep "...and says it reconnected" "$TMP/slow.err" "reconnecting"
expect_grep "...and the last line arrives" "$TMP/slow.out" "LAST-LINE-OF-SLOW"
if cmp -s "$STATE/logs/$UID_SLOW.master-0.log" "$TMP/slow.out"; then
    pass "...with no line twice and none lost"
else
    fail "...with no line twice and none lost" "$(diff "$STATE/logs/$UID_SLOW.master-0.log" "$TMP/slow.out" | head -5)"
fi
dups=$(grep '^slow line' "$TMP/slow.out" | sort | uniq -d | wc -l)
if [ "$dups" -eq 0 ] && [ "$(grep -c '^slow line' "$TMP/slow.out")" -eq 80 ]; then
    pass "...80 distinct lines"
else
    fail "...80 distinct lines" "$dups duplicated, $(grep -c '^slow line' "$TMP/slow.out") in all"
fi

# ---- driver: acp reads worker logs from the Monitor service, not the engine -------

# The engine serves the ACP paths, so a context that calls it acp gets the job from
# it and asks the Monitor service (here: nothing listens) for the log; `logs -f`,
# with no resumable log there, falls back to the driver's polling follow.
cat >"$TMP/acp.yaml" <<YAML
contexts:
  - name: acp-on-engine
    driver: acp
    endpoint: http+unix://$SOCK
    monitor_endpoint: http://127.0.0.1:1
    telemetry_station: ts-user-1
YAML
for f in "" "-f"; do
    TRAINJOB_CONFIG="$TMP/acp.yaml" "$TRAINJOB_BIN" logs fast $f >"$TMP/acp.out" 2>"$TMP/acp.err"
    rc=$?
    if [ "$rc" -ne 0 ] && grep -qF "Monitor service at http://127.0.0.1:1" "$TMP/acp.err"; then
        pass "driver: acp asks the Monitor service for logs ${f:-(once)}"
    else
        fail "driver: acp asks the Monitor service for logs ${f:-(once)}" \
            "exit $rc: $(head -c 300 "$TMP/acp.err")"
    fi
done
cat >"$TMP/acp.yaml" <<YAML
contexts:
  - name: acp-on-engine
    driver: acp
    endpoint: http+unix://$SOCK
YAML
TRAINJOB_CONFIG="$TMP/acp.yaml" "$TRAINJOB_BIN" logs fast -f >"$TMP/acp.out" 2>"$TMP/acp.err"
rc=$?
if [ "$rc" -ne 0 ] && grep -qF "telemetry_station" "$TMP/acp.err"; then
    pass "driver: acp without telemetry_station says how to set it"
else
    fail "driver: acp without telemetry_station says how to set it" \
        "exit $rc: $(head -c 300 "$TMP/acp.err")"
fi

# ---- the job screen's log pane on driver: acp: the Monitor service's lines ---------
# The pane reads through the loop (backend_send), not the blocking call above: a fake
# Monitor service (tests/tools/fakemonitor, on a port the kernel picks) answers every
# page with two lines of the worker asked for, one with an OSC title sequence.
"$(dirname "$TRAINJOBD_BIN")/tests/tools/fakemonitor" "$TMP/mon.port" "$TMP/mon.count" &
MON_PID=$!
n=0
while [ ! -s "$TMP/mon.port" ] && [ $n -lt 50 ]; do sleep 0.1; n=$((n + 1)); done
cat >"$TMP/acp.yaml" <<YAML
contexts:
  - name: acp-on-engine
    driver: acp
    endpoint: http+unix://$SOCK
    monitor_endpoint: http://127.0.0.1:$(cat "$TMP/mon.port")
    telemetry_station: ts-user-1
YAML
SESSION="tj-acplogs-$$"
TUI_ENV="LANG=C.UTF-8 TRAINJOB_CONFIG='$TMP/acp.yaml'"
start_tui 100 30 "top --job fast"
see "driver: acp: top opens the job's screen" "master-0" 10
keys l
if wait_screen "FAKE-MONITOR-LINE two" 10; then
    pass "driver: acp: the log pane shows the Monitor service's lines"
else
    fail "driver: acp: the log pane shows the Monitor service's lines" \
        "$(cat "$TMP/screen"; cat "$TMP/mon.count" 2>/dev/null)"
fi
expect_grep "...the first one too" "$TMP/screen" "FAKE-MONITOR-LINE one"
if [ "$(tmux display-message -p -t "$SESSION" '#{pane_title}')" = pwned ]; then
    fail "...and a line cannot retitle the terminal"
else
    pass "...and a line cannot retitle the terminal"
fi
tui_cleanup
kill "$MON_PID" 2>/dev/null
wait "$MON_PID" 2>/dev/null
MON_PID=""

# ---- a line with an unterminated OSC hides nothing after it (issue 20) -------------
# To a terminal `logs` sanitizes: the OSC used to run on to the next ST, taking every
# following line with it, so a job could hide its own error lines.
submit osc 'echo starting; printf "\033]0;swallow everything\n"; echo "ERROR: the line after"; echo OSC-LAST-LINE'
wait_for osc .state SUCCEEDED 30 || fail "the OSC job ends" "$(field osc .state)"
script -qec "'$TRAINJOB_BIN' $E logs osc" /dev/null >"$TMP/osc.out" 2>&1
expect_grep "logs to a terminal: the line after an unterminated OSC shows" "$TMP/osc.out" "ERROR: the line after"
expect_grep "...and the last one" "$TMP/osc.out" "OSC-LAST-LINE"
if grep -q "$(printf '\033')\]" "$TMP/osc.out"; then fail "...and the OSC itself does not reach the terminal"; else
    pass "...and the OSC itself does not reach the terminal"
fi
