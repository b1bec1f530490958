# What a worker may use (issue 10, items 18 and 3): workers sharing a
# simulated node each get their own devices; and where the machine lets
# trainjobd use cgroups, a worker's memory, CPU and process count are held to
# its resource spec — a worker that allocates far past its memory is killed
# (137), a fork bomb stops at the process limit — and the catalog says
# whether limits are enforced. The engine runs here with --demo on a temp
# state dir and is stopped by pid; workers are ended by their process groups.
. "$(dirname "$0")/lib.sh"
cd "$TRAINJOB_TOP" || exit 1

export HOME="$TMP/home"
mkdir -p "$HOME" "$TMP/run"
SOCK="$TMP/run/engine.sock"
STATE="$TMP/state"
CONF="$TMP/engine.yaml"
ENGINE_PID=""
BASE=/compute/acp/data/v2/subscriptions/local/resourceGroups/default/zones/local-1z/workspaces/default

cleanup() {
    [ -n "$ENGINE_PID" ] && kill "$ENGINE_PID" 2>/dev/null
    end_workers "$STATE"
    rm -rf "$TMP"
}
trap cleanup EXIT

# api METHOD PATH [BODY] : status in $code, body in $TMP/body
api() {
    if [ -n "${3:-}" ]; then
        code=$(curl -s -o "$TMP/body" -w '%{http_code}' --unix-socket "$SOCK" -X "$1" \
            -H 'Content-Type: application/json' --data-binary "$3" "http://x$2")
    else
        code=$(curl -s -o "$TMP/body" -w '%{http_code}' --unix-socket "$SOCK" -X "$1" "http://x$2")
    fi
}

field() {
    curl -s --unix-socket "$SOCK" "http://x$BASE/trainingJobs/$1" | jq -r "$2"
}

# wait_for NAME JQ WANT [SECONDS] : polls until the job's field equals WANT
wait_for() {
    n=0
    limit=$(( ${4:-20} * 10 ))
    while [ $n -lt $limit ]; do
        [ "$(field "$1" "$2")" = "$3" ] && return 0
        sleep 0.1
        n=$((n + 1))
    done
    return 1
}

check() { # NAME COMMAND...: passes when the command succeeds
    name=$1
    shift
    if "$@"; then pass "$name"; else fail "$name" "$(tail -c 600 "$TMP/body" 2>/dev/null)"; fi
}

"$TRAINJOBD_BIN" --foreground --demo --grace 1 --config "$CONF" --state-dir "$STATE" \
    --socket "$SOCK" >"$TMP/engine.log" 2>&1 &
ENGINE_PID=$!
i=0
while [ $i -lt 100 ] && ! curl -s -o /dev/null --unix-socket "$SOCK" http://x/trainjob/v1/catalog; do
    sleep 0.1
    i=$((i + 1))
done

# --- item 18: 4 replicas of sim-gpu-1 packed on one node ---------------------
JOB=$(jq -n '{
    display_name: "gpus", framework: "PYTORCH_DDP",
    resource_pool: {name: "sim-public", zone: "local-1z", vpc_id: "vpc-local"},
    scheduling: {scoring_strategy: {type: "MOST_ALLOCATED"}},
    roles: [{total_replicas: 4, resource_spec: [{name: "sim-gpu-1"}], image_path: "local/host",
             startup_script: "echo \"devices=$CUDA_VISIBLE_DEVICES\""}]
}')
api POST "$BASE/trainingJobs?training_job_name=gpus" "$JOB"
check "the 4-replica sim-gpu-1 job is created" test "$code" = 200
check "the 4-replica job succeeds" wait_for gpus .state SUCCEEDED
api GET "$BASE/trainingJobs/gpus/workers"
check "all 4 workers were packed on one node" \
    test "$(jq '[.workers[].node] | unique | length' "$TMP/body")" = 1
check "the 4 workers hold 4 distinct devices" \
    test "$(jq '[.workers[].devices] | unique | length' "$TMP/body")" = 4
check "each worker holds exactly one device" \
    test "$(jq '[.workers[].devices | select(test("^[0-7]$"))] | length' "$TMP/body")" = 4
seen=""
for w in master-0 worker-0 worker-1 worker-2; do
    api GET "/trainjob/v1/workspaces/default/trainingJobs/gpus/workers/$w/logs"
    seen="$seen $(sed -n 's/^devices=//p' "$TMP/body")"
done
check "each worker sees its own CUDA_VISIBLE_DEVICES" \
    test "$(echo $seen | tr ' ' '\n' | grep -c .)" = 4 -a \
    "$(echo $seen | tr ' ' '\n' | sort -u | grep -c .)" = 4
