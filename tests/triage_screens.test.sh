# Triage at 80×24 (issue 22), the way the user did it: over tmux, a real
# trainjobd on a private socket, the issue's failing DDP job — 2 workers,
# rank 1 exits 201 under a RESTART_POD rule, then master-0 exits 1 (no rule:
# the default RESTART_JOB), then both run and succeed — and a FAIL_JOB job.
# What a user must see:
#   the jobs view: AGE and TIME tick between two captures with nothing else
#     changing (they stayed frozen until a refresh);
#   the job screen: each worker's Last State beside its phase, the exit and
#     the rule and action that decided (master-0 showed "Running 0 -");
#   get workers: a LAST STATE column, -o json last_state; describe: a
#     "Last State:" block per worker; describe of the job once it succeeded:
#     its end as the reason, never the old back-off;
#   the audit trail, as two real users: tj-alice (owner of workspace team)
#     raises a job's priority and stops it; tj-bob (member) reads events that
#     name her, from and to.
# The captures are kept under $SCREENS (build/screens), named trainjobd-*.txt:
# run against another tree's binaries (TRAINJOB_BIN=… TRAINJOBD_BIN=…
# SCREENS=…) they are that tree's "before" screens.
. "$(dirname "$0")/lib.sh"
cd "$TRAINJOB_TOP" || exit 1
SESSION="tj-triage-$$"
. tests/tui.sh
: "${SCREENS:=$TRAINJOB_TOP/build/screens}"
mkdir -p "$SCREENS"

if [ "$(id -u)" != 0 ]; then
    fail "two users" "the audit checks need root to make tj-alice and tj-bob"
    exit 1
fi
tj_users || { fail "the two users can be made"; exit 1; }

engine_config <<EOF2
- name: team
  owners: [$TJ_ALICE]
  members: [$TJ_BOB]
limits:
  restart_delay_ms: 300
  restart_delay_max_ms: 600
EOF2
start_engine || exit 1
# The users reach the engine's socket as they would a team's shared trainjobd.
shared_tmp "$TMP/run"
chmod 0666 "$SOCK"

# capture NAME: the screen as it is now, kept as $SCREENS/trainjobd-NAME.txt
capture() {
    tmux capture-pane -t "$SESSION" -p >"$SCREENS/trainjobd-$1.txt"
    cp "$SCREENS/trainjobd-$1.txt" "$TMP/screen"
}

cat >"$TMP/ddp.yaml" <<'EOF'
workspace_name: default
name: ddp-fail
display_name: ddp-fail
framework: PYTORCH_DDP
resource_pool: {name: std}
roles:
  - total_replicas: 2
    resource_spec: [{name: cpu-1}]
    image_path: local/host
    startup_script: |
      if [ "$RANK" = 1 ] && [ ! -e w201 ]; then : > w201; sleep 1; echo "rank 1 dies"; exit 201; fi
      if [ "$RANK" = 0 ] && [ ! -e m1 ]; then
        while [ ! -e w201 ]; do sleep 0.2; done; sleep 2; : > m1
        echo "RuntimeError: Connection closed by peer" >&2; exit 1
      fi
      sleep 40; exit 0
fault_tolerance:
  backoff_limit: 3
  rules: [{exit_codes: "201", action: RESTART_POD}]
EOF
cat >"$TMP/fail.yaml" <<'EOF'
workspace_name: default
name: fail-job
display_name: fail-job
framework: PYTORCH_DDP
resource_pool: {name: std}
roles:
  - total_replicas: 1
    resource_spec: [{name: cpu-1}]
    image_path: local/host
    startup_script: 'echo "bad input"; exit 3'
fault_tolerance:
  backoff_limit: 3
  rules: [{exit_codes: "3", action: FAIL_JOB}]
EOF
run tj submit -f "$TMP/fail.yaml"
expect_rc "the FAIL_JOB job is submitted" 0
run tj submit -f "$TMP/ddp.yaml"
expect_rc "the DDP job is submitted" 0
wait_state fail-job FAILED 30 || fail "fail-job fails" "$(cat "$TMP/out")"
# RUNNING again after the job's restart: restarts 2 (the pod's, then the job's).
n=0
until tj get job ddp-fail -o json >"$TMP/out" 2>&1 &&
    grep -q '"state": "RUNNING"' "$TMP/out" && grep -q '"restart_count": 2' "$TMP/out"; do
    n=$((n + 1))
    [ $n -lt 150 ] || break
    sleep 0.2
