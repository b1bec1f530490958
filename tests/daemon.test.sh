# trainjobd's command line and its state directory (issue 10, items 5 and
# 21): every flag is parsed strictly (a malformed value is refused with a
# message naming the flag, before anything is created), and one state
# directory serves one engine: a second trainjobd on it, even on another
# socket, is refused with who holds it, while the first keeps serving; once
# the first stops, a new one starts, also at once after a kill -9 that left
# a copy of the lock's descriptor in another process. Engines are stopped
# by pid.
. "$(dirname "$0")/lib.sh"
cd "$TRAINJOB_TOP" || exit 1

. tests/engine.sh

PIDS=""

cleanup() {
    for p in $PIDS; do kill "$p" 2>/dev/null; done
    rm -rf "$TMP"
}
# --- item 21: malformed flag values ---------------------------------------
# bad NAME FLAG VALUE : trainjobd refuses it (exit 2), names the flag, creates nothing
bad() {
    run "$TRAINJOBD_BIN" --foreground --config "$CONF" --state-dir "$TMP/never" \
        --socket "$TMP/run/never.sock" "$2" "$3"
    if [ "$rc" -eq 2 ] && grep -qF -- "$2" "$TMP/err" && [ ! -e "$TMP/never" ]; then
        pass "$1"
    else
        fail "$1" "exit $rc; stderr: $(head -c 300 "$TMP/err"); state dir: $(ls -d "$TMP/never" 2>&1)"
    fi
}
bad "--listen with junk after the port is refused" --listen 127.0.0.1:18766junk
bad "--listen with a space after the port is refused" --listen "127.0.0.1:18766 "
bad "--listen port 00 is refused" --listen 127.0.0.1:00
bad "--listen port 65536 is refused" --listen 127.0.0.1:65536
bad "--listen short address is refused" --listen 127.1:8080
bad "--listen non-loopback is refused" --listen 0.0.0.0:8080
bad "--listen without port is refused" --listen 127.0.0.1
bad "--grace that is not a number is refused" --grace ten
bad "--grace negative is refused" --grace -1
bad "--grace in exponent form is refused" --grace 1e9
bad "--grace with trailing junk is refused" --grace 2s
bad "--grace beyond an hour is refused" --grace 3601
bad "--grace 0 (which would silently mean 10 s) is refused" --grace 0
bad "--log-cap with an unknown suffix is refused" --log-cap 16Q
bad "--log-cap too small is refused" --log-cap 10
bad "--state-dir empty is refused" --state-dir ""
bad "--socket empty is refused" --socket ""
run "$TRAINJOBD_BIN" --foreground --state-dir "$TMP/never" stray-argument
if [ "$rc" -eq 2 ] && grep -qF "stray-argument" "$TMP/err" && [ ! -e "$TMP/never" ]; then
    pass "a stray argument is refused"
else
    fail "a stray argument is refused" "exit $rc: $(head -c 300 "$TMP/err")"
fi

# --- item 5: one engine per state directory -------------------------------
"$TRAINJOBD_BIN" --foreground --config "$CONF" --state-dir "$STATE" \
    --socket "$TMP/run/one.sock" --listen 127.0.0.1:0 >"$TMP/one.log" 2>&1 &
ONE=$!
PIDS="$ONE"
if engine_up "$TMP/run/one.sock"; then pass "the first engine starts"; else
    fail "the first engine starts" "$(tail -c 300 "$TMP/one.log")"
fi
if grep -qx "pid $ONE" "$STATE/trainjobd.lock" &&
    grep -qxF "socket $TMP/run/one.sock" "$STATE/trainjobd.lock"; then
    pass "the lock file names the holder's pid and socket"
else
    fail "the lock file names the holder's pid and socket" "$(cat "$STATE/trainjobd.lock")"
fi

# Detached (the default): the refusal must still reach the caller's terminal.
run "$TRAINJOBD_BIN" --config "$CONF" --state-dir "$STATE" --socket "$TMP/run/two.sock"
WANT="state dir $STATE is in use by trainjobd pid $ONE on socket $TMP/run/one.sock"
if [ "$rc" -ne 0 ] && grep -qF "$WANT" "$TMP/err"; then
    pass "a second engine on another socket is refused, naming the holder"
else
    fail "a second engine on another socket is refused, naming the holder" \
        "exit $rc; stderr: $(head -c 400 "$TMP/err")"
fi
run "$TRAINJOBD_BIN" --foreground --config "$CONF" --state-dir "$STATE" --socket "$TMP/run/two.sock"
if [ "$rc" -ne 0 ] && grep -qF "$WANT" "$TMP/err" && [ ! -e "$TMP/run/two.sock" ]; then
    pass "a second engine in the foreground is refused and opens no socket"
