# trainjobd over its real Unix socket (and loopback TCP), with real worker
# processes: the ACP routes, scheduling and preemption, fault tolerance,
# bad input, HMAC signatures, and a kill -9 of the engine while workers run.
# The engine is started here with its own config and state dir, and stopped
# by pid.
. "$(dirname "$0")/lib.sh"
cd "$TRAINJOB_TOP" || exit 1
. tests/hmac.sh
. tests/engine.sh

PORT=$(free_port) || { echo "FAIL no free TCP port below the ephemeral range"; exit 1; }
ENGINE_ARGS="--listen 127.0.0.1:$PORT"
# Workers of job_json's jobs: two on gpu-1 each unless the test says otherwise.
JOB_SPEC=gpu-1
JOB_REPLICAS=2

# Two real-looking nodes with 8 simulated GPUs each, a standard and an idle
# pool over both, a workspace where we own and one where we are a member.
engine_config nodes="sim 2 16" pools="std idle:idle" specs="gpu-8:8:2:1024 gpu-1:1:1:512" volume <<EOF2
- name: team
  owners: [somebody-else]
  members: [$ME, mallory]
keys:
- {access_key: AKTEST, secret_key: SKTEST, user: $ME}
- {access_key: AKMAL, secret_key: SKMAL, user: mallory}
EOF2

start_engine
check "engine listens on its socket" test -S "$SOCK"
check "socket is private (0600)" test "$(stat -c %a "$SOCK")" = 600

# --- a 2-replica PyTorch DDP job whose workers check their environment ---
SCRIPT='test -n "$MASTER_ADDR" && test -n "$MASTER_PORT" && test "$WORLD_SIZE" = 2 &&
test "$RANK" = "$NODE_RANK" && test "$ECP_JOB_NAME" = ddp && test "$CUDA_VISIBLE_DEVICES" != "" &&
echo "rank $RANK ok"'
api POST "$ACP/default/trainingJobs?training_job_name=ddp" "$(job_json ddp "$SCRIPT")"
check "create answers 200" test "$code" = 200
check "create returns the job with its uid" test "$(jq -r .uid "$TMP/body")" != null
check "the job runs to SUCCEEDED" wait_for ddp .state SUCCEEDED
api GET "$ACP/default/trainingJobs/ddp/workers"
check "both workers exited 0" test "$(jq '[.workers[] | select(.exit_code == 0)] | length' "$TMP/body")" = 2
check "workers are master-0 and worker-0" test "$(jq -r '[.workers[].name] | join(",")' "$TMP/body")" = "master-0,worker-0"
api GET "/trainjob/v1/workspaces/default/trainingJobs/ddp/workers/worker-0/logs"
check "worker-0's log shows rank 1" grep -q "rank 1 ok" "$TMP/body"

# --- a new workspace: its creator owns it ---
api POST /trainjob/v1/workspaces '{"name": "lab"}'
check "creating a workspace answers 200" test "$code" = 200
api GET /trainjob/v1/catalog
check "...and the creator is its owner (an admin, as the engine's user)" test "$(jq -r '.workspaces[] | select(.name == "lab") | .role' "$TMP/body")" = ADMIN
check "...written to engine.yaml" grep -q 'name: lab' "$CONF"
api POST /trainjob/v1/workspaces '{"name": "lab"}'
check "a taken workspace name is 409" test "$code" = 409

# --- watch stream and log follow ---
curl -sN --unix-socket "$SOCK" "http://x$ACP/default/trainingJobs?watch=true" >"$TMP/watch" 2>/dev/null &
WATCH_PID=$!
sleep 0.3
SCRIPT='for i in 1 2 3; do echo "line $i"; sleep 0.5; done'
api POST "$ACP/default/trainingJobs?training_job_name=follow" "$(job_json follow "$SCRIPT" '.roles[0].total_replicas = 1')"
wait_for follow .state RUNNING
timeout 20 curl -sN --unix-socket "$SOCK" "http://x/trainjob/v1/workspaces/default/trainingJobs/follow/workers/master-0/logs?follow=true" >"$TMP/follow"
check "log follow ends by itself when the job ends" test $? = 0
check "log follow saw every line as it was written" grep -q "line 3" "$TMP/follow"
check "the job ended SUCCEEDED" wait_for follow .state SUCCEEDED
sleep 0.3
kill "$WATCH_PID" 2>/dev/null
check "the watch stream starts with the jobs there are" grep -q '"type":"SYNCED"' "$TMP/watch"
check "the watch stream saw the job run" grep -q '"name":"follow".*"state":"RUNNING"' "$TMP/watch"
check "the watch stream saw it succeed" grep -q '"name":"follow".*"state":"SUCCEEDED"' "$TMP/watch"
check "the watch stream carries events" grep -q '"type":"EVENT".*"job":"follow"' "$TMP/watch"

