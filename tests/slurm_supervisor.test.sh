#!/bin/sh
# test: serial (its preemption check twice found the preempted job's events
# cut to one line when run beside the other suites under ASan and full load,
# 2 runs of 8; alone it passed every run: the cause is not found yet)
# The Slurm batch script (api/slurm_script.c) on a real cluster: starts the
# project's throw-away Slurm (tests/slurm/cluster.sh) in a temp dir, sbatches
# the scripts tests/tools/slurmscript renders from job files, as the
# unprivileged job user, and checks what the supervisor did:
#   a 2-worker DDP job on 2 nodes sees WORLD_SIZE/RANK/MASTER_ADDR and its GPUs,
#     hostile values arrive as written, and Slurm says COMPLETED;
#   a worker exiting 201 under a RESTART_POD rule is rerun alone, and the events
#     name the rule and "restarts 1/3";
#   a worker exiting 7 with backoff_limit 1: the job restarts once, then FAILED
#     with exit code 7;
#   a 254 under a rule with mark_node_unschedulable: the job moves off that node,
#     and where Slurm may not requeue it, the supervisor says so and restarts in place;
#   an idle job preempted by a standard one is requeued and runs again;
#   scancel: the supervisor records the stop and leaves no step behind;
#   a worker's step cancelled from outside (scancel JOB.STEP) counts as exit 137,
#     said so, and the fault rules apply to it (here RESTART_POD);
#   a step that never ran (the launcher missing on the node, or srun refusing the
#     step) is "could not start WORKER: ..." and the job FAILED, no rule applied;
#   a one-worker job runs its worker in the batch step: no step of the job is
#     the worker's, and stopping it leaves nothing of the worker running.
# If the cluster cannot start, the suite fails and says why.
. "$(dirname "$0")/lib.sh"

tools=$(dirname "$TRAINJOB_BIN")/tests/tools
script_tool=$tools/slurmscript
D=$TMP/cluster
JOB_USER=trainjob
cluster_up=0
stop_cluster() {
    [ "$cluster_up" = 1 ] && sh "$TRAINJOB_TOP/tests/slurm/cluster.sh" stop "$D" >"$TMP/stop.log" 2>&1
    cluster_up=0
}
trap 'stop_cluster; rm -rf "$TMP"' EXIT

if [ "$(id -u)" != 0 ]; then
    fail cluster_start "the Slurm suite needs root (slurmd launches jobs as their users)"
    exit 1
fi
if [ ! -x "$script_tool" ]; then
    fail cluster_start "no $script_tool: run make check-tests"
    exit 1
fi
chmod 755 "$TMP" # slurmrestd and the jobs run unprivileged
# ports apart from the other suites: ctld +17 … slurmd +103
TJ_SLURM_PORT_BASE=$(free_port 110) || { echo "FAIL no free TCP ports below the ephemeral range"; exit 1; }
export TJ_SLURM_PORT_BASE
t0=$(date +%s)
if ! TJ_SLURM_JOB_USER=$JOB_USER sh "$TRAINJOB_TOP/tests/slurm/cluster.sh" start "$D" >"$TMP/start.log" 2>&1; then
    cluster_up=1
    fail cluster_start "tests/slurm/cluster.sh start failed: $(tail -n 15 "$TMP/start.log")"
    exit 1
fi
cluster_up=1
pass cluster_start
. "$D/env"
JOBS=$TJ_SLURM_JOBS_DIR
export SLURM_CONF

# render NAME FILE [LAUNCHER]: the job file's script, in NAME's job directory (owned by the job user)
render() {
    mkdir -p "$JOBS/default/$1" && chown "$JOB_USER:" "$JOBS/default/$1" &&
        "$script_tool" "$2" "$JOBS" default ${3:+"$3"} >"$TMP/$1.sh" 2>"$TMP/$1.gaps"
}
# submit NAME SBATCH-OPTIONS…: prints the job id
submit() {
    n=$1
    shift
    sbatch --parsable --uid="$JOB_USER" --gid="$JOB_USER" -J "$n" -D "$JOBS/default/$n" \
        -o "$JOBS/default/$n/slurm.out" --ntasks-per-node=1 "$@" "$TMP/$n.sh"
}
# field ID NAME: a field of scontrol show job (JobState, ExitCode, NodeList, …)
field() {
    scontrol show job -o "$1" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n 1
}
# wait_end ID SECONDS: until the job is COMPLETED, FAILED or CANCELLED (bounded)
wait_end() {
    _end=$(($(date +%s) + $2))
    while [ "$(date +%s)" -lt "$_end" ]; do
        case $(field "$1" JobState) in COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL) return 0 ;; esac
        sleep 0.5
    done
    return 1
}
# check NAME CONDITION-CMD… [-- WHAT]: pass or fail with the job's records
ev() { cat "$JOBS/default/$1/events.jsonl" 2>/dev/null; }

