# One jobs view over two contexts, driven in tmux at 100×24 the way a person
# does: two trainjobd engines on two sockets (own state dirs), contexts
# "local" and "lab" in config.yaml, each with a job named "same" and one of
# its own. `top --context local,lab` lists all four rows with CONTEXT; `s`
# on lab's "same" stops it on lab only (checked with the CLI against each);
# lab's engine killed (by pid): its rows say DISCONNECTED, the header says
# which, and local's keep updating (a new job on local appears); lab's
# engine started again: its rows come back by themselves. `:ctx all` opens
# every context of config.yaml; one context is the view as it always was.
# As tj-alice over both engines (TCP, her key): her job and tj-bob's are in
# view, `m` keeps hers, and her `s` on his job is refused by lab, said as
# lab's, while his job runs on.
. "$(dirname "$0")/lib.sh"
cd "$TRAINJOB_TOP" || exit 1
SESSION="tj-multictx-$$"
. tests/tui.sh

tj_users || { echo "FAIL tj_users: cannot make the test users"; exit 1; }
A=$TJ_ALICE B=$TJ_BOB
# Workspace team: tj-alice and tj-bob are members (a member changes only the
# jobs they created); each reaches both engines over loopback TCP with a key.
team_with_keys "$A" "$B" | engine_config
GRACE=3 # a stop takes this long: the jobs ignore SIGTERM, so "stopping" is seen
PORT=$(free_port 2) || { echo "FAIL no two free TCP ports below the ephemeral range"; exit 1; }
PORT_A=$PORT PORT_B=$((PORT + 1))
SOCK_A="$TMP/run/a.sock" STATE_A="$TMP/state-a"
SOCK_B="$TMP/run/b.sock" STATE_B="$TMP/state-b"
# start_at A|B : the engine of context local (A) or lab (B); its pid in PID_A / PID_B.
start_at() {
    if [ "$1" = A ]; then SOCK=$SOCK_A STATE=$STATE_A ENGINE_ARGS="--listen 127.0.0.1:$PORT_A"; else
        SOCK=$SOCK_B STATE=$STATE_B ENGINE_ARGS="--listen 127.0.0.1:$PORT_B"
    fi
    ENGINE_PID=""
    start_engine
    eval "PID_$1=\$ENGINE_PID"
    ENGINE_PID=""
}
PID_A="" PID_B=""
cleanup() {
    tui_cleanup
    for _p in "$PID_A" "$PID_B"; do
        [ -n "$_p" ] && kill -KILL "$_p" 2>/dev/null && wait "$_p" 2>/dev/null
    done
    end_workers "$STATE_A"
    end_workers "$STATE_B"
    rm -rf "$TMP"
}
start_at A || exit 1
start_at B || exit 1

mkdir -p "$HOME/.config/trainjob"
cat >"$HOME/.config/trainjob/config.yaml" <<EOF
contexts:
- name: local
  driver: trainjobd
  endpoint: http+unix://$SOCK_A
  workspace: default
- name: lab
  driver: trainjobd
  endpoint: http+unix://$SOCK_B
  workspace: default
EOF
at() { _c=$1; shift; "$TRAINJOB_BIN" --context "$_c" "$@"; }
job_file() { # NAME
    cat >"$TMP/$1.yaml" <<EOF
workspace_name: default
name: $1
display_name: $1
framework: PYTORCH_DDP
resource_pool: {name: std}
roles:
  - total_replicas: 1
    resource_spec: [{name: cpu-1}]
    image_path: local/host
    startup_script: trap '' TERM; sleep 600
EOF
}
for j in same only-local only-lab new-on-local; do job_file $j; done
run at local submit -f "$TMP/same.yaml"
expect_rc "a job named same on local" 0
run at lab submit -f "$TMP/same.yaml"
expect_rc "...and one named same on lab" 0
run at local submit -f "$TMP/only-local.yaml"
run at lab submit -f "$TMP/only-lab.yaml"
# state CONTEXT JOB STATES [SECONDS]: up to SECONDS (20) for the job's state to be one of STATES.
state() {
    _n=$((${4:-20} * 5))
    while [ $_n -gt 0 ]; do
        at "$1" get job "$2" -o json >"$TMP/out" 2>&1
        grep -qE "\"state\": \"($3)\"" "$TMP/out" && return 0
        sleep 0.2
        _n=$((_n - 1))
    done
    return 1
}
state local same RUNNING && state lab same RUNNING && state local only-local RUNNING &&
    state lab only-lab RUNNING && pass "the four jobs run" || fail "the four jobs run" "$(cat "$TMP/out")"

