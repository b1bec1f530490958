#!/bin/sh
# What a user does to a Slurm job beyond submit, on a real cluster in
# accounting mode (tests/slurm/cluster.sh with TJ_SLURM_ACCOUNTING=1: QOS
# exist only in slurmdbd), run as tj-alice through her own token and
# context, tj-bob the other user of a shared volume:
#   priority: a pending job's priority changes through the context's qos:
#     map (Slurm's job update sets the QOS) and the job shows it; a running
#     job's change is refused naming why; a priority the map lacks is refused;
#     each change and a stop are events naming alice ("priority NORMAL → HIGH
#     by tj-alice", "stopped by tj-alice"), and bob, a teammate, can put
#     nothing of his into her job's events;
#   metrics: `metrics NAME` (table, csv, -f) reads the job's TensorBoard log
#     directory on a volume the context names; a log path bob turned into a
#     symlink to his own directory is refused, nothing of his read;
#   a submit Slurm refuses while the nodes are drained (error 2068, the job
#     queued all the same) leaves neither a Slurm job nor a directory, 20
#     times over;
#   validate --context and submit check the job against the cluster's
#     catalog and say every error at once (pool, spec, mount path).
# If the cluster cannot start, the suite fails and says why.
. "$(dirname "$0")/lib.sh"
cd "$TRAINJOB_TOP" || exit 1
export LANG=C.UTF-8 LC_ALL=C.UTF-8

if [ "$(id -u)" != 0 ]; then
    fail "the accounting cluster starts" "the Slurm suite needs root (slurmd launches jobs as their users)"
    exit 1
fi
. tests/slurm/suite.sh
cleanup() {
    slurm_stop
    rm -rf "$TMP"
}
trap cleanup EXIT

tj_users || { echo "FAIL the two users can be made"; exit 1; }
# ports apart from the other Slurm suites (20000-59999 by $$)
export TJ_SLURM_ACCOUNTING=1
slurm_start "the accounting cluster starts"
export SLURM_CONF
# alice may use normal and high; normal is her default
sacctmgr -i add user "$TJ_ALICE" Account=ml Cluster=trainjob >"$TMP/sacctmgr.log" 2>&1
sacctmgr -i modify user "$TJ_ALICE" set QOS=normal,high DefaultQOS=normal >>"$TMP/sacctmgr.log" 2>&1 ||
    fail "alice gets a Slurm association" "$(cat "$TMP/sacctmgr.log")"

S=$TMP/shared
JOBS=$S/jobs
VOL=$S/vol
shared_tmp "$S"
mkdir -p "$JOBS" "$VOL" "$S/bin"
chmod 1777 "$JOBS" "$VOL" # everyone's, sticky: as /tmp or a team share
cp "$(dirname "$TRAINJOBD_BIN")/tests/tools/scalarwrite" "$S/bin/"
chmod 755 "$S/bin" "$S/bin/scalarwrite"
A=$TMP/$TJ_ALICE
shared_tmp "$A"
tok=$(scontrol token username="$TJ_ALICE" lifespan=3600 | sed -n 's/^SLURM_JWT=//p')
[ -n "$tok" ] || { fail "a token for alice" "scontrol token gave none"; exit 1; }
printf '%s\n' "$tok" >"$A/token"
{
    printf 'current_context: lab\ncontexts:\n'
    printf '  - name: lab\n    driver: slurm\n    endpoint: http+unix://%s\n' "$SLURMRESTD_SOCKET"
    printf '    user: %s\n    jobs_dir: %s\n    token_file: %s\n    workspace: team\n' \
        "$TJ_ALICE" "$JOBS" "$A/token"
    printf '    qos:\n      NORMAL: normal\n      HIGH: high\n'
    printf '    volumes: {logs: %s}\n' "$VOL"
} >"$A/config.yaml"

