#!/bin/sh
# Slurm behaves as trainjobd does, driven through the CLI and `trainjob top`
# on the project's throw-away cluster (tests/slurm/cluster.sh), as a user
# would see it:
#   a waiting job shows WORKERS 0/2 and its PRIORITY (NORMAL), not -/2 and -;
#   its history reads QUEUEING → RUNNING → SUCCEEDED (describe, get events,
#     top's history line), never → STATE_UNSPECIFIED;
#   top left open on the job's screen while it ends shows its workers
#     Succeeded, not Running;
#   restarts are counted as trainjobd counts them: a RESTART_JOB (exit 5, no
#     rule) then a RESTART_POD (exit 3, rule 1) of worker-0 leave master-0 at
#     0 and worker-0 at 1; worker-0's exit 0 names no rule; each attempt's log
#     starts with "--- … (attempt N) ---"; the second quick restart waits out
#     trainjobd's back-off (10 s) and says so;
#   AGE is from creation: stop and start keep the job's create_time;
#   every time printed (describe, get events, -o json|yaml) has one form,
#     YYYY-MM-DDTHH:MM:SSZ;
#   the Slurm job id is a column of get jobs -o wide (ID) and a line of describe.
# If the cluster cannot start, the suite fails and says why.
. "$(dirname "$0")/lib.sh"
cd "$TRAINJOB_TOP" || exit 1
export LANG=C.UTF-8 LC_ALL=C.UTF-8

. tests/slurm/suite.sh
slurm_tui_start "tj-parity-$$"

export TRAINJOB_CONFIG="$TMP/config.yaml"
{
    printf 'current_context: lab\ncontexts:\n'
    slurm_context lab
    printf '    token_file: %s\n    workspace: default\n' "$TMP/token"
} >"$TRAINJOB_CONFIG"
# where par's worker counts its attempts (workers run as the cluster's job user)
mkdir -m 1777 "$TMP/count"

# hog: every GPU of the cluster, so that par waits behind it
cat >"$TMP/hog.yaml" <<'EOF'
workspace_name: default
name: hog
display_name: hog
framework: PYTORCH
resource_pool:
  name: standard
roles:
  - total_replicas: 3
    resource_spec:
      - name: gpu-8
    image_path: local/host
    startup_script: sleep 300
EOF
# par: worker-0 exits 5 (no rule: RESTART_JOB), then 3 (rule 1: RESTART_POD), then 0
cat >"$TMP/par.yaml" <<EOF
workspace_name: default
name: par
display_name: par
framework: PYTORCH_DDP
resource_pool:
  name: standard
fault_tolerance:
  backoff_limit: 5
  rules:
    - exit_codes: "3"
      action: RESTART_POD
roles:
  - total_replicas: 2
    resource_spec:
      - name: gpu-2
    image_path: local/host
    startup_script: |
      if [ "\$RANK" = 1 ]; then
        n=\$(cat $TMP/count/w 2>/dev/null || echo 0); n=\$((n + 1)); echo \$n > $TMP/count/w
        echo "worker attempt \$n"
        [ \$n = 1 ] && exit 5
        [ \$n = 2 ] && exit 3
        sleep 2
        exit 0
      fi
      echo "master up"
      sleep 24
EOF

run tj submit -f "$TMP/hog.yaml"
expect_rc "a job holding every GPU is submitted" 0
expect_state "...and runs" hog RUNNING 30
run tj get job hog -o json
hog_created=$(jq -r .create_time "$TMP/out")
run tj submit -f "$TMP/par.yaml"
expect_rc "a 2-worker job is submitted behind it" 0
expect_state "...and waits" par QUEUEING 20
if awk '$1 == "par" && $3 == "QUEUEING" && $4 == "NORMAL" && $6 == "0/2" { f = 1 } END { exit !f }' "$TMP/jobs"; then
    pass "...showing WORKERS 0/2 and PRIORITY NORMAL, as trainjobd"
else
    fail "...showing WORKERS 0/2 and PRIORITY NORMAL, as trainjobd" "$(cat "$TMP/jobs")"
fi

# AGE is from creation: a stop and a start (a new Slurm job) keep create_time
sleep 1
run tj stop hog
expect_rc "stop of the first job works" 0
expect_state "...it is SUSPENDED" hog SUSPENDED 30
run tj start hog
expect_rc "...and start works" 0
run tj get job hog -o json
if [ -n "$hog_created" ] && [ "$(jq -r .create_time "$TMP/out")" = "$hog_created" ]; then
    pass "...keeping its create_time (AGE is from creation)"