cat >"$TMP/ddp.yaml" <<'EOF'
workspace_name: default
name: ddp
framework: PYTORCH_DDP
roles:
  - total_replicas: 2
    resource_spec:
      - name: gpu-2
    image_path: local/host
    startup_script: |
      echo "node=$SLURMD_NODENAME name=$TRAINJOB_WORKER_NAME rank=$RANK node_rank=$NODE_RANK ws=$WORLD_SIZE addr=$MASTER_ADDR port=$MASTER_PORT cvd=$CUDA_VISIBLE_DEVICES nvd=$NVIDIA_VISIBLE_DEVICES job=$ECP_JOB_NAME"
      printf '%s' "$HOSTILE" > "hostile.$TRAINJOB_WORKER_NAME"
env:
  - key: HOSTILE
    value: "it's $(touch canary) `touch canary` \"q\" \\ ;touch canary\nline2"
EOF
cat >"$TMP/pod.yaml" <<'EOF'
workspace_name: default
name: pod
framework: PYTORCH_DDP
roles:
  - total_replicas: 2
    resource_spec:
      - name: cpu-1
    image_path: local/host
    startup_script: |
      echo "start $TRAINJOB_WORKER_NAME on $SLURMD_NODENAME"
      if [ "$TRAINJOB_WORKER_NAME" = worker-0 ] && [ ! -e once ]; then touch once; exit 201; fi
      sleep 2
fault_tolerance:
  backoff_limit: 3
  rules:
    - exit_codes: "201"
      action: RESTART_POD
EOF
cat >"$TMP/backoff.yaml" <<'EOF'
workspace_name: default
name: backoff
framework: MPI
roles:
  - total_replicas: 2
    resource_spec:
      - name: cpu-1
    image_path: local/host
    startup_script: |
      echo "start $TRAINJOB_WORKER_NAME on $SLURMD_NODENAME hostfile=$TRAINJOB_HOSTFILE ompi=$OMPI_MCA_orte_default_hostfile"
      echo x >> "starts.$TRAINJOB_WORKER_NAME"
      if [ "$TRAINJOB_WORKER_NAME" = worker-1 ]; then
        # fail only once worker-0 runs too (bounded), so that a restart of all is seen
        i=0
        while [ $i -lt 100 ] && [ "$(cat starts.worker-0 2>/dev/null | wc -l)" -lt "$(wc -l < starts.worker-1)" ]; do sleep 0.3; i=$((i + 1)); done
        exit 7
      fi
      sleep 60
fault_tolerance:
  backoff_limit: 1
EOF
cat >"$TMP/mark.yaml" <<'EOF'
workspace_name: default
name: mark
framework: TENSORFLOW_PS
roles:
  - total_replicas: 2
    resource_spec:
      - name: cpu-1
    image_path: local/host
    startup_script: |
      echo "start $TRAINJOB_WORKER_NAME on $SLURMD_NODENAME TF_CONFIG=$TF_CONFIG"
      if [ "$TRAINJOB_WORKER_NAME" = worker-0 ] && [ ! -e bad-node ]; then
        echo "$SLURMD_NODENAME" > bad-node; exit 254
      fi
      sleep 1
fault_tolerance:
  backoff_limit: 2
  rules:
    - exit_codes: "254,255"
      action: RESTART_POD
      mark_node_unschedulable: true