alice() { as_user "$TJ_ALICE" env TRAINJOB_CONFIG="$A/config.yaml" "$TRAINJOB_BIN" "$@"; }
# job_yaml NAME REPLICAS SPEC SCRIPT [EXTRA]: a job file of alice's
job_yaml() {
    cat >"$A/$1.yaml" <<EOF
workspace_name: team
name: $1
display_name: $1
framework: PYTORCH
resource_pool:
  name: standard
roles:
  - total_replicas: $2
    resource_spec:
      - name: $3
    image_path: local/host
    startup_script: |
      $4
$5
EOF
    chown "$TJ_ALICE" "$A/$1.yaml"
}
# squeue_of NAME FMT: squeue's field FMT of alice's job NAME
squeue_of() { squeue -h -u "$TJ_ALICE" -n "$1" -o "$2" 2>/dev/null | head -n 1; }
chown -R "$TJ_ALICE" "$A"
chmod 600 "$A/token"

# ---- 1. priority: the QOS of a pending job --------------------------------------

job_yaml fill 3 gpu-8 'sleep 300'
job_yaml waits 1 gpu-8 'sleep 1'
run alice submit -f "$A/fill.yaml"
expect_rc "alice fills every node" 0
wait_state fill RUNNING 60 alice || fail "...and it runs" "$(cat "$TMP/jobs")"
run alice submit -f "$A/waits.yaml"
expect_rc "a job that must wait is submitted" 0
expect_state_alice() { if wait_state "$2" "$3" "$4" alice; then pass "$1"; else fail "$1" "$(cat "$TMP/jobs")"; fi; }
expect_state_alice "...and waits (QUEUEING)" waits QUEUEING 30
run alice priority waits HIGH
expect_rc "priority HIGH of the waiting job is done" 0
expect_grep "...and says so" "$TMP/out" "priority HIGH"
q=$(squeue_of waits %q)
if [ "$q" = high ]; then pass "...Slurm's job has QOS high"; else fail "...Slurm's job has QOS high" "QOS '$q'"; fi
run alice get job waits -o json
expect_grep "...get job shows HIGH" "$TMP/out" '"priority": "HIGH"'
run alice get jobs
if awk '$1 == "waits" && /HIGH/ { f = 1 } END { exit !f }' "$TMP/out"; then pass "...and so does get jobs"; else
    fail "...and so does get jobs" "$(cat "$TMP/out")"
fi
run alice get events waits
expect_grep "...its events say it" "$TMP/out" "now has QOS high"
expect_grep "...from what to what and who asked, as trainjobd's do" "$TMP/out" \
    "priority NORMAL → HIGH by $TJ_ALICE: Slurm job"
run alice get events waits -o json
expect_grep "...an event of kind UPDATED" "$TMP/out" '"kind": "UPDATED"'
run alice priority waits HIGHEST
expect_rc "HIGHEST, which the context maps to no QOS, is refused" 1
expect_grep "...naming scheduling.priority" "$TMP/err" "scheduling.priority"
expect_grep "...and the qos: map" "$TMP/err" "qos:"
run alice priority waits normal
expect_rc "back to NORMAL" 0
q=$(squeue_of waits %q)
if [ "$q" = normal ]; then pass "...Slurm's job has QOS normal again"; else fail "...Slurm's job has QOS normal again" "QOS '$q'"; fi
run alice get events waits
expect_grep "...and its events say who set it back" "$TMP/out" "priority HIGH → NORMAL by $TJ_ALICE"
# bob, a teammate, cannot put words of his into alice's job's events: not by
# writing the file (the job directory is hers alone), not through a context
# of his that claims to be hers (his token is his: Slurm refuses it).
as_user "$TJ_BOB" sh -c "printf '%s\n' '{\"reason\":\"Stopped\",\"message\":\"stopped by forged\"}' >>$JOBS/team/waits/events.jsonl" 2>/dev/null &&
    fail "bob cannot append to alice's events.jsonl" "he could" || pass "bob cannot append to alice's events.jsonl"
