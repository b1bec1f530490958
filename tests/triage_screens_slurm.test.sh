# Triage at 80×24 on Slurm (issue 22), as tests/triage_screens.test.sh on
# trainjobd: the issue's failing DDP job — rank 1 exits 201 under a
# RESTART_POD rule, then master-0 exits 1 (the default RESTART_JOB), then both
# succeed — on a throw-away cluster (tests/slurm/cluster.sh, stopped by pid).
# The supervisor keeps each worker's last state in its record: the job
# screen, get workers and describe show it; describe of the finished job
# gives its end. The captures are kept under $SCREENS (build/screens) as
# slurm-*.txt. If the cluster cannot start, the suite fails and says why.
. "$(dirname "$0")/lib.sh"
cd "$TRAINJOB_TOP" || exit 1
export LANG=C.UTF-8 LC_ALL=C.UTF-8
: "${SCREENS:=$TRAINJOB_TOP/build/screens}"
mkdir -p "$SCREENS"

if [ "$(id -u)" != 0 ]; then
    echo "SKIP triage_screens_slurm: the Slurm cluster needs root (slurmd launches jobs as their users)"
    exit 0
fi
. tests/slurm/suite.sh
slurm_tui_start "tj-triage-slurm-$$"

export TRAINJOB_CONFIG="$TMP/config.yaml"
{
    printf 'current_context: lab\ncontexts:\n'
    slurm_context lab
    printf '    token_file: %s\n    workspace: default\n' "$TMP/token"
} >"$TRAINJOB_CONFIG"

# capture NAME: the screen as it is now, kept as $SCREENS/slurm-NAME.txt
capture() {
    tmux capture-pane -t "$SESSION" -p >"$SCREENS/slurm-$1.txt"
    cp "$SCREENS/slurm-$1.txt" "$TMP/screen"
}

# The workers run as the cluster's user: their marks go where it may write.
M="$TMP/marks"
mkdir -p "$M"
chmod 1777 "$M"
cat >"$TMP/ddp.yaml" <<EOF
workspace_name: default
name: ddp-fail
display_name: ddp-fail
framework: PYTORCH_DDP
resource_pool: {name: standard}
roles:
  - total_replicas: 2
    resource_spec: [{name: gpu-1}]
    image_path: local/host
    startup_script: |
      cd $M
      if [ "\$RANK" = 1 ] && [ ! -e w201 ]; then : > w201; sleep 1; echo "rank 1 dies"; exit 201; fi
      if [ "\$RANK" = 0 ] && [ ! -e m1 ]; then
        while [ ! -e w201 ]; do sleep 0.2; done; sleep 2; : > m1
        echo "RuntimeError: Connection closed by peer" >&2; exit 1
      fi
      sleep 30; exit 0
fault_tolerance:
  backoff_limit: 3
  rules: [{exit_codes: "201", action: RESTART_POD}]
EOF
run tj submit -f "$TMP/ddp.yaml"
expect_rc "the DDP job is submitted to Slurm" 0
# Restarts 2: the pod's, then the job's (after the supervisor's back-off: 10 s).
n=0
until tj get job ddp-fail -o json >"$TMP/out" 2>&1 &&
    grep -q '"state": "RUNNING"' "$TMP/out" && grep -q '"restart_count": 2' "$TMP/out"; do
    n=$((n + 1))
    [ $n -lt 300 ] || break
    sleep 0.2
done
if [ $n -lt 300 ]; then pass "ddp-fail runs again after restarts 2/3"; else
    fail "ddp-fail runs again after restarts 2/3" "$(cat "$TMP/out")"
fi
# Slurm's job stays RUNNING through the supervisor's back-off: master-0 runs again after it.
n=0
until tj get workers ddp-fail >"$TMP/out" 2>&1 && awk '$1 == "master-0" && $4 == "Running" { f = 1 } END { exit !f }' "$TMP/out"; do
    n=$((n + 1))
    [ $n -lt 150 ] || break
    sleep 0.2
done

run tj get workers ddp-fail
cp "$TMP/out" "$SCREENS/slurm-get-workers.txt"
expect_grep "get workers has a LAST STATE column" "$TMP/out" "LAST STATE"
if awk '$1 == "master-0" && /Running/ && /exit 1 \(RESTART_JOB, default rule\)/ { ok = 1 } END { exit !ok }' \
    "$TMP/out"; then pass "master-0's last state: exit 1, the default rule"; else
    fail "master-0's last state: exit 1, the default rule" "$(cat "$TMP/out")"
fi
if awk '$1 == "worker-0" && /Running/ && /exit 201 \(RESTART_POD, rule 1\)/ { ok = 1 } END { exit !ok }' \
    "$TMP/out"; then pass "worker-0's last state: exit 201, rule 1"; else
    fail "worker-0's last state: exit 201, rule 1" "$(cat "$TMP/out")"
fi
run tj describe job ddp-fail
cp "$TMP/out" "$SCREENS/slurm-describe-running.txt"
expect_grep "describe has a Last State block" "$TMP/out" "master-0:  Terminated, exit 1 (general error)"
expect_grep "...with the rule and action" "$TMP/out" "default rule (none matched) → RESTART_JOB"

start_tui 80 24 "top"
wait_screen "ddp-fail" 20
sleep 1
capture jobs
# Slurm's job id is titled as squeue titles it: JOBID, in the chooser and the header.
keys C
see "the column chooser calls Slurm's job id JOBID" "] JOBID" 5
keys Escape
keys q
slurm_id=$(tj get job ddp-fail -o json | sed -n 's/^  "id": "\([0-9]*\)",*$/\1/p' | head -1)
start_tui 120 30 "top"
wait_screen "ddp-fail" 20
see_row "...and at 120 columns the header says JOBID" "NAME" "JOBID" 5
see_row "...over the job's Slurm id${slurm_id:+ ($slurm_id)}" "ddp-fail" "${slurm_id:-no id in get job -o json}" 5
keys q
start_tui 80 24 "top --job ddp-fail"
wait_screen "master-0" 20
sleep 2
capture job-ddp-fail
see_row "the job screen shows master-0's last exit and action" "master-0" "exit 1 (RESTART_JOB"
see_row "...and worker-0's" "worker-0" "exit 201 (RESTART_POD"
see "...and the cursor's in full" "master-0 last: exit 1 (RESTART_JOB, default rule)"
# At 80 columns the rows keep the last states whole (HELD for HELD DEVICES).
see_row "...worker-0's row keeps its last state whole at 80 columns" "worker-0 worker" \
    "exit 201 (RESTART_POD, rule 1)"
see_row "...and master-0's" "master-0 master" "exit 1 (RESTART_JOB, default rule)"
keys q

n=0
until tj get job ddp-fail -o json >"$TMP/out" 2>&1 && grep -qE '"state": "(SUCCEEDED|FAILED)"' "$TMP/out"; do
    n=$((n + 1))
    [ $n -lt 450 ] || break
    sleep 0.2
done
expect_grep "ddp-fail succeeds" "$TMP/out" '"state": "SUCCEEDED"'
run tj describe job ddp-fail
cp "$TMP/out" "$SCREENS/slurm-describe-succeeded.txt"
expect_no_grep "a succeeded job's reason is never the back-off" "$TMP/out" "Reason:         back-off"
