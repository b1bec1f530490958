# An engine stopped on purpose stays stopped (issue 22): a client (an open
# `trainjob top` included) does not start it again on demand after its user
# ran `trainjob engine stop` or an admin sent SIGTERM; the reason says who
# stopped it and when, and `trainjob engine start` starts it. Two Unix users:
# alice's engine, started on demand for her; bob may not stop it.
. "$(dirname "$0")/lib.sh"
cd "$TRAINJOB_TOP" || exit 1
tj=$TRAINJOB_BIN
: "${TRAINJOBD_BIN:=$(dirname "$tj")/trainjobd}"
export TRAINJOBD_BIN
unset TRAINJOB_ENDPOINT XDG_CONFIG_HOME XDG_STATE_HOME XDG_RUNTIME_DIR

A="$TMP/alice"
pids=""
S="tj-stop-$$"
# Ends the top and the engines this test saw start, by pid.
cleanup() {
    tmux -L "$S" kill-server 2>/dev/null
    for p in $pids $(engine_pid); do kill -KILL "$p" 2>/dev/null; done
    # An engine started on alice's socket that no status named (an older client has no status).
    for f in /proc/[0-9]*/cmdline; do
        if cat "$f" 2>/dev/null | tr '\0' '\n' | grep -qxF "$A/run/trainjob/engine.sock"; then
            p=${f#/proc/}
            kill -KILL "${p%/cmdline}" 2>/dev/null
        fi
    done
    rm -rf "$TMP"
}
trap cleanup EXIT

tj_users || { fail "the test users exist" "tj_users could not make them (needs root)"; exit 1; }
shared_tmp "$A"
chown "$TJ_ALICE" "$A"
# alice's client and engine keep everything under $A, as under her home.
alice() {
    as_user "$TJ_ALICE" env XDG_STATE_HOME="$A/state" XDG_CONFIG_HOME="$A/config" \
        XDG_RUNTIME_DIR="$A/run" "$tj" "$@"
}
# alive PID : the process runs (a zombie nobody reaped yet has ended).
alive() {
    [ -e "/proc/$1" ] && ! grep -q '^[^)]*) Z' "/proc/$1/stat" 2>/dev/null
}
# engine_pid : the pid `engine status` reports (empty when none runs).
engine_pid() {
    alice engine status 2>/dev/null | sed -n 's/.*pid \([0-9]*\),.*/\1/p'
}

run alice get jobs
expect_rc "alice's first command starts her engine on demand" 0
p1=$(engine_pid)
pids="$pids $p1"
run alice engine status
expect_rc "engine status: running" 0
expect_grep "...as alice, with its pid" "$TMP/out" "trainjobd running: user $TJ_ALICE, pid $p1"

# bob reaches alice's socket but may not stop her engine.
chmod 0755 "$A/run" "$A/run/trainjob"
chmod 0666 "$A/run/trainjob/engine.sock"
run as_user "$TJ_BOB" "$tj" --endpoint "http+unix://$A/run/trainjob/engine.sock" engine stop
expect_rc "$TJ_BOB's engine stop of $TJ_ALICE's engine is refused" 1
expect_grep "...saying only its user may stop it" "$TMP/err" "only $TJ_ALICE, who runs this engine, may stop it"
if alive "$p1"; then pass "...and it keeps running"; else fail "...and it keeps running"; fi

run alice engine stop
expect_rc "alice's engine stop stops it" 0
uid=$(id -u "$TJ_ALICE")
expect_grep "...saying who stopped it" "$TMP/out" "trainjobd stopped by $TJ_ALICE (uid $uid)"
if alive "$p1"; then fail "...and the engine is gone when it returns" "pid $p1 lives"; else
    pass "...and the engine is gone when it returns"; fi
run alice get jobs
expect_rc "a command after the stop does not start it again (3: no engine)" 3
expect_grep "...saying it was stopped on purpose, by whom" "$TMP/err" "the local engine was stopped on purpose (by $TJ_ALICE (uid $uid) at "
expect_grep "...and how to start it" "$TMP/err" "trainjob engine start"
if [ -z "$(engine_pid)" ]; then pass "...and no engine runs"; else fail "...and no engine runs"; fi
run alice engine status
expect_rc "engine status of a stopped engine: 3" 3
expect_grep "...saying who stopped it" "$TMP/out" "trainjobd stopped: the local engine was stopped on purpose (by $TJ_ALICE"

run alice engine start
expect_rc "engine start starts it" 0
expect_grep "...and says it runs" "$TMP/out" "trainjobd running: user $TJ_ALICE"
p2=$(engine_pid)
pids="$pids $p2"
run alice get jobs
expect_rc "...and commands reach it" 0

# An admin's SIGTERM is a stop on purpose too.
kill -TERM "$p2"
n=0
while alive "$p2" && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done
run alice get jobs
expect_rc "after an admin's SIGTERM a command does not start the engine" 3
expect_grep "...naming the admin who stopped it" "$TMP/err" "stopped on purpose (by $(id -un) (uid $(id -u)) at "

# An open top does not bring it back either (it tries on every refresh).
if command -v tmux >/dev/null; then
    tmux -L "$S" new-session -d -x 80 -y 24 "su -s /bin/sh $TJ_ALICE -c 'XDG_STATE_HOME=$A/state XDG_CONFIG_HOME=$A/config XDG_RUNTIME_DIR=$A/run TRAINJOBD_BIN=$TRAINJOBD_BIN $tj top --refresh 1'"
    sleep 4
    tmux -L "$S" capture-pane -p >"$TMP/screen"
    if [ -z "$(engine_pid)" ]; then pass "an open top does not start the stopped engine"; else
        pids="$pids $(engine_pid)"; fail "an open top does not start the stopped engine"; fi
    expect_grep "...and says it was stopped on purpose, by whom" "$TMP/screen" "engine stopped on purpose (by $(id -un) (uid $(id -u))"
    expect_grep "...with the key that starts it, whole at 80 columns" "$TMP/screen" "press X to start it"
    tmux -L "$S" send-keys X
    n=0
    while [ -z "$(engine_pid)" ] && [ $n -lt 50 ]; do sleep 0.2; n=$((n + 1)); done
    p3=$(engine_pid)
    pids="$pids $p3"
    if [ -n "$p3" ]; then pass "X in top starts the stopped engine"; else fail "X in top starts the stopped engine"; fi
    sleep 2
    tmux -L "$S" capture-pane -p >"$TMP/screen"
    expect_no_grep "...and top connects to it" "$TMP/screen" "engine stopped"
    tmux -L "$S" send-keys q
    sleep 0.5
    tmux -L "$S" kill-server 2>/dev/null
fi

# engine stop returns once the process has ended, not when the socket goes:
# the engine lets its store and cgroups go after closing it. strace holds
# the engine 1.5 s at its exit_group, socket already gone (needs root).
run alice engine start
p4=$(engine_pid)
pids="$pids $p4"
if ! command -v strace >/dev/null 2>&1; then
    fail "strace is installed (scripts/deps.sh)" "no strace: the engine's exit cannot be held"
else
    strace -qq -p "$p4" -e trace=exit_group -e inject=exit_group:delay_enter=1500000 -o /dev/null &
    tracer=$!
    sleep 0.5
    t0=$(date +%s%N)
    run alice engine stop
    t1=$(date +%s%N)
    expect_rc "engine stop of an engine slow to exit" 0
    if alive "$p4"; then fail "...returns only once its process has ended" "pid $p4 lives"; else
        pass "...returns only once its process has ended"; fi
    ms=$(((t1 - t0) / 1000000))
    if [ "$ms" -ge 1400 ]; then pass "...which took the held 1.5 s ($ms ms)"; else
        fail "...which took the held 1.5 s" "returned after $ms ms: strace did not hold it"; fi
    wait "$tracer" 2>/dev/null
fi