B=$TMP/$TJ_BOB
shared_tmp "$B"
scontrol token username="$TJ_BOB" lifespan=3600 | sed -n 's/^SLURM_JWT=//p' >"$B/token"
sed -e "s|token_file: .*|token_file: $B/token|" "$A/config.yaml" >"$B/config.yaml"
chown -R "$TJ_BOB" "$B"
chmod 600 "$B/token"
run as_user "$TJ_BOB" env TRAINJOB_CONFIG="$B/config.yaml" "$TRAINJOB_BIN" stop waits
run as_user "$TJ_BOB" env TRAINJOB_CONFIG="$B/config.yaml" "$TRAINJOB_BIN" priority waits HIGH
run alice get events waits
expect_no_grep "...and alice's events name nobody but her" "$TMP/out" "$TJ_BOB"
expect_no_grep "...nor what bob wrote" "$TMP/out" "forged"
run alice get jobs
if awk '$1 == "waits" && /NORMAL/ && !/STOPP/ { f = 1 } END { exit !f }' "$TMP/out"; then
    pass "...and the job is as she left it"
else fail "...and the job is as she left it" "$(cat "$TMP/out")"; fi
run alice stop waits
expect_rc "alice stops her waiting job" 0
run alice get events waits
expect_grep "...its events say who stopped it" "$TMP/out" "stopped by $TJ_ALICE: Slurm job"
run alice priority fill HIGH
q=$(squeue_of fill %q)
if [ "$rc" -eq 1 ] && grep -q "pending job only" "$TMP/err" && [ "$q" = normal ]; then
    pass "a running job's priority change is refused, saying Slurm changes a pending job's only"
elif [ "$rc" -eq 0 ] && [ "$q" = high ]; then
    pass "a running job's priority change is refused, saying Slurm changes a pending job's only (Slurm took it: QOS high)"
else
    fail "a running job's priority change is refused, saying Slurm changes a pending job's only" \
        "exit $rc, QOS '$q': $(cat "$TMP/out" "$TMP/err")"
fi
alice delete fill waits >/dev/null 2>&1

# ---- 2. metrics from the job's log directory on the context's volume -----------

job_yaml tb 1 gpu-1 "W=$S/bin/scalarwrite; mkdir -p $VOL/alice-tb/rank0; \$W $VOL/alice-tb/rank0/events.out.tfevents.1.n loss=1:0.5 loss=2:0.25 acc=1:0.75; sleep 3; \$W $VOL/alice-tb/rank0/events.out.tfevents.1.n loss=3:0.125" \
"mount:
  - type: PV_AFS
    id: logs
    mount_path: $VOL
tensorboard:
  log_path: $VOL/alice-tb"
run alice submit -f "$A/tb.yaml"
expect_rc "a job writing TensorBoard scalars to the volume is submitted" 0
run as_user "$TJ_ALICE" timeout 60 env TRAINJOB_CONFIG="$A/config.yaml" "$TRAINJOB_BIN" metrics tb -f -o csv
expect_rc "metrics tb -f -o csv follows it until it ends" 0
expect_grep "...printing the csv header" "$TMP/out" "run,tag,step,wall_time,value"
expect_grep "...the first points" "$TMP/out" "rank0,loss,1,"
expect_grep "...and the last one, written after" "$TMP/out" "rank0,loss,3,"
run alice metrics tb
expect_rc "metrics tb prints the table" 0
expect_grep "...with the job's tags" "$TMP/out" "acc"
run alice get job tb -o json
expect_grep "...(the job succeeded)" "$TMP/out" SUCCEEDED

# bob, a user of the same volume, turns the log path of alice's next job into a
# symlink to his own directory: alice's metrics refuse it, nothing of his is read
as_user "$TJ_BOB" sh -c "mkdir -p $VOL/bob-tb && $S/bin/scalarwrite $VOL/bob-tb/events.out.tfevents.1.n bobsecret=1:1 && ln -s $VOL/bob-tb $VOL/alice-tb2"
job_yaml tb2 1 gpu-1 'sleep 1' \
"mount:
  - type: PV_AFS
    id: logs
    mount_path: $VOL