else
    fail "...keeping its create_time (AGE is from creation)" "was $hog_created, now $(jq -r .create_time "$TMP/out")"
fi

expect_state "the second job runs once the GPUs are free" par RUNNING 30
run tj get job par -o json
id=$(jq -r '.id // empty' "$TMP/out")

# top left open on the job's screen while the job ends
TUI_ENV="TRAINJOB_CONFIG='$TRAINJOB_CONFIG' LANG=C.UTF-8"
start_tui 160 45 "top"
see_row "top lists the running job" "par" "RUNNING" 15
keys / par Enter
keys Enter
if wait_screen "master-0" 10; then pass "...its job screen opens"; else fail "...its job screen opens" "$(cat "$TMP/screen")"; fi
expect_state "the job SUCCEEDED after two restarts" par SUCCEEDED 120
# the screen left open follows it: the workers end, the history says so
see_row "top's open job screen shows master-0 Succeeded" "master-0" "Succeeded" 20
see_row "...and worker-0 Succeeded" "worker-0" "Succeeded" 10
screen
if grep -E "(master|worker)-0 .*Running" "$TMP/screen" >/dev/null; then
    fail "...no worker left Running" "$(cat "$TMP/screen")"
else
    pass "...no worker left Running"
fi
see_row "...its history reads QUEUEING → RUNNING" "QUEUEING" "→ RUNNING" 5
see_row "...then RUNNING → SUCCEEDED" "RUNNING" "→ SUCCEEDED" 5
if grep -q "STATE_UNSPECIFIED" "$TMP/screen"; then fail "...never → STATE_UNSPECIFIED" "$(cat "$TMP/screen")"; else pass "...never → STATE_UNSPECIFIED"; fi
tui_cleanup
# a fresh top too
start_tui 160 45 "top"
see_row "a fresh top lists the job SUCCEEDED" "par" "SUCCEEDED" 15
keys / par Enter
keys Enter
see_row "...its history reads RUNNING → SUCCEEDED" "RUNNING" "→ SUCCEEDED" 10
if grep -q "STATE_UNSPECIFIED" "$TMP/screen"; then fail "...never → STATE_UNSPECIFIED (fresh)" "$(cat "$TMP/screen")"; else pass "...never → STATE_UNSPECIFIED (fresh)"; fi
tui_cleanup

# restarts, counted as trainjobd counts them
run tj get workers par
if awk '$1 == "master-0" && $5 == "0" { m = 1 } $1 == "worker-0" && $5 == "1" { w = 1 } END { exit !(m && w) }' "$TMP/out"; then
    pass "RESTARTS: master-0 0, worker-0 1 (a RESTART_JOB counts in the job's, a RESTART_POD in the worker's)"
else
    fail "RESTARTS: master-0 0, worker-0 1 (a RESTART_JOB counts in the job's, a RESTART_POD in the worker's)" "$(cat "$TMP/out")"
fi
if awk '$1 == "worker-0" && $4 == "Succeeded" && $6 == "0" { f = 1 } END { exit !f }' "$TMP/out" &&
    ! grep "^worker-0" "$TMP/out" | grep -q "rule\|RESTART"; then
    pass "...worker-0's EXIT is 0, naming no rule"
else
    fail "...worker-0's EXIT is 0, naming no rule" "$(cat "$TMP/out")"
fi
run tj get job par -o json
if [ "$(jq -r .restart_count "$TMP/out")" = 2 ]; then pass "...the job used 2 restarts"; else
    fail "...the job used 2 restarts" "restart_count $(jq -r .restart_count "$TMP/out")"
fi

# logs: a separator before each attempt, as trainjobd writes them
run tj logs par -w worker-0
for a in 1 2 3; do
    if grep -Eq "^--- [0-9T:-]+Z: worker-0 (started|restarted) on [^ ]+ \(attempt $a\) ---$" "$TMP/out"; then
        pass "worker-0's log marks attempt $a"
    else
        fail "worker-0's log marks attempt $a" "$(cat "$TMP/out")"
    fi
done
if awk '/attempt 1\) ---$/ { a = NR } /^worker attempt 1$/ { b = NR } /attempt 2\) ---$/ { c = NR } END { exit !(a && a < b && b < c) }' "$TMP/out"; then
    pass "...each attempt's lines after its separator"
else
    fail "...each attempt's lines after its separator" "$(cat "$TMP/out")"
