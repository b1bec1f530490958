# trainjob's kubectl-grade conventions against a real trainjobd (tests/engine.sh):
# describe job, get -w/--watch (table and -o json), -o name, --no-headers,
# --sort-by (a bad field names the valid ones), --mine/--user, get catalog,
# and one exit-status rule for every verb — 0 done (also when the job already
# was in the state asked for), 1 refused/not found/wrong state, 2 usage,
# 3 no server — documented in --help.
. "$(dirname "$0")/lib.sh"
cd "$TRAINJOB_TOP" || exit 1
. tests/engine.sh
tj=$TRAINJOB_BIN
unset TRAINJOB_ENDPOINT XDG_CONFIG_HOME XDG_STATE_HOME XDG_RUNTIME_DIR
E="--endpoint http+unix://$SOCK --workspace default"
WATCH_PIDS=""

# Ends the watches this test started (by pid), then the engine and its workers.
cleanup() {
    for _p in $WATCH_PIDS; do kill "$_p" 2>/dev/null && wait "$_p" 2>/dev/null; done
    engine_cleanup
    rm -rf "$TMP"
}

# wait_grep SECONDS FILE PATTERN : waits (bounded) until FILE has a line with PATTERN.
wait_grep() {
    _n=0
    while [ $_n -lt $(($1 * 10)) ]; do
        grep -qF -- "$3" "$2" 2>/dev/null && return 0
        sleep 0.1
        _n=$((_n + 1))
    done
    return 1
}

# job_file NAME SCRIPT : a job file for the std pool at $TMP/NAME.yaml.
job_file() {
    cat >"$TMP/$1.yaml" <<EOF
name: $1
display_name: $1-job
framework: PYTORCH_DDP
resource_pool: {name: std}
roles:
  - total_replicas: 1
    resource_spec: [{name: cpu-1}]
    image_path: local/host
    startup_script: "echo describe must wrap this command at eighty columns, never cut it; $2"
fault_tolerance:
  backoff_limit: 1
  rules:
    - exit_codes: "7"
      action: FAIL_JOB
EOF
}

engine_config volume </dev/null
start_engine || { fail "the engine starts" "$(cat "$TMP/engine.log")"; exit 1; }

# ---- the rule, documented ----------------------------------------------------
run "$tj" --help
expect_grep "--help documents exit 0 (also when already in the state)" "$TMP/out" "also when it already was"
expect_grep "--help documents exit 3" "$TMP/out" "3  the server cannot be reached"
expect_grep "--help lists describe" "$TMP/out" "describe job NAME"
grep -q "^| 3 " README.md && pass "README documents exit 3" || fail "README documents exit 3"

# ---- jobs ------------------------------------------------------------------
job_file sleeper "sleep 120"
job_file fails "exit 7"
job_file alpha "sleep 120"
for j in sleeper fails alpha; do
    run "$tj" $E submit -f "$TMP/$j.yaml"
    expect_rc "submit $j" 0
done
_n=0
until "$tj" $E get job fails -o json 2>/dev/null | grep -q '"state": "FAILED"'; do
    _n=$((_n + 1)); [ $_n -gt 300 ] && break; sleep 0.1
done
_n=0
until "$tj" $E get job sleeper -o json 2>/dev/null | grep -q '"state": "RUNNING"'; do
    _n=$((_n + 1)); [ $_n -gt 300 ] && break; sleep 0.1
done

# ---- -o name, --no-headers, --sort-by -----------------------------------------
run "$tj" $E get jobs -o name --sort-by name
expect_rc "get jobs -o name" 0
if [ "$(cat "$TMP/out")" = "$(printf 'job/alpha\njob/fails\njob/sleeper')" ]; then
    pass "-o name prints job/NAME lines, sorted by name"
else fail "-o name prints job/NAME lines, sorted by name" "$(cat "$TMP/out")"; fi

run "$tj" $E get jobs --no-headers --sort-by name
expect_rc "get jobs --no-headers" 0
expect_no_grep "--no-headers drops the head" "$TMP/out" "DISPLAY NAME"
[ "$(head -n1 "$TMP/out" | cut -d' ' -f1)" = alpha ] && pass "--no-headers: the first line is a job" ||
    fail "--no-headers: the first line is a job" "$(cat "$TMP/out")"