done
if [ $n -lt 150 ]; then pass "ddp-fail runs again after restarts 2/3"; else
    fail "ddp-fail runs again after restarts 2/3" "$(cat "$TMP/out")"
fi

# ---- the CLI ------------------------------------------------------------------

run tj get workers ddp-fail
expect_rc "get workers" 0
expect_grep "get workers has a LAST STATE column" "$TMP/out" "LAST STATE"
if awk '$1 == "master-0" && $3 == "n1" && /Running/ && /exit 1 \(RESTART_JOB, default rule\) [0-9]+s ago/ { ok = 1 }
        END { exit !ok }' "$TMP/out"; then pass "master-0 runs, its last state the exit 1 and the default rule"; else
    fail "master-0 runs, its last state the exit 1 and the default rule" "$(cat "$TMP/out")"
fi
if awk '$1 == "worker-0" && /Running/ && /exit 201 \(RESTART_POD, rule 1\)/ { ok = 1 } END { exit !ok }' \
    "$TMP/out"; then pass "worker-0 keeps its exit 201 and rule 1 through the job's restart"; else
    fail "worker-0 keeps its exit 201 and rule 1 through the job's restart" "$(cat "$TMP/out")"
fi
run tj get workers ddp-fail -o json
if jq -e '.workers[] | select(.name == "master-0") | .last_state |
        .exit_code == 1 and .action == "RESTART_JOB" and (has("rule") | not) and
        .exit_reason == "general error" and (.message | test("restarting the job"))' "$TMP/out" >/dev/null &&
    jq -e '.workers[] | select(.name == "worker-0") | .last_state |
        .exit_code == 201 and .rule == 1 and .action == "RESTART_POD" and .finish_time != null' \
        "$TMP/out" >/dev/null; then
    pass "get workers -o json carries last_state"
else
    fail "get workers -o json carries last_state" "$(cat "$TMP/out")"
fi
run tj describe job ddp-fail
expect_rc "describe" 0
cp "$TMP/out" "$SCREENS/trainjobd-describe-running.txt"
expect_grep "describe has a Last State block" "$TMP/out" "Last State:"
expect_grep "...master-0 terminated with exit 1 and its meaning" "$TMP/out" "master-0:  Terminated, exit 1 (general error)"
expect_grep "...the default rule decided RESTART_JOB" "$TMP/out" "default rule (none matched) → RESTART_JOB"
expect_grep "...worker-0's rule 1 decided RESTART_POD" "$TMP/out" "rule 1 → RESTART_POD"
if awk '/^Reason:/ && /back-off/ { bad = 1 } END { exit bad }' "$TMP/out"; then
    pass "a running job's reason is no back-off from before it ran again"
else
    fail "a running job's reason is no back-off from before it ran again" "$(grep '^Reason' "$TMP/out")"
fi

# The engine restarted (its workers run on under their shims): the last states are kept.
stop_engine TERM
start_engine || exit 1
chmod 0666 "$SOCK"
run tj get workers ddp-fail -o json
if jq -e '[.workers[] | .last_state.exit_code] | sort == [1, 201]' "$TMP/out" >/dev/null; then
    pass "the last states outlive a restart of trainjobd"
else
    fail "the last states outlive a restart of trainjobd" "$(cat "$TMP/out")"
fi

# ---- the jobs view at 80×24: ages tick ---------------------------------------

start_tui 80 24 "--endpoint '$EP' top"
wait_screen "ddp-fail" 10 && wait_screen "fail-job" 5
sleep 1
capture jobs-1
row1=$(grep -F "ddp-fail" "$TMP/screen")
frow1=$(grep -F "fail-job" "$TMP/screen")
sleep 2.5
capture jobs-2
row2=$(grep -F "ddp-fail" "$TMP/screen")
frow2=$(grep -F "fail-job" "$TMP/screen")
if [ -n "$row1" ] && [ "$row1" != "$row2" ]; then pass "the running job's AGE and TIME tick with nothing else changing"; else
    fail "the running job's AGE and TIME tick with nothing else changing" "'$row1' then '$row2'"