# --- MPI: a hostfile, and SSH keys read-only at ssh.config_mount_path ---
SCRIPT='d=/sensecore/compute/acp/ssh/ssh_config; test -r $d/id_ed25519 && test -r $d/config &&
grep -q "slots=" "$TRAINJOB_HOSTFILE" && ! touch $d/x 2>/dev/null && echo "ssh ok"'
api POST "$ACP/default/trainingJobs?training_job_name=mpi" "$(job_json mpi "$SCRIPT" '.framework = "MPI"')"
check "the MPI job with SSH keys succeeds" wait_for mpi .state SUCCEEDED

# --- PATCH: display_name and priority, by update_mask ---
api PATCH "$ACP/default/trainingJobs/ddp?update_mask=display_name,scheduling.priority" '{"display_name": "ddp-重命名", "scheduling": {"priority": "HIGH"}}'
check "an owner may PATCH display_name and priority" test "$code" = 200
check "...and both changed" test "$(field ddp '.display_name + " " + .scheduling.priority')" = "ddp-重命名 HIGH"
api PATCH "$ACP/default/trainingJobs/ddp?update_mask=framework" '{"framework": "MPI"}'
check "other fields cannot be updated" test "$code" = 400
api GET "$ACP/default/trainingJobs/ddp/events"
check "the state history shows STARTING" grep -q 'QUEUEING → STARTING' "$TMP/body"

# --- bad input: each a clear 4xx naming the field, nothing stored ---
api POST "$ACP/default/trainingJobs?training_job_name=ddp" "$(job_json ddp 'true')"
check "a second create with the same name is 409" test "$code" = 409
check "...and the first job is untouched" test "$(field ddp .state)" = SUCCEEDED
api POST "$ACP/default/trainingJobs" '{"display_name": "x",'
check "invalid JSON is 400" test "$code" = 400
api POST "$ACP/default/trainingJobs" "$(job_json unk true '.scheduling = {priorty: "HIGH"}')"
check "an unknown field is 400" test "$code" = 400
check "...naming the field" grep -q 'scheduling.priorty' "$TMP/body"
api POST "$ACP/default/trainingJobs?training_job_name=kept" "$(job_json kept true '.scheduling = {scoring_strategy: {type: "MOST_ALLOCATED", future_knob: 3}} | .future_top = {a: 1}')"
check "a field no near miss of a known one (a newer client's) is taken" test "$code" = 200
check "...kept and returned as it came, at any depth" \
    test "$(field kept '[.scheduling.scoring_strategy.future_knob, .future_top.a] | join(",")')" = "3,1"
api POST "$ACP/default/trainingJobs" "$(job_json unkv true '.framework = "JAX_NEXT"')"
check "an enum value the engine does not know is still 400" test "$code" = 400
check "...naming the field" grep -q 'framework' "$TMP/body"
api POST "$ACP/default/trainingJobs" "$(job_json typ true '.roles[0].total_replicas = "two"')"
check "a wrong type is 400 naming the field" grep -q 'roles\[0\].total_replicas' "$TMP/body"
head -c 1100000 /dev/zero | tr '\0' 'a' >"$TMP/big"
code=$(curl -s -o "$TMP/body" -w '%{http_code}' --unix-socket "$SOCK" -X POST --data-binary @"$TMP/big" "http://x$ACP/default/trainingJobs")
check "a body over 1 MiB is 413" test "$code" = 413
api POST "$ACP/nowhere/trainingJobs" "$(job_json x true)"
check "a missing workspace is 404" test "$code" = 404
tcp_api AKMAL SKMAL "$PORT" POST "$ACP/team/trainingJobs?training_job_name=hi" "$(job_json hi true '.scheduling = {priority: "HIGH"}')"
check "a member asking for HIGH is 403" test "$code" = 403
check "...naming scheduling.priority" grep -q 'scheduling.priority' "$TMP/body"
api GET "$ACP/team/trainingJobs/hi"
check "...and nothing was stored" test "$code" = 404
api GET "$ACP/default/trainingJobs?page_size=-1"
check "a negative page_size is 400" test "$code" = 400