else
    fail "a second engine in the foreground is refused and opens no socket" "exit $rc"
fi
if curl -s -o /dev/null -w '%{http_code}' --unix-socket "$TMP/run/one.sock" \
    http://x/trainjob/v1/catalog | grep -qx 200 && kill -0 "$ONE"; then
    pass "the first engine still serves"
else
    fail "the first engine still serves"
fi

# --listen port 0: the kernel picks the port, the log names it, the engine answers there.
TCP=$(sed -n 's/.*listening on .* and \(127\.0\.0\.1:[0-9]*\) (pid .*/\1/p' "$TMP/one.log" | tail -n 1)
code=$(curl -s -m 10 -o /dev/null -w '%{http_code}' "http://$TCP/trainjob/v1/catalog")
if [ -n "$TCP" ] && [ "${TCP#*:}" != 0 ] && [ "$code" = 401 ]; then
    pass "--listen port 0 takes a free port, logs it, and answers there (unsigned: 401)"
else
    fail "--listen port 0 takes a free port, logs it, and answers there (unsigned: 401)" \
        "address '$TCP', code $code; log: $(tail -c 300 "$TMP/one.log")"
fi
# A taken port is refused with the reason (it was "could not start the HTTP server on TCP").
run "$TRAINJOBD_BIN" --foreground --config "$CONF" --state-dir "$TMP/other" \
    --socket "$TMP/run/other.sock" --listen "$TCP"
if [ "$rc" -ne 0 ] && grep -qF -- "--listen $TCP: Address already in use" "$TMP/err" &&
    [ ! -e "$TMP/run/other.sock" ]; then
    pass "a taken --listen port is refused with the reason, leaving no socket"
else
    fail "a taken --listen port is refused with the reason, leaving no socket" \
        "exit $rc: $(head -c 300 "$TMP/err")"
fi

# The suites' free_port (tests/lib.sh): below the ephemeral range, and never a port in use.
P=$(free_port)
"$TRAINJOBD_BIN" --foreground --config "$CONF" --state-dir "$TMP/fp" \
    --socket "$TMP/run/fp.sock" --listen "127.0.0.1:$P" >"$TMP/fp.log" 2>&1 &
FP=$!
PIDS="$PIDS $FP"
engine_up "$TMP/run/fp.sock"
Q=$(free_port)
EPH=$(awk '{ print $1 }' /proc/sys/net/ipv4/ip_local_port_range)
if [ -n "$P" ] && [ "$P" -lt "$EPH" ] && grep -qF "and 127.0.0.1:$P (pid" "$TMP/fp.log" &&
    [ -n "$Q" ] && [ "$Q" != "$P" ] && [ "$Q" -lt "$EPH" ]; then
    pass "free_port picks below the ephemeral range and passes over a port in use"
else
    fail "free_port picks below the ephemeral range and passes over a port in use" \
        "first $P, then $Q (ephemeral from $EPH); log: $(tail -c 200 "$TMP/fp.log")"
fi
kill "$FP"
wait_gone "$FP" 10 || fail "the free_port engine stops on SIGTERM"

kill "$ONE"
if wait_gone "$ONE" 10; then pass "the first engine stops on SIGTERM"; else fail "the first engine stops on SIGTERM"; fi

# A detached engine: the surviving (grandchild) process holds the lock.
run "$TRAINJOBD_BIN" --config "$CONF" --state-dir "$STATE" --socket "$TMP/run/two.sock"
TWO=$(sed -n 's/^pid //p' "$STATE/trainjobd.lock")
PIDS="$PIDS $TWO"
if [ "$rc" -eq 0 ] && engine_up "$TMP/run/two.sock" && [ -n "$TWO" ] && kill -0 "$TWO"; then
    pass "after the first stops, a new engine starts (detached)"
else
    fail "after the first stops, a new engine starts (detached)" "exit $rc: $(head -c 300 "$TMP/err")"
fi
run "$TRAINJOBD_BIN" --foreground --config "$CONF" --state-dir "$STATE" --socket "$TMP/run/three.sock"
if [ "$rc" -ne 0 ] && grep -qF "in use by trainjobd pid $TWO on socket $TMP/run/two.sock" "$TMP/err"; then
    pass "the detached engine holds the lock after its parent exited"
else
    fail "the detached engine holds the lock after its parent exited" "exit $rc: $(head -c 300 "$TMP/err")"