EOF
cat >"$TMP/norequeue.yaml" <<'EOF'
workspace_name: default
name: norequeue
framework: PYTORCH_DDP
roles:
  - total_replicas: 2
    resource_spec:
      - name: cpu-1
    image_path: local/host
    startup_script: |
      echo "start $TRAINJOB_WORKER_NAME on $SLURMD_NODENAME"
      if [ "$TRAINJOB_WORKER_NAME" = worker-0 ] && [ ! -e once ]; then touch once; exit 254; fi
      sleep 1
fault_tolerance:
  backoff_limit: 2
  rules:
    - exit_codes: "254"
      action: RESTART_POD
      mark_node_unschedulable: true
EOF
cat >"$TMP/launch.yaml" <<'EOF'
workspace_name: default
name: launch
framework: MPI
roles:
  - total_replicas: 1
    resource_spec:
      - name: cpu-1
    image_path: "reg.example/img:1'$(touch canary)"
    startup_script: |
      echo "image=$LAUNCHED_IMAGE"
EOF
cat >"$TMP/stop.yaml" <<'EOF'
workspace_name: default
name: stop
framework: PYTORCH_DDP
roles:
  - total_replicas: 1
    resource_spec:
      - name: cpu-1
    image_path: local/host
    startup_script: |
      echo started; sleep 297
EOF
# A sleep of this run's own length: stop_no_worker_left counts it machine-wide, and another
# run of this suite (its own cluster) may be stopping its job at the same time.
STOP_SECS=$((300 + $$ % 600))
sed -i "s/sleep 297/sleep $STOP_SECS/" "$TMP/stop.yaml"

cat >"$TMP/cancel.yaml" <<'EOF'
workspace_name: default
name: cancel
framework: PYTORCH_DDP
roles:
  - total_replicas: 2
    resource_spec:
      - name: cpu-1
    image_path: local/host
    startup_script: |
      echo "start $SLURM_STEP_ID"
      if [ "$TRAINJOB_WORKER_NAME" = master-0 ] && [ ! -e once ]; then touch once; sleep 120; fi
fault_tolerance:
  backoff_limit: 2
  rules:
    - exit_codes: "137"
      action: RESTART_POD
EOF
# the launcher's program is missing on the nodes: the worker never runs
cat >"$TMP/nolaunch.yaml" <<'EOF'
workspace_name: default
name: nolaunch
framework: PYTORCH_DDP
roles:
  - total_replicas: 1
    resource_spec:
      - name: cpu-1
    image_path: reg.example/img:1
    startup_script: echo ran > ran
fault_tolerance:
  backoff_limit: 3
EOF
# srun refuses the step itself: the job's SRUN_CPUS_PER_TASK (an srun input
# variable) asks 99 CPUs of an 8-CPU node (two workers: a lone one has no step)
cat >"$TMP/srunfail.yaml" <<'EOF'
workspace_name: default
name: srunfail
framework: PYTORCH_DDP
roles:
  - total_replicas: 2
    resource_spec:
      - name: cpu-1
    image_path: local/host
    startup_script: echo ran > ran
env:
  - key: SRUN_CPUS_PER_TASK
    value: "99"
fault_tolerance:
  backoff_limit: 3
EOF

for j in ddp pod backoff mark norequeue stop cancel srunfail; do
    if ! render "$j" "$TMP/$j.yaml"; then
        fail "render_$j" "$(cat "$TMP/$j.gaps")"
    fi
done
# a container launcher template: here env(1) stands in for apptainer, so the
# worker shows the image word it was given
render launch "$TMP/launch.yaml" "env LAUNCHED_IMAGE={image}" || fail render_launch "$(cat "$TMP/launch.gaps")"
render nolaunch "$TMP/nolaunch.yaml" "tj-no-such-launcher exec {image}" || fail render_nolaunch "$(cat "$TMP/nolaunch.gaps")"
expect_grep render_gaps "$TMP/mark.gaps" "fault_tolerance.rules[0]: RESTART_POD with mark_node_unschedulable requeues the whole job"

# submitted together: the cluster's 3 nodes run them as they free up
id_ddp=$(submit ddp -N2 --gres=gpu:2)
id_pod=$(submit pod -N2)
id_backoff=$(submit backoff -N2)
id_mark=$(submit mark -N2)
id_norequeue=$(submit norequeue -N2 --no-requeue)
id_stop=$(submit stop -N1)
id_launch=$(submit launch -N1)
id_cancel=$(submit cancel -N2)
id_nolaunch=$(submit nolaunch -N1)
id_srunfail=$(submit srunfail -N2)