run "$tj" $E get jobs --sort-by state -o name
expect_rc "--sort-by state" 0
[ "$(head -n1 "$TMP/out")" = job/fails ] && pass "--sort-by state: FAILED before RUNNING" ||
    fail "--sort-by state: FAILED before RUNNING" "$(cat "$TMP/out")"

run "$tj" $E get jobs --sort-by colour
expect_rc "--sort-by an unknown field is a usage error" 2
expect_grep "the error names the valid fields" "$TMP/err" "sort by one of: name created state priority"

run "$tj" $E get workers sleeper -o name
expect_rc "get workers -o name" 0
expect_grep "workers as worker/NAME" "$TMP/out" "worker/master-0"
run "$tj" $E get workers sleeper
expect_rc "get workers" 0
expect_grep "get workers titles what a worker holds HELD DEVICES, as the workers pane does" "$TMP/out" "HELD DEVICES"

# ---- --mine / --user -----------------------------------------------------------
run "$tj" $E get jobs --mine -o name
expect_rc "get jobs --mine" 0
expect_grep "--mine lists the jobs I created" "$TMP/out" "job/sleeper"
run "$tj" $E get jobs --user "$ME" -o name
expect_grep "--user ME lists them too" "$TMP/out" "job/alpha"
run "$tj" $E get jobs --user someone-else
expect_rc "--user with no jobs is not an error" 0
[ -s "$TMP/out" ] && fail "--user someone-else lists nothing" "$(cat "$TMP/out")" ||
    pass "--user someone-else lists nothing"
expect_grep "it says none were created by them" "$TMP/err" "created by someone-else"
run "$tj" $E get jobs --user "x' OR name='y"
expect_rc "a quote in --user is refused before it reaches the filter" 2
run "$tj" $E get jobs --mine --user x
expect_rc "--mine with --user is a usage error" 2

# ---- get catalog -----------------------------------------------------------------
run "$tj" $E get catalog
expect_rc "get catalog" 0
expect_grep "the catalog lists the pool and its spec" "$TMP/out" "cpu-1"
expect_grep "the catalog lists the image" "$TMP/out" "local/host"
if grep -q '^scratch .* local-1z' "$TMP/out"; then pass "the catalog lists the volumes, with their zones"; else
    fail "the catalog lists the volumes, with their zones" "$(cat "$TMP/out")"
fi
expect_grep "an owner may set every priority" "$TMP/out" "priorities you may set: NORMAL HIGH HIGHEST"
run "$tj" $E get catalog -o json
expect_rc "get catalog -o json" 0
expect_grep "the JSON catalog has the priorities" "$TMP/out" '"priorities"'
run "$tj" $E get catalog -o yaml
expect_rc "get catalog -o yaml" 0
expect_grep "the YAML catalog has the pools" "$TMP/out" "pools:"

# ---- describe -----------------------------------------------------------------------
run "$tj" $E describe job fails
expect_rc "describe job" 0
expect_grep "describe names the job" "$TMP/out" "Name:           fails"
expect_grep "describe says why it failed" "$TMP/out" "Failed because:"
expect_grep "describe has a state history" "$TMP/out" "State history:"
expect_grep "the history says where the job came from" "$TMP/out" "CREATED"
expect_grep "describe lists the workers with the matched rule" "$TMP/out" "1 FAIL_JOB"
expect_grep "describe lists the events" "$TMP/out" "Events:"
# wc -L measures display columns in a UTF-8 locale (→ is one column, three bytes).
if [ "$(LC_ALL=C.UTF-8 wc -L <"$TMP/out")" -le 80 ]; then
    pass "describe wraps at 80 columns without a terminal"
else fail "describe wraps at 80 columns without a terminal" "$(LC_ALL=C.UTF-8 wc -L <"$TMP/out")"; fi
expect_grep "the long display name is wrapped, not cut" "$TMP/out" "eighty columns"
run "$tj" $E describe job no-such-job
expect_rc "describe of an unknown job exits 1" 1
run "$tj" $E describe pod x
expect_rc "describe of an unknown kind is a usage error" 2