# The CLI's list over both: the same rows, CONTEXT first.
run "$TRAINJOB_BIN" get jobs --context local,lab --sort-by name
expect_rc "get jobs --context local,lab" 0
expect_grep "...has a CONTEXT column first" "$TMP/out" "CONTEXT"
if [ "$(head -1 "$TMP/out" | cut -c1-7)" = CONTEXT ] && [ "$(grep -c " same " "$TMP/out")" -eq 2 ] &&
    grep -q "^lab .*only-lab" "$TMP/out" && grep -q "^local .*only-local" "$TMP/out"; then
    pass "...each job once, in its context, same twice"
else fail "...each job once, in its context, same twice" "$(cat "$TMP/out")"; fi
run "$TRAINJOB_BIN" get jobs --context local,lab -o json
expect_rc "...-o json with several contexts is a usage error" 2

start_tui 100 24 "top --context local,lab"
see "the view over two contexts lists lab's jobs" "only-lab" 10
see "...and local's" "only-local" 10
screen
head -3 "$TMP/screen" >"$TMP/header"
expect_grep "...with a CONTEXT column" "$TMP/header" "CONTEXT"
n=$(grep -c "same" "$TMP/screen")
if [ "$n" -eq 2 ]; then pass "...the same name in two contexts is two rows"; else
    fail "...the same name in two contexts is two rows" "$n rows: $(cat "$TMP/screen")"
fi
see_row "...each row says its context (local)" "local" "only-local"
see_row "...each row says its context (lab)" "lab" "only-lab"
see "...the header says both contexts are up" "local ✓  lab ✓"
see "...the title counts both contexts' jobs" "jobs 4"

# `s` on lab's "same": the filter narrows to it, the cursor is on it.
keys /
keys "context=lab name=same" Enter
see_row "the filter narrows to lab's same" "lab" "same"
screen
n=$(grep -c "same" "$TMP/screen")
if [ "$n" -eq 1 ]; then pass "...one row left"; else fail "...one row left" "$(cat "$TMP/screen")"; fi
keys s
see "s asks to stop it, naming its context" "same on lab"
keys y
see "...the status says where" "stopping 1 job on lab" 5
gone "...and goes once lab's same has stopped (local's same runs on)" "stopping 1 job on"
if state lab same "SUSPENDING|SUSPENDED" 20; then pass "...lab's same stops"; else
    fail "...lab's same stops" "$(cat "$TMP/out")"
fi
if state local same RUNNING 1; then pass "...local's same keeps running"; else
    fail "...local's same keeps running" "$(cat "$TMP/out")"
fi
keys /
keys C-u Enter
see_row "...the view shows lab's same stopped" "lab" "SUSPEND" 20

# Enter on lab's only job opens its screen on lab.
keys /
keys "only-lab" Enter
keys Enter
see "Enter opens the job screen in the row's context" "lab/default" 10
see "...with lab's job" "only-lab"
keys Escape
keys /
keys C-u Enter
see "Esc: the view over both again" "only-local"

# Lab's engine goes away: its rows only say so.
kill -KILL "$PID_B" && wait "$PID_B" 2>/dev/null
PID_B=""
see "lab's engine killed: the header says lab is DISCONNECTED" "lab ✗ DISCONNECTED" 15
see_row "...lab's rows say DISCONNECTED" "only-lab" "DISCONNECTED"
screen
if grep "only-local" "$TMP/screen" | grep -q DISCONNECTED; then
    fail "...local's rows do not" "$(cat "$TMP/screen")"
else pass "...local's rows do not"; fi
expect_grep "...local is still up in the header" "$TMP/screen" "local ✓"
run at local submit -f "$TMP/new-on-local.yaml"
expect_rc "a new job on local" 0
see "...appears while lab is down" "new-on-local" 10
run "$TRAINJOB_BIN" get jobs --context local,lab
if [ "$rc" -ne 0 ] && grep -q "^local .*new-on-local" "$TMP/out" && grep -q "lab" "$TMP/err"; then
    pass "get jobs over both with lab down: local's rows, lab's failure named, non-zero exit"
else fail "get jobs over both with lab down: local's rows, lab's failure named, non-zero exit" \
    "exit $rc: $(cat "$TMP/out" "$TMP/err")"; fi

# Lab's engine comes back: its rows resume by themselves (within the backoff).
start_at B || fail "lab's engine starts again"
see "lab back: the header says so" "lab ✓" 40
gone "...its rows no longer say DISCONNECTED" "DISCONNECTED"
see_row "...lab's rows are there" "lab" "only-lab"
keys q
see "q ends the view over two contexts with status 0" "EXIT=0" 10
expect_no_grep "...and nothing from a sanitizer" "$TMP/screen" "Sanitizer"