# --- the 2-worker job: variables, GPUs, hostile text, COMPLETED
J=$JOBS/default/ddp
if wait_end "$id_ddp" 90 && [ "$(field "$id_ddp" JobState)" = COMPLETED ]; then pass ddp_completed; else
    fail ddp_completed "state $(field "$id_ddp" JobState): $(cat "$J/slurm.out" 2>/dev/null | head -c 800)"
fi
n1=$(scontrol show hostnames "$(field "$id_ddp" NodeList)" | sed -n 1p)
n2=$(scontrol show hostnames "$(field "$id_ddp" NodeList)" | sed -n 2p)
addr=$(scontrol show node -o "$n1" | tr ' ' '\n' | sed -n 's/^NodeAddr=//p')
port=$((20000 + (id_ddp % 625) * 64))
expect_grep ddp_master_env "$J/logs/master-0.log" "node=$n1 name=master-0 rank=0 node_rank=0 ws=2 addr=$addr port=$port cvd=0,1 nvd=0,1 job=ddp"
expect_grep ddp_worker_env "$J/logs/worker-0.log" "node=$n2 name=worker-0 rank=1 node_rank=1 ws=2 addr=$addr port=$port cvd=0,1 nvd=0,1 job=ddp"
printf '%s' "it's \$(touch canary) \`touch canary\` \"q\" \\ ;touch canary
line2" >"$TMP/hostile.want"
if cmp -s "$TMP/hostile.want" "$J/hostile.master-0" && cmp -s "$TMP/hostile.want" "$J/hostile.worker-0" &&
    [ ! -e "$J/canary" ] && [ ! -e "$TMP/canary" ]; then pass ddp_hostile_value; else
    fail ddp_hostile_value "got '$(cat "$J/hostile.master-0" 2>/dev/null)', canary: $(ls "$J" | grep canary)"
fi
expect_grep ddp_event_placed "$J/events.jsonl" "\"message\":\"placed: master-0 on $n1, worker-0 on $n2\""
expect_grep ddp_event_done "$J/events.jsonl" '"reason":"Succeeded"'
expect_grep ddp_worker_record "$J/workers/worker-0.json" "\"name\":\"worker-0\",\"index\":1,\"node\":\"$n2\",\"phase\":\"Succeeded\",\"restarts\":0,\"exit_code\":0"
if [ "$(stat -c %U "$J/events.jsonl")" = "$JOB_USER" ]; then pass ddp_runs_as_user; else
    fail ddp_runs_as_user "events.jsonl owned by $(stat -c %U "$J/events.jsonl")"
fi

# --- the launcher runs the worker with the image as one word
J=$JOBS/default/launch
wait_end "$id_launch" 90
expect_grep launcher_image "$J/logs/worker-0.log" "image=reg.example/img:1'\$(touch canary)"
if [ ! -e "$J/canary" ]; then pass launcher_no_injection; else fail launcher_no_injection "canary created"; fi

# --- a step cancelled from outside: exit 137, said so, and the rules apply
J=$JOBS/default/cancel
_end=$(($(date +%s) + 90))
until grep -q '^start' "$J/logs/master-0.log" 2>/dev/null || [ "$(date +%s)" -ge "$_end" ]; do sleep 0.3; done
step=$(squeue -h -s -j "$id_cancel" -o '%i %j' | awk '$2 == "master-0" { print $1 }' | head -n 1)
if [ -n "$step" ]; then scancel "$step"; else fail cancel_step_found "$(squeue -h -s -j "$id_cancel" 2>&1)"; fi
if wait_end "$id_cancel" 90 && [ "$(field "$id_cancel" JobState)" = COMPLETED ]; then pass cancel_completed; else
    fail cancel_completed "state $(field "$id_cancel" JobState): $(ev cancel | head -c 800)"
fi
if grep -qF 'master-0 exited 137 (killed (SIGKILL/OOM)); its step was cancelled or killed outside the supervisor' "$J/events.jsonl"; then
    pass cancel_counts_137