# ---- watch ----------------------------------------------------------------------------
"$tj" $E get jobs -w -o json >"$TMP/w.json" 2>"$TMP/w.err" &
WATCH_PIDS="$WATCH_PIDS $!"
"$tj" $E get jobs -w >"$TMP/w.table" 2>&1 &
WATCH_PIDS="$WATCH_PIDS $!"
"$tj" $E get events sleeper -w >"$TMP/w.events" 2>&1 &
WATCH_PIDS="$WATCH_PIDS $!"
wait_grep 20 "$TMP/w.json" '"name":"sleeper"' && pass "watch -o json prints the list first" ||
    fail "watch -o json prints the list first" "$(cat "$TMP/w.json" "$TMP/w.err")"
wait_grep 20 "$TMP/w.table" "sleeper" && pass "watch prints the table first" ||
    fail "watch prints the table first" "$(cat "$TMP/w.table")"
"$tj" $E get workers sleeper -w -o json >"$TMP/w.workers" 2>&1 &
WATCH_PIDS="$WATCH_PIDS $!"
wait_grep 20 "$TMP/w.events" "CREATED" || true
wait_grep 20 "$TMP/w.workers" '"name":"master-0"' || true

# ---- exit status: stop/start/delete ----------------------------------------------------
run "$tj" $E stop sleeper
expect_rc "stop a running job: 0" 0
wait_grep 20 "$TMP/w.json" '"state":"SUSPENDED"' && pass "watch -o json prints the change as a line" ||
    fail "watch -o json prints the change as a line" "$(tail -n3 "$TMP/w.json")"
if awk 'NR > 1 && !/^\{.*\}$/ { bad = 1 } END { exit bad }' "$TMP/w.json"; then
    pass "watch -o json: one object per line"
else fail "watch -o json: one object per line" "$(head -c 600 "$TMP/w.json")"; fi
wait_grep 20 "$TMP/w.table" "SUSPENDED" && pass "the table watch prints a line per change" ||
    fail "the table watch prints a line per change" "$(cat "$TMP/w.table")"
wait_grep 20 "$TMP/w.events" "stopped by $ME" && pass "get events -w prints the new event, naming who stopped it" ||
    fail "get events -w prints the new event, naming who stopped it" "$(cat "$TMP/w.events")"
wait_grep 20 "$TMP/w.workers" '"exit_code":143' && pass "get workers -w prints the worker's change" ||
    fail "get workers -w prints the worker's change" "$(cat "$TMP/w.workers")"
[ "$(grep -c NAME "$TMP/w.table")" -eq 1 ] && pass "the table watch prints its head once" ||
    fail "the table watch prints its head once" "$(cat "$TMP/w.table")"

run "$tj" $E stop sleeper
expect_rc "stop a stopped job: 0 (already in the state asked for)" 0
expect_grep "stop says there was nothing to stop" "$TMP/out" "nothing to stop"
run "$tj" $E start sleeper
expect_rc "start a stopped job: 0" 0
run "$tj" $E start sleeper
expect_rc "start a started job: 0 (already in the state asked for)" 0
expect_grep "start says it already was" "$TMP/out" "already started"
run "$tj" $E start fails
expect_rc "start a FAILED job: 1 (wrong state)" 1
expect_grep "start says why" "$TMP/err" "only a stopped (SUSPENDED) job can be started"
run "$tj" $E stop fails
expect_rc "stop a finished job: 0 (it is not running)" 0
run "$tj" $E stop no-such-job
expect_rc "stop an unknown job: 1" 1
run "$tj" $E start no-such-job
expect_rc "start an unknown job: 1" 1
run "$tj" $E delete no-such-job
expect_rc "delete an unknown job: 1" 1
run "$tj" $E get job no-such-job
expect_rc "get an unknown job: 1" 1
run "$tj" $E logs no-such-job
expect_rc "logs of an unknown job: 1" 1
run "$tj" $E stop
expect_rc "stop without a name: 2" 2
run "$tj" $E get jobs --bogus
expect_rc "an unknown option: 2" 2
run "$tj" $E delete alpha
expect_rc "delete a job: 0" 0

# ---- exit status 3: no server -----------------------------------------------------------
N="--endpoint http+unix://$TMP/none.sock --workspace default"
for v in "get jobs" "get job x" "describe job x" "stop x" "start x" "delete x" "logs x" \
    "get catalog" "get jobs -w" "submit -f $TMP/sleeper.yaml"; do
    run "$tj" $N $v
    expect_rc "no server: $v exits 3" 3
done
expect_grep "it says it cannot reach the server" "$TMP/err" "cannot reach"