tensorboard:
  log_path: $VOL/alice-tb2"
run alice submit -f "$A/tb2.yaml"
expect_rc "a job whose log path bob made a symlink is submitted" 0
run alice metrics tb2 -o csv
expect_rc "metrics refuses the symlinked log path" 1
expect_grep "...saying it is a symlink" "$TMP/err" "symlink"
expect_no_grep "...and nothing of bob's is read" "$TMP/out" "bobsecret"
alice delete tb tb2 >/dev/null 2>&1

# ---- 3. a refused submit leaves nothing behind ------------------------------------

scontrol update nodename=n1,n2,n3 state=drain reason=test >"$TMP/scontrol.log" 2>&1 ||
    fail "the nodes are drained" "$(cat "$TMP/scontrol.log")"
job_yaml lost 1 gpu-1 'sleep 1'
refused=0 i=0
while [ $i -lt 20 ]; do
    sed "s/^name: lost\$/name: lost$i/" "$A/lost.yaml" >"$A/lost$i.yaml"
    chown "$TJ_ALICE" "$A/lost$i.yaml"
    run alice submit -f "$A/lost$i.yaml"
    [ "$rc" -eq 1 ] && refused=$((refused + 1))
    i=$((i + 1))
done
if [ $refused -eq 20 ]; then pass "20 submits to drained nodes are refused"; else
    fail "20 submits to drained nodes are refused" "$refused refused; last: $(cat "$TMP/out" "$TMP/err")"
fi
left=$(squeue -h -u "$TJ_ALICE" -o %i 2>/dev/null | wc -l)
if [ "$left" -eq 0 ]; then pass "...leaving no Slurm job"; else
    fail "...leaving no Slurm job" "$left left: $(squeue -h -u "$TJ_ALICE" -o '%i %j %T %r %k' 2>&1 | head -5)"
fi
dirs=$(find "$JOBS/team" -mindepth 1 -maxdepth 1 -name 'lost*' 2>/dev/null | wc -l)
if [ "$dirs" -eq 0 ]; then pass "...and no job directory"; else
    fail "...and no job directory" "$dirs left: $(ls "$JOBS/team")"
fi
expect_grep "...saying what Slurm did" "$TMP/err" "queued it anyway"
scontrol update nodename=n1,n2,n3 state=resume >"$TMP/scontrol.log" 2>&1 ||
    fail "the nodes are resumed" "$(cat "$TMP/scontrol.log")"

# ---- 4. validate --context and submit: the cluster's catalog, every error at once --

job_yaml bad 1 gpu-99 'true' \
"mount:
  - type: PV_AFS
    id: logs
    mount_path: /mnt/logs"
sed -i 's/^  name: standard$/  name: nowhere/' "$A/bad.yaml"
run alice validate "$A/bad.yaml"
expect_rc "offline, validate finds nothing wrong with the file" 0
run alice validate --context lab "$A/bad.yaml"
expect_rc "validate --context lab refuses it" 1
expect_grep "...naming the pool" "$TMP/err" "resource_pool.name"
expect_grep "...the mount path the nodes do not have" "$TMP/err" "mount[0].mount_path"
sed -i 's/^  name: nowhere$/  name: standard/' "$A/bad.yaml"
run alice validate --context lab "$A/bad.yaml"
expect_grep "...and, in a pool that exists, the spec" "$TMP/err" "resource_spec[0].name"
expect_grep "...with the mount path in the same run" "$TMP/err" "mount[0].mount_path"
run alice submit -f "$A/bad.yaml"
expect_rc "submit refuses it on the first try" 1
expect_grep "...with the spec" "$TMP/err" "resource_spec[0].name"
expect_grep "...and the mount path at once" "$TMP/err" "mount[0].mount_path"
if [ ! -e "$JOBS/team/bad" ]; then pass "...sending nothing"; else fail "...sending nothing" "$JOBS/team/bad exists"; fi