else
    fail cancel_counts_137 "$(ev cancel | head -c 1200) $(cat "$J/slurm.out")"
fi
if grep -qF 'master-0 exited 137 (killed (SIGKILL/OOM)): rule 1 (137 → RESTART_POD) matched; restarting master-0 (restarts 1/2)' "$J/events.jsonl"; then
    pass cancel_rule_applied
else
    fail cancel_rule_applied "$(ev cancel | head -c 1200)"
fi
if [ "$(grep -c '^start' "$J/logs/master-0.log")" = 2 ]; then pass cancel_rerun; else fail cancel_rerun "$(cat "$J/logs/master-0.log")"; fi

# --- steps that never ran: "could not start", FAILED, no rule applied
J=$JOBS/default/nolaunch
wait_end "$id_nolaunch" 90
if [ "$(field "$id_nolaunch" JobState)" = FAILED ]; then pass nolaunch_failed; else
    fail nolaunch_failed "state $(field "$id_nolaunch" JobState): $(ev nolaunch | head -c 800)"
fi
expect_grep nolaunch_event "$J/events.jsonl" '"reason":"FailedStart","kind":"WORKER","message":"could not start master-0: tj-no-such-launcher: not found on n'
expect_grep nolaunch_job_event "$J/events.jsonl" "job failed: could not start master-0: tj-no-such-launcher: not found on n"
expect_no_grep nolaunch_no_rule "$J/events.jsonl" '"kind":"FAULT"'
if [ ! -e "$J/ran" ] && [ "$(grep -c '"placed: ' "$J/events.jsonl")" = 1 ]; then pass nolaunch_not_restarted; else
    fail nolaunch_not_restarted "$(ev nolaunch | head -c 800)"
fi
J=$JOBS/default/srunfail
wait_end "$id_srunfail" 90
if [ "$(field "$id_srunfail" JobState)" = FAILED ]; then pass srunfail_failed; else
    fail srunfail_failed "state $(field "$id_srunfail" JobState): $(ev srunfail | head -c 800)"
fi
if grep -qE "could not start (master|worker)-0: Unable to create step for job $id_srunfail: More processors requested than permitted" "$J/events.jsonl"; then
    pass srunfail_event
else
    fail srunfail_event "$(ev srunfail | head -c 800)"
fi
expect_no_grep srunfail_no_rule "$J/events.jsonl" '"kind":"FAULT"'
if [ ! -e "$J/ran" ]; then pass srunfail_never_ran; else fail srunfail_never_ran "the worker ran"; fi

# --- RESTART_POD: the failed worker alone reruns
J=$JOBS/default/pod
if wait_end "$id_pod" 90 && [ "$(field "$id_pod" JobState)" = COMPLETED ]; then pass pod_completed; else
    fail pod_completed "state $(field "$id_pod" JobState): $(ev pod | head -c 800)"
fi
if [ "$(grep -c '^start worker-0' "$J/logs/worker-0.log")" = 2 ] && [ "$(grep -c '^start master-0' "$J/logs/master-0.log")" = 1 ]; then
    pass pod_rerun_alone
else
    fail pod_rerun_alone "worker-0: $(cat "$J/logs/worker-0.log"); master-0: $(cat "$J/logs/master-0.log")"
fi
expect_grep pod_event_rule "$J/events.jsonl" "worker-0 exited 201: rule 1 (201 → RESTART_POD) matched; restarting worker-0 (restarts 1/3)"
expect_grep pod_event_fields "$J/events.jsonl" '"reason":"RestartPod","kind":"FAULT"'
expect_grep pod_worker_restarts "$J/workers/worker-0.json" '"restarts":1,"exit_code":0'
expect_grep pod_state "$J/state.json" '"restarts":1,'

# --- backoff exhausted: FAILED with the worker's exit code
J=$JOBS/default/backoff
wait_end "$id_backoff" 90
if [ "$(field "$id_backoff" JobState)" = FAILED ] && [ "$(field "$id_backoff" ExitCode)" = 7:0 ]; then pass backoff_failed_7; else
    fail backoff_failed_7 "state $(field "$id_backoff" JobState) exit $(field "$id_backoff" ExitCode): $(ev backoff | head -c 800)"
fi
expect_grep backoff_hostfile "$J/hostfile" "127.0.0.1 slots=1"
if [ "$(wc -l <"$J/hostfile")" = 2 ]; then pass backoff_hostfile_lines; else fail backoff_hostfile_lines "$(cat "$J/hostfile")"; fi
expect_grep backoff_hostfile_env "$J/logs/worker-0.log" "hostfile=$J/hostfile ompi=$J/hostfile"
expect_grep backoff_restart_event "$J/events.jsonl" "worker-1 exited 7: no rules, default RESTART_JOB; restarting the job (restarts 1/1)"
expect_grep backoff_limit_event "$J/events.jsonl" "worker-1 exited 7: no rules, default RESTART_JOB, but the restart limit is reached (1/1); job failed"
if [ "$(grep -c "^start worker-0" "$J/logs/worker-0.log")" = 2 ] && [ "$(grep -c "\"placed: " "$J/events.jsonl")" = 2 ]; then
    pass backoff_restarted_all
else
    fail backoff_restarted_all "$(cat "$J/logs/worker-0.log" "$J/events.jsonl")"
fi

# --- node marking: the job continues away from the node
J=$JOBS/default/mark
if wait_end "$id_mark" 120 && [ "$(field "$id_mark" JobState)" = COMPLETED ]; then pass mark_completed; else
    fail mark_completed "state $(field "$id_mark" JobState): $(ev mark | head -c 800) $(cat "$J/requeue.log" 2>/dev/null)"
fi
bad=$(cat "$J/bad-node" 2>/dev/null)
nodes=$(scontrol show hostnames "$(field "$id_mark" NodeList)" | tr '\n' ' ')
case " $nodes " in
*" $bad "* | "  ") fail mark_moved "bad node '$bad', ran last on '$nodes'" ;;
*) if [ -n "$bad" ] && [ "$(field "$id_mark" ExcNodeList)" = "$bad" ]; then pass mark_moved; else
    fail mark_moved "bad '$bad', ExcNodeList $(field "$id_mark" ExcNodeList)"