# --- RESTART_POD: only the failing worker restarts, and the count shows ---
SCRIPT='if [ "$RANK" = 1 ] && [ ! -e /mnt/afs/pod-once ]; then touch /mnt/afs/pod-once; exit 201; fi; sleep 1'
api POST "$ACP/default/trainingJobs?training_job_name=pod" "$(job_json pod "$SCRIPT" '.mount = [{id: "scratch", mount_path: "/mnt/afs"}] | .fault_tolerance = {backoff_limit: 2, rules: [{exit_codes: "201", action: "RESTART_POD"}]}')"
check "RESTART_POD job accepted" test "$code" = 200
check "RESTART_POD job succeeds after the restart" wait_for pod .state SUCCEEDED 30
api GET "$ACP/default/trainingJobs/pod/workers"
check "only worker-0 restarted" test "$(jq -r '[.workers[].restarts] | join(",")' "$TMP/body")" = "0,1"
check "the job counts one restart" test "$(field pod .restart_count)" = 1
api GET "$ACP/default/trainingJobs/pod/events"
check "the fault event names rule and restarts" grep -q 'rule 1 (201 → RESTART_POD) matched; restarting worker-0 (restarts 1/2)' "$TMP/body"

# --- mark_node_unschedulable moves the restart to the other node ---
SCRIPT='if [ ! -e /mnt/afs/mark-once ]; then touch /mnt/afs/mark-once; exit 254; fi; echo "on $TRAINJOB_NODE"'
api POST "$ACP/default/trainingJobs?training_job_name=mark" "$(job_json mark "$SCRIPT" '.roles[0].total_replicas = 1 | .roles[0].resource_spec[0].name = "gpu-8" | .mount = [{id: "scratch", mount_path: "/mnt/afs"}] | .fault_tolerance = {backoff_limit: 1, rules: [{exit_codes: "254", action: "RESTART_POD", mark_node_unschedulable: true}]}')"
check "mark job succeeds" wait_for mark .state SUCCEEDED 30
api GET "$ACP/default/trainingJobs/mark/events"
first=$(jq -r '[.events[] | select(.kind == "SCHEDULED")][0].message' "$TMP/body" | sed 's/.* on //')
marked=$(jq -r '[.events[] | select(.kind == "NODE_MARKED")][0].node' "$TMP/body")
api GET "$ACP/default/trainingJobs/mark/workers"
now=$(jq -r '.workers[0].node_name' "$TMP/body")
check "the failed node was marked" test -n "$marked" -a "$marked" = "$first"
check "the restart ran on the other node" test -n "$now" -a "$now" != "$first"

# --- preemption: a standard job takes capacity from a preemptible idle job ---
api POST "$ACP/default/trainingJobs?training_job_name=idler" "$(job_json idler 'sleep 60' '.roles[0].resource_spec[0].name = "gpu-8" | .resource_pool = {name: "idle", zone: "local-1z", vpc_id: "vpc-local"} | .scheduling = {quota_type: "SPOT", preemptible: true}')"
check "idle job runs" wait_for idler .state RUNNING
api POST "$ACP/default/trainingJobs?training_job_name=boss" "$(job_json boss 'sleep 60' '.roles[0].total_replicas = 1 | .roles[0].resource_spec[0].name = "gpu-8"')"
check "the standard job runs" wait_for boss .state RUNNING 15
check "the idle job is back in the queue" wait_for idler .state QUEUEING 15
sleep 0.5
check "...with the reason" sh -c "curl -s --unix-socket '$SOCK' 'http://x$ACP/default/trainingJobs/idler' | jq -r .state_message | tee $TMP/reason | grep -q 'preempted by'"

# --- stop and start ---
api POST "$ACP/default/trainingJobs:batchStop" '{"training_job_names": ["boss"]}'
check "batchStop answers 200" test "$code" = 200
check "the stopped job is SUSPENDED" wait_for boss .state SUSPENDED 15
api POST "/trainjob/v1/workspaces/default/trainingJobs/boss:start"
check ":start requeues it" test "$code" = 200
api POST "$ACP/default/trainingJobs:batchDelete" '{"training_job_names": ["boss", "idler"]}'
check "batchDelete answers 200" test "$code" = 200
n=0; while [ $n -lt 100 ]; do api GET "$ACP/default/trainingJobs/boss"; [ "$code" = 404 ] && break; sleep 0.1; n=$((n + 1)); done
check "a deleted job is 404" test "$code" = 404