fi
if [ -n "$frow1" ] && [ "$frow1" != "$frow2" ]; then pass "the failed job's AGE ticks"; else
    fail "the failed job's AGE ticks" "'$frow1' then '$frow2'"
fi
keys q

# ---- the job screen at 80×24: Last State beside the phase --------------------

start_tui 80 24 "--endpoint '$EP' top --job ddp-fail"
wait_screen "master-0" 10
sleep 1
capture job-ddp-fail
see "the workers pane titles LAST STATE" "LAST STATE"
see_row "master-0 shows its last exit and what was done" "master-0" "exit 1 (RESTART_JOB"
see_row "worker-0 shows its exit 201 and what was done" "worker-0" "exit 201 (RESTART_POD"
# HELD DEVICES holds "-": its title gives way to HELD (RESTARTS' to RST), not LAST STATE's text.
see_row "at 80 columns worker-0's last state is whole" "worker-0 worker" "exit 201 (RESTART_POD, rule 1)"
see_row "...and master-0's" "master-0 master" "exit 1 (RESTART_JOB, default rule)"
# ...with its age, bare ("5s": the title has "ago"), never cut to "5s a…".
cell=$(grep -E "^[ >▸]*worker-0 " "$TMP/screen" | grep -F "exit ")
if printf '%s\n' "$cell" | grep -qE 'rule 1\) [0-9]+[smhd] ' && ! printf '%s\n' "$cell" | grep -q '…'; then
    pass "...worker-0's LAST STATE cell ends with its age, whole"
else fail "...worker-0's LAST STATE cell ends with its age, whole" "'$cell'"; fi
see_row "...the header abbreviates what holds little" "NAME" "LAST STATE"
if grep -q "  HELD  *AGE" "$TMP/screen" && ! grep -q "HELD DEVICES" "$TMP/screen"; then
    pass "...HELD for HELD DEVICES"
else fail "...HELD for HELD DEVICES" "$(cat "$TMP/screen")"; fi
see "the pane's title gives the cursor's worker's last state in full" \
    "Workers 2 · master-0 last: exit 1 (RESTART_JOB, default rule)"
keys Down
see "...and follows the cursor" "Workers 2 · worker-0 last: exit 201 (RESTART_POD, rule 1)"
if grep -qE "Workers 2 · worker-0 last: exit 201 \(RESTART_POD, rule 1\) [0-9]+[smhd] ago" "$TMP/screen"; then
    pass "...the title keeps the long form, with \"ago\""
else fail "...the title keeps the long form, with \"ago\"" "$(grep -F 'Workers 2' "$TMP/screen")"; fi
capture job-ddp-fail-worker-0
keys q
start_tui 80 24 "--endpoint '$EP' top --job fail-job"
wait_screen "master-0" 10
sleep 1
capture job-fail-job
see_row "the FAIL_JOB job's worker shows its exit and rule" "master-0" "exit 3 (FAIL_JOB, rule"
see "...in full in the pane's title" "master-0 last: exit 3 (FAIL_JOB, rule 1)"
# The summary's age is the job's, since it was created (as AGE in the jobs
# view), not a figure of another job or a stale screen: within 5 s of it
# (the screen is read before the job is asked for, on a loaded machine).
created=$(tj get job fail-job -o json | jq -r '.create_time // empty')
# "age 1m5s" as seconds
shown=$(sed -n 's/.*· age \([0-9hms]*\)$/\1/p' "$TMP/screen" | head -n 1 |
    awk '{ n = 0; t = 0; for (i = 1; i <= length($0); i++) { c = substr($0, i, 1)
           if (c ~ /[0-9]/) n = n * 10 + c; else { t += n * (c == "h" ? 3600 : c == "m" ? 60 : 1); n = 0 } }
           if (length($0)) print t }')