# :ctx all: every context of config.yaml; :ctx local: the single view as before.
start_tui 100 24 "--context local top"
see "one context: its jobs" "only-local" 10
screen
if grep -q "CONTEXT" "$TMP/screen"; then fail "...and no CONTEXT column" "$(cat "$TMP/screen")"; else
    pass "...and no CONTEXT column"
fi
keys :
keys "ctx all" Enter
see "\`:ctx all\` opens every context" "only-lab" 10
see "...with the CONTEXT column" "CONTEXT"
keys :
keys "ctx local" Enter
gone "\`:ctx local\` is one context again" "only-lab"
gone "...without CONTEXT" "CONTEXT"
keys q
see "q ends it with status 0" "EXIT=0" 10
expect_no_grep "...and nothing from a sanitizer" "$TMP/screen" "Sanitizer"

run "$TRAINJOB_BIN" top --context local,lab --endpoint "http+unix://$SOCK_A"
expect_rc "--endpoint with several contexts is a usage error" 2
run "$TRAINJOB_BIN" top --help
expect_grep "top --help says --context a,b" "$TMP/out" "--context NAME|A,B,…|all"

# Completion: top's --context offers "all" and a second name after a comma.
HOME="$HOME" "$TRAINJOB_BIN" __complete top --context "local," >"$TMP/out" 2>&1
expect_grep "completion offers local,lab after local," "$TMP/out" "local,lab"
HOME="$HOME" "$TRAINJOB_BIN" __complete top --context "" >"$TMP/out" 2>&1
expect_grep "...and all" "$TMP/out" "all"

# ---- two users: tj-alice's view over both contexts, tj-bob's job in it ------
shared_tmp "$TMP/users"
# A HOME for each with contexts local and lab over TCP in workspace team,
# signed with the user's own key.
signed_home "$A" SKA local="$PORT_A" lab="$PORT_B"
signed_home "$B" SKB local="$PORT_A" lab="$PORT_B"
as() { _u=$1; shift; as_user "$_u" env HOME="$TMP/users/$_u" "$TRAINJOB_BIN" "$@"; }
sed 's/^workspace_name: default/workspace_name: team/; s/^name: same/name: alices/; s/^display_name: same/display_name: alices/' \
    "$TMP/same.yaml" >"$TMP/users/alices.yaml"
sed 's/alices/bobs/g' "$TMP/users/alices.yaml" >"$TMP/users/bobs.yaml"
chmod 0644 "$TMP/users/alices.yaml" "$TMP/users/bobs.yaml"
run as "$A" --context local submit -f "$TMP/users/alices.yaml"
expect_rc "tj-alice submits alices on local" 0
run as "$B" --context lab submit -f "$TMP/users/bobs.yaml"
expect_rc "tj-bob submits bobs on lab" 0
# The pane runs top as tj-alice, with her HOME.
cat >"$TMP/users/as-alice" <<EOF
#!/bin/sh
exec setpriv --reuid=$A --regid=$A --init-groups -- env HOME="$TMP/users/$A" USER=$A "$TRAINJOB_BIN" "\$@"
EOF
chmod 0755 "$TMP/users/as-alice"
REAL_BIN=$TRAINJOB_BIN
TRAINJOB_BIN="$TMP/users/as-alice"
start_tui 100 24 "top --context local,lab"
TRAINJOB_BIN=$REAL_BIN
see "tj-alice's view over both: her job on local" "alices" 15
see_row "...and tj-bob's on lab" "lab" "bobs" 15
keys m
gone "m: hers only, in both contexts (lab says who she is too)" "bobs"
see "...hers stays" "alices"
keys m
see "m again: everyone's" "bobs" 5
keys /
keys "bobs" Enter
keys s
see "s on tj-bob's job asks, naming lab" "bobs on lab"
keys y
see "...lab refuses her, said as lab's" "lab: user '$A' may not change job 'bobs'" 10
sleep 1
run "$REAL_BIN" --endpoint "http+unix://$SOCK_B" --workspace team get job bobs -o json
expect_grep "...and tj-bob's job runs on" "$TMP/out" '"state": "RUNNING"'
keys /
keys C-u "alices" Enter
keys s
keys y
see_row "her own job on local stops" "alices" "SUSPENDED" 20
run "$REAL_BIN" --endpoint "http+unix://$SOCK_A" --workspace team get job alices -o json
expect_grep "...on local, as the CLI says" "$TMP/out" '"state": "SUSPENDED"'
keys q
see "tj-alice's top ends with status 0" "EXIT=0" 10