# --- :markNode: a person keeps one job off a node; live workers stay, the mark outlives a restart ---
V1=/trainjob/v1/workspaces/default/trainingJobs
api POST "$ACP/default/trainingJobs?training_job_name=manual" "$(job_json manual 'sleep 60' '.roles[0].total_replicas = 1 | .roles[0].resource_spec[0].name = "gpu-8"')"
check "the job to mark runs" wait_for manual .state RUNNING 15
api GET "$ACP/default/trainingJobs/manual/workers"
first=$(jq -r '.workers[0].node_name' "$TMP/body")
curl -sN --unix-socket "$SOCK" "http://x$ACP/default/trainingJobs?watch=true" >"$TMP/watch-mark" 2>/dev/null &
WATCH_PID=$!
sleep 0.3
api POST "$V1/manual:markNode" "{\"node\": \"$first\"}"
check ":markNode answers 200" test "$code" = 200
check "...with the job" test "$(jq -r .name "$TMP/body")" = manual
api GET "$ACP/default/trainingJobs/manual/events"
check "...and a NODE_MARKED event saying who" test "$(jq -r '[.events[] | select(.kind == "NODE_MARKED")][0].message' "$TMP/body")" = "node $first marked unschedulable for this job by $ME"
sleep 0.3
kill "$WATCH_PID" 2>/dev/null
check "...sent on the watch stream" grep -q "\"type\":\"EVENT\".*node $first marked unschedulable for this job by $ME" "$TMP/watch-mark"
api GET "$ACP/default/trainingJobs/manual/workers"
check "the running worker was not moved" test "$(jq -r '.workers[0].node_name + " " + .workers[0].phase' "$TMP/body")" = "$first Running"
api POST "$V1/manual:markNode" "{\"node\": \"$first\"}"
check "marking it again is fine" test "$code" = 200
api GET "$ACP/default/trainingJobs/manual/events"
check "...and says it was marked already" grep -q "node $first was already marked unschedulable for this job" "$TMP/body"
api POST "$V1/manual:markNode" '{"node": "nowhere-9"}'
check "an unknown node is 400" test "$code" = 400
check "...naming node" test "$(jq -r '.details[0].field' "$TMP/body")" = node
api POST "$V1/manual:markNode" '{}'
check "a missing node is 400 naming node" test "$code $(jq -r '.details[0].field' "$TMP/body")" = "400 node"
api POST "$V1/nosuchjob:markNode" '{"node": "n1"}'
check "an unknown job is 404" test "$code" = 404
api GET "$V1/manual:markNode"
check ":markNode is POST only" test "$code" = 405
# Both nodes are free now: only the mark, read back from the store, keeps the job off $first.
stop_engine
start_engine
api POST "$ACP/default/trainingJobs:batchStop" '{"training_job_names": ["manual"]}'
check "after a restart of trainjobd, the marked job stops" wait_for manual .state SUSPENDED 15
api POST "$V1/manual:start"
check "...starts again" wait_for manual .state RUNNING 15
api GET "$ACP/default/trainingJobs/manual/workers"
now=$(jq -r '.workers[0].node_name' "$TMP/body")
check "...and is placed off the node marked before the restart" test -n "$first" -a "$now" != null -a "$now" != "$first"
api POST "$ACP/default/trainingJobs:batchDelete" '{"training_job_names": ["manual"]}'
n=0; while [ $n -lt 100 ]; do api GET "$ACP/default/trainingJobs/manual"; [ "$code" = 404 ] && break; sleep 0.1; n=$((n + 1)); done

# --- HMAC on loopback TCP (tests/access.test.sh has the attacks) ---
tcp() { # DATE SECRET
    hmac_headers AKTEST "$2" GET /trainjob/v1/catalog "" "$1" >"$TMP/hdr"
    hmac_send "$TMP/hdr" "$PORT" GET /trainjob/v1/catalog
}
now=$(hmac_now)
stale=$(hmac_now '-20 minutes')
tcp "$now" SKTEST
check "a good signature is accepted" test "$code" = 200
tcp "$now" WRONG
check "a bad signature is refused" test "$code" = 401
tcp "$stale" SKTEST
check "a stale X-Date is refused" test "$code" = 401
code=$(curl -s -o "$TMP/body" -w '%{http_code}' "http://127.0.0.1:$PORT/trainjob/v1/catalog")
check "no signature is refused" test "$code" = 401

# --- kill -9 of the engine while workers run: nothing is lost ---
SCRIPT='sleep 2; if [ "$RANK" = 1 ]; then exit 3; fi'
api POST "$ACP/default/trainingJobs?training_job_name=crash" "$(job_json crash "$SCRIPT" '.fault_tolerance = {backoff_limit: 0}')"
check "crash job runs" wait_for crash .state RUNNING
stop_engine KILL
sleep 3 # the workers end while no engine is running
start_engine
check "after kill -9 and restart the job is known" test "$(field crash .name)" = crash
check "...and ends FAILED from the exit code that arrived meanwhile" wait_for crash .state FAILED 15
api GET "$ACP/default/trainingJobs/crash/workers"
check "...with each worker's exit code" test "$(jq -r '[.workers[].exit_code] | join(",")' "$TMP/body")" = "0,3"