real=$(($(date +%s) - $(date -d "${created:-now}" +%s)))
if [ -n "$created" ] && [ -n "$shown" ] && [ $((shown - real)) -le 5 ] && [ $((real - shown)) -le 5 ]; then
    pass "the FAIL_JOB job's summary gives its own age (${shown}s, created ${real}s ago)"
else fail "the FAIL_JOB job's summary gives its own age" "shown '${shown}'s, created '$created' (${real}s ago)"; fi
keys q

# ---- finished: the reason is the end -----------------------------------------

wait_state ddp-fail "SUCCEEDED|FAILED" 60 || fail "ddp-fail ends" "$(cat "$TMP/out")"
expect_grep "ddp-fail succeeds" "$TMP/out" '"state": "SUCCEEDED"'
run tj describe job ddp-fail
cp "$TMP/out" "$SCREENS/trainjobd-describe-succeeded.txt"
expect_grep "a succeeded job's reason is its end" "$TMP/out" "Reason:         succeeded: every worker exited 0"
expect_no_grep "...never the back-off of an earlier restart" "$TMP/out" "Reason:         back-off"
run tj describe job fail-job
cp "$TMP/out" "$SCREENS/trainjobd-describe-failed.txt"
expect_grep "a failed job's reason is the worker's exit and the rule" "$TMP/out" \
    "Failed because: master-0 exited 3: rule 1 (3 → FAIL_JOB) matched; job failed"

# ---- the audit trail, as two users -------------------------------------------

alice() { as_user "$TJ_ALICE" "$TRAINJOB_BIN" --endpoint "$EP" --workspace team "$@"; }
sed 's/^workspace_name: default/workspace_name: team/; s/^name: fail-job/name: audited/; s/^display_name: fail-job/display_name: audited/; s/exit 3/sleep 300/' \
    "$TMP/fail.yaml" >"$TMP/audited.yaml"
chmod 644 "$TMP/audited.yaml"
shared_tmp "$TMP"
alice submit -f "$TMP/audited.yaml" >"$TMP/out" 2>&1
expect_grep "alice submits a job in team" "$TMP/out" "created"
alice priority audited HIGH >"$TMP/out" 2>&1
alice stop audited >"$TMP/out" 2>&1
n=0
until as_user "$TJ_BOB" "$TRAINJOB_BIN" --endpoint "$EP" --workspace team get events audited \
    >"$TMP/events" 2>&1 && grep -q "SUSPENDED" "$TMP/events"; do
    n=$((n + 1))
    [ $n -lt 100 ] || break
    sleep 0.2
done
expect_grep "bob reads alice's priority change: who, from, to" "$TMP/events" "priority NORMAL → HIGH by $TJ_ALICE"
expect_grep "...and her stop, naming her" "$TMP/events" "stopped by $TJ_ALICE"
expect_no_grep "...not 'the user'" "$TMP/events" "stopped by the user"
alice priority audited HIGH >"$TMP/out" 2>&1
as_user "$TJ_BOB" "$TRAINJOB_BIN" --endpoint "$EP" --workspace team get events audited >"$TMP/events" 2>&1
if [ "$(grep -c "priority NORMAL → HIGH" "$TMP/events")" = 1 ] && ! grep -q "HIGH → HIGH" "$TMP/events"; then
    pass "setting the same priority again is no event"
else
    fail "setting the same priority again is no event" "$(cat "$TMP/events")"
fi
# The other actions of a person name her too: start, a node mark, create.
alice start audited >"$TMP/out" 2>&1
as_user "$TJ_ALICE" curl -s -o /dev/null --unix-socket "$SOCK" -X POST -H 'Content-Type: application/json' \
    --data '{"node": "n1"}' "http://x$ACP/team/trainingJobs/audited:markNode"
as_user "$TJ_BOB" "$TRAINJOB_BIN" --endpoint "$EP" --workspace team get events audited >"$TMP/events" 2>&1
expect_grep "bob reads who started it again" "$TMP/events" "started again by $TJ_ALICE"
expect_grep "...who marked a node for it" "$TMP/events" "node n1 marked unschedulable for this job by $TJ_ALICE"
expect_grep "...and who created it" "$TMP/events" "created by $TJ_ALICE"