fi
kill "$TWO"
wait_gone "$TWO" 10 || fail "the detached engine stops on SIGTERM"

# A kill -9 while a child of the engine has a copy of the lock's descriptor (one
# forked and not yet at its exec: fdgrab takes such a copy): the lock ends with
# the engine, and one started at once takes the state dir.
"$TRAINJOBD_BIN" --foreground --config "$CONF" --state-dir "$STATE" \
    --socket "$TMP/run/four.sock" >"$TMP/four.log" 2>&1 &
FOUR=$!
PIDS="$PIDS $FOUR"
engine_up "$TMP/run/four.sock"
"$(dirname "$TRAINJOBD_BIN")/tests/tools/fdgrab" "$FOUR" "$STATE/trainjobd.lock" "$TMP/grabbed" \
    2>"$TMP/grab.err" &
GRAB=$!
PIDS="$PIDS $GRAB"
n=0
while [ ! -e "$TMP/grabbed" ] && kill -0 "$GRAB" 2>/dev/null && [ $n -lt 100 ]; do
    sleep 0.05
    n=$((n + 1))
done
if [ -e "$TMP/grabbed" ]; then
    kill -KILL "$FOUR"
    wait "$FOUR" 2>/dev/null
    run "$TRAINJOBD_BIN" --config "$CONF" --state-dir "$STATE" --socket "$TMP/run/five.sock"
    FIVE=$(sed -n 's/^pid //p' "$STATE/trainjobd.lock")
    if [ "$rc" -eq 0 ] && engine_up "$TMP/run/five.sock" && [ "$FIVE" != "$FOUR" ]; then
        pass "an engine started right after a kill -9 of the last one starts, whatever copies of its lock's descriptor live on"
    else
        fail "an engine started right after a kill -9 of the last one starts, whatever copies of its lock's descriptor live on" \
            "exit $rc: $(head -c 300 "$TMP/err")"
    fi
    PIDS="$PIDS $FIVE"
    kill "$FIVE"
    wait_gone "$FIVE" 10
else
    fail "fdgrab copies the engine's lock descriptor (root, Linux 5.6)" "$(head -c 300 "$TMP/grab.err")"
fi
kill "$GRAB" 2>/dev/null

# --- issue 11 item 7: --demo on a config that already exists ---------------
# The first start wrote $CONF without the demo; --demo must still add the
# simulated nodes (in memory: the file stays the user's) and say so.
cp "$CONF" "$TMP/conf.before"
"$TRAINJOBD_BIN" --foreground --demo --config "$CONF" --state-dir "$STATE" \
    --socket "$TMP/run/demo.sock" >"$TMP/demo.log" 2>&1 &
DEMO=$!
PIDS="$PIDS $DEMO"
if engine_up "$TMP/run/demo.sock"; then pass "--demo starts on an existing config"; else
    fail "--demo starts on an existing config" "$(tail -c 300 "$TMP/demo.log")"
fi
curl -s --unix-socket "$TMP/run/demo.sock" http://x/trainjob/v1/catalog >"$TMP/catalog.json"
expect_grep "...its catalog offers the demo's 8-GPU spec" "$TMP/catalog.json" "sim-gpu-8"
expect_grep "...and the demo's public pool" "$TMP/catalog.json" "sim-public"
expect_grep "...and the engine log says what --demo added" "$TMP/demo.log" "--demo: added simulated nodes"
if cmp -s "$CONF" "$TMP/conf.before"; then pass "...leaving engine.yaml as it was"; else
    fail "...leaving engine.yaml as it was" "$(diff "$TMP/conf.before" "$CONF" | head -5)"
fi
kill "$DEMO"
wait_gone "$DEMO" 10 || fail "the demo engine stops on SIGTERM"
# A config --demo wrote has the nodes already: started again with --demo, nothing is added twice.
for n in 1 2; do
    "$TRAINJOBD_BIN" --foreground --demo --config "$TMP/demo.yaml" --state-dir "$STATE" \
        --socket "$TMP/run/demo.sock" >"$TMP/demo$n.log" 2>&1 &
    DEMO=$!
    PIDS="$PIDS $DEMO"
    engine_up "$TMP/run/demo.sock" || fail "--demo starts on a new config ($n)" "$(tail -c 300 "$TMP/demo$n.log")"
    kill "$DEMO"
    wait_gone "$DEMO" 10 || fail "the demo engine stops on SIGTERM ($n)"
done
expect_grep "a config written with --demo has its nodes" "$TMP/demo.yaml" "sim-n4"
expect_grep "...and --demo again says they are there, adding none" "$TMP/demo2.log" "already in"