fi
run tj logs par -w master-0
expect_grep "master-0's log marks its restart by the RESTART_JOB (attempt 2)" "$TMP/out" "(attempt 2) ---"

# the back-off: the second quick restart waits 10 s, as trainjobd's does
run tj get events par -o json
if jq -e '[.events[] | select(.message | test("^back-off 10s restarting failed worker-0"))] | length == 1' "$TMP/out" >/dev/null; then
    pass "the second quick restart says its back-off (10s)"
else
    fail "the second quick restart says its back-off (10s)" "$(jq -r '.events[] | .message' "$TMP/out")"
fi
t_fault=$(jq -r '[.events[] | select(.action == "RESTART_POD")][0].time // empty' "$TMP/out")
run tj logs par -w worker-0
t_start=$(sed -n 's/^--- \([^ ]*\): worker-0 restarted on .* (attempt 3) ---$/\1/p' "$TMP/out")
if [ -n "$t_fault" ] && [ -n "$t_start" ] &&
    [ $(($(date -d "$t_start" +%s) - $(date -d "$t_fault" +%s))) -ge 10 ]; then
    pass "...and waits it out before the restart ($t_fault → $t_start)"
else
    fail "...and waits it out before the restart" "fault $t_fault, restart $t_start"
fi

# the state history, and every time in one form
run tj get events par -o json
states=$(jq -c '[.events[] | select(.kind == "STATE") | .state]' "$TMP/out")
case $states in
'["RUNNING","SUCCEEDED"]' | '["RUNNING","RUNNING","SUCCEEDED"]') pass "get events: the state events say RUNNING, then SUCCEEDED" ;;
*) fail "get events: the state events say RUNNING, then SUCCEEDED" "$states" ;;
esac
bad=$(jq -r '.. | objects | to_entries[] | select(.key == "time" or (.key | endswith("_time"))) | .value | strings' "$TMP/out" |
    grep -Ev '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$')
if [ -z "$bad" ]; then pass "...every time in one form (YYYY-MM-DDTHH:MM:SSZ)"; else fail "...every time in one form" "$bad"; fi
run tj get job par -o yaml
bad=$(grep -E '^ *(create|start|complete|update)_time:' "$TMP/out" | grep -Ev "_time: '?[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z'?$")
if [ -z "$bad" ] && grep -q "create_time:" "$TMP/out"; then pass "get job -o yaml: its times in that form"; else
    fail "get job -o yaml: its times in that form" "$bad $(grep _time "$TMP/out")"
fi
run tj get events par
bad=$(tail -n +2 "$TMP/out" | grep -Ev '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z  ')
if [ -z "$bad" ]; then pass "get events: every TIME in that form, the columns in line"; else fail "get events: every TIME in that form, the columns in line" "$bad"; fi
run tj describe job par
expect_rc "describe works" 0
bad=$(sed -n '/^State history:/,/^Workers:/p; /^Events/,$p' "$TMP/out" | grep -E '^  [0-9]{4}-' |
    grep -Ev '^  [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z  ')
if [ -z "$bad" ]; then pass "describe: every time in that form, the columns in line"; else fail "describe: every time in that form, the columns in line" "$bad"; fi
if sed -n '/^State history:/,/^Workers:/p' "$TMP/out" | grep -q " RUNNING .*QUEUEING → RUNNING" &&
    sed -n '/^State history:/,/^Workers:/p' "$TMP/out" | grep -q " SUCCEEDED "; then
    pass "describe: the state history has QUEUEING → RUNNING and SUCCEEDED"
else
    fail "describe: the state history has QUEUEING → RUNNING and SUCCEEDED" "$(cat "$TMP/out")"
fi

# the Slurm job id: a line of describe, a column of -o wide
if [ -n "$id" ] && grep -Eq "^ID: +$id\$" "$TMP/out"; then pass "describe names the Slurm job id ($id)"; else
    fail "describe names the Slurm job id ($id)" "$(head -n 8 "$TMP/out")"
fi
run tj get jobs -o wide
if head -n 1 "$TMP/out" | grep -q " ID *$" && awk -v id="$id" '$1 == "par" && $NF == id { f = 1 } END { exit !f }' "$TMP/out"; then
    pass "get jobs -o wide has an ID column with it"
else
    fail "get jobs -o wide has an ID column with it" "$(cat "$TMP/out")"
fi
run tj get jobs
expect_no_grep "...which the narrow table leaves out" "$TMP/out" " ID"