fi ;;
esac
p0=$((20000 + (id_mark % 625) * 64))
expect_grep mark_tf_config "$J/logs/ps-0.log" "TF_CONFIG={\"cluster\":{\"ps\":[\"127.0.0.1:$p0\"],\"worker\":[\"127.0.0.1:$((p0 + 1))\"]},\"task\":{\"type\":\"ps\",\"index\":0}}"
expect_grep mark_event "$J/events.jsonl" "\"message\":\"node $bad marked unschedulable for this job\""
expect_grep mark_rule_event "$J/events.jsonl" "worker-0 exited 254: rule 1 (254,255 → RESTART_POD) matched; restarting worker-0 (restarts 1/2); node marked unschedulable for this job"
expect_grep mark_state "$J/state.json" "\"restarts\":1,\"marked\":[\"$bad\"],\"runs\":2"

# --- node marking in a job Slurm may not requeue: said, and restarted in place
J=$JOBS/default/norequeue
if wait_end "$id_norequeue" 120 && [ "$(field "$id_norequeue" JobState)" = COMPLETED ]; then pass norequeue_completed; else
    fail norequeue_completed "state $(field "$id_norequeue" JobState): $(ev norequeue | head -c 800)"
fi
expect_grep norequeue_event "$J/events.jsonl" '"reason":"RequeueFailed"'
expect_grep norequeue_why "$J/events.jsonl" "(Requested operation is presently disabled for job $id_norequeue); restarting it on the same nodes"
if [ "$(grep -c '"placed: ' "$J/events.jsonl")" = 2 ]; then pass norequeue_restarted; else
    fail norequeue_restarted "$(ev norequeue | head -c 800)"
fi

# --- stop: scancel ends the steps, the supervisor records it
J=$JOBS/default/stop
_end=$(($(date +%s) + 60))
until grep -q '^started' "$J/logs/master-0.log" 2>/dev/null || [ "$(date +%s)" -ge "$_end" ]; do sleep 0.3; done
# the lone worker runs in the batch step: the job has no step of its own for it
if ! steps=$(squeue -h -s -j "$id_stop" -o '%i %j' 2>&1); then
    fail stop_no_worker_step "squeue: $steps"
elif echo "$steps" | grep -q ' master-0$'; then
    fail stop_no_worker_step "a step for the worker: $steps"
else
    pass stop_no_worker_step
fi
scancel "$id_stop"
wait_end "$id_stop" 60
expect_grep stop_event "$J/events.jsonl" '"reason":"Stopping"'
left=$(ps -eo args | grep -c "[s]leep $STOP_SECS\$")
if [ "$left" = 0 ]; then pass stop_no_worker_left; else fail stop_no_worker_left "$left 'sleep $STOP_SECS' still running"; fi

# --- preemption: a standard job takes the nodes of an idle one; the idle job is
# requeued, its supervisor records the stop, and it runs again later with its
# restarts untouched (a preemption is no fault)
cat >"$TMP/idle.yaml" <<'EOF'
workspace_name: default
name: idle
framework: PYTORCH_DDP
roles:
  - total_replicas: 3
    resource_spec:
      - name: cpu-1
    image_path: local/host
    startup_script: |
      echo "start $TRAINJOB_WORKER_NAME on $SLURMD_NODENAME restart_count=${SLURM_RESTART_COUNT:-0}"
      if [ "${SLURM_RESTART_COUNT:-0}" = 0 ]; then sleep 120; fi
EOF
cat >"$TMP/std.yaml" <<'EOF'
workspace_name: default
name: std
framework: PYTORCH_DDP
roles:
  - total_replicas: 2
    resource_spec:
      - name: cpu-1
    image_path: local/host
    startup_script: sleep 1
EOF
render idle "$TMP/idle.yaml" && render std "$TMP/std.yaml"
J=$JOBS/default/idle
id_idle=$(submit idle -N3 -p idle --requeue --gres=gpu:8) # every GPU: the standard job must preempt
# Its three workers must be running before the standard job comes: under load
# (suites side by side) a start can take long, so wait up to 150 s and say so.
_end=$(($(date +%s) + 150))
until [ "$(grep -c '^start' "$J/logs/"*.log 2>/dev/null | awk -F: '{s += $2} END {print s + 0}')" -ge 3 ] ||
    [ "$(date +%s)" -ge "$_end" ]; do sleep 0.3; done
if [ "$(grep -c '^start' "$J/logs/"*.log 2>/dev/null | awk -F: '{s += $2} END {print s + 0}')" -ge 3 ]; then
    pass preempt_idle_started
else
    fail preempt_idle_started "idle $(field "$id_idle" JobState) after 150 s: $(ev idle | head -c 400)"
fi
id_std=$(submit std -N2 -p standard --gres=gpu:1)
wait_end "$id_std" 60
if [ "$(field "$id_std" JobState)" = COMPLETED ]; then pass preempt_standard_ran; else
    fail preempt_standard_ran "standard job $(field "$id_std" JobState); idle $(field "$id_idle" JobState)"
fi
if wait_end "$id_idle" 90 && [ "$(field "$id_idle" JobState)" = COMPLETED ] && [ "$(field "$id_idle" Restarts)" = 1 ]; then
    pass preempt_idle_ran_again
else
    fail preempt_idle_ran_again "idle $(field "$id_idle" JobState) restarts $(field "$id_idle" Restarts): $(ev idle | head -c 800)"
fi
if grep -q '"reason":"Stopping"' "$J/events.jsonl" 2>/dev/null; then pass preempt_stop_event; else
    fail preempt_stop_event "no Stopping event: $(ev idle | head -c 1200); slurm.out: $(tail -c 600 "$J/slurm.out" 2>/dev/null)"
fi
expect_grep preempt_state "$J/state.json" '"restarts":0,"marked":[],"runs":2'
expect_grep preempt_rerun_log "$J/logs/master-0.log" "restart_count=1"

# --- the cluster stops: nothing of it is left
pids=$(cat "$D"/run/*.pid "$D/munge/munged.pid" 2>/dev/null)
stop_cluster
left=
for p in $pids; do [ -d "/proc/$p" ] && left="$left $p"; done
if [ -z "$left" ]; then pass cluster_stopped; else fail cluster_stopped "still running:$left"; fi
echo "slurm supervisor suite: $(($(date +%s) - t0)) s"
